"""Every tnp function against NumPy: eagerly, traced and run through jit, with the IR checked."""
import re
import warnings

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3)]
FLOATS = [np.float32, np.float64]


def rand(rng, shape, dtype, low=-2.0, high=2.0):
    if np.dtype(dtype).kind == "f":
        return rng.uniform(low, high, shape).astype(dtype)
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(-5, 6, shape).astype(dtype)


def check(fn, ref, *args, rtol=None, eager=True):
    """fn eagerly, fn under jit and eval_ir(make_ir(fn)) all match ref (NumPy) in value, shape and dtype.
    eager=False for code that needs tracer-only syntax (x.at[...] does not exist on numpy arrays)."""
    with np.errstate(all="ignore"):
        expected = ref(*args)
    ir = tj.make_ir(fn)(*args)
    tj.check_ir(ir)
    for got in ([fn(*args)] if eager else []) + [tj.jit(fn)(*args), tj.eval_ir(ir, *args)[0]]:
        got = np.asarray(got)
        assert got.shape == np.shape(expected)
        assert got.dtype == np.asarray(expected).dtype, (got.dtype, np.asarray(expected).dtype)
        tol = rtol or (2e-6 if got.dtype == np.float32 else 1e-12)
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def check_each(cases, rtol=None):
    """check(fn, ref, *args) for each (name, fn, ref, args) of cases, compiled (and made into IR for eval_ir) as
    one program: a compile per case took most of the time, and each case reads its own inputs."""
    with np.errstate(all="ignore"):
        expected = [ref(*args) for _, _, ref, args in cases]
    arguments = [args for *_, args in cases]
    program = lambda arguments: [fn(*args) for (_, fn, _, _), args in zip(cases, arguments)]
    ir = tj.make_ir(program)(arguments)
    tj.check_ir(ir)
    interpreted = tj.eval_ir(ir, *tj.tree_util.tree_leaves(arguments))
    compiled = tj.jit(program)(arguments)
    assert len(interpreted) == len(compiled) == len(cases)
    for (name, fn, _, args), want, jitted, evaluated in zip(cases, expected, compiled, interpreted):
        for got in (fn(*args), jitted, evaluated):
            got = np.asarray(got)
            assert got.shape == np.shape(want), name
            assert got.dtype == np.asarray(want).dtype, (name, got.dtype, np.asarray(want).dtype)
            tol = rtol or (2e-6 if got.dtype == np.float32 else 1e-12)
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)


UNARY = {
    "negative": np.negative, "exp": np.exp, "log1p": np.log1p, "expm1": np.expm1, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "abs": np.abs, "sign": np.sign, "square": np.square,
    "floor": np.floor, "ceil": np.ceil, "round": np.round, "isfinite": np.isfinite,
    "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "arcsinh": np.arcsinh, "arccosh": np.arccosh, "arctanh": np.arctanh, "log2": np.log2, "log10": np.log10,
    "exp2": np.exp2, "cbrt": np.cbrt,
}
POSITIVE_UNARY = {"log": np.log, "sqrt": np.sqrt}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary(rng, shape, dtype):
    check_each([(name, getattr(tnp, name), ref, [rand(rng, shape, dtype, -1.5, 1.5)]) for name, ref in UNARY.items()])


@pytest.mark.parametrize("name", sorted(POSITIVE_UNARY))
@pytest.mark.parametrize("dtype", FLOATS)
def test_positive_unary(rng, name, dtype):
    check(getattr(tnp, name), POSITIVE_UNARY[name], rand(rng, (4, 3), dtype, 0.1, 3))


BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "equal": np.equal, "not_equal": np.not_equal,
    "less": np.less, "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "logaddexp": np.logaddexp,
    "arctan2": np.arctan2, "hypot": np.hypot,
}
MORE_MATH = ["arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "log2", "log10", "exp2",
        "cbrt"]


@pytest.mark.parametrize("dtype", FLOATS)
def test_more_math_functions_on_special_values(dtype):
    """NaN, infinities, signed zeros, domain edges and exact cases (log2(8) is 3) as NumPy gives them."""
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 8.0, 1000.0, 1e-300, 710.0, -745.0, 0.5],
                 dtype)
    with np.errstate(all="ignore"):
        for name in MORE_MATH:
            want = getattr(np, name)(x)
            for got in (getattr(tnp, name)(x), tj.jit(getattr(tnp, name))(x)):
                np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == np.float32 else 1e-15, atol=0)
                np.testing.assert_array_equal(np.signbit(got) & ~np.isnan(got), np.signbit(want) & ~np.isnan(want))
        a, b = np.meshgrid(x, x)
        for name in ("arctan2", "hypot"):
            want = getattr(np, name)(a, b)
            np.testing.assert_allclose(tj.jit(getattr(tnp, name))(a, b), want, rtol=2e-6 if dtype == np.float32
                                       else 1e-15, atol=0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["sinh", "cosh", "arcsinh", "arccosh", "arctanh", "arctan", "arcsin", "arccos"])
def test_vectorized_inverse_and_hyperbolic_functions_over_every_magnitude(rng, name, dtype):
    """Compiled code of our own (mathlib's atan, and formulas on exp, expm1, log1p and sqrt): within 3 ulp of
    NumPy from 1e-300 (1e-38) to the overflow, NaN and inf where NumPy has them, signed zeros kept; around the
    points where the formulas change (exp's overflow, 2**28)."""
    top, overflow = (300, 709.0) if dtype == np.float64 else (37, 88.0)
    edges = np.concatenate([np.linspace(overflow - 3, overflow + 3, 2000), 2.0**28 * (1 + np.linspace(-1e-6, 1e-6, 101)),
                            np.finfo(dtype).max * np.linspace(0.1, 1, 100)])
    x = np.concatenate([np.sign(rng.standard_normal(20000)) * 10.0 ** rng.uniform(-top, top, 20000),
                        rng.uniform(-3, 3, 5000), rng.uniform(-1, 1, 5000), 1 - rng.uniform(0, 1e-6, 1000),
                        edges, -edges, [0.0, -0.0, 1.0, -1.0, np.tan(np.pi / 8)]]).astype(dtype)
    with np.errstate(all="ignore"):
        want, got = getattr(np, name)(x), tj.jit(getattr(tnp, name))(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.where(np.isinf(want), want, 0), np.where(np.isinf(got), got, 0))
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))
    finite = np.isfinite(want)
    ulps = np.abs(got[finite].astype(np.float64) - want[finite]) / np.spacing(np.abs(want[finite])).astype(np.float64)
    assert ulps.max() <= 3, (name, x[finite][np.argmax(ulps)], ulps.max())


@pytest.mark.parametrize("name", MORE_MATH + ["arctan2", "hypot"])
def test_more_math_functions_have_derivatives(rng, name):
    x = rng.uniform(0.2, 0.8, (5,)) + (1.5 if name == "arccosh" else 0)
    fn = getattr(tnp, name)
    f = (lambda x: fn(x, x[::-1] - 0.3)) if name in ("arctan2", "hypot") else fn
    tj.test_util.check_grads(f, (x,), order=2)


