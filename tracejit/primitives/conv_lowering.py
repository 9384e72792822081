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
import functools
import math

import numpy as np

from ..backend.rules import Kernel, llvm_type, memory_type
from .conv_kernel_lanes import lane_count, lower_kernel_lanes
from .conv_vectors import Vectors, blocks, ceil_div, dot, load_as, nest, ptr_at, row_major, store_at
from .window_geometry import dilate_dim, kept_range

VECTOR_BYTES = 64       # one AVX-512 register; LLVM splits the vectors on machines with narrower ones
ACCUMULATORS = 24       # vector accumulators per tile: AVX-512 has 32 registers, the rest hold operands
MAX_VECTORS = 4         # vectors (along x) or feature vectors per tile
ALIGN = 64              # bytes: where each chunk's scratch region starts
KERNEL_LANES = 4        # vectors of kernel offsets (at least) that make the lanes run along the kernel
SCATTER_FEATURES = 4    # an along-x tile of fewer features stores to strided positions by scatters
FLOPS_PER_NS = 50       # what the kernel runs at on one core, roughly: it is split over the threads above 200 us


class _Geometry:
    """Everything static about one convolution: canonical sizes, the element strides of the operands in
    canonical order (batch or out feature, feature or in feature, spatial...), the packed input's layout and the
    tiling. A convolution without spatial axes gets one of size 1."""

    def __init__(self, lhs, rhs, out, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                 feature_group_count, batch_group_count, **_):
        specs = dimension_numbers
        strides = [row_major(a.shape) for a in (lhs, rhs, out)]
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
        fill_x, fill_f = (n / max(ceil_div(n, vl) * vl, 1) for n in (ql, og))     # the lanes each fills
        self.along_x = fill_x > fill_f or fill_x == fill_f and self.out_str[2 + len(self.Q) - 1] == 1
        lanes = lane_count(self.Q, self.K, self.rd, self.ld)      # along the kernel: long kernels, short outputs
        self.along_kernel = lanes >= KERNEL_LANES * vl and lanes / (ceil_div(lanes, vl) * vl) > max(fill_x, fill_f)
        if self.along_x:
            vectors = min(ceil_div(ql, vl), MAX_VECTORS)
            self.block_pos, self.block_feat = vectors * vl, min(og, max(1, ACCUMULATORS // vectors))
            per_row = vectors * self.block_feat
        else:
            vectors = min(ceil_div(og, vl), MAX_VECTORS)
            self.block_pos, self.block_feat = min(ql, max(1, ACCUMULATORS // vectors)), vectors * vl
            per_row = vectors * self.block_pos
        # short rows: a tile spans several rows of the second last spatial axis (the row axis)
        self.row_axis = len(self.Q) - 2 if len(self.Q) > 1 else None
        rows = max(1, ACCUMULATORS // max(per_row, 1))     # (per_row is 0 for an empty output)
        self.block_rows = 1 if self.row_axis is None else min(self.Q[self.row_axis], rows)
        # the packed input: [feature][padded outer spatial...][phase of the last axis][row of length R]
        s, k, r = self.st[-1], self.K[-1], self.rd[-1]
        reach = ceil_div(ql, vl) * vl if self.along_x else ql
        self.R = max(reach + max(k - 1, 0) * r // s, ceil_div(self.P[-1], s))
        self.x_str = [math.prod(self.P[:-1]) * s * self.R] + row_major(self.P[:-1] + [s * self.R])[:-1]
        self.x_size = self.C * self.x_str[0] + self.vl          # slack: the last vectors read past the last row
        # weights read in place when along x (as scalars) or when their out-feature axis is contiguous
        self.pack_weights = not self.along_x and (self.rhs_str[0] != 1 or rhs.dtype != self.dtype)
        self.og_padded = ceil_div(og, vl) * vl
        kernel_size = math.prod(self.K)
        if self.pack_weights:   # [group][in feature][kernel offsets][out feature, padded to whole vectors]
            self.w_str = [self.I * kernel_size * self.og_padded, 1, kernel_size * self.og_padded] + \
                         [st * self.og_padded for st in row_major(self.K)]
        else:
            self.w_str = [og * self.rhs_str[0]] + self.rhs_str

    def input_range(self, d):
        """The input positions along spatial axis d that land inside the padded extent."""
        (lo, _), ld, s = self.pads[d], self.ld[d], self.S[d]
        return kept_range(s, ld, lo, self.P[d])


def _pack_input(k, g, lhs, xp, n):
    """Batch element n of lhs into xp (zeroed once, before the first): features, padded and dilated spatial
    axes, the last one split into stride phases."""
    b, s = k.b, g.st[-1]
    with nest(k, [(0, g.C)] + [g.input_range(d) for d in range(len(g.S))]) as (c, *xs):
        ps = [b.iop("add", b.iop("mul", x, ld), lo) for x, ld, (lo, _) in zip(xs, g.ld, g.pads)]
        src = dot(b, [(n, g.lhs_str[0]), (c, g.lhs_str[1])] + list(zip(xs, g.lhs_str[2:])))
        phase, j = (b.iop("srem", ps[-1], s), b.iop("sdiv", ps[-1], s)) if s > 1 else (0, ps[-1])
        dst = dot(b, [(c, g.x_str[0])] + list(zip(ps[:-1], g.x_str[1:])) + [(phase, g.R), (j, 1)])
        store_at(k, load_as(k, lhs.ptr, lhs.aval.dtype, src, g.dtype), xp, dst, g.dtype)


def _pack_weights(k, g, rhs, wp):
    """rhs into wp: [group][in feature][kernel offsets][out feature] (out features padded with zeros)."""
    b, groups = k.b, g.fg * g.bg
    with nest(k, [(0, groups), (0, g.I)] + [(0, d) for d in g.K] + [(0, g.Og)]) as (grp, i, *ks, o):
        src = dot(b, [(b.iop("add", b.iop("mul", grp, g.Og), o), g.rhs_str[0]), (i, g.rhs_str[1])]
                   + list(zip(ks, g.rhs_str[2:])))
        dst = dot(b, [(grp, g.w_str[0]), (o, 1), (i, g.w_str[2])] + list(zip(ks, g.w_str[3:])))
        store_at(k, load_as(k, rhs.ptr, rhs.aval.dtype, src, g.dtype), wp, dst, g.dtype)


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
    with k.loop(0, g.I) as i, nest(k, [(0, d) for d in g.K[:-1]]) as ks:
        coords = [b.iop("add", b.iop("mul", q, s), b.iop("mul", kk, r)) for q, kk, s, r in
                  zip(at["outer"], ks, g.st, g.rd)]
        x_base = dot(b, [(b.iop("add", at["c0"], i), g.x_str[0]), (at["q0"], 1)] + list(zip(coords, g.x_str[1:])))
        w_base = dot(b, [(at["grp"], g.w_str[0]), (at["f0"], g.w_str[1]), (i, g.w_str[2])]
                      + list(zip(ks, g.w_str[3:])))
        with k.f.when(_rows_read_input(b, g, coords, nrows)), k.loop(0, g.K[-1]) as kl:
            t, s = b.iop("mul", kl, g.rd[-1]), g.st[-1]
            phase, off = (b.iop("srem", t, s), b.iop("sdiv", t, s)) if s > 1 else (0, t)
            x_at = b.iop("add", x_base, b.iop("add", b.iop("mul", phase, g.R), off))
            x_ptrs = [ptr_at(k, at["xp"], ty, b.iop("add", x_at, r * row_shift)) for r in range(nrows)]
            w_ptr = ptr_at(k, at["w"], memory_type(at["w_dtype"]), b.iop("add", w_base, b.iop("mul", kl, g.w_str[-1])))
            _accumulate(k, g, vec, accs, x_ptrs, w_ptr, at["w_dtype"], npos, nfeat)
    _store_tile(k, g, vec, accs, at, npos, nfeat)


def _accumulate(k, g, vec, accs, x_ptrs, w_ptr, w_dtype, npos, nfeat):
    """One contraction step of a tile: accs += inputs (x_ptrs, one per row) * weights (w_ptr)."""
    ty, vl = llvm_type(g.dtype), g.vl
    if g.along_x:
        xs = [[vec.load(ptr_at(k, x_ptr, ty, v * vl)) for v in range(len(accs[0]))] for x_ptr in x_ptrs]
        for o in range(nfeat):
            w = vec.splat(load_as(k, w_ptr, w_dtype, k.b.iop("mul", o, g.w_str[1]), g.dtype))
            for acc_row, x_row in zip(accs, xs):
                for v, x in enumerate(x_row):
                    _update(k, vec, acc_row[v][o], x, w)
    else:
        ws = [vec.load(ptr_at(k, w_ptr, ty, v * vl), nfeat - v * vl) for v in range(len(accs[0][0]))]
        for acc_row, x_ptr in zip(accs, x_ptrs):
            for p in range(npos):
                x = vec.splat(k.f.emit(f"load {ty}, ptr {ptr_at(k, x_ptr, ty, p)}, align {g.dtype.itemsize}"))
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
    base = dot(b, [(at["n_out"], g.out_str[0]), (b.iop("add", b.iop("mul", at["grp"], g.Og), at["f0"]), feat_str),
                    (at["q0"], x_str)] + list(zip(at["outer"], g.out_str[2:-1])))
    flat = [a for rows in accs for row in rows for a in row]
    if g.along_x and feat_str == 1 and x_str != 1:
        _store_interleaved(k, g, vec, accs, ptr_at(k, out.ptr, ty, base), row_str, npos, nfeat)
        return
    if (x_str if g.along_x else feat_str) == 1:
        for n, acc in enumerate(flat):
            r, a, c = n // (len(accs[0]) * len(accs[0][0])), n // len(accs[0][0]) % len(accs[0]), n % len(accs[0][0])
            pos, feat = (a * vl, c) if g.along_x else (a, c * vl)
            valid = min(vl, (npos - pos) if g.along_x else (nfeat - feat))
            start = b.iop("add", base, r * row_str + pos * x_str + feat * feat_str)
            vec.store(k.f.emit(f"load {vec.vty}, ptr {acc}"), ptr_at(k, out.ptr, ty, start), valid)
        return
    tile = k.alloca(f"[{len(flat)} x {vec.vty}]")
    for n, acc in enumerate(flat):
        k.line(f"store {vec.vty} {k.f.emit(f'load {vec.vty}, ptr {acc}')}, ptr {ptr_at(k, tile, vec.vty, n)}")
    inner, cols = len(accs[0]), len(accs[0][0])

    def lanes(count, start):   # the valid lanes of a vector whose first lane is element `start` of `count`
        return b.intrinsic("smin", vl, b.iop("sub", count, start), dtype=np.int64)

    def copy(r, a, c, lane, pos, feat):
        at = b.iop("add", b.iop("mul", b.iop("add", b.iop("mul", b.iop("add", b.iop("mul", r, inner), a), cols), c),
                                vl), lane)
        value = k.f.emit(f"load {ty}, ptr {ptr_at(k, tile, ty, at)}, align {g.dtype.itemsize}")
        store_at(k, value, out.ptr, dot(b, [(base, 1), (r, row_str), (pos, x_str), (feat, feat_str)]), g.dtype)

    with nest(k, [(0, len(accs)), (0, inner)]) as (r, a):
        if g.along_x:       # lanes are positions; the features (contiguous in NHWC) innermost
            with nest(k, [(0, lanes(npos, b.iop("mul", a, vl))), (0, cols)]) as (lane, c):
                copy(r, a, c, lane, b.iop("add", b.iop("mul", a, vl), lane), c)
        else:               # lanes are features
            with k.loop(0, cols) as c, k.loop(0, lanes(nfeat, b.iop("mul", c, vl))) as lane:
                copy(r, a, c, lane, a, b.iop("add", b.iop("mul", c, vl), lane))


def _store_interleaved(k, g, vec, accs, out_ptr, row_str, npos, nfeat):
    """An along-x tile to an output whose features are contiguous (NHWC): per vector of positions, its feature
    accumulators interleaved by shuffles into one vector of (position, feature) lanes, stored whole where the
    tile's features fill the output's, else one small vector per position, or for fewer than SCATTER_FEATURES
    features one strided scatter per feature (a depthwise 3x3 convolution's tile held 640 scalar stores)."""
    vl, x_str = g.vl, g.out_str[-1]
    for r, row in enumerate(accs):
        for a, feats in enumerate(row):
            valid = min(vl, npos - a * vl)
            values = [k.f.emit(f"load {vec.vty}, ptr {acc}") for acc in feats]
            start = r * row_str + a * vl * x_str
            if x_str != nfeat and nfeat < SCATTER_FEATURES:
                for o, v in enumerate(values):
                    vec.scatter(v, ptr_at(k, out_ptr, vec.ty, start + o), x_str, valid)
                continue
            wide, width = vec.interleave(values), nfeat * vl
            if x_str == nfeat:
                vec.store_lanes(wide, width, ptr_at(k, out_ptr, vec.ty, start), valid * nfeat)
                continue
            for p in range(valid):
                part = vec.lanes(wide, width, p * nfeat, nfeat)
                k.line(f"store <{nfeat} x {vec.ty}> {part}, ptr {ptr_at(k, out_ptr, vec.ty, start + p * x_str)}, "
                       f"align {vec.size}")


def _lower_conv(k, outs, ins, **params):
    """Per output batch element in [%lo, %hi) (a chunk of the batch, when the backend splits it over the threads):
    pack the input, then every tile. Each chunk packs into its own region of the scratch memory."""
    # runtime's thread count sizes the scratch: imported here, as the BLAS is in linalg, when code is generated
    from ..backend import runtime
    (out,), (lhs, rhs) = outs, ins
    g = _Geometry(lhs.aval, rhs.aval, out.aval, **params)
    if out.aval.size == 0:
        return
    if g.along_kernel:
        lower_kernel_lanes(k, g, out, lhs, rhs)
        return
    b, size = k.b, g.dtype.itemsize
    x_bytes = ceil_div(g.x_size * size, ALIGN) * ALIGN
    w_bytes = g.fg * g.bg * g.w_str[0] * size if g.pack_weights else 0
    slots = min(runtime.NUM_THREADS, g.Nout)
    slot = b.iop("sdiv", b.iop("add", b.iop("mul", "%lo", slots), g.Nout - 1), g.Nout)     # the chunk this is
    xp = ptr_at(k, k.scratch_memory(slots * (x_bytes + w_bytes)), "i8", b.iop("mul", slot, x_bytes + w_bytes))
    k.line(f"call void @llvm.memset.p0.i64(ptr {xp}, i8 0, i64 {x_bytes + w_bytes}, i1 false)")
    at = {"xp": xp, "out": out, "vec": Vectors(k.f, g.dtype, g.vl), "w": rhs.ptr, "w_dtype": rhs.aval.dtype}
    if g.pack_weights:
        at["w"], at["w_dtype"] = ptr_at(k, xp, "i8", x_bytes), g.dtype
        _pack_weights(k, g, rhs, at["w"])
    rows, outer_sizes = (1, []) if g.row_axis is None else (g.Q[g.row_axis], g.Q[:g.row_axis])
    with k.loop("%lo", "%hi") as n_out, k.loop(0, g.bg) as gb:
        _pack_input(k, g, lhs, xp, b.iop("add", b.iop("mul", gb, g.Nout), n_out))
        with k.loop(0, g.fg) as gf, nest(k, [(0, q) for q in outer_sizes]) as outer:
            at.update(n_out=n_out, grp=b.iop("add", gb, gf), c0=b.iop("mul", gf, g.I))
            for row, nrows in blocks(k, rows, g.block_rows):
                at["outer"] = outer + [row] if g.row_axis is not None else []
                for at["q0"], npos in blocks(k, g.Q[-1], g.block_pos):
                    for at["f0"], nfeat in blocks(k, g.Og, g.block_feat):
                        _tile(k, g, at, nrows, npos, nfeat)


def _split(eqn):
    """The batch of outputs, and the serial time of the kernel estimated from its multiply-adds."""
    g = _Geometry(*(x.aval for x in eqn.inputs), eqn.outvars[0].aval, **eqn.params)
    return g.Nout, 2 * eqn.outvars[0].aval.size * g.I * math.prod(g.K) / FLOPS_PER_NS


lower_conv = Kernel(_lower_conv, scratch=True, split=_split)
