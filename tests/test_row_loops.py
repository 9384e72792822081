"""Row loops (fusion.merge_rows): a reduction over trailing axes and the loop nests after it that work on the
same rows run as phases of one loop over the rows (softmax: max, exp-sum, division). Which groups merge (a
phase reading another row of what the loop stores must not), and compiled code, fused and unfused, against the
NumPy reference interpreter (eval_ir), in control flow and over threads."""
import numpy as np
import pytest
from test_backend import check as check_backend
from test_collapse import closed_ir

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend.fusion import ROW_BYTES, ROW_MIN, plan_groups


def row_loops(f, *args):
    """[(phases, depth)] of the row loops that f's plan makes."""
    closed, _ = closed_ir(f, *args)
    return [(len(g.phases), g.depth) for g in plan_groups(closed.ir) if g.phases]


def check(f, *args, rtol=1e-5):
    """Compiled, fused and unfused, against the reference interpreter."""
    check_backend(f, *args, rtol=rtol, atol=rtol)


def data(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def softmax(x):
    e = tnp.exp(x - tnp.max(x, axis=-1, keepdims=True))
    return e / tnp.sum(e, axis=-1, keepdims=True)


def log_softmax(x):
    s = x - tnp.max(x, axis=-1, keepdims=True)
    return s - tnp.log(tnp.sum(tnp.exp(s), axis=-1, keepdims=True))


def layernorm(x, g):
    m = tnp.mean(x, axis=-1, keepdims=True)
    v = tnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) / tnp.sqrt(v + 1e-5) * g


def attention(q, k, v):
    s = tnp.einsum("bqd,bkd->bqk", q, k) / 8.0
    return tnp.einsum("bqk,bkd->bqd", tj.nn.softmax(s, axis=-1), v)


def centre_two_axes(x):        # a reduction over the two trailing axes
    return x - tnp.mean(x, axis=(1, 2), keepdims=True)


CASES = [
    ("softmax", softmax, [(6, 100)], (3, 1)),
    ("log_softmax", log_softmax, [(2, 3, 70)], (4, 2)),
    ("nn.softmax", lambda x: tj.nn.softmax(x, axis=-1), [(5, 80)], (4, 1)),
    ("layernorm", layernorm, [(7, 96), (96,)], (5, 1)),
    ("attention", attention, [(2, 70, 8)] * 3, (4, 2)),
    ("two trailing axes", centre_two_axes, [(3, 8, 9)], (3, 1)),
]


@pytest.mark.parametrize("name,f,shapes,plan", CASES, ids=[c[0] for c in CASES])
def test_rows_merge_and_match_reference(name, f, shapes, plan):
    args = [data(s, seed=k) for k, s in enumerate(shapes)]
    assert row_loops(f, *args) == [plan]
    check(f, *args)


def test_float64_half_and_integer_rows():
    check(softmax, data((4, 90), np.float64))
    check(softmax, data((4, 90), np.float16), rtol=1e-2)
    ints = np.arange(5 * 80, dtype=np.int32).reshape(5, 80) % 7
    check(lambda x: x * 10 - tnp.sum(x, axis=-1, keepdims=True), ints)
    assert row_loops(lambda x: x * 10 - tnp.sum(x, axis=-1, keepdims=True), ints) == [(2, 1)]


def _other_row(e):
    return e / tnp.sum(e, axis=-1, keepdims=True) + tnp.roll(e, 1, axis=0)


def _transposed(e):
    return e.T / tnp.sum(e, axis=0)


@pytest.mark.parametrize("name,f,plan", [
    ("rows reversed", lambda x: x - tnp.flip(tnp.max(x, axis=-1), 0)[:, None], []),
    ("rows as columns", lambda x: x - tnp.max(x, axis=-1)[None, :], []),
    ("rows as rows", lambda x: x - tnp.max(x, axis=-1)[:, None], [(2, 1)]),
    ("another row of a stored value", lambda x: _other_row(tnp.exp(x - tnp.max(x, axis=-1, keepdims=True))),
     [(2, 1)]),      # max and exp-sum; the division, which reads e's previous row too, runs after the row loop
    ("a transposed stored value", lambda x: _transposed(tnp.exp(x) + tnp.sum(x, axis=-1, keepdims=True)), []),
    ("one element a row", lambda x: tnp.sum(x, axis=-1) * 2.0 + 1.0, [(2, 1)]),
    ("a math call once a row", lambda x: tnp.tanh(tnp.sum(x, axis=-1) * 2.0), []),   # vectorized on its own
])
def test_phases_reading_other_rows_or_calling_math_once_a_row_do_not_join(name, f, plan):
    x = data((ROW_MIN, ROW_MIN))
    assert row_loops(f, x) == plan
    check(f, x)


def test_short_rows_argmax_and_full_reductions_keep_their_kernels():
    assert row_loops(softmax, data((6, ROW_MIN - 1))) == []
    assert row_loops(lambda x: x - tnp.argmax(x, axis=-1)[:, None], data((4, 100))) == []
    assert row_loops(lambda x: x - tnp.max(x), data((4, 100))) == []
    assert row_loops(lambda x: x - tnp.max(x, axis=0), data((100, 4))) == []
    check(lambda x: x - tnp.argmax(x, axis=-1)[:, None], data((4, 100)))


