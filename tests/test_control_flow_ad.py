"""Derivatives through cond, switch, while_loop, fori_loop and scan: forward and reverse mode against finite
differences, higher orders, composition with jit and vmap, and the IR checker on every transformed IR."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.core.ir import check_ir, sub_irs
from tracejit.test_util import check_grads


def checked_ir(fun, *args):
    """make_ir of fun, checked with check_ir (which also checks every sub-IR)."""
    closed = tj.make_ir(fun)(*args)
    check_ir(closed)
    return closed


def count_eqns(ir):
    return sum(1 + sum(count_eqns(sub) for sub in sub_irs(e)) for e in ir.eqns)


def rnn_loss(w, h0, xs):
    def step(h, x):
        h = tnp.tanh(tnp.dot(w, h) + x)
        return h, tnp.sum(h ** 2)
    h, ys = lax.scan(step, h0, xs)
    return tnp.sum(h) + tnp.sum(ys)


def rnn_loss_python(w, h0, xs):
    h, total = h0, 0.0
    for x in xs:
        h = tnp.tanh(tnp.dot(w, h) + x)
        total = total + tnp.sum(h ** 2)
    return tnp.sum(h) + total


@pytest.fixture
def rnn_args(rng):
    return 0.5 * rng.standard_normal((3, 3)), rng.standard_normal(3), rng.standard_normal((4, 3))


# ----------------------------------------------------------------------------------------------- cond


def piecewise(x, y):
    return lax.cond(tnp.sum(x) > 0, lambda a, b: tnp.sin(a) * b, lambda a, b: a ** 3 + b, x, y)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_gradients_orders_1_and_2(rng, sign):
    x, y = sign * (np.abs(rng.standard_normal(3)) + 0.1), rng.standard_normal(3)
    check_grads(piecewise, (x, y), order=2)
    expected = np.cos(x) * y if sign > 0 else 3 * x ** 2
    np.testing.assert_allclose(tj.grad(lambda x: tnp.sum(piecewise(x, y)))(x), expected, rtol=1e-12)


def test_switch_with_pytree_operands_and_closure(rng):
    c = rng.standard_normal(2)

    def f(x, i):
        return lax.switch(i, [lambda p: p["a"] * c, lambda p: tnp.exp(p["a"]) * p["b"],
                              lambda p: p["b"] - p["a"] ** 2], {"a": x, "b": x[::-1]})

    x = rng.standard_normal(2)
    for i in range(3):
        check_grads(lambda x, i=i: f(x, i), (x,), order=2)
    for i in (0, 2):
        checked_ir(tj.grad(lambda x, i=i: tnp.sum(f(x, i))), x)


def test_cond_closing_over_a_traced_value(rng):
    def f(x, s):
        return lax.cond(s > 0, lambda: tnp.sin(x) * s, lambda: x * s ** 2)

    x = rng.standard_normal(3)
    for s in (0.7, -0.7):
        check_grads(f, (x, s), order=2)


def test_cond_forward_mode_leaves_untouched_operands_without_tangents(rng):
    y = rng.standard_normal(3)
    closed = checked_ir(lambda x: tj.jvp(lambda x: piecewise(x, y), (x,), (np.ones(3),)), rng.standard_normal(3))
    (cond_eqn,) = [e for e in closed.eqns if e.prim.name == "cond"]
    assert len(cond_eqn.inputs) == 1 + 3  # index, x, y and the tangent of x only


# ----------------------------------------------------------------------------------------------- scan


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_gradients_orders_1_and_2(rnn_args, reverse):
    w, h0, xs = rnn_args

    def loss(w, h0, xs):
        def step(h, x):
            h = tnp.tanh(tnp.dot(w, h) + x)
            return h, tnp.sum(h ** 2)
        h, ys = lax.scan(step, h0, xs, reverse=reverse)
        return tnp.sum(h) + tnp.sum(ys * np.arange(1.0, 5.0))

    check_grads(loss, (w, h0, xs), order=2)


def test_scan_grad_matches_python_loop(rnn_args):
    got = tj.grad(rnn_loss, argnums=(0, 1, 2))(*rnn_args)
    expected = tj.grad(rnn_loss_python, argnums=(0, 1, 2))(*rnn_args)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)


def test_scan_pytrees_of_carries_and_xs(rng):
    def f(a, xs):
        def step(carry, x):
            s, (p, q) = carry
            s = s + x["u"] * p
            return (s, (p * tnp.cos(x["v"]), q + s)), {"y": s * q}
        (s, (p, q)), ys = lax.scan(step, (a[0], (a[1], a[2])), xs)
        return s + p * q + tnp.sum(ys["y"])

    xs = {"u": rng.standard_normal(5), "v": rng.standard_normal(5)}
    check_grads(f, (rng.standard_normal(3), xs), order=2)


def test_scan_without_xs_closing_over_traced_values(rng):
    def f(a, b):
        c = tnp.sin(b)
        carry, ys = lax.scan(lambda h, _: (h * c + a, h ** 2), a, None, length=6)
        return carry + tnp.sum(ys, axis=0)

    check_grads(f, (rng.standard_normal(2), 0.3 * rng.standard_normal(2)), order=2)


def test_scan_with_integer_carry(rng):
    def f(x):
        def step(c, _):
            i, v = c
            return (i + 1, v * tnp.cos(v + i)), v
        (_, v), ys = lax.scan(step, (np.int32(0), x), None, length=4)
        return v + tnp.sum(ys)

    check_grads(f, (rng.standard_normal(3),), order=2)


def test_grad_of_grad_through_scan_and_cond():
    def f(x):
        def step(h, k):
            h = lax.cond(k > 1.5, lambda h: tnp.sin(h) * x, lambda h: h * h * x, h)
            return h, h
        h, ys = lax.scan(step, x, np.arange(4.0))
        return h + tnp.sum(ys)

    d1, d2 = tj.grad(f), tj.grad(tj.grad(f))
    x, eps = 0.6, 1e-5
    np.testing.assert_allclose(d1(x), (f(x + eps) - f(x - eps)) / (2 * eps), rtol=1e-7)
    np.testing.assert_allclose(d2(x), (d1(x + eps) - d1(x - eps)) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(tj.jit(d2)(x), d2(x), rtol=1e-12)
    checked_ir(d2, x)
    checked_ir(tj.jacfwd(d1), x)


def test_jit_of_grad_and_grad_of_jit(rnn_args):
    expected = tj.grad(rnn_loss_python)(*rnn_args)
    np.testing.assert_allclose(tj.jit(tj.grad(rnn_loss))(*rnn_args), expected, rtol=1e-12)
    np.testing.assert_allclose(tj.grad(tj.jit(rnn_loss))(*rnn_args), expected, rtol=1e-12)
    checked_ir(tj.grad(rnn_loss), *rnn_args)


def test_vmap_of_grad_through_scan_matches_a_loop(rnn_args, rng):
    w, h0, _ = rnn_args
    batch = rng.standard_normal((5, 4, 3))
    g = tj.grad(rnn_loss, argnums=(0, 2))
    got = tj.vmap(g, in_axes=(None, None, 0))(w, h0, batch)
    for k in range(5):
        expected = tj.grad(rnn_loss_python, argnums=(0, 2))(w, h0, batch[k])
        np.testing.assert_allclose(got[0][k], expected[0], rtol=1e-12)
        np.testing.assert_allclose(got[1][k], expected[1], rtol=1e-12)
    checked_ir(tj.vmap(g, in_axes=(None, None, 0)), w, h0, batch)


def test_vmap_of_grad_through_cond_with_batched_predicate(rng):
    xs = rng.standard_normal((6, 3))
    y = rng.standard_normal(3)
    g = tj.grad(lambda x: tnp.sum(piecewise(x, y)))
    got = tj.vmap(g)(xs)
    for x, row in zip(xs, got):
        np.testing.assert_allclose(row, g(x), rtol=1e-12)


def test_grad_of_scan_has_as_many_equations_for_any_length(rnn_args, rng):
    w, h0, _ = rnn_args
    sizes = {count_eqns(checked_ir(tj.grad(rnn_loss), w, h0, rng.standard_normal((n, 3))).ir) for n in (2, 50)}
    assert len(sizes) == 1


def test_loop_invariant_residuals_are_computed_once_outside_the_loop(rng):
    def f(log_w, xs):
        h, _ = lax.scan(lambda h, x: (tnp.tanh(tnp.exp(log_w) * h + x), None), tnp.zeros(3), xs)
        return tnp.sum(h)

    args = (0.3 * rng.standard_normal(3), rng.standard_normal((5, 3)))
    check_grads(f, args, order=2)
    closed = checked_ir(tj.grad(f), *args)
    assert [e.prim.name for e in closed.eqns].count("exp") == 1
    scans = [e for e in closed.eqns if e.prim.name == "scan"]
    assert not any(e.prim.name == "exp" for s in scans for e in s.params["body"].eqns)


# --------------------------------------------------------------------------------------- fori / while


def test_fori_loop_with_static_bounds_in_both_modes(rng):
    def f(x, a):
        return lax.fori_loop(1, 5, lambda i, v: tnp.sin(v) * a + i * v, x)

    check_grads(f, (rng.standard_normal(3), 0.8), order=2)
    checked_ir(tj.grad(lambda x, a: tnp.sum(f(x, a))), rng.standard_normal(3), 0.8)


def newton_sqrt(a):
    """sqrt(a) by Newton's method until converged: a while loop with a data-dependent trip count."""
    def body(c):
        x, _ = c
        return 0.5 * (x + a / x), x
    x, _ = lax.while_loop(lambda c: tnp.max(tnp.abs(c[0] - c[1])) > 1e-12, body, (a, a + 1.0))
    return x


