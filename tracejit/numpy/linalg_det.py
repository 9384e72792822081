"""Determinants, as jax.numpy.linalg has them: det and slogdet from the LU factorization (2 x 2 and 3 x 3 det by
their formula), with JAX's derivative rules rather than those of the factorization, which are not finite at a
singular matrix: det' = trace(adj(a) a'), with the adjugate from the LU factors made well defined for rank n - 1
(JAX's _cofactor_solve), and log|det|' = trace(a^-1 a'), the sign's derivative zero for real matrices (and the
phase's for complex ones). The rules ride on custom_jvp_call (primitives/custom_jvp_call.py)."""
import numpy as np

from ..core.errors import ShapeError
from ..core.trace import bind
from ..primitives import linalg_factor as factor
from ..primitives import linalg_solve as solves
from ..primitives.custom_jvp_call import call_with_jvp
from ._base import astype, aval, promote_linalg
from .complex_numbers import real
from .creation import zeros_like
from .indexing import take_along_axis
from .linalg_ops import diagonal
from .reductions import prod, sum
from .shape_ops import concatenate
from .statistics import count_nonzero
from .ufuncs import abs, divide, equal, exp, isfinite, less, log, logical_not, multiply, sign, subtract, where_


def _diag(x):
    return diagonal(x, axis1=-2, axis2=-1)


def _trace(x):
    return sum(_diag(x), axis=-1)


def _permutation_sign(pivots, dtype):
    """(-1) ** (the number of row swaps), as dtype."""
    n = aval(pivots).shape[-1]
    swaps = count_nonzero(pivots != np.arange(n, dtype=np.int32), axis=-1)
    return subtract(1, multiply(2, astype(swaps % 2, dtype)))


def _det_small(a):
    """det of 1 x 1, 2 x 2 and 3 x 3 matrices by their formula (as JAX's: no LU, a smooth derivative)."""
    n = aval(a).shape[-1]
    e = [[a[..., i, j] for j in range(n)] for i in range(n)]
    if n == 1:
        return e[0][0]
    if n == 2:
        return subtract(multiply(e[0][0], e[1][1]), multiply(e[0][1], e[1][0]))
    terms = [multiply(multiply(e[0][j], e[1][(j + 1) % 3]), e[2][(j + 2) % 3]) for j in range(3)]
    minus = [multiply(multiply(e[0][j], e[1][(j + 2) % 3]), e[2][(j + 1) % 3]) for j in range(3)]
    return subtract(terms[0] + terms[1] + terms[2], minus[0] + minus[1] + minus[2])


def _slogdet_value(a):
    """[sign, log|det|]: by formula for n = 1, 2, else from LU (the sign of a complex det is its phase)."""
    dtype = aval(a).dtype
    if aval(a).shape[-1] in (1, 2):
        d = _det_small(a)
        return [sign(d), log(abs(d))]
    lu, pivots, _ = bind(factor.lu_p, a)
    diag = _diag(lu)
    is_zero = count_nonzero(equal(diag, 0), axis=-1) > 0
    if dtype.kind == "c":
        phase = prod(divide(diag, astype(abs(diag), dtype)), axis=-1)
    else:
        phase = subtract(1, multiply(2, astype(count_nonzero(less(diag, 0), axis=-1) % 2, dtype)))
    sign_ = where_(is_zero, np.zeros((), dtype), multiply(phase, _permutation_sign(pivots, dtype)))
    logdet = where_(is_zero, -np.inf, sum(log(abs(diag)), axis=-1))
    return [sign_, logdet]


def _slogdet_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    sign_, logdet = slogdet(x)
    dlog = _trace(bind(solves.solve_p, x, g, transpose_a=False))
    if aval(x).dtype.kind == "c":
        dlog_real = real(dlog)
        return [sign_, logdet], [multiply(subtract(dlog, astype(dlog_real, aval(dlog).dtype)), sign_), dlog_real]
    return [sign_, logdet], [zeros_like(sign_), dlog]


def slogdet(a, *, method=None):
    """(sign, log|det|) of square matrices; sign 0 and -inf for a singular one."""
    (a,) = promote_linalg(a, name="slogdet")
    shape = aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(f"slogdet: needs an array of shape (..., n, n), got shape {shape}")
    if method not in (None, "lu"):
        raise ValueError(f"slogdet: method must be None or 'lu', got {method!r}")
    return tuple(call_with_jvp(_slogdet_value, _slogdet_jvp, a))


def cofactor_solve(a, b):
    """(det(a), adj(a) b) for square a and b, finite for singular a (JAX's _cofactor_solve): with P a = L U, det(a)
    adj... = det(a) U^-1 L^-1 P b, computed with the last pivot of U replaced by 1 / (the product of the others)
    and the rows but the last scaled by det(a), so that a matrix of rank n - 1 gives its rank-1 adjugate; rank
    below n - 1 gives zeros."""
    n = aval(a).shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    dtype = aval(a).dtype
    lu, pivots, perm = bind(factor.lu_p, a)
    diag = _diag(lu)
    det_but_last = multiply(prod(diag[..., :n - 1], axis=-1), _permutation_sign(pivots, dtype))
    det = multiply(det_but_last, diag[..., n - 1])
    corner = np.zeros((n, n), bool)
    corner[-1, -1] = True
    lu = where_(corner, divide(1, det_but_last)[..., None, None], lu)
    ones = np.ones(aval(lu).shape[:-1] + (1,), dtype)
    upper = {"left_side": True, "lower": False, "transpose_a": False, "conjugate_a": False, "unit_diagonal": False}
    probe = bind(solves.triangular_solve_p, lu, ones, **upper)
    low_rank = (count_nonzero(logical_not(isfinite(probe)), axis=(-2, -1)) > 0)[..., None, None]
    x = take_along_axis(where_(low_rank, 0, b), perm[..., None], axis=-2, mode="clip")
    x = bind(solves.triangular_solve_p, lu, x, **{**upper, "lower": True, "unit_diagonal": True})
    x = concatenate([multiply(x[..., :n - 1, :], det[..., None, None]), x[..., n - 1:, :]], axis=-2)
    x = bind(solves.triangular_solve_p, lu, x, **upper)
    return det, where_(low_rank, 0, x)


def _det_value(a):
    sign_, logdet = slogdet(a)
    return [multiply(sign_, astype(exp(logdet), aval(sign_).dtype))]


def _det_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    y, z = cofactor_solve(x, g)
    return [y], [_trace(z)]


def det(a):
    """The determinant of square matrices (0 for a singular one)."""
    (a,) = promote_linalg(a, name="det")
    shape = aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(f"det: needs an array of shape (..., n, n), got shape {shape}")
    if shape[-1] in (2, 3):
        return _det_small(a)
    return call_with_jvp(_det_value, _det_jvp, a)[0]
