"""The fast entries, the whole call in generated code. In: the Frame and the steps. Out: the functions
written into the module, or None where the steps need the Python driver (a parallel or Python step, an
output the caller copies) or numpy's array layout is not the verified one (runtime.ARRAY_LAYOUT_OK).

`i32 fast(PyObject *in..., PyObject *out...[, PyObject *arena])`, called through ctypes: it checks the
argument arrays itself, reads their data pointers from the array objects, fills the table (frame.py) on
its stack, takes its arena from the native stack (up to STACK_ARENA bytes) or from the caller, and calls
the steps. It returns 0 when it ran; 1 when an input is not a C-contiguous aligned ndarray of the expected
dtype object and shape; 2 when a split step should go parallel (the caller then runs the steps itself); 3
when symbolic code's arena is larger than both the stack allows and the caller's arena (a 1-D uint8 array;
the caller retries with a larger one); nothing is written unless it ran. Symbolic sizes are read from the
inputs' dimensions and the arena plan (Frame.block_plan) is evaluated.

`PyObject *pyfast(PyObject *self, PyObject *args)`, a builtin function's code (native_call.py), written
instead of `fast` wherever native_call.PY_ENTRY_OK (compile_ir): the same checks on the tuple of flat
leaves, where a 0-d input compiled for a Python float, int or complex (weakly typed) takes exactly that
type, and another 0-d input an ndarray, a numpy scalar of its dtype or (bool) a Python bool. It allocates
the outputs itself (PyArray_NewFromDescr), and an arena array where the stack is too small; releases the
GIL around the steps of large calls and counts its hits. It returns the output (a tuple of them unless
there is one), MISS where `fast` returns 1 or 2 or a Python int does not fit, NULL with MemoryError set
when an array cannot be allocated.

Neither is written where generic_entry.py's entry, compiled once per process, runs the signature
(`descriptor`: fixed shapes, serial and parallel steps): it behaves as pyfast, and the module is about half
as costly to compile without one.
"""
import numpy as np

from ..core.avals import Dim
from . import generic_entry, native_call, runtime, thread_pool
from .frame import ALIGN, STACK_ARENA
from .llvm_text import Function
from .steps import ParallelStep, SerialStep, SplitStep

NAME = "fast"
PY_NAME = "pyfast"
SMALL = 4096   # elements (inputs and outputs) below which pyfast keeps the GIL (as Executable._small)


