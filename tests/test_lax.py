"""Every primitive through tracejit.lax against NumPy: eager, jit and eval_ir, including 0-d and size-0."""
import numpy as np
import pytest
from test_numpy_api import check, rand

import tracejit as tj
import tracejit.numpy as tnp
import tracejit.primitives as P
from tracejit import lax

FLOATS = [np.float32, np.float64]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_float_elementwise_primitives(rng, dtype, shape):
    x = rand(rng, shape, dtype, -2, 2)
    pos = rand(rng, shape, dtype, 0.2, 3)
    for fn, ref, arg in [
        (lax.neg, np.negative, x), (lax.exp, np.exp, x), (lax.log, np.log, pos), (lax.log1p, np.log1p, pos),
        (lax.expm1, np.expm1, x), (lax.sin, np.sin, x), (lax.cos, np.cos, x), (lax.tan, np.tan, x),
        (lax.tanh, np.tanh, x), (lax.logistic, lambda v: 1 / (1 + np.exp(-v)), x), (lax.sqrt, np.sqrt, pos),
        (lax.rsqrt, lambda v: 1 / np.sqrt(v), pos), (lax.abs, np.abs, x), (lax.sign, np.sign, x),
        (lax.floor, np.floor, x), (lax.ceil, np.ceil, x), (lax.is_finite, np.isfinite, x),
        (lambda v: lax.round(v, 1), np.round, x * 3), (lambda v: lax.integer_pow(v, 3), lambda v: v ** 3, x),
        (lambda v: lax.integer_pow(v, -2), lambda v: v ** -2.0, pos), (tj.lax.stop_gradient, np.array, x),
    ]:
        check(fn, lambda v, ref=ref: ref(v).astype(np.asarray(ref(v)).dtype), arg)


def test_round_away_from_zero_and_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994])
    check(lambda v: lax.round(v, 0), lambda v: np.array([1.0, 2.0, 3.0, -1.0, -3.0, 0.0]), x)
    check(lambda v: lax.round(v, 1), np.round, x)


@pytest.mark.parametrize("dtype", FLOATS + [np.int32, np.int64])
def test_binary_primitives(rng, dtype):
    x, y = rand(rng, (3, 4), dtype), rand(rng, (3, 4), dtype)
    nz = np.where(y == 0, 1, y).astype(dtype)
    trunc_div = (lambda a, b: np.trunc(a / b).astype(dtype)) if np.dtype(dtype).kind != "f" else np.divide
    for fn, ref, a, b in [(lax.add, np.add, x, y), (lax.sub, np.subtract, x, y), (lax.mul, np.multiply, x, y),
                          (lax.div, trunc_div, x, nz), (lax.rem, np.fmod, x, nz), (lax.max, np.maximum, x, y),
                          (lax.min, np.minimum, x, y), (lax.eq, np.equal, x, y), (lax.ne, np.not_equal, x, y),
                          (lax.lt, np.less, x, y), (lax.le, np.less_equal, x, y), (lax.gt, np.greater, x, y),
                          (lax.ge, np.greater_equal, x, y)]:
        check(fn, ref, a, b)
    check(lambda a: lax.mul(a, 3), lambda a: a * np.asarray(3, dtype), x)  # weak scalar literal


def test_pow_primitive(rng):
    x = rand(rng, (5,), np.float64, 0.1, 3)
    check(lax.pow, np.power, x, x[::-1].copy())
    i = np.array([2, -1, 1, 3, 0], np.int64)
    check(lax.pow, lambda a, b: np.array([4, -1, 1, 27, 1]), i, np.array([2, 3, -2, 3, 0], np.int64))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
def test_bitwise_primitives(rng, dtype):
    x, y = rand(rng, (6,), dtype), rand(rng, (6,), dtype)
    check(lax.bitwise_and, np.bitwise_and, x, y)
    check(lax.bitwise_or, np.bitwise_or, x, y)
    check(lax.bitwise_xor, np.bitwise_xor, x, y)
    check(lax.bitwise_not, np.invert, x)


def test_select_clamp_convert(rng):
    x, y = rand(rng, (3, 4), np.float32), rand(rng, (3, 4), np.float32)
    check(lambda p, a, b: lax.select(p, a, b), np.where, x > 0, x, y)
    check(lambda p, a, b, c: lax.select_n(p, a, b, c), lambda p, a, b, c: np.choose(p, [a, b, c]),
          rng.integers(0, 3, (3, 4)).astype(np.int32), x, y, x * 2)
    check(lambda a: lax.clamp(-0.5, a, 0.5), lambda a: np.clip(a, -0.5, 0.5), x)
    for src in [np.float32, np.float64, np.int32, np.int64, np.bool_]:
        for dst in [np.float32, np.float64, np.int32, np.int64, np.bool_]:
            v = rand(rng, (5,), src)
            check(lambda a, dst=dst: lax.convert_element_type(a, dst), lambda a, dst=dst: a.astype(dst), v)


