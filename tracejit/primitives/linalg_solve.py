"""Linear solves: triangular_solve as JAX's lax.linalg defines it, and solve (a general square system, a^-1 b or
a^-T b), with their derivatives, batching and lowering.

solve is a primitive, where JAX composes lu with custom_linear_solve, because tracejit.numpy sits below
custom_jvp: its jvp, x' = a^-1 (b' - a' x), and its transpose, a^-T, are JAX's custom_linear_solve rules, so
derivatives of every order cost solves, not the derivative of an LU factorization. Compiled, a large system is
factored by getrf and solved by two trsm calls without a transpose; small real ones (n <= linalg_small.SMALL)
are solved by generated code, which beats a LAPACK call's own overhead."""
import numpy as np

from ..backend.rules import Kernel
from ..core.ad_util import UndefinedPrimal, Zero, aval, instantiate
from ..core.errors import ShapeError
from ..core.ops import ops
from ..core.trace import Primitive
from . import linalg_lapack as lp
from . import linalg_reference as ref
from .base import partials_jvp
from .linalg_factor import check_matrix
from .linalg_small import SMALL, emit_small_solve
from .matrix_ops import conj, leading_batch_rule, matmul, mT, tril, triu


def _check_pair(name, a, b, common_axis):
    check_matrix(name, a, square=True)
    check_matrix(name, b)
    if a.dtype != b.dtype:
        raise TypeError(f"{name}: needs a and b of one dtype, got {a.str_short()} and {b.str_short()}")
    if a.shape[:-2] != b.shape[:-2] or b.shape[common_axis] != a.shape[-1]:
        raise ShapeError(f"{name}: needs a (..., n, n) and b of the same batch shape sharing n (axis "
                         f"{common_axis}), got {a.str_short()} and {b.str_short()}")
    return b.strip_weak()


def _fold_rule(prim, fold_axis):
    """Batching for a primitive linear in b: when only b is batched, its batch axis joins b's axis
    fold_axis(params) (-1, the columns, or -2, the rows), so that one call solves every example; otherwise the
    batch axis leads every operand."""
    leading = leading_batch_rule(prim)

    def rule(args, dims, **params):
        (a, b), (da, db) = args, dims
        nd = aval(b).ndim
        to = nd + fold_axis(params)                         # where the batch axis goes, after the axis it joins
        perm = [d for d in range(nd) if d != db] if db is not None else []
        if db is not None:
            perm.insert(to, db)
        moved = aval(b).shape if db is None else tuple(aval(b).shape[d] for d in perm)
        if da is not None or db is None or not all(isinstance(d, int) for d in moved[to - 1:to + 1]):
            return leading(args, dims, **params)
        moved_b = ops.transpose(b, permutation=tuple(perm))
        folded = moved[:to - 1] + (moved[to - 1] * moved[to],) + moved[to + 1:]
        out = prim.bind(a, ops.reshape(moved_b, new_sizes=folded), **params)
        return ops.reshape(out, new_sizes=moved), to
    return rule

# ------------------------------------------------------------------------------------------ triangular_solve


