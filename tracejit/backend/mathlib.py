"""Vectorizable elementwise math functions, written as LLVM IR text.

LLVM's libm intrinsics (``llvm.exp.f32`` ...) become scalar library calls. The functions here use only
arithmetic, bit casts, compares, selects and intrinsics that map to single vector instructions (``llvm.fma``,
``llvm.fabs``, ``llvm.floor``, ``llvm.copysign``), with no branches, so that they vectorize (zmm code on
AVX-512). They come in two forms:

- The vector math library (libcalls.LIBRARY: every function here): each function on vectors of every width
  in libcalls.LANES (libcalls.library_function_ir), compiled once per process by vecmath.py. Loops call the
  intrinsic where LLVM has one (libcalls.intrinsic_symbol), which the loop vectorizer widens like any other,
  and libcalls.library_calls renames the calls of the optimised module to the library's functions; expm1,
  log1p and logistic are called by name with the vector-function-abi-variant attribute (libcalls.library_call).
  A loop holds a call, not the function's body: LLVM's time no longer grows with the number of math calls in
  a loop.
- Self-contained ``internal alwaysinline`` definitions ``@tj_<name>_<ty>`` (math_function_ir), for callers
  outside compiled loops and tests. Their intrinsics are not declared (LLVM's IR
  parser declares used intrinsics itself since LLVM 18), so any set of these functions can be pasted into a
  module next to the caller's own code and declarations::

    text = math_module_ir({("expm1", "float"), ("log1p", "double")}) + loops
    # in a loop body:  %y = call float @tj_expm1_float(float %x)

Algorithms (branch-free, no tables). exp, exp2, expm1, log, log1p, log2, log10, tanh, logistic, cbrt, atan,
asin, acos, atan2 and pow (``NATIVE_F32``) are computed in f32 for f32, with the same algorithms, f32 constants
and shorter polynomials, so that a zmm register holds 16 lanes instead of 8 (about twice the f32 throughput); their
results are within about 1.5 f32 ulp. sin, cos and tan as inlined definitions compute f32 in double and round
once (nearly correctly rounded); the library's f32 sin, cos and tan (vecmath.py, what compiled loops call)
compute in f32 up to |x| = 2**14 (the double algorithm beyond, for the vectors that have such a lane), sin and
cos within 0.6 ulp, tan within 0.96 ulp:

- exp, expm1: x = n*ln2 + r (Cody-Waite, ln2 in two parts), expm1(r) by a minimax polynomial; exp applies
  2**n by one vscalef (llvm.ldexp) on AVX-512, elsewhere in two factors: either rounds once, also near
  overflow and in the subnormal range (the same bits).
- exp2: x = n + t (n = round(x), t exact), t*ln2 = r - c with r = fl(t*ln2) and c its rest (never x*ln2,
  whose rounding costs hundreds of ulp at large |x|), then as exp.
- log, log1p: x = 2**k * m with m in [sqrt(1/2), sqrt(2)); log(m) = 2*atanh(s), s = (m-1)/(m+1);
  log1p carries the rounding error of 1 + x as a first-order correction. log2 = k + log(m)*log2(e), log10 =
  k*log10(2) + log(m)*log10(e), m = 1 + fr: log(m) = (fr - fr**2/2, exact) + s*(fr**2/2 + R), its products
  with the constants and the sums kept as double-doubles (f32: pairs of f32), one rounding at the end;
  log2(2**k) = k (mathlib_log).
- cbrt: u = |x|**(-1/3) from the bits divided by 3 (integer arithmetic), two third-order steps without a
  division, y = |x|*u**2, one Newton step on the exact residual |x| - y**3; the sign of x kept.
- tanh(|x|), with the sign of x: an odd polynomial below 0.55 (|tanh| < 1/2), 1 - 2/(exp(2|x|) + 1) above,
  where the exp's and the division's errors are damped; both computed, one selected per lane (no division
  in the polynomial, no compensated division). logistic from exp(-|x|) (never overflows).
- sin, cos, tan: x = n*pi/2 + r with pi/2 in three parts and r kept as a double-double (the library's f32 sin,
  cos and tan: pi/2 in three f32 parts, r a pair of f32; tan(r) = r + r**3 * P(r**2) there, not sin/cos).
- pow = exp(y * log|x|); for f64, log|x| and the product are double-doubles (about 2**-64 relative). f32 in f32
  arithmetic: 2**t, t = y * log2|x|, log2|x| = k + log2(m) from s = (m-1)/(m+1) as a pair of f32 (log2(m) to
  about 2**-40 relative), t as a pair (the fmas' roundings recovered), 2**r (t = n + r) times 1 + t's low part
  times ln2, rounded once (mathlib_pow); the library's function skips the special cases for a vector with none.
- atan: |x| > 1 as pi/2 - atan(1/|x|), then pi/4 + atan((r-1)/(r+1)) above tan(pi/8), a polynomial in u**2
  below; asin and acos through atan (of x/sqrt((1-x)(1+x)) and twice that of sqrt((1-x)/(1+x))), atan2(y, x)
  as atan(|y|/|x|), from pi where x is negative, C99's special cases kept. f32 in f32 arithmetic: the ratio
  p/q goes to u = n/d (p/q, (p - q)/(p + q) or -q/p) with one division, n and d exact sums, u corrected by
  the exact residual n - u*d; k*pi/4 (a pair of f32) + u + the rest rounded once (mathlib_arctrig).

Max error measured against long-double NumPy (f64, in ulp) and float64 NumPy (f32, relative) over
about 10**7 random arguments per function, from wide ranges (subnormal to overflow, trig arguments
up to 2**43, pow up to the overflow and underflow edges and with x near 1); for the native f32
functions and the library's f32 sin, cos and tan also over every 251st f32 bit pattern (17 million arguments,
all signs and binades; 11 million up to 2**43 for tan; pow: x so, with 12 values of y):

==========  =========  ===========
function    f64 (ulp)  f32 (rel)
==========  =========  ===========
exp         0.97       1.2e-7  (f32 arithmetic)
exp2        0.97       1.2e-7  (f32 arithmetic; 8.4e-8 where the result is normal)
expm1       1.08       1.2e-7  (f32 arithmetic)
log         0.84       8.1e-8  (f32 arithmetic)
log1p       0.85       8.0e-8  (f32 arithmetic)
log2        0.73       7.3e-8  (f32 arithmetic; exact at powers of two)
log10       0.67       7.1e-8  (f32 arithmetic)
tanh        1.48       1.6e-7  (f32 arithmetic)
logistic    1.45       1.7e-7  (f32 arithmetic)
sin         0.78       6.7e-8  (f32 arithmetic up to 2**14, library)
cos         0.78       6.9e-8  (f32 arithmetic up to 2**14, library)
tan         2.26       8.4e-8  (f32 arithmetic up to 2**14, library; 6.0e-8 inlined)
pow         0.98       6.4e-8  (f32 arithmetic; 1.2e-7 where the result is subnormal: one step off near a tie)
atan        1.91       6.2e-8  (f32 arithmetic)
asin        2.45       6.1e-8  (f32 arithmetic)
acos        2.11       6.2e-8  (f32 arithmetic)
atan2       2.05       6.2e-8  (f32 arithmetic)
cbrt        0.50       6.0e-8  (f32 arithmetic)
==========  =========  ===========

(6.0e-8 = 2**-24: half an f32 ulp, i.e. correctly rounded but for rare ties; 1.2e-7 = 2**-23. The
documented bar for f32 is 2e-6 relative. Where the f32 result is subnormal the error is counted in
f32 ulps times 2**-23.)

Special values follow NumPy: exp/expm1 overflow to inf and underflow through the subnormals to 0,
log(0) = -inf, log(x<0) = nan (log2, log10 too), log1p(-1) = -inf, cbrt(+-0) = +-0, cbrt(+-inf) = +-inf,
tanh(+-large) = +-1, NaN propagates, signed zeros are kept where NumPy keeps them, and pow follows C99
``pow`` (pow(x, 0) = 1, pow(1, y) = 1, pow(negative, non-integer) = nan, pow(+-0, negative) = inf with
the sign for odd y, ...).

sin, cos and tan reduce branch-free for |x| <= TRIG_LIMIT = 2**43 (about 8.8e12) in both types. Beyond
that |r| <= pi/4 needs Payne-Hanek: the library's functions (libcalls.py) give such lanes the C library's
double sin, cos and tan in a branch that vectors of ordinary arguments skip; this module's own bodies treat
them as +-0 (sin = tan = +-0, cos = 1): the complex functions pass those bodies' values through the library's
sin_far and cos_far (libcalls.FAR), the special functions call them where no huge argument is expected; +-inf
gives nan.

Do not put fast-math flags on these bodies: they rely on NaN compares, signed zeros and the exact
order of the error-compensation steps. The functions are written with mathlib_body.Body.
"""
import fractions

