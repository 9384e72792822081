"""jax.experimental's parts that JAX programs use: ode.odeint, io_callback, shard_map.shard_map, and the x64
context managers of older JAX (enable_x64, disable_x64)."""
from . import ode, shard_map
from .io_callback import io_callback

__all__ = ["disable_x64", "enable_x64", "io_callback", "ode", "shard_map"]


def enable_x64(new_val=True):
    """The x64 context manager of older JAX (jax.experimental.enable_x64; now jax.enable_x64): tracejit always
    computes with the 64-bit types it is given, so True changes nothing and False warns that it cannot apply."""
    from ..compat import enable_x64 as _enable_x64
    return _enable_x64(new_val)


def disable_x64():
    """jax.experimental.disable_x64 of older JAX: tracejit cannot turn 64-bit types off, so it warns (as
    tracejit.config.update("jax_enable_x64", False) does) and changes nothing."""
    return enable_x64(False)
