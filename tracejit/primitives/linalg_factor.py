"""The matrix factorizations, as JAX's lax.linalg defines them: cholesky, lu (with pivots and permutation),
lu_pivots_to_permutation, qr, eigh and svd. Each takes a stack of matrices (..., m, n); the leading axes are
batch axes, over which the compiled code loops natively, calling numpy's LAPACK once per matrix. Their jvp rules
are JAX's (reverse mode transposes them: they are written with linear primitives of the tangent), and a failed
factorization gives NaN as JAX's do, never an exception.

Complex matrices take the same routines in their complex forms (ungqr, heevd: tracejit.backend.lapack), and the
rules conjugate where JAX's do; eigh's eigenvalues and the singular values are real."""
import numpy as np

from ..backend.rules import Kernel
from ..core.ad_util import Zero, aval, instantiate
from ..core.avals import ShapedArray, real_dtype
from ..core.errors import ShapeError
from ..core.ir import Var
from ..core.ops import ops
from ..core.trace import Primitive
from . import linalg_lapack as lp
from . import linalg_reference as ref
from .base import zero_jvp
from .matrix_ops import (
    as_dtype_of,
    conj,
    const,
    diag_matrix,
    diagonal,
    eye,
    leading_batch_rule,
    matmul,
    mH,
    mT,
    real_part,
    rows,
    sub_matrix,
    symmetrize,
    tril,
    triu,
)


def check_matrix(name, x, square=False):
    """x must be a float32/float64/complex64/complex128 stack of (square) matrices."""
    if x.dtype not in lp.DTYPES:
        raise TypeError(f"{name}: needs float32, float64, complex64 or complex128 matrices, got {x.str_short()}")
    if x.ndim < 2 or (square and x.shape[-1] != x.shape[-2]):
        raise ShapeError(f"{name}: needs an array of shape (..., {'n, n' if square else 'm, n'}), got shape "
                         f"{x.shape}")


def _int32(shape):
    return ShapedArray(shape, np.int32)


def _row_major():
    return f"i32 {lp.lapack_constant('ROW_MAJOR')}"


# -------------------------------------------------------------------------------------------- cholesky


def _cholesky_shape(a):
    check_matrix("cholesky", a, square=True)
    return a.strip_weak()


def _cholesky_jvp(primals, tangents):
    """JAX's rule (Murray 2016): L' = L phi(L^-1 A' L^-H), phi taking the lower triangle with a halved diagonal."""
    (x,), (t,) = primals, tangents
    L = ops.cholesky(x)
    solve = {"lower": True, "unit_diagonal": False}
    tmp = ops.triangular_solve(L, instantiate(t), left_side=False, transpose_a=True, conjugate_a=True, **solve)
    inner = tril(ops.triangular_solve(L, tmp, left_side=True, transpose_a=False, conjugate_a=False, **solve))
    phi = ops.sub(inner, ops.mul(diag_matrix(diagonal(inner)), const(0.5, inner)))
    return L, matmul(L, phi)


def _lower_cholesky(k, outs, ins):
    """potrf's lower form per matrix, column-major: its reads and writes are the row-major matrix's transpose. So a's
    lower triangle goes transposed into the output's upper one first (a blocked transposing copy, or a mirror in
    place where the output is a's buffer: overwrites=0, jnp.linalg.cholesky's symmetrized input computed straight
    into it), and the factor comes back transposed out of the upper triangle, which is zeroed; NaN on and below the
    diagonal where potrf fails. The lower form ran 20-30% faster than the upper one from n = 48 (64: 11.5 against
    16.3 us; 1024: 8.5 against 9.6 ms): 100 x 64 x 64 f64 took 1.35 ms instead of 1.76 (NumPy 1.43), one 64 x 64
    12.1 us instead of 15.4 (NumPy 15.8)."""
    (out,), (a,) = outs, ins
    n = a.aval.shape[-1]
    with lp.each_matrix(k, a.aval.shape) as i:
        m = lp.item(k, out, i)
        if out is a:
            lp.mirror_triangle(k, m, upward=True)
        else:
            lp.transpose_into(k, m, lp.item(k, a, i))
        info = lp.call(k, "potrf_work", a.aval.dtype, [f"i32 {lp.lapack_constant('COL_MAJOR')}", lp.char("L"),
                                                     *lp.ints(k, n), f"ptr {m.ptr}", *lp.ints(k, lp.at_least_1(k, n))])
        lp.mirror_triangle(k, m, upward=False)
        with k.f.when(lp.nonzero(k, info)):
            lp.fill(k, m, lp.NAN, lp.on_and_below_diagonal(k, m))


