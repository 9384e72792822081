"""Elementwise NumPy functions: promote, broadcast explicitly, then bind one primitive."""
import functools

import numpy as np

from ..core.avals import HALF_FLOATS, broadcast_shapes, dtype_kind, finfo, fits, is_float, result_dtype
from ..core.trace import Tracer, bind
from ..primitives import complex_parts as cp
from ..primitives import elementwise as ew
from ._base import (
    asarray,
    astype,
    aval,
    broadcast_operands,
    broadcast_to_shape,
    promote,
    reject_out,
    stop_gradient,
)


def _binary(prim, name, to_float=False, on_bool=None):
    """to_float: as promote's; on_bool: the primitive for bool operands, as NumPy has them (True + True is True:
    a logical or)."""
    def fn(x, y):
        if type(x) is type(y) is np.ndarray and x.dtype == y.dtype and x.shape == y.shape and (
                x.dtype.kind in "fc" or not to_float and x.dtype.kind != "b"):
            return bind(prim, x, y)       # nothing to promote or broadcast: half an eager call's time (10 us)
        x, y = promote(x, y, to_float=to_float)
        use = on_bool if on_bool is not None and aval(x).dtype == np.bool_ else prim
        return bind(use, *broadcast_operands(x, y, op=name))
    fn.__name__ = name
    return fn


def _unary(prim, name, to_float=False):
    def fn(x):
        if not (type(x) is np.ndarray and (x.dtype.kind in "fc" or not to_float and x.dtype.kind != "b")):
            (x,) = promote(x, to_float=to_float)
        return bind(prim, x)
    fn.__name__ = name
    return fn


add = _binary(ew.add_p, "add", on_bool=ew.or_p)
subtract = _binary(ew.sub_p, "subtract")
multiply = _binary(ew.mul_p, "multiply", on_bool=ew.and_p)
true_divide = divide = _binary(ew.div_p, "divide", to_float="float64")
maximum = _binary(ew.max_p, "maximum", on_bool=ew.or_p)
minimum = _binary(ew.min_p, "minimum", on_bool=ew.and_p)


def _comparison(prim, name, when_above):
    """NumPy 2 compares a Python int with an integer array exactly, also one the array's dtype cannot hold
    (uint8 < 300 is True): when_above is (x OP y, y OP x) for a y above every value of x's dtype (x OP y for a
    y below them is y OP x for one above). A traced weak int (a Python int argument) meets a narrower integer
    dtype in int64, which holds both, and uint64 where it is not negative."""
    def fn(x, y):
        x, y = asarray(x), asarray(y)
        dtype, _ = result_dtype(aval(x), aval(y))
        if dtype.kind in "iu":
            for value, other, flipped in ((y, x, False), (x, y, True)):
                if (isinstance(value, int) and not isinstance(value, bool) and aval(other).dtype.kind in "iu"
                        and not fits(value, dtype)):
                    outcome = when_above[flipped] if value > 0 else when_above[not flipped]
                    return broadcast_to_shape(np.asarray(outcome), aval(other).shape)
            weak = [isinstance(v, Tracer) and v.weak_type for v in (x, y)]
            if any(weak) and dtype.itemsize < 8:
                x, y = astype(x, np.int64), astype(y, np.int64)
            elif any(weak) and dtype == np.uint64:     # a negative int lies below uint64's range
                flipped = weak[0]
                in_range = greater_equal(x if flipped else y, 0)
                result = bind(prim, *broadcast_operands(astype(x, dtype), astype(y, dtype), op=name))
                return where_(in_range, result, when_above[not flipped])
        x, y = promote(x, y)
        return bind(prim, *broadcast_operands(x, y, op=name))
    fn.__name__ = name
    return fn


equal = _comparison(ew.eq_p, "equal", (False, False))
not_equal = _comparison(ew.ne_p, "not_equal", (True, True))
less = _comparison(ew.lt_p, "less", (True, False))
less_equal = _comparison(ew.le_p, "less_equal", (True, False))
greater = _comparison(ew.gt_p, "greater", (False, True))
greater_equal = _comparison(ew.ge_p, "greater_equal", (False, True))
bitwise_and = _binary(ew.and_p, "bitwise_and")
bitwise_or = _binary(ew.or_p, "bitwise_or")
bitwise_xor = _binary(ew.xor_p, "bitwise_xor")

