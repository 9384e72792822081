"""lax.ragged_dot_general against JAX: the three modes (ragged non-contracting, contracting, batch dimension),
group_sizes given as [g] and as [b..., x..., g], batch dimensions out of order, empty groups and rows past the
groups, preferred_element_type; values eagerly and under jit, gradients in lhs and rhs (against finite differences
where JAX has none); vmap against a loop (JAX refuses most vmaps of it); and JAX's errors for inconsistent dimension
numbers."""
import numpy as np
import pytest

import tracejit as tj

jax = pytest.importorskip("jax", reason="compared with JAX (pip install 'tracejit[test]')")
jax.config.update("jax_enable_x64", True)

R = np.random.default_rng(11)
GS = np.array([2, 0, 3], np.int32)          # an empty group; 6 rows, so the last row is in no group


def n(*shape):
    return R.normal(size=shape)


CASES = {   # name: (lhs, rhs, group_sizes, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions)
    "ragged_dot": (n(6, 4), n(3, 4, 5), GS, (([1], [1]), ([], [])), [0], [0]),
    "noncontracting batch": (n(2, 6, 4), n(3, 2, 4, 5), np.array([[2, 1, 3], [1, 1, 1]], np.int32),
                             (([2], [2]), ([0], [1])), [1], [0]),
    "noncontracting [g] sizes": (n(2, 6, 4), n(3, 2, 4, 5), GS, (([2], [2]), ([0], [1])), [1], [0]),
    "noncontracting inner": (n(4, 3, 6), n(4, 3, 5), np.array([[2, 1, 3], [1, 1, 1], [6, 0, 0]], np.int32),
                             (([0], [0]), ([], [])), [2], [1]),
    "batch dims out of order": (n(2, 3, 6, 4), n(3, 2, 4, 3, 5), R.integers(0, 3, (3, 2, 3)).astype(np.int32),
                                (([3], [2]), ([1, 0], [0, 1])), [2], [3]),
    "contracting": (n(3, 6), n(6, 5), GS, (([1], [0]), ([], [])), [1], []),
    "contracting batch": (n(2, 3, 6), n(2, 6, 5), np.array([[2, 1, 3], [0, 4, 1]], np.int32),
                          (([2], [1]), ([0], [0])), [2], []),
    "batch": (n(2, 3, 6), n(2, 6, 5), np.array([1, 1], np.int32), (([2], [1]), ([0], [0])), [0], []),
}


def call(M, lhs, rhs, gs, dd, ragged, group, **kw):
    numbers = M.lax.RaggedDotDimensionNumbers(dd, ragged, group)
    return M.lax.ragged_dot_general(lhs, rhs, gs, numbers, **kw)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_jax(name):
    lhs, rhs, gs, *dims = CASES[name]
    expected = np.asarray(call(jax, lhs, rhs, gs, *dims))
    for got in (call(tj, lhs, rhs, gs, *dims), tj.jit(lambda a, b, g: call(tj, a, b, g, *dims))(lhs, rhs, gs)):
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    w = n(*expected.shape)

    def loss(M):
        return lambda a, b: M.numpy.sum(call(M, a, b, gs, *dims) * w)
    try:
        expected = jax.grad(loss(jax), argnums=(0, 1))(lhs, rhs)
    except NotImplementedError:     # JAX's rhs gradient in the contracting and batch modes: finite differences
        tj.test_util.check_grads(loss(tj), (lhs, rhs), order=2)
        return
    for e, g in zip(expected, tj.grad(loss(tj), argnums=(0, 1))(lhs, rhs)):
        np.testing.assert_allclose(g, np.asarray(e), rtol=1e-12, atol=1e-12)


def test_preferred_element_type_and_float32():
    lhs, rhs, gs, *dims = CASES["ragged_dot"]
    a, b = lhs.astype(np.float32), rhs.astype(np.float32)
    for kw in ({}, {"preferred_element_type": np.float64}):
        expected, got = np.asarray(call(jax, a, b, gs, *dims, **kw)), call(tj, a, b, gs, *dims, **kw)
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_vmap_against_a_loop():
    lhs, rhs, gs, *dims = CASES["batch dims out of order"]
    many = np.stack([lhs, 2 * lhs, -lhs])
    batched = tj.jit(tj.vmap(lambda a: call(tj, a, rhs, gs, *dims)))(many)
    for a, b in zip(many, batched):
        np.testing.assert_allclose(b, call(tj, a, rhs, gs, *dims), rtol=1e-12)


@pytest.mark.parametrize("ragged, group, gs, match", [
    ([0, 1], [0], GS, "exactly one lhs ragged dimension"),
    ([0], [], GS, "exactly one rhs group dimension"),
    ([0], [1], GS, "group dimension"),
    ([0], [0], np.array([1, 2], np.int32), "group dimension size to be 2"),
    ([0], [0], np.ones((2, 3), np.int32), "expected group_sizes to have shape"),
    ([0], [0], GS.astype(np.float32), "group_sizes"),
])
def test_errors_as_jax(ragged, group, gs, match):
    lhs, rhs, _, dd, _, _ = CASES["ragged_dot"]
    with pytest.raises(TypeError):
        call(jax, lhs, rhs, gs, dd, ragged, group)
    with pytest.raises(TypeError, match=match):
        call(tj, lhs, rhs, gs, dd, ragged, group)
