"""Special-function primitives (jax.lax's erf, erfc, erf_inv, lgamma, digamma, igamma ... and erfcx, ndtr, ndtri,
log_ndtr, gamma, bessel_i0e, bessel_i1e), elementwise table rows as in tracejit.primitives.elementwise, with JAX's
derivatives.

They compile to vectorized kernels (tracejit.backend.specmath; their NumPy impl runs the same kernel on arrays),
the incomplete gamma and beta functions to scalar loops (specmath_incomplete, likewise), zeta to the vector math
library's function (specmath_zeta); polygamma is zeta, lgamma and digamma under jit (a simplify rule). Derivatives JAX does not define raise as JAX does: betainc in a and b,
polygamma in m, igamma_grad_a in a.
"""
import numpy as np

from ..backend import specmath
from ..backend.specmath_zeta import BERNOULLI_2K
from ..core.ad_util import aval, full, scalar
from ..core.ops import ops
from . import scalar_lowering as low
from .elementwise_rules import FLOAT
from .elementwise_rules import elementwise as _elementwise

_TWO_OVER_SQRT_PI = 2 / np.sqrt(np.pi)
_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


def elementwise(*row, **rules_and_flags):
    """A table row (elementwise_rules.elementwise), flagged costly: the NumPy impls run specmath's kernels as
    array passes, 20-100x slower than the compiled loops that eager binds of large arrays then run."""
    return _elementwise(*row, costly=True, **rules_and_flags)


def _kernel(name):
    """The NumPy impl of a specmath kernel."""
    def impl(*args):
        return specmath.evaluate(name, *args)
    impl.__name__, impl.nin = name, specmath.arity(name)
    return impl


def _gauss(x, scale):
    """exp(-scale x**2)."""
    return ops.exp(ops.mul(scalar(-scale, x), ops.mul(x, x)))


def _unsupported(what):
    def partial(*args, **params):
        raise ValueError(what)
    return partial


def _i1e_dx(t, x, out):
    """JAX's: i0e(x) - out (sign(x) + 1/x), and 1/2 at |x| <= eps."""
    eps = scalar(np.finfo(aval(x).dtype).eps, x)
    tiny = ops.le(ops.abs(x), eps)
    safe = ops.select_n(tiny, x, eps)
    dy = ops.sub(ops.bessel_i0e(safe), ops.mul(out, ops.add(ops.sign(safe), ops.div(scalar(1, x), safe))))
    return ops.mul(t, ops.select_n(tiny, dy, scalar(0.5, dy)))


# ----------------------------------------------------------------------------------------- compiled kernels
# name, NumPy impl, dtype kinds, derivative (t, x, out) -> tangent, lowering


erf_p = elementwise("erf", _kernel("erf"), FLOAT, lambda t, x, out: ops.mul(t, ops.mul(
    scalar(_TWO_OVER_SQRT_PI, x), _gauss(x, 1))), low.math("erf"))
erfc_p = elementwise("erfc", _kernel("erfc"), FLOAT, lambda t, x, out: ops.mul(t, ops.mul(
    scalar(-_TWO_OVER_SQRT_PI, x), _gauss(x, 1))), low.math("erfc"))
erfcx_p = elementwise("erfcx", _kernel("erfcx"), FLOAT, lambda t, x, out: ops.mul(t, ops.sub(
    ops.mul(ops.mul(scalar(2, x), x), out), scalar(_TWO_OVER_SQRT_PI, x))), low.math("erfcx"))
erf_inv_p = elementwise("erf_inv", _kernel("erf_inv"), FLOAT, lambda t, x, out: ops.mul(t, ops.mul(
    scalar(np.sqrt(np.pi) / 2, x), ops.exp(ops.mul(out, out)))), low.math("erf_inv"))
ndtr_p = elementwise("ndtr", _kernel("ndtr"), FLOAT, lambda t, x, out: ops.mul(t, ops.mul(
    scalar(1 / np.sqrt(2 * np.pi), x), _gauss(x, 0.5))), low.math("ndtr"))
ndtri_p = elementwise("ndtri", _kernel("ndtri"), FLOAT, lambda t, x, out: ops.mul(t, ops.mul(
    scalar(np.sqrt(2 * np.pi), x), ops.exp(ops.mul(scalar(0.5, out), ops.mul(out, out))))), low.math("ndtri"))
