"""tracejit.example_libraries.stax against jax.example_libraries.stax (same key: same parameters, same outputs),
JAX's mnist_classifier and differentially_private_sgd programs with only their imports changed, and
examples/cnn.py."""
import importlib.util
import pathlib
from itertools import count

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import random
from tracejit.example_libraries import optimizers, stax

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jstax = pytest.importorskip("jax.example_libraries.stax")
joptimizers = pytest.importorskip("jax.example_libraries.optimizers")


def layers(s):
    """(name, layer, input shape) for each layer kind of the stax module s (ours or JAX's)."""
    nchw = ("NCHW", "OIHW", "NCHW")
    return [
        ("Dense", s.Dense(5), (4, 5)),
        ("Conv", s.Conv(3, (3, 2), strides=(2, 1), padding="SAME"), (2, 7, 6, 2)),
        ("GeneralConv NCHW", s.GeneralConv(nchw, 4, (2, 3), padding="VALID"), (2, 3, 6, 5)),
        ("ConvTranspose", s.ConvTranspose(3, (3, 3), strides=(2, 2), padding="SAME"), (2, 4, 5, 2)),
        ("Conv1DTranspose", s.Conv1DTranspose(2, (4,), strides=(3,)), (2, 5, 3)),
        ("BatchNorm", s.BatchNorm(), (4, 3, 3, 5)),
        ("BatchNorm axis 0, no center", s.BatchNorm(axis=0, center=False, beta_init=s.normal(),
                                                    gamma_init=s.normal()), (6, 5)),
        ("BatchNorm no scale", s.BatchNorm(axis=(0, 1), scale=False, beta_init=s.normal()), (4, 3, 5)),
        ("Relu", s.Relu, (3, 4)), ("Tanh", s.Tanh, (3, 4)), ("Exp", s.Exp, (3, 4)), ("Sigmoid", s.Sigmoid, (3, 4)),
        ("LogSoftmax", s.LogSoftmax, (3, 4)), ("Softmax", s.Softmax, (3, 4)),
        ("Flatten", s.Flatten, (2, 3, 4, 5)), ("Identity", s.Identity, (3, 4)),
        ("MaxPool", s.MaxPool((2, 2), (2, 2)), (2, 7, 6, 3)),
        ("MaxPool SAME", s.MaxPool((3, 2), (2, 1), "SAME"), (2, 7, 6, 3)),
        ("SumPool", s.SumPool((2, 3)), (2, 5, 6, 3)),
        ("AvgPool SAME", s.AvgPool((3, 3), (2, 2), "SAME"), (2, 7, 6, 3)),
        ("AvgPool uneven", s.AvgPool((3, 2), (2, 3), "SAME"), (2, 8, 7, 3)),
        ("AvgPool NCHW spec", s.AvgPool((2, 2), (1, 2), "SAME", spec="NCHW"), (2, 3, 5, 6)),
        ("residual", s.serial(s.FanOut(2), s.parallel(s.Dense(5), s.Identity), s.FanInSum), (3, 5)),
        ("concat", s.serial(s.FanOut(3), s.parallel(s.Dense(5), s.Tanh, s.Relu), s.FanInConcat()), (3, 5)),
        ("concat axis 0", s.serial(s.FanOut(2), s.parallel(s.Relu, s.Tanh), s.FanInConcat(axis=0)), (3, 4)),
        ("shape_dependent", s.shape_dependent(lambda shape: s.Dense(shape[-1])), (3, 5)),
        ("Dropout eval", s.Dropout(0.7, mode="test"), (3, 4)),
        ("Dropout train", s.Dropout(0.7), (30, 40)),
    ]


OURS, THEIRS = layers(stax), layers(jstax)


def _close(got, want, **tol):
    got, want = tj.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), **tol)


@pytest.mark.parametrize("i", range(len(OURS)), ids=[name for name, _, _ in OURS])
def test_layer_matches_jax(i):
    """Same key, same input shape: JAX's output shape and parameters (tracejit.random draws JAX's bits); then
    on JAX's parameters, JAX's outputs, eagerly and jitted, with a key for the layers that take one."""
    (_, (init, apply), shape), (_, (j_init, j_apply), _) = OURS[i], THEIRS[i]
    out_shape, params = init(random.PRNGKey(1), shape)
    j_out_shape, j_params = j_init(jax.random.PRNGKey(1), shape)
    assert jax.tree_util.tree_leaves(out_shape) == [int(n) for n in jax.tree_util.tree_leaves(j_out_shape)]
    _close(params, j_params, rtol=1e-12, atol=1e-15)
    x = np.random.default_rng(i).standard_normal(shape)
    want = j_apply(j_params, x, rng=jax.random.PRNGKey(2))
    _close(apply(params, x, rng=random.PRNGKey(2)), want, rtol=1e-10, atol=1e-12)
    _close(tj.jit(lambda p, x, k: apply(p, x, rng=k))(params, x, random.PRNGKey(2)), want, rtol=1e-10, atol=1e-12)
    if not isinstance(want, list):
        assert np.shape(want) == tuple(out_shape)


