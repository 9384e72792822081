"""tracejit.lax's late additions beyond what test_against_jax.py compares: the implicit derivatives of
custom_linear_solve and custom_root (against closed forms, finite differences and JAX), reduce_precision against
NumPy's float16 and ml_dtypes' bfloat16 casts, mulhi against Python's integers, the vmap collectives against
their definitions, and the errors."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.test_util import check_grads

R = np.random.default_rng(11)
A = np.eye(3) * 4 + R.normal(size=(3, 3)) * 0.3
B = R.normal(size=3)
W = R.normal(size=3)


def _solve(A, b, symmetric=False, transpose=True):
    solve = tnp.linalg.solve
    return lax.custom_linear_solve(lambda v: A @ v, b, lambda mv, r: solve(A, r),
                                   (lambda vm, r: solve(A.T, r)) if transpose else None, symmetric=symmetric)


def test_custom_linear_solve_gradients_are_implicit():
    """d(w.x)/db = A^-T w and d(w.x)/dA = -(A^-T w) x^T, under grad, jit(grad) and vmap(grad); a pytree b and a
    solve with aux (a while_loop, not differentiable itself) under the symmetric default."""
    g, x = np.linalg.solve(A.T, W), np.linalg.solve(A, B)
    loss = tj.grad(lambda A, b: tnp.dot(W, _solve(A, b)), (0, 1))
    for dA, db in (loss(A, B), tj.jit(loss)(A, B)):
        np.testing.assert_allclose(db, g, rtol=1e-12)
        np.testing.assert_allclose(dA, -np.outer(g, x), rtol=1e-12)
    bs = R.normal(size=(2, 3))
    np.testing.assert_allclose(tj.vmap(lambda b: loss(A, b)[1])(bs), np.stack([g, g]), rtol=1e-12)

    S = A + A.T

    def iterate(mv, r):      # Jacobi steps to convergence, the residual as aux
        d = tnp.diag(S)
        x = lax.while_loop(lambda c: c[1] < 200, lambda c: (c[0] + (r["v"] - mv({"v": c[0]})["v"]) / d, c[1] + 1),
                           (r["v"] * 0, 0))[0]
        return {"v": x}, tnp.max(tnp.abs(mv({"v": x})["v"] - r["v"]))

    def sym(b):
        x, resid = lax.custom_linear_solve(lambda v: {"v": S @ v["v"]}, {"v": b}, iterate, symmetric=True,
                                           has_aux=True)
        return tnp.dot(W, x["v"]) + 0 * resid
    np.testing.assert_allclose(tj.grad(sym)(B), np.linalg.solve(S, W), rtol=1e-10)
    check_grads(lambda b: _solve(A * 1.0, b), (B,), order=1, modes=("rev",))


def test_custom_linear_solve_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)

    def f(M, A, b):      # matvec depends on A nonlinearly (through sin)
        shifted = A + M.numpy.sin(A[0, 0]) * M.numpy.eye(3)
        x = M.lax.custom_linear_solve(lambda v: A @ v + M.numpy.sin(A[0, 0]) * v, b,
                                      lambda mv, r: M.numpy.linalg.solve(shifted, r),
                                      lambda vm, r: M.numpy.linalg.solve(shifted.T, r))
        return (x * W).sum()
    want = jax.grad(lambda A, b: f(jax, A, b), (0, 1))(A, B)
    got = tj.grad(lambda A, b: f(tj, A, b), (0, 1))(A, B)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12)


def test_custom_linear_solve_errors():
    with pytest.raises(TypeError, match="transpose_solve required"):
        tj.grad(lambda b: _solve(A, b, transpose=False).sum())(B)
    np.testing.assert_allclose(tj.grad(lambda b: _solve(A, b, symmetric=True, transpose=False).sum())(B),
                               np.linalg.solve(A, np.ones(3)))      # symmetric: solve is its own transpose
    np.testing.assert_allclose(tj.jvp(lambda b: _solve(A, b, transpose=False), (B,), (W,))[1],
                               np.linalg.solve(A, W), rtol=1e-12)      # forward mode needs no transpose_solve
    with pytest.raises(ValueError, match="matvec.. output shapes must match b"):
        lax.custom_linear_solve(lambda v: v[:2], B, lambda mv, r: r)


def _root(a):
    def newton(f, x0):
        return lax.fori_loop(0, 40, lambda i, x: x - f(x) / (3 * x ** 2 + a), x0)
    return lax.custom_root(lambda x: x ** 3 + a * x - 2.0, tnp.ones_like(a), newton,
                           lambda g, y: y / g(tnp.ones_like(y)))


def test_custom_root_derivatives():
    """x(a) with x^3 + a x = 2: dx/da = -x / (3 x^2 + a) (jvp, grad, under jit and vmap), second order by finite
    differences."""
    a = np.array([0.5, 1.5, 3.0])
    x = _root(a)
    np.testing.assert_allclose(x ** 3 + a * x, 2.0, rtol=1e-12)
    slope = -x / (3 * x ** 2 + a)
    np.testing.assert_allclose(tj.jvp(_root, (a,), (np.ones(3),))[1], slope, rtol=1e-12)
    np.testing.assert_allclose(tj.jit(tj.vmap(tj.grad(lambda s: _root(s)[()])))(a), slope, rtol=1e-12)
    check_grads(_root, (a,), order=2, modes=("fwd", "rev"))


def test_reduce_precision_against_casts():
    """(5, 10) is float16 rounding and (8, 7) bfloat16 rounding (both to nearest even), except that results below
    the narrow format's smallest normal are flushed to signed zero; overflow is infinity, NaN stays NaN."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.concatenate([R.normal(size=300) * 10.0 ** R.integers(-4, 5, 300), [65519.0, 65520.0, -7e4, 1 + 2 ** -11]])
    x32 = x.astype(np.float32)
    overflowing = np.errstate(over="ignore")
    half, bf = lax.reduce_precision(x32, 5, 10), tj.jit(lambda v: lax.reduce_precision(v, 8, 7))(x32)
    with overflowing:
        want_half = x32.astype(np.float16).astype(np.float32)
    want_half[np.abs(want_half) < np.finfo(np.float16).tiny] = 0.0
    np.testing.assert_array_equal(half, want_half)
    np.testing.assert_array_equal(bf, x32.astype(ml_dtypes.bfloat16).astype(np.float32))
    edge = np.array([3e-5, -3e-5, np.nan, np.inf, 1e300], np.float64)
    out = lax.reduce_precision(edge, 5, 10)
    np.testing.assert_array_equal(np.signbit(out[:2]), [False, True])
    np.testing.assert_array_equal(out[:2], 0.0)
    assert np.isnan(out[2]) and out[3] == np.inf and out[4] == np.inf and out.dtype == np.float64
    # JAX's derivative rounds the cotangent the same way; forward mode is refused
    np.testing.assert_array_equal(tj.grad(lambda v: (lax.reduce_precision(v, 5, 10) * 1.0001).sum())(np.ones(2)),
                                  lax.reduce_precision(np.full(2, 1.0001), 5, 10))
    with pytest.raises(TypeError, match="forward-mode"):
        tj.jvp(lambda v: lax.reduce_precision(v, 5, 10), (np.ones(2),), (np.ones(2),))
    with pytest.raises(ValueError, match="exponent_bits must be positive"):
        lax.reduce_precision(x, 0, 3)
    with pytest.raises(ValueError, match="mantissa_bits must be non-negative"):
        lax.reduce_precision(x, 5, -1)
    with pytest.raises(TypeError, match="floating-point"):
        lax.reduce_precision(np.arange(3), 5, 10)


