"""Merged loop axes (loop_axes.collapse_axes): an elementwise group over (N, H, W, C) loops over the runs of axes
that every value is row-major or constant over, as one axis, so a short innermost axis vectorizes. Compiled
code against the NumPy reference interpreter (eval_ir) for each channel count and dtype, with broadcasts that
may merge and ones that may not, transposes, reductions and symbolic sizes; the loop extents chosen."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend import compile_ir, llvm
from tracejit.backend.fusion import MIN_LIBRARY_LOOP, plan_groups
from tracejit.core.api_util import flatten_args, trace_pytree
from tracejit.core.trace import eval_ir

SHAPE = (3, 4, 5)           # N, H, W; C varies


def data(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-9, 9, shape) if np.dtype(dtype).kind == "i" else rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return np.asarray(x).astype(dtype)


def closed_ir(f, *args):
    leaves, names, in_tree = flatten_args(f, args)
    return trace_pytree(f, leaves, names, in_tree)[0], leaves


def check(f, *args):
    closed, leaves = closed_ir(f, *args)
    check_closed(closed, leaves)


def check_closed(closed, leaves):
    want = eval_ir(closed, *leaves)
    for fuse in (True, False):
        got = compile_ir(closed, fuse=fuse).run(leaves)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            if w.dtype.kind in "fc":
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
            else:
                np.testing.assert_array_equal(g, w)


ELEMENTWISE = {
    "chain": lambda x, y, c, s, n: (x * 2 + 1) * y - x,
    "channel_vector": lambda x, y, c, s, n: x * c + y,
    "channel_keepdims": lambda x, y, c, s, n: x + c.reshape(1, 1, 1, -1) * y,
    "scalar": lambda x, y, c, s, n: x * s + 3,
    "per_image": lambda x, y, c, s, n: x * n + y,
    "transpose_hw": lambda x, y, c, s, n: x + tnp.transpose(y, (0, 2, 1, 3)).reshape(x.shape) * 2,
    "transpose_wc": lambda x, y, c, s, n: x * tnp.swapaxes(tnp.swapaxes(y, 2, 3), 2, 3) + c,
    "two_outputs": lambda x, y, c, s, n: (x + y, x * n - c),
}


def plan(closed):
    """The loop nests of an IR as plan_groups makes them: extents, tiled axis, unrolled axes and equations."""
    return [(g.extents, g.tiled, g.unrolled, len(g.eqns)) for g in plan_groups(closed.ir)]


def check_each_in_one_program(f, cases):
    """check(f, *args) for each args of cases, all compiled as one program (a compile per case took most of the
    file's time; more than a few cases in one module compile slower again): its outputs read separate inputs, so
    plan_groups gives it each case's loop nests unchanged, which this checks first."""
    closed, leaves = closed_ir(lambda cases: [f(*args) for args in cases], cases)
    alone = [nest for args in cases for nest in plan(closed_ir(f, *args)[0])]
    assert sorted(plan(closed), key=repr) == sorted(alone, key=repr)
    check_closed(closed, leaves)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.complex64])
@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_elementwise_matches_reference(name, dtype):
    """Each channel count: unrolled (up to 8), scalar (15), vectorized."""
    cases = []
    for channels in (1, 3, 6, 8, 15, 17):
        shape = SHAPE + (channels,)
        cases.append((data(dtype, shape, 0), data(dtype, shape, 1), data(dtype, (channels,), 2), data(dtype, (), 3),
                      data(dtype, (shape[0], 1, 1, 1), 4)))
    check_each_in_one_program(ELEMENTWISE[name], cases)


