"""Symbolic dimensions: code compiled once for any size gives the results of shape-specialised code."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import nn
from tracejit.backend import Executable, native_call
from tracejit.core.avals import Dim, ShapedArray, SymbolicDimError
from tracejit.scipy.special import logsumexp

SIZES = (0, 1, 2, 7, 100)
rng = np.random.default_rng(0)


def mlp_loss(params, x, y):
    h = tnp.tanh(x @ params["w1"] + params["b1"])
    return tnp.mean((h @ params["w2"] - y) ** 2)


W = rng.standard_normal((16, 8)).astype(np.float32)
PARAMS = {"w1": rng.standard_normal((16, 8)), "b1": rng.standard_normal(8), "w2": rng.standard_normal((8, 3))}
SUITE = {
    "elementwise": (lambda x: tnp.exp(-x * x) * 0.5 + tnp.tanh(x) / (1.0 + x * x), lambda n: [rng.random((n, 16))]),
    "sum_over_n": (lambda x: tnp.sum(tnp.sin(x), axis=0), lambda n: [rng.random((n, 16))]),
    "max_not_over_n": (lambda x: tnp.max(x * 2.0, axis=1), lambda n: [rng.random((n, 16))]),
    "mean_all": (lambda x: tnp.mean(x), lambda n: [rng.random((n, 16))]),
    "matmul": (lambda x, w: tnp.tanh(x) @ w, lambda n: [rng.random((n, 16)).astype(np.float32), W]),
    "softmax": (lambda x: nn.softmax(x, axis=-1), lambda n: [rng.random((n, 16))]),
    "broadcast_vector": (lambda x, v: x * v[:, None] + 1.0, lambda n: [rng.random((n, 16)), rng.random(n)]),
    "mlp_grad": (tj.grad(mlp_loss), lambda n: [PARAMS, rng.standard_normal((n, 16)), rng.standard_normal((n, 3))]),
}
SPECS = {"elementwise": {"x": {0: "n"}}, "sum_over_n": {"x": {0: "n"}}, "max_not_over_n": {"x": {0: "n"}},
         "mean_all": {"x": {0: "n"}}, "matmul": {"x": {0: "n"}}, "softmax": {"x": {0: "n"}},
         "broadcast_vector": {"x": {0: "n"}, "v": {0: "n"}}, "mlp_grad": {"x": {0: "n"}, "y": {0: "n"}}}


@pytest.mark.parametrize("name", list(SUITE))
def test_symbolic_equals_specialised(name):
    fun, make = SUITE[name]
    symbolic = tj.jit(fun, dynamic_dims=SPECS[name], cache=False)
    for n in SIZES:
        args = make(n)
        expected = tj.jit(fun, cache=False)(*args)
        got = symbolic(*args)
        for e, g in zip(tj.tree_util.tree_leaves(expected), tj.tree_util.tree_leaves(got)):
            assert g.shape == e.shape and g.dtype == e.dtype
            np.testing.assert_allclose(g, e, rtol=2e-5, atol=1e-6, equal_nan=True)
    assert symbolic.misses == 1


@pytest.mark.parametrize("name", ["sum_over_n", "mean_all", "softmax", "mlp_grad"])
def test_large_sizes_split_over_threads_and_spill_the_stack_arena(name):
    """Sizes where a loop goes parallel (chosen per call) and the arena outgrows the native stack,
    between small calls of the same compiled code."""
    fun, make = SUITE[name]
    symbolic = tj.jit(fun, dynamic_dims=SPECS[name], cache=False)
    for n in (3, 600_000, 2, 600_000):
        args = make(n)
        for e, g in zip(tj.tree_util.tree_leaves(tj.jit(fun, cache=False)(*args)),
                        tj.tree_util.tree_leaves(symbolic(*args))):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-6)
    assert symbolic.misses == 1

def test_arena_larger_than_the_stack_stays_on_the_fast_path(monkeypatch):
    """At sizes whose arena outgrows the native stack (and no loop goes parallel) the generated code runs
    in an arena the caller passes, not through the Python driver (which cost ~10% at n=1024 here)."""
    fun = SUITE["matmul"][0]
    symbolic = tj.jit(fun, dynamic_dims=SPECS["matmul"], cache=False)
    small, large = SUITE["matmul"][1](3), SUITE["matmul"][1](3000)   # tanh(x): 192 B and 188 KiB
    expected = [tj.jit(fun, cache=False)(*args) for args in (large, small, large)]
    driven, execute = [], Executable._execute
    monkeypatch.setattr(Executable, "_execute", lambda self, *a: driven.append(1) or execute(self, *a))
    symbolic(*small)                   # the first call compiles and runs through the driver
    driven.clear()
    for args, want in zip((large, small, large), expected):
        np.testing.assert_allclose(symbolic(*args), want, rtol=2e-5, atol=1e-6)
    assert not driven


def test_symbolic_code_whose_outputs_are_copied():
    """An output that is an input has no fast entry (the Python driver copies it): it once failed there."""
    f = tj.jit(lambda x: (x, tnp.exp(x) * 2), dynamic_dims={"x": {0: "n"}}, cache=False)
    for n in (5, 3000):
        x = rng.random(n)
        same, doubled = f(x)
        assert same is not x and np.array_equal(same, x)
        np.testing.assert_allclose(doubled, np.exp(x) * 2, rtol=1e-14)
    assert f.misses == 1


def test_reference_interpreter_runs_symbolic_ir():
    fun, make = SUITE["mlp_grad"]
    symbolic = tj.jit(fun, dynamic_dims=SPECS["mlp_grad"], backend="reference")
    for n in (0, 3):
        got, expected = symbolic(*make(n)), fun(*make(n))
        assert set(got) == set(expected) and symbolic.misses == 1


def test_policy_compiles_at_most_twice_for_32_sizes():
    f = tj.jit(lambda x, w: tnp.tanh(x) @ w, cache=False)
    for n in range(1, 33):
        x = rng.random((n, 16)).astype(np.float32)
        np.testing.assert_allclose(f(x, W), np.tanh(x) @ W, rtol=1e-5, atol=1e-5)
    assert f.misses == 2
    args = [a for row in f.cache_info().signatures for a in row.args]
    assert ("x", "f32[n,16]") in args and ("x", "f32[1,16]") in args


def test_policy_shares_a_dimension_between_arguments_that_move_together():
    f = tj.jit(lambda x, y: tnp.sum(x * y[:, None]), cache=False)
    for n in (2, 5, 9, 11):
        x, y = rng.random((n, 4)), rng.random(n)
        np.testing.assert_allclose(f(x, y), np.sum(x * y[:, None]))
    assert f.misses == 2


def test_policy_stays_specialised_where_a_size_is_needed():
    f = tj.jit(lambda x: tnp.reshape(x, (-1,)), cache=False)
    for n in (1, 2, 3):
        np.testing.assert_array_equal(f(np.ones((n, 3))), np.ones(3 * n))
    assert f.misses == 3


def test_sizes_used_as_numbers():
    """x.shape[0] of a symbolic dimension used as a number: with arrays it becomes the size read at run time
    (weakly typed, as the Python int it stands for); Python arithmetic on it needs the size, and the policy
    then compiles per size. Results and dtypes are NumPy's for every size either way."""
    programs = {"mean": (lambda x: tnp.sum(x, axis=0) / x.shape[0], 2), "x*n": (lambda x: x * x.shape[0], 2),
                "n*x": (lambda x: x.shape[0] * x, 2), "full": (lambda x: tnp.full((3,), x.shape[0]), 2),
                "grad": (tj.grad(lambda x: tnp.sum(x * x) / x.shape[0]), 2),
                "n**-0.5": (lambda x: x * x.shape[0] ** -0.5, 4), "np.sqrt": (lambda x: x / np.sqrt(x.shape[0]), 4)}
    for name, (f, compiles) in programs.items():
        jf = tj.jit(f, cache=False)
        for n in (2, 3, 5, 1):
            x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
            got, want = jf(x), f(x)
            assert got.dtype == np.asarray(want).dtype, name
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)
        assert jf.misses == compiles, name
    with pytest.raises(SymbolicDimError, match="dimension n of argument x .*conversion to a NumPy array"):
        tj.jit(lambda x: x / np.sqrt(x.shape[0]), dynamic_dims={"x": {0: "n"}})(np.ones((2, 3)))


