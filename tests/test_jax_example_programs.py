"""Pieces of JAX's own example programs (jax-ml/jax examples/: control.py, hmm_em.py,
spmd_mnist_classifier_fromscratch.py, differentially_private_sgd.py) and autograd's (fluidsim.py) run under
tracejit with only their imports changed, checked against JAX (64-bit, as conftest sets it) under jit."""
import collections
import functools
import itertools

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def test_jacobian_is_jacrev():
    """control.py: `from jax import jacobian`; jax.jacobian is jax.jacrev."""
    assert tj.jacobian is tj.jacrev

    def dynamics(t, x, u):
        return x * x - u * tnp.sin(x) / (t + 1.0)

    def dynamics_jax(t, x, u):
        return x * x - u * jnp.sin(x) / (t + 1.0)

    x, u = np.array([0.2, -0.7]), np.array([0.5, 1.5])
    got = tj.jit(tj.jacobian(dynamics, argnums=(1, 2)))(2.0, x, u)
    want = jax.jit(jax.jacobian(dynamics_jax, argnums=(1, 2)))(2.0, x, u)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12)


LqrSpec = collections.namedtuple("LqrSpec", "Q q R r M A B")


def _lqr_solve(m, lax, spec):
    """control.py's lqr_solve (fori_loop over a namedtuple carry, x.at[t].set, linalg.solve)."""
    T, control_dim, _ = spec.R.shape
    _, state_dim, _ = spec.Q.shape
    K = m.zeros((T, control_dim, state_dim))
    k = m.zeros((T, control_dim))

    def rev_loop(t_, state):
        t = T - t_ - 1
        spec, P, p, K, k = state
        Q, q, R, r, M, A, B = (getattr(spec, f)[t] for f in "QqRrMAB")
        AtP = A.T @ P
        BtP = B.T @ P
        G = R + BtP @ B
        H = BtP @ A + M.T
        h = r + B.T @ p
        K_ = -m.linalg.solve(G + 1e-7 * m.eye(G.shape[0]), H)
        k_ = -m.linalg.solve(G + 1e-7 * m.eye(G.shape[0]), h)
        P_ = Q + AtP @ A + K_.T @ H
        p_ = q + A.T @ p + K_.T @ h
        return spec, P_, p_, K.at[t].set(K_), k.at[t].set(k_)

    _, _, _, K, k = lax.fori_loop(0, T, rev_loop, (spec, spec.Q[-1], spec.q[-1], K, k))
    return K, k


def test_control_lqr_solve_against_jax():
    rng = np.random.default_rng(0)
    T, d = 6, 2
    spec = LqrSpec(*(rng.standard_normal(s) * 0.3 for s in
                     [(T, d, d), (T, d), (T, d, d), (T, d), (T, d, d), (T, d, d), (T, d, d)]))
    spec = spec._replace(Q=spec.Q + np.eye(d) * 2, R=spec.R + np.eye(d) * 2)
    want = [np.asarray(w) for w in jax.jit(lambda s: _lqr_solve(jnp, jax.lax, s))(spec)]
    got = tj.jit(lambda s: _lqr_solve(tnp, tj.lax, s))(spec)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def _hmm_log_normalizer(m, lax, logsumexp, params, seq):
    """hmm_em.py: the forward algorithm as a scan, a traced observation indexing a traced matrix."""
    log_pi, log_A, log_B = params

    def marginalize(log_alpha, obs):
        return logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, obs], None

    log_alpha, _ = lax.scan(marginalize, log_pi, seq)
    return logsumexp(log_alpha)


def test_hmm_em_step_against_jax():
    from jax.scipy.special import logsumexp as jlse

    from tracejit.scipy.special import logsumexp as tlse
    rng = np.random.default_rng(1)
    params = [rng.standard_normal(4), rng.standard_normal((4, 4)), rng.standard_normal((4, 6))]
    seq = rng.integers(0, 6, 30)

    def em(m, lax, lse, grad):
        def update(i, params):
            moments = grad(lambda p: _hmm_log_normalizer(m, lax, lse, p, seq))(params)
            return [m.log(x / x.sum(-1, keepdims=True)) for x in moments]
        return lambda params: lax.fori_loop(0, 3, update, params)

    want = [np.asarray(w) for w in jax.jit(em(jnp, jax.lax, jlse, jax.grad))(params)]
    got = tj.jit(em(tnp, tj.lax, tlse, tj.grad))(params)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)


def _spmd_update(api, m, lax, logsumexp, step_size=0.001):
    """spmd_mnist_classifier_fromscratch.py's data-parallel step: per-device gradients of a tanh MLP's
    cross-entropy, summed over the pmapped 'batch' axis with lax.psum, an SGD update."""
    def predict(params, inputs):
        activations = inputs
        for w, b in params[:-1]:
            activations = m.tanh(m.dot(activations, w) + b)
        logits = m.dot(activations, params[-1][0]) + params[-1][1]
        return logits - logsumexp(logits, axis=1, keepdims=True)

    def loss(params, batch):
        inputs, targets = batch
        return -m.mean(predict(params, inputs) * targets)

    @functools.partial(api.pmap, axis_name="batch")
    def spmd_update(params, batch):
        grads = api.grad(loss)(params, batch)
        grads = [(lax.psum(dw, "batch"), lax.psum(db, "batch")) for dw, db in grads]
        return [(w - step_size * dw, b - step_size * db) for (w, b), (dw, db) in zip(params, grads)]

    return spmd_update


