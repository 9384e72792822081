"""jax.lax functions written on the primitives and on tracejit.numpy: full, full_like, broadcast, square,
reciprocal, nextafter, map, reduce, split, batch_matmul and optimization_barrier."""
import operator

import numpy as np

from .. import numpy as tnp
from ..batching import vmap
from ..core.avals import normalize_axis
from ..core.pytree import tree_flatten, tree_leaves, tree_map, tree_unflatten
from ..numpy._base import asarray, aval
from ..primitives import elementwise as ew
from ..primitives import reductions as rd
from .control_flow import scan


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of shape filled with fill_value (of dtype, else fill_value's)."""
    return tnp.full(shape, fill_value, dtype)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    return tnp.full_like(x, fill_value, dtype, shape)


def broadcast(operand, sizes, *, out_sharding=None):
    """operand with the leading axes `sizes` added."""
    operand = asarray(operand)
    return tnp.broadcast_to(operand, tuple(operator.index(s) for s in sizes) + aval(operand).shape)


def square(x):
    x = asarray(x)
    return ew.mul_p.bind(x, x)


def reciprocal(x):
    x = asarray(x)
    return ew.div_p.bind(np.asarray(1, aval(x).dtype), x)


def nextafter(x1, x2):
    """The next float after x1 towards x2; the operands share one dtype, as JAX's."""
    x1, x2 = asarray(x1), asarray(x2)
    if aval(x1).dtype != aval(x2).dtype:
        raise TypeError(f"nextafter: operands must share one dtype, got {aval(x1).dtype} and {aval(x2).dtype}")
    return tnp.nextafter(x1, x2)


def map(f, xs, *, batch_size=None):
    """f over the leading axis of xs (a pytree), in a loop: a scan; with batch_size, each pass vmaps f over that
    many elements (and one vmap takes the remainder), as JAX's."""
    if batch_size is None:
        return scan(lambda carry, x: (carry, f(x)), None, xs)[1]
    n = aval(tree_leaves(xs)[0]).shape[0]
    batches, rest = divmod(n, operator.index(batch_size))
    head = tree_map(lambda x: tnp.reshape(x[:batches * batch_size], (batches, batch_size) + aval(x).shape[1:]), xs)
    ys = tree_map(lambda y: tnp.reshape(y, (batches * batch_size,) + aval(y).shape[2:]),
                  scan(lambda carry, x: (carry, vmap(f)(x)), None, head)[1])
    if not rest:
        return ys
    tail = vmap(f)(tree_map(lambda x: x[batches * batch_size:], xs))
    return tree_map(lambda a, b: tnp.concatenate([a, b]), ys, tail)


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """operands reduced over dimensions by computation from init_values: computation lax.add, mul, max or min (or
    the matching operator or tracejit.numpy function), whose reduction primitive runs, init_values combined in
    once; other computations raise NotImplementedError."""
    flat, tree = tree_flatten(operands)
    inits = tree_leaves(init_values)
    prim = _monoid(computation)
    if prim is None:
        raise NotImplementedError(f"lax.reduce with the computation {computation!r}: only add, mul, max and min "
                                  "(lax's, operator's or tracejit.numpy's) are supported")
    combine = {rd.reduce_sum_p: ew.add_p, rd.reduce_prod_p: ew.mul_p, rd.reduce_max_p: ew.max_p,
               rd.reduce_min_p: ew.min_p}[prim]
    outs = []
    for x, init in zip(flat, inits):
        x = asarray(x)
        axes = tuple(sorted(normalize_axis(operator.index(d), aval(x).ndim, "reduce") for d in dimensions))
        reduced = prim.bind(x, axes=axes)
        outs.append(combine.bind(reduced, tnp.broadcast_to(tnp.asarray(init, aval(x).dtype), aval(reduced).shape)))
    return tree_unflatten(tree, outs)


def _monoid(computation):
    """The reduction primitive of computation: lax's add, mul, max or min (whose functions carry their
    primitive), or the matching operator or tracejit.numpy function; else None."""
    named = {operator.add: rd.reduce_sum_p, tnp.add: rd.reduce_sum_p, operator.mul: rd.reduce_prod_p,
             tnp.multiply: rd.reduce_prod_p, tnp.maximum: rd.reduce_max_p, tnp.minimum: rd.reduce_min_p}
    by_primitive = {ew.add_p: rd.reduce_sum_p, ew.mul_p: rd.reduce_prod_p, ew.max_p: rd.reduce_max_p,
                    ew.min_p: rd.reduce_min_p}
    return by_primitive.get(getattr(computation, "primitive", None)) or named.get(computation)


def split(operand, sizes, axis=0):
    """operand cut along axis into pieces of the given sizes (which sum to its length)."""
    operand = asarray(operand)
    axis = normalize_axis(operator.index(axis), aval(operand).ndim, "split")
    sizes = [operator.index(s) for s in sizes]
    if sum(sizes) != aval(operand).shape[axis]:
        raise ValueError(f"split: sizes {sizes} must sum to the length of axis {axis}, {aval(operand).shape[axis]}")
    return tnp.split(operand, np.cumsum(sizes)[:-1].tolist(), axis=axis)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over the leading (batch) axes, which lhs and rhs share (rank 2 or more, equal)."""
    lhs, rhs = asarray(lhs), asarray(rhs)
    if aval(lhs).ndim < 2 or aval(lhs).ndim != aval(rhs).ndim:
        raise ValueError(f"batch_matmul: operands must have one rank of at least 2, got {aval(lhs).shape} and "
                         f"{aval(rhs).shape}")
    return tnp.matmul(lhs, rhs, precision=precision)


def optimization_barrier(operand, /):
    """operand unchanged: JAX's values. (JAX's barrier also keeps XLA from moving computations across it;
    tracejit's passes take no such hint.)"""
    return operand
