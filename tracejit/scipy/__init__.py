"""tracejit.scipy: jax.scipy's functions on tracers and arrays."""
from . import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
