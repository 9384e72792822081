"""complex64 and complex128 (issue 16): types and promotion against NumPy, compiled functions against NumPy on
grids of special values (signed zeros, infinities and NaNs in either part) and within a few ulp elsewhere,
reductions, matmul through cgemm/zgemm, indexing and control flow, the complex functions of tracejit.numpy, the
passes, the caches, and autodiff against JAX itself (its convention: grad of a real function of z is conj of
the gradient in x + iy; holomorphic=True gives f'(z))."""
# ruff: noqa: B023 -- each lambda is traced right away, inside its loop iteration
import itertools
import warnings

import numpy as np
import pytest
from test_backend import assert_complex_close, check

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax

C = [np.complex64, np.complex128]
I, N = np.inf, np.nan
PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, I, -I, N, 1e-300, 700.0, -700.0, 1e300, np.pi / 2, 1e-40, 100.0, -1e20]
rng = np.random.default_rng(0)


def grid(dtype, limit=np.inf):
    """Every pair of PARTS (those representable in the dtype's parts, |finite part| <= limit) as re + im j."""
    part = np.finfo(dtype).dtype
    with np.errstate(over="ignore"):
        parts = [p for p in PARTS if not np.isfinite(p) or (abs(p) <= limit and part.type(p) == p)]
    out = np.empty(len(parts) ** 2, dtype)
    out.real, out.imag = np.array(list(itertools.product(parts, parts))).astype(part).T
    return out


def randc(dtype, *shape, scale=1.0):
    return ((rng.normal(size=shape) + 1j * rng.normal(size=shape)) * scale).astype(dtype)


