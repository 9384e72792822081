"""tracejit.random: JAX's values (bit for bit where JAX's are exact functions of the bits, within ulps where they
go through transcendental functions), the distributions' statistics (independent of JAX, with scipy.stats), jit ==
eager == vmap of single draws, and keys through jit, vmap, scan, fori_loop, grad and the disk cache."""
import importlib.util
import math
import pathlib
import re

import numpy as np
import pytest
import scipy.special
import scipy.stats as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import random
from tracejit.nn import initializers

jax = pytest.importorskip("jax", reason="JAX is the reference for tracejit.random")
jr = jax.random
ji = jax.nn.initializers


@pytest.fixture(scope="module", autouse=True)
def x64():
    """JAX's defaults with x64 are tracejit's (float64, int64, uint64)."""
    with jax.enable_x64(True):
        yield


def test_known_values():
    """The values FACTS.md records from JAX 0.10.2."""
    key = random.PRNGKey(42)
    assert key.dtype == np.uint32 and key.tolist() == [0, 42]
    assert random.split(key).tolist() == [[1832780943, 270669613], [64467757, 2916123636]]
    u = random.uniform(key, (3,), dtype=np.float32)
    assert u.dtype == np.float32 and u.tolist() == np.float32([0.48870957, 0.6797972, 0.6162715]).tolist()


def test_seeds_as_jax():
    for seed in (0, 1, -1, 2 ** 32 + 7, -2 ** 63, np.int32(-1), np.uint32(2 ** 32 - 1), np.uint64(2 ** 64 - 1),
                 np.int8(-3)):
        np.testing.assert_array_equal(random.PRNGKey(seed), jr.PRNGKey(seed), err_msg=repr(seed))
    np.testing.assert_array_equal(tj.jit(random.PRNGKey)(np.int64(-5)), jr.PRNGKey(-5))
    np.testing.assert_array_equal(tj.vmap(random.PRNGKey)(np.arange(3)), jax.vmap(jr.PRNGKey)(np.arange(3)))
    with pytest.raises(OverflowError):
        random.PRNGKey(2 ** 64)

# -------------------------------------------------------------------------------------- bit for bit


KEYS = (0, 42, 2 ** 40 + 3)
BIG = 2 ** 16 + 5           # past 2**16 counters


