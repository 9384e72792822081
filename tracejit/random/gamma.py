"""The gamma family: gamma and loggamma by Marsaglia and Tsang's rejection method ("A simple method for
generating gamma variables", 2000), each element drawn by its own key under vmap, as JAX draws them; beta,
dirichlet, chisquare, f, t, generalized_normal and ball from them. Rejection tests compare floats, so a
sample differs from JAX's only where an ulp of difference flips a test (rarely), or by an ulp or two.
Samples differentiate in the shape parameter as JAX's do (implicit reparameterisation, lax.random_gamma_grad).
"""
import functools
import math

import numpy as np

from .. import lax
from .. import numpy as tnp
from ..batching import vmap
from ..custom_derivatives import custom_jvp
from ..nn import softmax
from . import xla_math
from .continuous import (
    array,
    as_dtype,
    check_shape,
    draw_normal,
    draw_uniform,
    exponential,
    float_dtype,
    float_sampler,
    sample_shape,
)
from .discrete import rademacher
from .keys import canonical_shape, check_key, jitted_when_large, split, split_key

# Marsaglia and Tsang's method draws proposals until one is accepted. JAX's two nested loops (proposals; in each,
# normal draws until v > 0) split every key eagerly: `data, subkey = split(data)`, `key, x_key, u_key = split(key,
# 3)` per proposal and `key, subkey = split(key)` per normal draw, the first key of each used only if the loop runs
# again. Here one loop steps through the same draws (key i of a split is the hash of counter i, whatever the
# split's size, `split_key`): a step takes the next normal draw's key where v <= 0, else the next proposal's.
#
# Under vmap, three phases over all the examples (`_gamma_samples`): the first proposal, which always runs, as one
# fused loop that stores its keys and v tagged (`_draw`: whether it was accepted, and if not why); the masked loop,
# which runs only in the blocks of 32 examples that hold a failed first proposal (2 % of the examples at alpha = 2,
# in 44 % of the blocks); the sample from v and a last uniform. A scalar alpha stays one (d and c computed once).
# 1e6 float32 draws at alpha = 2 took 43 ms of CPU when the loop started from the first proposal's keys, x, v and
# u (the test in the loop's condition; each fused loop recomputing part of what they share); this 22. The loop
# from each example's own key (the first proposal's keys derived again there): 20, but its first call longer.
# Gathering the failed examples to the front first (a cumsum and scatters): 17, but first calls 0.3 s longer.


def _parameters(alpha):
    """Whether alpha is boosted (alpha < 1 is drawn as alpha + 1, the sample scaled by u ** (1 / alpha)); d and c
    of the boosted alpha."""
    boost_mask = alpha >= 1
    d = tnp.where(boost_mask, alpha, alpha + np.asarray(1, alpha.dtype)) - 1.0 / 3.0
    return boost_mask, d, (1.0 / 3.0) / tnp.sqrt(d)


def _draw(outer, inner, d, c):
    """v = 1 + x c of the normal x drawn with key `inner`: v where the proposal is accepted (by the uniform drawn
    with key `outer`), inf where it is rejected, v itself where v <= 0 (the normal draw failed)."""
    dtype = d.dtype
    zero, one = np.asarray(0, dtype), np.asarray(1, dtype)
    x = draw_normal(split_key(inner, 1), (), dtype)
    v = one + x * c
    u = draw_uniform(split_key(outer, 2), (), dtype)
    x, v3 = x * x, v * v * v
    test = (u >= one - 0.0331 * (x * x)) & (tnp.log(u) >= x * 0.5 + d * ((one - v3) + tnp.log(v3)))
    return tnp.where((v > zero) & test, np.asarray(np.inf, dtype), v)


def _failed(v):
    return (v <= 0) | (v == np.inf)


def _first_proposal(data, alpha):
    """The first proposal's keys and its tagged v."""
    _, d, c = _parameters(alpha)
    first = split_key((data[0], data[1]), 0)
    inner = split_key(first, 1)
    return first, inner, _draw(first, inner, d, c)


def _redraw(outer, inner, alpha, v):
    """The accepted proposal's v, from the first one's keys and tagged v."""
    _, d, c = _parameters(alpha)

    def select(pred, a, b):
        return tuple(tnp.where(pred, p, q) for p, q in zip(a, b))

    def again(state):
        """The next normal draw where this one failed (v <= 0), else the next proposal."""
        outer, inner, v = state
        failed = v <= 0
        outer = select(failed, outer, split_key(outer, 0))
        inner = select(failed, split_key(inner, 0), split_key(outer, 1))
        return outer, inner, _draw(outer, inner, d, c)

    return lax.while_loop(lambda state: _failed(state[2]), again, (outer, inner, v))[2]


def _sample(data, alpha, v, log_space):
    """The sample (its log with log_space) from the accepted v and the last uniform."""
    dtype = alpha.dtype
    zero, one = np.asarray(0, dtype), np.asarray(1, dtype)
    boost_mask, d, _ = _parameters(alpha)
    v = v * v * v
    subkey = split_key((data[0], data[1]), 1)
    if log_space:
        log_samples = xla_math.log1p(-draw_uniform(subkey, (), dtype))       # -exponential, as JAX
        log_boost = tnp.where(boost_mask | (log_samples == 0), zero, log_samples * (one / alpha))
        return tnp.log(d) + tnp.log(v) + log_boost
    samples = one - draw_uniform(subkey, (), dtype)
    boost = tnp.where(boost_mask, one, tnp.power(samples, one / alpha))
    return d * v * boost


