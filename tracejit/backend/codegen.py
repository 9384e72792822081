"""From an IR to one LLVM module: fusion groups, buffers and their arena plan, loop nests.

Planning walks the equations backwards. An elementwise or index-map equation joins the group of its
consumers when they all sit in one fusible group (a loop nest) and it is not evaluated more often than it
has elements (a cheap index map may be, e.g. a broadcast); otherwise its value is materialised and it
roots a group of its own. A reduction roots a group whose loop nest runs over its operand, so its
producers are computed inside the reduction loop. Kernel rules (matmul, cumsum) and equations without a
lowering rule (run by their NumPy impl) read and write materialised buffers. Control rules (cond, while,
scan) are kernels that call their sub-IRs: each sub-IR is planned by a nested Program whose functions go
into the same module (`@c<k>_run(ptr table)`, no threads), its arena and the loop's spare carry buffers
taking a region of the enclosing arena; so compile time does not depend on trip counts.

Buffers are the inputs, the outputs (fresh arrays), constants and intermediates, which share one arena: offsets come from a first-fit liveness plan over the groups.

The module has one function per group (`ptr noalias` buffer arguments and the [lo, hi) range of the
outermost loop, so that a large loop can be split over threads), `step<j>(ptr table)` functions that run
consecutive serial groups with buffer addresses read from a table, `par<j>(table, chunk, n_chunks)` for
the groups split over threads, and, when no group is split and none runs in Python, `fast(PyObject*...)`
that checks the argument arrays itself, reads their data pointers from the array objects, takes its arena
from the native stack (up to STACK_ARENA bytes) and calls the steps.

Symbolic dimensions. Sizes are table slots after the arena; each intermediate's arena offset has a slot
too, from `block_plan` (a plan valid for every size, which the fast entry evaluates from the sizes it reads
from the arrays' dimensions). A group whose loop domain has a symbolic dimension and could be split over
the threads gets both a serial step and its `par` entry: a `("split", ...)` step, resolved per call from
the run-time domain size (`Split.parallel`); the fast entry returns 2 when a split should go parallel or
the arena does not fit on the stack, and the caller then runs the steps itself.

The module holds no address of this process: constants, numpy's type objects and the BLAS are named
external symbols (`Program.symbols`: name -> address) that loading resolves, so that its object code can
be cached on disk and loaded by another process.
"""
import contextlib
import math

import numpy as np

from ..core.avals import Dim
from ..core.ir import Literal, sub_irs
from . import mathlib, runtime
from .rules import Control, Elementwise, Emitter, IndexMap, Kernel, Reduce, const_text, llvm_type, memory_type

ALIGN = 64
PARALLEL_NS = 200_000     # estimated serial time above which a loop is split over the cores (waking the
                          # pool costs tens of us, and memory-bound loops gain little from a second core)
VECTOR_SPEEDUP = 8        # how much faster a vectorized loop runs than the scalar estimate (measured 7-25x)
STACK_ARENA = 128 << 10   # arena bytes up to which the fast entry takes its arena from the native stack
FUSED_COST = 800          # what the equations of one loop nest may cost (_cost), so that its body vectorizes
MAX_DUPLICATES = 4        # loop nests a cheap equation may be recomputed in
RECOMPUTE = 16            # times a cheap equation may be recomputed over a larger domain
VECTORIZE_LIMIT = 800     # body size (instructions, a math call counting 100) above which loops stay scalar
SCALAR_BELOW = 2048       # elements of a (static) loop domain below which loops stay scalar, unless
SCALAR_WORK = 20_000      # elements x body size reach this (vectorizing pays for its compile time)
MIN_VECTOR_LOOP = 16      # a static innermost loop shorter than this stays scalar
STEP_TEXT = 8000          # kernel text (characters) after which a run of serial kernels starts a new step
REDUCE_BLOCK = 1024       # elements a float32 sum adds up in float32 before adding them to its float64 total
SIZE_HINT = 1024          # what a symbolic dimension counts as where a heuristic needs a size


class Func:
    """One LLVM function body: SSA names, blocks, allocas hoisted to the entry block."""

    def __init__(self, module, header):
        self.module, self.header = module, header
        self.lines, self.allocas, self.n = [], [], 0
        self.latches = []         # (line index of a loop's back edge, its hints)
        self.count = 0            # instructions emitted; with math_calls, a cost estimate
        self.math_calls = 0
        self.dims = {}            # Dim -> its i64 SSA value, loaded from %table in the entry block

    def size(self, d):
        """An i64 operand for a size: the int itself, or a symbolic dimension's run-time value."""
        if not isinstance(d, Dim):
            return d
        if d not in self.dims:
            self.n += 1
            self.allocas.append(f"  %dp{self.n} = getelementptr i64, ptr %table, i64 {self.module.dim_slot[d]}")
            self.allocas.append(f"  %dim{self.n} = load i64, ptr %dp{self.n}")
            self.dims[d] = f"%dim{self.n}"
        return self.dims[d]

    def emit(self, rhs):
        self.n += 1
        self.count += 1
        name = f"%v{self.n}"
        self.lines.append(f"  {name} = {rhs}")
        return name

    def line(self, text):
        self.lines.append(f"  {text}")

    def label(self, stem):
        self.n += 1
        return f"{stem}{self.n}"

    def block(self, label):
        self.lines.append(f"{label}:")

    def alloca(self, ty):
        self.n += 1
        name = f"%a{self.n}"
        self.allocas.append(f"  {name} = alloca {ty}")
        return name

    @contextlib.contextmanager
    def loop(self, lo, hi, **hints):
        """for (i = lo; i < hi; i++): yields i. hints become llvm.loop metadata of the loop (e.g.
        interleave_count=4)."""
        lo, hi = self.size(lo), self.size(hi)
        iv = self.alloca("i64")
        head, body, done = self.label("head"), self.label("body"), self.label("done")
        self.line(f"store i64 {lo}, ptr {iv}")
        self.line(f"br label %{head}")
        self.block(head)
        i = self.emit(f"load i64, ptr {iv}")
        self.line(f"br i1 {self.emit(f'icmp slt i64 {i}, {hi}')}, label %{body}, label %{done}")
        self.block(body)
        yield i
        self.line(f"store i64 {self.emit(f'add nuw nsw i64 {i}, 1')}, ptr {iv}")
        self.latches.append((len(self.lines), hints))
        self.line(f"br label %{head}")
        self.block(done)

    @contextlib.contextmanager
    def loop_nest(self, shape):
        """Loops over every index of shape (row-major); yields the index list."""
        with contextlib.ExitStack() as stack:
            yield [stack.enter_context(self.loop(0, d)) for d in shape]

    def text(self):
        return "\n".join([f"{self.header} {{", "entry:", *self.allocas, *self.lines, "}"])


