"""conv_general_dilated lowered with the vector lanes along the kernel's offsets: for convolutions whose kernel
is large and whose output is small, as kernel gradients are (the forward's input convolved with its output's
cotangent: the "kernel" is the cotangent, 24 x 24 positions in LeNet's first layer, and the output the kernel's
5 x 5 offsets), where lanes along output positions or features would stay mostly empty.

The kernel's last two spatial axes (the last alone when the row axis is dilated) flatten into one contraction of
L offsets that the lanes run along. Per contraction feature (batch element n and feature c), the input is packed
once per offset qx along the output's last axis, rows cropped to the kernel's width, so that the values an output
position reads along the flattened offsets lie next to each other:

    xp[qx][padded outer spatial...][x] = padded input[outer..., qx * stride + x * dilation],  x < kernel width

and the kernel (rhs) is packed per in feature as [out feature][outer kernel offsets][L, padded to whole vectors].
A tile of output positions (along x) times out features accumulates vectors of lane-wise products, kept across the
contraction features in partial sums (one vector per output), whose lanes are summed at the end.
"""
import math

from ..backend.rules import llvm_type
from .conv_vectors import Vectors, blocks, ceil_div, dot, load_as, nest, ptr_at, row_major, store_at

ACCUMULATORS = 24       # vector accumulators per tile
MAX_FEATURES = 8        # out features per tile
MAX_POSITIONS = 16      # output positions along the last axis the packed input is laid out for
ALIGN = 64


def lane_count(Q, K, rd, ld):
    """L, the kernel offsets the lanes run along (0: this lowering does not apply): the last two kernel axes
    flattened, or the last alone when the row axis is dilated. The input's last axis must be undilated and the
    output short along it (one packed copy of the input per position)."""
    if ld[-1] != 1 or Q[-1] > MAX_POSITIONS:
        return 0
    return K[-1] * K[-2] if len(K) > 1 and rd[-2] == 1 else K[-1]