cholesky_p = Primitive("cholesky", _cholesky_shape, ref.cholesky, jvp=_cholesky_jvp,
                       lower=Kernel(_lower_cholesky, available=lp.lapack_available(["potrf_work"]), overwrites=0))
cholesky_p.set(batch=leading_batch_rule(cholesky_p))

# -------------------------------------------------------------------------------------------------- lu


def _lu_shape(a):
    check_matrix("lu", a)
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    return [a.strip_weak(), _int32(batch + (min(m, n),)), _int32(batch + (m,))]


def _lu_jvp(primals, tangents):
    """JAX's rule (de Hoog, Anderssen and Lukas): with X = L^-1 P A' U^-1, L' = L tril(X, -1), U' = triu(X) U."""
    (a,), (a_dot,) = primals, tangents
    lu, pivots, perm = outs = ops.lu(a)
    m, n = aval(a).shape[-2:]
    k = min(m, n)
    batch = aval(a).shape[:-2]
    nb = len(batch)
    zero = const(0, lu)
    l_part = tril(sub_matrix(lu, (0, m), (0, k)), -1)
    keep = ((0, 0, 0),) * nb
    l = ops.add(ops.pad(l_part, zero, padding_config=keep + ((0, 0, 0), (0, m - k, 0))), eye(m, lu, batch))
    u = ops.pad(triu(sub_matrix(lu, (0, k), (0, n))), zero, padding_config=keep + ((0, n - k, 0), (0, 0, 0)))
    if n > k:
        u = ops.add(u, ops.pad(eye(n - k, lu, batch), zero, padding_config=keep + ((k, 0, 0), (k, 0, 0))))
    x = rows(instantiate(a_dot), perm)
    la = ops.triangular_solve(l, x, left_side=True, lower=True, transpose_a=False, conjugate_a=False,
                              unit_diagonal=True)
    lau = ops.triangular_solve(u, la, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                               unit_diagonal=False)
    lu_dot = ops.add(matmul(l, tril(lau, -1)), matmul(triu(lau), u))
    return outs, [lu_dot, Zero(aval(pivots)), Zero(aval(perm))]


def _lower_lu(k, outs, ins):
    """getrf per matrix, column-major on a transposed copy and transposed back (what LAPACKE's row-major interface
    does, a block at a time: lp.transpose_into; det of 1024 x 1024 f64 31 -> 18 ms, NumPy's 23); pivots made
    0-based, and the permutation."""
    (lu, pivots, perm), (a,) = outs, ins
    m, n = a.aval.shape[-2:]
    count = lp.smaller(k, m, n)
    ipiv = lp.pivot_vector(k, count)
    scratch = lp.malloc(k, lp.nbytes(k, ShapedArray(a.aval.shape[-2:], a.aval.dtype)))
    work = lp.View(scratch, (n, m), a.aval.dtype)
    with lp.each_matrix(k, a.aval.shape) as i:
        mat, piv = lp.item(k, lu, i), lp.item(k, pivots, i, core=1)
        lp.transpose_into(k, work, lp.item(k, a, i))
        info = lp.call(k, "getrf_work", a.aval.dtype, [f"i32 {lp.lapack_constant('COL_MAJOR')}", *lp.ints(k, m, n),
                                                     f"ptr {scratch}", *lp.ints(k, lp.at_least_1(k, m)),
                                                     f"ptr {ipiv.ptr}"])
        lp.transpose_into(k, mat, work)
        with k.f.when(k.f.emit(f"icmp slt i64 {info}, 0")):
            lp.fill(k, mat, lp.NAN)
        with k.loop(0, count) as j:
            one_based = k.b.convert(k.load(ipiv, [j]), ipiv.aval.dtype, np.int32)
            k.store(piv, [j], k.f.emit(f"sub i32 {one_based}, 1"))
        lp.emit_pivots_to_permutation(k, piv, lp.item(k, perm, i, core=1), count)
    lp.free(k, scratch)


