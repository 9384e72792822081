"""tracejit.numpy.fft (issue 18): values and dtypes against NumPy, eager and compiled; derivatives against JAX and
check_grads to order 2; vmap against a loop; the compiled program calling NumPy's FFT; clear errors."""
import numpy as np
import pytest
from test_backend import ALL_DTYPES, sample

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend.steps import PythonStep
from tracejit.test_util import check_grads

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None

tfft = tnp.fft
rng = np.random.default_rng(0)


def normal(*shape):
    return rng.standard_normal(shape)


def cnormal(*shape):
    return normal(*shape) + 1j * normal(*shape)


X, Z, Z3 = normal(4, 6), cnormal(4, 6), cnormal(2, 3, 5)

# name: (function of (module, *args), arguments): the same code runs on numpy.fft and tracejit.numpy.fft.
VALUES = {
    "fft": (lambda f, z: f.fft(z), (Z,)),
    "fft_real_input": (lambda f, x: f.fft(x, axis=0), (X,)),
    "fft_pad": (lambda f, z: f.fft(z, n=9, axis=0, norm="ortho"), (Z,)),
    "fft_crop": (lambda f, z: f.fft(z, n=4, norm="forward"), (Z,)),
    "ifft": (lambda f, z: f.ifft(z, n=7), (Z,)),
    "ifft_ortho": (lambda f, z: f.ifft(z, axis=0, norm="ortho"), (Z,)),
    "ifft_forward": (lambda f, z: f.ifft(z, norm="forward"), (Z,)),
    "rfft": (lambda f, x: f.rfft(x), (X,)),
    "rfft_odd": (lambda f, x: f.rfft(x, n=5, axis=0, norm="ortho"), (X,)),
    "irfft": (lambda f, z: f.irfft(z), (Z,)),
    "irfft_odd": (lambda f, z: f.irfft(z, n=9, norm="ortho"), (Z,)),
    "irfft_forward": (lambda f, z: f.irfft(z, n=4, axis=0, norm="forward"), (Z,)),
    "hfft": (lambda f, z: f.hfft(z), (Z,)),
    "hfft_n": (lambda f, z: f.hfft(z, n=7, axis=0, norm="ortho"), (Z,)),
    "hfft_forward": (lambda f, z: f.hfft(z, norm="forward"), (Z,)),
    "ihfft": (lambda f, x: f.ihfft(x), (X,)),
    "ihfft_n": (lambda f, x: f.ihfft(x, n=5, axis=0, norm="ortho"), (X,)),
    "ihfft_forward": (lambda f, x: f.ihfft(x, norm="forward"), (X,)),
    "fft2": (lambda f, z: f.fft2(z), (Z3,)),
    "fft2_s": (lambda f, z: f.fft2(z, s=(4, 2), axes=(0, 2), norm="ortho"), (Z3,)),
    "ifft2": (lambda f, z: f.ifft2(z, axes=(2, 1)), (Z3,)),
    "rfft2": (lambda f, x: f.rfft2(x, s=(3, 7)), (X,)),
    "irfft2": (lambda f, z: f.irfft2(z, norm="forward"), (Z3,)),
    "irfft2_s": (lambda f, z: f.irfft2(z, s=(5, 3), axes=(2, 0)), (Z3,)),
    "fftn": (lambda f, z: f.fftn(z), (Z3,)),
    "fftn_s": (lambda f, z: f.fftn(z, s=(3, 8), axes=(1, 2)), (Z3,)),
    "ifftn": (lambda f, z: f.ifftn(z, axes=(0, 2), norm="ortho"), (Z3,)),
    "rfftn": (lambda f, x: f.rfftn(x, axes=(1, 0)), (normal(3, 4, 5),)),
    "irfftn": (lambda f, z: f.irfftn(z), (Z3,)),
    "irfftn_s": (lambda f, z: f.irfftn(z, s=(2, 4, 6), axes=(0, 1, 2), norm="ortho"), (Z3,)),
    "fftshift": (lambda f, x: f.fftshift(x), (normal(5, 4),)),
    "fftshift_axis": (lambda f, x: f.fftshift(x, axes=1), (normal(5, 5),)),
    "ifftshift": (lambda f, x: f.ifftshift(x, axes=(0,)), (normal(5, 4),)),
}


@pytest.mark.parametrize("name", list(VALUES))
def test_values_against_numpy(name):
    fn, args = VALUES[name]
    want = fn(np.fft, *args)
    for got in (fn(tfft, *args), tj.jit(lambda *a: fn(tfft, *a))(*args)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["fft", "fft_real_input", "rfft_odd", "irfft", "hfft_n", "ihfft", "rfft2",
                                  "irfftn_s", "fftn"])
