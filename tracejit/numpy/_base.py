"""Conversion, promotion and broadcasting: how NumPy's implicit rules become explicit IR."""
import functools
import warnings

import numpy as np

from ..core.avals import (
    DEFAULT_FLOAT,
    HALF_FLOATS,
    PYTHON_SCALARS,
    SHORT_NAMES,
    Dim,
    array_of,
    aval_of,
    broadcast_shapes,
    canonical_dtype,
    check_shape,
    dtype_kind,
    is_inexact,
    is_python_scalar,
    normalize_axis,
    promote_types,
    result_dtype,
    shape_arg,
    smallest_float,
)
from ..core.errors import ShapeError
from ..core.pytree import LEAF, tree_map, tree_structure
from ..core.trace import Tracer, bind, require_fit
from ..primitives import elementwise as ew
from ..primitives import shapes as sh
from .dtypes import check_promotion

ArrayLike = (Tracer, np.ndarray, np.generic, *PYTHON_SCALARS)


def stop_gradient(x):
    """x (each leaf of a pytree, as JAX's), with no derivative (tj.stop_gradient; here so that tracejit.numpy
    can use it)."""
    if tree_structure(x) != LEAF:
        return tree_map(stop_gradient, x)
    x = asarray(x)
    return x if is_python_scalar(x) else bind(ew.stop_gradient_p, x)


def reject_out(fn, out):
    """NumPy passes out=None to the methods behind np.sum(x) and friends; an output array cannot be honoured
    (tracejit's results are values, never written in place)."""
    if out is not None:
        raise NotImplementedError(f"{fn}: out= is not supported (tracejit returns new arrays, never writes into "
                                  f"one), got a {type(out).__name__}; expected None")


def aval(x):
    return x.aval if isinstance(x, Tracer) else aval_of(x)


def asarray(x, dtype=None):
    """A tracer stays a tracer; anything else becomes a numpy array (or a typed scalar)."""
    if isinstance(x, Tracer):
        return x if dtype is None else astype(x, dtype)
    if isinstance(x, Dim):     # x.shape[k] of a symbolic dimension as a number: its size, read at run time,
        size = bind(sh.dim_size_p, dim=x)           # weakly typed as the Python int it stands for
        return asarray(bind(ew.convert_element_type_p, size, new_dtype=size.aval.dtype, weak_type=True), dtype)
    if isinstance(x, (list, tuple)):
        return array(x, dtype)
    if is_python_scalar(x) and dtype is None:
        return x
    if isinstance(x, (np.ndarray, np.generic)) and dtype_kind(x.dtype) not in "fiubc":
        raise TypeError(f"tracejit does not support values of type {type(x).__name__} with dtype {x.dtype}")
    if not isinstance(x, (np.ndarray, np.generic, *PYTHON_SCALARS)):
        raise TypeError(f"cannot convert a {type(x).__name__} to an array")
    out = np.asarray(x) if dtype is None else array_of(x, canonical_dtype(dtype))   # an int that does not fit:
    if out.dtype not in SHORT_NAMES:   # (OverflowError) long double: it would not round like NumPy: say so instead
        raise TypeError(f"a value of dtype {out.dtype} (shape {out.shape}): tracejit supports "
                        f"{', '.join(map(str, SHORT_NAMES))}; convert it first, e.g. "
                        f".astype(np.{_NARROWER[out.dtype.kind]})")
    return out


_NARROWER = {"f": "float64", "c": "complex128"}    # for long double and its complex


def array(obj, dtype=None):
    """Like np.array; nested lists may hold tracers, which are stacked."""
    if isinstance(obj, (list, tuple)):
        if any(isinstance(x, Tracer) for x in _flat_items(obj)):
            return stack([array(x, dtype) for x in obj])
        try:
            out = np.array(obj)
        except ValueError as e:
            raise TypeError(f"cannot make an array from a ragged nested sequence: {e}") from None
        if out.dtype == object:
            raise TypeError("cannot make an array from a ragged nested sequence or from objects")
        return asarray(out, dtype)
    out = asarray(obj, dtype)
    return np.array(out) if is_python_scalar(out) else out


