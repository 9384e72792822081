"""The FFT library: the passes of a Stockham autosort FFT of power-of-two length, the real transforms' passes
and Bluestein's, compiled once per process (and cached on disk like any object code) per part, part type
(float, double) and direction when first called; the code compiled for each transform calls them
(primitives/fft_lowering.py plans the passes and writes the calls).

A radix-r pass with sub-length n (m = n/r) computes, for every p < m and column q,

    a_j = x[q + s(p + jm)] (j < r);  y[q + s(rp + j)] = scale * w^(jp) * DFT_r(a)_j,  w = e^(-+2 pi i/n),

from src to dst (never the same buffer). Each pass function loops over p, then `rows`, then `lanes` columns,
column (row, lane) of src at src_base + lane + row * src_row (likewise dst): a pass over a whole array of
stride s has s / lanes rows (lanes innermost, contiguous: twiddles broadcast), or for s = 1 loops over p
innermost (`tj_fft<r>p`: twiddles read as vectors); a pass over a block of columns copied into cache-sized
buffers has rows of a fixed number of lanes. The lane loop's trip count is fixed per function (LANES), so
that it is whole vectors.

Twiddles and chirps are computed in float64 with NumPy and rounded once to the transform's precision
(`twiddles`, `chirps`); the code names them as constants of its module.
"""
import functools
import threading

import numpy as np

from . import disk_cache, llvm
from .llvm_text import Function, Module
from .rules import Emitter, const_text

LANES = (4, 16)           # the lane counts of the pass functions with a fixed lane loop
_lock = threading.Lock()
_addresses = {}           # (part, ty, inverse) -> {symbol: address}
_codes = []               # the library's Code objects, kept (their engine stays as long as the process)


def stages(n):
    """(radix, sub-length, stride) of each pass of a complex transform of length n (a power of two): radix 4,
    the last radix 2 where log2 n is odd."""
    out, s = [], 1
    while n > 1:
        r = 4 if n % 4 == 0 else 2
        out.append((r, n, s))
        n, s = n // r, s * r
    return out


