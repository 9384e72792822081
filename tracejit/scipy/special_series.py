"""Series and recurrences of jax.scipy.special: hyp1f1, hyp2f1, bessel_jn and sph_harm_y, written on
tracejit.numpy with loops of fixed length (so they trace, vectorize and batch) and computed in float64.

hyp1f1 uses Kummer's transformation M(a, b, x) = exp(x) M(b - a, b, -x) for x < 0, so that its series has no
cancellation, and the asymptotic series for large |x|; hyp2f1 maps x < 0 into (0, 1) by Pfaff's transformation and
uses the 1 - x transformations (A&S 15.3.6, and 15.3.10-12 where c - a - b is an integer) near 1. JAX's series,
without these, lose every digit for x < -1 (hyp2f1) and many for x << 0 (hyp1f1)."""
import operator

import numpy as np

from .. import lax
from .. import numpy as tnp
from ..core.errors import ConcretizationError
from ..core.trace import Tracer, bind
from ..custom_derivatives import custom_jvp
from ..numpy._base import promote
from ..primitives import special as sp
from ._args import real_args

KUMMER_TERMS = 500          # of 1F1's series: enough up to x = 60 + 3 (|a| + |b|), where the asymptotic one starts
KUMMER_ASYMPTOTIC_TERMS = 60
KUMMER_POLYNOMIAL_DEGREE = 200  # M(-n, b, x) for x > 0 by the recurrence in n up to this degree
GAUSS_TERMS = 300           # of 2F1's series at |x| <= 0.75 (0.75**300 is 3e-38, room for parameter growth)
GAUSS_SPLIT = 0.75          # above, the 1 - x transformations, whose series in 1 - x <= 0.25 need few terms
GAUSS_NEAR_ONE_TERMS = 200    # 0.25**200 is 1e-120: room for the growth of large parameters' terms
GAUSS_FAR_NEGATIVE = -3.0     # below, A&S 15.3.8 in 1 / (1 - x) where a - b is not near an integer
GAUSS_INTEGER_TOLERANCE = 1e-9  # c - a - b this close to an integer takes the integer formulas
GAUSS_MAX_INTEGER = 40      # their finite sums have up to this many terms (|c - a - b| <= 40)
DERIVATIVE_TERMS = 400      # of the parameter derivatives' series (|x| <= 0.9: 0.9**400 is 5e-19)


def _float64(*args):
    dtype = tnp.result_type(*args)
    return [a.astype(np.float64) if hasattr(a, "astype") else np.float64(a) for a in args], dtype


def _lgamma(x):
    return bind(sp.lgamma_p, x)


def _digamma(x):
    return bind(sp.digamma_p, x)


def _gamma_sign(x):
    """The sign of Gamma(x) (1 at the poles, where 1 / Gamma is 0 anyway)."""
    return tnp.where((x > 0) | (tnp.fmod(tnp.floor(x), 2.0) == 0), 1.0, -1.0)


def _gamma_ratio(numerators, denominators, log_factor=0.0):
    """prod Gamma(n) / prod Gamma(d) * exp(log_factor) through lgamma (no overflow between factors); 0 where a
    denominator is a pole."""
    log = sum(_lgamma(n) for n in numerators) - sum(_lgamma(d) for d in denominators)
    sign = 1.0
    for v in (*numerators, *denominators):
        sign = sign * _gamma_sign(v)
    return sign * tnp.exp(log + log_factor)


def _kummer_series(a, b, y):
    """M(a, b, y) and its derivatives in a and b by the power series (products of term ratios, so that a
    non-positive integer a ends the series without dividing by zero)."""
    def step(k, carry):
        m, ma, mb, t, ta, tb = carry
        k = k.astype(np.float64)
        bk = tnp.where(b + k == 0, 1.0, b + k)     # b = -n past a = -m > b: the terms are already 0
        r = (a + k) / bk * y / (k + 1)
        ta = ta * r + t * y / (bk * (k + 1))
        tb = tb * r - t * r / bk
        t = t * r
        return m + t, ma + ta, mb + tb, t, ta, tb

    one, zero = tnp.ones_like(y), tnp.zeros_like(y)
    return lax.fori_loop(0, KUMMER_TERMS, step, (one, zero, zero, one, zero, zero))[:3]


