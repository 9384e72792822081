"""atan, atan2, asin and acos for mathlib (the same branch-free, vectorizable style, written with
mathlib_body.Body): asin and acos through atan, atan through one polynomial on |u| <= tan(pi/8). Computed in
double for both float types; their accuracy is in mathlib's table."""
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
    return f.call("copysign", _atan_of_ratio(f, f.abs(x), prec), x)     # odd: atan(-0.0) is -0.0


def _atan2(f, y, x, prec):
    """C99 atan2: atan(|y|/|x|) (0 where both are zero, pi/4 where both are infinite), pi minus it where x is
    negative (its sign bit: -0.0 counts), with the sign of y."""
    ay, ax = f.abs(y), f.abs(x)
    r = _atan_of_ratio(f, f.div(ay, ax), prec)
    r = f.sel(f.both(f.cmp("oeq", ay, 0.0), f.cmp("oeq", ax, 0.0)), 0.0, r)
    r = f.sel(f.both(f.cmp("oeq", ay, INF), f.cmp("oeq", ax, INF)), _PIO4[0], r)
    negx = f.icmp("slt", f.bits(x), 0)
    r = f.sel(negx, f.add(f.sub(2 * PIO2[0], r), 2 * PIO2[1]), r)
    return f.call("copysign", r, y)


def _asin(f, x, prec):
    """atan(x / sqrt((1 - x)(1 + x))): 1 - x is exact near 1; |x| > 1 gives the square root of a negative."""
    return _atan(f, f.div(x, f.call("sqrt", f.mul(f.sub(1.0, x), f.add(1.0, x)))), prec)


def _acos(f, x, prec):
    """2 atan(sqrt((1 - x)/(1 + x))): acos(1) is 0, acos(-1) is 2 * (pi/2 rounded), the double of pi."""
    return f.mul(_atan(f, f.call("sqrt", f.div(f.sub(1.0, x), f.add(1.0, x))), prec), 2.0)


INVERSE_TRIG = {"atan": _atan, "asin": _asin, "acos": _acos, "atan2": _atan2}
