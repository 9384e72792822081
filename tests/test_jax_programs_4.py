"""A fourth round of JAX programs as users write them: hand-written optax-style optimizers, flax-like dataclass
modules, scans with pytree carries, linear algebra and complex programs, random samplers, dtype corners and array
manipulation. Each runs unchanged under JAX and under tracejit (J is the library, m its numpy), eagerly and under
jit, and is compared: values, dtypes and derivatives."""
import dataclasses
import functools

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
for _module in ("scipy.special", "scipy.stats", "nn"):
    pytest.importorskip(f"jax.{_module}")


def _leaves(J, m, program, args, jit):
    run = J.jit(functools.partial(program, J, m)) if jit else functools.partial(program, J, m)
    return [np.asarray(leaf) for leaf in J.tree_util.tree_leaves(run(*args))]


def assert_same(program, *args, rtol=1e-10, atol=1e-12, jit=(False, True), numpy_dtypes=None):
    """program(J, m, *args) gives the same leaves (shapes, dtypes, values) under JAX and tracejit, eager and jit.
    numpy_dtypes {leaf index: dtype}: leaves whose dtype follows NumPy in tracejit (DESIGN section 2), not JAX."""
    for under_jit in jit:
        want = _leaves(jax, jnp, program, args, under_jit)
        got = _leaves(tj, tnp, program, args, under_jit)
        assert len(got) == len(want)
        for i, (w, g) in enumerate(zip(want, got)):
            assert (g.shape, g.dtype) == (w.shape, np.dtype((numpy_dtypes or {}).get(i, w.dtype)))
            as_float = np.float32 if w.dtype.name == "bfloat16" else w.dtype
            np.testing.assert_allclose(g.astype(as_float), w.astype(as_float), rtol=rtol, atol=atol)


rng = np.random.default_rng(4)
X = rng.normal(size=(8, 3))
Y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=8)


def _adamw(J, m, params, steps=5):
    """AdamW with a weight-decay mask (no decay on biases) built by tree_map over the parameter tree."""
    def loss(p):
        return m.mean((X @ p["w"] + p["b"] - Y) ** 2)
    mask = J.tree_util.tree_map(lambda x: x.ndim > 0, params)
    mu = J.tree_util.tree_map(m.zeros_like, params)
    nu = J.tree_util.tree_map(m.zeros_like, params)
    for t in range(1, steps + 1):
        g = J.grad(loss)(params)
        mu = J.tree_util.tree_map(lambda a, b: 0.9 * a + 0.1 * b, mu, g)
        nu = J.tree_util.tree_map(lambda a, b: 0.999 * a + 0.001 * b * b, nu, g)
        params = J.tree_util.tree_map(
            lambda p, a, v, k, t=t: p - 0.1 * (a / (1 - 0.9 ** t) / (m.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
                                               + m.where(k, 0.01 * p, 0.0)), params, mu, nu, mask)
    return params, loss(params)


def test_adamw_with_weight_decay_mask():
    assert_same(_adamw, {"w": np.zeros(3), "b": np.float64(0.0)})


def _clip_by_global_norm_and_schedule(J, m, w):
    """SGD with gradients clipped by their global norm and a warmup-then-cosine learning rate from jnp.where."""
    def loss(p):
        return m.sum(m.tanh(X @ p["a"]) * p["c"]) ** 2
    def schedule(step):
        warm = step / 3.0
        cos = 0.5 * (1 + m.cos(m.pi * (step - 3) / 7))
        return 0.5 * m.where(step < 3, warm, cos)
    params = {"a": w, "c": m.ones(8)}
    def body(step, p):
        g = J.grad(loss)(p)
        norm = m.sqrt(sum(m.sum(x * x) for x in J.tree_util.tree_leaves(g)))
        scale = m.minimum(1.0, 1.0 / norm)
        return J.tree_util.tree_map(lambda x, d: x - schedule(step) * scale * d, p, g)
    return J.lax.fori_loop(0, 10, body, params)


def test_global_norm_clipping_with_step_schedule():
    assert_same(_clip_by_global_norm_and_schedule, np.array([0.3, -0.2, 0.1]))


def _dataclass_module(J, m, x):
    """A flax-like Dense module registered with register_dataclass; grad returns a module of gradients."""
    @functools.partial(J.tree_util.register_dataclass, data_fields=["w", "b"], meta_fields=["act"])
    @dataclasses.dataclass
    class Dense:
        w: object
        b: object
        act: str = "tanh"

        def __call__(self, x):
            y = x @ self.w + self.b
            return m.tanh(y) if self.act == "tanh" else y

    layers = [Dense(m.full((3, 4), 0.1), m.zeros(4)), Dense(m.full((4, 1), -0.2), m.ones(1), "linear")]
    def loss(layers):
        h = x
        for layer in layers:
            h = layer(h)
        return m.sum(h ** 2)
    g = J.grad(loss)(layers)
    return [(layer.w, layer.b) for layer in g], loss(layers)


def test_register_dataclass_module_gradients():
    assert_same(_dataclass_module, X)


def _pytree_node_class(J, m, x):
    """A module class registered with register_pytree_node_class, through vmap and jacrev."""
    @J.tree_util.register_pytree_node_class
    class Affine:
        def __init__(self, scale, shift):
            self.scale, self.shift = scale, shift

        def tree_flatten(self):
            return (self.scale, self.shift), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def __call__(self, v):
            return self.scale * v + self.shift

    mod = Affine(m.array([1.0, 2.0, 3.0]), m.array([0.5, 0.0, -0.5]))
    jac = J.jacrev(lambda mod, v: m.sin(mod(v)))(mod, x[0])
    out = J.vmap(lambda v: mod(v), in_axes=0)(x)
    return jac.scale, jac.shift, out


def test_register_pytree_node_class_jacrev():
    assert_same(_pytree_node_class, X)


def _scan_pytree_carry(J, m, xs):
    """lax.scan with a dict carry, reverse=True, unroll=2, and a length= scan with no xs."""
    def step(carry, x):
        h = m.tanh(carry["h"] * 0.5 + x)
        return {"h": h, "n": carry["n"] + 1}, (h, carry["n"])
    carry, (hs, ns) = J.lax.scan(step, {"h": m.zeros(3), "n": m.int32(0)}, xs, reverse=True, unroll=2)
    counted, powers = J.lax.scan(lambda c, _: (c * 2.0, c), 1.0, None, length=5)
    grad = J.grad(lambda xs: J.lax.scan(step, {"h": m.zeros(3), "n": m.int32(0)}, xs)[1][0].sum())(xs)
    return carry, hs, ns, counted, powers, grad


def test_scan_with_pytree_carry_reverse_unroll_length():
    assert_same(_scan_pytree_carry, X)


def _associative_scans(J, m, x):
    """Cumulative max, a linear recurrence h_t = a_t h_{t-1} + b_t, and a reversed sum by associative_scan."""
    cummax = J.lax.associative_scan(m.maximum, x)
    a, b = m.full(x.shape, 0.9), x
    def combine(left, right):
        return left[0] * right[0], right[0] * left[1] + right[1]
    _, h = J.lax.associative_scan(combine, (a, b))
    rev = J.lax.associative_scan(m.add, x, reverse=True)
    return cummax, h, rev, J.grad(lambda b: J.lax.associative_scan(combine, (a, b))[1].sum())(b)


def test_associative_scan_variants():
    assert_same(_associative_scans, X[:, 0])


def _reduce_precision(J, m, x):
    """lax.reduce_precision to bfloat16's and float16's formats, kept in float32."""
    x = x.astype(m.float32) * 1000.0
    return J.lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7), J.lax.reduce_precision(x, 5, 10)