@pytest.mark.parametrize("name", ["Elu", "Gelu", "Selu", "LeakyRelu", "Softplus"])
def test_activations_from_tracejit_nn(name):
    """These layers apply tracejit.nn's functions of the same name when the layer runs: JAX's values where
    tracejit.nn has the function, a NotImplementedError naming it where it does not (yet)."""
    x = np.linspace(-3, 3, 13)
    _, apply = getattr(stax, name)
    function = {"Elu": "elu", "Gelu": "gelu", "Selu": "selu", "LeakyRelu": "leaky_relu", "Softplus": "softplus"}[name]
    if hasattr(tj.nn, function):
        np.testing.assert_allclose(apply((), x), getattr(jstax, name)[1]((), x), rtol=1e-12, atol=1e-14)
    else:
        with pytest.raises(NotImplementedError, match=function):
            apply((), x)


def test_dropout_needs_a_key():
    with pytest.raises(ValueError, match="PRNG key"):
        stax.Dropout(0.5)[1]((), np.ones(3))


def test_gradients_through_layers_match_jax():
    """grad of a loss through conv, batch norm, pooling, dense: JAX's gradients for every parameter."""
    def net(s):
        return s.serial(s.Conv(3, (3, 3), padding="SAME"), s.BatchNorm(), s.Relu, s.AvgPool((2, 2), (2, 2)),
                        s.ConvTranspose(2, (2, 2), (2, 2)), s.MaxPool((2, 2), (1, 1)), s.Flatten, s.Dense(4),
                        s.LogSoftmax)
    (init, apply), (_, j_apply) = net(stax), net(jstax)
    _, params = init(random.PRNGKey(0), (3, 6, 6, 2))
    x = np.random.default_rng(0).standard_normal((3, 6, 6, 2))
    got = tj.jit(tj.grad(lambda p: tnp.sum(apply(p, x)[:, 0])))(params)
    want = jax.jit(jax.grad(lambda p: jnp.sum(j_apply(p, x)[:, 0])))(params)
    _close(got, want, rtol=1e-9, atol=1e-12)


def mnist_classifier(jit, grad, jnp, random, optimizers, stax, images, labels, num_epochs=3, batch_size=32):
    """JAX's examples/mnist_classifier.py, shrunk (smaller layers, a few epochs of given data): the same program
    runs with JAX's modules or tracejit's."""
    Dense, Relu, LogSoftmax = stax.Dense, stax.Relu, stax.LogSoftmax

    def loss(params, batch):
        inputs, targets = batch
        preds = predict(params, inputs)
        return -jnp.mean(jnp.sum(preds * targets, axis=1))

    def accuracy(params, batch):
        inputs, targets = batch
        target_class = jnp.argmax(targets, axis=1)
        predicted_class = jnp.argmax(predict(params, inputs), axis=1)
        return jnp.mean(predicted_class == target_class)

    init_random_params, predict = stax.serial(Dense(32), Relu, Dense(32), Relu, Dense(10), LogSoftmax)
    rng = random.key(0)
    num_batches = len(images) // batch_size

    def data_stream():
        perm = np.random.RandomState(0).permutation(len(images))
        for i in range(num_batches):
            batch_idx = perm[i * batch_size:(i + 1) * batch_size]
            yield images[batch_idx], labels[batch_idx]

    opt_init, opt_update, get_params = optimizers.momentum(0.05, mass=0.9)

    @jit
    def update(i, opt_state, batch):
        params = get_params(opt_state)
        return opt_update(i, grad(loss)(params, batch), opt_state)

    _, init_params = init_random_params(rng, (-1, 28 * 28))
    opt_state = opt_init(init_params)
    itercount = count()
    for _ in range(num_epochs):
        for batch in data_stream():
            opt_state = update(next(itercount), opt_state, batch)
    params = get_params(opt_state)
    return params, float(accuracy(params, (images, labels)))


def test_mnist_classifier_runs_with_imports_changed():
    """The program trains (accuracy well above chance on separable data) and ends with JAX's parameters: the
    initial parameters are JAX's bits and every step computes what JAX's does, in float64."""
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((10, 28 * 28))
    classes = rng.integers(0, 10, 256)
    images, labels = centers[classes] + 2.0 * rng.standard_normal((256, 28 * 28)), np.eye(10)[classes]
    ours, our_accuracy = mnist_classifier(tj.jit, tj.grad, tnp, random, optimizers, stax, images, labels)
    theirs, their_accuracy = mnist_classifier(jax.jit, jax.grad, jnp, jax.random, joptimizers, jstax, images, labels)
    assert our_accuracy > 0.9 and our_accuracy == their_accuracy
    _close(ours, theirs, rtol=1e-8, atol=1e-10)


