"""The compile cache: persistent object code on disk, cache_info(), the miss log."""
import ctypes
import hashlib
import hmac
import json
import logging
import os
import re
import subprocess
import sys
import textwrap

import llvmlite.binding as ll
import numpy as np
import pytest
import rich.console

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend import disk_cache, generic_entry, llvm, runtime

W = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)   # a constant the code closes over


def model(x, w):
    return {"y": tnp.tanh(x @ w) * 2.0 + W[1], "s": tnp.sum(tnp.exp(-x * x), axis=1)}


def expected(x, w):
    return {"y": np.tanh(x @ w) * 2.0 + W[1], "s": np.exp(-x * x).sum(axis=1)}


def inputs(rows=5):
    rng = np.random.default_rng(rows)
    return rng.normal(size=(rows, 4)).astype(np.float32), W


@pytest.fixture
def module_entries(monkeypatch):
    """Fast entries written into each module (as for symbolic shapes), not generic_entry.py's; no code compiled
    before in memory."""
    monkeypatch.setattr(generic_entry, "OK", False)
    tj.clear_caches()


def entries(d):
    return sorted(p for p in d.iterdir() if p.suffix == ".tjc") if d.exists() else []


def call(fun=model, rows=5, **kw):
    """A fresh jit of fun called once, with no code in memory: (outputs, whether its code came from disk)."""
    tj.clear_caches()
    f = tj.jit(fun, **kw)
    x, w = inputs(rows)
    out = f(x, w)
    for k, v in expected(x, w).items():
        np.testing.assert_allclose(out[k], v, rtol=1e-5, atol=1e-5)
    return out, f.cache_info().signatures[0].from_disk


SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {tests!r})
    import numpy as np
    import test_compile_cache as t
    import tracejit as tj
    f = tj.jit(t.model)
    x, w = t.inputs()
    out = f(x, w)
    ok = all(np.allclose(out[k], v, rtol=1e-5, atol=1e-5) for k, v in t.expected(x, w).items())
    s = f.cache_info().signatures[0]
    print(json.dumps({{"ok": ok, "from_disk": s.from_disk, "llvm": s.seconds["llvm"]}}))
