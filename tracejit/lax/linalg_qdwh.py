"""qdwh: the polar decomposition by the QR-based dynamically weighted Halley iteration (Nakatsukasa, Bai and Gygi,
SIAM J. Matrix Anal. Appl. 31, 2010), as jax.lax.linalg.qdwh computes it. The weights (a, b, c) of each step depend
only on the lower bound l of the smallest singular value, which starts at eps and follows a fixed recurrence, so
they are computed in Python before tracing; steps with c > 100 use a QR factorization (stable for large c), later
ones a Cholesky factorization (cheaper), and Halley steps with the limit weights (3, 1, 3) continue while the iterate
still moves by more than (10 eps / 2)^(1/3) in Frobenius norm, up to max_iterations in all."""
import numpy as np

from .. import numpy as tnp
from ..numpy import linalg as tla
from ..numpy._base import asarray, aval
from ..numpy.indexing import take_clamped
from .control_flow import fori_loop, while_loop

_CHOLESKY_CUTOFF = 100


def _weights(eps, max_iterations):
    """The (a, b, c) of JAX's schedule: QR steps' weights, then Cholesky steps'."""
    qr_steps, chol_steps = [], []
    l, tol_l, k = eps, 10.0 * eps / 2.0, 0
    while l + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = l * l
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** 0.5
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** 0.5
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        l = l * (a + b * l2) / (1 + c * l2)
        (qr_steps if c > _CHOLESKY_CUTOFF else chol_steps).append((a, b, c))
    return qr_steps, chol_steps


def _qr_step(u, a, b, c):
    """u e + (a - e) / sqrt(c) Q1 Q2^H, with [sqrt(c) u; I] = [Q1; Q2] R and e = b / c."""
    m, n = aval(u).shape
    e = b / c
    y = tnp.concatenate([tnp.sqrt(c) * u, tnp.eye(n, dtype=aval(u).dtype)], axis=0)
    q, _ = tla.qr(y, mode="reduced")
    return e * u + (a - e) / tnp.sqrt(c) * (q[:m] @ tnp.conj(q[m:]).T)


def _cholesky_step(u, a, b, c):
    """u e + (a - e) u (I + c u^H u)^-1, by the Cholesky factor of I + c u^H u."""
    n = aval(u).shape[1]
    e = b / c
    x = c * (tnp.conj(u).T @ u) + tnp.eye(n, dtype=aval(u).dtype)
    factor = tla.cholesky(x)
    z = tla.solve(tnp.conj(factor).T, tla.solve(factor, tnp.conj(u).T))
    return e * u + (a - e) * tnp.conj(z).T


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """(u, h, num_iters, is_converged): x = u h with u having orthonormal columns and h Hermitian positive
    semi-definite, for a full-rank (m, n) matrix x with m >= n, by JAX's QDWH schedule; is_converged says whether
    the last Cholesky steps stopped moving within max_iterations (default 10). is_hermitian is unused, as in JAX;
    dynamic_shape (a padded matrix's true shape) is not implemented."""
    if dynamic_shape is not None:
        raise NotImplementedError("qdwh: dynamic_shape is not implemented")
    x = asarray(x)
    shape, dtype = aval(x).shape, aval(x).dtype
    if len(shape) != 2 or shape[0] < shape[1]:
        raise ValueError(f"qdwh: needs a matrix of shape (m, n) with m >= n, got shape {shape}")
    if dtype.kind not in "fc":
        raise TypeError(f"qdwh: needs a float or complex matrix, got {dtype}")
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    eps = float(np.finfo(dtype).eps) if eps is None else float(eps)
    tol_norm = (10.0 * eps / 2.0) ** (1 / 3)
    one, inf = tla.norm(x, 1), tla.norm(x, np.inf)
    scale = tnp.where(one == 0, 1, 1 / (tnp.sqrt(one) * tnp.sqrt(inf)))
    u = x * scale.astype(dtype)
    qr_steps, chol_steps = _weights(eps, max_iterations)

    def scheduled(step, steps, u, test):
        """The steps in a fori_loop; (u, whether the last step moved u by more than tol_norm, or True untested)."""
        if not steps:
            return u, tnp.asarray(True)
        table = np.asarray(steps, np.finfo(dtype).dtype)

        def body(i, state):
            prev, _ = state
            a, b, c = (take_clamped(table[:, j], i) for j in range(3))
            nxt = step(prev, a, b, c)
            return nxt, (tla.norm(nxt - prev) > tol_norm) if test else tnp.asarray(True)
        return fori_loop(0, len(steps), body, (u, tnp.asarray(True)))

    u, _ = scheduled(_qr_step, qr_steps, u, test=False)
    u, moving = scheduled(_cholesky_step, chol_steps, u, test=True)

    def halley(state):
        k, prev, _ = state
        nxt = _cholesky_step(prev, 3.0, 1.0, 3.0)
        return k + 1, nxt, tla.norm(nxt - prev) > tol_norm

    start = len(qr_steps) + len(chol_steps)
    num_iters, u, moving = while_loop(lambda s: tnp.logical_and(s[2], s[0] < max_iterations), halley,
                                      (tnp.asarray(start), u, moving))
    u = 1.5 * u - 0.5 * u @ (tnp.conj(u).T @ u)
    h = tnp.conj(u).T @ x
    h = (h + tnp.conj(h).T) / 2
    return u, h, num_iters, tnp.logical_not(moving)
