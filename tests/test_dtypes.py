"""Every dtype (issue 16, complex numbers included): promotion of every pair and of Python scalars against
NumPy 2, conversion between every pair against NumPy / ml_dtypes (and the documented float -> int saturation
where NumPy's result is undefined), integer semantics (wrap-around, unsigned arithmetic, shifts, division by
zero), 16-bit floats computed in float32 and rounded once, the dtype functions, transforms, constant folding,
the fast path and the disk cache."""
# ruff: noqa: B023 -- each lambda is traced right away, inside its loop iteration
import itertools
import json
import os
import subprocess
import sys
import textwrap
import warnings

import ml_dtypes
import numpy as np
import pytest
from test_backend import ALL_DTYPES, sample

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.backend import compile_ir
from tracejit.backend.llvm import has_f16c
from tracejit.core.avals import HALF_FLOATS, SHORT_NAMES, bfloat16, is_float
from tracejit.core.trace import bind, eval_ir
from tracejit.primitives import ALL

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")    # NumPy's, on specials and overflow, as NumPy
INTS = [d for d in ALL_DTYPES if d.kind in "iu"]
FLOATS = [d for d in ALL_DTYPES if is_float(d)]
NAMES = {np.dtype(d): n for d, n in SHORT_NAMES.items()}


def quiet():
    """NumPy warns on overflow, NaN and casts of specials; the values are what is compared."""
    return np.errstate(all="ignore")


def numpy_promotion(a, b):
    """NumPy 2's promotion; bfloat16, which NumPy cannot promote with most dtypes, sits where float16 does."""
    if bfloat16 not in (a, b) or a == b:
        return np.result_type(a, b)
    other = b if a == bfloat16 else a
    if other == np.dtype(np.float16):
        return np.dtype(np.float32)
    as_half = np.result_type(other, np.float16)
    return bfloat16 if as_half == np.float16 else as_half


def same(got, want):
    """Equal dtype and values, NaNs in the same places (signs of zeros too)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if want.dtype.kind == "c":
        same(got.real, want.real)
        same(got.imag, want.imag)
    elif is_float(want.dtype):
        g, w = got.astype(np.float64), want.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        ok = ~np.isnan(w)
        np.testing.assert_array_equal(g[ok], w[ok])
        np.testing.assert_array_equal(np.signbit(g[ok]), np.signbit(w[ok]))
    else:
        np.testing.assert_array_equal(got, want)


def eager_jit_and_ir(f, *args, each=False):
    """f computed eagerly, compiled fused (jit) and unfused, and by the reference interpreter (eval_ir); each: f
    takes a list of arrays and returns a list of arrays (of the interpreter and the unfused code too)."""
    closed = tj.make_ir(f)(*args)
    leaves = tj.tree_util.tree_leaves(args)
    interpreted, unfused = eval_ir(closed, *leaves), compile_ir(closed, fuse=False, cache=False).run(leaves)
    return {"eager": f(*args), "jit": tj.jit(f, cache=False)(*args), "eval_ir": interpreted if each else interpreted[0],
            "unfused": unfused if each else unfused[0]}


def agree(f, want, *args, label=""):
    """f gives want (same) eagerly, compiled fused and unfused, and in eval_ir."""
    for mode, got in eager_jit_and_ir(f, *args).items():
        try:
            same(got, want)
        except AssertionError as e:
            raise AssertionError(f"{label} ({mode})") from e

# ----------------------------------------------------------------------------------------------- promotion


@pytest.mark.parametrize("a", ALL_DTYPES, ids=str)
def test_promotion_of_every_pair_as_numpy(a):
    """Complex numbers are not ordered (as in JAX): maximum and < refuse them, where NumPy orders them by
    their parts; products of complex numbers round as NumPy's on this CPU only within an ulp (fma)."""
    x = sample(a, (4,))
    ys = [sample(b, (4,), seed=1) for b in ALL_DTYPES]

    def ordered(b):
        return numpy_promotion(a, b).kind != "c"

    def every_pair(p, *qs):     # one compiled program for all pairs (one compile instead of ~60)
        return [(p + q, tnp.maximum(p, q) if ordered(b) else p - q, p * q,
                 tnp.less(p, q) if ordered(b) else tnp.equal(p, q)) for b, q in zip(ALL_DTYPES, qs)]

    with quiet():
        compiled = tj.jit(every_pair)(x, *ys)
    for b, y, (total, extreme, product, compared) in zip(ALL_DTYPES, ys, compiled):
        want = numpy_promotion(a, b)
        assert tnp.result_type(a, b) == want and tnp.promote_types(a, b) == want, (a, b)
        for got in (tnp.add(x, y), total, extreme):
            assert got.dtype == (np.dtype(np.bool_) if want == np.bool_ else want), (a, b, got.dtype)
        if not ordered(b):
            with pytest.raises(TypeError, match="complex"):
                tj.jit(tnp.maximum)(x, y)
        if bfloat16 not in (a, b):
            with quiet():
                if ordered(b):
                    same(product, np.multiply(x, y))
                else:
                    np.testing.assert_allclose(product, np.multiply(x, y), rtol=1e-6)
                same(compared, (np.less if ordered(b) else np.equal)(x, y))


