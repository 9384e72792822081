"""atan, atan2, asin and acos for mathlib (the same branch-free, vectorizable style, written with
mathlib_body.Body): asin and acos through atan, atan through one polynomial on |u| <= tan(pi/8). f64 in double;
f32 in f32 arithmetic (mathlib.NATIVE_F32: the _f32 functions below), the same reductions with one division per
lane and the cancelling sums carried in pairs of f32. Their accuracy is in mathlib's table."""
import fractions

import numpy as np

INF = float("inf")

# pi/2 as a sum of three doubles (mathlib's argument reduction uses all three; atan its first two)
PIO2 = (float.fromhex("0x1.921fb54442d18p+0"), float.fromhex("0x1.1a62633145c07p-54"),
        float.fromhex("-0x1.f1976b7ed8fbcp-110"))
# atan(u) = u + u**3 * P(u**2), |u| <= tan(pi/8): Chebyshev interpolation of degree 10 in long double
# (coefficients past it are below 2**-54), converted to powers; 1.07 * 2**-53 relative on the interval
_ATAN_POLY = tuple(float.fromhex(h) for h in (
    "-0x1.5555555555556p-2", "0x1.99999999994f3p-3", "-0x1.249249244138dp-3", "0x1.c71c7189e88bfp-4",
    "-0x1.745d0bb86b34fp-4", "0x1.3b126d9f9b6bcp-4", "-0x1.10faf650455cep-4", "0x1.dfedc98db02fap-5",
    "-0x1.a0bc9115957b8p-5", "0x1.41be0aa71fad9p-5", "-0x1.3afe24cdc8ccep-6"))

_TAN_PI_8 = 0.41421356237309503
_PIO4 = (float.fromhex("0x1.921fb54442d18p-1"), float.fromhex("0x1.1a62633145c07p-55"))


def _atan_of_ratio(f, a, prec):
    """atan(a) for a >= 0 (or NaN): a > 1 turns into pi/2 - atan(1/a), then above tan(pi/8) into
    pi/4 + atan((r - 1)/(r + 1)), so the polynomial sees |u| <= tan(pi/8); pi/2 and pi/4 are added as
    double-doubles. Computed in double."""
    inv = f.cmp("ogt", a, 1.0)
    r = f.sel(inv, f.div(1.0, a), a)                     # NaN stays NaN: the compares are false
    mid = f.cmp("ogt", r, _TAN_PI_8)
    u = f.sel(mid, f.div(f.sub(r, 1.0), f.add(r, 1.0)), r)
    z = f.mul(u, u)
    tail = f.mul(f.mul(u, z), f.poly(z, _ATAN_POLY))
    t = f.add(f.sel(mid, _PIO4[0], 0.0), f.add(u, f.add(tail, f.sel(mid, _PIO4[1], 0.0))))
    return f.sel(inv, f.add(f.sub(PIO2[0], t), PIO2[1]), t)


def _atan(f, x, prec):
    if f.ty == "float":
        return _atan_f32(f, x)
    return f.call("copysign", _atan_of_ratio(f, f.abs(x), prec), x)     # odd: atan(-0.0) is -0.0


def _atan2(f, y, x, prec):
    """C99 atan2: atan(|y|/|x|) (0 where both are zero, pi/4 where both are infinite), pi minus it where x is
    negative (its sign bit: -0.0 counts), with the sign of y."""
    if f.ty == "float":
        return _atan2_f32(f, y, x)
    ay, ax = f.abs(y), f.abs(x)
    r = _atan_of_ratio(f, f.div(ay, ax), prec)
    r = f.sel(f.both(f.cmp("oeq", ay, 0.0), f.cmp("oeq", ax, 0.0)), 0.0, r)
    r = f.sel(f.both(f.cmp("oeq", ay, INF), f.cmp("oeq", ax, INF)), _PIO4[0], r)
    negx = f.icmp("slt", f.bits(x), 0)
    r = f.sel(negx, f.add(f.sub(2 * PIO2[0], r), 2 * PIO2[1]), r)
    return f.call("copysign", r, y)


