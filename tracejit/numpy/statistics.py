"""NumPy's NaN-aware reductions, median, average, ptp and count_nonzero, written on the reductions."""
import numpy as np

from ..core.avals import DEFAULT_INT, is_float, normalize_axes, shape_size
from ._base import asarray, astype, aval, broadcast_to_shape, promote, reject_out
from .creation import full
from .indexing import sort
from .reductions import all, any, max, mean, min, require_nonempty, sum
from .shape_ops import _slice_axis, reshape, squeeze, transpose
from .ufuncs import add, bitwise_and, divide, isclose, isnan, logical_not, multiply, not_equal, subtract, where_


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))


def count_nonzero(a, axis=None, keepdims=False):
    return sum(not_equal(asarray(a), 0), axis, dtype=DEFAULT_INT, keepdims=keepdims)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    a = asarray(a)
    return sum(where_(isnan(a), 0, a) if is_float(aval(a).dtype) else a, axis, dtype, out, keepdims, initial,
               where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """The mean of the non-NaN values (NaN where there are none, as NumPy, which also warns)."""
    (a,) = promote(a, to_float="float64")
    number = logical_not(isnan(a))
    where = number if where is None else bitwise_and(number, where)
    out = mean(a, axis, out=out, keepdims=keepdims, where=where)
    return out if dtype is None else astype(out, dtype)


def _nan_extremum(reduce, fill):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        a = asarray(a)
        if not is_float(aval(a).dtype):
            return reduce(a, axis, out, keepdims, initial, where)
        if initial is None:
            require_nonempty(fn.__name__, a, axis)
        number = logical_not(isnan(a))
        if where is not None:
            number = bitwise_and(number, broadcast_to_shape(asarray(where, np.bool_), aval(a).shape))
        extremum = reduce(a, axis, out, keepdims, fill if initial is None else initial, number)
        if initial is not None:
            return extremum
        return where_(any(number, axis, keepdims=keepdims), extremum, np.nan)   # no number: NaN, as NumPy
    fn.__name__ = f"nan{reduce.__name__}"
    return fn


nanmax = _nan_extremum(max, -np.inf)
nanmin = _nan_extremum(min, np.inf)


def ptp(a, axis=None, out=None, keepdims=False):
    return subtract(max(a, axis, out, keepdims), min(a, axis, out, keepdims))


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


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The middle of the sorted values (the mean of the two middle ones for an even count); NaN where a
    slice holds a NaN, as NumPy. overwrite_input changes nothing: inputs are never written."""
    reject_out("median", out)
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

