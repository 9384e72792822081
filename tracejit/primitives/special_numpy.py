"""NumPy implementations of the special functions without a compiled kernel (compiled code hands them to these):
the regularized incomplete gamma functions P and Q and dP/da, the regularized incomplete beta function, Hurwitz's
zeta and polygamma. They compute in float64 (rounded to the argument's dtype) with vectorized series and
continued fractions, iterating until every element converged.

Also `betaln` and `stirling_correction`, written on an array namespace (NumPy here, tracejit.numpy in
tracejit.scipy.special), so that the impls and the differentiable functions share one formula.
"""
import numpy as np

from ..backend.specmath import evaluate

_EPS = np.finfo(np.float64).eps
_MAX_TERMS = 100_000

# B_2k / (2k (2k - 1)): lgamma(x) = (x - 1/2) log x - x + log(2 pi)/2 + sum_k c_k / x**(2k - 1) (Stirling)
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156, -3617 / 122400)
_HALF_LOG_2PI = 0.5 * np.log(2 * np.pi)


def _lgamma(x):
    return evaluate("lgamma", x)


def _digamma(x):
    return evaluate("digamma", x)


def stirling_correction(x):
    """lgamma(x) - ((x - 1/2) log x - x + log(2 pi)/2) for x >= 8 (within 1e-17 there), by its series."""
    w = 1 / (x * x)
    acc = 0 * w + _STIRLING[-1]
    for c in reversed(_STIRLING[:-1]):
        acc = acc * w + c
    return acc / x


def betaln(a, b, xp=np, gammaln=_lgamma):
    """log |B(a, b)|. For max(a, b) >= 8 from Stirling's series, which keeps the large lgamma terms from
    cancelling: with a <= b, lgamma(b) - lgamma(a + b) = -a log b - (a + b - 1/2) log1p(a/b) + a + D(b) - D(a + b),
    D the Stirling correction."""
    lo, hi = xp.minimum(a, b), xp.maximum(a, b)
    direct = gammaln(lo) + (gammaln(hi) - gammaln(lo + hi))
    big = hi >= 8
    safe = xp.where(big, hi, 8.0)
    corr = stirling_correction(safe) - stirling_correction(lo + safe)
    tail = corr + lo - lo * xp.log(safe) - (lo + safe - 0.5) * xp.log1p(lo / safe)
    return xp.where(big, gammaln(lo) + tail, direct)


def _float64(*xs):
    out = np.broadcast_arrays(*[np.asarray(x, np.float64) for x in xs])
    return [np.array(x) for x in out]


def _rounded(like, value):
    """The float64 result in the argument's dtype."""
    return np.asarray(value).astype(np.asarray(like).dtype)


def _log_ratio_minus(r, d):
    """log(r) - d for r = 1 + d, without cancellation: log(r) - d from r itself (an accurate quotient) for
    |d| >= 1/2; below, with u = d/(2 + d), -2u**2/(1 - u) + 2 sum u**(2k+1)/(2k+1) from d."""
    out = np.log(r) - d
    small = np.abs(d) < 0.5
    u = d[small] / (2 + d[small])
    u2 = u * u
    series = np.zeros_like(u)
    for k in range(14, 0, -1):
        series = series * u2 + 1 / (2 * k + 1)
    out[small] = -2 * u2 / (1 - u) + 2 * u * u2 * series
    return out


def _log_gamma_prefactor(a, x):
    """log(x**a e**-x / Gamma(a)); for a >= 8 as a (log(x/a) - d) + log(a / (2 pi))/2 - D(a), d = (x - a)/a, which
    has no cancellation when x is near a large a."""
    with np.errstate(all="ignore"):
        direct = a * np.log(x) - x - _lgamma(a)
        big = a >= 8
        safe = np.where(big, a, 8.0)
        uniform = (safe * _log_ratio_minus(x / safe, (x - safe) / safe) + 0.5 * np.log(safe) - _HALF_LOG_2PI
                   - stirling_correction(safe))
    return np.where(big, uniform, direct)


def _series(a, x, grad):
    """P(a, x) = x**a e**-x / Gamma(a + 1) sum_n x**n / ((a + 1)...(a + n)), with dP/da if grad; each element's
    terms summed until they no longer count (the arrays shrink to the elements still summing)."""
    total, dtotal = np.ones_like(a), np.zeros_like(a)
    at, xs, aa, term, dterm = np.arange(a.size), x, a, np.ones_like(a), np.zeros_like(a)
    for n in range(1, _MAX_TERMS):
        r = xs / (aa + n)
        term = term * r
        total[at] += term
        going = np.abs(term) > _EPS * np.abs(total[at]) / 4
        if grad:
            dterm = dterm * r - term / (aa + n)
            dtotal[at] += dterm
            going |= np.abs(dterm) > _EPS * np.abs(dtotal[at]) / 4
        if not going.all():
            at, xs, aa, term, dterm = at[going], xs[going], aa[going], term[going], dterm[going]
            if not at.size:
                break
    pref = np.exp(_log_gamma_prefactor(a, x)) / a
    value = pref * total
    if not grad:
        return value
    return value * (np.log(x) - _digamma(a + 1)) + pref * dtotal