negative = _unary(ew.neg_p, "negative")
exp = _unary(ew.exp_p, "exp", to_float=True)
log = _unary(ew.log_p, "log", to_float=True)
log1p = _unary(ew.log1p_p, "log1p", to_float=True)
expm1 = _unary(ew.expm1_p, "expm1", to_float=True)
sin = _unary(ew.sin_p, "sin", to_float=True)
cos = _unary(ew.cos_p, "cos", to_float=True)
tan = _unary(ew.tan_p, "tan", to_float=True)
tanh = _unary(ew.tanh_p, "tanh", to_float=True)
sqrt = _unary(ew.sqrt_p, "sqrt", to_float=True)
arcsin = asin = _unary(ew.asin_p, "arcsin", to_float=True)
arccos = acos = _unary(ew.acos_p, "arccos", to_float=True)
arctan = atan = _unary(ew.atan_p, "arctan", to_float=True)
sinh = _unary(ew.sinh_p, "sinh", to_float=True)
cosh = _unary(ew.cosh_p, "cosh", to_float=True)
arcsinh = asinh = _unary(ew.asinh_p, "arcsinh", to_float=True)
arccosh = acosh = _unary(ew.acosh_p, "arccosh", to_float=True)
arctanh = atanh = _unary(ew.atanh_p, "arctanh", to_float=True)
log2 = _unary(ew.log2_p, "log2", to_float=True)
log10 = _unary(ew.log10_p, "log10", to_float=True)
exp2 = _unary(ew.exp2_p, "exp2", to_float=True)
cbrt = _unary(ew.cbrt_p, "cbrt", to_float=True)
arctan2 = atan2 = _binary(ew.atan2_p, "arctan2", to_float=True)
hypot = _binary(ew.hypot_p, "hypot", to_float=True)
# NumPy 2.1 and later keep an integer or bool dtype through floor and ceil (earlier ones returned floats)
_ROUNDING_KEEPS_INTS = np.floor(np.zeros(1, np.int32)).dtype == np.int32


def _rounding(prim, name):
    to_float = _unary(prim, name, to_float=True)

    def fn(x):
        x = asarray(x)
        if _ROUNDING_KEEPS_INTS and dtype_kind(aval(x).dtype) in "biu":
            return x if isinstance(x, Tracer) else np.array(x)
        return to_float(x)
    fn.__name__ = name
    return fn


floor = _rounding(ew.floor_p, "floor")
ceil = _rounding(ew.ceil_p, "ceil")
sign = _unary(ew.sign_p, "sign")
isfinite = _unary(ew.is_finite_p, "isfinite", to_float=True)
invert = bitwise_not = _unary(ew.not_p, "invert")


def bools_as_int8(*xs):
    """Operands of a function NumPy has no bool loop for: bools compute as int8, its smallest integer loop."""
    return [astype(x, np.int8) for x in xs] if aval(xs[0]).dtype == np.bool_ else list(xs)


def _shift(name, signed, unsigned):
    """NumPy's shifts: bools shift as int8; a count of the width or more (or a negative one) shifts every
    bit out; right shifts are arithmetic for signed dtypes, logical for unsigned ones."""
    def fn(x, y):
        x, y = bools_as_int8(*promote(x, y))
        prim = unsigned if aval(x).dtype.kind == "u" else signed
        return bind(prim, *broadcast_operands(x, y, op=name))
    fn.__name__ = name
    return fn


left_shift = _shift("left_shift", ew.shift_left_p, ew.shift_left_p)
right_shift = _shift("right_shift", ew.shift_right_arithmetic_p, ew.shift_right_logical_p)


def bitwise_count(x):
    """The number of 1 bits in |x|, as uint8 (NumPy 2's)."""
    (x,) = bools_as_int8(*promote(x))
    if aval(x).dtype.kind not in "iu":
        raise TypeError(f"bitwise_count: needs integers, got {aval(x).dtype}")
    return astype(bind(ew.population_count_p, absolute(x)), np.uint8)


def absolute(x):
    (x,) = promote(x)
    return x if aval(x).dtype == np.bool_ else bind(ew.abs_p, x)


