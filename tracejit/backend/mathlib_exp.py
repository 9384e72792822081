"""The exponential family of mathlib's kernels: exp, exp2, expm1, tanh and logistic (and the pieces pow and the
complex functions build on: exp_reduce, pow2, scale, LN2, the exp polynomials), written with mathlib_body.Body in
mathlib's branch-free, vectorizable style. Their accuracy is in mathlib's table."""

from .mathlib_body import has_scalef

# Minimax polynomial coefficients (lowest degree first) per target precision: the f64 expm1 set from a Remez
# exchange in 60-digit arithmetic, the f32 and tanh sets from Lawson's iteratively reweighted least squares
# against mpmath, minimising the relative error of the function (f32 exp, expm1: about 2**-28 and 2**-32).
POLY = {
    # expm1(r) = r + r**2 * P(r), |r| <= ln2/2
    ("expm1", "double"): (
        0.5, 0.16666666666666677, 0.041666666666666505, 0.008333333333321436, 0.0013888888888963981,
        0.00019841269886699338, 2.4801587170422657e-05, 2.755724355738131e-06, 2.7557403551133256e-07,
        2.5109288480573724e-08, 2.0875322866878028e-09,
    ),
    ("expm1", "float"): (
        0.5000000044399758, 0.16666666368862015, 0.04166635981967446, 0.008333389571787265,
        0.001394072004251088, 0.00019845885279637658,
    ),
    # exp(r) = 1 + r + r**2 * P(r): only relative to exp(r) ~ 1, so f32 needs one term less than expm1
    ("exp", "float"): (
        0.49999993412481125, 0.16666520107742402, 0.041668394215116755, 0.008368780418317713,
        0.0013814466849420741,
    ),
    # tanh(a) = a + a**3 * P(a**2) for a <= TANH_SMALL: relative error of the result 2**-55 (f64), 2**-29.8 (f32)
    ("tanh", "double"): (
        -0.33333333333332316, 0.1333333333316869, -0.053968253876073013, 0.021869485974687852,
        -0.008863194502837922, 0.0035917196888636724, -0.0014532167188170875, 0.000579136912948044,
        -0.00021030224274643707, 5.102137566869949e-05,
    ),
    ("tanh", "float"): (
        -0.33333317558496806, 0.13332586105205732, -0.05385230683556797, 0.021071667584979293,
        -0.006274224561842623,
    ),
}
POLY["exp", "double"] = POLY["expm1", "double"]

# tanh's two formulas meet here: tanh(0.55) is about 0.5, and above it 1 - 2/(exp(2a) + 1) damps its errors
TANH_SMALL = 0.55


def pow2(f, n):
    """2**n for an integer n of the normal range ([-1022, 1023] for double)."""
    return f.from_bits(f.int("shl", f.int("add", n, f.k.bias), f.k.mant))


def scale(f, v, n):
    """v * 2**n for n in twice the normal range: AVX-512's vscalef, or two steps so that no factor overflows
    and a subnormal result is rounded once."""
    if has_scalef():
        return f.ldexp(v, n)
    n1 = f.int("ashr", n, 1)
    return f.mul(f.mul(v, pow2(f, n1)), pow2(f, f.int("sub", n, n1)))


def exp_reduce(f, x, lo=None, bounds=None, folded=False):
    """(r, c, n) with x + lo = n*ln2 + r - c, r exact, |c| < 2**-33 (f32: 2**-12) if |lo| is that small
    too; x is first clamped to bounds (NaN to the upper bound; no lower clamp where bounds[0] is None, for an x
    known to be >= 0), which already saturates the result. folded (lo None): r - c rounded once as r, c = 0."""
    k_ = f.k
    bounds = bounds or k_.exp_bounds
    x = f.min(x, bounds[1])
    x = x if bounds[0] is None else f.max(x, bounds[0])
    k = f.fma(x, k_.log2e, k_.magic)
    n = f.sub(k, k_.magic)
    r = f.fma(n, -k_.ln2_hi, x)
    if folded:
        r, c = f.fma(n, -k_.ln2_lo, r), 0.0
    else:
        c = f.mul(n, k_.ln2_lo) if lo is None else f.fma(n, k_.ln2_lo, f.neg(lo))
    return r, c, f.int("sub", f.bits(k), k_.magic_bits)


def _expm1_reduced(f, r, c, prec):
    """expm1(r - c) ~ r - c + (r - c)**2 * P(r - c), for |r| <= ln2/2 and a small c."""
    r = r if c == 0.0 else f.sub(r, c)
    return f.fma(f.mul(r, r), f.poly(r, POLY["exp", prec]), r)


def exp(f, x, prec, lo=None):
    """exp(x + lo) = 2**n * (1 + expm1(r - c)); NaN x passes through."""
    r, c, n = exp_reduce(f, x, lo)
    em = _expm1_reduced(f, r, c, prec)
    return f.sel(f.cmp("uno", x, x), x, scale(f, f.add(em, 1.0), n))


