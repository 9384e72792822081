"""jax.lax.gather and the lax.scatter family with XLA's dimension numbers, written on tracejit's point gather
and scatters (primitives/indexing.py, scatter.py), which index every operand axis of every element.

XLA's gather takes, at each batch position of start_indices, a window of slice_sizes starting at the start
vector it names (start_index_map; operand_batching_dims pair operand axes with batch axes of the indices),
drops the collapsed axes and lays the window's axes out at offset_dims. Here every output element's operand
index is start + offset, built by broadcasting, and one point gather reads them. In "clip" mode (and
"promise_in_bounds", gather's default, as JAX's) starts are clamped so that the window fits, as XLA's; in "fill"
mode a window that does not fit reads fill_value. Scatters mirror that: every update element is written at
start + its window offset; "clip" clamps starts, the default drops windows that do not fit, whole, as XLA."""
import enum
from typing import NamedTuple

import numpy as np

from .. import numpy as tnp
from ..core.trace import Tracer, bind, eager
from ..numpy._base import asarray, aval
from ..numpy.at_updates import _AtIndexer
from ..primitives import indexing as ix
from ..primitives import scatter as sc
from .control_flow import while_loop


class GatherScatterMode(enum.Enum):
    """How gathers and scatters treat windows that do not fit the operand (jax.lax.GatherScatterMode)."""

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(mode):
        """A mode from its name ('clip', 'fill', 'drop', 'promise_in_bounds'; None is FILL_OR_DROP)."""
        if isinstance(mode, GatherScatterMode):
            return mode
        names = {"clip": GatherScatterMode.CLIP, None: GatherScatterMode.FILL_OR_DROP,
                 "fill": GatherScatterMode.FILL_OR_DROP, "drop": GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS, "one_hot": GatherScatterMode.ONE_HOT}
        if mode not in names:
            raise ValueError(f'Unknown gather mode "{mode}"')
        return names[mode]


class GatherDimensionNumbers(NamedTuple):
    """How a gather's operand, start_indices and output axes relate (jax.lax.GatherDimensionNumbers)."""

    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter's operand, scatter_indices and updates axes relate (jax.lax.ScatterDimensionNumbers)."""

    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


def _mode(mode, name):
    mode = GatherScatterMode.from_any(mode)
    if mode is GatherScatterMode.ONE_HOT:
        raise ValueError(f"{name}: mode 'one_hot' is not supported; use 'clip' or 'fill'/'drop'")
    return mode is GatherScatterMode.FILL_OR_DROP


def _operand_indices(x_shape, indices, index_map, operand_batch, indices_batch, window, window_dims, out_shape,
                     batch_positions):
    """The operand index of every element of the output (gather) or the updates (scatter), stacked on a last
    axis, and whether each element's window fits. window[d] is operand axis d's window size, window_dims the
    operand axes that have an axis in the output, at positions out of batch_positions' complement."""
    batch_shape = aval(indices).shape[:-1]
    offset_positions = [p for p in range(len(out_shape)) if p not in batch_positions]
    fits = True
    columns = []
    for d, size in enumerate(x_shape):
        if d in index_map:
            start = tnp.astype(indices[..., index_map.index(d)], np.int64)
            room = size - window[d]
            fits = fits & (start >= 0) & (start <= room)
            start = tnp.clip(start, 0, max(room, 0))
        elif d in operand_batch:
            axis = indices_batch[operand_batch.index(d)]
            start = tnp.broadcast_to(tnp.reshape(tnp.arange(batch_shape[axis]), [-1 if k == axis else 1 for k in
                                                                                   range(len(batch_shape))]),
                                     batch_shape)
        else:
            start = tnp.zeros(batch_shape, np.int64)
        start = tnp.expand_dims(start, tuple(offset_positions)) if offset_positions else start
        if d in window_dims:
            position = offset_positions[window_dims.index(d)]
            offset = tnp.reshape(tnp.arange(window[d]), [-1 if k == position else 1 for k in range(len(out_shape))])
            start = start + offset
        columns.append(tnp.broadcast_to(start, out_shape))
    fits = tnp.broadcast_to(tnp.expand_dims(fits, tuple(offset_positions)) if offset_positions else fits, out_shape)
    return tnp.stack(columns, axis=-1), fits