SCALARS = [True, 1, -1, 2.5, 200, 300, -129, 2**31, 2**40, 2**63, -2**63 - 1, 1e6]
OPS = ["add", "multiply", "subtract", "less", "equal", "greater_equal", "maximum", "floor_divide"]
WITH_ARGUMENTS = {op: tj.jit(getattr(tnp, op)) for op in OPS}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_python_scalars_are_weak_and_must_fit(dtype):
    """x op s for a Python scalar s: NumPy 2's dtype and value, or its OverflowError (uint8 + 300), the same as
    a literal in a trace and as a jit argument (whose value the call checks); comparisons are exact even
    for ints the dtype cannot hold (uint8 < 300 is True)."""
    x = sample(dtype, (6,))
    cases = []      # (op, s, NumPy's answer or OverflowError)
    for s, op in itertools.product(SCALARS, OPS):
        if op == "floor_divide" and dtype == np.bool_:
            continue
        if dtype.kind == "c" and op in ("less", "greater_equal", "maximum"):
            with pytest.raises(TypeError, match="complex"):      # not ordered (as in JAX)
                getattr(tnp, op)(x, s)
            continue
        if dtype == bfloat16:
            ref = lambda v: getattr(np, op)(x.astype(np.float32), np.float32(v).astype(bfloat16).astype(np.float32))
        else:
            ref = lambda v: getattr(np, op)(x, v)
        try:
            with quiet(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = np.asarray(ref(s))
            if dtype == bfloat16 and want.dtype == np.float32:
                want = want.astype(bfloat16)
        except OverflowError:
            want = OverflowError
        except TypeError:      # bool - bool
            continue
        cases.append((op, s, want))
    fitting = [k for k, (op, s, want) in enumerate(cases) if want is not OverflowError]
    with quiet():      # the literals of every case that fits in one compiled program (one compile, not ~90)
        literals = dict(zip(fitting, tj.jit(lambda a: [getattr(tnp, cases[k][0])(a, cases[k][1])
                                                       for k in fitting])(x)))
    for k, (op, s, want) in enumerate(cases):      # (by position: True == 1 as a key)
        fn = getattr(tnp, op)
        runs = {"eager": lambda: fn(x, s), "literal": lambda: literals[k],
                "argument": lambda: WITH_ARGUMENTS[op](x, s)}     # (compiled once per weak type of s)
        for how, run in runs.items():
            if want is OverflowError or how == "argument" and abs(s) >= 2**63:
                with pytest.raises(OverflowError, match="out of bounds|does not fit int64|too large"):
                    if how == "literal":
                        tj.jit(lambda a: fn(a, s))(x)
                    else:
                        run()        # (an int beyond int64 does not fit the weak int of a jit argument)
                continue
            with quiet():
                got = run()
            if isinstance(s, float) and dtype.kind in "biu" or dtype == bfloat16:
                assert got.dtype == want.dtype, (dtype, op, s)      # rounding of the quotient may differ
                np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-2)
            else:
                same(got, want)


