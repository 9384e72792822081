"""tracejit.numpy.linalg and tracejit.scipy.linalg (issue 18): values against NumPy and SciPy, eager and compiled,
in float32 and float64 and on stacks of matrices; derivatives against JAX and against finite differences to order
2; vmap against a loop; JAX's results on singular and non-positive-definite matrices; the NumPy fallback where
LAPACK lacks a routine; and the compiled loop over a batch staying in native code."""
import ctypes

import numpy as np
import pytest
import scipy.linalg as sla

import tracejit as tj
import tracejit.numpy as tnp
import tracejit.scipy.linalg as tsla
from tracejit.backend import blas, lapack
from tracejit.backend.steps import PythonStep
from tracejit.core.avals import Dim
from tracejit.test_util import check_grads

la = tnp.linalg
rng = np.random.default_rng(0)


def normal(*shape):
    return rng.standard_normal(shape)


def well_conditioned(*shape):
    """Square matrices (..., n, n) a unit from the identity's scale: comfortably invertible."""
    return normal(*shape) * 0.3 + 2 * np.eye(shape[-1])


def spd(*shape):
    """Symmetric positive definite matrices (..., n, n)."""
    a = normal(*shape)
    return a @ np.swapaxes(a, -1, -2) / shape[-1] + np.eye(shape[-1])


def sym(*shape):
    """Symmetric matrices with well separated eigenvalues."""
    q, _ = np.linalg.qr(normal(*shape))
    w = np.arange(1, shape[-1] + 1) * 1.5 - 2.0
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


A4, B4, S4, Y4 = well_conditioned(4, 4), normal(4, 2), spd(4, 4), sym(4, 4)
STACK, STACK_B, STACK_S = well_conditioned(3, 2, 4, 4), normal(3, 2, 4, 2), spd(3, 4, 4)
TALL, WIDE = normal(5, 3), normal(3, 5)

