"""Structural primitives: broadcast, reshape, transpose, squeeze, expand_dims, rev, slice, pad,
concatenate, iota. All but iota are linear; their transposes move cotangents back into place."""
import numpy as np

from ..backend.rules import IndexMap
from ..core.avals import ShapedArray, same_size
from ..core.errors import ShapeError
from ..core.trace import Primitive, bind
from .base import UndefinedPrimal, Zero, aval, batched_axis, full, linear_jvp, move_batch_axis, scalar, zeros
from .elementwise import select_n_p, sub_p


def _p(prim, *args, **params):
    return bind(prim, *args, **params)


def _sum(x, axes):
    from .reductions import reduce_sum_p
    return _p(reduce_sum_p, x, axes=tuple(axes)) if axes else x


def _linear(prim, transpose, linear_args=None):
    return prim.set(jvp=linear_jvp(prim, linear_args), transpose=transpose, linear=True)


# ------------------------------------------------------------------------------------ broadcast_in_dim

def _broadcast_in_dim_shape(x, shape, broadcast_dimensions):
    dims = broadcast_dimensions
    if len(dims) != x.ndim or any(d >= len(shape) for d in dims) or list(dims) != sorted(set(dims)):
        raise ShapeError(f"broadcast_in_dim: broadcast_dimensions {dims} do not place operand {x.shape} "
                         f"in shape {shape}")
    for i, d in enumerate(dims):
        if x.shape[i] not in (1, shape[d]):
            raise ShapeError(f"broadcast_in_dim: operand shape {x.shape} cannot broadcast to {shape}")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_impl(x, shape, broadcast_dimensions):
    x = np.asarray(x)
    expanded = x.reshape([x.shape[broadcast_dimensions.index(d)] if d in broadcast_dimensions else 1
                          for d in range(len(shape))])
    return np.broadcast_to(expanded, shape).copy()


def _broadcast_in_dim_transpose(ct, x, shape, broadcast_dimensions):
    new_axes = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    stretched = [d for i, d in enumerate(broadcast_dimensions) if x.aval.shape[i] == 1 and shape[d] != 1]
    summed = _sum(ct, sorted(new_axes + stretched))
    if summed is not ct and aval(summed).shape != x.aval.shape:
        summed = _p(reshape_p, summed, new_sizes=x.aval.shape)
    return [summed]


broadcast_in_dim_p = _linear(Primitive("broadcast_in_dim", _broadcast_in_dim_shape, _broadcast_in_dim_impl),
                             _broadcast_in_dim_transpose)


def _broadcast_in_dim_simplify(eqn, producer):
    """A broadcast to the operand's own shape is a no-op; a broadcast of a broadcast is one broadcast."""
    x, shape, dims = eqn.inputs[0], eqn.params["shape"], eqn.params["broadcast_dimensions"]
    if x.aval.shape == tuple(shape):
        return x
    inner = producer(x)
    if inner is not None and inner.prim is broadcast_in_dim_p:
        composed = tuple(dims[d] for d in inner.params["broadcast_dimensions"])
        return broadcast_in_dim_p, inner.inputs, {"shape": shape, "broadcast_dimensions": composed}
    if inner is not None and inner.prim in (reshape_p, expand_dims_p):
        placed = _unit_axes_inserted(inner.inputs[0].aval.shape, x.aval.shape)
        if placed is not None:  # e.g. keepdims' reshape to (n, 1) and then a broadcast: one broadcast
            composed = tuple(dims[i] for i in placed)
            return broadcast_in_dim_p, inner.inputs[:1], {"shape": shape, "broadcast_dimensions": composed}
    return None


def _unit_axes_inserted(before, after):
    """Where each axis of `before` lands in `after` when `after` only adds size-1 axes (else None)."""
    placed, j = [], 0
    for i, d in enumerate(after):
        if j < len(before) and before[j] == d:
            placed.append(i)
            j += 1
        elif d != 1:
            return None
    return placed if j == len(before) else None


broadcast_in_dim_p.set(simplify=_broadcast_in_dim_simplify, rearranges=True)


def _broadcast_in_dim_batch(args, dims, shape, broadcast_dimensions):
    """The batch axis goes right after the output axis of the operand axis before it: no transpose."""
    (x,), (d,) = args, dims
    at = broadcast_dimensions[d - 1] + 1 if d else 0
    moved = tuple(b + (b >= at) for b in broadcast_dimensions)
    return _p(broadcast_in_dim_p, x, shape=shape[:at] + (aval(x).shape[d],) + shape[at:],
              broadcast_dimensions=moved[:d] + (at,) + moved[d:]), at


