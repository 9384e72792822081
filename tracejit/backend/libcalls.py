"""The vector math library as text: which of mathlib's functions loops call as library functions, their
names and definitions at every width, how a loop calls them, and the renaming of the optimised module's
intrinsic calls to them. vecmath.py compiles the definitions once per process; llvm.py renames the calls
after the pass pipeline.
"""
import ctypes
import ctypes.util
import re

from . import specmath
from .mathlib import BINARY, F32_TRIG, F32_TRIG_LIMIT, TRIG_LIMIT, define, kernel, vector_symbol
from .mathlib_body import Body
from .mathlib_pow import pow_f32_fast

# The functions that have an LLVM intrinsic of the same name and signature (llvm.sin.f32 ...). Loops call them as
# intrinsics, which the loop vectorizer widens (llvm.sin.v16f32); `library_calls` then renames every such call
# to the library's function of that width, compiled once per process (vecmath.py), not inlined into each loop.
INTRINSICS = ("exp", "exp2", "log", "log2", "log10", "sin", "cos", "tan", "tanh", "pow", "atan", "asin", "acos",
              "atan2")
# The functions without an intrinsic: a loop calls the library's scalar function by name, the call carrying
# the "vector-function-abi-variant" attribute that names its vector functions, so that the loop vectorizer
# widens it to them (the module declares them and keeps them in @llvm.compiler.used: the attribute's
# functions must exist when the vectorizer runs, and global DCE drops unused declarations before that).
# specmath's functions among them (SPECIAL); erf and erfc branch per vector: one whose every lane is small takes
# the small arguments' expression alone (specmath.SMALL), without the full code's exp and division.
SPECIAL = ("erf", "erfc", "erfcx", "ndtr")
# The complex functions (cmathlib) inline mathlib's sin and cos kernels, which share one reduction that ends at
# TRIG_LIMIT; they pass each value with its argument through `<name>_far`, which returns the value unless the
# argument is beyond the limit, where the C library's function replaces it (a branch that ordinary vectors skip).
FAR = ("sin_far", "cos_far")
# fmod, which LLVM's frem would compute by the C library's fmod element by element (18 ns each, as NumPy's), is
# exact in straight-line double arithmetic where |x / y| < 2**52 (`_fmod_near`); its other lanes (NaNs, infinities,
# a zero y, larger quotients) take the C library's, in a branch that ordinary vectors skip.
EXACT = ("fmod",)
VARIANTS = ("expm1", "log1p", "logistic", "cbrt") + SPECIAL + specmath.LANEWISE + FAR + EXACT
LIBRARY = INTRINSICS + VARIANTS
LANES = (1, 2, 4, 8, 16)
_INTRINSIC = re.compile(r"@llvm\.(" + "|".join(INTRINSICS) + r")\.(?:v(\d+))?f(32|64)\b")
_VARIANT_CALL = re.compile(r"call [^@\n]*@tj_(" + "|".join(VARIANTS) + r")_(float|double)(?:_v(\d+))?\(")


def intrinsic_symbol(name: str, ty: str) -> str:
    """``@llvm.<name>.f32`` or ``.f64``: what a loop calls for an INTRINSICS function."""
    return f"@llvm.{name}.{'f32' if ty == 'float' else 'f64'}"


def library_call(name: str, ty: str, operands: str) -> str:
    """The call instruction (right of the ``=``) of a LIBRARY function on `operands` ("double %x")."""
    if name in INTRINSICS:
        return f"call {ty} {intrinsic_symbol(name, ty)}({operands})"
    scalar = vector_symbol(name, ty, 1)[1:]
    variants = ",".join(f"_ZGV_LLVM_N{n}{'v' * arity(name)}_{scalar}({vector_symbol(name, ty, n)[1:]})"
                        for n in LANES[1:])
    return f'call {ty} @{scalar}({operands}) "vector-function-abi-variant"="{variants}"'


