"""The compiled form of a one-axis FFT: calls of the FFT library's passes (backend/fft_kernels.py, compiled once
per process), planned here per transform; for lengths with prime factors other than 2, 3 and 5 where that is
faster than NumPy's pocketfft run by the Python driver (`compiled`), Bluestein's algorithm over them.

A complex transform of length N = 2^a 3^b 5^c is a Stockham autosort FFT (`direct`): radix-4 passes, then radix
3, then 5 (a radix-2 pass last when a is odd: fft_kernels.stages), each reading one buffer and writing the other,
so that no pass reorders its output. Passes alternate between the output buffer and scratch memory so that the
last writes the output. A column pass (stride s > 1) runs rows of `lanes` columns, a power of two up to LANES
(`_lanes`), the last row ending at s (overlapping the one before where lanes does not divide s: computing a
column twice writes the same values). Once a pass's columns fall into classes that fit in the cache
(BLOCK_BYTES), the remaining passes run block by block: each class of columns modulo the first such pass's
stride s0 (a multiple of LANES) is independent of the others in every later pass, and a block of LANES of them
is copied by its first pass into two packed buffers (rows s0 apart in place would fall into few cache sets),
worked on there and written back by its last pass.

A real transform of n = 2h reals (h a direct length) is the complex transform of the h pairs (x[2j], x[2j+1])
then the library's split pass (which does the complex transform's last pass too where that is a radix-2 one and
the array fits in the cache: `_plan`); the inverse real transform runs the join pass (with the 1/n and the
conjugation that makes the inverse a forward transform) then the forward complex transform, whose passes it
shares with rfft and fft; the complex inverse scales its first pass. Bluestein's transform of length n is a
product by a chirp (zero padded to m = 2**k >= 2n - 1), a transform of length m, a product by the transform of
the other chirp, an inverse transform (the forward transform of the conjugate, conjugated: the conjugations are
the chirp passes') and a product by the chirp (fft_kernels.chirps). A batch of transforms (the leading axes) is
a loop over rows, which the backend may split over the threads (each chunk with its own scratch memory)."""
import itertools
import math

import numpy as np

from ..backend.rules import Kernel, llvm_type

BLOCK_BYTES = 1 << 20     # a transform larger than this runs its last passes block by block, each block's two
                          # packed buffers within it (L2: 2 MiB per core on the machines measured)
LANES = 16                # columns per block: one of the library's lane counts (fft_kernels.LANES)
BLUESTEIN_NS = 0.3        # per m log2 m, measured (m = 2048 and 8192, float32)
POCKETFFT_NS = 0.5        # per n log2 n of a complex transform (NumPy 2.4, n = 1000 to 1e5, float32)
PYTHON_STEP_NS = 20_000   # what a call running a Python step costs beyond it
FLOPS_PER_NS = 4          # what a transform runs at on one core, roughly (5 n log2 n flops): for the split


def direct(n, kind):
    """Whether the library's Stockham passes compute kind's transform of length n: n = 2^a 3^b 5^c, and even for
    the real transforms (their complex transform is of length n/2), or 1."""
    if kind in ("rfft", "irfft") and n > 1:
        if n % 2:
            return False
        n //= 2
    for r in (2, 3, 5):
        while n % r == 0:
            n //= r
    return n == 1


def compiled(n, kind, batch=1):
    """Whether `batch` transforms of length n run here: direct lengths always; others by Bluestein's algorithm
    where its estimated time (two transforms of a power of two m >= 2n - 1 each) is below NumPy's pocketfft's on
    the buffers plus the Python step's overhead (it is not for large lengths: 100003's estimates are 1.4 ms
    against 0.8, nor for many short ones)."""
    if direct(n, kind):
        return True
    m = 1 << (2 * n - 2).bit_length()
    pocketfft = POCKETFFT_NS * n * math.log2(n) * (0.5 if kind in ("rfft", "irfft") else 1)
    return batch * BLUESTEIN_NS * m * math.log2(m) < batch * pocketfft + PYTHON_STEP_NS


