"""Large Fortran-ordered inputs run on code compiled for their layout (tracejit.transposed_inputs), never copied
to C order: the same results as C-ordered inputs and as NumPy, one compile per set of transposed positions."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.api
import tracejit.numpy as tnp
from tracejit.backend import executable
from tracejit.transposed_inputs import TRANSPOSED_BYTES, transposed_positions

SIDE = int((TRANSPOSED_BYTES // 4) ** 0.5) + 5      # a square f32 matrix just above the size


def softmax(x):
    e = tnp.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


rng = np.random.default_rng(11)
C = rng.standard_normal((SIDE, SIDE + 3)).astype(np.float32)
V = rng.standard_normal(SIDE + 3).astype(np.float32)
W = rng.standard_normal((SIDE + 3, 7)).astype(np.float32)

CASES = {
    "matvec": lambda x: x @ V,
    "vecmat": lambda x: V[:SIDE] @ x,
    "matmul": lambda x: x @ W,
    "gram": lambda x: x.T @ x[:, :9],
    "tanh": lambda x: tnp.tanh(x) * 2 + 1,
    "column_sums": lambda x: x.sum(0),
    "row_max": lambda x: x.max(1),
    "total": lambda x: x.sum(),
    "softmax": softmax,
    "cumsum": lambda x: tnp.cumsum(x, 0),
    "argmax": lambda x: tnp.argmax(x, axis=1),
    "column": lambda x: x[:, 3] * 2,
    "plus_transpose": lambda x: x[:, :SIDE] + x[:, :SIDE].T,
}


@pytest.fixture
def no_copies(monkeypatch):
    """Fail where an input is copied to C order; count the compiles."""
    def copy(a):
        raise AssertionError(f"an input of shape {a.shape} was copied")
    monkeypatch.setattr(executable, "_c_copy", copy)
    compiles = []
    compile_ir = tracejit.api.compile_ir
    monkeypatch.setattr(tracejit.api, "compile_ir", lambda *a, **k: compiles.append(1) or compile_ir(*a, **k))
    return compiles


@pytest.mark.parametrize("name", sorted(CASES))
def test_fortran_inputs_match_c_inputs_without_a_copy(name, no_copies):
    f = tj.jit(CASES[name])
    want = f(C)
    F = np.asfortranarray(C)
    assert transposed_positions([F], [f.lower(C)._entry.executable.in_avals[0]]) == (0,)
    for _ in range(2):
        got = f(F)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(want, np.asarray(CASES[name](C)), rtol=2e-4, atol=2e-4)
    assert len(no_copies) == 2 and f.misses == 1      # the signature's code, and its code for a transposed input


def test_a_first_call_with_fortran_inputs_compiles_both_codes_at_once(no_copies, monkeypatch):
    """The first call of a signature with a large transposed input starts the code for its layout on a thread
    while the C-order code compiles; the call waits for it. An error compiling it reaches that call."""
    import threading
    threads = []
    compile_ir = tracejit.api.compile_ir

    def noted(*a, **k):
        threads.append(threading.current_thread().name)
        return compile_ir(*a, **k)
    monkeypatch.setattr(tracejit.api, "compile_ir", noted)
    F = np.asfortranarray(C)
    f = tj.jit(softmax)
    np.testing.assert_allclose(f(F), softmax(C), rtol=2e-5, atol=2e-6)
    assert sorted(threads) == ["MainThread", "tracejit-layout"] and f.misses == 1
    np.testing.assert_allclose(f(C), softmax(C), rtol=2e-5, atol=2e-6)
    assert len(threads) == 2

    def broken(closed, *a, **k):
        if threading.current_thread().name == "tracejit-layout":
            raise RuntimeError("no code for this layout")
        return compile_ir(closed, *a, **k)
    monkeypatch.setattr(tracejit.api, "compile_ir", broken)
    with pytest.raises(RuntimeError, match="no code for this layout"):
        tj.jit(lambda x: x.sum(1))(F)


def test_fortran_inputs_take_the_native_entry(monkeypatch):
    """The code for a layout runs through its native entry, not the Python driver."""
    f = tj.jit(CASES["column_sums"])
    F = np.asfortranarray(C)
    want = f(F)

    def driver(self, leaves):
        raise AssertionError("the Python driver ran")
    monkeypatch.setattr(executable.Executable, "run", driver)
    np.testing.assert_array_equal(f(F), want)


def test_fortran_inputs_take_the_dispatch_fast_path(monkeypatch):
    """Once a layout's code is compiled, a flat call with that layout skips the signature lookup (Jitted's
    _layout_fast, tried when the C-order fast path declines) and counts its hits; a Fortran array of another
    shape, a weakly typed Python scalar where an array was compiled, and a C-order call in between still get
    their own results."""
    f = tj.jit(lambda x, v: x @ v + 1)
    F = np.asfortranarray(C)
    want = np.asarray(C @ V + 1, np.float32)
    np.testing.assert_allclose(f(F, V), want, rtol=1e-4, atol=1e-4)
    assert f._layout_fast is not None
    hits = f.cache_info().hits
    monkeypatch.setattr(tracejit.api.Jitted, "_hit", lambda *a: pytest.fail("the signature was looked up"))
    for _ in range(3):
        np.testing.assert_allclose(f(F, V), want, rtol=1e-4, atol=1e-4)
    assert f.cache_info().hits == hits + 3
    monkeypatch.undo()
    np.testing.assert_allclose(f(C, V), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(f(F, V), want, rtol=1e-4, atol=1e-4)
    other = np.asfortranarray(C[:, :SIDE])
    np.testing.assert_allclose(f(other, V[:SIDE]), np.asarray(C[:, :SIDE] @ V[:SIDE] + 1, np.float32), rtol=1e-4,
                               atol=1e-4)
    g = tj.jit(lambda x, s: x * s)
    np.testing.assert_allclose(g(F, np.float32(2)), C * 2)
    np.testing.assert_allclose(g(F, 3.0), C * 3)
    np.testing.assert_allclose(g(F, np.float32(2)), C * 2)


def test_mixed_layouts_dtypes_and_sizes():
    """Each set of transposed positions has its code; a Fortran array of another dtype, a small one, a 3-d one
    (its axes reversed) and one of a symbolic signature are converted or copied as before."""
    f = tj.jit(lambda x, y: x @ y.T + x.sum())
    x, y = C[:, :SIDE], C[:, :SIDE].T.copy() + 1
    want = np.asarray(x @ y.T + x.sum(dtype=np.float64), np.float32)
    for a, b in [(x, y), (np.asfortranarray(x), y), (x, np.asfortranarray(y)), (np.asfortranarray(x), np.asfortranarray(y)),
                 (np.asfortranarray(x, dtype=np.float64), y)]:
        np.testing.assert_allclose(f(a, b), want, rtol=1e-4, atol=1e-2)
    small = rng.standard_normal((20, 30)).astype(np.float32)
    g = tj.jit(lambda x: tnp.tanh(x).sum(0))
    np.testing.assert_allclose(g(np.asfortranarray(small)), np.tanh(small).sum(0), rtol=1e-5)
    cube = rng.standard_normal((70, 60, 80)).astype(np.float32)
    h = tj.jit(lambda c: (c * 2).sum(2) + c[:, :, 0])
    np.testing.assert_allclose(h(np.asfortranarray(cube)), (cube * 2).sum(2) + cube[:, :, 0], rtol=1e-4, atol=1e-4)
    s = tj.jit(lambda x: x.sum(0), dynamic_dims={"x": {0: "n"}})
    for rows in (SIDE, SIDE + 1):
        big = rng.standard_normal((rows, SIDE)).astype(np.float32)
        np.testing.assert_allclose(s(np.asfortranarray(big)), big.sum(0), rtol=1e-4, atol=1e-4)


def test_elementwise_results_of_fortran_inputs_keep_their_order():
    """An output that is still a transpose after the passes (the transpose moves down through elementwise
    operations) is returned as a transposed view, Fortran-ordered as NumPy's result; an output whose value is also
    returned as it is, or twice, stays a fresh C-ordered array that shares no memory."""
    F = np.asfortranarray(C)
    got = tj.jit(lambda x: tnp.tanh(x) * 2 + 1)(F)
    np.testing.assert_allclose(got, np.tanh(C) * 2 + 1, rtol=1e-5, atol=1e-6)
    assert got.flags.f_contiguous and not got.flags.c_contiguous
    a, b = tj.jit(lambda x: (x * 2, (x * 2).T))(F)
    np.testing.assert_array_equal(b, (C * 2).T)
    assert not np.shares_memory(a, b)
    p, q = tj.jit(lambda x: (x + 1, x + 1))(F)
    assert not np.shares_memory(p, q)
    np.testing.assert_array_equal(p, C + 1)


def test_outputs_that_are_transposes_are_returned_as_views():
    """An output that is a transpose of a computed value (after the passes) is that value, returned transposed
    (a view of a fresh array, never of an input), through the fast path, the general path, vmap and a pickle
    that carries the compiled code."""
    import pickle
    x = C[:300, :200].copy()
    f = tj.jit(lambda x: (tnp.tanh(x.T), x.T, x.sum()))
    for _ in range(2):                     # the first call compiles, the second takes the fast path
        t, plain, _ = f(x)
        np.testing.assert_allclose(t, np.tanh(x.T), rtol=1e-6)
        np.testing.assert_array_equal(plain, x.T)
        assert t.flags.f_contiguous and not t.flags.c_contiguous and not np.shares_memory(plain, x)
    assert "transpose" in f.lower(x).as_text()     # the IR keeps it; the code leaves it to the view
    cube = x[:, :120].reshape(10, 30, 120)
    for perm in ((2, 0, 1), (1, 2, 0), (0, 2, 1)):     # permutations that are not their own inverse, too
        np.testing.assert_array_equal(tj.jit(lambda c, perm=perm: tnp.transpose(c * 2, perm))(cube),
                                      np.transpose(cube * 2, perm))
    g = tj.jit(lambda x: x.T * 2)
    np.testing.assert_array_equal(tj.vmap(g)(np.stack([x, x + 1])), np.stack([x.T * 2, (x + 1).T * 2]))
    g(x)
    h = pickle.loads(pickle.dumps(g))
    np.testing.assert_array_equal(h(x), x.T * 2)
