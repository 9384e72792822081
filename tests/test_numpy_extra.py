"""The NumPy functions of issue 18, item 6 (rearranging, index tricks, selection, set operations, histograms,
quantiles, covariance, calculus, polynomials, sinc/fabs): values and dtypes against NumPy eager and compiled;
data-dependent sizes (size=/length= under jit, a clear error without); derivatives against JAX and finite
differences; vmap against a loop; errors on bad input."""
import warnings

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.core.errors import ConcretizationError
from tracejit.test_util import check_grads

rng = np.random.default_rng(0)
X3 = rng.standard_normal((2, 3, 4))
X2 = rng.standard_normal((5, 6))
X1 = rng.standard_normal(9)
F32 = X2.astype(np.float32)
I2 = rng.integers(0, 5, (4, 6))
NANS = X2.copy()
NANS[1, 2] = NANS[3, 0] = np.nan
NANS[4] = np.nan
COORDS = np.cumsum(rng.uniform(0.2, 1.0, 6))
BINS = np.array([-1.0, -0.2, 0.3, 1.5])

# (id, f(m, *args) with m the numpy module, tracejit.numpy or jax.numpy, args)
VALUE_CASES = [
    ("append", lambda m, x: m.append(x, x[:1], axis=0), [X2]),
    ("append-flat-f32", lambda m, x: m.append(x, 1.5), [F32]),
    ("rot90", lambda m, x: m.rot90(x), [X2]),
    ("rot90-k3-axes", lambda m, x: m.rot90(x, 3, (2, 0)), [X3]),
    ("rot90-k-2", lambda m, x: m.rot90(x, -2, (1, 2)), [X3]),
    ("rollaxis", lambda m, x: m.rollaxis(x, 2, 1), [X3]),
    ("rollaxis-neg", lambda m, x: m.rollaxis(x, 0, -1), [X3]),
    ("vsplit", lambda m, x: m.vsplit(x, [1, 3])[1], [X2]),
    ("hsplit", lambda m, x: m.hsplit(x, 3)[2], [X2]),
    ("hsplit-1d", lambda m, x: m.hsplit(x, 3)[0], [X1]),
    ("dsplit", lambda m, x: m.dsplit(x, 2)[1], [X3]),
    ("row_stack", lambda m, x, y: m.vstack([x, y]) if m is np else m.row_stack([x, y]), [X1, X1]),
    ("fabs-int", lambda m, x: m.fabs(x - 2), [I2]),
    ("fabs-f32", lambda m, x: m.fabs(x), [F32]),
    ("sinc", lambda m, x: m.sinc(m.concatenate([x, x * 0])), [X1]),
    ("sinc-f32", lambda m, x: m.sinc(x), [F32]),
    ("select", lambda m, x: m.select([x > 0.5, x < -0.5], [x ** 2, -x], 7), [X2]),
    ("select-int", lambda m, x: m.select([x > 2, x == 1], [x, 2 * x]), [I2]),
    ("cumprod", lambda m, x: m.cumprod(x, 1), [X2]),
    ("cumprod-flat-int", lambda m, x: m.cumprod(x - 2), [I2]),
    ("cumprod-bool", lambda m, x: m.cumprod(x > 1, axis=0), [I2]),
    ("cumprod-complex", lambda m, x: m.cumprod(x[:3] + 1j * x[2:], axis=0), [X2]),
    ("gradient", lambda m, x: m.gradient(x), [X2]),
    ("gradient-spacing-order2", lambda m, x: m.gradient(x, 0.5, COORDS, edge_order=2), [X2]),
    ("gradient-axis-coords", lambda m, x, c: m.gradient(x, c, axis=-1), [X2, COORDS]),
    ("gradient-f32-int", lambda m, x: (m.gradient(x.astype(np.float32), axis=0), m.gradient(x)), [I2]),
    ("trapezoid", lambda m, x: m.trapezoid(x), [X2]),
    ("trapezoid-x-axis0", lambda m, x, c: m.trapezoid(x, c[:5], axis=0), [X2, COORDS]),
    ("trapezoid-dx-int", lambda m, x: m.trapezoid(x, dx=0.5, axis=0), [I2]),
    ("trapezoid-2d-x", lambda m, x: m.trapezoid(x, x * x, axis=1), [X2]),
    ("trapezoid-empty", lambda m, x: m.trapezoid(x[:, :0]), [X2]),
    ("quantile", lambda m, x: m.quantile(x, 0.3), [X2]),
    ("quantile-axis-q", lambda m, x: m.quantile(x, np.array([0.0, 0.4, 1.0]), axis=1, keepdims=True), [X3]),
    ("quantile-axes-f32", lambda m, x: m.quantile(x, 0.75, axis=(0, 2)), [X3.astype(np.float32)]),
    ("quantile-int-lower", lambda m, x: m.quantile(x, 0.3, axis=0, method="lower"), [I2]),
    ("quantile-methods", lambda m, x: [m.quantile(x, 0.37, 0, method=k) for k in (
        "higher", "nearest", "midpoint", "hazen", "weibull", "median_unbiased", "normal_unbiased",
        "interpolated_inverted_cdf")], [X2]),
    ("quantile-nan", lambda m, x: m.quantile(x, 0.5, axis=1), [NANS]),
    ("percentile", lambda m, x: m.percentile(x, [10, 90], axis=0), [X2]),
    ("nanpercentile", lambda m, x: m.nanpercentile(x, [10, 55], axis=1), [NANS]),
    ("nanquantile-flat", lambda m, x: m.nanquantile(x, 0.2), [NANS]),
    ("nanmedian", lambda m, x: m.nanmedian(x, axis=0), [NANS]),
    ("nanmedian-empty", lambda m, x: m.nanmedian(x[:, :0], axis=1), [NANS]),
    ("cov", lambda m, x: m.cov(x), [X2]),
    ("cov-rowvar-bias-y", lambda m, x: m.cov(x, x[:, :2] ** 2, rowvar=False, bias=True), [X2]),
    ("cov-weights", lambda m, x: m.cov(x, fweights=np.arange(6) % 3, aweights=np.linspace(0.5, 1, 6)), [X2]),
    ("cov-f32-1d", lambda m, x: m.cov(x[0]), [F32]),
    ("corrcoef", lambda m, x: m.corrcoef(x), [X2]),
    ("corrcoef-xy-int", lambda m, x: m.corrcoef(x[0], x[1]), [I2]),
    ("polyval", lambda m, p, x: m.polyval(p, x), [X1[:4], X2]),
    ("polyval-int", lambda m, p, x: m.polyval(p, x), [np.array([3, 0, -2]), I2]),
    ("polyval-2d-p", lambda m, p, x: m.polyval(p, x), [X2[:3], X2[0]]),
    ("vander", lambda m, x: (m.vander(x), m.vander(x, 3, increasing=True)), [X1[:5]]),
    ("polyfit", lambda m, x, y: m.polyfit(x, y, 3), [X1, X1 ** 3 - X1]),
    ("polyfit-2d-w-cov", lambda m, x, y: m.polyfit(x, y, 2, w=np.linspace(1, 2, 9), cov=True),
     [X1, np.stack([X1 ** 2, X1], 1)]),
    ("digitize", lambda m, x: m.digitize(x, BINS), [X2]),
    ("digitize-right-decreasing", lambda m, x: m.digitize(x, BINS[::-1], right=True), [X2]),
    ("histogram", lambda m, x: m.histogram(x, 4, range=(-2, 2)), [X2]),
    ("histogram-edges-weights", lambda m, x: m.histogram(x, BINS, weights=x * x), [X2]),
    ("histogram-density-f32", lambda m, x: m.histogram(x, 3, range=(-1, 1), density=True), [F32]),
    ("bincount-weights-constant", lambda m, w: m.bincount(I2.ravel(), w.ravel(), minlength=7), [X2[:4]]),
    ("isin", lambda m, x: m.isin(x, [1, 3, 7]), [I2]),
    ("isin-sorted-invert", lambda m, x, t: m.isin(x, t, invert=True), [I2, np.arange(0, 200, 3)]),
    ("partition-sorted-part", lambda m, x: m.sort(m.partition(x, 2, axis=0)[:3], axis=0), [X2]),
    ("tri", lambda m: (m.tri(3), m.tri(3, 5, -1), m.tri(4, 2, 1, dtype=int)), []),
    ("indices", lambda m: (m.tril_indices(4, 1), m.triu_indices(3, -1, 5), m.diag_indices(3, 3)), []),
    ("indices-from", lambda m, x: (m.tril_indices_from(x), m.triu_indices_from(x, 2), m.diag_indices_from(x[:5, :5])),
     [X2]),
    ("unravel_index", lambda m, i: m.unravel_index(i, (3, 4, 2)), [np.array([0, 5, 23, 17])]),
    ("unravel_index-F", lambda m, i: m.unravel_index(i, (3, 4), order="F"), [np.array([[0, 5], [11, 7]])]),
    ("ravel_multi_index-constant", lambda m: m.ravel_multi_index((np.array([0, 2, 1]), np.array([4, 0, 3])), (3, 5)),
     []),
    ("ravel_multi_index-modes", lambda m, i, j: m.ravel_multi_index((i, j), (3, 5), mode=("wrap", "clip"), order="F"),
     [np.array([-1, 7, 1]), np.array([9, -3, 3])]),
]


