"""The rest of jax.lax.linalg: schur, hessenberg, householder_product, tridiagonal and tridiagonal_solve (LAPACK-backed
primitives: tracejit.primitives.linalg_schur, linalg_tridiagonal), and symmetric_product and cholesky_update, which
JAX composes from other operations, as these do (qdwh: linalg_qdwh)."""
import numpy as np

from .. import numpy as tnp
from ..core.errors import ShapeError
from ..core.trace import bind
from ..numpy._base import asarray, aval
from ..primitives import linalg_schur as decomp
from ..primitives import linalg_tridiagonal as tridiag


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """(T, Q) with x = Q T Q^H: T upper triangular (complex x) or quasi-triangular with 2 x 2 blocks for complex
    eigenvalue pairs (real x), Q unitary; T alone without compute_schur_vectors. LAPACK's gees, unsorted: as in
    JAX, sort_eig_vals=True is not implemented and select_callable is not used."""
    if sort_eig_vals:
        raise NotImplementedError("schur: sort_eig_vals=True (gees' sorting) is not implemented, as in JAX")
    out = bind(decomp.schur_p, asarray(x), compute_schur_vectors=bool(compute_schur_vectors))
    return tuple(out) if compute_schur_vectors else out[0]


def hessenberg(a):
    """(a, taus): the upper Hessenberg form in a's upper triangle and first subdiagonal, the Householder reflectors
    below it with their scale factors taus, as LAPACK's gehrd leaves them."""
    return tuple(bind(decomp.hessenberg_p, asarray(a)))


def householder_product(a, taus):
    """The first n columns of the product of the Householder reflectors in the lower part of a (..., m, n),
    m >= n, with scale factors taus (..., k): LAPACK's orgqr (ungqr)."""
    return bind(decomp.householder_product_p, asarray(a), asarray(taus))


def tridiagonal(a, *, lower=True):
    """(a, d, e, taus): the reduction of a Hermitian matrix (its `lower` or upper triangle) to tridiagonal form by
    LAPACK's sytrd (hetrd): d the diagonal, e the off-diagonal (real), the reflectors in a outside the three
    diagonals and their scale factors taus."""
    return tuple(bind(decomp.tridiagonal_p, asarray(a), lower=bool(lower)))


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """x with a x = b for the tridiagonal a with subdiagonal dl (dl[..., 0] unused), diagonal d and superdiagonal du
    (du[..., -1] unused), each (..., m), and b (..., m, n): LAPACK's gtsv (partial pivoting); NaN where a is
    singular. perturb_singular=True perturbs tiny pivots instead (a finite result, for inverse iteration), as JAX's."""
    return bind(tridiag.tridiagonal_solve_p, *map(asarray, (dl, d, du, b)), perturb_singular=bool(perturb_singular))


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False):
    """alpha a a^T + beta c for a (..., m, n) and symmetric c (..., m, m). Both triangles are computed (JAX
    guarantees only the lower one; its CPU result is the full product too); symmetrize_output copies the lower
    triangle into the upper one."""
    a, c = asarray(a_matrix), asarray(c_matrix)
    sa, sc = aval(a).shape, aval(c).shape
    if len(sa) < 2 or len(sc) < 2 or sc[-1] != sc[-2] or sa[-2] != sc[-1]:
        raise ShapeError(f"symmetric_product: needs a (..., m, n) and c (..., m, m), got shapes {sa} and {sc}")
    out = alpha * tnp.matmul(a, tnp.swapaxes(a, -1, -2)) + beta * c
    if symmetrize_output:
        out = tnp.tril(out) + tnp.swapaxes(tnp.tril(out, -1), -1, -2)
    return out


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of R^T R + w w^T from R's (upper, n x n) and w (n,), by n Givens rotations, as
    JAX's (O(n^2))."""
    r, z = asarray(r_matrix), asarray(w_vector)
    sr, sz = aval(r).shape, aval(z).shape
    if len(sr) != 2 or sr[0] != sr[1] or sz != sr[:1]:
        raise ShapeError(f"cholesky_update: needs a square matrix (n, n) and a vector (n,), got shapes {sr} and {sz}")
    for k in range(sr[0]):
        x, y = r[k, k], z[k]
        scale = tnp.maximum(abs(x), abs(y))
        zero = y == 0
        scale = tnp.where(zero, 1, scale)
        xs, ys = x / scale, y / scale
        rh = 1 / tnp.sqrt(xs * xs + ys * ys)
        c, s = tnp.where(zero, 1, xs * rh), tnp.where(zero, 0, -ys * rh)
        row = r[k, :]
        r = tnp.where((np.arange(sr[0]) == k)[:, None], (c * row - s * z)[None, :], r)
        z = c * z + s * row
    return r


__all__ = ["cholesky_update", "hessenberg", "householder_product", "schur", "symmetric_product", "tridiagonal",
           "tridiagonal_solve"]