class _Layout:
    """The packed operands' sizes and strides, in elements."""

    def __init__(self, g):
        self.flat2 = len(g.K) > 1 and g.rd[-2] == 1      # the row axis's offsets are in the lanes
        self.L = lane_count(g.Q, g.K, g.rd, g.ld)
        self.Lp = ceil_div(self.L, g.vl) * g.vl
        self.outer_k = g.K[:-2] if self.flat2 else g.K[:-1]         # kernel axes looped over
        kw = g.K[-1]
        self.x_str = row_major(g.P[:-1] + [kw])[:-1]                 # the outer padded axes of one copy
        self.copy = math.prod(g.P[:-1]) * kw                         # one copy (one qx)
        self.x_size = g.Q[-1] * self.copy
        self.w_feat = math.prod(self.outer_k) * self.Lp              # one out feature of the packed kernel
        self.w_size = g.Og * self.w_feat
        self.sums = math.prod(g.Q) * g.Og * g.vl                     # the partial sums, one vector per output
        self.o_tile = min(g.Og, MAX_FEATURES)
        q_tile = max(1, ACCUMULATORS // self.o_tile)
        self.q_tile = ceil_div(g.Q[-1], ceil_div(g.Q[-1], q_tile))   # balanced blocks


def _pack_input(k, g, lay, lhs, xp, n, c):
    """Feature c of batch element n into xp, one copy per output position qx along the last axis (only the
    positions that read input are written: the rest stay zero from the scratch's memset)."""
    b, (lo, _), s, r, size = k.b, g.pads[-1], g.st[-1], g.rd[-1], g.S[-1]
    base = dot(b, [(n, g.lhs_str[0]), (c, g.lhs_str[1])])
    for qx in range(g.Q[-1]):
        first = max(0, ceil_div(lo - qx * s, r))
        last = min(g.K[-1], ceil_div(lo + size - qx * s, r))
        if first >= last:
            continue
        with nest(k, [g.input_range(d) for d in range(len(g.S) - 1)] + [(first, last)]) as (*ys, x):
            ps = [b.iop("add", b.iop("mul", y, ld), plo) for y, ld, (plo, _) in zip(ys, g.ld, g.pads)]
            src = dot(b, [(base, 1), (b.iop("add", b.iop("mul", x, r), qx * s - lo), g.lhs_str[-1])]
                      + list(zip(ys, g.lhs_str[2:-1])))
            dst = dot(b, [(x, 1)] + list(zip(ps, lay.x_str))) if ps else x
            store_at(k, load_as(k, lhs.ptr, lhs.aval.dtype, src, g.dtype), xp, b.iop("add", dst, qx * lay.copy),
                     g.dtype)


def _interleaved_kernel(g, lay, rhs):
    """Whether the kernel's out features lie innermost and contiguous, its flattened offsets next (a cotangent in
    NHWC, the kernel gradient's kernel): then it is packed by shuffles, a vector of offsets per out feature."""
    og, flat = g.Og, len(g.K) - (2 if lay.flat2 else 1)
    return (rhs.aval.dtype == g.dtype and g.rhs_str[0] == 1
            and g.rhs_str[flat + 2:] == [s * og for s in row_major(g.K[flat:])])


def _pack_kernel_shuffled(k, g, lay, rhs, wp, grp, i):
    """_pack_kernel for an _interleaved_kernel: per vl offsets, Og vectors loaded, deinterleaved, stored one per
    out feature; the offsets that do not fill a vector one by one."""
    b, vec, ty, vl, og = k.b, Vectors(k.f, g.dtype, g.vl), llvm_type(g.dtype), g.vl, g.Og
    flat = len(g.K) - (2 if lay.flat2 else 1)
    with nest(k, [(0, d) for d in lay.outer_k]) as ks:
        src = dot(b, [(b.iop("mul", grp, og), 1), (i, g.rhs_str[1])] + list(zip(ks, g.rhs_str[2:2 + flat])))
        dst = dot(b, [(dot(b, list(zip(ks, row_major(lay.outer_k)))), lay.Lp)])
        full, tail = divmod(lay.L, vl)
        if full:
            with k.loop(0, full) as v:
                lane = b.iop("mul", v, vl)
                at = b.iop("add", src, b.iop("mul", lane, og))
                parts = vec.deinterleave([vec.load(ptr_at(k, rhs.ptr, ty, b.iop("add", at, j * vl)))
                                          for j in range(og)])
                for o, part in enumerate(parts):
                    vec.store(part, ptr_at(k, wp, ty, dot(b, [(dst, 1), (o, lay.w_feat), (lane, 1)])), vl)
        if tail:
            with nest(k, [(full * vl, lay.L), (0, og)]) as (lane, o):
                value = load_as(k, rhs.ptr, rhs.aval.dtype, dot(b, [(src, 1), (lane, og), (o, 1)]), g.dtype)
                store_at(k, value, wp, dot(b, [(dst, 1), (o, lay.w_feat), (lane, 1)]), g.dtype)


def _pack_kernel(k, g, lay, rhs, wp, grp, i):
    """In feature i of group grp's kernel into wp: [out feature][outer kernel offsets][L] (the tail of each L
    stays zero)."""
    if _interleaved_kernel(g, lay, rhs):
        _pack_kernel_shuffled(k, g, lay, rhs, wp, grp, i)
        return
    b, nk = k.b, len(g.K)
    flat_axes = 2 if lay.flat2 else 1
    # innermost: whichever of the out feature and the last kernel axis is closer together in memory
    o_inner = g.rhs_str[0] < g.rhs_str[-1]
    ranges = [(0, d) for d in g.K]
    with nest(k, ranges + [(0, g.Og)] if o_inner else [(0, g.Og)] + ranges) as idx:
        (*ks, o) = idx if o_inner else idx[1:] + idx[:1]
        src = dot(b, [(b.iop("add", b.iop("mul", grp, g.Og), o), g.rhs_str[0]), (i, g.rhs_str[1])]
                  + list(zip(ks, g.rhs_str[2:])))
        outer = dot(b, list(zip(ks[:nk - flat_axes], row_major(lay.outer_k))))
        lane = dot(b, list(zip(ks[nk - flat_axes:], row_major(g.K[nk - flat_axes:]))))
        dst = dot(b, [(o, lay.w_feat), (outer, lay.Lp), (lane, 1)])
        store_at(k, load_as(k, rhs.ptr, rhs.aval.dtype, src, g.dtype), wp, dst, g.dtype)


def _tile(k, g, lay, vec, at, q_outer, ks, q0, nq, f0, nf):
    """The partial sums of positions q0 .. q0 + nq - 1 along the last axis (at q_outer on the others) and out
    features f0 .. f0 + nf - 1, plus the products over all L lanes at outer kernel offsets ks."""
    b, ty, vl = k.b, llvm_type(g.dtype), g.vl
    row_k = len(g.K) - 2 if lay.flat2 else len(g.K) - 1      # the first axis whose offsets are in the lanes
    coords = [b.iop("add", b.iop("mul", q, s), b.iop("mul", kk, r)) for q, kk, s, r in zip(q_outer, ks, g.st, g.rd)]
    coords += [b.iop("mul", q, s) for q, s in zip(q_outer[row_k:], g.st[row_k:-1])]     # the flattened row
    x_base = dot(b, list(zip(coords, lay.x_str)))
    w_base = dot(b, [(f0, lay.w_feat), (dot(b, list(zip(ks, row_major(lay.outer_k)))), lay.Lp)])
    sums = [[dot(b, [(dot(b, list(zip(q_outer + [b.iop("add", q0, q)], row_major(g.Q)))), g.Og * vl),
                     (b.iop("add", f0, f), vl)]) for f in range(nf)] for q in range(nq)]
    accs = [[k.alloca(vec.vty) for _ in range(nf)] for _ in range(nq)]
    for acc_row, sum_row in zip(accs, sums):
        for acc, at_sum in zip(acc_row, sum_row):
            k.line(f"store {vec.vty} {vec.load(ptr_at(k, at['sums'], ty, at_sum))}, ptr {acc}")

    def step(lane, n=None):
        ws = [vec.load(ptr_at(k, at["wp"], ty, dot(b, [(w_base, 1), (f, lay.w_feat), (lane, 1)])), n)
              for f in range(nf)]
        for q, acc_row in enumerate(accs):
            x_at = dot(b, [(x_base, 1), (b.iop("add", q0, q), lay.copy), (lane, 1)])
            x = vec.load(ptr_at(k, at["xp"], ty, x_at), n)
            for acc, w in zip(acc_row, ws):
                k.line(f"store {vec.vty} {vec.fma(x, w, k.f.emit(f'load {vec.vty}, ptr {acc}'))}, ptr {acc}")

    full, tail = divmod(lay.L, vl)
    if full:
        with k.loop(0, full) as v:
            step(b.iop("mul", v, vl))
    if tail:
        step(full * vl, tail)
    for acc_row, sum_row in zip(accs, sums):
        for acc, at_sum in zip(acc_row, sum_row):
            vec.store(k.f.emit(f"load {vec.vty}, ptr {acc}"), ptr_at(k, at["sums"], ty, at_sum), vl)


def _finish(k, g, vec, at, n_out, grp):
    """The lanes of each partial sum added up into the output."""
    b, ty = k.b, llvm_type(g.dtype)
    with nest(k, [(0, g.Og)] + [(0, q) for q in g.Q]) as (o, *qs):
        at_sum = dot(b, [(dot(b, list(zip(qs, row_major(g.Q)))), g.Og * g.vl), (o, g.vl)])
        v = vec.load(ptr_at(k, at["sums"], ty, at_sum))
        if g.dtype.kind == "f":
            total = k.f.emit(f"call reassoc {ty} @llvm.vector.reduce.fadd.{vec.suffix}({ty} {b.const(0, g.dtype)}, "
                             f"{vec.vty} {v})")
        else:
            total = k.f.emit(f"call {ty} @llvm.vector.reduce.add.{vec.suffix}({vec.vty} {v})")
        feat = b.iop("add", b.iop("mul", grp, g.Og), o)
        store_at(k, total, at["out"], dot(b, [(n_out, g.out_str[0]), (feat, g.out_str[1])]
                                           + list(zip(qs, g.out_str[2:]))), g.dtype)


def lower_kernel_lanes(k, g, out, lhs, rhs):
    """Per output batch element in [%lo, %hi) and group: the partial sums zeroed, then per contraction feature the
    operands packed and every tile accumulated, then the partial sums added up into the output."""
    from ..backend import runtime  # sizes the scratch: one region per thread
    b, size = k.b, g.dtype.itemsize
    lay = _Layout(g)
    region = [ceil_div(n * size, ALIGN) * ALIGN for n in (lay.x_size, lay.w_size, lay.sums)]
    slots = min(runtime.NUM_THREADS, g.Nout)
    slot = b.iop("sdiv", b.iop("add", b.iop("mul", "%lo", slots), g.Nout - 1), g.Nout)
    xp = ptr_at(k, k.scratch_memory(slots * sum(region)), "i8", b.iop("mul", slot, sum(region)))
    k.line(f"call void @llvm.memset.p0.i64(ptr {xp}, i8 0, i64 {region[0] + region[1]}, i1 false)")
    at = {"xp": xp, "wp": ptr_at(k, xp, "i8", region[0]), "sums": ptr_at(k, xp, "i8", region[0] + region[1]),
          "out": out.ptr}
    vec = Vectors(k.f, g.dtype, g.vl)
    with k.loop("%lo", "%hi") as n_out, k.loop(0, g.fg * g.bg) as grp:
        k.line(f"call void @llvm.memset.p0.i64(ptr {at['sums']}, i8 0, i64 {region[2]}, i1 false)")
        gb, gf = (grp, 0) if g.bg > 1 else (0, grp)
        with k.loop(0, g.I) as i:
            _pack_input(k, g, lay, lhs, xp, b.iop("add", b.iop("mul", gb, g.Nout), n_out),
                        b.iop("add", b.iop("mul", gf, g.I), i))
            _pack_kernel(k, g, lay, rhs, at["wp"], grp, i)
            with nest(k, [(0, d) for d in lay.outer_k]) as ks, nest(k, [(0, q) for q in g.Q[:-1]]) as q_outer:
                for q0, nq in blocks(k, g.Q[-1], lay.q_tile):
                    for f0, nf in blocks(k, g.Og, lay.o_tile):
                        _tile(k, g, lay, vec, at, q_outer, ks, q0, nq, f0, nf)
        _finish(k, g, vec, at, n_out, grp)