def _flat(out):
    return [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else [out]) for o in
            (o if isinstance(o, (tuple, list)) else [o])]


def _same(ours, theirs, what, rtol=1e-12):
    ours, theirs = _flat(ours), _flat(theirs)
    assert len(ours) == len(theirs), what
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape, (what, a.dtype, a.shape, b.dtype, b.shape)
        low = a.dtype in (np.float32, np.float16)          # float16: NumPy rounds at every step, tracejit once
        np.testing.assert_allclose(a, b, rtol=max(rtol, 1e-5) if low else rtol, atol=1e-3 if a.dtype == np.float16
                                   else 1e-13, err_msg=what, equal_nan=True)


@pytest.mark.parametrize("name,f,args", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_against_numpy_eager_and_compiled(name, f, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)    # NumPy's all-NaN-slice warnings
        want = f(np, *args)
    _same(f(tnp, *args), want, f"{name} eager")
    _same(tj.jit(lambda *a: f(tnp, *a))(*args), want, f"{name} compiled")


def test_r_and_c_as_numpy():
    r_cases = (lambda R: R[1:4, 0, [5, 6], -1.5], lambda R: R[0:1:5j, [1, 2]], lambda R: R["0,2", [1, 2], [3, 4]],
               lambda R: R["1,2,0", [1, 2], [3, 4]], lambda R: R["-1", np.ones((2, 2)), np.zeros((2, 1))],
               lambda R: R["0,3,1", [1, 2]], lambda R: R["0,3,0", [1, 2]], lambda R: R[[1], np.array([2.5], np.float32)])
    c_cases = (lambda C: C[[1, 2], [3, 4]], lambda C: C[np.array([[1, 2]]), 5, 6], lambda C: C[1:3, [1.5, 2]],
               lambda C: C[np.ones((2, 2)), 0:1:2j])
    for cases, ours, theirs in ((r_cases, tnp.r_, np.r_), (c_cases, tnp.c_, np.c_)):
        for build in cases:
            _same(build(ours), build(theirs), "r_/c_")
    inside = tj.jit(lambda v: tnp.c_[v, 2 * v])(np.arange(3.0))
    np.testing.assert_array_equal(inside, np.c_[np.arange(3.0), 2 * np.arange(3.0)])


def test_partition_and_argpartition_as_jax(jax64):
    jnp = jax64.numpy
    for x in (X2, I2):
        for kth, axis in ((0, 0), (-2, -1)):
            np.testing.assert_array_equal(tnp.partition(x, kth, axis), jnp.partition(x, kth, axis))
            np.testing.assert_array_equal(tj.jit(lambda v, kth=kth, axis=axis: tnp.argpartition(v, kth, axis))(x),
                                          jnp.argpartition(x, kth, axis))
            part = np.moveaxis(tnp.partition(x, kth, axis), axis, -1)
            exact = np.moveaxis(np.sort(x, axis), axis, -1)[..., kth]
            np.testing.assert_array_equal(part[..., kth], exact)     # NumPy's contract
            assert (part[..., :kth] <= exact[..., None]).all() and (part[..., kth:] >= exact[..., None]).all()


# ------------------------------------------------------------------------------------- data-dependent sizes

SIZED = [
    ("unique", lambda m, x, **kw: m.unique(x, return_index=True, return_inverse=True, return_counts=True, **kw)),
    ("unique-axis", lambda m, x, **kw: m.unique(x[:, :2] % 2, axis=0, return_index=True, return_counts=True, **kw)),
    ("nonzero", lambda m, x, **kw: m.nonzero(x % 3, **kw)),
    ("argwhere", lambda m, x, **kw: m.argwhere(x > 2, **kw)),
    ("flatnonzero", lambda m, x, **kw: m.flatnonzero(x - 1, **kw)),
    ("where", lambda m, x, **kw: m.where(x == 4, **kw)),
]


@pytest.mark.parametrize("name,f", SIZED, ids=[c[0] for c in SIZED])
def test_data_dependent_sizes(jax64, name, f):
    _same(f(tnp, I2), f(np, I2), f"{name} eager")
    for size, fill in ((2, None), (25, -1))[:1 if name.startswith("unique") else 2]:     # JAX's unique is slow
        kw = {"size": size} if fill is None else {"size": size, "fill_value": fill}
        want = f(jax64.numpy, I2, **kw)
        _same(tj.jit(lambda x, kw=kw: f(tnp, x, **kw))(I2), [np.asarray(w, np.int64) for w in _flat(want)], name)
    raiser = {"unique-axis": "unique", "where": "nonzero"}.get(name, name)
    with pytest.raises(ConcretizationError, match=rf"^{raiser}:.*size="):
        tj.jit(lambda x: f(tnp, x))(I2)


def test_unique_of_empty_arrays():
    for shape, axis in (((0, 4), 0), ((0, 3), -1), ((2, 0), None)):
        _same(tnp.unique(np.zeros(shape), axis=axis), np.unique(np.zeros(shape), axis=axis), f"unique {shape}")


def test_unique_nan_and_float_padding():
    x = np.array([2.0, np.nan, 1.0, np.nan, 2.0])
    for equal_nan in (True, False):
        _same(tnp.unique(x, return_counts=True, equal_nan=equal_nan),
              np.unique(x, return_counts=True, equal_nan=equal_nan), "unique NaN")
    padded = tj.jit(lambda v: tnp.unique(v, size=5, fill_value=-9.0))(x)
    np.testing.assert_array_equal(padded, [1.0, 2.0, np.nan, -9.0, -9.0])


def test_bincount_length(jax64):
    x = np.array([0, 3, 3, 1, 7])
    np.testing.assert_array_equal(tnp.bincount(x), np.bincount(x))
    for length in (3, 10):
        np.testing.assert_array_equal(tj.jit(lambda v, length=length: tnp.bincount(v, length=length))(x),
                                      jax64.numpy.bincount(x, length=length))
    with pytest.raises(ConcretizationError, match="bincount.*length="):
        tj.jit(tnp.bincount)(x)
    # a traced negative value counts at 0, as JAX's (a concrete one raises, as NumPy's)
    np.testing.assert_array_equal(tj.jit(lambda v: tnp.bincount(v, length=3))(np.array([-2, 1])), [1, 1, 0])


def test_traced_unravel_index_clips_as_jax(jax64):
    i = np.array([-1, -12, -13, 12, 100, 5])
    for got, want in zip(tj.jit(lambda v: tnp.unravel_index(v, (3, 4)))(i), jax64.numpy.unravel_index(i, (3, 4))):
        np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------------------------------------ derivatives

W = rng.standard_normal((5, 6))    # histogram weights
DERIVATIVE_CASES = [
    ("sinc", lambda m, x: m.sinc(m.concatenate([x, 0 * x])), [X2]),
    ("select", lambda m, x: m.select([x > 0.5, x < -0.5], [x ** 2, m.sin(x)], x * 3), [X2]),
    ("partition", lambda m, x: m.partition(x, 2, axis=0), [X2]),
    ("cumprod", lambda m, x: m.cumprod(x, axis=1), [X2]),
    ("gradient", lambda m, x: m.gradient(x, COORDS[:5], 0.5)[0], [X2]),
    ("trapezoid", lambda m, x, c: m.trapezoid(x, c, axis=1)[:, None] * x, [X2, COORDS]),
    ("quantile", lambda m, x, q: m.quantile(x, q, axis=1)[:, None] * x, [X2, np.array(0.37)]),
    ("quantile-q-at-whole-indices", lambda m, x, q: m.quantile(x, q, axis=1), [X2, np.array([0.0, 0.4, 1.0])]),
    ("nanquantile-nan-rows", lambda m, x, q: m.nanquantile(x, q, axis=1), [NANS, np.array([0.0, 0.6])]),
    ("percentile", lambda m, x: m.percentile(x, 40.0, axis=0) * x, [X2]),
    ("nanpercentile", lambda m, x: m.nanpercentile(x, 65.0, axis=0) * x, [X2]),
    ("cov", lambda m, x: m.cov(x, aweights=m.linspace(0.5, 1, 6))[:, :1] * x, [X2]),
    ("corrcoef", lambda m, x: m.corrcoef(x)[:, :1] * x, [X2]),
    ("polyval", lambda m, p, x: m.polyval(p, x), [X1[:4], X2]),
    ("polyfit", lambda m, x, y: m.polyfit(x, y, 2), [X1, X1 ** 2]),
    ("histogram-weights", lambda m, w: m.histogram(X2, 4, range=(-2, 2), weights=w)[0], [W]),
]


@pytest.mark.parametrize("name,f,args", DERIVATIVE_CASES, ids=[c[0] for c in DERIVATIVE_CASES])
def test_gradients_against_jax(jax64, name, f, args):
    jnp = jax64.numpy
    argnums = tuple(range(len(args)))
    ct = rng.standard_normal(np.shape(f(jnp, *args)))
    ours = tj.grad(lambda *a: (f(tnp, *a) * ct).sum(), argnums=argnums)(*args)
    theirs = jax64.grad(lambda *a: (f(jnp, *a) * ct).sum(), argnums=argnums)(*args)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=name)


