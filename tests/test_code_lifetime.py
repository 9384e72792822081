"""Code lifetime and the memory cache's bounds: a dropped jitted function frees its machine code, the
entries of a function and of the process are bounded (least recently used go first), and no code is
freed while a call runs it. Memory is measured in fresh processes (RSS after warming up), where
nothing else allocates."""
import gc
import json
import os
import subprocess
import sys
import textwrap
import threading
import weakref

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend import llvm


def run_python(code, tmp_path, **env):
    """The JSON that code prints last, run in a fresh process with its own disk cache."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "TRACEJIT_CACHE_DIR": str(tmp_path / "cache"), **env})
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def codes(f):
    """Weak references to the code of each of f's entries."""
    return [weakref.ref(e.executable.code) for e in f._signatures.entries.values()]


def test_dropped_function_frees_its_code_without_the_garbage_collector():
    gc.disable()      # freed when the last reference goes, not at the next collection
    try:
        before = llvm.engines_alive()
        f = tj.jit(lambda v, w: tnp.tanh(v) * 2.0 + w)
        big = np.linspace(-1.0, 1.0, 1 << 20)        # a loop split over the threads (a parallel step)
        for n in (5, 7, 1 << 20):                    # a shape, then symbolic code
            np.testing.assert_allclose(f(big[:n], big[:n]), np.tanh(big[:n]) * 2.0 + big[:n], rtol=1e-12)
        np.testing.assert_allclose(f({"a": big[:3]}["a"], w=big[:3]), np.tanh(big[:3]) * 2 + big[:3], rtol=1e-12)
        refs = codes(f)
        assert len(refs) >= 2 and all(r() is not None for r in refs)
        del f
        assert all(r() is None for r in refs)
        assert llvm.engines_alive() <= before + 1     # the engine now filling may remain
    finally:
        gc.enable()


def test_memory_of_1000_created_and_dropped_functions(tmp_path):
    """RSS growth over 1,000 jitted functions created, called and dropped, after 200 to warm up: under
    5 MiB (each leaked about 13 KiB of LLVM memory, 100 KiB for larger functions, before code was freed)."""
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("RSS is read from /proc/self/statm (Linux)")
    out = run_python("""
        import ctypes, ctypes.util, gc, json
        import numpy as np, tracejit as tj, tracejit.numpy as tnp
        from tracejit.backend import llvm
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        x = np.linspace(0.0, 1.0, 4)

        def rss():
            gc.collect()
            if hasattr(libc, "malloc_trim"):
                libc.malloc_trim(0)       # return freed heap pages, so that RSS shows what is held
            return int(open("/proc/self/statm").read().split()[1]) * 4096

        def created_and_dropped(k):
            c = np.full(4, float(k % 7))
            f = tj.jit(lambda v: tnp.tanh(v * c) + 1.0)   # each its own constant, one code: loaded from disk
            assert np.allclose(f(x), np.tanh(x * c) + 1.0)

        for k in range(200):
            created_and_dropped(k)
        before = rss()
        for k in range(1000):
            created_and_dropped(k)
        print(json.dumps({"growth": rss() - before, "engines": llvm.engines_alive()}))
    """, tmp_path)
    assert out["growth"] < 5 << 20, f"RSS grew by {out['growth'] / 2**20:.1f} MiB"
    assert out["engines"] <= 1


def test_code_is_not_freed_while_a_call_runs_it(tmp_path):
    """A call runs in a thread while the main thread evicts its entry (a bound of 1 entry), drops every
    reference and loads more code (which disposes dead engines, one module per engine here): the running
    code stays mapped until the call returns, and is freed after."""
    out = run_python("""
        import json, threading, time, weakref
        import numpy as np, tracejit as tj
        from tracejit.backend import llvm
        llvm.ENGINE_GROUP = 1
        tj.config.memory_cache_max_entries = 1
        f = tj.jit(lambda x, n: tj.lax.fori_loop(0, n, lambda i, c: c * 0.999 + 1.0, x))
        x = np.zeros(8192)                       # large enough for the call to release the GIL
        f(x, np.int64(1))
        start = time.perf_counter()
        f(x, np.int64(2000))
        n = int(1.5 * 2000 / (time.perf_counter() - start))     # about 1.5 s
        code = weakref.ref(next(iter(f._signatures.entries.values())).executable.code)
        result, started = {}, threading.Event()

        def run():
            started.set()
            result["out"] = f(x, np.int64(n))

        thread = threading.Thread(target=run)
        thread.start()
        started.wait()
        time.sleep(0.3)
        f(np.zeros(3), np.int64(1))             # another signature: the running one is evicted
        for k in range(3):
            tj.jit(lambda v: v + float(k))(np.ones(2))    # loads dispose the engines of dead code
        overlapped, alive_during = thread.is_alive(), code() is not None
        thread.join()
        tj.jit(lambda v: v * 3.0)(np.ones(2))
        print(json.dumps({"overlapped": overlapped, "alive_during": alive_during, "freed_after": code() is None,
                          "evicted": f.cache_info().evicted, "n": n, "value": float(result["out"][0])}))
    """, tmp_path)
    assert out["overlapped"], "the call ended before the eviction: the test did not test anything"
    assert out["alive_during"] and out["freed_after"] and out["evicted"] == 1
    np.testing.assert_allclose(out["value"], 1000.0 * (1.0 - 0.999 ** out["n"]), rtol=1e-9)


