"""First calls (trace + compile) of `python -m benchmarks`: long chains, a scan whose compile time must not
depend on its trip count, and a storm of new shapes. Registered into run.WORKLOADS when run.main imports it."""
# ruff: noqa: B023 -- each lambda is timed right away, inside its loop iteration
import functools
import time

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from benchmarks.run import f32, first_call, jax, jnp, rows, timeit, workload


@workload("compile")
def compile_time(repeat):
    """First calls of long chains: arithmetic with a tanh every 100 ops over 16 f32, and the transcendental
    chain sin(x) * 1.0001 + 0.5 over 1000 f32 (issue 20: 1000 ops in at most 100 ms, linear in the length),
    its sin compiled beforehand (the vector math library's first compile in the process is not the chain's)."""
    def arithmetic(x, n_ops):
        for i in range(n_ops):
            x = (tnp.tanh(x) if i % 100 == 99 else x * 1.0001 if i % 4 == 0 else x + 0.5 if i % 4 == 1
                 else x - 0.25 if i % 4 == 2 else tnp.maximum(x, -1.0))
        return x

    def transcendental(x, n_ops):
        for _ in range(n_ops // 2):
            x = tnp.sin(x) * 1.0001 + 0.5
        return x
    x = f32(1000, seed=13)
    tj.jit(tnp.sin)(x)
    out = []
    for name, chain, n_ops, arg in ([("chain", arithmetic, n, x[:16]) for n in (10, 100, 1000, 3000)]
                                    + [("sin chain", transcendental, n, x) for n in (250, 500, 1000, 2000)]):
        times = [first_call(lambda: tj.jit(functools.partial(chain, n_ops=n_ops)), arg) for _ in range(3)]
        seconds = sorted(t for t, _ in times)[1]
        split = times[0][1].cache_info()["signatures"][0]["seconds"]
        row = {"workload": f"compile {n_ops}-op {name} (first call)", "tracejit": (seconds, 0.0)}
        row.update({f"{k} ms": v * 1e3 for k, v in split.items()})
        out.append(row)
    return out


@workload("scan_compile")
def scan_compile(repeat):
    """A scan over a small carry (an RNN-like step): first-call time at length 10 and 100000 (compile time
    must not depend on the trip count), and the run time against the NumPy impl (the reference backend)."""
    w = f32(8, 8, seed=16) * 0.3

    def rnn(h, xs):
        return tj.lax.scan(lambda h, x: (tnp.tanh(h @ w + x), tnp.sum(h)), h, xs)

    out = []
    for n in (10, 100_000):
        xs = f32(n, 8, seed=17) * 0.1
        firsts = [first_call(lambda: tj.jit(functools.partial(rnn)), xs[0], xs) for _ in range(3)]   # (new functions: no shared code)
        first = sorted(t for t, _ in firsts)[1]
        compile_ms = sorted(g.cache_info()["signatures"][0]["seconds"]["total"] for _, g in firsts)[1] * 1e3
        f = firsts[0][1]
        ref = tj.jit(rnn, backend="reference")
        np.testing.assert_allclose(f(xs[0], xs)[1], ref(xs[0], xs)[1], rtol=1e-3, atol=1e-4)
        impls = {"tracejit": lambda: f(xs[0], xs), "numpy": lambda: ref(xs[0], xs)}
        if jax:
            jw = jnp.asarray(w)
            jf = jax.jit(lambda h, xs: jax.lax.scan(lambda h, x: (jnp.tanh(h @ jw + x), jnp.sum(h)), h, xs))
            jx = jnp.asarray(xs)
            impls["jax"] = lambda: jax.block_until_ready(jf(jx[0], jx))
        out += rows(f"scan rnn-8 length {n} (numpy: reference impl)", impls, max(3, repeat // 5),
                    {"first call ms": first * 1e3, "compile ms": compile_ms})
    return out


@workload("shape_storm")
def shape_storm(repeat):
    w = f32(64, 64, seed=14)
    xs = [f32(b, 64, seed=b) for b in range(1, 33)]

    def storm():
        f = tj.jit(lambda x, w: tnp.tanh(x) @ w)
        for x in xs:
            f(x, w)

    def np_storm():
        for x in xs:
            np.tanh(x) @ w

    t0 = time.perf_counter()
    storm()
    seconds = time.perf_counter() - t0
    return [{"workload": "shape storm: 32 batch sizes, each called once", "tracejit": (seconds, 0.0),
             "numpy": timeit(np_storm, 5)}]
