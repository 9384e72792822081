"""tracejit.scipy.stats: every function against scipy.stats (eager and compiled), float32 kept, gradients in the
parameters against JAX, and batching."""
import ml_dtypes
import numpy as np
import pytest

import tracejit as tj
from tracejit.scipy import stats as T
from tracejit.test_util import check_grads

ss = pytest.importorskip("scipy.stats")
try:
    import jax
    import jax.scipy.stats as jst
except ImportError:
    jax = jst = None

rng = np.random.default_rng(0)
x = rng.normal(size=12) * 2
q = rng.uniform(size=12)
unit = rng.uniform(size=12)
positive = rng.uniform(0, 6, 12)
k = np.array([0.0, 1, 2, 3, 5, 8, 13, -1, 2.5, 4, 0, 7])
counts = np.array([0.0, 1, 2, 3, 5, 8, 13, -1, 4, 0, 7, 11])     # (binom, nbinom, geom, betabinom: SciPy's -inf
                                                                  # between integers is not JAX's)

# distribution: (arguments of each function group, parameters after them)
CASES = {
    "norm": ({"logpdf": x, "pdf": x, "cdf": x * 10, "logcdf": x * 10, "sf": x * 10, "logsf": x * 10, "ppf": q,
              "isf": q}, (0.3, 1.7)),
    "t": ({"logpdf": x, "pdf": x}, (3.5, 0.2, 1.3)),
    "beta": ({"logpdf": unit, "pdf": unit, "cdf": unit, "logcdf": unit, "sf": unit, "logsf": unit}, (2.5, 1.5)),
    "gamma": ({"logpdf": positive, "pdf": positive, "cdf": positive, "logcdf": positive, "sf": positive,
               "logsf": positive}, (2.5, 0.1, 1.5)),
    "poisson": ({"logpmf": k, "pmf": k, "cdf": k}, (3.3,)),
    "bernoulli": ({"logpmf": np.array([0.0, 1.0, 2.0, -1.0]), "pmf": np.array([0.0, 1.0, 2.0]),
                   "cdf": np.array([-1.0, 0.0, 0.5, 1.0, 3.0]), "ppf": q}, (0.3,)),
    "uniform": ({"logpdf": x, "pdf": x, "cdf": x, "ppf": q}, (-0.5, 2.0)),
    "laplace": ({"logpdf": x, "pdf": x, "cdf": x}, (0.1, 1.5)),
    "cauchy": ({"logpdf": x, "pdf": x, "cdf": x, "logcdf": x, "sf": x, "logsf": x, "ppf": q, "isf": q}, (0.1, 1.5)),
    "logistic": ({"logpdf": x, "pdf": x, "cdf": x, "sf": x, "ppf": q, "isf": q}, (0.1, 1.5)),
    "expon": ({"logpdf": positive - 1, "pdf": positive - 1, "cdf": positive - 1, "logcdf": positive,
               "sf": positive - 1, "logsf": positive - 1, "ppf": q}, (0.1, 1.5)),
    "chi2": ({"logpdf": positive, "pdf": positive, "cdf": positive, "logcdf": positive, "sf": positive,
              "logsf": positive}, (3.5, 0.1, 1.5)),
    "truncnorm": ({"logpdf": x, "pdf": x, "cdf": x, "logcdf": x, "sf": x, "logsf": x}, (-1.0, 2.5, 0.2, 1.1)),
    "binom": ({"logpmf": counts, "pmf": counts}, (10.0, 0.3)),
    "nbinom": ({"logpmf": counts, "pmf": counts}, (4.0, 0.3)),
    "geom": ({"logpmf": counts, "pmf": counts}, (0.3,)),
    "betabinom": ({"logpmf": counts, "pmf": counts}, (10.0, 2.5, 1.5)),
    "pareto": ({"logpdf": positive + 0.5, "pdf": positive + 0.5, "cdf": positive + 0.5, "logcdf": positive + 0.5,
                "sf": positive + 0.5, "logsf": positive + 0.5, "ppf": q}, (2.5, 0.1, 1.2)),
    "gumbel_r": ({"logpdf": x, "pdf": x, "cdf": x, "logcdf": x, "sf": x, "logsf": x, "ppf": q}, (0.1, 1.5)),
    "gumbel_l": ({"logpdf": x, "pdf": x, "cdf": x, "logcdf": x, "sf": x, "logsf": x, "ppf": q}, (0.1, 1.5)),
    "gennorm": ({"logpdf": x, "pdf": x, "cdf": x}, (1.5,)),
    "vonmises": ({"logpdf": x, "pdf": x}, (2.5,)),
    "wrapcauchy": ({"logpdf": np.abs(x), "pdf": np.abs(x)}, (0.4,)),
}


