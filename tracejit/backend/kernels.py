"""Kernels: one LLVM function per group. In: a Group, the Frame and the Module. Out: its function written
into the module and a `KernelFunction` saying how to call it and what it costs.

A group's function takes `ptr noalias` buffer arguments and the [lo, hi) range of its outermost loop, so
that a large loop can be split over threads, and in symbolic code `ptr %table` for the sizes. Its body is
written by a loop builder (loops.py) or by the group's Kernel or Control rule. Loops get llvm.loop hints:
the pipeline neither unrolls nor interleaves unless a loop asks (reductions do, to hide the accumulator's
latency, and so do loops calling the vector math library, to overlap the calls' latencies): both multiply the code that the later passes and instruction selection chew on, for little gain
on memory-bound loops. Every loop nest is vectorized but small ones (whose work does not pay for the
vectorizer's time, unless they belong to a control-flow body, which may run them many times): fusion keeps each loop nest's body below what LLVM handles
quickly (fusion.FUSED_COST, the cost model both share).

Control rules (cond, while, scan) call their sub-IRs: `compile_sub_ir` plans, lays out and emits each
like a top-level IR, into functions of the same module (`@c<k>_run(ptr table)`, run on the calling thread
but for loop nests worth splitting over the threads: steps.split_in_body), its arena and the loop's spare
carry buffers taking a region of the enclosing arena; so compile time does not depend on trip counts.
"""
import contextlib
import dataclasses
import math

import numpy as np

from ..core.avals import Dim, is_symbolic
from ..core.ir import Literal, effectful
from . import llvm, runtime, thread_pool
from .frame import Buffer, Frame, aligned
from .fusion import INLINE_COST, MIN_LIBRARY_LOOP, Group, domain_size, plan_groups
from .in_place import in_place_outputs
from .llvm_text import Function
from .loop_axes import TILE
from .loops import KernelBuilder, LoopBuilder
from .rules import Control, Kernel, Reduce
from .steps import split_in_body

# Vectors of independent elements that a loop calling the vector math library carries through its body at once:
# a chain of calls (exp(exp(x))) is one dependency chain per vector, each call's latency several times its
# throughput, so that one vector at a time leaves the core idle (a 200-op tanh/sin chain ran 3x slower with
# one). Each vector multiplies the loop's code and LLVM's time, so that in a loop of fewer than TINY_LOOP
# elements (static, not in a control-flow body), whose compile time outweighs its run time for hundreds of
# calls, a module calling the library LIBRARY_BUDGET times or more carries fewer: 4 vectors up to 32 calls,
# 1 from 128 calls (a 1000-op sin chain over 1000 f32: LLVM's time 3x shorter, 0.45 ms longer per call).
# A loop making one call carries one vector in such a loop and in a row loop's phase: there the core overlaps
# its independent iterations as well (softmax's and attention's rows the same run time, attention's module 4 ms
# less LLVM time; exp or tanh over 1000 elements as fast or 5-10% faster), where a longer loop nest runs 2-17%
# slower with one (exp, tanh over 4096 f64 or 1e6 elements, gelu over 1024 rows of 768).
LIBRARY_INTERLEAVE = 4
LIBRARY_BUDGET = 128
TINY_LOOP = 4096
# A loop calling the library over fewer elements than SHORT_LOOP, whose size is not a multiple of its
# vectors' elements, runs its remainder under a mask in the vector loop (tail folding) rather than in a
# scalar loop of scalar calls, which took half the time of sin chains over 1000 f32 (and needs the library's
# scalar functions compiled); a long loop does better without the masks (5-15% on exp(x) over 1e6 f32).
SHORT_LOOP = 1 << 16
VECTOR_SPEEDUP = 8        # how much faster a vectorized loop runs than the scalar estimate (measured 7-25x)
SCALAR_BELOW = 2048       # elements of a (static) loop domain below which loops stay scalar, unless
SCALAR_WORK = 20_000      # elements x body size reach this (vectorizing pays for its compile time)
MIN_VECTOR_LOOP = 16      # a static innermost loop shorter than this stays scalar, unless it calls the vector
                          # math library and has fusion.MIN_LIBRARY_LOOP elements
PARALLEL_ROWS_WORK = 1 << 18    # elements a carry-free scan's body writes over all iterations, from which its
                                # iterations run over the threads (a wake of a sleeping worker costs ~20 us)


