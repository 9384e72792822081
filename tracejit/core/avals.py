"""Abstract values (shape, dtype, weak type), the dtypes and their promotion, and the shape helpers every rule
uses."""
import functools
import math

import ml_dtypes
import numpy as np

from .errors import ShapeError

float32, float64 = np.dtype("float32"), np.dtype("float64")
int32, int64 = np.dtype("int32"), np.dtype("int64")
bool_ = np.dtype("bool")
int8, int16 = np.dtype("int8"), np.dtype("int16")
uint8, uint16, uint32, uint64 = np.dtype("uint8"), np.dtype("uint16"), np.dtype("uint32"), np.dtype("uint64")
float16, bfloat16 = np.dtype("float16"), np.dtype(ml_dtypes.bfloat16)

SHORT_NAMES = {float32: "f32", float64: "f64", int32: "i32", int64: "i64", bool_: "bool"}
SHORT_NAMES.update({int8: "i8", int16: "i16", uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
                    float16: "f16", bfloat16: "bf16"})
DEFAULT_FLOAT, DEFAULT_INT = float64, int64
HALF_FLOATS = (float16, bfloat16)    # stored as such, computed in float32


def canonical_dtype(dtype):
    """The np.dtype for any spelling of a supported dtype, or a TypeError naming the supported ones."""
    if isinstance(dtype, np.dtype) and dtype in SHORT_NAMES:    # the common case, first
        return dtype
    try:
        d = np.dtype(dtype)
    except TypeError:
        d = None
    if d not in SHORT_NAMES:
        supported = ", ".join(str(k) for k in SHORT_NAMES)
        raise TypeError(f"dtype {dtype!r} is not supported by tracejit (supported: {supported})")
    return d


def dtype_kind(dtype):
    """NumPy's kind letter ('b', 'i', 'u', 'f' ...), with bfloat16 a float (ml_dtypes makes it 'V')."""
    return "f" if dtype == bfloat16 else dtype.kind


def is_float(dtype):
    return dtype_kind(dtype) == "f"


def fits(value, dtype):
    """Whether the Python int value is within the range of the integer dtype."""
    info = np.iinfo(dtype)
    return info.min <= value <= info.max


def finfo(dtype):
    """np.finfo, which does not know bfloat16 (ml_dtypes.finfo does)."""
    return ml_dtypes.finfo(dtype) if dtype == bfloat16 else np.finfo(dtype)


class SymbolicDimError(ShapeError):
    """An operation needs the size of a dimension that is compiled symbolically."""

    def __init__(self, message, dim=None, why=None):
        super().__init__(message)
        self.dim, self.why = dim, why


class Dim:
    """A symbolic dimension: a size known only at run time (compiled for any size), printed as its name.

    Dims are equal when their names are; they broadcast against 1 and pass through every shape rule that
    only compares or copies sizes. Anything that needs the number (arithmetic, int(), ordering) raises a
    SymbolicDimError naming the dimension, where it came from and what needed it."""

    __slots__ = ("name", "origin")

    def __init__(self, name, origin=None):
        self.name, self.origin = str(name), origin

    def __eq__(self, other):
        return isinstance(other, Dim) and other.name == self.name

    def __hash__(self):
        return hash(("Dim", self.name))

    def __repr__(self):
        return self.name

    def need(self, why="this operation"):
        """Raise the SymbolicDimError saying that `why` needs this dimension's size."""
        where = f" of {self.origin}" if self.origin else ""
        raise SymbolicDimError(f"dimension {self.name}{where} is symbolic (compiled for any size); {why} needs "
                               f"its size. Leave this dimension out of dynamic_dims.", self, why)

    def _arith(self, *others):
        if any(hasattr(x, "aval") for x in others):
            return NotImplemented     # with a tracer: tracejit.numpy reads this size at run time
        self.need()        # Builder.emit names the primitive whose shape rule got here

    def __array__(self, *_, **__):
        self.need("conversion to a NumPy array")

    __int__ = __index__ = __float__ = _arith
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __pow__ = __rpow__ = _arith
    __floordiv__ = __rfloordiv__ = __truediv__ = __rtruediv__ = __mod__ = __rmod__ = __neg__ = _arith
    __lt__ = __le__ = __gt__ = __ge__ = _arith


def is_symbolic(shape):
    return any(isinstance(d, Dim) for d in shape)


def symbolic_dims(shape):
    return [d for d in shape if isinstance(d, Dim)]


def substitute_dims(value, sizes):
    """value (a shape, a param: tuples nest) with every Dim replaced by its size in `sizes`."""
    if isinstance(value, Dim):
        return sizes[value]
    if isinstance(value, tuple):
        return tuple(substitute_dims(v, sizes) for v in value)
    if isinstance(value, list):
        return [substitute_dims(v, sizes) for v in value]
    if isinstance(value, dict):
        return {k: substitute_dims(v, sizes) for k, v in value.items()}
    return value


def _dim(d):
    return d if isinstance(d, Dim) else int(d)


class ShapedArray:
    """What a tracer knows about a value: its shape and dtype, and whether it came from a Python scalar."""

    __slots__ = ("dtype", "shape", "weak_type")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape = tuple(map(_dim, shape))
        self.dtype = canonical_dtype(dtype)
        self.weak_type = bool(weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: shape_size(self.shape))

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


