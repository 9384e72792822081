"""tracejit.scipy.sparse.linalg: jax.scipy.sparse.linalg's iterative solvers, cg, bicgstab and gmres.

A is a square matrix or a linear function; b and x0 are arrays or pytrees of arrays. cg and bicgstab are one
while_loop each with JAX's (SciPy's non-legacy) stopping rule, |r|^2 <= max(tol^2 |b|^2, atol^2); gmres is JAX's
restarted GMRES (a loop of restarts around a loop building each Krylov space). maxiter defaults to 10 times the
size of b. Derivatives are implicit, by lax.custom_linear_solve (as JAX's), not taken through the loops: for
x = A^-1 b, the tangent is A^-1 (b' - A' x), and for g = A^-T x_bar, b gets g and the values A closes over (a
traced matrix, or the traced values a function A closes over) get the cotangent of A(x) at -g, so a matrix gets
-g x^T. x0 and the preconditioner M get none (as in JAX). So jvp, jacfwd, grad and vmap all work; the solves
they add must converge for the derivatives to be accurate.
"""
import functools
import operator

import numpy as np

from ... import lax
from ... import numpy as tnp
from ...lax import fori_loop, while_loop
from ...lax.linear_solve import custom_linear_solve
from ...tree_util import tree_leaves, tree_map, tree_structure
from ..linalg import solve, solve_triangular

# --------------------------------------------------------------------------------------- pytree arithmetic


def _real_dot(x, y):
    """Re <x, y> over all leaves: the forms CG and the stopping rule take are Hermitian, so real by design."""
    def leaf(a, b):
        out = tnp.vdot(tnp.real(a), tnp.real(b))
        return out + tnp.vdot(tnp.imag(a), tnp.imag(b)) if tnp.iscomplexobj(a) or tnp.iscomplexobj(b) else out
    return sum(leaf(a, b) for a, b in zip(tree_leaves(x), tree_leaves(y)))


def _dot(x, y):
    """<x, y> = sum of conj(x) y over all leaves (BiCGSTAB's inner product)."""
    return sum(tnp.vdot(a, b) for a, b in zip(tree_leaves(x), tree_leaves(y)))


def _axpy(alpha, x, y):
    """alpha x + y, leaf by leaf."""
    return tree_map(lambda a, b: alpha * a + b, x, y)


def _sub(x, y):
    return tree_map(tnp.subtract, x, y)


def _add(x, y):
    return tree_map(tnp.add, x, y)


def _threshold(b, tol, atol):
    """The squared residual norm below which a solve stops."""
    return tnp.maximum(_real_dot(b, b) * tol ** 2, atol ** 2)


def _dtype(tree):
    return tnp.result_type(*tree_leaves(tree))

# ------------------------------------------------------------------------------------------------ solvers


def _cg_solve(A, M, b, x0, *, tol, atol, maxiter):
    """Preconditioned conjugate gradients; the carry is (x, r, gamma = <r, M r>, p, k)."""
    threshold = _threshold(b, tol, atol)
    r0 = _sub(b, A(x0))
    z0 = M(r0)
    dtype = _dtype(z0)

    def cond(state):
        _, r, _, _, k = state
        return (_real_dot(r, r) > threshold) & (k < maxiter)

    def body(state):
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / _real_dot(p, Ap).astype(dtype)
        r = _axpy(-alpha, Ap, r)
        z = M(r)
        gamma_next = _real_dot(r, z).astype(dtype)
        return _axpy(alpha, p, x), r, gamma_next, _axpy(gamma_next / gamma, p, z), k + 1

    init = (x0, r0, _real_dot(r0, z0).astype(dtype), z0, np.int32(0))
    return while_loop(cond, body, init)[0]


