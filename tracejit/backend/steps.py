"""Steps: what runs, in order, and on how many threads. In: each group's KernelFunction, one at a time.
Out: a list of steps and their entry points, written into the module.

- `SerialStep`: `step<j>(ptr table)` calls consecutive kernels on the calling thread (a new step starts
  after STEP_TEXT characters of kernel text: the parts llvm.compile_objects shares among threads).
- `ParallelStep`: `par<j>(ptr table, i64 c, i64 n)` runs chunk c of n of one kernel's outermost loop;
  the caller runs the chunks over the threads (thread_pool.parallel_for; the fast entries call its
  `tj_parallel_for` themselves). A reduction split along a reduced axis writes one partial result per
  chunk into the arena, and a SerialStep combines them.
- `SplitStep`: a kernel whose loop domain has a symbolic dimension: serial or parallel, chosen per call
  from the domain's run-time size (`SplitStep.choose`).
- `PythonStep`: an equation without a lowering rule, run by its NumPy impl on views of the buffers.

A loop is split over the cores when its estimated serial time exceeds parallel_ns(). Steps name their entry
points; `link` binds them to the loaded code's functions. Inside a control-flow body, whose code runs on one
thread, such a loop is split too (`split_in_body`): the body calls the thread pool's `tj_parallel_for` per
iteration.
"""
import contextlib
import ctypes
import dataclasses
import math

from ..core.avals import Dim
from . import runtime, thread_pool
from .fusion import domain_size
from .llvm_text import Function
from .loops import KernelBuilder
from .rules import Reduce

# The estimated serial time above which a loop is split over the cores: the native pool costs ~1 us (a
# sleeping worker: 2-3 us more), and from 10 us on two cores ran elementwise loops 1.4-1.9x faster; the
# Python pool, its fallback where the native one cannot run (thread_pool.native()), costs tens of us
# (runtime.py), so loops split for it only above PYTHON_POOL_FACTOR times as much.
PARALLEL_NS = 10_000
PYTHON_POOL_FACTOR = 20
# In a module whose kernels run a library's own threads (OpenBLAS's gemm), whose workers busy-wait for about
# 100 ms after each call, a loop is split over tracejit's threads only above LIBRARY_THREADS_FACTOR times the
# threshold: a chunk on a core with such a worker ran several times slower (the gradient of an MLP, whose tanh and
# product loops over 128 x 512 were split: 466-653 us a call, 373-382 with them serial; NumPy's 480-500).
LIBRARY_THREADS_FACTOR = 20
# Waking a sleeping worker costs the caller a futex syscall of about 16 us on this VM (an interrupt to an idle
# virtual CPU), and the worker joins late: a 1e5-element u64 `and` (25 us serially) took 12-16 us split over
# workers polling, 51 us with the worker asleep (after a sort, a BLAS call or a pause between calls). A split loop
# estimated below WAKE_NS runs serially when it finds the workers asleep after a pause (ParallelStep.wake;
# thread_pool's tj_parallel_for); a tanh over 2e5 f32 (estimated 72 us) took 84 us serially and 91-95 split so.
WAKE_NS = 40_000
STEP_TEXT = 8000          # kernel text (characters) after which a run of serial kernels starts a new step
PARTIALS_BYTES = 1 << 16  # the largest result of an in-place reduction (column sums) split along its reduced
                          # axis: each chunk accumulates into a partial result of its own, then one loop combines
SCALAR_COMBINE = 4096     # results up to which that loop runs scalar: a few us, where vectorizing it (a vector loop, a
                          # scalar one and a run-time overlap check) cost 1.4 of column sums' 9 ms of LLVM time


def parallel_ns():
    """The estimated serial time (ns) above which a loop is split, for the pool that will run it."""
    return PARALLEL_NS if thread_pool.native() else PARALLEL_NS * PYTHON_POOL_FACTOR


_STEP_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def split_in_body(module, frame, f, kernel):
    """In the function f running a control-flow body's groups: when kernel's loop is worth splitting over
    the threads (as Schedule.add decides at the top level; not a reduction split along a reduced axis,
    which needs partial results), emit its chunked entry and the call running it over the threads, and
    return True; otherwise False (the caller calls the kernel)."""
    g, outer = kernel.group, kernel.group.outer_extent
    ns = domain_size(g.domain) * kernel.ns_per_element if g.fusible else 0
    if (not g.fusible or runtime.NUM_THREADS < 2 or outer < 2 or frame.symbolic
            or (isinstance(g.rule, Reduce) and g.loop_order[0] in g.root.params["axes"]) or ns <= parallel_ns()):
        return False
    chunks = min(runtime.NUM_THREADS, outer)
    (step,) = Schedule(module, frame)._parallel(kernel, chunks, False, ns)
    thread_pool.emit_call(f, f"@{step.name}", "%table", chunks, step.wake)
    return True