@pytest.mark.parametrize("dist", CASES)
def test_against_scipy(dist):
    """Each function, eager and compiled (all of them in one program, their parameters traced: a compile each took
    most of the time), in float64 and float32."""
    inputs, params = CASES[dist]
    functions = [getattr(getattr(T, dist), fname) for fname in inputs]
    compiled = tj.jit(lambda args: [f(a, *p) for f, (a, p) in zip(functions, args)])(
        [(a, params) for a in inputs.values()])
    for (fname, arg), ours, jitted in zip(inputs.items(), functions, compiled, strict=True):
        theirs = getattr(getattr(ss, dist), fname)
        with np.errstate(all="ignore"):
            want = theirs(arg, *params)
        for got in (ours(arg, *params), jitted):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300, equal_nan=True, err_msg=f"{dist}.{fname}")
        got32 = ours(arg.astype(np.float32), *params)
        assert got32.dtype == np.float32, f"{dist}.{fname}"
        np.testing.assert_allclose(got32, want, rtol=3e-5, atol=1e-6, equal_nan=True, err_msg=f"{dist}.{fname}")


@pytest.mark.skipif(jax is None, reason="JAX is the reference")
def test_counts_between_integers_as_jax():
    """Between integers binom, nbinom and geom give their formula's continuous value and betabinom floors k, as
    JAX's (SciPy gives -inf)."""
    between = np.array([2.5, 0.5, 7.25, -0.5])
    for dist, params in (("binom", (10.0, 0.3)), ("nbinom", (4.0, 0.3)), ("geom", (0.3,)), ("betabinom", (10.0, 2.5, 1.5))):
        want = getattr(jst, dist).logpmf(between, *params)
        np.testing.assert_allclose(getattr(T, dist).logpmf(between, *params), want, rtol=1e-6, err_msg=dist)


def test_truncnorm_tails_and_multinomial():
    """truncnorm's mass and cdf in either tail (from log_ndtr, each of log cdf and log sf from the other where it
    is near 0); multinomial's counts along the last axis, -inf where they do not sum to n."""
    for a, b, z in ((8.0, 12.0, x + 10), (-12.0, -8.0, x - 10)):
        for fname in ("logpdf", "cdf", "logcdf", "sf", "logsf"):
            want = getattr(ss.truncnorm, fname)(z, a, b, 0.2, 1.1)
            for got in (getattr(T.truncnorm, fname)(z, a, b, 0.2, 1.1),
                        tj.jit(getattr(T.truncnorm, fname))(z, a, b, 0.2, 1.1)):
                np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-300, err_msg=fname)
    counts, p = np.array([[1, 2, 3], [0, 0, 6], [2, 2, 1]]), np.array([0.2, 0.3, 0.5])
    for got in (T.multinomial.logpmf(counts, 6, p), tj.jit(T.multinomial.logpmf)(counts, 6, p)):
        np.testing.assert_allclose(got, ss.multinomial.logpmf(counts, 6, p), rtol=1e-13)
    with pytest.raises(ValueError, match="must be of integer type"):
        T.multinomial.logpmf(counts.astype(float), 6, p)
    if jst is not None:
        grad = tj.grad(lambda p: T.multinomial.logpmf(counts[0], 6, p))(p)      # (JAX's sums a batch's x whole)
        np.testing.assert_allclose(grad, jax.grad(lambda p: jst.multinomial.logpmf(counts[0], 6, p))(p), rtol=1e-12)