@pytest.fixture
def bounds(monkeypatch):
    """set(entries=..., nbytes=...): the memory cache's bounds for the test."""
    def set_bounds(entries=256, nbytes=512 << 20):
        monkeypatch.setattr(tj.config, "memory_cache_max_entries", entries)
        monkeypatch.setattr(tj.config, "memory_cache_max_bytes", nbytes)
    monkeypatch.setattr(tj.config, "symbolic_dims_after", 0)
    return set_bounds


def shapes(f):
    return [key[1][0].shape for key in f._signatures.entries]


def test_entries_per_function_are_bounded_least_recently_used_first(bounds):
    bounds(entries=3)
    f = tj.jit(lambda v: tnp.sin(v) + 1.0)
    for n in (1, 2, 3):
        f(np.ones(n))
    f(np.ones(1))                                   # 1 is now more recently used than 2 and 3
    evicted = codes(f)[1]
    f(np.ones(4))
    assert shapes(f) == [(1,), (3,), (4,)] and evicted() is None
    f(np.ones(3))
    f(np.ones(5))                                   # evicts 1 (3 and 4 are newer)
    assert shapes(f) == [(3,), (4,), (5,)]
    info = f.cache_info()
    assert (info.entries, info.evicted, info.misses) == (3, 2, 5) and "2 evicted" in str(info)
    np.testing.assert_allclose(f(np.full(2, 0.5)), np.sin(np.full(2, 0.5)) + 1.0)   # compiled again
    assert f.cache_info().misses == 6 and len(shapes(f)) == 3


def test_process_budget_spans_functions_and_frees_fast_paths(tmp_path):
    """(In a fresh process: the budget counts every jitted function of the process.)"""
    out = run_python("""
        import json, weakref, numpy as np, tracejit as tj, tracejit.numpy as tnp
        tj.config.symbolic_dims_after = 0
        f, g = tj.jit(lambda v: v * 2.0 + 1.0), tj.jit(lambda v: tnp.exp(v) - 1.0)
        f(np.ones(1))
        g(np.ones(1))
        tj.config.memory_cache_max_bytes = int(2.1 * g._signatures.nbytes)   # room for two of g's entries
        shapes = lambda h: [key[1][0].shape[0] for key in h._signatures.entries]
        f_code = weakref.ref(next(iter(f._signatures.entries.values())).executable.code)
        g(np.ones(2))                      # f's entry, the least recently used, goes
        steps = [(shapes(f), shapes(g), f_code() is None)]
        value = f(np.ones(1)).tolist()     # its fast path was dropped with it: compiled again
        steps.append((shapes(f), shapes(g), f.cache_info().misses))
        tj.config.memory_cache_max_bytes = 0
        g(np.ones(3))                      # the entry just made always stays
        steps.append((shapes(f), shapes(g), g.cache_info().evicted))
        print(json.dumps({"steps": steps, "value": value}))
    """, tmp_path)
    assert out["value"] == [3.0]
    assert out["steps"] == [[[], [1, 2], True], [[1], [2], 2], [[], [3], 2]]


def test_bounds_from_the_environment(tmp_path):
    out = run_python("""
        import json, numpy as np, tracejit as tj
        f = tj.jit(lambda v: v + 1.0)
        for n in range(1, 6):
            f(np.ones(n))
        print(json.dumps([tj.config.memory_cache_max_entries, tj.config.memory_cache_max_bytes,
                          f.cache_info().entries]))
    """, tmp_path, TRACEJIT_MEMORY_CACHE_MAX_ENTRIES="2", TRACEJIT_MEMORY_CACHE_MAX_BYTES="12345678",
        TRACEJIT_SYMBOLIC_DIMS_AFTER="0")
    assert out == [2, 12345678, 2]


def test_threads_calling_while_entries_are_evicted(bounds):
    bounds(entries=2)
    f = tj.jit(lambda v: tnp.cos(v) * v)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(40):
                x = rng.normal(size=int(rng.integers(1, 7)))
                np.testing.assert_allclose(f(x), np.cos(x) * x, rtol=1e-12)
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(shapes(f)) <= 2 and f.cache_info().evicted > 0
