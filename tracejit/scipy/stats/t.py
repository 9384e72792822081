"""Student's t distribution (jax.scipy.stats.t)."""
import numpy as np

from ... import numpy as tnp
from .. import special
from .._args import half_floats_in_float32, real_args


@half_floats_in_float32
def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = real_args("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half_df = df / 2
    normalizer = special.gammaln(half_df) + tnp.log(scale * scale * np.pi * df) / 2 - special.gammaln(half_df + 0.5)
    return -(normalizer + (half_df + 0.5) * tnp.log1p(z * z / df))


@half_floats_in_float32
def pdf(x, df, loc=0, scale=1):
    return tnp.exp(logpdf(x, df, loc, scale))
