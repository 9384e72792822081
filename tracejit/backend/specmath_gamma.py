"""specmath's gamma family: lgamma, gamma and digamma, in double (float32 rounds once).

- lgamma(x), x > 0: below 8, x = r + n with r in [1.5, 2.5) and lgamma(x) = t Q(t) +- log(prod), t = x - (n + 2)
  exact, prod the n shifts (x (x + 1) or x below 1.5); from 8, Stirling's series, (x - 1/2) log x - x as
  double-doubles. gamma(x) = exp of the same pieces (exp(t Q(t)) times or over prod below 8). x < 0: the
  reflection formula with 1 - x's rounding carried, sin(pi x) = +-r S(r**2), x = k + r exactly, |r| <= 1/2.
- digamma(x), x > 0: below 8, digamma(r) + sum 1/(r + k), r in [1, 2), digamma(r) = (r - x0) P(r - 3/2) around
  its root x0 (a double-double); from 8, log x - 1/(2x) - the asymptotic series. x < 0: digamma(1 - x) -
  pi cot(pi x), cos(pi r) a polynomial in r**2; within 0.1 of the root near -0.504, (x - x1) P1(x - x1).
"""
from .specmath_base import INF as _INF
from .specmath_base import log_parts as _log_parts
from .specmath_base import poly as _poly
from .specmath_base import poly_pieces as _poly_pieces
from .specmath_f64 import _PSI_NEGATIVE_ROOT, _PSI_ROOT

_NAN = float("nan")
_HALF_LOG_2PI = (0.9189385332046728, -3.8782941580672414e-17)
_LOG_PI = 1.1447298858494002
_PI = 3.141592653589793
_STIRLING_X = 8.0


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


def lgamma(f, x, prec):
    negative, y, dy = _reflected(f, x)
    g = _GammaParts(f, y, dy, prec)
    small = f.add(g.tq, f.mul(f.sel(g.shrink, -1.0, 1.0), f.add(g.log_h, g.log_l)))
    value = f.sel(g.big, f.add(g.hi, g.lo), small)
    _, sin_pi_r, _ = _pi_reduced(f, f.max(x, -(2.0**60)))
    value = f.sel(negative, f.sub(f.sub(_LOG_PI, f.log(f.abs(sin_pi_r))), value), value)
    value = f.sel(_pole(f, x), _INF, value)
    return f.sel(f.cmp("oeq", x, _INF), _INF, f.sel(f.cmp("oeq", x, -_INF), -_INF, value))


def gamma(f, x, prec):
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


def digamma(f, x, prec):
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
