"""tracejit.scipy.linalg: jax.scipy.linalg, on tracejit.numpy.linalg and the linear-algebra primitives.

As JAX's: no `overwrite_*` or `check_finite` effects (accepted and ignored), no exceptions from values (a matrix
that is not positive definite gives NaN, a singular one inf/NaN), and b of shape (n,) or (..., n, k) with batch
axes broadcast."""
import functools

import numpy as np

from .. import numpy as tnp
from ..core.errors import ShapeError
from ..core.trace import bind
from ..custom_derivatives import custom_jvp
from ..numpy import linalg as tla
from ..numpy._base import aval, broadcast_to_shape, promote, promote_linalg
from ..primitives import linalg_factor as factor
from ..primitives import linalg_solve as solves
from ._args import square_matrices
from .linalg_expm import expm, expm_frechet
from .linalg_matrices import (
    circulant,
    companion,
    convolution_matrix,
    dft,
    fiedler,
    fiedler_companion,
    hadamard,
    hankel,
    helmert,
    hilbert,
    invhilbert,
    invpascal,
    leslie,
    pascal,
    toeplitz,
)
from .linalg_polar import polar, qr_multiply
from .linalg_schur import funm, hessenberg, rsf2csf, schur, solve_sylvester, sqrtm
from .linalg_tridiagonal import eigh_tridiagonal

__all__ = ["circulant", "companion", "convolution_matrix", "dft", "fiedler", "fiedler_companion", "hadamard",
           "hankel", "helmert", "hilbert", "invhilbert", "invpascal", "leslie", "pascal", "toeplitz"]
__all__ += ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm", "inv", "lu", "lu_factor",
           "lu_solve", "qr", "solve", "solve_triangular", "svd"]
__all__ += ["eigh_tridiagonal", "expm_frechet", "funm", "hessenberg", "polar", "qr_multiply", "rsf2csf", "schur",
            "solve_sylvester", "sqrtm"]


def _with_rhs(name, a, b):
    """a (..., n, n) and b as (..., n, k) with their batch axes broadcast, and whether b was a vector (n,)."""
    a, b = promote_linalg(a, b, name=name)
    (a,) = square_matrices(name, a)
    sa, sb = aval(a).shape, aval(b).shape
    vector = len(sb) == 1
    if vector:
        b = tnp.reshape(b, (sb[0], 1))
        sb = aval(b).shape
    if len(sb) < 2 or sb[-2] != sa[-1]:
        raise ShapeError(f"{name}: b must have shape ({sa[-1]},) or (..., {sa[-1]}, k) for a of shape {sa}, got "
                         f"shape {aval(b).shape}")
    batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    return broadcast_to_shape(a, batch + sa[-2:]), broadcast_to_shape(b, batch + sb[-2:]), vector


def _as_given(x, vector):
    return x[..., 0] if vector else x


