"""The Cauchy distribution (jax.scipy.stats.cauchy)."""
import numpy as np

from ... import numpy as tnp
from .._args import half_floats_in_float32, located, real_args, standardized


@half_floats_in_float32
def logpdf(x, loc=0, scale=1):
    x, loc, scale = real_args("cauchy.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -(tnp.log(np.pi * scale) + tnp.log1p(z * z))


@half_floats_in_float32
def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


@half_floats_in_float32
def cdf(x, loc=0, scale=1):
    return 0.5 + tnp.arctan(standardized("cauchy.cdf", x, loc, scale)) / np.pi


@half_floats_in_float32
def logcdf(x, loc=0, scale=1):
    return tnp.log(cdf(x, loc, scale))


@half_floats_in_float32
def sf(x, loc=0, scale=1):
    return 0.5 - tnp.arctan(standardized("cauchy.sf", x, loc, scale)) / np.pi


@half_floats_in_float32
def logsf(x, loc=0, scale=1):
    return tnp.log(sf(x, loc, scale))


@half_floats_in_float32
def ppf(q, loc=0, scale=1):
    return located("cauchy.ppf", lambda p: tnp.tan(np.pi * p - np.pi / 2), q, loc, scale)


@half_floats_in_float32
def isf(q, loc=0, scale=1):
    return located("cauchy.isf", lambda p: tnp.tan(np.pi / 2 - np.pi * p), q, loc, scale)
