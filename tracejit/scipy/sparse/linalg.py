"""tracejit.scipy.sparse.linalg: jax.scipy.sparse.linalg's iterative solvers, cg and bicgstab.

A is a square matrix or a linear function; b and x0 are arrays or pytrees of arrays. Each solve is one while_loop
with JAX's (SciPy's non-legacy) stopping rule, |r|^2 <= max(tol^2 |b|^2, atol^2), and default maxiter, 10 times
the size of b. Derivatives are implicit, by lax.custom_linear_solve (as JAX's), not taken through the loop: for
x = A^-1 b and g = A^-T x_bar, b gets g, and the values A closes over (a traced matrix, or the traced values a
function A closes over) get the cotangent of A(x) at -g, so a matrix gets -g x^T. x0 and the preconditioner M get
none (as in JAX). Reverse mode only: jvp of a solve is refused, as for every custom_vjp function. Both solves must
converge for the gradient to be accurate.
"""
import functools

import numpy as np

from ... import numpy as tnp
from ...lax import while_loop
from ...lax.linear_solve import custom_linear_solve
from ...tree_util import tree_leaves, tree_map, tree_structure

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


def _isolve(solve, A, b, x0, *, tol, atol, maxiter, M, symmetric):
    """The checks and defaults the solvers share, then the solve with its implicit derivative."""
    b = tree_map(tnp.asarray, b)
    x0 = tree_map(tnp.zeros_like, b) if x0 is None else x0
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {tree_structure(x0)} vs {tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs {_shapes(b)}")
    x0 = tree_map(lambda x, ref: tnp.asarray(x, ref.dtype), x0, b)
    if maxiter is None:
        maxiter = 10 * sum(int(np.prod(s)) for s in _shapes(b))   # SciPy's default
    precond = _as_operator(M, "M") if M is not None else (lambda v: v)

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


__all__ = ["bicgstab", "cg"]
