"""The generalized normal distribution (jax.scipy.stats.gennorm): density beta / (2 Gamma(1/beta)) exp(-|x|**beta)
(no loc or scale, as JAX's)."""
import numpy as np

from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpdf(x, beta):
    x, beta = real_args("gennorm.logpdf", x, beta)
    return tnp.log(beta) - float(np.log(2)) - special.gammaln(1 / beta) - tnp.abs(x) ** beta


@half_floats_in_float32
def pdf(x, beta):
    return tnp.exp(logpdf(x, beta))


@half_floats_in_float32
def cdf(x, beta):
    """1/2 +- gammainc(1/beta, |x|**beta) / 2."""
    x, beta = real_args("gennorm.cdf", x, beta)
    return 0.5 + 0.5 * tnp.sign(x) * special.gammainc(1 / beta, tnp.abs(x) ** beta)
