"""Polynomials in NumPy's coefficient order (highest power first): vander, polyval (Horner's rule), polyfit
(least squares on the column-scaled Vandermonde matrix, as NumPy's), differentiable through lstsq's SVD; poly,
polyadd, polysub, polymul, polydiv, polyder, polyint and roots (the companion matrix's eigenvalues)."""
import numpy as np

from ..core.avals import index_arg
from ..core.errors import ConcretizationError
from ..core.trace import Tracer
from ._base import asarray, astype, aval, broadcast_to_shape, promote, stack
from .convolve import convolve
from .creation import eye, ones_like, zeros
from .elementwise_extra import as_inexact
from .linalg import eigvals, inv, lstsq
from .linalg_ops import matmul, outer
from .reductions import sum
from .shape_ops import _as_array, atleast_1d, concatenate, reshape, transpose
from .ufuncs import add, divide, multiply, negative, sqrt, subtract


def vander(x, N=None, increasing=False):
    """Columns of powers of the 1-D x: x**(N-1), ..., x, 1 (the reverse with increasing), by repeated
    products as NumPy's, in x's dtype promoted with int64 (as NumPy's: float32 gives float64)."""
    x = promote(x, np.zeros((), np.int64))[0]
    if aval(x).ndim != 1:
        raise ValueError(f"vander: x must be 1-D, got {aval(x).str_short()}")
    n = aval(x).shape[0] if N is None else index_arg(N, "vander: N")
    if n < 0:
        raise ValueError(f"vander: N must be non-negative, got {n}")
    columns = [ones_like(x)] if n else []
    while len(columns) < n:
        columns.append(multiply(columns[-1], x))
    if not columns:
        return broadcast_to_shape(np.zeros((), aval(x).dtype), (aval(x).shape[0], 0))
    return stack(columns if increasing else columns[::-1], axis=1)


def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients p[0], p[1], ... (highest power first; each may be an array, broadcast with
    x) at x, by Horner's rule (unroll: JAX's loop hint, without effect here)."""
    p = asarray(p)
    if aval(p).ndim < 1:
        raise ValueError(f"polyval: p must hold coefficients along its first axis, got {aval(p).str_short()}")
    p, x = promote(p, x)
    y = multiply(x, 0)
    for k in range(aval(p).shape[0]):
        y = add(multiply(y, x), p[k])
    return y


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree deg through (x, y) (y may hold several columns): coefficients,
    with full=True also (residuals, rank, singular values, rcond), with cov also their covariance."""
    order = index_arg(deg, "polyfit: deg") + 1
    x, y = as_inexact(x), as_inexact(y)
    x, y = promote(x, y)
    if order < 1:
        raise ValueError(f"polyfit: deg must be >= 0, got {deg}")
    if aval(x).ndim != 1 or aval(x).shape[0] == 0:
        raise TypeError(f"polyfit: x must be a non-empty 1-D vector, got {aval(x).str_short()}")
    if aval(y).ndim not in (1, 2) or aval(y).shape[0] != aval(x).shape[0]:
        raise TypeError(f"polyfit: y must be 1-D or 2-D with x's length {aval(x).shape[0]}, got "
                        f"{aval(y).str_short()}")
    n = aval(x).shape[0]
    if rcond is None:
        rcond = n * np.finfo(aval(x).dtype).eps
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = asarray(w)
        if aval(w).ndim != 1 or aval(w).shape[0] != n:
            raise TypeError(f"polyfit: w must be 1-D of x's length {n}, got {aval(w).str_short()}")
        lhs = multiply(lhs, w[:, None])
        rhs = multiply(rhs, w if aval(rhs).ndim == 1 else w[:, None])
    scale = sqrt(sum(multiply(lhs, lhs), axis=0))
    lhs = divide(lhs, scale)
    c, resids, rank, s = lstsq(lhs, rhs, rcond, numpy_resid=full and not isinstance(lhs, Tracer))
    c = transpose(divide(transpose(c), scale))
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    base = divide(inv(matmul(transpose(lhs), lhs)), outer(scale, scale))
    if cov == "unscaled":
        factor = 1.0
    elif n <= order:
        raise ValueError("polyfit: the number of data points must exceed the order to scale the covariance "
                         "matrix (or pass cov='unscaled')")
    else:
        factor = divide(resids, n - order)
    return c, multiply(base, factor) if aval(y).ndim == 1 else multiply(base[:, :, None], factor)


