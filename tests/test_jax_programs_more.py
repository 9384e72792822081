"""Small JAX programs, each run unchanged (jax -> tracejit, jax.numpy -> tracejit.numpy) under both libraries
and compared: values and derivatives. Each was written as a new user would write it; those that failed in
tracejit at first say what was missing."""
import functools

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def both(program, *args):
    """program(J, m, *args) under JAX and under tracejit: (JAX's leaves as NumPy arrays, tracejit's)."""
    want = jax.tree_util.tree_leaves(program(jax, jnp, *args))
    got = tj.tree_util.tree_leaves(program(tj, tnp, *args))
    assert len(got) == len(want)
    return [np.asarray(w) for w in want], [np.asarray(g) for g in got]


def assert_same(program, *args, rtol=1e-10, atol=1e-12):
    want, got = both(program, *args)
    for w, g in zip(want, got):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def _gamma_elbo(J, m, log_alpha, log_b):
    """A Gamma variational family's reparameterised ELBO for Poisson counts, and Dirichlet samples (log-space
    gamma draws) in the same loss: gradients in the shape parameters (random_gamma_grad; tracejit raised). (XLA
    takes 4 to 5 s to compile each gamma sampler's derivative: one of each kind.)"""
    key = J.random.key(0)
    counts = m.array([1.0, 0.0, 3.0, 2.0])

    def elbo(log_alpha, log_b):
        alpha, b = m.exp(log_alpha), m.exp(log_b)
        rates = J.random.gamma(key, alpha, (16,)) / b
        log_lik = m.sum(counts * m.log(rates[:, None]) - rates[:, None], axis=1)
        w = J.random.dirichlet(J.random.fold_in(key, 2), m.stack([alpha, b, 1.0 + 0 * b]))
        return m.mean(log_lik) + w @ m.arange(3.0)

    return J.jit(J.value_and_grad(elbo, argnums=(0, 1)))(log_alpha, log_b)


def test_gamma_family_reparameterised_gradients():
    assert_same(_gamma_elbo, 0.4, -0.3, rtol=1e-8)


def _periodic_interp(J, m, x, xp, fp):
    """Angles interpolated on a circle (interp's period: tracejit raised) and bucketed with searchsorted's and
    digitize's method= (tracejit took no method), under vmap, with gradients in the knots' values and the
    points."""
    def loss(x, fp):
        y = m.interp(x, xp, fp, period=2 * m.pi)
        buckets = J.vmap(lambda row: m.searchsorted(m.sort(xp), row, side="right", method="compare_all"))(x)
        bins = m.digitize(x, m.array([-2.0, 0.0, 2.0]), method="sort")
        return m.sum(y ** 2 * (1.0 + buckets) + bins)

    return loss(x, fp), J.grad(loss, argnums=(0, 1))(x, fp)


def test_interp_with_period_and_searchsorted_method():
    rng = np.random.default_rng(0)
    xp = np.array([0.3, 2.0, 4.5, 1.0, 6.0])
    assert_same(_periodic_interp, rng.uniform(-7, 7, (3, 4)), xp, rng.standard_normal(5))


