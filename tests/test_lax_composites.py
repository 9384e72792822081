"""The jax.lax functions written on the others (tracejit.lax.composites) and the elementwise ones bound to their
primitives, against JAX: values eager and under jit, errors, and derivatives."""
import operator

import numpy as np
import pytest

import tracejit as tj
from tracejit import lax

jax = pytest.importorskip("jax")
jl = jax.lax
jax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(0)
x = rng.uniform(0.1, 0.9, (3, 4))
y = rng.uniform(1.1, 3.0, (3, 4))


@pytest.mark.parametrize("name", ["asin", "acos", "atan", "sinh", "cosh", "asinh", "atanh", "exp2", "cbrt", "square",
                                  "reciprocal"])
def test_unary(name):
    want = getattr(jl, name)(x)
    for got in (getattr(lax, name)(x), tj.jit(getattr(lax, name))(x)):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(tj.grad(lambda v: getattr(lax, name)(v).sum())(x),
                               jax.grad(lambda v: getattr(jl, name)(v).sum())(x), rtol=1e-13)
    np.testing.assert_allclose(lax.acosh(y), jl.acosh(y), rtol=1e-14)


def test_binary_and_shapes():
    np.testing.assert_allclose(lax.atan2(x, y), jl.atan2(x, y), rtol=1e-15)
    np.testing.assert_array_equal(lax.nextafter(x, y), jl.nextafter(x, y))
    with pytest.raises(TypeError, match="share one dtype"):
        lax.nextafter(x, y.astype(np.float32))
    np.testing.assert_array_equal(lax.full((2, 3), 1.5, np.float32), jl.full((2, 3), 1.5, np.float32))
    np.testing.assert_array_equal(lax.full_like(x, 2, np.int32), jl.full_like(x, 2, np.int32))
    np.testing.assert_array_equal(lax.broadcast(x, (2,)), jl.broadcast(x, (2,)))
    for got, want in zip(lax.split(y, (1, 3), axis=1), jl.split(y, (1, 3), axis=1)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="sum to the length"):
        lax.split(y, (1, 2), axis=1)
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 5))
    np.testing.assert_allclose(tj.jit(lax.batch_matmul)(a, b), jl.batch_matmul(a, b), rtol=1e-13)
    np.testing.assert_array_equal(lax.optimization_barrier(x), x)


@pytest.mark.parametrize("computation, init", [(lax.add, 0.0), (operator.mul, 1.0), (lax.max, -np.inf),
                                               (tj.numpy.minimum, 5.0)])
def test_reduce_by_a_monoid(computation, init):
    reference = {lax.add: jl.add, operator.mul: jl.mul, lax.max: jl.max, tj.numpy.minimum: jl.min}[computation]
    want = jl.reduce(x, init, reference, (1,))
    for got in (lax.reduce(x, init, computation, (1,)), tj.jit(lambda v: lax.reduce(v, init, computation, (1,)))(x)):
        np.testing.assert_allclose(got, want, rtol=1e-15)
    with pytest.raises(NotImplementedError, match="only add, mul, max and min"):
        lax.reduce(x, 0.0, lambda a, b: a + 2 * b, (0,))


@pytest.mark.parametrize("batch_size", [None, 2, 3])
def test_map(batch_size):
    xs = {"a": rng.normal(size=(7, 3)), "b": rng.normal(size=7)}

    def f(t):
        return {"s": (t["a"] * t["b"]).sum(), "t": tj.numpy.tanh(t["a"])}

    def g(t):
        return {"s": (t["a"] * t["b"]).sum(), "t": jax.numpy.tanh(t["a"])}
    want = jl.map(g, xs, batch_size=batch_size)
    for got in (lax.map(f, xs, batch_size=batch_size), tj.jit(lambda v: lax.map(f, v, batch_size=batch_size))(xs)):
        np.testing.assert_allclose(got["s"], want["s"], rtol=1e-14)
        np.testing.assert_allclose(got["t"], want["t"], rtol=1e-14)
