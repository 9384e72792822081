"""Differential testing on random programs: the eager API, jit and eval_ir of the optimised IR agree with
NumPy in shape, dtype and value (bit for bit, signs of zeros included, where no rounding can differ).

Programs are drawn from fixed seeds, so every run checks the same ones; TRACEJIT_FUZZ_PROGRAMS=5000 searches
further. The generator runs each candidate step on NumPy values as it builds the program, so it only emits
steps NumPy accepts and knows which values are exact: only those feed steps where one ulp of difference
(a transcendental's, a sum's order) could flip the result (floor, comparisons, floor_divide).
"""
import os
import random
import re
import warnings

import ml_dtypes
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.core.avals import fits, is_float, is_inexact

N_PROGRAMS = int(os.environ.get("TRACEJIT_FUZZ_PROGRAMS", "300"))
SHAPES = [(), (0,), (1,), (5,), (3, 5), (4, 1, 5), (2, 0, 3), (17,), (6, 6), (3, 1), (65,), (2, 3, 4)]
DTYPES = ["float32", "float64", "int32", "int64", "bool", "int8", "int16", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16"]
HALF = ("float16", "bfloat16")     # computed in float32 where fused: rounded once, where NumPy rounds every step;
# so a 16-bit result is compared within a few ulps, and one of an operand that may differ by an ulp is not made
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -2.5])
SCALARS = ["2", "-1", "0", "0.5", "-1.5", "3.0"]

ROUNDED, EXACT_BUT_ZERO_SIGNS, EXACT = range(3)     # how far a value must agree with NumPy's
# (template, exactness given exact operands, whether it needs exact operands: one ulp could flip its result)
UNARY = [("M.abs({a})", EXACT, False), ("M.negative({a})", EXACT, False), ("M.square({a})", EXACT, False),
         ("M.sign({a})", EXACT, True), ("M.floor({a})", EXACT, True), ("M.logical_not({a})", EXACT, True),
         ("M.isnan({a})", EXACT, True), ("({a} > 0)", EXACT, True), ("{a} * 2", EXACT, False),
         ("M.exp({a})", ROUNDED, False), ("M.tanh({a})", ROUNDED, False), ("M.sqrt(M.abs({a}))", ROUNDED, False),
         ("M.log1p(M.abs({a}))", ROUNDED, False), ("1 / (1 + {a} * {a})", ROUNDED, False),
         ("{a}.astype(np.float32)", EXACT, False), ("{a}.T", EXACT, False), ("{a}[::-1]", EXACT, False),
         ("M.reshape({a}, (-1,))", EXACT, False), ("M.concatenate([{a}, {a}])", EXACT, False),
         ("M.expand_dims({a}, 0)", EXACT, False), ("M.flip({a})", EXACT, False), ("M.roll({a}, 2)", EXACT, False),
         ("M.diff({a}, axis=0)", EXACT, False), ("M.tile({a}, (2, 1))", EXACT, False),
         ("M.repeat({a}, 2, axis=0)", EXACT, False), ("M.pad({a}, 1)", EXACT, False),
         ("M.sort({a})", EXACT_BUT_ZERO_SIGNS, False), ("M.argsort({a}, axis=0, kind='stable')", EXACT, True), ("M.trunc({a})", EXACT, True),
         ("M.isinf({a})", EXACT, True), ("M.nan_to_num({a})", EXACT, False), ("M.atleast_2d({a})", EXACT, False),
         ("M.hstack([{a}, {a}])", EXACT, False), ("M.diagonal({a})", EXACT, False), ("M.diag({a})", EXACT, False),
         ("M.arctan({a})", ROUNDED, False), ("M.sinh({a} * 0.1)", ROUNDED, False),
         ("M.log2(M.abs({a}))", ROUNDED, False), ("M.cbrt({a})", ROUNDED, False), ("M.arcsin({a})", ROUNDED, False),
         ("M.arccosh({a})", ROUNDED, False), ("M.arctanh({a})", ROUNDED, False)]
