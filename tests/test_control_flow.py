"""cond, switch, while_loop, fori_loop and scan: traced once, against the equivalent Python loops."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax


def both(fun, *args, **kwargs):
    """fun's result outside jit (eager, through the reference impls) and under jit, checked equal."""
    eager = fun(*args)
    compiled = tj.jit(fun, **kwargs)(*args)
    tj.check_ir(tj.make_ir(fun, **kwargs)(*args))
    for a, b in zip(tj.tree_util.tree_leaves(eager), tj.tree_util.tree_leaves(compiled)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    return compiled


def test_cond_picks_a_branch_and_closes_over_values():
    w = np.array([1.0, 2.0, 3.0])
    f = lambda x, p: lax.cond(p > 0, lambda x: x * w, lambda x: tnp.sin(x) - 1.0, x)
    x = np.linspace(0, 1, 3)
    np.testing.assert_allclose(both(f, x, 1.0), x * w)
    np.testing.assert_allclose(both(f, x, -1.0), np.sin(x) - 1.0)
    text = str(tj.make_ir(f)(x, 1.0))
    assert text.count("lambda") == 3 and "cond[" in text and "branches=(" in text


def test_switch_clamps_the_index_and_takes_pytrees():
    branches = [lambda d: {"a": d["a"] + 1}, lambda d: {"a": d["a"] * 2}, lambda d: {"a": -d["a"]}]
    x = {"a": np.arange(3.0)}
    for i, expected in [(0, x["a"] + 1), (1, x["a"] * 2), (2, -x["a"]), (7, -x["a"]), (-3, x["a"] + 1)]:
        out = both(lambda i, x: lax.switch(i, branches, x), np.int32(i), x)
        np.testing.assert_allclose(out["a"], expected)


def test_while_loop_against_python():
    def collatz_steps(n):
        return lax.while_loop(lambda c: c[0] != 1,
                              lambda c: (tnp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1), c[1] + 1), (n, 0))[1]

    def python_steps(n):
        steps = 0
        while n != 1:
            n, steps = (n // 2 if n % 2 == 0 else 3 * n + 1), steps + 1
        return steps

    for n in (1, 6, 27):
        assert both(collatz_steps, np.int64(n)) == python_steps(n)


@pytest.mark.parametrize("size", [7, 64, 100])
def test_vmapped_while_with_a_batched_predicate_stops_each_example_at_its_own_end(size):
    """Each example stops at its own step (Collatz counts differ), a batched cap read by cond and body: the
    whole batch in one masked loop (under two blocks), or in blocks of BLOCK examples and a rest."""
    from tracejit.primitives.while_loop import BLOCK

    def capped_steps(n, cap):
        return lax.while_loop(lambda c: (c[0] != 1) & (c[1] < cap),
                              lambda c: (tnp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1), c[1] + 1 + 0 * cap),
                              (n, 0))[1]

    def python_steps(n, cap):
        steps = 0
        while n != 1 and steps < cap:
            n, steps = (n // 2 if n % 2 == 0 else 3 * n + 1), steps + 1
        return steps

    n, cap = np.arange(1, size + 1, dtype=np.int64), np.arange(size, dtype=np.int64) % 40 + 5
    out = both(tj.vmap(capped_steps), n, cap)
    np.testing.assert_array_equal(out, [python_steps(int(a), int(b)) for a, b in zip(n, cap)])
    assert ("scan[" in str(tj.make_ir(tj.vmap(capped_steps))(n, cap))) == (size >= 2 * BLOCK)


def test_vmapped_newton_iterations_in_blocks_and_their_derivatives():
    """sqrt by Newton to a per-example tolerance over 100 examples (blocks and a rest): values and jvp."""
    def newton_sqrt(a):
        return lax.while_loop(lambda y: tnp.abs(y * y - a) > 1e-12 * a, lambda y: 0.5 * (y + a / y), a)

    a = np.linspace(0.5, 400, 100)
    np.testing.assert_allclose(both(tj.vmap(newton_sqrt), a), np.sqrt(a), rtol=1e-12)
    _, tangent = tj.jit(lambda a: tj.jvp(tj.vmap(newton_sqrt), (a,), (tnp.ones_like(a),)))(a)
    np.testing.assert_allclose(tangent, 0.5 / np.sqrt(a), rtol=1e-9)


def test_fori_loop_static_and_dynamic_bounds():
    body = lambda i, c: c * 0.5 + i
    expected = 0.0
    for i in range(2, 9):
        expected = expected * 0.5 + i
    assert both(lambda: lax.fori_loop(2, 9, body, 0.0)) == pytest.approx(expected)
    assert both(lambda lo, hi: lax.fori_loop(lo, hi, body, 0.0), np.int32(2), np.int32(9)) == pytest.approx(expected)
    assert "scan[" in str(tj.make_ir(lambda x: lax.fori_loop(0, 3, lambda i, c: c + x, x))(1.0))
    assert "while[" in str(tj.make_ir(lambda n: lax.fori_loop(0, n, lambda i, c: c + 1.0, 0.0))(3))


def test_fori_loop_index_is_weakly_typed_as_in_jax():
    """`c * 2 + i` keeps a float32 carry float32 (a strong int64 index would promote it to float64)."""
    x = np.arange(3, dtype=np.float32)
    out = both(lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2 + i, x), x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ((x * 2 + 0) * 2 + 1) * 2 + 2)
    ints = np.arange(4, dtype=np.int32)
    assert both(lambda a: lax.fori_loop(0, 4, lambda i, c: c + i, a), ints).dtype == np.int32


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_against_python_loop(rng, reverse):
    xs = {"u": rng.normal(size=(5, 3)), "v": rng.normal(size=5)}
    h0 = np.zeros(3)

    def step(h, x):
        h = tnp.tanh(h * 0.9 + x["u"] * x["v"])
        return h, (h.sum(), x["v"] * 2)

    carry, (sums, doubled) = both(lambda h0, xs: lax.scan(step, h0, xs, reverse=reverse), h0, xs)
    h, expected_sums = h0, np.zeros(5)
    for i in (range(4, -1, -1) if reverse else range(5)):
        h = np.tanh(h * 0.9 + xs["u"][i] * xs["v"][i])
        expected_sums[i] = h.sum()
    np.testing.assert_allclose(carry, h)
    np.testing.assert_allclose(sums, expected_sums)
    np.testing.assert_allclose(doubled, xs["v"] * 2)


