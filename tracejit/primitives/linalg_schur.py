"""The decompositions JAX's lax.linalg computes with LAPACK on CPU and does not differentiate: schur (gees),
hessenberg (gehrd), householder_product (orgqr / ungqr) and tridiagonal (sytrd / hetrd). Each takes a stack of
matrices (leading axes batch axes); compiled code calls LAPACKE once per matrix, and the NumPy impls call the
same routines through ctypes (linalg_lapacke: NumPy has none of them). A matrix whose call fails gives NaN in all
its outputs, as JAX's.

None has a derivative in JAX (the Schur and Hessenberg forms are not unique: LAPACK's choice among them moves in
steps), so their jvp rules raise, naming the function, as JAX's missing rules do."""
import ctypes

import numpy as np

from ..backend.rules import Kernel
from ..core.avals import ShapedArray, real_dtype
from ..core.errors import ShapeError
from ..core.trace import Primitive
from . import linalg_lapack as lp
from . import linalg_lapacke as lk
from .linalg_factor import check_matrix
from .matrix_ops import leading_batch_rule


def _no_derivative(name):
    def jvp(primals, tangents, **params):
        raise NotImplementedError(f"differentiation rule (jvp) for '{name}' is not implemented: JAX defines none "
                                  f"({name}'s result is not a smooth function of its input in general)")
    return jvp


def _n(x):
    return max(x.shape[-1], 1)


def _available(routines):
    """lp.lapack_available with the routine's complex name where it has one of its own (he for sy)."""
    def available(eqn):
        complex_ = eqn.inputs[0].aval.dtype.kind == "c"
        names = [r.replace("sy", "he") if complex_ else r for r in routines]
        shape = eqn.inputs[0].aval.shape[-2:]
        return all(isinstance(d, int) for d in shape) and lp.lapack_available(names)(eqn)
    return available

# ---------------------------------------------------------------------------------------------------- schur


def _schur_shape(a, compute_schur_vectors):
    check_matrix("schur", a, square=True)
    return [a.strip_weak()] * (2 if compute_schur_vectors else 1)


def _schur_impl(a, compute_schur_vectors):
    """gees (no sorting) per matrix: T overwrites a copy of a, the eigenvalues go to scratch."""
    a = np.asarray(a)
    t = np.array(a, order="C", copy=True)
    vs = np.zeros_like(t)
    n = a.shape[-1]
    if n and t.size:
        fn, sdim = lk.routine("gees", a.dtype), lk.lapack_int(0)
        values = [np.empty(n, a.dtype) for _ in range(2 if a.dtype.kind == "f" else 1)]

        def call(i):
            return fn(lk.ROW_MAJOR, lk.char("V" if compute_schur_vectors else "N"), lk.char("N"), ctypes.c_void_p(None),
                      lk.lapack_int(n), lk.ptr(t[i]), lk.lapack_int(n), ctypes.byref(sdim), *map(lk.ptr, values),
                      lk.ptr(vs[i]), lk.lapack_int(n))
        lk.each(a.shape[:-2], [t, vs], call)
    return [t, vs] if compute_schur_vectors else [t]


def _lower_schur(k, outs, ins, compute_schur_vectors):
    (a,), (t, *vs) = ins, outs
    dtype, n = a.aval.dtype, a.aval.shape[-1]
    values = [lp.stack_array(k, "i8", k.b.iop("mul", n, dtype.itemsize)) for _ in range(2 if dtype.kind == "f" else 1)]
    sdim = lp.stack_array(k, "i64", 1)
    lp.copy(k, t.ptr, a.ptr, lp.nbytes(k, a.aval))

    def call(i):
        vectors = lp.item(k, vs[0], i).ptr if vs else "null"
        return lp.call(k, "gees", dtype, [lk.row_major(), lp.char("V" if vs else "N"), lp.char("N"), "ptr null",
                                          *lp.ints(k, n), f"ptr {lp.item(k, t, i).ptr}", *lp.ints(k, n),
                                          f"ptr {sdim}", *(f"ptr {v}" for v in values), f"ptr {vectors}",
                                          *lp.ints(k, n)])
    lk.lower_each(k, a, [(x, 2) for x in outs], call)


