"""Products (dot, matmul, tensordot ...: one dot_general each, plus transposes and reductions), their keywords
(precision, preferred_element_type) and the diagonal."""
import enum
import functools
import inspect

import numpy as np

from ..core.avals import broadcast_shapes, index_arg, normalize_axis
from ..core.errors import ShapeError
from ..primitives import linalg
from ._base import asarray, astype, aval, broadcast_to_shape, promote, reject_out
from .complex_numbers import conj
from .creation import eye, zeros
from .indexing import getitem, take_clamped
from .reductions import sum
from .shape_ops import concatenate, moveaxis, ravel, reshape, stack, transpose
from .ufuncs import multiply, not_equal, subtract, where_


def _dot_general(a, b, contract, batch=((), ())):
    return linalg.dot_general(a, b, (contract, batch))


class Precision(enum.Enum):
    """jax.lax.Precision, for the precision= keyword of the products. On the CPU tracejit multiplies float32 in
    float32 and float64 in float64 at every precision, so it changes no result; it is checked and accepted so
    that JAX code runs unchanged. JAX's names for the levels ('highest', 'float32' ...) are accepted too."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "fastest": cls.DEFAULT, "bfloat16": cls.DEFAULT, "high": cls.HIGH,
                 "bfloat16_3x": cls.HIGH, "tensorfloat32": cls.HIGH, "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        return names.get(value.lower()) if isinstance(value, str) else None


def check_precision(fn, precision):
    """None, a Precision, its name, or a pair of those (one per operand), as JAX accepts."""
    levels = precision if isinstance(precision, (tuple, list)) and len(precision) == 2 else (precision,)
    for level in levels:
        if level is not None and not isinstance(level, Precision):
            try:
                Precision(level)
            except ValueError:
                raise ValueError(f"{fn}: precision must be None, a tj.lax.Precision, one of its names or a pair of "
                                 f"them, got {precision!r}") from None


def _with_keywords(product):
    """A product of two arrays with JAX's keywords: precision= (checked; it changes nothing on the CPU) and
    preferred_element_type= (the operands are converted to it first, so the products accumulate in it). On
    bool operands, NumPy's result: whether any product is true."""
    @functools.wraps(product)
    def fn(a, b, *args, precision=None, preferred_element_type=None, **kwargs):
        check_precision(product.__name__, precision)
        a, b = promote(a, b)
        if preferred_element_type is not None:
            a, b = astype(a, preferred_element_type), astype(b, preferred_element_type)
        if aval(a).dtype.kind != "b":
            return product(a, b, *args, **kwargs)
        return not_equal(product(astype(a, "int64"), astype(b, "int64"), *args, **kwargs), 0)
    signature = inspect.signature(product)
    fn.__signature__ = signature.replace(parameters=[*signature.parameters.values(), *_KEYWORDS])
    return fn


_KEYWORDS = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None)
             for name in ("precision", "preferred_element_type")]


@_with_keywords
def dot(a, b, out=None):
    reject_out("dot", out)
    sa, sb = aval(a).shape, aval(b).shape
    if not sa or not sb:
        return multiply(a, b)
    b_axis = max(len(sb) - 2, 0)
    if sa[-1] != sb[b_axis]:
        raise ShapeError(f"dot: shapes {sa} and {sb} are not aligned: {sa[-1]} (last axis of the first) "
                         f"!= {sb[b_axis]} (axis {b_axis} of the second)")
    return _dot_general(a, b, ((len(sa) - 1,), (b_axis,)))


@_with_keywords
def matmul(a, b):
    sa, sb = aval(a).shape, aval(b).shape
    if not sa or not sb:
        raise ShapeError(f"matmul: operands must not be scalars, got shapes {sa} and {sb}")
    if sa[-1] != sb[-2 if len(sb) > 1 else 0]:
        raise ShapeError(f"matmul: shapes {sa} and {sb} do not match: {sa[-1]} (last axis of the first) != "
                         f"{sb[-2 if len(sb) > 1 else 0]} (the contracted axis of the second)")
    if len(sb) == 1:  # (..., n, k) @ (k,): contract directly, no unit axes
        return _dot_general(a, b, ((len(sa) - 1,), (0,)))
    if len(sa) == 1:  # (k,) @ (..., k, m)
        return _dot_general(a, b, ((0,), (len(sb) - 2,)))
    return _batched_matmul(a, b)


def _batched_matmul(a, b):
    sa, sb = aval(a).shape, aval(b).shape
    if len(sb) == 2:  # (..., n, k) @ (k, m): no batch dims needed
        return _dot_general(a, b, ((len(sa) - 1,), (0,)))
    if len(sa) == 2:  # (n, k) @ (..., k, m): contract, then move n next to m
        out = _dot_general(a, b, ((1,), (len(sb) - 2,)))  # (n, ..., m)
        nb = len(sb) - 2
        return transpose(out, list(range(1, nb + 1)) + [0, nb + 1])
    batch = broadcast_shapes(sa[:-2], sb[:-2], op="matmul")
    a = broadcast_to_shape(a, batch + sa[-2:])
    b = broadcast_to_shape(b, batch + sb[-2:])
    nb = len(batch)
    return _dot_general(a, b, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))


