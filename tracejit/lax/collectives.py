"""jax.lax's collectives over the named axis of an enclosing vmap(axis_name=...): psum, pmean, pmax, pmin (of
pytrees), all_gather, axis_index and axis_size. psum of a Python number is a Python number (`psum(1, 'i')` is
the axis' size, as in JAX). axis_index_groups is not supported (JAX's is for pmap)."""
import math

import numpy as np

from ..core.avals import index_arg, is_python_scalar
from ..core.batching import axis_size as _size
from ..core.pytree import tree_map
from ..core.trace import bind
from ..numpy._base import asarray, aval
from ..primitives import collectives as coll


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _key(axis_name):
    names = _names(axis_name)
    return names[0] if len(names) == 1 else names


def axis_size(axis_name):
    """The number of examples along the named axis (the product over several names)."""
    return math.prod(_size(n) for n in _names(axis_name))


def _groups(name, axis_index_groups):
    if axis_index_groups is not None:
        raise NotImplementedError(f"{name}: axis_index_groups is not supported (JAX's is for pmap)")


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of x over the examples of the named axis (each leaf of a pytree)."""
    _groups("psum", axis_index_groups)
    size = axis_size(axis_name)
    return tree_map(lambda v: v * size if is_python_scalar(v) else
                    bind(coll.psum_p, asarray(v), axis_name=_key(axis_name)), x)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of x over the examples of the named axis."""
    _groups("pmean", axis_index_groups)
    size = axis_size(axis_name)
    return tree_map(lambda v: v / size, psum(x, axis_name))


def _extremum(prim, name):
    def fn(x, axis_name, *, axis_index_groups=None):
        _groups(name, axis_index_groups)
        axis_size(axis_name)
        return tree_map(lambda v: bind(prim, asarray(v), axis_name=_key(axis_name)), x)
    fn.__name__ = name
    fn.__doc__ = f"The {name[1:]}imum of x over the examples of the named axis."
    return fn


pmax, pmin = _extremum(coll.pmax_p, "pmax"), _extremum(coll.pmin_p, "pmin")


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every example's x, stacked along a new axis `axis` (joined along `axis` when tiled)."""
    _groups("all_gather", axis_index_groups)
    if len(_names(axis_name)) != 1:
        raise NotImplementedError("all_gather over several axis names at once")
    size = axis_size(axis_name)

    def gather(v):
        v = asarray(v)
        ndim = aval(v).ndim + (not tiled)
        k = index_arg(axis, "all_gather: axis")
        if not -ndim <= k < ndim:
            raise ValueError(f"all_gather: axis {axis} is out of range for a result of rank {ndim}")
        return bind(coll.all_gather_p, v, axis_name=_key(axis_name), axis=k % ndim, tiled=bool(tiled), size=size)
    return tree_map(gather, x)


def axis_index(axis_name):
    """The position (int32) of the current example along the named axis."""
    axis_size(axis_name)
    return bind(coll.axis_index_p, axis_name=_key(axis_name), dtype=np.dtype(np.int32))