# name: (tracejit function, reference function, arguments); each is compared eager and compiled.
VALUES = {
    "solve": (la.solve, np.linalg.solve, (A4, B4)),
    "solve_vector": (la.solve, np.linalg.solve, (A4, B4[:, 0])),
    "solve_stack": (la.solve, np.linalg.solve, (STACK, STACK_B)),
    "solve_broadcast": (la.solve, np.linalg.solve, (A4, STACK_B)),
    "solve_12": (la.solve, np.linalg.solve, (well_conditioned(2, 12, 12), normal(2, 12, 3))),
    "inv": (la.inv, np.linalg.inv, (STACK,)),
    "inv_12": (la.inv, np.linalg.inv, (well_conditioned(12, 12),)),
    "det": (la.det, np.linalg.det, (STACK,)),
    "det_2": (la.det, np.linalg.det, (normal(3, 2, 2),)),
    "det_3": (la.det, np.linalg.det, (normal(3, 3),)),
    "slogdet": (lambda a: tuple(la.slogdet(a)), lambda a: tuple(np.linalg.slogdet(a)), (normal(3, 5, 5),)),
    "slogdet_1": (lambda a: tuple(la.slogdet(a)), lambda a: tuple(np.linalg.slogdet(a)), (normal(2, 1, 1),)),
    "cholesky": (la.cholesky, np.linalg.cholesky, (STACK_S,)),
    "cholesky_upper": (lambda a: la.cholesky(a, upper=True), lambda a: np.linalg.cholesky(a, upper=True), (S4,)),
    "qr": (lambda a: tuple(la.qr(a)), lambda a: tuple(np.linalg.qr(a)), (TALL,)),
    "qr_wide": (lambda a: tuple(la.qr(a)), lambda a: tuple(np.linalg.qr(a)), (WIDE,)),
    "qr_complete": (lambda a: tuple(la.qr(a, "complete")), lambda a: tuple(np.linalg.qr(a, "complete")),
                    (normal(2, 5, 3),)),
    "qr_r": (lambda a: la.qr(a, "r"), lambda a: np.linalg.qr(a, "r"), (WIDE,)),
    "eigh": (lambda a: tuple(la.eigh(a)), lambda a: tuple(np.linalg.eigh(a)), (np.stack([Y4, S4]),)),
    "eigh_upper": (lambda a: tuple(la.eigh(a, "U", symmetrize_input=False)),
                   lambda a: tuple(np.linalg.eigh(a, "U")), (np.triu(Y4),)),
    "eigvalsh": (la.eigvalsh, np.linalg.eigvalsh, (Y4,)),
    "svd": (lambda a: tuple(la.svd(a)), lambda a: tuple(np.linalg.svd(a)), (normal(2, 5, 3),)),
    "svd_reduced": (lambda a: tuple(la.svd(a, False)), lambda a: tuple(np.linalg.svd(a, False)), (WIDE,)),
    "svd_values": (lambda a: la.svd(a, compute_uv=False), lambda a: np.linalg.svd(a, compute_uv=False), (TALL,)),
    "svd_hermitian": (lambda a: la.svd(a, hermitian=True)[1], lambda a: np.linalg.svd(a, hermitian=True)[1], (Y4,)),
    "svdvals": (la.svdvals, np.linalg.svdvals, (TALL,)),
    "lstsq": (lambda a, b: tuple(la.lstsq(a, b)[:3]), lambda a, b: tuple(np.linalg.lstsq(a, b)[:3]),
              (normal(6, 3), normal(6, 2))),
    "pinv": (la.pinv, np.linalg.pinv, (TALL,)),
    "pinv_rank_deficient": (la.pinv, np.linalg.pinv, (np.outer(normal(4), normal(3)),)),
    "matrix_rank": (la.matrix_rank, np.linalg.matrix_rank, (np.outer(normal(4), normal(3)),)),
    "matrix_power": (lambda a: la.matrix_power(a, 5), lambda a: np.linalg.matrix_power(a, 5), (A4,)),
    "matrix_power_negative": (lambda a: la.matrix_power(a, -2), lambda a: np.linalg.matrix_power(a, -2), (STACK,)),
    "matrix_power_0": (lambda a: la.matrix_power(a, 0), lambda a: np.linalg.matrix_power(a, 0), (A4,)),
    "cond": (la.cond, np.linalg.cond, (STACK,)),
    "cond_fro": (lambda a: la.cond(a, "fro"), lambda a: np.linalg.cond(a, "fro"), (A4,)),
    "cond_-2": (lambda a: la.cond(a, -2), lambda a: np.linalg.cond(a, -2), (TALL,)),
    "tensorsolve": (la.tensorsolve, np.linalg.tensorsolve, (well_conditioned(6, 6).reshape(2, 3, 6), normal(2, 3))),
    "tensorinv": (la.tensorinv, np.linalg.tensorinv, (well_conditioned(6, 6).reshape(2, 3, 6),)),
    "multi_dot": (lambda *xs: la.multi_dot(xs), lambda *xs: np.linalg.multi_dot(xs),
                  (normal(3), normal(3, 7), normal(7, 2), normal(2, 4))),
    "cross": (la.cross, np.linalg.cross, (normal(4, 3), normal(4, 3))),
    "outer": (la.outer, np.linalg.outer, (normal(3), normal(4))),
    "trace": (la.trace, np.linalg.trace, (normal(2, 3, 3),)),
    "vector_norm": (lambda x: la.vector_norm(x, ord=3, axis=1), lambda x: np.linalg.vector_norm(x, ord=3, axis=1),
                    (normal(3, 4),)),
    "matrix_norm": (lambda x: la.matrix_norm(x, ord="nuc"), lambda x: np.linalg.matrix_norm(x, ord="nuc"),
                    (normal(2, 3, 4),)),
    # scipy.linalg
    "sp_cholesky": (tsla.cholesky, sla.cholesky, (S4,)),
    "sp_cholesky_lower": (lambda a: tsla.cholesky(a, lower=True), lambda a: sla.cholesky(a, lower=True), (S4,)),
    "sp_cho_solve": (lambda a, b: tsla.cho_solve(tsla.cho_factor(a), b),
                     lambda a, b: sla.cho_solve(sla.cho_factor(a), b), (S4, B4)),
    "sp_cho_solve_lower": (lambda a, b: tsla.cho_solve(tsla.cho_factor(a, lower=True), b),
                           lambda a, b: sla.cho_solve(sla.cho_factor(a, lower=True), b), (S4, B4[:, 0])),
    "sp_lu": (tsla.lu, sla.lu, (A4,)),
    "sp_lu_tall": (tsla.lu, sla.lu, (TALL,)),
    "sp_lu_wide": (lambda a: tsla.lu(a, permute_l=True), lambda a: sla.lu(a, permute_l=True), (WIDE,)),
    "sp_lu_factor": (tsla.lu_factor, sla.lu_factor, (normal(5, 5),)),
    "sp_lu_solve": (lambda a, b: tsla.lu_solve(tsla.lu_factor(a), b),
                    lambda a, b: sla.lu_solve(sla.lu_factor(a), b), (A4, B4)),
    "sp_lu_solve_trans": (lambda a, b: tsla.lu_solve(tsla.lu_factor(a), b, trans=1),
                          lambda a, b: sla.lu_solve(sla.lu_factor(a), b, trans=1), (A4, B4[:, 1])),
    "sp_solve_triangular": (lambda a, b: tsla.solve_triangular(a, b, lower=True),
                            lambda a, b: sla.solve_triangular(a, b, lower=True), (A4, B4)),
    "sp_solve_triangular_trans": (lambda a, b: tsla.solve_triangular(a, b, trans="T", unit_diagonal=True),
                                  lambda a, b: sla.solve_triangular(a, b, trans="T", unit_diagonal=True), (A4, B4)),
    "sp_solve": (tsla.solve, sla.solve, (A4, B4)),
    "sp_solve_pos": (lambda a, b: tsla.solve(a, b, assume_a="pos"), lambda a, b: sla.solve(a, b, assume_a="pos"),
                     (S4, B4)),
    "sp_expm": (tsla.expm, sla.expm, (normal(4, 4),)),
    "sp_expm_tiny": (tsla.expm, sla.expm, (normal(3, 3) * 0.01,)),
    "sp_expm_large": (tsla.expm, sla.expm, (normal(3, 3) * 3,)),
    "sp_expm_stack": (tsla.expm, lambda a: np.stack([sla.expm(m) for m in a]), (normal(2, 3, 3) * 0.5,)),
    "sp_expm_upper": (lambda a: tsla.expm(a, upper_triangular=True), sla.expm, (np.triu(normal(3, 3)),)),
    "sp_eigh": (tsla.eigh, np.linalg.eigh, (Y4,)),          # scipy's default driver picks other signs
    "sp_eigvals_only": (lambda a: tsla.eigh(a, eigvals_only=True), lambda a: sla.eigh(a, eigvals_only=True), (Y4,)),
    "sp_qr": (tsla.qr, sla.qr, (TALL,)),
    "sp_qr_economic": (lambda a: tsla.qr(a, mode="economic"), lambda a: sla.qr(a, mode="economic"), (TALL,)),
    "sp_qr_r": (lambda a: tsla.qr(a, mode="r"), lambda a: sla.qr(a, mode="r"), (WIDE,)),
    "sp_svd": (tsla.svd, sla.svd, (WIDE,)),
    "sp_det": (tsla.det, sla.det, (normal(5, 5),)),
    "sp_inv": (tsla.inv, sla.inv, (A4,)),
    "sp_block_diag": (tsla.block_diag, sla.block_diag, (A4, normal(3), np.ones((2, 3)), 3.0)),
}


