"""dot, matmul, einsum and outer, all lowered to one dot_general (plus transposes and reductions)."""
import functools

from ..core.avals import broadcast_shapes
from ..core.errors import ShapeError
from ..core.trace import bind
from ..primitives import linalg
from ._base import astype, aval, broadcast_to_shape, promote
from .shape_ops import ravel, reshape, sum, transpose, zeros
from .ufuncs import multiply, not_equal


def _dot_general(a, b, contract, batch=((), ())):
    return bind(linalg.dot_general_p, a, b, dimension_numbers=(contract, batch))


def _bool_as_any(product):
    """product(a, b) on promoted operands; on bool ones NumPy's result: whether any product is true."""
    @functools.wraps(product)
    def fn(a, b):
        a, b = promote(a, b)
        if aval(a).dtype.kind != "b":
            return product(a, b)
        return not_equal(product(astype(a, "int64"), astype(b, "int64")), 0)
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
