"""Cost of reverse mode: time of jit(grad(f)) and jit(value_and_grad(f)) against jit(f) (median of repeats),
and equation counts after DCE.

The cheap-gradient principle says the gradient costs a small constant times the function (target: at most 4x).

    python benchmarks/bench_ad.py
"""
import time

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.passes import dce

rng = np.random.default_rng(0)


def mlp(w1, b1, w2, b2, x):
    h = tnp.tanh(x @ w1 + b1)
    return tnp.mean(tnp.sum(tj.nn.log_softmax(h @ w2 + b2) * (1.0 / 10), axis=-1))


def polynomial(x):
    return tnp.sum(x ** 3 - 2 * x ** 2 + tnp.sin(x) * x)


def logsumexp_rows(x):
    return tnp.sum(tj.nn.logsumexp(x, axis=1))


def attention_like(q, k, v):
    scores = tj.nn.softmax(q @ k.T / 8.0, axis=-1)
    return tnp.sum((scores @ v) ** 2)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


PROGRAMS = [
    ("mlp 784-512-10, batch 128", mlp, lambda: (f32(784, 512) * 0.03, f32(512), f32(512, 10) * 0.04, f32(10),
                                               f32(128, 784))),
    ("polynomial, 1e6 f32", polynomial, lambda: (f32(1_000_000),)),
    ("logsumexp rows, 1024x1024 f32", logsumexp_rows, lambda: (f32(1024, 1024),)),
    ("attention-like, 256x64 f32", attention_like, lambda: (f32(256, 64), f32(256, 64), f32(256, 64))),
]


def median_time(fn, args, repeats):
    fn(*args)  # compile
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(repeats=15):
    print(f"{'program':32s} {'fwd eqns':>8s} {'v&g eqns':>8s} {'ratio':>6s} {'fwd ms':>8s} {'grad ms':>8s} "
          f"{'ratio':>6s} {'v&g ms':>8s} {'ratio':>6s}")
    for name, f, make in PROGRAMS:
        args = make()
        argnums = tuple(range(len(args)))
        vg = tj.value_and_grad(f, argnums=argnums)
        n_fwd = len(dce(tj.make_ir(f)(*args)).eqns)
        n_grad = len(dce(tj.make_ir(vg)(*args)).eqns)
        t_fwd = median_time(tj.jit(f), args, repeats)
        t_grad = median_time(tj.jit(tj.grad(f, argnums=argnums)), args, repeats)
        t_vg = median_time(tj.jit(vg), args, repeats)
        print(f"{name:32s} {n_fwd:8d} {n_grad:8d} {n_grad / n_fwd:6.2f} {1e3 * t_fwd:8.3f} {1e3 * t_grad:8.3f} "
              f"{t_grad / t_fwd:6.2f} {1e3 * t_vg:8.3f} {t_vg / t_fwd:6.2f}")


if __name__ == "__main__":
    main()
