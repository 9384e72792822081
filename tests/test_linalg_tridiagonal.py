"""tracejit.lax.linalg.tridiagonal_solve and tridiagonal, and tracejit.scipy.linalg.eigh_tridiagonal, against JAX
and SciPy: values and dtypes, eagerly, compiled (LAPACK's gtsv and sytrd) and under vmap; tridiagonal_solve's
derivatives against JAX's (jvp and grad through all four operands)."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.core.errors import ShapeError
from tracejit.lax import linalg as tl
from tracejit.scipy import linalg as tsl

jax = pytest.importorskip("jax", reason="compared with jax.lax.linalg (pip install 'tracejit[test]')")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import scipy.linalg as sl

R = np.random.default_rng(7)


def diagonals(m, batch=(), dtype=np.float64):
    out = [R.normal(size=batch + (m,)) for _ in range(3)]
    if np.dtype(dtype).kind == "c":
        out = [x + 1j * R.normal(size=x.shape) for x in out]
    return [x.astype(dtype) for x in out]


def dense(dl, d, du):
    return np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_tridiagonal_solve_as_jax_eager_compiled_and_batched(dtype):
    dl, d, du = diagonals(6, (2,), dtype)
    b = R.normal(size=(2, 6, 3)).astype(dtype)
    want = np.asarray(jax.lax.linalg.tridiagonal_solve(dl, d, du, b))
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for got in (tl.tridiagonal_solve(dl, d, du, b), tj.jit(tl.tridiagonal_solve)(dl, d, du, b),
                tj.vmap(tl.tridiagonal_solve)(dl, d, du, b), tj.jit(tj.vmap(tl.tridiagonal_solve))(dl, d, du, b)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.linalg.solve(dense(dl[1], d[1], du[1]), b[1]), want[1], rtol=tol, atol=tol)


def test_tridiagonal_solve_pivots_singular_systems_and_b_alone_batched():
    # a zero diagonal needs row interchanges (gtsv's partial pivoting); eager and compiled agree with JAX
    dl, d, du = np.array([0.0, 1.0, 2.0, 1.0]), np.array([0.0, 0.0, 3.0, 1.0]), np.array([1.0, 2.0, 1.0, 0.0])
    b = R.normal(size=(4, 2))
    want = np.asarray(jax.lax.linalg.tridiagonal_solve(dl, d, du, b))
    np.testing.assert_allclose(tl.tridiagonal_solve(dl, d, du, b), want, rtol=1e-12)
    np.testing.assert_allclose(tj.jit(tl.tridiagonal_solve)(dl, d, du, b), want, rtol=1e-12)
    singular = np.zeros(4)
    assert np.isnan(tl.tridiagonal_solve(singular, singular, singular, b)).all()
    assert np.isnan(tj.jit(tl.tridiagonal_solve)(singular, singular, singular, b)).all()
    assert np.isnan(jax.lax.linalg.tridiagonal_solve(singular, singular, singular, b)).all()
    bs = R.normal(size=(5, 4, 2))
    got = tj.vmap(tl.tridiagonal_solve, in_axes=(None, None, None, 0))(dl, d, du, bs)
    np.testing.assert_allclose(got, np.stack([np.linalg.solve(dense(dl, d, du), x) for x in bs]), rtol=1e-10)


def _derivatives(M, solve, grad, jvp, vmap):
    """grad of a loss in all four operands, a jvp in all four, and vmap of grad in b alone: one program per library."""
    def run(dl, d, du, b, tangents, bs):
        grads = grad(lambda dl, d, du, b: M.sum(M.sin(solve(dl, d, du, b)) * b), argnums=(0, 1, 2, 3))(dl, d, du, b)
        tangent = jvp(lambda *a: solve(*a), (dl, d, du, b), tuple(tangents))[1]
        batched = vmap(grad(lambda b: M.sum(solve(dl, d, du, b) ** 2)))(bs)
        return grads, tangent, batched
    return run


def test_tridiagonal_solve_derivatives_as_jax():
    dl, d, du = diagonals(5)
    args = (dl, d + 3.0, du, R.normal(size=(5, 2)), diagonals(5) + [R.normal(size=(5, 2))], R.normal(size=(3, 5, 2)))
    got = tj.jit(_derivatives(tnp, tl.tridiagonal_solve, tj.grad, tj.jvp, tj.vmap))(*args)
    want = jax.jit(_derivatives(jnp, jax.lax.linalg.tridiagonal_solve, jax.grad, jax.jvp, jax.vmap))(*args)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    eager = _derivatives(tnp, tl.tridiagonal_solve, tj.grad, tj.jvp, tj.vmap)(*args)
    for g, w in zip(jax.tree_util.tree_leaves(eager), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_tridiagonal_solve_with_perturbed_pivots_as_jax():
    # singular and nearly singular systems (shifted by an eigenvalue, as inverse iteration does), complex, float32
    ones = np.ones(6)
    shift = np.linalg.eigvalsh(np.diag(ones * 0.3) + np.diag(ones[1:], 1) + np.diag(ones[1:], -1))[2]
    dls, ds, dus = (np.stack(x) for x in zip(diagonals(6), (ones, 0.3 - shift + 0 * ones, ones),
                                              (ones, 0 * ones, ones), (0 * ones, 0 * ones, 0 * ones)))
    b = R.normal(size=(4, 6, 2))
    z = [x + 0.5j for x in diagonals(6)]
    # (float32: a random system; a float32 solve of one singular to roundoff agrees with JAX's only in direction)
    cases = [(dls, ds, dus, b), tuple(z) + (b[0] + 0j,), tuple(diagonals(6, dtype=np.float32)) + (b[1].astype(np.float32),)]

    def solve(*a):
        return tl.tridiagonal_solve(*a, perturb_singular=True)
    want = jax.jit(lambda cases: [jax.lax.linalg.tridiagonal_solve(*c, perturb_singular=True) for c in cases])(cases)
    for c, w in zip(cases, want):
        for got in (solve(*c), tj.jit(solve)(*c)):
            assert got.dtype == w.dtype and np.isfinite(got).all()
            np.testing.assert_allclose(got, w, rtol=1e-10 if got.dtype != np.float32 else 1e-5)
    np.testing.assert_allclose(tj.vmap(solve)(*cases[0]), want[0], rtol=1e-10)
    np.testing.assert_allclose(solve(*cases[0])[0], tl.tridiagonal_solve(*(x[0] for x in cases[0])), rtol=1e-10)


def test_tridiagonal_solve_errors():
    dl, d, du = diagonals(4)
    with pytest.raises(ShapeError, match="tridiagonal_solve"):
        tl.tridiagonal_solve(dl[:3], d, du, np.ones((4, 1)))
    with pytest.raises(ShapeError, match="tridiagonal_solve"):
        tl.tridiagonal_solve(dl, d, du, np.ones((5, 1)))
    with pytest.raises(TypeError, match="one dtype"):
        tl.tridiagonal_solve(dl.astype(np.float32), d, du, np.ones((4, 1)))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
def test_tridiagonal_reduction_as_jax(dtype):
    a = R.normal(size=(2, 5, 5)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * R.normal(size=a.shape)
    a = a + np.conj(np.swapaxes(a, -1, -2))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    both = jax.jit(lambda x: (jax.lax.linalg.tridiagonal(x), jax.lax.linalg.tridiagonal(x, lower=False)))(a)
    for lower, want in zip((True, False), both):
        for got in (tl.tridiagonal(a, lower=lower), tj.jit(lambda x, lower=lower: tl.tridiagonal(x, lower=lower))(a),
                    tj.vmap(lambda x, lower=lower: tl.tridiagonal(x, lower=lower))(a)):
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    with pytest.raises(NotImplementedError, match="tridiagonal"):
        tj.grad(lambda x: tnp.sum(tl.tridiagonal(x)[1]))(a[0])


def test_eigh_tridiagonal_as_jax_and_scipy():
    d, e = R.normal(size=7), R.normal(size=6)
    want = sl.eigh_tridiagonal(d, e, eigvals_only=True)
    # JAX's eigenvectors come from inverse iteration from key(42)'s normal draws, which tracejit.random repeats
    jax_w, jax_v = jax.jit(jax.scipy.linalg.eigh_tridiagonal)(d, e)
    w, v = tsl.eigh_tridiagonal(d, e)
    close = {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_array_equal(w, jax_w)
    np.testing.assert_allclose(v, jax_v, **close)
    np.testing.assert_allclose(w, want, **close)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    np.testing.assert_allclose(t @ v, v * w, **close)
    some = tj.jit(lambda d, e: tsl.eigh_tridiagonal(d, e, select="i", select_range=(2, 4)))(d, e)
    np.testing.assert_allclose(some[0], want[2:5], **close)
    np.testing.assert_allclose(np.abs(some[1]), np.abs(v[:, 2:5]), **close)     # other random starts: signs
    f32 = tsl.eigh_tridiagonal(d.astype(np.float32), e.astype(np.float32), eigvals_only=True)
    assert f32.dtype == np.float32
    np.testing.assert_allclose(f32, want, rtol=1e-5, atol=1e-5)
    # complex: the vectors of a Hermitian matrix up to a phase each (roundoff sets the phase of a tiny pivot)
    z = e + 1j * R.normal(size=6)
    t = np.diag(d) + np.diag(z, 1) + np.diag(np.conj(z), -1)
    w, v = tsl.eigh_tridiagonal(d.astype(complex), z)
    np.testing.assert_allclose(w, sl.eigvalsh(t), **close)
    np.testing.assert_allclose(t @ v, v * w, **close)
    np.testing.assert_allclose(np.conj(v).T @ v, np.eye(7), **close)
    # a cluster of equal eigenvalues (two copies of one block): orthonormalized vectors
    d2, e2 = np.tile([1.0, 2.0, 3.0], 2), np.array([0.5, 0.5, 0.0, 0.5, 0.5])
    w, v = tsl.eigh_tridiagonal(d2, e2)
    np.testing.assert_allclose(v.T @ v, np.eye(6), **close)
    t = np.diag(d2) + np.diag(e2, 1) + np.diag(e2, -1)
    np.testing.assert_allclose(t @ v, v * w, **close)
    with pytest.raises(NotImplementedError, match="select='v'"):
        tsl.eigh_tridiagonal(d, e, select="v", select_range=(0.0, 1.0))
    with pytest.raises(TypeError, match="same dtype"):
        tsl.eigh_tridiagonal(d, e.astype(np.float32))