# ------------------------------------------------------------------------------------- arithmetic

def _poly_1d(p, name, what="p"):
    p = atleast_1d(p)
    if aval(p).ndim != 1:
        raise ValueError(f"{name}: {what} must be a 1-D array of coefficients, got {aval(p).str_short()}")
    return p


def _leading_zeros_trimmed(p, name):
    """p without its leading zeros (one zero left if all are), for trim_leading_zeros=True: p must be concrete."""
    if isinstance(p, Tracer):
        raise ConcretizationError(f"{name}: trim_leading_zeros=True needs concrete coefficients (the result's "
                                  "length depends on their values)")
    nonzero = np.flatnonzero(np.asarray(p))
    return p[nonzero[0]:] if nonzero.size else p[-1:]


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (or the characteristic polynomial of a
    square matrix, from its eigenvalues: complex, as JAX's), in the roots' dtype (float64 for integers), as
    NumPy's; complex roots give complex coefficients, as JAX's (NumPy's are real when the roots pair up)."""
    z = _as_array(seq_of_zeros)
    shape = aval(z).shape
    if len(shape) == 2 and shape[0] == shape[1] and shape[0]:
        z = eigvals(z)
    elif len(shape) != 1:
        raise ValueError(f"poly: input must be 1-D or a non-empty square 2-D array, got {aval(z).str_short()}")
    dtype = aval(z).dtype
    if dtype.char not in "fdFD":       # NumPy's mintypecode: float64 for integers, bools and 16-bit floats
        z, dtype = astype(z, np.float64), np.dtype(np.float64)
    if not aval(z).shape[0]:
        return np.ones((), dtype)        # NumPy's 1.0 (JAX's is 0-d too)
    a = np.ones(1, dtype)
    for k in range(aval(z).shape[0]):      # a * (x - z[k]): a shifted, less z[k] times a
        zero = np.zeros(1, dtype)
        a = subtract(concatenate([a, zero]), multiply(z[k], concatenate([zero, a])))
    return a


def _padded(a1, a2):
    """a1 and a2 in one dtype and length (zeros in front of the shorter)."""
    a1, a2 = promote(_poly_1d(a1, "polyadd", "a1"), _poly_1d(a2, "polyadd", "a2"))
    n1, n2 = aval(a1).shape[0], aval(a2).shape[0]
    if n1 < n2:
        a1 = concatenate([zeros((n2 - n1,), aval(a1).dtype), a1])
    elif n2 < n1:
        a2 = concatenate([zeros((n1 - n2,), aval(a2).dtype), a2])
    return a1, a2


def polyadd(a1, a2):
    """The sum of two polynomials (coefficients aligned at the constant term)."""
    return add(*_padded(a1, a2))


def polysub(a1, a2):
    """The difference of two polynomials (coefficients aligned at the constant term)."""
    return subtract(*_padded(a1, a2))


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials: the convolution of their coefficients (leading zeros kept unless
    trim_leading_zeros=True, which needs concrete coefficients, as JAX's)."""
    a1, a2 = _poly_1d(a1, "polymul", "a1"), _poly_1d(a2, "polymul", "a2")
    if trim_leading_zeros:
        a1, a2 = _leading_zeros_trimmed(a1, "polymul"), _leading_zeros_trimmed(a2, "polymul")
    return convolve(a1, a2)


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of u / v by long division, in floats, as NumPy's; the remainder keeps u's length
    (its leading zeros) unless trim_leading_zeros=True (concrete values: NumPy's trimming), as JAX's."""
    u, v = promote(_poly_1d(u, "polydiv", "u"), _poly_1d(v, "polydiv", "v"), to_float="float64")
    m, n = aval(u).shape[0] - 1, aval(v).shape[0] - 1
    scale = divide(1.0, v[0])
    rest, quotient = [u[i] for i in range(m + 1)], []
    for k in range(m - n + 1):
        d = multiply(scale, rest[k])
        quotient.append(d)
        for j in range(n + 1):
            rest[k + j] = subtract(rest[k + j], multiply(d, v[j]))
    q = stack(quotient) if quotient else zeros((1,), aval(u).dtype)
    r = stack(rest)
    if trim_leading_zeros:
        if isinstance(r, Tracer):
            raise ConcretizationError("polydiv: trim_leading_zeros=True needs concrete coefficients (the "
                                      "remainder's length depends on their values)")
        while aval(r).shape[0] > 1 and np.allclose(r[0], 0, rtol=1e-14):
            r = r[1:]
    return q, r


def polyder(p, m=1):
    """The m-th derivative of the polynomial p (NumPy's dtypes: the powers are int64)."""
    m = index_arg(m, "polyder: m")
    if m < 0:
        raise ValueError(f"polyder: the order of the derivative must be non-negative, got {m}")
    p = _poly_1d(p, "polyder")
    for _ in range(m):
        n = aval(p).shape[0] - 1
        p = multiply(p[:-1], np.arange(n, 0, -1)) if n > 0 else multiply(p[:0], np.arange(0))
    return p


def polyint(p, m=1, k=None):
    """The m-th antiderivative of the polynomial p, with integration constants k (one per integration, or one
    for all; zeros by default), as NumPy's (float64 unless complex)."""
    m = index_arg(m, "polyint: m")
    if m < 0:
        raise ValueError(f"polyint: the order of the antiderivative must be non-negative, got {m}")
    constants = np.zeros(m, np.float64) if k is None else atleast_1d(k)
    if aval(constants).shape[0] == 1 and m > 1:
        constants = broadcast_to_shape(constants, (m,))
    if aval(constants).shape[0] < m:
        raise ValueError(f"polyint: k must hold one constant or m={m} of them, got {aval(constants).shape[0]}")
    p = _poly_1d(p, "polyint")
    for i in range(m):
        p = concatenate([divide(p, np.arange(aval(p).shape[0], 0, -1)), constants[i:i + 1]])
    return p


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial p: the eigenvalues of its companion matrix, always complex (as JAX's).
    strip_zeros=True (the default) drops leading zeros and takes trailing ones as roots at 0, so p must be
    concrete; with strip_zeros=False a traced p works (leading zeros then give non-finite roots)."""
    p = _poly_1d(p, "roots")
    trailing = 0
    if strip_zeros:
        if isinstance(p, Tracer):
            raise ConcretizationError("roots: with strip_zeros=True (the default) p must be concrete, since the "
                                      "number of roots depends on its zeros; pass strip_zeros=False")
        nonzero = np.flatnonzero(np.asarray(p))
        if not nonzero.size:
            return np.zeros(0, np.complex128)
        trailing = aval(p).shape[0] - 1 - int(nonzero[-1])
        p = p[nonzero[0]:nonzero[-1] + 1]
    (p,) = promote(p, to_float="float64")
    n = aval(p).shape[0]
    complex_dtype = np.result_type(aval(p).dtype, np.complex64)
    if n < 2:
        found = np.zeros(0, complex_dtype)
    else:
        first_row = reshape(divide(negative(p[1:]), p[0]), (1, n - 1))
        below = eye(n - 2, n - 1, dtype=aval(p).dtype)
        found = eigvals(concatenate([first_row, below], 0))
    return concatenate([found, np.zeros(trailing, complex_dtype)]) if trailing else found
