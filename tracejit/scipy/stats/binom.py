"""The binomial distribution (jax.scipy.stats.binom)."""
import numpy as np

from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpmf(k, n, p, loc=0):
    """-inf off 0 <= k - loc <= n; between integers the formula's continuous value, as JAX's (SciPy's is -inf)."""
    k, n, p, loc = real_args("binom.logpmf", k, n, p, loc)
    x = k - loc
    log_choose = special.gammaln(n + 1) - special.gammaln(x + 1) - special.gammaln(n - x + 1)
    log_probs = log_choose + special.xlogy(x, p) + special.xlog1py(n - x, -p)
    return tnp.where((x < 0) | (x > n), -np.inf, log_probs)


@half_floats_in_float32
def pmf(k, n, p, loc=0):
    return tnp.exp(logpmf(k, n, p, loc))
