"""The uniform distribution on [loc, loc + scale] (jax.scipy.stats.uniform)."""
import numpy as np

from ... import numpy as tnp
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpdf(x, loc=0, scale=1):
    x, loc, scale = real_args("uniform.logpdf", x, loc, scale)
    return tnp.where((x > loc + scale) | (x < loc), -np.inf, -tnp.log(scale))


@half_floats_in_float32
def pdf(x, loc=0, scale=1):
    return tnp.exp(logpdf(x, loc, scale))


@half_floats_in_float32
def cdf(x, loc=0, scale=1):
    x, loc, scale = real_args("uniform.cdf", x, loc, scale)
    inside = tnp.where((x >= loc) & (x <= loc + scale), (x - loc) / scale, np.nan)
    return tnp.where(x < loc, 0.0, tnp.where(x > loc + scale, 1.0, inside))


@half_floats_in_float32
def ppf(q, loc=0, scale=1):
    q, loc, scale = real_args("uniform.ppf", q, loc, scale)
    return tnp.where(tnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)
