"""NumPy indexing on traced arrays: basic indexing becomes slice/rev/squeeze/dynamic_slice, advanced
(integer-array) indexing becomes one gather (x.at[idx] updates: at_updates.py)."""
import operator

import numpy as np

from ..core.avals import DEFAULT_INT, Dim, broadcast_shapes, dtype_kind, normalize_axis
from ..core.errors import ConcretizationError, ShapeError
from ..core.trace import Tracer, bind
from ..primitives import indexing as ix
from ..primitives import reductions as rd
from ..primitives import scatter as sc
from ..primitives import shapes as sh
from ..primitives import sorting
from ._base import asarray, astype, aval, broadcast_to_shape, promote, reject_out, stop_gradient
from .shape_ops import concatenate, expand_dims, ravel, reshape, transpose
from .ufuncs import (
    absolute,
    add,
    bitwise_and,
    clip,
    divide,
    equal,
    greater,
    greater_equal,
    isfinite,
    isnan,
    less,
    multiply,
    remainder,
    subtract,
    where_,
)


def _is_int_scalar(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _concrete_index(i):
    """Lists (and tuples inside the index tuple, as NumPy and JAX read them) become arrays; integer arrays of
    any width become int64 (their values are all that counts)."""
    i = np.asarray(i) if isinstance(i, (list, tuple)) else i
    return i.astype(DEFAULT_INT) if isinstance(i, np.ndarray) and i.dtype.kind in "iu" else i


def _is_mask(i):
    """A concrete boolean index: a mask over as many axes as it has (a bool scalar: none, it adds one)."""
    return isinstance(i, (bool, np.bool_)) or (isinstance(i, np.ndarray) and i.dtype == np.bool_)


def _expand(idx, ndim):
    """A tuple of per-axis indices: Ellipsis expanded, None turned into inserted axes, masks made integer."""
    idx = idx if isinstance(idx, tuple) else (idx,)
    idx = tuple(_concrete_index(i) for i in idx)
    for i in idx:
        if isinstance(i, Tracer) and i.dtype == np.bool_:
            raise ConcretizationError(
                f"Boolean mask indexing with a traced mask ({i.aval.str_short()}) has a result shape that depends "
                "on the data. Use tnp.where(mask, x, 0) or a concrete (numpy) mask.")
        if not (i is None or i is Ellipsis or isinstance(i, (slice, Tracer, np.ndarray)) or _is_int_scalar(i)
                or isinstance(i, (bool, np.bool_))):
            raise IndexError(f"index {i!r} of type {type(i).__name__}: only integers, slices, None, Ellipsis, "
                             "integer arrays and concrete boolean masks are valid indices")
    used = sum(np.ndim(i) if _is_mask(i) else 1 for i in idx if i is not None and i is not Ellipsis)
    if sum(i is Ellipsis for i in idx) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if used > ndim:
        raise IndexError(f"too many indices for an array of rank {ndim}: {used} were given")
    out = []
    for i in idx:
        if i is Ellipsis:
            out.extend([slice(None)] * (ndim - used))
        elif _is_mask(i):
            out.append(("mask", np.asarray(i)))
        else:
            out.append(i)
    if not any(i is Ellipsis for i in idx):
        out.extend([slice(None)] * (ndim - used))
    return out


def getitem(x, idx, mode="clip"):
    """x[idx] as a function (what a tracer's [] calls): basic and advanced indexing as NumPy's; traced
    indices out of range are clamped (mode='clip'), as in JAX, concrete ones raise IndexError."""
    x = asarray(x)
    if not isinstance(x, Tracer):
        x = np.asarray(x)
    entries = _expand(idx, aval(x).ndim)
    # None: insert a size-1 axis and index it with a full slice
    none_axes = [k for k, e in enumerate(entries) if e is None]
    if none_axes:
        x = bind(sh.expand_dims_p, x, dimensions=tuple(none_axes))
        entries = [slice(None) if e is None else e for e in entries]
    # masks become integer arrays, one per mask axis
    flat = []
    for e in entries:
        if isinstance(e, tuple) and e[0] == "mask":
            mask = e[1]
            _check_mask(mask, aval(x).shape, len(flat))
            flat.extend(np.nonzero(mask) if mask.ndim else [np.zeros(int(mask), DEFAULT_INT)])
            if mask.ndim == 0:
                x = bind(sh.expand_dims_p, x, dimensions=(len(flat) - 1,))
        else:
            flat.append(e)
    arrays = [k for k, e in enumerate(flat) if isinstance(e, np.ndarray) or isinstance(e, Tracer) and e.ndim]
    if arrays or mode == "fill":  # with an index array present, integer scalars index like arrays (NumPy)
        advanced = [k for k, e in enumerate(flat) if not isinstance(e, slice)]
    else:
        advanced = []
    if advanced:
        return _advanced(x, flat, advanced, mode)
    return _basic(x, flat)


def _check_mask(mask, shape, axis):
    """NumPy's IndexError for a boolean mask whose shape differs from the axes it selects (from `axis` on)."""
    for k, (m, d) in enumerate(zip(mask.shape, shape[axis:])):
        if isinstance(d, Dim):
            d.need("a boolean mask")
        if m != d:
            raise IndexError(f"boolean index did not match indexed array along axis {axis + k}; size of axis is "
                             f"{d} but size of corresponding boolean axis is {m}")


def _check_bounds(index, size, axis):
    """NumPy's IndexError for a concrete index out of [-size, size) (traced ones are clamped, as in JAX)."""
    index = np.asarray(index)
    bad = index[(index >= size) | (index < -size)] if not isinstance(size, Dim) else index[:0]
    if bad.size:
        raise IndexError(f"index {bad.flat[0]} is out of bounds for axis {axis} with size {size}")


def _basic(x, entries):
    shape = aval(x).shape
    starts, limits, strides, flips, drop = [], [], [], [], []
    dynamic = {}
    for axis, (e, d) in enumerate(zip(entries, shape)):
        if isinstance(d, Dim) and isinstance(e, slice) and e == slice(None):     # the whole symbolic axis: no size needed
            starts.append(0), limits.append(d), strides.append(1)
        elif isinstance(e, slice):
            if isinstance(d, Dim):
                d.need(f"the slice {e.start}:{e.stop}:{e.step} of an axis")
            start, stop, step = e.indices(d)
            if step > 0:
                n = len(range(start, stop, step))
                starts.append(start), limits.append(start + max(n - 1, 0) * step + (1 if n else 0))
                strides.append(step)
            else:  # negative step: take the mirrored positive slice, then reverse it
                n = len(range(start, stop, step))
                lo = start + (n - 1) * step if n else 0
                starts.append(lo), limits.append(lo + (n - 1) * (-step) + 1 if n else lo), strides.append(-step)
                flips.append(axis)
        elif isinstance(e, Tracer):
            dynamic[axis] = e
            starts.append(0), limits.append(1), strides.append(1), drop.append(axis)
        else:
            i = int(e)
            _check_bounds(i, d, axis)
            i %= d
            starts.append(i), limits.append(i + 1), strides.append(1), drop.append(axis)
    if dynamic:
        x = _dynamic_part(x, dynamic)
    if (starts, limits) != ([0] * len(shape), list(shape)) or any(s != 1 for s in strides):
        limits = [lim if axis not in dynamic else aval(x).shape[axis] for axis, lim in enumerate(limits)]
        x = bind(sh.slice_p, x, start_indices=tuple(starts), limit_indices=tuple(limits),
                 strides=None if all(s == 1 for s in strides) else tuple(strides))
    if flips:
        x = bind(sh.rev_p, x, dimensions=tuple(flips))
    return bind(sh.squeeze_p, x, dimensions=tuple(drop)) if drop else x


def _normalized_index(i, size):
    """Integer index with negative values counted from the end, as an int64 value."""
    i = astype(i, DEFAULT_INT) if isinstance(i, Tracer) else np.asarray(i).astype(DEFAULT_INT)
    if not isinstance(i, Tracer):
        return np.where(i < 0, i + size, i)
    return where_(less(i, 0), add(i, size), i)


def _dynamic_part(x, dynamic):
    """Traced scalar indices: a dynamic_slice of size 1 on those axes (which counts a negative index from
    the end once, then clamps, as in JAX)."""
    shape = aval(x).shape
    for axis, i in dynamic.items():
        if i.ndim or i.dtype.kind not in "iu":
            raise TypeError(f"index for axis {axis} must be an integer scalar, got {i.aval.str_short()}")
    starts = [dynamic.get(a, np.asarray(0, DEFAULT_INT)) for a in range(len(shape))]
    sizes = tuple(1 if a in dynamic else d for a, d in enumerate(shape))
    return bind(ix.dynamic_slice_p, x, *starts, slice_sizes=sizes)


def _advanced(x, entries, advanced, mode):
    shape = aval(x).shape
    # slices on the other axes first (they keep their axes), then one gather over the advanced axes
    x = _basic(x, [e if k not in advanced else slice(None) for k, e in enumerate(entries)])
    shape = aval(x).shape
    arrays = []
    for k in advanced:
        e = entries[k]
        if not _is_int_scalar(e) and aval(e).dtype.kind not in "iu":
            raise IndexError(f"arrays used as indices must be of integer (or boolean) type, got {aval(e).str_short()}")
        if mode == "clip" and not isinstance(e, Tracer):    # concrete indices are checked, as NumPy does
            _check_bounds(e, shape[k], k)
        arrays.append(_normalized_index(e, shape[k]))
    batch = broadcast_shapes(*[aval(a).shape for a in arrays], op="indexing")
    columns = [expand_dims(broadcast_to_shape(a, batch), -1) for a in arrays]
    indices = columns[0] if len(columns) == 1 else concatenate(columns, axis=-1)
    out = bind(ix.gather_p, x, indices, axes=tuple(advanced), mode=mode)
    contiguous = advanced == list(range(advanced[0], advanced[-1] + 1))
    if contiguous and advanced[0] > 0:  # numpy puts the index dims where the indexed axes were
        nb, first = len(batch), advanced[0]
        rest = list(range(nb, aval(out).ndim))
        out = transpose(out, rest[:first] + list(range(nb)) + rest[first:])
    return out


def _fill_value(dtype, fill_value):
    """JAX's fill of out-of-range elements: fill_value, else NaN, the least signed or largest unsigned integer,
    True."""
    if fill_value is not None:
        return np.asarray(fill_value).astype(dtype)
    kind = dtype_kind(dtype)
    return np.asarray(np.nan if kind in "fc" else True if kind == "b" else
                      np.iinfo(dtype).min if kind == "i" else np.iinfo(dtype).max, dtype)


def _take_args(a, indices, axis):
    """(a, its axis, the integer indices) of take: axis None takes from the flattened array; NumPy casts bool
    indices to integers (True is index 1, never a mask)."""
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, aval(a).ndim, "take", bools=False)
    indices = asarray(_concrete_index(indices))
    kind = aval(indices).dtype.kind
    if kind == "b":
        indices = astype(indices, DEFAULT_INT)
    elif kind not in "iu":
        raise TypeError(f"take: indices must be integers, got {aval(indices).str_short()}")
    return a, axis, indices