def _symbolic_zero_rules(J, m, xs, seen):
    """custom_vjp.defvjp(..., symbolic_zeros=True) and custom_jvp.defjvp(..., symbolic_zeros=True): the rules
    skip the work for unperturbed inputs and unused outputs (tracejit took no symbolic_zeros). `seen` records
    what the rules were given: which primals were perturbed, which (co)tangents were symbolic zeros."""
    SymbolicZero = J.custom_derivatives.SymbolicZero

    @J.custom_vjp
    def scaled_sin(x, y):
        return x * y, m.sin(x)

    def fwd(x, y):
        seen.append(("fwd", x.perturbed, y.perturbed))
        return scaled_sin(x.value, y.value), (x.value, y.value)

    def bwd(res, cts):
        (x, y), (c_prod, c_sin) = res, cts
        seen.append(("bwd",) + tuple(isinstance(c, SymbolicZero) for c in cts))
        c_prod = 0.0 if isinstance(c_prod, SymbolicZero) else c_prod
        c_sin = 0.0 if isinstance(c_sin, SymbolicZero) else c_sin * m.cos(x)
        return c_prod * y + c_sin, c_prod * x

    scaled_sin.defvjp(fwd, bwd, symbolic_zeros=True)

    @J.custom_jvp
    def bilinear(x, y):
        return x * m.tanh(y)

    def bilinear_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        seen.append(("jvp",) + tuple(isinstance(t, SymbolicZero) for t in tangents))
        out = 0.0 if isinstance(tx, SymbolicZero) else tx * m.tanh(y)
        return bilinear(x, y), out if isinstance(ty, SymbolicZero) else out + x * ty / m.cosh(y) ** 2

    bilinear.defjvp(bilinear_jvp, symbolic_zeros=True)
    return (J.grad(lambda x, y: scaled_sin(x, y)[0], argnums=(0, 1))(1.5, 2.0),
            J.grad(lambda x: scaled_sin(x, 2.0)[1])(1.5),
            J.jit(J.vmap(J.grad(lambda x, y: m.sum(m.stack(scaled_sin(x, y)))), (0, None)))(xs, 3.0),
            J.grad(bilinear, argnums=1)(1.2, 0.4), J.vmap(J.grad(bilinear), (0, None))(xs, 0.7))


def test_custom_rules_with_symbolic_zeros():
    seen = {"jax": [], "tracejit": []}
    xs = np.array([0.5, 1.0, -2.0])
    want = jax.tree_util.tree_leaves(_symbolic_zero_rules(jax, jnp, xs, seen["jax"]))
    got = tj.tree_util.tree_leaves(_symbolic_zero_rules(tj, tnp, xs, seen["tracejit"]))
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12)
    assert seen["tracejit"] == seen["jax"]
    assert ("bwd", False, True) in seen["jax"] and ("jvp", True, False) in seen["jax"]


def _ordered_params_training(J, m, X, y):
    """Logistic regression whose parameters are an OrderedDict (a pytree in JAX; tracejit took it for a leaf)
    and whose loss is a custom_jvp softplus with its derivative given by defjvps (tracejit had no defjvps), 20
    steps of gradient descent in a fori_loop, then the Hessian in the weights; a defaultdict of statistics."""
    import collections

    @J.custom_jvp
    def softplus(x):
        return m.where(x > 30, x, m.log1p(m.exp(m.minimum(x, 30.0))))

    softplus.defjvps(lambda t, ans, x: t * J.nn.sigmoid(x))

    def loss(p):
        return m.mean(softplus(-(X @ p["w"] + p["b"]) * y))

    def step(i, p):
        return J.tree_util.tree_map(lambda a, g: a - 0.5 * g, p, J.grad(loss)(p))

    params = J.lax.fori_loop(0, 20, step, collections.OrderedDict(w=m.zeros(X.shape[1]), b=0.0))
    paths = [J.tree_util.keystr(k) for k, _ in J.tree_util.tree_flatten_with_path(params)[0]]
    stats = collections.defaultdict(float, {"loss": loss(params), "norm": m.linalg.norm(params["w"])})
    stats = J.jit(lambda s: J.tree_util.tree_map(lambda v: v * 2, s))(stats)
    hess = J.hessian(lambda w: loss(collections.OrderedDict(w=w, b=params["b"])))(params["w"])
    assert list(params) == ["w", "b"] and type(params) is collections.OrderedDict
    return params, paths, stats, hess


def test_ordered_dict_parameters_and_defjvps():
    rng = np.random.default_rng(1)
    X = np.concatenate([rng.standard_normal((6, 2)), [[100.0, 40.0]]])
    want, got = both(_ordered_params_training, X, np.where(rng.random(7) > 0.5, 1.0, -1.0))
    assert [str(w) for w in want[2:4]] == [str(g) for g in got[2:4]]      # the key paths, in insertion order
    for w, g in zip(want[:2] + want[4:], got[:2] + got[4:], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10)