def test_float_to_int_conversion_saturates():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.7, -2.7])
    check(lambda a: lax.convert_element_type(a, np.int32), lambda a: np.array(
        [0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, 2, -2], np.int32), x)


@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
def test_structural_primitives(rng, dtype):
    x = rand(rng, (2, 3, 4), dtype)
    check(lambda a: lax.broadcast_in_dim(a[0], (5, 3, 4), (1, 2)), lambda a: np.broadcast_to(a[0], (5, 3, 4)), x)
    check(lambda a: lax.broadcast_in_dim(a[:, :1, 0], (2, 6), (0, 1)),
          lambda a: np.broadcast_to(a[:, :1, 0], (2, 6)), x)
    check(lambda a: lax.reshape(a, (4, 6)), lambda a: a.reshape(4, 6), x)
    check(lambda a: lax.transpose(a, (2, 0, 1)), lambda a: a.transpose(2, 0, 1), x)
    check(lambda a: lax.squeeze(a[:1], (0,)), lambda a: a[0], x)
    check(lambda a: lax.expand_dims(a, (0, 3)), lambda a: np.expand_dims(a, (0, 3)), x)
    check(lambda a: lax.rev(a, (0, 2)), lambda a: a[::-1, :, ::-1], x)
    check(lambda a: lax.slice(a, (0, 1, 0), (2, 3, 4), (1, 1, 3)), lambda a: a[0:2, 1:3, 0:4:3], x)
    check(lambda a: lax.pad(a, 0, [(1, 0, 0), (0, 2, 1), (-1, 1, 0)]),
          lambda a: np.pad(np.insert(a, [1, 2], 0, axis=1), [(1, 0), (0, 2), (0, 1)])[:, :, 1:], x)
    check(lambda a: lax.concatenate([a, a[:1]], 0), lambda a: np.concatenate([a, a[:1]], 0), x)
    check(lambda: lax.broadcasted_iota(dtype, (2, 3), 1), lambda: np.broadcast_to(np.arange(3, dtype=dtype), (2, 3)))
    check(lambda: lax.iota(dtype, 0), lambda: np.arange(0, dtype=dtype))


@pytest.mark.parametrize("dtype", FLOATS + [np.int32, np.int64])
def test_reduction_primitives(rng, dtype):
    x = rand(rng, (3, 4, 2), dtype)
    for fn, ref in [(lax.reduce_sum, np.sum), (lax.reduce_max, np.max), (lax.reduce_min, np.min),
                    (lax.reduce_prod, np.prod)]:
        for axes in [(0,), (1, 2), ()]:
            check(lambda a, fn=fn, axes=axes: fn(a, axes),
                  lambda a, ref=ref, axes=axes: ref(a, axis=axes).astype(dtype), x)
    check(lambda a: lax.argmax(a, 1, np.int32), lambda a: np.argmax(a, 1).astype(np.int32), x)
    check(lambda a: lax.argmin(a, 0, np.int64), lambda a: np.argmin(a, 0), x)
    check(lambda a: lax.cumsum(a, 1), lambda a: np.cumsum(a, 1, dtype=dtype), x)
    check(lambda a: lax.cumsum(a, 0, reverse=True), lambda a: np.cumsum(a[::-1], 0, dtype=dtype)[::-1], x)
    empty = np.zeros((0, 3), dtype)
    check(lambda a: lax.reduce_sum(a, (0,)), lambda a: np.zeros(3, dtype), empty)
    if np.dtype(dtype).kind == "f":
        check(lambda a: lax.reduce_max(a, (0,)), lambda a: np.full(3, -np.inf, dtype), empty)


@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
def test_dot_general(rng, dtype):
    a, b = rand(rng, (2, 3, 4), dtype), rand(rng, (2, 4, 5), dtype)
    tol = 1e-5 if dtype == np.float32 else None
    check(lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))), np.matmul, a, b, rtol=tol)
    check(lambda x, y: lax.dot_general(x, y, (((1, 2), (0, 1)), ((), ()))),
          lambda x, y: np.tensordot(x, y, ((1, 2), (0, 1))), a, rand(rng, (3, 4, 2), dtype), rtol=tol)
    check(lambda x, y: lax.dot_general(x, y, (((), ()), ((), ()))), lambda x, y: np.multiply.outer(x, y),
          a[0, 0], b[0, 0], rtol=tol)