def test_overflow_of_python_int_arguments_and_literals_as_numpy():
    x = np.array([7], np.int32)
    for f in (lambda x, y: x % y, lambda x, y: x * y, lambda x, y: tnp.where(x > 0, x, y)):
        assert tj.jit(f)(x, 3).dtype == np.int32
        with pytest.raises(OverflowError, match="argument y: Python integer 4611686018427387904 out of bounds for int32"):
            tj.jit(f)(x, 2**62)
        with pytest.raises(OverflowError, match="out of bounds for int32"):
            tj.jit(lambda x: f(x, 2**31))(x)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        tj.jit(lambda x: lax.rem(x, 2**31))(x)
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        tnp.add(np.uint8(3), 300)
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        tj.jit(lambda x: lax.add(x, -1))(np.arange(3, dtype=np.uint8))
    f = tj.jit(lambda x, y: x < y)      # compared exactly, in int64: no OverflowError, as NumPy
    assert f(np.array([3], np.uint8), 2**40).tolist() == [True] and f(np.array([3], np.uint8), -1).tolist() == [False]


def test_dtype_functions_and_objects_as_numpy():
    for d in ALL_DTYPES:
        assert tnp.dtype(getattr(tnp, d.name if d != np.bool_ else "bool_")) == d and tnp.issubdtype(d, d)
        for kind in (tnp.integer, tnp.signedinteger, tnp.unsignedinteger, tnp.floating, tnp.inexact, tnp.number,
                     tnp.generic):
            want = np.issubdtype(d, kind) if d != bfloat16 else kind in (tnp.floating, tnp.inexact, tnp.number,
                                                                        tnp.generic)
            assert tnp.issubdtype(d, kind) == want, (d, kind)
        for e in ALL_DTYPES:
            want = np.can_cast(d, e) if bfloat16 not in (d, e) else numpy_promotion(d, e) == e
            assert tnp.can_cast(d, e) == want, (d, e)
        if d.kind in "iu":
            assert tnp.iinfo(d).max == np.iinfo(d).max and tnp.iinfo(sample(d)).min == np.iinfo(d).min
        elif is_float(d):
            assert tnp.finfo(d).eps == ml_dtypes.finfo(d).eps
    assert tnp.result_type(np.uint8, 1) == np.uint8 and tnp.result_type(np.int8, 2.5) == np.float64
    assert tnp.result_type(3) == np.int64 and tnp.result_type(np.ones(2, np.float16), np.int16) == np.float32
    assert tnp.result_type(bfloat16, np.int8) == bfloat16 and tnp.result_type(bfloat16, np.float16) == np.float32
    with pytest.raises(TypeError, match="Python ints"):
        tnp.can_cast(3, np.int8)


def test_the_ir_prints_every_dtype_as_jaxprs_do():
    args = [np.zeros(2, d) for d in ALL_DTYPES]
    text = str(tj.make_ir(lambda *xs: xs[::-1])(*args))
    for d in ALL_DTYPES:
        assert f"{NAMES[d]}[2]" in text
    assert str(tj.make_ir(lambda x: x + 1)(np.zeros(3, np.uint8))).count("1:u8[]") == 1
    text = str(tj.make_ir(lambda x: x * 2 + 0.1)(np.zeros(3, bfloat16)))
    assert "2.0:bf16[]" in text and "0.10009765625:bf16[]" in text     # as jax.make_jaxpr prints them

# -------------------------------------------------------------------------------------------- conversion


