"""jax.lax's collectives over the named axis of an enclosing vmap(axis_name=...): psum, pmean, pmax, pmin (of
pytrees), all_gather, axis_index and axis_size, and the data movers composed of all_gather and axis_index (each
example gathers the whole batch and keeps its part; they differentiate and batch as those do): ppermute, pshuffle,
psum_scatter, all_to_all, pswapaxes and pbroadcast; pcast to 'varying'. psum of a Python number is a Python number (`psum(1, 'i')` is
the axis' size, as in JAX). axis_index_groups is not supported (JAX's is for pmap)."""
import math

import numpy as np

from .. import numpy as tnp
from ..core.avals import index_arg, is_python_scalar, normalize_axis
from ..core.batching import axis_size as _size
from ..core.pytree import tree_map
from ..core.trace import bind
from ..numpy._base import asarray, aval
from ..numpy.indexing import take_clamped
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


def _single(name, axis_name, axis_index_groups):
    _groups(name, axis_index_groups)
    if len(_names(axis_name)) != 1:
        raise NotImplementedError(f"{name} over several axis names at once")
    return axis_size(axis_name)


def ppermute(x, axis_name, perm):
    """Each example's x sent to another: perm holds (source, destination) index pairs, and an example that no
    pair names as a destination gets zeros, as jax.lax.ppermute (JAX's vmap accepts full permutations only)."""
    size = _single("ppermute", axis_name, None)
    perm = [tuple(index_arg(i, "ppermute: perm") for i in pair) for pair in perm]
    if any(len(pair) != 2 for pair in perm):
        raise ValueError(f"ppermute: perm must be a sequence of (source, destination) pairs, got {perm}")
    sources, destinations = [p[0] for p in perm], [p[1] for p in perm]
    if len(set(sources)) != len(sources) or len(set(destinations)) != len(destinations):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}")
    if not all(0 <= i < size for i in sources + destinations):
        raise ValueError(f"ppermute: perm indices must be in [0, {size}) (the size of axis {axis_name!r}), got {perm}")
    source_of = np.full(size, -1, np.int32)
    source_of[destinations] = sources
    received = np.zeros(size, bool)
    received[destinations] = True
    me = axis_index(axis_name)
    src, keep = take_clamped(source_of, me), take_clamped(received, me)

    def move(v):
        v = asarray(v)
        gathered = all_gather(v, axis_name)
        return tnp.where(keep, take_clamped(gathered, tnp.maximum(src, 0), axis=0), tnp.zeros_like(v))
    return tree_map(move, x)


def pshuffle(x, axis_name, perm):
    """Example i gets the x of example perm[i] (perm a permutation of range(size)), as jax.lax.pshuffle."""
    size = _single("pshuffle", axis_name, None)
    perm = [index_arg(i, "pshuffle: perm") for i in perm]
    if sorted(perm) != list(range(size)):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(size))))


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """psum(x), of which example i keeps block i along scatter_dimension: that axis' entry i (its size must be the
    axis size), or its i-th slice of size/axis size when tiled, as jax.lax.psum_scatter."""
    size = _single("psum_scatter", axis_name, axis_index_groups)

    def scatter(v):
        v = asarray(v)
        shape = aval(v).shape
        d = normalize_axis(scatter_dimension, len(shape), "psum_scatter")
        if (shape[d] % size if tiled else shape[d] != size):
            raise ValueError(f"psum_scatter: x.shape[scatter_dimension] = {shape[d]} must "
                             f"{'be divisible by' if tiled else 'equal'} the size of axis {axis_name!r}, {size}")
        total = psum(v, axis_name)
        blocks = tnp.reshape(total, shape[:d] + (size, shape[d] // size) + shape[d + 1:]) if tiled else total
        mine = take_clamped(blocks, axis_index(axis_name), axis=d)
        return mine
    return tree_map(scatter, x)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """x split into axis-size blocks along split_axis, example i receiving block i of every example, joined in
    example order along concat_axis, as jax.lax.all_to_all: untiled, split_axis' size must be the axis size and
    a new axis of that size takes concat_axis' place (split_axis then removed); tiled, the blocks are joined."""
    size = _single("all_to_all", axis_name, axis_index_groups)

    def exchange(v):
        v = asarray(v)
        shape = aval(v).shape
        split = normalize_axis(split_axis, len(shape), "all_to_all")
        concat = normalize_axis(concat_axis, len(shape), "all_to_all")
        if (shape[split] % size if tiled else shape[split] != size):
            raise ValueError(f"all_to_all requires the size of the mapped axis axis_name to "
                             f"{'divide' if tiled else 'equal'} x.shape[split_axis], but they are {size} and "
                             f"{shape[split]} respectively.")
        if not tiled:     # example j's row `me` along split_axis, the rows stacked at concat_axis
            mine = take_clamped(all_gather(v, axis_name), axis_index(axis_name), axis=split + 1)
            return tnp.moveaxis(mine, 0, concat)
        rows = shape[split] // size
        blocks = tnp.reshape(v, shape[:split] + (size, rows) + shape[split + 1:])
        mine = take_clamped(all_gather(blocks, axis_name), axis_index(axis_name), axis=split + 1)  # [j, x's axes]
        joined = tnp.moveaxis(mine, 0, concat)        # example j's block just before the concat axis, then merged
        out_shape = list(aval(mine).shape[1:])
        out_shape[concat] *= size
        return tnp.reshape(joined, tuple(out_shape))
    return tree_map(exchange, x)


def pbroadcast(x, axis_name, source):
    """Every example gets example `source`'s x, as jax.lax.pbroadcast."""
    size = _single("pbroadcast", axis_name, None)
    source = index_arg(source, "pbroadcast: source")
    if not 0 <= source < size:
        raise ValueError(f"pbroadcast: source must be in [0, {size}) (the size of axis {axis_name!r}), got {source}")
    return tree_map(lambda v: take_clamped(all_gather(asarray(v), axis_name), source, axis=0), x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """all_to_all(x, axis_name, axis, axis): the named axis swapped with x's axis `axis`, as jax.lax.pswapaxes."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pcast(x, axis_name, *, to):
    """x (each leaf of a pytree) made to vary over the named axes, its values unchanged, as jax.lax.pcast(...,
    to='varying') of a value the same on every example (a scan carry's initial value in shard_map); its
    derivative sums over the axes, as JAX's. JAX's other states ('reduced', 'unreduced': sharding in types) have
    no meaning on one device and raise."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"pcast: axis_name must be a tuple or a str, got {axis_name!r}")
    names = _names(axis_name) if axis_name else ()
    if not names:
        return x
    if to not in ("varying", "reduced", "unreduced"):
        raise ValueError(f"pcast: to must be one of 'varying', 'reduced', 'unreduced', got {to!r}")
    if to != "varying":
        raise NotImplementedError(f"pcast: to={to!r} (sharding in types) is not supported on tracejit's one device")
    varies = sum(axis_index(n) for n in names) >= 0       # true on every example, but one value per example
    return tree_map(lambda v: tnp.where(varies, v, v), x)

