"""tracejit.numpy's binary ufuncs as objects (jnp.add.outer, np.maximum.accumulate, np.add.at ...): each method
against NumPy's (and JAX's ufunc.at, which is functional), eagerly and compiled, with gradients through the
reductions and scatters they use; aliases stay one object; unsupported uses say what works."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

A = np.arange(1.0, 7.0).reshape(2, 3)
INDICES = np.array([0, 1, 1])


# name: (function of the numpy namespace N, arguments)
CASES = {
    "add.outer": (lambda N, x, y: N.add.outer(x, y), (np.arange(3.0), A)),
    "equal.outer": (lambda N, x, y: N.equal.outer(x, y), (np.arange(3), np.arange(4))),
    "add.reduce": (lambda N, x: N.add.reduce(x, axis=1), (A,)),
    "add.reduce all, kept": (lambda N, x: N.add.reduce(x, axis=None, keepdims=True), (A,)),
    "multiply.reduce initial": (lambda N, x: N.multiply.reduce(x, initial=2.0), (A,)),
    "maximum.reduce": (lambda N, x: N.maximum.reduce(x, axis=1), (A,)),
    "minimum.reduce where": (lambda N, x: N.minimum.reduce(x, axis=0, where=x > 2, initial=9.0), (A,)),
    "logical_or.reduce": (lambda N, x: N.logical_or.reduce(x > 5, axis=1), (A,)),
    "subtract.reduce": (lambda N, x: N.subtract.reduce(x, axis=1), (A,)),
    "divide.reduce kept": (lambda N, x: N.divide.reduce(x, axis=0, keepdims=True), (A,)),
    "bitwise_xor.reduce": (lambda N, x: N.bitwise_xor.reduce(x), (np.array([3, 5, 6, 9]),)),
    "add.accumulate": (lambda N, x: N.add.accumulate(x, axis=1), (A,)),
    "multiply.accumulate": (lambda N, x: N.multiply.accumulate(x), (A,)),
    "maximum.accumulate": (lambda N, x: N.maximum.accumulate(x), (np.array([1.0, 3.0, 2.0, 5.0, 4.0]),)),
    "minimum.accumulate": (lambda N, x: N.minimum.accumulate(x, axis=1), (A[:, ::-1],)),
    "subtract.accumulate": (lambda N, x: N.subtract.accumulate(x), (np.array([10.0, 1.0, 2.0]),)),
    "power.accumulate": (lambda N, x: N.power.accumulate(x), (np.array([2.0, 3.0, 0.5]),)),
}


def _numpy_at(name, a, b):
    out = a.copy()
    getattr(np, name).at(out, INDICES, b)
    return out


@pytest.mark.parametrize("name", CASES)
def test_methods_as_numpy(name):
    fn, args = CASES[name]
    want = fn(np, *args)
    for got in (fn(tnp, *args), tj.jit(lambda *xs: fn(tnp, *xs))(*args)):
        assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum"])
def test_at_is_functional_and_accumulates_repeated_indices(name):
    a, b = np.arange(1.0, 4.0), np.array([1.5, 5.0, 2.0])
    ufunc = getattr(tnp, name)
    for got in (ufunc.at(a, INDICES, b, inplace=False), tj.jit(lambda x, y: ufunc.at(x, INDICES, y, inplace=False))(a, b)):
        np.testing.assert_allclose(got, _numpy_at(name, a, b))
    np.testing.assert_array_equal(a, np.arange(1.0, 4.0))      # not written in place
    with pytest.raises(NotImplementedError, match="inplace=False"):
        ufunc.at(a, INDICES, b)


def test_gradients_objects_and_errors():
    np.testing.assert_allclose(tj.grad(lambda x: tnp.maximum.accumulate(x).sum())(np.array([1.0, 3.0, 2.0])),
                               [1.0, 2.0, 0.0])
    np.testing.assert_allclose(tj.grad(lambda x: tnp.add.at(x, INDICES, x[0] ** 2, inplace=False).sum())(
        np.arange(1.0, 4.0)), [1.0 + 3 * 2.0, 1.0, 1.0])
    assert tnp.divide is tnp.true_divide and tnp.atan2 is tnp.arctan2 and isinstance(tnp.add, tnp.ufunc)
    assert tnp.add(1.0, 2.0) == 3.0 and tnp.add.identity == 0 and tnp.add.nin == 2
    with pytest.raises(NotImplementedError, match="along an axis of 300 elements"):
        tnp.subtract.reduce(np.ones(300))
    with pytest.raises(NotImplementedError, match="supported for add, subtract"):
        tnp.power.at(np.ones(3), INDICES, 2.0, inplace=False)
    with pytest.raises(ValueError, match="zero-size array to reduction operation subtract"):
        tnp.subtract.reduce(np.ones(0))