def test_norm_tails():
    """cdf, sf, ppf and isf keep their precision far in the tails (ndtr, ndtri), where 1 - p would not."""
    np.testing.assert_allclose(T.norm.sf(30.0), ss.norm.sf(30.0), rtol=1e-13)
    np.testing.assert_allclose(T.norm.isf(1e-300), ss.norm.isf(1e-300), rtol=1e-14)
    np.testing.assert_allclose(T.norm.logcdf(-1e5), ss.norm.logcdf(-1e5), rtol=1e-14)


def test_multivariate():
    a = rng.normal(size=(3, 3))
    cov = a @ a.T + 3 * np.eye(3)
    mean = rng.normal(size=3)
    xs = rng.normal(size=(4, 3))
    want = ss.multivariate_normal.logpdf(xs, mean, cov)
    np.testing.assert_allclose(T.multivariate_normal.logpdf(xs, mean, cov), want, rtol=1e-13)
    np.testing.assert_allclose(tj.jit(T.multivariate_normal.pdf)(xs, mean, cov), np.exp(want), rtol=1e-13)
    covs = np.stack([cov, 2 * cov])            # batched covariances broadcast against batched x
    got = T.multivariate_normal.logpdf(xs[:2], mean, covs)
    np.testing.assert_allclose(got, [ss.multivariate_normal.logpdf(xs[i], mean, covs[i]) for i in range(2)],
                               rtol=1e-13)
    np.testing.assert_allclose(T.multivariate_normal.logpdf(xs, mean, 2.0),
                               ss.multivariate_normal.logpdf(xs, mean, 2.0 * np.eye(3)), rtol=1e-13)
    np.testing.assert_allclose(T.multivariate_normal.logpdf(x, 0.5, 2.0), ss.norm.logpdf(x, 0.5, np.sqrt(2.0)),
                               rtol=1e-13)
    with pytest.raises(ValueError, match="incompatible shapes"):
        T.multivariate_normal.logpdf(xs, mean, np.eye(2))
    alpha = np.array([1.5, 2.0, 3.0])
    xd = rng.dirichlet(alpha, size=5).T
    np.testing.assert_allclose(T.dirichlet.logpdf(xd, alpha), ss.dirichlet.logpdf(xd, alpha), rtol=1e-13)
    np.testing.assert_allclose(tj.jit(T.dirichlet.pdf)(xd[:2], alpha), ss.dirichlet.pdf(xd, alpha), rtol=1e-13)
    assert T.dirichlet.logpdf(np.array([0.5, 0.6, -0.1]), alpha) == -np.inf
    with pytest.raises(ValueError, match="one-dimensional"):
        T.dirichlet.logpdf(xd, alpha[None])


