"""Loop carries updated in place (backend/in_place.py): a large elementwise carry stays in one buffer, and every
body that still needs the old value after writing the new one (reads it later, swaps carries, returns it as
an output, reads it at another index) keeps two. Compiled code is checked against the reference interpreter
(eval_ir) and NumPy, directly, under vmap and under grad."""
import threading

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.backend import runtime
from tracejit.core.trace import eval_ir

N = 5000          # elements: a vectorized loop nest, as a large carry's


def data(*shape, seed=0):
    return np.random.default_rng(seed).uniform(0.5, 1.5, shape or (N,))


def check(fun, *args, rtol=1e-13):
    """fun compiled against eval_ir of its IR (the primitives' reference impls); returns the compiled result."""
    compiled = tj.jit(fun)(*args)
    closed = tj.make_ir(fun)(*args)
    reference = eval_ir(closed, *tj.tree_util.tree_leaves(args))
    leaves = tj.tree_util.tree_leaves(compiled)
    assert len(leaves) == len(reference)
    for a, b in zip(leaves, reference):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-300)
    return compiled


def temp_bytes(fun, *args):
    return tj.jit(fun).lower(*args).compile().memory_analysis().temp_size_in_bytes


def newton(a, steps=12):
    body = lambda c: (c[0] + 1, c[1] - (c[1] * c[1] * c[1] - a) / (3 * c[1] * c[1]))
    return lax.while_loop(lambda c: c[0] < steps, body, (0, a))[1]


def test_elementwise_while_and_fori_carries_stay_in_one_buffer():
    a = data()
    np.testing.assert_allclose(check(newton, a), np.cbrt(a), rtol=1e-14)
    # No spare carry buffer: the arena holds less than one carry (8 * N bytes).
    assert temp_bytes(newton, a) < 8 * N
    f = lambda x: lax.fori_loop(0, 7, lambda i, c: tnp.sin(c) * 0.5 + i, x)
    expected = a.copy()
    for i in range(7):
        expected = np.sin(expected) * 0.5 + i
    np.testing.assert_allclose(check(f, a), expected, rtol=1e-14)
    assert temp_bytes(f, a) < 8 * N


def test_the_initial_carry_is_not_overwritten():
    a = data()
    before = a.copy()
    tj.jit(newton)(a)
    tj.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0, x))(a)
    np.testing.assert_array_equal(a, before)


def test_a_loop_that_never_runs_returns_its_initial_carry():
    a = data()
    f = lambda x, n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 3.0), (0, x))[1]
    np.testing.assert_array_equal(check(f, a, np.int32(0)), a)
    np.testing.assert_allclose(check(f, a, np.int32(2)), a * 9.0)


def test_old_carry_read_after_the_new_one_is_written():
    """The old carry feeds a later loop nest (after a division ends the first), or another index (a
    reversal), or a reduction: each needs the old value after the new one exists."""
    x0 = data()

    def later_group(c, _):
        new = c * 0.5 + 0.25
        return new, tnp.sum(new) + tnp.log(c)

    def other_index(c, _):
        new = c * 0.9 + 0.1
        return new, new + c[::-1]

    def reduction(c, _):
        new = c - 0.01
        return new, new * tnp.sum(c)

    for body in (later_group, other_index, reduction):
        carry, ys = check(lambda x, body=body: lax.scan(body, x, None, length=4), x0)
        c, rows = x0.copy(), []
        for _ in range(4):
            new, y = body(c, None) if body is not other_index else (c * 0.9 + 0.1, c * 0.9 + 0.1 + c[::-1])
            c, y = np.asarray(new), np.asarray(y)
            rows.append(y)
        np.testing.assert_allclose(carry, c, rtol=1e-13)
        np.testing.assert_allclose(ys, np.stack(rows), rtol=1e-12)


def test_carry_reduced_over_a_broadcast():
    """The new carry is a column sum of the old one broadcast over rows: an in-place reduction initialises
    its output before it has read every row."""
    c0, w = data(64), data(40, 64, seed=4) / 40
    f = lambda c: lax.fori_loop(0, 3, lambda i, c: tnp.sum(w * c, axis=0), c)
    want = c0.copy()
    for _ in range(3):
        want = (w * want).sum(0)
    np.testing.assert_allclose(check(f, c0), want, rtol=1e-13)


