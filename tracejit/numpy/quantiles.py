"""quantile, percentile and their NaN-ignoring forms, as NumPy computes them: sort along the reduced axes, a
virtual index per q (NumPy's formula for each method), the neighbours gathered and interpolated with NumPy's
lerp. Derivatives flow to a (through sort and gather) and to q (through the interpolation weight)."""
import numpy as np

from ..core.avals import DEFAULT_INT, normalize_axes, shape_size
from ..core.trace import Tracer
from ._base import asarray, astype, aval, broadcast_to_shape, full, promote
from .indexing import sort, take_along_axis
from .reductions import sum
from .shape_ops import reshape, transpose
from .ufuncs import (
    add,
    ceil,
    divide,
    floor,
    greater_equal,
    isnan,
    logical_not,
    maximum,
    minimum,
    multiply,
    rint,
    subtract,
    where_,
)

# (alpha, beta) of NumPy's continuous methods: virtual index n q + alpha + q (1 - alpha - beta) - 1
_CONTINUOUS = {"weibull": (0, 0), "hazen": (0.5, 0.5), "median_unbiased": (1 / 3, 1 / 3),
               "normal_unbiased": (3 / 8, 3 / 8), "interpolated_inverted_cdf": (0, 1)}
_AT_AN_INDEX = {"lower": floor, "higher": ceil, "nearest": rint}
METHODS = ("linear", "midpoint", *_AT_AN_INDEX, *_CONTINUOUS)


def _virtual_index(method, n, q):
    """Where q falls in n sorted values (a float; NumPy's per-method formula), and the interpolation weight's
    rule: None for the fractional part."""
    if method in _CONTINUOUS:
        alpha, beta = _CONTINUOUS[method]
        return subtract(add(multiply(n, q), add(alpha, multiply(q, 1 - alpha - beta))), 1)
    scaled = multiply(subtract(n, 1), q)
    if method == "midpoint":
        return multiply(add(floor(scaled), ceil(scaled)), 0.5)
    return _AT_AN_INDEX[method](scaled) if method in _AT_AN_INDEX else scaled


def _lerp(lo, hi, t):
    """NumPy's lerp: from the nearer end, so t = 0 and t = 1 give lo and hi exactly."""
    d = subtract(hi, lo)
    return where_(greater_equal(t, 0.5), subtract(hi, multiply(d, subtract(1, t))), add(lo, multiply(d, t)))


def _quantile(name, a, q, axis, method, keepdims, ignore_nan, scale=1):
    if method not in METHODS:
        raise ValueError(f"{name}: method {method!r} is not supported; use one of {', '.join(METHODS)} (NumPy's "
                         "inverted_cdf, averaged_inverted_cdf and closest_observation are not)")
    exact = asarray(a)     # NumPy takes lower/higher/nearest quantiles as they are, in their dtype
    a, q = promote(a, q, to_float=True)
    if method in _AT_AN_INDEX and aval(exact).dtype.kind in "iuf":
        a = exact
    if aval(a).dtype.kind == "c":
        raise TypeError(f"{name}: complex values have no order, got {aval(a).str_short()}")
    if scale != 1:
        q = divide(q, scale)
    if not isinstance(q, Tracer) and not np.all((np.asarray(q) >= 0) & (np.asarray(q) <= 1)):
        raise ValueError(f"{name}: q must be in the range [0, {scale}], got {np.asarray(q) * scale}")
    shape = aval(a).shape
    axes = normalize_axes(axis, len(shape), name, iterable=True)
    kept = [k for k in range(len(shape)) if k not in axes]
    n = shape_size([shape[k] for k in axes], name)
    if n == 0:          # no values: NaN, as JAX's (and NumPy's nanquantile)
        a = full(tuple(shape[k] for k in kept) + (1,), np.nan, aval(q).dtype)
        n = 1
    if ignore_nan:      # the NaNs are not data: no derivative reaches them (as JAX's)
        a = where_(isnan(a), np.nan, a)
    ordered = sort(reshape(transpose(a, kept + list(axes)), tuple(shape[k] for k in kept) + (n,)), axis=-1)
    q_shape, rest = aval(q).shape, aval(ordered).shape[:-1]
    q = reshape(q, q_shape + (1,) * len(rest))
    count = sum(logical_not(isnan(ordered)), axis=-1, dtype=aval(q).dtype) if ignore_nan else asarray(n, aval(q).dtype)
    virtual = _virtual_index(method, count, q)
    last = subtract(count, 1)     # (-1 for a slice of NaNs only: index 0 then, a NaN)
    lo = maximum(minimum(floor(virtual), last), 0)
    hi = maximum(minimum(ceil(virtual), last), 0)     # lo at whole indices: no derivative in q there, as JAX's
    weight = subtract(virtual, floor(virtual))     # midpoint's is 0 or 0.5, as NumPy's
    spread = broadcast_to_shape(ordered, q_shape + aval(ordered).shape)

    def at(index):
        index = astype(broadcast_to_shape(index, q_shape + rest), DEFAULT_INT)
        return reshape(take_along_axis(spread, reshape(index, aval(index).shape + (1,)), -1, mode="clip"), q_shape + rest)
    out = at(lo) if method in _AT_AN_INDEX else _lerp(at(lo), at(hi), weight)
    if aval(a).dtype.kind == "f" and not ignore_nan:   # NaNs sort last: a NaN there means the slice holds one
        out = where_(isnan(ordered[..., -1]), np.nan, out)     # (a slice of NaNs only gives NaN by itself)
    if keepdims:
        out = reshape(out, q_shape + tuple(1 if k in axes else d for k, d in enumerate(shape)))
    return out


def _quantile_function(name, ignore_nan, scale, doc):
    def fn(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
        _no_extras(name, out, weights)
        return _quantile(name, a, q, axis, method, keepdims, ignore_nan, scale)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


quantile = _quantile_function("quantile", False, 1, "The q-th quantiles (q in [0, 1], any shape: it leads the "
                              "result's shape) along axis; NaN where a slice holds a NaN.")
percentile = _quantile_function("percentile", False, 100, "quantile with q in percent.")
nanquantile = _quantile_function("nanquantile", True, 1, "quantile of the values that are not NaN (NaN where there "
                                 "are none).")
nanpercentile = _quantile_function("nanpercentile", True, 100, "nanquantile with q in percent.")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of the values that are not NaN."""
    _no_extras("nanmedian", out, None)
    return _quantile("nanmedian", a, 0.5, axis, "linear", keepdims, ignore_nan=True)


def _no_extras(name, out, weights):
    if out is not None:
        raise TypeError(f"{name}: out= is not supported (results are new arrays)")
    if weights is not None:
        raise NotImplementedError(f"{name}: weights= (NumPy's, for method='inverted_cdf') is not supported")
