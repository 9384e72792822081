"""Collectives over a named axis (psum, pmax, pmin, all_gather, axis_index), as JAX's under vmap(axis_name=...):
each is bound with the names it reduces over, and the vmap of that name resolves it (`named_batch`): a sum, max or
min over the batch axis, a gather of the whole batch, the position in it. Evaluated outside such a vmap they
raise JAX's NameError. A vmap of another name maps them over its own axis like any elementwise op."""
import numpy as np

from ..core.ad_util import aval
from ..core.avals import ShapedArray
from ..core.batching import axis_size, move_batch_axis
from ..core.ops import ops
from ..core.trace import Primitive, bind
from .base import LINEAR, jvp_rule


def _names(axis_name):
    return axis_name if isinstance(axis_name, tuple) else (axis_name,)


def _unbound(*args, axis_name, **params):
    axis_size(_names(axis_name)[0])       # (raises JAX's NameError: an IR evaluated outside its vmap)
    raise NameError(f"{_names(axis_name)[0]}: a collective evaluated outside the vmap of its axis")


def _rest(axis_name, name):
    """The names of axis_name other than name (None when none is left)."""
    rest = tuple(n for n in _names(axis_name) if n != name)
    return rest[0] if len(rest) == 1 else rest or None


def _reduction(name, reduce, of_copies):
    """psum, pmax or pmin: `reduce` over the named batch axis; an unbatched operand is the same in every example
    (of_copies(x, size): the result for size copies of it)."""
    def named_batch(args, dims, size, name_batched, axis_name):
        (x,), (d,) = args, dims
        out = of_copies(x, size) if d is None else reduce(x, axes=(d,))
        rest = _rest(axis_name, name_batched)
        return (out if rest is None else bind(prim, out, axis_name=rest)), None

    def batch(args, dims, axis_name):     # a vmap of another name: the collective runs in each of its examples
        return bind(prim, args[0], axis_name=axis_name), dims[0]

    prim = Primitive(name, lambda x, axis_name: x, _unbound, named_batch=named_batch, batch=batch)
    return prim


psum_p = _reduction("psum", lambda x, axes: ops.reduce_sum(x, axes=axes),
                    lambda x, size: ops.mul(x, np.asarray(size, aval(x).dtype)))
pmax_p = _reduction("pmax", lambda x, axes: ops.reduce_max(x, axes=axes), lambda x, size: x)
pmin_p = _reduction("pmin", lambda x, axes: ops.reduce_min(x, axes=axes), lambda x, size: x)
psum_p.set(jvp=jvp_rule(psum_p, LINEAR), linear=True,
           transpose=lambda ct, x, axis_name: [bind(psum_p, ct, axis_name=axis_name)])


def _gather_shape(x, axis_name, axis, tiled, size):
    shape = list(x.shape)
    if tiled:
        shape[axis] *= size
    else:
        shape.insert(axis, size)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _gather_named(args, dims, batch_size, name_batched, axis_name, axis, tiled, size):
    """The whole batch, its axis at `axis` of each example's result (joined with it when tiled)."""
    (x,), (d,) = args, dims
    stacked = move_batch_axis(x, d, 0, size)
    out = ops.transpose(stacked, permutation=tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, aval(stacked).ndim)))
    if tiled:
        shape = aval(out).shape
        out = ops.reshape(out, new_sizes=shape[:axis] + (shape[axis] * shape[axis + 1],) + shape[axis + 2:])
    if _rest(axis_name, name_batched) is not None:
        raise NotImplementedError("all_gather over several axis names at once")
    return out, None


def _gather_batch(args, dims, axis_name, axis, tiled, size):
    x = move_batch_axis(args[0], dims[0], 0, aval(args[0]).shape[dims[0]])
    return bind(all_gather_p, x, axis_name=axis_name, axis=axis + 1, tiled=tiled, size=size), 0


all_gather_p = Primitive("all_gather", _gather_shape, _unbound, named_batch=_gather_named, batch=_gather_batch)


def _index_named(args, dims, size, name_batched, axis_name, dtype):
    return ops.iota(dtype=dtype, shape=(size,), dimension=0), 0


axis_index_p = Primitive("axis_index", lambda axis_name, dtype: ShapedArray((), dtype), _unbound,
                         named_batch=_index_named)