def dp_network(stax):
    return stax.serial(
        stax.Conv(16, (8, 8), padding="SAME", strides=(2, 2)), stax.Tanh, stax.MaxPool((2, 2), (1, 1)),
        stax.Conv(32, (4, 4), padding="VALID", strides=(2, 2)), stax.Tanh, stax.MaxPool((2, 2), (1, 1)),
        stax.Flatten, stax.Dense(32), stax.Tanh, stax.Dense(10))


def differentially_private_sgd(jit, grad, vmap, jnp, random, optimizers, stax, tree_util, images, labels,
                               l2_norm_clip=1.5, noise_multiplier=1.1, batch_size=4):
    """JAX's examples/differentially_private_sgd.py, shrunk to two private steps (the privacy accounting, which
    needs TensorFlow Privacy, left out): per-example gradients by vmap(grad), clipped, summed and noised."""
    init_random_params, predict = dp_network(stax)

    def loss(params, batch):
        inputs, targets = batch
        logits = stax.logsoftmax(predict(params, inputs))
        return -jnp.mean(jnp.sum(logits * targets, axis=1))

    def clipped_grad(params, l2_norm_clip, single_example_batch):
        grads = grad(loss)(params, single_example_batch)
        nonempty_grads, tree_def = tree_util.tree_flatten(grads)
        total_grad_norm = jnp.linalg.norm(jnp.array([jnp.linalg.norm(neg.ravel()) for neg in nonempty_grads]))
        divisor = jnp.maximum(total_grad_norm / l2_norm_clip, 1.)
        return tree_util.tree_unflatten(tree_def, [g / divisor for g in nonempty_grads])

    def private_grad(params, batch, rng, l2_norm_clip, noise_multiplier, batch_size):
        clipped_grads = vmap(clipped_grad, (None, None, 0))(params, l2_norm_clip, batch)
        clipped_grads_flat, grads_treedef = tree_util.tree_flatten(clipped_grads)
        aggregated_clipped_grads = [g.sum(0) for g in clipped_grads_flat]
        rngs = random.split(rng, len(aggregated_clipped_grads))
        noised = [g + l2_norm_clip * noise_multiplier * random.normal(r, g.shape)
                  for r, g in zip(rngs, aggregated_clipped_grads)]
        return tree_util.tree_unflatten(grads_treedef, [g / batch_size for g in noised])

    opt_init, opt_update, get_params = optimizers.sgd(0.15)

    @jit
    def private_update(rng, i, opt_state, batch):
        params = get_params(opt_state)
        rng = random.fold_in(rng, i)
        return opt_update(i, private_grad(params, batch, rng, l2_norm_clip, noise_multiplier, batch_size), opt_state)

    key = random.PRNGKey(0)
    _, init_params = init_random_params(key, (-1, 28, 28, 1))
    opt_state = opt_init(init_params)
    itercount = count()
    for i in range(2):
        batch = images[i * batch_size:(i + 1) * batch_size], labels[i * batch_size:(i + 1) * batch_size]
        opt_state = private_update(key, next(itercount), opt_state, (jnp.reshape(batch[0], (-1, 1, 28, 28, 1)),
                                                                     batch[1]))
    return get_params(opt_state)


def test_differentially_private_sgd_runs_with_imports_changed():
    """Without clipping or noise, the private steps (vmap of per-example gradients, summed) are plain SGD steps on
    the batch's gradient; with them, the program still runs. (It also gives JAX's parameters to 1e-16: the same
    bits initialize and noise; that run is left out here, as JAX compiles for ten seconds.)"""
    rng = np.random.default_rng(1)
    images, labels = rng.standard_normal((8, 28 * 28)), np.eye(10)[rng.integers(0, 10, 8)]
    modules = (tj.jit, tj.grad, tj.vmap, tnp, random, optimizers, stax, tj.tree_util, images, labels)
    private = differentially_private_sgd(*modules)
    exact = differentially_private_sgd(*modules, l2_norm_clip=1e9, noise_multiplier=0.0)
    init, predict = dp_network(stax)
    _, params = init(random.PRNGKey(0), (-1, 28, 28, 1))

    def loss(params, inputs, targets):
        return -tnp.mean(tnp.sum(stax.logsoftmax(predict(params, inputs)) * targets, axis=1))
    for i in range(2):
        grads = tj.grad(loss)(params, images[4 * i:4 * i + 4].reshape(-1, 28, 28, 1), labels[4 * i:4 * i + 4])
        params = tj.tree_util.tree_map(lambda p, g: p - 0.15 * g, params, grads)
    _close(exact, params, rtol=1e-10, atol=1e-13)
    for a, b in zip(tj.tree_util.tree_leaves(private), tj.tree_util.tree_leaves(params)):
        assert np.all(np.isfinite(a)) and np.abs(a - b).max() > 1e-3     # noised


def test_example_cnn_learns():
    """examples/cnn.py, shortened: the LeNet-style network learns the synthetic classes well above chance."""
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "cnn.py"
    spec = importlib.util.spec_from_file_location("example_cnn", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.main(epochs=2, train_size=2048) > 0.6