lu_p = Primitive("lu", _lu_shape, ref.lu, multiple_results=True, jvp=_lu_jvp,
                 lower=Kernel(_lower_lu, available=lp.lapack_available(["getrf_work"])))
lu_p.set(batch=leading_batch_rule(lu_p))


def _pivots_shape(pivots, permutation_size):
    if pivots.dtype != np.int32 or pivots.ndim < 1 or permutation_size < pivots.shape[-1]:
        raise TypeError(f"lu_pivots_to_permutation: needs int32 pivots (..., k) and permutation_size >= k, got "
                        f"{pivots.str_short()} and {permutation_size}")
    return _int32(pivots.shape[:-1] + (permutation_size,))


def _lower_pivots(k, outs, ins, permutation_size):
    (perm,), (pivots,) = outs, ins
    with lp.each_matrix(k, pivots.aval.shape, core=1) as i:
        swaps, out = lp.item(k, pivots, i, core=1), lp.item(k, perm, i, core=1)
        lp.emit_pivots_to_permutation(k, swaps, out, pivots.aval.shape[-1])


lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation", _pivots_shape, ref.pivots_to_permutation,
                                       lower=Kernel(_lower_pivots))
lu_pivots_to_permutation_p.set(jvp=zero_jvp(lu_pivots_to_permutation_p),
                               batch=leading_batch_rule(lu_pivots_to_permutation_p))

# -------------------------------------------------------------------------------------------------- qr


def _qr_shape(a, full_matrices, compute_q=True):
    """compute_q=False (set by `_qr_prune` alone): q is (..., m, 0), not computed."""
    check_matrix("qr", a)
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = m if full_matrices else min(m, n)
    return [ShapedArray(batch + (m, k if compute_q else 0), a.dtype), ShapedArray(batch + (k, n), a.dtype)]


def _qr_impl(a, full_matrices, compute_q=True):
    q, r = ref.qr(a, full_matrices)
    return [q if compute_q else q[..., :0], r]


def _qr_prune(eqn, live):
    """Where q is dead (qr(a, mode="r")), an equation that does not compute it: no orgqr (R of 512 x 512 f64 took
    12.9 ms with it, 7.0 without; NumPy's 8.4)."""
    if live[0] or not eqn.params.get("compute_q", True):
        return None
    q, r = eqn.outvars
    return eqn.replace(params={**eqn.params, "compute_q": False},
                       outvars=[Var(q.aval.update(shape=q.aval.shape[:-1] + (0,))), r])


def _thin_qr_jvp(q, r, dx):
    """JAX's rule for m >= n (j-towns.github.io/papers/qr-derivative.pdf), with its correction for complex
    matrices: the imaginary part of Q^H X' R^-1's diagonal joins the skew-Hermitian part."""
    dx_rinv = ops.triangular_solve(r, dx, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                                   unit_diagonal=False)
    qt_dx_rinv = matmul(mH(q), dx_rinv)
    low = tril(qt_dx_rinv, -1)
    do = ops.sub(low, mH(low))
    if aval(q).dtype.kind == "c":
        imaginary = ops.sub(qt_dx_rinv, as_dtype_of(ops.real(qt_dx_rinv), q))
        do = ops.add(do, diag_matrix(diagonal(imaginary)))
    dq = ops.add(matmul(q, ops.sub(do, qt_dx_rinv)), dx_rinv)
    dr = matmul(ops.sub(qt_dx_rinv, do), r)
    return dq, dr


