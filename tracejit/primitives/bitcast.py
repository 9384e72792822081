"""bitcast_convert_type: the bits of each element read as another dtype, as jax.lax.bitcast_convert_type. To a
narrower dtype a trailing axis of width ratio appears (the element's bytes, lowest first: little-endian); to a
wider one the trailing axis, whose size must be the ratio, disappears. Not differentiable (zero tangents).
Its lowering is an index map, so it fuses."""
import numpy as np

from ..backend.rules import IndexMap, memory_type
from ..core.ad_util import aval
from ..core.avals import ShapedArray
from ..core.batching import move_batch_axis
from ..core.errors import ShapeError
from ..core.trace import Primitive, bind
from .base import zero_jvp


def _bitcast_shape(x, new_dtype):
    if x.dtype != new_dtype and any(d == np.bool_ or d.kind == "c" for d in (x.dtype, new_dtype)):
        raise TypeError(f"bitcast_convert_type: bool and complex values convert only to their own dtype, as in "
                        f"JAX ({x.dtype} to {new_dtype}; arr.view() reads the bits)")
    old, new = x.dtype.itemsize, new_dtype.itemsize
    if old > new:
        return ShapedArray(x.shape + (old // new,), new_dtype)
    if old < new and (not x.ndim or x.shape[-1] != new // old):
        raise ShapeError(f"bitcast_convert_type: {x.str_short()} to {new_dtype} needs a last axis of size "
                         f"{new // old}")
    return ShapedArray(x.shape[:-1] if old < new else x.shape, new_dtype)


def _bitcast_impl(x, new_dtype):
    x = np.asarray(x)
    out = np.ascontiguousarray(x).view(new_dtype)     # (ascontiguousarray makes a 0-d array 1-d)
    if x.dtype.itemsize > new_dtype.itemsize:
        return out.reshape(x.shape + (x.dtype.itemsize // new_dtype.itemsize,))
    return out.reshape(x.shape[:-1] if x.dtype.itemsize < new_dtype.itemsize else x.shape)


def _as_int(b, v, dtype):
    """A register value's bits as an integer of its width."""
    bits, ty = 8 * dtype.itemsize, memory_type(dtype)
    v = b.to_memory(v, dtype)
    return b(f"bitcast {ty} {v} to i{bits}") if ty in ("float", "double") else v


def _from_int(b, v, dtype):
    bits, ty = 8 * dtype.itemsize, memory_type(dtype)
    v = b(f"bitcast i{bits} {v} to {ty}") if ty in ("float", "double") else v
    return b.from_memory(v, dtype)


def _lower_bitcast(b, idx, read, new_dtype):
    old = b.in_avals[0].dtype
    wo, wn = 8 * old.itemsize, 8 * new_dtype.itemsize
    if old == new_dtype:
        return read(0, idx)
    if wo == wn:
        return _from_int(b, _as_int(b, read(0, idx), old), new_dtype)
    if wo > wn:       # element idx[-1] of the wider value's bytes
        word = _as_int(b, read(0, idx[:-1]), old)
        shift = b.iop("mul", idx[-1], wn)
        shift = shift if isinstance(shift, int) or wo == 64 else b(f"trunc i64 {shift} to i{wo}")
        return _from_int(b, b(f"trunc i{wo} {b(f'lshr i{wo} {word}, {shift}')} to i{wn}"), new_dtype)
    word = "0"
    for k in range(wn // wo):
        part = b(f"zext i{wo} {_as_int(b, read(0, [*idx, k]), old)} to i{wn}")
        word = b(f"or i{wn} {word}, {b(f'shl i{wn} {part}, {k * wo}')}")
    return _from_int(b, word, new_dtype)


def _bitcast_batch(args, dims, new_dtype):
    """The batch axis goes first, clear of the trailing axis that the cast may add or remove."""
    (x,), (d,) = args, dims
    x = move_batch_axis(x, d, 0, aval(x).shape[d])
    return bind(bitcast_convert_type_p, x, new_dtype=new_dtype), 0


bitcast_convert_type_p = Primitive("bitcast_convert_type", _bitcast_shape, _bitcast_impl, batch=_bitcast_batch,
                                   lower=IndexMap(_lower_bitcast))
bitcast_convert_type_p.set(jvp=zero_jvp(bitcast_convert_type_p))
