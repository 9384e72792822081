"""Compile cache: cold first call, in-memory hit, and first call in a fresh process that finds the code
in the disk cache, for a few programs; medians of fresh processes, and the ratios warm / cold.

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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    print(f"{'program':34} {'cold ms':>9} {'cold LLVM':>9} {'disk ms':>9} {'disk LLVM':>9} {'disk/cold':>9} "
          f"{'LLVM d/c':>9} {'hit us':>8} {'hit/cold':>9}")
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


if __name__ == "__main__":
    main()
