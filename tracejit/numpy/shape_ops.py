"""Shape manipulation, creation and reductions in NumPy's spelling (which shadows builtins: any, sum...)."""
import builtins
import itertools

import numpy as np

from ..core.avals import (
    DEFAULT_FLOAT,
    DEFAULT_INT,
    Dim,
    axis_tuple,
    canonical_dtype,
    index_arg,
    normalize_axes,
    normalize_axis,
    reshape_sizes,
    shape_arg,
)
from ..core.errors import ShapeError
from ..core.trace import Tracer, bind
from ..primitives import reductions as rd
from ..primitives import shapes as sh
from ._base import asarray, astype, aval, broadcast_to_shape, full, int_array, normalize_shape, promote
from .ufuncs import (
    add,
    divide,
    equal,
    floor,
    greater_equal,
    multiply,
    not_equal,
    subtract,
    where_,
)

# ------------------------------------------------------------------------------------------- creation


def zeros(shape, dtype=None):
    return full(shape, 0, dtype or DEFAULT_FLOAT)


def ones(shape, dtype=None):
    return full(shape, 1, dtype or DEFAULT_FLOAT)


def zeros_like(a, dtype=None):
    return full(aval(asarray(a)).shape, 0, dtype or aval(asarray(a)).dtype)


def ones_like(a, dtype=None):
    return full(aval(asarray(a)).shape, 1, dtype or aval(asarray(a)).dtype)


def full_like(a, fill_value, dtype=None):
    return full(aval(asarray(a)).shape, fill_value, dtype or aval(asarray(a)).dtype)


def _iota(dtype, shape, dimension):
    return bind(sh.iota_p, dtype=canonical_dtype(dtype), shape=tuple(shape), dimension=dimension)


def arange(start, stop=None, step=1, dtype=None):
    if stop is None:
        start, stop = 0, start
    start, stop, step = (s.item() if isinstance(s, np.generic) else s for s in (start, stop, step))
    if builtins.any(isinstance(s, Tracer) for s in (start, stop, step)):
        raise TypeError("arange: start, stop and step must be concrete; the length of the result must be "
                        "known when tracing (use static_argnums for them)")
    if builtins.any(np.ndim(s) for s in (start, stop, step)):
        raise ValueError(f"arange: start, stop and step must be scalars, got {start!r}, {stop!r}, {step!r}")
    length = len(range(int(np.ceil((stop - start) / step)))) if step else 0
    dtype = canonical_dtype(dtype or np.arange(start, stop, step).dtype)
    if dtype == np.bool_:
        np.arange(start, stop, step, dtype)     # NumPy's TypeError for more than 2 elements (False, True)
    index = _iota(dtype, (length,), 0) if length else np.zeros(0, dtype)
    if start == 0 and step == 1:
        return index
    return astype(add(multiply(index, step), start), dtype)


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    """NumPy's formula (start + i * step in float64, the endpoint exact) as operations, so that a result
    indexed by a traced value inside a trace is a tracer too."""
    num = index_arg(num, "linspace: num")
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    start, stop, _ = promote(start, stop, float(num), to_float="float64")
    dtype = canonical_dtype(dtype or aval(start).dtype)
    index = _iota(aval(start).dtype, (num,), 0) if num else np.zeros(0, aval(start).dtype)
    out = add(multiply(index, divide(subtract(stop, start), builtins.max(num - 1 if endpoint else num, 1))), start)
    if endpoint and num > 1:
        out = where_(equal(index, num - 1), stop, out)
    return astype(floor(out) if dtype.kind in "iu" else out, dtype)     # NumPy 2 floors for integers


def eye(N, M=None, k=0, dtype=None):
    N, M = (index_arg(n, f"eye: {name}", bools=False) for n, name in ((N, "N"), (N if M is None else M, "M")))
    rows, cols = _iota(DEFAULT_INT, (N, M), 0), _iota(DEFAULT_INT, (N, M), 1)
    return astype(equal(add(rows, k), cols), dtype or DEFAULT_FLOAT)


