"""jax.scipy.linalg.eigh_tridiagonal: the eigenvalues of a Hermitian tridiagonal matrix by bisection on Sturm
sequence counts, as JAX's (all of them, or those with indices in select_range), every interval halved at once until
the widest is within eps * |T| (or tol); the eigenvectors by JAX's inverse iteration: random unit vectors (from
`key`, by default key(42): tracejit.random draws JAX's numbers) solved against T - w I with perturbed pivots
(tridiagonal_solve's perturb_singular) up to 5 times while their norms still grow by 10%, those of eigenvalues
closer than sqrt(eps) |T| made orthonormal (QR) after each step, as LAPACK's stein does."""
import numpy as np

from .. import lax, random
from .. import numpy as tnp
from ..lax import linalg as lax_linalg
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


def _eigenvectors(alpha, beta, w, key):
    """JAX's inverse iteration for the eigenvalues w (ascending): rows of unit vectors."""
    n, k = aval(alpha).shape[0], aval(w).shape[0]
    dtype = np.result_type(aval(alpha).dtype, aval(beta).dtype)
    dl, du = tnp.pad(tnp.conj(beta), (1, 0)), tnp.pad(beta, (0, 1))
    gaptol = np.sqrt(np.finfo(aval(w).dtype).eps) * tnp.maximum(tnp.abs(w[0]), tnp.abs(w[-1]))
    close = (w[1:] - w[:-1]) < gaptol
    left, right = tnp.pad(close, (1, 0)), tnp.pad(close, (0, 1))
    # the clusters of close eigenvalues: [starts[i], ends[i]) for i < count
    starts = tnp.nonzero(~left & right, size=k // 2 + 1)[0]
    ends = tnp.nonzero(left & ~right, size=k // 2 + 1)[0] + 1
    count = tnp.sum(~left & right)
    rows = np.arange(k)

    def orthogonalize(v):
        def cluster(i, state):
            v, starts, ends = state
            start, end = starts[i], ends[i]
            block = lax.dynamic_slice(tnp.pad(v, ((0, k), (0, 0))), (start, 0), (k, n))
            mask = (rows < end - start).astype(dtype)[:, None]
            q = tla.qr((block * mask).T)[0].T * mask
            update = lax.dynamic_update_slice(tnp.zeros((2 * k, n), dtype), q, (start, 0))[:k]
            return tnp.where(((rows >= start) & (rows < end))[:, None], update, v), starts, ends
        # starts and ends ride in the state: eagerly they are NumPy arrays, which a traced i cannot index
        return lax.fori_loop(0, count, cluster, (v, starts, ends))[0]

    v = random.normal(key, (k, n), np.finfo(dtype).dtype).astype(dtype)
    v = v / tla.norm(v, axis=-1, keepdims=True).astype(dtype)
    shifted = (alpha[None, :] - w[:, None]).astype(dtype)
    lower, upper = tnp.broadcast_to(dl, (k, n)).astype(dtype), tnp.broadcast_to(du, (k, n)).astype(dtype)

    def step(state):
        i, v, norms, _ = state
        v_new = lax_linalg.tridiagonal_solve(lower, shifted, upper, v[:, :, None], perturb_singular=True)[..., 0]
        new_norms = tla.norm(v_new, axis=-1)
        return i + 1, orthogonalize(v_new / new_norms[:, None].astype(dtype)), new_norms, norms

    def growing(state):
        i, _, norms, old = state
        return tnp.logical_and(i < 5, tnp.any(norms >= 1.1 * old))

    real = aval(w).dtype
    return lax.while_loop(growing, step, (0, v, tnp.ones(k, real), tnp.zeros(k, real)))[1]


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None, key=None):
    """The eigenvalues (ascending) of the Hermitian tridiagonal matrix with diagonal d (its real part) and
    superdiagonal e (subdiagonal conj(e)): all (select 'a') or those with indices select_range[0] <= i <=
    select_range[1] ('i'); with eigvals_only=False also the eigenvectors in columns, by inverse iteration from random
    vectors drawn with `key` (default key(42), as JAX's). select 'v' is not implemented, as in JAX."""
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
        targets = np.arange(n, dtype=np.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("eigh_tridiagonal: for select='i', select_range must be specified")
        lo, hi = int(select_range[0]), int(select_range[1])
        if lo > hi:
            raise ValueError(f"eigh_tridiagonal: empty index range in select_range {select_range}")
        targets = np.arange(lo, hi + 1, dtype=np.int32)
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
    return w, _eigenvectors(tnp.real(alpha), beta, w, random.key(42) if key is None else key).T
