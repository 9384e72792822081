"""The thread pool parallel loops run on (backend/thread_pool.py): the native pool and the Python fallback
each run every chunk exactly once, for any chunk count, from several Python threads at once, nested, and in
a forked child; jitted parallel loops (also inside control flow and under vmap) equal the reference
interpreter's results."""
import ctypes
import itertools
import multiprocessing
import threading
import time

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.backend import llvm, runtime, steps, thread_pool
from tracejit.backend.executable import Executable
from tracejit.core.trace import eval_ir

# count: table[c] += 1, table[64 + c] = n and table[128 + c] = the thread's pthread_self(). nested: chunk c runs
# `count` over 5 chunks on the table from word 8 c.
_CHUNKS_IR = """
@tj_parallel_for = external global i8
declare i64 @pthread_self()

define void @count(ptr %t, i64 %c, i64 %n) nounwind {
  %p = getelementptr i64, ptr %t, i64 %c
  %v = load i64, ptr %p
  %v1 = add i64 %v, 1
  store i64 %v1, ptr %p
  %c64 = add i64 %c, 64
  %q = getelementptr i64, ptr %t, i64 %c64
  store i64 %n, ptr %q
  %c128 = add i64 %c, 128
  %r = getelementptr i64, ptr %t, i64 %c128
  %self = call i64 @pthread_self()
  store i64 %self, ptr %r
  ret void
}

define void @nested(ptr %t, i64 %c, i64 %n) nounwind {
  %row = mul i64 %c, 8
  %p = getelementptr i64, ptr %t, i64 %row
  %pool = load ptr, ptr @tj_parallel_for
  call void %pool(ptr @count, ptr %p, i64 5, i64 1)
  ret void
}
"""


@pytest.fixture(params=["native", "python"])
def pool(request, monkeypatch):
    """Which pool runs the chunks: the native one, or the Python one it falls back to."""
    if request.param == "native":
        if thread_pool.start(wait=True) is None:
            pytest.skip("no native pool on this platform")
    else:
        thread_pool.start(wait=True)
        monkeypatch.setattr(thread_pool, "_native_ok", False)
        monkeypatch.setattr(thread_pool._cell, "value", ctypes.cast(thread_pool._run_chunks, ctypes.c_void_p).value)
    return request.param


def _chunk_functions():
    """The chunk functions above (an llvm.Code: their addresses, kept mapped while it lives), calling the pool
    in use."""
    objects, _ = llvm.compile_objects(llvm.module_header() + _CHUNKS_IR)
    pthread_self = ctypes.cast(ctypes.CDLL(None).pthread_self, ctypes.c_void_p).value
    code = llvm.load_objects(objects, ["count", "nested"], {"tj_parallel_for": thread_pool.CELL,
                                                             "pthread_self": pthread_self})
    return code


def _run_counting(address, n, rounds, wake=True):
    table = np.zeros(200, np.int64)
    for _ in range(rounds):
        thread_pool.parallel_for(address, table.ctypes.data, n, wake)
    return table


@pytest.mark.parametrize("wake", [True, False])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 17, 64])
def test_every_chunk_runs_once(pool, n, wake):
    code = _chunk_functions()
    fns = code.addresses
    table = _run_counting(fns["count"], n, 200, wake)
    np.testing.assert_array_equal(table[:64], [200] * n + [0] * (64 - n))
    np.testing.assert_array_equal(table[64:128], [n] * n + [0] * (64 - n))


@pytest.mark.skipif(runtime.NUM_THREADS < 2, reason="one CPU: no workers")
def test_a_small_job_leaves_sleeping_workers_asleep():
    """With the workers asleep (after a pause longer than their polling), a job not worth waking them runs every
    chunk on the calling thread; one worth it still runs every chunk once."""
    if thread_pool.start(wait=True) is None:
        pytest.skip("no native pool on this platform")
    fns = _chunk_functions().addresses
    libc = ctypes.CDLL(None)
    libc.pthread_self.restype = ctypes.c_uint64
    caller = libc.pthread_self()
    for _ in range(5):
        time.sleep(0.01)        # (the workers poll for SPIN_US, 50 us, then sleep)
        table = _run_counting(fns["count"], 8, 1, wake=False)
        np.testing.assert_array_equal(table[:8], 1)
        np.testing.assert_array_equal(table[128:136].view(np.uint64), caller)
        time.sleep(0.01)
        np.testing.assert_array_equal(_run_counting(fns["count"], 8, 1, wake=True)[:8], 1)