def test_jvp_of_while_loop():
    a = np.array([2.0, 9.0, 0.5])
    out, tangent = tj.jvp(newton_sqrt, (a,), (np.ones(3),))
    np.testing.assert_allclose(out, np.sqrt(a), rtol=1e-12)
    np.testing.assert_allclose(tangent, 0.5 / np.sqrt(a), rtol=1e-10)
    check_grads(lambda x: lax.fori_loop(0, tnp.int32(3), lambda i, v: v * tnp.cos(v), x), (np.array([0.3, 1.1]),),
                order=2, modes=("fwd",))
    checked_ir(lambda a: tj.jvp(newton_sqrt, (a,), (a,)), a)
    _, f_lin = tj.linearize(newton_sqrt, a)
    np.testing.assert_allclose(f_lin(np.ones(3)), 0.5 / np.sqrt(a), rtol=1e-10)


def test_reverse_mode_of_while_loop_is_a_clear_error():
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        tj.grad(lambda a: tnp.sum(newton_sqrt(a)))(np.array([2.0]))
    loop = tj.grad(lambda x, n: lax.fori_loop(0, n, lambda i, v: v * 2.0, x))
    with pytest.raises(ValueError, match="fori_loop with static start/stop"):
        tj.jit(loop)(1.0, np.int32(3))          # n traced by jit
    assert loop(1.0, np.int32(3)) == 8.0        # n not differentiated, so known to grad alone, as in JAX
