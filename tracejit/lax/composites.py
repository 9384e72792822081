"""jax.lax functions that are compositions of the primitives: filled arrays, broadcasts and reshapes by rank,
split, batch_matmul, square and reciprocal, and the general reduce (a known monoid becomes its reduction
primitive; any other associative computation is applied pairwise, log2(n) vectorized steps)."""
import itertools

import numpy as np

from ..core.avals import (
    array_of,
    canonical_dtype,
    check_shape,
    index_arg,
    is_python_scalar,
    normalize_axes,
    normalize_axis,
    shape_arg,
)
from ..core.trace import bind
from ..numpy import float_bits
from ..numpy._base import asarray, aval
from ..numpy.linalg_ops import check_precision
from ..primitives import elementwise as ew
from ..primitives import linalg as dot_prims
from ..primitives import reductions as rd
from ..primitives import shapes as sh
from ..tree_util import tree_flatten, tree_unflatten


def typed(*args):
    """Python scalars become values of the dtype of the first array among args (lax's weak typing)."""
    like = next((aval(a).dtype for a in args if not is_python_scalar(a)), None)
    return [array_of(a, like)[()] if like is not None and is_python_scalar(a) else asarray(a)
            for a in args]


def _broadcast(x, shape, dims):
    return bind(sh.broadcast_in_dim_p, x, shape=tuple(shape), broadcast_dimensions=tuple(dims))


def _reshape(x, shape):
    return bind(sh.reshape_p, x, new_sizes=tuple(shape))


def _along(x, lo, hi, axis):
    """x[lo:hi] along axis."""
    shape = aval(x).shape
    return bind(sh.slice_p, x, start_indices=tuple(lo if d == axis else 0 for d in range(len(shape))),
                limit_indices=tuple(hi if d == axis else n for d, n in enumerate(shape)), strides=None)