def expected_conversion(x, dst):
    """NumPy's astype (ml_dtypes' for bfloat16), except float -> int where the value is NaN or out of range:
    there NumPy's result is undefined (it differs between CPUs) and tracejit saturates as JAX does (NaN -> 0)."""
    with quiet(), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        want = x.astype(dst)
    if x.dtype.kind == "c" and dst.kind in "iu":     # complex -> int: the real part's conversion
        x = x.real
    if is_float(x.dtype) and dst.kind in "iu":
        info, wide = np.iinfo(dst), x.astype(np.float64)
        want = np.where(np.isnan(wide), 0, want)
        want = np.where(wide >= 2.0 ** (info.bits - (dst.kind == "i")), info.max, want)
        want = np.where(wide <= float(info.min) - 1, info.min, want)
        want = np.where((dst.kind == "u") & (wide < 0), 0, want).astype(dst)
    return want


@pytest.mark.parametrize("src", ALL_DTYPES, ids=str)
def test_conversion_between_every_pair(src):
    """Complex to real keeps the real part, with NumPy's ComplexWarning (to bool, both parts count). (One program
    converts to every dtype, each from its own copy of x: a compile each took most of the time.)"""
    x = sample(src, (41,))
    copies = [x.copy() for _ in ALL_DTYPES]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        runs = eager_jit_and_ir(lambda xs: [tnp.astype(a, dst) for a, dst in zip(xs, ALL_DTYPES)], copies, each=True)
    for k, dst in enumerate(ALL_DTYPES):
        want = expected_conversion(x, dst)
        for mode, got in runs.items():
            try:
                same(got[k], want)
            except AssertionError as e:
                raise AssertionError(f"{src} -> {dst} ({mode})") from e
        if src.kind == "c" and dst.kind not in "cb":
            with pytest.warns(np.exceptions.ComplexWarning):
                tnp.astype(x, dst)


def test_float_to_int_saturates_nan_to_zero():
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 300.7, -300.7, -0.9, 2.0**63, -2.0**63])
    for dst in INTS:
        info = np.iinfo(dst)
        hi = lambda v: info.max if v > info.max else info.min if v < info.min else int(np.trunc(v))
        want = np.array([0] + [hi(v) for v in x[1:].tolist()], dst)
        for src in FLOATS:
            if not (src in HALF_FLOATS and dst.itemsize == 8):   # 2**63 is inf in float16
                agree(lambda a: tnp.astype(a, dst), want, x.astype(src), label=f"{src} -> {dst}")


def test_16_bit_float_conversions_bit_for_bit():
    """Every float16 and bfloat16 to float32; float32 and float64 values at and around every rounding boundary
    to both (NaN payloads of float16 too): round to nearest even, once to float16, as NumPy, and to bfloat16
    through float32 from float64, as JAX (and ml_dtypes before 0.7)."""
    rng = np.random.default_rng(0)
    halves = np.arange(1 << 16, dtype=np.uint32)
    bits = np.concatenate([rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32)] +
                          [(halves << 16) + k for k in (0, 0x7fff, 0x8000, 0x8001)] +
                          [(halves << 13) + k + (112 << 23) for k in (0, 0xfff, 0x1000, 0x1001)])
    f32 = bits.view(np.float32)
    f64 = np.concatenate([f32.astype(np.float64) * (1 + 2.0 ** -30), f32.astype(np.float64) * (1 - 2.0 ** -30),
                          rng.standard_normal(100_000) * 10.0 ** rng.integers(-10, 7, 100_000)])
    for d in HALF_FLOATS:
        h = halves.astype(np.uint16).view(d)
        want = h.astype(np.float32)
        if has_f16c() and d == np.float16:    # F16C quiets signaling NaNs, as JAX does
            want = quieted(want)
        same(tj.jit(lambda a: a.astype(np.float32))(h), want)
        for x in (f32, f64):
            keep = ~np.isnan(x) if d == bfloat16 else slice(None)      # ml_dtypes makes every NaN 0x7fc0
            with quiet():        # float64 to bfloat16 through float32, as JAX (ml_dtypes >= 0.7 rounds once)
                want = (quieted(x[keep]) if d == np.float16 and has_f16c() else
                        x[keep] if d == np.float16 else x[keep].astype(np.float32)).astype(d).view(np.uint16)
            np.testing.assert_array_equal(tj.jit(lambda a: a.astype(d))(x[keep]).view(np.uint16), want)