def _qr_jvp(primals, tangents, full_matrices, compute_q=True):
    if not compute_q:
        (q, r), (dq, dr) = _qr_jvp(primals, tangents, full_matrices)
        return [sub_matrix(q, (0, aval(q).shape[-2]), (0, 0)), r], [sub_matrix(dq, (0, aval(q).shape[-2]), (0, 0)), dr]
    (x,), (dx,) = primals, tangents
    dx = instantiate(dx)
    q, r = ops.qr(x, full_matrices=full_matrices)
    m, n = aval(x).shape[-2:]
    last = aval(x).ndim - 1
    if m < n:       # X = [X1 X2], R = [R1 R2]: X1 = Q R1 is square, and R2 = Q^T X2
        dq, dr1 = _thin_qr_jvp(q, sub_matrix(r, (0, m), (0, m)), sub_matrix(dx, (0, m), (0, m)))
        dr2 = ops.add(matmul(mH(dq), sub_matrix(x, (0, m), (m, n))), matmul(mH(q), sub_matrix(dx, (0, m), (m, n))))
        return [q, r], [dq, ops.concatenate(dr1, dr2, dimension=last)]
    q_mn = sub_matrix(q, (0, m), (0, n)) if full_matrices else q
    r_nn = sub_matrix(r, (0, n), (0, n)) if full_matrices else r
    dq, dr = _thin_qr_jvp(q_mn, r_nn, dx)
    if full_matrices and m > n:     # the last m - n columns of Q (arXiv 2409.13374, eqs. 32-33)
        batch = aval(x).shape[:-2]
        q_nn, q_pn = sub_matrix(q_mn, (0, n), (0, n)), sub_matrix(q_mn, (n, m), (0, n))
        q_mp = sub_matrix(q, (0, m), (n, m))
        dq_nn, dq_pn = sub_matrix(dq, (0, n), (0, n)), sub_matrix(dq, (n, m), (0, n))
        # Z^H = (Q_nn - I)^-H Q_pn^H, the conjugate of (Q_nn - I)^-T Q_pn^T
        z_pn_t = ops.solve(ops.sub(q_nn, eye(n, q, batch)), mT(q_pn), transpose_a=True)
        z_pn = mT(z_pn_t)
        dq_mp = ops.sub(matmul(dq, conj(z_pn_t)), matmul(ops.add(q_mn, matmul(q_mp, z_pn)),
                                                         mH(ops.sub(dq_pn, matmul(z_pn, dq_nn)))))
        dq = ops.concatenate(dq, dq_mp, dimension=last)
        zeros = ops.broadcast_in_dim(const(0, dr), shape=batch + (m - n, n), broadcast_dimensions=())
        dr = ops.concatenate(dr, zeros, dimension=last - 1)
    return [q, r], [dq, dr]


def _lower_qr(k, outs, ins, full_matrices, compute_q=True):
    """geqrf then orgqr per matrix, column-major in scratch memory of max(n, k) columns (zeros past a's n, which
    orgqr reads for a full Q): a transposed in and Q transposed out a block at a time (lp.transpose_into), R's
    triangle read off the reflectors (what LAPACKE's row-major interface does element by element: qr of 512 x 512
    f64 15.6 -> 13.6 ms, NumPy 18.8); without orgqr where q is not wanted (`_qr_prune`)."""
    (q, r), (a,) = outs, ins
    dtype, (m, n), kq = a.aval.dtype, a.aval.shape[-2:], q.aval.shape[-1]
    kmin, width = lp.smaller(k, m, n), k.b.intrinsic("smax", k.b.size(n), k.b.size(kq), dtype=np.int64)
    tau = lp.stack_array(k, "i8", k.b.iop("mul", kmin, dtype.itemsize))
    size = k.b.iop("mul", k.b.iop("mul", width, k.b.size(m)), dtype.itemsize)
    scratch = lp.malloc(k, size)
    columns = lp.View(scratch, (width, m), dtype)          # column j of the column-major matrix is row j here
    zero = k.b.const(0, dtype)
    with lp.each_matrix(k, a.aval.shape) as i:
        qm, rm = lp.item(k, q, i), lp.item(k, r, i)
        k.line(f"call void @llvm.memset.p0.i64(ptr {scratch}, i8 0, i64 {size}, i1 false)")
        lp.transpose_into(k, lp.View(scratch, (n, m), dtype), lp.item(k, a, i))
        lda = lp.at_least_1(k, m)
        info = lp.call(k, "geqrf", dtype, [f"i32 {lp.lapack_constant('COL_MAJOR')}", *lp.ints(k, m, n),
                                           f"ptr {scratch}", *lp.ints(k, lda), f"ptr {tau}"])
        with k.loop(0, rm.aval.shape[0]) as row, k.loop(0, n) as col:      # R: the upper triangle of kmin rows
            upper = k.b(f"and i1 {k.b(f'icmp sle i64 {row}, {col}')}, {k.b(f'icmp slt i64 {row}, {kmin}')}")
            k.store(rm, [row, col], k.b.select(upper, k.load(columns, [col, row]), zero, dtype))
        failed = lp.nonzero(k, info)
        if compute_q:
            more = lp.call(k, "orgqr", dtype, [f"i32 {lp.lapack_constant('COL_MAJOR')}", *lp.ints(k, m, kq, kmin),
                                            f"ptr {scratch}", *lp.ints(k, lda), f"ptr {tau}"])
            lp.transpose_into(k, qm, lp.View(scratch, (kq, m), dtype))
            failed = k.f.emit(f"or i1 {failed}, {lp.nonzero(k, more)}")
        with k.f.when(failed):
            lp.fill(k, qm, lp.NAN)
            lp.fill(k, rm, lp.NAN)
    lp.free(k, scratch)