def full(shape, fill_value, dtype=None):
    """An array of shape filled with fill_value, of dtype (fill_value's own dtype when None)."""
    shape = check_shape(shape_arg(shape, "full: shape"), what="full: shape")
    fill = asarray(fill_value)
    if aval(fill).ndim:
        raise TypeError(f"full: fill_value must be a scalar, got shape {aval(fill).shape}")
    if dtype is not None and canonical_dtype(dtype) != aval(fill).dtype:
        fill = bind(ew.convert_element_type_p, fill, new_dtype=canonical_dtype(dtype), weak_type=False)
    return _broadcast(fill, shape, ())


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like x (its shape and dtype unless given) filled with fill_value."""
    like = aval(asarray(x))
    return full(like.shape if shape is None else shape, fill_value, like.dtype if dtype is None else dtype)


def broadcast(operand, sizes):
    """operand with new leading axes of sizes."""
    operand = asarray(operand)
    sizes = tuple(index_arg(s, "broadcast: sizes") for s in sizes)
    ndim = aval(operand).ndim
    return _broadcast(operand, sizes + aval(operand).shape, range(len(sizes), len(sizes) + ndim))


def broadcast_to_rank(x, rank):
    """x with leading size-1 axes up to rank axes."""
    x = asarray(x)
    rank = index_arg(rank, "broadcast_to_rank: rank")
    if rank < aval(x).ndim:
        raise ValueError(f"broadcast_to_rank: rank {rank} is below the rank of shape {aval(x).shape}")
    return broadcast(x, (1,) * (rank - aval(x).ndim))


def collapse(operand, start_dimension, stop_dimension=None):
    """operand with axes start_dimension up to stop_dimension (the end when None) merged into one."""
    operand = asarray(operand)
    shape = aval(operand).shape
    stop = len(shape) if stop_dimension is None else stop_dimension
    start, stop = (index_arg(d, "collapse: dimensions") for d in (start_dimension, stop))
    start, stop = (d + len(shape) if d < 0 else d for d in (start, stop))    # as JAX: -1 is the last axis
    if not 0 <= start <= stop <= len(shape):
        raise ValueError(f"collapse: dimensions {start_dimension} to {stop_dimension} do not fit shape {shape}")
    return _reshape(operand, shape[:start] + (int(np.prod(shape[start:stop])),) + shape[stop:])


def split(operand, sizes, axis=0):
    """operand cut along axis into consecutive pieces of sizes (which add up to the axis' length)."""
    operand = asarray(operand)
    shape = aval(operand).shape
    axis = normalize_axis(axis, len(shape), "split")
    sizes = tuple(index_arg(s, "split: sizes") for s in sizes)
    if any(s < 0 for s in sizes) or sum(sizes) != shape[axis]:
        raise ValueError(f"split: sizes {sizes} must be non-negative and add up to {shape[axis]}, the length of "
                         f"axis {axis} of shape {shape}")
    starts = np.cumsum((0,) + sizes)
    return [_along(operand, int(lo), int(hi), axis) for lo, hi in itertools.pairwise(starts)]


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over the leading (batch) axes: lhs [..., m, k] @ rhs [..., k, n], as jax.lax.batch_matmul."""
    lhs, rhs = asarray(lhs), asarray(rhs)
    nd = aval(lhs).ndim
    if nd < 2 or nd != aval(rhs).ndim or aval(lhs).shape[:-2] != aval(rhs).shape[:-2]:
        raise ValueError(f"batch_matmul: operands need the same rank (at least 2) and batch axes, got shapes "
                         f"{aval(lhs).shape} and {aval(rhs).shape}")
    batch = tuple(range(nd - 2))
    check_precision("batch_matmul", precision)
    return dot_prims.dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (batch, batch)))


def square(x):
    """x * x."""
    return bind(ew.integer_pow_p, asarray(x), y=2)


def reciprocal(x):
    """1 / x (floating and complex x, as jax.lax.reciprocal)."""
    x = asarray(x)
    if aval(x).dtype.kind not in "fc" and aval(x).dtype.name != "bfloat16":
        raise TypeError(f"reciprocal: takes floating or complex operands, got {aval(x).dtype}")
    return bind(ew.integer_pow_p, x, y=-1)


def nextafter(x1, x2):
    """The next float after x1 toward x2 (NumPy's nextafter, subnormals included), as jax.lax.nextafter: operands
    of one float dtype (a Python scalar takes the other's)."""
    x1, x2 = typed(x1, x2)
    if aval(x1).dtype != aval(x2).dtype or aval(x1).dtype.kind != "f" and aval(x1).dtype.name != "bfloat16":
        raise TypeError(f"lax.nextafter requires floating arguments of one dtype, got {aval(x1).dtype} and "
                        f"{aval(x2).dtype}")
    if aval(x1).ndim and aval(x2).ndim and aval(x1).shape != aval(x2).shape:
        raise TypeError(f"lax.nextafter requires arguments of one shape (or a scalar), got {aval(x1).shape} and "
                        f"{aval(x2).shape}")
    return float_bits.nextafter(x1, x2)


def _monoid(computation, operands):
    """The reduction primitive that computation (a lax function of one primitive) amounts to, or None."""
    prim = getattr(computation, "primitive", None)
    boolean = len(operands) == 1 and aval(operands[0]).dtype == np.bool_
    known = {ew.add_p: rd.reduce_sum_p, ew.mul_p: rd.reduce_prod_p, ew.max_p: rd.reduce_max_p,
             ew.min_p: rd.reduce_min_p}
    if boolean:
        known.update({ew.or_p: rd.reduce_max_p, ew.and_p: rd.reduce_min_p})
    return known.get(prim) if len(operands) == 1 else None


def reduce(operands, init_values, computation, dimensions):
    """operands (an array or a pytree of them) reduced over dimensions with computation, started from
    init_values, as jax.lax.reduce: computation must be associative and commutative (as XLA requires); it is
    applied pairwise, and once more with the init values (an empty axis gives them)."""
    flat, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise TypeError(f"reduce: operands {tree} and init_values {init_tree} must have the same structure")
    flat = [asarray(x) for x in flat]
    inits = [array_of(i, aval(x).dtype)[()] if is_python_scalar(i) else asarray(i) for i, x in zip(inits, flat)]
    shape = aval(flat[0]).shape
    if any(aval(x).shape != shape for x in flat) or any(aval(i).ndim for i in inits):
        raise TypeError(f"reduce: operands need one shape and scalar init values, got "
                        f"{[aval(x).shape for x in flat]} and {[aval(i).shape for i in inits]}")
    axes = normalize_axes(tuple(index_arg(d, "reduce: dimensions") for d in dimensions), len(shape), "reduce")
    kept = [d for d in range(len(shape)) if d not in axes]
    out_shape = tuple(shape[d] for d in kept)

    def combine(xs, ys):
        out, out_tree = tree_flatten(computation(tree_unflatten(tree, xs), tree_unflatten(tree, ys)))
        if out_tree != tree:
            raise TypeError(f"reduce: computation returned {out_tree}, expected the operands' structure {tree}")
        return [asarray(y) for y in out]

    known = _monoid(computation, flat)
    starts = [_broadcast(i, out_shape, ()) for i in inits]
    if known is not None:
        return tree_unflatten(tree, combine(starts, [bind(known, flat[0], axes=axes)]))
    length, last = int(np.prod([shape[d] for d in axes])), len(out_shape)
    xs = [_reshape(bind(sh.transpose_p, x, permutation=tuple(kept) + axes), out_shape + (length,)) for x in flat]
    while length > 1:
        half = length // 2
        halves = [[_along(x, lo, lo + half, last) for x in xs] for lo in (0, half)]
        xs = [bind(sh.concatenate_p, y, _along(x, 2 * half, length, last), dimension=last) if length % 2 else y
              for x, y in zip(xs, combine(*halves))]
        length = half + length % 2
    if length == 0:
        return tree_unflatten(tree, starts)
    return tree_unflatten(tree, combine(starts, [_reshape(x, out_shape) for x in xs]))


def _bitwise_reduction(name, prim, identity):
    def op(x, y):
        return bind(prim, x, y)
    op.primitive = prim

    def fn(operand, axes):
        operand = asarray(operand)
        dtype = aval(operand).dtype
        if dtype.kind not in "biu":
            raise TypeError(f"{name}: takes boolean or integer operands, got {dtype}")
        return reduce(operand, np.array(identity(dtype), dtype)[()], op, axes)
    fn.__name__ = name
    fn.__doc__ = f"operand reduced over axes with bitwise {name.removeprefix('reduce_')}, as jax.lax.{name}."
    return fn


reduce_and = _bitwise_reduction("reduce_and", ew.and_p, lambda dtype: True if dtype == np.bool_ else -1)
reduce_or = _bitwise_reduction("reduce_or", ew.or_p, lambda dtype: 0)
reduce_xor = _bitwise_reduction("reduce_xor", ew.xor_p, lambda dtype: 0)