_BOOL_SCALAR, _WEAK_INT, _WEAK_FLOAT = ShapedArray((), bool_), ShapedArray((), DEFAULT_INT, True), ShapedArray(
    (), DEFAULT_FLOAT, True)   # the avals of Python scalars (avals are never mutated)

_KIND_ORDER = {"b": 0, "i": 1, "u": 1, "f": 2}
_WEAK_DEFAULT = {0: bool_, 1: DEFAULT_INT, 2: DEFAULT_FLOAT}


@functools.cache
def promote_types(a, b):
    """NumPy 2's promotion of two array dtypes. NumPy cannot promote bfloat16 with most dtypes; here it sits
    where NumPy puts float16 (an int of 8 bits fits it, int16 needs float32, int32 float64), and the two
    16-bit floats meet in float32."""
    if a == b:
        return a
    if bfloat16 in (a, b):
        other = b if a == bfloat16 else a
        if other == float16:
            return float32
        return bfloat16 if np.promote_types(other, float16) == float16 else np.promote_types(other, float16)
    return np.promote_types(a, b)


def smallest_float(dtype):
    """The float dtype NumPy's math functions (exp, sqrt ...) compute a dtype in: itself if a float, else
    the smallest float that holds every value (bool, int8, uint8: float16; int16: float32; int32: float64)."""
    return dtype if is_float(dtype) else promote_types(dtype, float16)


def result_dtype(*avals):
    """NumPy 2 promotion where Python scalars are weak: they take the dtype of the arrays they meet,
    unless they are of a higher kind (an int array times 2.5 is float64, as in NumPy)."""
    strong = [a.dtype for a in avals if not a.weak_type]
    weak_kind = max((_KIND_ORDER[dtype_kind(a.dtype)] for a in avals if a.weak_type), default=-1)
    if not strong:
        weak = [a.dtype for a in avals if _KIND_ORDER[dtype_kind(a.dtype)] == weak_kind]
        return functools.reduce(promote_types, weak), True
    dtype = functools.reduce(promote_types, strong)
    if weak_kind > _KIND_ORDER[dtype_kind(dtype)]:
        dtype = _WEAK_DEFAULT[weak_kind]
    return dtype, False


# Shape helpers: every rule goes through these so that symbolic dimensions need changes in one place.

def shape_size(shape, why="this operation"):
    """The number of elements; a SymbolicDimError when a dimension is symbolic."""
    for d in symbolic_dims(shape):
        d.need(why)
    return math.prod(shape)


def same_size(old, new):
    """Whether a reshape from old to new keeps the number of elements (no negative sizes). With symbolic
    dims it must keep them in order with equal products of the fixed sizes between them; otherwise the
    first symbolic dim raises, as the reshape needs its size."""
    if any(not isinstance(d, Dim) and d < 0 for d in new):
        return False
    if not (is_symbolic(old) or is_symbolic(new)):
        return math.prod(old) == math.prod(new)

    def segments(shape):
        segs, run = [], 1
        for d in shape:
            if isinstance(d, Dim):
                segs.append((run, d))
                run = 1
            else:
                run *= d
        return segs + [(run, None)]

    if segments(old) != segments(new):
        (symbolic_dims(old) or symbolic_dims(new))[0].need(f"reshape from {tuple(old)} to {tuple(new)}")
    return True


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
    ranked = {s for s in shapes if s}
    if len(ranked) == 1:     # the common case: one shape, and scalars
        return ranked.pop()
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for i in range(ndim):
        sizes = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            sym = [d for d in sizes if isinstance(d, Dim)]
            if sym:
                fixed = sorted(str(d) for d in sizes if d is not sym[0])
                sym[0].need(f"{op} against size {', '.join(fixed)} (shapes {' and '.join(map(str, shapes))})")
            listed = " and ".join(str(tuple(s)) for s in shapes)
            raise ShapeError(f"{op}: shapes {listed} cannot be broadcast together")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def is_python_scalar(x):
    """bool, int or float but not a numpy scalar (np.float64 subclasses float, yet is strongly typed)."""
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


def array_of(x, dtype):
    """np.asarray(x, dtype): NumPy's OverflowError for a Python int that an integer dtype cannot hold (and
    ml_dtypes converts an int beyond int64 to bfloat16 only through float)."""
    return np.asarray(float(x) if dtype == bfloat16 and isinstance(x, int) else x, dtype)


def aval_of(x):
    """The abstract value of a concrete argument: arrays keep their dtype, Python scalars are weak."""
    if isinstance(x, (np.ndarray, np.generic)):  # before the Python types: np.float64 subclasses float
        return ShapedArray(x.shape, canonical_dtype(x.dtype))
    if isinstance(x, bool):
        return _BOOL_SCALAR
    if isinstance(x, int):
        return _WEAK_INT
    if isinstance(x, float):
        return _WEAK_FLOAT
    if isinstance(x, ShapedArray):
        return x
    raise TypeError(f"value of type {type(x).__name__} is not an array or a scalar")