# (tracejit function, JAX function, arguments): the gradient of the summed log-density in every argument
GRADS = {
    "norm.logpdf": (T.norm.logpdf, "norm.logpdf", (x, 0.3, 1.7)),
    "norm.logcdf": (T.norm.logcdf, "norm.logcdf", (x, 0.3, 1.7)),
    "t.logpdf": (T.t.logpdf, "t.logpdf", (x, 3.5, 0.2, 1.3)),
    "beta.logpdf": (T.beta.logpdf, "beta.logpdf", (unit, 2.5, 1.5)),
    "gamma.logpdf": (T.gamma.logpdf, "gamma.logpdf", (positive + 0.2, 2.5, 0.1, 1.5)),
    "poisson.logpmf": (T.poisson.logpmf, "poisson.logpmf", (k[:7], 3.3)),
    "laplace.logpdf": (T.laplace.logpdf, "laplace.logpdf", (x, 0.1, 1.5)),
    "cauchy.logpdf": (T.cauchy.logpdf, "cauchy.logpdf", (x, 0.1, 1.5)),
    "logistic.logpdf": (T.logistic.logpdf, "logistic.logpdf", (x, 0.1, 1.5)),
    "expon.logpdf": (T.expon.logpdf, "expon.logpdf", (positive, 0.1, 1.5)),
    "gamma.cdf": (T.gamma.cdf, "gamma.cdf", (positive + 0.2, 2.5, 0.1, 1.5)),
    "norm.cdf": (T.norm.cdf, "norm.cdf", (x, 0.3, 1.7)),
    "norm.sf": (T.norm.sf, "norm.sf", (x, 0.3, 1.7)),
    "norm.ppf": (T.norm.ppf, "norm.ppf", (q, 0.3, 1.7)),
    "norm.isf": (T.norm.isf, "norm.isf", (q, 0.3, 1.7)),
    "bernoulli.logpmf": (T.bernoulli.logpmf, "bernoulli.logpmf", (np.array([0.0, 1.0, 1.0]), 0.3)),
    "uniform.logpdf": (T.uniform.logpdf, "uniform.logpdf", (x, -5.0, 12.0)),
    "laplace.cdf": (T.laplace.cdf, "laplace.cdf", (x, 0.1, 1.5)),
    "cauchy.ppf": (T.cauchy.ppf, "cauchy.ppf", (q, 0.1, 1.5)),
    "logistic.cdf": (T.logistic.cdf, "logistic.cdf", (x, 0.1, 1.5)),
    "expon.cdf": (T.expon.cdf, "expon.cdf", (positive, 0.1, 1.5)),
    "dirichlet.logpdf": (T.dirichlet.logpdf, "dirichlet.logpdf", (np.array([0.2, 0.3, 0.5]), np.array([1.5, 2, 3]))),
    "chi2.logpdf": (T.chi2.logpdf, "chi2.logpdf", (positive + 0.2, 3.5, 0.1, 1.5)),
    "chi2.cdf": (T.chi2.cdf, "chi2.cdf", (positive + 0.2, 3.5, 0.1, 1.5)),
    "truncnorm.logpdf": (T.truncnorm.logpdf, "truncnorm.logpdf", (x * 0.3, -1.0, 2.5, 0.2, 1.1)),
    "truncnorm.logcdf": (T.truncnorm.logcdf, "truncnorm.logcdf", (x * 0.3, -1.0, 2.5, 0.2, 1.1)),
    "binom.logpmf": (T.binom.logpmf, "binom.logpmf", (k[:7], 20.0, 0.3)),
    "nbinom.logpmf": (T.nbinom.logpmf, "nbinom.logpmf", (k[:7], 4.0, 0.3)),
    "geom.logpmf": (T.geom.logpmf, "geom.logpmf", (k[1:7], 0.3)),
    "pareto.logpdf": (T.pareto.logpdf, "pareto.logpdf", (positive + 1.5, 2.5, 0.1, 1.2)),
    "gumbel_r.logcdf": (T.gumbel_r.logcdf, "gumbel_r.logcdf", (x, 0.1, 1.5)),     # (JAX fails on its logpdf)
    "gumbel_l.logcdf": (T.gumbel_l.logcdf, "gumbel_l.logcdf", (x, 0.1, 1.5)),
    "gennorm.logpdf": (T.gennorm.logpdf, "gennorm.logpdf", (x, 1.5)),
    "vonmises.logpdf": (T.vonmises.logpdf, "vonmises.logpdf", (x, 2.5)),
    "wrapcauchy.logpdf": (T.wrapcauchy.logpdf, "wrapcauchy.logpdf", (np.abs(x), 0.4)),
    "multivariate_normal.logpdf": (T.multivariate_normal.logpdf, "multivariate_normal.logpdf",
                                   (rng.normal(size=(4, 2)), np.array([0.1, -0.2]), np.array([[2.0, 0.3], [0.3, 1.0]]))),
}


