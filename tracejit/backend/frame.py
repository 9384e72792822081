"""The call frame: where every value of one IR lives while its compiled code runs.

In: a ClosedIR and its fusion groups. Out: a `Frame`, one `Buffer` per materialised value (the inputs, the
outputs, constants, intermediates) and the table of pointer-sized slots that every entry point of the
compiled code takes (`ptr %table`):

    0 .. n_in-1                    the inputs' data
    n_in .. n_in+n_out-1           the outputs' data (fresh arrays)
    arena_slot = n_in+n_out        the arena, ALIGN-aligned, which holds every intermediate
    dim_slots[d]                   symbolic code: each dimension's size (i64)
    Buffer.slot of intermediates   symbolic code: each intermediate's arena offset (i64)

Intermediates of code for fixed shapes get their arena offsets at compile time, from a first-fit plan over
the groups' liveness (`arena_plan`). Symbolic code's offsets depend on the sizes: `block_plan` is a plan
valid for every size, which the fast entry evaluates from the sizes it reads from the arrays and the
Python driver from the sizes it is called with (`arena_layout`). Kernels with scratch memory (control flow,
convolution) take it after the planned arena (`extend_arena`), and a reduction split over the threads a block for its
partial results (`partials_buffer`). The generated code reads a buffer's address with `pointer`, the
Python driver fills the table with `fill_table`.
"""
import math

import numpy as np

from ..core.avals import Dim
from ..core.ir import Literal
from . import libcalls, runtime

ALIGN = 64
STACK_ARENA = 128 << 10   # arena bytes up to which the fast entry takes its arena from the native stack


class Buffer:
    """A materialised value: kind 'in' | 'out' | 'tmp' | 'const', its table slot or arena offset; or 'row', one
    row of a row loop's value on its kernel's stack (loops.py)."""

    def __init__(self, kind, aval, slot=None, value=None):
        self.kind, self.aval, self.slot, self.value = kind, aval, slot, value
        self.offset = None
        self.ptr = None           # its SSA name inside the function being emitted

    @property
    def nbytes(self):
        return self.aval.size * self.aval.dtype.itemsize


