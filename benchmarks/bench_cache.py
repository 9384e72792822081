"""Compile cache: cold first call, in-memory hit, and first call in a fresh process that finds the code
in the disk cache, for a few programs; medians of fresh processes, and the ratios warm / cold.

Shape storm: `tanh(x) @ W` (W f32[64,64]) called once for each batch size 1..32, in one process whose
LLVM has already started, with the disk cache off: shape-specialised (one compile per size) against
the symbolic-dims policy (tracejit.config.symbolic_dims_after, default 2); total seconds and compiles,
medians over runs, and the steady-state call time of specialised and symbolic code at a few sizes.

    python benchmarks/bench_cache.py [--runs N]

Each first call is timed in its own fresh process (the one-time LLVM start-up counts in both cold and
warm). "LLVM" is the backend's llvm phase: optimisation and machine code when cold; key, read, checksum
and linking when the code comes from disk. Tracing, passes and Python codegen run either way.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp


def small(x):
    return tnp.tanh(x) * 2.0 + 1.0


def chain(x):
    for i in range(1000):
        x = (tnp.tanh(x) if i % 100 == 99 else x * 1.0001 if i % 4 == 0 else x + 0.5 if i % 4 == 1
             else x - 0.25 if i % 4 == 2 else tnp.maximum(x, -1.0))
    return x


def mlp_loss(params, x, labels):
    w1, b1, w2, b2 = params
    h = tnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return -tnp.mean(tnp.sum(tj.nn.log_softmax(logits) * labels, axis=1))


def mlp_step(params, x, labels):
    grads = tj.grad(mlp_loss)(params, x, labels)
    return [p - 0.01 * g for p, g in zip(params, grads)]


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


PROGRAMS = {
    "small: tanh(x)*2+1, 1000 f32": (small, lambda: (_f32(1000),)),
    "1000-op elementwise chain": (chain, lambda: (_f32(1000),)),
    "MLP 784-512-10 SGD step (grad)": (mlp_step, lambda: ([_f32(784, 512) * 0.03, _f32(512), _f32(512, 10) * 0.04,
                                                           _f32(10)], _f32(128, 784), np.eye(10, dtype=np.float32)[
                                                               np.arange(128) % 10])),
}


PHASES = ("trace", "transforms", "passes", "codegen", "llvm")


def child(name):
    """One first call in this fresh process; prints its seconds and phase split as JSON."""
    fun, make_args = PROGRAMS[name]
    args = make_args()
    f = tj.jit(fun)
    t0 = time.perf_counter()
    f(*args)
    first = time.perf_counter() - t0
    s = f.cache_info().signatures[0]
    print(json.dumps({"first": first, "seconds": s.seconds, "from_disk": s.from_disk}))


def fresh(name, cache_dir, disk_cache):
    env = {**os.environ, "TRACEJIT_CACHE_DIR": cache_dir, "TRACEJIT_DISK_CACHE": "1" if disk_cache else "0"}
    out = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True, env=env,
                         check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def hit_seconds(name, repeat=200):
    fun, make_args = PROGRAMS[name]
    args = make_args()
    f = tj.jit(fun, cache=False)
    f(*args)
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f(*args)
        samples.append(time.perf_counter() - t0)
    return float(np.median(samples))


def storm(symbolic_after, sizes=range(1, 33)):
    """Seconds and compiles for one call per size of a fresh jitted tanh(x) @ W."""
    tj.config.update("symbolic_dims_after", symbolic_after)
    w, xs = _f32(64, 64), [_f32(n, 64, seed=n) for n in sizes]
    f = tj.jit(lambda x, w: tnp.tanh(x) @ w, cache=False)
    t0 = time.perf_counter()
    for x in xs:
        f(x, w)
    return time.perf_counter() - t0, f.misses


def paired_call_seconds(f, g, args, calls):
    """Median seconds per call of f and of g, timed in alternating batches so that both see the same
    machine (a shared, noisy one: timing one after the other made small sizes differ by 1.6x run to run)."""
    f(*args), g(*args)
    samples = {f: [], g: []}
    for _ in range(31):
        for h in (f, g):
            t0 = time.perf_counter()
            for _ in range(calls):
                h(*args)
            samples[h].append((time.perf_counter() - t0) / calls)
    return float(np.median(samples[f])), float(np.median(samples[g]))


def shape_storm(runs):
    after = tj.config.symbolic_dims_after
    tj.jit(small, cache=False)(_f32(10))                      # LLVM starts once, outside the timings
    print(f"\nshape storm: tanh(x) @ W for batch sizes 1..32, one call each (median of {runs} runs)")
    results = {}
    for label, setting in (("specialised", 0), ("symbolic dims", 2)):
        rs = [storm(setting) for _ in range(runs)]
        results[label] = float(np.median([t for t, _ in rs]))
        print(f"  {label:14} {results[label] * 1e3:8.1f} ms  {rs[0][1]:3d} compiles")
    tj.config.update("symbolic_dims_after", after)
    print(f"  specialised / symbolic: {results['specialised'] / results['symbolic dims']:.1f}x")
    print("\nsteady state, us per call (median), symbolic / specialised")
    fun, w = (lambda x, w: tnp.tanh(x) @ w), _f32(64, 64)
    for n in (1, 8, 32, 256, 1024, 100_000):
        x = _f32(n, 64)
        spec, sym = paired_call_seconds(tj.jit(fun, cache=False), tj.jit(fun, cache=False, dynamic_dims={"x": {0: "n"}}),
                                        (x, w), 100 if n < 10_000 else 2)
        print(f"  n={n:6d}  specialised {spec * 1e6:7.2f}  symbolic {sym * 1e6:7.2f}  ratio {sym / spec:5.2f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child")
    parser.add_argument("--storm-only", action="store_true")
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    if args.storm_only:
        return shape_storm(args.runs)
    print(f"{'program':34} {'cold ms':>9} {'cold LLVM':>9} {'disk ms':>9} {'disk LLVM':>9} {'disk/cold':>9} "
          f"{'LLVM d/c':>9} {'hit us':>8} {'hit/cold':>9}")
    splits = []
    with tempfile.TemporaryDirectory(prefix="tracejit-bench-cache-") as cache_dir:
        for name in PROGRAMS:
            cold = [fresh(name, cache_dir, False) for _ in range(args.runs)]
            fresh(name, cache_dir, True)                       # fills the cache
            warm = [fresh(name, cache_dir, True) for _ in range(args.runs)]
            assert all(w["from_disk"] for w in warm) and not any(c["from_disk"] for c in cold)
            c, w = (float(np.median([r["first"] for r in rs])) for rs in (cold, warm))
            cl, wl = (float(np.median([r["seconds"]["llvm"] for r in rs])) for rs in (cold, warm))
            hit = hit_seconds(name)
            print(f"{name:34} {c * 1e3:9.1f} {cl * 1e3:9.1f} {w * 1e3:9.1f} {wl * 1e3:9.2f} {w / c:9.3f} "
                  f"{wl / cl:9.3f} {hit * 1e6:8.1f} {hit / c:9.2e}")
            splits.append((name, {k: float(np.median([r["seconds"][k] for r in warm])) for k in PHASES},
                           float(np.median([r["first"] - r["seconds"]["total"] for r in warm]))))
    print("\nwhere a warm start goes, ms (medians): " + ", ".join(PHASES) + " (codegen includes starting LLVM,"
          " llvm is reading and linking the object), then the first run")
    for name, phases, run in splits:
        print(f"  {name:34} " + " ".join(f"{phases[k] * 1e3:6.2f}" for k in PHASES) + f" {run * 1e3:6.2f}")
    shape_storm(args.runs)


if __name__ == "__main__":
    main()
