"""The vectorizable math library against NumPy: accuracy, special values, and that loops vectorize.

f64 results are measured in ulp against long-double references, f32 results as relative error
against float64 NumPy.
"""

import ctypes
import functools
import re
from unittest import mock

import llvmlite.binding as llvm
import numpy as np
import pytest

from tracejit.backend import libcalls, mathlib, mathlib_exp, specmath
from tracejit.backend.mathlib import BINARY, FUNCS

_DTYPE = {"float": np.float32, "double": np.float64}

# Bounds asserted by the accuracy tests: max f64 error in ulp (measured values are in the
# mathlib docstring) and max f32 relative error: one f32 ulp (2**-23) for the functions computed in
# double (measured about half of it), a little more for those computed in f32 (mathlib.NATIVE_F32; atan, asin,
# acos, atan2 and pow measure about half of one too); all well inside the documented bar of 2e-6.
_F64_ULP = {"exp": 1.5, "exp2": 1.5, "expm1": 1.5, "log": 1.0, "log1p": 1.0, "log2": 1.0, "log10": 1.0,
            "tanh": 2.0, "logistic": 2.0, "sin": 1.0, "cos": 1.0, "tan": 2.5, "pow": 1.5, "atan": 2.0, "asin": 2.5,
            "acos": 2.25, "atan2": 2.25, "cbrt": 1.0}
_F32_REL = {name: 2.0**-23 for name in FUNCS} | {"exp": 1.25 * 2.0**-23, "exp2": 1.25 * 2.0**-23, "expm1": 1.25 * 2.0**-23,
                                                  "tanh": 1.75 * 2.0**-23, "logistic": 1.75 * 2.0**-23}


@functools.cache
def _llvm():
    """One MCJIT engine per process, plus a separate TargetMachine for passes and assembly."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()

    def machine():
        return target.create_target_machine(
            cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3)

    return llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine()), machine()


def _kernel_ir(name, ty, library=mathlib):
    """`void kernel(ty* in[, ty* in2], ty* out, i64 n)` applying the function of `library` (mathlib, or another
    library with its interface: specmath) elementwise."""
    ins = ["a", "b"][:libcalls.arity(name)]
    params = ", ".join(f"ptr noalias %{v}" for v in ins)
    loads = "".join(f"  %p{v} = getelementptr inbounds {ty}, ptr %{v}, i64 %i\n"
                    f"  %x{v} = load {ty}, ptr %p{v}\n" for v in ins)
    args = ", ".join(f"{ty} %x{v}" for v in ins)
    return library.math_module_ir({(name, ty)}) + f"""
define void @kernel_{name}_{ty}({params}, ptr noalias %out, i64 %n) {{
entry:
  %nonempty = icmp sgt i64 %n, 0
  br i1 %nonempty, label %loop, label %done
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
{loads}  %y = call {ty} {library.math_symbol(name, ty)}({args})
  %po = getelementptr inbounds {ty}, ptr %out, i64 %i
  store {ty} %y, ptr %po
  %next = add nuw nsw i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""


@functools.cache
def _compiled(name, ty, library=mathlib):
    """(ctypes function, optimised assembly) of the kernel for one math function."""
    engine, tm = _llvm()
    mod = llvm.parse_assembly(_kernel_ir(name, ty, library))
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    mod.verify()
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=3))
    pb.getModulePassManager().run(mod, pb)
    asm = tm.emit_assembly(mod)
    engine.add_module(mod)
    engine.finalize_object()
    nargs = 4 if name in BINARY else 3
    proto = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (nargs - 1), ctypes.c_int64)
    return proto(engine.get_function_address(f"kernel_{name}_{ty}")), asm


