"""Integrals of jax.scipy.special written on tracejit.numpy with loops of fixed length, so they trace, vectorize and
batch: dawsn, sici, fresnel, wofz and owens_t. Everything is computed in float64 (complex128 for wofz) and rounded
once to the argument's dtype; the methods are series without cancellation where the argument is small and
continued fractions or asymptotic series where it is large, rather than JAX's fitted rational approximations, so
float64 results are within a few ulp of SciPy's (JAX's wofz loses all relative accuracy in Re w(x) = exp(-x**2)
on the real axis; its owens_t, a 13-point quadrature, is off by up to 1e-9). Derivatives are the exact formulas."""
import numpy as np

from .. import lax
from .. import numpy as tnp
from ..core.trace import bind
from ..custom_derivatives import custom_jvp
from ..numpy._base import promote
from ..primitives import special as sp
from ._args import real_args

DAWSON_SERIES_UNTIL = 7.0   # exp(-x**2) sum x**(2k+1) / (k! (2k+1)) below, 1/(2x) sum (2k-1)!! / (2x**2)**k above
DAWSON_SERIES_TERMS = 130   # terms peak near k = x**2 = 49 and fall below 1e-17 of the sum by k = 120
DAWSON_ASYMPTOTIC_TERMS = 45  # at x = 7 the 45th term is about exp(-49)
SICI_SERIES_UNTIL = 4.0     # power series below (terms at most 10 times the result), E1(ix)'s fraction above
SICI_SERIES_TERMS = 25      # 4**50 / 50! is 1e-35
SICI_ASYMPTOTIC_FROM = 1e9  # Si = pi/2 - cos(x)/x, Ci = sin(x)/x, to 1/x**2 relative
SICI_FRACTION_TERMS = 80    # at x = 4 the continued fraction has converged to 1e-17 after about 60
FRESNEL_SERIES_UNTIL = 1.6  # power series in u = pi x**2 / 2 below, erfc's continued fraction above
FRESNEL_SERIES_TERMS = 20
FRESNEL_FRACTION_TERMS = 60
WOFZ_FRACTION_FROM = 8.0    # |z| from which Laplace's continued fraction converges to 1e-16 in WOFZ_FRACTION_TERMS
WOFZ_FRACTION_TERMS = 60
WOFZ_TERMS = 64             # of Weideman's rational approximation (1994) inside that disk
OWENS_T_NODES = 40          # Gauss-Legendre nodes on [0, min(a, OWENS_T_CUTOFF / h)]
OWENS_T_CUTOFF = 9.5        # exp(-9.5**2 / 2) is 2e-20: the integrand is negligible beyond


def _float64(*args):
    """The arguments in float64 and the dtype to round results to."""
    dtype = tnp.result_type(*args)
    return [a.astype(np.float64) if hasattr(a, "astype") else np.float64(a) for a in args], dtype


def _dawsn64(x):
    ax = tnp.abs(x)
    near = tnp.where(ax <= DAWSON_SERIES_UNTIL, ax, 1.0)
    x2 = near * near

    def term(k, carry):
        total, power = carry
        k = k.astype(np.float64)
        power = power * x2 / k
        return total + power / (2 * k + 1), power

    series = tnp.exp(-x2) * lax.fori_loop(1, DAWSON_SERIES_TERMS, term, (near, near))[0]
    far = tnp.where(ax > DAWSON_SERIES_UNTIL, ax, 2 * DAWSON_SERIES_UNTIL)
    inv = 1.0 / (2 * far * far)

    def asymptotic(k, carry):
        total, t = carry
        t = t * (2 * k.astype(np.float64) - 1) * inv
        return total + t, t

    tail = lax.fori_loop(1, DAWSON_ASYMPTOTIC_TERMS, asymptotic, (tnp.ones_like(x), tnp.ones_like(x)))[0]
    value = tnp.where(ax <= DAWSON_SERIES_UNTIL, series, tail / (2 * far))
    return tnp.where(tnp.isnan(x), x, tnp.copysign(tnp.where(ax == np.inf, 0.0, value), x))


@custom_jvp
def dawsn(x):
    """Dawson's integral exp(-x**2) * integral from 0 to x of exp(t**2)."""
    (x,), dtype = _float64(*real_args("dawsn", x))
    return _dawsn64(x).astype(dtype)


@dawsn.defjvp
def _dawsn_jvp(primals, tangents):
    (x,), (t,) = real_args("dawsn", *primals), tangents
    out = dawsn(x)
    return out, (1 - 2 * x * out) * t


