"""The jax.numpy functions tracejit.numpy gained to close its gaps (array and shape utilities, NaN reductions,
set operations, polynomials, windows, histogramdd, bit packing): values and dtypes against NumPy, eagerly and
under tj.jit; size=/fill_value= of the set functions under jit; derivatives; errors on bad input."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.core.errors import ConcretizationError
from tracejit.test_util import check_grads

rng = np.random.default_rng(7)
X1 = rng.standard_normal(7)
X2 = rng.standard_normal((4, 5))
X3 = rng.standard_normal((2, 3, 4))
F32 = X2.astype(np.float32)
I1 = rng.integers(-3, 4, 9)
I2 = rng.integers(0, 4, (3, 4))
NANS = X2.copy()
NANS[0, 1] = NANS[2, 3] = NANS[3, 0] = np.nan
Z1 = X1 + 1j * rng.standard_normal(7)
PHASE = np.cumsum(rng.uniform(-2.5, 2.5, 12))
A = np.array([1, 3, 3, 5, 7, 7, 9, 2])
B = np.array([3, 4, 5, 5, 8, 2, 11])
U8 = rng.integers(0, 256, (3, 2)).astype(np.uint8)


def _sq(v):
    return v * v


# (id, f(m, *args) with m numpy or tracejit.numpy, args): eager tracejit and tj.jit against NumPy
VALUE_CASES = [
    ("array_equal", lambda m, x: (m.array_equal(x, x), m.array_equal(x, x + 1), m.array_equal(x, x[:2])), [X2]),
    ("array_equal-nan", lambda m, x: (m.array_equal(x, x), m.array_equal(x, x, equal_nan=True)), [NANS]),
    ("array_equiv", lambda m, x: (m.array_equiv(x, x[:1]), m.array_equiv(x[0], x), m.array_equiv(x, x[:2])), [X2]),
    ("broadcast_arrays", lambda m, x, y: m.broadcast_arrays(x[:, None], y, 2.0), [X1, X2[0]]),
    ("block", lambda m, x: m.block([[x, x[:, :2]], [x[:1], x[:1, :2]]]), [X2]),
    ("block-1d", lambda m, x: m.block([x, x[:2], 1.5]), [X1]),
    ("block-3d", lambda m, x: m.block([[[x], [x]]]), [X1]),
    ("concat", lambda m, x: m.concat([x, x], axis=1), [X2]),
    ("copy", lambda m, x: m.copy(x), [X2]),
    ("permute_dims", lambda m, x: m.permute_dims(x, (2, 0, 1)), [X3]),
    ("matrix_transpose", lambda m, x: m.matrix_transpose(x), [X3]),
    ("unstack", lambda m, x: m.unstack(x, axis=1), [X3]),
    ("matvec", lambda m, x, v: m.matvec(x, v), [X3, X2[0, :4]]),
    ("vecmat", lambda m, v, x: m.vecmat(v, x), [Z1[:3], X3[0].astype(complex)]),
    ("vecdot", lambda m, x, y: m.vecdot(x, y), [X3, X2[:3, :4]]),
    ("vecdot-complex-axis", lambda m, x, y: m.vecdot(x[:, None], y, axis=0), [Z1, Z1[:, None] * 2]),
    ("vecdot-int32", lambda m, x: m.vecdot(x.astype(np.int32), x.astype(np.int32)), [I2]),
    ("cumulative_sum", lambda m, x: m.cumulative_sum(x, axis=1, include_initial=True), [X2]),
    ("cumulative_sum-1d-int", lambda m, x: m.cumulative_sum(x), [I1]),
    ("cumulative_prod", lambda m, x: m.cumulative_prod(x, axis=0, include_initial=True), [X2]),
    ("diagflat", lambda m, x: (m.diagflat(x), m.diagflat(x, -2)), [X2[:2, :2]]),
    ("ediff1d", lambda m, x: (m.ediff1d(x), m.ediff1d(x, to_end=[5, 6], to_begin=-1)), [X2]),
    ("ediff1d-int", lambda m, x: m.ediff1d(x, to_begin=np.array([7])), [I1]),
    ("sort_complex", lambda m, x: m.sort_complex(x), [np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 + 0j, 2j])]),
    ("sort_complex-int", lambda m, x: (m.sort_complex(x), m.sort_complex(x.astype(np.int8))), [I1]),
    ("delete", lambda m, x: (m.delete(x, [0, 2], axis=1), m.delete(x, -1), m.delete(x, slice(1, 3), 0)), [X2]),
    ("delete-mask", lambda m, x: m.delete(x, np.array([True, False, True, False]), axis=0), [X2]),
    ("insert", lambda m, x: (m.insert(x, 1, 9.0, axis=1), m.insert(x, [0, 2, 2], [7.0, 8.0, 9.0], axis=1)), [X2]),
    ("insert-flat", lambda m, x: (m.insert(x, 3, [1.5, 2.5]), m.insert(x, slice(0, 4, 2), -1.0)), [X1]),
    ("insert-row", lambda m, x: m.insert(x, 2, x[0], axis=0), [X2]),
    ("insert-int-cast", lambda m, x: m.insert(x, [-1, 0], 2.7), [I1]),
    ("compress", lambda m, x: (m.compress([True, False, True], x, axis=0), m.compress([0, 1], x)), [X2]),
    ("extract", lambda m, x: m.extract(x > 0, x), [X2]),
    ("choose", lambda m, a, x: m.choose(a, [x[0], x[1], x[2], 0.5]), [I2, X3[:, :, :4].reshape(-1, 4)[:3]]),
    ("choose-wrap-clip", lambda m, a: (m.choose(a, [10, 20, 30], mode="wrap"), m.choose(a, [10, 20], mode="clip")),
     [I1]),
    ("resize", lambda m, x: (m.resize(x, (3, 7)), m.resize(x, 4), m.resize(x[:0], 3)), [X2]),
    ("piecewise", lambda m, x: m.piecewise(x, [x < -0.5, x > 0.5], [lambda v: v * v, m.sin, 7.0]), [X2]),
    ("piecewise-int", lambda m, x: m.piecewise(x, [x < 0, x >= 2], [lambda v: -v * 1.5, 5]), [I1]),
    ("piecewise-one", lambda m, x: m.piecewise(x, x > 0, [_sq]), [X1]),
    ("nanargmax", lambda m, x: (m.nanargmax(x), m.nanargmax(x, axis=1), m.nanargmin(x, 0, keepdims=True)), [NANS]),
    ("nanprod", lambda m, x: (m.nanprod(x), m.nanprod(x, axis=1, keepdims=True)), [NANS]),
    ("nancumsum", lambda m, x: (m.nancumsum(x), m.nancumsum(x, axis=0), m.nancumprod(x, 1)), [NANS]),
    ("nanvar", lambda m, x: (m.nanvar(x), m.nanvar(x, axis=1, ddof=1), m.nanstd(x, 0, keepdims=True)), [NANS]),
    ("nanvar-f32-int", lambda m, x, i: (m.nanvar(x, 0), m.nanstd(i, 1)), [F32, I2]),
    ("nanvar-ddof-too-big", lambda m, x: m.nanvar(x[:, :2], axis=1, ddof=1), [NANS]),
    ("geomspace", lambda m: (m.geomspace(1, 1000, 4), m.geomspace(-2.0, -32.0, 5, endpoint=False),
                             m.geomspace(1.0, 10.0, 5, dtype=np.int64)), []),
    ("logspace", lambda m: (m.logspace(0, 3, 4), m.logspace(1.0, 2.0, 5, base=2.0, endpoint=False),
                            m.logspace(0, 2, 3, dtype=np.int32)), []),
    ("unwrap", lambda m, p: (m.unwrap(p), m.unwrap(p, discont=4.0), m.unwrap(p, period=5.0)), [PHASE]),
    ("unwrap-2d-int", lambda m, x: (m.unwrap(x * 3, axis=0), m.unwrap(x * 3, period=4)), [I2]),
    ("unique_values", lambda m, x: m.sort(m.unique_values(x)), [I2]),
    ("intersect1d", lambda m, a, b: (m.intersect1d(a, b), *m.intersect1d(a, b, return_indices=True)), [A, B]),
    ("setdiff1d", lambda m, a, b: (m.setdiff1d(a, b), m.setdiff1d(a[:4], b, assume_unique=True)), [A, B]),
    ("setxor1d", lambda m, a, b: m.setxor1d(a, b), [A, B]),
    ("union1d", lambda m, a, b: m.union1d(a, b.astype(np.float32)), [A, B]),
    ("sets-nan", lambda m, a: (m.intersect1d(a, a[:2]), m.setdiff1d(a, [1.0]), m.setxor1d(a, [2.0])),
     [np.array([1.0, np.nan, 2.0, np.nan])]),
    ("poly", lambda m, r: (m.poly(r), m.poly(np.array([1, 2]))), [X1[:4]]),
    ("polyadd", lambda m, a, b: (m.polyadd(a, b), m.polysub(a, b), m.polysub(b[:2], a)), [X1[:4], X1[4:]]),
    ("polymul", lambda m, a, b: m.polymul(a, b), [X1[:4], X1[4:]]),
    ("polyder", lambda m, p: (m.polyder(p), m.polyder(p, 2), m.polyder(p, 0), m.polyder(np.array([3, 1, 2]))),
     [X1[:4]]),
    ("polyint", lambda m, p: (m.polyint(p), m.polyint(p, 2, k=[1.0, 2.0]), m.polyint(p, 2, k=3.0),
                              m.polyint(np.array([3, 1]))), [X1[:4]]),
    ("windows", lambda m: tuple(f(n) for f in (m.bartlett, m.blackman, m.hamming, m.hanning) for n in (0, 1, 5, 8)),
     []),
    ("kaiser", lambda m: (m.kaiser(0, 2.0), m.kaiser(1, 2.0), m.kaiser(7, 3.5), m.kaiser(6, 0.0)), []),
    ("histogramdd", lambda m, x: m.histogramdd(x[:, :3], bins=(2, 3, 4)), [rng.standard_normal((30, 3))]),
    ("histogramdd-range-density", lambda m, x, w: m.histogramdd(x, bins=[np.array([-1.0, 0.0, 2.0]), 3],
                                                                 range=[None, (-2.0, 2.0)], weights=w, density=True),
     [rng.standard_normal((20, 2)), rng.uniform(0, 1, 20)]),
    ("histogram2d", lambda m, x, y: m.histogram2d(x, y, bins=(3, 2)), [X1, X1[::-1]]),
    ("histogram2d-edges", lambda m, x, y: m.histogram2d(x, y, bins=np.array([-2.0, -0.5, 0.0, 3.0])), [X1, X1 * 2]),
    ("packbits", lambda m, x: (m.packbits(x), m.packbits(x > 1, axis=1), m.packbits(x, axis=0, bitorder="little")),
     [I2]),
    ("unpackbits", lambda m, x: (m.unpackbits(x), m.unpackbits(x, axis=1, count=5),
                                 m.unpackbits(x, axis=0, count=-3, bitorder="little"), m.unpackbits(x, count=50)),
     [U8]),
    ("fill_diagonal", lambda m, x: _filled(m, x, 5.0), [X2]),
    ("fill_diagonal-wrap", lambda m, x: _filled(m, x, [1.0, 2.0], wrap=True), [rng.standard_normal((7, 3))]),
    ("fill_diagonal-3d", lambda m, x: _filled(m, x, 0.5), [rng.standard_normal((3, 3, 3))]),
    ("put", lambda m, x: _put(m, x, [0, -1, 5], [1.0, 2.0]), [X2]),
    ("put-modes", lambda m, x: (_put(m, x, [2, 25], 9.0, mode="wrap"), _put(m, x, [-3, 40], 9.0, mode="clip")), [X2]),
    ("put_along_axis", lambda m, x: _put_along(m, x, np.array([[0], [2], [4], [1]]), 0.5, 1), [X2]),
    ("put_along_axis-flat", lambda m, x: _put_along(m, x, np.array([1, 7]), np.array([3.0, 4.0]), None), [X2]),
    ("apply_along_axis", lambda m, x: (m.apply_along_axis(lambda v: v * v.sum(), 1, x),
                                       m.apply_along_axis(lambda v: v.max(), 0, x),
                                       m.apply_along_axis(lambda v: m.outer(v, v), 1, x)), [X3]),
    ("apply_over_axes", lambda m, x: (m.apply_over_axes(m.sum, x, [0, 2]), m.apply_over_axes(m.sum, x, 1)), [X3]),
    ("fromfunction", lambda m: (m.fromfunction(lambda i, j: i * 10 + j, (3, 4)),
                                m.fromfunction(lambda i: i * 2, (3,), dtype=np.int32)), []),
    ("indices", lambda m: (m.indices((2, 3)), *m.indices((2, 3), sparse=True), m.indices((2,), dtype=np.int32)), []),
    ("ix_", lambda m, x: x[m.ix_(np.array([0, 2]), np.array([True, False, False, True, True]))], [X2]),
    ("grids", lambda m: (m.mgrid[0:3, 0:2], m.mgrid[0:1:5j], *m.ogrid[0:3, 1:4:2], m.mgrid[0.5:2:0.5]), []),
    ("trim_zeros", lambda m, x: (m.trim_zeros(x), m.trim_zeros(x, "f"), m.trim_zeros(x, "b")),
     [np.array([0, 0, 1, 0, 2, 0])]),
]


def _filled(m, x, val, wrap=False):
    if m is np:
        x = x.copy()
        np.fill_diagonal(x, val, wrap)
        return x
    return m.fill_diagonal(x, val, wrap, inplace=False)


def _put(m, x, ind, v, mode="raise"):
    if m is np:
        x = x.copy()
        np.put(x, ind, v, mode)
        return x
    return m.put(x, ind, v, mode, inplace=False)


def _put_along(m, x, indices, values, axis):
    if m is np:
        x = x.copy()
        np.put_along_axis(x, indices, values, axis)
        return x
    return m.put_along_axis(x, indices, values, axis, inplace=False)


def _flat(tree):
    if isinstance(tree, (list, tuple)):
        return [leaf for t in tree for leaf in _flat(t)]
    return [tree]


def _check(got, want, rtol):
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert isinstance(g, np.ndarray), type(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12, equal_nan=True)


# results whose length depends on the values: under jit their arguments are constants (concrete in the trace)
DATA_DEPENDENT = {"compress", "extract", "choose", "unique_values", "intersect1d", "setdiff1d", "setxor1d", "union1d",
                  "sets-nan", "trim_zeros"}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(("name", "fn", "args"), VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_against_numpy(name, fn, args):
    want = fn(np, *args)
    _check(fn(tnp, *args), want, 1e-12)
    if name in DATA_DEPENDENT:
        _check(tj.jit(lambda: fn(tnp, *args))(), want, 1e-12)
    else:
        _check(tj.jit(lambda *a: fn(tnp, *a))(*args), want, 1e-12)


# ------------------------------------------------------------------------------------ size= under jit

def _padded(values, size, fill):
    values = np.asarray(values)
    return np.concatenate([values, np.full(max(size - len(values), 0), fill, values.dtype)])[:size]


@pytest.mark.parametrize("size", [3, 6, 12])
def test_set_functions_with_size_under_jit(size):
    a, b = A.astype(np.float64), B.astype(np.float64)
    cases = [
        ("intersect1d", np.intersect1d(a, b), lambda v: v[0] if len(v) else 0),
        ("setdiff1d", np.setdiff1d(a, b), lambda v: 0),
        ("setxor1d", np.setxor1d(a, b), lambda v: v[0] if len(v) else 0),
        ("union1d", np.union1d(a, b), lambda v: v[0]),
    ]
    for name, want, default in cases:
        fn = getattr(tnp, name)
        got = tj.jit(lambda x, y, fn=fn: fn(x, y, size=size))(a, b)
        np.testing.assert_array_equal(got, _padded(want, size, default(want)), err_msg=name)
        got = tj.jit(lambda x, y, fn=fn: fn(x, y, size=size, fill_value=-1.5))(a, b)
        np.testing.assert_array_equal(got, _padded(want, size, -1.5), err_msg=name)


def test_intersect1d_indices_with_size():
    values, i1, i2 = tj.jit(lambda x, y: tnp.intersect1d(x, y, return_indices=True, size=5))(A, B)
    want, w1, w2 = np.intersect1d(A, B, return_indices=True)
    np.testing.assert_array_equal(values, _padded(want, 5, want[0]))
    np.testing.assert_array_equal(i1, _padded(w1, 5, len(A)))
    np.testing.assert_array_equal(i2, _padded(w2, 5, len(B)))


def test_unique_array_api_results():
    x = np.array([[3.0, 1.0, np.nan], [1.0, np.nan, 3.0]])
    got = tnp.unique_all(x)
    want = np.unique_all(x)
    for field in ("values", "indices", "inverse_indices", "counts"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)
    values, counts = tj.jit(lambda v: tnp.unique_counts(v, size=6, fill_value=0.0))(x)
    np.testing.assert_array_equal(values, [1.0, 3.0, np.nan, np.nan, 0.0, 0.0])
    np.testing.assert_array_equal(counts, [2, 2, 1, 1, 0, 0])
    inverse = tj.jit(lambda v: tnp.unique_inverse(v, size=4).inverse_indices)(x)
    np.testing.assert_array_equal(inverse, np.unique_inverse(x).inverse_indices)


def test_compress_and_extract_with_size_under_jit():
    got = tj.jit(lambda c, x: tnp.compress(c, x, axis=1, size=4, fill_value=-1.0))(X2[0] > 0, X2)
    want = np.compress(X2[0] > 0, X2, axis=1)
    np.testing.assert_array_equal(got, np.concatenate([want, np.full((4, 4 - want.shape[1]), -1.0)], 1))
    got = tj.jit(lambda x: tnp.extract(x > 0, x, size=20))(X2)
    np.testing.assert_array_equal(got, _padded(np.extract(X2 > 0, X2), 20, 0.0))


def test_delete_with_traced_unique_indices():
    got = tj.jit(lambda x, i: tnp.delete(x, i, axis=1, assume_unique_indices=True))(X2, np.array([3, 0]))
    np.testing.assert_array_equal(got, np.delete(X2, [3, 0], axis=1))
    got = tj.jit(lambda x, i: tnp.delete(x, i, assume_unique_indices=True))(X1, np.array([-1]))
    np.testing.assert_array_equal(got, X1[:-1])


def test_put_and_choose_with_traced_indices():
    got = tj.jit(lambda x, i: tnp.put(x, i, [5.0, 6.0], inplace=False))(X2, np.array([1, -2, 100]))
    want = X2.copy().ravel()
    want[[1, -2]] = [5.0, 6.0]
    np.testing.assert_array_equal(got, want.reshape(X2.shape))    # 100 is dropped, as JAX's
    got = tj.jit(lambda a: tnp.choose(a, [10, 20, 30], mode="clip"))(I1)
    np.testing.assert_array_equal(got, np.choose(I1, [10, 20, 30], mode="clip"))


# ------------------------------------------------------------------------------------- derivatives

GRAD_CASES = [
    ("vecdot", lambda x: tnp.vecdot(x, x[::-1])),
    ("matvec", lambda x: tnp.matvec(x, x[0])),
    ("cumulative_prod", lambda x: tnp.cumulative_prod(x, axis=1, include_initial=True)),
    ("block", lambda x: tnp.block([[x, x], [2 * x, x * x]])),
    ("insert-delete", lambda x: tnp.delete(tnp.insert(x, [1, 3], x[0, :1] * 3, axis=1), 0, axis=0)),
    ("piecewise", lambda x: tnp.piecewise(x, [x < 0, x > 0.5], [tnp.sin, lambda v: v ** 3, 1.0])),
    ("nanvar", lambda x: tnp.nanvar(tnp.where(x > 1.2, tnp.nan, x), axis=0, ddof=1)),
    ("nanprod", lambda x: tnp.nancumprod(tnp.where(x > 1.2, tnp.nan, x), axis=1)),
    ("unwrap", lambda x: tnp.unwrap(x * 3, axis=1)),
    ("polymul-polydiv", lambda x: tnp.polydiv(tnp.polymul(x[0], x[1]), x[2, :3] + 3)[0]),
    ("polyint-polyder", lambda x: tnp.polyint(tnp.polyder(x[0]), k=x[1, 0])),
    ("poly", lambda x: tnp.poly(x[0])),
    ("apply_along_axis", lambda x: tnp.apply_along_axis(lambda v: v * tnp.sum(v * v), 1, x)),
    ("vectorize", lambda x: tnp.vectorize(lambda m, v: m @ v, signature="(n,n),(n)->(n)")(
        x[:, :4].reshape(1, 4, 4)[:, :3, :3], x[:, :3])),
    ("fill_diagonal", lambda x: tnp.fill_diagonal(x, x[0, 0] ** 2, inplace=False)),
    ("put_along_axis", lambda x: tnp.put_along_axis(x, np.array([[1], [0], [3], [2]]), x[:, :1] * 2, 1,
                                                    inplace=False)),
    ("kaiser-geomspace", lambda x: tnp.kaiser(5, x[0, 0] + 3) * tnp.geomspace(x[0, 1] + 3, 2.0, 5)),
    ("histogramdd-weights", lambda x: tnp.histogramdd(x[:, :2], bins=3, range=[(-3, 3), (-3, 3)],
                                                      weights=x[:, 2] ** 2)[0]),
]


@pytest.mark.parametrize(("name", "fn"), GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_derivatives_against_finite_differences(name, fn):
    check_grads(fn, (X2[:4, :5],), order=1, modes=("fwd", "rev"))


def test_vectorize_and_fromfunction_under_vmap_and_jit():
    f = tnp.vectorize(lambda a, b: a * b + 1.0)
    np.testing.assert_allclose(tj.jit(f)(X2, X1[:5]), X2 * X1[:5] + 1.0)
    g = tnp.vectorize(lambda a, n: a ** n, excluded={1})
    np.testing.assert_allclose(g(X2, 3), X2 ** 3)
    h = tnp.vectorize(lambda m: (tnp.sum(m), tnp.max(m)), signature="(n)->(),()")
    s, mx = tj.jit(h)(X3)
    np.testing.assert_allclose(s, X3.sum(-1))
    np.testing.assert_allclose(mx, X3.max(-1))
    np.testing.assert_allclose(tj.vmap(lambda r: tnp.unwrap(r * 4))(X2), np.unwrap(X2 * 4))
    np.testing.assert_allclose(tnp.fromfunction(lambda i, j: tnp.where(i > j, i, j * 0.5), (3, 3)),
                               np.fromfunction(lambda i, j: np.where(i > j, i, j * 0.5), (3, 3)))


def test_small_utilities():
    assert tnp.broadcast_shapes((2, 1), (3,), 1) == (2, 3)
    assert tnp.isscalar(1.5) and tnp.isscalar(np.float32(2)) and tnp.isscalar(np.array(1.0))
    assert not tnp.isscalar(np.ones(2)) and not tnp.isscalar([1.0])
    assert tj.jit(lambda x: np.asarray(tnp.isscalar(x)))(np.array(2.0))
    assert tnp.iterable([1]) and tnp.iterable(np.ones(2)) and not tnp.iterable(3) and not tnp.iterable(np.array(1))
    assert tnp.s_[1:2] == np.s_[1:2] and tnp.index_exp[:, 1] == np.index_exp[:, 1]
    assert isinstance(tnp.array_equal(X2, X2), np.ndarray)
    assert bool(tj.jit(lambda a, b: tnp.array_equal(a, b))(X2, X2.copy()))
    roots = tnp.roots(np.array([1.0, -6.0, 11.0, -6.0, 0.0, 0.0]))
    np.testing.assert_allclose(np.sort_complex(roots), [0, 0, 1, 2, 3], atol=1e-9)
    assert roots.dtype == np.complex128
    traced = tj.jit(lambda p: tnp.roots(p, strip_zeros=False))(np.array([1.0, -3.0, 2.0]))
    np.testing.assert_allclose(np.sort(traced.real), [1.0, 2.0])
    q, r = tnp.polydiv(np.array([1.0, -3.0, 2.0]), np.array([1.0, -1.0]), trim_leading_zeros=True)
    np.testing.assert_allclose(q, [1.0, -2.0])
    np.testing.assert_allclose(r, [0.0])
    np.testing.assert_array_equal(tnp.trim_zeros(np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]])), [[1]])
    np.testing.assert_array_equal(tnp.nanargmax(np.array([np.nan, 2.0, 1.0])), 1)


# ------------------------------------------------------------------------------------------ errors

ERROR_CASES = [
    ("compress-traced", lambda: tj.jit(lambda c, x: tnp.compress(c, x))(X1 > 0, X1), ConcretizationError, "size="),
    ("extract-traced", lambda: tj.jit(lambda x: tnp.extract(x > 0, x))(X1), ConcretizationError, "size="),
    ("intersect1d-traced", lambda: tj.jit(tnp.intersect1d)(A, B), ConcretizationError, "intersect1d.*size="),
    ("setdiff1d-traced", lambda: tj.jit(tnp.setdiff1d)(A, B), ConcretizationError, "setdiff1d.*size="),
    ("setxor1d-traced", lambda: tj.jit(tnp.setxor1d)(A, B), ConcretizationError, "setxor1d.*size="),
    ("union1d-traced", lambda: tj.jit(tnp.union1d)(A, B), ConcretizationError, "size="),
    ("unique_values-traced", lambda: tj.jit(tnp.unique_values)(A), ConcretizationError, "size="),
    ("delete-traced", lambda: tj.jit(lambda x, i: tnp.delete(x, i))(X1, np.array([1])), ConcretizationError,
     "assume_unique_indices"),
    ("delete-out-of-range", lambda: tnp.delete(X1, [7]), IndexError, "out of bounds"),
    ("insert-traced", lambda: tj.jit(lambda x, i: tnp.insert(x, i, 1.0))(X1, np.array(1)), ConcretizationError,
     "obj"),
    ("insert-out-of-range", lambda: tnp.insert(X1, 9, 1.0), IndexError, "out of bounds"),
    ("choose-raise-traced", lambda: tj.jit(lambda a: tnp.choose(a, [1, 2]))(np.array([0, 1])), ConcretizationError,
     "mode='wrap'"),
    ("choose-out-of-range", lambda: tnp.choose(np.array([0, 2]), [X1[:2], X1[2:4]]), ValueError, "invalid entry"),
    ("trim_zeros-traced", lambda: tj.jit(tnp.trim_zeros)(X1), ConcretizationError, "concrete"),
    ("trim_zeros-trim", lambda: tnp.trim_zeros(X1, "x"), ValueError, "trim"),
    ("roots-traced", lambda: tj.jit(tnp.roots)(X1), ConcretizationError, "strip_zeros=False"),
    ("fill_diagonal-inplace", lambda: tnp.fill_diagonal(X2, 1.0), ValueError, "inplace=False"),
    ("fill_diagonal-1d", lambda: tnp.fill_diagonal(X1, 1.0, inplace=False), ValueError, "2-d"),
    ("put-inplace", lambda: tnp.put(X2, [0], 1.0), ValueError, "inplace=False"),
    ("put-out-of-range", lambda: tnp.put(X2, [20], 1.0, inplace=False), IndexError, "out of bounds"),
    ("put_along_axis-inplace", lambda: tnp.put_along_axis(X2, np.zeros((4, 1), int), 1.0, 1), ValueError,
     "inplace=False"),
    ("piecewise-funclist", lambda: tnp.piecewise(X1, [X1 > 0], [1, 2, 3]), ValueError, "funclist"),
    ("nanargmax-all-nan", lambda: tnp.nanargmax(np.array([np.nan, np.nan])), ValueError, "All-NaN"),
    ("cumulative_sum-axis", lambda: tnp.cumulative_sum(X2), ValueError, "axis must be given"),
    ("matrix_transpose-1d", lambda: tnp.matrix_transpose(X1), ValueError, "rank >= 2"),
    ("block-depth", lambda: tnp.block([[X1], X1]), ValueError, "depths are mismatched"),
    ("block-tuple", lambda: tnp.block((X1, X1)), TypeError, "tuple"),
    ("ediff1d-cast", lambda: tnp.ediff1d(I1, to_end=[1.5]), TypeError, "to_end"),
    ("geomspace-zero", lambda: tnp.geomspace(0.0, 1.0), ValueError, "zero"),
    ("polyder-negative", lambda: tnp.polyder(X1, -1), ValueError, "non-negative"),
    ("polyint-k", lambda: tnp.polyint(X1, 3, k=[1.0, 2.0]), ValueError, "k must"),
    ("packbits-float", lambda: tnp.packbits(X1), TypeError, "integers or booleans"),
    ("unpackbits-int", lambda: tnp.unpackbits(I1), TypeError, "uint8"),
    ("unpackbits-bitorder", lambda: tnp.unpackbits(U8, bitorder="middle"), ValueError, "bitorder"),
    ("vectorize-signature", lambda: tnp.vectorize(np.sum, signature="(n)->()")(X2, X2), TypeError, "1 inputs"),
    ("vectorize-core", lambda: tnp.vectorize(lambda a, b: a, signature="(n),(n)->(n)")(X1, X2), ValueError,
     "core dimension 'n'"),
    ("histogramdd-bins", lambda: tnp.histogramdd(X2[:, :2], bins=[2, 3, 4]), ValueError, "one entry per dimension"),
    ("ix_-2d", lambda: tnp.ix_(X2), ValueError, "1-D"),
    ("mgrid-traced", lambda: tj.jit(lambda n: tnp.mgrid[0:n])(np.array(3)), ConcretizationError, "concrete"),
]


@pytest.mark.parametrize(("fn", "error", "match"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_errors(fn, error, match):
    with pytest.raises(error, match=match):
        fn()