class Buffer:
    """A materialised value: kind 'in' | 'out' | 'tmp' | 'const', its table slot or arena offset."""

    def __init__(self, kind, aval, slot=None, value=None):
        self.kind, self.aval, self.slot, self.value = kind, aval, slot, value
        self.offset = None
        self.ptr = None           # its SSA name inside the function being emitted

    @property
    def nbytes(self):
        return self.aval.size * self.aval.dtype.itemsize


class Group:
    """Equations computed by one kernel. `root` is the last of them; `stores` the values it writes."""

    def __init__(self, index, eqn):
        self.index, self.root = index, eqn
        rule = eqn.prim.lower
        if isinstance(rule, Control) and not all(map(lowerable, sub_irs(eqn))):
            rule = None
        self.rule = rule
        self.fusible = isinstance(rule, (Elementwise, IndexMap, Reduce))
        self.stores = list(eqn.outvars)
        domain = eqn.inputs[0].aval if isinstance(rule, Reduce) else eqn.outvars[0].aval
        self.domain = domain.shape if self.fusible else None
        axes = eqn.params["axes"] if isinstance(rule, Reduce) else ()
        # A reduction that keeps the last axis (a column sum) loops in memory order and accumulates in its
        # output, so that the inner loop is contiguous and vectorizes; others keep the reduced axes inner.
        self.in_place = bool(axes) and rule.combine is not None and len(self.domain) - 1 not in axes
        self.loop_order = (list(range(len(self.domain))) if self.in_place else
                           [a for a in range(len(self.domain)) if a not in axes] + list(axes)
                           if self.fusible else [])
        self.eqns, self.reads = [eqn], None    # members (in program order once planned); buffers read
        self.cost = 2                           # of the members (_cost), the root counted as a cheap one


def lowerable(ir):
    """Whether every equation of ir (and of its sub-IRs) has a lowering rule."""
    return all(e.prim.lower is not None and all(map(lowerable, sub_irs(e))) for e in ir.eqns)


def _domain_size(shape):
    """Elements of a loop domain, a symbolic dimension counting SIZE_HINT (a heuristic's estimate)."""
    return math.prod(SIZE_HINT if isinstance(d, Dim) else d for d in shape) if shape is not None else 0


def _size_expression(aval):
    """(constant factor, sorted dims): an array's bytes as a product that run-time sizes complete."""
    dims = tuple(sorted((d for d in aval.shape if isinstance(d, Dim)), key=str))
    return math.prod(d for d in aval.shape if not isinstance(d, Dim)) * aval.dtype.itemsize, dims


