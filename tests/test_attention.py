"""tracejit.nn.dot_product_attention against jax.nn.dot_product_attention: values and gradients with bias, mask,
causal and local-window masking, sequence lengths, grouped-query heads, rank-3 inputs, float32; bad arguments."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.nn import dot_product_attention

jax = pytest.importorskip("jax")

B, T, S, H = 2, 5, 6, 3


def _inputs(N, K, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for shape in ((B, T, N, H), (B, S, K, H), (B, S, K, H))]


def _options(N):
    """Keyword sets covering each masking and its combinations (bias and mask broadcast along some axes)."""
    rng = np.random.default_rng(1)
    bias, mask = rng.standard_normal((1, N, T, S)), rng.random((B, 1, T, S)) > 0.3
    lengths = {"query_seq_lengths": np.array([3, 5], np.int32), "key_value_seq_lengths": np.array([6, 2], np.int32)}
    return {"plain": {}, "bias": {"bias": bias}, "mask": {"mask": mask}, "causal": {"is_causal": True},
            "window": {"local_window_size": (1, 2)}, "window int": {"local_window_size": 1},
            "lengths": lengths, "scale": {"scale": 0.25},
            "all": {"bias": bias, "mask": mask, "is_causal": True, "scale": 0.7, **lengths}}


# The softmax runs in float32, as in JAX: results agree to float32's precision, whatever the input dtype.
TOL = {"rtol": 2e-5, "atol": 2e-6}


def _all_options(attention, numpy, grad, N, weights):
    """Every option's output, and the gradients of <output, weights> in q, k and v, computed in one program
    (one compile each for tracejit and JAX)."""
    def run(q, k, v):
        out = {}
        for name, kwargs in _options(N).items():
            def loss(q, k, v, kwargs=kwargs):
                return numpy.sum(attention(q, k, v, **kwargs) * weights)
            out[name] = attention(q, k, v, **kwargs)
            out[name + " grads"] = grad(loss, argnums=(0, 1, 2))(q, k, v)
        return out
    return run


@pytest.mark.parametrize("N, K", [(4, 2), (3, 3), (3, 1)], ids=["grouped", "multi-head", "multi-query"])
def test_values_and_gradients_match_jax(N, K):
    """Each masking (and none, and all at once) with grouped-query, multi-head and multi-query heads: JAX's values
    and gradients, compiled; the values eagerly too."""
    q, k, v = _inputs(N, K)
    weights = np.random.default_rng(2).standard_normal(q.shape)
    want = jax.jit(_all_options(jax.nn.dot_product_attention, jax.numpy, jax.grad, N, weights))(q, k, v)
    got = tj.jit(_all_options(dot_product_attention, tnp, tj.grad, N, weights))(q, k, v)
    assert got.keys() == want.keys()
    for name in want:
        for a, b in zip(tj.tree_util.tree_leaves(got[name]), jax.tree_util.tree_leaves(want[name])):
            np.testing.assert_allclose(a, b, **TOL, err_msg=name)
    for name, kwargs in _options(N).items():
        np.testing.assert_allclose(dot_product_attention(q, k, v, **kwargs), want[name], **TOL, err_msg=name)


def test_bias_gradient_and_residual_match_jax():
    q, k, v = _inputs(2, 2)
    bias = np.random.default_rng(3).standard_normal((B, 2, T, S))

    def loss(attention, numpy):
        def f(bias):
            out, residual = attention(q, k, v, bias, is_causal=True, return_residual=True)
            return numpy.sum(out ** 2) + numpy.sum(residual)
        return f
    np.testing.assert_allclose(tj.jit(tj.grad(loss(dot_product_attention, tnp)))(bias),
                               jax.jit(jax.grad(loss(jax.nn.dot_product_attention, jax.numpy)))(bias), **TOL)
    for a, b in zip(dot_product_attention(q, k, v, bias, return_residual=True),
                    jax.nn.dot_product_attention(q, k, v, bias, return_residual=True)):
        np.testing.assert_allclose(a, b, **TOL)


def test_rank_3_float32_and_vmap():
    q, k, v = (x[0] for x in _inputs(2, 1, np.float32))
    want = jax.nn.dot_product_attention(q, k, v, is_causal=True)
    got = tj.jit(lambda *a: dot_product_attention(*a, is_causal=True))(q, k, v)
    assert got.dtype == np.float32 and got.shape == (T, 2, H)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    batched = _inputs(2, 1, np.float32)
    np.testing.assert_allclose(tj.vmap(lambda *a: dot_product_attention(*a, is_causal=True))(*batched),
                               jax.nn.dot_product_attention(*batched, is_causal=True), rtol=1e-5, atol=1e-6)


def test_a_fully_masked_row_averages_the_values_as_in_jax():
    q, k, v = _inputs(2, 2)
    mask = np.ones((B, 2, T, S), bool)
    mask[:, :, 1] = False
    got = dot_product_attention(q, k, v, mask=mask)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, jax.nn.dot_product_attention(q, k, v, mask=mask), **TOL)


@pytest.mark.parametrize("change, message", [
    (lambda q, k, v: (q[:, :, :3], k, v), "multiple"),
    (lambda q, k, v: (q[..., :2], k, v), "query has shape"),
    (lambda q, k, v: (q, k, v[:, :4]), "value has shape"),
    (lambda q, k, v: (q, k, v.astype(np.float32)), "value has dtype"),
])
def test_bad_shapes_raise(change, message):
    with pytest.raises(ValueError, match=message):
        dot_product_attention(*change(*_inputs(4, 2)))


@pytest.mark.parametrize("kwargs, message", [
    ({"mask": np.ones((1, 1, T, S))}, "mask has dtype"),
    ({"query_seq_lengths": np.array([1, 2])}, "query_seq_lengths has dtype"),
    ({"key_value_seq_lengths": np.array([1], np.int32)}, "key_value_seq_lengths has shape"),
    ({"local_window_size": (1, 2, 3)}, "local_window_size"),
    ({"implementation": "cudnn"}, "implementation"),
])
def test_bad_arguments_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        dot_product_attention(*_inputs(2, 2), **kwargs)
