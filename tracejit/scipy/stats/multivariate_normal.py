"""The multivariate normal distribution (jax.scipy.stats.multivariate_normal): mean of shape (..., n) (or a
scalar), cov a scalar (times the identity) or (..., n, n); x of shape (..., n), batch axes broadcast."""
import numpy as np

from ... import lax
from ... import numpy as tnp
from ...numpy._base import aval, promote
from .. import linalg
from .._args import half_floats_in_float32

_LOG_2PI = float(np.log(2 * np.pi))


@half_floats_in_float32
def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote(x, mean, cov, to_float="float64")
    mean_shape, cov_shape = aval(mean).shape, aval(cov).shape
    if not mean_shape:
        return -0.5 * tnp.square(x - mean) / cov - 0.5 * (_LOG_2PI + tnp.log(cov))
    n = mean_shape[-1]
    y = x - mean
    if not cov_shape:
        return -0.5 * tnp.sum(y * y, axis=-1) / cov - n / 2 * (_LOG_2PI + tnp.log(cov))
    if len(cov_shape) < 2 or cov_shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    factor = lax.linalg.cholesky(cov)           # of (cov + cov^T)/2, as JAX's: the gradient in cov is symmetric
    if len(cov_shape) == 2:    # one factor for every x: the rows of y as the columns of one right-hand side
        batch = aval(y).shape[:-1]
        z = linalg.solve_triangular(factor, tnp.reshape(y, (-1, n)).T, lower=True)
        quadratic = tnp.reshape(tnp.sum(z * z, axis=0), batch)
    else:
        z = linalg.solve_triangular(factor, y[..., None], lower=True)[..., 0]
        quadratic = tnp.sum(z * z, axis=-1)
    log_det = tnp.sum(tnp.log(tnp.diagonal(factor, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * quadratic - n / 2 * _LOG_2PI - log_det


@half_floats_in_float32
def pdf(x, mean, cov):
    return tnp.exp(logpdf(x, mean, cov))
