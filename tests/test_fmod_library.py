"""Compiled fmod and % of floats run the vector math library's fmod (libcalls.EXACT): exact in double where
|x / y| < 2**52, the C library's fmod on other lanes. Bit for bit against NumPy (signed zeros and NaNs too) on every
pair of special values, on quotients a rounding away from an integer, and on random values whose quotients reach
past 2**52 (the C library's lanes)."""
import itertools

import ml_dtypes
import numpy as np
import pytest
from test_mathlib import _apply_library  # (the library function called on whole vectors of each width)

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend import libcalls

FLOATS = [np.float32, np.float64]


def _same_bits(got, want):
    """Equal values with equal signs (zeros), or both NaN."""
    assert got.dtype == want.dtype
    both_nan = np.isnan(got) & np.isnan(want)
    same = (got == want) & (np.signbit(got) == np.signbit(want))
    bad = ~(both_nan | same)
    assert not bad.any(), (got[bad][:5], want[bad][:5])


def _special(dtype):
    info = np.finfo(dtype)
    values = [0.0, 1.0, 1.5, 3.0, 7.25, 0.1, 2 * np.pi, 1e-3, 1e3, 2.0**60, float(info.tiny),
              float(info.smallest_subnormal), float(info.max), np.inf, np.nan]
    return np.array(values + [-v for v in values], dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_every_pair_of_special_values(dtype):
    s = _special(dtype)
    x, y = (np.array(v, dtype) for v in zip(*itertools.product(s, s)))
    for fn, reference in ((tnp.fmod, np.fmod), (lambda a, b: a % b, lambda a, b: a % b)):
        with np.errstate(all="ignore"):
            _same_bits(tj.jit(fn)(x, y), reference(x, y))


@pytest.mark.parametrize("dtype", FLOATS)
def test_quotients_next_to_integers_and_beyond_two_to_the_52(dtype):
    rng = np.random.default_rng(1)
    n = 100_003                                    # (not a whole number of vectors: the scalar remainder loop too)
    y = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype)
    k = np.floor(rng.random(n) * 2.0 ** rng.integers(0, 50, n))
    on = (k * y).astype(dtype)
    x = np.where(rng.random(n) < 0.5, np.nextafter(on, np.inf, dtype=dtype), np.nextafter(on, -np.inf, dtype=dtype))
    wide = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 31, n)).astype(dtype)   # quotients up to 1e60
    for a, b in ((x, y), (on, y), (wide, y), (y, wide)):
        with np.errstate(all="ignore"):
            _same_bits(tj.jit(tnp.fmod)(a, b), np.fmod(a, b))
            _same_bits(tj.jit(lambda a, b: a % b)(a, b), a % b)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_half_floats(dtype):
    rng = np.random.default_rng(2)
    x, y = (rng.standard_normal(1000) * 50).astype(dtype), (rng.standard_normal(1000) + 0.1).astype(dtype)
    want = np.fmod(x.astype(np.float32), y.astype(np.float32)).astype(dtype)    # exact in f32, so exact in dtype
    _same_bits(tj.jit(tnp.fmod)(x, y).astype(np.float32), want.astype(np.float32))


def test_loops_call_the_library_not_the_c_library_per_element():
    x = np.linspace(-10, 10, 1000)
    text = tj.jit(lambda x: x % (2 * np.pi)).lower(x).as_llvm()
    assert "frem" not in text and "tj_fmod_double_v" in text


@pytest.mark.parametrize("ty", ["float", "double"])
def test_fmod_is_numpys_at_every_width(ty):
    """The library's fmod (libcalls.EXACT) gives NumPy's bits at every width, on lanes it computes exactly and on
    those the C library's fmod takes (quotients past 2**52, zeros, infinities, NaNs) in one vector
    (the tests above check compiled loops)."""
    rng = np.random.default_rng(5)
    dtype = {"float": np.float32, "double": np.float64}[ty]
    x = (rng.standard_normal(4000) * 10.0 ** rng.integers(-20, 21, 4000)).astype(dtype)
    y = (rng.standard_normal(4000) * 10.0 ** rng.integers(-3, 4, 4000)).astype(dtype)
    x[::97], y[::89], x[::83], y[::79] = np.inf, 0.0, np.nan, -np.inf
    with np.errstate(all="ignore"):
        want = np.fmod(x, y)
    for lanes in libcalls.LANES:
        got = _apply_library("fmod", ty, lanes, x, y)
        same = (got.view(f"u{got.itemsize}") == want.view(f"u{got.itemsize}")) | (np.isnan(got) & np.isnan(want))
        assert same.all(), (lanes, x[~same][:3], y[~same][:3], got[~same][:3])
