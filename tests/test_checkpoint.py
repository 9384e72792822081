"""Checkpointing (issue 22 items 3, 4): tj.checkpoint gives the values and derivatives of the plain function
(checked against JAX) under every transformation; reverse mode stores what the policy says, as JAX's
print_saved_residuals shows for the same function; the backward pass recomputes, and jit's passes keep the
recomputation (prevent_cse); memory_analysis shows the memory it saves, for layers and for long scans."""
import re

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.ad_checkpoint import checkpoint_name, print_saved_residuals
from tracejit.backend.fusion_view import lowered_view

rng = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def x64():
    """JAX computes in float64 where the arguments are, as tracejit does."""
    with jax.enable_x64(True):
        yield


W = rng.standard_normal((3, 3)).astype(np.float32)
X = rng.standard_normal((2, 3)).astype(np.float32)


def model(np_):
    """The same function written with tracejit.numpy or jax.numpy (and their checkpoint_name)."""
    name = checkpoint_name if np_ is tnp else jax.ad_checkpoint.checkpoint_name

    def f(w, x):
        h = np_.sin(x @ w)
        h = name(h, "h")
        return np_.sum(np_.cos(h) * h)
    return f


def policies(lib):
    p = lib.checkpoint_policies
    return {"none": None, "nothing": p.nothing_saveable, "everything": p.everything_saveable,
            "dots": p.dots_saveable, "dots_no_batch": p.dots_with_no_batch_dims_saveable,
            "names": p.save_only_these_names("h"), "both": p.save_from_both_policies(p.dots_saveable,
                                                                                       p.save_only_these_names("h")),
            "any_names_but": p.save_any_names_but_these("other")}


def printed(print_fn, f, *args):
    """print_saved_residuals' lines, with JAX's file:line:column shortened to tracejit's file:line."""
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_fn(f, *args)
    return [re.sub(r":(\d+):\d+ \(", r":\1 (", line) for line in out.getvalue().splitlines()]


@pytest.mark.parametrize("policy", list(policies(tj)))
def test_saved_residuals_match_jax(policy):
    ours = printed(print_saved_residuals, tj.checkpoint(model(tnp), policy=policies(tj)[policy]), W, X)
    theirs = printed(jax.ad_checkpoint.print_saved_residuals,
                     jax.checkpoint(model(jnp), policy=policies(jax)[policy]), W, X)
    assert ours == theirs
    assert ours[:2] == ["f32[3,3] from the argument w", "f32[2,3] from the argument x"]


def test_saved_residuals_of_the_plain_function_match_jax():
    assert printed(print_saved_residuals, model(tnp), W, X) == printed(
        jax.ad_checkpoint.print_saved_residuals, model(jnp), W, X)


def scan_model(remat, np_, lax):
    def body(c, wx):
        w, x = wx
        h = np_.tanh(c @ w + x)
        return np_.sin(h @ w) + c * 0.5, None

    def loss(c0, ws, xs):
        return np_.sum(lax.scan(remat(body), c0, (ws, xs))[0])
    return loss


@pytest.mark.parametrize("checkpointed", [False, True])
def test_saved_residuals_of_scans_match_jax(checkpointed):
    """A checkpointed scan body: the loop stores the carries, not the body's intermediates."""
    args = np.zeros(4, np.float32), np.ones((5, 4, 4), np.float32), np.ones((5, 4), np.float32)
    ours = printed(print_saved_residuals, scan_model(tj.checkpoint if checkpointed else (lambda f: f), tnp, tj.lax),
                   *args)
    theirs = printed(jax.ad_checkpoint.print_saved_residuals,
                     scan_model(jax.checkpoint if checkpointed else (lambda f: f), jnp, jax.lax), *args)
    assert ours == theirs and len(ours) == (3 if checkpointed else 5)


def test_save_anything_except_these_names():
    policy = tj.checkpoint_policies.save_anything_except_these_names("h")
    lines = printed(print_saved_residuals, tj.checkpoint(model(tnp), policy=policy), W, X)
    assert not any("named 'h'" in line for line in lines) and any("output of sin" in line for line in lines)


# ------------------------------------------------------------------------------- values and derivatives

def layers(np_, remat):
    def layer(w, h, scale):
        return np_.tanh(h @ w) * scale

    def f(ws, x):
        h = x
        for i, w in enumerate(ws):
            h = remat(layer, static_argnums=2)(w, h, 1.0 + i)
        return np_.sum(h ** 2)
    return f


WS = [rng.standard_normal((3, 3)).astype(np.float64) / 2 for _ in range(3)]
XS = rng.standard_normal((4, 3))