class _Writer:
    """The parts both entries share, written into the function f."""

    def __init__(self, module, frame, f):
        self.module, self.frame, self.f = module, frame, f
        self.sizes = {}            # Dim -> its i64 value, from the first input axis that has it

    def field(self, obj, offset, ty):
        f = self.f
        return f.emit(f"load {ty}, ptr {f.emit(f'getelementptr i8, ptr {obj}, i64 {offset}')}")

    def check(self, cond, otherwise="fail"):
        ok = self.f.label("ok")
        self.f.line(f"br i1 {cond}, label %{ok}, label %{otherwise}")
        self.f.block(ok)

    def is_type(self, obj, address, name):
        return self.f.emit(f"icmp eq ptr {self.field(obj, 8, 'ptr')}, {self.module.symbol(address, name)}")

    def descr(self, dtype):
        return self.module.symbol(id(dtype), f"tj_dtype_{dtype.name}")

    def array(self, obj, aval):
        """Check that obj is a C-contiguous aligned ndarray of aval's dtype and shape; its data pointer."""
        f, off = self.f, runtime.ARRAY_OFFSETS
        self.check(self.is_type(obj, id(np.ndarray), "tj_ndarray_type"))
        want = runtime.NPY_C_CONTIGUOUS | runtime.NPY_ALIGNED
        flags = self.field(obj, off.flags, "i32")
        self.check(f.emit(f"icmp eq i32 {f.emit(f'and i32 {flags}, {want}')}, {want}"))
        self.check(f.emit(f"icmp eq ptr {self.field(obj, off.descr, 'ptr')}, {self.descr(aval.dtype)}"))
        self.check(f.emit(f"icmp eq i32 {self.field(obj, off.nd, 'i32')}, {aval.ndim}"))
        if aval.ndim:
            dims = self.field(obj, off.dimensions, "ptr")
            for k, d in enumerate(aval.shape):
                dk = f.emit(f"load i64, ptr {f.emit(f'getelementptr i64, ptr {dims}, i64 {k}')}")
                if isinstance(d, Dim) and d not in self.sizes:
                    self.sizes[d] = dk
                    if d.needed_by is not None:      # 0 has no result: the caller's plan raises (check_nonempty)
                        self.check(f.emit(f"icmp ne i64 {dk}, 0"))
                else:
                    self.check(f.emit(f"icmp eq i64 {dk}, {self.sizes.get(d, d)}"))
        return self.field(obj, off.data, "ptr")

    def product(self, factor, dims):
        x = factor
        for d in dims:
            x = self.f.emit(f"mul i64 {x}, {self.sizes[d] if isinstance(d, Dim) else d}")
        return x

    def check_splits(self, steps, busy):
        """Without the native pool: decline (branch to busy) where a split step would go parallel."""
        for step in () if _pooled(steps) else steps:
            if isinstance(step, SplitStep):
                self.check(self.f.emit(f"icmp sle i64 {self.product(1, step.dims)}, {step.limit}"), busy)

    def fill(self, pointers, heap_arena):
        """The table: the data pointers (the outputs' may come later: store), the arena (on the stack up to
        STACK_ARENA bytes, else heap_arena(bytes) emits where it is: bytes None for the fixed arena of code
        for fixed shapes), the sizes, the arena offsets; returns it."""
        f, frame = self.f, self.frame
        table = f.alloca(f"[{frame.table_size if frame.symbolic else len(frame.inputs) + len(frame.outputs) + 1} x ptr]")

        def store(value, slot, ty="ptr"):
            self.store(table, value, slot, ty)

        for i, p in enumerate(pointers):
            store(p, i)
        if frame.fast_takes_arena and not frame.symbolic:
            store(heap_arena(None), frame.arena_slot)
        elif frame.symbolic and frame.has_arena:
            blocks, block_of = frame.block_plan()
            offsets, total = [], 0
            for factor, dims in blocks:
                x = self.product(factor, dims)                       # at least 1 byte, rounded up to ALIGN
                at_least_1 = f.emit(f"select i1 {f.emit(f'icmp eq i64 {x}, 0')}, i64 1, i64 {x}")
                rounded = f.emit(f"and i64 {f.emit(f'add i64 {at_least_1}, {ALIGN - 1}')}, {-ALIGN}")
                offsets.append(total)
                total = f.emit(f"add i64 {total}, {rounded}")
            on_stack, on_heap, heap_done, join = (f.label(s) for s in ("stack", "heap", "heap_ok", "arena"))
            f.line(f"br i1 {f.emit(f'icmp ule i64 {total}, {STACK_ARENA}')}, label %{on_stack}, label %{on_heap}")
            f.block(on_stack)
            stack = f.emit(f"alloca i8, i64 {total}, align {ALIGN}")
            f.line(f"br label %{join}")
            f.block(on_heap)
            heap = heap_arena(total)
            f.line(f"br label %{heap_done}")
            f.block(heap_done)
            f.line(f"br label %{join}")
            f.block(join)
            store(f.emit(f"phi ptr [{stack}, %{on_stack}], [{heap}, %{heap_done}]"), frame.arena_slot)
            for b in frame.tmps + frame.partials:
                store(offsets[block_of[b]], b.slot, "i64")
        elif frame.has_arena:
            store(f.alloca(f"[{frame.arena_bytes} x i8], align {ALIGN}"), frame.arena_slot)
        for d, slot in frame.dim_slots.items():
            store(self.sizes[d], slot, "i64")
        return table

    def aligned(self, array):
        """An array's data pointer rounded up to ALIGN."""
        f = self.f
        data = self.field(array, runtime.ARRAY_OFFSETS.data, "ptr")
        base = f.emit(f"add i64 {f.emit(f'ptrtoint ptr {data} to i64')}, {ALIGN - 1}")
        return f.emit(f"inttoptr i64 {f.emit(f'and i64 {base}, {-ALIGN}')} to ptr")

    def store(self, table, value, slot, ty="ptr"):
        self.f.line(f"store {ty} {value}, ptr {self.f.emit(f'getelementptr ptr, ptr {table}, i64 {slot}')}")

    def run(self, steps, table):
        """Call the steps; parallel ones through the native pool, split ones chosen by the sizes (as
        SplitStep.choose) when there is one, else serially (check_splits declined the others)."""
        f = self.f
        for step in steps:
            if isinstance(step, ParallelStep):
                thread_pool.emit_call(f, f"@{step.name}", table, step.chunks, step.wake)
            elif isinstance(step, SplitStep) and _pooled(steps):
                wide = f.emit(f"icmp sgt i64 {self.product(1, step.dims)}, {step.limit}")
                outer = f.emit(f"icmp sgt i64 {self.sizes.get(step.outer, step.outer)}, 1")
                parallel, serial, done = f.label("parallel"), f.label("serial"), f.label("split")
                f.line(f"br i1 {f.emit(f'and i1 {wide}, {outer}')}, label %{parallel}, label %{serial}")
                for label, chosen in ((parallel, step.parallel), (serial, [step.serial])):
                    f.block(label)
                    self.run(chosen, table)
                    f.line(f"br label %{done}")
                f.block(done)
            else:
                f.line(f"call void @{(step.serial if isinstance(step, SplitStep) else step).name}(ptr {table})")


