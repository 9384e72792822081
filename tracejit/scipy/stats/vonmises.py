"""The von Mises distribution (jax.scipy.stats.vonmises): density exp(kappa cos x) / (2 pi I0(kappa)), I0 through
i0e, exp(kappa (cos x - 1)) / (2 pi i0e(kappa)), so that large kappa do not overflow."""
import numpy as np

from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpdf(x, kappa):
    """NaN for kappa <= 0, as JAX's."""
    x, kappa = real_args("vonmises.logpdf", x, kappa)
    log_probs = kappa * (tnp.cos(x) - 1) - tnp.log(2 * np.pi * special.i0e(kappa))
    return tnp.where(kappa > 0, log_probs, np.nan)


@half_floats_in_float32
def pdf(x, kappa):
    return tnp.exp(logpdf(x, kappa))
