"""The FFT library's code (fft_kernels.py compiles it): its functions written in LLVM IR, vectorized (`Lanes`:
complex values interleaved as in memory, one vector at a time), their loops rotated and their invariants
hoisted, so that the light pass pipeline that compiles them (llvm.LIGHT_PASSES) leaves them as fast as O3 does.

A radix-r pass (r = 2, 3, 4 or 5) with sub-length n (m = n/r) computes, for every p < m and column q,

    a_j = x[q + s(p + jm)] (j < r);  y[q + s(rp + j)] = w^(jp) * DFT_r(a)_j,  w = e^(-+2 pi i/n),

from src to dst (never the same buffer); a radix-2 pass is only ever a transform's last (m = 1: no twiddles).
DFT_3 and DFT_5 are Winograd's short transforms (the sums and differences of the inputs paired around the middle,
times the cosines and sines of 2 pi/3 or 2 pi/5: `_dft3`, `_dft5`). A column pass (`pass_function`, form 'w')
loops over p, then `rows`, column (row, lane) of src at src_base + lane + row * src_row (likewise dst), its lanes
one vector: a pass over a whole array of stride s has s / lanes rows (lanes innermost, contiguous: twiddles
broadcast); a pass over a block of columns copied into cache-sized buffers has rows of a fixed number of lanes.
For s = 1 the pass loops over p innermost (form 'p': twiddles read as vectors, outputs interleaved), its outputs
times a scale (an inverse transform's 1/n), a vector of p at a time, the last vector ending at m (overlapping
the one before where the count does not divide m: `_lanes_loop`). The real transforms' passes (`split_function`,
`join_function`) and Bluestein's products (`chirp_function`) run over pairs or values, vectors of them at a time.
"""
import contextlib
import math

import numpy as np

from . import llvm
from .llvm_text import Function
from .rules import Emitter, const_text


class Complex:
    """Complex values as (re, im) SSA pairs of the part type ty, in interleaved memory (the transforms' own
    one-value moves and the real passes' ends)."""

    def __init__(self, f, ty):
        self.f, self.b, self.ty = f, Emitter(f), ty

    def const(self, value):
        return const_text(value, np.float32 if self.ty == "float" else np.float64)

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

    def scale(self, x, c):
        return self.op("fmul", x[0], c), self.op("fmul", x[1], c)