def _draws(r, k):
    """name -> draw of the generators JAX computes exactly from the bits (r: tracejit.random or jax.random)."""
    p5 = np.array([0.1, 0.2, 0.3, 0.15, 0.25])
    logits = np.log(np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]]))
    return {
        "bits u8": lambda: r.bits(k, (7, 3), np.uint8), "bits u16": lambda: r.bits(k, (5,), np.uint16),
        "bits u32": lambda: r.bits(k, (BIG,), np.uint32), "bits u64": lambda: r.bits(k, (3, 0, 2)),
        "bits scalar": lambda: r.bits(k), "split": lambda: r.split(k, 3), "split shape": lambda: r.split(k, (2, 3)),
        "fold_in": lambda: r.fold_in(k, 2 ** 32 - 1), "uniform": lambda: r.uniform(k, (BIG,)),
        "uniform f32": lambda: r.uniform(k, (7, 3), np.float32), "uniform f16": lambda: r.uniform(k, (9,), np.float16),
        "uniform bf16": lambda: r.uniform(k, (9,), jax.numpy.bfloat16), "uniform empty": lambda: r.uniform(k, (0, 4)),
        "uniform range": lambda: r.uniform(k, (101,), np.float32, -3.5, 7.25),
        "uniform range f64": lambda: r.uniform(k, (101,), minval=np.array([-2.0]), maxval=10.0),
        "randint": lambda: r.randint(k, (101,), -7, 1000003), "randint i8": lambda: r.randint(k, (9,), -100, 100, np.int8),
        "randint u8 full": lambda: r.randint(k, (9,), 0, 256, np.uint8),
        "randint u32 full": lambda: r.randint(k, (9,), 0, 2 ** 32, np.uint32),
        "randint arrays": lambda: r.randint(k, (4, 3), np.array([0, 5, -7]), np.array([3, 100, 2]), np.int32),
        "randint empty span": lambda: r.randint(k, (3,), 5, 5), "randint i64": lambda: r.randint(k, (5,), -2 ** 62, 2 ** 62),
        "bernoulli": lambda: r.bernoulli(k, 0.3, (101,)),
        "bernoulli f32": lambda: r.bernoulli(k, np.array([0.1, 0.5, 0.9], np.float32), (5, 3)),
        "bernoulli high": lambda: r.bernoulli(k, 1e-3, (11,), mode="high"),
        "permutation": lambda: r.permutation(k, 1000), "permutation rows": lambda: r.permutation(k, np.arange(30.).reshape(6, 5)),
        "permutation axis": lambda: r.permutation(k, np.arange(30).reshape(3, 10), axis=1),
        "permutation independent": lambda: r.permutation(k, np.arange(30).reshape(3, 10), 1, True),
        "choice": lambda: r.choice(k, 10, (5, 3)), "choice without": lambda: r.choice(k, 100, (7,), replace=False),
        "choice axis": lambda: r.choice(k, np.arange(30.).reshape(3, 10), (4,), axis=1),
        "choice p": lambda: r.choice(k, 5, (101,), p=p5), "choice p without": lambda: r.choice(k, 5, (3,), False, p5),
        "categorical": lambda: r.categorical(k, logits, shape=(7, 2)),
        "categorical without": lambda: r.categorical(k, logits, axis=1, shape=(2, 2), replace=False),
        "rademacher": lambda: r.rademacher(k, (11,)), "geometric": lambda: r.geometric(k, 0.2, (101,)),
        "triangular": lambda: r.triangular(k, 0.0, 0.3, 1.0, (101,)),
        "poisson": lambda: r.poisson(k, np.array([0.0, 0.5, 3.0, 9.9, 10.0, 50.0, 1000.0]), (20, 7)),
        "binomial": lambda: r.binomial(k, np.array([5.0, 20.0, 1000.0]), np.array([0.1, 0.7, 0.3]), (20, 3)),
        "multinomial": lambda: r.multinomial(k, 100.0, np.array([0.2, 0.3, 0.5]), shape=(4, 3)),
    }


def jax_values(draws, keys, fast_compile=False):
    """JAX's values of every draw of draws(jax.random, key), for each seed in keys, from one XLA compile (compiling
    JAX's samplers one by one takes most of this file's time). fast_compile: XLA's backend at optimisation level
    0, three times faster to compile; its values move by an ulp (no fused multiply-adds), so only for the draws
    compared to within ulps."""
    def run(k):
        return {name: draw[0]() if isinstance(draw, tuple) else draw() for name, draw in draws(jr, k).items()}

    # the level is explicit either way: the differential suite may have started JAX with level 0 for the session
    compiled = jax.jit(run).lower(jr.PRNGKey(0)).compile(
        {"xla_backend_optimization_level": 0 if fast_compile else 3})
    return {seed: jax.device_get(compiled(jr.PRNGKey(seed))) for seed in keys}


@pytest.fixture(scope="module")
def jax_exact():
    return jax_values(_draws, KEYS)


@pytest.mark.parametrize("name", list(_draws(random, None)))
def test_exactly_jax(name, jax_exact):
    """Eager and compiled, over several keys and shapes (0-size, odd, scalar, past 2**16)."""
    compiled = tj.jit(lambda k: _draws(random, k)[name]())
    for seed in KEYS:
        expected = jax_exact[seed][name]
        eager = _draws(random, random.PRNGKey(seed))[name]()
        for got in (eager, compiled(random.PRNGKey(seed))):
            assert got.dtype == expected.dtype and got.shape == expected.shape, (name, got.dtype, got.shape)
            np.testing.assert_array_equal(got, expected, err_msg=f"{name}, seed {seed}")

# ------------------------------------------------------------------------------------------- to ulps


