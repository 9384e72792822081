"""tracejit.scipy.special: values against SciPy (eager and compiled, float64 and float32), SciPy's special values,
derivatives against JAX (first and second order) and finite differences (check_grads to order 2), batching,
logsumexp's options, and the errors JAX raises."""
import ml_dtypes
import numpy as np
import pytest

import tracejit as tj
from tracejit.scipy import special as S
from tracejit.test_util import check_grads

sc = pytest.importorskip("scipy.special")
try:
    import jax
    import jax.scipy.special as js
except ImportError:
    jax = js = None


rng = np.random.default_rng(0)
N = 200


def normal(scale=3.0):
    return rng.normal(size=N) * scale


def uniform(lo, hi):
    return rng.uniform(lo, hi, N)


def positive(lo=0.05, hi=30.0):
    return 10 ** rng.uniform(np.log10(lo), np.log10(hi), N)


def ints(lo, hi):
    return rng.integers(lo, hi, N)


# name: (tracejit function, reference, arguments); the reference is SciPy's unless stated
VALUES = {
    "erf": (S.erf, sc.erf, [normal()]),
    "erfc": (S.erfc, sc.erfc, [uniform(-6, 26)]),
    "erfinv": (S.erfinv, sc.erfinv, [uniform(-1, 1)]),
    "erfcx": (S.erfcx, sc.erfcx, [uniform(-20, 1e4)]),
    "ndtr": (S.ndtr, sc.ndtr, [uniform(-37, 9)]),
    "ndtri": (S.ndtri, sc.ndtri, [10 ** uniform(-300, 0)]),
    "log_ndtr": (S.log_ndtr, sc.log_ndtr, [uniform(-1e3, 40)]),
    "gammaln": (S.gammaln, sc.gammaln, [positive(1e-3, 1e5)]),
    "digamma": (S.digamma, sc.digamma, [positive(1e-3, 1e5)]),
    "gamma": (S.gamma, sc.gamma, [uniform(0.01, 170)]),
    "gammasgn": (S.gammasgn, sc.gammasgn, [normal(10)]),
    "rgamma": (S.rgamma, sc.rgamma, [normal(10)]),
    "loggamma": (S.loggamma, lambda x: np.where(x > 0, sc.gammaln(x), np.nan), [normal(10)]),
    "gammainc": (S.gammainc, sc.gammainc, [positive(0.1, 100), positive(0.01, 150)]),
    "gammaincc": (S.gammaincc, sc.gammaincc, [positive(0.1, 100), positive(0.01, 150)]),
    "betainc": (S.betainc, sc.betainc, [positive(0.1, 50), positive(0.1, 50), uniform(0, 1)]),
    "betaln": (S.betaln, sc.betaln, [positive(0.1, 1e4), positive(0.1, 1e4)]),
    "beta": (S.beta, sc.beta, [positive(0.1, 20), positive(0.1, 20)]),
    "zeta": (S.zeta, sc.zeta, [uniform(1.1, 40), positive(0.01, 100)]),
    "polygamma": (S.polygamma, sc.polygamma, [ints(0, 6), uniform(0.1, 20)]),
    "multigammaln": (lambda a: S.multigammaln(a, 4), lambda a: np.vectorize(sc.multigammaln)(a, 4),
                     [uniform(1.6, 30)]),
    "i0e": (S.i0e, sc.i0e, [normal(20)]),
    "i1e": (S.i1e, sc.i1e, [normal(20)]),
    "i0": (S.i0, sc.i0, [normal(10)]),
    "i1": (S.i1, sc.i1, [normal(10)]),
    "xlogy": (S.xlogy, sc.xlogy, [normal() * (rng.random(N) < 0.8), positive()]),
    "xlog1py": (S.xlog1py, sc.xlog1py, [normal() * (rng.random(N) < 0.8), uniform(-0.99, 10)]),
    "entr": (S.entr, sc.entr, [uniform(-1, 5) * (rng.random(N) < 0.9)]),
    "expit": (S.expit, sc.expit, [normal(10)]),
    "logit": (S.logit, sc.logit, [uniform(0, 1)]),
    "rel_entr": (S.rel_entr, sc.rel_entr, [uniform(-0.5, 3) * (rng.random(N) < 0.9), uniform(-0.5, 3)]),
    "kl_div": (S.kl_div, sc.kl_div, [uniform(-0.5, 3) * (rng.random(N) < 0.9), uniform(-0.5, 3)]),
    "spence": (S.spence, sc.spence, [positive(1e-3, 100)]),
    "exp1": (S.exp1, sc.exp1, [positive(1e-3, 700)]),
    "expi": (S.expi, sc.expi, [uniform(-700, 700)]),
    "expn": (S.expn, sc.expn, [ints(0, 40), positive(1e-3, 300)]),
    "factorial": (S.factorial, lambda n: sc.factorial(n, exact=False), [uniform(-2, 100)]),
    "sinc": (S.sinc, np.sinc, [np.concatenate([normal(), [0.0, -0.0, 1.0, -2.0]])]),
}