def _triangle(m, k, lower):
    m = asarray(m)
    shape = aval(m).shape
    if len(shape) < 2:
        raise ShapeError(f"{'tril' if lower else 'triu'}: needs an array of rank 2 or more, got shape {shape}")
    rows = _iota(DEFAULT_INT, shape[-2:], 0)
    cols = _iota(DEFAULT_INT, shape[-2:], 1)
    keep = greater_equal(add(rows, k), cols) if lower else greater_equal(cols, add(rows, k))
    return where_(keep, m, zeros((), aval(m).dtype))


def tril(m, k=0):
    return _triangle(m, k, lower=True)


def triu(m, k=0):
    return _triangle(m, k, lower=False)

# -------------------------------------------------------------------------------------------- shapes


def reshape(a, newshape, order="C"):
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    a = asarray(a)
    shape = aval(a).shape
    newshape = reshape_sizes(shape, shape_arg(newshape, "reshape: shape"))
    if newshape == shape:
        return a
    return bind(sh.reshape_p, a, new_sizes=newshape)


def ravel(a):
    return reshape(a, (-1,))


def transpose(a, axes=None):
    a = asarray(a)
    ndim = aval(a).ndim
    perm = tuple(range(ndim))[::-1] if axes is None else tuple(normalize_axis(i, ndim, bools=False) for i in axes)
    if sorted(perm) != list(range(ndim)):
        raise ShapeError(f"transpose: axes {axes} are not a permutation of the {ndim} axes of {aval(a).shape}")
    return a if perm == tuple(range(ndim)) else bind(sh.transpose_p, a, permutation=perm)


def swapaxes(a, axis1, axis2):
    a = asarray(a)
    perm = list(range(aval(a).ndim))
    i, j = normalize_axis(axis1, len(perm)), normalize_axis(axis2, len(perm))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    a = asarray(a)
    ndim = aval(a).ndim
    src, dst = ([normalize_axis(i, ndim, "moveaxis") for i in axis_tuple(x, "moveaxis", iterable=True)]
                for x in (source, destination))
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"moveaxis: source {source!r} and destination {destination!r} need as many distinct axes")
    order = [i for i in range(ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def expand_dims(a, axis):
    a = asarray(a)
    axes = axis_tuple(axis if isinstance(axis, (tuple, list)) else (axis,), "expand_dims", iterable=True)
    return bind(sh.expand_dims_p, a, dimensions=normalize_axes(axes, aval(a).ndim + len(axes), "expand_dims"))


def squeeze(a, axis=None):
    a = asarray(a)
    shape = aval(a).shape
    if axis is None:
        for d in shape:
            if isinstance(d, Dim):
                d.need("squeeze without an axis (is it 1?)")
    axes = tuple(i for i, d in enumerate(shape) if d == 1) if axis is None else normalize_axes(axis, len(shape))
    if builtins.any(shape[i] != 1 for i in axes):
        raise ShapeError(f"squeeze: cannot squeeze axes {axes} of shape {shape}: they are not of size 1")
    return bind(sh.squeeze_p, a, dimensions=axes) if axes else a


def broadcast_to(a, shape):
    return broadcast_to_shape(asarray(a), normalize_shape(shape, "broadcast_to: shape"))


def concatenate(arrays, axis=0):
    arrays = promote(*arrays)
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    axis = index_arg(axis, "concatenate: axis", bools=False)
    arrays = [asarray(np.asarray(a)) if not isinstance(a, Tracer) else a for a in arrays]
    ndim = aval(arrays[0]).ndim
    if ndim == 0:
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
    if builtins.any(aval(a).ndim != ndim for a in arrays):
        shapes = ", ".join(str(aval(a).shape) for a in arrays)
        raise ShapeError(f"concatenate: all arrays must have the same rank, got shapes {shapes}")
    axis = normalize_axis(axis, ndim, "concatenate", bools=False)
    if len(arrays) == 1:
        return arrays[0]
    return bind(sh.concatenate_p, *arrays, dimension=axis)


def _slice_axis(a, axis, start, stop):
    """a[..., start:stop, ...] along one axis, with concrete bounds."""
    shape = aval(a).shape
    starts, limits = [0] * len(shape), list(shape)
    starts[axis], limits[axis] = start, stop
    return bind(sh.slice_p, a, start_indices=tuple(starts), limit_indices=tuple(limits))


def flip(m, axis=None):
    m = asarray(m)
    axes = tuple(range(aval(m).ndim)) if axis is None else normalize_axes(axis, aval(m).ndim, "flip", iterable=True)
    return bind(sh.rev_p, m, dimensions=axes) if axes else m


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def roll(a, shift, axis=None):
    """Two slices concatenated per rolled axis (the shift must be concrete, as the slices' sizes are)."""
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), aval(a).shape)
    axes = axis_tuple(axis, "roll", iterable=True)      # NumPy's shifts are cast to integers (1.5 rolls by 1)
    shifts, axes = np.broadcast_arrays(np.asarray(shift).astype(np.int64), np.asarray(axes, np.int64))
    for s, ax in zip(shifts.ravel().tolist(), axes.ravel().tolist()):
        ax = normalize_axis(ax, aval(a).ndim, "roll")
        n = aval(a).shape[ax]
        if isinstance(n, Dim):
            n.need("roll")
        if n and s % n:
            a = concatenate([_slice_axis(a, ax, n - s % n, n), _slice_axis(a, ax, 0, n - s % n)], ax)
    return a