def test_reduce_precision():
    assert_same(_reduce_precision, X, rtol=0, atol=0)


def _einsums(J, m, a, b):
    """einsum patterns: batch matmul, trace, diagonal, outer, transpose, sum over all, bilinear with three operands."""
    c = a[:3, :3]
    return (m.einsum("ij,kj->ik", a, a), m.einsum("ii->", c), m.einsum("ii->i", c), m.einsum("i,j->ij", b, b),
            m.einsum("ij->ji", a), m.einsum("ij->", a), m.einsum("i,ij,j->", a[:, 0], a, b),
            m.einsum("bi,bj->bij", a, a), m.einsum("...j,j", a, b),
            J.grad(lambda a: m.einsum("ij,jk,ki->", a[:3], a.T[:, :3], c))(a))


def test_einsum_operand_patterns():
    assert_same(_einsums, X, X[0])


def _take_put_along_axis(J, m, x):
    """Sort-by-key with take_along_axis, and put_along_axis writing the row maxima to zero."""
    idx = m.argsort(x, axis=1)
    sorted_rows = m.take_along_axis(x, idx, axis=1)
    top = m.argmax(x, axis=1, keepdims=True)
    zeroed = m.put_along_axis(x, top, 0.0, axis=1, inplace=False)
    g = J.grad(lambda x: m.take_along_axis(x, idx, axis=1)[:, 0].sum())(x)
    return sorted_rows, zeroed, g


def test_take_and_put_along_axis():
    assert_same(_take_put_along_axis, X)


def _searchsorted_histogram(J, m, x):
    """searchsorted with both sides on ties, histogram with bin counts and explicit edges, with density."""
    edges = m.array([-2.0, -1.0, 0.0, 0.0, 1.0, 2.0])
    q = m.array([-1.0, 0.0, 0.5, 3.0])
    counts, bins = m.histogram(x, bins=5, range=(-2.0, 2.0))
    dens, _ = m.histogram(x, bins=m.array([-3.0, -0.5, 0.5, 3.0]), density=True)
    return m.searchsorted(edges, q, side="left"), m.searchsorted(edges, q, side="right"), counts, bins, dens


def test_searchsorted_sides_and_histogram():
    """searchsorted's indices and histogram's counts are int64 as NumPy's (JAX: int32, and float counts)."""
    assert_same(_searchsorted_histogram, X.ravel(), numpy_dtypes={0: np.int64, 1: np.int64, 2: np.int64})


def _nan_statistics(J, m, x):
    """nanpercentile, nanquantile, nanmean and nanstd with NaNs masked in."""
    x = m.where(x > 1.0, m.nan, x)
    return (m.nanpercentile(x, m.array([10.0, 50.0, 90.0]), axis=0), m.nanquantile(x, 0.25),
            m.nanmean(x, axis=1), m.nanstd(x), m.nanmax(x, axis=0))


def test_nan_statistics():
    assert_same(_nan_statistics, X)


def _attention(J, m, q):
    """one_hot labels and dot_product_attention with a causal mask and a padding mask, cross-entropy gradient."""
    x = q.reshape(1, 8, 1, 3)
    pad = m.arange(8) < 6
    out = J.nn.dot_product_attention(x, x, x, is_causal=True)
    masked = J.nn.dot_product_attention(x, x, x, mask=pad[None, None, None, :])
    labels = J.nn.one_hot(m.array([0, 2, 1]), 3)
    def xent(q):
        logits = q[:3]
        return -m.sum(labels * J.nn.log_softmax(logits))
    return out, masked, labels, J.grad(xent)(q)


def test_one_hot_and_masked_dot_product_attention():
    """JAX computes attention logits in float32 whatever the inputs (preferred_element_type); tracejit in float64."""
    assert_same(_attention, X, rtol=1e-6, atol=1e-7)


def _logsumexp(J, m, x):
    """logsumexp with b= weights (some negative) and return_sign=, over an axis, and its gradient."""
    from importlib import import_module
    special = import_module(J.__name__ + ".scipy.special")
    b = m.array([1.0, -0.5, 2.0])
    value, sign = special.logsumexp(x, axis=1, b=b, return_sign=True)
    g = J.grad(lambda x: special.logsumexp(x, b=m.abs(b)))(x)
    return value, sign, g


def test_logsumexp_with_b_and_return_sign():
    assert_same(_logsumexp, X)