import numpy as np

from .mathlib_arctrig import INVERSE_TRIG
from .mathlib_arctrig import PIO2 as _PIO2
from .mathlib_body import Body
from .mathlib_exp import POLY as _EXP_POLY
from .mathlib_exp import exp, exp2, expm1, logistic, tanh
from .mathlib_log import POLY as _LOG_POLY
from .mathlib_log import log, log1p, log2, log10, log_parts
from .mathlib_pow import pow_f32

FUNCS = ("exp", "exp2", "log", "log1p", "log2", "log10", "expm1", "tanh", "logistic", "sin", "cos", "tan", "pow",
         "atan", "asin", "acos", "atan2", "cbrt")
BINARY = ("pow", "atan2")

_TYPES = ("float", "double")

# Minimax polynomial coefficients (lowest degree first) per target precision, from a Remez exchange in
# 60-digit arithmetic (the exp and log families' sets are in mathlib_exp and mathlib_log).
# The f32 sin and cos sets are evaluated in double; they are accurate to about 2**-31.
_POLY = {
    # sin(r) = r + r**3 * P(r**2), |r| <= pi/4 (+2**-10 of slack for the reduction)
    ("sin", "double"): (
        -0.1666666666666664, 0.008333333333323551, -0.00019841269830042426, 2.7557313613613064e-06,
        -2.5050728297995693e-08, 1.5894336437079924e-10,
    ),
    ("sin", "float"): (-0.1666666664399641, 0.008333329299231466, -0.00019839251589661932, 2.717254579129362e-06),
    # cos(r) = 1 - r**2/2 + r**4 * P(r**2)
    ("cos", "double"): (
        0.04166666666666665, -0.001388888888888277, 2.4801587294564206e-05, -2.755731571468763e-07,
        2.0875893813788294e-09, -1.136774778688888e-11,
    ),
    ("cos", "float"): (0.041666666647748006, -0.0013888885522545548, 2.4799903350862186e-05, -2.723637526521412e-07),
    **_EXP_POLY,
    **_LOG_POLY,
}