def test_rows_in_a_loop_body_and_over_threads():
    def body(i, x):
        return softmax(x) * 2.0 + i
    x = data((16, 128))
    got = tj.jit(lambda x: tj.lax.fori_loop(0, 3, body, x))(x)
    want = x
    for i in range(3):
        e = np.exp(want - want.max(axis=-1, keepdims=True))
        want = e / e.sum(axis=-1, keepdims=True) * 2.0 + i
    np.testing.assert_allclose(got, want, rtol=1e-5)
    big = data((512, 1024))             # long enough to run over the threads
    f = tj.jit(softmax)
    e = np.exp(big - big.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(f(big), e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-7)
    kinds = [k["kind"] for k in f.lower(big).compile().kernels()]
    assert kinds == ["loop"]


def test_division_by_a_power_of_two_is_recomputed_not_stored():
    def f(x, d):
        s = x / d
        return tnp.sum(s, axis=-1), s * 3.0
    x = data((4, 100))
    for d, stored in [(8.0, False), (0.25, False), (3.0, True)]:
        def g(x, d=d):
            return f(x, d)
        closed, _ = closed_ir(g, x)
        div = next(e for e in closed.ir.eqns if e.prim.name == "div")
        stores = {id(v) for group in plan_groups(closed.ir) for v in group.stores + group.row_values}
        assert (id(div.outvars[0]) in stores) == stored
        check(g, x)


def test_values_only_the_row_loop_reads_live_one_row_on_its_stack():
    def two(x):                   # the exponentials are an output too: they stay in memory
        e = tnp.exp(x - tnp.max(x, axis=-1, keepdims=True))
        return e / tnp.sum(e, axis=-1, keepdims=True), e

    def stored(f, x):
        closed, _ = closed_ir(f, x)
        (g,) = [g for g in plan_groups(closed.ir) if g.phases]
        return sorted(v.aval.shape for v in g.stores), sorted(v.aval.shape for v in g.row_values)

    x = data((6, 100))
    assert stored(softmax, x) == ([(6, 100)], [(6,), (6,), (6, 100)])     # max, sum, exp: one row each
    assert stored(two, x) == ([(6, 100), (6, 100)], [(6,), (6,)])
    check(two, x)
    long_rows = data((3, ROW_BYTES // 4 + 16))     # a row of exponentials larger than the stack's share
    assert stored(softmax, long_rows)[0] == [long_rows.shape, long_rows.shape]
    check(softmax, long_rows)


def test_a_stored_value_takes_the_memory_of_scores_read_before_it():
    def scores_softmax(a, b):          # the softmax written over the scores it reads
        return softmax(a @ b) @ b.T

    def scores_again(a, b):            # the writing phase reads the scores too: they keep their memory
        s = a @ b
        return (softmax(s) + s) @ b.T

    def scores_reversed(a, b):         # the scores read in another row: no row loop over them, no sharing
        s = a @ b
        return (s - tnp.max(s, axis=-1, keepdims=True)[::-1]) @ b.T

    a, b = data((40, 16)), data((16, 96), seed=1)
    row = 40 * 96 * 4
    for f, shared in [(scores_softmax, True), (scores_again, False), (scores_reversed, False)]:
        closed, _ = closed_ir(f, a, b)
        overwrites = [g.overwrites for g in plan_groups(closed.ir) if g.phases]
        assert bool(overwrites and overwrites[0]) == shared
        arena = tj.jit(f).lower(a, b).compile().memory_analysis().temp_size_in_bytes
        assert (arena == row) == shared and arena >= row
        check(f, a, b, rtol=1e-4)


def test_only_a_phase_calling_the_library_in_a_chain_carries_several_vectors():
    """Interleaved vectors are for reductions (their accumulators) and for loops whose own body calls the vector
    math library in a chain, or once outside a row loop over TINY_LOOP elements or more (kernels.LIBRARY_INTERLEAVE):
    softmax's max phase carries its reduction's 4, its exp-sum phase one (one call in a row loop) and its division
    phase one (it carried the library's 4 before: 4x the code LLVM compiles, for a loop bound by its divisions);
    with exp(exp(...)) the exp-sum phase carries LIBRARY_INTERLEAVE."""
    import re

    from tracejit.backend.kernels import LIBRARY_INTERLEAVE

    def interleaving(f, x):
        text = tj.jit(f).lower(x)._entry.executable.llvm_text
        hints = dict(re.findall(r"^(!\d+) = !\{!\"llvm\.loop\.interleave\.count\", i32 (\d+)\}", text, re.MULTILINE))
        nodes = dict(re.findall(r"^(!\d+) = distinct !\{!\d+, (.*)\}", text, re.MULTILINE))
        return [next((int(hints[op]) for op in nodes[node].split(", ") if op in hints), 1)
                for node in re.findall(r"!llvm\.loop (!\d+)", text)]

    def chained(x):
        e = tnp.exp(tnp.exp(x - tnp.max(x, axis=-1, keepdims=True)))
        return e / tnp.sum(e, axis=-1, keepdims=True)
    x = data((64, 768))
    assert interleaving(softmax, x) == [4, 1, 1]
    assert interleaving(chained, x) == [4, LIBRARY_INTERLEAVE, 1]
    check(softmax, x)
    check(chained, x * 0.1)
