"""The functions that read or build a float's bits: signbit, copysign, nextafter, spacing, frexp and ldexp, as
jax.numpy's, on bitcast_convert_type and integer ops (each fuses into a loop nest). Values are NumPy's:
subnormals neither flushed nor lost, NaN signs kept, ldexp rounded once; derivatives are JAX's (frexp's mantissa
t 2**-e, copysign's through abs, nextafter's and spacing's refused), but ldexp's is t 2**x2 everywhere (JAX's is 1
at x1 = 0 and at infinities, an artifact of the select it returns x1 through)."""
import functools

import numpy as np

from ..core.avals import finfo
from ..core.trace import bind
from ..primitives import bitcast as bc
from ..primitives import complex_parts as cp
from ..primitives.custom_jvp_call import call_with_jvp
from ._base import asarray, astype, aval, broadcast_operands, broadcast_to_shape, promote
from .complex_numbers import imag, real
from .shape_ops import reshape, stack
from .ufuncs import (
    absolute,
    add,
    bitwise_and,
    bitwise_or,
    equal,
    greater,
    isinf,
    isnan,
    left_shift,
    less,
    maximum,
    minimum,
    multiply,
    negative,
    right_shift,
    subtract,
    where_,
)

_SIGNED = {2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}
_BIG = 1 << 16          # beyond every float's exponent range: exponents are clipped to it, then added in int32