def _stats(J, m, x):
    """scipy.stats distributions' logpdf and cdf, with gradients in the parameters."""
    from importlib import import_module
    stats = import_module(J.__name__ + ".scipy.stats")
    v = x[:, 0]
    return (stats.norm.logpdf(v, 0.5, 2.0), stats.norm.cdf(v), stats.t.logpdf(v, 3.0), stats.laplace.cdf(v),
            stats.logistic.logpdf(v), stats.cauchy.logpdf(v), stats.beta.logpdf(m.abs(m.tanh(v)), 2.0, 3.0),
            stats.gamma.logpdf(m.abs(v) + 0.1, 2.5), stats.poisson.logpmf(m.arange(5), 2.0),
            J.grad(lambda s: stats.norm.logpdf(v, 0.0, s).sum())(1.5),
            stats.multivariate_normal.logpdf(x[:, :2], m.zeros(2), m.array([[2.0, 0.3], [0.3, 1.0]])))


def test_scipy_stats_logpdf_and_cdf():
    assert_same(_stats, X, rtol=1e-9)


def _cond_switch_vmap(J, m, x):
    """lax.cond and lax.switch with tuple/dict operands, batched by vmap over the predicate."""
    def f(v):
        out = J.lax.cond(v[0] > 0, lambda d: {"a": d["a"] * 2, "b": d["b"]}, lambda d: {"a": -d["a"], "b": d["b"] + 1},
                         {"a": v, "b": v[1]})
        index = m.clip(m.floor(v[2] + 1).astype(m.int32), 0, 2)
        s = J.lax.switch(index, [lambda p: p[0] + p[1], lambda p: p[0] * p[1], lambda p: p[0] - p[1]], (v[0], v[1]))
        return out, s
    return J.vmap(f)(x), J.grad(lambda x: J.vmap(f)(x)[1].sum())(x)


def test_cond_and_switch_with_pytrees_under_vmap():
    assert_same(_cond_switch_vmap, X)


def _while_and_fori_grad(J, m, x):
    """Newton's method in a while_loop (values), and the same iteration in a static fori_loop under grad."""
    def newton_sqrt(a, n):
        return J.lax.fori_loop(0, n, lambda i, z: 0.5 * (z + a / z), a)
    def cond(state):
        z, a, it = state
        return m.any(m.abs(z * z - a) > 1e-12) & (it < 50)
    def body(state):
        z, a, it = state
        return 0.5 * (z + a / z), a, it + 1
    a = m.abs(x[:, 0]) + 1.0
    z, _, iters = J.lax.while_loop(cond, body, (a, a, 0))
    return z, iters, J.grad(lambda a: newton_sqrt(a, 8).sum())(a), J.vmap(J.grad(newton_sqrt), (0, None))(a, 8)


def test_while_loop_and_static_fori_loop_gradient():
    assert_same(_while_and_fori_grad, X)


def _hessian_jacrev(J, m, w):
    """jax.hessian of a logistic loss, and jacrev of a function from a dict to a tuple."""
    labels = (Y > 0).astype(m.float64)
    def loss(w):
        z = X @ w
        return m.mean(m.logaddexp(0.0, z) - labels * z)
    jac = J.jacrev(lambda p: (p["u"] * p["v"].sum(), m.sin(p["u"])))({"u": w, "v": w[:2]})
    return J.hessian(loss)(w), jac


def test_hessian_of_a_loss_and_jacrev_of_pytrees():
    assert_same(_hessian_jacrev, np.array([0.2, -0.1, 0.3]))


def _custom_vjp_nondiff(J, m, x):
    """custom_vjp with nondiff_argnums (a Python function and a static clip value): straight-through clipping."""
    @functools.partial(J.custom_vjp, nondiff_argnums=(0, 1))
    def clip_apply(f, limit, v):
        return f(m.clip(v, -limit, limit))
    def fwd(f, limit, v):
        return clip_apply(f, limit, v), v
    def bwd(f, limit, v, ct):
        _, pullback = J.vjp(f, v)
        return pullback(ct)
    clip_apply.defvjp(fwd, bwd)
    return clip_apply(m.sin, 0.5, x), J.grad(lambda v: clip_apply(m.sin, 0.5, v).sum())(x)


def test_custom_vjp_with_nondiff_argnums():
    assert_same(_custom_vjp_nondiff, X)


def _linalg(J, m, a):
    """eigh, svd, qr, pinv, lstsq, matrix_power, det and slogdet with their gradients."""
    s = a.T @ a + m.eye(3)
    w, v = m.linalg.eigh(s)
    sv = m.linalg.svd(a, compute_uv=False)
    q, r = m.linalg.qr(a)
    sign = m.sign(m.diag(r))
    sol = m.linalg.lstsq(a, Y)[0]
    return (w, m.abs(v), sv, q * sign, r * sign[:, None], m.linalg.pinv(a), sol, m.linalg.matrix_power(s, 3),
            m.linalg.matrix_power(s, -2), m.linalg.det(s), m.linalg.slogdet(s),
            J.grad(lambda s: m.linalg.det(s))(s), J.grad(lambda a: m.linalg.eigh(a.T @ a)[0].sum())(a),
            J.grad(lambda a: m.linalg.svd(a, compute_uv=False).sum())(a))


def test_linalg_decompositions_and_gradients():
    assert_same(_linalg, X, rtol=1e-8, atol=1e-10)


def _complex_programs(J, m, x):
    """FFT-based circular convolution against the direct sum, and holomorphic and real-valued complex gradients."""
    a, b = x[:, 0], x[:, 1]
    conv = m.fft.irfft(m.fft.rfft(a) * m.fft.rfft(b), n=8)
    direct = m.array([sum(a[j] * b[(i - j) % 8] for j in range(8)) for i in range(8)])
    z = a + 1j * b
    holo = J.grad(lambda z: (z ** 3 + m.exp(z)).sum(), holomorphic=True)(z)
    real = J.grad(lambda z: m.abs(m.fft.fft(z)).sum())(z)
    return conv, direct, holo, real, m.angle(z), m.conj(z) * z


def test_complex_fft_convolution_and_holomorphic_grad():
    assert_same(_complex_programs, X)


def _bit_tricks(J, m, x):
    """bitwise ops, shifts and population counts on uint32 hashes of integers."""
    v = m.arange(1, 17, dtype=m.uint32) * m.uint32(2654435761)
    s = m.arange(16, dtype=m.int32)
    return (m.bitwise_and(v, 0xFF), m.bitwise_or(v, 1), m.bitwise_xor(v, v >> 3), m.bitwise_not(v),
            m.left_shift(v, 3), m.right_shift(s - 8, 1), J.lax.population_count(v), J.lax.clz(v),
            m.bitwise_count(s - 8), m.invert(s), J.lax.shift_right_logical(s - 8, m.int32(2)))