def quieted(x):
    """x (float32 or float64) with the quiet bit of its signaling NaNs set."""
    bits = x.view(np.uint32 if x.dtype == np.float32 else np.uint64)
    quiet_bit = bits.dtype.type(1 << (22 if x.dtype == np.float32 else 51))
    return np.where(np.isnan(x), bits | quiet_bit, bits).view(x.dtype)


def test_float16_signaling_nans_come_out_as_jax_makes_them():
    """Conversions between float16 and float32 of signaling NaNs (where F16C's differ from NumPy's bit
    arithmetic) give JAX's bits."""
    jax = pytest.importorskip("jax")
    halves = np.array([0x7c01, 0xfc0a, 0x7d55, 0x7e01, 0x7c00], np.uint16).view(np.float16)
    floats = np.array([0x7f800001, 0xff815466, 0x7f9fb77a, 0x7fc00001], np.uint32).view(np.float32)
    for x, dst in ((halves, np.float32), (floats, np.float16)):
        with quiet():
            want = np.asarray(jax.jit(lambda a: a.astype(dst))(x))
        bits = np.uint32 if dst == np.float32 else np.uint16
        np.testing.assert_array_equal(tj.jit(lambda a: a.astype(dst))(x).view(bits), want.view(bits))

# ------------------------------------------------------------------------------------------------ integers


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integer_arithmetic_wraps_and_divides_as_numpy(dtype):
    x, y = sample(dtype, (60,)), sample(dtype, (60,), seed=3)
    ops = [np.add, np.subtract, np.multiply, np.floor_divide, np.remainder, np.fmod, np.maximum, np.minimum,
           np.less, np.greater_equal, np.equal, np.bitwise_and, np.bitwise_xor, np.bitwise_or]
    for op in ops:
        with quiet():
            want = op(x, y)
        if op is np.fmod:       # lax.rem: x % 0 is 0
            agree(lax.rem, np.where(y == 0, 0, want).astype(dtype), x, y, label="rem")
        else:
            agree(getattr(tnp, op.__name__), want, x, y, label=op.__name__)
    for op in (np.negative, np.absolute, np.sign, np.invert, np.square, np.bitwise_count):
        with quiet():
            agree(getattr(tnp, op.__name__), op(x), x, label=op.__name__)


@pytest.mark.parametrize("dtype", INTS + [np.dtype(np.bool_)], ids=str)
def test_shifts_as_numpy(dtype):
    """Counts of the width and beyond, and negative ones, shift every bit out (right shifts of negative
    values give -1); right shifts are logical for unsigned dtypes."""
    bits = 8 * dtype.itemsize
    x = sample(dtype, (2 * bits + 8,))
    counts = (np.arange(-4, 2 * bits + 4) if dtype != np.bool_ else np.arange(2 * bits + 8) % 2).astype(dtype)
    for op in (np.left_shift, np.right_shift):
        agree(getattr(tnp, op.__name__), op(x, counts), x, counts, label=op.__name__)
    if dtype == np.bool_:
        return
    unsigned, signed = np.dtype(f"u{dtype.itemsize}"), np.dtype(f"i{dtype.itemsize}")
    for fn, view in ((lax.shift_right_logical, unsigned), (lax.shift_right_arithmetic, signed)):
        agree(fn, np.right_shift(x.view(view), counts.view(view)).view(dtype), x, counts, label=fn.__name__)
    agree(lax.shift_left, np.left_shift(x, counts), x, counts, label="shift_left")


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_population_count_and_clz_of_the_bits(dtype):
    x = sample(dtype, (40,))
    words = [int(v) % (1 << 8 * dtype.itemsize) for v in x.tolist()]
    counts = np.array([w.bit_count() for w in words], dtype)
    zeros = np.array([8 * dtype.itemsize - w.bit_length() for w in words], dtype)
    agree(lax.population_count, counts, x, label="population_count")
    agree(lax.clz, zeros, x, label="clz")