def diff(a, n=1, axis=-1):
    """NumPy's n-th discrete difference (`!=` for bool, as in NumPy)."""
    a = asarray(a)
    if index_arg(n, "diff: order n") < 0 or aval(a).ndim == 0:
        raise ValueError(f"diff: order n must be non-negative and a of rank 1 or more, got n={n}, {aval(a).shape}")
    axis = normalize_axis(axis, aval(a).ndim, "diff")
    for _ in range(n):
        size = aval(a).shape[axis]
        if isinstance(size, Dim):
            size.need("diff")
        hi, lo = _slice_axis(a, axis, builtins.min(1, size), size), _slice_axis(a, axis, 0, builtins.max(size - 1, 0))
        a = not_equal(hi, lo) if aval(a).dtype == np.bool_ else subtract(hi, lo)
    return a


def tile(A, reps):
    """A broadcast along new axes interleaved with its own, then merged: one fused loop."""
    A = asarray(A)
    reps = tuple(int_array(reps, "tile: reps").reshape(-1).tolist())
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    shape = aval(A).shape
    ndim = builtins.max(len(shape), len(reps))
    shape, reps = (1,) * (ndim - len(shape)) + tuple(shape), (1,) * (ndim - len(reps)) + reps
    interleaved = tuple(x for r, d in zip(reps, shape) for x in (r, d))
    A = bind(sh.broadcast_in_dim_p, reshape(A, shape), shape=interleaved,
             broadcast_dimensions=tuple(range(1, 2 * ndim, 2)))
    return reshape(A, tuple(r * d for r, d in zip(reps, shape)))


def pad(array, pad_width, mode="constant", constant_values=0):
    """Constant padding (the mode NumPy defaults to): one pad equation."""
    if mode != "constant":
        raise NotImplementedError(f"pad: mode {mode!r} is not supported; only 'constant' is")
    x = asarray(array)
    ndim = aval(x).ndim
    widths = int_array(pad_width, "pad: pad_width", (ndim, 2), bools=False)
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width must be non-negative, got {pad_width!r}")
    value = np.asarray(constant_values)
    if value.ndim:
        raise NotImplementedError("pad: constant_values must be one scalar")
    value = value.astype(aval(x).dtype) if not isinstance(constant_values, Tracer) else astype(constant_values,
                                                                                              aval(x).dtype)
    return bind(sh.pad_p, x, value, padding_config=tuple((int(lo), int(hi), 0) for lo, hi in widths))