# tan(r) = r + r**3 * P(r**2), |r| <= pi/4 + 2**-10, for the library's f32 tan (f32 arithmetic): relative error
# 2**-28.5 with these f32 coefficients (least squares on 400 Chebyshev nodes, checked against mpmath)
_POLY["tan", "float"] = (
    0.33333349227905273, 0.1333266794681549, 0.05405937880277634, 0.021284818649291992, 0.010829819366335869,
    9.582930942997336e-05, 0.0043738665990531445,
)

# Functions computed in f32 arithmetic for f32 (16 lanes per zmm); the others are computed in double.
NATIVE_F32 = ("exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "tanh", "logistic", "cbrt", "atan", "asin",
              "acos", "atan2", "pow")

_INF = float("inf")
_NAN = float("nan")


_TWO_OVER_PI = float.fromhex("0x1.45f306dc9c883p-1")
_THIRD = (float.fromhex("0x1.5555555555555p-2"), float.fromhex("0x1.5555555555555p-56"))
TRIG_LIMIT = 2.0**43


def _f32_parts(parts, n):
    """n float32 values whose sum is the sum of the doubles `parts` to about 2**(-24 n) relative."""
    rest, out = sum(map(fractions.Fraction, parts)), []
    for _ in range(n):
        out.append(float(np.float32(float(rest))))
        rest -= fractions.Fraction(out[-1])
    return tuple(out)


# sin, cos and tan of f32 in the library (libcalls.py) reduce and evaluate in f32 up to F32_TRIG_LIMIT: pi/2 in three
# f32 parts; n * P1 is exact in the fma and x - n * P1 too, n * P2 is split exactly, so that r keeps about
# 2**-58 absolute accuracy for |n| < 2**14; a vector with a lane beyond it (or infinite) takes the double path.
_F32_PIO2 = _f32_parts(_PIO2, 3)
F32_TRIG_LIMIT = 2.0**14
F32_TRIG = ("sin", "cos", "tan")


def math_symbol(name: str, ty: str) -> str:
    """The LLVM name of a function, e.g. ``@tj_exp_float``."""
    return f"@tj_{name}_{ty}"