def _apply(name, ty, *xs, library=mathlib):
    """The function on arrays: the vector math library's (what compiled loops call, 16 lanes) for
    libcalls.LIBRARY, the inlined definition of `library` (mathlib, or specmath) for the others."""
    xs = [np.ascontiguousarray(x, dtype=_DTYPE[ty]) for x in xs]
    if library is mathlib and name in libcalls.LIBRARY:
        return _apply_library(name, ty, 16, *xs)
    return _apply_inlined(name, ty, *xs, library=library)


def _apply_inlined(name, ty, *xs, library=mathlib):
    out = np.empty_like(xs[0])
    _compiled(name, ty, library)[0](*[x.ctypes.data for x in xs], out.ctypes.data, out.size)
    return out


def _reference(name, *xs):
    """NumPy in the inputs' precision (long double for the f64 accuracy tests)."""
    with np.errstate(all="ignore"):
        if name == "logistic":
            (x,) = xs
            e = np.exp(-np.abs(x))
            return np.where(x < 0, e, 1) / (1 + e)
        return getattr(np, {"pow": "power", "atan": "arctan", "asin": "arcsin", "acos": "arccos",
                                "atan2": "arctan2"}.get(name, name))(*xs)


def _signed(rng, lo, hi, n):
    """+-10**u, u uniform in [lo, hi): magnitudes over many binades."""
    return rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(lo, hi, n)


def _inputs(name, ty, rng, n=40_000):
    """Wide random inputs per function; f32 ranges are the f64 ones cut to float32."""
    big = 38 if ty == "float" else 308
    tiny = -45 if ty == "float" else -323
    u = rng.uniform
    e2 = (155, 132) if ty == "float" else (1080, 1030)
    trig = [u(-10, 10, n), _signed(rng, tiny, 12.9, n), np.floor(u(1, 2**20, n)) * (np.pi / 2)]  # near zeros
    table = {
        "exp": [u(-746, 710, n), _signed(rng, tiny, 2.9, n)],
        # past overflow and through the subnormals to 0; tiny arguments; near integers and halves (large n, small t)
        "exp2": [u(-e2[0], e2[1], n), _signed(rng, tiny, 3.1, n), np.round(u(-e2[0], e2[1], n)) + u(-1e-3, 1e-3, n),
                 np.floor(u(-e2[0], e2[1], n)) + 0.5],
        "expm1": [u(-50, 710, n), _signed(rng, tiny, 0.5, n)],
        "log": [10.0 ** u(tiny, big, n), 1 + u(-0.3, 0.42, n)],
        "log1p": [_signed(rng, tiny, 0, n), u(-1, 1, n), 10.0 ** u(0, big, n)],
        "tanh": [u(-22, 22, n), _signed(rng, tiny, 0.5, n)],
        "logistic": [u(-760, 40, n), _signed(rng, tiny, 0.5, n)],
        "sin": trig, "cos": trig, "tan": trig,
        "atan": [_signed(rng, tiny, big, n), u(-3, 3, n), 1 + u(-1e-3, 1e-3, n), np.tan(np.pi / 8) + u(-1e-6, 1e-6, n)],
        "asin": [u(-1, 1, n), 1 - 10.0 ** u(-16, 0, n), _signed(rng, tiny, 0, n)],
    }
    table["acos"] = table["asin"] + [-1 + 10.0 ** u(-16, 0, n)]
    if ty == "double":
        table["sin"] = table["cos"] = table["tan"] = trig + [u(-1e9, 1e9, n), np.floor(u(1, 2**30, n)) * (np.pi / 2)]
    if name in ("log2", "log10"):  # (drawn last: the other functions' inputs stay as they were)
        # and near powers of two and ten, where log2 and log10 are near integers
        table[name] = table["log"] + [2.0 ** np.round(u(tiny * 3.3, big * 3.3, n)) * (1 + u(-1e-6, 1e-6, n)),
                                      10.0 ** np.round(u(-30, 30, n)) * (1 + u(-1e-6, 1e-6, n))]
    if name == "cbrt":  # all binades, around 1, exact cubes
        table[name] = [_signed(rng, tiny, big, n), u(-8, 8, n), np.round(u(-1e6, 1e6, n)) ** 3]
    if name == "atan2":
        y = np.concatenate([_signed(rng, tiny, big, n), u(-3, 3, n), u(-3, 3, n)])
        x = np.concatenate([_signed(rng, tiny, big, n), u(-3, 3, n), -u(0, 3, n)])
        return [y.astype(_DTYPE[ty]), x.astype(_DTYPE[ty])]
    if name == "pow":
        ylim = 12 if ty == "float" else 100
        x = np.concatenate([_signed(rng, -3, 3, n), -np.floor(u(1, 5, n)), 1 + u(-1e-6, 1e-6, n),
                            10.0 ** u(tiny, big, n)])
        y = np.concatenate([u(-ylim, ylim, n), np.floor(u(-ylim, ylim, n)), u(-1e7, 1e7, n), u(-2.5, 2.5, n)])
        return [x.astype(_DTYPE[ty]), y.astype(_DTYPE[ty])]
    with np.errstate(over="ignore"):
        return [np.concatenate(table[name]).astype(_DTYPE[ty])]


