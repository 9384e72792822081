"""The logistic distribution (jax.scipy.stats.logistic)."""
from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, located, real_args, standardized


@half_floats_in_float32
def logpdf(x, loc=0, scale=1):
    x, loc, scale = real_args("logistic.logpdf", x, loc, scale)
    half = (x - loc) / scale / 2
    return -2 * tnp.logaddexp(half, -half) - tnp.log(scale)


@half_floats_in_float32
def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


@half_floats_in_float32
def cdf(x, loc=0, scale=1):
    return special.expit(standardized("logistic.cdf", x, loc, scale))


@half_floats_in_float32
def sf(x, loc=0, scale=1):
    """1 - cdf, as expit(-z): no cancellation in the upper tail."""
    return special.expit(-standardized("logistic.sf", x, loc, scale))


@half_floats_in_float32
def ppf(x, loc=0, scale=1):
    """The inverse of cdf: logit."""
    return located("logistic.ppf", special.logit, x, loc, scale)


@half_floats_in_float32
def isf(x, loc=0, scale=1):
    return located("logistic.isf", lambda p: -special.logit(p), x, loc, scale)
