"""The Poisson distribution (jax.scipy.stats.poisson)."""
import numpy as np

from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpmf(k, mu, loc=0):
    """-inf below loc and at non-integer k."""
    k, mu, loc = real_args("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_probs = special.xlogy(x, mu) - special.gammaln(x + 1) - mu
    return tnp.where((x < 0) | (tnp.round(k) != k), -np.inf, log_probs)


@half_floats_in_float32
def pmf(k, mu, loc=0):
    return tnp.exp(logpmf(k, mu, loc))


@half_floats_in_float32
def cdf(k, mu, loc=0):
    k, mu, loc = real_args("poisson.cdf", k, mu, loc)
    x = k - loc
    return tnp.where(x < 0, 0.0, special.gammaincc(tnp.floor(1 + tnp.maximum(x, 0.0)), mu))
