"""A third round of JAX programs as users write them (JAX's examples and notebooks, autograd's examples, research
snippets), each run unchanged under JAX and under tracejit (J is the library, m its numpy) and compared: values,
dtypes and derivatives. Programs that failed in tracejit at first say what was missing."""
import types

import numpy as np
import pytest

import tracejit as tj
import tracejit.example_libraries.optimizers
import tracejit.example_libraries.stax
import tracejit.experimental.ode
import tracejit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
for _module in ("ad_checkpoint", "example_libraries.optimizers", "example_libraries.stax", "experimental.ode",
                "scipy.linalg", "scipy.optimize", "scipy.signal", "scipy.sparse.linalg", "scipy.special",
                "scipy.stats"):
    pytest.importorskip(f"jax.{_module}")


class _QuickXLA(types.ModuleType):
    """jax, with jit compiling at XLA's backend optimisation level 0: the same operations, compiled in about half
    the time (XLA's compiles are most of this file's time; tracejit's are a fifth of it)."""

    def __getattr__(self, name):
        return getattr(jax, name)

    @staticmethod
    def jit(fun, **options):
        return jax.jit(fun, compiler_options={"xla_backend_optimization_level": 0}, **options)


quick_jax = _QuickXLA("jax")


def both(program, *args):
    """program(J, m, *args) under JAX and under tracejit: (JAX's leaves as NumPy arrays, tracejit's)."""
    want = jax.tree_util.tree_leaves(program(quick_jax, jnp, *args))
    got = tj.tree_util.tree_leaves(program(tj, tnp, *args))
    assert len(got) == len(want)
    return [np.asarray(w) for w in want], [np.asarray(g) for g in got]


def assert_same(program, *args, rtol=1e-10, atol=1e-12, numpy_dtypes=None):
    """Same shapes, dtypes and values (to rtol/atol) under both libraries. numpy_dtypes {leaf index: dtype}: the
    leaves whose dtype follows NumPy in tracejit (DESIGN: the mean of integers or bools is float64, JAX's
    float32; lstsq's rank is int32, JAX's int64), checked against that dtype instead of JAX's."""
    want, got = both(program, *args)
    for i, (w, g) in enumerate(zip(want, got)):
        assert (g.shape, g.dtype) == (w.shape, (numpy_dtypes or {}).get(i, w.dtype))
        np.testing.assert_allclose(_comparable(g.astype(w.dtype)), _comparable(w), rtol=rtol, atol=atol)


def _comparable(a):
    """bfloat16 (ml_dtypes) as float32, which assert_allclose understands; other dtypes as they are."""
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a


def _hmc(J, m, x0, seed):
    """Hamiltonian Monte Carlo on a correlated Gaussian: leapfrog steps in a fori_loop inside a lax.scan over
    draws, momentum and accept draws from split keys, a Metropolis test with lax.cond-free jnp.where."""
    prec = m.array([[2.0, 0.6], [0.6, 1.0]])

    def logp(x):
        return -0.5 * x @ prec @ x

    def leapfrog(x, p, eps=0.2, n=5):
        p = p + 0.5 * eps * J.grad(logp)(x)

        def body(_, xp):
            x, p = xp
            x = x + eps * p
            return x, p + eps * J.grad(logp)(x)
        x, p = J.lax.fori_loop(0, n - 1, body, (x, p))
        x = x + eps * p
        return x, p + 0.5 * eps * J.grad(logp)(x)

    def step(x, key):
        kp, ku = J.random.split(key)
        p0 = J.random.normal(kp, x.shape)
        x1, p1 = leapfrog(x, p0)
        log_ratio = logp(x1) - 0.5 * p1 @ p1 - logp(x) + 0.5 * p0 @ p0
        accept = m.log(J.random.uniform(ku)) < log_ratio
        x = m.where(accept, x1, x)
        return x, (x, accept)

    _, (xs, accepted) = J.jit(lambda x0, key: J.lax.scan(step, x0, J.random.split(key, 20)))(x0, J.random.PRNGKey(seed))
    return xs, accepted, m.mean(accepted)


def test_hamiltonian_monte_carlo_scan():
    assert_same(_hmc, np.array([1.0, -1.0]), 3, rtol=1e-9, numpy_dtypes={2: np.float64})


def _adam_rosenbrock(J, m, x0):
    """Adam (example_libraries.optimizers) on the Rosenbrock function, a fori_loop of update steps under jit."""
    opt = J.example_libraries.optimizers
    init, update, get_params = opt.adam(opt.exponential_decay(0.05, 10, 0.9))

    def rosen(x):
        return m.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    @J.jit
    def run(x0):
        def body(i, state):
            return update(i, J.grad(rosen)(get_params(state)), state)
        state = J.lax.fori_loop(0, 60, body, init(x0))
        return get_params(state), rosen(get_params(state))
    return run(x0)


def test_adam_on_rosenbrock():
    assert_same(_adam_rosenbrock, np.array([-1.2, 1.0, 0.5]), rtol=1e-8)


def _real_nvp(J, m, params, x):
    """A RealNVP flow's log-density: affine couplings with tanh-squashed log-scales, alternating masks, the
    log-determinant summed along the way; value and gradient in the coupling networks' weights."""
    masks = m.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])

    def coupling(p, mask, x):
        h = J.nn.relu(x * mask @ p["w1"] + p["b1"])
        s = m.tanh(h @ p["ws"]) * (1 - mask)
        t = (h @ p["wt"]) * (1 - mask)
        return mask * x + (1 - mask) * (x * m.exp(s) + t), m.sum(s, axis=-1)

    def log_prob(params, x):
        logdet = 0.0
        for p, mask in zip(params, masks):
            x, ld = coupling(p, mask, x)
            logdet = logdet + ld
        return J.scipy.stats.norm.logpdf(x).sum(-1) + logdet

    loss = lambda params: -m.mean(log_prob(params, x))
    return J.jit(J.value_and_grad(loss))(params)


def test_real_nvp_log_prob_and_gradient():
    rng = np.random.default_rng(1)
    params = [{"w1": rng.standard_normal((4, 8)) * 0.3, "b1": rng.standard_normal(8) * 0.1,
               "ws": rng.standard_normal((8, 4)) * 0.3, "wt": rng.standard_normal((8, 4)) * 0.3} for _ in range(2)]
    assert_same(_real_nvp, params, rng.standard_normal((6, 4)))


def _neural_ode(J, m, params, y0):
    """A neural ODE (jax.experimental.ode.odeint, adaptive Dormand-Prince with its adjoint) fit to a target at
    t=1: loss and gradient in the vector field's weights and the initial state."""
    ts = m.array([0.0, 0.5, 1.0])

    def field(y, t, w, b):
        return m.tanh(y @ w + b) - 0.1 * y * t

    def loss(params, y0):
        ys = J.experimental.ode.odeint(field, y0, ts, *params, rtol=1e-8, atol=1e-8)
        return m.sum((ys[-1] - 1.0) ** 2) + 0.1 * m.sum(ys[1] ** 2)

    return J.jit(J.value_and_grad(loss, argnums=(0, 1)))(params, y0)


def test_neural_ode_adjoint_gradient():
    rng = np.random.default_rng(2)
    params = (rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3) * 0.1)
    assert_same(_neural_ode, params, np.array([0.5, -0.2, 0.1]), rtol=1e-6, atol=1e-8)


def _gauss_newton(J, m, theta0, t, y):
    """Gauss-Newton for an exponential-decay fit: the residuals' Jacobian from vmap over jvp (columns) and over
    vjp (rows), the normal equations solved with jnp.linalg.solve, five steps in a Python loop under jit."""
    def residual(theta):
        return theta[0] * m.exp(-theta[1] * t) + theta[2] - y

    @J.jit
    def fit(theta):
        for _ in range(5):
            r, vjp = J.vjp(residual, theta)
            jac_cols = J.vmap(lambda v, theta=theta: J.jvp(residual, (theta,), (v,))[1], out_axes=1)(m.eye(3))
            jac_rows = J.vmap(lambda u, vjp=vjp: vjp(u)[0])(m.eye(t.shape[0]))
            theta = theta - m.linalg.solve(jac_cols.T @ jac_cols, jac_rows.T @ r)
        return theta, m.sum(residual(theta) ** 2)
    return fit(theta0)


def test_gauss_newton_with_jvp_and_vjp():
    t = np.linspace(0, 3, 12)
    y = 2.0 * np.exp(-1.3 * t) + 0.5 + 0.01 * np.sin(7 * t)
    assert_same(_gauss_newton, np.array([1.0, 1.0, 0.0]), t, y, rtol=1e-9)


def _fixed_point_implicit(J, m, a, x_init):
    """The autodiff cookbook's fixed_point with a custom_vjp: the solution found by while_loop, its derivative
    by the implicit function theorem (a second fixed point for the adjoint), used for Newton's square root."""
    from functools import partial

    @partial(J.custom_vjp, nondiff_argnums=(0,))
    def fixed_point(f, a, x_guess):
        def cond_fun(carry):
            x_prev, x = carry
            return m.abs(x_prev - x) > 1e-12

        def body_fun(carry):
            _, x = carry
            return x, f(a, x)
        _, x_star = J.lax.while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
        return x_star

    def fixed_point_fwd(f, a, x_init):
        x_star = fixed_point(f, a, x_init)
        return x_star, (a, x_star)

    def fixed_point_rev(f, res, x_star_bar):
        a, x_star = res
        _, vjp_a = J.vjp(lambda a: f(a, x_star), a)
        a_bar, = vjp_a(fixed_point(partial(rev_iter, f), (a, x_star, x_star_bar), x_star_bar))
        return a_bar, m.zeros_like(x_star)

    def rev_iter(f, packed, u):
        a, x_star, x_star_bar = packed
        _, vjp_x = J.vjp(lambda x: f(a, x), x_star)
        return x_star_bar + vjp_x(u)[0]

    fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)

    def newton_sqrt(a):
        return fixed_point(lambda a, z: 0.5 * (z + a / z), a, x_init)

    return J.jit(newton_sqrt)(a), J.jit(J.grad(newton_sqrt))(a), J.jit(J.vmap(J.grad(newton_sqrt)))(m.arange(1.0, 4))


