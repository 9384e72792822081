"""tracejit.scipy.sparse: jax.scipy.sparse's iterative linear solvers (the linalg submodule)."""
from . import linalg

__all__ = ["linalg"]
