"""Value ranges (primitives/value_ranges.py): gathers and scatters whose indices are provably in range read and write
them unclamped (mode "inside"), selects whose predicate is provably constant pick their case; and where nothing is
proven, nothing changes. Results against NumPy, including the indices that only a wrong proof would send out of
range."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.primitives.value_ranges import known_truth, value_range

RNG = np.random.default_rng(7)
X = RNG.standard_normal(2000) * 1e3          # floors far outside [0, 100), both signs
TABLE = RNG.standard_normal(100)


def optimized(f, *args):
    return str(tj.make_ir(f, optimize=True)(*args))


def test_floor_mod_indices_are_read_unclamped():
    def f(x, t):
        return t[tnp.mod(tnp.floor(x).astype(int), 100)]
    text = optimized(f, X, TABLE)
    assert "mode=inside" in text and "mode=clip" not in text
    assert text.count("select_n") == 1            # the floor-mod's sign fix; the negative index's wrap is gone
    np.testing.assert_array_equal(tj.jit(f)(X, TABLE), TABLE[np.mod(np.floor(X).astype(int), 100)])


def test_negative_indices_known_negative_are_wrapped_once():
    def f(x, t):
        return t[tnp.mod(tnp.floor(x).astype(int), 100) - 100]      # in [-100, -1]: always wrapped
    assert "mode=inside" in optimized(f, X, TABLE)
    np.testing.assert_array_equal(tj.jit(f)(X, TABLE), TABLE[np.mod(np.floor(X).astype(int), 100) - 100])


@pytest.mark.parametrize("shift", [1, 100, -101])
def test_indices_that_may_leave_the_range_stay_clamped(shift):
    def f(x, t):
        return t[tnp.mod(tnp.floor(x).astype(int), 100) + shift]
    assert "mode=clip" in optimized(f, X, TABLE)
    k = np.mod(np.floor(X).astype(int), 100) + shift
    want = TABLE[np.clip(np.where(k < 0, k + 100, k), 0, 99)]      # (JAX clamps, NumPy would raise)
    np.testing.assert_array_equal(tj.jit(f)(X, TABLE), want)


def test_an_assumption_does_not_cross_a_roll():
    """The predicate looks at e shifted by one position: where it holds says nothing about e at the select's own
    position, so the select's cases keep their full ranges and the gather its clamp."""
    def f(x, t):
        e = tnp.floor(x).astype(int) % 200 - 100          # [-100, 99]
        k = tnp.where(tnp.roll(e, 1) < 0, e + 100, e)      # e + 100 can reach 199 where e itself is >= 0
        return t[k]
    assert "mode=clip" in optimized(f, X, TABLE)
    e = np.floor(X).astype(int) % 200 - 100
    k = np.where(np.roll(e, 1) < 0, e + 100, e)
    np.testing.assert_array_equal(tj.jit(f)(X, TABLE), TABLE[np.clip(np.where(k < 0, k + 100, k), 0, 99)])


def test_argsort_indices_and_scatters():
    def f(x):
        order = tnp.argsort(x)
        return x[order], tnp.zeros(x.shape[0]).at[order].add(x), tnp.zeros(100).at[order % 100].add(1.0)
    text = optimized(f, X[:500])
    assert "mode=clip" not in text and "mode=inside" in text
    got = tj.jit(f)(X[:500])
    order = np.argsort(X[:500], kind="stable")
    np.testing.assert_array_equal(got[0], X[:500][order])
    want = np.zeros(500)
    want[order] += X[:500]
    np.testing.assert_array_equal(got[1], want)
    np.testing.assert_array_equal(got[2], np.bincount(order % 100, minlength=100).astype(float))


def test_grad_and_vmap_of_periodic_lookups_against_jax():
    jax, jnp = pytest.importorskip("jax"), pytest.importorskip("jax.numpy")

    def lookup(m):
        def f(t, x):
            i = m.floor(x).astype(int)
            return m.sum(t[m.mod(i, 100)] * t[m.mod(i + 1, 100)] ** 2)
        return f
    xs = X[:64].reshape(4, 16)
    got = tj.jit(tj.vmap(tj.grad(lookup(tnp)), in_axes=(None, 0)))(TABLE, xs)
    want = jax.jit(jax.vmap(jax.grad(lookup(jnp)), in_axes=(None, 0)))(TABLE, xs)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12)


def test_ranges_and_truths_on_an_ir():
    closed = tj.make_ir(lambda x: (tnp.floor(x).astype(np.int32) % 7, tnp.arange(5) * 3 - 2), optimize=True)(X)
    made = {id(v): e for e in closed.ir.eqns for v in e.outvars}
    mod, arith = closed.ir.outvars
    assert value_range(mod, lambda v: made.get(id(v))) == (0, 6)
    assert value_range(arith, lambda v: made.get(id(v))) == (-2, 10)
    negative = tj.make_ir(lambda x: (tnp.floor(x).astype(np.int32) % 7) < 0, optimize=True)(X)
    made = {id(v): e for e in negative.ir.eqns for v in e.outvars}
    assert known_truth(negative.ir.outvars[0], lambda v: made.get(id(v))) is False


def test_inside_is_not_a_user_mode():
    with pytest.raises(ValueError, match="inside"):
        tj.lax.gather(TABLE, np.zeros((3, 1), np.int32), tj.lax.GatherDimensionNumbers(
            offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)), (1,), mode="inside")


def test_top_k_values_are_read_at_their_indices_unclamped():
    def f(x):
        return tj.lax.top_k(x, 5)
    assert "mode=inside" in optimized(f, X)
    values, indices = tj.jit(f)(X)
    np.testing.assert_array_equal(values, np.sort(X)[::-1][:5])
    np.testing.assert_array_equal(X[indices], values)


def test_a_clamped_index_keeps_true_bounds():
    """Clamping an index known to lie in [10, 20] into [0, 5] gives 5: a later range test must say so."""
    from tracejit.backend.llvm_text import Function, Module
    from tracejit.backend.rules import Emitter
    f = Function(Module(), "define void @t()", {})
    b = Emitter(f)
    f.bounds["%i"] = (10, 20)
    clamped = b.clamp_index("%i", 0, 5)
    assert f.bounds[clamped] == (5, 5)
    assert b.in_range(clamped, 6, 8) is False and b.in_range(clamped, 0, 8) is True
    assert isinstance(b.in_range("%i", 12, 30), str)      # undecided: a run-time test
