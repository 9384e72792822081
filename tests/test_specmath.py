"""The vectorizable special functions (tracejit.backend.specmath) compiled in a loop: accuracy in f64 ulp against
mpmath, in f32 against SciPy's float64 values, special values against SciPy, and that the loops vectorize; and
their NumPy execution (ArrayBody, the primitives' impls) against the compiled code."""
import re

import numpy as np
import pytest
from test_mathlib import _apply, _apply_inlined, _apply_library, _compiled, _llvm

from tracejit.backend import libcalls, specmath
from tracejit.backend.specmath import FUNCS

mp = pytest.importorskip("mpmath")
sc = pytest.importorskip("scipy.special")

# Max f64 error in ulp against mpmath, for positive arguments of lgamma and digamma (their negative zeros are
# checked in absolute terms): the specmath docstring has the measured values.
_F64_ULP = {"erf": 2, "erfc": 3.5, "erfcx": 3, "ndtr": 3.5, "log_ndtr": 3.5, "erf_inv": 3, "ndtri": 3.5,
            "lgamma": 4.5, "digamma": 4, "gamma": 4.5, "i0e": 4, "i1e": 3.5}

# Max f32 error in f32 ulp of the functions computed in f32 arithmetic (specmath.NATIVE_F32; measured over every
# 251st f32 bit pattern: the specmath docstring)
_F32_ULP = {"erf": 1.5, "erfc": 3.5, "erfcx": 2.5, "ndtr": 4, "log_ndtr": 4, "erf_inv": 3.5, "ndtri": 3.5}


def _erfcinv(q):
    """z with erfc(z) = q, by Newton's method on log erfc (mpmath has no erfcinv; erfinv(1 - q) loses q)."""
    z = mp.sqrt(-mp.log(q))
    for _ in range(60):
        step = (mp.log(mp.erfc(z)) - mp.log(q)) * mp.erfc(z) * mp.sqrt(mp.pi) / -2 * mp.exp(z * z)
        z -= step
        if abs(step) < 1e-22 * z:
            break
    return z


def _erfcx(v):
    """exp(v**2) erfc(v), with the digits exp(v**2) needs; past 1e7, three terms of its series."""
    if v >= 1e7:
        return (1 - 1 / (2 * v * v) + 3 / (4 * v**4)) / (mp.sqrt(mp.pi) * v)
    with mp.workdps(mp.mp.dps + int(max(0, 2 * mp.log10(abs(v) + 1)))):
        return +(mp.exp(v * v) * mp.erfc(v))


# the true values (mpmath at the working precision), also used by scripts/measure_special_math.py
REFERENCE = {
    "erf": mp.erf, "erfc": mp.erfc, "ndtr": mp.ncdf, "erfcx": _erfcx,
    "log_ndtr": lambda v: (mp.log1p(-mp.ncdf(-v)) if v >= 0 else mp.log(mp.ncdf(v)) if v > -1e4 else  # then its series
                           -v * v / 2 - mp.log(-v * mp.sqrt(2 * mp.pi)) + mp.log1p(-1 / v**2 + 3 / v**4)),
    "erf_inv": lambda y: mp.sign(y) * _erfcinv(1 - abs(y)) if abs(y) > 0.5 else mp.erfinv(y),
    "ndtri": lambda p: -mp.sqrt(2) * _erfcinv(2 * p) if p < 0.5 else mp.sqrt(2) * _erfcinv(2 * (1 - p)),
    "lgamma": lambda v: mp.log(abs(mp.gamma(v))), "digamma": mp.digamma, "gamma": mp.gamma,
    "i0e": lambda v: mp.besseli(0, v) * mp.exp(-abs(v)), "i1e": lambda v: mp.besseli(1, v) * mp.exp(-abs(v)),
}


