"""Editing arrays as values: delete, insert, compress, extract, choose, resize, trim_zeros, piecewise, and
fill_diagonal, put and put_along_axis (which, as JAX's, return a new array and need inplace=False). Positions
that depend on values (compress and extract of a traced condition) take size= and fill_value=, as JAX's."""
import numpy as np

from ..core.avals import DEFAULT_INT, broadcast_shapes, normalize_axes, normalize_axis
from ..core.errors import ConcretizationError
from ..core.trace import Tracer
from ._base import asarray, astype, aval, broadcast_to_shape, normalize_shape, promote, reject_out
from .at_updates import _AtIndexer
from .creation import arange, zeros, zeros_like
from .indexing import searchsorted, sort, take_along_axis, take_clamped
from .nonzero import data_dependent_size, eager_if_concrete, first_positions
from .reductions import any
from .shape_ops import _as_array, _slice_axis, concatenate, expand_dims, moveaxis, ravel, reshape, squeeze, stack, tile
from .ufuncs import add, clip, less, logical_not, not_equal, remainder, where_


def _axis_of(arr, axis, name):
    """(arr, axis): a flattened arr along axis 0 when axis is None."""
    arr = _as_array(arr)
    if axis is None:
        return ravel(arr), 0
    return arr, normalize_axis(axis, aval(arr).ndim, name)


def _concrete_indices(obj, n, name, what="obj"):
    """Concrete integer indices as an int64 array, negative ones counted from the end; IndexError (NumPy's) for
    those outside [-n, n)."""
    indices = np.asarray(obj)
    if indices.dtype.kind not in "iu":
        raise IndexError(f"{name}: {what} must hold integers (or be a slice), got {obj!r}")
    if np.any((indices < -n) | (indices >= n)):
        bad = indices[(indices < -n) | (indices >= n)].flat[0]
        raise IndexError(f"{name}: index {bad} is out of bounds for an axis of size {n}")
    return np.where(indices < 0, indices + n, indices).astype(DEFAULT_INT)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """arr without the entries obj (indices, a slice or a boolean mask) along axis (flattened when None). A traced
    obj needs assume_unique_indices=True (distinct indices in range, as JAX's): the result's length is then known."""
    arr, axis = _axis_of(arr, axis, "delete")
    n = aval(arr).shape[axis]
    if isinstance(obj, Tracer):
        if not assume_unique_indices:
            raise ConcretizationError(
                "delete: obj (the indices to delete) is traced, so the length of the result is unknown while tracing; "
                "pass concrete indices, or assume_unique_indices=True if they are distinct and in range")
        if aval(obj).dtype.kind not in "iu":
            raise TypeError(f"delete: obj must hold integers, got {aval(obj).str_short()}")
        gone = sort(ravel(where_(less(obj, 0), add(obj, n), obj)))
        m = aval(gone).shape[0]
        kept = arange(n - m, dtype=DEFAULT_INT)    # the j-th kept entry is j plus the deletions at or before it
        shift = gone - arange(m, dtype=DEFAULT_INT)
        return take_clamped(arr, add(kept, searchsorted(shift, kept, "right")), axis)
    keep = np.ones(n, bool)
    if isinstance(obj, slice):
        keep[obj] = False
    elif np.asarray(obj).dtype == np.bool_:
        mask = np.asarray(obj)
        if mask.shape != (n,):
            raise ValueError(f"delete: a boolean obj must have the axis' length {n}, got shape {mask.shape}")
        keep = ~mask
    else:
        keep[_concrete_indices(obj, n, "delete")] = False
    return take_clamped(arr, np.flatnonzero(keep), axis)