def quiet(fn):
    """Evaluated eagerly, the selects' discarded branches (inf - inf, overflowing scales) warn nothing, as the
    compiled code does not."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    return wrapped


def _real_floats(name, *xs):
    """The operands in their float dtype (integers in NumPy's smallest float that holds them); complex refused."""
    xs = promote(*xs, to_float=True)
    if aval(xs[0]).dtype.kind == "c":
        raise TypeError(f"{name}: complex values are not supported (got {aval(xs[0]).str_short()})")
    return xs


def _bits(x):
    """x's bits as the signed integer of its width (negative exactly where the sign bit is set)."""
    return bind(bc.bitcast_convert_type_p, x, new_dtype=_SIGNED[aval(x).dtype.itemsize])


def _from_bits(i, dtype):
    return bind(bc.bitcast_convert_type_p, i, new_dtype=np.dtype(dtype))


def _const(value, like):
    """value in like's dtype, as a 0-d array (an IR literal)."""
    return np.asarray(value, aval(like).dtype)


def signbit(x, /):
    """Whether the sign bit is set: of -0.0 and of a negative NaN too; integers: x < 0; bools: False."""
    (x,) = promote(x)
    dtype = aval(x).dtype
    if dtype == np.bool_:
        return broadcast_to_shape(np.asarray(False), aval(x).shape)
    if dtype.kind in "iu":
        return less(x, 0)
    if dtype.kind == "c":
        raise TypeError(f"signbit: complex values are not supported (got {aval(x).str_short()})")
    return less(_bits(x), 0)


@quiet
def copysign(x1, x2, /):
    """|x1| with x2's sign bit (-0.0's and a NaN's included); its derivative is JAX's: through abs (t at
    x1 = 0), none in x2."""
    x1, x2 = broadcast_operands(*_real_floats("copysign", x1, x2), op="copysign")
    magnitude = absolute(x1)
    return where_(signbit(x2), negative(magnitude), magnitude)


def _next_toward(x, y):
    """The float after x toward y (operands of one float dtype and shape): one step of x's bits, away from zero
    or toward it; from a zero the smallest subnormal of y's sign; y where x == y (so nextafter(0.0, -0.0) is
    -0.0, as C's), but x in float16 (as NumPy's own float16 nextafter); NaN where either is."""
    tiny = finfo(aval(x).dtype).smallest_subnormal
    bits = _bits(x)
    away = equal(less(x, y), greater(x, 0))
    out = _from_bits(where_(away, add(bits, 1), subtract(bits, 1)), aval(x).dtype)
    out = where_(equal(x, 0), where_(less(y, 0), _const(-tiny, x), _const(tiny, x)), out)
    same = x if aval(x).dtype == np.float16 else y
    return where_(bitwise_or(isnan(x), isnan(y)), add(x, y), where_(equal(x, y), same, out))


def _no_derivative(name):
    def rule(primals, tangents):
        raise NotImplementedError(f"Differentiation rule for '{name}' not implemented (as in JAX)")
    rule.__name__ = f"{name}_jvp"
    return rule


@quiet
def nextafter(x, y, /):
    """The next float after x toward y, subnormals included; not differentiable (as in JAX)."""
    x, y = broadcast_operands(*_real_floats("nextafter", x, y), op="nextafter")
    return call_with_jvp(lambda a, b: [_next_toward(a, b)], _no_derivative("nextafter"), x, y)[0]


@quiet
def spacing(x, /):
    """The distance from x to the next float away from zero, as NumPy's per dtype: float16's toward +inf
    (positive for negative x too); float32's and float64's toward -inf for x < 0 (so +tiny at -0.0); bfloat16's
    (ml_dtypes') by the sign bit; NaN at infinities. Not differentiable, as in JAX (where it is nextafter's)."""
    (x,) = _real_floats("spacing", x)
    dtype = aval(x).dtype
    up, down = _const(np.inf, x), _const(-np.inf, x)
    if dtype == np.float16:
        toward = broadcast_to_shape(up, aval(x).shape)
    else:
        toward = where_(signbit(x) if dtype.itemsize == 2 else less(x, 0), down, up)
    def fun(x, toward):
        return [where_(isinf(x), _const(np.nan, x), subtract(_next_toward(x, toward), x))]
    return call_with_jvp(fun, _no_derivative("nextafter"), x, toward)[0]


def _pow2(k, dtype):
    """2.0 ** k in dtype for integer k (int32) in the dtype's normal range, exact: built from its bits."""
    info = finfo(dtype)
    bias = 1 - int(info.minexp)
    k = astype(k, _SIGNED[np.dtype(dtype).itemsize])
    return _from_bits(left_shift(add(k, bias), int(info.nmant)), dtype)


def _scale(m, k):
    """m * 2 ** k (k int32, |k| <= _BIG) rounded once, for m in [0.5, 1) (or 0, inf, NaN): k is clipped to where
    the product has surely overflowed or rounds to 0, then split in halves, each a normal power of two, so that
    m * 2**a is exact and the multiplication by 2**b rounds."""
    dtype = aval(m).dtype
    info = finfo(dtype)
    k = minimum(maximum(k, int(info.minexp) - int(info.nmant) - 2), int(info.maxexp) + 1)
    a = right_shift(k, 1)
    return multiply(multiply(m, _pow2(a, dtype)), _pow2(subtract(k, a), dtype))


def _frexp(x):
    """[mantissa, int32 exponent], NumPy's frexp: a subnormal is scaled by 2**nmant first (exactly); 0, inf and
    NaN give (x, 0)."""
    dtype = aval(x).dtype
    info = finfo(dtype)
    nmant, mask, bias = int(info.nmant), (1 << int(info.nexp)) - 1, 1 - int(info.minexp)
    subnormal = less(absolute(x), _const(info.tiny, x))
    bits = _bits(where_(subnormal, multiply(x, _const(2.0 ** nmant, x)), x))
    field = bitwise_and(right_shift(bits, nmant), mask)
    exponent = add(subtract(field, bias - 1), where_(subnormal, _const(-nmant, bits), _const(0, bits)))
    mantissa = _from_bits(bitwise_or(bitwise_and(bits, ~(mask << nmant)), (bias - 1) << nmant), dtype)
    special = bitwise_or(bitwise_or(isinf(x), isnan(x)), equal(x, 0))
    return [where_(special, x, mantissa), astype(where_(special, _const(0, exponent), exponent), np.int32)]


def _frexp_jvp(primals, tangents):
    """JAX's: the mantissa's tangent is t 2**-e (t at 0, inf and NaN, where e is 0), the exponent's 0."""
    (x,), (t,) = primals, tangents
    m, e = _frexp(x)
    return [m, e], [multiply(t, _scale(_const(0.5, t), add(negative(e), 1))),
                    broadcast_to_shape(np.zeros((), np.int32), aval(e).shape)]


@quiet
def frexp(x, /):
    """(mantissa, exponent): x = mantissa * 2**exponent, |mantissa| in [0.5, 1), the exponent int32 (as NumPy's
    and JAX's); for 0, inf and NaN (x, 0)."""
    (x,) = _real_floats("frexp", x)
    return tuple(call_with_jvp(_frexp, _frexp_jvp, x))


def _int32_exponent(n):
    """An integer exponent (any integer dtype or bool) as int32, clipped to +-_BIG."""
    dtype = aval(n).dtype
    if dtype.kind == "u" and dtype.itemsize >= 4:
        n = minimum(n, _BIG)
    elif dtype.kind == "i" and dtype.itemsize == 8:
        n = minimum(maximum(n, -_BIG), _BIG)
    n = astype(n, np.int32)
    return minimum(maximum(n, -_BIG), _BIG)


def _ldexp(x1, x2):
    m, e = _frexp(x1)
    return [_scale(m, add(e, x2))]


def _ldexp_jvp(primals, tangents):
    (x1, x2), (t, _) = primals, tangents
    return _ldexp(x1, x2), [multiply(t, _scale(_const(0.5, t), add(x2, 1)))]


@quiet
def ldexp(x1, x2, /):
    """x1 * 2**x2 rounded once (overflow to inf, underflow through the subnormals to 0), x2 integers; the
    result has x1's float dtype. Derivative t 2**x2."""
    (x1,) = _real_floats("ldexp", x1)
    x2 = asarray(x2)
    if aval(x2).dtype.kind not in "biu":
        raise TypeError(f"ldexp: the exponents x2 must be integers, got {aval(x2).str_short()}")
    x1, x2 = broadcast_operands(x1, _int32_exponent(promote(x2)[0]), op="ldexp")
    return call_with_jvp(_ldexp, _ldexp_jvp, x1, x2)[0]


def view(x, dtype=None, type=None):
    """x's bits read as another dtype, as jax.Array.view (NumPy's ndarray.view): the same shape for the same
    width; for another width the last axis scales by the ratio of the widths (bools count as bytes, a complex
    value as its real and imaginary parts, side by side)."""
    if type is not None:
        raise NotImplementedError("view: the type argument is not supported (as in JAX)")
    x = asarray(x)
    if dtype is None:
        return x
    src, dst = aval(x).dtype, np.dtype(dtype)
    shape = aval(x).shape
    if not shape:
        if src.itemsize != dst.itemsize:
            raise ValueError(f"view: a 0-d array changes dtype only to one of its width ({src} is {src.itemsize} "
                             f"bytes, {dst} {dst.itemsize})")
        return reshape(view(reshape(x, (1,)), dst), ())
    if (shape[-1] * src.itemsize) % dst.itemsize:
        raise ValueError(f"view: the last axis of {aval(x).str_short()} ({shape[-1] * src.itemsize} bytes) does not "
                         f"divide into {dst} items of {dst.itemsize} bytes")
    if src == dst:
        return x
    if src == np.bool_:
        return view(astype(x, np.uint8), dst)
    if src.kind == "c":
        parts = stack([real(x), imag(x)], axis=-1)
        return view(reshape(parts, shape[:-1] + (2 * shape[-1],)), dst)
    if dst == np.bool_:
        return astype(view(x, np.uint8), np.bool_)
    if dst.kind == "c":
        parts = view(x, finfo(dst).dtype)
        return bind(cp.complex_p, parts[..., 0::2], parts[..., 1::2])
    if src.itemsize < dst.itemsize:
        ratio = dst.itemsize // src.itemsize
        x = reshape(x, shape[:-1] + (shape[-1] // ratio, ratio))
        return bind(bc.bitcast_convert_type_p, x, new_dtype=dst)
    out = bind(bc.bitcast_convert_type_p, x, new_dtype=dst)
    return reshape(out, shape[:-1] + (shape[-1] * (src.itemsize // dst.itemsize),)) if src.itemsize > dst.itemsize \
        else out