def declarations(library) -> str:
    """Declarations of the VARIANTS functions among library's (name, ty) at every width, for a module
    whose loops call them (`library_call`), and the @llvm.compiler.used that keeps the vector ones."""
    lines, used = [], []
    for name, ty in sorted(library):
        if name in VARIANTS:
            for n in LANES:
                vty = ty if n == 1 else f"<{n} x {ty}>"
                lines.append(f"declare {vty} {vector_symbol(name, ty, n)}({', '.join([vty] * arity(name))})"
                             " nounwind willreturn memory(none)")
                used += [f"ptr {vector_symbol(name, ty, n)}"] if n > 1 else []
    if used:
        lines.append(f"@llvm.compiler.used = appending global [{len(used)} x ptr] [{', '.join(used)}], "
                     'section "llvm.metadata"')
    return "\n".join(lines)


def arity(name):
    """The number of arguments of a LIBRARY function."""
    return 2 if name in BINARY + FAR + EXACT else specmath.arity(name)


def uses_library(text: str) -> bool:
    """Whether module text calls a LIBRARY function."""
    return _INTRINSIC.search(text) is not None or _VARIANT_CALL.search(text) is not None


def called(text: str):
    """The (name, ty) of the LIBRARY functions that module text calls."""
    return {(name, ty) for name, ty, _ in _variant_calls(text)} | {
        (m.group(1), "float" if m.group(3) == "32" else "double") for m in _INTRINSIC.finditer(text)}


def library_calls(text: str):
    """(text, the (name, ty, lanes) it calls): the LIBRARY intrinsics of an optimised module's text renamed
    to the library's functions (their declarations become the functions' declarations), the VARIANTS' calls
    as they are. Every width is the library's: besides the loop vectorizer's (LANES), InstCombine makes others
    where a loop reads interleaved values (exp over the 3 columns of a (n, 3) array: one call on 48 lanes, which
    LLVM otherwise computes by the C library's expf lane by lane, 15x slower)."""
    found = _variant_calls(text)

    def rename(m):
        lanes = int(m.group(2) or 1)
        ty = "float" if m.group(3) == "32" else "double"
        found.add((m.group(1), ty, lanes))
        return vector_symbol(m.group(1), ty, lanes)
    return _INTRINSIC.sub(rename, text), found


def _variant_calls(text):
    """The (name, ty, lanes) of the VARIANTS functions that text's call instructions call."""
    return {(m.group(1), m.group(2), int(m.group(3) or 1)) for m in _VARIANT_CALL.finditer(text)}


def library_function_ir(name: str, ty: str, lanes: int) -> str:
    """An external definition of the function on `lanes`-element vectors (`vector_symbol`), for the
    library compiled once per process (vecmath.py). Three branch on whether any lane is `far`: F32_TRIG functions
    of f32 compute in f32 and call the double algorithm (an internal `..._wide` function) for a vector with a
    lane beyond F32_TRIG_LIMIT, its value taken on those lanes; specmath.SMALL functions compute the small
    arguments' expression alone for a vector with none beyond its bound, else the full definition (an internal
    `..._full` function, which gives the same bits on the small lanes); so does f32 pow, for a vector with no lane
    that needs its special cases (mathlib_pow.pow_f32_fast); specmath.LANEWISE functions compute a vector with no lane
    that needs the scalar definition's loop in straight-line code, else lane by lane (`_lanewise`). The internal
    functions are always inlined (but the lanewise scalar one), as O3 did, since the library compiles with the light
    pipeline (llvm._passes)."""
    if name in specmath.LANEWISE:
        if lanes == 1:
            return specmath.define(name, ty, 1, "", "nounwind")
        f, far, y = specmath.near_path(name, ty, lanes)
        scalar = specmath.define(name, ty, 1, "internal", "nounwind", suffix="_full")
        return scalar + _lanewise(name, ty, lanes) + _branch_on_far(name, ty, f, far, y, "_lanes", select=False)
    if name in SPECIAL and name not in specmath.SMALL:
        return specmath.define(name, ty, lanes, "", "nounwind")
    if name in SPECIAL:
        f, far, y = specmath.small_path(name, ty, lanes)
        full = specmath.define(name, ty, lanes, "internal", "alwaysinline nounwind", suffix="_full")
        return full + _branch_on_far(name, ty, f, far, y, "_full", select=False)
    if ty == "float" and name == "pow":
        f = Body("float", lanes)
        far, y = pow_f32_fast(f, "%x", "%y")
        full = define(name, ty, lanes, "internal", "alwaysinline nounwind", suffix="_full")
        return full + _branch_on_far(name, ty, f, far, y, "_full", select=False)
    if name in EXACT:       # in double for f32 too: exact there, so rounding back is exact, for quotients to 2**52
        f = Body("double", lanes)
        y, far = _fmod_near(f, f.ext("%x", ty), f.ext("%y", ty), ty)
        return _libm_lanes(name, ty, lanes) + _branch_on_far(name, ty, f, far, y, "_huge", select=True)
    if name in FAR:
        f = Body(ty, lanes)
        far = f.cmp("ugt", f.abs("%x"), TRIG_LIMIT)      # beyond the limit, infinite or NaN
        return _libm_lanes(name, ty, lanes) + _branch_on_far(name, ty, f, far, "%y", "_huge", select=True)
    if name not in F32_TRIG:
        return define(name, ty, lanes, "", "nounwind")
    wide = _trig_in_double(name, ty, lanes, "_wide" if ty == "float" else "")
    if ty == "double":
        return wide
    f = Body("float", lanes)
    y = kernel(name)(f, "%x", "float")
    far = f.cmp("ugt", f.abs("%x"), F32_TRIG_LIMIT)    # beyond the limit, infinite or NaN
    return wide + _branch_on_far(name, ty, f, far, y, "_wide", select=True)


