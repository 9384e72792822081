"""custom_jvp and custom_vjp with JAX semantics, and stop_gradient."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.core.ir import check_ir
from tracejit.test_util import check_grads


@tj.custom_jvp
def log1pexp(x):
    return tnp.log(1.0 + tnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + tnp.exp(x)))


def test_custom_jvp_replaces_the_derivative():
    # the traced derivative of log(1 + exp(x)) is nan at x = 1000; the rule is exact
    assert tj.grad(log1pexp)(1000.0) == 1.0
    assert np.isclose(tj.grad(log1pexp)(0.0), 0.5)
    assert tj.jit(tj.grad(log1pexp))(1000.0) == 1.0
    _out, t = tj.jvp(log1pexp, (np.array([0.0, 1000.0]),), (np.array([2.0, 3.0]),))
    np.testing.assert_allclose(t, [1.0, 3.0])
    np.testing.assert_allclose(log1pexp(np.array([0.5])), np.log1p(np.exp(0.5)))
    check_grads(log1pexp, (np.array([-1.0, 0.3, 2.0]),), order=2)


def test_custom_jvp_prints_and_checks():
    closed = tj.make_ir(log1pexp)(1.0)
    text = str(closed)
    assert "custom_jvp_call[" in text and "jvp=log1pexp_jvp" in text and "call={ lambda" in text
    check_ir(closed)
    g = tj.make_ir(tj.grad(log1pexp))(1.0)
    check_ir(g)
    assert tj.eval_ir(g, 1000.0)[0] == 1.0


def test_custom_jvp_rule_used_even_when_wrong():
    @tj.custom_jvp
    def f(x):
        return tnp.sin(x)

    f.defjvp(lambda primals, tangents: (f(primals[0]), 10.0 * tangents[0]))
    assert tj.grad(f)(0.3) == 10.0
    assert tj.grad(tj.grad(f))(0.3) == 0.0
    np.testing.assert_allclose(f(0.3), np.sin(0.3))


def test_custom_jvp_higher_order_through_the_rule():
    @tj.custom_jvp
    def f(x):
        return tnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), tnp.cos(x) * t

    x = 0.7
    assert np.isclose(tj.grad(f)(x), np.cos(x))
    assert np.isclose(tj.grad(tj.grad(f))(x), -np.sin(x))
    assert np.isclose(tj.jit(tj.grad(tj.grad(tj.grad(f))))(x), -np.cos(x))
    _, hv = tj.jvp(tj.grad(f), (x,), (2.0,))
    assert np.isclose(hv, -2 * np.sin(x))


def test_custom_jvp_nondiff_argnums_and_pytrees():
    from functools import partial

    @partial(tj.custom_jvp, nondiff_argnums=(0,))
    def apply(fn, p):
        return fn(p["a"]) * p["b"]

    @apply.defjvp
    def apply_jvp(fn, primals, tangents):
        (p,), (t,) = primals, tangents
        return apply(fn, p), 2.0 * (t["a"] + t["b"])

    p = {"a": 1.5, "b": 2.0}
    g = tj.grad(lambda p: apply(tnp.exp, p))(p)
    assert g == {"a": 2.0, "b": 2.0}
    assert np.isclose(apply(tnp.exp, p), 2 * np.exp(1.5))
    g2 = tj.jit(tj.grad(lambda p: apply(tnp.exp, p)))(p)
    assert float(g2["a"]) == 2.0


def test_custom_jvp_keyword_arguments_and_closures_under_jit():
    scale = np.array([1.0, 2.0])

    @tj.custom_jvp
    def f(x, y):
        return x * y * scale

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return f(x, y), (tx * y + x * ty) * scale

    x, y = np.array([1.0, 3.0]), np.array([2.0, 5.0])
    np.testing.assert_allclose(f(x, y=y), x * y * scale)
    np.testing.assert_allclose(tj.grad(lambda x: tnp.sum(f(x, y=y)))(x), y * scale)

    @tj.jit
    def g(x, c):
        @tj.custom_jvp
        def h(x):
            return x * c  # c is a tracer of the jit trace: it becomes an operand of the call

        h.defjvp(lambda primals, tangents: (h(primals[0]), tangents[0] * c))
        return tj.grad(lambda x: tnp.sum(h(x)))(x)

    np.testing.assert_allclose(g(x, 3.0), [3.0, 3.0])


def test_custom_jvp_closed_over_perturbation_is_an_error():
    def outer(c):
        @tj.custom_jvp
        def h(x):
            return x * c

        h.defjvp(lambda primals, tangents: (h(primals[0]), tangents[0] * c))
        return h(2.0)

    with pytest.raises(TypeError, match="closes over"):
        tj.grad(outer)(3.0)


# --------------------------------------------------------------------------------------------- custom_vjp


@tj.custom_vjp
def clip_gradient(x, lo, hi):
    return x


def _clip_fwd(x, lo, hi):
    return x, (lo, hi)


def _clip_bwd(res, g):
    lo, hi = res
    return (tnp.clip(g, lo, hi), None, None)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def test_custom_vjp_clip_gradient():
    f = lambda x: tnp.sum(clip_gradient(x, -0.5, 0.5) * np.array([2.0, 0.1, -3.0]))
    x = np.ones(3)
    np.testing.assert_allclose(tj.grad(f)(x), [0.5, 0.1, -0.5])
    np.testing.assert_allclose(tj.jit(tj.grad(f))(x), [0.5, 0.1, -0.5])
    np.testing.assert_allclose(clip_gradient(x, -0.5, 0.5), x)
    lo_grad = tj.grad(lambda lo: tnp.sum(clip_gradient(x, lo, 0.5)))(-0.5)
    assert lo_grad == 0.0


def test_custom_vjp_residuals_and_second_order():
    @tj.custom_vjp
    def f(x):
        return tnp.sin(x)

    def f_fwd(x):
        return tnp.sin(x), tnp.cos(x)

    def f_bwd(cos_x, g):
        return (cos_x * g,)

    f.defvjp(f_fwd, f_bwd)
    x = 0.4
    assert np.isclose(tj.grad(f)(x), np.cos(x))
    assert np.isclose(tj.grad(tj.grad(f))(x), -np.sin(x))  # the bwd rule is differentiated in turn
    text = str(tj.make_ir(f)(x))
    assert "custom_vjp_call[" in text and "bwd=f_bwd" in text and "fwd=f_fwd" in text
    grad_ir = tj.make_ir(tj.grad(f))(x)
    check_ir(grad_ir)
    assert "custom_lin" not in str(grad_ir)  # transposed away
    check_grads(f, (np.array([0.1, 0.9]),), order=2, modes=("rev",))


def test_custom_vjp_nondiff_argnums_pytrees_and_aux():
    from functools import partial

    @partial(tj.custom_vjp, nondiff_argnums=(1,))
    def scaled(p, k):
        return {"out": p[0] * p[1] * k}

    def fwd(p, k):
        return scaled(p, k), p

    def bwd(k, p, g):
        return ((g["out"] * p[1] * k * 100, g["out"] * p[0] * k),)

    scaled.defvjp(fwd, bwd)
    p = (np.array(2.0), np.array(3.0))
    g = tj.grad(lambda p: scaled(p, 2.0)["out"])(p)
    assert float(g[0]) == 600.0 and float(g[1]) == 4.0
    (gp,) = tj.vjp(lambda p: scaled(p, 2.0), p)[1]({"out": np.array(1.0)})
    assert float(gp[0]) == 600.0


def test_custom_vjp_forward_mode_is_a_clear_error():
    with pytest.raises(TypeError, match="forward-mode.*custom_vjp"):
        tj.jvp(lambda x: clip_gradient(x, -1.0, 1.0), (1.0,), (1.0,))


def test_custom_vjp_bwd_must_return_one_cotangent_per_argument():
    @tj.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g,))
    with pytest.raises(TypeError, match=r"one cotangent per differentiable argument \(2\).*length 1"):
        tj.grad(f)(1.0, 2.0)


def test_missing_rules():
    @tj.custom_jvp
    def f(x):
        return x

    with pytest.raises(AttributeError, match="defjvp"):
        f(1.0)


def test_stop_gradient_in_lax_and_nn():
    assert tj.lax.stop_gradient is tj.stop_gradient
    g = tj.grad(lambda x: tnp.sum(tj.nn.softmax(x) * np.arange(3.0)))(np.zeros(3))
    np.testing.assert_allclose(g, np.array([-1.0, 0.0, 1.0]) / 3, atol=1e-12)


def test_vmap_of_custom_rules_and_of_their_gradients():
    @tj.custom_jvp
    def f(x, y):
        return tnp.sin(x) * y

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return f(x, y), tnp.cos(x) * tx * y + tnp.sin(x) * ty

    @tj.custom_vjp
    def g(x):
        return tnp.exp(x)

    g.defvjp(lambda x: (tnp.exp(x), tnp.exp(x)), lambda r, ct: (2 * r * ct,))  # deliberately not the true vjp
    xs = np.linspace(0, 1, 5)
    np.testing.assert_allclose(tj.vmap(f, in_axes=(0, None))(xs, 2.0), np.sin(xs) * 2)
    np.testing.assert_allclose(tj.vmap(tj.grad(f), in_axes=(0, None))(xs, 2.0), np.cos(xs) * 2)
    np.testing.assert_allclose(tj.vmap(tj.grad(lambda x: g(x).sum()))(xs[:, None]).ravel(), 2 * np.exp(xs))
    np.testing.assert_allclose(tj.jacfwd(lambda x: f(x, 3.0))(xs), np.diag(3 * np.cos(xs)))
    np.testing.assert_allclose(tj.jacrev(g)(xs), np.diag(2 * np.exp(xs)))
    np.testing.assert_allclose(tj.jit(tj.vmap(tj.grad(lambda x, y: f(x, y) + g(x))))(xs, xs),
                               np.cos(xs) * xs + 2 * np.exp(xs))


def test_rules_may_close_over_tracers_of_the_enclosing_function():
    """As in JAX, a custom_jvp function (and a custom_vjp's fwd) may close over values the enclosing function
    traces; the rules run after that trace has ended, with those values standing in for its tracers."""
    table = np.arange(3.0)

    def with_jvp(x, w):
        @tj.custom_jvp
        def f(y):
            return y * w + table
        f.defjvp(lambda primals, tangents: (f(primals[0]), tangents[0] * 7.0 * w))
        return tnp.sum(f(x))

    def with_vjp(x, w):
        @tj.custom_vjp
        def g(y):
            return tnp.sin(y) * w
        g.defvjp(lambda y: (g(y), tnp.cos(y) * w), lambda res, ct: (ct * res * 3.0,))
        return tnp.sum(g(x))

    x, w = np.array([0.5, 1.0, 2.0]), np.array([2.0, 3.0, 4.0])
    for grad in (tj.grad(with_jvp), tj.jit(tj.grad(with_jvp))):
        np.testing.assert_allclose(grad(x, w), 7.0 * w)            # the rule's derivative, not the body's
    for grad in (tj.grad(with_vjp), tj.jit(tj.grad(with_vjp))):
        np.testing.assert_allclose(grad(x, w), np.cos(x) * w * 3.0)
    np.testing.assert_allclose(tj.vmap(tj.grad(with_jvp))(np.stack([x, x]), np.stack([w, 2 * w])),
                               np.stack([7.0 * w, 14.0 * w]))
    np.testing.assert_allclose(tj.jit(with_jvp)(x, w), np.sum(x * w + table))
    with pytest.raises(TypeError, match="closes over"):     # JAX refuses this too
        tj.grad(with_jvp, argnums=1)(x, w)