@pytest.mark.parametrize("transform", ["grad", "jit_grad", "hessian", "jvp", "vmap_grad", "linearize"])
def test_derivatives_match_jax(transform):
    ours, theirs = layers(tnp, tj.checkpoint), layers(jnp, jax.checkpoint)
    if transform == "grad":
        got, want = tj.grad(ours)(WS, XS), jax.grad(theirs)(WS, XS)
    elif transform == "jit_grad":
        got, want = tj.jit(tj.grad(ours))(WS, XS), jax.jit(jax.grad(theirs))(WS, XS)
    elif transform == "hessian":
        got, want = tj.hessian(ours, argnums=1)(WS, XS), jax.hessian(theirs, argnums=1)(WS, XS)
    elif transform == "jvp":
        got = tj.jvp(ours, (WS, XS), (WS, XS))
        want = jax.jvp(theirs, (WS, XS), (WS, XS))
    elif transform == "vmap_grad":
        batch = np.stack([XS, XS * 2])
        got = tj.vmap(tj.grad(ours, argnums=1), in_axes=(None, 0))(WS, batch)
        want = jax.vmap(jax.grad(theirs, argnums=1), in_axes=(None, 0))(WS, batch)
    else:
        got = tj.linearize(ours, WS, XS)[1](WS, XS)
        want = jax.linearize(theirs, WS, XS)[1](WS, XS)
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_pytrees_closures_nesting_and_jit_inside():
    """A checkpointed function of a dict, closing over an outer traced value, with a checkpoint and a jitted
    function inside, differentiated inside jit: the plain function's gradient."""
    def make(remat, jit, np_):
        inner = jit(lambda a: np_.sin(a) * 3.0)

        def outer(params, x):
            scale = np_.exp(x.sum())

            def block(p):
                return remat(lambda q: np_.cos(q["a"] * scale))(p) + inner(p["b"])
            return np_.sum(remat(block)(params) ** 2)
        return outer
    params = {"a": XS[0], "b": XS[1]}
    got = tj.jit(tj.grad(make(tj.checkpoint, tj.jit, tnp), argnums=(0, 1)))(params, XS[2])
    want = jax.grad(make(jax.checkpoint, jax.jit, jnp), argnums=(0, 1))(params, XS[2])
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_forward_values_and_eager_calls():
    f = tj.checkpoint(lambda x, n: x ** n, static_argnums=1)
    np.testing.assert_allclose(f(XS, 3), XS ** 3)
    np.testing.assert_allclose(tj.jit(f, static_argnums=1)(XS, 2), XS ** 2)
    assert tj.remat is tj.checkpoint


# ------------------------------------------------------------------------------------- recomputation

def _count(closed, name):
    return sum(e.prim.name == name for e in closed.eqns)


def test_backward_pass_recomputes_and_jit_keeps_the_recomputation():
    """value_and_grad of sin(sin(x)) computes sin twice plainly; checkpointed three times under jit (the
    forward pass, then sin(x) again for the cosine of sin(x)), unless prevent_cse=False lets CSE merge the
    recomputation into the forward pass."""
    def f(x):
        return tnp.sum(tnp.sin(tnp.sin(x)))
    x = XS[0]
    want = jax.value_and_grad(lambda x: jnp.sum(jnp.sin(jnp.sin(x))))(x)
    for remat, sines in ((lambda g: g, 2), (tj.checkpoint, 3), (lambda g: tj.checkpoint(g, prevent_cse=False), 2)):
        lowered = tj.jit(tj.value_and_grad(remat(f))).lower(x)
        closed, _ = lowered_view(lowered._entry.closed)
        assert _count(closed, "sin") == sines, lowered.as_text()
        for a, b in zip(tj.jit(tj.value_and_grad(remat(f)))(x), want):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_recomputation_runs_in_the_backward_pass():
    """In the compiled program the recomputed sin comes after the forward pass's sum, where the backward pass
    needs it; plainly every sin comes before it."""
    def f(x):
        return tnp.sum(tnp.sin(tnp.sin(x)))
    for remat, after in ((lambda g: g, 0), (tj.checkpoint, 1)):
        closed, _ = lowered_view(tj.jit(tj.value_and_grad(remat(f))).lower(XS[0])._entry.closed)
        names = [e.prim.name for e in closed.eqns]
        assert names[names.index("reduce_sum"):].count("sin") == after, names


def test_bad_arguments():
    with pytest.raises(TypeError, match="prevent_cse must be a bool"):
        tj.checkpoint(tnp.sin, prevent_cse="yes")
    with pytest.raises(TypeError, match="policy must be one of tj.checkpoint_policies"):
        tj.checkpoint(tnp.sin, policy="dots")
    with pytest.raises(ValueError, match="static_argnums 3 is out of range"):
        tj.checkpoint(tnp.sin, static_argnums=3)(XS)
    with pytest.raises(TypeError, match="name must be a string"):
        checkpoint_name(XS, 3)


# ------------------------------------------------------------------------------------------------ memory

def mlp(remat_segment):
    def layer(w, h):
        return tnp.tanh(h @ w)

    def loss(ws, x):
        h = x
        for i in range(0, len(ws), remat_segment or len(ws)):
            block = ws[i:i + (remat_segment or len(ws))]
            run = (lambda ws_, h_: _stack(layer, ws_, h_))
            h = tj.checkpoint(run)(block, h) if remat_segment else run(block, h)
        return tnp.sum(h * h)
    return loss


def _stack(layer, ws, h):
    for w in ws:
        h = layer(w, h)
    return h


