"""The compiled form of a one-axis FFT of power-of-two length: a Stockham autosort FFT written out per call site.

A complex transform of length N = 2**k runs radix-4 passes (a radix-2 pass last when k is odd), each reading
one buffer and writing the other (Stockham: no bit reversal; a pass's loops are plain strided loops, which
LLVM vectorizes). The pass with sub-length n and stride s computes, for p < m = n/4 and q < s,

    a, b, c, d = x[q + s(p + jm)] (j = 0..3);  y[q + s(4p + j)] = w^(jp) * DFT4(a, b, c, d)_j,  w = e^(-2 pi i/n),

over q innermost where s is long enough to fill vectors (twiddles broadcast), else over p (twiddles read as
vectors). Twiddles are computed in float64 with NumPy and rounded once to the transform's precision; the
tables are constants of the module, one per (length, dtype), shared between modules.

A real transform of n = 2h reals is the complex transform of the h pairs (x[2j], x[2j+1]) and a pass that
splits the result Z into the spectra of the even and odd samples, E = (Z_k + conj Z_(h-k))/2 and
O = (Z_k - conj Z_(h-k))/2i, and joins them: X_k = E + e^(-2 pi i k/n) O. The inverse real transform runs the
same steps backwards, its 1/n folded into the first pass; the complex inverse scales its last pass.

Passes alternate between the output buffer and scratch memory so that the last writes the output. A batch of
transforms (the leading axes) is a loop of them, which the backend may split over the threads."""
import contextlib
import dataclasses
import functools
import itertools

import numpy as np

from ..backend.rules import Kernel, const_text, llvm_type, part_dtype

Q_INNER = 4               # strides s from which a pass loops over q innermost (contiguous vectors)
FLOPS_PER_NS = 4          # what a transform runs at on one core, roughly (5 n log2 n flops): for the split
BLOCK_BYTES = 1 << 19     # a transform larger than this runs its last stages block by block, each block's
                          # columns (both buffers) within it (L2: 2 MiB per core on the machines measured)
BLOCK_LINE = 128          # bytes of contiguous columns per block
LOOP_HINTS = {}            # llvm.loop hints of the vectorizable loops


def _stages(n):
    """(radix, sub-length, stride) of each pass of a complex transform of length n (a power of two)."""
    stages, s = [], 1
    while n > 1:
        r = 4 if n % 4 == 0 else 2
        stages.append((r, n, s))
        n, s = n // r, s * r
    return stages


