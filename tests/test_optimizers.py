"""tracejit.example_libraries.optimizers against jax.example_libraries.optimizers on the same gradients."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.example_libraries import optimizers

jo = pytest.importorskip("jax.example_libraries.optimizers")


def schedules(module):
    return [0.1, module.exponential_decay(0.1, 3, 0.5), module.inverse_time_decay(0.1, 2, 0.5, staircase=True),
            module.inverse_time_decay(0.1, 2, 0.5), module.polynomial_decay(0.1, 3, 0.01, 2.0),
            module.piecewise_constant([1, 3], [0.1, 0.05, 0.01])]


OPTIMIZERS = [("sgd", ()), ("momentum", (0.9,)), ("nesterov", (0.8,)), ("adagrad", ()), ("rmsprop", ()),
              ("rmsprop_momentum", ()), ("adam", ()), ("adamax", ()), ("sm3", ())]


def test_schedules_match_jax():
    for ours, theirs in zip(schedules(optimizers)[1:], schedules(jo)[1:]):
        for i in range(7):
            np.testing.assert_allclose(ours(i), theirs(i), rtol=1e-6)
            np.testing.assert_allclose(tj.jit(ours)(i), theirs(i), rtol=1e-6)


@pytest.mark.parametrize("name, args", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_steps_match_jax(name, args):
    """Five steps on a pytree of float32 parameters (a scalar among them), update jitted, with a constant step size
    and one schedule."""
    rng = np.random.default_rng(0)
    params = {"w": rng.normal(size=(3, 4)).astype(np.float32),
              "b": [rng.normal(size=4).astype(np.float32), np.float32(0.5)]}
    grads = [tj.tree_util.tree_map(lambda x: rng.normal(size=np.shape(x)).astype(np.float32), params)
             for _ in range(5)]
    k = 1 + OPTIMIZERS.index((name, args)) % 5
    for ours_schedule, theirs_schedule in [(0.1, 0.1), (schedules(optimizers)[k], schedules(jo)[k])]:
        init, update, get_params = getattr(optimizers, name)(ours_schedule, *args)
        j_init, j_update, j_get_params = getattr(jo, name)(theirs_schedule, *args)
        state, j_state, update = init(params), j_init(params), tj.jit(update)
        for i, g in enumerate(grads):
            state, j_state = update(i, g, state), j_update(i, g, j_state)
        got, want = tj.tree_util.tree_leaves(get_params(state)), tj.tree_util.tree_leaves(j_get_params(j_state))
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=2e-6)    # schedules: float64 here, float32 in JAX
        assert get_params(state)["b"][1].shape == ()


def test_utilities():
    rng = np.random.default_rng(1)
    tree = {"a": rng.normal(size=(2, 3)), "b": [rng.normal(size=4)]}
    norm = np.sqrt(sum(np.sum(x ** 2) for x in tj.tree_util.tree_leaves(tree)))
    np.testing.assert_allclose(optimizers.l2_norm(tree), norm)
    clipped = optimizers.clip_grads(tree, 1.0)
    np.testing.assert_allclose(optimizers.l2_norm(clipped), 1.0)
    np.testing.assert_allclose(optimizers.clip_grads(tree, 100.0)["a"], tree["a"])
    state = optimizers.adam(0.1)[0](tree)
    marked = optimizers.unpack_optimizer_state(state)
    assert isinstance(marked["a"], optimizers.JoinPoint)
    assert optimizers.pack_optimizer_state(marked) == state
    with pytest.raises(TypeError, match="gradient tree"):
        optimizers.sgd(0.1)[1](0, {"a": tree["a"]}, state)
    with pytest.raises(TypeError, match="number or a schedule"):
        optimizers.sgd([0.1, 0.2])


def test_trains_a_least_squares_model_under_jit():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(64, 3)).astype(np.float32)
    y = x @ np.array([1.0, -2.0, 0.5], np.float32)
    init, update, get_params = optimizers.adam(0.1)
    loss = lambda w: tnp.mean((x @ w - y) ** 2)

    @tj.jit
    def step(i, state):
        return update(i, tj.grad(loss)(get_params(state)), state)

    state = init(np.zeros(3, np.float32))
    for i in range(200):
        state = step(i, state)
    np.testing.assert_allclose(get_params(state), [1.0, -2.0, 0.5], atol=1e-3)
