"""Set operations on sorted values: lexsort, unique (size=/fill_value= as JAX's under a trace) and isin."""
import numpy as np

from ..core.avals import DEFAULT_INT, normalize_axis
from ..primitives import indexing as ix
from ._base import asarray, aval, promote
from .creation import arange, ones, zeros
from .indexing import argsort, searchsorted, sort, take
from .nonzero import data_dependent_size, first_positions, scatter_sum
from .reductions import any, cumsum
from .shape_ops import concatenate, moveaxis, ravel, reshape
from .ufuncs import bitwise_and, bitwise_not, clip, equal, isnan, logical_not, not_equal, where_


def lexsort(keys, axis=-1):
    """The stable order sorting by the last key, then the one before ... (np.lexsort): one stable argsort per key."""
    keys = [asarray(k) for k in keys]
    if not keys:
        raise TypeError("lexsort: need at least one key")
    shape = aval(keys[0]).shape
    if not shape:           # scalar keys: the order of one element
        return np.zeros((), DEFAULT_INT)
    axis = normalize_axis(axis, len(shape), "lexsort")
    order = None
    for key in keys:
        if aval(key).shape != shape:
            raise ValueError(f"lexsort: all keys need the same shape, got {[aval(k).shape for k in keys]}")
        step = argsort(key if order is None else _along(key, order, axis), axis=axis, stable=True)
        order = step if order is None else _along(order, step, axis)
    return order


def _along(x, order, axis):
    return ix.take_along_axis(x, order, axis)


def _differs(a, b, equal_nan):
    """Whether rows of a and b differ (NaNs equal to each other with equal_nan, as np.unique's default)."""
    neq = not_equal(a, b)
    if equal_nan and aval(a).dtype.kind in "fc":
        neq = bitwise_and(neq, logical_not(bitwise_and(isnan(a), isnan(b))))
    return any(neq, axis=1)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           size=None, fill_value=None, sorted=True):
    """np.unique. With size=, the first `size` unique values (sorted), padded with fill_value (default: the
    smallest value), their first indices and counts padded with perm[0] and 0, as JAX's; size= is needed when
    `ar` is traced."""
    ar = asarray(ar)
    shape = aval(ar).shape
    if axis is None:
        rows = reshape(ar, (int(np.prod(shape)), 1))
    else:
        axis = normalize_axis(axis, len(shape), "unique")
        moved = moveaxis(ar, axis, 0)
        rows = reshape(moved, (shape[axis], int(np.prod(aval(moved).shape[1:]))))
    n, width = aval(rows).shape
    if n and width:
        perm = lexsort([rows[:, j] for j in reversed(range(width))], axis=0)
        ordered = take(rows, perm, axis=0)
        starts = concatenate([ones((1,), np.bool_), _differs(ordered[1:], ordered[:-1], equal_nan)])
    else:        # no rows, or rows without elements: all rows are the same one
        perm, ordered = arange(n, dtype=DEFAULT_INT), rows
        starts = arange(n, dtype=DEFAULT_INT) == 0
    size = data_dependent_size("unique", ar, size, lambda: np.count_nonzero(starts))
    if n == 0 and size and fill_value is None:
        raise ValueError("unique: an empty input padded to size > 0 needs fill_value")
    first, filled = first_positions(starts, size)
    values = take(ordered, first, axis=0) if n else zeros((size, width), aval(ar).dtype)
    if fill_value is not None:
        values = where_(filled[:, None], values, asarray(fill_value, aval(ar).dtype))
    values = ravel(values) if axis is None else moveaxis(reshape(values, (size, *aval(moved).shape[1:])), 0, axis)
    out = [values]
    group = cumsum(starts) - 1
    if return_index:
        out.append(take(perm, first) if n else zeros((size,), DEFAULT_INT))
    if return_inverse:
        inverse = scatter_sum(n, perm, group)
        out.append(reshape(inverse, shape) if axis is None else inverse)
    if return_counts:
        out.append(scatter_sum(size, group, np.ones((), DEFAULT_INT)))
    return out[0] if len(out) == 1 else tuple(out)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None, method="auto"):
    """Whether each element is among test_elements: every pair compared ('compare_all'), or a binary search in
    the sorted test elements ('binary_search', 'sort'; 'auto' picks it for more than 64 of them). NumPy's kind
    (None, 'sort', 'table') chooses an algorithm, not the result: accepted, as JAX does."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"isin: kind must be None, 'sort' or 'table', got {kind!r}")
    element, test = promote(element, test_elements)
    shape, test = aval(element).shape, ravel(test)
    m = aval(test).shape[0]
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"isin: method must be 'auto', 'compare_all', 'binary_search' or 'sort', got {method!r}")
    flat = ravel(element)
    if m == 0:
        found = zeros(aval(flat).shape, np.bool_)
    elif method == "compare_all" or method == "auto" and m <= 64:
        found = any(equal(flat[:, None], test[None, :]), axis=1)
    else:
        ordered = sort(test)
        at = clip(searchsorted(ordered, flat), 0, m - 1)
        found = equal(take(ordered, at), flat)
    found = reshape(found, shape)
    return bitwise_not(found) if invert else found