@functools.lru_cache(maxsize=32)
def twiddles(n, dtype):
    """For a complex transform of length n in dtype (complex64/128): (table, offsets) where offsets[i] is the
    position in table of pass i's twiddles w^p, w^2p, w^3p (three runs of n_i/4), and offsets[-1] that of the
    real transform's e^(-2 pi i k/2n), k < n."""
    parts, offsets, at = [], [], 0
    for r, m_n, _ in _stages(n):
        offsets.append(at)
        if r == 4:
            p = np.arange(m_n // 4)
            parts += [_roots(j * p, m_n) for j in (1, 2, 3)]
            at += 3 * (m_n // 4)
    offsets.append(at)
    parts.append(_roots(np.arange(n), 2 * n))
    return np.concatenate(parts).astype(dtype), tuple(offsets)


def _roots(k, n):
    """e^(-2 pi i k/n) in float64, exact where it is 0 or +-1 (k reduced to the first octant's symmetries
    would gain less than the rounding to float32/64 loses)."""
    k = np.asarray(k) % n
    angle = -2 * np.pi * k / n
    re, im = np.cos(angle), np.sin(angle)
    re[4 * k == n] = re[4 * k == 3 * n] = 0.0
    im[2 * k == n] = im[k == 0] = 0.0
    return re + 1j * im


class _Complex:
    """Complex values as (re, im) SSA pairs of type ty, in interleaved memory."""

    def __init__(self, k, dtype):
        self.f, self.b, self.ty, self.part = k.f, k.b, llvm_type(dtype), part_dtype(dtype)

    def const(self, value):
        return const_text(value, self.part)

    def at(self, base, index):
        """The address of complex element `index` (an i64 or an int) of the array at base."""
        return base if index == 0 else self.f.emit(f"getelementptr [2 x {self.ty}], ptr {base}, i64 {index}")

    def load(self, base, index):
        p = self.at(base, index)
        im = self.f.emit(f"getelementptr {self.ty}, ptr {p}, i64 1")
        return tuple(self.f.emit(f"load {self.ty}, ptr {q}") for q in (p, im))

    def store(self, base, index, z):
        p = self.at(base, index)
        self.f.line(f"store {self.ty} {z[0]}, ptr {p}")
        self.f.line(f"store {self.ty} {z[1]}, ptr {self.f.emit(f'getelementptr {self.ty}, ptr {p}, i64 1')}")

    def op(self, name, x, y):
        return self.f.emit(f"{name} {self.ty} {x}, {y}")

    def add(self, x, y):
        return self.op("fadd", x[0], y[0]), self.op("fadd", x[1], y[1])

    def sub(self, x, y):
        return self.op("fsub", x[0], y[0]), self.op("fsub", x[1], y[1])

    def mul(self, x, w, conj=False):
        """x * w, or x * conj(w)."""
        (xr, xi), (wr, wi) = x, w
        if conj:
            return (self.op("fadd", self.op("fmul", xr, wr), self.op("fmul", xi, wi)),
                    self.op("fsub", self.op("fmul", xi, wr), self.op("fmul", xr, wi)))
        return (self.op("fsub", self.op("fmul", xr, wr), self.op("fmul", xi, wi)),
                self.op("fadd", self.op("fmul", xr, wi), self.op("fmul", xi, wr)))

    def times_i(self, x, sign):
        """sign * i * x."""
        return (self.f.emit(f"fneg {self.ty} {x[1]}"), x[0]) if sign > 0 else (x[1], self.f.emit(f"fneg {self.ty} {x[0]}"))

    def conj(self, x):
        return x[0], self.f.emit(f"fneg {self.ty} {x[1]}")

    def scale(self, x, c):
        return x if c is None else (self.op("fmul", x[0], c), self.op("fmul", x[1], c))


@contextlib.contextmanager
def _nest(f, counts):
    """Nested loops over range(count) for each count, the innermost vectorizable; yields the indices (an int
    0 for a loop of one iteration)."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(f.loop(0, n, **(LOOP_HINTS if i == len(counts) - 1 else {})) if n > 1
                                   else contextlib.nullcontext(0)) for i, n in enumerate(counts)]


@dataclasses.dataclass
class _Stage:
    """A pass of radix r, sub-length n and stride s; tw: the pointers to its twiddles w^p, w^2p, w^3p (radix 4);
    sign -1 forward, +1 inverse (conjugate twiddles); scale: a constant its outputs are multiplied by, or None."""
    r: int
    n: int
    s: int
    tw: list
    sign: int
    scale: object


def _butterfly(c, st, src, dst, p, at_src, at_dst):
    """Stage st's outputs y[j] at dst's at_dst(r p + j) from its inputs x[j] at src's at_src(p + j m), m = n/r:
    at_*(t) is the element of row t of the column computed (q + s t for the whole array)."""
    m, b = st.n // st.r, c.b
    ins = [c.load(src, at_src(b.iop("add", p, j * m))) for j in range(st.r)]
    if st.r == 2:
        outs = [c.add(*ins), c.sub(*ins)]
    else:
        apc, amc, bpd, bmd = c.add(ins[0], ins[2]), c.sub(ins[0], ins[2]), c.add(ins[1], ins[3]), c.sub(ins[1], ins[3])
        turned = c.times_i(bmd, st.sign)
        outs = [c.add(apc, bpd), c.add(amc, turned), c.sub(apc, bpd), c.sub(amc, turned)]
        if m > 1:
            outs[1:] = [c.mul(y, c.load(w, p), conj=st.sign > 0) for y, w in zip(outs[1:], st.tw)]
    for j, y in enumerate(outs):
        c.store(dst, at_dst(b.iop("add", b.iop("mul", p, st.r), j)), c.scale(y, st.scale))


def _column(c, q, s):
    """Row t of column q with stride s: q + s t."""
    return lambda t: c.b.iop("add", q, c.b.iop("mul", s, t))


def _full_pass(c, st, pairs):
    """Stage st over the whole array: q innermost when s >= Q_INNER (contiguous vectors), else p."""
    (src, dst), = pairs
    m = st.n // st.r
    with _nest(c.f, [m, st.s] if st.s >= Q_INNER else [st.s, m]) as loops:
        p, q = loops if st.s >= Q_INNER else loops[::-1]
        at = _column(c, q, st.s)
        _butterfly(c, st, src, dst, p, at, at)


def _blocked_passes(c, stages, src, dst, local, width):
    """Stages whose columns q fall into independent classes modulo the first one's stride s0 (each later
    stride is a multiple of it): per block of `width` classes, every stage in turn, the first reading src
    and the last writing dst, in between the block's rows packed into two `local` buffers (in the cache;
    the rows in place, s0 apart, would fall into few cache sets)."""
    s0, b = stages[0].s, c.b
    with c.f.loop(0, s0 // width) as block:
        for i, st in enumerate(stages):
            rows = st.s // s0
            with _nest(c.f, [st.n // st.r, rows, width]) as (p, r, lane):
                packed = _column(c, b.iop("add", lane, b.iop("mul", r, width)), width * rows)
                whole = _column(c, b.iop("add", b.iop("add", b.iop("mul", block, width), lane), b.iop("mul", r, s0)),
                                st.s)
                _butterfly(c, st, src if i == 0 else local[i % 2 - 1], dst if i == len(stages) - 1 else local[i % 2],
                           p, whole if i == 0 else packed, whole if i == len(stages) - 1 else packed)


def _blocking(n, itemsize):
    """(the first stage run block by block, the block's width in columns, the complex elements of its two
    packed buffers): once a stage's block fits in BLOCK_BYTES, where the whole array does not (else no stage)."""
    stages, width = _stages(n), max(BLOCK_LINE // itemsize, 1)
    first = next((i for i, (_, m_n, s) in enumerate(stages) if n * itemsize > BLOCK_BYTES and s >= width
                  and 2 * m_n * width * itemsize <= BLOCK_BYTES), len(stages))
    if first >= len(stages) - 1:        # one stage: nothing to keep in the cache
        return len(stages), width, 0
    return first, width, 2 * stages[first][1] * width


def _complex_passes(c, n, table, offsets, sign, scale, local):
    """The passes of a complex transform of length n as (count, emit): emit(pairs) writes `count` passes
    from and to the (src, dst) pairs given; the first passes run over the whole array, the rest block by
    block (_blocking) in `local` scratch memory. scale applies to the last stage."""
    stages = [_Stage(r, m_n, s, [c.at(table, offsets[i] + j * (m_n // 4)) for j in range(3)] if r == 4 else None,
                     sign, scale if i == len(_stages(n)) - 1 else None)
              for i, (r, m_n, s) in enumerate(_stages(n))]
    first, width, local_size = _blocking(n, 2 * c.part.itemsize)
    passes = [(1, functools.partial(_full_pass, c, st)) for st in stages[:first]]
    if first < len(stages):
        packed = [c.at(local, j * local_size // 2) for j in range(2)]
        passes.append((1, lambda pairs: _blocked_passes(c, stages[first:], *pairs[0], packed, width)))
    return passes


def _split_real(c, src, dst, h, table):
    """RFFT's last pass: the spectrum X (h + 1 values) of 2h reals from Z, the transform of their pairs (one
    store per iteration, so that the loop vectorizes)."""
    z0 = c.load(src, 0)
    c.store(dst, 0, (c.op("fadd", z0[0], z0[1]), c.const(0)))
    c.store(dst, h, (c.op("fsub", z0[0], z0[1]), c.const(0)))
    half = c.const(0.5)
    with c.f.loop(1, h, **LOOP_HINTS) as k:
        zk, zj = c.load(src, k), c.conj(c.load(src, c.b.iop("sub", h, k)))
        e = c.scale(c.add(zk, zj), half)
        o = c.times_i(c.scale(c.sub(zk, zj), half), -1)        # (zk - conj zj) / 2i
        c.store(dst, k, c.add(e, c.mul(o, c.load(table, k))))


def _join_real(c, src, dst, h, table):
    """IRFFT's first pass, _split_real backwards, times 1/n: Z from the half spectrum X (h + 1 values)."""
    inv = c.const(1 / (2 * h))
    x0, xh = c.load(src, 0), c.load(src, h)
    c.store(dst, 0, c.scale((c.op("fadd", x0[0], xh[0]), c.op("fsub", x0[0], xh[0])), inv))
    with c.f.loop(1, h, **LOOP_HINTS) as k:
        xk, xj = c.load(src, k), c.conj(c.load(src, c.b.iop("sub", h, k)))
        odd = c.mul(c.sub(xk, xj), c.load(table, k), conj=True)    # 2 O
        c.store(dst, k, c.scale(c.add(c.add(xk, xj), c.times_i(odd, 1)), inv))


def lower_fft(k, out, x, kind, n, batch):
    """Emit the transforms of `batch` rows: kind 'fft', 'ifft', 'rfft' or 'irfft' of length n (a power of
    two) from buffer x to buffer out, rows [%lo, %hi) (a chunk of the batch when split over threads)."""
    from ..backend import runtime  # as conv_lowering: the thread count sizes the scratch
    dtype = out.aval.dtype if kind != "irfft" else x.aval.dtype
    c = _Complex(k, dtype)
    real = kind in ("rfft", "irfft")
    m = n // 2 if real else n                      # the complex transform's length
    table, offsets = twiddles(max(m, 1), np.dtype(dtype))
    table_ptr = k.f.module.array(table)
    sign = 1 if kind in ("ifft", "irfft") else -1
    scale = c.const(1 / n) if kind == "ifft" and n > 1 else None
    _, _, local_size = _blocking(m, 2 * c.part.itemsize)
    slot_size = m + local_size                     # complex elements of scratch per chunk of the batch
    slots = min(runtime.NUM_THREADS, batch)
    b = k.b
    slot = b.iop("sdiv", b.iop("add", b.iop("mul", "%lo", slots), batch - 1), batch)     # the chunk this is
    scratch = c.at(k.scratch_memory(slots * slot_size * 2 * c.part.itemsize), b.iop("mul", slot, slot_size))
    local = c.at(scratch, m)
    if real and n == 1:
        passes = [(1, lambda pairs: _real_one(c, *pairs[0], kind))]
    else:
        passes = _complex_passes(c, m, table_ptr, offsets, sign, scale, local)
        post = c.at(table_ptr, offsets[-1])
        if kind == "rfft":
            passes.append((1, lambda pairs: _split_real(c, *pairs[0], m, post)))
        elif kind == "irfft":
            passes.insert(0, (1, lambda pairs: _join_real(c, *pairs[0], m, post)))
        if not passes:
            passes = [(1, lambda pairs: c.store(pairs[0][1], 0, c.load(pairs[0][0], 0)))]
    in_row, out_row = (x.nbytes // max(batch, 1)), (out.nbytes // max(batch, 1))
    total = sum(count for count, _ in passes)
    with k.f.loop("%lo", "%hi") as row:
        bufs = [k.f.emit(f"getelementptr i8, ptr {x.ptr}, i64 {k.b.iop('mul', row, in_row)}")]
        dst = k.f.emit(f"getelementptr i8, ptr {out.ptr}, i64 {k.b.iop('mul', row, out_row)}")
        bufs += [dst if (total - 1 - i) % 2 == 0 else scratch for i in range(total)]   # the last writes dst
        pairs, at = list(itertools.pairwise(bufs)), 0
        for count, emit in passes:
            emit(pairs[at:at + count])
            at += count


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
