"""lax.rng_bit_generator against JAX on the CPU: bits and new keys equal, for the three algorithms, the four dtypes,
uint32[4] and uint64[2] keys, shapes with and without an even dimension (threefry's halving), scalars and empty
draws, counters that carry into the high word; eagerly, under jit, in a scan carrying the key, and under vmap
(JAX's rule: the first key draws for the whole batch)."""
import numpy as np
import pytest

import tracejit as tj

jax = pytest.importorskip("jax", reason="compared with JAX (pip install 'tracejit[test]')")
jax.config.update("jax_enable_x64", True)

R = np.random.default_rng(7)
KEYS = {"small": np.array([1, 2, 3, 4], np.uint32),
        "random": R.integers(0, 2 ** 32, 4, dtype=np.uint64).astype(np.uint32),
        "carry": np.array([5, 6, 0xFFFFFFFF, 0xFFFFFFFF], np.uint32),     # s1 + i wraps: Philox carries into s0
        "u64": R.integers(0, 2 ** 63, 2, dtype=np.uint64)}
SHAPES = [(), (1,), (2, 3), (5,), (3, 5), (7, 4, 3), (3, 3, 5), (0, 3)]
DTYPES = [np.uint8, np.uint16, np.uint32, np.uint64]


def same(jax_out, tj_out):
    assert len(jax_out) == len(tj_out) == 2
    for a, b in zip(jax_out, tj_out):
        a = np.asarray(a)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("algorithm", list(tj.lax.RandomAlgorithm))
@pytest.mark.parametrize("dtype", DTYPES)
def test_bits_and_new_key_match_jax(algorithm, dtype):
    for key in KEYS.values():
        for shape in SHAPES:
            expected = jax.lax.rng_bit_generator(key, shape, dtype=dtype, algorithm=jax.lax.RandomAlgorithm(algorithm))
            same(expected, tj.lax.rng_bit_generator(key, shape, dtype, algorithm))
    jitted = tj.jit(lambda k: tj.lax.rng_bit_generator(k, (3, 5), dtype=dtype, algorithm=algorithm))
    for key in KEYS.values():
        same(jax.lax.rng_bit_generator(key, (3, 5), dtype=dtype, algorithm=jax.lax.RandomAlgorithm(algorithm)),
             jitted(key))


def test_default_is_philox_and_names():
    assert [a.name for a in tj.lax.RandomAlgorithm] == [a.name for a in jax.lax.RandomAlgorithm]
    assert str(tj.lax.RandomAlgorithm.RNG_PHILOX) == str(jax.lax.RandomAlgorithm.RNG_PHILOX)
    key = KEYS["random"]
    same(tj.lax.rng_bit_generator(key, (4,), algorithm=tj.lax.RandomAlgorithm.RNG_PHILOX),
         tj.lax.rng_bit_generator(key, (4,)))


def _scan(M, rbg, algorithm):
    def step(k, _):
        return rbg(k, (2, 3), np.uint64, algorithm)
    return lambda k: M.lax.scan(step, k, None, length=4)


@pytest.mark.parametrize("algorithm", [1, 2])
def test_key_carried_through_scan(algorithm):
    same(jax.jit(_scan(jax, jax.lax.rng_bit_generator, algorithm))(KEYS["small"]),
         tj.jit(_scan(tj, tj.lax.rng_bit_generator, algorithm))(KEYS["small"]))


@pytest.mark.parametrize("algorithm", [0, 1])
def test_vmap_over_keys_as_jax(algorithm):
    keys = R.integers(0, 2 ** 32, (3, 4), dtype=np.uint64).astype(np.uint32)
    for M, transform in ((jax, jax.vmap), (tj, tj.vmap), (tj, lambda f, **kw: tj.jit(tj.vmap(f, **kw)))):
        f = transform(lambda k, M=M: M.lax.rng_bit_generator(k, (2, 3), np.uint32, algorithm), in_axes=1, out_axes=1)
        if M is jax:
            expected = f(keys.T)
        else:
            same(expected, f(keys.T))


def test_bad_arguments_raise():
    with pytest.raises(TypeError, match="key must be uint32\\[4\\]"):
        tj.lax.rng_bit_generator(np.zeros(2, np.uint32), (3,))
    with pytest.raises(TypeError, match="unsupported dtype float32"):
        tj.lax.rng_bit_generator(KEYS["small"], (3,), np.float32)
    with pytest.raises(ValueError, match="algorithm must be a lax.RandomAlgorithm"):
        tj.lax.rng_bit_generator(KEYS["small"], (3,), algorithm=7)
    with pytest.raises(TypeError, match="shape"):
        tj.lax.rng_bit_generator(KEYS["small"], (2.5,))
