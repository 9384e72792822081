"""Choosing elements: select (the first true condition's choice) and partition/argpartition, in JAX's layout:
the kth+1 smallest ascending, then the rest (partition: descending; argpartition: in order of position)."""
import numpy as np

from ..core.avals import index_arg, normalize_axis
from ._base import asarray, aval, promote
from .indexing import argsort, sort
from .shape_ops import concatenate, flip, moveaxis
from .ufuncs import where_


def select(condlist, choicelist, default=0):
    """np.select: where no condition holds, default; else the choice of the first condition that holds (nested
    wheres, so derivatives flow to the chosen values)."""
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: {len(condlist)} conditions but {len(choicelist)} choices; they must pair up")
    if not condlist:
        raise ValueError("select: needs at least one condition")
    conds = [asarray(c) for c in condlist]
    for i, c in enumerate(conds):
        if aval(c).dtype != np.bool_:
            raise TypeError(f"select: condition {i} must be a boolean array, got {aval(c).str_short()}")
    *choices, out = promote(*choicelist, default)
    for cond, choice in zip(reversed(conds), reversed(choices)):
        out = where_(cond, choice, out)
    return out


def _kth(a, kth, axis, name):
    a = asarray(a)
    axis = normalize_axis(axis, aval(a).ndim, name)
    n = aval(a).shape[axis]
    k = index_arg(kth, f"{name}: kth")
    if not -n <= k < n:
        raise ValueError(f"{name}: kth={k} is out of bounds for an axis of size {n}")
    return moveaxis(a, axis, -1), k % n, axis


def _no_order(fn, order):
    if order is not None:
        raise NotImplementedError(f"{fn}: `order` applies to structured arrays, which tracejit does not have")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """a with its kth element (along axis) where sorting would put it, smaller ones before, larger after
    (`kind` does not change the result; `order` is for structured arrays, which tracejit does not have)."""
    _no_order("partition", order)
    a, k, axis = _kth(a, kth, axis, "partition")
    ordered = sort(a, axis=-1)
    return moveaxis(concatenate([ordered[..., :k + 1], flip(ordered[..., k + 1:], -1)], -1), -1, axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """The indices that partition a (as partition), with the larger elements' indices in increasing order."""
    _no_order("argpartition", order)
    a, k, axis = _kth(a, kth, axis, "argpartition")
    order = argsort(a, axis=-1, stable=True)
    return moveaxis(concatenate([order[..., :k + 1], sort(order[..., k + 1:], axis=-1)], -1), -1, axis)