def _kummer_asymptotic(a, b, y, log_scale):
    """exp(log_scale) M(a, b, y) and its derivatives for large y > 0 from Gamma(b) / Gamma(a) exp(y) y**(a - b)
    sum (b - a)_k (1 - a)_k / (k! y**k), computed as one exponential so that exp(y) may exceed the float range
    where the product does not."""
    def step(k, carry):
        s, sa, sb, t, ta, tb = carry
        k = k.astype(np.float64)
        r = (b - a + k) * (1 - a + k) / ((k + 1) * y)
        ta = ta * r - t * ((1 - a + k) + (b - a + k)) / ((k + 1) * y)
        tb = tb * r + t * (1 - a + k) / ((k + 1) * y)
        t = t * r
        return s + t, sa + ta, sb + tb, t, ta, tb

    one, zero = tnp.ones_like(y), tnp.zeros_like(y)
    s, sa, sb = lax.fori_loop(0, KUMMER_ASYMPTOTIC_TERMS, step, (one, zero, zero, one, zero, zero))[:3]
    log_y = tnp.log(y)
    p = _gamma_ratio([b], [a], log_scale + (a - b) * log_y)
    return p * s, p * ((log_y - _digamma(a)) * s + sa), p * ((_digamma(b) - log_y) * s + sb)


def _hyp1f1_parts(a, b, x):
    """M(a, b, x), dM/da and dM/db in float64."""
    negative = x < 0
    a1, y = tnp.where(negative, b - a, a), tnp.abs(x)
    asymptotic = y > 60 + 3 * (tnp.abs(a1) + tnp.abs(b))
    y_series, y_far = tnp.where(asymptotic, 0.0, y), tnp.where(asymptotic, y, 1.0)
    scale = tnp.where(negative, x, 0.0)
    series = [v * tnp.exp(scale) for v in _kummer_series(a1, b, y_series)]
    far = _kummer_asymptotic(a1, b, y_far, tnp.where(negative, 0.0, y_far))     # exp(x) exp(|x|) = 1 for x < 0
    m, m1, m2 = [tnp.where(asymptotic, f, s) for f, s in zip(far, series)]
    return _kummer_polynomial(a, b, x, m), tnp.where(negative, -m1, m1), tnp.where(negative, m1 + m2, m2)


def _kummer_polynomial(a, b, x, m):
    """M(-n, b, x) for x > 0, b > 0 by the recurrence in a (DLMF 13.3.1, the Laguerre polynomials' recurrence, stable
    upward in n): its series alternates and cancels (1e-10 at n = 10, x = 33); elsewhere m unchanged."""
    n = -a
    use = _non_positive_integer(a) & (n <= KUMMER_POLYNOMIAL_DEGREE) & (b > 0) & (x > 0)
    bs, xs = tnp.where(use, b, 1.0), tnp.where(use, x, 0.0)

    def step(k, carry):        # (M(-k), M(-k + 1)) -> (M(-k - 1), M(-k))
        current, previous = carry
        k = k.astype(np.float64)
        following = ((2 * k + bs - xs) * current - k * previous) / (bs + k)
        return tnp.where(k < n, following, current), tnp.where(k < n, current, previous)

    value = lax.fori_loop(1, KUMMER_POLYNOMIAL_DEGREE, step, (1 - xs / bs, tnp.ones_like(xs)))[0]
    return tnp.where(use & (n >= 1), value, m)


def _non_positive_integer(v):
    return (v <= 0) & (v == tnp.floor(v))


def _hyp1f1_special(a, b, x, m):
    """JAX's conventions (1 at a = 0, exp(x) at a = b, inf at b = 0) and SciPy's inf at the other poles b = -n
    that a = -k > b does not cancel."""
    pole = _non_positive_integer(b) & ~(_non_positive_integer(a) & (a > b))
    m = tnp.where(pole, np.inf, m)
    m = tnp.where(a == b, tnp.exp(x), m)
    return tnp.where(a == 0, 1.0, m)


