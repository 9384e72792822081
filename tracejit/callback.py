"""tj.pure_callback, as jax.pure_callback: call a Python (NumPy, SciPy ...) function from traced code, with the
types of its results declared, so that jit, vmap and the rest can stage it (tracejit.primitives.pure_callback)."""
from .core.api_util import canonicalize_input, name_of
from .core.avals import ShapedArray
from .core.pytree import tree_flatten, tree_unflatten
from .core.trace import bind
from .primitives.pure_callback import VMAP_METHODS, pure_callback_p


class _FlatCallback:
    """pure_callback's param: calls `fn` with the operands as the pytree (args, kwargs) they came in, and returns
    its results' leaves; named in the IR text."""

    def __init__(self, fn, tree):
        self.fn, self.tree, self.__name__ = fn, tree, name_of(fn)

    def __call__(self, *values):
        args, kwargs = tree_unflatten(self.tree, values)
        return tree_flatten(self.fn(*args, **kwargs))[0]


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs):
    """callback(*args, **kwargs) on the values of args and kwargs (pytrees, as NumPy arrays), returning arrays of
    the shapes and dtypes in result_shape_dtypes (a pytree of ShapeDtypeStructs, or anything with .shape and
    .dtype); the result is that pytree of arrays. Works eagerly, under jit (compiled code calls back into Python)
    and under vmap, where `vmap_method` says how the callback sees a batch: "sequential" (once per example),
    "expand_dims" or "broadcast_all" (once, on the batch; see tracejit.primitives.pure_callback); without one,
    vmap raises, as JAX does. The callback is taken to be pure: it may be called fewer times than written (its
    result unused) or once at compile time (constant arguments). It has no derivative: use tj.custom_jvp or
    tj.custom_vjp around it. `sharding` is accepted for JAX's signature (one device). A result of another shape
    or dtype than declared raises RuntimeError, as JAX's runtime does."""
    if vmap_method not in (*VMAP_METHODS, None):
        raise ValueError(f"vmap_method must be one of {[*VMAP_METHODS, None]}, but got: {vmap_method!r}")
    return staged_call(pure_callback_p, "pure_callback", callback, result_shape_dtypes, args, kwargs,
                       vmap_method=vmap_method)


def staged_call(prim, what, callback, result_shape_dtypes, args, kwargs, **params):
    """bind(prim) of a callback primitive (pure_callback, io_callback): the arguments' leaves checked, the
    callback wrapped to take them, the declared results' avals; the results as their pytree."""
    if not callable(callback):
        raise TypeError(f"{what}: the first argument must be a function, got {callback!r}")
    leaves, in_tree = tree_flatten((tuple(args), dict(kwargs)))
    name = name_of(callback)
    leaves = [canonicalize_input(x, f"{what} {name} argument leaf {i}") for i, x in enumerate(leaves)]
    specs, out_tree = tree_flatten(result_shape_dtypes)
    try:
        result_avals = tuple(ShapedArray(s.shape, s.dtype) for s in specs)
    except AttributeError:
        raise TypeError(f"{what} {name}: result_shape_dtypes must be a pytree of values with .shape and "
                        f".dtype (ShapeDtypeStructs), got {result_shape_dtypes!r}") from None
    outs = bind(prim, *leaves, callback=_FlatCallback(callback, in_tree), result_avals=result_avals, **params)
    return tree_unflatten(out_tree, outs)


__all__ = ["pure_callback"]