def take_clamped(a, indices, axis=None):
    """take as x[idx] reads (negative indices count from the end, traced ones out of range are clamped, concrete
    ones raise IndexError): for tracejit's own callers, whose indices are in range or meant to clamp; take's
    default fills out-of-range elements instead, as JAX's."""
    a, axis, indices = _take_args(a, indices, axis)
    return getitem(a, (slice(None),) * axis + (indices,))


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False,
         fill_value=None):
    """jax.numpy.take. Indices outside [-n, n) give fill_value (mode None or 'fill'; by default NaN, the signed
    integer dtype's least value, the unsigned one's largest, True), negative ones inside count from the end;
    'clip' clips them (negative ones to 0, as NumPy's) and 'wrap' wraps them around. 'raise' (NumPy's default,
    which np.take passes to a tracer's method) checks concrete indices as NumPy does; traced ones cannot be checked:
    NotImplementedError, as JAX's for any. unique_indices and indices_are_sorted are hints."""
    reject_out("take", out)
    if mode not in (None, "fill", "clip", "wrap", "raise"):
        raise ValueError(f"take: mode must be 'fill', 'clip', 'wrap' or 'raise', got {mode!r}")
    a, axis, indices = _take_args(a, indices, axis)
    size = aval(a).shape[axis]
    if not isinstance(size, Dim) and size == 0 and 0 not in aval(indices).shape:
        raise IndexError(f"take: cannot take {aval(indices).str_short()} indices from an empty axis {axis} of "
                         f"{aval(a).str_short()}, as in JAX")
    size = _size_value(size)
    if mode == "raise":
        if isinstance(indices, Tracer):
            raise NotImplementedError("take: mode 'raise' cannot check traced indices (JAX supports it for none); "
                                      "use 'fill' (the default), 'clip' or 'wrap'")
    elif mode == "clip":
        indices = clip(indices, 0, size - 1)
    elif mode == "wrap":
        indices = remainder(indices, size)
    else:
        inside = _inside(indices, size)
        taken = getitem(a, (slice(None),) * axis + (where_(inside, indices, 0),))
        inside = reshape(inside, (1,) * axis + aval(inside).shape + (1,) * (aval(a).ndim - axis - 1))
        return where_(inside, taken, _fill_value(aval(a).dtype, fill_value))
    return getitem(a, (slice(None),) * axis + (indices,))


