"""LLVM for the host: modules optimised at O3 with loop vectorization for the host CPU and its features, then
their math intrinsics renamed to the vector math library's functions (libcalls.py, vecmath.py) (SLP
vectorization is off: fused loops are vectorized by the loop vectorizer, and SLP cost 14 of 65 ms of a
1,000-op chain's compile for nothing measurable at run time);
loops are unrolled or interleaved only where their metadata asks (kernels.py sets it), which
halved LLVM's time on the MLP train step (230 -> 120 ms) at no measured cost in run time.

A large module is compiled in parts on several threads (`compile_objects`), as LLVM's own split code
generation does: each part holds a share of the entry points and the internal functions they call, and
is parsed, optimised and emitted in its own LLVMContext with its own TargetMachine. llvmlite serialises
every call into LLVM behind one lock, so the two long calls (the pass pipeline and code emission) go
through its ctypes functions directly; where that is not possible, the module compiles whole, as before.
The parts' objects are linked together at load (`load_objects`).

Code lifetime. MCJIT cannot unload an object file, only a whole engine, and an engine costs about 38 KiB
(most of it the TargetMachine it owns: two engines on one TargetMachine segfaulted). So object code is
linked into an engine shared by up to ENGINE_GROUP modules. `load_objects` returns a `Code`: the addresses
of its entry points; `Code.function` makes the ctypes functions that call them, each holding the Code.
When the last of them goes, the Code's finalizer marks its module dead; an engine whose modules are all
dead is disposed (its memory unmapped) at the next load, under the lock, never inside a finalizer. A
running call holds its ctypes function, so code is never freed while any thread executes it. A dead
module's memory (about 10 KiB and its code) waits for the rest of its group.

llvmlite is imported by `load`, which the tracejit package calls at its import (as JAX loads its compiler), not
by this module: the primitives' lowering rules and the NumPy reference interpreter (eval_ir) work without it."""
import concurrent.futures
import ctypes
import functools
import os
import re
import threading
import weakref

from . import libcalls, runtime

# A module is compiled in parts, when two cores or more are free, if it has more than PARALLEL_TEXT characters
# and its parts leave at least SPLIT_SAVING of them outside the largest part (what a second core compiles while
# the first compiles that part): each part costs 1.5-2 ms of CPU more than the whole (its fixed cost), which a
# free second core pays back on attention's 7.3K characters (saving 2.8K: first call 35 -> 27 ms, median of 9
# processes) but not on a module of one large kernel (most chains: saving 0-1.1K). The size alone (8K before)
# split some of those and not attention.
PARALLEL_TEXT = 4_000
SPLIT_SAVING = 2_000
ENGINE_GROUP = 8          # modules linked into one engine (disposed once all are dead)

_lock = threading.RLock()
_elsewhere = set()  # futures of compiles running or queued on other threads (`compiling_elsewhere`)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_elsewhere.clear)   # the threads running them are not in the child


@functools.cache
def _llvmlite():
    """The llvmlite package, its binding loaded."""
    import llvmlite.binding  # here, not at the top: the backend must import without llvmlite (see above)
    return llvmlite


_load_listeners = []     # called once LLVM is loaded (`after_load`)


def load():
    """Load LLVM and make the host's target machine now (about 18 ms, most of it loading llvmlite's library),
    so that the first compile does not; raises ImportError without llvmlite. Then call the after_load
    listeners."""
    _machine()
    while _load_listeners:
        _load_listeners.pop(0)()


def after_load(listener):
    """Call listener() once LLVM is loaded: now if it is (generic_entry.py compiles its code then, on a
    thread)."""
    _load_listeners.append(listener)
    if _machine.cache_info().currsize:
        load()


def versions():
    """{"llvmlite": its version, "llvm": LLVM's version}."""
    llvmlite = _llvmlite()
    return {"llvmlite": llvmlite.__version__, "llvm": ".".join(map(str, llvmlite.binding.llvm_version_info))}


@functools.cache
def host_cpu():
    """(CPU name, its features as LLVM's feature string): what the code is compiled for. On AVX-512 CPUs
    whose LLVM tuning prefers 256-bit vectors (Intel's), 512-bit vectors are allowed: on this project's
    Intel machines that took the fused chain tanh/exp over 1e6 f32 from 3.1 to 1.1 ms of CPU time and
    threefry2x32 uniforms from 1.8 to 1.4 ns each (the integer ALUs are twice as wide)."""
    llvm = _llvmlite().binding
    features = llvm.get_host_cpu_features()
    return llvm.get_host_cpu_name(), features.flatten() + (",-prefer-256-bit" if features.get("avx512f") else "")


