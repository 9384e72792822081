"""numpy's BLAS found and called through ctypes; array data pointers; the parallel_for pool."""
import ctypes
import ctypes.util
import glob
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from tracejit.backend import blas, runtime


@pytest.fixture
def found():
    found = blas.find_blas()
    if found is None:
        pytest.skip("no CBLAS gemm found next to numpy: the backend uses its own loops")
    return found


def test_find_blas_record(found):
    assert blas.find_blas() is found
    assert found.int_bits in (32, 64) and blas.gemm_int_bits() == found.int_bits
    assert blas.gemm_address(np.float32) == found.sgemm_addr != 0
    assert blas.gemm_address("float64") == found.dgemm_addr != 0
    assert blas.gemm_address(np.int32) is None and blas.gemm_address(np.float16) is None


def test_numpy_blas_is_chosen_whatever_else_is_loaded(found):
    """With scipy's LP64 OpenBLAS mapped too (at an address that may come first in /proc/self/maps), the
    choice stays numpy's: every process must generate the same code, or the disk cache and shipped code
    (keyed by the module text) would not fit across processes."""
    pytest.importorskip("scipy")
    code = ("import scipy.linalg, json; from tracejit.backend import blas; b = blas.find_blas(); "
            "print(json.dumps([b.path, b.int_bits]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(proc.stdout) == [found.path, found.int_bits]
    assert os.path.dirname(found.path) == os.path.dirname(np.__file__) + ".libs" or not glob.glob(
        os.path.dirname(np.__file__) + ".libs/*blas*")


def test_probe_skips_other_libraries():
    assert blas._probe("/nonexistent/libopenblas.so") is None
    assert blas._probe(ctypes.util.find_library("c")) is None


SHAPES = [(1, 7, 5), (5, 7, 1), (1, 1, 1), (3, 1, 4), (1, 9, 1), (64, 33, 17), (100, 200, 50)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm_matches_matmul(found, dtype, m, k, n, trans_a, trans_b):
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(dtype)
    a, b = (a.T if trans_a else a), (b.T if trans_b else b)
    if trans_a and m > 1 and k > 1:
        assert blas._operand(a)[0] == blas.TRANS        # the flag, not a copy
    out = np.full((m, n), np.nan, dtype)
    assert blas.gemm(a, b, out) is out
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_views_and_copies(found, dtype):
    big = np.arange(24 * 30, dtype=dtype).reshape(24, 30) / 100
    a = big[2:12, 3:20]                     # leading dimension 30, no copy
    assert blas._operand(a) == (blas.NO_TRANS, 30)
    for b in (big[:17, ::-1][:, :8], big[:17, :16:2], big[:8, :17].T, big[3:20, 5:13]):
        out = np.empty((10, 8), dtype)
        np.testing.assert_allclose(blas.gemm(a, b, out), a @ b, rtol=1e-5)
    out = np.empty((20, 16), dtype)[::2, ::2]
    with pytest.raises(ValueError):
        blas.gemm(a, big[:17, :8], out)
    with pytest.raises(ValueError):
        blas.gemm(a, big[:16, :8], np.empty((10, 8), dtype))


def test_gemm_empty(found):
    a, b = np.ones((3, 0), np.float32), np.ones((0, 4), np.float32)
    np.testing.assert_array_equal(blas.gemm(a, b, np.full((3, 4), 7, np.float32)), np.zeros((3, 4)))
    assert blas.gemm(np.ones((0, 2)), np.ones((2, 5)), np.empty((0, 5))).shape == (0, 5)


def test_gemm_address_signature_alpha_beta(found):
    """The address takes the documented CBLAS arguments; C = alpha * A @ B^T + beta * C."""
    n_int = ctypes.c_int64 if found.int_bits == 64 else ctypes.c_int32
    i32, ptr, dbl = ctypes.c_int32, ctypes.c_void_p, ctypes.c_double
    dgemm = ctypes.CFUNCTYPE(None, i32, i32, i32, n_int, n_int, n_int, dbl, ptr, n_int, ptr, n_int,
                             dbl, ptr, n_int)(blas.gemm_address(np.float64))
    a, b, c = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(4, 3), np.ones((2, 4))
    expected = 2.0 * a @ b.T + 3.0 * c
    dgemm(blas.ROW_MAJOR, blas.NO_TRANS, blas.TRANS, 2, 4, 3, 2.0, a.ctypes.data, 3, b.ctypes.data, 3,
          3.0, c.ctypes.data, 4)
    np.testing.assert_allclose(c, expected)


def _sample_arrays():
    base = np.arange(60, dtype=np.float64).reshape(6, 10)

    class Sub(np.ndarray):
        pass

    return [base, base[1:, 2::3], base.T, base[::-1, ::-2], np.array(3.5, np.float32), base[2, 3, ...],
            np.empty(0), np.empty((4, 0), np.int32), np.broadcast_to(np.arange(3), (5, 3)),
            np.asfortranarray(base), base.view(Sub), np.ones(100_000, np.float32)]


def test_array_layout_verified():
    if sys.implementation.name == "cpython" and ctypes.sizeof(ctypes.c_void_p) == 8:
        assert runtime.ARRAY_LAYOUT_OK
        assert runtime.ARRAY_OFFSETS == (16, 24, 32, 40, 48, 56, 64)
    if not runtime.ARRAY_LAYOUT_OK:
        pytest.skip("numpy's array layout is not the one assumed; the backend falls back")
    off = runtime.ARRAY_OFFSETS
    for x in _sample_arrays():
        addr = id(x)
        assert ctypes.c_void_p.from_address(addr + off.data).value == x.ctypes.data
        assert ctypes.c_int.from_address(addr + off.nd).value == x.ndim
        for field, expected in ((off.dimensions, x.shape), (off.strides, x.strides)):
            vector = ctypes.c_ssize_t * x.ndim
            assert tuple(vector.from_address(ctypes.c_void_p.from_address(addr + field).value or 0)) == expected
        assert ctypes.c_void_p.from_address(addr + off.descr).value == id(x.dtype)
        flags = ctypes.c_int.from_address(addr + off.flags).value
        assert bool(flags & runtime.NPY_C_CONTIGUOUS) == x.flags.c_contiguous
        assert bool(flags & runtime.NPY_F_CONTIGUOUS) == x.flags.f_contiguous
        assert bool(flags & runtime.NPY_WRITEABLE) == x.flags.writeable
        assert bool(flags & runtime.NPY_ALIGNED) == x.flags.aligned
        assert bool(flags & runtime.NPY_OWNDATA) == x.flags.owndata


def test_data_pointer(monkeypatch):
    arrays = _sample_arrays()
    for x in arrays:
        assert runtime.data_pointer(x) == x.ctypes.data
    monkeypatch.setattr(runtime, "_WORDS", None)     # the fallback when the layout is not verified
    for x in arrays:
        assert runtime.data_pointer(x) == x.ctypes.data


@pytest.mark.parametrize("n_chunks", [0, 1, 2, 3, 17])
def test_parallel_for_runs_each_chunk_once(n_chunks):
    seen = []
    runtime.parallel_for(seen.append, n_chunks)
    assert sorted(seen) == list(range(n_chunks))


def _memset_chunks(buf, n_chunks, value):
    """parallel_for over libc memset (a ctypes call, so it releases the GIL): chunk i writes value + i."""
    step = buf.size // n_chunks
    base = buf.ctypes.data
    runtime.parallel_for(lambda i: ctypes.memset(base + i * step, value + i, step), n_chunks)
    return np.repeat(np.arange(value, value + n_chunks, dtype=np.uint8), step)


def test_parallel_for_native_chunks():
    buf = np.zeros(1 << 22, np.uint8)
    for n_chunks in (2, 4, 7):
        expected = _memset_chunks(buf[: (buf.size // n_chunks) * n_chunks], n_chunks, 10)
        np.testing.assert_array_equal(buf[: expected.size], expected)


@pytest.mark.skipif(runtime.NUM_THREADS < 2, reason="one CPU: parallel_for runs chunks in turn")
def test_parallel_for_runs_chunks_at_once():
    start = time.perf_counter()
    runtime.parallel_for(lambda i: time.sleep(0.1), 2)
    assert time.perf_counter() - start < 0.18


def test_parallel_for_errors_and_nesting():
    seen = []

    def fn(i):
        seen.append(i)
        if i == 1:
            raise ValueError("chunk 1")

    with pytest.raises(ValueError, match="chunk 1"):
        runtime.parallel_for(fn, 4)
    assert sorted(seen) == [0, 1, 2, 3]
    inner = []
    runtime.parallel_for(lambda i: runtime.parallel_for(lambda j: inner.append((i, j)), 3), 3)
    assert sorted(inner) == [(i, j) for i in range(3) for j in range(3)]


def test_parallel_for_concurrent_callers():
    failures = []

    def caller(k):
        buf = np.zeros(4096 * 3, np.uint8)
        for round_ in range(100):
            expected = _memset_chunks(buf, 3, 1 + (k * 7 + round_) % 200)
            if not np.array_equal(buf, expected):
                failures.append((k, round_))

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