def _triangular(a, b, lower, transpose_a=False, unit_diagonal=False, conjugate_a=None):
    """op(a)^-1 b: a^-1, a^-T, or a^-H (conjugate_a, by default with transpose_a)."""
    return bind(solves.triangular_solve_p, a, b, left_side=True, lower=lower, transpose_a=transpose_a,
                conjugate_a=transpose_a if conjugate_a is None else conjugate_a, unit_diagonal=unit_diagonal)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
                     check_finite=True):
    """x with op(a) x = b for triangular a (only its `lower` or upper triangle is read); trans 0/'N', 1/'T' (a^T)
    or 2/'C' (a^H)."""
    if trans not in (0, 1, 2, "N", "T", "C"):
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    a, b, vector = _with_rhs("solve_triangular", a, b)
    return _as_given(_triangular(a, b, lower, trans not in (0, "N"), unit_diagonal, conjugate_a=trans in (2, "C")),
                     vector)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor from one triangle of a (lower or upper, as `lower` says; the other is not read)."""
    (a,) = square_matrices("cholesky", a)
    if lower:
        return bind(factor.cholesky_p, a)
    return tla.matrix_transpose(bind(factor.cholesky_p, tla.matrix_transpose(a)))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower) for cho_solve, as scipy.linalg.cho_factor; c is the Cholesky factor with zeros in its
    other triangle (SciPy leaves that triangle unspecified)."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with a x = b from a's Cholesky factor c: a = c c^H (lower) or c^H c (upper)."""
    c, lower = c_and_lower
    c, b, vector = _with_rhs("cho_solve", c, b)
    y = _triangular(c, b, lower, transpose_a=not lower)
    return _as_given(_triangular(c, y, lower, transpose_a=lower), vector)


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, pivots): L and U in one matrix, and the row swaps (0-based int32), as LAPACK's getrf."""
    (a,) = promote_linalg(a, name="lu_factor")
    lu_, pivots, _ = bind(factor.lu_p, a)
    return lu_, pivots


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with a x = b (trans 0), a^T x = b (1) or a^H x = b (2) from lu_factor's (lu, pivots)."""
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    lu_, pivots = lu_and_piv
    lu_, b, vector = _with_rhs("lu_solve", lu_, b)
    perm = bind(factor.lu_pivots_to_permutation_p, tnp.asarray(pivots).astype(np.int32),
                permutation_size=aval(lu_).shape[-1])
    perm = broadcast_to_shape(perm, aval(lu_).shape[:-1])[..., None]
    if trans == 0:
        x = tnp.take_along_axis(b, perm, axis=-2, mode="clip")
        x = _triangular(lu_, x, lower=True, unit_diagonal=True)
        return _as_given(_triangular(lu_, x, lower=False), vector)
    x = _triangular(lu_, b, lower=False, transpose_a=True, conjugate_a=trans == 2)
    x = _triangular(lu_, x, lower=True, transpose_a=True, unit_diagonal=True, conjugate_a=trans == 2)
    return _as_given(tnp.take_along_axis(x, tnp.argsort(perm, axis=-2), axis=-2, mode="clip"), vector)


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p @ l @ u (p real, as SciPy's and JAX's), or (p @ l, u) when permute_l."""
    (a,) = promote_linalg(a, name="lu")
    shape = aval(a).shape
    if len(shape) < 2:
        raise ShapeError(f"lu: needs an array of shape (..., m, n), got shape {shape}")
    lu_, _, perm = bind(factor.lu_p, a)
    (m, n), dtype = shape[-2:], aval(a).dtype
    k = min(m, n)
    p = tnp.equal(perm[..., None, :], np.arange(m, dtype=np.int32)[:, None]).astype(np.finfo(dtype).dtype)
    l_ = tnp.add(tnp.tril(lu_, -1)[..., :, :k], tnp.eye(m, k, dtype=dtype))
    u = tnp.triu(lu_)[..., :k, :]
    return (tnp.matmul(p, l_), u) if permute_l else (p, l_, u)


@functools.partial(custom_jvp, nondiff_argnums=(2,))
def _solve_pos(a, b, lower):
    return cho_solve(cho_factor(a, lower=lower), b)


@_solve_pos.defjvp
def _solve_pos_jvp(lower, primals, tangents):
    """JAX's custom_linear_solve rule, x' = a^-1 (b' - a' x), whose own derivative sees all of a' (not one
    triangle, as a Cholesky factor would): the tangent is solved by LU."""
    (a, b), (da, db) = primals, tangents
    x = _solve_pos(a, b, lower)
    return x, tla.solve(a, tnp.subtract(db, tnp.matmul(da, x)))


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False, check_finite=True, assume_a="gen"):
    """x with a x = b; assume_a='pos' solves by Cholesky (NaN when a is not positive definite)."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"solve: assume_a must be 'gen', 'sym', 'her' or 'pos', got {assume_a!r}")
    if assume_a != "pos":
        return tla.solve(a, b)
    a, b, vector = _with_rhs("solve", a, b)
    return _as_given(_solve_pos(a, b, lower), vector)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, turbo=True, eigvals=None,
         type=1, check_finite=True):
    """(w, v), or w when eigvals_only; the standard problem only, as JAX's."""
    if b is not None or type != 1 or eigvals is not None:
        raise NotImplementedError("eigh: only the standard problem (b=None, type=1, eigvals=None) is implemented, "
                                  "as in JAX")
    if eigvals_only:
        return tla.eigvalsh(a, UPLO="L" if lower else "U")
    return tuple(tla.eigh(a, UPLO="L" if lower else "U"))


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
    """(U, s, Vh), or s, as scipy.linalg.svd; overwrite_a, check_finite and lapack_driver are accepted
    and change nothing."""
    out = tla.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """(q, r) for mode 'full' or 'economic', (r,) for mode 'r'."""
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not implemented")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"qr: mode must be 'full', 'economic' or 'r', got {mode!r}")
    q, r = tla.qr(a, mode="reduced" if mode == "economic" else "complete")
    return (r,) if mode == "r" else (q, r)


def det(a, overwrite_a=False, check_finite=True):
    """The determinant, as scipy.linalg.det (numpy.linalg.det's rules; the other arguments change nothing)."""
    return tla.det(a)


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse, as scipy.linalg.inv (numpy.linalg.inv's rules; the other arguments change nothing)."""
    return tla.inv(a)


def block_diag(*arrs):
    """The arrays (at most 2-D) on the diagonal of one matrix, zeros elsewhere."""
    arrs = [tnp.atleast_2d(x) for x in promote(*arrs)] if arrs else [tnp.zeros((1, 0))]
    if any(aval(x).ndim > 2 for x in arrs):
        raise ShapeError(f"block_diag: needs arrays of at most 2 dimensions, got shapes "
                         f"{[aval(x).shape for x in arrs]}")
    total = sum(aval(x).shape[1] for x in arrs)
    rows, start = [], 0
    for x in arrs:
        cols = aval(x).shape[1]
        rows.append(tnp.pad(x, ((0, 0), (start, total - start - cols))))
        start += cols
    return tnp.concatenate(rows, axis=0)
