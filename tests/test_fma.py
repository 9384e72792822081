"""The fma primitive (tracejit.primitives.fma): a * b + c rounded once, in each float dtype against the exact
rational value rounded once (cases where a second rounding would differ included); compiled code against its NumPy
impl bit for bit, fused and not; its derivatives against JAX's of a * b + c; batching; the passes."""
import math
from fractions import Fraction

import jax
import ml_dtypes
import numpy as np
import pytest
from test_backend import compiled_and_reference

import tracejit as tj
from tracejit.core.errors import ShapeError
from tracejit.core.ops import ops
from tracejit.passes import cse, dce, fold
from tracejit.test_util import check_grads

jax.config.update("jax_enable_x64", True)

DTYPES = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64)]
IDS = [d.name for d in DTYPES]


def fma(a, b, c):
    return ops.fma(a, b, c)


def rounded(x, dtype):
    """The Fraction x rounded to nearest (ties to even) in dtype, subnormals and overflow included."""
    info = ml_dtypes.finfo(dtype)
    m = abs(x)
    if m == 0:
        return np.zeros((), dtype)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    e -= Fraction(2) ** e > m
    quantum = Fraction(2) ** (max(e, info.minexp) - info.nmant)
    n = math.floor(m / quantum)
    rest = m / quantum - n
    n += rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1)
    value = n * quantum
    out = math.inf if value > Fraction(float(info.max)) else float(value)
    return np.asarray(-out if x < 0 else out, dtype)


def exact(a, b, c, dtype):
    return np.array([rounded(Fraction(float(p)) * Fraction(float(q)) + Fraction(float(r)), dtype)
                     for p, q, r in zip(a.ravel(), b.ravel(), c.ravel())], dtype).reshape(a.shape)


def hard_cases(dtype):
    """First three: sums just below a midpoint of dtype's floats, by less than the wider float (float32 for the
    16-bit floats, float64 for float32, the unfused product for float64) holds: rounded there first, they go up
    (to even), correctly rounded down. Then float64's intermediate overflows and underflows."""
    p = ml_dtypes.finfo(dtype).nmant + 1
    a = 2.0 ** -p * (1 - 2.0 ** (1 - p))
    b, c = 1 + 2.0 ** (1 - p), 1 + 2.0 ** (1 - p)
    cases = [(a, b, c), (-a, b, -c), (a, -b, -c), (a, b, 1.0), (a * 2.0 ** -8, b, c * 2.0 ** -8)]
    if dtype == ml_dtypes.bfloat16:      # a product of 8-bit factors is exact in float32: its midpoint 259 / 256
        cases[:3] = [(1.75, 37 / 32, -(2.0 ** -30)), (-1.75, 37 / 32, 2.0 ** -30), (1.75, -37 / 32, 2.0 ** -30)]
    if dtype == np.float64:
        big = np.finfo(np.float64).max
        cases += [(1.5 * 2.0 ** 1000, 2.0 ** 24, -big), (2.0 ** 1000, 2.0 ** -10, 1.0), (2.0 ** -600, 2.0 ** -500, 5e-324),
                  (2.0 ** -600 * (1 + 2.0 ** -52), -(2.0 ** -470), 2.0 ** -1060), (3.0 ** 300, 3.0 ** 300, -1.0),
                  (1e-300, 1e-300, -0.0), (1e-200, 1e-200, 2.0 ** -1074)]
    return [np.array(x, dtype) for x in zip(*cases)]


