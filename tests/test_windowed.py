# ruff: noqa: B023 -- the functions made in loops are called within their iteration
"""Windowed reductions, pooling and its gradient at ties, cumulative reductions, associative_scan, sort with several
operands, top_k, and the batching of dynamic slices (issue 19), against JAX and NumPy."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.test_util import check_grads


def ties(shape, seed):
    """Values on a coarse grid: many windows hold several equal maxima (and -0.0 next to 0.0)."""
    return np.round(np.random.default_rng(seed).normal(size=shape))


# window, strides, padding, base dilation, window dilation
WINDOWS = [((1, 2, 2, 1), (1, 2, 2, 1), "VALID", None, None),
           ((1, 3, 3, 1), (1, 2, 2, 1), "SAME", None, None),
           ((3, 2), (2, 1), ((2, 1), (1, 1)), None, None),
           ((2, 3), (1, 2), ((1, 2), (0, -1)), (2, 1), (1, 2))]


@pytest.mark.parametrize("window", WINDOWS, ids=range(len(WINDOWS)))
def test_reduce_window_against_jax(jax64, window):
    """Sum, max and min: values; gradients against JAX's (ties: the first extremum of a window gets it, as JAX's
    select_and_scatter_add does); forward mode against reverse mode; compiled against eager; vmap."""
    dims, strides, padding, base, wdil = window
    x = ties((2, 6, 7, 3) if len(dims) == 4 else (5, 7), seed=len(padding))
    ct = None
    for ours, init, theirs in ((lax.add, 0.0, jax64.lax.add), (lax.max, -np.inf, jax64.lax.max),
                               (lax.min, np.inf, jax64.lax.min)):
        def f(x):
            return lax.reduce_window(x, init, ours, dims, strides, padding, base, wdil)

        def g(x):
            return jax64.lax.reduce_window(x, init, theirs, dims, strides, padding, base, wdil)

        out = f(x)
        np.testing.assert_array_equal(out, g(x))
        np.testing.assert_array_equal(tj.jit(f)(x), out)
        ct = np.random.default_rng(7).normal(size=out.shape) if ct is None else ct
        grad = tj.jit(tj.grad(lambda x: tnp.sum(f(x) * ct)))(x)
        if ours is lax.add or wdil is None:      # JAX has no max-pooling VJP with window dilation
            # the same elements get the gradient; overlapping windows add up in another order
            np.testing.assert_allclose(grad, jax64.grad(lambda x: (g(x) * ct).sum())(x), rtol=1e-15, atol=1e-15)
        np.testing.assert_array_equal(tj.jacfwd(f)(x), tj.jacrev(f)(x))
        xs = np.stack([x, -x, x * 2])
        np.testing.assert_allclose(tj.vmap(tj.grad(lambda x: tnp.sum(f(x) * ct)))(xs),
                                   np.stack([tj.grad(lambda x: tnp.sum(f(x) * ct))(v) for v in xs]), rtol=1e-15)


def test_general_computation_and_pytrees(jax64):
    x = np.random.default_rng(1).normal(size=(6, 5))
    args = ((2, 2), (1, 2), ((1, 0), (1, 1)))
    prod = lambda x: lax.reduce_window(x, 1.0, lax.mul, *args)
    np.testing.assert_allclose(prod(x), jax64.lax.reduce_window(x, 1.0, jax64.lax.mul, *args), rtol=1e-14)
    np.testing.assert_allclose(tj.jit(prod)(x), prod(x), rtol=1e-14)
    check_grads(prod, (x,), order=2)
    # a non-identity init enters every window; a pair of operands (value, index) reduced together
    np.testing.assert_allclose(lax.reduce_window(x, 0.5, lax.max, *args),
                               jax64.lax.reduce_window(x, 0.5, jax64.lax.max, *args))
    pair = (x, np.broadcast_to(np.arange(5.0), x.shape))

    def argmax_step(a, b):
        take = b[0] > a[0]
        return tnp.where(take, b[0], a[0]), tnp.where(take, b[1], a[1])

    got = lax.reduce_window(pair, (-np.inf, -1.0), argmax_step, *args)
    want = jax64.lax.reduce_window(pair, (-np.inf, -1.0), lambda a, b: tuple(jax64.numpy.where(
        b[0] > a[0], b[k], a[k]) for k in range(2)), *args)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_pooling_shorthands_fuse_with_the_activation():
    x = np.random.default_rng(2).normal(size=(4, 8, 6, 3)).astype(np.float32)
    relu_pool = tj.jit(lambda x: lax.max_pool(tnp.maximum(x, 0.0), (2, 2), (2, 2)))
    want = np.maximum(x, 0).reshape(4, 4, 2, 3, 2, 3).max(axis=(2, 4))
    np.testing.assert_array_equal(relu_pool(x), want)
    text = tj.jit(lambda x: lax.max_pool(tnp.maximum(x, 0.0), (2, 2), (2, 2))).lower(x).as_llvm()
    assert text.count("define void @step") == 1         # relu and pooling: one loop nest
    np.testing.assert_allclose(lax.avg_pool(x, (2, 3), (2, 3)), x.reshape(4, 4, 2, 2, 3, 3).mean(axis=(2, 4)),
                               rtol=1e-6)
    padded = lax.avg_pool(x[0], (3, 3), padding="SAME", count_include_pad=False)
    np.testing.assert_allclose(padded[0, 0], x[0, :2, :2].mean(axis=(0, 1)), rtol=1e-6)
    np.testing.assert_allclose(lax.avg_pool(x[0], (3, 3), padding="SAME")[0, 0], x[0, :2, :2].sum((0, 1)) / 9,
                               rtol=1e-6)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
def test_cumulative_against_jax(jax64, name):
    """Values and gradients (ties of cummax/cummin split as JAX's associative_scan splits them), reverse, compiled,
    vmap over another axis, second derivatives along a middle axis."""
    ours, theirs = getattr(lax, name), getattr(jax64.lax, name)
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 0.0, 5.0])
    w = np.arange(1.0, 8.0)
    for reverse in (False, True):
        np.testing.assert_allclose(ours(x, reverse=reverse), theirs(x, reverse=reverse), rtol=1e-14)
        np.testing.assert_allclose(tj.jit(lambda x: ours(x, reverse=reverse))(x), theirs(x, reverse=reverse),
                                   rtol=1e-14)
        np.testing.assert_allclose(tj.grad(lambda x: tnp.sum(ours(x, reverse=reverse) * w))(x),
                                   jax64.grad(lambda x: (theirs(x, reverse=reverse) * w).sum())(x), rtol=1e-14)
    y = np.random.default_rng(3).normal(size=(2, 5, 3))
    np.testing.assert_allclose(tj.vmap(lambda y: ours(y, axis=0), in_axes=2)(y),
                               jax64.vmap(lambda y: theirs(y, axis=0), in_axes=2)(y), rtol=1e-12)
    check_grads(lambda y: ours(y, axis=1, reverse=True), (y[0],), order=2, modes=("rev",))


def test_cumulative_edges_as_jax(jax64):
    np.testing.assert_array_equal(tj.grad(lambda x: tnp.sum(lax.cumlogsumexp(x)))(np.array([-np.inf, 1.0, -np.inf])),
                                  [1.0, 2.0, 0.0])
    np.testing.assert_array_equal(tj.grad(lambda x: tnp.sum(lax.cumprod(x)))(np.array([0.0, 1.0, 2.0, 0.0, 3.0])),
                                  [4.0, 0.0, 0.0, 0.0, 0.0])
    i = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]], np.int32)
    for name in ("cumprod", "cummax", "cummin"):
        np.testing.assert_array_equal(tj.jit(lambda i: getattr(lax, name)(i, axis=1))(i),
                                      getattr(jax64.lax, name)(i, axis=1))
    assert lax.associative_scan(lambda a, b: a + b, np.arange(5), reverse=True).tolist() == [10, 10, 9, 7, 4]
    pairs = lax.associative_scan(lambda a, b: (a[0] * b[0], a[1] * b[0] + b[1]), (np.full(4, 0.5), np.ones(4)))
    np.testing.assert_allclose(pairs[1], [1.0, 1.5, 1.75, 1.875])


def test_sort_with_several_operands_and_top_k(jax64):
    y = np.array([0.0, -0.0, np.nan, 1.0, -np.inf, 0.0, 3.0, 3.0])
    np.testing.assert_array_equal(np.signbit(lax.sort(y)), np.signbit(jax64.lax.sort(y)))
    keys, second = np.array([2, 1, 2, 1, 0]), np.array([5.0, 4.0, 3.0, 4.0, 1.0])
    for k in (1, 2):
        got = tj.jit(lambda a, b, c: lax.sort((a, b, c), num_keys=k))(keys, second, np.arange(5))
        for a, b in zip(got, jax64.lax.sort((keys, second, np.arange(5)), num_keys=k)):
            np.testing.assert_array_equal(a, b)
    grid = np.random.default_rng(4).integers(0, 4, size=(3, 6)).astype(np.float64)
    np.testing.assert_array_equal(tj.vmap(lambda a, b: lax.sort_key_val(a, b)[1])(grid, -grid),
                                  jax64.vmap(lambda a, b: jax64.lax.sort_key_val(a, b)[1])(grid, -grid))
    for values in (y, np.array([1.0, 3.0, 3.0, 2.0, 3.0]), grid):
        got, want = tj.jit(lambda v: lax.top_k(v, 3))(values), jax64.lax.top_k(values, 3)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert got[1].dtype == np.int32
    np.testing.assert_array_equal(tj.grad(lambda v: tnp.sum(lax.top_k(v, 3)[0]))(np.array([1.0, 3.0, 3.0, 2.0, 3.0])),
                                  [0.0, 1.0, 1.0, 0.0, 1.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.uint16, np.bool_, "bfloat16"])
def test_top_k_selects_without_sorting_the_axis_as_jax(jax64, dtype):
    """lax.top_k (the top_k primitive: a partition of packed keys for 32 bits or fewer, a stable sort otherwise)
    against JAX's: ties in order of position, NaN first, every k from 0 to n, over batches, under vmap and jit."""
    import ml_dtypes
    dtype = np.dtype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    raw = np.random.default_rng(9).integers(-3, 4, (4, 9)).astype(np.float64)
    if dtype.kind == "f" or dtype.name == "bfloat16":
        raw[0, :3], raw[1, 2], raw[2, ::4] = np.nan, -0.0, np.inf
    x = raw.astype(dtype) if dtype.kind != "u" else np.abs(raw).astype(dtype)
    ks = range(10)      # (every k in one program, compiled once by each)
    every_k = tj.jit(lambda v: [lax.top_k(v, k) for k in ks])(x)
    for got, want in zip(every_k, jax64.jit(lambda v: [jax64.lax.top_k(v, k) for k in ks])(x), strict=True):
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0].astype(np.float64), np.asarray(want[0]).astype(np.float64))
    np.testing.assert_array_equal(tj.vmap(lambda v: lax.top_k(v, 3)[1])(x), jax64.vmap(lambda v: jax64.lax.top_k(v, 3)[1])(x))
    from tracejit.primitives.top_k import GROUP  # long rows keep the candidates first: rows of ties, NaNs
    wide = np.random.default_rng(4).integers(-3, 4, (4, 700)).astype(np.float64)
    wide[0] = 2.0
    if dtype.kind == "f" or dtype.name == "bfloat16":
        wide[1, ::7], wide[2, 5], wide[3, -30:] = np.nan, -0.0, np.inf
    wide = wide.astype(dtype) if dtype.kind != "u" else np.abs(wide).astype(dtype)
    ks = (1, 5, 700 // GROUP)
    wants = jax64.jit(lambda v: [jax64.lax.top_k(v, j) for j in ks])(wide)
    for k, want, compiled in zip(ks, wants, tj.jit(lambda v: [lax.top_k(v, j) for j in ks])(wide), strict=True):
        for got in (lax.top_k(wide, k), compiled):
            np.testing.assert_array_equal(got[1], want[1])
            np.testing.assert_array_equal(np.asarray(got[0]).astype(np.float64), np.asarray(want[0]).astype(np.float64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint32, np.bool_])
def test_top_k_kernel_orders_as_jax(jax64, dtype):
    """The compiled selection (k up to KERNEL_K; larger k the impl) on rows long enough for its first pass, in
    random, ascending and descending order, with ties and rows that are one value; floats with -0.0 and 0.0, NaN and
    -NaN (XLA's total order); against JAX's top_k, and eager calls (the impl) against the same."""
    from tracejit.primitives.top_k import KERNEL_K
    rng = np.random.default_rng(11)
    n = 3000
    rows = [rng.normal(size=n) * 100, np.arange(n), -np.arange(n), np.round(rng.normal(size=n)), np.zeros(n),
            np.r_[np.full(KERNEL_K // 2, 1e4), np.arange(n - KERNEL_K // 2)]]
    x = np.stack(rows)
    if dtype == np.bool_:
        x = x > 0
    elif np.dtype(dtype).kind == "f":
        x = x.astype(dtype)
        x[3, ::13], x[3, 5::17], x[0, 7::19] = -0.0, np.nan, -np.nan
    else:
        x = np.abs(x).astype(dtype) if np.dtype(dtype).kind == "u" else x.astype(dtype)
    ks = (1, 2, 7, KERNEL_K, KERNEL_K + 1)
    wants = jax64.jit(lambda v: [jax64.lax.top_k(v, k) for k in ks])(x)
    for k, want, got in zip(ks, wants, tj.jit(lambda v: [lax.top_k(v, j) for j in ks])(x), strict=True):
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"k={k}")
        np.testing.assert_array_equal(lax.top_k(x, k)[1], want[1], err_msg=f"eager, k={k}")
        np.testing.assert_array_equal(np.signbit(got[0]), np.signbit(np.asarray(want[0])))


def test_batched_dynamic_slices_against_jax(jax64):
    """Batched start indices (out of range ones clamped), batched operands and updates, and their gradients."""
    x = np.random.default_rng(5).normal(size=(4, 6, 5))
    starts = np.array([4, 0, 3, 9])
    update = np.random.default_rng(6).normal(size=(4, 2, 3))

    def ours(x, i, u):
        return lax.dynamic_update_slice(x, u * lax.dynamic_slice(x, (i, 1), (2, 3)), (1, i))

    def theirs(x, i, u):
        return jax64.lax.dynamic_update_slice(x, u * jax64.lax.dynamic_slice(x, (i, 1), (2, 3)), (1, i))

    for axes in ((0, 0, 0), (None, 0, None), (0, 0, None), (2, 0, 1)):
        args = (np.moveaxis(x, 0, axes[0]) if axes[0] else x[0] if axes[0] is None else x, starts,
                np.moveaxis(update, 0, axes[2]) if axes[2] else update[0] if axes[2] is None else update)
        np.testing.assert_array_equal(tj.jit(tj.vmap(ours, in_axes=axes))(*args),
                                      jax64.vmap(theirs, in_axes=axes)(*args))
        grad = tj.vmap(tj.grad(lambda x, i, u: tnp.sum(ours(x, i, u) ** 2)), in_axes=axes)(*args)
        want = jax64.vmap(jax64.grad(lambda x, i, u: (theirs(x, i, u) ** 2).sum()), in_axes=axes)(*args)
        np.testing.assert_allclose(grad, want, rtol=1e-14, err_msg=str(axes))
