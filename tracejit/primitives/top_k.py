"""top_k: the positions of the k largest entries along the last axis, the largest first, equal ones in order of
position, floats in the total order of their bits as XLA's top_k orders them (-NaN < -inf < -0.0 < 0.0 < inf < NaN;
lax.top_k gathers the values at the positions). Compiled code selects k up to KERNEL_K by calling a library
function compiled once per process for each k and dtype (two passes over each row, `_write`; the code compiled for
a signature only calls it, `_lower`): 10 of 1e6 f32 in 0.24-0.3 ms, where NumPy's partition of the row took 1.0-2.5
and the NumPy impl below 1.1-3. The impl (eager calls, larger k, complex values) finds the k-th largest key with a
partition, takes the keys above it and the first of those equal to it, and sorts only those; under jit its keys come
from a fused loop (the simplify rule)."""
import math
import re

import numpy as np

from ..backend.rules import Kernel
from ..core.avals import DEFAULT_INT, ShapedArray, float32, float64, is_symbolic
from ..core.errors import ShapeError
from ..core.trace import Primitive
from .base import ZERO, jvp_rule
from .matrix_ops import leading_batch_rule
from .sorting import ascending, order_keys, traced_order_keys


def _shape(x, k):
    if not x.ndim or not 0 <= k <= x.shape[-1]:
        raise ShapeError(f"top_k: k must be between 0 and the last dimension of operand {x.shape}, got {k}")
    return ShapedArray(x.shape[:-1] + (k,), DEFAULT_INT)


GROUP = 32    # rows of k * GROUP keys or more first keep the keys that reach the k-th largest maximum of n // GROUP groups


def _impl(x, k):
    x = np.asarray(x)
    n = x.shape[-1]
    keys = order_keys(x, total=True) if n < 1 << 32 else None
    if keys is None or k == 0:        # a stable ascending order of the reversed axis, reversed
        order = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
        return (n - 1 - order).astype(DEFAULT_INT)
    keys, positions = keys.reshape(-1, n), None      # positions: those of the keys kept, None while all are
    if 0 < keys.shape[0] and n >= k * GROUP:
        keys, positions = _candidates(keys, k)
    if k < keys.shape[-1]:       # the k largest keys, ties at the threshold taken in order of position: k per row
        last = keys.shape[-1] - k
        threshold = np.partition(keys, last, axis=-1)[:, last:last + 1]
        chosen = keys >= threshold
        if np.count_nonzero(chosen) > k * keys.shape[0]:
            chosen, ties = keys > threshold, keys == threshold
            chosen |= ties & (np.cumsum(ties, axis=-1) <= k - np.count_nonzero(chosen, axis=-1, keepdims=True))
        where = np.nonzero(chosen)[-1].reshape(-1, k)
        positions = where if positions is None else np.take_along_axis(positions, where, -1)
        keys = np.take_along_axis(keys, where, -1)
    # descending keys, equal ones earlier first: the ascending order of the reversed keys (equal ones later first)
    order = k - 1 - ascending(keys[:, ::-1], -1)[:, ::-1]
    if positions is not None:
        order = np.take_along_axis(positions, order, -1)
    return order.reshape(x.shape[:-1] + (k,))


def _candidates(keys, k):
    """(keys, positions) of a superset of the k largest of each row of keys (2-d), in order of position: those that
    reach the k-th largest of the maxima of n // GROUP groups (k maxima, k keys, reach it). A row with fewer than
    the most candidates is padded with key 0 at position n, after any key 0 of the row. 10 of 1e6 f32: about 10
    candidates, found in 0.45 ms, where the partition of the whole row took 0.8."""
    rows, n = keys.shape
    m = n // GROUP
    maxima = keys[:, :m * GROUP].reshape(rows, GROUP, m).max(1)
    floor = np.partition(maxima, m - k, axis=-1)[:, m - k:m - k + 1]
    found = np.flatnonzero(keys >= floor)
    row, position = np.divmod(found, n)
    counts = np.bincount(row, minlength=rows)
    slot = np.arange(found.size) - np.repeat(np.cumsum(counts) - counts, counts)
    kept = np.zeros((rows, counts.max()), keys.dtype)
    kept[row, slot] = keys.reshape(-1)[found]
    positions = np.full(kept.shape, n, DEFAULT_INT)
    positions[row, slot] = position
    return kept, positions


def _simplify(eqn, producer):
    """Under jit the impl (or, for the 16-bit floats, the kernel) gets the keys of real values (unsigned integers
    that order as they do) from a fused loop, unless the kernel reads the values themselves."""
    x = eqn.inputs[0]
    if (x.aval.dtype.kind in "buc" or is_symbolic(x.aval.shape) or x.aval.shape[-1] >= 1 << 32
            or _compiled(x.aval, eqn.params["k"])):
        return None
    return lambda x: top_k_p.bind(traced_order_keys(x, total=True), k=eqn.params["k"])


