"""NumPy's dtype objects and functions over tracejit's dtypes: the scalar types (`tnp.uint8`, `tnp.bfloat16`,
`tnp.complex64` ...), the abstract ones (`tnp.integer`, `tnp.floating` ...), and result_type, promote_types, can_cast, iinfo,
finfo and issubdtype with NumPy 2's promotion (core.avals) and bfloat16 a floating type, which NumPy's own
functions do not know it to be (ml_dtypes gives it NumPy's kind 'V')."""
import ml_dtypes
import numpy as np

from ..core import avals
from ..core.promotion import TypePromotionError, check_promotion  # noqa: F401 - TypePromotionError: for tj.dtypes
from ..core.trace import Tracer

bool_, int8, int16, int32, int64 = np.bool_, np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, bfloat16, float32, float64 = np.float16, ml_dtypes.bfloat16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128
generic, number, integer, signedinteger, unsignedinteger = (np.generic, np.number, np.integer, np.signedinteger,
                                                           np.unsignedinteger)
inexact, floating, complexfloating = np.inexact, np.floating, np.complexfloating
dtype = np.dtype
_FLOAT_ANCESTORS = (np.floating, np.inexact, np.number, np.generic)


class extended(np.generic):
    """The abstract scalar type of dtypes that are not NumPy's (jax.dtypes.extended): tracejit's one such dtype is
    that of typed PRNG keys, so `issubdtype(keys.dtype, extended)` tells keys from arrays, as in JAX."""


class prng_key(extended):
    """The abstract scalar type of typed PRNG keys' dtype (jax.dtypes.prng_key), under extended."""


def _dtype_of(x):
    """The dtype of an array, a tracer, a scalar type or any dtype spelling (a TypeError naming it if none)."""
    if isinstance(x, (Tracer, np.ndarray, np.generic)):
        return x.dtype
    return avals.canonical_dtype(x)


def result_type(*args):
    """The dtype NumPy 2 gives an operation on args: arrays, tracers, NumPy scalars and dtypes are strongly
    typed, Python scalars weakly (they take the dtype of the others: result_type(np.uint8, 1) is uint8)."""
    if not args:
        raise ValueError("result_type: at least one array or dtype is required")
    operands = [avals.aval_of(x) if avals.is_python_scalar(x) else avals.ShapedArray((), _dtype_of(x))
                for x in args]
    check_promotion(operands)
    return avals.result_dtype(*operands)[0]


def promote_types(type1, type2):
    """NumPy's promote_types (bfloat16 promotes as float16 does; the two meet in float32); in strict mode two
    different dtypes are a TypePromotionError."""
    check_promotion([avals.ShapedArray((), _dtype_of(type1)), avals.ShapedArray((), _dtype_of(type2))])
    return avals.promote_types(_dtype_of(type1), _dtype_of(type2))


def can_cast(from_, to, casting="safe"):
    """NumPy's can_cast between dtypes (or the dtypes of arrays and tracers); NumPy 2 refuses Python scalars.
    A safe cast to or from bfloat16 is one that promotion allows (promote_types(from_, to) is to)."""
    if avals.is_python_scalar(from_):
        raise TypeError("can_cast() does not support Python ints, floats, and complex because the result used to "
                        "depend on the value. Use the dtype of the value instead.")
    from_, to = _dtype_of(from_), _dtype_of(to)
    if avals.bfloat16 in (from_, to) and casting == "safe":     # NumPy cannot promote most pairs with it
        return avals.promote_types(from_, to) == to
    return bool(np.can_cast(from_, to, casting))


def iinfo(int_type):
    return np.iinfo(_dtype_of(int_type))


def finfo(float_type):
    """np.finfo, or ml_dtypes.finfo for bfloat16."""
    return avals.finfo(_dtype_of(float_type))


def _is_bfloat16(x):
    try:
        return np.dtype(x) == avals.bfloat16
    except TypeError:       # an abstract type (np.floating ...)
        return False


def issubdtype(arg1, arg2):
    """np.issubdtype, with bfloat16 under floating, inexact and number (as in JAX), and the dtype of typed keys
    (its `type` is prng_key) under prng_key, extended and generic only."""
    kind1, kind2 = getattr(arg1, "type", None), getattr(arg2, "type", None)
    if isinstance(kind1, type) and issubclass(kind1, extended) and not isinstance(arg1, np.dtype):
        target = kind2 if isinstance(kind2, type) and issubclass(kind2, extended) else arg2
        return isinstance(target, type) and issubclass(kind1, target)
    if isinstance(kind2, type) and issubclass(kind2, extended) and not isinstance(arg2, np.dtype):
        return False
    if _is_bfloat16(arg1):
        return arg2 in _FLOAT_ANCESTORS or _is_bfloat16(arg2)
    return bool(np.issubdtype(arg1, arg2))