def _bicgstab_solve(A, M, b, x0, *, tol, atol, maxiter):
    """Preconditioned BiCGSTAB; the carry is (x, r, rhat, alpha, omega, rho, p, q, k), with k set negative on a
    breakdown (rho = 0: -10; alpha or omega = 0: -11), which stops the loop as JAX's does."""
    threshold = _threshold(b, tol, atol)
    r0 = _sub(b, A(x0))
    one = tnp.asarray(1, _dtype(b))

    def cond(state):
        r, k = state[1], state[-1]
        return (_real_dot(r, r) > threshold) & (k < maxiter) & (k >= 0)

    def body(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_next = _dot(rhat, r)
        beta = rho_next / rho * alpha / omega
        p = _axpy(beta, _axpy(-omega, q, p), r)
        phat = M(p)
        q = A(phat)
        alpha = rho_next / _dot(rhat, q)
        s = _axpy(-alpha, q, r)
        converged = _real_dot(s, s) < threshold      # s is small enough: the half step is the last
        shat = M(s)
        t = A(shat)
        omega = _dot(t, s) / _dot(t, t)
        x = tree_map(lambda xi, ph, sh: tnp.where(converged, xi + alpha * ph, xi + (alpha * ph + omega * sh)),
                     x, phat, shat)
        r = tree_map(lambda si, ti: tnp.where(converged, si, si - omega * ti), s, t)
        k = tnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        return x, r, rhat, alpha, omega, rho_next, p, q, tnp.where(rho_next == 0, -10, k)

    return while_loop(cond, body, (x0, r0, r0, one, one, one, r0, r0, np.int32(0)))[0]


# ---------------------------------------------------------------------------------------------------- GMRES
# JAX's restarted GMRES, step for step, so that its results agree with JAX's to rounding. The Krylov basis of a
# leaf is an array with one more (last) axis of restart + 1 columns.


def _norm(x):
    return tnp.sqrt(_real_dot(x, x))


def _safe_normalize(x, thresh=None):
    """(x / |x|, |x|), or (0, 0) where |x| <= thresh (by default the dtype's epsilon)."""
    norm = _norm(x)
    dtype = _dtype(x)
    thresh = tnp.finfo(norm.dtype).eps if thresh is None else thresh
    use_norm = norm > tnp.real(tnp.asarray(thresh, dtype))
    scale = norm.astype(dtype)
    return tree_map(lambda y: tnp.where(use_norm, y / scale, 0.0), x), tnp.where(use_norm, norm, 0.0)


def _column(V, k):
    return tree_map(lambda X: X[..., k], V)


def _arnoldi_step(k, A, M, V, H):
    """Column k + 1 of the basis from M A V[k], orthogonalized against the basis, and row k of H its overlaps
    (its norm at k + 1); breakdown when that norm is 0 (an invariant subspace). JAX's iterated Gram-Schmidt with
    max_iterations=2 stops after its first pass, so this makes one."""
    dtype = _dtype(V)
    v = M(A(_column(V, k)))
    _, v_norm_0 = _safe_normalize(v)
    h = functools.reduce(operator.add, [tnp.tensordot(tnp.conj(X), y, axes=(tuple(range(y.ndim)),) * 2)
                                        for X, y in zip(tree_leaves(V), tree_leaves(v))])
    v = tree_map(lambda y, X: y - tnp.dot(X, h), v, V)
    unit_v, v_norm_1 = _safe_normalize(v, thresh=tnp.finfo(dtype).eps * v_norm_0)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)
    H = H.at[k, :].set(h.at[k + 1].set(v_norm_1.astype(dtype)))
    return V, H, v_norm_1 == 0.0


def _rotate(H, i, cs, sn):
    x, y = H[i], H[i + 1]
    return H.at[i].set(tnp.conj(cs) * x - tnp.conj(sn) * y).at[i + 1].set(sn * x + cs * y)


def _givens(a, b):
    """(cs, sn) of the rotation that zeroes b against a."""
    a_lt_b = tnp.abs(a) < tnp.abs(b)
    t = -tnp.where(a_lt_b, a, b) / tnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + tnp.abs(t) ** 2).astype(t.dtype)
    b_zero = tnp.abs(b) == 0
    return tnp.where(b_zero, 1, tnp.where(a_lt_b, r * t, r)), tnp.where(b_zero, 0, tnp.where(a_lt_b, r, r * t))


