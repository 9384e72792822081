"""The truncated normal distribution (jax.scipy.stats.truncnorm): the standard normal on [a, b] (in standardized
units), its mass log(ndtr(b) - ndtr(a)) computed in whichever tail keeps it accurate."""
import numpy as np

from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, real_args
from . import norm


def _log_mass(a, b):
    """log(ndtr(b) - ndtr(a)) for a <= b: from the log-cdfs in the left tail (b < 0), the log-sfs in the right
    (a > 0), and 1 minus both tails' masses between."""
    left = special.log_ndtr(b) + tnp.log1p(-tnp.exp(special.log_ndtr(a) - special.log_ndtr(b)))
    right = special.log_ndtr(-a) + tnp.log1p(-tnp.exp(special.log_ndtr(-b) - special.log_ndtr(-a)))
    middle = tnp.log1p(-special.ndtr(a) - special.ndtr(-b))
    return tnp.where(b < 0, left, tnp.where(a > 0, right, middle))


def _standard(name, x, a, b, loc, scale):
    x, a, b, loc, scale = real_args(name, x, a, b, loc, scale)
    return (x - loc) / scale, a, b, scale


@half_floats_in_float32
def logpdf(x, a, b, loc=0, scale=1):
    z, a, b, scale = _standard("truncnorm.logpdf", x, a, b, loc, scale)
    inside = norm.logpdf(z) - _log_mass(a, b) - tnp.log(scale)
    return tnp.where((z < a) | (z > b), -np.inf, inside)


@half_floats_in_float32
def pdf(x, a, b, loc=0, scale=1):
    return tnp.exp(logpdf(x, a, b, loc, scale))


def _log_cdf_and_sf(z, a, b):
    """(log cdf, log sf) of standardized z, clipped into the support: each the other's log1p(-exp(.)) where the
    other is below log(1/2), so that neither cancels near 1."""
    z = tnp.clip(z, a, b)
    mass = _log_mass(a, b)
    log_cdf, log_sf = _log_mass(a, z) - mass, _log_mass(z, b) - mass
    half = float(np.log(0.5))
    return (tnp.where(log_sf < half, tnp.log1p(-tnp.exp(log_sf)), log_cdf),
            tnp.where(log_cdf < half, tnp.log1p(-tnp.exp(log_cdf)), log_sf))


@half_floats_in_float32
def logcdf(x, a, b, loc=0, scale=1):
    z, a, b, _ = _standard("truncnorm.logcdf", x, a, b, loc, scale)
    inside = _log_cdf_and_sf(z, a, b)[0]
    return tnp.where(z < a, -np.inf, tnp.where(z >= b, 0.0, inside))


@half_floats_in_float32
def cdf(x, a, b, loc=0, scale=1):
    return tnp.exp(logcdf(x, a, b, loc, scale))


@half_floats_in_float32
def logsf(x, a, b, loc=0, scale=1):
    z, a, b, _ = _standard("truncnorm.logsf", x, a, b, loc, scale)
    inside = _log_cdf_and_sf(z, a, b)[1]
    return tnp.where(z <= a, 0.0, tnp.where(z > b, -np.inf, inside))


@half_floats_in_float32
def sf(x, a, b, loc=0, scale=1):
    return tnp.exp(logsf(x, a, b, loc, scale))
