"""The compiled FFT of lengths 2^a 3^b 5^c (Stockham passes of radix 4, 3, 5 and 2: backend/fft_kernels.stages,
fft_code's Winograd butterflies), every kind and precision: errors against numpy.fft in float64 at pocketfft's
level (or twice NumPy's own float32 error on the same rows, which exceeds that level at a few short lengths), for
every such length up to 512 and those users' signals have (480, 1000, 1536, 3000), the blocked path of large
transforms, the twiddles of lengths 8 does not divide, the reference interpreter and JAX; lengths with other
prime factors keep Bluestein's algorithm or pocketfft."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend import fft_kernels, runtime
from tracejit.primitives import fft_lowering
from tracejit.primitives.fft_lowering import compiled, direct

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None

rng = np.random.default_rng(7)
COMPLEX = {np.float32: np.complex64, np.float64: np.complex128}
SMOOTH = [n for n in range(1, 513) if direct(n, "fft")]


def argument(kind, n, dtype, rows):
    """rows arguments of kind's transform of length n (irfft's: n//2 + 1 complex values)."""
    if kind == "rfft":
        return rng.standard_normal((rows, n)).astype(dtype)
    size = n // 2 + 1 if kind == "irfft" else n
    return (rng.standard_normal((rows, size)) + 1j * rng.standard_normal((rows, size))).astype(COMPLEX[dtype])


def transform(lib, kind, n):
    return (lambda x: lib.fft.irfft(x, n=n)) if kind == "irfft" else getattr(lib.fft, kind)


def relative_rms(got, want):
    return np.sqrt(np.mean(np.abs(got - want) ** 2) / max(np.mean(np.abs(want) ** 2), 1e-300))


def check(kind, n, dtype, rows=4):
    """tracejit's transform of rows against NumPy's in float64, within pocketfft's level (test_fft_native.bound)
    or twice NumPy's own error in dtype."""
    x = argument(kind, n, dtype, rows)
    got = tj.jit(transform(tnp, kind, n))(x)
    want = transform(np, kind, n)(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
    assert got.dtype == transform(np, kind, n)(x).dtype and got.shape == want.shape, (kind, n)
    level = (5e-17 if dtype == np.float64 else 2.5e-8) * (np.log2(n) + 2)
    error = relative_rms(got, want)
    assert error <= max(level, 2 * relative_rms(transform(np, kind, n)(x), want)), (kind, n, dtype, error, level)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["fft", "ifft", "rfft", "irfft"])
def test_every_smooth_length_to_512_against_numpy_in_float64(kind, dtype):
    for n in SMOOTH:
        if direct(n, kind):
            check(kind, n, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["fft", "ifft", "rfft", "irfft"])