def test_nested_loops_and_concurrent_callers(pool):
    """A chunk that runs a parallel loop itself (the pool is busy: it runs the inner chunks), and four Python
    threads calling at once; nothing hangs."""
    code = _chunk_functions()
    fns = code.addresses

    def check_nested(table, n, rounds):
        np.testing.assert_array_equal(table[: 8 * n].reshape(n, 8), [[rounds] * 5 + [0] * 3] * n)
        np.testing.assert_array_equal(table[64: 64 + 8 * n].reshape(n, 8), [[5] * 5 + [0] * 3] * n)

    check_nested(_run_counting(fns["nested"], 3, 50), 3, 50)
    results = {}

    def caller(k):
        results[k] = _run_counting(fns["count" if k % 2 else "nested"], 3 + k, 300)

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    for k in (1, 3):
        np.testing.assert_array_equal(results[k][:64], [300] * (3 + k) + [0] * (61 - k))
    for k in (0, 2):
        check_nested(results[k], 3 + k, 300)


def _check(fun, *args):
    """fun compiled, against eval_ir of its IR; returns the compiled result."""
    compiled = tj.jit(fun)(*args)
    reference = eval_ir(tj.make_ir(fun)(*args), *tj.tree_util.tree_leaves(args))
    for a, b in zip(tj.tree_util.tree_leaves(compiled), reference, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    return compiled


def _elementwise(x):
    return tnp.tanh(x) * 0.9 + 0.1


def _body_loops(x):
    """A scan inside a while_loop, each body holding a parallel loop (steps.split_in_body)."""
    def scan_body(c, row):
        c = _elementwise(c) + row[0]
        return c, tnp.sum(c)

    def while_body(s):
        c, sums = lax.scan(scan_body, s[1], x[:4])
        return s[0] + 1, c, s[2] + sums

    return lax.while_loop(lambda s: s[0] < 3, while_body, (0, x[4], tnp.zeros(4, x.dtype)))


@pytest.mark.parametrize("threads", [3, 5])
def test_jitted_parallel_loops_equal_the_reference(pool, monkeypatch, threads):
    """Every loop split (PARALLEL_NS 0) into chunk counts that do not divide the sizes: elementwise, row sums,
    a whole sum and column sums (partial results), a fori_loop body, nested control flow, and vmapped."""
    monkeypatch.setattr(steps, "PARALLEL_NS", 0)
    monkeypatch.setattr(steps, "WAKE_NS", -1)
    monkeypatch.setattr(runtime, "NUM_THREADS", threads)
    x = np.random.default_rng(0).uniform(-1, 1, (7, 1001)).astype(np.float32)
    parallel = tj.jit(_elementwise).lower(x)._entry.executable.steps
    assert any(isinstance(s, steps.ParallelStep) and s.chunks == threads for s in parallel)
    _check(_elementwise, x)
    _check(lambda m: tnp.sum(tnp.exp(m), axis=1), x)
    _check(lambda m: tnp.sum(m * m), x[0])
    _check(lambda m: tnp.sum(tnp.exp(m), axis=0), x)             # column sums: partial rows of sums, combined
    _check(lambda m: tnp.max(m.reshape(7, 7, 143), axis=(0, 1)), x)
    _check(lambda m: tnp.sum(m, axis=0), np.tile(x, 5)[:, :steps.SCALAR_COMBINE + 1])   # a vectorized combine
    column_sums = tj.jit(lambda m: tnp.sum(m, axis=0)).lower(x)._entry.executable.steps
    assert any(isinstance(s, steps.ParallelStep) and s.chunks == threads for s in column_sums)
    fori = lambda v: lax.fori_loop(0, 3, lambda i, c: _elementwise(c), v)
    assert "@tj_parallel_for" in tj.jit(fori).lower(x[0]).as_llvm()
    _check(fori, x[0])
    _check(_body_loops, x)
    _check(tj.vmap(_body_loops), np.stack([x, x[::-1]]))


@pytest.mark.parametrize("threads", [2, 3])
def test_scans_without_carries_run_their_iterations_over_the_threads(pool, monkeypatch, threads):
    """lax.map and the blocks of a batched while loop (scans without carries) split their iterations over the
    threads, each chunk with an arena of its own, forward and reversed, with nested parallel loops in the body:
    the reference interpreter's results. A body with an effect keeps its order (one thread)."""
    from tracejit.backend import kernels
    monkeypatch.setattr(kernels, "PARALLEL_ROWS_WORK", 0)
    monkeypatch.setattr(steps, "PARALLEL_NS", 0)
    monkeypatch.setattr(steps, "WAKE_NS", -1)
    monkeypatch.setattr(runtime, "NUM_THREADS", threads)
    x = np.random.default_rng(1).uniform(-1, 1, (7, 301)).astype(np.float32)

    def rows(m):      # per row: intermediates in the body's arena, two outputs, a const
        return lax.map(lambda r: (tnp.tanh(r * m[0]).sum(), _elementwise(r) * 2), m)

    assert "@rows" in tj.jit(rows).lower(x).as_llvm()
    _check(rows, x)
    wide = np.random.default_rng(2).uniform(-1, 1, (256, 2001))      # (long enough that the chunks overlap)
    centred = tj.jit(lambda m: lax.map(lambda r: r - tnp.mean(tnp.exp(r)), m))
    for _ in range(3):     # (the mean is in the arena: shared by the chunks, they would overwrite it)
        np.testing.assert_allclose(centred(wide), wide - np.exp(wide).mean(1, keepdims=True), rtol=1e-12)
    _check(lambda m: lax.scan(lambda c, r: (c, tnp.exp(r) - m[1]), 0.0, m, reverse=True)[1], x)
    newton = tj.vmap(lambda a: lax.while_loop(lambda v: tnp.abs(v * v - a) > 1e-6 * a, lambda v: (v + a / v) / 2, a))
    assert "@rows" in tj.jit(newton).lower(np.ones(200)).as_llvm()
    _check(newton, np.linspace(1.0, 50.0, 200))
    printed = tj.jit(lambda m: lax.map(lambda r: tj.debug.print("{}", r[0]) or r * 2, m))
    assert "@rows" not in printed.lower(x).as_llvm()


def test_many_threads_call_one_jitted_function(pool, monkeypatch):
    monkeypatch.setattr(steps, "PARALLEL_NS", 0)
    monkeypatch.setattr(steps, "WAKE_NS", -1)
    f = tj.jit(lambda v: lax.fori_loop(0, 4, lambda i, c: _elementwise(c), v))
    inputs = [np.full(3001, k / 10, np.float32) for k in range(6)]
    want = [np.asarray(eval_ir(tj.make_ir(f)(v), v)[0]) for v in inputs]
    failures = []

    def caller(k):
        for _ in range(40):
            if not np.allclose(f(inputs[k]), want[k], rtol=1e-6):
                failures.append(k)

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads) and failures == []


