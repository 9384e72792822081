"""io_callback, as jax.experimental.io_callback: call an impure Python function (one that writes a file, reads a
sensor, advances a host-side counter) from traced code, with the types of its results declared
(tracejit.primitives.io_callback)."""
from ..callback import _FlatCallback
from ..core.api_util import canonicalize_input, name_of
from ..core.avals import ShapedArray
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import bind
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
    if not callable(callback):
        raise TypeError(f"io_callback: the first argument must be a function, got {callback!r}")
    leaves, in_tree = tree_flatten((tuple(args), dict(kwargs)))
    name = name_of(callback)
    leaves = [canonicalize_input(x, f"io_callback {name} argument leaf {i}") for i, x in enumerate(leaves)]
    specs, out_tree = tree_flatten(result_shape_dtypes)
    try:
        result_avals = tuple(ShapedArray(s.shape, s.dtype) for s in specs)
    except AttributeError:
        raise TypeError(f"io_callback {name}: result_shape_dtypes must be a pytree of values with .shape and "
                        f".dtype (ShapeDtypeStructs), got {result_shape_dtypes!r}") from None
    outs = bind(io_callback_p, *leaves, callback=_FlatCallback(callback, in_tree), ordered=bool(ordered),
                result_avals=result_avals)
    return tree_unflatten(out_tree, outs)


__all__ = ["io_callback"]