def outer(a, b, out=None):
    reject_out("outer", out)
    a, b = ravel(a), ravel(b)
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


@_with_keywords
def tensordot(a, b, axes=2):
    """Contract the last `axes` axes of a with the first of b, or the listed axes: one dot_general."""
    sa, sb = aval(a).shape, aval(b).shape
    if np.ndim(axes) == 0:
        n = index_arg(axes, "tensordot: axes")
        axes_a, axes_b = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        axes_a, axes_b = ([x] if np.ndim(x) == 0 else list(x) for x in axes)
    axes_a = [normalize_axis(x, len(sa), "tensordot") for x in axes_a]
    axes_b = [normalize_axis(x, len(sb), "tensordot") for x in axes_b]
    if len(axes_a) != len(axes_b) or any(sa[i] != sb[j] for i, j in zip(axes_a, axes_b)):
        raise ShapeError(f"tensordot: axes {axes_a} of shape {sa} do not match axes {axes_b} of shape {sb}")
    return _dot_general(a, b, (tuple(axes_a), tuple(axes_b)))


@_with_keywords
def inner(a, b):
    if not aval(a).ndim or not aval(b).ndim:
        return multiply(a, b)
    return tensordot(a, b, ((-1,), (-1,)))


@_with_keywords
def vdot(a, b):
    """The dot product of the flattened arrays, the first conjugated (NumPy's vdot)."""
    return dot(ravel(conj(a)), ravel(b))


def kron(a, b):
    """Each element of a times the whole of b: a broadcast product of interleaved axes, then merged."""
    a, b = promote(a, b)
    ndim = max(aval(a).ndim, aval(b).ndim)
    sa, sb = ((1,) * (ndim - aval(x).ndim) + aval(x).shape for x in (a, b))
    product = multiply(reshape(a, tuple(d for n in sa for d in (n, 1))), reshape(b, tuple(d for n in sb for d in (1, n))))
    return reshape(product, tuple(m * n for m, n in zip(sa, sb)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors along axisa of a and axisb of b, placed along axisc of the result
    (`axis`, if given, is all three), NumPy's formula for each component."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote(a, b)
    axisa, axisb = normalize_axis(axisa, aval(a).ndim, "cross"), normalize_axis(axisb, aval(b).ndim, "cross")
    if aval(a).shape[axisa] != 3 or aval(b).shape[axisb] != 3:
        raise ShapeError(f"cross: needs vectors of 3 components (along axes {axisa} and {axisb}), got shapes "
                         f"{aval(a).shape} and {aval(b).shape}")
    a0, a1, a2 = (take_clamped(a, k, axisa) for k in range(3))
    b0, b1, b2 = (take_clamped(b, k, axisb) for k in range(3))
    parts = [subtract(multiply(a1, b2), multiply(a2, b1)), subtract(multiply(a2, b0), multiply(a0, b2)),
             subtract(multiply(a0, b1), multiply(a1, b0))]
    return stack(parts, axis=normalize_axis(axisc, aval(parts[0]).ndim + 1, "cross"))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal as the last axis (NumPy's layout): one gather."""
    a = asarray(a)
    ndim = aval(a).ndim
    axis1, axis2 = index_arg(axis1, "diagonal: axis1"), index_arg(axis2, "diagonal: axis2")   # types first, as NumPy
    if ndim < 2:
        raise ShapeError(f"diagonal: needs an array of rank 2 or more, got shape {aval(a).shape}")
    axis1, axis2 = normalize_axis(axis1, ndim, "diagonal"), normalize_axis(axis2, ndim, "diagonal")
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = aval(a).shape[-2:]
    rows = np.arange(max(0, min(n + min(offset, 0), m - max(offset, 0)))) - min(offset, 0)
    return getitem(a, (Ellipsis, rows, rows + offset))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    reject_out("trace", out)
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def diag(v, k=0):
    """A 1-D v on the k-th diagonal of a square matrix (zeros elsewhere), or the k-th diagonal of a 2-D v."""
    v = asarray(v)
    if aval(v).ndim == 2:
        return diagonal(v, k)
    if aval(v).ndim != 1:
        raise ShapeError(f"diag: needs a 1-D or 2-D array, got shape {aval(v).shape}")
    n = aval(v).shape[0] + abs(k)
    padded = concatenate([v, zeros((abs(k),), aval(v).dtype)]) if k else v
    spread = reshape(padded, (n, 1) if k >= 0 else (1, n))
    return where_(eye(n, k=k, dtype=bool), broadcast_to_shape(spread, (n, n)), zeros((n, n), aval(v).dtype))
