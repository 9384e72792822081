"""Jitted objects pickle with their compiled code (tracejit/shipping.py): a process that unpickles one links
the shipped code without tracing or compiling when its host matches, compiles where it does not, and
refuses a damaged pickle with a clear error."""
import collections
import hashlib
import json
import logging
import os
import pickle
import subprocess
import sys
import textwrap
import weakref

import cloudpickle
import numpy as np
import pytest
from test_backend import ALL_DTYPES, sample

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import dispatch, shipping
from tracejit.backend import disk_cache, llvm
from tracejit.backend.executable import MISS

W = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(3, 2)


def affine(x, w):
    return tnp.tanh(x @ w) * 2.0 + tnp.sum(x, axis=1, keepdims=True)


def expected(x, w):
    return np.tanh(x @ w) * 2.0 + x.sum(axis=1, keepdims=True)


@tj.jit
def decorated(x):
    return tnp.exp(-x * x) + 1.0


def rows(n):
    return np.linspace(-1.0, 1.0, 3 * n, dtype=np.float32).reshape(n, 3)


@pytest.fixture
def elsewhere(monkeypatch):
    """This process as one that never saw the pickled objects (their tokens unknown): loads(data) unpickles
    as another process would."""
    monkeypatch.setattr(shipping, "_received", weakref.WeakValueDictionary())
    monkeypatch.setattr(shipping, "_kept", collections.OrderedDict())

    def loads(data):
        shipping._received.clear()
        shipping._kept.clear()
        monkeypatch.setattr(dispatch, "_by_function", weakref.WeakKeyDictionary())   # no code of any function
        return pickle.loads(data)
    return loads


@pytest.fixture
def receiver(elsewhere, monkeypatch):
    """As elsewhere, and once something was unpickled, LLVM must not compile anything."""
    compile_objects, receiving = llvm.compile_objects, []

    def no_compile(text, *args, **kwargs):
        assert not receiving, "LLVM compiled a module in the receiving process"
        return compile_objects(text, *args, **kwargs)

    def loads(data):
        receiving.append(True)
        return elsewhere(data)
    monkeypatch.setattr(llvm, "compile_objects", no_compile)
    return loads


def compiled(f, sizes=(4, 5, 6)):
    """f called on rows of these sizes: one shape-specialised signature, then a symbolic one."""
    for n in sizes:
        np.testing.assert_allclose(f(rows(n), W), expected(rows(n), W), rtol=1e-5, atol=1e-6)
    return f


def check_shipped(g, sizes=(4, 5, 6, 9)):
    for n in sizes:
        np.testing.assert_allclose(g(rows(n), W), expected(rows(n), W), rtol=1e-5, atol=1e-6)
    info = g.cache_info()
    assert info.misses == 0 and info.entries == 2 and all(s.source == "shipped" for s in info.signatures)
    assert all("trace" not in s.seconds for s in info.signatures)
    return info


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
def test_module_level_function_round_trip(receiver, dumps):
    f = compiled(tj.jit(affine))
    g = receiver(dumps(f))
    assert g is not f and g.fun is affine and g.__name__ == "affine"
    check_shipped(g)
    assert g._fast is not None and g._fast((rows(9), W)) is not MISS    # the fast path takes the arrays


def test_closure_round_trip_with_cloudpickle(receiver):
    scale = np.float32(3.0)
    f = compiled(tj.jit(lambda x, w: affine(x, w) * scale / 3.0))
    check_shipped(receiver(cloudpickle.dumps(f)))
    check_shipped(receiver(pickle.dumps(f)))         # the function inside goes through cloudpickle anyway


def test_same_process_gets_its_own_object_back():
    f = compiled(tj.jit(affine))
    assert pickle.loads(pickle.dumps(f)) is f and cloudpickle.loads(cloudpickle.dumps(f)) is f
    assert pickle.loads(pickle.dumps(decorated)) is decorated