log_ndtr_p = elementwise("log_ndtr", _kernel("log_ndtr"), FLOAT, lambda t, x, out: ops.mul(t, ops.exp(
    ops.sub(ops.sub(ops.mul(scalar(-0.5, x), ops.mul(x, x)), scalar(_LOG_SQRT_2PI, x)), out))), low.math("log_ndtr"))
lgamma_p = elementwise("lgamma", _kernel("lgamma"), FLOAT, lambda t, x, out: ops.mul(t, ops.digamma(x)),
                       low.math("lgamma"))
digamma_p = elementwise("digamma", _kernel("digamma"), FLOAT,
                        lambda t, x, out: ops.mul(t, ops.polygamma(scalar(1, x), x)), low.math("digamma"))
gamma_p = elementwise("gamma", _kernel("gamma"), FLOAT, lambda t, x, out: ops.mul(t, ops.mul(out, ops.digamma(x))),
                      low.math("gamma"))
bessel_i0e_p = elementwise("bessel_i0e", _kernel("i0e"), FLOAT, lambda t, x, out: ops.mul(t, ops.sub(
    ops.bessel_i1e(x), ops.mul(ops.sign(x), out))), low.math("i0e"))
bessel_i1e_p = elementwise("bessel_i1e", _kernel("i1e"), FLOAT, _i1e_dx, low.math("i1e"))

# ------------------------------------------------------------------------- compiled loops (specmath_incomplete)


def _igamma_dx(t, a, x, out):
    """d P(a, x) / dx = x**(a-1) e**-x / Gamma(a)."""
    return ops.mul(t, ops.exp(ops.sub(ops.sub(ops.mul(ops.sub(a, scalar(1, a)), ops.log(x)), x), ops.lgamma(a))))


def _igamma_grad_a_dx(t, a, x, out):
    """d^2 P / da dx: the x-derivative above times log(x) - digamma(a)."""
    return ops.mul(_igamma_dx(t, a, x, out), ops.sub(ops.log(x), ops.digamma(a)))


def _betainc_dx(t, a, b, x, out):
    lbeta = ops.sub(ops.add(ops.lgamma(a), ops.lgamma(b)), ops.lgamma(ops.add(a, b)))
    log_density = ops.add(ops.mul(ops.sub(b, scalar(1, b)), ops.log1p(ops.neg(x))), ops.mul(ops.sub(a, scalar(1, a)),
                                                                                      ops.log(x)))
    return ops.mul(t, ops.exp(ops.sub(log_density, lbeta)))


igamma_p = elementwise("igamma", _kernel("igamma"), FLOAT, (
    lambda t, a, x, out: ops.mul(t, ops.igamma_grad_a(a, x)), _igamma_dx), low.math("igamma"))
igammac_p = elementwise("igammac", _kernel("igammac"), FLOAT, (
    lambda t, a, x, out: ops.neg(ops.mul(t, ops.igamma_grad_a(a, x))),
    lambda t, a, x, out: ops.neg(_igamma_dx(t, a, x, out))), low.math("igammac"))
igamma_grad_a_p = elementwise("igamma_grad_a", _kernel("igamma_grad_a"), FLOAT, (
    _unsupported("igamma_grad_a: its derivative in a is not implemented (nor in JAX)"), _igamma_grad_a_dx),
    low.math("igamma_grad_a"))
regularized_incomplete_beta_p = elementwise("regularized_incomplete_beta", _kernel("betainc"), FLOAT, (
    _unsupported("Betainc gradient with respect to a and b not supported."),
    _unsupported("Betainc gradient with respect to a and b not supported."), _betainc_dx), low.math("betainc"))

# ------------------------------------------------------------------------------- zeta (specmath_zeta) and polygamma


_ZETA_TERMS, _ZETA_BERNOULLI = 12, 10


