"""Run-time helpers for calling compiled code: array data pointers and a thread pool.

Array layout. numpy's array object is, in C (numpy/ndarraytypes.h):

    PyObject_HEAD; char *data; int nd; npy_intp *dimensions; npy_intp *strides;
    PyObject *base; PyArray_Descr *descr; int flags; ...

`ARRAY_OFFSETS` holds the byte offset of each field (data 16, nd 24, dimensions 32, strides 40,
base 48, descr 56, flags 64 on 64-bit CPython) and the `NPY_*` constants the flag bits. They are
checked at import against `arr.ctypes.data`, `ndim`, `shape`, `strides`, `base`, `dtype` and
`flags` of a few arrays (views, transposes, 0-d, empty, read-only); `ARRAY_LAYOUT_OK` says whether
that held. Generated code may read these fields from an array object only when it is True.

`data_pointer(arr)` reads the data field directly when the layout is verified and falls back to
`arr.ctypes.data` otherwise (or for objects that are not ndarrays).

Measured per-call costs (medians of repeated runs; 2-core Zen 5 VM, CPython 3.11, numpy 2.4):

    getting one data pointer                                              ns
      arr.ctypes.data                                                   1000-1100
      arr.__array_interface__['data'][0]                                1050-1150
      ctypes.c_void_p.from_address(id(arr) + 16).value                   120-190
      _WORDS[(id(arr) + 16) >> 3]  (what data_pointer does, inline)      85
      data_pointer(arr)  (the function call with its isinstance check)  120
    calling a compiled f(a, b) on two 8-element float32 arrays
      CFUNCTYPE(None, c_void_p, c_void_p), pointers at hand             200
      same with argtypes c_int64 instead of c_void_p                    340
      same, pointers from data_pointer()                                500
      same, pointers from arr.ctypes.data                              2400-2700
      PYFUNCTYPE(None, py_object, py_object), code loads data at +16    300  (keeps the GIL)
      CFUNCTYPE(None, py_object, py_object), code loads data at +16     335  (releases the GIL)
      for comparison: numpy `a + 1` 600, np.empty(8) 145

np.empty aligns data to 16 bytes only (64 bytes for some small arrays by chance), but an AVX-512
f32 loop measured no consistent difference between 64- and 16-byte aligned buffers from 4 K to
8 M elements (within +-10 % noise), so there is no aligned allocator here.

Thread pool. `parallel_for(fn, n_chunks)` calls fn(i) for every i in range(n_chunks) on
persistent worker threads and the calling thread, and returns once all calls are done. Chunks
are handed out on demand, so a worker that wakes late leaves its chunk to the caller instead of
delaying it. fn should be a ctypes foreign function (or call one), which releases the GIL: that
is what lets chunks run at the same time. Several Python threads may call it at once, and fn may
call it again: every caller works on its own chunks, so no caller waits on a busy pool.

Compiled code runs its parallel loops on the native pool (thread_pool.py) wherever that works; this
Python pool is its fallback. Its cost is the operating system's and the GIL's: each chunk on a worker
is a queue put, a wake-up and a GIL hand-over. Measured (2-core Xeon VM, same process, medians):
parallel_for of two empty chunks 2.0-2.3 us (native pool: 0.55-0.76, two plain calls: 0.9); of two
9 us chunks 24-33 us (native: 9.1; serially: 17.4); of two 1.3 us chunks 4-10 us (native: 1.7-2.2).
Earlier, on a Zen 5 VM: two chunks of 110 us each took 170 us instead of 218, of 11 us 31 instead of
22. So with this pool a loop pays to be split only above about 100 us.
"""
import _thread
import collections
import ctypes
import itertools
import os
import queue
import sys
import threading

import numpy as np

NPY_C_CONTIGUOUS = 0x0001
NPY_F_CONTIGUOUS = 0x0002
NPY_OWNDATA = 0x0004
NPY_ALIGNED = 0x0100
NPY_WRITEABLE = 0x0400
_FLAG_NAMES = {NPY_C_CONTIGUOUS: "C_CONTIGUOUS", NPY_F_CONTIGUOUS: "F_CONTIGUOUS", NPY_OWNDATA: "OWNDATA",
               NPY_ALIGNED: "ALIGNED", NPY_WRITEABLE: "WRITEABLE"}


