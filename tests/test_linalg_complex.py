"""Complex matrices through tracejit.numpy.linalg and tracejit.scipy.linalg (issue 18): every function that takes
them against NumPy and SciPy, eager and compiled, in complex128 and complex64; derivatives against JAX (its
conventions for complex gradients) and check_grads to order 2; eig and eigvals, real and complex; JAX's own
derivative rules of det, slogdet and pinv where the factorizations' are not finite."""
import numpy as np
import pytest
import scipy.linalg as sla

import tracejit as tj
import tracejit.numpy as tnp
import tracejit.scipy.linalg as tsla
from tracejit.backend.steps import PythonStep
from tracejit.test_util import check_grads

la = tnp.linalg
rng = np.random.default_rng(1)


def cnormal(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def hermitian_pd(n):
    a = cnormal(n, n)
    return a @ a.conj().T / n + np.eye(n)


def hermitian(n):
    a = cnormal(n, n)
    return (a + a.conj().T) / 2


A, B, H, Y = cnormal(4, 4) * 0.3 + 2 * np.eye(4), cnormal(4, 2), hermitian_pd(4), hermitian(4)
TALL, WIDE = cnormal(5, 3), cnormal(3, 5)
ORDERS = (None, "fro", "nuc", 1, -1, 2, -2, np.inf)

# name: (function of (linalg module, scipy.linalg module, *args), arguments): the same code runs on NumPy/SciPy
# and on tracejit.
VALUES = {
    "solve": (lambda la, sp, a, b: la.solve(a, b), (A, B)),
    "solve_12": (lambda la, sp, a, b: la.solve(a, b), (cnormal(12, 12) + 5 * np.eye(12), cnormal(2, 12, 3))),
    "inv": (lambda la, sp, a: la.inv(a), (cnormal(2, 4, 4) + 3 * np.eye(4),)),
    "det": (lambda la, sp, a: la.det(a), (cnormal(2, 5, 5),)),
    "det_3": (lambda la, sp, a: la.det(a), (cnormal(3, 3),)),
    "slogdet": (lambda la, sp, a: tuple(la.slogdet(a)), (cnormal(2, 5, 5),)),
    "slogdet_2": (lambda la, sp, a: tuple(la.slogdet(a)), (cnormal(2, 2),)),
    "cholesky": (lambda la, sp, a: la.cholesky(a), (H,)),
    "cholesky_upper": (lambda la, sp, a: la.cholesky(a, upper=True), (H,)),
    "qr": (lambda la, sp, a: tuple(la.qr(a)), (TALL,)),
    "qr_wide": (lambda la, sp, a: tuple(la.qr(a)), (WIDE,)),
    "qr_complete": (lambda la, sp, a: tuple(la.qr(a, "complete")), (TALL,)),
    "eigh": (lambda la, sp, a: tuple(la.eigh(a)), (Y,)),
    "eigh_upper": (lambda la, sp, a: tuple(la.eigh(a, "U")), (Y,)),
    "eigvalsh": (lambda la, sp, a: la.eigvalsh(a), (Y,)),
    "svd": (lambda la, sp, a: tuple(la.svd(a)), (TALL,)),
    "svd_reduced": (lambda la, sp, a: tuple(la.svd(a, False)), (WIDE,)),
    "svd_hermitian": (lambda la, sp, a: tuple(la.svd(a, hermitian=True)), (Y,)),
    "svdvals": (lambda la, sp, a: la.svdvals(a), (TALL,)),
    "lstsq": (lambda la, sp, a, b: tuple(la.lstsq(a, b)[:3]), (cnormal(6, 3), cnormal(6, 2))),
    "pinv": (lambda la, sp, a: la.pinv(a), (TALL,)),
    "matrix_rank": (lambda la, sp, a: la.matrix_rank(a), (np.outer(cnormal(4), cnormal(3)),)),
    "matrix_power": (lambda la, sp, a: la.matrix_power(a, -2), (A,)),
    "cond": (lambda la, sp, a: tuple(la.cond(a, p) for p in (None, "fro", -2, 1, np.inf)), (A,)),
    "matrix_norms": (lambda la, sp, x: tuple(la.norm(x, o) for o in ORDERS), (TALL,)),
    "vector_norms": (lambda la, sp, x: tuple(la.norm(x, o, axis=1) for o in (None, 0, 1, 3, -np.inf)), (TALL,)),
    "vecdot": (lambda la, sp, x, y: la.vecdot(x, y), (cnormal(3, 4), cnormal(3, 4))),
    "tensorsolve": (lambda la, sp, a, b: la.tensorsolve(a, b), ((cnormal(6, 6) + 3 * np.eye(6)).reshape(2, 3, 6),
                                                                cnormal(2, 3))),
    "multi_dot": (lambda la, sp, *xs: la.multi_dot(xs), (cnormal(3), cnormal(3, 4), cnormal(4, 2))),
    "eig": (lambda la, sp, a: tuple(la.eig(a)), (cnormal(2, 4, 4),)),
    "eig_real": (lambda la, sp, a: tuple(la.eig(a)), (rng.standard_normal((3, 5, 5)),)),
    "eigvals": (lambda la, sp, a: la.eigvals(a), (cnormal(4, 4),)),
    "sp_cholesky": (lambda la, sp, a: (sp.cholesky(a), sp.cholesky(a, lower=True)), (H,)),
    "sp_cho_solve": (lambda la, sp, a, b: tuple(sp.cho_solve(sp.cho_factor(a, lower=lower), b)
                                                for lower in (False, True)), (H, B)),
    "sp_lu": (lambda la, sp, a: sp.lu(a), (A,)),
    "sp_lu_factor": (lambda la, sp, a: sp.lu_factor(a), (cnormal(5, 5),)),
    "sp_lu_solve": (lambda la, sp, a, b: tuple(sp.lu_solve(sp.lu_factor(a), b, trans=t) for t in (0, 1, 2)), (A, B)),
    "sp_solve_triangular": (lambda la, sp, a, b: tuple(sp.solve_triangular(a, b, trans=t, lower=lower)
                                                       for t in (0, "T", "C") for lower in (False, True)), (A, B)),
    "sp_solve": (lambda la, sp, a, b: tuple(sp.solve(a, b, assume_a=k) for k in ("gen", "pos", "her")), (H, B)),
    "sp_expm": (lambda la, sp, a: sp.expm(a), (cnormal(4, 4) * 0.5,)),
    "sp_expm_large": (lambda la, sp, a: sp.expm(a), (cnormal(3, 3) * 3,)),
}


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


@pytest.mark.parametrize("name", list(VALUES))
def test_values_against_numpy_and_scipy(name):
    fn, args = VALUES[name]
    want = _tuple(fn(np.linalg, sla, *args))
    for got in (fn(la, tsla, *args), tj.jit(lambda *a: fn(la, tsla, *a))(*args)):
        for g, w in zip(_tuple(got), want, strict=True):
            g = np.asarray(g)
            assert g.dtype == w.dtype or w.dtype.kind == g.dtype.kind == "i", (g.dtype, w.dtype)
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)


