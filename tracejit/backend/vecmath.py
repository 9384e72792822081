"""The vector math library: libcalls.LIBRARY's functions compiled once per process (and cached on disk with
the rest of the object code), each as a scalar function and as functions on vectors of libcalls.LANES
elements, which the loops of every compiled module call instead of carrying the function's body inlined.

Loops call `llvm.<name>.f32` (libcalls.intrinsic_symbol); the loop vectorizer widens such a call like any
intrinsic, and after the pass pipeline llvm.py renames the calls to this library's functions
(libcalls.library_calls). `symbols` compiles the library functions a module names, the first time one is
needed, and gives their addresses, which loading resolves like any external symbol.
"""
import threading

from . import disk_cache, libcalls, llvm, mathlib

_lock = threading.Lock()
_addresses = {}     # (name, ty) -> {symbol: address}
_objects = {}       # (name, ty) -> its disk_cache.ObjectCode (what a pickle ships)
_codes = []         # the library's Code objects, kept: their engine is disposed once they all are gone


def symbols(needed, shipped=None):
    """{symbol: address} of every width of each (name, ty) in needed (LIBRARY functions only); shipped:
    {key: entry} that came with a pickle, used where a key matches (as compile_ir's)."""
    out = {}
    for name, ty in sorted(needed):
        with _lock:
            if (name, ty) not in _addresses:
                _addresses[name, ty] = _load(name, ty, shipped)
        out.update(_addresses[name, ty])
    return out


def entries(needed):
    """{key: entry} of the library's object code for each (name, ty) in needed, for a pickle to ship."""
    return {_objects[k].key: _objects[k].entry() for k in needed if k in _objects}


def _load(name, ty, shipped):
    text = "\n".join([llvm.module_header()] + [libcalls.library_function_ir(name, ty, n) for n in libcalls.LANES])
    names = [mathlib.vector_symbol(name, ty, n)[1:] for n in libcalls.LANES]
    _objects[name, ty] = disk_cache.cached_object_code(f"vecmath {name} {ty}", text, names, {}, shipped=shipped,
                                                       folder="vecmath")
    code = llvm.load_objects(_objects[name, ty].objects, names, {}, permanent=True)
    _codes.append(code)
    return code.addresses