def test_integer_bit_tricks():
    assert_same(_bit_tricks, X, rtol=0, atol=0)


def _dtype_promotion(J, m, x):
    """uint8 images with weak Python scalars, bfloat16 and float16 mixed with float32, int8 + uint8."""
    img = m.asarray((m.abs(x) * 60).astype(m.uint8))
    h = x.astype(m.float16)
    bf = x.astype(m.bfloat16)
    f = x.astype(m.float32)
    return (img + 3, img * 2.0, img // 2, img.astype(m.float32) / 255, h + 1.0, h + f, bf * 2, bf + h, bf + f,
            m.int8(3) + m.uint8(4), m.int32(3) * 1.5, (img > 40).sum())


def test_dtype_promotion_corner_cases():
    assert_same(_dtype_promotion, X, rtol=1e-3, atol=1e-3)


def test_mixed_array_promotion_follows_numpy():
    """Array-array promotion follows NumPy 2 (DESIGN section 2) where JAX's lattice differs: float16 + int64 and
    bfloat16 + int32 are float64 (JAX: float16, bfloat16), int8 / 2 is float64 (JAX: float32)."""
    bf16 = jnp.bfloat16
    assert (tnp.asarray(np.float16(1)) + tnp.asarray(np.int64(2))).dtype == np.float64
    assert (tnp.ones(2, bf16) + tnp.ones(2, np.int32)).dtype == np.float64
    assert (tnp.arange(3, dtype=np.int8) / 2).dtype == np.float64


def _shapes(J, m, x):
    """where/select on broadcast shapes, reshape with -1 and order='F', roll/rot90/flip and unravel_index."""
    mask = x[:, :1] > 0
    w = m.where(mask, x, m.zeros((1, 3)))
    sel = J.lax.select(x > 0, x, -x)
    return (w, sel, m.reshape(x, (-1, 4), order="F"), x.reshape(4, -1), m.ravel(x, order="F"), m.roll(x, 2, axis=0),
            m.roll(x, (1, -1), axis=(0, 1)), m.rot90(x), m.rot90(x, k=3), m.flip(x), m.fliplr(x),
            m.unravel_index(m.array([0, 5, 23]), (8, 3)), m.ravel_multi_index((m.array([1, 7]), m.array([2, 0])), (8, 3), mode="clip"),
            J.grad(lambda x: (m.rot90(m.reshape(x, (-1, 4), order="F")) * m.arange(24.0).reshape(4, 6)).sum())(x))


def test_where_reshape_order_f_roll_rot90_unravel():
    assert_same(_shapes, X)


def _pads(J, m, x):
    """jnp.pad's reflect, symmetric, edge, wrap, constant and linear_ramp modes, with a gradient through reflect."""
    widths = ((2, 1), (1, 2))
    return ([m.pad(x, widths, mode=mode) for mode in ("reflect", "symmetric", "edge", "wrap", "linear_ramp")]
            + [m.pad(x, 1, constant_values=-1.0), m.pad(x, ((0, 0), (3, 3)), mode="reflect"),
               J.grad(lambda x: (m.pad(x, widths, mode="reflect") ** 2).sum())(x),
               J.grad(lambda x: (m.pad(x, widths, mode="wrap") ** 2).sum())(x)])


def test_pad_modes():
    assert_same(_pads, X)


def _random(J, m, seed):
    """split, fold_in, categorical, gumbel, bernoulli, multivariate_normal, dirichlet, permutation and choice."""
    key = J.random.PRNGKey(seed)
    k1, k2, k3, k4, k5, k6, k7 = J.random.split(key, 7)
    folded = J.random.fold_in(k1, 42)
    logits = m.log(m.array([0.1, 0.2, 0.7]))
    cov = m.array([[1.0, 0.5], [0.5, 2.0]])
    return (J.random.key_data(folded), J.random.categorical(k2, logits, shape=(6,)), J.random.gumbel(k3, (4,)),
            J.random.bernoulli(k4, 0.3, (6,)), J.random.multivariate_normal(k5, m.zeros(2), cov, (3,)),
            J.random.normal(k6, (3,)), J.random.uniform(folded, (2,)), J.random.permutation(k7, 6),
            J.random.choice(k7, 10, (3,), replace=False))


def test_random_samplers_bit_for_bit():
    assert_same(_random, 7, rtol=1e-12)


def _dirichlet(J, m, seed):
    """dirichlet draws: each sums to one."""
    return J.random.dirichlet(J.random.PRNGKey(seed), m.array([0.5, 1.0, 2.0]), (4,))


def test_random_dirichlet():
    assert_same(_dirichlet, 3, rtol=1e-9)


def _value_and_grad_has_aux(J, m, w):
    """value_and_grad with has_aux and argnums over two pytrees, stop_gradient on a target network's output."""
    def loss(online, target, x):
        q = m.tanh(x @ online["w"])
        q_target = J.lax.stop_gradient(m.tanh(x @ target["w"]))
        err = q - 0.9 * q_target
        return m.mean(err ** 2), {"max_err": m.max(m.abs(err))}
    (value, aux), grads = J.value_and_grad(loss, argnums=(0, 1), has_aux=True)({"w": w}, {"w": w * 0.5}, X)
    return value, aux, grads


def test_value_and_grad_with_aux_and_stop_gradient():
    assert_same(_value_and_grad_has_aux, np.array([[0.3], [-0.2], [0.1]]))


def _vmap_axes(J, m, x):
    """vmap with dict in_axes, None for a broadcast argument, out_axes=1, and lax.map over rows."""
    def f(p, v, scale):
        return {"y": (p["a"] * v + p["b"]) * scale, "s": m.sum(v)}
    out = J.vmap(f, in_axes=({"a": 0, "b": None}, 0, None), out_axes={"y": 1, "s": 0})(
        {"a": x[:, 0], "b": m.ones(3)}, x, 2.0)
    mapped = J.lax.map(lambda row: m.sort(row)[::-1], x)
    return out, mapped