def _pooled(steps):
    """Whether the entries run these steps' parallel loops on the native pool."""
    return any(isinstance(s, (ParallelStep, SplitStep)) for s in steps) and thread_pool.native()


def _native(frame, steps):
    """Whether the entries can run these steps: no Python step, no output copied; parallel steps only on
    the native pool."""
    kinds = (SerialStep, SplitStep, ParallelStep) if _pooled(steps) else (SerialStep, SplitStep)
    return all(isinstance(s, kinds) for s in steps) and not frame.copies


def emit_fast_entry(module, frame, steps):
    """Write the ctypes fast entry of these steps into module; its name, or None when there is none."""
    if not (runtime.ARRAY_LAYOUT_OK and _native(frame, steps)):
        return None
    n_in, n_out = len(frame.inputs), len(frame.outputs)
    names = [f"%o{i}" for i in range(n_in + n_out + frame.fast_takes_arena)]
    f = Function(module, f"define i32 @{NAME}({', '.join('ptr ' + n for n in names)}) nounwind "
                         f'"probe-stack"="inline-asm"', frame.dim_slots)
    w = _Writer(module, frame, f)
    pointers = [w.array(names[i], b.aval) for i, b in enumerate(frame.inputs)]
    w.check_splits(steps, "busy")
    pointers += [w.field(obj, runtime.ARRAY_OFFSETS.data, "ptr") for obj in names[n_in:n_in + n_out]]

    def caller_arena(nbytes):
        if nbytes is not None:      # the arena array's bytes (1-D uint8) must be enough
            given = f.emit(f"load i64, ptr {w.field(names[-1], runtime.ARRAY_OFFSETS.dimensions, 'ptr')}")
            w.check(f.emit(f"icmp uge i64 {given}, {f.emit(f'add i64 {nbytes}, {ALIGN}')}"), "too_small")
        return w.aligned(names[-1])
    w.run(steps, w.fill(pointers, caller_arena))
    f.line("ret i32 0")
    for label, code in (("fail", 1), ("busy", 2), ("too_small", 3)):
        f.block(label)
        f.line(f"ret i32 {code}")
    module.add(f)
    return NAME


def descriptor(frame, steps, miss):
    """(The int64 descriptor of generic_entry.py's entry for these steps, with their addresses left 0, the
    steps' names in order, the word of the first step's address), or None where that entry cannot run them:
    symbolic shapes, split steps, more inputs and outputs than its frame holds, or where pyfast could not
    (emit_py_entry)."""
    n_in, n_out = len(frame.inputs), len(frame.outputs)
    if not (generic_entry.OK and not frame.symbolic and n_in <= generic_entry.MAX_IN
            and n_in + n_out < generic_entry.MAX_TABLE and _native(frame, steps) and _weak_ok(frame)
            and all(isinstance(s, SerialStep) or isinstance(s, ParallelStep) and s.chunks > 0 for s in steps)):
        return None
    words = []
    for b in frame.inputs:
        aval, dtype = b.aval, b.aval.dtype
        if aval.ndim:
            record = [generic_entry.ARRAY, 0, id(dtype), aval.ndim, *aval.shape]
        elif aval.weak_type and dtype.kind in "fc":
            record = [generic_entry.COPY, 0, id(complex if dtype.kind == "c" else float), dtype.itemsize]
        elif aval.weak_type:
            record = [generic_entry.INT, 0]
        else:
            numpy_scalar = id(dtype.type) if native_call.scalar_layout_holds(dtype) else 0
            record = [generic_entry.SCALAR, 0, id(dtype), 0, numpy_scalar, dtype.itemsize, int(dtype == np.bool_)]
        record[1] = len(record)
        words += record
    outputs = generic_entry.HEADER + len(words)
    for b in frame.outputs:
        words += [id(b.aval.dtype), b.aval.ndim, *b.aval.shape]
    mode = 2 if frame.fast_takes_arena else 1 if frame.has_arena else 0
    size = frame.arena_bytes + (ALIGN if mode == 2 else 0)
    big = sum(int(np.prod(b.aval.shape)) for b in frame.inputs + frame.outputs) >= SMALL
    first_step = generic_entry.HEADER + len(words)
    header = [n_in, n_out, mode, size, frame.arena_slot, int(big), len(steps), outputs, first_step, id(miss)]
    words += [w for s in steps for w in ((0, s.chunks, int(s.wake)) if isinstance(s, ParallelStep) else (0, 0, 0))]
    return np.array(header + words, np.int64), [s.name for s in steps], first_step


