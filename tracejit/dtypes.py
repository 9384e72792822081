"""Dtype helpers under jax.dtypes's names, so that JAX code that asks `jax.dtypes.*` runs unchanged.
tracejit keeps dtypes as given (JAX with x64 enabled), so canonicalize_dtype only checks and normalises the
spelling; bfloat16 is a floating type, and float0 is the dtype JAX gives the tangents of integer values."""
import ml_dtypes
import numpy as np

from .core.api_util import FLOAT0
from .core.avals import canonical_dtype, dtype_kind
from .core.promotion import TypePromotionError
from .numpy.dtypes import extended, finfo, iinfo, issubdtype, prng_key, promote_types
from .numpy.dtypes import result_type as _result_type

bfloat16 = ml_dtypes.bfloat16
float0 = FLOAT0     # JAX's: a zero-size structured dtype


def canonicalize_dtype(dtype, allow_extended_dtype=False):
    """dtype as an np.dtype tracejit computes in (unchanged: no x64 narrowing); a TypeError for unsupported ones."""
    return canonical_dtype(dtype)


def result_type(*args, return_weak_type_flag=False):
    """The dtype of an operation on args, Python scalars weakly typed (NumPy 2's promotion, as tnp.result_type);
    with return_weak_type_flag, (dtype, whether it is weak: every argument a Python int, float or complex), as jax.dtypes.result_type."""
    dtype = _result_type(*args)
    if return_weak_type_flag:
        return dtype, bool(args) and all(type(a) in (int, float, complex) for a in args)
    return dtype


def scalar_type_of(x):
    """The Python scalar type (bool, int, float, complex) of the kind of x's dtype."""
    kind = dtype_kind(np.result_type(x) if not hasattr(x, "dtype") else x.dtype)
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind]


def itemsize_bits(dtype):
    """The size of one element of dtype in bits."""
    return 0 if np.dtype(dtype) == float0 else canonical_dtype(dtype).itemsize * 8


__all__ = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo", "float0", "iinfo", "issubdtype",
           "itemsize_bits", "prng_key", "promote_types", "result_type", "scalar_type_of"]
