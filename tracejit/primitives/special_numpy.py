"""NumPy implementations of the special functions without a compiled kernel (compiled code hands them to these):
Hurwitz's zeta and polygamma, in float64 (rounded to the argument's dtype) by Euler-Maclaurin sums."""
import numpy as np

from ..backend.specmath import evaluate


def _lgamma(x):
    return evaluate("lgamma", x)


def _digamma(x):
    return evaluate("digamma", x)


def _float64(*xs):
    out = np.broadcast_arrays(*[np.asarray(x, np.float64) for x in xs])
    return [np.array(x) for x in out]


def _rounded(like, value):
    """The float64 result in the argument's dtype."""
    return np.asarray(value).astype(np.asarray(like).dtype)


_BERNOULLI_2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
                 -174611 / 330, 854513 / 138, -236364091 / 2730)


def _hurwitz(s, q):
    """sum_k (q + k)**-s by Euler-Maclaurin: n direct terms (n >= 10, and past q's negative part), the integral of
    the rest and Bernoulli corrections while they shrink."""
    n = np.maximum(np.ceil(-q), 0) + 10
    total = np.zeros_like(s)
    for k in range(int(n.max())):
        total += np.where(k < n, (q + k) ** -s, 0)
    a = q + n
    total += a ** (1 - s) / (s - 1) + 0.5 * a**-s
    factor, power = s * a ** (-s - 1), 1.0
    previous = np.full_like(s, np.inf)
    for j, b2j in enumerate(_BERNOULLI_2K, 1):
        power /= (2 * j - 1) * 2 * j
        term = b2j * power * factor
        use = np.abs(term) < previous
        total += np.where(use, term, 0)
        previous = np.where(use, np.abs(term), 0)
        factor = factor * (s + 2 * j - 1) * (s + 2 * j) / (a * a)
    return total


def zeta(x, q):
    """Hurwitz's zeta(x, q) = sum_k (q + k)**-x, as SciPy: inf at x = 1 and at q = 0 or a negative integer, NaN for
    x < 1 and for negative q with a non-integer x."""
    s, q0 = _float64(x, q)
    with np.errstate(all="ignore"):
        ok = (s > 1) & (q0 > -1e4) & ~((q0 <= 0) & (q0 == np.floor(q0))) & ~((q0 < 0) & (s != np.floor(s)))
        value = np.full(s.shape, np.nan)
        if ok.any():
            value[ok] = _hurwitz(s[ok], q0[ok])
        pole = (s == 1) | ((s > 1) & (q0 <= 0) & (q0 == np.floor(q0)))
        value = np.where(pole, np.inf, value)
        value = np.where((s == np.inf) & (q0 > 1), 0.0, np.where((s == np.inf) & (q0 == 1), 1.0, value))
    return _rounded(q, value)


def polygamma(m, x):
    """digamma for m = 0, (-1)**(m+1) m! zeta(m + 1, x) for integer m >= 1, NaN for other m."""
    m0, x0 = _float64(m, x)
    with np.errstate(all="ignore"):
        integer = (m0 >= 0) & (m0 == np.floor(m0))
        order = np.where(integer, m0, 1)
        sign = np.where(order % 2 == 0, -1.0, 1.0)
        log_factorial = evaluate("lgamma", order + 1)
        value = sign * np.exp(log_factorial) * zeta(order + 1, x0)
        value = np.where(m0 == 0, _digamma(x0), value)
    return _rounded(x, np.where(integer, value, np.nan))
