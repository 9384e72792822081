"""The thread pool generated code runs parallel loops on: native code, compiled once per process, that never
touches Python or the GIL.

`tj_parallel_for(fn, table, n, wake)` calls `fn(table, c, n)` for every chunk c in range(n) and returns when all
have returned. While the workers sleep, a job not worth waking them (`wake` 0, steps.WAKE_NS) runs its chunks
on the caller, unless it comes within BURST_US of the end of the last one (back-to-back jobs wake them, and their
polling then keeps them awake). Otherwise it publishes the job in one global slot (fn, table, n, the chunks left to claim, the chunks
finished), wakes the sleeping workers, claims chunks itself with an atomic decrement (chunks are handed out on
demand: a worker that starts late leaves its chunk to the caller) and waits until every claimed chunk finished:
polling for SPIN_US, then asleep on a futex that the worker finishing the last chunk wakes (a caller spinning
longer kept a descheduled worker off its core when other processes loaded the machine). A worker reads the job only after claiming one of its chunks, and a job cannot
end before its claimed chunks do, so a late claim is a claim on the job then current: no generation counter.
The slot has one owner at a time (`busy`): a caller that finds the pool busy (another Python thread's job, or
a chunk's own nested loop) runs all of its chunks itself, so no caller ever waits on another's job.

Workers (NUM_THREADS - 1, ordinary daemon threads whose target calls `tj_pool_worker` through ctypes, which
releases the GIL and never returns) poll the slot for SPIN_US microseconds after their last chunk (measured
with the time-stamp counter), then sleep on a futex (Linux's syscall through libc's `syscall`); a caller
makes the futex call only when some worker sleeps. After a fork the child resets the slot and starts new
workers (the parent's threads do not survive).

The native pool needs Linux on x86-64 (the futex syscall's number, `pause`) and a futex that
answers; `NATIVE` (read when the pool is first needed) switches it off. Generated code calls tj_parallel_for
through a cell (`CELL`) that holds, until the native pool runs or where it cannot, `_run_chunks`: a callback
into Python that runs the chunks on runtime.parallel_for's Python threads. The native pool starts (on another
thread: compiling it took 6-15 ms) while LLVM compiles the first module that calls tj_parallel_for
(backend.compile_ir), or else the first time a parallel loop runs (code that came with a pickle). So a process
that never compiles or runs one never compiles the pool, and no call waits for it.

Measured (2-core Xeon VM with other work running; same process, medians; runtime.py has the Python pool's):
tj_parallel_for of two empty chunks 0.55-0.76 us (two plain calls: 0.9), of two 9 us chunks 9.1 us (serially:
17.4, the Python pool: 24-33). With the worker asleep the caller pays 2-3 us more (the futex wake; 14 us when
other processes kept both cores busy), and a 10 us chunk is done before the worker wakes. Back-to-back calls of a 1e5-element tanh took 23-27 us with workers
polling 5 to 100 us (SPIN_US), 46-49 us without polling (44 us serially); polling costs at most SPIN_US of a
core's time after each parallel loop. A worker asleep on this VM joined ~100 us late: a 2048 x 2048 f32 row sum
(two 150 us chunks) took 307 us right after the previous call, 360-373 us after a pause of 40 us or more with
workers polling 50 us, 307-310 us after pauses up to 100 us with workers polling 300 us. Polling longer is no cure:
with 200 us, a polling worker kept OpenBLAS's threads off a core, and the gradient of a small MLP (gemms between
short parallel loops) took 32 ms instead of 0.37. Later, on the same kind of VM: the futex wake of a sleeping worker
took the caller 16 us, and a job after a pause of 60 us or more paid 40-60 us more than back-to-back (1e5-element
u64 `and`: 12 -> 53 us, 24 serially; tanh: 24 -> 69, 45 serially; 4e5 tanh: 93 -> 148, 176 serially), hence
jobs that are not worth a wake.
"""
import ctypes
import logging
import os
import platform
import sys
import threading
import time

from . import disk_cache, llvm, runtime

log = logging.getLogger("tracejit")

NATIVE = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")
SPIN_US = 50              # how long an idle worker polls for the next job before it sleeps on the futex
BURST_US = 100            # a job that comes this soon after the last one wakes sleeping workers, small or not
_SYS_FUTEX, _FUTEX_WAIT_PRIVATE, _FUTEX_WAKE_PRIVATE = 202, 128, 129

PAR_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)   # a chunk: (table, c, n)
_RUN_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)  # (fn, table, n, wake)

