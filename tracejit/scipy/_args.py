"""Argument handling shared by tracejit.scipy.special, .stats and .linalg."""
import functools

import numpy as np

from ..core.avals import HALF_FLOATS, is_python_scalar, result_dtype
from ..core.errors import ShapeError
from ..numpy._base import astype, aval, broadcast_operands, promote, promote_linalg


def real_args(name, *args):
    """The arguments promoted to one float dtype (integers and bools to float64, as SciPy's; float16 and bfloat16
    kept, as JAX's) and broadcast to one shape; complex arguments are refused (a TypeError, as the real primitives'
    shape rules refuse them; JAX's jax.scipy.special raises ValueError or TypeError depending on the function)."""
    xs = promote(*args, to_float="float64")
    if aval(xs[0]).dtype.kind == "c":
        raise TypeError(f"{name} does not support complex-valued inputs, got {aval(xs[0]).dtype}")
    return broadcast_operands(*xs, op=name)


def half_floats_in_float32(fn):
    """fn computing float16 and bfloat16 arguments in float32, its float results rounded once to their dtype, as
    compiled code computes them. Without it, constants and eager arrays would meet Python floats in NumPy's operators,
    which round every step and make float32 of bfloat16 (ml_dtypes)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        arrays = [a for a in (*args, *kwargs.values()) if a is not None and not is_python_scalar(a)
                  and not isinstance(a, (tuple, list, str))]
        dtype = result_dtype(*[aval(a) for a in arrays])[0] if arrays else None
        if dtype not in HALF_FLOATS:
            return fn(*args, **kwargs)

        def widened(a):
            return astype(a, np.float32) if any(a is b for b in arrays) and aval(a).dtype in HALF_FLOATS else a

        out = fn(*map(widened, args), **{k: widened(v) for k, v in kwargs.items()})
        rounded = [astype(o, dtype) if aval(o).dtype == np.float32 else o for o in (out if isinstance(out, tuple)
                                                                                   else (out,))]
        return tuple(rounded) if isinstance(out, tuple) else rounded[0]
    return wrapper


def standardized(name, x, loc, scale):
    """(x - loc) / scale of the promoted, broadcast arguments."""
    x, loc, scale = real_args(name, x, loc, scale)
    return (x - loc) / scale


def located(name, standard, q, loc, scale):
    """standard(q) * scale + loc: a quantile function from the standard distribution's."""
    q, loc, scale = real_args(name, q, loc, scale)
    return standard(q) * scale + loc


def square_matrices(name, *xs):
    """The operands in LAPACK's dtype (promote_linalg), each checked to be a stack of square matrices."""
    xs = promote_linalg(*xs, name=name)
    for x in xs:
        shape = aval(x).shape
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise ShapeError(f"{name}: needs square matrices of shape (..., n, n), got shape {shape}")
    return xs
