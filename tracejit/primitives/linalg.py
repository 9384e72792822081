"""dot_general: contraction with batch dimensions, the one primitive behind dot, matmul and einsum. Its lowering
calls the BLAS numpy ships (cblas gemm) where the layouts allow, and loops otherwise."""
import functools
import math

import numpy as np

from ..backend.rules import Kernel, memory_type
from ..core.ad_util import UndefinedPrimal, aval
from ..core.avals import HALF_FLOATS, ShapedArray, is_symbolic
from ..core.batching import batched_axis
from ..core.errors import ShapeError
from ..core.ops import ops, primitive
from ..core.trace import Primitive
from .base import partials_jvp
from .linalg_lapack import calling_thread_only


def _free_axes(ndim, contract, batch):
    return [i for i in range(ndim) if i not in contract and i not in batch]


def _dot_general_shape(lhs, rhs, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    if lhs.dtype != rhs.dtype or lhs.dtype.kind == "b":
        raise TypeError(f"dot_general: operands must share a numeric dtype, got {lhs.str_short()} and "
                        f"{rhs.str_short()}")
    if lhs.dtype in HALF_FLOATS:
        raise TypeError(f"dot_general: {lhs.dtype} operands are multiplied in float32 (the conversions explicit "
                        "in the IR): use tracejit.lax.dot_general or tracejit.numpy, which convert")
    if (len(lc) != len(rc) or len(lb) != len(rb)
            or any(not 0 <= a < lhs.ndim for a in lc + lb) or any(not 0 <= a < rhs.ndim for a in rc + rb)
            or any(lhs.shape[a] != rhs.shape[b] for a, b in zip(lc + lb, rc + rb))):
        raise ShapeError(f"dot_general: shapes {lhs.shape} and {rhs.shape} do not agree on contracting "
                         f"dimensions {lc}/{rc} and batch dimensions {lb}/{rb}")
    shape = ([lhs.shape[a] for a in lb] + [lhs.shape[a] for a in _free_axes(lhs.ndim, lc, lb)]
             + [rhs.shape[a] for a in _free_axes(rhs.ndim, rc, rb)])
    return ShapedArray(shape, lhs.dtype, lhs.weak_type and rhs.weak_type)


def _dot_general_impl(lhs, rhs, dimension_numbers):
    """np.matmul of (batch..., free, contracted) by (batch..., contracted, free), the BLAS's for floats: np.einsum
    planned its path on every call (20 us of an eager dot of two 100-vectors' 38)."""
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    lf, rf = _free_axes(lhs.ndim, lc, lb), _free_axes(rhs.ndim, rc, rb)
    batch, (m, k, n) = [lhs.shape[a] for a in lb], (math.prod(x.shape[a] for a in axes)
                                                     for x, axes in ((lhs, lf), (lhs, lc), (rhs, rf)))
    left = lhs.transpose([*lb, *lf, *lc]).reshape(*batch, m, k)
    right = rhs.transpose([*rb, *rc, *rf]).reshape(*batch, k, n)
    out = np.matmul(left, right)
    return out.reshape(batch + [lhs.shape[a] for a in lf] + [rhs.shape[a] for a in rf]).astype(lhs.dtype, copy=False)


def dot_general(lhs, rhs, dimension_numbers):
    """The dot_general primitive, with 16-bit float operands multiplied in float32 (by the BLAS's sgemm) and
    the product rounded once, as NumPy's and ml_dtypes' accumulate in float32."""
    dtype = aval(lhs).dtype
    if dtype not in HALF_FLOATS:
        return ops.dot_general(lhs, rhs, dimension_numbers=dimension_numbers)
    lhs, rhs = (ops.convert_element_type(x, new_dtype=np.dtype(np.float32), weak_type=False) for x in (lhs, rhs))
    product = ops.dot_general(lhs, rhs, dimension_numbers=dimension_numbers)
    return ops.convert_element_type(product, new_dtype=dtype, weak_type=False)


_dot = dot_general


def _transpose_lhs(ct, lhs_aval, rhs, dimension_numbers, ans_lhs_first=True):
    """Cotangent of the lhs: contract ct with rhs over rhs's free axes, then put lhs's axes back in order.
    The output of dot_general is (batch, lhs free, rhs free); ans_lhs_first=False when lhs and rhs were
    swapped to transpose the rhs, so the output holds (batch, other free, our free)."""
    (lc, rc), (lb, rb) = dimension_numbers
    rhs_ndim = aval(rhs).ndim
    lhs_free = _free_axes(lhs_aval.ndim, lc, lb)
    rhs_free = _free_axes(rhs_ndim, rc, rb)
    nb = len(lb)
    if ans_lhs_first:
        ct_rhs_free = list(range(nb + len(lhs_free), nb + len(lhs_free) + len(rhs_free)))
    else:
        ct_rhs_free = list(range(nb, nb + len(rhs_free)))
    dims = ((tuple(ct_rhs_free), tuple(rhs_free)), (tuple(range(nb)), tuple(rb)))
    # result axes: (batch, ct's remaining = lhs free, rhs's remaining = rhs contract in sorted order);
    # with the operands swapped the two groups trade places, which spares a transpose when it puts lhs's
    # axes in order (the weight gradient x.T @ ct of x @ w).
    contract_in_rhs_order = [lc[i] for i in np.argsort(rc)]
    in_order = list(range(lhs_aval.ndim))
    if list(lb) + lhs_free + contract_in_rhs_order == in_order:
        return _dot(ct, rhs, dims)
    if list(lb) + contract_in_rhs_order + lhs_free == in_order:
        return _dot(rhs, ct, ((tuple(rhs_free), dims[0][0]), (tuple(rb), dims[1][0])))
    permutation = tuple(np.argsort(list(lb) + lhs_free + contract_in_rhs_order).tolist())
    return ops.transpose(_dot(ct, rhs, dims), permutation=permutation)


def _dot_general_transpose(ct, lhs, rhs, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    if isinstance(lhs, UndefinedPrimal):
        return [_transpose_lhs(ct, lhs.aval, rhs, dimension_numbers), None]
    swapped = ((rc, lc), (rb, lb))
    return [None, _transpose_lhs(ct, rhs.aval, lhs, swapped, ans_lhs_first=False)]


def _dot_general_batch(args, dims, dimension_numbers):
    """Both operands batched: one more batch dimension. One batched: its batch axis is one more free axis of
    that side, so nothing is broadcast or moved."""
    (lhs, rhs), (ld, rd) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers

    def shift(axes, d):
        return tuple(batched_axis(a, d) for a in axes) if d is not None else axes

    lc2, rc2, lb2, rb2 = shift(lc, ld), shift(rc, rd), shift(lb, ld), shift(rb, rd)
    if ld is not None and rd is not None:
        return _dot(lhs, rhs, ((lc2, rc2), ((ld,) + lb2, (rd,) + rb2))), 0
    if ld is not None:
        out_dim = len(lb) + _free_axes(aval(lhs).ndim, lc2, lb2).index(ld)
    else:
        out_dim = len(lb) + len(_free_axes(aval(lhs).ndim, lc, lb)) + _free_axes(aval(rhs).ndim, rc2, rb2).index(rd)
    return _dot(lhs, rhs, ((lc2, rc2), (lb2, rb2))), out_dim


def _gemm_layout(ndim, batch, rows, cols):
    """"N" (NoTrans) / "T" (Trans) when an operand's axes are laid out as (batch, rows, cols) / (batch, cols,
    rows): a matrix per batch element that the BLAS reads as it is; else None."""
    order = list(range(ndim))
    return "N" if order == [*batch, *rows, *cols] else "T" if order == [*batch, *cols, *rows] else None


def _dot_general_simplify(eqn, producer):
    """A transposed operand folds into the dimension numbers where the output order stays and the product can
    read the original layout as it is: a loop (`_as_loop`) reads any layout (a.T @ v over 2048 x 2048 f32 took
    45x NumPy's time as a transposed read), the BLAS a transposed matrix (a.T @ b: a gemm with TransA, not a copy
    and a gemm). A product that is no matrix product then becomes a loop."""
    expanded = _as_loop(eqn)
    if expanded is None and eqn.outvars[0].aval.dtype.kind not in "fc":
        return None
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    sides = [list(eqn.inputs), [lc, rc], [lb, rb]]
    for side in (0, 1):
        t = producer(eqn.inputs[side])
        if t is None or t.prim is not primitive("transpose"):
            continue
        perm, ndim = t.params["permutation"], len(t.params["permutation"])
        contract, batch = sides[1][side], sides[2][side]
        free = [perm[a] for a in _free_axes(ndim, contract, batch)]
        contract, batch = tuple(perm[a] for a in contract), tuple(perm[a] for a in batch)
        layout = (batch, free, contract) if side == 0 else (batch, contract, free)
        if free == sorted(free) and (expanded is not None or _gemm_layout(ndim, *layout) is not None):
            sides[0][side], sides[1][side], sides[2][side] = t.inputs[0], contract, batch
    if sides[0] == list(eqn.inputs):
        return expanded
    return dot_general_p, sides[0], {"dimension_numbers": (tuple(sides[1]), tuple(sides[2]))}


# Elements of a float matrix from which its product with a vector runs as a loop nest (`_as_loop`), not a gemm:
# OpenBLAS's gemm with n = 1 took 3.6 us at 256 x 256 f32 against the loop's 5.0, 12.7 against 10.0 at 512 x 512,
# 267 against 46-50 at 1024 x 1024 (it runs on one thread); a batch of them counts whole (one gemm call each:
# 256 x 64 x 64 took 142 us as gemms, 58 as a loop).
MATVEC_LOOP = 1 << 18
# ... up to this many: a larger float matrix times a vector (no batch) calls the BLAS's gemv, as NumPy does. Alone the
# loop and gemv ran alike at 1024 x 1024 f32 (46-50 us), but between NumPy's calls OpenBLAS's threads, polling
# after each, kept the loop's threads off the cores: 161 us against gemv's 48 (f64 409 / 221; 2048: 888 / 455).
GEMV_FROM = 1 << 19


def _as_loop(eqn):
    """A product with a side that has no free axis (a matrix times a vector from MATVEC_LOOP elements on, a dot,
    einsum("ij,ij->i")) or with no contracting axis (an outer product), as the function computing it with a
    product and a sum: one fused loop nest, which reads the matrix in its own order, runs over the threads and
    fuses with what surrounds it. The BLAS gemm took these with m, n or k = 1: x @ v over 2048 x 2048 f32 took
    3.7x NumPy's gemv, v @ x 7.4x and a dot of 1e6 3x its sdot."""
    (lc, rc), (lb, rb) = (map(list, pair) for pair in eqn.params["dimension_numbers"])
    lhs, rhs = (x.aval for x in eqn.inputs)
    lf, rf = _free_axes(lhs.ndim, lc, lb), _free_axes(rhs.ndim, rc, rb)
    if lc and lf and rf:
        return None
    if not lc:     # the product's axes: the output's
        shape, nb, nl = [*(lhs.shape[a] for a in lb + lf), *(rhs.shape[a] for a in rf)], len(lb), len(lf)
        places = [(lb + lf, [*range(nb + nl)]), (rb + rf, [*range(nb), *range(nb + nl, len(shape))])]

        def outer(x, y):
            return ops.mul(*(_moved(v, axes, at, shape) for v, (axes, at) in zip((x, y), places)))
        return outer
    # the product's axes: those of the side with free axes (the matrix), in its own order
    m_side = 1 if rf else 0
    (m_c, v_c), (m_b, v_b) = ((lc, rc), (lb, rb)) if m_side == 0 else ((rc, lc), (rb, lb))
    matrix = (lhs, rhs)[m_side]
    if (lf or rf) and lhs.dtype.kind in "fc" and not is_symbolic(matrix.shape) and (
            matrix.size < MATVEC_LOOP or _by_gemv(lhs, rhs, eqn.params["dimension_numbers"])):
        return None
    partner = dict(zip(v_c + v_b, m_c + m_b))      # an axis of the vector side -> the matrix's axis
    kept = [a for a in range(matrix.ndim) if a not in m_c]
    order = [*(kept.index(a) for a in m_b), *(kept.index(a) for a in kept if a not in m_b)]

    def product_sum(x, y):
        m, v = (x, y) if m_side == 0 else (y, x)
        axes = sorted(partner, key=partner.get)
        v = _moved(v, axes, [partner[a] for a in axes], matrix.shape)
        total = ops.reduce_sum(ops.mul(*((m, v) if m_side == 0 else (v, m))), axes=tuple(sorted(m_c)))
        return total if order == sorted(order) else ops.transpose(total, permutation=tuple(order))
    return product_sum


def _by_gemv(lhs, rhs, dimension_numbers):
    """Whether a product of these avals is an unbatched product of a static matrix of GEMV_FROM elements or more
    and a vector, which the BLAS's gemv computes."""
    from ..backend import blas  # (see _lower_dot_general)
    (lc, _), (lb, _) = dimension_numbers
    matrix = lhs if lhs.ndim == 2 else rhs
    return (not lb and len(lc) == 1 and sorted((lhs.ndim, rhs.ndim)) == [1, 2] and not is_symbolic(matrix.shape)
            and matrix.size >= GEMV_FROM and blas.gemv_address(lhs.dtype) is not None
            and 0 not in lhs.shape + rhs.shape)


def _moved(x, axes, at, shape):
    """x with its axes `axes` (all of them, in this order) placed at positions `at` (increasing) of `shape`."""
    if list(axes) != sorted(axes):
        x = ops.transpose(x, permutation=tuple(axes))
    return ops.broadcast_in_dim(x, shape=tuple(shape), broadcast_dimensions=tuple(at))


def _at_least_1(b, x):
    return max(x, 1) if isinstance(x, int) else b.intrinsic("smax", x, 1, dtype=np.int64)


def _blas_int(b, x, it):
    """An i64 size as the BLAS integer type."""
    return x if isinstance(x, int) or it == "i64" else b(f"trunc i64 {x} to {it}")


def _dot_general_route(eqn):
    """How _lower_dot_general computes eqn: through the BLAS, or with loops."""
    # Imported here for the reason _lower_dot_general gives.
    from ..backend import blas
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    (lhs, rhs), dtype = (x.aval for x in eqn.inputs), eqn.outvars[0].aval.dtype
    gemm = (blas.gemm_address(dtype) is not None and 0 not in lhs.shape and 0 not in rhs.shape
            and _gemm_layout(lhs.ndim, lb, _free_axes(lhs.ndim, lc, lb), lc) is not None
            and _gemm_layout(rhs.ndim, rb, rc, _free_axes(rhs.ndim, rc, rb)) is not None)
    return "loops" if not gemm else "BLAS gemv" if _by_gemv(lhs, rhs, eqn.params["dimension_numbers"]) else "BLAS gemm"


def _small_gemm(lhs, out, dimension_numbers):
    """Whether each gemm call of a dot_general with these avals has static sizes and at most blas.SMALL_GEMM
    multiply-adds (it then runs on the calling thread alone; a larger one runs OpenBLAS's own threads)."""
    from ..backend import blas  # (see _lower_dot_general)
    (lc, _), (lb, _) = dimension_numbers
    if is_symbolic(lhs.shape) or is_symbolic(out.shape):
        return False
    return out.size // max(math.prod(lhs.shape[a] for a in lb), 1) * math.prod(lhs.shape[a] for a in lc) <= \
        blas.SMALL_GEMM


def _gemm_threads(eqn):
    """Whether eqn's gemm calls run OpenBLAS's own threads (rules.Kernel's library_threads)."""
    route = _dot_general_route(eqn)
    return route == "BLAS gemv" or route == "BLAS gemm" and not _small_gemm(eqn.inputs[0].aval, eqn.outvars[0].aval,
                                                                       eqn.params["dimension_numbers"])


def _lower_dot_general(k, outs, ins, dimension_numbers):
    """The BLAS numpy ships (cblas gemm per batch element) when both operands are row-major or
    transposed matrices per batch element; otherwise loops (any dtype) ordered for the innermost
    axis to be the rhs's free axis."""
    # Imported here, not at the top: the BLAS is looked up when code is generated, and the primitives import
    # without the backend (only its pure-Python rules module).
    from ..backend import blas
    (out,), (lhs, rhs) = outs, ins
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs, dtype = lhs.aval.shape, rhs.aval.shape, out.aval.dtype
    lf, rf = _free_axes(len(ls), lc, lb), _free_axes(len(rs), rc, rb)
    b = k.b
    m, n, kk, batch = (functools.reduce(lambda x, y: b.iop("mul", x, y), [shape[a] for a in axes], 1)
                       for shape, axes in ((ls, lf), (rs, rf), (ls, lc), (ls, lb)))
    if m == 0 or n == 0 or batch == 0:
        return
    ta, tb = _gemm_layout(len(ls), lb, lf, lc), _gemm_layout(len(rs), rb, rc, rf)
    address = blas.gemm_address(dtype) if kk != 0 else None
    if address is not None and ta is not None and tb is not None:
        # Symbolic sizes may be 0 at run time: the BLAS then zeroes C (beta 0), given leading dims >= 1.
        it = f"i{blas.gemm_int_bits()}"
        ty = memory_type(dtype)
        alpha, beta = (f"{ty} {b.const(v, dtype)}" if dtype.kind == "f" else
                       f"ptr {k.f.module.array(np.array(v, dtype))}" for v in (1, 0))   # complex: by pointer
        small = _small_gemm(lhs.aval, out.aval, dimension_numbers)
        lda, ldb = (kk if ta == "N" else m), (n if tb == "N" else kk)
        trans = {"N": blas.NO_TRANS, "T": blas.TRANS}
        sizes = [(lhs, b.iop("mul", m, kk)), (rhs, b.iop("mul", kk, n)), (out, b.iop("mul", m, n))]
        m, n, kk, lda, ldb, ldc = (_blas_int(b, x, it) for x in (m, n, kk, _at_least_1(b, lda),
                                                                 _at_least_1(b, ldb), _at_least_1(b, n)))
        if _by_gemv(lhs.aval, rhs.aval, dimension_numbers):
            _call_gemv(k, (lhs, rhs, out), (m, n, kk), (ta, tb), it)
            return
        with calling_thread_only(k, small), k.loop(0, batch) as i:     # blas.SMALL_GEMM
            a, bm, c = (k.f.emit(f"getelementptr {ty}, ptr {buf.ptr}, i64 {b.iop('mul', i, size)}")
                        for buf, size in sizes)
            gemm = k.f.module.symbol(address, f"tj_gemm_{dtype.name}")
            k.line(f"call void {gemm}(i32 {blas.ROW_MAJOR}, i32 {trans[ta]}, i32 {trans[tb]}, "
                   f"{it} {m}, {it} {n}, {it} {kk}, {alpha}, ptr {a}, {it} {lda}, "
                   f"ptr {bm}, {it} {ldb}, {beta}, ptr {c}, {it} {ldc})")
        return
    with k.loop_nest(out.aval.shape) as i:
        k.store(out, i, b.const(0, dtype))
    if kk == 0:
        return
    with k.loop_nest([ls[a] for a in lb] + [ls[a] for a in lf] + [ls[a] for a in lc] + [rs[a] for a in rf]) as i:
        nb, nl, nc = len(lb), len(lf), len(lc)
        ib, il, ic, ir = i[:nb], i[nb:nb + nl], i[nb + nl:nb + nl + nc], i[nb + nl + nc:]
        li, ri = [0] * len(ls), [0] * len(rs)
        for axes, values in ((lb, ib), (lf, il), (lc, ic)):
            for a, v in zip(axes, values):
                li[a] = v
        for axes, values in ((rb, ib), (rf, ir), (rc, ic)):
            for a, v in zip(axes, values):
                ri[a] = v
        oi = ib + il + ir
        product = b.binop("fmul", "mul", k.load(lhs, li), k.load(rhs, ri), dtype)
        k.store(out, oi, b.binop("fadd", "add", k.load(out, oi), product, dtype))


def _call_gemv(k, buffers, sizes, layouts, it):
    """out = lhs @ rhs where one side is a vector (m or n is 1), by the BLAS's gemv on the matrix as stored."""
    from ..backend import blas  # (see _lower_dot_general)
    (lhs, rhs, out), (m, n, kk), (ta, tb) = buffers, sizes, layouts
    if n == 1:      # matrix @ vector: op(A) is m x kk
        matrix, vector, (rows, cols), trans = lhs, rhs, ((m, kk) if ta == "N" else (kk, m)), ta == "T"
    else:           # vector @ matrix: y = op(B)^T x, op(B) kk x n
        matrix, vector, (rows, cols), trans = rhs, lhs, ((kk, n) if tb == "N" else (n, kk)), tb == "N"
    dtype, b = out.aval.dtype, k.b
    ty, one, zero = memory_type(dtype), b.const(1, dtype), b.const(0, dtype)
    rows, cols, lda = (_blas_int(b, x, it) for x in (rows, cols, _at_least_1(b, cols)))
    gemv = k.f.module.symbol(blas.gemv_address(dtype), f"tj_gemv_{dtype.name}")
    k.line(f"call void {gemv}(i32 {blas.ROW_MAJOR}, i32 {blas.TRANS if trans else blas.NO_TRANS}, {it} {rows}, "
           f"{it} {cols}, {ty} {one}, ptr {matrix.ptr}, {it} {lda}, ptr {vector.ptr}, {it} 1, {ty} {zero}, "
           f"ptr {out.ptr}, {it} 1)")


dot_general_p = Primitive("dot_general", _dot_general_shape, _dot_general_impl, transpose=_dot_general_transpose,
                          batch=_dot_general_batch, simplify=_dot_general_simplify,
                          lower=Kernel(_lower_dot_general, describe=_dot_general_route, library_threads=_gemm_threads))
dot_general_p.set(jvp=partials_jvp(
    dot_general_p,
    lambda t, x, y, out, dimension_numbers: _dot(t, y, dimension_numbers),
    lambda t, x, y, out, dimension_numbers: _dot(x, t, dimension_numbers)))
