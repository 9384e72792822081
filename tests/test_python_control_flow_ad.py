"""Python control flow on traced values under grad, jvp, vjp and the Jacobians called outside jit, against JAX:
there the values are known (JAX's JVP tracers carry them), so `if x < 3:` and `while x < 10:` work, as in
JAX's documentation and in autograd-style code; under jit and vmap they are not, and the error says so."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="the comparison needs jax (pip install 'tracejit[test]')")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp

import tracejit as tj
import tracejit.numpy as tnp


def piecewise(N):
    def f(x):
        if x < 3:
            return 3.0 * x ** 2
        return -4.0 * x
    return f


def doubling(N):
    def f(x):
        while x < 10:
            x = x * 2.0
        return x
    return f


def branch_on_sum(N):
    def f(x):
        y = N.sin(x) * x
        return N.sum(y ** 2) if N.sum(y) > 0 else N.sum(N.exp(y))
    return f


def int_and_index(N):
    def f(x):
        k = int(N.floor(N.abs(x[0])))     # a Python int from a traced value: the derivative sees a constant
        return N.sum(x[k:] ** 2) * x[k] + N.arange(4.0)[x[1].astype(int)] * x[2]
    return f


def item_in_loop(N):
    def f(x):
        total = 0.0
        for _ in range(3):
            if (x * x).sum().item() > 1.0:
                x = x * 0.5
            total = total + N.tanh(x).sum()
        return total
    return f


CASES = {
    "if": (piecewise, [2.0, 5.0]),
    "while": (doubling, [2.0, 0.7]),
    "branch on a sum": (branch_on_sum, [np.array([0.5, -1.0, 2.0]), np.array([-2.0, -0.5, 0.1])]),
    "int and index": (int_and_index, [np.array([1.5, 2.2, -0.3, 0.9])]),
    "item in a loop": (item_in_loop, [np.array([1.5, 0.2]), np.array([0.1, 0.2])]),
}


def _scalar(make):
    def scalar(N):
        f = make(N)
        return lambda x: N.sum(f(x))
    return scalar


@pytest.mark.parametrize("case", CASES)
def test_grad_and_jvp_outside_jit_match_jax(case):
    make, points = CASES[case]
    for x in points:
        ours, theirs = _scalar(make)(tnp), _scalar(make)(jnp)
        np.testing.assert_allclose(tj.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-12)
        np.testing.assert_allclose(tj.value_and_grad(ours)(x)[0], jax.value_and_grad(theirs)(x)[0], rtol=1e-12)
        t = np.ones_like(np.asarray(x))
        for a, b in zip(tj.jvp(make(tnp), (x,), (t,)), jax.jvp(make(jnp), (x,), (t,))):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        out, pullback = tj.vjp(make(tnp), x)
        np.testing.assert_allclose(pullback(np.ones_like(out))[0], jax.vjp(make(jnp), x)[1](np.ones_like(out))[0],
                                   rtol=1e-12)
        np.testing.assert_allclose(tj.linearize(make(tnp), x)[1](t), jax.linearize(make(jnp), x)[1](t), rtol=1e-12)


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "hessian", "grad of grad"])
def test_higher_order_and_jacobians_outside_jit_match_jax(transform):
    def make(N):
        def f(x):
            return x ** 3 * 3.0 if N.sum(x) < 3 else -4.0 * x * x
        return f
    for x in (np.array([0.5, 1.0]), np.array([2.0, 1.5])):
        if transform == "grad of grad":
            ours = tj.grad(tj.grad(lambda v: tnp.sum(make(tnp)(v)) if v > 0 else v))(x[0])
            theirs = jax.grad(jax.grad(lambda v: jnp.sum(make(jnp)(v)) if v > 0 else v))(x[0])
        else:
            scalar = transform == "hessian"
            ours = getattr(tj, transform)((lambda v: tnp.sum(make(tnp)(v))) if scalar else make(tnp))(x)
            theirs = getattr(jax, transform)((lambda v: jnp.sum(make(jnp)(v))) if scalar else make(jnp))(x)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_branch_on_the_result_of_a_jitted_function():
    inner = tj.jit(lambda z: z * z)

    def outer(x):
        y = inner(x)
        return y * 3.0 if y > 1 else y
    f = tj.grad(outer)
    assert f(2.0) == 12.0 and f(0.5) == 1.0     # 6x where x * x > 1, else 2x


@pytest.mark.parametrize("where", ["jit of grad", "grad of jit", "vmap", "checkpoint"])
def test_values_unknown_under_jit_vmap_and_checkpoint_raise_as_in_jax(where):
    f = doubling(tnp)
    wrapped = {"jit of grad": tj.jit(tj.grad(f)), "grad of jit": tj.grad(tj.jit(f)), "vmap": tj.vmap(f),
               "checkpoint": tj.grad(tj.checkpoint(f))}[where]
    with pytest.raises(tj.ConcretizationError, match="Python control flow"):
        wrapped(np.array([2.0]) if where == "vmap" else 2.0)


@pytest.mark.parametrize("convert", [float, complex, np.asarray])
def test_conversions_that_would_drop_the_derivative_are_refused_as_in_jax(convert):
    with pytest.raises(tj.ConcretizationError):
        tj.grad(lambda x: x * convert(x))(2.0)
    with pytest.raises((jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError)):
        jax.grad(lambda x: x * convert(x))(2.0)
