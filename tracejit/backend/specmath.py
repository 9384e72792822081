"""Vectorizable special functions (erf, erfc, erfcx, erf_inv, ndtr, ndtri, log_ndtr, lgamma, digamma, gamma, and
the exponentially scaled Bessel functions i0e, i1e; beside them specmath_incomplete's looping kernels and
specmath_zeta's zeta), written with mathlib_body.Body on mathlib's exp, log, log1p and double-double log:
branch-free straight-line code with no tables, so a fused loop calling them vectorizes as mathlib's functions do.
float64 computes in double.
float32's erf, erfc, erfcx, ndtr, log_ndtr, erf_inv and ndtri (NATIVE_F32) compute in f32 arithmetic, 16 lanes per
AVX-512 register instead of 8 (mathlib's f32 exp, log and log1p; f32 polynomial sets from specmath_f32), within
1-4 f32 ulp; float32's lgamma, digamma, gamma, i0e and i1e compute in double and round once.

Each kernel is written once against Body's instruction set and runs two ways: as LLVM text (`math_module_ir`,
pasted into a compiled module next to mathlib's functions; erf, erfc, erfcx and ndtr are instead the vector math
library's, libcalls.SPECIAL, `define`d once per process and width) and on NumPy arrays (`evaluate`, through
array_body.ArrayBody), which is the NumPy impl of its primitive (tracejit.primitives.special).

Algorithms (polynomials: Chebyshev interpolants in 40-digit arithmetic, scripts/fit_special_math.py; the constant
term of each added last as a double-double; lgamma, gamma and digamma: specmath_gamma):

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
- erf_inv(y) = y P(y**2) for |y| <= 1/2; beyond, erfcinv(q), q = 1 - |y| (exact): a polynomial in s - c,
  s = sqrt(-log q), on five pieces of s (18-22 terms, coefficients selected per lane; float32: three pieces, as
  above). ndtri(p) = sqrt(2) erf_inv(2p - 1), the tail's q = 2 min(p, 1 - p) exact, so tiny p keep their
  precision; its tail sets include the factor. (A first guess and a Halley step on log erfcx took 1e6 f64 ndtri
  7.2 ms, SciPy 5.7; the pieces 4.1.)
- i0e(x) = exp(-|x|) P(x**2) for |x| <= 8 (i1e: x exp(-|x|) P1(x**2)), P the power series of I0(sqrt z) economized
  on [0, 64] (17 positive coefficients: no cancellation; x**2's rounding costs up to 2 ulp); above,
  Q(16/|x| - 1) / sqrt(|x|) (i1e with x's sign), Q a polynomial of sqrt(x) exp(-x) I(x) on [-1, 1] (25-26 terms),
  which tends to 1/sqrt(2 pi) as x grows (float32: 12 and 8 terms, in double). Replaces vectorized NumPy series
  70x slower than JAX's compiled code.

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
erf_inv     2.53              4                3.13
ndtr        3.09              2084 (b)         3.82
ndtri       2.61              6                3.16
log_ndtr    3.46              2015 (b)         3.98
lgamma      3.17              66142 (c)        0.50
digamma     3.58              5                0.50
gamma       3.47              9                0.50
i0e         2.96              7 (d)            0.50
i1e         2.71              11 (d)           0.50
==========  ================  ===============  ===============

Where the distance from SciPy exceeds a few ulp, SciPy is that far from the true value (checked against mpmath at
the worst arguments): (a) SciPy's erfc past x = 20 and erfcx below x = -20, by up to 509 ulp; (b) SciPy's ndtr
below x = -20 and log_ndtr above 20, which round x/sqrt(2) first, by up to 2084 ulp; (c) SciPy's gammaln near its
zeros at 1 and 2 (66142 ulp at 1.99997); (d) SciPy's i0e below |x| = 1e-4 (7 ulp) and i1e near |x| = 8 (11 ulp).
SciPy also flushes subnormal results of erfc and ndtr to 0 and returns inf for gammaln of a subnormal argument; these keep the true values. lgamma and digamma between their negative
poles are as accurate as the reflection formula allows (absolute error about 1e-15 near their zeros there, as
SciPy's), and digamma's root near -0.504 is fitted separately, relative error a few ulp.

Special values follow SciPy: erf(+-inf) = +-1, erfc(-inf) = 2, erfcx(-inf) = inf, erf_inv(+-1) = +-inf and NaN
beyond, ndtri(0) = -inf, ndtri(1) = inf, lgamma = inf at 0 and the negative integers (and at +-inf: SciPy gives
-inf at -inf), digamma(+-0) = -+inf and NaN at the negative integers and -inf, i0e(+-inf) = 0, i1e(+-0) = +0;
NaN propagates.
"""
import numpy as np