abs = absolute


def positive(x):
    return asarray(x)


def round(a, decimals=0, out=None):
    reject_out("round", out)
    (x,) = promote(a)
    if aval(x).dtype.kind == "c":      # each part, as NumPy
        return _by_parts(lambda part: round(part, decimals), x)
    if aval(x).dtype == np.bool_:       # NumPy's round has no bool loop: it rounds them as float16
        return astype(x, np.float16)
    if not is_float(aval(x).dtype):
        return x
    if decimals == 0:
        return bind(ew.round_p, x, rounding_method=1)
    scale = 10.0 ** decimals
    return divide(bind(ew.round_p, multiply(x, scale), rounding_method=1), scale)


around = round


def logical_not(x):
    return invert(asarray(x, np.bool_))


def logical_and(x, y):
    return bitwise_and(asarray(x, np.bool_), asarray(y, np.bool_))


def logical_or(x, y):
    return bitwise_or(asarray(x, np.bool_), asarray(y, np.bool_))


def square(x):
    """x * x; an integer_pow for real x (NumPy's complex square is its product x * x, not its power)."""
    (x,) = bools_as_int8(*promote(x))
    return bind(ew.mul_p, x, x) if aval(x).dtype.kind == "c" else bind(ew.integer_pow_p, x, y=2)


def power(x, y):
    x, y_array = bools_as_int8(*promote(x, y))   # a NumPy integer scalar takes part (int32 ** np.int64(2): int64)
    if isinstance(y, (int, np.integer)) and not isinstance(y, bool) and (is_float(aval(x).dtype) or y >= 0):
        return bind(ew.integer_pow_p, x, y=int(y))
    y = y_array
    if not isinstance(y, Tracer) and np.ndim(y) == 0 and y == 0.5:
        return sqrt(x)         # as NumPy's power does for a scalar 0.5: (-0.0) ** 0.5 is -0.0, (-inf) ** 0.5 NaN
    if not isinstance(y, Tracer) and np.ndim(y) == 0 and y == 0:
        # x ** 0.0 is 1 everywhere (NaN included, as IEEE pow), so its derivatives are 0 everywhere, at x = 0
        # too; JAX's are NaN there (0 * 0 ** -1): tracejit deliberately differs
        return bind(ew.integer_pow_p, x, y=0)
    return bind(ew.pow_p, *broadcast_operands(x, y, op="power"))


def _computed_in_float32(to_float=False):
    """NumPy's loops for float16 (and ml_dtypes' for bfloat16) compute in float32 and round once: so does a
    function written with several primitives here when its operands are 16-bit floats, which otherwise
    rounds after each step where it is not fused (and one ulp there can flip a floor)."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapped(*args):
            xs = promote(*args, to_float=to_float)
            dtype = aval(xs[0]).dtype
            if dtype not in HALF_FLOATS:
                return fn(*xs)
            return astype(fn(*[astype(x, np.float32) for x in xs]), dtype)
        return wrapped
    return decorate


@_computed_in_float32()
def floor_divide(x, y):
    """NumPy's floor division: rounds toward -inf (integer x // 0 is 0; float follows IEEE)."""
    x, y = broadcast_operands(*bools_as_int8(*promote(x, y)), op="floor_divide")
    if not is_float(aval(x).dtype):
        q = bind(ew.div_p, x, y)
        r = bind(ew.rem_p, x, y)
        adjust = bitwise_and(not_equal(r, 0), not_equal(less(r, 0), less(y, 0)))
        return subtract(q, astype_like(adjust, q))
    mod = bind(ew.rem_p, x, y)
    quotient = divide(subtract(x, mod), y)
    adjust = bitwise_and(not_equal(mod, 0), not_equal(less(y, 0), less(mod, 0)))
    quotient = where_(adjust, subtract(quotient, 1.0), quotient)
    floored = floor(quotient)
    floored = where_(greater(subtract(quotient, floored), 0.5), add(floored, 1.0), floored)
    floored = where_(equal(quotient, 0), _zero_signed_as(divide(x, y)), floored)
    # piecewise constant: its derivative is 0 everywhere (as JAX's), also where y is 0 or x and y tie at 0
    return stop_gradient(where_(equal(y, 0), divide(x, y), floored))