def _close_draws(r, k):
    """name -> (draw, tolerance in ulps of max(|x|, 1)): what goes through log, erf_inv, pow ..."""
    return {
        "normal": (lambda: r.normal(k, (1001,)), 4), "normal f32": (lambda: r.normal(k, (1001,), np.float32), 4),
        "normal f16": (lambda: r.normal(k, (11,), np.float16), 1),
        "truncated_normal": (lambda: r.truncated_normal(k, -2.0, 1.5, (101,)), 8),
        "truncated_normal f32": (lambda: r.truncated_normal(k, np.array([-1.0, 0.5]), 3.0, (50, 2), np.float32), 8),
        "exponential": (lambda: r.exponential(k, (101,)), 4), "laplace": (lambda: r.laplace(k, (101,)), 4),
        "logistic": (lambda: r.logistic(k, (101,)), 8), "gumbel": (lambda: r.gumbel(k, (101,)), 8),
        "gumbel high f32": (lambda: r.gumbel(k, (101,), np.float32, "high"), 8),
        "cauchy": (lambda: r.cauchy(k, (101,)), 8), "pareto": (lambda: r.pareto(k, 3.0, (101,)), 8),
        "lognormal": (lambda: r.lognormal(k, 0.5, (101,)), 8), "maxwell": (lambda: r.maxwell(k, (101,)), 8),
        "double_sided_maxwell": (lambda: r.double_sided_maxwell(k, 1.0, 2.0, (21,)), 8),
        "weibull_min": (lambda: r.weibull_min(k, 2.0, 1.5, (101,)), 8), "rayleigh": (lambda: r.rayleigh(k, 2.0, (101,)), 4),
        "wald": (lambda: r.wald(k, 1.5, (101,)), 16),
        "gamma": (lambda: r.gamma(k, np.array([0.3, 1.0, 2.5, 10.0]), (20, 4)), 8),
        "gamma f32": (lambda: r.gamma(k, 1.5, (31,), np.float32), 8),
        "loggamma": (lambda: r.loggamma(k, np.array([0.01, 0.3, 3.0]), (10, 3)), 8),
        "beta": (lambda: r.beta(k, 2.0, 3.0, (31,)), 8), "dirichlet": (lambda: r.dirichlet(k, np.array([0.5, 1.0, 2.0]), (10,)), 8),
        "chisquare": (lambda: r.chisquare(k, 3.0, (31,)), 8), "f": (lambda: r.f(k, 3.0, 5.0, (31,)), 8),
        "t": (lambda: r.t(k, 4.0, (31,)), 8), "generalized_normal": (lambda: r.generalized_normal(k, 1.5, (31,)), 8),
        "ball": (lambda: r.ball(k, 3, 2, (10,)), 8),
    }


@pytest.fixture(scope="module")
def jax_close():
    return jax_values(_close_draws, (3,), fast_compile=True)[3]


@pytest.mark.parametrize("name", list(_close_draws(random, None)))
def test_close_to_jax(name, jax_close):
    draw, ulps = _close_draws(random, random.PRNGKey(3))[name]
    expected = jax_close[name]
    for got in (draw(), tj.jit(lambda k: _close_draws(random, k)[name][0]())(random.PRNGKey(3))):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        scale = np.maximum(np.abs(expected.astype(np.float64)), 1.0)
        np.testing.assert_array_less(np.abs(got.astype(np.float64) - expected) / scale,
                                     ulps * np.finfo(expected.dtype).eps + 1e-300, err_msg=name)


INITIALIZERS = [("glorot_normal", ()), ("glorot_uniform", ()), ("he_normal", ()), ("he_uniform", ()),
                ("lecun_normal", ()), ("lecun_uniform", ()), ("xavier_normal", ()), ("kaiming_uniform", ()),
                ("xavier_uniform", ()), ("kaiming_normal", ()), ("normal", (0.1,)), ("uniform", (0.5,)),
                ("truncated_normal", (0.3,)), ("variance_scaling", (2.0, "fan_geo_avg", "normal")),
                ("constant", (3.0,)), ("orthogonal", ())]
INIT_SHAPES = ((np.float32, (30, 20)), (np.float64, (3, 3, 8, 5)))


