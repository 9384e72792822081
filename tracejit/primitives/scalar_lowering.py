"""The scalar LLVM instruction sequences that the elementwise table rows name as their lowering
(tracejit.backend.rules.Elementwise). `b` is the emitter; b.ty() is the type of the first operand (of its parts,
when it is complex: a complex operand is a pair (re, im), and the complex functions are cmathlib's)."""
import numpy as np

from ..backend.rules import Elementwise


def math(name):
    """A function of the vectorizable math library (tracejit.backend.mathlib; of cmathlib for complex)."""
    return Elementwise(lambda b, *xs: b.cmath(name, *xs) if b.kind() == "c" else b.math(name, *xs), cheap=False,
                       calls=name)


def intrinsic(name):
    return Elementwise(lambda b, x: b.intrinsic(name, x))


def hypot(b, x, y):
    """The modulus of the complex number x + iy (cmathlib's abs: vectorized, scaled in double, within an ulp of
    glibc's hypot; of f32 rounded once from double, its bits), not the C library's hypot, a scalar call: 1e6 f64
    1.44 ms on one thread (NumPy 11.1), f32 0.86 (NumPy 3.7)."""
    return b.cmath("abs", (x, y), real=True)


def binop(fop, iop):
    return Elementwise(lambda b, x, y: b.binop(fop, iop, x, y))


def compare(pred):
    return Elementwise(lambda b, x, y: b.cmp(pred, x, y))


def neg(b, x):
    if b.kind() == "c":
        return tuple(b(f"fneg {b.ty()} {p}") for p in x)
    return b(f"fneg {b.ty()} {x}") if b.kind() == "f" else b(f"sub {b.ty()} 0, {x}")


def sqrt(b, x):
    return b.cmath("sqrt", x) if b.kind() == "c" else b.intrinsic("sqrt", x)


def rsqrt(b, x):
    return b(f"fdiv {b.ty()} {b.const(1)}, {b.intrinsic('sqrt', x)}")


def abs_(b, x):
    if b.kind() == "c":
        return b.cmath("abs", x, real=True)
    if b.kind() == "u":
        return x
    return b.intrinsic("fabs", x) if b.kind() == "f" else b.intrinsic("abs", x, extra=", i1 false")


def sign(b, x):
    if b.kind() == "c":
        return b.cmath("sign", x)
    zero = b.const(0)
    # a float that is neither > 0 nor < 0 is a zero or NaN: x + 0.0 gives +0.0 (as NumPy) or the NaN
    pos = b.select(b.cmp("gt", x, zero), b.const(1), zero if b.kind() != "f" else b.binop("fadd", "add", x, zero))
    return b.select(b.cmp("lt", x, zero), b.const(-1), pos)


def round_(b, x, rounding_method=1):
    return b.intrinsic("roundeven" if rounding_method == 1 else "round", x)


def not_(b, x):
    return b(f"xor {b.ty()} {x}, {'true' if b.kind() == 'b' else -1}")


def is_finite(b, x):
    finite = [b(f"fcmp olt {b.ty()} {b.intrinsic('fabs', p)}, 0x7FF0000000000000") for p in b.parts(x)]
    return finite[0] if len(finite) == 1 else b(f"and i1 {finite[0]}, {finite[1]}")


def identity(b, x):
    return x


def shift(op):
    """x shifted by y bits (y an unsigned count: a negative one is huge). LLVM's shifts by the width or more
    are poison; NumPy's give 0 (and -1 for a negative x shifted right arithmetically)."""
    def lower(b, x, y):
        ty, bits = b.ty(), 8 * b.dtype().itemsize
        huge = b(f"icmp uge {ty} {y}, {bits}")
        shifted = b(f"{op} {ty} {x}, {b.select(huge, b.const(0), y)}")
        past = b(f"ashr {ty} {x}, {bits - 1}") if op == "ashr" else b.const(0)
        return b.select(huge, past, shifted)
    return Elementwise(lower)


