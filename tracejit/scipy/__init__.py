"""tracejit.scipy: jax.scipy's functions on tracers and arrays."""
from . import fft, integrate, linalg, ndimage, signal, sparse, special, stats

__all__ = ["fft", "integrate", "linalg", "ndimage", "signal", "sparse", "special", "stats"]