def _ulp_error(y, ref):
    """|y - ref| in units of the f64 spacing at ref; infinities and NaN must match exactly."""
    with np.errstate(all="ignore"):
        ref64 = ref.astype(np.float64)
        err = np.abs(y.astype(np.longdouble) - ref) / np.spacing(np.abs(ref64)).astype(np.longdouble)
    same = (y == ref64) | (np.isnan(y) & np.isnan(ref64))
    special = ~np.isfinite(ref64) | ~np.isfinite(y)
    return np.where(special, np.where(same, 0, np.inf), err)


def _f32_error(y, ref):
    """Relative error where ref is a normal float32; elsewhere (subnormal or overflowing ref) the
    distance to the rounded ref in f32 ulps, times eps so that both read as relative errors."""
    info = np.finfo(np.float32)
    with np.errstate(all="ignore"):
        ref32 = ref.astype(np.float32)
        normal = (np.abs(ref) >= info.tiny) & (np.abs(ref) <= info.max)
        rel = np.abs(y - ref) / np.abs(ref)
        ulps = np.abs(y.astype(np.float64) - ref32) / np.spacing(np.abs(ref32)).astype(np.float64)
    same = (y == ref32) | (np.isnan(y) & np.isnan(ref32))
    other = np.where(same, 0, np.where(np.isfinite(ulps), ulps * info.eps, np.inf))
    return np.where(normal, rel, other)


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="needs x87 long double references")
@pytest.mark.parametrize("name", FUNCS)
def test_f64_accuracy(name):
    xs = _inputs(name, "double", np.random.default_rng(0))
    err = _ulp_error(_apply(name, "double", *xs), _reference(name, *[x.astype(np.longdouble) for x in xs]))
    worst = np.argmax(err)
    assert err[worst] <= _F64_ULP[name], (name, [x[worst] for x in xs], err[worst])


@pytest.mark.parametrize("name", FUNCS)
def test_f32_accuracy(name):
    xs = _inputs(name, "float", np.random.default_rng(1))
    err = _f32_error(_apply(name, "float", *xs), _reference(name, *[x.astype(np.float64) for x in xs]))
    worst = np.argmax(err)
    assert err[worst] <= _F32_REL[name] <= 2e-6, (name, [x[worst] for x in xs], err[worst])


def _assert_matches(y, ref, rtol):
    """Same NaNs, same infinities and signed zeros, finite values within rtol."""
    assert np.array_equal(np.isnan(y), np.isnan(ref))
    exact = np.isinf(ref) | (ref == 0)
    assert np.array_equal(y[exact], ref[exact])
    assert np.array_equal(np.signbit(y[exact]), np.signbit(ref[exact]))
    np.testing.assert_allclose(y[~exact], ref[~exact], rtol=rtol)


_RTOL = {"float": 1e-6, "double": 1e-14}


