"""The logarithm family of mathlib's kernels: log, log1p, log2 and log10 (and the reduction pow's and the
complex functions' logarithms build on: log_parts, the atanh polynomials), written with mathlib_body.Body in
mathlib's branch-free, vectorizable style. Their accuracy is in mathlib's table."""

_INF = float("inf")
_NAN = float("nan")

# Minimax polynomial coefficients (lowest degree first): the f64 set from a Remez exchange in 60-digit
# arithmetic, the f32 set from Lawson's iteratively reweighted least squares against mpmath, minimising the
# relative error of the function (about 2**-29).
POLY = {
    # atanh(s)/s = 1 + z/3 + z**2 * P(z), z = s**2 <= 0.0295
    ("atanh", "double"): (
        0.19999999999999998, 0.14285714285716494, 0.11111111110163169, 0.09090909275337217,
        0.07692288535701199, 0.066678004295093, 0.05844097558745316, 0.05943346458465653,
    ),
    ("atanh", "float"): (0.19994184948370292, 0.14812164330605143),
}

# log2(e), log10(e) and log10(2) as the nearest value of each type plus the rest (rounded to the type)
_H = float.fromhex
LOG2E = {"double": (_H("0x1.71547652b82fep+0"), _H("0x1.777d0ffda0d24p-56")),
         "float": (_H("0x1.715476p+0"), _H("0x1.4ae0cp-26"))}
LOG10E = {"double": (_H("0x1.bcb7b1526e50ep-2"), _H("0x1.95355baaafad3p-57")),
          "float": (_H("0x1.bcb7b2p-2"), _H("-0x1.5b235ep-27"))}
LOG10_2 = {"double": (_H("0x1.34413509f79ffp-2"), _H("-0x1.9dc1da994fd21p-59")),
           "float": (_H("0x1.344136p-2"), _H("-0x1.ec10cp-27"))}


def log_parts(f, x):
    """(k, fr) with x = 2**k * (1 + fr), 1 + fr in [sqrt(1/2), sqrt(2)), for finite x > 0."""
    k_ = f.k
    tiny = f.cmp("olt", x, k_.min_normal)
    x = f.sel(tiny, f.mul(x, 2.0 ** (k_.mant + 2)), x)
    k = f.int("ashr", f.int("sub", f.bits(x), k_.sqrt_half_bits), k_.mant)
    m = f.from_bits(f.int("sub", f.bits(x), f.int("shl", k, k_.mant)))
    return f.add(f.to_fp(k), f.sel(tiny, -(k_.mant + 2.0), 0.0)), f.sub(m, 1.0)


def _atanh_rest(f, fr, prec):
    """(s, R): s = fr/(2+fr), R = 2*atanh(s)/s - 2 = z*(2/3 + 2z*P(z)), z = s**2."""
    s = f.div(fr, f.add(fr, 2.0))
    z = f.mul(s, s)
    return s, f.mul(z, f.fma(f.mul(z, 2.0), f.poly(z, POLY["atanh", prec]), 2 / 3))


def _log_core(f, k, fr, c, prec):
    """log(2**k * (1 + fr)) + c for a small correction c. With s = fr/(2+fr), z = s**2,
    log(1+fr) = 2*atanh(s) = fr - h + s*(h + R), h = fr**2/2, R = 2*atanh(s)/s - 2 = z*(2/3 + 2z*P(z)):
    the exact fr leads and only small terms round (fdlibm's arrangement)."""
    s, r = _atanh_rest(f, fr, prec)
    h = f.mul(f.mul(fr, fr), 0.5)
    tail = f.fma(s, f.add(h, r), f.fma(k, f.k.ln2_lo, c))
    return f.sub(f.mul(k, f.k.ln2_hi), f.sub(f.sub(h, tail), fr))


def _special(f, x, y):
    """y, with log's values at +inf, 0 (-inf), below 0 and NaN (NaN)."""
    y = f.sel(f.cmp("oeq", x, _INF), x, y)
    y = f.sel(f.cmp("oeq", x, 0.0), -_INF, y)
    return f.sel(f.cmp("ult", x, 0.0), _NAN, y)  # negative or NaN


def log(f, x, prec):
    return _special(f, x, _log_core(f, *log_parts(f, x), 0.0, prec))


def log1p(f, x, prec):
    u, c = f.two_sum(1.0, x)  # log(1 + x) = log(u + c) ~ log(u) + c/u
    y = _log_core(f, *log_parts(f, u), f.div(c, u), prec)
    y = f.sel(f.cmp("oeq", x, _INF), x, y)
    y = f.sel(f.cmp("oeq", x, -1.0), -_INF, y)
    y = f.sel(f.cmp("olt", x, -1.0), _NAN, y)
    return f.sel(f.cmp("ueq", x, 0.0), x, y)  # +-0 and NaN pass through


def _log_times(f, x, const, prec):
    """(k, ph, pl): x = 2**k * m and log(m) * const = ph + pl, const a (hi, lo) pair, to a few units of
    2**-60 (f32: 2**-29) of |ph|. log(m) = fr - h + s*(h + R) as in log, with fr - h kept exact (h = fr**2/2
    from the exact product fr*fr; |h| <= |fr|/4) and only s*(h + R), below |fr|/20, rounding."""
    k, fr = log_parts(f, x)
    s, r = _atanh_rest(f, fr, prec)
    hh, hl = f.two_prod(fr, fr)                # fr**2 = hh + hl
    nh = f.mul(hh, -0.5)                       # -h
    lh, ll = f.fast_two_sum(fr, nh)
    ll = f.add(ll, f.fma(hl, -0.5, f.mul(s, f.sub(r, nh))))
    ph, pe = f.two_prod(lh, const[0])
    return k, ph, f.fma(ll, const[0], f.fma(lh, const[1], pe))


def log2(f, x, prec):
    """k + log(m)*log2(e): the integer k plus the double-double product, |k| >= 1 > |product| unless k = 0,
    so the sum is one exact two-sum and one rounding; log2(2**k) = k exactly."""
    k, ph, pl = _log_times(f, x, LOG2E[f.ty], prec)
    sh, se = f.fast_two_sum(k, ph)
    return _special(f, x, f.add(sh, f.add(se, pl)))


def log10(f, x, prec):
    """k*log10(2) + log(m)*log10(e), both double-doubles; |k*log10(2)| >= 0.30 > 0.16 >= |log10(m)| unless
    k = 0, so one exact two-sum of the high parts and one rounding."""
    k, ph, pl = _log_times(f, x, LOG10E[f.ty], prec)
    c = LOG10_2[f.ty]
    ah, al = f.two_prod(k, c[0])
    sh, se = f.fast_two_sum(ah, ph)
    return _special(f, x, f.add(sh, f.add(se, f.fma(k, c[1], f.add(al, pl)))))
