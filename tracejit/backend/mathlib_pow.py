"""float32 pow for mathlib, in f32 arithmetic (mathlib.NATIVE_F32: 16 lanes per zmm instead of the 8 of double), in
mathlib's branch-free, vectorizable style (mathlib_body.Body): 2**t, t = y * log2|x|, with log2|x| and t carried as
pairs of f32, since |t| reaches 150 and 2**t's relative error is ln2 times t's absolute one (to keep it at 2**-26,
t needs 33 bits). C99's special cases as mathlib's f64 pow has them; the library's function skips them for a vector
with none (pow_f32_fast). Its accuracy is in mathlib's table."""

from .mathlib_exp import LN2, scale
from .mathlib_log import LOG2E

_INF = float("inf")
_NAN = float("nan")

_K = tuple(2 * v for v in LOG2E["float"])                                    # 2*log2(e): log2(m) = K*atanh(s)
_K3 = (float.fromhex("0x1.ec709ep-1"), float.fromhex("-0x1.e2fe02p-28"))    # K/3, a pair of f32
_LN2 = LN2["float"]

# f32 coefficients, lowest degree first, fitted by scripts/fit_pow_f32.py (least squares against mpmath, weighted by
# what an error costs the result): log2(m) = K*s + K/3*s**3 + s**5 * Q(s**2) for s**2 <= 0.0295, 2**-36 relative; 2**r
# = 1 + r*ln2 + r**2 * P(r) for |r| <= 1/2, 2**-27.9 relative
POLY = {
    "log2": (0.5770803093910217, 0.4118417501449585, 0.33799341320991516),
    "exp2": (0.24022644758224487, 0.055503614246845245, 0.009618790820240974, 0.0013390491949394345,
             0.00015251056174747646),
}

# 2**t saturates beyond this (to inf or 0, through the subnormals below 2**-126); |t| >= 2**22 would not split as
# t = n + r by the magic number
_T_BOUND = 160.0


def _reduce(f, ax, special):
    """(k, m): ax = 2**k * m, m in [sqrt(1/2), sqrt(2)), k an integer, for a positive normal ax; if special, also
    for a subnormal ax (scaled first), with k = -inf at 0 and k = ax at inf and NaN."""
    a = ax
    if special:
        tiny = f.cmp("olt", ax, f.k.min_normal)
        a = f.sel(tiny, f.mul(ax, 2.0**25), ax)
    ki = f.int("ashr", f.int("sub", f.bits(a), f.k.sqrt_half_bits), f.k.mant)
    m = f.from_bits(f.int("sub", f.bits(a), f.int("shl", ki, f.k.mant)))
    k = f.to_fp(ki)
    if special:
        k = f.sel(tiny, f.sub(k, 25.0), k)
        k = f.sel(f.cmp("oeq", ax, 0.0), -_INF, k)
        k = f.sel(f.cmp("ueq", ax, _INF), ax, k)                # inf, NaN
    return k, m


def _log2m(f, m):
    """(mh, ml): log2(m) = mh + ml to about 2**-40 relative, with s = (m - 1)/(m + 1) = sh + sl (the quotient and
    its correction from the exact residual): log2(m) = K*s + K/3*s**3 + s**5 * Q(s**2) = K*sh + sh**3 * w + ..., mh
    = fl(K*sh + dh * w), dh = fl(sh**3); ml the rest, each term of it exact or under 2**-24 of mh (the tail dh*w is
    at most 1% of mh, so the roundings of dh and w count and are recovered)."""
    fr = f.sub(m, 1.0)                                          # exact
    sh = f.div(fr, f.add(m, 1.0))
    # sl = (fr - sh*(2 + fr)) / (2 + fr): the residual exact before its rounding (fr - 2*sh by Sterbenz), and
    # 1/(2 + fr) = (1 - s)/2
    sl = f.mul(f.fma(f.neg(sh), fr, f.fma(sh, -2.0, fr)), f.fma(sh, -0.5, 0.5))
    ph = f.mul(sh, _K[0])
    zh = f.mul(sh, sh)
    dh = f.mul(sh, zh)
    q = POLY["log2"]
    qz = f.fma(zh, f.fma(zh, q[2], q[1]), q[0])
    w = f.fma(zh, qz, _K3[0])                                   # K/3 + z*Q(z), rounded
    mh = f.fma(dh, w, ph)
    # the low-order terms: K*sh - ph, K*sl*(1 + z) (sl times the derivative of log2(m) in s), sh**3 - dh (times
    # w), w's rounding and K/3's low part (times dh), mh's rounding; the differences are exact (Sterbenz: dh*w
    # adds under 1% to ph, z*Q(z) under 2% to K/3)
    lo = f.fma(f.fma(sl, zh, sl), _K[0], f.fma(sh, _K[1], f.fma(sh, _K[0], f.neg(ph))))
    dl = f.fma(sh, f.fma(sh, sh, f.neg(zh)), f.fma(sh, zh, f.neg(dh)))
    lo = f.fma(dl, w, f.fma(dh, f.fma(zh, qz, f.sub(_K3[0], w)), f.fma(dh, _K3[1], lo)))
    return mh, f.add(f.fma(dh, w, f.sub(ph, mh)), lo)