def _trig_in_double(name, ty, lanes, defines):
    """sin, cos or tan by mathlib's double algorithm (f32 arguments extended, the value rounded once), whose
    lanes beyond TRIG_LIMIT (where its branch-free reduction ends) take the C library's double function,
    which reduces any argument exactly (Payne-Hanek), in a branch that vectors of ordinary arguments skip."""
    f = Body("double", lanes)
    x = f.ext("%x", ty)
    y = f.narrow(kernel(name)(f, x, ty), ty)
    far = f.cmp("ugt", f.abs(x), TRIG_LIMIT)          # beyond the limit, infinite or NaN
    return _libm_lanes(name, ty, lanes) + _branch_on_far(name, ty, f, far, y, "_huge", select=True, defines=defines)


def _fmod_near(f, x, y, ty):
    """(fmod(x, y), the lanes it is not for), in double. With a = |x|, b = |y| and a / b < 2**52, q = trunc(a / b) is
    the integer quotient n or n + 1 (rounding is monotonic and n is a float), and a - q b, the remainder or the
    remainder minus b, is a float (a multiple of b's last place below b), so one fma gives it exactly; b added back
    where it is negative is exact too. The sign is x's, as C's fmod (a zero x keeps its own); the value is rounded to
    ty (exactly) before the far lanes are found, as _branch_on_far's select needs."""
    a, b = f.abs(x), f.abs(y)
    ratio = f.div(a, b)
    r = f.fma(f.neg(f.call("trunc", ratio)), b, a)
    value = f.narrow(f.call("copysign", f.sel(f.cmp("olt", r, 0.0), f.add(r, b), r), x), ty)
    return value, f.either(f.cmp("uge", ratio, 2.0**52), f.cmp("oeq", b, float("inf")))  # (NaN, y = 0, x or y infinite)


def libm_symbols():
    """{symbol: address} of the C library's sin, cos and tan, which the trig functions call beyond TRIG_LIMIT, and
    its fmod (EXACT)."""
    lib = ctypes.CDLL(ctypes.util.find_library("m"))
    return {f"tj_libm_{n}": ctypes.cast(getattr(lib, n), ctypes.c_void_p).value for n in F32_TRIG + EXACT}