def assert_close(got, want, rtol):
    got, want = (x if isinstance(x, tuple) else (x,) for x in (got, want))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("name", list(VALUES))
def test_values_against_numpy_and_scipy(name):
    fn, reference, args = VALUES[name]
    want = reference(*args)
    assert_close(fn(*args), want, 1e-10)
    assert_close(tj.jit(fn)(*args), want, 1e-10)


F32 = ["solve_stack", "inv", "det", "slogdet", "cholesky", "qr_complete", "eigh", "svd", "pinv", "lstsq",
       "sp_expm", "sp_cho_solve", "sp_lu_solve", "sp_solve_triangular", "solve_12"]


@pytest.mark.parametrize("name", F32)
def test_float32_stays_float32(name):
    fn, reference, args = VALUES[name]
    args32 = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args]
    got = tj.jit(fn)(*args32)
    for g in got if isinstance(got, tuple) else (got,):
        assert np.asarray(g).dtype in (np.float32, np.int32, np.int64), np.asarray(g).dtype   # lstsq: rank int32
    assert_close(got, reference(*args), 2e-4)


def test_norms_every_order_and_axis():
    """Every order and axis NumPy accepts, eager; a vector and a matrix norm of each kind compiled."""
    x = normal(3, 4, 5)
    cases = [(o, a, k) for o in (None, 0, 1, -1, 2, -2, 3, 0.5, np.inf, -np.inf) for a in (0, -1)
             for k in (False, True)]
    cases += [(o, a, k) for o in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf) for a in ((0, 1), (2, 0))
              for k in (False, True)]
    cases += [(o, None, False) for o in (None, "fro", 2, np.inf)]
    for ord_, axis, keepdims in cases:
        y = x[0] if axis is None and ord_ is not None else x
        np.testing.assert_allclose(la.norm(y, ord_, axis, keepdims), np.linalg.norm(y, ord_, axis, keepdims),
                                   rtol=1e-12, err_msg=f"ord={ord_} axis={axis}")
    compiled = tj.jit(la.norm, static_argnums=(1, 2, 3))
    for ord_, axis in [(3, 1), (-np.inf, 0), (0, -1), ("nuc", (2, 0)), (-1, (0, 1)), (np.inf, (2, 1))]:
        np.testing.assert_allclose(compiled(x, ord_, axis, True), np.linalg.norm(x, ord_, axis, True), rtol=1e-12)
    for bad in [{"ord": "fro", "axis": 0}, {"ord": 3, "axis": (0, 1)}, {"axis": (0, 1, 2), "ord": 1}]:
        with pytest.raises(ValueError):
            la.norm(x, **bad)

# ---------------------------------------------------------------------------------------------- derivatives


def eig_reconstruction(a, eigh=la.eigh, lib=tnp):
    """A function of eigh's eigenvectors that does not depend on their signs."""
    w, v = eigh(a)
    return (v * lib.sin(w)) @ v.T


