"""Polynomials in NumPy's coefficient order (highest power first): vander, polyval (Horner's rule) and polyfit
(least squares on the column-scaled Vandermonde matrix, as NumPy's), differentiable through lstsq's SVD."""
import numpy as np

from ..core.avals import index_arg
from ..core.trace import Tracer
from ._base import asarray, aval, broadcast_to_shape, promote, stack
from .creation import ones_like
from .elementwise_extra import as_inexact
from .linalg import inv, lstsq
from .linalg_ops import matmul, outer
from .reductions import sum
from .shape_ops import transpose
from .ufuncs import add, divide, multiply, sqrt


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