def random_cases(dtype, n=600, seed=0):
    """Operands over much of dtype's range, and sums that nearly cancel (c near -a * b)."""
    rng = np.random.default_rng(seed)
    span = min(ml_dtypes.finfo(dtype).maxexp - 4, 60)
    a, b = (rng.normal(size=n) * 2.0 ** rng.integers(-span // 2, span // 2, n) for _ in range(2))
    c = rng.normal(size=n) * 2.0 ** rng.integers(-span, span, n)
    near = rng.random(n) < 0.3
    c = np.where(near, -(a.astype(dtype).astype(np.float64) * b.astype(dtype).astype(np.float64))
                 * (1 + rng.normal(size=n) * 2.0 ** -10), c)
    return [x.astype(dtype) for x in (a, b, c)]


def bits(x):
    x = np.asarray(x)
    return x.view(f"u{x.dtype.itemsize}")


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_impl_is_correctly_rounded(dtype):
    for a, b, c in (hard_cases(dtype), random_cases(dtype)):
        got = np.asarray(fma(a, b, c))
        assert got.dtype == dtype
        np.testing.assert_array_equal(bits(got), bits(exact(a, b, c, dtype)))


def test_a_second_rounding_would_differ():
    """The hard cases are hard: rounded first to float32 (the 16-bit floats: as a float32 fma would), or to
    float64 (float32), or unfused (float64), they round wrong."""
    for dtype in DTYPES:
        a, b, c = hard_cases(dtype)
        if dtype == np.float64:
            with np.errstate(over="ignore"):
                naive = a * b + c
        else:
            wide = [x.astype(np.float64) for x in (a, b, c)]
            naive = (wide[0] * wide[1] + wide[2]).astype(np.float32).astype(dtype)
        assert (bits(naive[:3]) != bits(fma(a, b, c)[:3])).all(), dtype


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_compiled_bits_are_the_impls(dtype):
    """Alone, chained (16-bit floats are float32 in registers: fma rounds to their precision itself) and with a
    rank-0 operand, fused and not, including infinities, NaNs, signed zeros and subnormals."""
    a, b, c = (np.concatenate([h, r]) for h, r in zip(hard_cases(dtype), random_cases(dtype, seed=1)))
    info = ml_dtypes.finfo(dtype)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, float(info.max), float(info.smallest_subnormal), 1.0],
                       dtype)
    grid = np.meshgrid(special, special, special, indexing="ij")
    a, b, c = (np.concatenate([x, g.ravel()]) for x, g in zip((a, b, c), grid))

    def f(a, b, c):
        once = fma(a, b, c)
        return once, fma(once, b, c), fma(a, b, c[3])

    for fuse in (True, False):
        got, want = compiled_and_reference(f, a, b, c, fuse=fuse)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype == dtype
            nan = np.isnan(w.astype(np.float64))
            np.testing.assert_array_equal(np.isnan(g.astype(np.float64)), nan)
            np.testing.assert_array_equal(bits(g)[~nan], bits(w)[~nan])


def test_derivatives_are_those_of_a_times_b_plus_c():
    rng = np.random.default_rng(2)
    a, b, c = (rng.normal(size=5) for _ in range(3))
    tangents = tuple(rng.normal(size=5) for _ in range(3))
    _, got = tj.jvp(fma, (a, b, c), tangents)
    _, want = jax.jvp(lambda a, b, c: a * b + c, (a, b, c), tangents)
    np.testing.assert_allclose(got, want, rtol=1e-15)
    for argnums in (0, 1, 2, (0, 1, 2)):
        got = tj.grad(lambda a, b, c: (fma(a, b, c) ** 2).sum(), argnums=argnums)(a, b, c)
        want = jax.grad(lambda a, b, c: ((a * b + c) ** 2).sum(), argnums=argnums)(a, b, c)
        np.testing.assert_allclose(got, want, rtol=1e-14)
    check_grads(fma, (a, b, c), order=2)
    check_grads(lambda a, c: fma(a, a[0], c), (a, c[0]), order=2)     # rank-0 operands: tangents broadcast


def test_vmap_matches_a_loop():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(4, 3)), rng.normal(size=(3, 4))
    c = np.float64(0.25)
    got = tj.vmap(fma, in_axes=(0, 1, None))(a, b, c)
    want = np.stack([fma(a[i], b[:, i], c) for i in range(4)])
    np.testing.assert_array_equal(got, want)
    got = tj.jit(tj.vmap(tj.vmap(fma, in_axes=(0, None, 0)), in_axes=(None, 0, None)))(a[0], b, a[1])
    want = np.array([[fma(a[0, j], b[i], a[1, j]) for j in range(3)] for i in range(3)])
    np.testing.assert_array_equal(got, want)


def test_passes_fold_and_share_it():
    x = np.linspace(0.1, 1, 4)
    closed = tj.make_ir(lambda x: fma(x, x, 1.0 * x) + fma(x, x, 1.0 * x))(x)
    assert str(dce(cse(closed))).count("fma") == 1
    consts = np.float32([0.1, 0.2]), np.float32([3.0, 7.0]), np.float32([1e-9, -0.6])
    folded = dce(fold(tj.make_ir(lambda y: fma(*consts) + y)(np.float32([0, 0]))))
    assert [e.prim.name for e in folded.eqns] == ["add"]
    np.testing.assert_array_equal(tj.jit(lambda y: fma(*consts) + y)(np.float32([0, 0])), fma(*consts))


def test_bad_operands_are_refused():
    f32, f64 = np.ones(3, np.float32), np.ones(3)
    with pytest.raises(TypeError, match="fma: operands must share one dtype"):
        tj.jit(fma)(f32, f64, f64)
    with pytest.raises(TypeError, match="fma: does not accept int64"):
        fma(np.arange(3), np.arange(3), np.arange(3))
    with pytest.raises(TypeError, match="fma: does not accept complex128"):
        fma(f64 * 1j, f64 * 1j, f64 * 1j)
    with pytest.raises(ShapeError, match=r"fma: operand shapes .*\(3,\).*\(2, 3\)|\(2, 3\).*\(3,\)"):
        fma(f64, np.ones((2, 3)), f64)
    with pytest.raises(TypeError, match="fma takes 3 operands, got 2"):
        ops.fma(f64, f64)