def block_bytes(blocks, sizes):
    """(offset of each block, arena bytes) for {Dim: size}: blocks of at least one byte, ALIGN-aligned."""
    offsets, total = [], 0
    for factor, dims in blocks:
        offsets.append(total)
        total += -(-max(factor * math.prod(sizes[d] for d in dims), 1) // ALIGN) * ALIGN
    return offsets, total


class Split:
    """A group with a symbolic loop domain, run serially by `step` or over the threads by `par` (a list of
    steps), chosen per call: parallel when the domain's symbolic sizes multiply to more than `limit`
    (estimated serial time above PARALLEL_NS) and the outermost loop has more than one iteration."""

    def __init__(self, step, par, dims, limit, outer):
        self.step, self.par, self.dims, self.limit, self.outer = step, par, dims, limit, outer

    def parallel(self, sizes):
        return math.prod(sizes[d] for d in self.dims) > self.limit and sizes.get(self.outer, self.outer) > 1


def _fits(eqn, g, is_output):
    """Whether the elementwise or index-map eqn can be computed inside the loop nest of group g."""
    v, rule = eqn.outvars[0], eqn.prim.lower
    size, domain = _domain_size(v.aval.shape), _domain_size(g.domain)
    return (g.fusible and g.cost + _cost(eqn) <= FUSED_COST and (not is_output or v.aval.shape == g.domain)
            and (size >= domain or isinstance(rule, IndexMap) or rule.cheap and size * RECOMPUTE >= domain))


def _cost(eqn):
    """A loop body's instructions for the equation, roughly (a math call expands to ~50)."""
    return 2 if eqn.prim.lower.cheap else 50


def plan_groups(ir, fuse=True):
    """Groups in execution order, dead equations dropped. fuse=False gives every equation its own.

    An elementwise or index-map equation joins the group of its consumers, so that its value is computed
    where it is used and never stored: the one consumer group; or, when it is cheap (no math call, no
    division) and not an output, each of up to MAX_DUPLICATES consumer groups, recomputed in each. Index
    maps, and cheap equations up to RECOMPUTE times, may also be recomputed over a larger domain (a
    broadcast's). Otherwise, when the first of several consumer groups loops over exactly its shape, it joins
    that one and is stored from there for the others (fewer kernels to compile, one pass less over memory)."""
    outputs = {id(v) for v in ir.outvars if not isinstance(v, Literal)}
    consumers = {}
    for eqn in ir.eqns:
        for x in eqn.inputs:
            if not isinstance(x, Literal):
                consumers.setdefault(id(x), []).append(eqn)
    groups_of, groups = {}, []
    order = {id(e): i for i, e in enumerate(ir.eqns)}
    for eqn in reversed(ir.eqns):
        users = list(dict.fromkeys(g for v in eqn.outvars for c in consumers.get(id(v), ())
                                   for g in groups_of.get(id(c), ())))
        live = users or any(id(v) in outputs for v in eqn.outvars) or eqn.prim.effectful
        if not live:
            continue
        rule = eqn.prim.lower
        if fuse and isinstance(rule, (Elementwise, IndexMap)) and not eqn.prim.multiple_results:
            v = eqn.outvars[0]
            first = min(users, key=lambda g: order[id(g.root)], default=None)
            fits = [_fits(eqn, g, id(v) in outputs) for g in users]
            if len(users) == 1 and fits[0] or (
                    1 < len(users) <= MAX_DUPLICATES and rule.cheap and id(v) not in outputs and all(fits)):
                groups_of[id(eqn)] = users
                for g in users:
                    g.eqns.append(eqn)
                    g.cost += _cost(eqn)
                if id(v) in outputs:
                    first.stores.append(v)
                continue
            if (len(users) > 1 and first.fusible and first.domain == v.aval.shape
                    and first.cost + _cost(eqn) <= FUSED_COST):
                groups_of[id(eqn)] = [first]
                first.eqns.append(eqn)
                first.cost += _cost(eqn)
                first.stores.append(v)
                continue
        g = Group(len(groups), eqn)
        groups.append(g)
        groups_of[id(eqn)] = [g]
    groups.sort(key=lambda g: order[id(g.root)])
    for g in groups:
        g.eqns.reverse()
    return groups


class Program:
    """The plan and the LLVM module text of one IR."""

    def __init__(self, closed, fuse=True, parent=None):
        ir = self.ir = closed.ir
        self.fuse, self.prefix, self.n_subs = fuse, "", 0
        if parent is not None:       # a sub-IR of a Control rule: its functions go into the parent's module
            parent.n_subs += 1
            self.prefix = f"{parent.prefix}c{parent.n_subs}_"
            self.funcs, self.math, self.metadata = parent.funcs, parent.math, parent.metadata
            self.literal_arrays, self.symbols, self._const_names = (parent.literal_arrays, parent.symbols,
                                                                    parent._const_names)
        self.groups = plan_groups(ir, fuse)
        self.dims = list(dict.fromkeys(d for v in ir.invars for d in v.aval.shape if isinstance(d, Dim)))
        self.symbolic = bool(self.dims)
        if self.symbolic:
            self._check_symbolic(parent)
        self.buffers = {}                  # id(var) -> Buffer
        self.inputs = [Buffer("in", v.aval, slot=i) for i, v in enumerate(ir.invars)]
        for v, b in zip(ir.invars, self.inputs):
            self.buffers.setdefault(id(v), b)
        for v, c in zip(ir.constvars, closed.consts):
            arr = np.require(np.asarray(c, dtype=v.aval.dtype), requirements="CA")
            self.buffers[id(v)] = Buffer("const", v.aval, value=arr)
        n_in = len(ir.invars)
        self.outputs = []                  # per output: ("buf", Buffer) | ("copy", var/Literal)
        for j, v in enumerate(ir.outvars):
            produced = not isinstance(v, Literal) and id(v) not in self.buffers
            if produced:
                b = Buffer("out", v.aval, slot=n_in + j)
                self.buffers[id(v)] = b
                self.outputs.append(("buf", b))
            else:
                self.outputs.append(("copy", v))
        self.arena_slot = n_in + len(ir.outvars)
        self.dim_slot = {d: self.arena_slot + 1 + k for k, d in enumerate(self.dims)}
        self.tmps = []
        self.partials = []                 # symbolic: per split reduction, its chunks' partial results
        for g in self.groups:
            for v in g.stores:
                if id(v) not in self.buffers:
                    self.buffers[id(v)] = Buffer("tmp", v.aval)
                    self.tmps.append(self.buffers[id(v)])
        if self.symbolic:     # arena offsets depend on the sizes: the caller plans them per call (table slots)
            for j, b in enumerate(self.tmps):
                b.slot = self.arena_slot + 1 + len(self.dims) + j
            self.arena_bytes = None
        else:
            offsets, self.arena_bytes = self.arena_plan(lambda b: b.nbytes)
            for b, offset in offsets.items():
                b.offset = offset
        if parent is None:
            self.math, self.funcs = set(), []

    # ------------------------------------------------------------------------------------------ arena
    def reads(self, g):
        """Buffers a group reads: inputs of its members that other groups (or the caller) provide."""
        if g.reads is None:
            produced = {id(v) for e in g.eqns for v in e.outvars}
            seen, g.reads = set(), []
            for e in g.eqns:
                for x in e.inputs:
                    if not isinstance(x, Literal) and id(x) not in seen and id(x) not in produced:
                        seen.add(id(x))
                        g.reads.append(x)
        return g.reads

    def _check_symbolic(self, parent):
        """Symbolic dimensions are compiled for plain loop nests and kernels; the rest needs sizes."""
        what = ("a control-flow body" if parent is not None else
                next((f"{g.root.prim.name} (no compiled form for symbolic shapes)" for g in self.groups
                      if g.rule is None or isinstance(g.rule, Control)), None))
        if what is not None:
            self.dims[0].need(what)

    @property
    def has_arena(self):
        return bool(self.tmps or self.partials) if self.symbolic else self.arena_bytes > 0

    @property
    def fast_takes_arena(self):
        """Whether the fast entry takes an arena array from the caller: code for fixed shapes whose arena is
        too large for the stack, and symbolic code with an arena (used at sizes where it is too large)."""
        return self.has_arena and (self.symbolic or self.arena_bytes > STACK_ARENA)

    def block_plan(self):
        """The arena plan of symbolic code, valid for every size: a buffer reuses a freed block only when
        its size has the same expression (the same constant factor times the same dims), so offsets are
        sums of block sizes. Returns ([(bytes per unit, dims)] per block, {tmp Buffer: block index})."""
        last_use = {id(x): k for k, g in enumerate(self.groups) for x in self.reads(g)}
        blocks, block_of, free = [], {}, {}
        for k, g in enumerate(self.groups):
            for v in g.stores:
                b = self.buffers[id(v)]
                if b.kind == "tmp" and b not in block_of:
                    key = _size_expression(b.aval)
                    block_of[b] = free[key].pop() if free.get(key) else len(blocks)
                    if block_of[b] == len(blocks):
                        blocks.append(key)
            for x in self.reads(g):
                b = self.buffers.get(id(x))
                if b is not None and b.kind == "tmp" and last_use[id(x)] == k:
                    free.setdefault(blocks[block_of[b]], []).append(block_of[b])
        for p in self.partials:
            block_of[p] = len(blocks)
            blocks.append((runtime.NUM_THREADS * ALIGN, ()))
        return blocks, block_of

    def arena_plan(self, nbytes):
        """First fit over the groups' liveness: ({tmp Buffer: offset}, arena bytes); nbytes(buffer)."""
        last_use, offsets, extent = {}, {}, {}
        for k, g in enumerate(self.groups):
            for x in self.reads(g):
                last_use[id(x)] = k
        free, size = [], 0                 # free: sorted (offset, size)
        for k, g in enumerate(self.groups):
            for v in g.stores:
                b = self.buffers[id(v)]
                if b.kind != "tmp" or b in offsets:
                    continue
                need = -(-max(nbytes(b), 1) // ALIGN) * ALIGN
                for i, (off, n) in enumerate(free):
                    if n >= need:
                        offsets[b] = off
                        free[i:i + 1] = [(off + need, n - need)] if n > need else []
                        break
                else:
                    offsets[b], size = size, size + need
                extent[b] = need
            for x in self.reads(g):
                b = self.buffers.get(id(x))
                if b is not None and b.kind == "tmp" and last_use.get(id(x)) == k:
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

    # -------------------------------------------------------------------------------------- codegen
    def kernel(self, g):
        """Emit the function of group g; returns (name, buffers it takes, per-element cost)."""
        eqns = g.eqns
        bufs = []
        for x in self.reads(g) + [v for v in g.stores]:
            b = self.buffers[id(x)]
            if b not in bufs:
                bufs.append(b)
        name = f"@{self.prefix}g{g.index}"
        if isinstance(g.rule, Control):
            scratch = Buffer("tmp", None)
            scratch.offset = self.arena_bytes
            bufs.append(scratch)
        params = ", ".join(f"ptr noalias %p{i}" for i in range(len(bufs)))
        table = ", ptr noalias readonly %table" if self.symbolic else ""
        f = Func(self, f"define internal void {name}({params}, i64 %lo, i64 %hi{table}) nounwind alwaysinline")
        for i, b in enumerate(bufs):
            b.ptr = f"%p{i}"
        if isinstance(g.rule, Kernel):
            k = ControlBuilder(self, f, scratch) if isinstance(g.rule, Control) else KernelBuilder(f)
            b = k.b
            b.in_avals = [x.aval for x in g.root.inputs]
            ins = [self._as_buffer(x) for x in g.root.inputs]
            g.rule.fn(k, [self.buffers[id(v)] for v in g.root.outvars], ins, **g.root.params)
            if isinstance(g.rule, Control):
                self.arena_bytes += k.used
        else:
            LoopBuilder(self, f, g, eqns).emit()
        f.line("ret void")
        body = f.count + 100 * f.math_calls
        inner = g.domain[g.loop_order[-1]] if g.fusible and g.domain else 0
        small = g.fusible and (
            (isinstance(inner, int) and inner < MIN_VECTOR_LOOP)   # the vectorized loop is the innermost
            or (not any(isinstance(d, Dim) for d in g.domain)
                and _domain_size(g.domain) < SCALAR_BELOW and _domain_size(g.domain) * body < SCALAR_WORK))
        scalar = small or body > VECTORIZE_LIMIT
        for _, hints in f.latches:
            if scalar:
                hints.update(vectorize_enable=False, interleave_count=1)
            if small or f.math_calls:  # unrolling or interleaving there only multiplies the code (LLVM time)
                hints.pop("interleave_count", None)
                hints.pop("unroll_full", None)
        self._loop_metadata(f)
        self.funcs.append(f.text())
        ns_per_element = 0.5 + 0.05 * f.count + 2.0 * f.math_calls
        return name, bufs, ns_per_element if scalar or not g.fusible else ns_per_element / VECTOR_SPEEDUP

    def _loop_metadata(self, f):
        """Attach each loop's hints as llvm.loop metadata. The pipeline neither unrolls nor interleaves
        unless a loop asks (reductions do, to hide the accumulator's latency): both multiply the code that
        the later passes and instruction selection chew on, for little gain on memory-bound loops. Huge
        bodies (above VECTORIZE_LIMIT) keep the vectorizer off: it takes time quadratic in the body size
        (0.25 s at 1,000 ops); fusion keeps loop nests below it (FUSED_COST)."""
        for k, hints in f.latches:
            if hints:
                node = f"!{len(self.metadata)}"
                ops = []
                for key, value in sorted(hints.items()):
                    ops.append(f"!{len(self.metadata) + 1}")
                    operand = ("" if value is None else f", i1 {str(value).lower()}" if isinstance(value, bool)
                               else f", i32 {value}")
                    self.metadata.append(f'{ops[-1]} = !{{!"llvm.loop.{key.replace("_", ".")}"{operand}}}')
                self.metadata.append(f"{node} = distinct !{{{node}, {', '.join(ops)}}}")
                f.lines[k] += f", !llvm.loop {node}"

    def _as_buffer(self, x):
        if isinstance(x, Literal):
            arr = np.asarray(x.value, dtype=x.aval.dtype)
            b = Buffer("const", x.aval, value=arr)
            b.ptr = self.symbol(arr.ctypes.data)
            self.literal_arrays.append(arr)
            return b
        return self.buffers[id(x)]

    def build(self):
        """LLVM module text; fills self.steps with ("step", name) | ("par", name, n) | ("py", eqn) |
        ("split", Split) whose step and par are such steps."""
        self.literal_arrays, self.steps, self.metadata = [], [], []
        self.symbols, self._const_names, self.n_entries = {}, {}, 0
        n_threads = runtime.NUM_THREADS
        serial, serial_text = [], 0

        def flush():
            nonlocal serial_text
            serial_text = 0
            if serial:
                name = self._entry_name("step")
                f = Func(self, f"define void @{name}(ptr %table) nounwind noinline")
                table = ", ptr %table" if self.symbolic else ""
                for kname, bufs in serial:
                    f.line(f"call void {kname}({self._args(f, bufs)}, i64 0, i64 {f.size(self._outer(kname))}{table})")
                f.line("ret void")
                self.funcs.append(f.text())
                self.steps.append(("step", name))
                serial.clear()

        self.outer = {}
        for g in self.groups:
            if g.rule is None:
                flush()
                self.steps.append(("py", g.root))
                continue
            kname, bufs, cost = self.kernel(g)
            outer = self.outer[kname] = g.domain[g.loop_order[0]] if g.fusible and g.domain else 1
            split_reduction = isinstance(g.rule, Reduce) and g.loop_order[0] in g.root.params["axes"]
            splittable = (g.fusible and n_threads > 1 and outer != 1
                          and (not split_reduction or (g.rule.combine is not None and not g.in_place)))
            dims = [d for d in g.domain if isinstance(d, Dim)] if splittable else []
            if dims:           # the run-time size decides, per call
                flush()
                serial.append((kname, bufs))
                flush()
                step = self.steps.pop()
                fixed = math.prod(d for d in g.domain if not isinstance(d, Dim))
                limit = int(PARALLEL_NS // max(fixed * cost, 1e-9))
                par = self._parallel(g, kname, bufs, n_threads, split_reduction)
                self.steps.append(("split", Split(step, par, tuple(dims), limit, outer)))
            elif splittable and outer > 1 and _domain_size(g.domain) * cost > PARALLEL_NS:
                flush()
                self.steps.extend(self._parallel(g, kname, bufs, min(n_threads, outer), split_reduction))
            else:
                serial.append((kname, bufs))
                serial_text += len(self.funcs[-1])
                if serial_text > STEP_TEXT:    # parts for llvm.compile_objects to share among threads
                    flush()
        flush()
        self.fast = None
        if all(s[0] in ("step", "split") for s in self.steps) and all(k == "buf" for k, _ in self.outputs):
            self.fast = self._fast_entry()
        math_defs = mathlib.math_module_ir(self.math)
        from .llvm import module_header
        externals = "\n".join(f"@{name} = external global i8" for name in self.symbols)
        return "\n\n".join([module_header(), externals, *self.funcs, math_defs, "\n".join(self.metadata)])

    def symbol(self, address, name=None):
        """`@name`: an external symbol that loading resolves to address (default name: tj_const<k>, k in
        order of first use, so that the module text is the same in every process)."""
        name = name or self._const_names.setdefault(address, f"tj_const{len(self._const_names)}")
        self.symbols[name] = address
        return f"@{name}"

    def build_nested(self):
        """The function `@<prefix>run(ptr table)` (table: inputs, outputs, arena) running every group in
        order on this thread; outputs that are inputs, literals or repeated values are copied."""
        f = Func(self, f"define internal void @{self.prefix}run(ptr %table) nounwind")
        for g in self.groups:
            kname, bufs, _ = self.kernel(g)
            extent = g.domain[g.loop_order[0]] if g.fusible and g.domain else 1
            f.line(f"call void {kname}({self._args(f, bufs)}, i64 0, i64 {extent})")
        for j, (kind, v) in enumerate(self.outputs):
            if kind == "copy":
                src = self._as_buffer(v)
                dst = Buffer("out", v.aval, slot=len(self.inputs) + j)
                f.line(f"call void @llvm.memcpy.p0.p0.i64(ptr {self._pointer(f, dst)}, ptr "
                       f"{src.ptr if isinstance(v, Literal) else self._pointer(f, src)}, i64 {dst.nbytes}, i1 false)")
        f.line("ret void")
        self.funcs.append(f.text())
        return f"@{self.prefix}run"

    def _parallel(self, g, kname, bufs, chunks, split_reduction):
        """The steps running group g over the threads: par<j>(table, c, n) runs chunk c of n of the
        outermost loop. A reduction split along a reduced axis writes one partial result per chunk into
        the arena, and a serial step combines them."""
        name = self._entry_name("par")
        f = Func(self, f"define void @{name}(ptr %table, i64 %c, i64 %n) nounwind")
        d = f.size(self.outer[kname])
        lo = f.emit(f"sdiv i64 {f.emit(f'mul i64 %c, {d}')}, %n")
        c1 = f.emit("add i64 %c, 1")
        hi = f.emit(f"sdiv i64 {f.emit(f'mul i64 {c1}, {d}')}, %n")
        override = {}
        if split_reduction:
            out = self.buffers[id(g.root.outvars[0])]
            partials = Buffer("tmp", out.aval)
            if self.symbolic:
                partials.slot = self.arena_slot + 1 + len(self.dims) + len(self.tmps) + len(self.partials)
                self.partials.append(partials)
            else:
                partials.offset, self.arena_bytes = self.arena_bytes, self.arena_bytes + chunks * ALIGN
            base = self._pointer(f, partials)
            override[out] = f.emit(f"getelementptr i8, ptr {base}, i64 {f.emit(f'mul i64 %c, {ALIGN}')}")
        table = ", ptr %table" if self.symbolic else ""
        f.line(f"call void {kname}({self._args(f, bufs, override)}, i64 {lo}, i64 {hi}{table})")
        f.line("ret void")
        self.funcs.append(f.text())
        steps = [("par", name, chunks)]
        if split_reduction:
            name = self._entry_name("step")
            f = Func(self, f"define void @{name}(ptr %table) nounwind")
            k = KernelBuilder(f)
            k.b.in_avals = [g.root.inputs[0].aval]
            base = self._pointer(f, partials)
            parts = []
            for c in range(chunks):
                partials.ptr = f.emit(f"getelementptr i8, ptr {base}, i64 {c * ALIGN}")
                parts.append(k.load(partials, []))
            accs = [parts[0]]
            for p in parts[1:]:
                accs = g.rule.combine(k.b, accs, [p], **g.root.params)
            out.ptr = self._pointer(f, out)
            k.store(out, [], accs[0])
            f.line("ret void")
            self.funcs.append(f.text())
            steps.append(("step", name))
        return steps

    def _entry_name(self, stem):
        """step0, par1, step2, ...: entry points numbered in the order they are made."""
        self.n_entries += 1
        return f"{stem}{self.n_entries - 1}"

    def _outer(self, kname):
        return self.outer[kname]

    def _args(self, f, bufs, override=None):
        return ", ".join(f"ptr {(override or {}).get(b) or self._pointer(f, b)}" for b in bufs)

    def _pointer(self, f, b, table="%table"):
        if b.kind == "const":
            return self.symbol(b.value.ctypes.data)
        if b.kind == "tmp" and self.symbolic:
            base = f.emit(f"load ptr, ptr {f.emit(f'getelementptr ptr, ptr {table}, i64 {self.arena_slot}')}")
            offset = f.emit(f"load i64, ptr {f.emit(f'getelementptr i64, ptr {table}, i64 {b.slot}')}")
            return f.emit(f"getelementptr i8, ptr {base}, i64 {offset}")
        slot = self.arena_slot if b.kind == "tmp" else b.slot
        p = f.emit(f"load ptr, ptr {f.emit(f'getelementptr ptr, ptr {table}, i64 {slot}')}")
        if b.kind == "tmp":
            p = f.emit(f"getelementptr i8, ptr {p}, i64 {b.offset}")
        return p

    def _fast_entry(self):
        """i32 fast(PyObject *in..., PyObject *out...[, PyObject *arena]) runs the steps: 1 when an input is
        not a C-contiguous aligned ndarray of the expected dtype object and shape, 2 when a split group
        should go parallel (the caller runs the steps), 3 when symbolic code's arena is larger than both
        the stack allows and the caller's arena (a 1-D uint8 array; the caller retries with a larger one);
        nothing is written then. Symbolic sizes are read from the inputs' dimensions, the arena plan
        evaluated."""
        if not runtime.ARRAY_LAYOUT_OK:
            return None
        off = runtime.ARRAY_OFFSETS
        n_in, n_out = len(self.inputs), len(self.outputs)
        names = [f"%o{i}" for i in range(n_in + n_out + self.fast_takes_arena)]
        f = Func(self, f"define i32 @fast({', '.join('ptr ' + n for n in names)}) nounwind "
                       f'"probe-stack"="inline-asm"')
        fail, busy, too_small = "fail", "busy", "too_small"

        def field(obj, offset, ty):
            return f.emit(f"load {ty}, ptr {f.emit(f'getelementptr i8, ptr {obj}, i64 {offset}')}")

        def check(cond, otherwise=fail):
            ok = f.label("ok")
            f.line(f"br i1 {cond}, label %{ok}, label %{otherwise}")
            f.block(ok)

        sizes = {}            # Dim -> its i64 value, from the first input axis that has it
        for i, b in enumerate(self.inputs):
            obj = names[i]
            check(f.emit(f"icmp eq ptr {field(obj, 8, 'ptr')}, {self.symbol(id(np.ndarray), 'tj_ndarray_type')}"))
            flags = field(obj, off.flags, "i32")
            want = runtime.NPY_C_CONTIGUOUS | runtime.NPY_ALIGNED
            check(f.emit(f"icmp eq i32 {f.emit(f'and i32 {flags}, {want}')}, {want}"))
            descr = self.symbol(id(b.aval.dtype), f"tj_dtype_{b.aval.dtype.name}")
            check(f.emit(f"icmp eq ptr {field(obj, off.descr, 'ptr')}, {descr}"))
            check(f.emit(f"icmp eq i32 {field(obj, off.nd, 'i32')}, {b.aval.ndim}"))
            if b.aval.ndim:
                dims = field(obj, off.dimensions, "ptr")
                for k, d in enumerate(b.aval.shape):
                    dk = f.emit(f"load i64, ptr {f.emit(f'getelementptr i64, ptr {dims}, i64 {k}')}")
                    if isinstance(d, Dim) and d not in sizes:
                        sizes[d] = dk
                    else:
                        check(f.emit(f"icmp eq i64 {dk}, {sizes.get(d, d)}"))

        def product(factor, dims):
            x = factor
            for d in dims:
                x = f.emit(f"mul i64 {x}, {sizes[d]}")
            return x

        for step in self.steps:
            if step[0] == "split":
                check(f.emit(f"icmp sle i64 {product(1, step[1].dims)}, {step[1].limit}"), busy)
        table = f.alloca(f"[{self.arena_slot + 1 + len(self.dims) + len(self.tmps) + len(self.partials)} x ptr]"
                         if self.symbolic else f"[{n_in + n_out + 1} x ptr]")

        def store(value, slot, ty="ptr"):
            f.line(f"store {ty} {value}, ptr {f.emit(f'getelementptr ptr, ptr {table}, i64 {slot}')}")

        def caller_arena():
            data = field(names[-1], off.data, "ptr")
            base = f.emit(f"add i64 {f.emit(f'ptrtoint ptr {data} to i64')}, {ALIGN - 1}")
            return f.emit(f"inttoptr i64 {f.emit(f'and i64 {base}, {-ALIGN}')} to ptr")

        for i, obj in enumerate(names[:n_in + n_out]):
            store(field(obj, off.data, "ptr"), i)
        if self.fast_takes_arena and not self.symbolic:
            store(caller_arena(), n_in + n_out)
        elif self.symbolic and self.has_arena:
            blocks, block_of = self.block_plan()
            offsets, total = [], 0
            for factor, dims in blocks:
                x = product(factor, dims)                          # at least 1 byte, rounded up to ALIGN
                at_least_1 = f.emit(f"select i1 {f.emit(f'icmp eq i64 {x}, 0')}, i64 1, i64 {x}")
                rounded = f.emit(f"and i64 {f.emit(f'add i64 {at_least_1}, {ALIGN - 1}')}, {-ALIGN}")
                offsets.append(total)
                total = f.emit(f"add i64 {total}, {rounded}")
            on_stack, on_heap, heap_ok, join = (f.label(s) for s in ("stack", "heap", "heap_ok", "arena"))
            f.line(f"br i1 {f.emit(f'icmp ule i64 {total}, {STACK_ARENA}')}, label %{on_stack}, label %{on_heap}")
            f.block(on_stack)
            stack = f.emit(f"alloca i8, i64 {total}, align {ALIGN}")
            f.line(f"br label %{join}")
            f.block(on_heap)
            given = f.emit(f"load i64, ptr {field(names[-1], off.dimensions, 'ptr')}")  # its bytes (1-D uint8)
            needed = f.emit(f"add i64 {total}, {ALIGN}")
            f.line(f"br i1 {f.emit(f'icmp uge i64 {given}, {needed}')}, label %{heap_ok}, label %{too_small}")
            f.block(heap_ok)
            heap = caller_arena()
            f.line(f"br label %{join}")
            f.block(join)
            store(f.emit(f"phi ptr [{stack}, %{on_stack}], [{heap}, %{heap_ok}]"), n_in + n_out)
            for b in self.tmps + self.partials:
                store(offsets[block_of[b]], b.slot, "i64")
        elif self.has_arena:
            store(f.alloca(f"[{self.arena_bytes} x i8], align {ALIGN}"), n_in + n_out)
        for d, slot in self.dim_slot.items():
            store(sizes[d], slot, "i64")
        for step in self.steps:
            f.line(f"call void @{step[1] if step[0] == 'step' else step[1].step[1]}(ptr {table})")
        f.line("ret i32 0")
        f.block(fail)
        f.line("ret i32 1")
        f.block(busy)
        f.line("ret i32 2")
        f.block(too_small)
        f.line("ret i32 3")
        self.funcs.append(f.text())
        return "fast"


class KernelBuilder:
    """What a Kernel rule writes with: the emitter `b`, loops, loads and stores on Buffers."""

    def __init__(self, func):
        self.f = func
        self.b = Emitter(func)
        self.loop, self.loop_nest, self.alloca, self.line = func.loop, func.loop_nest, func.alloca, func.line

    def address(self, buf, idx):
        flat, stride = 0, 1
        for i, d in reversed(list(zip(idx, buf.aval.shape))):
            flat = self.b.iop("add", flat, self.b.iop("mul", i, stride))
            stride = self.b.iop("mul", stride, d)
        if flat == 0:
            return buf.ptr
        return self.f.emit(f"getelementptr inbounds {memory_type(buf.aval.dtype)}, ptr {buf.ptr}, i64 {flat}")

    def load(self, buf, idx):
        dtype = buf.aval.dtype
        v = self.f.emit(f"load {memory_type(dtype)}, ptr {self.address(buf, idx)}, align {dtype.itemsize}")
        return self.f.emit(f"icmp ne i8 {v}, 0") if dtype == np.bool_ else v

    def store(self, buf, idx, value):
        dtype = buf.aval.dtype
        if dtype == np.bool_:
            value = self.f.emit(f"zext i1 {value} to i8")
        self.f.line(f"store {memory_type(dtype)} {value}, ptr {self.address(buf, idx)}, align {dtype.itemsize}")

    def load_var(self, var_ptr, ty):
        return self.f.emit(f"load {ty}, ptr {var_ptr}")

    def store_var(self, var_ptr, ty, value):
        self.f.line(f"store {ty} {value}, ptr {var_ptr}")


class ControlBuilder(KernelBuilder):
    """What a Control rule writes with: sub-IRs called as functions of the same module, a switch, and a
    loop over double-buffered carries. Its scratch memory (carry buffers, the sub-IRs' arenas) is a region
    of the arena after every planned buffer: `used` bytes from the `scratch` Buffer."""

    def __init__(self, program, func, scratch):
        super().__init__(func)
        self.program, self.scratch, self.used = program, scratch, 0
        self.subs, self.exits = {}, []

    def _reserve(self, nbytes):
        offset, self.used = self.used, self.used + -(-max(nbytes, 1) // ALIGN) * ALIGN
        return offset

    def _at(self, offset):
        return self.f.emit(f"getelementptr i8, ptr {self.scratch.ptr}, i64 {offset}")

    def call(self, closed, ins, outs):
        """Run the sub-IR `closed` reading ins and writing outs (Buffers or pointers)."""
        if id(closed) not in self.subs:
            sub = Program(closed, self.program.fuse, parent=self.program)
            self.subs[id(closed)] = sub.build_nested(), self._reserve(sub.arena_bytes)
        name, offset = self.subs[id(closed)]
        ptrs = [x.ptr if isinstance(x, Buffer) else x for x in [*ins, *outs]] + [self._at(offset)]
        table = self.alloca(f"[{len(ptrs)} x ptr]")
        for i, p in enumerate(ptrs):
            self.line(f"store ptr {p}, ptr {self.f.emit(f'getelementptr ptr, ptr {table}, i64 {i}')}")
        self.line(f"call void {name}(ptr {table})")

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
    def carry_loop(self, init, outs, length=None):
        """for i in range(length) (forever when None, until `exit_unless`), yielding (i, cur, new): the
        pointers of the carry that iteration reads and of the buffers it writes. Each carry alternates
        between its output buffer and a scratch one; the last value is copied to the output if needed."""
        f = self.f
        spare = [self._at(self._reserve(o.nbytes)) for o in outs]
        slots = [self.alloca("ptr") for _ in outs]
        for s, x in zip(slots, init):
            self.line(f"store ptr {x.ptr if isinstance(x, Buffer) else x}, ptr {s}")
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
        new = [f.emit(f"select i1 {f.emit(f'icmp eq ptr {c}, {o.ptr}')}, ptr {p}, ptr {o.ptr}")
               for c, o, p in zip(cur, outs, spare)]
        yield i, cur, new
        for s, n in zip(slots, new):
            self.line(f"store ptr {n}, ptr {s}")
        self.line(f"store i64 {f.emit(f'add nuw nsw i64 {i}, 1')}, ptr {iv}")
        self.line(f"br label %{head}")
        f.block(self.exits.pop())
        for s, o in zip(slots, outs):
            self.line(f"call void @llvm.memcpy.p0.p0.i64(ptr {o.ptr}, ptr {f.emit(f'load ptr, ptr {s}')}, "
                      f"i64 {o.nbytes}, i1 false)")

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


class LoopBuilder(KernelBuilder):
    """The loop nest of a fusible group: every member is computed at an index on demand (memoised),
    members that reach the root through identity indices first, in program order (no deep recursion)."""

    def __init__(self, program, func, group, eqns):
        super().__init__(func)
        self.program, self.g, self.eqns = program, group, eqns
        self.producer = {id(v): e for e in eqns for v in e.outvars}
        self.memo = {}

    def value(self, x, idx):
        if isinstance(x, Literal):
            return const_text(x.value, x.aval.dtype)
        key = (id(x), tuple(idx))
        if key in self.memo:
            return self.memo[key]
        e = self.producer.get(id(x))
        if e is None:
            v = self.load(self.program.buffers[id(x)], idx)
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

    def emit(self):
        g, f = self.g, self.f
        shape = g.domain
        axes = g.root.params["axes"] if isinstance(g.rule, Reduce) else ()
        kept = [a for a in g.loop_order if a not in axes]
        if g.in_place:
            return self._reduce_in_place(axes, kept)
        idx = [None] * len(shape)
        with contextlib.ExitStack() as outer:
            for n, a in enumerate(g.loop_order[:len(kept)]):
                idx[a] = outer.enter_context(f.loop("%lo" if n == 0 else 0, "%hi" if n == 0 else shape[a]))
            if isinstance(g.rule, Reduce):
                self._reduce(idx, axes, kept, first=not kept)
            else:
                self._prefetch(idx)
                for v in g.stores:
                    self.store(self.program.buffers[id(v)], idx, self.value(v, idx))

    def _reduce(self, idx, axes, kept, first):
        """Accumulate over the reduced axes (innermost last). An accumulator wider than the operand (a float32
        sum adds up in float64) takes the innermost loop a block at a time: the block accumulates in the
        operand's type, so the loop vectorizes at full width, and is then added to the wide accumulator."""
        g, f, b = self.g, self.f, self.b
        root, shape, params = g.root, g.domain, g.root.params
        in_aval = root.inputs[0].aval
        b.in_avals = [in_aval]
        inits = g.rule.init(b, **params)
        tys = [llvm_type(dtype) for _, dtype in inits]
        accs = [f.alloca(t) for t in tys]
        for a, t, (v, _) in zip(accs, tys, inits):
            self.store_var(a, t, v)
        blocked = g.rule.combine is not None and tys != [llvm_type(in_aval.dtype)]
        if blocked:
            narrow_ty = llvm_type(in_aval.dtype)
            narrow = f.alloca(narrow_ty)
            narrow_init = g.rule.result(b, [v for v, _ in inits], **params)

        def bounds(n):
            return ("%lo", "%hi") if first and n == 0 else (0, shape[axes[n]])

        with contextlib.ExitStack() as loops:
            for n, a in enumerate(axes[:-1]):
                idx[a] = loops.enter_context(f.loop(*bounds(n)))
            innermost = contextlib.nullcontext()      # a reduction over no axes updates once
            if axes:
                (lo, hi), size = bounds(len(axes) - 1), _domain_size((shape[axes[-1]],))
                # long: interleaved accumulators; short: in order
                hints = {"interleave_count": 4} if size >= 256 else {"unroll_full": None} if size <= 16 else {}
                if blocked:
                    lo, hi = loops.enter_context(self._blocks(lo, hi, shape[axes[-1]]))
                innermost = f.loop(lo, hi, **hints)
            if blocked:
                self.store_var(narrow, narrow_ty, narrow_init)
            with innermost as i:
                if axes:
                    idx[axes[-1]] = i
                self.memo.clear()
                self._prefetch(idx)
                x = self.value(root.inputs[0], idx)
                pos = 0
                for r in axes:
                    pos = b.iop("add", b.iop("mul", pos, shape[r]), idx[r])
                b.in_avals = [in_aval]
                if blocked:
                    new, = g.rule.combine(b, [self.load_var(narrow, narrow_ty)], [x], **params)
                    self.store_var(narrow, narrow_ty, new)
                else:
                    new = g.rule.update(b, [self.load_var(v, t) for v, t in zip(accs, tys)], x, pos, **params)
                    for v, t, value in zip(accs, tys, new):
                        self.store_var(v, t, value)
                for v in g.stores[1:]:
                    self.store(self.program.buffers[id(v)], idx, self.value(v, idx))
            if blocked:
                b.in_avals = [in_aval]
                new, = g.rule.update(b, [self.load_var(accs[0], tys[0])], self.load_var(narrow, narrow_ty), 0,
                                     **params)
                self.store_var(accs[0], tys[0], new)
        self.memo.clear()
        b.in_avals = [in_aval]
        result = g.rule.result(b, [self.load_var(a, t) for a, t in zip(accs, tys)], **params)
        self.store(self.program.buffers[id(root.outvars[0])], [idx[a] for a in kept], result)

    @contextlib.contextmanager
    def _blocks(self, lo, hi, size):
        """[lo, hi) in blocks of REDUCE_BLOCK: yields each block's bounds (one block when the axis is short)."""
        if lo == 0 and not isinstance(size, Dim) and size <= 2 * REDUCE_BLOCK:
            yield lo, hi
            return
        f = self.f
        lo, hi = f.size(lo), f.size(hi)
        length = f.emit(f"sub i64 {hi}, {lo}")
        count = f.emit(f"sdiv i64 {f.emit(f'add i64 {length}, {REDUCE_BLOCK - 1}')}, {REDUCE_BLOCK}")
        with f.loop(0, count) as k:
            start = f.emit(f"add i64 {lo}, {f.emit(f'mul i64 {k}, {REDUCE_BLOCK}')}")
            end = f.emit(f"add i64 {start}, {REDUCE_BLOCK}")
            yield start, f.emit(f"select i1 {f.emit(f'icmp slt i64 {end}, {hi}')}, i64 {end}, i64 {hi}")

    def _reduce_in_place(self, axes, kept):
        """out[kept] = init, then over the domain in memory order out[kept] = update(out[kept], x); the
        outermost loop runs [lo, hi), and when it is a kept axis the initialisation is restricted to it."""
        g, f, b = self.g, self.f, self.b
        root, shape = g.root, g.domain
        out = self.program.buffers[id(root.outvars[0])]
        b.in_avals = [root.inputs[0].aval]
        init = g.rule.result(b, [v for v, _ in g.rule.init(b, **root.params)], **root.params)
        with contextlib.ExitStack() as loops:
            kidx = [loops.enter_context(f.loop(*(("%lo", "%hi") if a == 0 else (0, shape[a])))) for a in kept]
            self.store(out, kidx, init)
        idx = [None] * len(shape)
        with contextlib.ExitStack() as loops:
            for a in range(len(shape)):
                idx[a] = loops.enter_context(f.loop(*(("%lo", "%hi") if a == 0 else (0, shape[a]))))
            self._prefetch(idx)
            x = self.value(root.inputs[0], idx)
            kidx = [idx[a] for a in kept]
            b.in_avals = [root.inputs[0].aval]
            new, = g.rule.combine(b, [self.load(out, kidx)], [x], **root.params)
            self.store(out, kidx, new)
            for v in g.stores[1:]:
                self.store(self.program.buffers[id(v)], idx, self.value(v, idx))
        self.memo.clear()