def test_mulhi_against_python_integers():
    for dt in (np.int64, np.uint64, np.int16):
        info = np.iinfo(dt)
        edges = np.array([info.min, info.max, info.max, info.min, 1], dt)
        x = np.concatenate([R.integers(info.min, info.max, 64, dtype=dt, endpoint=True), edges])
        y = np.concatenate([R.integers(info.min, info.max, 64, dtype=dt, endpoint=True), edges[::-1]])
        bits = 8 * np.dtype(dt).itemsize
        want = np.array([(int(a) * int(b)) >> bits for a, b in zip(x, y)], dt)    # (floor: the high half)
        np.testing.assert_array_equal(tj.jit(lax.mulhi)(x, y), want)
    with pytest.raises(TypeError, match="integer"):
        lax.mulhi(np.ones(2), np.ones(2))


def test_approx_k_and_helpers():
    x = R.normal(size=(3, 7))
    vals, idx = tj.vmap(lambda r: lax.approx_min_k(r, 2))(x)
    np.testing.assert_array_equal(idx, np.argsort(x, axis=1)[:, :2])
    np.testing.assert_array_equal(vals, np.sort(x, axis=1)[:, :2])
    assert idx.dtype == np.int32
    with pytest.raises(ValueError, match="floating"):
        lax.approx_max_k(np.arange(4), 2)
    with pytest.raises(ValueError, match="k must be"):
        lax.approx_max_k(x, 8)
    m = np.arange(6).reshape(2, 3)
    with pytest.raises(TypeError, match="one entry per axis"):
        lax.tile(m, (2,))
    with pytest.raises(TypeError, match="one shape and dtype"):
        lax.stack([m, m * 1.0])
    with pytest.raises(TypeError, match="sorted"):
        lax.index_take(np.ones((2, 3)), (np.array([0]), np.array([1])), (1, 0))
    with pytest.raises(ValueError, match="'cpu' platform"):
        lax.platform_dependent(1.0, tpu=lambda v: v)
    with pytest.raises(ValueError, match="cuda"):
        lax.platform_dependent(1.0, gpu=lambda v: v)
    assert lax.broadcast_shapes((2, 1), (1, 3), (3,)) == (2, 3)
    assert lax.dtype(1) == np.int64 and lax.dtype(np.float32) == np.float32 and lax.dtype(True) == np.bool_
    assert lax.empty(2, np.int8).dtype == np.int8


