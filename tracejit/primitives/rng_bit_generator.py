"""rng_bit_generator: XLA's RngBitGenerator, bit for bit as JAX runs it on the CPU (jax.lax.rng_bit_generator).

The key is uint32[4] (JAX's usual form) or uint64[2]: two 64-bit words, s0 (of the first two uint32 words, the
first low) and s1. The new key is (s0, s1 + n), n the counters the draw used. RNG_DEFAULT is Philox on the CPU.
- THREE_FRY hashes the counters s1 + i under the key s0 with threefry2x32 (a counter's low word first). 64-bit
  bits: a counter per element in row-major order, the first output word low. 32-bit and narrower bits (the low bits
  of 32 ones): XLA halves the first even dimension (else the first largest, rounded up), and elements 2j and 2j+1
  along it are the two output words of counter j of that halved shape.
- PHILOX (Philox-4x32, 10 rounds) enciphers the 128-bit counters (s0 high, s1 low) + i under the key s0; each
  counter gives four 32-bit values (two 64-bit ones), in order.
The primitive holds its computation as a `call` IR (of other primitives; inlined when compiled), so that its
batching rule can be JAX's: keys batched along an axis draw bits of shape (batch, *shape) from the first key alone,
and only the first key advances (XLA's generator takes one key)."""
import enum
import math

import numpy as np

from ..core.ad_util import aval
from ..core.avals import ShapedArray, uint32, uint64
from ..core.batching import move_batch_axis
from ..core.ops import ops
from ..core.trace import Primitive, bind, eval_ir, trace_flat
from .base import zero_jvp
from .threefry import threefry2x32_p