def _inputs(name, rng, n=400):
    u = rng.uniform
    tail = 10.0 ** u(-300, 0, n)
    table = {
        "erf": [u(-6, 6, n), u(-1.2, 1.2, n), tail],
        "erfc": [u(-6, 27.2, n), u(-1.2, 1.2, n)],
        "erfcx": [u(-26, 60, n), 10.0 ** u(0, 300, n), tail],
        "ndtr": [u(-38, 9, n), u(-1.5, 1.5, n)],
        "log_ndtr": [u(-60, 40, n), -(10.0 ** u(1, 150, n))],
        "erf_inv": [u(-1, 1, n), 1 - 10.0 ** u(-16, 0, n), tail],
        "ndtri": [u(0, 1, n), tail, 1 - 10.0 ** u(-16, 0, n)],
        "lgamma": [u(0, 30, n), 10.0 ** u(-300, 305, n), u(0.5, 2.5, n)],
        "digamma": [u(0, 30, n), 10.0 ** u(-300, 305, n), u(1, 2, n)],
        "gamma": [u(0, 171, n), u(-170, 0, n), 10.0 ** u(-300, 0, n)],
        "i0e": [u(-40, 40, n), u(-9, 9, n), rng.choice([-1, 1], n) * 10.0 ** u(-300, 300, n)],
        "i1e": [u(-40, 40, n), u(-9, 9, n), rng.choice([-1, 1], n) * 10.0 ** u(-300, 300, n)],
    }
    return np.concatenate(table[name])


def _ulp_error(y, x, name):
    """|y - f(x)| in units of the f64 spacing at f(x), f(x) from mpmath at 30 digits; results that are subnormal,
    zero or not finite must be exactly those of the reference rounded."""
    errors = []
    with mp.workdps(30):
        for xi, yi in zip(x, y):
            ref = REFERENCE[name](mp.mpf(float(xi)))
            hi = float(ref)
            if not np.isfinite(hi) or abs(hi) < np.finfo(np.float64).tiny:
                errors.append(0.0 if yi == hi or abs(yi - hi) <= 2 * np.spacing(0.0) else np.inf)
                continue
            errors.append(float(abs(mp.mpf(float(yi)) - ref)) / np.spacing(abs(hi)))
    return np.array(errors)


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="ArrayBody's fma needs x87 long double")
@pytest.mark.parametrize("name", FUNCS)
def test_f64_accuracy(name):
    x = _inputs(name, np.random.default_rng(0))
    err = _ulp_error(_apply(name, "double", x, library=specmath), x, name)
    worst = np.argmax(err)
    assert err[worst] <= _F64_ULP[name], (name, x[worst], err[worst])


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_negative_arguments_near_the_zeros(name):
    """Between the poles of lgamma and digamma the results cross zero: there the error is bounded in absolute
    terms (as SciPy's, which uses the same reflection), and digamma's root near -0.504 is relatively accurate."""
    x = np.concatenate([np.random.default_rng(1).uniform(-25, 0, 1500), -0.5040830082644554 + np.linspace(-0.09, 0.09, 50)])
    y = _apply(name, "double", x, library=specmath)
    with mp.workdps(30):
        ref = np.array([float(REFERENCE[name](mp.mpf(v))) for v in x])
    np.testing.assert_allclose(y, ref, rtol=4e-16, atol=2e-15)
    near = np.abs(x + 0.504) < 0.1
    if name == "digamma":
        np.testing.assert_allclose(y[near], ref[near], rtol=4e-16)


_SCIPY = {"erf": sc.erf, "erfc": sc.erfc, "erfcx": sc.erfcx, "erf_inv": sc.erfinv, "ndtr": sc.ndtr, "ndtri": sc.ndtri,
          "log_ndtr": sc.log_ndtr, "lgamma": sc.gammaln, "digamma": sc.digamma, "gamma": sc.gamma,
          "i0e": sc.i0e, "i1e": sc.i1e}


