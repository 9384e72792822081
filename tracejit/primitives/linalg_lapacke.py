"""LAPACK routines that NumPy does not wrap (gees, gehrd, orgqr, sytrd ...), called through ctypes from the NumPy
impls of the primitives built on them, on the LAPACKE of the same library the compiled code calls
(tracejit.backend.lapack): eager and compiled results come from one implementation, so they agree to the bit.
A NumPy reimplementation of the Schur decomposition (Francis' QR iterations with deflation) would be long, slow and
a second source of truth. Where the library lacks the routine the impl raises NotImplementedError naming it.

Also the pieces the lowering rules of those primitives share: the routines run on row-major matrices (LAPACKE
transposes them), one call per matrix of the batch, and every output of a matrix whose call fails is NaN."""
import ctypes
import functools

import numpy as np

from . import linalg_lapack as lp


def _backend():
    # As linalg_lapack._lapack: the backend's LAPACK lookup, imported when a routine is first called.
    from ..backend import lapack
    return lapack


@functools.cache
def routine(name, dtype):
    """The ctypes function for LAPACKE_<t><name> (returns LAPACK's info), or NotImplementedError (cached)."""
    lapack = _backend()
    address = lapack.address(name, dtype)
    if address is None:
        raise NotImplementedError(f"{lapack.symbol_name(name, dtype)} is not in the LAPACK bundled with numpy; "
                                  "tracejit needs it for this function")
    return ctypes.CFUNCTYPE(ctypes.c_int64 if lapack.int_bits() == 64 else ctypes.c_int32)(address)


def lapack_int(value):
    return (ctypes.c_int64 if _backend().int_bits() == 64 else ctypes.c_int32)(value)


def ptr(array):
    """A pointer argument: an array's data (None: NULL)."""
    return ctypes.c_void_p(None if array is None else array.ctypes.data)


def char(c):
    return ctypes.c_char(c.encode())


ROW_MAJOR = ctypes.c_int(101)


def each(batch, outputs, call):
    """call(i) for each matrix index i of the batch shape; where it returns a nonzero info, the i-th entry of each
    output array (a batch of results) becomes NaN."""
    for i in np.ndindex(*batch):
        if call(i) != 0:
            for out in outputs:
                out[i] = np.nan


def lower_each(k, batch_source, outputs, call):
    """The lowering's loop: call(i) emits matrix i's call and returns its info; NaN in that matrix's part of each
    output (pairs (buffer, core): the number of trailing axes one matrix's result has) where it is nonzero."""
    with lp.each_matrix(k, batch_source.aval.shape) as i:
        info = call(i)
        with k.f.when(lp.nonzero(k, info)):
            for buf, core in outputs:
                view = lp.item(k, buf, i, core=core)
                if core == 2:
                    lp.fill(k, view, lp.NAN)
                else:
                    lp.fill_vector(k, view, lp.NAN)


def row_major():
    return f"i32 {lp.lapack_constant('ROW_MAJOR')}"