C64 = ["solve", "inv", "det", "slogdet", "cholesky", "qr_complete", "eigvalsh", "svd_reduced", "lstsq", "pinv",
       "eigvals", "sp_lu_solve", "sp_solve_triangular", "sp_expm", "matrix_norms"]


@pytest.mark.parametrize("name", C64)
def test_complex64_stays_complex64(name):
    fn, args = VALUES[name]
    want = _tuple(fn(np.linalg, sla, *args))
    got = _tuple(tj.jit(lambda *a: fn(la, tsla, *a))(*[a.astype(np.complex64) for a in args]))
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == {"c": np.complex64, "f": np.float32, "i": np.int64}[w.dtype.kind]
        np.testing.assert_allclose(g, w, rtol=3e-4, atol=3e-4)


def test_left_eigenvectors_and_float32_eig():
    """lax.linalg.eig's left eigenvectors (vl^H a = w vl^H, unit columns, largest entry real) compiled and eager,
    and float32 matrices' eigenvalues in complex64."""
    a = rng.standard_normal((5, 5))
    for x in (a, a + 1j * rng.standard_normal((5, 5))):
        for w, vl, vr in (tj.lax.linalg.eig(x), tj.jit(tj.lax.linalg.eig)(x)):
            np.testing.assert_allclose(vl.conj().T @ x, w[:, None] * vl.conj().T, atol=1e-10)
            np.testing.assert_allclose(x @ vr, vr * w, atol=1e-10)
            np.testing.assert_allclose(np.linalg.norm(vl, axis=0), 1, rtol=1e-12)
            largest = np.take_along_axis(vl, np.argmax(np.abs(vl), axis=0)[None], axis=0)
            np.testing.assert_allclose(largest.imag, 0, atol=1e-12)
    w32 = tj.jit(la.eigvals)(a.astype(np.float32))
    assert w32.dtype == np.complex64
    np.testing.assert_allclose(np.sort_complex(w32), np.sort_complex(np.linalg.eigvals(a)), rtol=1e-5)