def svd_reconstruction(a):
    u, s, vt = la.svd(a, full_matrices=False)
    return (u * tnp.sin(s)) @ vt


GRADS = {
    "cholesky": (la.cholesky, (S4,)),
    "solve": (la.solve, (A4, B4)),
    "inv": (la.inv, (A4,)),
    "det": (la.det, (normal(5, 5),)),
    "slogdet": (lambda a: la.slogdet(a)[1], (A4,)),
    "eigh": (eig_reconstruction, (Y4,)),
    "eigvalsh": (la.eigvalsh, (Y4,)),
    "svd": (svd_reconstruction, (TALL,)),
    "svd_wide": (svd_reconstruction, (WIDE,)),
    "svdvals": (la.svdvals, (TALL,)),
    "qr": (lambda a: tuple(la.qr(a)), (TALL,)),
    "qr_wide": (lambda a: tuple(la.qr(a)), (WIDE,)),
    "qr_complete": (lambda a: tuple(la.qr(a, "complete")), (TALL,)),
    "pinv": (la.pinv, (TALL,)),
    "lstsq": (lambda a, b: la.lstsq(a, b)[0], (normal(6, 3), normal(6))),
    "norm_nuc": (lambda x: la.norm(x, "nuc"), (TALL,)),
    "cond": (la.cond, (A4,)),
    "lu": (lambda a: tsla.lu(a)[1:], (A4,)),
    "lu_solve": (lambda a, b: tsla.lu_solve(tsla.lu_factor(a), b), (A4, B4)),
    "solve_triangular": (lambda a, b: tsla.solve_triangular(a, b, trans=1, lower=True), (A4, B4)),
    # cho_factor reads one triangle, and JAX's cholesky rule takes the tangent as symmetric: a symmetric input
    "cho_solve": (lambda a, b: tsla.cho_solve(tsla.cho_factor((a + a.T) / 2), b), (S4, B4)),
    "solve_pos": (lambda a, b: tsla.solve((a + a.T) / 2, b, assume_a="pos"), (S4, B4)),
    "expm": (tsla.expm, (normal(3, 3) * 0.5,)),
    "matrix_power": (lambda a: la.matrix_power(a, -3), (A4,)),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_check_grads_to_order_2(name):
    fn, args = GRADS[name]
    check_grads(fn, args, order=2)


try:
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsla
except ImportError:
    jax = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is not installed")

# name: (tracejit function, the same in JAX, arguments): their gradients of a random projection are compared.
AGAINST_JAX = {
    "cholesky": (la.cholesky, lambda a: jnp.linalg.cholesky(a), (S4,)),
    "solve": (la.solve, lambda a, b: jnp.linalg.solve(a, b), (A4, B4)),
    "det": (la.det, lambda a: jnp.linalg.det(a), (normal(5, 5),)),
    "slogdet": (lambda a: la.slogdet(a)[1], lambda a: jnp.linalg.slogdet(a)[1], (A4,)),
    "eigh": (eig_reconstruction, lambda a: eig_reconstruction(a, jnp.linalg.eigh, jnp), (Y4,)),
    "eigh_vectors": (lambda a: la.eigh(a)[1], lambda a: jnp.linalg.eigh(a)[1], (Y4,)),
    "eigvalsh": (la.eigvalsh, lambda a: jnp.linalg.eigvalsh(a), (Y4,)),
    "svd": (lambda a: tuple(la.svd(a, False)), lambda a: tuple(jnp.linalg.svd(a, False)), (TALL,)),
    "qr": (lambda a: tuple(la.qr(a, "complete")), lambda a: tuple(jnp.linalg.qr(a, "complete")), (TALL,)),
    "pinv": (la.pinv, lambda a: jnp.linalg.pinv(a), (TALL,)),
    "lu": (tsla.lu_factor, lambda a: jsla.lu_factor(a), (A4,)),
    "solve_triangular": (lambda a, b: tsla.solve_triangular(a, b, lower=True, trans=1),
                         lambda a, b: jsla.solve_triangular(a, b, lower=True, trans=1), (A4, B4)),
    # JAX's 'pos' solve takes a as symmetric in its second derivative: the same function of a symmetric input
    "solve_pos": (lambda a, b: tsla.solve((a + a.T) / 2, b, assume_a="pos"),
                  lambda a, b: jsla.solve((a + a.T) / 2, b, assume_a="pos"), (S4, B4)),
    "norm_2": (lambda x: la.norm(x, 2), lambda x: jnp.linalg.norm(x, 2), (TALL,)),
    "lstsq_tall": (lambda a, b: la.lstsq(a, b)[0], lambda a, b: jnp.linalg.lstsq(a, b)[0], (TALL, normal(5, 2))),
    "lstsq_wide": (lambda a, b: la.lstsq(a, b)[0], lambda a, b: jnp.linalg.lstsq(a, b)[0], (WIDE, normal(3, 2))),
    "lstsq_values": (lambda a, b: la.lstsq(a, b)[3], lambda a, b: jnp.linalg.lstsq(a, b)[3], (TALL, normal(5, 2))),
}


def _projected(fn, weights, lib):
    """A scalar: the sum of fn's float outputs, each weighted elementwise."""
    def scalar(*args):
        outs = fn(*args)
        outs = outs if isinstance(outs, tuple) else (outs,)
        total = 0.0
        for out, w in zip(outs, weights):
            if np.dtype(out.dtype).kind == "f":
                total = total + lib.sum(out * w)
        return total
    return scalar


HESSIANS_AGAINST_JAX = ("cholesky", "solve", "eigh", "eigvalsh", "det", "solve_pos")


@needs_jax
@pytest.mark.parametrize("name", list(AGAINST_JAX))
def test_gradients_against_jax(name):
    ours, theirs, args = AGAINST_JAX[name]
    outs = ours(*args)
    weights = [normal(*np.shape(o)) for o in (outs if isinstance(outs, tuple) else (outs,))]
    argnums = tuple(range(len(args)))
    with jax.enable_x64(True):
        want = jax.jit(jax.grad(_projected(theirs, weights, jnp), argnums))(*args)
    got = tj.jit(tj.grad(_projected(ours, weights, tnp), argnums))(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)
    if name in HESSIANS_AGAINST_JAX:
        with jax.enable_x64(True):
            want = jax.jit(jax.hessian(_projected(theirs, weights, jnp)))(*args)
        np.testing.assert_allclose(tj.hessian(_projected(ours, weights, tnp))(*args), want, rtol=1e-6, atol=1e-8)


@needs_jax
def test_jacobians_against_jax():
    for fn, jfn, arg in [(la.cholesky, jnp.linalg.cholesky, S4), (la.inv, jnp.linalg.inv, A4),
                         (lambda a: la.eigh(a)[0], lambda a: jnp.linalg.eigh(a)[0], Y4)]:
        with jax.enable_x64(True):
            want = jax.jacfwd(jfn)(arg)
        np.testing.assert_allclose(tj.jacfwd(fn)(arg), want, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(tj.jacrev(fn)(arg), want, rtol=1e-8, atol=1e-10)


def gp_log_likelihood(params, x, y, lib, solve_triangular, cholesky):
    """The log marginal likelihood of a Gaussian process with a squared-exponential kernel."""
    log_scale, log_length, log_noise = params[0], params[1], params[2]
    d2 = (x[:, None] - x[None, :]) ** 2
    k = lib.exp(2 * log_scale) * lib.exp(-0.5 * d2 / lib.exp(2 * log_length)) + lib.exp(2 * log_noise) * lib.eye(len(x))
    chol = cholesky(k)
    z = solve_triangular(chol, y, lower=True)
    return -0.5 * lib.sum(z * z) - lib.sum(lib.log(lib.diagonal(chol))) - 0.5 * len(x) * np.log(2 * np.pi)


@needs_jax
def test_gaussian_process_gradient_against_jax():
    x = np.sort(rng.uniform(0, 5, 40))
    y = np.sin(x) + 0.1 * normal(40)
    params = np.array([0.1, -0.2, -1.5])

    def ours(p):
        return gp_log_likelihood(p, x, y, tnp, tsla.solve_triangular, la.cholesky)

    with jax.enable_x64(True):
        want_value, want_grad = jax.jit(jax.value_and_grad(
            lambda p: gp_log_likelihood(p, x, y, jnp, jsla.solve_triangular, jnp.linalg.cholesky)))(params)
    value, grad = tj.jit(tj.value_and_grad(ours))(params)
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-8)

# --------------------------------------------------------------------------------------------------- vmap


BATCHED = {
    "cholesky": (la.cholesky, [STACK_S], (0,)),
    "solve_a_only": (la.solve, [STACK[:, 0], B4], (0, None)),
    "solve_b_only": (la.solve, [A4, np.stack([B4, B4 * 2, -B4])], (None, 0)),
    "solve_b_axis_1": (la.solve, [A4, normal(4, 3, 2)], (None, 1)),
    "triangular_b_only": (lambda a, b: tsla.solve_triangular(a, b, lower=True), [A4, normal(4, 3, 2)], (None, 1)),
    "triangular_right": (lambda a, b: tj.lax.linalg.triangular_solve(a, b, left_side=False, lower=False),
                         [A4, normal(3, 2, 4)], (None, 0)),
    "eigh": (lambda a: la.eigh(a)[0], [np.stack([Y4, S4])], (0,)),
    "svd": (lambda a: la.svd(a)[1], [normal(4, 5, 3)], (2,)),
    "qr": (lambda a: la.qr(a)[1], [normal(3, 5, 3)], (0,)),
    "lu": (lambda a: tsla.lu_factor(a)[0], [normal(3, 4, 4)], (0,)),
    "det": (la.det, [normal(4, 5, 5)], (0,)),
    "expm": (tsla.expm, [normal(2, 3, 3)], (0,)),
    "lstsq": (lambda a, b: la.lstsq(a, b)[0], [normal(3, 6, 4), normal(6, 3, 2)], (0, 1)),
}


@pytest.mark.parametrize("name", list(BATCHED))
def test_vmap_against_a_loop(name):
    fn, args, in_axes = BATCHED[name]
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    expected = np.stack([fn(*[a if ax is None else np.take(a, i, ax) for a, ax in zip(args, in_axes)])
                         for i in range(size)])
    np.testing.assert_allclose(tj.vmap(fn, in_axes=in_axes)(*args), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tj.jit(tj.vmap(fn, in_axes=in_axes))(*args), expected, rtol=1e-10, atol=1e-12)

# ------------------------------------------------------------------------------------ JAX's special values


SINGULAR = np.array([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]])