qr_p = Primitive("qr", _qr_shape, _qr_impl, multiple_results=True, jvp=_qr_jvp, prune=_qr_prune,
                 lower=Kernel(_lower_qr, available=lp.lapack_available(["geqrf", "orgqr"])))
qr_p.set(batch=leading_batch_rule(qr_p))

# ------------------------------------------------------------------------------------------------ eigh


def _eigh_shape(a, lower, eigvals_only=False):
    check_matrix("eigh", a, square=True)
    w = ShapedArray(a.shape[:-1], real_dtype(a.dtype))
    return [w] if eigvals_only else [a.strip_weak(), w]


def _eigh_jvp(primals, tangents, lower, eigvals_only=False):
    """JAX's rule (non-degenerate perturbation theory): with F_ij = 1 / (w_j - w_i) off the diagonal, dv = v (F *
    v^H a' v) and dw = Re diag(v^H a' v). Equal eigenvalues make F infinite: NaN derivatives of v, as in JAX.
    The eigenvalues' derivative needs the eigenvectors too."""
    (a,), (a_dot,) = primals, tangents
    v, w_real = ops.eigh(symmetrize(a), lower=lower)
    if eigvals_only:
        vh_adot_v = matmul(matmul(mH(v), instantiate(a_dot)), v)
        return [w_real], [real_part(diagonal(vh_adot_v))]
    w = as_dtype_of(w_real, v)
    shape = aval(v).shape
    nd = len(shape)
    batch = tuple(range(nd - 2))
    eye_n = eye(shape[-1], v, shape[:-2])
    w_cols = ops.broadcast_in_dim(w, shape=shape, broadcast_dimensions=batch + (nd - 1,))
    w_rows = ops.broadcast_in_dim(w, shape=shape, broadcast_dimensions=batch + (nd - 2,))
    fmat = ops.sub(ops.div(const(1, v), ops.sub(ops.add(eye_n, w_cols), w_rows)), eye_n)
    vh_adot_v = matmul(matmul(mH(v), instantiate(a_dot)), v)
    return [v, w_real], [matmul(v, ops.mul(fmat, vh_adot_v)), real_part(diagonal(vh_adot_v))]