@custom_jvp
def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x) for real arguments; 1 at a = 0, exp(x) at a = b, inf
    at b = 0 as in JAX. Against SciPy and mpmath (measured): for 0 < a, b <= 50 and any x outside the region below,
    within about 1e-13 (the rounding of exp(x) at x ~ 600); a = -n with x > 0 by the recurrence in n, 4e-12 worst
    (near the polynomial's zeros). Where a > b > 0 and x < 0 the result is far smaller than the terms of every
    series used here and digits cancel: 1e-12 at x = -6, 1e-5 at a = 26, b = 8, x = -51 (JAX: 1e76 off)."""
    (a, b, x), dtype = _float64(*real_args("hyp1f1", a, b, x))
    return _hyp1f1_special(a, b, x, _hyp1f1_parts(a, b, x)[0]).astype(dtype)


@hyp1f1.defjvp
def _hyp1f1_jvp(primals, tangents):
    a, b, x = real_args("hyp1f1", *primals)
    da, db, dx = tangents
    (a64, b64, x64), dtype = _float64(a, b, x)
    m, ma, mb = _hyp1f1_parts(a64, b64, x64)
    out = _hyp1f1_special(a64, b64, x64, m).astype(dtype)
    d_x = a / b * hyp1f1(a + 1, b + 1, x)
    return out, ma.astype(dtype) * da + mb.astype(dtype) * db + d_x * dx


def _gauss_series(a, b, c, z, terms):
    def step(k, carry):
        total, t = carry
        k = k.astype(np.float64)
        t = t * (a + k) * (b + k) / ((c + k) * (k + 1)) * z
        return total + t, t

    return lax.fori_loop(0, terms, step, (tnp.ones_like(z), tnp.ones_like(z)))[0]


def _gauss_near_one(a, b, c, z):
    """2F1(a, b; c; z) for 0.75 < z < 1 from series in w = 1 - z: A&S 15.3.6 where d = c - a - b is not an integer,
    15.3.10-11 where it is (after Euler's transformation, which turns d < 0 into -d)."""
    w = 1 - z
    d = c - a - b
    m = tnp.round(d)
    integer = tnp.abs(d - m) < GAUSS_INTEGER_TOLERANCE
    d_safe = tnp.where(integer, 0.5, d)
    general = (_gamma_ratio([c, d_safe], [c - a, c - b]) * _gauss_series(a, b, 1 - d_safe, w, GAUSS_NEAR_ONE_TERMS)
               + w ** d_safe * _gamma_ratio([c, -d_safe], [a, b])
               * _gauss_series(c - a, c - b, 1 + d_safe, w, GAUSS_NEAR_ONE_TERMS))
    # integer d: with m = |d|, Euler's transformation when d < 0
    flip = m < 0
    n = tnp.abs(m)
    a1, b1 = tnp.where(flip, c - a, a), tnp.where(flip, c - b, b)

    def finite(k, carry):       # sum over k < n of (a1)_k (b1)_k / (k! (1 - n)_k) w**k
        total, t = carry
        k = k.astype(np.float64)
        t = t * (a1 + k) * (b1 + k) / ((k + 1) * tnp.where(1 - n + k != 0, 1 - n + k, 1.0)) * w
        return total + tnp.where(k + 1 < n, t, 0.0), t

    first = lax.fori_loop(0, GAUSS_MAX_INTEGER, finite, (tnp.ones_like(w), tnp.ones_like(w)))[0]
    first = tnp.where(n > 0, first * _gamma_ratio([tnp.where(n > 0, n, 1.0), c], [a1 + n, b1 + n]), 0.0)
    log_w = tnp.log(w)

    def logarithmic(k, carry):  # sum of (a1 + n)_k (b1 + n)_k / (k! (k + n)!) w**k [log w - psi(k + 1) ...]
        total, t, psi1, psin, psia, psib = carry
        total = total + t * (log_w - psi1 - psin + psia + psib)
        k = k.astype(np.float64)
        t = t * (a1 + n + k) * (b1 + n + k) / ((k + 1) * (k + n + 1)) * w
        return total, t, psi1 + 1 / (k + 1), psin + 1 / (k + n + 1), psia + 1 / (a1 + n + k), psib + 1 / (b1 + n + k)

    start = (tnp.zeros_like(w), tnp.exp(-_lgamma(n + 1)), _digamma(tnp.ones_like(w)), _digamma(n + 1),
             _digamma(a1 + n), _digamma(b1 + n))
    second = lax.fori_loop(0, GAUSS_NEAR_ONE_TERMS, logarithmic, start)[0]
    second = second * _gamma_ratio([c], [a1, b1]) * tnp.where(tnp.fmod(n, 2.0) == 0, 1.0, -1.0) * w ** n
    integral = (first - second) * tnp.where(flip, w ** d, 1.0)
    return tnp.where(integer & (n <= GAUSS_MAX_INTEGER), integral, tnp.where(integer, np.nan, general))


def _hyp2f1_64(a, b, c, x):
    """2F1 in float64 for x <= 1 (the cases at x = 1 and x > 1 are set by the caller)."""
    # Pfaff: 2F1(a, b; c; x) = (1 - x)**(-a) 2F1(a, c - b; c; x / (x - 1)), keeping a polynomial one if b is
    integer_b = _non_positive_integer(b) & ~_non_positive_integer(a)
    p, q = tnp.where(integer_b, b, a), tnp.where(integer_b, a, b)
    negative = x < 0
    a1, b1 = tnp.where(negative, p, a), tnp.where(negative, c - q, b)
    z = tnp.where(negative, x / (x - 1), x)
    scale = tnp.where(negative, (1 - x) ** (-p), 1.0)
    near = tnp.where(z <= GAUSS_SPLIT, z, 0.0)
    far = tnp.where(z > GAUSS_SPLIT, tnp.minimum(z, 1.0 - 1e-300), 0.9)
    polynomial = _non_positive_integer(a1) | _non_positive_integer(b1)
    value = tnp.where(z <= GAUSS_SPLIT, _gauss_series(a1, b1, c, near, GAUSS_TERMS),
                      _gauss_near_one(a1, b1, c, far))
    terminating = _gauss_series(a1, b1, c, tnp.where(polynomial, z, 0.0), GAUSS_TERMS)
    degree = tnp.where(_non_positive_integer(a1), -a1, np.inf)
    degree = tnp.minimum(degree, tnp.where(_non_positive_integer(b1), -b1, np.inf))
    value = scale * tnp.where(degree < GAUSS_TERMS, terminating, value)
    # x < -3 with a - b away from the integers: A&S 15.3.8, two series in 1 / (1 - x) <= 1/4, which keep the
    # digits that the 1 - z transformation after Pfaff's loses to cancellation when the parameters are large
    use = (x < GAUSS_FAR_NEGATIVE) & (tnp.abs(a - b - tnp.round(a - b)) > 0.05)
    xs, a_s, b_s = tnp.where(use, x, 2 * GAUSS_FAR_NEGATIVE), tnp.where(use, a, 0.5), tnp.where(use, b, 0.25)
    u, log_1mx = 1 / (1 - xs), tnp.log1p(-xs)
    far_negative = (_gamma_ratio([c, b_s - a_s], [b_s, c - a_s], -a_s * log_1mx)
                    * _gauss_series(a_s, c - b_s, a_s - b_s + 1, u, GAUSS_NEAR_ONE_TERMS)
                    + _gamma_ratio([c, a_s - b_s], [a_s, c - b_s], -b_s * log_1mx)
                    * _gauss_series(b_s, c - a_s, b_s - a_s + 1, u, GAUSS_NEAR_ONE_TERMS))
    return tnp.where(use, far_negative, value)


def _hyp2f1_value(a, b, c, x):
    d = c - a - b
    value = _hyp2f1_64(a, b, c, tnp.where(x <= 1, x, 0.0))
    degree = tnp.minimum(tnp.where(_non_positive_integer(a), -a, np.inf), tnp.where(_non_positive_integer(b), -b, np.inf))
    polynomial = degree < GAUSS_TERMS      # summed directly at every x (for x < 0 its terms mostly keep one sign)
    value = tnp.where(polynomial, _gauss_series(a, b, c, tnp.where(polynomial, x, 0.0), GAUSS_TERMS), value)
    value = tnp.where((x > 1) & ~polynomial, np.inf, value)
    at_one = tnp.where(d > 0, _gamma_ratio([c, tnp.where(d > 0, d, 1.0)], [c - a, c - b]), np.inf)
    value = tnp.where((x == 1) & ~polynomial, at_one, value)
    pole = _non_positive_integer(c) & ~((_non_positive_integer(a) & (a > c)) | (_non_positive_integer(b) & (b > c)))
    value = tnp.where(pole, np.inf, value)
    value = tnp.where((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 1.0, value)
    return tnp.where(tnp.isnan(a) | tnp.isnan(b) | tnp.isnan(c) | tnp.isnan(x), np.nan, value)


def _hyp2f1_parameter_derivatives(a, b, c, x):
    """d 2F1 / da, db, dc by differentiating the power series term by term (|x| <= 0.9; NaN beyond, where it does
    not converge in DERIVATIVE_TERMS terms)."""
    inside = tnp.abs(x) <= 0.9
    z = tnp.where(inside, x, 0.0)

    def step(k, carry):
        fa, fb, fc, t, ta, tb, tc = carry
        k = k.astype(np.float64)
        r = (a + k) * (b + k) / ((c + k) * (k + 1)) * z
        ta = ta * r + t * (b + k) / ((c + k) * (k + 1)) * z
        tb = tb * r + t * (a + k) / ((c + k) * (k + 1)) * z
        tc = tc * r - t * r / (c + k)
        t = t * r
        return fa + ta, fb + tb, fc + tc, t, ta, tb, tc

    zero, one = tnp.zeros_like(z), tnp.ones_like(z)
    out = lax.fori_loop(0, DERIVATIVE_TERMS, step, (zero, zero, zero, one, zero, zero, zero))[:3]
    return [tnp.where(inside, v, np.nan) for v in out]


@custom_jvp
def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x) for real arguments and x <= 1 (inf for x > 1 unless a or b
    is a non-positive integer, where it is the polynomial, as SciPy; at x = 1 Gauss's formula, inf where
    c - a - b <= 0). Against mpmath (measured): |a|, |b|, |c| <= 8 and x in [-10, 1], median error 1e-15 and 99% of
    points within 2e-12; parameters up to 20 and x down to -50, 99% within 1e-7, worst 2e-4 where the result is
    far smaller than the series' terms (SciPy: 5e-5 and 1; JAX's series is unbounded for x < -1). c - a - b within
    1e-9 of an integer with x in (0.75, 1) (or below -3 through Pfaff's map) takes A&S 15.3.10-12, for |c - a - b|
    up to 40 (NaN beyond). Derivatives in a, b and c are series, defined for |x| <= 0.9 (NaN beyond)."""
    (a, b, c, x), dtype = _float64(*real_args("hyp2f1", a, b, c, x))
    return _hyp2f1_value(a, b, c, x).astype(dtype)


@hyp2f1.defjvp
def _hyp2f1_jvp(primals, tangents):
    a, b, c, x = real_args("hyp2f1", *primals)
    da, db, dc, dx = tangents
    (a64, b64, c64, x64), dtype = _float64(a, b, c, x)
    out = _hyp2f1_value(a64, b64, c64, x64).astype(dtype)
    fa, fb, fc = [v.astype(dtype) for v in _hyp2f1_parameter_derivatives(a64, b64, c64, x64)]
    terms = [tnp.where(t == 0, 0.0, f * t) for f, t in ((fa, da), (fb, db), (fc, dc))]   # no NaN * 0 where those
    return out, sum(terms) + a * b / c * hyp2f1(a + 1, b + 1, c + 1, x) * dx             # partials are not taken


def bessel_jn(z, *, v, n_iter=50):
    """J_0(z) ... J_v(z), Bessel functions of the first kind of integer order, stacked on a new leading axis, by
    Miller's backward recurrence from order max(n_iter, v) normalised by J_0 + 2 (J_2 + J_4 + ...) = 1 (accurate
    where that order exceeds |z| by 20 or so, JAX's rule of thumb for n_iter). Computed in float64 with rescaling,
    so small |z| does not overflow (JAX's float32 does), and exact at z = 0 (JAX gives NaN there)."""
    v = operator.index(v)
    if v < 0:
        raise ValueError(f"bessel_jn: v must be a non-negative integer, got {v}")
    n_iter = int(n_iter)
    (z,) = promote(tnp.asarray(z), to_float="float64")
    if np.dtype(tnp.result_type(z)).kind == "c":
        raise ValueError("bessel_jn: complex input not supported.")
    (z,), dtype = _float64(z)
    top = max(n_iter, v)
    az = tnp.abs(z)
    safe = tnp.where((az > 0) & tnp.isfinite(az), az, 1.0)
    orders = np.arange(v + 1, dtype=np.float64).reshape((v + 1,) + (1,) * z.ndim)

    def step(i, carry):
        f0, f1, total, out = carry
        k = (top - i).astype(np.float64)
        f = 2 * (k + 1) * f1 / safe - f0
        total = total + tnp.where(tnp.fmod(k, 2.0) == 0, 2 * f, 0.0)
        out = tnp.where(orders == k, f, out)
        scale = tnp.where(tnp.abs(f) > 1e250, 1e-250, 1.0)
        return f1 * scale, f * scale, total * scale, out * scale

    zero = tnp.zeros_like(safe)
    start = (zero, zero + 1e-16, zero, tnp.zeros((v + 1,) + tuple(z.shape), np.float64) + zero)
    _, j0, total, out = lax.fori_loop(0, top + 1, step, start)
    out = out / (total - j0)
    out = out * tnp.where((z < 0) & (tnp.fmod(orders, 2.0) == 1), -1.0, 1.0)
    out = tnp.where(az == 0, tnp.where(orders == 0, 1.0, 0.0), out)
    out = tnp.where(tnp.isinf(az), 0.0, out)
    return tnp.where(tnp.isnan(z), np.nan, out).astype(dtype)


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonic Y_n^m(theta, phi) with the Condon-Shortley phase (theta the polar angle, phi the
    azimuth), as SciPy's sph_harm_y and JAX's. n_max, the static bound of the degree loop, defaults to max(n) (then
    n must be concrete); degrees above it are clipped to it as in JAX. The normalised associated Legendre function
    is computed elementwise by the stable three-term recurrence in the degree (arguments broadcast; any shapes),
    with sin(theta) taken directly rather than as sqrt(1 - cos(theta)**2), which loses accuracy near the poles."""
    if diff_n is not None:
        raise NotImplementedError("The 'diff_n' argument to sph_harm_y is not supported.")
    if n_max is None:
        if isinstance(n, Tracer):
            raise ConcretizationError("sph_harm_y: n_max must be given when n is traced (it bounds a loop)")
        n_max = int(np.max(np.asarray(n)))
    n_max = operator.index(int(n_max)) if not isinstance(n_max, Tracer) else n_max
    if isinstance(n_max, Tracer):
        raise ConcretizationError("sph_harm_y: n_max must be a concrete integer")
    if tnp.ndim(theta) == 0:
        theta = tnp.reshape(tnp.asarray(theta), (1,))
    theta, phi = promote(theta, phi, to_float="float64")
    dtype = tnp.result_type(theta, phi)
    n, m, theta, phi = tnp.broadcast_arrays(n, m, theta.astype(np.float64), phi.astype(np.float64))
    degree = tnp.clip(n, 0, n_max).astype(np.float64)
    order = tnp.minimum(tnp.abs(m), n_max).astype(np.float64)
    x, s = tnp.cos(theta), tnp.abs(tnp.sin(theta))

    def diagonal(k, p):          # P_k^k from P_(k-1)^(k-1), normalised, with the (-1)**k phase
        k = k.astype(np.float64)
        return tnp.where(k <= order, -p * tnp.sqrt((2 * k + 1) / (2 * k)) * s, p)

    pmm = lax.fori_loop(1, n_max + 1, diagonal, tnp.zeros_like(x) + 0.5 / np.sqrt(np.pi))

    def upward(l, carry):        # P_l^m from P_(l-1)^m and P_(l-2)^m
        p2, p1 = carry
        l = l.astype(np.float64)
        active = (l >= order + 2) & (l <= degree)
        m2 = order * order
        alpha = tnp.sqrt((4 * l * l - 1) / tnp.where(active, l * l - m2, 1.0))
        beta = tnp.sqrt(tnp.where(active, ((l - 1) ** 2 - m2) / (4 * (l - 1) ** 2 - 1), 0.0))
        new = alpha * (x * p1 - beta * p2)
        return tnp.where(active, p1, p2), tnp.where(active, new, p1)

    p2, p1 = lax.fori_loop(2, n_max + 1, upward, (pmm, tnp.sqrt(2 * order + 3) * x * pmm))
    legendre = tnp.where(degree == order, p2, tnp.where(degree > order, p1, 0.0))
    legendre = tnp.where(tnp.abs(m) > n, 0.0, legendre)        # |m| > n: 0, as SciPy (JAX: undefined)
    y = legendre * tnp.exp(1j * order * phi)
    y = tnp.where(m < 0, tnp.where(tnp.fmod(order, 2.0) == 1, -1.0, 1.0) * tnp.conj(y), y)
    return y.astype(np.complex64 if np.dtype(dtype).itemsize <= 4 else np.complex128)