_IR = """
@remaining = internal global i64 0, align 128     ; chunks of the job not yet claimed (<= 0: none)
@done = internal global i64 0, align 128          ; chunks of the job finished
@job_fn = internal global ptr null, align 128
@job_table = internal global ptr null, align 8
@job_n = internal global i64 0, align 8
@busy = internal global i32 0, align 128          ; 1 while a caller owns the slot
@seq = internal global i32 0, align 128           ; the futex word: bumped when sleepers are woken
@sleepers = internal global i32 0, align 128
@waiting = internal global i32 0, align 128       ; the futex word the caller sleeps on: 1 while it may sleep
@spin_ticks = internal global i64 0, align 128
@burst_ticks = internal global i64 0, align 8     ; a job this soon after the last one ended wakes the workers
@last_end = internal global i64 0, align 128      ; when the last job ended (ticks)
@tj_syscall = external global i8

declare void @llvm.x86.sse2.pause()
declare i64 @llvm.readcyclecounter()

define internal i1 @poll(ptr %counter, i64 %above) nounwind {   ; until *counter > above, or spin_ticks passed
entry:
  %start = call i64 @llvm.readcyclecounter()
  br label %check
check:
  %v = load atomic i64, ptr %counter acquire, align 8
  %up = icmp sgt i64 %v, %above
  br i1 %up, label %yes, label %pause
pause:
  call void @llvm.x86.sse2.pause()
  %now = call i64 @llvm.readcyclecounter()
  %spent = sub i64 %now, %start
  %limit = load atomic i64, ptr @spin_ticks monotonic, align 8
  %more = icmp ult i64 %spent, %limit
  br i1 %more, label %check, label %no
yes:
  ret i1 true
no:
  ret i1 false
}

define internal void @claim_chunks() nounwind {
entry:
  br label %claim
claim:
  %r = atomicrmw sub ptr @remaining, i64 1 seq_cst
  %got = icmp sgt i64 %r, 0
  br i1 %got, label %run, label %out
run:
  %fn = load ptr, ptr @job_fn
  %table = load ptr, ptr @job_table
  %n = load i64, ptr @job_n
  %c = sub i64 %r, 1
  call void %fn(ptr %table, i64 %c, i64 %n)
  %d = atomicrmw add ptr @done, i64 1 seq_cst
  %d1 = add i64 %d, 1
  %last = icmp eq i64 %d1, %n
  br i1 %last, label %last_done, label %claim
last_done:
  %waits = load atomic i32, ptr @waiting seq_cst, align 4
  %asleep = icmp ne i32 %waits, 0
  br i1 %asleep, label %wake, label %claim
wake:
  store atomic i32 0, ptr @waiting seq_cst, align 4
  %w = call i64 (i64, ...) @tj_syscall(i64 SYS_FUTEX, ptr @waiting, i64 FUTEX_WAKE_PRIVATE, i64 1)
  br label %claim
out:
  ret void
}

define void @tj_pool_parallel_for(ptr %fn, ptr %table, i64 %n, i64 %worth_waking) nounwind {
entry:
  %many = icmp sgt i64 %n, 1
  br i1 %many, label %awake, label %serial
awake:                     ; a small job after a pause runs serially while the workers sleep
  %sleeping = load atomic i32, ptr @sleepers monotonic, align 4
  %napping = icmp sgt i32 %sleeping, 0
  %small = icmp eq i64 %worth_waking, 0
  %now = call i64 @llvm.readcyclecounter()
  %last = load atomic i64, ptr @last_end monotonic, align 8
  %since = sub i64 %now, %last
  %burst = load i64, ptr @burst_ticks
  %paused = icmp ugt i64 %since, %burst
  %quiet = and i1 %napping, %paused
  %alone = and i1 %quiet, %small
  br i1 %alone, label %serial, label %own
own:
  %x = cmpxchg ptr @busy, i32 0, i32 1 acquire monotonic
  %owned = extractvalue {i32, i1} %x, 1
  br i1 %owned, label %publish, label %serial
serial:
  %c = phi i64 [0, %entry], [0, %awake], [0, %own], [%c1, %serial_body]
  %more = icmp slt i64 %c, %n
  br i1 %more, label %serial_body, label %exit
serial_body:
  call void %fn(ptr %table, i64 %c, i64 %n)
  %c1 = add i64 %c, 1
  br label %serial
publish:
  store ptr %fn, ptr @job_fn
  store ptr %table, ptr @job_table
  store i64 %n, ptr @job_n
  store atomic i64 0, ptr @done seq_cst, align 8
  store atomic i64 %n, ptr @remaining seq_cst, align 8
  %s = load atomic i32, ptr @sleepers seq_cst, align 4
  %asleep = icmp sgt i32 %s, 0
  br i1 %asleep, label %wake, label %work
wake:
  %old = atomicrmw add ptr @seq, i32 1 seq_cst
  %helpers = sub i64 %n, 1
  %w = call i64 (i64, ...) @tj_syscall(i64 SYS_FUTEX, ptr @seq, i64 FUTEX_WAKE_PRIVATE, i64 %helpers)
  br label %work
work:
  call void @claim_chunks()
  %n1 = sub i64 %n, 1
  %finished = call i1 @poll(ptr @done, i64 %n1)
  br i1 %finished, label %release, label %sleep
sleep:
  store atomic i32 1, ptr @waiting seq_cst, align 4
  %d2 = load atomic i64, ptr @done seq_cst, align 8
  %all2 = icmp sge i64 %d2, %n
  br i1 %all2, label %release, label %nap
nap:
  %z = call i64 (i64, ...) @tj_syscall(i64 SYS_FUTEX, ptr @waiting, i64 FUTEX_WAIT_PRIVATE, i64 1, ptr null)
  br label %sleep
release:
  store atomic i32 0, ptr @waiting monotonic, align 4
  store atomic i32 0, ptr @busy release, align 4
  br label %exit
exit:
  %end = call i64 @llvm.readcyclecounter()
  store atomic i64 %end, ptr @last_end monotonic, align 8
  ret void
}

define void @tj_pool_worker() nounwind {
entry:
  br label %top
top:
  %has = call i1 @poll(ptr @remaining, i64 0)
  br i1 %has, label %work, label %sleep
work:
  call void @claim_chunks()
  br label %top
sleep:
  %seen = load atomic i32, ptr @seq seq_cst, align 4
  %s0 = atomicrmw add ptr @sleepers, i32 1 seq_cst
  %r2 = load atomic i64, ptr @remaining seq_cst, align 8
  %late = icmp sgt i64 %r2, 0
  br i1 %late, label %awake, label %wait
wait:
  %seen64 = zext i32 %seen to i64
  %w = call i64 (i64, ...) @tj_syscall(i64 SYS_FUTEX, ptr @seq, i64 FUTEX_WAIT_PRIVATE, i64 %seen64, ptr null)
  br label %awake
awake:
  %s1 = atomicrmw sub ptr @sleepers, i32 1 seq_cst
  br label %top
}

define void @tj_pool_configure(i64 %ticks, i64 %burst) nounwind {
  store atomic i64 %ticks, ptr @spin_ticks seq_cst, align 8
  store i64 %burst, ptr @burst_ticks
  ret void
}

define void @tj_pool_reset() nounwind {
  store i64 0, ptr @remaining
  store i64 0, ptr @done
  store i32 0, ptr @busy
  store i32 0, ptr @seq
  store i32 0, ptr @sleepers
  store i32 0, ptr @waiting
  ret void
}

define i64 @tj_pool_ticks() nounwind {
  %t = call i64 @llvm.readcyclecounter()
  ret i64 %t
}
"""
for _name, _value in (("SYS_FUTEX", _SYS_FUTEX), ("FUTEX_WAKE_PRIVATE", _FUTEX_WAKE_PRIVATE),
                      ("FUTEX_WAIT_PRIVATE", _FUTEX_WAIT_PRIVATE)):
    _IR = _IR.replace(_name, str(_value))
