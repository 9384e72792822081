"""Vectorizable special functions (erf, erfc, erfcx, erf_inv, ndtr, ndtri, log_ndtr, lgamma, digamma, gamma),
written with mathlib_body.Body on mathlib's exp, log, log1p and double-double log: branch-free straight-line code
with no tables, so a fused loop calling them vectorizes as mathlib's functions do. float64 computes in double.
float32's erf, erfc, erfcx, ndtr, log_ndtr, erf_inv and ndtri (NATIVE_F32) compute in f32 arithmetic, 16 lanes per
AVX-512 register instead of 8 (mathlib's f32 exp, log and log1p; f32 polynomial sets from specmath_f32), within
1-4 f32 ulp; float32's lgamma, digamma and gamma compute in double and round once.

Each kernel is written once against Body's instruction set and runs two ways: as LLVM text (`math_module_ir`,
pasted into a compiled module next to mathlib's functions; erf, erfc, erfcx and ndtr are instead the vector math
library's, libcalls.SPECIAL, `define`d once per process and width) and on NumPy arrays (`evaluate`, through
array_body.ArrayBody), which is the NumPy impl of its primitive (tracejit.primitives.special).

Algorithms (polynomials: Chebyshev interpolants in 40-digit arithmetic, scripts/fit_special_math.py; the constant
term of each added last as a double-double):

- erfcx(u), u >= 0: h / (u + 4) with t = (u - 4)/(u + 4): h a polynomial in t + 1/2 for u < 4, in 1/2 - t above
  (the map sends [0, inf] to [-1, 1], where (u + 4) erfcx(u) is analytic), one Horner pass with the coefficients
  selected per lane; 1/(u + 4) corrected once, t computed in whichever form is exact to first order. For u < 0,
  2 exp(u**2) - erfcx(-u).
- erfc(x) = exp(-x**2) erfcx(|x|) (2 minus that for x < 0), x**2 a double-double for exp; below |x| = 1/2,
  1 - erf(x). erf(x) = x P(x**2) below |x| = 1, +-(1 - erfc(|x|)) above.
- ndtr(x) = E or 1 - E, E = exp(-x**2/2) erfcx(|x|/sqrt 2) / 2 (|x|/sqrt 2 a double-double); log_ndtr(x) =
  -x**2/2 + log(erfcx(|x|/sqrt 2)/2) for x < 0 (x**2/2 from |x|/sqrt 2: finite down to x = -1.9e154), log1p(-E) above.
- float32: erf(x) = x + x R(x**2) below |x| = 1 (one rounding), a polynomial in |x| - 5/2 up to 4 (erf(4) rounds
  to 1): no exp and no division, about the cost of XLA's f32 rational approximation. erfc, erfcx, ndtr and log_ndtr
  as for double, 1/(u + 4) carried as an unevaluated f32 pair (its rounding would move the polynomial's argument by
  1-2 ulp). erf_inv and ndtri: y + y R(y**2) for |y| <= 1/2, beyond a polynomial in sqrt(-log q) on three pieces
  (coefficients selected per lane; ndtri's sets include the factor sqrt 2). erf's long polynomial is evaluated by
  Estrin's scheme: a quarter of Horner's latency, which a chain of calls (erf(erf(x) ...)) waits on.
- erf_inv(y) = y P(y**2) for |y| <= 1/2; beyond, erfcinv(q), q = 1 - |y| (exact): a first guess from a polynomial
  in log(sqrt(-log q)), then one Halley step on G(u) = -u**2 + log erfcx(u) - log q (q's log a double-double),
  nearly linear in u**2, so the step takes a 1e-7 guess to full precision (float32 uses a longer guess, within
  1e-9, and no step). ndtri(p) = sqrt(2) erf_inv(2p - 1), the tail's q = 2 min(p, 1 - p) exact, so tiny p keep
  their precision.
- lgamma(x), x > 0: below 8, x = r + n with r in [1.5, 2.5) and lgamma(x) = t Q(t) +- log(prod), t = x - (n + 2)
  exact, prod the n shifts (x (x + 1) or x below 1.5); from 8, Stirling's series, (x - 1/2) log x - x as
  double-doubles. gamma(x) = exp of the same pieces (exp(t Q(t)) times or over prod below 8). x < 0: the
  reflection formula with 1 - x's rounding carried, sin(pi x) = +-r S(r**2), x = k + r exactly, |r| <= 1/2.
- digamma(x), x > 0: below 8, digamma(r) + sum 1/(r + k), r in [1, 2), digamma(r) = (r - x0) P(r - 3/2) around
  its root x0 (a double-double); from 8, log x - 1/(2x) - the asymptotic series. x < 0: digamma(1 - x) -
  pi cot(pi x), cos(pi r) a polynomial in r**2; within 0.1 of the root near -0.504, (x - x1) P1(x - x1).

Accuracy, measured by scripts/measure_special_math.py: max f64 error in ulp against mpmath (30 digits) over
3,000 random arguments per function from wide ranges (tails to the last subnormal: erfc to 27.2, ndtr to -38, ndtri
down to 1e-300, log_ndtr to -1e150, gammaln and digamma from 1e-300 to 1e305, gamma over [-170, 171]); max
distance in ulp from SciPy (1.17) over 500,000 arguments from the same ranges, where SciPy's result is a normal
float; and max f32 error in f32 ulp against SciPy's float64 value (for the functions computed in f32 arithmetic over
every 251st f32 bit pattern, 17 million arguments, all signs and binades, with a tail of inaccurate values: erf is
within one ulp but for 7 arguments, the others within one for 96-99.9% of them; the f64 columns as before, log_ndtr's
new form of x**2/2 measured 2.88 ulp):

==========  ================  ===============  ===============
function    f64 ulp (mpmath)  f64 ulp (SciPy)  f32 ulp (SciPy)
==========  ================  ===============  ===============
erf         1.23              3                1.07
erfc        2.57              509 (a)          3.34
erfcx       2.03              508 (a)          2.39
erf_inv     2.46              4                3.13
ndtr        3.09              2084 (b)         3.82
ndtri       3.31              6                3.16
log_ndtr    3.46              2015 (b)         3.98
lgamma      3.17              66142 (c)        0.50
digamma     3.58              5                0.50
gamma       3.47              9                0.50
==========  ================  ===============  ===============

Where the distance from SciPy exceeds a few ulp, SciPy is that far from the true value (checked against mpmath at
the worst arguments): (a) SciPy's erfc past x = 20 and erfcx below x = -20, by up to 509 ulp; (b) SciPy's ndtr
below x = -20 and log_ndtr above 20, which round x/sqrt(2) first, by up to 2084 ulp; (c) SciPy's gammaln near its
zeros at 1 and 2 (66142 ulp at 1.99997). SciPy also flushes subnormal results of erfc and ndtr to 0 and returns
inf for gammaln of a subnormal argument; these keep the true values. lgamma and digamma between their negative
poles are as accurate as the reflection formula allows (absolute error about 1e-15 near their zeros there, as
SciPy's), and digamma's root near -0.504 is fitted separately, relative error a few ulp.

Special values follow SciPy: erf(+-inf) = +-1, erfc(-inf) = 2, erfcx(-inf) = inf, erf_inv(+-1) = +-inf and NaN
beyond, ndtri(0) = -inf, ndtri(1) = inf, lgamma = inf at 0 and the negative integers (and at +-inf: SciPy gives
-inf at -inf), digamma(+-0) = -+inf and NaN at the negative integers and -inf; NaN propagates.
"""
import numpy as np

