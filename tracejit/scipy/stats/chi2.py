"""The chi-squared distribution (jax.scipy.stats.chi2): the gamma distribution of shape df/2 and scale 2."""
from .._args import half_floats_in_float32, real_args
from . import gamma


def _as_gamma(name, x, df, loc, scale):
    """gamma's arguments, promoted first (so that df / 2 of a weakly typed df keeps x's float32)."""
    x, df, loc, scale = real_args(name, x, df, loc, scale)
    return x, df / 2, loc, scale * 2


@half_floats_in_float32
def logpdf(x, df, loc=0, scale=1):
    return gamma.logpdf(*_as_gamma("chi2.logpdf", x, df, loc, scale))


@half_floats_in_float32
def pdf(x, df, loc=0, scale=1):
    return gamma.pdf(*_as_gamma("chi2.pdf", x, df, loc, scale))


@half_floats_in_float32
def cdf(x, df, loc=0, scale=1):
    return gamma.cdf(*_as_gamma("chi2.cdf", x, df, loc, scale))


@half_floats_in_float32
def logcdf(x, df, loc=0, scale=1):
    return gamma.logcdf(*_as_gamma("chi2.logcdf", x, df, loc, scale))


@half_floats_in_float32
def sf(x, df, loc=0, scale=1):
    return gamma.sf(*_as_gamma("chi2.sf", x, df, loc, scale))


@half_floats_in_float32
def logsf(x, df, loc=0, scale=1):
    return gamma.logsf(*_as_gamma("chi2.logsf", x, df, loc, scale))
