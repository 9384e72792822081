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
import math

from ..backend.rules import Kernel, llvm_type, memory_type
from .window_geometry import dilate_dim

VECTOR_BYTES = 64       # one AVX-512 register; LLVM splits the vectors on machines with narrower ones
ACCUMULATORS = 24       # vector accumulators per tile: AVX-512 has 32 registers, the rest hold operands
MAX_VECTORS = 4         # vectors (along x) or feature vectors per tile


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
        fill_x, fill_f = ql / (-(-ql // vl) * vl), og / (-(-og // vl) * vl)
        self.along_x = fill_x > fill_f or fill_x == fill_f and self.out_str[2 + len(self.Q) - 1] == 1
        if self.along_x:
            vectors = min(-(-ql // vl), MAX_VECTORS)
            self.block_pos, self.block_feat = vectors * vl, min(og, max(1, ACCUMULATORS // vectors))
        else:
            vectors = min(-(-og // vl), MAX_VECTORS)
            self.block_pos, self.block_feat = min(ql, max(1, ACCUMULATORS // vectors)), vectors * vl
        # the packed input: [feature][padded outer spatial...][phase of the last axis][row of length R]
        s, k, r = self.st[-1], self.K[-1], self.rd[-1]
        reach = -(-ql // vl) * vl if self.along_x else ql
        self.R = max(reach + max(k - 1, 0) * r // s, -(-self.P[-1] // s))
        self.x_str = [math.prod(self.P[:-1]) * s * self.R] + _row_major(self.P[:-1] + [s * self.R])[:-1]
        self.x_size = self.C * self.x_str[0] + self.vl          # slack: the last vectors read past the last row
        # weights read in place when along x (as scalars) or when their out-feature axis is contiguous
        self.pack_weights = not self.along_x and (self.rhs_str[0] != 1 or rhs.dtype != self.dtype)
        self.og_padded = -(-og // vl) * vl
        kernel_size = math.prod(self.K)
        if self.pack_weights:   # [group][in feature][kernel offsets][out feature, padded to whole vectors]
            self.w_str = [self.I * kernel_size * self.og_padded, 1, kernel_size * self.og_padded] + \
                         [st * self.og_padded for st in _row_major(self.K)]
        else:
            self.w_str = [og * self.rhs_str[0]] + self.rhs_str

    def input_range(self, d):
        """The input positions along spatial axis d that land inside the padded extent."""
        (lo, _), ld, s = self.pads[d], self.ld[d], self.S[d]
        return max(0, -(-(-lo) // ld)), min(s, -(-(self.P[d] - lo) // ld))


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
    b, ty = k.b, llvm_type(g.dtype)
    s = g.st[-1]
    with k.loop(0, g.C) as c:
        with _nest(k, [g.input_range(d) for d in range(len(g.S))]) as xs:
            ps = [b.iop("add", b.iop("mul", x, ld), lo) for x, ld, (lo, _) in zip(xs, g.ld, g.pads)]
            src = _dot(b, [(n, g.lhs_str[0]), (c, g.lhs_str[1])] + list(zip(xs, g.lhs_str[2:])))
            last = ps[-1]
            phase, j = (b.iop("srem", last, s), b.iop("sdiv", last, s)) if s > 1 else (0, last)
            dst = _dot(b, [(c, g.x_str[0])] + list(zip(ps[:-1], g.x_str[1:])) + [(phase, g.R), (j, 1)])
            _store(k, _load(k, lhs.ptr, lhs.aval.dtype, src, g.dtype), xp, dst, g.dtype)


def _pack_weights(k, g, rhs, wp):
    """rhs into wp: [group][in feature][kernel offsets][out feature] (out features padded with zeros)."""
    b, ty = k.b, llvm_type(g.dtype)
    groups = g.fg * g.bg
    with _nest(k, [(0, groups), (0, g.I)] + [(0, d) for d in g.K] + [(0, g.Og)]) as (grp, i, *ks, o):
        src = _dot(b, [(b.iop("add", b.iop("mul", grp, g.Og), o), g.rhs_str[0]), (i, g.rhs_str[1])]
                   + list(zip(ks, g.rhs_str[2:])))
        dst = _dot(b, [(grp, g.w_str[0]), (o, 1), (i, g.w_str[2])] + list(zip(ks, g.w_str[3:])))
        _store(k, _load(k, rhs.ptr, rhs.aval.dtype, src, g.dtype), wp, dst, g.dtype)


class _nest:
    """Nested loops over [lo, hi) ranges: `with _nest(k, ranges) as indices`."""

    def __init__(self, k, ranges):
        self.k, self.ranges, self.loops = k, ranges, []

    def __enter__(self):
        out = []
        for lo, hi in self.ranges:
            loop = self.k.loop(lo, hi)
            self.loops.append(loop)
            out.append(loop.__enter__())
        return out

    def __exit__(self, *exc):
        for loop in reversed(self.loops):
            loop.__exit__(*exc)


def _tile(k, g, at, npos, nfeat):
    """Accumulate and store the outputs at positions q0 .. q0 + npos - 1 along x and features f0 .. f0 + nfeat - 1
    of group grp (`at`: the SSA indices n_out, grp, in-feature base c0, outer positions, q0, f0)."""
    b, vec, ty = k.b, at["vec"], llvm_type(g.dtype)
    vl = g.vl
    rows, cols = (-(-npos // vl), nfeat) if g.along_x else (npos, -(-nfeat // vl))
    accs = [[k.alloca(vec.vty) for _ in range(cols)] for _ in range(rows)]
    for row in accs:
        for a in row:
            k.line(f"store {vec.vty} zeroinitializer, ptr {a}")
    w_buf = at["w"]
    with k.loop(0, g.I) as i:
        with _nest(k, [(0, d) for d in g.K[:-1]]) as ks:
            outer = [b.iop("add", b.iop("mul", q, s), b.iop("mul", kk, r)) for q, kk, s, r in
                     zip(at["outer"], ks, g.st, g.rd)]
            x_base = _dot(b, [(b.iop("add", at["c0"], i), g.x_str[0])] + list(zip(outer, g.x_str[1:])))
            x_base = b.iop("add", x_base, at["q0"])
            w_base = _dot(b, [(at["grp"], g.w_str[0]), (at["f0"], g.w_str[1]), (i, g.w_str[2])]
                          + list(zip(ks, g.w_str[3:])))
            hints = {"unroll_full": None} if g.K[-1] <= 8 else {}
            with k.loop(0, g.K[-1], **hints) as kl:
                t = b.iop("mul", kl, g.rd[-1])
                s = g.st[-1]
                phase, off = (b.iop("srem", t, s), b.iop("sdiv", t, s)) if s > 1 else (0, t)
                x_ptr = _ptr(k, at["xp"], ty, b.iop("add", x_base, b.iop("add", b.iop("mul", phase, g.R), off)))
                w_ptr = _ptr(k, w_buf, memory_type(at["w_dtype"]), b.iop("add", w_base, b.iop("mul", kl, g.w_str[-1])))
                _accumulate(k, g, vec, accs, x_ptr, w_ptr, at["w_dtype"], npos, nfeat)
    _store_tile(k, g, vec, accs, at, npos, nfeat)


def _accumulate(k, g, vec, accs, x_ptr, w_ptr, w_dtype, npos, nfeat):
    """One contraction step of a tile: accs += inputs (x_ptr) * weights (w_ptr)."""
    ty, vl = llvm_type(g.dtype), g.vl
    if g.along_x:
        xs = [vec.load(_ptr(k, x_ptr, ty, v * vl)) for v in range(len(accs))]
        for o in range(nfeat):
            w = vec.splat(_load(k, w_ptr, w_dtype, k.b.iop("mul", o, g.w_str[1]), g.dtype))
            for v, x in enumerate(xs):
                _update(k, vec, accs[v][o], x, w)
    else:
        ws = [vec.load(_ptr(k, w_ptr, ty, v * vl), nfeat - v * vl) for v in range(len(accs[0]))]
        for p in range(npos):
            x = vec.splat(k.f.emit(f"load {ty}, ptr {_ptr(k, x_ptr, ty, p)}, align {g.dtype.itemsize}"))
            for v, w in enumerate(ws):
                _update(k, vec, accs[p][v], x, w)


def _update(k, vec, acc, x, w):
    k.line(f"store {vec.vty} {vec.fma(x, w, k.f.emit(f'load {vec.vty}, ptr {acc}'))}, ptr {acc}")


def _store_tile(k, g, vec, accs, at, npos, nfeat):
    """The tile's accumulators to the output: vector stores where its lanes are contiguous there."""
    b, out = k.b, at["out"]
    ty, vl = llvm_type(g.dtype), g.vl
    feat_str, x_str = g.out_str[1], g.out_str[-1]
    base = _dot(b, [(at["n_out"], g.out_str[0]), (b.iop("add", b.iop("mul", at["grp"], g.Og), at["f0"]), feat_str),
                    (at["q0"], x_str)] + list(zip(at["outer"], g.out_str[2:-1])))
    lane_str = x_str if g.along_x else feat_str
    for r, row in enumerate(accs):
        for c, acc in enumerate(row):
            v = k.f.emit(f"load {vec.vty}, ptr {acc}")
            pos, feat = (r * vl, c) if g.along_x else (r, c * vl)
            valid = min(vl, (npos - pos) if g.along_x else (nfeat - feat))
            start = b.iop("add", base, pos * x_str + feat * feat_str)
            if lane_str == 1:
                vec.store(v, _ptr(k, out.ptr, ty, start), valid)
                continue
            for lane in range(valid):
                _store(k, vec.lane(v, lane), out.ptr, b.iop("add", start, lane * lane_str), g.dtype)


def _blocks(total, size):
    """[(count of whole blocks, block size), (1, the rest)] without empty entries."""
    return [(n, s) for n, s in ((total // size, size), (1 if total % size else 0, total % size)) if n]


def _lower_conv(k, outs, ins, **params):
    (out,), (lhs, rhs) = outs, ins
    g = _Geometry(lhs.aval, rhs.aval, out.aval, **params)
    if out.aval.size == 0:
        return
    b, ty = k.b, llvm_type(g.dtype)
    xp = k.scratch_memory(g.x_size * g.dtype.itemsize)
    k.line(f"call void @llvm.memset.p0.i64(ptr {xp}, i8 0, i64 {g.x_size * g.dtype.itemsize}, i1 false)")
    at = {"xp": xp, "out": out, "vec": _Vectors(k.f, g.dtype, g.vl), "w": rhs.ptr, "w_dtype": rhs.aval.dtype}
    if g.pack_weights:
        size = g.fg * g.bg * g.w_str[0] * g.dtype.itemsize
        at["w"], at["w_dtype"] = k.scratch_memory(size), g.dtype
        k.line(f"call void @llvm.memset.p0.i64(ptr {at['w']}, i8 0, i64 {size}, i1 false)")
        _pack_weights(k, g, rhs, at["w"])
    with k.loop(0, g.Nout) as n_out:
        with k.loop(0, g.bg) as gb:
            _pack_input(k, g, lhs, xp, b.iop("add", b.iop("mul", gb, g.Nout), n_out))
            with k.loop(0, g.fg) as gf:
                at.update(n_out=n_out, grp=b.iop("add", gb, gf), c0=b.iop("mul", gf, g.I))
                with _nest(k, [(0, q) for q in g.Q[:-1]]) as outer:
                    at["outer"] = outer
                    _tiles(k, g, at)


def _tiles(k, g, at):
    """Every tile of one row of outputs along x."""
    b = k.b
    q_start = 0
    for count, npos in _blocks(g.Q[-1], g.block_pos):
        with k.loop(0, count) as qb:
            at["q0"] = b.iop("add", q_start, b.iop("mul", qb, npos))
            f_start = 0
            for fcount, nfeat in _blocks(g.Og, g.block_feat):
                with k.loop(0, fcount) as fb:
                    at["f0"] = b.iop("add", f_start, b.iop("mul", fb, nfeat))
                    _tile(k, g, at, npos, nfeat)
                f_start += fcount * nfeat
        q_start += count * npos


lower_conv = Kernel(_lower_conv, scratch=True)