def _zeta_ds(s, q):
    """d zeta(s, q) / ds from the Euler-Maclaurin series of zeta (as JAX differentiates its series expansion):
    -sum_k log(q + k) (q + k)**-s over 12 terms, then the derivatives of the integral, the half term and 10
    Bernoulli terms at a = q + 12. Written with primitives, so it differentiates again."""
    def power(base, e):
        return ops.exp(ops.mul(e, ops.log(base)))

    total = None
    for k in range(_ZETA_TERMS):
        base = ops.add(q, scalar(k, q))
        term = ops.mul(ops.log(base), power(base, ops.neg(s)))
        total = term if total is None else ops.add(total, term)
    total = ops.neg(total)
    a = ops.add(q, scalar(_ZETA_TERMS, q))
    log_a = ops.log(a)
    s1 = ops.sub(s, scalar(1, s))
    integral = ops.div(power(a, ops.neg(s1)), s1)                         # a**(1-s) / (s-1)
    total = ops.sub(total, ops.add(ops.mul(integral, log_a), ops.div(integral, s1)))
    total = ops.sub(total, ops.mul(scalar(0.5, s), ops.mul(log_a, power(a, ops.neg(s)))))
    rising, rising_ds, inverse_factorial = ops.mul(s, scalar(1, s)), scalar(1, s), 1.0
    for j, b2j in enumerate(BERNOULLI_2K[:_ZETA_BERNOULLI], 1):
        inverse_factorial /= (2 * j - 1) * 2 * j
        if j > 1:       # rising = s (s+1) ... (s+2j-2) and its derivative
            for i in (2 * j - 3, 2 * j - 2):
                factor = ops.add(s, scalar(i, s))
                rising_ds = ops.add(ops.mul(rising_ds, factor), rising)
                rising = ops.mul(rising, factor)
        weight = ops.mul(scalar(b2j * inverse_factorial, s), power(a, ops.sub(scalar(1 - 2 * j, s), s)))
        total = ops.add(total, ops.mul(weight, ops.sub(rising_ds, ops.mul(log_a, rising))))
    return total


def _polygamma(m, x):
    """The NumPy impl: digamma for m = 0, (-1)**(m+1) m! zeta(m + 1, x) for integer m >= 1, NaN for other m."""
    m0, x0 = (np.asarray(v, np.float64) for v in np.broadcast_arrays(m, x))
    with np.errstate(all="ignore"):
        integer = (m0 >= 0) & (m0 == np.floor(m0))
        order = np.where(integer, m0, 1)
        sign = np.where(order % 2 == 0, -1.0, 1.0)
        value = sign * np.exp(specmath.evaluate("lgamma", order + 1)) * specmath.evaluate("zeta", order + 1, x0)
        value = np.where(m0 == 0, specmath.evaluate("digamma", x0), value)
    return np.where(integer, value, np.nan).astype(np.asarray(x).dtype)


def _polygamma_expanded(eqn, producer):
    """The simplify rule: under jit, polygamma is _polygamma's formula in primitives (zeta, lgamma, digamma), which
    compile."""
    def expanded(m, x):
        one = scalar(1, m)
        integer = ops.and_(ops.ge(m, scalar(0, m)), ops.eq(m, ops.floor(m)))
        order = ops.select_n(integer, one, m)
        odd = ops.ne(ops.floor(ops.mul(order, scalar(0.5, m))), ops.mul(order, scalar(0.5, m)))
        factorial = ops.exp(ops.lgamma(ops.add(order, one)))
        value = ops.mul(ops.select_n(odd, ops.neg(factorial), factorial), ops.zeta(ops.add(order, one), x))
        value = ops.select_n(ops.eq(m, scalar(0, m)), value, ops.digamma(x))
        return ops.select_n(integer, full(aval(value), np.nan), value)
    return expanded


zeta_p = elementwise("zeta", _kernel("zeta"), FLOAT, (
    lambda t, s, q, out: ops.mul(t, _zeta_ds(s, q)),
    lambda t, s, q, out: ops.mul(t, ops.neg(ops.mul(s, ops.zeta(ops.add(s, scalar(1, s)), q))))), low.math("zeta"))
polygamma_p = elementwise("polygamma", _polygamma, FLOAT, (
    _unsupported("polygamma gradient with respect to m is not supported"),
    lambda t, m, x, out: ops.mul(t, ops.polygamma(ops.add(m, scalar(1, m)), x))), None,
    simplify=_polygamma_expanded)