def _basis(unit_residual, restart):
    return tree_map(lambda x: tnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)), unit_residual)


def _restart_end(A, M, b, x0, V, y):
    """x0 plus the basis combination y, and its preconditioned residual, normalized."""
    x = _add(x0, tree_map(lambda X: tnp.dot(X[..., :-1], y), V))
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def _gmres_incremental(A, M, b, x0, unit_residual, residual_norm, ptol, restart):
    """One restart, QR-factorizing the Hessenberg matrix by Givens rotations as it grows, so that the residual
    norm is known at each step and the restart ends early below ptol."""
    dtype = _dtype(b)
    beta = tnp.zeros(restart + 1, dtype).at[0].set(residual_norm.astype(dtype))

    def cond(carry):
        return (carry[0] < restart) & (carry[1] > ptol)

    def step(carry):
        k, _, V, R, beta, givens = carry
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        row = fori_loop(0, k, lambda i, row: _rotate(row, i, givens[i, 0], givens[i, 1]), H[k, :])
        cs, sn = _givens(row[k], row[k + 1])
        givens = givens.at[k, :].set(tnp.stack([cs, sn]))
        beta = _rotate(beta, k, cs, sn)
        return k + 1, tnp.abs(beta[k + 1]), V, R.at[k, :].set(_rotate(row, k, cs, sn)), beta, givens

    init = (np.int32(0), residual_norm, _basis(unit_residual, restart), tnp.eye(restart, restart + 1, dtype=dtype),
            beta, tnp.zeros((restart, 2), dtype))
    _, _, V, R, beta, _ = while_loop(cond, step, init)
    y = solve_triangular(R[:, :-1].T, beta[:-1])
    return _restart_end(A, M, b, x0, V, y)


def _gmres_batched(A, M, b, x0, unit_residual, residual_norm, ptol, restart):
    """One restart building the whole Krylov basis (unless it breaks down), then the least squares problem of
    the Hessenberg matrix by its normal equations."""
    dtype = _dtype(b)

    def step(carry):
        V, H, _, k = carry
        return *_arnoldi_step(k, A, M, V, H), k + 1

    init = (_basis(unit_residual, restart), tnp.eye(restart, restart + 1, dtype=dtype), tnp.asarray(False),
            np.int32(0))
    V, H, _, _ = while_loop(lambda c: (c[3] < restart) & ~c[2], step, init)
    beta = tnp.zeros(restart + 1, dtype).at[0].set(residual_norm.astype(dtype))
    a = H.T
    y = solve(tnp.dot(tnp.conj(a.T), a), tnp.dot(tnp.conj(a.T), beta), assume_a="pos")
    return _restart_end(A, M, b, x0, V, y)


def _gmres_solve(A, M, b, x0, *, atol, ptol, restart, maxiter, restart_step):
    """Restarts from the last solution while the preconditioned residual norm is above atol."""
    unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x0))))

    def body(carry):
        x, k, unit_residual, residual_norm = carry
        x, unit_residual, residual_norm = restart_step(A, M, b, x, unit_residual, residual_norm, ptol, restart)
        return x, k + 1, unit_residual, residual_norm

    return while_loop(lambda c: (c[1] < maxiter) & (c[3] > atol), body,
                      (x0, np.int32(0), unit_residual, residual_norm))[0]


def _as_operator(A, what):
    """A function computing A v from a matrix (checked square) or a function, as JAX's normalisation."""
    if callable(A):
        return A
    shape = getattr(A, "shape", None)
    if shape is None or not hasattr(A, "__matmul__"):
        raise TypeError(f"{what} must be either a function or ndarray: {A}")
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"linear operator must be a square matrix, but has shape: {shape}")
    return functools.partial(tnp.dot, A)


def _shapes(tree):
    return [np.shape(leaf) for leaf in tree_leaves(tree)]


