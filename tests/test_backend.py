"""The LLVM backend against the NumPy reference interpreter (eval_ir): primitives with their params and dtypes,
programs fused and unfused, edge cases (size 0, 0-d, views, division by zero, out-of-range indices), threads,
and the introspection API. Every primitive's examples, and every elementwise one in each dtype it accepts, are
compiled in test_primitives.py."""
# ruff: noqa: B023 -- each lambda is traced right away, inside its loop iteration
import re
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend import compile_ir, runtime
from tracejit.backend.steps import ParallelStep, PythonStep, SerialStep
from tracejit.core.api_util import flatten_args, trace_pytree
from tracejit.core.avals import SHORT_NAMES, finfo, is_float
from tracejit.core.trace import bind, eval_ir
from tracejit.primitives import ALL

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]
ALL_DTYPES = [np.dtype(d) for d in SHORT_NAMES]      # every dtype tracejit supports
P = ALL


def sample(dtype, shape=(23,), seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind == "c":        # each part a float sample: special values meet each other and finite ones
        part = np.finfo(dtype).dtype
        out = np.empty(shape, dtype)
        out.real, out.imag = sample(part, shape, seed), sample(part, shape, seed + 1000)
        return out
    if is_float(dtype):     # the dtype's extremes, a subnormal, and values beyond float16's range
        info = finfo(dtype)
        special = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, np.inf, -np.inf, np.nan, 1e30, -1e30, 88.5, -100.0,
                   float(info.max), -float(info.max), float(info.smallest_subnormal), 70000.0]
        x = np.concatenate([special, rng.normal(size=n) * 3])[:n] if n >= len(special) else rng.normal(size=n)
        with np.errstate(over="ignore"):
            return rng.permutation(x).astype(dtype).reshape(shape) if n else x.astype(dtype).reshape(shape)
    if dtype == np.bool_:
        return rng.random(n).reshape(shape) < 0.5
    info, bits = np.iinfo(dtype), 8 * dtype.itemsize
    special = [v % (1 << bits) if dtype.kind == "u" else v     # negatives wrap for unsigned dtypes
               for v in (0, -1, 1, 2, -2, 7, info.max, info.min, info.max - 1, info.min + 1, bits)]
    x = (np.concatenate([np.array(special, dtype), rng.integers(-20, 20, size=n).astype(dtype)])[:n]
         if n >= len(special) else rng.integers(-5, 5, n).astype(dtype))
    return rng.permutation(x).reshape(shape)