def test_scan_without_xs_and_with_length():
    carry, ys = both(lambda: lax.scan(lambda c, _: (c + 1, c * c), 0, None, length=4))
    assert carry == 4 and list(ys) == [0, 1, 4, 9]
    assert str(tj.make_ir(lambda: lax.scan(lambda c, _: (c + 1, None), 0.0, None, length=10 ** 5))()).count("add") == 1


def test_weakly_typed_carry_takes_the_body_dtype():
    out = both(lambda x: lax.fori_loop(0, 3, lambda i, c: c + x, 0.0), np.float32(1))
    assert out.dtype == np.float32


def test_errors_name_both_branches_and_the_changing_leaf():
    with pytest.raises(TypeError, match=r"false_fun returns output: f32\[4\]; true_fun returns output: f32\[3\]"):
        lax.cond(True, lambda x: x, lambda x: tnp.concatenate([x, x[:1]]), np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"branch 0 \(first\) returns output: f64\[3\]; branch 1 \(<lambda>\)"):
        def first(x):
            return x
        lax.switch(0, [first, lambda x: (x, x)], np.ones(3))
    with pytest.raises(TypeError, match=r"carry leaf carry\[1\] changes type.*f64\[2\] before, f64\[3\] after"):
        lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, tnp.concatenate([c[1], c[1][:1]])),
                       (0, np.ones(2)))
    with pytest.raises(TypeError, match="scalar bool"):
        lax.while_loop(lambda c: c, lambda c: c + 1, np.ones(2))
    with pytest.raises(TypeError, match="scalar bool or integer, got f64\\[2\\]"):
        lax.cond(np.ones(2), lambda: 1.0, lambda: 2.0)
    with pytest.raises(ValueError, match=r"leading axes of xs disagree \(xs\[0\]: 3, xs\[1\]: 4"):
        lax.scan(lambda c, x: (c, None), 0.0, (np.ones(3), np.ones(4)))


def test_lax_map_in_batches_matches_a_loop_and_checks_batch_size():
    """lax.map: a scan over the examples, or with batch_size a scan of vmapped batches and a vmapped rest
    (values against JAX: tests/test_against_jax.py); batch_size must be a positive int."""
    xs = {"a": np.arange(10.0).reshape(5, 2), "b": np.arange(5.0)}
    f = lambda d: d["a"].sum() * d["b"]
    want = np.array([f({"a": xs["a"][i], "b": xs["b"][i]}) for i in range(5)])
    for batch_size in (None, 2, 5, 8):
        np.testing.assert_allclose(both(lambda xs, b=batch_size: lax.map(f, xs, batch_size=b), xs), want)
    assert "scan[" in str(tj.make_ir(lambda xs: lax.map(f, xs, batch_size=2))(xs))
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="batch_size must be a positive int"):
            lax.map(f, xs, batch_size=bad)