def _sici64(x):
    """Si(|x|) and Ci(|x|) in float64."""
    ax = tnp.abs(x)
    near = tnp.where(ax <= SICI_SERIES_UNTIL, ax, 1.0)

    def term(k, carry):
        si, ci, p = carry
        k = k.astype(np.float64)
        p = -p * near / (2 * k)              # (-1)**k x**(2k) / (2k)!
        ci = ci + p / (2 * k)
        p = p * near / (2 * k + 1)           # (-1)**k x**(2k+1) / (2k+1)!
        return si + p / (2 * k + 1), ci, p

    si_near, ci_near, _ = lax.fori_loop(1, SICI_SERIES_TERMS, term, (near, tnp.zeros_like(x), near))
    ci_near = ci_near + np.euler_gamma + tnp.log(near)
    far = tnp.where(ax > SICI_SERIES_UNTIL, ax, 2 * SICI_SERIES_UNTIL)
    h = _lentz(lambda i: -i * i, 2.0, lax.complex(tnp.ones_like(far), far), SICI_FRACTION_TERMS)
    h = h * lax.complex(tnp.cos(far), -tnp.sin(far))         # E1(ix) = -Ci(x) + i (Si(x) - pi/2)
    si = tnp.where(ax <= SICI_SERIES_UNTIL, si_near, np.pi / 2 + tnp.imag(h))
    ci = tnp.where(ax <= SICI_SERIES_UNTIL, ci_near, -tnp.real(h))
    huge = tnp.where(ax > SICI_ASYMPTOTIC_FROM, ax, 1.0)     # the fraction's complex division overflows there
    si = tnp.where(ax > SICI_ASYMPTOTIC_FROM, np.pi / 2 - tnp.cos(huge) / huge, si)
    ci = tnp.where(ax > SICI_ASYMPTOTIC_FROM, tnp.sin(huge) / huge, ci)
    si = tnp.where(ax == np.inf, np.pi / 2, tnp.where(ax == 0, 0.0, si))
    ci = tnp.where(ax == np.inf, 0.0, tnp.where(ax == 0, -np.inf, ci))
    return tnp.where(tnp.isnan(x), x, si), tnp.where(tnp.isnan(x), x, ci)


def _lentz(a_of, b_step, b, terms):
    """The continued fraction 1 / (b + a_1 / (b + b_step + a_2 / (b + 2 b_step + ...))) by the modified Lentz
    method (Numerical Recipes 5.2), a_i = a_of(i), complex b; terms steps of a fixed loop."""
    tiny = 1e-300
    d = 1.0 / b
    state = (b, 1.0 / tiny + 0 * b, d, d)

    def step(i, state):
        b, c, d, h = state
        a = a_of(i.astype(np.float64))
        b = b + b_step
        d = 1.0 / (a * d + b)
        c = b + a / c
        return b, c, d, h * (c * d)

    return lax.fori_loop(1, terms, step, state)[3]