@functools.lru_cache(maxsize=8)     # (tables up to twice the data; a module keeps its own alive)
def twiddles(n, dtype):
    """For a complex transform of length n in dtype (complex64/128): (table, offsets), offsets[i] the position
    in table of pass i's twiddles w^p, w^2p, w^3p (three runs of n_i/4, radix 4 only), and offsets[-1] that of
    a real transform's e^(-2 pi i k/2n), k < n. All are 2n-th roots of unity (_roots)."""
    roots = _roots(2 * n, dtype)
    parts, offsets, at = [], [], 0
    for r, m_n, _ in stages(n):
        offsets.append(at)
        if r == 4:
            parts += [roots[::j * (2 * n // m_n)][:m_n // 4] for j in (1, 2, 3)]
            at += 3 * (m_n // 4)
    offsets.append(at)
    parts.append(roots[:n])
    return np.concatenate(parts), tuple(offsets)


def _roots(n, dtype=np.complex128):
    """e^(-2 pi i k/n) for k < n in dtype: cos and sin of the first octant's angles in float64, rounded once to
    dtype's parts, the others by the symmetries that swap and negate them exactly (n a power of two)."""
    if n < 8:
        return np.array([1, -1j, -1, 1j], dtype)[np.arange(n) * 4 // n]
    angle = 2 * np.pi * np.arange(n // 8 + 1) / n
    part = np.float32 if np.dtype(dtype) == np.complex64 else np.float64
    c, s = np.cos(angle).astype(part), np.sin(angle).astype(part)
    out = np.empty(n, dtype)
    re, im, q = out.real, out.imag, n // 4
    re[:q // 2 + 1], im[:q // 2 + 1] = c, -s
    re[q // 2 + 1:q], im[q // 2 + 1:q] = s[-2:0:-1], -c[-2:0:-1]   # e^(-i a) = -i e^(i (pi/2 - a))
    re[q:2 * q], im[q:2 * q] = im[:q], -re[:q]                      # times -i, -1, i: exact
    re[2 * q:], im[2 * q:] = -re[:2 * q], -im[:2 * q]
    return out


@functools.lru_cache(maxsize=8)     # (tables up to twice the data; a module keeps its own alive)
def chirps(n, dtype, inverse):
    """Bluestein's transform of any length n as a cyclic convolution of length m = 2**k >= 2n - 1: with the chirp
    w_j = e^(-+i pi j^2/n), X_k = w_k sum_j (x_j w_j) conj(w_(k-j)). Returns (m, table): table holds w_j (j < n),
    then the transform of the padded conj(w) divided by m (the convolution's other operand, as the inverse pass
    leaves it unscaled), then w_k scaled by 1/n for the inverse (k < n); computed in float64, rounded once."""
    m = 1 << (2 * n - 2).bit_length()
    j = np.arange(n)
    angle = np.pi * ((j * j) % (2 * n)) / n          # j^2 mod 2n exactly: the angle stays small
    w = np.cos(angle) + 1j * np.sin(angle) * (1 if inverse else -1)
    h = np.zeros(m, complex)
    h[:n], h[m - n + 1:] = np.conj(w), np.conj(w[1:][::-1])
    table = np.concatenate([w, np.fft.fft(h) / m, w / n if inverse else w])
    return m, table.astype(dtype)


def symbol(kind, ty, inverse):
    """The library function's name: kind '4p', '4w16', '2w4'... (radix, then p innermost or the lanes), or
    'split' (a real transform's last pass) or 'join' (an inverse real transform's first), or Bluestein's products
    by a table (_chirp_function)."""
    return f"tj_fft{kind}_{ty}_{'inv' if inverse else 'fwd'}"


def address(kind, ty, inverse):
    """The address of a library function in this process (its part of the library compiled on first use: the
    complex passes, the real transforms' pass, or Bluestein's)."""
    part = "real" if kind in ("split", "join") else "chirp" if kind.startswith("chirp") else "passes"
    with _lock:
        if (part, ty, inverse) not in _addresses:
            _addresses[part, ty, inverse] = _load(part, ty, inverse)
    return _addresses[part, ty, inverse][symbol(kind, ty, inverse)]


def _load(part, ty, inverse):
    module, names = Module(), []
    if part == "passes":
        for r in (2, 4):
            for lanes in (None, *LANES):
                names.append(symbol(f"{r}{'p' if lanes is None else f'w{lanes}'}", ty, inverse))
                _pass_function(module, names[-1], ty, r, lanes, inverse)
    elif part == "real":
        names.append(symbol("join" if inverse else "split", ty, inverse))
        (_join_function if inverse else _split_function)(module, names[-1], ty)
    else:
        for kind in ("chirp", "chirpr", "chirph", "chirpre"):
            names.append(symbol(kind, ty, inverse))
            _chirp_function(module, names[-1], ty, kind)
    objects = disk_cache.cached_object_code(f"fft {part} {ty} {inverse}", module.text(), names, {}, folder="fft")
    code = llvm.load_objects(objects.objects, names, {}, permanent=True)
    _codes.append(code)
    return code.addresses


class Complex:
    """Complex values as (re, im) SSA pairs of the part type ty, in interleaved memory."""

    def __init__(self, f, ty, group=None):
        self.f, self.b, self.ty = f, Emitter(f), ty
        self.tag = f", !llvm.access.group {group}" if group else ""     # of every load and store

    def const(self, value):
        return const_text(value, np.float32 if self.ty == "float" else np.float64)

    def at(self, base, index):
        """The address of complex element `index` (an i64 or an int) of the array at base."""
        return base if index == 0 else self.f.emit(f"getelementptr [2 x {self.ty}], ptr {base}, i64 {index}")

    def load(self, base, index):
        p = self.at(base, index)
        im = self.f.emit(f"getelementptr {self.ty}, ptr {p}, i64 1")
        return tuple(self.f.emit(f"load {self.ty}, ptr {q}{self.tag}") for q in (p, im))

    def store(self, base, index, z):
        p = self.at(base, index)
        self.f.line(f"store {self.ty} {z[0]}, ptr {p}{self.tag}")
        self.f.line(f"store {self.ty} {z[1]}, ptr {self.f.emit(f'getelementptr {self.ty}, ptr {p}, i64 1')}{self.tag}")

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
        neg = self.f.emit(f"fneg {self.ty} {x[1] if sign > 0 else x[0]}")
        return (neg, x[0]) if sign > 0 else (x[1], neg)

    def conj(self, x):
        return x[0], self.f.emit(f"fneg {self.ty} {x[1]}")

    def scale(self, x, c):
        return self.op("fmul", x[0], c), self.op("fmul", x[1], c)


def _butterfly(c, r, m, tw, sign, scale, src, dst, p, at_src, at_dst):
    """y_j at dst's at_dst(r p + j) from x_j at src's at_src(p + j m): at_*(t) is row t of the column."""
    b = c.b
    ins = [c.load(src, at_src(b.iop("add", p, b.iop("mul", j, m)))) for j in range(r)]
    if r == 2:
        outs = [c.add(*ins), c.sub(*ins)]
    else:
        apc, amc, bpd, bmd = c.add(ins[0], ins[2]), c.sub(ins[0], ins[2]), c.add(ins[1], ins[3]), c.sub(ins[1], ins[3])
        turned = c.times_i(bmd, sign)
        outs = [c.add(apc, bpd), c.add(amc, turned), c.sub(apc, bpd), c.sub(amc, turned)]
        outs[1:] = [c.mul(y, c.load(tw, b.iop("add", p, b.iop("mul", j, m))), conj=sign > 0)
                    for j, y in enumerate(outs[1:])]
    for j, y in enumerate(outs):
        c.store(dst, at_dst(b.iop("add", b.iop("mul", p, r), j)), c.scale(y, scale))


def _pass_function(module, name, ty, r, lanes, inverse):
    """A pass function (the module docstring): lanes None loops p innermost over a whole array of stride 1,
    `(src, dst, tw, m, scale)`; else p, rows, then `lanes` columns, `(src, dst, tw, m, scale, rows, src_base,
    src_row, src_stride, dst_base, dst_row, dst_stride)`."""
    sign = 1 if inverse else -1
    if lanes is None:
        f = Function(module, f"define void @{name}(ptr noalias %src, ptr noalias %dst, ptr noalias readonly %tw, i64 %m, {ty} %scale) "
                             "nounwind", {})
        c = Complex(f, ty)
        with f.loop(0, "%m") as p:
            _butterfly(c, r, "%m", "%tw", sign, "%scale", "%src", "%dst", p, _column(c, 0, 1), _column(c, 0, 1))
    else:
        f = Function(module, f"define void @{name}(ptr noalias %src, ptr noalias %dst, ptr noalias readonly %tw, i64 %m, {ty} %scale, "
                             "i64 %rows, i64 %sb, i64 %sr, i64 %ss, i64 %db, i64 %dr, i64 %ds) nounwind", {})
        group = _metadata(module, "distinct !{}")
        c, b = Complex(f, ty, group), Emitter(f)
        with f.loop(0, "%m") as p, f.loop(0, "%rows") as row, f.loop(0, lanes) as lane:
            def at(base, row_stride, stride):
                return _column(c, b.iop("add", b.iop("add", base, lane), b.iop("mul", row, row_stride)), stride)
            _butterfly(c, r, "%m", "%tw", sign, "%scale", "%src", "%dst", p, at("%sb", "%sr", "%ss"),
                       at("%db", "%dr", "%ds"))
        # the lanes' columns are distinct (whatever the run-time strides): say so, else LLVM, unable to prove that
        # the four stores of a butterfly never meet, keeps the loop scalar
        _parallel(f, f.latches[0][0], group, lanes)          # the innermost loop closes first
    f.line("ret void")
    module.add(f)


def _parallel(f, latch, group, width=None):
    """Mark the loop whose back edge is line `latch` of f as free of dependences between its iterations' accesses
    tagged with `group` (llvm.loop.parallel_accesses), to be vectorized (`width` wide when given)."""
    module = f.module
    hints = [_metadata(module, '!{!"llvm.loop.parallel_accesses", ' + group + "}"),
             _metadata(module, '!{!"llvm.loop.vectorize.enable", i1 true}')]
    if width:
        hints.append(_metadata(module, f'!{{!"llvm.loop.vectorize.width", i32 {width}}}'))
    loop = f"!{len(module.metadata)}"
    module.metadata.append(f"{loop} = distinct !{{{loop}, {', '.join(hints)}}}")
    f.lines[latch] += f", !llvm.loop {loop}"


def _metadata(module, node):
    """A metadata node of the module: its name."""
    name = f"!{len(module.metadata)}"
    module.metadata.append(f"{name} = {node}")
    return name


def _column(c, q, s):
    """Row t of column q with stride s: q + s t."""
    return lambda t: c.b.iop("add", q, c.b.iop("mul", s, t))


def _split_function(module, name, ty):
    """A real transform's last pass, `(src, dst, tw, h)`: the spectrum X (h + 1 values) of 2h reals from Z,
    the transform of their pairs: with E = (Z_k + conj Z_(h-k))/2 and O = (Z_k - conj Z_(h-k))/2i, the
    spectra of the even and odd samples, X_k = E + w^k O and X_(h-k) = conj(E - w^k O), w = e^(-2 pi i/2h)."""
    def pair(c, k, j):
        zk, zj = c.load("%src", k), c.conj(c.load("%src", j))
        e = c.scale(c.add(zk, zj), c.const(0.5))
        wo = c.mul(c.times_i(c.scale(c.sub(zk, zj), c.const(0.5)), -1), c.load("%tw", k))
        c.store("%dst", k, c.add(e, wo))
        c.store("%dst", j, c.conj(c.sub(e, wo)))

    def ends(c):
        z0 = c.load("%src", 0)
        c.store("%dst", 0, (c.op("fadd", z0[0], z0[1]), c.const(0)))
        c.store("%dst", "%h", (c.op("fsub", z0[0], z0[1]), c.const(0)))
    _pairs_function(module, f"define void @{name}(ptr noalias %src, ptr noalias %dst, ptr noalias readonly %tw, "
                            "i64 %h) nounwind", ty, ends, pair)


def _join_function(module, name, ty):
    """An inverse real transform's first pass, `(src, dst, tw, h, scale)`: the split backwards, times scale (1/n):
    Z_k = (2E + i 2O) scale from the half spectrum X (h + 1 values; the imaginary parts of X_0 and X_h unused)."""
    def pair(c, k, j):
        xk, xj = c.load("%src", k), c.conj(c.load("%src", j))
        even, odd = c.add(xk, xj), c.mul(c.sub(xk, xj), c.load("%tw", k), conj=True)
        c.store("%dst", k, c.scale(c.add(even, c.times_i(odd, 1)), "%scale"))
        c.store("%dst", j, c.scale(c.add(c.conj(even), c.times_i(c.conj(odd), 1)), "%scale"))

    def ends(c):
        x0, xh = c.load("%src", 0), c.load("%src", "%h")
        c.store("%dst", 0, c.scale((c.op("fadd", x0[0], xh[0]), c.op("fsub", x0[0], xh[0])), "%scale"))
    _pairs_function(module, f"define void @{name}(ptr noalias %src, ptr noalias %dst, ptr noalias readonly %tw, "
                            f"i64 %h, {ty} %scale) nounwind", ty, ends, pair)


def _pairs_function(module, header, ty, ends, pair):
    """A function running ends(c) then pair(c, k, h - k) for 0 < k <= h/2: a loop over k < h/2, whose stores at k
    and h - k never meet (said to LLVM, which cannot prove it), then h/2."""
    f = Function(module, header, {})
    group = _metadata(module, "distinct !{}")
    c = Complex(f, ty, group)
    ends(c)
    half = c.b.iop("sdiv", "%h", 2)
    with f.loop(1, half) as k:
        pair(c, k, c.b.iop("sub", "%h", k))
    _parallel(f, f.latches[-1][0], group)
    with f.when(f.emit(f"icmp sgt i64 {half}, 0")):
        pair(c, half, half)
    f.line("ret void")
    module.add(f)


def _chirp_function(module, name, ty, kind):
    """Bluestein's passes, `(src, dst, tw, count, n, total)`: dst_j = y_j tw_j for j < n, zero up to total, where y
    is src (kind 'chirp'), src's reals ('chirpr') or the n values of the Hermitian spectrum whose first count src
    holds ('chirph', the imaginary parts of its zero and, n even, Nyquist frequencies unused); 'chirpre' stores
    the real parts of the products only, j < n (count and total unused)."""
    f = Function(module, f"define void @{name}(ptr noalias %src, ptr noalias %dst, ptr noalias readonly %tw, "
                         "i64 %count, i64 %n, i64 %total) nounwind", {})
    c = Complex(f, ty)

    def real(base, j):
        return f.emit(f"load {ty}, ptr {f.emit(f'getelementptr {ty}, ptr {base}, i64 {j}')}")

    with f.loop(0, "%count" if kind == "chirph" else "%n") as j:
        w = c.load("%tw", j)
        if kind == "chirpr":
            c.store("%dst", j, c.scale(w, real("%src", j)))
        elif kind == "chirpre":
            product = c.mul(c.load("%src", j), w)[0]
            f.line(f"store {ty} {product}, ptr {f.emit(f'getelementptr {ty}, ptr %dst, i64 {j}')}")
        else:
            c.store("%dst", j, c.mul(c.load("%src", j), w))
    if kind == "chirph":
        with f.loop("%count", "%n") as j:
            c.store("%dst", j, c.mul(c.conj(c.load("%src", c.b.iop("sub", "%n", j))), c.load("%tw", j)))
        nyquist = c.b.iop("sdiv", "%n", 2)
        for j, cond in ((0, True), (nyquist, f.emit("icmp eq i64 " + c.b.iop("srem", "%n", 2) + ", 0"))):
            with f.when(cond):
                c.store("%dst", j, c.scale(c.load("%tw", j), real(c.at("%src", j), 0)))
    if kind != "chirpre":
        with f.loop("%n", "%total") as j:
            c.store("%dst", j, (c.const(0), c.const(0)))
    f.line("ret void")
    module.add(f)
