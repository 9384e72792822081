"""jax.lax's cumulative reductions, associative_scan, sort with several operands, and top_k."""
import numpy as np

from ..core.avals import is_float, normalize_axis
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import bind
from ..numpy._base import asarray, aval
from ..numpy.shape_ops import moveaxis
from ..primitives import cumulative as cu
from ..primitives import elementwise as ew
from ..primitives import indexing as ix
from ..primitives import shapes as sh
from ..primitives import sorting
from ..primitives import top_k as tk


def _cumulative(prim):
    def fn(operand, axis=0, reverse=False):
        operand = asarray(operand)
        return bind(prim, operand, axis=normalize_axis(axis, aval(operand).ndim), reverse=bool(reverse))
    fn.__name__ = prim.name
    fn.__doc__ = (f"The running {prim.name[3:]} along axis (from the end with reverse=True), as jax.lax.{prim.name}; "
                  "its derivative is that of associative_scan, as JAX's.")
    return fn


cumprod, cummax, cummin, cumlogsumexp = map(_cumulative, (cu.cumprod_p, cu.cummax_p, cu.cummin_p, cu.cumlogsumexp_p))


def associative_scan(fn, elems, reverse=False, axis=0):
    """The prefix combinations of elems (a pytree of arrays) along axis by the associative fn, as
    jax.lax.associative_scan: [a, fn(a, b), fn(fn(a, b), c), ...]; with reverse, [..., fn(fn(z, y), x), fn(z, y), z]."""
    if not callable(fn):
        raise TypeError(f"associative_scan: fn must be callable, got {fn!r}")
    leaves, tree = tree_flatten(elems)
    leaves = [asarray(x) for x in leaves]
    if not leaves:
        return elems
    axis = normalize_axis(axis, aval(leaves[0]).ndim)
    if len({aval(x).shape[axis] for x in leaves}) != 1:
        raise ValueError(f"associative_scan: the arrays must agree on axis {axis}, got shapes "
                         f"{[aval(x).shape for x in leaves]}")

    def combine(a, b):
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise ValueError(f"associative_scan: fn must return the structure of elems {tree}, got {out_tree}")
        return out

    return tree_unflatten(tree, cu.associative_scan(combine, leaves, axis, reverse))


def _take_along(x, order, axis):
    return ix.take_along_axis(x, order, axis)


def _lexsort(keys, dimension):
    """The stable permutation sorting the keys lexicographically (first key most significant) along dimension."""
    shape = aval(keys[0]).shape
    order = bind(sh.iota_p, dtype=np.dtype(np.int64), shape=shape, dimension=dimension)
    for key in reversed(keys):
        step = bind(sorting.argsort_p, _take_along(key, order, dimension), axis=dimension, stable=True)
        order = _take_along(order, step, dimension)
    return order


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """operand (an array, or a sequence of arrays of one shape) sorted along dimension, as jax.lax.sort: by the
    first num_keys arrays lexicographically, the others following; NaNs last, -0.0 equal to 0.0. The sort is
    always stable."""
    single = not isinstance(operand, (tuple, list))
    operands = [asarray(operand)] if single else [asarray(x) for x in operand]
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys must be between 1 and the number of operands ({len(operands)}), got "
                         f"{num_keys}")
    if len({aval(x).shape for x in operands}) != 1:
        raise ValueError(f"sort: operands must have one shape, got {[aval(x).shape for x in operands]}")
    dimension = normalize_axis(dimension, aval(operands[0]).ndim)
    if single and not is_float(aval(operands[0]).dtype):     # equal values are indistinguishable
        return bind(sorting.sort_p, operands[0], axis=dimension)
    order = _lexsort(operands[:num_keys], dimension)
    out = tuple(_take_along(x, order, dimension) for x in operands)
    return out[0] if single else out


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """(keys sorted along dimension, values in the same order), as jax.lax.sort_key_val."""
    return sort((keys, values), dimension, is_stable, num_keys=1)


def top_k(operand, k, *, axis=-1):
    """(the k largest entries along axis (the last by default) in descending order, their indices as int32), as
    jax.lax.top_k: floats in the total order of their bits (NaN the largest, -NaN the smallest, -0.0 below 0.0),
    equal values in order of position. Another axis is moved last and back."""
    operand = asarray(operand)
    shape = aval(operand).shape
    axis = normalize_axis(axis, len(shape), "top_k", bools=False) if shape else -1
    if shape and axis != len(shape) - 1:
        values, indices = top_k(moveaxis(operand, axis, -1), k)
        return moveaxis(values, -1, axis), moveaxis(indices, -1, axis)
    k = int(k)
    if not shape or not 0 <= k <= shape[-1]:
        raise ValueError(f"top_k: k must be between 0 and the size of the axis of operand {shape}, got {k}")
    last = len(shape) - 1
    indices = bind(tk.top_k_p, operand, k=k)
    return _take_along(operand, indices, last), bind(ew.convert_element_type_p, indices, new_dtype=np.dtype(np.int32),
                                                     weak_type=False)