def test_bitcast_convert_type_as_numpy_views_and_jax_shapes():
    """float32 bits read as every dtype of other widths too: a narrower one adds a trailing axis of the ratio,
    a wider one (8 bytes) takes a trailing axis of 2 away."""
    x = sample(np.float32, (3, 4))
    for dst in ALL_DTYPES:
        if dst == np.bool_ or dst.kind == "c":
            with pytest.raises(TypeError, match="convert only to their own dtype"):     # as in JAX
                lax.bitcast_convert_type(x, dst)
            z = sample(dst, (3,))
            same(tj.jit(lambda a: lax.bitcast_convert_type(a, dst))(z), z)
            continue
        source = x if dst.itemsize <= 4 else x.reshape(3, 2, 2)
        want = source.view(dst).reshape((3, 4, 4 // dst.itemsize) if dst.itemsize < 4 else source.shape[:2])
        for mode, got in eager_jit_and_ir(lambda a: lax.bitcast_convert_type(a, dst), source).items():
            assert got.dtype == dst and got.shape == want.shape, (dst, mode)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=f"{dst} ({mode})")
    u8 = sample(np.uint8, (5, 2))
    same(tj.jit(lambda a: lax.bitcast_convert_type(a, np.float16))(u8), u8.view(np.float16).reshape(5))
    same(tj.vmap(lambda a: lax.bitcast_convert_type(a, np.uint16), in_axes=2)(u8.reshape(5, 2, 1).repeat(3, 2)),
         np.repeat(u8.view(np.uint16).reshape(1, 5), 3, 0))
    with pytest.raises(tj.ShapeError, match="last axis of size 2"):
        lax.bitcast_convert_type(np.zeros(3, np.uint8), np.uint16)

# ------------------------------------------------------------------------------------------ 16-bit floats


@pytest.mark.parametrize("dtype", HALF_FLOATS, ids=str)
def test_16_bit_floats_elementwise_as_numpy_and_ml_dtypes(dtype):
    """One operation: computed in float32 and rounded, as NumPy's float16 loops and ml_dtypes' bfloat16 ones
    do: bit for bit for the correctly rounded operations, within an ulp for the math library's."""
    x, y = sample(dtype, (200,)), sample(dtype, (200,), seed=5)
    with quiet():
        for op in (np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum, np.less, np.equal):
            agree(getattr(tnp, op.__name__), op(x, y), x, y, label=op.__name__)
        for op in (np.sqrt, np.negative, np.absolute, np.floor, np.ceil, np.isnan, np.square):
            agree(getattr(tnp, op.__name__), op(x), x, label=op.__name__)
    eps = float(ml_dtypes.finfo(dtype).eps)
    x = np.where(np.abs(x) > 1e4, 2.0, x).astype(dtype)     # (sin reduces arguments exactly up to 2**43 only)
    for op in (np.exp, np.log, np.sin, np.tanh, np.arctan, np.log1p, np.cbrt):
        with quiet():
            want = op(x).astype(np.float64)
            for mode, got in eager_jit_and_ir(getattr(tnp, op.__name__), x).items():
                np.testing.assert_allclose(got.astype(np.float64), want, rtol=eps, atol=1e-7, equal_nan=True,
                                           err_msg=f"{op.__name__} ({mode})")


@pytest.mark.parametrize("dtype", HALF_FLOATS, ids=str)
def test_16_bit_floats_are_computed_in_float32_and_rounded_once(dtype):
    """A fused chain keeps float32 between its operations and rounds its result once, unlike NumPy, which
    rounds after each; explicit conversions round; sums accumulate in float32; matmul is sgemm, rounded."""
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal(500) * 10).astype(dtype), (rng.standard_normal(500) * 10).astype(dtype)
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    same(tj.jit(lambda a, b: a * b + a / b - 3.0)(x, y), (x32 * y32 + x32 / y32 - np.float32(3.0)).astype(dtype))
    same(tj.jit(lambda a, b: (a * b).astype(np.float32) + a)(x, y), (x * y).astype(np.float32) + x32)
    same(tj.jit(lambda a: tnp.sum(a))(np.ones(10_000, dtype)), np.array(10_000, dtype))   # float16 would stop at 2048
    same(tj.jit(tnp.mean)(x), np.mean(x32).astype(dtype))
    a, b = (rng.standard_normal((17, 33)) * 3).astype(dtype), (rng.standard_normal((33, 9)) * 3).astype(dtype)
    with quiet():
        want = (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)
    np.testing.assert_allclose(tj.jit(tnp.matmul)(a, b).astype(np.float64), want.astype(np.float64),
                               rtol=float(ml_dtypes.finfo(dtype).eps))
    ir = str(tj.make_ir(tnp.matmul)(a, b))
    assert "dot_general" in ir and f"{NAMES[np.dtype(np.float32)]}[17,9] = dot_general" in ir
    with pytest.raises(TypeError, match="multiplied in float32"):
        bind(ALL["dot_general"], a, b, dimension_numbers=(((1,), (0,)), ((), ())))