@pytest.mark.parametrize("dtype", FLOATS + [np.int32, np.int64])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (5,)), ((0, 2), (2,))])
def test_binary(rng, shapes, dtype):
    cases = []
    for name, ref in BINARY.items():
        if name == "logaddexp" and np.dtype(dtype).kind != "f":
            continue
        x, y = rand(rng, shapes[0], dtype), rand(rng, shapes[1], dtype)
        if name in ("floor_divide", "remainder") and np.dtype(dtype).kind == "f":
            y = np.where(y == 0, 1, y).astype(dtype)
        cases.append((name, getattr(tnp, name), ref, [x, y]))
    check_each(cases)


def test_integer_division_by_zero_is_zero():
    x = np.array([7, -7, 0, 5], np.int32)
    y = np.array([0, 2, 0, -2], np.int32)
    with np.errstate(divide="ignore"):
        check(tnp.floor_divide, np.floor_divide, x, y)
        check(tnp.remainder, np.remainder, x, y)


def test_power(rng):
    x = rand(rng, (3, 4), np.float64, 0.1, 2)
    check(lambda x: tnp.power(x, 3), lambda x: np.power(x, 3), x)
    check(lambda x: tnp.power(x, -2), lambda x: np.power(x, -2), x)
    check(lambda x, y: tnp.power(x, y), np.power, x, x[::-1].copy())
    check(lambda x: x ** 0.5, lambda x: x ** 0.5, x)
    i = np.array([2, 3, -1], np.int64)
    check(lambda i: i ** 2, lambda i: i ** 2, i)


def test_mixed_dtypes_promote_like_numpy(rng):
    f32, f64 = rand(rng, (3,), np.float32), rand(rng, (3,), np.float64)
    i32, i64 = rand(rng, (3,), np.int32), rand(rng, (3,), np.int64)
    b = rand(rng, (3,), np.bool_)
    for x, y in [(f32, f64), (f32, i32), (i32, i64), (i64, f32), (b, i32), (b, f32)]:
        check(tnp.add, np.add, x, y)
        check(tnp.multiply, np.multiply, x, y)


def test_bool_arithmetic_is_logical_as_in_numpy(rng):
    a, b = rand(rng, (6,), np.bool_), rand(rng, (6,), np.bool_)
    for name in ("add", "multiply", "maximum", "minimum"):
        check(getattr(tnp, name), getattr(np, name), a, b)
    check(lambda a, b: a + b * True, lambda a, b: a + b * True, a, b)
    check(lambda a: a + 1, lambda a: a + 1, a)     # a Python int makes it an integer sum


def test_python_scalars_are_weak(rng):
    x = rand(rng, (3,), np.float32)
    check(lambda x: x * 2.0 + 1, lambda x: x * np.float32(2.0) + np.float32(1), x)
    i = rand(rng, (3,), np.int32)
    check(lambda i: i * 2 + 1, lambda i: i * np.int32(2) + np.int32(1), i)
    check(lambda i: i * 2.5, lambda i: i * 2.5, i)  # a float scalar makes an int array float64, as in NumPy 2
    check(lambda i: i + -2**31, lambda i: i + -2**31, i)
    for f in (lambda i: tnp.add(i, 2**40), tj.jit(lambda i: i + 2**40), lambda i: i + 2**40):
        with pytest.raises(OverflowError, match="1099511627776 out of bounds for int32"):
            f(i)                                        # NumPy 2 raises too; it used to wrap around


EDGES = {   # found by differential fuzzing: each differed from NumPy in value, shape or dtype
    "var_ddof_past_count": lambda m: (m.var(np.zeros((0, 3)), axis=0, ddof=1), m.std(np.ones(2), ddof=3)),
    "argmax_keepdims_all_axes": lambda m: (m.argmax(np.arange(6.0).reshape(2, 3), keepdims=True),
                                           m.argmin(np.float64(3.0), keepdims=True)),
    "einsum_int32_summed_axis": lambda m: (m.einsum("ij,jk->i", np.ones((2, 5), np.int32), np.ones((5, 3), np.int32)),
                                           m.einsum("ij,jk->", np.ones((2, 5), np.int32), np.ones((5, 3), np.int32))),
    "bool_matmul_and_dot": lambda m: (m.matmul(np.array([[True, False], [False, False]]), np.array([[True], [True]])),
                                      m.dot(np.array([True, False]), np.array([False, True]))),
    "floor_ceil_keep_ints": lambda m: (m.floor(np.arange(3, dtype=np.int32)), m.ceil(np.array([True, False])),
                                       m.floor(np.array([1.5, -1.5]))),
    "mean_integer_dtype": lambda m: (m.mean(np.arange(5), dtype=np.int64),
                                     m.mean(np.arange(6).reshape(2, 3), axis=1, dtype=np.int32)),
    "einsum_empty_sum_times_inf": lambda m: (m.einsum("ij,jk->", np.zeros((0, 2)), np.array([[np.inf], [1.0]])),
                                             m.einsum("ij,jk->k", np.zeros((0, 2)), np.array([[np.inf], [1.0]]))),
    "power_numpy_int_scalar": lambda m: (m.power(np.arange(4, dtype=np.int32), np.int64(2)),
                                         m.power(np.arange(3.0, dtype=np.float32), np.int64(2)),
                                         m.power(np.arange(4, dtype=np.int32), np.int32(3))),
}


def test_unsupported_dtypes_name_the_argument_and_the_dtype():
    i32 = np.arange(3, dtype=np.int32)
    for value in (np.array(["a", "b"]), np.array([1, "x"], dtype=object), np.array(["2020-01-01"], "datetime64[D]")):
        with pytest.raises(TypeError, match=f"does not support .*dtype {re.escape(str(value.dtype))}"):
            tnp.add(i32, value)
        with pytest.raises(TypeError, match=f"does not support .*dtype {re.escape(str(value.dtype))}"):
            tj.jit(lambda i, v=value: i * v)(i32)
        with pytest.raises(TypeError, match=f"argument v has dtype {re.escape(str(value.dtype))}, which tracejit does not support"):
            tj.jit(lambda i, v: i * v)(i32, value)
    if np.dtype(np.longdouble) != np.float64:      # (where long double is wider: x86)
        for value, hint in ((np.ones(2, np.longdouble), "float64"), (np.ones(2, np.clongdouble), "complex128")):
            with pytest.raises(TypeError, match=f"dtype {value.dtype} .*astype\\(np.{hint}\\)"):
                tnp.add(i32, value)     # (rounded, it would not compute as NumPy does)


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "maximum", "minimum", "clip"])
def test_signed_zeros_and_special_values_as_numpy(name):
    """Every pair of special values, signs of zeros included (1/x tells them apart): NumPy's divmod gives
    zero results the sign of the divisor / quotient, its maximum and minimum give the second operand on a
    tie, and so does clip with array bounds (with scalar bounds NumPy's SIMD loop keeps the value)."""
    values = [-0.0, 0.0, -0.3, 0.3, -1.0, 1.0, 2.5, -2.5, np.inf, -np.inf, np.nan, 3.0, -3.0]
    x, y = (np.array(v) for v in zip(*[(a, b) for a in values for b in values]))
    fn = (lambda a, b: tnp.clip(a, b, 1.0)) if name == "clip" else getattr(tnp, name)
    ref = (lambda a, b: np.clip(a, b, 1.0)) if name == "clip" else getattr(np, name)
    with np.errstate(all="ignore"):
        want = ref(x, y)
        for got in (fn(x, y), tj.jit(fn)(x, y)):
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("name", sorted(EDGES))
def test_numpy_edge_cases(name):
    program = EDGES[name]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = program(np)
        for got in (program(tnp), tj.jit(lambda: program(tnp))()):
            for g, w in zip(got, want, strict=True):
                assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
                np.testing.assert_array_equal(g, w)


