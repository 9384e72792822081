"""fmod, copysign, nextafter, frexp, ldexp, float_power, signbit, spacing, divmod, modf, pow, i0, gcd and lcm:
values bit for bit against NumPy (special values, subnormals, signed zeros, NaN signs where NumPy defines them) in
float16, bfloat16, float32 and float64, eagerly and under jit (float_power and i0 within ulps); dtypes (integer
promotion, weak Python scalars) as NumPy's; derivatives against JAX; compiled as vectorized loop nests, not through
the Python driver."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]
UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def specials(dtype, extra=True):
    """Zeros, ones, the smallest subnormal and normal, the largest value, infinities and NaNs, each signed, a
    subnormal that is not the smallest, and some ordinary values."""
    info = ml_dtypes.finfo(dtype)
    tiny, sub, big = float(info.tiny), float(info.smallest_subnormal), float(info.max)
    values = [0.0, 1.0, 1.5, 0.3, tiny, sub, 3 * sub, tiny - sub, big, np.inf, 7.25, 1e-3]
    if extra:
        values += list(np.random.default_rng(0).standard_normal(6) * 10)
    values = values + [-v for v in values] + [np.nan]
    out = np.array(values, np.float64).astype(dtype)
    bits = out.view(UINT[dtype.itemsize])
    return np.concatenate([out, (bits[-1:] | np.array(1 << (8 * dtype.itemsize - 1), bits.dtype)).view(dtype)])


def assert_same(got, want, nan_sign=False, ulps=0):
    """Same dtype, shape and bits (NaNs: any payload; their sign too with nan_sign); with ulps, finite nonzero
    values within that many units in the last place."""
    got, want = np.asarray(got), np.asarray(want)
    if ulps:
        with np.errstate(invalid="ignore"):
            close = np.isfinite(want) & (want != 0) & (np.abs(got - want) <= ulps * np.spacing(np.abs(want)))
            got = np.where(close, want, got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if got.dtype.kind not in "fV" and got.dtype != BF16:
        np.testing.assert_array_equal(got, want)
        return
    u = UINT[got.dtype.itemsize]
    nan_g, nan_w = np.isnan(got.astype(np.float64)), np.isnan(want.astype(np.float64))
    np.testing.assert_array_equal(nan_g, nan_w)
    gb, wb = got.view(u), want.view(u)
    bad = (gb != wb) & ~nan_g
    if nan_sign:
        bad |= nan_g & ((gb >> (8 * got.dtype.itemsize - 1)) != (wb >> (8 * got.dtype.itemsize - 1)))
    assert not bad.any(), f"differ at {np.argwhere(bad).ravel()}: got {got[bad]} want {want[bad]}"


def both(f, *args):
    """f's results eagerly and under jit (each a tuple)."""
    eager, jitted = f(*args), tj.jit(f)(*args)
    as_tuple = (lambda r: r if isinstance(r, tuple) else (r,))
    return as_tuple(eager), as_tuple(jitted)


def check(name, args, want, nan_sign=False):
    ulps = 2 if name == "float_power" else 0       # C's pow, NumPy's own and tracejit's differ by an ulp
    for got in both(getattr(tnp, name), *args):
        for g, w in zip(got, want if isinstance(want, tuple) else (want,)):
            assert_same(g, w, nan_sign, ulps)


