"""tracejit.lax.linalg: the linear-algebra primitives with jax.lax.linalg's signatures (a stack of matrices in,
leading axes batch axes; no broadcasting)."""
from ..core.trace import bind
from ..numpy._base import asarray
from ..numpy.complex_numbers import conj
from ..numpy.linalg import matrix_transpose
from ..primitives import linalg_eig
from ..primitives import linalg_factor as factor
from ..primitives import linalg_solve as solves
from .linalg_decompositions import (
    cholesky_update,
    hessenberg,
    householder_product,
    schur,
    symmetric_product,
    tridiagonal,
    tridiagonal_solve,
)
from .linalg_qdwh import qdwh

__all__ = ["cholesky", "eig", "eigh", "lu", "lu_pivots_to_permutation", "qr", "svd", "triangular_solve"]
__all__ += ["cholesky_update", "hessenberg", "householder_product", "qdwh", "schur", "symmetric_product", "tridiagonal",
            "tridiagonal_solve"]


def _symmetrized(x, symmetrize_input):
    x = asarray(x)
    return (x + conj(matrix_transpose(x))) / 2 if symmetrize_input else x


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor (NaN where x is not positive definite); without symmetrize_input only x's
    lower triangle is read."""
    return bind(factor.cholesky_p, _symmetrized(x, symmetrize_input))


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True, enable_eigvec_derivs=False):
    """[w, vl, vr] (those asked for) of general square matrices, all complex: eigenvalues, left eigenvectors (vl^H
    x = w vl^H) and right ones (x vr = vr w), columns of unit norm with their largest entry real. Derivatives of
    the eigenvectors hold for distinct eigenvalues only: they are taken only with enable_eigvec_derivs=True."""
    return list(bind(linalg_eig.eig_p, asarray(x), compute_left_eigenvectors=bool(compute_left_eigenvectors),
                     compute_right_eigenvectors=bool(compute_right_eigenvectors),
                     enable_eigvec_derivs=bool(enable_eigvec_derivs)))


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True):
    """(v, w): eigenvectors in the columns of v, eigenvalues w in ascending order (LAPACK always sorts)."""
    return tuple(bind(factor.eigh_p, _symmetrized(x, symmetrize_input), lower=lower))


def lu(x):
    """(lu, pivots, permutation) with P x = L U: int32 row swaps and the permutation they make."""
    return tuple(bind(factor.lu_p, asarray(x)))


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation (int32, of permutation_size) that LAPACK's row swaps `pivots` apply, as JAX's."""
    return bind(factor.lu_pivots_to_permutation_p, asarray(pivots), permutation_size=permutation_size)


def qr(x, *, full_matrices=True):
    """(q, r) of x (batched over leading axes), as jax.lax.linalg.qr."""
    return tuple(bind(factor.qr_p, asarray(x), full_matrices=full_matrices))


def svd(x, *, full_matrices=True, compute_uv=True):
    """(u, s, vh), or s when not compute_uv."""
    out = bind(factor.svd_p, asarray(x), full_matrices=full_matrices, compute_uv=compute_uv)
    return (out[1], out[0], out[2]) if compute_uv else out[0]


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                     unit_diagonal=False):
    """x with op(a) x = b (left_side) or x op(a) = b; b one axis short of a is a single vector."""
    a, b = asarray(a), asarray(b)
    vector = b.ndim == a.ndim - 1
    if vector:
        b = b[..., None] if left_side else b[..., None, :]
    out = bind(solves.triangular_solve_p, a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
               conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return (out[..., 0] if left_side else out[..., 0, :]) if vector else out
