"""NumPy's index helpers: r_ and c_, tri and the triangle/diagonal index arrays (functions of sizes only, made
with NumPy when called, as JAX does), unravel_index and ravel_multi_index (on traced indices too: clipped or
wrapped as JAX's, since compiled code cannot raise)."""
import numpy as np

from ..core.avals import DEFAULT_INT, index_arg, shape_arg
from ..core.errors import ConcretizationError
from ..core.trace import Tracer
from ._base import asarray, astype, aval, broadcast_operands, promote
from .creation import arange, check_layout, linspace, ones, tril
from .shape_ops import concatenate, reshape, swapaxes, transpose
from .ufuncs import add, clip, floor_divide, greater, less, multiply, remainder, where_


def tri(N, M=None, k=0, dtype=None, *, like=None):
    """Ones on and below the k-th diagonal of an N x M array (an iota comparison, no constant)."""
    check_layout("tri", like=like)
    N = index_arg(N, "tri: N", bools=False)
    M = N if M is None else index_arg(M, "tri: M", bools=False)
    return astype(tril(ones((N, M), np.bool_), index_arg(k, "tri: k")), dtype or np.float64)


def _sizes_only(np_fn, name):
    def fn(*args, **kwargs):
        if any(isinstance(a, Tracer) for a in (*args, *kwargs.values())):
            raise ConcretizationError(f"{name}: its arguments are sizes and must be concrete, not traced")
        return tuple(asarray(i) for i in np_fn(*args, **kwargs))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"np.{name}: index arrays that depend on sizes only (constants inside a trace)."
    return fn


tril_indices = _sizes_only(np.tril_indices, "tril_indices")
triu_indices = _sizes_only(np.triu_indices, "triu_indices")
diag_indices = _sizes_only(np.diag_indices, "diag_indices")


def _square_shape(arr, name, rank=None):
    shape = aval(asarray(arr)).shape
    if rank is not None and len(shape) != rank:
        raise ValueError(f"{name}: input array must be {rank}-d, got shape {shape}")
    return shape


def tril_indices_from(arr, k=0):
    n, m = _square_shape(arr, "tril_indices_from", 2)
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    n, m = _square_shape(arr, "triu_indices_from", 2)
    return triu_indices(n, k, m)


def diag_indices_from(arr):
    shape = _square_shape(arr, "diag_indices_from")
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: input array must be at least 2-d with all dimensions equal, got "
                         f"shape {shape}")
    return diag_indices(shape[0], len(shape))


def _int_indices(x, name):
    """(the indices as int64, their values if they are concrete else None: inside a trace even a conversion of
    concrete values is traced)."""
    x = asarray(x)
    if aval(x).dtype.kind not in "iu":
        raise TypeError(f"{name}: indices must be integers, got {aval(x).str_short()}")
    return astype(x, DEFAULT_INT), None if isinstance(x, Tracer) else np.asarray(x)


def _dims(shape, name):
    dims = shape_arg(shape, f"{name}: shape")
    if any(d < 0 for d in dims):
        raise ValueError(f"{name}: dimensions must be non-negative, got {dims}")
    return dims