def test_swapped_and_passed_through_carries():
    a, b = data(seed=1), data(seed=2)
    swap = lambda x, y: lax.fori_loop(0, 5, lambda i, c: (c[1] * 2.0, c[0] + 1.0), (x, y))
    ex, ey = a.copy(), b.copy()
    for _ in range(5):
        ex, ey = ey * 2.0, ex + 1.0
    for got, want in zip(check(swap, a, b), (ex, ey)):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    plain = lambda x, y: lax.fori_loop(0, 5, lambda i, c: (c[1], c[0]), (x, y))
    for got, want in zip(check(plain, a, b), (b, a)):
        np.testing.assert_array_equal(got, want)
    through = lambda x, y: lax.fori_loop(0, 5, lambda i, c: (c[0], c[1] * c[0]), (x, y))
    for got, want in zip(check(through, a, b), (a, b * a ** 5)):
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_carries_that_are_also_outputs():
    x0 = data()
    old_as_y = lambda x: lax.scan(lambda c, _: (c * 1.5, c), x, None, length=3)
    new_as_y = lambda x: lax.scan(lambda c, _: ((c * 1.5,) * 2), x, None, length=3)
    carry, ys = check(old_as_y, x0)
    np.testing.assert_allclose(ys, np.stack([x0, x0 * 1.5, x0 * 2.25]), rtol=1e-15)
    np.testing.assert_allclose(carry, x0 * 1.5 ** 3, rtol=1e-15)
    carry, ys = check(new_as_y, x0)
    np.testing.assert_allclose(ys, np.stack([x0 * 1.5, x0 * 2.25, x0 * 1.5 ** 3]), rtol=1e-15)
    twice = lambda x: lax.fori_loop(0, 3, lambda i, c: (c[0] * 2.0,) * 2, (x, x))
    for got in check(twice, x0):
        np.testing.assert_allclose(got, x0 * 8.0)


def test_nested_loops_and_mixed_carries():
    x0, w = data(), data(seed=3)

    def body(i, c):
        x, s = c
        x = lax.fori_loop(0, 3, lambda j, y: y * 0.5 + w, x)
        return x, s + tnp.sum(x)

    x, s = check(lambda x: lax.fori_loop(0, 4, body, (x, 0.0)), x0)
    ex, es = x0.copy(), 0.0
    for _ in range(4):
        for _ in range(3):
            ex = ex * 0.5 + w
        es += ex.sum()
    np.testing.assert_allclose(x, ex, rtol=1e-14)
    assert s == pytest.approx(es, rel=1e-12)


def test_in_place_carries_under_vmap():
    a = data(4, N // 4)
    # batched predicate: each row stops at its own step count (a masked body)
    f = lambda a, n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 0.5 + a), (0, a))[1]
    counts = np.array([0, 1, 3, 6], np.int32)
    got = check(tj.vmap(f), a, counts)
    for row, n, out in zip(a, counts, got):
        want = row.copy()
        for _ in range(n):
            want = want * 0.5 + row
        np.testing.assert_allclose(out, want, rtol=1e-14)
    g = tj.vmap(lambda x: lax.fori_loop(0, 5, lambda i, c: tnp.cos(c) + i, x))
    want = a.copy()
    for i in range(5):
        want = np.cos(want) + i
    np.testing.assert_allclose(check(g, a), want, rtol=1e-14)
    np.testing.assert_allclose(check(tj.vmap(newton), a), np.cbrt(a), rtol=1e-14)


def test_in_place_carries_under_grad_of_fori_loop():
    x0 = data()
    loss = lambda x: tnp.sum(lax.fori_loop(0, 6, lambda i, c: tnp.sin(c) * c + 0.1, x))
    grad = check(tj.grad(loss), x0, rtol=1e-12)
    x, d = x0.copy(), np.ones_like(x0)
    for _ in range(6):
        d = d * (np.cos(x) * x + np.sin(x))
        x = np.sin(x) * x + 0.1
    np.testing.assert_allclose(grad, d, rtol=1e-12)
    eps = 1e-6
    e = np.zeros(N)
    e[7] = eps
    fd = (tj.jit(loss)(x0 + e) - tj.jit(loss)(x0 - e)) / (2 * eps)
    assert grad[7] == pytest.approx(fd, rel=1e-6)


def test_large_loop_bodies_run_over_the_threads():
    """A body loop nest that a top-level call would split over the threads is split inside the loop too
    (steps.split_in_body: generated code calls the thread pool each iteration); results are unchanged."""
    if runtime.NUM_THREADS < 2:
        pytest.skip("one thread")
    x0 = data(10 ** 6).astype(np.float32)
    body = lambda i, c: tnp.tanh(c) * 0.9 + 0.1
    f = lambda x: lax.fori_loop(0, 3, body, x)
    want = x0.copy()
    for _ in range(3):
        want = np.tanh(want) * np.float32(0.9) + np.float32(0.1)
    np.testing.assert_allclose(check(f, x0, rtol=1e-6), want, rtol=1e-6)
    assert "@tj_parallel_for" in tj.jit(f).lower(x0).as_llvm()
    small = x0[:5000]
    assert "@tj_parallel_for" not in tj.jit(f).lower(small).as_llvm()
    # a reduction keeping its outer axis (row sums) splits by rows; the carry is reduced in the same body
    m0 = data(2000, 1000).astype(np.float32)
    g = lambda m: lax.fori_loop(0, 2, lambda i, c: (tnp.tanh(c[0]) * 0.5, c[1] + tnp.sum(tnp.exp(-c[0]), axis=1)),
                                (m, tnp.zeros(2000, np.float32)))
    m, s = check(g, m0, rtol=1e-5)
    wm, ws = m0.copy(), np.zeros(2000, np.float32)
    for _ in range(2):
        wm, ws = np.tanh(wm) * np.float32(0.5), ws + np.exp(-wm).sum(1)
    np.testing.assert_allclose(m, wm, rtol=1e-6)
    np.testing.assert_allclose(s, ws, rtol=1e-5)


