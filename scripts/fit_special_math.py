"""Derives the polynomial coefficients of tracejit.backend.specmath (run: python scripts/fit_special_math.py).

Each approximation is a Chebyshev interpolant of the target function, computed in 40-digit arithmetic with
mpmath, truncated where the remaining Chebyshev coefficients sum to below the target error (2**-57 of the
function's smallest magnitude on the interval for the double sets, 2**-31 for the float sets, which compute in
double and round once), converted to powers of the polynomial's variable and rounded to double. A Chebyshev
interpolant is within a small factor of the minimax polynomial of its degree; the measured errors are in the
specmath docstring. The output is the `_POLY` table, pasted into specmath_f64.py.
"""
import mpmath as mp

mp.mp.dps = 40
NODES = 64


def chebyshev(f, a, b, n=NODES):
    """Chebyshev coefficients of f on [a, b] from its values at n Chebyshev nodes."""
    a, b = mp.mpf(a), mp.mpf(b)
    theta = [mp.pi * (k + mp.mpf(1) / 2) / n for k in range(n)]
    values = [f((b - a) / 2 * mp.cos(th) + (a + b) / 2) for th in theta]
    return [(2 if j else 1) * mp.fsum(v * mp.cos(j * th) for v, th in zip(values, theta)) / n for j in range(n)]


def powers(c, a, b):
    """The polynomial sum c[j] T_j((2x - a - b)/(b - a)) in powers of x, lowest first."""
    alpha, beta = 2 / (mp.mpf(b) - a), -(mp.mpf(a) + b) / (mp.mpf(b) - a)
    t_prev, t_cur = [mp.mpf(1)], [beta, alpha]
    out = [mp.mpf(0)] * len(c)
    for j, cj in enumerate(c):
        tj = t_prev if j == 0 else t_cur
        if j >= 2:
            nxt = [mp.mpf(0)] * (j + 1)
            for i, v in enumerate(t_cur):
                nxt[i] += 2 * beta * v
                nxt[i + 1] += 2 * alpha * v
            for i, v in enumerate(t_prev):
                nxt[i] -= v
            t_prev, t_cur = t_cur, nxt
            tj = t_cur
        for i, v in enumerate(tj):
            out[i] += cj * v
    return out


def fit(f, a, b, scale, bits):
    """Powers of x (lowest first) of the truncated interpolant of f on [a, b], rounded to double, and the
    rounding error of the constant term (which specmath adds separately); scale: |f|'s minimum there."""
    c = chebyshev(f, a, b)
    n = len(c)
    while n > 1 and mp.fsum(abs(x) for x in c[n - 1:]) < scale * mp.mpf(2) ** -bits:
        n -= 1
    exact = powers(c[:n], a, b)
    return [float(x) for x in exact], float(exact[0] - float(exact[0]))


SQRT_PI = mp.sqrt(mp.pi)
ERFCX_K = 4          # erfcx(u) = h / (u + K), h a function of t = (u - K)/(u + K) + 1/2 below K, of 1/2 - t above
STIRLING_X = 8       # lgamma and digamma use their asymptotic series from here on
BESSEL_X = 8         # i0e and i1e: a polynomial in x**2 times exp(-|x|) below, in 2 BESSEL_X/|x| - 1 over sqrt(|x|) above
PSI_ROOT = mp.findroot(mp.digamma, mp.mpf("1.4616"))
PSI_NEGATIVE_ROOT = mp.findroot(mp.digamma, mp.mpf("-0.504"))


def erfcx_h(t):
    if t == 1:
        return 1 / SQRT_PI
    u = ERFCX_K * (1 + t) / (1 - t)
    return (u + ERFCX_K) * mp.erfc(u) * mp.exp(u * u)


def erfcx_low(v):
    return erfcx_h(v - mp.mpf(1) / 2)


def erfcx_high(v):
    return erfcx_h(mp.mpf(1) / 2 - v)