def assert_same(got, want, rtol=None, atol=None, normwise=False):
    """Equal dtypes and shapes, and values within rtol; normwise: within rtol of the largest |value| (the
    accuracy of matrix factorizations and solves, where a small element carries the error of the large ones)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype.kind == "c":
        assert_complex_close(got, want, rtol or (3e-6 if want.dtype == np.complex64 else 1e-13))
    elif is_float(want.dtype):     # the 16-bit floats: within an ulp (a math function's float32 result may differ)
        info = finfo(want.dtype)
        tol = rtol or {np.float32: 3e-6, np.float64: 1e-13}.get(want.dtype.type, float(info.eps))
        atol = atol or float(info.tiny) * 4
        if normwise and want.size and np.isfinite(want).all():
            atol = max(atol, tol * float(np.abs(want.astype(np.float64)).max()))
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=atol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def assert_complex_close(got, want, rtol):
    """Each part equal where NumPy's is not finite (NaN for NaN, the sign of a zero), else within rtol of |want|
    (a part much smaller than the other is only as accurate as the larger one)."""
    with np.errstate(over="ignore"):
        magnitude = np.abs(want)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        finite = np.isfinite(w)
        np.testing.assert_array_equal(np.where(finite, 0, g), np.where(finite, 0, w))
        scale = np.where(np.isfinite(magnitude), magnitude, np.abs(w))
        tol = rtol * np.where(finite, scale, 0) + np.finfo(w.dtype).tiny * 4
        with np.errstate(invalid="ignore"):
            bad = finite & ~(np.abs(g - w) <= tol)
        assert not bad.any(), f"{g[bad]} != {w[bad]} (of {got[bad]} and {want[bad]})"


def compiled_and_reference(f, *args, fuse=True):
    leaves, names, in_tree = flatten_args(f, args)
    closed, _ = trace_pytree(f, leaves, names, in_tree)
    want = eval_ir(closed, *leaves)
    got = compile_ir(closed, fuse=fuse).run(leaves)
    return got, want


def check(f, *args, rtol=None, atol=None, fuse=(True, False), normwise=False):
    for fu in fuse:
        got, want = compiled_and_reference(f, *args, fuse=fu)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol, atol, normwise)


def accepts(prim, *avals, **params):
    try:
        prim.shape_rule(*avals, **params)
        return True
    except (TypeError, ValueError, tj.ShapeError):
        return False


# ------------------------------------------------------------------------------------------ elementwise

def test_round_and_integer_pow():
    for dtype in (np.float32, np.float64):
        check(lambda a: bind(P["round"], a, rounding_method=1), sample(dtype), fuse=(True,))
        check(lambda a: bind(P["round"], a, rounding_method=0), sample(dtype), fuse=(True,))
    for dtype in DTYPES[:4]:
        for y in (0, 1, 2, 3, 5, -1, -2):
            check(lambda a: bind(P["integer_pow"], a, y=y), sample(dtype), fuse=(True,))


def test_integer_division_and_remainder_by_zero():
    for dtype in (np.int32, np.int64):
        info = np.iinfo(dtype)
        x = np.array([7, -7, 7, -7, 0, 5, info.min, info.min, info.max], dtype)
        y = np.array([2, 2, -2, -2, 0, 0, -1, 1, -1], dtype)
        check(lambda a, b: bind(P["div"], a, b), x, y)
        check(lambda a, b: bind(P["rem"], a, b), x, y)
        got = tj.jit(lambda a, b: bind(P["div"], a, b))(x, y)
        assert got[4] == 0 and got[5] == 0


def test_uint64_remainder_by_a_small_constant_runs_on_32_bit_halves():
    """x % d for uint64 x and a constant d below 2**16 is computed from x's 32-bit halves (it vectorizes; 64-bit
    remainders by a constant ran one lane at a time): NumPy's values at the extremes and at random, every d from 1
    to 2**16 - 1 at its edges, and the general path beyond."""
    x = np.random.default_rng(12).integers(0, 2**64 - 1, 5000, dtype=np.uint64, endpoint=True)
    x[:6] = [0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1]
    for d in (1, 2, 3, 100, 255, 4096, 65521, 65535, 65536, 4_000_000_007):
        f = tj.jit(lambda v, d=d: v % np.uint64(d))
        np.testing.assert_array_equal(f(x), x % np.uint64(d))
        assert ("urem i64" in f.lower(x)._entry.executable.llvm_text) == (d >= 1 << 16), d   # (as generated)


def test_select_clamp_convert():
    for dtype in DTYPES:
        x, y = sample(dtype, seed=3), sample(dtype, seed=4)
        pred = sample(np.bool_, seed=5)
        check(lambda p, a, b: bind(P["select_n"], p, a, b), pred, x, y, fuse=(True,))
        which = (np.arange(23) % 3).astype(np.int32)
        check(lambda p, a, b: bind(P["select_n"], p, a, b, a), which, x, y, fuse=(True,))
        if dtype != np.bool_:
            check(lambda a: bind(P["clamp"], np.asarray(-2, dtype)[()], a, np.asarray(5, dtype)[()]), x,
                  fuse=(True,))
        for new in DTYPES:
            check(lambda a: bind(P["convert_element_type"], a, new_dtype=np.dtype(new), weak_type=False), x,
                  fuse=(True,))


def test_float_to_int_saturates():
    """Alone and in a vectorized loop (the value clamped, then converted: rules.Emitter._saturated)."""
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.9, -2.9, 2147483520.0, 1e20, 2.0**31, 4294967040.0,
                  2.0**32, -0.0, 255.5, -129.0], np.float32)
    x = np.concatenate([x, np.tile(x, 30)[np.random.default_rng(1).permutation(30 * x.size)]])
    for new in (np.int32, np.int64, np.uint32, np.uint8, np.int8, np.uint64):
        check(lambda a: bind(P["convert_element_type"], a, new_dtype=np.dtype(new), weak_type=False), x)
        check(lambda a: bind(P["convert_element_type"], a, new_dtype=np.dtype(new), weak_type=False),
              x.astype(np.float64))


# ------------------------------------------------------------------------------------------- structural

@pytest.mark.parametrize("dtype", DTYPES)
def test_structural(dtype):
    x = sample(dtype, (3, 4, 5), seed=7)
    pad_value = np.asarray(sample(dtype, (1,), seed=8)[0])[()]
    progs = [
        lambda a: bind(P["broadcast_in_dim"], a[0], shape=(2, 4, 5, 3), broadcast_dimensions=(1, 2)),
        lambda a: bind(P["broadcast_in_dim"], bind(P["slice"], a, start_indices=(0, 0, 0), limit_indices=(3, 1, 5)),
                       shape=(3, 6, 5), broadcast_dimensions=(0, 1, 2)),
        lambda a: bind(P["reshape"], a, new_sizes=(6, 10)),
        lambda a: bind(P["reshape"], a, new_sizes=(3, 1, 20, 1)),
        lambda a: bind(P["transpose"], a, permutation=(2, 0, 1)),
        lambda a: bind(P["squeeze"], a[:, :1], dimensions=(1,)),
        lambda a: bind(P["expand_dims"], a, dimensions=(0, 3)),
        lambda a: bind(P["rev"], a, dimensions=(0, 2)),
        lambda a: bind(P["slice"], a, start_indices=(1, 0, 1), limit_indices=(3, 4, 5), strides=(1, 2, 3)),
        lambda a: bind(P["pad"], a, pad_value, padding_config=((1, 2, 0), (-1, 1, 1), (0, 0, 2))),
        lambda a: bind(P["concatenate"], a, a[:, :2], a[:, :0], dimension=1),
        lambda a: bind(P["iota"], dtype=np.dtype(np.int32 if dtype == np.bool_ else dtype), shape=(3, 4),
                       dimension=1),
    ]
    for f in progs:
        check(f, x)


def test_dynamic_slice_and_update_clamp():
    x = sample(np.float32, (6, 7), seed=9)
    u = sample(np.float32, (2, 3), seed=10)
    for i, j in [(0, 0), (3, 2), (5, 6), (-4, 100), (100, -100)]:
        i, j = np.int32(i), np.int64(j)
        check(lambda a, s, t: bind(P["dynamic_slice"], a, s, t, slice_sizes=(2, 3)), x, i, j)
        check(lambda a, b, s, t: bind(P["dynamic_update_slice"], a, b, s, t), x, u, i, j)


def test_gather_scatter_out_of_range():
    x = sample(np.float64, (5, 4), seed=11)
    idx = np.array([[0], [4], [7], [-3], [2]], np.int32)
    idx2 = np.array([[0, 1], [9, 9], [-1, 3], [4, 0]], np.int64)
    for mode in ("clip", "fill"):
        check(lambda a, i: bind(P["gather"], a, i, axes=(0,), mode=mode), x, idx)
        check(lambda a, i: bind(P["gather"], a, i, axes=(1,), mode=mode), x, idx)
        check(lambda a, i: bind(P["gather"], a, i, axes=(0, 1), mode=mode), x, idx2)
    upd = sample(np.float64, (5, 4), seed=12)
    for mode in ("clip", "drop"):
        check(lambda a, i, u: bind(P["scatter_add"], a, i, u, axes=(0,), mode=mode), x, idx, upd)
        check(lambda a, i, u: bind(P["scatter_add"], a, i, u, axes=(0, 1), mode=mode), x, idx2, upd[0])
    xi = sample(np.int32, (5, 4))
    check(lambda a, i: bind(P["gather"], a, i, axes=(0,), mode="fill"), xi, idx)


# ------------------------------------------------------------------------------------------- reductions

@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions(dtype):
    """Each reduction along each set of axes (one program computes them all, each from its own copy of x, so that
    each keeps its loop nest: a compile each took most of the time)."""
    x = sample(dtype, (4, 5, 6), seed=13)
    if dtype in (np.int32, np.int64):
        x = (x % 5).astype(dtype)
    cases = []      # (primitive, params)
    for name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
        for axes in [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2), ()]:
            if accepts(P[name], tj.ShapeDtypeStruct(x.shape, x.dtype), axes=axes):
                cases.append((P[name], {"axes": axes}))
    for name in ("argmax", "argmin"):
        for axis in range(3):
            for index_dtype in (np.int32, np.int64):
                if accepts(P[name], tj.ShapeDtypeStruct(x.shape, x.dtype), axes=(axis,),
                           index_dtype=np.dtype(index_dtype)):
                    cases.append((P[name], {"axes": (axis,), "index_dtype": np.dtype(index_dtype)}))
    if dtype != np.bool_:
        cases += [(P["cumsum"], {"axis": axis, "reverse": reverse}) for axis in range(3) for reverse in (False, True)]
    check(lambda xs: [bind(prim, a, **params) for (prim, params), a in zip(cases, xs)], [x.copy() for _ in cases],
          rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64, np.float16])
def test_cumsum_along_every_axis_is_numpys_bit_for_bit(dtype):
    """NumPy's sequential sums, its first element x[0] itself (-0.0 stays -0.0), along a leading axis a row at a
    time in memory order and along the last one element by element; 16-bit floats accumulate in float32."""
    x = sample(dtype, (5, 6, 7), seed=16)
    x[0, 0, 0] = x[4, 5, 6] = -0.0 if dtype != np.complex64 else complex(-0.0, -0.0)
    x = np.where(np.isfinite(x), x, 1)
    acc = np.float32 if dtype == np.float16 else dtype
    for axis in range(3):
        for reverse in (False, True):
            flip = (lambda a: np.flip(a, axis)) if reverse else (lambda a: a)
            want = flip(np.cumsum(flip(x), axis=axis, dtype=acc)).astype(dtype)
            got = tj.jit(lambda a: tj.lax.cumsum(a, axis=axis, reverse=reverse))(x)
            np.testing.assert_array_equal(got, want)
            for part in (np.real, np.imag):
                np.testing.assert_array_equal(np.signbit(part(got)), np.signbit(part(want)))

def test_float32_sums_of_many_elements_keep_numpys_accuracy():
    """Each float32 vector accumulator of a long sum once added up ~n/128 values (the mean of 3e6 copies of 0.1
    was off by 1e-3 relative; NumPy's pairwise sum: 1e-7). Now blocks of the innermost axis add up in float32
    and their totals in float64: a few float32 ulp, whether the axis is split over threads, a row, several
    axes or symbolic."""
    x = np.full(3_000_000, 0.1, np.float32)
    cases = [(tnp.sum, x), (tnp.mean, x), (lambda a: tnp.sum(a, axis=1), x.reshape(3, 1_000_000)),
             (tnp.sum, x.reshape(1000, 3000)), (lambda a: tnp.sum(a * 2.0 - 0.1), x)]
    for fn, a in cases:
        truth = fn(a.astype(np.float64))
        np.testing.assert_allclose(tj.jit(fn)(a), truth, rtol=1e-6)
        np.testing.assert_allclose(tj.jit(fn, dynamic_dims={"a": {a.ndim - 1: "n"}})(a), truth, rtol=1e-6)


@pytest.mark.parametrize("shape,axes", [((20_000, 37), (0,)), ((64, 2_000, 9), (1,)), ((3, 70_000, 5), (0, 1))])
def test_reductions_that_keep_the_last_axis_fuse_their_operand_at_large_sizes(shape, axes):
    """Accumulated in place in memory order, split over the threads when the outer axis is kept; the
    fused operand (also an output) and NaNs included."""
    x = sample(np.float32, shape, seed=15)
    for name in ("reduce_sum", "reduce_max", "reduce_min"):
        check(lambda a: (bind(P[name], a * 0.5 + 1.0, axes=axes), a * 0.5 + 1.0), x, rtol=1e-4, fuse=(True,))

# -------------------------------------------------------------------------------------------------- dot

@pytest.mark.parametrize("dtype", DTYPES[:4])
def test_dot_general(dtype):
    rng = np.random.default_rng(14)
    a = (rng.normal(size=(3, 4, 5)) * 3).astype(dtype)
    b = (rng.normal(size=(3, 5, 6)) * 3).astype(dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    cases = [
        (a[0], b[0], (((1,), (0,)), ((), ()))),          # plain matmul
        (a[0].T, b[0], (((0,), (0,)), ((), ()))),        # transposed lhs
        (a[0], b[0].T, (((1,), (1,)), ((), ()))),        # transposed rhs
        (a, b, (((2,), (1,)), ((0,), (0,)))),            # batched
        (a, b, (((2, 0), (1, 0)), ((), ()))),            # two contracting axes
        (a[0, 0], b[0], (((0,), (0,)), ((), ()))),       # vector-matrix
        (a[0], b[0, :, 0], (((1,), (0,)), ((), ()))),    # matrix-vector
        (a[0, 0], b[0, :, 0], (((0,), (0,)), ((), ()))),  # dot product
        (a, b, (((), ()), ((0,), (0,)))),                # batched outer product
        (a[:, :, :0], b[:, :0], (((2,), (1,)), ((0,), (0,)))),  # empty contraction
    ]
    for lhs, rhs, dims in cases:
        check(lambda x, y: bind(P["dot_general"], x, y, dimension_numbers=dims), np.ascontiguousarray(lhs),
              np.ascontiguousarray(rhs), rtol=rtol)


# ------------------------------------------------------------------------------------------------ programs

def softmax(x):
    e = tnp.exp(x - tnp.max(x, axis=-1, keepdims=True))
    return e / tnp.sum(e, axis=-1, keepdims=True)


def logsumexp(x):
    m = tnp.max(x, axis=1, keepdims=True)
    return tnp.log(tnp.sum(tnp.exp(x - m), axis=1)) + m[:, 0]


def mlp(w1, b1, w2, x):
    h = tnp.tanh(x @ w1 + b1)
    return tnp.sum(softmax(h @ w2) ** 2, axis=0), h


def chain(x, y):
    return tnp.sum(tnp.tanh(x * y + 1) * 0.5 + tnp.exp(-x * x))


def mixed(x, y):
    z = tnp.where(x > 0, tnp.sqrt(tnp.abs(x)), tnp.sin(y))
    return z.T @ y, tnp.cumsum(z, axis=0)[::-1], tnp.argmax(z, axis=1), tnp.mean(z), z[1:3, ::2] * 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_programs(dtype):
    rng = np.random.default_rng(15)
    x = rng.normal(size=(8, 16)).astype(dtype)
    y = rng.normal(size=(8, 16)).astype(dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    check(softmax, x, rtol=rtol)
    check(logsumexp, x, rtol=rtol)
    check(chain, x, y, rtol=rtol)
    check(mixed, x, y, rtol=rtol)
    w1, b1, w2 = (rng.normal(size=s).astype(dtype) for s in [(16, 32), (32,), (32, 10)])
    check(mlp, w1, b1, w2, x, rtol=rtol)


def test_jit_end_to_end_and_cache():
    f = tj.jit(lambda x, y: {"s": tnp.sum(x * y), "p": x + y})
    x, y = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    out = f(x, y)
    assert out["s"] == 15.0 and np.array_equal(out["p"], x + 1)
    f(x, y)
    info = f.cache_info()
    assert info["entries"] == 1 and info["hits"] == 1
    assert {"trace", "passes", "codegen", "llvm"} <= set(info["signatures"][0]["seconds"])


WITHOUT_LLVMLITE = """
import importlib.abc, sys

class NoLLVMLite(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "llvmlite":
            raise ModuleNotFoundError(f"No module named {name!r} (hidden by the test)", name=name)

sys.meta_path.insert(0, NoLLVMLite())
import numpy as np
import tracejit as tj, tracejit.backend, tracejit.backend.rules, tracejit.numpy as tnp, tracejit.primitives
from tracejit.core.trace import eval_ir
f = lambda x: tnp.sum(tnp.tanh(x) * 2.0)
x = np.linspace(-1, 2, 5)
print(float(eval_ir(tj.make_ir(f)(x), x)[0]))
print(np.sum(np.tanh(x) * 2.0))
try:
    tj.jit(f)(x)
except ModuleNotFoundError as e:
    print("compiling:", e.name)
print("llvmlite" in sys.modules)
"""


def test_primitives_and_the_interpreter_work_without_llvmlite():
    """Only compiling needs llvmlite: importing tracejit (its primitives' lowering rules, the backend) and
    the reference interpreter do not."""
    proc = subprocess.run(check=False, args=[sys.executable, "-c", WITHOUT_LLVMLITE], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    interpreted, numpy_result, compiling, imported = proc.stdout.split("\n")[:4]
    assert float(interpreted) == pytest.approx(float(numpy_result), rel=1e-12)
    assert compiling == "compiling: llvmlite" and imported == "False"


def test_fusion_makes_one_loop():
    lowered = tj.jit(chain).lower(np.ones(100, np.float32), np.ones(100, np.float32))
    llvm_ir = lowered.compile()._entry.executable.llvm_text
    assert llvm_ir.count("define internal void @g") == 1   # one kernel: elementwise chain + reduction



def _kernels(f, *args):
    return tj.jit(f).lower(*args).compile()._entry.executable.llvm_text.count("define internal void @g")


def test_long_chains_fuse_into_loop_nests_small_enough_to_vectorize():
    """The vectorizer's time grows with the square of a loop body, so a long chain is cut into loop nests of
    at most fusion.FUSED_COST, each of which vectorizes: 1000 ops over 1e5 elements ran 47 ms in one scalar
    loop, 3 ms in four vector loops. Small loops stay scalar only while their work is small."""
    def chain(x):
        for i in range(600):
            x = tnp.tanh(x) if i % 100 == 99 else x * 1.0001 if i % 2 else tnp.maximum(x, -1.0)
        return x
    x = np.linspace(-1.0, 1.0, 10_000, dtype=np.float32)
    check(chain, x, fuse=(True,))
    assert 2 <= _kernels(chain, x) <= 4
    # vector loops; also over 1000 elements (below SCALAR_BELOW), as the body makes the work large
    for n in (10_000, 1000):
        assert re.search(r"<\d+ x float>", tj.jit(chain).lower(x[:n]).as_llvm())
    assert not re.search(r"<\d+ x float>", tj.jit(lambda x: x * 2.0 + 1.0).lower(x[:1000]).as_llvm())
    # An innermost loop of 10 (rows that cannot merge into one loop: a vector multiplies each) is too short to
    # vectorize, unless it calls the vector math library (fusion.MIN_LIBRARY_LOOP): then one vector as wide as the
    # loop (16 lanes, 6 masked) per call. Rows that merge are one loop, which vectorizes.
    rows, c = x.reshape(1000, 10), np.linspace(0.5, 1.5, 10, dtype=np.float32)
    scale, tanh = (lambda x, c: tnp.maximum(x * c, -1.0)), (lambda x, c: tnp.tanh(x * c))
    assert [k["vectorized"] for k in tj.jit(scale).lower(rows, c).compile().kernels()] == [False]
    assert re.search(r"call <16 x float> @tj_tanh_float_v16\(", tj.jit(tanh).lower(rows, c).as_llvm())
    assert re.search(r"<\d+ x float>", tj.jit(_arithmetic_chain).lower(rows).as_llvm())
    for f, args in ((chain, (rows,)), (_arithmetic_chain, (rows,)), (scale, (rows, c)), (tanh, (rows, c))):
        check(f, *args, fuse=(True,))


def test_short_loops_calling_the_library_make_one_vector_call():
    """An RNN step's tanh over 8 f32 is one 8-lane library call, not 8 scalar ones (issue 20 item 3, a scan
    step no slower than JAX's: an 8-wide RNN over 1e5 steps took 8.6 ms, 4.5 ms so, JAX 5.1)."""
    w = np.random.default_rng(0).uniform(-0.3, 0.3, (8, 8)).astype(np.float32)
    xs = np.random.default_rng(1).uniform(-0.1, 0.1, (50, 8)).astype(np.float32)
    rnn = lambda h, xs: tj.lax.scan(lambda h, x: (tnp.tanh(h @ w + x), tnp.sum(h)), h, xs)
    text = tj.jit(rnn).lower(xs[0], xs).as_llvm()
    assert re.search(r"call <8 x float> @tj_tanh_float_v8\(", text) and "@tj_tanh_float(" not in text
    check(rnn, xs[0], xs, fuse=(True,))


def _arithmetic_chain(x):
    for i in range(600):
        x = x * 1.0001 if i % 2 else tnp.maximum(x, -1.0)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("steps", [8, 32, 200])
def test_math_chains_vectorize_whatever_their_length_and_call_the_library(steps, dtype):
    """No cliff (issue 20): every loop nest of a chain of math calls is vectorized, however long the chain, and
    the loops call the vector math library's functions (vecmath.py) instead of carrying their bodies."""
    def chain(x):
        for i in range(steps):
            x = (tnp.sin(x) if i % 2 else tnp.tanh(x)) * 0.5 + 0.25
        return x
    x = np.linspace(-1.0, 1.0, 100_000, dtype=dtype)
    check(chain, x, fuse=(True,))
    lowered = tj.jit(chain).lower(x)
    kernels = lowered.compile().kernels()
    assert kernels and all(k["kind"] == "loop" and k["vectorized"] for k in kernels), kernels
    assert sum(k["ops"].count("sin") + k["ops"].count("tanh") for k in kernels) == steps
    ty = "float" if dtype == np.float32 else "double"
    llvm_ir = lowered.as_llvm()
    assert re.search(rf"call <\d+ x {ty}> @tj_sin_{ty}_v\d+\(", llvm_ir)
    assert re.search(rf"call <\d+ x {ty}> @tj_tanh_{ty}_v\d+\(", llvm_ir)
    assert not re.search(r"^define .*@tj_(sin|tanh)_", llvm_ir, re.MULTILINE)     # called, not defined here


def test_only_the_library_widths_a_module_calls_are_compiled(monkeypatch):
    """The vector math library compiles, per (function, type), the widths that loops call (each width costs a
    few ms of LLVM on a first call), and the module's object code records them (vecmath.py)."""
    from tracejit.backend import vecmath
    monkeypatch.setattr(vecmath, "_addresses", {})     # as in a fresh process
    monkeypatch.setattr(vecmath, "_objects", {})
    monkeypatch.setattr(vecmath, "_pending", {})
    x = np.linspace(0.1, 1.0, 1000, dtype=np.float32)
    f = tj.jit(lambda x: tnp.arctan2(x, 0.5) * 2.0)
    np.testing.assert_allclose(f(x), np.arctan2(x, 0.5) * 2.0, rtol=1e-6)
    library = f.lower(x).compile()._entry.executable.object_code.library
    assert library and all(name == "atan2" and ty == "float" for name, ty, _ in library), library
    llvm_ir = f.lower(x).as_llvm()
    called = {int(n or 1) for n in re.findall(r"@tj_atan2_float(?:_v(\d+))?\(", llvm_ir)}
    assert {lanes for _, _, lanes in library} == called
    assert set(vecmath._addresses) == library


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inlined_math_loops_vectorize_at_full_register_width(dtype):
    """A loop of an inlined math function (erfcx, not in the library) is vectorized as wide as the registers
    (LLVM alone chose ymm on AVX-512 for the f64 body: half the throughput)."""
    from tracejit.backend import llvm as backend_llvm
    from tracejit.scipy.special import erfcx
    x = np.linspace(0.0, 1.0, 10_000, dtype=dtype)
    chain = lambda x: erfcx(erfcx(x) * 0.5 + 0.25)
    check(chain, x, fuse=(True,))
    lanes = backend_llvm.vector_bytes() // np.dtype(dtype).itemsize
    ty = "f32" if dtype == np.float32 else "f64"
    assert re.search(rf"\bv{lanes}{ty}\b|<{lanes} x {'float' if ty == 'f32' else 'double'}>",
                     tj.jit(chain).lower(x).as_llvm())


def test_loops_calling_the_library_carry_several_vectors_at_once():
    """A chain of library calls is one dependency chain per vector: the loop interleaves LIBRARY_INTERLEAVE
    vectors, so that the calls' latencies overlap (issue 20: pow and tanh chains ran 2x slower than one call)."""
    from tracejit.backend.kernels import LIBRARY_INTERLEAVE
    x = np.linspace(0.0, 1.0, 10_000)
    chain = lambda x: tnp.exp(-tnp.exp(-x))
    check(chain, x, fuse=(True,))
    calls = re.findall(r"call <\d+ x double> @tj_exp_double_v\d+\(", tj.jit(chain).lower(x).as_llvm())
    assert LIBRARY_INTERLEAVE > 1 and len(calls) >= 2 * LIBRARY_INTERLEAVE, calls


@pytest.mark.parametrize("n", [1000, 10_000])
def test_a_loop_making_one_library_call_carries_several_vectors_only_when_long(n):
    """One call per element: the core overlaps the loop's independent iterations, so a loop nest shorter than
    TINY_LOOP carries one vector (as fast, less code to compile); a longer one LIBRARY_INTERLEAVE."""
    from tracejit.backend.kernels import LIBRARY_INTERLEAVE, TINY_LOOP
    x = np.linspace(0.0, 1.0, n)
    single = lambda x: tnp.exp(-x) * 0.5 + 0.25
    check(single, x, fuse=(True,))
    calls = re.findall(r"call <\d+ x double> @tj_exp_double_v\d+\(", tj.jit(single).lower(x).as_llvm())
    assert len(calls) == (1 if n < TINY_LOOP else LIBRARY_INTERLEAVE), calls


@pytest.mark.parametrize("n", [1000, 10_000])
def test_long_chains_of_library_calls_carry_one_vector_in_tiny_loops(n):
    """Interleaved vectors multiply a loop's code: a module calling the library LIBRARY_BUDGET times or more
    carries one vector per call in a loop shorter than TINY_LOOP, where compile time outweighs run time, and
    LIBRARY_INTERLEAVE vectors in a longer loop, where the run time counts (3x here)."""
    from tracejit.backend.kernels import LIBRARY_BUDGET, LIBRARY_INTERLEAVE, TINY_LOOP
    x = np.linspace(0.0, 1.0, n)

    def chain(x):
        for _ in range(LIBRARY_BUDGET + 10):
            x = tnp.tanh(x) * 0.5 + 0.25
        return x
    check(chain, x, fuse=(True,))
    calls = re.findall(r"call <\d+ x double> @tj_tanh_double_v\d+\(", tj.jit(chain).lower(x).as_llvm())
    assert len(calls) == (LIBRARY_BUDGET + 10) * (1 if n < TINY_LOOP else LIBRARY_INTERLEAVE)


@pytest.mark.parametrize("n", [1000, 4099])
def test_short_loops_calling_the_library_fold_their_remainder_into_the_vector_loop(n):
    """A loop over fewer elements than SHORT_LOOP runs its last elements under a mask in the vector loop,
    not one by one through the library's scalar function (half the time of a sin chain over 1000 f32), so
    that the scalar function is neither called nor compiled."""
    from tracejit.backend import llvm as backend_llvm
    x = np.linspace(-3.0, 3.0, n, dtype=np.float32)
    chain = lambda x: tnp.sin(tnp.sin(x) * 0.5 + 2.0)
    check(chain, x, fuse=(True,))
    compiled = tj.jit(chain).lower(x).compile()
    assert all(k["vectorized"] for k in compiled.kernels())
    llvm_ir = tj.jit(chain).lower(x).as_llvm()
    assert re.search(r"call <\d+ x float> @tj_sin_float_v\d+\(", llvm_ir)
    assert not re.search(r"@tj_sin_float\(", llvm_ir)
    assert {lanes for _, _, lanes in compiled._entry.executable.object_code.library} == {
        backend_llvm.vector_bytes() // 4}


def test_kernels_introspection_names_scalar_loops_and_python_steps():
    """Compiled.kernels(): what a benchmark reports when it loses. A short loop stays scalar (its work does not
    pay for the vectorizer's time); hypot's is vectorized (cmathlib's modulus, no call of the C library's)."""
    x = np.linspace(0.1, 1.0, 10_000)
    kernels = tj.jit(lambda x: tnp.hypot(x, 2 * x)).lower(x).compile().kernels()
    assert [(k["kind"], k["vectorized"], k["elements"]) for k in kernels] == [("loop", True, 10_000)]
    kernels = tj.jit(lambda x: x * 2 + 1).lower(x[:100]).compile().kernels()
    assert [(k["kind"], k["vectorized"], k["elements"]) for k in kernels] == [("loop", False, 100)]
    kernels = tj.jit(lambda x: tnp.exp(x) * 2).lower(x).compile().kernels()
    assert [(k["kind"], k["vectorized"], k["ops"]) for k in kernels] == [("loop", True, ["exp", "mul"])]


def test_fusion_recomputes_cheap_values_and_stores_others_at_their_first_use():
    """softmax cross-entropy: the cheap max-shift is recomputed in each consumer loop, exp(z) is computed
    inside the sum that first needs it and stored there for the later product; results match eval_ir."""
    def xent(logits, labels):
        z = logits + 1.0
        m = tnp.max(z, axis=1, keepdims=True)
        e = tnp.exp(z - m)
        s = tnp.sum(e, axis=1, keepdims=True)
        return e / s * labels, tnp.sum(z * labels, axis=1)
    x, y = sample(np.float32, (64, 10), seed=17), sample(np.float32, (64, 10), seed=18)
    check(xent, x, y, rtol=1e-5)
    # max (with z recomputed), sum (storing e), the product (recomputing z-free e/s), the sum of z * labels
    assert _kernels(xent, x, y) == 4
    dup = lambda a: (tnp.sum(a * 2.0, axis=0), tnp.max(a * 2.0, axis=1))   # one mul, two consumer loops
    check(dup, x, fuse=(True,))
    assert _kernels(dup, x) == 2


# Random programs on (5, 7) values and their reductions (keepdims, so that everything broadcasts), with
# values used by several loop nests: what fusion planning decides (recompute, store at the first use,
# epilogues, in-place column reductions) must never change a result.
_UNARY = [lambda v: tnp.exp(tnp.tanh(v)), tnp.tanh, tnp.negative, lambda v: v * v, lambda v: v / (1.0 + v * v),
          lambda v: tnp.sum(v, axis=0, keepdims=True), lambda v: tnp.max(v, axis=1, keepdims=True),
          lambda v: tnp.sum(v, keepdims=True) * 0.5, lambda v: tnp.broadcast_to(v, (5, 7)) + 0.0]
_BINARY = [tnp.add, tnp.subtract, tnp.multiply, tnp.maximum]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_UNARY) + len(_BINARY) - 1), st.integers(0, 99), st.integers(0, 99)),
                min_size=1, max_size=10), st.lists(st.integers(0, 99), min_size=1, max_size=3))
