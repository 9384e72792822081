"""Eager binds of costly primitives (the special functions, threefry) on large arrays run compiled code
(tracejit.eager), as do large eager draws of random.uniform and random.normal; eval_ir, the reference, keeps the
NumPy impls."""
from unittest import mock

import numpy as np
import pytest

import tracejit as tj
from tracejit.core import trace
from tracejit.core.trace import COSTLY_SIZE, eval_ir
from tracejit.primitives import special as sp
from tracejit.scipy import special as S


def _impl_forbidden(*args, **params):
    raise AssertionError("the NumPy impl ran")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_eager_binds_of_costly_primitives_are_compiled(dtype):
    x = np.random.default_rng(0).uniform(0.01, 0.99, (3, COSTLY_SIZE)).astype(dtype)
    want = tj.jit(S.ndtri)(x)
    with mock.patch.object(sp.ndtri_p, "impl", _impl_forbidden):
        got = S.ndtri(x)          # one compiled program for every size and shape: flattened, symbolic
        assert got.shape == x.shape and got.dtype == dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(S.ndtri(x[:, :-7].copy()), want[:, :-7])
    assert sp.ndtri_p.costly


def test_small_eager_binds_and_eval_ir_run_the_impls():
    x = np.linspace(0.1, 0.9, 7)
    with mock.patch.object(sp.ndtri_p, "impl", _impl_forbidden), pytest.raises(AssertionError, match="impl ran"):
        S.ndtri(x)
    big = np.linspace(0.01, 0.99, COSTLY_SIZE)
    closed = tj.make_ir(S.ndtri)(big)
    with mock.patch.object(sp.ndtri_p, "impl", _impl_forbidden), pytest.raises(AssertionError, match="impl ran"):
        eval_ir(closed, big)
    assert not trace._stack.interpreting


def test_eager_two_operand_costly_bind_broadcasts_a_scalar():
    x = np.linspace(0.5, 30, COSTLY_SIZE)
    np.testing.assert_allclose(S.gammainc(2.5, x), tj.jit(lambda x: S.gammainc(2.5, x))(x), rtol=1e-14)


SAMPLERS = {
    "normal": lambda k, shape: tj.random.normal(k, shape),
    "uniform": lambda k, shape: tj.random.uniform(k, list(shape), np.float32, -2.0, 3.0),
    "exponential": lambda k, shape: tj.random.exponential(k, shape),
    "randint": lambda k, shape: tj.random.randint(k, shape, 3, 70),
    "bernoulli": lambda k, shape: tj.random.bernoulli(k, 0.3, shape, mode="low"),
    "categorical": lambda k, shape: tj.random.categorical(k, np.log(np.arange(1.0, 6.0)), shape=shape),
}


@pytest.mark.parametrize("name", SAMPLERS)
def test_large_eager_draws_run_the_jitted_sampler(name):
    """A sampler called eagerly for COSTLY_SIZE values or more runs jitted (random.keys.jitted_when_large: no
    eager bind happens, so the costly-bind compiler never runs), with the jitted call's values; a small draw stays
    eager, with the same values as under jit."""
    key, draw = tj.random.PRNGKey(3), SAMPLERS[name]
    shape = (COSTLY_SIZE // 16, 16)
    with mock.patch.object(trace, "_costly_compiler", [_impl_forbidden]):
        eager = draw(key, shape)
    np.testing.assert_array_equal(eager, tj.jit(lambda k: draw(k, shape))(key))
    np.testing.assert_array_equal(draw(key, (5,)), tj.jit(lambda k: draw(k, (5,)))(key))


def test_constant_folding_keeps_the_impl():
    """A costly primitive folded during a compile (an eager() block) runs its impl, not a compile within the compile."""
    const = np.linspace(0.01, 0.99, COSTLY_SIZE)
    want = tj.jit(lambda x: S.ndtri(x))(const)
    calls = []
    with mock.patch.object(trace, "_costly_compiler", [lambda *a: calls.append(a) or _impl_forbidden()]):
        got = tj.jit(lambda: S.ndtri(const))()
    assert not calls      # (the fold pass would have swallowed the error and left the equation to run)
    np.testing.assert_allclose(got, want, rtol=1e-15)