def test_composite_functions_of_16_bit_floats_as_numpy():
    """floor_divide, remainder, logaddexp and deg2rad are several primitives: in float32, as NumPy's float16
    loops, so that fused and unfused code agree with NumPy bit for bit."""
    x, y = sample(np.float16, (300,)), sample(np.float16, (300,), seed=2)
    for op in (np.floor_divide, np.remainder, np.logaddexp, np.deg2rad):
        args = (x, y)[:op.nin]
        with quiet():
            agree(getattr(tnp, op.__name__), op(*args), *args, label=op.__name__)

# ---------------------------------------------------------------------------------- transforms and passes


def test_transforms_of_every_dtype():
    for d in ALL_DTYPES:
        x = sample(d, (4, 3))
        f = lambda a: tnp.where(a > a[0], a, a[0]) if d == np.bool_ else a * a[0] + a
        batched = tj.vmap(f)(x[:, None].repeat(2, 1))
        looped = np.stack([tj.jit(f)(x[:, None].repeat(2, 1)[i]) for i in range(4)])
        if d in HALF_FLOATS:      # a fused chain rounds once, where it is stored: where fusion puts the stores
            np.testing.assert_allclose(batched.astype(float), looped.astype(float), rtol=ml_dtypes.finfo(d).eps)
        else:
            same(batched, looped)
        if d.kind == "c":      # JAX's convention: the gradient of Re(sum(a * a)) is 2 a
            x = (np.linspace(0.5, 2, 12) + 1j * np.linspace(-1, 1, 12)).reshape(4, 3).astype(d)
            np.testing.assert_allclose(tj.grad(lambda a: tnp.real(tnp.sum(a * a)))(x), 2 * x, rtol=1e-6)
            _, t = tj.jvp(lambda a: tnp.sin(a), (x,), (np.ones_like(x),))
            assert t.dtype == d
            np.testing.assert_allclose(t, np.cos(x), rtol=1e-6)
        elif is_float(d):
            x = np.linspace(0.5, 2, 12).reshape(4, 3).astype(d)
            g = tj.grad(lambda a: tnp.sum(a * a).astype(np.float32))(x)
            assert g.dtype == d
            np.testing.assert_allclose(g.astype(np.float64), 2 * x.astype(np.float64), rtol=1e-2)
            _, t = tj.jvp(lambda a: tnp.sin(a), (x,), (np.ones_like(x),))
            assert t.dtype == d
            np.testing.assert_allclose(t.astype(np.float64), np.cos(x.astype(np.float64)), rtol=2e-2)
        else:
            _, vjp = tj.vjp(lambda a: (a * 2).astype(np.float32), x)
            same(vjp(np.ones(x.shape, np.float32))[0], np.zeros(x.shape, tj.dtypes.float0))   # as JAX's


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_linear_algebra_takes_dtypes_as_numpy(dtype):
    """Integers and bools in float64 and complex as it comes, as NumPy's linalg; float16 and bfloat16 matrices
    refused with the function's name (LAPACK has no 16-bit routines; NumPy refuses float16 too), but norms,
    which need no LAPACK, keep them (NumPy's norm of float16 is float16)."""
    a = np.array([[2, 1, 0], [0, 3, 1], [1, 0, 4]]).astype(dtype)      # (as bools too, not singular)
    for name in ("det", "inv", "eigvals", "slogdet", "matrix_rank"):
        if dtype in HALF_FLOATS:
            with pytest.raises(TypeError, match=f"{name}: {dtype} matrices are not supported"):
                getattr(tnp.linalg, name)(a)
            continue
        with quiet():
            got, want = tj.jit(getattr(tnp.linalg, name))(a), getattr(np.linalg, name)(a)
        for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want)), strict=True):
            w = np.asarray(w).dtype
            w = np.result_type(w, np.complex64) if name == "eigvals" else w     # always complex, as JAX's
            assert np.asarray(g).dtype == w, (name, np.asarray(g).dtype, w)
    if dtype != bfloat16:
        small = np.arange(-2, 4).astype(dtype).reshape(2, 3)
        assert tnp.linalg.norm(small).dtype == np.linalg.norm(small).dtype


