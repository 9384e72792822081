"""jax.experimental's parts that JAX programs use: ode.odeint, io_callback, and the x64 context managers of older
JAX (enable_x64, disable_x64)."""
from . import ode
from .io_callback import io_callback

__all__ = ["io_callback", "ode"]