def _weak_ok(frame):
    """Whether every weakly typed input is of a Python scalar's dtype (core.avals.aval_of)."""
    return all(not b.aval.weak_type or b.aval.dtype.kind in "iu" or b.aval.dtype in (np.float64, np.complex128)
               for b in frame.inputs)


def emit_py_entry(module, frame, steps, miss):
    """Write pyfast (see the module's docstring) into module; its name, or None when there is none (the
    layouts are not the verified ones, the steps need the Python driver, a weakly typed input of a dtype
    other than these). miss: the object it returns when declining."""
    if not (native_call.PY_ENTRY_OK and _native(frame, steps) and _weak_ok(frame)):
        return None
    for name, address in [*native_call.SYMBOLS.items(), ("tj_ndarray_type", id(np.ndarray))]:
        module.symbol(address, name)
    f = Function(module, f'define ptr @{PY_NAME}(ptr %self, ptr %args) nounwind "probe-stack"="inline-asm"',
                 frame.dim_slots)
    w = _Writer(module, frame, f)
    n_in, off = len(frame.inputs), runtime.ARRAY_OFFSETS
    w.check(w.is_type("%args", id(tuple), "tj_tuple_type"))
    w.check(f.emit(f"icmp eq i64 {w.field('%args', native_call.TUPLE_SIZE, 'i64')}, {n_in}"))
    pointers = []
    for i, b in enumerate(frame.inputs):
        obj = f.emit(f"load ptr, ptr {_item(f, '%args', i)}")
        pointers.append(w.array(obj, b.aval) if b.aval.ndim else _scalar(w, obj, b.aval, i))
    w.check_splits(steps, "fail")
    arena = f.alloca("ptr")               # an arena array of ours, where the stack is too small
    f.line(f"store ptr null, ptr {arena}")
    outs, unwind = [], [f.label("nomem")]

    def new_array(shape, dtype, unwind_to):
        """A new array (its shape's sizes: ints or i64 values); no memory: unwind_to."""
        dims = f.alloca(f"[{max(len(shape), 1)} x i64]")
        for k, d in enumerate(shape):
            f.line(f"store i64 {d}, ptr {f.emit(f'getelementptr i64, ptr {dims}, i64 {k}')}")
        descr = w.descr(dtype)
        f.line(f"call void @tj_Py_IncRef(ptr {descr})")          # PyArray_NewFromDescr steals it
        new = f.emit(f"call ptr @tj_PyArray_NewFromDescr(ptr @tj_ndarray_type, ptr {descr}, i32 {len(shape)}, "
                     f"ptr {dims}, ptr null, ptr null, i32 0, ptr null)")
        w.check(f.emit(f"icmp ne ptr {new}, null"), unwind_to)
        return new

    cached = frame.fast_takes_arena and not frame.symbolic
    if cached:     # the arena cache of `self` (native_call.py): its data, one PyObject pointer
        cached = w.field(f.emit(f"load ptr, ptr {_item(f, '%self', 2)}"), off.data, "ptr")
        none = module.symbol(id(None), "tj_none")

    def heap_arena(nbytes):
        """A fixed arena comes from the cache when it holds one (a new array on every call of a large arena
        cost its page faults each time: a 3 MB arena made a softmax 3x slower), else a new array."""
        size = frame.arena_bytes + ALIGN if nbytes is None else f.emit(f"add i64 {nbytes}, {ALIGN}")
        if cached:
            held = f.emit(f"load ptr, ptr {cached}")
            with f.when(f.emit(f"icmp ne ptr {held}, {none}")):
                f.line(f"call void @tj_Py_IncRef(ptr {none})")
                f.line(f"store ptr {none}, ptr {cached}")                 # its reference is now ours
                f.line(f"store ptr {held}, ptr {arena}")
            with f.when(f.emit(f"icmp eq ptr {f.emit(f'load ptr, ptr {arena}')}, null")):
                f.line(f"store ptr {new_array([size], np.dtype(np.uint8), unwind[0])}, ptr {arena}")
            return w.aligned(f.emit(f"load ptr, ptr {arena}"))
        new = new_array([size], np.dtype(np.uint8), unwind[0])
        f.line(f"store ptr {new}, ptr {arena}")
        return w.aligned(new)

    table = w.fill(pointers, heap_arena)
    for j, b in enumerate(frame.outputs):
        outs.append(new_array([w.sizes.get(d, d) for d in b.aval.shape], b.aval.dtype, unwind[-1]))
        unwind.append(f.label("nomem"))
        w.store(table, w.field(outs[-1], off.data, "ptr"), n_in + j)
    _run_releasing_gil(w, steps, table, [b.aval.shape for b in frame.inputs + frame.outputs])
    if cached:     # back into the cache if it is empty (another thread's call may have filled it), and the
        mine = f.emit(f"load ptr, ptr {arena}")     # cache's reference to None dropped below instead of ours
        with f.when(f.emit(f"icmp eq ptr {f.emit(f'load ptr, ptr {cached}')}, {none}")):
            f.line(f"store ptr {mine}, ptr {cached}")
            f.line(f"store ptr {none}, ptr {arena}")
    f.line(f"call void @tj_Py_DecRef(ptr {f.emit(f'load ptr, ptr {arena}')})")   # (Py_XDECREF)
    f.line(f"store ptr null, ptr {arena}")
    counter = w.field(f.emit(f"load ptr, ptr {_item(f, '%self', 0)}"), off.data, "ptr")
    hits = f.emit(f"load i64, ptr {counter}")
    f.line(f"store i64 {f.emit(f'add i64 {hits}, 1')}, ptr {counter}")
    if len(outs) == 1:
        f.line(f"ret ptr {outs[0]}")
    else:
        result = f.emit(f"call ptr @tj_PyTuple_New(i64 {len(outs)})")
        w.check(f.emit(f"icmp ne ptr {result}, null"), unwind[-1])
        for k, out in enumerate(outs):
            f.line(f"store ptr {out}, ptr {_item(f, result, k)}")
        f.line(f"ret ptr {result}")
    for j, label in enumerate(unwind):       # no memory: drop the arrays made before, return NULL
        f.block(label)
        for obj in [f.emit(f"load ptr, ptr {arena}"), *outs[:j]]:
            f.line(f"call void @tj_Py_DecRef(ptr {obj})")
        f.line("ret ptr null")
    f.block("fail")
    ptr = module.symbol(id(miss), "tj_miss")
    f.line(f"call void @tj_Py_IncRef(ptr {ptr})")
    f.line(f"ret ptr {ptr}")
    module.add(f)
    return PY_NAME


