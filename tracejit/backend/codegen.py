"""From an IR to one LLVM module: fusion groups, buffers and their arena plan, loop nests.

Planning walks the equations backwards. An elementwise or index-map equation joins the group of its
consumers when they all sit in one fusible group (a loop nest) and it is not evaluated more often than it
has elements (a cheap index map may be, e.g. a broadcast); otherwise its value is materialised and it
roots a group of its own. A reduction roots a group whose loop nest runs over its operand, so its
producers are computed inside the reduction loop. Kernel rules (matmul, scans) and equations without a
lowering rule (run by their NumPy impl) read and write materialised buffers.

Buffers are the inputs, the outputs (fresh arrays), constants (their addresses are baked into the code)
and intermediates, which share one arena: offsets come from a first-fit liveness plan over the groups.

The module has one function per group (`ptr noalias` buffer arguments and the [lo, hi) range of the
outermost loop, so that a large loop can be split over threads), `step<j>(ptr table)` functions that run
consecutive serial groups with buffer addresses read from a table, `par<j>(table, chunk, n_chunks)` for
the groups split over threads, and, when the whole program is one step, `fast(PyObject*...)` that checks
the argument arrays itself and reads their data pointers from the array objects.
"""
import contextlib
import math

import numpy as np

from ..core.ir import Literal
from . import mathlib, runtime
from .rules import Elementwise, Emitter, IndexMap, Kernel, Reduce, const_text, llvm_type, memory_type

ALIGN = 64
PARALLEL_NS = 150_000     # estimated serial time above which a loop is split over the cores
MAX_FUSED = 1024          # equations per loop nest
VECTORIZE_LIMIT = 800     # body size (instructions, a math call counting 100) above which loops stay scalar


class Func:
    """One LLVM function body: SSA names, blocks, allocas hoisted to the entry block."""

    def __init__(self, module, header):
        self.module, self.header = module, header
        self.lines, self.allocas, self.n = [], [], 0
        self.count = 0            # instructions emitted; with math_calls, a cost estimate
        self.math_calls = 0

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
    def loop(self, lo, hi):
        """for (i = lo; i < hi; i++): yields i."""
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
        self.rule = rule
        self.fusible = isinstance(rule, (Elementwise, IndexMap, Reduce))
        self.stores = list(eqn.outvars)
        domain = eqn.inputs[0].aval if isinstance(rule, Reduce) else eqn.outvars[0].aval
        self.domain = domain.shape if self.fusible else None
        axes = eqn.params["axes"] if isinstance(rule, Reduce) else ()
        self.loop_order = ([a for a in range(len(self.domain)) if a not in axes] + list(axes)
                           if self.fusible else [])
        self.eqns, self.reads = [eqn], None    # members (in program order once planned); buffers read


def _domain_size(shape):
    return math.prod(shape) if shape is not None else 0


def plan_groups(ir, fuse=True):
    """Groups in execution order, dead equations dropped. fuse=False gives every equation its own."""
    outputs = {id(v) for v in ir.outvars if not isinstance(v, Literal)}
    consumers = {}
    for eqn in ir.eqns:
        for x in eqn.inputs:
            if not isinstance(x, Literal):
                consumers.setdefault(id(x), []).append(eqn)
    group_of, groups = {}, []
    for eqn in reversed(ir.eqns):
        users = [group_of[id(c)] for v in eqn.outvars for c in consumers.get(id(v), ())]
        live = users or any(id(v) in outputs for v in eqn.outvars) or eqn.prim.effectful
        if not live:
            continue
        if fuse and isinstance(eqn.prim.lower, (Elementwise, IndexMap)) and not eqn.prim.multiple_results:
            v = eqn.outvars[0]
            g = users[0] if users else None
            if (g is not None and g.fusible and all(u is g for u in users) and len(g.eqns) < MAX_FUSED
                    and (id(v) not in outputs or v.aval.shape == g.domain)
                    and (v.aval.size >= _domain_size(g.domain) or isinstance(eqn.prim.lower, IndexMap))):
                group_of[id(eqn)] = g
                g.eqns.append(eqn)
                if id(v) in outputs:
                    g.stores.append(v)
                continue
        g = Group(len(groups), eqn)
        groups.append(g)
        group_of[id(eqn)] = g
    order = {id(e): i for i, e in enumerate(ir.eqns)}
    groups.sort(key=lambda g: order[id(g.root)])
    for g in groups:
        g.eqns.reverse()
    return groups, group_of


