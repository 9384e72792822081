"""Abstract values (shape, dtype, weak type), dtype promotion and the shape helpers every rule uses."""
import math

import numpy as np

from .errors import ShapeError

float32, float64 = np.dtype("float32"), np.dtype("float64")
int32, int64 = np.dtype("int32"), np.dtype("int64")
bool_ = np.dtype("bool")

SHORT_NAMES = {float32: "f32", float64: "f64", int32: "i32", int64: "i64", bool_: "bool"}
DEFAULT_FLOAT, DEFAULT_INT = float64, int64


def canonical_dtype(dtype):
    """The np.dtype for any spelling of a supported dtype, or a TypeError naming the supported ones."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        d = None
    if d not in SHORT_NAMES:
        supported = ", ".join(str(k) for k in SHORT_NAMES)
        raise TypeError(f"dtype {dtype!r} is not supported by tracejit (supported: {supported})")
    return d


def is_float(dtype):
    return np.dtype(dtype).kind == "f"


def is_int(dtype):
    return np.dtype(dtype).kind in "iu"


class ShapedArray:
    """What a tracer knows about a value: its shape and dtype, and whether it came from a Python scalar."""

    __slots__ = ("dtype", "shape", "weak_type")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = canonical_dtype(dtype)
        self.weak_type = bool(weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def update(self, shape=None, dtype=None, weak_type=None):
        return ShapedArray(self.shape if shape is None else shape, self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak(self):
        return self.update(weak_type=False) if self.weak_type else self

    def _key(self):
        return (self.shape, self.dtype, self.weak_type)

    def __eq__(self, other):
        return isinstance(other, ShapedArray) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def str_short(self):
        return f"{SHORT_NAMES[self.dtype]}[{','.join(map(str, self.shape))}]"

    def __repr__(self):
        return self.str_short() + ("{weak}" if self.weak_type else "")


_KIND_ORDER = {"b": 0, "i": 1, "u": 1, "f": 2}
_WEAK_DEFAULT = {0: bool_, 1: DEFAULT_INT, 2: DEFAULT_FLOAT}


def result_dtype(*avals):
    """NumPy 2 promotion where Python scalars are weak: they take the dtype of the arrays they meet,
    unless they are of a higher kind (an int array times 2.5 is float64, as in NumPy)."""
    strong = [a.dtype for a in avals if not a.weak_type]
    weak_kind = max((_KIND_ORDER[a.dtype.kind] for a in avals if a.weak_type), default=-1)
    if not strong:
        weak = [a.dtype for a in avals if _KIND_ORDER[a.dtype.kind] == weak_kind]
        return np.result_type(*weak), True
    dtype = np.result_type(*strong)
    if weak_kind > _KIND_ORDER[dtype.kind]:
        dtype = _WEAK_DEFAULT[weak_kind]
    return dtype, False


# Shape helpers: every rule goes through these so that symbolic dimensions need changes in one place.

def shape_size(shape):
    return math.prod(shape)


def normalize_axis(axis, ndim, what="axis"):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{what} {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def normalize_axes(axes, ndim, what="axis"):
    """None means all axes; an int or a sequence becomes a sorted tuple of non-negative axes."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, (int, np.integer)):
        axes = (axes,)
    out = tuple(sorted(normalize_axis(a, ndim, what) for a in axes))
    if len(set(out)) != len(out):
        raise ShapeError(f"repeated {what} in {tuple(axes)}")
    return out


def broadcast_shapes(*shapes, op="broadcast"):
    """NumPy broadcasting of several shapes, or a ShapeError that names the operation and the shapes."""
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for i in range(ndim):
        sizes = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            listed = " and ".join(str(tuple(s)) for s in shapes)
            raise ShapeError(f"{op}: shapes {listed} cannot be broadcast together")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def is_python_scalar(x):
    """bool, int or float but not a numpy scalar (np.float64 subclasses float, yet is strongly typed)."""
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


def aval_of(x):
    """The abstract value of a concrete argument: arrays keep their dtype, Python scalars are weak."""
    if isinstance(x, (np.ndarray, np.generic)):  # before the Python types: np.float64 subclasses float
        return ShapedArray(x.shape, canonical_dtype(x.dtype))
    if isinstance(x, bool):
        return ShapedArray((), bool_, weak_type=False)
    if isinstance(x, int):
        return ShapedArray((), DEFAULT_INT, weak_type=True)
    if isinstance(x, float):
        return ShapedArray((), DEFAULT_FLOAT, weak_type=True)
    if isinstance(x, ShapedArray):
        return x
    raise TypeError(f"value of type {type(x).__name__} is not an array or a scalar")