@pytest.mark.parametrize("ty", ["float", "double"])
@pytest.mark.parametrize("name", [n for n in FUNCS if n not in BINARY])
def test_special_values(name, ty):
    info = np.finfo(_DTYPE[ty])
    small = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 30.0, -30.0, 100.0, -100.0,
             1000.0, -1000.0, info.smallest_subnormal, -info.smallest_subnormal, info.tiny, -info.tiny]
    x = np.array(small + ([] if name in ("sin", "cos", "tan") else [info.max, -info.max]), _DTYPE[ty])
    with np.errstate(over="ignore"):
        ref = _reference(name, x.astype(np.longdouble)).astype(_DTYPE[ty])
    _assert_matches(_apply(name, ty, x), ref, _RTOL[ty])


@pytest.mark.parametrize("ty", ["float", "double"])
def test_pow_special_values(ty):
    info = np.finfo(_DTYPE[ty])
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5,
            info.smallest_subnormal, -info.smallest_subnormal, info.max, -info.max]
    x, y = (a.ravel().astype(_DTYPE[ty]) for a in np.meshgrid(vals, vals))
    with np.errstate(all="ignore"):
        ref = np.power(x, y)
    _assert_matches(_apply("pow", ty, x, y), ref, _RTOL[ty])


def _pow_f32_arguments(rng, n):
    """float32 (x, y) where f32 pow is hard: y * log2|x| = t up to the overflow and underflow edges with x across
    log2's reduced interval, near 1 (large y) and over all binades, t at the edges and through the subnormal
    results, subnormal x, negative x with integer y, and both signs over a wide range."""
    u = rng.uniform
    edges = np.where(rng.random(n) < 0.5, u(126.5, 128.5, n), u(-150.5, -124.0, n))
    xt = [(1 + u(-0.3, 0.42, n), u(-150, 128, n)), (1 + u(-2.0**-10, 2.0**-10, n), u(-150, 128, n)),
          (10.0 ** u(-38, 38, n), u(-150, 128, n)), (10.0 ** u(-6, 6, n), edges)]
    with np.errstate(divide="ignore"):
        pairs = [(x, t / np.log2(x)) for x, t in xt]
    pairs += [(10.0 ** u(-45, -38, n), u(-1.2, 1.2, n)), (-np.floor(u(1, 100, n)), np.floor(u(-20, 20, n))),
              (_signed(rng, -3, 3, n), u(-12, 12, n))]
    return [np.concatenate(a).astype(np.float32) for a in zip(*pairs)]


def test_f32_pow_against_float64_on_hard_arguments():
    """f32 pow (mathlib_pow: f32 arithmetic, log2|x| and y*log2|x| as pairs of f32) within 0.6 f32 ulp of float64
    NumPy where the result is normal (measured 0.54; y*log2|x| carried in one f32 costs about 20 ulp at |t| = 100,
    and each of the pairs' correction terms tested here about 0.1), within one step where it is subnormal or at the
    overflow edge (rounded twice there), in the library's fast path (vectors of positive normal x) and its full
    definition."""
    x, y = _pow_f32_arguments(np.random.default_rng(5), 50_000)
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64))
    err = _f32_error(_apply("pow", "float", x, y), ref)
    normal = (np.abs(ref) >= np.finfo(np.float32).tiny) & (np.abs(ref) <= np.finfo(np.float32).max)
    assert normal.sum() > 250_000 and (~normal & (ref != 0) & np.isfinite(ref)).sum() > 10_000
    worst = np.argmax(np.where(normal, err, 0))
    assert err[worst] <= 0.6 * 2.0**-23, (x[worst], y[worst], err[worst])
    worst = np.argmax(np.where(normal, 0, err))
    assert err[worst] <= 2.0**-23, (x[worst], y[worst], err[worst])