from .array_body import ArrayBody
from .mathlib import function_text
from .specmath_base import INF as _INF
from .specmath_base import SpecialBody as _Body
from .specmath_base import pick as _pick
from .specmath_base import poly as _poly
from .specmath_base import poly_pieces as _poly_pieces
from .specmath_base import split as _split
from .specmath_base import square as _square
from .specmath_f32 import ERFINV_PIECES as _ERFINV_PIECES
from .specmath_f64 import _TAIL_PIECES
from .specmath_gamma import digamma as _digamma
from .specmath_gamma import gamma as _gamma
from .specmath_gamma import lgamma as _lgamma
from .specmath_incomplete import betainc, incomplete_gamma
from .specmath_zeta import shifted, zeta

FUNCS = ("erf", "erfc", "erfcx", "erf_inv", "ndtr", "ndtri", "log_ndtr", "lgamma", "digamma", "gamma", "i0e", "i1e")
# looping (specmath_incomplete): scalar code that does not vectorize
INCOMPLETE = ("igamma", "igammac", "igamma_grad_a", "betainc")
# straight-line but for a loop on some lanes, which the vector math library's function takes lane by lane
# (libcalls; `near_path`)
LANEWISE = ("zeta",)
KERNELS = FUNCS + INCOMPLETE + LANEWISE
# computed in f32 arithmetic for float32 (16 lanes per zmm register); the others in double, rounded once
NATIVE_F32 = ("erf", "erfc", "erfcx", "ndtr", "log_ndtr", "erf_inv", "ndtri")

_NAN = float("nan")
_SQRT_HALF = (0.7071067811865476, -4.833646656726457e-17)
_SQRT2 = 1.4142135623730951
_ERFCX_K = 4.0
_BESSEL_X = 8.0


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
    """u > 0 with erfc(u) = q for 0 < q <= 1/2 (times sqrt(2) for name "ndtri"): a polynomial in s - c,
    s = sqrt(-log q), on pieces of s (double: five to 27.3, where q is the least double; float: three to 10.2, 4.1
    erf_inv's end), one Horner pass with the coefficients selected per lane."""
    pieces = _TAIL_PIECES if prec == "double" else _ERFINV_PIECES
    s = f.call("sqrt", f.neg(f.log(q)))
    conds = [f.cmp("olt", s, end) for end, _ in pieces[:-1]]
    centre = _pick(f, conds, [c for _, c in pieces])
    names = tuple(f"{name}_tail{i}" for i in range(1, len(pieces) + 1))
    return _poly_pieces(f, conds, f.sub(s, centre), names, prec)


def _erf_inv(f, y, prec):
    a = f.abs(y)
    tail = f.call("copysign", _erfc_inverse(f, f.sub(1.0, a), prec), y)
    central = f.add(_odd(f, y, "erfinv", prec), 0.0)     # erf_inv(-0) = +0, as SciPy
    r = f.sel(f.cmp("ole", a, 0.5), central, tail)
    r = f.sel(f.cmp("oeq", a, 1.0), f.call("copysign", _INF, y), r)
    return f.sel(f.cmp("ugt", a, 1.0), _NAN, r)


def _ndtri(f, p, prec):
    """sqrt(2) erf_inv(2p - 1); the "ndtri" sets include the factor (but double's central one, erf_inv's)."""
    y = f.sub(f.mul(p, 2.0), 1.0)
    q = f.mul(f.min(p, f.sub(1.0, p)), 2.0)
    tail = f.call("copysign", _erfc_inverse(f, q, prec, "ndtri"), y)
    central = f.mul(_odd(f, y, "erfinv", prec), _SQRT2) if prec == "double" else _odd(f, y, "ndtri", prec)
    r = f.sel(f.cmp("ole", f.abs(y), 0.5), central, tail)
    r = f.sel(f.cmp("oeq", q, 0.0), f.call("copysign", _INF, y), r)
    return f.sel(f.either(f.cmp("olt", p, 0.0), f.cmp("ugt", p, 1.0)), _NAN, r)


def _bessel_scaled(f, x, order, prec):
    """exp(-|x|) I_order(x), order 0 or 1: below |x| = 8, exp(-|x|) P(x**2) (times x for order 1), P's
    coefficients positive (the power series, economized); above, Q(16/|x| - 1) / sqrt(|x|) (with x's sign for
    order 1), Q a polynomial of sqrt(x) exp(-x) I_order(x), which tends to 1/sqrt(2 pi). In double for both
    types; float32's shorter sets are within 2**-31."""
    a = f.abs(x)
    name = ("i0", "i1")[order]
    small = f.mul(f.exp(f.neg(a)), _poly(f, f.mul(x, x), name + "_small", prec))
    large = f.div(_poly(f, f.sub(f.div(2 * _BESSEL_X, a), 1.0), name + "e_large", prec), f.call("sqrt", a))
    if order:
        small, large = f.add(f.mul(x, small), 0.0), f.call("copysign", large, x)     # i1e(-0) = +0, as SciPy
    return f.sel(f.cmp("ole", a, _BESSEL_X), small, large)