_NAMES = ["tj_pool_parallel_for", "tj_pool_worker", "tj_pool_configure", "tj_pool_reset", "tj_pool_ticks"]


class _NativePool:
    """The pool's code linked into this process, and its worker threads (started by `start`)."""

    def __init__(self, syscall):
        symbols = {"tj_syscall": syscall}
        objects = disk_cache.cached_object_code("thread pool", llvm.module_header() + _IR, _NAMES, symbols,
                                                folder="runtime", alone=True,
                                                passes=llvm.LIGHT_PASSES).objects
        self.code = llvm.load_objects(objects, _NAMES, symbols, permanent=True)
        self.address = self.code.addresses["tj_pool_parallel_for"]
        self.run = _RUN_TYPE(self.address)
        self._worker = ctypes.CFUNCTYPE(None)(self.code.addresses["tj_pool_worker"])
        self._configure = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64)(self.code.addresses["tj_pool_configure"])
        self._reset = ctypes.CFUNCTYPE(None)(self.code.addresses["tj_pool_reset"])
        self.ticks = ctypes.CFUNCTYPE(ctypes.c_int64)(self.code.addresses["tj_pool_ticks"])
        self.ticks_per_us = self._ticks_per_us()
        self.spin(SPIN_US)

    def _ticks_per_us(self):
        """The time-stamp counter's rate against perf_counter: the largest of five 100 us samples. A sample
        interrupted between its two clocks' reads (by the OS, or another thread taking the GIL: the pool starts
        while the main thread compiles) reads low, never high; one sample read 37 and 320 ticks/us instead of
        2590 in 2 of 16 processes, its workers then polling 7-70x too briefly."""
        samples = []
        for _ in range(5):
            t0, c0 = time.perf_counter(), self.ticks()
            while time.perf_counter() - t0 < 1e-4:
                pass
            samples.append((self.ticks() - c0) / ((time.perf_counter() - t0) * 1e6))
        return max(max(samples), 1.0)

    def spin(self, us):
        """Let idle workers poll for us microseconds before they sleep (and jobs that come within BURST_US of the
        last one wake them, whatever their size)."""
        self._configure(int(us * self.ticks_per_us), int(BURST_US * self.ticks_per_us))

    def start(self):
        for _ in range(runtime.NUM_THREADS - 1):
            threading.Thread(target=self._worker, name="tracejit-pool", daemon=True).start()

    def forked(self):
        self._reset()
        self.start()