def test_decorated_module_level_function_travels_by_reference(tmp_path):
    decorated(np.ones(3))
    decorated(np.ones((2, 2), np.float32))
    path = tmp_path / "decorated.pkl"
    path.write_bytes(pickle.dumps(decorated))
    out = run_python(f"""
        import json, pickle, numpy as np, test_shipping
        g = pickle.loads(open({str(path)!r}, "rb").read())
        x = np.linspace(-1, 1, 3)
        ok = np.allclose(g(x), np.exp(-x * x) + 1.0) and np.allclose(g(np.ones((2, 2), np.float32)), np.exp(-1.0) + 1.0)
        info = g.cache_info()
        print(json.dumps([g is test_shipping.decorated, bool(ok), info.misses, [s.source for s in info.signatures]]))
    """, tmp_path)
    assert out == [True, True, 0, ["shipped", "shipped"]]


def run_python(code, tmp_path):
    """The JSON that code prints last, run in a fresh process (tests/ importable, its own empty cache)."""
    env = {**os.environ, "TRACEJIT_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_fresh_process_links_without_tracing_or_compiling(tmp_path):
    """In another process, with a disk cache of its own (empty): no module is parsed but the empty one
    that creating an engine costs (once the process's own generic entry is there, which its import compiles)."""
    offset = np.float32(0.5)
    f = tj.jit(lambda x, w: affine(x, w) + offset)
    for n in (4, 5, 6):
        f(rows(n), W)
    path = tmp_path / "f.pkl"
    path.write_bytes(cloudpickle.dumps(f))
    out = run_python(f"""
        import json, pickle, numpy as np
        import llvmlite.binding as ll
        import test_shipping as t
        from tracejit.backend import generic_entry
        generic_entry.address()
        parsed, parse = [], ll.parse_assembly
        ll.parse_assembly = lambda text, *a, **k: parsed.append(len(text)) or parse(text, *a, **k)
        g = pickle.loads(open({str(path)!r}, "rb").read())
        ok = all(np.allclose(g(t.rows(n), t.W), t.expected(t.rows(n), t.W) + 0.5, rtol=1e-5, atol=1e-6)
                 for n in (4, 5, 6, 11))
        info = g.cache_info()
        print(json.dumps([ok, info.misses, [s.source for s in info.signatures], sorted(set(parsed))]))
    """, tmp_path)
    assert out == [True, 0, ["shipped", "shipped"], [0]]


def restored(f, edit=None):
    """f pickled and unpickled elsewhere, its state's body changed by edit(reference, fun, options, host,
    payloads) -> the same."""
    fmt, _, body = shipping.state(f)
    if edit is not None:
        body = shipping._dumps(edit(*pickle.loads(body)))
    shipping._received.clear()
    dispatch._by_function.clear()     # (as in a process that never compiled the function)
    return shipping.restore(tj.api.Jitted, fmt, hashlib.sha256(body).digest(), body)


def test_code_from_another_host_is_dropped_and_compiled_here(elsewhere, caplog):
    f = compiled(tj.jit(affine))
    g = restored(f, lambda ref, fun, opts, host, payloads: (ref, fun, opts, {**host, "cpu": "elsewhere"}, payloads))
    with caplog.at_level(logging.INFO, logger="tracejit"):
        np.testing.assert_allclose(g(rows(4), W), expected(rows(4), W), rtol=1e-5, atol=1e-6)
    assert "came with code for another host (cpu 'elsewhere'" in caplog.text
    assert not g._signatures.shipped and not g._signatures.parcels
    assert g.cache_info().misses == 1 and "trace" in g.cache_info().signatures[0].seconds


def test_code_whose_key_differs_here_is_compiled_from_the_shipped_ir(elsewhere, monkeypatch, caplog):
    """Same host, but the module generated here differs (as with another number of cores): the shipped
    object code is not used; the shipped IR is compiled, without tracing."""
    f = compiled(tj.jit(affine))
    g = elsewhere(pickle.dumps(f))
    key = disk_cache.entry_key
    monkeypatch.setattr(disk_cache, "entry_key", lambda signature, text: key(signature, text + ";here"))
    with caplog.at_level(logging.INFO, logger="tracejit"):
        np.testing.assert_allclose(g(rows(5), W), expected(rows(5), W), rtol=1e-5, atol=1e-6)
    (s,) = g.cache_info().signatures
    assert g.cache_info().misses == 1 and s.source != "shipped" and "trace" not in s.seconds
    assert "does not fit this process" in caplog.text


def test_ship_code_false_pickles_the_function_only(elsewhere):
    f, bare = compiled(tj.jit(affine)), compiled(tj.jit(affine, ship_code=False))
    data = pickle.dumps(bare)
    assert len(data) < len(pickle.dumps(f)) // 2
    g = elsewhere(data)
    assert g.ship_code is False and not g._signatures.shipped and not g._signatures.parcels
    np.testing.assert_allclose(g(rows(4), W), expected(rows(4), W), rtol=1e-5, atol=1e-6)
    assert g.cache_info().misses == 1 and g.cache_info().signatures[0].source != "shipped"


def test_options_statics_pytrees_and_keywords_travel(receiver):
    def step(params, x, *, mode):
        y = x @ params["w"] + params["b"]
        return {"y": tnp.tanh(y) if mode == "tanh" else y, "n": tnp.sum(y * y)}

    f = tj.jit(step, static_argnames="mode", dynamic_dims={"x": {0: "batch"}}, cache=False)
    params = {"w": W, "b": np.float32(0.25)}
    want = f(params, rows(3), mode="tanh")
    g = receiver(cloudpickle.dumps(f))
    assert g.options() == f.options()
    got = g(params, rows(3), mode="tanh")
    assert g(params, rows(7), mode="tanh")["y"].shape == (7, 2)          # the symbolic signature, shipped
    np.testing.assert_allclose(got["y"], want["y"])
    np.testing.assert_allclose(got["n"], want["n"])
    assert g.cache_info().misses == 0 and g.cache_info().signatures[0].statics == (("mode", "tanh"),)


def test_every_dtype_ships_and_so_do_the_ranges_of_python_int_arguments(receiver):
    """A signature of each dtype links in the receiver and computes bit for bit what the sender's does; the
    dtypes a Python int argument must fit travel with it (NumPy 2's OverflowError at each call, there too)."""
    functions = []
    for d in ALL_DTYPES:
        f = tj.jit(lambda a, b, d=d: a ^ b if d == np.bool_ else a * b - a, cache=False)
        x, y = sample(d, (9,)), sample(d, (9,), seed=1)
        with np.errstate(all="ignore"):
            functions.append((f, (x, y), f(x, y)))
    scaled = tj.jit(lambda a, k: a * k, cache=False)
    small = np.arange(3, dtype=np.uint8)
    functions.append((scaled, (small, 3), scaled(small, 3)))
    received = receiver(cloudpickle.dumps([f for f, _, _ in functions]))
    for g, (f, args, want) in zip(received, functions, strict=True):
        with np.errstate(all="ignore"):
            got = g(*args)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), want.dtype
        assert g.cache_info().misses == 0 and g.cache_info().signatures[0].source == "shipped", want.dtype
    with pytest.raises(OverflowError, match="argument k: Python integer 300 out of bounds for uint8"):
        received[-1](small, 300)
    assert received[-1].cache_info().misses == 0


