"""tracejit.scipy.linalg's polar, expm_frechet, qr_multiply and the matrix constructors pascal, invpascal, invhilbert
and fiedler_companion, and tracejit.lax.linalg's qdwh, symmetric_product and cholesky_update, against JAX's and
SciPy's: values and dtypes, eagerly, compiled and batched, and derivatives where JAX takes them."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.core.errors import ShapeError
from tracejit.lax import linalg as tl
from tracejit.scipy import linalg as tsl
from tracejit.test_util import check_grads

jax = pytest.importorskip("jax", reason="compared with jax.scipy.linalg (pip install 'tracejit[test]')")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import scipy.linalg as sl

R = np.random.default_rng(5)
TALL, WIDE, SQUARE = R.normal(size=(5, 3)), R.normal(size=(3, 5)), R.normal(size=(2, 4, 4))


def close(got, want, tol=1e-10):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_polar_and_qdwh_as_jax_and_scipy():
    want = jax.jit(jax.lax.linalg.qdwh)(TALL)     # JAX's iteration: the same steps, so the same count
    for got in (tl.qdwh(TALL), tj.jit(tl.qdwh)(TALL)):
        for g, w in zip(got, want):
            close(g, w, 1e-10)
    u32 = tl.qdwh(TALL.astype(np.float32))[0]
    assert u32.dtype == np.float32
    np.testing.assert_allclose(u32, want[0], atol=1e-5)
    # the polar decomposition of a full-rank matrix is unique: QDWH's (JAX's default) and the SVD's are SciPy's
    cases = [(TALL, "right", "qdwh"), (WIDE, "left", "qdwh"), (WIDE, "right", "svd"), (TALL, "left", "svd")]
    for a, side, method in cases:      # (compiled: qdwh above)
        want = sl.polar(a, side)
        got = tsl.polar(a, side, method=method)
        close(got[0], want[0], 1e-10)
        close(got[1], want[1], 1e-10)
    for method in ("qdwh", "svd"):       # batched
        for side in ("right", "left") if method == "svd" else ("right",):
            u, p = tsl.polar(SQUARE, side, method=method)
            for k in range(2):
                want = sl.polar(SQUARE[k], side)
                close(u[k], want[0], 1e-10)
                close(p[k], want[1], 1e-10)
    # forward mode through QDWH's loops (reverse mode through its while_loop is refused, as JAX's): the polar
    # factors are unique, so their tangents are the SVD method's, which match JAX's (test below)
    tangent = R.normal(size=TALL.shape)
    for got, want in zip(tj.jvp(tsl.polar, (TALL,), (tangent,))[1],
                         tj.jvp(lambda a: tsl.polar(a, method="svd"), (TALL,), (tangent,))[1]):
        close(got, want, 1e-9)
    with pytest.raises(NotImplementedError, match="qdwh"):
        tsl.polar(WIDE)
    with pytest.raises(ValueError, match="side"):
        tsl.polar(TALL, "top")
    with pytest.raises(ValueError, match="m >= n"):
        tl.qdwh(WIDE)


def test_polar_svd_derivatives_as_jax():
    def loss(M, polar):
        def f(a):
            u, p = polar(a, method="svd")
            return M.sum(M.sin(u)) + M.sum(p * p)
        return f
    x = TALL
    got = tj.jit(tj.grad(loss(tnp, tsl.polar)))(x)
    want = jax.jit(jax.grad(loss(jnp, jsl.polar)))(x)
    close(got, want, 1e-9)


def test_expm_frechet_as_scipy_and_batched():
    a, e = SQUARE * 0.5, R.normal(size=(2, 4, 4))
    for got in (tsl.expm_frechet(a, e), tj.jit(tsl.expm_frechet)(a, e)):
        for k in range(2):
            value, derivative = sl.expm_frechet(a[k], e[k])
            close(got[0][k], value, 1e-12)
            close(got[1][k], derivative, 1e-12)
    close(tsl.expm_frechet(a[0], e[0], compute_expm=False), sl.expm_frechet(a[0], e[0], compute_expm=False), 1e-12)
    # differentiable again (a jvp of expm's jvp; JAX's too): both modes against finite differences
    check_grads(lambda a: tsl.expm_frechet(a, e[0], compute_expm=False), (a[0],), order=1)
    with pytest.raises(ValueError, match="same shape"):
        tsl.expm_frechet(a[0], e[0, :3, :3])


def test_qr_multiply_as_jax():
    c_right, c_left = R.normal(size=(2, 5)), R.normal(size=(3, 2))

    def calls(qr_multiply):
        def run(a, cr, cl):
            return [qr_multiply(a, c, mode=mode, conjugate=conj) for c, mode in ((cr, "right"), (cl, "left"),
                                                                                  (cr[0], "right"), (cl[:, 0], "left"))
                    for conj in (False, True)]
        return run
    want = jax.jit(calls(jsl.qr_multiply))(TALL, c_right, c_left)
    for got in (calls(tsl.qr_multiply)(TALL, c_right, c_left), tj.jit(calls(tsl.qr_multiply))(TALL, c_right, c_left)):
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            close(g, w, 1e-12)
    with pytest.raises(ValueError, match="columns"):
        tsl.qr_multiply(TALL, np.ones((2, 4)))
    with pytest.raises(NotImplementedError, match="pivoting"):
        tsl.qr_multiply(TALL, c_right, pivoting=True)


def test_symmetric_product_and_cholesky_update_as_jax():
    c = SQUARE + np.swapaxes(SQUARE, -1, -2)
    a = R.normal(size=(2, 4, 3))
    r = np.linalg.cholesky(TALL.T @ TALL + np.eye(3)).T
    w = R.normal(size=3)

    def calls(lin):
        return lambda a, c, r, w: (lin.symmetric_product(a, c, alpha=2.0, beta=-0.5),
                                   lin.symmetric_product(a, c, symmetrize_output=True), lin.cholesky_update(r, w))
    want = jax.jit(calls(jax.lax.linalg))(a, c, r, w)
    for got in (calls(tl)(a, c, r, w), tj.jit(calls(tl))(a, c, r, w)):
        for g, x in zip(got, want):
            close(g, x, 1e-12)
    updated = tl.cholesky_update(r, w)
    close(updated.T @ updated, r.T @ r + np.outer(w, w), 1e-12)
    with pytest.raises(ShapeError, match="cholesky_update"):
        tl.cholesky_update(r, np.ones(4))


def test_matrix_constructors_as_scipy_with_jax_dtypes():
    # JAX's dtypes (SciPy's are integers): pascal float32 always, the others the default float (float64 with x64)
    assert tsl.pascal(3).dtype == np.float32 and tsl.invpascal(3).dtype == tsl.invhilbert(3).dtype == np.float64
    for n in (0, 1, 4, 6):
        for kind in (None, "lower", "upper"):
            np.testing.assert_array_equal(tsl.pascal(n, kind), sl.pascal(n, kind or "symmetric"))
            np.testing.assert_array_equal(tsl.invpascal(n, kind), sl.invpascal(n, kind or "symmetric"))
        np.testing.assert_allclose(tsl.invhilbert(n), sl.invhilbert(n), rtol=1e-12)
    with pytest.raises(ValueError, match="kind"):
        tsl.pascal(3, "diagonal")
    coeffs = np.array([[2.0, 3, 4, 5, 6, 7], [1.0, -10, 31, -30, 1, 2]])
    got = tj.jit(tsl.fiedler_companion)(coeffs)
    for k in range(2):
        np.testing.assert_allclose(got[k], sl.fiedler_companion(coeffs[k]), rtol=1e-14)
    close(tsl.fiedler_companion(np.array([1, -3, 2])), sl.fiedler_companion(np.array([1.0, -3, 2])))
    assert tsl.fiedler_companion(np.array([2.0])).shape == (0, 0)
    check_grads(lambda a: tnp.sum(tnp.sin(tsl.fiedler_companion(a))), (coeffs[0],), order=1)
