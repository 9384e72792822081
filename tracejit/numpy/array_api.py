"""The array API's spellings and small array utilities jax.numpy has: concat, permute_dims, matrix_transpose,
unstack, matvec, vecmat, vecdot, cumulative_sum and cumulative_prod, array_equal and array_equiv, the
broadcasting helpers, block, copy, diagflat, ediff1d, sort_complex, isscalar and iterable."""
import numpy as np

from ..core.avals import broadcast_shapes as _broadcast_shapes
from ..core.avals import index_arg, normalize_axis, shape_arg
from ..core.errors import ShapeError
from ..core.trace import Tracer
from ..primitives import indexing as ix
from ._base import asarray, astype, aval, broadcast_to_shape, promote, reject_out
from .calculus import cumprod
from .complex_numbers import conj, imag, real
from .creation import full
from .indexing import take_clamped
from .linalg_ops import diag, matmul
from .reductions import all, cumsum, sum
from .setops import lexsort
from .shape_ops import _as_array, _slice_axis, concatenate, ravel, reshape, squeeze, swapaxes, transpose
from .ufuncs import bitwise_and, bitwise_or, equal, isnan, subtract


def concat(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """The array API's name for concatenate (NumPy's keywords too)."""
    return concatenate(arrays, axis, out, dtype=dtype, casting=casting)


def permute_dims(a, /, axes):
    """The array API's name for transpose (axes required)."""
    return transpose(a, axes)


def matrix_transpose(x, /):
    """The last two axes swapped (of an array of rank 2 or more)."""
    x = asarray(x)
    if aval(x).ndim < 2:
        raise ValueError(f"matrix_transpose: x must have rank >= 2, got {aval(x).str_short()}")
    return swapaxes(x, -1, -2)


def unstack(x, /, *, axis=0):
    """The slices of x along axis, as a tuple."""
    x = _as_array(x)
    if aval(x).ndim == 0:
        raise ValueError("unstack: x must have rank >= 1, got a 0-d array")
    axis = normalize_axis(axis, aval(x).ndim, "unstack")
    return tuple(squeeze(_slice_axis(x, axis, i, i + 1), axis) for i in range(aval(x).shape[axis]))


def _check_rank(x, rank, fn, what):
    if aval(x).ndim < rank:
        raise ValueError(f"{fn}: {what} must have rank >= {rank}, got {aval(x).str_short()}")


def matvec(x1, x2, /):
    """Matrix (..., m, n) times vector (..., n) -> (..., m), batch axes broadcast (NumPy 2.2's matvec)."""
    x1, x2 = asarray(x1), asarray(x2)
    _check_rank(x1, 2, "matvec", "x1")
    _check_rank(x2, 1, "matvec", "x2")
    return squeeze(matmul(x1, reshape(x2, (*aval(x2).shape, 1))), -1)


def vecmat(x1, x2, /):
    """Conjugated vector (..., n) times matrix (..., n, m) -> (..., m) (NumPy 2.2's vecmat)."""
    x1, x2 = asarray(x1), asarray(x2)
    _check_rank(x1, 1, "vecmat", "x1")
    _check_rank(x2, 2, "vecmat", "x2")
    row = reshape(conj(x1), (*aval(x1).shape[:-1], 1, aval(x1).shape[-1]))
    return squeeze(matmul(row, x2), -2)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) along axis, x1 and x2 broadcast first; in their promoted dtype, as NumPy's vecdot
    (precision: JAX's hint, without effect here)."""
    x1, x2 = promote(x1, x2)
    shape = _broadcast_shapes(aval(x1).shape, aval(x2).shape, op="vecdot")
    if not shape:
        raise ValueError("vecdot: the operands must have rank >= 1")
    axis = normalize_axis(axis, len(shape), "vecdot")
    dtype = aval(x1).dtype
    x1, x2 = broadcast_to_shape(x1, shape), broadcast_to_shape(x2, shape)
    out = sum(conj(x1) * x2 if dtype.kind == "c" else x1 * x2, axis, dtype=dtype)
    return out if preferred_element_type is None else astype(out, preferred_element_type)


def _cumulative(name, fn, identity, x, axis, dtype, include_initial, out):
    reject_out(name, out)
    x = _as_array(x)
    ndim = aval(x).ndim
    if ndim == 0:
        raise ValueError(f"{name}: x must have rank >= 1, got a 0-d array")
    if axis is None:
        if ndim != 1:
            raise ValueError(f"{name}: axis must be given for an array of rank {ndim} (it may be None for 1-D "
                             "arrays only)")
        axis = 0
    axis = normalize_axis(axis, ndim, name)
    out = fn(x, axis, dtype)
    if include_initial:
        shape = aval(out).shape
        first = full(shape[:axis] + (1,) + shape[axis + 1:], identity, aval(out).dtype)
        out = concatenate([first, out], axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """cumsum along axis (required beyond 1-D), with include_initial a leading 0 (the array API's)."""
    return _cumulative("cumulative_sum", cumsum, 0, x, axis, dtype, include_initial, out)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """cumprod along axis (required beyond 1-D), with include_initial a leading 1 (the array API's)."""
    return _cumulative("cumulative_prod", cumprod, 1, x, axis, dtype, include_initial, out)


def array_equal(a1, a2, equal_nan=False):
    """Whether a1 and a2 have the same shape and elements (NaNs equal to each other with equal_nan)."""
    a1, a2 = asarray(a1), asarray(a2)
    if aval(a1).shape != aval(a2).shape:
        return np.asarray(False)
    same = equal(a1, a2)
    if equal_nan and (aval(a1).dtype.kind in "fc" or aval(a2).dtype.kind in "fc"):
        same = bitwise_or(same, bitwise_and(isnan(a1), isnan(a2)))
    return all(same)


def array_equiv(a1, a2):
    """Whether a1 and a2 broadcast to one shape and are equal there."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        _broadcast_shapes(aval(a1).shape, aval(a2).shape, op="array_equiv")
    except ShapeError:
        return np.asarray(False)
    return all(equal(a1, a2))


def broadcast_shapes(*shapes):
    """The shape that arrays of these shapes broadcast to (an int is a 1-D shape)."""
    shapes = [shape_arg(s, "broadcast_shapes: shape") for s in shapes]
    return tuple(_broadcast_shapes(*shapes, op="broadcast_shapes")) if shapes else ()


def broadcast_arrays(*args, subok=False):
    """The arguments broadcast to their common shape (dtypes kept), as a list (subok changes nothing)."""
    arrays = [_as_array(a) for a in args]
    shape = _broadcast_shapes(*[aval(a).shape for a in arrays], op="broadcast_arrays")
    return [broadcast_to_shape(a, shape) for a in arrays]


def block(arrays):
    """An array assembled from nested lists of blocks: the innermost lists join along the last axis, the next
    along the one before ..., every block first raised to the result's rank (np.block)."""
    depth = _list_depth(arrays, ())
    leaves = []
    _collect(arrays, leaves)
    rank = max([depth, *(aval(a).ndim for a in leaves)])

    def build(x, level):
        if isinstance(x, list):
            return concatenate([build(y, level + 1) for y in x], axis=-(depth - level))
        a = _as_array(x)
        return reshape(a, (1,) * (rank - aval(a).ndim) + aval(a).shape)
    return build(arrays, 0)


def _list_depth(x, where):
    if isinstance(x, tuple):
        raise TypeError(f"block: arrays{''.join(f'[{i}]' for i in where)} is a tuple; only lists may hold blocks")
    if not isinstance(x, list):
        return 0
    if not x:
        raise ValueError(f"block: arrays{''.join(f'[{i}]' for i in where)} is an empty list")
    depths = {_list_depth(y, (*where, i)) for i, y in enumerate(x)}
    if len(depths) > 1:
        raise ValueError(f"block: list depths are mismatched inside arrays{''.join(f'[{i}]' for i in where)}")
    return depths.pop() + 1


def _collect(x, out):
    if isinstance(x, list):
        for y in x:
            _collect(y, out)
    else:
        out.append(_as_array(x))


def copy(a, order=None, subok=False):
    """A copy of a (a tracer is a value already; subok changes nothing)."""
    if order not in (None, "C", "K", "A"):
        raise NotImplementedError(f"copy: order={order!r} is not supported: tracejit's arrays are C-ordered")
    a = asarray(a)
    return a if isinstance(a, Tracer) else np.array(a, copy=True)


def diagflat(v, k=0):
    """A 2-D array with the flattened v on its k-th diagonal."""
    return diag(ravel(_as_array(v)), index_arg(k, "diagflat: k"))


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of consecutive elements of the flattened ary, with to_begin before and to_end after
    them (cast to ary's dtype, as NumPy's)."""
    ary = ravel(_as_array(ary))
    dtype = aval(ary).dtype
    parts = [subtract(ary[1:], ary[:-1])]
    for value, name, at in ((to_begin, "to_begin", 0), (to_end, "to_end", len(parts) + 1)):
        if value is None:
            continue
        value = ravel(_as_array(value))
        if not np.can_cast(aval(value).dtype, dtype, "same_kind"):
            raise TypeError(f"ediff1d: dtype of {name} ({aval(value).dtype}) must be compatible with the input's "
                            f"({dtype})")
        parts.insert(at, astype(value, dtype))
    return concatenate(parts, 0) if len(parts) > 1 else parts[0]


def sort_complex(a):
    """The values sorted by real part, then imaginary part, as complex numbers (NumPy's dtypes: complex64 for
    8- and 16-bit integers, complex128 for the other real dtypes)."""
    a = _as_array(a)
    dtype = aval(a).dtype
    if dtype.kind != "c":
        a = astype(a, np.complex64 if dtype.char in "bhBH?" else np.complex128)
    order = lexsort([imag(a), real(a)], axis=-1)
    return _take_along_last(a, order)


def _take_along_last(a, order):
    return ix.take_along_axis(a, order, aval(a).ndim - 1) if aval(a).ndim > 1 else take_clamped(a, order)


def isscalar(element):
    """True for Python and NumPy scalars and, as JAX's (unlike NumPy's), for 0-d arrays and tracers."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, Tracer)):
        return aval(element).ndim == 0
    return False


def iterable(y):
    """Whether iter(y) works (a 0-d array is not iterable)."""
    try:
        iter(y)
    except TypeError:
        return False
    return True