def test_random_fused_programs_match_the_reference(steps, outputs):
    def f(x, y):
        values = [x, y]
        for op, i, j in steps:
            a, b = values[i % len(values)], values[j % len(values)]
            values.append(_UNARY[op](a) if op < len(_UNARY) else _BINARY[op - len(_UNARY)](a, b))
        return [values[k % len(values)] for k in outputs]
    x = np.random.default_rng(len(steps)).normal(size=(5, 7))
    # atol: sums that cancel to 0 in NumPy's order leave an ulp of their terms (at most ~100) in ours
    check(f, x, x[::-1] * 0.5, rtol=1e-12, atol=1e-12, fuse=(True,))

# ------------------------------------------------------------------------------------------------ edges

def test_size_zero_and_zero_d():
    check(lambda a: (tnp.exp(a) + 1, tnp.sum(a), tnp.sum(a, axis=0), a.T @ a, a * 2), np.zeros((0, 3), np.float32))
    check(lambda a: (a * 2, tnp.sum(a)), np.float64(3.0))
    check(lambda a, b: a + b, np.array(2.0), np.array(3.0))
    f = tj.jit(lambda a: a + 1)
    assert f(np.array(1.5)).shape == () and f(np.array(1.5)) == 2.5


def test_edge_cases_found_by_fuzzing():
    """Each once a wrong result or a crash of compiled code: concatenations of empty operands (LLVM IR that did
    not parse), a bool scatter-add with repeated indices (counted mod 2, not or-ed), sign(-0.0) (-0.0, NumPy
    +0.0), x ** 0.5 at -0.0 and -inf (C's pow; NumPy and the reference take sqrt)."""
    empty = np.zeros((2, 0))
    check(lambda a: (tnp.concatenate([a, a], axis=1) * 2.0, tnp.concatenate([a[0], a[1]])), empty)
    check(lambda x: x.at[np.array([0, 0, 1, 1, 1, 2])].add(True), np.zeros(3, bool))
    check(lambda x: 1.0 / tnp.sign(x), np.array([-0.0, 0.0, 2.0, -3.0, np.nan], np.float32))
    x = np.array([-np.inf, -0.0, 0.0, 4.0, np.nan])
    check(lambda x: 1.0 / x ** 0.5, x)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(tj.jit(lambda x: 1.0 / x ** 0.5)(x), 1.0 / x ** 0.5)
        np.testing.assert_array_equal(tj.jit(lambda x: 1.0 / tnp.sign(x))(x), 1.0 / np.sign(x))


