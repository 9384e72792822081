"""pad with every mode of jnp.pad (NumPy's): constant (one pad equation for a scalar value, one per side and axis
for per-axis values), empty (zeros, as JAX), edge, wrap, reflect and symmetric (even or odd), linear_ramp, and the
statistics maximum, minimum, mean and median over stat_length elements. The modes other than constant pad one
axis after another, as JAX and NumPy do (a corner takes the values the axes before it put there): slices, flips
and concatenations, which fuse into the loop that reads them."""
import numpy as np

from ..core.pytree import tree_leaves
from ..core.trace import Tracer, bind
from ..primitives import shapes as sh
from ._base import asarray, astype, aval, broadcast_to_shape, int_array
from .reductions import amax, amin, mean
from .shape_ops import _slice_axis, concatenate, flip
from .statistics import median
from .ufuncs import add, divide, floor, multiply, round, subtract

_KEYWORDS = {"constant": ("constant_values",), "empty": (), "edge": (), "wrap": (), "linear_ramp": ("end_values",),
             "maximum": ("stat_length",), "minimum": ("stat_length",), "mean": ("stat_length",),
             "median": ("stat_length",), "reflect": ("reflect_type",), "symmetric": ("reflect_type",)}
_STATISTICS = {"maximum": amax, "minimum": amin, "mean": mean, "median": median}


def pad(array, pad_width, mode="constant", **kwargs):
    x = asarray(array)
    ndim = aval(x).ndim
    widths = int_array(pad_width, "pad: pad_width", (ndim, 2), bools=False)
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width must be non-negative, got {pad_width!r}")
    if mode not in _KEYWORDS:
        raise ValueError(f"pad: mode {mode!r} is not one of {', '.join(map(repr, _KEYWORDS))}")
    unsupported = set(kwargs) - set(_KEYWORDS[mode])
    if unsupported:
        raise ValueError(f"pad: unsupported keyword arguments for mode {mode!r}: {sorted(unsupported)}")
    widths = [(int(lo), int(hi)) for lo, hi in widths]
    if mode in ("constant", "empty"):
        return _constant(x, widths, kwargs.get("constant_values", 0))
    for axis, (lo, hi) in enumerate(widths):
        if aval(x).shape[axis] == 0 and lo + hi:
            raise ValueError(f"pad: can't extend empty axis {axis} using modes other than 'constant' or 'empty'")
    if mode in ("reflect", "symmetric"):
        kind = kwargs.get("reflect_type", "even")
        if kind not in ("even", "odd"):
            raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {kind!r}")
        return _reflected(x, widths, mode, kind)
    if mode == "linear_ramp":
        return _ramps(x, widths, _per_axis(kwargs.get("end_values", 0), ndim, "end_values"))
    statistic = _statistic(mode, kwargs.get("stat_length"), ndim) if mode in _STATISTICS else None
    for axis, (lo, hi) in enumerate(widths):
        if not lo + hi:
            continue
        if mode == "wrap":
            x = _wrapped(x, axis, lo, hi)
        else:
            sides = statistic(x, axis) if statistic else (_edge(x, axis, True), _edge(x, axis, False))
            x = _repeated_sides(x, axis, lo, hi, *sides)
    return x


def _values(values):
    """values (nested sequences) as a NumPy array, or a traced one where they hold traced values."""
    return asarray(values) if any(isinstance(v, Tracer) for v in tree_leaves(values)) else np.asarray(values)


def _per_axis(values, ndim, name):
    """values (a scalar, a pair, or a pair per axis) as an (ndim, 2) array."""
    values = _values(values)
    shape = aval(values).shape
    if len(shape) > 2 or any(d not in (1, want) for d, want in zip(shape[::-1], (2, ndim))):
        raise ValueError(f"pad: {name} must be a scalar, a pair or one pair per axis ({ndim}), got shape {shape}")
    return broadcast_to_shape(values, (ndim, 2)) if isinstance(values, Tracer) else np.broadcast_to(values, (ndim, 2))


def _constant(x, widths, values):
    """One pad equation for one value; per side and axis otherwise (JAX's order: each axis, before then after)."""
    dtype = aval(x).dtype
    values = _values(values)
    if not aval(values).ndim:
        value = astype(values, dtype) if isinstance(values, Tracer) else values.astype(dtype)
        return bind(sh.pad_p, x, value, padding_config=tuple((lo, hi, 0) for lo, hi in widths))
    values = _per_axis(values, len(widths), "constant_values")
    for axis, sides in enumerate(widths):
        for side, width in enumerate(sides):
            if width:
                config = [(0, 0, 0)] * len(widths)
                config[axis] = (width, 0, 0) if side == 0 else (0, width, 0)
                value = values[axis, side]
                value = astype(value, dtype) if isinstance(value, Tracer) else np.asarray(value).astype(dtype)
                x = bind(sh.pad_p, x, value, padding_config=tuple(config))
    return x