# ----------------------------------------------------------------------------------------------- the kernel

# The largest k the kernel selects: each value that gets in moves up to k - 1 kept pairs (two memmoves). The most
# that get in are the values of the k - 1 groups above the first pass's floor, in ascending order: (k - 1) / GROUPS
# of the row, 2.5 ms for 1e6 f32 at k = 10 and 3.7 at 16 (NumPy's partition 1.0; random and ascending rows 0.27).
KERNEL_K = 16
GROUPS = 64         # the first pass's groups: lanes of its vector max (four vectors of 16 f32)
BLOCK_BYTES = 64    # a row's values are compared with the worst kept key a vector of this many bytes at a time


def _compiled(x, k):
    """Whether the kernel selects the k largest along the last axis of x (an aval) from the values themselves:
    floats of 32 or 64 bits, integers, bools (the 16-bit floats come as keys, complex numbers never)."""
    direct = x.dtype.kind in "biu" or x.dtype in (float32, float64)
    return direct and 1 <= k <= KERNEL_K and not is_symbolic(x.shape)


class _Keys:
    """Generated code for the keys of `lanes` values of dtype at a pointer: integers of the values' width that
    order as order_keys(total=True)'s do, compared unsigned."""

    def __init__(self, f, dtype, lanes):
        self.f, self.dtype, self.lanes = f, dtype, lanes
        self.bits = 8 * dtype.itemsize
        self.int = f"i{self.bits}"
        self.ty = self.int if lanes == 1 else f"<{lanes} x {self.int}>"

    def const(self, value):
        return str(value) if self.lanes == 1 else f"splat ({self.int} {value})"

    def load(self, ptr):
        f, ty, sign = self.f, self.ty, self.const(-(1 << (self.bits - 1)))
        bits = f.emit(f"load {ty}, ptr {ptr}, align {self.dtype.itemsize}")
        if self.dtype.kind in "bu":
            return bits
        if self.dtype.kind == "i":
            return f.emit(f"xor {ty} {bits}, {sign}")
        negative = f.emit(f"ashr {ty} {bits}, {self.const(self.bits - 1)}")   # all ones where negative: flip all
        return f.emit(f"xor {ty} {f.emit(f'or {ty} {negative}, {sign}')}, {bits}")


def _insert_function(module, name, it, k):
    """Write function `name` putting %key at position %i among the m = min(%m, k) best (key, position) pairs so
    far, which are the last m of the k slots of %keys and %positions, worst first (slots below them hold keys no
    greater than their first): after every kept key below it, and before those equal to it (earlier positions are
    the better); when m is k, the worst falls out. A branch-free binary search and two memmoves. Not inlined (LLVM
    compiles it once for the kernel's call sites) nor optimised (optnone: straight-line code as written, compiled
    by LLVM's fast path: 1.2 ms of the library function's 11, and rows that call it for every value ran as fast)."""
    from ..backend.llvm_text import Function  # (when code is generated, as _lower's import)
    f = Function(module, f"define internal void {name}(ptr noalias %keys, ptr noalias %positions, {it} %key, "
                         "i64 %i, i64 %m) nounwind noinline optnone", {})
    size = int(it[1:]) // 8

    def at(array, i):
        return f.emit(f"getelementptr inbounds {it if array == '%keys' else 'i64'}, ptr {array}, i64 {i}")

    p, count = "1", k - 1       # the first slot of [1, k) whose key is not below %key, or k
    while count > 1:
        half = count // 2
        probe = f.emit(f"load {it}, ptr {at('%keys', f.emit(f'add i64 {p}, {half - 1}'))}")
        below = f.emit(f"icmp ult {it} {probe}, %key")
        p = f.emit(f"select i1 {below}, i64 {f.emit(f'add i64 {p}, {half}')}, i64 {p}")
        count -= half
    if count:
        probe = f.emit(f"load {it}, ptr {at('%keys', p)}")
        below = f.emit(f"icmp ult {it} {probe}, %key")
        p = f.emit(f"add i64 {p}, {f.emit(f'zext i1 {below} to i64')}")
    full = f.emit(f"icmp uge i64 %m, {k}")
    low = f.emit(f"select i1 {full}, i64 1, i64 {f.emit(f'sub i64 {k}, %m')}")     # the first slot that stays
    p = f.emit(f"call i64 @llvm.umax.i64(i64 {p}, i64 {low})")
    dst = f.emit(f"sub i64 {low}, 1")
    for array, bytes_ in (("%keys", size), ("%positions", 8)):
        length = f.emit(f"mul i64 {f.emit(f'sub i64 {p}, {low}')}, {bytes_}")
        f.line(f"call void @llvm.memmove.p0.p0.i64(ptr {at(array, dst)}, ptr {at(array, low)}, i64 {length}, i1 false)")
    slot = f.emit(f"sub i64 {p}, 1")
    f.line(f"store {it} %key, ptr {at('%keys', slot)}")
    f.line(f"store i64 %i, ptr {at('%positions', slot)}")
    f.line("ret void")
    module.add(f)


