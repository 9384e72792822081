"""The beta distribution (jax.scipy.stats.beta)."""
import numpy as np

from ... import lax
from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpdf(x, a, b, loc=0, scale=1):
    """-inf outside [loc, loc + scale], NaN for a, b or scale <= 0."""
    x, a, b, loc, scale = real_args("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y) - special.betaln(a, b) - tnp.log(scale)
    log_probs = tnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return tnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, log_probs)


@half_floats_in_float32
def pdf(x, a, b, loc=0, scale=1):
    return tnp.exp(logpdf(x, a, b, loc, scale))


def _clamped(name, x, a, b, loc, scale):
    x, a, b, loc, scale = real_args(name, x, a, b, loc, scale)
    return a, b, lax.clamp(tnp.zeros_like(x), (x - loc) / scale, tnp.ones_like(x))


@half_floats_in_float32
def cdf(x, a, b, loc=0, scale=1):
    a, b, y = _clamped("beta.cdf", x, a, b, loc, scale)
    return special.betainc(a, b, y)


@half_floats_in_float32
def logcdf(x, a, b, loc=0, scale=1):
    return tnp.log(cdf(x, a, b, loc, scale))


@half_floats_in_float32
def sf(x, a, b, loc=0, scale=1):
    a, b, y = _clamped("beta.sf", x, a, b, loc, scale)
    return special.betainc(b, a, 1 - y)


@half_floats_in_float32
def logsf(x, a, b, loc=0, scale=1):
    return tnp.log(sf(x, a, b, loc, scale))