def test_checkpointed_segments_use_less_memory():
    """16 layers of width 64: segments of 4 layers keep 4 segment inputs and one segment's activations instead
    of 16 activations; the gradient does not change."""
    ws = [rng.standard_normal((64, 64)).astype(np.float32) / 8 for _ in range(16)]
    x = rng.standard_normal((32, 64)).astype(np.float32)
    plain, segments = (tj.jit(tj.grad(mlp(k))) for k in (None, 4))
    m_plain, m_seg = (f.lower(ws, x).compile().memory_analysis() for f in (plain, segments))
    activation = 32 * 64 * 4
    assert m_plain.temp_size_in_bytes >= 16 * activation
    assert m_seg.temp_size_in_bytes <= 0.6 * m_plain.temp_size_in_bytes
    for a, b in zip(plain(ws, x), segments(ws, x)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_checkpointed_scan_body_stores_less():
    ws = (rng.standard_normal((200, 32, 32)) / 6).astype(np.float32)
    xs = rng.standard_normal((200, 32)).astype(np.float32)
    c0 = np.zeros(32, np.float32)
    plain, remat = (tj.jit(tj.grad(scan_model(r, tnp, tj.lax), argnums=(0, 1, 2))) for r in ((lambda f: f), tj.checkpoint))
    step = 32 * 4    # one f32[32] per step: plainly the body's intermediates (tanh, the cosine) and the carry
    assert plain.lower(c0, ws, xs).compile().memory_analysis().temp_size_in_bytes >= 3 * 200 * step
    assert remat.lower(c0, ws, xs).compile().memory_analysis().temp_size_in_bytes <= 2 * 200 * step
    for a, b in zip(plain(c0, ws, xs), remat(c0, ws, xs)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def scan_loss(checkpoint):
    def loss(c0, xs):
        c, _ = tj.lax.scan(lambda c, x: (tnp.tanh(c * 0.9 + x), None), c0, xs, checkpoint=checkpoint)
        return tnp.sum(c)
    return loss


def test_sqrt_checkpointed_scan_keeps_sqrt_n_carries():
    """The gradient of a 10,000-step scan over a 64-float carry: plainly it stores every carry (2.5 MB);
    in sqrt(n) segments a few times sqrt(n) = 100 of them, and the xs and their cotangent reshaped into
    segments."""
    n, c0 = 10_000, np.linspace(-1, 1, 64).astype(np.float32)
    xs = np.linspace(0, 1, n).astype(np.float32)
    plain, sqrt = (tj.jit(tj.grad(scan_loss(k), argnums=(0, 1))) for k in (None, "sqrt"))
    carries = n * c0.nbytes
    assert plain.lower(c0, xs).compile().memory_analysis().temp_size_in_bytes >= carries
    assert sqrt.lower(c0, xs).compile().memory_analysis().temp_size_in_bytes <= 4 * 100 * c0.nbytes + 2 * xs.nbytes
    want = jax.jit(jax.grad(lambda c, xs: jnp.sum(jax.lax.scan(lambda c, x: (jnp.tanh(c * 0.9 + x), None), c,
                                                                        xs)[0]), argnums=(0, 1)))(c0, xs)
    for got in (plain(c0, xs), sqrt(c0, xs)):
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("length, reverse, checkpoint", [(10, False, "sqrt"), (10, True, "sqrt"), (12, True, 3),
                                                         (7, False, 2), (3, False, "sqrt")])
def test_segmented_scans_match_plain_ones(length, reverse, checkpoint):
    """Remainders, reverse scans and ys: the segmented scan computes what the plain one does."""
    xs = rng.standard_normal((length, 2))

    def f(c, xs, checkpoint):
        return tj.lax.scan(lambda c, x: (tnp.sin(c) + x, c * x), c, xs, reverse=reverse, checkpoint=checkpoint)
    c0 = np.array([0.3, -0.2])
    for a, b in zip(jax.tree.leaves(f(c0, xs, checkpoint)), jax.tree.leaves(f(c0, xs, None))):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    grads = [tj.grad(lambda c, xs, k=k: tnp.sum(f(c, xs, k)[1]) + tnp.sum(f(c, xs, k)[0]), argnums=(0, 1))(c0, xs)
             for k in (checkpoint, None)]
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_scan_checkpoint_config_and_bad_values():
    loss = scan_loss(None)
    c0, xs = np.zeros(4, np.float32), np.zeros(300, np.float32)
    assert "checkpoint" not in str(tj.make_ir(loss)(c0, xs))
    tj.config.update("scan_checkpoint", "sqrt")
    try:
        assert "checkpoint" in str(tj.make_ir(loss)(c0, xs))
        assert "checkpoint" not in str(tj.make_ir(loss)(c0, xs[:100]))     # shorter than SQRT_MIN_LENGTH
    finally:
        tj.config.update("scan_checkpoint", None)
    with pytest.raises(ValueError, match="checkpoint must be None, 'sqrt' or a positive number of segments"):
        scan_loss("log")(c0, xs)