""").format(tests=os.path.dirname(__file__))


def run_script(cache, **env):
    proc = subprocess.run([sys.executable, "-c", SCRIPT], check=False, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TRACEJIT_CACHE_DIR": str(cache), **env})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_round_trip_through_disk_in_fresh_processes(tmp_path):
    cache = tmp_path / "c"
    first = run_script(cache)
    assert first == {**first, "ok": True, "from_disk": False}
    assert (cache.stat().st_mode & 0o777) == 0o700 and len(entries(cache)) == 1
    assert all((p.stat().st_mode & 0o777) == 0o600 for p in entries(cache))
    second = run_script(cache, PYTHONHASHSEED="7")      # another process, another hash seed
    assert second == {**second, "ok": True, "from_disk": True}
    assert len(entries(cache)) == 1


def test_same_process_loads_its_own_entries(cache_dir):
    assert not call()[1]
    assert call()[1] and call()[1]                       # each load links the code with its own addresses
    assert call(rows=7)[1] is False and len(entries(cache_dir)) == 2


def _rewrite(path, fn):
    path.write_bytes(fn(path.read_bytes()))


def _meta_and_objects(data):
    _, n_meta, _, _ = disk_cache.HEADER.unpack_from(data)
    return json.loads(data[disk_cache.HEADER.size:disk_cache.HEADER.size + n_meta]), data[disk_cache.HEADER.size + n_meta:]


def _foreign(data, mac=None, **changes):
    """The entry as another CPU would have written it (or with other metadata), with a valid digest: an HMAC
    under mac, or a SHA-256 checksum."""
    meta, obj = _meta_and_objects(data)
    meta.update(changes or {"host": {**meta["host"], "cpu": "some-other-cpu"}})
    meta = json.dumps(meta).encode()
    digest = hmac.new(mac, meta + obj, "sha256").digest() if mac else hashlib.sha256(meta + obj).digest()
    return disk_cache.HEADER.pack(disk_cache.MAGIC, len(meta), len(obj), digest) + meta + obj


@pytest.mark.parametrize("damage", [
    lambda d, mac: d[:len(d) // 2],                                          # truncated
    lambda d, mac: d[:disk_cache.HEADER.size - 3],                           # truncated inside the header
    lambda d, mac: d[:-100] + bytes(b ^ 0xFF for b in d[-100:-99]) + d[-99:],  # a flipped byte in the code
    lambda d, mac: d[:disk_cache.HEADER.size + 5] + b"X" + d[disk_cache.HEADER.size + 6:],  # in the metadata
    lambda d, mac: b"garbage" * 10,
    lambda d, mac: b"",
    _foreign,
], ids=["truncated", "truncated-header", "corrupt-code", "corrupt-metadata", "garbage", "empty", "foreign-cpu"])
def test_damaged_or_foreign_entries_are_recompiled(cache_dir, damage, caplog):
    call()
    (path,) = entries(cache_dir)
    mac = disk_cache.mac_key(str(cache_dir))
    _rewrite(path, lambda d: damage(d, mac))
    with caplog.at_level(logging.INFO, logger="tracejit"):
        assert call()[1] is False                       # refused, compiled again, results right
    assert "ignoring compile cache entry" in caplog.text
    assert ("another host" in caplog.text) if damage is _foreign else True
    assert call()[1] is True                            # and the fresh entry replaced it


def test_foreign_entry_is_refused_by_decode():
    key, names, symbols = "k" * 64, ["step0"], {"tj_const0": 1}
    objects = [b"\x7fELF one", b"\x7fELF part two"]     # a module compiled in two parts
    library = {("exp", "float", 16), ("exp", "float", 1)}   # the vector math library's functions it calls
    good = disk_cache.encode(key, (objects, library), names, symbols)
    assert disk_cache.decode(good, key, names, symbols) == ((objects, library), None)
    assert "another key" in disk_cache.decode(good, "j" * 64, names, symbols)[1]
    assert "another host" in disk_cache.decode(_foreign(good), key, names, symbols)[1]
    assert "lengths" in disk_cache.decode(_foreign(good, objects=[9, 3]), key, names, symbols)[1]
    for bad in ([["exp", "float", 0]], [["exp", "float", 4096]], [["exp", "float", "16"]], [["system", "float", 1]],
                [["exp", "float"]], "exp"):
        assert "library" in disk_cache.decode(_foreign(good, library=bad), key, names, symbols)[1]


def test_two_processes_racing_to_write_the_same_entry(tmp_path):
    cache = tmp_path / "race"
    env = {**os.environ, "TRACEJIT_CACHE_DIR": str(cache)}
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(3)]
    results = [json.loads(p.communicate(timeout=120)[0].strip().splitlines()[-1]) for p in procs]
    assert all(r["ok"] for r in results)
    assert len(entries(cache)) == 1 and not [p for p in cache.iterdir() if p.name.startswith(".tmp")]
    assert run_script(cache)["from_disk"]


def test_lru_eviction(cache_dir, monkeypatch):
    for rows, age in ((1, 400), (2, 300), (3, 200)):
        call(rows=rows)
        newest = max(entries(cache_dir), key=lambda p: p.stat().st_mtime_ns)
        os.utime(newest, (newest.stat().st_atime - age, newest.stat().st_mtime - age))
    assert call(rows=1)[1]                              # a hit makes rows=1 the most recently used
    call(rows=4)
    monkeypatch.setattr(tj.config, "cache_max_bytes", sum(p.stat().st_size for p in entries(cache_dir)) - 1)
    disk_cache.evict(str(cache_dir))                    # one entry must go: the least recently used, rows=2
    assert len(entries(cache_dir)) == 3
    assert call(rows=1)[1] and call(rows=3)[1] and call(rows=4)[1]
    assert not call(rows=2)[1]
    monkeypatch.setattr(tj.config, "cache_max_bytes", 0)
    call(rows=5)                                        # a write evicts; the entry just written stays
    assert len(entries(cache_dir)) == 1 and call(rows=5)[1]


def test_writes_scan_the_folder_only_when_it_may_be_past_its_cap(cache_dir, monkeypatch):
    """A write scans every entry (to evict) only when this process's count of the folder's bytes passes the cap,
    or the count is older than RESCAN_SECONDS: a scan after each compile cost O(entries) a compile. Entries that
    other processes wrote meanwhile are counted, and evicted, at the next scan."""
    scans = []
    evict = disk_cache.evict
    monkeypatch.setattr(disk_cache, "evict", lambda d, keep=None: (scans.append(d), evict(d, keep))[1])

    def sizes():
        return sum(p.stat().st_size for p in entries(cache_dir))
    call(rows=1)
    call(rows=2)
    assert scans.count(str(cache_dir)) == 1 and len(entries(cache_dir)) == 2    # the first write counts them
    assert disk_cache._counted[str(cache_dir)][0] == sizes()
    monkeypatch.setattr(tj.config, "cache_max_bytes", 3 * sizes())
    (cache_dir / "other.tjc").write_bytes(b"x" * 100)         # another process's entry, the oldest
    os.utime(cache_dir / "other.tjc", (1e9, 1e9))
    call(rows=3)
    assert scans.count(str(cache_dir)) == 1 and len(entries(cache_dir)) == 4    # under the cap by its count
    monkeypatch.setattr(tj.config, "cache_max_bytes", sizes() - 1)
    monkeypatch.setattr(disk_cache, "RESCAN_SECONDS", 0)     # an old count: the next write scans and evicts
    call(rows=4)
    assert scans.count(str(cache_dir)) == 2 and not (cache_dir / "other.tjc").exists()
    assert sizes() <= tj.config.cache_max_bytes and disk_cache._counted[str(cache_dir)][0] == sizes()


def test_cache_off_by_argument_config_and_environment(cache_dir, monkeypatch, tmp_path):
    assert call(cache=False)[1] is False and not entries(cache_dir)
    monkeypatch.setattr(tj.config, "disk_cache", False)
    assert call()[1] is False and not entries(cache_dir)
    cache = tmp_path / "off"
    assert run_script(cache, TRACEJIT_DISK_CACHE="0")["from_disk"] is False
    assert not entries(cache)


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o720], ids=oct)
def test_folder_writable_by_group_or_others_is_not_used(tmp_path, monkeypatch, caplog, mode):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, mode)
    monkeypatch.setattr(tj.config, "cache_dir", str(d))
    with caplog.at_level(logging.WARNING, logger="tracejit"):
        assert call()[1] is False and call()[1] is False
    assert f"writable by group or others (mode {mode:o})" in caplog.text and not entries(d)
    assert len(caplog.records) == 1                     # once
    assert not (d / disk_cache.KEY_FILE).exists()


def test_miss_log_names_the_argument(monkeypatch, caplog):
    monkeypatch.setattr(tj.config, "log_compiles", True)
    f = tj.jit(lambda params, x, n: tnp.sum(params["w"] * x) + params["b"] * n, static_argnums=2)
    p = {"w": np.ones(3), "b": np.float64(1.0)}
    with caplog.at_level(logging.WARNING, logger="tracejit"):
        f(p, np.ones(3), 2)
        f(p, np.ones(3), 2)                                          # a hit logs nothing
        f(p, np.ones(3, np.float32), 2)
        f({"w": np.ones(4), "b": np.float64(1.0)}, np.ones(4), 2)
        f(p, np.ones(3), 5)
    msgs = [r.getMessage() for r in caplog.records if r.name == "tracejit"]
    assert len(msgs) == 4 and "first signature" in msgs[0]
    assert "x: f64[3] -> f32[3]" in msgs[1] and "params" not in msgs[1]
    assert "params['w']: f64[3] -> f64[4]" in msgs[2] and "x: f64[3] -> f64[4]" in msgs[2]
    assert "static argument 2: 2 -> 5" in msgs[3]


def test_cache_info_record_and_rich_table(cache_dir):
    f = tj.jit(lambda x, scale: tj.grad(lambda v: tnp.sum(tnp.sin(v) * scale))(x), static_argnames="scale")
    f(np.ones(3), scale=2.0)
    f(np.ones(3), scale=2.0)
    f(np.ones((2, 2), np.float32), scale=2.0)
    info = f.cache_info()
    assert (info.entries, info.hits, info.misses) == (2, 1, 2) and info["hits"] == 1
    first = info.signatures[0]
    assert first.args == (("x", "f64[3]"),) and first.statics == (("scale", 2.0),) and first.hits == 1
    assert set(first.seconds) >= {"trace", "transforms", "passes", "codegen", "llvm", "total"}
    assert first.seconds["transforms"] > 0 and first.code_bytes > 0 and first.from_disk is False
    assert first.source == "compiled" and info.evicted == 0
    console = rich.console.Console(record=True, width=200)
    console.print(info)
    text = console.export_text()
    for word in ("arguments", "hits", "transforms ms", "llvm ms", "code KiB", "code from", "compiled", "x: f32[2,2]",
                 "scale=2.0"):
        assert word in text
    assert "x: f64[3]" in str(info)


def test_module_text_holds_no_process_address(cache_dir, module_entries):
    text = tj.jit(model).lower(*inputs()).compile()._entry.executable.llvm_text
    assert "inttoptr (i64 " not in text and str(id(np.ndarray)) not in text
    assert "@tj_const0 = external global i8" in text and "@tj_ndarray_type" in text
    generic = generic_entry._text()         # (cached on disk as well)
    assert "inttoptr (i64 " not in generic and str(id(np.ndarray)) not in generic and "@tj_ndarray_type" in generic


def test_module_with_a_baked_address_is_not_cached(cache_dir):
    closed = tj.make_ir(lambda x: x)(np.ones(1))
    text = llvm.module_header() + "define ptr @f() {\n  ret ptr inttoptr (i64 4096 to ptr)\n}\n"
    objects = disk_cache.object_code(closed, text, ["f"], {})
    code = llvm.load_objects(objects.objects, ["f"], {})
    assert code.function(ctypes.CFUNCTYPE(ctypes.c_void_p), "f")() == 4096 and sum(map(len, objects.objects)) > 0
    assert objects.source == "compiled" and objects.key is None
    assert not entries(cache_dir)


def test_equal_code_with_other_constants_links_its_own(cache_dir):
    def closure(c):
        return lambda x: x * c + 1.0

    x = np.arange(4.0)
    results = []
    for c in (np.array([1.0, 2.0, 3.0, 4.0]), np.array([-1.0, 0.5, 7.0, 2.0])):
        f = tj.jit(closure(c))
        results.append((f(x), f.cache_info().signatures[0].from_disk))
        np.testing.assert_allclose(results[-1][0], x * c + 1.0)
    assert [d for _, d in results] == [False, True]      # one module text, one entry: the constants are linked


def mlp_step(params, x, labels):
    """Enough kernels for a module that compiles in parts (llvm.compile_objects)."""
    def loss(params):
        w1, b1, w2, b2 = params
        logits = tnp.tanh(x @ w1 + b1) @ w2 + b2
        return -tnp.mean(tnp.sum((logits - tj.nn.logsumexp(logits, axis=1, keepdims=True)) * labels, axis=1))
    value, grads = tj.value_and_grad(loss)(params)
    return value, [p - 0.1 * g for p, g in zip(params, grads)]


def mlp_args():
    rng = np.random.default_rng(3)
    params = [rng.normal(size=s).astype(np.float32) * 0.1 for s in ((20, 16), (16,), (16, 5), (5,))]
    return params, rng.normal(size=(8, 20)).astype(np.float32), np.eye(5, dtype=np.float32)[np.arange(8) % 5]


def _module_text(fn, *args):
    return tj.jit(fn, cache=False).lower(*args)._entry.executable.llvm_text    # as generated


def test_split_module_defines_each_entry_point_once(module_entries):
    text = _module_text(mlp_step, *mlp_args())
    parts = llvm.split_module(text, 2)
    assert len(text) > llvm.PARALLEL_TEXT and len(parts) == 3     # two balanced parts + the fast entry's
    assert "@pyfast(" in parts[-1] or "@fast(" in parts[-1]
    entries = re.findall(r"^define (?!internal)[^@]*@(\w+)\(", text, re.MULTILINE)
    for name in entries:
        assert sum(bool(re.search(rf"^define [^@]*@{name}\(", p, re.MULTILINE)) for p in parts) == 1
    for p in parts:
        ll.parse_assembly(p, context=ll.create_context()).verify()


def test_module_compiled_in_parts_round_trips_through_disk(cache_dir):
    args = mlp_args()
    want = tj.jit(mlp_step, backend="reference")(*args)
    tj.jit(mlp_step, cache=False)(*args)    # its library functions: none compiles beside it (llvm.compiling_elsewhere)
    for from_disk in (False, True):
        tj.clear_caches()
        f = tj.jit(mlp_step)
        got = f(*args)
        for g, w in zip(tj.tree_util.tree_leaves(got), tj.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        assert f.cache_info().signatures[0].from_disk is from_disk
    (entry,) = entries(cache_dir)
    meta, _ = _meta_and_objects(entry.read_bytes())
    parts = llvm.split_module(_module_text(mlp_step, *args), runtime.NUM_THREADS)
    assert len(meta["objects"]) == len(parts) >= min(runtime.NUM_THREADS, 2)


def test_a_module_compiled_beside_another_compile_is_outside_the_lock():
    """While another thread compiles (llvm.compiling_elsewhere: the FFT or vector math library), a module
    compiles in an LLVM context of its own, outside the locks (llvmlite's held the library's parse and emission
    back for the main module's pass pipeline: rfft 1024's first call 26 -> 21 ms): here it finishes while
    another thread holds llvm._lock."""
    import concurrent.futures
    import threading

    text = llvm.module_header() + "define i64 @f(i64 %x) {\n  %y = add i64 %x, 1\n  ret i64 %y\n}\n"
    elsewhere, release, held = concurrent.futures.Future(), threading.Event(), threading.Event()

    def hold():
        with llvm._lock:
            held.set()
            release.wait(60)

    holder, pool = threading.Thread(target=hold), concurrent.futures.ThreadPoolExecutor(1)
    holder.start()
    held.wait(60)
    try:
        llvm.compiling_elsewhere(elsewhere)
        objects, _ = pool.submit(llvm.compile_objects, text).result(timeout=20)
        assert len(objects) == 1 and objects[0]
    finally:
        elsewhere.set_result(None)
        release.set()
        holder.join()
        pool.shutdown()


def test_modules_compiled_in_parts_call_their_own_entry_points(monkeypatch, module_entries):
    """Every module names its entry points alike (step0, ..., fast); the part whose `fast` calls the steps of
    another part must get this module's steps, not those of a module loaded before (it once did: wrong
    results, or a crash)."""
    monkeypatch.setattr(runtime, "NUM_THREADS", 3)

    def chain(scale):
        def f(x):
            for i in range(600):
                x = tnp.tanh(x) if i % 100 == 99 else x * scale + 0.5 if i % 2 else tnp.maximum(x, -1.0)
            return x
        return f

    x = np.linspace(-1.0, 1.0, 16, dtype=np.float32)
    fs = [tj.jit(chain(s), cache=False) for s in (0.5, 0.25)]
    for f, s in zip(fs, (0.5, 0.25)):
        text = f.lower(x)._entry.executable.llvm_text
        parts = llvm.split_module(text, runtime.NUM_THREADS)
        assert len(parts) > 1 and "declare" in parts[-1] and all("declare void @step" not in p for p in parts[:-1])
        np.testing.assert_allclose(f(x), tj.jit(chain(s), backend="reference")(x), rtol=1e-5)
    for _ in range(3):
        for f, s in zip(fs, (0.5, 0.25)):
            np.testing.assert_allclose(f(x), tj.jit(chain(s), backend="reference")(x), rtol=1e-5)


def test_split_module_copies_functions_named_as_pointers():
    """A function passed by address (a thread pool's task) goes with the part that names it, as a callee does."""
    task = "define internal void @task(ptr %t) {\n  ret void\n}"
    entries = [f"define void @step{i}(ptr %t) {{\n  call void @run(ptr @task, ptr %t)\n  ret void\n}}" for i in range(3)]
    text = "\n".join(["declare void @run(ptr, ptr)", task, *entries]) + "\n"
    parts = llvm.split_module(text, 2)
    assert len(parts) == 2
    for p in parts:
        assert "define internal void @task(" in p
        ll.parse_assembly(p, context=ll.create_context()).verify()
