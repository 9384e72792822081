"""The negative binomial distribution (jax.scipy.stats.nbinom): k failures before the n-th success."""
import numpy as np

from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpmf(k, n, p, loc=0):
    """-inf below loc; between integers the formula's continuous value, as JAX's (SciPy's is -inf)."""
    k, n, p, loc = real_args("nbinom.logpmf", k, n, p, loc)
    x = k - loc
    log_choose = special.gammaln(x + n) - special.gammaln(x + 1) - special.gammaln(n)
    log_probs = log_choose + special.xlogy(n, p) + special.xlog1py(x, -p)
    return tnp.where(x < 0, -np.inf, log_probs)


@half_floats_in_float32
def pmf(k, n, p, loc=0):
    return tnp.exp(logpmf(k, n, p, loc))
