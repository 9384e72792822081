"""The loop builders: what a kernel's body is written with. In: a group and its buffers. Out: instructions
appended to the group's `Function`.

`KernelBuilder` is what a Kernel rule (dot_general, cumsum, ...) writes with: the emitter `b`, loops,
loads and stores on Buffers. `LoopBuilder` writes the loop nest of a fusible group: every member is
computed at an index on demand (memoised); a reduction accumulates over its reduced axes innermost (a
float32 sum a block of REDUCE_BLOCK elements at a time in float32), or in memory order into its output
when it keeps the last axis. kernels.ControlBuilder, for Control rules, extends KernelBuilder.
"""
import contextlib
import itertools
import math

import numpy as np

from ..core.ir import Literal
from .frame import ALIGN, Buffer
from .fusion import domain_size
from .loop_axes import TILE
from .rules import Elementwise, Emitter, Reduce, const_text, llvm_type, memory_type

REDUCE_BLOCK = 1024       # elements a float32 sum adds up in float32 before adding them to its float64 total
MAX_SEGMENTS = 8          # segments an innermost loop may run in (IndexMap's splits): each repeats the loop's body,
SHORT_SEGMENT = 16        # elements under which a segment runs scalar
SEGMENTED_EQNS = 128      # or more where segments x the body's equations stay within this (a concatenate of 50
                          # small arrays took 6.7 us a call through a chain of 50 selects, NumPy's 4.1)
COPY_BLOCK = 64           # bytes from which a block of an operand along a later axis is copied by memcpy


class KernelBuilder:
    """What a Kernel rule writes with: the emitter `b`, loops, loads and stores on Buffers."""

    def __init__(self, func):
        self.f = func
        self.b = Emitter(func)
        self.loop, self.loop_nest, self.alloca, self.line = func.loop, func.loop_nest, func.alloca, func.line

    def address(self, buf, idx):
        if isinstance(buf, Buffer) and buf.kind == "row":     # a row loop's value: the trailing axes index a row
            idx = idx[len(idx) - buf.aval.ndim:]
        flat, stride = 0, 1
        for i, d in reversed(list(zip(idx, buf.aval.shape))):
            flat = self.b.iop("add", flat, self.b.iop("mul", i, stride))
            stride = self.b.iop("mul", stride, d)
        if flat == 0:
            return buf.ptr
        return self.f.emit(f"getelementptr inbounds {memory_type(buf.aval.dtype)}, ptr {buf.ptr}, i64 {flat}")

    def _parts(self, buf, idx):
        """The addresses of a complex element's real and imaginary parts."""
        at = self.address(buf, idx)
        return at, self.f.emit(f"getelementptr inbounds {llvm_type(buf.aval.dtype)}, ptr {at}, i64 1")

    def load(self, buf, idx):
        dtype = buf.aval.dtype
        if dtype.kind == "c":
            ty = llvm_type(dtype)
            return tuple(self.f.emit(f"load {ty}, ptr {p}, align {dtype.itemsize // 2}") for p in self._parts(buf, idx))
        v = self.f.emit(f"load {memory_type(dtype)}, ptr {self.address(buf, idx)}, align {dtype.itemsize}")
        return self.b.from_memory(v, dtype)

    def store(self, buf, idx, value):
        dtype = buf.aval.dtype
        if dtype.kind == "c":
            ty = llvm_type(dtype)
            for p, v in zip(self._parts(buf, idx), value):
                self.f.line(f"store {ty} {v}, ptr {p}, align {dtype.itemsize // 2}")
            return
        value = self.b.to_memory(value, dtype)
        self.f.line(f"store {memory_type(dtype)} {value}, ptr {self.address(buf, idx)}, align {dtype.itemsize}")

    def variable(self, dtype):
        """A stack slot for a value of dtype (a pair of slots for a complex one)."""
        ty = llvm_type(dtype)
        return (self.alloca(ty), self.alloca(ty)) if np.dtype(dtype).kind == "c" else self.alloca(ty)

    def load_var(self, var_ptr, ty):
        if isinstance(var_ptr, tuple):
            return tuple(self.load_var(p, ty) for p in var_ptr)
        return self.f.emit(f"load {ty}, ptr {var_ptr}")

    def store_var(self, var_ptr, ty, value):
        if isinstance(var_ptr, tuple):
            for p, v in zip(var_ptr, value):
                self.store_var(p, ty, v)
            return
        self.f.line(f"store {ty} {value}, ptr {var_ptr}")