class Lanes(Complex):
    """`width` consecutive complex values as one vector <2 width x ty>, interleaved as in memory: sums need no
    shuffle, a product two (each pair's parts swapped, and the other factor's parts spread), so that the
    library's code is written vectorized and LLVM compiles it without its loop vectorizer's search (several
    times faster to compile)."""

    def __init__(self, f, ty, width):
        super().__init__(f, ty)
        self.width, self.vty = width, f"<{2 * width} x {ty}>"
        self.align = 4 if ty == "float" else 8

    def wider(self):
        return Lanes(self.f, self.ty, 2 * self.width)

    def pattern(self, parts):
        """The vector constant repeating the pair parts (re, im): numbers or constants' texts."""
        texts = [v if isinstance(v, str) else self.const(v) for v in parts]
        return "<" + ", ".join(f"{self.ty} {v}" for _ in range(self.width) for v in texts) + ">"

    def shuffle(self, v, mask, other="poison"):
        mask_text = ", ".join(f"i32 {i}" for i in mask)
        return self.f.emit(f"shufflevector {self.vty} {v}, {self.vty} {other}, <{len(mask)} x i32> <{mask_text}>")

    def load(self, base, index, reverse=False):
        """The values index... (reverse: index, index - 1, ...)."""
        start = self.b.iop("sub", index, self.width - 1) if reverse else index
        v = self.f.emit(f"load {self.vty}, ptr {self.at(base, start)}, align {self.align}")
        return self.reverse(v) if reverse else v

    def store(self, base, index, v, reverse=False):
        start = self.b.iop("sub", index, self.width - 1) if reverse else index
        self.f.line(f"store {self.vty} {self.reverse(v) if reverse else v}, ptr {self.at(base, start)}, "
                    f"align {self.align}")

    def reverse(self, v):
        return v if self.width == 1 else self.shuffle(v, [2 * (self.width - 1 - i // 2) + i % 2 for i in range(2 * self.width)])

    def signs(self, sign):
        """1 and sign (a scalar SSA value) in every lane: a product by it conjugates where sign is -1."""
        pair = self.f.emit(f"insertelement <2 x {self.ty}> <{self.ty} {self.const(1)}, {self.ty} {self.const(1)}>, "
                           f"{self.ty} {sign}, i32 1")
        return self.f.emit(f"shufflevector <2 x {self.ty}> {pair}, <2 x {self.ty}> poison, "
                           f"<{2 * self.width} x i32> <{', '.join(f'i32 {i % 2}' for i in range(2 * self.width))}>")

    def splat(self, x):
        """Every part x (a scalar SSA value)."""
        one = self.f.emit(f"insertelement <1 x {self.ty}> poison, {self.ty} {x}, i32 0")
        return self.f.emit(f"shufflevector <1 x {self.ty}> {one}, <1 x {self.ty}> poison, "
                           f"<{2 * self.width} x i32> zeroinitializer")

    def broadcast(self, base, index):
        """The one value at index, in every lane, as (its real part everywhere, its imaginary part everywhere)."""
        return tuple(self.splat(x) for x in super().load(base, index))

    def spread(self, w):
        """(w's real parts, w's imaginary parts), each in both parts of its lane."""
        return (self.shuffle(w, [i - i % 2 for i in range(2 * self.width)]),
                self.shuffle(w, [i - i % 2 + 1 for i in range(2 * self.width)]))

    def reals(self, base, index):
        """The reals index... each in both parts of a lane."""
        p = self.f.emit(f"getelementptr {self.ty}, ptr {base}, i64 {index}")
        v = self.f.emit(f"load <{self.width} x {self.ty}>, ptr {p}, align {self.align}")
        return self.f.emit(f"shufflevector <{self.width} x {self.ty}> {v}, <{self.width} x {self.ty}> poison, "
                           f"<{2 * self.width} x i32> <{', '.join(f'i32 {i // 2}' for i in range(2 * self.width))}>")

    def store_reals(self, base, index, v):
        """Store the real parts of v at the reals index..."""
        p = self.f.emit(f"getelementptr {self.ty}, ptr {base}, i64 {index}")
        mask = ", ".join(f"i32 {2 * i}" for i in range(self.width))
        re = self.f.emit(f"shufflevector {self.vty} {v}, {self.vty} poison, <{self.width} x i32> <{mask}>")
        self.f.line(f"store <{self.width} x {self.ty}> {re}, ptr {p}, align {self.align}")

    def op(self, name, x, y):
        return self.f.emit(f"{name} {self.vty} {x}, {y}")

    def add(self, x, y):
        return self.op("fadd", x, y)

    def sub(self, x, y):
        return self.op("fsub", x, y)

    def swap(self, x):
        return self.shuffle(x, [i ^ 1 for i in range(2 * self.width)])

    def mul(self, x, w, conj=False):
        """x * w, or x * conj(w); w a vector or its spread (re, im): the parts' products as the scalar formulas
        round them (a product by -1 is exact)."""
        return self.times(x, self.prepare(w, conj))

    def prepare(self, w, conj=False):
        """The factor w (or conj(w)) as `times` takes it: (its real parts, its imaginary parts signed as the
        parts' products need them), each in both parts of a lane; w a vector or its spread (re, im)."""
        re, im = self.spread(w) if isinstance(w, str) else w
        return re, self.op("fmul", im, self.pattern((1, -1) if conj else (-1, 1)))

    def times(self, x, factor):
        """x times a prepared factor (`prepare`)."""
        re, im = factor
        return self.op("fadd", self.op("fmul", x, re), self.op("fmul", self.swap(x), im))

    def times_i(self, x, sign):
        """sign * i * x."""
        return self.op("fmul", self.swap(x), self.pattern((-1, 1) if sign > 0 else (1, -1)))

    def turned(self, x, k):
        """i k x, k a number."""
        return self.op("fmul", self.swap(x), self.pattern((-k, k)))

    def conj(self, x):
        return self.op("fmul", x, self.pattern((1, -1)))

    def scale(self, x, c):
        """x times c, a constant's text or a scalar SSA value."""
        return self.op("fmul", x, self.splat(c) if c.startswith("%") else self.pattern((c, c)))

    def interleave(self, x, y):
        """x_0, y_0, x_1, y_1...: a vector of twice the width."""
        return self.shuffle(x, [j for i in range(self.width) for j in (2 * i, 2 * i + 1, 2 * self.width + 2 * i,
                                                                        2 * self.width + 2 * i + 1)], y)

    def transpose(self, vectors):
        """(one vector of the values of vectors (r of this width), value k of vectors[j] at k r + j; its Lanes)."""
        r, parts = len(vectors), 2 * self.width
        out = Lanes(self.f, self.ty, r * self.width)
        source = [(t // 2 % r, t // 2 // r * 2 + t % 2) for t in range(r * parts)]   # (j, part of vectors[j])
        whole = None
        for j, v in enumerate(vectors):
            spread = self.shuffle(v, [i if k == j else 0 for k, i in source])          # its parts where they go
            whole = spread if whole is None else out.shuffle(
                whole, [t + r * parts if k == j else t for t, (k, _) in enumerate(source)], spread)
        return whole, out


def vector_width(ty):
    """The complex values in one of the host's vector registers."""
    return max(1, llvm.vector_bytes() // (8 if ty == "float" else 16))


@contextlib.contextmanager
def _loop(f, lo, hi):
    """for (i = lo; i < hi; i++): yields i, written as LLVM's loop rotation leaves a loop (a guard, the test at
    the bottom, the counter a phi), which the library's light pass pipeline (llvm.LIGHT_PASSES) does not do."""
    pre, body, latch, done = (f.label(stem) for stem in ("pre", "body", "latch", "done"))
    i, following = f"%{body}.i", f"%{body}.next"
    f.line(f"br i1 {f.emit(f'icmp slt i64 {lo}, {hi}')}, label %{pre}, label %{done}")
    f.block(pre)
    f.line(f"br label %{body}")
    f.block(body)
    f.line(f"{i} = phi i64 [ {lo}, %{pre} ], [ {following}, %{latch} ]")
    yield i
    f.line(f"br label %{latch}")
    f.block(latch)
    f.line(f"{following} = add nuw nsw i64 {i}, 1")
    f.line(f"br i1 {f.emit(f'icmp slt i64 {following}, {hi}')}, label %{body}, label %{done}")
    f.block(done)


def _lanes_loop(f, ty, lo, hi, width, body, tail="one"):
    """body(c, j) for j from lo to hi: `width` at a time (c a Lanes of that width), then the rest: one at a time
    (tail 'one'), or none (tail 'none': hi - lo a multiple of width; the remainder's loop costs LLVM as much as
    the first), or as a last vector ending at hi (tail 'overlap': hi - lo >= width, and body may run twice for
    the same j, as it does where its stores are all it writes and it reads nothing it writes)."""
    b = Emitter(f)
    count = b.iop("sdiv", b.iop("add", b.iop("sub", hi, lo), width - 1 if tail == "overlap" else 0), width)
    with _loop(f, 0, count) as q:
        j = b.iop("add", lo, b.iop("mul", q, width))
        if tail == "overlap":
            last = b.iop("sub", hi, width)
            j = f.emit(f"select i1 {f.emit(f'icmp slt i64 {j}, {last}')}, i64 {j}, i64 {last}")
        body(Lanes(f, ty, width), j)
    if tail == "one":
        with _loop(f, b.iop("add", lo, b.iop("mul", count, width)), hi) as j:
            body(Lanes(f, ty, 1), j)


def _butterfly(c, r, sign, scale, ins, twiddle):
    """The r outputs y_j of the butterfly of the inputs ins, times scale (a vector, or None for 1); twiddle(j):
    the twiddle of output j + 1 (radix 3, 4 and 5), prepared (Lanes.prepare)."""
    if r == 2:
        outs = [c.add(*ins), c.sub(*ins)]
    else:
        outs = _DFTS[r](c, sign, ins)
        outs[1:] = [c.times(y, twiddle(j)) for j, y in enumerate(outs[1:])]
    return outs if scale is None else [c.op("fmul", y, scale) for y in outs]


def _dft4(c, sign, a):
    apc, amc, bpd, bmd = c.add(a[0], a[2]), c.sub(a[0], a[2]), c.add(a[1], a[3]), c.sub(a[1], a[3])
    turned = c.times_i(bmd, sign)
    return [c.add(apc, bpd), c.add(amc, turned), c.sub(apc, bpd), c.sub(amc, turned)]


def _dft3(c, sign, a):
    """y_(1,2) = a_0 - (a_1 + a_2)/2 +- sign i sin(2 pi/3) (a_1 - a_2)."""
    pair = c.add(a[1], a[2])
    middle = c.sub(a[0], c.scale(pair, c.const(0.5)))
    turned = c.turned(c.sub(a[1], a[2]), sign * math.sin(2 * math.pi / 3))
    return [c.add(a[0], pair), c.add(middle, turned), c.sub(middle, turned)]


def _dft5(c, sign, a):
    """With the pairs' sums b_k = a_k + a_(5-k) and differences d_k = a_k - a_(5-k) (k = 1, 2), y_k and y_(5-k)
    are a_0 + sum_l cos(2 pi kl/5) b_l +- sign i sum_l sin(2 pi kl/5) d_l."""
    b1, b2, d1, d2 = c.add(a[1], a[4]), c.add(a[2], a[3]), c.sub(a[1], a[4]), c.sub(a[2], a[3])
    cos1, cos2, sin1, sin2 = (f(2 * math.pi * k / 5) for f, k in ((math.cos, 1), (math.cos, 2), (math.sin, 1),
                                                                  (math.sin, 2)))
    outs = [c.add(a[0], c.add(b1, b2))]
    for ck, cl, sk, sl in ((cos1, cos2, sin1, sin2), (cos2, cos1, sin2, -sin1)):   # k = 1, then k = 2
        real = c.add(a[0], c.add(c.scale(b1, c.const(ck)), c.scale(b2, c.const(cl))))
        turned = c.add(c.turned(d1, sign * sk), c.turned(d2, sign * sl))
        outs += [c.add(real, turned), c.sub(real, turned)]
    return [outs[0], outs[1], outs[3], outs[4], outs[2]]


_DFTS = {3: _dft3, 4: _dft4, 5: _dft5}


def pass_function(module, name, ty, r, form, count, inverse):
    """A pass function (the module docstring): form 'p' loops p innermost over a whole array of stride 1,
    `(src, dst, tw, m, scale)`, `count` values of p at a time (the last `count` ending at m), its outputs times
    scale (the first pass of a transform: an inverse's 1/n); form 'w' loops over p, rows, then `count` columns as
    one vector, `(src, dst, tw, m, rows, src_base, src_row, src_stride, dst_base, dst_row, dst_stride, shift)`,
    the last row `shift` columns back (overlapping the row before where count does not divide the stride)."""
    sign = 1 if inverse else -1
    args = "ptr noalias %src, ptr noalias %dst, ptr noalias readonly %tw, i64 %m"
    if form == "p":
        f = Function(module, f"define void @{name}({args}, {ty} %scale) nounwind", {})
        scale = Lanes(f, ty, count).splat("%scale")

        def body(c, p):
            def at(j):                               # p + j m
                return c.b.iop("add", p, c.b.iop("mul", j, "%m"))
            ys = _butterfly(c, r, sign, scale, [c.load("%src", at(j)) for j in range(r)],
                            lambda j: c.prepare(c.load("%tw", at(j)), conj=sign > 0))
            start = c.b.iop("mul", p, r)
            if r % 2:                                # y_0 of each p, y_1, ...: interleaved (y_j of p at r p + j)
                whole, c = c.transpose(ys)
                ys = [whole]
            while len(ys) > 1:
                ys, c = [c.interleave(ys[i], ys[i + len(ys) // 2]) for i in range(len(ys) // 2)], c.wider()
            c.store("%dst", start, ys[0])
        _lanes_loop(f, ty, 0, "%m", count, body, tail="overlap")
    else:
        f = Function(module, f"define void @{name}({args}, i64 %rows, i64 %sb, i64 %sr, i64 %ss, i64 %db, i64 %dr, "
                             "i64 %ds, i64 %shift) nounwind", {})
        c = Lanes(f, ty, count)
        b = c.b
        src_jump, dst_jump = b.iop("mul", "%ss", "%m"), b.iop("mul", "%ds", r)
        last = b.iop("sub", "%rows", 1)
        with _loop(f, 0, "%m") as p:
            # the p's twiddles, read and prepared once for its rows
            twiddles = [c.prepare(c.broadcast("%tw", b.iop("add", p, b.iop("mul", j, "%m"))), conj=sign > 0)
                        for j in range(r - 1)]
            src_p, dst_p = b.iop("add", "%sb", b.iop("mul", p, "%ss")), b.iop("add", "%db", b.iop("mul", p, dst_jump))
            with _loop(f, 0, "%rows") as row:
                back = f.emit(f"select i1 {f.emit(f'icmp eq i64 {row}, {last}')}, i64 %shift, i64 0")
                src, dst = (b.iop("sub", b.iop("add", at, b.iop("mul", row, step)), back)
                            for at, step in ((src_p, "%sr"), (dst_p, "%dr")))
                ins = [c.load("%src", b.iop("add", src, b.iop("mul", j, src_jump))) for j in range(r)]
                ys = _butterfly(c, r, sign, None, ins, twiddles.__getitem__)
                for j, y in enumerate(ys):
                    c.store("%dst", b.iop("add", dst, b.iop("mul", j, "%ds")), y)
    f.line("ret void")
    module.add(f)


def split_function(module, name, ty, width, fused=False):
    """A real transform's last pass, `(src, dst, tw, h)`: the spectrum X (h + 1 values) of 2h reals from Z,
    the transform of their pairs: with E = (Z_k + conj Z_(h-k))/2 and O = (Z_k - conj Z_(h-k))/2i, the
    spectra of the even and odd samples, X_k = E + w^k O and X_(h-k) = conj(E - w^k O), w = e^(-2 pi i/2h).
    fused: src holds A, Z before its last pass, a radix-2 one without twiddles (Z_k = A_k + A_(k+h/2),
    Z_(k+h/2) = A_k - A_(k+h/2), k < h/2), which this pass does as it reads (one pass over memory less); Z_(h/2)
    is the ends', as the vectors read A_h (one past A) for it."""
    def z(c, k, reverse=False):                    # Z_k, or Z_k, Z_(k-1)...: read from A where fused
        if not fused:
            return c.load("%src", k, reverse)
        if reverse:                                # k >= h/2
            return c.sub(c.load("%src", c.b.iop("sub", k, "%half"), True), c.load("%src", k, True))
        return c.add(c.load("%src", k), c.load("%src", c.b.iop("add", k, "%half")))

    def pair(c, k, j):
        zk, zj = z(c, k), c.conj(z(c, j, reverse=True))
        e = c.scale(c.add(zk, zj), c.const(0.5))
        wo = c.mul(c.times_i(c.scale(c.sub(zk, zj), c.const(0.5)), -1), c.load("%tw", k))
        c.store("%dst", k, c.add(e, wo))
        c.store("%dst", j, c.conj(c.sub(e, wo)), reverse=True)

    def ends(c):
        z0 = c.load("%src", 0)
        if fused:                                   # and X_(h/2) = conj Z_(h/2), Z_(h/2) = A_0 - A_(h/2)
            a0, ah = z0, c.load("%src", "%half")
            z0 = c.op("fadd", a0[0], ah[0]), c.op("fadd", a0[1], ah[1])
            c.store("%dst", "%half", (c.op("fsub", a0[0], ah[0]), c.op("fsub", ah[1], a0[1])))
        c.store("%dst", 0, (c.op("fadd", z0[0], z0[1]), c.const(0)))
        c.store("%dst", "%h", (c.op("fsub", z0[0], z0[1]), c.const(0)))
    _pairs_function(module, f"define void @{name}(ptr noalias %src, ptr noalias %dst, ptr noalias readonly %tw, "
                            "i64 %h) nounwind", ty, width, ends, pair)


def join_function(module, name, ty, width):
    """An inverse real transform's first pass, `(src, dst, tw, h, scale)`: the split backwards, times scale (1/n),
    for the forward complex transform (the passes rfft and fft use): x = FFT(conj X) / n for real x, so from
    Y = conj X (the half spectrum X: h + 1 values, the imaginary parts of X_0 and X_h unused) the pairs' spectrum
    Z_k = E_k + i O_k, E_k = Y_k + Y_(k+h), O_k = (Y_k - Y_(k+h)) w^k, w = e^(-2 pi i/2h); with even = X_k +
    conj X_(h-k) and odd = (X_k - conj X_(h-k)) conj w^k, Z_k = conj even + i conj odd, Z_(h-k) = even + i odd."""
    def pair(c, k, j):
        xk, xj = c.load("%src", k), c.conj(c.load("%src", j, reverse=True))
        even, odd = c.add(xk, xj), c.mul(c.sub(xk, xj), c.load("%tw", k), conj=True)
        c.store("%dst", k, c.scale(c.add(c.conj(even), c.times_i(c.conj(odd), 1)), "%scale"))
        c.store("%dst", j, c.scale(c.add(even, c.times_i(odd, 1)), "%scale"), reverse=True)

    def ends(c):
        x0, xh = c.load("%src", 0), c.load("%src", "%h")
        c.store("%dst", 0, c.scale((c.op("fadd", x0[0], xh[0]), c.op("fsub", x0[0], xh[0])), "%scale"))
    _pairs_function(module, f"define void @{name}(ptr noalias %src, ptr noalias %dst, ptr noalias readonly %tw, "
                            f"i64 %h, {ty} %scale) nounwind", ty, width, ends, pair)


def _pairs_function(module, header, ty, width, ends, pair):
    """A function running pair(c, k, h - k) for 0 < k <= h/2 (`%half`), `width` values of k at a time (the last
    vector ending at h/2, h/2 >= width), their h - k in reverse order (the two meet at h/2 only, where the second
    store is the one that stays, as when that pair ran alone), then ends(c)."""
    f = Function(module, header, {})
    f.line("%half = sdiv i64 %h, 2")
    _lanes_loop(f, ty, 1, Emitter(f).iop("add", "%half", 1), width, lambda c, k: pair(c, k, c.b.iop("sub", "%h", k)),
                tail="overlap")
    ends(Complex(f, ty))
    f.line("ret void")
    module.add(f)


def chirp_function(module, name, ty, kind):
    """Bluestein's passes, `(src, dst, tw, count, n, total, in_sign, out_sign)`: dst_j = y_j tw_j for j < n, zero up
    to total, where y is src (kind 'chirp'), src's reals ('chirpr') or the n values of the Hermitian spectrum whose
    first count src holds ('chirph', the imaginary parts of its zero and, n even, Nyquist frequencies unused);
    'chirpre' stores the real parts of the products only, j < n (count and total unused). in_sign and out_sign
    (1 or -1) multiply the imaginary parts of src's complex values ('chirp', 'chirpre') and of the products
    ('chirp'): the conjugations that make an inverse transform a forward one."""
    f = Function(module, f"define void @{name}(ptr noalias %src, ptr noalias %dst, ptr noalias readonly %tw, "
                         f"i64 %count, i64 %n, i64 %total, {ty} %in_sign, {ty} %out_sign) nounwind", {})
    width = vector_width(ty)

    def product(c, j):
        w = c.load("%tw", j)
        if kind == "chirpr":
            c.store("%dst", j, c.op("fmul", w, c.reals("%src", j)))
            return
        y = c.mul(c.op("fmul", c.load("%src", j), c.signs("%in_sign")), w)
        if kind == "chirpre":
            c.store_reals("%dst", j, y)
        else:
            c.store("%dst", j, c.op("fmul", y, c.signs("%out_sign")))
    _lanes_loop(f, ty, 0, "%count" if kind == "chirph" else "%n", width, product)
    if kind == "chirph":
        _lanes_loop(f, ty, "%count", "%n", width, lambda c, j: c.store(
            "%dst", j, c.mul(c.conj(c.load("%src", c.b.iop("sub", "%n", j), reverse=True)), c.load("%tw", j))))
        c = Complex(f, ty)
        nyquist = c.b.iop("sdiv", "%n", 2)
        for j, cond in ((0, True), (nyquist, f.emit("icmp eq i64 " + c.b.iop("srem", "%n", 2) + ", 0"))):
            with f.when(cond):
                real = f.emit(f"load {ty}, ptr {c.at('%src', j)}")
                c.store("%dst", j, c.scale(c.load("%tw", j), real))
    if kind != "chirpre":
        _lanes_loop(f, ty, "%n", "%total", width, lambda c, j: c.store("%dst", j, "zeroinitializer"))
    f.line("ret void")
    module.add(f)