def _table_updates(J, m, table, rows):
    """An embedding table updated in place the JAX way: x.at[...].subtract/divide/power/apply/mul (tracejit had
    only set, add, min, max, multiply and get) at repeated rows, and a tuple inside the index ((0, 2), :2), which
    NumPy and JAX read as an integer array (tracejit raised IndexError)."""
    def update(t):
        t = t.at[rows].subtract(0.1 * t[rows])
        t = t.at[(0, 2), :2].divide(m.array([2.0, 4.0]))
        t = t.at[:, -1].power(2)
        return t.at[1].mul(3.0) + t[(1, 3), 0].sum()

    applied = J.jit(lambda t: update(t).at[rows, 1:].apply(m.tanh))(table)      # (JAX has no derivative of apply)
    return applied, J.grad(lambda t: m.sum(J.jit(update)(t) ** 2))(table)


def test_at_update_methods_and_tuple_indices():
    rng = np.random.default_rng(2)
    assert_same(_table_updates, rng.standard_normal((5, 3)), np.array([3, 0, 3, 4]))


def _keyword_options(J, m, params, x, y):
    """A loss whose options come as keywords, as Flax-style code passes them: grad(loss)(params, x, y,
    training=True, rate=0.5), the loss jitted with static_argnames. JAX's grad hands keyword arguments to the
    function as they are; tracejit traced them, so a jitted loss got a tracer for its static `training`."""
    @functools.partial(J.jit, static_argnames=("training", "rate"))
    def loss(p, x, y, *, training=False, rate=0.0, key=None):
        h = m.tanh(x @ p["w1"])
        if training:
            keep = J.random.bernoulli(key, 1.0 - rate, h.shape)
            h = m.where(keep, h / (1.0 - rate), 0.0)
        return m.mean((h @ p["w2"] - y) ** 2)

    key = J.random.key(3)
    return (J.grad(loss)(params, x, y, training=True, rate=0.5, key=key),
            J.value_and_grad(loss)(params, x, y, training=False),
            J.jacrev(loss)(params, x, y, training=True, rate=0.25, key=key),
            J.hessian(lambda w2, **kw: loss({"w1": params["w1"], "w2": w2}, x, y, **kw))(params["w2"], training=False))


def test_keyword_arguments_pass_through_grad():
    rng = np.random.default_rng(3)
    params = {"w1": rng.standard_normal((3, 4)), "w2": rng.standard_normal((4, 2))}
    assert_same(_keyword_options, params, rng.standard_normal((5, 3)), rng.standard_normal((5, 2)))


def _key_grid_noise(J, m, x):
    """Per-layer, per-unit typed keys laid out as a grid (split(...).reshape, .T, [..., i], ravel, squeeze: key
    arrays' shape methods, which tracejit's lacked), drawn from under jit and two vmaps, and the noise's
    gradient through a scan over layers."""
    keys = J.random.split(J.random.key(11), 12).reshape(3, 4)            # (layers, units)

    @J.jit
    def forward(x, keys):
        noise = J.vmap(J.vmap(lambda k: J.random.normal(k)))(keys)        # (3, 4)
        def layer(h, kn):
            k, n = kn
            return m.tanh(h * (1.0 + 0.1 * n) + J.random.uniform(k, h.shape)), None
        out, _ = J.lax.scan(layer, x, (keys.T[..., 0].reshape(4, 1).squeeze(1)[:3], noise[:, 0]))
        return m.sum(out ** 2), noise

    firsts = J.random.key_data(keys[..., 0].ravel())
    return forward(x, keys), J.grad(lambda x: forward(x, keys)[0])(x), firsts, J.random.key_data(keys.T.copy())


def test_typed_key_grid_shape_methods():
    assert_same(_key_grid_noise, np.array([0.3, -0.2, 0.8]))


def _ranked_scores(J, m, scores):
    """A leaderboard: jnp.sort and jnp.argsort with descending=True (JAX's keyword; tracejit took none), ties
    kept in their original order by the stable argsort, under vmap, and a rank-weighted loss's gradient."""
    order = J.vmap(lambda s: m.argsort(s, descending=True))(scores)
    top = m.sort(scores, axis=1, descending=True)[:, :3]
    loss = J.grad(lambda s: m.sum(m.sort(s, axis=None, descending=True) * 0.9 ** m.arange(s.size)))(scores)
    return order, top, m.argsort(scores, axis=0, descending=True, stable=False), loss