def test_non_contiguous_inputs():
    f = tj.jit(lambda a, b: tnp.exp(a) * b + 1)
    base = np.random.default_rng(16).normal(size=(6, 8))
    for a, b in [(base.T, base.T), (base[::2, 1::3], base[1::2, ::3]), (np.asfortranarray(base), base)]:
        want = np.exp(a) * b + 1
        np.testing.assert_allclose(f(a, b), want, rtol=1e-13)
        np.testing.assert_allclose(f(np.ascontiguousarray(a), b), want, rtol=1e-13)
    # large transposed inputs are copied in tiles (executable._c_copy): sizes no multiple of a tile, reversed
    # axes, a leading batch axis, a transposed batch of matrices
    big = np.random.default_rng(17).normal(size=(3, 420, 410))     # 1.4 MB a matrix
    for a in (big[0].T, big[1, ::-1].T, np.swapaxes(big, 1, 2), np.transpose(big, (2, 0, 1)), big[:, ::2, ::-3]):
        np.testing.assert_array_equal(tj.jit(lambda a: a * 2.0)(a), a * 2.0)


def test_outputs_are_fresh():
    x = np.arange(4.0)
    f = tj.jit(lambda a: (a, a, 2.0, a + 1))
    a, b, c, _ = f(x)
    assert a is not x and b is not a and not np.shares_memory(a, x) and c == 2.0
    a[0] = 99
    assert x[0] == 0 and b[0] == 0


