"""Tracing a Python function on pytrees: flatten the arguments, name them, trace, remember the output tree;
and the two ends every transformation shares: inputs as arrays of their traced dtype, outputs the caller owns."""
import functools
import inspect

import numpy as np

from .avals import PYTHON_SCALARS, SHORT_NAMES, ShapedArray, aval_of, index_arg, is_python_scalar
from .pytree import leaf_names, register_pytree_node, tree_flatten, tree_unflatten
from .trace import Tracer, trace_flat


def name_of(fun):
    """A name for any callable, for messages and IR: functions and builtins have one, a functools.partial
    is named after the function it wraps, another callable object after its class."""
    name = getattr(fun, "__name__", None)
    if isinstance(name, str):
        return name
    if isinstance(fun, functools.partial):
        return name_of(fun.func)
    return type(fun).__name__


def canonicalize_input(x, path):
    """A user argument as an array, or a TypeError naming its pytree path."""
    if isinstance(x, (Tracer, ShapedArray)):
        return x
    if is_python_scalar(x):
        if isinstance(x, int) and not -2**63 <= x < 2**63:
            raise OverflowError(f"argument {path}: Python int {x} does not fit int64, the dtype of a Python int "
                                "argument (pass a NumPy array or scalar of the dtype it should have)")
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype not in SHORT_NAMES:
            raise TypeError(f"argument {path} has dtype {x.dtype}, which tracejit does not support (supported: "
                            f"{', '.join(map(str, SHORT_NAMES))})")
        return x
    raise TypeError(f"argument {path} of type {type(x).__name__} is not an array or a scalar "
                    "(expected a numpy array, a numpy scalar or a Python bool/int/float/complex)")


POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def positional_parameters(fun):
    """(the parameters of fun that take positional arguments, the name of its *args or None); ([], None)
    where Python cannot tell (some builtins)."""
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return [], None
    var = next((p.name for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL), None)
    return [p for p in params if p.kind in POSITIONAL], var