@custom_jvp
def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)); Ci of a negative x is Ci(|x|), the real part of its principal
    value (NaN at -inf), as in JAX and SciPy."""
    (x,), dtype = _float64(*real_args("sici", x))
    si, ci = _sici64(x)
    si = tnp.where(tnp.signbit(x), -si, si)
    ci = tnp.where(x == -np.inf, np.nan, ci)
    return si.astype(dtype), ci.astype(dtype)


@sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (t,) = real_args("sici", *primals), tangents
    return sici(x), (tnp.sinc(x / np.pi) * t, tnp.cos(x) / x * t)


def _sin_cos_half_pi_square(x):
    """sin(pi x**2 / 2) and cos(pi x**2 / 2) for x >= 0 in float64, reducing x**2 modulo 4 exactly (Dekker's
    split of x makes x**2 a sum of exact products), so that they stay accurate for large x."""
    t = 134217729.0 * x
    hi = t - (t - x)
    lo = x - hi
    r = tnp.fmod(tnp.fmod(hi * hi, 4.0) + tnp.fmod(2 * hi * lo, 4.0) + tnp.fmod(lo * lo, 4.0), 4.0)
    r = tnp.where(x < 2.0 ** 60, tnp.where(r < 0, r + 4.0, r), 0.0)    # (lo < 0 gives negative remainders; a
    # larger x is even, and x**2 a multiple of 4)
    quadrant = tnp.round(r)
    f = (r - quadrant) * (np.pi / 2)        # in [-pi/4, pi/4]
    s, c = tnp.sin(f), tnp.cos(f)
    q = tnp.fmod(quadrant, 4.0)
    sin = tnp.where(q == 0, s, tnp.where(q == 1, c, tnp.where(q == 2, -s, -c)))
    cos = tnp.where(q == 0, c, tnp.where(q == 1, -s, tnp.where(q == 2, -c, s)))
    return sin, cos


def _fresnel64(x):
    ax = tnp.abs(x)
    near = tnp.where(ax <= FRESNEL_SERIES_UNTIL, ax, 1.0)
    u = np.pi / 2 * near * near

    def term(k, carry):
        s, c, p = carry
        k = k.astype(np.float64)
        p = -p * u / (2 * k)                 # (-1)**k u**(2k) / (2k)!
        c = c + p / (4 * k + 1)
        p = p * u / (2 * k + 1)
        return s + p / (4 * k + 3), c, p

    s_near, c_near, _ = lax.fori_loop(1, FRESNEL_SERIES_TERMS, term, (u / 3, tnp.ones_like(x), u))
    far = tnp.where(ax > FRESNEL_SERIES_UNTIL, ax, 2 * FRESNEL_SERIES_UNTIL)
    # erfc's continued fraction (Numerical Recipes 6.9): C + iS = (1 + i)/2 (1 - exp(i pi x**2 / 2) h (1 - i) x)
    h = _lentz(lambda i: -(2 * i - 1) * (2 * i), 4.0, lax.complex(tnp.ones_like(far), -np.pi * far * far),
               FRESNEL_FRACTION_TERMS)
    sin, cos = _sin_cos_half_pi_square(far)
    w = lax.complex(cos, sin) * h * lax.complex(far, -far)
    c_far = 0.5 * (1 - tnp.real(w)) + 0.5 * tnp.imag(w)
    s_far = 0.5 * (1 - tnp.real(w)) - 0.5 * tnp.imag(w)
    s = tnp.where(ax <= FRESNEL_SERIES_UNTIL, s_near * near, s_far)
    c = tnp.where(ax <= FRESNEL_SERIES_UNTIL, c_near * near, c_far)
    s = tnp.where(ax == np.inf, 0.5, s)
    c = tnp.where(ax == np.inf, 0.5, c)
    s, c = tnp.where(x < 0, -s, s), tnp.where(x < 0, -c, c)         # +0 at -0, as JAX and SciPy
    return tnp.where(tnp.isnan(x), x, s), tnp.where(tnp.isnan(x), x, c)


@custom_jvp
def fresnel(x):
    """The Fresnel integrals (S(x), C(x)) of sin and cos(pi t**2 / 2) from 0 to x; accurate for every x (the
    argument pi x**2 / 2 is reduced exactly), not only on [-10, 10] as JAX's."""
    (x,), dtype = _float64(*real_args("fresnel", x))
    s, c = _fresnel64(x)
    return s.astype(dtype), c.astype(dtype)


@fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (t,) = real_args("fresnel", *primals), tangents
    sin, cos = _sin_cos_half_pi_square(tnp.abs(x.astype(np.float64)))
    return fresnel(x), (sin.astype(x.dtype) * t, cos.astype(x.dtype) * t)