def _edge(a, axis, before):
    n = aval(a).shape[axis]
    return _slice_axis(a, axis, 0, 1) if before else _slice_axis(a, axis, n - 1, n)


def _repeated_sides(x, axis, lo, hi, before, after):
    """x with `before` (size 1 along axis) repeated lo times ahead of it and `after` hi times behind."""
    def spread(v, count):
        shape = list(aval(x).shape)
        shape[axis] = count
        return broadcast_to_shape(v, tuple(shape))
    return concatenate([spread(before, lo), x, spread(after, hi)], axis)


def _wrapped(x, axis, lo, hi):
    """The axis continued periodically: whole copies and the remainders at either end."""
    n = aval(x).shape[axis]
    (left_copies, left), (right_copies, right) = divmod(lo, n), divmod(hi, n)
    parts = [_slice_axis(x, axis, n - left, n)] if left else []
    parts += [x] * (left_copies + right_copies + 1)
    parts += [_slice_axis(x, axis, 0, right)] if right else []
    return concatenate(parts, axis)


def _reflected(x, widths, mode, kind):
    """Each side built from mirror images of the array as padded so far (a width beyond the axis takes several),
    JAX's: reflect leaves the edge out of the image, symmetric repeats it; odd reflects about the edge value too."""
    for axis, (lo, hi) in enumerate(widths):
        n = aval(x).shape[axis]
        offset = 1 if mode == "reflect" and n > 1 else 0
        for before, width in ((True, lo), (False, hi)):
            edge = _edge(x, axis, before)
            while width > 0:
                count = min(width, n - offset)
                width -= count
                size = aval(x).shape[axis]
                image = flip(_slice_axis(x, axis, offset, offset + count) if before else
                             _slice_axis(x, axis, size - count - offset, size - offset), axis)
                if kind == "odd":
                    image = subtract(multiply(2, edge), image)
                    if n > 1:
                        edge = _edge(image, axis, before)
                x = concatenate([image, x] if before else [x, image], axis)
    return x


def _ramps(x, widths, end_values):
    """Linear ramps from each end value to the edge (excluded), as NumPy's linspace(end, edge, width, endpoint=False)
    computes them (end + i (edge - end) / width: JAX's end (1 - t) + edge t rounds differently, which an integer
    array's floor can turn into a difference of 1)."""
    dtype = aval(x).dtype
    compute = dtype if dtype.kind in "fc" else np.dtype(np.float64)
    def ramp(x, axis, side, width):
        edge, end = astype(_edge(x, axis, side == 0), compute), end_values[axis, side]
        end = astype(end, compute) if isinstance(end, Tracer) else np.asarray(end).astype(compute)
        shape = [1] * aval(x).ndim
        shape[axis] = width
        steps = np.arange(width, dtype=compute).reshape(shape)
        values = add(multiply(steps, divide(subtract(edge, end), compute.type(width))), end)    # NumPy's linspace
        values = astype(values if dtype.kind in "fc" else floor(values), dtype)    # (integers: linspace's floor)
        return values if side == 0 else flip(values, axis)

    for axis, (lo, hi) in enumerate(widths):
        if lo or hi:
            x = concatenate([ramp(x, axis, 0, lo)] * bool(lo) + [x] + [ramp(x, axis, 1, hi)] * bool(hi), axis)
    return x


def _statistic(mode, stat_length, ndim):
    """sides(x, axis) for a statistics mode: the statistic of the first and of the last stat_length elements
    along the axis (all where None), rounded for integer arrays (mean, median)."""
    lengths = None if stat_length is None else int_array(stat_length, "pad: stat_length", (ndim, 2), bools=False)
    if lengths is not None and (lengths < 0).any():
        raise ValueError(f"pad: stat_length must be non-negative, got {stat_length!r}")
    function = _STATISTICS[mode]

    def sides(x, axis):
        n = aval(x).shape[axis]
        out = []
        for side, before in enumerate((True, False)):
            length = n if lengths is None else min(int(lengths[axis, side]), n)
            if length == 0:
                raise ValueError("pad: stat_length of 0 yields no value for padding")
            part = _slice_axis(x, axis, 0, length) if before else _slice_axis(x, axis, n - length, n)
            value = function(part, axis=axis, keepdims=True)
            if aval(x).dtype.kind not in "fc" and mode in ("mean", "median"):
                value = round(value)
            out.append(astype(value, aval(x).dtype))
        return out
    return sides