def test_fixed_point_implicit_gradient():
    assert_same(_fixed_point_implicit, 2.0, 1.0)


def test_type_promotion_table_of_the_type_promotion_notebook():
    """JAX's type_promotion notebook prints the result dtype of x + y for every pair of array dtypes and Python
    scalars. tracejit promotes arrays as NumPy 2 (DESIGN), so its table is checked against NumPy's, and against
    JAX's wherever JAX and NumPy agree; Python scalars are weak in both JAX and tracejit (x_f16 + 1.0 is f16)."""
    import ml_dtypes
    names = ["bool", "uint8", "uint16", "uint32", "int8", "int16", "int32", "int64", "float16", "float32",
             "float64", "complex64", "complex128"]
    agreed = 0
    for a in names:
        for b in names:
            x, y = np.zeros(2, a), np.zeros(2, b)
            got = tj.eval_shape(lambda x, y: x + y, x, y).dtype
            assert got == (x + y).dtype, (a, b)
            agreed += got == jax.eval_shape(jnp.add, x, y).dtype
        for scalar in (True, 1, 1.0, 1j):
            x = np.zeros(2, a)
            add = lambda x, scalar=scalar: x + scalar
            assert tj.eval_shape(add, x).dtype == jax.eval_shape(add, x).dtype, (a, scalar)
    assert agreed > 100
    bf = np.zeros(2, ml_dtypes.bfloat16)
    for scalar in (1, 1.0):
        mul = lambda x, scalar=scalar: x * scalar
        assert tj.eval_shape(mul, bf).dtype == jax.eval_shape(mul, bf).dtype


def _image_ops(J, m, img):
    """uint8 image processing: brightness in int32 clipped back to uint8, a 3x3 box blur as a depthwise
    conv_general_dilated in float32 rounded to uint8, a per-channel histogram with bincount(length=256), an
    inverted image (255 - x stays uint8), a gamma curve through a lookup table, and bit-plane extraction."""
    bright = m.clip(img.astype(m.int32) * 5 // 4 + 10, 0, 255).astype(m.uint8)
    x = img.astype(m.float32)[None].transpose(0, 3, 1, 2)
    kernel = m.ones((3, 1, 3, 3), m.float32) / 9
    blur = J.lax.conv_general_dilated(x, kernel, (1, 1), "SAME", feature_group_count=3)
    blur = m.round(blur[0].transpose(1, 2, 0)).astype(m.uint8)
    hist = J.vmap(lambda c: m.bincount(c.ravel(), length=256), in_axes=2)(img)
    lut = (255.0 * (m.arange(256) / 255.0) ** 0.5).astype(m.uint8)
    return bright, blur, hist, 255 - img, lut[img], (img >> 7) & 1, m.max(img, axis=(0, 1)), img.mean(axis=(0, 1))


def test_uint8_image_ops():
    img = np.random.default_rng(3).integers(0, 256, (6, 7, 3), dtype=np.uint8)
    assert_same(lambda J, m, img: J.jit(lambda img: _image_ops(J, m, img))(img), img, rtol=1e-6,
                numpy_dtypes={7: np.float64})


def _bf16_training_step(J, m, params, x, y):
    """A mixed-precision step: bfloat16 weights and activations, the loss accumulated in float32, the update in
    bfloat16 (the cast's derivative brings the gradient back to bfloat16)."""
    def loss(params):
        h = J.nn.gelu(x.astype(m.bfloat16) @ params["w1"] + params["b1"])
        out = (h @ params["w2"]).astype(m.float32)
        return m.mean((out[:, 0] - y) ** 2)

    @J.jit
    def step(params):
        l, g = J.value_and_grad(loss)(params)
        return l, g, J.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, g)
    return step(params)


def test_bfloat16_training_step():
    import ml_dtypes
    rng = np.random.default_rng(4)
    params = {"w1": (rng.standard_normal((5, 8)) * 0.4).astype(ml_dtypes.bfloat16),
              "b1": np.zeros(8, ml_dtypes.bfloat16), "w2": (rng.standard_normal((8, 1)) * 0.4).astype(ml_dtypes.bfloat16)}
    assert_same(_bf16_training_step, params, rng.standard_normal((4, 5)).astype(np.float32),
                rng.standard_normal(4).astype(np.float32), rtol=2e-2, atol=2e-2)


def _f16_loss_scaling(J, m, w, x, y, scale):
    """float16 training with dynamic loss scaling: the loss multiplied by a scale before grad, the gradient
    unscaled in float32, a finiteness check (isfinite over the tree) choosing between the update and a halved
    scale, as mixed-precision libraries do."""
    def scaled_loss(w, scale):
        pred = m.tanh(x @ w)
        return m.sum((pred - y) ** 2) * scale.astype(m.float16)

    @J.jit
    def step(w, scale):
        g = J.grad(scaled_loss)(w, scale).astype(m.float32) / scale
        finite = m.all(m.isfinite(g))
        new_w = m.where(finite, (w.astype(m.float32) - 0.01 * g).astype(m.float16), w)
        return new_w, m.where(finite, scale * 2, scale / 2), finite
    return step(w, scale)


def test_float16_dynamic_loss_scaling():
    rng = np.random.default_rng(5)
    w, x, y = (rng.standard_normal((4, 2)) * 0.5).astype(np.float16), rng.standard_normal((3, 4)).astype(np.float16), \
        rng.standard_normal((3, 2)).astype(np.float16)
    assert_same(_f16_loss_scaling, w, x, y, np.float32(1024.0), rtol=2e-3, atol=1e-3)
    assert_same(_f16_loss_scaling, w, x, y, np.float32(1e6), rtol=2e-3, atol=1e-3)


def _complex_gradients(J, m, z, w):
    """Complex autodiff conventions (JAX's autodiff cookbook): grad of a real loss of complex inputs is the
    conjugate direction of steepest ascent; holomorphic=True for analytic functions; jacfwd/jacrev of C->C
    maps; vjp with a complex cotangent; jvp of a non-holomorphic function (abs, conj, real)."""
    loss = lambda z: m.sum(m.abs(m.sin(z) * w) ** 2 + m.real(z * m.conj(w)))
    f = lambda z: m.exp(z) * z ** 2 + 1 / z
    g = lambda z: m.conj(z) * z + m.abs(z) + m.imag(z) ** 2
    _, vjp = J.vjp(f, z)
    return (J.grad(loss)(z), J.grad(lambda z: f(z).sum(), holomorphic=True)(z),
            J.jacfwd(f, holomorphic=True)(z), J.jacrev(f, holomorphic=True)(z), vjp(w),
            J.jvp(g, (z,), (w,)), J.vmap(J.grad(lambda z: m.abs(z) ** 3))(z))


def test_complex_gradients_cookbook():
    rng = np.random.default_rng(6)
    z = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    w = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    assert_same(lambda J, m, *a: J.jit(lambda *a: _complex_gradients(J, m, *a))(*a), z, w)


def _graph_net(J, m, params, nodes, senders, receivers):
    """A message-passing graph network (jraph style): edge messages from sender and receiver features,
    aggregated at the receivers with segment_sum, segment_max and a degree normalisation from bincount, a
    graph-level readout; loss and gradient in the weights."""
    n = nodes.shape[0]

    def loss(params):
        h = nodes
        for w_msg, w_upd in params:
            msg = m.tanh(m.concatenate([h[senders], h[receivers]], axis=1) @ w_msg)
            agg = J.ops.segment_sum(msg, receivers, num_segments=n)
            deg = m.bincount(receivers, length=n)
            agg_max = J.ops.segment_max(msg, receivers, num_segments=n)
            agg_max = m.where(deg[:, None] > 0, agg_max, 0.0)
            h = J.nn.relu(m.concatenate([h, agg / m.maximum(deg, 1)[:, None], agg_max], axis=1) @ w_upd)
        return m.sum(h.mean(0) ** 2)
    return J.jit(J.value_and_grad(loss))(params)


def test_graph_net_segment_sums():
    rng = np.random.default_rng(7)
    params = [(rng.standard_normal((6, 4)) * 0.5, rng.standard_normal((11, 3)) * 0.5),
              (rng.standard_normal((6, 4)) * 0.5, rng.standard_normal((11, 3)) * 0.5)]
    senders, receivers = np.array([0, 1, 2, 3, 4, 0, 2]), np.array([1, 2, 0, 0, 1, 3, 3])
    assert_same(_graph_net, params, rng.standard_normal((5, 3)), senders, receivers)


def _sort_ops(J, m, x, k):
    """Sorting-based ops: ranks (argsort of argsort), a trimmed mean from sort, lexsort by two keys, unique
    with size= and fill_value under jit, argpartition-free top-k by argsort, quantile and median, and the
    gradient of a sorted-weighted loss (an OWA/L-statistic) and of jnp.sort itself."""
    ranks = m.argsort(m.argsort(x, axis=1), axis=1)
    trimmed = m.sort(x, axis=1)[:, 1:-1].mean(axis=1)
    order = m.lexsort((x[0], k))
    uniq, counts = m.unique(k, size=5, fill_value=-1, return_counts=True)
    top = m.argsort(-x[0])[:3]
    owa = lambda x: m.sum(m.sort(x.ravel()) * m.linspace(0.0, 1.0, x.size))
    return (ranks, trimmed, order, uniq, counts, top, m.quantile(x, 0.3, axis=1), m.median(x),
            J.grad(owa)(x), J.jacrev(lambda x: m.sort(x))(x[0]))


def test_sorting_based_ops():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 6))
    assert_same(lambda J, m, *a: J.jit(lambda *a: _sort_ops(J, m, *a))(*a), x, np.array([2, 0, 2, 1, 0, 2]))


def _early_stopping(J, m, w0, X, y):
    """Gradient descent with early stopping in a while_loop: stops when the gradient's norm falls under a
    tolerance or after max_iter, carrying the iteration count and a loss history written with .at[i].set."""
    def loss(w):
        return m.mean(J.nn.softplus(-y * (X @ w))) + 0.01 * w @ w

    @J.jit
    def fit(w0):
        hist = m.full(200, m.nan)

        def cond(c):
            i, _, g, _ = c
            return (m.linalg.norm(g) > 1e-3) & (i < 200)

        def body(c):
            i, w, g, hist = c
            w = w - 0.5 * g
            return i + 1, w, J.grad(loss)(w), hist.at[i].set(loss(w))
        return J.lax.while_loop(cond, body, (0, w0, J.grad(loss)(w0), hist))
    return fit(w0)


