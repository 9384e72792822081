"""The native fast entries (backend/generic_entry.py, compiled once per process and driven by a descriptor, and
backend/fast_entry.py's pyfast written into a module, backend/native_call.py): what they accept, and that
everything they decline takes the general path with the same result as NumPy. Every test runs on both."""
import sys
import threading

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend import generic_entry, native_call
from tracejit.backend.executable import MISS
from tracejit.backend.steps import ParallelStep

pytestmark = pytest.mark.skipif(not native_call.PY_ENTRY_OK, reason="the layouts the native entry reads differ")


@pytest.fixture(autouse=True, params=["generic", "module"])
def entry_kind(request, monkeypatch):
    """Run each test on generic_entry.py's entry (where it can run) and on the entries written into modules."""
    if request.param == "module":
        monkeypatch.setattr(generic_entry, "OK", False)
    elif not generic_entry.OK:
        pytest.skip("no generic entry on this platform")
    return request.param


def executable(f):
    return next(iter(f._signatures.entries.values())).executable


def test_fixed_shapes_run_the_generic_entry_and_symbolic_ones_their_own(entry_kind):
    f = tj.jit(lambda x: x * 2 + 1)
    x = np.arange(6.0)
    f(x)
    exe = executable(f)
    assert native(f) and (f._fast.__self__[5] is not None) == (entry_kind == "generic")
    assert ("@pyfast(" in exe.llvm_text) == (entry_kind == "module")
    np.testing.assert_array_equal(f(x), x * 2 + 1)
    g = tj.jit(lambda x: x * 2 + 1, dynamic_dims={"x": {0: "n"}})
    for n in (3, 5):
        np.testing.assert_array_equal(g(np.arange(float(n))), np.arange(float(n)) * 2 + 1)
    assert "@pyfast(" in executable(g).llvm_text and g._fast.__self__[5] is None


def test_a_hundred_inputs_run_the_generic_entry(entry_kind):
    """Up to generic_entry.MAX_IN inputs take the generic entry, not a pyfast of ~45 lines of LLVM per input in
    the module (100 inputs: 0.5 s of LLVM); past it, the module's own."""
    parts = [np.full(3, float(k)) for k in range(generic_entry.MAX_IN + 1)]
    for n in (100, generic_entry.MAX_IN + 1):
        f = tj.jit(lambda *xs: tnp.stack(xs))
        np.testing.assert_array_equal(f(*parts[:n]), np.stack(parts[:n]))
        assert native(f) and ("@pyfast(" in executable(f).llvm_text) == (entry_kind == "module" or n > 100)


def test_parallel_steps_run_on_the_pool():
    f = tj.jit(lambda x: tnp.tanh(x) * 3 + x)
    x = np.linspace(-2, 2, 1 << 18)
    f(x)
    assert any(isinstance(s, ParallelStep) for s in executable(f).steps) and native(f)
    for _ in range(3):
        np.testing.assert_allclose(f(x), np.tanh(x) * 3 + x, rtol=1e-13)
    assert hits(f) == 3


def native(f):
    """The native entry the last call of f installed (its flat or pytree fast path)."""
    return type(f._fast).__name__ == "builtin_function_or_method"


def hits(f):
    return f.cache_info().hits


def test_flat_call_runs_in_the_native_entry_and_counts_hits():
    f = tj.jit(lambda x, y: x * y + 1)
    x, y = np.arange(8, dtype=np.float32), np.full(8, 2, np.float32)
    np.testing.assert_array_equal(f(x, y), x * y + 1)
    assert native(f)
    out = f(x, y)
    np.testing.assert_array_equal(out, x * y + 1)
    assert out is not x and out is not y and out.flags.owndata and out.flags.writeable and out.flags.c_contiguous
    assert (hits(f), f.misses) == (1, 1)


def test_declined_arguments_take_the_general_path():
    f = tj.jit(lambda x: x * 2 + 1)
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    f(a)
    unaligned = np.frombuffer(np.zeros(12 * 8 + 1, np.uint8).data, dtype=np.float64, count=12, offset=1).reshape(3, 4)
    unaligned[...] = a
    read_only = a.copy()
    read_only.flags.writeable = False

    class Sub(np.ndarray):
        pass
    cases = [a.T.copy().T,                       # Fortran order, same shape
             a[:, ::-1].copy()[:, ::-1],           # negative strides
             unaligned, read_only, a.view(Sub), np.asfortranarray(a)]
    for x in cases:
        np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(x) * 2 + 1)
    assert f.misses == 1                         # all of them the same signature
    np.testing.assert_array_equal(f(a.astype(np.float32)), a.astype(np.float32) * 2 + 1)   # another dtype
    np.testing.assert_array_equal(f(a[:2]), a[:2] * 2 + 1)                                 # another shape
    assert f(a.astype(np.float32)).dtype == np.float32


