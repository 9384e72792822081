"""tracejit.scipy.spatial: jax.scipy.spatial's transform module (Rotation, Slerp)."""
from . import transform

__all__ = ["transform"]
