"""The compiled form of conv_general_dilated: register-tiled loops over packed operands (an implicit GEMM).

Per input batch element, the input is packed into scratch memory in canonical order (features, spatial...),
its padding and dilation holes written out as zeros and its last spatial axis split into stride phases, so the
values that consecutive outputs along that axis (x) read lie next to each other whatever the layout, padding,
dilation or stride. A tile of outputs (consecutive positions along x times a block of output features) then
accumulates over the contraction (in features times kernel offsets) in vector registers, either

- along x: a vector of packed inputs times a broadcast weight, one accumulator per (vector, feature); or
- along features: a vector of weights times a broadcast input, one accumulator per (position, vector); the
  weights are read in place when their out-feature axis is contiguous, else packed too,

whichever fills more vector lanes (x is short in kernel gradients, features are few in first layers). A
tile's stores are vector stores where the output's lanes are contiguous, else one per element. The ragged
ends along x and the features are tiles of their own, their sizes known when the code is generated.
"""
import contextlib
import functools
import math

import numpy as np

from ..backend.rules import Kernel, llvm_type, memory_type
from .window_geometry import dilate_dim, kept_range

VECTOR_BYTES = 64       # one AVX-512 register; LLVM splits the vectors on machines with narrower ones
ACCUMULATORS = 24       # vector accumulators per tile: AVX-512 has 32 registers, the rest hold operands
MAX_VECTORS = 4         # vectors (along x) or feature vectors per tile
ALIGN = 64              # bytes: where each chunk's scratch region starts
FLOPS_PER_NS = 50       # what the kernel runs at on one core, roughly: it is split over the threads above 200 us