class _ArrayStruct(ctypes.Structure):
    _fields_ = [("head", ctypes.c_byte * object.__basicsize__), ("data", ctypes.c_void_p),
                ("nd", ctypes.c_int), ("dimensions", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("base", ctypes.c_void_p), ("descr", ctypes.c_void_p), ("flags", ctypes.c_int)]


ArrayOffsets = collections.namedtuple("ArrayOffsets", "data nd dimensions strides base descr flags")
ARRAY_OFFSETS = ArrayOffsets(*(getattr(_ArrayStruct, name).offset for name in ArrayOffsets._fields))


def _layout_holds(x, words):
    s = _ArrayStruct.from_address(id(x))
    if (s.data or 0) != x.ctypes.data or s.nd != x.ndim or s.descr != id(x.dtype):
        return False
    if (s.base or 0) != (0 if x.base is None else id(x.base)):
        return False
    if any(bool(s.flags & bit) != x.flags[name] for bit, name in _FLAG_NAMES.items()):
        return False
    if x.ndim and (s.dimensions is None or s.strides is None):
        return False
    vector = ctypes.c_ssize_t * x.ndim
    return (tuple(vector.from_address(s.dimensions or 0)) == x.shape
            and tuple(vector.from_address(s.strides or 0)) == x.strides
            and words[(id(x) + ARRAY_OFFSETS.data) >> 3] == x.ctypes.data)


def _verify_layout():
    """The word view of memory data_pointer reads through, or None when the layout does not hold."""
    if sys.implementation.name != "cpython" or ctypes.sizeof(ctypes.c_void_p) != 8 or ARRAY_OFFSETS.data % 8:
        return None
    try:
        # A view of the whole address space as 64-bit words. It is only ever indexed at the data
        # field of a live ndarray; nothing else may read through it.
        words = memoryview((ctypes.c_uint64 * (sys.maxsize // 8)).from_address(0)).cast("B").cast("Q")
        a = np.arange(24, dtype=np.float32).reshape(4, 6)
        read_only = np.broadcast_to(np.arange(3.0), (2, 3))
        samples = [a, a[1:, ::2], a.T, np.asfortranarray(a), np.array(2.0),
                   np.empty((0, 5)), np.arange(10)[::-3], read_only, np.zeros(1 << 16, np.int32)]
        return words if all(_layout_holds(x, words) for x in samples) else None
    except Exception:  # noqa: BLE001 -- any surprise means: do not trust the layout
        return None


_WORDS = _verify_layout()
ARRAY_LAYOUT_OK = _WORDS is not None
_DATA_OFFSET = ARRAY_OFFSETS.data
_ndarray = np.ndarray


def data_pointer(arr):
    """The address of arr's first element (as arr.ctypes.data): about 120 ns when verified."""
    if _WORDS is not None and isinstance(arr, _ndarray):
        return _WORDS[(id(arr) + _DATA_OFFSET) >> 3]
    return arr.ctypes.data


def _cpu_count():
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


NUM_THREADS = _cpu_count()


class _Job:
    """One parallel_for call: chunks handed out on demand; the last one to finish releases `done`."""
    __slots__ = ("chunks", "done", "error", "finished", "fn", "n")

    def __init__(self, fn, n):
        self.fn, self.n = fn, n
        self.chunks = iter(range(n))         # next() on it and on `finished` is atomic under the GIL
        self.finished = itertools.count(1)
        self.done = _thread.allocate_lock()
        self.done.acquire()
        self.error = None

    def work(self):
        for i in self.chunks:
            try:
                self.fn(i)
            except BaseException as e:  # noqa: BLE001 -- re-raised by parallel_for
                self.error = e
            if next(self.finished) == self.n:
                self.done.release()


_jobs = None
_pool_lock = threading.Lock()


def _worker(jobs):
    while True:
        jobs.get().work()


def _job_queue():
    """The queue the worker threads take jobs from; the threads start on first use."""
    global _jobs
    with _pool_lock:
        if _jobs is None:
            _jobs = queue.SimpleQueue()
            for _ in range(NUM_THREADS - 1):
                threading.Thread(target=_worker, args=(_jobs,), name="tracejit-worker", daemon=True).start()
        return _jobs


def _forget_pool():
    global _jobs, _pool_lock
    _jobs, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)   # the threads do not survive a fork


def parallel_for(fn, n_chunks):
    """Call fn(i) for i in range(n_chunks) on up to NUM_THREADS threads, the caller being one.

    Returns when every call has returned; if any raised, re-raises one of their exceptions then.
    """
    if n_chunks <= 0:
        return
    job = _Job(fn, n_chunks)
    helpers = min(n_chunks, NUM_THREADS) - 1
    if helpers > 0:
        jobs = _jobs or _job_queue()
        for _ in range(helpers):
            jobs.put(job)
    job.work()
    job.done.acquire()
    if job.error is not None:
        raise job.error
