"""lstsq: the minimum-norm least-squares solution x of a x = b (a (..., m, n), b (..., m, r)) with the singular values
of a below rcond times the largest taken as zero, and those singular values: what JAX's lstsq computes from the SVD
of a. A primitive so that compiled code calls gelsd, LAPACK's divide-and-conquer solve that never forms the singular
vectors (NumPy's lstsq): 512 x 512 f64 with 2 right-hand sides took 54 ms through the vectors, NumPy 33. Its
derivative is JAX's, that of the SVD formula."""
import numpy as np

from ..backend.rules import Kernel
from ..core.ad_util import Zero, aval
from ..core.avals import ShapedArray, real_dtype
from ..core.errors import ShapeError
from ..core.ops import ops
from ..core.trace import Primitive
from . import linalg_lapack as lp
from .linalg_factor import check_matrix, svd_p
from .matrix_ops import as_dtype_of, const, leading_batch_rule, matmul, mH


def _shape(a, b, rcond):
    check_matrix("lstsq", a)
    check_matrix("lstsq", b)
    if a.dtype != b.dtype or a.shape[:-2] != b.shape[:-2] or a.shape[-2] != b.shape[-2]:
        raise ShapeError(f"lstsq: needs a (..., m, n) and b (..., m, r) of one dtype, got {a.str_short()} and "
                         f"{b.str_short()}")
    m, n = a.shape[-2:]
    return [ShapedArray(a.shape[:-2] + (n, b.shape[-1]), a.dtype),
            ShapedArray(a.shape[:-2] + (min(m, n),), real_dtype(a.dtype))]


def _impl(a, b, rcond):
    a, b = np.asarray(a), np.asarray(b)
    m, n = a.shape[-2:]
    x = np.zeros(a.shape[:-2] + (n, b.shape[-1]), a.dtype)
    s = np.zeros(a.shape[:-2] + (min(m, n),), real_dtype(a.dtype))
    for i in np.ndindex(a.shape[:-2]):
        if m and n:
            x[i], _, _, s[i] = np.linalg.lstsq(a[i], b[i], rcond=rcond)
    return [x, s]


def kept(s, rcond):
    """Where the singular values s (..., k), largest first, count: above zero and at least rcond times the largest
    (JAX's mask; the rank counts it)."""
    shape = aval(s).shape
    largest = ops.slice(s, start_indices=(0,) * len(shape), limit_indices=shape[:-1] + (min(shape[-1], 1),),
                        strides=None)
    if shape[-1]:
        largest = ops.broadcast_in_dim(largest, shape=shape, broadcast_dimensions=tuple(range(len(shape))))
    return ops.and_(ops.gt(s, const(0, s)), ops.ge(s, ops.mul(largest, const(rcond, s))))


def _inverses(s, rcond):
    """1 / s where s counts, else 0."""
    mask = kept(s, rcond)
    return ops.select_n(mask, const(0, s), ops.div(const(1, s), ops.select_n(mask, const(1, s), s)))


def _jvp(primals, tangents, rcond):
    """Of x = V (s_inv (U^H b)) with the mask held: the SVD's tangents (its own rule) carried through the formula."""
    (a, b), (da, db) = primals, tangents
    (s, u, vt), (ds, du, dvt) = svd_p.jvp((a,), (da,), full_matrices=False, compute_uv=True)
    s_inv = _inverses(s, rcond)

    def spread(v):      # (..., k) along the rows of (..., k, r), in b's dtype
        return as_dtype_of(ops.broadcast_in_dim(v, shape=aval(v).shape + (aval(b).shape[-1],),
                                                broadcast_dimensions=tuple(range(aval(v).ndim))), b)
    c = matmul(mH(u), b)
    y = ops.mul(spread(s_inv), c)
    dc = matmul(mH(du), b) if isinstance(db, Zero) else ops.add(matmul(mH(du), b), matmul(mH(u), db))
    dy = ops.add(ops.mul(spread(ops.neg(ops.mul(ops.mul(s_inv, s_inv), ds))), c), ops.mul(spread(s_inv), dc))
    return [matmul(mH(vt), y), s], [ops.add(matmul(mH(dvt), y), matmul(mH(vt), dy)), ds]


# rows * cols * min(rows, cols) up to which gelsd runs on the calling thread alone (linalg_lapack's SMALL_LAPACK is
# 64x less): 512 x 512 with 2 right-hand sides took 38-107 ms on one thread, 115-237 on OpenBLAS's two, while other
# processes kept the cores busy (2-core VM, NumPy's lstsq with either thread count, min-median of 20); the two threads'
# best, 33 ms, came from a quiet machine.
CALLING_THREAD_GELSD = 1 << 28


def _lower(k, outs, ins, rcond):
    """gelsd per matrix, column-major: a transposed into a copy, b into the first m rows of an (n or m) x r one (zero
    where gelsd returns at once, m or n 0), x read back from its first n rows; NaN where it does not converge."""
    (x, s), (a, b) = outs, ins
    m, n = a.aval.shape[-2:]
    r = b.aval.shape[-1]
    rows = k.b.intrinsic("smax", k.b.size(m), k.b.size(n), dtype=np.int64)
    scratch = lp.malloc(k, lp.nbytes(k, ShapedArray(a.aval.shape[-2:], a.aval.dtype)))
    right_size = k.b.iop("mul", k.b.iop("mul", rows, k.b.size(r)), a.aval.dtype.itemsize)
    right = lp.malloc(k, right_size)
    cols = lp.View(right, (r, rows), a.aval.dtype)      # b and x column by column
    rank = lp.stack_array(k, lp.int_type(), 1)
    static = all(isinstance(d, int) for d in (m, n))
    with lp.each_matrix(k, a.aval.shape, alone=static and m * n * min(m, n) <= CALLING_THREAD_GELSD) as i:
        lp.transpose_into(k, lp.View(scratch, (n, m), a.aval.dtype), lp.item(k, a, i))
        k.line(f"call void @llvm.memset.p0.i64(ptr {right}, i8 0, i64 {right_size}, i1 false)")
        bi, xi, sv = lp.item(k, b, i), lp.item(k, x, i), lp.item(k, s, i, core=1)
        with k.loop(0, r) as j, k.loop(0, m) as row:
            k.store(cols, [j, row], k.load(bi, [row, j]))
        info = lp.call(k, "gelsd", a.aval.dtype, [
            f"i32 {lp.lapack_constant('COL_MAJOR')}", *lp.ints(k, m, n, r), f"ptr {scratch}", *lp.ints(k, lp.at_least_1(k, m)),
            f"ptr {right}", *lp.ints(k, lp.at_least_1(k, rows)), f"ptr {sv.ptr}",
            lp.scalar(k, rcond, real_dtype(a.aval.dtype)), f"ptr {rank}"])
        with k.loop(0, n) as row, k.loop(0, r) as j:
            k.store(xi, [row, j], k.load(cols, [j, row]))
        with k.f.when(lp.nonzero(k, info)):
            lp.fill(k, xi, lp.NAN)
            lp.fill_vector(k, sv, lp.NAN)
    lp.free(k, scratch)
    lp.free(k, right)


lstsq_p = Primitive("lstsq", _shape, _impl, multiple_results=True, jvp=_jvp,
                    lower=Kernel(_lower, available=lp.lapack_available(["gelsd"])))
lstsq_p.set(batch=leading_batch_rule(lstsq_p))
