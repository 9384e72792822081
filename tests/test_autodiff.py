"""Automatic differentiation: every primitive's jvp and transpose rule against finite differences, the IR of
grad, compositions with jit, the classic cases, and the error messages."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.core.ir import check_ir
from tracejit.test_util import check_grads

rng = np.random.default_rng(0)


def rand(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape)


def positive(*shape):
    return rand(*shape, lo=0.5, hi=2.0)


def away_from_zero(*shape):
    return rand(*shape, lo=0.3, hi=1.5) * rng.choice([-1.0, 1.0], size=shape)


# (name, function, argument makers, order): each case is checked at three random points, both modes.
CASES = [
    ("neg", lax.neg, [lambda: rand(3)], 2),
    ("exp", lax.exp, [lambda: rand(3)], 2),
    ("log", lax.log, [lambda: positive(3)], 2),
    ("log1p", lax.log1p, [lambda: positive(3)], 2),
    ("expm1", lax.expm1, [lambda: rand(3)], 2),
    ("sin", lax.sin, [lambda: rand(2, 3)], 2),
    ("cos", lax.cos, [lambda: rand(3)], 2),
    ("tan", lax.tan, [lambda: rand(3)], 2),
    ("tanh", lax.tanh, [lambda: rand(3)], 2),
    ("logistic", lax.logistic, [lambda: rand(3) * 3], 2),
    ("sqrt", lax.sqrt, [lambda: positive(3)], 2),
    ("rsqrt", lax.rsqrt, [lambda: positive(3)], 2),
    ("abs", lax.abs, [lambda: away_from_zero(3)], 2),
    ("sign", lambda x: lax.sign(x) * x, [lambda: away_from_zero(3)], 2),
    ("floor_ceil_round", lambda x: lax.floor(x) + lax.ceil(x) + lax.round(x) + x,
     [lambda: rand(3) * 4 + 0.1], 2),
    ("integer_pow_3", lambda x: lax.integer_pow(x, 3), [lambda: rand(3)], 2),
    ("integer_pow_neg2", lambda x: lax.integer_pow(x, -2), [lambda: away_from_zero(3)], 2),
    ("square", tnp.square, [lambda: rand(3)], 2),
    ("add", lax.add, [lambda: rand(3), lambda: rand(3)], 2),
    ("sub", lax.sub, [lambda: rand(3), lambda: rand(3)], 2),
    ("mul", lax.mul, [lambda: rand(3), lambda: rand(3)], 2),
    ("div", lax.div, [lambda: rand(3), lambda: away_from_zero(3)], 2),
    ("rem", lax.rem, [lambda: rand(3) * 3, lambda: np.array([0.7, -1.3, 0.9])], 2),
    ("pow", lax.pow, [lambda: positive(3), lambda: rand(3) * 2], 2),
    ("max", lax.max, [lambda: rand(3), lambda: rand(3)], 2),
    ("min", lax.min, [lambda: rand(3), lambda: rand(3)], 2),
    ("select_n", lambda x, y: lax.select_n(x > 0, x * 2, tnp.sin(y)), [lambda: rand(4), lambda: rand(4)], 2),
    ("select_n_3", lambda x: lax.select_n(np.array([0, 2, 1], np.int32), x, tnp.sin(x), x * x),
     [lambda: rand(3)], 2),
    ("where_scalar", lambda x: tnp.where(x > 0, x, 0.5), [lambda: rand(5)], 2),
    ("clamp", lambda lo, x, hi: lax.clamp(lo, x, hi), [lambda: -0.5 + rand(5) * 0.1, lambda: rand(5) * 2,
                                                       lambda: 0.5 + rand(5) * 0.1], 2),
    ("clip", lambda x: tnp.clip(x, -0.5, 0.5), [lambda: rand(6) * 2], 2),
    ("convert_f64_f32_f64", lambda x: lax.convert_element_type(lax.convert_element_type(x, "float32"), "float64")
     * 0 + x * 2, [lambda: rand(3)], 2),
    ("stop_gradient", lambda x: tj.stop_gradient(x) * 0 + tnp.sin(x), [lambda: rand(3)], 2),
    ("broadcast_in_dim", lambda x: tnp.sin(lax.broadcast_in_dim(x, (2, 3, 4), (1,))), [lambda: rand(3)], 2),
    ("broadcast_size1", lambda x: lax.broadcast_in_dim(x, (3, 4), (0, 1)) ** 2, [lambda: rand(1, 4)], 2),
    ("reshape", lambda x: tnp.sin(tnp.reshape(x, (3, 2))), [lambda: rand(2, 3)], 2),
    ("transpose", lambda x: lax.transpose(x, (2, 0, 1)) ** 2, [lambda: rand(2, 3, 4)], 2),
    ("squeeze_expand", lambda x: lax.expand_dims(lax.squeeze(x, (1,)), (0,)) ** 3, [lambda: rand(3, 1)], 2),
    ("rev", lambda x: lax.rev(x, (0, 1)) * x, [lambda: rand(3, 3)], 2),
    ("slice", lambda x: lax.slice(x, (1, 0), (4, 3), (2, 2)) ** 2, [lambda: rand(5, 4)], 2),
    ("basic_indexing", lambda x: x[1:, ::2] * x[0, 1], [lambda: rand(4, 5)], 2),
    ("pad_interior_negative", lambda x, v: lax.pad(x, v, ((1, -1, 2), (-1, 2, 0))) ** 2,
     [lambda: rand(3, 4), lambda: rand()], 2),
    ("concatenate", lambda x, y: tnp.concatenate([x, tnp.sin(y), x], axis=1), [lambda: rand(2, 3),
                                                                            lambda: rand(2, 2)], 2),
    ("stack", lambda x, y: tnp.stack([x, y * x]), [lambda: rand(3), lambda: rand(3)], 2),
    ("iota", lambda x: x * tnp.arange(3.0), [lambda: rand(3)], 2),
    ("reduce_sum", lambda x: tnp.sum(x ** 2, axis=1), [lambda: rand(3, 4)], 2),
    ("mean_var", lambda x: tnp.var(x, axis=0) + tnp.mean(x), [lambda: rand(4, 3)], 2),
    ("reduce_max", lambda x: tnp.max(x, axis=0), [lambda: rand(4, 3)], 2),
    ("reduce_min", lambda x: lax.reduce_min(x * x, (0, 1)), [lambda: rand(3, 3)], 2),
    ("reduce_prod", lambda x: tnp.prod(x, axis=1), [lambda: rand(2, 4)], 2),
    ("reduce_prod_one_zero", lambda x: tnp.prod(x * np.array([1.0, 0.0, 1.0, 1.0])), [lambda: rand(4)], 1),
    ("reduce_prod_with_zero", tj.jit(lambda x: tnp.prod(x.at[1].set(0.0), axis=0)), [lambda: rand(3, 2)], 1),
    ("argmax", lambda x: x * tnp.argmax(x), [lambda: rand(4)], 2),
    ("cumsum", lambda x: tnp.cumsum(x ** 2, axis=1), [lambda: rand(2, 4)], 2),
    ("cumsum_reverse", lambda x: lax.cumsum(tnp.sin(x), 0, reverse=True), [lambda: rand(5)], 2),
    ("dot", lambda a, b: tnp.dot(a, b), [lambda: rand(3, 4), lambda: rand(4)], 2),
    ("matmul", lambda a, b: tnp.tanh(a @ b), [lambda: rand(3, 4), lambda: rand(4, 2)], 2),
    ("dot_general_batch", lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))) ** 2,
     [lambda: rand(2, 3, 4), lambda: rand(2, 4, 5)], 2),
    ("dot_general_batch_last", lambda a, b: lax.dot_general(a, b, (((0,), (2,)), ((2,), (0,)))),
     [lambda: rand(3, 2, 4), lambda: rand(4, 5, 3)], 2),
    ("einsum", lambda a, b: tnp.einsum("ij,jk->ik", a, b), [lambda: rand(2, 3), lambda: rand(3, 2)], 2),
    ("dynamic_slice", lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)) ** 2, [lambda: rand(4, 5)], 2),
    ("dynamic_slice_clamped", lambda x: lax.dynamic_slice(x, (3,), (3,)) ** 2, [lambda: rand(5)], 2),
    ("dynamic_update_slice", lambda x, u: lax.dynamic_update_slice(x, u * u, (1, 0)) * x,
     [lambda: rand(4, 3), lambda: rand(2, 3)], 2),
    ("gather", lambda x: x[np.array([0, 2, 2, 1])] ** 2, [lambda: rand(3, 2)], 2),
    ("gather_2d", lambda x: x[np.array([0, 2]), np.array([1, 1])] * x[1, 0], [lambda: rand(3, 2)], 2),
    ("take", lambda x: tnp.take(x, np.array([3, 0, 3])) * x[0], [lambda: rand(4)], 2),
    ("at_add", tj.jit(lambda x, u: x.at[np.array([0, 2, 0])].add(u * u)), [lambda: rand(4), lambda: rand(3)], 2),
    ("at_set", tj.jit(lambda x, u: (x * x).at[1:3].set(tnp.sin(u))), [lambda: rand(4), lambda: rand(2)], 2),
    ("logsumexp", lambda x: tj.nn.logsumexp(x, axis=1), [lambda: rand(2, 4)], 2),
    ("softmax", lambda x: tj.nn.softmax(x), [lambda: rand(4)], 2),
    ("pytree", lambda d: {"a": d["x"] * d["y"][0], "b": tnp.sum(d["y"][1] ** 2)},
     [lambda: {"x": rand(2), "y": (rand(), rand(3))}], 2),
]


@pytest.mark.parametrize("name,fun,makers,order", CASES, ids=[c[0] for c in CASES])
def test_rules_against_finite_differences(name, fun, makers, order):
    for _ in range(3):
        check_grads(fun, [m() for m in makers], order=order)


def test_value_used_twice():
    assert tj.grad(lambda x: x ** 2 + x + 1)(3.0) == 7.0
    np.testing.assert_allclose(tj.grad(lambda x: tnp.sum(x * x + x))(np.arange(3.0)), 2 * np.arange(3.0) + 1)


def test_sum_times():
    da, db, dc = tj.grad(lambda a, b, c: (a + b) * c, argnums=(0, 1, 2))(2.0, 3.0, 4.0)
    assert (da, db, dc) == (4.0, 4.0, 5.0)


def test_micrograd_mlp():
    """The micrograd example: a small tanh MLP, gradient checked against hand-written backprop."""
    x = np.array([2.0, 3.0, -1.0])
    params = {"w1": rand(3, 4), "b1": rand(4), "w2": rand(4, 1), "b2": rand(1)}

    def loss(p, x):
        h = tnp.tanh(x @ p["w1"] + p["b1"])
        return tnp.sum((h @ p["w2"] + p["b2"] - 1.0) ** 2)

    g = tj.grad(loss)(params, x)
    h = np.tanh(x @ params["w1"] + params["b1"])
    err = h @ params["w2"] + params["b2"] - 1.0
    d_out = 2 * err
    d_h = (params["w2"] @ d_out) * (1 - h ** 2)
    np.testing.assert_allclose(g["w2"], np.outer(h, d_out))
    np.testing.assert_allclose(g["b2"], d_out)
    np.testing.assert_allclose(g["w1"], np.outer(x, d_h))
    np.testing.assert_allclose(g["b1"], d_h)
    check_grads(loss, (params, x), order=2)


def test_max_ties_split_evenly():
    np.testing.assert_allclose(tj.grad(lambda x: tnp.max(x))(np.array([1.0, 3.0, 3.0])), [0, 0.5, 0.5])
    np.testing.assert_allclose(tj.grad(lambda x: tnp.min(x))(np.array([2.0, 2.0, 2.0, 5.0])), [1 / 3] * 3 + [0])
    assert tj.grad(lambda x: tnp.maximum(x, 1.0))(1.0) == 0.5


def test_power_with_exponent_zero_has_derivative_zero_at_zero():
    """x ** 0 is 1 everywhere: its derivatives at x = 0 were 0 * 0 ** -1 = NaN (also the third derivative of
    x ** 2.0); the select that avoids it applies only where x = y = 0, so second derivatives elsewhere hold."""
    g = tj.grad
    assert g(lambda x: x ** 0)(0.0) == 0.0 and tj.jit(g(lambda x: x ** 0))(0.0) == 0.0
    assert g(lambda x: tnp.power(x, 0.0))(0.0) == 0.0 and g(g(g(lambda x: tnp.power(x, 2.0))))(0.0) == 0.0
    np.testing.assert_array_equal(g(lambda x, y: x ** y, argnums=(0, 1))(0.0, 0.0), (0.0, 0.0))
    np.testing.assert_array_equal(tj.jvp(lambda x: x ** 0, (np.zeros(2),), (np.ones(2),))[1], [0.0, 0.0])
    check_grads(lambda x, y: x ** y, (np.array([0.5, 1.0, 2.0]), np.array([0.0, 2.0, 0.0])), order=2)


def test_prod_with_zeros():
    np.testing.assert_allclose(tj.grad(lambda x: tnp.prod(x))(np.array([2.0, 0.0, 3.0])), [0, 6, 0])
    np.testing.assert_allclose(tj.grad(lambda x: tnp.prod(x))(np.array([0.0, 0.0, 3.0])), [0, 0, 0])


def test_stop_gradient_blocks():
    f = lambda x: x * tj.stop_gradient(x)
    assert tj.grad(f)(3.0) == 3.0
    assert tj.jvp(f, (3.0,), (1.0,))[1] == 3.0
    ir = tj.make_ir(tj.grad(lambda x: tj.stop_gradient(tnp.sin(x))))(1.0)
    assert tj.grad(lambda x: tj.stop_gradient(tnp.sin(x)))(1.0) == 0.0
    assert "cos" not in str(ir)


def test_integer_output_tangents_are_zero():
    _out, t = tj.jvp(lambda x: (x * 2, tnp.argmax(x)), (np.array([1.0, 3.0]),), (np.ones(2),))
    np.testing.assert_allclose(t[0], [2, 2])
    assert t[1] == 0


def test_symbolic_zeros_cost_nothing():
    """Tangents that are zero (constants, integer paths) emit no equations."""
    def f(x, n):
        k = tnp.arange(4) * n + 1
        return x * tnp.sin(np.arange(4.0)) + k.astype(float)

    closed = tj.make_ir(lambda x, n: tj.jvp(lambda x: f(x, n), (x,), (np.ones(4),)))(np.ones(4), 2)
    forward = tj.make_ir(f)(np.ones(4), 2)
    assert len(closed.eqns) <= len(forward.eqns) + 3


def test_grad_ir_checks_and_evaluates():
    def f(x, w):
        return tnp.sum(tnp.tanh(x @ w) ** 2) + tnp.max(x)

    x, w = rand(3, 4), rand(4, 2)
    closed = tj.make_ir(tj.grad(f, argnums=(0, 1)))(x, w)
    check_ir(closed)
    gx, gw = tj.eval_ir(closed, x, w)
    ex, ew = tj.grad(f, argnums=(0, 1))(x, w)
    np.testing.assert_allclose(gx, ex)
    np.testing.assert_allclose(gw, ew)
    text = str(closed)
    assert "dot_general" in text and "transpose" not in text.split("let")[0]


def test_transforms_are_ir_to_ir():
    from tracejit.transforms.ad import jvp_ir, linearize_ir, transpose_ir
    closed = tj.make_ir(lambda x: tnp.sin(x) * x)(rand(3))
    jv = jvp_ir(closed, [True])
    check_ir(jv)
    primal, linear, num_res = linearize_ir(closed, [True])
    check_ir(primal), check_ir(linear)
    assert all(e.prim.linear or e.prim.name == "mul" for e in linear.eqns)  # linear part holds no sin/cos
    bwd = transpose_ir(linear, num_res)
    check_ir(bwd)
    x = rand(3)
    out_res = tj.eval_ir(primal, x)
    (ct,) = tj.eval_ir(bwd, *out_res[1:], np.ones(3))
    np.testing.assert_allclose(ct, np.cos(x) * x + np.sin(x))


def test_reverse_ir_keeps_only_needed_residuals():
    from tracejit.transforms.ad import linearize_ir
    closed = tj.make_ir(lambda x, y: tnp.sum(tnp.exp(x) * 3.0 + tnp.sin(y)))(rand(3), rand(3))
    primal, linear, num_res = linearize_ir(closed, [True, False])
    assert num_res == 1  # exp(x) only: nothing about y
    assert "sin" not in str(linear) and "cos" not in str(primal)


COMPOSE_X = np.array([0.3, -0.8, 1.1])


def _f(x):
    return tnp.sum(tnp.sin(x) * x ** 2)


def _first(x):
    return np.cos(x) * x ** 2 + 2 * x * np.sin(x)


def _second(x):
    return -np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x)


@pytest.mark.parametrize("build,expected", [
    (lambda f: tj.jit(tj.grad(f)), _first),
    (lambda f: tj.grad(tj.jit(f)), _first),
    (lambda f: tj.jit(tj.grad(tj.jit(f))), _first),
    (lambda f: tj.grad(lambda x: tj.jit(tj.grad(f))(x).sum()), _second),
    (lambda f: tj.jit(tj.grad(lambda x: tj.grad(f)(x).sum())), _second),
    (lambda f: tj.grad(lambda x: tj.grad(tj.jit(f))(x).sum()), _second),
    (lambda f: lambda x: tj.jvp(tj.jit(tj.grad(f)), (x,), (np.ones_like(x),))[1], _second),
], ids=["jit_grad", "grad_jit", "jit_grad_jit", "grad_jit_grad", "jit_grad_grad", "grad_grad_jit", "jvp_jit_grad"])
def test_compositions_with_jit(build, expected):
    got = build(_f)(COMPOSE_X)
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, expected(COMPOSE_X))


def test_higher_order_scalar():
    f = tnp.sin
    x = 0.7
    assert np.isclose(tj.grad(tj.grad(tj.grad(f)))(x), -np.cos(x))
    assert np.isclose(tj.grad(tj.grad(tj.grad(tj.grad(f))))(x), np.sin(x))
    assert np.isclose(tj.jit(tj.grad(tj.grad(tj.grad(f))))(x), -np.cos(x))


def test_hvp_forward_over_reverse():
    A = rand(4, 4)
    A = A + A.T

    def f(x):
        return 0.5 * x @ (A @ x) + tnp.sum(tnp.sin(x))

    x, v = rand(4), rand(4)
    _, hv = tj.jvp(tj.grad(f), (x,), (v,))
    np.testing.assert_allclose(hv, A @ v - np.sin(x) * v)
    _, hv_jit = tj.jit(lambda x, v: tj.jvp(tj.grad(f), (x,), (v,)))(x, v)
    np.testing.assert_allclose(hv_jit, hv)
    np.testing.assert_allclose(tj.grad(lambda x: tj.grad(f)(x) @ v)(x), hv)  # reverse over reverse


def test_value_and_grad_has_aux_and_argnums():
    def loss(w, b, x):
        pred = x @ w + b
        return tnp.sum(pred ** 2), {"pred": pred}

    w, b, x = rand(3), rand(), rand(2, 3)
    (value, aux), (gw, gb) = tj.value_and_grad(loss, argnums=(0, 1), has_aux=True)(w, b, x)
    pred = x @ w + b
    np.testing.assert_allclose(value, np.sum(pred ** 2))
    np.testing.assert_allclose(aux["pred"], pred)
    np.testing.assert_allclose(gw, 2 * pred @ x)
    np.testing.assert_allclose(gb, 2 * pred.sum())
    g, _aux2 = tj.grad(loss, has_aux=True)(w, b, x)
    np.testing.assert_allclose(g, gw)
    gx = tj.grad(loss, argnums=-1, has_aux=True)(w, b, x)[0]
    assert gx.shape == (2, 3)
    jitted = tj.jit(tj.value_and_grad(loss, argnums=(0, 1), has_aux=True))(w, b, x)
    np.testing.assert_allclose(jitted[1][0], gw)


def test_grad_under_jit_matches_eager_on_pytrees():
    params = {"w": [rand(2, 2), rand(2)], "s": rand()}

    def f(p, x):
        return tnp.sum(tnp.tanh(p["w"][0] @ x + p["w"][1]) * p["s"])

    x = rand(2)
    eager, jitted = tj.grad(f)(params, x), tj.jit(tj.grad(f))(params, x)
    for a, b in zip(tj.tree_util.tree_leaves(eager), tj.tree_util.tree_leaves(jitted)):
        np.testing.assert_allclose(a, b)
    assert isinstance(eager["w"], list) and isinstance(eager["s"], np.ndarray)


def test_jvp_vjp_linearize_pytrees():
    def f(x, y):
        return {"u": tnp.sin(x) * y[0], "v": (y[1] ** 2,)}

    x, y = rand(3), (rand(), rand(2))
    tx, ty = rand(3), (rand(), rand(2))
    out, t = tj.jvp(f, (x, y), (tx, ty))
    np.testing.assert_allclose(t["u"], np.cos(x) * tx * y[0] + np.sin(x) * ty[0])
    np.testing.assert_allclose(t["v"][0], 2 * y[1] * ty[1])
    out2, f_jvp = tj.linearize(f, x, y)
    t2 = f_jvp(tx, ty)
    np.testing.assert_allclose(t2["u"], t["u"])
    np.testing.assert_allclose(out2["u"], out["u"])
    _out3, f_vjp = tj.vjp(f, x, y)
    ct = {"u": rand(3), "v": (rand(2),)}
    cx, cy = f_vjp(ct)
    np.testing.assert_allclose(cx, np.cos(x) * y[0] * ct["u"])
    np.testing.assert_allclose(cy[0], np.sum(np.sin(x) * ct["u"]))
    np.testing.assert_allclose(cy[1], 2 * y[1] * ct["v"][0])
    _out4, f_vjp4, aux = tj.vjp(lambda x: (x * 2, x + 1), x, has_aux=True)
    np.testing.assert_allclose(aux, x + 1)
    np.testing.assert_allclose(f_vjp4(np.ones(3))[0], 2 * np.ones(3))


def test_integer_arguments_are_held_constant():
    _out, f_vjp = tj.vjp(lambda x, n: x * n, np.ones(2), np.int32(3))
    cx, cn = f_vjp(np.ones(2))
    np.testing.assert_allclose(cx, [3, 3])
    assert cn.dtype == tj.dtypes.float0 and cn.shape == ()     # as JAX's
    assert tj.grad(lambda x, n: x * n)(2.0, 5) == 5.0


def test_float32_stays_float32():
    x = np.ones(3, np.float32)
    g = tj.grad(lambda x: tnp.sum(x * 2.0))(x)
    assert g.dtype == np.float32


def test_nested_perturbations_are_not_confused():
    """d/dx [x * d/dy (x + y)] = 1: the inner derivative must not see the outer x as varying."""
    f = lambda x: x * tj.grad(lambda y: x + y)(x)
    assert tj.grad(f)(2.0) == 1.0
    assert tj.jit(tj.grad(f))(2.0) == 1.0


def test_jacobians_and_hessian():
    A = rand(3, 4)
    f = lambda x: tnp.tanh(A @ x)
    x = rand(4)
    J = (1 - np.tanh(A @ x) ** 2)[:, None] * A
    np.testing.assert_allclose(tj.jacfwd(f)(x), J)
    np.testing.assert_allclose(tj.jacrev(f)(x), J)
    np.testing.assert_allclose(tj.jit(tj.jacrev(f))(x), J)
    g = lambda x: tnp.sum(tnp.sin(x) ** 2)
    H = np.diag(2 * np.cos(2 * x))
    np.testing.assert_allclose(tj.hessian(g)(x), H, atol=1e-12)
    np.testing.assert_allclose(tj.jacfwd(tj.jacrev(g))(x), H, atol=1e-12)
    np.testing.assert_allclose(tj.jacrev(tj.jacrev(g))(x), H, atol=1e-12)
    np.testing.assert_allclose(tj.jit(tj.hessian(g))(x), H, atol=1e-12)
    jx, jy = tj.jacrev(lambda x, y: x * y, argnums=(0, 1))(x, x + 1)
    np.testing.assert_allclose(jx, np.diag(x + 1))
    np.testing.assert_allclose(jy, np.diag(x))
    tree = tj.jacfwd(lambda d: {"a": d["x"] * d["y"][0], "b": tnp.sum(d["y"])})({"x": np.ones(2), "y": rand(3)})
    assert tree["a"]["x"].shape == (2, 2) and tree["a"]["y"].shape == (2, 3) and tree["b"]["y"].shape == (3,)


# ------------------------------------------------------------------------------------------------ errors


def test_error_non_scalar_output():
    with pytest.raises(TypeError, match=r"scalar output.*shape \(3,\).*f64\[3\]"):
        tj.grad(lambda x: x * 2)(np.ones(3))


def test_error_integer_input():
    with pytest.raises(TypeError, match=r"argument 'n' has dtype int32"):
        tj.grad(lambda x, n: x * n, argnums=1)(1.0, np.int32(2))
    with pytest.raises(TypeError, match=r"argument 'p\['k'\]' has dtype int64"):
        tj.grad(lambda p: p["w"] * p["k"])({"w": 1.0, "k": np.int64(2)})


def test_error_has_aux_not_pair():
    with pytest.raises(TypeError, match=r"has_aux=True.*pair.*returned a tuple of length 3"):
        tj.grad(lambda x: (x, 1, 2), has_aux=True)(1.0)
    with pytest.raises(TypeError, match=r"pair.*returned a Tracer"):
        tj.grad(lambda x: x * 2, has_aux=True)(1.0)


def test_error_argnums_out_of_range():
    with pytest.raises(ValueError, match=r"argnums 2 is out of range.*2 positional arguments"):
        tj.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0)
    with pytest.raises(ValueError, match=r"argnums \(0, 3\)"):
        tj.value_and_grad(lambda x, y: x * y, argnums=(0, 3))(1.0, 2.0)


def test_error_integer_output():
    with pytest.raises(TypeError, match=r"real-valued \(float\) output.*i64\[\]"):
        tj.grad(lambda x: tnp.argmax(x))(np.ones(3))


# ------------------------------------------------------------------------------------- cheap gradient


CHEAP_PROGRAMS = [
    ("polynomial", lambda x: tnp.sum(x ** 3 + 2 * x ** 2 + x), lambda: (rand(100),)),
    ("mlp", lambda w1, w2, x: tnp.sum(tnp.tanh(x @ w1) @ w2), lambda: (rand(8, 16), rand(16, 4), rand(32, 8))),
    ("logsumexp", lambda x: tnp.sum(tj.nn.logsumexp(x, axis=1)), lambda: (rand(16, 10),)),
    ("softmax_xent", lambda w, x: -tnp.sum(tj.nn.log_softmax(x @ w)[:, 0]), lambda: (rand(5, 3), rand(8, 5))),
    ("indexing", lambda x: tnp.sum(x[np.array([0, 3, 3])] ** 2) + tnp.sum(x[1:4] * x[:3]), lambda: (rand(6),)),
    ("reductions", lambda x: tnp.max(x) + tnp.sum(tnp.cumsum(x) * x), lambda: (rand(8),)),
    ("structural", lambda x: tnp.sum(tnp.concatenate([x.T, x.T[::-1]], axis=1) ** 2) + tnp.sum(x.reshape(-1)[2:5]),
     lambda: (rand(3, 4),)),
]


@pytest.mark.parametrize("name,f,make_args", CHEAP_PROGRAMS, ids=[p[0] for p in CHEAP_PROGRAMS])
def test_cheap_gradient_principle(name, f, make_args):
    """After dead code elimination the reverse-mode IR has at most 4x the equations of the forward IR."""
    dce = pytest.importorskip("tracejit.passes").dce
    args = make_args()
    argnums = tuple(range(len(args)))
    forward = dce(tj.make_ir(f)(*args))
    reverse = dce(tj.make_ir(tj.value_and_grad(f, argnums=argnums))(*args))
    check_ir(reverse)
    assert len(reverse.eqns) <= 4 * len(forward.eqns), (len(forward.eqns), len(reverse.eqns), str(reverse))


@pytest.mark.parametrize("x", [np.array([0.5, 0.0, 2.0]), np.array([[0.0, 0.0, 3.0], [1.0, 2.0, 3.0]])])
def test_prod_is_exact_at_zeros_to_second_order(x):
    check_grads(lambda x: tnp.prod(x), (x,), order=2)
    check_grads(lambda x: tnp.prod(x, axis=0), (x,), order=2)
    if x.ndim == 1:
        np.testing.assert_allclose(tj.hessian(lambda x: tnp.prod(x))(x), [[0, 2, 0], [2, 0, 0.5], [0, 0.5, 0]])


def test_jacobians_with_aux():
    def f(x):
        return tnp.sin(x) * x[0], {"norm": tnp.sum(x * x)}
    x = np.array([0.3, -1.2, 2.0])
    expected = np.diag(np.cos(x) * x[0]) + np.outer(np.sin(x), [1.0, 0.0, 0.0])
    for jac in (tj.jacfwd, tj.jacrev):
        j, aux = jac(f, has_aux=True)(x)
        np.testing.assert_allclose(j, expected, rtol=1e-12)
        np.testing.assert_allclose(aux["norm"], np.sum(x * x))
    h, aux = tj.hessian(lambda x: (tnp.sum(x ** 3), x.max()), has_aux=True)(x)
    np.testing.assert_allclose(h, np.diag(6 * x), rtol=1e-12)
    assert aux == 2.0
    with pytest.raises(TypeError, match="must return a pair"):
        tj.jacfwd(lambda x: x, has_aux=True)(x)


def test_allow_int_gives_integer_arguments_float0_gradients_as_jax():
    """grad(..., allow_int=True): integer arguments (and integer leaves of a pytree) get zeros of dtype float0,
    eagerly, through jit (float0 has no data: the compiled function returns none) and batched by vmap."""
    jax = pytest.importorskip("jax")

    def f(np_):
        return lambda x, p: x * np_.sum(p["n"]) + np_.sum(p["w"] * x)

    args = (np.float64(1.5), {"n": np.arange(3), "w": np.ones(2)})
    want = jax.grad(f(jax.numpy), argnums=(0, 1), allow_int=True)(*args)
    for grad_f in (tj.grad(f(tnp), argnums=(0, 1), allow_int=True),
                   tj.jit(tj.grad(f(tnp), argnums=(0, 1), allow_int=True))):
        got = grad_f(*args)
        assert got[1]["n"].dtype == want[1]["n"].dtype == tj.dtypes.float0 and got[1]["n"].shape == (3,)
        np.testing.assert_allclose(got[0], want[0])
        np.testing.assert_allclose(got[1]["w"], want[1]["w"])
    batched = tj.vmap(tj.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True))(np.ones(2), np.arange(2))
    assert batched[1].dtype == tj.dtypes.float0 and batched[1].shape == (2,)
    with pytest.raises(TypeError, match="argument 'i' has dtype int64"):
        tj.grad(lambda x, i: x * i, argnums=(0, 1))(1.0, 2)
