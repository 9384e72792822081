"""Per-example gradients with vmap(grad(...)): gradient norms and clipping, DP-SGD style.

Differentially private SGD needs each example's gradient on its own: clip it to a norm bound C, average the
clipped gradients, add Gaussian noise. Written by hand that is a loop over the batch (or a hand-derived
vectorised formula); here it is `vmap(grad(loss), in_axes=(None, 0, 0))`, one batched program.

Run: python examples/per_example_grads.py
"""
import time

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import random


def predict(params, x):
    hidden = tnp.tanh(x @ params["w1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def loss(params, x, y):
    """Logistic loss of one example (x: features, y: label in {0, 1})."""
    logit = predict(params, x)
    return tnp.logaddexp(0.0, logit) - y * logit


per_example_grads = tj.jit(tj.vmap(tj.grad(loss), in_axes=(None, 0, 0)))


@tj.jit
def clipped_mean(grads, clip):
    """Clip each example's gradient (all parameters together) to norm `clip`, then average."""
    leaves = [g.reshape(g.shape[0], -1) for g in tj.tree_util.tree_leaves(grads)]
    norms = tnp.sqrt(sum(tnp.sum(g * g, axis=1) for g in leaves))
    scale = tnp.minimum(1.0, clip / (norms + 1e-12))
    clipped = {k: tnp.mean(g * scale.reshape((-1,) + (1,) * (g.ndim - 1)), axis=0) for k, g in grads.items()}
    return clipped, norms


def make_data(rng, n, d):
    x = rng.normal(size=(n, d))
    y = (np.sin(x[:, 0] * 2) + x[:, 1] ** 2 - 1 > 0).astype(np.float64)
    return x, y


def main():
    rng = np.random.default_rng(0)
    d, hidden, batch, steps = 8, 32, 128, 150
    clip, noise_multiplier, lr = 1.0, 1.1, 0.5
    x_all, y_all = make_data(rng, 4096, d)
    key, k1, k2 = random.split(random.PRNGKey(0), 3)
    params = {"w1": random.normal(k1, (d, hidden)) / np.sqrt(d), "b1": np.zeros(hidden),
              "w2": random.normal(k2, (hidden,)) / np.sqrt(hidden), "b2": np.zeros(())}

    # vmap(grad) agrees with a Python loop of grad calls, and the batched program does not grow with the batch.
    xb, yb = x_all[:batch], y_all[:batch]
    grads = per_example_grads(params, xb, yb)
    grad_one = tj.grad(loss)
    for i in (0, 17, batch - 1):
        one = grad_one(params, xb[i], yb[i])
        assert all(np.allclose(grads[k][i], one[k]) for k in params)
    sizes = {n: len(tj.make_ir(tj.vmap(tj.grad(loss), in_axes=(None, 0, 0)))(params, x_all[:n], y_all[:n]).eqns)
             for n in (1, 1000)}
    print(f"batched IR: {sizes[1]} equations for a batch of 1, {sizes[1000]} for a batch of 1000")

    t0 = time.perf_counter()
    per_example_grads(params, xb, yb)
    t_vmap = time.perf_counter() - t0
    jit_grad = tj.jit(grad_one)
    jit_grad(params, xb[0], yb[0])
    t0 = time.perf_counter()
    for i in range(batch):
        jit_grad(params, xb[i], yb[i])
    t_loop = time.perf_counter() - t0
    print(f"per-example gradients of {batch} examples: vmap {t_vmap * 1e3:.2f} ms, loop {t_loop * 1e3:.2f} ms")

    for step in range(steps + 1):
        key, k_batch, k_noise = random.split(key, 3)
        idx = random.choice(k_batch, len(x_all), (batch,), replace=False)
        grads = per_example_grads(params, x_all[idx], y_all[idx])
        mean_grad, norms = clipped_mean(grads, clip)
        # Gaussian mechanism: noise scaled to the clipping bound, added once to the batch's mean gradient
        noise = dict(zip(params, random.split(k_noise, len(params))))
        params = {k: p - lr * (mean_grad[k] + random.normal(noise[k], np.shape(p)) * noise_multiplier * clip / batch)
                  for k, p in params.items()}
        if step % 50 == 0:
            logits = tj.jit(tj.vmap(predict, in_axes=(None, 0)))(params, x_all)
            accuracy = np.mean((logits > 0) == (y_all > 0.5))
            print(f"step {step:3d}: gradient norms median {np.median(norms):.3f} max {norms.max():.3f}, "
                  f"{np.mean(norms > clip) * 100:5.1f}% clipped at {clip}, accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
