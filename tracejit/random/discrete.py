"""Discrete draws: integers, booleans, indices and permutations, JAX's algorithms, so the values are JAX's
(randint, bernoulli, permutation and choice bit for bit; poisson and binomial, whose rejection tests go through
log and lgamma, almost always exactly). Integer results default to int64, JAX's `int` with x64."""
import math
from collections.abc import Sequence

import numpy as np

from .. import lax
from .. import numpy as tnp
from ..core.avals import broadcast_shapes, int64, is_float, normalize_axis
from ..numpy.indexing import take_clamped
from . import xla_math
from .continuous import array, check_shape, draw_gumbel, draw_uniform, float_dtype, maxwell, sample_shape
from .keys import UINT, canonical_shape, check_key, jitted_when_large, random_bits, split


def _int_dtype(name, dtype):
    dtype = int64 if dtype is None else np.dtype(dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"{name} only accepts integer dtypes, got {dtype}")
    return dtype


def _clipped(value, dtype):
    """An integer array converted to dtype, clipped to its range rather than wrapped."""
    info_in, info_out = np.iinfo(value.dtype), np.iinfo(dtype)
    low, high = max(info_in.min, info_out.min), min(info_in.max, info_out.max)
    return tnp.clip(value, value.dtype.type(low), value.dtype.type(high)).astype(dtype)


def _remainder(x, span):
    """x mod span, x itself where span is 0 (a span that wrapped around: the whole range), as XLA's rem."""
    whole = span == 0
    return tnp.where(whole, x, tnp.remainder(x, tnp.where(whole, span.dtype.type(1), span)))


@jitted_when_large("shape", "dtype")
def randint(key, shape, minval, maxval, dtype=None):
    """Integers in [minval, maxval): two draws of the dtype's width combined modulo the span (biased where the
    span is not a power of 2, by span / 2**bits at most: JAX's algorithm)."""
    data, _ = check_key("randint", key)
    dtype = _int_dtype("randint", dtype)
    shape = canonical_shape("randint", shape)
    info = np.iinfo(dtype)
    sampling = dtype
    if info.bits < 32:          # narrow integers are drawn in 32 bits, as JAX
        sampling = np.dtype("int32")
        minval = tnp.clip(array(minval).astype(sampling), int(info.min), int(info.max))
        maxval = tnp.clip(array(maxval).astype(sampling), int(info.min), int(info.max) + 1)
    return _randint(data, shape, minval, maxval, sampling).astype(dtype)


