"""Train a small MLP on synthetic data with jit(value_and_grad(loss)) and plain SGD.

The data: 2-D points in a checkerboard of two classes, separated by curved boundaries. The whole training step (forward,
backward via reverse-mode AD, and the SGD update) is one traced, compiled function.

    python examples/mlp.py
"""
import itertools
import time

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import random


def init_params(key, sizes):
    keys = random.split(key, len(sizes) - 1)
    return [{"w": random.normal(k, (m, n), np.float32) / np.sqrt(m), "b": np.zeros(n, np.float32)}
            for k, (m, n) in zip(keys, itertools.pairwise(sizes))]


def predict(params, x):
    for layer in params[:-1]:
        x = tnp.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss(params, x, y):
    """Mean softmax cross-entropy of the labels y (one-hot)."""
    logits = predict(params, x)
    return -tnp.mean(tnp.sum(tj.nn.log_softmax(logits, axis=-1) * y, axis=-1))


@tj.jit
def train_step(params, x, y, lr):
    value, grads = tj.value_and_grad(loss)(params, x, y)
    params = tj.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return params, value


def accuracy(params, x, y):
    return float(np.mean(np.argmax(np.asarray(predict(params, x)), -1) == np.argmax(y, -1)))


def make_data(rng, n):
    x = rng.uniform(-2, 2, size=(n, 2)).astype(np.float32)
    labels = (np.sin(2 * x[:, 0]) * np.cos(2 * x[:, 1]) > 0).astype(np.int64)
    return x, np.eye(2, dtype=np.float32)[labels]


def main(steps=1000, batch=128, report=100):
    rng = np.random.default_rng(0)
    x_all, y_all = make_data(rng, 4096)
    params = init_params(random.PRNGKey(0), [2, 32, 32, 2])
    lr = np.float32(0.3)
    print(f"initial   loss {float(loss(params, x_all, y_all)):.4f}  accuracy {accuracy(params, x_all, y_all):.3f}")
    start, recent = time.perf_counter(), []
    for step in range(1, steps + 1):
        idx = rng.integers(0, len(x_all), size=batch)
        params, value = train_step(params, x_all[idx], y_all[idx], lr)
        recent.append(float(value))
        if step % report == 0:
            print(f"step {step:4d}  mean batch loss {np.mean(recent):.4f}  "
                  f"accuracy {accuracy(params, x_all, y_all):.3f}")
            recent = []
    seconds = time.perf_counter() - start
    print(f"{steps} SGD steps in {seconds:.2f} s ({1e3 * seconds / steps:.2f} ms/step, "
          f"compiled signatures: {train_step.cache_info()['entries']})")


if __name__ == "__main__":
    main()