def static_arguments(fun, static_argnums, static_argnames):
    """jit's static_argnums and static_argnames as tuples, checked as JAX checks them: a position that is not an
    integer (or a name that is not a string) is a TypeError; one that fun does not take, where its signature
    says so (no *args, no **kwargs), a ValueError. As in JAX, each also names the parameters the other means:
    a static parameter is static whether it is passed by position or by name."""
    nums = static_argnums if isinstance(static_argnums, (tuple, list)) else () if static_argnums is None else (
        static_argnums,)
    nums = tuple(index_arg(i, f"jit: static_argnums {static_argnums!r}: each") for i in nums)
    names = (static_argnames,) if isinstance(static_argnames, str) else static_argnames or ()
    if not isinstance(names, (tuple, list)) or not all(isinstance(k, str) for k in names):
        raise TypeError(f"jit: static_argnames must be a string or a sequence of strings, got {static_argnames!r}")
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return nums, tuple(names)
    kinds = {p.kind for p in params}
    n = sum(p.kind in POSITIONAL for p in params)
    bad = [i for i in nums if not -n <= i < n]
    if bad and inspect.Parameter.VAR_POSITIONAL not in kinds:
        raise ValueError(f"jit: static_argnums {bad} out of range: {name_of(fun)} takes {n} positional arguments")
    unknown = [k for k in names if k not in {p.name for p in params if p.kind is not inspect.Parameter.POSITIONAL_ONLY}]
    if unknown and inspect.Parameter.VAR_KEYWORD not in kinds:
        raise ValueError(f"jit: static_argnames {unknown} are not parameters of {name_of(fun)}")
    by_position = [p for p in params if p.kind in POSITIONAL]
    nums += tuple(i for i, p in enumerate(by_position) if p.name in names and i not in nums and i - n not in nums)
    names = tuple(names) + tuple(by_position[i].name for i in nums if 0 <= i < n and by_position[i].name not in names
                                 and by_position[i].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return nums, tuple(dict.fromkeys(names))


def argument_names(fun, args, kwargs=None):
    """Pytree paths of the leaves of (args, kwargs), spelled with the function's parameter names (`x`,
    `params['w']`, `rest[0]` for the first argument that *rest takes)."""
    params, var = positional_parameters(fun)
    names = []
    for i, arg in enumerate(args):
        base = (params[i].name if i < len(params) else
                f"{var}[{i - len(params)}]" if var else f"args[{i}]")
        names += leaf_names(arg, base)
    for key, value in sorted((kwargs or {}).items()):
        names += leaf_names(value, key)
    return names


def flatten_args(fun, args, kwargs=None):
    """Leaves (checked and canonicalised), their names, and the tree of (args, kwargs)."""
    leaves, in_tree = tree_flatten((tuple(args), dict(kwargs or {})))
    names = argument_names(fun, args, kwargs)
    return [canonicalize_input(x, n) for x, n in zip(leaves, names)], names, in_tree


def leaf_aval(x):
    return x.aval if isinstance(x, Tracer) else aval_of(x)


def as_arrays(leaves):
    """Concrete leaves as arrays of their traced dtype (Python scalars included); tracers of an enclosing
    trace stay as they are."""
    return [x if isinstance(x, Tracer) else np.asarray(x, dtype=leaf_aval(x).dtype) for x in leaves]


def owned(values):
    """Results handed to the caller: fresh numpy arrays it owns, never an input, a constant or literal of
    the IR, or a residual kept for later (NumPy evaluation may return any of those as they are); tracers
    of an enclosing trace stay tracers."""
    return [x if isinstance(x, Tracer) else np.array(x) for x in values]


def trace_pytree(fun, leaves, names, in_tree, avals=None, fun_name=None, fits=None, known=False):
    """Trace fun(*args, **kwargs) with abstract leaves; returns (ClosedIR, output tree). fits: see trace_flat;
    known: Python control flow may read the leaves' values (grad and jvp outside jit, as in JAX)."""
    out_tree_box = []

    def flat(*tracers):
        args, kwargs = tree_unflatten(in_tree, tracers)
        out_leaves, out_tree = tree_flatten(_float0_as_nodes(fun(*args, **kwargs)))
        out_tree_box.append(out_tree)
        for i, leaf in enumerate(out_leaves):
            if not isinstance(leaf, (Tracer, np.ndarray, np.generic, *PYTHON_SCALARS)):
                raise TypeError(f"{fun_name or name_of(fun)} returned a "
                                f"{type(leaf).__name__} at output leaf {i}; outputs must be arrays or scalars")
        return out_leaves

    avals = avals if avals is not None else [leaf_aval(x) for x in leaves]
    closed = trace_flat(flat, avals, names, fun_name or name_of(fun), fits, leaves if known else None)
    return closed, out_tree_box[0]


FLOAT0 = np.dtype([("float0", np.void, 0)])     # JAX's dtype of integers' tangents: zero-size, structured


class _Float0Zeros:
    """An output of dtype float0 (grad(..., allow_int=True)'s gradient of an integer): it has no data, so it is a
    pytree node without leaves whose unflattening makes the zeros again, outside the trace."""

    def __init__(self, shape):
        self.shape = shape


register_pytree_node(_Float0Zeros, lambda z: ((), z.shape), lambda shape, _: np.zeros(shape, FLOAT0))


def _float0_as_nodes(tree):
    leaves, treedef = tree_flatten(tree)
    if not any(getattr(x, "dtype", None) == FLOAT0 for x in leaves):
        return tree
    return tree_unflatten(treedef, [_Float0Zeros(x.shape) if getattr(x, "dtype", None) == FLOAT0 else x
                                    for x in leaves])


class ShapeDtypeStruct(ShapedArray):
    """A shape and dtype standing for an array, as jax.ShapeDtypeStruct: an argument of make_ir and eval_shape,
    pure_callback's result shapes, eval_shape's results (printed as JAX prints them). sharding is accepted and
    ignored: there is one device."""

    __slots__ = ()

    def __init__(self, shape, dtype, weak_type=False, *, sharding=None):
        super().__init__(shape, dtype, weak_type)

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"