def test_squeeze_without_axis_needs_the_sizes():
    """squeeze() drops the axes of size 1, so code for any size of an axis would be wrong at size 1."""
    f = tj.jit(tnp.squeeze, cache=False)
    for n in (2, 3, 1, 4):
        assert f(np.ones((n, 3))).shape == np.squeeze(np.ones((n, 3))).shape
    with pytest.raises(SymbolicDimError, match="dimension n of argument a .*squeeze without an axis"):
        tj.jit(tnp.squeeze, dynamic_dims={"a": {0: "n"}})(np.ones((2, 3)))


def test_error_names_the_dimension_and_why():
    f = tj.jit(lambda x: tnp.reshape(x, (-1,)), dynamic_dims={"x": {0: "n"}})
    with pytest.raises(SymbolicDimError, match="dimension n of argument x is symbolic.*reshape"):
        f(np.ones((3, 4)))
    g = tj.jit(lambda x: x + tnp.ones(5), dynamic_dims={"x": {0: "n"}})
    with pytest.raises(SymbolicDimError, match="dimension n of argument x.*add"):
        g(np.ones(3))


def test_ir_prints_symbolic_dims():
    n = Dim("n")
    text = str(tj.make_ir(lambda x, w: tnp.tanh(x) @ w)(ShapedArray((n, 64), "float32"),
                                                           ShapedArray((64, 8), "float32")))
    assert "a:f32[n,64]" in text and "f32[n,8] = dot_general" in text
    lowered = tj.jit(lambda x: x * 2.0, dynamic_dims={"x": {0: "n"}}).lower(np.ones((3, 2), np.float32))
    assert "f32[n,2]" in lowered.as_text()