def test_threads_share_one_function():
    f = tj.jit(lambda a, b: tnp.sum(tnp.tanh(a * b), axis=1) + tnp.max(a, axis=1))
    rng = np.random.default_rng(17)
    inputs = [(rng.normal(size=(50, 40)), rng.normal(size=(50, 40))) for _ in range(8)]
    errors = []

    def work(k):
        for _ in range(30):
            a, b = inputs[k]
            if not np.allclose(f(a, b), np.sum(np.tanh(a * b), axis=1) + np.max(a, axis=1), rtol=1e-12):
                errors.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and f.cache_info()["entries"] == 1


def test_introspection():
    lowered = tj.jit(chain).lower(np.ones(10, np.float32), np.ones(10, np.float32))
    assert "reduce_sum" in lowered.as_text() and "tanh" in lowered.as_text()
    assert "define" in lowered.as_llvm() and "@step0(" in lowered.as_llvm()
    asm = lowered.compile().as_asm()
    assert "step0" in asm and ("zmm" in asm or "ymm" in asm or "xmm" in asm)


def test_large_parallel_kernels():
    rng = np.random.default_rng(18)
    x = rng.random(3_000_000).astype(np.float32)
    f = tj.jit(lambda a: tnp.tanh(a) * 2 + tnp.exp(-a))
    np.testing.assert_allclose(f(x), np.tanh(x) * 2 + np.exp(-x), rtol=3e-6)
    m = rng.random((2000, 1500))
    g = tj.jit(lambda a: tnp.sum(tnp.exp(a), axis=1))
    np.testing.assert_allclose(g(m), np.sum(np.exp(m), axis=1), rtol=1e-12)
    h = tj.jit(lambda a: tnp.sum(tnp.exp(a)))
    np.testing.assert_allclose(h(x), np.sum(np.exp(x.astype(np.float64))), rtol=1e-5)
    if runtime.NUM_THREADS > 1:     # each of them ran over the cores (the sum: partial sums, then one step)
        for fn, arg in ((f, x), (g, m), (h, x)):
            assert any(isinstance(s, ParallelStep) for s in fn.lower(arg)._entry.executable.steps)
    small = tj.jit(lambda a: a * 2.0 + 1.0)      # ~1 us: a second core would not pay for the pool's cost
    assert [type(s) for s in small.lower(x[:10_000])._entry.executable.steps] == [SerialStep]