def test_f32_pow_special_values_are_numpys_bits():
    """C99's cases (zeros and infinities of either sign, NaN, 1, -1, odd and even integers, non-integers,
    subnormal and huge arguments) give NumPy's float32 bits where the result is exact (0, inf, a power of two),
    NaN where NumPy's is NaN, the others within an ulp."""
    info = np.finfo(np.float32)
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, 0.25, 4.0, -7.0,
            1e-30, -1e-30, 1e30, -1e30, 16777215.0, -16777215.0, 4194305.0, 2.0**64, -(2.0**70), 1.5, 0.75,
            info.smallest_subnormal, -info.smallest_subnormal, info.tiny, info.max, -info.max]
    x, y = (a.ravel().astype(np.float32) for a in np.meshgrid(vals, vals))
    with np.errstate(all="ignore"):
        ref = np.power(x, y)
    out = _apply("pow", "float", x, y)
    assert np.array_equal(np.isnan(out), np.isnan(ref))
    exact = ~np.isnan(ref) & (np.isinf(ref) | (ref == 0) | (np.abs(np.frexp(ref)[0]) == 0.5))     # powers of two
    np.testing.assert_array_equal(out[exact].view(np.uint32), ref[exact].view(np.uint32))
    np.testing.assert_allclose(out[~np.isnan(ref)], ref[~np.isnan(ref)], rtol=2.0**-23)


@pytest.mark.parametrize("ty", ["float", "double"])
def test_atan2_special_values(ty):
    """C99's zeros, infinities and NaN (signs included), and ratios at the reductions' edges (tan(pi/8),
    tan(3pi/8)), at the ends of the range and with a subnormal operand."""
    info = np.finfo(_DTYPE[ty])
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.0, 0.41421357, 2.4142137, info.max, -info.max,
            info.smallest_subnormal, -info.smallest_subnormal, info.tiny, 1e-30, -1e30]
    y, x = (a.ravel().astype(_DTYPE[ty]) for a in np.meshgrid(vals, vals))
    with np.errstate(all="ignore"):
        ref = np.arctan2(y.astype(np.longdouble), x.astype(np.longdouble)).astype(_DTYPE[ty])
    _assert_matches(_apply("atan2", ty, y, x), ref, _RTOL[ty])


@pytest.mark.parametrize("ty", ["float", "double"])
def test_trig_of_huge_arguments(ty):
    """Beyond mathlib.TRIG_LIMIT the library's sin, cos and tan take the C library's (Payne-Hanek) value on those
    lanes only: huge arguments match NumPy, and an ordinary argument gets the same bits beside huge ones."""
    info, rng = np.finfo(_DTYPE[ty]), np.random.default_rng(5)
    huge = np.concatenate([[2.0**44, -(2.0**60), 1e15, 1e20, float(info.max), -float(info.max)],
                           _signed(rng, 13.5, 38 if ty == "float" else 300, 200)]).astype(_DTYPE[ty])
    ordinary = rng.uniform(-10, 10, huge.size).astype(_DTYPE[ty])
    mixed = np.where(np.arange(huge.size) % 3 == 0, huge, ordinary)
    for name in ("sin", "cos", "tan"):
        with np.errstate(invalid="ignore"):
            want = _reference(name, huge.astype(np.float64)).astype(_DTYPE[ty])
        _assert_matches(_apply(name, ty, huge), want, _RTOL[ty])
        alone, beside = _apply(name, ty, ordinary), _apply(name, ty, mixed)
        near = np.arange(huge.size) % 3 != 0
        np.testing.assert_array_equal(beside[near], alone[near])