def test_spmd_mnist_step_with_pmap_against_jax():
    """The batch reshaped to (device_count, per-device, ...) and the parameters replicated, as the example does."""
    from jax.scipy.special import logsumexp

    import tracejit.scipy.special as tss

    rng = np.random.RandomState(0)
    sizes = [12, 16, 16, 10]
    params = [(0.1 * rng.randn(a, b), 0.1 * rng.randn(b)) for a, b in itertools.pairwise(sizes)]
    images, labels = rng.randn(8, 12), np.eye(10)[rng.randint(0, 10, 8)]
    assert tj.device_count() == jax.device_count() == 1
    shape = (tj.device_count(), 8 // tj.device_count())
    batch = (images.reshape(shape + (12,)), labels.reshape(shape + (10,)))
    replicated = tj.tree_util.tree_map(lambda x: np.broadcast_to(x, (tj.device_count(),) + x.shape), params)
    ours = _spmd_update(tj, tnp, tj.lax, tss.logsumexp)(replicated, batch)
    theirs = _spmd_update(jax, jnp, jax.lax, logsumexp)(replicated, batch)
    for (w, b), (jw, jb) in zip(ours, theirs):
        np.testing.assert_allclose(w, jw, rtol=1e-12)
        np.testing.assert_allclose(b, jb, rtol=1e-12)


def _fluid_loss(J, m, v, smoke, target, steps=2, iterations=2):
    """autograd's examples/fluidsim.py: semi-Lagrangian advection (floor, astype(int), mod, fancy indexing with
    bilinear weights) and a Jacobi pressure projection (roll), differentiated through the unrolled steps (fewer
    than its 10 x 10: unrolled, at 3 x 10, XLA took 20 s to compile it and tracejit 10)."""
    def project(vx, vy):
        h = 1.0 / vx.shape[0]
        div = -0.5 * h * (m.roll(vx, -1, axis=0) - m.roll(vx, 1, axis=0) + m.roll(vy, -1, axis=1) - m.roll(vy, 1, axis=1))
        p = m.zeros(vx.shape)
        for _ in range(iterations):
            p = (div + m.roll(p, 1, axis=0) + m.roll(p, -1, axis=0) + m.roll(p, 1, axis=1) + m.roll(p, -1, axis=1)) / 4.0
        return (vx - 0.5 * (m.roll(p, -1, axis=0) - m.roll(p, 1, axis=0)) / h,
                vy - 0.5 * (m.roll(p, -1, axis=1) - m.roll(p, 1, axis=1)) / h)

    def advect(f, vx, vy):
        rows, cols = f.shape
        cell_ys, cell_xs = m.meshgrid(m.arange(rows), m.arange(cols))
        xs, ys = (cell_xs - vx).ravel(), (cell_ys - vy).ravel()
        left, top = m.floor(xs).astype(int), m.floor(ys).astype(int)
        rw, bw = xs - left, ys - top
        left, top = m.mod(left, rows), m.mod(top, cols)
        right, bottom = m.mod(left + 1, rows), m.mod(top + 1, cols)
        flat = ((1 - rw) * ((1 - bw) * f[left, top] + bw * f[left, bottom])
                + rw * ((1 - bw) * f[right, top] + bw * f[right, bottom]))
        return m.reshape(flat, (rows, cols))

    vx, vy = v
    for _ in range(steps):
        vx, vy = project(advect(vx, vx, vy), advect(vy, vx, vy))
        smoke = advect(smoke, vx, vy)
    return m.mean((smoke - target) ** 2)


def test_autograd_fluidsim_gradient_against_jax():
    rng = np.random.default_rng(0)
    v = (rng.standard_normal((16, 16)) * 0.1, rng.standard_normal((16, 16)) * 0.1)
    smoke, target = np.cos(np.linspace(0, 5, 256)).reshape(16, 16), np.sin(np.linspace(0, 3, 256)).reshape(16, 16)
    got = tj.jit(tj.value_and_grad(functools.partial(_fluid_loss, tj, tnp)))(v, smoke, target)
    want = jax.jit(jax.value_and_grad(functools.partial(_fluid_loss, jax, jnp)))(v, smoke, target)
    for g, w in zip(tj.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10, atol=1e-14)


def _private_grads(J, m, params, xs, ys, key):
    """differentially_private_sgd.py: per-example gradients (vmap of grad), each clipped to an l2 norm of 1 over
    all its leaves, summed, plus Gaussian noise from the key."""
    def loss(p, x, y):
        logits = x @ p["w"] + p["b"]
        return -m.sum(y * (logits - J.nn.logsumexp(logits)))

    def clipped(p, x, y):
        g = J.grad(loss)(p, x, y)
        leaves, tree = J.tree_util.tree_flatten(g)
        norm = m.linalg.norm(m.array([m.linalg.norm(leaf.ravel()) for leaf in leaves]))
        return J.tree_util.tree_unflatten(tree, [leaf / m.maximum(norm, 1.0) for leaf in leaves])

    summed = J.tree_util.tree_map(lambda g: m.sum(g, 0), J.vmap(clipped, (None, 0, 0))(params, xs, ys))
    keys = J.random.split(key, len(J.tree_util.tree_leaves(summed)))
    leaves, tree = J.tree_util.tree_flatten(summed)
    return J.tree_util.tree_unflatten(tree, [g + 0.1 * J.random.normal(k, g.shape) for g, k in zip(leaves, keys)])


def test_differentially_private_sgd_gradients_against_jax():
    rng = np.random.default_rng(2)
    params = {"w": rng.standard_normal((5, 3)), "b": np.zeros(3)}
    xs, ys = rng.standard_normal((8, 5)), np.eye(3)[rng.integers(0, 3, 8)]
    got = tj.jit(functools.partial(_private_grads, tj, tnp))(params, xs, ys, tj.random.PRNGKey(7))
    want = jax.jit(functools.partial(_private_grads, jax, jnp))(params, xs, ys, jax.random.PRNGKey(7))
    for g, w in zip(tj.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10, atol=1e-12)