# ----------------------------------------------------------------------------------------- control flow

def check_lowered(f, *args, rtol=None):
    """Compiled (fused and unfused) equals eval_ir, and every control-flow equation runs as native code."""
    leaves, names, in_tree = flatten_args(f, args)
    closed, _ = trace_pytree(f, leaves, names, in_tree)
    want = eval_ir(closed, *leaves)
    for fuse in (True, False):
        exe = compile_ir(closed, fuse=fuse)
        assert not any(isinstance(s, PythonStep) for s in exe.steps)
        got = exe.run(leaves)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol)


def test_cond_and_switch_lowered():
    x, y = sample(np.float32, (5,)), sample(np.int32, (3,))
    branches = [lambda p: (p[0] + 1, p[1] * 2), lambda p: (tnp.sin(p[0]), p[1] - 1),
                lambda p: (p[0] * p[0], p[1])]
    for i in (-3, 0, 1, 2, 7):
        check_lowered(lambda i, x, y: tj.lax.switch(i, branches, (x, y)), np.int32(i), x, y)
    check_lowered(lambda p, x: tj.lax.cond(p, lambda x: tnp.exp(x), lambda x: x * 2.0, x), np.bool_(True), x)
    check_lowered(lambda p, x: tj.lax.cond(p, lambda x: tnp.sum(x), lambda x: 1.5, x),
                  np.bool_(False), sample(np.float64, (4, 3)))