def _initialize(module, key):
    """(name, dtype) -> the initializer's value, with module jax.nn.initializers or tracejit.nn.initializers."""
    return {(name, np.dtype(dtype).name): getattr(module, name)(*args)(key, shape, dtype)
            for name, args in INITIALIZERS for dtype, shape in INIT_SHAPES}


def test_initializers_match_jax():
    expected = jax.device_get(jax.jit(lambda k: {str(n): v for n, v in _initialize(ji, k).items()})(jr.PRNGKey(1)))
    for (name, dtype), got in _initialize(initializers, random.PRNGKey(1)).items():
        want = expected[str((name, dtype))]
        assert got.dtype == want.dtype and got.shape == want.shape
        tolerance = 4 * np.finfo(dtype).eps * (1 if name != "orthogonal" else 100)  # orthogonal: through a QR
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance, err_msg=name)
    assert initializers.zeros(None, (2, 3)).dtype == np.float64
    np.testing.assert_array_equal(initializers.ones(None, (2,), np.float32), np.ones(2, np.float32))
    with pytest.raises(ValueError, match="at least 2D"):
        initializers.glorot_normal()(random.PRNGKey(0), (3,))
    with pytest.raises(ValueError, match="invalid mode"):
        initializers.variance_scaling(1.0, "fan_sideways", "normal")


def test_delta_orthogonal_kernels_match_jax():
    """A 1-, 2- and 3-d convolution kernel: zeros but the orthogonal matrix at the spatial centre, JAX's draw."""
    shapes = ((3, 4, 5), (3, 2, 4, 4), (2, 3, 3, 2, 3))
    expected = jax.jit(lambda k: [ji.delta_orthogonal(1.5)(k, s, np.float32) for s in shapes])(jr.PRNGKey(2))
    for shape, want in zip(shapes, expected):
        got = initializers.delta_orthogonal(1.5)(random.PRNGKey(2), shape, np.float32)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="requires a 3D, 4D or 5D shape, got"):
        initializers.delta_orthogonal()(random.PRNGKey(0), (3, 4))
    with pytest.raises(ValueError, match="less or equal than `fan_out`, got shape"):
        initializers.delta_orthogonal()(random.PRNGKey(0), (3, 5, 4))


def test_linear_algebra_samplers_match_jax():
    key, jkey = random.PRNGKey(5), jr.PRNGKey(5)
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])
    mean = np.array([1.0, -1.0, 0.5])
    for method in ("cholesky", "eigh", "svd"):
        np.testing.assert_allclose(random.multivariate_normal(key, mean, cov, (4,), method=method),
                                   jr.multivariate_normal(jkey, mean, cov, (4,), method=method), rtol=1e-12, atol=1e-12)
    q = random.orthogonal(key, 4, (2,))
    np.testing.assert_allclose(q, jr.orthogonal(jkey, 4, (2,)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), (2, 4, 4)), atol=1e-12)

# ---------------------------------------------------------------------------------------- statistics

N = 20_000


def _ks(sample, cdf):
    """Kolmogorov-Smirnov against a cdf: the fixed keys make the outcome deterministic; p above 1e-3."""
    assert st.kstest(np.asarray(sample, np.float64), cdf).pvalue > 1e-3