@functools.cache
def has_f16c():
    """Whether the host converts between float16 and float32 in hardware (half_floats.py)."""
    return "+f16c" in host_cpu()[1].split(",")


@functools.cache
def vector_bytes():
    """The width of the host's vector registers in bytes (64 with AVX-512, 32 with AVX, else 16)."""
    features = host_cpu()[1]
    return 64 if "+avx512f" in features else 32 if "+avx," in features + "," else 16


def _target_machine():
    cpu, features = host_cpu()
    target = _llvmlite().binding.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=3, reloc="default", codemodel="jitdefault")


@functools.cache
def _machine():
    """The target machine for passes, object code and assembly (engines own TargetMachines of their own)."""
    llvm = _llvmlite().binding
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return _target_machine()


def module_header():
    tm = _machine()
    return f'target triple = "{tm.triple}"\ntarget datalayout = "{tm.target_data}"\n'


def triple():
    """The target triple the code is compiled for."""
    return _machine().triple


def _pass_builder(tm):
    llvm = _llvmlite().binding
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = False   # loops vectorize whole; SLP took 20% of LLVM's time at 1000 ops
    pto.loop_unrolling = False      # loops ask for it in their metadata (kernels.py)
    pto.loop_interleaving = False
    return llvm.create_pass_builder(tm, pto)


_library_listeners = []    # called with the library functions that a module calls, once its passes have run


def on_library_calls(listener):
    """Call listener(functions) with the vector math library's functions ((name, type, lanes)) that a module
    calls, as soon as the pass pipeline has found them and before its code is emitted (vecmath.py starts
    compiling those it lacks, alongside the emission)."""
    _library_listeners.append(listener)


def _found(library):
    for listener in _library_listeners if library else ():
        listener(library)


# A pipeline for code written as it should run (the vector math library, the FFT library, the thread pool, the
# generic entry: vectorized, loops rotated, invariants hoisted): inlining, SSA form and local clean-ups without
# O3's loop and vectorizer passes, which find nothing there (3-7 of 8-13 ms per FFT function, 1-4 ms per math
# function, 11 of the generic entry's 24).
# The math library keeps O3's bits and speed (machine code within 4% of O3's instructions: the far-path
# functions inlined, the near and far paths' common subexpressions shared by NewGVN).
LIGHT_PASSES = ("always_inliner", "sroa", "instruction_combine", "new_gvn", "simplify_cfg")


def _module_passes(pb, passes):
    """The module pass manager running O3's pipeline (passes None) or the llvmlite passes named."""
    if passes is None:
        return pb.getModulePassManager()
    mpm = _llvmlite().binding.create_new_module_pass_manager()
    for name in passes:
        getattr(mpm, f"add_{name}_pass")()
    return mpm


def optimize(text, passes=None):
    """Parse and optimise LLVM IR text (passes: as compile_objects's), its math intrinsics then calling the vector
    math library; returns the llvmlite module and the library functions it calls ((name, type, lanes),
    libcalls.library_calls)."""
    tm = _machine()
    with _lock:
        mod = _llvmlite().binding.parse_assembly(text)
        mod.verify()
        pb = _pass_builder(tm)
        _module_passes(pb, passes).run(mod, pb)
        return _calling_library(mod, text)


def _calling_library(mod, text):
    """(The optimised module with its LIBRARY intrinsics renamed to the vector math library's functions, the
    (name, type, lanes) it calls) (libcalls.library_calls): the intrinsics' declarations renamed in place (a
    reparse of the renamed text cost 0.4-1 ms), the calls found in the optimised text."""
    if not libcalls.uses_library(text):
        return mod, set()
    found = libcalls.library_calls(str(mod))[1]
    for function in mod.functions:
        if function.is_declaration and function.name.startswith("llvm."):
            renamed = libcalls.library_calls("@" + function.name)[0][1:]
            if renamed != function.name:
                function.name = renamed
                if function.name != renamed:   # (a function of that name already there: LLVM named it apart)
                    raise RuntimeError(f"tracejit: {renamed} is defined twice in a module")
    return mod, found


def emit_object(mod):
    """Object code (ELF, Mach-O or COFF bytes) for an optimised module; as fast as MCJIT's own codegen."""
    with _lock:
        return _machine().emit_object(mod)


def _unlocked(name):
    """llvmlite's ctypes function `name` without its global lock, or None."""
    return getattr(getattr(_llvmlite().binding.ffi.lib, name, None), "_cfn", None)


@functools.cache
def _unlocked_calls():
    """(run the pass pipeline, emit object code) without llvmlite's lock, or (None, None)."""
    return _unlocked("LLVMPY_RunNewModulePassManager"), _unlocked("LLVMPY_TargetMachineEmitToMemory")