def _item(f, tuple_, k):
    """A pointer to the slot of a tuple object's item k."""
    return f.emit(f"getelementptr i8, ptr {tuple_}, i64 {native_call.TUPLE_ITEMS + 8 * k}")


_LLVM_INT = {1: "i8", 2: "i16", 4: "i32", 8: "i64"}


def _scalar(w, obj, aval, i):
    """The data pointer of a 0-d input: a copy of a Python scalar's value where it was compiled for one
    (weakly typed: a Python float or int; a Python int must be in self's bounds for position i), else an
    ndarray's data or a copy of a numpy scalar's value (or of a Python bool's, for bool)."""
    f, dtype = w.f, aval.dtype
    slot = f.alloca(f"[{dtype.itemsize} x i8], align 16")
    value = f.emit(f"getelementptr i8, ptr {obj}, i64 {native_call.SCALAR_VALUE}")
    if aval.weak_type and dtype.kind == "f":     # float64
        w.check(w.is_type(obj, id(float), "tj_float_type"))
        f.line(f"store double {f.emit(f'load double, ptr {value}')}, ptr {slot}")
        return slot
    if aval.weak_type and dtype.kind == "c":     # complex128: its two doubles as they are
        w.check(w.is_type(obj, id(complex), "tj_complex_type"))
        f.line(f"call void @llvm.memcpy.p0.p0.i64(ptr {slot}, ptr {value}, i64 16, i1 false)")
        return slot
    if aval.weak_type:
        w.check(w.is_type(obj, id(int), "tj_int_type"))
        overflow = f.alloca("i32")
        x = f.emit(f"call i64 @tj_PyLong_AsLongLongAndOverflow(ptr {obj}, ptr {overflow})")
        w.check(f.emit(f"icmp eq i32 {f.emit(f'load i32, ptr {overflow}')}, 0"))
        bounds = w.field(f.emit(f"load ptr, ptr {_item(f, '%self', 1)}"), runtime.ARRAY_OFFSETS.data, "ptr")
        lo, hi = (f.emit(f"load i64, ptr {f.emit(f'getelementptr i64, ptr {bounds}, i64 {2 * i + k}')}") for k in (0, 1))
        above, below = f.emit(f"icmp sge i64 {x}, {lo}"), f.emit(f"icmp sle i64 {x}, {hi}")
        w.check(f.emit(f"and i1 {above}, {below}"))
        ty = _LLVM_INT[dtype.itemsize]
        f.line(f"store {ty} {x if ty == 'i64' else f.emit(f'trunc i64 {x} to {ty}')}, ptr {slot}")
        return slot
    kinds = [(id(np.ndarray), "tj_ndarray_type", lambda: w.array(obj, aval))]
    if native_call.scalar_layout_holds(dtype):
        def copy():
            f.line(f"call void @llvm.memcpy.p0.p0.i64(ptr {slot}, ptr {value}, i64 {dtype.itemsize}, i1 false)")
            return slot
        kinds.append((id(dtype.type), f"tj_scalar_type_{dtype.name}", copy))
    if dtype == np.bool_:
        def python_bool():
            is_true = f.emit(f"icmp eq ptr {obj}, {w.module.symbol(id(True), 'tj_true')}")
            f.line(f"store i8 {f.emit(f'zext i1 {is_true} to i8')}, ptr {slot}")
            return slot
        kinds.append((id(bool), "tj_bool_type", python_bool))
    return _one_of(w, obj, kinds)