REDUCTIONS = ["sum", "mean", "max", "min", "prod", "var", "std"]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
def test_reductions(rng, keepdims, dtype):
    def reduction(m, name, axis):
        return lambda x: getattr(m, name)(x, axis=axis, keepdims=keepdims)
    check_each([(f"{name} axis={axis}", reduction(tnp, name, axis), reduction(np, name, axis),
                 [rand(rng, (3, 4), dtype)]) for name in REDUCTIONS for axis in [None, 0, 1, -1, (0, 1)]])


@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
def test_arg_and_cumulative(rng, dtype):
    check_each([(f"{name} axis={axis}", lambda x, name=name, axis=axis: getattr(tnp, name)(x, axis=axis),
                 lambda x, name=name, axis=axis: getattr(np, name)(x, axis=axis), [rand(rng, (3, 4), dtype)])
                for name in ("argmax", "argmin", "cumsum") for axis in (None, 0, 1)])


def test_reductions_of_empty_and_bool(rng):
    check(lambda x: tnp.sum(x, axis=0), lambda x: np.sum(x, axis=0), np.zeros((0, 3), np.float32))
    check(tnp.sum, np.sum, rand(rng, (4,), np.bool_))
    check(lambda x: tnp.mean(x, axis=1), lambda x: np.mean(x, axis=1), rand(rng, (2, 3), np.int64))
    check(lambda x: tnp.var(x, ddof=1), lambda x: np.var(x, ddof=1), rand(rng, (5,), np.float64))
    with pytest.raises(ValueError, match="zero-size"):
        tnp.max(np.zeros((0,)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_linear_algebra(rng, dtype):
    a, b = rand(rng, (3, 4), dtype), rand(rng, (4, 5), dtype)
    v, w = rand(rng, (4,), dtype), rand(rng, (3,), dtype)
    tol = 1e-5 if dtype == np.float32 else None
    check(tnp.dot, np.dot, a, b, rtol=tol)
    check(tnp.dot, np.dot, a, v, rtol=tol)
    check(tnp.dot, np.dot, v, v, rtol=tol)
    check(tnp.matmul, np.matmul, a, b, rtol=tol)
    check(tnp.matmul, np.matmul, w, a, rtol=tol)
    check(lambda a, b: a @ b, np.matmul, rand(rng, (2, 3, 4), dtype), b, rtol=tol)
    check(lambda a, b: a @ b, np.matmul, a, rand(rng, (2, 4, 5), dtype), rtol=tol)
    check(lambda a, b: a @ b, np.matmul, rand(rng, (2, 1, 3, 4), dtype), rand(rng, (3, 4, 2), dtype), rtol=tol)
    check(tnp.outer, np.outer, v, w, rtol=tol)
    for spec, x, y in [("ij,jk->ik", a, b), ("ij,kj->ki", a, a), ("bij,bjk->bik", rand(rng, (2, 3, 4), dtype),
                                                                      rand(rng, (2, 4, 2), dtype)),
                       ("ij,j->i", a, v), ("i,j->ij", v, w), ("ij,ij->", a, a), ("ij,k->ik", a, w)]:
        check(lambda x, y, spec=spec: tnp.einsum(spec, x, y), lambda x, y, spec=spec: np.einsum(spec, x, y),
              x, y, rtol=tol)
    check(lambda x: tnp.einsum("ij->ji", x), lambda x: np.einsum("ij->ji", x), a)
    check(lambda x: x.dot(b), lambda x: x.dot(b), a, rtol=tol)


REARRANGEMENTS = {   # (tracejit.numpy or numpy) -> function of x
    "flip": lambda m: lambda x: m.flip(x), "flip_axis": lambda m: lambda x: m.flip(x, (0, -1)),
    "fliplr": lambda m: lambda x: m.fliplr(x), "flipud": lambda m: lambda x: m.flipud(x),
    "roll": lambda m: lambda x: m.roll(x, 2, 1), "roll_negative": lambda m: lambda x: m.roll(x, -7, 0),
    "roll_flat": lambda m: lambda x: m.roll(x, 5), "roll_axes": lambda m: lambda x: m.roll(x, (1, -1), (0, 2)),
    "diff": lambda m: lambda x: m.diff(x), "diff_2_axis_0": lambda m: lambda x: m.diff(x, 2, axis=0),
    "diff_past_length": lambda m: lambda x: m.diff(x, 5, axis=0),
    "tile": lambda m: lambda x: m.tile(x, 2), "tile_more_axes": lambda m: lambda x: m.tile(x, (2, 1, 1, 3)),
    "tile_zero": lambda m: lambda x: m.tile(x, (1, 0, 1)),
    "repeat": lambda m: lambda x: m.repeat(x, 2, axis=1), "repeat_flat": lambda m: lambda x: m.repeat(x, 3),
    "repeat_counts": lambda m: lambda x: m.repeat(x, [2, 0, 1], axis=0), "repeat_method": lambda m: lambda x: x.repeat(2, 0),
    "pad": lambda m: lambda x: m.pad(x, 1), "pad_pairs": lambda m: lambda x: m.pad(x, ((0, 1), (2, 0), (1, 1)), constant_values=-1.5),
}


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_rearrangements_as_numpy(rng, dtype):
    check_each([(name, make(tnp), make(np), [rand(rng, (3, 4, 5), dtype)]) for name, make in REARRANGEMENTS.items()])


@pytest.mark.parametrize("name", ["roll", "diff_2_axis_0", "tile_more_axes", "repeat", "repeat_counts", "pad_pairs"])
def test_rearrangements_have_gradients(rng, name):
    x = rand(rng, (3, 4, 5), np.float64)
    tj.test_util.check_grads(lambda x: tnp.sum(tnp.sin(REARRANGEMENTS[name](tnp)(x))), (x,), order=2)


PAD_MODES = [("constant", {}), ("constant", {"constant_values": ((1, 2), (3, 4))}), ("empty", {}), ("edge", {}),
             ("wrap", {}), ("reflect", {}), ("symmetric", {}), ("reflect", {"reflect_type": "odd"}),
             ("symmetric", {"reflect_type": "odd"}), ("linear_ramp", {"end_values": (5, -3)}), ("maximum", {}),
             ("minimum", {"stat_length": ((1, 2), (2, 1))}), ("mean", {}), ("median", {"stat_length": 2})]


@pytest.mark.parametrize("mode, kwargs", PAD_MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_pad_modes_as_jax_and_numpy(jax64, mode, kwargs, dtype):
    """Every mode of jnp.pad, eager and compiled, against JAX's (and NumPy's, which integer ramps follow: JAX floors
    a ramp value that rounding put just below an integer); widths wider than the axis take several mirror images."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 4)) * 10).astype(dtype)
    widths = (1, ((2, 0), (0, 3)), ((7, 5), (9, 2)))     # (each compiles one program for all widths)
    if mode == "linear_ramp" and dtype == np.int32:
        wants = [np.pad(x, width, mode, **kwargs) for width in widths]
    else:
        wants = jax64.jit(lambda x: [jax64.numpy.pad(x, width, mode, **kwargs) for width in widths])(x)
    compiled = tj.jit(lambda x: [tnp.pad(x, width, mode, **kwargs) for width in widths])(x)
    for width, want, jitted in zip(widths, wants, compiled, strict=True):
        want = np.asarray(want)
        for got in (tnp.pad(x, width, mode, **kwargs), jitted):
            assert got.shape == want.shape and got.dtype == want.dtype
            if mode != "empty":
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)
    if mode == "constant" and kwargs:       # traced values
        got = tj.jit(lambda x, c: tnp.pad(x, width, constant_values=c))(x, kwargs["constant_values"])
        np.testing.assert_array_equal(got, jax64.numpy.pad(x, width, **kwargs))
    if dtype == np.float64 and mode not in ("empty", "constant", "maximum", "minimum", "median"):
        f = lambda x, M: (M.pad(x, ((4, 2), (1, 5)), mode, **kwargs) ** 2).sum()
        np.testing.assert_allclose(tj.grad(lambda x: f(x, tnp))(x), jax64.grad(lambda x: f(x, jax64.numpy))(x),
                                   rtol=1e-10)


def test_rearrangement_errors():
    x = np.ones((2, 3))
    with pytest.raises(TypeError, match="repeats must be concrete"):
        tj.jit(lambda x, r: tnp.repeat(x, r))(x, np.array([1, 2]))
    with pytest.raises(ValueError, match="non-negative"):
        tnp.tile(x, -1)
    with pytest.raises(ValueError, match="mode 'mirror' is not one of"):
        tnp.pad(x, 1, mode="mirror")
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        tnp.pad(x, 1, mode="edge", constant_values=1)
    with pytest.raises(ValueError, match="can't extend empty axis 1"):
        tnp.pad(np.ones((2, 0)), 1, mode="wrap")
    with pytest.raises(ValueError, match="stat_length of 0"):
        tnp.pad(x, 1, mode="mean", stat_length=0)
    with pytest.raises(ValueError, match="reflect_type must be"):
        tnp.pad(x, 1, mode="reflect", reflect_type="other")
    with pytest.raises(ValueError, match="diff: order n must be non-negative"):
        tnp.diff(x, -1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_sort_and_argsort_as_numpy(rng, dtype):
    x = rand(rng, (4, 6), dtype)
    if dtype == np.float64:
        x[0, :3] = [np.nan, -0.0, 0.0]        # NaNs go last; ties (and -0.0 == 0.0) in order of position
        x[1] = x[2]
    for axis in (-1, 0, None):
        check(lambda x, axis=axis: tnp.sort(x, axis=axis), lambda x, axis=axis: np.sort(x, axis=axis), x)
        for kind in (None, "stable"):         # stable by default, as jax.numpy's
            check(lambda x, axis=axis, kind=kind: tnp.argsort(x, axis=axis, kind=kind),
                  lambda x, axis=axis: np.argsort(x, axis=axis, kind="stable"), x)
    check(lambda x: x.sort(0), lambda x: np.sort(x, 0), x, eager=False)
    order = np.argsort(x, axis=1)
    check(lambda x: tnp.take_along_axis(x, order, 1), lambda x: np.take_along_axis(x, order, 1), x)
    check(lambda x: tnp.take_along_axis(x, order[:, :1] - 6, 1), lambda x: np.take_along_axis(x, order[:, :1] - 6, 1), x)
    check(lambda x: tnp.take_along_axis(x, np.array([[3], [0]]), 0), lambda x: np.take_along_axis(x, np.array([[3], [0]]), 0), x)


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int8, np.int16, np.uint32, np.int32, np.float16, np.float32,
                                   "bfloat16", np.int64, np.uint64, np.float64])
def test_argsort_packs_positions_into_ordered_keys(rng, dtype):
    """An argsort of real values sorts (key << 32 | position), twice for 64-bit values (by the keys' low words, then
    their high ones): NumPy's stable order, ties by position, -0.0 equal to 0.0, NaNs of either sign equal and last,
    large 64-bit values whose low words tie or order against the high ones, along each axis, eagerly and compiled,
    stable=False alike (a stable order is an unstable one too) but for 64-bit values (NumPy's unstable argsort, an
    order that sorts); arrays under SMALL_SORT elements take NumPy's stable argsort instead."""
    import ml_dtypes

    from tracejit.primitives.sorting import SMALL_SORT
    dtype = np.dtype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    raw = rng.integers(-4, 4, (7, 9, 17)).astype(np.float32)
    assert raw.size >= SMALL_SORT
    if dtype.kind == "f" or dtype.name == "bfloat16":
        raw.flat[::7], raw.flat[1::7], raw.flat[2::11], raw.flat[3::13], raw.flat[4::17] = (
            np.nan, -0.0, np.inf, -np.inf, -np.nan)
    x = raw.astype(dtype)
    if dtype.itemsize == 8 and dtype.kind in "iu":      # high words that differ where low words order the other way
        big = (rng.integers(0, 4, x.size)[::3] << 40) - (rng.integers(0, 4, x.size)[::3] << 3)
        x.flat[::3] = big.astype(dtype) + dtype.type(1 << 63 if dtype.kind == "u" else 0)
    as_numpy = x.astype(np.float32) if dtype.name == "bfloat16" else x
    for axis in (0, 1, 2):
        want = np.argsort(as_numpy, axis=axis, kind="stable")
        np.testing.assert_array_equal(tnp.argsort(x, axis=axis, stable=True), want)
        np.testing.assert_array_equal(tj.jit(lambda x, axis=axis: tnp.argsort(x, axis=axis, stable=True))(x), want)
        unstable = tj.jit(lambda x, axis=axis: tnp.argsort(x, axis=axis, stable=False))(x)
        if dtype.itemsize == 8:
            np.testing.assert_array_equal(np.take_along_axis(x, unstable, axis), np.sort(x, axis=axis))
        else:
            np.testing.assert_array_equal(unstable, want)
    packed = str(tj.make_ir(lambda x: tnp.argsort(x, axis=1), optimize=True)(x))
    assert "u64" in packed and "argsort" not in packed, packed
    small = x[:2, :3]
    assert "argsort" in str(tj.make_ir(lambda x: tnp.argsort(x, axis=1), optimize=True)(small))
    np.testing.assert_array_equal(tj.jit(lambda x: tnp.argsort(x, axis=1, stable=False))(small),
                                  np.argsort(as_numpy[:2, :3], axis=1, kind="stable"))
    flat = tj.jit(lambda x: tnp.argsort(x, kind="stable"))(x.reshape(-1))
    np.testing.assert_array_equal(flat, np.argsort(as_numpy.reshape(-1), kind="stable"))


@pytest.mark.parametrize("shape", [(8,), (3, 700)])
def test_bfloat16_sorts_as_float32(rng, shape):
    """NumPy's own sort of ml_dtypes' bfloat16 leaves NaNs in place; sort and argsort order bfloat16 as float32 does
    (NaNs last, -0.0 equal to 0.0), eagerly and compiled, small and large."""
    import ml_dtypes
    x = rng.standard_normal(shape).astype(np.float32)
    x.flat[::5], x.flat[1::7], x.flat[2::9] = np.nan, -0.0, -np.inf
    b = x.astype(ml_dtypes.bfloat16)
    for f in (tnp.sort, tj.jit(tnp.sort)):
        np.testing.assert_array_equal(np.asarray(f(b)).astype(np.float32), np.sort(b.astype(np.float32)))
    for f in (tnp.argsort, tj.jit(tnp.argsort)):
        np.testing.assert_array_equal(f(b), np.argsort(b.astype(np.float32), axis=-1, kind="stable"))


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.bool_])
def test_compiled_sorts_write_into_their_output_over_the_threads(rng, dtype):
    """The compiled code's sorts (their `into` rule) sort in the output's memory, the rows of a large array in
    chunks over the threads: NumPy's values and its stable order (an argsort's, stable or not) along every axis of
    2-d and 3-d arrays, as an output and as an intermediate; a NaN included."""
    from tracejit.primitives.sorting import PARALLEL_SORT
    x = rand(rng, (PARALLEL_SORT // 40 + 3, 41), dtype)
    if dtype == np.float32:
        x[3, :4] = [np.nan, -0.0, 0.0, 0.0]
    cube = x[:900].reshape(20, 45, 41)
    for a in (x, cube):
        for axis in range(a.ndim):
            for stable in (False, True):
                want = np.argsort(a, axis=axis, kind="stable")
                np.testing.assert_array_equal(
                    tj.jit(lambda a, axis=axis, stable=stable: tnp.argsort(a, axis=axis, stable=stable))(a), want)
            np.testing.assert_array_equal(tj.jit(lambda a, axis=axis: tnp.sort(a, axis=axis))(a), np.sort(a, axis=axis))
            np.testing.assert_array_equal(tj.jit(lambda a, axis=axis: tnp.sort(a, axis=axis)[:2] == 0)(a),
                                          np.sort(a, axis=axis)[:2] == 0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 100])
def test_searchsorted_as_numpy(rng, dtype, n):
    """NaN sorts last and ties go left or right, as NumPy; the compiled binary search never reads past a."""
    if np.dtype(dtype).kind == "f":
        a = np.sort(np.concatenate([np.round(rng.standard_normal(n), 1), [np.nan, np.inf]][:n + 2])[:n]).astype(dtype)
        v = np.concatenate([rng.standard_normal(40) * 2, [np.nan, np.inf, -np.inf, -0.0], a]).astype(dtype)
    else:
        a, v = np.sort(rng.integers(-5, 5, n)).astype(dtype), rng.integers(-7, 7, (4, 10)).astype(dtype)
    for side in ("left", "right"):
        check(lambda a, v, side=side: tnp.searchsorted(a, v, side), lambda a, v, side=side: np.searchsorted(a, v, side),
              a, v)
    order = rng.permutation(n)
    sorter = np.argsort(order)                          # a[order][sorter] is a again: sorted
    check(lambda a, v: tnp.searchsorted(a, v, sorter=sorter), lambda a, v: np.searchsorted(a, v, sorter=sorter),
          a[order], v)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
def test_searchsorted_of_many_values_vectorized_and_split(rng, dtype):
    """The compiled search runs the same halvings for every value, so that its loop over the values vectorizes and
    splits over the threads: many values (1-d and 2-d) in arrays of 1 to 1000 elements with ties, NaNs and
    infinities, both sides, as NumPy."""
    for n in (1, 2, 5, 64, 1000):
        raw = rng.integers(-50, 50, n) if dtype == np.int16 else np.round(rng.standard_normal(n) * 3, 1)
        a = np.sort(raw).astype(dtype)
        if dtype != np.int16 and n > 3:
            a[-2:] = [np.inf, np.nan]
        extra = [] if dtype == np.int16 else [np.nan, np.inf, -np.inf, -0.0]
        v = np.concatenate([rng.uniform(-60, 60, 20_000).round(1), a, extra]).astype(dtype)
        for side in ("left", "right"):
            want = np.searchsorted(a, v, side)
            np.testing.assert_array_equal(tj.jit(lambda a, v, side=side: tnp.searchsorted(a, v, side))(a, v), want)
            grid = v[:20_000].reshape(200, 100)
            np.testing.assert_array_equal(tj.jit(lambda a, v, side=side: tnp.searchsorted(a, v, side))(a, grid),
                                          np.searchsorted(a, grid, side))


def test_interp_as_numpy(rng):
    xp, fp = np.sort(rng.standard_normal(12)), rng.standard_normal(12)
    x = np.concatenate([rng.standard_normal(50) * 2, xp, [np.nan, np.inf, -np.inf]])
    check(lambda x: tnp.interp(x, xp, fp), lambda x: np.interp(x, xp, fp), x)
    check(lambda x: tnp.interp(x, xp, fp, left=-9.0, right=9.0), lambda x: np.interp(x, xp, fp, -9.0, 9.0), x)
    check(lambda x: tnp.interp(x, xp[:1], fp[:1]), lambda x: np.interp(x, xp[:1], fp[:1]), x)
    check(lambda x: tnp.interp(x, xp.astype(np.float32), fp), lambda x: np.interp(x, xp.astype(np.float32), fp),
          x.astype(np.float32))                         # float64 whatever the inputs, as NumPy
    tj.test_util.check_grads(lambda x, fp: tnp.interp(x, xp, fp), (np.array([-0.3, 0.1, 0.7]), fp), order=1)
    np.testing.assert_array_equal(tj.vmap(lambda f: tnp.interp(x, xp, f))(np.stack([fp, -fp])),
                                  np.stack([np.interp(x, xp, fp), np.interp(x, xp, -fp)]))


def test_sort_derivatives_and_batching(rng):
    x = rng.permutation(24).reshape(4, 6) * 0.37      # distinct values: sort is differentiable there
    weights = np.arange(1.0, 7.0)
    tj.test_util.check_grads(lambda x: tnp.sum(tnp.sin(tnp.sort(x, axis=1)) * weights), (x,), order=2)
    tj.test_util.check_grads(lambda x: tnp.take_along_axis(x, tnp.argsort(-x, axis=0), 0), (x,), order=1)
    np.testing.assert_array_equal(tj.vmap(tnp.sort)(x), np.sort(x, axis=1))
    np.testing.assert_array_equal(tj.vmap(tnp.argsort, in_axes=1)(x), np.argsort(x, axis=0).T)
    assert np.isnan(tnp.take_along_axis(x, np.array([[6]]), 1)).all()     # filled, as JAX's (test_take_modes.py)


SPECIAL = np.array([[0.5, np.nan, -np.inf, 2.0], [np.inf, -0.0, 1.0, np.nan], [-3.0, 0.0, 1e-9, 2.0]])
COMPOSITES = {   # name -> (m -> function, arguments); m is numpy or tracejit.numpy
    "isinf": (lambda m: m.isinf, [SPECIAL]), "isposinf": (lambda m: m.isposinf, [SPECIAL]),
    "isneginf": (lambda m: m.isneginf, [SPECIAL]),
    "isclose": (lambda m: lambda a, b: m.isclose(a, b), [SPECIAL, SPECIAL + 1e-9]),
    "isclose_nan": (lambda m: lambda a: m.isclose(a, a[::-1], rtol=0.1, equal_nan=True), [SPECIAL]),
    "allclose": (lambda m: lambda a, b: m.allclose(a, b), [SPECIAL[2], SPECIAL[2] * (1 + 1e-7)]),
    "fmax": (lambda m: lambda a: m.fmax(a, a[::-1]), [SPECIAL]), "fmin": (lambda m: lambda a: m.fmin(a, 1.0), [SPECIAL]),
    "nan_to_num": (lambda m: m.nan_to_num, [SPECIAL]),
    "nan_to_num_values": (lambda m: lambda a: m.nan_to_num(a, nan=-1.0, posinf=9.0), [SPECIAL.astype(np.float32)]),
    "trunc": (lambda m: m.trunc, [SPECIAL * 1.7]), "fix": (lambda m: m.fix, [np.array([-2, 3])]),
    "rint": (lambda m: m.rint, [np.array([0.5, 1.5, -2.5, 2.6, -0.4])]),
    "reciprocal": (lambda m: m.reciprocal, [SPECIAL]),
    "reciprocal_int": (lambda m: m.reciprocal, [np.array([1, -1, 2, -7], np.int32)]),
    "logical_xor": (lambda m: lambda a: m.logical_xor(a, a[::-1]), [SPECIAL]),
    "deg2rad": (lambda m: m.deg2rad, [np.array([30.0, -45.0, 720.0], np.float32)]),
    "degrees": (lambda m: m.degrees, [np.array([1.0, -np.pi])]),
    "heaviside": (lambda m: lambda a: m.heaviside(a, 0.5), [SPECIAL]),
    "atleast": (lambda m: lambda a, b: [m.atleast_1d(a), m.atleast_2d(b), m.atleast_3d(b), m.atleast_3d(a)],
                [np.float64(2.0), np.arange(3.0)]),
    "hstack": (lambda m: lambda a, b: m.hstack([a, b]), [np.arange(3.0), np.arange(2.0)]),
    "hstack_2d": (lambda m: lambda a: m.hstack([a, a]), [SPECIAL]),
    "vstack": (lambda m: lambda a, b: m.vstack([a, b, a]), [np.arange(4.0), SPECIAL]),
    "vstack_scalar": (lambda m: lambda a: [m.vstack([a, -1.5]), m.hstack([a[0], 2])], [np.ones((2, 1), np.float32)]),
    "dstack": (lambda m: lambda a: m.dstack([a, a]), [SPECIAL]),
    "column_stack": (lambda m: lambda a, b: m.column_stack([a, b]), [np.arange(3.0), SPECIAL[:, :2]]),
    "split": (lambda m: lambda a: m.split(a, 2, axis=1), [SPECIAL]),
    "split_indices": (lambda m: lambda a: m.split(a, [1, 3, 10]), [np.arange(5.0)]),
    "array_split": (lambda m: lambda a: m.array_split(a, 3), [np.arange(7.0)]),
    "meshgrid": (lambda m: lambda a, b, c: m.meshgrid(a, b, c), [np.arange(2.0), np.arange(3), np.arange(4.0)]),
    "meshgrid_ij_sparse": (lambda m: lambda a, b: m.meshgrid(a, b, indexing="ij", sparse=True),
                           [np.arange(2.0), np.arange(3.0)]),
    "identity": (lambda m: lambda: m.identity(3, dtype=np.int32), []),
    "count_nonzero": (lambda m: lambda a: [m.count_nonzero(a), m.count_nonzero(a, axis=0)], [SPECIAL]),
    "nansum": (lambda m: lambda a: [m.nansum(a), m.nansum(a, axis=1), m.nansum(a.astype(np.float32), keepdims=True)],
               [np.nan_to_num(SPECIAL, posinf=np.nan, neginf=np.nan)]),
    "nanmean": (lambda m: lambda a: [m.nanmean(a), m.nanmean(a, axis=0)], [np.where(np.isinf(SPECIAL), np.nan, SPECIAL)]),
    "nanmax": (lambda m: lambda a: [m.nanmax(a), m.nanmax(a, axis=1), m.nanmin(a, axis=0, keepdims=True)],
               [np.where(np.arange(4) == 1, np.nan, SPECIAL)]),
    "ptp": (lambda m: lambda a: [m.ptp(a), m.ptp(a, axis=1)], [np.arange(12.0).reshape(3, 4) ** 2]),
    "average": (lambda m: lambda a, w: [m.average(a), m.average(a, axis=1, weights=w), m.average(a, 0, weights=a)],
                [np.arange(12.0).reshape(3, 4) + 1, np.array([1.0, 2.0, 0.5, 3.0])]),
    "average_int": (lambda m: lambda a: m.average(a, axis=0, weights=a + 1), [np.arange(6).reshape(3, 2)]),
    "median": (lambda m: lambda a: [m.median(a), m.median(a, axis=1), m.median(a[:, :3], axis=1, keepdims=True),
                                    m.median(a.astype(np.float32), axis=0)], [SPECIAL]),
    "median_finite": (lambda m: lambda a: [m.median(a), m.median(a, axis=0)], [np.arange(12).reshape(4, 3) % 5]),
    "tensordot": (lambda m: lambda a, b: [m.tensordot(a, b, 1), m.tensordot(a, a, ((0, 1), (0, 1)))],
                  [np.arange(12.0).reshape(3, 4), np.arange(8.0).reshape(4, 2)]),
    "inner": (lambda m: lambda a, b: [m.inner(a, b), m.inner(b[0], b[1])], [np.arange(6.0).reshape(3, 2),
                                                                           np.arange(4.0).reshape(2, 2)]),
    "vdot": (lambda m: m.vdot, [np.arange(6.0).reshape(3, 2), np.arange(6.0)]),
    "kron": (lambda m: lambda a, b: [m.kron(a, b), m.kron(b, a[0])], [np.arange(4.0).reshape(2, 2), np.arange(6.0).reshape(3, 2)]),
    "cross": (lambda m: lambda a, b: m.cross(a, b), [np.arange(6.0).reshape(2, 3), np.array([1.0, -2.0, 0.5])]),
    "diagonal": (lambda m: lambda a: [m.diagonal(a), m.diagonal(a, 1), m.diagonal(a, -2), m.diagonal(a, 7)],
                 [np.arange(12.0).reshape(3, 4)]),
    "diagonal_axes": (lambda m: lambda a: m.diagonal(a, 1, axis1=2, axis2=0), [np.arange(24.0).reshape(2, 3, 4)]),
    "trace": (lambda m: lambda a: [m.trace(a), m.trace(a, -1), m.trace(a, dtype=np.float32)], [np.arange(12.0).reshape(3, 4)]),
    "diag": (lambda m: lambda v, a: [m.diag(v), m.diag(v, 2), m.diag(v, -1), m.diag(a, 1)],
             [np.arange(1.0, 4.0), np.arange(9).reshape(3, 3)]),
}


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_composite_functions_as_numpy(name):
    make, args = COMPOSITES[name]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = make(np)(*args)
        for got in (make(tnp)(*args), tj.jit(make(tnp))(*args)):
            for g, w in zip(*(o if isinstance(o, (list, tuple)) else [o] for o in (got, want)), strict=True):
                g, w = np.asarray(g), np.asarray(w)
                assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
                np.testing.assert_allclose(g, w, rtol=1e-6 if w.dtype == np.float32 else 1e-13)
                if w.dtype.kind == "f":
                    np.testing.assert_array_equal(np.signbit(g) & ~np.isnan(g), np.signbit(w) & ~np.isnan(w))


def test_composite_functions_have_gradients():
    x = np.arange(1.0, 13.0).reshape(3, 4) ** 0.5
    for f in (lambda x: tnp.trace(tnp.sin(x)), lambda x: tnp.median(x, axis=1), lambda x: tnp.nanmean(x * x),
              lambda x: tnp.kron(x, x[:2, :2]), lambda x: tnp.cross(x[:, :3], x[:, 1:]), lambda x: tnp.diag(x[0]),
              lambda x: tnp.average(x, 1, weights=x[0]), lambda x: tnp.vstack(tnp.split(x, 2, axis=1))):
        tj.test_util.check_grads(lambda x, f=f: tnp.sum(tnp.tanh(f(x))), (x,), order=2)


def test_shape_functions(rng):
    x = rand(rng, (2, 3, 4), np.float32)
    check(lambda x: tnp.reshape(x, (6, -1)), lambda x: np.reshape(x, (6, -1)), x)
    check(lambda x: x.reshape(4, 6), lambda x: x.reshape(4, 6), x)
    check(tnp.transpose, np.transpose, x)
    check(lambda x: x.T, lambda x: x.T, x)
    check(lambda x: tnp.transpose(x, (1, 0, 2)), lambda x: np.transpose(x, (1, 0, 2)), x)
    check(lambda x: tnp.swapaxes(x, 0, 2), lambda x: np.swapaxes(x, 0, 2), x)
    check(lambda x: tnp.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1), x)
    check(lambda x: tnp.moveaxis(x, [0, 1], [2, 0]), lambda x: np.moveaxis(x, [0, 1], [2, 0]), x)
    check(lambda x: tnp.expand_dims(x, (0, 2)), lambda x: np.expand_dims(x, (0, 2)), x)
    check(lambda x: tnp.squeeze(x[:, :1]), lambda x: np.squeeze(x[:, :1]), x)
    check(tnp.ravel, np.ravel, x)
    check(lambda x: tnp.concatenate([x, x * 2], axis=1), lambda x: np.concatenate([x, x * 2], axis=1), x)
    check(lambda x: tnp.concatenate([x, x], axis=None), lambda x: np.concatenate([x, x], axis=None), x)
    check(lambda x: tnp.stack([x, x + 1], axis=-1), lambda x: np.stack([x, x + 1], axis=-1), x)
    check(lambda x: tnp.broadcast_to(x[0, 0], (5, 4)), lambda x: np.broadcast_to(x[0, 0], (5, 4)), x)
    check(lambda x: tnp.take(x, np.array([2, 0])), lambda x: np.take(x, np.array([2, 0])), x)
    check(lambda x: tnp.take(x, np.array([[2, 0]]), axis=2), lambda x: np.take(x, np.array([[2, 0]]), axis=2), x)
    m = rand(rng, (4, 5), np.float64)
    for k in (-1, 0, 2):
        check(lambda m, k=k: tnp.tril(m, k), lambda m, k=k: np.tril(m, k), m)
        check(lambda m, k=k: tnp.triu(m, k), lambda m, k=k: np.triu(m, k), m)


def test_where_clip_and_logical(rng):
    x, y = rand(rng, (3, 4), np.float64), rand(rng, (4,), np.float32)
    check(lambda x, y: tnp.where(x > 0, x, y), lambda x, y: np.where(x > 0, x, y), x, y)
    check(lambda x: tnp.where(x > 0, x, 0.0), lambda x: np.where(x > 0, x, 0.0), x)
    check(lambda x: tnp.clip(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), x)
    check(lambda x: (x > 0) & (x < 1), lambda x: (x > 0) & (x < 1), x)
    check(lambda x: ~(x > 0) | (x > 1), lambda x: ~(x > 0) | (x > 1), x)
    check(lambda x: tnp.logical_not(x), np.logical_not, x)


def test_creation_functions():
    for fn, ref in [(lambda: tnp.zeros((2, 3)), lambda: np.zeros((2, 3))),
                    (lambda: tnp.ones(4, np.int32), lambda: np.ones(4, np.int32)),
                    (lambda: tnp.full((2,), 7.5), lambda: np.full((2,), 7.5)),
                    (lambda: tnp.arange(5), lambda: np.arange(5)),
                    (lambda: tnp.arange(1.0, 2.0, 0.25), lambda: np.arange(1.0, 2.0, 0.25)),
                    (lambda: tnp.arange(10, 0, -3), lambda: np.arange(10, 0, -3)),
                    (lambda: tnp.linspace(0, 1, 7), lambda: np.linspace(0, 1, 7)),
                    (lambda: tnp.linspace(0, 1, 4, endpoint=False), lambda: np.linspace(0, 1, 4, endpoint=False)),
                    (lambda: tnp.eye(3), lambda: np.eye(3)), (lambda: tnp.eye(3, 4, k=1), lambda: np.eye(3, 4, k=1)),
                    (lambda: tnp.array([[1, 2], [3, 4]]), lambda: np.array([[1, 2], [3, 4]]))]:
        check(fn, ref)
    x = np.arange(6.0).reshape(2, 3).astype(np.float32)
    for fn, ref in [(tnp.zeros_like, np.zeros_like), (tnp.ones_like, np.ones_like),
                    (lambda x: tnp.full_like(x, 3), lambda x: np.full_like(x, 3)),
                    (lambda x: tnp.array([x[0], x[1] * 2]), lambda x: np.array([x[0], x[1] * 2])),
                    (lambda x: tnp.asarray(x, tnp.float64), lambda x: np.asarray(x, np.float64)),
                    (lambda x: x.astype(tnp.int32), lambda x: x.astype(np.int32))]:
        check(fn, ref, x)
    assert isinstance(tnp.zeros(3), np.ndarray)


@pytest.mark.parametrize("start, stop, num, endpoint", [(0, 1, 7, True), (-3.3, 17.1, 1000, True), (5, -1, 9, False),
                                                        (2, 2, 4, True), (0, 1, 1, True), (0, 1, 0, True),
                                                        (np.float32(0.1), 3, 11, True)])
@pytest.mark.parametrize("dtype", [None, np.float32, np.int32])
def test_linspace_is_numpys_to_the_bit(start, stop, num, endpoint, dtype):
    """start + i * step in the bounds' dtype, the endpoint exact, floored for integers; traced, so that a
    traced index can pick an element (a NumPy array cannot be indexed by a tracer)."""
    want = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    for got in (tnp.linspace(start, stop, num, endpoint=endpoint, dtype=dtype),
                tj.jit(lambda: tnp.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))()):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    if num > 2:
        assert tj.jit(lambda i: tnp.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)[i])(2) == want[2]


