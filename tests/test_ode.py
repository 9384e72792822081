"""tracejit.experimental.ode.odeint against jax.experimental.ode.odeint: solutions, pytree states, closures
over traced parameters, derivatives by the adjoint method, jit and vmap; and pmap, JAX's data-parallel map,
on the one CPU device."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental.ode import odeint as jax_odeint

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.experimental.ode import odeint

jax.config.update("jax_enable_x64", True)


def damped(y, t, a):
    """Either library's damped oscillator with a forcing term: y'' = -a y' - y + sin t."""
    np_ = jnp if isinstance(y, jax.Array) else tnp
    return np_.stack([y[1], -a * y[1] - y[0] + np_.sin(t)])


TS = np.linspace(0.0, 4.0, 9)
Y0 = np.array([1.0, -0.5])


def test_solution_and_adjoint_gradients_match_jax():
    ours = odeint(damped, Y0, TS, 0.3)
    theirs = jax_odeint(damped, jnp.asarray(Y0), jnp.asarray(TS), 0.3)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)

    def loss(odeint_, np_):
        return lambda y0, ts, a: np_.sum(odeint_(damped, y0, ts, a)[:, 0] ** 2)

    ours = tj.jit(tj.grad(loss(odeint, tnp), argnums=(0, 1, 2)))(Y0, TS, 0.3)
    theirs = jax.grad(loss(jax_odeint, jnp), argnums=(0, 1, 2))(jnp.asarray(Y0), jnp.asarray(TS), 0.3)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)
    # the adjoint's gradient is the solution's: against central differences of the forward solve
    step = 1e-6
    fd = (loss(odeint, tnp)(Y0, TS, 0.3 + step) - loss(odeint, tnp)(Y0, TS, 0.3 - step)) / (2 * step)
    np.testing.assert_allclose(ours[2], fd, rtol=1e-6)


def test_pytree_state_float32_and_closure_over_traced_parameters():
    """A neural-ODE shape: the dynamics close over parameters that grad traces; the state is a dict."""
    w = np.array([[-0.5, 1.0], [-1.0, -0.2]], np.float32)
    state = {"x": np.array([1.0, 0.0], np.float32), "s": np.float32(0.0)}
    ts = np.linspace(0, 2, 5).astype(np.float32)

    def loss(odeint_, np_, w):
        def dynamics(y, t):
            v = np_.tanh(w @ y["x"])
            return {"x": v, "s": np_.sum(v * v)}
        out = odeint_(dynamics, state, ts, rtol=1e-5, atol=1e-6)
        return out["s"][-1] + np_.sum(out["x"][-1])

    out = odeint(lambda y, t: {"x": tnp.tanh(w @ y["x"]), "s": tnp.sum(tnp.tanh(w @ y["x"]) ** 2)}, state, ts)
    assert out["x"].shape == (5, 2) and out["x"].dtype == np.float32 and out["s"].shape == (5,)
    ours = tj.jit(tj.value_and_grad(lambda w: loss(odeint, tnp, w)))(w)
    theirs = jax.value_and_grad(lambda w: loss(jax_odeint, jnp, w))(jnp.asarray(w))
    assert ours[1].dtype == np.float32
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-4, atol=1e-5)


def test_vmap_over_initial_states_and_limits():
    starts = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]])
    ours = tj.vmap(lambda y0: odeint(damped, y0, TS, 0.1))(starts)
    theirs = jax.vmap(lambda y0: jax_odeint(damped, y0, jnp.asarray(TS), 0.1))(jnp.asarray(starts))
    np.testing.assert_allclose(ours, theirs, atol=1e-12)
    # hmax and mxstep as JAX: a step limit that stops short leaves the same (inaccurate) values
    kwargs = {"mxstep": 3, "hmax": 0.2}
    np.testing.assert_allclose(odeint(damped, Y0, TS, 0.3, **kwargs),
                               jax_odeint(damped, jnp.asarray(Y0), jnp.asarray(TS), 0.3, **kwargs), atol=1e-12)


def test_bad_input():
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(damped, Y0, np.arange(3), 0.3)
    with pytest.raises(TypeError, match="odeint \\*args must be arrays or scalars"):
        odeint(damped, Y0, TS, "fast")


def test_pmap_is_a_compiled_named_vmap_on_one_device():
    """JAX's spmd examples shape batches as (jax.device_count(), ...): here (1, ...)."""
    def step(w, x):
        g = tj.grad(lambda w: tnp.sum((x @ w) ** 2))(w)
        return lax.pmean(g, "batch"), lax.psum(x.shape[0], "batch")

    w, x = np.ones((1, 3)), np.arange(6.0).reshape(1, 2, 3)
    ours = tj.pmap(step, axis_name="batch", in_axes=(None, 0))(w[0], x)
    theirs = jax.pmap(lambda w, x: (lax_pmean(jax.grad(lambda w: jnp.sum((x @ w) ** 2))(w)),
                                    jax.lax.psum(x.shape[0], "batch")), axis_name="batch", in_axes=(None, 0))(w[0], x)
    np.testing.assert_allclose(ours[0], theirs[0])
    assert ours[0].shape == (1, 3) and int(ours[1][0]) == 2
    scaled = tj.pmap(lambda x, n: x * n, static_broadcasted_argnums=1)
    np.testing.assert_array_equal(scaled(np.ones((1, 2)), 3), [[3.0, 3.0]])
    assert tj.pmap(lambda x: x, in_axes=1, out_axes=1)(np.ones((3, 1))).shape == (3, 1)
    with pytest.raises(ValueError, match="size 2, which needs 2 devices; tracejit has 1"):
        tj.pmap(lambda x: x)(np.ones((2, 3)))
    with pytest.raises(ValueError, match="argument 'x' of rank 0"):
        tj.pmap(lambda x: x)(np.float32(1.0))


def lax_pmean(x):
    return jax.lax.pmean(x, "batch")