@pytest.mark.parametrize("name", FUNCS)
def test_f32_accuracy(name):
    """Within _F32_ULP f32 ulp of SciPy's float64 values, subnormal f32 results included: one where computed in
    double and rounded once (about half of one measured)."""
    rng = np.random.default_rng(2)
    with np.errstate(over="ignore"):
        x = _inputs(name, rng, 3000).astype(np.float32)
    if name in ("lgamma", "digamma", "gamma"):
        x = np.concatenate([x, rng.uniform(-30, 0, 3000).astype(np.float32)])
    y = _apply(name, "float", x, library=specmath)
    with np.errstate(all="ignore"):
        ref = _SCIPY[name](x.astype(np.float64))
        ref32 = ref.astype(np.float32)
        err = np.abs(y.astype(np.float64) - ref) / np.spacing(np.abs(ref32)).astype(np.float64)
    same = (y == ref32) | (np.isnan(y) & np.isnan(ref32))
    err = np.where(same, 0, err)
    worst = np.argmax(err)
    assert err[worst] <= _F32_ULP.get(name, 1.0), (name, x[worst], y[worst], ref[worst])


def _special_values(ty):
    info = np.finfo(np.float32 if ty == "float" else np.float64)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, -2.5, 30.0, -30.0,
                     1e-10, -1e-10, 1e6, -1e6, 2.0**60, -(2.0**60), info.max, -info.max, info.tiny,
                     0.9999999, 0.25, 0.75], info.dtype)


@pytest.mark.parametrize("ty", ["float", "double"])
@pytest.mark.parametrize("name", FUNCS)
def test_special_values(name, ty):
    """SciPy's special values (infinities, NaN, poles, signed zeros); finite values nearby against mpmath (SciPy's
    own ndtr(-30) and gammaln(1 - 1e-7) are 1e-13 and 3e-9 relative from the true values)."""
    x = _special_values(ty)
    with np.errstate(all="ignore"):
        ref = _SCIPY[name](x.astype(np.float64)).astype(x.dtype)
    exact = np.isinf(ref) | (ref == 0) | np.isnan(ref)
    with mp.workdps(30):
        finite = np.array([float(REFERENCE[name](mp.mpf(float(v)))) for v in x[~exact]]).astype(x.dtype)
    for got in (_apply(name, ty, x, library=specmath), specmath.evaluate(name, x)):
        assert np.array_equal(got[exact], ref[exact], equal_nan=True), (x[exact], got[exact], ref[exact])
        signed = exact & ~np.isnan(ref)
        assert np.array_equal(np.signbit(got[signed]), np.signbit(ref[signed]))
        np.testing.assert_allclose(got[~exact], finite, rtol=1e-6 if ty == "float" else 1e-14)


def test_subnormal_results_are_not_flushed():
    """Where SciPy returns 0 for a subnormal result (erfc, ndtr) or inf for a subnormal argument (gammaln), the
    kernels keep the true value."""
    with mp.workdps(30):
        for name, x, ref in (("erfc", 27.0, mp.erfc(27)), ("ndtr", -38.0, mp.ncdf(-38)),
                             ("lgamma", 5e-324, -mp.log(mp.mpf(5e-324)))):
            got = _apply(name, "double", np.array([x]), library=specmath)[0]
            assert got != 0 and np.isfinite(got)
            assert abs(got - float(ref)) <= 2 * np.spacing(float(ref)) + 1e-323, (name, got, ref)


@pytest.mark.parametrize("name", FUNCS)
def test_numpy_execution_matches_compiled(name):
    """The primitives' NumPy impls run the same kernels on arrays (ArrayBody): within a few ulp of the compiled
    code (f32 results mostly identical), away from the negative zeros of lgamma and digamma."""
    rng = np.random.default_rng(3)
    x = _inputs(name, rng, 300)
    for ty, dtype, rtol in (("double", np.float64, 2e-15), ("float", np.float32, 2.5e-7)):
        with np.errstate(over="ignore"):
            xs = x.astype(dtype)
        got, want = specmath.evaluate(name, xs), _apply(name, ty, xs, library=specmath)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=np.finfo(dtype).tiny)


