"""The Cauchy distribution (jax.scipy.stats.cauchy)."""
import numpy as np

from ... import numpy as tnp
from .._args import real_args


def _standard(name, x, loc, scale):
    x, loc, scale = real_args(name, x, loc, scale)
    return (x - loc) / scale, scale


def logpdf(x, loc=0, scale=1):
    z, scale = _standard("cauchy.logpdf", x, loc, scale)
    return -(tnp.log(np.pi * scale) + tnp.log1p(z * z))


def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    z, _ = _standard("cauchy.cdf", x, loc, scale)
    return 0.5 + tnp.arctan(z) / np.pi


def logcdf(x, loc=0, scale=1):
    return tnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    z, _ = _standard("cauchy.sf", x, loc, scale)
    return 0.5 - tnp.arctan(z) / np.pi


def logsf(x, loc=0, scale=1):
    return tnp.log(sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = real_args("cauchy.ppf", q, loc, scale)
    return tnp.tan(np.pi * q - np.pi / 2) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = real_args("cauchy.isf", q, loc, scale)
    return tnp.tan(np.pi / 2 - np.pi * q) * scale + loc