def test_dynamic_slices_wrap_negative_starts_once_then_clamp(rng):
    """As JAX: a negative start counts from the end of the operand's axis once, then the start is clamped."""
    x = rand(rng, (4, 5), np.float64)
    for i, j in [(1, 2), (3, 4), (-2, 0), (10, 10), (-1, -3), (-4, -5), (-9, -6)]:
        ci, cj = np.clip(i + 4 * (i < 0), 0, 2), np.clip(j + 5 * (j < 0), 0, 2)
        check(lambda a, i, j: lax.dynamic_slice(a, (i, j), (2, 3)),
              lambda a, i, j, ci=ci, cj=cj: a[ci:ci + 2, cj:cj + 3], x, np.int32(i), np.int32(j))
        expected = x.copy()
        expected[ci:ci + 2, cj:cj + 3] = 1.0
        check(lambda a, i, j: lax.dynamic_update_slice(a, np.ones((2, 3)), (i, j)),
              lambda a, i, j, expected=expected: expected, x, np.int64(i), np.int64(j))


def test_gather_and_scatter_add_modes(rng):
    x = rand(rng, (4, 3), np.float64)
    idx = np.array([[0], [3], [7], [-1]])
    gather = P.ALL["gather"]
    scatter = P.ALL["scatter_add"]
    check(lambda a: gather.bind(a, idx, axes=(0,), mode="clip"), lambda a: a[[0, 3, 3, 0]], x)
    check(lambda a: gather.bind(a, idx, axes=(0,), mode="fill"),
          lambda a: np.where(np.array([1, 1, 0, 0])[:, None], a[[0, 3, 3, 0]], 0), x)
    updates = np.ones((4, 3))
    clipped = x.copy()
    np.add.at(clipped, [0, 3, 3, 0], 1.0)
    dropped = x.copy()
    np.add.at(dropped, [0, 3], 1.0)
    check(lambda a: scatter.bind(a, idx, updates, axes=(0,), mode="clip"), lambda a: clipped, x)
    check(lambda a: scatter.bind(a, idx, updates, axes=(0,), mode="drop"), lambda a: dropped, x)


def test_scatter_add_of_one_broadcast_update_reads_the_scalar(rng):
    """Updates that broadcast one scalar (bincount's ones) become the scalar in the optimised IR (simplify), which
    the kernel reads once; the form has the same values, derivatives (the scalar's cotangent sums the gathered
    ones) and batching as the broadcast one, compiled and eager, in both modes, with int8 and int64 indices."""
    from tracejit.passes import optimize
    scatter = P.ALL["scatter_add"]
    x = rand(rng, (5, 3), np.float64)
    for idx in (np.array([[0], [4], [9], [-2], [4]], np.int8), np.array([[1], [1], [3]], np.int64)):
        for mode in ("clip", "drop"):
            def one(a, c, idx=idx, mode=mode):
                return scatter.bind(a, idx, c, axes=(0,), mode=mode)

            def broadcast(a, c, idx=idx, mode=mode):
                return scatter.bind(a, idx, tnp.broadcast_to(c, (len(idx), 3)), axes=(0,), mode=mode)
            c = np.float64(1.5)
            optimized = optimize(tj.make_ir(broadcast)(x, c))
            (eqn,) = [e for e in optimized.ir.eqns if e.prim is scatter]
            assert eqn.inputs[2].aval.shape == (), str(optimized)
            want = broadcast(x, c)
            np.testing.assert_allclose(one(x, c), want)
            np.testing.assert_allclose(tj.jit(one)(x, c), want)
            np.testing.assert_allclose(tj.eval_ir(optimized, x, c)[0], want)
            loss = [lambda a, c, f=f: tnp.sum(f(a, c) * tnp.arange(15.0).reshape(5, 3)) for f in (one, broadcast)]
            for argnum in (0, 1):
                np.testing.assert_allclose(tj.grad(loss[0], argnum)(x, c), tj.grad(loss[1], argnum)(x, c))
            xs, cs = np.stack([x, 2 * x]), np.array([1.5, -2.0])
            np.testing.assert_allclose(tj.vmap(one)(xs, cs), tj.vmap(broadcast)(xs, cs))
            np.testing.assert_allclose(tj.vmap(one, (0, None))(xs, c), tj.vmap(broadcast, (0, None))(xs, c))


