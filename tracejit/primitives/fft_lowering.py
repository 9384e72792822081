"""The compiled form of a one-axis FFT of power-of-two length: calls of the FFT library's passes
(backend/fft_kernels.py, compiled once per process), planned here per transform.

A complex transform of length N = 2**k is a Stockham autosort FFT: radix-4 passes (a radix-2 pass last when k
is odd), each reading one buffer and writing the other, so that no pass reorders its output. Passes alternate
between the output buffer and scratch memory so that the last writes the output. Once a pass's columns fall
into classes that fit in the cache (BLOCK_BYTES), the remaining passes run block by block: each class of
columns modulo the first such pass's stride s0 is independent of the others in every later pass, and a block
of LANES of them is copied by its first pass into two packed buffers (rows s0 apart in place would fall into
few cache sets), worked on there and written back by its last pass.

A real transform of n = 2h reals is the complex transform of the h pairs (x[2j], x[2j+1]) then the library's
split pass; the inverse real transform runs the join pass (with the 1/n) then the inverse complex transform;
the complex inverse scales its last pass. A batch of transforms (the leading axes) is a loop over rows, which
the backend may split over the threads (each chunk with its own scratch memory)."""
import itertools

import numpy as np

from ..backend import fft_kernels
from ..backend.fft_kernels import Complex, stages, twiddles
from ..backend.rules import Kernel, llvm_type

BLOCK_BYTES = 1 << 20     # a transform larger than this runs its last passes block by block, each block's two
                          # packed buffers within it (L2: 2 MiB per core on the machines measured)
LANES = 16                # columns per block (fft_kernels.LANES)
FLOPS_PER_NS = 4          # what a transform runs at on one core, roughly (5 n log2 n flops): for the split


def _blocking(n, itemsize):
    """(the first pass run block by block, or len(stages(n)) for none; the complex elements of the two
    packed buffers)."""
    plan = stages(n)
    first = next((i for i, (_, m_n, s) in enumerate(plan) if n * itemsize > BLOCK_BYTES and s >= LANES
                  and 2 * m_n * LANES * itemsize <= BLOCK_BYTES), len(plan))
    if first >= len(plan) - 1:        # one pass: nothing to keep in the cache
        return len(plan), 0
    return first, 2 * plan[first][1] * LANES


