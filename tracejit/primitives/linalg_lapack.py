"""What the linear-algebra lowering rules write with: calls into numpy's LAPACK and CBLAS (tracejit.backend.lapack
finds them), the loop over the matrices of a batch around the calls, and the small pieces around those (copies,
NaN fills, triangles, scratch memory, branches). Every pointer step is in bytes, so the helpers serve any dtype.

A matrix is the last two axes of a buffer; `View(ptr, shape, dtype)` is one matrix (or vector) that KernelBuilder's
load and store address. Sizes may be ints or symbolic dimensions (i64 SSA values at run time).
"""
import collections
import contextlib

import numpy as np

from ..backend.rules import libm_address

NAN = float("nan")


def _lapack():
    # Imported when a rule runs, not at the top: the primitives import without the backend's modules (only its
    # rules interface); the LAPACK lookup is made when code is generated.
    from ..backend import lapack
    return lapack


DTYPES = tuple(map(np.dtype, ("float32", "float64", "complex64", "complex128")))  # what the primitives accept


def lapack_available(routines):
    """A Kernel `available` predicate: numpy's LAPACK has every routine for the first operand's dtype, and no
    operand has an empty matrix (LAPACK returns early there without writing its outputs; the NumPy impl runs)."""
    def available(eqn):
        empty = any(d == 0 for x in eqn.inputs for d in x.aval.shape[-2:])
        return not empty and _lapack().available(routines, eqn.inputs[0].aval.dtype)
    return available


def lapack_constant(name):
    """A constant of tracejit.backend.lapack (ROW_MAJOR, LOWER, ...)."""
    return getattr(_lapack(), name)


_Layout = collections.namedtuple("_Layout", "shape dtype")   # sizes may be i64 SSA values


class View:
    """One matrix (or vector) at `ptr`, row-major, for KernelBuilder.load / store."""

    def __init__(self, ptr, shape, dtype):
        self.ptr, self.aval = ptr, _Layout(tuple(shape), np.dtype(dtype))


def product(k, sizes):
    """The product of sizes as an i64 operand (an int when all are ints)."""
    out = 1
    for d in sizes:
        out = k.b.iop("mul", out, d)
    return out


def int_type():
    return f"i{_lapack().int_bits()}"


def lapack_int(k, x):
    """An i64 size as LAPACK's integer type (an int stays an int)."""
    ty = int_type()
    x = k.b.size(x)
    return x if isinstance(x, int) or ty == "i64" else k.f.emit(f"trunc i64 {x} to {ty}")


def at_least_1(k, x):
    """max(x, 1): a leading dimension LAPACK accepts for an empty matrix."""
    x = k.b.size(x)
    return max(x, 1) if isinstance(x, int) else k.b.intrinsic("smax", x, 1, dtype=np.int64)


def smaller(k, x, y):
    x, y = k.b.size(x), k.b.size(y)
    return min(x, y) if isinstance(x, int) and isinstance(y, int) else k.b.intrinsic("smin", x, y, dtype=np.int64)


def call(k, routine, dtype, args, returns=True):
    """Call `routine` (a name tracejit.backend.lapack knows) with args, LLVM operands written with their types
    ("i32 101", "ptr %v3"); returns LAPACK's info (as an i64) when `returns`."""
    lapack = _lapack()
    fn = k.f.module.symbol(lapack.address(routine, dtype), f"tj_{lapack.symbol_name(routine, dtype)}")
    operands = ", ".join(args)
    if not returns:
        k.line(f"call void {fn}({operands})")
        return None
    ty = int_type()
    info = k.f.emit(f"call {ty} {fn}({operands})")
    return info if ty == "i64" else k.f.emit(f"sext {ty} {info} to i64")