SMOOTH_CASES = [c for c in DERIVATIVE_CASES[:-2] if c[0] not in ("quantile-q-at-whole-indices", "nanquantile-nan-rows")]


@pytest.mark.parametrize("name,f,args", SMOOTH_CASES, ids=[c[0] for c in SMOOTH_CASES])
def test_check_grads_to_order_2(name, f, args):
    check_grads(lambda *a: f(tnp, *a), args, order=2, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", ["sinc", "quantile", "polyfit", "gradient"])
def test_compiled_gradients_match_eager(name):
    f, args = next((f, args) for n, f, args in DERIVATIVE_CASES if n == name)
    grad = tj.grad(lambda *a: f(tnp, *a).sum(), argnums=tuple(range(len(args))))
    for a, b in zip(tj.jit(grad)(*args), grad(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=name)


def test_sinc_derivatives_at_zero_are_the_series():
    d = tj.grad
    assert d(tnp.sinc)(0.0) == 0.0
    np.testing.assert_allclose(d(d(tnp.sinc))(0.0), -np.pi ** 2 / 3)
    np.testing.assert_allclose(d(d(d(d(tnp.sinc))))(0.0), np.pi ** 4 / 5)


# ------------------------------------------------------------------------------------------------------ vmap

VMAP_CASES = [
    ("quantile", lambda r: tnp.quantile(r, np.array([0.2, 0.9]))),
    ("partition", lambda r: tnp.partition(r, 3)),
    ("argpartition", lambda r: tnp.argpartition(r, 1)),
    ("cumprod", tnp.cumprod),
    ("unique", lambda r: tnp.unique(tnp.round(r), size=4, return_counts=True)),
    ("nonzero", lambda r: tnp.nonzero(r > 0, size=6, fill_value=-1)[0]),
    ("bincount", lambda r: tnp.bincount(tnp.astype(tnp.abs(r) * 2, np.int64), length=5)),
    ("digitize", lambda r: tnp.digitize(r, BINS)),
    ("histogram", lambda r: tnp.histogram(r, 3, range=(-1, 1))[0]),
    ("isin", lambda r: tnp.isin(tnp.round(r), np.array([0.0, 1.0]))),
    ("gradient", lambda r: tnp.gradient(r, 0.5)),
    ("select", lambda r: tnp.select([r > 0], [r * 2], -r)),
    ("polyfit", lambda r: tnp.polyfit(COORDS, r, 2)),
    ("cov", lambda r: tnp.cov(r.reshape(2, 3))),
]


@pytest.mark.parametrize("name,f", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_against_a_loop(name, f):
    batch = rng.standard_normal((4, 6))
    got = tj.vmap(f)(batch)
    rows = [f(row) for row in batch]
    want = [np.stack(parts) for parts in zip(*[_flat(r) for r in rows])]
    for a, b in zip(_flat(got), want):
        np.testing.assert_allclose(a, b, rtol=1e-12, err_msg=name)


# ------------------------------------------------------------------------------------------------ bad input

BAD_INPUT = [
    (lambda: tnp.rot90(X2, 1, (0, 0)), ValueError, "different"),
    (lambda: tnp.rot90(X2, 1, (0,)), ValueError, "2 axes"),
    (lambda: tnp.vsplit(X1, 3), ValueError, "vsplit.*2 or more"),
    (lambda: tnp.dsplit(X2, 2), ValueError, "dsplit.*3 or more"),
    (lambda: tnp.hsplit(X1, np.array([1.5])), TypeError, "hsplit: split indices must be integers"),
    (lambda: tnp.rollaxis(X2, 0, 5), np.exceptions.AxisError, "start"),
    (lambda: tnp.fabs(np.array([1j])), TypeError, "complex"),
    (lambda: tnp.select([X2 > 0], []), ValueError, "1 conditions but 0 choices"),
    (lambda: tnp.select([X2], [X2]), TypeError, "condition 0 must be a boolean"),
    (lambda: tnp.partition(X1, 9), ValueError, "kth=9 is out of bounds"),
    (lambda: tnp.quantile(X1, 1.5), ValueError, r"q must be in the range \[0, 1\]"),
    (lambda: tnp.percentile(X1, -1), ValueError, r"\[0, 100\]"),
    (lambda: tnp.quantile(X1, 0.5, method="inverted_cdf"), ValueError, "not supported"),
    (lambda: tnp.quantile(X1 + 1j, 0.5), TypeError, "complex"),
    (lambda: tnp.bincount(np.array([1, -1])), ValueError, "negative"),
    (lambda: tnp.bincount(X1), TypeError, "integers"),
    (lambda: tnp.bincount(np.array([1]), minlength=-1), ValueError, "minlength"),
    (lambda: tnp.digitize(X1, np.array([1.0, 0.0, 2.0])), ValueError, "monotonically"),
    (lambda: tnp.histogram(X1, 0), ValueError, "positive"),
    (lambda: tnp.histogram(X1, np.array([1.0, 0.0])), ValueError, "increase"),
    (lambda: tnp.histogram(X1, "auto"), NotImplementedError, "auto"),
    (lambda: tnp.histogram(NANS), ValueError, "not finite"),
    (lambda: tnp.unravel_index(np.array([12]), (3, 4)), ValueError, "index 12 is out of bounds"),
    (lambda: tnp.unravel_index(np.array([1.0]), (3, 4)), TypeError, "integers"),
    (lambda: tnp.ravel_multi_index((np.array([3]), np.array([0])), (3, 4)), ValueError, "out of bounds"),
    (lambda: tnp.ravel_multi_index((np.array([0]),), (3, 4)), ValueError, "1 index arrays for 2"),
    (lambda: tj.jit(lambda i: tnp.ravel_multi_index((i, i), (3, 4)))(np.array([1])), ConcretizationError,
     "mode='wrap'"),
    (lambda: tnp.nonzero(np.array(1.0)), ValueError, "0-d"),
    (lambda: tnp.nonzero(X2, size=3, fill_value=(0, 1, 2)), ValueError, "fill_value"),
    (lambda: tnp.unique(np.zeros(0), size=2), ValueError, "fill_value"),
    (lambda: tnp.unique(X1, size=-1), ValueError, "size must be non-negative"),
    (lambda: tnp.isin(X1, X1, method="hash"), ValueError, "method"),
    (lambda: tnp.cov(X3), ValueError, "1-D or 2-D"),
    (lambda: tnp.cov(X2, fweights=np.array([0.5] * 6)), TypeError, "fweights must be integers"),
    (lambda: tnp.cov(X2, aweights=np.ones(3)), ValueError, "aweights must be 1-D of length 6"),
    (lambda: tnp.gradient(X1[:1]), ValueError, "at least"),
    (lambda: tnp.gradient(X2, 1.0, 2.0, 3.0), TypeError, "one per axis"),
    (lambda: tnp.gradient(X2, edge_order=3), ValueError, "edge_order"),
    (lambda: tnp.polyfit(X2, X1, 1), TypeError, "1-D"),
    (lambda: tnp.polyfit(X1, X1, -1), ValueError, "deg"),
    (lambda: tnp.polyval(2.0, X1), ValueError, "first axis"),
    (lambda: tnp.r_["r", [1, 2]], NotImplementedError, "matrix"),
    (lambda: tnp.r_[[1], "0"], ValueError, "first"),
    (lambda: tj.jit(lambda x: tnp.tril_indices(x))(3), ConcretizationError, "concrete"),
]


@pytest.mark.parametrize("call,error,match", BAD_INPUT, ids=[f"{i}-{c[2]}" for i, c in enumerate(BAD_INPUT)])
def test_bad_input_raises_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ------------------------------------------------------------------------------------------- the small dtypes

SMALL_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.float16]
DTYPE_CASES = [
    ("sinc", lambda m, x: m.sinc(x)), ("fabs", lambda m, x: m.fabs(x)), ("cumprod", lambda m, x: m.cumprod(x, 1)),
    ("gradient", lambda m, x: m.gradient(x, axis=1)), ("trapezoid", lambda m, x: m.trapezoid(x)),
    ("quantile", lambda m, x: m.quantile(x, 0.3, 1)), ("quantile-lower", lambda m, x: m.quantile(x, 0.3, 0, method="lower")),
    ("cov", lambda m, x: m.cov(x)), ("vander", lambda m, x: m.vander(x[0], 3)),
    ("polyval", lambda m, x: m.polyval(x[0, :3], x)), ("digitize", lambda m, x: m.digitize(x, np.array([0, 1, 3], x.dtype))),
    ("histogram", lambda m, x: m.histogram(x, 3)), ("bincount", lambda m, x: m.bincount(x[0].astype(np.uint8))),
    ("isin", lambda m, x: m.isin(x, x[0])), ("unique", lambda m, x: m.unique(x, return_counts=True)),
    ("select", lambda m, x: m.select([x > 1], [x], 2)), ("append", lambda m, x: m.append(x, 1)),
]


@pytest.mark.parametrize("dtype", SMALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_small_dtypes_as_numpy(dtype):
    x = (rng.integers(0, 7, (4, 6)) if np.dtype(dtype).kind in "iu" else rng.standard_normal((4, 6))).astype(dtype)
    for name, f in DTYPE_CASES:
        want, rtol = f(np, x), 2e-3 if dtype == np.float16 else 1e-12     # (NumPy rounds float16 at each step)
        _same(f(tnp, x), want, f"{name} {np.dtype(dtype).name}", rtol)
        if dtype in (np.int8, np.float16) and name not in ("unique", "bincount"):     # compiled too
            _same(tj.jit(lambda v, f=f: f(tnp, v))(x), want, f"{name} {np.dtype(dtype).name} compiled", rtol)