def quiet(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return f(*args)


# ----------------------------------------------------------------------------------------------- values


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_unary_against_numpy(dtype):
    x = specials(dtype)
    check("signbit", [x], np.signbit(x))
    check("spacing", [x], quiet(np.spacing, x))
    check("frexp", [x], np.frexp(x))
    check("modf", [x], quiet(np.modf, x))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_binary_against_numpy(dtype):
    s = specials(dtype, extra=False)
    x, y = s[:, None], s[None, :]
    check("copysign", [x, y], np.copysign(x, y), nan_sign=True)
    check("nextafter", [x, y], quiet(np.nextafter, x, y))
    check("fmod", [x, y], quiet(np.fmod, x, y))
    check("divmod", [x, y], quiet(np.divmod, x, y))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_ldexp_overflow_underflow_rounding(dtype):
    """Rounded once into the subnormals (ties to even), overflow to inf, any integer exponent dtype."""
    info = ml_dtypes.finfo(dtype)
    x = specials(dtype)[:, None]
    span = int(info.maxexp) - int(info.minexp) + int(info.nmant)
    n = np.array([0, 1, -1, 3, -3, int(info.maxexp), -int(info.maxexp), span, -span, span + 5, -span - 5,
                  int(info.minexp) - 1, int(info.minexp) - int(info.nmant), 2 ** 40, -2 ** 40], np.int64)[None, :]
    # the exact product rounded once: float32 holds every 16-bit float's scaled values exactly (NumPy's float16
    # does this; ml_dtypes' bfloat16 ldexp does not round its subnormals)
    wide = x.astype(np.float32) if dtype.itemsize == 2 else x
    check("ldexp", [x, n], quiet(lambda: np.ldexp(wide, n).astype(dtype)))
    for ints in (np.int8, np.uint8, np.int32, np.uint32, np.uint64, np.bool_):
        m = np.array([0, 1, 5, 100], ints)
        check("ldexp", [x, m], quiet(lambda m=m: np.ldexp(wide, m.astype(np.int64)).astype(dtype)))


def test_frexp_ldexp_round_trip_subnormals():
    x = np.array([5e-324, 1e-310, -2.5e-320, 2.2250738585072014e-308, 1e300], np.float64)
    m, e = tnp.frexp(x)
    assert e.dtype == np.int32 and np.all((np.abs(m) >= 0.5) & (np.abs(m) < 1))
    assert_same(tnp.ldexp(m, e), x)
    assert_same(tj.jit(lambda x: tnp.ldexp(*tnp.frexp(x)))(x), x)


def test_nextafter_steps():
    """Across zero, toward infinities and NaN, out of the subnormals; and spacing of the same."""
    x = np.array([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.0, np.inf, -np.inf, 1.0, 0.0])
    y = np.array([-1.0, 1.0, -1.0, 1.0, 0.0, 2.0, 0.0, np.inf, np.nan, -0.0])
    check("nextafter", [x, y], np.nextafter(x, y))
    assert np.signbit(tnp.nextafter(0.0, -0.0)) and np.signbit(tnp.nextafter(-5e-324, 1.0))
    assert tnp.nextafter(np.float32(1), 2.0) == np.float32(1.0000001)


def test_float_power_is_pow_in_float64():
    x = np.array([-0.0, -np.inf, 2.0, -8.0, 0.0, 1.5], np.float32)
    for y in (0.5, np.float32(3), np.array([0.5, 0.5, -1, 1 / 3, -2, 2.5], np.float32)):
        check("float_power", [x, y], quiet(np.float_power, x, y))
    check("float_power", [1.5, np.array([2.0, 0.5])], np.float_power(1.5, np.array([2.0, 0.5])))
    z = np.array([1 + 2j, -1j], np.complex64)
    got, want = tnp.float_power(z, 2.5), np.float_power(z, 2.5)  # (tnp.power's complex pow: its accuracy)
    assert got.dtype == want.dtype == np.complex128
    np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(tj.jit(tnp.float_power)(z, 2.5), want, rtol=1e-14)


# ----------------------------------------------------------------------------------------------- dtypes

PROMOTION = [  # (name, args): result dtypes as NumPy's
    ("fmod", (np.array([5, -7], np.int8), np.array([3, 0], np.uint8))),
    ("fmod", (np.array([True, False]), np.array([True, True]))),
    ("fmod", (np.array([-7, 7], np.int64), np.array([-1, 0], np.int64))),
    ("fmod", (np.array([-7.5, 7], np.float32), 2)),
    ("fmod", (np.array([-7.5, 7], np.float16), 2.5)),
    ("copysign", (np.array([3, -2], np.int8), -1)),
    ("copysign", (np.array([3, -2], np.int16), np.array([1.0, -0.0], np.float16))),
    ("copysign", (np.array([3, 2], np.float32), -0.0)),
    ("nextafter", (np.array([1, 2], np.int32), 0)),
    ("nextafter", (np.array([1, 2], np.float16), 3.0)),
    ("spacing", (np.array([1, 200], np.uint8),)),
    ("frexp", (np.array([3, -20], np.int16),)),
    ("frexp", (np.array([True, False]),)),
    ("ldexp", (np.array([3, -2], np.int8), 2)),
    ("ldexp", (np.array([3, -2], np.float32), np.array([2, 200], np.int64))),
    ("ldexp", (3.0, np.array([1, -2], np.int32))),
    ("float_power", (np.array([2, 3], np.int8), 2)),
    ("float_power", (np.array([2, 3], np.float16), np.float32(0.5))),
    ("signbit", (np.array([-1, 0], np.int8),)),
    ("signbit", (np.array([True, False]),)),
    ("signbit", (np.array([2**63, 0], np.uint64),)),
    ("modf", (np.array([3, -20], np.int8),)),
    ("divmod", (np.array([7, -7], np.int16), np.array([2, 2], np.int8))),
    ("divmod", (np.array([7.5, -7], np.float32), 2)),
]


@pytest.mark.parametrize("name, args", PROMOTION, ids=[f"{n}-{i}" for i, (n, _) in enumerate(PROMOTION)])
def test_promotion_as_numpy(name, args):
    want = quiet(getattr(np, name), *args)
    check(name, args, want)


def test_weak_python_scalars_under_jit():
    x = np.array([1.5, -0.0, 3.0], np.float32)
    for f in (lambda x, s: tnp.fmod(x, s), lambda x, s: tnp.copysign(x, s), lambda x, s: tnp.nextafter(x, s)):
        assert tj.jit(f)(x, -2.0).dtype == np.float32
    assert tj.jit(lambda x, n: tnp.ldexp(x, n))(x, 3).dtype == np.float32
    assert tj.jit(lambda x, s: tnp.float_power(x, s))(x, 2.0).dtype == np.float64
    assert tj.jit(lambda s: tnp.signbit(s))(-0.0)
    with pytest.raises(OverflowError):
        tnp.fmod(np.array([1, 2], np.int8), 300)


def test_errors():
    for name, args in [("copysign", (1j, 1.0)), ("nextafter", (1j, 1.0)), ("frexp", (1j,)), ("spacing", (1j,)),
                       ("signbit", (np.array([1j]),)), ("ldexp", (1j, 2)), ("ldexp", (1.0, 2.0)),
                       ("ldexp", (1.0, np.array([2.0]))), ("fmod", (1j, 1.0)), ("modf", (1j,))]:
        with pytest.raises(TypeError):
            getattr(tnp, name)(*args)


def test_jax_names_and_pow_alias():
    jnp = pytest.importorskip("jax.numpy")
    for name in ["fmod", "copysign", "nextafter", "frexp", "ldexp", "float_power", "signbit", "spacing", "divmod",
                 "modf", "pow", "i0", "gcd", "lcm"]:
        assert hasattr(jnp, name) and callable(getattr(tnp, name))
    assert tnp.pow is tnp.power


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_dtypes_as_jax(jax64, dtype):
    """The result dtypes of float arrays are jax.numpy's (but float_power's: NumPy's float64)."""
    jnp = jax64.numpy
    x = specials(dtype)[:6]
    for name, args in [("fmod", (x, x)), ("copysign", (x, -x)), ("nextafter", (x, -x)), ("spacing", (x,)),
                       ("frexp", (x,)), ("ldexp", (x, np.arange(6))), ("signbit", (x,)), ("modf", (x,)),
                       ("divmod", (x, x)), ("i0", (x,))]:
        ours, theirs = getattr(tnp, name)(*args), getattr(jnp, name)(*args)
        ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
        assert [o.dtype for o in ours] == [t.dtype for t in theirs], name


# ---------------------------------------------------------------------------------------------- derivatives

GRAD_POINTS = np.array([-7.5, -2.0, -0.3, 0.7, 3.0, 5.5])


def _grads(m, api, name, x, y):
    return api.vmap(api.grad(lambda a, b: getattr(m, name)(a, b), argnums=(0, 1)))(x, y)


@pytest.mark.parametrize("name", ["fmod", "copysign", "float_power"])
def test_binary_grads_against_jax(jax64, name):
    x = GRAD_POINTS if name != "float_power" else np.abs(GRAD_POINTS)
    y = np.array([2.0, -3.0, 0.25, -0.0, 1.5, 2.0])
    want = _grads(jax64.numpy, jax64, name, x, y)
    for got in (_grads(tnp, tj, name, x, y), tj.jit(lambda x, y: _grads(tnp, tj, name, x, y))(x, y)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)


def test_copysign_grad_at_zeros(jax64):
    """JAX's: through abs, whose derivative at +-0.0 is +1."""
    for a, b in [(0.0, 1.0), (0.0, -1.0), (-0.0, -1.0), (-0.0, 2.0), (2.0, -0.0)]:
        want = jax64.grad(jax64.numpy.copysign, argnums=(0, 1))(a, b)
        assert tj.grad(tnp.copysign, argnums=(0, 1))(a, b) == tuple(float(w) for w in want)


def test_unary_grads_against_jax(jax64):
    jnp = jax64.numpy
    x = np.concatenate([GRAD_POINTS, [0.0, 1e-300]])
    cases = [(lambda m, x: m.frexp(x)[0], None), (lambda m, x: m.modf(x)[0], None),
             (lambda m, x: m.modf(x)[1], None), (lambda m, x: m.divmod(x, 2.5)[1], None),
             (lambda m, x: m.divmod(x, 2.5)[0], None), (lambda m, x: m.ldexp(x, 3), 3),
             (lambda m, x: m.ldexp(x, -1080), -1080), (lambda m, x: m.ldexp(x, 2000), 2000)]
    for f, n in cases:
        want = jax64.vmap(jax64.grad(lambda a, f=f: f(jnp, a)))(x)
        got = tj.vmap(tj.grad(lambda a, f=f: f(tnp, a)))(x)
        jitted = tj.jit(tj.vmap(tj.grad(lambda a, f=f: f(tnp, a))))(x)
        if n is not None:      # ldexp at 0: 2**n (JAX's select makes it 1 there)
            want = np.where(x == 0, quiet(np.ldexp, 1.0, n), want)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(jitted, want, rtol=1e-12)


def test_frexp_jvp_and_hessian(jax64):
    x = np.array([3.0, -0.1, 1e5])
    t = np.array([1.0, 2.0, -1.0])
    (_, e), (dm, de) = tj.jvp(tnp.frexp, (x,), (t,))
    _, (jdm, _) = jax64.jvp(jax64.numpy.frexp, (x,), (t,))
    np.testing.assert_allclose(dm, jdm, rtol=1e-15)       # (XLA's exp2(-e) is not exact; ours is)
    assert e.dtype == np.int32 and not np.any(de)
    assert tj.hessian(lambda a: tnp.frexp(a)[0])(3.0) == 0.0
    assert tj.grad(lambda a: tnp.ldexp(a, 4) ** 2)(1.5) == 2 * 1.5 * 256


def test_spacing_and_nextafter_derivatives():
    """Not defined, as in JAX (NotImplementedError); a constant operand is fine."""
    assert tj.grad(lambda x: x * tnp.nextafter(1.0, 2.0) + tnp.spacing(2.0))(3.0) == np.nextafter(1.0, 2.0)
    for f in (lambda x: tnp.nextafter(x, 2.0), lambda x: tnp.nextafter(2.0, x), tnp.spacing):
        with pytest.raises(NotImplementedError, match="nextafter"):
            tj.grad(f)(1.0)
        with pytest.raises(NotImplementedError, match="nextafter"):
            tj.jit(tj.vmap(tj.grad(f)))(np.ones(3))
        with pytest.raises(NotImplementedError, match="nextafter"):
            tj.jvp(f, (1.0,), (1.0,))


def test_vmap_and_signbit_under_grad():
    x = specials(np.dtype(np.float64))
    assert_same(tj.vmap(tnp.nextafter, in_axes=(0, None))(x, 1.0), np.nextafter(x, 1.0))
    assert_same(tj.vmap(lambda v: tnp.frexp(v)[1])(x), np.frexp(x)[1])
    assert tj.grad(lambda v: tnp.where(tnp.signbit(v), -v, v))(-2.0) == -1.0


# -------------------------------------------------------------------------------------------------- compiled

COMPILED = {
    "fmod": lambda x: tnp.fmod(x, 1.5), "copysign": lambda x: tnp.copysign(2.0, x),
    "nextafter": lambda x: tnp.nextafter(x, 0.0), "spacing": tnp.spacing, "signbit": tnp.signbit,
    "frexp": tnp.frexp, "ldexp": lambda x: tnp.ldexp(x, 7), "float_power": lambda x: tnp.float_power(x, 1.5),
    "modf": tnp.modf, "divmod": lambda x: tnp.divmod(x, 1.5),
    "frexp_grad": tj.grad(lambda x: tnp.sum(tnp.frexp(x)[0])), "ldexp_grad": tj.grad(lambda x: tnp.sum(tnp.ldexp(x, 3))),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, BF16], ids=str)
