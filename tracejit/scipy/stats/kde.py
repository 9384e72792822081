"""tracejit.scipy.stats.gaussian_kde: jax.scipy.stats.gaussian_kde, a Gaussian kernel density estimator that is a
pytree (a frozen dataclass of arrays, registered as JAX's), so it is an argument and a result of jit, is built and
evaluated inside vmap, and differentiates with respect to its data and the points.

Its leaves are JAX's, in JAX's order: neff, dataset (d, n), weights (n,), covariance and inv_cov (d, d); d and n
come from the dataset's shape. The dataset and weights are promoted to one inexact dtype as JAX's
promote_dtypes_inexact. As JAX's, the bandwidth is fixed when the estimator is made (set_bandwidth and the n-d
integrate_box raise NotImplementedError), and resample(key, shape) draws with tracejit.random, which is
bit-identical to jax.random: the same key gives JAX's samples."""
import dataclasses
import math
from typing import Any

import numpy as np

from ... import numpy as tnp
from ... import random
from ...numpy._base import asarray, aval, promote_inexact
from ...numpy.indexing import take_clamped
from ...tree_util import register_pytree_node_class
from .. import linalg, special

__all__ = ["gaussian_kde"]


def _check_real(x, what):
    if aval(asarray(x)).dtype.kind == "c":
        raise NotImplementedError(f"gaussian_kde does not support complex {what}")


