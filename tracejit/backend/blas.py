"""The BLAS that numpy itself uses, found once, for calling gemm from generated code.

`find_blas()` returns a `Blas` record, or None when no usable CBLAS is found (the backend then
falls back to its generated loops). It never raises and computes its answer once per process.

The gemm addresses point at a CBLAS function with this C signature (s: float, d: double):

    void cblas_sgemm(int layout, int transA, int transB, intN M, intN N, intN K,
                     float alpha, const float *A, intN lda, const float *B, intN ldb,
                     float beta, float *C, intN ldc)

computing C = alpha * op(A) @ op(B) + beta * C, with op(A) M x K, op(B) K x N and C M x N. The complex
ones (c: complex64, z: complex128; `cgemm_addr`, `zgemm_addr`, None when the library lacks them) take alpha
and beta by pointer (`const void *alpha`) and interleaved complex matrices, otherwise the same arguments.
The enums are C ints: layout RowMajor = 101 (ColMajor = 102), trans NoTrans = 111, Trans = 112.
intN is a 64-bit integer when `Blas.int_bits == 64` (ILP64, what numpy's wheels ship) and a
32-bit int when it is 32 (LP64). With RowMajor, lda is the distance in elements between rows of A
as stored (of A itself for NoTrans, of its transpose for Trans) and must be >= max(1, columns of
the stored matrix). `set_threads_addr`, when found, is `void openblas_set_num_threads(int)`.

Where it looks: the folders numpy's wheels bundle their libraries in, then the shared libraries
already mapped into this process whose names contain "blas" (numpy has loaded its BLAS by then; Linux
only), in address order. numpy's own comes first so that every process picks the same BLAS whatever
else it loaded (scipy's LP64 OpenBLAS was sometimes mapped below numpy's and chosen): the generated code,
and so the keys of the disk cache and of shipped code, depend on it (ILP64 and LP64 take different
integer types). Symbol names tried: `cblas_sgemm` with the prefix "scipy_" or none and the suffix
"64_", "_64" or none (numpy >= 2 wheels: `scipy_cblas_sgemm64_`; numpy 1.x: `cblas_sgemm64_`).
"""
import collections
import ctypes
import functools
import glob
import os
import sys
import threading

import numpy as np

ROW_MAJOR = 101
NO_TRANS = 111
TRANS = 112

Blas = collections.namedtuple("Blas", "path sgemm_addr dgemm_addr int_bits set_threads_addr cgemm_addr zgemm_addr "
                              "sgemv_addr dgemv_addr", defaults=(None, None, None, None))

_PREFIXES = ("scipy_", "")
_SUFFIXES = ("64_", "_64", "")


def _candidate_paths():
    paths = []
    numpy_dir = os.path.dirname(np.__file__)
    for folder in (numpy_dir + ".libs", os.path.join(numpy_dir, ".libs"), os.path.join(numpy_dir, ".dylibs")):
        paths += sorted(glob.glob(os.path.join(folder, "*blas*")))
    if sys.platform.startswith("linux"):
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(maxsplit=5)[-1].strip()
                if "blas" in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    return paths


def _address(lib, name):
    try:
        return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
    except AttributeError:
        return None


def _probe(path):
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    for prefix in _PREFIXES:
        for suffix in _SUFFIXES:
            sgemm = _address(lib, f"{prefix}cblas_sgemm{suffix}")
            dgemm = _address(lib, f"{prefix}cblas_dgemm{suffix}")
            if sgemm is None or dgemm is None:
                continue
            int_bits = 64 if suffix else 32
            config = _address(lib, f"{prefix}openblas_get_config{suffix}")
            if config is not None and b"USE64BITINT" in ctypes.CFUNCTYPE(ctypes.c_char_p)(config)():
                int_bits = 64
            set_threads = _address(lib, f"{prefix}openblas_set_num_threads{suffix}")
            cgemm, zgemm = (_address(lib, f"{prefix}cblas_{t}gemm{suffix}") for t in "cz")
            sgemv, dgemv = (_address(lib, f"{prefix}cblas_{t}gemv{suffix}") for t in "sd")
            return Blas(path, sgemm, dgemm, int_bits, set_threads, cgemm, zgemm, sgemv, dgemv)
    return None


@functools.cache
def _find():
    try:
        return next(filter(None, map(_probe, _candidate_paths())), None)
    except Exception:  # noqa: BLE001 -- never raise: without a BLAS the backend uses its own loops
        return None


_LOCK = threading.Lock()


def find_blas():
    """The `Blas` record of numpy's BLAS, or None. Computed once; never raises."""
    with _LOCK:
        return _find()


