"""vmap: every primitive's batching rule against a Python loop over examples, compositions, errors."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax, vmap
from tracejit.core.ir import check_ir
from tracejit.core.trace import bind
from tracejit.primitives import ALL
from tracejit.primitives import indexing as ix
from tracejit.primitives.shapes import dim_size_p
from tracejit.transforms.vmap import vmap_ir

B = 3
rng = np.random.default_rng(0)


def f64(*shape):
    return rng.normal(size=shape)


def f32(*shape):
    return rng.normal(size=shape).astype(np.float32)


def pos(*shape):
    return rng.uniform(0.5, 2.0, size=shape)


def ints(lo, hi, *shape):
    """An int example whose batched copies are drawn from [lo, hi]."""
    return np.full(shape, lo, np.int64) if lo == hi else rng.integers(lo, hi + 1, size=shape)


def bools(*shape):
    return rng.random(size=shape) < 0.5


# (name, function, example arguments). Batched arguments are B fresh draws of the same kind as the example.
CASES = [
    ("neg", lambda x: -x, [f64(3, 4)]),
    ("exp", tnp.exp, [f32(3, 4)]),
    ("log", tnp.log, [pos(3, 4)]),
    ("log1p", tnp.log1p, [pos(4)]),
    ("expm1", tnp.expm1, [f64(4)]),
    ("sin", tnp.sin, [f64(2, 3)]),
    ("cos", tnp.cos, [f64(2, 3)]),
    ("tan", tnp.tan, [f64(2, 3)]),
    ("tanh", tnp.tanh, [f64(2, 3)]),
    ("logistic", tj.nn.sigmoid, [f64(2, 3)]),
    ("sqrt", tnp.sqrt, [pos(3)]),
    ("rsqrt", lax.rsqrt, [pos(3)]),
    ("abs", tnp.abs, [f64(3)]),
    ("sign", tnp.sign, [f64(3)]),
    ("floor", tnp.floor, [f64(3)]),
    ("ceil", tnp.ceil, [f64(3)]),
    ("round", lambda x: lax.round(x * 3), [f64(3)]),
    ("not", tnp.invert, [ints(-5, 5, 2, 3)]),
    ("not_bool", tnp.logical_not, [bools(4)]),
    ("is_finite", lambda x: tnp.isfinite(tnp.log(x)), [f64(4)]),
    ("stop_gradient", tj.stop_gradient, [f64(3)]),
    ("integer_pow", lambda x: lax.integer_pow(x, 3), [f64(3)]),
    ("add_bcast", lambda x, y: x + y, [f64(3, 4), f64(4)]),
    ("add_scalar_arg", lambda x, y: x + y, [f64(3, 4), f64()]),
    ("sub", lax.sub, [f64(3, 4), f64(3, 4)]),
    ("mul_literal", lambda x, y: x * y * 2.0, [f32(2, 3), f32(2, 3)]),
    ("div", lambda x, y: x / y, [f64(3), pos(3)]),
    ("rem", lax.rem, [f64(3), pos(3)]),
    ("rem_int", lax.rem, [ints(-9, 9, 4), ints(1, 4, 4)]),
    ("pow", lax.pow, [pos(3), f64(3)]),
    ("max", tnp.maximum, [f64(2, 3), f64(3)]),
    ("min", tnp.minimum, [f64(2, 3), f64(2, 3)]),
    ("and", tnp.bitwise_and, [ints(0, 9, 3), ints(0, 9, 3)]),
    ("or", tnp.logical_or, [bools(3), bools(3)]),
    ("xor", tnp.bitwise_xor, [ints(0, 9, 3), ints(0, 9, 3)]),
    ("eq", lambda x, y: x == y, [ints(0, 2, 4), ints(0, 2, 4)]),
    ("ne", lambda x, y: x != y, [ints(0, 2, 4), ints(0, 2, 4)]),
    ("lt", lambda x, y: x < y, [f64(4), f64(4)]),
    ("le", lambda x, y: x <= y, [f64(4), f64()]),
    ("gt", lambda x, y: x > y, [f64(2, 4), f64(4)]),
    ("ge", lambda x, y: x >= 0.5, [f64(4), f64(4)]),
    ("select_n", lambda p, x, y: tnp.where(p > 0, x, y), [f64(3, 2), f64(3, 2), f64(2)]),
    ("select_n_scalar_pred", lambda p, x, y: lax.select(p > 0, x, y), [f64(), f64(3), f64(3)]),
    ("select_n_scalar_cases", lambda p: tnp.where(p > 0, 1.0, -1.0), [f64()]),
    ("clamp", lambda lo, x: lax.clamp(lo, x, 1.0), [f64(), f64(4)]),
    ("clamp_scalar_operand", lambda lo: lax.clamp(lo, 0.5, 1.0), [f64()]),
    ("clamp_arrays", lambda lo, x, hi: lax.clamp(lo, x, hi), [f64(4) - 1, f64(4), f64(4) + 1]),
    ("convert_element_type", lambda x: lax.convert_element_type(x * 3, np.int32), [f64(3)]),
    ("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (0, 2)), [f64(2, 4)]),
    ("broadcast_in_dim_scalar", lambda x: lax.broadcast_in_dim(x, (2, 3), ()), [f64()]),
    ("reshape", lambda x: tnp.reshape(x, (4, 3)), [f64(2, 6)]),
    ("transpose", lambda x: tnp.transpose(x, (2, 0, 1)), [f64(2, 3, 4)]),
    ("squeeze", lambda x: lax.squeeze(x, (0, 2)), [f64(1, 3, 1, 2)]),
    ("expand_dims", lambda x: lax.expand_dims(x, (0, 3)), [f64(2, 3)]),
    ("rev", lambda x: lax.rev(x, (1,)), [f64(2, 3)]),
    ("slice", lambda x: lax.slice(x, (0, 1), (3, 4), (2, 1)), [f64(3, 4)]),
    ("pad", lambda x: lax.pad(x, 0.5, ((1, 2, 1), (0, -1, 0))), [f64(2, 3)]),
    ("pad_value", lambda x, v: lax.pad(x, v, ((1, 0, 0), (2, 1, 1))), [f64(2, 3), f64()]),
    ("concatenate", lambda x, y: tnp.concatenate([x, y, x], axis=1), [f64(2, 3), f64(2, 1)]),
    ("iota", lambda x: x + lax.broadcasted_iota(np.float64, (2, 3), 1), [f64(2, 3)]),
    ("dim_size", lambda x: x * bind(dim_size_p, dim=3), [f64(2, 3)]),
    ("reduce_sum", lambda x: tnp.sum(x, axis=(0, 2)), [f64(2, 3, 4)]),
    ("reduce_max", lambda x: tnp.max(x, axis=1), [f64(2, 3, 4)]),
    ("reduce_min", lambda x: tnp.min(x, axis=0), [f64(2, 3)]),
    ("reduce_prod", lambda x: tnp.prod(x), [f64(2, 3)]),
    ("argmax", lambda x: tnp.argmax(x, axis=1), [f64(2, 3, 4)]),
    ("argmin", lambda x: tnp.argmin(x, axis=0), [f64(3, 2)]),
    ("cumsum", lambda x: tnp.cumsum(x, axis=1), [f64(2, 3)]),
    ("cumsum_reverse", lambda x: lax.cumsum(x, axis=0, reverse=True), [f64(4, 2)]),
    ("sort", lambda x: tnp.sort(x, axis=0), [f64(4, 3)]),
    ("searchsorted", lambda a, v: tnp.searchsorted(tnp.sort(a), v), [f64(6), f64(2, 3)]),
    ("searchsorted_right", lambda a, v: tnp.searchsorted(tnp.sort(a), v, side="right"), [f64(6), f64(4)]),
    ("libm_unary", lambda x: tnp.stack([getattr(tnp, n)(x) for n in ("arcsin", "arccos", "arctan", "sinh", "cosh",
                                                                      "arcsinh", "arctanh", "log2", "log10", "exp2",
                                                                      "cbrt")] + [tnp.arccosh(x + 1.5)]),
     [f64(3, 2) * 0.5]),
    ("libm_binary", lambda x, y: tnp.stack([tnp.arctan2(x, y), tnp.hypot(x, y)]), [f64(3, 2), f64(3, 2)]),
    ("argsort", lambda x: tnp.argsort(x, kind="stable"), [f64(2, 5)]),
    ("dot_mv", lambda a, v: a @ v, [f64(3, 4), f64(4)]),
    ("dot_mm", tnp.matmul, [f64(2, 3), f64(3, 5)]),
    ("dot_vv", tnp.dot, [f64(4), f64(4)]),
    ("dot_batch_dims", lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), [f64(2, 3, 4), f64(2, 4, 5)]),
    ("dot_contract_first", lambda a, b: lax.dot_general(a, b, (((0,), (1,)), ((), ()))), [f64(4, 3), f64(2, 4)]),
    ("dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 2)), [f64(4, 5), ints(-1, 4), ints(0, 5)]),
    ("dynamic_slice_static", lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)), [f64(4, 5)]),
    ("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, np.int32(1))),
     [f64(4, 5), f64(2, 3), ints(-1, 4)]),
    ("dynamic_update_slice_static", lambda x, u: lax.dynamic_update_slice(x, u, (2, 0)), [f64(4, 3), f64(2, 3)]),
    ("gather_getitem", lambda x, i: x[i], [f64(5, 3), ints(0, 4, 2, 2)]),
    ("gather_two_axes", lambda x, i: bind(ix.gather_p, x, i, axes=(2, 0), mode="fill"),
     [f64(3, 2, 4), ints(-1, 4, 5, 2)]),
    ("scatter_add_at", lambda x, i, v: x.at[i].add(v), [f64(5, 2), ints(0, 4, 3), f64(3, 2)]),
    ("scatter_add_two_axes", lambda x, i, u: bind(ix.scatter_add_p, x, i, u, axes=(2, 0), mode="drop"),
     [f64(3, 2, 4), ints(-1, 4, 5, 2), f64(5, 2)]),
    ("cond", lambda p, x: lax.cond(p > 0, tnp.sin, lambda x: x * 2.0, x), [f64(), f64(3)]),
    ("cond_unbatched_operand", lambda p, x, c: lax.cond(p > 0, lambda x, c: x + c, lambda x, c: c * 2.0, x, c),
     [f64(), f64(3), f64(3)]),
    ("switch", lambda i, x: lax.switch(i, [tnp.sin, tnp.cos, lambda x: -x], x), [ints(-1, 3), f64(2, 3)]),
    ("while_batched_predicate",
     lambda x: lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * 2.0 + 1.0, c[1] + 1), (x, 0))[1], [pos()]),
    ("while_fori", lambda n, x: lax.fori_loop(0, n, lambda i, c: c * 0.5 + i, x), [ints(0, 4), f64(2)]),
    ("scan_ys", lambda c, xs: lax.scan(lambda c, x: (c * 0.9 + x, c * x), c, xs)[1], [f64(2), f64(4, 2)]),
    ("scan_carry_reverse", lambda w, xs: lax.scan(lambda c, x: (c + x * w, None), tnp.zeros(3), xs, reverse=True)[0],
     [f64(3), f64(5, 3)]),
]


def draw(example, axis):
    """B fresh examples like `example`, stacked along `axis`."""
    if example.dtype == bool:
        copies = [bools(*example.shape) for _ in range(B)]
    elif example.dtype.kind == "i":
        lo, hi = int(example.min()), int(example.max())
        copies = [rng.integers(lo, hi + 1, size=example.shape).astype(example.dtype) for _ in range(B)]
    elif np.all(example > 0):
        copies = [pos(*example.shape).astype(example.dtype) for _ in range(B)]
    else:
        copies = [rng.normal(size=example.shape).astype(example.dtype) for _ in range(B)]
    return np.stack(copies, axis=axis)


def axes_variants(f, examples):
    """(in_axes, out_axes) pairs: all leading, all trailing, the first argument unbatched, a middle axis."""
    n, out_ndim = len(examples), np.ndim(tj.jit(f)(*examples))
    out = [((0,) * n, 0), (tuple(-1 for _ in examples), -1)]
    if n > 1:
        out.append(((None,) + tuple(min(1, e.ndim) for e in examples[1:]), 0))
    out.append((tuple(min(1, e.ndim) for e in examples), min(1, out_ndim)))
    return out


def loop_reference(f, args, in_axes, out_axes):
    """One call of the unbatched program per example, stacked with NumPy."""
    f = tj.jit(f)
    outs = [np.asarray(f(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]))
            for i in range(B)]
    return np.stack(outs, axis=out_axes if out_axes >= 0 else outs[0].ndim + 1 + out_axes)


@pytest.mark.parametrize("name,f,examples", CASES, ids=[c[0] for c in CASES])
def test_batching_rule_matches_loop(name, f, examples):
    for in_axes, out_axes in axes_variants(f, examples):
        args = [e if ax is None else draw(e, ax) for e, ax in zip(examples, in_axes)]
        expected = loop_reference(f, args, in_axes, out_axes)
        got = vmap(f, in_axes=in_axes, out_axes=out_axes)(*args)
        assert got.dtype == expected.dtype and got.shape == expected.shape, (in_axes, out_axes)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-12, err_msg=f"{in_axes} -> {out_axes}")
        check_ir(tj.make_ir(vmap(f, in_axes=in_axes, out_axes=out_axes))(*args))


def batched_ir(f, examples, in_dims, size):
    closed = tj.make_ir(f)(*examples)
    out, _ = vmap_ir(closed, in_dims, size)
    check_ir(out)
    return out


def test_every_primitive_has_a_batching_rule_and_a_case():
    assert [name for name, p in ALL.items() if p.batch is None] == []
    covered = {e.prim.name for _, f, ex in CASES for e in tj.make_ir(f)(*ex).eqns}
    assert set(ALL) - covered == set()


@pytest.mark.parametrize("name,f,examples", CASES, ids=[c[0] for c in CASES])
def test_equation_count_does_not_depend_on_batch_size(name, f, examples):
    dims = [0] * len(examples)
    counts = {len(batched_ir(f, examples, dims, size).eqns) for size in (1, 7, 1000)}
    assert len(counts) == 1


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