def same_as_numpy(got, want, ulps=4, zero_signs=True):
    """Bit for bit where NumPy's part is not finite (NaN, inf with its sign), within `ulps` of |want| elsewhere,
    zeros with NumPy's signs (unless zero_signs is False)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if want.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want)
        return
    eps = np.finfo(want.dtype).eps
    if want.dtype.kind == "c":
        assert_complex_close(got, want, ulps * eps)
        for g, w in ((got.real, want.real), (got.imag, want.imag)) if zero_signs else ():
            zero = w == 0
            np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(w[zero]))
    else:
        np.testing.assert_allclose(got, want, rtol=ulps * eps, equal_nan=True)

# ----------------------------------------------------------------------------------------- types


def test_ir_prints_complex_types_and_literals():
    text = str(tj.make_ir(lambda x: x * 2j)(np.ones(3, np.float32)))
    assert "a:f32[3]" in text and "c64[3] = convert_element_type" in text and "mul b 2j:c64[]" in text
    assert "c128[]" in str(tj.make_ir(lambda z: z)(np.complex128(1)))


ARRAYS = [np.bool_, np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128]
SCALARS = [True, 3, 2.5, 1j, 1 + 2j]


@pytest.mark.parametrize("a,b", list(itertools.product(ARRAYS, ARRAYS)))
def test_array_promotion_as_numpy(a, b):
    x, y = np.ones(2, a), np.ones(2, b)
    assert tj.jit(lambda x, y: x * y)(x, y).dtype == (x * y).dtype


@pytest.mark.parametrize("a,s", list(itertools.product(ARRAYS, SCALARS)))
def test_python_scalars_are_weak_as_in_numpy_2(a, s):
    """x_f32 * 1j is complex64, x_c64 * 2.0 stays complex64, an int array times 1j is complex128."""
    x = np.ones(2, a)
    want = x * s
    got = tj.jit(lambda x: x * s)(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert tj.jit(lambda x, s: x * s)(x, s).dtype == want.dtype     # a Python scalar argument is weak too


def test_complex_arguments_results_and_constants():
    z = randc(np.complex64, 5)
    w = np.complex128(1 - 2j)
    const = randc(np.complex64, 5)
    f = tj.jit(lambda z, w, c: (z * const + w, c, np.complex64(3 + 1j) * z, tnp.array([1j, 2]) * 2))
    got = f(z, w, 2j)
    want = (z * const + w, np.asarray(2j), np.complex64(3 + 1j) * z, np.array([1j, 2]) * 2)
    for g, x in zip(got, want):
        assert g.dtype == x.dtype
        np.testing.assert_allclose(g, x, rtol=1e-6)


def test_astype_between_complex_and_real_as_numpy():
    z = randc(np.complex128, 4)
    for dtype in (np.float32, np.float64, np.int32, np.bool_):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = tj.jit(lambda z: z.astype(dtype))(z)
        assert [w.category for w in caught] == ([] if dtype == np.bool_ else [np.exceptions.ComplexWarning])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            np.testing.assert_array_equal(got, z.astype(dtype))
    x = np.array([1.5, -0.0, np.nan], np.float32)
    for dtype in C:
        same_as_numpy(tj.jit(lambda x: x.astype(dtype))(x), x.astype(dtype), 0)
        with np.errstate(over="ignore"):
            same_as_numpy(tj.jit(lambda z: z.astype(dtype))(grid(np.complex128)), grid(np.complex128).astype(dtype), 0)
    np.testing.assert_array_equal(tj.jit(lambda z: z.astype(bool))(grid(np.complex64)), grid(np.complex64) != 0)

# ----------------------------------------------------------------------------- elementwise functions

UNARY = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
         "abs": np.abs, "sign": np.sign, "square": np.square, "reciprocal": np.reciprocal, "negative": np.negative,
         "conj": np.conj, "real": np.real, "imag": np.imag, "angle": np.angle, "isnan": np.isnan,
         "isinf": np.isinf, "isfinite": np.isfinite}


@pytest.mark.parametrize("dtype", C)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions_on_special_values_as_numpy(name, dtype):
    """Every pair of special and huge parts (the trigonometric arguments of exp, sin, cos and tanh beyond
    mathlib.TRIG_LIMIT too: the C library's sin and cos take those lanes) as NumPy."""
    z = grid(dtype)
    if name == "sign" and dtype == np.complex64:      # NumPy's |z| of subnormal parts is off by 1e-6
        z = z[~((np.abs(z.real) < 1e-38) & (z.real != 0))]
    with np.errstate(all="ignore"):
        want = UNARY[name](z)
    for fuse in (True, False):
        got = tj.jit(lambda z: getattr(tnp, name)(z))(z) if fuse else _unfused(lambda z: getattr(tnp, name)(z), z)
        same_as_numpy(got, want, ulps=3 if name in ("abs", "angle") else 6)


def _unfused(f, *args):
    from test_backend import compiled_and_reference
    return compiled_and_reference(f, *args, fuse=False)[0][0]


@pytest.mark.parametrize("dtype", C)
def test_unary_functions_on_random_values_within_a_few_ulp(dtype):
    z = np.concatenate([randc(dtype, 2000), randc(dtype, 500, scale=1e-3), randc(dtype, 500, scale=30),
                        np.exp(1j * rng.uniform(-4, 4, 500)).astype(dtype) * (1 + rng.normal(size=500) * 1e-6)])
    for name in ("exp", "log", "sqrt", "sin", "cos", "tanh", "abs", "sign", "angle"):
        with np.errstate(all="ignore"):
            want = UNARY[name](z)
        same_as_numpy(tj.jit(lambda z: getattr(tnp, name)(z))(z), want, ulps=8)


BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
          "equal": np.equal, "not_equal": np.not_equal, "power": np.power}


@pytest.mark.parametrize("dtype", C)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_operations_on_special_values_as_numpy(name, dtype):
    z = grid(dtype, 3.0 if name == "power" else np.inf)
    if name == "power" and dtype == np.complex64:   # NumPy's float32 log|1 + 1e-40j| is 0, ours (double) is not:
        z = z[(np.abs(z.imag) != np.float32(1e-40)) & (np.abs(z.real) != np.float32(1e-40))]   # powers to infinite
        # exponents differ
    x, y = (np.ascontiguousarray(a) for a in np.broadcast_arrays(z[:, None], z[None, :]))
    with np.errstate(all="ignore"):
        want = BINARY[name](x, y)
    got = tj.jit(lambda x, y: getattr(tnp, name)(x, y))(x, y)
    if name != "power":
        same_as_numpy(got, want, ulps=0)
    else:       # exp(w log z) in double: within |w log z| ulps of NumPy's float arithmetic; zeros of its
        with np.errstate(all="ignore"):    # special cases (0 * inf ...) may differ in sign
            ulps = 8 + 4 * np.nanmax(np.where(np.isfinite(np.abs(y)), np.abs(y), 0)) * 30
        same_as_numpy(got, want, ulps=ulps, zero_signs=False)