def aligned(nbytes):
    """nbytes rounded up to ALIGN, at least one byte."""
    return -(-max(nbytes, 1) // ALIGN) * ALIGN


class Frame:
    """The buffers and table slots of one IR's code. `prefix` names its functions ('' at the top level,
    c1_, c1_c2_, ... for sub-IRs); `copies` are the outputs that are inputs, constants, literals or
    repeated values ({output index: var or Literal}), which the caller copies; `aliases` ({output index:
    input index}, in_place.py) are outputs written over their input, in its buffer."""

    def __init__(self, closed, groups, prefix="", aliases=None):
        ir = closed.ir
        self.groups, self.prefix, self.n_subs = groups, prefix, 0
        self.dims = list(dict.fromkeys(d for v in ir.invars for d in v.aval.shape if isinstance(d, Dim)))
        self.symbolic = bool(self.dims)
        if self.symbolic:
            self._check_symbolic()
        self.buffers = {}                  # id(var) -> Buffer
        self.inputs = [Buffer("in", v.aval, slot=i) for i, v in enumerate(ir.invars)]
        for v, b in zip(ir.invars, self.inputs):
            self.buffers.setdefault(id(v), b)
        for v, c in zip(ir.constvars, closed.consts):
            arr = np.require(np.asarray(c, dtype=v.aval.dtype), requirements="CA")
            self.buffers[id(v)] = Buffer("const", v.aval, value=arr)
        n_in = len(ir.invars)
        self.outputs, self.copies = [], {}
        for j, v in enumerate(ir.outvars):
            self.outputs.append(Buffer("out", v.aval, slot=n_in + j))
            if aliases and j in aliases:
                self.buffers[id(v)] = self.inputs[aliases[j]]
            elif isinstance(v, Literal) or id(v) in self.buffers:
                self.copies[j] = v
            else:
                self.buffers[id(v)] = self.outputs[j]
        self.arena_slot = n_in + len(ir.outvars)
        self.dim_slots = {d: self.arena_slot + 1 + k for k, d in enumerate(self.dims)}
        self.tmps = []
        # equations calling the vector math library (kernels.py bounds their loops' code by this)
        self.library_calls = sum(e.prim.name in libcalls.LIBRARY for g in groups for e in g.eqns)
        self.partials = []                 # symbolic: per split reduction, its chunks' partial results
        for g in groups:
            views = {k: y for p in [g, *(g.phases or ())] for k, y in p.views.items()}   # (a row loop's phases')
            for v in g.stores:
                if id(v) in views:           # an output computed from v in its place (fusion._views)
                    out = self.buffers[id(views[id(v)])]
                    same = out.aval.shape == v.aval.shape and out.aval.dtype == v.aval.dtype
                    self.buffers[id(v)] = out if same else Buffer("out", v.aval, slot=out.slot)
                elif id(v) not in self.buffers:
                    self.buffers[id(v)] = Buffer("tmp", v.aval)
                    self.tmps.append(self.buffers[id(v)])
        if self.symbolic:     # arena offsets depend on the sizes: the caller plans them per call (table slots)
            for j, b in enumerate(self.tmps):
                b.slot = self.arena_slot + 1 + len(self.dims) + j
            self.arena_bytes = None
        else:
            offsets, self.arena_bytes = self.arena_plan()
            for b, offset in offsets.items():
                b.offset = offset

    def _check_symbolic(self):
        """Symbolic dimensions are compiled for plain loop nests and kernels; the rest needs sizes."""
        what = ("a control-flow body" if self.prefix else
                next((f"{g.root.prim.name} (no compiled form for symbolic shapes)" for g in self.groups
                      if g.rule is None or getattr(g.rule, "scratch", False)), None))
        if what is not None:
            self.dims[0].need(what)

    @property
    def table_size(self):
        return self.arena_slot + 1 + len(self.dims) + len(self.tmps) + len(self.partials)

    @property
    def has_arena(self):
        return bool(self.tmps or self.partials) if self.symbolic else self.arena_bytes > 0

    @property
    def fast_takes_arena(self):
        """Whether the fast entry takes an arena array from the caller: code for fixed shapes whose arena is
        too large for the stack, and symbolic code with an arena (used at sizes where it is too large)."""
        return self.has_arena and (self.symbolic or self.arena_bytes > STACK_ARENA)

    def sub_prefix(self):
        """The prefix of the next sub-IR's functions."""
        self.n_subs += 1
        return f"{self.prefix}c{self.n_subs}_"

    # ------------------------------------------------------------------------------ the arena plans
    def arena_plan(self):
        """First fit over the groups' liveness: ({tmp Buffer: offset}, arena bytes)."""
        last_use, offsets, extent = {}, {}, {}
        for k, g in enumerate(self.groups):
            for x in g.reads:
                last_use[id(x)] = k
        free, size = [], 0                 # free: sorted (offset, size)
        taken = set()                      # buffers whose memory a value stored over them took
        for k, g in enumerate(self.groups):
            for v in g.stores:
                b = self.buffers[id(v)]
                if b.kind != "tmp" or b in offsets:
                    continue
                over = g.overwrites.get(id(v))     # a row loop's value stored over one it reads (fusion.RowLoop)
                x = self.buffers.get(id(over)) if over is not None else None
                if x is not None and x.kind == "tmp" and x in offsets and x not in taken and last_use[id(over)] == k:
                    offsets[b], extent[b] = offsets[x], extent[x]
                    taken.add(x)
                    continue
                need = aligned(b.nbytes)
                for i, (off, n) in enumerate(free):
                    if n >= need:
                        offsets[b] = off
                        free[i:i + 1] = [(off + need, n - need)] if n > need else []
                        break
                else:
                    offsets[b], size = size, size + need
                extent[b] = need
            for x in g.reads:
                b = self.buffers.get(id(x))
                if b is not None and b.kind == "tmp" and last_use.get(id(x)) == k and b not in taken:
                    free.append((offsets[b], extent[b]))
                    free.sort()
                    merged = []
                    for off, n in free:
                        if merged and merged[-1][0] + merged[-1][1] == off:
                            merged[-1] = (merged[-1][0], merged[-1][1] + n)
                        else:
                            merged.append((off, n))
                    free = merged
        return offsets, size

    def block_plan(self):
        """The arena plan of symbolic code, valid for every size: a buffer reuses a freed block only when
        its size has the same expression (the same constant factor times the same dims), so offsets are
        sums of block sizes. Returns ([(bytes per unit, dims)] per block, {tmp Buffer: block index})."""
        last_use = {id(x): k for k, g in enumerate(self.groups) for x in g.reads}
        blocks, block_of, free = [], {}, {}
        for k, g in enumerate(self.groups):
            for v in g.stores:
                b = self.buffers[id(v)]
                if b.kind == "tmp" and b not in block_of:
                    key = _size_expression(b.aval)
                    block_of[b] = free[key].pop() if free.get(key) else len(blocks)
                    if block_of[b] == len(blocks):
                        blocks.append(key)
            for x in g.reads:
                b = self.buffers.get(id(x))
                if b is not None and b.kind == "tmp" and last_use[id(x)] == k:
                    free.setdefault(blocks[block_of[b]], []).append(block_of[b])
        for p in self.partials:
            block_of[p] = len(blocks)
            blocks.append((runtime.NUM_THREADS * ALIGN, ()))
        return blocks, block_of

    def arena_layout(self, block_plan, sizes):
        """({tmp Buffer: offset}, arena bytes) of symbolic code at {Dim: size}, from its block_plan()."""
        blocks, block_of = block_plan
        starts, total = [], 0
        for factor, dims in blocks:
            starts.append(total)
            total += aligned(factor * math.prod(sizes[d] for d in dims))
        return {b: starts[k] for b, k in block_of.items()}, total

    def extend_arena(self, nbytes):
        """Reserve nbytes after the arena of code for fixed shapes (a scratch kernel's memory)."""
        self.arena_bytes += nbytes

    def partials_buffer(self, aval, chunks):
        """(A block for the partial results of a reduction split into chunks, the bytes between two chunks'):
        one ALIGN-sized slot each for a scalar result; a whole result each, ALIGN-aligned, for an array (only
        in static frames: steps.PARTIALS_BYTES)."""
        partials = Buffer("tmp", aval)
        stride = aligned(partials.nbytes)
        if self.symbolic:
            assert not aval.shape, "a symbolic frame's partial results are scalars"
            partials.slot = self.table_size
            self.partials.append(partials)
        else:
            partials.offset = self.arena_bytes
            self.extend_arena(chunks * stride)
        return partials, stride

    # ------------------------------------------------------------------------ reading and filling
    def pointer(self, f, b):
        """Emit into f the address of buffer b, read from %table."""
        if b.kind == "const":
            return f.module.array(b.value)
        if b.kind == "tmp" and self.symbolic:
            base = f.emit(f"load ptr, ptr {f.emit(f'getelementptr ptr, ptr %table, i64 {self.arena_slot}')}")
            offset = f.emit(f"load i64, ptr {f.emit(f'getelementptr i64, ptr %table, i64 {b.slot}')}")
            return f.emit(f"getelementptr i8, ptr {base}, i64 {offset}")
        slot = self.arena_slot if b.kind == "tmp" else b.slot
        p = f.emit(f"load ptr, ptr {f.emit(f'getelementptr ptr, ptr %table, i64 {slot}')}")
        if b.kind == "tmp":
            p = f.emit(f"getelementptr i8, ptr {p}, i64 {b.offset}")
        return p

    def arguments(self, f, bufs, override=None):
        """`ptr a, ptr b, ...`: the addresses of bufs as a kernel's arguments (override: {Buffer: pointer})."""
        return ", ".join(f"ptr {(override or {}).get(b) or self.pointer(f, b)}" for b in bufs)

    def size_slots(self, sizes, offsets):
        """The int64 slots after the arena of symbolic code: the sizes, then the intermediates' offsets."""
        return np.array(list(sizes) + [offsets[b] for b in self.tmps + self.partials], np.int64)

    def fill_table(self, ins, outs, arena, size_slots=()):
        """The table for a call on these arrays (an output left to the caller: None)."""
        n = len(ins) + len(outs)
        table = np.empty(n + 1 + len(size_slots), np.uint64)
        table[:len(ins)] = [runtime.data_pointer(a) for a in ins]
        table[len(ins):n] = [runtime.data_pointer(a) if a is not None else 0 for a in outs]
        table[n] = -(-runtime.data_pointer(arena) // ALIGN) * ALIGN
        if len(size_slots):
            table[n + 1:] = size_slots.view(np.uint64)
        return table


def _size_expression(aval):
    """(constant factor, sorted dims): an array's bytes as a product that run-time sizes complete."""
    dims = tuple(sorted((d for d in aval.shape if isinstance(d, Dim)), key=str))
    return math.prod(d for d in aval.shape if not isinstance(d, Dim)) * aval.dtype.itemsize, dims
