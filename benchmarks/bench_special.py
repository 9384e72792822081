"""Special functions (issue 18): compiled tracejit kernels against scipy.special (and JAX when importable) on 1e6
elements (1e5 for gammainc and betainc, whose kernels loop per element), in one process; medians of repeated rounds and the ratio other / tracejit (above 1: tracejit is faster).

    python benchmarks/bench_special.py
    taskset -c 0 python benchmarks/bench_special.py --in-cache     # ns per element on 32K elements, one core

Target: erf and gammaln on 1e6 float32 at least 2x scipy.special (which computes float32 in double, one element
at a time; tracejit's loops are vectorized and split over the cores).
"""
# ruff: noqa: B023 -- each lambda is timed right away, inside its loop iteration
import os
import sys
import time

import numpy as np
import scipy.special as sc

import tracejit as tj
from tracejit.scipy import special as S

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import timeit  # the harness's timer, next to this file

try:
    import jax
    import jax.scipy.special as js
except ImportError:
    jax = None

N = 1_000_000
IN_CACHE = 32768
rng = np.random.default_rng(0)


def cases():
    """(name, arguments, tracejit's function, SciPy's)."""
    for name, x, ours, scipy_fn in _cases():
        yield name, x if isinstance(x, tuple) else (x,), ours, scipy_fn


def _cases():
    normal = rng.normal(size=N) * 2
    positive = rng.uniform(0.01, 50, N)
    unit = rng.uniform(-1, 1, N)
    for dtype in (np.float32, np.float64):
        yield "erf", normal.astype(dtype), S.erf, sc.erf
        yield "gammaln", positive.astype(dtype), S.gammaln, sc.gammaln
    f32 = np.float32
    yield "erfc", normal.astype(f32), S.erfc, sc.erfc
    yield "erfinv", unit.astype(f32), S.erfinv, sc.erfinv
    yield "digamma", positive.astype(f32), S.digamma, sc.digamma
    yield "ndtr", normal.astype(f32), S.ndtr, sc.ndtr
    yield "log_ndtr", normal.astype(f32), S.log_ndtr, sc.log_ndtr
    yield "ndtri", (unit.astype(f32) + 1) / 2, S.ndtri, sc.ndtri
    yield "gamma", (positive / 2).astype(f32), S.gamma, sc.gamma
    yield "i0e", (normal * 10).astype(f32), S.i0e, sc.i0e
    yield "i1e", (normal * 10).astype(np.float64), S.i1e, sc.i1e
    yield "gammainc", (positive[:N // 10].astype(f32), positive[::-10].astype(f32)), S.gammainc, sc.gammainc
    yield "zeta", ((positive / 10 + 1.5).astype(f32), positive[::-1].astype(f32)), S.zeta, sc.zeta
    yield "betainc", (positive[:N // 10].astype(f32) / 5, positive[::-10].astype(f32) / 5,
                      (unit[:N // 10].astype(f32) + 1) / 2), S.betainc, sc.betainc


def main(rounds=5):
    """Each implementation timed in turn, `rounds` times over: the medians of the times and of the per-round
    ratios, which a load that comes and goes during the run disturbs less than one long measurement each."""
    print(f"{'1e6 elements':22s} {'tracejit':>10s} {'scipy':>10s} {'jax':>10s}   scipy/tj  jax/tj")
    for name, args, ours, scipy_fn in cases():
        compiled, dtype = tj.jit(ours), args[0].dtype
        want = scipy_fn(*(x.astype(np.float64) for x in args)).astype(dtype)    # (SciPy's float32 betainc is
        np.testing.assert_allclose(compiled(*args), want, rtol=2e-6 if dtype == np.float32 else 1e-12,   # 1e-4 off)
                                   atol=1e-15)
        impls = {"tracejit": lambda: compiled(*args), "scipy": lambda: scipy_fn(*args)}
        if jax is not None and dtype == np.float32:
            jax_fn, jax_args = jax.jit(getattr(js, name)), [jax.numpy.asarray(x) for x in args]
            impls["jax"] = lambda: jax.block_until_ready(jax_fn(*jax_args))
        samples = {k: [] for k in impls}
        for _ in range(rounds):
            for impl, fn in impls.items():
                samples[impl].append(timeit(fn, repeat=5)[0])
        times = {k: float(np.median(v)) for k, v in samples.items()}
        ratios = {k: float(np.median(np.array(samples[k]) / np.array(samples["tracejit"]))) for k in samples}
        cells = [f"{times[k] * 1e3:8.2f}ms" if k in times else f"{'-':>10s}" for k in ("tracejit", "scipy", "jax")]
        cells += [f"{ratios[k]:9.2f}" if k in ratios else f"{'-':>9s}" for k in ("scipy", "jax")]
        label = f"{name} {np.dtype(dtype).name}"
        print(f"{label:22s} {' '.join(cells)}")


def cpu_seconds(fn, calls=50, rounds=40):
    """The least process CPU time per call over `rounds` batches: what one core spends, whatever else runs."""
    fn()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - t0) / calls)
    return best


def in_cache():
    """ns per element on the first IN_CACHE elements of each case (in L2): the kernels' own cost, not memory's."""
    print(f"{IN_CACHE} elements, ns/element  tracejit       jax   jax/tj")
    for name, args, ours, _ in cases():
        args = [x[:IN_CACHE] for x in args]
        compiled, dtype = tj.jit(ours), args[0].dtype
        tj_ns = cpu_seconds(lambda: compiled(*args)) / IN_CACHE * 1e9
        cells = f"{tj_ns:9.3f}"
        if jax is not None:
            with jax.enable_x64(dtype == np.float64):
                jax_fn, jax_args = jax.jit(getattr(js, name)), [jax.numpy.asarray(x) for x in args]
                jax_ns = cpu_seconds(lambda: jax.block_until_ready(jax_fn(*jax_args))) / IN_CACHE * 1e9
            cells += f" {jax_ns:9.3f} {jax_ns / tj_ns:8.2f}"
        print(f"{name + ' ' + np.dtype(dtype).name:22s} {cells}")


if __name__ == "__main__":
    in_cache() if "--in-cache" in sys.argv else main()