@pytest.mark.parametrize("dtype", C)
def test_powers_as_numpy(dtype):
    """Integer exponents in (-100, 100) are repeated products as NumPy computes them (bit for bit); others
    exp(w log z)."""
    z = grid(dtype, 100.0)
    integers = (0, 1, 2, 3, 5, -1, -3, 7, 99, -99)     # (one program for all, each power of its own copy of z)
    powers = tj.jit(lambda zs: [(tnp.power(a, y), b ** float(y)) for (a, b), y in zip(zs, integers)])(
        [(z.copy(), z.copy()) for _ in integers])
    for y, (by_power, by_operator) in zip(integers, powers, strict=True):
        with np.errstate(all="ignore"):
            want = np.power(z, dtype(y))
        same_as_numpy(by_power, want, ulps=0)
        same_as_numpy(by_operator, want, ulps=0)
    z = randc(dtype, 200)
    others = (0.5, 2.5, -1.5, 1j, 1 - 2j, 150)
    powers = tj.jit(lambda zs: [tnp.power(a, y) for a, y in zip(zs, others)])([z.copy() for _ in others])
    for y, got in zip(others, powers, strict=True):
        with np.errstate(all="ignore"):
            want = np.power(z, dtype(y))
        same_as_numpy(got, want, ulps=40 * max(abs(y), 1))


def test_complex_from_parts_and_predicates():
    x, y = rng.normal(size=5), rng.normal(size=5).astype(np.float32)
    z = x + 1j * np.array([0.0, 1e-30, -2.0, 0.0, 3.0])
    f = tj.jit(lambda x, y, z: (lax.complex(x, x * 2), x + 1j * y, tnp.iscomplex(z), tnp.isreal(z),
                                tnp.iscomplex(x), tnp.isreal(x), tnp.angle(z, deg=True), tnp.angle(x),
                                tnp.real(x), tnp.imag(x), tnp.conj(y)))
    want = (x + 2j * x, x + 1j * y, np.iscomplex(z), np.isreal(z), np.iscomplex(x), np.isreal(x),
            np.angle(z, deg=True), np.angle(x), np.real(x), np.imag(x), np.conj(y))
    for g, w in zip(f(x, y, z), want):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-15)
    assert tj.jit(lambda z: (tnp.iscomplexobj(z), tnp.isrealobj(z)))(z) == (True, False)
    assert lax.complex(np.float32(1), np.float32(2)).dtype == np.complex64


def test_numpy_functions_that_treat_complex_parts_as_numpy():
    z = np.array([1 + 2j, complex(N, 1), complex(I, -I), 2.567 - 3.111j, -0.5j])
    cases = [(tnp.var, np.var), (tnp.std, np.std), (lambda z: tnp.round(z, 1), lambda z: np.round(z, 1)),
             (tnp.nan_to_num, np.nan_to_num),
             (lambda z: tnp.isclose(z, z * 1.0000001), lambda z: np.isclose(z, z * 1.0000001)),
             (tnp.zeros_like, np.zeros_like), (lambda z: tnp.arange(3) * 1j, lambda z: np.arange(3) * 1j),
             (lambda z: tnp.array([1j, 2]), lambda z: np.array([1j, 2])),
             (lambda z: tnp.full(2, 1j), lambda z: np.full(2, 1j)), (tnp.iscomplexobj, np.iscomplexobj),
             (lambda z: tnp.var(z[[0, 3, 4]], axis=0), lambda z: np.var(z[[0, 3, 4]], axis=0))]
    for ours, theirs in cases:
        with np.errstate(all="ignore"):
            want = theirs(z)
        same_as_numpy(tj.jit(ours)(z), want, 4)


def test_real_if_close_is_numpy_eagerly_and_an_error_when_traced():
    z = np.array([1 + 1e-20j, 2 - 1e-18j])
    np.testing.assert_array_equal(tnp.real_if_close(z), np.real_if_close(z))
    assert tnp.real_if_close(np.array([1 + 1e-3j])).dtype == np.complex128
    assert tj.jit(tnp.real_if_close)(np.ones(2)).dtype == np.float64
    with pytest.raises(TypeError, match=r"real_if_close of a traced c128\[2\].*tnp.real"):
        tj.jit(tnp.real_if_close)(z)


