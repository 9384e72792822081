"""The vector math library: libcalls.LIBRARY's functions compiled once per process (and cached on disk with
the rest of the object code), each as a scalar function and as functions on vectors of libcalls.LANES
elements, which the loops of every compiled module call instead of carrying the function's body inlined.

Loops call `llvm.<name>.f32` (libcalls.intrinsic_symbol); the loop vectorizer widens such a call like any
intrinsic, and after the pass pipeline llvm.py renames the calls to this library's functions
(libcalls.library_calls), which reports the (name, type, lanes) a module calls. `symbols` compiles those,
the first time each is needed, and gives their addresses, which loading resolves like any external symbol.
Each width is a module and a cache entry of its own: a loop calls one or two widths (the registers' full
width, and the scalar function for a remainder that is not folded into the vector loop), so compiling
only those takes 1/5 to 2/5 of the time of all five; the widths missing at once compile on threads at once
and link in one load. `prefetch` starts compiling the full-width functions that a module will call while
LLVM compiles the module itself (on a first call, the two took about as long), and the others (the scalar
functions of a loop's remainder) start as soon as the pass pipeline has found them (llvm.on_library_calls),
alongside the module's emission: guessed from the text, a scalar function compiled for nothing (a loop of 512
elements has no remainder) took a core from the module's compile or its first run.
"""
import concurrent.futures
import functools
import os
import threading

from . import disk_cache, libcalls, llvm, mathlib, runtime

_lock = threading.Lock()
_addresses = {}     # (name, ty, lanes) -> address
_objects = {}       # (name, ty, lanes) -> its disk_cache.ObjectCode (what a pickle ships)
_pending = {}       # (name, ty, lanes) -> Future of its ObjectCode, until linked (under _pending_lock)
_pending_lock = threading.Lock()    # never held while waiting: a module compiling on the pool may take it
_codes = []         # the library's Code objects, kept: their engine is disposed once they all are gone


def prefetch(text):
    """Start compiling, on other threads, the functions that a module's text will call once optimised, if its
    loops are vectorized: each LIBRARY intrinsic's function at the registers' full width (the width kernels.py
    gives loops calling the library); `symbols` then takes them. A function the module turns out not to call
    is compiled for nothing, in the background."""
    if "llvm.loop.vectorize.width" in text:
        widths = {"float": llvm.vector_bytes() // 4, "double": llvm.vector_bytes() // 8}
        _start({(name, ty, widths[ty]) for name, ty in libcalls.called(text)})


def _start(functions):
    """Start compiling those of functions that are neither linked nor compiling."""
    with _pending_lock:
        for f in sorted(set(functions) - _addresses.keys() - _pending.keys()):
            _pending[f] = _pool().submit(_object_code, f, None, True)
            llvm.compiling_elsewhere(_pending[f])


llvm.on_library_calls(_start)


@functools.cache
def _pool():
    return concurrent.futures.ThreadPoolExecutor(runtime.NUM_THREADS, thread_name_prefix="tracejit-vecmath")


def _forked():
    """In a forked child: the parent's pool threads and the compiles they were running are not here."""
    global _lock, _pending_lock
    _lock, _pending_lock = threading.Lock(), threading.Lock()
    _pending.clear()
    _pool.cache_clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def symbols(needed, shipped=None):
    """{symbol: address} of each (name, ty, lanes) in needed (LIBRARY functions only); shipped: {key: entry}
    that came with a pickle, used where a key matches (as compile_ir's)."""
    with _lock:
        missing = sorted(set(needed) - _addresses.keys())
        if missing:
            _load(missing, shipped)
        return {_symbol(f): _addresses[f] for f in needed}


def entries(needed):
    """{key: entry} of the library's object code for each (name, ty, lanes) in needed, for a pickle to ship."""
    return {_objects[f].key: _objects[f].entry() for f in needed if f in _objects}


def _symbol(function):
    return mathlib.vector_symbol(*function)[1:]


def _object_code(function, shipped, alone):
    name, ty, lanes = function
    text = llvm.module_header() + libcalls.library_function_ir(name, ty, lanes)
    return disk_cache.cached_object_code(f"vecmath {name} {ty} {lanes}", text, [_symbol(function)], {},
                                         shipped=shipped, folder="vecmath", alone=alone,
                                         passes=llvm.LIGHT_PASSES)


def _load(missing, shipped):
    """Compile (or read, or take from `_start`) the missing functions, several on threads at once, and link
    them in one load. They stay in _pending until linked (or failed), so that `_start` does not compile them
    again meanwhile."""
    try:
        with _pending_lock:
            pending = {f: _pending[f] for f in missing if f in _pending and not shipped}
            rest = [f for f in missing if f not in pending]
            if len(rest) + len(pending) > 1:
                pending.update((f, _pool().submit(_object_code, f, shipped, True)) for f in rest)
                _pending.update(pending)
                rest = []
        ready = {f: _object_code(f, shipped, False) for f in rest}
        ready.update((f, p.result()) for f, p in pending.items())
        codes = [ready[f] for f in missing]
        _objects.update(zip(missing, codes))
        names = [_symbol(f) for f in missing]
        code = llvm.load_objects([o for c in codes for o in c.objects], names, libcalls.libm_symbols(),
                                 permanent=True)
        _codes.append(code)
        _addresses.update(zip(missing, map(code.addresses.__getitem__, names)))
    finally:
        with _pending_lock:
            for f in missing:
                _pending.pop(f, None)
