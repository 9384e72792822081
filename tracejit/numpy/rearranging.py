"""NumPy's rearranging functions on the shape functions: append, rot90, rollaxis, the splits named by axis
(vsplit, hsplit, dsplit) and row_stack (vstack's old name, still in NumPy)."""
import numpy as np

from ..core.avals import index_arg, normalize_axis
from ..core.errors import AxisError
from ._base import aval
from .shape_ops import _as_array, concatenate, flip, ravel, split, transpose, vstack

row_stack = vstack


def append(arr, values, axis=None):
    """arr and values concatenated (both flattened when axis is None); values are an array as NumPy makes them,
    so np.append(x_f32, 1.5) is float64, as NumPy's."""
    arr, values = _as_array(arr), _as_array(values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def rot90(m, k=1, axes=(0, 1)):
    """m rotated by k quarter turns from the first axis of `axes` towards the second: flips and a transpose."""
    m = _as_array(m)
    ndim = aval(m).ndim
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must name 2 axes, got {axes!r}")
    a0, a1 = (normalize_axis(a, ndim, "rot90") for a in axes)
    if a0 == a1:
        raise ValueError(f"rot90: the axes must be different, got {axes!r}")
    k = index_arg(k, "rot90: k") % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(ndim))
    perm[a0], perm[a1] = a1, a0
    return transpose(flip(m, a1), perm) if k == 1 else flip(transpose(m, perm), a1)


def rollaxis(a, axis, start=0):
    """NumPy's rollaxis: axis moved to just before position `start` (moveaxis is the clearer spelling)."""
    a = _as_array(a)
    n = aval(a).ndim
    axis = normalize_axis(axis, n, "rollaxis")
    start = index_arg(start, "rollaxis: start")
    start += n if start < 0 else 0
    if not 0 <= start <= n:
        raise AxisError(f"rollaxis: start {start} must be in [-{n}, {n}] for an array of rank {n}")
    start -= 1 if axis < start else 0
    order = [k for k in range(n) if k != axis]
    order.insert(start, axis)
    return transpose(a, order)


def _split_along(name, axis_of_rank, min_rank):
    def fn(ary, indices_or_sections):
        ary = _as_array(ary)
        ndim = aval(ary).ndim
        if ndim < min_rank:
            raise ValueError(f"{name} only works on arrays of {min_rank} or more dimensions, got shape "
                             f"{aval(ary).shape}")
        if np.ndim(indices_or_sections) and np.asarray(indices_or_sections).dtype.kind not in "iu":
            raise TypeError(f"{name}: split indices must be integers, got {indices_or_sections!r}")
        return split(ary, indices_or_sections, axis_of_rank(ndim))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"np.{name}: split along axis {axis_of_rank(3)} (for arrays of rank {min_rank} or more)."
    return fn


vsplit = _split_along("vsplit", lambda ndim: 0, 2)
hsplit = _split_along("hsplit", lambda ndim: 1 if ndim > 1 else 0, 1)
dsplit = _split_along("dsplit", lambda ndim: 2, 3)