def test_hundreds_of_sizes_through_one_compile():
    """More sizes than the per-size plans keep (256): they are evicted and planned again, never mixed up."""
    fun, (_, w) = SUITE["matmul"][0], SUITE["matmul"][1](1)
    symbolic = tj.jit(fun, dynamic_dims=SPECS["matmul"], cache=False)
    for n in [*range(300), 5, 299, 0]:
        x = rng.random((n, 16)).astype(np.float32)
        np.testing.assert_allclose(symbolic(x, w), np.tanh(x) @ w, rtol=2e-5, atol=1e-5)
    assert symbolic.misses == 1


EMPTY_REDUCTIONS = {"max": tnp.max, "min": tnp.min, "argmax": tnp.argmax, "argmin": tnp.argmin, "ptp": tnp.ptp,
                    "nanmax": tnp.nanmax, "driven": lambda x, axis: (x, tnp.max(x, axis=axis))}   # an output copied: the Python driver runs it


@pytest.mark.parametrize("backend,ctypes_entry", [("llvm", False), ("llvm", True), ("reference", False)])
@pytest.mark.parametrize("name", list(EMPTY_REDUCTIONS))
def test_symbolic_max_of_no_elements(name, backend, ctypes_entry, monkeypatch):
    """max, min, argmax ... over a symbolic axis at size 0 refuse when called, as shape-specialised code (and
    NumPy) refuses them when traced: on the native entry, the ctypes one, the Python driver and the
    reference interpreter; first at 0, and between calls at other sizes."""
    if ctypes_entry:
        monkeypatch.setattr(native_call, "PY_ENTRY_OK", False)
    reduce = EMPTY_REDUCTIONS[name]
    with pytest.raises(ValueError):
        reduce(np.zeros((0, 3)), axis=0)
    for sizes in ((2, 0, 5, 0, 1), (0, 3)):
        f = tj.jit(lambda x: reduce(x, axis=0), dynamic_dims={"x": {0: "n"}}, cache=False, backend=backend)
        for n in sizes:
            x = np.random.default_rng(n).standard_normal((n, 3))
            if n:
                for got, want in zip(tj.tree.leaves(f(x)), tj.tree.leaves(reduce(x, axis=0))):
                    np.testing.assert_array_equal(got, want)
            else:
                with pytest.raises(ValueError, match=r"dimension n of argument x \(0 at this call\) has no identity"):
                    f(x)
        assert f.misses == 1