def math_function_ir(name: str, ty: str) -> str:
    """Definition of ``@tj_<name>_<ty>``: ``ty (ty)``, or ``ty (ty, ty)`` for pow and atan2 (y, x); ty is
    float or double. Internal and always inlined: for callers that paste it into their module."""
    return define(name, ty, 1, "internal", "alwaysinline nounwind")


def vector_symbol(name: str, ty: str, lanes: int) -> str:
    """``@tj_<name>_<ty>`` for lanes 1, ``@tj_<name>_<ty>_v<lanes>`` otherwise."""
    return math_symbol(name, ty) + (f"_v{lanes}" if lanes > 1 else "")


def define(name, ty, lanes, linkage, attributes, suffix=""):
    """The definition of a function on `lanes`-element vectors (`vector_symbol` + suffix)."""
    if name not in FUNCS or ty not in _TYPES:
        raise ValueError(f"no math function {name!r} for type {ty!r}")
    params = ("x", "y") if name in BINARY else ("x",)
    f = Body(ty if name in NATIVE_F32 else "double", lanes)
    args = [f.ext(f"%{p}", ty) for p in params]
    return function_text(f, _KERNELS[name](f, *args, ty), name, ty, params, linkage, attributes, suffix)


def function_text(f, value, name, ty, params, linkage, attributes, suffix=""):
    """The definition `vector_symbol(name, ty, f.lanes) + suffix` of parameters params whose body f computes
    value (returned in ty); the math libraries built on Body (specmath) define theirs with it too."""
    f.ret(value, ty)
    vty = ty if f.lanes == 1 else f"<{f.lanes} x {ty}>"
    header = ", ".join(f"{vty} %{p}" for p in params)
    body = "\n".join(f.lines)
    return (f"define {linkage + ' ' if linkage else ''}{vty} {vector_symbol(name, ty, f.lanes)}{suffix}({header}) "
            f"{attributes} {{\n{body}\n}}\n")


def math_module_ir(needed) -> str:
    """Definitions of the (name, ty) pairs in ``needed``, each once, in a stable order."""
    return "\n".join(math_function_ir(name, ty) for name, ty in sorted(set(needed)))


def _reduce_pio2(f, x):
    """(rh, rl, q): x = n*pi/2 + rh + rl with |rh| <= pi/4 (+2**-10), q = n mod 4 as an integer.
    n*P1 is exact in the fma, n*P2 is split exactly, so r keeps ~2**-105 absolute accuracy in double (f32:
    see _F32_PIO2)."""
    limit, pio2 = (TRIG_LIMIT, _PIO2) if f.ty == "double" else (F32_TRIG_LIMIT, _F32_PIO2)
    x = f.sel(f.cmp("ogt", f.abs(x), limit), f.mul(x, 0.0), x)  # out of range: +-0, inf -> NaN
    k = f.fma(x, _TWO_OVER_PI, f.k.magic)
    n = f.sub(k, f.k.magic)
    r1 = f.fma(n, -pio2[0], x)
    p2, p2e = f.two_prod(n, pio2[1])
    rh, e = f.two_sum(r1, f.neg(p2))
    rl = f.sub(f.sub(e, p2e), f.mul(n, pio2[2]))
    return rh, rl, f.int("and", f.bits(k), 3)


def _sin_kernel(f, rh, rl, prec):
    """sin(rh + rl) ~ sin(rh) + rl*cos(rh), |rl| << |rh|."""
    z = f.mul(rh, rh)
    tail = f.fma(f.mul(z, rh), f.poly(z, _POLY["sin", prec]), f.mul(rl, f.fma(z, -0.5, 1.0)))
    return f.add(rh, tail)


def _cos_kernel(f, rh, rl, prec):
    """cos(rh + rl) ~ cos(rh) - rl*sin(rh); w = 1 - z/2 plus its exact rounding error."""
    z = f.mul(rh, rh)
    hz = f.mul(z, 0.5)
    w = f.sub(1.0, hz)
    tail = f.fma(f.mul(z, z), f.poly(z, _POLY["cos", prec]), f.neg(f.mul(rh, rl)))
    return f.add(w, f.add(f.sub(f.sub(1.0, w), hz), tail))


