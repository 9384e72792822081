"""The exponential integrals of jax.scipy.special: exp1 (E1), expi (Ei) and expn (E_n), written on tracejit.numpy
with loops of fixed length, so they trace, vectorize and batch. Power series where the argument is small
(x <= 2 for E_n, x <= 40 for Ei), the continued fraction of E_n evaluated by the modified Lentz method above
(Numerical Recipes, 6.3), and Ei's asymptotic series past 40. Derivatives: E1' = -exp(-x) / x, Ei' = exp(x) / x,
d E_n / dx = -E_(n-1)."""
import numpy as np

from .. import lax
from .. import numpy as tnp
from ..custom_derivatives import custom_jvp
from ._args import real_args

SERIES_TERMS = 40           # of E_n's series at x <= 2: 2**40 / 40! is far below float64's epsilon
FRACTION_TERMS = 60         # of E_n's continued fraction at x > 2 (at x = 1, 60 terms left 1e-12)
EI_SERIES_TERMS = 130       # of Ei's series up to x = 40, whose terms peak near k = x
EI_ASYMPTOTIC_FROM = 40.0   # Ei's asymptotic series k! / x**k is smallest near k = x: below epsilon from here
EI_ASYMPTOTIC_TERMS = 40


def _series(n, x):
    """E_n(x) for 0 < x <= 2 (n >= 1) from its power series; n - 1's term carries the logarithm."""
    m, dtype = n - 1, tnp.result_type(x)
    psi = lax.fori_loop(1, SERIES_TERMS, lambda i, s: s + tnp.where(i <= m, 1 / i.astype(dtype), 0), -np.euler_gamma + 0 * x)
    start = tnp.where(m != 0, 1.0 / tnp.where(m != 0, m, 1.0), -tnp.log(x) - np.euler_gamma)

    def term(i, carry):
        total, fact = carry
        i = i.astype(dtype)
        fact = fact * (-x / i)
        other = tnp.where(i != m, i - m, 1.0)
        return total + tnp.where(i != m, -fact / other, fact * (psi - tnp.log(x))), fact

    return lax.fori_loop(1, SERIES_TERMS, term, (start, tnp.ones_like(x)))[0]


def _fraction(n, x):
    """E_n(x) for x > 2 from its continued fraction (modified Lentz)."""
    tiny = np.finfo(tnp.result_type(x)).tiny / np.finfo(tnp.result_type(x)).eps
    b = x + n
    state = (b, 1.0 / tiny + 0 * x, 1.0 / b, 1.0 / b)

    def step(i, state):
        b, c, d, h = state
        i = i.astype(tnp.result_type(x))
        a = -i * (n - 1 + i)
        b = b + 2.0
        d = 1.0 / (a * d + b)
        c = b + a / c
        return b, c, d, h * (c * d)

    return lax.fori_loop(1, FRACTION_TERMS, step, state)[3] * tnp.exp(-x)


def _in_float64(fn):
    """fn computed in float64 and rounded once to its arguments' dtype: float32's series and fractions lost up to
    40 ulp to cancellation."""
    def wrapped(*args):
        dtype = tnp.result_type(*args)
        return fn(*[a.astype(np.float64) for a in args]).astype(dtype)
    return wrapped


@_in_float64
def _expn(n, x):
    inside = (n >= 1) & (x > 0)
    safe_x = tnp.where(inside, x, 2.0)
    safe_n = tnp.where(inside, n, 1.0)
    small = tnp.where(safe_x <= 2, safe_x, 1.0)
    value = tnp.where(safe_x <= 2, _series(safe_n, small), _fraction(safe_n, tnp.where(safe_x > 2, safe_x, 3.0)))
    at_zero = tnp.where(n <= 1, np.inf, 1.0 / tnp.where(n > 1, n - 1, 1.0))
    value = tnp.where(x == 0, at_zero, value)
    value = tnp.where((n == 0) & (x > 0), tnp.exp(-x) / tnp.where(x > 0, x, 1.0), value)
    return tnp.where((n < 0) | (x < 0) | (n != tnp.floor(n)), np.nan, value)


@custom_jvp
def expn(n, x):
    """E_n(x) = integral from 1 to infinity of exp(-x t) / t**n: n a non-negative integer, x >= 0 (NaN
    elsewhere; inf at x = 0 for n <= 1, 1 / (n - 1) for larger n)."""
    n, x = real_args("expn", n, x)
    return _expn(n, x)


@expn.defjvp
def _expn_jvp(primals, tangents):
    n, x = real_args("expn", *primals)
    return _expn(n, x), -_expn(n - 1, x) * tangents[1]


@custom_jvp
def exp1(x):
    """E_1(x) = integral from x to infinity of exp(-t) / t (NaN below 0, inf at 0)."""
    (x,) = real_args("exp1", x)
    return _expn(tnp.ones_like(x), x)


@exp1.defjvp
def _exp1_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return exp1(x), -tnp.exp(-x) / x * t


@_in_float64
def _ei_positive(x):
    """Ei(x) for x > 0: gamma + log x + sum x**k / (k k!) up to 40, its asymptotic series beyond."""
    near = tnp.where(x <= EI_ASYMPTOTIC_FROM, x, 1.0)

    def term(k, carry):
        total, power = carry
        k = k.astype(tnp.result_type(x))
        power = power * near / k
        return total + power / k, power

    series = lax.fori_loop(1, EI_SERIES_TERMS, term, (0 * x, tnp.ones_like(x)))[0] + np.euler_gamma + tnp.log(near)
    far = tnp.where(x > EI_ASYMPTOTIC_FROM, x, 2 * EI_ASYMPTOTIC_FROM)

    def asymptotic_term(k, carry):
        total, ratio = carry
        ratio = ratio * k.astype(tnp.result_type(x)) / far
        return total + ratio, ratio

    tail = lax.fori_loop(1, EI_ASYMPTOTIC_TERMS, asymptotic_term, (tnp.ones_like(x), tnp.ones_like(x)))[0]
    return tnp.where(x <= EI_ASYMPTOTIC_FROM, series, tnp.exp(far - tnp.log(far)) * tail)


@custom_jvp
def expi(x):
    """Ei(x), the principal value of the integral from -infinity to x of exp(t) / t (-inf at 0; -E1(-x) below)."""
    (x,) = real_args("expi", x)
    positive = _ei_positive(tnp.where(x > 0, x, 1.0))
    negative = -_expn(tnp.ones_like(x), tnp.where(x < 0, -x, 1.0))
    return tnp.where(x == np.inf, np.inf, tnp.where(x > 0, positive, tnp.where(x < 0, negative, -np.inf)))


@expi.defjvp
def _expi_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return expi(x), tnp.exp(x) / x * t