class _Calls:
    """Writes the calls of one transform's library functions."""

    def __init__(self, k, ty, inverse, n, table):
        self.k, self.ty, self.inverse = k, ty, inverse
        self.c = Complex(k.f, ty)
        self.table, self.offsets = k.f.module.array(table[0]), table[1]
        self.n = n

    def call(self, kind, *args):
        module = self.k.f.module
        name = fft_kernels.symbol(kind, self.ty, self.inverse)
        callee = module.symbol(fft_kernels.address(kind, self.ty, self.inverse), name)
        self.k.line(f"call void {callee}({', '.join(args)})")

    def twiddles(self, i):
        return self.c.at(self.table, self.offsets[i])

    def stage(self, i, src, dst, last_scale, lanes=None, rows=1, src_cols=(), dst_cols=()):
        """Pass i from src to dst: p innermost (lanes None), else `rows` rows of `lanes` columns, src_cols and
        dst_cols their (base, row stride, stride)."""
        plan = stages(self.n)
        r, m_n, _ = plan[i]
        scale = self.c.const(last_scale if i == len(plan) - 1 else 1.0)
        args = [f"ptr {src}", f"ptr {dst}", f"ptr {self.twiddles(i)}", f"i64 {m_n // r}", f"{self.ty} {scale}"]
        if lanes is None:
            self.call(f"{r}p", *args)
        else:
            self.call(f"{r}w{lanes}", *args, *[f"i64 {v}" for v in (rows, *src_cols, *dst_cols)])

    def whole(self, i, src, dst, last_scale):
        """Pass i over the whole array."""
        s = stages(self.n)[i][2]
        lanes = min(s, LANES)
        columns = (0, lanes, s)
        self.stage(i, src, dst, last_scale, *((None,) if s == 1 else (lanes, s // lanes, columns, columns)))

    def blocked(self, first, src, dst, packed, last_scale):
        """Passes first... block by block (the module docstring)."""
        plan = stages(self.n)
        s0, last = plan[first][2], len(plan) - 1
        with self.k.f.loop(0, s0 // LANES) as block:
            base = self.c.b.iop("mul", block, LANES)
            for i in range(first, len(plan)):
                s = plan[i][2]
                whole, packed_cols = (base, s0, s), (0, LANES, LANES * (s // s0))
                self.stage(i, src if i == first else packed[(i - first + 1) % 2],
                           dst if i == last else packed[(i - first) % 2], last_scale, LANES, s // s0,
                           whole if i == first else packed_cols, whole if i == last else packed_cols)


def lower_fft(k, out, x, kind, n, batch):
    """Emit the transforms of `batch` rows: kind 'fft', 'ifft', 'rfft' or 'irfft' of length n (a power of
    two) from buffer x to buffer out, rows [%lo, %hi) (a chunk of the batch when split over threads)."""
    from ..backend import runtime  # as conv_lowering: the thread count sizes the scratch
    dtype = np.dtype(out.aval.dtype if kind != "irfft" else x.aval.dtype)
    ty, itemsize = llvm_type(dtype), dtype.itemsize
    real, inverse = kind in ("rfft", "irfft"), kind in ("ifft", "irfft")
    m = n // 2 if real else n                      # the complex transform's length
    calls = _Calls(k, ty, inverse, m, twiddles(max(m, 1), dtype))
    c, b = calls.c, k.b
    first, packed_size = _blocking(m, itemsize)
    slot_size = m + packed_size                    # complex elements of scratch per chunk of the batch
    slots = min(runtime.NUM_THREADS, batch)
    slot = b.iop("sdiv", b.iop("add", b.iop("mul", "%lo", slots), batch - 1), batch)     # the chunk this is
    scratch = c.at(k.scratch_memory(slots * slot_size * itemsize), b.iop("mul", slot, slot_size))
    packed = [c.at(scratch, m), c.at(scratch, m + packed_size // 2)]
    last_scale = 1 / n if kind == "ifft" else 1.0
    post = f"ptr {calls.twiddles(-1)}, i64 {m}"
    if real and n == 1:
        passes = [lambda src, dst: _real_one(c, src, dst, kind)]
    else:
        passes = [lambda src, dst, i=i: calls.whole(i, src, dst, last_scale) for i in range(first)]
        if first < len(stages(m)):
            passes.append(lambda src, dst: calls.blocked(first, src, dst, packed, last_scale))
        if kind == "rfft":
            passes.append(lambda src, dst: calls.call("split", f"ptr {src}", f"ptr {dst}", post))
        elif kind == "irfft":
            passes.insert(0, lambda src, dst: calls.call("join", f"ptr {src}", f"ptr {dst}", post,
                                                          f"{ty} {c.const(1 / n)}"))
        if not passes:
            passes = [lambda src, dst: c.store(dst, 0, c.load(src, 0))]
    in_row, out_row = (x.nbytes // batch), (out.nbytes // batch)
    with k.f.loop("%lo", "%hi") as row:
        bufs = [k.f.emit(f"getelementptr i8, ptr {x.ptr}, i64 {b.iop('mul', row, in_row)}")]
        dst = k.f.emit(f"getelementptr i8, ptr {out.ptr}, i64 {b.iop('mul', row, out_row)}")
        bufs += [dst if (len(passes) - 1 - i) % 2 == 0 else scratch for i in range(len(passes))]   # last: dst
        for run, (src, to) in zip(passes, itertools.pairwise(bufs)):
            run(src, to)


def _real_one(c, src, dst, kind):
    """A real transform of one value: x0 -> (x0, 0), or X0 -> Re X0."""
    if kind == "rfft":
        v = c.f.emit(f"load {c.ty}, ptr {src}")
        c.store(dst, 0, (v, c.const(0)))
    else:
        c.f.line(f"store {c.ty} {c.f.emit(f'load {c.ty}, ptr {src}')}, ptr {dst}")


def fft_kernel(kind_of, available):
    """The Kernel rule: kind_of(fft_type) -> 'fft', 'ifft', 'rfft' or 'irfft'; available(eqn) says where
    lower_fft applies (one axis, a power-of-two length, fixed shapes)."""
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
