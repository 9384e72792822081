"""io_callback, as jax.experimental.io_callback: call an impure Python function (one that writes a file, reads a
sensor, advances a host-side counter) from traced code, with the types of its results declared
(tracejit.primitives.io_callback)."""
from ..callback import staged_call
from ..primitives.io_callback import io_callback_p


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """callback(*args, **kwargs) on the values of args and kwargs (pytrees, as NumPy arrays), returning arrays of
    the shapes and dtypes in result_shape_dtypes (a pytree of ShapeDtypeStructs); the result is that pytree of
    arrays. Unlike pure_callback it is an effect: it runs every time this point of the program runs, in program
    order, even when its results are unused, and is never merged with an equal call or run at compile time.
    Under vmap an unordered callback is called once per example; an ordered one (ordered=True) cannot be
    batched (ValueError), and neither has a derivative (ValueError), as in JAX. tracejit runs every effect in
    program order, so `ordered` changes only what vmap allows; `sharding` is accepted for JAX's signature (one
    device). A result of another shape or dtype than declared raises RuntimeError."""
    return staged_call(io_callback_p, "io_callback", callback, result_shape_dtypes, args, kwargs,
                       ordered=bool(ordered))


__all__ = ["io_callback"]
