"""Products (dot, matmul, einsum, tensordot ...: one dot_general each, plus transposes and reductions) and
the diagonal."""
import functools

import numpy as np

from ..core.avals import broadcast_shapes, index_arg, normalize_axis
from ..core.errors import ShapeError
from ..primitives import linalg
from ._base import asarray, astype, aval, broadcast_to_shape, promote, stack
from .complex_numbers import conj
from .indexing import getitem, take
from .shape_ops import concatenate, eye, moveaxis, ravel, reshape, sum, transpose, zeros
from .ufuncs import multiply, not_equal, subtract, where_


def _dot_general(a, b, contract, batch=((), ())):
    return linalg.dot_general(a, b, (contract, batch))


def _bool_as_any(product):
    """product(a, b) on promoted operands; on bool ones NumPy's result: whether any product is true."""
    @functools.wraps(product)
    def fn(a, b, *options):
        a, b = promote(a, b)
        if aval(a).dtype.kind != "b":
            return product(a, b, *options)
        return not_equal(product(astype(a, "int64"), astype(b, "int64"), *options), 0)
    return fn


@_bool_as_any
def dot(a, b):
    sa, sb = aval(a).shape, aval(b).shape
    if not sa or not sb:
        return multiply(a, b)
    b_axis = max(len(sb) - 2, 0)
    if sa[-1] != sb[b_axis]:
        raise ShapeError(f"dot: shapes {sa} and {sb} are not aligned: {sa[-1]} (last axis of the first) "
                         f"!= {sb[b_axis]} (axis {b_axis} of the second)")
    return _dot_general(a, b, ((len(sa) - 1,), (b_axis,)))


@_bool_as_any
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


def outer(a, b):
    a, b = ravel(a), ravel(b)
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def einsum(subscripts, *operands):
    """Explicit-output einsum of one or two operands, as one dot_general."""
    if "->" not in subscripts:
        raise ValueError(f"einsum: only explicit subscripts ('ij,jk->ik') are supported, got {subscripts!r}")
    inputs, output = subscripts.replace(" ", "").split("->")
    specs = inputs.split(",")
    if len(specs) != len(operands) or len(specs) not in (1, 2):
        raise ValueError(f"einsum: {subscripts!r} names {len(specs)} operands, got {len(operands)} "
                         "(one or two are supported)")
    operands = promote(*operands)
    for spec, x in zip(specs, operands):
        if len(spec) != aval(x).ndim or len(set(spec)) != len(spec):
            raise ShapeError(f"einsum: subscripts {spec!r} do not fit an operand of shape {aval(x).shape} "
                             "(repeated indices are not supported)")
    # sum out indices that appear in one operand only and not in the output
    reduced = []
    for k, (spec, x) in enumerate(zip(specs, operands)):
        others = "".join(s for j, s in enumerate(specs) if j != k) + output
        drop = [i for i, c in enumerate(spec) if c not in others]
        reduced.append((("".join(c for c in spec if c in others)),
                        sum(x, tuple(drop), dtype=aval(x).dtype) if drop else x))
    if len(reduced) == 1:
        spec, x = reduced[0]
        return transpose(x, [spec.index(c) for c in output])
    (sa, a), (sb, b) = reduced
    sizes = {c: d for s, x in reduced for c, d in zip(s, aval(x).shape)}
    for c in set(sa) & set(sb):
        if aval(a).shape[sa.index(c)] != aval(b).shape[sb.index(c)]:
            raise ShapeError(f"einsum: index {c!r} has size {aval(a).shape[sa.index(c)]} in the first operand "
                             f"and {aval(b).shape[sb.index(c)]} in the second")
    batch = [c for c in sa if c in sb and c in output]
    contract = [c for c in sa if c in sb and c not in output]
    out = _dot_general(a, b, (tuple(sa.index(c) for c in contract), tuple(sb.index(c) for c in contract)),
                       (tuple(sa.index(c) for c in batch), tuple(sb.index(c) for c in batch)))
    produced = batch + [c for c in sa if c not in sb] + [c for c in sb if c not in sa]
    if set(produced) != set(output):
        raise ShapeError(f"einsum: output {output!r} does not match the indices {''.join(produced)!r} "
                         f"(sizes {sizes})")
    out = transpose(out, [produced.index(c) for c in output])
    summed_out = [d for spec, x in zip(specs, operands) for c, d in zip(spec, aval(x).shape) if c not in sa + sb]
    if 0 in summed_out:   # an empty sum: zeros, not 0 * (the other operand), which is NaN at inf
        return zeros(aval(out).shape, aval(out).dtype)
    return out


@_bool_as_any
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


def inner(a, b):
    a, b = promote(a, b)
    if not aval(a).ndim or not aval(b).ndim:
        return multiply(a, b)
    return tensordot(a, b, ((-1,), (-1,)))


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


def cross(a, b, axis=-1):
    """The cross product of 3-vectors along axis (NumPy's formula for each component)."""
    a, b = promote(a, b)
    axis_a, axis_b = (normalize_axis(axis, aval(x).ndim, "cross") for x in (a, b))
    if aval(a).shape[axis_a] != 3 or aval(b).shape[axis_b] != 3:
        raise ShapeError(f"cross: needs vectors of 3 components along axis {axis}, got shapes {aval(a).shape} "
                         f"and {aval(b).shape}")
    a0, a1, a2 = (take(a, k, axis_a) for k in range(3))
    b0, b1, b2 = (take(b, k, axis_b) for k in range(3))
    parts = [subtract(multiply(a1, b2), multiply(a2, b1)), subtract(multiply(a2, b0), multiply(a0, b2)),
             subtract(multiply(a0, b1), multiply(a1, b0))]
    return stack(parts, axis=-1 if axis == -1 else normalize_axis(axis, aval(parts[0]).ndim + 1, "cross"))


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


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
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
