"""The left-skewed Gumbel distribution (jax.scipy.stats.gumbel_l): gumbel_r mirrored, sf exp(-exp(z))."""
from ... import numpy as tnp
from .._args import half_floats_in_float32, located, real_args, standardized


@half_floats_in_float32
def logpdf(x, loc=0, scale=1):
    x, loc, scale = real_args("gumbel_l.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return z - tnp.exp(z) - tnp.log(scale)


@half_floats_in_float32
def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


@half_floats_in_float32
def logsf(x, loc=0, scale=1):
    return -tnp.exp(standardized("gumbel_l.logsf", x, loc, scale))


@half_floats_in_float32
def sf(x, loc=0, scale=1):
    return tnp.exp(logsf(x, loc, scale))


@half_floats_in_float32
def cdf(x, loc=0, scale=1):
    """1 - sf as -expm1(-exp(z)): accurate in the lower tail."""
    return -tnp.expm1(-tnp.exp(standardized("gumbel_l.cdf", x, loc, scale)))


@half_floats_in_float32
def logcdf(x, loc=0, scale=1):
    return tnp.log(cdf(x, loc, scale))


@half_floats_in_float32
def ppf(p, loc=0, scale=1):
    return located("gumbel_l.ppf", lambda p: tnp.log(-tnp.log1p(-p)), p, loc, scale)
