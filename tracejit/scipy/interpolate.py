"""tracejit.scipy.interpolate: jax.scipy.interpolate.RegularGridInterpolator, written on tracejit.numpy so that it
traces, differentiates (in the values, the grid, the query points and the fill value) and batches; the interpolator
is a pytree (its grid, values and fill value are the leaves), so it can be an argument of jit, vmap and grad.

As JAX's (and SciPy's, without its checks of the grid): methods 'linear' (a weighted sum over the 2**n corners of
the cell holding each point) and 'nearest'; points outside the grid take fill_value (NaN by default), or, with
fill_value=None, are extrapolated from the edge cell. Each grid axis must be strictly increasing (not checked:
JAX cannot check it under jit either). bounds_error=True is refused, as in JAX: it cannot raise under jit."""
import itertools

import numpy as np

from .. import numpy as tnp
from ..numpy._base import aval, promote_inexact
from ..numpy.indexing import take_clamped
from ..tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"method {method!r} is not defined")


def _as_points(xi, ndim):
    """The query points as one (..., ndim) array: a tuple of coordinate arrays is broadcast and stacked (in
    float64, as JAX's), a 1-D array is read as points of ndim coordinates."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        coordinates = tnp.broadcast_arrays(*xi)
        return tnp.stack([tnp.astype(c, np.float64) for c in coordinates], axis=-1)
    xi = tnp.asarray(xi)
    return tnp.reshape(xi, (-1, ndim)) if aval(xi).ndim == 1 else xi


class RegularGridInterpolator:
    """Interpolation on a regular (rectilinear) grid, as jax.scipy.interpolate.RegularGridInterpolator.

    points: n 1-D arrays, each strictly increasing; values: an array whose first n dimensions match them (further
    dimensions are carried along); method: 'linear' or 'nearest'; bounds_error: False only (JAX refuses True);
    fill_value: the value outside the grid, or None to extrapolate."""

    def __init__(self, points, values, method="linear", bounds_error=False, fill_value=np.nan):
        _check_method(method)
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        values = tnp.asarray(values)
        if len(points) > aval(values).ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has {aval(values).ndim} dimensions")
        (values,) = promote_inexact(values)
        if fill_value is not None:
            fill_value = tnp.asarray(fill_value)
            if not np.can_cast(aval(fill_value).dtype, aval(values).dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible with values")
        self.fill_value = fill_value
        self.grid = tuple(tnp.asarray(p) for p in points)
        for k, g in enumerate(self.grid):
            if aval(g).ndim != 1 or aval(g).shape[0] != aval(values).shape[k]:
                raise ValueError(f"points[{k}] must be a 1-D array of length values.shape[{k}] = "
                                 f"{aval(values).shape[k]}, got shape {aval(g).shape}")
        self.values = values

    def __call__(self, xi, method=None):
        """The interpolated values at the points xi (an array of shape (..., n), or a tuple of n coordinate
        arrays), of shape xi.shape[:-1] + values.shape[n:]."""
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = _as_points(xi, ndim)
        shape = aval(xi).shape
        if shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {shape[-1]}, but this "
                             f"RegularGridInterpolator has dimension {ndim}")
        xi = tnp.reshape(xi, (-1, ndim))
        indices, distances, outside = self._find_indices(xi)
        if method == "linear":
            result = self._evaluate_linear(indices, distances)
        else:
            result = self._gather([tnp.where(d <= 0.5, i, i + 1) for i, d in zip(indices, distances)])
        if self.fill_value is not None:
            trailing = (1,) * (aval(result).ndim - 1)
            result = tnp.where(tnp.reshape(outside, (-1, *trailing)), self.fill_value, result)
        return tnp.reshape(result, shape[:-1] + aval(self.values).shape[ndim:])

    def _evaluate_linear(self, indices, distances):
        """The sum over the cell's corners of the corner value times the product of its 1-D weights."""
        trailing = (slice(None),) + (None,) * (aval(self.values).ndim - len(indices))
        result = None
        for corner in itertools.product((False, True), repeat=len(indices)):
            weight = None
            for upper, d in zip(corner, distances):
                w = d if upper else 1 - d
                weight = w if weight is None else weight * w
            value = self._gather([i + 1 if upper else i for upper, i in zip(corner, indices)])
            term = value * weight[trailing]
            result = term if result is None else result + term
        return result

    def _gather(self, indices):
        """values[indices] (one index array per grid axis) as one take from the values with the grid axes
        flattened: the values may be a NumPy array while the indices are traced."""
        shape = aval(self.values).shape
        n = len(indices)
        flat = 0
        for k, i in enumerate(indices):
            flat = flat * shape[k] + i
        return take_clamped(tnp.reshape(self.values, (-1, *shape[n:])), flat, axis=0)

    def _find_indices(self, xi):
        """Per axis: the index of the lower edge of each point's cell (edge cells for points outside), the point's
        distance from that edge in units of the cell's width; and whether each point lies outside the grid."""
        indices, distances, outside = [], [], None
        for k, g in enumerate(self.grid):
            x = xi[:, k]
            # the distances in the dtype JAX computes them in: a float grid meets float points in their wider
            # float, an integer grid takes the points' float dtype
            if aval(g).dtype.kind in "biu" and aval(x).dtype.kind in "fc":
                g = tnp.astype(g, aval(x).dtype)
            elif aval(x).dtype.kind in "biu":
                x, g = promote_inexact(x, g)
            n = aval(g).shape[0]
            i = tnp.clip(tnp.searchsorted(g, x) - 1, 0, max(n - 2, 0))
            indices.append(i)
            lower = take_clamped(g, i)
            distances.append((x - lower) / (take_clamped(g, i + 1) - lower))
            off = (x < g[0]) | (x > g[-1])
            outside = off if outside is None else outside | off
        return indices, distances, outside


def _flatten(interpolator):
    return (interpolator.grid, interpolator.values, interpolator.fill_value), (interpolator.method,
                                                                               interpolator.bounds_error)


def _unflatten(aux, children):
    """Rebuilt without re-running __init__'s checks and conversions, so that transformations may put any leaves
    in it (tracers, batched values, None)."""
    interpolator = object.__new__(RegularGridInterpolator)
    interpolator.grid, interpolator.values, interpolator.fill_value = children
    interpolator.method, interpolator.bounds_error = aux
    return interpolator


register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)
