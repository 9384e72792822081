"""tracejit.scipy: jax.scipy's functions on tracers and arrays."""
from . import linalg

__all__ = ["linalg"]
