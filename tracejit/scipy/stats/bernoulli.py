"""The Bernoulli distribution (jax.scipy.stats.bernoulli)."""
import numpy as np

from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpmf(k, p, loc=0):
    k, p, loc = real_args("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_probs = special.xlogy(x, p) + special.xlog1py(1 - x, -p)
    return tnp.where((x < 0) | (x > 1), -np.inf, log_probs)


@half_floats_in_float32
def pmf(k, p, loc=0):
    return tnp.exp(logpmf(k, p, loc))


def _invalid(p, *more):
    bad = tnp.isnan(p) | (p < 0) | (p > 1)
    for v in more:
        bad = bad | tnp.isnan(v)
    return bad


@half_floats_in_float32
def cdf(k, p):
    k, p = real_args("bernoulli.cdf", k, p)
    value = tnp.where(k < 0, 0.0, tnp.where(k < 1, 1 - p, 1.0))
    return tnp.where(_invalid(p, k), np.nan, value)


@half_floats_in_float32
def ppf(q, p):
    q, p = real_args("bernoulli.ppf", q, p)
    return tnp.where(_invalid(p, q) | (q < 0) | (q > 1), np.nan, tnp.where(q <= 1 - p, tnp.zeros_like(q), 1.0))
