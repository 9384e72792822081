"""x.at[idx].max / .min / .multiply and jax.ops' segment reductions (tj.ops) against JAX: ties between updates and
the element (their tangents averaged, JAX's rule), NaN, out-of-range indices dropped, empty segments holding the
identity, compiled (the segment reductions eagerly too), batched, and their gradients."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.test_util import check_grads

rng = np.random.default_rng(8)
X = rng.standard_normal((6, 2))
IDX = np.array([0, 2, 2, 5, 9, 2, -7])
U = np.array([[5.0, -1.0], [3.0, 0.5], [-7.0, 0.5], [1.0, 2.0], [4.0, 4.0], [3.0, -9.0], [0.0, 0.0]])
X[4] = U[3]           # an element tying with an update


@pytest.mark.parametrize("op", ["max", "min"])
def test_extremal_updates_as_jax(jax64, op):
    weights = np.arange(12.0).reshape(6, 2)

    def f(M, x, u, i=IDX):
        return getattr(M.asarray(x).at[i], op)(u)
    want = f(jax64.numpy, X, U)
    for got in (tj.jit(lambda x, u: f(tnp, x, u))(X, U), tj.jit(lambda x, u, i: f(tnp, x, u, i))(X, U, IDX)):
        np.testing.assert_array_equal(got, want)
    grads = tj.jit(tj.grad(lambda x, u: (f(tnp, x, u) * weights).sum(), argnums=(0, 1)))(X, U)
    want_grads = jax64.grad(lambda x, u: (f(jax64.numpy, x, u) * weights).sum(), argnums=(0, 1))(X, U)
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    nan = U.copy()
    nan[1, 0] = np.nan
    np.testing.assert_array_equal(tj.jit(lambda x, u: f(tnp, x, u))(X, nan), f(jax64.numpy, X, nan))
    batched = tj.vmap(lambda x, u: f(tnp, x, u))(np.stack([X, -X]), np.stack([U, U * 2]))
    np.testing.assert_array_equal(batched, jax64.vmap(lambda x, u: f(jax64.numpy, x, u))(np.stack([X, -X]),
                                                                                    np.stack([U, U * 2])))
    ints = rng.integers(-9, 9, (6, 2)).astype(np.int32)
    np.testing.assert_array_equal(tj.jit(lambda x: f(tnp, x, U.astype(np.int32)))(ints),
                                  f(jax64.numpy, ints, U.astype(np.int32)))
    with pytest.raises(NotImplementedError, match="mode 'clip'"):
        tj.jit(lambda x: getattr(x.at[IDX], op)(U, mode="clip"))(X)


def test_multiply_with_repeated_indices_of_traced_values(jax64):
    x, i, v = np.arange(1.0, 6.0), np.array([1, 1, 3, 9, 1]), np.array([2.0, 3.0, 4.0, 5.0, -1.0])
    want = jax64.numpy.asarray(x).at[i].multiply(v)
    np.testing.assert_array_equal(tj.jit(lambda x, v: tnp.asarray(x).at[i].multiply(v))(x, v), want)
    check_grads(tj.jit(lambda x, v: tnp.asarray(x).at[i].multiply(v)), (x, v), order=2)


@pytest.mark.parametrize("name", ["segment_sum", "segment_max", "segment_min", "segment_prod"])
def test_segment_reductions_as_jax(jax64, name):
    data, ids = rng.standard_normal((10, 3)), np.array([0, 0, 2, 2, 2, 5, 1, 1, 7, 3])
    for num in (None, 6, 9):
        want = getattr(jax64.ops, name)(data, ids, num)
        np.testing.assert_allclose(getattr(tj.ops, name)(data, ids, num), want, rtol=1e-12)
        np.testing.assert_allclose(tj.jit(lambda d, num=num: getattr(tj.ops, name)(d, ids, num))(data), want, rtol=1e-12)
    counts = np.array([3, 1, 4, 1, 5], np.int32)
    np.testing.assert_array_equal(getattr(tj.ops, name)(counts, np.array([1, 1, 0, 3, 3]), 5),
                                  getattr(jax64.ops, name)(counts, np.array([1, 1, 0, 3, 3]), 5))
    if name != "segment_prod":      # (ids traced; JAX has no gradient of segment_prod with repeated ids)
        got = tj.jit(lambda d, i: getattr(tj.ops, name)(d, i, 8))(data, ids)
        np.testing.assert_allclose(got, getattr(jax64.ops, name)(data, ids, 8), rtol=1e-12)

        def finite(M, ops):
            return lambda d: (M.where(M.isfinite(s := getattr(ops, name)(d, ids, 8)), s, 0) ** 2).sum()
        np.testing.assert_allclose(tj.grad(finite(tnp, tj.ops))(data), jax64.grad(finite(jax64.numpy, jax64.ops))(data),
                                   rtol=1e-12)
    else:
        check_grads(lambda d: tj.ops.segment_prod(d, ids, 8), (data,), order=1)
    with pytest.raises(TypeError, match="num_segments is needed"):
        tj.jit(lambda d, i: getattr(tj.ops, name)(d, i))(data, ids)