def _zero_signed_as(v):
    """copysign(0.0, v), as NumPy's divmod gives a zero quotient or remainder."""
    return astype(where_(bitwise_or(less(v, 0), less(divide(1.0, v), 0)), -0.0, 0.0), aval(v).dtype)


@_computed_in_float32()
def remainder(x, y):
    """NumPy's modulo: the result has the sign of the divisor (integer x % 0 is 0)."""
    x, y = broadcast_operands(*bools_as_int8(*promote(x, y)), op="remainder")
    r = bind(ew.rem_p, x, y)
    wrong_sign = bitwise_and(not_equal(r, 0), not_equal(less(r, 0), less(y, 0)))
    r = where_(wrong_sign, add(r, y), r)
    if not is_float(aval(r).dtype):
        return r
    # a zero takes y's sign, as NumPy's, and keeps r's derivative (as JAX's): sg(r) - r is +0.0 whatever r's
    # sign, and z - (+0.0) is z, -0.0 included
    return where_(equal(r, 0), subtract(_zero_signed_as(y), subtract(stop_gradient(r), r)), r)


mod = remainder


def astype_like(x, like):
    return astype(x, aval(like).dtype)


def where_(cond, x, y):
    cond = asarray(cond, np.bool_)
    x, y = promote(x, y)
    shape = broadcast_shapes(aval(cond).shape, aval(x).shape, aval(y).shape, op="where")
    return bind(ew.select_n_p, *[broadcast_to_shape(v, shape) for v in (cond, y, x)])


def _log_add(x, y, name, exp_base, log_base):
    """log(b**x + b**y) for the base b of exp_base: the larger operand plus log1p(b**-|x - y|) / log(b). The
    larger operand and -|x - y| come from selects, not from max and abs, so each side of the tie is one
    analytic formula: derivatives of every order are exact at x == y (through max and abs the second one
    vanishes there), and no branch computes an overflow that a derivative would multiply by 0."""
    x, y = broadcast_operands(*promote(x, y, to_float=True), op=name)
    delta = subtract(x, y)
    x_larger = greater_equal(delta, 0)
    larger = where_(x_larger, x, y)
    gap = log1p(exp_base(where_(x_larger, negative(delta), delta)))
    finite = add(larger, gap if log_base is None else divide(gap, log_base))
    return where_(isnan(delta), add(x, y), finite)     # a NaN, or infinities of one sign: x + y, as NumPy


@_computed_in_float32(to_float=True)
def logaddexp(x, y):
    return _log_add(x, y, "logaddexp", exp, None)


@_computed_in_float32(to_float=True)
def logaddexp2(x, y):
    return _log_add(x, y, "logaddexp2", exp2, float(np.log(2)))


def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    """NumPy's clip ufunc: minimum(maximum(a, a_min), a_max), a tie giving the bound (derivative 1/2 there, as
    JAX's clip). `min` and `max` are NumPy 2's and JAX's names for the bounds."""
    reject_out("clip", out)
    a_min, a_max = _one_of("clip", "a_min", a_min, "min", min), _one_of("clip", "a_max", a_max, "max", max)
    out = asarray(a)
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return out


def _one_of(fn, name, value, alias, alias_value):
    if value is not None and alias_value is not None:
        raise TypeError(f"{fn}: give {name} or {alias}, not both")
    return alias_value if value is None else value


def isnan(x):
    x = asarray(x)
    return not_equal(x, x)


def isinf(x):
    return equal(absolute(asarray(x)), np.inf)


def _real_only(fn, x):
    """x, unless it is complex: NumPy's isposinf and isneginf are not defined there (+inf or -inf in which part?)."""
    x = asarray(x)
    if aval(x).dtype.kind == "c":
        raise TypeError(f"{fn}: not defined for complex numbers, got {aval(x).str_short()}; apply it to "
                        "tnp.real(x) or tnp.imag(x)")
    return x


def isposinf(x, out=None):
    reject_out("isposinf", out)
    return equal(_real_only("isposinf", x), np.inf)