def _ceil_div(a, b):
    return -(-a // b)


def _row_major(shape):
    strides, s = [], 1
    for d in reversed(shape):
        strides.append(s)
        s *= d
    return strides[::-1]


class _Geometry:
    """Everything static about one convolution: canonical sizes, the element strides of the operands in
    canonical order (batch or out feature, feature or in feature, spatial...), the packed input's layout and the
    tiling. A convolution without spatial axes gets one of size 1."""

    def __init__(self, lhs, rhs, out, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                 feature_group_count, batch_group_count, **_):
        specs = dimension_numbers
        strides = [_row_major(a.shape) for a in (lhs, rhs, out)]
        virtual = not lhs.shape[2:]
        lhs_c, rhs_c, out_c = ([a.shape[i] for i in spec] + [1] * virtual for a, spec in zip((lhs, rhs, out), specs))
        self.lhs_str, self.rhs_str, self.out_str = ([st[i] for i in spec] + [0] * virtual
                                                    for st, spec in zip(strides, specs))
        (self.N, self.C, *self.S), (self.O, self.I, *self.K), (self.Nout, _, *self.Q) = lhs_c, rhs_c, out_c
        self.fg, self.bg = feature_group_count, batch_group_count
        self.Og = self.O // (self.fg * self.bg)
        self.st, self.ld, self.rd = (list(v) + [1] * virtual for v in (window_strides, lhs_dilation, rhs_dilation))
        self.pads = [tuple(p) for p in padding] + [(0, 0)] * virtual
        self.P = [dilate_dim(s, d) + lo + hi for s, d, (lo, hi) in zip(self.S, self.ld, self.pads)]
        self.dtype = out.dtype
        self.vl = max(1, VECTOR_BYTES // self.dtype.itemsize)
        vl, ql, og = self.vl, self.Q[-1], self.Og
        fill_x, fill_f = (n / max(_ceil_div(n, vl) * vl, 1) for n in (ql, og))     # the lanes each fills
        self.along_x = fill_x > fill_f or fill_x == fill_f and self.out_str[2 + len(self.Q) - 1] == 1
        if self.along_x:
            vectors = min(_ceil_div(ql, vl), MAX_VECTORS)
            self.block_pos, self.block_feat = vectors * vl, min(og, max(1, ACCUMULATORS // vectors))
            per_row = vectors * self.block_feat
        else:
            vectors = min(_ceil_div(og, vl), MAX_VECTORS)
            self.block_pos, self.block_feat = min(ql, max(1, ACCUMULATORS // vectors)), vectors * vl
            per_row = vectors * self.block_pos
        # short rows: a tile spans several rows of the second last spatial axis (the row axis)
        self.row_axis = len(self.Q) - 2 if len(self.Q) > 1 else None
        rows = max(1, ACCUMULATORS // max(per_row, 1))     # (per_row is 0 for an empty output)
        self.block_rows = 1 if self.row_axis is None else min(self.Q[self.row_axis], rows)
        # the packed input: [feature][padded outer spatial...][phase of the last axis][row of length R]
        s, k, r = self.st[-1], self.K[-1], self.rd[-1]
        reach = _ceil_div(ql, vl) * vl if self.along_x else ql
        self.R = max(reach + max(k - 1, 0) * r // s, _ceil_div(self.P[-1], s))
        self.x_str = [math.prod(self.P[:-1]) * s * self.R] + _row_major(self.P[:-1] + [s * self.R])[:-1]
        self.x_size = self.C * self.x_str[0] + self.vl          # slack: the last vectors read past the last row
        # weights read in place when along x (as scalars) or when their out-feature axis is contiguous
        self.pack_weights = not self.along_x and (self.rhs_str[0] != 1 or rhs.dtype != self.dtype)
        self.og_padded = _ceil_div(og, vl) * vl
        kernel_size = math.prod(self.K)
        if self.pack_weights:   # [group][in feature][kernel offsets][out feature, padded to whole vectors]
            self.w_str = [self.I * kernel_size * self.og_padded, 1, kernel_size * self.og_padded] + \
                         [st * self.og_padded for st in _row_major(self.K)]
        else:
            self.w_str = [og * self.rhs_str[0]] + self.rhs_str

    def input_range(self, d):
        """The input positions along spatial axis d that land inside the padded extent."""
        (lo, _), ld, s = self.pads[d], self.ld[d], self.S[d]
        return kept_range(s, ld, lo, self.P[d])


class _Vectors:
    """Vector instructions on <vl x T>."""

    def __init__(self, f, dtype, vl):
        self.f, self.vl, self.dtype = f, vl, dtype
        self.ty, self.size = llvm_type(dtype), dtype.itemsize
        self.vty = f"<{vl} x {self.ty}>"
        self.suffix = f"v{vl}{'f' if dtype.kind == 'f' else 'i'}{8 * self.size}"

    def _mask(self, n):
        return "<" + ", ".join(f"i1 {'true' if i < n else 'false'}" for i in range(self.vl)) + ">"

    def load(self, ptr, n=None):
        """The vector at ptr; only its first n lanes read (the rest zero) when n is given."""
        if n is None or n >= self.vl:
            return self.f.emit(f"load {self.vty}, ptr {ptr}, align {self.size}")
        return self.f.emit(f"call {self.vty} @llvm.masked.load.{self.suffix}.p0(ptr align {self.size} {ptr}, "
                           f"<{self.vl} x i1> {self._mask(n)}, {self.vty} zeroinitializer)")

    def store(self, v, ptr, n):
        """The first n lanes of v to ptr (contiguous)."""
        if n >= self.vl:
            self.f.line(f"store {self.vty} {v}, ptr {ptr}, align {self.size}")
        else:
            self.f.line(f"call void @llvm.masked.store.{self.suffix}.p0({self.vty} {v}, ptr align {self.size} {ptr}, "
                        f"<{self.vl} x i1> {self._mask(n)})")

    def splat(self, x):
        v = self.f.emit(f"insertelement {self.vty} poison, {self.ty} {x}, i64 0")
        return self.f.emit(f"shufflevector {self.vty} {v}, {self.vty} poison, <{self.vl} x i32> zeroinitializer")

    def fma(self, a, b, c):
        """a * b + c."""
        if self.dtype.kind == "f":
            return self.f.emit(f"call {self.vty} @llvm.fmuladd.{self.suffix}({self.vty} {a}, {self.vty} {b}, "
                               f"{self.vty} {c})")
        return self.f.emit(f"add {self.vty} {self.f.emit(f'mul {self.vty} {a}, {b}')}, {c}")

    def lane(self, v, i):
        return self.f.emit(f"extractelement {self.vty} {v}, i64 {i}")

    def _shuffle(self, ty, a, b, mask):
        lanes = ", ".join(f"i32 {m}" for m in mask)
        return self.f.emit(f"shufflevector {ty} {a}, {ty} {b}, <{len(mask)} x i32> <{lanes}>")

    def interleave(self, vectors):
        """One <n * vl> vector (n = len(vectors)) whose lane p * n + o is lane p of vectors[o]."""
        n, width, parts = len(vectors), self.vl, list(vectors)
        while len(parts) > 1:       # concatenate pairwise: <vl>, <2 vl>, <4 vl> ...
            ty = f"<{width} x {self.ty}>"
            parts += ["zeroinitializer"] * (len(parts) % 2)
            parts = [self._shuffle(ty, a, b, range(2 * width)) for a, b in zip(parts[::2], parts[1::2])]
            width *= 2
        ty = f"<{width} x {self.ty}>"
        return self._shuffle(ty, parts[0], "poison", [o * self.vl + p for p in range(self.vl) for o in range(n)])

    def lanes(self, v, width, start, count):
        """Lanes start .. start + count - 1 of the <width> vector v, as a <count> vector."""
        return self._shuffle(f"<{width} x {self.ty}>", v, "poison", range(start, start + count))

    def store_lanes(self, v, width, ptr, n):
        """The first n lanes of the <width> vector v to ptr (contiguous)."""
        ty = f"<{width} x {self.ty}>"
        if n >= width:
            self.f.line(f"store {ty} {v}, ptr {ptr}, align {self.size}")
            return
        mask = "<" + ", ".join(f"i1 {'true' if i < n else 'false'}" for i in range(width)) + ">"
        suffix = f"v{width}{self.suffix[len(f'v{self.vl}'):]}"
        self.f.line(f"call void @llvm.masked.store.{suffix}.p0({ty} {v}, ptr align {self.size} {ptr}, "
                    f"<{width} x i1> {mask})")


def _ptr(k, base, ty, index):
    """The address of element `index` (an i64 or a Python int) of type ty from base."""
    return base if index == 0 else k.f.emit(f"getelementptr inbounds {ty}, ptr {base}, i64 {index}")


def _dot(b, terms):
    """sum of index * stride over (index, stride) pairs, folding Python ints."""
    total = 0
    for i, s in terms:
        total = b.iop("add", total, b.iop("mul", i, s))
    return total


def _load(k, ptr, src, index, dtype):
    """Element `index` of the array of dtype src at ptr, converted to dtype."""
    v = k.f.emit(f"load {memory_type(src)}, ptr {_ptr(k, ptr, memory_type(src), index)}, align {src.itemsize}")
    return k.b.convert(v, src, dtype)


def _store(k, value, ptr, index, dtype):
    """value to element `index` of the array of dtype at ptr."""
    ty = llvm_type(dtype)
    k.line(f"store {ty} {value}, ptr {_ptr(k, ptr, ty, index)}, align {dtype.itemsize}")


def _pack_input(k, g, lhs, xp, n):
    """Batch element n of lhs into xp (zeroed once, before the first): features, padded and dilated spatial
    axes, the last one split into stride phases."""
    b, s = k.b, g.st[-1]
    with _nest(k, [(0, g.C)] + [g.input_range(d) for d in range(len(g.S))]) as (c, *xs):
        ps = [b.iop("add", b.iop("mul", x, ld), lo) for x, ld, (lo, _) in zip(xs, g.ld, g.pads)]
        src = _dot(b, [(n, g.lhs_str[0]), (c, g.lhs_str[1])] + list(zip(xs, g.lhs_str[2:])))
        phase, j = (b.iop("srem", ps[-1], s), b.iop("sdiv", ps[-1], s)) if s > 1 else (0, ps[-1])
        dst = _dot(b, [(c, g.x_str[0])] + list(zip(ps[:-1], g.x_str[1:])) + [(phase, g.R), (j, 1)])
        _store(k, _load(k, lhs.ptr, lhs.aval.dtype, src, g.dtype), xp, dst, g.dtype)


def _pack_weights(k, g, rhs, wp):
    """rhs into wp: [group][in feature][kernel offsets][out feature] (out features padded with zeros)."""
    b, groups = k.b, g.fg * g.bg
    with _nest(k, [(0, groups), (0, g.I)] + [(0, d) for d in g.K] + [(0, g.Og)]) as (grp, i, *ks, o):
        src = _dot(b, [(b.iop("add", b.iop("mul", grp, g.Og), o), g.rhs_str[0]), (i, g.rhs_str[1])]
                   + list(zip(ks, g.rhs_str[2:])))
        dst = _dot(b, [(grp, g.w_str[0]), (o, 1), (i, g.w_str[2])] + list(zip(ks, g.w_str[3:])))
        _store(k, _load(k, rhs.ptr, rhs.aval.dtype, src, g.dtype), wp, dst, g.dtype)


@contextlib.contextmanager
def _nest(k, ranges):
    """Nested loops over [lo, hi) ranges; yields the indices."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(k.loop(lo, hi)) for lo, hi in ranges]


def _rows_read_input(b, g, coords, nrows):
    """Whether any of the tile's rows reads input (not only padding or dilation holes) at these padded coordinates
    of the outer axes (those of its first row): True, or an i1."""
    conds = []
    for d, p in enumerate(coords):
        (lo, hi), ld = g.pads[d], g.ld[d]
        if lo <= 0 and hi <= 0 and ld == 1:
            continue                       # every coordinate is the input's
        hits = []
        for r in range(nrows if d == g.row_axis else 1):
            rel = b.iop("sub", b.iop("add", p, r * g.st[d]), lo)
            hit = [b.in_range(rel, 0, dilate_dim(g.S[d], ld))]
            if ld > 1:
                hit.append(b(f"icmp eq i64 {b.iop('srem', rel, ld)}, 0"))
            hits.append(b.all_of(hit))
        conds.append(_any(b, hits))
    return b.all_of(conds)


def _any(b, conds):
    """The disjunction of i1 values and Python bools."""
    if any(c is True for c in conds):
        return True
    conds = [c for c in conds if c is not False]
    return functools.reduce(lambda x, y: b(f"or i1 {x}, {y}"), conds) if conds else False


def _tile(k, g, at, nrows, npos, nfeat):
    """Accumulate and store the outputs of rows q_row .. q_row + nrows - 1 (of the second last spatial axis),
    positions q0 .. q0 + npos - 1 along x and features f0 .. f0 + nfeat - 1 of group grp (`at`: the SSA indices)."""
    b, vec, ty = k.b, at["vec"], llvm_type(g.dtype)
    vl = g.vl
    inner, cols = (-(-npos // vl), nfeat) if g.along_x else (npos, -(-nfeat // vl))
    accs = [[[k.alloca(vec.vty) for _ in range(cols)] for _ in range(inner)] for _ in range(nrows)]
    for a in (a for rows in accs for row in rows for a in row):
        k.line(f"store {vec.vty} zeroinitializer, ptr {a}")
    row_shift = g.st[g.row_axis] * g.x_str[1 + g.row_axis] if g.row_axis is not None else 0
    with k.loop(0, g.I) as i, _nest(k, [(0, d) for d in g.K[:-1]]) as ks:
        coords = [b.iop("add", b.iop("mul", q, s), b.iop("mul", kk, r)) for q, kk, s, r in
                  zip(at["outer"], ks, g.st, g.rd)]
        x_base = _dot(b, [(b.iop("add", at["c0"], i), g.x_str[0]), (at["q0"], 1)] + list(zip(coords, g.x_str[1:])))
        w_base = _dot(b, [(at["grp"], g.w_str[0]), (at["f0"], g.w_str[1]), (i, g.w_str[2])]
                      + list(zip(ks, g.w_str[3:])))
        with k.f.when(_rows_read_input(b, g, coords, nrows)), k.loop(0, g.K[-1]) as kl:
            t, s = b.iop("mul", kl, g.rd[-1]), g.st[-1]
            phase, off = (b.iop("srem", t, s), b.iop("sdiv", t, s)) if s > 1 else (0, t)
            x_at = b.iop("add", x_base, b.iop("add", b.iop("mul", phase, g.R), off))
            x_ptrs = [_ptr(k, at["xp"], ty, b.iop("add", x_at, r * row_shift)) for r in range(nrows)]
            w_ptr = _ptr(k, at["w"], memory_type(at["w_dtype"]), b.iop("add", w_base, b.iop("mul", kl, g.w_str[-1])))
            _accumulate(k, g, vec, accs, x_ptrs, w_ptr, at["w_dtype"], npos, nfeat)
    _store_tile(k, g, vec, accs, at, npos, nfeat)


def _accumulate(k, g, vec, accs, x_ptrs, w_ptr, w_dtype, npos, nfeat):
    """One contraction step of a tile: accs += inputs (x_ptrs, one per row) * weights (w_ptr)."""
    ty, vl = llvm_type(g.dtype), g.vl
    if g.along_x:
        xs = [[vec.load(_ptr(k, x_ptr, ty, v * vl)) for v in range(len(accs[0]))] for x_ptr in x_ptrs]
        for o in range(nfeat):
            w = vec.splat(_load(k, w_ptr, w_dtype, k.b.iop("mul", o, g.w_str[1]), g.dtype))
            for acc_row, x_row in zip(accs, xs):
                for v, x in enumerate(x_row):
                    _update(k, vec, acc_row[v][o], x, w)
    else:
        ws = [vec.load(_ptr(k, w_ptr, ty, v * vl), nfeat - v * vl) for v in range(len(accs[0][0]))]
        for acc_row, x_ptr in zip(accs, x_ptrs):
            for p in range(npos):
                x = vec.splat(k.f.emit(f"load {ty}, ptr {_ptr(k, x_ptr, ty, p)}, align {g.dtype.itemsize}"))
                for v, w in enumerate(ws):
                    _update(k, vec, acc_row[p][v], x, w)


def _update(k, vec, acc, x, w):
    k.line(f"store {vec.vty} {vec.fma(x, w, k.f.emit(f'load {vec.vty}, ptr {acc}'))}, ptr {acc}")


def _store_tile(k, g, vec, accs, at, npos, nfeat):
    """The tile's accumulators to the output: vector stores where its lanes are contiguous there, else through a
    copy of the tile on the stack and a loop over its elements."""
    b, out = k.b, at["out"]
    vl, ty = g.vl, llvm_type(g.dtype)
    feat_str, x_str = g.out_str[1], g.out_str[-1]
    row_str = g.out_str[2 + g.row_axis] if g.row_axis is not None else 0
    base = _dot(b, [(at["n_out"], g.out_str[0]), (b.iop("add", b.iop("mul", at["grp"], g.Og), at["f0"]), feat_str),
                    (at["q0"], x_str)] + list(zip(at["outer"], g.out_str[2:-1])))
    flat = [a for rows in accs for row in rows for a in row]
    if g.along_x and feat_str == 1 and x_str != 1:
        _store_interleaved(k, g, vec, accs, _ptr(k, out.ptr, ty, base), row_str, npos, nfeat)
        return
    if (x_str if g.along_x else feat_str) == 1:
        for n, acc in enumerate(flat):
            r, a, c = n // (len(accs[0]) * len(accs[0][0])), n // len(accs[0][0]) % len(accs[0]), n % len(accs[0][0])
            pos, feat = (a * vl, c) if g.along_x else (a, c * vl)
            valid = min(vl, (npos - pos) if g.along_x else (nfeat - feat))
            start = b.iop("add", base, r * row_str + pos * x_str + feat * feat_str)
            vec.store(k.f.emit(f"load {vec.vty}, ptr {acc}"), _ptr(k, out.ptr, ty, start), valid)
        return
    tile = k.alloca(f"[{len(flat)} x {vec.vty}]")
    for n, acc in enumerate(flat):
        k.line(f"store {vec.vty} {k.f.emit(f'load {vec.vty}, ptr {acc}')}, ptr {_ptr(k, tile, vec.vty, n)}")
    inner, cols = len(accs[0]), len(accs[0][0])

    def lanes(count, start):   # the valid lanes of a vector whose first lane is element `start` of `count`
        return b.intrinsic("smin", vl, b.iop("sub", count, start), dtype=np.int64)

    def copy(r, a, c, lane, pos, feat):
        at = b.iop("add", b.iop("mul", b.iop("add", b.iop("mul", b.iop("add", b.iop("mul", r, inner), a), cols), c),
                                vl), lane)
        value = k.f.emit(f"load {ty}, ptr {_ptr(k, tile, ty, at)}, align {g.dtype.itemsize}")
        _store(k, value, out.ptr, _dot(b, [(base, 1), (r, row_str), (pos, x_str), (feat, feat_str)]), g.dtype)

    with _nest(k, [(0, len(accs)), (0, inner)]) as (r, a):
        if g.along_x:       # lanes are positions; the features (contiguous in NHWC) innermost
            with _nest(k, [(0, lanes(npos, b.iop("mul", a, vl))), (0, cols)]) as (lane, c):
                copy(r, a, c, lane, b.iop("add", b.iop("mul", a, vl), lane), c)
        else:               # lanes are features
            with k.loop(0, cols) as c, k.loop(0, lanes(nfeat, b.iop("mul", c, vl))) as lane:
                copy(r, a, c, lane, a, b.iop("add", b.iop("mul", c, vl), lane))


def _store_interleaved(k, g, vec, accs, out_ptr, row_str, npos, nfeat):
    """An along-x tile to an output whose features are contiguous (NHWC): per vector of positions, its feature
    accumulators interleaved by shuffles into one vector of (position, feature) lanes, stored whole where the
    tile's features fill the output's (else one small vector per position)."""
    vl, x_str = g.vl, g.out_str[-1]
    for r, row in enumerate(accs):
        for a, feats in enumerate(row):
            valid = min(vl, npos - a * vl)
            wide = vec.interleave([k.f.emit(f"load {vec.vty}, ptr {acc}") for acc in feats])
            width, start = nfeat * vl, r * row_str + a * vl * x_str
            if x_str == nfeat:
                vec.store_lanes(wide, width, _ptr(k, out_ptr, vec.ty, start), valid * nfeat)
                continue
            for p in range(valid):
                part = vec.lanes(wide, width, p * nfeat, nfeat)
                k.line(f"store <{nfeat} x {vec.ty}> {part}, ptr {_ptr(k, out_ptr, vec.ty, start + p * x_str)}, "
                       f"align {vec.size}")


def _blocks(k, total, size):
    """Loops over the blocks of `size` in range(total), then over the rest (one smaller block): inside each, yields
    (the block's start, its size)."""
    start = 0
    for count, n in ((total // size, size), (1 if total % size else 0, total % size)):
        if count:
            with k.loop(0, count) as i:
                yield k.b.iop("add", start, k.b.iop("mul", i, n)), n
            start += count * n


def _lower_conv(k, outs, ins, **params):
    """Per output batch element in [%lo, %hi) (a chunk of the batch, when the backend splits it over the threads):
    pack the input, then every tile. Each chunk packs into its own region of the scratch memory."""
    # runtime's thread count sizes the scratch: imported here, as the BLAS is in linalg, when code is generated
    from ..backend import runtime
    (out,), (lhs, rhs) = outs, ins
    g = _Geometry(lhs.aval, rhs.aval, out.aval, **params)
    if out.aval.size == 0:
        return
    b, size = k.b, g.dtype.itemsize
    x_bytes = _ceil_div(g.x_size * size, ALIGN) * ALIGN
    w_bytes = g.fg * g.bg * g.w_str[0] * size if g.pack_weights else 0
    slots = min(runtime.NUM_THREADS, g.Nout)
    slot = b.iop("sdiv", b.iop("add", b.iop("mul", "%lo", slots), g.Nout - 1), g.Nout)     # the chunk this is
    xp = _ptr(k, k.scratch_memory(slots * (x_bytes + w_bytes)), "i8", b.iop("mul", slot, x_bytes + w_bytes))
    k.line(f"call void @llvm.memset.p0.i64(ptr {xp}, i8 0, i64 {x_bytes + w_bytes}, i1 false)")
    at = {"xp": xp, "out": out, "vec": _Vectors(k.f, g.dtype, g.vl), "w": rhs.ptr, "w_dtype": rhs.aval.dtype}
    if g.pack_weights:
        at["w"], at["w_dtype"] = _ptr(k, xp, "i8", x_bytes), g.dtype
        _pack_weights(k, g, rhs, at["w"])
    rows, outer_sizes = (1, []) if g.row_axis is None else (g.Q[g.row_axis], g.Q[:g.row_axis])
    with k.loop("%lo", "%hi") as n_out, k.loop(0, g.bg) as gb:
        _pack_input(k, g, lhs, xp, b.iop("add", b.iop("mul", gb, g.Nout), n_out))
        with k.loop(0, g.fg) as gf, _nest(k, [(0, q) for q in outer_sizes]) as outer:
            at.update(n_out=n_out, grp=b.iop("add", gb, gf), c0=b.iop("mul", gf, g.I))
            for row, nrows in _blocks(k, rows, g.block_rows):
                at["outer"] = outer + [row] if g.row_axis is not None else []
                for at["q0"], npos in _blocks(k, g.Q[-1], g.block_pos):
                    for at["f0"], nfeat in _blocks(k, g.Og, g.block_feat):
                        _tile(k, g, at, nrows, npos, nfeat)


def _split(eqn):
    """The batch of outputs, and the serial time of the kernel estimated from its multiply-adds."""
    g = _Geometry(*(x.aval for x in eqn.inputs), eqn.outvars[0].aval, **eqn.params)
    return g.Nout, 2 * eqn.outvars[0].aval.size * g.I * math.prod(g.K) / FLOPS_PER_NS


lower_conv = Kernel(_lower_conv, scratch=True, split=_split)