from .array_body import ArrayBody
from .mathlib import function_text, kernel
from .mathlib_body import Body
from .specmath_f32 import ERFINV_PIECES as _ERFINV_PIECES
from .specmath_f32 import ESTRIN as _ESTRIN
from .specmath_f32 import POLY as _POLY_F32
from .specmath_f32 import estrin as _estrin
from .specmath_f32 import split as _split
from .specmath_f64 import _CONSTANT_LO, _POLY, _PSI_NEGATIVE_ROOT, _PSI_ROOT, _TAIL_V

FUNCS = ("erf", "erfc", "erfcx", "erf_inv", "ndtr", "ndtri", "log_ndtr", "lgamma", "digamma", "gamma")
# computed in f32 arithmetic for float32 (16 lanes per zmm register); the others in double, rounded once
NATIVE_F32 = ("erf", "erfc", "erfcx", "ndtr", "log_ndtr", "erf_inv", "ndtri")

_INF = float("inf")
_NAN = float("nan")
_SQRT_PI = 1.772453850905516
_SQRT_HALF = (0.7071067811865476, -4.833646656726457e-17)
_SQRT2 = 1.4142135623730951
_HALF_LOG_2PI = (0.9189385332046728, -3.8782941580672414e-17)
_LOG_PI = 1.1447298858494002
_PI = 3.141592653589793
_ERFCX_K = 4.0
_STIRLING_X = 8.0