def test_unordered_operations_refuse_complex_with_a_clear_error():
    z = np.ones(3, np.complex64)
    for f in (lambda z: z < z[::-1], lambda z: tnp.maximum(z, z), tnp.max, lambda z: lax.clamp(z[0], z, z[0]),
              lambda z: tnp.searchsorted(z, z), tnp.argmax):
        with pytest.raises(TypeError, match="complex|ordered"):
            tj.jit(f)(z)

# ------------------------------------------------------------------------- reductions, matmul, shapes


@pytest.mark.parametrize("dtype", C)
def test_reductions(dtype):
    z = randc(dtype, 6, 7, 5)
    for f, g in ((lambda z: tnp.sum(z, axis=1), lambda z: np.sum(z, axis=1)),
                 (lambda z: tnp.sum(z, axis=(0, 2)), lambda z: np.sum(z, axis=(0, 2))),
                 (lambda z: tnp.sum(z, axis=2), lambda z: np.sum(z, axis=2)),
                 (tnp.sum, np.sum), (tnp.mean, np.mean), (lambda z: tnp.mean(z, axis=0), lambda z: np.mean(z, axis=0)),
                 (lambda z: tnp.prod(z * 0.5, axis=1), lambda z: np.prod(z * 0.5, axis=1)),
                 (lambda z: tnp.cumsum(z, axis=1), lambda z: np.cumsum(z, axis=1))):
        want = g(z)
        got = tj.jit(f)(z)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == np.complex64 else 1e-13)
    big = randc(dtype, 1_000_003)          # split over the threads, partial sums combined
    np.testing.assert_allclose(tj.jit(tnp.sum)(big), np.sum(big.astype(np.complex128)), rtol=1e-6)


@pytest.mark.parametrize("dtype", C)
def test_matmul_dot_einsum_through_the_blas_and_the_loops(dtype):
    a, b = randc(dtype, 5, 7), randc(dtype, 7, 3)
    tol = 1e-5 if dtype == np.complex64 else 1e-13
    cases = [(lambda a, b: a @ b, (a, b)), (lambda a, b: a.T @ b, (a.T.copy(), b)),
             (lambda a, b: tnp.dot(a, b.T), (a, b.T.copy())), (lambda a, b: tnp.einsum("ij,jk->ik", a, b), (a, b)),
             (lambda a, b: tnp.einsum("bij,bjk->bik", a, b), (randc(dtype, 2, 3, 4), randc(dtype, 2, 4, 5))),
             (lambda a, b: tnp.einsum("ijk,jl->kli", a, b), (randc(dtype, 2, 3, 4), randc(dtype, 3, 2))),  # loops
             (tnp.vdot, (a.ravel(), a.ravel() * 2)), (tnp.inner, (a[0], a[1])), (tnp.outer, (a[0], b[:, 0]))]
    for f, args in cases:
        want = getattr(np, f.__name__)(*args) if f.__name__ in ("vdot", "inner", "outer") else None
        check(f, *args, rtol=tol)
        if want is not None:
            np.testing.assert_allclose(tj.jit(f)(*args), want, rtol=tol)
    assert "tj_gemm" in tj.jit(lambda a, b: a @ b).lower(a, b).as_llvm()


def test_indexing_shapes_and_selection():
    z = randc(np.complex64, 6, 4)
    i = np.array([3, 0, 5, -1])
    cases = [lambda z: z[i], lambda z: z[1:5:2, ::-1], lambda z: z.T.reshape(8, 3), lambda z, i=i: z.at[i].add(1j),
             lambda z: tnp.concatenate([z, z * 1j], axis=1), lambda z: tnp.where(z.real > 0, z, 2j),
             lambda z: tnp.pad(z, 1, constant_values=1 - 1j), lambda z: tnp.stack([z, z.conj()]),
             lambda z: tnp.broadcast_to(z[:, :1], (6, 4)), lambda z: lax.dynamic_slice(z, (2, 1), (3, 2)),
             lambda z: lax.dynamic_update_slice(z, z[:2, :2] * 2, (4, 2)), lambda z: tnp.take(z, i % 4, axis=1),
             lambda z: tnp.sort(z, axis=0), lambda z: tnp.roll(z, 2), lambda z: tnp.tile(z, (2, 1))]
    for f in cases:
        check(f, z)