def test_while_and_fori_lowered():
    def collatz(n):
        return tj.lax.while_loop(lambda c: c[0] != 1, lambda c: (tnp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1),
                                                             c[1] + 1), (n, np.int32(0)))
    check_lowered(collatz, np.int32(27))
    check_lowered(collatz, np.int32(1))          # zero iterations: the carry is the input
    check_lowered(lambda x: tj.lax.fori_loop(0, 50, lambda i, c: c * 0.99 + tnp.tanh(c) * i, x),
                  sample(np.float64, (3, 4)))


def test_scan_lowered():
    xs, c0 = sample(np.float32, (7, 3), 1), sample(np.float32, (3,), 2)
    w = sample(np.float32, (3, 3), 3) * 0.3

    def body(c, x):
        h = tnp.tanh(c @ w + x["a"])
        return h, {"h": h, "n": tnp.sum(h * h), "i": x["i"] * 2}

    for reverse in (False, True):
        check_lowered(lambda c, xs: tj.lax.scan(body, c, xs, reverse=reverse), c0,
                      {"a": xs, "i": np.arange(7, dtype=np.int64)})
    check_lowered(lambda c: tj.lax.scan(lambda c, _: (c * 2 + 1, c), c, None, length=5), c0)
    check_lowered(lambda c: tj.lax.scan(lambda c, _: (c, None), c, None, length=0), c0)   # empty scan