class _Body(Body):
    """Body plus mathlib's functions, inlined, computing in ty (float: mathlib's f32 exp, log and log1p)."""

    def __init__(self, ty="double", lanes=1):
        super().__init__(ty, lanes)

    def either(self, c1, c2):
        return self._emit(f"or {self.bty} {c1}, {c2}")

    def exp(self, x, lo=None):
        return kernel("exp")(self, x, self.ty, lo)

    def log(self, x):
        return kernel("log")(self, x, self.ty)

    def log1p(self, x):
        return kernel("log1p")(self, x, self.ty)

    def log_dd(self, x):
        return kernel("log_dd")(self, x)


def _square(f, x):
    """x**2 as p + e exactly (e = 0 where p is not finite)."""
    p, e = f.two_prod(x, x)
    return p, f.sel(f.cmp("olt", p, _INF), e, 0.0)


def _log_parts(f, x, prec):
    """log(x) as hi + lo: a double-double for double results, log(x) + 0 for float ones (which round away far
    more than the difference; the double-double costs about twice the log)."""
    return f.log_dd(x) if prec == "double" else (f.log(x), 0.0)


def _gauss(f, a, scale):
    """exp(-scale a**2) for a >= 0, scale 1 or 1/2, with a**2 exact."""
    p, e = _square(f, f.min(a, 40.0))
    return f.exp(f.mul(p, -scale), f.mul(e, -scale))


def _erfcx_positive(f, u, prec, lo=None):
    """erfcx(u + lo) for u >= 0, |lo| <= ulp(u): h w with w = 1/(u + lo + K) (the sum exact, the quotient
    corrected once); h a polynomial in t + 1/2 = 2uw - 1/2 below K, in 1/2 - t = 2Kw - 1/2 above (each exact
    to first order, in [-1/2, 1/2]), one Horner pass with the coefficients selected per lane."""
    d, e = f.two_sum(u, _ERFCX_K)
    if lo is not None:
        e = f.add(e, lo)
    p = f.div(1.0, d)
    pd, pd_lo = f.two_prod(p, d)                                  # 1 - p d exactly: 1 - pd is exact (Sterbenz)
    delta = f.fma(f.neg(p), e, f.sub(f.sub(1.0, pd), pd_lo))      # w = p (1 + delta)
    if f.ty == "double":
        w, w_lo = f.fma(delta, p, p), None
    else:       # in f32, rounding w would move z (and h) by 1-2 ulp: w = p + w_lo
        w, w_lo = p, f.mul(delta, p)
    low = f.cmp("olt", u, _ERFCX_K)
    two_u = f.add(u, u)
    t = f.fma(two_u, w, -0.5 if lo is None else f.fma(f.add(lo, lo), w, -0.5))
    above = f.fma(w, 2 * _ERFCX_K, -0.5)
    if w_lo is not None:
        t, above = f.fma(two_u, w_lo, t), f.fma(w_lo, 2 * _ERFCX_K, above)
    h = _poly_pieces(f, [low], f.sel(low, t, above), ("erfcx_low", "erfcx_high"), prec)
    value = f.mul(h, w) if w_lo is None else f.fma(h, w, f.mul(h, w_lo))
    return f.sel(f.cmp("oeq", u, _INF), 0.0, value)