class LoopBuilder(KernelBuilder):
    """The loop nest of a fusible group: every member is computed at an index on demand (memoised),
    members that reach the root through identity indices first, in program order (no deep recursion)."""

    def __init__(self, func, group, buffers):
        super().__init__(func)
        self.g, self.eqns, self.buffers = group, group.eqns, buffers
        self.producer = {id(v): e for e in self.eqns for v in e.outvars}
        self.memo = {}

    def value(self, x, idx):
        if isinstance(x, Literal):
            return const_text(x.value, x.aval.dtype)
        key = (id(x), tuple(idx))
        if key in self.memo:
            return self.memo[key]
        e = self.producer.get(id(x))
        if e is None:
            v = self.load(self.buffers[id(x)], idx)
        else:
            v = self.apply(e, idx)
        self.memo[key] = v
        return v

    def apply(self, e, idx):
        b = self.b
        rule = e.prim.lower
        if isinstance(rule, Elementwise):
            args = [self.value(x, idx if x.aval.ndim else []) for x in e.inputs]
        b.in_avals = [x.aval for x in e.inputs]
        if isinstance(rule, Elementwise):
            return rule.fn(b, *args, **e.params)
        return rule.fn(b, idx, lambda i, j: self._read(e, i, j), **e.params)

    def _read(self, e, i, idx):
        v = self.value(e.inputs[i], idx)
        b = self.b
        b.in_avals = [x.aval for x in e.inputs]
        return v

    def _prefetch(self, idx):
        """Evaluate in program order the members reached from the root at the domain index."""
        reach = {id(x) for x in (self.g.root.inputs[:1] if isinstance(self.g.rule, Reduce) else
                                 self.g.root.outvars)}
        reach |= {id(v) for v in self.g.stores}
        order = []
        for e in reversed(self.eqns):
            if id(e.outvars[0]) in reach and (e is not self.g.root or not isinstance(self.g.rule, Reduce)):
                order.append(e)
                if isinstance(e.prim.lower, Elementwise):
                    reach |= {id(x) for x in e.inputs if not isinstance(x, Literal) and x.aval.ndim}
        for e in reversed(order):
            self.value(e.outvars[0], idx)

    def emit(self, outer_idx=()):
        """Write the loop nest; outer_idx: the indices of the outer axes, whose loops the caller runs (a row
        loop's phase: fusion.RowLoop)."""
        g, f = self.g, self.f
        if isinstance(g.outer_extent, int):      # (the chunk [%lo, %hi) of the outer loop that threads split)
            f.bounds["%lo"] = f.bounds["%hi"] = (0, g.outer_extent)
        if g.phases:
            return self._rows()
        if self._copies():
            return
        shape = g.domain
        axes = g.root.params["axes"] if isinstance(g.rule, Reduce) else ()
        kept = [a for a in g.loop_order if a not in axes]
        if g.in_place:
            return self._reduce_in_place(axes, kept)
        idx = [0] * len(shape)      # an axis merged into a later one (loop_axes.collapse_axes) stays at 0
        idx[:len(outer_idx)] = outer_idx
        outermost = next((a for a in g.loop_order if g.extents[a] is not None), None)    # threads split its loop
        bounds = {a: ("%lo", "%hi") if a == outermost else (0, g.extents[a]) for a in g.loop_order[:len(kept)]}
        looped = [a for n, a in enumerate(g.loop_order[:len(kept)])
                  if n >= len(outer_idx) and g.extents[a] is not None and a not in g.unrolled]
        split = self._segments(looped[-1]) if looped and not isinstance(g.rule, Reduce) and not g.unrolled else None
        with contextlib.ExitStack() as outer:
            for n, a in enumerate(g.loop_order[:len(kept)]):
                if n < len(outer_idx):
                    continue
                if a == g.tiled:        # tiles of that axis and the last one (loop_axes.transposed_read)
                    last = len(shape) - 1
                    bounds[a] = outer.enter_context(self._blocks(*bounds[a], TILE))
                    bounds[last] = outer.enter_context(self._blocks(*bounds[last], TILE))
                if a in looped and not (split and a == looped[-1]):
                    idx[a] = outer.enter_context(f.loop(*bounds[a]))
            if isinstance(g.rule, Reduce):
                self._reduce(idx, axes, kept, first=not kept)
            elif split:
                a = looped[-1]
                for start, end in split:        # the innermost loop in segments (IndexMap's splits)
                    lo, hi = bounds[a]
                    lo = max(lo, start) if isinstance(lo, int) else self.b.intrinsic("smax", lo, start, dtype=np.int64)
                    hi = min(hi, end) if isinstance(hi, int) else self.b.intrinsic("smin", hi, end, dtype=np.int64)
                    short = end - start < SHORT_SEGMENT      # (LLVM vectorizing 50 of 10 elements: 350 ms)
                    with f.loop(lo, hi, **({"vectorize_enable": False} if short else {})) as i:
                        idx[a], self.b.segments[i], self.memo = i, (start, end), {}
                        self._store_all(idx)
            else:
                for point in itertools.product(*(range(g.extents[a]) for a in g.unrolled)):
                    for a, i in zip(g.unrolled, point):
                        idx[a] = i
                    self._store_all(idx)

    def _copies(self):
        """Whether the group is one index map placing whole operands along one axis (IndexMap's blocks: a
        concatenate or stack), each a buffer or a reshape or window of one whose blocks are contiguous, which it
        writes as one memcpy per block from a table of the operands' pointers: along axis 0 each operand's rows in
        the chunk [lo, hi); along a later axis, for each row of the axes before it in the chunk, each operand's
        block of that row. LLVM compiled a concatenate of 50 arrays of 10 f32 in 55-60 ms as 50 loops, in 29 as
        50 memcpy calls, in 12 so; one of 100 (10, 100) f64 along axis 1, in 2.6 s as 100 loop segments."""
        g, b, f = self.g, self.b, self.f
        blocks = getattr(g.root.prim.lower, "blocks", None)
        found = None if blocks is None else blocks(g.root)
        out = self.buffers[id(g.root.outvars[0])]
        shape = out.aval.shape
        if (found is None or g.tiled is not None or g.loop_order[0] != 0 or g.domain[0] != shape[0] or g.extents[0] != g.domain[0]
                or len(g.stores) != 1 or not all(isinstance(d, int) for d in shape[1:])
                or not all(e is g.root or self._viewing(e) for e in g.eqns)):
            return False
        axis, spans = found
        views = [self._view(x, axis) for x in g.root.inputs]
        pieces = [(v, span) for v, span in zip(views, spans) if span[0] < span[1]]
        size = out.aval.dtype.itemsize * math.prod(shape[axis + 1:])      # bytes per index of the axis
        if any(v is None or v[0] is out for v in views) or axis and not (
                len(pieces) > MAX_SEGMENTS or all((e - s) * size >= COPY_BLOCK for _, (s, e) in pieces)):
            return False
        pointers = f.alloca(f"[{max(len(pieces), 1)} x ptr]")
        for k, ((buf, offset, _), _) in enumerate(pieces):
            base = f.emit(f"getelementptr i8, ptr {buf.ptr}, i64 {offset}")
            self.line(f"store ptr {base}, ptr {f.emit(f'getelementptr ptr, ptr {pointers}, i64 {k}')}")
        # per operand: its span along the axis, the bytes between its rows
        table = f.module.array(np.array([x for (_, _, stride), span in pieces for x in (*span, stride)] or [0],
                                        np.int64))

        def field(k, n):
            at = b.iop("add", b.iop("mul", k, 3), n)
            return f.emit(f"load i64, ptr {f.emit(f'getelementptr i64, ptr {table}, i64 {at}')}")

        def copy(dst, src, nbytes):
            self.line(f"call void @llvm.memcpy.p0.p0.i64(ptr {dst}, ptr {src}, i64 {nbytes}, i1 false)")

        if axis == 0:
            with f.loop(0, len(pieces), vectorize_enable=False, unroll_disable=None) as k:
                start, end = field(k, 0), field(k, 1)
                lo = b.intrinsic("smin", b.intrinsic("smax", "%lo", start, dtype=np.int64), end, dtype=np.int64)
                hi = b.intrinsic("smax", b.intrinsic("smin", "%hi", end, dtype=np.int64), lo, dtype=np.int64)
                base = f.emit(f"load ptr, ptr {f.emit(f'getelementptr ptr, ptr {pointers}, i64 {k}')}")
                copy(f.emit(f"getelementptr i8, ptr {out.ptr}, i64 {b.iop('mul', lo, size)}"),
                     f.emit(f"getelementptr i8, ptr {base}, i64 {b.iop('mul', b.iop('sub', lo, start), size)}"),
                     b.iop("mul", b.iop("sub", hi, lo), size))
            return True
        rows = math.prod(shape[1:axis])      # rows of the axes before the axis per index of axis 0
        with f.loop(b.iop("mul", "%lo", rows), b.iop("mul", "%hi", rows), vectorize_enable=False) as r:
            row = f.emit(f"getelementptr i8, ptr {out.ptr}, i64 {b.iop('mul', r, shape[axis] * size)}")
            with f.loop(0, len(pieces), vectorize_enable=False, unroll_disable=None) as k:
                start, end, stride = field(k, 0), field(k, 1), field(k, 2)
                base = f.emit(f"load ptr, ptr {f.emit(f'getelementptr ptr, ptr {pointers}, i64 {k}')}")
                copy(f.emit(f"getelementptr i8, ptr {row}, i64 {b.iop('mul', start, size)}"),
                     f.emit(f"getelementptr i8, ptr {base}, i64 {b.iop('mul', r, stride)}"),
                     b.iop("mul", b.iop("sub", end, start), size))
        return True

    def _viewing(self, e):
        """Whether e reads its operand without moving it (IndexMap's same_order or window)."""
        rule = e.prim.lower
        return getattr(rule, "same_order", False) or getattr(rule, "window", None) is not None and rule.window(e)

    def _view(self, x, axis):
        """(buffer, byte offset, bytes between rows) where x's elements lie, its blocks along `axis` contiguous
        (the rows: the indices of the axes before it): its own buffer or its operand's where x is a reshape in the
        group (IndexMap's same_order) of a value read in place, or a window of one (IndexMap's window) whole in
        every axis but the first and `axis`; else None."""
        e = None if isinstance(x, Literal) else self.producer.get(id(x))
        if e is None:
            buf = None if isinstance(x, Literal) else self.buffers.get(id(x))
            return None if buf is None else (buf, 0, self._bytes_from(x.aval, axis))
        if getattr(e.prim.lower, "same_order", False):
            inner = self._view(e.inputs[0], 0)       # (its rows along axis 0 are contiguous: so is it all)
            return inner and (inner[0], inner[1], self._bytes_from(x.aval, axis))
        starts = e.prim.lower.window(e) if getattr(e.prim.lower, "window", None) is not None else None
        if starts is None or self.producer.get(id(e.inputs[0])) is not None:
            return None
        buf, full = self.buffers.get(id(e.inputs[0])), e.inputs[0].aval.shape
        if buf is None or not all(isinstance(d, int) for d in full[1:]) or any(
                n != m for a, (n, m) in enumerate(zip(x.aval.shape, full)) if a not in (0, axis)):
            return None
        inner = self._bytes_after(x.aval, axis)
        first_row = starts[0] * math.prod(full[1:axis]) * full[axis] if axis else 0     # of x in the buffer's rows
        return buf, (first_row + starts[axis]) * inner, full[axis] * inner

    @staticmethod
    def _bytes_from(av, axis):
        """Bytes per row (index of the axes before `axis`) of an array of aval av: all of a scalar's (a stack of
        scalars reads them through expand_dims)."""
        return av.dtype.itemsize * math.prod(av.shape[axis:])

    @staticmethod
    def _bytes_after(av, axis):
        """Bytes per index of `axis` in an array of aval av (C order)."""
        return av.dtype.itemsize * math.prod(av.shape[axis + 1:])

    def _store_all(self, idx):
        self._prefetch(idx)
        for v in self.g.stores:
            self.store(self.buffers[id(v)], idx, self.value(v, idx))

    def _segments(self, a):
        """[(start, end)] of the innermost loop's axis a where a member declares points there (IndexMap's splits:
        a concatenate of the domain's shape), at most MAX_SEGMENTS (or SEGMENTED_EQNS); else None."""
        g, points = self.g, set()
        if g.tiled is not None or g.extents[a] != g.domain[a] or not isinstance(g.domain[a], int):
            return None
        for e in g.eqns:
            splits = getattr(e.prim.lower, "splits", None)
            found = splits(e) if splits is not None and e.outvars[0].aval.shape == tuple(g.domain) else None
            if found is not None and found[0] == a:
                points.update(found[1])
        ends = [0, *sorted(points), g.domain[a]]
        count = len(ends) - 1
        return list(itertools.pairwise(ends)) if points and (
            count <= MAX_SEGMENTS or count * len(g.eqns) <= SEGMENTED_EQNS) else None

    def _rows(self):
        """A row loop: the loops over its outer axes, and in them each phase's inner loops in turn."""
        g, f = self.g, self.f
        buffers = dict(self.buffers)
        for v in g.row_values:        # one row of each, on the stack
            b = buffers[id(v)] = Buffer("row", v.aval.update(shape=v.aval.shape[g.depth:]))
            b.ptr = f.alloca(f"[{max(b.nbytes, 1)} x i8], align {ALIGN}")
        idx = []
        with contextlib.ExitStack() as outer:
            for a in range(g.depth):
                idx.append(outer.enter_context(f.loop("%lo", "%hi") if a == 0 else f.loop(0, g.domain[a])))
            for phase in g.phases:
                LoopBuilder(f, phase, buffers).emit(idx)

    def _reduce(self, idx, axes, kept, first):
        """Accumulate over the reduced axes (innermost last). An accumulator wider than the operand (a float32
        sum adds up in float64) takes the innermost loop a block at a time: the block accumulates in the
        operand's type, so the loop vectorizes at full width, and is then added to the wide accumulator."""
        g, f, b = self.g, self.f, self.b
        root, shape, params = g.root, g.domain, g.root.params
        in_aval = root.inputs[0].aval
        b.in_avals = [in_aval]
        inits = g.rule.init(b, **params)
        if g.unrolled:
            return self._reduce_unrolled(idx, axes, kept, inits)
        tys = [llvm_type(dtype) for _, dtype in inits]
        accs = [self.variable(dtype) for _, dtype in inits]
        for a, t, (v, _) in zip(accs, tys, inits):
            self.store_var(a, t, v)
        blocked = _blocked(g.rule, inits, in_aval)
        if blocked:
            narrow_ty = llvm_type(in_aval.dtype)
            narrow = self.variable(in_aval.dtype)
            narrow_init = g.rule.result(b, [v for v, _ in inits], **params)

        def bounds(n):
            return ("%lo", "%hi") if first and n == 0 else (0, shape[axes[n]])

        with contextlib.ExitStack() as loops:
            for n, a in enumerate(axes[:-1]):
                idx[a] = loops.enter_context(f.loop(*bounds(n)))
            innermost = contextlib.nullcontext()      # a reduction over no axes updates once
            if axes:
                (lo, hi), size = bounds(len(axes) - 1), domain_size((shape[axes[-1]],))
                # long: interleaved accumulators; short: in order
                hints = {"interleave_count": 4} if size >= 256 else {"unroll_full": None} if size <= 16 else {}
                if blocked:
                    lo, hi = loops.enter_context(self._blocks(lo, hi, REDUCE_BLOCK))
                innermost = f.loop(lo, hi, **hints)
            if blocked:
                self.store_var(narrow, narrow_ty, narrow_init)
            with innermost as i:
                if axes:
                    idx[axes[-1]] = i
                self.memo.clear()
                self._prefetch(idx)
                x = self.value(root.inputs[0], idx)
                b.in_avals = [in_aval]
                if blocked:
                    new, = g.rule.combine(b, [self.load_var(narrow, narrow_ty)], [x], **params)
                    self.store_var(narrow, narrow_ty, new)
                else:
                    new = g.rule.update(b, [self.load_var(v, t) for v, t in zip(accs, tys)], x, **params)
                    for v, t, value in zip(accs, tys, new):
                        self.store_var(v, t, value)
                for v in g.stores[1:]:
                    self.store(self.buffers[id(v)], idx, self.value(v, idx))
            if blocked:
                b.in_avals = [in_aval]
                new, = g.rule.update(b, [self.load_var(accs[0], tys[0])], self.load_var(narrow, narrow_ty), **params)
                self.store_var(accs[0], tys[0], new)
        self.memo.clear()
        b.in_avals = [in_aval]
        result = g.rule.result(b, [self.load_var(a, t) for a, t in zip(accs, tys)], **params)
        self.store(self.buffers[id(root.outvars[0])], [idx[a] for a in kept], result)

    def _reduce_unrolled(self, idx, axes, kept, inits):
        """The reduction over short axes written out (fusion.unrolled_reduction), in registers, in the order and
        the types of the loop's (a row of the innermost axis in the operand's type, added to a wider
        accumulator): the same bits."""
        g, b = self.g, self.b
        root, params, in_aval = g.root, g.root.params, g.root.inputs[0].aval
        accs = [v for v, _ in inits]
        blocked = _blocked(g.rule, inits, in_aval)
        for outer in itertools.product(*(range(g.domain[a]) for a in axes[:-1])):
            narrow = g.rule.result(b, [v for v, _ in inits], **params) if blocked else None
            for last in range(g.domain[axes[-1]]):
                for a, i in zip(axes, (*outer, last)):
                    idx[a] = i
                self.memo.clear()
                x = self.value(root.inputs[0], idx)
                b.in_avals = [in_aval]
                if blocked:
                    narrow, = g.rule.combine(b, [narrow], [x], **params)
                else:
                    accs = g.rule.update(b, accs, x, **params)
                for v in g.stores[1:]:
                    self.store(self.buffers[id(v)], idx, self.value(v, idx))
            b.in_avals = [in_aval]
            if blocked:
                accs = [*g.rule.update(b, accs[:1], narrow, **params), *accs[1:]]
        self.memo.clear()
        b.in_avals = [in_aval]
        self.store(self.buffers[id(root.outvars[0])], [idx[a] for a in kept], g.rule.result(b, accs, **params))

    @contextlib.contextmanager
    def _blocks(self, lo, hi, block):
        """[lo, hi) in blocks of `block` elements: yields each block's bounds (one block when [lo, hi) is a fixed
        range of at most two blocks)."""
        if lo == 0 and isinstance(hi, int) and hi <= 2 * block:
            yield lo, hi
            return
        f = self.f
        lo, hi = f.size(lo), f.size(hi)
        length = f.emit(f"sub i64 {hi}, {lo}")
        count = f.emit(f"sdiv i64 {f.emit(f'add i64 {length}, {block - 1}')}, {block}")
        with f.loop(0, count) as k:
            start = f.emit(f"add i64 {lo}, {f.emit(f'mul i64 {k}, {block}')}")
            end = f.emit(f"add i64 {start}, {block}")
            yield start, f.emit(f"select i1 {f.emit(f'icmp slt i64 {end}, {hi}')}, i64 {end}, i64 {hi}")

    def _reduce_in_place(self, axes, kept):
        """out[kept] = init, then over the domain in memory order out[kept] = update(out[kept], x); the
        outermost loop runs [lo, hi), and when it is a kept axis the initialisation is restricted to it."""
        g, f, b = self.g, self.f, self.b
        root, shape = g.root, g.domain
        out = self.buffers[id(root.outvars[0])]
        b.in_avals = [root.inputs[0].aval]
        init = g.rule.result(b, [v for v, _ in g.rule.init(b, **root.params)], **root.params)
        with contextlib.ExitStack() as loops:
            kidx = [loops.enter_context(f.loop(*(("%lo", "%hi") if a == 0 else (0, shape[a])))) for a in kept]
            self.store(out, kidx, init)
        idx = [None] * len(shape)
        with contextlib.ExitStack() as loops:
            for a in range(len(shape)):
                if a not in g.unrolled:     # (short kept axes written out: fusion.unrolled_reduction)
                    idx[a] = loops.enter_context(f.loop(*(("%lo", "%hi") if a == 0 else (0, shape[a]))))
            for point in itertools.product(*(range(shape[a]) for a in g.unrolled)):
                for a, i in zip(g.unrolled, point):
                    idx[a] = i
                self.memo.clear()
                self._prefetch(idx)
                x = self.value(root.inputs[0], idx)
                kidx = [idx[a] for a in kept]
                b.in_avals = [root.inputs[0].aval]
                new, = g.rule.combine(b, [self.load(out, kidx)], [x], **root.params)
                self.store(out, kidx, new)
                for v in g.stores[1:]:
                    self.store(self.buffers[id(v)], idx, self.value(v, idx))
        self.memo.clear()


def _blocked(rule, inits, in_aval):
    """Whether a reduction adds up in a type wider than its operand's (a float32 sum in float64): then a block of
    the operand's type accumulates first (its `combine`), added to the wide accumulator once."""
    return rule.combine is not None and [llvm_type(dtype) for _, dtype in inits] != [llvm_type(in_aval.dtype)]