def test_symbolic_max_of_no_elements_under_vmap_and_grad():
    """The requirement is the dimension's wherever the max is traced (vmap's and grad's inner traces); a vmap
    over the symbolic axis itself maps over nothing at 0, which is no error; reductions with an identity (sum,
    max with initial=, logsumexp, softmax) stay defined at 0."""
    dims = {"x": {0: "n"}}
    batched = tj.jit(tj.vmap(lambda x: tnp.argmin(x, axis=0), in_axes=1), dynamic_dims=dims, cache=False)
    grad = tj.jit(tj.grad(lambda x: tnp.sum(tnp.max(x, axis=0))), dynamic_dims=dims, cache=False)
    over_n = tj.jit(tj.vmap(lambda x: tnp.max(x)), dynamic_dims=dims, cache=False)
    fine = tj.jit(lambda x: (tnp.sum(x, 0), tnp.max(x, 0, initial=-1.0), logsumexp(x, 0), nn.softmax(x, 0)),
                  dynamic_dims=dims, cache=False)
    x = np.array([[1.0, 5.0], [3.0, -2.0], [2.0, 0.5]])
    np.testing.assert_array_equal(batched(x), np.argmin(x, axis=0))
    np.testing.assert_array_equal(grad(x), [[0, 1], [1, 0], [0, 0]])
    np.testing.assert_array_equal(over_n(x), np.max(x, axis=1))
    for f in (batched, grad):
        with pytest.raises(ValueError, match="no identity"):
            f(np.zeros((0, 2)))
    assert over_n(np.zeros((0, 2))).shape == (0,)
    got = fine(np.zeros((0, 2)))
    np.testing.assert_array_equal(got[0], [0, 0])
    np.testing.assert_array_equal(got[1], [-1, -1])
    np.testing.assert_array_equal(got[2], [-np.inf, -np.inf])
    assert got[3].shape == (0, 2)
    np.testing.assert_allclose(fine(x)[2], logsumexp(x, 0))


@pytest.mark.parametrize("backend", ["llvm", "reference"])
def test_indexing_a_symbolic_axis_compiles_once(backend):
    """x[i], take in each mode (axis None ravels a 1-D array) and take_along_axis over a symbolic axis compile
    once for every size, with JAX's values (their range tests read the size at run time); at size 0 an index has
    no element: refused, as an empty max is, never read out of bounds."""
    jnp = pytest.importorskip("jax.numpy")      # (64-bit types enabled: conftest.py)
    idx, rows = np.array([0, 2, -1, 5, -7, 3]), np.array([[0, 5, -1], [2, -9, 1], [3, 3, -4]])
    cases = {"x[i]": (lambda m: lambda x, i: m.asarray(x)[i], 0, idx),
             **{f"take {mode}": (lambda m, mode=mode: lambda x, i: m.take(x, i, mode=mode), 0, idx)
                for mode in (None, "clip", "wrap")},
             **{f"take_along_axis {mode}": (lambda m, mode=mode: lambda x, i: m.take_along_axis(x, i, 1, mode=mode),
                                            1, rows) for mode in (None, "clip")}}
    for name, (make, axis, i) in cases.items():
        f = tj.jit(make(tnp), dynamic_dims={"x": {axis: "n"}}, cache=False, backend=backend)
        for n in (4, 9, 1):
            x = np.arange(n * (3 if axis else 1), dtype=np.float64).reshape((3, n) if axis else (n,)) * 1.5
            np.testing.assert_array_equal(f(x, i), make(jnp)(x, i), err_msg=f"{name} at {n}")
        with pytest.raises(ValueError, match=r"dimension n of argument x \(0 at this call\), which has no element"):
            f(np.zeros((3, 0) if axis else (0,)), i)
        assert f.misses == 1, name