def test_control_flow_carries_complex_values():
    z = randc(np.complex128, 3)
    check(lambda z: lax.fori_loop(0, 5, lambda i, c: c * (1 + 0.1j) + i, z), z)
    check(lambda z: lax.scan(lambda c, x: (c * x, c + x), z[0], z)[1], z)
    check(lambda z: lax.cond(z[0].real > 0, lambda z: tnp.exp(z), lambda z: z.conj(), z), z)
    check(lambda z: lax.while_loop(lambda c: tnp.abs(c[0]) < 100, lambda c: c * 2j, z), z)

# ------------------------------------------------------------------------------ passes, caches, vmap


def test_passes_fold_complex_constants_and_keep_complex_identities_numpy_has():
    x = np.array([complex(I, 1), 1 + 2j, complex(N, 0)])
    folded = tj.jit(lambda x: x * (np.complex128(1 + 2j) * 2j + 1)).lower(x).as_text()
    assert "(-3+2j):c128[]" in folded                                 # the constant product folded
    with np.errstate(invalid="ignore"):
        for f in (lambda x: x * 1, lambda x: x / 1, lambda x: x * (1 + 0j), lambda x: x + 0.0, lambda x: x - 0,
                  lambda x: 1 * x, lambda x: x + (-0.0 - 0.0j)):
            same_as_numpy(tj.jit(f)(x), f(x), 0)
    same_as_numpy(tj.jit(lambda x: tnp.conj(tnp.conj(x)))(x), x, 0)
    assert "mul" in tj.jit(lambda x: x * 1).lower(x).as_text()        # inf * (1+0j) is NaN in NumPy: not x
    assert "conj" not in tj.jit(lambda x: tnp.conj(tnp.conj(x))).lower(x).as_text()