BINARY = [("M.add({a}, {b})", EXACT, False), ("{a} - {b}", EXACT, False), ("{a} * {b}", EXACT, False),
          ("M.maximum({a}, {b})", EXACT, False), ("M.minimum({a}, {b})", EXACT, False),
          ("{a} / {b}", EXACT, True), ("M.where({a} > {b}, {a}, {b})", EXACT, True),
          ("M.equal({a}, {b})", EXACT, True), ("M.less({a}, {b})", EXACT, True),
          ("M.logical_and({a}, {b})", EXACT, True), ("M.floor_divide({a}, {b})", EXACT, True),
          ("M.remainder({a}, {b})", EXACT, True), ("M.logaddexp({a}, {b})", ROUNDED, False),
          ("M.fmax({a}, {b})", EXACT_BUT_ZERO_SIGNS, False), ("M.isclose({a}, {b})", EXACT, True),
          ("M.heaviside({a}, {b})", EXACT, True), ("M.vstack([{a}, {b}])", EXACT, False),
          ("M.arctan2({a}, {b})", ROUNDED, False), ("M.hypot({a}, {b})", ROUNDED, False),
          ("M.left_shift({a}, {b})", EXACT, True), ("M.right_shift({a}, {b})", EXACT, True),
          ("M.bitwise_xor({a}, {b})", EXACT, True), ("({a} >= {b})", EXACT, True)]
UNARY += [("M.invert({a})", EXACT, True), ("{a}.astype(np.uint8)", EXACT, True), ("{a}.astype(np.int16)", EXACT, True),
          ("{a}.astype(np.float16)", EXACT, False), ("{a}.astype('bfloat16')", EXACT, False),
          ("M.bitwise_count({a})", EXACT, True), ("{a} * 3 - 1", EXACT, False)]
# What a 16-bit float result of keeps exact although the operand may hold float32 excess precision where fused:
# it only moves, selects or negates values (rounding commutes with it), or it rounds once
ORDER_PRESERVING = ("M.abs(", "M.negative(", "M.maximum(", "M.minimum(", "M.where(", "M.fmax(", "M.sort(", ".T",
                    "[::-1]", "M.reshape(", "M.concatenate(", "M.expand_dims(", "M.flip(", "M.roll(", "M.tile(",
                    "M.repeat(", "M.pad(", "M.atleast_2d(", "M.hstack(", "M.vstack(", "M.diagonal(", "M.diag(",
                    "M.nan_to_num(", ".astype(", "M.max(", "M.min(", "M.nanmax(")
REDUCE = ["sum", "mean", "max", "min", "prod", "argmax", "nansum", "nanmax", "nanmean", "median", "ptp",
          "count_nonzero"]