@pytest.mark.parametrize("name", libcalls.FAR)
def test_complex_trig_beyond_the_reduction(name):
    """libcalls.FAR, which the complex functions pass their inlined sin and cos through: the given value, bit for
    bit, on lanes within TRIG_LIMIT, and the C library's function beyond it (infinities and NaN too), at every
    width."""
    rng = np.random.default_rng(6)
    x = np.where(np.arange(400) % 3 == 0, _signed(rng, 13.5, 300, 400), rng.uniform(-10, 10, 400))
    x[:4] = [np.inf, -np.inf, np.nan, -(2.0**43)]
    given = rng.uniform(-1, 1, x.size)
    far = ~(np.abs(x) <= mathlib.TRIG_LIMIT)
    with np.errstate(invalid="ignore"):
        want = np.where(far, getattr(np, name.removesuffix("_far"))(x), given)
    for lanes in libcalls.LANES:
        out = _apply_library(name, "double", lanes, x, given)
        np.testing.assert_array_equal(out, want, err_msg=lanes)


class _TwoStepScaling:
    """mathlib's interface with exp's 2**n scaling written as on CPUs without AVX-512's vscalef."""
    math_symbol = staticmethod(mathlib.math_symbol)

    @staticmethod
    def math_module_ir(needed):
        with mock.patch.object(mathlib_exp, "has_scalef", lambda: False):
            return mathlib.math_module_ir(needed)


@pytest.mark.parametrize("ty", ["float", "double"])
@pytest.mark.parametrize("name", ["exp", "exp2"])
def test_exp_scales_the_same_without_scalef(name, ty):
    """exp's (and exp2's) v * 2**n: llvm.ldexp (one vscalef) where the host has AVX-512, two exact multiplications
    elsewhere; both round once, so they give the same bits, through the subnormal range and overflow."""
    info = np.finfo(_DTYPE[ty])
    log = np.log if name == "exp" else np.log2
    lo, hi = log(float(info.smallest_subnormal)) - 1, log(float(info.max)) + 1
    x = np.random.default_rng(3).uniform(lo, hi, 100_000).astype(_DTYPE[ty])
    x[:4] = [np.nan, np.inf, -np.inf, 0.0]
    bits = f"u{x.itemsize}"
    assert "ldexp" not in _TwoStepScaling.math_module_ir({(name, ty)})
    np.testing.assert_array_equal(_apply_inlined(name, ty, x, library=_TwoStepScaling).view(bits),
                                  _apply_inlined(name, ty, x).view(bits))


def test_functions_paste_into_one_module():
    """All definitions together, next to the caller's own intrinsic declaration, form a valid module."""
    _llvm()
    text = mathlib.math_module_ir({(n, t) for n in FUNCS for t in ("float", "double")} | {("exp", "float")})
    mod = llvm.parse_assembly(text + "declare double @llvm.fma.f64(double, double, double)\n")
    mod.verify()
    assert len(re.findall(r"^define ", text, re.MULTILINE)) == 2 * len(FUNCS)
    with pytest.raises(ValueError):
        mathlib.math_function_ir("erf", "double")


@pytest.mark.parametrize("ty", ["float", "double"])
@pytest.mark.parametrize("name", FUNCS)
def test_loop_vectorizes(name, ty):
    _llvm()
    if not llvm.get_host_cpu_features().get("avx"):
        pytest.skip("checks x86 AVX vector registers")
    asm = _compiled(name, ty)[1]
    assert re.search(r"\bzmm\d+|\bymm\d+", asm), name
    assert not re.search(r"^\s*call", asm, re.MULTILINE), name


@pytest.mark.parametrize("name", mathlib.NATIVE_F32)
def test_native_f32_computes_in_f32(name):
    """These f32 functions never widen to double, so a vector register holds twice the lanes. (LLVM picks
    the width per CPU: zmm on AMD's AVX-512 cores, ymm on Intel's, which prefer 256-bit vectors.)"""
    assert "double" not in mathlib.math_function_ir(name, "float")
    _llvm()
    if not llvm.get_host_cpu_features().get("avx2"):
        pytest.skip("checks AVX registers")
    asm = _compiled(name, "float")[1]
    assert re.search(r"\bv\w+ps\s.*\b[yz]mm\d+", asm), name
    assert not re.search(r"\bv\w+pd\s.*\b[yz]mm\d+|vcvtps2pd", asm), name