def test_collectives_over_a_vmap_axis():
    """Definitions: ppermute/pshuffle move rows; psum_scatter keeps a block of the sum; all_to_all(x)[i] holds
    block i of every x[j]; gradients flow back through the moves (jit of grad of vmap)."""
    x = R.normal(size=(4, 4, 2))

    def moves(x):
        vm = lambda f: tj.vmap(f, axis_name="i")(x)
        return (vm(lambda v: lax.ppermute(v, "i", [(0, 2), (2, 0), (1, 3)])),
                vm(lambda v: lax.pshuffle(v, "i", [1, 2, 3, 0])),
                vm(lambda v: lax.psum_scatter(v, "i")),
                vm(lambda v: lax.all_to_all(v, "i", 0, 1)),
                vm(lambda v: lax.all_to_all(v, "i", 0, 0, tiled=True)),
                vm(lambda v: lax.pswapaxes(v, "i", 0)))
    pp, ps, sc, a2a, tiled, swap = tj.jit(moves)(x)
    np.testing.assert_array_equal(pp, np.stack([x[2], np.zeros((4, 2)), x[0], x[1]]))
    np.testing.assert_array_equal(ps, x[[1, 2, 3, 0]])
    np.testing.assert_allclose(sc, x.sum(0), rtol=1e-12)
    np.testing.assert_array_equal(a2a, np.transpose(x, (1, 2, 0)))
    np.testing.assert_array_equal(tiled, np.transpose(x, (1, 0, 2)))
    np.testing.assert_array_equal(swap, np.transpose(x, (1, 0, 2)))
    weights = R.normal(size=(4, 4, 2))
    grad = tj.jit(tj.grad(lambda x: (tj.vmap(lambda v: lax.pshuffle(v, "i", [1, 2, 3, 0]), axis_name="i")(x)
                                     * weights).sum()))(x)
    np.testing.assert_array_equal(grad, weights[[3, 0, 1, 2]])
    vm = lambda f: tj.vmap(f, axis_name="i")(x)
    with pytest.raises(ValueError, match="unique"):
        vm(lambda v: lax.ppermute(v, "i", [(0, 1), (2, 1)]))
    with pytest.raises(ValueError, match="in \\[0, 4\\)"):
        vm(lambda v: lax.ppermute(v, "i", [(0, 4)]))
    with pytest.raises(ValueError, match="permutation"):
        vm(lambda v: lax.pshuffle(v, "i", [0, 0, 1, 2]))
    with pytest.raises(ValueError, match="all_to_all requires"):
        vm(lambda v: lax.all_to_all(v, "i", 1, 0))
    with pytest.raises(ValueError, match="psum_scatter"):
        vm(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1))
    with pytest.raises(NameError):
        lax.ppermute(x, "j", [(0, 1)])