STATS = {   # sampler(key) -> sample, reference distribution (scipy.stats)
    "uniform": (lambda k: random.uniform(k, (N,), minval=-1.0, maxval=3.0), st.uniform(-1, 4)),
    "uniform f32": (lambda k: random.uniform(k, (N,), np.float32), st.uniform()),
    "normal": (lambda k: random.normal(k, (N,)), st.norm()),
    "normal f32": (lambda k: random.normal(k, (N,), np.float32), st.norm()),
    "truncated_normal": (lambda k: random.truncated_normal(k, -1.0, 2.0, (N,)), st.truncnorm(-1.0, 2.0)),
    "exponential": (lambda k: random.exponential(k, (N,)), st.expon()),
    "laplace": (lambda k: random.laplace(k, (N,)), st.laplace()),
    "logistic": (lambda k: random.logistic(k, (N,)), st.logistic()),
    "gumbel": (lambda k: random.gumbel(k, (N,)), st.gumbel_r()),
    "gumbel high": (lambda k: random.gumbel(k, (N,), mode="high"), st.gumbel_r()),
    "cauchy": (lambda k: random.cauchy(k, (N,)), st.cauchy()),
    "pareto": (lambda k: random.pareto(k, 3.0, (N,)), st.pareto(3.0)),
    "lognormal": (lambda k: random.lognormal(k, 0.5, (N,)), st.lognorm(0.5)),
    "maxwell": (lambda k: random.maxwell(k, (N,)), st.maxwell()),
    "weibull_min": (lambda k: random.weibull_min(k, 2.0, 1.5, (N,)), st.weibull_min(1.5, scale=2.0)),
    "rayleigh": (lambda k: random.rayleigh(k, 2.0, (N,)), st.rayleigh(scale=2.0)),
    "triangular": (lambda k: random.triangular(k, 0.0, 0.3, 1.0, (N,)), st.triang(0.3)),
    "wald": (lambda k: random.wald(k, 1.5, (N,)), st.invgauss(1.5)),
    "gamma small": (lambda k: random.gamma(k, 0.4, (N,)), st.gamma(0.4)),
    "gamma": (lambda k: random.gamma(k, 3.5, (N,)), st.gamma(3.5)),
    "loggamma": (lambda k: np.exp(random.loggamma(k, 0.4, (N,))), st.gamma(0.4)),
    "beta": (lambda k: random.beta(k, 2.0, 3.0, (N,)), st.beta(2.0, 3.0)),
    "chisquare": (lambda k: random.chisquare(k, 3.0, (N,)), st.chi2(3.0)),
    "f": (lambda k: random.f(k, 3.0, 5.0, (N,)), st.f(3.0, 5.0)),
    "t": (lambda k: random.t(k, 4.0, (N,)), st.t(4.0)),
    "generalized_normal": (lambda k: random.generalized_normal(k, 1.5, (N,)), st.gennorm(1.5)),
    "double_sided_maxwell": (lambda k: np.abs(random.double_sided_maxwell(k, 0.0, 1.0, (N,))), st.maxwell()),
    "dirichlet marginal": (lambda k: random.dirichlet(k, np.array([0.5, 1.5, 2.0]), (N,))[:, 1], st.beta(1.5, 2.5)),
    "ball radius": (lambda k: np.linalg.norm(random.ball(k, 3, 2, (N,)), axis=-1) ** 3, st.uniform()),
}


@pytest.mark.parametrize("name", list(STATS))
def test_distribution_fits(name):
    sampler, reference = STATS[name]
    sample = sampler(random.PRNGKey(11))
    assert np.all(np.isfinite(sample))
    _ks(sample, reference.cdf)
    if np.isfinite(reference.var()):
        z = (np.mean(sample) - reference.mean()) / math.sqrt(reference.var() / sample.size)
        assert abs(z) < 4.5, z


def _chi_square(counts, expected):
    """Pearson's chi-square test of observed counts against expected counts: p above 1e-3."""
    assert st.chisquare(counts, expected * counts.sum() / expected.sum()).pvalue > 1e-3


@pytest.mark.parametrize("name", ["randint", "choice p", "categorical", "poisson", "poisson large", "binomial",
                                  "binomial large", "geometric", "bernoulli", "multinomial", "permutation"])
