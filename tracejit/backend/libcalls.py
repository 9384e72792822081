"""The vector math library as text: which of mathlib's functions loops call as library functions, their
names and definitions at every width, and the renaming of the optimised module's intrinsic calls to them.
vecmath.py compiles the definitions once per process; llvm.py renames the calls after the pass pipeline.
"""
import re

from .mathlib import F32_TRIG, F32_TRIG_LIMIT, define, kernel, vector_symbol
from .mathlib_body import Body

# The functions that have an LLVM intrinsic of the same name and signature (llvm.sin.f32 ...). Loops call them as
# intrinsics, which the loop vectorizer widens (llvm.sin.v16f32); `library_calls` then renames every such call
# to the library's function of that width, compiled once per process (vecmath.py), not inlined into each loop.
LIBRARY = ("exp", "log", "sin", "cos", "tan", "tanh", "pow", "atan", "asin", "acos", "atan2")
LANES = (1, 2, 4, 8, 16)
_INTRINSIC = re.compile(r"@llvm\.(" + "|".join(LIBRARY) + r")\.(?:v(\d+))?f(32|64)\b")


def intrinsic_symbol(name: str, ty: str) -> str:
    """``@llvm.<name>.f32`` or ``.f64``: what a loop calls for a LIBRARY function."""
    return f"@llvm.{name}.{'f32' if ty == 'float' else 'f64'}"


def uses_library(text: str) -> bool:
    """Whether module text calls a LIBRARY intrinsic."""
    return _INTRINSIC.search(text) is not None


def called(text: str):
    """The (name, ty) of the LIBRARY intrinsics that module text calls."""
    return {(m.group(1), "float" if m.group(3) == "32" else "double") for m in _INTRINSIC.finditer(text)}


def library_calls(text: str):
    """(text, the (name, ty, lanes) it calls): the LIBRARY intrinsics of an optimised module's text renamed
    to the library's functions (their declarations become the functions' declarations). A width the
    library does not have keeps its intrinsic (LLVM then calls the C math library lane by lane)."""
    found = set()

    def rename(m):
        lanes = int(m.group(2) or 1)
        if lanes not in LANES:
            return m.group(0)
        ty = "float" if m.group(3) == "32" else "double"
        found.add((m.group(1), ty, lanes))
        return vector_symbol(m.group(1), ty, lanes)
    return _INTRINSIC.sub(rename, text), found



def library_function_ir(name: str, ty: str, lanes: int) -> str:
    """An external definition of the function on `lanes`-element vectors (`vector_symbol`), for the
    library compiled once per process (vecmath.py). F32_TRIG functions of f32 compute in f32 and call the
    double algorithm (an internal `..._wide` function) only for a vector with a lane beyond F32_TRIG_LIMIT."""
    if not (ty == "float" and name in F32_TRIG):
        return define(name, ty, lanes, "", "nounwind")
    symbol, vty = vector_symbol(name, ty, lanes), ty if lanes == 1 else f"<{lanes} x {ty}>"
    f = Body("float", lanes)
    y = kernel(name)(f, "%x", "float")
    far = f.cmp("ugt", f.abs("%x"), F32_TRIG_LIMIT)    # beyond the limit, infinite or NaN
    anyfar = far if lanes == 1 else f._emit(f"call i1 @llvm.vector.reduce.or.v{lanes}i1({f.bty} {far})")
    body = "\n".join(f.lines)
    return (define(name, ty, lanes, "internal", "nounwind", wide=True) +
            f"define {vty} {symbol}({vty} %x) nounwind {{\n{body}\n  br i1 {anyfar}, label %far, label %near\n"
            f"near:\n  ret {vty} {y}\nfar:\n  %w = call {vty} {symbol}_wide({vty} %x)\n"
            f"  %r = select {f.bty} {far}, {vty} %w, {vty} {y}\n  ret {vty} %r\n}}\n")