@pytest.mark.parametrize("ty", ["float", "double"])
@pytest.mark.parametrize("name", FUNCS)
def test_loop_vectorizes(name, ty):
    llvm = pytest.importorskip("llvmlite.binding")
    _llvm()
    if not llvm.get_host_cpu_features().get("avx"):
        pytest.skip("checks x86 AVX vector registers")
    asm = _compiled(name, ty, specmath)[1]
    assert re.search(r"\bzmm\d+|\bymm\d+", asm), name
    assert not re.search(r"^\s*call", asm, re.MULTILINE), name


def test_unknown_function():
    with pytest.raises(ValueError, match="no special function"):
        specmath.math_function_ir("exp", "double")


@pytest.mark.parametrize("ty", ["float", "double"])
@pytest.mark.parametrize("name", libcalls.SPECIAL)
def test_library_functions_give_the_inlined_bits_at_every_width(name, ty):
    """erf, erfc, erfcx and ndtr are the vector math library's (libcalls.SPECIAL), which computes erf's and
    erfc's small arguments' expression alone for a vector with every lane below specmath.SMALL's bound: at every
    width the bits of the inlined definition, on such vectors, on vectors with one lane at or past the bound (or
    NaN, or infinite) wherever it is, and on wide arguments."""
    dtype = np.float32 if ty == "float" else np.float64
    bound = specmath.SMALL.get(name, (1.0,))[0]
    rng = np.random.default_rng(4)
    small = rng.uniform(-bound, bound, 16 * 64)
    odd_ones = []
    for i, v in enumerate([bound, -bound, np.nan, np.inf, -np.inf, 3.0, -30.0, np.nextafter(bound, 2)] * 2):
        block = rng.uniform(-bound, bound, 16)
        block[i] = v
        odd_ones.append(block)
    with np.errstate(over="ignore"):
        x = np.concatenate([small, *odd_ones, _inputs(name, rng, 400), [np.nextafter(bound, 0), 0, -0.0]]).astype(dtype)
    bits = f"u{np.dtype(dtype).itemsize}"
    want = _apply_inlined(name, ty, x, library=specmath).view(bits)
    for lanes in libcalls.LANES:
        np.testing.assert_array_equal(_apply_library(name, ty, lanes, x).view(bits), want, err_msg=(name, ty, lanes))


@pytest.mark.parametrize("ty", ["float", "double"])
@pytest.mark.parametrize("name", libcalls.SPECIAL)
def test_loops_call_the_library_function(name, ty):
    """A compiled loop calls the library's special functions by name, widened to its full-width vector function,
    and the module defines none of their code."""
    import tracejit as tj
    from tracejit.backend import llvm
    from tracejit.scipy import special
    fn, dtype = getattr(special, name), np.float32 if ty == "float" else np.float64
    x = np.linspace(-3.0, 3.0, 10_000, dtype=dtype)
    chain = tj.jit(lambda x: fn(fn(x) * 0.5 + 0.25))
    inner = _SCIPY[name](x.astype(np.float64)).astype(dtype) * dtype(0.5) + dtype(0.25)
    ref = _SCIPY[name](inner.astype(np.float64))
    np.testing.assert_allclose(chain(x), ref, rtol=4 * np.finfo(dtype).eps, atol=4 * np.finfo(dtype).eps)
    text = chain.lower(x).as_llvm()
    lanes = llvm.vector_bytes() // np.dtype(dtype).itemsize
    assert re.search(rf"call <{lanes} x {ty}> @tj_{name}_{ty}_v{lanes}\(", text), name
    assert not re.search(rf"^define .*@tj_{name}_", text, re.MULTILINE)


