"""NumPy's NaN-ignoring reductions beyond statistics.py's: nanargmax, nanargmin, nanprod, nancumsum, nancumprod,
nanvar and nanstd. NaNs are replaced before reducing (not masked after), so their derivatives are 0, not NaN."""
import numpy as np

from ..core.avals import DEFAULT_INT, is_float, normalize_axes
from ..core.trace import Tracer
from ._base import asarray, astype, aval, broadcast_to_shape, promote, reject_out
from .calculus import cumprod
from .complex_numbers import conj, real
from .reductions import _ddof, all, argmax, argmin, cumsum, prod, sum
from .ufuncs import bitwise_and, divide, isnan, less_equal, logical_not, multiply, sqrt, square, subtract, where_


def _without_nan(a, fill):
    """a with its NaNs replaced by fill (integers and bools have none)."""
    a = asarray(a)
    if not isinstance(a, Tracer):
        a = np.asarray(a)
    return where_(isnan(a), fill, a) if aval(a).dtype.kind in "fc" else a


def _nan_arg(arg, fill, name):
    def fn(a, axis=None, out=None, keepdims=None):
        reject_out(name, out)
        a = asarray(a)
        if aval(a).dtype.kind not in "fc":
            return arg(a, axis, keepdims=bool(keepdims))
        nan = isnan(a)
        every = all(nan, axis, keepdims=bool(keepdims))
        if not isinstance(every, Tracer) and np.any(every):
            raise ValueError(f"{name}: All-NaN slice encountered (NumPy raises; under jit the index is -1, as JAX's)")
        index = arg(where_(nan, fill, a), axis, keepdims=bool(keepdims))
        return where_(every, np.asarray(-1, DEFAULT_INT), index)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The index of the {name[5:8]}imum, NaNs ignored; for a slice of NaNs only NumPy's ValueError "
                  "(JAX's -1 under jit, where a traced value cannot raise).")
    return fn


nanargmax = _nan_arg(argmax, -np.inf, "nanargmax")
nanargmin = _nan_arg(argmin, np.inf, "nanargmin")


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """The product with NaNs taken as 1."""
    return prod(_without_nan(a, 1), axis, dtype, out, keepdims, initial, where)


def nancumsum(a, axis=None, dtype=None, out=None):
    """The running sum with NaNs taken as 0."""
    return cumsum(_without_nan(a, 0), axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """The running product with NaNs taken as 1."""
    return cumprod(_without_nan(a, 1), axis, dtype, out)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None, *, correction=None):
    """The variance of the non-NaN values (NaN where fewer than ddof + 1 remain, as NumPy's); `mean`, if given,
    is their mean with keepdims=True; correction is the array API's name for ddof."""
    reject_out("nanvar", out)
    ddof = _ddof("nanvar", ddof, correction)
    (a,) = promote(a, to_float="float64") if dtype is None else (astype(asarray(a), dtype),)
    shape = aval(a).shape
    axes = normalize_axes(axis, len(shape))
    number = logical_not(isnan(a)) if is_float(aval(a).dtype) or aval(a).dtype.kind == "c" else np.ones(shape, bool)
    if where is not None:
        number = bitwise_and(number, broadcast_to_shape(asarray(where, np.bool_), shape))
    a = where_(number, a, 0)
    real_dtype = aval(real(a)).dtype
    count = sum(number, axes, dtype=real_dtype, keepdims=True)
    center = divide(sum(a, axes, keepdims=True), count) if mean is None else asarray(mean)
    c = where_(number, subtract(a, center), 0)
    squared = real(multiply(c, conj(c))) if aval(c).dtype.kind == "c" else square(c)
    total = sum(squared, axes, keepdims=keepdims)
    dof = subtract(count if keepdims else sum(number, axes, dtype=real_dtype), ddof)
    return where_(less_equal(dof, 0), np.nan, divide(total, where_(less_equal(dof, 0), 1, dof)))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None, *, correction=None):
    """sqrt(nanvar)."""
    return sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where, mean, correction=correction))