def _one_of(w, obj, kinds):
    """The data pointer given by the first of kinds ([(type address, symbol name, body)]) whose type obj
    has exactly (body() emits its checks and returns the pointer); none: fail."""
    f = w.f
    join, incoming = f.label("leaf"), []
    for k, (address, name, body) in enumerate(kinds):
        yes, no = f.label("is"), (f.label("not") if k + 1 < len(kinds) else "fail")
        f.line(f"br i1 {w.is_type(obj, address, name)}, label %{yes}, label %{no}")
        f.block(yes)
        pointer, done = body(), f.label("got")
        f.line(f"br label %{done}")
        f.block(done)
        f.line(f"br label %{join}")
        incoming.append(f"[{pointer}, %{done}]")
        if no != "fail":
            f.block(no)
    f.block(join)
    return f.emit(f"phi ptr {', '.join(incoming)}")


def _run_releasing_gil(w, steps, table, shapes):
    """The steps, the GIL released around them unless the call is small (SMALL, at run time for symbolic
    shapes): other Python threads run meanwhile."""
    f = w.f
    if all(not isinstance(d, Dim) for s in shapes for d in s):
        if sum(int(np.prod(s)) for s in shapes) < SMALL:
            w.run(steps, table)
            return
        big = "true"
    else:
        total = 0
        for s in shapes:
            total = f.emit(f"add i64 {total}, {w.product(1, s)}")
        big = f.emit(f"icmp sge i64 {total}, {SMALL}")
    release, run = f.label("release"), f.label("run")
    before = f.label("keep")
    f.line(f"br i1 {big}, label %{release}, label %{before}")
    f.block(release)
    saved = f.emit("call ptr @tj_PyEval_SaveThread()")
    f.line(f"br label %{run}")
    f.block(before)
    f.line(f"br label %{run}")
    f.block(run)
    state = f.emit(f"phi ptr [{saved}, %{release}], [null, %{before}]")
    w.run(steps, table)
    with f.when(f.emit(f"icmp ne ptr {state}, null")):
        f.line(f"call void @tj_PyEval_RestoreThread(ptr {state})")