@pytest.mark.skipif(jax is None, reason="JAX is the reference for derivatives")
def test_gradients_against_jax():
    """One jitted JAX program for every reference (one compile)."""
    def theirs_fn(path):
        dist, fname = path.split(".")
        return getattr(getattr(jst, dist), fname)

    def summed(f):
        return lambda *a: f(*a).sum()

    def program():
        return {name: jax.grad(summed(theirs_fn(path)), argnums=tuple(range(len(args))))(
            *[jax.numpy.asarray(a, float) for a in args]) for name, (_, path, args) in GRADS.items()}

    reference = jax.jit(program)()
    for name, (ours, _, args) in GRADS.items():
        got = tj.grad(summed(ours), argnums=tuple(range(len(args))))(*[np.asarray(a, float) for a in args])
        for g, w in zip(got, reference[name]):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=name)


def test_mvn_gradient_and_vmap():
    a = rng.normal(size=(3, 3))
    cov = a @ a.T + 3 * np.eye(3)
    mean, xs = rng.normal(size=3), rng.normal(size=(4, 3))

    def total(mean, cov):
        return T.multivariate_normal.logpdf(xs, mean, cov).sum()

    d_mean, d_cov = tj.grad(total, argnums=(0, 1))(mean, cov)
    inverse = np.linalg.inv(cov)
    np.testing.assert_allclose(d_mean, inverse @ (xs - mean).sum(0), rtol=1e-12)
    residuals = (xs - mean) @ inverse
    np.testing.assert_allclose(d_cov, 0.5 * (residuals.T @ residuals) - 2 * inverse, rtol=1e-10, atol=1e-12)
    per_row = tj.vmap(T.multivariate_normal.logpdf, in_axes=(0, None, None))(xs, mean, cov)
    np.testing.assert_allclose(per_row, ss.multivariate_normal.logpdf(xs, mean, cov), rtol=1e-13)
    scales = np.array([0.5, 1.0, 2.0])
    batched = tj.jit(tj.vmap(lambda s: T.norm.logpdf(x, 0.3, s)))(scales)
    np.testing.assert_allclose(batched, [ss.norm.logpdf(x, 0.3, s) for s in scales], rtol=1e-13)