def test_single_precision_as_numpy(name):
    """float32 data is transformed in float32, to complex64 (and back to float32), as NumPy 2 and JAX do."""
    fn, args = VALUES[name]
    args32 = [a.astype(np.complex64 if a.dtype.kind == "c" else np.float32) for a in args]
    want = fn(np.fft, *args32)
    got = tj.jit(lambda *a: fn(tfft, *a))(*args32)
    assert got.dtype == want.dtype and want.dtype in (np.complex64, np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_as_numpy(dtype):
    """Integers and bools in float64, float16 and bfloat16 in float32 (NumPy's loops), complex as it comes. (An
    inverse transform of float16 differs from NumPy's by float16's rounding of 1/n: NumPy's scale factor has the
    input's real dtype, 1/6 as 0.16663; here it is float32's.)"""
    x = sample(dtype, (6,))
    exact = x.astype(np.float32) if dtype == tnp.bfloat16 else x   # (NumPy's fft refuses bfloat16 from ml_dtypes 0.7)
    for fn in (tfft.fft, tfft.ifft, tfft.rfft, tfft.ihfft) if dtype.kind != "c" else (tfft.fft, tfft.ifft):
        want = getattr(np.fft, fn.__name__)(exact)
        got = tj.jit(fn)(x)
        assert got.dtype == want.dtype, (fn.__name__, got.dtype, want.dtype)
        rtol = np.finfo(np.float16).eps if dtype == np.float16 and fn in (tfft.ifft, tfft.ihfft) else 1e-6
        scale = np.abs(x.astype(np.complex128)).sum()
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=fn.__name__)


def test_frequencies_as_numpy():
    for n, d in [(8, 1.0), (7, 0.1), (1, 2.0), (6, np.float32(0.5))]:
        for ours, theirs in ((tfft.fftfreq, np.fft.fftfreq), (tfft.rfftfreq, np.fft.rfftfreq)):
            want = theirs(n, d)
            got = ours(n, d)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
            traced = tj.jit(lambda d, ours=ours, n=n: ours(n, d))(np.float64(d))
            np.testing.assert_allclose(traced, theirs(n, np.float64(d)), rtol=1e-15)
    assert tfft.fftfreq(4, dtype=np.float32).dtype == np.float32


