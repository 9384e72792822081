"""The vector and indexing helpers the convolution lowerings (conv_lowering, conv_kernel_lanes) write with:
vector instructions on <vl x T> (loads, stores, masks, shuffles), element addresses and loads and stores with
dtype conversion, nested and blocked loops."""
import contextlib

from ..backend.rules import llvm_type, memory_type


def ceil_div(a, b):
    return -(-a // b)


def row_major(shape):
    strides, s = [], 1
    for d in reversed(shape):
        strides.append(s)
        s *= d
    return strides[::-1]


class Vectors:
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

    def scatter(self, v, ptr, stride, n):
        """The first n lanes of v to ptr, lane i at element i * stride: one masked scatter (a vscatter with
        AVX-512) instead of n stores, and n times less code to compile."""
        offsets = "<" + ", ".join(f"i64 {i * stride}" for i in range(self.vl)) + ">"
        ptrs = self.f.emit(f"getelementptr inbounds {self.ty}, ptr {ptr}, <{self.vl} x i64> {offsets}")
        self.f.line(f"call void @llvm.masked.scatter.{self.suffix}.v{self.vl}p0({self.vty} {v}, <{self.vl} x ptr> "
                    f"{ptrs}, i32 {self.size}, <{self.vl} x i1> {self._mask(n)})")

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

    def _concat(self, vectors):
        """The vectors end to end, padded with zeros to a power of two of them: (the wide vector, its width)."""
        width, parts = self.vl, list(vectors)
        while len(parts) > 1:       # pairwise: <vl>, <2 vl>, <4 vl> ...
            ty = f"<{width} x {self.ty}>"
            parts += ["zeroinitializer"] * (len(parts) % 2)
            parts = [self._shuffle(ty, a, b, range(2 * width)) for a, b in zip(parts[::2], parts[1::2])]
            width *= 2
        return parts[0], width

    def interleave(self, vectors):
        """One <n * vl> vector (n = len(vectors)) whose lane p * n + o is lane p of vectors[o]."""
        n = len(vectors)
        wide, width = self._concat(vectors)
        return self._shuffle(f"<{width} x {self.ty}>", wide, "poison", [o * self.vl + p for p in range(self.vl)
                                                                        for o in range(n)])

    def deinterleave(self, vectors):
        """The inverse of interleave: n vectors, lane p of the o-th being lane p * n + o of the vectors end to end."""
        n, vl = len(vectors), self.vl
        wide, width = self._concat(vectors)
        ty = f"<{width} x {self.ty}>"
        return [self._shuffle(ty, wide, "poison", [p * n + o for p in range(vl)]) for o in range(n)]

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


def ptr_at(k, base, ty, index):
    """The address of element `index` (an i64 or a Python int) of type ty from base."""
    return base if index == 0 else k.f.emit(f"getelementptr inbounds {ty}, ptr {base}, i64 {index}")


def dot(b, terms):
    """sum of index * stride over (index, stride) pairs, folding Python ints."""
    total = 0
    for i, s in terms:
        total = b.iop("add", total, b.iop("mul", i, s))
    return total


def load_as(k, ptr, src, index, dtype):
    """Element `index` of the array of dtype src at ptr, converted to dtype."""
    v = k.f.emit(f"load {memory_type(src)}, ptr {ptr_at(k, ptr, memory_type(src), index)}, align {src.itemsize}")
    return k.b.convert(v, src, dtype)


def store_at(k, value, ptr, index, dtype):
    """value to element `index` of the array of dtype at ptr."""
    ty = llvm_type(dtype)
    k.line(f"store {ty} {value}, ptr {ptr_at(k, ptr, ty, index)}, align {dtype.itemsize}")


@contextlib.contextmanager
def nest(k, ranges):
    """Nested loops over [lo, hi) ranges; yields the indices."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(k.loop(lo, hi)) for lo, hi in ranges]


def blocks(k, total, size):
    """Loops over the blocks of `size` in range(total), then over the rest (one smaller block): inside each, yields
    (the block's start, its size)."""
    start = 0
    for count, n in ((total // size, size), (1 if total % size else 0, total % size)):
        if count:
            with k.loop(0, count) as i:
                yield k.b.iop("add", start, k.b.iop("mul", i, n)), n
            start += count * n