def _randint(data, shape, minval, maxval, dtype):
    minval, maxval = array(minval), array(maxval)
    sample_shape("randint", shape, minval, maxval)
    minval, maxval = (v if v.dtype.kind in "iu" else v.astype(int64) for v in (minval, maxval))
    beyond = maxval > _clipped(np.asarray(np.iinfo(dtype).max, dtype), maxval.dtype)
    minval, maxval = _clipped(minval, dtype), _clipped(maxval, dtype)
    width = np.iinfo(dtype).bits
    unsigned = UINT[width]
    k1, k2 = split(data)
    higher, lower = random_bits(k1, width, shape), random_bits(k2, width, shape)
    span = lax.convert_element_type(tnp.asarray(maxval - minval), unsigned)
    span = tnp.where(maxval <= minval, unsigned.type(1), span)
    span = tnp.where(beyond & (maxval > minval), span + unsigned.type(1), span)
    multiplier = _remainder(unsigned.type(2 ** (width // 2)), span)      # 2**width mod span
    multiplier = _remainder(multiplier * multiplier, span)
    offset = _remainder(_remainder(higher, span) * multiplier + _remainder(lower, span), span)
    return minval + lax.convert_element_type(tnp.asarray(offset), dtype)


@jitted_when_large("shape", "mode")
def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans, true with probability p: a uniform of p's dtype below p (mode 'high' adds a second uniform
    for the low bits, for tiny p)."""
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    data, _ = check_key("bernoulli", key)
    p = array(p)
    dtype = p.dtype
    if not is_float(dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    shape = sample_shape("bernoulli", shape, p)
    if mode == "low":
        return draw_uniform(data, shape, dtype) < p
    both = draw_uniform(data, (2, *shape), dtype)
    return both[1] * 2.0 ** -tnp.finfo(dtype).nmant < p - both[0]


@jitted_when_large("shape", "dtype")
def rademacher(key, shape=(), dtype=None):
    """-1 or 1 with equal probability."""
    data, _ = check_key("rademacher", key)
    dtype = int64 if dtype is None else np.dtype(dtype)
    return (2 * bernoulli(data, 0.5, canonical_shape("rademacher", shape)).astype(int64) - 1).astype(dtype)


@jitted_when_large("shape", "dtype")
def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Maxwell floats with a random sign, scaled and shifted."""
    data, _ = check_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    params = broadcast_shapes(tnp.shape(loc), tnp.shape(scale))
    shape = canonical_shape("double_sided_maxwell", shape) or params
    shape = shape + params
    maxwell_key, sign_key = split(data)
    return rademacher(sign_key, shape, dtype) * maxwell(maxwell_key, shape, dtype) * scale + loc


@jitted_when_large("shape", "dtype")
def geometric(key, p, shape=None, dtype=None):
    """The number of Bernoulli(p) trials up to the first success: floor(log u / log(1 - p)) + 1."""
    data, _ = check_key("geometric", key)
    dtype = np.dtype(int64 if dtype is None else dtype)
    if dtype.kind not in "iu":
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = sample_shape("geometric", shape, p)
    p = array(p)
    p = p if is_float(p.dtype) else p.astype(float)
    u = draw_uniform(data, shape, p.dtype)
    u = tnp.where(u == 0, u.dtype.type(1), u)
    ratio = tnp.log(u) / tnp.broadcast_to(xla_math.log1p(-p), shape)
    return (tnp.floor(ratio) + 1).astype(dtype)

# ------------------------------------------------------------------------------- permutations and choices


def _shuffled_positions(data, shape, axis):
    """The positions along axis that JAX's shuffle of an array of shape brings to each place: it sorts on random
    32-bit keys, repeated enough rounds (3 log n / log 2**32) that ties between keys do not bias the permutation.
    A round's order does not depend on the rounds before it (its keys belong to positions), so the rounds' stable
    argsorts are one argsort of their keys stacked, whose rows the compiled code sorts at once on the threads, and
    the orders are composed: 1e5 elements (2 rounds) called back to back took 1.3-1.4 ms instead of 1.7-2.1
    (NumPy's own shuffle 1.0-1.4). (A choice's first k of the last round as lax.top_k of its inverted keys, which
    sorts one row fewer, took longer on two cores: 1e5 keys' first 1000 in 1.06 ms against 0.81, as the two rows'
    sorts run at once.)"""
    rounds = math.ceil(3 * math.log(max(1, math.prod(shape))) / math.log(np.iinfo(np.uint32).max))
    if rounds == 0:          # (at most one element: none moves)
        return tnp.zeros(shape, int64)
    keys = []
    for _ in range(rounds):
        data, subkey = split(data)
        keys.append(random_bits(subkey, 32, tuple(shape)))
    orders = tnp.argsort(tnp.stack(keys), axis=axis + 1, kind="stable")
    index = orders[0]
    for order in orders[1:]:
        index = tnp.take_along_axis(index, order, axis=axis, mode="clip")
    return index


@jitted_when_large("shape")
def _permuted_range(data, shape):
    """arange(shape[0]) shuffled: the shuffled positions themselves (int64, as arange's), no gather of arange.
    Called eagerly it runs jitted (as JAX's does): 1e5 took 6-10 ms as NumPy passes of its operations."""
    return _shuffled_positions(data, shape, 0)


@jitted_when_large("axis")
def _shuffle(data, x, axis):
    """x reordered along axis by JAX's shuffle."""
    return tnp.take_along_axis(x, _shuffled_positions(data, x.shape, axis), axis=axis, mode="clip")


def permutation(key, x, axis=0, independent=False):
    """A random permutation of arange(x) (x an int) or of x's slices along axis (of each vector along axis
    separately with independent=True)."""
    data, _ = check_key("permutation", key)
    if not tnp.ndim(x):
        if tnp.result_type(x).kind not in "iu":
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _permuted_range(data, (int(x),))
    x = tnp.asarray(x)
    axis = normalize_axis(axis, x.ndim)
    if independent or x.ndim == 1:
        return _shuffle(data, x, axis)
    return take_clamped(x, _permuted_range(data, (x.shape[axis],)), axis=axis)


def _top_k_indices(x, k):
    """The indices of the k largest values along the last axis, largest first, ties by index (lax.top_k)."""
    return tnp.argsort(-x, axis=-1, kind="stable")[..., :k]


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples of a's slices along axis (of arange(a) for an int a), with or without replacement, uniform or
    with probabilities p (inverse cdf with replacement, the Gumbel top-k trick without)."""
    data, _ = check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    shape = canonical_shape("choice", shape)
    arr = array(a)
    if arr.ndim == 0:
        population = int(a)
    else:
        axis = normalize_axis(axis, arr.ndim)
        population = arr.shape[axis]
    draws = math.prod(shape)
    if draws == 0:
        return tnp.zeros(shape, dtype=arr.dtype)
    if population <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and draws > population:
        raise ValueError(f"Cannot take a larger sample (size {draws}) than population (size {population}) when "
                         "'replace=False'")
    if p is None and replace:
        ind = randint(data, shape, 0, population)
    elif p is None:
        ind = _permuted_range(data, (population,))[:draws]      # (what JAX's permutation puts first)
    else:
        p = array(p)
        p = p if is_float(p.dtype) else p.astype(float)
        if tuple(p.shape) != (population,):
            raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. p has shape "
                             f"{tuple(p.shape)} and a.shape[axis] is {population}.")
        if replace:
            cdf = tnp.cumsum(p)
            r = cdf[-1] * (1 - draw_uniform(data, shape, cdf.dtype))
            ind = tnp.searchsorted(cdf, r).astype(int64)
        else:
            g = draw_gumbel(data, (population,), p.dtype, mode) + tnp.log(p)
            ind = _top_k_indices(g, draws).astype(int64)
    result = ind if arr.ndim == 0 else take_clamped(arr, ind, axis=axis)
    return result.reshape(shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1:])


@jitted_when_large("axis", "shape", "replace", "mode")
def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Category indices drawn with probabilities softmax(logits) along axis: the argmax of logits plus Gumbel
    noise (the top k of one draw, without replacement)."""
    data, _ = check_key("categorical", key)
    logits = array(logits)
    axis = normalize_axis(axis, logits.ndim)
    batch_shape = tuple(logits.shape[:axis]) + tuple(logits.shape[axis + 1:])
    shape = batch_shape if shape is None else check_shape("categorical", canonical_shape("categorical", shape),
                                                          batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        logits_shape = list(shape[len(prefix):])
        logits_shape.insert(axis, logits.shape[axis])
        noise = draw_gumbel(data, (*prefix, *logits_shape), logits.dtype, mode)
        return tnp.argmax(noise + tnp.reshape(logits, (1,) * len(prefix) + tuple(logits.shape)),
                          axis=len(prefix) + axis)
    noisy = logits + draw_gumbel(data, tuple(logits.shape), logits.dtype, mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number of categories "
                         f"({logits.shape[axis]}).")
    indices = _top_k_indices(tnp.moveaxis(noisy, axis, -1), k).astype(np.int32)    # lax.top_k's index dtype
    return tnp.reshape(tnp.moveaxis(indices, -1, 0), shape)