@pytest.mark.parametrize("compiled", [False, True])
def test_singular_and_indefinite_matrices_give_nan_and_inf_as_jax(compiled):
    run = tj.jit if compiled else (lambda f: f)
    not_pd = np.array([[1., 2.], [2., 1.]])
    chol = run(la.cholesky)(not_pd)
    np.testing.assert_array_equal(chol, [[np.nan, 0.], [np.nan, np.nan]])         # JAX's result exactly
    np.testing.assert_array_equal(run(tsla.cholesky)(not_pd), [[np.nan, np.nan], [0., np.nan]])
    batch = run(la.cholesky)(np.stack([not_pd, np.eye(2)]))
    assert np.isnan(batch[0]).any() and np.array_equal(batch[1], np.eye(2))
    for x in (run(la.solve)(SINGULAR, np.ones(3)), run(la.inv)(SINGULAR),
              run(lambda a: tsla.solve_triangular(a, np.ones(2), lower=True))(np.array([[0., 0.], [1., 1.]]))):
        assert not np.isfinite(x).all()
    singular4 = np.vstack([SINGULAR, SINGULAR[:1]])[:, [0, 1, 2, 0]]
    assert run(la.det)(SINGULAR) == 0 and run(la.det)(singular4) == 0
    assert tuple(run(la.slogdet)(SINGULAR)) == (0.0, -np.inf)
    lu_, pivots = run(tsla.lu_factor)(SINGULAR)
    np.testing.assert_allclose(lu_, [[2., 4., 6.], [.5, -2., -2.], [.5, 0., 0.]])     # JAX's values
    np.testing.assert_array_equal(pivots, [1, 2, 2])


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")    # inf * 0 in the eigenvectors' derivative
def test_degenerate_eigenvalues_as_jax():
    """Equal eigenvalues: the eigenvalues' derivative is fine, the eigenvectors' is NaN (JAX's rule)."""
    a = np.diag([1., 1., 2.])
    np.testing.assert_allclose(tj.grad(lambda a: tnp.sum(la.eigh(a)[0]))(a), np.eye(3))
    assert np.isnan(tj.grad(lambda a: la.eigh(a)[1][0, 0])(a)).all()

