"""The vector math library: libcalls.LIBRARY's functions compiled once per process (and cached on disk with
the rest of the object code), each as a scalar function and as functions on vectors of libcalls.LANES
elements, which the loops of every compiled module call instead of carrying the function's body inlined.

Loops call `llvm.<name>.f32` (libcalls.intrinsic_symbol); the loop vectorizer widens such a call like any
intrinsic, and after the pass pipeline llvm.py renames the calls to this library's functions
(libcalls.library_calls), which reports the (name, type, lanes) a module calls. `symbols` compiles those,
the first time each is needed, and gives their addresses, which loading resolves like any external symbol.
Each width is a module and a cache entry of its own: a loop calls two widths (the registers' full width and
the scalar remainder), so compiling only those takes 2/5 of the time of all five; the widths missing at
once compile on threads at once and link in one load.
"""
import concurrent.futures
import threading

from . import disk_cache, libcalls, llvm, mathlib, runtime

_lock = threading.Lock()
_addresses = {}     # (name, ty, lanes) -> address
_objects = {}       # (name, ty, lanes) -> its disk_cache.ObjectCode (what a pickle ships)
_codes = []         # the library's Code objects, kept: their engine is disposed once they all are gone


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
                                         shipped=shipped, folder="vecmath", alone=alone)


def _load(missing, shipped):
    """Compile (or read) the missing functions, several on threads at once, and link them in one load."""
    threads = min(len(missing), runtime.NUM_THREADS)
    if threads == 1:
        codes = [_object_code(f, shipped, False) for f in missing]
    else:
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            codes = list(pool.map(lambda f: _object_code(f, shipped, True), missing))
    _objects.update(zip(missing, codes))
    names = [_symbol(f) for f in missing]
    code = llvm.load_objects([o for c in codes for o in c.objects], names, {}, permanent=True)
    _codes.append(code)
    _addresses.update(zip(missing, map(code.addresses.__getitem__, names)))
