"""Checkpointing: memory (Compiled.memory_analysis, exact) and time (median of repeats, same process) of
gradients with and without tj.checkpoint (the variants' calls interleaved, so that they share the machine's
load).

1. The gradient of a 32-layer tanh MLP (width 512, batch 256, float32): plain; each layer checkpointed; and the
   layers checkpointed in segments of SEGMENT (about sqrt(32)), which keeps the segments' inputs and one
   segment's activations.
2. The gradient of a 100,000-step scan over a 256-float carry: plain, and scan(..., checkpoint="sqrt").

    python benchmarks/bench_remat.py [--repeats N] [--json FILE]
"""
import argparse
import json
import time

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp

LAYERS, WIDTH, BATCH, SEGMENT = 32, 512, 256, 6
STEPS, CARRY = 100_000, 256


def layer(w, h):
    return tnp.tanh(h @ w)


def run_layers(ws, h):
    for w in ws:
        h = layer(w, h)
    return h


def mlp_loss(how):
    """The loss with the layers run plainly, each checkpointed, or checkpointed SEGMENT at a time."""
    def loss(ws, x):
        if how == "plain":
            h = run_layers(ws, x)
        elif how == "each layer":
            h = x
            for w in ws:
                h = tj.checkpoint(layer)(w, h)
        else:
            h = x
            for i in range(0, len(ws), SEGMENT):
                h = tj.checkpoint(run_layers)(ws[i:i + SEGMENT], h)
        return tnp.sum(h * h)
    return loss


def scan_loss(checkpoint):
    def loss(c0, xs):
        c, _ = tj.lax.scan(lambda c, x: (tnp.tanh(c * 0.9 + x), None), c0, xs, checkpoint=checkpoint)
        return tnp.sum(c)
    return loss


def times(fns, args, repeats):
    """{name: (median, min) seconds} of fns[name](*args), the calls interleaved so that they share the load."""
    for fn in fns.values():
        fn(*args)
    seconds = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn(*args)
            seconds[name].append(time.perf_counter() - start)
    return {name: (float(np.median(s)), min(s)) for name, s in seconds.items()}


def measure(name, variants, args, repeats):
    """{variant: {temp MiB, peak MiB, median and min seconds}} and a printed table, ratios against the first."""
    jitted = {variant: tj.jit(fn) for variant, fn in variants.items()}
    timed = times(jitted, args, repeats)
    rows = {}
    for variant, fn in jitted.items():
        stats = fn.lower(*args).compile().memory_analysis()
        rows[variant] = {"temp_MiB": stats.temp_size_in_bytes / 2**20, "peak_MiB": stats.peak_memory_in_bytes / 2**20,
                         "median_s": timed[variant][0], "min_s": timed[variant][1]}
    base = next(iter(rows.values()))
    print(f"\n{name}")
    print(f"{'':16} {'temp MiB':>9} {'ratio':>6} {'peak MiB':>9} {'ratio':>6} {'median ms':>10} {'ratio':>6} "
          f"{'min ms':>8} {'ratio':>6}")
    for variant, r in rows.items():
        print(f"{variant:16} {r['temp_MiB']:9.2f} {r['temp_MiB'] / base['temp_MiB']:6.2f} {r['peak_MiB']:9.2f} "
              f"{r['peak_MiB'] / base['peak_MiB']:6.2f} {r['median_s'] * 1e3:10.1f} "
              f"{r['median_s'] / base['median_s']:6.2f} {r['min_s'] * 1e3:8.1f} {r['min_s'] / base['min_s']:6.2f}")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    ws = [(rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32) for _ in range(LAYERS)]
    x = rng.standard_normal((BATCH, WIDTH)).astype(np.float32)
    results = {"mlp": measure(f"grad of a {LAYERS}-layer tanh MLP, width {WIDTH}, batch {BATCH}",
                              {how: tj.grad(mlp_loss(how)) for how in ("plain", "each layer", f"segments of {SEGMENT}")},
                              (ws, x), args.repeats)}
    c0 = np.linspace(-1, 1, CARRY).astype(np.float32)
    xs = np.linspace(0, 1, STEPS).astype(np.float32)
    results["scan"] = measure(f"grad of a {STEPS:,}-step scan, carry f32[{CARRY}]",
                              {str(k): tj.grad(scan_loss(k), argnums=(0, 1)) for k in (None, "sqrt")},
                              (c0, xs), args.repeats)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
