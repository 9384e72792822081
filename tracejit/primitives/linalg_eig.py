"""eig: the eigendecomposition of general square matrices, as JAX's lax.linalg.eig defines it: eigenvalues w and,
as asked, left and right eigenvectors (in columns, each of unit norm with its largest component real, as LAPACK's
geev normalizes them), all complex whatever the input's dtype. Compiled, geev runs per matrix of the batch; a real
matrix's eigenvectors come from geev packed (a complex pair shares two real columns) and are unpacked.

The jvp is JAX's: w' = diag(v^-1 a' v) always; the eigenvectors' derivative (non-degenerate perturbation theory,
through LAPACK's normalization) only with enable_eigvec_derivs=True, since it is valid only for distinct
eigenvalues, which cannot be checked while tracing."""
import numpy as np

from ..backend.rules import Kernel
from ..core.ad_util import aval, instantiate
from ..core.avals import ShapedArray
from ..core.ops import ops
from ..core.trace import Primitive
from . import linalg_lapack as lp
from .linalg_factor import check_matrix
from .linalg_reference import nan_on_failure
from .matrix_ops import as_dtype_of, conj, const, diagonal, eye, leading_batch_rule, matmul, mH, mT


def _complex(dtype):
    return np.result_type(dtype, np.complex64)


def _eig_shape(a, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs):
    check_matrix("eig", a, square=True)
    dtype = _complex(a.dtype)
    vectors = [ShapedArray(a.shape, dtype)] * (compute_left_eigenvectors + compute_right_eigenvectors)
    return [ShapedArray(a.shape[:-1], dtype), *vectors]


def _normalized(v):
    """Columns of unit norm whose largest entry is real (and positive), as geev leaves its eigenvectors."""
    v = v / np.linalg.norm(v, axis=-2, keepdims=True)
    largest = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return v * (np.abs(largest) / largest)


def _eig_impl(a, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs):
    """numpy's eig (geev) with complex results; the left eigenvectors from the inverse of the right ones (its rows
    are their conjugates, up to scale), normalized as geev does, except that geev leaves the sign of the real
    largest entry to its algorithm and this makes it positive: compiled and eager left eigenvectors may differ
    by a sign per column."""
    a = np.asarray(a)
    dtype = _complex(a.dtype)

    def decompose(m):
        w, vr = np.linalg.eig(m)
        vl = _normalized(np.swapaxes(np.linalg.inv(vr), -1, -2).conj()) if compute_left_eigenvectors else vr
        return w.astype(dtype), vl.astype(dtype), vr.astype(dtype)

    w, vl, vr = nan_on_failure(decompose, a)
    return [w] + [vl] * compute_left_eigenvectors + [vr] * compute_right_eigenvectors


def _eigenvector_jvp(w, v, da):
    """JAX's rule: with P = v^-1 a' v and F_ij = 1 / (w_j - w_i) off the diagonal, v' = v (F * P) + v c, the
    scales c fixed by LAPACK's normalization (unit norm, largest component real)."""
    shape = aval(v).shape
    nd, n = len(shape), shape[-1]
    batch = tuple(range(nd - 2))
    eye_n = eye(n, v, shape[:-2])
    w_cols = ops.broadcast_in_dim(w, shape=shape, broadcast_dimensions=batch + (nd - 1,))
    w_rows = ops.broadcast_in_dim(w, shape=shape, broadcast_dimensions=batch + (nd - 2,))
    fmat = ops.sub(ops.div(const(1, v), ops.sub(ops.add(eye_n, w_cols), w_rows)), eye_n)
    p = matmul(ops.solve(v, da, transpose_a=False), v)
    u = matmul(v, ops.mul(fmat, p))
    largest = ops.argmax(ops.abs(v), axes=(nd - 2,), index_dtype=np.dtype(np.int32))
    rows = ops.iota(dtype=np.dtype(np.int32), shape=shape, dimension=nd - 2)
    spread = ops.broadcast_in_dim(largest, shape=shape, broadcast_dimensions=batch + (nd - 1,))
    mask = as_dtype_of(ops.eq(rows, spread), v)

    def column_sums(x):
        return ops.reduce_sum(x, axes=(nd - 2,))

    c = ops.complex(ops.neg(ops.real(column_sums(ops.mul(conj(v), u)))),
                    ops.div(ops.neg(ops.imag(column_sums(ops.mul(mask, u)))), ops.real(column_sums(ops.mul(mask, v)))))
    c = ops.broadcast_in_dim(c, shape=shape, broadcast_dimensions=batch + (nd - 1,))
    return diagonal(p), ops.add(u, ops.mul(v, c))


