"""The chi-squared distribution (jax.scipy.stats.chi2): the gamma distribution of shape df/2 and scale 2."""
from .._args import half_floats_in_float32, real_args
from . import gamma


def _as_gamma(name):
    """chi2's function `name`: gamma's, its arguments promoted first (so that df / 2 of a weakly typed df keeps
    x's float32)."""
    @half_floats_in_float32
    def fn(x, df, loc=0, scale=1):
        x, df, loc, scale = real_args(f"chi2.{name}", x, df, loc, scale)
        return getattr(gamma, name)(x, df / 2, loc, scale * 2)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"chi2.{name}(x, df, loc, scale) = gamma.{name}(x, df / 2, loc, 2 scale)."
    return fn


logpdf, pdf, cdf, logcdf, sf, logsf = map(_as_gamma, ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"))