broadcast_in_dim_p.set(batch=_broadcast_in_dim_batch)

# --------------------------------------------------------------------------------------------- reshape


def _reshape_shape(x, new_sizes):
    if not same_size(x.shape, new_sizes):
        raise ShapeError(f"reshape: cannot reshape an array of shape {x.shape} ({x.size} elements) "
                         f"into shape {tuple(new_sizes)}")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p = _linear(Primitive("reshape", _reshape_shape, lambda x, new_sizes: np.reshape(x, new_sizes).copy()),
                    lambda ct, x, new_sizes: [_p(reshape_p, ct, new_sizes=x.aval.shape)])


def _reshape_simplify(eqn, producer):
    """A reshape to the operand's own shape is a no-op; a reshape of a reshape is one reshape."""
    x, new_sizes = eqn.inputs[0], eqn.params["new_sizes"]
    if x.aval.shape == tuple(new_sizes):
        return x
    inner = producer(x)
    if inner is not None and inner.prim is reshape_p:
        return reshape_p, inner.inputs, eqn.params
    return None


reshape_p.set(simplify=_reshape_simplify, rearranges=True)


def _reshape_batch(args, dims, new_sizes):
    x = move_batch_axis(args[0], dims[0], 0, None)
    return _p(reshape_p, x, new_sizes=(aval(x).shape[0],) + tuple(new_sizes)), 0


reshape_p.set(batch=_reshape_batch)

# ------------------------------------------------------------------------------------------- transpose


def _transpose_shape(x, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"transpose: permutation {permutation} is not a permutation of the axes of {x.shape}")
    return ShapedArray([x.shape[p] for p in permutation], x.dtype, x.weak_type)


transpose_p = _linear(
    Primitive("transpose", _transpose_shape, lambda x, permutation: np.transpose(x, permutation).copy()),
    lambda ct, x, permutation: [_p(transpose_p, ct, permutation=tuple(np.argsort(permutation).tolist()))])


def _transpose_simplify(eqn, producer):
    """The identity permutation is a no-op; a transpose of a transpose is one (composed) transpose."""
    x, perm = eqn.inputs[0], tuple(eqn.params["permutation"])
    inner = producer(x)
    composed = inner is not None and inner.prim is transpose_p
    if composed:
        x, perm = inner.inputs[0], tuple(inner.params["permutation"][p] for p in perm)
    if perm == tuple(range(len(perm))):
        return x
    return (transpose_p, [x], {"permutation": perm}) if composed else None


transpose_p.set(simplify=_transpose_simplify, rearranges=True)
transpose_p.set(batch=lambda args, dims, permutation: (_p(transpose_p, args[0], permutation=(dims[0],) + tuple(
    batched_axis(p, dims[0]) for p in permutation)), 0))

# ------------------------------------------------------------------------------------ squeeze / expand


def _squeeze_shape(x, dimensions):
    if any(d >= x.ndim or x.shape[d] != 1 for d in dimensions):
        raise ShapeError(f"squeeze: dimensions {dimensions} of shape {x.shape} are not all of size 1")
    return ShapedArray([s for i, s in enumerate(x.shape) if i not in dimensions], x.dtype, x.weak_type)