def _size_value(size):
    """An axis's size for index arithmetic: the int, or a symbolic dimension's size read at run time."""
    return bind(sh.dim_size_p, dim=size) if isinstance(size, Dim) else size


def _inside(indices, size):
    """Whether each index is in [-size, size), of any integer dtype (an int8 index against 300 elements)."""
    if aval(indices).dtype == np.uint64:
        return less(indices, size)
    indices = astype(indices, DEFAULT_INT)
    return bitwise_and(greater_equal(indices, -size), less(indices, size))


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    """jax.numpy.take_along_axis: indices outside [-n, n) give fill_value (mode None or 'fill'; NaN, the signed
    integer dtype's least value, the unsigned one's largest, True by default), negative ones inside count from
    the end; 'clip' and 'promise_in_bounds' clamp them."""
    if mode not in (None, "clip", "fill", "promise_in_bounds"):
        raise ValueError(f"take_along_axis: mode must be 'fill', 'clip' or 'promise_in_bounds', got {mode!r}")
    arr, indices = asarray(arr), asarray(indices)
    if axis is None:
        if aval(indices).ndim != 1:
            raise ValueError(f"take_along_axis: with axis=None, indices must be 1-D, got {aval(indices).str_short()}")
        arr, axis = ravel(arr), 0
    a, i = aval(arr), aval(indices)
    if i.dtype.kind not in "iu" or i.ndim != a.ndim:
        raise IndexError(f"take_along_axis: indices must be an integer array of the rank of arr ({a.ndim}), got "
                         f"{i.str_short()}")
    axis = normalize_axis(axis, a.ndim, "take_along_axis")
    size, n = a.shape[axis], _size_value(a.shape[axis])
    inside = _inside(indices, n) if mode in (None, "fill") else None
    indices = _normalized_index(indices, n)
    others = broadcast_shapes(*[tuple(s[:axis] + (1,) + s[axis + 1:]) for s in (a.shape, i.shape)],
                              op="take_along_axis")
    arr = broadcast_to_shape(arr, others[:axis] + (size,) + others[axis + 1:])
    indices = broadcast_to_shape(indices, others[:axis] + (i.shape[axis],) + others[axis + 1:])
    out = ix.take_along_axis(arr, clip(indices, 0, n - 1), axis)
    return out if inside is None else where_(inside, out, _fill_value(a.dtype, fill_value))


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """NumPy's sort (NaNs last); `kind` does not change sorted values. descending=True (JAX's) reverses the
    ascending order (NaNs first)."""
    return _sorting(sorting.sort_p, a, axis, order, descending)


