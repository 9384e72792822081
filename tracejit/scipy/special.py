"""tracejit.scipy.special: jax.scipy.special's functions, on tracers and arrays.

Signatures, special values and derivatives are JAX's (values are SciPy's where JAX's differ: erf_inv(-0) = 0,
gammaln(-inf) = -inf, digamma(+-0) = -+inf, subnormal arguments are not flushed); integer arguments are promoted
to the default float. erf, erfc, erfinv, erfcx, ndtr, ndtri, log_ndtr, gammaln, digamma, gamma, i0e and i1e
are primitives with vectorized compiled kernels (tracejit.backend.specmath), gammainc, gammaincc and betainc
primitives with compiled scalar loops (specmath_incomplete); zeta and polygamma primitives run NumPy code, also
from compiled programs; the rest is written on these and tracejit.numpy.
"""
import fractions
import operator

import numpy as np

from .. import nn
from .. import numpy as tnp
from ..backend.specmath_incomplete import STIRLING
from ..core.trace import bind
from ..custom_derivatives import custom_jvp
from ..numpy._base import aval, broadcast_operands, promote
from ..primitives import special as sp
from ._args import half_floats_in_float32, real_args
from .special_expint import exp1, expi, expn
from .special_integrals import dawsn, fresnel, owens_t, sici, wofz
from .special_series import bessel_jn, hyp1f1, hyp2f1, sph_harm_y

__all__ = ["bernoulli", "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "dawsn", "digamma",
           "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi", "expit", "expn", "factorial", "fresnel", "gamma",
           "gammainc", "gammaincc", "gammaln", "gammasgn", "hyp1f1", "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div",
           "lgamma", "log_ndtr", "log_softmax", "loggamma", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
           "owens_t", "poch", "polygamma", "rel_entr", "rgamma", "sici", "sinc", "softmax", "spence", "sph_harm_y",
           "wofz", "xlog1py", "xlogy", "zeta"]


def _apply(prim, name, *args):
    return bind(prim, *real_args(name, *args))


def _function(prim, name, doc, *params):
    """The jax.scipy.special function `name`: its arguments promoted and broadcast, then the primitive."""
    def fn(*args):
        if len(args) != len(params):
            raise TypeError(f"{name}() takes {len(params)} arguments ({', '.join(params)}), got {len(args)}")
        return _apply(prim, name, *args)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


erf = _function(sp.erf_p, "erf", "The error function.", "x")
erfc = _function(sp.erfc_p, "erfc", "1 - erf(x), accurate for large x.", "x")
erfinv = _function(sp.erf_inv_p, "erfinv", "The inverse of erf.", "x")
erfcx = _function(sp.erfcx_p, "erfcx", "exp(x**2) erfc(x), without overflow or underflow.", "x")
ndtr = _function(sp.ndtr_p, "ndtr", "The standard normal CDF, accurate in both tails.", "x")
ndtri = _function(sp.ndtri_p, "ndtri", "The inverse of ndtr, accurate for tiny p and for p near 1.", "p")
gammaln = _function(sp.lgamma_p, "gammaln", "log |Gamma(x)|.", "x")
lgamma = gammaln
digamma = _function(sp.digamma_p, "digamma", "The logarithmic derivative of Gamma.", "x")
gamma = _function(sp.gamma_p, "gamma", "The gamma function.", "x")
betainc = _function(sp.regularized_incomplete_beta_p, "betainc", "The regularized incomplete beta function "
                    "I_x(a, b) (differentiable in x only, as in JAX).", "a", "b", "x")
gammainc = _function(sp.igamma_p, "gammainc", "The regularized lower incomplete gamma function P(a, x).", "a", "x")
gammaincc = _function(sp.igammac_p, "gammaincc", "The regularized upper incomplete gamma function Q(a, x) = "
                      "1 - P(a, x).", "a", "x")
i0e = _function(sp.bessel_i0e_p, "i0e", "exp(-|x|) I0(x), the scaled modified Bessel function of order 0.", "x")
i1e = _function(sp.bessel_i1e_p, "i1e", "exp(-|x|) I1(x), the scaled modified Bessel function of order 1.", "x")


@half_floats_in_float32
def log_ndtr(x, series_order=3):
    """log(ndtr(x)) for every x (series_order, JAX's asymptotic-series length, is checked but not needed: the
    kernel is accurate everywhere)."""
    if not isinstance(series_order, int) or isinstance(series_order, bool):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    return _apply(sp.log_ndtr_p, "log_ndtr", x)


