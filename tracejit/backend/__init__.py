"""The LLVM backend: an optimised ClosedIR in, an Executable (native code and its Python driver) out.

`compile_ir` is the pipeline, one stage per module (after the last pass, passes.inline(final=True), which
inlines the calls the passes keep whole):

    fusion.py      IR -> [Group]             which equations share a loop nest
    frame.py       -> Frame                  where every value lives: buffers, arena, the call table
    kernels.py     Group -> KernelFunction   each group's LLVM function (loop builders: loops.py)
    steps.py       -> [Step]                 what runs in order, serially or over the threads
    fast_entry.py  -> descriptor, "pyfast"   the whole call in native code, for the dispatch fast path: a
                   or "fast"                 builtin Python calls directly (native_call.py) running the entry
                                             compiled once per process (generic_entry.py) on the signature's
                                             descriptor, or where it cannot the entry written into the module;
                                             else a ctypes entry
    llvm_text.py   -> str                    the module's text
    disk_cache.py  -> ObjectCode             shipped, read from disk, or compiled (llvm.py) and written there
    llvm.py        -> Code                   linked into this process (freed when the last user goes)
    executable.py  -> Executable

rules.py is the interface the primitives' lowering rules are written against; mathlib.py (the vector math
library, compiled once per process by vecmath.py), fft_kernels.py (the FFT's passes, likewise), blas.py,
thread_pool.py (the native thread pool parallel loops run on, likewise) and runtime.py are what the generated
code calls. The backend's modules import without llvmlite: llvm.load imports it, called here (skipped without
llvmlite; compiling then raises), early in the tracejit package's import, so that generic_entry.py's code
compiles on a thread while the rest of the package imports (that compile is also LLVM's costly first one).
"""
import contextlib
import time

from ..passes.inline import inline
from . import disk_cache, fft_kernels, kernel_library, llvm, thread_pool, vecmath
from .executable import MISS, Executable
from .fast_entry import descriptor, emit_fast_entry, emit_py_entry
from .frame import Frame
from .fusion import plan_groups
from .fusion_view import lowered_view
from .kernels import emit_kernel
from .llvm_text import Module
from .memory import memory_analysis
from .steps import ParallelStep, Schedule, link, native_steps


def compile_ir(closed, fuse=True, cache=True, shipped=None):
    """An Executable for a ClosedIR whose constants are arrays (fuse=False: one loop per equation;
    cache=False: never the disk cache; shipped: {key: entry} of object code that came with a pickle, used
    when its key matches)."""
    start = time.perf_counter()
    closed = inline(closed, final=True)                     # every call inlined
    groups = plan_groups(closed.ir, fuse, views=True)       # IR -> [Group]
    frame = Frame(closed, groups)                           # -> Frame: buffers, arena offsets, table slots
    module = Module()                                       # the LLVM text the next stages write
    schedule = Schedule(module, frame)
    for group in groups:      # one at a time: a group's steps need its kernel's cost and follow it in the text
        kernel = emit_kernel(module, frame, group, fuse)    # Group -> KernelFunction (None: run by NumPy)
        schedule.add(group, kernel)                         # -> its steps
    steps = schedule.finish()                               # -> [Step]
    generic = descriptor(frame, steps, MISS)                # -> generic_entry.py's descriptor, or None
    py_fast = None if generic else emit_py_entry(module, frame, steps, MISS)            # -> "pyfast", or None
    fast = None if generic or py_fast else emit_fast_entry(module, frame, steps)    # -> "fast" (ctypes), or None
    text = module.text()                                    # -> str
    generated = time.perf_counter()
    names = [s.name for s in native_steps(steps)] + [name for name in (fast, py_fast) if name]
    if not shipped:
        vecmath.prefetch(text)                              # the library's functions, while LLVM compiles
        fft_kernels.prefetch(module.symbols)                # the FFT library's, likewise
        kernel_library.prefetch(module.symbols)             # the kernels compiled once (top_k's), likewise
        if "tj_parallel_for" in module.symbols or generic and any(isinstance(s, ParallelStep) for s in steps):
            thread_pool.start()                             # the native pool its parallel loops run on, likewise
    objects = disk_cache.object_code(closed, text, names, module.symbols, cache, shipped)  # -> ObjectCode
    for fill in module.before_run:                          # (the arrays its code reads, while the libraries compile)
        fill()
    symbols = {**module.symbols, **vecmath.symbols(objects.library, shipped),  # the vector math library's
               **fft_kernels.symbols(module.symbols, shipped),                 # the FFT library's
               **kernel_library.symbols(module.symbols, shipped)}              # and the kernels compiled once
    code = llvm.load_objects(objects.objects, names, symbols)                             # -> Code
    times = {"codegen": generated - start, "llvm": time.perf_counter() - generated}
    return Executable(frame, link(steps, code), code, fast, module.arrays, text, objects, times, module.kernels,
                      py_fast, generic)


class Compiled:
    """A compiled signature: call it with the flat arguments' pytree as the jitted function takes them."""

    def __init__(self, jitted, entry, arg_shapes=()):
        self._jitted, self._entry, self._arg_shapes = jitted, entry, arg_shapes

    def as_asm(self):
        return llvm.assembly(self._entry.executable.optimized_llvm())

    def kernels(self):
        """The compiled kernels: kind, ops, elements and whether each loop nest vectorizes
        (Executable.kernels)."""
        return self._entry.executable.kernels()

    def memory_analysis(self):
        """Bytes of arguments, outputs, intermediates (the arena) and their peak, for the arguments this was
        lowered for, under JAX's field names (backend/memory.py)."""
        return memory_analysis(self._entry.executable, self._arg_shapes)

    def __call__(self, *args, **kwargs):
        return self._jitted(*args, **kwargs)


class Lowered:
    """jit(f).lower(*args): the optimised IR and the LLVM IR of one signature; arg_shapes: the arguments'
    shapes (they give symbolic dimensions their sizes)."""

    def __init__(self, jitted, entry, arg_shapes=()):
        self._jitted, self._entry, self._arg_shapes = jitted, entry, arg_shapes

    def as_text(self):
        return str(self._entry.closed)

    def as_llvm(self):
        return self._entry.executable.optimized_llvm()

    def to_dot(self):
        """Graphviz text of the IR as compiled, each kernel's equations a cluster: what shares a loop nest,
        what runs through the BLAS or the Python driver, also inside control flow (fusion_view.py)."""
        closed, groups = lowered_view(self._entry.closed)
        return closed.to_dot(groups)

    def to_mermaid(self):
        """Mermaid text of the IR as compiled, each kernel's equations a subgraph, as to_dot."""
        closed, groups = lowered_view(self._entry.closed)
        return closed.to_mermaid(groups)

    def compile(self):
        return Compiled(self._jitted, self._entry, self._arg_shapes)


__all__ = ["MISS", "Compiled", "Executable", "Lowered", "compile_ir"]

with contextlib.suppress(ImportError):
    llvm.load()