# ---------------------------------------------------------------------------------------------- derivatives


def eigh_reconstruction(a, lib):
    """A function of eigh's eigenvectors that does not depend on their phases."""
    w, v = lib.linalg.eigh(a)
    return (v * lib.sin(w)) @ v.conj().T


def svd_reconstruction(a, lib):
    u, s, vh = lib.linalg.svd(a, full_matrices=False)
    return (u * lib.sin(s)) @ vh


# name: (function of (numpy-like module, scipy.linalg-like module, *args), arguments): gradients of Re(sum(w *
# f(args))), w complex, compared with JAX's.
GRADS = {
    "cholesky": (lambda lib, sp, a: lib.linalg.cholesky(a), (H,)),
    "solve": (lambda lib, sp, a, b: lib.linalg.solve(a, b), (A, B)),
    "inv": (lambda lib, sp, a: lib.linalg.inv(a), (A,)),
    "det": (lambda lib, sp, a: lib.linalg.det(a), (cnormal(5, 5),)),
    "slogdet": (lambda lib, sp, a: lib.linalg.slogdet(a)[1] + lib.linalg.slogdet(a)[0], (A,)),
    "eigh": (lambda lib, sp, a: eigh_reconstruction(a, lib), (Y,)),
    "eigvalsh": (lambda lib, sp, a: lib.linalg.eigvalsh(a), (Y,)),
    "svd": (lambda lib, sp, a: svd_reconstruction(a, lib), (TALL,)),
    "svd_wide": (lambda lib, sp, a: svd_reconstruction(a, lib), (WIDE,)),
    "svdvals": (lambda lib, sp, a: lib.linalg.svd(a, compute_uv=False), (TALL,)),
    "qr": (lambda lib, sp, a: lib.concatenate(lib.linalg.qr(a), axis=1), (WIDE,)),
    "qr_complete": (lambda lib, sp, a: lib.concatenate(lib.linalg.qr(a, "complete"), axis=1), (TALL,)),
    "pinv": (lambda lib, sp, a: lib.linalg.pinv(a), (TALL,)),
    "norm_2": (lambda lib, sp, a: lib.linalg.norm(a, 2) + lib.linalg.norm(a), (TALL,)),
    "lu": (lambda lib, sp, a: sp.lu_factor(a)[0], (A,)),
    "lu_solve": (lambda lib, sp, a, b: sp.lu_solve(sp.lu_factor(a), b, trans=2), (A, B)),
    "solve_triangular": (lambda lib, sp, a, b: sp.solve_triangular(a, b, trans="C", lower=True), (A, B)),
    "cho_solve": (lambda lib, sp, a, b: sp.cho_solve(sp.cho_factor((a + a.conj().T) / 2), b), (H, B)),
    "eigvals": (lambda lib, sp, a: lib.linalg.eigvals(a), (cnormal(4, 4),)),
    "eigvals_real": (lambda lib, sp, a: lib.linalg.eigvals(a), (rng.standard_normal((4, 4)),)),
    "expm": (lambda lib, sp, a: sp.expm(a), (cnormal(3, 3) * 0.5,)),
}
SECOND_ORDER = ("cholesky", "solve", "det", "eigh", "svd", "qr", "pinv", "solve_triangular")

try:
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsla
except ImportError:
    jax = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is not installed")


def _projected(fn, lib, sp, weights):
    def scalar(*args):
        out = fn(lib, sp, *args)
        return lib.real(lib.sum(out * weights))
    return scalar


@needs_jax
@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_against_jax(name):
    fn, args = GRADS[name]
    weights = cnormal(*np.shape(fn(tnp, tsla, *args)))
    argnums = tuple(range(len(args)))
    want = jax.jit(jax.grad(_projected(fn, jnp, jsla, weights), argnums))(*args)
    got = tj.grad(_projected(fn, tnp, tsla, weights), argnums)(*args)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_check_grads_to_order_2(name):
    fn, args = GRADS[name]
    check_grads(lambda *a: fn(tnp, tsla, *a), args, order=2)