def test_while_loop_early_stopping():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((20, 3))
    y = np.sign(X @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.standard_normal(20))
    assert_same(_early_stopping, np.zeros(3), X, y, rtol=1e-9)


def _cookbook_hvp(J, m, x, v):
    """The autodiff cookbook's Hessian-vector products: forward-over-reverse, reverse-over-forward and
    reverse-over-reverse agree; the full Hessian by jacfwd(jacrev); a batched HVP with vmap; the Jacobian of
    a vmapped function."""
    f = lambda x: m.sum(m.tanh(x) ** 2 * m.roll(x, 1)) + m.prod(m.cos(x))
    fwd_rev = lambda v: J.jvp(J.grad(f), (x,), (v,))[1]
    rev_fwd = lambda v: J.grad(lambda x: J.jvp(f, (x,), (v,))[1])(x)
    rev_rev = lambda v: J.grad(lambda x: m.vdot(J.grad(f)(x), v))(x)
    batched = J.vmap(fwd_rev)(m.stack([v, 2 * v, m.ones_like(v)]))
    return (fwd_rev(v), rev_fwd(v), rev_rev(v), J.jacfwd(J.jacrev(f))(x), batched,
            J.jacrev(J.vmap(lambda r: m.sin(r) * r[::-1]))(m.stack([x, v])))


def test_cookbook_hessian_vector_products():
    rng = np.random.default_rng(10)
    assert_same(lambda J, m, *a: J.jit(lambda *a: _cookbook_hvp(J, m, *a))(*a), rng.standard_normal(4),
                rng.standard_normal(4))


def _gaussian_process(J, m, log_params, x, y, xs):
    """autograd's examples/gaussian_process.py: an RBF-kernel GP's log marginal likelihood (cholesky,
    cho_solve, the log-determinant from the factor's diagonal), its gradient in the log hyperparameters, and
    the predictive mean and variance at new points."""
    def kernel(a, b, log_amp, log_len):
        d = a[:, None] - b[None, :]
        return m.exp(2 * log_amp) * m.exp(-0.5 * (d / m.exp(log_len)) ** 2)

    def log_marginal(log_params):
        mean, log_amp, log_len, log_noise = log_params
        K = kernel(x, x, log_amp, log_len) + (m.exp(log_noise) + 1e-6) * m.eye(x.shape[0])
        c = J.scipy.linalg.cho_factor(K, lower=True)
        alpha = J.scipy.linalg.cho_solve(c, y - mean)
        return (-0.5 * (y - mean) @ alpha - m.sum(m.log(m.diag(c[0])))
                - 0.5 * x.shape[0] * m.log(2 * m.pi))

    def predict(log_params):
        mean, log_amp, log_len, log_noise = log_params
        K = kernel(x, x, log_amp, log_len) + (m.exp(log_noise) + 1e-6) * m.eye(x.shape[0])
        Ks = kernel(xs, x, log_amp, log_len)
        L = m.linalg.cholesky(K)
        v = J.scipy.linalg.solve_triangular(L, Ks.T, lower=True)
        mu = mean + Ks @ J.scipy.linalg.cho_solve((L, True), y - mean)
        return mu, m.exp(2 * log_amp) - m.sum(v ** 2, axis=0)

    return J.jit(J.value_and_grad(log_marginal))(log_params), J.jit(predict)(log_params)


def test_autograd_gaussian_process():
    rng = np.random.default_rng(11)
    x = np.sort(rng.uniform(-3, 3, 8))
    assert_same(_gaussian_process, np.array([0.1, 0.2, -0.3, -2.0]), x, np.sin(x) + 0.1 * rng.standard_normal(8),
                np.linspace(-3, 3, 4), rtol=1e-8)


def _black_box_svi(J, m, params, seed, X, y):
    """autograd's black_box_svi.py and bayesian_neural_net.py: a diagonal Gaussian over a small network's
    flattened weights (ravel_pytree), reparameterised samples, a Monte Carlo ELBO with an entropy term, its
    gradient, and a few Adam-free SGD steps in a scan."""
    shapes = {"w1": m.zeros((2, 5)), "b1": m.zeros(5), "w2": m.zeros(5)}
    flat0, unravel = J.flatten_util.ravel_pytree(shapes)
    d = flat0.shape[0]

    def log_joint(flat):
        w = unravel(flat)
        out = m.tanh(X @ w["w1"] + w["b1"]) @ w["w2"]
        return -0.5 * m.sum(flat ** 2) - 0.5 * m.sum((out - y) ** 2) / 0.1 ** 2

    def elbo(params, key):
        mean, log_std = params[:d], params[d:]
        eps = J.random.normal(key, (4, d))
        samples = mean + eps * m.exp(log_std)
        entropy = 0.5 * d * (1 + m.log(2 * m.pi)) + m.sum(log_std)
        return m.mean(J.vmap(log_joint)(samples)) + entropy

    def step(params, key):
        val, g = J.value_and_grad(elbo)(params, key)
        return params + 1e-3 * g, val
    keys = J.random.split(J.random.PRNGKey(seed), 5)
    return J.jit(lambda p: J.lax.scan(step, p, keys))(params)


def test_black_box_svi_bayesian_net():
    rng = np.random.default_rng(12)
    X = rng.standard_normal((10, 2))
    params = np.concatenate([0.1 * rng.standard_normal(20), -2 * np.ones(20)])
    assert_same(_black_box_svi, params, 0, X, np.sin(X[:, 0]), rtol=1e-8)


def _lstm_lm(J, m, params, tokens):
    """autograd's rnn.py and lstm.py: a character-level LSTM over one-hot inputs with lax.scan, a log-softmax
    output layer, the sequence's negative log-likelihood and its gradient in all the gates' weights."""
    vocab = params["out"].shape[1]

    def cell(carry, x):
        h, c = carry
        z = m.concatenate([x, h]) @ params["gates"] + params["bias"]
        i, f, o, g = m.split(z, 4)
        c = J.nn.sigmoid(f) * c + J.nn.sigmoid(i) * m.tanh(g)
        h = J.nn.sigmoid(o) * m.tanh(c)
        return (h, c), J.nn.log_softmax(h @ params["out"])

    def nll(params_):
        nonlocal params
        params = params_
        hidden = params["out"].shape[0]
        xs = J.nn.one_hot(tokens[:-1], vocab)
        _, logp = J.lax.scan(cell, (m.zeros(hidden), m.zeros(hidden)), xs)
        return -m.mean(m.take_along_axis(logp, tokens[1:, None], axis=1))

    return J.jit(J.value_and_grad(nll))(params)


def test_lstm_language_model():
    rng = np.random.default_rng(13)
    hidden, vocab = 6, 5
    params = {"gates": rng.standard_normal((vocab + hidden, 4 * hidden)) * 0.3,
              "bias": np.zeros(4 * hidden), "out": rng.standard_normal((hidden, vocab)) * 0.3}
    assert_same(_lstm_lm, params, np.array([0, 3, 1, 4, 2, 2, 0, 1]), rtol=1e-9)


def _mixture_model(J, m, params, x):
    """autograd's mixture_model.py (gmm): a 2-D Gaussian mixture's log-likelihood through logsumexp over
    components (mixture weights by log_softmax, per-component Cholesky-parameterised covariances, the
    determinant from the diagonal), and its gradient in every parameter; the responsibilities by softmax."""
    def log_component(mu, L_raw, x):
        L = m.tril(L_raw, -1) + m.diag(m.exp(m.diag(L_raw)))
        z = J.scipy.linalg.solve_triangular(L, (x - mu).T, lower=True)
        return -0.5 * m.sum(z ** 2, axis=0) - m.sum(m.log(m.diag(L))) - m.log(2 * m.pi)

    def log_lik(params):
        log_w = J.nn.log_softmax(params["logits"])
        comps = J.vmap(log_component, in_axes=(0, 0, None), out_axes=1)(params["mu"], params["L"], x)
        return m.sum(J.scipy.special.logsumexp(comps + log_w, axis=1)), J.nn.softmax(comps + log_w, axis=1)

    return J.jit(J.value_and_grad(log_lik, has_aux=True))(params)


def test_gaussian_mixture_log_likelihood():
    rng = np.random.default_rng(14)
    params = {"logits": rng.standard_normal(3), "mu": rng.standard_normal((3, 2)),
              "L": 0.3 * rng.standard_normal((3, 2, 2))}
    assert_same(_mixture_model, params, rng.standard_normal((7, 2)), rtol=1e-9)


def _tanh_towers(J, m, x):
    """autograd's tanh.py: the first four derivatives of tanh by repeated elementwise grad (vmap of grad), and
    sinusoid.py's Taylor check: the derivatives of sin at 0 cycle through 0, 1, 0, -1."""
    ds, f = [], m.tanh
    for _ in range(4):
        f = J.grad(f)
        ds.append(J.jit(J.vmap(f))(x))
    g, sin_derivs = m.sin, []
    for _ in range(4):
        g = J.grad(g)
        sin_derivs.append(g(0.0))
    return ds, sin_derivs


def test_autograd_tanh_derivative_towers():
    assert_same(_tanh_towers, np.linspace(-3, 3, 7))


def _callbacks(J, m, x):
    """The external_callbacks notebook: a host function (scipy.special.j1) behind pure_callback with a
    ShapeDtypeStruct result, made differentiable with custom_jvp (its derivative j0 - j1/x by another
    callback), vmapped with vmap_method='sequential' and 'expand_dims', and jax.debug.callback collecting
    values."""
    import scipy.special
    seen = []

    def j1(x):
        return J.pure_callback(lambda x: scipy.special.j1(x).astype(x.dtype), J.ShapeDtypeStruct(x.shape, x.dtype),
                               x, vmap_method="sequential")

    def j0(x):
        return J.pure_callback(lambda x: scipy.special.j0(x).astype(x.dtype), J.ShapeDtypeStruct(x.shape, x.dtype),
                               x, vmap_method="expand_dims")

    @J.custom_jvp
    def bessel_j1(x):
        return j1(x)

    @bessel_j1.defjvp
    def _(primals, tangents):
        x, = primals
        return bessel_j1(x), (j0(x) - j1(x) / x) * tangents[0]

    def loss(x):
        y = bessel_j1(x)
        J.debug.callback(lambda v: seen.append(np.asarray(v)), m.sum(y))
        return m.sum(y ** 2)

    out = J.jit(J.value_and_grad(loss))(x), J.jit(J.vmap(J.grad(lambda s: bessel_j1(s) * s)))(x)
    return out, seen