def _asin(f, x, prec):
    """atan(x / sqrt((1 - x)(1 + x))): 1 - x is exact near 1; |x| > 1 gives the square root of a negative."""
    if f.ty == "float":
        return _asin_acos_f32(f, x, False)
    return _atan(f, f.div(x, f.call("sqrt", f.mul(f.sub(1.0, x), f.add(1.0, x)))), prec)


def _acos(f, x, prec):
    """2 atan(sqrt((1 - x)/(1 + x))): acos(1) is 0, acos(-1) is 2 * (pi/2 rounded), the double of pi."""
    if f.ty == "float":
        return _asin_acos_f32(f, x, True)
    return f.mul(_atan(f, f.call("sqrt", f.div(f.sub(1.0, x), f.add(1.0, x))), prec), 2.0)


# ---- f32 arithmetic (mathlib.NATIVE_F32): the reductions above, one division per lane ----
def _f32_pair(v):
    """The Fraction v as hi + lo float32 values."""
    hi = float(np.float32(float(v)))
    return hi, float(np.float32(float(v - fractions.Fraction(hi))))


_F32_K = [_f32_pair(k * sum(map(fractions.Fraction, PIO2)) / 2) for k in range(5)]   # k*pi/4, pairs of f32
# atan(u) = u + u**3 * P(u**2), |u| <= tan(pi/8) (1 + 2**-12): f32 coefficients by weighted least squares (relative
# error, 4000 Chebyshev nodes, long-double arctan), each rounded to f32 and the rest refitted; 2**-30.3 relative
_ATAN_POLY32 = (-0.3333331346511841, 0.1999838650226593, -0.14242155849933624, 0.10584764182567596,
                -0.060573842376470566)


def _rcp_f32(f, d):
    """About 1/d (1.5% off) for 2**-125 < d < 2**125 without a division: a guess from the bits, one Newton step."""
    r = f.from_bits(f.int("sub", 0x7EF311C3, f.bits(d)))
    return f.mul(r, f.fma(f.neg(d), r, 2.0))


def _ratio_f32(f, p, q, pl=0.0, ql=0.0):
    """atan(p/q) for p, q >= 0 (p + pl, q + ql: with low parts) as (big, mid, u, lo): k*pi/4 + u + lo with k = 2
    where big, 1 where mid, else 0. p/q > tan(3pi/8) (big) is pi/2 - atan(q/p), above tan(pi/8) (mid)
    pi/4 + atan((p - q)/(p + q)) (for p > q the double code's pi/2 - (pi/4 + atan((q/p - 1)/(q/p + 1))));
    u = n/d, n and d exact sums (two_sum), lo the correction from the exact residual n - u*d (through an
    approximate 1/d) plus u**3 * P(u**2)."""
    big = f.cmp("olt", q, f.mul(p, _TAN_PI_8))
    mid = f.cmp("ogt", p, f.mul(q, _TAN_PI_8))
    only_mid = f.both(mid, f.cmp("oge", q, f.mul(p, _TAN_PI_8)))
    nq = f.neg(q)
    nh, nl = f.two_sum(f.sel(big, nq, p), f.sel(only_mid, nq, 0.0))
    dh, dl = f.two_sum(f.sel(big, p, q), f.sel(only_mid, p, 0.0))
    if pl != 0.0:
        nl = f.add(nl, f.sel(big, 0.0, pl))
        dl = f.add(dl, f.sel(mid, pl, 0.0))
    if ql != 0.0:
        nl = f.sub(nl, f.sel(mid, ql, 0.0))
        dl = f.add(dl, f.sel(big, 0.0, ql))
    u = f.div(nh, dh)
    du = f.mul(f.add(f.fma(f.neg(u), dh, nh), f.fma(f.neg(u), dl, nl)), _rcp_f32(f, dh))
    if q == 1.0:                                          # atan: u = n/d is correctly rounded but in the middle
        du = f.sel(only_mid, du, 0.0)                     # (and d may be infinite or huge elsewhere)
    elif pl == ql == 0.0:                                 # atan2: not where d is infinite or u subnormal
        du = f.sel(f.both(f.cmp("olt", dh, 2.0**120), f.cmp("ogt", f.abs(u), 2.0**-60)), du, 0.0)
    z = f.mul(u, u)
    lo = f.fma(f.mul(u, z), f.poly(z, _ATAN_POLY32), f.fma(f.neg(du), z, du))   # du / (1 + z), to first order
    return big, mid, u, lo


