"""tracejit.scipy.sparse.linalg against jax.scipy.sparse.linalg: cg on a symmetric positive definite system (matrix
and function, x0, preconditioners, a pytree right-hand side, a small maxiter, float32), under jit and vmap, its
gradients with respect to b and to the matrix against jax.grad, bicgstab on a nonsymmetric system, and the
errors JAX raises."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.scipy.sparse import linalg as L

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import jax.scipy.sparse.linalg as JL

N = 20
rng = np.random.default_rng(0)
Q = rng.normal(size=(N, N))
A = Q @ Q.T / N + np.eye(N) * 0.5          # symmetric positive definite, moderately conditioned
B = A + rng.normal(size=(N, N)) * 0.1       # nonsymmetric
b = rng.normal(size=N)
x0 = rng.normal(size=N)
P = np.diag(1 / np.diag(A))                 # Jacobi preconditioner
TOL = {"rtol": 1e-9, "atol": 1e-11}


def close(got, want, **tol):
    tj.tree_util.tree_map(lambda g, w: np.testing.assert_allclose(g, np.asarray(w), **(tol or TOL)), got, want)


def test_public_path():
    import tracejit.scipy.sparse.linalg as public
    assert tj.scipy.sparse.linalg.cg is public.cg is L.cg
    assert tj.scipy.sparse.linalg.__all__ == ["bicgstab", "cg"]


@pytest.mark.parametrize("name", ["cg", "bicgstab"])
@pytest.mark.parametrize("case", ["matrix", "function", "x0", "M matrix", "M function", "maxiter"])
def test_against_jax(name, case):
    mat = A if name == "cg" else B
    kwargs = {"x0": {"x0": x0}, "M matrix": {"M": P}, "maxiter": {"maxiter": 3}}.get(case, {})
    ours = dict(kwargs, M=lambda v: tnp.dot(P, v)) if case == "M function" else kwargs
    theirs = dict(kwargs, M=lambda v: jnp.dot(P, v)) if case == "M function" else kwargs
    op = (lambda v: tnp.dot(mat, v), lambda v: jnp.dot(mat, v)) if case == "function" else (mat, mat)
    x, info = getattr(L, name)(op[0], b, tol=1e-10, **ours)
    want, _ = getattr(JL, name)(op[1], b, tol=1e-10, **theirs)
    assert info is None and isinstance(x, np.ndarray)
    close(x, want)
    if case != "maxiter":
        np.testing.assert_allclose(mat @ x, b, atol=1e-8)


def test_pytree_b():
    def matvec(lib):
        return lambda v: {"u": lib.dot(A[:10, :10], v["u"]) + lib.dot(A[:10, 10:], v["w"]),
                          "w": lib.dot(A[10:, :10], v["u"]) + lib.dot(A[10:, 10:], v["w"])}
    tree = {"u": b[:10], "w": b[10:]}
    x, _ = L.cg(matvec(tnp), tree, tol=1e-10)
    close(x, JL.cg(matvec(jnp), tree, tol=1e-10)[0])
    close(L.cg(matvec(tnp), tree, maxiter=2)[0], JL.cg(matvec(jnp), tree, maxiter=2)[0])


def test_float32_kept():
    a32, b32 = A.astype(np.float32), b.astype(np.float32)
    for name in ("cg", "bicgstab"):
        x, _ = getattr(L, name)(a32, b32)
        assert x.dtype == np.float32
        close(x, getattr(JL, name)(a32, b32)[0], rtol=1e-4, atol=1e-5)


def test_jit_and_vmap():
    f = tj.jit(lambda a, v: L.cg(a, v, tol=1e-10)[0])
    close(f(A, b), JL.cg(A, b, tol=1e-10)[0])
    bs = rng.normal(size=(3, N))
    want = jax.vmap(lambda v: JL.cg(A, v, tol=1e-10)[0])(bs)
    close(tj.vmap(lambda v: L.cg(A, v, tol=1e-10)[0])(bs), want)
    close(tj.jit(tj.vmap(lambda v: L.bicgstab(B, v, tol=1e-10)[0]))(bs),
          jax.vmap(lambda v: JL.bicgstab(B, v, tol=1e-10)[0])(bs))
    mats = A + np.arange(3)[:, None, None] * np.eye(N)
    close(tj.vmap(lambda a: L.cg(a, b, tol=1e-10)[0])(mats), jax.vmap(lambda a: JL.cg(a, b, tol=1e-10)[0])(mats))


@pytest.mark.parametrize("name, mat", [("cg", A), ("bicgstab", B)])
def test_gradients(name, mat):
    w = rng.normal(size=N)

    def loss(solve, lib):
        return lambda a, v: lib.sum(lib.sin(solve(a, v, tol=1e-12)[0]) * w)

    want = jax.grad(loss(getattr(JL, name), jnp), argnums=(0, 1))(mat, b)
    got = tj.grad(loss(getattr(L, name), tnp), argnums=(0, 1))(mat, b)
    close(got, want, rtol=1e-7, atol=1e-9)
    close(tj.jit(tj.grad(loss(getattr(L, name), tnp), argnums=(0, 1)))(mat, b), want, rtol=1e-7, atol=1e-9)


def test_gradient_through_function_operator():
    """A function closing over a traced matrix: the matrix's cotangent comes from differentiating A(x)."""
    def loss(solve, lib):
        return lambda a, v: lib.sum(solve(lambda u: lib.dot(a, u), v, tol=1e-12)[0] ** 2)
    want = jax.grad(loss(JL.cg, jnp), argnums=(0, 1))(A, b)
    close(tj.grad(loss(L.cg, tnp), argnums=(0, 1))(A, b), want, rtol=1e-7, atol=1e-9)


def test_errors():
    with pytest.raises(ValueError, match="square"):
        L.cg(np.ones((3, 4)), np.ones(3))
    with pytest.raises(ValueError, match="tree structure"):
        L.cg(A, b, x0=(x0,))
    with pytest.raises(ValueError, match="shapes"):
        L.cg(A, b, x0=x0[:3])