def _poly(f, z, name, prec):
    """The polynomial _POLY[name, prec] at z, its constant term (a double-double) added last."""
    coefs = _POLY[name, prec]
    hi, lo = _split(f, coefs[0], _CONSTANT_LO[name, prec])
    return f.add(f.fma(_estrin(f, z, coefs[1:]) if name in _ESTRIN else f.poly(z, coefs[1:]), z, lo), hi)


def _poly_pieces(f, conds, z, names, prec):
    """_poly of names[i] where conds[i] holds (the first that does; the last name where none does), in one Horner
    pass, the coefficients selected per lane."""
    sets = [_POLY[name, prec] for name in names]
    n = max(map(len, sets))
    sets = [c + (0.0,) * (n - len(c)) for c in sets]
    constants = [_split(f, c[0], _CONSTANT_LO[name, prec]) for c, name in zip(sets, names)]
    coefs = [_pick(f, conds, column) for column in zip(*(c[1:] for c in sets))]
    lo, hi = _pick(f, conds, [lo for _, lo in constants]), _pick(f, conds, [hi for hi, _ in constants])
    return f.add(f.fma(f.poly(z, coefs), z, lo), hi)


def _pick(f, conds, values):
    """values[i] where conds[i] holds (the first that does), else the last value."""
    out = values[-1]
    for cond, v in zip(reversed(conds), reversed(values[:-1])):
        out = f.sel(cond, v, out)
    return out


def _scaled(f, a):
    """a / sqrt(2) as a double-double (a pair of f32 in f32)."""
    hi, lo = _split(f, *_SQRT_HALF)
    h, e = f.two_prod(a, hi)
    return h, f.fma(a, lo, e)


def _odd(f, x, name, prec):
    """x P(x**2), P = _POLY[name]; for float results x + x R(x**2), rounded once, R = P - 1 the set
    name + "_excess" (in f32 arithmetic, P's rounding would add up to an ulp)."""
    if prec == "float":
        return f.fma(x, _poly(f, f.mul(x, x), name + "_excess", prec), x)
    return f.mul(x, _poly(f, f.mul(x, x), name, prec))


def _erf_small(f, x, prec):
    return _odd(f, x, "erf", prec)


def _erfc_small(f, x, prec):
    return f.sub(1.0, _erf_small(f, x, prec))


# (bound, kernel): below |x| = bound the function is kernel(f, x, prec), which the vector math library's
# definition computes alone for a vector with every lane there (`small_path`)
SMALL = {"erf": (1.0, _erf_small), "erfc": (0.5, _erfc_small)}


def _erfc_positive(f, a, prec):
    return f.mul(_gauss(f, a, 1.0), _erfcx_positive(f, a, prec))


def _erf(f, x, prec):
    if prec == "float":
        return _erf_float(f, x)
    a = f.abs(x)
    big = f.call("copysign", f.sub(1.0, _erfc_positive(f, a, prec)), x)
    return f.sel(f.cmp("olt", a, SMALL["erf"][0]), _erf_small(f, x, prec), big)


def _erf_float(f, x):
    """erf for f32 results: x P(x**2) below |x| = 1, Q(min(|x|, 4) - 5/2) above (erf(4) rounds to 1), both in
    f32's precision: no exp and no division, about XLA's cost (its f32 erf is a rational function)."""
    a = f.abs(x)
    t = f.sub(f.sel(f.cmp("ult", a, 4.0), a, 4.0), 2.5)             # NaN stays NaN
    big = f.call("copysign", _poly(f, t, "erf_big", "float"), x)
    return f.sel(f.cmp("olt", a, SMALL["erf"][0]), _erf_small(f, x, "float"), big)