def _as_array(a):
    """A value as NumPy's array functions take it: a Python scalar becomes a strongly typed array
    (vstack([x_f32, 1.5]) is float64 in NumPy, unlike x_f32 + 1.5)."""
    return a if isinstance(a, Tracer) else asarray(np.asarray(a))


def atleast_1d(*arys):
    out = [reshape(a, (1,)) if aval(a).ndim == 0 else a for a in map(_as_array, arys)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = [reshape(a, (1,) * (2 - aval(a).ndim) + aval(a).shape) if aval(a).ndim < 2 else a
           for a in map(_as_array, arys)]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    """NumPy's: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    def lift(a):
        shape = aval(a).shape
        return reshape(a, {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}.get(len(shape), shape))
    out = [lift(a) for a in map(_as_array, arys)]
    return out[0] if len(out) == 1 else out


def hstack(tup):
    arrays = [atleast_1d(a) for a in tup]
    return concatenate(arrays, 0 if aval(arrays[0]).ndim == 1 else 1)


def vstack(tup):
    return concatenate([atleast_2d(a) for a in tup], 0)


def dstack(tup):
    return concatenate([atleast_3d(a) for a in tup], 2)


def column_stack(tup):
    return concatenate([reshape(a, (-1, 1)) if aval(a).ndim < 2 else a for a in map(_as_array, tup)], 1)


def array_split(ary, indices_or_sections, axis=0):
    """Slices along axis: at the given indices, or into n parts whose first (size % n) are one longer."""
    ary = asarray(ary)
    axis = normalize_axis(axis, aval(ary).ndim, "array_split")
    size = aval(ary).shape[axis]
    if isinstance(size, Dim):
        size.need("array_split")
    if np.ndim(indices_or_sections) == 0:
        n = int(indices_or_sections)
        if n <= 0:
            raise ValueError(f"array_split: number of sections must be larger than 0, got {n}")
        lengths = [size // n + 1] * (size % n) + [size // n] * (n - size % n)
        bounds = np.cumsum([0, *lengths]).tolist()
    else:
        bounds = [0, *(int(i) for i in indices_or_sections), size]
    bounds = [builtins.min(builtins.max(b if b >= 0 else b + size, 0), size) for b in bounds]
    return [_slice_axis(ary, axis, lo, builtins.max(lo, hi)) for lo, hi in itertools.pairwise(bounds)]


def split(ary, indices_or_sections, axis=0):
    if np.ndim(indices_or_sections) == 0:
        size = aval(asarray(ary)).shape[normalize_axis(axis, aval(asarray(ary)).ndim, "split")]
        if not isinstance(size, Dim) and int(indices_or_sections) > 0 and size % int(indices_or_sections):
            raise ValueError(f"split: an axis of size {size} does not split into {indices_or_sections} equal "
                             "parts (array_split allows unequal ones)")
    return array_split(ary, indices_or_sections, axis)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays, each a broadcast of one input ('xy': the first two axes swapped, as NumPy)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [ravel(x) for x in map(asarray, xi)]
    axes = list(range(len(xs)))
    if indexing == "xy" and len(xs) > 1:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(xs)
    for x, ax in zip(xs, axes):
        shape[ax] = aval(x).shape[0]
    if sparse:
        return [reshape(x, tuple(n if k == ax else 1 for k, n in enumerate(shape))) for x, ax in zip(xs, axes)]
    return [bind(sh.broadcast_in_dim_p, x, shape=tuple(shape), broadcast_dimensions=(ax,)) for x, ax in zip(xs, axes)]


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def empty(shape, dtype=None):
    """Zeros: a traced program has no uninitialised memory to return."""
    return zeros(shape, dtype)


def empty_like(prototype, dtype=None):
    return zeros_like(prototype, dtype)


# ------------------------------------------------------------------------------------------ reductions


def _reduce(prim, a, axis, keepdims, dtype=None):
    a = asarray(a)
    if not isinstance(a, (Tracer, np.ndarray, np.generic)):     # a Python scalar
        a = np.asarray(a)
    shape = aval(a).shape
    axes = normalize_axes(axis, len(shape))
    if dtype is not None:
        a = astype(a, dtype)
    if aval(a).dtype == np.bool_:      # NumPy's sum and prod of dtype bool are a logical or, a logical and
        prim = {rd.reduce_sum_p: rd.reduce_max_p, rd.reduce_prod_p: rd.reduce_min_p}.get(prim, prim)
    out = bind(prim, a, axes=axes) if axes else a
    if keepdims:
        out = reshape(out, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    return out


def _accumulator_dtype(a, dtype):
    """NumPy sums bools and signed integers in the platform integer (int64), unsigned ones in uint64."""
    if dtype is not None:
        return canonical_dtype(dtype)
    kind = aval(asarray(a)).dtype.kind
    return DEFAULT_INT if kind in "bi" else np.dtype(np.uint64) if kind == "u" else None


def sum(a, axis=None, dtype=None, keepdims=False):
    return _reduce(rd.reduce_sum_p, a, axis, keepdims, _accumulator_dtype(a, dtype))


def prod(a, axis=None, dtype=None, keepdims=False):
    return _reduce(rd.reduce_prod_p, a, axis, keepdims, _accumulator_dtype(a, dtype))


def _extremum(prim, name, a, axis, keepdims):
    a = asarray(a)
    shape = aval(a).shape if isinstance(a, Tracer) else np.shape(a)
    axes = normalize_axes(axis, len(shape))
    if builtins.any(shape[i] == 0 for i in axes):
        raise ShapeError(f"{name}: zero-size reduction over axes {axes} of shape {shape} has no identity")
    return _reduce(prim, a, axis, keepdims)


def max(a, axis=None, keepdims=False):
    return _extremum(rd.reduce_max_p, "max", a, axis, keepdims)


def min(a, axis=None, keepdims=False):
    return _extremum(rd.reduce_min_p, "min", a, axis, keepdims)


amax, amin = max, min


def any(a, axis=None, keepdims=False):
    return _reduce(rd.reduce_max_p, asarray(a, np.bool_), axis, keepdims)


def all(a, axis=None, keepdims=False):
    return _reduce(rd.reduce_min_p, asarray(a, np.bool_), axis, keepdims)


def _arg(prim, a, axis, keepdims):
    a = asarray(a)
    ndim = aval(a).ndim
    if axis is None:
        out = bind(prim, ravel(a), axes=(0,), index_dtype=DEFAULT_INT)
        return reshape(out, (1,) * ndim) if keepdims else out
    axis = normalize_axis(axis, ndim, prim.name, bools=False)
    out = bind(prim, a, axes=(axis,), index_dtype=DEFAULT_INT)
    return expand_dims(out, axis) if keepdims else out


def argmax(a, axis=None, keepdims=False):
    return _arg(rd.argmax_p, a, axis, keepdims)


def argmin(a, axis=None, keepdims=False):
    return _arg(rd.argmin_p, a, axis, keepdims)


def cumsum(a, axis=None, dtype=None):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    acc = _accumulator_dtype(a, dtype)
    if acc is not None:
        a = astype(a, acc)
    if aval(a).dtype == np.bool_:      # NumPy's cumsum of dtype bool is a running or: a running count, nonzero
        return astype(cumsum(astype(a, DEFAULT_INT), axis), np.bool_)
    return bind(rd.cumsum_p, a, axis=normalize_axis(axis, aval(a).ndim, "cumsum", bools=False), reverse=False)

