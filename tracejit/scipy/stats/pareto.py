"""The Pareto distribution (jax.scipy.stats.pareto): density b / y**(b + 1) for y = (x - loc) / scale >= 1."""
import numpy as np

from ... import numpy as tnp
from .._args import half_floats_in_float32, real_args


def _standard(name, x, b, loc, scale):
    x, b, loc, scale = real_args(name, x, b, loc, scale)
    return (x - loc) / scale, b, scale


@half_floats_in_float32
def logpdf(x, b, loc=0, scale=1):
    y, b, scale = _standard("pareto.logpdf", x, b, loc, scale)
    inside = tnp.log(b) - (b + 1) * tnp.log(tnp.maximum(y, 1.0)) - tnp.log(scale)
    return tnp.where(y < 1, -np.inf, inside)


@half_floats_in_float32
def pdf(x, b, loc=0, scale=1):
    return tnp.exp(logpdf(x, b, loc, scale))


@half_floats_in_float32
def logsf(x, b, loc=0, scale=1):
    """-b log y, 0 below the support."""
    y, b, _ = _standard("pareto.logsf", x, b, loc, scale)
    return -b * tnp.log(tnp.maximum(y, 1.0))


@half_floats_in_float32
def sf(x, b, loc=0, scale=1):
    return tnp.exp(logsf(x, b, loc, scale))


@half_floats_in_float32
def cdf(x, b, loc=0, scale=1):
    """1 - y**-b as -expm1(-b log y): accurate near the support's start."""
    return -tnp.expm1(logsf(x, b, loc, scale))


@half_floats_in_float32
def logcdf(x, b, loc=0, scale=1):
    y, b, _ = _standard("pareto.logcdf", x, b, loc, scale)
    inside = tnp.log(-tnp.expm1(-b * tnp.log(tnp.maximum(y, 1.0))))
    return tnp.where(y <= 1, -np.inf, inside)


@half_floats_in_float32
def ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = real_args("pareto.ppf", q, b, loc, scale)
    return tnp.exp(-tnp.log1p(-q) / b) * scale + loc