REDUCTIONS = {
    "over_channels": lambda x: x - x.sum(axis=-1, keepdims=True),
    "over_space": lambda x: x - x.mean(axis=(1, 2), keepdims=True),
    "space_sum": lambda x: (x * 2 + 1).sum(axis=(1, 2)),
    "all": lambda x: (x * x).sum(),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reductions_match_reference(name, dtype):
    """Each channel count."""
    check_each_in_one_program(REDUCTIONS[name], [(data(dtype, SHAPE + (c,), 0),) for c in (1, 3, 6, 16, 17)])


def extents(f, *args):
    closed, _ = closed_ir(f, *args)
    return [g.extents for g in plan_groups(closed.ir)]


def test_extents_merge_what_every_value_allows():
    x = np.ones((8, 24, 24, 6), np.float32)
    c, n = np.ones(6, np.float32), np.ones((8, 1, 1, 1), np.float32)
    whole = [(None, None, None, 8 * 24 * 24 * 6)]      # one loop, which threads split
    assert extents(lambda x: tnp.maximum(x * 2 + 1, 0), x) == whole
    assert extents(lambda x: tnp.zeros_like(x) + 0.5, x) == whole
    # a per-image value varies along N only: N does not merge with the rest
    assert extents(lambda x, n: x * n + 1, x, n) == [(8, None, None, 24 * 24 * 6)]
    # a channel vector varies along C only: N, H and W merge, W and C do not
    assert extents(lambda x, c: tnp.maximum(x + c, 0), x, c) == [(None, None, 8 * 24 * 24, 6)]
    # a transpose of H and W reads elsewhere than the merged element: nothing merges with them
    assert extents(lambda x: x + tnp.transpose(x, (0, 2, 1, 3)), x) == [(8, 24, 24, 6)]
    # reductions keep their loops
    assert extents(lambda x: x.sum(axis=(1, 2)), x) == [(8, 24, 24, 6)]
    # size-1 axes have index 0, but the outermost keeps its loop
    assert extents(lambda x: x * 2, np.ones((1, 5, 1, 3), np.float32)) == [(1, None, None, 15)]


def test_short_innermost_axis_vectorizes():
    x = np.random.default_rng(0).standard_normal((32, 24, 24, 6)).astype(np.float32)
    relu = tj.jit(lambda x: tnp.maximum(x * 2 + 1, 0))
    assert [k["vectorized"] for k in relu.lower(x).compile().kernels()] == [True]
    np.testing.assert_allclose(relu(x), np.maximum(x * 2 + 1, 0), rtol=1e-6)
    fill = tj.jit(tj.grad(lambda y: (y * 0.5).sum()))
    assert [k["vectorized"] for k in fill.lower(x).compile().kernels() if k["kind"] == "loop"] == [True]
    np.testing.assert_array_equal(fill(x), np.full_like(x, 0.5))


@pytest.mark.parametrize("channels", [1, 6, 17])
def test_symbolic_sizes_match_reference(channels):
    rng = np.random.default_rng(0)
    f = tj.jit(lambda x, c: tnp.maximum(x * c + 1, 0) * 2, dynamic_dims={"x": {0: "n"}}, cache=False)
    c = rng.standard_normal(channels)
    for n in (1, 3, 7):
        x = rng.standard_normal((n, 4, 5, channels))
        np.testing.assert_allclose(f(x, c), np.maximum(x * c + 1, 0) * 2, rtol=1e-12)
    assert f.misses == 1


def tiled(f, *args):
    closed, _ = closed_ir(f, *args)
    return [g.tiled for g in plan_groups(closed.ir)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.complex64])
def test_transposed_reads_run_in_tiles(dtype):
    """A loop nest that reads a value transposed runs over TILE x TILE tiles of the axis that indexes the value's
    last axis and its own last one (loop_axes.transposed_read): sizes that are no multiple of TILE, the third axis
    in between, broadcasts, two outputs, and a loop long enough to split over the threads. Values read in their
    own order, and short axes, keep plain loops."""
    from tracejit.backend.loop_axes import TILE
    n = TILE * 3 + 5
    x, y, v = data(dtype, (n, n + 2), 1), data(dtype, (n + 2, n), 2), data(dtype, (n + 2,), 3)
    cube = data(dtype, (TILE + 1, 5, TILE * 2 + 3), 4)
    big = data(dtype, (700, 900), 5)
    cases = [(lambda x: x.T + 1, (x,), 0), (lambda x, y: x * y.T - x, (x, y), 0),
             (lambda x, v: (x.T * v[:, None], x.T + 2), (x, v), 0),
             (lambda c: tnp.transpose(c, (2, 1, 0)) * 2, (cube,), 0), (lambda c: tnp.transpose(c, (1, 2, 0)) + 1, (cube,), 1),
             (lambda b: b.T - 1, (big,), 0),
             (lambda x, y: x + y.reshape(n, n + 2), (x, y), None), (lambda x: x[:, :3].T * 2, (x,), None)]
    for f, args, axis in cases:
        assert tiled(f, *args) == [axis] * len(tiled(f, *args)), (f, tiled(f, *args))
        check(f, *args)


