"""The logistic distribution (jax.scipy.stats.logistic)."""
from ... import numpy as tnp
from .. import special
from .._args import real_args


def logpdf(x, loc=0, scale=1):
    x, loc, scale = real_args("logistic.logpdf", x, loc, scale)
    half = (x - loc) / scale / 2
    return -2 * tnp.logaddexp(half, -half) - tnp.log(scale)


def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = real_args("logistic.cdf", x, loc, scale)
    return special.expit((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = real_args("logistic.sf", x, loc, scale)
    return special.expit(-(x - loc) / scale)


def ppf(x, loc=0, scale=1):
    x, loc, scale = real_args("logistic.ppf", x, loc, scale)
    return special.logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    x, loc, scale = real_args("logistic.isf", x, loc, scale)
    return -special.logit(x) * scale + loc