def test_descending_sorts():
    scores = np.array([[3.0, 1.0, 3.0, 2.0, 1.0], [0.5, 4.0, 4.0, -1.0, 0.0]])
    assert_same(_ranked_scores, scores)


def _env_keys(J, m, start):
    """Per-environment keys in a rollout (an RL loop's pattern): keys of finished episodes replaced through
    jnp.where, agents' keys joined with jnp.stack and jnp.concatenate, a key broadcast to all environments
    (jnp.broadcast_to, expand_dims): tracejit.numpy took no key arrays."""
    R = J.random

    def step(carry, t):
        keys, pos = carry
        noise = J.vmap(lambda k: R.normal(R.fold_in(k, t)))(keys)
        pos = pos + noise
        done = m.abs(pos) > 1.0
        fresh = R.split(R.fold_in(R.key(99), t), keys.shape[0])
        return (m.where(done, fresh, keys), m.where(done, 0.0, pos)), pos

    keys = m.concatenate([R.split(R.key(1), 2), m.broadcast_to(R.key(2), (2,))])
    (keys, pos), path = J.jit(lambda c: J.lax.scan(step, c, m.arange(6)))((keys, start))
    pair = m.stack([keys[0], keys[-1]], axis=-1)
    return path, pos, R.key_data(keys), R.key_data(pair), R.key_data(m.expand_dims(keys, (0, -1)))


def test_key_arrays_through_numpy_joins():
    assert_same(_env_keys, np.array([0.0, 0.5, -0.5, 0.9]))


def _hutchinson(J, m, w, probes):
    """A Hutchinson estimate of a network's Jacobian trace (a continuous normalising flow's divergence) with
    jax.linearize(..., has_aux=True) carrying the activations out, and jax.jvp(..., has_aux=True) for the
    exact diagonal: tracejit's jvp and linearize took no has_aux."""
    def net(x):
        h = m.tanh(w @ x)
        return w.T @ h, {"h": h, "norm": m.sum(h ** 2)}

    x = m.array([0.3, -0.1, 0.5])
    y, f_jvp, aux = J.linearize(net, x, has_aux=True)
    estimate = m.mean(J.vmap(lambda v: v @ f_jvp(v))(probes))
    diag = [J.jvp(net, (x,), (e,), has_aux=True) for e in m.eye(3)]
    exact = sum(t[i] for i, (_, t, _) in enumerate(diag))
    return y, aux, estimate, exact, diag[1][2]["norm"], J.jit(lambda x: J.jvp(net, (x,), (x,), has_aux=True))(x)


def test_jvp_and_linearize_with_aux():
    rng = np.random.default_rng(4)
    assert_same(_hutchinson, rng.standard_normal((4, 3)), rng.choice([-1.0, 1.0], (8, 3)))


def _ragged_means(J, m, values, lengths):
    """Ragged sequences packed in one buffer, their segment ids made under jit from traced lengths with
    jnp.repeat(..., total_repeat_length=) (tracejit required concrete repeats and took no such keyword), the
    per-sequence means by segment_sum, their gradient in the values; and rows of a matrix repeated to a fixed
    length, vmapped over the counts."""
    @J.jit
    def means(values, lengths):
        ids = m.repeat(m.arange(lengths.shape[0]), lengths, total_repeat_length=values.shape[0])
        sums = J.ops.segment_sum(values, ids, num_segments=lengths.shape[0])
        return sums / m.maximum(lengths, 1), ids

    rows = J.vmap(lambda r: m.repeat(values.reshape(4, 2), r, axis=0, total_repeat_length=6))(
        m.array([[1, 2, 0, 3], [2, 2, 2, 2]]))
    return means(values, lengths), J.grad(lambda v: m.sum(means(v, lengths)[0] ** 2))(values), rows


def test_repeat_with_total_repeat_length():
    assert_same(_ragged_means, np.linspace(-1.0, 2.0, 8), np.array([3, 0, 4, 1]))



class _Dense:
    """A layer class made a pytree the JAX way, with keys for its children (register_pytree_node's
    flatten_with_keys_func, which tracejit's register_pytree_node did not take)."""

    def __init__(self, w, b):
        self.w, self.b = w, b


_REGISTERED = set()         # the libraries whose registries hold _Dense