def sin_pi_over_r(z):
    """sin(pi r) / r as a function of z = r**2."""
    return mp.pi if z == 0 else mp.sin(mp.pi * mp.sqrt(z)) / mp.sqrt(z)


def cos_pi(z):
    """cos(pi r) as a function of z = r**2 (fitted to absolute accuracy: it is 0 at r = 1/2)."""
    return mp.cos(mp.pi * mp.sqrt(z))


def erf_over_x(z):
    return 2 / SQRT_PI if z == 0 else mp.erf(mp.sqrt(z)) / mp.sqrt(z)


def lgamma_over_t(t):
    return mp.digamma(2) if t == 0 else mp.loggamma(2 + t) / t


def lgamma_stirling(w):
    """x (lgamma(x) - ((x - 1/2) log x - x + log(2 pi)/2)) as a function of w = 1/x**2."""
    if w == 0:
        return mp.mpf(1) / 12
    x = 1 / mp.sqrt(w)
    return x * (mp.loggamma(x) - ((x - mp.mpf(1) / 2) * mp.log(x) - x + mp.log(2 * mp.pi) / 2))


def digamma_over_root(t):
    r = mp.mpf(3) / 2 + t
    return mp.psi(1, PSI_ROOT) if abs(r - PSI_ROOT) < mp.mpf(10) ** -30 else mp.digamma(r) / (r - PSI_ROOT)


def digamma_over_negative_root(v):
    return mp.psi(1, PSI_NEGATIVE_ROOT) if v == 0 else mp.digamma(PSI_NEGATIVE_ROOT + v) / v


def digamma_asymptotic(w):
    """(log x - 1/(2x) - digamma(x)) / w as a function of w = 1/x**2."""
    if w == 0:
        return mp.mpf(1) / 12
    x = 1 / mp.sqrt(w)
    return (mp.log(x) - 1 / (2 * x) - mp.digamma(x)) / w


def erfinv_over_y(z):
    return SQRT_PI / 2 if z == 0 else mp.erfinv(mp.sqrt(z)) / mp.sqrt(z)


def erfcinv(q):
    """z with erfc(z) = q, by Newton's method on log erfc (mpmath's erfinv needs 1 - q exactly)."""
    z = mp.sqrt(-mp.log(q))
    for _ in range(100):
        step = (mp.log(mp.erfc(z)) - mp.log(q)) * mp.erfc(z) * SQRT_PI / -2 * mp.exp(z * z)
        z -= step
        if abs(step) < 16 * mp.eps * z:
            return z
    raise ArithmeticError(q)


def i0_small(z):
    """I0(x) as a function of z = x**2 (below 8: exp(-|x|) times it is i0e); all its coefficients are positive."""
    return mp.besseli(0, mp.sqrt(z))


def i1_small(z):
    """I1(x) / x as a function of z = x**2."""
    return mp.mpf(1) / 2 if z == 0 else mp.besseli(1, mp.sqrt(z)) / mp.sqrt(z)


def bessel_large(order):
    """sqrt(x) exp(-x) I_order(x) as a function of t = 2 BESSEL_X / x - 1 in [-1, 1] (x from BESSEL_X to inf)."""
    def f(t):
        if t == -1:
            return 1 / mp.sqrt(2 * mp.pi)
        x = 2 * BESSEL_X / (t + 1)
        return mp.sqrt(x) * mp.exp(-x) * mp.besseli(order, x)
    return f


# erf_inv's and ndtri's tails (q <= 1/2): erfcinv(q) (times sqrt 2 for ndtri) as a polynomial in s - centre on each
# piece of s = sqrt(-log q), from sqrt(log 2) to 27.3 (q = 2**-1075); (end, centre) per piece, the last end inf
TAIL_ENDS = (1.7, 3.5, 7.5, 14.0, 27.3)
TAIL_PIECES = []
_start = float(mp.sqrt(mp.log(2)))
for _end in TAIL_ENDS:
    TAIL_PIECES.append((_end, round((_start + _end) / 2, 3), _start))
    _start = _end


