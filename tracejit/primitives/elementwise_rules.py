"""What every elementwise primitive shares: the shape rule, the batching rule, and `elementwise`, which makes a
primitive from one table row (tracejit.primitives.elementwise holds the tables).

Operands share one dtype; their shapes are equal or rank 0 (a scalar literal broadcasts implicitly, every other
broadcast is an explicit broadcast_in_dim).
"""
import inspect

import numpy as np

from ..core.ad_util import aval
from ..core.avals import ShapedArray, dtype_kind
from ..core.batching import move_batch_axis
from ..core.errors import ShapeError
from ..core.ops import ops
from ..core.trace import Primitive, bind
from .base import jvp_rule

FLOAT, INT, BOOL, COMPLEX = "f", "iu", "b", "c"
NUMERIC = FLOAT + INT
INEXACT = FLOAT + COMPLEX


def elementwise(name, impl, kinds, derivative, lower, out_dtype=None, **rules_and_flags):
    """One table row: the primitive `name` computed by the NumPy `impl` on operands of the dtype kinds
    `kinds` (out_dtype: its result dtype when not the operands', or a function of the operands' dtype),
    lowered by `lower`, differentiated as `derivative` says (base.jvp_rule)."""
    prim = Primitive(name, elementwise_shape(name, kinds, out_dtype, _operands(impl)), impl, elementwise=True,
                     lower=lower, **rules_and_flags)
    return prim.set(jvp=jvp_rule(prim, derivative), batch=elementwise_batch(prim))


def _operands(impl):
    """(the impl's positional parameters, how many of them have defaults), or None where it takes *args: a
    ufunc's `nin` operands, a kernel's (specmath's arity, its `nin`), those of the function it wraps (`silent`)."""
    impl = inspect.unwrap(impl)
    nin = getattr(impl, "nin", None)
    if nin is not None:
        return [f"x{k}" for k in range(nin)], 0
    try:
        parameters = inspect.signature(impl).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind == p.VAR_POSITIONAL for p in parameters):
        return None
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [p.name for p in positional], sum(p.default is not p.empty for p in positional)


def elementwise_shape(name, kinds, out_dtype=None, operands=None):
    """The shape rule; operands (`_operands`): check the number of operands, so that a wrong count is an error
    here rather than a lowering that reads a missing operand (lax.igamma(x) under jit gave zeros)."""
    def rule(*avals, **params):
        if operands is not None:
            required = [n for n in operands[0] if n not in params]
            if not len(required) - operands[1] <= len(avals) <= len(required):
                count = len(required) if not operands[1] else f"{len(required) - operands[1]} to {len(required)}"
                raise TypeError(f"{name} takes {count} operand{'s' if count != 1 else ''}, got {len(avals)}")
        dtype = avals[0].dtype
        if any(a.dtype != dtype for a in avals):
            raise TypeError(f"{name}: operands must share one dtype, got "
                            f"{', '.join(a.str_short() for a in avals)}")
        if dtype_kind(dtype) not in kinds:
            raise TypeError(f"{name}: does not accept {dtype} operands")
        shape = ()
        for a in avals:
            if a.shape and a.shape != shape:
                if shape:
                    shapes = {a.shape for a in avals if a.ndim}
                    raise ShapeError(f"{name}: operand shapes {' and '.join(str(s) for s in shapes)} differ "
                                     "(broadcast them explicitly)")
                shape = a.shape
        out = (out_dtype(dtype) if callable(out_dtype) else out_dtype) or dtype
        weak_type = all(a.weak_type for a in avals)
        for a in avals:      # an operand's aval when it is the result's (avals are immutable): the common case
            if a.shape == shape and a.dtype == out and a.weak_type == weak_type:
                return a
        return ShapedArray(shape, out, weak_type=weak_type)
    return rule


def elementwise_batch(prim, shaped_by=None):
    """Batching rule of an elementwise op. Batched operands meet at the batch axis of the first full-rank one
    (a lone batched operand is not moved); unbatched rank-0 operands stay as they are (they broadcast
    implicitly); other operands are broadcast to the batched shape. `shaped_by` (a slice) names the operands
    that give the output its shape when others may not (select_n's cases, clamp's operand): if all of them
    are scalars, the first is broadcast, so a batched predicate or bound meets an operand of its shape."""
    def batch(args, dims, **params):
        avals = [aval(x) for x in args]
        size = next(a.shape[d] for a, d in zip(avals, dims) if d is not None)
        rank = max(a.ndim - (d is not None) for a, d in zip(avals, dims))
        out_dim = next((d for a, d in zip(avals, dims) if d is not None and a.ndim == rank + 1), 0)
        example = next(a.shape[:d] + a.shape[d + 1:] if d is not None else a.shape
                       for a, d in zip(avals, dims) if a.ndim - (d is not None) == rank)
        out_shape = example[:out_dim] + (size,) + example[out_dim:]

        def fit(x, a, d):
            if d is None and a.ndim == 0:
                return x
            if d is not None and a.ndim == 1 and rank:
                return ops.broadcast_in_dim(x, shape=out_shape, broadcast_dimensions=(out_dim,))
            return move_batch_axis(x, d, out_dim, size)

        fitted = [fit(x, a, d) for x, a, d in zip(args, avals, dims)]
        positions = range(len(args))[shaped_by] if shaped_by else ()
        if positions and all(aval(fitted[i]).ndim == 0 for i in positions):
            fitted[positions[0]] = ops.broadcast_in_dim(fitted[positions[0]], shape=out_shape,
                                                        broadcast_dimensions=())
        return bind(prim, *fitted, **params), out_dim
    return batch


def silent(f):
    """NumPy impl with the IEEE results (inf, nan) and no warnings."""
    def impl(*args, **params):
        with np.errstate(all="ignore"):
            return f(*args, **params)
    impl.__name__, impl.__wrapped__ = getattr(f, "__name__", "impl"), f     # (its operands are f's: `_operands`)
    return impl
