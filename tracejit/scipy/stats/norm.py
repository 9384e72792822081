"""The normal distribution (jax.scipy.stats.norm); the tails of cdf, sf, ppf and isf are accurate (ndtr, ndtri)."""
import numpy as np

from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, located, real_args, standardized

_LOG_SQRT_2PI = float(0.5 * np.log(2 * np.pi))     # a Python float: weakly typed, float32 stays


@half_floats_in_float32
def logpdf(x, loc=0, scale=1):
    x, loc, scale = real_args("norm.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -0.5 * z * z - tnp.log(scale) - _LOG_SQRT_2PI


@half_floats_in_float32
def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


@half_floats_in_float32
def cdf(x, loc=0, scale=1):
    return special.ndtr(standardized("norm.cdf", x, loc, scale))


@half_floats_in_float32
def logcdf(x, loc=0, scale=1):
    return special.log_ndtr(standardized("norm.logcdf", x, loc, scale))


@half_floats_in_float32
def sf(x, loc=0, scale=1):
    """1 - cdf, as ndtr(-z): accurate in the upper tail."""
    return special.ndtr(-standardized("norm.sf", x, loc, scale))


@half_floats_in_float32
def logsf(x, loc=0, scale=1):
    """log(1 - cdf), as log_ndtr(-z)."""
    return special.log_ndtr(-standardized("norm.logsf", x, loc, scale))


@half_floats_in_float32
def ppf(q, loc=0, scale=1):
    return located("norm.ppf", special.ndtri, q, loc, scale)


@half_floats_in_float32
def isf(q, loc=0, scale=1):
    """ppf(1 - q), computed as -ndtri(q) so that small q keep their precision."""
    return located("norm.isf", lambda p: -special.ndtri(p), q, loc, scale)