_KERNELS = {"erf": _erf, "erfc": _erfc, "erfcx": _erfcx, "erf_inv": _erf_inv, "ndtr": _ndtr, "ndtri": _ndtri,
            "log_ndtr": _log_ndtr, "lgamma": _lgamma, "digamma": _digamma, "gamma": _gamma,
            "i0e": lambda f, x, prec: _bessel_scaled(f, x, 0, prec), "i1e": lambda f, x, prec: _bessel_scaled(f, x, 1, prec),
            "igamma": lambda f, a, x, prec: incomplete_gamma(f, a, x, upper=False),
            "igammac": lambda f, a, x, prec: incomplete_gamma(f, a, x, upper=True),
            "igamma_grad_a": lambda f, a, x, prec: incomplete_gamma(f, a, x, upper=False, grad=True),
            "betainc": lambda f, a, b, x, prec: betainc(f, a, b, x),
            "zeta": lambda f, s, q, prec: zeta(f, s, q)}
# the parameters of the functions of several arguments (the others take x)
_PARAMS = {"igamma": ("a", "x"), "igammac": ("a", "x"), "igamma_grad_a": ("a", "x"), "betainc": ("a", "b", "x"),
           "zeta": ("x", "y")}


def arity(name):
    return len(_PARAMS.get(name, ("x",)))


def math_symbol(name, ty):
    """The LLVM name of a function, e.g. ``@tj_erf_float`` (mathlib's convention: Emitter.math calls it)."""
    return f"@tj_{name}_{ty}"


def math_function_ir(name: str, ty: str) -> str:
    """Definition of ``@tj_<name>_<ty>``, ``ty (ty)`` for ty float or double, internal and always inlined."""
    return define(name, ty, 1, "internal", "alwaysinline nounwind")


def define(name, ty, lanes, linkage, attributes, suffix=""):
    """The definition of the function on `lanes`-element vectors (mathlib.vector_symbol, + suffix)."""
    f = _body(name, ty, lanes)
    params = _PARAMS.get(name, ("x",))
    value = _KERNELS[name](f, *(f.ext(f"%{p}", ty) for p in params), ty)
    return function_text(f, value, name, ty, params, linkage, attributes, suffix)


def small_path(name, ty, lanes):
    """(f, far, y) for a SMALL function on `lanes`-element vectors %x of ty: f's lines first compute far, the
    lanes at or beyond its bound (or NaN), then y, the function's value on the others (in ty: the SMALL
    functions compute in ty)."""
    f = _body(name, ty, lanes)
    bound, small = SMALL[name]
    far = f.cmp("uge", f.abs("%x"), bound)
    return f, far, small(f, "%x", ty)


def near_path(name, ty, lanes):
    """(f, far, y) for a LANEWISE function on `lanes`-element vectors %x, %y of ty: f's lines first compute far, the
    lanes that need the scalar definition's loop, then y, the function's value on the others (computed in double)."""
    f = _body(name, ty, lanes)
    s, q = f.ext("%x", ty), f.ext("%y", ty)
    return f, shifted(f, s, q), f.narrow(zeta(f, s, q, shift=False), ty)


def _body(name, ty, lanes):
    if name not in KERNELS or ty not in ("float", "double"):
        raise ValueError(f"no special function {name!r} for type {ty!r}")
    return _Body(ty if name in NATIVE_F32 else "double", lanes)


def math_module_ir(needed) -> str:
    """Definitions of the (name, ty) pairs in ``needed``, each once, in a stable order."""
    return "\n".join(math_function_ir(name, ty) for name, ty in sorted(set(needed)))


def evaluate(name, *args):
    """The function on float arrays (of one dtype), by the same kernel run on NumPy arrays: float64 in double, the
    others as compiled code computes them, in float32's precision rounded to float32 (then to a 16-bit dtype)."""
    args = [np.asarray(x) for x in args]
    dtype = args[0].dtype
    prec = "double" if dtype == np.float64 else "float"
    with np.errstate(all="ignore"):
        out = np.asarray(_KERNELS[name](ArrayBody(), *(x.astype(np.float64) for x in args), prec))
        return out.astype(dtype if prec == "double" else np.float32).astype(dtype)

