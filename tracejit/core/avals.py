"""Abstract values (shape, dtype, weak type), the dtypes and their promotion, and the shape helpers every rule
uses."""
import functools
import math
import operator

import ml_dtypes
import numpy as np

from .errors import AxisError, ShapeError

float32, float64 = np.dtype("float32"), np.dtype("float64")
int32, int64 = np.dtype("int32"), np.dtype("int64")
bool_ = np.dtype("bool")
int8, int16 = np.dtype("int8"), np.dtype("int16")
uint8, uint16, uint32, uint64 = np.dtype("uint8"), np.dtype("uint16"), np.dtype("uint32"), np.dtype("uint64")
float16, bfloat16 = np.dtype("float16"), np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype("complex64"), np.dtype("complex128")

SHORT_NAMES = {float32: "f32", float64: "f64", int32: "i32", int64: "i64", bool_: "bool"}
SHORT_NAMES.update({int8: "i8", int16: "i16", uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
                    float16: "f16", bfloat16: "bf16", complex64: "c64", complex128: "c128"})
DEFAULT_FLOAT, DEFAULT_INT, DEFAULT_COMPLEX = float64, int64, complex128
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


def is_inexact(dtype):
    """Float or complex: the dtypes whose values have tangents (JAX's inexact dtypes)."""
    return dtype_kind(dtype) in "fc"


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
    SymbolicDimError naming the dimension, where it came from and what needed it.

    needed_by: why an operation has no result when this dimension is 0 (a max over it, an index into it), a
    message naming the dimension where it says {dim}; or None. Tracing records it on the signature's Dim
    (require_nonempty), so it travels with the IR into the compiled code, which refuses such a size as
    shape-specialised code does (check_nonempty)."""

    __slots__ = ("name", "needed_by", "origin")

    def __init__(self, name, origin=None):
        self.name, self.origin, self.needed_by = str(name), origin, None

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

    def require_nonempty(self, why):
        """Record why an operation has no result when this dimension is 0 at run time: a message that says {dim}
        where the dimension is named."""
        if self.needed_by is None:
            self.needed_by = why

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


def check_nonempty(dims, sizes):
    """The ShapeError (a ValueError) of shape-specialised code where a dimension that an operation needs
    nonempty (Dim.require_nonempty) is 0 at this call."""
    for d, n in zip(dims, sizes):
        if n == 0 and d.needed_by is not None:
            where = f" of {d.origin}" if d.origin else ""
            raise ShapeError(d.needed_by.format(dim=f"{d.name}{where} (0 at this call)"))


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


_MAX_BYTES = np.iinfo(np.intp).max


def check_shape(shape, dtype=None, what="shape"):
    """shape, or a ShapeError (a ValueError) for a negative size or for more bytes than a buffer can hold
    (NumPy's "array is too big": elements times the np.dtype's item size beyond the largest intp; 1 byte
    each without a dtype). Symbolic sizes are bounded at run time."""
    if not shape:
        return shape
    n = 1
    for d in shape:
        if not isinstance(d, Dim):
            if d < 0:
                raise ShapeError(f"{what} {tuple(shape)}: negative dimensions are not allowed")
            n *= d
    if n > _MAX_BYTES // (1 if dtype is None else dtype.itemsize):
        of = "" if dtype is None else f" of {dtype}"
        raise ShapeError(f"{what} {tuple(shape)}{of}: array is too big ({n} elements; a buffer holds at most "
                         f"2**63 - 1 bytes)")
    return shape


def _dim(d):
    return d if isinstance(d, Dim) else operator.index(d)


class ShapedArray:
    """What a tracer knows about a value: its shape and dtype, and whether it came from a Python scalar.
    Every shape a rule computes passes here, so a negative or too large size raises here at the latest."""

    __slots__ = ("dtype", "shape", "weak_type")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape = tuple(map(_dim, shape))
        self.dtype = canonical_dtype(dtype)
        self.weak_type = bool(weak_type)
        check_shape(self.shape, self.dtype)

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
_WEAK_COMPLEX = ShapedArray((), DEFAULT_COMPLEX, True)

_KIND_ORDER = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}
_WEAK_DEFAULT = {0: bool_, 1: DEFAULT_INT, 2: DEFAULT_FLOAT, 3: DEFAULT_COMPLEX}


def complex_dtype(dtype):
    """The complex dtype whose parts have the float `dtype`'s precision or more (f32 -> c64, f64 -> c128)."""
    return complex64 if np.dtype(dtype).itemsize <= 4 else complex128


