"""jnp.take and jnp.take_along_axis as JAX's: out-of-range indices fill by default (NaN, the signed integer dtype's
least value, the unsigned one's largest, True), negative ones in range count from the end; the modes 'clip',
'wrap', 'fill', 'promise_in_bounds', fill_value and the hints, eagerly and under jit, vmap and grad, against JAX."""
import ml_dtypes
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

INDICES = np.array([-1, -5, -6, 5, 7, 2, -40000, 1 << 20])   # (JAX wraps int64 extremes to int32 first)
DTYPES = [np.float32, np.float64, np.complex64, np.float16, ml_dtypes.bfloat16, np.int8, np.int32, np.int64,
          np.uint8, np.uint32, np.bool_]


def same(got, want):
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    as_float = want.dtype == ml_dtypes.bfloat16      # (assert_array_equal does not know bfloat16's NaN)
    np.testing.assert_array_equal(got.astype(np.float32) if as_float else got, want.astype(np.float32) if as_float else want)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_default_fills_out_of_range_for_every_dtype(dtype):
    a = (np.arange(5) % 2 if dtype == np.bool_ else np.arange(5)).astype(dtype)
    for program in (lambda m, a, i: m.take(a, i), lambda m, a, i: m.take_along_axis(a, i, 0)):
        want = jax.jit(lambda a, i, p=program: p(jnp, a, i))(a, INDICES)
        same(tj.jit(lambda a, i, p=program: p(tnp, a, i))(a, INDICES), want)
        same(program(tnp, a, INDICES), want)                  # eagerly, on NumPy arrays


def test_modes_fill_value_and_hints():
    a2 = np.arange(12.0).reshape(3, 4)
    i2 = np.array([[0, 4], [-1, -5], [3, 9]])
    cases = [lambda m, a, i: m.take(a, i, mode="clip"),
             lambda m, a, i: m.take(a, i, mode="wrap"),
             lambda m, a, i: m.take(a, i, mode="fill", fill_value=-7.0),
             lambda m, a, i: m.take(a, i, fill_value=300),
             lambda m, a, i: m.take(a, i, unique_indices=True, indices_are_sorted=True),
             lambda m, a, i: m.take(a, i, axis=1),
             lambda m, a, i: m.take(a, i[:, :1], axis=0, mode="fill", fill_value=1.5),
             lambda m, a, i: m.take(a, i.astype(np.int8)),
             lambda m, a, i: m.take(a, m.abs(i).astype(np.uint32), axis=1),
             lambda m, a, i: m.take(a, 20),
             lambda m, a, i: m.take(a, -2, axis=1),
             lambda m, a, i: m.take_along_axis(a, i, 1),
             lambda m, a, i: m.take_along_axis(a, i, 1, mode="clip"),
             lambda m, a, i: m.take_along_axis(a, m.abs(i) % 4, 1, mode="promise_in_bounds"),   # (JAX: in [0, n))
             lambda m, a, i: m.take_along_axis(a, i, 1, fill_value=-1.0),
             lambda m, a, i: m.take_along_axis(a, i[:, 0], None),
             lambda m, a, i: a.at[i].get(),
             lambda m, a, i: a.at[i[:, 0], 1].get(mode="fill", fill_value=-3.0),
             lambda m, a, i: a.at[:, i[0]].get(mode="fill"),
             lambda m, a, i: a.at[i[0]].get(mode="clip"),
             lambda m, a, i: a.at[i[0] % 3].get(mode="promise_in_bounds"),
             lambda m, a, i: a[i[:, 0]]]                 # plain indexing clamps under jit, as JAX's gathers
    for program in cases:
        want = jax.jit(lambda a, i, p=program: p(jnp, a, i))(a2, i2)
        same(tj.jit(lambda a, i, p=program: p(tnp, a, i))(a2, i2), want)
    extremes = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 1])
    same(tj.jit(tnp.take)(a2, extremes), [np.nan, np.nan, 1.0])       # outside [-n, n): filled, never wrapped
    u8 = np.arange(5, dtype=np.uint8)
    same(tj.jit(lambda a, i: tnp.take(a, i, fill_value=300))(u8, INDICES), jnp.take(u8, INDICES, fill_value=300))


def test_refused_modes_and_empty_axes_as_jax():
    a = np.arange(5.0)
    for m, jit in ((jnp, jax.jit), (tnp, tj.jit)):
        calls = ((lambda m, jit: jit(lambda i: m.take(a, i, mode="raise"))(INDICES), NotImplementedError),
                 (lambda m, jit: m.take(a, INDICES, mode="promise_in_bounds"), ValueError),
                 (lambda m, jit: m.take(a, INDICES, mode="bogus"), ValueError),
                 (lambda m, jit: m.take_along_axis(a, INDICES, 0, mode="wrap"), ValueError),
                 (lambda m, jit: m.take(np.zeros(0), np.array([0]), mode="clip"), IndexError),
                 (lambda m, jit: m.take(a, np.array([1.0])), (TypeError, ValueError)))
        for call, kind in calls:
            with pytest.raises(kind):
                call(m, jit)
        assert np.asarray(m.take(np.zeros(0), np.zeros(0, int))).shape == (0,)
    np.testing.assert_array_equal(tj.jit(lambda x: np.take(x, np.array([1, -1])))(a), [1.0, 4.0])   # mode 'raise'
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 5"):
        tj.jit(lambda x: np.take(x, np.array([0, 5])))(a)          # concrete indices: checked, as NumPy's


def test_under_vmap_and_grad():
    """Filled positions get no gradient (JAX: zero); vmap maps the fill per row."""
    a = np.array([0.5, -1.0, 2.0, 3.5, 4.0])
    rows, idx = np.arange(6.0).reshape(2, 3), np.array([[0, 3], [-1, -4]])
    programs = [
        (lambda J, m: J.grad(lambda a: m.sum(m.take(a, INDICES, fill_value=2.0) ** 2)), (a,)),
        (lambda J, m: J.grad(lambda a: m.nansum(m.take(a, INDICES) * a[0])), (a,)),
        (lambda J, m: J.grad(lambda a: m.sum(m.take_along_axis(a, INDICES, 0, fill_value=2.0) ** 3)), (a,)),
        (lambda J, m: J.vmap(lambda r, i: m.take(r, i)), (rows, idx)),
        (lambda J, m: J.vmap(lambda r, i: m.take_along_axis(r, i, 0, fill_value=9.0)), (rows, idx)),
        (lambda J, m: J.vmap(lambda r: m.take(r, idx[1], mode="wrap")), (rows,)),
        (lambda J, m: J.jacrev(lambda r: J.vmap(lambda r, i: m.take(r, i, fill_value=0.0))(r, idx)), (rows,)),
    ]
    for program, args in programs:
        want = program(jax, jnp)(*args)
        np.testing.assert_allclose(tj.jit(program(tj, tnp))(*args), want, rtol=1e-14)
        np.testing.assert_allclose(program(tj, tnp)(*args), want, rtol=1e-14)