def _prepared(b, x0, maxiter, M):
    """The checks and defaults the solvers share: (b, x0, maxiter, preconditioner)."""
    b = tree_map(tnp.asarray, b)
    x0 = tree_map(tnp.zeros_like, b) if x0 is None else x0
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {tree_structure(x0)} vs {tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs {_shapes(b)}")
    x0 = tree_map(lambda x, ref: tnp.asarray(x, ref.dtype), x0, b)
    if maxiter is None:
        maxiter = 10 * sum(int(np.prod(s)) for s in _shapes(b))   # SciPy's default
    return b, x0, maxiter, (_as_operator(M, "M") if M is not None else (lambda v: v))


def _isolve(solve, A, b, x0, *, tol, atol, maxiter, M, symmetric):
    """cg's and bicgstab's solve with its implicit derivative."""
    b, x0, maxiter, precond = _prepared(b, x0, maxiter, M)

    def isolve(matvec, rhs):      # also the transposed solve (matvec then A's transpose), from the same x0
        return solve(matvec, precond, rhs, x0, tol=tol, atol=atol, maxiter=maxiter)
    symmetric = symmetric and not any(tnp.iscomplexobj(leaf) for leaf in tree_leaves(b))
    return custom_linear_solve(_as_operator(A, "A"), b, isolve, transpose_solve=isolve, symmetric=symmetric), None


def cg(A, b, x0=None, *, tol=1e-05, atol=0.0, maxiter=None, M=None):
    """(x, None) with A x = b by conjugate gradients, as jax.scipy.sparse.linalg.cg: A (a matrix or a function)
    must be Hermitian positive definite, and the gradient's solve uses A itself when b is real."""
    return _isolve(_cg_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M, symmetric=True)


def bicgstab(A, b, x0=None, *, tol=1e-05, atol=0.0, maxiter=None, M=None):
    """(x, None) with A x = b by BiCGSTAB, as jax.scipy.sparse.linalg.bicgstab: A need not be symmetric; the
    gradient's solve uses A's transpose (a function A's is found by differentiating it)."""
    return _isolve(_bicgstab_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M, symmetric=False)


def gmres(A, b, x0=None, *, tol=1e-05, atol=0.0, restart=20, maxiter=None, M=None, solve_method="batched"):
    """(x, info) with A x = b by restarted GMRES, as jax.scipy.sparse.linalg.gmres: Krylov spaces of dimension
    `restart` (at most the size of b), rebuilt from the last solution at most maxiter times (10 times the size
    of b by default) until the preconditioned residual norm is at most max(tol |b|, atol). solve_method
    'batched' solves each restart's least squares problem at its end, 'incremental' by Givens rotations as the
    space grows (ending a restart early). info is -1 where x has a NaN, else 0. A need not be symmetric; the
    gradient's solve uses A's transpose with the same tolerances."""
    if solve_method not in ("incremental", "batched"):
        raise ValueError(f"invalid solve_method {solve_method}, must be either 'incremental' or 'batched'")
    b, x0, maxiter, precond = _prepared(b, x0, maxiter, M)
    restart = min(restart, sum(int(np.prod(s)) for s in _shapes(b)))
    b_norm = _norm(b)
    atol = tnp.maximum(tol * b_norm, atol)
    ptol = _norm(precond(b)) * tnp.minimum(1.0, atol / b_norm)
    restart_step = _gmres_incremental if solve_method == "incremental" else _gmres_batched

    def gmres_solve(matvec, rhs):      # also the transposed solve, with the same x0 and tolerances (as JAX's)
        return _gmres_solve(matvec, precond, rhs, x0, atol=atol, ptol=ptol, restart=restart, maxiter=maxiter,
                            restart_step=restart_step)
    x = custom_linear_solve(_as_operator(A, "A"), b, gmres_solve, transpose_solve=gmres_solve)
    return x, tnp.where(tnp.isnan(_norm(x)), -1, 0)


__all__ = ["bicgstab", "cg", "gmres"]