@functools.partial(custom_jvp, nondiff_argnums=(2, 3))
def _gamma_samples(data, a, shape, log_space):
    """Samples of the given shape; a: of that shape, or a scalar (one alpha for all, its d and c computed once)."""
    keys = split(data, math.prod(shape))
    alpha, axis = (a, None) if tnp.ndim(a) == 0 else (tnp.reshape(a, (-1,)), 0)
    outer, inner, v = vmap(_first_proposal, in_axes=(0, axis))(keys, alpha)
    v = vmap(_redraw, in_axes=(0, 0, axis, 0))(outer, inner, alpha, v)
    samples = vmap(lambda k, alpha, v: _sample(k, alpha, v, log_space), in_axes=(0, axis, 0))(keys, alpha, v)
    return tnp.reshape(samples, shape)


@_gamma_samples.defjvp
def _gamma_samples_jvp(shape, log_space, primals, tangents):
    """JAX's implicit reparameterisation: a sample moves with its shape parameter at a fixed quantile,
    d x / d a = lax.random_gamma_grad(a, x) (of log x: that over x, x at least the smallest normal float)."""
    data, a = primals
    samples = _gamma_samples(data, a, shape, log_space)
    x = samples
    if log_space:
        x = tnp.exp(samples)
        x = tnp.where(x == 0, np.finfo(x.dtype).tiny, x)
    grads = lax.random_gamma_grad(tnp.broadcast_to(a, shape), x)
    return samples, tangents[1] * (grads / x if log_space else grads)


def _gamma(name, key, a, shape, dtype, log_space):
    data, _ = check_key(name, key)
    dtype = float_dtype(name, dtype)
    shape = sample_shape(name, shape, a)
    a = as_dtype(a, dtype)
    if not math.prod(shape):
        return tnp.zeros(shape, dtype)
    return _gamma_samples(data, a if tnp.ndim(a) == 0 else tnp.broadcast_to(a, shape), shape, log_space)


@jitted_when_large("shape", "dtype")
def gamma(key, a, shape=None, dtype=None):
    """Gamma(a) floats (scale 1)."""
    return _gamma("gamma", key, a, shape, dtype, False)


@jitted_when_large("shape", "dtype")
def loggamma(key, a, shape=None, dtype=None):
    """The log of Gamma(a) floats, computed in log space (accurate for tiny a, whose samples underflow)."""
    return _gamma("loggamma", key, a, shape, dtype, True)


@jitted_when_large("shape", "dtype")
def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) floats: Gamma(a) / (Gamma(a) + Gamma(b)), from log-gamma samples."""
    data, dtype, shape = float_sampler("beta", key, dtype, shape, a, b)
    key_a, key_b = split(data)
    log_a = loggamma(key_a, as_dtype(a, dtype), shape, dtype)
    log_b = loggamma(key_b, as_dtype(b, dtype), shape, dtype)
    log_max = tnp.maximum(log_a, log_b)
    scaled_a, scaled_b = tnp.exp(log_a - log_max), tnp.exp(log_b - log_max)
    return scaled_a / (scaled_a + scaled_b)


@jitted_when_large("shape", "dtype")
def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) vectors along the last axis: the softmax of log-gamma samples."""
    data, _ = check_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    alpha = array(alpha)
    if alpha.ndim < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {alpha.ndim}")
    batch = tuple(alpha.shape[:-1])
    shape = batch if shape is None else check_shape("dirichlet", canonical_shape("dirichlet", shape), batch)
    return softmax(loggamma(data, as_dtype(alpha, dtype), shape + tuple(alpha.shape[-1:]), dtype), -1)


@jitted_when_large("shape", "dtype")
def chisquare(key, df, shape=None, dtype=None):
    """Chi-square(df) floats: 2 Gamma(df / 2)."""
    data, dtype, shape = float_sampler("chisquare", key, dtype, shape, df)
    return tnp.exp(loggamma(data, as_dtype(df, dtype) / 2, shape, dtype)) * 2


@jitted_when_large("shape", "dtype")
def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(dfnum, dfden) floats: a ratio of chi-squares over their degrees of freedom."""
    data, dtype, shape = float_sampler("f", key, dtype, shape, dfnum, dfden)
    dfnum, dfden = as_dtype(dfnum, dtype), as_dtype(dfden, dtype)
    key_den, key_num = split(data)
    return (chisquare(key_num, dfnum, shape, dtype) / dfnum) / (chisquare(key_den, dfden, shape, dtype) / dfden)


@jitted_when_large("shape", "dtype")
def t(key, df, shape=None, dtype=None):
    """Student's t(df) floats: normal * sqrt(df / 2 / Gamma(df / 2))."""
    data, dtype, shape = float_sampler("t", key, dtype, shape, df)
    key_n, key_g = split(data)
    half_df = as_dtype(df, dtype) / 2
    return draw_normal(key_n, shape, dtype) * tnp.sqrt(half_df / gamma(key_g, half_df, shape, dtype))


@jitted_when_large("shape", "dtype")
def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal floats of power p (density ~ exp(-|x|**p)): a random sign times Gamma(1/p) ** (1/p)."""
    data, _ = check_key("generalized_normal", key)
    dtype = float_dtype("generalized_normal", dtype)
    shape = canonical_shape("generalized_normal", shape)
    key_g, key_r = split(data)
    g = gamma(key_g, 1 / p, shape, dtype)
    return rademacher(key_r, shape, dtype) * g ** (1 / p)


@jitted_when_large("d", "p", "shape", "dtype")
def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the d-dimensional unit p-norm ball."""
    data, _ = check_key("ball", key)
    dtype = float_dtype("ball", dtype)
    shape = canonical_shape("ball", shape)
    k1, k2 = split(data)
    g = generalized_normal(k1, p, (*shape, int(d)), dtype)
    e = exponential(k2, shape, dtype)
    return g / ((tnp.sum(tnp.abs(g) ** p, axis=-1) + e) ** (1 / p))[..., None]

