"""The gamma distribution (jax.scipy.stats.gamma)."""
import numpy as np

from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = real_args("gamma.logpdf", x, a, loc, scale)
    inside = x >= loc
    y = tnp.where(inside, (x - loc) / scale, 1.0)
    log_probs = special.xlogy(a - 1, y) - y - special.gammaln(a) - tnp.log(scale)
    return tnp.where(inside, log_probs, -np.inf)


@half_floats_in_float32
def pdf(x, a, loc=0, scale=1):
    return tnp.exp(logpdf(x, a, loc, scale))


@half_floats_in_float32
def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = real_args("gamma.cdf", x, a, loc, scale)
    return special.gammainc(a, tnp.maximum((x - loc) / scale, 0.0))


@half_floats_in_float32
def logcdf(x, a, loc=0, scale=1):
    return tnp.log(cdf(x, a, loc, scale))


@half_floats_in_float32
def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = real_args("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    return tnp.where(y < 0, 1.0, special.gammaincc(a, tnp.maximum(y, 0.0)))


@half_floats_in_float32
def logsf(x, a, loc=0, scale=1):
    return tnp.log(sf(x, a, loc, scale))