def test_complex_code_round_trips_through_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(tj.config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(tj.config, "disk_cache", True)
    a, z = randc(np.complex64, 4, 4), randc(np.complex64, 4)

    def fun(a, z):
        return tnp.exp(a @ z) * 2j + tnp.sum(tnp.sqrt(a), axis=0)

    want = np.exp(a @ z) * 2j + np.sum(np.sqrt(a), axis=0)
    for from_disk in (False, True):
        tj.clear_caches()
        f = tj.jit(fun)
        np.testing.assert_allclose(f(a, z), want, rtol=1e-5)
        assert f.cache_info().signatures[0].from_disk is from_disk


def test_fast_dispatch_path_takes_complex_arrays():
    f = tj.jit(lambda z, w: z * w + 1j)
    z, w = randc(np.complex128, 3), randc(np.complex128, 3)
    np.testing.assert_array_equal(f(z, w), z * w + 1j)
    assert f._fast is not None
    np.testing.assert_array_equal(f(w, z), w * z + 1j)
    np.testing.assert_array_equal(f(z.astype(np.complex64), w), z.astype(np.complex64) * w + 1j)   # another dtype
    assert f.misses == 2


def test_symbolic_dimensions_with_complex_arrays():
    f = tj.jit(lambda z: (tnp.sum(tnp.exp(z) * z), z.conj() * 2), dynamic_dims={"z": {0: "n"}})
    for n in (3, 5, 3000):
        z = randc(np.complex64, n)
        total, doubled = f(z)
        np.testing.assert_allclose(total, np.sum(np.exp(z) * z), rtol=1e-5)
        np.testing.assert_array_equal(doubled, z.conj() * 2)
    assert f.misses == 1


def test_vmap_of_complex_functions_matches_a_loop():
    z, w = randc(np.complex128, 4, 3), randc(np.complex128, 3)
    for f in (lambda z, w: tnp.exp(z) * w, lambda z, w: tnp.sum(z * tnp.conj(w)), lambda z, w: tnp.abs(z) + w.real,
              lambda z, w: z @ w, lambda z, w: tj.grad(lambda z: tnp.abs(tnp.sin(z * w).sum()) ** 2)(z)):
        got = tj.vmap(f, in_axes=(0, None))(z, w)
        np.testing.assert_allclose(got, np.stack([tj.jit(f)(r, w) for r in z]), rtol=1e-12)

# -------------------------------------------------------------------------------- autodiff, as JAX


jax = pytest.importorskip("jax")
jnp = jax.numpy

# (tracejit function, JAX function): holomorphic ones
HOLOMORPHIC = [
    (lambda z: z * z, lambda z: z * z), (tnp.exp, jnp.exp), (tnp.log, jnp.log), (tnp.sqrt, jnp.sqrt),
    (tnp.sin, jnp.sin), (tnp.cos, jnp.cos), (tnp.tanh, jnp.tanh), (lambda z: 1 / (z + 2), lambda z: 1 / (z + 2)),
    (lambda z: z ** 3 - 2j * z, lambda z: z ** 3 - 2j * z), (lambda z: z ** (1 + 1j), lambda z: z ** (1 + 1j)),
    (lambda z: tnp.exp(tnp.sin(z)) / tnp.sqrt(z), lambda z: jnp.exp(jnp.sin(z)) / jnp.sqrt(z)),
    (lambda z: tnp.square(z) * tnp.power(z, 2), lambda z: jnp.square(z) * jnp.power(z, 2)),
]
# real-valued functions of complex arguments
REAL_OF_COMPLEX = [
    (lambda z: tnp.abs(z) ** 2, lambda z: jnp.abs(z) ** 2), (lambda z: tnp.abs(z), lambda z: jnp.abs(z)),
    (lambda z: tnp.real(z * z), lambda z: jnp.real(z * z)),
    (lambda z: tnp.imag(tnp.exp(z)), lambda z: jnp.imag(jnp.exp(z))),
    (lambda z: tnp.angle(z), lambda z: jnp.angle(z)), (lambda z: tnp.real(tnp.conj(z) * tnp.log(z)),
                                                     lambda z: jnp.real(jnp.conj(z) * jnp.log(z))),
    (lambda z: tnp.abs(tnp.sin(z) * z) + tnp.real(z) * tnp.imag(z),
     lambda z: jnp.abs(jnp.sin(z) * z) + z.real * z.imag),
    (lambda z: tnp.abs(tnp.sqrt(z)) * tnp.abs(z - 1j), lambda z: jnp.abs(jnp.sqrt(z)) * jnp.abs(z - 1j)),
]
POINTS = [np.complex128(3 + 4j), np.complex128(-0.5 + 0.25j), np.complex128(1.5 - 2j), np.complex128(-2 - 1j)]


def test_the_documented_conventions():
    assert tj.grad(lambda z: abs(z) ** 2)(np.complex128(3 + 4j)) == pytest.approx(6 - 8j)
    assert tj.grad(lambda z: z * z, holomorphic=True)(np.complex128(3 + 4j)) == 6 + 8j


@pytest.mark.parametrize("k", range(len(HOLOMORPHIC)))
def test_holomorphic_derivatives_as_jax(k):
    f, g = HOLOMORPHIC[k]
    for z in POINTS:
        for ours, theirs in ((tj.grad, jax.grad), (tj.jacfwd, jax.jacfwd), (tj.jacrev, jax.jacrev)):
            np.testing.assert_allclose(ours(f, holomorphic=True)(z), theirs(g, holomorphic=True)(z), rtol=1e-12)
        t = np.complex128(0.3 - 0.7j)
        (out, tan), (jout, jtan) = tj.jvp(f, (z,), (t,)), jax.jvp(g, (z,), (t,))
        np.testing.assert_allclose([out, tan], [jout, jtan], rtol=1e-12)
        (out, back), (jout, jback) = tj.vjp(f, z), jax.vjp(g, z)
        np.testing.assert_allclose(back(t), jback(t), rtol=1e-12)
    zs = np.array(POINTS)
    np.testing.assert_allclose(tj.jacfwd(lambda z: f(z) * z[::-1], holomorphic=True)(zs),
                               jax.jacfwd(lambda z: g(z) * z[::-1], holomorphic=True)(zs), rtol=1e-12)
    np.testing.assert_allclose(tj.jit(tj.jacrev(lambda z: f(z) * z[::-1], holomorphic=True))(zs),
                               jax.jacrev(lambda z: g(z) * z[::-1], holomorphic=True)(zs), rtol=1e-12)


@pytest.mark.parametrize("k", range(len(REAL_OF_COMPLEX)))
def test_non_holomorphic_derivatives_as_jax(k):
    f, g = REAL_OF_COMPLEX[k]
    for z in POINTS:
        np.testing.assert_allclose(tj.grad(f)(z), jax.grad(g)(z), rtol=1e-12)
        np.testing.assert_allclose(tj.jit(tj.grad(f))(z), jax.grad(g)(z), rtol=1e-12)
        t = np.complex128(0.3 - 0.7j)
        np.testing.assert_allclose(tj.jvp(f, (z,), (t,)), jax.jvp(g, (z,), (t,)), rtol=1e-12)
        np.testing.assert_allclose(tj.vjp(f, z)[1](1.5), jax.vjp(g, z)[1](1.5), rtol=1e-12)
    zs = np.array(POINTS)
    np.testing.assert_allclose(tj.jacrev(lambda z: f(z) * tnp.arange(4.0))(zs),
                               jax.jacrev(lambda z: g(z) * jnp.arange(4.0))(zs), rtol=1e-12)
    np.testing.assert_allclose(tj.vmap(tj.grad(f))(zs), jax.vmap(jax.grad(g))(zs), rtol=1e-12)


def test_complex_functions_of_real_arguments_and_back_as_jax():
    x = np.array([0.3, -1.2, 2.0])

    def ours(x):
        z = lax.complex(x, x * x)
        return tnp.sum(tnp.abs(tnp.exp(1j * x) * z + tnp.conj(z))) + tnp.real(tnp.sum(z @ z))

    def theirs(x):
        z = jax.lax.complex(x, x * x)
        return jnp.sum(jnp.abs(jnp.exp(1j * x) * z + jnp.conj(z))) + jnp.real(jnp.sum(z @ z))

    np.testing.assert_allclose(tj.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-12)
    np.testing.assert_allclose(tj.hessian(ours)(x), jax.hessian(theirs)(x), rtol=1e-10)
    np.testing.assert_allclose(tj.jacfwd(lambda x: tnp.exp(1j * x))(x), jax.jacfwd(lambda x: jnp.exp(1j * x))(x),
                               rtol=1e-12)
    np.testing.assert_allclose(tj.grad(lambda x: tnp.real(tnp.exp(1j * x) * (x + 0j)).sum())(x),
                               jax.grad(lambda x: jnp.real(jnp.exp(1j * x) * (x + 0j)).sum())(x), rtol=1e-12)
    z = randc(np.complex128, 3)
    np.testing.assert_allclose(tj.grad(lambda z: tnp.sum(tnp.real(z) ** 2 + tnp.imag(z)))(z),
                               jax.grad(lambda z: jnp.sum(jnp.real(z) ** 2 + jnp.imag(z)))(z), rtol=1e-12)
    with warnings.catch_warnings():       # astype to real: the real part, with NumPy's warning (JAX deprecates it)
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        np.testing.assert_allclose(tj.grad(lambda z: tnp.sum(z.astype(np.float64) ** 2))(z),
                                   jax.grad(lambda z: jnp.sum(jnp.real(z) ** 2))(z), rtol=1e-12)
        np.testing.assert_allclose(tj.grad(lambda x: tnp.abs(x.astype(np.complex128) * (1 + 2j)))(1.5),
                                   jax.grad(lambda x: jnp.abs(x.astype(jnp.complex128) * (1 + 2j)))(1.5), rtol=1e-12)


def test_control_flow_derivatives_as_jax():
    z = np.array([1 + 2j, -0.5 + 0.3j, 0.2 - 1j])

    def f(M, L):
        return lambda z: (M.abs(L.scan(lambda c, x: (c * x + 1j, c), z[0], z)[0])
                          + M.real(L.fori_loop(0, 3, lambda i, c: c * c * 0.5, z[1]))
                          + M.abs(L.cond(True, M.exp, lambda z: z, z[2])))

    np.testing.assert_allclose(tj.grad(f(tnp, lax))(z), jax.grad(f(jnp, jax.lax))(z), rtol=1e-12)

    def g(L):
        return lambda z: L.scan(lambda c, x: (c * x, c), z[0], z)[0]

    np.testing.assert_allclose(tj.jacfwd(g(lax), holomorphic=True)(z), jax.jacfwd(g(jax.lax), holomorphic=True)(z),
                               rtol=1e-12)


def test_matmul_gradients_as_jax():
    a, b = randc(np.complex128, 3, 4), randc(np.complex128, 4, 2)
    for ours, theirs in ((lambda a, b: tnp.abs(a @ b).sum(), lambda a, b: jnp.abs(a @ b).sum()),
                         (lambda a, b: tnp.real(tnp.einsum("ij,jk->", a, b.conj())),
                          lambda a, b: jnp.real(jnp.einsum("ij,jk->", a, b.conj())))):
        for got, want in zip(tj.grad(ours, argnums=(0, 1))(a, b), jax.grad(theirs, argnums=(0, 1))(a, b)):
            np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(tj.jacrev(lambda a: a @ b, holomorphic=True)(a),
                               jax.jacrev(lambda a: a @ b, holomorphic=True)(a), rtol=1e-12)


def test_derivatives_check_numerically():
    z = randc(np.complex128, 3)
    for f, _ in HOLOMORPHIC[:6] + REAL_OF_COMPLEX[:4]:
        tj.test_util.check_grads(f, (z,), 2)


def test_dtype_errors_as_jax():
    z, x = np.complex128(1 + 1j), 1.5
    errors = [
        (lambda: tj.grad(lambda z: z * z)(z), jax.grad(lambda z: z * z),
         "requires real-valued outputs.*holomorphic=True"),
        (lambda: tj.grad(lambda x: x * x, holomorphic=True)(x), jax.grad(lambda x: x * x, holomorphic=True),
         "holomorphic=True requires inputs with complex dtype"),
        (lambda: tj.grad(lambda z: tnp.abs(z), holomorphic=True)(z), jax.grad(jnp.abs, holomorphic=True),
         "holomorphic=True requires outputs with complex dtype"),
        (lambda: tj.jacfwd(lambda z: z * z)(z), jax.jacfwd(lambda z: z * z), "jacfwd requires real-valued inputs"),
        (lambda: tj.jacrev(lambda z: z * z)(z), jax.jacrev(lambda z: z * z), "jacrev requires real-valued outputs"),
        (lambda: tj.jacfwd(lambda z: tnp.abs(z), holomorphic=True)(z), jax.jacfwd(jnp.abs, holomorphic=True),
         "jacfwd with holomorphic=True requires outputs with complex dtype"),
    ]
    for ours, theirs, message in errors:
        with pytest.raises(TypeError, match=message):
            ours()
        arg = x if "inputs with complex" in message else z
        with pytest.raises(TypeError):
            theirs(arg)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hypot_is_the_vectorized_modulus(dtype):
    """hypot(x, y) compiles to the modulus of x + iy (cmathlib's abs, vectorized): NumPy's bits for float32 (rounded
    once from double), within an ulp of them for float64 (scaled where x*x + y*y would overflow or lose bits), inf
    where either is infinite even beside a NaN, and a vectorized loop."""
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.standard_normal(3000) * s for s in (1.0, 1e-160, 1e160, 1e-310)]).astype(dtype)
    y = np.concatenate([rng.standard_normal(3000) * s for s in (1.0, 1e-160, 1e160, 1e-300)]).astype(dtype)
    x[:5], y[:5] = [np.inf, np.nan, np.nan, -0.0, np.finfo(dtype).max], [np.nan, -np.inf, 1.0, 0.0, np.finfo(dtype).max]
    f = tj.jit(tnp.hypot)
    with np.errstate(all="ignore"):
        got, want = f(x, y), np.hypot(x, y)
    assert got[0] == got[1] == np.inf and np.isnan(got[2]) and got[3] == 0 and got[4] == np.inf
    finite = np.isfinite(want)
    ulps = np.abs(got[finite] - want[finite]) / np.spacing(want[finite])
    assert ulps.max() <= (0 if dtype == np.float32 else 1)
    assert [k["vectorized"] for k in f.lower(x, y).compile().kernels()] == [True]


def test_complex64_abs_is_correctly_rounded():
    """|z| of complex64 squares its parts in double (exact, no overflow possible) and rounds the root once: the
    float32 nearest to the exact hypot (NumPy's own SIMD loop is within 2 ulp of it), infinite where a part is,
    even beside a NaN, and NaN where a part is NaN otherwise."""
    rng = np.random.default_rng(3)
    z = np.concatenate([(rng.uniform(-1, 1, 4000) + 1j * rng.uniform(-1, 1, 4000)) * scale
                        for scale in (1.0, 1e-30, 1e30, 1e-44, 3e38)]).astype(np.complex64)
    z[:6] = [complex(np.inf, np.nan), complex(np.nan, -np.inf), complex(np.nan, 1.0), 0.0, complex(-0.0, 3.0),
             complex(3e38, 3e38)]
    with np.errstate(over="ignore"):
        exact = np.hypot(z.real.astype(np.float64), z.imag.astype(np.float64)).astype(np.float32)
    got = tj.jit(tnp.abs)(z)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, exact)
    assert got[0] == got[1] == np.inf and np.isnan(got[2]) and got[5] == np.inf
