"""The multinomial distribution (jax.scipy.stats.multinomial): counts x along the last axis, n trials, p the
category probabilities."""
import numpy as np

from ... import numpy as tnp
from ...numpy._base import asarray, aval, promote
from .. import special
from .._args import half_floats_in_float32


@half_floats_in_float32
def logpmf(x, n, p):
    """log(n! prod p**x / prod x!); -inf where the counts do not sum to n (each row's, as SciPy's: JAX's compares
    the sum of all of a batch of x). x holds integers, as JAX requires."""
    x, n = asarray(x), asarray(n)
    if aval(x).dtype.kind not in "iu":
        raise ValueError(f"x and n must be of integer type; got x.dtype={aval(x).dtype}, n.dtype={aval(n).dtype}")
    x, n, p = promote(x, n, p, to_float="float64")
    log_probs = special.gammaln(n + 1) + tnp.sum(special.xlogy(x, p) - special.gammaln(x + 1), axis=-1)
    return tnp.where(tnp.sum(x, axis=-1) == n, log_probs, -np.inf)


@half_floats_in_float32
def pmf(x, n, p):
    return tnp.exp(logpmf(x, n, p))