@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_vectorized_loops(name, dtype):
    """Each runs as fused loop nests (no Python-driver step, no custom call left), vectorized."""
    x = np.linspace(-50, 50, 1 << 15).astype(dtype)
    kernels = tj.jit(COMPILED[name]).lower(x).compile().kernels()
    loops = [k for k in kernels if k["kind"] == "loop"]
    assert loops and all(k["kind"] in ("loop", "kernel") for k in kernels), kernels
    assert all(k["vectorized"] for k in loops if k["elements"] == x.size), kernels


# ------------------------------------------------------------------------------------------- i0, gcd, lcm


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_i0_against_numpy(dtype):
    """NumPy's series: a few ulps in float64 and float32 (FMA contraction), overflow where NumPy's exp does."""
    x = np.concatenate([np.linspace(-30, 30, 241), [0.0, 8.0, -8.0, 80.0, 95.0, 700.0, 713.0, np.inf, -np.inf,
                                                    np.nan]]).astype(dtype)
    want = quiet(np.i0, x.astype(np.float32) if dtype.itemsize == 2 else x).astype(dtype)
    for got in both(tnp.i0, x):
        assert_same(got[0], want, ulps=4 if dtype.itemsize > 2 else 1)


def test_i0_dtypes_and_grads(jax64):
    assert tnp.i0(np.int8(3)).dtype == np.float64 and tnp.i0(np.float32(3)).dtype == np.float32
    x = np.array([-20.0, -7.9, -0.5, 0.0, 0.25, 3.0, 8.0, 8.5, 40.0])
    want = jax64.vmap(jax64.grad(jax64.numpy.i0))(x)       # i1(x), and 0 at 0
    np.testing.assert_allclose(tj.vmap(tj.grad(tnp.i0))(x), want, rtol=2e-14)
    np.testing.assert_allclose(tj.jit(tj.vmap(tj.grad(tnp.i0)))(x), want, rtol=2e-14)
    assert tj.grad(tj.grad(tnp.i0))(0.0) == jax64.grad(jax64.grad(jax64.numpy.i0))(0.0) == 0.0
    with pytest.raises(TypeError):
        tnp.i0(1j)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.uint64])