def gemm_address(dtype):
    """Address of cblas_sgemm (float32), cblas_dgemm (float64), cblas_cgemm (complex64) or cblas_zgemm
    (complex128), or None."""
    blas = find_blas()
    dtype = np.dtype(dtype)
    if blas is None or dtype.kind not in "fc":
        return None
    if dtype.kind == "c":
        return {8: blas.cgemm_addr, 16: blas.zgemm_addr}.get(dtype.itemsize)
    return {4: blas.sgemm_addr, 8: blas.dgemm_addr}.get(dtype.itemsize)


def gemv_address(dtype):
    """Address of cblas_sgemv (float32) or cblas_dgemv (float64), or None:
    `void cblas_sgemv(int layout, int trans, intN M, intN N, float alpha, const float *A, intN lda,
    const float *x, intN incx, float beta, float *y, intN incy)`, y = alpha * op(A) @ x + beta * y with A
    stored M x N."""
    blas = find_blas()
    dtype = np.dtype(dtype)
    if blas is None or dtype.kind != "f":
        return None
    return {4: blas.sgemv_addr, 8: blas.dgemv_addr}.get(dtype.itemsize)


def gemm_int_bits():
    """Width in bits of the BLAS integers (M, N, K, lda...): 64 (ILP64) or 32 (LP64); None without BLAS."""
    blas = find_blas()
    return None if blas is None else blas.int_bits


@functools.cache
def _gemm_function(dtype):
    addr = gemm_address(dtype)
    if addr is None:
        raise RuntimeError(f"no BLAS gemm for {dtype}")
    n = ctypes.c_int64 if gemm_int_bits() == 64 else ctypes.c_int32
    real = ctypes.c_float if dtype == np.float32 else ctypes.c_double
    ptr, i32 = ctypes.c_void_p, ctypes.c_int32
    return ctypes.CFUNCTYPE(None, i32, i32, i32, n, n, n, real, ptr, n, ptr, n, real, ptr, n)(addr)


def _operand(x):
    """(trans, ld) describing the 2-D array x to row-major CBLAS in place, or None."""
    rows, cols = x.shape
    if not x.flags.aligned or any(s % x.itemsize for s in x.strides):
        return None
    row_step, col_step = (s // x.itemsize for s in x.strides)
    if col_step == 1 or cols == 1:
        ld = row_step if rows > 1 else cols
        if ld >= max(1, cols):
            return NO_TRANS, ld
    if row_step == 1 or rows == 1:
        ld = col_step if cols > 1 else rows
        if ld >= max(1, rows):
            return TRANS, ld
    return None


def gemm(a, b, out):
    """out[...] = a @ b through the BLAS, for 2-D float32 or float64 arrays of one dtype.

    Transposed (Fortran-ordered) or row-sliced operands are passed with CBLAS's trans flag and
    leading dimension, not copied; other layouts are copied. `out` must have unit column stride.
    """
    (m, k), (k2, n) = a.shape, b.shape
    if out.shape != (m, n) or k2 != k or not a.dtype == b.dtype == out.dtype:
        raise ValueError(f"gemm: {a.shape} {a.dtype} @ {b.shape} {b.dtype} -> {out.shape} {out.dtype}")
    fn = _gemm_function(out.dtype)
    if out.size == 0:
        return out
    if k == 0:
        out[...] = 0
        return out
    out_layout = _operand(out)
    if out_layout is None or out_layout[0] != NO_TRANS or not out.flags.writeable:
        raise ValueError("gemm: out must be a writeable array with unit column stride")
    layouts = []
    for x in (a, b):
        layout = _operand(x)
        if layout is None:
            x = np.ascontiguousarray(x)
            layout = _operand(x)
        layouts.append((x, *layout))
    (a, trans_a, lda), (b, trans_b, ldb) = layouts
    fn(ROW_MAJOR, trans_a, trans_b, m, n, k, 1.0, a.ctypes.data, lda, b.ctypes.data, ldb,
       0.0, out.ctypes.data, out_layout[1])
    return out


SMALL_GEMM = 1 << 22    # multiply-adds up to which a gemm runs on the calling thread alone: OpenBLAS's threads
                        # bring little there, and cost milliseconds when another process holds the cores


# What linalg_lapack.calling_thread_only's blocks share while they hold OpenBLAS at one thread: a lock word, how
# many hold it, and the thread count the first replaced (int64 each; generated code names it by address).
ONE_THREAD = (ctypes.c_int64 * 3)()
ONE_THREAD_ADDRESS = ctypes.addressof(ONE_THREAD)


@functools.cache
def threads_local_address():
    """Address of OpenBLAS's `int openblas_set_num_threads_local(int)` (the calling thread's BLAS thread count;
    returns the previous one), or None where the BLAS has none."""
    blas = find_blas()
    if blas is None:
        return None
    try:
        lib = ctypes.CDLL(blas.path)
    except OSError:
        return None
    return next(filter(None, (_address(lib, f"{prefix}openblas_set_num_threads_local{suffix}")
                              for prefix in ("",) + _PREFIXES for suffix in ("",) + _SUFFIXES)), None)
