"""sort and argsort along one axis, in NumPy's order (-0.0 equal to 0.0, NaNs equal and last). Compiled code calls
NumPy's sort (no lowering rule), so values and the order of ties are NumPy's; the derivative of sort moves the
tangent by the same permutation.

An argsort of real values sorts (key << 32 | position) as uint64 instead, where the key is an unsigned word that
orders as the value does: ties then come in order of position without a stable sort, and NumPy's sort of uint64 is
several times faster than its argsorts (1e5 elements: 0.55 ms against 1.2 unstable and 7.9 stable). 64-bit values
sort so twice, by the keys' low words and then by their high ones (`ascending`). Under jit the keys are packed and
unpacked by fused loops (`_argsort_simplify`); the impl packs them with NumPy. A compiled stable LSD radix argsort
of uint32 keys (reading the keys, writing the positions: no packing) was slower than this on the 2.3 GHz AVX-512
hosts: random keys, 1e4 / 1e5 / 1e6 per row, 8-bit digits 0.069 / 0.61 / 10.5 ms, 11-bit 0.078 / 0.88 / 11.0,
16-bit 0.13 / 1.03 / 18.7, against NumPy's sort of the packed keys, 0.045 / 0.53 / 7.0 (with the pack, the copy
into the output and the unpack, 1e5 took 0.68 ms a row). Wired in as argsort's lowering for rows of 2**15 to 2**18
(the keys' loop, then the radix sort of the rows on the threads), it still lost on one core: permutation of 1e5
1.92 ms against 1.68, a stable argsort of 1e5 f32 0.75 against 0.72, of 2.5e5 2.46 against 1.95."""
import math

import numpy as np

from ..core.ad_util import Zero, aval
from ..core.avals import DEFAULT_INT, ShapedArray, is_symbolic
from ..core.batching import batched_axis
from ..core.errors import ShapeError
from ..core.ops import ops
from ..core.trace import Primitive
from .base import ZERO, jvp_rule
from .indexing import take_along_axis

PARALLEL_SORT = 1 << 16    # elements from which the compiled code sorts the rows of an array in chunks
SORT_CHUNKS = 16           # at most, handed out to the threads on demand
POSITIONS = 1 << 32        # an axis longer than this cannot pack its positions into 32 bits
SMALL_SORT = 1024          # an argsort of fewer elements is NumPy's stable one: packing the keys costs more there
                           # (1e2 f32: 9.6 us against 1.8, 1e3 f32: 15 against 17, 4e3: 32 against 186)


def _along_axis_shape(name, dtype=None):
    def rule(x, axis, **_):
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"{name}: axis {axis} out of range for shape {x.shape}")
        return x if dtype is None else ShapedArray(x.shape, np.dtype(dtype))
    return rule


def _sort_jvp(primals, tangents, axis):
    (x,), (t,) = primals, tangents
    if isinstance(t, Zero):
        return ops.sort(x, axis=axis), t
    return ops.sort(x, axis=axis), take_along_axis(t, ops.argsort(x, axis=axis, stable=True), axis)