def _check_indices(name, indices, count):
    a = aval(indices)
    if a.dtype.kind not in "iu" or a.ndim < 1 or a.shape[-1] != count:
        raise TypeError(f"{name}: indices must be an integer array whose last axis holds the {count} start "
                        f"coordinates, got {a.str_short()}")


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False, indices_are_sorted=False,
           mode=None, fill_value=None):
    """XLA's gather, as jax.lax.gather: windows of slice_sizes at the starts in start_indices (see the module
    docstring). Prefer x[idx] / x.at[idx].get / vmap of dynamic_slice: they say the same more plainly."""
    x, indices = asarray(operand), asarray(start_indices)
    dn = dimension_numbers
    shape = aval(x).shape
    mode = "promise_in_bounds" if mode is None else mode
    slice_sizes = tuple(int(s) for s in slice_sizes)
    if len(slice_sizes) != len(shape) or any(not 0 <= s <= n for s, n in zip(slice_sizes, shape)):
        raise ValueError(f"gather: slice_sizes {slice_sizes} must give one size per operand axis, each at most "
                         f"the axis' size, for operand shape {shape}")
    _check_indices("gather", indices, len(dn.start_index_map))
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    if any(slice_sizes[d] != 1 for d in dropped):
        raise ValueError(f"gather: collapsed and batching axes {sorted(dropped)} must have slice size 1, got "
                         f"slice_sizes {slice_sizes}")
    window_dims = [d for d in range(len(shape)) if d not in dropped]
    if len(dn.offset_dims) != len(window_dims):
        raise ValueError(f"gather: offset_dims {dn.offset_dims} must name one output axis for each of the "
                         f"{len(window_dims)} operand axes that are not collapsed")
    batch_shape = aval(indices).shape[:-1]
    rank = len(batch_shape) + len(window_dims)
    batch_positions = [p for p in range(rank) if p not in dn.offset_dims]
    out_shape = [0] * rank
    for p, n in zip(batch_positions, batch_shape):
        out_shape[p] = n
    for p, d in zip(dn.offset_dims, window_dims):
        out_shape[p] = slice_sizes[d]
    points, fits = _operand_indices(shape, indices, list(dn.start_index_map), list(dn.operand_batching_dims),
                                    list(dn.start_indices_batching_dims), slice_sizes, window_dims, tuple(out_shape),
                                    batch_positions)
    out = bind(ix.gather_p, x, points, axes=tuple(range(len(shape))), mode="clip")
    if not _mode(mode, "gather") or fits is True:
        return out
    return tnp.where(fits, out, tnp.asarray(_default_fill(aval(x).dtype) if fill_value is None else fill_value,
                                            aval(x).dtype))


def _default_fill(dtype):
    """JAX's: NaN for inexact types, the most negative signed and the largest unsigned integer, True."""
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    return np.iinfo(dtype).max if dtype.kind == "u" else True


def _scatter_points(name, shape, indices, u_shape, dn, mode):
    """The operand index of every update element (stacked on a last axis) and the scatter's mode; a window that
    does not fit is dropped whole in "drop" mode, its indices pointed past the operand's end."""
    _check_indices(name, indices, len(dn.scatter_dims_to_operand_dims))
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_dims = [d for d in range(len(shape)) if d not in dropped]
    if len(dn.update_window_dims) != len(window_dims):
        raise ValueError(f"{name}: update_window_dims {dn.update_window_dims} must name one updates axis for each "
                         f"of the {len(window_dims)} operand axes that are not inserted")
    window = [1] * len(shape)
    for p, d in zip(dn.update_window_dims, window_dims):
        window[d] = u_shape[p]
    batch_positions = [p for p in range(len(u_shape)) if p not in dn.update_window_dims]
    if tuple(u_shape[p] for p in batch_positions) != aval(indices).shape[:-1]:
        raise ValueError(f"{name}: updates of shape {u_shape} must have the scatter indices' batch shape "
                         f"{aval(indices).shape[:-1]} on their axes other than update_window_dims "
                         f"{dn.update_window_dims}")
    drop = _mode(mode, name)
    points, fits = _operand_indices(shape, indices, list(dn.scatter_dims_to_operand_dims),
                                    list(dn.operand_batching_dims), list(dn.scatter_indices_batching_dims), window,
                                    window_dims, u_shape, batch_positions)
    if drop and fits is not True:
        points = tnp.where(fits[..., None], points, np.int64(max(shape, default=0)))
    return points, "drop" if drop else "clip"