def population_count(b, x):
    return b.intrinsic("ctpop", x)


def clz(b, x):
    return b.intrinsic("ctlz", x, extra=", i1 false")


def div(b, x, y):
    return b.binop("fdiv", None, x, y) if b.kind() in "fc" else _int_div(b, x, y)


def rem(b, x, y):
    """C's fmod for floats: the vector math library's (libcalls.EXACT), where frem would call the C library's per
    element."""
    return b.math("fmod", x, y) if b.kind() == "f" else _int_rem(b, x, y)


def pow_(b, x, y):
    if b.kind() == "c":
        return b.cmath("pow", x, y)
    return b.math("pow", x, y) if b.kind() == "f" else _int_power(b, x, y)


def _int_div(b, x, y):
    """Truncating division; x / 0 is 0 and x / -1 is -x (wrapping), never a trap."""
    zero = b.cmp("eq", y, b.const(0))
    if b.kind() == "u":
        return b.select(zero, b.const(0), b(f"udiv {b.ty()} {x}, {b.select(zero, b.const(1), y)}"))
    minus_one = b.cmp("eq", y, b.const(-1))
    safe = b.select(b(f"or i1 {zero}, {minus_one}"), b.const(1), y)
    q = b.select(minus_one, b(f"sub {b.ty()} 0, {x}"), b(f"sdiv {b.ty()} {x}, {safe}"))
    return b.select(zero, b.const(0), q)


def _int_rem(b, x, y):
    """Remainder with the dividend's sign; x % 0 and x % -1 are 0."""
    if b.kind() == "u" and b.ty() == "i64" and isinstance(y, str) and y.isdigit() and 0 < int(y) < 1 << 16:
        return _u64_rem_small(b, x, int(y))
    bad = b.cmp("eq", y, b.const(0))
    if b.kind() == "i":
        bad = b(f"or i1 {bad}, {b.cmp('eq', y, b.const(-1))}")
    op = "urem" if b.kind() == "u" else "srem"
    return b.select(bad, b.const(0), b(f"{op} {b.ty()} {x}, {b.select(bad, b.const(1), y)}"))


def _u64_rem_small(b, x, d):
    """x % d for a uint64 x and a constant 0 < d < 2**16, from x's halves in 32-bit arithmetic:
    (hi % d * (2**32 % d) + lo % d) % d, which stays below 2**32 and vectorizes (64-bit remainders by a constant
    ran one lane at a time: random.randint's three of them over 1e6 int64 took 2.4 ms; NumPy's integers 2.1)."""
    hi = b(f"trunc i64 {b(f'lshr i64 {x}, 32')} to i32")
    lo = b(f"trunc i64 {x} to i32")
    high_part = b(f"mul i32 {b(f'urem i32 {hi}, {d}')}, {(1 << 32) % d}")
    total = b(f"add i32 {high_part}, {b(f'urem i32 {lo}, {d}')}")
    return b(f"zext i32 {b(f'urem i32 {total}, {d}')} to i64")


def _int_power(b, x, y):
    """x**y by squaring over every bit of y (branch-free); negative y truncates as NumPy's impl here does."""
    ty, bits = b.ty(), b.dtype().itemsize * 8
    negative = b.cmp("lt", y, b.const(0))
    e = b.select(negative, b.const(0), y)
    result, base = b.const(1), x
    for bit in range(bits - 1):
        on = b(f"trunc {ty} {b(f'lshr {ty} {e}, {bit}')} to i1")
        result = b.select(on, b(f"mul {ty} {result}, {base}"), result)
        base = b(f"mul {ty} {base}, {base}")
    odd = b(f"trunc {ty} {y} to i1")
    small = b.select(b.cmp("eq", x, b.const(1)), b.const(1),
                     b.select(b.cmp("eq", x, b.const(-1)), b.select(odd, b.const(-1), b.const(1)), b.const(0)))
    return b.select(negative, small, result)