def _blocking(plan, n, itemsize):
    """(the first pass of plan (the passes of a transform of length n) run block by block, or len(plan) for
    none; the complex elements of the two packed buffers)."""
    first = next((i for i, (_, m_n, s) in enumerate(plan) if n * itemsize > BLOCK_BYTES and s % LANES == 0
                  and 2 * m_n * LANES * itemsize <= BLOCK_BYTES), len(plan))
    if first >= len(plan) - 1:        # one pass: nothing to keep in the cache
        return len(plan), 0
    return first, 2 * plan[first][1] * LANES


class _Calls:
    """Writes the calls of one transform's library functions."""

    def __init__(self, fk, code, k, ty, inverse, n, table, offsets, plan):
        self.fk, self.k, self.ty, self.inverse = fk, k, ty, inverse
        self.c, self.width = code.Complex(k.f, ty), code.vector_width(ty)
        self.plan = plan
        self.table, self.offsets = k.f.module.array(table), offsets
        self.n, self.itemsize = n, 8 if ty == "float" else 16     # of a complex element

    def call(self, kind, *args):
        # an external symbol without an address here: compile_ir resolves it (fft_kernels.symbols), compiling the
        # library's function if this process lacks it, or linking the one shipped with a pickle
        callee = self.k.f.module.symbol(None, self.fk.symbol(kind, self.ty, self.inverse))
        self.k.line(f"call void {callee}({', '.join(args)})")

    def twiddles(self, i):
        return self.c.at(self.table, self.offsets[i])

    def stage(self, i, src, dst, scale, lanes=None, rows=1, src_cols=(), dst_cols=(), shift=0):
        """Pass i from src to dst: p innermost (lanes None: the first pass, its outputs times scale), else `rows`
        rows of `lanes` columns, src_cols and dst_cols their (base, row stride, stride), the last row `shift`
        columns back."""
        r, m_n, _ = self.plan[i]
        args = [f"ptr {src}", f"ptr {dst}", f"ptr {self.twiddles(i)}", f"i64 {m_n // r}"]
        if lanes is None:                    # the largest power of two up to the vector width and m
            self.call(f"{r}p{_power_below(min(self.width, m_n // r))}", *args,
                      f"{self.ty} {self.c.const(scale)}")
        else:
            self.call(f"{r}w{lanes}", *args, *[f"i64 {v}" for v in (rows, *src_cols, *dst_cols, shift)])

    def whole(self, i, src, dst, scale):
        """Pass i over the whole array."""
        s = self.plan[i][2]
        if s == 1:
            self.stage(i, src, dst, scale)
            return
        lanes = _lanes(s, self.width)
        rows = -(-s // lanes)
        self.stage(i, src, dst, scale, lanes, rows, (0, lanes, s), (0, lanes, s), rows * lanes - s)

    def blocked(self, first, src, dst, packed):
        """Passes first... block by block (the module docstring)."""
        plan = self.plan
        s0, last = plan[first][2], len(plan) - 1
        with self.k.f.loop(0, s0 // LANES) as block:
            base = self.c.b.iop("mul", block, LANES)
            for i in range(first, len(plan)):
                s = plan[i][2]
                whole, packed_cols = (base, s0, s), (0, LANES, LANES * (s // s0))
                self.stage(i, src if i == first else packed[(i - first + 1) % 2],
                           dst if i == last else packed[(i - first) % 2], None, LANES, s // s0,
                           whole if i == first else packed_cols, whole if i == last else packed_cols)


def lower_fft(k, out, x, kind, n, batch):
    """Emit the transforms of `batch` rows: kind 'fft', 'ifft', 'rfft' or 'irfft' of length n from buffer x to
    buffer out, rows [%lo, %hi) (a chunk of the batch when split over threads)."""
    # the library and the thread count (which sizes the scratch) are the backend's: imported when code is
    # generated, as linalg's BLAS and conv_lowering's runtime
    from ..backend import fft_code as code
    from ..backend import fft_kernels as fk  # (see above)
    from ..backend import runtime  # (see above)
    dtype = np.dtype(out.aval.dtype if kind != "irfft" else x.aval.dtype)
    ty, itemsize = llvm_type(dtype), dtype.itemsize
    inverse, stockham = kind in ("ifft", "irfft"), direct(n, kind)
    if stockham:
        m = n // 2 if kind in ("rfft", "irfft") else n      # the complex transform's length
        work = m + 64 // itemsize                           # scratch: one buffer (the other is the output), and
                                                            # the element after it that the fused split reads (a
                                                            # cache line: the packed buffers after it stay aligned)
    else:
        m, chirps = fk.chirps(n, dtype, inverse)     # Bluestein: a convolution of length m
        work = 2 * m                                        # two buffers (the output is shorter)
    plan = _plan(fk, m, kind if stockham else "fft", itemsize)
    _, packed_size = _blocking(plan, m, itemsize)
    slots, b = min(runtime.NUM_THREADS, batch), k.b
    slot = b.iop("sdiv", b.iop("add", b.iop("mul", "%lo", slots), batch - 1), batch)     # the chunk this is
    c = code.Complex(k.f, ty)
    scratch = c.at(k.scratch_memory(slots * (work + packed_size) * itemsize), b.iop("mul", slot, work + packed_size))
    packed = [c.at(scratch, work), c.at(scratch, work + packed_size // 2)]
    table, offsets, fill = fk.twiddles(max(m, 1), dtype, kind in ("rfft", "irfft") and stockham)
    k.f.module.before_run.append(fill)
    # (irfft: forward passes after the join)
    calls = _Calls(fk, code, k, ty, kind == "ifft" and stockham, m, table, offsets, plan)
    if stockham:
        passes = _direct(calls, kind, n, packed)
    else:
        table = k.f.module.array(chirps)
        pre, conv, post = (f"ptr {c.at(table, i)}" for i in (0, n, n + m))
        real_in = {"rfft": "chirpr", "irfft": "chirph"}.get(kind, "chirp")

        def chirp(name, table_at, count, length, total, in_sign=1, out_sign=1):
            signs = [f"{ty} {c.const(sign)}" for sign in (in_sign, out_sign)]
            return lambda src, dst: calls.call(name, f"ptr {src}", f"ptr {dst}", table_at, f"i64 {count}",
                                               f"i64 {length}", f"i64 {total}", *signs)
        # the convolution's inverse transform as the conjugate of the forward transform of the conjugate (the
        # library's forward passes only: fewer functions to compile on a first call)
        passes = [chirp(real_in, pre, x.aval.shape[-1], n, m), *_complex_passes(calls, m, packed, 1.0),
                  chirp("chirp", conv, m, m, m, out_sign=-1), *_complex_passes(calls, m, packed, 1.0),
                  chirp("chirpre" if kind == "irfft" else "chirp", post, 0, out.aval.shape[-1], 0, in_sign=-1)]
    in_row, out_row = (x.nbytes // batch), (out.nbytes // batch)
    with k.f.loop("%lo", "%hi") as row:
        src = k.f.emit(f"getelementptr i8, ptr {x.ptr}, i64 {b.iop('mul', row, in_row)}")
        dst = k.f.emit(f"getelementptr i8, ptr {out.ptr}, i64 {b.iop('mul', row, out_row)}")
        pair = (dst, scratch) if stockham else (scratch, c.at(scratch, m))   # passes before the last alternate
        bufs = [src] + [pair[(len(passes) - 1 - i) % 2] for i in range(len(passes) - 1)] + [dst]
        for run, (a, z) in zip(passes, itertools.pairwise(bufs)):
            run(a, z)


def _complex_passes(calls, m, packed, scale):
    """The passes of a complex transform of length m (functions of (src, dst)): over the whole array, then
    block by block; the first (a p-innermost pass) times scale."""
    first, _ = _blocking(calls.plan, m, calls.itemsize)
    passes = [lambda src, dst, i=i: calls.whole(i, src, dst, scale) for i in range(first)]
    if first < len(calls.plan):
        passes.append(lambda src, dst: calls.blocked(first, src, dst, packed))
    return passes


def _plan(fk, m, kind, itemsize):
    """The passes (fk.stages) of a complex transform of length m, without the last where the real transform's
    split does it (a radix-2 pass, after another: fk's fsplit), which it does while the array fits in the cache
    (reading each value twice: rfft 2**20 f32 3.07 -> 3.36-3.57 ms when fused, 2**16 f64 171 -> 160 us)."""
    plan = fk.stages(m)
    fused = kind == "rfft" and len(plan) > 1 and plan[-1][0] == 2 and m * itemsize <= BLOCK_BYTES
    return plan[:-1] if fused else plan


def _direct(calls, kind, n, packed):
    """The passes of a transform of a direct length n (functions of (src, dst))."""
    c, m = calls.c, calls.n
    if kind in ("rfft", "irfft") and n == 1:
        return [lambda src, dst: _real_one(c, src, dst, kind)]
    passes = _complex_passes(calls, m, packed, 1 / n if kind == "ifft" else 1.0)
    post, width = f"ptr {calls.twiddles(-1)}, i64 {m}", _power_below(min(calls.width, max(m // 2, 1)))
    if kind == "rfft":
        split = "fsplit" if len(calls.plan) < len(calls.fk.stages(m)) else "split"
        passes.append(lambda src, dst: calls.call(f"{split}{width}", f"ptr {src}", f"ptr {dst}", post))
    elif kind == "irfft":
        passes.insert(0, lambda src, dst: calls.call(f"join{width}", f"ptr {src}", f"ptr {dst}", post,
                                                      f"{calls.ty} {c.const(1 / n)}"))
    return passes or [lambda src, dst: c.store(dst, 0, c.load(src, 0))]


def _lanes(s, width):
    """The columns of a row of a pass of stride s over a whole array: the power of two up to LANES and s that
    needs the fewest vectors of width values (rows of it cover s, the last overlapping the one before), the
    largest of those."""
    options = [1 << k for k in range(LANES.bit_length()) if 1 << k <= s]
    return min(reversed(options), key=lambda lanes: -(-s // lanes) * -(-lanes // width))


def _power_below(k):
    """The largest power of two up to k >= 1."""
    return 1 << (k.bit_length() - 1)


def _real_one(c, src, dst, kind):
    """A real transform of one value: x0 -> (x0, 0), or X0 -> Re X0."""
    if kind == "rfft":
        v = c.f.emit(f"load {c.ty}, ptr {src}")
        c.store(dst, 0, (v, c.const(0)))
    else:
        c.f.line(f"store {c.ty} {c.f.emit(f'load {c.ty}, ptr {src}')}, ptr {dst}")


def fft_kernel(kind_of, available):
    """The Kernel rule: kind_of(fft_type) -> 'fft', 'ifft', 'rfft' or 'irfft'; available(eqn) says where
    lower_fft applies (one axis, a length it compiles, fixed shapes)."""
    def lower(k, outs, ins, fft_type, fft_lengths):
        (out,), (x,) = outs, ins
        n, batch = fft_lengths[-1], _batch(x.aval)
        if batch:
            lower_fft(k, out, x, kind_of(fft_type), n, batch)

    def split(eqn):
        n, batch = eqn.params["fft_lengths"][-1], _batch(eqn.inputs[0].aval)
        return batch, 5 * n * max(n.bit_length() - 1, 1) * batch / FLOPS_PER_NS

    return Kernel(lower, available=available, scratch=True, split=split)


def _batch(aval):
    return int(np.prod(aval.shape[:-1], dtype=np.int64))