def _in_child(queue, f, x):
    queue.put((np.asarray(f(x)), np.asarray(tj.jit(lambda v: _elementwise(v) * 2)(x))))


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")     # (JAX's, when other tests imported it)
def test_forked_child_runs_parallel_loops(pool, monkeypatch):
    """A child forked after the pool ran (its threads are gone) runs compiled code and compiles new code."""
    monkeypatch.setattr(steps, "PARALLEL_NS", 0)
    monkeypatch.setattr(steps, "WAKE_NS", -1)
    x = np.linspace(-1, 1, 20001, dtype=np.float32)
    f = tj.jit(lambda v: lax.fori_loop(0, 2, lambda i, c: _elementwise(c), v))
    want = np.asarray(f(x))
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_in_child, args=(queue, f, x))
    child.start()
    got, doubled = queue.get(timeout=120)
    child.join(timeout=60)
    assert child.exitcode == 0
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(doubled, np.asarray(_elementwise(x)) * 2, rtol=1e-5, atol=1e-6)


def test_the_split_threshold_follows_the_pool(pool):
    """A loop estimated at tens of us splits on the native pool (1 us a job) but not on the Python one (tens of us a job),
    whatever the platform flag says: the pool actually in use decides."""
    x = np.ones(100_000, np.float32)
    plan = tj.jit(lambda v: tnp.tanh(v) * 2.0).lower(x)._entry.executable.steps
    assert any(isinstance(s, steps.ParallelStep) for s in plan) == (pool == "native")
    assert steps.parallel_ns() == steps.PARALLEL_NS * (1 if pool == "native" else steps.PYTHON_POOL_FACTOR)


