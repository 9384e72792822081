"""Train a LeNet-5-style CNN with stax and optimizers on synthetic MNIST-shaped data.

The network (issue 19): conv 5x5 -> 6, relu, 2x2 max pool, conv 5x5 -> 16, relu, 2x2 max pool, dense 120 -> 84 ->
10. The data: 28x28 grey images of ten classes, each class a smooth random template, each image its template
shifted by up to two pixels, with a random contrast, under pixel noise three times as strong as the template (one
pixel says little; the shapes the convolutions find say which class). The training step, forward, backward and
the Adam update, is one jitted function; stax initializes the parameters from a tracejit.random key, as JAX's
stax would.

    python examples/cnn.py [--epochs 5] [--train 4096]
"""
import argparse
import time

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import random
from tracejit.example_libraries import optimizers, stax

init_fun, predict = stax.serial(
    stax.Conv(6, (5, 5)), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
    stax.Conv(16, (5, 5)), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
    stax.Flatten, stax.Dense(120), stax.Relu, stax.Dense(84), stax.Relu, stax.Dense(10), stax.LogSoftmax)


def make_data(rng, templates, n):
    """n images (n, 28, 28, 1) float32 and their labels: a class template, shifted, scaled, plus noise."""
    labels = rng.integers(0, len(templates), n)
    shifts = rng.integers(-2, 3, (n, 2))
    images = np.stack([np.roll(templates[c], tuple(s), axis=(0, 1)) for c, s in zip(labels, shifts)])
    images = images * rng.uniform(0.6, 1.4, (n, 1, 1)) + rng.normal(0.0, 3.0, images.shape)
    return images[..., None].astype(np.float32), labels


def make_templates(rng, classes=10, size=28):
    """Smooth random patterns: white noise low-pass filtered in Fourier space, scaled to unit deviation."""
    freq = np.fft.fftfreq(size)
    low_pass = np.exp(-(freq[:, None] ** 2 + freq[None, :] ** 2) / (2 * 0.08 ** 2))
    smooth = np.fft.ifft2(np.fft.fft2(rng.normal(size=(classes, size, size))) * low_pass).real
    return smooth / smooth.std(axis=(1, 2), keepdims=True)


def loss(params, images, labels):
    """Mean cross-entropy of the log-probabilities the network ends with."""
    return -tnp.mean(tnp.take_along_axis(predict(params, images), labels[:, None], axis=1))


def main(epochs=5, train_size=4096, batch=128, seed=0):
    rng = np.random.default_rng(seed)
    templates = make_templates(rng)
    train_images, train_labels = make_data(rng, templates, train_size)
    test_images, test_labels = make_data(rng, templates, 1024)

    _, params = init_fun(random.PRNGKey(seed), (-1, 28, 28, 1))
    params = tj.tree_util.tree_map(lambda p: np.asarray(p, np.float32), params)   # stax draws float64
    opt_init, opt_update, get_params = optimizers.adam(1e-3)

    @tj.jit
    def update(step, opt_state, images, labels):
        value, grads = tj.value_and_grad(loss)(get_params(opt_state), images, labels)
        return opt_update(step, grads, opt_state), value

    @tj.jit
    def accuracy(params, images, labels):
        return tnp.mean(tnp.argmax(predict(params, images), axis=1) == labels)

    opt_state, step = opt_init(params), 0
    start = time.perf_counter()
    print(f"{train_size} training and {len(test_labels)} test images of 28x28, batches of {batch}")
    for epoch in range(1, epochs + 1):
        order, losses = rng.permutation(train_size), []
        for i in range(0, train_size - batch + 1, batch):
            idx = order[i:i + batch]
            opt_state, value = update(step, opt_state, train_images[idx], train_labels[idx])
            losses.append(float(value))
            step += 1
        params = get_params(opt_state)
        print(f"epoch {epoch}  loss {np.mean(losses):.4f}  "
              f"train accuracy {float(accuracy(params, train_images, train_labels)):.3f}  "
              f"test accuracy {float(accuracy(params, test_images, test_labels)):.3f}  "
              f"{time.perf_counter() - start:.1f} s")
    return float(accuracy(get_params(opt_state), test_images, test_labels))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--train", type=int, default=4096, help="number of training images")
    args = parser.parse_args()
    main(args.epochs, args.train)