INDICES = [1, -1, slice(None, None, -1), slice(1, None, 2), slice(-1, 0, -2), (Ellipsis, 1), (None, 0),
           (slice(None), None, 2), np.array([0, 2, -1]), (np.array([[0], [1]]), np.array([1, 2])),
           (slice(None), np.array([3, 0])), (0, slice(None), np.array([1, 1])),
           (np.array([0, 1]), slice(None), np.array([2, 3])), np.array([True, False, True]),
           (slice(None), np.array([True, False, True, False]))]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_indexing(rng, index):
    x = rand(rng, (3, 4, 5), np.float32)
    check(lambda x: x[index], lambda x: x[index], x)


def test_indexing_with_traced_integers(rng):
    x = rand(rng, (4, 5), np.float64)
    for i in (0, 3, -1, -4):
        check(lambda x, i: x[i], lambda x, i: x[i], x, np.int32(i))
        check(lambda x, i: x[1:, i], lambda x, i: x[1:, i], x, np.int64(i))
    idx = np.array([3, -1, 0])
    check(lambda x, i: x[i], lambda x, i: x[i], x, idx)
    check(lambda x, i: x[:, i], lambda x, i: x[:, i], x, idx)


def test_out_of_range_traced_indices_are_clamped():
    x = np.arange(5.0)
    assert tj.jit(lambda x, i: x[i])(x, np.int32(9)) == 4.0
    np.testing.assert_array_equal(tj.jit(lambda x, i: x[i])(x, np.array([7, -9])), [4.0, 0.0])