def _decay_by_path(J, m, w, b, x):
    """Weight decay on the leaves whose key path ends in '.w', found with tree_map_with_path over registered
    layers, inside a jitted gradient step."""
    T = J.tree_util
    if J.__name__ not in _REGISTERED:
        T.register_pytree_node(_Dense, lambda d: ((d.w, d.b), None), lambda _, c: _Dense(*c),
                               lambda d: (((T.GetAttrKey("w"), d.w), (T.GetAttrKey("b"), d.b)), None))
        _REGISTERED.add(J.__name__)

    def loss(layers):
        h = x
        for layer in layers:
            h = m.tanh(h @ layer.w + layer.b)
        return m.sum(h ** 2)

    @J.jit
    def step(layers):
        grads = J.grad(loss)(layers)
        decayed = T.tree_map_with_path(lambda path, g, p: g + 0.1 * p if T.keystr(path).endswith(".w") else g,
                                       grads, layers)
        return T.tree_map(lambda p, g: p - 0.5 * g, layers, decayed)

    layers = step([_Dense(w, b), _Dense(w.T, b[:2])])
    return T.tree_leaves(layers), [T.keystr(p) for p, _ in T.tree_flatten_with_path(layers)[0]]


def test_register_pytree_node_with_keys():
    rng = np.random.default_rng(5)
    want, got = both(_decay_by_path, rng.standard_normal((2, 3)), np.array([0.1, 0.0, -0.2]), rng.standard_normal((4, 2)))
    assert [str(w) for w in want[4:]] == [str(g) for g in got[4:]] == ["[0].w", "[0].b", "[1].w", "[1].b"]
    for w, g in zip(want[:4], got[:4], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10)


def _state_jacobian(J, m, state):
    """The Jacobian of a simulation step whose state dict carries an integer step counter:
    jax.jacrev(..., allow_int=True) (tracejit's jacrev took no allow_int) gives the counter zeros of its dtype."""
    def step(s):
        dt = 0.1 / (1 + s["n"])
        return {"q": s["q"] + dt * s["p"], "p": s["p"] - dt * m.sin(s["q"]), "n": s["n"] + 1}

    def flat(s):
        out = step(s)
        return m.concatenate([out["q"], out["p"]])

    jac = J.jacrev(flat, allow_int=True)(state)
    return jac["q"], jac["p"], jac["n"], jac["n"].dtype == state["n"].dtype


def test_jacrev_allow_int():
    assert_same(_state_jacobian, {"q": np.array([0.1, 0.5]), "p": np.array([1.0, -0.3]), "n": np.array([2, 5])})


def _expert_routing(J, m, gates, h):
    """Mixture-of-experts routing: the top two experts of each token from gates laid out (experts, tokens),
    lax.top_k along axis 0 (JAX's axis=; tracejit's top_k had only the last axis), their softmax weights, the
    combined outputs and the gradient in the gates."""
    def combine(gates):
        weights, experts = J.lax.top_k(gates, 2, axis=0)                   # (2, tokens)
        weights = J.nn.softmax(weights, axis=0)
        picked = m.take_along_axis(h, experts[..., None], axis=0)         # (2, tokens, features)
        return m.sum(weights[..., None] * picked, axis=0), experts

    out, experts = combine(gates)
    return out, experts, J.grad(lambda g: m.sum(combine(g)[0] ** 2))(gates)


def test_top_k_along_an_axis():
    rng = np.random.default_rng(6)
    assert_same(_expert_routing, rng.standard_normal((4, 5)), rng.standard_normal((4, 5, 3)))


def _array_methods(J, m, x):
    """jax.Array methods on traced values that tracejit's tracers lacked: mT, itemsize, nbytes, copy, diagonal,
    trace, ptp, argpartition, choose, compress and searchsorted (the last two taking the array as JAX's do)."""
    @J.jit
    def f(x):
        batch = m.stack([x, 2 * x])
        picked = m.argsort(x[0]).choose([x[0], x[1], x[2]], mode="clip")
        return (batch.mT, batch.diagonal(axis1=1, axis2=2), x.trace(offset=1), x.ptp(axis=0), x.copy() * 2,
                m.sort(x[0]).searchsorted(x[1], side="right"), x[:, 0].compress(x[:, 1] > 0, size=2),
                m.take_along_axis(x, x.argpartition(1, axis=1)[:, :1], axis=1), picked, x.itemsize + x.nbytes)

    def loss(x):
        out = f(x)
        return m.sum(out[0] ** 2) + out[2] + m.sum(out[3] * out[8])

    return f(x), J.grad(loss)(x)