def _library_kernel_ir(name, ty, lanes):
    """`void lib(ty* in[, ty* in2], ty* out, i64 n)` calling the library's `lanes`-wide function on each block
    of lanes elements (n a multiple of lanes)."""
    vty = f"<{lanes} x {ty}>" if lanes > 1 else ty
    symbol = mathlib.vector_symbol(name, ty, lanes)
    ins = ["a", "b"][:libcalls.arity(name)]
    params = ", ".join(f"ptr noalias %{v}" for v in ins)
    loads = "".join(f"  %p{v} = getelementptr inbounds {ty}, ptr %{v}, i64 %i\n"
                    f"  %x{v} = load {vty}, ptr %p{v}, align 1\n" for v in ins)
    args = ", ".join(f"{vty} %x{v}" for v in ins)
    return f"""declare {vty} {symbol}({", ".join([vty] * len(ins))})
define void @lib_{name}_{ty}_{lanes}({params}, ptr noalias %out, i64 %n) {{
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
{loads}  %y = call {vty} {symbol}({args})
  %po = getelementptr inbounds {ty}, ptr %out, i64 %i
  store {vty} %y, ptr %po, align 1
  %next = add nuw nsw i64 %i, {lanes}
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""


@functools.cache
def _library(name, ty, lanes):
    """The ctypes function of `_library_kernel_ir`, the library's functions linked from vecmath."""
    from tracejit.backend import vecmath
    engine, _ = _llvm()
    for symbol, address in vecmath.symbols({(name, ty, lanes)}).items():
        llvm.add_symbol(symbol, address)
    engine.add_module(llvm.parse_assembly(_library_kernel_ir(name, ty, lanes)))
    engine.finalize_object()
    nargs = libcalls.arity(name) + 1
    return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * nargs, ctypes.c_int64)(
        engine.get_function_address(f"lib_{name}_{ty}_{lanes}"))


def _apply_library(name, ty, lanes, *xs):
    n = len(xs[0])
    xs = [np.concatenate([x, np.ones(-n % lanes, x.dtype)]) for x in xs]     # whole vectors
    out = np.empty_like(xs[0])
    _library(name, ty, lanes)(*[x.ctypes.data for x in xs], out.ctypes.data, len(out))
    return out[:n]


@pytest.mark.parametrize("ty", ["float", "double"])
@pytest.mark.parametrize("name", [name for name in libcalls.LIBRARY       # (test_specmath's; FAR and EXACT: below)
                                  if name not in libcalls.SPECIAL + specmath.LANEWISE + libcalls.FAR + libcalls.EXACT])
def test_library_functions_agree_at_every_width(name, ty):
    """The vector math library that compiled loops call (vecmath.py) gives the same bits at every width, and
    the bits of the inlined definitions but where it computes otherwise (mathlib.F32_TRIG: in f32)."""
    xs = _inputs(name, ty, np.random.default_rng(2), n=2000)
    xs = [np.ascontiguousarray(x, dtype=_DTYPE[ty]) for x in xs]
    expected = _apply_library(name, ty, 1, *xs)
    if not (ty == "float" and name in mathlib.F32_TRIG):
        bits = f"u{expected.itemsize}"
        np.testing.assert_array_equal(_apply_inlined(name, ty, *xs).view(bits), expected.view(bits))
    for lanes in libcalls.LANES:
        out = _apply_library(name, ty, lanes, *xs)
        np.testing.assert_array_equal(out.view(f"u{out.itemsize}"), expected.view(f"u{out.itemsize}"),
                                      err_msg=(name, ty, lanes))


@pytest.mark.parametrize("ty", ["float", "double"])
@pytest.mark.parametrize("name", [name for name in libcalls.VARIANTS
                                  if name not in libcalls.SPECIAL + specmath.LANEWISE + libcalls.FAR + libcalls.EXACT])