def test_code_with_python_steps_has_a_python_fast_path():
    """Code that the driver runs (a sort is NumPy's, between native steps) is called through a fast path that
    checks the flat arguments in Python (Executable._driven_fast_call): hits counted, NumPy's values; arguments
    it declines (Fortran order, unaligned, another dtype or shape, a Python scalar where a weak one was
    compiled) take the general path and give the same values."""
    f = tj.jit(lambda x, s: tnp.sort(x * s, axis=-1) + 1)
    a = np.random.default_rng(3).standard_normal((5, 7))
    np.testing.assert_array_equal(f(a, 2.0), np.sort(a * 2.0, axis=-1) + 1)
    assert f._tree_fast is not None or f._fast is not None
    for _ in range(3):
        np.testing.assert_array_equal(f(a, 2.0), np.sort(a * 2.0, axis=-1) + 1)
    assert (hits(f), f.misses) == (3, 1)
    unaligned = np.frombuffer(np.zeros(35 * 8 + 1, np.uint8).data, dtype=np.float64, count=35, offset=1).reshape(5, 7)
    unaligned[...] = a
    for x in (np.asfortranarray(a), unaligned, a.astype(np.float32), a[:3]):
        np.testing.assert_allclose(f(x, 3.0), np.sort(np.asarray(x) * 3.0, axis=-1) + 1, rtol=1e-6)
    np.testing.assert_array_equal(f(a, np.float64(2.0)), np.sort(a * 2.0, axis=-1) + 1)


def test_zero_d_inputs_take_arrays_numpy_scalars_and_python_bools():
    f = tj.jit(lambda x, s: x * s)
    x = np.arange(4, dtype=np.float32)
    f(x, np.array(3, np.float32))
    calls = hits(f)
    for s in (np.array(2, np.float32), np.float32(5)):
        np.testing.assert_array_equal(f(x, s), x * s)
    assert hits(f) == calls + 2 and f.misses == 1
    g = tj.jit(lambda x, b: tnp.where(b, x, -x))
    g(x, np.array(True))
    for b in (True, False, np.True_, np.array(False)):
        np.testing.assert_array_equal(g(x, b), np.where(b, x, -x))
    assert g.misses == 1 and native(g)


def test_python_scalars_are_weakly_typed_and_checked():
    f = tj.jit(lambda x, s: x + s)
    x = np.arange(4, dtype=np.int8)
    assert f(x, 1).dtype == np.int8
    assert native(f)
    np.testing.assert_array_equal(f(x, 100), x + np.int8(100))
    with pytest.raises(OverflowError):
        f(x, 1000)                   # NumPy 2: a Python int that does not fit int8
    with pytest.raises(OverflowError):
        f(x, 2 ** 70)
    np.testing.assert_array_equal(f(x, -128), x + np.int8(-128))
    for _ in range(2):
        out = f(x, 1.5)
        np.testing.assert_array_equal(out, x + 1.5)
        assert out.dtype == (x + 1.5).dtype
    g = tj.jit(lambda x, s: x * s)
    y = np.ones(3, np.float32)
    g(y, 2.0)
    for s in (0.5, 1e300, -0.0, float("inf"), float("nan")):
        with np.errstate(over="ignore", invalid="ignore"):
            np.testing.assert_array_equal(g(y, s), y * s)
    assert g.misses == 1
    np.testing.assert_array_equal(g(y, 3), y * 3)          # an int: another signature
    assert g.misses == 2


def test_pytree_mismatches_fall_back():
    f = tj.jit(lambda p, x: p["a"] * x + p["b"])
    x = np.arange(8, dtype=np.float32)
    p = {"a": x * 2, "b": x + 1}
    f(p, x)
    assert f._tree_fast is not None
    calls = hits(f)
    np.testing.assert_array_equal(f(p, x), p["a"] * x + p["b"])
    assert hits(f) == calls + 1
    np.testing.assert_array_equal(f({"a": x, "b": x, "c": x}, x), x * x + x)     # another tree
    for q in ({"a": x, "c": x}, {"a": x}):
        with pytest.raises(KeyError):
            f(q, x)
    np.testing.assert_array_equal(f(p, x=x), p["a"] * x + p["b"])    # keywords: another tree
    np.testing.assert_array_equal(f({"a": 2.0, "b": x}, x), 2.0 * x + x)
    g = tj.jit(lambda t: t[0] + t[1])
    for t in ((x, x), [x, x], (x, x + 1)):
        np.testing.assert_array_equal(g(t), t[0] + t[1])
    assert g.misses == 2


