"""The Schur and Hessenberg decompositions (tracejit.lax.linalg.schur, hessenberg, householder_product; LAPACK's gees,
gehrd, orgqr) and the scipy.linalg functions built on them (schur, rsf2csf, sqrtm, funm, solve_sylvester,
hessenberg) against JAX's and SciPy's: values and dtypes, eagerly, compiled and under vmap; the decompositions have
no derivative (as in JAX), and the functions differentiate where only their linear parts are traced."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.lax import linalg as tl
from tracejit.scipy import linalg as tsl

jax = pytest.importorskip("jax", reason="compared with jax.scipy.linalg (pip install 'tracejit[test]')")
jax.config.update("jax_enable_x64", True)
import jax.scipy.linalg as jsl
import scipy.linalg as sl

R = np.random.default_rng(11)
A = R.normal(size=(2, 4, 4))
Z = A + 1j * R.normal(size=A.shape)


def close(got, want, tol=1e-10):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("x", [A, Z, A.astype(np.float32)], ids=["f64", "c128", "f32"])
def test_lax_schur_and_hessenberg_as_jax(x):
    tol = 1e-5 if x.dtype == np.float32 else 1e-12
    want = jax.jit(lambda x: (jax.lax.linalg.schur(x), jax.lax.linalg.schur(x, compute_schur_vectors=False),
                              jax.lax.linalg.hessenberg(x)))(x)

    def ours(x):
        return tl.schur(x), tl.schur(x, compute_schur_vectors=False), tl.hessenberg(x)
    for got in (ours(x), tj.jit(ours)(x), tj.vmap(ours)(x)):
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            close(g, w, tol)
    t, q = ours(x)[0]
    close(q @ t @ np.conj(np.swapaxes(q, -1, -2)), x, 1e-4 if x.dtype == np.float32 else 1e-12)


def test_householder_product_as_jax():
    packed, taus = tl.hessenberg(A)
    reflectors = R.normal(size=(2, 5, 3))
    want = jax.jit(lambda p, t, r: (jax.lax.linalg.householder_product(p[..., 1:, :-1], t),
                                    jax.lax.linalg.householder_product(r, r[..., 0, :2])))(packed, taus, reflectors)
    for fn in (lambda p, t, r: (tl.householder_product(p[..., 1:, :-1], t), tl.householder_product(r, r[..., 0, :2])),):
        for got in (fn(packed, taus, reflectors), tj.jit(fn)(packed, taus, reflectors),
                    tj.vmap(fn)(packed, taus, reflectors)):
            for g, w in zip(got, want):
                close(g, w, 1e-12)
    with pytest.raises(ValueError, match="m >= n"):
        tl.householder_product(np.ones((2, 3)), np.ones(1))


def test_no_derivatives_and_unsupported_options_as_jax():
    with pytest.raises(NotImplementedError, match="schur"):
        tj.grad(lambda x: tnp.sum(tl.schur(x)[0]))(A[0])
    with pytest.raises(NotImplementedError, match="hessenberg"):
        tj.jvp(lambda x: tl.hessenberg(x)[0], (A[0],), (A[1],))
    with pytest.raises(NotImplementedError, match="sort_eig_vals"):
        tl.schur(A[0], sort_eig_vals=True)
    with pytest.raises(ValueError, match="n, n"):
        tl.schur(np.ones((2, 3)))


def test_scipy_schur_rsf2csf_and_hessenberg_as_scipy_and_jax():
    a = A[0]
    want = jax.jit(lambda a: (jsl.schur(a), jsl.schur(a, output="complex"), jsl.hessenberg(a, calc_q=True)))(a)

    def ours(a):
        return tsl.schur(a), tsl.schur(a, output="complex"), tsl.hessenberg(a, calc_q=True), tsl.rsf2csf(*tsl.schur(A))
    for got in (ours(a), tj.jit(ours)(a)):
        for g, w in zip(jax.tree_util.tree_leaves(got[:3]), jax.tree_util.tree_leaves(want)):
            close(g, w, 1e-12)
        for k in range(2):      # rsf2csf batched, as SciPy's one matrix at a time
            for g, w in zip((x[k] for x in got[3]), sl.rsf2csf(*sl.schur(A[k]))):
                close(g, w, 1e-12)
    t, z = ours(a)[3]
    close(z @ t @ np.conj(np.swapaxes(z, -1, -2)), A.astype(complex), 1e-12)
    assert np.allclose(np.tril(t, -1), 0)
    close(tsl.hessenberg(a), sl.hessenberg(a), 1e-12)
    with pytest.raises(ValueError, match="output"):
        tsl.schur(a, output="upper")


def test_sqrtm_and_funm_as_scipy():
    a = A[0]
    pos = a @ a.T + np.eye(4)

    def ours(a, p):
        return tsl.sqrtm(a), tsl.sqrtm(p), tsl.funm(a, tnp.sin), tsl.funm(a, tnp.exp, disp=False)
    for got in (ours(a, pos), tj.jit(ours)(a, pos)):
        assert got[0].dtype == got[1].dtype == np.complex128       # as JAX's (SciPy's is real where it can be)
        np.testing.assert_allclose(got[0], sl.sqrtm(a), atol=1e-12)
        np.testing.assert_allclose(got[0] @ got[0], a, atol=1e-12)
        np.testing.assert_allclose(got[1], sl.sqrtm(pos), atol=1e-12)
        close(got[2], sl.funm(a, np.sin).astype(complex), 1e-10)
        err = sl.funm(a, np.exp, disp=False)[1]
        np.testing.assert_allclose(got[3][0], sl.expm(a), atol=1e-10)
        np.testing.assert_allclose(got[3][1], err, rtol=1e-6)
    with pytest.raises(NotImplementedError, match="blocksize"):
        tsl.sqrtm(a, blocksize=2)
    with pytest.raises(NotImplementedError, match="schur"):
        tj.grad(lambda a: tnp.sum(tnp.real(tsl.sqrtm(a))))(pos)


def test_solve_sylvester_as_scipy_with_its_gradient_in_c():
    a, b = A[0], R.normal(size=(2, 3, 3))
    c = R.normal(size=(2, 4, 3))

    def ours(a, b, c):
        return (tsl.solve_sylvester(a, b, c), tsl.solve_sylvester(a, b, c, method="eigen"),
                tj.grad(lambda c: tnp.sum(tnp.sin(tsl.solve_sylvester(a, b[0], c))))(c[0]))
    for got in (ours(a, b, c), tj.jit(ours)(a, b, c)):
        for k in range(2):
            close(got[0][k], sl.solve_sylvester(a, b[k], c[k]), 1e-10)
            close(got[1][k], sl.solve_sylvester(a, b[k], c[k]), 1e-10)
        # the gradient of sum(sin(X)) in C: the adjoint equation A^T G + G B^T = cos(X)
        x = sl.solve_sylvester(a, b[0], c[0])
        close(got[2], sl.solve_sylvester(a.T, b[0].T, np.cos(x)), 1e-10)
    zc = c[0] + 1j * R.normal(size=(4, 3))
    x = tsl.solve_sylvester(a, b[0], zc)       # SciPy 1.x's result is wrong for real A, B with a complex C
    close(a @ x + x @ b[0], zc, 1e-10)
    with np.errstate(invalid="ignore", divide="ignore"):     # eagerly, NumPy's warnings for the singular solve
        assert np.isnan(tsl.solve_sylvester(np.eye(2), -np.eye(2), np.ones((2, 2)))).all()
    with pytest.raises(ValueError, match="method"):
        tsl.solve_sylvester(a, b[0], c[0], method="bartels")