def test_vmap_with_pytree_axes_and_lax_map():
    assert_same(_vmap_axes, X)


def _segment_ops(J, m, x):
    """jax.ops segment_sum / segment_max / segment_min with num_segments, and a segment mean's gradient."""
    ids = m.array([0, 0, 1, 2, 2, 2, 4, 4])
    v = x[:, 0]
    def seg_mean(v):
        return J.ops.segment_sum(v, ids, 5) / m.maximum(J.ops.segment_sum(m.ones_like(v), ids, 5), 1.0)
    return (J.ops.segment_sum(x, ids, num_segments=5), J.ops.segment_max(v, ids, 5), J.ops.segment_min(v, ids, 5),
            seg_mean(v), J.grad(lambda v: (seg_mean(v) ** 2).sum())(v))


def test_segment_reductions():
    assert_same(_segment_ops, X)


def _static_size_ops(J, m, x):
    """nonzero, argwhere, unique and flatnonzero with size= and fill_value=, which jit needs."""
    v = m.round(x[:, 0] * 2)
    return (m.nonzero(v > 0, size=6, fill_value=-1), m.argwhere(x > 0.5, size=5, fill_value=0),
            m.unique(v, size=8, fill_value=99.0), m.flatnonzero(v, size=4),
            m.where(v > 0, size=3, fill_value=7))


def test_nonzero_unique_with_static_size():
    assert_same(_static_size_ops, X)


def _scipy_linalg(J, m, a):
    """scipy.linalg: cho_factor/cho_solve, solve_triangular, expm and its gradient, lu_factor/lu_solve."""
    from importlib import import_module
    sla = import_module(J.__name__ + ".scipy.linalg")
    s = a.T @ a + m.eye(3)
    c = sla.cho_factor(s, lower=True)
    lower = m.tril(s)
    lu = sla.lu_factor(s)
    return (sla.cho_solve(c, a[0]), sla.solve_triangular(lower, a[1], lower=True),
            sla.solve_triangular(lower, a[1], lower=True, trans=1), sla.expm(0.1 * s), sla.lu_solve(lu, a[2]),
            J.grad(lambda t: sla.expm(t * s).trace())(0.1), J.grad(lambda s: m.linalg.solve(s, a[0]).sum())(s),
            J.grad(lambda s: m.linalg.cholesky(s).sum())(s), J.grad(lambda s: m.linalg.inv(s)[0, 1])(s))


def test_scipy_linalg_solvers_and_expm():
    assert_same(_scipy_linalg, X, rtol=1e-8, atol=1e-10)


def _polynomials(J, m, x):
    """polyval, polyfit, polyder/polyint, convolve and correlate modes, roots-free polynomial algebra."""
    v = x[:, 0]
    coeffs = m.polyfit(m.arange(8.0), v, 2)
    return (coeffs, m.polyval(coeffs, m.array([0.5, 1.5])), m.polyder(coeffs), m.polyint(coeffs),
            m.polymul(coeffs, coeffs), m.convolve(v, m.array([0.25, 0.5, 0.25]), mode="same"),
            m.convolve(v, v[:3]), m.correlate(v, v[:3], mode="valid"),
            J.grad(lambda v: m.polyval(m.polyfit(m.arange(8.0), v, 1), 3.0))(v))


def test_polynomials_and_convolve():
    assert_same(_polynomials, X, rtol=1e-8, atol=1e-10)


def _nn_functions(J, m, x):
    """jax.nn activations and normalisers, with their gradients summed."""
    fns = [J.nn.gelu, functools.partial(J.nn.gelu, approximate=False), J.nn.softplus, J.nn.silu, J.nn.elu,
           J.nn.leaky_relu, J.nn.celu, J.nn.selu, J.nn.sigmoid, J.nn.log_sigmoid, J.nn.relu6, J.nn.hard_tanh,
           J.nn.mish, lambda v: J.nn.softmax(v, axis=0), lambda v: J.nn.standardize(v, axis=1), J.nn.glu]
    return [f(x) for f in fns] + [J.grad(lambda v, f=f: f(v).sum())(x) for f in fns]


def test_nn_activations_and_gradients():
    assert_same(_nn_functions, X[:, :2], rtol=1e-9, atol=1e-11)


def _checkpoint_and_linearize(J, m, x):
    """jax.checkpoint inside a scan, jvp/linearize/vjp of a pytree-valued function."""
    @J.checkpoint
    def layer(h, w):
        return m.sin(h @ w), None
    ws = m.stack([m.eye(3) * 0.9, m.ones((3, 3)) * 0.2])
    def net(x):
        return J.lax.scan(layer, x, ws)[0]
    def f(v):
        return {"a": m.cumsum(v), "b": m.cumprod(v + 2.0)}
    primal, tangent = J.jvp(f, (x[0],), (m.ones(3),))
    _, lin = J.linearize(f, x[0])
    _, pullback = J.vjp(f, x[0])
    return (J.grad(lambda x: net(x).sum())(x), primal, tangent, lin(x[1]),
            pullback({"a": m.ones(3), "b": m.arange(3.0)}))


def test_checkpoint_jvp_linearize_vjp():
    assert_same(_checkpoint_and_linearize, X)


def _array_builders(J, m, x):
    """meshgrid indexing, indices, tril/triu with offsets, kron, norm orders, diff, cross, fftshift, clip."""
    gx, gy = m.meshgrid(m.arange(3.0), m.arange(2.0), indexing="ij")
    a = x[:3]
    return (gx, gy, m.indices((2, 3)), m.tril(x, -1), m.triu(x, 1), m.kron(a, m.eye(2)),
            m.linalg.norm(a), m.linalg.norm(a, ord=1), m.linalg.norm(a, ord=m.inf), m.linalg.norm(a, ord="nuc"),
            m.linalg.norm(x, axis=1, ord=3), m.diff(x, n=2, axis=0), m.cross(a[0], a[1]),
            m.fft.fftshift(x, axes=0), m.clip(x, -0.5, 0.5), m.lexsort((x[:, 1], m.round(x[:, 0]))),
            J.grad(lambda a: m.linalg.norm(a, ord="nuc"))(a))


def test_array_builders_and_norms():
    assert_same(_array_builders, X, rtol=1e-9, atol=1e-11)


