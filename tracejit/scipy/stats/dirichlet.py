"""The Dirichlet distribution (jax.scipy.stats.dirichlet): x has alpha's length (or one less: the last component
is then 1 minus the others' sum) along its first axis."""
import numpy as np

from ... import numpy as tnp
from ...numpy._base import aval, promote
from .. import special
from .._args import half_floats_in_float32


@half_floats_in_float32
def logpdf(x, alpha):
    """-inf off the simplex (a component <= 0, or a sum more than 1e-6 from 1)."""
    x, alpha = promote(x, alpha, to_float="float64")
    xs, shape = aval(x).shape, aval(alpha).shape
    if len(shape) != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={shape}")
    if not xs or xs[0] not in (shape[0], shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one entry fewer; got "
                         f"x.shape={xs}, alpha.shape={shape}")
    if xs[0] != shape[0]:
        x = tnp.concatenate([x, 1 - tnp.sum(x, axis=0, keepdims=True)], axis=0)
    normalizer = tnp.sum(special.gammaln(alpha)) - special.gammaln(tnp.sum(alpha))
    alpha = tnp.reshape(alpha, shape + (1,) * (len(xs) - 1))
    log_probs = tnp.sum(special.xlogy(alpha - 1, x), axis=0) - normalizer
    simplex = tnp.all(x > 0, axis=0) & (tnp.abs(tnp.sum(x, axis=0) - 1) < 1e-6)
    return tnp.where(simplex, log_probs, -np.inf)


@half_floats_in_float32
def pdf(x, alpha):
    return tnp.exp(logpdf(x, alpha))