@register_pytree_node_class
@dataclasses.dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:
    """A Gaussian kernel density estimate of dataset (n points: shape (n,) or (d, n)), as
    scipy.stats.gaussian_kde: the points' weighted mean of Gaussians whose covariance is the data's weighted
    covariance times factor**2. bw_method gives the factor: 'scott' (default, neff ** (-1 / (d + 4))),
    'silverman', a scalar, or a callable taking the estimator (its dataset, weights and neff set)."""
    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = tnp.atleast_2d(asarray(dataset))
        _check_real(dataset, "data")
        if not aval(dataset).size > 1:
            raise ValueError(f"`dataset` input should have multiple elements, got shape {aval(dataset).shape}.")
        d, n = aval(dataset).shape
        if weights is not None:
            dataset, weights = promote_inexact(dataset, weights)
            weights = tnp.atleast_1d(weights)
            weights = weights / tnp.sum(weights)
            if aval(weights).ndim != 1:
                raise ValueError(f"`weights` input should be one-dimensional, got shape {aval(weights).shape}.")
            if aval(weights).shape[0] != n:
                raise ValueError(f"`weights` input should be of length n ({n}), got {aval(weights).shape[0]}.")
        else:
            (dataset,) = promote_inexact(dataset)
            weights = tnp.full(n, 1.0 / n, dtype=aval(dataset).dtype)
        self._setattr("dataset", dataset)
        self._setattr("weights", weights)
        neff = self._setattr("neff", 1 / tnp.sum(weights ** 2))
        factor = self._factor("scott" if bw_method is None else bw_method, neff, d)
        data_covariance = tnp.atleast_2d(tnp.cov(dataset, rowvar=1, bias=False, aweights=weights,
                                                  dtype=aval(dataset).dtype))      # NumPy's would be float64
        self._setattr("covariance", data_covariance * factor ** 2)
        self._setattr("inv_cov", tnp.linalg.inv(data_covariance) / factor ** 2)

    def _factor(self, bw_method, neff, d):
        """The bandwidth factor bw_method names (strings compared only as strings: an array is a scalar)."""
        if isinstance(bw_method, str) and bw_method == "scott":
            return tnp.power(neff, -1.0 / (d + 4))
        if isinstance(bw_method, str) and bw_method == "silverman":
            return tnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        if not isinstance(bw_method, str) and tnp.isscalar(bw_method):
            return bw_method
        if callable(bw_method):
            return bw_method(self)
        raise ValueError(f"`bw_method` should be 'scott', 'silverman', a scalar, or a callable, got {bw_method!r}.")

    def _setattr(self, name, value):
        """Set a field of the frozen dataclass while it is made (as dataclasses do themselves); returns value."""
        object.__setattr__(self, name, value)
        return value

    def tree_flatten(self):
        """(neff, dataset, weights, covariance, inv_cov) and no static data, as JAX's."""
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        """The estimator of these leaves, without recomputing anything (the leaves may be tracers)."""
        del aux_data
        kde = cls.__new__(cls)
        for name, value in zip(("neff", "dataset", "weights", "covariance", "inv_cov"), children):
            kde._setattr(name, value)
        return kde

    @property
    def d(self):
        """The number of dimensions of the data."""
        return aval(asarray(self.dataset)).shape[0]

    @property
    def n(self):
        """The number of data points."""
        return aval(asarray(self.dataset)).shape[1]

    def _reshape_points(self, points):
        """points as (d, m): an (m,) array is m points of a 1-d estimate, and a (d,) one a single d-dim point."""
        _check_real(points, "coordinates")
        points = tnp.atleast_2d(asarray(points))
        d, m = aval(points).shape
        if d != self.d:
            if d == 1 and m == self.d:
                return tnp.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points

    def _kernel_sums(self, points, in_log):
        """The density (or its log) at the points (d, m), with the Gaussians whitened by the Cholesky factor of
        inv_cov; the log is a logsumexp over the data points, exact where the density underflows."""
        data, weights, points, precision = promote_inexact(self.dataset, self.weights, points, self.inv_cov)
        whitening = linalg.cholesky(precision, lower=True)
        data = tnp.matmul(tnp.transpose(data), whitening)          # (n, d)
        points = tnp.matmul(tnp.transpose(points), whitening)      # (m, d)
        log_norm = tnp.sum(tnp.log(tnp.diag(whitening))) - 0.5 * self.d * math.log(2 * math.pi)
        exponents = log_norm - 0.5 * tnp.sum(tnp.square(points[:, None, :] - data[None, :, :]), axis=-1)
        if in_log:
            return special.logsumexp(exponents + tnp.log(weights), axis=1)
        return tnp.matmul(tnp.exp(exponents), weights)

    def evaluate(self, points):
        """The estimated density at points: (m,) for a 1-d estimate, (d, m) or a single (d,) point."""
        return self._kernel_sums(self._reshape_points(points), in_log=False)

    def __call__(self, points):
        """evaluate(points)."""
        return self.evaluate(points)

    def pdf(self, x):
        """The estimated density at x: evaluate(x)."""
        return self.evaluate(x)

    def logpdf(self, x):
        """The log of the estimated density at x, computed as a logsumexp (finite far in the tails)."""
        return self._kernel_sums(self._reshape_points(x), in_log=True)

    def _convolved(self, chol, targets, weights, means):
        """The weighted sums over the targets (d, n) of the Gaussian of covariance chol's matrix centred at each
        mean (d, k): (k,)."""
        d = self.d
        diff = targets[:, :, None] - means[:, None, :]                             # (d, n, k)
        flat = tnp.reshape(diff, (d, -1))
        alpha = tnp.reshape(linalg.cho_solve(chol, flat), aval(diff).shape)
        norm = 1.0 / (math.sqrt(2 * math.pi) ** d * tnp.prod(tnp.diag(chol[0])))
        return norm * tnp.sum(tnp.exp(-0.5 * tnp.sum(diff * alpha, axis=0)) * weights[:, None], axis=0)

    def integrate_gaussian(self, mean, cov):
        """The integral of the estimate times the Gaussian of this mean (d,) and covariance (d, d)."""
        mean = tnp.atleast_1d(tnp.squeeze(asarray(mean)))
        cov = tnp.atleast_2d(asarray(cov))
        if aval(mean).shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}, got shape {aval(mean).shape}")
        if aval(cov).shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}, got shape {aval(cov).shape}")
        chol = linalg.cho_factor(self.covariance + cov)
        return self._convolved(chol, self.dataset, self.weights, mean[:, None])[0]

    def integrate_box_1d(self, low, high):
        """The probability of [low, high] under a 1-d estimate: the weighted sum of the kernels' normal CDFs."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars, got shapes "
                             f"{np.shape(low)} and {np.shape(high)}")
        sigma = tnp.squeeze(tnp.sqrt(self.covariance))
        low = tnp.squeeze((low - self.dataset) / sigma)
        high = tnp.squeeze((high - self.dataset) / sigma)
        return tnp.sum(self.weights * (special.ndtr(high) - special.ndtr(low)))

    def integrate_kde(self, other):
        """The integral of the product of this estimate and another of the same dimension: the kernels of the
        smaller one convolved with the larger's."""
        if other.d != self.d:
            raise ValueError(f"KDEs are not the same dimensionality ({self.d} and {other.d})")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        small, large = (self, other) if self.n < other.n else (other, self)
        values = self._convolved(chol, large.dataset, large.weights, small.dataset)
        return tnp.sum(values * small.weights)

    def resample(self, key, shape=()):
        """(d,) + shape points drawn from the estimate with key: data points chosen by weight, plus Gaussian
        noise of the kernel's covariance. The same draws as JAX's: its keys, random.choice and
        random.multivariate_normal (whose samples, of shape shape + (d,), are transposed whole, as JAX's)."""
        shape = tuple(shape)
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        covariance = asarray(self.covariance)
        eps = random.multivariate_normal(eps_key, tnp.zeros(self.d, aval(covariance).dtype), covariance,
                                         shape=shape, dtype=aval(asarray(self.dataset)).dtype)
        return take_clamped(self.dataset, ind, axis=1) + tnp.transpose(eps)

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not implemented, as in JAX: only 1-d boxes (integrate_box_1d)."""
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        """Not implemented, as in JAX: the estimator is immutable (its bandwidth is fixed when it is made)."""
        del bw_method
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")
