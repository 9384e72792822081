"""Linear algebra (issue 18): tracejit against NumPy (and JAX when importable) in one process, medians of repeated
runs and the ratio other / tracejit (above 1: tracejit is faster).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_linalg.py

Targets: solve and cholesky 256 x 256 float64 at least 0.9x NumPy; a batch of 1000 4 x 4 solves at least 3x NumPy
(NumPy's batched solve pays per matrix what generated code does not); a Gaussian process's log marginal
likelihood and its gradient (n = 500) against JAX.
"""
# ruff: noqa: B023 -- each lambda is timed right away, inside its loop iteration
import contextlib
import os
import sys

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
import tracejit.scipy.linalg as tsla

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import timeit  # the harness's timer, next to this file

try:
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsla
except ImportError:
    jax = None

rng = np.random.default_rng(0)


def gp_log_likelihood(params, x, y, lib, solve_triangular):
    """Squared-exponential kernel, Gaussian noise: -y^T K^-1 y / 2 - log det K / 2 - n log(2 pi) / 2."""
    scale, length, noise = lib.exp(params[0]), lib.exp(params[1]), lib.exp(params[2])
    d2 = (x[:, None] - x[None, :]) ** 2
    k = scale * lib.exp(-0.5 * d2 / length ** 2) + (noise + 1e-6) * lib.eye(x.shape[0])
    chol = lib.linalg.cholesky(k)
    alpha = solve_triangular(chol, y, lower=True)
    return -0.5 * lib.sum(alpha ** 2) - lib.sum(lib.log(lib.diagonal(chol))) - 0.5 * x.shape[0] * np.log(2 * np.pi)


def cases():
    a256 = rng.standard_normal((256, 256)) + 16 * np.eye(256)
    b256 = rng.standard_normal(256)
    spd256 = a256 @ a256.T
    a4, b4 = rng.standard_normal((1000, 4, 4)) + 2 * np.eye(4), rng.standard_normal((1000, 4, 1))
    x = np.sort(rng.uniform(0, 10, 500))
    y = np.sin(x) + 0.1 * rng.standard_normal(500)
    params = np.array([0.0, 0.0, -2.0])
    yield "solve 256x256 f64", tnp.linalg.solve, np.linalg.solve, (a256, b256)
    yield "cholesky 256x256 f64", tnp.linalg.cholesky, np.linalg.cholesky, (spd256,)
    yield "solve 1000 x (4x4) f64", tnp.linalg.solve, np.linalg.solve, (a4, b4)
    yield "eigh 256x256 f64", tnp.linalg.eigh, np.linalg.eigh, (spd256,)
    yield "svd 256x256 f64", tnp.linalg.svd, np.linalg.svd, (a256,)
    ours = tj.value_and_grad(lambda p: gp_log_likelihood(p, x, y, tnp, tsla.solve_triangular))
    theirs = None
    if jax:
        with jax.enable_x64(True):
            theirs = jax.jit(jax.value_and_grad(lambda p: gp_log_likelihood(p, x, y, jnp, jsla.solve_triangular)))
    yield "GP log-likelihood + grad n=500 f64", ours, None, (params,), theirs


def main(rounds=5):
    """Each implementation timed in turn, `rounds` times over: the medians of the times and of the per-round
    ratios, which a load that comes and goes during the run disturbs less than one long measurement each. Each
    round starts with another implementation: when tracejit always ran right after JAX, whose threads keep
    spinning a while, eigh 256 measured 0.92x NumPy; alone, 1.06x."""
    print(f"{'workload':38s} {'tracejit':>10s} {'numpy':>10s} {'jax':>10s}   numpy/tj  jax/tj")
    for name, ours, numpy_fn, args, *rest in cases():
        compiled = tj.jit(ours)
        impls = {"tracejit": lambda: compiled(*args)}
        if numpy_fn is not None:
            impls["numpy"] = lambda: numpy_fn(*args)
        jax_fn = rest[0] if rest else (jax.jit(getattr(jnp.linalg, ours.__name__)) if jax else None)
        if jax_fn is not None:
            with jax.enable_x64(True):
                jax_args = [jnp.asarray(a) for a in args]
            impls["jax"] = lambda: jax.block_until_ready(jax_fn(*jax_args))
        samples = {k: [] for k in impls}
        with jax.enable_x64(True) if jax else contextlib.nullcontext():
            order = list(impls)
            for r in range(rounds):     # in turn, each round starting with another: none always runs after JAX's
                for impl in order[r % len(order):] + order[:r % len(order)]:     # threads (they spin a while)
                    samples[impl].append(timeit(impls[impl], repeat=5)[0])
        times = {k: float(np.median(v)) for k, v in samples.items()}
        ratios = {k: float(np.median(np.array(samples[k]) / np.array(samples["tracejit"]))) for k in samples}
        cells = [f"{times[k] * 1e6:8.0f}us" if k in times else f"{'-':>10s}" for k in ("tracejit", "numpy", "jax")]
        cells += [f"{ratios[k]:9.2f}" if k in ratios else f"{'-':>9s}" for k in ("numpy", "jax")]
        print(f"{name:38s} {' '.join(cells)}")


if __name__ == "__main__":
    main()