def test_constant_folding_wraps_as_the_compiled_code():
    for d in INTS:
        info = np.iinfo(d)
        f = lambda: (np.array(info.max, d) + np.array(1, d), np.array(info.min, d) // np.array(-1, d) if d.kind == "i"
                     else np.array(3, d) - np.array(5, d), np.array(info.max, d) * np.array(3, d))
        folded = tj.make_ir(f, optimize=True)()
        assert not folded.eqns, folded
        with quiet():
            want = f()
        for got, w in zip(tj.jit(f)(), want):
            same(got, w)
        g = lambda a: (a + np.array(1, d), a // np.array(-1 if d.kind == "i" else 7, d), a * np.array(3, d))
        for got, w in zip(tj.jit(g)(np.array(info.max, d)), eval_ir(tj.make_ir(g)(np.array(info.max, d)),
                                                                          np.array(info.max, d))):
            same(got, w)


def test_every_dtype_takes_the_fast_path():
    for d in ALL_DTYPES:
        f = tj.jit(lambda a, b: a ^ b if d == np.bool_ else a + b, cache=False)
        x = sample(d, (8,))
        f(x, x)
        hits = f.cache_info().hits
        same(f(x, x), np.logical_xor(x, x) if d == np.bool_ else tnp.add(x, x))
        assert f._fast is not None and f.cache_info().hits == hits + 1, d


DISK_SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {tests!r})
    import numpy as np
    import tracejit as tj, tracejit.numpy as tnp
    from test_backend import ALL_DTYPES, sample
    results = []
    for d in ALL_DTYPES:
        g = lambda a, b: (a | b) if d == np.bool_ else a * b - a if d.kind == "c" else tnp.maximum(a * b, a)
        f = tj.jit(g)
        x, y = sample(d, (9,)), sample(d, (9,), seed=1)
        with np.errstate(all="ignore"):
            want = tj.jit(g, cache=False)(x, y)
            ok = f(x, y).tobytes() == want.tobytes()
        results.append((str(d), bool(ok), f.cache_info().signatures[0].from_disk))
    print(json.dumps(results))
""").format(tests=os.path.dirname(__file__))


def test_disk_cache_round_trip_of_every_dtype(tmp_path):
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", DISK_SCRIPT], check=False, capture_output=True, text=True,
                              timeout=300, env={**os.environ, "TRACEJIT_CACHE_DIR": str(tmp_path)})
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert [ok for _, ok, _ in runs[0] + runs[1]] == [True] * 2 * len(ALL_DTYPES)
    assert [disk for _, _, disk in runs[0]] == [False] * len(ALL_DTYPES)
    assert [disk for _, _, disk in runs[1]] == [True] * len(ALL_DTYPES)