def test_external_callbacks_notebook():
    x = np.array([0.5, 1.5, 2.5, 4.0])
    (want, want_seen), (got, got_seen) = _callbacks(jax, jnp, x), _callbacks(tj, tnp, x)
    for w, g in zip(jax.tree_util.tree_leaves(want), tj.tree_util.tree_leaves(got)):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    np.testing.assert_allclose(got_seen, want_seen, rtol=1e-12)


def _remat_policies(J, m, params, x):
    """The autodiff_remat notebook: a layer stack under jax.checkpoint with policies (nothing
    saveable, dots without batch dims, names saved via checkpoint_name + save_only_these_names, two policies
    combined, one of them save_any_names_but_these); all give the same gradients as no checkpointing. The policy reaches grad as a
    non-differentiated argument, static under jit (tracejit's grad took every argument for an array and raised)."""
    cp = J.checkpoint_policies

    def layer(w, x):
        y = J.ad_checkpoint.checkpoint_name(m.sin(x @ w), "act")
        return m.tanh(y) * x

    def loss(params, policy):
        f = layer if policy is None else J.checkpoint(layer, policy=policy, prevent_cse=False)
        h = x
        for w in params:
            h = f(w, h)
        return m.sum(h ** 2)

    policies = [None, cp.nothing_saveable, cp.dots_with_no_batch_dims_saveable, cp.save_only_these_names("act"),
                cp.save_from_both_policies(cp.dots_saveable, cp.save_any_names_but_these("act"))]
    grad = J.jit(J.grad(loss), static_argnums=1)
    return [grad(params, p) for p in policies]


def test_remat_policies_give_equal_gradients():
    rng = np.random.default_rng(15)
    params = [rng.standard_normal((4, 4)) * 0.5 for _ in range(3)]
    assert_same(_remat_policies, params, rng.standard_normal((2, 4)))


def _convolutions(J, m, img, kernel, k1):
    """The convolutions notebook: NHWC/HWIO/NHWC dimension numbers, strides and padding tuples, rhs dilation
    (atrous), lhs dilation (a transposed convolution) and lax.conv_transpose, jnp.convolve's modes,
    jax.scipy.signal.convolve2d, and the gradient of a conv layer in its kernel."""
    lax = J.lax
    dn = lax.conv_dimension_numbers(img.shape, kernel.shape, ("NHWC", "HWIO", "NHWC"))
    out = lax.conv_general_dilated(img, kernel, (1, 1), "SAME", (1, 1), (1, 1), dn)
    strided = lax.conv_general_dilated(img, kernel, (2, 2), ((1, 0), (0, 1)), dimension_numbers=dn)
    atrous = lax.conv_general_dilated(img, kernel, (1, 1), "VALID", rhs_dilation=(2, 2), dimension_numbers=dn)
    upsampled = lax.conv_general_dilated(img, kernel, (1, 1), ((1, 1), (1, 1)), lhs_dilation=(2, 2),
                                         dimension_numbers=dn)
    transposed = lax.conv_transpose(img, kernel, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    one_d = [m.convolve(k1, img[0, :, 0, 0], mode=mode) for mode in ("full", "same", "valid")]
    two_d = J.scipy.signal.convolve2d(img[0, :, :, 0], kernel[:, :, 0, 0], mode="same")
    kgrad = J.grad(lambda k: m.sum(m.tanh(lax.conv_general_dilated(img, k, (1, 1), "SAME", dimension_numbers=dn))))
    return out, strided, atrous, upsampled, transposed, one_d, two_d, J.jit(kgrad)(kernel)


def test_convolutions_notebook():
    rng = np.random.default_rng(16)
    assert_same(_convolutions, rng.standard_normal((1, 6, 5, 2)), rng.standard_normal((3, 3, 2, 3)),
                np.array([1.0, -2.0, 0.5]), rtol=1e-9)


def _gotchas(J, m, x, idx):
    """Common Gotchas: out-of-bounds gathers clamp and out-of-bounds scatters drop under jit, negative indices
    wrap, .at[].get(mode='fill'), repeated indices accumulate with .add but not .set (last or any), the
    double-where trick keeps gradients finite, and integer division of negatives floors."""
    safe_log = lambda x: m.where(x > 0, m.log(m.where(x > 0, x, 1.0)), 0.0)
    return (x[idx], x.at[idx].add(1.0), x.at[idx].get(mode="fill", fill_value=-9.0), x.at[idx].min(0.5),
            x.at[m.array([1, 1, 2])].add(1.0), m.sum(x.at[m.array([1, 1, 2])].set(5.0)),
            J.grad(lambda x: m.sum(safe_log(x)))(x - 1.0), m.floor_divide(idx - 3, 2), m.remainder(idx - 3, 2),
            J.lax.rem(idx - 3, 2), J.lax.div(idx - 3, 2))


def test_common_gotchas_indexing():
    assert_same(lambda J, m, *a: J.jit(lambda *a: _gotchas(J, m, *a))(*a), np.array([0.5, 1.5, 2.5, 3.5]),
                np.array([0, 3, 7, -1, -6]))


def _stax_resnet(J, m, x, y):
    """A small residual CNN in stax (serial, FanOut, parallel, FanInSum, Identity, Conv with NHWC specs,
    BatchNorm, Relu, AvgPool, MaxPool, Flatten, Dense, LogSoftmax), its parameter shapes from eval_shape of
    init (the values drawn by NumPy: XLA takes seconds to compile stax's random init), its loss and gradient,
    one momentum step with optimizers.momentum."""
    stax, opt = J.example_libraries.stax, J.example_libraries.optimizers
    nhwc = ("NHWC", "HWIO", "NHWC")
    block = stax.serial(stax.FanOut(2), stax.parallel(stax.serial(stax.GeneralConv(nhwc, 4, (3, 3), padding="SAME"),
                                                                  stax.BatchNorm(axis=(0, 1, 2)), stax.Relu),
                                                      stax.Identity), stax.FanInSum)
    init, apply = stax.serial(stax.Conv(4, (3, 3), padding="SAME"),
                              block, stax.MaxPool((2, 2), strides=(2, 2), spec="NHWC"),
                              stax.AvgPool((2, 2), spec="NHWC", padding="SAME"), stax.Flatten,
                              stax.Dense(3), stax.LogSoftmax)
    loss = lambda p: -m.mean(m.sum(apply(p, x) * y, axis=1))
    o_init, o_update, get_params = opt.momentum(0.1, 0.9)
    _, shapes = J.eval_shape(lambda key: init(key, x.shape), J.random.PRNGKey(0))
    rng = np.random.default_rng(0)
    params = J.tree_util.tree_map(lambda s: 0.3 * rng.standard_normal(s.shape), shapes)

    @J.jit
    def first_step(params):
        l, g = J.value_and_grad(loss)(params)
        return l, g, get_params(o_update(0, g, o_init(params)))
    return first_step(params)


def test_stax_residual_cnn():
    rng = np.random.default_rng(17)
    assert_same(_stax_resnet, rng.standard_normal((2, 6, 6, 1)), np.eye(3)[[0, 2]], rtol=1e-8, atol=1e-10)


def _samplers(J, m, seed):
    """jax.random's samplers as simulation code uses them, bit for bit: permutation (of an int and along an axis
    of an array), choice with p and without replacement, categorical over logits with shape, bernoulli,
    truncated_normal, multivariate_normal, gumbel, exponential, laplace, randint with array bounds, rademacher
    and cauchy."""
    r = J.random
    ks = r.split(r.PRNGKey(seed), 16)
    cov = m.array([[2.0, 0.5], [0.5, 1.0]])
    return (r.permutation(ks[0], 7), r.permutation(ks[1], m.arange(12.0).reshape(3, 4), axis=1,
                                                  independent=True),
            r.choice(ks[2], 5, (3,), replace=False, p=m.array([0.1, 0.2, 0.3, 0.2, 0.2])),
            r.categorical(ks[3], m.log(m.array([[0.2, 0.8], [0.6, 0.4]])), shape=(4, 2)),
            r.bernoulli(ks[4], m.array([0.1, 0.5, 0.9])), r.truncated_normal(ks[5], -1.0, 2.0, (3,)),
            r.multivariate_normal(ks[6], m.zeros(2), cov, (2,)), r.gumbel(ks[8], (3,)),
            r.exponential(ks[9], (2,)), r.laplace(ks[10], (2,)), r.randint(ks[11], (3,), m.array([0, 5, 10]), 20),
            r.rademacher(ks[13], (4,)), r.cauchy(ks[14], (2,)))


def test_random_samplers_bit_for_bit():
    assert_same(lambda J, m, s: J.jit(lambda s: _samplers(J, m, s))(s), 5, rtol=1e-9, atol=1e-12)


def _initializers(J, m, seed):
    """A Flax-style parameter initialisation: glorot_uniform, he_uniform for a conv kernel, lecun_uniform, orthogonal with a scale, variance_scaling over fan_avg, constant and normal(stddev) in
    float32; same draws as JAX."""
    init = J.nn.initializers
    ks = J.random.split(J.random.PRNGKey(seed), 7)
    return (init.glorot_uniform()(ks[0], (4, 3)), init.he_uniform()(ks[1], (3, 3, 2, 4)),
            init.lecun_uniform()(ks[2], (5, 2)), init.orthogonal(scale=2.0)(ks[3], (3, 5)),
            init.variance_scaling(0.5, "fan_avg", "uniform")(ks[4], (6, 2)), init.constant(0.3)(ks[5], (2,)),
            init.normal(0.02)(ks[6], (2, 2), m.float32))


def test_nn_initializers_same_draws():
    assert_same(lambda J, m, s: J.jit(lambda s: _initializers(J, m, s))(s), 1, rtol=1e-6, atol=1e-12)


def _integer_bits(J, m, x, seed):
    """Integer and bit code: an xorshift32 hash in uint32 (shifts, xor, wrapping multiply), population_count,
    clz, logical vs arithmetic right shifts of negative int32, a Morton code interleaving bits, bitwise_count,
    left_shift beyond the width, gcd/lcm, and uint8 wrap-around arithmetic."""
    lax = J.lax

    def xorshift(s):
        s = s ^ (s << 13)
        s = s ^ (s >> 17)
        return s ^ (s << 5)
    h = J.lax.fori_loop(0, 3, lambda i, s: xorshift(s) * m.uint32(2654435761), x.astype(m.uint32) + seed)
    neg = -x.astype(m.int32) - 1

    def spread(v):
        v = (v | (v << 8)) & 0x00FF00FF
        v = (v | (v << 4)) & 0x0F0F0F0F
        v = (v | (v << 2)) & 0x33333333
        return (v | (v << 1)) & 0x55555555
    xs = x.astype(m.uint32)
    return (h, lax.population_count(h), lax.clz(h), lax.shift_right_logical(neg, m.int32(3)),
            lax.shift_right_arithmetic(neg, m.int32(3)), spread(xs) | (spread(xs[::-1]) << 1), m.bitwise_count(neg),
            m.left_shift(xs, m.uint32(33)), m.gcd(x, 12), m.lcm(x, 4), x.astype(m.uint8) * m.uint8(37) + m.uint8(200))


def test_integer_bit_manipulation():
    x = np.array([0, 1, 7, 100, 255, 1023])
    assert_same(lambda J, m, *a: J.jit(lambda *a: _integer_bits(J, m, *a))(*a), x, np.uint32(12345))


def _linear_recurrence(J, m, a, b):
    """A diagonal linear state-space layer (S4/LRU style): h_t = a_t * h_{t-1} + b_t by lax.associative_scan
    with a pair-combining operator, checked against lax.scan with reverse=True and unroll=2 on the flipped
    sequence, and the gradient of the parallel scan."""
    def combine(left, right):
        a_l, b_l = left
        a_r, b_r = right
        return a_r * a_l, a_r * b_l + b_r

    parallel = lambda a, b: J.lax.associative_scan(combine, (a, b))[1]

    def sequential(a, b):
        step = lambda h, ab: (ab[0] * h + ab[1],) * 2
        return J.lax.scan(step, m.zeros_like(b[0]), (a[::-1], b[::-1]), reverse=True, unroll=2)[1][::-1]
    loss = lambda a, b: m.sum(m.sin(parallel(a, b)))
    return J.jit(lambda a, b: (parallel(a, b), sequential(a, b), J.grad(loss, argnums=(0, 1))(a, b),
                               J.lax.associative_scan(m.add, b, reverse=True, axis=1),
                               J.lax.cummax(b, axis=0, reverse=True)))(a, b)


def test_associative_scan_linear_recurrence():
    rng = np.random.default_rng(18)
    assert_same(_linear_recurrence, rng.uniform(0.5, 1.0, (9, 3)), rng.standard_normal((9, 3)), rtol=1e-10)


def _pooling(J, m, x):
    """Pooling the thinking_in_jax way: max and average pools by lax.reduce_window (strides, padding, a
    window dilation), min pooling by the generic reduce_window with an init value and lax.min, and the
    gradients of the max pool (ties at the plateau) and the average pool."""
    lax = J.lax
    maxpool = lambda x: lax.reduce_window(x, -m.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    avgpool = lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9.0
    minpool = lax.reduce_window(x, m.inf, lax.min, (1, 2, 2, 1), (1, 1, 1, 1), ((0, 1), (1, 0), (0, 0), (0, 0)),
                                window_dilation=(1, 2, 1, 1))
    loss = lambda x: m.sum(maxpool(x) ** 2) + m.sum(m.tanh(avgpool(x)))
    return maxpool(x), avgpool(x), minpool, J.jit(J.grad(loss))(x)


def test_reduce_window_pooling():
    x = np.random.default_rng(19).standard_normal((2, 6, 6, 2))
    x[0, :2, :2, 0] = 1.5  # a plateau: the max pool's gradient goes to one element of it
    assert_same(_pooling, x)


def _minimize_and_solve(J, m, A, b):
    """jax.scipy.optimize.minimize(method='BFGS') on a Rosenbrock-plus-quadratic objective, a conjugate
    gradient solve (jax.scipy.sparse.linalg.cg) with a matvec closure, lax.custom_root for a Newton solve
    with an implicit derivative, and the gradient through cg's implicit solve."""
    rosen = lambda x: m.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2) + 0.1 * x @ A @ x
    res = J.scipy.optimize.minimize(rosen, m.array([-1.0, 1.0, 0.5]), method="BFGS")
    spd = A @ A.T + m.eye(3)
    solve_cg = lambda b: J.scipy.sparse.linalg.cg(lambda v: spd @ v, b, tol=1e-12)[0]

    def cube_root(c):
        return J.lax.custom_root(lambda x: x ** 3 - c, 1.0, lambda f, x0: J.lax.fori_loop(
            0, 30, lambda i, x: x - f(x) / J.grad(f)(x), x0), lambda g, y: y / J.grad(g)(1.0))
    return (res.x, res.fun, res.success, solve_cg(b), J.grad(lambda b: m.sum(solve_cg(b) ** 2))(b),
            cube_root(5.0), J.grad(cube_root)(5.0))


def test_minimize_cg_and_custom_root():
    rng = np.random.default_rng(20)
    want, got = both(lambda J, m, *a: J.jit(lambda *a: _minimize_and_solve(J, m, *a))(*a), rng.standard_normal((3, 3)), rng.standard_normal(3))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)   # BFGS iterates: line searches may stop a step apart
    for w, g in zip(want[1:], got[1:]):
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)


