"""tracejit.scipy.cluster: jax.scipy.cluster's vq module."""
from . import vq

__all__ = ["vq"]