def _symbol(dtype, k):
    """The name of the library function selecting the k largest of each row of dtype's values."""
    return f"tj_topk{k}_{dtype.name}"


def _lower(kb, outs, ins, k):
    """A call of the library function (backend/kernel_library.py compiles it once per process, `_write`) for each
    of the rows %lo to %hi (the row loop here: in the library function it cost 1.4 of its 10 ms of compile)."""
    from ..backend import kernel_library  # (when code is generated: the backend sits above the primitives)
    (out,), (x,) = outs, ins
    f, n = kb.f, x.aval.shape[-1]
    callee = kernel_library.symbol(f.module, _symbol(x.aval.dtype, k), _write, light=True)
    with kb.loop("%lo", "%hi") as r:
        offset = f.emit(f"mul i64 {r}, {n}")
        row = f.emit(f"getelementptr inbounds i{8 * x.aval.dtype.itemsize}, ptr {x.ptr}, i64 {offset}")
        best = f.emit(f"getelementptr inbounds i64, ptr {out.ptr}, i64 {f.emit(f'mul i64 {r}, {k}')}")
        kb.line(f"call void {callee}(ptr {row}, ptr {best}, i64 {n})")


def _write(module, name):
    """Write the library function `name` (_symbol's): `void name(ptr row, ptr out, i64 n)` writes the
    positions (i64) of the k largest of the n values at row to out, the largest first.

    Per row, the k best (key, position) pairs so far, worst first, in two small arrays, in two passes over the
    row. The first takes the largest key of each of GROUPS groups (the positions equal modulo GROUPS: a vector max
    lane by lane, at the speed of reading the row, no branch) and keeps the k largest of those: the k-th, the floor,
    is no more than the row's k-th largest key. The second starts from k pairs of a key just below the floor and
    compares each block of BLOCK_BYTES with the worst kept key at once (vector compares), reading one by one only
    the values above it, which are few (about k log(n / k) on random values; ascending rows too). Rows shorter than
    GROUPS, or with a floor of the lowest key, are read one value at a time."""
    from ..backend.llvm_text import Function  # (when code is generated, as _lower's import)
    k, dtype = _SYMBOL.match(name).groups()
    k, dtype = int(k), np.dtype(dtype)
    f = Function(module, f"define void @{name}(ptr noalias %row, ptr noalias %out, i64 %n) nounwind", {})
    lanes = max(1, BLOCK_BYTES // dtype.itemsize)
    one, block = _Keys(f, dtype, 1), _Keys(f, dtype, lanes)
    it, mask = one.int, f"i{lanes}"
    keys, positions, pending = f.alloca(f"[{k} x {it}]"), f.alloca(f"[{k} x i64]"), f.alloca(mask)
    insert = f"@{name}_insert"
    _insert_function(module, insert, it, k)

    def at(ptr, i, ty=it):
        return f.emit(f"getelementptr inbounds {ty}, ptr {ptr}, i64 {i}")

    def worst():
        return f.emit(f"load {it}, ptr {keys}")

    def consider(key, i, kept=k):
        """key at position i in, if there are fewer than k (kept) or it beats the worst."""
        better = f.emit(f"icmp ugt {it} {key}, {worst()}")
        if kept != k:
            better = f.emit(f"or i1 {better}, {f.emit(f'icmp ult i64 {kept}, {k}')}")
        with f.when(better):
            f.line(f"call void {insert}(ptr {keys}, ptr {positions}, {it} {key}, i64 {i}, i64 {kept})")

    def start_from(key):
        """k pairs of key (one vector store: a loop cost LLVM 0.5-1 ms of compile time)."""
        spread = f.emit(f"insertelement <{k} x {it}> poison, {it} {key}, i64 0")
        spread = f.emit(f"shufflevector <{k} x {it}> {spread}, <{k} x {it}> poison, <{k} x i32> zeroinitializer")
        f.line(f"store <{k} x {it}> {spread}, ptr {keys}, align {dtype.itemsize}")

    def scan_block(start):
        """consider() each value of the block at start above the worst kept key (in order of position)."""
        spread = f.emit(f"insertelement {block.ty} poison, {it} {worst()}, i64 0")
        spread = f.emit(f"shufflevector {block.ty} {spread}, {block.ty} poison, <{lanes} x i32> zeroinitializer")
        above = f.emit(f"icmp ugt {block.ty} {block.load(at('%row', start))}, {spread}")
        f.line(f"store {mask} {f.emit(f'bitcast <{lanes} x i1> {above} to {mask}')}, ptr {pending}")
        head, body, done = f.label("bits"), f.label("bit"), f.label("bitsdone")
        f.line(f"br label %{head}")
        f.block(head)
        bits = f.emit(f"load {mask}, ptr {pending}")
        f.line(f"br i1 {f.emit(f'icmp ne {mask} {bits}, 0')}, label %{body}, label %{done}")
        f.block(body)
        rest = f.emit(f"and {mask} {bits}, {f.emit(f'sub {mask} {bits}, 1')}")
        f.line(f"store {mask} {rest}, ptr {pending}")
        lane = f.emit(f"call {mask} @llvm.cttz.{mask}({mask} {bits}, i1 true)")
        if lanes != 64:
            lane = f.emit(f"{'zext' if lanes < 64 else 'trunc'} {mask} {lane} to i64")
        i = f.emit(f"add i64 {start}, {lane}")
        consider(one.load(at("%row", i)), i)
        f.line(f"br label %{head}")
        f.block(done)

    wide = f"<{GROUPS} x {it}>"
    maxima = f.alloca(f"[{GROUPS} x {it}]")
    whole, supers = f.emit(f"udiv i64 %n, {lanes}"), f.emit(f"udiv i64 %n, {GROUPS}")
    # first pass: the largest key of each of GROUPS groups (positions i mod GROUPS, i below supers * GROUPS),
    # a vector's max lane by lane; the k-th largest of them (0 where some group is empty) is no more than the
    # k-th largest value
    f.line(f"store {wide} zeroinitializer, ptr {maxima}, align {dtype.itemsize}")
    with f.loop(0, supers) as b:
        values = _Keys(f, dtype, GROUPS).load(at("%row", f.emit(f"mul i64 {b}, {GROUPS}")))
        most = f.emit(f"load {wide}, ptr {maxima}, align {dtype.itemsize}")
        f.line(f"store {wide} {f.emit(f'call {wide} @llvm.umax.v{GROUPS}{it}({wide} {most}, {wide} {values})')}, "
               f"ptr {maxima}, align {dtype.itemsize}")
    start_from(0)
    with f.loop(0, GROUPS) as g:
        consider(f.emit(f"load {it}, ptr {at(maxima, g)}"), g, f.emit(f"call i64 @llvm.umin.i64(i64 {g}, i64 {k})"))
    floor = worst()
    found = f.emit(f"and i1 {f.emit(f'icmp ne {it} {floor}, 0')}, {f.emit(f'icmp ne i64 {supers}, 0')}")
    # the second pass, above a floor of 0, starts from k keys one below it, which the k largest values beat
    start_from(f.emit(f"select i1 {found}, {it} {f.emit(f'sub {it} {floor}, 1')}, {it} 0"))
    with f.when(found), f.loop(0, whole) as b:
        scan_block(f.emit(f"mul i64 {b}, {lanes}"))
    rest = f.emit(f"select i1 {found}, i64 {f.emit(f'mul i64 {whole}, {lanes}')}, i64 0")
    with f.loop(rest, "%n") as i:     # the rest of the row, or the whole row from no kept pair
        kept = f.emit(f"select i1 {found}, i64 {k}, i64 {f.emit(f'call i64 @llvm.umin.i64(i64 {i}, i64 {k})')}")
        consider(one.load(at("%row", i)), i, kept)
    best_first = ", ".join(f"i32 {j}" for j in reversed(range(k)))
    best = f.emit(f"load <{k} x i64>, ptr {positions}, align 8")
    best = f.emit(f"shufflevector <{k} x i64> {best}, <{k} x i64> poison, <{k} x i32> <{best_first}>")
    f.line(f"store <{k} x i64> {best}, ptr %out, align 8")
    f.line("ret void")
    module.add(f)


_SYMBOL = re.compile(r"tj_topk(\d+)_(\w+)$")


def _available(eqn):
    return _compiled(eqn.inputs[0].aval, eqn.params["k"])


def _split(eqn):
    """The rows, and ~0.1 ns per value (read in blocks) and 20 ns per row."""
    x = eqn.inputs[0].aval
    rows = math.prod(x.shape[:-1])
    return rows, 0.1 * rows * x.shape[-1] + 20.0 * rows


top_k_p = Primitive("top_k", _shape, _impl, simplify=_simplify,
                    lower=Kernel(_lower, available=_available, split=_split))
top_k_p.set(jvp=jvp_rule(top_k_p, ZERO), batch=leading_batch_rule(top_k_p))