def _kalman(J, m, ys, log_q):
    """A Kalman filter for a constant-velocity model as a lax.scan (predict, update with linalg.solve, the
    innovations' Gaussian log-likelihood via slogdet), an RTS smoother as a reverse scan, and the gradient of
    the log-likelihood in the process noise."""
    F = m.array([[1.0, 1.0], [0.0, 1.0]])
    H = m.array([[1.0, 0.0]])
    R = m.array([[0.25]])

    def filt(log_q):
        Q = m.exp(log_q) * m.array([[1 / 3, 1 / 2], [1 / 2, 1.0]])

        def step(carry, y):
            mu, P, ll = carry
            mu_p, P_p = F @ mu, F @ P @ F.T + Q
            S = H @ P_p @ H.T + R
            K = m.linalg.solve(S, H @ P_p).T
            r = y - H @ mu_p
            ll = ll - 0.5 * (r @ m.linalg.solve(S, r) + m.linalg.slogdet(2 * m.pi * S)[1])
            mu, P = mu_p + K @ r, (m.eye(2) - K @ H) @ P_p
            return (mu, P, ll), (mu, P, mu_p, P_p)
        (_, _, ll), outs = J.lax.scan(step, (m.zeros(2), 10 * m.eye(2), 0.0), ys)
        return ll, outs

    def smooth(outs):
        mus, Ps, mu_ps, P_ps = outs

        def back(carry, t):
            mu_s, P_s = carry
            G = Ps[t] @ F.T @ m.linalg.inv(P_ps[t + 1])
            mu = mus[t] + G @ (mu_s - mu_ps[t + 1])
            P = Ps[t] + G @ (P_s - P_ps[t + 1]) @ G.T
            return (mu, P), mu
        _, sm = J.lax.scan(back, (mus[-1], Ps[-1]), m.arange(ys.shape[0] - 1), reverse=True)
        return sm

    @J.jit
    def run(log_q):
        ll, outs = filt(log_q)
        return ll, smooth(outs), J.grad(lambda q: filt(q)[0])(log_q)
    return run(log_q)


def test_kalman_filter_and_smoother():
    t = np.arange(8.0)
    ys = (0.5 * t + np.random.default_rng(21).standard_normal(8) * 0.5)[:, None]
    assert_same(_kalman, ys, -1.0, rtol=1e-9)


def _maml(J, m, params, tasks):
    """MAML on sinusoid regression (JAX's meta-learning tutorial): an inner SGD step by grad, the outer loss on
    the adapted parameters differentiated through the inner step (second order), vmapped over tasks, and
    the first-order variant with stop_gradient."""
    def net(p, x):
        h = m.tanh(x[:, None] * p["w1"] + p["b1"])
        return h @ p["w2"]

    def mse(p, x, y):
        return m.mean((net(p, x) - y) ** 2)

    def inner(p, x, y):
        g = J.grad(mse)(p, x, y)
        return J.tree_util.tree_map(lambda p, g: p - 0.1 * g, p, g)

    def maml_loss(p, task, first_order):
        xa, ya, xb, yb = task
        adapted = inner(J.lax.stop_gradient(p) if first_order else p, xa, ya)
        if first_order:
            adapted = J.tree_util.tree_map(lambda a, p: a - J.lax.stop_gradient(a) + p
                                           - J.lax.stop_gradient(p), adapted, p)
        return mse(adapted, xb, yb)

    def batch_loss(p, first_order):
        return m.mean(J.vmap(maml_loss, in_axes=(None, 0, None))(p, tasks, first_order))
    return [J.jit(J.value_and_grad(batch_loss), static_argnums=1)(params, fo) for fo in (False, True)]


def test_maml_sinusoid_second_order():
    rng = np.random.default_rng(22)
    params = {"w1": rng.standard_normal(8), "b1": rng.standard_normal(8) * 0.1, "w2": rng.standard_normal(8) * 0.3}
    amp, phase = rng.uniform(0.5, 2, (3, 1)), rng.uniform(0, 3, (3, 1))
    xa, xb = rng.uniform(-3, 3, (3, 5)), rng.uniform(-3, 3, (3, 5))
    tasks = (xa, amp * np.sin(xa + phase), xb, amp * np.sin(xb + phase))
    assert_same(_maml, params, tasks, rtol=1e-9)


