"""tracejit.scipy.signal: values against SciPy and JAX (1-d, 2-d and 3-d, every mode, either operand the larger,
real and complex, eager and compiled), dtypes against JAX's, gradients against JAX's, batching, detrend's options,
and the errors JAX raises."""
import functools

import numpy as np
import pytest

import tracejit as tj
from tracejit.scipy import signal as T

ss = pytest.importorskip("scipy.signal")
try:
    import jax
    import jax.scipy.signal as js
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = js = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is the reference")
rng = np.random.default_rng(0)
MODES = ("full", "same", "valid")

# (in1's shape, in2's shape): in2 the smaller, the larger, equal; odd and even sizes
SHAPES = [((7,), (3,)), ((3,), (8,)), ((4,), (4,)), ((5, 6), (2, 3)), ((2, 3), (5, 6)), ((4, 4), (4, 4)),
          ((5, 4), (2, 4)), ((4, 5, 3), (2, 3, 2)), ((2, 2, 3), (3, 4, 3))]
SHAPES_2D = [s for s in SHAPES if len(s[0]) == 2]


def draw(shape, dtype=np.float64):
    x = rng.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.normal(size=shape)
    return x.astype(dtype)


def operands(shapes, complex_):
    dtype = np.complex128 if complex_ else np.float64
    return draw(shapes[0], dtype), draw(shapes[1], dtype)


# name: (tracejit function, SciPy's, JAX's name or None)
FUNCTIONS = {
    "convolve": (T.convolve, ss.convolve, "convolve"),
    "correlate": (T.correlate, ss.correlate, "correlate"),
    "convolve_fft": (lambda a, b, mode: T.convolve(a, b, mode, method="fft"), ss.fftconvolve, None),
    "correlate_fft": (lambda a, b, mode: T.correlate(a, b, mode, method="fft"),
                      lambda a, b, m: ss.correlate(a, b, m, method="fft"), None),
    "fftconvolve": (T.fftconvolve, ss.fftconvolve, "fftconvolve"),
    "convolve2d": (T.convolve2d, ss.convolve2d, "convolve2d"),
    "correlate2d": (T.correlate2d, ss.correlate2d, "correlate2d"),
}


def jax_fn(name):
    """JAX's function, compiled (its eager calls compile each operation: slower here)."""
    return jax.jit(getattr(js, name), static_argnums=2)


def applicable(name, shapes):
    return not name.endswith("2d") or len(shapes[0]) == 2


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_values_against_scipy(shapes, mode, complex_):
    a, b = operands(shapes, complex_)
    for name, (fn, ref, _) in FUNCTIONS.items():
        if applicable(name, shapes):
            want = ref(a, b, mode)
            got = fn(a, b, mode)
            assert got.shape == want.shape, name
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=name)


@needs_jax
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", [SHAPES[1], SHAPES[4], SHAPES[-1]], ids=str)
def test_values_against_jax_compiled(shapes, mode):
    """Compiled, in complex64 (the dtype kept), against JAX's."""
    a, b = (x.astype(np.complex64) for x in operands(shapes, True))
    for name, (fn, _, jname) in FUNCTIONS.items():
        if jname and applicable(name, shapes):
            want = jax_fn(jname)(a, b, mode)
            got = tj.jit(functools.partial(fn, mode=mode))(a, b)
            assert got.dtype == want.dtype == np.complex64, name
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=name)


@needs_jax
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("int32", "bool"), ("int64", "int8"), ("int32", "float32"),
                                    ("float64", "complex64"), ("int64", "float32")], ids=str)
def test_dtypes_as_jax(dtypes):
    a = (rng.normal(size=(6, 5)) * 3).astype(dtypes[0])
    b = (rng.normal(size=(3, 2)) * 3).astype(dtypes[1])
    for name, (fn, _, jname) in FUNCTIONS.items():
        if jname:
            want = jax_fn(jname)(a, b, "same")
            got = fn(a, b, "same")
            assert got.dtype == want.dtype, name
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=name)
    for dtype in dtypes:
        x = (rng.normal(size=(3, 8)) * 3).astype(dtype)
        assert T.detrend(x).dtype == jax.jit(js.detrend)(x).dtype


@needs_jax
@pytest.mark.parametrize("name, mode", [("convolve", "full"), ("convolve", "same"), ("convolve", "valid"),
                                        ("correlate", "same"), ("fftconvolve", "valid"), ("correlate2d", "same")])
def test_grad_against_jax(name, mode):
    fn, _, jname = FUNCTIONS[name]
    a, b = draw((5, 6)), draw((2, 3))
    for x, y in ((a, b), (b, a)):
        got = tj.grad(lambda p, q: (fn(p, q, mode) ** 2).sum(), argnums=(0, 1))(x, y)
        want = jax.jit(jax.grad(lambda p, q: (getattr(js, jname)(p, q, mode) ** 2).sum(), argnums=(0, 1)))(x, y)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)