@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eigvalsh_computes_no_eigenvectors(dtype):
    """eigvalsh (and scipy's eigh with eigvals_only) binds eigh with eigvals_only=True: LAPACK is called with
    jobz 'N' (no eigenvectors, about half the time) and gives NumPy's eigenvalues, for either triangle, on a stack
    of odd-sized matrices (the blocked transposes' partial blocks). Its derivatives: AGAINST_JAX."""
    a = normal(3, 19, 19) + (1j * normal(3, 19, 19) if dtype == np.complex128 else 0)
    a = (a + np.swapaxes(a, -1, -2).conj()).astype(dtype)
    assert "eigvals_only=True" in str(tj.make_ir(la.eigvalsh)(a))
    letter = "z" if dtype == np.complex128 else "d"
    name = f"tj_LAPACKE_{letter}{'heevd' if letter == 'z' else 'syevd'}"
    call = next(line for line in tj.jit(la.eigvalsh).lower(a).as_llvm().splitlines() if "call" in line and f"@{name}(" in line)
    assert "i8 signext 78" in call     # jobz 'N'
    for uplo in ("L", "U"):
        triangle = np.tril(a) if uplo == "L" else np.triu(a)
        np.testing.assert_allclose(tj.jit(lambda t, u=uplo: la.eigvalsh(t, u, symmetrize_input=False))(triangle),
                                   np.linalg.eigvalsh(triangle, uplo), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(tj.jit(lambda t, u=uplo: la.eigh(t, u, symmetrize_input=False)[0])(triangle),
                                   np.linalg.eigvalsh(triangle, uplo), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tj.jit(lambda m: tsla.eigh(m, eigvals_only=True))(a[0]),
                               sla.eigh(a[0], eigvals_only=True), rtol=1e-12, atol=1e-12)



# ------------------------------------------------------------------------------------------ compiled code


def _steps(fn, *args):
    return tj.jit(fn).lower(*args)._entry.executable.steps


def test_batches_loop_in_native_code():
    """A stack of factorizations compiles to one native loop of LAPACK calls: no step runs Python."""
    for fn, args in [(la.cholesky, (spd(50, 6, 6),)), (la.solve, (well_conditioned(50, 12, 12), normal(50, 12, 2))),
                     (la.solve, (well_conditioned(50, 4, 4), normal(50, 4, 1))),
                     (lambda a: la.eigh(a)[0], (spd(5, 6, 6),)),
                     (lambda a: la.svd(a)[0], (normal(5, 6, 4),)), (lambda a: la.qr(a)[0], (normal(5, 6, 4),)),
                     (tsla.lu_factor, (normal(5, 6, 6),)), (lambda a, b: tsla.solve_triangular(a, b), (A4, B4)),
                     (tj.vmap(lambda a, b: la.lstsq(a, b)[0]), (normal(5, 6, 4), normal(5, 6, 2)))]:
        assert not any(isinstance(s, PythonStep) for s in _steps(fn, *args)), fn
    assert "tj_LAPACKE_dpotrf_work" in tj.jit(la.cholesky).lower(S4).as_llvm()


def _calls(text, name):
    """The lines of LLVM text that call @name, in order."""
    return [line for line in text.splitlines() if f"call i32 @{name}(" in line or f"call i64 @{name}(" in line]


@pytest.mark.skipif(blas.threads_local_address() is None, reason="the BLAS has no openblas_set_num_threads_local")
def test_small_matrices_call_lapack_on_the_calling_thread_alone():
    """LAPACK on a small static matrix runs with one BLAS thread, set before the loop of calls and restored after
    (linalg_lapack.calling_thread_only); a large matrix keeps the BLAS's threads."""
    for n, small in [(4, True), (256, True), (300, False)]:
        text = tj.jit(lambda a: la.cholesky(a)).lower(spd(3, n, n)).as_llvm()     # (a function per size)
        lines = text.splitlines()
        potrf = _calls(text, "tj_LAPACKE_dpotrf_work")
        threads = _calls(text, "tj_blas_threads_local")
        assert len(potrf) == 1
        if not small:
            assert threads == [], n
            continue
        assert len(threads) == 2 and "(i32 1)" in threads[0] and "(i32 1)" not in threads[1], n
        assert lines.index(threads[0]) < lines.index(potrf[0]) < lines.index(threads[1]), n
    local = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(blas.threads_local_address())

    def current_threads():
        count = local(1)
        local(count)
        return count
    before = current_threads()
    np.testing.assert_allclose(tj.jit(la.cholesky)(S4), np.linalg.cholesky(S4), rtol=1e-12)
    assert current_threads() == before


@pytest.mark.skipif(blas.threads_local_address() is None, reason="the BLAS has no openblas_set_num_threads_local")
def test_threads_calling_lapack_at_once_leave_the_blas_thread_count_as_it_was():
    """openblas_set_num_threads_local sets the whole library's count: blocks that hold it at one thread on
    several threads at once count themselves under a lock (linalg_lapack.calling_thread_only), so that the last
    restores what the first replaced; each restoring its own left 1 behind when two overlapped."""
    import concurrent.futures
    local = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(blas.threads_local_address())
    before = local(1)
    local(before)
    f = tj.jit(la.cholesky)
    a = spd(8, 48, 48)
    want = np.linalg.cholesky(a)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: f(a), range(400)))
    for r in results[::50]:
        np.testing.assert_allclose(r, want, rtol=1e-10, atol=1e-12)
    after = local(before)
    assert after == before