def _natural_gradient(J, m, theta, X, y):
    """autograd's natural_gradient.py for logistic regression: the Fisher information from the per-example
    score vectors (vmap of grad), a damped natural-gradient step by cho_solve, and the empirical Fisher from
    jacrev of the per-example log-likelihoods; plus a neural tangent kernel from jacobians over a parameter
    pytree contracted with tree_map."""
    def loglik(theta, x, y):
        return -J.nn.softplus(-y * (x @ theta))

    @J.jit
    def step(theta):
        scores = J.vmap(J.grad(loglik), in_axes=(None, 0, 0))(theta, X, y)
        fisher = scores.T @ scores / X.shape[0] + 1e-3 * m.eye(theta.shape[0])
        g = m.mean(scores, axis=0)
        return theta + J.scipy.linalg.cho_solve(J.scipy.linalg.cho_factor(fisher), g), fisher

    empirical = J.jit(J.jacrev(lambda t: J.vmap(loglik, in_axes=(None, 0, 0))(t, X, y)))(theta)

    def f(p, x):
        return m.tanh(x @ p["w"] + p["b"]) @ p["v"]
    p = {"w": m.outer(theta, theta[::-1]), "b": theta, "v": m.ones(theta.shape[0])}
    jac = J.jacrev(f)(p, X)
    ntk = sum(m.tensordot(a, b, axes=(list(range(1, a.ndim)),) * 2)
              for a, b in zip(J.tree_util.tree_leaves(jac), J.tree_util.tree_leaves(jac)))
    return step(theta), empirical, ntk


def test_natural_gradient_and_ntk():
    rng = np.random.default_rng(23)
    X = rng.standard_normal((12, 3))
    assert_same(_natural_gradient, np.array([0.3, -0.2, 0.5]), X, np.sign(X[:, 0] + 0.2), rtol=1e-9)


def _pca_and_spectra(J, m, X):
    """Spectral code: PCA by eigh of the covariance (eigenvalues and their gradient), the nuclear norm by svd
    and its gradient, a log-determinant by slogdet and its gradient, matrix functions (expm, sqrtm-free
    matrix_power, pinv) and a least-squares fit with lstsq."""
    C = m.cov(X, rowvar=False)
    w, v = m.linalg.eigh(C)
    nuclear = lambda X: m.sum(m.linalg.svd(X, compute_uv=False))
    logdet = lambda X: m.linalg.slogdet(X.T @ X + m.eye(X.shape[1]))[1]
    top = lambda X: m.linalg.eigvalsh(m.cov(X, rowvar=False))[-1]
    coef, _, rank, sv = m.linalg.lstsq(X, X[:, 0] + 0.5 * X[:, 1])
    return (w, m.abs(v[:, -1]), J.grad(nuclear)(X), J.grad(logdet)(X), J.grad(top)(X),
            J.scipy.linalg.expm(C), m.linalg.matrix_power(C, 3), m.linalg.pinv(X), coef, rank, sv)


def test_pca_and_spectral_gradients():
    X = np.random.default_rng(24).standard_normal((7, 3))
    assert_same(lambda J, m, X: J.jit(lambda X: _pca_and_spectra(J, m, X))(X), X, rtol=1e-8, atol=1e-10, numpy_dtypes={9: np.int32})


def _mnist_style_mlp(J, m, params, images, labels):
    """neural_network_with_tfds_data / mnist_classifier_fromscratch: an MLP's batched predictions by vmap
    over a single-example function, logits - logsumexp, one_hot targets, accuracy by argmax, and an SGD
    update by tree_map under jit, three steps."""
    def predict(params, image):
        act = image
        for w, b in params[:-1]:
            act = J.nn.relu(m.dot(w, act) + b)
        w, b = params[-1]
        logits = m.dot(w, act) + b
        return logits - J.scipy.special.logsumexp(logits)

    batched = J.vmap(predict, in_axes=(None, 0))

    def loss(params, images, targets):
        return -m.mean(batched(params, images) * targets)

    def update(params, x, y):
        grads = J.grad(loss)(params, x, y)
        return [(w - 0.5 * dw, b - 0.5 * db) for (w, b), (dw, db) in zip(params, grads)]

    @J.jit
    def train(params):
        targets = J.nn.one_hot(labels, 4)
        for _ in range(3):
            params = update(params, images, targets)
        acc = m.mean(m.argmax(batched(params, images), axis=1) == labels)
        return params, loss(params, images, targets), acc
    return train(params)


def test_mnist_style_mlp_training():
    rng = np.random.default_rng(25)
    params = [(0.3 * rng.standard_normal((n, m_)), 0.1 * rng.standard_normal(n)) for m_, n in [(16, 8), (8, 4)]]
    labels = rng.integers(0, 4, 10)
    assert_same(_mnist_style_mlp, params, rng.standard_normal((10, 16)) + labels[:, None], labels, rtol=1e-9,
                numpy_dtypes={5: np.float64})


def _vmapped_log_probs(J, m, X, y, seed):
    """The vmapped_log_probs notebook: a Bayesian logistic regression's log joint written for one parameter
    vector and vmapped over a batch of them, a mean-field ELBO with reparameterised samples, its gradient,
    and a few steps of gradient ascent in a fori_loop with keys folded in per step."""
    def log_joint(beta):
        prior = m.sum(J.scipy.stats.norm.logpdf(beta, 0.0, 1.0))
        return prior + m.sum(-m.log1p(m.exp(-(2 * y - 1) * (X @ beta))))

    batched_log_joint = J.vmap(log_joint)

    def elbo(params, key):
        mu, log_sigma = params
        beta = mu + m.exp(log_sigma) * J.random.normal(key, (8, mu.shape[0]))
        return m.mean(batched_log_joint(beta)) + m.sum(log_sigma)

    def fit(key):
        params = (m.zeros(X.shape[1]), m.zeros(X.shape[1]))

        def body(i, params):
            g = J.grad(elbo)(params, J.random.fold_in(key, i))
            return J.tree_util.tree_map(lambda p, g: p + 0.01 * g, params, g)
        return J.lax.fori_loop(0, 10, body, params)
    @J.jit
    def fit_and_score(seed):
        params = fit(J.random.PRNGKey(seed))
        return params, elbo(params, J.random.PRNGKey(1))
    return fit_and_score(seed)


def test_vmapped_log_probs_notebook():
    rng = np.random.default_rng(26)
    X = rng.standard_normal((15, 3))
    assert_same(_vmapped_log_probs, X, (X[:, 0] > 0).astype(np.float64), 0, rtol=1e-9)


def _attention(J, m, q, k, v, lengths):
    """Attention as transformer code writes it: nn.dot_product_attention with a padding mask from sequence
    lengths, with is_causal, with a bias; a hand-written einsum + masked softmax (where=, initial=) that must
    agree; and the gradient of the masked attention in the queries and keys."""
    T, D = q.shape[1], q.shape[3]
    valid = m.arange(T)[None, :] < lengths[:, None]
    mask = valid[:, None, None, :] & valid[:, None, :, None]
    bias = -0.1 * m.abs(m.arange(T)[:, None] - m.arange(T)[None, :]).astype(q.dtype)

    def manual(q, k, v):
        logits = m.einsum("bqhd,bkhd->bhqk", q, k) / m.sqrt(D)
        w = J.nn.softmax(logits, axis=-1, where=mask)
        return m.einsum("bhqk,bkhd->bqhd", m.where(mask, w, 0.0), v)
    attn = lambda q, k: J.nn.dot_product_attention(q, k, v, mask=mask)
    loss = lambda q, k: m.sum(m.where(valid[:, :, None, None], attn(q, k), 0.0) ** 2)
    return (m.where(valid[:, :, None, None], attn(q, k), 0.0), manual(q, k, v),
            J.nn.dot_product_attention(q, k, v, is_causal=True), J.nn.dot_product_attention(q, k, v, bias=bias),
            J.grad(loss, argnums=(0, 1))(q, k))


def test_masked_attention():
    rng = np.random.default_rng(27)
    q, k, v = (rng.standard_normal((2, 4, 2, 3)) for _ in range(3))
    want, got = both(lambda J, m, *a: J.jit(lambda *a: _attention(J, m, *a))(*a), q, k, v, np.array([4, 2]))
    for w, g in zip(want, got):   # dot_product_attention computes its logits and softmax in float32, as JAX's
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-15)   # the hand-written one in float64
    np.testing.assert_allclose(got[1], got[0], rtol=1e-6, atol=1e-6)


def _dataclass_params(J, m, w, b, x):
    """Parameters in a dataclass registered with jax.tree_util.register_dataclass (data and meta fields), an
    optimiser state built with tree_map over it, jax.tree.leaves/structure, a global-norm gradient clip, and
    grad returning the dataclass."""
    import dataclasses
    import functools

    @functools.partial(J.tree_util.register_dataclass, data_fields=["w", "b"], meta_fields=["act"])
    @dataclasses.dataclass
    class Dense:
        w: object
        b: object
        act: str

        def __call__(self, x):
            y = x @ self.w + self.b
            return m.tanh(y) if self.act == "tanh" else J.nn.relu(y)

    def loss(layer):
        return m.sum(layer(x) ** 2)

    @J.jit
    def step(layer, velocity):
        g = J.grad(loss)(layer)
        norm = m.sqrt(sum(m.sum(leaf ** 2) for leaf in J.tree.leaves(g)))
        g = J.tree.map(lambda t: t * m.minimum(1.0, 0.5 / norm), g)
        velocity = J.tree.map(lambda v, g: 0.9 * v + g, velocity, g)
        return J.tree.map(lambda p, v: p - 0.1 * v, layer, velocity), velocity, norm
    layer = Dense(w, b, "tanh")
    velocity = J.tree.map(m.zeros_like, layer)
    new, velocity, norm = step(layer, velocity)
    assert new.act == "tanh" and J.tree.structure(new) == J.tree.structure(layer)
    return new.w, new.b, velocity.w, norm


def test_register_dataclass_parameters():
    rng = np.random.default_rng(28)
    assert_same(_dataclass_params, rng.standard_normal((3, 2)), rng.standard_normal(2), rng.standard_normal((4, 3)))