@needs_jax
@pytest.mark.parametrize("kwargs", [{"bp": [3, 7]}, {"axis": 0, "type": "constant"}], ids=str)
def test_detrend_grad_against_jax(kwargs):
    x, w = draw((4, 10)), draw((4, 10))
    got = tj.grad(lambda d: (T.detrend(d, **kwargs) * w).sum())(x)
    want = jax.jit(jax.grad(lambda d: (js.detrend(d, **kwargs) * w).sum()))(x)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_vmap():
    a, b = draw((3, 9)), draw((3, 4))
    for name in ("convolve", "correlate", "fftconvolve"):
        fn, ref, _ = FUNCTIONS[name]
        got = tj.vmap(functools.partial(fn, mode="same"))(a, b)
        np.testing.assert_allclose(got, np.stack([ref(x, y, "same") for x, y in zip(a, b)]), atol=1e-12)
    got = tj.vmap(lambda x: T.correlate2d(x, b[:2, :3], "same"))(draw((2, 5, 4)))
    assert got.shape == (2, 5, 4)


def test_fftconvolve_axes():
    a, b = draw((3, 8, 5)), draw((3, 4, 5))
    for axes in (1, [1], (-2,), (1, 2)):
        for mode in MODES:
            np.testing.assert_allclose(T.fftconvolve(a, b, mode, axes=axes), ss.fftconvolve(a, b, mode, axes=axes),
                                       atol=1e-12)


@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"type": "constant"}, {"type": "constant", "axis": -2},
                                    {"bp": 4}, {"bp": [2, 3, 9]}, {"bp": np.array([5]), "axis": 1}], ids=str)
def test_detrend_against_scipy(kwargs):
    for x in (draw((6, 11)), draw((6, 11), np.complex128), rng.integers(-9, 9, (6, 11))):
        want = ss.detrend(x, **kwargs)
        np.testing.assert_allclose(T.detrend(x, **kwargs), want, atol=1e-12)
        np.testing.assert_allclose(tj.jit(lambda d: T.detrend(d, **kwargs))(x), want, atol=1e-12)
    assert T.detrend(draw(7, np.float32)).dtype == np.float32


@pytest.mark.parametrize("call, error, match", [
    (lambda S, a, b: S.convolve(a, b, "middle"), ValueError, "mode must be one of"),
    (lambda S, a, b: S.correlate(a, b, method="sum"), ValueError, "expected 'auto', 'fft', or 'direct'"),
    (lambda S, a, b: S.convolve(a, b[0]), ValueError, "same number of dimensions"),
    (lambda S, a, b: S.convolve(a, b[:, :0]), ValueError, "zero-size"),
    (lambda S, a, b: S.convolve(a, a.T), ValueError, "smaller than the other in every dimension"),
    (lambda S, a, b: S.fftconvolve(a, b[0]), ValueError, "same dimensionality"),
    (lambda S, a, b: S.fftconvolve(a, b, "middle"), ValueError, "mode must be one of"),
    (lambda S, a, b: S.fftconvolve(a, a.T, "valid"), ValueError, "at least as large as the other"),
    (lambda S, a, b: S.fftconvolve(a, b, axes=0), ValueError, "mapped axes must have same shape"),
    (lambda S, a, b: S.convolve2d(a, b, boundary="wrap"), NotImplementedError, "only supports boundary='fill'"),
    (lambda S, a, b: S.correlate2d(a, b, fillvalue=1), NotImplementedError, "only supports boundary='fill'"),
    (lambda S, a, b: S.convolve2d(a[0], b[0]), ValueError, "only supports 2-dimensional inputs"),
    (lambda S, a, b: S.correlate2d(a[None], b[None]), ValueError, "only supports 2-dimensional inputs"),
    (lambda S, a, b: S.detrend(a, type="quadratic"), ValueError, "Trend type must be 'linear' or 'constant'"),
    (lambda S, a, b: S.detrend(a, bp=[9]), ValueError, "Breakpoints must be non-negative"),
    (lambda S, a, b: S.detrend(a, overwrite_data=True), NotImplementedError, "overwrite_data"),
])
def test_errors(call, error, match):
    """tracejit's error, and JAX's of the same type."""
    a, b = draw((5, 6)), draw((2, 3))
    with pytest.raises(error, match=match):
        call(T, a, b)
    if jax is not None:
        with pytest.raises(error):
            call(js, jax.numpy.asarray(a), jax.numpy.asarray(b))