def _lower_eigh(k, outs, ins, lower, eigvals_only=False):
    """syevd per matrix, column-major on a transposed copy and its eigenvectors transposed back (what LAPACKE's
    row-major interface does, but a block at a time: lp.transpose_into); only the eigenvalues when eigvals_only
    (about half the time); NaN where it does not converge."""
    (*v, w), (a,) = outs, ins
    n = a.aval.shape[-1]
    scratch = lp.malloc(k, lp.nbytes(k, ShapedArray(a.aval.shape[-2:], a.aval.dtype)))
    work = lp.View(scratch, (n, n), a.aval.dtype)
    with lp.each_matrix(k, a.aval.shape) as i:
        lp.transpose_into(k, work, lp.item(k, a, i))
        wv = lp.item(k, w, i, core=1)
        info = lp.call(k, "syevd", a.aval.dtype, [f"i32 {lp.lapack_constant('COL_MAJOR')}",
                                                  lp.char("N" if eigvals_only else "V"), lp.char("L" if lower else "U"),
                                                  *lp.ints(k, n), f"ptr {scratch}", *lp.ints(k, lp.at_least_1(k, n)),
                                                  f"ptr {wv.ptr}"])
        vm = [lp.item(k, x, i) for x in v]
        for x in vm:
            lp.transpose_into(k, x, work)
        with k.f.when(lp.nonzero(k, info)):
            for x in vm:
                lp.fill(k, x, lp.NAN)
            lp.fill_vector(k, wv, lp.NAN)
    lp.free(k, scratch)


eigh_p = Primitive("eigh", _eigh_shape, lambda a, lower, eigvals_only=False: list(ref.eigh(a, lower, eigvals_only)),
                   multiple_results=True,
                   jvp=_eigh_jvp, lower=Kernel(_lower_eigh, available=lp.lapack_available(["syevd"])))
eigh_p.set(batch=leading_batch_rule(eigh_p))

# ------------------------------------------------------------------------------------------------- svd