def _continued_fraction(a, x, grad):
    """Q(a, x) = x**a e**-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)) by Lentz's method, with dQ/da
    (the recurrences differentiated in a) if grad; the arrays shrink to the elements not yet converged."""
    tiny = 1e-300
    b = x + 1 - a
    c, dc = np.full_like(a, 1 / tiny), np.zeros_like(a)
    d = 1 / np.where(np.abs(b) < tiny, tiny, b)
    dd = d * d                           # (db = -1)
    h, dh = d.copy(), dd.copy()
    at, aa = np.arange(a.size), a
    for i in range(1, _MAX_TERMS):
        an = -i * (i - aa)
        b = b + 2
        dd = i * d + an * dd - 1
        d = an * d + b
        d = np.where(np.abs(d) < tiny, tiny, d)
        dc = -1 + i / c - an * dc / (c * c)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1 / d
        dd = -dd * d * d
        delta, ddelta = d * c, dd * c + d * dc
        h_at = h[at]
        h[at], dh[at] = h_at * delta, dh[at] * delta + h_at * ddelta
        going = np.abs(delta - 1) > _EPS / 2
        if grad:
            going |= np.abs(ddelta) * np.abs(h[at]) > _EPS * np.abs(dh[at]) / 2
        if not going.all():
            at, aa, b, c, dc, d, dd = (v[going] for v in (at, aa, b, c, dc, d, dd))
            if not at.size:
                break
    pref = np.exp(_log_gamma_prefactor(a, x))
    value = pref * h
    if not grad:
        return value
    return value * (np.log(x) - _digamma(a)) + pref * dh


def _incomplete_gamma(a, x, upper, grad=False):
    """P(a, x) (or Q = 1 - P if upper; dP/da if grad), series below x = a + 1, continued fraction above; SciPy's
    special values (NaN for a or x < 0 and for a = x = 0, P(0, x > 0) = 1, P(a, inf) = 1, P(inf, x) = 0)."""
    a0, x0 = _float64(a, x)
    out = np.full(a0.shape, np.nan)
    ok = (a0 > 0) & (x0 > 0) & np.isfinite(a0) & np.isfinite(x0)
    series = ok & (x0 < a0 + 1)
    frac = ok & ~series
    with np.errstate(all="ignore"):
        if series.any():
            p = _series(a0[series], x0[series], grad)
            out[series] = p if grad or not upper else 1 - p
        if frac.any():
            q = _continued_fraction(a0[frac], x0[frac], grad)
            out[frac] = -q if grad else (q if upper else 1 - q)
    edge = np.select([np.isnan(a0) | np.isnan(x0) | (a0 < 0) | (x0 < 0), (a0 == 0) & (x0 == 0),
                      np.isinf(a0) & np.isinf(x0), a0 == 0, x0 == 0, np.isinf(x0), np.isinf(a0)],
                     [np.nan, np.nan, np.nan, 1.0, 0.0, 1.0, 0.0], np.nan)
    if grad:        # P is constant in a along these edges
        edge = np.where(np.isnan(edge), np.nan, 0.0)
    elif upper:
        edge = 1 - edge
    return _rounded(a, np.where(ok, out, edge))


def igamma(a, x):
    return _incomplete_gamma(a, x, upper=False)


def igammac(a, x):
    return _incomplete_gamma(a, x, upper=True)


def igamma_grad_a(a, x):
    return _incomplete_gamma(a, x, upper=False, grad=True)


def _beta_fraction(a, b, x):
    """The continued fraction of I_x(a, b) (DLMF 8.17.22), by Lentz's method; the arrays shrink to the elements not
    yet converged."""
    tiny = 1e-300
    d = 1 - (a + b) * x / (a + 1)
    d = 1 / np.where(np.abs(d) < tiny, tiny, d)
    h = d.copy()
    at, c = np.arange(x.size), np.ones_like(x)
    for m in range(1, _MAX_TERMS):
        for an in (m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m)),
                   -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m))):
            d = 1 + an * d
            d = 1 / np.where(np.abs(d) < tiny, tiny, d)
            c = 1 + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            delta = d * c
            h[at] *= delta
        going = np.abs(delta - 1) > _EPS / 2
        if not going.all():
            at, a, b, x, c, d = (v[going] for v in (at, a, b, x, c, d))
            if not at.size:
                break
    return h


def betainc(a, b, x):
    """I_x(a, b): the continued fraction where it converges fast (x < (a + 1)/(a + b + 2)), else 1 - I_{1-x}(b, a);
    SciPy's values at a or b = 0 or inf, and NaN outside a, b >= 0, 0 <= x <= 1."""
    a0, b0, x0 = _float64(a, b, x)
    with np.errstate(all="ignore"):
        swap = x0 > (a0 + 1) / (a0 + b0 + 2)
        p, q, y = np.where(swap, b0, a0), np.where(swap, a0, b0), np.where(swap, 1 - x0, x0)
        ok = (p > 0) & (q > 0) & np.isfinite(p) & np.isfinite(q) & (y > 0) & (y < 1)
        value = np.full(x0.shape, np.nan)
        if ok.any():
            pp, qq, yy = p[ok], q[ok], y[ok]
            log_front = pp * np.log(yy) + qq * np.log1p(-yy) - betaln(pp, qq)
            value[ok] = np.exp(log_front) / pp * _beta_fraction(pp, qq, yy)
        value = np.where(swap, 1 - value, value)
        a_zero, b_zero = (a0 == 0) | np.isinf(b0), (b0 == 0) | np.isinf(a0)
        edge = np.select([np.isnan(a0) | np.isnan(b0) | np.isnan(x0) | (a0 < 0) | (b0 < 0) | (x0 < 0) | (x0 > 1),
                          a_zero & b_zero, x0 == 0, x0 == 1, a_zero, b_zero], [np.nan, np.nan, 0.0, 1.0, 1.0, 0.0],
                         np.nan)
    inner = (a0 > 0) & (b0 > 0) & np.isfinite(a0) & np.isfinite(b0) & (x0 > 0) & (x0 < 1)
    return _rounded(x, np.where(inner, value, edge))


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
