"""vmap: what stays unbatched, the API (pytrees, axes, closures), compositions with jit and autodiff, errors.
Every primitive's batching rule is checked against a loop over examples in test_primitives.py."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import vmap
from tracejit.core.ir import check_ir
from tracejit.transforms.vmap import vmap_ir

rng = np.random.default_rng(0)


def f64(*shape):
    return rng.normal(size=shape)


def batched_ir(f, examples, in_dims, size):
    closed = tj.make_ir(f)(*examples)
    out, _ = vmap_ir(closed, in_dims, size)
    check_ir(out)
    return out


def test_unbatched_values_stay_unbatched_and_dot_uses_batch_dims():
    def f(x, w, b):
        h = tnp.tanh(w @ x + b)          # w, b unbatched
        return tnp.sum(h * tnp.cos(b))   # cos(b) is computed once
    closed = batched_ir(f, [f64(4), f64(3, 4), f64(3)], [0, None, None], 5)
    text = str(closed)
    assert "cos" in text and "f64[5,3] = cos" not in text
    assert not any(e.prim.name == "broadcast_in_dim" and e.inputs[0] in closed.ir.invars[1:2] for e in closed.eqns)
    both = batched_ir(lambda a, b: a @ b, [f64(2, 3), f64(3, 4)], [0, 0], 6)
    dots = [e for e in both.eqns if e.prim.name == "dot_general"]
    assert len(dots) == 1 and dots[0].params["dimension_numbers"][1] == ((0,), (0,))


# ---------------------------------------------------------------------------------------- API semantics

def test_pytrees_negative_axes_and_kwargs():
    x, y = f64(4, 3), f64(3, 4)
    params = {"w": f64(3), "b": f64()}

    def f(p, inputs, scale=1.0):
        a, b = inputs
        return {"s": tnp.sum(a * p["w"]) + p["b"], "t": (b * scale, a)}

    out = vmap(f, in_axes=(None, (0, -1)), out_axes={"s": 0, "t": (1, -2)})(params, (x, y), scale=np.arange(4.0))
    for i in range(4):
        np.testing.assert_allclose(out["s"][i], np.sum(x[i] * params["w"]) + params["b"])
        np.testing.assert_allclose(out["t"][0][:, i], y[:, i] * i)
    np.testing.assert_array_equal(out["t"][1], x)


def test_out_axes_none_for_unbatched_output_and_broadcast_of_unbatched():
    x, c = f64(5, 2), f64(2)
    mean, same = vmap(lambda x, c: (x + c, c * 2), in_axes=(0, None), out_axes=(0, None))(x, c)
    np.testing.assert_allclose(mean, x + c)
    np.testing.assert_allclose(same, c * 2)
    stacked = vmap(lambda x, c: c * 2, in_axes=(0, None))(x, c)
    np.testing.assert_allclose(stacked, np.broadcast_to(c * 2, (5, 2)))
    made = vmap(lambda: tnp.ones(3), in_axes=(), axis_size=4)()
    assert made.shape == (4, 3)


def test_closures_over_batched_and_unbatched_values():
    w = f64(3)

    def outer(x):  # x is one example of the outer vmap; the inner function closes over it and over w
        return vmap(lambda y: tnp.sum(x * y * w))(np.arange(6.0).reshape(2, 3))

    xs = f64(4, 3)
    expected = np.array([[np.sum(x * y * w) for y in np.arange(6.0).reshape(2, 3)] for x in xs])
    np.testing.assert_allclose(vmap(outer)(xs), expected)
    np.testing.assert_allclose(tj.jit(vmap(outer))(xs), expected)


def test_nested_vmap_is_an_outer_product():
    xs, ys = f64(3), f64(4)
    got = vmap(vmap(lambda a, b: a * b + tnp.sin(a), in_axes=(None, 0)), in_axes=(0, None))(xs, ys)
    np.testing.assert_allclose(got, xs[:, None] * ys[None, :] + np.sin(xs)[:, None])
    mats = f64(2, 3, 4, 5)
    got = vmap(vmap(tnp.sum, in_axes=1, out_axes=0), in_axes=3, out_axes=1)(mats)
    np.testing.assert_allclose(got, np.sum(mats, axis=(0, 2)))


def test_outputs_are_owned_arrays():
    x = f64(3, 2)
    out = vmap(lambda a: a)(x)
    assert isinstance(out, np.ndarray) and out is not x
    np.testing.assert_array_equal(out, x)


# ---------------------------------------------------------------------------------------- composition

def test_jit_of_vmap_and_vmap_of_jit():
    f = lambda x, w: tnp.tanh(x @ w)
    x, w = f64(6, 3), f64(3, 2)
    expected = np.tanh(x @ w)
    np.testing.assert_allclose(tj.jit(vmap(f, in_axes=(0, None)))(x, w), expected)
    np.testing.assert_allclose(vmap(tj.jit(f), in_axes=(0, None))(x, w), expected)
    closed = tj.make_ir(vmap(tj.jit(f), in_axes=(0, None)))(x, w)
    check_ir(closed)
    assert sum(e.prim.name == "dot_general" for e in closed.eqns) == 1


def loss(w, x, y):
    return (tnp.dot(x, w) - y) ** 2 + 0.1 * tnp.sum(tnp.tanh(w))


def test_per_example_gradients():
    w, xs, ys = f64(4), f64(8, 4), f64(8)
    got = vmap(tj.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    expected = np.stack([2 * (x @ w - y) * x + 0.1 * (1 - np.tanh(w) ** 2) for x, y in zip(xs, ys)])
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    np.testing.assert_allclose(tj.jit(vmap(tj.grad(loss), in_axes=(None, 0, 0)))(w, xs, ys), expected, rtol=1e-10)
    check_ir(tj.make_ir(vmap(tj.grad(loss), in_axes=(None, 0, 0)))(w, xs, ys))


def test_grad_of_vmap_and_jvp_of_vmap():
    w, xs, ys = f64(4), f64(8, 4), f64(8)

    def total(w):
        return tnp.sum(vmap(loss, in_axes=(None, 0, 0))(w, xs, ys))

    expected = sum(2 * (x @ w - y) * x + 0.1 * (1 - np.tanh(w) ** 2) for x, y in zip(xs, ys))
    np.testing.assert_allclose(tj.grad(total)(w), expected, rtol=1e-10)
    t = f64(4)
    out, tangent = tj.jvp(vmap(lambda w, x: tnp.sin(x * w), in_axes=(None, 0)), (w, xs), (t, np.zeros_like(xs)))
    np.testing.assert_allclose(out, np.sin(xs * w))
    np.testing.assert_allclose(tangent, np.cos(xs * w) * xs * t, rtol=1e-10)


def test_vmap_of_jvp_and_vjp():
    x, ts = f64(3), f64(5, 3)
    _, tangents = vmap(lambda t: tj.jvp(tnp.sin, (x,), (t,)), in_axes=0)(ts)
    np.testing.assert_allclose(tangents, np.cos(x) * ts)

    def pullback(ct):
        _, f_vjp = tj.vjp(lambda v: tnp.tanh(v) * 2.0, x)
        return f_vjp(ct)[0]

    np.testing.assert_allclose(vmap(pullback)(ts), ts * 2 * (1 - np.tanh(x) ** 2), rtol=1e-10)


# ---------------------------------------------------------------------------------------- errors

def test_inconsistent_sizes_name_the_arguments():
    def f(x, y):
        return x + y
    with pytest.raises(ValueError, match=r"(?s)inconsistent sizes.*'x'.*size 3.*'y'.*size 4"):
        vmap(f)(f64(3, 2), f64(4, 2))
    with pytest.raises(ValueError, match=r"axis_size=5"):
        vmap(f, axis_size=5)(f64(3, 2), f64(3, 2))


def test_in_axes_errors():
    f = lambda x, y: x + y
    with pytest.raises(ValueError, match=r"in_axes 2 is out of range for argument 'x' of rank 2"):
        vmap(f, in_axes=(2, 0))(f64(3, 2), f64(3, 2))
    with pytest.raises(ValueError, match=r"in_axes -1 is out of range for argument 'y' of rank 0"):
        vmap(f, in_axes=(0, -1))(f64(3), 1.0)
    with pytest.raises(ValueError, match=r"in_axes is a tuple of 3 entries"):
        vmap(f, in_axes=(0, 0, 0))(f64(3), f64(3))
    with pytest.raises(ValueError, match=r"tree prefix"):
        vmap(lambda p: p[0], in_axes=((0, 0),))((f64(3),))
    with pytest.raises(ValueError, match=r"tree prefix"):
        vmap(lambda p: p["a"], in_axes=({"b": 0},))({"a": f64(3)})
    with pytest.raises(TypeError, match=r"in_axes must be an int, None"):
        vmap(f, in_axes="0")
    with pytest.raises(ValueError, match=r"no argument is mapped"):
        vmap(f, in_axes=None)(f64(3), f64(3))


def test_out_axes_errors():
    with pytest.raises(ValueError, match=r"out_axes is None for output\[1\], but it is batched"):
        vmap(lambda x, c: (c, x), in_axes=(0, None), out_axes=(None, None))(f64(3), f64(2))
    with pytest.raises(ValueError, match=r"out_axes 2 is out of range for output"):
        vmap(lambda x: x, out_axes=2)(f64(3))


def test_unmapped_python_scalars_pass_through_untraced():
    """As jax.vmap: an unmapped positional argument that is a Python scalar reaches the function as it is, so that
    Python control flow and an inner jit's static argument see it (JAX's pca example); under jit it is traced, as
    in JAX, and a mapped one is batched."""
    import functools

    @functools.partial(tj.jit, static_argnames=["n"])
    def head(x, n):
        return x[:n] * 2

    X = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(tj.vmap(head, in_axes=(0, None))(X, 2), X[:, :2] * 2)
    np.testing.assert_array_equal(tj.vmap(lambda x, k: x * k if k > 1 else x, in_axes=(0, None))(X, 3), X * 3)
    np.testing.assert_array_equal(tj.jit(tj.vmap(lambda x, k: x * k, in_axes=(0, None)))(X, 3), X * 3)
    np.testing.assert_array_equal(tj.vmap(lambda x, k: x * k, in_axes=(None, 0))(2.0, np.arange(3.0)), [0, 2, 4])


@pytest.mark.parametrize("op", ["set", "add", "max", "min"])
def test_scalar_update_at_one_element_of_a_batched_operand(op):
    """x.at[i, j].op(v) selects one element: its scatter's updates are a scalar, which the batching rule took for
    scatter_add's one-update-for-every-index form (a ShapeError for set, max and min)."""
    jnp = pytest.importorskip("jax.numpy")
    jax = pytest.importorskip("jax")
    x, v = np.arange(18.0).reshape(2, 3, 3), np.array([5.0, -5.0])
    for axes, args in (((0, None, 0), (x, 1, v)), ((0, None, None), (x, 1, 7.0)), ((0, 0, None), (x, np.array([0, 2]), 7.0))):
        ours = tj.vmap(lambda x, i, v: getattr(tnp.asarray(x).at[i, 0], op)(v), in_axes=axes)(*args)
        theirs = jax.vmap(lambda x, i, v: getattr(jnp.asarray(x).at[i, 0], op)(v), in_axes=axes)(*args)
        np.testing.assert_array_equal(ours, theirs)