@dataclasses.dataclass
class KernelFunction:
    """How to call a group's function `name(buffers..., i64 lo, i64 hi[, ptr table])`, the serial run
    time it is estimated at per element of its loop domain, the length of its text, and whether its loops
    may vectorize (None for a kernel that is not a fused loop nest)."""
    group: Group
    name: str
    buffers: list
    ns_per_element: float
    text_size: int
    vectorized: object = None

    def describe(self):
        """What introspection shows of it (Executable.kernels)."""
        g = self.group
        kind = "loop" if g.fusible else "control" if isinstance(g.rule, Control) else "kernel"
        return {"kernel": self.name.lstrip("@"), "kind": kind, "ops": [e.prim.name for e in g.eqns],
                "elements": domain_size(g.domain) if g.fusible else None, "vectorized": self.vectorized}


def emit_kernel(module, frame, g, fuse):
    """Write the function of group g; None for a group without a lowering rule (run by its NumPy impl)."""
    if g.rule is None:
        return None
    bufs = []
    for x in g.reads + g.stores:
        b = frame.buffers[id(x)]
        if b not in bufs:
            bufs.append(b)
    name = f"@{frame.prefix}g{g.index}"
    if isinstance(g.rule, Kernel) and g.rule.scratch:
        scratch = Buffer("tmp", None)
        scratch.offset = frame.arena_bytes
        bufs.append(scratch)
    params = ", ".join(f"ptr noalias %p{i}" for i in range(len(bufs)))
    table = ", ptr noalias readonly %table" if frame.symbolic else ""
    f = Function(module, f"define internal void {name}({params}, i64 %lo, i64 %hi{table}) nounwind alwaysinline",
                 frame.dim_slots)
    for i, b in enumerate(bufs):
        b.ptr = f"%p{i}"
    if isinstance(g.rule, Kernel):
        k = (ControlBuilder(f, frame, scratch, fuse) if isinstance(g.rule, Control) else
             ScratchBuilder(f, scratch) if g.rule.scratch else KernelBuilder(f))
        k.b.in_avals = [x.aval for x in g.root.inputs]
        ins = [_as_buffer(module, frame, x) for x in g.root.inputs]
        g.rule.fn(k, [frame.buffers[id(v)] for v in g.root.outvars], ins, **g.root.params)
        if g.rule.scratch:
            frame.extend_arena(k.used)
    else:
        LoopBuilder(f, g, frame.buffers).emit()
    f.line("ret void")
    tiny = (g.fusible and not frame.prefix and not any(isinstance(d, Dim) for d in g.domain)
            and domain_size(g.domain) < TINY_LOOP)

    def vectors(calls):
        """The vectors a loop making `calls` library calls carries at once (see LIBRARY_INTERLEAVE)."""
        if calls == 1 and (tiny or g.phases):
            return 1
        return max(1, min(LIBRARY_INTERLEAVE, LIBRARY_BUDGET // max(frame.library_calls, 1))) if tiny else (
            LIBRARY_INTERLEAVE)
    scalar = _loop_hints(g, f, repeated=bool(frame.prefix), vectors=vectors)
    text = module.add(f)
    ns_per_element = 0.5 + 0.05 * f.count + 2.0 * (f.math_calls + f.library_calls)
    if g.fusible and not scalar:
        ns_per_element /= VECTOR_SPEEDUP
    kernel = KernelFunction(g, name, bufs, ns_per_element, len(text), not scalar if g.fusible else None)
    module.kernels.append(kernel)
    return kernel


def _loop_hints(g, f, repeated, vectors):
    """Set the hints of f's loops (see the module's docstring); returns whether they stay scalar. repeated:
    f runs once per iteration of a control-flow loop, so that its work is not small whatever its size;
    vectors(calls): the vectors that a loop making that many calls of the vector math library carries at once."""
    body = f.count + INLINE_COST * (f.math_calls + f.library_calls)    # run time: a math call takes ~a body's
    inner = next((g.extents[a] for a in reversed(g.loop_order) if g.extents[a] is not None and a not in g.unrolled),
                 0) if g.fusible else 0
    if g.fusible and g.tiled is not None:     # the innermost loop runs over a tile's row (loop_axes.transposed_read)
        inner = min(inner, TILE)
    library = f.library_calls and not f.math_calls
    scalar = small = g.fusible and (
        (isinstance(inner, int) and inner < (MIN_LIBRARY_LOOP if library else MIN_VECTOR_LOOP))  # (the innermost)
        or (not repeated and not any(isinstance(d, Dim) for d in g.domain)
            and domain_size(g.domain) < SCALAR_BELOW and domain_size(g.domain) * body < SCALAR_WORK))
    # LLVM's cost model prices a library call as scalar calls, and prefers ymm on AVX-512 for a long inlined
    # math body (mathlib's log1p ran 4 doubles wide), so that it picks narrower vectors than the registers hold:
    # innermost loops that call mathlib's functions vectorize at full width, but for reductions that cannot
    # vectorize (without a combine: LLVM would say so on stderr).
    forced = f.vector_types and not scalar and (not isinstance(g.rule, Reduce) or g.rule.combine is not None)
    width = llvm.vector_bytes() // (4 if "float" in f.vector_types else 8) if forced else 0
    if width and isinstance(inner, int) and inner < width:     # no wider than the loop (a power of two)
        width = 1 << (inner - 1).bit_length()
    for k, hints in f.latches:
        if scalar:
            hints.update(vectorize_enable=False, interleave_count=1)
        elif width and k in f.innermost and hints.get("vectorize_enable", True):
            hints.setdefault("vectorize_width", width)
        calls = f.loop_library_calls[k]
        if small or f.math_calls or calls:  # unrolling or interleaving only multiplies the code
            hints.pop("interleave_count", None)
            hints.pop("unroll_full", None)
        if width and k in f.innermost and calls and not f.math_calls and not scalar:
            count = vectors(calls)
            if isinstance(inner, int):      # never more vectors at once than the loop has
                count = max(1, min(count, -(-inner // width)))
            hints["interleave_count"] = count
            if g.fusible and isinstance(inner, int) and inner % (width * count) and inner < SHORT_LOOP:
                hints["vectorize_predicate_enable"] = True
    return scalar


def _as_buffer(module, frame, x):
    """The Buffer of a kernel rule's operand; a literal becomes a constant array named in the module."""
    if isinstance(x, Literal):
        arr = np.asarray(x.value, dtype=x.aval.dtype)
        b = Buffer("const", x.aval, value=arr)
        b.ptr = module.array(arr)
        return b
    return frame.buffers[id(x)]


def compile_sub_ir(module, closed, fuse, prefix, aliases=None):
    """Plan, lay out and write a Control rule's sub-IR: (`@<prefix>run`, the bytes of arena it needs, the
    outputs written over their inputs). `<prefix>run(ptr table)` (table: inputs, outputs, arena) runs every
    group in order on this thread (a loop nest worth splitting, on all: steps.split_in_body); outputs that
    are inputs, literals or repeated values are copied. aliases: {output index: input index} that may share
    a buffer where that is safe (in_place.py); the caller passes the same pointer for both."""
    groups = plan_groups(closed.ir, fuse)
    aliases = in_place_outputs(closed.ir, groups, aliases or {})
    frame = Frame(closed, groups, prefix, aliases)
    f = Function(module, f"define internal void @{prefix}run(ptr %table) nounwind", frame.dim_slots)
    for g in groups:
        kernel = emit_kernel(module, frame, g, fuse)
        if not split_in_body(module, frame, f, kernel):
            f.line(f"call void {kernel.name}({frame.arguments(f, kernel.buffers)}, i64 0, i64 {g.outer_extent})")
    for j, v in frame.copies.items():
        src = _as_buffer(module, frame, v)
        dst = frame.outputs[j]
        f.line(f"call void @llvm.memcpy.p0.p0.i64(ptr {frame.pointer(f, dst)}, ptr "
               f"{src.ptr if isinstance(v, Literal) else frame.pointer(f, src)}, i64 {dst.nbytes}, i1 false)")
    f.line("ret void")
    module.add(f)
    return f"@{prefix}run", frame.arena_bytes, aliases


def _pointer_table(f, ptrs):
    """An array of the pointers ptrs on f's stack (a sub-IR's table: inputs, outputs, arena); returns it."""
    table = f.alloca(f"[{len(ptrs)} x ptr]")
    for i, p in enumerate(ptrs):
        f.line(f"store ptr {p}, ptr {f.emit(f'getelementptr ptr, ptr {table}, i64 {i}')}")
    return table


class ScratchBuilder(KernelBuilder):
    """What a Kernel rule with scratch memory writes with: a region of the arena after every planned buffer,
    `used` bytes from the `scratch` Buffer."""

    def __init__(self, func, scratch):
        super().__init__(func)
        self.scratch, self.used = scratch, 0

    def _reserve(self, nbytes):
        offset, self.used = self.used, self.used + aligned(nbytes)
        return offset

    def _at(self, offset):
        return self.f.emit(f"getelementptr i8, ptr {self.scratch.ptr}, i64 {offset}")

    def scratch_memory(self, nbytes):
        """A pointer to nbytes of scratch memory (ALIGN-aligned)."""
        return self._at(self._reserve(nbytes))


class ControlBuilder(ScratchBuilder):
    """What a Control rule writes with: sub-IRs called as functions of the same module, a switch, and a
    loop over double-buffered carries (or carries updated in place, in_place.py). Its scratch memory holds
    carry buffers and the sub-IRs' arenas."""

    def __init__(self, func, frame, scratch, fuse):
        super().__init__(func, scratch)
        self.frame, self.fuse = frame, fuse
        self.subs, self.exits = {}, []

    def _compiled(self, closed, aliases=None, arenas=1):
        """(function name, arena offset, outputs written over inputs, arena stride) of the sub-IR, compiled on
        first use with `arenas` arenas one after the other (one per thread that runs it)."""
        if id(closed) not in self.subs:
            name, arena_bytes, aliases = compile_sub_ir(self.f.module, closed, self.fuse, self.frame.sub_prefix(),
                                                        aliases)
            self.subs[id(closed)] = name, self._reserve(aligned(arena_bytes) * arenas), aliases, aligned(arena_bytes)
        return self.subs[id(closed)]

    def call(self, closed, ins, outs):
        """Run the sub-IR `closed` reading ins and writing outs (Buffers or pointers)."""
        name, offset, _, _ = self._compiled(closed)
        table = _pointer_table(self.f, [x.ptr if isinstance(x, Buffer) else x for x in [*ins, *outs]]
                               + [self._at(offset)])
        self.line(f"call void {name}(ptr {table})")

    def rows_in_parallel(self, body, consts, xs, ys, length, reverse):
        """A scan without carries run over the threads, where that pays (PARALLEL_ROWS_WORK) and the body has no
        effect (its iterations then run in any order); returns whether it did. Chunk c of n runs iterations
        [c L / n, (c + 1) L / n) with an arena of its own; iteration i reads row i of each xs (L - 1 - i when
        reverse) and writes that row of each ys. The blocks of a batched while loop (a million gamma draws:
        31250 blocks of 32) ran on one core."""
        chunks = min(runtime.NUM_THREADS, length)
        work = length * sum(math.prod(v.aval.shape) for e in body.ir.eqns for v in e.outvars)
        if (chunks < 2 or self.frame.symbolic or work < PARALLEL_ROWS_WORK or any(is_symbolic(v.aval.shape)
                for e in body.ir.eqns for v in e.outvars) or any(map(effectful, body.ir.eqns))):
            return False
        name, offset, _, stride = self._compiled(body, arenas=chunks)
        bufs = [*consts, *xs, *ys]
        table = _pointer_table(self.f, [x.ptr if isinstance(x, Buffer) else x for x in bufs] + [self._at(offset)])
        module = self.f.module
        task = module.entry_name("rows")
        f = Function(module, f"define internal void @{task}(ptr %table, i64 %c, i64 %n) nounwind", {})
        args = [f.emit(f"load ptr, ptr {f.emit(f'getelementptr ptr, ptr %table, i64 {i}')}")
                for i in range(len(bufs) + 1)]
        lo = f.emit(f"sdiv i64 {f.emit(f'mul i64 %c, {length}')}, %n")
        after = f.emit("add i64 %c, 1")
        hi = f.emit(f"sdiv i64 {f.emit(f'mul i64 {after}, {length}')}, %n")
        arena = f.emit(f"getelementptr i8, ptr {args[-1]}, i64 {f.emit(f'mul i64 %c, {stride}')}")
        with f.loop(lo, hi) as i:
            row = f.emit(f"sub i64 {length - 1}, {i}") if reverse else i
            ptrs = [p if k < len(consts) else
                    f.emit(f"getelementptr i8, ptr {p}, i64 {f.emit(f'mul i64 {row}, {b.nbytes // max(b.aval.shape[0], 1)}')}")
                    for k, (b, p) in enumerate(zip(bufs, args))]
            f.line(f"call void {name}(ptr {_pointer_table(f, [*ptrs, arena])})")
        f.line("ret void")
        module.add(f)
        thread_pool.emit_call(self.f, f"@{task}", table, chunks, True)
        return True

    def cases(self, index, n):
        """A switch on the integer Buffer `index` clamped to [0, n): yields k, emitting into case k."""
        f, b = self.f, self.b
        i = b.clamp_index(b.index(self.load(index, []), index.aval.dtype), 0, n - 1)
        labels, end = [f.label("case") for _ in range(n)], f.label("endswitch")
        targets = " ".join(f"i64 {k}, label %{label}" for k, label in enumerate(labels[1:], 1))
        self.line(f"switch i64 {i}, label %{labels[0]} [{targets}]")
        for k, label in enumerate(labels):
            f.block(label)
            yield k
            self.line(f"br label %{end}")
        f.block(end)

    @contextlib.contextmanager
    def carry_loop(self, init, outs, length=None, body=None, first_carry=0):
        """for i in range(length) (forever when None, until `exit_unless`), yielding (i, cur, new): the
        pointers of the carry that iteration reads and of the buffers it writes. body: the sub-IR each
        iteration calls, whose inputs from first_carry on are the carry and whose first outputs its new
        value: a carry it can update in place (in_place.py) is copied into its output buffer once and stays
        there (cur and new the same). Each other carry alternates between its output buffer and a scratch
        one; the last value is copied to the output unless it is there."""
        f = self.f
        candidates = {k: first_carry + k for k in range(len(outs))}
        in_place = self._compiled(body, candidates)[2] if body is not None else {}
        spare = [None if k in in_place else self._at(self._reserve(o.nbytes)) for k, o in enumerate(outs)]
        slots = [self.alloca("ptr") for _ in outs]
        for s, x, o, p in zip(slots, init, outs, spare):
            x = x.ptr if isinstance(x, Buffer) else x
            if p is None:
                self._copy(o.ptr, x, o.nbytes)
            self.line(f"store ptr {x if p else o.ptr}, ptr {s}")
        iv = self.alloca("i64")
        self.line(f"store i64 0, ptr {iv}")
        head, done = f.label("head"), f.label("done")
        self.line(f"br label %{head}")
        f.block(head)
        i = f.emit(f"load i64, ptr {iv}")
        self.exits.append(done)
        if length is not None:
            self.exit_unless(f.emit(f"icmp slt i64 {i}, {length}"))
        cur = [f.emit(f"load ptr, ptr {s}") for s in slots]
        new = [f.emit(f"select i1 {f.emit(f'icmp eq ptr {c}, {o.ptr}')}, ptr {p}, ptr {o.ptr}") if p else c
               for c, o, p in zip(cur, outs, spare)]
        yield i, cur, new
        for s, n in zip(slots, new):
            self.line(f"store ptr {n}, ptr {s}")
        self.line(f"store i64 {f.emit(f'add nuw nsw i64 {i}, 1')}, ptr {iv}")
        self.line(f"br label %{head}")
        f.block(self.exits.pop())
        for s, o, p in zip(slots, outs, spare):
            if p:
                last = f.emit(f"load ptr, ptr {s}")
                with f.when(f.emit(f"icmp ne ptr {last}, {o.ptr}")):
                    self._copy(o.ptr, last, o.nbytes)

    def _copy(self, dst, src, nbytes):
        self.line(f"call void @llvm.memcpy.p0.p0.i64(ptr {dst}, ptr {src}, i64 {nbytes}, i1 false)")

    def exit_unless(self, cond):
        """Leave the innermost carry_loop unless the i1 cond holds."""
        go = self.f.label("go")
        self.line(f"br i1 {cond}, label %{go}, label %{self.exits[-1]}")
        self.f.block(go)

    def row(self, buf, i):
        """The pointer to buf[i] (a slice along axis 0)."""
        row_bytes = buf.nbytes // max(buf.aval.shape[0], 1)
        return self.f.emit(f"getelementptr i8, ptr {buf.ptr}, i64 {self.b.iop('mul', i, row_bytes)}")

    def value(self, closed, ins):
        """Run a sub-IR with one scalar output (a loop condition); returns the value."""
        (out,) = closed.ir.outvars
        tmp = Buffer("tmp", out.aval)
        tmp.ptr = self._at(self._reserve(tmp.nbytes))
        self.call(closed, ins, [tmp])
        return self.load(tmp, [])

