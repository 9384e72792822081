"""The fast entry: `i32 fast(PyObject *in..., PyObject *out...[, PyObject *arena])`, the whole call in
generated code. In: the Frame and the steps. Out: the function written into the module, or None when the
steps need the Python driver (a parallel or Python step, an output the caller copies) or numpy's array
layout is not the verified one (runtime.ARRAY_LAYOUT_OK).

It checks the argument arrays itself, reads their data pointers from the array objects, fills the table
(frame.py) on its stack, takes its arena from the native stack (up to STACK_ARENA bytes) or from the
caller, and calls the steps. It returns 0 when it ran; 1 when an input is not a C-contiguous aligned
ndarray of the expected dtype object and shape; 2 when a split step should go parallel (the caller then
runs the steps itself); 3 when symbolic code's arena is larger than both the stack allows and the caller's
arena (a 1-D uint8 array; the caller retries with a larger one); nothing is written unless it ran.
Symbolic sizes are read from the inputs' dimensions and the arena plan (Frame.block_plan) is evaluated.
"""
import numpy as np

from ..core.avals import Dim
from . import runtime
from .frame import ALIGN, STACK_ARENA
from .llvm_text import Function
from .steps import SerialStep, SplitStep

NAME = "fast"


def emit_fast_entry(module, frame, steps):
    """Write the fast entry of these steps into module; its name, or None when there is none."""
    if not (runtime.ARRAY_LAYOUT_OK and all(isinstance(s, (SerialStep, SplitStep)) for s in steps)
            and not frame.copies):
        return None
    off = runtime.ARRAY_OFFSETS
    n_in, n_out = len(frame.inputs), len(frame.outputs)
    names = [f"%o{i}" for i in range(n_in + n_out + frame.fast_takes_arena)]
    f = Function(module, f"define i32 @{NAME}({', '.join('ptr ' + n for n in names)}) nounwind "
                         f'"probe-stack"="inline-asm"', frame.dim_slots)
    fail, busy, too_small = "fail", "busy", "too_small"

    def field(obj, offset, ty):
        return f.emit(f"load {ty}, ptr {f.emit(f'getelementptr i8, ptr {obj}, i64 {offset}')}")

    def check(cond, otherwise=fail):
        ok = f.label("ok")
        f.line(f"br i1 {cond}, label %{ok}, label %{otherwise}")
        f.block(ok)

    sizes = {}            # Dim -> its i64 value, from the first input axis that has it
    for i, b in enumerate(frame.inputs):
        obj = names[i]
        check(f.emit(f"icmp eq ptr {field(obj, 8, 'ptr')}, {module.symbol(id(np.ndarray), 'tj_ndarray_type')}"))
        flags = field(obj, off.flags, "i32")
        want = runtime.NPY_C_CONTIGUOUS | runtime.NPY_ALIGNED
        check(f.emit(f"icmp eq i32 {f.emit(f'and i32 {flags}, {want}')}, {want}"))
        descr = module.symbol(id(b.aval.dtype), f"tj_dtype_{b.aval.dtype.name}")
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

    for step in steps:
        if isinstance(step, SplitStep):
            check(f.emit(f"icmp sle i64 {product(1, step.dims)}, {step.limit}"), busy)
    table = f.alloca(f"[{frame.table_size if frame.symbolic else n_in + n_out + 1} x ptr]")

    def store(value, slot, ty="ptr"):
        f.line(f"store {ty} {value}, ptr {f.emit(f'getelementptr ptr, ptr {table}, i64 {slot}')}")

    def caller_arena():
        data = field(names[-1], off.data, "ptr")
        base = f.emit(f"add i64 {f.emit(f'ptrtoint ptr {data} to i64')}, {ALIGN - 1}")
        return f.emit(f"inttoptr i64 {f.emit(f'and i64 {base}, {-ALIGN}')} to ptr")

    for i, obj in enumerate(names[:n_in + n_out]):
        store(field(obj, off.data, "ptr"), i)
    if frame.fast_takes_arena and not frame.symbolic:
        store(caller_arena(), frame.arena_slot)
    elif frame.symbolic and frame.has_arena:
        blocks, block_of = frame.block_plan()
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
        store(f.emit(f"phi ptr [{stack}, %{on_stack}], [{heap}, %{heap_ok}]"), frame.arena_slot)
        for b in frame.tmps + frame.partials:
            store(offsets[block_of[b]], b.slot, "i64")
    elif frame.has_arena:
        store(f.alloca(f"[{frame.arena_bytes} x i8], align {ALIGN}"), frame.arena_slot)
    for d, slot in frame.dim_slots.items():
        store(sizes[d], slot, "i64")
    for step in steps:
        f.line(f"call void @{(step.serial if isinstance(step, SplitStep) else step).name}(ptr {table})")
    f.line("ret i32 0")
    f.block(fail)
    f.line("ret i32 1")
    f.block(busy)
    f.line("ret i32 2")
    f.block(too_small)
    f.line("ret i32 3")
    module.add(f)
    return NAME