# (function, arguments) at well-conditioned points (finite differences stay in the support): check_grads to order 2 in every argument, forward and reverse
CHECK_GRADS = {
    "norm.logpdf": (T.norm.logpdf, (x[:3], 0.3, 1.7)),
    "norm.logcdf": (T.norm.logcdf, (x[:3], 0.3, 1.7)),
    "norm.ppf": (T.norm.ppf, (q[:3], 0.3, 1.7)),
    "norm.logsf": (T.norm.logsf, (x[:3], 0.3, 1.7)),
    "t.logpdf": (T.t.logpdf, (x[:3], 3.5, 0.2, 1.3)),
    "beta.logpdf": (T.beta.logpdf, (np.array([0.2, 0.5, 0.8]), 2.5, 1.5)),
    "beta.cdf": (lambda u: T.beta.cdf(u, 2.5, 1.5), (np.array([0.2, 0.5, 0.8]),)),
    "gamma.logpdf": (T.gamma.logpdf, (positive[:3] + 0.2, 2.5, 0.1, 1.5)),
    "gamma.cdf": (lambda v: T.gamma.cdf(v, 2.5, 0.1, 1.5), (positive[:3] + 0.2,)),
    "poisson.logpmf": (lambda mu: T.poisson.logpmf(k[:3], mu), (3.3,)),
    "bernoulli.logpmf": (lambda p: T.bernoulli.logpmf(np.array([0.0, 1.0]), p), (0.3,)),
    "uniform.logpdf": (lambda v: T.uniform.pdf(x[:3], -5.0, v), (12.0,)),
    "laplace.logpdf": (T.laplace.logpdf, (np.array([-1.0, 0.7, 2.0]), 0.1, 1.5)),
    "cauchy.logpdf": (T.cauchy.logpdf, (x[:3], 0.1, 1.5)),
    "logistic.logpdf": (T.logistic.logpdf, (x[:3], 0.1, 1.5)),
    "expon.logpdf": (T.expon.logpdf, (positive[:3], 0.1, 1.5)),
    "dirichlet.logpdf": (lambda alpha: T.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), alpha),  # x on the simplex
                         (np.array([1.5, 2.0, 3.0]),)),
    # (JAX's betabinom is 2e-8 from SciPy's values, and its derivatives as far from ours: checked numerically)
    "betabinom.logpmf": (lambda n, a, b: T.betabinom.logpmf(counts[:5], n, a, b), (20.0, 2.5, 1.5)),
    "truncnorm.logsf": (T.truncnorm.logsf, (x[:3] * 0.3, -1.0, 2.5, 0.2, 1.1)),
    "multivariate_normal.logpdf": (T.multivariate_normal.logpdf, (rng.normal(size=(2, 2)), np.array([0.1, -0.2]),
                                                                  np.array([[2.0, 0.3], [0.3, 1.0]]))),
}


@pytest.mark.parametrize("name", CHECK_GRADS)
def test_check_grads_to_order_2(name):
    fn, args = CHECK_GRADS[name]
    check_grads(fn, [np.asarray(a, float) for a in args], order=2, modes=("fwd", "rev"), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dist", CASES)
def test_vmap_against_a_loop(dist):
    """Each function batched over its argument (rows) and over its last parameter, eager and compiled."""
    inputs, params = CASES[dist]
    scales = np.array([1.5, 2.0, 3.0]) if dist != "bernoulli" else np.array([0.2, 0.5, 0.9])
    functions = [getattr(getattr(T, dist), fname) for fname in inputs]
    # (one program batches every function, each over its own copy of the scales: a compile each took most of the time)
    compiled = tj.jit(lambda copies: [tj.vmap(lambda s, fn=fn, arg=arg: fn(arg, *params[:-1], s))(s)
                                      for fn, arg, s in zip(functions, inputs.values(), copies)])(
        [scales.copy() for _ in inputs])
    for (fname, arg), fn, batched in zip(inputs.items(), functions, compiled, strict=True):
        rows = np.resize(arg, (3, 4))
        loop = np.stack([fn(r, *params) for r in rows])
        np.testing.assert_allclose(tj.vmap(lambda r, fn=fn: fn(r, *params))(rows), loop, rtol=1e-14, err_msg=fname)
        loop = np.stack([fn(arg, *params[:-1], s) for s in scales])
        np.testing.assert_allclose(batched, loop, rtol=1e-13, atol=1e-300, equal_nan=True, err_msg=fname)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_floats(dtype):
    """The first two functions of every distribution keep float16 and bfloat16 (as JAX's), computed in float32 and
    rounded once, eagerly and compiled alike: within one of their ulps of SciPy's value (and float32's cancellation
    where it crosses zero)."""
    dtype = np.dtype(getattr(ml_dtypes, dtype, dtype))
    eps = float(ml_dtypes.finfo(dtype).eps)
    calls = [(f"{dist}.{fname}", getattr(getattr(T, dist), fname), getattr(getattr(ss, dist), fname),
              arg.astype(dtype), params)
             for dist, (inputs, params) in CASES.items() for fname, arg in list(inputs.items())[:2]]
    with np.errstate(all="ignore"):     # (one program computes them all: compiling each took most of the time)
        compiled = tj.jit(lambda args: [c[1](a, *c[4]) for c, a in zip(calls, args)])([c[3] for c in calls])
        for (name, ours, theirs, arg16, params), jitted in zip(calls, compiled):
            want, eager = theirs(arg16.astype(np.float64), *params), ours(arg16, *params)
            assert eager.dtype == jitted.dtype == dtype, name
            for got in (eager, jitted):
                np.testing.assert_allclose(got.astype(np.float64), want, rtol=2 * eps, atol=1e-6, equal_nan=True,
                                           err_msg=name)
    x16 = rng.normal(size=(4, 3)).astype(dtype)
    got = T.multivariate_normal.logpdf(x16, np.zeros(3, dtype), np.eye(3, dtype=dtype))
    assert got.dtype == dtype
    want = ss.multivariate_normal.logpdf(x16.astype(np.float64), np.zeros(3), np.eye(3))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2 * eps)


