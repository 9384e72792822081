"""tracejit.scipy.integrate: jax.scipy.integrate. Its trapezoid is jax.numpy's under SciPy's name, as in JAX, so
the two cannot drift apart."""
from ..numpy.calculus import trapezoid

__all__ = ["trapezoid"]