schur_p = Primitive("schur", _schur_shape, _schur_impl, multiple_results=True, jvp=_no_derivative("schur"),
                    lower=Kernel(_lower_schur, available=_available(["gees"])))
schur_p.set(batch=leading_batch_rule(schur_p))

# ----------------------------------------------------------------------------------------------- hessenberg


def _hessenberg_shape(a):
    check_matrix("hessenberg", a, square=True)
    return [a.strip_weak(), ShapedArray(a.shape[:-2] + (max(a.shape[-1] - 1, 0),), a.dtype)]


def _hessenberg_impl(a):
    """gehrd (ilo 1, ihi n) per matrix: the Hessenberg form and the reflectors below it, overwriting a copy of a."""
    a = np.asarray(a)
    h = np.array(a, order="C", copy=True)
    n = a.shape[-1]
    taus = np.zeros(a.shape[:-2] + (max(n - 1, 0),), a.dtype)
    if n and h.size:
        fn = lk.routine("gehrd", a.dtype)
        lk.each(a.shape[:-2], [h, taus], lambda i: fn(lk.ROW_MAJOR, lk.lapack_int(n), lk.lapack_int(1),
                                                      lk.lapack_int(n), lk.ptr(h[i]), lk.lapack_int(n),
                                                      lk.ptr(taus[i])))
    return [h, taus]


def _lower_hessenberg(k, outs, ins):
    (a,), (h, taus) = ins, outs
    n = a.aval.shape[-1]
    lp.copy(k, h.ptr, a.ptr, lp.nbytes(k, a.aval))

    def call(i):
        return lp.call(k, "gehrd", a.aval.dtype, [lk.row_major(), *lp.ints(k, n, 1, n), f"ptr {lp.item(k, h, i).ptr}",
                                                  *lp.ints(k, n), f"ptr {lp.item(k, taus, i, core=1).ptr}"])
    lk.lower_each(k, a, [(h, 2), (taus, 1)], call)


hessenberg_p = Primitive("hessenberg", _hessenberg_shape, _hessenberg_impl, multiple_results=True,
                         jvp=_no_derivative("hessenberg"),
                         lower=Kernel(_lower_hessenberg, available=_available(["gehrd"])))
hessenberg_p.set(batch=leading_batch_rule(hessenberg_p))

# -------------------------------------------------------------------------------------- householder_product


def _householder_shape(a, taus):
    check_matrix("householder_product", a)
    m, n = a.shape[-2:]
    if taus.dtype != a.dtype or taus.ndim != a.ndim - 1 or taus.shape[:-1] != a.shape[:-2]:
        raise ShapeError(f"householder_product: needs taus (..., k) of a's dtype and batch shape, got "
                         f"{a.str_short()} and {taus.str_short()}")
    if m < n or taus.shape[-1] > n:
        raise ShapeError(f"householder_product: needs a of shape (..., m, n) with m >= n and taus (..., k) with "
                         f"k <= n, got {a.shape} and {taus.shape}")
    return a.strip_weak()


def _householder_impl(a, taus):
    """orgqr (ungqr) per matrix: the first n columns of the product of the k reflectors in a's lower part."""
    a, taus = np.asarray(a), np.asarray(taus)
    q = np.array(a, order="C", copy=True)
    taus = np.ascontiguousarray(taus)
    (m, n), kk = a.shape[-2:], taus.shape[-1]
    if q.size:
        fn = lk.routine("orgqr", a.dtype)
        lk.each(a.shape[:-2], [q], lambda i: fn(lk.ROW_MAJOR, *map(lk.lapack_int, (m, n, kk)), lk.ptr(q[i]),
                                                lk.lapack_int(max(n, 1)), lk.ptr(taus[i])))
    return q


