"""tracejit.scipy.special's dawsn, sici, fresnel, wofz, owens_t, hyp1f1, hyp2f1, bessel_jn and sph_harm_y: values
against SciPy (and mpmath where SciPy itself is less accurate), dtypes, shapes and special values against JAX,
derivatives against the exact formulas, JAX and finite differences, under jit and vmap."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.scipy import special as S
from tracejit.test_util import check_grads

sc = pytest.importorskip("scipy.special")
try:
    import jax
    import jax.scipy.special as js
except ImportError:
    jax = js = None

rng = np.random.default_rng(7)
inf, nan = np.inf, np.nan


def _mixed(n=120, lo=-1e4, hi=1e4):
    """Uniform, log-spaced and special points, covering each function's series / fraction split points."""
    return np.concatenate([rng.uniform(-12, 12, n), np.geomspace(1e-6, hi, n // 2), -np.geomspace(1e-6, -lo, n // 4),
                           [0.0, 1.59, 1.61, 3.99, 4.01, 6.99, 7.01]])


def _hyp1f1_args(n=150):
    a, b = rng.uniform(0.05, 30, n), rng.uniform(0.05, 30, n)
    x = rng.uniform(-200, 200, n)
    x = np.where((a > b) & (x < -10), -x, x)    # the cancelling region, tested on its own below
    # + the asymptotic series' range, and polynomials a = -n at x > 0 (the recurrence in n; the series cancels there)
    return [np.concatenate([a, [2.0, 0.5, -9.0, -10.0, -10.0]]),
            np.concatenate([b, [3.0, 0.7, 13.811633207382341, 6.929895251053412, 18.53045397265903]]),
            np.concatenate([x, [150.0, -300.0, 33.02141916492771, 33.075990582404216, 19.035467647818308]])]


def _hyp2f1_args(n=160):
    a, b, c = rng.uniform(-8, 8, n), rng.uniform(-8, 8, n), rng.uniform(0.1, 10, n)
    x = rng.uniform(-20, 1, n)
    a[:20] = np.round(a[:20])                                   # polynomials
    c[20:60] = a[20:60] + b[20:60] + rng.integers(-5, 6, 40)    # integer c - a - b (A&S 15.3.10-12)
    x[40:80] = rng.uniform(0.75, 1, 40)                         # near 1
    return [a, b, c, x]


# name: (tracejit function, SciPy reference, arguments, rtol, atol). Tolerances: SciPy's own error where it is the
# larger (its dawsn is 1e-14 off for small x, its Fresnel integrals beyond 1e4 lose 1e-11: checked against mpmath
# below), a few ulp of cancellation where a result crosses zero (Ci, sph_harm's real and imaginary parts), and
# Miller's recurrence for bessel_jn (n_iter = 50 at |z| <= 25: 2e-13, as JAX). JAX's own errors on these ranges
# (measured): wofz 3e-13, owens_t 2e-8, hyp1f1 and hyp2f1 up to 1e76 and 1e238 (x << 0), fresnel 2e-5 at 3e4.
VALUES = {
    "dawsn": (S.dawsn, sc.dawsn, [_mixed()], 2e-14, 0),
    "sici": (S.sici, sc.sici, [_mixed(hi=1e8)], 1e-14, 1e-15),
    "fresnel": (S.fresnel, sc.fresnel, [_mixed(lo=-1e3, hi=1e3)], 5e-14, 0),
    "owens_t": (S.owens_t, sc.owens_t, [rng.uniform(-10, 10, 200), np.concatenate(
        [rng.uniform(-5, 5, 100), 10 ** rng.uniform(-3, 3, 100)])], 2e-13, 0),
    "hyp1f1": (S.hyp1f1, sc.hyp1f1, _hyp1f1_args(), 1e-12, 0),     # a > b, x < 0 cancels: 1e-12 at x = -6
    "hyp2f1": (S.hyp2f1, sc.hyp2f1, _hyp2f1_args(), 2e-10, 0),   # SciPy off by 5e-10 near 1 (mpmath below)
    "bessel_jn": (lambda z: S.bessel_jn(z, v=5), lambda z: sc.jv(np.arange(6)[:, None], z),
                  [np.concatenate([rng.uniform(-25, 25, 100), [0.0, 1e-8, -3.0]])], 0, 3e-13),
}


JITTED = {}


def _jitted(name):
    """One Jitted per function for the whole file, so equal signatures compile once."""
    if name not in JITTED:
        JITTED[name] = tj.jit(VALUES[name][0])
    return JITTED[name]


def _at(name, *args):
    """VALUES[name]'s compiled function at a few points, padded with VALUES's arguments to reuse its compiled
    program (a new signature would compile again)."""
    k = len(args[0])
    got = _jitted(name)(*[np.concatenate([a, v[:len(v) - k]]) for a, v in zip(args, VALUES[name][2])])
    return tuple(g[:k] for g in got) if isinstance(got, tuple) else got[:k]


@pytest.mark.parametrize("name", VALUES)
def test_values_against_scipy(name):
    """Compiled float64 within the tolerances above; float32 arguments give float32 within 2e-6 of SciPy's value
    at the rounded arguments (the computation is float64, rounded once)."""
    fn, ref, args, rtol, atol = VALUES[name]
    with np.errstate(all="ignore"):
        want = ref(*args)
    got = _jitted(name)(*args)
    for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,)))):
        assert g.dtype == np.float64 and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
    if name in ("hyp1f1", "hyp2f1"):       # float64 inside, like the others: only the dtype (a second compile of
        assert tj.eval_shape(fn, *[a.astype(np.float32) for a in args]).dtype == np.float32    # these costs 1 s)
        return
    args32 = [a.astype(np.float32) for a in args]
    with np.errstate(all="ignore"):
        want32 = ref(*[a.astype(np.float64) for a in args32])
    got32 = tj.jit(fn)(*args32)
    for g, w in zip(*((got32, want32) if isinstance(want32, tuple) else ((got32,), (want32,)))):
        assert g.dtype == np.float32
        finite = np.isfinite(w) & (np.abs(w) < 1e30) & (np.abs(w) > 1e-30)
        np.testing.assert_allclose(g[finite], w[finite].astype(np.float32), rtol=2e-6, atol=max(atol, 1e-7),
                                   err_msg=name)