def _weideman_coefficients(n):
    """Weideman's (1994) coefficients: the Fourier coefficients of exp(-t**2) (L**2 + t**2) in theta, t = L
    tan(theta / 2), computed here by an FFT; highest degree first, for polyval."""
    m = 2 * n
    length = np.sqrt(n / np.sqrt(2))
    theta = np.arange(-m + 1, m) * np.pi / m
    t = length * np.tan(theta / 2)
    f = np.concatenate([[0.0], np.exp(-t * t) * (length ** 2 + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return length, a[1:n + 1][::-1].copy()


WOFZ_L, WOFZ_COEFFICIENTS = _weideman_coefficients(WOFZ_TERMS)


def _wofz_upper(z):
    """w(z) for Im z >= 0 (complex128): the continued fraction far out, Weideman's approximation inside."""
    big = tnp.abs(z) >= WOFZ_FRACTION_FROM
    far = tnp.where(big, z, 2j * WOFZ_FRACTION_FROM)

    def step(i, t):
        n = (WOFZ_FRACTION_TERMS - 1 - i).astype(np.float64)
        return far - (n / 2) / t

    t = lax.fori_loop(0, WOFZ_FRACTION_TERMS - 1, step, far)
    fraction = 1j / np.sqrt(np.pi) / t
    near = tnp.where(big, 0j, z)
    iz = lax.complex(-tnp.imag(near), tnp.real(near))
    denominator = WOFZ_L - iz
    p = tnp.polyval(WOFZ_COEFFICIENTS.astype(np.complex128), (WOFZ_L + iz) / denominator)
    rational = 2 * p / (denominator * denominator) + (1 / np.sqrt(np.pi)) / denominator
    return tnp.where(big, fraction, rational)


def _wofz128(z):
    x, y = tnp.real(z), tnp.imag(z)
    upper = y >= 0
    zu = tnp.where(upper, z, -z)
    zu = tnp.where(tnp.isfinite(zu), zu, 1j)
    wu = _wofz_upper(zu)
    zz = -z * z                               # exp(-z**2) by parts: overflow gives +-inf, not inf * 0j = NaN
    e = 2 * tnp.exp(tnp.real(zz))
    w = tnp.where(upper, wu, lax.complex(e * tnp.cos(tnp.imag(zz)), e * tnp.sin(tnp.imag(zz))) - wu)
    finite_x = tnp.where(tnp.isfinite(x), x, 0.0)
    on_real = lax.complex(tnp.exp(-finite_x * finite_x), 2 / np.sqrt(np.pi) * _dawsn64(finite_x))
    on_imaginary = bind(sp.erfcx_p, tnp.where(tnp.isnan(y), 0.0, y))
    w = tnp.where(y == 0, tnp.where(tnp.isinf(x), 0j, on_real), w)
    w = tnp.where((x == 0) & (y != 0), lax.complex(on_imaginary, tnp.zeros_like(y)), w)
    w = tnp.where(tnp.isinf(x) & (y >= 0) & ~tnp.isnan(y), 0j, w)
    return tnp.where(tnp.isnan(x) | tnp.isnan(y), np.nan + 0j, w)


@custom_jvp
def wofz(z):
    """The Faddeeva function w(z) = exp(-z**2) erfc(-iz); real arguments are promoted to complex (as JAX's). Exact
    on the axes (exp(-x**2) + 2i dawsn(x) / sqrt(pi) on the real one, erfcx(y) on the imaginary one)."""
    (z,) = promote(z, to_float="float64")
    single = np.dtype(tnp.result_type(z)).itemsize <= (8 if np.dtype(tnp.result_type(z)).kind == "c" else 4)
    dtype = np.complex64 if single else np.complex128
    return _wofz128(z.astype(np.complex128)).astype(dtype)


@wofz.defjvp
def _wofz_jvp(primals, tangents):
    (z,), (t,) = primals, tangents
    w = wofz(z)
    return w, (-2 * z * w + 2j / np.sqrt(np.pi)).astype(w.dtype) * t


LEGENDRE_NODES, LEGENDRE_WEIGHTS = np.polynomial.legendre.leggauss(OWENS_T_NODES)


def _owens_t_reduced(h, a):
    """T(h, a) for h >= 0, 0 <= a <= 1: exp(-h**2 / 2) / (2 pi) times the integral from 0 to a of
    exp(-h**2 x**2 / 2) / (1 + x**2), by Gauss-Legendre on [0, min(a, OWENS_T_CUTOFF / h)], beyond which the
    integrand is negligible (so the factor exp(-h**2 / 2) keeps the result accurate far into the tail)."""
    b = tnp.minimum(a, OWENS_T_CUTOFF / tnp.where(h > 0, h, 1.0))
    b = tnp.where(h > 0, b, a)
    b = tnp.where(b > 0, b, 0.0)
    x = (b / 2)[..., None] * (1 + LEGENDRE_NODES)
    hx = tnp.where(b > 0, h, 0.0)[..., None] * x
    integrand = tnp.exp(-0.5 * hx * hx) / (1 + x * x)
    return tnp.exp(-0.5 * h * h) / (2 * np.pi) * (b / 2) * (integrand @ LEGENDRE_WEIGHTS)


def _owens_t64(h, a):
    h, sign, a = tnp.abs(h), tnp.sign(a), tnp.abs(a)
    inverted = a > 1
    ah = tnp.where(h == 0, 0.0, a * h)                  # T(0, inf) = 1/4
    reduced = _owens_t_reduced(tnp.where(inverted, ah, h), tnp.where(inverted, 1 / a, a))
    qh, qah = bind(sp.ndtr_p, -h), bind(sp.ndtr_p, -ah)
    t = tnp.where(inverted, 0.5 * qh + 0.5 * qah - qh * qah - reduced, reduced)
    return tnp.where(tnp.isnan(h) | tnp.isnan(a), np.nan, sign * t)


@custom_jvp
def owens_t(h, a):
    """Owen's T function, (1 / 2 pi) * integral from 0 to a of exp(-h**2 (1 + x**2) / 2) / (1 + x**2); |a| > 1 by
    T(h, a) = Q(h) / 2 + Q(ah) / 2 - Q(h) Q(ah) - T(ah, 1 / a) with Q the normal upper tail. float32 arguments give
    float32 (JAX 0.10 returns float64 there)."""
    (h, a), dtype = _float64(*real_args("owens_t", h, a))
    return _owens_t64(h, a).astype(dtype)


@owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    (h, a), (dh, da) = real_args("owens_t", *primals), tangents
    out = owens_t(h, a)
    d_h = -tnp.exp(-0.5 * h * h) * bind(sp.erf_p, a * h / np.sqrt(2)) / (2 * np.sqrt(2 * np.pi))
    d_a = tnp.exp(-0.5 * (1 + a * a) * h * h) / (2 * np.pi * (1 + a * a))
    return out, d_h * dh + d_a * da