def erfcinv_of_s(scale, centre):
    return lambda t: scale * erfcinv(mp.exp(-(centre + t) ** 2))


TABLE = {
    # name: (function, interval, smallest |f| there, {"double": bits, "float": bits})
    "erfcx_low": (erfcx_low, (-0.5, 0.5), mp.mpf(1), {"double": 57, "float": 31}),
    "erfcx_high": (erfcx_high, (-0.5, 0.5), mp.mpf(1) / SQRT_PI, {"double": 57, "float": 31}),
    "erf": (erf_over_x, (0, 1), mp.erf(1), {"double": 57, "float": 31}),
    # lgamma and digamma have no float sets: both types need the double ones near digamma's and lgamma's
    # negative roots, where the result is much smaller than the terms it is computed from
    "lgamma": (lgamma_over_t, (-0.5, 0.5), mp.loggamma(1.5) / -0.5, {"double": 57}),
    "lgamma_stirling": (lgamma_stirling, (0, mp.mpf(1) / STIRLING_X**2), mp.mpf(1) / 12 * STIRLING_X, {"double": 57}),
    "digamma": (digamma_over_root, (-0.5, 0.5), mp.mpf("0.5"), {"double": 57}),
    "digamma_negative": (digamma_over_negative_root, (-0.1, 0.1), mp.mpf(9), {"double": 57}),
    "digamma_asymptotic": (digamma_asymptotic, (0, mp.mpf(1) / STIRLING_X**2), mp.mpf(1) / 12 * STIRLING_X**2,
                           {"double": 57}),
    "erfinv": (erfinv_over_y, (0, 0.25), SQRT_PI / 2, {"double": 57, "float": 31}),
    "sin_pi": (sin_pi_over_r, (0, 0.25), mp.mpf(2), {"double": 57}),
    "cos_pi": (cos_pi, (0, 0.25), mp.mpf(1), {"double": 57}),
    "i0_small": (i0_small, (0, BESSEL_X**2), mp.mpf(1), {"double": 57, "float": 31}),
    "i1_small": (i1_small, (0, BESSEL_X**2), mp.mpf(1) / 2, {"double": 57, "float": 31}),
    "i0e_large": (bessel_large(0), (-1, 1), 1 / mp.sqrt(2 * mp.pi), {"double": 57, "float": 31}),
    "i1e_large": (bessel_large(1), (-1, 1), bessel_large(1)(1), {"double": 57, "float": 31}),
}
for _i, (_end, _centre, _start) in enumerate(TAIL_PIECES, 1):
    for _name, _scale in (("erfinv", 1), ("ndtri", mp.sqrt(2))):
        TABLE[f"{_name}_tail{_i}"] = (erfcinv_of_s(_scale, _centre), (_start - _centre, _end - _centre),
                                       _scale * erfcinv(mp.exp(-mp.mpf(_start) ** 2)), {"double": 57})


def main():
    ends = [end for end, _, _ in TAIL_PIECES[:-1]] + [float("inf")]
    print(f"_TAIL_PIECES = {tuple((end, centre) for end, (_, centre, _) in zip(ends, TAIL_PIECES))!r}")
    for name, root in (("_PSI_ROOT", PSI_ROOT), ("_PSI_NEGATIVE_ROOT", PSI_NEGATIVE_ROOT)):
        print(f"{name} = ({float(root)!r}, {float(root - float(root))!r})")
    print("_POLY = {")
    low_parts = {}
    for name, (f, (a, b), scale, bits) in TABLE.items():
        for prec, nbits in bits.items():
            coefs, low_parts[name, prec] = fit(f, a, b, scale, nbits)
            print(f"    ({name!r}, {prec!r}): ({', '.join(repr(c) for c in coefs)}),")
    print("}")
    print("_CONSTANT_LO = {")
    for key, lo in low_parts.items():
        print(f"    {key!r}: {lo!r},")
    print("}")


if __name__ == "__main__":
    main()
