"""Counts: poisson, binomial and multinomial, JAX's algorithms (those of TensorFlow and NumPy): for small means
products of uniforms (Knuth) or sums of geometric waiting times, for large ones Hormann's transformed
rejection (PTRS for Poisson, BTRS for the binomial). Each is a while loop over the whole array that runs until
every element has its sample; both branches are drawn with the same key and the result selected per element,
as in JAX. The rejection tests go through log and lgamma (xla_math), so a sample differs from JAX's only where
an ulp of difference flips a test."""
import numpy as np

from .. import lax
from .. import numpy as tnp
from ..core.avals import float32, int64, is_float
from ..numpy.indexing import take_clamped
from . import xla_math
from .continuous import array, draw_uniform, float_dtype, sample_shape
from .keys import check_key, jitted_when_large, split


def _poisson_knuth(data, lam, shape, dtype):
    """k - 1 for the first k at which a running product of uniforms falls below exp(-lam)."""
    def body(carry):
        k, key, log_prod = carry
        key, subkey = split(key)
        k = tnp.where(log_prod > -lam, k + 1, k)
        return k, key, log_prod + tnp.log(draw_uniform(subkey, shape, float32))

    init = (tnp.zeros(shape, dtype), data, tnp.zeros(shape, float32))
    return (lax.while_loop(lambda carry: tnp.any(carry[2] > -lam), body, init)[0] - 1).astype(dtype)


def _poisson_rejection(data, lam, shape, dtype):
    """Hormann's PTRS ("The transformed rejection method for generating Poisson random variables", 1993)."""
    log_lam = tnp.log(lam)
    b = 0.931 + 2.53 * tnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def test(u, v, u_shifted):
        k = tnp.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = tnp.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - xla_math.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        return k, accept1 | (~reject & (s <= t))

    return _transformed_rejection(data, shape, lam.dtype, test).astype(dtype)


def _transformed_rejection(data, shape, dtype, test):
    """The loop PTRS and BTRS share: each round draws u - 0.5 and v for every element (from keys split off in
    JAX's order), test(u, v, 0.5 - |u|) gives the candidates and which are accepted; an element keeps the last
    candidate accepted, and the loop runs until every element has one."""
    def body(carry):
        k_out, accepted, key = carry
        key, key_u, key_v = split(key, 3)
        u = draw_uniform(key_u, shape, dtype) - 0.5
        k, accept = test(u, draw_uniform(key_v, shape, dtype), 0.5 - tnp.abs(u))
        return tnp.where(accept, k, k_out), accepted | accept, key

    init = (tnp.full(shape, -1, dtype), tnp.zeros(shape, bool), data)
    return lax.while_loop(lambda carry: tnp.any(~carry[1]), body, init)[0]