def insert(arr, obj, values, axis=None):
    """values (cast to arr's dtype) inserted before the indices obj (an int, indices or a slice; concrete) along
    axis (flattened when None), as np.insert."""
    arr, axis = _axis_of(arr, axis, "insert")
    shape = aval(arr).shape
    n = shape[axis]
    if isinstance(obj, Tracer):
        raise ConcretizationError("insert: obj (where to insert) must be concrete: the result's layout depends on it")
    indices = np.arange(n)[obj] if isinstance(obj, slice) else np.asarray(obj)
    if indices.dtype.kind not in "iu" or indices.ndim > 1:
        raise TypeError(f"insert: obj must be an integer, a 1-D array of integers or a slice, got {obj!r}")
    if np.any((indices < -n) | (indices > n)):
        raise IndexError(f"insert: index {indices.ravel()[(indices.ravel() < -n) | (indices.ravel() > n)][0]} is "
                         f"out of bounds for an axis of size {n}")
    indices = np.where(indices < 0, indices + n, indices)
    values = astype(_as_array(values), aval(arr).dtype)
    if indices.size == 1:
        values = reshape(values, (1,) * (len(shape) - aval(values).ndim) + aval(values).shape)
        if indices.ndim == 0:
            values = moveaxis(values, 0, axis)
        count = aval(values).shape[axis]
        values = broadcast_to_shape(values, shape[:axis] + (count,) + shape[axis + 1:])
        at = int(indices.ravel()[0])
        return concatenate([_slice_axis(arr, axis, 0, at), values, _slice_axis(arr, axis, at, n)], axis)
    count = indices.size
    placed = indices.copy()
    placed[np.argsort(indices, kind="stable")] += np.arange(count)
    source = np.empty(n + count, DEFAULT_INT)
    source[placed] = n + np.arange(count)
    old = np.ones(n + count, bool)
    old[placed] = False
    source[old] = np.arange(n)
    values = broadcast_to_shape(values, shape[:axis] + (count,) + shape[axis + 1:])
    return take_clamped(concatenate([arr, values], axis), source, axis)


