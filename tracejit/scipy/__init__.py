"""tracejit.scipy: jax.scipy's functions on tracers and arrays."""
from . import (
    cluster,
    fft,
    integrate,
    interpolate,
    linalg,
    ndimage,
    optimize,
    signal,
    sparse,
    spatial,
    special,
    stats,
)

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal", "sparse",
           "spatial", "special", "stats"]
