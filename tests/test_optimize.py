"""tracejit.scipy.optimize.minimize (BFGS) against jax.scipy.optimize.minimize: the same iterates, counts and
status (JAX's line search and zoom steps), converged or not, with args, float32, eagerly, under jit and vmap."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.scipy import optimize

jax_optimize = pytest.importorskip("jax.scipy.optimize", reason="compared with JAX's (pip install 'tracejit[test]')")

A = np.array([[3.0, 0.5, 0.1], [0.5, 2.0, 0.3], [0.1, 0.3, 1.0]])


def rosenbrock(N):
    return lambda x: N.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quadratic(N):
    return lambda x, b: 0.5 * x @ (A @ x) - b @ x


def himmelblau(N):
    return lambda x: (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


# name: (objective, x0, args); himmelblau's line search reaches maxiter (status 3), as JAX's
PROBLEMS = {"rosenbrock": (rosenbrock, np.array([-1.2, 1.0, 0.5, 2.0]), ()),
            "quadratic": (quadratic, np.zeros(3), (np.array([1.0, -2.0, 0.5]),)),
            "himmelblau": (himmelblau, np.array([0.3, -0.2]), ()),
            "rosenbrock f32": (rosenbrock, np.array([-1.2, 1.0], np.float32), ())}


@pytest.mark.parametrize("name", PROBLEMS)
def test_bfgs_follows_jax(jax64, name):
    objective, x0, args = PROBLEMS[name]
    want = jax64.jit(lambda x: jax_optimize.minimize(objective(jax64.numpy), x, args, method="BFGS"))(x0)
    tol = 1e-3 if x0.dtype == np.float32 else 1e-9     # (float32: rounded in another order than XLA's)
    for got in (optimize.minimize(objective(tnp), x0, args, method="BFGS"),
                tj.jit(lambda x: optimize.minimize(objective(tnp), x, args, method="BFGS"))(x0)):
        for field in ("nit", "nfev", "njev", "status", "success"):
            assert getattr(got, field) == getattr(want, field), field
        for field in ("x", "fun", "jac", "hess_inv"):
            value = getattr(got, field)
            assert value.dtype == getattr(want, field).dtype and value.shape == getattr(want, field).shape
            np.testing.assert_allclose(value, getattr(want, field), rtol=tol, atol=tol, err_msg=field)


def test_bfgs_under_vmap_and_its_errors():
    """Each start point of a batch converges on its own (the loop runs while any does not)."""
    starts = np.array([[2.0, 2.0], [1.5, 1.5], [0.0, 0.0], [-1.2, 1.0]])     # (the last two's line searches fail,
                                                                              # as JAX's: status 3)
    batched = tj.vmap(lambda x: optimize.minimize(rosenbrock(tnp), x, method="BFGS"))(starts)
    for k, x0 in enumerate(starts):
        one = optimize.minimize(rosenbrock(tnp), x0, method="BFGS")
        np.testing.assert_allclose(batched.x[k], one.x, rtol=1e-12)
        assert batched.nit[k] == one.nit and batched.status[k] == one.status
    assert batched.success.tolist() == [True, True, False, False] and batched.status.tolist() == [0, 0, 3, 3]
    np.testing.assert_allclose(batched.x[:2], np.ones((2, 2)), atol=1e-5)
    with pytest.raises(ValueError, match="Method Nelder-Mead not recognized"):
        optimize.minimize(rosenbrock(tnp), starts[0], method="Nelder-Mead")
    with pytest.raises(TypeError, match="args argument to jax.scipy.optimize.minimize must be a tuple"):
        optimize.minimize(quadratic(tnp), np.zeros(3), np.ones(3), method="BFGS")