def _sin_or_cos(f, x, prec, shift):
    """sin(x) for shift 0, cos(x) = sin(x + pi/2) for shift 1."""
    rh, rl, q = _reduce_pio2(f, x)
    q = f.int("add", q, shift)
    odd = f.icmp("ne", f.int("and", q, 1), 0)
    y = f.sel(odd, _cos_kernel(f, rh, rl, prec), _sin_kernel(f, rh, rl, prec))
    sign = 62 if f.ty == "double" else 30
    return f.from_bits(f.int("xor", f.bits(y), f.int("shl", f.int("and", q, 2), sign)))  # negate if q&2


def _sin(f, x, prec):
    return f.sel(f.cmp("oeq", x, 0.0), x, _sin_or_cos(f, x, prec, 0))  # keep -0


def _cos(f, x, prec):
    return _sin_or_cos(f, x, prec, 1)


def _tan(f, x, prec):
    """sin(r)/cos(r), or -cos(r)/sin(r) in odd quadrants (f32 arithmetic: _tan_f32)."""
    rh, rl, q = _reduce_pio2(f, x)
    odd = f.icmp("ne", f.int("and", q, 1), 0)
    if f.ty == "float":
        y = _tan_f32(f, rh, rl, odd)
    else:
        s, c = _sin_kernel(f, rh, rl, prec), _cos_kernel(f, rh, rl, prec)
        y = f.div(f.sel(odd, f.neg(c), s), f.sel(odd, s, c))
    return f.sel(f.cmp("oeq", x, 0.0), x, y)  # keep -0


def _tan_f32(f, rh, rl, odd):
    """tan(rh + rl) = t = rh + tail, tail = rh**3 * P(rh**2) + rl * (1 + rh**2) (at most 0.22 t, so that its
    rounding errors count a fifth), kept as hi + lo; in odd quadrants -1/t from q = -1/hi and one correction
    step on the exact residual 1 + q*(hi + lo)."""
    z = f.mul(rh, rh)
    r3 = f.mul(rh, z)
    r3_lo = f.fma(rh, f.fma(rh, rh, f.neg(z)), f.fma(rh, z, f.neg(r3)))  # rh**3 - r3, to first order
    p = f.poly(z, _POLY["tan", "float"])
    tail = f.fma(r3, p, f.fma(r3_lo, p, f.fma(rl, z, rl)))
    hi = f.add(rh, tail)
    lo = f.add(f.sub(rh, hi), tail)      # exact: |tail| <= |rh|
    q = f.div(-1.0, hi)
    return f.sel(odd, f.fma(q, f.fma(q, lo, f.fma(q, hi, 1.0)), q), hi)


def _log_dd(f, x):
    """log(x) as hi + lo to about 2**-64 relative, for x >= 0 or NaN (hi is -inf, inf, NaN there).
    Same reduction as log, with s, z/3 and the final sums carried as double-doubles."""
    k, fr = log_parts(f, x)
    inv = f.div(1.0, f.add(fr, 2.0))
    sh = f.mul(fr, inv)
    sl = f.mul(f.fma(f.neg(sh), fr, f.fma(sh, -2.0, fr)), inv)  # the exact residual fr - sh*(2 + fr), over 2 + fr
    zh, zl = f.two_prod(sh, sh)
    zl = f.fma(f.mul(sh, 2.0), sl, zl)
    th, tl = f.two_prod(zh, _THIRD[0])  # t = z/3 + z**2 * P(z), z = zh + zl
    tl = f.fma(zh, _THIRD[1], f.fma(zl, _THIRD[0], tl))
    z2 = f.fma(zh, zh, f.mul(f.mul(zh, 2.0), zl))
    tl = f.fma(z2, f.poly(zh, _POLY["atanh", "double"]), tl)
    oh = f.add(f.add(th, tl), 1.0)  # o = 1 + t
    ol = f.add(f.add(f.sub(1.0, oh), th), tl)
    ph, pl = f.two_prod(sh, oh)  # log(m) = 2*s*o
    pl = f.fma(sl, oh, f.fma(sh, ol, pl))
    hi, lo = f.fast_two_sum(f.mul(k, f.k.ln2_hi), f.mul(ph, 2.0))  # |k ln2| > 0.69 > |log(m)| unless k = 0
    lo = f.add(lo, f.fma(pl, 2.0, f.mul(k, f.k.ln2_lo)))
    hi = f.sel(f.cmp("oeq", x, 0.0), -_INF, hi)
    return f.sel(f.cmp("ueq", x, _INF), x, hi), lo  # inf and NaN