def argsort(a, axis=-1, kind=None, order=None, *, stable=True, descending=False):
    """Stable unless stable=False, as jax.numpy.argsort (NumPy's unstable order of ties is its own; real values of
    32 bits or fewer come out stable all the same); kind='stable' or 'mergesort' is stable. descending=True
    (JAX's): the reversed order, ties (when stable) still in their original order."""
    return _sorting(sorting.argsort_p, a, axis, order, descending,
                    stable=stable is not False or kind in ("stable", "mergesort"))


def _sorting(prim, a, axis, order, descending, **params):
    if order is not None:
        raise NotImplementedError("sort: `order` applies to structured arrays, which tracejit does not have")
    a = asarray(a)
    if axis is None or (prim is sorting.argsort_p and aval(a).ndim == 0):     # NumPy argsorts a 0-d array as 1-d
        a, axis = ravel(a), 0 if axis is None else axis
    axis = normalize_axis(axis, aval(a).ndim, prim.name, bools=prim is sorting.sort_p)
    if not descending:
        return bind(prim, a, axis=axis, **params)
    def flip(x):
        return bind(sh.rev_p, x, dimensions=(axis,))
    if params.get("stable"):      # as JAX: the reversed array's stable order, as indices into a, reversed
        return flip(subtract(aval(a).shape[axis] - 1, bind(prim, flip(a), axis=axis, **params)))
    return flip(bind(prim, a, axis=axis, **params))