def test_eager_primitives_accept_python_scalars():
    assert tj.lax.integer_pow(0.5, 3) == 0.125
    assert tj.lax.exp(0.0) == 1.0 and tj.lax.add(1, 2) == 3


def test_general_reduce_folds_pairwise_and_knows_the_monoids(rng):
    """lax.reduce over any axes of any length (odd, one, empty) equals NumPy's fold with the init value applied
    once; lax.add ... reduce with their primitive, other computations fold in log2(n) vectorized steps."""
    x = rng.standard_normal((5, 7, 3))
    for axes in [(0,), (1,), (0, 2), (0, 1, 2)]:
        np.testing.assert_allclose(tj.jit(lambda x, axes=axes: lax.reduce(x, 1.5, lambda a, b: a + b, axes))(x),
                                   x.sum(axes) + 1.5, rtol=1e-13)
        np.testing.assert_array_equal(lax.reduce(x, -np.inf, lax.max, axes), x.max(axes))
    assert "reduce_max" in str(tj.make_ir(lambda x: lax.reduce(x, -np.inf, lax.max, (0,)))(x))
    assert "reduce_max" not in str(tj.make_ir(lambda x: lax.reduce(x, -np.inf, lambda a, b: lax.max(a, b), (0,)))(x))
    np.testing.assert_array_equal(lax.reduce(x[:, :0], 2.0, lambda a, b: a * b, (1,)), np.full((5, 3), 2.0))
    np.testing.assert_array_equal(lax.reduce(x[:, :1], 0.0, lambda a, b: a + b, (1,)), x[:, 0])
    ints = rng.integers(0, 256, (4, 9))
    np.testing.assert_array_equal(tj.jit(lambda a: lax.reduce_xor(a, (1,)))(ints), np.bitwise_xor.reduce(ints, 1))
    np.testing.assert_array_equal(lax.reduce_and(ints, (0,)), np.bitwise_and.reduce(ints, 0))
    with pytest.raises(TypeError, match="same structure"):
        lax.reduce((x, x), 0.0, lax.add, (0,))
    with pytest.raises(TypeError, match="boolean or integer operands, got float64"):
        lax.reduce_or(x, (0,))


def test_composite_shape_functions_refuse_what_does_not_fit():
    """split's sizes must add up to the axis, collapse's dimensions fit the shape, reciprocal takes inexact values,
    batch_matmul's batch axes agree: each error names what it got."""
    x = np.ones((5, 2))
    with pytest.raises(ValueError, match=r"add up to 5, the length of axis 0 of shape \(5, 2\)"):
        lax.split(x, (2, 2))
    with pytest.raises(ValueError, match="do not fit shape"):
        lax.collapse(x, 1, 0)
    with pytest.raises(TypeError, match="floating or complex operands, got int64"):
        lax.reciprocal(np.arange(3))
    with pytest.raises(ValueError, match=r"\(2, 3, 4\) and \(3, 4, 5\)"):
        lax.batch_matmul(np.ones((2, 3, 4)), np.ones((3, 4, 5)))
    with pytest.raises(TypeError, match="fill_value must be a scalar"):
        lax.full((2,), np.ones(2))


def test_nextafter_as_numpy_with_lax_typing():
    """The next float toward the second operand (subnormals, signed zeros, infinities, NaN) in each float dtype,
    eager and compiled; operands of one dtype and shape (a Python scalar or rank-0 one takes the other's)."""
    x = np.array([1.0, 0.0, -0.0, -1.0, np.inf, np.nan, 1.0, 5e-324, -5e-324, 3.0])
    y = np.array([2.0, 1.0, -1.0, 0.0, 0.0, 1.0, np.nan, 0.0, 0.0, 3.0])
    for dtype in (np.float64, np.float32, np.float16):
        a, b = x.astype(dtype), y.astype(dtype)
        with np.errstate(all="ignore"):
            want = np.nextafter(a, b)
        for got in (lax.nextafter(a, b), tj.jit(lax.nextafter)(a, b)):
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(lax.nextafter(np.ones(2, np.float32), 2.0), np.nextafter(np.float32(1), np.float32(2)))
    with pytest.raises(TypeError, match="one dtype, got float32 and float64"):
        lax.nextafter(np.ones(2, np.float32), np.ones(2))
    with pytest.raises(TypeError, match=r"one shape \(or a scalar\), got \(2,\) and \(3,\)"):
        lax.nextafter(np.ones(2), np.ones(3))