@needs_jax
def test_eigenvector_derivatives_as_jax():
    """With enable_eigvec_derivs, JAX's eigenvector rule (through geev's normalization); without, its error."""
    a = cnormal(4, 4)
    weights = cnormal(4, 4)

    def ours(x):
        return tnp.real(tnp.sum(tj.lax.linalg.eig(x, compute_left_eigenvectors=False,
                                                  enable_eigvec_derivs=True)[1] * weights))

    def theirs(x):
        return jnp.real(jnp.sum(jax.lax.linalg.eig(x, compute_left_eigenvectors=False,
                                                   enable_eigvec_derivs=True)[1] * weights))

    np.testing.assert_allclose(tj.jit(tj.grad(ours))(a), jax.jit(jax.grad(theirs))(a), rtol=1e-7, atol=1e-9)
    tangent = cnormal(4, 4)
    got = tj.jvp(lambda x: tj.lax.linalg.eig(x, enable_eigvec_derivs=True)[1], (a,), (tangent,))[1]
    want = jax.jit(lambda x, t: jax.jvp(lambda x: jax.lax.linalg.eig(x, enable_eigvec_derivs=True)[1], (x,),
                                        (t,))[1])(a, tangent)
    np.testing.assert_allclose(np.abs(got), np.abs(want), rtol=1e-7, atol=1e-9)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        tj.grad(lambda x: tnp.sum(tnp.abs(la.eig(x)[1])))(a)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):        # as JAX: first order only
        tj.hessian(lambda x: tnp.sum(tnp.real(la.eigvals(x))))(a.real)
    check_grads(la.eigvals, (a,), order=1)

# -------------------------------------------------------------------------- JAX's finite derivative rules


@needs_jax
def test_det_slogdet_pinv_derivatives_where_the_factorizations_fail():
    """det at a singular matrix (its gradient the adjugate), slogdet's log|det| (trace(a^-1 a') with the sign's
    derivative zero), and pinv at repeated singular values: finite, and JAX's values."""
    singular = np.array([[1., 2., 3., 4.], [2., 4., 6., 8.], [1., 0., 1., 0.], [0., 1., 1., 3.]])
    rank_deficient = np.outer(np.arange(1., 5.), [1., -1., 2., 0.5])
    orthogonal = np.linalg.qr(rng.standard_normal((4, 3)))[0] * 2.0          # three equal singular values
    for ours, theirs, x in [(la.det, jnp.linalg.det, singular), (la.det, jnp.linalg.det, rank_deficient),
                            (lambda a: la.slogdet(a)[1], lambda a: jnp.linalg.slogdet(a)[1], A.real),
                            (lambda a: tnp.sum(la.pinv(a) ** 2), lambda a: jnp.sum(jnp.linalg.pinv(a) ** 2),
                             orthogonal)]:
        got = tj.jit(tj.grad(ours))(x)
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, jax.jit(jax.grad(theirs))(x), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(tj.jit(tj.hessian(la.det))(singular), jax.jit(jax.hessian(jnp.linalg.det))(singular),
                               atol=1e-9)

# ---------------------------------------------------------------------------------------- batching, code


@pytest.mark.parametrize("fn, args, in_axes", [
    (la.cholesky, [np.stack([H, hermitian_pd(4)])], (0,)),
    (la.solve, [A, cnormal(4, 3, 2)], (None, 1)),
    (lambda a: la.eigh(a)[0], [np.stack([Y, hermitian(4)])], (0,)),
    (lambda a: la.svd(a)[1], [cnormal(4, 5, 3)], (2,)),
    (la.eigvals, [cnormal(3, 4, 4)], (0,)),
    (la.det, [cnormal(2, 5, 5)], (0,)),
])
def test_vmap_against_a_loop(fn, args, in_axes):
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    expected = np.stack([fn(*[a if ax is None else np.take(a, i, ax) for a, ax in zip(args, in_axes)])
                         for i in range(size)])
    np.testing.assert_allclose(tj.jit(tj.vmap(fn, in_axes=in_axes))(*args), expected, rtol=1e-10, atol=1e-12)


def test_complex_batches_loop_in_native_code():
    """Complex factorizations, small complex solves (LAPACK: the generated small-system solver is real-only),
    eig and a conjugated triangular solve compile to native loops of LAPACK calls."""
    for fn, args in [(la.cholesky, (np.stack([H] * 3),)), (la.solve, (np.stack([A] * 5), cnormal(5, 4, 1))),
                     (la.eigvals, (cnormal(3, 4, 4),)), (lambda a: la.eig(a)[1], (rng.standard_normal((3, 4, 4)),)),
                     (lambda a, b: tj.lax.linalg.triangular_solve(a, b, left_side=True, conjugate_a=True), (A, B))]:
        steps = tj.jit(fn).lower(*args)._entry.executable.steps
        assert not any(isinstance(s, PythonStep) for s in steps), fn
    assert "tj_LAPACKE_zheevd" in tj.jit(la.eigh).lower(Y).as_llvm()