def _erfc(f, x, prec):
    a = f.abs(x)
    e = _erfc_positive(f, a, prec)
    big = f.sel(f.cmp("olt", x, 0.0), f.sub(2.0, e), e)
    return f.sel(f.cmp("olt", a, SMALL["erfc"][0]), _erfc_small(f, x, prec), big)


def _erfcx(f, x, prec):
    a = f.abs(x)
    e = _erfcx_positive(f, a, prec)
    p, lo = _square(f, f.min(a, 40.0))
    negative = f.sub(f.mul(f.exp(p, lo), 2.0), e)
    return f.sel(f.cmp("olt", x, 0.0), negative, e)


def _lower_tail(f, x, prec):
    """ndtr(-|x|) = exp(-x**2/2) erfcx(|x|/sqrt 2) / 2."""
    a = f.abs(x)
    h, lo = _scaled(f, a)
    return f.mul(f.mul(_gauss(f, a, 0.5), _erfcx_positive(f, h, prec, lo)), 0.5)


def _ndtr(f, x, prec):
    e = _lower_tail(f, x, prec)
    return f.sel(f.cmp("olt", x, 0.0), e, f.sub(1.0, e))


def _log_ndtr(f, x, prec):
    a = f.abs(x)
    h, lo = _scaled(f, a)
    p, e = _square(f, h)                # x**2 / 2 = p + e + 2 h lo: finite wherever log_ndtr is
    cross = f.sel(f.cmp("olt", p, _INF), f.fma(h, f.add(lo, lo), e), 0.0)
    scaled = f.mul(_erfcx_positive(f, h, prec, lo), 0.5)
    lower = f.sub(f.sub(f.log(scaled), cross), p)
    upper = f.log1p(f.neg(f.mul(_gauss(f, a, 0.5), scaled)))
    return f.sel(f.cmp("olt", x, 0.0), lower, upper)


def _erfc_inverse(f, q, prec, name="erfinv"):
    """u > 0 with erfc(u) = q for 0 < q <= 1/2: the polynomial guess, then (for double) one Halley step on
    G(u) = -u**2 + log(erfcx(u)) - log(q), G'(u) = -2/(sqrt(pi) erfcx(u)), G'' = -G' (2u + G')."""
    if prec == "float":
        return _erfc_inverse_float(f, q, name)
    lh, ll = _log_parts(f, q, prec)
    v = f.fma(f.log(f.call("sqrt", f.neg(lh))), _TAIL_V[0], _TAIL_V[1])
    u = _poly(f, v, "erfinv_tail", prec)
    e = _erfcx_positive(f, u, prec)
    p, pe = _square(f, u)
    g = f.sub(f.add(f.sub(f.neg(p), lh), f.log(e)), f.add(pe, ll))
    d = f.mul(f.mul(g, e), -_SQRT_PI / 2)                    # G / G'
    half_ratio = f.sub(u, f.div(1.0, f.mul(e, _SQRT_PI)))     # -G'' / (2 G')
    return f.sub(u, f.div(d, f.fma(d, half_ratio, 1.0)))


def _erfc_inverse_float(f, q, name):
    """_erfc_inverse for float results (times sqrt(2) for name "ndtri"): a polynomial in s - c, s = sqrt(-log q),
    on three pieces of s (to 10.2, where q is the least f32; 4.1 is erf_inv's end), one Horner pass."""
    s = f.call("sqrt", f.neg(f.log(q)))
    conds = [f.cmp("olt", s, end) for end, _ in _ERFINV_PIECES[:-1]]
    centre = _pick(f, conds, [c for _, c in _ERFINV_PIECES])
    names = tuple(f"{name}_tail{i}" for i in range(1, len(_ERFINV_PIECES) + 1))
    return _poly_pieces(f, conds, f.sub(s, centre), names, "float")