def test_large_values_read_transposed_by_a_reduction_are_copied_in_tiles():
    """A reduction's loop nest does not read a large value transposed (fusion._transposes_into_reduction): the
    transpose is a loop nest of its own, in tiles, and the reductions read its result in memory order. A small
    value, and an elementwise loop nest, still read it in place."""
    from tracejit.backend.fusion import TRANSPOSED_BYTES

    def softmax_of_transpose(x):
        e = tnp.exp(x.T - x.T.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    side = int((TRANSPOSED_BYTES // 4) ** 0.5) + 3
    big, small = data(np.float32, (side, side + 1), 8), data(np.float32, (side // 4, side // 4 + 1), 9)
    for x, copied in ((big, True), (small, False)):
        closed, _ = closed_ir(softmax_of_transpose, x)
        roots = [g.root.prim.name for g in plan_groups(closed.ir)]
        assert ("transpose" in roots) == copied, roots
        check(softmax_of_transpose, x)
    closed, _ = closed_ir(lambda x: x.T * 2 + 1, big)
    assert [g.root.prim.name for g in plan_groups(closed.ir)] == ["add"]


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.complex64, np.bool_])
def test_concatenates_run_their_innermost_loop_in_segments(dtype):
    """A loop nest whose innermost axis is a concatenate's runs it in one segment per operand (IndexMap's splits),
    each reading its operand alone: concatenates, rolls and stacks along the last axis, long enough to split over
    the threads, with a member after them, operands of one element, and more operands than MAX_SEGMENTS (one
    loop); against the reference interpreter, with and without fusion."""
    from tracejit.backend.loops import MAX_SEGMENTS
    a, b = data(dtype, (37, 53), 10), data(dtype, (37, 11), 11)
    long = data(dtype, (300_001,), 12)
    cases = [(lambda a, b: tnp.concatenate([a, b], 1), (a, b)), (lambda a, b: tnp.hstack([b, a, b]) == b[0, 0], (a, b)),
             (lambda v: tnp.roll(v, 3), (long,)), (lambda v: tnp.roll(v, -299_999) * 2, (long,)),
             (lambda a: tnp.roll(a, 5, axis=1), (a,)), (lambda v: tnp.concatenate([v[:1], v, v[-3:]]), (long,)),
             (lambda a: tnp.concatenate([a[:, i:i + 1] for i in range(MAX_SEGMENTS + 3)], 1), (a,)),
             (lambda a, b: tnp.concatenate([a, b], 1).sum(1), (a, b)),
             (lambda c: tnp.vstack([tnp.vstack([c, c[::-1]]) == c[0], c != c[0]]), (a[:1, :1],))]   # segments straddle the inner one
    for f, args in cases:
        check(f, *args)


def test_concatenates_of_whole_blocks_are_copies_along_any_axis():
    """A concatenate or stack whose operands are buffers, reshapes or expand_dims of them, or unit-stride windows
    of them whole in every axis but the first and the concatenated one, copies each operand's contiguous blocks
    (one memcpy per row and operand: no select, no gather, no loop per operand; 100 operands along axis 1 took
    4.9 ms a call through selects and 2.6 s to compile as 100 loops); other windows take the loops. Against the
    reference interpreter, with and without fusion."""
    rng = np.random.default_rng(9)
    m, x = rng.standard_normal((1000, 100)), rng.standard_normal((4, 5, 60)).astype(np.float32)
    parts = [rng.standard_normal((10, 100)) for _ in range(100)]
    copied = [(lambda m: tnp.concatenate([m[i:i + 10] for i in range(0, 1000, 10)], axis=1), (m,)),
              (lambda *ps: tnp.concatenate(ps, axis=1), parts), (lambda *ps: tnp.stack(ps, axis=1), parts),
              (lambda *ps: tnp.stack(ps, axis=2), parts[:12]),
              (lambda x: tnp.concatenate([x[1:3, :, 2:50], x[:2, :, :30], x[2:, :, 40:]], axis=2), (x,)),
              (lambda m: tnp.concatenate([m[995:], m[:3], m[10:12]]), (m,))]
    for f, args in copied:
        check(f, *args)
        text = tj.jit(f).lower(*args).as_llvm()
        assert "llvm.memcpy" in text and "select" not in text and "gather" not in text, f
    check(lambda a, b: tnp.stack([a, b]), 1.5, -2.0)           # scalars, read through expand_dims
    check(lambda g, k, a, b: g.at[k].set(tnp.stack([a, b])), np.zeros((3, 2)), 1, 1.0, 2.0)
    windows_cut_in_a_middle_axis = lambda x: tnp.concatenate([x[:, 1:3, :], x[:, :2, :]], axis=2)
    check(windows_cut_in_a_middle_axis, x)
    assert "llvm.memcpy" not in tj.jit(windows_cut_in_a_middle_axis).lower(x).as_llvm()


def test_values_reshaped_into_an_output_are_stored_there_over_their_own_shape():
    """A reshape (or expand_dims) whose operand is computed only for it and which is an output is no copy: the
    operand's loop nest runs over the operand's shape and stores into the output's buffer, whose C order is the
    same (fusion._views; fused into the reshape, over the output's shape, tile and kron took 3x NumPy's time).
    Where the operand is an output too, or the reshaped value feeds another equation, the reshape keeps its copy.
    Against the reference interpreter, with and without fusion."""
    rng = np.random.default_rng(10)
    m, a, b = rng.standard_normal((40, 30)), rng.standard_normal(50), rng.standard_normal(60).astype(np.float32)
    rows = rng.uniform(0.5, 3.0, (5, 700)).astype(np.float32)
    viewed = [(lambda m: tnp.tile(m, (3, 2)), (m,)), (lambda m: tnp.kron(m[:7, :5], m[:4, :6]), (m,)),
              (lambda m: tnp.repeat(m, 3, axis=1), (m,)), (lambda a, b: (a[:, None] * b[None, :]).reshape(-1), (a, b)),
              (lambda m: tnp.exp(m).reshape(10, 4, 30), (m,)), (lambda b: tnp.expand_dims(b * 2, 0), (b,)),
              (lambda r: tnp.mean(tnp.arccosh(r), axis=1, keepdims=True), (rows,)),     # a row loop's phase
              (lambda r: (r - r.max(1, keepdims=True)).reshape(-1), (rows,))]
    for f, args in viewed:
        check(f, *args)
        kernels = tj.jit(f).lower(*args).compile().kernels()
        assert not any({"reshape", "expand_dims"} & set(k["ops"]) for k in kernels), kernels
    copied = [(lambda m: (tnp.exp(m), tnp.exp(m).reshape(-1)), (m,)),
              (lambda m: (tnp.exp(m).reshape(-1), tnp.exp(m).reshape(-1)[::2] + 1), (m,))]
    for f, args in copied:
        check(f, *args)


def test_scatters_into_a_new_array_update_the_output_in_place():
    """A scatter (a kernel that may write over its operand) of an array computed only for it, into an output:
    that array is computed in the output's buffer and updated there, neither stored apart nor copied (x.at[i].add
    on zeros, bincount: no arena for the zeros). Against the reference interpreter, with and without fusion."""
    rng = np.random.default_rng(11)
    n, i, x = 100_000, rng.integers(-5, 100_005, 50), rng.standard_normal(50)
    cases = [(lambda x, i: tnp.zeros(n).at[i].add(x), (x, i)), (lambda i: tnp.bincount(tnp.abs(i), length=n), (i,)),
             (lambda x, i: tnp.full(n, 2.0).at[i].max(x), (x, i))]
    for f, args in cases:
        check(f, *args)
        assert tj.jit(f).lower(*args).compile().memory_analysis().temp_size_in_bytes < n, f


def test_concatenates_of_many_small_operands_run_in_segments_of_linear_code():
    """Past MAX_SEGMENTS, a concatenate whose loop body is small still runs in segments (SEGMENTED_EQNS), each
    reading its own operand only (each read the operands before it too: 50 operands of 10 elements took 148 ms to
    compile), short ones unvectorized; the code grows linearly with the operands, and values are NumPy's."""
    rng = np.random.default_rng(8)
    sizes = {}
    for n in (12, 48):
        parts = [rng.standard_normal(10 + k % 3).astype(np.float32) for k in range(n)]
        f = tj.jit(lambda *xs: tnp.concatenate(xs) * 2.0)
        np.testing.assert_array_equal(f(*parts), np.concatenate(parts) * 2.0)
        text = f.lower(*parts).as_llvm()
        assert "select" not in text, "a chain of selects, not segments"
        sizes[n] = len(text)
    assert sizes[48] < 5 * sizes[12], sizes


@pytest.mark.parametrize("dtype", [np.int8, np.complex128])
def test_concatenates_along_the_first_axis_copy_their_operands(dtype):
    """A group that only concatenates buffers (or reshapes of them) along axis 0 copies each operand's rows with a
    memcpy in one loop over the operands (IndexMap's blocks), whatever their count: values are NumPy's for many
    small operands, empty ones, rows of several axes, raveled operands, a constant, one operand repeated, and
    operands long enough that the chunks the threads run cut through them; one fused with arithmetic keeps its
    loops."""
    small = [data(dtype, (3 + k % 4,), 20 + k) for k in range(60)]
    rows = (data(dtype, (5, 3, 2), 1), data(dtype, (0, 3, 2), 2), data(dtype, (7, 3, 2), 3))
    long = (data(dtype, (300_001,), 4), data(dtype, (200_003,), 5))
    const = data(dtype, (4,), 6)
    cases = [(lambda *xs: tnp.concatenate(xs), small), (lambda *xs: tnp.concatenate(xs), rows),
             (lambda *xs: tnp.concatenate(xs), long), (lambda a, b: tnp.concatenate([b, a, b, a]), long),
             (lambda a, b, c: tnp.concatenate([a.ravel(), b.reshape(-1), c.ravel(), tnp.asarray(const)]), rows)]
    for f, args in cases:
        np.testing.assert_array_equal(tj.jit(f)(*args), np.asarray(eval_ir(tj.make_ir(f)(*args), *args)[0]))
        assert "llvm.memcpy" in tj.jit(f).lower(*args).as_llvm()
    fused = tj.jit(lambda *xs: tnp.concatenate(xs) + xs[0][0])
    np.testing.assert_array_equal(fused(*small), np.concatenate(small) + small[0][0])
    assert "llvm.memcpy" not in fused.lower(*small).as_llvm()


def test_nested_rolls_compile_to_code_that_grows_linearly():
    """Each step of a 2-d Jacobi stencil reads the last one at five places (four rolls): fused whole, the loop body
    evaluated it 5**steps times (6 steps took 29 s to compile). fusion._evaluations caps the evaluations of a value
    in one loop body, so that the code grows with the steps; values as the reference interpreter's."""
    def jacobi(div, steps):
        p = tnp.zeros(div.shape)
        for _ in range(steps):
            p = (div + tnp.roll(p, 1, axis=0) + tnp.roll(p, -1, axis=0) + tnp.roll(p, 1, axis=1)
                 + tnp.roll(p, -1, axis=1)) / 4.0
        return p

    div = data(np.float64, (32, 32), 13)
    sizes = {}
    for steps in (3, 6):
        check(lambda d, steps=steps: jacobi(d, steps), div)
        sizes[steps] = len(tj.jit(lambda d, steps=steps: jacobi(d, steps)).lower(div).as_llvm())
    assert sizes[6] < 3 * sizes[3], sizes


def test_reshapes_read_through_unsigned_index_arithmetic():
    """A reshape's read (rules.Emitter.reindex) divides the flat index without signs and leaves the leading axis
    unwrapped: repeat (a broadcast reshaped), splits and merges of axes, odd and power-of-two sizes."""
    x, y = data(np.float32, (37, 6), 6), data(np.int32, (5, 8, 9), 7)
    check(lambda x: tnp.repeat(x, 4), x[:, 0])
    check(lambda x: tnp.repeat(x, 3, axis=0) * 2, x)
    check(lambda x: tnp.tile(x, (2, 3)) + 1, x)
    check(lambda y: y.reshape(40, 9) * 3, y)
    check(lambda y: y.reshape(5, 2, 36) - y.reshape(10, 36)[::-1].reshape(5, 2, 36), y)
    check(lambda y: tnp.transpose(y, (1, 0, 2)).reshape(-1) + 1, y)


def test_short_inner_axes_that_cannot_merge_are_written_out_so_the_loop_around_them_vectorizes():
    """x[:, None] * c over (n, 3): c varies along the short axis only, so the axes cannot merge; the inner loop
    of 3 is written out three times and the loop over n is the one that vectorizes (fusion.unrolled_axes).
    Inner loops of up to UNROLLED elements in all unroll; longer ones keep their loops, and so do loops that
    call the math library from MIN_LIBRARY_LOOP elements on (one vector call a row does better; a shorter
    row's loop would stay scalar). Where the unrolled loop reads interleaved values, LLVM calls the library on
    vectors of 3 x 16 lanes, which the library has too (libcalls.library_calls)."""
    x = np.random.default_rng(0).standard_normal((1000,)).astype(np.float32)
    for shape, unrolled in [((3,), (1,)), ((2, 3), (2,)), ((8,), (1,)), ((9,), ()), ((3, 5), ())]:
        c = np.arange(1.0, 1.0 + np.prod(shape), dtype=np.float32).reshape(shape)
        for f, calls in [(lambda x, c: x.reshape((-1,) + (1,) * c.ndim) * c + 1, False),
                         (lambda x, c: tnp.exp(x.reshape((-1,) + (1,) * c.ndim) * c), True)]:
            closed, _ = closed_ir(f, x, c)
            (g,) = plan_groups(closed.ir)
            written_out = unrolled if not calls or np.prod(shape) < MIN_LIBRARY_LOOP else ()
            assert g.unrolled == written_out, shape
            check(f, x, c)
            vectorized = [k["vectorized"] for k in tj.jit(f).lower(x, c).compile().kernels()]
            assert vectorized == [bool(written_out) or calls and np.prod(shape) >= MIN_LIBRARY_LOOP], shape
    points, c = np.random.default_rng(1).standard_normal((100_000, 3)).astype(np.float32), np.float32([1, 2, 3])
    exp = tj.jit(lambda p, c: tnp.exp(p) * c)
    lanes = 3 * llvm.vector_bytes() // 4      # one call on 3 vectors' lanes (48 with AVX-512), not 48 calls of expf
    assert f"@tj_exp_float_v{lanes}(" in exp.lower(points, c).as_llvm()
    np.testing.assert_allclose(exp(points, c), np.exp(points) * c, rtol=1e-6)


SHORT_REDUCTIONS = {
    "sum f32 (a float64 accumulator)": (lambda x: (x * 0.5 + 1).sum(-1), np.float32),
    "norm": (lambda x: tnp.linalg.norm(x, axis=-1), np.float64),
    "max": (lambda x: x.max(-1), np.float64),
    "argmax": (lambda x: tnp.argmax(x, axis=-1), np.float32),
    "prod int": (lambda x: x.prod(-1), np.int32),
    "mean f16": (lambda x: x.mean(-1), np.float16),
    "sum c64": (lambda x: x.sum(-1), np.complex64),
}
TWO_AXES = (lambda x: (x[:, :, None] * np.float32([1, 2])).sum((1, 2)), np.float32)   # n x 2 elements a row


@pytest.mark.parametrize("name", [*SHORT_REDUCTIONS, "two axes"])
def test_short_reduced_axes_are_written_out_so_the_loop_over_the_kept_axes_vectorizes(name, monkeypatch):
    """A reduction over innermost axes of up to UNROLLED elements in all (the 3 channels of a pixel, the 3
    coordinates of a point) is written out in the body of the loop over the kept axes, which then vectorizes
    (fusion.unrolled_reduction), with the bits of the loop it replaces (its order and accumulator types);
    longer reduced axes keep their loop."""
    f, dtype = SHORT_REDUCTIONS[name] if name != "two axes" else TWO_AXES
    for n in (2, 3, 4, 8, 9):
        x = data(dtype, (1000, n), 0)
        short = n * (2 if name == "two axes" else 1) <= 8
        closed, leaves = tj.make_ir(f, optimize=True)(x), [x]    # (argmax: a max and a min of positions)
        unrolled = [bool(g.unrolled) for g in plan_groups(closed.ir) if g.root.params.get("axes")]
        assert unrolled and set(unrolled) == {short}, n
        check_closed(closed, leaves)
        compiled = compile_ir(closed)
        assert set(reductions_vectorized(compiled)) == {short}, n
        with monkeypatch.context() as m:
            m.setattr("tracejit.backend.fusion.UNROLLED", 0)
            looped = compile_ir(closed)
        assert set(reductions_vectorized(looped)) == {False}
        for got, want in zip(compiled.run(leaves), looped.run(leaves)):
            np.testing.assert_array_equal(got, want)


def reductions_vectorized(compiled):
    return [k["vectorized"] for k in compiled.kernels() if any(op.startswith("reduce") for op in k["ops"])]


COLUMN_REDUCTIONS = {
    "mean f32": (lambda x: x.mean(0), np.float32, False),
    "sum f64": (lambda x: x.sum(0), np.float64, False),
    "max f32": (lambda x: x.max(0), np.float32, True),
    "sum int32": (lambda x: x.sum(0), np.int32, True),
    "any": (lambda x: (x > 0).any(0), np.float64, True),
    "sum over two axes": (lambda x: x.reshape(10, 100, -1).sum((0, 1)), np.float32, False),
}


@pytest.mark.parametrize("name", list(COLUMN_REDUCTIONS))
def test_short_kept_axes_of_a_column_reduction_are_written_out_so_the_loop_over_the_rows_vectorizes(name,
                                                                                                   monkeypatch):
    """A reduction in memory order (a column sum) whose kept axes after the reduced ones are short (the 3
    coordinates of points) writes them out, so that the innermost loop runs over the rows and vectorizes
    (fusion.unrolled_reduction): the same values as the reference interpreter, and where the order does not
    round (max, integers, any), the bits of the loop nest it replaces."""
    f, dtype, exact = COLUMN_REDUCTIONS[name]
    for n in (2, 3, 8, 9):
        x = data(dtype, (1000, n), 0)
        x[::7] = -x[::7]
        closed, leaves = tj.make_ir(f, optimize=True)(x), [x]
        unrolled = [g.unrolled for g in plan_groups(closed.ir) if g.root.params.get("axes")]
        assert unrolled == [(x.ndim - 1 + ("two" in name),) if n <= 8 else ()], n     # the last axis
        compiled = compile_ir(closed)
        for got, want in zip(compiled.run(leaves), eval_ir(closed, *leaves)):   # float32 sums of 1000 terms
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
        assert reductions_vectorized(compiled) == [n <= 8], n
        if exact:
            with monkeypatch.context() as m:
                m.setattr("tracejit.backend.fusion.UNROLLED", 0)
                looped = compile_ir(closed)
            for got, want in zip(compiled.run(leaves), looped.run(leaves)):
                np.testing.assert_array_equal(got, want)