def integer_pow(b, x, y):
    if b.kind() == "c":       # NumPy's complex power, the exponent a constant (its other cases fold away)
        return b.cmath("pow", x, b.const(y))
    if b.kind() != "f" and y < 0:
        return _int_power(b, x, b.const(y))
    result, base, n = None, x, abs(y)
    while n:
        if n & 1:
            result = base if result is None else b.binop("fmul", "mul", result, base)
        n >>= 1
        if n:
            base = b.binop("fmul", "mul", base, base)
    result = result or b.const(1)
    return b(f"fdiv {b.ty()} {b.const(1)}, {result}") if y < 0 else result


def extremum(pred, integer):
    """NumPy's maximum / minimum: x where it wins (pred) or is NaN, else y, so that a tie of -0.0 and +0.0
    gives y, as in NumPy (LLVM's maximum orders -0.0 below +0.0; reductions use it)."""
    def lower(b, x, y):
        if b.kind() != "f":
            return integer(b, x, y)
        wins = b(f"or i1 {b(f'fcmp {pred} {b.ty()} {x}, {y}')}, {b(f'fcmp uno {b.ty()} {x}, {x}')}")
        return b.select(wins, x, y)
    return Elementwise(lower)


# The hyperbolic functions and their inverses from the vectorized exp, expm1, log1p and sqrt (mathlib), one
# library call each: no cancellation in any of the formulas (within 2 ulp of NumPy over 4e5 arguments from
# 1e-300 to 1e300), on |x| with the sign put back, so that odd functions keep -0.0. Past exp's overflow the call
# takes |x|/2 and the value is exp(|x|/2)**2 / 2 (expm1(|x|/2) is exp(|x|/2) there); past 2**28 the inverses
# are log(2|x|) = log1p(|x|/2 - 1) + log(4) (2|x| would overflow). (Two calls each, sinh and cosh took twice
# NumPy's time.)

def hyperbolic(name):
    def lower(b, x):
        ty, one, half = b.ty(), b.const(1), b.const(0.5)
        a = b.intrinsic("fabs", x)

        def add(p, q):
            return b(f"fadd {ty} {p}, {q}")

        def mul(p, q):
            return b(f"fmul {ty} {p}, {q}")

        def div(p, q):
            return b(f"fdiv {ty} {p}, {q}")

        if name in ("sinh", "cosh"):
            big = b.cmp("gt", a, b.const(709.0 if ty == "double" else 88.0))
            e = b.math("expm1" if name == "sinh" else "exp", b.select(big, mul(a, half), a))
            huge = mul(e, mul(e, half))                  # exp(a) / 2 without overflowing before sinh does
            value = mul(add(e, div(e, add(e, one)) if name == "sinh" else div(one, e)), half)
            value = b.select(big, huge, value)
            return b.intrinsic("copysign", value, x) if name == "sinh" else value
        if name == "atanh":
            return b.intrinsic("copysign", mul(half, b.math("log1p", div(add(a, a), b(f"fsub {ty} {one}, {a}")))), x)
        def log1p_or_log_2a(y, big):        # log1p(y), or log(2a) where big
            value = b.math("log1p", b.select(big, b(f"fsub {ty} {mul(a, half)}, {one}"), y))
            return b.select(big, add(value, b.const(np.log(4))), value)

        if name == "asinh":
            square = mul(a, a)
            small = add(a, div(square, add(one, b.intrinsic("sqrt", add(one, square)))))
            return b.intrinsic("copysign", log1p_or_log_2a(small, b.cmp("gt", a, b.const(2.0 ** 28))), x)
        t = b(f"fsub {ty} {x}, {one}")                  # acosh: exact for x in [0.5, 2] (Sterbenz)
        value = log1p_or_log_2a(add(t, b.intrinsic("sqrt", add(add(t, t), mul(t, t)))), b.cmp("gt", x, b.const(2.0 ** 28)))
        return b.select(b.cmp("lt", x, one), b.const(np.nan), value)     # below 1 the formula is real
    return Elementwise(lower, cheap=False)