def _pow(f, x, y, prec):
    """C99 pow: exp of the double-double y*log|x| (f32: mathlib_pow, in f32 arithmetic)."""
    if f.ty == "float":
        return pow_f32(f, x, y)
    ax = f.abs(x)
    lh, ll = _log_dd(f, ax)
    th, tl = f.two_prod(y, lh)
    tl = f.fma(y, ll, tl)
    tl = f.sel(f.cmp("olt", f.abs(th), 750.0), tl, 0.0)  # the low part of inf/NaN/huge is NaN
    th = f.sel(f.cmp("oeq", ax, 1.0), 0.0, th)  # 1**y = 1 and (-1)**+-inf = 1, even for y = inf, NaN
    mag = exp(f, th, "double", tl)
    fy = f.call("floor", y)
    half = f.mul(y, 0.5)
    odd = f.both(f.cmp("oeq", fy, y), f.cmp("une", f.call("floor", half), half))
    negx = f.icmp("slt", f.bits(x), 0)  # sign bit, so -0 counts
    r = f.sel(f.both(negx, odd), f.neg(mag), mag)
    finite_neg = f.both(f.cmp("olt", x, 0.0), f.cmp("ogt", x, -_INF))
    r = f.sel(f.both(finite_neg, f.cmp("une", fy, y)), _NAN, r)  # non-integer (or NaN) exponent
    return f.sel(f.cmp("oeq", y, 0.0), 1.0, r)


# cbrt: u = x**(-1/3) guessed as CBRT_GUESS - bits/3 (within 3.5%), f64 on the high 32 bits, hi/3 as one 32x32-bit
# product and a shift; arguments below CBRT_TINY are scaled by 2**(3j) first (the result by 2**-j), which keeps
# x - y**3 of the final step normal
CBRT_GUESS = {"double": 0x553EF0FE, "float": 0x54A232A2}
CBRT_TINY = {"double": (2.0**-960, 36), "float": (2.0**-100, 16)}


def _cbrt(f, x, prec):
    """cbrt(x) without a division: two steps u += u*(t/3 + 2t**2/9), t = 1 - x*u**3 (third order: error
    3.5e-2 -> 3.9e-4 -> 7e-11 relative before rounding), y = x*u**2, then one Newton step y += (x - y**3) * u**2/3
    with x - y**3 from the exact square of y (for f64 about 2**-66 off before its one rounding). f32 computes
    in f32. cbrt(-x) = -cbrt(x); +-0, +-inf and NaN pass through."""
    ax = f.abs(x)
    limit, j = CBRT_TINY[f.ty]
    tiny = f.cmp("olt", ax, limit)
    ax = f.sel(tiny, f.mul(ax, 2.0 ** (3 * j)), ax)
    if f.ty == "double":
        third = f.int("lshr", f.int("mul", f.int("lshr", f.bits(ax), 32), 0xAAAAAAAB), 33)
        u = f.from_bits(f.int("shl", f.int("sub", CBRT_GUESS[f.ty], third), 32))
    else:
        u = f.from_bits(f.int("sub", CBRT_GUESS[f.ty], f.int("udiv", f.bits(ax), 3)))
    for _ in range(2):
        t = f.fma(f.neg(f.mul(f.mul(ax, u), u)), u, 1.0)
        u = f.fma(f.mul(u, t), f.fma(t, 2 / 9, 1 / 3), u)
    y = f.mul(f.mul(ax, u), u)
    y2h, y2l = f.two_prod(y, y)
    r = f.fma(f.neg(y2l), y, f.fma(f.neg(y2h), y, ax))
    y = f.fma(r, f.mul(f.mul(u, u), 1 / 3), y)
    y = f.call("copysign", f.mul(y, f.sel(tiny, 2.0**-j, 1.0)), x)
    return f.sel(f.cmp("ueq", f.add(x, x), x), x, y)  # +-0, +-inf, NaN


def kernel(name):
    """The writer of a function's body, kernel(f, *args, prec) -> SSA value, for the libraries built on these
    (cmathlib, the complex functions; specmath); also "log_dd", log_dd(f, x) -> (hi, lo)."""
    return _log_dd if name == "log_dd" else _KERNELS[name]


_KERNELS = {
    "exp": exp, "exp2": exp2, "expm1": expm1, "log": log, "log1p": log1p, "log2": log2, "log10": log10,
    "tanh": tanh, "logistic": logistic, "sin": _sin, "cos": _cos, "tan": _tan, "pow": _pow, "cbrt": _cbrt,
    **INVERSE_TRIG,
}