def _negative_or_minus_zero(x):
    """x < 0, counting -0 as negative (atan2(-0, -1) is -pi)."""
    return (x < 0) | ((x == 0) & (tnp.arctan2(x, -1.0) < 0))


@half_floats_in_float32
def gammasgn(x):
    """The sign of Gamma(x): NaN at the poles (0 excepted: +-1 there) and at NaN."""
    (x,) = real_args("gammasgn", x)
    floor = tnp.floor(x)
    nan = ((x < 0) & (x == floor)) | tnp.isnan(x)
    minus = ((x < 0) & (tnp.remainder(floor, 2) != 0)) | ((x == 0) & _negative_or_minus_zero(x))
    return tnp.where(nan, np.nan, tnp.where(minus, -1.0, 1.0)).astype(aval(x).dtype)


@half_floats_in_float32
def loggamma(x):
    """log(Gamma(x)) for real x > 0; NaN elsewhere (the principal branch of the complex function is not real)."""
    (x,) = real_args("loggamma", x)
    return tnp.where(x > 0, gammaln(x), np.nan)


@half_floats_in_float32
def rgamma(x):
    """1/Gamma(x), 0 at the poles; x / Gamma(1 + x) for |x| < 1, so that tiny x (where Gamma overflows) give x."""
    (x,) = real_args("rgamma", x)
    pole = (x <= 0) & (x == tnp.floor(x))
    small = tnp.abs(x) < 1
    safe = tnp.where(pole, 1.0, x)
    return tnp.where(pole, tnp.where(x == 0, x, 0.0), tnp.where(small, safe / gamma(safe + 1), 1 / gamma(safe)))