def compiling_elsewhere(future):
    """Count a compile started on another thread (vecmath.py's) until its future is done: a module compiled
    meanwhile takes only the cores left (on 2 cores, splitting the first call's module beside the library's
    exp took 20 -> 23 ms)."""
    _elsewhere.add(future)
    future.add_done_callback(_elsewhere.discard)


def compile_objects(text, alone=False, passes=None):
    """(Object code for a module's text, the vector math library's functions it calls as a set of (name,
    type, lanes)): one object, or one per part when the module is large, the parts compiled at once on the
    runtime.NUM_THREADS threads that other compiles leave. alone: compile it in an LLVM context of its own,
    outside llvmlite's lock (about 1 ms more), so that threads compiling several modules at once run in
    parallel; so is a module compiled while another compiles elsewhere (`compiling_elsewhere`: under the lock, its
    pass pipeline held the library's parse and emission back: rfft 1024's first call 26 -> 21 ms). passes: None
    for O3's pipeline, or the names of the llvmlite passes to run (LIGHT_PASSES)."""
    parallel = all(_unlocked_calls())
    threads = runtime.NUM_THREADS - len(_elsewhere)
    parts = split_module(text, threads) if len(text) > PARALLEL_TEXT and parallel and threads > 1 else [text]
    if len(text) - max(map(len, parts)) < SPLIT_SAVING:
        parts = [text]
    if len(parts) == 1:
        if (alone or _elsewhere) and parallel:
            obj, library = _compile_alone(text, passes)
            return [obj], library
        mod, library = optimize(text, passes)
        _found(library)
        return [emit_object(mod)], library
    _machine()
    with concurrent.futures.ThreadPoolExecutor(len(parts)) as pool:    # raises a part's error here
        compiled = list(pool.map(functools.partial(_compile_alone, passes=passes), parts))
    return [obj for obj, _ in compiled], set().union(*(library for _, library in compiled))


def _compile_alone(text, passes=None):
    """(Object code, library functions called) of a module parsed, optimised and emitted in a context and with
    a TargetMachine of its own (a spare one), the pass pipeline and emission outside llvmlite's lock (nothing
    else uses these objects meanwhile)."""
    llvm, (run_passes, emit) = _llvmlite().binding, _unlocked_calls()
    ffi = llvm.ffi
    context = llvm.create_context()
    try:
        tm = _spare_machines.pop()
    except IndexError:
        tm = _target_machine()
    try:
        mod = llvm.parse_assembly(text, context=context)
        mod.verify()
        pb = _pass_builder(tm)
        run_passes(_module_passes(pb, passes), mod, pb)
        mod, library = _calling_library(mod, text)
        _found(library)     # before the emission: the library compiles alongside
        with ffi.OutputString() as error:
            buffer = emit(tm, mod, 1, error)
            if not buffer:
                raise RuntimeError(str(error))
    finally:
        _spare_machines.append(tm)
    try:
        return ctypes.string_at(ffi.lib.LLVMPY_GetBufferStart(buffer), ffi.lib.LLVMPY_GetBufferSize(buffer)), library
    finally:
        ffi.lib.LLVMPY_DisposeMemoryBuffer(buffer)


# TargetMachines that no compile uses now (making one costs 0.2 ms), each used by one thread at a time (list.pop
# and append are atomic).
_spare_machines = []


_DEFINE = re.compile(r"^define (internal )?[^@]*@([\w.$]+)\((.*?)\)", re.MULTILINE)


_REFERENCE = re.compile(r"@([\w.$]+)")    # a function called or named as a pointer (a thread pool's task)


