"""tracejit.scipy.sparse.linalg against jax.scipy.sparse.linalg: cg on a symmetric positive definite system (matrix
and function, x0, preconditioners, a pytree right-hand side, a small maxiter, float32), under jit and vmap, its
derivatives (jvp, jacfwd, linearize, grad) with respect to b and to the matrix against JAX's, bicgstab and gmres
(both solve methods, restarts, complex) on a nonsymmetric system, finite differences, and the errors JAX
raises."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.scipy.sparse import linalg as L
from tracejit.test_util import check_grads

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
    assert tj.scipy.sparse.linalg.__all__ == ["bicgstab", "cg", "gmres"]


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


GMRES_CASES = {"matrix": {}, "function": {}, "x0": {"x0": x0}, "M matrix": {"M": P}, "M function": {},
               "restart 3": {"restart": 3}, "restart 4 maxiter 2": {"restart": 4, "maxiter": 2}, "tol": {"tol": 1e-12},
               "atol": {"atol": 1e-3}}


@pytest.mark.parametrize("method, case", [("batched", c) for c in ("matrix", "function", "M function", "restart 4 maxiter 2",
                                                                   "tol")]
                         + [("incremental", c) for c in ("x0", "M matrix", "restart 3", "restart 4 maxiter 2", "atol")])
def test_gmres_against_jax(method, case):
    """The same iterates as JAX's GMRES: equal to rounding even where a restart or maxiter stops it early."""
    kwargs = GMRES_CASES[case]
    ours = dict(kwargs, M=lambda v: tnp.dot(P, v)) if case == "M function" else kwargs
    theirs = dict(kwargs, M=lambda v: jnp.dot(P, v)) if case == "M function" else kwargs
    op = (lambda v: tnp.dot(B, v), lambda v: jnp.dot(B, v)) if case == "function" else (B, B)
    x, info = L.gmres(op[0], b, solve_method=method, **ours)
    want, want_info = JL.gmres(op[1], b, solve_method=method, **theirs)
    close(x, want, rtol=1e-12, atol=1e-13)
    assert info == want_info == 0 and info.dtype == want_info.dtype
    close(tj.jit(lambda v: L.gmres(op[0], v, solve_method=method, **ours)[0])(b), want, rtol=1e-12, atol=1e-13)
    if case in ("matrix", "tol"):
        np.testing.assert_allclose(B @ x, b, atol=1e-4 * np.linalg.norm(b))


def test_gmres_pytree_complex_and_float32():
    def matvec(lib):
        return lambda v: {"u": lib.dot(B[:10, :10], v["u"]) + lib.dot(B[:10, 10:], v["w"]),
                          "w": lib.dot(B[10:, :10], v["u"]) + lib.dot(B[10:, 10:], v["w"])}
    tree = {"u": b[:10], "w": b[10:]}
    for method in ("batched", "incremental"):
        close(L.gmres(matvec(tnp), tree, restart=6, solve_method=method)[0],
              JL.gmres(matvec(jnp), tree, restart=6, solve_method=method)[0], rtol=1e-12, atol=1e-13)
        C = B + 1j * rng.normal(size=(N, N)) * 0.1
        bc = b + 1j * x0
        close(L.gmres(C, bc, solve_method=method)[0], JL.gmres(C, bc, solve_method=method)[0], rtol=1e-11,
              atol=1e-12)
    x32 = L.gmres(B.astype(np.float32), b.astype(np.float32))[0]
    assert x32.dtype == np.float32
    close(x32, JL.gmres(B.astype(np.float32), b.astype(np.float32))[0], rtol=1e-4, atol=1e-5)
    nan_x0 = np.full(N, np.nan)       # (a NaN residual has norm 0: no restart runs, x is x0)
    x, info = L.gmres(B, b, x0=nan_x0)
    want, want_info = JL.gmres(B, b, x0=nan_x0)
    assert info == want_info == -1 and np.isnan(x).all() and np.isnan(want).all()


SOLVERS = [("cg", A, {}), ("bicgstab", B, {}), ("gmres", B, {}),
           ("gmres", B, {"solve_method": "incremental", "restart": 10})]


@pytest.mark.parametrize("name, mat, kw", SOLVERS)
def test_forward_mode(name, mat, kw):
    """jvp (also for a function A closing over the matrix) and linearize under jit against JAX's jvp (x' =
    A^-1 (b' - A' x), one more solve), jacfwd and vmap(jvp) in b against A^-1."""
    def solve(lib, mod, use_function=False):
        def f(a, v):
            op = (lambda u: lib.dot(a, u)) if use_function else a
            return getattr(mod, name)(op, v, tol=1e-12, **kw)[0]
        return f
    ta, tb, tbs = rng.normal(size=(N, N)), rng.normal(size=N), rng.normal(size=(3, N))
    f, g = solve(tnp, L), solve(jnp, JL)
    x, x_dot = jax.jvp(g, (mat, b), (ta, tb))
    jac_b = np.linalg.inv(mat)
    tol = {"rtol": 1e-8, "atol": 1e-10}
    for fun in (f, solve(tnp, L, use_function=True)):
        close(tj.jit(lambda a, v, t, u, fun=fun: tj.jvp(fun, (a, v), (t, u)))(mat, b, ta, tb), (x, x_dot), **tol)
    close(tj.jit(tj.jacfwd(f, 1))(mat, b), jac_b, **tol)
    close(tj.jit(lambda a, v, t, u: tj.linearize(f, a, v)[1](t, u))(mat, b, ta, tb), x_dot, **tol)
    close(tj.jit(tj.vmap(lambda t: tj.jvp(f, (mat, b), (ta, t))[1]))(tbs),
          x_dot + (tbs - tb) @ jac_b.T, **tol)


def test_finite_differences():
    small = A[:5, :5] + np.eye(5)
    check_grads(lambda a, v: L.cg(a, v, tol=1e-13)[0], (small, b[:5]), order=1, modes=("fwd", "rev"))
    check_grads(lambda a, v: L.gmres(a, v, tol=1e-13)[0], (small + np.triu(small), b[:5]), order=1,
                modes=("fwd", "rev"))


@pytest.mark.parametrize("name, mat", [("cg", A), ("bicgstab", B), ("gmres", B)])
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
    with pytest.raises(ValueError, match="invalid solve_method qr, must be either 'incremental' or 'batched'"):
        L.gmres(B, b, solve_method="qr")
    with pytest.raises(ValueError, match="tree structure"):
        L.gmres(B, b, x0=(x0,))