# Complex programs: complex arrays meet real ones (of several widths: NumPy 2's promotion of int8 and complex64
# is complex64, of int32 and complex64 complex128) and Python complex scalars. NumPy's complex products and
# quotients round differently on other CPUs (its SIMD loops fuse a product), so they count as rounded. The
# trigonometric functions and non-integer powers see bounded arguments (z / (1 + |z|)): on huge ones their
# results are ill-conditioned (the sign of an overflowing part, trigonometry past 2**43).
C_DTYPES = ["complex64", "complex128", "float32", "float64", "int8", "uint8", "int16", "uint32", "float16"]
C_UNARY = [("M.abs({a})", ROUNDED, False), ("M.negative({a})", EXACT, False), ("M.square({a})", ROUNDED, False),
           ("M.conj({a})", EXACT, False), ("M.real({a})", EXACT, False), ("M.imag({a})", EXACT, False),
           ("M.exp({a} / (1 + M.abs({a})))", ROUNDED, False), ("M.log({a})", ROUNDED, False),
           ("M.sqrt({a})", ROUNDED, False), ("M.sin({a} / (1 + M.abs({a})))", ROUNDED, False),
           ("M.cos({a} / (1 + M.abs({a})))", ROUNDED, False), ("M.tanh({a} / (1 + M.abs({a})))", ROUNDED, False),
           ("M.angle({a})", ROUNDED, False), ("{a} * 2j", ROUNDED, False), ("{a} + 1j", EXACT, False),
           ("{a}.T", EXACT, False), ("{a}[::-1]", EXACT, False), ("M.reshape({a}, (-1,))", EXACT, False),
           ("M.concatenate([{a}, M.conj({a})])", EXACT, False), ("M.isnan({a})", EXACT, True),
           ("M.isfinite({a})", EXACT, True), ("({a} == 0)", EXACT, True), ("M.iscomplex({a})", EXACT, True),
           ("M.where(M.real({a}) > 0, {a}, M.conj({a}))", EXACT, True), ("{a}.astype(np.complex64)", EXACT, False),
           ("M.reciprocal({a} * 1j)", ROUNDED, False), ("M.power({a}, 3)", ROUNDED, False),
           ("M.sign({a})", ROUNDED, False),
           ("M.power({a}, -2)", ROUNDED, False), ("M.power({a} / (1 + M.abs({a})), (0.5-1j))", ROUNDED, False),
           ("M.cumsum({a})", ROUNDED, False), ("M.flip({a})", EXACT, False), ("M.pad({a}, 1)", EXACT, False)]
C_BINARY = [("M.add({a}, {b})", EXACT, False), ("{a} - {b}", EXACT, False), ("{a} * {b}", ROUNDED, False),
            ("{a} / {b}", ROUNDED, False), ("M.equal({a}, {b})", EXACT, True), ("M.not_equal({a}, {b})", EXACT, True),
            ("M.where(M.abs({a}) > 1, {a}, {b})", EXACT, True), ("M.vstack([{a}, {b}])", EXACT, False),
            ("M.power({a} / (1 + M.abs({a})), {b} / (1 + M.abs({b})))", ROUNDED, False)]
C_SCALARS = ["2", "1j", "0.5", "(-1.5+2j)", "-1j"]
C_REDUCE = ["sum", "mean", "prod"]
LANGUAGES = {"real": (DTYPES, UNARY, BINARY, REDUCE, SCALARS), "complex": (C_DTYPES, C_UNARY, C_BINARY, C_REDUCE,
                                                                         C_SCALARS)}
N_COMPLEX = N_PROGRAMS // 3


