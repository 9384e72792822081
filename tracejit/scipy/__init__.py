"""tracejit.scipy: jax.scipy's functions on tracers and arrays."""
from . import fft, integrate, linalg, ndimage, optimize, signal, sparse, special, stats

__all__ = ["fft", "integrate", "linalg", "ndimage", "optimize", "signal", "sparse", "special", "stats"]