def stack(arrays, axis=0):
    """np.stack: one concatenate of the arrays, each with a new axis (here, below the other shape functions,
    since array() stacks nested lists that hold tracers)."""
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("stack: need at least one array")
    shapes = {aval(a).shape for a in arrays}
    if len(shapes) > 1:
        raise ShapeError(f"stack: all arrays must have the same shape, got {sorted(shapes)}")
    axis = normalize_axis(axis, aval(arrays[0]).ndim + 1)
    rows = promote(*[bind(sh.expand_dims_p, a, dimensions=(axis,)) for a in arrays])
    return rows[0] if len(rows) == 1 else bind(sh.concatenate_p, *rows, dimension=axis)


def _flat_items(obj):
    for x in obj:
        if isinstance(x, (list, tuple)):
            yield from _flat_items(x)
        else:
            yield x


def astype(x, dtype):
    """x in dtype, as NumPy's astype (complex to real keeps the real part and warns, np.exceptions.ComplexWarning),
    but float -> int saturates (NaN -> 0) also eagerly, as compiled."""
    dtype = canonical_dtype(dtype)
    x = asarray(x)
    if aval(x).dtype.kind == "c" and dtype.kind not in "cb":
        warnings.warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning,
                      stacklevel=2)
    if isinstance(x, Tracer) and x.dtype == dtype and not x.weak_type:
        return x
    return bind(ew.convert_element_type_p, x, new_dtype=dtype, weak_type=False)


def _to_dtype(x, dtype):
    """Convert one operand to the promoted dtype; Python scalars become typed scalars (IR literals)."""
    if isinstance(x, Tracer):
        if x.dtype == dtype:
            return x
        if x.weak_type and x.dtype.kind in "iu" and dtype.kind in "iu":
            require_fit(x, dtype)      # a Python int argument: checked when the jitted function is called
        return bind(ew.convert_element_type_p, x, new_dtype=dtype, weak_type=False)
    if is_python_scalar(x):
        return array_of(x, dtype)    # as NumPy 2: an int out of the dtype's range raises OverflowError
    out = np.asarray(x)
    return out.astype(dtype) if out.dtype != dtype else out


def promote(*xs, to_float=False):
    """The operands in their NumPy 2 result dtype. to_float=True: in the float dtype NumPy's math functions
    compute that dtype in (float16 for int8, float64 for int32: smallest_float); to_float="float64": integers
    and bools in float64 (NumPy's true_divide and mean)."""
    xs = [asarray(x) for x in xs]
    avals = [aval(x) for x in xs]
    check_promotion(avals)
    dtype, weak = result_dtype(*avals)
    strong = [a for a in avals if not a.weak_type]
    if to_float is True and strong and result_dtype(*strong)[0] == dtype:
        # NumPy's loop: the first float that every array casts to safely (a Python scalar of a higher kind than
        # the arrays has made dtype its default, float64 or int64, instead)
        dtype, _ = result_dtype(*[a if is_inexact(a.dtype) else a.update(dtype=smallest_float(a.dtype)) for a in avals])
    if to_float and not is_inexact(dtype):
        dtype = DEFAULT_FLOAT if to_float == "float64" else smallest_float(dtype)
    if weak:
        return [_to_weak(x, dtype) for x in xs]
    return [_to_dtype(x, dtype) for x in xs]


_PYTHON_TYPE = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def _to_weak(x, dtype):
    """An operand of an operation among weakly typed values only (Python scalars, and tracers standing for
    them), converted to dtype and kept weak, as JAX's: `where(c, 1.0, 0.0) * x_f32` stays float32."""
    if isinstance(x, Tracer):
        return x if x.dtype == dtype else bind(ew.convert_element_type_p, x, new_dtype=dtype, weak_type=True)
    return _PYTHON_TYPE[dtype_kind(dtype)](x)