@pytest.mark.skipif(jst is None, reason="compared with jax.scipy.stats")
def test_rankdata_sem_and_mode_as_jax_and_scipy(jax64):
    """Ranks by every method over the flat array and along each axis (ties, a NaN, integers), the standard error
    of the mean (NaNs omitted or not) and its gradient, and the mode (ties go to the smallest value, NaNs
    counted together, an empty axis): eager and compiled, JAX's values, dtypes and shapes, SciPy's values."""
    a = np.random.default_rng(3).integers(0, 4, (5, 6)).astype(np.float64)
    with_nan = a.copy()
    with_nan[1, 2] = np.nan
    arrays, axes = (a, with_nan, a.astype(np.int32)), (None, 0, 1)
    methods = ("average", "min", "max", "dense", "ordinal")

    def every(S, *arrs):     # (one program on each side)
        return [S.rankdata(arr, method, axis=axis) for method in methods for arr in arrs for axis in axes]
    wants = jax.jit(lambda *arrs: every(jst, *arrs))(*arrays)
    for want, eager, compiled in zip(wants, every(T, *arrays), tj.jit(lambda *arrs: every(T, *arrs))(*arrays),
                                     strict=True):
        for got in (eager, compiled):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    for method in methods:
        np.testing.assert_array_equal(T.rankdata(a, method, axis=1), ss.rankdata(a, method, axis=1))

    def modes(S, *arrs):
        return [S.mode(arr, axis, keepdims=keepdims) for arr in arrs for axis in axes for keepdims in (False, True)]
    wants = jax.jit(lambda *arrs: modes(jst, *arrs))(*arrays)
    for want, eager, compiled in zip(wants, modes(T, *arrays), tj.jit(lambda *arrs: modes(T, *arrs))(*arrays),
                                     strict=True):
        for got in (eager, compiled):
            assert got.mode.shape == want.mode.shape and got.count.dtype == want.count.dtype
            np.testing.assert_array_equal(got.mode, want.mode)
            np.testing.assert_array_equal(got.count, want.count)
    for axis in axes:
        np.testing.assert_array_equal(T.mode(a, axis).mode, ss.mode(a, axis).mode)
        np.testing.assert_allclose(tj.jit(lambda v, axis=axis: T.sem(v, axis))(a), ss.sem(a, axis), rtol=1e-13)
        np.testing.assert_allclose(T.sem(with_nan, axis, nan_policy="omit"), jst.sem(with_nan, axis, nan_policy="omit"),
                                   rtol=1e-13)
    check_grads(lambda v: T.sem(v, 1), (a + np.arange(6) * 0.1,), order=2)
    empty = T.mode(np.zeros((0, 3)), 0)
    assert np.isnan(empty.mode).all() and (empty.count == 0).all()
    with pytest.raises(ValueError, match="unknown method 'first'"):
        T.rankdata(a, "first")
    with pytest.raises(NotImplementedError, match="nan_policy='omit' is not implemented"):
        T.mode(a, nan_policy="omit")
