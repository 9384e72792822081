# ruff: noqa: B023 -- each lambda is timed right away, inside its loop iteration
"""A LeNet-5-style CNN (issue 19): the training step under jit(value_and_grad) against JAX's, and each layer's
forward and backward against JAX and against the matmul-throughput bound for its flops.

    python -m benchmarks.bench_cnn [--repeat N] [--json FILE]          (taskset -c 0 python -m ...: one core)

The network: 128 images 28x28x1 (NHWC), conv 5x5 -> 6, relu, 2x2 max pool, conv 5x5 -> 16, relu, 2x2 max pool,
dense 256 -> 120 -> 84 -> 10, relu between, softmax cross-entropy; parameters drawn with NumPy's generator. The
bound of a layer is its flops at the f32 GEMM throughput that NumPy's BLAS reaches in this process (512 x 512,
the better of its threads and one core); "x bound" is the time over that bound (the target: at most 2).
"given ct" is the backward's time over its bound when the output's cotangent is an array (as inside a network)
rather than the constant of sum(f * 0.5), which the backward column's program materializes (1.7 MB for conv1).
tracejit lowers a convolution to an implicit GEMM (register tiles over packed operands); the convolution rows
also time the other lowering on the same shapes, im2col + BLAS, done by NumPy (its copy loops, its BLAS on one
thread, as tracejit runs small gemms): forward, and a backward computing both gradients.

Under taskset every thread pool (tracejit's, OpenBLAS's, XLA's) sizes itself to the cores the process may use.
Times are medians of repeated calls; compare within one run only: the machine is shared and noisy. The
persistent compile cache is off, so first calls are cold compiles.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

LAYOUT = ("NHWC", "HWIO", "NHWC")
BATCH = 128


def _ratio(v):
    return f"{v:7.2f}" if v is not None else "      -"


def blas_on_one_thread(fn):
    """fn, running NumPy's BLAS on the calling thread alone (OpenBLAS's thread-local count), where it can."""
    import ctypes

    from tracejit.backend import blas
    local = blas.threads_local_address()
    if local is None:
        return fn
    set_threads = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(local)

    def one_thread():
        previous = set_threads(1)
        try:
            return fn()
        finally:
            set_threads(previous)

    return one_thread


def gemm_throughput(repeat, timeit):
    """f32 GEMM flop/s on 512 x 512 with NumPy's BLAS: the better of its own threads and the calling thread alone
    (on a loaded machine OpenBLAS's threads can be many times slower than one)."""
    a = np.random.default_rng(2).standard_normal((512, 512)).astype(np.float32)
    return max(2 * 512 ** 3 / timeit(fn, repeat) for fn in (lambda: a @ a, blas_on_one_thread(lambda: a @ a)))


def make_params(rng):
    def f32(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    return [f32(5, 5, 1, 6, scale=0.2), f32(6, scale=0.1), f32(5, 5, 6, 16, scale=0.08), f32(16, scale=0.1),
            f32(256, 120, scale=0.06), f32(120, scale=0.1), f32(120, 84, scale=0.09), f32(84, scale=0.1),
            f32(84, 10, scale=0.1), f32(10, scale=0.1)]


def network(np_, lax_, conv, pool):
    """The loss of the network on (params, images, one-hot labels), written with np_ and lax_ (tracejit or JAX)."""
    def relu(v):
        return np_.maximum(v, 0.0)

    def loss(params, x, labels):
        w1, b1, w2, b2, w3, b3, w4, b4, w5, b5 = params
        h = pool(relu(conv(x, w1) + b1))
        h = pool(relu(conv(h, w2) + b2)).reshape(BATCH, -1)
        h = relu(relu(h @ w3 + b3) @ w4 + b4)
        logits = h @ w5 + b5
        shifted = logits - lax_.stop_gradient(np_.max(logits, axis=1, keepdims=True))
        log_probs = shifted - np_.log(np_.sum(np_.exp(shifted), axis=1, keepdims=True))
        return -np_.mean(np_.sum(log_probs * labels, axis=1))

    return loss


def im2col_programs(x, w):
    """The other lowering on these shapes, with NumPy: im2col (the patch matrix copied out by NumPy's C loops), one
    BLAS gemm for the forward, two for the backward (kernel: patches^T @ ct; input: ct @ w^T, scattered back by
    kernel offset). A VALID stride-1 NHWC x HWIO convolution."""
    n, h, width, c = x.shape
    kh, kw, _, out = w.shape
    oh, ow = h - kh + 1, width - kw + 1
    w_matrix = w.reshape(kh * kw * c, out)

    def patches():
        view = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))      # n, oh, ow, c, kh, kw
        return np.ascontiguousarray(view.transpose(0, 1, 2, 4, 5, 3)).reshape(n * oh * ow, kh * kw * c)

    def forward():
        return patches() @ w_matrix

    ct = np.ones((n * oh * ow, out), x.dtype)

    def backward():
        grad_w = patches().T @ ct
        d_patches = (ct @ w_matrix.T).reshape(n, oh, ow, kh, kw, c)
        grad_x = np.zeros_like(x)
        for i in range(kh):
            for j in range(kw):
                grad_x[:, i:i + oh, j:j + ow, :] += d_patches[:, :, :, i, j, :]
        return grad_w, grad_x

    return forward, backward