def real_dtype(dtype):
    """The dtype of a complex dtype's parts (c64 -> f32); other dtypes are their own."""
    dtype = np.dtype(dtype)
    return np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype


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
    """The inexact dtype NumPy's math functions (exp, sqrt ...) compute a dtype in: itself if a float, else
    the smallest float that holds every value (bool, int8, uint8: float16; int16: float32; int32: float64);
    a complex dtype is its own."""
    return dtype if is_inexact(dtype) else promote_types(dtype, float16)


_results = {}   # ((dtype, weak_type), ...) -> result_dtype's answer: tracing promotes in nearly every operation


def result_dtype(*avals):
    """NumPy 2 promotion where Python scalars are weak: they take the dtype of the arrays they meet,
    unless they are of a higher kind (an int array times 2.5 is float64, as in NumPy)."""
    key = tuple((a.dtype, a.weak_type) for a in avals)
    result = _results.get(key)
    if result is None:
        result = _results[key] = _result_dtype(avals)
    return result


def _result_dtype(avals):
    strong = [a.dtype for a in avals if not a.weak_type]
    weak_kind = max((_KIND_ORDER[dtype_kind(a.dtype)] for a in avals if a.weak_type), default=-1)
    if not strong:
        weak = [a.dtype for a in avals if _KIND_ORDER[dtype_kind(a.dtype)] == weak_kind]
        return functools.reduce(promote_types, weak), True
    dtype = functools.reduce(promote_types, strong)
    if weak_kind > _KIND_ORDER[dtype_kind(dtype)]:   # a Python complex keeps a float array's precision (NumPy 2)
        dtype = complex_dtype(dtype) if weak_kind == 3 and is_float(dtype) else _WEAK_DEFAULT[weak_kind]
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


def index_arg(value, what, bools=True):
    """value as a Python int, with operator.index's rule (ints, numpy integers and integer 0-d arrays; not
    floats, strings or sequences), or a TypeError naming the argument. bools=False refuses True and False too,
    as NumPy's C functions do for axes and sizes."""
    if not bools and isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, not a bool ({value!r})")
    try:
        return operator.index(value)
    except TypeError:
        if hasattr(value, "aval"):   # a tracer: its own error says why it needs a concrete value
            raise
        raise TypeError(f"{what} must be an integer, got {value!r} of type {type(value).__name__}") from None


def _axis_name(what):
    """How errors name an axis argument: "axis", or "<function>: axis"."""
    return f"{what}: axis" if what and what != "axis" else "axis"