def _libm_lanes(name, ty, lanes):
    """`<symbol>_huge`: the C library's double function on each lane of its arguments (a FAR function's on x alone,
    its second argument unused), f32 lanes extended and rounded back."""
    vty, callee = (ty if lanes == 1 else f"<{lanes} x {ty}>"), f"@tj_libm_{name.removesuffix('_far')}"
    params = ", ".join(f"{vty} %{p}" for p in ("x", "y")[:arity(name)])
    used = ("x", "y") if name in EXACT else ("x",)
    lines, vector = [], "poison"
    for i in range(lanes):
        operands = []
        for p in used:
            v = f"%{p}" if lanes == 1 else f"%{p}{i}"
            lines += [] if lanes == 1 else [f"  %{p}{i} = extractelement {vty} %{p}, i32 {i}"]
            if ty == "float":
                lines.append(f"  %d{p}{i} = fpext float {v} to double")
                v = f"%d{p}{i}"
            operands.append(f"double {v}")
        lines.append(f"  %r{i} = call double {callee}({', '.join(operands)})")
        value = f"%r{i}"
        if ty == "float":
            lines.append(f"  %n{i} = fptrunc double %r{i} to float")
            value = f"%n{i}"
        if lanes > 1:
            lines.append(f"  %v{i} = insertelement {vty} {vector}, {ty} {value}, i32 {i}")
        vector = f"%v{i}" if lanes > 1 else value
    body = "\n".join(lines)
    return (f"declare double {callee}({', '.join(['double'] * len(used))}) nounwind\n"
            f"define internal {vty} {vector_symbol(name, ty, lanes)}_huge({params}) noinline cold nounwind {{\n{body}\n"
            f"  ret {vty} {vector}\n}}\n")


def _lanewise(name, ty, lanes):
    """`<symbol>_lanes`: the function on a vector, by the scalar `<scalar symbol>_full` on each lane."""
    vty, params = f"<{lanes} x {ty}>", ("x", "y")[:arity(name)]
    lines, vector = [], "poison"
    for i in range(lanes):
        for p in params:
            lines.append(f"  %{p}{i} = extractelement {vty} %{p}, i32 {i}")
        operands = ", ".join(f"{ty} %{p}{i}" for p in params)
        lines.append(f"  %r{i} = call {ty} {vector_symbol(name, ty, 1)}_full({operands})")
        lines.append(f"  %v{i} = insertelement {vty} {vector}, {ty} %r{i}, i32 {i}")
        vector = f"%v{i}"
    header = ", ".join(f"{vty} %{p}" for p in params)
    body = "\n".join(lines)
    return (f"define internal {vty} {vector_symbol(name, ty, lanes)}_lanes({header}) nounwind {{\n{body}\n"
            f"  ret {vty} {vector}\n}}\n")


def _branch_on_far(name, ty, f, far, y, suffix, select, defines=""):
    """The function's definition from f's lines, which compute far and y, the function's value on the near
    lanes: the lines up to far's before a branch on whether any lane is far, the rest on the near path, which
    returns y; the far path returns the internal function `<symbol><suffix>`'s value (on the far lanes only if
    select, else on all). defines: a suffix that makes it the internal, always inlined function `<symbol><defines>`."""
    symbol, vty = vector_symbol(name, ty, f.lanes), (ty if f.lanes == 1 else f"<{f.lanes} x {ty}>")
    args = ", ".join(f"{vty} %{p}" for p in ("x", "y")[:arity(name)])
    split = [line.split(" = ")[0].strip() for line in f.lines].index(far) + 1
    entry, near = ("".join(line + "\n" for line in lines) for lines in (f.lines[:split], f.lines[split:]))
    anyfar = far if f.lanes == 1 else "%anyfar"
    reduce = "" if f.lanes == 1 else f"  %anyfar = call i1 @llvm.vector.reduce.or.v{f.lanes}i1({f.bty} {far})\n"
    result = f"  %r = select {f.bty} {far}, {vty} %w, {vty} {y}\n  ret {vty} %r" if select else f"  ret {vty} %w"
    linkage, inline = ("internal ", "alwaysinline ") if defines else ("", "")
    return (f"define {linkage}{vty} {symbol}{defines}({args}) {inline}nounwind {{\n{entry}{reduce}  br i1 {anyfar}, label %far, "
            f"label %near\nnear:\n{near}  ret {vty} {y}\nfar:\n  %w = call {vty} {symbol}{suffix}({args})\n"
            f"{result}\n}}\n")
