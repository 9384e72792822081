"""Train a small recurrent network over a sequence with lax.scan and jit(value_and_grad(loss)).

The task: read a noisy sine wave one sample at a time and predict the next sample. The recurrence is one lax.scan, so
the body is traced once (not unrolled over the 50 time steps); reverse mode keeps each step's residuals, stacked along
the scan axis, and runs a reverse scan of the transposed body.

    python examples/rnn_scan.py
"""
import time

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax, random


def init_params(key, hidden):
    k_in, k_h, k_out = random.split(key, 3)
    return {"w_in": random.normal(k_in, (1, hidden), np.float32),
            "w_h": random.normal(k_h, (hidden, hidden), np.float32) * np.float32(0.5 / np.sqrt(hidden)),
            "b": np.zeros(hidden, np.float32),
            "w_out": random.normal(k_out, (hidden, 1), np.float32) / np.float32(np.sqrt(hidden))}


def predict(params, xs):
    """xs: (time, batch, 1) -> predictions of the next sample, (time, batch, 1)."""
    def step(h, x):
        h = tnp.tanh(x @ params["w_in"] + h @ params["w_h"] + params["b"])
        return h, h @ params["w_out"]

    h0 = tnp.zeros((xs.shape[1], params["w_h"].shape[0]), xs.dtype)
    _, ys = lax.scan(step, h0, xs)
    return ys


def loss(params, xs, targets):
    return tnp.mean((predict(params, xs) - targets) ** 2)


@tj.jit
def train_step(params, xs, targets, lr):
    value, grads = tj.value_and_grad(loss)(params, xs, targets)
    return tj.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), value


def make_batch(rng, batch, length):
    phase = rng.uniform(0, 2 * np.pi, size=(1, batch, 1))
    t = np.arange(length + 1, dtype=np.float32).reshape(-1, 1, 1)
    wave = np.sin(0.3 * t + phase) + 0.05 * rng.standard_normal((length + 1, batch, 1))
    return wave[:-1].astype(np.float32), wave[1:].astype(np.float32)


def main(steps=200, batch=32, length=50, report=25):
    rng = np.random.default_rng(0)
    params = init_params(random.PRNGKey(0), hidden=16)
    lr = np.float32(0.1)
    test_x, test_y = make_batch(rng, 256, length)
    print(f"initial   test loss {float(loss(params, test_x, test_y)):.4f}")
    start = time.perf_counter()
    for step in range(1, steps + 1):
        params, value = train_step(params, *make_batch(rng, batch, length), lr)
        if step % report == 0:
            print(f"step {step:4d}  batch loss {float(value):.4f}  test loss {float(loss(params, test_x, test_y)):.4f}")
    seconds = time.perf_counter() - start
    print(f"{steps} steps in {seconds:.2f} s ({1e3 * seconds / steps:.2f} ms/step)")


if __name__ == "__main__":
    main()