@dataclasses.dataclass
class SerialStep:
    """Calls `name(table)`."""
    name: str
    function: object = None           # once linked: the ctypes function

    def run(self, table):
        self.function(table)


@dataclasses.dataclass
class ParallelStep:
    """Calls `name(table, c, chunks)` for every chunk c, over the threads (woken for it, if asleep, when `wake`)."""
    name: str
    chunks: int
    wake: bool
    address: int = 0                  # once linked: the entry's address
    code: object = None               # and the llvm.Code that holds it

    def run(self, table):
        thread_pool.parallel_for(self.address, table, self.chunks, self.wake)


@dataclasses.dataclass
class SplitStep:
    """Parallel when the domain's symbolic sizes multiply to more than `limit` (estimated serial time
    above parallel_ns()) and the outermost loop (`outer`, a Dim or an int) has more than one iteration."""
    serial: SerialStep
    parallel: list
    dims: tuple
    limit: int
    outer: object

    def choose(self, sizes):
        """The steps to run at sizes ({Dim: size})."""
        parallel = math.prod(sizes[d] for d in self.dims) > self.limit and sizes.get(self.outer, self.outer) > 1
        return self.parallel if parallel else [self.serial]


@dataclasses.dataclass
class PythonStep:
    """The Python driver runs eqn's NumPy impl (Executable._python_step)."""
    eqn: object


def native_steps(steps):
    """Every step that has an entry point, the serial and parallel forms of split steps included."""
    return [t for s in steps if not isinstance(s, PythonStep)
            for t in ([s.serial, *s.parallel] if isinstance(s, SplitStep) else [s])]


def link(steps, code):
    """The steps with their functions in code (an llvm.Code, which the functions keep alive)."""
    return [_linked(s, code) for s in steps]


def _linked(s, code):
    # (not a closure calling itself: that would be a cycle holding the code until the garbage collector ran)
    if isinstance(s, SerialStep):
        return dataclasses.replace(s, function=code.function(_STEP_TYPE, s.name))
    if isinstance(s, ParallelStep):
        return dataclasses.replace(s, address=code.addresses[s.name], code=code)
    if isinstance(s, SplitStep):
        return dataclasses.replace(s, serial=_linked(s.serial, code), parallel=[_linked(t, code) for t in s.parallel])
    return s