@half_floats_in_float32
def factorial(n, exact=False):
    """Gamma(n + 1) for n >= 0, 0 for negative n."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = real_args("factorial", n)
    return tnp.where(n < 0, 0.0, gamma(n + 1))


@half_floats_in_float32
def comb(N, k, *, repetition=False):
    """The binomial coefficient C(N, k), exp of lgamma sums (0 off 0 <= k <= N); with repetition C(N + k - 1, k),
    1 at k = 0."""
    N, k = real_args("comb", N, k)
    if repetition:
        return tnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
    inside = (k <= N) & (N >= 0) & (k >= 0)
    N, k = tnp.where(inside, N, 0.0), tnp.where(inside, k, 0.0)
    return tnp.where(inside, tnp.exp(gammaln(N + 1) - gammaln(k + 1) - gammaln(N + 1 - k)), 0.0)


@half_floats_in_float32
def poch(z, m):
    """The rising factorial Gamma(z + m) / Gamma(z), 1 at m = 0."""
    z, m = real_args("poch", z, m)
    return tnp.where(m == 0, 1.0, gamma(z + m) / gamma(z))


@half_floats_in_float32
def boxcox(x, lmbda):
    """(x**lmbda - 1) / lmbda as expm1(lmbda log x) / lmbda (accurate for small lmbda), log x at lmbda = 0."""
    x, lmbda = real_args("boxcox", x, lmbda)
    return _boxcox(tnp.log(x), lmbda)


@half_floats_in_float32
def boxcox1p(x, lmbda):
    """boxcox(1 + x, lmbda), with log1p(x)."""
    x, lmbda = real_args("boxcox1p", x, lmbda)
    return _boxcox(tnp.log1p(x), lmbda)


def _boxcox(log_x, lmbda):
    zero = lmbda == 0
    safe = tnp.where(zero, 1.0, lmbda)
    return tnp.where(zero, log_x, tnp.expm1(safe * log_x) / safe)


def bernoulli(n):
    """The Bernoulli numbers B_0 ... B_n (B_1 = -1/2), float64: exact rationals (Akiyama and Tanigawa's algorithm)
    rounded once. n is a Python integer, as JAX requires."""
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    numbers, row = [], []
    for m in range(n + 1):
        row.append(fractions.Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        numbers.append(row[0])
    numbers[1:2] = [-numbers[1]] if n >= 1 else []     # (the algorithm gives B_1 = +1/2)
    return tnp.asarray(np.array([float(b) for b in numbers]))


@half_floats_in_float32
def betaln(a, b):
    """log |B(a, b)|. For max(a, b) >= 8 from Stirling's series, which keeps the large lgamma terms from
    cancelling: with a <= b, lgamma(b) - lgamma(a + b) = -a log b - (a + b - 1/2) log1p(a/b) + a + D(b) - D(a + b),
    D the Stirling correction."""
    a, b = real_args("betaln", a, b)
    lo, hi = tnp.minimum(a, b), tnp.maximum(a, b)
    direct = gammaln(lo) + (gammaln(hi) - gammaln(lo + hi))
    big = hi >= 8       # Stirling's series (the formula of specmath_incomplete's kernel, which betainc calls)
    safe = tnp.where(big, hi, 8.0)
    corr = _stirling_correction(safe) - _stirling_correction(lo + safe)
    tail = corr + lo - lo * tnp.log(safe) - (lo + safe - 0.5) * tnp.log1p(lo / safe)
    return tnp.where(big, gammaln(lo) + tail, direct)


def _stirling_correction(x):
    """lgamma(x) - ((x - 1/2) log x - x + log(2 pi)/2) for x >= 8, by its series."""
    w = 1 / (x * x)
    acc = 0 * w + STIRLING[-1]
    for c in reversed(STIRLING[:-1]):
        acc = acc * w + c
    return acc / x


@half_floats_in_float32
def beta(a, b):
    a, b = real_args("beta", a, b)
    return gammasgn(a) * gammasgn(b) * gammasgn(a + b) * tnp.exp(betaln(a, b))


@half_floats_in_float32
def zeta(x, q=None):
    """Hurwitz's zeta function sum_k (q + k)**-x."""
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta function.")
    return _apply(sp.zeta_p, "zeta", x, q)


@half_floats_in_float32
def polygamma(n, x):
    """The n-th derivative of digamma; n must be of an integer dtype (as in JAX)."""
    dtype = aval(tnp.asarray(n)).dtype
    if dtype.kind not in "iu":
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {dtype}.")
    return _apply(sp.polygamma_p, "polygamma", n, x)


@half_floats_in_float32
def multigammaln(a, d):
    """log of the multivariate gamma function of dimension d (a static integer)."""
    d = operator.index(d)
    (a,) = real_args("multigammaln", a)
    constant = float(0.25 * d * (d - 1) * np.log(np.pi))
    shifts = np.arange(d, dtype=aval(a).dtype) / 2
    return tnp.sum(gammaln(tnp.expand_dims(a, -1) - shifts), axis=-1) + constant


@half_floats_in_float32
def i0(x):
    (x,) = real_args("i0", x)
    return tnp.exp(tnp.abs(x)) * i0e(x)


@half_floats_in_float32
def i1(x):
    (x,) = real_args("i1", x)
    return tnp.exp(tnp.abs(x)) * i1e(x)


@half_floats_in_float32
def expit(x):
    """1 / (1 + exp(-x))."""
    return nn.sigmoid(real_args("expit", x)[0])


@custom_jvp
def _logit(x):
    return tnp.log(x / (1 - x))


@_logit.defjvp
def _logit_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _logit(x), t / (x * (1 - x))


@half_floats_in_float32
def logit(x):
    """log(x / (1 - x))."""
    return _logit(real_args("logit", x)[0])


def _x_times_log(log, argument):
    """x log(argument(y)) with log = log(argument(.)), 0 where x is 0 (unless y is NaN), and JAX's derivative:
    log(argument(y)) dx + x / argument(y) dy."""
    @custom_jvp
    def fn(x, y):
        return tnp.where((x != 0) | tnp.isnan(y), x * log(y), 0.0)

    @fn.defjvp
    def fn_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return fn(x, y), tx * log(y) + ty * x / argument(y)

    return fn


_xlogy = _x_times_log(tnp.log, lambda y: y)
_xlog1py = _x_times_log(tnp.log1p, lambda y: 1 + y)


@half_floats_in_float32
def xlogy(x, y):
    """x log(y), 0 where x is 0 (unless y is NaN)."""
    return _xlogy(*real_args("xlogy", x, y))


@half_floats_in_float32
def xlog1py(x, y):
    """x log(1 + y), 0 where x is 0 (unless y is NaN)."""
    return _xlog1py(*real_args("xlog1py", x, y))


@custom_jvp
def _xlogx(x):
    return _xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _xlogx(x), t * (tnp.log(x) + 1)


@half_floats_in_float32
def entr(x):
    """-x log(x), 0 at 0 and -inf for negative x."""
    (x,) = real_args("entr", x)
    return tnp.where(x < 0, -np.inf, 0.0 - _xlogx(x))     # entr(0) = +0, as SciPy


@half_floats_in_float32
def rel_entr(p, q):
    """p log(p / q) for p, q > 0; 0 where p = 0 <= q; inf elsewhere."""
    p, q = real_args("rel_entr", p, q)
    both = (p > 0) & (q > 0)
    safe_p, safe_q = tnp.where(both, p, 1.0), tnp.where(both, q, 1.0)
    value = _xlogx(safe_p) - _xlogy(safe_p, safe_q)
    return tnp.where(both, value, tnp.where((p == 0) & (q >= 0), tnp.zeros_like(p), np.inf))


@half_floats_in_float32
def kl_div(p, q):
    """p log(p / q) - p + q (rel_entr plus the terms that make it non-negative)."""
    p, q = real_args("kl_div", p, q)
    return rel_entr(p, q) - p + q


@half_floats_in_float32
def softmax(x, /, *, axis=None):
    return nn.softmax(x, axis=axis)


@half_floats_in_float32
def log_softmax(x, /, *, axis=None):
    return nn.log_softmax(x, axis=axis)


def _reduced_axes(ndim, axis):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted(operator.index(a) % ndim if ndim else operator.index(a) for a in axes))


