"""tracejit.image: jax.image's resize and scale_and_translate on tracers and arrays."""
from .scale import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