def _expand_dims_shape(x, dimensions):
    ndim = x.ndim + len(dimensions)
    if any(d >= ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise ShapeError(f"expand_dims: dimensions {dimensions} out of range for a result of rank {ndim}")
    sizes = iter(x.shape)
    return ShapedArray([1 if d in dimensions else next(sizes) for d in range(ndim)], x.dtype, x.weak_type)


squeeze_p = _linear(Primitive("squeeze", _squeeze_shape, lambda x, dimensions: np.squeeze(x, dimensions).copy()),
                    lambda ct, x, dimensions: [_p(expand_dims_p, ct, dimensions=dimensions)])
expand_dims_p = _linear(
    Primitive("expand_dims", _expand_dims_shape, lambda x, dimensions: np.expand_dims(x, dimensions).copy()),
    lambda ct, x, dimensions: [_p(squeeze_p, ct, dimensions=dimensions)])
squeeze_p.set(rearranges=True)
expand_dims_p.set(rearranges=True)
squeeze_p.set(batch=lambda args, dims, dimensions: (
    _p(squeeze_p, args[0], dimensions=tuple(batched_axis(a, dims[0]) for a in dimensions)),
    dims[0] - sum(a < dims[0] for a in dimensions)))
expand_dims_p.set(batch=lambda args, dims, dimensions: (
    _p(expand_dims_p, move_batch_axis(args[0], dims[0], 0, None), dimensions=tuple(a + 1 for a in dimensions)), 0))

# ------------------------------------------------------------------------------------------------- rev


def _rev_shape(x, dimensions):
    if any(d >= x.ndim for d in dimensions):
        raise ShapeError(f"rev: dimensions {dimensions} out of range for shape {x.shape}")
    return x


rev_p = _linear(Primitive("rev", _rev_shape, lambda x, dimensions: np.flip(x, dimensions).copy()),
                lambda ct, x, dimensions: [_p(rev_p, ct, dimensions=dimensions)])
rev_p.set(rearranges=True, involution=True)
rev_p.set(batch=lambda args, dims, dimensions: (
    _p(rev_p, args[0], dimensions=tuple(batched_axis(a, dims[0]) for a in dimensions)), dims[0]))

# ----------------------------------------------------------------------------------------------- slice


def _slice_shape(x, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    if not (len(start_indices) == len(limit_indices) == len(strides) == x.ndim) or any(
            not 0 <= s <= lim <= d or st < 1
            for s, lim, d, st in zip(start_indices, limit_indices, x.shape, strides)):
        raise ShapeError(f"slice: start {start_indices}, limit {limit_indices}, strides {strides} do not fit "
                         f"operand shape {x.shape}")
    return ShapedArray([-(-(lim - s) // st) for s, lim, st in zip(start_indices, limit_indices, strides)],
                       x.dtype, x.weak_type)


def _slice_impl(x, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * len(start_indices)
    return np.asarray(x)[tuple(slice(s, lim, st) for s, lim, st in zip(start_indices, limit_indices, strides))].copy()


def _slice_transpose(ct, x, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * len(start_indices)
    out_shape = aval(ct).shape
    config = tuple((s, d - (s + (n - 1) * st + 1) if n else d - s, st - 1)
                   for s, d, n, st in zip(start_indices, x.aval.shape, out_shape, strides))
    if any(n == 0 for n in out_shape):
        return [zeros(x.aval)]
    return [_p(pad_p, ct, scalar(0, ct), padding_config=config)]


slice_p = _linear(Primitive("slice", _slice_shape, _slice_impl), _slice_transpose)
slice_p.set(rearranges=True)


def _slice_batch(args, dims, start_indices, limit_indices, strides=None):
    (x,), (d,) = args, dims
    return _p(slice_p, x, start_indices=start_indices[:d] + (0,) + start_indices[d:],
              limit_indices=limit_indices[:d] + (aval(x).shape[d],) + limit_indices[d:],
              strides=None if strides is None else strides[:d] + (1,) + strides[d:]), d


slice_p.set(batch=_slice_batch)

# ------------------------------------------------------------------------------------------------- pad


def _pad_shape(x, padding_value, padding_config):
    if padding_value.ndim or padding_value.dtype != x.dtype or len(padding_config) != x.ndim:
        raise ShapeError(f"pad: needs a scalar padding value of dtype {x.dtype} and one (low, high, interior) "
                         f"triple per axis of {x.shape}; got {padding_value.str_short()} and {padding_config}")
    shape = [lo + hi + d + max(d - 1, 0) * interior for d, (lo, hi, interior) in zip(x.shape, padding_config)]
    if any(s < 0 for s in shape) or any(interior < 0 for _, _, interior in padding_config):
        raise ShapeError(f"pad: padding {padding_config} gives a negative size for shape {x.shape}")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _pad_impl(x, padding_value, padding_config):
    x = np.asarray(x)
    grown = [max(d + max(d - 1, 0) * i, 0) for d, (_, _, i) in zip(x.shape, padding_config)]
    interior = np.full(grown, padding_value, dtype=x.dtype)
    interior[tuple(slice(None, None, i + 1) for _, _, i in padding_config)] = x
    lows = [max(lo, 0) for lo, _, _ in padding_config]
    highs = [max(hi, 0) for _, hi, _ in padding_config]
    out = np.pad(interior, list(zip(lows, highs)), constant_values=padding_value) if x.ndim else interior
    crop = tuple(slice(max(-lo, 0), out.shape[k] - max(-hi, 0))
                 for k, (lo, hi, _) in enumerate(padding_config))
    return out[crop].copy()


def _pad_transpose(ct, x, padding_value, padding_config):
    from .reductions import reduce_sum_p
    unpadded = _p(pad_p, ct, scalar(0, ct), padding_config=tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    shape = aval(unpadded).shape
    t_x = _p(slice_p, unpadded, start_indices=(0,) * len(shape), limit_indices=shape,
             strides=tuple(i + 1 for _, _, i in padding_config))
    cts = [t_x if isinstance(x, UndefinedPrimal) else None, None]
    if isinstance(padding_value, UndefinedPrimal):
        everything = tuple(range(len(shape)))
        cts[1] = _p(sub_p, _p(reduce_sum_p, ct, axes=everything), _p(reduce_sum_p, t_x, axes=everything))
    return cts


pad_p = _linear(Primitive("pad", _pad_shape, _pad_impl), _pad_transpose)


def _pad_batch(args, dims, padding_config):
    """A batched padding value: pad with zero, then select the value where a padded mask says so."""
    (x, value), (d, value_dim) = args, dims
    if value_dim is None:
        return _p(pad_p, x, value, padding_config=padding_config[:d] + ((0, 0, 0),) + padding_config[d:]), d
    size = aval(value).shape[value_dim]
    x = move_batch_axis(x, d, 0, size)
    config = ((0, 0, 0),) + tuple(padding_config)
    padded = _p(pad_p, x, scalar(0, x), padding_config=config)
    mask = _p(pad_p, full(aval(x).update(dtype=np.bool_), False), np.True_, padding_config=config)
    value = _p(broadcast_in_dim_p, value, shape=aval(padded).shape, broadcast_dimensions=(0,))
    return _p(select_n_p, mask, padded, value), 0


pad_p.set(batch=_pad_batch)

# ----------------------------------------------------------------------------------------- concatenate


def _concatenate_shape(*xs, dimension):
    first = xs[0]
    for x in xs:
        if x.dtype != first.dtype or x.ndim != first.ndim or any(
                a != b for k, (a, b) in enumerate(zip(x.shape, first.shape)) if k != dimension):
            raise ShapeError(f"concatenate: operands {', '.join(str(y.shape) for y in xs)} ({first.dtype}) must "
                             f"agree in dtype and in every axis but {dimension}")
    if not 0 <= dimension < first.ndim:
        raise ShapeError(f"concatenate: dimension {dimension} is out of range for rank {first.ndim}")
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


def _concatenate_transpose(ct, *xs, dimension):
    shape, start, cts = aval(ct).shape, 0, []
    for x in xs:
        size = aval(x).shape[dimension]
        if isinstance(x, UndefinedPrimal):
            lo = tuple(start if k == dimension else 0 for k in range(len(shape)))
            hi = tuple(start + size if k == dimension else d for k, d in enumerate(shape))
            cts.append(_p(slice_p, ct, start_indices=lo, limit_indices=hi, strides=None))
        else:
            cts.append(None)
        start += size
    return cts


concatenate_p = _linear(
    Primitive("concatenate", _concatenate_shape, lambda *xs, dimension: np.concatenate(xs, axis=dimension)),
    _concatenate_transpose)


def _concatenate_batch(args, dims, dimension):
    size = next(aval(x).shape[d] for x, d in zip(args, dims) if d is not None)
    return _p(concatenate_p, *[move_batch_axis(x, d, 0, size) for x, d in zip(args, dims)],
              dimension=dimension + 1), 0


concatenate_p.set(batch=_concatenate_batch)

# ------------------------------------------------------------------------------------------------ iota


def _iota_shape(dtype, shape, dimension):
    if not 0 <= dimension < len(shape):
        raise ShapeError(f"iota: dimension {dimension} is out of range for shape {shape}")
    return ShapedArray(shape, dtype)


def _iota_impl(dtype, shape, dimension):
    index = np.arange(shape[dimension], dtype=dtype)
    return np.broadcast_to(index.reshape([-1 if k == dimension else 1 for k in range(len(shape))]), shape).copy()


iota_p = Primitive("iota", _iota_shape, _iota_impl)
iota_p.set(jvp=lambda primals, tangents, **params: (_p(iota_p, **params), Zero(_iota_shape(**params))),
           batch=lambda args, dims, **params: (_p(iota_p, **params), None))


# ------------------------------------------------------------------------------------------ dim_size
# The size of a symbolic dimension as an int64 scalar, read at run time (tnp.mean over a symbolic axis
# divides by it). No operand: it depends on no value, so nothing is kept alive for it.

dim_size_p = Primitive("dim_size", lambda dim: ShapedArray((), np.int64),
                       lambda dim: np.asarray(dim, np.int64))
dim_size_p.set(jvp=lambda primals, tangents, dim: (_p(dim_size_p, dim=dim), Zero(ShapedArray((), np.int64))),
               batch=lambda args, dims, dim: (_p(dim_size_p, dim=dim), None))


# ------------------------------------------------------------------------------------------- lowering
# Index maps (tracejit.backend.rules.IndexMap): the operand index an output index reads, so that these
# ops fuse into the loops around them. Indices are i64 SSA names or Python ints.

def _lower_broadcast_in_dim(b, idx, read, shape, broadcast_dimensions):
    x_shape = b.in_avals[0].shape
    return read(0, [0 if x_shape[i] == 1 else idx[d] for i, d in enumerate(broadcast_dimensions)])


def _lower_transpose(b, idx, read, permutation):
    src = [0] * len(permutation)
    for k, p in enumerate(permutation):
        src[p] = idx[k]
    return read(0, src)


def _lower_squeeze(b, idx, read, dimensions):
    rest = iter(idx)
    return read(0, [0 if d in dimensions else next(rest) for d in range(b.in_avals[0].ndim)])


def _lower_slice(b, idx, read, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * len(idx)
    return read(0, [b.iop("add", s, b.iop("mul", i, st)) for i, s, st in zip(idx, start_indices, strides)])


def _lower_pad(b, idx, read, padding_config):
    shape, dtype = b.in_avals[0].shape, b.in_avals[0].dtype
    if 0 in shape:
        return read(1, [])
    conds, src = [], []
    for o, d, (lo, _, interior) in zip(idx, shape, padding_config):
        t, step = b.iop("sub", o, lo), interior + 1
        conds.append(b.in_range(t, 0, (d - 1) * step + 1))
        if step > 1:
            r = b.iop("srem", t, step)
            conds.append(r == 0 if isinstance(r, int) else b(f"icmp eq i64 {r}, 0"))
            t = b.iop("sdiv", t, step)
        src.append(b.clamp_index(t, 0, d - 1))
    ok = b.all_of(conds)
    if ok is True or ok is False:
        return read(0, src) if ok else read(1, [])
    value, pad = read(0, src), read(1, [])
    return b.select(ok, value, pad, dtype)


def _lower_concatenate(b, idx, read, dimension):
    out, start, i = None, 0, idx[dimension]
    for k, a in enumerate(list(b.in_avals)):
        n = a.shape[dimension]
        if n == 0:
            continue
        if isinstance(i, int) and not start <= i < start + n:
            start += n
            continue
        j = list(idx)
        j[dimension] = b.clamp_index(b.iop("sub", i, start), 0, n - 1)
        value = read(k, j)
        out = value if out is None or isinstance(i, int) else b.select(
            b(f"icmp sge i64 {i}, {start}"), value, out, a.dtype)
        start += n
    return b.const(0) if out is None else out     # every operand empty: so is the result, never read


broadcast_in_dim_p.set(lower=IndexMap(_lower_broadcast_in_dim))
reshape_p.set(lower=IndexMap(lambda b, idx, read, new_sizes: read(0, b.reindex(idx, new_sizes,
                                                                               b.in_avals[0].shape))))
transpose_p.set(lower=IndexMap(_lower_transpose))
squeeze_p.set(lower=IndexMap(_lower_squeeze))
expand_dims_p.set(lower=IndexMap(lambda b, idx, read, dimensions: read(
    0, [i for k, i in enumerate(idx) if k not in dimensions])))
rev_p.set(lower=IndexMap(lambda b, idx, read, dimensions: read(0, [
    b.iop("sub", n - 1, i) if k in dimensions else i for k, (i, n) in enumerate(zip(idx, b.in_avals[0].shape))])))
slice_p.set(lower=IndexMap(_lower_slice))
pad_p.set(lower=IndexMap(_lower_pad))
concatenate_p.set(lower=IndexMap(_lower_concatenate))
dim_size_p.set(lower=IndexMap(lambda b, idx, read, dim: str(b.size(dim))))
iota_p.set(lower=IndexMap(lambda b, idx, read, dtype, shape, dimension: b.convert(
    idx[dimension], np.int64, dtype)))