def test_ragged_dot_and_patches():
    """ragged_dot by its definition (rows past the groups are zero; inf in another group's rhs stays out);
    patches hold each window channel-major; a local convolution with equal kernels everywhere is a convolution."""
    lhs, rhs, sizes = R.normal(size=(6, 3)), R.normal(size=(3, 3, 2)), np.array([2, 0, 3], np.int32)
    rhs[1] = np.inf
    out = tj.jit(lax.ragged_dot)(lhs, rhs, sizes)
    want = np.concatenate([lhs[:2] @ rhs[0], lhs[2:5] @ rhs[2], np.zeros((1, 2))])
    np.testing.assert_allclose(out, want, rtol=1e-12)
    with pytest.raises(TypeError, match="group_sizes"):
        lax.ragged_dot(lhs, rhs, np.array([1.0, 2.0, 3.0]))
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(lhs, rhs, sizes, group_offset=np.array([0]))
    x = R.normal(size=(1, 2, 4, 3))
    p = lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID")
    np.testing.assert_array_equal(p[0, :, 1, 0], x[0, :, 1:3, 0:2].reshape(-1))
    k = R.normal(size=(5, 2, 2, 2))
    local = lax.conv_general_dilated_local(x, np.broadcast_to(k.reshape(5, 8, 1, 1), (5, 8, 3, 2)), (1, 1), "VALID",
                                           (2, 2))
    np.testing.assert_allclose(local, lax.conv_general_dilated(x, k, (1, 1), "VALID"), rtol=1e-12)


def test_random_gamma_grad_and_pbroadcast():
    """random_gamma_grad(a, x) is d/da of the Gamma(a) quantile at x's level (central differences of SciPy's
    gammaincinv); pbroadcast copies one example's value to all."""
    special = pytest.importorskip("scipy.special")
    a, u, h = np.array([0.5, 2.0, 7.5]), np.array([0.3, 0.6, 0.9]), 1e-6
    x = special.gammaincinv(a, u)
    slope = (special.gammaincinv(a + h, u) - special.gammaincinv(a - h, u)) / (2 * h)
    np.testing.assert_allclose(tj.jit(lax.random_gamma_grad)(a, x), slope, rtol=1e-6)
    v = R.normal(size=(3, 2))
    np.testing.assert_array_equal(tj.vmap(lambda r: lax.pbroadcast(r, "i", 1), axis_name="i")(v), v[[1, 1, 1]])
    with pytest.raises(ValueError, match="source"):
        tj.vmap(lambda r: lax.pbroadcast(r, "i", 3), axis_name="i")(v)
    assert lax.round(2.5, lax.RoundingMethod.TO_NEAREST_EVEN) == 2.0