class RandomAlgorithm(enum.IntEnum):
    """Which generator rng_bit_generator runs, as jax.lax.RandomAlgorithm (RNG_DEFAULT: the platform's, Philox on
    the CPU)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


PHILOX_MUL = (0xD2511F53, 0xCD9E8D57)       # the multipliers of words 0 and 2
PHILOX_WEYL = (0x9E3779B9, 0xBB67AE85)      # added to the two key words after each round
BIT_DTYPES = tuple(np.dtype(f"uint{b}") for b in (8, 16, 32, 64))


def _u64(x):
    return ops.convert_element_type(x, new_dtype=uint64)


def _u32(x):
    return ops.convert_element_type(x, new_dtype=uint32)


def _halves(x):
    """(low, high) uint32 words of uint64 x."""
    return _u32(x), _u32(ops.shift_right_logical(x, np.uint64(32)))


def _join(low, high):
    return ops.or_(_u64(low), ops.shift_left(_u64(high), np.uint64(32)))


def _counters(start, shape):
    """start + the row-major index of each element of `shape`, as uint64."""
    n = math.prod(shape)
    return ops.add(start, ops.reshape(ops.iota(dtype=uint64, shape=(n,), dimension=0), new_sizes=tuple(shape)))


def _interleave(parts, n, shape):
    """Element k of the result is parts[k % len(parts)][k // len(parts)], the first n of them, shaped `shape`."""
    rows = aval(parts[0]).shape[0]
    stacked = ops.concatenate(*[ops.reshape(p, new_sizes=(rows, 1)) for p in parts], dimension=1)
    flat = ops.reshape(stacked, new_sizes=(rows * len(parts),))
    return ops.reshape(ops.slice(flat, start_indices=(0,), limit_indices=(n,), strides=None), new_sizes=tuple(shape))


def _threefry_pair(key, counters):
    """threefry2x32 of the counters under the key: the two output words (x0, x1)."""
    pair = bind(threefry2x32_p, *_halves(key), *_halves(counters), output="pair")   # (x0 << 32) | x1
    low, high = _halves(pair)
    return high, low


def _split_dim(shape):
    even = [i for i, d in enumerate(shape) if d % 2 == 0]
    return even[0] if even else int(np.argmax(shape))


def _threefry(key, state, shape, bits):
    if bits == 64:
        x0, x1 = _threefry_pair(key, _counters(state, shape))
        return _join(x0, x1), math.prod(shape)
    if not shape:
        x0, _ = _threefry_pair(key, _counters(state, (1,)))
        return ops.reshape(x0, new_sizes=()), 1
    k = _split_dim(shape)
    half = shape[:k] + (-(-shape[k] // 2),) + shape[k + 1:]
    x0, x1 = _threefry_pair(key, _counters(state, half))
    column = half[:k + 1] + (1,) + half[k + 1:]
    both = ops.concatenate(ops.reshape(x0, new_sizes=column), ops.reshape(x1, new_sizes=column), dimension=k + 1)
    out = ops.reshape(both, new_sizes=half[:k] + (2 * half[k],) + half[k + 1:])
    if 2 * half[k] != shape[k]:
        out = ops.slice(out, start_indices=(0,) * len(shape), limit_indices=shape, strides=None)
    return out, math.prod(half)


def _philox_rounds(x, key):
    k0, k1 = key
    for _ in range(10):
        hi0, lo0 = _mul_halves(x[0], PHILOX_MUL[0])
        hi1, lo1 = _mul_halves(x[2], PHILOX_MUL[1])
        x = [ops.xor(ops.xor(hi1, x[1]), k0), lo1, ops.xor(ops.xor(hi0, x[3]), k1), lo0]
        k0, k1 = ops.add(k0, np.uint32(PHILOX_WEYL[0])), ops.add(k1, np.uint32(PHILOX_WEYL[1]))
    return x


def _mul_halves(x, multiplier):
    low, high = _halves(ops.mul(_u64(x), np.uint64(multiplier)))
    return high, low


def _philox(key, state, shape, bits):
    n = math.prod(shape)
    blocks = -(-n * (2 if bits == 64 else 1) // 4)
    low = _counters(state, (blocks,))
    high = ops.add(ops.broadcast_in_dim(key, shape=(blocks,), broadcast_dimensions=()),
                   _u64(ops.lt(low, state)))                # the carry out of the low word
    x = _philox_rounds([*_halves(low), *_halves(high)], _halves(key))
    parts = x if bits != 64 else [_join(x[0], x[1]), _join(x[2], x[3])]
    return _interleave(parts, n, shape), blocks


def _generate(key, *, shape, dtype, algorithm):
    """[new key, bits]: the computation the `call` param holds."""
    k = aval(key)
    w = [ops.reshape(ops.slice(key, start_indices=(i,), limit_indices=(i + 1,), strides=None), new_sizes=())
         for i in range(k.shape[0])]
    s0, s1 = (w[0], w[1]) if k.dtype == uint64 else (_join(w[0], w[1]), _join(w[2], w[3]))
    bits = np.dtype(dtype).itemsize * 8
    generate = _threefry if algorithm == RandomAlgorithm.RNG_THREE_FRY else _philox
    out, used = generate(s0, s1, tuple(shape), bits)
    if bits < 32:
        out = ops.convert_element_type(out, new_dtype=np.dtype(dtype))
    s1 = ops.add(s1, np.uint64(used))
    new = [s0, s1] if k.dtype == uint64 else [w[0], w[1], *_halves(s1)]
    return [ops.concatenate(*[ops.reshape(v, new_sizes=(1,)) for v in new], dimension=0), out]


def _shape(key, *, shape, dtype, algorithm, call):
    if (key.dtype, key.shape) not in ((uint32, (4,)), (uint64, (2,))):
        raise TypeError(f"rng_bit_generator: key must be uint32[4] or uint64[2], got {key.str_short()}")
    return [ShapedArray(key.shape, key.dtype), ShapedArray(shape, dtype)]


def _impl(key, *, call, **params):
    return eval_ir(call, key)


def _batch(args, dims, *, shape, dtype, algorithm, call):
    """JAX's rule: the first key draws the bits of the whole batch, and alone advances."""
    keys = move_batch_axis(args[0], dims[0], 0, aval(args[0]).shape[dims[0]])
    size = aval(keys).shape[0]
    first = ops.reshape(ops.slice(keys, start_indices=(0, 0), limit_indices=(1, aval(keys).shape[1]),
                                  strides=None),
                        new_sizes=aval(keys).shape[1:])
    new_key, bits = rng_bits(first, (size, *shape), dtype, algorithm)
    zero = np.asarray(0, np.int32)
    return [ops.dynamic_update_slice(keys, ops.reshape(new_key, new_sizes=(1, *aval(new_key).shape)), zero, zero),
            bits], [0, 0]


def rng_bits(key, shape, dtype, algorithm):
    """[new key, bits] (checked arguments: key uint32[4] or uint64[2], shape a tuple, dtype one of BIT_DTYPES)."""
    params = {"shape": tuple(shape), "dtype": np.dtype(dtype), "algorithm": RandomAlgorithm(algorithm)}
    call = trace_flat(lambda k: _generate(k, **params), [aval(key).strip_weak()], fun_name="rng_bit_generator")
    return bind(rng_bit_generator_p, key, call=call, **params)


rng_bit_generator_p = Primitive("rng_bit_generator", _shape, _impl, multiple_results=True, inline=True,
                                batch=_batch)
rng_bit_generator_p.set(jvp=zero_jvp(rng_bit_generator_p))
