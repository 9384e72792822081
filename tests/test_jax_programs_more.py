"""Small JAX programs, each run unchanged (jax -> tracejit, jax.numpy -> tracejit.numpy) under both libraries
and compared: values and derivatives. Each was written as a new user would write it; those that failed in
tracejit at first say what was missing."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def both(program, *args):
    """program(J, m, *args) under JAX and under tracejit: (JAX's leaves as NumPy arrays, tracejit's)."""
    want = jax.tree_util.tree_leaves(program(jax, jnp, *args))
    got = tj.tree_util.tree_leaves(program(tj, tnp, *args))
    assert len(got) == len(want)
    return [np.asarray(w) for w in want], [np.asarray(g) for g in got]


def assert_same(program, *args, rtol=1e-10, atol=1e-12):
    want, got = both(program, *args)
    for w, g in zip(want, got):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def _gamma_elbo(J, m, log_alpha, log_b):
    """A Gamma variational family's reparameterised ELBO for Poisson counts, and beta and Dirichlet samples in
    the same loss: gradients in the shape parameters (random_gamma_grad; tracejit raised before)."""
    key = J.random.key(0)
    counts = m.array([1.0, 0.0, 3.0, 2.0])

    def elbo(log_alpha, log_b):
        alpha, b = m.exp(log_alpha), m.exp(log_b)
        rates = J.random.gamma(key, alpha, (16,)) / b
        log_lik = m.sum(counts * m.log(rates[:, None]) - rates[:, None], axis=1)
        p = J.random.beta(J.random.fold_in(key, 1), alpha, 2.0, (4,))
        w = J.random.dirichlet(J.random.fold_in(key, 2), m.stack([alpha, b, 1.0 + 0 * b]))
        return m.mean(log_lik) + m.sum(p) + w @ m.arange(3.0)

    return J.jit(J.value_and_grad(elbo, argnums=(0, 1)))(log_alpha, log_b)


def test_gamma_family_reparameterised_gradients():
    assert_same(_gamma_elbo, 0.4, -0.3, rtol=1e-8)


def _periodic_interp(J, m, x, xp, fp):
    """Angles interpolated on a circle (interp's period: tracejit raised) and bucketed with searchsorted's
    method= (tracejit took no method), under vmap, with gradients in the knots' values and the points."""
    def loss(x, fp):
        y = m.interp(x, xp, fp, period=2 * m.pi)
        buckets = J.vmap(lambda row: m.searchsorted(m.sort(xp), row, side="right", method="compare_all"))(x)
        return m.sum(y ** 2 * (1.0 + buckets))

    return loss(x, fp), J.grad(loss, argnums=(0, 1))(x, fp)


def test_interp_with_period_and_searchsorted_method():
    rng = np.random.default_rng(0)
    xp = np.array([0.3, 2.0, 4.5, 1.0, 6.0])
    assert_same(_periodic_interp, rng.uniform(-7, 7, (3, 4)), xp, rng.standard_normal(5))