def _typed_keys(J, m, seed):
    """New-style typed keys: jax.random.key, split into a shape, vmap over keys, truncated_normal and randint."""
    key = J.random.key(seed)
    keys = J.random.split(key, (2, 3))
    draws = J.vmap(J.vmap(lambda k: J.random.normal(k, ())))(keys)
    return (draws, J.random.truncated_normal(key, -1.0, 1.0, (4,)), J.random.randint(key, (5,), 0, 10),
            J.random.key_data(J.random.fold_in(key, 3)), J.random.exponential(key, (3,)),
            J.random.laplace(key, (2,)), J.random.rademacher(key, (4,)))


def test_typed_keys_and_samplers():
    assert_same(_typed_keys, 11, rtol=1e-12)


def _vmapped_while_and_scan_unroll(J, m, x):
    """A while_loop batched by vmap (each lane stops at its own step), and a scan with unroll=True and a None leaf."""
    def collatz_steps(n):
        def body(state):
            k, steps = state
            return m.where(k % 2 == 0, k // 2, 3 * k + 1), steps + 1
        return J.lax.while_loop(lambda s: s[0] != 1, body, (n, 0))[1]
    def step(c, xs):
        v, nothing = xs
        return c + v, (c * v, nothing)
    carry, (prods, _) = J.lax.scan(step, m.zeros(3), (x, None), unroll=True)
    return J.vmap(collatz_steps)(m.arange(1, 12)), carry, prods


def test_vmapped_while_loop_and_fully_unrolled_scan():
    assert_same(_vmapped_while_and_scan_unroll, X)


def _special_functions(J, m, x):
    """jax.scipy.special functions and their gradients."""
    from importlib import import_module
    sp = import_module(J.__name__ + ".scipy.special")
    v = m.abs(x[:, 0]) + 0.5
    fns = [sp.gammaln, sp.digamma, sp.erf, sp.erfc, lambda t: sp.erfinv(m.tanh(t) * 0.9), lambda t: sp.xlogy(t, t),
           lambda t: sp.xlog1py(t, t), lambda t: sp.betaln(t, 2.0), sp.expit, lambda t: sp.logit(t / 3.0), sp.i0e,
           sp.i1e, sp.ndtr, lambda t: sp.ndtri(t / 3.0), sp.log_ndtr, lambda t: sp.gammainc(2.0, t), sp.entr]
    return [f(v) for f in fns] + [J.grad(lambda t, f=f: f(t).sum())(v) for f in fns]


def test_scipy_special_values_and_gradients():
    assert_same(_special_functions, X, rtol=1e-8, atol=1e-12)


def _where_reductions(J, m, x):
    """Reductions with where= masks and initial=, and logsumexp with where=, as a masked-softmax program does."""
    mask = x > -0.5
    return (m.sum(x, where=mask), m.mean(x, axis=0, where=mask), m.max(x, axis=1, where=mask, initial=-10.0),
            m.var(x, axis=0, where=mask), J.nn.logsumexp(x, axis=1, where=mask),
            J.nn.softmax(x, axis=1, where=mask), J.grad(lambda x: m.mean(m.exp(x), where=mask))(x))


def test_reductions_with_where_masks():
    assert_same(_where_reductions, X)


def _float_decomposition(J, m, x):
    """frexp/ldexp, nextafter, copysign, modf, signbit, and cumulative sums with include_initial and NaNs."""
    mant, expo = m.frexp(x * 100)
    frac, whole = m.modf(x * 3)
    return (mant, expo, m.ldexp(mant, expo), m.nextafter(x, m.inf), m.copysign(x, -1.0), frac, whole,
            m.signbit(x), m.cumulative_sum(x, axis=0, include_initial=True),
            m.nancumsum(m.where(x > 1, m.nan, x), axis=1))


def test_float_decomposition_and_cumulative_sums():
    assert_same(_float_decomposition, X, rtol=0, atol=1e-15)


def _fft_nd(J, m, x):
    """2-D and n-D FFTs with s=, axes= and norm=, and a spectral smoothing gradient."""
    img = x.reshape(4, 6)
    spec = m.fft.rfft2(img)
    return (spec, m.fft.irfft2(spec, s=(4, 6)), m.fft.fftn(img, s=(5, 5), norm="ortho"),
            m.fft.ifftn(img.astype(m.complex128), axes=(0,)), m.fft.rfftfreq(6, d=0.5), m.fft.fftfreq(5),
            J.grad(lambda img: m.fft.irfft2(m.fft.rfft2(img) * m.exp(-m.arange(4.0))[None, :], s=(4, 6))[0, 0])(img))


def test_nd_fft_programs():
    assert_same(_fft_nd, X, rtol=1e-9, atol=1e-12)


def _tree_utilities(J, m, x):
    """tree_map with is_leaf, tree_transpose, tree_reduce and flatten/unflatten round trips on nested containers."""
    tree = {"layers": [(x[0], x[1]), (x[2], x[3])], "scale": x[4]}
    pairs_as_leaves = J.tree_util.tree_map(lambda p: p[0] * p[1] if isinstance(p, tuple) else p, tree,
                                           is_leaf=lambda t: isinstance(t, tuple))
    outer = J.tree_util.tree_structure([0, 0])
    inner = J.tree_util.tree_structure((0, 0))
    transposed = J.tree_util.tree_transpose(outer, inner, [(x[0], x[1]), (x[2], x[3])])
    total = J.tree_util.tree_reduce(lambda a, b: a + m.sum(b), tree, 0.0)
    leaves, treedef = J.tree_util.tree_flatten(tree)
    rebuilt = J.tree_util.tree_unflatten(treedef, [leaf * 2 for leaf in leaves])
    return pairs_as_leaves, transposed, total, rebuilt


def test_tree_utilities():
    assert_same(_tree_utilities, X)


def _multi_operand_sort(J, m, x):
    """lax.sort with two keys and a payload, lax.top_k, argsort stable descending, and linalg helpers."""
    keys = m.round(x[:, 0])
    k1, k2, payload = J.lax.sort((keys, x[:, 1], x[:, 2]), num_keys=2)
    values, idx = J.lax.top_k(x[:, 2], 3)
    a = x[:3]
    return (k1, k2, payload, values, idx, m.argsort(keys, stable=True, descending=True),
            m.linalg.matrix_rank(x), m.linalg.cond(a), m.linalg.multi_dot([x.T, x, a]), m.linalg.tensorsolve(
                m.eye(6).reshape(2, 3, 6), m.arange(6.0).reshape(2, 3)))


def test_multi_operand_sort_and_linalg_helpers():
    assert_same(_multi_operand_sort, X, rtol=1e-9, atol=1e-12)


def _low_precision_matmul(J, m, x):
    """bfloat16 and float16 matmuls accumulating in float32 (preferred_element_type), and a mixed-precision loss."""
    a = x.astype(m.bfloat16)
    h = x.astype(m.float16)
    def loss(w):
        y = m.dot(x.astype(m.bfloat16), w.astype(m.bfloat16), preferred_element_type=m.float32)
        return m.mean(y ** 2)
    return (J.lax.dot(a.T, a, preferred_element_type=m.float32), m.matmul(h.T, h),
            J.lax.dot_general(h, h, (((0,), (0,)), ((), ())), preferred_element_type=m.float32),
            J.grad(loss)(m.ones((3, 2), m.float32)))


def test_low_precision_matmuls():
    assert_same(_low_precision_matmul, X, rtol=2e-2, atol=2e-2)


ERROR_PROGRAMS = {
    "cond branches of different structures": lambda J, m: J.lax.cond(True, lambda: (1.0, 2.0), lambda: 1.0),
    "cond branches of different shapes under jit": lambda J, m: J.jit(
        lambda p: J.lax.cond(p, lambda: m.ones(2), lambda: m.ones(3)))(True),
    "switch branches of different shapes": lambda J, m: J.lax.switch(0, [lambda: 1.0, lambda: m.ones(2)]),
    "scan carry changing dtype": lambda J, m: J.lax.scan(lambda c, x: (c.astype(m.float32), x), m.zeros(2),
                                                        m.ones(3)),
    "while_loop cond returning a float": lambda J, m: J.lax.while_loop(lambda c: c, lambda c: c, 1.0),
    "grad of a non-scalar": lambda J, m: J.grad(lambda x: x * 2)(m.ones(3)),
    "grad of an integer input": lambda J, m: J.grad(lambda x: x * 2)(3),
    "Python if on a tracer": lambda J, m: J.jit(lambda x: 1 if x > 0 else 2)(1.0),
    "vmap of inconsistent sizes": lambda J, m: J.vmap(lambda a, b: a + b)(m.ones(3), m.ones(4)),
}


@pytest.mark.parametrize("name", ERROR_PROGRAMS)
def test_error_paths_raise_jax_exception_classes(name):
    """A user's mistakes raise what JAX raises (TypeError or ValueError), so their except clauses keep working."""
    raised = []
    for J, m in ((jax, jnp), (tj, tnp)):
        with pytest.raises((TypeError, ValueError)) as info:
            ERROR_PROGRAMS[name](J, m)
        raised.append(TypeError if isinstance(info.value, TypeError) else ValueError)
    assert raised[1] is raised[0]


SHAPE_MISTAKES = {
    "matmul of mismatched core dimensions": lambda m: m.ones((2, 3)) @ m.ones((2, 3)),
    "reshape to another size": lambda m: m.ones(6).reshape(4, 2),
    "concatenate of mismatched shapes": lambda m: m.concatenate([m.ones((2, 3)), m.ones((2, 4))]),
    "broadcast of incompatible shapes": lambda m: m.ones(3) + m.ones(4),
}


@pytest.mark.xfail(strict=True, reason="shape mistakes raise NumPy's ValueError in tracejit (its numerics and "
                   "messages follow NumPy); JAX raises TypeError")
@pytest.mark.parametrize("name", SHAPE_MISTAKES)
def test_shape_mistakes_raise_type_error_as_jax(name):
    for m in (jnp, tnp):
        with pytest.raises(TypeError):
            SHAPE_MISTAKES[name](m)


@pytest.mark.xfail(strict=True, reason="a static out-of-range integer index raises IndexError in tracejit, as "
                   "NumPy; JAX clamps it (traced indices are clamped in both, as DESIGN section 2 says)")
def test_static_out_of_range_index_clamps_as_jax():
    np.testing.assert_array_equal(tnp.arange(3.0)[5], jnp.arange(3.0)[5])


TRANSFORM_CORNERS = {
    "scan with length= and a tuple carry": lambda J, m, x: J.lax.scan(
        lambda c, _: ((c[0] + 1, c[1] * 2), c[0]), (0, 1.0), length=4),
    "reversed scan's gradient": lambda J, m, x: J.grad(
        lambda x: J.lax.scan(lambda c, r: (m.sin(c * r), c), 1.0, x[0], reverse=True)[0])(x),
    "scan with unroll=3 under grad": lambda J, m, x: J.grad(
        lambda x: J.lax.scan(lambda c, r: (c + m.tanh(r) * c, c), m.ones(6), x, unroll=3)[1].sum())(x),
    "fori_loop over a dict carry under grad": lambda J, m, x: J.grad(lambda v: J.lax.fori_loop(
        0, 3, lambda i, c: {"a": c["a"] * c["b"], "b": c["b"] + i}, {"a": v, "b": v[0]})["a"].sum())(x[0]),
    "hessian of a dict": lambda J, m, x: J.hessian(lambda p: m.sum(p["a"] ** 3) * p["b"])({"a": x[0, :2], "b": 1.5}),
    "jacfwd of jacrev": lambda J, m, x: J.jacfwd(J.jacrev(lambda v: m.sin(v).prod()))(x[0, :3]),
    "jacrev of a tuple with two argnums": lambda J, m, x: J.jacrev(
        lambda a, b: (a * b, m.outer(a, b)), argnums=(0, 1))(x[0, :2], x[1, :2]),
    "vmap of grad through cond": lambda J, m, x: J.vmap(J.grad(lambda v: J.lax.cond(v > 0, m.sin, m.cos, v)))(x[0]),
    "vmapped switch with clamped indices": lambda J, m, x: J.vmap(
        lambda i, v: J.lax.switch(i, [m.sin, m.cos, m.tanh], v))(m.array([0, 1, 2, 5, -1, 1]), x[0]),
    "checkpoint with nothing_saveable": lambda J, m, x: J.grad(lambda v: J.checkpoint(
        lambda v: m.sin(m.sin(v)), policy=J.checkpoint_policies.nothing_saveable)(v).sum())(x[0]),
    "vmap with out_axes None": lambda J, m, x: J.vmap(lambda v: (v * 2, 3.0), out_axes=(0, None))(x[0]),
    "vmap with psum over its axis_name": lambda J, m, x: J.vmap(lambda v: v / J.lax.psum(v, "i"), axis_name="i")(x[0]),
    "the double-where trick's gradient": lambda J, m, x: J.grad(
        lambda v: m.where(v > 0, m.sqrt(m.where(v > 0, v, 1.0)), 0.0).sum())(x[0]),
    "checkpointed scan body": lambda J, m, x: J.grad(lambda x: J.lax.scan(
        J.checkpoint(lambda c, r: (m.sin(c + r), None)), m.zeros(6), x)[0].sum())(x),
    "jit with static_argnames": lambda J, m, x: J.jit(
        lambda x, n: m.linalg.matrix_power(x[:, :4], n), static_argnames="n")(x, n=3),
    "tree_map_with_path": lambda J, m, x: J.tree_util.tree_map_with_path(
        lambda p, v: v * len(p), {"a": (x[0], x[1])}),
    "reduce_precision's gradient": lambda J, m, x: J.grad(lambda v: J.lax.reduce_precision(v, 8, 7).sum())(x[0]),
    "associative_scan of a pair, reversed, along axis 1": lambda J, m, x: J.lax.associative_scan(
        lambda a, b: (a[0] + b[0], m.maximum(a[1], b[1])), (x, x * 2), reverse=True, axis=1),
    "cumprod and prod gradients at zeros": lambda J, m, x: (
        J.grad(lambda v: m.cumprod(v).sum())(m.array([1.0, 0.0, 2.0, 3.0])),
        J.grad(m.prod)(m.array([1.0, 0.0, 2.0, 0.0])), J.grad(m.prod)(m.array([1.0, 0.0, 2.0, 5.0]))),
    "eigenvector and singular vector gradients": lambda J, m, x: (
        J.grad(lambda a: (m.linalg.eigh(a + a.T)[1][:, 0] ** 2).sum())(x[:, :4]),
        J.grad(lambda a: m.abs(m.linalg.svd(a, full_matrices=False)[0]).sum())(x)),
    "qr, pinv, lstsq and matrix_power gradients": lambda J, m, x: (
        J.grad(lambda a: m.linalg.qr(a)[1].trace() ** 2)(x.T), J.grad(lambda a: m.linalg.pinv(a).sum())(x),
        J.grad(lambda a: m.linalg.lstsq(a, m.ones(6))[0].sum())(x.T),
        J.grad(lambda a: m.linalg.matrix_power(a, -1).trace())(x[:, :4] + 3 * m.eye(4))),
    "complex: eigvals, det, holomorphic jacfwd, vjp": lambda J, m, x: (
        m.sort_complex(m.linalg.eigvals(x[:, :4])), m.linalg.det(x[:3, :3] + 1j * x[:3, 3:]),
        J.jacfwd(lambda z: m.exp(z) * z, holomorphic=True)(x[0, :2] + 1j),
        J.vjp(lambda z: z * m.conj(z), x[0] + 2j)[1](m.ones(6, m.complex128))),
    "integer corners: shifts past the width, clz, gcd/lcm, bools": lambda J, m, x: (
        m.left_shift(m.int32(1), m.int32(33)), m.right_shift(m.int8(-128), m.int8(9)), m.left_shift(m.uint8(1), 8),
        J.lax.clz(m.array([0, 1, 127, 64], m.int8)), m.gcd(m.array([12, -18, 0]), 8), m.lcm(m.array([4, 6, 0]), 10),
        m.bitwise_xor(x > 0, x > 1), ~(x > 0), (x > 0) + (x > 1), m.sum(x > 0, dtype=m.int8),
        m.arange(3, dtype=m.uint8) - 1),
}


@pytest.mark.parametrize("name", TRANSFORM_CORNERS)
def test_transformation_and_numeric_corners(name):
    assert_same(lambda J, m, x: TRANSFORM_CORNERS[name](J, m, x), np.random.default_rng(0).normal(size=(4, 6)),
                rtol=1e-9, atol=1e-11)


def _traced_roll(J, m, x, shift):
    """A circular-shift augmentation whose shift is data (a traced argument): roll along one axis and two, under
    vmap with a shift per row, and the gradient through it."""
    weights = m.arange(24.0).reshape(4, 6)
    return (m.roll(x, shift, axis=1), m.roll(x, m.stack([shift, -3 * shift]), axis=(0, 1)), m.roll(x, shift),
            J.vmap(lambda row, s: m.roll(row, s))(x, m.arange(4) * shift - 5),
            J.grad(lambda x: (m.roll(x, shift, axis=0) * weights).sum())(x))


def test_roll_by_a_traced_shift():
    """tracejit needed the shift concrete (ConcretizationError under jit); JAX slices the doubled axis."""
    for shift in (2, -7, 13):
        assert_same(_traced_roll, np.random.default_rng(1).normal(size=(4, 6)), shift)


def test_unravel_index_of_out_of_range_traced_indices_clamps_as_jax():
    indices = np.array([-1, 30, -30, 5])
    want = jax.jit(lambda i: jnp.unravel_index(i, (4, 6)))(indices)
    got = tj.jit(lambda i: tnp.unravel_index(i, (4, 6)))(indices)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


@pytest.mark.xfail(strict=True, reason="concrete out-of-range indices to unravel_index raise ValueError in tracejit, "
                   "as NumPy (documented in its docstring); JAX clamps them eagerly too")
def test_unravel_index_of_out_of_range_concrete_indices_clamps_as_jax():
    for w, g in zip(jnp.unravel_index(np.array([-1, 30]), (4, 6)), tnp.unravel_index(np.array([-1, 30]), (4, 6))):
        np.testing.assert_array_equal(g, w)