def scalar(k, value, dtype):
    """A CBLAS scalar argument (alpha): by value for a real dtype, by pointer (to a constant) for a complex one."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return f"ptr {k.f.module.array(np.array(value, dtype))}"
    return f"{k.b.ty(dtype)} {k.b.const(value, dtype)}"


def char(c):
    """A LAPACK character argument."""
    return f"i8 signext {ord(c)}"


def ints(k, *values):
    """LAPACK integer operands."""
    ty = int_type()
    return [f"{ty} {lapack_int(k, v)}" for v in values]


def offset(k, ptr, elements, dtype):
    """ptr advanced by `elements` elements of dtype."""
    nbytes = k.b.iop("mul", elements, np.dtype(dtype).itemsize)
    return ptr if nbytes == 0 else k.f.emit(f"getelementptr i8, ptr {ptr}, i64 {nbytes}")


SMALL_LAPACK = 1 << 24  # rows * cols * min(rows, cols) of a matrix up to which LAPACK runs on the calling thread alone


@contextlib.contextmanager
def calling_thread_only(k, when=True):
    """BLAS and LAPACK called by the code emitted in the block use one thread (when `when` and the BLAS has
    openblas_set_num_threads_local); the thread count is restored after it. On 2 cores OpenBLAS's second
    thread made a 256 x 256 solve, eigh or svd up to 2x slower whenever another thread held a core (another
    process, or the busy-waiting workers of another OpenBLAS in the process: scipy's, which jax loads), and no
    faster when none did. That function sets the count of the whole library, not the calling thread's (measured:
    another thread's call made the main thread's count 1), so blocks running at once on several threads (Python
    threads calling compiled code) count themselves in blas.ONE_THREAD under its lock: the first sets 1, the last
    restores the count it replaced (each restoring its own left 1 behind when two overlapped, and NumPy's matmul
    ran 2x slower after)."""
    from ..backend import blas  # when code is generated, as in _lapack
    local = blas.threads_local_address() if when else None
    if local is None:
        yield
        return
    module = k.f.module
    threads = module.symbol(local, "tj_blas_threads_local")
    state = module.symbol(blas.ONE_THREAD_ADDRESS, "tj_blas_one_thread")     # i64 lock, holders, saved count
    holders, saved = (k.f.emit(f"getelementptr i64, ptr {state}, i64 {i}") for i in (1, 2))

    def counted(step, action):
        """Under the lock: holders += step, and action() where there were none before (entering) or are none
        after (leaving)."""
        f = k.f
        spin, locked = f.label("lock"), f.label("locked")
        f.line(f"br label %{spin}")
        f.block(spin)
        taken = f.emit(f"atomicrmw xchg ptr {state}, i64 1 acquire")
        f.line(f"br i1 {f.emit(f'icmp eq i64 {taken}, 0')}, label %{locked}, label %{spin}")
        f.block(locked)
        before = f.emit(f"load i64, ptr {holders}")
        after = f.emit(f"add i64 {before}, {step}")
        with f.when(f.emit(f"icmp eq i64 {before if step > 0 else after}, 0")):
            action()
        f.line(f"store i64 {after}, ptr {holders}")
        f.line(f"store atomic i64 0, ptr {state} release, align 8")

    def set_one():
        previous = k.f.emit(f"call i32 {threads}(i32 1)")
        k.line(f"store i64 {k.f.emit(f'sext i32 {previous} to i64')}, ptr {saved}")

    def restore():
        previous = k.f.emit(f"trunc i64 {k.f.emit(f'load i64, ptr {saved}')} to i32")
        k.line(f"call i32 {threads}(i32 {previous})")
    counted(1, set_one)
    yield
    counted(-1, restore)


def small_matrix(shape):
    """Whether a matrix of shape (rows, cols) is static and at most SMALL_LAPACK."""
    return all(isinstance(d, int) for d in shape) and shape[0] * shape[1] * min(shape) <= SMALL_LAPACK


@contextlib.contextmanager
def each_matrix(k, shape, core=2, alone=None):
    """for i over the batch of an array of `shape` whose last `core` axes are one item: yields i. Small
    matrices' LAPACK calls run on the calling thread alone (calling_thread_only), or those that `alone` says."""
    small = (core == 2 and small_matrix(shape[-2:])) if alone is None else alone
    with calling_thread_only(k, small), k.loop(0, product(k, shape[:-core] if core else shape)) as i:
        yield i


def item(k, buf, i, core=2):
    """The View of the i-th item (the last `core` axes) of a buffer."""
    shape = buf.aval.shape[len(buf.aval.shape) - core:]
    return View(offset(k, buf.ptr, k.b.iop("mul", i, product(k, shape)), buf.aval.dtype), shape, buf.aval.dtype)


def nbytes(k, aval):
    return k.b.iop("mul", product(k, aval.shape), aval.dtype.itemsize)


def copy(k, dst, src, size):
    """Copy `size` bytes (an i64 operand)."""
    if size != 0:
        k.line(f"call void @llvm.memcpy.p0.p0.i64(ptr {dst}, ptr {src}, i64 {size}, i1 false)")


def malloc(k, size):
    """Scratch memory from the C library (free it with `free`); for work too large for the stack."""
    fn = k.f.module.symbol(libm_address("malloc"), "tj_malloc")
    return k.f.emit(f"call ptr {fn}(i64 {k.b.iop('add', size, 16)})")


def free(k, ptr):
    k.line(f"call void {k.f.module.symbol(libm_address('free'), 'tj_free')}(ptr {ptr})")


def pivot_vector(k, count):
    """A View of `count` LAPACK integers on the stack, for getrf's row swaps (ipiv, 1-based)."""
    ty = int_type()
    return View(stack_array(k, ty, count), (count,), np.dtype(f"int{ty[1:]}"))


