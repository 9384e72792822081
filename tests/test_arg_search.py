"""argmax and argmin of a long vector: one pass of the library's search (primitives/reductions.py, compiled once per
process by backend/kernel_library.py), against JAX for every dtype they order (floats of 16 to 64 bits, signed and
unsigned integers, bool): the first of equal extrema, the first NaN (and -NaN), -0.0 equal to 0.0, infinities,
the extremum in the first vector or after the last whole one, lengths that are and are not a vector's multiple,
int32 positions, a vector searched in chunks over the threads; shorter or batched operands keep the fused
reductions, bfloat16 NaNs included."""
import ml_dtypes
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.primitives.reductions import LONG, SPLIT

DTYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int8, np.uint8, np.int16, np.uint16, np.int32,
          np.uint32, np.int64, np.uint64, np.bool_]


def _vectors(dtype, n, rng):
    """Vectors of n values of dtype whose first extremum is somewhere telling."""
    raws = [rng.normal(size=n) * 50, np.arange(n) % 200, -(np.arange(n) % 120), np.full(n, 3.0),
            np.r_[np.zeros(n - 3), [1, 5, 5]], np.r_[[7, 7], np.zeros(n - 2)]]
    out = []
    for raw in raws:
        if dtype == np.bool_:
            out.append(raw > 0)
            continue
        if np.dtype(dtype).kind in "iu":
            info = np.iinfo(dtype)
            out.append(np.clip(np.round(raw), info.min, info.max).astype(dtype))
            continue
        x = raw.astype(dtype)
        nans, zeros, infinite, negative_nan = x.copy(), np.full(n, -0.0).astype(dtype), x.copy(), x.copy()
        nans[n // 2], nans[n - 5] = np.nan, np.nan
        zeros[7], zeros[n - 2] = 0.0, -0.0
        infinite[0], infinite[n - 1] = np.inf, -np.inf
        negative_nan[3] = -np.nan
        out += [x, nans, zeros, infinite, negative_nan]
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_long_vectors_match_jax(jax64, dtype):
    rng = np.random.default_rng(3)
    argmax, argmin = tj.jit(tnp.argmax), tj.jit(tnp.argmin)
    for n in (LONG, LONG + 1, 5003):
        for x in _vectors(dtype, n, rng):
            assert int(argmax(x)) == int(jax64.numpy.argmax(x)), (n, x)
            assert int(argmin(x)) == int(jax64.numpy.argmin(x)), (n, x)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.bool_])
def test_a_vector_searched_in_chunks_on_the_threads_answers_as_one_search(jax64, dtype):
    """2 * SPLIT + 3 values: a chunk per thread; the first chunk's answer unless a later chunk's is better (ties:
    the earlier), the first NaN whichever chunk holds it."""
    n = 2 * SPLIT + 3
    x = np.zeros(n, dtype)
    tie, later, nan = x.copy(), x.copy(), x.astype(np.float32)
    tie[[5, SPLIT + 9, n - 1]] = 1
    later[[5, n - 2]] = [1, 1 if dtype == np.bool_ else 2]
    nan[[7, n - 4]] = [np.inf, np.nan]
    vectors = [tie, later] + ([nan.astype(dtype)] if np.dtype(dtype).kind == "f" else [])
    for v in vectors:
        assert int(tj.jit(tnp.argmax)(v)) == int(jax64.numpy.argmax(v))
        assert int(tj.jit(tnp.argmin)(-v if dtype != np.bool_ else ~v)) == int(jax64.numpy.argmin(-v if dtype != np.bool_ else ~v))


def test_positions_of_lax_argmax_in_int32_and_the_search_in_the_ir():
    x = np.random.default_rng(0).random(3 * LONG).astype(np.float32)
    f = tj.jit(lambda v: (tj.lax.argmax(v, 0, np.int32), tj.lax.argmin(v, 0, np.int32)))
    got = f(x)
    assert [g.dtype for g in got] == [np.int32, np.int32]
    assert [int(g) for g in got] == [np.argmax(x), np.argmin(x)]
    text = f.lower(x).as_text()
    assert "argmax" in text and "argmin" in text and "reduce_max" not in text


def test_short_and_batched_operands_keep_the_reductions_and_find_bfloat16_nans(jax64):
    x = np.array([[1, 2, np.nan, 3, np.nan], [4, -0.0, 0.0, 4, 1]], dtype=ml_dtypes.bfloat16)
    for axis in (None, 0, 1):
        for mine, theirs in ((tnp.argmax, jax64.numpy.argmax), (tnp.argmin, jax64.numpy.argmin)):
            np.testing.assert_array_equal(tj.jit(lambda v, m=mine, a=axis: m(v, axis=a))(x), theirs(x, axis=axis))
    long = np.random.default_rng(1).random((2, LONG)).astype(np.float32)
    long[1, 100] = np.nan
    np.testing.assert_array_equal(tj.jit(tj.vmap(tnp.argmax))(long), jax64.vmap(jax64.numpy.argmax)(long))