def _erf_inv(f, y, prec):
    a = f.abs(y)
    tail = f.call("copysign", _erfc_inverse(f, f.sub(1.0, a), prec), y)
    central = f.add(_odd(f, y, "erfinv", prec), 0.0)     # erf_inv(-0) = +0, as SciPy
    r = f.sel(f.cmp("ole", a, 0.5), central, tail)
    r = f.sel(f.cmp("oeq", a, 1.0), f.call("copysign", _INF, y), r)
    return f.sel(f.cmp("ugt", a, 1.0), _NAN, r)


def _ndtri(f, p, prec):
    """sqrt(2) erf_inv(2p - 1); the float sets ("ndtri") include the factor."""
    name = "erfinv" if prec == "double" else "ndtri"
    y = f.sub(f.mul(p, 2.0), 1.0)
    q = f.mul(f.min(p, f.sub(1.0, p)), 2.0)
    tail = f.call("copysign", _erfc_inverse(f, q, prec, name), y)
    r = f.sel(f.cmp("ole", f.abs(y), 0.5), _odd(f, y, name, prec), tail)
    r = f.sel(f.cmp("oeq", q, 0.0), f.call("copysign", _INF, y), r)
    r = f.sel(f.either(f.cmp("olt", p, 0.0), f.cmp("ugt", p, 1.0)), _NAN, r)
    return f.mul(r, _SQRT2) if prec == "double" else r


def _pi_reduced(f, x):
    """(r, sin(pi r), negate) with x = k + r, k = round(x), |r| <= 1/2 exact: sin(pi x) = +-sin(pi r), negated
    where k is odd (`negate`, a condition); for |x| < 2**60. sin(pi r) = r S(r**2), a polynomial."""
    k = f.call("roundeven", x)
    r = f.sub(x, k)
    odd = f.cmp("une", f.call("floor", f.mul(k, 0.5)), f.mul(k, 0.5))
    return r, f.mul(r, _poly(f, f.mul(r, r), "sin_pi", "double")), odd


def _reflected(f, x):
    """(x < 0, y, dy): y + dy is what the positive-x algorithm sees, 1 - x for x < 0 (x clamped to -2**60;
    dy the rounding error of 1 - x), x itself otherwise."""
    negative = f.cmp("olt", x, 0.0)
    y, dy = f.two_sum(1.0, f.neg(f.max(x, -(2.0**60))))
    return negative, f.sel(negative, y, x), f.sel(negative, dy, 0.0)


def _pole(f, x):
    """x is 0 or a negative integer (or -inf)."""
    return f.both(f.cmp("ole", x, 0.0), f.cmp("oeq", f.call("floor", x), x))


class _GammaParts:
    """For y > 0: below 8 (not big), log Gamma(y) = tq + log(prod) (- log(prod) where shrink); from 8 on (big),
    log Gamma(y + dy) = hi + lo, |lo| <= ulp(hi)/2 (hi is inf past 2.5e305, where it overflows)."""

    def __init__(self, f, y, dy, prec):
        self.big = f.cmp("oge", y, _STIRLING_X)
        n = f.min(f.max(f.sub(f.call("floor", f.add(y, 0.5)), 2.0), -2.0), _STIRLING_X - 2)
        t = f.sub(y, f.add(n, 2.0))
        prod = 1.0
        for k in range(int(_STIRLING_X) - 2):
            prod = f.mul(prod, f.sel(f.cmp("olt", float(k), n), f.add(t, 2.0 + k), 1.0))
        below = f.sel(f.cmp("oeq", n, -2.0), f.mul(y, f.add(y, 1.0)), y)
        self.shrink = f.cmp("olt", n, 0.0)
        self.prod = f.sel(self.shrink, below, prod)
        self.tq = f.mul(t, _poly(f, t, "lgamma", "double"))
        self.log_h, self.log_l = _log_parts(f, f.sel(self.big, y, self.prod), prec)
        half = f.sub(y, 0.5)
        ph, pl = f.two_prod(half, self.log_h)
        sh, sl = f.two_sum(ph, f.neg(y))
        w = f.div(1.0, y)
        series = f.fma(w, _poly(f, f.mul(w, w), "lgamma_stirling", "double"), _HALF_LOG_2PI[1])
        shift = f.mul(dy, f.fma(w, -0.5, self.log_h))         # dy digamma(y), the rounding of y's argument
        lo = f.add(f.add(f.fma(half, self.log_l, pl), f.add(sl, shift)), f.add(series, _HALF_LOG_2PI[0]))
        hi, lo = f.two_sum(sh, lo)
        overflow = f.cmp("oeq", ph, _INF)
        self.hi, self.lo = f.sel(overflow, _INF, hi), f.sel(overflow, 0.0, lo)