def test_discrete_distribution_fits(name):
    key = random.PRNGKey(12)
    if name == "randint":
        _chi_square(np.bincount(random.randint(key, (N,), -3, 4) + 3), np.ones(7))
    elif name == "choice p":
        p = np.array([0.1, 0.2, 0.3, 0.4])
        _chi_square(np.bincount(random.choice(key, 4, (N,), p=p), minlength=4), p)
    elif name == "categorical":
        p = np.array([0.5, 0.2, 0.3])
        _chi_square(np.bincount(random.categorical(key, np.log(p), shape=(N,)), minlength=3), p)
    elif name.startswith("poisson"):
        lam = 3.0 if name == "poisson" else 40.0
        draws = random.poisson(key, lam, (N,))
        support = np.arange(int(lam * 3))
        counts = np.bincount(np.minimum(draws, support[-1]), minlength=support.size)
        _chi_square(counts, np.append(st.poisson(lam).pmf(support[:-1]), st.poisson(lam).sf(support[-2])))
    elif name.startswith("binomial"):
        n, p = (8, 0.3) if name == "binomial" else (200, 0.6)
        draws = random.binomial(key, n, p, (N,)).astype(int)
        expected = st.binom(n, p).pmf(np.arange(n + 1))
        keep = expected * N > 5
        _chi_square(np.bincount(draws, minlength=n + 1)[keep], expected[keep])
    elif name == "geometric":
        draws = random.geometric(key, 0.3, (N,))
        counts = np.bincount(np.minimum(draws, 15), minlength=16)[1:]
        _chi_square(counts, np.append(st.geom(0.3).pmf(np.arange(1, 15)), st.geom(0.3).sf(14)))
    elif name == "bernoulli":
        assert abs(np.mean(random.bernoulli(key, 0.3, (N,))) - 0.3) < 4.5 * math.sqrt(0.21 / N)
    elif name == "multinomial":
        counts = random.multinomial(key, 20.0, np.array([0.2, 0.3, 0.5]), shape=(N, 3))
        assert np.all(counts.sum(-1) == 20)
        np.testing.assert_allclose(counts.mean(0), [4.0, 6.0, 10.0], rtol=0.02)
    else:
        first = np.array([random.permutation(k, 4)[0] for k in random.split(key, 2000)])
        _chi_square(np.bincount(first, minlength=4), np.ones(4))

# ------------------------------------------------------------------------- jit == eager == vmap of one


@pytest.mark.parametrize("draw", [
    lambda k: random.uniform(k, (3, 5)), lambda k: random.randint(k, (4,), 0, 9),
    lambda k: random.normal(k, (6,), np.float32), lambda k: random.permutation(k, 7),
    lambda k: random.split(k, 3), lambda k: random.gamma(k, np.array([0.5, 4.0])),
    lambda k: random.poisson(k, 4.0, (3,)), lambda k: random.choice(k, 9, (3,), replace=False),
], ids=["uniform", "randint", "normal", "permutation", "split", "gamma", "poisson", "choice"])
def test_jit_eager_and_vmap_agree(draw):
    keys = random.split(random.PRNGKey(7), 4)
    loop = np.stack([draw(k) for k in keys])
    np.testing.assert_allclose(np.stack([tj.jit(draw)(k) for k in keys]), loop, rtol=1e-6, atol=0)
    np.testing.assert_allclose(tj.vmap(draw)(keys), loop, rtol=1e-6, atol=0)
    np.testing.assert_allclose(tj.jit(tj.vmap(draw))(keys), loop, rtol=1e-6, atol=0)
    np.testing.assert_array_equal(tj.jit(tj.vmap(random.split))(keys), np.stack([random.split(k) for k in keys]))

def test_large_draws_match_jax():
    """Draws large enough for the batched rejection loops to run in blocks and again for rejected examples, and for
    a shuffle of two rounds (sorted as one stacked argsort): JAX's values. Python float parameters of a large eager
    draw (the jitted sampler) cast to the requested float32 as in JAX."""
    k = random.PRNGKey(11)
    np.testing.assert_array_equal(tj.jit(lambda k: random.permutation(k, 100_000))(k), jr.permutation(k, 100_000))
    alpha = np.array([0.3, 1.5, 2.0, 7.0], np.float32)
    draws = {"gamma": (lambda r, k: r.gamma(k, alpha, (2000, 4), np.float32), 8),
             "loggamma": (lambda r, k: r.loggamma(k, alpha, (2000, 4), np.float32), 8),
             "beta": (lambda r, k: r.beta(k, 2.0, 3.0, (5000,), np.float32), 8),
             "t": (lambda r, k: r.t(k, 3.0, (5000,), np.float32), 16)}
    for name, (draw, ulps) in draws.items():
        expected = np.asarray(draw(jr, k))
        for got in (draw(random, k), tj.jit(lambda k, draw=draw: draw(random, k))(k)):
            assert got.dtype == expected.dtype, name
            scale = np.maximum(np.abs(expected.astype(np.float64)), 1.0)
            np.testing.assert_array_less(np.abs(got - expected.astype(np.float64)) / scale, ulps * 2.0 ** -23, err_msg=name)