def test_loops_beside_openblas_threads_split_only_when_long():
    """A module whose matmul runs OpenBLAS's own threads (above blas.SMALL_GEMM) splits its other loops over
    tracejit's threads only when they are long (steps.LIBRARY_THREADS_FACTOR): OpenBLAS's workers busy-wait after
    each call, slowing a chunk beside them; without such a matmul the same loop splits."""
    from tracejit.backend.steps import ParallelStep
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((128, 256)).astype(np.float32), rng.standard_normal((256, 512)).astype(np.float32)
    h = rng.standard_normal((128, 512)).astype(np.float32)

    def split(fn, *args):
        return any(isinstance(s, ParallelStep) for s in _steps(fn, *args))
    beside = lambda x, w, h: tnp.tanh(x @ w) + tnp.tanh(h)
    assert split(lambda h: tnp.tanh(h), h) and not split(beside, x, w, h)
    long = np.tile(h, (16, 1))
    assert split(lambda x, w, h: (x @ w, tnp.tanh(h)), x, w, long)
    np.testing.assert_allclose(tj.jit(beside)(x, w, h), np.tanh(x @ w) + np.tanh(h), rtol=1e-5, atol=1e-5)


def test_numpy_fallback_without_lapack(monkeypatch):
    """Where numpy's LAPACK lacks a routine, the equation runs its NumPy impl from the compiled program."""
    monkeypatch.setattr(lapack, "address", lambda routine, dtype: None)
    for fn, args in [(la.cholesky, (STACK_S,)), (la.solve, (well_conditioned(12, 12), B4[:1].repeat(12, 0))),
                     (lambda a: tuple(la.svd(a)), (TALL,)), (tsla.lu_factor, (A4,))]:
        steps = tj.jit(fn).lower(*args)._entry.executable.steps
        assert any(isinstance(s, PythonStep) for s in steps)
        assert_close(tj.jit(fn)(*args), fn(*args), 1e-12)