def test_nested_and_batched_control_flow_lowered():
    xs = np.random.default_rng(4).normal(size=(6, 4))

    def nested(xs):
        def outer(c, x):
            inner = tj.lax.fori_loop(0, 3, lambda i, a: tj.lax.cond(i % 2 == 0, lambda a: a + x, lambda a: a * 0.5, a), c)
            return inner, tnp.sum(inner)
        return tj.lax.scan(outer, tnp.zeros(4), xs)
    check_lowered(nested, xs)

    def until(x):
        return tj.lax.while_loop(lambda c: c[1] < 5.0, lambda c: (c[0] + 1, c[1] + tnp.abs(c[1]) + 0.5), (0, x))
    check_lowered(tj.vmap(until), sample(np.float64, (8,), 5))     # batched predicate
    check_lowered(tj.vmap(lambda p, x: tj.lax.cond(p, tnp.sin, tnp.cos, x)), np.arange(4) % 2 == 0, xs[:4])
    check_lowered(tj.vmap(nested), np.stack([xs, xs * 2]))


def test_grad_of_scan_lowered():
    xs, w = sample(np.float64, (9, 3), 6), sample(np.float64, (3, 3), 7) * 0.4

    def loss(w, c0, xs):
        c, ys = tj.lax.scan(lambda c, x: (tnp.tanh(c @ w + x), tnp.sum(c * x)), c0, xs)
        return tnp.sum(c) + tnp.sum(ys ** 2)

    check_lowered(tj.grad(loss, argnums=(0, 1, 2)), w, xs[0], xs)
    g = tj.jit(tj.grad(loss))(w, xs[0], xs)
    np.testing.assert_allclose(g, tj.grad(loss)(w, xs[0], xs), rtol=1e-12)


def test_scan_compiles_once_and_runs_natively():
    f = tj.jit(lambda c, xs: tj.lax.scan(lambda c, x: (c * 0.5 + x, c), c, xs))
    for n in (3, 20_000):
        xs = np.random.default_rng(n).normal(size=(n, 2)).astype(np.float32)
        c, ys = f(xs[0], xs)
        want_c, want_ys = xs[0], []
        for x in xs:
            want_ys.append(want_c)
            want_c = want_c * np.float32(0.5) + x
        assert_same(c, want_c)
        assert_same(ys, np.stack(want_ys))
    assert len(f.lower(xs[0], xs).as_llvm()) < 20_000