def test_at_updates(rng):
    x = rand(rng, (4, 3), np.float64)

    def ref_set(x, idx, v):
        y = x.copy()
        y[idx] = v
        return y

    def ref_add(x, idx, v):
        y = x.copy()
        np.add.at(y, idx, v)
        return y

    def ref_mul(x, idx, v):
        y = x.copy()
        np.multiply.at(y, idx, v)
        return y

    for idx in [1, (slice(None), 0), np.array([0, 0, 2]), (np.array([1, 3]), np.array([2, 0])), (Ellipsis, -1)]:
        check(lambda x, idx=idx: x.at[idx].set(7.0), lambda x, idx=idx: ref_set(x, idx, 7.0), x, eager=False)
        check(lambda x, idx=idx: x.at[idx].add(2.0), lambda x, idx=idx: ref_add(x, idx, 2.0), x, eager=False)
        check(lambda x, idx=idx: x.at[idx].multiply(3.0), lambda x, idx=idx: ref_mul(x, idx, 3.0), x, eager=False)
    check(lambda x, v: x.at[1].set(v), lambda x, v: ref_set(x, 1, v), x, rand(rng, (3,), np.float64), eager=False)
    check(lambda x, i: x.at[i].add(1.0), lambda x, i: ref_add(x, i, 1.0), x, np.array([0, 2, 2]), eager=False)
    np.testing.assert_array_equal(tj.jit(lambda x, i: x.at[i].add(1.0))(np.zeros(3), np.array([5, 1])), [0, 1, 0])
    assert np.array_equal(tj.jit(lambda x: x.at[1].get())(x), x[1])