def _hybrid_system(J, m, x0, params):
    """A hybrid dynamical system: the mode chosen each step by lax.switch on a traced index (clamped as JAX
    clamps it), a lax.cond on a pytree of operands, vmapped over initial states (cond becomes select), the
    trajectory's loss differentiated in the parameters; lax.map with batch_size over the states."""
    def flow(x, p):
        return x + 0.1 * m.array([x[1], -p[0] * x[0]])

    def jump(x, p):
        return m.array([x[0], -p[1] * x[1]])

    def drift(x, p):
        return x * (1 - 0.05 * p[0])

    def step(x, _):
        mode = m.where(x[0] < 0, 1, 0) + 2 * (m.abs(x[1]) > 1.5)
        x = J.lax.switch(mode, [flow, jump, drift, flow, drift], x, params)
        x, energy = J.lax.cond(x[0] > 0, lambda t: (t[0], m.sum(t[0] ** 2)), lambda t: (t[0] * t[1], 0.0),
                               (x, params[0]))
        return x, energy
    traj = lambda x0: J.lax.scan(step, x0, None, length=12)
    loss = lambda params_, x0: m.sum(traj(x0)[1])
    return (J.vmap(traj)(x0), J.lax.map(lambda x: traj(x)[0], x0, batch_size=2),
            J.grad(lambda p: m.sum(J.vmap(lambda x: loss(p, x))(x0)))(params))


def test_switch_cond_hybrid_system():
    x0 = np.array([[1.0, 0.0], [-0.5, 1.0], [0.3, -2.0]])
    assert_same(lambda J, m, *a: J.jit(lambda *a: _hybrid_system(J, m, *a))(*a), x0, np.array([1.3, 0.8]))


def _spectral(J, m, u):
    """Spectral methods: the derivative of a periodic signal by rfft/irfft and fftfreq, a heat-equation step
    in Fourier space, a 2-D power spectrum with fftshift, and the gradient of a spectral energy through rfft.
    (fftshift's roll is slices without strides; under jit, simplify moved them past a transpose and raised
    KeyError: 'strides'.)"""
    n = u.shape[0]
    k = 2 * m.pi * m.fft.rfftfreq(n, d=1.0 / n)
    du = m.fft.irfft(1j * k * m.fft.rfft(u), n=n)
    heat = m.fft.irfft(m.exp(-0.01 * k ** 2) * m.fft.rfft(u), n=n)
    img = m.outer(u, u[::-1])
    power = m.fft.fftshift(m.abs(m.fft.fft2(img)) ** 2)
    energy = lambda u: m.sum(m.abs(m.fft.rfft(u * m.hanning(n))) ** 2 * m.exp(-k / 10))
    return du, heat, power, J.grad(energy)(u)


def test_spectral_derivatives_fft():
    x = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    assert_same(lambda J, m, u: J.jit(lambda u: _spectral(J, m, u))(u), np.sin(x) + 0.3 * np.cos(3 * x), rtol=1e-9,
                atol=1e-10)
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(tj.jit(lambda a: tnp.roll(a.T, 1, axis=0))(a), np.roll(a.T, 1, axis=0))


def _stats_logpdfs(J, m, x, params):
    """A probabilistic model's log density from jax.scipy.stats (norm, gamma, poisson, bernoulli,
    multivariate_normal, laplace, cauchy, logistic, norm.logsf) and its gradient in all the parameters."""
    st = J.scipy.stats

    def log_density(params):
        loc, log_scale, a, b = params
        scale = m.exp(log_scale)
        counts = m.array([0.0, 2.0, 5.0])
        return (m.sum(st.norm.logpdf(x, loc, scale)) + m.sum(st.gamma.logpdf(m.abs(x) + 0.1, a, scale=b))
                + m.sum(st.poisson.logpmf(counts, a + b)) + m.sum(st.bernoulli.logpmf(m.array([0, 1]), 0.3))
                + st.multivariate_normal.logpdf(x[:2], m.array([loc, -loc]), m.array([[scale, 0.1], [0.1, 1.0]]))
                + m.sum(st.laplace.logpdf(x, loc, scale)) + m.sum(st.cauchy.logpdf(x, loc, scale))
                + m.sum(m.log(st.logistic.cdf(x))) + m.sum(st.norm.logsf(x, loc)))
    return J.value_and_grad(log_density)(params)


def test_scipy_stats_log_density_gradient():
    assert_same(lambda J, m, *a: J.jit(lambda *a: _stats_logpdfs(J, m, *a))(*a), np.array([0.3, -1.2, 2.0, 0.7]),
                (np.array(0.1), np.array(-0.2), np.array(1.5), np.array(2.5)), rtol=1e-9)


def _quantized_matmul(J, m, x, w):
    """Int8 quantisation-aware training: per-channel symmetric scales, round and clip to int8, an int8 x int8
    dot_general accumulating in int32 (preferred_element_type), dequantised; the straight-through estimator
    (x + stop_gradient(q - x)) lets the float weights get gradients."""
    def quantize(t, axis):
        scale = m.max(m.abs(t), axis=axis, keepdims=True) / 127.0
        return m.clip(m.round(t / scale), -127, 127).astype(m.int8), scale

    def int8_matmul(x, w):
        qx, sx = quantize(x, 1)
        qw, sw = quantize(w, 0)
        acc = J.lax.dot_general(qx, qw, (((1,), (0,)), ((), ())), preferred_element_type=m.int32)
        return acc, acc.astype(m.float32) * sx * sw

    def fake_quant(t, axis):
        q, scale = quantize(t, axis)
        return t + J.lax.stop_gradient(q.astype(t.dtype) * scale - t)

    loss = lambda w: m.sum(m.tanh(fake_quant(x, 1) @ fake_quant(w, 0)) ** 2)
    return int8_matmul(x, w), J.grad(loss)(w)


def test_int8_quantized_matmul():
    rng = np.random.default_rng(29)
    assert_same(lambda J, m, *a: J.jit(lambda *a: _quantized_matmul(J, m, *a))(*a),
                rng.standard_normal((3, 5)).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32),
                rtol=1e-6, atol=1e-6)


def _float_bits(J, m, x):
    """Float bit tricks: Quake's fast inverse square root (bitcast_convert_type f32 <-> i32, a magic constant,
    one Newton step), the exponent field by shifts and masks, frexp/ldexp, nextafter and spacing, and a float16
    bit view (view as uint16)."""
    i = J.lax.bitcast_convert_type(x, m.int32)
    y = J.lax.bitcast_convert_type(m.int32(0x5F3759DF) - (i >> 1), m.float32)
    y = y * (1.5 - 0.5 * x * y * y)
    exponent = ((i >> 23) & 0xFF) - 127
    mant, ex = m.frexp(x)
    h = x.astype(m.float16)
    return (y, exponent, mant, ex, m.ldexp(mant, ex), m.nextafter(x, m.float32(m.inf)) - x,
            h.view(m.uint16), J.lax.bitcast_convert_type(h, m.uint16))


def test_float_bit_tricks():
    x = np.array([0.15625, 1.0, 2.5, 1e-3, 300.0], np.float32)
    assert_same(lambda J, m, x: J.jit(lambda x: _float_bits(J, m, x))(x), x, rtol=0, atol=0)


def _ising(J, m, seed, beta):
    """A 2-D Ising model by checkerboard Metropolis updates: int8 spins, neighbour sums by jnp.roll, acceptance
    from random.uniform with keys folded per sweep, a fori_loop of sweeps, the magnetisation and energy."""
    n = 8
    key = J.random.PRNGKey(seed)
    spins = m.where(J.random.bernoulli(key, 0.5, (n, n)), 1, -1).astype(m.int8)
    checker = (m.arange(n)[:, None] + m.arange(n)[None, :]) % 2

    def neighbours(s):
        s = s.astype(m.int32)
        return m.roll(s, 1, 0) + m.roll(s, -1, 0) + m.roll(s, 1, 1) + m.roll(s, -1, 1)

    def sweep(t, s):
        for colour in (0, 1):
            dE = 2 * s.astype(m.float64) * neighbours(s)
            u = J.random.uniform(J.random.fold_in(key, 2 * t + colour), (n, n))
            flip = (checker == colour) & (u < m.exp(-beta * dE))
            s = m.where(flip, -s, s)
        return s
    spins = J.lax.fori_loop(0, 10, sweep, spins)
    energy = -0.5 * m.sum(spins * neighbours(spins))
    return spins, m.mean(spins.astype(m.float64)), energy


def test_ising_checkerboard_metropolis():
    assert_same(lambda J, m, *a: J.jit(lambda *a: _ising(J, m, *a))(*a), 3, 0.4)


def _cookbook_custom_rules(J, m, x):
    """The custom derivative tutorial: log1pexp with a stable custom_jvp (finite where the naive derivative is
    NaN), clip_gradient by custom_vjp with nondiff arguments, jax.custom_gradient, and a custom_jvp whose rule
    uses defjvps; each under grad, vmap and jit."""
    from functools import partial

    @J.custom_jvp
    def log1pexp(x):
        return m.log(1.0 + m.exp(x))
    log1pexp.defjvps(lambda t, ans, x: (1.0 - 1.0 / (1.0 + m.exp(x))) * t)

    @partial(J.custom_vjp, nondiff_argnums=(0, 1))
    def clip_gradient(lo, hi, x):
        return x

    clip_gradient.defvjp(lambda lo, hi, x: (x, None), lambda lo, hi, _, g: (m.clip(g, lo, hi),))

    @J.custom_gradient
    def scaled_square(x):
        return x ** 2, lambda g: (g * 3 * x,)

    f = lambda x: m.sum(log1pexp(x)) + m.sum(clip_gradient(-0.5, 0.5, 4 * x) ** 2) + m.sum(scaled_square(x))
    return J.grad(f)(x), J.vmap(J.grad(lambda x: log1pexp(x)))(x), J.jvp(log1pexp, (x,), (m.ones_like(x),))


def test_custom_derivative_tutorial_rules():
    assert_same(lambda J, m, x: J.jit(lambda x: _cookbook_custom_rules(J, m, x))(x),
                np.array([-3.0, 0.2, 10.0, 800.0]))