def test_several_outputs_and_output_trees():
    f = tj.jit(lambda x: {"s": x + 1, "t": (x * 2, x.sum())})
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    for _ in range(3):
        out = f(x)
        np.testing.assert_array_equal(out["s"], x + 1)
        np.testing.assert_array_equal(out["t"][0], x * 2)
        assert out["t"][1] == x.sum() and out["t"][1].shape == ()
    assert hits(f) == 2


def test_no_reference_leaks():
    f = tj.jit(lambda x, s: (x + s, x * s))
    x = np.arange(5, dtype=np.float64)
    f(x, 2.0)
    wrong = np.arange(5, dtype=np.float64)[::2]
    before = [sys.getrefcount(o) for o in (x, MISS, x.dtype, np.dtype(np.uint8))]
    for _ in range(1000):
        f(x, 2.0)
        f._fast((wrong, 2.0))                     # declined: MISS
    after = [sys.getrefcount(o) for o in (x, MISS, x.dtype, np.dtype(np.uint8))]
    assert after == before


def test_large_calls_run_with_the_gil_released_and_agree():
    f = tj.jit(lambda x: tnp.sin(x) * 2 + 1)
    x = np.linspace(0, 1, 1 << 16)
    f(x)
    results = []
    threads = [threading.Thread(target=lambda: results.append(f(x))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_allclose(r, np.sin(x) * 2 + 1, rtol=1e-12)
    assert native(f)


def test_tracers_are_declined():
    f = tj.jit(lambda x: x * 3)
    x = np.arange(3.0)
    f(x)
    np.testing.assert_allclose(tj.grad(lambda x: f(x).sum())(x), np.full(3, 3.0))
    np.testing.assert_allclose(tj.vmap(f)(np.ones((2, 3))), np.full((2, 3), 3.0))


def test_python_complex_scalars():
    f = tj.jit(lambda x, z: x * z)
    x = np.arange(3, dtype=np.complex128)
    f(x, 1j)
    assert native(f)
    for z in (2 - 3j, complex(float("inf"), 0), -0.5j):
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(f(x, z), x * z)
    assert f.misses == 1 and hits(f) == 3


def test_scalar_only_arguments():
    f = tj.jit(lambda a, b: a * b + 1)
    for a, b in ((2.0, 3.0), (0.5, -1.0)):
        out = f(a, b)
        assert out.shape == () and out.dtype == np.float64 and out == a * b + 1
    assert f.misses == 1 and native(f)


def test_arena_larger_than_the_stack_is_allocated_once_and_kept():
    """An arena too large for the stack is an array the entry makes on its first call and keeps in its cache
    (native_call.py: `self`'s third item) for the next calls: the same array every time, no references leaked;
    calls from several threads at once each get an arena (one of them from the cache) and agree."""
    f = tj.jit(lambda x: tnp.tanh(x @ x.T).sum(axis=1))          # a 200x200 f64 temporary: 320 KB
    x = np.linspace(-1, 1, 200 * 64).reshape(200, 64)
    want = np.tanh(x @ x.T).sum(axis=1)
    np.testing.assert_allclose(f(x), want, rtol=1e-9, atol=1e-12)
    exe = executable(f)
    assert exe.frame.fast_takes_arena and native(f)
    cache = f._fast.__self__[2]
    np.testing.assert_allclose(f(x), want, rtol=1e-9, atol=1e-12)       # (the first call ran in the driver)
    kept = cache[0]
    assert isinstance(kept, np.ndarray) and kept.dtype == np.uint8 and kept.nbytes >= exe.frame.arena_bytes
    uint8 = np.dtype(np.uint8)
    before = [sys.getrefcount(o) for o in (uint8, kept, None)]
    outs = [f(x) for _ in range(50)]
    assert [sys.getrefcount(o) for o in (uint8, kept, None)] == before
    assert cache[0] is kept and hits(f) == 51
    for out in outs:
        np.testing.assert_allclose(out, want, rtol=1e-9, atol=1e-12)
    results = []
    threads = [threading.Thread(target=lambda: results.extend(f(x) for _ in range(20))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_allclose(r, want, rtol=1e-9, atol=1e-12)
    assert len(results) == 80 and isinstance(cache[0], np.ndarray)