def _sorted_into(sort):
    """The `into` rule of a sort: sort(out, x, axis, **params) writes x sorted along axis into out; an array of
    PARALLEL_SORT elements or more has its rows (along an axis other than the sorted one) sorted in chunks that
    parallel_for runs over the threads, as NumPy's sorts release the GIL. The rows of 2048 x 2048 f32 took 12.9 ms
    sorted by np.sort and copied into the output, against NumPy's 8.2."""
    def into(parallel_for, out, x, axis, **params):
        if x.size < PARALLEL_SORT:
            return sort(out, x, axis, **params)
        lead, n = (1 if axis == 0 else 0), (x.shape[1 if axis == 0 else 0] if x.ndim > 1 else 1)
        chunks = min(SORT_CHUNKS, n)

        def chunk(c):
            rows = (slice(None),) * lead + (slice(c * n // chunks, (c + 1) * n // chunks),) if x.ndim > 1 else ()
            sort(out[rows], x[rows], axis, **params)
        parallel_for(chunk, chunks)
    return into


def _sort_in_place(out, x, axis):
    if x.dtype.name == "bfloat16":
        np.copyto(out, _sort(x, axis))
        return
    np.copyto(out, x)
    out.sort(axis=axis)


def _sort(x, axis):
    x = np.asarray(x)
    return np.sort(_sortable(x), axis=axis).astype(x.dtype, copy=False)


def _sortable(x):
    """x as NumPy's sorts order it: bfloat16 as float32 (exactly; NumPy's sort of ml_dtypes' bfloat16 left NaNs in
    place)."""
    return x.astype(np.float32) if x.dtype.name == "bfloat16" else x


def _argsort(x, axis, stable):
    """The packed sorts for real values of SMALL_SORT elements or more (a stable order, which is also an unstable
    one), except an unstable argsort of 64-bit values; else NumPy's (stable for fewer elements)."""
    x = np.asarray(x)
    keys = order_keys(x) if _packs(x.dtype, x.shape, axis, stable) else None
    if keys is None:
        return np.argsort(_sortable(x), axis=axis, kind="stable" if stable or x.size < SMALL_SORT else None)
    return ascending(keys, axis)


def ascending(keys, axis):
    """The indices along axis (fewer than 2**32) in the ascending order of (key, index), for uint32 or uint64 keys.
    64-bit keys sort twice, as a radix sort does: by their low words, then stably by their high ones."""
    positions = np.arange(keys.shape[axis]).reshape([-1 if a == axis % keys.ndim else 1 for a in range(keys.ndim)])
    if keys.dtype.itemsize <= 4:
        return _by_keys(keys, positions, axis)
    first = _by_keys((keys & np.uint64(0xFFFFFFFF)).astype(np.uint32), positions, axis)
    high = np.take_along_axis((keys >> np.uint64(32)).astype(np.uint32), first, axis)
    return np.take_along_axis(first, _by_keys(high, positions, axis), axis)


def _by_keys(keys, positions, axis):
    """positions (below 2**32, broadcast against the uint32 keys) in the ascending order of (key, position) along
    axis: one sort of the unique key << 32 | position, so that equal keys come in order of position without a stable
    sort."""
    packed = keys.astype(np.uint64)
    packed <<= np.uint64(32)
    packed |= np.asarray(positions).astype(np.uint64)
    packed.sort(axis=axis)
    packed &= np.uint64(0xFFFFFFFF)
    return packed.view(DEFAULT_INT)


def _packs(dtype, shape, axis, stable):
    """Whether an argsort sorts packed keys. Stable, 64-bit values took two packed sorts 1.5 ms for 1e5 and 17 for 1e6
    (NumPy's stable argsort 7.1 and 97), rows of 100 1.0 ms for 1000 of them (NumPy's 2.0); unstable ones are
    NumPy's (1.3, 26 and 0.55 ms)."""
    return (math.prod(shape) >= SMALL_SORT and shape[axis] < POSITIONS and _key_types(dtype) is not None
            and (stable or dtype.itemsize <= 4))


def _key_types(dtype):
    """(The unsigned and signed integer dtypes of the keys of values of dtype, the float dtype a float's are read
    from), or None where the values have no ordered keys (complex)."""
    if dtype.kind not in "biuf" and dtype.name != "bfloat16":
        return None
    wide = dtype.itemsize > 4
    return (np.dtype(np.uint64 if wide else np.uint32), np.dtype(np.int64 if wide else np.int32),
            np.dtype(np.float64 if wide else np.float32))


def order_keys(x, total=False):
    """Unsigned keys (uint32, or uint64 for 64-bit x) that order as NumPy's sort orders x (-0.0 equal to 0.0, NaNs
    equal and last), or None for complex x; total: in the total order of floats' bits (XLA's: -NaN < -inf < -0.0 <
    0.0 < inf < NaN)."""
    types = _key_types(x.dtype)
    if types is None:
        return None
    uint, sint, flt = types
    if x.dtype.kind in "bu":
        return x.astype(uint, copy=False)
    if x.dtype.kind == "i":
        return x.astype(sint).view(uint) ^ uint.type(1 << (8 * uint.itemsize - 1))
    v = x.astype(flt, copy=False) if total else x.astype(flt, copy=False) + flt.type(0.0)   # (-0.0 becomes 0.0)
    if not total and np.isnan(v).any():
        v[np.isnan(v)] = np.nan
    bits = v.view(uint)
    keys = (bits.view(sint) >> (8 * uint.itemsize - 1)).view(uint)   # all ones where negative: those bits flip,
    keys |= uint.type(1 << (8 * uint.itemsize - 1))                   # the others' sign
    keys ^= bits
    return keys


def traced_order_keys(x, total=False):
    """order_keys(x, total) as equations, which fuse into one loop."""
    uint, sint, flt = _key_types(aval(x).dtype)
    sign = uint.type(1 << (8 * uint.itemsize - 1))
    if aval(x).dtype.kind in "bu":
        return ops.convert_element_type(x, new_dtype=uint, weak_type=False)
    if aval(x).dtype.kind == "i":
        wide = ops.convert_element_type(x, new_dtype=sint, weak_type=False)
        return ops.xor(ops.bitcast_convert_type(wide, new_dtype=uint), sign)
    v = ops.convert_element_type(x, new_dtype=flt, weak_type=False) if aval(x).dtype != flt else x
    if not total:
        v = ops.select_n(ops.ne(v, v), ops.add(v, flt.type(0.0)), flt.type(np.nan))
    bits = ops.bitcast_convert_type(v, new_dtype=uint)
    negative = ops.bitcast_convert_type(ops.shift_right_arithmetic(ops.bitcast_convert_type(v, new_dtype=sint),
                                                                   sint.type(8 * sint.itemsize - 1)), new_dtype=uint)
    return ops.xor(ops.or_(negative, sign), bits)


def _traced_by_keys(keys, axis):
    """_by_keys of uint32 keys and their positions as equations: a fused loop packs, NumPy sorts, and the positions
    are the low words (unpacked where they are used)."""
    u64 = np.dtype(np.uint64)
    shape = aval(keys).shape
    packed = ops.or_(ops.shift_left(ops.convert_element_type(keys, new_dtype=u64, weak_type=False), np.uint64(32)),
                     ops.iota(dtype=u64, shape=shape, dimension=axis))
    low = ops.and_(ops.sort(packed, axis=axis), np.uint64(0xFFFFFFFF))
    return ops.convert_element_type(low, new_dtype=np.dtype(DEFAULT_INT), weak_type=False)


def _argsort_simplify(eqn, producer):
    """Under jit the argsort is `ascending` written in equations (the keys and their packing fuse into the loops
    around the sorts), where the impl would sort packed keys."""
    x, axis = eqn.inputs[0], eqn.params["axis"]
    if is_symbolic(x.aval.shape) or not _packs(x.aval.dtype, x.aval.shape, axis, eqn.params["stable"]):
        return None

    def packed_argsort(x):
        keys = traced_order_keys(x)
        if aval(keys).dtype.itemsize <= 4:
            return _traced_by_keys(keys, axis)
        u32 = np.dtype(np.uint32)
        first = _traced_by_keys(ops.convert_element_type(ops.and_(keys, np.uint64(0xFFFFFFFF)), new_dtype=u32,
                                                         weak_type=False), axis)
        high = ops.convert_element_type(ops.shift_right_logical(keys, np.uint64(32)), new_dtype=u32, weak_type=False)
        return take_along_axis(first, _traced_by_keys(take_along_axis(high, first, axis), axis), axis)
    return packed_argsort


sort_p = Primitive("sort", _along_axis_shape("sort"), _sort, jvp=_sort_jvp,
                   batch=lambda args, dims, axis: (ops.sort(args[0], axis=batched_axis(axis, dims[0])), dims[0]),
                   into=_sorted_into(_sort_in_place))
argsort_p = Primitive("argsort", _along_axis_shape("argsort", DEFAULT_INT), _argsort,
                      batch=lambda args, dims, axis, stable: (
                          ops.argsort(args[0], axis=batched_axis(axis, dims[0]), stable=stable), dims[0]),
                      into=_sorted_into(lambda out, x, axis, stable: np.copyto(out, _argsort(x, axis, stable))),
                      simplify=_argsort_simplify)
argsort_p.set(jvp=jvp_rule(argsort_p, ZERO))