def isneginf(x, out=None):
    reject_out("isneginf", out)
    return equal(_real_only("isneginf", x), -np.inf)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy's: |a - b| <= atol + rtol * |b| where b is finite, equal infinities, NaNs only with equal_nan."""
    a, b = promote(a, b, to_float="float64")
    close = bitwise_and(less_equal(absolute(subtract(a, b)), add(atol, multiply(rtol, absolute(b)))), isfinite(b))
    close = bitwise_or(close, equal(a, b))
    return bitwise_or(close, bitwise_and(isnan(a), isnan(b))) if equal_nan else close


def fmax(x, y):
    """NumPy's fmax: x where x >= y or y is NaN, else y (a NaN only where both are; x at a tie, so that
    fmax(-0.0, 0.0) is -0.0 and the derivative at a tie is x's: JAX gives ties to y)."""
    x, y = broadcast_operands(*promote(x, y), op="fmax")
    return where_(bitwise_or(greater_equal(x, y), isnan(y)), x, y)


def fmin(x, y):
    x, y = broadcast_operands(*promote(x, y), op="fmin")
    return where_(bitwise_or(less_equal(x, y), isnan(y)), x, y)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = asarray(x)
    if aval(x).dtype.kind == "c":      # each part, as NumPy
        return _by_parts(lambda part: nan_to_num(part, copy, nan, posinf, neginf), x)
    dtype = aval(x).dtype
    if not is_float(dtype):
        return x
    big = finfo(dtype).max
    x = where_(isnan(x), nan, x)
    x = where_(isposinf(x), big if posinf is None else posinf, x)
    return where_(isneginf(x), -big if neginf is None else neginf, x)


def trunc(x):
    """Toward zero (trunc(-0.5) is -0.0, as ceil gives it)."""
    x = asarray(x)
    return where_(less(x, 0), ceil(x), floor(x))


def fix(x, out=None):
    reject_out("fix", out)
    return trunc(x)


def rint(x):
    (x,) = promote(x, to_float=True)
    return round(x)


def reciprocal(x):
    """1 / x; for integers, as NumPy: 1 and -1 stay, every other value gives 0 (and 0 gives 0 here: NumPy's
    is undefined); for complex x NumPy's own formula (not its division: 1 / 0j is NaN + NaN j)."""
    (x,) = bools_as_int8(asarray(x))
    if aval(x).dtype.kind == "c":
        return _complex_reciprocal(x)
    if is_float(aval(x).dtype):
        return divide(1, x)
    return where_(equal(absolute(x), 1), x, astype_like(0, x))


def _by_parts(f, x):
    """f applied to the real and the imaginary part of a complex x."""
    return bind(cp.complex_p, f(bind(cp.real_p, x)), f(bind(cp.imag_p, x)))


def _complex_reciprocal(x):
    """With r the ratio of the smaller part to the larger, 1 / (re + im j) is (1 - r j) / d or (r - j) / d. The
    ratio not taken divides by 1, not by a part that may be 0: its infinity would make the derivative NaN."""
    re, im = bind(cp.real_p, x), bind(cp.imag_p, x)
    real_big = less_equal(absolute(im), absolute(re))
    r = where_(real_big, divide(im, where_(real_big, re, 1.0)), divide(re, where_(real_big, 1.0, im)))
    d = where_(real_big, add(re, multiply(im, r)), add(multiply(re, r), im))
    out_re = where_(real_big, divide(1, d), divide(r, d))
    out_im = where_(real_big, negative(divide(r, d)), negative(divide(1, d)))
    return bind(cp.complex_p, out_re, out_im)


def logical_xor(x, y):
    return not_equal(asarray(x, np.bool_), asarray(y, np.bool_))


@_computed_in_float32(to_float=True)
def deg2rad(x):
    (x,) = promote(x, to_float=True)
    return multiply(x, np.pi / 180.0)       # the constant NumPy multiplies by


@_computed_in_float32(to_float=True)
def rad2deg(x):
    (x,) = promote(x, to_float=True)
    return multiply(x, 180.0 / np.pi)


radians, degrees = deg2rad, rad2deg


def heaviside(x1, x2):
    x1, x2 = broadcast_operands(*promote(x1, x2, to_float=True), op="heaviside")
    return where_(less(x1, 0), 0.0, where_(greater(x1, 0), 1.0, where_(isnan(x1), x1, x2)))