def check_search_method(name, method):
    """JAX's algorithms of searchsorted (one answer, so any of them is this one)."""
    if method not in (methods := ("scan", "scan_unrolled", "sort", "compare_all")):
        raise ValueError(f"{name}: method must be one of {methods}, got {method!r}")


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Indices where v would go into the sorted 1-D a (NaN sorts last, as NumPy); a binary search per value,
    whichever of JAX's methods (its algorithms, one answer) is named."""
    check_search_method("searchsorted", method)
    a, v = promote(a, v)
    if sorter is not None:
        a = take_clamped(a, sorter)
    if aval(a).ndim != 1:
        raise ShapeError(f"searchsorted: a must be 1-D, got shape {aval(a).shape}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    return bind(ix.searchsorted_p, a, v, side=side)


def interp(x, xp, fp, left=None, right=None, period=None):
    """NumPy's piecewise-linear interpolation: in float64 (whatever the inputs, as NumPy), its formula and its
    exact values at the knots. With a period, x and xp are taken modulo it and the knots sorted and extended by
    one at each end (left and right are then ignored), as NumPy and JAX do."""
    x, xp, fp = (astype(asarray(t), np.float64) for t in (x, xp, fp))
    n = aval(xp).shape[0] if aval(xp).ndim == 1 else -1
    if n < 1 or aval(fp).shape != (n,):
        raise ValueError(f"interp: xp and fp must be 1-D of one length >= 1, got shapes {aval(xp).shape} and "
                         f"{aval(fp).shape}")
    if period is not None:
        period = absolute(astype(asarray(period), np.float64))
        x, xp = remainder(x, period), remainder(xp, period)
        order = argsort(xp)
        xp, fp, left, right, n = take_clamped(xp, order), take_clamped(fp, order), None, None, n + 2
        xp = concatenate([subtract(getitem(xp, slice(-1, None)), period), xp, add(getitem(xp, slice(1)), period)])
        fp = concatenate([getitem(fp, slice(-1, None)), fp, getitem(fp, slice(1))])
    first, last = getitem(fp, 0), getitem(fp, n - 1)
    if n == 1:
        y = broadcast_to_shape(first, aval(x).shape)
    else:
        j = bind(ix.searchsorted_p, xp, x, side="right")
        j = where_(less(j, 1), 0, where_(greater(j, n - 1), n - 2, add(j, -1)))
        x0, x1, f0, f1 = (take_clamped(t, add(j, k)) for t, k in ((xp, 0), (xp, 1), (fp, 0), (fp, 1)))
        slope = divide(subtract(f1, f0), subtract(x1, x0))
        y = add(multiply(slope, subtract(x, x0)), f0)
        other_side = add(multiply(slope, subtract(x, x1)), f1)          # where the first is NaN, as NumPy
        y = where_(isnan(y), where_(bitwise_and(isnan(other_side), equal(f0, f1)), f0, other_side), y)
        y = where_(equal(x, x0), _exactly(f0, y), y)
    y = where_(equal(x, getitem(xp, n - 1)), _exactly(last, y), y)
    y = where_(greater(x, getitem(xp, n - 1)), last if right is None else right, y)
    return where_(less(x, getitem(xp, 0)), first if left is None else left, y)


def _exactly(value, y):
    """The knot's value, exactly (as NumPy), with the derivative of y, the segment's formula (as JAX), where y
    is finite: sg(value) - (sg(y) - y) is value, -0.0 included, since sg(y) - y is +0.0."""
    finite = isfinite(y)
    y = where_(finite, y, 0.0)       # no inf - inf below
    return where_(finite, subtract(stop_gradient(value), subtract(stop_gradient(y), y)), value)


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Each element `repeats` times along axis (flattened when None). The counts must be concrete (the output's
    size depends on them) unless total_repeat_length, JAX's, gives the size: then they may be traced, and the
    output is cut at that length or its last element repeated up to it, as JAX's."""
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    elif aval(a).ndim == 0:      # as NumPy: a 0-d array repeats as a 1-d one (along axis 0 or -1)
        a = ravel(a)
    axis = normalize_axis(axis, aval(a).ndim, "repeat", bools=False)
    if total_repeat_length is not None:
        return _repeat_to_length(a, repeats, axis, operator.index(total_repeat_length))
    if isinstance(repeats, Tracer):
        raise TypeError("repeat: the repeats must be concrete (Python ints or a NumPy array), not traced values: "
                        "the size of the output depends on them")
    repeats = np.asarray(repeats)
    if repeats.dtype.kind not in "iub":
        raise TypeError(f"repeat: repeats must be integers, got {repeats!r}")
    if (repeats < 0).any():
        raise ValueError(f"repeat: repeats must be non-negative, got {repeats}")
    shape = aval(a).shape
    if repeats.ndim > 1 or repeats.ndim and repeats.shape != (shape[axis],) and repeats.shape != (1,):
        raise ValueError(f"repeat: repeats of shape {repeats.shape} do not fit the axis of size {shape[axis]}")
    if repeats.ndim == 0:
        r = int(repeats)
        spread = bind(sh.broadcast_in_dim_p, a, shape=(*shape[:axis + 1], r, *shape[axis + 1:]),
                      broadcast_dimensions=(*range(axis + 1), *range(axis + 2, len(shape) + 1)))
        return reshape(spread, (*shape[:axis], shape[axis] * r, *shape[axis + 1:]))
    return take_clamped(a, np.repeat(np.arange(shape[axis]), repeats), axis=axis)


def _repeat_to_length(a, repeats, axis, length):
    """JAX's repeat to a given length: a 1 marks where each element's run starts (runs starting past the end
    dropped), their running count less one is the element each output position takes."""
    n = aval(a).shape[axis]
    counts = broadcast_to_shape(astype(ravel(asarray(repeats)), DEFAULT_INT), (n,))
    if not length or not n:
        return take_clamped(a, np.zeros(0, DEFAULT_INT), axis=axis)
    starts = bind(rd.cumsum_p, concatenate([np.zeros(1, DEFAULT_INT), getitem(counts, slice(0, n - 1))]), axis=0,
                  reverse=False)
    marks = bind(sc.scatter_add_p, np.zeros(length, DEFAULT_INT), expand_dims(starts, -1),
                 np.ones(n, DEFAULT_INT), axes=(0,), mode="drop")
    return take_clamped(a, add(bind(rd.cumsum_p, marks, axis=0, reverse=False), -1), axis=axis)
