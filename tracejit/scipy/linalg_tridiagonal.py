"""jax.scipy.linalg.eigh_tridiagonal: the eigenvalues of a Hermitian tridiagonal matrix by bisection on Sturm
sequence counts, as JAX's (all of them, or those with indices in select_range), every interval halved at once until
the widest is within eps * |T| (or tol); eigenvectors, which JAX finds by inverse iteration with perturbed pivots,
come from the dense Hermitian eigensolver applied to the assembled matrix (O(n^3) instead of O(n^2) per vector;
they agree with JAX's up to the sign or phase of each column)."""
import numpy as np

from .. import lax
from .. import numpy as tnp
from ..numpy import linalg as tla
from ..numpy._base import aval

_FUDGE = 2.1     # JAX's (and LAPACK's stebz's) widening of the Gershgorin interval


def _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, x):
    """For each shift in x, the number of eigenvalues below it: the negative pivots of the LDL^T factorization of
    T - x I (a zero first pivot perturbed, later ones kept at least pivmin away from zero)."""
    n = aval(alpha).shape[0]
    q = alpha[0] - x
    count = (q < 0).astype(np.int32)
    q = tnp.where(alpha[0] == x, alpha0_perturbation, q)

    def step(i, state):
        q, count, alpha, beta_sq = state
        q = alpha[i] - beta_sq[i - 1] / q - x
        small = q <= pivmin
        return tnp.where(small, tnp.minimum(q, -pivmin), q), count + small.astype(np.int32), alpha, beta_sq

    # alpha and beta_sq ride in the loop's state: closed over, eager (NumPy) ones could not take a traced index
    return lax.fori_loop(1, n, step, (q, count, alpha, beta_sq))[1]


def _bisection(alpha, beta_abs, beta_sq, targets, tol):
    dtype = aval(alpha).dtype
    n = aval(alpha).shape[0]
    finfo = np.finfo(dtype)
    row_sums = tnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    top, bottom = tnp.max(alpha + row_sums), tnp.min(alpha - row_sums)
    t_norm = tnp.maximum(tnp.abs(bottom), tnp.abs(top))
    one = np.ones((), dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * tnp.maximum(1, tnp.max(beta_sq))
    alpha0_perturbation = tnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = tnp.maximum(tol, abs_tol)
    slack = np.asarray(n, dtype) * _FUDGE * finfo.eps * t_norm
    shape = targets.shape
    lower = tnp.broadcast_to(bottom - slack - 2 * _FUDGE * pivmin, shape)
    upper = tnp.broadcast_to(top + slack + _FUDGE * pivmin, shape)

    def cond(state):
        i, lower, _, upper = state
        return tnp.logical_and(i < finfo.nmant + 1, abs_tol < tnp.max(upper - lower))

    def body(state):
        i, lower, mid, upper = state
        counts = _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = tnp.where(counts <= targets, mid, lower)
        upper = tnp.where(counts > targets, mid, upper)
        return i + 1, lower, 0.5 * (lower + upper), upper

    return lax.while_loop(cond, body, (0, lower, 0.5 * (lower + upper), upper))[2]


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None, key=None):
    """The eigenvalues (ascending) of the Hermitian tridiagonal matrix with diagonal d (its real part) and
    superdiagonal e (subdiagonal conj(e)): all (select 'a') or those with indices select_range[0] <= i <=
    select_range[1] ('i'); with eigvals_only=False also the eigenvectors in columns. select 'v' is not implemented,
    as in JAX; key (JAX's inverse iteration's random start) is unused."""
    alpha, beta = tnp.asarray(d), tnp.asarray(e)
    if aval(alpha).dtype != aval(beta).dtype:
        raise TypeError(f"eigh_tridiagonal: diagonal and off-diagonal values must have the same dtype, got "
                        f"{aval(alpha).dtype} and {aval(beta).dtype}")
    if aval(alpha).dtype not in tuple(map(np.dtype, ("float32", "float64", "complex64", "complex128"))):
        raise TypeError(f"eigh_tridiagonal: needs float32, float64, complex64 or complex128 inputs, got "
                        f"{aval(alpha).dtype}")
    n = aval(alpha).shape[0]
    if aval(alpha).ndim != 1 or aval(beta).shape != (max(n - 1, 0),):
        raise ValueError(f"eigh_tridiagonal: needs d of shape (n,) and e of shape (n - 1,), got {aval(alpha).shape} "
                         f"and {aval(beta).shape}")
    if select == "a":
        targets, picked = np.arange(n, dtype=np.int32), slice(None)
    elif select == "i":
        if select_range is None:
            raise ValueError("eigh_tridiagonal: for select='i', select_range must be specified")
        lo, hi = int(select_range[0]), int(select_range[1])
        if lo > hi:
            raise ValueError(f"eigh_tridiagonal: empty index range in select_range {select_range}")
        targets, picked = np.arange(lo, hi + 1, dtype=np.int32), slice(lo, hi + 1)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal: select='v' is not implemented, as in JAX")
    else:
        raise ValueError(f"eigh_tridiagonal: select must be 'a', 'i' or 'v', got {select!r}")
    if n <= 1:
        w = tnp.real(alpha)
        return w if eigvals_only else (w, tnp.eye(n, dtype=aval(alpha).dtype))
    if aval(alpha).dtype.kind == "c":
        beta_sq = tnp.real(beta * tnp.conj(beta))
        beta_abs = tnp.sqrt(beta_sq)
    else:
        beta_abs, beta_sq = tnp.abs(beta), tnp.square(beta)
    w = _bisection(tnp.real(alpha), beta_abs, beta_sq, targets, tol)
    if eigvals_only:
        return w
    matrix = tnp.diag(tnp.real(alpha).astype(aval(alpha).dtype)) + tnp.diag(beta, 1) + tnp.diag(tnp.conj(beta), -1)
    return w, tla.eigh(matrix)[1][:, picked]
