"""The exponential distribution (jax.scipy.stats.expon)."""
import numpy as np

from ... import numpy as tnp
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpdf(x, loc=0, scale=1):
    x, loc, scale = real_args("expon.logpdf", x, loc, scale)
    return tnp.where(x < loc, -np.inf, -((x - loc) / scale + tnp.log(scale)))


@half_floats_in_float32
def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


@half_floats_in_float32
def logsf(x, loc=0, scale=1):
    x, loc, scale = real_args("expon.logsf", x, loc, scale)
    return tnp.where(x < loc, 0.0, (loc - x) / scale)


@half_floats_in_float32
def sf(x, loc=0, scale=1):
    return tnp.exp(logsf(x, loc, scale))


@half_floats_in_float32
def cdf(x, loc=0, scale=1):
    x, loc, scale = real_args("expon.cdf", x, loc, scale)
    return tnp.where(x < loc, 0.0, -tnp.expm1((loc - x) / scale))


@half_floats_in_float32
def logcdf(x, loc=0, scale=1):
    return tnp.log1p(-sf(x, loc, scale))


@half_floats_in_float32
def ppf(q, loc=0, scale=1):
    q, loc, scale = real_args("expon.ppf", q, loc, scale)
    return tnp.where(tnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc - scale * tnp.log1p(-q))