@half_floats_in_float32
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over axis, stably (the gradient-stopped maximum subtracted first); with return_sign,
    (log|sum|, sign(sum)), else NaN where a weighted sum is negative. `where` masks elements out."""
    if b is None:
        (a,) = promote(a, to_float="float64")
    else:
        a, b = promote(a, b, to_float="float64")
        a, b = broadcast_operands(a, b, op="logsumexp")
        a = tnp.where(b != 0, a, -np.inf)
    if where is not None:
        a = tnp.where(where, a, -np.inf)
    axes = _reduced_axes(aval(a).ndim, axis)
    amax = tnp.max(a, axis=axes, keepdims=True, initial=-np.inf) if axes else a     # of nothing: -inf, as JAX
    amax = nn.stop_gradient(tnp.where(tnp.isfinite(amax), amax, 0.0))
    exp_a = tnp.exp(a - amax)
    if b is not None:
        exp_a = exp_a * b
    total = tnp.sum(exp_a, axis=axes, keepdims=True) if axes else exp_a
    sign = tnp.sign(total)
    out = tnp.log(tnp.abs(total)) + amax
    if not keepdims:
        out, sign = (tnp.squeeze(v, axis=axes) if axes else v for v in (out, sign))
    if return_sign:
        return out, sign
    if b is not None:
        out = tnp.where(sign < 0, np.nan, out)
    return out


sinc = half_floats_in_float32(tnp.sinc)     # NumPy's sinc (tracejit.numpy), 16-bit floats computed in float32


@half_floats_in_float32
def spence(x):
    """Spence's function (the dilogarithm of 1 - x), for real x >= 0 (NaN below, as SciPy)."""
    (x,) = real_args("spence", x)
    return _spence(x)


_SPENCE_A = (4.65128586073990045278e-5, 7.31589045238094711071e-3, 1.33847639578309018650e-1,
             8.79691311754530315341e-1, 2.71149851196553469920e0, 4.25697156008121755724e0,
             3.29771340985225106936e0, 1.00000000000000000126e0)
_SPENCE_B = (6.90990488912553276999e-4, 2.54043763932544379113e-2, 2.82974860602568089943e-1,
             1.41172597751831069617e0, 3.63800533345137075418e0, 5.03278880143316990390e0,
             3.54771340985225096217e0, 9.99999999999999998740e-1)


def _polyval(coefs, x):
    acc = tnp.zeros_like(x) + coefs[0]
    for c in coefs[1:]:
        acc = acc * x + c
    return acc


def _spence(x):
    """Cephes' rational approximation (as JAX's spence), with its argument reductions as selects (x = 1 goes
    through the formula, which gives 0 there and the right derivative, -1)."""
    inverted = x > 2
    y = tnp.where(inverted, 1 / tnp.where(inverted, x, 1.0), x)
    above, below = y > 1.5, y < 0.5
    w = tnp.where(above, 1 / tnp.where(above, y, 1.0) - 1, tnp.where(below, -y, y - 1))
    value = -w * _polyval(_SPENCE_A, w) / _polyval(_SPENCE_B, w)
    safe = tnp.where(below & (y > 0), y, 0.5)
    value = tnp.where(below, np.pi**2 / 6 - tnp.log(safe) * tnp.log1p(-safe) - value, value)
    log_y = tnp.log(tnp.where(y > 0, y, 1.0))
    value = tnp.where(inverted | above, -0.5 * log_y * log_y - value, value)
    return tnp.where(x < 0, np.nan, tnp.where(x == 0, np.pi**2 / 6, value))