def reshape_sizes(shape, newshape):
    """newshape with its one negative size (NumPy reads any, usually -1) inferred from shape's element count."""
    unknown = [k for k, d in enumerate(newshape) if not isinstance(d, Dim) and d < 0]
    if len(unknown) > 1:
        raise ShapeError(f"reshape: can only specify one unknown dimension, got shape {newshape}")
    if not unknown:
        return newshape
    others = [d for k, d in enumerate(newshape) if k != unknown[0]]
    symbolic = symbolic_dims(shape)
    if len(symbolic) == 1 and not is_symbolic(others) and \
            math.prod(d for d in shape if not isinstance(d, Dim)) == math.prod(others) == 1:   # a ravel of (n,)
        return tuple(symbolic[0] if k == unknown[0] else d for k, d in enumerate(newshape))
    known = shape_size(others, "reshape with -1")
    size = shape_size(shape, "reshape with -1")
    if known == 0 or size % known:
        raise ShapeError(f"reshape: cannot reshape an array of shape {shape} ({size} elements) into {newshape}")
    return tuple(size // known if k == unknown[0] else d for k, d in enumerate(newshape))


def normalize_axis(axis, ndim, what=None, bools=True):
    """An axis in [-ndim, ndim) as a non-negative int. `what` names the function in errors: a TypeError
    for an axis that is not an integer (NumPy's C functions refuse bools too: bools=False), an AxisError
    (a ValueError and an IndexError, as NumPy's) for one out of bounds."""
    name = _axis_name(what)
    axis = index_arg(axis, name, bools)
    if not -ndim <= axis < ndim:
        raise AxisError(f"{name} {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def axis_tuple(axes, what=None, iterable=False):
    """The axes of an `axis` argument, not yet bounded: one integer, or a tuple of them. iterable=True reads
    it as NumPy's Python functions do (any iterable, lists and bools included: flip, expand_dims); otherwise
    as its reductions do (a tuple, no bools)."""
    name = _axis_name(what)
    if isinstance(axes, tuple) or (iterable and not isinstance(axes, (str, bytes)) and np.ndim(axes) == 1):
        return tuple(index_arg(a, name, iterable) for a in axes)
    return (index_arg(axes, name, iterable),)


def normalize_axes(axes, ndim, what=None, iterable=False):
    """None means all axes; otherwise axis_tuple's axes made non-negative, sorted, and checked for repeats."""
    if axes is None:
        return tuple(range(ndim))
    raw = axis_tuple(axes, what, iterable)
    out = tuple(sorted(normalize_axis(a, ndim, what) for a in raw))
    if len(set(out)) != len(out):
        raise ShapeError(f"{_axis_name(what)}: repeated axis in {raw}")
    return out


def shape_arg(shape, what="shape"):
    """A shape argument read as NumPy reads one: an integer or a sequence of integers (numpy integers and
    integer arrays too; bools, floats, strings and None are refused with a TypeError naming the argument).
    Symbolic dimensions pass through. Negative sizes are left to the caller (reshape's -1, check_shape)."""
    if isinstance(shape, Dim):
        return (shape,)
    if isinstance(shape, (tuple, list)) or (isinstance(shape, np.ndarray) and shape.ndim == 1):
        if isinstance(shape, np.ndarray) and shape.dtype.kind not in "iu":
            raise TypeError(f"{what} must be a sequence of integers, got {shape!r}")
        return tuple(d if isinstance(d, Dim) else index_arg(d, f"{what} {_seq_text(shape)}: each size", False)
                     for d in shape)
    if shape is None or isinstance(shape, (str, bytes)) or np.ndim(shape) != 0:
        raise TypeError(f"{what} must be an integer or a sequence of integers, got {shape!r}")
    return (index_arg(shape, what, bools=False),)


def _seq_text(shape):
    return repr(tuple(shape) if not isinstance(shape, np.ndarray) else shape)


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


PYTHON_SCALARS = (bool, int, float, complex)


def is_python_scalar(x):
    """bool, int, float or complex but not a numpy scalar (np.float64 subclasses float, yet is strongly typed)."""
    return isinstance(x, PYTHON_SCALARS) and not isinstance(x, np.generic)


def array_of(x, dtype):
    """np.asarray(x, dtype): NumPy's OverflowError for a Python int that an integer dtype cannot hold (and
    ml_dtypes converts an int beyond int64 to bfloat16 only through float)."""
    return np.asarray(float(x) if dtype == bfloat16 and isinstance(x, int) else x, dtype)


_array_avals = {}     # (shape, dtype) -> the aval of arrays of that type: eager operations ask for each operand's
MAX_ARRAY_AVALS = 4096  # several times (an eager add built 7 avals, 2 us each); avals are never changed in place


def aval_of(x):
    """The abstract value of a concrete argument: arrays keep their dtype, Python scalars are weak."""
    if isinstance(x, (np.ndarray, np.generic)):  # before the Python types: np.float64 subclasses float
        key = (x.shape, x.dtype)
        aval = _array_avals.get(key)
        if aval is None:
            if len(_array_avals) >= MAX_ARRAY_AVALS:
                _array_avals.clear()
            aval = _array_avals[key] = ShapedArray(x.shape, canonical_dtype(x.dtype))
        return aval
    if isinstance(x, bool):
        return _BOOL_SCALAR
    if isinstance(x, int):
        return _WEAK_INT
    if isinstance(x, float):
        return _WEAK_FLOAT
    if isinstance(x, complex):
        return _WEAK_COMPLEX
    if isinstance(x, ShapedArray):
        return x
    raise TypeError(f"value of type {type(x).__name__} is not an array or a scalar")