# ln2 as the nearest value of each type plus the rest (rounded to the type), for exp2's t*ln2
LN2 = {"double": (float.fromhex("0x1.62e42fefa39efp-1"), float.fromhex("0x1.abc9e3b39803fp-56")),
       "float": (float.fromhex("0x1.62e43p-1"), float.fromhex("-0x1.05c61p-29"))}
# exp2 saturates beyond these: 2**x overflows at 1024 (f32: 128), underflows through the subnormals to 0
EXP2_BOUNDS = {"double": (-1100.0, 1100.0), "float": (-160.0, 130.0)}


def exp2(f, x, prec):
    """2**x = 2**n * (1 + expm1(r - c)), n = round(x), t = x - n exact, t*ln2 = r - c with r = fl(t*LN2) and c
    the rest (the product's rounding error and t times ln2's low part): never x*ln2, whose rounding costs
    hundreds of ulp at large |x|. x is clamped to EXP2_BOUNDS first; NaN passes through."""
    lo, hi = EXP2_BOUNDS[f.ty]
    ln2_hi, ln2_lo = LN2[f.ty]
    xc = f.max(f.min(x, hi), lo)
    k = f.add(xc, f.k.magic)
    t = f.sub(xc, f.sub(k, f.k.magic))
    r = f.mul(t, ln2_hi)
    c = f.fma(t, -ln2_lo, f.fma(t, -ln2_hi, r))  # r - t*LN2 (exact) - t*ln2_lo
    em = _expm1_reduced(f, r, c, prec)
    n = f.int("sub", f.bits(k), f.k.magic_bits)
    return f.sel(f.cmp("uno", x, x), x, scale(f, f.add(em, 1.0), n))


def _expm1_value(f, x, prec):
    """expm1 for non-NaN x: 2**n * expm1(r - c) + 2**n - 1 evaluated as 2*((h - 1/2) + h*r + h*b),
    h = 2**(n-1) (finite at n = 1024); for f64 the first sum is exact, so only the small b rounds."""
    r, c, n = exp_reduce(f, x, bounds=f.k.expm1_bounds)
    q = f.mul(f.mul(r, r), f.poly(r, POLY["expm1", prec]))  # expm1(r) = r + q
    b = f.fma(f.neg(c), f.add(r, q), f.sub(q, c))  # expm1(r - c) = r + b, to first order in c
    h = pow2(f, f.int("sub", n, 1))
    if prec == "double":
        hi, lo = f.two_sum(f.sub(h, 0.5), f.mul(h, r))
    else:
        hi, lo = f.fma(h, r, f.sub(h, 0.5)), 0.0
    return f.mul(f.add(hi, f.fma(h, b, lo)), 2.0)


def expm1(f, x, prec):
    tiny = f.cmp("ult", f.abs(x), f.k.expm1_tiny)  # expm1(x) rounds to x: keeps +-0, subnormals, NaN
    return f.sel(tiny, x, _expm1_value(f, x, prec))


def _divide_by_sum(f, num, a, b, prec):
    """num / (a + b). For f64 the sum is kept exact and q = num * (1/d) gets one correction step on
    the remainder, so the division adds only about half an ulp; f32 needs none of that."""
    if prec == "float":
        return f.div(num, f.add(a, b))
    d, e = f.two_sum(a, b)
    p = f.div(1.0, d)
    q = f.mul(num, p)
    rem = f.fma(f.neg(q), e, f.fma(f.neg(q), d, num))
    return f.fma(rem, p, q)


def tanh(f, x, prec):
    """tanh(a), a = |x|, with the sign of x: below TANH_SMALL a + a**3 * P(a**2) (no division, no cancellation),
    above 1 - 2/(exp(2a) + 1), where exp's error counts 3/8 or less and the quotient's 1/2 or less (tanh >= 1/2);
    both computed, one selected per lane. tanh(20) already rounds to 1."""
    a = f.abs(x)
    z = f.mul(a, a)
    small = f.fma(f.mul(z, a), f.poly(z, POLY["tanh", prec]), a)
    r, c, n = exp_reduce(f, f.add(a, a), bounds=(None, 40.0), folded=True)
    d = f.fma(f.add(_expm1_reduced(f, r, c, prec), 1.0), pow2(f, n), 1.0)  # exp(2a) + 1, rounded once
    large = f.sub(1.0, f.div(2.0, d))
    return f.call("copysign", f.sel(f.cmp("ult", a, TANH_SMALL), small, large), x)  # NaN: the polynomial's NaN


def logistic(f, x, prec):
    """1/(1+e) for x >= 0 and e/(1+e) for x < 0 with e = exp(-|x|): stable, subnormal tail kept."""
    e = exp(f, f.neg(f.abs(x)), prec)
    return _divide_by_sum(f, f.sel(f.cmp("olt", x, 0.0), e, 1.0), e, 1.0, prec)