def test_values_where_scipy_is_less_accurate_against_mpmath():
    """fresnel for large x (SciPy reduces pi x**2 / 2 inexactly), hyp2f1 with integer c - a - b near x = 1,
    dawsn at small x, and hyp1f1 in its cancelling region a > b, x << 0 (1e-5 there: documented)."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    x = np.array([68131.3611554707, 1000000.3, 5.3])
    s, c = _at("fresnel", x)
    np.testing.assert_allclose(s, [float(mp.fresnels(v)) for v in x], rtol=1e-15)
    np.testing.assert_allclose(c, [float(mp.fresnelc(v)) for v in x], rtol=1e-15)
    args = np.array([[-6.872815031393895, -4.964022071788802, -16.836837103182695, 0.8549997043752863],
                     [1.0, 2.0, 3.0, 0.99], [0.5, 1.5, 2.0, 0.999999], [0.5, 1.5, 2.0, -3.0],
                     [-7.0, -0.30541343077683614, 8.209841894193211, -10.15372147920941]])
    want = [float(mp.hyp2f1(*row)) for row in args]
    np.testing.assert_allclose(_at("hyp2f1", *args.T), want, rtol=2e-13)
    np.testing.assert_allclose(_at("dawsn", np.array([0.013364615573611285])), [0.013363024291699289], rtol=1e-15)
    a, b, x = np.array([26.2107341865742, 1.5]), np.array([7.959294138768817, 2.5]), np.array([-51.0257274552725, -40.])
    np.testing.assert_allclose(_at("hyp1f1", a, b, x), [float(mp.hyp1f1(*v)) for v in zip(a, b, x)], rtol=1e-4)


def test_wofz_against_scipy():
    """Over the plane (both half planes, the axes, out to |z| = 30): relative error of w below 1e-13 (JAX's: 3e-13,
    and on the real axis Re w = exp(-x**2) to 2e-3 relative at x = 5, where ours is exact). Further out in the lower
    half plane exp(-z**2)'s phase is ill-conditioned (SciPy and this are both 2e-12 off at 147 - 147i); where it
    overflows, +-inf as SciPy."""
    z = rng.uniform(-12, 12, 300) + 1j * rng.uniform(-12, 12, 300)
    z = np.concatenate([z, 10 ** rng.uniform(-8, 1.5, 60) * np.exp(1j * rng.uniform(0, 2 * np.pi, 60)),
                        rng.uniform(-30, 30, 20) + 0j, 1j * rng.uniform(-20, 30, 20), [5.0, 0j, 7.9j + 0.1]])
    got, want = tj.jit(S.wofz)(z), sc.wofz(z)
    assert got.dtype == np.complex128
    np.testing.assert_array_less(np.abs(got - want), 1e-13 * np.abs(want))
    real = z.imag == 0
    np.testing.assert_allclose(got[real].real, np.exp(-z[real].real ** 2), rtol=1e-14)
    far = np.array([120.0 - 150j, -60 - 80j])
    np.testing.assert_array_equal(S.wofz(far), sc.wofz(far))
    for dtype in (np.float32, np.complex64):      # computed in complex128 and rounded, as the real functions
        assert tj.eval_shape(S.wofz, np.ones(2, dtype)).dtype == np.complex64
    assert tj.eval_shape(S.wofz, np.ones(2, np.int32)).dtype == np.complex128


def test_sph_harm_y_against_scipy_and_jax():
    n = rng.integers(0, 9, 200)
    m = np.clip(rng.integers(-8, 9, 200), -n, n)
    theta, phi = rng.uniform(0, np.pi, 200), rng.uniform(0, 2 * np.pi, 200)
    got = tj.jit(lambda *a: S.sph_harm_y(*a, n_max=8))(n, m, theta, phi)
    assert got.dtype == np.complex128 and got.shape == (200,)
    np.testing.assert_allclose(got, sc.sph_harm_y(n, m, theta, phi), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(S.sph_harm_y(n, m, theta, phi), got, rtol=1e-14, atol=1e-15)   # n_max = max(n)
    # near the poles sin(theta) is taken directly: JAX's sqrt(1 - cos**2) gives 0 at theta = 1e-9
    poles = np.array([1e-9, np.pi - 1e-9])
    np.testing.assert_allclose(S.sph_harm_y(np.array([5, 5]), np.array([2, -2]), poles, np.zeros(2)),
                               sc.sph_harm_y(np.array([5, 5]), np.array([2, -2]), poles, 0.0), rtol=1e-12)
    assert S.sph_harm_y(np.array([3]), np.array([1]), np.float32(0.3), np.float32(0.2)).dtype == np.complex64
    with pytest.raises(NotImplementedError):
        S.sph_harm_y(np.array([1]), np.array([0]), 0.3, 0.2, diff_n=1)
    with pytest.raises(tj.errors.ConcretizationTypeError):
        tj.jit(S.sph_harm_y)(np.array([1]), np.array([0]), np.array([0.3]), np.array([0.2]))
    assert S.sph_harm_y(np.array([2]), np.array([1]), 0.3, 0.2).shape == (1,)     # a scalar theta: JAX's (1,)


# name: (arguments, {index: JAX 0.10.2's value where it is not SciPy's}). JAX agrees with SciPy on the others
# (checked when written; its calls cost seconds of compilation each, so they are not repeated here). Where JAX is
# wrong SciPy's (true) value is kept: owens_t(0, inf) = 1/4 (JAX NaN), hyp1f1(NaN, 1, 1) NaN (JAX 1).
SPECIAL = {
    "dawsn": ([np.array([0.0, -0.0, inf, -inf, nan, -3.0, 1e10])], {}),
    "sici": ([np.array([0.0, inf, -inf, nan, -3.0, 1e8])], {}),
    "fresnel": ([np.array([0.0, -0.0, inf, -inf, nan, -3.0])], {}),
    "owens_t": ([np.array([0.0, 1.0, inf, nan, 1.0, -1.0, 1.0, 3.0, 0.0]),
                 np.array([1.0, inf, 1.0, 1.0, nan, 0.5, -2.0, 0.0, inf])], {}),
    "hyp1f1": ([np.array([0.0, 1.0, 1.0, 2.0, 0.0, nan, -2.0]), np.array([0.0, 1.0, 0.0, 3.0, 2.0, 1.0, -3.0]),
                np.array([1.0, 2.0, 1.0, nan, 3.0, 1.0, 1.0])], {0: 1.0}),     # JAX's 1F1(0; 0; x) = 1
    "hyp2f1": ([np.array([1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.5]), np.array([1.0, 1.0, 2.0, 1.0, 1.0, 1.0, 0.5]),
                np.array([2.0, 3.0, 0.0, 0.0, 2.0, 2.0, 2.0]), np.array([1.0, 1.0, 0.5, 0.5, 0.0, 1.5, 1.0])],
               {3: inf}),                                                   # JAX: inf at c = 0 even for a = 0
}


@pytest.mark.parametrize("name", SPECIAL)
def test_special_values_and_dtypes_as_jax(name):
    """Infinities, zeros (with their signs), NaN and JAX's conventions; result dtypes (by eval_shape) for float32,
    float64 and integer arguments as JAX's with x64 (float32 stays float32 also for owens_t, where JAX 0.10 returns
    float64); complex arguments refused."""
    args, jax_differs = SPECIAL[name]
    with np.errstate(all="ignore"):
        want = getattr(sc, name)(*args)
    got = _at(name, *args)
    for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,)))):
        for i, v in jax_differs.items():
            w[i] = v
        np.testing.assert_allclose(g, w, rtol=1e-13, equal_nan=True, err_msg=name)
        np.testing.assert_array_equal(np.signbit(g[w == 0]), np.signbit(w[w == 0]), err_msg=name)
    for dtype, out in ((np.float32, np.float32), (np.float64, np.float64), (np.int32, np.float64)):
        ours = tj.eval_shape(getattr(S, name), *[np.ones(3, dtype) for _ in args])
        for o in ours if isinstance(ours, tuple) else (ours,):
            assert o.dtype == out and o.shape == (3,), name
    with pytest.raises(TypeError):
        tj.eval_shape(getattr(S, name), *[np.ones(2, np.complex128) for _ in args])


def test_bessel_jn_shapes_dtypes_and_special_values():
    z = np.array([[0.0, 1.0, -1.0], [2.5, nan, inf]])
    out = S.bessel_jn(z, v=3)
    assert out.shape == (4, 2, 3) and out.dtype == np.float64
    np.testing.assert_allclose(out[:, 0, :], sc.jv(np.arange(4)[:, None], z[0]), rtol=1e-14, atol=1e-16)
    assert np.isnan(out[:, 1, 1]).all() and (out[:, 1, 2] == 0).all()
    small = S.bessel_jn(np.array([1e-5], np.float32), v=2)       # JAX's float32 overflows to NaN here
    assert small.dtype == np.float32
    np.testing.assert_allclose(small[:, 0], sc.jv([0, 1, 2], 1e-5), rtol=1e-6)
    assert S.bessel_jn(3, v=1, n_iter=20).shape == (2,)
    if js is not None:
        assert S.bessel_jn(np.ones(4, np.float32), v=2).shape == js.bessel_jn(np.ones(4, np.float32), v=2).shape
    with pytest.raises(TypeError):
        S.bessel_jn(z, v=1.5)
    with pytest.raises(ValueError):
        S.bessel_jn(z.astype(np.complex64), v=1)


def test_vmap_under_jit_agrees_with_direct_calls():
    """Batched on axis 1 into axis -1, all in one compiled program (sici, fresnel, hyp1f1 and hyp2f1 are batched,
    hyp* with unbatched arguments, by the vmap(grad) of test_reverse_mode_and_second_derivatives_compiled)."""
    x = rng.uniform(-6, 6, (3, 4))
    fns = (S.dawsn, S.wofz, lambda v: S.owens_t(v, 0.7), lambda v: S.bessel_jn(v, v=2))   # (sici, fresnel: below)
    got = tj.jit(lambda x: [tj.vmap(fn, in_axes=1, out_axes=-1)(x) for fn in fns])(x)
    for fn, g in zip(fns, got):
        np.testing.assert_allclose(g, fn(x), rtol=1e-14, atol=1e-300)


def _jvp(fn, args, i):
    """The derivative of an elementwise fn in argument i at every element (a jvp with a tangent of ones)."""
    return tj.jvp(lambda v: fn(*args[:i], v, *args[i + 1:]), (args[i],), (tnp.ones_like(args[i]),))[1]


def _partials(fn, args):
    """Every partial derivative of an elementwise fn: one jvp, batched over the unit tangent directions (one trace
    of the derivative rule, not one per argument)."""
    def along(*units):
        return tj.jvp(fn, tuple(args), tuple(u * tnp.ones_like(a) for u, a in zip(units, args)))[1]
    return list(tj.vmap(along)(*np.eye(len(args))))


def _central(ref, args, i, h=1e-6):
    up = [a + h if k == i else a for k, a in enumerate(args)]
    down = [a - h if k == i else a for k, a in enumerate(args)]
    return (ref(*up) - ref(*down)) / (2 * h)


def test_derivatives_against_exact_formulas_and_finite_differences():
    """Exact formulas where they exist (to 1e-12); the parameter derivatives of hyp1f1 and hyp2f1 against central
    differences of SciPy's values (1e-6: the differences' own truncation and rounding). One compiled program."""
    x = rng.uniform(0.2, 8, 20) * rng.choice([-1, 1], 20)
    z = x + 1j * rng.uniform(-3, 3, 20)
    h, a = x, rng.uniform(-3, 3, 20)
    args1 = [np.concatenate([rng.uniform(0.5, 6, 16), [1.5, 2.5, 0.7, 3.0]]),      # + the asymptotic range
             np.concatenate([rng.uniform(0.5, 6, 16), [2.5, 1.2, 3.3, 4.0]]),
             np.concatenate([rng.uniform(-30, 30, 16), [150.0, -150.0, 90.0, -200.0]])]
    args2 = [rng.uniform(-3, 3, 20), rng.uniform(-3, 3, 20), rng.uniform(0.5, 5, 20), rng.uniform(-0.9, 0.9, 20)]
    args2[3][0] = 0.95                  # the parameter derivatives' series are defined for |x| <= 0.9 only: NaN
    zb = rng.uniform(-10, 10, 6)

    def program(x, z, a, args1, args2, zb):
        ones = tnp.ones_like(x)
        return (_partials(S.dawsn, [x]), tj.jvp(S.sici, (x,), (ones,))[1], tj.jvp(S.fresnel, (x,), (ones,))[1],
                tj.jvp(S.wofz, (z,), (tnp.ones_like(z),))[1], _partials(S.owens_t, [x, a]),
                _partials(S.hyp1f1, args1), _partials(S.hyp2f1, args2),
                tj.jacfwd(lambda v: S.bessel_jn(v, v=2))(zb))

    (dawsn,), (si, ci), (s, c), w, (d_h, d_a), d1, d2, jac = tj.jit(program)(x, z, a, args1, args2, zb)
    np.testing.assert_allclose(dawsn, 1 - 2 * x * sc.dawsn(x), rtol=1e-12)
    np.testing.assert_allclose(si, np.sin(x) / x, rtol=1e-12)
    np.testing.assert_allclose(ci, np.cos(x) / x, rtol=1e-12)
    np.testing.assert_allclose(s, np.sin(np.pi * x * x / 2), atol=1e-13)
    np.testing.assert_allclose(c, np.cos(np.pi * x * x / 2), atol=1e-13)
    np.testing.assert_allclose(w, -2 * z * sc.wofz(z) + 2j / np.sqrt(np.pi), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(d_h, -np.exp(-h * h / 2) * sc.erf(a * h / np.sqrt(2)) / (2 * np.sqrt(2 * np.pi)),
                               rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(d_a, np.exp(-(1 + a * a) * h * h / 2) / (2 * np.pi * (1 + a * a)), rtol=1e-12)
    for i, d in enumerate(d1):
        np.testing.assert_allclose(d, _central(sc.hyp1f1, args1, i), rtol=1e-6, err_msg=i)
    for i, d in enumerate(d2):
        np.testing.assert_allclose(d[1:], _central(sc.hyp2f1, args2, i)[1:], rtol=1e-6, atol=1e-9, err_msg=i)
        assert np.isnan(d[0]) == (i < 3)
    np.testing.assert_allclose(jac.diagonal(axis1=1, axis2=2), sc.jvp(np.arange(3)[:, None], zb), atol=1e-12)


def test_derivatives_against_jax():
    """JAX's derivative rules for dawsn, owens_t and sici (the same formulas: to 1e-12), in one JAX program; and
    sph_harm_y's derivatives in theta and phi (autodiff in both) against central differences of SciPy's."""
    x = rng.uniform(0.2, 5, 8)
    n, m = np.array([1, 2, 3, 4, 5, 6, 7, 8]), np.array([0, 1, -2, 3, -4, 2, 0, -1])
    theta, phi = rng.uniform(0.1, 3, 8), rng.uniform(0, 6, 8)
    ours = tj.jit(lambda x, theta, phi: [*_partials(S.dawsn, [x]), *_partials(S.owens_t, [x, x - 2]),
                                         *tj.jvp(S.sici, (x,), (tnp.ones_like(x),))[1],
                                         *_partials(lambda t, p: S.sph_harm_y(n, m, t, p, n_max=8), [theta, phi])])
    ours = ours(x, theta, phi)
    for i, arg in enumerate((theta, phi)):
        args = [n, m, theta, phi]
        np.testing.assert_allclose(ours[5 + i], _central(sc.sph_harm_y, args, 2 + i), rtol=1e-7, atol=1e-9)
    if jax is None:
        pytest.skip("JAX is the reference")

    def theirs(x):
        ones = jax.numpy.ones_like(x)
        out = [jax.jvp(js.dawsn, (x,), (ones,))[1]]
        out.append(jax.jvp(lambda v: js.owens_t(v, x - 2), (x,), (ones,))[1])
        out.append(jax.jvp(lambda v: js.owens_t(x, v), (x - 2,), (ones,))[1])
        return out + list(jax.jvp(js.sici, (x,), (ones,))[1])

    for k, (o, w) in enumerate(zip(ours[:5], jax.jit(theirs)(x))):
        np.testing.assert_allclose(o, np.asarray(w), rtol=1e-12, atol=1e-15, err_msg=str(k))


def test_reverse_mode_and_second_derivatives_compiled():
    """grad under jit and vmap (reverse mode through the custom rules), second derivatives against the formulas:
    F'' = -2F - 2x F' for dawsn, d2 Si = (x cos x - sin x) / x**2; 1F1 and 2F1's x-derivative recursions;
    check_grads on owens_t (cheap eagerly; the others' loops make eager finite differences slow)."""
    x = np.array([-1.5, 0.3, 2.0, 8.0])

    def program(x):
        return (tj.vmap(tj.grad(tj.grad(S.dawsn)))(x), tj.vmap(tj.grad(tj.grad(lambda v: S.sici(v)[0])))(x),
                tj.vmap(tj.grad(lambda v: S.fresnel(v)[1] + S.sici(v)[1]))(x),
                tj.vmap(tj.grad(lambda v: S.hyp1f1(1.5, 2.5, v)))(x),
                tj.vmap(tj.grad(lambda v: S.hyp2f1(0.5, 1.5, 2.5, v)))(x / 10))

    dawsn, si, fresnel_ci, hyp1, hyp2 = tj.jit(program)(x)
    f = sc.dawsn(x)
    np.testing.assert_allclose(dawsn, -2 * f - 2 * x * (1 - 2 * x * f), rtol=1e-11)    # the formula cancels at 8
    np.testing.assert_allclose(si, (x * np.cos(x) - np.sin(x)) / x ** 2, rtol=1e-12)
    np.testing.assert_allclose(fresnel_ci, np.cos(np.pi * x * x / 2) + np.cos(x) / x, rtol=1e-12)
    np.testing.assert_allclose(hyp1, 1.5 / 2.5 * sc.hyp1f1(2.5, 3.5, x), rtol=1e-12)
    np.testing.assert_allclose(hyp2, 0.5 * 1.5 / 2.5 * sc.hyp2f1(1.5, 2.5, 3.5, x / 10), rtol=1e-11)
    check_grads(S.owens_t, [np.array([0.5, -1.0, 2.0]), np.array([0.3, 2.5, -0.8])], order=1, modes=("fwd", "rev"))