def test_functions_without_an_intrinsic_are_library_calls_too(name, ty):
    """expm1, log1p, logistic and cbrt have no LLVM intrinsic: a loop calls the library's function by name and the
    loop vectorizer widens the call to the library's vector function (vector-function-abi-variant), at full
    register width; the module defines none of the function's body."""
    import tracejit as tj
    from tracejit import lax
    from tracejit import numpy as tnp
    from tracejit.backend import llvm as backend_llvm
    fn = getattr(lax, name, None) or getattr(tnp, name)
    dtype = _DTYPE[ty]
    # (not through cbrt(x) = -1/2, where the outer cbrt of about 0 magnifies the inner one's rounding)
    x = np.linspace(0.0 if name == "cbrt" else -0.5, 2.0, 10_000, dtype=dtype)
    chain = tj.jit(lambda x: fn(fn(x) * 0.5 + 0.25))
    ref = _reference(name, _reference(name, x) * dtype(0.5) + dtype(0.25))
    np.testing.assert_allclose(chain(x), ref, rtol=4 * np.finfo(dtype).eps, atol=4 * np.finfo(dtype).eps)
    text = chain.lower(x).as_llvm()
    lanes = backend_llvm.vector_bytes() // np.dtype(dtype).itemsize
    assert re.search(rf"call <{lanes} x {ty}> @tj_{name}_{ty}_v{lanes}\(", text), name
    assert not re.search(rf"^define .*@tj_{name}_", text, re.MULTILINE)


@pytest.mark.parametrize("name", ["pow", "log1p"])
def test_a_library_loop_runs_its_last_partial_block_through_the_vector_calls(name):
    """Tail folding (kernels.py): 1000 f32 elements are 15 blocks of 4 x 16 and 40 left over; those run masked
    through the vector function, not one by one through the scalar function (which took as long as the rest)."""
    import tracejit as tj
    from tracejit import numpy as tnp
    fn = (lambda x: tnp.power(x, np.float32(1.1))) if name == "pow" else tnp.log1p
    x = np.linspace(0.1, 2.0, 1000, dtype=np.float32)
    chain = tj.jit(lambda x: fn(fn(x) * 0.5 + 0.25))
    ref = _reference(name, *([_reference(name, x, *[np.float32(1.1)] * (name == "pow")) * np.float32(0.5)
                                + np.float32(0.25)] + [np.float32(1.1)] * (name == "pow")))
    np.testing.assert_allclose(chain(x), ref, rtol=4e-7)
    text = chain.lower(x).as_llvm()
    assert re.search(rf"call <\d+ x float> @tj_{name}_float_v\d+\(", text)
    assert not re.search(rf"call float @tj_{name}_float\(", text)


@pytest.mark.parametrize("name, ty, lanes", [("sin", "float", 16), ("erf", "double", 1), ("erfc", "float", 1),
                                             ("pow", "double", 8), ("log1p", "float", 16), ("pow", "float", 16)])
def test_the_light_pipeline_leaves_library_code_as_o3_would(name, ty, lanes):
    """The library compiles with the light pass pipeline (llvm.LIGHT_PASSES: a fourth of O3's time): its machine code
    stays within 4% of O3's instruction count (the internal far-path functions inlined, common subexpressions
    of the near and far paths shared), so it runs as fast; the tests above check its bits."""
    from tracejit.backend import llvm as tj_llvm
    machine = tj_llvm._machine()
    text = tj_llvm.module_header() + libcalls.library_function_ir(name, ty, lanes)

    def instructions(light):
        mod = llvm.parse_assembly(text)
        builder = tj_llvm._pass_builder(machine)
        tj_llvm._module_passes(builder, tj_llvm.LIGHT_PASSES if light else None).run(mod, builder)
        asm = machine.emit_assembly(llvm.parse_assembly(str(mod)))
        return sum(line.startswith("\t") and not line.startswith("\t.") for line in asm.splitlines())

    assert instructions(True) <= instructions(False) * 1.04 + 2
