"""jax.experimental's parts that JAX programs use: ode.odeint."""
from . import ode

__all__ = ["ode"]