def _eig_jvp(primals, tangents, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs):
    (a,), (da,) = primals, tangents
    if (compute_left_eigenvectors or compute_right_eigenvectors) and not enable_eigvec_derivs:
        raise NotImplementedError("eig: the derivatives of eigenvectors of a non-symmetric matrix hold only for "
                                  "distinct eigenvalues, which cannot be checked while tracing; pass "
                                  "enable_eigvec_derivs=True to tracejit.lax.linalg.eig to take them (as in JAX)")
    params = {"compute_left_eigenvectors": compute_left_eigenvectors, "compute_right_eigenvectors": True,
              "enable_eigvec_derivs": enable_eigvec_derivs}
    outs = ops.eig(a, **params)
    w, vr = outs[0], outs[-1]
    da = as_dtype_of(instantiate(da), vr)
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        return [w], [ops.reduce_sum(ops.mul(ops.solve(vr, da, transpose_a=False), mT(vr)), axes=(aval(a).ndim - 1,))]
    dw, dvr = _eigenvector_jvp(w, vr, da)
    primals_out, tangents_out = [w], [dw]
    if compute_left_eigenvectors:
        primals_out.append(outs[1])
        tangents_out.append(_eigenvector_jvp(conj(w), outs[1], mH(da))[1])
    if compute_right_eigenvectors:
        primals_out.append(vr)
        tangents_out.append(dvr)
    return primals_out, tangents_out


def _lower_eig(k, outs, ins, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs):
    """geev per matrix on a scratch copy (row-major: LAPACKE transposes); for a real matrix the eigenvalues'
    parts and the packed eigenvectors land in scratch memory and are unpacked. NaN where geev fails."""
    (a,) = ins
    w, *vectors = outs
    vl = vectors[0] if compute_left_eigenvectors else None
    vr = vectors[-1] if compute_right_eigenvectors else None
    dtype, n = a.aval.dtype, a.aval.shape[-1]
    real = dtype.kind == "f"
    nn = k.b.iop("mul", n, n)
    # a's copy; for a real a also the packed vl and vr, then wr and wi
    scratch = lp.malloc(k, k.b.iop("mul", k.b.iop("add", k.b.iop("mul", nn, 3), k.b.iop("mul", n, 2)) if real else nn,
                                   dtype.itemsize))

    def at(elements):
        return lp.offset(k, scratch, elements, dtype)

    packed = [lp.View(at(k.b.iop("mul", nn, j)), (n, n), dtype) for j in (1, 2)] if real else None
    parts = [at(k.b.iop("add", k.b.iop("mul", nn, 3), k.b.iop("mul", n, j))) for j in (0, 1)] if real else None
    lead = lp.ints(k, lp.at_least_1(k, n))
    with lp.each_matrix(k, a.aval.shape) as i:
        am, wv = lp.item(k, a, i), lp.item(k, w, i, core=1)
        lvec, rvec = (lp.item(k, x, i) if x is not None else None for x in (vl, vr))
        lp.copy(k, scratch, am.ptr, k.b.iop("mul", nn, dtype.itemsize))
        targets = packed if real else [lvec, rvec]
        values = [f"ptr {parts[0]}", f"ptr {parts[1]}"] if real else [f"ptr {wv.ptr}"]
        args = [f"i32 {lp.lapack_constant('ROW_MAJOR')}", lp.char("V" if vl is not None else "N"),
                lp.char("V" if vr is not None else "N"), *lp.ints(k, n), f"ptr {scratch}", *lead, *values]
        for t, wanted in zip(targets, (vl, vr)):
            args += [f"ptr {t.ptr if wanted is not None else 'null'}", *lead]
        info = lp.call(k, "geev", dtype, args)
        if real:
            _unpack(k, parts, packed, wv, [(lvec, packed[0]), (rvec, packed[1])], n)
        with k.f.when(lp.nonzero(k, info)):
            lp.fill_vector(k, wv, lp.NAN)
            for x in (lvec, rvec):
                if x is not None:
                    lp.fill(k, x, lp.NAN)
    lp.free(k, scratch)


def _unpack(k, parts, packed, w, pairs, n):
    """w = wr + i wi; each complex pair of eigenvalues (wi[j] > 0, wi[j + 1] = -wi[j]) has the eigenvectors
    x +- i y with x, y the packed columns j and j + 1; a real eigenvalue's column is real."""
    b = k.b
    part = packed[0].aval.dtype
    wr, wi = (lp.View(p, (n,), part) for p in parts)
    zero = b.const(0, part)
    last = b.iop("sub", n, 1)
    with k.loop(0, n) as j:
        im = k.load(wi, [j])
        k.store(w, [j], (k.load(wr, [j]), im))
        first, second = b.cmp("gt", im, zero, dtype=part), b.cmp("lt", im, zero, dtype=part)
        re_col = b.select(second, b.iop("sub", j, 1), j, dtype=np.int64)
        im_col = b.select(first, b.clamp_index(b.iop("add", j, 1), 0, last), j, dtype=np.int64)
        for out, src in pairs:
            if out is None:
                continue
            with k.loop(0, n) as r:
                y = k.load(src, [r, im_col])
                y = b.select(first, y, b.select(second, k.f.emit(f"fneg {b.ty(part)} {y}"), zero, dtype=part),
                             dtype=part)
                k.store(out, [r, j], (k.load(src, [r, re_col]), y))


eig_p = Primitive("eig", _eig_shape, _eig_impl, multiple_results=True, jvp=_eig_jvp,
                  lower=Kernel(_lower_eig, available=lp.lapack_available(["geev"])))
eig_p.set(batch=leading_batch_rule(eig_p))