def test_parallel_steps_run_in_the_fast_entry(pool, monkeypatch):
    """On the native pool the generated entries run parallel and split steps themselves (the split chosen by
    the run-time size); on the Python pool parallel calls take the Python driver."""
    monkeypatch.setattr(steps, "PARALLEL_NS", 0)
    monkeypatch.setattr(steps, "WAKE_NS", -1)
    driven, execute = [], Executable._execute
    monkeypatch.setattr(Executable, "_execute", lambda self, *a: driven.append(1) or execute(self, *a))
    fixed = tj.jit(_elementwise, cache=False)
    symbolic = tj.jit(_elementwise, dynamic_dims={"x": {0: "n"}}, cache=False)
    assert ("@tj_parallel_for" in symbolic.lower(np.ones((3, 5), np.float32)).as_llvm()) == (pool == "native")
    for n in (1, 1001, 2, 3000):
        x = np.linspace(-2, 2, 5 * n, dtype=np.float32).reshape(n, 5)
        want = np.asarray(eval_ir(tj.make_ir(_elementwise)(x), x)[0])
        for f in (fixed, symbolic):
            np.testing.assert_allclose(f(x), want, rtol=1e-6, atol=1e-6)   # (fixed: compiles; the driver runs it)
            driven.clear()
            np.testing.assert_allclose(f(x), want, rtol=1e-6, atol=1e-6)
            assert driven if pool == "python" and n == 3000 else pool == "python" or not driven


def test_native_pool_without_polling():
    """Workers and callers that sleep on their futexes at once (no polling) still run every chunk once and
    wake each other."""
    native = thread_pool.start(wait=True)
    if native is None:
        pytest.skip("no native pool on this platform")
    code = _chunk_functions()
    native.spin(0)
    try:
        for n in (2, 3, 17):
            table = _run_counting(code.addresses["count"], n, 300)
            np.testing.assert_array_equal(table[:n], 300)
        test_nested_loops_and_concurrent_callers("native")
    finally:
        native.spin(thread_pool.SPIN_US)


def test_the_time_stamp_counter_rate_survives_an_interrupted_sample(monkeypatch):
    """The pool's spin time is counted in time-stamp counter ticks, their rate measured against perf_counter
    at start-up while other threads run: a thread interrupted between the two clocks' reads must not make
    the rate (and so the workers' polling) many times too low. Both clocks run on one virtual time here, 2500
    ticks a microsecond, and the thread is interrupted for 5 ms once, after it read the counter at the end of
    the first sample and before it read perf_counter."""
    now, ticks_reads, late = [0.0], itertools.count(1), []

    def perf_counter():
        now[0] += 5000.0 if late and late.pop() else 0.1
        return now[0] / 1e6

    def ticks():
        now[0] += 0.1
        if next(ticks_reads) == 2:
            late.append(True)
        return now[0] * 2500

    monkeypatch.setattr(time, "perf_counter", perf_counter)
    clock = type("Clock", (), {"ticks": staticmethod(ticks)})()
    assert 2400 < thread_pool._NativePool._ticks_per_us(clock) <= 2500
