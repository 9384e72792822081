"""tracejit.scipy.linalg's special matrices against jax.scipy.linalg's (values, dtypes, shapes; batched over
leading axes where JAX batches), eagerly and compiled, and their errors."""
import numpy as np
import pytest

import tracejit as tj
from tracejit.scipy import linalg

jax = pytest.importorskip("jax", reason="compared with jax.scipy.linalg (pip install 'tracejit[test]')")
jax.config.update("jax_enable_x64", True)
import jax.scipy.linalg as jla

R = np.random.default_rng(4)
c, r, z = R.normal(size=4), R.normal(size=3), R.normal(size=3) + 1j * R.normal(size=3)
batch = R.normal(size=(2, 5))
# name: [(args, kwargs)]; arrays are traced under jit, the rest static
CASES = {
    "toeplitz": [((c,), {}), ((c, r), {}), ((z,), {}), ((batch, r), {}), ((np.arange(3), np.arange(2) * 1.5), {})],
    "hankel": [((c,), {}), ((c, r), {}), ((batch, batch[:, :2]), {})],
    "circulant": [((c,), {}), ((batch,), {}), ((np.arange(3),), {})],
    "companion": [((c,), {}), ((batch,), {}), ((np.array([2, 3, 4]),), {})],
    "leslie": [((c, r), {}), ((batch, batch[:, 1:]), {})],
    "fiedler": [((c,), {}), ((batch,), {})],
    "convolution_matrix": [((c, 5), {"mode": m}) for m in ("full", "valid", "same")] + [((batch, 3), {}),
                                                                                      ((c[:2], 6), {"mode": "same"})],
    "hilbert": [((4,), {})],
    "helmert": [((5,), {}), ((4,), {"full": True})],
    "hadamard": [((8,), {}), ((4,), {"dtype": np.float32})],
    "dft": [((4,), {}), ((3,), {"scale": "sqrtn"}), ((5,), {"scale": "n", "dtype": np.complex64})],
}


@pytest.mark.parametrize("name", CASES)
def test_special_matrices_as_jax(name):
    for args, kwargs in CASES[name]:
        want = np.asarray(getattr(jla, name)(*args, **kwargs))
        arrays = [k for k, a in enumerate(args) if isinstance(a, np.ndarray)]

        def traced(*xs, args=args, kwargs=kwargs, arrays=arrays):
            full = list(args)
            for k, x in zip(arrays, xs):
                full[k] = x
            return getattr(linalg, name)(*full, **kwargs)

        for got in (getattr(linalg, name)(*args, **kwargs), tj.jit(traced)(*[args[k] for k in arrays])):
            assert got.shape == want.shape and got.dtype == want.dtype, (name, args, got.dtype, want.dtype)
            tol = 1e-6 if want.dtype in (np.complex64, np.float32) else 1e-12   # (JAX's dft computes in complex64)
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_special_matrix_errors_name_what_they_got():
    with pytest.raises(ValueError, match="at least 2; got shape"):
        linalg.companion(np.ones(1))
    with pytest.raises(ValueError, match="one less than the length of f"):
        linalg.leslie(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="positive power of 2; got 6"):
        linalg.hadamard(6)
    with pytest.raises(ValueError, match="mode must be one of"):
        linalg.convolution_matrix(np.ones(3), 2, mode="wide")
    with pytest.raises(ValueError, match="complex floating-point type"):
        linalg.dft(3, dtype=np.float64)
    np.testing.assert_allclose(tj.grad(lambda v: linalg.toeplitz(v).sum())(c), [4, 6, 4, 2])
