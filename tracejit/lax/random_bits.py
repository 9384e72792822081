"""jax.lax.rng_bit_generator and lax.RandomAlgorithm: XLA's stateless bit generators, bit for bit as JAX gives them
on the CPU (the generators are in primitives/rng_bit_generator.py)."""
import numpy as np

from ..core.avals import check_shape, shape_arg, uint32, uint64
from ..numpy._base import asarray, aval
from ..primitives.rng_bit_generator import BIT_DTYPES, RandomAlgorithm, rng_bits


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *, out_sharding=None):
    """(new key, bits of `shape` and `dtype`), as jax.lax.rng_bit_generator on the CPU: key is uint32[4] (or
    uint64[2]); dtype uint8, uint16, uint32 or uint64; algorithm a RandomAlgorithm (RNG_DEFAULT is Philox, as
    XLA's CPU backend). Bits and new key equal JAX's; under vmap the first key draws the whole batch, as in JAX.
    out_sharding is accepted (one device)."""
    shape = check_shape(shape_arg(shape, "rng_bit_generator: shape"), what="rng_bit_generator: shape")
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"rng_bit_generator: dtype must be an unsigned integer dtype, got {dtype!r}") from None
    if dtype not in BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype} (expected uint8, uint16, uint32 or uint64)")
    try:
        algorithm = RandomAlgorithm(algorithm)
    except ValueError:
        raise ValueError(f"rng_bit_generator: algorithm must be a lax.RandomAlgorithm, got {algorithm!r}") from None
    key = asarray(key)
    k = aval(key)
    if (k.dtype, k.shape) not in ((uint32, (4,)), (uint64, (2,))):
        raise TypeError(f"rng_bit_generator: key must be uint32[4] (or uint64[2]), got {k.str_short()}")
    return tuple(rng_bits(key, shape, dtype, algorithm))


__all__ = ["RandomAlgorithm", "rng_bit_generator"]