def _lgamma(f, x, prec):
    negative, y, dy = _reflected(f, x)
    g = _GammaParts(f, y, dy, prec)
    small = f.add(g.tq, f.mul(f.sel(g.shrink, -1.0, 1.0), f.add(g.log_h, g.log_l)))
    value = f.sel(g.big, f.add(g.hi, g.lo), small)
    _, sin_pi_r, _ = _pi_reduced(f, f.max(x, -(2.0**60)))
    value = f.sel(negative, f.sub(f.sub(_LOG_PI, f.log(f.abs(sin_pi_r))), value), value)
    value = f.sel(_pole(f, x), _INF, value)
    return f.sel(f.cmp("oeq", x, _INF), _INF, f.sel(f.cmp("oeq", x, -_INF), -_INF, value))


def _gamma(f, x, prec):
    """exp(tq) prod (or / prod) below 8, exp(hi + lo) from 8 on (one exp for both); x < 0: pi / (sin(pi x) Gamma(1 - x)), the
    exponential's argument negated there so that tiny results underflow gradually instead of dividing by inf."""
    negative, y, dy = _reflected(f, x)
    g = _GammaParts(f, y, dy, prec)
    lo = f.sel(f.cmp("olt", g.hi, 750.0), g.lo, 0.0)      # exp takes a small lo only
    hi, lo = f.sel(negative, f.neg(g.hi), g.hi), f.sel(negative, f.neg(lo), lo)
    e = f.exp(f.sel(g.big, hi, g.tq), f.sel(g.big, lo, 0.0))      # one exp: of +-(hi + lo) from 8 on, of tq below
    small = f.mul(e, f.sel(g.shrink, f.div(1.0, g.prod), g.prod))
    value = f.sel(g.big, e, small)
    _, sin_pi_r, odd = _pi_reduced(f, f.max(x, -(2.0**60)))
    reflected = f.div(_PI, f.sel(odd, f.neg(sin_pi_r), sin_pi_r))
    value = f.sel(negative, f.mul(reflected, f.sel(g.big, e, f.div(1.0, small))), value)
    value = f.sel(_pole(f, x), _NAN, value)
    return f.sel(f.cmp("oeq", x, 0.0), f.call("copysign", _INF, x), value)


