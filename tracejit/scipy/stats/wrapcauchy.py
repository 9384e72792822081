"""The wrapped Cauchy distribution (jax.scipy.stats.wrapcauchy): density (1 - c**2) / (2 pi (1 + c**2 - 2 c cos x))
on [0, 2 pi]."""
import numpy as np

from ... import numpy as tnp
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpdf(x, c):
    """-inf off [0, 2 pi]; NaN for c outside (0, 1), as JAX's."""
    x, c = real_args("wrapcauchy.logpdf", x, c)
    log_probs = tnp.log1p(-c * c) - float(np.log(2 * np.pi)) - tnp.log1p(c * c - 2 * c * tnp.cos(x))
    log_probs = tnp.where((x < 0) | (x > 2 * np.pi), -np.inf, log_probs)
    return tnp.where((c > 0) & (c < 1), log_probs, np.nan)


@half_floats_in_float32
def pdf(x, c):
    return tnp.exp(logpdf(x, c))
