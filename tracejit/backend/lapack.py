"""The LAPACK that numpy itself uses, found where blas.py finds its BLAS, for calling from generated code.

numpy's wheels bundle OpenBLAS, which exports LAPACKE (C interface: scalars by value, matrices in row- or
column-major order, workspace allocated inside) and CBLAS with the BLAS's prefix and suffix:
`scipy_LAPACKE_dgetrf64_`, `scipy_cblas_dtrsm64_`. `address(routine, dtype)` is the address of
`LAPACKE_<t><routine>` (routine "getrf", "potrf" ...; t the dtype's letter s/d/c/z) or, for a routine named
"cblas_trsm", of `cblas_<t>trsm`; None when the library has no such symbol, and then the primitive runs its
NumPy impl instead (rules.Kernel.available). Lookups never raise and are cached.

The C signatures generated code calls (lapack_int: an integer of `int_bits()` bits; char: one ASCII byte;
layout: ROW_MAJOR 101 or COL_MAJOR 102; the return value is LAPACK's info):

    lapack_int LAPACKE_?potrf(int layout, char uplo, lapack_int n, T *a, lapack_int lda)
    lapack_int LAPACKE_?getrf(int layout, lapack_int m, lapack_int n, T *a, lapack_int lda, lapack_int *ipiv)
    lapack_int LAPACKE_?geqrf(int layout, lapack_int m, lapack_int n, T *a, lapack_int lda, T *tau)
    lapack_int LAPACKE_?orgqr(int layout, lapack_int m, lapack_int n, lapack_int k, T *a, lapack_int lda,
                              const T *tau)                                     (complex: ?ungqr)
    lapack_int LAPACKE_?syevd(int layout, char jobz, char uplo, lapack_int n, T *a, lapack_int lda, R *w)
                                                                                (complex: ?heevd)
    lapack_int LAPACKE_?gesdd(int layout, char jobz, lapack_int m, lapack_int n, T *a, lapack_int lda, R *s,
                              T *u, lapack_int ldu, T *vt, lapack_int ldvt)
    lapack_int LAPACKE_?gelsd(int layout, lapack_int m, lapack_int n, lapack_int nrhs, T *a, lapack_int lda, T *b,
                              lapack_int ldb, R *s, R rcond, lapack_int *rank)
    void cblas_?trsm(int layout, int side, int uplo, int trans, int diag, intN m, intN n, T alpha,
                     const T *a, intN lda, T *b, intN ldb)      (complex: alpha is a pointer to T)
    void cblas_?trsv(int layout, int uplo, int trans, int diag, intN n, const T *a, intN lda, T *x, intN incx)

R is the real type of T. The CBLAS enums: side Left 141 / Right 142, uplo Upper 121 / Lower 122, trans NoTrans
111 / Trans 112 / ConjTrans 113, diag NonUnit 131 / Unit 132.
"""
import ctypes
import functools

import numpy as np

from . import blas

ROW_MAJOR, COL_MAJOR = 101, 102
LEFT, RIGHT = 141, 142
UPPER, LOWER = 121, 122
NO_TRANS, TRANS, CONJ_TRANS = 111, 112, 113
NON_UNIT, UNIT = 131, 132

LETTERS = {np.dtype("float32"): "s", np.dtype("float64"): "d", np.dtype("complex64"): "c",
           np.dtype("complex128"): "z"}
# Routines whose complex form has another name.
_COMPLEX_NAMES = {"orgqr": "ungqr", "syevd": "heevd"}
_PREFIXES = ("scipy_", "")
_SUFFIXES = ("64_", "_64", "")


def symbol_name(routine, dtype):
    """The unadorned C name of a routine for dtype, e.g. ("potrf", float64) -> "LAPACKE_dpotrf"."""
    dtype = np.dtype(dtype)
    letter = LETTERS[dtype]
    if routine.startswith("cblas_"):
        return f"cblas_{letter}{routine[len('cblas_'):]}"
    if dtype.kind == "c":
        routine = _COMPLEX_NAMES.get(routine, routine)
    return f"LAPACKE_{letter}{routine}"


@functools.cache
def _library():
    found = blas.find_blas()
    if found is None:
        return None
    try:
        return ctypes.CDLL(found.path)
    except OSError:
        return None


@functools.cache
def address(routine, dtype):
    """The address of the routine for dtype in numpy's LAPACK, or None."""
    lib = _library()
    if lib is None or np.dtype(dtype) not in LETTERS:
        return None
    name = symbol_name(routine, dtype)
    for prefix in _PREFIXES:
        for suffix in _SUFFIXES:
            try:
                return ctypes.cast(getattr(lib, f"{prefix}{name}{suffix}"), ctypes.c_void_p).value
            except AttributeError:
                continue
    return None


def available(routines, dtype):
    """Whether every routine is found for dtype."""
    return all(address(r, dtype) is not None for r in routines)


def int_bits():
    """Width of lapack_int: that of the BLAS's integers (numpy's OpenBLAS is ILP64: 64)."""
    return blas.gemm_int_bits()
