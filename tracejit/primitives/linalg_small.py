"""Generated code for solving many small systems (n <= SMALL): Gaussian elimination with partial pivoting, written
out per matrix. A LAPACK call costs 100-200 ns before it does any work (measured on a 4 x 4 getrf), more than the
whole solve of a 4 x 4 system here, and numpy's batched solve pays about as much per matrix."""
import numpy as np

from .linalg_lapack import View, copy, item

SMALL = 8     # largest n solved by generated code; LAPACK beyond it
UNROLLED = 4  # largest n whose loops are unrolled in full: at n = 8 the unrolled code took LLVM 430-550 ms (a 10000 x 8
              # x 8 inverse: 2.9 ms a call, 4.1 with loops; NumPy 14.5), at n = 4 50-70 ms (0.61 ms, 0.86 with loops)


def emit_small_solve(k, out, a, b, transpose_a):
    """out = a^-1 b (a^-T b) for every matrix of a (..., n, n) with b (..., n, m), n a static int <= SMALL.
    A zero pivot divides by zero: inf/NaN, as LAPACK's solve gives."""
    bld = k.b
    dtype = a.aval.dtype
    n, m = b.aval.shape[-2:]
    ty, unrolled = bld.ty(dtype), _unrolled(n)
    work = View(k.alloca(f"[{n * n} x {ty}]"), (n, n), dtype)
    pivot_row, best = k.alloca("i64"), k.alloca(ty)
    from_batch = list(b.aval.shape[:-2])
    count = 1
    for d in from_batch:
        count = bld.iop("mul", count, d)
    with k.loop(0, count) as i:
        am, x = item(k, a, i), item(k, out, i)
        copy(k, x.ptr, item(k, b, i).ptr, n * m * dtype.itemsize)
        with k.loop(0, n, **unrolled) as r, k.loop(0, n, **unrolled) as c:
            k.store(work, [r, c], k.load(am, [c, r] if transpose_a else [r, c]))
        with k.loop(0, n, **unrolled) as j:
            _pivot(k, work, x, j, pivot_row, best, n, m)
            diagonal = k.load(work, [j, j])
            with k.loop(bld.iop("add", j, 1), n, **unrolled) as r:
                factor = bld.binop("fdiv", "sdiv", k.load(work, [r, j]), diagonal, dtype)
                _axpy(k, work, r, j, factor, bld.iop("add", j, 1), n)
                _axpy(k, x, r, j, factor, 0, m)
        with k.loop(0, n, **unrolled) as back:
            j = bld.iop("sub", n - 1, back)
            with k.loop(0, m, **unrolled) as c:
                acc_ptr = k.alloca(ty)
                k.store_var(acc_ptr, ty, k.load(x, [j, c]))
                with k.loop(bld.iop("add", j, 1), n, **unrolled) as t:
                    term = bld.binop("fmul", "mul", k.load(work, [j, t]), k.load(x, [t, c]), dtype)
                    k.store_var(acc_ptr, ty, bld.binop("fsub", "sub", k.load_var(acc_ptr, ty), term, dtype))
                k.store(x, [j, c], bld.binop("fdiv", "sdiv", k.load_var(acc_ptr, ty), k.load(work, [j, j]), dtype))


def _unrolled(n):
    """The loop hints of an n x n system's loops."""
    return {"unroll_full": None} if n <= UNROLLED else {}


def _pivot(k, work, x, j, pivot_row, best, n, m):
    """Swap row j of work (from column j) and of x with the row at or below j of largest magnitude in column j."""
    bld, dtype, unrolled = k.b, work.aval.dtype, _unrolled(n)
    ty = bld.ty(dtype)
    k.store_var(pivot_row, "i64", j)
    k.store_var(best, ty, bld.intrinsic("fabs", k.load(work, [j, j]), dtype=dtype))
    with k.loop(bld.iop("add", j, 1), n, **unrolled) as r:
        size = bld.intrinsic("fabs", k.load(work, [r, j]), dtype=dtype)
        larger = bld.cmp("gt", size, k.load_var(best, ty), dtype=dtype)
        k.store_var(best, ty, bld.select(larger, size, k.load_var(best, ty), dtype=dtype))
        k.store_var(pivot_row, "i64", bld.select(larger, r, k.load_var(pivot_row, "i64"), dtype=np.int64))
    p = k.load_var(pivot_row, "i64")
    for view, start, stop in ((work, j, n), (x, 0, m)):
        with k.loop(start, stop, **unrolled) as c:
            top, other = k.load(view, [j, c]), k.load(view, [p, c])
            k.store(view, [j, c], other)
            k.store(view, [p, c], top)


def _axpy(k, view, r, j, factor, start, stop):
    """view[r, c] -= factor * view[j, c] for c in [start, stop)."""
    bld, dtype = k.b, view.aval.dtype
    with k.loop(start, stop, **_unrolled(view.aval.shape[0])) as c:
        update = bld.binop("fmul", "mul", factor, k.load(view, [j, c]), dtype)
        k.store(view, [r, c], bld.binop("fsub", "sub", k.load(view, [r, c]), update, dtype))
