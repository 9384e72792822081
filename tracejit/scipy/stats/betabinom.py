"""The beta-binomial distribution (jax.scipy.stats.betabinom): a binomial whose p is Beta(a, b)."""
import numpy as np

from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpmf(k, n, a, b, loc=0):
    """C(n, x) B(x + a, n - x + b) / B(a, b), x = floor(k) - loc (as JAX's: constant between integers, and in k's
    derivative); -inf off 0 <= x <= n. The binomial coefficient is 1 / ((n + 1) B(n - x + 1, x + 1)), whose log
    betaln keeps accurate for large n."""
    k, n, a, b, loc = real_args("betabinom.logpmf", k, n, a, b, loc)
    x = tnp.floor(k) - loc
    log_choose = -tnp.log1p(n) - special.betaln(n - x + 1, x + 1)
    log_probs = log_choose + special.betaln(x + a, n - x + b) - special.betaln(a, b)
    return tnp.where((x < 0) | (x > n), -np.inf, log_probs)


@half_floats_in_float32
def pmf(k, n, a, b, loc=0):
    return tnp.exp(logpmf(k, n, a, b, loc))