def test_at_set_keeps_the_last_of_repeated_indices_and_its_derivatives_are_jaxs(rng):
    """x.at[idx].set is one scatter over x's own axes (no copy of x as a flat array): repeated indices keep the
    last value (NumPy's x[idx] = v), traced or concrete, 1-d to 3-d, out-of-range ones are dropped, negative ones
    count from the end; the derivatives give each update the cotangent of its position where it won, as JAX's."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    x1, x3 = rand(rng, (6,), np.float64), rand(rng, (3, 4, 5), np.float64)
    i, j = np.array([1, 4, 1, 9, -1, 4]), np.array([2, 0, 2, 1, 3, 0])
    v = rand(rng, (6,), np.float64)
    cases = [(x1, lambda x, i, j, v: x.at[i].set(v)), (x3, lambda x, i, j, v: x.at[i % 3, j, 1].set(v)),
             (x3, lambda x, i, j, v: x.at[:, j].set(v[:, None])), (x3, lambda x, i, j, v: x.at[0, i].add(v[:, None]))]
    for x0, f in cases:
        want = np.asarray(f(jnp.asarray(x0), i, j, v))
        np.testing.assert_array_equal(tj.jit(f)(x0, i, j, v), want)
        np.testing.assert_array_equal(tj.jit(lambda x, v, f=f: f(x, i, j, v))(x0, v), want)     # concrete indices
        w = rand(rng, x0.shape, np.float64)

        def loss(M, f=f, w=w):
            return lambda x, v: (f(M.asarray(x), i, j, v) * w).sum()
        for arg in (0, 1):
            np.testing.assert_allclose(tj.jit(tj.grad(loss(tnp), arg))(x0, v), jax.grad(loss(jnp), arg)(x0, v))
    assert "reshape" not in str(tj.make_ir(lambda x, i: x.at[i, 0].set(0.0), optimize=True)(x3[0], i % 4))


def test_methods(rng):
    x = rand(rng, (3, 4), np.float32)
    for name in ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "ravel", "cumsum", "var", "std"]:
        check(lambda x, name=name: getattr(x, name)(), lambda x, name=name: getattr(x, name)(), x)
    check(lambda x: x.sum(axis=0), lambda x: x.sum(axis=0), x)
    check(lambda x: x.max(1), lambda x: x.max(1), x)


def test_tracer_attributes():
    def f(x):
        assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == np.float32
        assert len(x) == 2 and x.T.shape == (3, 2)
        return sum(row for row in x)
    check(f, lambda x: x[0] + x[1], np.ones((2, 3), np.float32))


def test_nn(rng):
    x = rand(rng, (3, 5), np.float64)

    def ref_logsumexp(x, axis=None, keepdims=False):
        m = np.max(x, axis=axis, keepdims=True)
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
        return out if keepdims else (np.squeeze(out, axis) if axis is not None else out.reshape(()))

    check(tj.nn.relu, lambda x: np.maximum(x, 0), x)
    check(tj.nn.sigmoid, lambda x: 1 / (1 + np.exp(-x)), x)
    check(lambda x: tj.nn.softmax(x), lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True), x)
    check(lambda x: tj.nn.log_softmax(x, axis=0), lambda x: x - ref_logsumexp(x, 0, True), x)
    check(tj.nn.logsumexp, ref_logsumexp, x)
    check(lambda x: tj.nn.logsumexp(x, axis=1), lambda x: ref_logsumexp(x, 1), x)
    big = np.array([1000.0, 1000.0, -np.inf])
    np.testing.assert_allclose(tj.nn.logsumexp(big), 1000 + np.log(2))


def test_take_and_at_get_fill_out_of_range_elements_as_jax(jax64):
    """mode='fill': indices outside [-n, n) give fill_value, by default NaN or the integer dtype's extreme; eager
    (concrete indices) and compiled, in take along an axis and flat, and in x.at[idx].get."""
    jnp = jax64.numpy
    a, i = np.arange(6.0).reshape(2, 3), np.array([0, 5, -1, -4])
    for dtype in (np.float64, np.int32, np.uint8, np.bool_):
        x = a.astype(dtype)
        for kwargs in ({"axis": 1}, {"axis": 1, "fill_value": 1}, {}):
            want = np.asarray(jnp.take(x, i, mode="fill", **kwargs))
            compiled = tj.jit(lambda v, j, kw=kwargs: tnp.take(v, j, mode="fill", **kw))(x, i)
            for got in (tnp.take(x, i, mode="fill", **kwargs), compiled):
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
        want = np.asarray(jax64.jit(lambda v, j: v.at[:, j].get(mode="fill"))(x, i))
        np.testing.assert_array_equal(tj.jit(lambda v, j: v.at[:, j].get(mode="fill"))(x, i), want)
    np.testing.assert_array_equal(tj.jit(lambda v, j: v.at[j].get(mode="fill", fill_value=-2.0))(a[0], i),
                                  [0.0, -2.0, 2.0, -2.0])
    with pytest.raises(ValueError, match="mode must be"):
        tj.jit(lambda v: v.at[0].get(mode="wrap"))(a)