def _digamma(f, x, prec):
    """digamma(r) + sum 1/(r + k) for 0 < x < 8 (reflected for x < 0), the asymptotic series from 8 on, and near
    the negative root (|x - x1| < 0.1) (x - x1) P1(x - x1); the two root polynomials share one Horner pass."""
    negative, y, _ = _reflected(f, x)
    v = f.sub(x, _PSI_NEGATIVE_ROOT[0])
    near = f.cmp("olt", f.abs(v), 0.1)
    n = f.min(f.max(f.sub(f.call("floor", y), 1.0), -1.0), _STIRLING_X - 2)
    t = f.sub(y, f.add(n, 1.5))
    d = f.sel(near, f.sub(v, _PSI_NEGATIVE_ROOT[1]), f.sub(f.sub(t, _PSI_ROOT[0] - 1.5), _PSI_ROOT[1]))
    core = f.mul(d, _poly_pieces(f, [near], f.sel(near, v, t), ("digamma_negative", "digamma"), "double"))
    num, den = 0.0, 1.0
    for k in range(int(_STIRLING_X) - 2):      # sum of 1/(r + k), r = t + 3/2, as one fraction
        use, r = f.cmp("olt", float(k), n), f.add(t, 1.5 + k)
        num, den = f.sel(use, f.fma(num, r, den), num), f.sel(use, f.mul(den, r), den)
    shrink = f.cmp("olt", n, 0.0)
    small = f.add(core, f.div(f.sel(shrink, -1.0, num), f.sel(shrink, y, den)))
    w = f.div(1.0, y)
    w2 = f.mul(w, w)
    asymptotic = f.sub(f.fma(w, -0.5, f.log(y)), f.mul(w2, _poly(f, w2, "digamma_asymptotic", "double")))
    value = f.sel(f.cmp("oge", y, _STIRLING_X), asymptotic, small)
    r, sin_pi_r, _ = _pi_reduced(f, f.max(x, -(2.0**60)))
    pi_cot = f.div(f.mul(_poly(f, f.mul(r, r), "cos_pi", "double"), _PI), sin_pi_r)     # period 1
    value = f.sel(near, core, f.sel(negative, f.sub(value, pi_cot), value))
    value = f.sel(_pole(f, x), _NAN, value)
    return f.sel(f.cmp("oeq", x, 0.0), f.call("copysign", _INF, f.neg(x)), value)


_KERNELS = {"erf": _erf, "erfc": _erfc, "erfcx": _erfcx, "erf_inv": _erf_inv, "ndtr": _ndtr, "ndtri": _ndtri,
            "log_ndtr": _log_ndtr, "lgamma": _lgamma, "digamma": _digamma, "gamma": _gamma}


def math_symbol(name, ty):
    """The LLVM name of a function, e.g. ``@tj_erf_float`` (mathlib's convention: Emitter.math calls it)."""
    return f"@tj_{name}_{ty}"


def math_function_ir(name: str, ty: str) -> str:
    """Definition of ``@tj_<name>_<ty>``, ``ty (ty)`` for ty float or double, internal and always inlined."""
    return define(name, ty, 1, "internal", "alwaysinline nounwind")


def define(name, ty, lanes, linkage, attributes, suffix=""):
    """The definition of the function on `lanes`-element vectors (mathlib.vector_symbol, + suffix)."""
    f = _body(name, ty, lanes)
    return function_text(f, _KERNELS[name](f, f.ext("%x", ty), ty), name, ty, ("x",), linkage, attributes, suffix)


def small_path(name, ty, lanes):
    """(f, far, y) for a SMALL function on `lanes`-element vectors %x of ty: f's lines first compute far, the
    lanes at or beyond its bound (or NaN), then y, the function's value on the others (in ty: the SMALL
    functions compute in ty)."""
    f = _body(name, ty, lanes)
    bound, small = SMALL[name]
    far = f.cmp("uge", f.abs("%x"), bound)
    return f, far, small(f, "%x", ty)


def _body(name, ty, lanes):
    if name not in FUNCS or ty not in ("float", "double"):
        raise ValueError(f"no special function {name!r} for type {ty!r}")
    return _Body(ty if name in NATIVE_F32 else "double", lanes)


def math_module_ir(needed) -> str:
    """Definitions of the (name, ty) pairs in ``needed``, each once, in a stable order."""
    return "\n".join(math_function_ir(name, ty) for name, ty in sorted(set(needed)))


def evaluate(name, x):
    """The function on a float array, by the same kernel run on NumPy arrays: float64 in double, the others as
    compiled code computes them, in float32's precision rounded to float32 (then to a 16-bit x's dtype)."""
    x = np.asarray(x)
    prec = "double" if x.dtype == np.float64 else "float"
    with np.errstate(all="ignore"):
        out = np.asarray(_KERNELS[name](ArrayBody(), x.astype(np.float64), prec))
        return out.astype(x.dtype if prec == "double" else np.float32).astype(x.dtype)


_POLY.update({(name, "float"): coefs for name, coefs in _POLY_F32.items()})
_CONSTANT_LO.update({(name, "float"): 0.0 for name in _POLY_F32})     # in the constant term