def _sum_f32(f, big, mid, u, lo, negate=None):
    """k*pi/4 + u + lo (_ratio_f32), one rounding after an exact first sum; where `negate`, pi minus it."""
    k1, k0 = _F32_K[1], _F32_K[0]
    if negate is not None:
        k1 = [f.sel(negate, _F32_K[3][i], _F32_K[1][i]) for i in (0, 1)]
        k0 = [f.sel(negate, _F32_K[4][i], 0.0) for i in (0, 1)]
        u, lo = f.sel(negate, f.neg(u), u), f.sel(negate, f.neg(lo), lo)
    kh, kl = (f.sel(big, _F32_K[2][i], f.sel(mid, k1[i], k0[i])) for i in (0, 1))
    s, e = f.fast_two_sum(kh, u)                          # |k pi/4| >= pi/4 > |u| unless k = 0
    return f.add(s, f.add(e, f.add(kl, lo)))


def _atan_f32(f, x):
    r = _sum_f32(f, *_ratio_f32(f, f.abs(x), 1.0))
    return f.call("copysign", f.sel(f.cmp("uno", x, x), x, r), x)


def _atan2_f32(f, y, x):
    """As _atan2, |y| and |x| scaled by a power of two first so that the larger is in [2**-23, 2**100]: p + q
    neither overflows nor is tiny, 1/(p + q) is normal (_rcp_f32), and the residual n - u*d is normal where
    |u| > 2**-60 (below, u is the result, correctly rounded); a quotient underflowing with the smaller of |y|
    and |x| rounds to 0 anyway. Both zero is taken as atan(0/1), both infinite as atan(1/1)."""
    ay, ax = f.abs(y), f.abs(x)
    m = f.max(ay, ax)
    s = f.sel(f.cmp("ogt", m, 2.0**100), 2.0**-30, f.sel(f.cmp("olt", m, 2.0**-40), 2.0**126, 1.0))
    inf = f.both(f.cmp("oeq", ay, INF), f.cmp("oeq", ax, INF))
    zero = f.both(f.cmp("oeq", ay, 0.0), f.cmp("oeq", ax, 0.0))
    p = f.sel(inf, 1.0, f.mul(ay, s))
    q = f.sel(inf, 1.0, f.sel(zero, 1.0, f.mul(ax, s)))
    r = _sum_f32(f, *_ratio_f32(f, p, q), f.icmp("slt", f.bits(x), 0))
    r = f.sel(f.cmp("uno", x, y), f.add(x, y), r)
    return f.call("copysign", r, y)


def _asin_acos_f32(f, x, acos):
    """asin: atan(|x| / sqrt(w)), w = 1 - x**2 = (1 - x)(1 + x) as an exact sum; acos: twice
    atan(sqrt(w) / (1 + x)) (= sqrt((1 - x)/(1 + x))), pi at x = -1. The square root carries a low part."""
    ax = f.abs(x)
    x2h, x2l = f.two_prod(ax, ax)
    wh, e = f.fast_two_sum(1.0, f.neg(x2h))               # exact (e = 0) where |x| > sqrt(1/2)
    wl = f.sub(e, x2l)
    sh = f.call("sqrt", f.add(wh, wl))
    sl = f.mul(f.add(f.fma(f.neg(sh), sh, wh), wl), f.mul(_rcp_f32(f, sh), 0.5))
    if not acos:
        return f.call("copysign", _sum_f32(f, *_ratio_f32(f, ax, sh, 0.0, sl)), x)
    ch, cl = f.fast_two_sum(1.0, x)                       # 1 + x
    p = f.sel(f.cmp("oeq", x, -1.0), 1.0, sh)             # x = -1: atan(1/0) = pi/2
    return f.mul(_sum_f32(f, *_ratio_f32(f, p, ch, sl, cl)), 2.0)

INVERSE_TRIG = {"atan": _atan, "asin": _asin, "acos": _acos, "atan2": _atan2}