def layer_programs(lib):
    """{layer: (forward fn, backward fn (the gradients training needs), arguments, forward flops, backward flops)};
    lib's grad_of(f, argnums) makes the backward (the gradients of sum(f * 0.5): a constant cotangent)."""
    lax, grad_of = lib

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=LAYOUT)

    def pool(h):
        return lax.reduce_window(h, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def dense(h, w, b):
        return h @ w + b

    rng = np.random.default_rng(1)

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    conv1, conv2 = 2 * BATCH * 576 * 6 * 25, 2 * BATCH * 64 * 16 * 150
    return {   # the first layer's input is data: training needs its kernel gradient only
        "conv1 5x5 1->6": (conv, grad_of(conv, (1,)), (f32(BATCH, 28, 28, 1), f32(5, 5, 1, 6)), conv1, conv1),
        "pool1 2x2": (pool, grad_of(pool, (0,)), (f32(BATCH, 24, 24, 6),), 0, 0),
        "conv2 5x5 6->16": (conv, grad_of(conv, (0, 1)), (f32(BATCH, 12, 12, 6), f32(5, 5, 6, 16)), conv2, 2 * conv2),
        "pool2 2x2": (pool, grad_of(pool, (0,)), (f32(BATCH, 8, 8, 16),), 0, 0),
        **{f"dense {m}->{n}": (dense, grad_of(dense, (0, 1, 2)), (f32(BATCH, m), f32(m, n), f32(n)),
                               2 * BATCH * m * n, 4 * BATCH * m * n) for m, n in ((256, 120), (120, 84), (84, 10))},
    }


def given_cotangent(tj, f, argnums):
    """f's backward as a layer's inside a network: the gradients of arguments argnums given the output's cotangent
    (an array computed upstream, not the constant of sum(f * 0.5), which the backward above materializes)."""
    def backward(ct, *args):
        def part(*diff):
            return f(*(diff[argnums.index(i)] if i in argnums else a for i, a in enumerate(args)))
        return tj.vjp(part, *(args[i] for i in argnums))[1](ct)
    return backward


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    import jax
    import jax.numpy as jnp

    import tracejit as tj
    import tracejit.numpy as tnp
    from benchmarks.run import timeit as median_and_spread
    from tracejit import lax
    tj.config.update("disk_cache", False)

    def timeit(fn, repeat):
        return median_and_spread(fn, repeat)[0]

    gemm = gemm_throughput(args.repeat, timeit)
    results = {"cores": len(os.sched_getaffinity(0)), "load_average": os.getloadavg(), "gemm_gflops": gemm / 1e9,
               "layers": [], "step": {}}
    print(f"cores {results['cores']}, load average {results['load_average'][0]:.1f}; f32 GEMM (NumPy's BLAS, "
          f"512x512): {gemm / 1e9:.0f} GFLOP/s")

    # tracejit first, JAX last: XLA's threads keep spinning for a while after each call, taking the cores
    ours = layer_programs((lax, lambda f, n: tj.grad(lambda *p: tnp.sum(f(*p) * 0.5), argnums=n)))
    rows = {name: {"layer": name, "mflop": flops / 1e6, "bwd_mflop": bwd_flops / 1e6}
            for name, (_, _, _, flops, bwd_flops) in ours.items()}
    for name, (fwd, bwd, made, flops, bwd_flops) in ours.items():
        for key, fn, n in (("fwd", fwd, flops), ("bwd", bwd, bwd_flops)):
            f = tj.jit(fn)
            rows[name][f"{key}_ms"] = 1e3 * timeit(lambda f=f: f(*made), args.repeat)
            rows[name][f"{key}_x_bound"] = rows[name][f"{key}_ms"] / (1e3 * n / gemm) if n else None
        argnums = (1,) if name.startswith("conv1") else (0, 1) if name.startswith("conv") else (0,) if name.startswith(
            "pool") else (0, 1, 2)
        ct = np.random.default_rng(3).standard_normal(np.shape(fwd(*made))).astype(np.float32)
        given = tj.jit(given_cotangent(tj, fwd, argnums))
        rows[name]["bwd_given_ms"] = 1e3 * timeit(lambda: given(ct, *made), args.repeat)
        rows[name]["bwd_given_x_bound"] = rows[name]["bwd_given_ms"] / (1e3 * bwd_flops / gemm) if bwd_flops else None
        if name.startswith("conv"):
            forward, backward = im2col_programs(*made)
            rows[name]["im2col_fwd_ms"] = 1e3 * timeit(blas_on_one_thread(forward), args.repeat)
            rows[name]["im2col_bwd_ms"] = 1e3 * timeit(blas_on_one_thread(backward), args.repeat)

    rng = np.random.default_rng(0)
    params = make_params(rng)
    images = rng.standard_normal((BATCH, 28, 28, 1)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, BATCH)]
    step = tj.jit(tj.value_and_grad(network(tnp, lax, lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "VALID", dimension_numbers=LAYOUT), lambda h: lax.max_pool(h, (2, 2), (2, 2)))))
    t0 = time.perf_counter()
    value, grads = step(params, images, labels)
    first = time.perf_counter() - t0
    ms = 1e3 * timeit(lambda: step(params, images, labels), args.repeat)

    theirs = layer_programs((jax.lax, lambda f, n: jax.grad(lambda *p: jnp.sum(f(*p) * 0.5), argnums=n)))
    for name, (fwd, bwd, made, _, _) in theirs.items():
        jax_args = [jnp.asarray(x) for x in made]
        for key, fn in (("fwd", fwd), ("bwd", bwd)):
            jf = jax.jit(fn)
            rows[name][f"{key}_jax_ms"] = 1e3 * timeit(lambda jf=jf: jax.block_until_ready(jf(*jax_args)),
                                                       args.repeat)
    jax_step = jax.jit(jax.value_and_grad(network(jnp, jax.lax, lambda x, w: jax.lax.conv_general_dilated(
        x, w, (1, 1), "VALID", dimension_numbers=LAYOUT), lambda h: jax.lax.reduce_window(
        h, -np.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"))))
    jax_params = [jnp.asarray(p) for p in params]
    t0 = time.perf_counter()
    jax_value, jax_grads = jax.block_until_ready(jax_step(jax_params, images, labels))
    jax_first = time.perf_counter() - t0
    jax_ms = 1e3 * timeit(lambda: jax.block_until_ready(jax_step(jax_params, images, labels)), args.repeat)

    print(f"{'layer':18s} {'MFLOP':>6s} | {'fwd ms':>7s} {'jax':>7s} {'x bound':>7s} | {'bwd ms':>7s} {'jax':>7s} "
          f"{'x bound':>7s} {'given ct':>8s} | {'im2col fwd':>10s} {'bwd':>7s}")
    for row in rows.values():
        print(f"{row['layer']:18s} {row['mflop']:6.1f} | {row['fwd_ms']:7.3f} {row['fwd_jax_ms']:7.3f} "
              f"{_ratio(row['fwd_x_bound'])} | {row['bwd_ms']:7.3f} {row['bwd_jax_ms']:7.3f} "
              f"{_ratio(row['bwd_x_bound'])}  {_ratio(row['bwd_given_x_bound'])} | "
              + (f"{row['im2col_fwd_ms']:10.3f} {row['im2col_bwd_ms']:7.3f}" if "im2col_fwd_ms" in row else ""))
    results["layers"] = list(rows.values())
    error = max(float(np.max(np.abs(g - np.asarray(j))) / (np.max(np.abs(np.asarray(j))) + 1e-30))
                for g, j in zip(grads, jax_grads))
    results["step"] = {"tracejit_ms": ms, "jax_ms": jax_ms, "speedup": jax_ms / ms, "first_call_s": first,
                       "jax_first_call_s": jax_first, "loss": float(value), "jax_loss": float(jax_value),
                       "max_relative_gradient_difference": error}
    print(f"training step, jit(value_and_grad): tracejit {ms:.2f} ms, JAX {jax_ms:.2f} ms (JAX / tracejit "
          f"{jax_ms / ms:.2f}); first call {first:.2f} s, JAX {jax_first:.2f} s; loss {float(value):.6f} (JAX "
          f"{float(jax_value):.6f}), gradients within {error:.1e} of JAX's")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