def _triangular_solve_shape(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    return _check_pair("triangular_solve", a, b, -2 if left_side else -1)


def _triangular_solve_jvp_a(g_a, a, b, out, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """JAX's rule: x' = -op(a)^-1 op(a') x (or -x op(a') op(a)^-1), in whichever order costs less."""
    params = {"left_side": left_side, "lower": lower, "transpose_a": transpose_a, "conjugate_a": conjugate_a,
              "unit_diagonal": unit_diagonal}
    m, n = aval(b).shape[-2:]
    shift = 1 if unit_diagonal else 0
    g_a = ops.neg(tril(g_a, -shift) if lower else triu(g_a, shift))
    g_a = mT(g_a) if transpose_a else g_a
    g_a = conj(g_a) if conjugate_a else g_a

    def a_inverse(rhs):
        return ops.triangular_solve(a, rhs, **params)

    if left_side:
        return a_inverse(matmul(g_a, out)) if m > n else matmul(a_inverse(g_a), out)
    return a_inverse(matmul(out, g_a)) if m < n else matmul(out, a_inverse(g_a))


def _triangular_solve_transpose(ct, a, b, **params):
    if isinstance(a, UndefinedPrimal) or not isinstance(b, UndefinedPrimal):
        raise NotImplementedError("triangular_solve is linear in b only")
    if isinstance(ct, Zero):
        return [None, None]
    return [None, ops.triangular_solve(a, ct, **{**params, "transpose_a": not params["transpose_a"]})]


def _lower_triangular_solve(k, outs, ins, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """trsm per matrix on a copy of b: CBLAS takes row-major operands and the transpose as flags (ConjTrans for
    conjugate and transpose); a complex a conjugated but not transposed is conjugated into scratch memory."""
    (out,), (a, b) = outs, ins
    dtype = a.aval.dtype
    rows, cols = b.aval.shape[-2:]
    conjugate = conjugate_a and dtype.kind == "c"
    c = lp.lapack_constant
    trans = c("CONJ_TRANS" if conjugate else "TRANS") if transpose_a else c("NO_TRANS")
    flags = [c("ROW_MAJOR"), c("LEFT") if left_side else c("RIGHT"), c("LOWER") if lower else c("UPPER"), trans,
             c("UNIT") if unit_diagonal else c("NON_UNIT")]
    conjugated = None       # scratch for a conjugated copy of each matrix of a
    if conjugate and not transpose_a:
        conjugated = lp.malloc(k, lp.nbytes(k, a.aval.update(shape=a.aval.shape[-2:])))
    lp.copy(k, out.ptr, b.ptr, lp.nbytes(k, b.aval))
    with lp.each_matrix(k, b.aval.shape) as i:
        am, om = lp.item(k, a, i), lp.item(k, out, i)
        if conjugated is not None:
            am = lp.conjugate_into(k, lp.View(conjugated, am.aval.shape, dtype), am)
        _trsm(k, dtype, flags, rows, cols, am.ptr, lp.at_least_1(k, a.aval.shape[-1]), om.ptr,
              lp.at_least_1(k, cols))
    if conjugated is not None:
        lp.free(k, conjugated)


def _trsm(k, dtype, flags, rows, cols, a_ptr, lda, b_ptr, ldb):
    """cblas_trsm(*flags (layout, side, uplo, trans, diag), rows, cols, 1, a, lda, b, ldb), or for one column on
    the left cblas_trsv, which OpenBLAS runs several times faster (two 200 x 200 solves: 17 us against 51; NumPy's
    np.linalg.solve of one vector, its getrf included, 246)."""
    layout, side, uplo, trans, diag = (f"i32 {x}" for x in flags)
    if cols == 1 and flags[1] == lp.lapack_constant("LEFT"):
        lp.call(k, "cblas_trsv", dtype, [layout, uplo, trans, diag, *lp.ints(k, rows), f"ptr {a_ptr}",
                                      *lp.ints(k, lda), f"ptr {b_ptr}", *lp.ints(k, 1)], returns=False)
    else:
        lp.call(k, "cblas_trsm", dtype, [layout, side, uplo, trans, diag, *lp.ints(k, rows, cols),
                                      lp.scalar(k, 1, dtype), f"ptr {a_ptr}", *lp.ints(k, lda), f"ptr {b_ptr}",
                                      *lp.ints(k, ldb)], returns=False)


triangular_solve_p = Primitive("triangular_solve", _triangular_solve_shape, ref.triangular_solve,
                               transpose=_triangular_solve_transpose,
                               lower=Kernel(_lower_triangular_solve,
                                            available=lp.lapack_available(["cblas_trsm", "cblas_trsv"])))
triangular_solve_p.set(
    jvp=partials_jvp(triangular_solve_p, _triangular_solve_jvp_a,
                     lambda t, a, b, out, **params: ops.triangular_solve(a, t, **params)))
triangular_solve_p.set(batch=_fold_rule(triangular_solve_p, lambda params: -1 if params["left_side"] else -2))

# ---------------------------------------------------------------------------------------------------- solve


def _solve_shape(a, b, transpose_a):
    return _check_pair("solve", a, b, -2)


def _solve_jvp(primals, tangents, transpose_a):
    (a, b), (da, db) = primals, tangents
    x = ops.solve(a, b, transpose_a=transpose_a)
    if isinstance(da, Zero) and isinstance(db, Zero):
        return x, Zero(aval(x))
    rhs = instantiate(db)
    if not isinstance(da, Zero):
        rhs = ops.sub(rhs, matmul(mT(da) if transpose_a else da, x))
    return x, ops.solve(a, rhs, transpose_a=transpose_a)


def _solve_transpose(ct, a, b, transpose_a):
    if isinstance(a, UndefinedPrimal) or not isinstance(b, UndefinedPrimal):
        raise NotImplementedError("solve is linear in b only")
    if isinstance(ct, Zero):
        return [None, None]
    return [None, ops.solve(a, ct, transpose_a=not transpose_a)]


def _small(a_aval):
    """Whether a's systems are solved by generated code (real, a static n, 0 < n <= SMALL)."""
    n = a_aval.shape[-1]
    return a_aval.dtype.kind == "f" and isinstance(n, int) and 0 < n <= SMALL


def _lower_solve(k, outs, ins, transpose_a):
    (out,), (a, b) = outs, ins
    if _small(a.aval):
        emit_small_solve(k, out, a, b, transpose_a)
    else:
        _lapack_solve(k, out, a, b, transpose_a)


def _lapack_solve(k, out, a, b, transpose_a):
    """getrf of a's buffer read column-major, which is a^T = P^T L U, then a x = b is U^T L^T P x = b: two
    row-major trsm (the factors' transposes are the buffer's triangles as it is) and the row swaps in reverse;
    a^T x = b is P^T L U x = b: the swaps first, then the transposed triangles. Nothing is transposed."""
    dtype, c = a.aval.dtype, lp.lapack_constant
    n, m = b.aval.shape[-2:]
    work = lp.malloc(k, lp.nbytes(k, a.aval.update(shape=a.aval.shape[-2:])))
    ipiv = lp.pivot_vector(k, n)
    lda, ldb = lp.at_least_1(k, n), lp.at_least_1(k, m)

    def trsm(x, uplo, trans, diag):
        _trsm(k, dtype, [c(name) for name in ("ROW_MAJOR", "LEFT", uplo, trans, diag)], n, m, work, lda, x.ptr, ldb)

    lp.copy(k, out.ptr, b.ptr, lp.nbytes(k, b.aval))
    with lp.each_matrix(k, a.aval.shape, alone=lp.small_matrix((n, n)) and not _wide(n, m)) as i:
        x = lp.item(k, out, i)
        lp.copy(k, work, lp.item(k, a, i).ptr, lp.nbytes(k, a.aval.update(shape=a.aval.shape[-2:])))
        lp.call(k, "getrf_work", dtype, [f"i32 {c('COL_MAJOR')}", *lp.ints(k, n, n), f"ptr {work}", *lp.ints(k, lda),
                                      f"ptr {ipiv.ptr}"])
        if transpose_a:
            _row_swaps(k, x, ipiv, n, reverse=False)
            trsm(x, "UPPER", "TRANS", "UNIT")
            trsm(x, "LOWER", "TRANS", "NON_UNIT")
        else:
            trsm(x, "LOWER", "NO_TRANS", "NON_UNIT")
            trsm(x, "UPPER", "NO_TRANS", "UNIT")
            _row_swaps(k, x, ipiv, n, reverse=True)
    lp.free(k, work)


WIDE_SOLVE = 1 << 21    # n * n * m from which a solve with m >= n / 2 right-hand sides runs its trsm on all threads


def _wide(n, m):
    """Whether a's n x n factors solve so many right-hand sides (inv's n) that the trsm calls gain more from
    OpenBLAS's threads than a small matrix loses when another thread holds a core: inv of 256 x 256 f64 took 1.94 ms
    on one thread, 1.54 on two (1.53 with another process busy on one core; NumPy's 1.76); 128 x 128 0.32 and 0.24.
    With a quarter of the columns one thread was as fast."""
    return isinstance(n, int) and isinstance(m, int) and 2 * m >= n and n * n * m >= WIDE_SOLVE


def _row_swaps(k, x, ipiv, n, reverse):
    """Swap row j of x with row ipiv[j] - 1 for j in order (or in reverse order)."""
    b = k.b
    with k.loop(0, n) as step:
        j = b.iop("sub", b.iop("sub", n, 1), step) if reverse else step
        p = b.iop("sub", b.convert(k.load(ipiv, [j]), ipiv.aval.dtype, np.int64), 1)
        with k.loop(0, x.aval.shape[1]) as col:
            top, other = k.load(x, [j, col]), k.load(x, [p, col])
            k.store(x, [j, col], other)
            k.store(x, [p, col], top)


def _solve_available(eqn):
    return _small(eqn.inputs[0].aval) or lp.lapack_available(["getrf_work", "cblas_trsm", "cblas_trsv"])(eqn)


solve_p = Primitive("solve", _solve_shape, lambda a, b, transpose_a: ref.solve(a, b, transpose_a), jvp=_solve_jvp,
                    transpose=_solve_transpose, lower=Kernel(_lower_solve, available=_solve_available))
solve_p.set(batch=_fold_rule(solve_p, lambda params: -1))