def random_array(rng, shape, dtype):
    if dtype.startswith("complex"):
        out = np.empty(shape, dtype)
        out.real, out.imag = (random_array(rng, shape, f"float{int(dtype[7:]) // 2}") for _ in range(2))
        return out
    n = int(np.prod(shape))
    gen = np.random.default_rng(rng.randrange(2**32))
    dtype = np.dtype(getattr(ml_dtypes, dtype, dtype))
    if dtype == np.bool_:
        return (gen.random(n) < 0.5).reshape(shape)
    if dtype.kind in "iu":     # small values (negatives wrap for unsigned dtypes), sometimes the extremes
        a = gen.integers(-10, 11, n).astype(dtype)
        if n and rng.random() < 0.3:
            info = np.iinfo(dtype)
            extremes = np.array([info.min, info.max, info.max - 1], dtype)
            a[gen.integers(0, n, max(1, n // 4))] = gen.choice(extremes, max(1, n // 4))
        return a.reshape(shape)
    a = gen.standard_normal(n) * rng.choice([1.0, 3.0, 100.0])
    if n and rng.random() < 0.3:
        a[gen.integers(0, n, max(1, n // 5))] = gen.choice(SPECIALS, max(1, n // 5))
    if rng.random() < 0.2:
        a = np.round(a)
    return a.astype(dtype).reshape(shape)


def argument(rng, shape, dtype):
    """Sometimes a view that is not C-contiguous: the compiled call must copy, never read past it."""
    kind = rng.random()
    if kind < 0.1 and len(shape) >= 2:
        return random_array(rng, shape[::-1], dtype).T
    if kind < 0.2 and len(shape) >= 1:
        return random_array(rng, (shape[0] * 2, *shape[1:]), dtype)[::2]
    return random_array(rng, shape, dtype)


def generate(seed, language="real"):
    """(source of f(M, *args), args, per output (exactness, rtol)): f runs with M = numpy or tracejit.numpy;
    its steps are drawn from the language's (dtypes, unary, binary, reductions, scalars)."""
    dtypes, unary, binary, reduce, scalars = LANGUAGES[language]
    rng = random.Random(seed)
    base = rng.choice(SHAPES)
    args = [argument(rng, base if i == 0 or rng.random() < 0.5 else base[rng.randrange(len(base) + 1):],
                     rng.choice(dtypes)) for i in range(rng.choice([1, 2, 2, 3]))]
    values = [(f"x{i}", a, EXACT) for i, a in enumerate(args)]      # (name, NumPy value, exactness)
    lines = []
    for _ in range(rng.randrange(2, 9)):
        name, a, a_exact = rng.choice(values[-2:] if rng.random() < 0.6 else values)   # mostly chains
        kind = rng.random()
        if kind < 0.15 and np.ndim(a):
            op = rng.choice(reduce)
            axis = rng.choice([None, rng.randrange(np.ndim(a))])
            keep = op != "argmax" and rng.random() < 0.3
            if op == "argmax" and a.size == 0:
                continue
            expr = f"M.{op}({name}, axis={axis}" + (", keepdims=True)" if keep else ")")
            # Zero signs are not specified where -0.0 and 0.0 tie: in NumPy's float max/min reductions (which
            # pick by SIMD lane) and in median (NumPy's partition orders the tie unlike our sort)
            exact = (EXACT if op in ("argmax", "count_nonzero") or op == "median" and not is_float(a.dtype) or
                     op in ("sum", "nansum", "prod") and a.dtype.kind in "ibu" else
                     ROUNDED if a.dtype.kind == "c" else
                     ROUNDED if op in ("sum", "nansum", "prod", "mean", "nanmean") else
                     EXACT_BUT_ZERO_SIGNS if is_float(a.dtype) else EXACT)   # max, min, nanmax, ptp, median
            needs_exact = op == "argmax"
            if op == "median" and a.dtype.name == "bfloat16":
                continue      # with ml_dtypes 0.7 NumPy's median of bfloat16 [1, nan, 3, 2] is 2.5 (tracejit's: NaN)
        elif kind < 0.55:
            template, exact, needs_exact = rng.choice(unary)
            expr = template.format(a=name)
        else:
            template, exact, needs_exact = rng.choice(binary)
            # a function of {b} takes an array: NumPy's make a Python scalar a strong NumPy scalar (M.abs(1j) is
            # np.float64), tracejit.numpy's keep it weak while tracing
            scalar_ok = "({b})" not in template
            other, _, b_exact = (rng.choice(values) if rng.random() < 0.7 or not scalar_ok else
                                 (rng.choice(scalars), None, EXACT))
            expr = template.format(a=name, b=other)
            a_exact = min(a_exact, b_exact)
            if "M.where" in expr and other in SCALARS and "." not in other and a.dtype.kind in "iu" and \
                    not fits(int(other), a.dtype):
                continue      # NumPy's where wraps a Python int its array's dtype cannot hold (tracejit raises)
        if needs_exact and a_exact != EXACT:
            continue
        if re.search(r"astype\(np\.u?int", expr) and is_float(a.dtype):
            continue      # NumPy's float -> int is undefined out of range (tracejit saturates: test_dtypes)
        if (re.search(r"\d\.\d|M\.nan|hypot", expr)) and \
                any(v.dtype.name == "bfloat16" for n, v, _ in values if n in expr):
            continue      # ml_dtypes makes bfloat16 with a Python float float32 (NumPy 2's weak scalars: bfloat16)
            # and hypot(bool, bfloat16) the second operand; NumPy's nan-functions take bfloat16 for no float

        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = np.asarray(eval(expr, {"M": np, "np": np}, {n: v for n, v, _ in values}))
        except (TypeError, ValueError, IndexError, OverflowError):
            continue                        # NumPy refuses it (shapes, dtypes): not a program to test
        if value.dtype.name not in dtypes + DTYPES or value.size > 10_000:
            continue
        if value.dtype.name in HALF and not any(t in expr for t in ORDER_PRESERVING):
            if a_exact != EXACT:
                continue     # its float32 operand may differ from NumPy's rounded one by an ulp, which exp ... amplify
            exact = ROUNDED
        lines.append(f"    v{len(lines)} = {expr}")
        values.append((f"v{len(lines) - 1}", value, min(exact, a_exact)))
    outs = values[-2:] if len(values) > len(args) + 1 else values[-1:]
    source = "\n".join([f"def f(M, {', '.join(f'x{i}' for i in range(len(args)))}):", *lines,
                        f"    return [{', '.join(n for n, _, _ in outs)}]"])
    names = {v.dtype.name for _, v, _ in values}
    rtol = (3e-2 if "bfloat16" in names else 4e-3 if "float16" in names else
            1e-4 if names & {"float32", "complex64"} else 1e-9)
    return source, args, [(e, rtol) for _, _, e in outs]


def agrees(got, want, exact, rtol, scale=None):
    """Bit for bit when exact (signs of zeros too, if known; not of NaNs: x86 makes 0/0 a negative NaN);
    else within rtol of the largest magnitude, with NaNs and infinities in the same places."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype.kind == "c":          # each part, rounded ones within rtol of the largest magnitude of both
        for g, w in ((got.real, want.real), (got.imag, want.imag)):
            agrees(g, w, exact, rtol, scale=np.max(np.abs(want[np.isfinite(want)]), initial=1.0))
        return
    if want.dtype.name == "bfloat16":       # (NumPy's testing does not see bfloat16 NaNs)
        got, want = got.astype(np.float32), want.astype(np.float32)
    if exact != ROUNDED or not is_float(want.dtype):
        np.testing.assert_array_equal(got, want)
        if is_float(want.dtype) and exact == EXACT:
            np.testing.assert_array_equal(np.signbit(got) & ~np.isnan(got), np.signbit(want) & ~np.isnan(want))
        return
    if want.dtype.name in HALF:      # NumPy's float16 steps overflow (or make NaNs) where float32 does not
        got, want = got.astype(np.float64), want.astype(np.float64)
        special = ~np.isfinite(got)
        np.testing.assert_array_equal(np.where(special, got, 0), np.where(special, want, 0))
        finite = np.isfinite(want) & ~special
    else:
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.isinf(got) * np.sign(got), np.isinf(want) * np.sign(want))
        finite = np.isfinite(want)
    scale = float(np.max(np.abs(want[finite]), initial=1.0)) if scale is None else scale
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=rtol * scale)


def programs(start, language="real"):
    """(seed, source, f, args, tolerances) of the 20 programs from seed `start`."""
    for seed in range(start, min(start + 20, N_PROGRAMS if language == "real" else N_COMPLEX)):
        source, args, tolerances = generate(seed, language)
        namespace = {"np": np}
        exec(source, namespace)     # noqa: S102 (a program generated above)
        yield seed, source, namespace["f"], args, tolerances


def check_outputs(runs, want, tolerances, seed, source):
    for mode, outs in runs.items():
        for i, (got, w, (exact, rtol)) in enumerate(zip(outs, want, tolerances, strict=True)):
            try:
                agrees(got, w, exact, rtol)
            except AssertionError as err:
                raise AssertionError(f"seed {seed}, {mode}, output {i}:\n{source}\n{err}") from None


BATCHES = [("real", start) for start in range(0, N_PROGRAMS, 20)] + [("complex", s) for s in range(0, N_COMPLEX, 20)]


def jit_each(functions, arguments, seeds, sources):
    """[f(*args) for each f and args] compiled as one program (a compile per program took most of this file's
    time; their outputs read separate inputs, so each keeps its own loop nests), called twice (the second call
    takes the fast path); where that fails, each compiled alone, so that the error names its program."""
    try:
        g = tj.jit(lambda arguments: [f(*args) for f, args in zip(functions, arguments)], cache=False)
        return g(arguments), g(arguments)
    except Exception:
        for f, args, seed, source in zip(functions, arguments, seeds, sources):
            try:
                tj.jit(f, cache=False)(*args)
            except Exception as err:
                raise AssertionError(f"seed {seed}: {type(err).__name__}: {err}\n{source}") from err
        raise


@pytest.mark.parametrize("language,start", BATCHES)
def test_random_programs_agree_with_numpy(language, start):
    batch = list(programs(start, language))
    traced = [lambda *xs, f=f: f(tnp, *xs) for _, _, f, _, _ in batch]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        saved = [[a.copy() for a in args] for _, _, _, args, _ in batch]
        jitted, again = jit_each(traced, [args for _, _, _, args, _ in batch], *zip(*[p[:2] for p in batch]))
    for (seed, source, f, args, tolerances), g, got, got_again, kept in zip(batch, traced, jitted, again, saved):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = f(np, *args)
            optimised = tj.make_ir(g, optimize=True)(*args)
            runs = {"eager": f(tnp, *args), "jit": got, "jit again": got_again, "eval_ir": tj.eval_ir(optimised, *args)}
        check_outputs(runs, want, tolerances, seed, source)
        for a, s in zip(args, kept):
            np.testing.assert_array_equal(a.tobytes(), s.tobytes())


def differentiable(x):
    return is_inexact(x.dtype) and x.dtype.name not in HALF and np.isfinite(x).all()


def random_direction(rng, like):
    like = np.asarray(like)
    if like.dtype.kind == "c":
        return (rng.standard_normal(like.shape) + 1j * rng.standard_normal(like.shape)).astype(like.dtype)
    return rng.standard_normal(like.shape).astype(like.dtype)


def check_finite_differences(forward, g, primals, u, seed, source):
    """The jvp against one-sided differences along u, at a point moved off the inputs' ties and integers by
    a little noise, where g is smooth: the slopes ahead and behind, each at two step sizes, agree (a kink,
    as abs at 0, or a jump, as floor at an integer, makes them differ; there the derivative is a convention,
    and so it is at ties, as the middle of three tied values under sort, whose one-sided slopes agree)."""
    noise = np.random.default_rng(seed)
    primals = [p + 1e-3 * (1 + np.abs(p)) * noise.standard_normal(p.shape) for p in primals]
    ju = forward(*primals)

    def slope(step):
        return [(np.asarray(a) - np.asarray(b)) / step
                for a, b in zip(g(*[p + step * t for p, t in zip(primals, u)]), g(*primals))]
    eps = 1e-6
    slopes = [slope(h) for h in (eps, eps / 2, -eps, -eps / 2)]
    values = g(*primals)
    for k, d in enumerate(ju):
        ahead, ahead2, behind, behind2 = (np.asarray(s[k]) for s in slopes)
        scale = 1e-4 * (1 + np.abs(ahead))
        # where the step moves the value by less than 1e-8 of itself, float64 cannot show the slope
        visible = np.abs(d) * eps / 2 > 1e-8 * np.abs(np.asarray(values[k], np.float64))
        smooth = (np.abs(ahead - ahead2) < scale) & (np.abs(behind - behind2) < scale) & \
                 (np.abs(ahead - behind) < scale) & np.isfinite(d) & (visible | (np.abs(d) < 1e-4))
        assert np.allclose(np.where(smooth, d, 0), np.where(smooth, (ahead + behind) / 2, 0), rtol=1e-4,
                           atol=1e-4), f"seed {seed}: jvp {d} but finite differences {(ahead + behind) / 2}\n{source}"


@pytest.mark.parametrize("language,start", BATCHES)
def test_random_programs_transform_consistently(language, start):
    """vmap equals a loop over examples; forward and reverse mode agree (<v, J u> = <J^T v, u>, the real part
    of it for complex values, with JAX's unconjugated transposes: J^T v = conj(vjp(conj(v)))), eagerly and
    under jit, wherever the primal values and the products are finite."""
    vmapped, derivatives = [], []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed, source, f, args, tolerances in programs(start, language):
            rng = np.random.default_rng(seed)
            examples = [args] + [[random_array(random.Random(seed * 7 + k), a.shape, a.dtype.name) for a in args]
                                 for k in (1, 2)]
            want = [np.stack(o) for o in zip(*[f(np, *xs) for xs in examples])]
            stacked = [np.stack(a) for a in zip(*examples)]
            batched = lambda *xs, f=f: f(tnp, *xs)
            vmapped.append((seed, source, tolerances, want, stacked, batched))

            outs = f(np, *args)
            # not 16-bit floats: a derivative that cancels (of x / x) keeps rounding noise of the size of its
            # terms, which the bound below, relative to the products, cannot see (test_dtypes checks theirs)
            wrt = [i for i, a in enumerate(args) if differentiable(a)]
            of = [k for k, o in enumerate(outs) if differentiable(np.asarray(o))]
            if not wrt or not of:
                continue

            def g(*xs, f=f, wrt=wrt, of=of, args=args):
                full = list(args)
                for i, x in zip(wrt, xs):
                    full[i] = x
                outs = f(tnp, *full)
                return [outs[k] for k in of]

            primals = [args[i] for i in wrt]
            u = [random_direction(rng, p) for p in primals]
            v = [random_direction(rng, outs[k]) for k in of]
            forward = lambda *p, g=g, u=u: tj.jvp(g, p, u)[1]
            reverse = lambda *p, g=g, v=v: [tnp.conj(c) for c in tj.vjp(g, *p)[1]([tnp.conj(c) for c in v])]
            eager_ju = forward(*primals)
            if "float32" not in source and all(p.dtype == np.float64 for p in primals) and \
                    all(np.asarray(o).dtype == np.float64 for o in eager_ju):       # no rounding to float32 on the way
                check_finite_differences(forward, g, primals, u, seed, source)
            derivatives.append((seed, source, tolerances, primals, u, v, forward, reverse,
                                (eager_ju, reverse(*primals))))
        seeds, sources, _, _, stacked, batched = zip(*vmapped)
        compiled = jit_each([tj.vmap(b) for b in batched], stacked, seeds, sources)[0]
        for (seed, source, tolerances, want, stacked, batched), jitted in zip(vmapped, compiled):
            check_outputs({"vmap": tj.vmap(batched)(*stacked), "jit(vmap)": jitted}, want, tolerances, seed, source)
        if not derivatives:
            return
        seeds, sources, _, primals, _, _, forward, reverse, _ = zip(*derivatives)
        compiled = jit_each([lambda *p, f=f, r=r: (f(*p), r(*p)) for f, r in zip(forward, reverse)], primals, seeds,
                            sources)[0]
        for (seed, source, tolerances, primals, u, v, _, _, eager), jitted in zip(derivatives, compiled):
            for mode, (ju, jtv) in {"eager": eager, "jit": jitted}.items():
                terms = [np.real(np.conj(np.asarray(a, np.complex128)) * b) for a, b in zip(v, ju)] + \
                        [np.real(np.conj(np.asarray(a, np.complex128)) * b) for a, b in zip(jtv, u)]
                if not all(np.isfinite(t).all() for t in terms):
                    continue
                lhs, rhs = sum(t.sum() for t in terms[:len(v)]), sum(t.sum() for t in terms[len(v):])
                rtol = max(r for _, r in tolerances)
                assert abs(lhs - rhs) <= rtol * (1 + sum(np.abs(t).sum() for t in terms)), \
                    f"seed {seed}, {mode}: <v, J u> = {lhs} but <J^T v, u> = {rhs}\n{source}"
