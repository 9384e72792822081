"""cov and corrcoef as NumPy computes them (at least float64, as NumPy; frequency and analytic weights), on
average and one matrix product, so their derivatives are those of the formulas (as JAX's)."""
import numpy as np

from ..core.trace import Tracer, bind
from ..primitives import complex_parts as cp
from ._base import asarray, astype, aval, promote
from .complex_numbers import conj, imag, real
from .linalg_ops import diagonal, dot
from .reductions import sum
from .shape_ops import atleast_2d, concatenate, squeeze, transpose
from .statistics import average
from .ufuncs import clip, divide, maximum, multiply, sqrt, subtract


def _observations(x, rowvar, name):
    x = atleast_2d(asarray(x))
    if aval(x).ndim > 2:
        raise ValueError(f"{name}: needs a 1-D or 2-D array, got {aval(x).str_short()}")
    return x if rowvar or aval(x).shape[0] == 1 else transpose(x)


def _weights(fweights, aweights, n):
    """The product of the frequency and analytic weights (checked as NumPy checks them), or None."""
    w = None
    for name, given in (("fweights", fweights), ("aweights", aweights)):
        if given is None:
            continue
        v = asarray(given)
        if aval(v).ndim != 1 or aval(v).shape[0] != n:
            raise ValueError(f"cov: {name} must be 1-D of length {n} (the number of observations), got "
                             f"{aval(v).str_short()}")
        if not isinstance(v, Tracer):
            if name == "fweights" and np.any(np.asarray(v) != np.around(v)):
                raise TypeError("cov: fweights must be integers")
            if np.any(np.asarray(v) < 0):
                raise ValueError(f"cov: {name} cannot be negative")
        w = v if w is None else multiply(w, v)
    return w


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """The covariance matrix of the variables in the rows of m (columns with rowvar=False), and of y's."""
    x = _observations(m, rowvar, "cov")
    if y is not None:
        x = concatenate([x, _observations(y, rowvar, "cov")], axis=0)
    x = promote(x, np.zeros((), np.float64))[0] if dtype is None else astype(x, dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    n = aval(x).shape[1]
    w = _weights(fweights, aweights, n)
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        fact = np.asarray(max(n - ddof, 0), np.finfo(aval(x).dtype).dtype)     # real, as are the weights
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = subtract(w_sum, ddof)
    else:
        fact = subtract(w_sum, divide(multiply(ddof, sum(multiply(w, asarray(aweights)))), w_sum))
    centred = subtract(x, avg[:, None])
    weighted = centred if w is None else multiply(centred, w)
    return squeeze(divide(dot(centred, conj(transpose(weighted))), maximum(fact, 0)))


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients: cov scaled by the standard deviations, clipped to [-1, 1] (the real and
    imaginary parts each, as NumPy)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if aval(c).ndim == 0:
        return divide(c, c)
    stddev = sqrt(real(diagonal(c)))
    c = divide(divide(c, stddev[:, None]), stddev[None, :])
    if aval(c).dtype.kind == "c":
        return bind(cp.complex_p, clip(real(c), -1, 1), clip(imag(c), -1, 1))
    return clip(c, -1, 1)
