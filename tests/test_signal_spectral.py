"""tracejit.scipy.signal's stft, istft, welch and csd: values, shapes and dtypes against JAX and SciPy over their
options (boundaries, padding, detrending, windows by name, tuple and array, scalings, averages, axes, one- and
two-sided, float32, float64 and integer input), under jit and vmap, gradients against JAX's (signal, sampling
frequency, array window), and the errors JAX raises."""
import warnings

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.scipy import signal as T
from tracejit.test_util import check_grads

ss = pytest.importorskip("scipy.signal")
try:
    import jax
    import jax.numpy as jnp
    import jax.scipy.signal as js
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = js = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is the reference")
rng = np.random.default_rng(0)
X = rng.normal(size=(2, 40))
Y = rng.normal(size=(2, 40))
Z16 = np.asarray(ss.stft(X, nperseg=16)[2])
Z3 = np.asarray(ss.stft(rng.normal(size=(30, 2, 3)), nperseg=8, axis=0)[2])     # (5, 2, 3, 9)
Z9 = np.asarray(ss.stft(X, nperseg=9, noverlap=6, window="hamming", return_onesided=False)[2])


def same(got, want, tol=1e-10):
    """got and want, tuples of arrays, agree in shape, dtype and value."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


# (function, args, kwargs): SciPy is the reference, for values, shapes and dtypes (float64 in, out as JAX's)
SCIPY_CASES = [
    ("stft", (X,), {"nperseg": 16}),
    ("stft", (X,), {"nperseg": 12, "noverlap": 5, "boundary": "even", "padded": False, "detrend": "linear"}),
    ("stft", (X,), {"nperseg": 12, "boundary": "odd", "return_onesided": False, "window": "hamming", "fs": 10.0}),
    ("stft", (X,), {"nperseg": 11, "boundary": "constant", "detrend": "constant", "nfft": 16,
                    "window": ("kaiser", 2.0)}),
    ("stft", (X.T,), {"nperseg": 8, "boundary": None, "padded": False, "axis": 0, "window": "blackman"}),
    ("stft", (X,), {"nperseg": 9, "window": "flattop"}),       # a window only SciPy computes
    ("welch", (X,), {"nperseg": 16}),
    ("welch", (X,), {"nperseg": 10, "noverlap": 3, "scaling": "spectrum", "average": "median", "detrend": "linear"}),
    ("welch", (X.T,), {"nperseg": 16, "axis": 0, "window": np.hanning(16), "nfft": 21, "return_onesided": False}),
    ("welch", (X[:, :7],), {"nperseg": 16, "detrend": False, "window": "bartlett"}),   # nperseg cut to 7
    ("csd", (X, Y), {"nperseg": 16, "average": "median"}),
    ("istft", (Z16,), {}),
    ("istft", (Z9,), {"nperseg": 9, "noverlap": 6, "window": "hamming", "input_onesided": False}),
    *[("istft", (Z3,), {"nperseg": 8, "time_axis": t, "freq_axis": f, "window": np.hanning(8), "boundary": False})
      for t, f in [(-1, 0), (0, -1), (1, 0)]],
]
# JAX is the reference where SciPy differs: float32 and integer dtypes, csd(x, None), broadcast operands
JAX_CASES = [
    ("stft", (X.astype(np.float32),), {"nperseg": 10, "window": "boxcar"}),
    ("welch", (rng.integers(0, 9, size=30).astype(np.int32),), {"nperseg": 8}),
    ("csd", (X[:, :33], Y[:1]), {"nperseg": 8, "fs": 3.0}),    # x zero-padded to y's length, broadcast
    ("csd", (X, None), {"nperseg": 16, "scaling": "spectrum"}),
    ("istft", (Z16[0].astype(np.complex64),), {"nperseg": 16, "nfft": 20}),
]


def _run(module, cases):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return [getattr(module, name)(*args, **kwargs) for name, args, kwargs in cases]


def test_spectra_match_scipy():
    for got, want in zip(_run(T, SCIPY_CASES), _run(ss, SCIPY_CASES)):
        same(got, want, 1e-9)


@needs_jax
def test_spectra_match_jax_where_scipy_differs():
    want = jax.jit(lambda: _run(js, JAX_CASES))()     # one compiled call: JAX's eager calls compile each operation
    for got, ref, (_, args, _) in zip(_run(T, JAX_CASES), want, JAX_CASES):
        same(got, ref, 1e-10 if np.asarray(args[0]).dtype in (np.float64, np.complex128) else 1e-5)


def test_istft_inverts_stft():
    t, x = T.istft(T.stft(X, nperseg=16)[2])
    np.testing.assert_allclose(x[:, :40], X, atol=1e-12)
    np.testing.assert_allclose(t, np.arange(2))      # as JAX's and SciPy's: x.shape[0] times


def test_complex_input_is_two_sided_with_a_warning():
    x = X + 1j * Y
    with pytest.warns(UserWarning, match="Input data is complex"):
        got = T.welch(x, nperseg=8)
    same(got, ss.welch(x, nperseg=8))


@needs_jax
def test_a_callable_detrend_sees_the_segments_as_jax_gives_them():
    x = rng.normal(size=(30, 2, 3))

    def detrend(d):
        return d - d[..., :1]

    same(T.welch(x, nperseg=8, axis=0, detrend=detrend),
         jax.jit(lambda x: js.welch(x, nperseg=8, axis=0, detrend=detrend))(x))


def test_jit_and_vmap_match_eager():
    def spectra(x, y, fs):
        f, t, Z = T.stft(x, fs=fs, nperseg=16)
        return f, t, Z, T.welch(x, fs=fs, nperseg=8, average="median")[1], T.csd(x, y, nperseg=8)[1], \
            T.istft(Z, nperseg=16)[1]

    same(tj.jit(spectra)(X, Y, 2.0), spectra(X, Y, 2.0))

    def per_row(x, y):
        return T.welch(x, nperseg=8)[1], T.csd(x, y, nperseg=8)[1], T.istft(T.stft(x, nperseg=8)[2], nperseg=8)[1]

    batched = tj.jit(tj.vmap(per_row))(X, Y)
    same(batched, [np.stack(row) for row in zip(*[per_row(x, y) for x, y in zip(X, Y)])])


@needs_jax
def test_gradients_match_jax():
    w = rng.random(16)

    def loss(np_, signal):
        return lambda x, fs, win: np_.sum(signal.welch(x, fs=fs, window=win)[1] ** 2)

    got = tj.jit(tj.grad(loss(tnp, T), argnums=(0, 1, 2)))(X, 2.0, w)
    want = jax.jit(jax.grad(loss(jnp, js), argnums=(0, 1, 2)))(X, 2.0, w)
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-9, atol=1e-12)


def test_gradients_match_finite_differences():
    def f(x, win):
        Z = T.stft(x, nperseg=8, window=win, detrend="linear")[2]
        back = T.istft(Z, nperseg=8, window=win)[1][:, :12]
        spectrum = T.csd(x, x[::-1], nperseg=4, average="median")[1]
        return tnp.abs(Z[..., 1]), back[:, 1::2] * x[:, :6], tnp.real(spectrum), tnp.imag(spectrum)

    check_grads(f, (X[:, :12], rng.random(8) + 0.5), order=1, modes=("fwd", "rev"))


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="Unknown boundary option"):
        T.stft(X, boundary="wrap")
    with pytest.raises(ValueError, match="noverlap must be less than nperseg"):
        T.welch(X, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match="nfft must be greater than or equal to nperseg"):
        T.welch(X, nperseg=8, nfft=4)
    with pytest.raises(ValueError, match="nperseg must be a positive integer"):
        T.welch(X, nperseg=0)
    with pytest.raises(ValueError, match="Unknown scaling"):
        T.welch(X, nperseg=8, scaling="power")
    with pytest.raises(ValueError, match='average must be "median" or "mean"'):
        T.welch(X, nperseg=8, average="max")
    with pytest.raises(ValueError, match="Unsupported detrend type"):
        T.welch(X, nperseg=8, detrend=True)
    with pytest.raises(ValueError, match="Trend type must be"):
        T.welch(X, nperseg=8, detrend="quadratic")
    with pytest.raises(ValueError, match="different from length of window"):
        T.welch(X, nperseg=8, window=np.ones(6))
    with pytest.raises(ValueError, match="window must be 1-D"):
        T.welch(X, window=np.ones((2, 3)))
    with pytest.raises(ValueError, match="same rank"):
        T.csd(X, Y[0])
    with pytest.raises(ValueError, match="cannot be broadcast"):
        T.csd(X, np.ones((3, 40)))
    with pytest.raises(ValueError, match="at least 2d"):
        T.istft(np.ones(8, np.complex128))
    with pytest.raises(ValueError, match="differing time and frequency axes"):
        T.istft(np.ones((5, 4), np.complex128), time_axis=0, freq_axis=-2)
    with pytest.raises(ValueError, match="window must have length"):
        T.istft(np.ones((5, 4), np.complex128), window=np.ones(5))
