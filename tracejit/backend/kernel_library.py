"""Kernels compiled once per process and called by name (top_k's selection, argmax's search), as the FFT library's
passes are (fft_kernels.py): the code compiled for a signature names such a function as an external symbol
(`symbol`, which remembers the function's writer) and compile_ir resolves it (`symbols`), having started compiling
it on a thread while LLVM compiles the module calling it (`prefetch`). Each function is a module of its own,
compiled with the passes its writer names, read from the disk cache or taken from a pickle like any module. This
module names no primitive. top_k 10 of 1e6 f32: the module calling the selection compiles in 5 ms of CPU and the
selection (light pipeline) in 9, alongside it and once per process, where the module that held the kernel took
22-25 at O3; argmax of 1e6 f32: 2.5 and 9, where the block search's module took 31."""
import concurrent.futures
import os
import threading

from . import disk_cache, llvm, runtime
from .llvm_text import Module

_writers = {}             # symbol -> (write(module, name): writes function `name` into module, passes)
_lock = threading.Lock()
_addresses = {}           # symbol -> address of the functions this process has
_objects = {}             # symbol -> its disk_cache.ObjectCode (what a pickle ships)
_pending = {}             # symbol -> Future of _object_code's answer, compiling ahead of the module calling it
_codes = []               # the library's Code objects, kept (their engine stays as long as the process)
_threads = None           # the ThreadPoolExecutor compiling them (made on first use)


def symbol(module, name, write, light=False):
    """`@name`, an external symbol of module (llvm_text.Module) that names the library's function `name`, which
    write(module, name) writes into a module of its own (the name must say all that write writes), compiled with
    O3's pipeline, or the light one (llvm.LIGHT_PASSES) for code written as it should run."""
    _writers[name] = (write, llvm.LIGHT_PASSES if light else None)
    return module.symbol(None, name)


def called(names):
    """The library's functions among the external symbols names, sorted."""
    return sorted(name for name in names if name in _writers)


def prefetch(names):
    """Start compiling, on other threads, the library's functions among names that this process lacks."""
    global _threads
    with _lock:
        for name in called(names):
            if name not in _addresses and name not in _pending:
                _threads = _threads or concurrent.futures.ThreadPoolExecutor(
                    runtime.NUM_THREADS, thread_name_prefix="tracejit-kernels")
                _pending[name] = _threads.submit(_object_code, name, None, True)
                llvm.compiling_elsewhere(_pending[name])   # the module compiled meanwhile takes the cores left


def symbols(names, shipped=None):
    """{symbol: address} of the library's functions among names, each compiled (or read from the disk cache, or
    taken from `shipped`, {key: entry} that came with a pickle) the first time this process needs it."""
    needed = called(names)
    with _lock:
        missing = [name for name in needed if name not in _addresses]
        if missing:
            made = [_pending.pop(name).result() if name in _pending else _object_code(name, shipped, False)
                    for name in missing]
            codes = [c for c, _ in made]
            _objects.update((c.names[0], c) for c in codes)
            externals = {name: address for _, used in made for name, address in used.items()}
            code = llvm.load_objects([o for c in codes for o in c.objects], missing, externals, permanent=True)
            _codes.append(code)
            _addresses.update(code.addresses)
        return {name: _addresses[name] for name in needed}


def entries(names):
    """{key: entry} of the object code of the library's functions among names, for a pickle to ship."""
    return {_objects[name].key: _objects[name].entry() for name in called(names) if name in _objects}


def _object_code(name, shipped, alone):
    """(The ObjectCode of the function `name`, {external symbol: address} that its code names)."""
    write, passes = _writers[name]
    module = Module()
    write(module, name)
    return disk_cache.cached_object_code(f"kernel {name}", module.text(), [name], module.symbols, shipped=shipped,
                                         folder="kernels", alone=alone, passes=passes), module.symbols


def _after_fork():
    """A forked child has none of the parent's threads, nor the compiles they were running."""
    global _lock, _threads
    _lock, _threads = threading.Lock(), None
    _pending.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