def test_received_object_ships_what_it_has_not_linked_yet(receiver):
    f = compiled(tj.jit(affine))
    g = receiver(pickle.dumps(f))
    assert len(g._signatures.parcels) == 1 and not g._signatures.shipped     # opened on the first call
    g(rows(4), W)                                   # links one signature; the symbolic one stays pending
    assert len(g._signatures.shipped) == 1 and not g._signatures.parcels
    check_shipped(receiver(pickle.dumps(g)))


def test_reference_backend_pickles_without_code(elsewhere):
    f = tj.jit(affine, backend="reference")
    f(rows(4), W)
    g = elsewhere(pickle.dumps(f))
    assert g.backend == "reference" and not g._signatures.parcels
    np.testing.assert_allclose(g(rows(4), W), expected(rows(4), W), rtol=1e-5, atol=1e-6)


def test_corrupted_pickle_raises_a_clear_error(elsewhere):
    f = compiled(tj.jit(affine))
    data = pickle.dumps(f)
    _, digest, body = shipping.state(f)
    start = data.index(body[:64])
    for i in range(start, start + len(body), max(1, len(body) // 97)):     # any byte of the body
        damaged = data[:i] + bytes([data[i] ^ 0x10]) + data[i + 1:]
        with pytest.raises(pickle.UnpicklingError, match="damaged: its SHA-256 checksum does not match"):
            elsewhere(damaged)
    for i in [*range(start), *range(start + len(body), len(data))]:                # the wrapper around it
        try:     # pickle's own errors, or ours; or, where pickle ignores the byte (a frame's size), f itself; or
            g = elsewhere(data[:i] + bytes([data[i] ^ 0x10]) + data[i + 1:])    # another object, where the byte
        except Exception:  # noqa: BLE001,S112 -- any clear refusal will do      # was an opcode (R -> B: bytes)
            continue
        if isinstance(g, tj.api.Jitted):
            np.testing.assert_allclose(g(rows(4), W), expected(rows(4), W), rtol=1e-5, atol=1e-6)
    with pytest.raises(pickle.UnpicklingError, match="format"):
        shipping.restore(tj.api.Jitted, b"tracejit-jitted-0", digest, body)


@pytest.mark.parametrize("keep", [0.0, 0.1, 0.5, 0.9, 0.999])
def test_truncated_pickle_raises(elsewhere, keep):
    data = pickle.dumps(compiled(tj.jit(affine)))
    with pytest.raises((pickle.UnpicklingError, EOFError), match="truncated|Ran out of input|damaged"):
        elsewhere(data[:int(len(data) * keep)])


def test_a_process_keeps_the_functions_it_received_last(elsewhere):
    """A Dask worker drops a task's function with the task: the receiving process keeps the last
    KEEP_RECEIVED it unpickled, so the next submission finds the code it linked."""
    keep = shipping.KEEP_RECEIVED
    sent = [tj.jit(lambda x, k=k: x + float(k)) for k in range(keep + 4)]
    for f in sent:
        f(np.ones(2))
    data = [pickle.dumps(f) for f in sent]
    shipping._received.clear()
    got = [pickle.loads(d) for d in data]
    for g in got:
        g(np.ones(2))                               # links its code
    ids = [id(g) for g in got]
    del got, g
    recent = [pickle.loads(d) for d in data[4:]]
    assert [id(g) for g in recent] == ids[4:] and all(g.cache_info().entries == 1 for g in recent)
    first = [pickle.loads(d) for d in data[:4]]     # dropped: received afresh, their code pending again
    assert all(g.cache_info().entries == 0 and len(g._signatures.parcels) == 1 for g in first)


def test_unpickling_alone_links_nothing(tmp_path):
    """A process that unpickles but never calls the function (a Dask scheduler) links no code and reads no
    shipped IR: both wait for the first call (LLVM itself loads with tracejit)."""
    f = tj.jit(lambda x: x * 2.0 + 1.0)
    f(np.ones(3))
    path = tmp_path / "f.pkl"
    path.write_bytes(cloudpickle.dumps(f))
    out = run_python(f"""
        import json, pickle
        g = pickle.loads(open({str(path)!r}, "rb").read())
        before = [g.cache_info().entries, len(g._signatures.parcels)]
        import numpy as np
        value = g(np.ones(3)).tolist()
        print(json.dumps([before, g.cache_info().entries, value, g.cache_info().signatures[0].source]))
    """, tmp_path)
    assert out == [[0, 1], 1, [3.0, 3.0, 3.0], "shipped"]