def test_split_key_is_a_key_of_any_split():
    k = random.PRNGKey(5)
    for i, n in ((0, 2), (1, 2), (2, 3), (6, 7)):
        np.testing.assert_array_equal(np.stack(random.keys.split_key(k, i)), random.split(k, n)[i])


# ----------------------------------------------------------------------------------- keys everywhere


def test_typed_keys():
    k = random.key(3)
    assert isinstance(k, random.KeyArray) and k.shape == () and str(k.dtype) == "key<fry>"
    np.testing.assert_array_equal(random.key_data(k), random.PRNGKey(3))
    np.testing.assert_array_equal(random.key_data(k), jr.key_data(jr.key(3)))
    keys = random.split(k, (2, 3))
    assert isinstance(keys, random.KeyArray) and keys.shape == (2, 3) and len(keys) == 2
    assert random.key_data(keys[1, 2]).tolist() == random.split(random.PRNGKey(3), (2, 3))[1, 2].tolist()
    assert random.key_impl(k) == "threefry2x32" and random.key_impl(random.PRNGKey(0)) == "threefry2x32"
    again = random.wrap_key_data(random.key_data(keys))
    assert bool(np.all(again == keys)) and not bool(keys[0, 0] == keys[0, 1])
    np.testing.assert_array_equal(random.uniform(keys[0, 1], (3,)), random.uniform(random.key_data(keys)[0, 1], (3,)))
    out = tj.jit(lambda k: random.split(random.fold_in(k, 5)))(k)       # typed keys in and out of jit
    assert isinstance(out, random.KeyArray)
    np.testing.assert_array_equal(random.key_data(out), jr.key_data(jr.split(jr.fold_in(jr.key(3), 5))))
    assert "key<fry>" in repr(k)


def test_keys_in_scan_fori_loop_and_grad():
    key = random.PRNGKey(0)

    def body(k, _):
        k, sub = random.split(k)
        return k, random.uniform(sub, (2,))

    expected, k = [], key
    for _ in range(4):
        k, sub = random.split(k)
        expected.append(random.uniform(sub, (2,)))
    for run in (lambda k: tj.lax.scan(body, k, None, length=4), tj.jit(lambda k: tj.lax.scan(body, k, None, length=4))):
        last, xs = run(key)
        np.testing.assert_array_equal(xs, np.stack(expected))
        np.testing.assert_array_equal(last, k)
    typed_last, _ = tj.jit(lambda k: tj.lax.scan(body, k, None, length=4))(random.key(0))
    np.testing.assert_array_equal(random.key_data(typed_last), k)

    def step(i, carry):
        k, total = carry
        k, sub = random.split(k)
        return k, total + random.normal(sub, ())

    np.testing.assert_array_equal(tj.jit(lambda k: tj.lax.fori_loop(0, 5, step, (k, 0.0)))(key)[1],
                                  tj.lax.fori_loop(0, 5, step, (key, 0.0))[1])

    def loss(mu, sigma, k):       # the reparameterisation trick: eps is a constant
        return tnp.sum((mu + sigma * random.normal(k, (5,))) ** 2)

    eps = random.normal(key, (5,))
    expected = (np.sum(2 * (1.5 + 0.7 * eps)), np.sum(2 * (1.5 + 0.7 * eps) * eps))
    for grad in (tj.grad(loss, argnums=(0, 1)), tj.jit(tj.grad(loss, argnums=(0, 1)))):
        np.testing.assert_allclose(grad(1.5, 0.7, key), expected, rtol=1e-12)
    np.testing.assert_allclose(tj.grad(lambda lo: tnp.sum(random.uniform(key, (4,), minval=lo, maxval=2.0)))(0.5),
                               np.sum(1 - random.uniform(key, (4,))), rtol=1e-12)
    level = scipy.special.gammainc(2.0, random.gamma(key, 2.0, (3,)))       # a sample moves at a fixed quantile
    moved = [scipy.special.gammaincinv(a, level) for a in (2.0 + 1e-6, 2.0 - 1e-6)]
    np.testing.assert_allclose(tj.jacfwd(lambda a: random.gamma(key, a, (3,)))(2.0), (moved[0] - moved[1]) / 2e-6,
                               rtol=1e-6)
    np.testing.assert_allclose(tj.grad(lambda m: tnp.sum(m * random.gamma(key, 2.0, (3,))))(1.0),
                               np.sum(random.gamma(key, 2.0, (3,))))