def _exp2_pair(f, th, tl):
    """2**(th + tl) for |tl| <= 2**-15 (inf or 0 beyond _T_BOUND; NaN passes): th = n + r, r exact in
    [-1/2, 1/2], 2**r = s1 + lo with s1 = fl(1 + r*ln2) and lo the rest (the fma's rounding and r**2 * P(r); ln2's
    low part, under 2**-30 of the result, left out), times 1 + tl*ln2, rounded once, scaled by 2**n as exp2 does."""
    kk = f.add(th, f.k.magic)
    r = f.sub(th, f.sub(kk, f.k.magic))
    s1 = f.fma(r, _LN2[0], 1.0)
    lo = f.fma(r, _LN2[0], f.sub(1.0, s1))                      # 1 - s1 exact (Sterbenz)
    c = f.mul(tl, _LN2[0])
    r2 = f.mul(r, r)
    p = POLY["exp2"]
    poly = f.fma(r2, f.fma(r2, p[4], f.fma(r, p[3], p[2])), f.fma(r, p[1], p[0]))   # Estrin: fewer steps in a row
    lo = f.fma(f.fma(c, r2, r2), poly, f.fma(c, s1, lo))
    mag = scale(f, f.add(s1, lo), f.int("sub", f.bits(kk), f.k.magic_bits))
    return f.sel(f.cmp("ogt", f.abs(th), _T_BOUND), f.sel(f.cmp("ogt", th, 0.0), _INF, 0.0), mag)


def _power(f, k, m, y):
    """(th, 2**t): t = y * log2(2**k * m) = th + tl (k and m from _reduce, y from _clamp)."""
    mh, ml = _log2m(f, m)
    yk = f.mul(y, k)
    th = f.fma(y, mh, yk)
    # th's rounding (yk - th exact: |mh| <= |k|/2 unless k = 0), yk's and y*ml
    tl = f.fma(y, ml, f.add(f.fma(y, mh, f.sub(yk, th)), f.fma(y, k, f.neg(yk))))
    return th, _exp2_pair(f, th, tl)


def _clamp(f, y):
    """y within +-2**64 (NaN kept): an infinite y would make y * 0 NaN, and beyond 2**64 |y * log2|x|| > 160 for
    every x but 1 (|log2|x|| >= 2**-23.5)."""
    y = f.sel(f.cmp("ogt", y, 2.0**64), 2.0**64, y)
    return f.sel(f.cmp("olt", y, -(2.0**64)), -(2.0**64), y)


def pow_f32(f, x, y):
    """C99 pow of f32 in f32 arithmetic (f a float Body): x = 0, inf, NaN as k = -inf, inf, NaN (_reduce), y = 0
    and x = 1 give 1, a finite negative x with a non-integer y NaN (an infinite t marks x = -inf, whose power is
    inf or 0), an odd integer y the sign of x."""
    y = _clamp(f, y)
    th, mag = _power(f, *_reduce(f, f.abs(x), True), y)
    fy = f.call("floor", y)
    half = f.mul(y, 0.5)
    odd = f.both(f.cmp("oeq", fy, y), f.cmp("une", f.call("floor", half), half))
    negx = f.icmp("slt", f.bits(x), 0)                         # sign bit, so -0 counts
    r = f.sel(f.both(negx, odd), f.neg(mag), mag)
    bad = f.both(f.both(f.cmp("olt", x, 0.0), f.cmp("une", fy, y)), f.cmp("olt", f.abs(th), _INF))
    r = f.sel(bad, _NAN, r)
    return f.sel(f.cmp("oeq", y, 0.0), 1.0, f.sel(f.cmp("oeq", x, 1.0), 1.0, r))


def pow_f32_fast(f, x, y):
    """(far, value): far the lanes that pow_f32 treats specially (x not a positive normal number, y NaN), value
    pow_f32's bits on the others without its special cases: what the library's function computes for a vector
    with no far lane (libcalls: about a fifth fewer instructions), the full definition for the others."""
    far = f.either(f.icmp("uge", f.int("sub", f.bits(x), 0x00800000), 0x7F000000), f.cmp("uno", y, y))
    return far, _power(f, *_reduce(f, x, False), _clamp(f, y))[1]