def split_module(text, n):
    """At most n module texts, balanced by size, plus one for the entries that call other entries (the fast
    entries), that together define the module's external functions (its entry points); each part holds,
    besides its entry points, the internal functions they call (copied where parts share them), declarations
    of the entry points of other parts that it calls, and the module's header, globals and metadata. Parts
    that call other parts come last: the engine binds a call to the latest definition of its name when the
    object is added, and every module names its entry points alike, so the callee's part must be added first
    (load_objects keeps this order). The text itself when only one part would not call others."""
    chunks = re.split(r"\n(?=define )", text)
    prelude, functions, trailer = chunks[0], {}, []
    for chunk in chunks[1:]:
        end = chunk.index("\n}") + 2
        m = _DEFINE.match(chunk)
        functions[m.group(2)] = (chunk[:end], bool(m.group(1)), m.group(3))
        trailer.append(chunk[end:])

    def closure(name, seen):
        if name not in seen:
            seen[name] = True
            for callee in _REFERENCE.findall(functions[name][0]):
                if callee in functions and functions[callee][1]:
                    closure(callee, seen)
        return seen

    entries = [name for name, (_, internal, _) in functions.items() if not internal]
    weight = {e: sum(len(functions[f][0]) for f in closure(e, {})) for e in entries}
    # Entries that call entries (the fast entries call the steps) share the last part, so that no two parts
    # call each other (the part added first would bind its calls to an older module's definitions).
    calls = {e for e in entries if any(c != e and c in functions and not functions[c][1] for f in closure(e, {})
                                       for c in _REFERENCE.findall(functions[f][0]))}
    rest = [e for e in entries if e not in calls]
    bins = [[] for _ in range(max(1, min(n, len(rest))))]
    for e in sorted(rest, key=lambda e: -weight[e]):
        min(bins, key=lambda b: sum(weight[x] for x in b)).append(e)
    bins.append(sorted(calls, key=entries.index))
    parts, callers = [], []
    for b in (b for b in bins if b):
        defined = {}
        for e in b:
            closure(e, defined)
        body = "\n".join(functions[f][0] for f in functions if f in defined)
        called = set(_REFERENCE.findall(body))
        declares = [_declaration(name, functions[name]) for name in entries if name in called and name not in defined]
        (callers if declares else parts).append("\n".join([prelude, *declares, body, *trailer]))
    # One part and its callers' (a kernel and its fast entry) are no split worth two parts' fixed costs: the
    # 10-op chain's first call took 9 -> 15 ms so.
    return parts + callers if len(parts) > 1 else [text]


def _declaration(name, function):
    """`declare` for a defined function: its return type and parameter types (names dropped)."""
    header = function[0].split("\n", 1)[0]
    result = header[len("define "):header.index("@")].strip()
    params = ", ".join(p.rsplit(" ", 1)[0] if "%" in p else p for p in function[2].split(", ") if p)
    return f"declare {result} @{name}({params})"


class _Engine:
    """An MCJIT engine and how many of its modules were loaded and are alive (changed under _lock)."""

    def __init__(self, counted=True):
        llvm = _llvmlite().binding
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _target_machine())
        self.loaded = self.live = 0
        if counted:
            _engines.add(self)


class Code:
    """Machine code linked into this process: `addresses` of its entry points by name. It stays mapped while
    this object or a function made by `function` is referenced."""

    def __init__(self, engine, addresses):
        self.addresses = addresses
        weakref.finalize(self, _dead.append, engine).atexit = False

    def function(self, prototype, name):
        """A ctypes function of the given prototype calling entry point `name`; it keeps the code alive."""
        f = prototype(self.addresses[name])
        f.code = self
        return f


_engine = None     # the engine new code is linked into
_permanent = None  # the engine of permanent code
_engines = weakref.WeakSet()   # the engines not yet disposed
_dead = []         # engines of Codes that were collected: one item per dead module (appended by finalizers)


def _dispose_dead():
    """Dispose the engines all of whose modules are dead (under _lock)."""
    while _dead:
        group = _dead.pop()
        group.live -= 1
        if group.live == 0 and group.loaded >= ENGINE_GROUP:
            group.engine.close()


def load_objects(objects, names, symbols, permanent=False):
    """Link object code into an engine, its external symbols resolved from symbols (name -> address);
    returns its Code. The engine binds a reference to the latest definition of its name as each object is
    added, so every module may reuse the names with its own addresses as long as a part comes after the
    parts it calls (split_module's order). permanent: code that stays as long as the process (the vector
    math library), linked into an engine of its own, never disposed."""
    global _engine, _permanent
    llvm = _llvmlite().binding
    _machine()
    with _lock:
        _dispose_dead()
        if permanent:
            _permanent = _permanent or _Engine(counted=False)
        elif _engine is None or _engine.loaded >= ENGINE_GROUP:
            _engine = _Engine()
        group = _permanent if permanent else _engine
        engine = group.engine
        for name, address in symbols.items():
            llvm.add_symbol(name, address)
        for data in objects:
            engine.add_object_file(llvm.ObjectFileRef.from_data(data))
        engine.finalize_object()
        group.loaded += 1
        group.live += 1
        return Code(group, {n: engine.get_function_address(n) for n in names})


def engines_alive():
    """How many engines hold code, after disposing those whose modules are all dead (tests use it)."""
    with _lock:
        _dispose_dead()
        return len(_engines)


def assembly(llvm_text):
    """Machine code for optimised LLVM IR text, as assembly."""
    with _lock:
        return _machine().emit_assembly(_llvmlite().binding.parse_assembly(llvm_text))