class Program:
    """The plan and the LLVM module text of one IR."""

    def __init__(self, closed, fuse=True):
        ir = self.ir = closed.ir
        self.groups, self.group_of = plan_groups(ir, fuse)
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
        for g in self.groups:
            for v in g.stores:
                if id(v) not in self.buffers:
                    self.buffers[id(v)] = Buffer("tmp", v.aval)
        self._plan_arena()
        self.math = set()
        self.funcs = []

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

    def _plan_arena(self):
        last_use = {}
        for k, g in enumerate(self.groups):
            for x in self.reads(g):
                last_use[id(x)] = k
        free, size = [], 0                 # free: sorted (offset, size)
        for k, g in enumerate(self.groups):
            for v in g.stores:
                b = self.buffers[id(v)]
                if b.kind != "tmp" or b.offset is not None:
                    continue
                need = -(-max(b.nbytes, 1) // ALIGN) * ALIGN
                for i, (off, n) in enumerate(free):
                    if n >= need:
                        b.offset = off
                        free[i:i + 1] = [(off + need, n - need)] if n > need else []
                        break
                else:
                    b.offset, size = size, size + need
                b.extent = need
            for x in self.reads(g):
                b = self.buffers.get(id(x))
                if b is not None and b.kind == "tmp" and last_use.get(id(x)) == k:
                    free.append((b.offset, b.extent))
                    free.sort()
                    merged = []
                    for off, n in free:
                        if merged and merged[-1][0] + merged[-1][1] == off:
                            merged[-1] = (merged[-1][0], merged[-1][1] + n)
                        else:
                            merged.append((off, n))
                    free = merged
        self.arena_bytes = size

    # -------------------------------------------------------------------------------------- codegen
    def kernel(self, g):
        """Emit the function of group g; returns (name, buffers it takes, per-element cost)."""
        eqns = g.eqns
        bufs = []
        for x in self.reads(g) + [v for v in g.stores]:
            b = self.buffers[id(x)]
            if b not in bufs:
                bufs.append(b)
        name = f"@g{g.index}"
        params = ", ".join(f"ptr noalias %p{i}" for i in range(len(bufs)))
        f = Func(self, f"define internal void {name}({params}, i64 %lo, i64 %hi) nounwind")
        for i, b in enumerate(bufs):
            b.ptr = f"%p{i}"
        if isinstance(g.rule, Kernel):
            k = KernelBuilder(f)
            b = k.b
            b.in_avals = [x.aval for x in g.root.inputs]
            b.out_aval = g.root.outvars[0].aval
            ins = [self._as_buffer(x) for x in g.root.inputs]
            g.rule.fn(k, [self.buffers[id(v)] for v in g.root.outvars], ins, **g.root.params)
        else:
            LoopBuilder(self, f, g, eqns).emit()
        f.line("ret void")
        if f.count + 100 * f.math_calls > VECTORIZE_LIMIT:
            self._no_vectorize(f)
        self.funcs.append(f.text())
        return name, bufs, 0.5 + 0.05 * f.count + 2.0 * f.math_calls

    def _no_vectorize(self, f):
        """Loop metadata that keeps LLVM's loop vectorizer off a huge loop body: it takes time quadratic
        in the body size (0.25 s at 1,000 ops), and such a body is compute-bound anyway."""
        for k, line in enumerate(f.lines):
            if line.startswith("  br label %head"):
                self.n_meta += 1
                node = f"!{self.n_meta}"
                f.lines[k] = f"{line}, !llvm.loop {node}"
                self.metadata.append(f"{node} = distinct !{{{node}, !0}}")

    def _as_buffer(self, x):
        if isinstance(x, Literal):
            arr = np.asarray(x.value, dtype=x.aval.dtype)
            b = Buffer("const", x.aval, value=arr)
            b.ptr = f"inttoptr (i64 {arr.ctypes.data} to ptr)"
            self.literal_arrays.append(arr)
            return b
        return self.buffers[id(x)]

    def build(self):
        """LLVM module text; fills self.steps with ("step", name) | ("par", name, n) | ("py", eqn)."""
        self.literal_arrays, self.steps, self.metadata, self.n_meta = [], [], [], 0
        n_threads = runtime.NUM_THREADS
        serial = []

        def flush():
            if serial:
                name = f"step{len(self.steps)}"
                f = Func(self, f"define void @{name}(ptr %table) nounwind noinline")
                for kname, bufs in serial:
                    f.line(f"call void {kname}({self._args(f, bufs)}, i64 0, i64 {self._outer(kname)})")
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
            self.outer[kname] = g.domain[g.loop_order[0]] if g.fusible and g.domain else 1
            chunks = min(n_threads, self.outer[kname])
            split_reduction = isinstance(g.rule, Reduce) and g.loop_order[0] in g.root.params["axes"]
            if (g.fusible and chunks > 1 and _domain_size(g.domain) * cost > PARALLEL_NS
                    and (not split_reduction or g.rule.combine is not None)):
                flush()
                self._parallel(g, kname, bufs, chunks, split_reduction)
            else:
                serial.append((kname, bufs))
        flush()
        self.fast = None
        if len(self.steps) == 1 and self.steps[0][0] == "step" and all(k == "buf" for k, _ in self.outputs):
            self.fast = self._fast_entry(self.steps[0][1])
        math_defs = mathlib.math_module_ir(self.math)
        from .llvm import module_header
        if self.metadata:
            self.metadata.insert(0, '!0 = !{!"llvm.loop.vectorize.enable", i1 false}')
        return "\n\n".join([module_header(), *self.funcs, math_defs, "\n".join(self.metadata)])

    def _parallel(self, g, kname, bufs, chunks, split_reduction):
        """par<j>(table, c, n) runs chunk c of n of the outermost loop. A reduction split along a reduced
        axis writes one partial result per chunk into the arena, and a serial step combines them."""
        name = f"par{len(self.steps)}"
        f = Func(self, f"define void @{name}(ptr %table, i64 %c, i64 %n) nounwind")
        d = self.outer[kname]
        lo = f.emit(f"sdiv i64 {f.emit(f'mul i64 %c, {d}')}, %n")
        c1 = f.emit("add i64 %c, 1")
        hi = f.emit(f"sdiv i64 {f.emit(f'mul i64 {c1}, {d}')}, %n")
        override = {}
        if split_reduction:
            out = self.buffers[id(g.root.outvars[0])]
            partials = Buffer("tmp", out.aval)
            partials.offset, self.arena_bytes = self.arena_bytes, self.arena_bytes + chunks * ALIGN
            base = self._pointer(f, partials)
            override[out] = f.emit(f"getelementptr i8, ptr {base}, i64 {f.emit(f'mul i64 %c, {ALIGN}')}")
        f.line(f"call void {kname}({self._args(f, bufs, override)}, i64 {lo}, i64 {hi})")
        f.line("ret void")
        self.funcs.append(f.text())
        self.steps.append(("par", name, chunks))
        if split_reduction:
            name = f"step{len(self.steps)}"
            f = Func(self, f"define void @{name}(ptr %table) nounwind")
            k = KernelBuilder(f)
            k.b.in_avals, k.b.out_aval = [g.root.inputs[0].aval], out.aval
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
            self.steps.append(("step", name))

    def _outer(self, kname):
        return self.outer[kname]

    def _args(self, f, bufs, override=None):
        return ", ".join(f"ptr {(override or {}).get(b) or self._pointer(f, b)}" for b in bufs)

    def _pointer(self, f, b, table="%table"):
        if b.kind == "const":
            return f"inttoptr (i64 {b.value.ctypes.data} to ptr)"
        slot = self.arena_slot if b.kind == "tmp" else b.slot
        p = f.emit(f"load ptr, ptr {f.emit(f'getelementptr ptr, ptr {table}, i64 {slot}')}")
        if b.kind == "tmp":
            p = f.emit(f"getelementptr i8, ptr {p}, i64 {b.offset}")
        return p

    def _fast_entry(self, step):
        """i32 fast(PyObject *in..., PyObject *out..., PyObject *arena): 1 when an input is not a
        C-contiguous aligned ndarray of the expected dtype object and shape (nothing is written then)."""
        if not runtime.ARRAY_LAYOUT_OK:
            return None
        off = runtime.ARRAY_OFFSETS
        n_in, n_out = len(self.inputs), len(self.outputs)
        names = [f"%o{i}" for i in range(n_in + n_out + (self.arena_bytes > 0))]
        f = Func(self, f"define i32 @fast({', '.join('ptr ' + n for n in names)}) nounwind")
        fail = "fail"

        def field(obj, offset, ty):
            return f.emit(f"load {ty}, ptr {f.emit(f'getelementptr i8, ptr {obj}, i64 {offset}')}")

        def check(cond):
            ok = f.label("ok")
            f.line(f"br i1 {cond}, label %{ok}, label %{fail}")
            f.block(ok)

        for i, b in enumerate(self.inputs):
            obj = names[i]
            check(f.emit(f"icmp eq i64 {field(obj, 8, 'i64')}, {id(np.ndarray)}"))
            flags = field(obj, off.flags, "i32")
            want = runtime.NPY_C_CONTIGUOUS | runtime.NPY_ALIGNED
            check(f.emit(f"icmp eq i32 {f.emit(f'and i32 {flags}, {want}')}, {want}"))
            check(f.emit(f"icmp eq i64 {field(obj, off.descr, 'i64')}, {id(b.aval.dtype)}"))
            check(f.emit(f"icmp eq i32 {field(obj, off.nd, 'i32')}, {b.aval.ndim}"))
            if b.aval.ndim:
                dims = field(obj, off.dimensions, "ptr")
                for k, d in enumerate(b.aval.shape):
                    dk = f.emit(f"load i64, ptr {f.emit(f'getelementptr i64, ptr {dims}, i64 {k}')}")
                    check(f.emit(f"icmp eq i64 {dk}, {d}"))
        table = f.alloca(f"[{n_in + n_out + 1} x ptr]")
        for i, obj in enumerate(names):
            data = field(obj, off.data, "ptr")
            if i == n_in + n_out:
                base = f.emit(f"ptrtoint ptr {data} to i64")
                aligned = f.emit(f"and i64 {f.emit(f'add i64 {base}, {ALIGN - 1}')}, {-ALIGN}")
                data = f.emit(f"inttoptr i64 {aligned} to ptr")
            f.line(f"store ptr {data}, ptr {f.emit(f'getelementptr ptr, ptr {table}, i64 {i}')}")
        f.line(f"call void @{step}(ptr {table})")
        f.line("ret i32 0")
        f.block(fail)
        f.line("ret i32 1")
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
            stride *= d
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
        b.in_avals, b.out_aval = [x.aval for x in e.inputs], e.outvars[0].aval
        if isinstance(rule, Elementwise):
            return rule.fn(b, *args, **e.params)
        return rule.fn(b, idx, lambda i, j: self._read(e, i, j), **e.params)

    def _read(self, e, i, idx):
        v = self.value(e.inputs[i], idx)
        b = self.b
        b.in_avals, b.out_aval = [x.aval for x in e.inputs], e.outvars[0].aval
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
        loop_order = g.loop_order
        idx = [None] * len(shape)
        with contextlib.ExitStack() as outer:
            for n, a in enumerate(loop_order[:len(kept)]):
                idx[a] = outer.enter_context(f.loop("%lo" if n == 0 else 0, "%hi" if n == 0 else shape[a]))
            if isinstance(g.rule, Reduce):
                self._reduce(idx, axes, kept, first=not kept)
            else:
                self._prefetch(idx)
                for v in g.stores:
                    self.store(self.program.buffers[id(v)], idx, self.value(v, idx))

    def _reduce(self, idx, axes, kept, first):
        g, f, b = self.g, self.f, self.b
        root, shape = g.root, g.domain
        b.in_avals, b.out_aval = [root.inputs[0].aval], root.outvars[0].aval
        params = root.params
        inits = g.rule.init(b, **params)
        tys = [llvm_type(dtype) for _, dtype in inits]
        accs = [f.alloca(t) for t in tys]
        for a, t, (v, _) in zip(accs, tys, inits):
            self.store_var(a, t, v)
        with contextlib.ExitStack() as inner:
            for n, a in enumerate(axes):
                lo, hi = ("%lo", "%hi") if first and n == 0 else (0, shape[a])
                idx[a] = inner.enter_context(f.loop(lo, hi))
            self.memo.clear()
            self._prefetch(idx)
            x = self.value(root.inputs[0], idx)
            pos = 0
            for a in axes:
                pos = b.iop("add", b.iop("mul", pos, shape[a]), idx[a])
            b.in_avals, b.out_aval = [root.inputs[0].aval], root.outvars[0].aval
            cur = [self.load_var(a, t) for a, t in zip(accs, tys)]
            new = g.rule.update(b, cur, x, pos, **params)
            for a, t, v in zip(accs, tys, new):
                self.store_var(a, t, v)
            for v in g.stores[1:]:
                self.store(self.program.buffers[id(v)], idx, self.value(v, idx))
        self.memo.clear()
        b.in_avals, b.out_aval = [root.inputs[0].aval], root.outvars[0].aval
        result = g.rule.result(b, [self.load_var(a, t) for a, t in zip(accs, tys)], **params)
        self.store(self.program.buffers[id(root.outvars[0])], [idx[a] for a in kept], result)