# Absolute tolerances where a result crosses zero: SciPy's betaln is 2e-11 off near its zeros for large b (the
# values here are within 2e-15 of mpmath's); kl_div and the float32 compositions (logit, sinc, rel_entr, beta's
# exp of lgamma sums: JAX's formulas) cancel there.
F64_ATOL = {"betaln": 5e-11, "beta": 1e-12, "kl_div": 1e-15}
F32_ATOL = {"logit": 1e-7, "sinc": 1e-7, "beta": 1e-7, "betaln": 1e-6, "kl_div": 5e-7, "rel_entr": 5e-7,
            "spence": 1e-7, "xlog1py": 1e-7, "multigammaln": 1e-5}


@pytest.mark.parametrize("name", VALUES)
def test_values_against_scipy(name):
    """Eager (NumPy impls) and compiled, in float64 (within 1e-12 relative: SciPy is itself less accurate than
    that near lgamma's zeros, in erfcx's negative range and in the far tails) and float32 (2e-6)."""
    fn, ref, args = VALUES[name]
    with np.errstate(all="ignore"):
        want = ref(*args)
    for got in (fn(*args), tj.jit(fn)(*args)):
        assert got.shape == want.shape and got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=F64_ATOL.get(name, 1e-300), equal_nan=True,
                                   err_msg=name)
    if name in ("erfcx", "ndtri", "log_ndtr", "gamma", "factorial", "polygamma"):  # beyond float32's range; an
        return                                                          # int64 n promotes float32 to float64
    args32 = [a.astype(np.float32) for a in args]
    with np.errstate(all="ignore"):
        want32 = ref(*[a.astype(np.float64) for a in args32]).astype(np.float32)
        got32 = tj.jit(fn)(*args32)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want32, rtol=2e-6, atol=F32_ATOL.get(name, np.finfo(np.float32).tiny),
                               equal_nan=True, err_msg=name)


