"""Means and variances, NumPy's NaN-aware reductions, median, average, ptp and count_nonzero, written on the
reductions."""
import builtins

import numpy as np

from ..core.avals import DEFAULT_INT, HALF_FLOATS, Dim, is_float, normalize_axes, shape_size
from ..core.trace import Tracer, bind
from ..primitives import complex_parts as cp
from ..primitives import shapes as sh
from ._base import asarray, astype, aval, broadcast_to_shape, promote
from .indexing import sort
from .shape_ops import _slice_axis, all, full, max, min, reshape, squeeze, sum, transpose
from .ufuncs import (
    add,
    divide,
    isclose,
    isnan,
    logical_not,
    maximum,
    multiply,
    not_equal,
    sqrt,
    square,
    subtract,
    where_,
)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))


def mean(a, axis=None, dtype=None, keepdims=False):
    a = asarray(a)
    (a,) = promote(a, to_float="float64") if dtype is None else (astype(a, dtype),)
    if aval(a).dtype in HALF_FLOATS:      # as NumPy: summed and divided in float32, rounded once
        return astype(mean(astype(a, np.float32), axis, keepdims=keepdims), aval(a).dtype)
    count = _count(a, axis)
    if isinstance(count, Tracer):
        out = divide(sum(a, axis, keepdims=keepdims), count)
    else:
        out = divide(sum(a, axis, keepdims=keepdims), np.asarray(count, aval(a).dtype) if count else np.nan)
    return out if dtype is None else astype(out, dtype)     # an integer dtype: the quotient truncated, as NumPy


def _count(a, axis, ddof=0):
    """How many elements a reduction over axis combines, less ddof: an int, or a traced scalar of a's
    dtype when a reduced dimension is symbolic (its size is read at run time)."""
    shape = aval(a).shape
    axes = normalize_axes(axis, len(shape))
    count = shape_size([shape[i] for i in axes if not isinstance(shape[i], Dim)])
    symbolic = [i for i in axes if isinstance(shape[i], Dim)]
    if not symbolic:
        return builtins.max(count - ddof, 0)   # as NumPy: ddof >= count divides by 0 (nan or inf)
    for i in symbolic:
        size = astype(bind(sh.dim_size_p, dim=shape[i]), aval(a).dtype)
        count = size if count == 1 else multiply(count, size)
    return maximum(subtract(count, ddof), 0) if ddof else count


def var(a, axis=None, dtype=None, ddof=0, keepdims=False):
    a = asarray(a)
    (a,) = promote(a, to_float="float64") if dtype is None else (astype(a, dtype),)
    count, c = _count(a, axis, ddof), subtract(a, mean(a, axis, keepdims=True))
    squared = bind(cp.real_p, multiply(c, bind(cp.conj_p, c))) if aval(c).dtype.kind == "c" else square(c)  # |c|**2
    return divide(sum(squared, axis, keepdims=keepdims),
                  count if isinstance(count, Tracer) else np.asarray(count, aval(squared).dtype))


def std(a, axis=None, dtype=None, ddof=0, keepdims=False):
    return sqrt(var(a, axis, dtype, ddof, keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    return sum(not_equal(asarray(a), 0), axis, dtype=DEFAULT_INT, keepdims=keepdims)


def nansum(a, axis=None, dtype=None, keepdims=False):
    a = asarray(a)
    return sum(where_(isnan(a), 0, a) if is_float(aval(a).dtype) else a, axis, dtype, keepdims)


def nanmean(a, axis=None, dtype=None, keepdims=False):
    """The mean of the non-NaN values (NaN where there are none, as NumPy, which also warns)."""
    (a,) = promote(a, to_float="float64")
    count = sum(logical_not(isnan(a)), axis, dtype=aval(a).dtype, keepdims=keepdims)
    out = divide(nansum(a, axis, keepdims=keepdims), count)
    return out if dtype is None else astype(out, dtype)


def _nan_extremum(reduce, fill):
    def fn(a, axis=None, keepdims=False):
        a = asarray(a)
        if not is_float(aval(a).dtype):
            return reduce(a, axis, keepdims)
        nan = isnan(a)
        return where_(all(nan, axis, keepdims), np.nan, reduce(where_(nan, fill, a), axis, keepdims))
    return fn


nanmax = _nan_extremum(max, -np.inf)
nanmin = _nan_extremum(min, np.inf)


def ptp(a, axis=None, keepdims=False):
    return subtract(max(a, axis, keepdims), min(a, axis, keepdims))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """mean, or sum(a * w) / sum(w) with w broadcast along axis when it is 1-D (NumPy's rules)."""
    a = asarray(a)
    axis = None if axis is None else normalize_axes(axis, aval(a).ndim, "average", iterable=True)
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        scale = full(aval(avg).shape, np.prod(aval(a).shape) / np.prod(aval(avg).shape), aval(avg).dtype)
    else:
        w = asarray(weights)
        if aval(w).shape != aval(a).shape:
            if axis is None or len(axis) != 1 or aval(w).ndim != 1:
                raise ValueError(f"average: weights of shape {aval(w).shape} differ from a's {aval(a).shape}: "
                                 "give a 1-D weights array and one axis")
            ax = axis[0]
            w = broadcast_to_shape(reshape(w, tuple(-1 if k == ax else 1 for k in range(aval(a).ndim))),
                                   aval(a).shape)
        if aval(a).dtype.kind in "biu":
            a, w, _ = promote(a, w, 1.0)
        a, w = promote(a, w)
        scale = sum(w, axis, keepdims=keepdims)
        avg = divide(sum(multiply(a, w), axis, keepdims=keepdims), scale)
    return (avg, scale) if returned else avg


def median(a, axis=None, keepdims=False):
    """The middle of the sorted values (the mean of the two middle ones for an even count); NaN where a
    slice holds a NaN, as NumPy."""
    (a,) = promote(a, to_float="float64")
    shape = aval(a).shape
    axes = normalize_axes(axis, len(shape), "median", iterable=True)
    ax = axes[0] if len(axes) == 1 else len(shape) - len(axes)
    if len(axes) != 1:      # the reduced axes moved last and merged into one
        kept = [k for k in range(len(shape)) if k not in axes]
        a = reshape(transpose(a, kept + list(axes)), tuple(shape[k] for k in kept) + (shape_size(
            [shape[k] for k in axes], "median over several axes"),))
    n = aval(a).shape[ax]
    if n == 0:
        out = full(aval(a).shape[:ax] + aval(a).shape[ax + 1:], np.nan, aval(a).dtype)
    else:
        ordered = sort(a, axis=ax)
        lo, hi = (squeeze(_slice_axis(ordered, ax, i, i + 1), ax) for i in ((n - 1) // 2, n // 2))
        middle = lo if n % 2 else divide(add(lo, hi), 2)
        last = squeeze(_slice_axis(ordered, ax, n - 1, n), ax)      # NaNs sort last
        out = where_(isnan(last), last, middle)
    if keepdims:
        out = reshape(out, tuple(1 if k in axes else d for k, d in enumerate(shape)))
    return out