def test_symbolic_sizes():
    """One compiled program for every batch size and matrix size (LAPACK's sizes read at run time)."""
    solve = tj.jit(la.solve, dynamic_dims={"a": {0: "b", 1: "n", 2: "n"}, "b": {0: "b", 1: "n"}}, cache=False)
    chol = tj.jit(la.cholesky, dynamic_dims={"a": {0: "b", 1: "n", 2: "n"}}, cache=False)
    for batch, n in [(1, 3), (4, 12), (0, 2), (2, 1)]:
        a, s, b = well_conditioned(batch, n, n), spd(batch, n, n), normal(batch, n, 2)
        np.testing.assert_allclose(solve(a, b), np.linalg.solve(a, b), rtol=1e-10)
        np.testing.assert_allclose(chol(s), np.linalg.cholesky(s), rtol=1e-12)
    assert any(isinstance(d, Dim) for d in solve.lower(a, b)._entry.closed.in_avals[0].shape)

# ---------------------------------------------------------------------------------------------- errors


def test_bad_input_raises_clear_errors():
    with pytest.raises(tj.ShapeError, match=r"cholesky.*\(\.\.\., n, n\).*\(3, 4\)"):
        la.cholesky(normal(3, 4))
    with pytest.raises(tj.ShapeError, match="solve: b must have shape"):
        la.solve(A4, normal(3))
    with pytest.raises(TypeError, match="cholesky: needs float32, float64, complex64 or complex128 matrices, got i32"):
        tj.lax.linalg.cholesky(np.eye(2, dtype=np.int32), symmetrize_input=False)
    with pytest.raises(ValueError, match="UPLO"):
        la.eigh(Y4, UPLO="X")
    with pytest.raises(ValueError, match="trans"):
        tsla.solve_triangular(A4, B4, trans=3)
    with pytest.raises(NotImplementedError, match="full matrices"):
        tj.grad(lambda a: tnp.sum(la.svd(a)[0]))(TALL)
    np.testing.assert_allclose(la.inv(np.array([[2, 0], [0, 4]])), [[0.5, 0], [0, 0.25]])    # ints promote


def test_qr_mode_r_computes_no_q():
    """Under jit DCE prunes qr's dead q (the equation's compute_q=False): no orgqr call, R as NumPy's."""
    for a in (normal(7, 4), normal(4, 7), normal(3, 5, 5)):
        f = tj.jit(lambda a: la.qr(a, mode="r"))
        assert "compute_q=False" in f.lower(a).as_text() and "orgqr" not in f.lower(a).as_llvm()
        np.testing.assert_allclose(f(a), np.linalg.qr(a, mode="r"), rtol=1e-10, atol=1e-12)
    assert "orgqr" in tj.jit(lambda a: la.qr(a)[0]).lower(normal(7, 4)).as_llvm()


def test_empty_matrices():
    for fn, ref, arg in [(la.cholesky, np.linalg.cholesky, np.zeros((2, 0, 0))),
                         (lambda a: tuple(la.qr(a, "complete")), lambda a: tuple(np.linalg.qr(a, "complete")),
                          np.zeros((3, 0))),
                         (lambda a: tuple(la.svd(a)), lambda a: tuple(np.linalg.svd(a)), np.zeros((3, 0))),
                         (lambda a: la.lstsq(a, np.ones((a.shape[0], 2)))[0],     # (gelsd returns at once: x is 0)
                          lambda a: np.linalg.lstsq(a, np.ones((a.shape[0], 2)))[0], np.zeros((0, 3))),
                         (lambda a: la.lstsq(a, np.ones((3, 2)))[0], lambda a: np.linalg.lstsq(a, np.ones((3, 2)))[0],
                          np.zeros((3, 0)))]:
        assert_close(tj.jit(fn)(arg), ref(arg), 1e-12)
