"""tracejit.scipy.ndimage: jax.scipy.ndimage.map_coordinates, written on tracejit.numpy so that it traces,
differentiates (in the input, the coordinates and cval) and batches.

As JAX's: orders 0 (nearest sample, halves rounded away from zero) and 1 (linear), and the modes 'constant',
'nearest', 'wrap', 'mirror' and 'reflect' as SciPy documents them ('constant' and 'wrap' are what SciPy calls
'grid-constant' and 'grid-wrap'). Each output is a weighted sum over the 2**ndim (order 1) corners of its cell,
each corner one gather from the flattened input."""
import functools
import itertools
import math
import operator

import numpy as np

from .. import lax
from .. import numpy as tnp
from ..numpy._base import aval
from ..numpy.indexing import take_clamped

__all__ = ["map_coordinates"]


def _nearest(index, size):
    return tnp.clip(index, 0, size - 1)


def _wrap(index, size):
    return tnp.remainder(index, size)


def _mirror(index, size):
    """Symmetric about the edge samples (d c b | a b c d | c b a), of period 2 (size - 1); one sample mirrors
    onto itself."""
    if size == 1:
        return tnp.zeros_like(index)
    period = 2 * (size - 1)
    folded = tnp.remainder(index, period)
    return tnp.minimum(folded, period - folded)


def _reflect(index, size):
    """Symmetric about the edges themselves (c b a | a b c | c b a), of period 2 size."""
    folded = tnp.remainder(index, 2 * size)
    return tnp.minimum(folded, 2 * size - 1 - folded)


# how each mode brings an index into the array ('constant' clamps it, and masks the value out afterwards)
_FOLDS = {"constant": _nearest, "nearest": _nearest, "wrap": _wrap, "mirror": _mirror, "reflect": _reflect}


def _nodes(coordinate, order):
    """(index, weight) of the samples that one coordinate interpolates between; weight None means 1."""
    if order == 0:
        nearest = coordinate if aval(coordinate).dtype.kind in "biu" else lax.round(coordinate)
        return [(tnp.astype(nearest, np.int64), None)]
    lower = tnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = tnp.astype(lower, np.int64)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def _corner(flat, shape, nodes, mode, cval):
    """The weighted value at one corner of the cells: nodes holds one (index, weight) per axis."""
    strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    offset = sum(_FOLDS[mode](index, size) * stride for (index, _), size, stride in zip(nodes, shape, strides))
    value = take_clamped(flat, offset)
    if mode == "constant" and nodes:
        inside = functools.reduce(operator.and_, [(index >= 0) & (index < size) for (index, _), size in
                                                  zip(nodes, shape)])
        value = tnp.where(inside, value, cval)
    return math.prod([weight for _, weight in nodes if weight is not None], start=value)


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """input interpolated at the points whose coordinates along axis k are coordinates[k] (broadcast together),
    in the input's dtype (integers rounded, halves away from zero)."""
    input = tnp.asarray(input)
    shape, dtype = aval(input).shape, aval(input).dtype
    coordinates = [tnp.asarray(c) for c in coordinates]
    if len(coordinates) != len(shape):
        raise ValueError(f"coordinates must be a sequence of length input.ndim, but {len(coordinates)} != "
                         f"{len(shape)}")
    if mode not in _FOLDS:
        raise NotImplementedError(f"tracejit.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
                                  f"Currently supported modes are {set(_FOLDS)}.")
    if order not in (0, 1):
        raise NotImplementedError("tracejit.scipy.ndimage.map_coordinates currently requires order<=1")
    flat, cval = tnp.ravel(input), tnp.asarray(cval, dtype)
    corners = itertools.product(*[_nodes(c, order) for c in coordinates])
    result = functools.reduce(operator.add, [_corner(flat, shape, nodes, mode, cval) for nodes in corners])
    if dtype.kind in "biu":
        result = lax.round(result)
    return tnp.astype(result, dtype)