def _futex_syscall():
    """The address of libc's `syscall`, when a private futex wake answers through it; else None."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        syscall = libc.syscall
    except (OSError, AttributeError):
        return None
    syscall.restype = ctypes.c_long
    word = ctypes.c_int32(0)
    woken = syscall(ctypes.c_long(_SYS_FUTEX), ctypes.byref(word), ctypes.c_long(_FUTEX_WAKE_PRIVATE),
                    ctypes.c_long(1), None)
    return ctypes.cast(syscall, ctypes.c_void_p).value if woken == 0 else None


_lock = threading.Lock()
_cell = ctypes.c_void_p(0)    # the address of the tj_parallel_for generated code calls (it loads it per call)
CELL = ctypes.addressof(_cell)
_decided = False          # whether `native` decided which pool runs the loops
_native_ok = False        # its answer
_syscall = None           # libc's syscall, for the native pool
_starting = None          # the thread compiling and starting the native pool
_started = []             # what it left: the _NativePool, or the exception it raised


def native():
    """Whether parallel loops run on the native pool (where it can work). Until it runs (`start`), the cell
    holds the Python pool's tj_parallel_for, which starts it."""
    global _decided, _native_ok, _syscall
    if not _decided:
        with _lock:
            if not _decided:
                _syscall = _futex_syscall() if NATIVE else None
                _cell.value = ctypes.cast(_run_chunks, ctypes.c_void_p).value
                _native_ok, _decided = _syscall is not None, True
    return _native_ok


def start(wait=False):
    """Start compiling and starting the native pool on another thread, if it is not under way (it takes 6-15
    ms, meanwhile the Python pool runs the loops); it puts its tj_parallel_for into the cell when it runs.
    wait: return the pool once it runs (None where there is none)."""
    global _starting
    if not native():
        return None
    with _lock:
        if _starting is None:
            _starting = threading.Thread(target=_start, name="tracejit-pool-start")   # (joined at exit)
            _starting.start()
    if not wait:
        return None
    _starting.join()
    if isinstance(_started[0], _NativePool):
        return _started[0]
    raise RuntimeError("tracejit: the native thread pool did not start") from _started[0]


def _start():
    try:
        pool = _NativePool(_syscall)
        pool.start()
        _cell.value = pool.address
        _started.append(pool)
    except BaseException as e:  # noqa: BLE001 -- re-raised by start(wait=True)
        log.warning("tracejit: the native thread pool did not start (%r); the Python pool runs parallel loops", e)
        _started.append(e)


def _forked():
    global _lock, _starting
    _lock = threading.Lock()
    if _started and isinstance(_started[0], _NativePool):
        _started[0].forked()
    elif not _started:
        _starting = None     # a thread starting the pool is not in this process: start again on first use


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


_par_functions = {}       # address of a chunk function -> its ctypes function (the Python pool's)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
def _run_chunks(address, table, chunks, wake):
    """tj_parallel_for until the native pool runs, or where it cannot: starts it, and runs the chunk function
    at address on every chunk over the Python pool's threads."""
    if _starting is None:
        start()
    fn = _par_functions.get(address)
    if fn is None:
        if len(_par_functions) > 4096:
            _par_functions.clear()
        fn = _par_functions[address] = PAR_TYPE(address)
    runtime.parallel_for(lambda c: fn(table, c, chunks), chunks)


def emit_call(f, fn, table, chunks, wake):
    """Write into the llvm_text.Function f the call `tj_parallel_for(fn, table, chunks, wake)` (fn and table: ptr
    values, chunks: an i64, wake: whether the job is worth waking sleeping workers), through the cell holding its
    address."""
    native()
    pool = f.emit(f"load ptr, ptr {f.module.symbol(CELL, 'tj_parallel_for')}")
    f.line(f"call void {pool}(ptr {fn}, ptr {table}, i64 {chunks}, i64 {int(wake)})")


def parallel_for(address, table, chunks, wake):
    """Run the chunk function at address, `(table, c, chunks)`, on every chunk c over the threads (wake: the job is
    worth waking sleeping workers)."""
    if _started and _native_ok and isinstance(_started[0], _NativePool):
        _started[0].run(address, table, chunks, int(wake))
    else:
        native()
        _run_chunks(address, table, chunks, int(wake))