def test_gcd_lcm_against_numpy(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(1)
    a = np.concatenate([rng.integers(info.min, info.max, 50, dtype, endpoint=True),
                        np.array([0, 0, 1, info.max, info.min, info.min, 12, 2 ** 6], dtype)])
    b = np.concatenate([rng.integers(info.min, info.max, 50, dtype, endpoint=True) // 7,
                        np.array([0, 5, 0, info.max, 0, info.min, 18, 2 ** 5], dtype)])
    check("gcd", [a, b], np.gcd(a, b))
    check("lcm", [a, b], np.lcm(a, b))
    check("gcd", [a[:, None], b[None, :8]], np.gcd(a[:, None], b[None, :8]))


def test_gcd_lcm_promotion_vmap_errors():
    check("gcd", [np.array([12, 18], np.int8), np.array([18, 4], np.uint8)],
          np.gcd(np.array([12, 18], np.int8), np.array([18, 4], np.uint8)))
    check("lcm", [np.arange(6), 4], np.lcm(np.arange(6), 4))
    a, b = np.array([[12, 18], [3, 9]]), np.array([[8, 4], [6, 0]])
    np.testing.assert_array_equal(tj.vmap(tnp.gcd)(a, b), np.gcd(a, b))
    np.testing.assert_array_equal(tj.jit(tj.vmap(tnp.lcm, in_axes=(0, None)))(a, b[0]), np.lcm(a, b[0]))
    for name in ("gcd", "lcm"):
        with pytest.raises(TypeError):
            getattr(tnp, name)(np.array([1.5]), 2)


def test_i0_and_gcd_compiled():
    x = np.linspace(-50, 50, 1 << 15)
    kernels = tj.jit(tnp.i0).lower(x).compile().kernels()
    assert [k["kind"] for k in kernels] == ["loop"] and kernels[0]["vectorized"], kernels
    n = np.arange(1 << 15)
    kernels = tj.jit(tnp.lcm).lower(n, n[::-1]).compile().kernels()
    assert {k["kind"] for k in kernels} == {"loop", "control"}, kernels    # no Python-driver step
