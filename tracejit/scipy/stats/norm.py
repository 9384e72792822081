"""The normal distribution (jax.scipy.stats.norm); the tails of cdf, sf, ppf and isf are accurate (ndtr, ndtri)."""
import numpy as np

from ... import numpy as tnp
from .. import special
from .._args import real_args

_LOG_SQRT_2PI = float(0.5 * np.log(2 * np.pi))     # a Python float: weakly typed, float32 stays


def _standard(name, x, loc, scale):
    x, loc, scale = real_args(name, x, loc, scale)
    return (x - loc) / scale


def logpdf(x, loc=0, scale=1):
    x, loc, scale = real_args("norm.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -0.5 * z * z - tnp.log(scale) - _LOG_SQRT_2PI


def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    return special.ndtr(_standard("norm.cdf", x, loc, scale))


def logcdf(x, loc=0, scale=1):
    return special.log_ndtr(_standard("norm.logcdf", x, loc, scale))


def sf(x, loc=0, scale=1):
    return special.ndtr(-_standard("norm.sf", x, loc, scale))


def logsf(x, loc=0, scale=1):
    return special.log_ndtr(-_standard("norm.logsf", x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = real_args("norm.ppf", q, loc, scale)
    return special.ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    """ppf(1 - q), computed as -ndtri(q) so that small q keep their precision."""
    q, loc, scale = real_args("norm.isf", q, loc, scale)
    return -special.ndtri(q) * scale + loc
