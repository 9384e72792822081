"""Compiled cholesky runs LAPACK's lower form column-major, between blocked in-place transposes of one triangle
(linalg_lapack.mirror_triangle): values as JAX's for sizes on and off the transposes' 16 x 16 tiles, every dtype,
batches, an input whose upper triangle is garbage (lax.linalg.cholesky without symmetrizing reads the lower one),
the symmetrized input that jnp.linalg.cholesky computes into the output's own buffer, and failures."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

SIZES = [1, 15, 16, 17, 37, 70]
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _spd(n, dtype, batch, rng):
    a = rng.standard_normal((*batch, n, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((*batch, n, n))
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _tolerance(dtype):
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-11


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_lower_triangle_only_and_symmetrized_as_jax(n, dtype):
    rng = np.random.default_rng(n)
    a = _spd(n, dtype, (2,), rng)
    garbage = a + np.triu(rng.standard_normal(a.shape), 1).astype(dtype) * 100     # the upper triangle unread
    raw = tj.jit(lambda a: tj.lax.linalg.cholesky(a, symmetrize_input=False))(garbage)
    want = jax.lax.linalg.cholesky(garbage, symmetrize_input=False)
    np.testing.assert_allclose(raw, want, rtol=_tolerance(dtype), atol=_tolerance(dtype))
    assert np.all(np.triu(raw, 1) == 0)
    computed = tj.jit(lambda a: tj.lax.linalg.cholesky(a * 2, symmetrize_input=False))(garbage)   # (in place)
    np.testing.assert_allclose(computed, jax.lax.linalg.cholesky(garbage * 2, symmetrize_input=False),
                               rtol=_tolerance(dtype), atol=_tolerance(dtype))
    f = tj.jit(tnp.linalg.cholesky)
    np.testing.assert_allclose(f(a), jnp.linalg.cholesky(a), rtol=_tolerance(dtype), atol=_tolerance(dtype))
    np.testing.assert_allclose(f(a[0]), jnp.linalg.cholesky(a[0]), rtol=_tolerance(dtype), atol=_tolerance(dtype))


def test_a_failed_factorization_is_nan_on_and_below_the_diagonal():
    rng = np.random.default_rng(0)
    a = _spd(37, np.float64, (3,), rng)
    a[1, 20, 20] = -1e6                       # the second matrix is not positive definite
    got = tj.jit(tnp.linalg.cholesky)(a)
    np.testing.assert_allclose(got[[0, 2]], np.linalg.cholesky(a[[0, 2]]), rtol=1e-11, atol=1e-11)
    assert np.all(np.isnan(got[1][np.tril_indices(37)])) and np.all(np.triu(got[1], 1) == 0)
