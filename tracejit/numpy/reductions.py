"""Reductions in NumPy's spelling and with NumPy's parameters: `out=None` (np.sum(x) passes it to x.sum),
`where=` masks and `initial=` values. They shadow builtins (sum, max, ...), hence `builtins.` below."""
import builtins

import numpy as np

from ..core.avals import DEFAULT_INT, HALF_FLOATS, Dim, canonical_dtype, normalize_axes, normalize_axis, shape_size
from ..core.errors import ShapeError
from ..core.trace import Tracer, bind
from ..primitives import complex_parts as cp
from ..primitives import reductions as rd
from ..primitives import shapes as sh
from ._base import asarray, astype, aval, broadcast_to_shape, promote, reject_out, stop_gradient
from .shape_ops import expand_dims, ravel, reshape
from .ufuncs import add, divide, maximum, minimum, multiply, sqrt, square, subtract, where_


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


def _masked(a, where, fill):
    """NumPy's where= of a reduction: the elements the mask (broadcast against a) leaves out become fill."""
    a = asarray(a)
    if where is None:
        return a
    mask = broadcast_to_shape(asarray(where, np.bool_), aval(a).shape)
    return where_(mask, a, np.asarray(fill, aval(a).dtype))


def _accumulator_dtype(a, dtype):
    """NumPy sums bools and signed integers in the platform integer (int64), unsigned ones in uint64."""
    if dtype is not None:
        return canonical_dtype(dtype)
    kind = aval(asarray(a)).dtype.kind
    return DEFAULT_INT if kind in "bi" else np.dtype(np.uint64) if kind == "u" else None


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    reject_out("sum", out)
    total = _reduce(rd.reduce_sum_p, _masked(a, where, 0), axis, keepdims, _accumulator_dtype(a, dtype))
    return total if initial is None else add(total, initial)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    reject_out("prod", out)
    product = _reduce(rd.reduce_prod_p, _masked(a, where, 1), axis, keepdims, _accumulator_dtype(a, dtype))
    return product if initial is None else multiply(product, initial)


def _extremum(prim, combine, name, a, axis, out, keepdims, initial, where):
    """max or min; `initial` takes part in the comparison and is the result of an empty (or masked-out) one."""
    reject_out(name, out)
    if where is not None:
        if initial is None:
            raise ValueError(f"{name}: a where= mask needs an initial= value (the result where the mask selects "
                             "nothing), as in NumPy")
        a = _masked(a, where, initial)
    if initial is None:
        require_nonempty(name, a, axis)
    extremum = _reduce(prim, a, axis, keepdims)
    return extremum if initial is None else combine(extremum, initial)