def test_lax_fft():
    z = cnormal(2, 3, 4)
    np.testing.assert_allclose(tj.lax.fft(z, "fft", (3, 4)), np.fft.fftn(z, axes=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(tj.lax.fft(z, tj.lax.FftType.IRFFT, (6,)), np.fft.irfft(z, 6), rtol=1e-12)
    np.testing.assert_array_equal(tj.lax.fft(z, "ifft", ()), z)
    assert "fft[fft_lengths=(6,) fft_type=RFFT]" in str(tj.make_ir(lambda x: tj.lax.fft(x, "rfft", [6]))(X))

# ---------------------------------------------------------------------------------------------- derivatives


GRADS = {
    "fft": (lambda z: tfft.fft(z, n=5, norm="ortho"), (Z,)),
    "ifft": (lambda z: tfft.ifft(z, axis=0), (Z,)),
    "rfft": (lambda x: tfft.rfft(x, n=7), (X,)),
    "rfft_even": (lambda x: tfft.rfft(x, axis=0), (X,)),
    "irfft": (lambda z: tfft.irfft(z, norm="forward"), (Z,)),
    "irfft_odd": (lambda z: tfft.irfft(z, n=5), (Z,)),
    "hfft": (lambda z: tfft.hfft(z, n=6), (Z,)),
    "ihfft": (lambda x: tfft.ihfft(x, norm="ortho"), (X,)),
    "rfft2": (lambda x: tfft.rfft2(x), (X,)),
    "irfftn": (lambda z: tfft.irfftn(z, s=(3, 4, 7)), (Z3,)),
    "power_spectrum": (lambda x: tnp.sum(tnp.abs(tfft.rfft(tnp.sin(x))) ** 2), (X,)),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_check_grads_to_order_2(name):
    fn, args = GRADS[name]
    check_grads(fn, args, order=2)


@pytest.mark.skipif(jax is None, reason="JAX is not installed")
@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_against_jax(name):
    """The gradient of Re(sum(w * f(x))) for complex weights w: JAX's convention for complex cotangents, and its
    treatment of the imaginary parts of the zero and Nyquist frequencies that irfft ignores."""
    fn, args = GRADS[name]
    out = fn(*args)
    w = cnormal(*np.shape(out))

    def projected(lib, f):
        return lambda *a: lib.real(lib.sum(f(*a) * w))

    theirs = GRADS_JAX[name]
    want = jax.jit(jax.grad(projected(jnp, theirs)))(*args)
    got = tj.grad(projected(tnp, fn))(*args)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


GRADS_JAX = {
    "fft": lambda z: jnp.fft.fft(z, n=5, norm="ortho"),
    "ifft": lambda z: jnp.fft.ifft(z, axis=0),
    "rfft": lambda x: jnp.fft.rfft(x, n=7),
    "rfft_even": lambda x: jnp.fft.rfft(x, axis=0),
    "irfft": lambda z: jnp.fft.irfft(z, norm="forward"),
    "irfft_odd": lambda z: jnp.fft.irfft(z, n=5),
    "hfft": lambda z: jnp.fft.hfft(z, n=6),
    "ihfft": lambda x: jnp.fft.ihfft(x, norm="ortho"),
    "rfft2": lambda x: jnp.fft.rfft2(x),
    "irfftn": lambda z: jnp.fft.irfftn(z, s=(3, 4, 7)),
    "power_spectrum": lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(jnp.sin(x))) ** 2),
} if jax is not None else {}

# ---------------------------------------------------------------------------------------------- batching


@pytest.mark.parametrize("fn, arg, axis", [
    (lambda x: tfft.rfft(x, n=6), normal(3, 4, 5), 1),
    (lambda z: tfft.irfft2(z), cnormal(4, 3, 2), 2),
    (lambda z: tfft.fft(z, axis=0), cnormal(3, 5), 1),
])
def test_vmap_against_a_loop(fn, arg, axis):
    expected = np.stack([fn(np.take(arg, i, axis)) for i in range(arg.shape[axis])])
    np.testing.assert_allclose(tj.vmap(fn, in_axes=axis)(arg), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tj.jit(tj.vmap(fn, in_axes=axis))(arg), expected, rtol=1e-12, atol=1e-12)


def test_compiled_program_calls_numpys_fft():
    """Where generated code is not faster (large lengths with a prime factor above 5, also as an axis of a
    transform over several), the compiled program runs NumPy's FFT (test_fft_native.py tests the generated code)."""
    x = normal(3, 100_003)
    fn = tj.jit(lambda x: (tfft.irfft(tfft.rfft(x) * 2.0), tfft.irfft(x[:, :1502]), tfft.rfft2(x[:, :50_001])))
    steps = fn.lower(x)._entry.executable.steps
    assert sum(isinstance(s, PythonStep) for s in steps) == 4
    for got, want in zip(fn(x), (np.fft.irfft(np.fft.rfft(x) * 2.0), np.fft.irfft(x[:, :1502]),
                                 np.fft.rfft2(x[:, :50_001]))):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_through_numpys_fft_are_written_in_place_over_the_threads(dtype, monkeypatch):
    """The Python driver transforms many rows of a length it does not compile in chunks over the threads, each
    written into the output (NumPy 2's out=): every kind and dtype as NumPy; no copy of the input for irfft's
    length (its zero padding is no equation)."""
    from tracejit.primitives import fft
    chunks = []
    into = fft.fft_p.into
    monkeypatch.setattr(fft.fft_p, "into", lambda parallel_for, *a, **k: into(
        lambda fn, n: chunks.append(n) or parallel_for(fn, n), *a, **k))
    x = normal(600, 251).astype(dtype)       # (251: a prime, which no generated code transforms)
    z = (x + 1j * x[::-1]).astype(np.complex64 if dtype == np.float32 else np.complex128)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for f, arg in [(tfft.rfft, x), (tfft.fft, z), (tfft.ifft, z), (lambda v: tfft.irfft(v, n=251), z[:, :126])]:
        jf = tj.jit(f)
        assert "pad" not in jf.lower(arg).as_text()
        got, want = jf(arg), getattr(np.fft, f.__name__ if f.__name__ != "<lambda>" else "irfft")(
            arg, **({"n": 251} if f.__name__ == "<lambda>" else {}))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert chunks and all(n > 1 for n in chunks), chunks

# ---------------------------------------------------------------------------------------------- errors


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match="norm"):
        tfft.fft(Z, norm="sideways")
    with pytest.raises(ValueError, match="repeated axes"):
        tfft.fftn(Z, axes=(0, 0))
    with pytest.raises(TypeError, match="rfft: needs real input, got c128"):
        tfft.rfft(Z)
    with pytest.raises(ValueError, match="s and axes"):
        tfft.fftn(Z, s=(2, 3), axes=(0,))
    with pytest.raises(ValueError, match="two axes"):
        tfft.fft2(Z3, axes=(0, 1, 2))
    with pytest.raises(ValueError, match="one axis"):
        tfft.fft(Z, axis=(0, 1))
    with pytest.raises(ValueError, match="positive"):
        tfft.fft(Z, n=0)
    with pytest.raises(tj.ShapeError, match="trailing axes"):
        tj.lax.fft(Z, "irfft", (6,))
