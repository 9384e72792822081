"""The Laplace distribution (jax.scipy.stats.laplace)."""
from ... import numpy as tnp
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpdf(x, loc=0, scale=1):
    x, loc, scale = real_args("laplace.logpdf", x, loc, scale)
    return -(tnp.abs(x - loc) / scale + tnp.log(2 * scale))


@half_floats_in_float32
def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


@half_floats_in_float32
def cdf(x, loc=0, scale=1):
    x, loc, scale = real_args("laplace.cdf", x, loc, scale)
    z = (x - loc) / scale
    return tnp.where(z <= 0, 0.5 * tnp.exp(z), 1 - 0.5 * tnp.exp(-z))