def test_users_lengths_run_the_passes_and_no_python_step(kind, dtype):
    for n in (480, 1000, 1536, 3000, 2 * 3**7, 5**5 * 2):
        assert direct(n, kind) and compiled(n, kind, batch=1000)
        x = argument(kind, n, dtype, 3)
        steps = tj.jit(transform(tnp, kind, n)).lower(x)._entry.executable.steps
        assert not any(type(step).__name__ == "PythonStep" for step in steps), (kind, n)
        check(kind, n, dtype, rows=3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_lengths_run_block_by_block(dtype):
    """Lengths over fft_lowering.BLOCK_BYTES whose last passes run on packed blocks of columns."""
    itemsize = np.dtype(COMPLEX[dtype]).itemsize
    for kind, n in (("fft", 3 * 2**16), ("ifft", 2**10 * 3**2 * 5**2), ("rfft", 2 * 3**4 * 2**11),
                    ("irfft", 2 * 5 * 2**15)):
        m = n // 2 if kind in ("rfft", "irfft") else n
        plan = fk_plan = fft_kernels.stages(m)
        first, _ = fft_lowering._blocking(fk_plan, m, itemsize)
        assert m * itemsize > fft_lowering.BLOCK_BYTES and first < len(plan) - 1, (kind, n, plan)
        check(kind, n, dtype, rows=1)


def test_a_batch_split_over_threads_matches_rows():
    x = rng.standard_normal((64, 3000)).astype(np.float32)
    steps = tj.jit(tnp.fft.rfft).lower(x)._entry.executable.steps
    assert runtime.NUM_THREADS == 1 or any(type(step).__name__ == "ParallelStep" for step in steps)
    got = tj.jit(tnp.fft.rfft)(x)
    np.testing.assert_array_equal(got[5], tj.jit(tnp.fft.rfft)(x[5]))
    assert relative_rms(got, np.fft.rfft(x.astype(np.float64))) <= 2.5e-8 * (np.log2(3000) + 2)


def test_passes_of_every_radix():
    assert fft_kernels.stages(3000) == [(4, 3000, 1), (3, 750, 4), (5, 250, 12), (5, 50, 60), (5, 10, 300),
                                        (2, 2, 1500)]
    assert [r for r, _, _ in fft_kernels.stages(1536)] == [4, 4, 4, 4, 3, 2]
    with pytest.raises(ValueError, match="factor 7"):
        fft_kernels.stages(28)


def test_twiddles_of_lengths_that_8_does_not_divide_are_rounded_once():
    """Each angle reduced exactly to the first octant (of the 8n-th roots), then rounded once: as close to the
    exact roots as powers of two's (test_fft_native.test_twiddles_are_rounded_once), float32's within half an ulp."""
    for n in (3, 5, 6, 12, 20, 250, 1500, 3 * 5**6, 5**8):
        angle = -2 * np.arccos(np.longdouble(-1)) * np.arange(n, dtype=np.longdouble) / n
        exact = np.cos(angle) + 1j * np.sin(angle)
        for dtype, bound in ((np.complex128, 2.3e-16), (np.complex64, 6e-8)):
            got = fft_kernels._roots(n, dtype)
            assert got.dtype == dtype and np.abs(got.astype(np.clongdouble) - exact).max() <= bound, (n, dtype)


def test_odd_and_other_lengths_keep_bluestein_or_pocketfft():
    """The real transforms of odd smooth lengths (their complex transform would be of length n/2) and lengths with
    another prime factor are not direct: Bluestein's where faster, else NumPy's pocketfft."""
    for n in (15, 45, 375):
        assert direct(n, "fft") and not direct(n, "rfft") and not direct(n, "irfft")
        for kind in ("rfft", "irfft"):
            x = argument(kind, n, np.float64, 2)
            np.testing.assert_allclose(tj.jit(transform(tnp, kind, n))(x), transform(np, kind, n)(x), rtol=1e-12,
                                       atol=1e-12 * np.sqrt(n))
    assert not any(direct(n, "fft") for n in (7, 14, 1001, 2 * 3 * 5 * 7))
    assert not compiled(100003, "fft") and not compiled(101, "rfft", batch=64)


def test_a_first_pass_of_odd_radix_interleaves_its_outputs():
    """Lengths whose first pass is of radix 3 or 5, p innermost (2 * 3^b 5^c, odd lengths), each vector width's
    worth of p at once: the outputs of one p lie r apart, those of a vector of p interleaved (Lanes.transpose)."""
    for n in (6, 10, 30, 90, 150, 75, 3**5, 2 * 5**4):
        assert fft_kernels.stages(n)[0][0] in (3, 5), n
        check("fft", n, np.float64)
        check("ifft", n, np.float32)


def test_against_the_reference_interpreter():
    def fn(x, z):
        return tnp.fft.irfft(tnp.fft.rfft(x) * z, n=1000), tnp.fft.ifft(tnp.fft.fft(z) * 2.0)

    x = rng.standard_normal((2, 1000))
    z = rng.standard_normal(501) + 1j * rng.standard_normal(501)
    closed = tj.make_ir(fn)(x, z)
    for got, want in zip(tj.jit(fn)(x, z), tj.eval_ir(closed, x, z)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(jax is None, reason="JAX is not installed")
def test_against_jax():
    jax.config.update("jax_enable_x64", True)
    x = rng.standard_normal((3, 1536))
    z = (rng.standard_normal((100, 480)) + 1j * rng.standard_normal((100, 480))).astype(np.complex64)
    for fn, arg, tol in ((lambda v, M: M.fft.rfft(v), x, 1e-12), (lambda v, M: M.fft.ifft(v, n=3000), x, 1e-12),
                         (lambda v, M: M.fft.fft(v), z, 1e-4)):
        got, want = tj.jit(lambda v, fn=fn: fn(v, tnp))(arg), jax.jit(lambda v, fn=fn: fn(v, jnp))(arg)
        np.testing.assert_allclose(got, np.asarray(want), rtol=tol, atol=tol * np.abs(want).max())


def test_gradient_of_a_mixed_radix_transform_matches_finite_differences():
    def power(lib):
        return lambda x: lib.sum(lib.abs(lib.fft.rfft(lib.sin(x))) ** 2)

    x, step = rng.standard_normal(120), 1e-6
    want = [(power(np)(x + step * e) - power(np)(x - step * e)) / (2 * step) for e in np.eye(120)]
    np.testing.assert_allclose(tj.jit(tj.grad(power(tnp)))(x), want, rtol=1e-6, atol=1e-6)