class Schedule:
    """Steps made one kernel at a time (`add`), in group order; `steps` once every group is added."""

    def __init__(self, module, frame):
        self.module, self.frame = module, frame
        self.steps, self._serial, self._serial_text = [], [], 0
        library_threads = any(getattr(g.rule, "library_threads", None) and g.rule.library_threads(g.root)
                              for g in frame.groups)     # (rules.Kernel's library_threads)
        self.threshold = parallel_ns() * (LIBRARY_THREADS_FACTOR if library_threads else 1)

    def add(self, group, kernel):
        """Schedule group, whose function is kernel (None: a group run by its NumPy impl)."""
        if kernel is None:
            self._flush()
            self.steps.append(PythonStep(group.root))
            return
        g, n_threads, outer, threshold = group, runtime.NUM_THREADS, group.outer_extent, self.threshold
        split_reduction = isinstance(g.rule, Reduce) and g.loop_order[0] in g.root.params["axes"]
        splittable = g.fusible and n_threads > 1 and outer != 1 and (not split_reduction or self._partials_ok(g))
        dims = [d for d in g.domain if isinstance(d, Dim)] if splittable else []
        if dims:           # the run-time size decides, per call
            self._flush()
            self._serial.append(kernel)
            self._flush()
            serial = self.steps.pop()
            fixed = math.prod(d for d in g.domain if not isinstance(d, Dim))
            limit = int(threshold // max(fixed * kernel.ns_per_element, 1e-9))
            parallel = self._parallel(kernel, n_threads, split_reduction, math.inf)
            self.steps.append(SplitStep(serial, parallel, tuple(dims), limit, outer))
        elif splittable and outer > 1 and (ns := domain_size(g.domain) * kernel.ns_per_element) > threshold:
            self._flush()
            self.steps.extend(self._parallel(kernel, min(n_threads, outer), split_reduction, ns))
        elif not g.fusible and g.rule.split and n_threads > 1 and outer > 1 and (ns := g.rule.split(g.root)[1]) > threshold:
            self._flush()           # a kernel whose outermost loop may be split (rules.Kernel's split)
            self.steps.extend(self._parallel(kernel, min(n_threads, outer), False, ns))
        else:
            self._serial.append(kernel)
            self._serial_text += kernel.text_size
            if self._serial_text > STEP_TEXT:
                self._flush()

    def finish(self):
        """The steps, once every group has been added."""
        self._flush()
        return self.steps

    def _function(self, header):
        return Function(self.module, header, self.frame.dim_slots)

    def _flush(self):
        """Write the step running the serial kernels collected so far."""
        self._serial_text = 0
        if not self._serial:
            return
        name = self.module.entry_name("step")
        f = self._function(f"define void @{name}(ptr %table) nounwind noinline")
        table = ", ptr %table" if self.frame.symbolic else ""
        for kernel in self._serial:
            f.line(f"call void {kernel.name}({self.frame.arguments(f, kernel.buffers)}, i64 0, "
                   f"i64 {f.size(kernel.group.outer_extent)}{table})")
        f.line("ret void")
        self.module.add(f)
        self.steps.append(SerialStep(name))
        self._serial.clear()

    def _partials_ok(self, g):
        """Whether reduction g may be split along a reduced axis: its chunks' partial results need a combine,
        and an in-place one (column sums) a whole result per chunk, so a small one (PARTIALS_BYTES) in a static
        frame."""
        out = g.root.outvars[0].aval
        return g.rule.combine is not None and (not g.in_place or not self.frame.symbolic
                                               and out.size * out.dtype.itemsize <= PARTIALS_BYTES)

    def _parallel(self, kernel, chunks, split_reduction, ns):
        """The steps running a kernel over the threads in chunks of its outermost loop (ns: its estimated serial
        time); for a reduction split along a reduced axis, the chunks' partial results and the step combining them."""
        g, frame = kernel.group, self.frame
        name = self.module.entry_name("par")
        f = self._function(f"define void @{name}(ptr %table, i64 %c, i64 %n) nounwind")
        d = f.size(g.outer_extent)
        lo = f.emit(f"sdiv i64 {f.emit(f'mul i64 %c, {d}')}, %n")
        c1 = f.emit("add i64 %c, 1")
        hi = f.emit(f"sdiv i64 {f.emit(f'mul i64 {c1}, {d}')}, %n")
        override = {}
        if split_reduction:
            out = frame.buffers[id(g.root.outvars[0])]
            partials, stride = frame.partials_buffer(out.aval, chunks)
            base = frame.pointer(f, partials)
            override[out] = f.emit(f"getelementptr i8, ptr {base}, i64 {f.emit(f'mul i64 %c, {stride}')}")
        table = ", ptr %table" if frame.symbolic else ""
        f.line(f"call void {kernel.name}({frame.arguments(f, kernel.buffers, override)}, i64 {lo}, i64 {hi}{table})")
        f.line("ret void")
        self.module.add(f)
        steps = [ParallelStep(name, chunks, ns > WAKE_NS)]
        if split_reduction:
            name = self.module.entry_name("step")
            f = self._function(f"define void @{name}(ptr %table) nounwind")
            k = KernelBuilder(f)
            k.b.in_avals = [g.root.inputs[0].aval]
            base = frame.pointer(f, partials)
            out.ptr = frame.pointer(f, out)
            # every element of the result (none for a scalar); a small one's combine runs scalar (SCALAR_COMBINE)
            hints = {"vectorize_enable": False} if out.aval.size <= SCALAR_COMBINE else {}
            with contextlib.ExitStack() as loops:
                idx = [loops.enter_context(f.loop(0, d, **(hints if a == out.aval.ndim - 1 else {})))
                       for a, d in enumerate(out.aval.shape)]
                parts = []
                for c in range(chunks):
                    partials.ptr = f.emit(f"getelementptr i8, ptr {base}, i64 {c * stride}")
                    parts.append(k.load(partials, idx))
                accs = [parts[0]]
                for p in parts[1:]:
                    accs = g.rule.combine(k.b, accs, [p], **g.root.params)
                k.store(out, idx, accs[0])
            f.line("ret void")
            self.module.add(f)
            steps.append(SerialStep(name))
        return steps