def _graph_attention(J, m, params, nodes, senders, receivers):
    """A graph attention layer (GAT): attention logits per edge, a softmax over each receiver's incoming
    edges by segment_max / segment_sum (indices_are_sorted, num_segments), messages weighted and summed;
    loss and gradient in the weights."""
    n = nodes.shape[0]

    def segment_softmax(logits, segments):
        mx = J.ops.segment_max(logits, segments, num_segments=n, indices_are_sorted=True)
        e = m.exp(logits - mx[segments])
        return e / J.ops.segment_sum(e, segments, num_segments=n, indices_are_sorted=True)[segments]

    def loss(params):
        w, a = params
        h = nodes @ w
        logits = J.nn.leaky_relu(m.concatenate([h[senders], h[receivers]], axis=1) @ a, 0.2)
        alpha = segment_softmax(logits, receivers)
        out = J.ops.segment_sum(alpha[:, None] * h[senders], receivers, num_segments=n)
        return m.sum(J.nn.elu(out) ** 2), alpha
    return J.value_and_grad(loss, has_aux=True)(params)


def test_graph_attention_segment_softmax():
    rng = np.random.default_rng(30)
    receivers = np.array([0, 0, 1, 1, 1, 3])
    senders = np.array([1, 2, 0, 2, 3, 1])
    params = (rng.standard_normal((3, 4)) * 0.5, rng.standard_normal(8) * 0.5)
    assert_same(lambda J, m, *a: J.jit(lambda *a: _graph_attention(J, m, *a))(*a), params,
                rng.standard_normal((4, 3)), senders, receivers)


def _implicit_ridge(J, m, lam, X, y, X_val, y_val):
    """Hyperparameter optimisation by implicit differentiation (jaxopt style): ridge regression solved by
    lax.custom_linear_solve (symmetric, a CG-free exact solve via cholesky), the validation loss
    differentiated in the regularisation strength; the same by jax.scipy.linalg.solve(assume_a='pos')."""
    def ridge(lam):
        A = X.T @ X
        matvec = lambda w: A @ w + lam * w
        solve = lambda mv, b: J.scipy.linalg.cho_solve(J.scipy.linalg.cho_factor(A + lam * m.eye(A.shape[0])), b)
        return J.lax.custom_linear_solve(matvec, X.T @ y, solve, symmetric=True)

    def direct(lam):
        return J.scipy.linalg.solve(X.T @ X + lam * m.eye(X.shape[1]), X.T @ y, assume_a="pos")
    val = lambda solver: (lambda lam: m.mean((X_val @ solver(lam) - y_val) ** 2))
    return (ridge(lam), J.value_and_grad(val(ridge))(lam), J.grad(val(direct))(lam),
            J.grad(J.grad(val(ridge)))(lam))


def test_implicit_ridge_hyperparameter_gradient():
    rng = np.random.default_rng(31)
    X, Xv = rng.standard_normal((12, 3)), rng.standard_normal((5, 3))
    w = np.array([1.0, -0.5, 2.0])
    assert_same(lambda J, m, *a: J.jit(lambda *a: _implicit_ridge(J, m, *a))(*a), 0.7, X,
                X @ w + 0.3 * rng.standard_normal(12), Xv, Xv @ w, rtol=1e-9)


def _flop_counter(J, m, w, x):
    """A FLOP counter that walks make_jaxpr's output as JAX users write one: closed.jaxpr.eqns, eqn.primitive.name,
    eqn.params['dimension_numbers'], eqn.invars[i].aval, eqn.outvars, recursing into the sub-jaxprs in params
    (a scan's body). tracejit's ClosedIR had no .jaxpr and its equations no .primitive or .invars."""
    def walk(jaxpr):
        flops, names = 0, []
        for eqn in jaxpr.eqns:
            names.append(eqn.primitive.name)
            if eqn.primitive.name == "dot_general":
                (contract, _), _ = eqn.params["dimension_numbers"]
                lhs = eqn.invars[0].aval
                flops += 2 * int(np.prod(eqn.outvars[0].aval.shape)) * int(np.prod([lhs.shape[d] for d in contract]))
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else (value,):
                    if hasattr(sub, "eqns"):
                        sub_flops, sub_names = walk(getattr(sub, "jaxpr", sub))
                        flops, names = flops + sub_flops, names + sub_names
        return flops, names

    def model(w, x):
        h = m.tanh(x @ w) @ w.T
        return h.sum() + J.lax.scan(lambda c, row: (c + row @ w, None), m.zeros(w.shape[1]), x)[0].sum()
    flops, names = walk(J.make_jaxpr(model)(w, x).jaxpr)
    return m.array(flops), m.array([names.count(p) for p in ("dot_general", "tanh", "scan")])


def test_flop_counter_walks_the_jaxpr():
    assert_same(_flop_counter, np.ones((4, 3)), np.ones((5, 4)))


def _integer_inputs_ad(J, m, x, steps):
    """A simulation whose state mixes floats and an integer step count: jvp with JAX's float0 tangent for the
    integer (tracejit refused float0 arrays), vjp whose cotangent for the integer is float0 (tracejit gave int
    zeros), and grad/jacrev with allow_int."""
    float0 = J.dtypes.float0

    def simulate(x, steps):
        return x * m.cos(steps * 0.1) + steps, steps * 2

    out, tangent = J.jvp(simulate, (x, steps), (m.ones_like(x), np.zeros(np.shape(steps), float0)))
    _, pullback = J.vjp(simulate, x, steps)
    cx, csteps = pullback((m.ones_like(x), np.zeros(np.shape(steps), float0)))
    g = J.grad(lambda x, s: m.sum(simulate(x, s)[0]), argnums=(0, 1), allow_int=True)(x, steps)
    jac = J.jacrev(lambda x, s: simulate(x, s)[0], argnums=(0, 1), allow_int=True)(x, steps)
    return out, tangent[0], cx, g[0], jac, (csteps.dtype == float0, g[1].dtype == float0, csteps.shape)


def test_float0_tangents_of_integer_inputs():
    want, got = both(_integer_inputs_ad, np.array([0.5, -1.0]), np.int32(3))
    for w, g in zip(want, got):
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-12)


def _array_api_and_stages(J, m, x, w):
    """Array-API-generic code (xp = x.__array_namespace__(), as scikit-learn and SciPy write it) under jit, and
    the ahead-of-time stages a user inspects before running: jit(f).trace(...) with .out_info and .jaxpr,
    .lower().compile(), jit(f).eval_shape, and the output treedef's children() and node_data() (tracejit's tracers
    had no __array_namespace__, its trace() returned a tuple, Jitted had no eval_shape, treedefs no children())."""
    def standardize_then_project(x, w):
        xp = x.__array_namespace__()
        mu = xp.mean(x, axis=0)
        sd = xp.sqrt(xp.mean((x - mu) ** 2, axis=0))
        z = (x - mu) / sd
        return {"proj": xp.matmul(z, w), "norms": xp.linalg.vector_norm(z, axis=1)}

    f = J.jit(standardize_then_project)
    traced = f.trace(x, w)
    shapes = f.eval_shape(J.ShapeDtypeStruct(x.shape, x.dtype), w)
    treedef = J.tree.structure(traced.out_info)
    compiled = traced.lower().compile()
    assert [s.shape for s in J.tree.leaves(shapes)] == [s.shape for s in J.tree.leaves(traced.out_info)]
    assert [c.num_leaves for c in treedef.children()] == [1, 1] and treedef.node_data()[0] is dict
    assert "dot_general" in [e.primitive.name for e in traced.jaxpr.jaxpr.eqns]
    return compiled(x, w), f(x, w)


def test_array_api_namespace_and_aot_stages():
    rng = np.random.default_rng(32)
    assert_same(_array_api_and_stages, rng.standard_normal((6, 3)), rng.standard_normal((3, 2)))


def test_odeint_gradient_with_an_integer_argument():
    """A decay rate passed to odeint as a Python int: JAX's odeint adjoint fails on the float0 cotangent of the
    integer ("float0 is not a valid dtype for JAX type promotion"), a limitation of JAX; tracejit integrates it as
    zeros (the float0 cotangents of vjp broke its adjoint too at first). Checked against the closed form."""
    decay = lambda y, t, k: -k * y
    end = lambda y0: tj.experimental.ode.odeint(decay, y0, tnp.array([0.0, 1.0]), 2)[-1].sum()
    np.testing.assert_allclose(tj.jit(tj.grad(end))(np.ones(2)), np.full(2, np.exp(-2.0)), rtol=1e-6)


@pytest.mark.xfail(strict=True, reason="half-float chains: tracejit computes a fused chain of float16/bfloat16 ops "
                   "in float32 and rounds once on store (DESIGN), XLA rounds after every op; truncated_normal's "
                   "erf/erf_inv chain in bfloat16, and an initializer's draw times its stddev in float16, then differ "
                   "from JAX's draws by 1-3 ulps (float32 and float64 draws are bit-identical). Matching needs "
                   "per-op rounding in the samplers (reduce_precision after each step), not done today")
def test_half_float_truncated_normal_initializers_bit_for_bit():
    """Flax-style inits in 16-bit floats (lecun_normal in float16, glorot_normal in bfloat16) draw JAX's values."""
    def inits(J, m):
        key = J.random.key(3)
        return (J.nn.initializers.lecun_normal()(key, (3, 2), m.float16),
                J.nn.initializers.glorot_normal()(key, (3, 2), m.bfloat16))
    want, got = both(lambda J, m: J.jit(lambda: inits(J, m))())
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g.astype(np.float32), w.astype(np.float32))


def test_custom_rule_with_a_wrong_tangent_shape_names_the_rule():
    """A custom_jvp rule that returns a summed tangent (a common slip) and a custom_vjp rule whose cotangent has the
    output's shape: JAX says which rule and which shapes; tracejit said only 'a custom rule returned a f64[2]'."""
    @tj.custom_jvp
    def softclip(x):
        return tnp.tanh(x)
    softclip.defjvp(lambda p, t: (softclip(p[0]), tnp.sum(t[0] / tnp.cosh(p[0]) ** 2)))

    @tj.custom_vjp
    def total(x):
        return tnp.sum(x)
    total.defvjp(lambda x: (tnp.sum(x), None), lambda _, g: (g,))
    with pytest.raises(TypeError, match=r"jvp rule of softclip: the tangent of output leaf 0 is a f64\[\], but must "
                                        r"have the shape of the value it belongs to, a f64\[3\]"):
        tj.jvp(softclip, (np.ones(3),), (np.ones(3),))
    with pytest.raises(TypeError, match=r"bwd rule of total: the cotangent of input leaf 0 is a f64\[\].*f64\[3\]"):
        tj.grad(total)(np.ones(3))