@eager_if_concrete
def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of a along axis (flattened when None) where the 1-D condition holds (entries past the
    condition's end are left out). A traced condition needs size= (padded with fill_value), as JAX's."""
    reject_out("compress", out)
    condition = asarray(condition)
    if aval(condition).ndim != 1:
        raise ValueError(f"compress: condition must be 1-D, got {aval(condition).str_short()}")
    a, axis = _axis_of(a, axis, "compress")
    n, m = aval(a).shape[axis], aval(condition).shape[0]
    if not isinstance(condition, Tracer):
        chosen = np.asarray(condition).astype(bool)
        if chosen[n:].any():
            raise IndexError(f"compress: condition selects entry {n + int(np.argmax(chosen[n:]))}, past the end of "
                             f"axis {axis} of size {n}")
        if size is None:
            return take_clamped(a, np.flatnonzero(chosen[:n]), axis)
    chosen = not_equal(condition, 0)
    chosen = chosen[:n] if m >= n else concatenate([chosen, zeros((n - m,), np.bool_)])
    size = data_dependent_size("compress", condition, size, lambda: np.count_nonzero(chosen))
    found, filled = first_positions(chosen, size)
    picked = take_clamped(a, found, axis) if n else zeros(aval(a).shape[:axis] + (size,) + aval(a).shape[axis + 1:],
                                                  aval(a).dtype)
    filled = reshape(filled, (size,) + (1,) * (aval(a).ndim - axis - 1))
    return where_(filled, picked, asarray(fill_value, aval(a).dtype))


@eager_if_concrete
def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of arr where condition is nonzero (both flattened); size= and fill_value= as compress."""
    return compress(ravel(not_equal(asarray(condition), 0)), ravel(_as_array(arr)), size=size,
                    fill_value=fill_value)


def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i], a and the choices broadcast together. mode 'raise' needs a concrete a (indices out of
    range raise); 'wrap' and 'clip' fold them into range."""
    reject_out("choose", out)
    a = asarray(a)
    if aval(a).dtype.kind not in "iub":
        raise TypeError(f"choose: a must hold integers, got {aval(a).str_short()}")
    choices = list(choices) if not isinstance(choices, (np.ndarray, Tracer)) else [choices[i] for i in
                                                                                    range(aval(choices).shape[0])]
    if not choices:
        raise ValueError("choose: choices must not be empty")
    choices = promote(*choices)
    n = len(choices)
    if mode == "raise":
        if isinstance(a, Tracer):
            raise ConcretizationError("choose: mode='raise' needs a concrete a (a traced one cannot raise); pass "
                                      "mode='wrap' or mode='clip'")
        if np.any((np.asarray(a) < 0) | (np.asarray(a) >= n)):
            raise ValueError(f"choose: invalid entry in choice array: a must be in [0, {n}) for {n} choices")
    elif mode == "wrap":
        a = remainder(a, n)
    elif mode == "clip":
        a = clip(a, 0, n - 1)
    else:
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    shape = broadcast_shapes(aval(a).shape, *[aval(c).shape for c in choices], op="choose")
    stacked = stack([broadcast_to_shape(c, shape) for c in choices])
    index = expand_dims(broadcast_to_shape(astype(a, DEFAULT_INT), shape), 0)
    return squeeze(take_along_axis(stacked, index, 0, mode="clip"), 0)


def resize(a, new_shape):
    """An array of new_shape filled with a's elements in order, repeated as often as needed (zeros if a is
    empty), as np.resize."""
    a = ravel(_as_array(a))
    shape = normalize_shape(new_shape, "resize: new_shape")
    total, n = int(np.prod(shape)), aval(a).shape[0]
    if n == 0 or total == 0:
        return zeros(shape, aval(a).dtype)
    flat = tile(a, -(-total // n)) if total > n else a
    return reshape(_slice_axis(flat, 0, 0, total), shape)


def trim_zeros(filt, trim="fb", axis=None):
    """filt without its leading ('f') and trailing ('b') zeros along axis (every axis when None: the smallest box
    holding the nonzero values). Its length depends on the values, so filt must be concrete."""
    if isinstance(filt, Tracer):
        raise ConcretizationError("trim_zeros: filt is traced, and the length of the result depends on its values; "
                                  "it needs a concrete array")
    if not isinstance(trim, str) or set(trim.lower()) - {"f", "b"}:
        raise ValueError(f"trim_zeros: trim must be a string of 'f' and 'b', got {trim!r}")
    trim = trim.lower()
    values = np.asarray(asarray(filt))
    if values.ndim == 0:
        raise ValueError("trim_zeros: filt must have rank >= 1, got a 0-d array")
    nonzero = values != 0
    box = [slice(None)] * values.ndim
    for ax in normalize_axes(axis, values.ndim, "trim_zeros", iterable=True):
        others = tuple(k for k in range(values.ndim) if k != ax)
        where = np.flatnonzero(nonzero.any(axis=others) if others else nonzero)
        if where.size == 0:
            box[ax] = slice(0, 0)
            continue
        box[ax] = slice(where[0] if "f" in trim else 0, where[-1] + 1 if "b" in trim else values.shape[ax])
    return np.array(values[tuple(box)])


def piecewise(x, condlist, funclist, *args, **kw):
    """Where condlist[i] holds, funclist[i](x, *args, **kw) (or funclist[i] itself if it is a value); where none
    holds, the extra last entry of funclist if given, else 0; in x's dtype. Every function is evaluated on all of
    x (as JAX's), and a later condition wins over an earlier one (as NumPy's)."""
    x = _as_array(x)
    if isinstance(condlist, (list, tuple)) and condlist and (
            isinstance(condlist[0], (list, tuple, np.ndarray, Tracer)) or aval(x).ndim == 0):
        conds = [asarray(c) for c in condlist]
    else:
        conds = asarray(condlist)
        conds = [conds] if aval(conds).ndim == aval(x).ndim or aval(conds).ndim == 0 else \
            [conds[i] for i in range(aval(conds).shape[0])]
    funclist = list(funclist)
    if len(funclist) not in (len(conds), len(conds) + 1):
        raise ValueError(f"piecewise: with {len(conds)} condition(s), funclist must have {len(conds)} or "
                         f"{len(conds) + 1} entries, got {len(funclist)}")
    shape, dtype = aval(x).shape, aval(x).dtype
    conds = [broadcast_to_shape(asarray(c, np.bool_), shape) for c in conds]

    def value(f):
        v = f(x, *args, **kw) if callable(f) else f
        return broadcast_to_shape(astype(asarray(v), dtype), shape)
    out = zeros_like(x)
    if len(funclist) > len(conds):
        none = logical_not(any(stack(conds), axis=0)) if conds else np.ones(shape, bool)
        out = where_(none, value(funclist[-1]), out)
    for c, f in zip(conds, funclist):
        out = where_(c, value(f), out)
    return out


def _not_inplace(name, inplace):
    if inplace:
        raise ValueError(f"{name}: tracejit's arrays are values, never written in place; pass inplace=False (as "
                         "JAX requires) and use the array it returns")


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """a with val (repeated as needed) on its main diagonal; for a tall matrix, wrap=True continues it after
    every ncols + 1 rows, as NumPy's. Returns a new array: inplace must be False, as in JAX."""
    _not_inplace("fill_diagonal", inplace)
    a = asarray(a)
    shape = aval(a).shape
    if len(shape) < 2:
        raise ValueError(f"fill_diagonal: a must be at least 2-d, got {aval(a).str_short()}")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise ValueError(f"fill_diagonal: all dimensions of a must be of equal length, got {shape}")
    size = int(np.prod(shape))
    if len(shape) == 2:
        step, end = shape[1] + 1, size if wrap else min(size, shape[1] * shape[1])
    else:
        step, end = 1 + int(np.sum(np.cumprod(shape[:-1]))), size
    positions = np.arange(0, end, step)
    values = ravel(astype(asarray(val), aval(a).dtype))
    if not positions.size or not aval(values).shape[0]:
        return a
    return reshape(_AtIndexer(ravel(a))[positions].set(resize(values, positions.size)), shape)


