"""Solves with one right-hand side column: compiled code calls cblas_trsv instead of trsm (several times faster
in OpenBLAS); values as JAX's, every dtype, flag and batch, and the LLVM text names the routine it calls."""
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
N = 20          # above linalg_small.SMALL: LAPACK and CBLAS, not generated code


def _matrices(dtype, shape, rng):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    square = shape[-1] == shape[-2]
    return (a + N * np.eye(shape[-1]) if square else a).astype(dtype)


def _tolerance(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-11


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", [(), (3,)])
def test_solve_of_a_vector_and_a_column_as_jax(dtype, batch):
    rng = np.random.default_rng(0)
    a = _matrices(dtype, (*batch, N, N), rng)
    b = _matrices(dtype, (*batch, N, 1), rng)
    for rhs in (b, b[..., 0]) if not batch else (b,):
        f = tj.jit(tnp.linalg.solve)
        np.testing.assert_allclose(f(a, rhs), jnp.linalg.solve(a, rhs), rtol=_tolerance(dtype),
                                   atol=_tolerance(dtype))
        assert "trsv" in f.lower(a, rhs).as_llvm() and "trsm" not in f.lower(a, rhs).as_llvm()
    # the gradient with respect to b solves with a^T (transpose_a): the other order of the swaps and triangles
    w = _matrices(dtype, b.shape, rng).real

    def loss(M, a, b):
        return (M.linalg.solve(a, b).real * w).sum()
    got = tj.jit(tj.grad(lambda b: loss(tnp, a, b)))(b)
    np.testing.assert_allclose(got, jax.grad(lambda b: loss(jnp, a, b))(b), rtol=_tolerance(dtype),
                               atol=_tolerance(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_triangular_solve_of_one_column_as_jax(dtype):
    rng = np.random.default_rng(1)
    a = _matrices(dtype, (2, N, N), rng)
    b = _matrices(dtype, (2, N, 1), rng)
    for lower, transpose_a, conjugate_a, unit in itertools.product([True, False], repeat=4):
        params = {"left_side": True, "lower": lower, "transpose_a": transpose_a, "conjugate_a": conjugate_a,
                  "unit_diagonal": unit}
        f = tj.jit(lambda a, b, params=params: tj.lax.linalg.triangular_solve(a, b, **params))
        want = jax.lax.linalg.triangular_solve(a, b, **params)
        np.testing.assert_allclose(f(a, b), want, rtol=_tolerance(dtype), atol=_tolerance(dtype))
        assert "trsv" in f.lower(a, b).as_llvm()
    # more than one column, and one row on the right, still go through trsm
    wide = tj.jit(lambda a, b: tj.lax.linalg.triangular_solve(a, b, left_side=True, lower=True))
    assert "trsm" in wide.lower(a, _matrices(dtype, (2, N, 2), rng)).as_llvm()
    right = tj.jit(lambda a, b: tj.lax.linalg.triangular_solve(a, b, left_side=False, lower=True))
    row = _matrices(dtype, (2, 1, N), rng)
    np.testing.assert_allclose(right(a, row), jax.lax.linalg.triangular_solve(a, row, left_side=False, lower=True),
                               rtol=_tolerance(dtype), atol=_tolerance(dtype))
