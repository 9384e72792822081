"""eig and eigvals of general square matrices, as jax.numpy.linalg has them: complex eigenvalues and right
eigenvectors (unit columns, the largest entry of each real) whatever the input's dtype, from the eig primitive
(LAPACK's geev). Their derivatives are JAX's: the eigenvalues' always, the eigenvectors' not (see
tracejit.lax.linalg.eig's enable_eigvec_derivs)."""
import collections

from ..core.trace import bind
from ..primitives import linalg_eig
from ._base import promote_linalg

EigResult = collections.namedtuple("EigResult", "eigenvalues eigenvectors")


def eig(a):
    """(eigenvalues, eigenvectors in columns) of square matrices (..., n, n), both complex."""
    (a,) = promote_linalg(a, name="eig")
    w, v = bind(linalg_eig.eig_p, a, compute_left_eigenvectors=False, compute_right_eigenvectors=True,
                enable_eigvec_derivs=False)
    return EigResult(w, v)


def eigvals(a):
    """The complex eigenvalues of square matrices (..., n, n)."""
    (a,) = promote_linalg(a, name="eigvals")
    (w,) = bind(linalg_eig.eig_p, a, compute_left_eigenvectors=False, compute_right_eigenvectors=False,
                enable_eigvec_derivs=False)
    return w
