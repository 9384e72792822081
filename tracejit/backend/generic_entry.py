"""One native fast entry for every signature of fixed shapes, compiled once per process and driven by a
per-signature descriptor (fast_entry.descriptor writes it), instead of a `pyfast` function written into each
module: that function was about half of a small module's LLVM time (x + 1 over 1e3 f32: 7.2 -> 3.9 ms,
column sums: 9.2 -> 5.6 ms; the passes and code emission of ~100 instructions of checks and calls).

`tj_generic_entry(self, args)` is a builtin function's code (native_call.py) as pyfast is and behaves as the
pyfast of the same signature would (fast_entry.py's docstring): the same checks of the flat leaves, the same
outputs, the same MISS, the same arena cache; `self`'s sixth item is the descriptor, an int64 array:

    [n_in, n_out, arena mode (0 none, 1 stack, 2 the cached heap array), arena bytes (the heap array's, with
     ALIGN to spare), arena slot, release the GIL (0/1), n_steps, outputs' word, steps' word, the address of
     what it returns when declining (executable.MISS),
     per input  [kind, record words, ...]:  ARRAY [0, n, descr, ndim, dims...], COPY (a Python float or complex,
                weakly typed) [1, 4, type, bytes], INT (a Python int in self[1]'s bounds) [2, 2], SCALAR (a 0-d
                ndarray, a numpy scalar or a Python bool) [3, 7, descr, 0, scalar type or 0, itemsize, bool?],
     per output [descr, ndim, dims...],
     per step   [address, chunks (0: called serially, else through the native pool's cell), wake (steps.WAKE_NS)]]

Its code is compiled (or read from the disk cache) on a thread started when LLVM loads (`llvm.after_load`,
early in tracejit's import); compiled, it is also the process's first compile, which costs 6-8 ms more than
later ones (LLVM's one-time initialisation), paid there instead of by the first jitted call. It takes about 38
ms of CPU; a fork, and the interpreter's exit, wait for that thread.
"""
import concurrent.futures
import logging
import os
import sys
import threading

import numpy as np

from . import disk_cache, llvm, native_call, runtime, thread_pool
from .frame import ALIGN
from .generic_entry_ir import IR

log = logging.getLogger("tracejit")

NAME = "tj_generic_entry"
ARRAY, COPY, INT, SCALAR = range(4)
HEADER = 10         # descriptor words before the first input's record
MAX_IN, MAX_TABLE = 256, 512  # inputs, and inputs + outputs + 1 (its table) at most: a fixed frame of 12 KiB;
                               # more inputs take a pyfast in each module (33 to 64 inputs: LLVM 11 -> 41 ms; 100: 0.5 s)
OK = native_call.PY_ENTRY_OK and sys.byteorder == "little"   # INT stores an i64 that narrower ints read


def _text():
    off = runtime.ARRAY_OFFSETS
    values = {"TUPLE_ITEMS": native_call.TUPLE_ITEMS, "TUPLE_SIZE": native_call.TUPLE_SIZE, "DATA": off.data,
              "FLAGS": off.flags, "DESCR": off.descr, "ND": off.nd, "DIMENSIONS": off.dimensions,
              "WANT": runtime.NPY_C_CONTIGUOUS | runtime.NPY_ALIGNED, "SCALAR_VALUE": native_call.SCALAR_VALUE,
              "HEADER": HEADER, "MAX_IN": MAX_IN, "MAX_TABLE": MAX_TABLE, "ALIGN_LESS_1": ALIGN - 1,
              "MINUS_ALIGN": -ALIGN, "ALIGN": ALIGN}
    text = IR
    for name in sorted(values, key=len, reverse=True):    # (ALIGN_LESS_1 before ALIGN)
        text = text.replace(name, str(values[name]))
    return llvm.module_header() + text


def _symbols():
    return {**native_call.SYMBOLS, "tj_ndarray_type": id(np.ndarray), "tj_tuple_type": id(tuple),
            "tj_int_type": id(int), "tj_bool_type": id(bool), "tj_true": id(True), "tj_none": id(None),
            "tj_dtype_uint8": id(np.dtype(np.uint8)), "tj_parallel_for": thread_pool.CELL}


_lock = threading.Lock()
_loaded = []         # the linked Code, where it came from (disk_cache.ObjectCode.source: tests read it)
_thread = None       # compiling it at LLVM's load (`_prepare`)


def address():
    """The entry's address, its code compiled or read from the disk cache and linked once per process."""
    if _thread is not None and _thread is not threading.current_thread():
        _thread.join()
    with _lock:
        if not _loaded:
            symbols = _symbols()
            # the light pipeline: 13 ms of LLVM instead of O3's 24, which a process's first jitted call waited
            # for (x + 1 right after the import: 34 -> 23 ms), and calls as fast (0.24-0.25 us for x + 1)
            made = disk_cache.cached_object_code("generic entry", _text(), [NAME], symbols, folder="runtime",
                                                 alone=True, passes=llvm.LIGHT_PASSES)
            _loaded.append(llvm.load_objects(made.objects, [NAME], symbols, permanent=True))
            _loaded.append(made.source)
        return _loaded[0].addresses[NAME]


def _prepare():
    """At LLVM's load: compile (or read) the entry on a thread."""
    global _thread
    if OK:
        # (not a daemon: the interpreter's exit waits for it, never freeing LLVM while it compiles)
        _thread = threading.Thread(target=_compile_quietly, name="tracejit-entry")
        _thread.start()


def _compile_quietly():
    """Compile on one core, counted as a compile elsewhere (llvm.compiling_elsewhere): a first jitted call
    meanwhile takes the other cores, and this thread never starts a pool of its own (its first use imports
    concurrent.futures.thread, whose fork handlers, registered while a fork runs, broke the fork)."""
    busy = concurrent.futures.Future()
    llvm.compiling_elsewhere(busy)
    try:
        address()
    except Exception as e:  # noqa: BLE001 -- the first signature that needs it compiles it again and raises
        log.debug("tracejit: compiling the generic entry failed: %r", e)
    finally:
        busy.set_result(None)


def _before_fork():
    if _thread is not None and _thread is not threading.current_thread():
        _thread.join()      # LLVM's state must not be mid-compile in the child


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork)
llvm.after_load(_prepare)
