"""tracejit.numpy: NumPy's API on tracers and arrays. Outside a trace it computes with NumPy and returns
numpy arrays; inside one it records IR. It also gives tracers their operators and methods."""
import sys as _sys

import numpy as _np

from ..core.avals import normalize_axis as _normalize_axis
from ..core.trace import Tracer as _Tracer
from ..core.trace import bind as _bind
from ..primitives import cumulative as _cu
from . import fft, linalg
from . import key_arrays as _key_arrays
from ._docs import document_as_numpy as _document_as_numpy
from .array_api import (
    array_equal,
    array_equiv,
    block,
    broadcast_arrays,
    broadcast_shapes,
    concat,
    copy,
    cumulative_prod,
    cumulative_sum,
    diagflat,
    ediff1d,
    isscalar,
    iterable,
    matrix_transpose,
    matvec,
    permute_dims,
    sort_complex,
    unstack,
    vecdot,
    vecmat,
)
from .at_updates import _AtIndexer
from .bessel_gcd import gcd, i0, lcm
from .calculus import cumprod, gradient, trapezoid, unwrap
from .complex_numbers import (
    angle,
    conj,
    conjugate,
    imag,
    iscomplex,
    iscomplexobj,
    isreal,
    isrealobj,
    real,
    real_if_close,
)
from .convolve import convolve, correlate
from .covariance import corrcoef, cov
from .creation import (
    arange,
    array,
    asarray,
    astype,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    identity,
    linspace,
    ones,
    ones_like,
    tril,
    triu,
    zeros,
    zeros_like,
)
from .dtypes import (
    bfloat16,
    bool_,
    can_cast,
    complex64,
    complex128,
    complexfloating,
    finfo,
    float16,
    float32,
    float64,
    floating,
    generic,
    iinfo,
    inexact,
    int8,
    int16,
    int32,
    int64,
    integer,
    issubdtype,
    number,
    promote_types,
    result_type,
    signedinteger,
    uint8,
    uint16,
    uint32,
    uint64,
    unsignedinteger,
)
from .editing import (
    choose,
    compress,
    delete,
    extract,
    fill_diagonal,
    insert,
    piecewise,
    put,
    put_along_axis,
    resize,
    trim_zeros,
)
from .einsum_ops import einsum
from .einsum_path import einsum_path
from .elementwise_extra import divmod, fabs, float_power, fmod, modf, pow, sinc
from .float_bits import copysign, frexp, ldexp, nextafter, signbit, spacing
from .float_bits import view as _view
from .functional import (
    apply_along_axis,
    apply_over_axes,
    fromfunction,
    geomspace,
    index_exp,
    indices,
    ix_,
    logspace,
    mgrid,
    ogrid,
    s_,
    vectorize,
)
from .histograms import bincount, digitize, histogram, histogram2d, histogram_bin_edges, histogramdd
from .host_io import (
    array_repr,
    array_str,
    frombuffer,
    fromiter,
    fromstring,
    get_printoptions,
    load,
    printoptions,
    save,
    savez,
    set_printoptions,
)
from .index_tricks import (
    c_,
    diag_indices,
    diag_indices_from,
    r_,
    ravel_multi_index,
    tri,
    tril_indices,
    tril_indices_from,
    triu_indices,
    triu_indices_from,
    unravel_index,
)
from .indexing import argsort, getitem, interp, repeat, searchsorted, sort, take, take_along_axis
from .linalg_ops import cross, diag, diagonal, dot, inner, kron, matmul, outer, tensordot, trace, vdot
from .nan_reductions import nanargmax, nanargmin, nancumprod, nancumsum, nanprod, nanstd, nanvar
from .nonzero import argwhere, flatnonzero, nonzero
from .padding import pad
from .polynomials import (
    poly,
    polyadd,
    polyder,
    polydiv,
    polyfit,
    polyint,
    polymul,
    polysub,
    polyval,
    roots,
    vander,
)
from .pyfunc_place import euler_gamma, frompyfunc, mask_indices, place
from .quantiles import nanmedian, nanpercentile, nanquantile, percentile, quantile
from .rearranging import append, dsplit, hsplit, rollaxis, rot90, row_stack, vsplit
from .reductions import all, amax, amin, any, argmax, argmin, cumsum, max, mean, min, prod, std, sum, var
from .selection import argpartition, partition, select
from .setops import (
    intersect1d,
    isin,
    lexsort,
    setdiff1d,
    setxor1d,
    union1d,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from .shape_ops import (
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_to,
    column_stack,
    concatenate,
    diff,
    dstack,
    expand_dims,
    flip,
    fliplr,
    flipud,
    hstack,
    meshgrid,
    moveaxis,
    ravel,
    reshape,
    roll,
    split,
    squeeze,
    stack,
    swapaxes,
    tile,
    transpose,
    vstack,
)
from .statistics import (
    allclose,
    average,
    count_nonzero,
    median,
    nanmax,
    nanmean,
    nanmin,
    nansum,
    ptp,
)
from .ufuncs import (
    abs,
    absolute,
    acos,
    acosh,
    add,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    around,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_count,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    cbrt,
    ceil,
    clip,
    cos,
    cosh,
    deg2rad,
    degrees,
    divide,
    equal,
    exp,
    exp2,
    expm1,
    fix,
    floor,
    floor_divide,
    fmax,
    fmin,
    greater,
    greater_equal,
    heaviside,
    hypot,
    invert,
    isclose,
    isfinite,
    isinf,
    isnan,
    isneginf,
    isposinf,
    left_shift,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logaddexp2,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    nan_to_num,
    negative,
    not_equal,
    positive,
    power,
    rad2deg,
    radians,
    reciprocal,
    remainder,
    right_shift,
    rint,
    round,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    true_divide,
    trunc,
)
from .ufuncs import where_ as _where
from .windows import bartlett, blackman, hamming, hanning, kaiser, packbits, unpackbits

dtype, ndarray = _np.dtype, _np.ndarray
bitwise_left_shift, bitwise_right_shift, bitwise_invert = left_shift, right_shift, invert    # NumPy 2's names
# jax.numpy's other names for these dtypes, and isdtype (NumPy's: it does not know bfloat16)
bool = bool_
int_, uint, float_, complex_ = int64, uint64, float64, complex128
single, double, csingle, cdouble = float32, float64, complex64, complex128
isdtype = _np.isdtype
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None


def where(condition, x=None, y=None, *, size=None, fill_value=None):
    """where(condition, x, y) chooses elementwise; where(condition) is nonzero(condition) (with size= and
    fill_value= under a trace, as JAX's)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise TypeError("where: size= and fill_value= apply only to where(condition) with one argument")
    return _where(condition, x, y)


# typed key arrays pass through these as through JAX's (key_arrays.py)
stack, concatenate = _key_arrays.stack(stack), _key_arrays.concatenate(concatenate)
broadcast_to, where = _key_arrays.broadcast_to(broadcast_to), _key_arrays.where(where, expand_dims)
expand_dims = _key_arrays.expand_dims(expand_dims)


def shape(a):
    return asarray(a).shape if isinstance(asarray(a), _Tracer) else _np.shape(a)


def ndim(a):
    return len(shape(a))


def size(a, axis=None):
    return int(_np.prod(shape(a))) if axis is None else shape(a)[axis]


def _reshape_method(self, *shape, order="C"):
    return reshape(self, shape[0] if len(shape) == 1 else shape, order)


def _transpose_method(self, *axes):
    return transpose(self, axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else (axes or None))


def _swap(f):
    return lambda self, other: f(other, self)


def _array_namespace(self, *, api_version=None):
    """The array API namespace of a traced array: tracejit.numpy (as a jax.Array's is jax.numpy)."""
    return _sys.modules[__name__]


_METHODS = {
    "__add__": add, "__radd__": _swap(add), "__sub__": subtract, "__rsub__": _swap(subtract),
    "__mul__": multiply, "__rmul__": _swap(multiply), "__truediv__": divide, "__rtruediv__": _swap(divide),
    "__floordiv__": floor_divide, "__rfloordiv__": _swap(floor_divide), "__mod__": remainder,
    "__rmod__": _swap(remainder), "__pow__": power, "__rpow__": _swap(power), "__matmul__": matmul,
    "__rmatmul__": _swap(matmul), "__and__": bitwise_and, "__rand__": _swap(bitwise_and), "__or__": bitwise_or,
    "__ror__": _swap(bitwise_or), "__xor__": bitwise_xor, "__rxor__": _swap(bitwise_xor),
    "__lshift__": left_shift, "__rlshift__": _swap(left_shift), "__rshift__": right_shift,
    "__rrshift__": _swap(right_shift),
    "__neg__": negative, "__pos__": positive, "__abs__": absolute, "__invert__": invert,
    "__eq__": equal, "__ne__": not_equal, "__lt__": less, "__le__": less_equal, "__gt__": greater,
    "__ge__": greater_equal, "__getitem__": getitem,
    "reshape": _reshape_method, "transpose": _transpose_method, "astype": astype, "sum": sum, "mean": mean,
    "max": max, "min": min, "prod": prod, "argmax": argmax, "argmin": argmin, "dot": dot, "ravel": ravel,
    "flatten": ravel, "squeeze": squeeze, "cumsum": cumsum, "var": var, "std": std, "any": any, "all": all,
    "clip": clip, "round": round, "swapaxes": swapaxes, "take": take, "repeat": repeat,
    "sort": sort, "argsort": argsort, "cumprod": cumprod, "nonzero": nonzero, "conj": conj, "conjugate": conjugate,
    "real": property(real), "imag": property(imag),
    "T": property(lambda self: transpose(self)),
    "at": property(lambda self: _AtIndexer(self)),
    # the rest of jax.Array's computing methods (compress and searchsorted take the array as their second
    # and first argument, as JAX's methods do)
    "mT": property(lambda self: matrix_transpose(self)), "itemsize": property(lambda self: self.dtype.itemsize),
    "nbytes": property(lambda self: self.size * self.dtype.itemsize), "copy": lambda self: copy(self),
    "diagonal": diagonal, "trace": trace, "ptp": ptp, "argpartition": argpartition, "choose": choose,
    "compress": lambda self, condition, axis=None, **kw: compress(condition, self, axis, **kw),
    "searchsorted": searchsorted, "view": _view, "__array_namespace__": _array_namespace,
}
for _name, _fn in _METHODS.items():
    setattr(_Tracer, _name, _fn)

__all__ = [n for n in dir() if not n.startswith("_")]
_document_as_numpy(globals(), _np, "numpy")

from .ufunc_objects import ufunc  # (after the functions it wraps are documented)


def _cumulative(prim):
    def accumulate(a, axis, dtype):
        a = asarray(a) if dtype is None else astype(a, dtype)
        return _bind(prim, a, axis=_normalize_axis(axis, ndim(a)), reverse=False)
    return accumulate


_ufuncs = {}
_UFUNC_METHODS = {   # name: (identity, reduce, accumulate, at)
    "add": (0, sum, lambda a, axis, dtype: cumsum(a, axis, dtype), lambda at, b: at.add(b)),
    "subtract": (None, None, None, lambda at, b: at.add(negative(b))),
    "multiply": (1, prod, lambda a, axis, dtype: cumprod(a, axis, dtype), lambda at, b: at.multiply(b)),
    "maximum": (None, lambda a, axis, dtype, **kw: max(a if dtype is None else astype(a, dtype), axis, **kw),
                _cumulative(_cu.cummax_p), lambda at, b: at.max(b)),
    "minimum": (None, lambda a, axis, dtype, **kw: min(a if dtype is None else astype(a, dtype), axis, **kw),
                _cumulative(_cu.cummin_p), lambda at, b: at.min(b)),
    "logical_and": (True, lambda a, axis, dtype, initial=None, **kw: all(a, axis, **kw), None, None),
    "logical_or": (False, lambda a, axis, dtype, initial=None, **kw: any(a, axis, **kw), None, None),
}
for _name in ("add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power", "remainder", "mod",
              "fmod", "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or", "logical_xor", "bitwise_and",
              "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "logaddexp", "logaddexp2", "hypot", "arctan2",
              "copysign", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "heaviside", "gcd",
              "lcm"):
    _fn = globals()[_name]
    if id(_fn) not in _ufuncs:
        _identity, _reduce, _accumulate, _at = _UFUNC_METHODS.get(_name, (None, None, None, None))
        _ufuncs[id(_fn)] = ufunc(_fn, identity=_identity, reducer=_reduce, accumulator=_accumulate, updater=_at)
for _name in __all__:       # every name of a wrapped function (aliases: divide and true_divide, atan2 ...)
    if id(globals()[_name]) in _ufuncs:
        globals()[_name] = _ufuncs[id(globals()[_name])]
__all__ += ["ufunc"]