def stack_array(k, ty, count):
    """An array of `count` values of LLVM type ty on the stack (in the entry block; count may be symbolic)."""
    count = k.b.size(count)
    return k.alloca(f"[{max(count, 1)} x {ty}]") if isinstance(count, int) else k.alloca(f"{ty}, i64 {count}")


def fill(k, view, value, columns=None):
    """Store value in a matrix view: in every element, or in row r at the columns range(*columns(r)) (a
    triangle)."""
    value = k.b.const(value, view.aval.dtype)
    rows, cols = view.aval.shape
    with k.loop(0, rows) as r, k.loop(*(columns(r) if columns else (0, cols))) as c:
        k.store(view, [r, c], value)


TILE = 16    # the side of the blocks transpose_into copies: a block's rows and columns stay in the L1 cache


def transpose_into(k, dst, src):
    """dst = src.T for matrix views (dst's shape is src's reversed), a TILE x TILE block at a time, each of dst's
    rows in order: LAPACKE's row-major interface transposes element by element, which took about 2 ms of a 512 x 512
    eigh; a block's rows of src in order (strided stores) took 4.4 ms for 1024 x 1024 f64, dst's rows under 1."""
    rows, cols = src.aval.shape
    blocks = [k.b.iop("sdiv", k.b.iop("add", d, TILE - 1), TILE) for d in (rows, cols)]
    with k.loop(0, blocks[0]) as br, k.loop(0, blocks[1]) as bc:
        r0, c0 = k.b.iop("mul", br, TILE), k.b.iop("mul", bc, TILE)
        with (k.loop(c0, smaller(k, k.b.iop("add", c0, TILE), cols)) as c,
              k.loop(r0, smaller(k, k.b.iop("add", r0, TILE), rows)) as r):
            k.store(dst, [c, r], k.load(src, [r, c]))


def mirror_triangle(k, view, upward):
    """In a square matrix view, a TILE x TILE block at a time (as transpose_into): upward, the strict lower
    triangle's transpose over the upper one; else the strict upper triangle's transpose over the lower one, and
    zeros above the diagonal. No conjugation: a transpose in place, of one triangle."""
    n, b = view.aval.shape[0], k.b
    blocks = b.iop("sdiv", b.iop("add", n, TILE - 1), TILE)
    with k.loop(0, blocks) as bi, k.loop(0, b.iop("add", bi, 1)) as bj:
        i0, j0 = b.iop("mul", bi, TILE), b.iop("mul", bj, TILE)
        i1, j1 = smaller(k, b.iop("add", i0, TILE), n), smaller(k, b.iop("add", j0, TILE), n)
        if upward:          # rows j of the upper triangle in order, each from a column of the lower one
            with k.loop(j0, j1) as j, k.loop(b.intrinsic("smax", i0, b.iop("add", j, 1), dtype=np.int64), i1) as i:
                k.store(view, [j, i], k.load(view, [i, j]))
        else:
            zero = b.const(0, view.aval.dtype)
            with k.loop(i0, i1) as i, k.loop(j0, smaller(k, j1, i)) as j:
                k.store(view, [i, j], k.load(view, [j, i]))
                k.store(view, [j, i], zero)


def conjugate_into(k, dst, src):
    """dst = conj(src) for complex matrix views of one shape; returns dst."""
    rows, cols = src.aval.shape
    with k.loop(0, rows) as r, k.loop(0, cols) as c:
        re, im = k.load(src, [r, c])
        k.store(dst, [r, c], (re, k.f.emit(f"fneg {k.b.ty(src.aval.dtype)} {im}")))
    return dst


def fill_vector(k, view, value):
    with k.loop(0, view.aval.shape[0]) as i:
        k.store(view, [i], k.b.const(value, view.aval.dtype))


def on_and_below_diagonal(k, view):
    return lambda r: (0, smaller(k, k.b.iop("add", r, 1), view.aval.shape[1]))


def nonzero(k, info):
    return k.f.emit(f"icmp ne i64 {info}, 0")


def emit_pivots_to_permutation(k, pivots, perm, count):
    """perm = range(len(perm)) with the row swaps pivots[j] (j < count, clamped into range) applied in order.
    pivots and perm are i32 Views of one matrix's vectors."""
    b = k.b
    size = perm.aval.shape[0]
    with k.loop(0, size) as r:
        k.store(perm, [r], b.convert(r, np.int64, np.int32))
    with k.loop(0, count) as j:
        p = b.clamp_index(b.convert(k.load(pivots, [j]), np.int32, np.int64), 0, b.iop("sub", size, 1))
        x, y = k.load(perm, [j]), k.load(perm, [p])
        k.store(perm, [j], y)
        k.store(perm, [p], x)