def require_nonempty(name, a, axis):
    """max and min of nothing have no identity (NumPy and JAX raise too); over a symbolic dimension the
    compiled code refuses a size 0 when it is called (Dim.require_nonempty)."""
    shape = np.shape(a) if not isinstance(a, Tracer) else aval(a).shape
    axes = normalize_axes(axis, len(shape))
    for i in axes:
        if isinstance(shape[i], Dim):
            shape[i].require_nonempty(f"{name}: zero-size reduction over dimension {{dim}} has no identity")
    if builtins.any(shape[i] == 0 for i in axes):
        raise ShapeError(f"{name}: zero-size reduction over axes {axes} of shape {shape} has no identity "
                         "(give initial=)")


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _extremum(rd.reduce_max_p, maximum, "max", a, axis, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _extremum(rd.reduce_min_p, minimum, "min", a, axis, out, keepdims, initial, where)


amax, amin = max, min


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    reject_out("any", out)
    return _reduce(rd.reduce_max_p, _masked(asarray(a, np.bool_), where, False), axis, keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    reject_out("all", out)
    return _reduce(rd.reduce_min_p, _masked(asarray(a, np.bool_), where, True), axis, keepdims)


def _count(a, axis, ddof, where, keepdims):
    """How many elements a reduction over axis combines, less ddof (never below 0): an int, or a traced value
    of a's dtype when a mask selects them or a reduced dimension is symbolic (its size is read at run time)."""
    if where is not None:
        selected = sum(broadcast_to_shape(asarray(where, np.bool_), aval(a).shape), axis, dtype=aval(a).dtype,
                       keepdims=keepdims)
        return maximum(subtract(selected, ddof), 0) if ddof else selected
    shape = aval(a).shape
    axes = normalize_axes(axis, len(shape))
    count = shape_size([shape[i] for i in axes if not isinstance(shape[i], Dim)])
    symbolic = [i for i in axes if isinstance(shape[i], Dim)]
    if not symbolic:
        return builtins.max(count - ddof, 0)   # as NumPy: ddof >= count divides by 0 (nan or inf)
    for i in symbolic:
        size = astype(bind(sh.dim_size_p, dim=shape[i]), aval(a).dtype)
        count = size if count == 1 else multiply(count, size)
    return maximum(subtract(count, ddof), 0) if ddof else count


def _divide_by_count(total, count, dtype):
    if not isinstance(count, int):      # a count per slice (where=) or read at run time (a symbolic size)
        return divide(total, count)
    return divide(total, np.asarray(count, dtype) if count else np.nan)


def _as_float(a, dtype):
    """Integers and bools in float64, as NumPy's mean and var (not the smallest float that holds them)."""
    (a,) = promote(a, to_float="float64") if dtype is None else (astype(a, dtype),)
    return a


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    reject_out("mean", out)
    a = _as_float(asarray(a), dtype)
    if aval(a).dtype in HALF_FLOATS:      # as NumPy: summed and divided in float32, rounded once
        return astype(mean(astype(a, np.float32), axis, keepdims=keepdims, where=where), aval(a).dtype)
    total = sum(a, axis, keepdims=keepdims, where=where)
    out = _divide_by_count(total, _count(a, axis, 0, where, keepdims), aval(a).dtype)
    return out if dtype is None else astype(out, dtype)     # an integer dtype: the quotient truncated, as NumPy


_mean = mean     # var's parameter `mean` hides the function there


def _ddof(name, ddof, correction):
    if correction is not None and ddof != 0:
        raise ValueError(f"{name}: give ddof or correction, not both")
    return ddof if correction is None else correction


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """`mean`, if given, is the mean with keepdims=True (NumPy's way to skip computing it again)."""
    reject_out("var", out)
    ddof = _ddof("var", ddof, correction)
    a = _as_float(asarray(a), dtype)
    center = _mean(a, axis, keepdims=True, where=where) if mean is None else mean
    c = subtract(a, center)
    squared = bind(cp.real_p, multiply(c, bind(cp.conj_p, c))) if aval(c).dtype.kind == "c" else square(c)  # |c|**2
    total = sum(squared, axis, keepdims=keepdims, where=where)
    return _divide_by_count(total, _count(squared, axis, ddof, where, keepdims), aval(total).dtype)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """sqrt(var). Over one element std is 0 for every finite value, so its derivatives are 0 there; JAX's are
    NaN (the derivative of sqrt at 0): tracejit deliberately differs."""
    variance = var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction)
    if where is None and _count(asarray(a), axis, 0, None, keepdims) == 1:
        variance = stop_gradient(variance)
    return sqrt(variance)


def _arg(prim, name, a, axis, out, keepdims):
    reject_out(name, out)
    a = asarray(a)
    ndim = aval(a).ndim
    if axis is None:
        result = bind(prim, ravel(a), axes=(0,), index_dtype=DEFAULT_INT)
        return reshape(result, (1,) * ndim) if keepdims else result
    axis = normalize_axis(axis, ndim, name, bools=False)
    result = bind(prim, a, axes=(axis,), index_dtype=DEFAULT_INT)
    return expand_dims(result, axis) if keepdims else result


def argmax(a, axis=None, out=None, *, keepdims=False):
    return _arg(rd.argmax_p, "argmax", a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    return _arg(rd.argmin_p, "argmin", a, axis, out, keepdims)


def cumsum(a, axis=None, dtype=None, out=None):
    reject_out("cumsum", out)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    acc = _accumulator_dtype(a, dtype)
    if acc is not None:
        a = astype(a, acc)
    if aval(a).dtype == np.bool_:      # NumPy's cumsum of dtype bool is a running or: a running count, nonzero
        return astype(cumsum(astype(a, DEFAULT_INT), axis), np.bool_)
    return bind(rd.cumsum_p, a, axis=normalize_axis(axis, aval(a).ndim, "cumsum", bools=False), reverse=False)
