"""Creating arrays (zeros, full, arange, linspace, eye ...) and the triangles tril and triu, with NumPy's
parameters: a memory order other than C's and like= are refused (tracejit's arrays are C-ordered values);
device= and subok= are accepted and change nothing (one CPU device, no subclasses)."""
import builtins

import numpy as np

from ..core.avals import DEFAULT_FLOAT, DEFAULT_INT, canonical_dtype, index_arg
from ..core.errors import ShapeError
from ..core.trace import Tracer, bind
from ..primitives import shapes as sh
from . import _base
from ._base import aval, promote
from .shape_ops import reshape
from .ufuncs import add, divide, equal, floor, greater_equal, multiply, subtract, where_


def check_layout(fn, order=None, like=None):
    """NumPy's options that tracejit takes at their defaults only."""
    if order not in (None, "C", "K", "A"):
        raise NotImplementedError(f"{fn}: order={order!r} is not supported: tracejit's arrays are C-ordered")
    if like is not None:
        raise NotImplementedError(f"{fn}: like= (NEP 35 array-function dispatch) is not supported; got a "
                                  f"{type(like).__name__}, expected None")


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """A tracer stays a tracer; anything else becomes a numpy array (a Python scalar stays one, weakly typed).
    copy changes nothing: tracejit never writes into an array."""
    check_layout("asarray", order, like)
    return _base.asarray(a, dtype)


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, ndmax=0, like=None):
    """Like np.array; nested lists may hold tracers, which are stacked. ndmin adds leading axes of size 1."""
    check_layout("array", order, like)
    if ndmax:
        raise NotImplementedError("array: ndmax= is not supported")
    out = _base.array(object, dtype)
    shape = aval(out).shape
    return out if len(shape) >= ndmin else reshape(out, (1,) * (ndmin - len(shape)) + tuple(shape))


def astype(x, dtype, /, *, copy=True, device=None):
    return _base.astype(x, dtype)


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    check_layout("full", order, like)
    return _base.full(shape, fill_value, dtype)


def zeros(shape, dtype=None, order="C", *, device=None, like=None):
    check_layout("zeros", order, like)
    return _base.full(shape, 0, dtype or DEFAULT_FLOAT)


def ones(shape, dtype=None, order="C", *, device=None, like=None):
    check_layout("ones", order, like)
    return _base.full(shape, 1, dtype or DEFAULT_FLOAT)


def empty(shape, dtype=None, order="C", *, device=None, like=None):
    """Zeros: a traced program has no uninitialised memory to return (JAX's are zeros too)."""
    return zeros(shape, dtype, order, like=like)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    check_layout("full_like", order)
    a = aval(asarray(a))
    return _base.full(a.shape if shape is None else shape, fill_value, dtype or a.dtype)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return full_like(a, 0, dtype, order, subok, shape)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return full_like(a, 1, dtype, order, subok, shape)


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return full_like(prototype, 0, dtype, order, subok, shape)


def _iota(dtype, shape, dimension):
    return bind(sh.iota_p, dtype=canonical_dtype(dtype), shape=tuple(shape), dimension=dimension)


def arange(start, stop=None, step=1, dtype=None, *, device=None, like=None):
    check_layout("arange", like=like)
    if stop is None:
        start, stop = 0, start
    start, stop, step = (s.item() if isinstance(s, np.generic) else s for s in (start, stop, step))
    if builtins.any(isinstance(s, Tracer) for s in (start, stop, step)):
        raise TypeError("arange: start, stop and step must be concrete; the length of the result must be "
                        "known when tracing (use static_argnums for them)")
    if builtins.any(np.ndim(s) for s in (start, stop, step)):
        raise ValueError(f"arange: start, stop and step must be scalars, got {start!r}, {stop!r}, {step!r}")
    length = len(range(int(np.ceil((stop - start) / step)))) if step else 0
    dtype = canonical_dtype(dtype or np.arange(start, stop, step).dtype)
    if dtype == np.bool_:
        np.arange(start, stop, step, dtype)     # NumPy's TypeError for more than 2 elements (False, True)
    index = _iota(dtype, (length,), 0) if length else np.zeros(0, dtype)
    if start == 0 and step == 1:
        return index
    return astype(add(multiply(index, step), start), dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """NumPy's formula (start + i * step in float64, the endpoint exact) as operations, so that a result
    indexed by a traced value inside a trace is a tracer too. start and stop are scalars (axis is 0)."""
    num = index_arg(num, "linspace: num")
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    if axis not in (0, -1):
        raise NotImplementedError(f"linspace: axis={axis}: start and stop are scalars here, so the axis is 0")
    start, stop, _ = promote(start, stop, float(num), to_float="float64")
    dtype = canonical_dtype(dtype or aval(start).dtype)
    index = _iota(aval(start).dtype, (num,), 0) if num else np.zeros(0, aval(start).dtype)
    divisions = num - 1 if endpoint else num
    step = divide(subtract(stop, start), builtins.max(divisions, 1))
    out = add(multiply(index, step), start)
    if endpoint and num > 1:
        out = where_(equal(index, num - 1), stop, out)
    out = astype(floor(out) if dtype.kind in "iu" else out, dtype)     # NumPy 2 floors for integers
    return (out, step if divisions > 0 else np.nan) if retstep else out


def eye(N, M=None, k=0, dtype=None, order="C", *, device=None, like=None):
    check_layout("eye", order, like)
    N, M = (index_arg(n, f"eye: {name}", bools=False) for n, name in ((N, "N"), (N if M is None else M, "M")))
    rows, cols = _iota(DEFAULT_INT, (N, M), 0), _iota(DEFAULT_INT, (N, M), 1)
    return astype(equal(add(rows, k), cols), dtype or DEFAULT_FLOAT)


def identity(n, dtype=None, *, like=None):
    return eye(n, dtype=dtype, like=like)


def _triangle(m, k, lower):
    """A 1-D m is the row of an (n, n) matrix, as in NumPy."""
    m = asarray(m)
    shape = aval(m).shape
    if not shape:
        raise ShapeError(f"{'tril' if lower else 'triu'}: needs an array of rank 1 or more, got a scalar")
    square = shape[-2:] if len(shape) > 1 else (shape[0], shape[0])
    rows = _iota(DEFAULT_INT, square, 0)
    cols = _iota(DEFAULT_INT, square, 1)
    keep = greater_equal(add(rows, k), cols) if lower else greater_equal(cols, add(rows, k))
    return where_(keep, m, zeros((), aval(m).dtype))


def tril(m, k=0):
    return _triangle(m, k, lower=True)


def triu(m, k=0):
    return _triangle(m, k, lower=False)
