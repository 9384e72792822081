"""top_k's compiled selection as a library function compiled once per process (backend/kernel_library.py): values
and indices against JAX's lax.top_k for every dtype the kernel reads (1 to 8 bytes, floats, signed, unsigned, bool),
rows around the first pass's group count (GROUPS) and its vector width, k = 1 and k = n, ties, NaN and -NaN, -0.0,
rows in ascending order or with few keys above the lowest, batched rows; one function per (k, dtype) whatever the
size."""
import numpy as np
import pytest

import tracejit as tj
from tracejit import lax
from tracejit.backend import kernel_library
from tracejit.primitives.top_k import GROUPS, KERNEL_K

DTYPES = [np.float32, np.float64, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.bool_]


def _rows(dtype, n, rng):
    """Six rows of n values of dtype: random, ascending, descending, few distinct (ties), one value, and the lowest
    value but for two (fewer keys above the lowest than k); floats with NaN, -NaN, -0.0 and 0.0."""
    rows = np.stack([rng.normal(size=n) * 100, np.arange(n), -np.arange(n), np.round(rng.normal(size=n)),
                     np.full(n, 3.0), np.full(n, -1e300)])
    rows[5, n // 3], rows[5, -1] = 5.0, 7.0
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rows > 0
    if dtype.kind == "f":
        x = np.where(rows < -1e299, -np.inf, rows).astype(dtype)
        x[0, ::13], x[0, 5::17], x[3, 2::7], x[3, ::11] = np.nan, -np.nan, -0.0, 0.0
        return x
    info = np.iinfo(dtype)
    return np.clip(rows, info.min, info.max).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_library_selection_matches_jax(jax64, dtype):
    rng = np.random.default_rng(5)
    for n in (1, 7, GROUPS - 1, GROUPS, GROUPS + 1, 2 * GROUPS + 3, 1000):
        x = _rows(dtype, n, rng)
        ks = sorted({1, min(n, 3), min(n, KERNEL_K)})
        wants = jax64.jit(lambda v, ks=ks: [jax64.lax.top_k(v, k) for k in ks])(x)
        gots = tj.jit(lambda v, ks=ks: [lax.top_k(v, k) for k in ks])(x)
        for k, (got_values, got), (want_values, want) in zip(ks, gots, wants, strict=True):
            np.testing.assert_array_equal(got, want, err_msg=f"n={n} k={k}")
            np.testing.assert_array_equal(got_values, np.asarray(want_values), err_msg=f"n={n} k={k}")
            if np.dtype(dtype).kind == "f":
                np.testing.assert_array_equal(np.signbit(got_values), np.signbit(np.asarray(want_values)))


def test_rows_that_defeat_the_first_pass_still_select_exactly(jax64):
    """k - 1 of the GROUPS groups (positions i mod GROUPS) ascending above the others: every value of those groups
    gets in during the second pass (the slow case), batched under vmap."""
    x = np.random.default_rng(2).random((3, 40 * GROUPS)).astype(np.float32) * 0.1
    for j in range(9):
        x[:, j::GROUPS] = np.linspace(0.5, 1.0, 40, dtype=np.float32)
    got = tj.jit(tj.vmap(lambda v: lax.top_k(v, 10)))(x)
    want = jax64.vmap(lambda v: jax64.lax.top_k(v, 10))(x)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])


def test_one_library_function_per_k_and_dtype_for_every_size():
    """The code compiled for a signature calls the library's function by name; other sizes call the same one."""
    name = "tj_topk4_float64"
    for n in (100, 333):
        x = np.random.default_rng(n).normal(size=(2, n))
        f = tj.jit(lambda v: lax.top_k(v, 4)[1])
        np.testing.assert_array_equal(f(x), np.argsort(-x, axis=-1, kind="stable")[:, :4])
        text = f.lower(x).as_llvm()
        assert f"@{name}" in text and f"define void @{name}" not in text
        assert name in kernel_library.called(kernel_library._addresses)