@jitted_when_large("shape", "dtype")
def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) integers (lam is taken in float32, as in JAX): Knuth's method below lam = 10, PTRS above."""
    data, _ = check_key("poisson", key)
    dtype = int64 if dtype is None else np.dtype(dtype)
    shape = tuple(np.shape(array(lam))) if shape is None else sample_shape("poisson", shape)
    lam = tnp.broadcast_to(array(lam), shape).astype(float32)
    use_knuth = tnp.isnan(lam) | (lam < 10)
    small = _poisson_knuth(data, tnp.where(use_knuth, lam, 0.0), shape, dtype)
    large = _poisson_rejection(data, tnp.where(use_knuth, 1e5, lam), shape, dtype)
    return tnp.where(lam == 0, dtype.type(0), tnp.where(use_knuth, small, large))


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k):
    """log(k!) minus its Stirling approximation: tabulated up to 9, a series beyond."""
    clamped = tnp.clip(k, 0.0, 9.0)
    kp1sq = (clamped + 1) * (clamped + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (clamped + 1)
    table = np.asarray(_STIRLING_TAIL, k.dtype)
    return tnp.where(k <= 9, take_clamped(table, tnp.floor(clamped).astype(np.int32)), approx)


def _binomial_inversion(data, count, prob, shape):
    """The number of geometric waiting times that fit in count trials."""
    log1m_prob = xla_math.log1p(-prob)

    def body(carry):
        num_geom, geom_sum, key = carry
        subkey, key = split(key)
        num_geom = tnp.where(geom_sum <= count, num_geom + 1, num_geom)
        u = draw_uniform(subkey, shape, prob.dtype)
        return num_geom, geom_sum + tnp.ceil(tnp.log(u) / log1m_prob), key

    init = (tnp.zeros(shape, prob.dtype), tnp.zeros(shape, prob.dtype), data)
    return lax.while_loop(lambda carry: tnp.any(carry[1] <= count), body, init)[0] - 1


def _btrs(data, count, prob, shape):
    """Hormann's BTRS ("The generation of binomial random variates", 1993)."""
    stddev = tnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = tnp.floor((count + 1) * prob)

    def test(u, v, us):
        accept1 = (us >= 0.07) & (v <= v_r)
        k = tnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = tnp.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * tnp.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * tnp.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * tnp.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m) - _stirling_tail(k) - _stirling_tail(count - k))
        return k, accept1 | (~reject & (v <= bound))

    with np.errstate(divide="ignore", invalid="ignore"):    # eager NumPy: the logs of rejected candidates are NaN
        return _transformed_rejection(data, shape, prob.dtype, test)


@jitted_when_large("shape", "dtype")
def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts as floats (JAX's dtype): inversion where n min(p, 1 - p) <= 10, BTRS above;
    NaN for invalid n or p, inf for infinite n."""
    data, _ = check_key("binomial", key)
    dtype = float_dtype("binomial", dtype)
    shape = sample_shape("binomial", shape, n, p)
    prob = array(p)
    prob = tnp.broadcast_to(prob if is_float(prob.dtype) else prob.astype(float), shape)
    count = tnp.broadcast_to(array(n).astype(prob.dtype), shape)
    below_half = prob < 0.5
    q = tnp.where(below_half, prob, 1.0 - prob)
    count_invalid = tnp.isnan(count) | (count < 0.0)
    count_inf = tnp.isinf(count)
    q_nan, q_negative = tnp.isnan(q), q < 0.0
    q = tnp.where(q_nan | q_negative, 0.01, q)
    use_inversion = count_invalid | (count * q <= 10.0)
    count = tnp.floor(count)
    samples = tnp.where(use_inversion,
                        _binomial_inversion(data, tnp.where(use_inversion, count, 0.0), q, shape),
                        _btrs(data, tnp.where(use_inversion, 1e4, count), tnp.where(use_inversion, 0.5, q), shape))
    samples = samples.astype(dtype)
    invalid = q_negative | q_nan | count_invalid
    samples = tnp.where(invalid, np.nan, tnp.where(count_inf, np.inf, samples))
    return tnp.where(below_half | count_invalid | q_nan | count_inf, samples, count.astype(dtype) - samples)


@jitted_when_large("shape", "dtype", "unroll")
def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial(n, p) counts along the last axis: a binomial per category, of what the earlier ones left
    (a scan over categories, one key each)."""
    data, _ = check_key("multinomial", key)
    common = tnp.result_type(n, p)
    common = common if is_float(common) else np.dtype(float)
    n, p = array(n).astype(common), array(p).astype(common)
    shape = tuple(p.shape) if shape is None else tuple(shape)
    n = tnp.broadcast_to(n, shape[:-1])
    p = tnp.moveaxis(tnp.broadcast_to(p, shape), -1, 0)
    remaining = lax.cumsum(p, axis=0, reverse=True)
    ratios = p / tnp.where(remaining == 0, 1, remaining)

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        drawn = binomial(k, remainder, tnp.clip(ratio, 0, 1), dtype=remainder.dtype)
        return remainder - drawn, drawn

    _, counts = lax.scan(step, n, (ratios, split(data, ratios.shape[0])))
    return tnp.moveaxis(counts, 0, -1).astype(float_dtype("multinomial", dtype))