def test_through_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(tj.config, "cache_dir", str(tmp_path / "cache"))
    monkeypatch.setattr(tj.config, "disk_cache", True)

    def draw(k):
        return random.normal(k, (5,), np.float32) + random.randint(k, (5,), 0, 3)

    results = []
    for _ in range(2):
        tj.clear_caches()
        f = tj.jit(draw)
        results.append(f(random.PRNGKey(9)))
        from_disk = f.cache_info().signatures[0].from_disk
    assert from_disk
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[1], draw(random.PRNGKey(9)))


def test_threefry_fuses_into_one_loop():
    """Counters, the hash and the conversion to floats form one vectorized loop (no intermediate arrays): the
    20 rotations appear once, on vectors."""
    f = tj.jit(lambda k: random.uniform(k, (1024,), np.float32))
    llvm = f.lower(random.PRNGKey(0)).as_llvm()
    assert llvm.count("define void @step") == 1
    assert len(re.findall(r"call <\d+ x i32> @llvm\.fshl\.v\d+i32", llvm)) == 20
    assert "@llvm.fshl.i32" not in llvm      # no scalar remainder loop

def test_vae_example_trains():
    """examples/vae.py end to end: keys split inside the jitted Adam step, the reparameterised ELBO falls."""
    path = pathlib.Path(__file__).parent.parent / "examples" / "vae.py"
    spec = importlib.util.spec_from_file_location("vae_example", path)
    vae = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vae)
    first, last = vae.main(steps=300, report=300)
    assert last < 0.6 * first, (first, last)

# ---------------------------------------------------------------------------------------- bad input


def test_bad_input_is_named():
    key = random.PRNGKey(0)
    with pytest.raises(ValueError, match="uniform accepts a single key.*shape \\(3,\\)"):
        random.uniform(random.split(key, 3), (2,))
    with pytest.raises(TypeError, match="normal: key must be a key"):
        random.normal(np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="PRNGKey accepts a scalar seed"):
        random.PRNGKey(np.arange(3))
    with pytest.raises(TypeError, match="seed must be an integer"):
        random.PRNGKey(1.5)
    with pytest.raises(ValueError, match="must be an unsigned int dtype"):
        random.bits(key, (2,), np.int32)
    with pytest.raises(TypeError, match="randint only accepts integer dtypes"):
        random.randint(key, (2,), 0, 3, np.float32)
    with pytest.raises(ValueError, match="must be a float dtype"):
        random.uniform(key, (2,), np.int32)
    with pytest.raises(ValueError, match="shape must be a tuple of nonnegative ints"):
        random.normal(key, (-1,))
    with pytest.raises(ValueError, match="Cannot take a larger sample"):
        random.choice(key, 3, (4,), replace=False)
    with pytest.raises(TypeError, match="fold_in accepts a scalar"):
        random.fold_in(key, np.arange(2))
    with pytest.raises(ValueError, match="broadcast-compatible"):
        random.bernoulli(key, np.full(3, 0.5), (2,))
    with pytest.raises(TypeError, match="key data must be uint32"):
        random.wrap_key_data(np.zeros((3, 2), np.int32))