def _svd_shape(a, full_matrices, compute_uv):
    check_matrix("svd", a)
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    s = ShapedArray(batch + (k,), real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    return [s, ShapedArray(batch + (m, m if full_matrices else k), a.dtype),
            ShapedArray(batch + (n if full_matrices else k, n), a.dtype)]


def _svd_jvp(primals, tangents, full_matrices, compute_uv):
    """JAX's rule; like JAX, not for full U and V of a non-square matrix. F and the singular values are real; they
    scale complex matrices as complex values."""
    (a,), (da,) = primals, tangents
    da = instantiate(da)
    s, u, vt = ops.svd(a, full_matrices=False, compute_uv=True)
    m, n = aval(a).shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("svd: the derivative of the full matrices U and V of a non-square matrix is not "
                                  "implemented (as in JAX); use full_matrices=False")
    v = mH(vt)
    ds_mat = matmul(matmul(mH(u), da), v)
    ds = real_part(diagonal(ds_mat))
    if not compute_uv:
        return [s], [ds]
    shape = aval(ds_mat).shape
    nd, k = len(shape), shape[-1]
    batch = tuple(range(nd - 2))
    s_cols = ops.broadcast_in_dim(s, shape=shape, broadcast_dimensions=batch + (nd - 1,))
    s_rows = ops.broadcast_in_dim(s, shape=shape, broadcast_dimensions=batch + (nd - 2,))
    eye_k = eye(k, s, shape[:-2])
    f = ops.sub(ops.div(const(1, s), ops.add(ops.mul(ops.add(s_cols, s_rows), ops.sub(s_cols, s_rows)), eye_k)), eye_k)
    f, s_cols, s_rows = (as_dtype_of(x, a) for x in (f, s_cols, s_rows))
    dss, sds = ops.mul(s_cols, ds_mat), ops.mul(s_rows, ds_mat)
    s_zero = ops.convert_element_type(ops.eq(s, const(0, s)), new_dtype=aval(s).dtype)
    s_inv = ops.sub(ops.div(const(1, s), ops.add(s, s_zero)), s_zero)
    du_dv_diag = ops.mul(ops.mul(ops.sub(ds_mat, mH(ds_mat)), as_dtype_of(diag_matrix(s_inv), a)), const(0.5, a))
    du = matmul(u, ops.add(ops.mul(f, ops.add(dss, mH(dss))), du_dv_diag))
    dv = matmul(v, ops.mul(f, ops.add(sds, mH(sds))))
    if m > n:
        dav = matmul(da, v)
        du = ops.add(du, ops.div(ops.sub(dav, matmul(u, matmul(mH(u), dav))), _spread_last(s, dav)))
    if n > m:
        dau = matmul(mH(da), u)
        dv = ops.add(dv, ops.div(ops.sub(dau, matmul(v, matmul(vt, dau))), _spread_last(s, dau)))
    return [s, u, vt], [ds, du, mH(dv)]


def _spread_last(s, like):
    """s (..., k) broadcast along the rows of matrices like `like` (..., r, k), in like's dtype."""
    shape = aval(like).shape
    nd = len(shape)
    spread = ops.broadcast_in_dim(s, shape=shape, broadcast_dimensions=tuple(range(nd - 2)) + (nd - 1,))
    return as_dtype_of(spread, like)


def _lower_svd(k, outs, ins, full_matrices, compute_uv):
    """gesdd per matrix, column-major: the vectors of a transposed copy, transposed back (lp.transpose_into), so
    that they, signs included, are those of a itself, as numpy's and JAX's (what LAPACKE's row-major interface does
    element by element: svd of 512 x 512 f64 61 -> 57 ms, its values 28.9 -> 26.8); the values alone of whichever
    of a (a transposed copy) and a^T (a copy of the buffer) has at least as many rows as columns, where gesdd
    starts with a QR factorization, faster than the LQ one of the other (512 x 256 f64: 6.94 against 7.50 ms,
    1000 x 100: 2.18 against 2.53; NumPy 6.87 and 2.10); NaN where it does not converge."""
    (s, *uv), (a,) = outs, ins
    m, n = a.aval.shape[-2:]
    scratch = lp.malloc(k, lp.nbytes(k, ShapedArray(a.aval.shape[-2:], a.aval.dtype)))
    jobz = "N" if not compute_uv else "A" if full_matrices else "S"
    (ucols, vrows), rows, cols = (uv[0].aval.shape[-1], uv[1].aval.shape[-2]) if compute_uv else (1, 1), m, n
    vectors = [lp.malloc(k, lp.nbytes(k, x.aval.update(shape=x.aval.shape[-2:]))) for x in uv]
    with lp.each_matrix(k, a.aval.shape) as i:
        if compute_uv or isinstance(m, int) and isinstance(n, int) and m > n:
            lp.transpose_into(k, lp.View(scratch, (n, m), a.aval.dtype), lp.item(k, a, i))
        else:
            lp.copy(k, scratch, lp.item(k, a, i).ptr, lp.nbytes(k, ShapedArray(a.aval.shape[-2:], a.aval.dtype)))
            rows, cols = n, m
        sv = lp.item(k, s, i, core=1)
        info = lp.call(k, "gesdd", a.aval.dtype, [
            f"i32 {lp.lapack_constant('COL_MAJOR')}", lp.char(jobz), *lp.ints(k, rows, cols), f"ptr {scratch}",
            *lp.ints(k, lp.at_least_1(k, rows)), f"ptr {sv.ptr}",
            f"ptr {vectors[0] if compute_uv else 'null'}", *lp.ints(k, lp.at_least_1(k, rows)),
            f"ptr {vectors[1] if compute_uv else 'null'}", *lp.ints(k, lp.at_least_1(k, vrows))])
        if compute_uv:
            u, vt = (lp.item(k, x, i) for x in uv)
            lp.transpose_into(k, u, lp.View(vectors[0], (ucols, m), a.aval.dtype))
            lp.transpose_into(k, vt, lp.View(vectors[1], (n, vrows), a.aval.dtype))
        with k.f.when(lp.nonzero(k, info)):
            lp.fill_vector(k, sv, lp.NAN)
            for x in (u, vt) if compute_uv else ():
                lp.fill(k, x, lp.NAN)
    for ptr in [scratch, *vectors]:
        lp.free(k, ptr)


svd_p = Primitive("svd", _svd_shape, lambda a, full_matrices, compute_uv: list(ref.svd(a, full_matrices, compute_uv)),
                  multiple_results=True, jvp=_svd_jvp,
                  lower=Kernel(_lower_svd, available=lp.lapack_available(["gesdd"])))
svd_p.set(batch=leading_batch_rule(svd_p))