def _scatter(prim, name, operand, scatter_indices, updates, dimension_numbers, mode):
    x, indices, updates = asarray(operand), asarray(scatter_indices), asarray(updates)
    points, mode = _scatter_points(name, aval(x).shape, indices, aval(updates).shape, dimension_numbers, mode)
    return bind(prim, x, points, tnp.astype(updates, aval(x).dtype), axes=tuple(range(aval(x).ndim)), mode=mode)


def _scatter_function(prim, name, doc, negate=False):
    def scatter_fn(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                   unique_indices=False, mode=None):
        return _scatter(prim, name, operand, scatter_indices, tnp.negative(updates) if negate else updates,
                        dimension_numbers, mode)
    scatter_fn.__name__ = scatter_fn.__qualname__ = name
    scatter_fn.__doc__ = doc
    return scatter_fn


scatter = _scatter_function(sc.scatter_p, "scatter", "XLA's scatter, as jax.lax.scatter: updates written at "
                            "the windows the indices start (which of several writes to one element wins is "
                            "unspecified, as in JAX).")
scatter_add = _scatter_function(sc.scatter_add_p, "scatter_add", "XLA's scatter with addition (jax.lax.scatter_add).")
scatter_sub = _scatter_function(sc.scatter_add_p, "scatter_sub", "XLA's scatter with subtraction "
                                "(jax.lax.scatter_sub).", negate=True)
scatter_max = _scatter_function(sc.scatter_max_p, "scatter_max", "XLA's scatter with maximum (jax.lax.scatter_max).")
scatter_min = _scatter_function(sc.scatter_min_p, "scatter_min", "XLA's scatter with minimum (jax.lax.scatter_min).")


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """XLA's scatter with multiplication (jax.lax.scatter_mul): the product of every update that lands on an
    element. Its indices must be concrete (NumPy arrays), as for x.at[idx].multiply."""
    if isinstance(scatter_indices, Tracer):
        raise TypeError("scatter_mul: the scatter indices must be concrete (NumPy arrays); with traced indices "
                        "multiply by tnp.where(mask, factor, 1)")
    x, updates = asarray(operand), asarray(updates)
    shape = aval(x).shape
    with eager():       # concrete indices: every update's operand position, now
        points, mode = _scatter_points("scatter_mul", shape, np.asarray(scatter_indices), aval(updates).shape,
                                       dimension_numbers, mode)
        points = np.asarray(points).reshape(-1, len(shape))
    inside = np.all((points >= 0) & (points < np.array(shape)), axis=1)
    if mode == "clip":
        points, inside = np.clip(points, 0, np.array(shape) - 1), np.ones_like(inside)
    flat = np.ravel_multi_index(tuple(points[inside].T), shape) if len(shape) else np.zeros(inside.sum(), int)
    factors = tnp.ravel(tnp.astype(updates, aval(x).dtype))[np.flatnonzero(inside)]
    return tnp.reshape(_AtIndexer(tnp.ravel(x))[flat].multiply(factors), shape)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(), indices_are_sorted=False,
                  unique_indices=False, mode=None):
    """func (elementwise) applied to each element once per scatter window that covers it, as
    jax.lax.scatter_apply (update_shape is the windows' shape, as the updates would have)."""
    x = asarray(operand)
    counts = _scatter(sc.scatter_add_p, "scatter_apply", np.zeros(aval(x).shape, np.int32), scatter_indices,
                      np.ones(tuple(update_shape), np.int32), dimension_numbers, mode)

    def again(carry):
        k, value = carry
        return k + 1, tnp.where(counts > k, func(value), value)

    return while_loop(lambda carry: carry[0] < tnp.max(counts, initial=0), again, (np.int32(0), x))[1]