def unravel_index(indices, shape, order="C"):
    """The coordinates of flat indices into an array of `shape`. Concrete indices out of [0, size) raise, as
    NumPy; traced ones count from the end once (from -size) and are clipped otherwise, as JAX's."""
    dims = _dims(shape, "unravel_index")
    if order not in ("C", "F"):
        raise ValueError(f"unravel_index: order must be 'C' or 'F', got {order!r}")
    flat, values = _int_indices(indices, "unravel_index")
    size = int(np.prod(dims))
    if values is not None and np.any((values < 0) | (values >= size)):
        bad = values[(values < 0) | (values >= size)].flat[0]
        raise ValueError(f"unravel_index: index {bad} is out of bounds for an array of size {size}")
    rest, out = flat, [None] * len(dims)
    for i in reversed(range(len(dims))) if order == "C" else range(len(dims)):
        d = max(dims[i], 1)
        rest, out[i] = floor_divide(rest, d), remainder(rest, d)
    if values is None:
        above, below = greater(rest, 0), less(rest, -1)
        out = [where_(above, d - 1, where_(below, 0, o)) for d, o in zip(dims, out)]
    return tuple(out)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of coordinate arrays into an array of shape `dims`; per dimension mode 'raise' (concrete
    indices only: a traced one cannot raise), 'wrap' or 'clip', as NumPy."""
    dims = _dims(dims, "ravel_multi_index")
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} index arrays for {len(dims)} dimensions")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if order not in ("C", "F") or len(modes) != len(dims) or set(modes) - {"raise", "wrap", "clip"}:
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F' and mode 'raise', 'wrap' or 'clip' (or one "
                         f"per dimension), got order={order!r}, mode={mode!r}")
    coords, values = zip(*[_int_indices(i, "ravel_multi_index") for i in multi_index])
    coords = broadcast_operands(*coords, op="ravel_multi_index")
    flat = np.zeros((), DEFAULT_INT)
    for k in range(len(dims)) if order == "C" else reversed(range(len(dims))):
        c, d = coords[k], dims[k]
        if modes[k] == "raise":
            if values[k] is None:
                raise ConcretizationError("ravel_multi_index: mode='raise' needs concrete indices (a traced one "
                                          "cannot raise); pass mode='wrap' or mode='clip'")
            if np.any((values[k] < 0) | (values[k] >= d)):
                raise ValueError(f"ravel_multi_index: an index is out of bounds for dimension {k} of size {d}")
        elif modes[k] == "wrap":
            c = remainder(c, max(d, 1))
        else:
            c = clip(c, 0, max(d - 1, 0))
        flat = add(multiply(flat, d), c)
    return flat


class _AxisConcatenator:
    """r_ and c_: slices become ranges (arange, or linspace for a complex step such as 5j), scalars and arrays
    are raised to `ndmin` dimensions and all are concatenated along `axis`; a leading string 'axis,ndmin,trans1d'
    overrides the defaults, as NumPy's."""

    def __init__(self, axis, ndmin, trans1d, name):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key):
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if items and isinstance(items[0], str):
            axis, ndmin, trans1d = self._directive(items.pop(0), axis, ndmin, trans1d)
        parts = []
        for item in items:
            if isinstance(item, str):
                raise ValueError(f"{self.name}: a string may only come first (the directive), got {item!r}")  # noqa: TRY004 - NumPy's
            if isinstance(item, slice):
                part = self._range(item)
                if ndmin > 1:
                    part = reshape(part, (1,) * (ndmin - 1) + aval(part).shape)
                    part = swapaxes(part, -1, trans1d) if trans1d != -1 else part
            else:
                part = item
            parts.append(part)
        parts = [self._raise_rank(p, ndmin, trans1d) for p in promote(*parts)]
        return concatenate(parts, axis) if parts else np.zeros(0)

    def _directive(self, text, axis, ndmin, trans1d):
        if text in ("r", "c"):
            raise NotImplementedError(f"{self.name}: the matrix directives 'r' and 'c' make np.matrix objects, "
                                      "which tracejit does not have")
        try:
            numbers = [int(x) for x in text.split(",")]
        except ValueError:
            raise ValueError(f"{self.name}: the directive must be 'axis[,ndmin[,trans1d]]' of integers, got "
                             f"{text!r}") from None
        if len(numbers) > 3:
            raise ValueError(f"{self.name}: the directive has at most 3 integers, got {text!r}")
        return tuple(numbers + [ndmin, trans1d][len(numbers) - 1:])

    def _range(self, s):
        start = 0 if s.start is None else s.start
        step = 1 if s.step is None else s.step
        if any(isinstance(v, Tracer) for v in (start, s.stop, step)):
            raise ConcretizationError(f"{self.name}: slice bounds must be concrete, got {s}")
        if isinstance(step, complex):
            return linspace(start, s.stop, int(abs(step)))
        return arange(start, s.stop, step)

    @staticmethod
    def _raise_rank(part, ndmin, trans1d):
        rank = aval(part).ndim
        if rank >= max(ndmin, 1):
            return part
        part = reshape(part, (1,) * (max(ndmin, 1) - rank) + aval(part).shape)
        if trans1d == -1 or ndmin <= 1 or rank == 0:
            return part
        k2, k1 = ndmin - rank, trans1d + (ndmin - rank + 1 if trans1d < 0 else 0)
        axes = list(range(ndmin))
        return transpose(part, axes[:k1] + axes[k2:] + axes[k1:k2])


r_ = _AxisConcatenator(0, 1, -1, "r_")
c_ = _AxisConcatenator(-1, 2, 0, "c_")