def promote_linalg(*xs, name):
    """The operands of a LAPACK-backed function as NumPy's and SciPy's linalg take them: integers and bools in
    float64; float16 and bfloat16, which LAPACK has no routines for, refused (NumPy's linalg refuses float16)."""
    xs = promote(*xs, to_float="float64")
    dtype = aval(xs[0]).dtype
    if dtype in HALF_FLOATS:
        raise TypeError(f"{name}: {dtype} matrices are not supported (LAPACK has no 16-bit floats; NumPy refuses "
                        "float16 too): convert them to float32")
    return xs


def inexact_dtype(*dtypes):
    """The dtype JAX's promote_dtypes_inexact (x64) computes dtypes in: their promoted inexact ones if any, else
    float32 for bools and integers of up to 32 bits and float64 for wider ones (NumPy would take float64 for int32,
    and widen int32 with float32 to float64)."""
    dtypes = [np.dtype(d) for d in dtypes]
    floats = [d for d in dtypes if is_inexact(d)]
    if floats:
        return functools.reduce(promote_types, floats)
    return np.dtype(np.float32 if functools.reduce(promote_types, dtypes).itemsize <= 4 else np.float64)


def promote_inexact(*xs):
    """The operands in one inexact dtype, as JAX's promote_dtypes_inexact (see inexact_dtype)."""
    xs = [asarray(x) for x in xs]
    dtype = inexact_dtype(*[aval(x).dtype for x in xs])
    return [astype(x, dtype) for x in xs]


def broadcast_to_shape(x, shape):
    """Explicit broadcast_in_dim (numpy trailing-axis alignment); no-op when the shape already fits."""
    a = aval(x)
    if a.shape == tuple(shape):
        return x
    broadcast_shapes(a.shape, shape, op="broadcast_to")
    if len(a.shape) > len(shape) or any(d not in (1, s) for d, s in zip(a.shape[::-1], shape[::-1])):
        raise ShapeError(f"broadcast_to: cannot broadcast shape {a.shape} to {tuple(shape)}")
    lead = len(shape) - a.ndim
    return bind(sh.broadcast_in_dim_p, x, shape=tuple(shape), broadcast_dimensions=tuple(range(lead, len(shape))))


def broadcast_operands(*xs, op):
    """Broadcast to a common shape; scalar constants stay scalars (they print as literals)."""
    shapes = [aval(x).shape for x in xs]
    shape = broadcast_shapes(*shapes, op=op)
    return [x if s == shape or (not s and not isinstance(x, Tracer)) else broadcast_to_shape(x, shape)
            for x, s in zip(xs, shapes)]


def normalize_shape(shape, what="shape"):
    """A shape argument as a tuple of sizes, checked as NumPy checks one (TypeError for a size that is not an
    integer, ValueError for a negative or too large one), naming `what`."""
    return check_shape(shape_arg(shape, what), what=what)


def int_array(value, what, shape=None, bools=True):
    """A concrete integer argument (pad widths, tile's reps) as an int64 array, broadcast to `shape` if given: a
    TypeError for other dtypes (bools too with bools=False), a ValueError naming it if it is too large for int64
    or does not broadcast."""
    out = np.asarray(value)
    if out.dtype == object and all(isinstance(v, int) for v in out.flat):
        raise ValueError(f"{what} {value!r}: too big (array is too big)")
    if out.size and out.dtype.kind not in ("biu" if bools else "iu") or out.ndim > (1 if shape is None else len(shape)):
        raise TypeError(f"{what} must be an integer or a sequence of integers, got {value!r}")
    try:
        return (out if shape is None else np.broadcast_to(out, shape)).astype(np.int64)
    except (ValueError, OverflowError):
        raise ValueError(f"{what} {value!r} does not fit shape {shape} or int64") from None


def full(shape, fill_value, dtype=None):
    fill = asarray(fill_value, dtype)
    if not isinstance(fill, Tracer):
        fill = np.asarray(fill)
    return broadcast_to_shape(fill, normalize_shape(shape))
