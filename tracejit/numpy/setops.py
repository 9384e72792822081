"""Set operations on sorted values: lexsort, unique (size=/fill_value= as JAX's under a trace) and isin."""
from typing import NamedTuple

import numpy as np

from ..core.avals import DEFAULT_INT, normalize_axis
from ..core.trace import Tracer
from ..primitives import indexing as ix
from ._base import asarray, aval, promote
from .creation import arange, ones, zeros
from .indexing import argsort, searchsorted, sort, take_clamped
from .nonzero import data_dependent_size, eager_if_concrete, first_positions, scatter_sum
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


@eager_if_concrete
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
    if n and width:    # the values alone need a sort (1e6 int32: 7.4 ms; 32 with an argsort and a gather)
        values_only = width == 1 and not (return_index or return_inverse)
        perm = None if values_only else lexsort([rows[:, j] for j in reversed(range(width))], axis=0)
        ordered = sort(rows, axis=0) if values_only else take_clamped(rows, perm, axis=0)
        starts = concatenate([ones((1,), np.bool_), _differs(ordered[1:], ordered[:-1], equal_nan)])
    else:        # no rows, or rows without elements: all rows are the same one
        perm, ordered = arange(n, dtype=DEFAULT_INT), rows
        starts = arange(n, dtype=DEFAULT_INT) == 0
    size = data_dependent_size("unique", ar, size, lambda: np.count_nonzero(starts))
    if n == 0 and size and fill_value is None:
        raise ValueError("unique: an empty input padded to size > 0 needs fill_value")
    first, filled = first_positions(starts, size)
    values = take_clamped(ordered, first, axis=0) if n else zeros((size, width), aval(ar).dtype)
    if fill_value is not None:
        values = where_(filled[:, None], values, asarray(fill_value, aval(ar).dtype))
    values = ravel(values) if axis is None else moveaxis(reshape(values, (size, *aval(moved).shape[1:])), 0, axis)
    out = [values]
    group = cumsum(starts) - 1
    if return_index:
        out.append(take_clamped(perm, first) if n else zeros((size,), DEFAULT_INT))
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
        found = equal(take_clamped(ordered, at), flat)
    found = reshape(found, shape)
    return bitwise_not(found) if invert else found


# ------------------------------------------------------------------------------ the array API's uniques

class UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def unique_values(x, /, *, size=None, fill_value=None):
    """The sorted distinct values of x (each NaN distinct, as the array API's); size=/fill_value= as unique's."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """(values, counts) of unique_values."""
    return UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    """(values, inverse_indices): values[inverse_indices] is x (inverse_indices has x's shape)."""
    return UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value))


def unique_all(x, /, *, size=None, fill_value=None):
    """(values, indices of their first occurrences, inverse_indices, counts)."""
    return UniqueAllResult(*unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False,
                                   size=size, fill_value=fill_value))


# ------------------------------------------------------------------------------- sets of two arrays

def _sorted_firsts(x, assume_unique):
    """(x sorted (stably), the sorting permutation, where each distinct value first occurs in it)."""
    n = aval(x).shape[0]
    perm = argsort(x, stable=True)
    ordered = take_clamped(x, perm)
    if assume_unique or n < 2:
        return ordered, perm, ones((n,), np.bool_)
    later = _differs(reshape(ordered[1:], (n - 1, 1)), reshape(ordered[:-1], (n - 1, 1)), equal_nan=True)
    return ordered, perm, concatenate([ones((1,), np.bool_), later])


def _picked(name, values, mask, size, fill_value, inputs, smallest):
    """(the values where mask holds, in order; padded to size= with fill_value (default: the first value, the
    smallest, when smallest=True, else 0), their positions in `values`, whether each slot is filled)."""
    traced = next((x for x in inputs if isinstance(x, Tracer)), mask)
    size = data_dependent_size(name, traced, size, lambda: np.count_nonzero(mask))
    found, filled = first_positions(mask, size)
    dtype = aval(values).dtype
    out = take_clamped(values, found) if aval(values).shape[0] else zeros((size,), dtype)
    if fill_value is None:
        fill = where_(filled[0], out[0], zeros((), dtype)) if smallest and size else zeros((), dtype)
    else:
        fill = asarray(fill_value, dtype)
    return where_(filled, out, fill), found, filled


@eager_if_concrete
def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None):
    """The sorted values found in both ar1 and ar2 (flattened); with return_indices also where each first occurs
    in ar1 and in ar2. A traced input needs size= (padded with fill_value, default the smallest value; the
    indices padded with the inputs' sizes), as JAX's."""
    a1, a2 = promote(ravel(asarray(ar1)), ravel(asarray(ar2)))
    ordered, perm, firsts = _sorted_firsts(a1, assume_unique)
    mask = bitwise_and(firsts, isin(ordered, a2, assume_unique))
    values, found, filled = _picked("intersect1d", ordered, mask, size, fill_value, (ar1, ar2), True)
    if not return_indices:
        return values
    n1, n2 = aval(a1).shape[0], aval(a2).shape[0]
    first1 = where_(filled, take_clamped(perm, found), n1) if n1 else zeros(aval(found).shape, DEFAULT_INT)
    if not n2:
        return values, first1, zeros(aval(found).shape, DEFAULT_INT)
    perm2 = argsort(a2, stable=True)
    at = clip(searchsorted(take_clamped(a2, perm2), values), 0, n2 - 1)
    return values, first1, where_(filled, take_clamped(perm2, at), n2)


@eager_if_concrete
def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted distinct values of ar1 that are not in ar2 (with assume_unique, ar1's values in their order);
    in ar1's dtype. A traced input needs size= (padded with fill_value, default 0), as JAX's."""
    a1 = ravel(asarray(ar1))
    if not isinstance(a1, Tracer):
        a1 = np.asarray(a1)
    if assume_unique:
        values, mask = a1, isin(a1, ar2, invert=True)
    else:
        values, _, firsts = _sorted_firsts(a1, False)
        mask = bitwise_and(firsts, isin(values, ar2, invert=True))
    return _picked("setdiff1d", values, mask, size, fill_value, (ar1, ar2), False)[0]


@eager_if_concrete
def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values found in exactly one of ar1 and ar2. A traced input needs size= (padded with
    fill_value, default the smallest value), as JAX's."""
    a1, a2 = promote(ravel(asarray(ar1)), ravel(asarray(ar2)))
    s1, _, f1 = _sorted_firsts(a1, assume_unique)
    s2, _, f2 = _sorted_firsts(a2, assume_unique)
    values = concatenate([s1, s2])
    mask = concatenate([bitwise_and(f1, isin(s1, a2, invert=True)), bitwise_and(f2, isin(s2, a1, invert=True))])
    order = argsort(values, stable=True)
    return _picked("setxor1d", take_clamped(values, order), take_clamped(mask, order), size, fill_value, (ar1, ar2), True)[0]


@eager_if_concrete
def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted distinct values of ar1 and ar2 together (unique of both: size=/fill_value= as unique's)."""
    a1, a2 = promote(ravel(asarray(ar1)), ravel(asarray(ar2)))
    return unique(concatenate([a1, a2]), size=size, fill_value=fill_value)
