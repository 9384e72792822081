"""Derivatives of order 1 to 3 at the points where a formula branches (ties of max/min/logaddexp, 0 of abs and
relu, the bounds of clip and clamp), against JAX's: a rule built on sign, abs, max, min, where or select can
be right in value and first derivative and still wrong above (issue 15: logaddexp's second derivative at a tie
was 0, so Newton's method from w = 0 diverged). test_against_jax.py compares first and second derivatives at
such points; this file goes one order higher, for the functions whose rules are built that way."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="the comparison needs jax (pip install 'tracejit[test]')")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp

import tracejit as tj
import tracejit.numpy as tnp

TRACEJIT, JAX = (tj, tnp, tj.nn, tj.lax), (jax, jnp, jax.nn, jax.lax)


def _with(N, x, *others):
    """[x, others...] as an array whose other entries are constants."""
    return N.stack([x, *(0.0 * x + c for c in others)])


# name: (f(N, nn, lax, x) with N the numpy namespace, the points)
FUNCTIONS = {
    "logaddexp(x, 0.4)": (lambda N, nn, L, x: N.logaddexp(x, 0.4), [0.4, 0.0]),
    "logaddexp(0, x)": (lambda N, nn, L, x: N.logaddexp(0.0, x), [0.0]),
    "logaddexp(x, x)": (lambda N, nn, L, x: N.logaddexp(x, x), [0.0, 1.0]),
    "logaddexp2(x, 1)": (lambda N, nn, L, x: N.logaddexp2(x, 1.0), [1.0, 0.0]),
    "logaddexp2(x, x)": (lambda N, nn, L, x: N.logaddexp2(x, x), [0.0]),
    "softplus": (lambda N, nn, L, x: nn.softplus(x), [0.0, 1.0]),
    "gelu exact (erf)": (lambda N, nn, L, x: nn.gelu(x, approximate=False), [0.0, -1.5, 2.0]),
    "log_sigmoid": (lambda N, nn, L, x: nn.log_sigmoid(x), [0.0, 1.0]),
    "logsumexp, ties": (lambda N, nn, L, x: nn.logsumexp(N.stack([x, 0.0 * x + 0.4, x])), [0.4, 0.0]),
    "norm": (lambda N, nn, L, x: N.linalg.norm(_with(N, x, 1.0)), [0.0, 1.0]),
    "norm at 0": (lambda N, nn, L, x: N.linalg.norm(_with(N, x, 0.0)), [1.0]),
    "norm, ord=1": (lambda N, nn, L, x: N.linalg.norm(_with(N, x, 1.0), 1), [0.0, 1.0]),
    "norm, ord=inf": (lambda N, nn, L, x: N.linalg.norm(_with(N, x, 1.0), np.inf), [1.0, -1.0, 0.0]),
    "norm, ord=-inf": (lambda N, nn, L, x: N.linalg.norm(_with(N, x, 1.0), -np.inf), [1.0, -1.0]),
    "clip": (lambda N, nn, L, x: N.clip(x, -1.0, 1.0), [-1.0, 1.0, 0.0]),
    "clip(x, x, 1)": (lambda N, nn, L, x: N.clip(x, x, 1.0), [1.0, 0.0]),
    "clamp": (lambda N, nn, L, x: L.clamp(-1.0, x, 1.0), [-1.0, 1.0, 0.0]),
    "relu6": (lambda N, nn, L, x: nn.relu6(x), [0.0, 6.0, 3.0]),
    "relu": (lambda N, nn, L, x: nn.relu(x), [0.0]),
    "abs": (lambda N, nn, L, x: N.abs(x), [0.0, -0.0, 1.0]),
    "abs(x) * x": (lambda N, nn, L, x: N.abs(x) * x, [0.0]),
    "sign(x) * x": (lambda N, nn, L, x: N.sign(x) * x, [0.0]),
    "maximum": (lambda N, nn, L, x: N.maximum(x, 0.4), [0.4]),
    "minimum": (lambda N, nn, L, x: N.minimum(x, 0.4), [0.4]),
    "max, ties": (lambda N, nn, L, x: N.max(N.stack([x, 0.0 * x + 0.4, x])), [0.4, 0.0]),
    "min, ties": (lambda N, nn, L, x: N.min(N.stack([x, 0.0 * x + 0.4, x])), [0.4]),
    "ptp, ties": (lambda N, nn, L, x: N.ptp(N.stack([x, 0.0 * x + 0.4, x])), [0.4]),
    "lax.max": (lambda N, nn, L, x: L.max(x, 0.4), [0.4]),
    "where": (lambda N, nn, L, x: N.where(x > 0, x * x, x), [0.0]),
    "hard_tanh": (lambda N, nn, L, x: nn.hard_tanh(x), [-1.0, 1.0]),
    "leaky_relu": (lambda N, nn, L, x: nn.leaky_relu(x), [0.0]),
    "elu": (lambda N, nn, L, x: nn.elu(x), [0.0]),
    "celu": (lambda N, nn, L, x: nn.celu(x), [0.0]),
    "selu": (lambda N, nn, L, x: nn.selu(x), [0.0]),
    "sparse_plus": (lambda N, nn, L, x: nn.sparse_plus(x), [-1.0, 1.0, 0.0]),
    "soft_sign": (lambda N, nn, L, x: nn.soft_sign(x), [0.0]),
    "hard_sigmoid": (lambda N, nn, L, x: nn.hard_sigmoid(x), [-3.0, 3.0]),
    "hard_silu": (lambda N, nn, L, x: nn.hard_silu(x), [-3.0, 3.0]),
    "cumlogsumexp, ties": (lambda N, nn, L, x: L.cumlogsumexp(N.stack([x, 0.0 * x + 0.4, x]))[2], [0.4]),
    "cummax, ties": (lambda N, nn, L, x: L.cummax(N.stack([x, 0.0 * x + 0.4, x]))[2], [0.4]),
    "median, ties": (lambda N, nn, L, x: N.median(N.stack([x, 0.0 * x + 0.4, x])), [0.4]),
    "sort, ties": (lambda N, nn, L, x: N.sort(N.stack([x, 0.0 * x + 0.4, x]))[1], [0.4]),
    "std": (lambda N, nn, L, x: N.std(_with(N, x, 0.4)), [0.4]),
}


def _derivatives(side, f, point, orders=3):
    """f and its derivatives up to `orders` at point (a float each)."""
    api, N, nn, L = side
    g, out = (lambda x: f(N, nn, L, x)), []
    for _ in range(orders + 1):
        out.append(float(g(np.float64(point))))
        g = api.grad(g)
    return out


def _jax_derivatives(f, points, orders=3):
    """JAX's f and derivatives at every point, [point, order]: one compiled program, vmapped over the points (JAX's
    eager higher derivatives took 20x tracejit's time)."""
    api, N, nn, L = JAX
    gs = [lambda x: f(N, nn, L, x)]
    for _ in range(orders):
        gs.append(api.grad(gs[-1]))
    return np.stack(jax.jit(jax.vmap(lambda x: [g(x) for g in gs]))(np.array(points, np.float64)), 1)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_derivatives_at_kinks_equal_jaxs(name):
    f, points = FUNCTIONS[name]
    for point, theirs in zip(points, _jax_derivatives(f, points), strict=True):
        np.testing.assert_allclose(_derivatives(TRACEJIT, f, point), theirs, rtol=1e-10, atol=1e-13,
                                   err_msg=f"{name} at {point}: f, f', f'', f'''")
