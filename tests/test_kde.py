"""tracejit.scipy.stats.gaussian_kde: its fields and methods against SciPy and JAX (1-d and 2-d data, weights, every
bandwidth rule, float32 and integer data), resample's draws against JAX's for the same key, the estimator as a
pytree (jit argument and result, built and batched under vmap), gradients against finite differences,
and the errors JAX raises."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.random as tr
from tracejit.scipy.stats import gaussian_kde
from tracejit.test_util import check_grads

st = pytest.importorskip("scipy.stats")
try:
    import jax
    import jax.scipy.stats as jst
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is the reference")
rng = np.random.default_rng(0)
DATA2 = rng.normal(size=(2, 30)) * np.array([[1.0], [0.5]])
DATA1 = rng.normal(size=25)
WEIGHTS = rng.random(30) + 0.1
POINTS2 = rng.normal(size=(2, 6))
POINTS1 = np.linspace(-3, 3, 7)
FIELDS = ("neff", "dataset", "weights", "covariance", "inv_cov")


def close(got, want, tol=1e-10):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# (data, keyword arguments): SciPy's gaussian_kde takes the same ones
ESTIMATES = [
    (DATA2, {}),
    (DATA2, {"weights": WEIGHTS, "bw_method": "silverman"}),
    (DATA1, {"bw_method": 0.4}),
    (DATA1, {"bw_method": lambda kde: 0.5 * kde.neff ** -0.2, "weights": WEIGHTS[:25]}),
]


def test_fields_and_methods_match_scipy():
    for data, kwargs in ESTIMATES:
        kde, ref = gaussian_kde(data, **kwargs), st.gaussian_kde(data, **kwargs)
        assert (kde.d, kde.n) == (ref.d, ref.n)
        for name in FIELDS:
            close(getattr(kde, name), getattr(ref, name), 1e-12)
        points = POINTS2 if kde.d == 2 else POINTS1
        close(kde.evaluate(points), ref.evaluate(points))
        close(kde(points), ref(points))
        close(kde.pdf(points), ref.pdf(points))
        close(kde.logpdf(points), ref.logpdf(points))
        mean, cov = np.full(kde.d, 0.3), np.eye(kde.d) * 0.7
        close(kde.integrate_gaussian(mean, cov), ref.integrate_gaussian(mean, cov))
        other = gaussian_kde(data[..., :9] + 0.2)
        close(kde.integrate_kde(other), ref.integrate_kde(st.gaussian_kde(data[..., :9] + 0.2)))
        close(other.integrate_kde(kde), ref.integrate_kde(st.gaussian_kde(data[..., :9] + 0.2)))
    kde1, ref1 = gaussian_kde(DATA1), st.gaussian_kde(DATA1)
    close(kde1.integrate_box_1d(-0.5, 1.2), ref1.integrate_box_1d(-0.5, 1.2))
    close(gaussian_kde(DATA2).pdf(POINTS2[:, 0]), st.gaussian_kde(DATA2).pdf(POINTS2[:, 0]))    # one (d,) point
    far = np.array([60.0])                   # the log density stays finite where the density underflows
    close(kde1.logpdf(far), ref1.logpdf(far))


@needs_jax
def test_dtypes_and_values_match_jax():
    cases = [(DATA2.astype(np.float32), POINTS2.astype(np.float32)),
             (rng.integers(0, 9, size=12).astype(np.int32), POINTS1)]

    def run(module, data, points):
        kde = module(data)
        return [getattr(kde, name) for name in FIELDS] + [kde.pdf(points), kde.logpdf(points)]

    want = jax.jit(lambda: [run(jst.gaussian_kde, *case) for case in cases])()
    for case, ref in zip(cases, want):
        for got, w in zip(run(gaussian_kde, *case), ref):
            close(got, w, 1e-5)


@needs_jax
def test_resample_draws_jaxs_samples():
    kde = gaussian_kde(DATA2, weights=WEIGHTS)
    # one compiled call (JAX's eager calls compile each operation)
    want = jax.jit(lambda: jst.gaussian_kde(DATA2, weights=WEIGHTS).resample(jax.random.PRNGKey(7), (3, 3)))()
    got = kde.resample(tr.PRNGKey(7), (3, 3))
    # the same data points chosen and the same normal draws (transposed whole, as JAX's): equal but for the last
    # bits of the normal samples (erfinv) and of the Cholesky factor
    close(got, want, 1e-13)
    assert kde.resample(tr.PRNGKey(7)).shape == (2,)
    close(tj.jit(kde.resample, static_argnames="shape")(tr.PRNGKey(7), shape=(3, 3)), got, 1e-13)
    kde1 = gaussian_kde(DATA1)
    big = kde1.resample(tr.PRNGKey(0), (4000,))
    assert big.shape == (1, 4000)
    assert abs(np.std(big) - np.sqrt(np.var(DATA1, ddof=1) + kde1.covariance[0, 0])) < 0.05


def test_a_pytree_through_jit_and_vmap():
    kde = gaussian_kde(DATA2, weights=WEIGHTS)
    leaves, treedef = tj.tree_util.tree_flatten(kde)
    assert [np.shape(leaf) for leaf in leaves] == [(), (2, 30), (30,), (2, 2), (2, 2)]
    rebuilt = tj.tree_util.tree_unflatten(treedef, leaves)
    assert isinstance(rebuilt, gaussian_kde) and rebuilt.n == 30

    @tj.jit
    def fit_and_score(data, weights, points):
        fitted = gaussian_kde(data, weights=weights)
        return fitted, fitted.logpdf(points)

    fitted, scores = fit_and_score(DATA2, WEIGHTS, POINTS2)
    assert isinstance(fitted, gaussian_kde)
    for name in FIELDS:
        close(getattr(fitted, name), getattr(kde, name), 1e-12)
    close(scores, kde.logpdf(POINTS2), 1e-12)
    close(tj.jit(lambda k, p: k.pdf(p))(kde, POINTS2), kde.pdf(POINTS2), 1e-12)
    close(tj.jit(lambda k: k.integrate_box_1d(-1.0, 0.5))(gaussian_kde(DATA1)),
          gaussian_kde(DATA1).integrate_box_1d(-1.0, 0.5), 1e-12)

    datasets = rng.normal(size=(3, 2, 15))
    batched = tj.vmap(lambda d: gaussian_kde(d).logpdf(POINTS2))(datasets)
    close(batched, np.stack([gaussian_kde(d).logpdf(POINTS2) for d in datasets]), 1e-12)
    kdes = tj.vmap(gaussian_kde)(datasets)           # a batch of estimators: each leaf with a leading axis
    assert np.shape(kdes.covariance) == (3, 2, 2)
    close(tj.vmap(lambda k: k.pdf(POINTS2))(kdes), np.exp(batched), 1e-12)
    close(tj.vmap(kde.pdf, in_axes=1)(POINTS2)[:, 0], kde.pdf(POINTS2), 1e-12)
    bandwidths = np.array([0.2, 0.5])             # a traced scalar bandwidth
    close(tj.vmap(lambda bw: gaussian_kde(DATA1, bw_method=bw).pdf(POINTS1))(bandwidths),
          np.stack([st.gaussian_kde(DATA1, bw_method=bw).pdf(POINTS1) for bw in bandwidths]))


def test_gradients_match_finite_differences():
    def scores(data, points):
        return gaussian_kde(data).logpdf(points)

    check_grads(tj.jit(scores), (DATA2[:, :10], POINTS2[:, :3]), order=1, modes=("fwd", "rev"))
    check_grads(lambda bw: gaussian_kde(DATA1, bw_method=bw).logpdf(POINTS1), (0.4,), order=1, modes=("rev",))

    def everything(data, weights):
        kde = gaussian_kde(data, weights=weights)
        return (kde.pdf(POINTS1[:3]), kde.integrate_box_1d(-0.5, 1.0),
                kde.integrate_gaussian(np.array([0.2]), np.array([[0.5]])), kde.integrate_kde(gaussian_kde(data[:5])))

    check_grads(everything, (DATA1[:8], WEIGHTS[:8]), order=1, modes=("fwd", "rev"))


def test_errors_as_jax():
    kde = gaussian_kde(DATA2)
    with pytest.raises(NotImplementedError, match="dynamically changing the bandwidth"):
        kde.set_bandwidth("silverman")
    with pytest.raises(NotImplementedError, match="only 1D box integrations"):
        kde.integrate_box(np.zeros(2), np.ones(2))
    with pytest.raises(NotImplementedError, match="complex"):
        gaussian_kde(DATA1 + 1j)
    with pytest.raises(NotImplementedError, match="complex"):
        kde.pdf(POINTS2 + 1j)
    with pytest.raises(ValueError, match="multiple elements"):
        gaussian_kde(np.ones(1))
    with pytest.raises(ValueError, match="should be of length n"):
        gaussian_kde(DATA2, weights=WEIGHTS[:5])
    with pytest.raises(ValueError, match="one-dimensional"):
        gaussian_kde(DATA2, weights=np.ones((2, 30)))
    with pytest.raises(ValueError, match="bw_method"):
        gaussian_kde(DATA2, bw_method="wide")
    with pytest.raises(ValueError, match="points have dimension 3, dataset has dimension 2"):
        kde.pdf(np.ones((3, 4)))
    with pytest.raises(ValueError, match="only handles 1D pdfs"):
        kde.integrate_box_1d(0.0, 1.0)
    with pytest.raises(ValueError, match="must be scalars"):
        gaussian_kde(DATA1).integrate_box_1d(np.zeros(2), 1.0)
    with pytest.raises(ValueError, match="not the same dimensionality"):
        kde.integrate_kde(gaussian_kde(DATA1))
    with pytest.raises(ValueError, match="mean does not have dimension 2"):
        kde.integrate_gaussian(np.zeros(3), np.eye(2))
    with pytest.raises(ValueError, match="covariance does not have dimension 2"):
        kde.integrate_gaussian(np.zeros(2), np.eye(3))