def _lower_householder(k, outs, ins):
    (a, taus), (q,) = ins, outs
    (m, n), kk = a.aval.shape[-2:], taus.aval.shape[-1]
    lp.copy(k, q.ptr, a.ptr, lp.nbytes(k, a.aval))

    def call(i):
        return lp.call(k, "orgqr", a.aval.dtype, [lk.row_major(), *lp.ints(k, m, n, kk),
                                                  f"ptr {lp.item(k, q, i).ptr}", *lp.ints(k, n),
                                                  f"ptr {lp.item(k, taus, i, core=1).ptr}"])
    lk.lower_each(k, a, [(q, 2)], call)


householder_product_p = Primitive("householder_product", _householder_shape, _householder_impl,
                                  jvp=_no_derivative("householder_product"),
                                  lower=Kernel(_lower_householder, available=_available(["orgqr"])))
householder_product_p.set(batch=leading_batch_rule(householder_product_p))

# ---------------------------------------------------------------------------------------------- tridiagonal


def _tridiagonal_shape(a, lower):
    check_matrix("tridiagonal", a, square=True)
    n = a.shape[-1]
    if n == 0:
        raise ShapeError(f"tridiagonal: needs a non-empty square matrix, got shape {a.shape}")
    batch, real = a.shape[:-2], real_dtype(a.dtype)
    return [a.strip_weak(), ShapedArray(batch + (n,), real), ShapedArray(batch + (n - 1,), real),
            ShapedArray(batch + (n - 1,), a.dtype)]


def _sytrd(dtype):
    return "hetrd" if np.dtype(dtype).kind == "c" else "sytrd"


def _tridiagonal_impl(a, lower):
    """sytrd (hetrd) per matrix on a copy of a, reading its `lower` (or upper) triangle."""
    a = np.asarray(a)
    out = np.array(a, order="C", copy=True)
    n, batch, real = a.shape[-1], a.shape[:-2], real_dtype(a.dtype)
    d, e = np.zeros(batch + (n,), real), np.zeros(batch + (n - 1,), real)
    taus = np.zeros(batch + (n - 1,), a.dtype)
    if out.size:
        fn = lk.routine(_sytrd(a.dtype), a.dtype)
        lk.each(batch, [out, d, e, taus], lambda i: fn(lk.ROW_MAJOR, lk.char("L" if lower else "U"),
                                                       lk.lapack_int(n), lk.ptr(out[i]), lk.lapack_int(n),
                                                       lk.ptr(d[i]), lk.ptr(e[i]), lk.ptr(taus[i])))
    return [out, d, e, taus]


def _lower_tridiagonal(k, outs, ins, lower):
    (a,), (out, d, e, taus) = ins, outs
    n = a.aval.shape[-1]
    lp.copy(k, out.ptr, a.ptr, lp.nbytes(k, a.aval))

    def call(i):
        vectors = [f"ptr {lp.item(k, x, i, core=1).ptr}" for x in (d, e, taus)]
        return lp.call(k, _sytrd(a.aval.dtype), a.aval.dtype, [lk.row_major(), lp.char("L" if lower else "U"),
                                                              *lp.ints(k, n), f"ptr {lp.item(k, out, i).ptr}",
                                                              *lp.ints(k, n), *vectors])
    lk.lower_each(k, a, [(out, 2), (d, 1), (e, 1), (taus, 1)], call)


tridiagonal_p = Primitive("tridiagonal", _tridiagonal_shape, _tridiagonal_impl, multiple_results=True,
                          jvp=_no_derivative("tridiagonal"),
                          lower=Kernel(_lower_tridiagonal, available=_available(["sytrd"])))
tridiagonal_p.set(batch=leading_batch_rule(tridiagonal_p))