def test_special_values_as_scipy():
    inf, nan = np.inf, np.nan
    x = np.array([0.0, -0.0, -1.0, -2.0, inf, -inf, nan, 1e-320, 1e308, -1e20])
    for fn, ref in ((S.gammaln, sc.gammaln), (S.digamma, sc.digamma), (S.gamma, sc.gamma), (S.erf, sc.erf),
                    (S.erfc, sc.erfc), (S.erfcx, sc.erfcx), (S.erfinv, sc.erfinv), (S.ndtr, sc.ndtr),
                    (S.log_ndtr, sc.log_ndtr), (S.ndtri, sc.ndtri), (S.i0e, sc.i0e), (S.i1e, sc.i1e),
                    (S.expit, sc.expit), (S.logit, sc.logit), (S.entr, sc.entr), (S.gammasgn, sc.gammasgn),
                    (S.rgamma, sc.rgamma)):
        with np.errstate(all="ignore"):
            want = ref(x)
        got = fn(x)
        if fn is S.gammaln:     # SciPy's gammaln(1e-320) is inf; the true value 736.8 is kept
            want[7] = 736.82724089
        np.testing.assert_allclose(got, want, rtol=1e-10, equal_nan=True, err_msg=fn.__name__)
        np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]), err_msg=fn.__name__)
    a = np.array([0.0, 1.0, 2.0, -1.0, inf, 1.0, 0.0, 2.0])
    z = np.array([0.0, 0.0, inf, 1.0, 1.0, -1.0, 1.0, nan])
    np.testing.assert_array_equal(S.gammainc(a, z), sc.gammainc(a, z))
    np.testing.assert_array_equal(S.gammaincc(a, z), sc.gammaincc(a, z))
    b = np.array([0.0, 0.0, inf, 1.0, 1.0, 1.0, 1.0, 1.0])
    u = np.array([0.5, 0.5, 0.5, 0.5, 0.0, 1.0, 1.5, 0.5])
    np.testing.assert_allclose(S.betainc(a, b, u), sc.betainc(a, b, u), rtol=1e-15)
    s, q = np.array([1.0, 2.0, 2.0, 0.5, 3.0, 2.5]), np.array([1.0, 0.0, -1.0, 1.0, -2.5, -2.5])
    np.testing.assert_allclose(S.zeta(s, q), sc.zeta(s, q), rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(S.polygamma(np.array([1, 2, 0, 1]), np.array([-1.0, -2.5, 0.0, 0.0])),
                               sc.polygamma(np.array([1, 2, 0, 1]), np.array([-1.0, -2.5, 0.0, 0.0])), rtol=1e-12)


# name: (tracejit function, JAX function, arguments, which arguments to differentiate)
GRADS = {
    "erf": (S.erf, "erf", [normal(1.5)], (0,)),
    "erfc": (S.erfc, "erfc", [normal(1.5)], (0,)),
    "erfinv": (S.erfinv, "erfinv", [uniform(-0.99, 0.99)], (0,)),
    "erfcx": (S.erfcx, "erfcx", [uniform(-3, 30)], (0,)),
    "ndtr": (S.ndtr, "ndtr", [normal()], (0,)),
    "ndtri": (S.ndtri, "ndtri", [uniform(0.01, 0.99)], (0,)),
    "log_ndtr": (S.log_ndtr, "log_ndtr", [normal(10)], (0,)),
    "gammaln": (S.gammaln, "gammaln", [positive()], (0,)),
    "digamma": (S.digamma, "digamma", [positive()], (0,)),
    "gamma": (S.gamma, "gamma", [uniform(0.1, 20)], (0,)),
    "gammainc": (S.gammainc, lambda a, x: [None, np.exp(-x + (a - 1) * np.log(x) - sc.gammaln(a))],
                 [positive(0.5, 20), positive(0.1, 20)], (1,)),
    "gammaincc": (S.gammaincc, lambda a, x: [None, -np.exp(-x + (a - 1) * np.log(x) - sc.gammaln(a))],
                  [positive(0.5, 20), positive(0.1, 20)], (1,)),
    "betainc": (S.betainc, "betainc", [positive(0.5, 10), positive(0.5, 10), uniform(0.05, 0.95)], (2,)),
    "betaln": (S.betaln, lambda a, b: [sc.digamma(a) - sc.digamma(a + b), sc.digamma(b) - sc.digamma(a + b)],
               [positive(0.5, 50), positive(0.5, 50)], (0, 1)),
    "beta": (S.beta, "beta", [positive(0.5, 5), positive(0.5, 5)], (0, 1)),
    "zeta": (S.zeta, lambda s, q: [None, -s * sc.zeta(s + 1, q)], [uniform(1.5, 8), positive(0.5, 10)], (1,)),
    "polygamma": (S.polygamma, "polygamma", [ints(0, 4), positive(0.5, 10)], (1,)),
    "multigammaln": (lambda a: S.multigammaln(a, 3), lambda a: [sum(sc.digamma(a - j / 2) for j in range(3))],
                     [uniform(1.5, 10)], (0,)),
    "i0e": (S.i0e, "i0e", [normal(5)], (0,)),
    "i1e": (S.i1e, "i1e", [normal(5)], (0,)),
    "i0": (S.i0, "i0", [normal(3)], (0,)),
    "i1": (S.i1, "i1", [normal(3)], (0,)),
    "xlogy": (S.xlogy, "xlogy", [normal(), positive()], (0, 1)),
    "xlog1py": (S.xlog1py, "xlog1py", [normal(), uniform(-0.9, 5)], (0, 1)),
    "entr": (S.entr, "entr", [positive()], (0,)),
    "expit": (S.expit, "expit", [normal()], (0,)),
    "logit": (S.logit, "logit", [uniform(0.01, 0.99)], (0,)),
    "rel_entr": (S.rel_entr, "rel_entr", [positive(), positive()], (0, 1)),
    "kl_div": (S.kl_div, "kl_div", [positive(), positive()], (0, 1)),
    "spence": (S.spence, "spence", [positive(0.05, 10)], (0,)),
    "sinc": (S.sinc, lambda x: [(np.cos(np.pi * x) - np.sinc(x)) / x], [normal()], (0,)),
    "exp1": (S.exp1, "exp1", [positive(0.1, 20)], (0,)),
    "expi": (S.expi, "expi", [uniform(-20, 20)], (0,)),
    "expn": (S.expn, "expn", [ints(1, 6), positive(0.1, 10)], (1,)),
}


# JAX's beta (for max(a, b) >= 8) and log_ndtr (below -20: an asymptotic series of order 3) are approximations
# whose derivatives are that much off the true ones, which tracejit's match (checked against mpmath).
JAX_RTOL = {"beta": 1e-7, "log_ndtr": 1e-6}


def _derivative(jvp, fn, args, i, ones_like=np.ones_like):
    """The derivative of an elementwise fn in argument i at every element: a jvp in that argument alone (the
    others closed over), with a tangent of ones."""
    def partial(v):
        return fn(*args[:i], v, *args[i + 1:])
    return jvp(partial, (args[i],), (ones_like(args[i]),))[1]


@pytest.fixture(scope="module")
def jax_reference():
    """Every JAX derivative the tests compare with, computed by one jitted program (one compile, not dozens)."""
    if jax is None:
        pytest.skip("JAX is the reference for derivatives")
    jnp = jax.numpy

    def first(name, i):
        _, theirs, args, _ = GRADS[name]
        return _derivative(jax.jvp, getattr(js, theirs), [jnp.asarray(a[:40]) for a in args], i, jnp.ones_like)

    def second(name):
        fn, x = SECOND[name]
        return jax.vmap(jax.grad(jax.grad(fn)))(jnp.asarray(x))

    def program():
        out = {(name, i): first(name, i) for name, (_, theirs, _, argnums) in GRADS.items()
               if isinstance(theirs, str) for i in argnums}
        out.update({(name, 2): second(name) for name in SECOND})
        return out

    return {key: np.asarray(v) for key, v in jax.jit(program)().items()}


@pytest.mark.parametrize("name", GRADS)
def test_derivatives_against_jax(name, jax_reference):
    """Against JAX's derivative rules, or the exact formulas they implement where JAX is slow to compile them
    (igamma, zeta) or approximate (betaln)."""
    fn, theirs, args, argnums = GRADS[name]
    args = [a[:40] for a in args]
    exact = None if isinstance(theirs, str) else theirs(*args)
    for i in argnums:
        want = exact[i] if exact is not None else jax_reference[name, i]
        got = np.asarray(_derivative(tj.jvp, fn, args, i))
        np.testing.assert_allclose(got, want, rtol=JAX_RTOL.get(name, 2e-9), atol=1e-12, err_msg=f"{name} d/d{i}")


def test_derivatives_in_the_slow_cases_against_mpmath():
    """Where JAX's rules are while loops it compiles slowly: zeta in x (the derivative of its Euler-Maclaurin
    series, as JAX's) to second order, and gammainc in a (igamma_grad_a), both against mpmath."""
    mp = pytest.importorskip("mpmath")
    s, q = np.array([1.5, 2.2, 4.0, 9.0]), np.array([0.3, 1.7, 4.0, 0.9])
    first = tj.vmap(tj.grad(S.zeta))(s, q)
    second = tj.vmap(tj.grad(tj.grad(S.zeta)))(s, q)
    for order, got in ((1, first), (2, second)):
        np.testing.assert_allclose(got, [float(mp.zeta(v, w, order)) for v, w in zip(s, q)], rtol=1e-9)
    a, x = np.array([0.6, 2.5, 7.0, 30.0]), np.array([0.4, 3.0, 5.0, 33.0])
    want = [float(mp.diff(lambda t, w=w: mp.gammainc(t, 0, w, regularized=True), v)) for v, w in zip(a, x)]
    np.testing.assert_allclose(_derivative(tj.jvp, S.gammainc, [a, x], 0), want, rtol=1e-9)
    np.testing.assert_allclose(_derivative(tj.jvp, S.gammaincc, [a, x], 0), -np.array(want), rtol=1e-9)


# name: (JAX's function, arguments) of the second derivatives: through the derivative rules' own derivatives
# (digamma -> polygamma(1) -> polygamma(2)), i1e's rule at tiny x, sinc's exact Maclaurin derivatives at 0
SECOND = {
    "digamma": (js.digamma, np.array([0.7, 1.5, 3.2, 8.0])) if js else None,
    "gammaln": (js.gammaln, np.array([0.7, 1.5, 3.2, 8.0])) if js else None,
    "polygamma": ((lambda v: js.polygamma(2, v)), np.array([0.7, 1.5, 3.2, 8.0])) if js else None,
    "erfinv": (js.erfinv, np.array([-0.7, 0.1, 0.45, 0.9])) if js else None,
    "log_ndtr": (js.log_ndtr, np.array([-30.0, -3.0, 0.2, 4.0])) if js else None,
    "i1e": (js.i1e, np.array([1e-17, 0.5, -2.0, 7.0])) if js else None,
    "sinc": (jax.numpy.sinc, np.array([0.0, 0.3, -1.7, 2.5])) if js else None,
}
OURS = {"polygamma": lambda v: S.polygamma(2, v)}


@pytest.mark.parametrize("name", SECOND)
def test_second_derivatives_against_jax(name, jax_reference):
    ours = tj.vmap(tj.grad(tj.grad(OURS.get(name, getattr(S, name)))))(SECOND[name][1])
    np.testing.assert_allclose(ours, jax_reference[name, 2], rtol=JAX_RTOL.get(name, 1e-8), atol=1e-12)


# name: (function of the differentiated arguments, arguments): check_grads to order 2, forward and reverse
CHECK_GRADS = {
    "erf": (S.erf, [np.array([-1.2, 0.3, 2.0])]),
    "erfc": (S.erfc, [np.array([-1.2, 0.3, 2.0])]),
    "erfinv": (S.erfinv, [np.array([-0.8, 0.1, 0.6])]),
    "erfcx": (S.erfcx, [np.array([-1.2, 0.3, 5.0])]),
    "ndtr": (S.ndtr, [np.array([-2.2, 0.3, 2.0])]),
    "ndtri": (S.ndtri, [np.array([0.05, 0.4, 0.9])]),
    "log_ndtr": (S.log_ndtr, [np.array([-8.0, 0.3, 3.0])]),
    "gammaln": (S.gammaln, [np.array([-2.5, 0.3, 4.0])]),
    "digamma": (S.digamma, [np.array([-1.5, 0.6, 4.0])]),
    "gamma": (S.gamma, [np.array([-0.5, 0.6, 4.0])]),
    "gammainc": (lambda x: S.gammainc(2.5, x), [np.array([0.5, 2.0, 6.0])]),
    "gammaincc": (lambda x: S.gammaincc(2.5, x), [np.array([0.5, 2.0, 6.0])]),
    "gammainc_a": (lambda a: S.gammainc(a, 2.0), [np.array([0.8, 2.0, 6.0])]),
    "betainc": (lambda x: S.betainc(2.0, 3.5, x), [np.array([0.1, 0.4, 0.8])]),
    "betaln": (S.betaln, [np.array([0.5, 3.0, 20.0]), np.array([2.0, 9.0, 30.0])]),
    "zeta": (S.zeta, [np.array([2.5, 3.0, 6.0]), np.array([0.5, 1.5, 4.0])]),
    "polygamma": (lambda x: S.polygamma(1, x), [np.array([0.5, 1.5, 4.0])]),
    "multigammaln": (lambda a: S.multigammaln(a, 3), [np.array([1.5, 2.5, 7.0])]),
    "i0e": (S.i0e, [np.array([-3.0, 0.5, 40.0])]),
    "i1e": (S.i1e, [np.array([-3.0, 0.5, 40.0])]),
    "xlogy": (S.xlogy, [np.array([-1.0, 0.5, 2.0]), np.array([0.3, 1.5, 4.0])]),
    "xlog1py": (S.xlog1py, [np.array([-1.0, 0.5, 2.0]), np.array([-0.3, 1.5, 4.0])]),
    "entr": (S.entr, [np.array([0.2, 1.5, 4.0])]),
    "logit": (S.logit, [np.array([0.2, 0.5, 0.9])]),
    "expit": (S.expit, [np.array([-2.0, 0.5, 3.0])]),
    "kl_div": (S.kl_div, [np.array([0.2, 1.5, 4.0]), np.array([0.7, 0.5, 2.0])]),
    "logsumexp": (lambda x, b: S.logsumexp(x, axis=1, b=b), [rng.normal(size=(2, 3)), rng.uniform(0.5, 2, (2, 3))]),
    "softmax": (lambda x: S.softmax(x, axis=0), [rng.normal(size=(3, 2))]),
    "log_softmax": (lambda x: S.log_softmax(x, axis=-1), [rng.normal(size=(3, 2))]),
    "sinc": (S.sinc, [np.array([0.0, 0.3, -1.7])]),
    "spence": (S.spence, [np.array([0.2, 1.0, 3.0])]),
    "beta": (S.beta, [np.array([0.5, 2.0, 4.0]), np.array([1.5, 3.0, 0.7])]),
    "rgamma": (S.rgamma, [np.array([-1.5, 0.6, 4.0])]),
    "loggamma": (S.loggamma, [np.array([0.3, 1.5, 6.0])]),
    "i0": (S.i0, [np.array([-3.0, 0.5, 4.0])]),
    "i1": (S.i1, [np.array([-3.0, 0.5, 4.0])]),
    "rel_entr": (S.rel_entr, [np.array([0.2, 1.5, 4.0]), np.array([0.7, 0.5, 2.0])]),
    "factorial": (S.factorial, [np.array([0.5, 2.5, 4.2])]),
    "exp1": (S.exp1, [np.array([0.3, 1.5, 4.0])]),
    "expi": (S.expi, [np.array([-2.0, 0.5, 3.0])]),
    "expn": (lambda x: S.expn(3, x), [np.array([0.3, 1.5, 4.0])]),
}


@pytest.mark.parametrize("name", CHECK_GRADS)
def test_check_grads_to_order_2(name):
    fn, args = CHECK_GRADS[name]
    modes = ("fwd",) if name == "gammainc_a" else ("fwd", "rev")   # d2/da2 is not defined (nor in JAX)
    order = 1 if name == "gammainc_a" else 2
    check_grads(fn, args, order=order, modes=modes, rtol=1e-4, atol=1e-6)


COMPILED_VMAP = ("erf", "ndtri", "gammaln", "digamma", "gammainc", "betainc", "zeta", "i1e", "xlogy", "logit")


@pytest.mark.parametrize("name", VALUES)
def test_vmap_against_a_loop(name):
    """Every function batched eagerly; the kernels and a few compositions also compiled, batched on axis 1."""
    fn, _, args = VALUES[name]
    batch = [np.stack([a[:6], a[6:12]]) for a in args]
    with np.errstate(all="ignore"):
        loop = np.stack([fn(*[b[i] for b in batch]) for i in range(2)])
        np.testing.assert_allclose(tj.vmap(fn)(*batch), loop, rtol=1e-14, equal_nan=True)
    if name in COMPILED_VMAP:
        compiled = tj.jit(tj.vmap(fn, in_axes=1, out_axes=1))(*[b.T for b in batch])
        np.testing.assert_allclose(compiled, loop.T, rtol=1e-14)


def test_softmax_against_scipy():
    x = rng.normal(size=(3, 4, 5)) * 4
    for axis in (None, 0, -1, (0, 2)):
        for ours, theirs in ((S.softmax, sc.softmax), (S.log_softmax, sc.log_softmax)):
            want = theirs(x, axis=axis)
            np.testing.assert_allclose(ours(x, axis=axis), want, rtol=1e-13, atol=1e-300)
            compiled = tj.jit(ours, static_argnames="axis")(x.astype(np.float32), axis=axis)
            assert compiled.dtype == np.float32
            np.testing.assert_allclose(compiled, want, rtol=2e-5, atol=1e-7)


def test_logsumexp_options_against_scipy():
    a = rng.normal(size=(3, 4))
    b = rng.normal(size=(3, 4))
    for axis in (None, 0, 1, (0, 1), -1):
        for keepdims in (False, True):
            np.testing.assert_allclose(S.logsumexp(a, axis=axis, keepdims=keepdims),
                                       sc.logsumexp(a, axis=axis, keepdims=keepdims), rtol=1e-14)
            got, sign = tj.jit(S.logsumexp, static_argnames=("axis", "keepdims", "return_sign"))(
                a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
            want, want_sign = sc.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
            np.testing.assert_allclose(got, want, rtol=1e-13)
            np.testing.assert_array_equal(sign, want_sign)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(np.isnan(S.logsumexp(a, axis=1, b=b)), np.isnan(sc.logsumexp(a, axis=1, b=b)))
    np.testing.assert_allclose(S.logsumexp(np.array([-np.inf, -np.inf])), -np.inf)
    np.testing.assert_allclose(S.logsumexp(np.array([np.inf, 1.0])), np.inf)
    where = rng.random((3, 4)) < 0.6
    np.testing.assert_allclose(S.logsumexp(a, axis=1, where=where),
                               [sc.logsumexp(a[i][where[i]]) for i in range(3)], rtol=1e-14)


def test_logsumexp_gradient():
    """d/da = b exp(a) / sum(b exp(a)) and d/db = exp(a) / sum(b exp(a)), along the reduced axis (as JAX's, whose
    stop_gradient on the shift leaves these)."""
    a, b = rng.normal(size=(3, 4)), rng.uniform(0.1, 2, (3, 4))
    da, db = tj.grad(lambda a, b: S.logsumexp(a, axis=1, b=b).sum(), argnums=(0, 1))(a, b)
    total = np.sum(b * np.exp(a), axis=1, keepdims=True)
    np.testing.assert_allclose(da, b * np.exp(a) / total, rtol=1e-13)
    np.testing.assert_allclose(db, np.exp(a) / total, rtol=1e-13)


def test_errors_as_jax():
    with pytest.raises(TypeError, match="erf"):
        S.erf(np.array([1j]))
    with pytest.raises(TypeError, match="betaln"):
        S.betaln(np.array([1j]), 1.0)
    with pytest.raises(ValueError, match="integer type"):
        S.polygamma(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="Riemann"):
        S.zeta(2.0)
    with pytest.raises(TypeError, match="series_order"):
        S.log_ndtr(1.0, series_order=2.0)
    with pytest.raises(ValueError, match="series_order"):
        S.log_ndtr(1.0, series_order=31)
    with pytest.raises(ValueError, match="Betainc gradient"):
        tj.grad(lambda a: S.betainc(a, 2.0, 0.5))(1.5)
    with pytest.raises(ValueError, match="igamma_grad_a"):
        tj.grad(tj.grad(lambda a: S.gammainc(a, 2.0)))(1.5)
    with pytest.raises(TypeError):
        S.multigammaln(np.ones(2), 2.5)


def test_scalars_keep_their_dtypes():
    """Python, integer and bool arguments promote to float64 (as SciPy's; NumPy's math functions would pick float16
    for int8); float32 stays float32."""
    assert S.erf(1).dtype == np.float64 and S.gammainc(1, 2).dtype == np.float64
    for dtype in (np.int8, np.uint8, np.int32, np.uint64, np.bool_):
        assert S.gammaln(np.ones(2, dtype)).dtype == np.float64 and tj.jit(S.ndtri)(np.ones(2, dtype)).dtype == np.float64
    assert S.gammaln(np.float32(3)).dtype == np.float32
    assert tj.jit(S.erf)(np.ones(3, np.float32)).dtype == np.float32
    assert S.xlogy(np.ones(2, np.float32), 2.0).dtype == np.float32


HALF_FLOATS = ("float16", "bfloat16")


@pytest.mark.parametrize("dtype", HALF_FLOATS)
def test_16_bit_floats(dtype):
    """float16 and bfloat16 keep their dtype (as JAX's), computed in float32 and rounded once, eagerly and compiled
    alike (the NumPy impls' float32 may differ in the last bit): within one of their ulps of SciPy's value rounded
    to them."""
    dtype = np.dtype(getattr(ml_dtypes, dtype, dtype))
    info = ml_dtypes.finfo(dtype)
    eps, subnormal = float(info.eps), float(info.smallest_subnormal)
    calls = [(name, fn, ref, [a[:24].astype(dtype) for a in args]) for name, (fn, ref, args) in VALUES.items()
             if name not in ("polygamma", "factorial")]     # integer orders; factorial's are beyond float16
    with np.errstate(all="ignore"):     # (one program computes them all: compiling each took most of the time)
        all_compiled = tj.jit(lambda args: [c[1](*a) for c, a in zip(calls, args)])([c[3] for c in calls])
    for (name, fn, ref, args16), compiled in zip(calls, all_compiled):
        with np.errstate(all="ignore"):
            want = ref(*[a.astype(np.float64) for a in args16]).astype(dtype).astype(np.float64)
            eager = fn(*args16)
        assert eager.dtype == compiled.dtype == dtype, name
        eager, compiled = eager.astype(np.float64), compiled.astype(np.float64)
        atol = subnormal + F32_ATOL.get(name, 0)        # float32's cancellation where the result crosses zero
        np.testing.assert_allclose(eager, compiled, rtol=eps, atol=atol, equal_nan=True, err_msg=name)
        np.testing.assert_allclose(eager, want, rtol=eps, atol=atol, equal_nan=True, err_msg=name)


def test_comb_poch_boxcox_bernoulli():
    """comb, poch, boxcox and boxcox1p against SciPy (eager and compiled) and JAX's derivatives; bernoulli's exact
    rationals, rounded once (SciPy's are 2e-12 off, JAX's 2.5e-6 at n = 30)."""
    N, kk = np.array([5.0, 10, 3, -1, 4.5]), np.array([2.0, 3, 4, 1, 2])
    z, m = np.array([1.5, 3.0, -0.5, 2.0]), np.array([2.0, 0.0, 3.0, 1.5])
    x, lmbda = np.array([0.5, 1.0, 2.5, 7.0]), np.array([0.0, 1e-9, 1.5, -0.7])
    for ours, theirs, args in ((S.comb, lambda a, b: sc.comb(a, b), (N, kk)),
                               (lambda a, b: S.comb(a, b, repetition=True), lambda a, b: sc.comb(a, b, repetition=True),
                                (N[N >= 0], kk[N >= 0])),      # (SciPy's is NaN at N = -1, JAX's and ours 0)
                               (S.poch, sc.poch, (z, m)), (S.boxcox, sc.boxcox, (x, lmbda)),
                               (S.boxcox1p, sc.boxcox1p, (x, lmbda))):
        for got in (ours(*args), tj.jit(ours)(*args)):
            np.testing.assert_allclose(got, theirs(*args), rtol=1e-13)
    exact = [1, -1 / 2, 1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
             -174611 / 330, 854513 / 138, -236364091 / 2730]      # B_0, B_1, then B_2 ... B_24
    b = S.bernoulli(24)
    np.testing.assert_array_equal(b[[0, 1, *range(2, 25, 2)]], exact)
    assert not b[3::2].any()
    np.testing.assert_allclose(S.bernoulli(30), sc.bernoulli(30), rtol=1e-11)     # (SciPy's are 2e-12 off)
    assert S.bernoulli(0).shape == (1,)
    with pytest.raises(ValueError, match="non-negative"):
        S.bernoulli(-1)
    if js is not None:
        for ours, theirs, (at, other) in ((S.poch, js.poch, (z[:2], 2.5)), (S.boxcox, js.boxcox, (x, 0.3)),
                                          (S.comb, js.comb, (np.array([7.5, 9.0]), 2.0))):
            np.testing.assert_allclose(tj.grad(lambda v, f=ours, b=other: f(v, b).sum())(at),
                                       jax.grad(lambda v, f=theirs, b=other: f(v, b).sum())(at), rtol=1e-12)
