"""The geometric distribution (jax.scipy.stats.geom): the trial of the first success, k >= 1."""
import numpy as np

from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpmf(k, p, loc=0):
    """-inf at k - loc <= 0; elsewhere the formula's continuous value, as JAX's (SciPy's is -inf off the integers
    from 1)."""
    k, p, loc = real_args("geom.logpmf", k, p, loc)
    x = k - loc
    log_probs = special.xlog1py(x - 1, -p) + tnp.log(p)
    return tnp.where(x <= 0, -np.inf, log_probs)


@half_floats_in_float32
def pmf(k, p, loc=0):
    return tnp.exp(logpmf(k, p, loc))