def test_threaded_loop_bodies_from_small_calls_and_several_threads():
    """A call small enough to keep the GIL (fast path) runs a body that calls back into the thread pool;
    several Python threads may do so at once."""
    if runtime.NUM_THREADS < 2:
        pytest.skip("one thread")
    f = tj.jit(lambda s: tnp.sum(lax.fori_loop(0, 3, lambda i, c: tnp.tanh(c) * 0.9 + 0.1, tnp.full((10 ** 6,), s))))
    assert "@tj_parallel_for" in f.lower(np.float32(0.5)).as_llvm()
    want = np.float32(0.5)
    for _ in range(3):
        want = np.tanh(want) * np.float32(0.9) + np.float32(0.1)
    assert f(np.float32(0.5)) == pytest.approx(want * 1e6, rel=1e-5)
    out = []
    threads = [threading.Thread(target=lambda: out.append(float(f(np.float32(0.5))))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [pytest.approx(want * 1e6, rel=1e-5)] * 4


def test_scattered_carries_are_updated_where_they_lie():
    """x.at[i].set / .add in a loop body write into the carry's buffer (a scatter kernel's `overwrites`: no copy
    of x per iteration, no spare buffer), also in 2-d and under scan and while; a body that reads the old carry
    after the scatter, or scatters the carry into itself, keeps two buffers. All against the reference
    interpreter and NumPy."""
    a, grid = data(), data(50, 100, seed=5)
    fill = lambda x: lax.fori_loop(1, N, lambda i, c: c.at[i].set(c[i - 1] * 0.5 + 1.0), x)
    want = a.copy()
    for i in range(1, N):
        want[i] = want[i - 1] * 0.5 + 1.0
    np.testing.assert_allclose(check(fill, a), want, rtol=1e-13)
    assert temp_bytes(fill, a) < 8 * N
    rows = lambda g: lax.fori_loop(0, 50, lambda i, c: c.at[i, ::2].add(c[i - 1, 1::2]), g)
    want = grid.copy()
    for i in range(50):
        want[i, ::2] += want[i - 1, 1::2]
    np.testing.assert_allclose(check(rows, grid), want, rtol=1e-13)
    scanned = lambda x: lax.scan(lambda c, i: (c.at[i % 7].add(1.0), c[0]), x, np.arange(20))
    carry, ys = check(scanned, a)
    want, seen = a.copy(), []
    for i in range(20):
        seen.append(want[0])
        want[i % 7] += 1.0
    np.testing.assert_allclose(carry, want)
    np.testing.assert_allclose(ys, seen)
    counted = lambda x: lax.while_loop(lambda c: c[0] < 9, lambda c: (c[0] + 1, c[1].at[c[0] * 3].set(-1.0)), (0, x))
    want = a.copy()
    want[:27:3] = -1.0
    np.testing.assert_array_equal(check(counted, a)[1], want)
    old_read = lambda x: lax.fori_loop(0, 4, lambda i, c: c.at[i].set(9.0) + c[::-1] * 0.0 + c, x)
    want = a.copy()
    for i in range(4):
        new = want.copy()
        new[i] = 9.0
        want = new + want
    np.testing.assert_allclose(check(old_read, a), want, rtol=1e-13)
    into_itself = lambda x: lax.fori_loop(0, 3, lambda i, c: c.at[::-1].set(c), x)
    np.testing.assert_array_equal(check(into_itself, a), a[::-1])


def test_small_dynamic_update_slices_of_a_carry_are_scatters_updated_in_place():
    """A dynamic_update_slice of a carry whose update is small (indexing.SMALL_UPDATE) is a scatter of its window
    (the simplify rule), which the loop applies where the carry lies: starts clamped, negative ones wrapped, as
    the reference interpreter's; a large update stays a loop nest."""
    grid = data(400, 8, seed=6)

    def rows(g):
        def body(i, c):
            row = lax.dynamic_slice(c, (i - 1, 0), (1, 8))
            return lax.dynamic_update_slice(c, row * 0.5 + 1.0, (i, 0))
        return lax.fori_loop(1, 400, body, g)
    want = grid.copy()
    for i in range(1, 400):
        want[i] = want[i - 1] * 0.5 + 1.0
    np.testing.assert_allclose(check(rows, grid), want, rtol=1e-13)
    assert temp_bytes(rows, grid) < grid.nbytes
    assert "scatter" in tj.jit(rows).lower(grid).as_text()
    for start in (-3, -1000, 398, 5000):
        edge = lambda g, s: lax.fori_loop(0, 2, lambda i, c: lax.dynamic_update_slice(c, c[:3, :2] + i, (s, 5)), g)
        check(edge, grid, np.int32(start))
    big = lambda g: lax.fori_loop(0, 2, lambda i, c: lax.dynamic_update_slice(c, c[:200] * 2.0, (i, 0)), g)
    check(big, grid)
    assert "scatter" not in tj.jit(big).lower(grid).as_text()