def test_array_methods_on_tracers():
    rng = np.random.default_rng(7)
    assert_same(_array_methods, rng.standard_normal((3, 3)))


def _shapes_of_a_model(J, m):
    """eval_shape of a model's initialiser and apply over nested pytrees, and the structures printed as JAX prints
    them (tracejit printed PyTreeDef(dict, [...]) for JAX's PyTreeDef({...}))."""
    import collections

    def init(key):
        k1, k2 = J.random.split(key)
        return collections.OrderedDict(dense=(J.random.normal(k1, (4, 5)), m.zeros(5)),
                                       head={"w": J.random.normal(k2, (5, 2)), "b": None})

    def apply(params, x):
        w, b = params["dense"]
        h = m.tanh(x @ w + b)
        return {"logits": h @ params["head"]["w"], "aux": (h.sum(), m.zeros((3,), m.int32))}

    params = J.eval_shape(init, J.random.key(0))
    out = J.eval_shape(apply, params, J.ShapeDtypeStruct((8, 4), m.float32))
    return ([(leaf.shape, str(leaf.dtype)) for leaf in J.tree_util.tree_leaves((params, out))],
            str(J.tree_util.tree_structure(params)), str(J.tree_util.tree_structure(out)))


def test_eval_shape_and_treedef_text():
    want, got = _shapes_of_a_model(jax, jnp), _shapes_of_a_model(tj, tnp)
    assert got == want


def _neighbour_sums(J, m, x):
    """Each cell's left and right neighbours gathered with take_along_axis out of range at the edges: mode='fill'
    (zeros past the edge) and mode='clip' (the edge repeated), JAX's modes, which tracejit's take_along_axis did
    not take, under jit and grad."""
    @J.jit
    def smooth(x):
        pos = m.broadcast_to(m.arange(x.shape[1]), x.shape)
        left = m.take_along_axis(x, pos - 1, axis=1, mode="fill", fill_value=0.0)
        right = m.take_along_axis(x, pos + 1, axis=1, mode="fill", fill_value=0.0)
        edge = m.take_along_axis(x, pos + 2, axis=1, mode="clip")
        return 0.5 * x + 0.25 * (left + right) + 0.1 * edge

    return smooth(x), J.grad(lambda x: m.sum(smooth(smooth(x)) ** 2))(x)


def test_take_along_axis_modes():
    assert_same(_neighbour_sums, np.random.default_rng(8).standard_normal((2, 5)))


def _masked_update(J, m, params, grads):
    """An optimiser step that leaves a frozen block alone, chosen by key path: jax.tree.map_with_path with an
    is_leaf that takes the path (is_leaf_takes_path=True, which tracejit's did not take) stops at the frozen
    block and passes it through whole."""
    frozen = lambda path, x: J.tree_util.keystr(path) == "['encoder']"

    def update(path, p, g):
        if J.tree_util.keystr(path) == "['encoder']":
            return p
        return J.tree.map(lambda a, b: a - 0.1 * b, p, g)

    new = J.jit(lambda p, g: J.tree.map_with_path(update, p, g, is_leaf=frozen, is_leaf_takes_path=True))(
        params, grads)
    paths = [J.tree_util.keystr(k) for k, _ in J.tree.leaves_with_path(params, frozen, is_leaf_takes_path=True)]
    return new, paths


def test_tree_paths_with_path_predicates():
    rng = np.random.default_rng(9)
    params = {"encoder": {"w": rng.standard_normal((2, 2)), "b": np.zeros(2)}, "head": [rng.standard_normal(2), 0.5]}
    want, got = both(_masked_update, params, jax.tree_util.tree_map(np.ones_like, params))
    assert [str(w) for w in want[-3:]] == [str(g) for g in got[-3:]]
    for w, g in zip(want[:-3], got[:-3], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)
