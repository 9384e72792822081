"""A variational autoencoder on synthetic data, every random number from tracejit.random.

The data: 8-D points near a curved 2-D surface (a fixed random map of (sin u, cos u, v, u v), plus noise). The
encoder maps a point to the mean and log-variance of a Gaussian over a 2-D code; a code is drawn from it with
the reparameterisation trick (mean + exp(logvar / 2) * eps, eps = random.normal(key, ...), a constant to grad);
the decoder maps it back. Training maximises the evidence lower bound (ELBO) with Adam. The key is a value:
each step splits it, inside the compiled step, into the next step's key, the minibatch's and the noise's, so a
run is reproducible from its seed (and draws the numbers JAX draws from that seed).

    python examples/vae.py
"""
import time

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import random
from tracejit.nn import initializers

DATA, HIDDEN, CODE = 8, 64, 2


def make_data(key, mixing, n):
    """n points: the surface's features (sin u, cos u, v, u v) times mixing (4 x DATA), plus noise."""
    k_u, k_v, k_noise = random.split(key, 3)
    u, v = random.uniform(k_u, (n,), np.float32, -np.pi, np.pi), random.normal(k_v, (n,), np.float32)
    features = tnp.stack([tnp.sin(u), tnp.cos(u), v, u * v / np.pi], axis=1)
    return features @ mixing + 0.05 * random.normal(k_noise, (n, DATA), np.float32)


def init_params(key):
    sizes = {"enc": (DATA, HIDDEN), "enc_out": (HIDDEN, 2 * CODE), "dec": (CODE, HIDDEN), "dec_out": (HIDDEN, DATA)}
    keys = random.split(key, len(sizes))
    init = initializers.glorot_normal()
    return {name: {"w": init(k, shape, np.float32), "b": np.zeros(shape[1], np.float32)}
            for k, (name, shape) in zip(keys, sizes.items())}


def dense(layer, x):
    return x @ layer["w"] + layer["b"]


def neg_elbo(params, x, key):
    """The negative ELBO per point: Gaussian reconstruction error (unit variance) + KL(q(z|x) || N(0, I))."""
    stats = dense(params["enc_out"], tnp.tanh(dense(params["enc"], x)))
    mean, logvar = stats[:, :CODE], stats[:, CODE:]
    z = mean + tnp.exp(0.5 * logvar) * random.normal(key, mean.shape, np.float32)
    x_hat = dense(params["dec_out"], tnp.tanh(dense(params["dec"], z)))
    reconstruction = 0.5 * tnp.sum((x - x_hat) ** 2, axis=1)
    kl = 0.5 * tnp.sum(tnp.exp(logvar) + mean ** 2 - 1.0 - logvar, axis=1)
    return tnp.mean(reconstruction + kl)


@tj.jit
def train_step(params, moments, step, key, data, lr):
    """One Adam step on a random minibatch of 128 points; returns the next key with the new state."""
    key, k_batch, k_noise = random.split(key, 3)
    batch = data[random.randint(k_batch, (128,), 0, data.shape[0])]
    value, grads = tj.value_and_grad(neg_elbo)(params, batch, k_noise)
    m, v = moments
    m = tj.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
    v = tj.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
    scale = lr * tnp.sqrt(1 - 0.999 ** step) / (1 - 0.9 ** step)
    params = tj.tree_util.tree_map(lambda p, m, v: p - scale * m / (tnp.sqrt(v) + 1e-8), params, m, v)
    return params, (m, v), key, value


def main(steps=2000, report=250, seed=0):
    key = random.PRNGKey(seed)
    key, k_map, k_data, k_test, k_init, k_eval = random.split(key, 6)
    mixing = random.normal(k_map, (4, DATA), np.float32)
    data, test = make_data(k_data, mixing, 4096), make_data(k_test, mixing, 1024)
    params = init_params(k_init)
    zeros = tj.tree_util.tree_map(np.zeros_like, params)
    moments, lr = (zeros, zeros), np.float32(3e-3)
    evaluate = tj.jit(neg_elbo)
    first = float(evaluate(params, test, k_eval))
    print(f"initial   test -ELBO {first:.3f}")
    start, recent = time.perf_counter(), []
    for step in range(1, steps + 1):
        params, moments, key, value = train_step(params, moments, np.float32(step), key, data, lr)
        recent.append(float(value))
        if step % report == 0:
            print(f"step {step:4d}  mean batch -ELBO {np.mean(recent):.3f}  "
                  f"test -ELBO {float(evaluate(params, test, k_eval)):.3f}")
            recent = []
    seconds = time.perf_counter() - start
    print(f"{steps} Adam steps in {seconds:.2f} s ({1e3 * seconds / steps:.2f} ms/step)")
    return first, float(evaluate(params, test, k_eval))


if __name__ == "__main__":
    main()
