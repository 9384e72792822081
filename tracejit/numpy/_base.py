"""Conversion, promotion and broadcasting: how NumPy's implicit rules become explicit IR."""
import numpy as np

from ..core.avals import (
    DEFAULT_FLOAT,
    SHORT_NAMES,
    Dim,
    aval_of,
    broadcast_shapes,
    canonical_dtype,
    is_python_scalar,
    result_dtype,
)
from ..core.errors import ShapeError
from ..core.trace import Tracer, bind
from ..primitives import elementwise as ew
from ..primitives import shapes as sh

ArrayLike = (Tracer, np.ndarray, np.generic, bool, int, float)


def stop_gradient(x):
    """x, with no derivative (tj.stop_gradient; here so that tracejit.numpy can use it)."""
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
    if isinstance(x, complex) or (isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind not in "fiub"):
        raise TypeError(f"tracejit does not support values of type {type(x).__name__}"
                        + (f" with dtype {x.dtype}" if hasattr(x, "dtype") else ""))
    if not isinstance(x, (np.ndarray, np.generic, bool, int, float)):
        raise TypeError(f"cannot convert a {type(x).__name__} to an array")
    out = np.asarray(x)
    if dtype is not None:
        return out.astype(canonical_dtype(dtype))
    if out.dtype not in SHORT_NAMES:   # widened, it would promote and overflow unlike NumPy: say so instead
        raise TypeError(f"a value of dtype {out.dtype} (shape {out.shape}): tracejit supports float32, float64, "
                        f"int32, int64 and bool; convert it first, e.g. .astype(np.{_WIDER[out.dtype.kind]})")
    return out


_WIDER = {"f": "float32", "i": "int32", "u": "int64"}


def array(obj, dtype=None):
    """Like np.array; nested lists may hold tracers, which are stacked."""
    if isinstance(obj, (list, tuple)):
        if any(isinstance(x, Tracer) for x in _flat_items(obj)):
            from .shape_ops import stack
            return stack([array(x, dtype) for x in obj])
        try:
            out = np.array(obj)
        except ValueError as e:
            raise TypeError(f"cannot make an array from a ragged nested sequence: {e}") from None
        if out.dtype == object:
            raise TypeError("cannot make an array from a ragged nested sequence or from objects")
        return asarray(out, dtype)
    out = asarray(obj, dtype)
    return np.array(out) if isinstance(out, (bool, int, float)) else out


def _flat_items(obj):
    for x in obj:
        if isinstance(x, (list, tuple)):
            yield from _flat_items(x)
        else:
            yield x


def astype(x, dtype):
    dtype = canonical_dtype(dtype)
    if isinstance(x, Tracer):
        if x.dtype == dtype and not x.weak_type:
            return x
        return bind(ew.convert_element_type_p, x, new_dtype=dtype, weak_type=False)
    return np.asarray(x).astype(dtype)


def _to_dtype(x, dtype):
    """Convert one operand to the promoted dtype; Python scalars become typed scalars (IR literals)."""
    if isinstance(x, Tracer):
        if x.dtype == dtype:
            return x
        return bind(ew.convert_element_type_p, x, new_dtype=dtype, weak_type=False)
    if is_python_scalar(x):
        return np.asarray(x, dtype)    # as NumPy 2: an int out of the dtype's range raises OverflowError
    out = np.asarray(x)
    return out.astype(dtype) if out.dtype != dtype else out


def promote(*xs, to_float=False):
    xs = [asarray(x) for x in xs]
    dtype, _ = result_dtype(*[aval(x) for x in xs])
    if to_float and dtype.kind != "f":
        dtype = DEFAULT_FLOAT
    return [_to_dtype(x, dtype) for x in xs]


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


def normalize_shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(d if isinstance(d, Dim) else int(d) for d in shape)


def full(shape, fill_value, dtype=None):
    fill = asarray(fill_value, dtype)
    if not isinstance(fill, Tracer):
        fill = np.asarray(fill)
    return broadcast_to_shape(fill, normalize_shape(shape))