# ------------------------------------------------------------------------------------- zeta (specmath_zeta)
def _zeta_cases(rng, n=300):
    """s and q: positive q, and negative q (integer s) down past -1, where the scalar definition loops."""
    s = np.concatenate([rng.uniform(1.01, 40, n), np.round(rng.uniform(2, 12, n))])
    q = np.concatenate([10.0 ** rng.uniform(-3, 3, n), rng.uniform(-60, 0, n)])
    return s, q


@pytest.mark.parametrize("ty", ["float", "double"])
def test_zeta_library_gives_the_scalar_bits_at_every_width(ty):
    """zeta is the vector math library's (specmath.LANEWISE): a vector with every q >= -1 in straight-line code,
    one with a lane below it lane by lane through the scalar definition: at every width the scalar function's bits
    on vectors of either kind and on special values, and SciPy's values within 1e-12 (float64)."""
    dtype = np.float32 if ty == "float" else np.float64
    s, q = _zeta_cases(np.random.default_rng(7))
    s = np.concatenate([s, [1.0, 2.0, 2.5, np.inf, np.inf, np.nan, 3.0, 2.0]])
    q = np.concatenate([q, [1.0, -2.0, -2.5, 1.0, 2.0, 1.0, np.inf, 0.0]])
    s, q = s.astype(dtype), q.astype(dtype)
    bits = f"u{np.dtype(dtype).itemsize}"
    scalar = _apply_library("zeta", ty, 1, s, q)
    for lanes in libcalls.LANES[1:]:
        np.testing.assert_array_equal(_apply_library("zeta", ty, lanes, s, q).view(bits), scalar.view(bits),
                                      err_msg=(ty, lanes))
    with np.errstate(all="ignore"):
        want = sc.zeta(s.astype(np.float64), q.astype(np.float64))
    if ty == "double":
        np.testing.assert_allclose(scalar, want, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(specmath.evaluate("zeta", s, q), scalar, rtol=1e-13 if ty == "double" else 1e-6,
                               equal_nan=True)


def test_zeta_and_polygamma_loops_call_the_library_function():
    """Under jit, zeta is a call of the library's full-width vector function and polygamma (a simplify rule)
    zeta's, lgamma's and digamma's code: trigamma within 1e-13 of SciPy, m = 0 digamma, non-integer m NaN."""
    import tracejit as tj
    from tracejit.backend import llvm
    x = np.linspace(-30.5, 40.0, 4096)
    m = np.resize([0, 1, 2, 3, 1.5], x.size)
    got = tj.jit(tj.lax.polygamma)(m, x)
    with np.errstate(all="ignore"):
        want = np.where(m == np.floor(m), sc.polygamma(np.floor(m).astype(int), x), np.nan)
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
    text = tj.jit(tj.lax.polygamma).lower(m, x).as_llvm()
    lanes = llvm.vector_bytes() // 8
    assert re.search(rf"call <{lanes} x double> @tj_zeta_double_v{lanes}\(", text)
    assert not re.search(r"^define .*@tj_zeta_", text, re.MULTILINE)
    assert "polygamma" not in str(tj.make_ir(tj.lax.polygamma, optimize=True)(m, x))


# ------------------------------------------------------------------ the looping kernels (specmath_incomplete)
def _incomplete_cases(rng, n=300):
    u = rng.uniform
    a = np.concatenate([u(0.01, 30, n), 10.0 ** u(-3, 4, n), u(100, 5000, n)])
    x = np.concatenate([u(0, 60, n), 10.0 ** u(-3, 4, n), a[2 * n:] * u(0.9, 1.1, n)])   # x near a large a
    return a, x


def test_incomplete_gamma_compiled_agrees_with_arrays_and_scipy():
    """The compiled loop (a scalar loop per element) and ArrayBody's passes over the unfinished elements compute
    the same kernel: within a few ulp of each other, and within 1e-12 of SciPy, where x is near a large a too
    (the series and fraction then take O(sqrt a) steps)."""
    import tracejit as tj
    from tracejit.scipy import special as S
    a, x = _incomplete_cases(np.random.default_rng(4))
    for fn, name, ref in ((S.gammainc, "igamma", sc.gammainc), (S.gammaincc, "igammac", sc.gammaincc)):
        compiled, arrays = tj.jit(fn)(a, x), specmath.evaluate(name, a, x)
        np.testing.assert_allclose(compiled, arrays, rtol=1e-13, atol=1e-300, err_msg=name)
        np.testing.assert_allclose(compiled, ref(a, x), rtol=1e-11, atol=1e-300, err_msg=name)
    b = np.random.default_rng(5).uniform(0.01, 40, a.size)
    y = np.random.default_rng(6).uniform(0, 1, a.size)
    aa = np.minimum(a, 2000.0)        # (results down to 1e-265 there, whose prefactor exp(-600) keeps 1e-13)
    np.testing.assert_allclose(tj.jit(S.betainc)(aa, b, y), specmath.evaluate("betainc", aa, b, y), rtol=5e-13,
                               atol=1e-300)
    got, want = tj.jit(S.betainc)(aa, b, y), sc.betainc(aa, b, y)
    far = want < 1e-200          # where SciPy loses digits (1e-7 at 7.6e-264) and underflows (0 for 5.9e-287)
    np.testing.assert_allclose(got[~far], want[~far], rtol=1e-11, atol=1e-300)
    with mp.workdps(40):
        exact = [float(mp.betainc(p, q, 0, v, regularized=True)) for p, q, v in zip(aa[far][:4], b[far][:4], y[far][:4])]
    np.testing.assert_allclose(got[far][:4], exact, rtol=5e-13)


def test_incomplete_gamma_derivative_in_a_against_mpmath():
    import tracejit as tj
    a = np.array([0.3, 2.5, 7.9, 8.1, 40.0, 300.0])
    x = np.array([0.2, 4.0, 7.0, 9.5, 38.0, 310.0])
    got = tj.jit(tj.lax.igamma_grad_a)(a, x)
    with mp.workdps(30):
        want = [float(mp.diff(lambda t, w=w: mp.gammainc(t, 0, w, regularized=True), v)) for v, w in zip(a, x)]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    np.testing.assert_allclose(specmath.evaluate("igamma_grad_a", a, x), want, rtol=1e-10)


def test_incomplete_special_values_compiled():
    """SciPy's edges (and NaN, which ends a loop at once), compiled as eager; float32 rounds the double result."""
    import tracejit as tj
    from tracejit.scipy import special as S
    inf, nan = np.inf, np.nan
    a = np.array([0.0, 1.0, 2.0, -1.0, inf, 1.0, 0.0, 2.0, nan, inf])
    z = np.array([0.0, 0.0, inf, 1.0, 1.0, -1.0, 1.0, nan, 1.0, inf])
    with np.errstate(all="ignore"):
        for fn, ref in ((S.gammainc, sc.gammainc), (S.gammaincc, sc.gammaincc)):
            np.testing.assert_array_equal(tj.jit(fn)(a, z), ref(a, z))
            np.testing.assert_array_equal(tj.jit(fn)(a.astype(np.float32), z.astype(np.float32)),
                                          ref(a, z).astype(np.float32))
        grad_a = tj.jit(tj.lax.igamma_grad_a)(a, z)
        assert np.array_equal(np.isnan(grad_a), np.isnan(sc.gammainc(a, z))) and (grad_a[~np.isnan(grad_a)] == 0).all()
        b = np.array([0.0, 0.0, inf, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, nan])
        u = np.array([0.5, 0.5, 0.5, 0.5, 0.0, 1.0, 1.5, 0.5, nan, 0.5])
        np.testing.assert_allclose(tj.jit(S.betainc)(a, b, u), sc.betainc(a, b, u), rtol=1e-15)
