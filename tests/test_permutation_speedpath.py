"""random.permutation and choice without replacement, eager (jitted from COSTLY_SIZE elements) and under jit: JAX's
values bit for bit at sizes on both sides of the threshold and of one round of sorting, arrays along each axis,
the degenerate sizes (0 and 1 elements, which take no round); the compiled IR against the reference interpreter."""
import numpy as np
import pytest

import tracejit as tj
from tracejit import random
from tracejit.core.trace import COSTLY_SIZE

jax = pytest.importorskip("jax", reason="JAX is the reference for tracejit.random")
jr = jax.random


@pytest.fixture(scope="module", autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


SIZES = [0, 1, 2, 7, 1625, 1626, COSTLY_SIZE - 1, COSTLY_SIZE, 100_000]


@pytest.mark.parametrize("n", SIZES)
def test_permutation_of_range_is_jaxs(n):
    key = random.PRNGKey(n)
    want = np.asarray(jr.permutation(jr.PRNGKey(n), n))
    for got in (random.permutation(key, n), tj.jit(lambda k: random.permutation(k, n))(key)):
        assert got.dtype == want.dtype == np.int64
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape,axis,independent", [((1,), 0, False), ((1, 3), 1, True), ((5000,), 0, False),
                                                    ((3, 2000), 1, False), ((3, 2000), 1, True),
                                                    ((2000, 3), 0, True), ((40, 30), 0, False)])
def test_permutation_of_array_is_jaxs(shape, axis, independent):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * 0.5
    key = random.PRNGKey(7)
    want = np.asarray(jr.permutation(jr.PRNGKey(7), x, axis, independent))
    for got in (random.permutation(key, x, axis, independent),
                tj.jit(lambda k, x: random.permutation(k, x, axis, independent))(key, x)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n,draws", [(10, 10), (1, 1), (1000, 10), (1000, 100), (5000, 3), (20_000, 2000),
                                     (100_000, (10, 10)), (100_000, (40_000,))])
def test_choice_without_replacement_is_jaxs(n, draws):
    """The draws are the shuffle's first positions: the last round's first, through the other rounds' orders."""
    shape = draws if isinstance(draws, tuple) else (draws,)
    key = random.PRNGKey(3)
    want = np.asarray(jr.choice(jr.PRNGKey(3), n, shape, replace=False))
    np.testing.assert_array_equal(random.choice(key, n, shape, replace=False), want)
    np.testing.assert_array_equal(tj.jit(lambda k: random.choice(k, n, shape, replace=False))(key), want)


@pytest.mark.parametrize("shape,axis", [((6000,), 0), ((3, 5000), 1), ((5000, 2), 0)])
def test_choice_of_array_without_replacement_is_jaxs(shape, axis):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    key = random.PRNGKey(9)
    for draws in [(4,), (2, 300)]:
        want = np.asarray(jr.choice(jr.PRNGKey(9), a, draws, replace=False, axis=axis))
        np.testing.assert_array_equal(random.choice(key, a, draws, replace=False, axis=axis), want)
        np.testing.assert_array_equal(
            tj.jit(lambda k, a, draws=draws: random.choice(k, a, draws, replace=False, axis=axis))(key, a), want)


def test_typed_keys_and_eager_jit_agree():
    key = random.key(11)
    want = np.asarray(jr.permutation(jr.key(11), 6000))
    np.testing.assert_array_equal(random.permutation(key, 6000), want)
    np.testing.assert_array_equal(tj.jit(lambda k: random.permutation(k, 6000))(key), want)


@pytest.mark.parametrize("n", [3000, 50_000])
def test_compiled_matches_reference_interpreter(n):
    key = random.PRNGKey(5)
    closed = tj.make_ir(lambda k: random.permutation(k, n))(key)
    np.testing.assert_array_equal(tj.eval_ir(closed, key)[0], tj.jit(lambda k: random.permutation(k, n))(key))


def test_shuffle_is_a_permutation():
    got = random.permutation(random.PRNGKey(1), 10_000)
    np.testing.assert_array_equal(np.sort(got), np.arange(10_000))
