"""Shape manipulation in NumPy's spelling (creation is in creation.py, reductions in reductions.py)."""
import builtins
import itertools

import numpy as np

from ..core.avals import (
    DEFAULT_INT,
    Dim,
    axis_tuple,
    index_arg,
    normalize_axes,
    normalize_axis,
    reshape_sizes,
    shape_arg,
)
from ..core.errors import ShapeError
from ..core.trace import Tracer, bind
from ..primitives import indexing as ix
from ..primitives import shapes as sh
from . import _base
from ._base import asarray, astype, aval, broadcast_to_shape, int_array, normalize_shape, promote, reject_out
from .ufuncs import not_equal, remainder, subtract

# -------------------------------------------------------------------------------------------- shapes


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """NumPy's reshape (`newshape` is its older name for `shape`); copy changes nothing: results are values.
    order='F' reads and writes column-major: a C reshape of the reversed axes, between two transposes."""
    if order not in ("C", "F", "A"):
        raise ValueError(f"reshape: order must be 'C', 'F' or 'A', got {order!r}")
    if (shape is None) == (newshape is None):
        raise TypeError("reshape: give the new shape once, as shape (or newshape, its older name)")
    newshape = shape_arg(newshape if shape is None else shape, "reshape: shape")
    a = asarray(a)
    shape = aval(a).shape
    newshape = reshape_sizes(shape, newshape)
    if newshape == shape:
        return a
    if order == "F":
        return transpose(bind(sh.reshape_p, transpose(a), new_sizes=newshape[::-1]))
    return bind(sh.reshape_p, a, new_sizes=newshape)


def ravel(a, order="C"):
    """Row-major, or column-major with order='F' ('K' and 'A' are row-major: tracejit's arrays are C-ordered)."""
    if order not in ("C", "F", "K", "A"):
        raise ValueError(f"ravel: order must be 'C', 'F', 'K' or 'A', got {order!r}")
    return reshape(a, (-1,), order="F" if order == "F" else "C")


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


def broadcast_to(array, shape, subok=False):
    return broadcast_to_shape(asarray(array), normalize_shape(shape, "broadcast_to: shape"))


def _joined(fn, arrays, out, dtype, casting):
    """The arrays to join, converted to dtype if given (as NumPy's casting rule allows)."""
    reject_out(fn, out)
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(f"{fn}: casting must be one of 'no', 'equiv', 'safe', 'same_kind' or 'unsafe', got {casting!r}")
    if dtype is None:
        return promote(*arrays)
    arrays = [asarray(a) for a in arrays]
    for a in arrays:
        if not np.can_cast(aval(a).dtype, dtype, casting):
            raise TypeError(f"{fn}: cannot cast array data from {aval(a).dtype} to {np.dtype(dtype)} according to "
                            f"the rule {casting!r}")
    return [astype(a, dtype) for a in arrays]


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = _joined("concatenate", arrays, out, dtype, casting)
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


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """np.stack with NumPy's keywords; the stacking itself is _base.stack (which array() uses too)."""
    return _base.stack(_joined("stack", arrays, out, dtype, casting), axis)


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
    """Two slices concatenated per rolled axis; a traced shift slices the doubled axis at run time instead."""
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), aval(a).shape)
    axes = axis_tuple(axis, "roll", iterable=True)      # NumPy's shifts are cast to integers (1.5 rolls by 1)
    if isinstance(shift, Tracer):
        return _roll_traced(a, shift, axes)
    shifts, axes = np.broadcast_arrays(np.asarray(shift).astype(np.int64), np.asarray(axes, np.int64))
    for s, ax in zip(shifts.ravel().tolist(), axes.ravel().tolist()):
        ax = normalize_axis(ax, aval(a).ndim, "roll")
        n = aval(a).shape[ax]
        if isinstance(n, Dim):
            n.need("roll")
        if n and s % n:
            a = concatenate([_slice_axis(a, ax, n - s % n, n), _slice_axis(a, ax, 0, n - s % n)], ax)
    return a


def _roll_traced(a, shift, axes):
    """JAX's roll by a traced shift: per axis, the axis doubled and a dynamic slice of its size starting at
    n - shift % n."""
    shift = astype(shift, DEFAULT_INT)
    count = builtins.max(len(axes), aval(shift).size)
    shifts = broadcast_to_shape(reshape(shift, (-1,)), (count,))
    for i, ax in enumerate(np.broadcast_to(np.asarray(axes, np.int64), (count,)).tolist()):
        ax = normalize_axis(ax, aval(a).ndim, "roll")
        n = aval(a).shape[ax]
        if isinstance(n, Dim):
            n.need("roll")
        if n:
            start = subtract(n, remainder(reshape(_slice_axis(shifts, 0, i, i + 1), ()), n))
            starts = [start if k == ax else np.asarray(0, DEFAULT_INT) for k in range(aval(a).ndim)]
            a = bind(ix.dynamic_slice_p, concatenate([a, a], ax), *starts, slice_sizes=aval(a).shape)
    return a


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """NumPy's n-th discrete difference (`!=` for bool, as in NumPy), of a with prepend and append (broadcast
    along the axis) around it."""
    a = asarray(a)
    if index_arg(n, "diff: order n") < 0 or aval(a).ndim == 0:
        raise ValueError(f"diff: order n must be non-negative and a of rank 1 or more, got n={n}, {aval(a).shape}")
    axis = normalize_axis(axis, aval(a).ndim, "diff")
    if prepend is not None or append is not None:
        a = concatenate([_along(v, a, axis) for v in (prepend, a, append) if v is not None], axis)
    for _ in range(n):
        size = aval(a).shape[axis]
        if isinstance(size, Dim):
            size.need("diff")
        hi, lo = _slice_axis(a, axis, builtins.min(1, size), size), _slice_axis(a, axis, 0, builtins.max(size - 1, 0))
        a = not_equal(hi, lo) if aval(a).dtype == np.bool_ else subtract(hi, lo)
    return a


def _along(v, like, axis):
    """v as a block to join to `like` along axis: a scalar becomes a slice of width 1."""
    v = asarray(v)
    if aval(v).ndim:
        return v
    shape = aval(like).shape
    return broadcast_to_shape(v, shape[:axis] + (1,) + shape[axis + 1:])


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


def hstack(tup, *, dtype=None, casting="same_kind"):
    arrays = [atleast_1d(a) for a in tup]
    return concatenate(arrays, 0 if aval(arrays[0]).ndim == 1 else 1, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    return concatenate([atleast_2d(a) for a in tup], 0, dtype=dtype, casting=casting)


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