def put(a, ind, v, mode=None, *, inplace=True):
    """a with the flat positions ind set to v (repeated as needed), as np.put; mode None or 'raise': concrete
    indices out of range raise (traced ones are dropped, as JAX's), 'wrap' and 'clip' fold them. Returns a new
    array: inplace must be False, as in JAX."""
    _not_inplace("put", inplace)
    a = asarray(a)
    shape = aval(a).shape
    flat, size = ravel(a), int(np.prod(shape))
    ind = ravel(asarray(ind))
    if aval(ind).dtype.kind not in "iu":
        raise TypeError(f"put: ind must hold integers, got {aval(ind).str_short()}")
    values = ravel(astype(asarray(v), aval(a).dtype))
    if mode in (None, "raise"):
        if not isinstance(ind, Tracer):
            ind = _concrete_indices(ind, size, "put", "ind")
        else:
            ind = where_(less(ind, 0), add(ind, size), ind)
    elif mode == "wrap":
        ind = remainder(ind, size)
    elif mode == "clip":
        ind = clip(ind, 0, size - 1)
    else:
        raise ValueError(f"put: mode must be None, 'raise', 'wrap' or 'clip', got {mode!r}")
    count = aval(ind).shape[0]
    if not count or not aval(values).shape[0]:
        return a
    return reshape(_AtIndexer(flat)[ind].set(resize(values, count)), shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """arr with values put at the indices along axis (take_along_axis's positions), as np.put_along_axis.
    Returns a new array: inplace must be False, as in JAX."""
    _not_inplace("put_along_axis", inplace)
    arr, indices = asarray(arr), asarray(indices)
    shape = aval(arr).shape
    if axis is None:
        if aval(indices).ndim != 1:
            raise ValueError(f"put_along_axis: with axis=None, indices must be 1-D, got {aval(indices).str_short()}")
        flat = put_along_axis(ravel(arr), indices, ravel(asarray(values)), 0, inplace=False, mode=mode)
        return reshape(flat, shape)
    if aval(indices).dtype.kind not in "iu" or aval(indices).ndim != len(shape):
        raise IndexError(f"put_along_axis: indices must be integers of arr's rank {len(shape)}, got "
                         f"{aval(indices).str_short()}")
    axis = normalize_axis(axis, len(shape), "put_along_axis")
    n = shape[axis]
    if not isinstance(indices, Tracer):
        indices = _concrete_indices(indices, n, "put_along_axis", "indices")
    else:
        indices = where_(less(indices, 0), add(indices, n), indices)
    index = tuple(indices if d == axis else reshape(arange(shape[d], dtype=DEFAULT_INT),
                                                   tuple(-1 if k == d else 1 for k in range(len(shape))))
                  for d in range(len(shape)))
    return _AtIndexer(arr)[index].set(values)
