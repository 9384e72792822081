"""The lowering-rule interface: what a primitive's `lower=` rule is, and the emitter rules write with.

A rule is one of four small kinds; the backend reads the kind, never the primitive's name:

- `Elementwise(fn, cheap=True)`: fn(b, *xs, **params) -> x. One scalar LLVM instruction sequence from the
  operands' SSA values (rank-0 operands broadcast). Fused freely into loop nests; a cheap one (no math
  call, no division) may be recomputed in several.
- `IndexMap(fn, splits=None)`: fn(b, idx, read, **params) -> x. The value at output index `idx` (a list of i64
  SSA names or Python ints) from `read(i, in_idx)`, the value of operand i at an index. Structural ops
  (broadcast, transpose, slice, pad, gather...) are index maps, which is what lets them fuse. splits(eqn) ->
  (axis, points), when given, names static points of an output axis where the map changes its source (a
  concatenate's boundaries): a loop nest whose innermost loop runs over that axis runs it in segments, in each of
  which `b.segment(i)` gives the (start, end) that the index i lies in, so that fn reads one source there.
- `Reduce(init, update, result)`: a loop accumulator. init(b, **params) -> accs, update(b, accs, x, **params)
  -> accs, result(b, accs, **params) -> x. The operand
  fuses into the reduction loop. `combine` (accs, accs) -> accs, when given, merges partial results, which
  lets the backend split a full reduction over threads.
- `Kernel(fn, available=None, scratch=False, split=None)`: fn(k, outs, ins, **params) emits a whole kernel over
  buffers (dot_general, cumsum, scatter_add). ins/outs are `Buffer`s; k offers loops, loads, stores and the
  emitter `k.b`. available(eqn) -> bool, when given, says whether fn can lower that equation here (a library
  routine it calls exists for its dtype); where it cannot, the equation runs its NumPy impl. With scratch=True
  k also offers `k.scratch_memory(nbytes)`, the pointer to that many bytes of the arena, the kernel's alone
  while it runs (conv_general_dilated packs its operands there); such a kernel needs fixed shapes.
  split(eqn) -> (extent, estimated serial ns), when given, says that the kernel's outermost loop runs over
  [%lo, %hi) of range(extent), so that the backend may split it over the threads like a loop nest's; chunk c of
  n runs [c * extent // n, (c + 1) * extent // n), and a kernel with scratch keeps one region per chunk.
  describe(eqn) -> str, when given, says how its kernel runs (dot_general: "BLAS gemm" or loops), for
  Lowered.to_dot. library_threads(eqn) -> bool, when given, says that the kernel runs a library's own threads
  (OpenBLAS's, which busy-wait after each call), so that the backend splits the module's other loops over its
  threads only when they are long (steps.LIBRARY_THREADS_FACTOR). overwrites=i, when given, says that the
  output may be given operand i's buffer (a loop carry updated in place, in_place.py): fn then finds
  `outs[0] is ins[i]` and must read that operand only where it has not written yet (a scatter updates it).
- `Control(fn)`: fn(c, outs, ins, **params), a Kernel that runs sub-IRs (cond, while, scan). Besides what a
  Kernel has, c offers `c.call(closed, ins, outs)` (the sub-IR compiled in the same module, planned and
  fused like the top level, reading and writing the given buffers or pointers), `c.cases(index, n)` (a
  switch), `c.carry_loop(init, outs, length, body, first_carry)` (a loop over double-buffered carries, or
  carries updated in place where the body allows it: backend/in_place.py) with `c.exit_unless`,
  and `c.row(buf, i)` (the i-th slice along axis 0). An equation whose sub-IRs hold an equation without a
  lowering rule runs its NumPy impl instead.

Scalar values are LLVM SSA names or constants; bool values are i1 in registers (i8 in memory); float16 and
bfloat16 values are float32 in registers (their bits, i16, in memory: Emitter.from_memory/to_memory); a complex
value is a pair (re, im) of its parts' values, which the emitter's helpers accept wherever the dtype is complex
(see "complex arithmetic" below).
"""
import ctypes
import functools
import struct

import numpy as np

from ..core import avals
from . import half_floats


class Elementwise:
    """An elementwise lowering; `calls`: the math function it calls (fusion's cost model reads it)."""

    def __init__(self, fn, cheap=True, calls=None):
        self.fn, self.cheap, self.calls = fn, cheap, calls


class IndexMap:
    """splits(eqn): (axis, points) where the map changes operand along an axis; blocks(eqn): for a map that places
    whole operands along an axis, (axis, [(start, end)] of each one's indices there), or None; same_order: the
    result's elements in C order are its operand's (a reshape); window(eqn): the start indices where the result
    is its operand's elements from there on (a slice of unit strides), or None."""
    cheap = True

    def __init__(self, fn, splits=None, blocks=None, same_order=False, window=None):
        self.fn, self.splits, self.blocks, self.same_order, self.window = fn, splits, blocks, same_order, window


class Reduce:
    def __init__(self, init, update, result=None, combine=None):
        self.init, self.update, self.combine = init, update, combine
        self.result = result or (lambda b, accs, **params: accs[0])


class Kernel:
    def __init__(self, fn, available=None, scratch=False, split=None, describe=None, library_threads=None,
                 overwrites=None):
        self.fn, self.available, self.scratch, self.split, self.describe = fn, available, scratch, split, describe
        self.library_threads, self.overwrites = library_threads, overwrites


class Control(Kernel):
    def __init__(self, fn):
        super().__init__(fn, scratch=True)


LLVM_TYPES = {np.dtype("float32"): "float", np.dtype("float64"): "double", np.dtype("int32"): "i32",
              np.dtype("int64"): "i64", np.dtype("bool"): "i1"}
LLVM_TYPES.update({avals.int8: "i8", avals.int16: "i16", avals.uint8: "i8", avals.uint16: "i16",
                   avals.uint32: "i32", avals.uint64: "i64",
                   avals.float16: "float", avals.bfloat16: "float",      # the 16-bit floats: computed in f32
                   avals.complex64: "float", avals.complex128: "double"})   # complex: the type of a part


def llvm_type(dtype):
    """The type of a dtype's values in registers (of each part of a complex one)."""
    return LLVM_TYPES[np.dtype(dtype)]


def memory_type(dtype):
    """How a dtype is stored: bool is a byte, the 16-bit floats their bits, a complex number its two parts
    (NumPy's interleaved layout)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return f"[2 x {llvm_type(dtype)}]"
    return "i8" if dtype == np.bool_ else "i16" if dtype in avals.HALF_FLOATS else llvm_type(dtype)


def part_dtype(dtype):
    """The dtype of a complex dtype's parts (complex64 -> float32)."""
    return np.dtype(f"f{np.dtype(dtype).itemsize // 2}")


def const_text(value, dtype):
    """An exactly representable LLVM constant of `dtype` (f32 written as the hex of its double; the 16-bit
    floats as the float32 of their value); for a complex dtype the pair of its parts' constants."""
    dtype = np.dtype(dtype)
    if not (isinstance(value, np.generic) and value.dtype == dtype):   # (an IR literal's value already is)
        with np.errstate(all="ignore"):
            value = np.asarray(value).astype(dtype)[()]
    if dtype.kind == "c":
        return const_text(value.real, part_dtype(dtype)), const_text(value.imag, part_dtype(dtype))
    if avals.is_float(dtype):
        return f"0x{struct.unpack('<Q', struct.pack('<d', float(value)))[0]:016X}"
    if dtype == np.bool_:
        return "true" if value else "false"
    return str(int(value))


@functools.cache
def libm_address(name):
    """The address of a C math library function in this process (the libm Python and NumPy use)."""
    return ctypes.cast(getattr(ctypes.CDLL(None), name), ctypes.c_void_p).value


_CMP = {"f": {"eq": "fcmp oeq", "ne": "fcmp une", "lt": "fcmp olt", "le": "fcmp ole", "gt": "fcmp ogt",
              "ge": "fcmp oge"},
        "i": {"eq": "icmp eq", "ne": "icmp ne", "lt": "icmp slt", "le": "icmp sle", "gt": "icmp sgt",
              "ge": "icmp sge"},
        "u": {"eq": "icmp eq", "ne": "icmp ne", "lt": "icmp ult", "le": "icmp ule", "gt": "icmp ugt",
              "ge": "icmp uge"}}
_CMP["b"] = _CMP["u"]


# ------------------------------------------------------------------------------------- complex arithmetic
# A complex value inside a kernel is a pair (re, im) of SSA values of its parts' type: loads and stores read
# and write both halves of NumPy's interleaved storage (loops.py), and the emitter's helpers call these for
# complex operands, so a fused loop of complex arithmetic is a loop of real arithmetic that LLVM vectorizes (the
# interleaved loads and stores become shuffles). Numerics are NumPy's: a product is (ar*br - ai*bi, ar*bi +
# ai*br) with the first product of each part fused (fma), as NumPy's AVX-512 loops compute it; a quotient is
# Smith's algorithm with NumPy's branches as selects (x / 0 is a complex inf or NaN as in NumPy); equality
# compares both parts. The complex functions (exp, log ...) are cmathlib's (Emitter.cmath).

def _fma(b, ty, flags, x, y, z):
    sfx = "f32" if ty == "float" else "f64"
    return b(f"call{flags} {ty} @llvm.fma.{sfx}({ty} {x}, {ty} {y}, {ty} {z})")


def _complex_binop(b, fop, x, y, ty):
    """x fop y for fop in fadd, fsub, fmul, fdiv (optionally followed by fast-math flags: 'fadd reassoc')."""
    op, _, flags = fop.partition(" ")
    flags = f" {flags}" if flags else ""

    def arith(name, p, q):
        return b(f"{name}{flags} {ty} {p}, {q}")

    (ar, ai), (br, bi) = x, y
    if op in ("fadd", "fsub"):
        return arith(op, ar, br), arith(op, ai, bi)
    if op == "fmul":
        return (_fma(b, ty, flags, ar, br, b(f"fneg{flags} {ty} {arith('fmul', ai, bi)}")),
                _fma(b, ty, flags, ar, bi, arith("fmul", ai, br)))
    if op != "fdiv":
        raise TypeError(f"no complex {op}")
    # Smith: scale by the larger part of y (|br| >= |bi|, else swapped); both zero: the parts over |br|
    abs_br, abs_bi = (b(f"call {ty} @llvm.fabs.{'f32' if ty == 'float' else 'f64'}({ty} {v})") for v in (br, bi))
    real_big = b(f"fcmp oge {ty} {abs_br}, {abs_bi}")
    zero = b(f"and i1 {b(f'fcmp oeq {ty} {abs_br}, 0.0')}, {b(f'fcmp oeq {ty} {abs_bi}, 0.0')}")

    def sel(c, p, q):
        return b(f"select i1 {c}, {ty} {p}, {ty} {q}")

    big, small = sel(real_big, br, bi), sel(real_big, bi, br)
    rat = arith("fdiv", small, big)
    scl = arith("fdiv", "1.0", arith("fadd", big, arith("fmul", small, rat)))
    # real_big: ((ar + ai*rat), (ai - ar*rat)); else: ((ar*rat + ai), (ai*rat - ar))
    re = sel(real_big, arith("fadd", ar, arith("fmul", ai, rat)), arith("fadd", arith("fmul", ar, rat), ai))
    im = sel(real_big, arith("fsub", ai, arith("fmul", ar, rat)), arith("fsub", arith("fmul", ai, rat), ar))
    re, im = arith("fmul", re, scl), arith("fmul", im, scl)
    return sel(zero, arith("fdiv", ar, abs_br), re), sel(zero, arith("fdiv", ai, abs_bi), im)


def _complex_compare(b, pred, x, y, ty):
    """x == y (both parts equal) or x != y (either differs or is NaN); complex numbers are not ordered."""
    if pred == "eq":
        return b(f"and i1 {b(f'fcmp oeq {ty} {x[0]}, {y[0]}')}, {b(f'fcmp oeq {ty} {x[1]}, {y[1]}')}")
    if pred == "ne":
        return b(f"or i1 {b(f'fcmp une {ty} {x[0]}, {y[0]}')}, {b(f'fcmp une {ty} {x[1]}, {y[1]}')}")
    raise TypeError(f"complex numbers have no order ({pred})")


def _complex_convert(b, x, src, dst, part):
    """astype between complex and any dtype: to complex, a real x is the real part (imaginary +0.0); from
    complex, the imaginary part is dropped (NumPy warns at the API, tracejit.numpy.astype), to bool both parts
    count. `part` is the real dtype of the complex side."""
    if src.kind == "c" and dst.kind == "c":
        return b.convert(x[0], part(src), part(dst)), b.convert(x[1], part(src), part(dst))
    if dst.kind == "c":
        return b.convert(x, src, part(dst)), b.const(0, part(dst))
    if dst == bool:
        ty = b.ty(src)
        return b(f"or i1 {b(f'fcmp une {ty} {x[0]}, 0.0')}, {b(f'fcmp une {ty} {x[1]}, 0.0')}")
    return b.convert(x[0], part(src), dst)


def _index_bounds(op, a, c):
    """The bounds of `a op c` from its operands' (None where unknown or where a division's divisor may be <= 0)."""
    if not a or not c:
        return None
    if op in ("add", "sub"):
        return (a[0] + c[0], a[1] + c[1]) if op == "add" else (a[0] - c[1], a[1] - c[0])
    if op == "mul":
        corners = [x * y for x in a for y in c]
        return min(corners), max(corners)
    if c[0] <= 0 or op in ("udiv", "urem") and a[0] < 0:
        return None
    if op in ("sdiv", "udiv"):
        return (a[0] // c[1] if a[0] >= 0 else -(-a[0] // c[0])), (a[1] // c[0] if a[1] >= 0 else -(-a[1] // c[1]))
    return (0 if a[0] >= 0 else -(c[1] - 1)), (min(a[1], c[1] - 1) if a[1] >= 0 else 0)   # srem, urem


class Emitter:
    """Appends SSA instructions to a function body. `in_avals` are the operands of the equation being
    lowered; the default dtype of every helper is the first operand's."""

    def __init__(self, func):
        self.func = func
        self.in_avals = []
        self.segments = {}      # loop index -> the static [start, end) its loop runs in (IndexMap's splits)

    def segment(self, i):
        """The static (start, end) that index i lies in, or None where its loop is not a segment."""
        return self.segments.get(i)

    def __call__(self, rhs):
        return self.func.emit(rhs)

    # ----------------------------------------------------------------------------- types and constants
    def dtype(self, dtype=None):
        return np.dtype(dtype) if dtype is not None else self.in_avals[0].dtype

    def kind(self, dtype=None):
        """'b' (bool), 'i' (signed), 'u' (unsigned), 'f' (float, the 16-bit ones included) or 'c' (complex)."""
        return avals.dtype_kind(self.dtype(dtype))

    def ty(self, dtype=None):
        return llvm_type(self.dtype(dtype))

    def const(self, value, dtype=None):
        """value as a register constant: of a 16-bit float dtype, a float32 (the precision it is computed in)."""
        dtype = self.dtype(dtype)
        return const_text(value, avals.float32 if dtype in avals.HALF_FLOATS else dtype)

    # ------------------------------------------------------------------------------------ arithmetic
    def binop(self, fop, iop, x, y, dtype=None):
        kind = self.kind(dtype)
        if kind == "c":
            return _complex_binop(self, fop, x, y, self.ty(dtype))
        op = fop if kind == "f" else iop
        return self(f"{op} {self.ty(dtype)} {x}, {y}")

    def cmp(self, pred, x, y, dtype=None):
        if self.kind(dtype) == "c":
            return _complex_compare(self, pred, x, y, self.ty(dtype))
        return self(f"{_CMP[self.kind(dtype)][pred]} {self.ty(dtype)} {x}, {y}")

    def select(self, c, x, y, dtype=None):
        if c is True or c is False:
            return x if c else y
        if isinstance(x, tuple):      # complex: part by part
            return tuple(self.select(c, p, q, dtype) for p, q in zip(x, y))
        return self(f"select i1 {c}, {self.ty(dtype)} {x}, {self.ty(dtype)} {y}")

    @staticmethod
    def parts(x):
        """The parts of a value: (re, im) of a complex one, (x,) of another."""
        return x if isinstance(x, tuple) else (x,)

    def cmath(self, name, *args, dtype=None, real=False):
        """A vectorizable complex function (tracejit.backend.cmathlib) of complex pairs: a pair, or a real
        value for a real-valued function (abs)."""
        ty = self.ty(dtype)
        self.func.module.cmath.add((name, ty))
        self.func.math_calls += 1
        ret = ty if real else f"{{{ty}, {ty}}}"
        value = self(f"call {ret} @tj_c{name}_{ty}({', '.join(f'{ty} {p}' for a in args for p in a)})")
        return value if real else tuple(self(f"extractvalue {ret} {value}, {i}") for i in (0, 1))

    def intrinsic(self, name, *args, dtype=None, extra=""):
        ty = self.ty(dtype)
        suffix = {"float": "f32", "double": "f64"}.get(ty, ty)
        operands = ", ".join(f"{ty} {a}" for a in args) + extra
        return self(f"call {ty} @llvm.{name}.{suffix}({operands})")

    def math(self, name, *args, dtype=None):
        """A vectorizable math function (tracejit.backend.mathlib): a call of the vector math library for
        libcalls.LIBRARY's functions (vecmath.py), the function's body inlined for the others
        (llvm_text.Function.math_call)."""
        return self(self.func.math_call(name, self.ty(dtype), args))

    def maximum(self, x, y, dtype=None):
        """NumPy's maximum: NaN propagates."""
        kind = self.kind(dtype)
        if kind == "f":
            return self.intrinsic("maximum", x, y, dtype=dtype)
        return self.intrinsic("smax" if kind == "i" else "umax", x, y, dtype=dtype)

    def minimum(self, x, y, dtype=None):
        kind = self.kind(dtype)
        if kind == "f":
            return self.intrinsic("minimum", x, y, dtype=dtype)
        return self.intrinsic("smin" if kind == "i" else "umin", x, y, dtype=dtype)

    def convert(self, x, src, dst):
        """astype, except that float -> int saturates (NaN -> 0) as the reference impl does. The 16-bit floats
        are float32 in registers: converted to or from, the value is rounded to their precision."""
        src, dst = np.dtype(src), np.dtype(dst)
        ks, kd, ts, td = self.kind(src), self.kind(dst), self.ty(src), self.ty(dst)
        if src == dst:
            return x
        if "c" in (ks, kd):
            return _complex_convert(self, x, src, dst, part_dtype)
        if src in avals.HALF_FLOATS:    # a value computed in float32 is rounded to its dtype first
            x = half_floats.round_to(self, x, src)
        if kd == "b":
            return self(f"{'fcmp une' if ks == 'f' else 'icmp ne'} {ts} {x}, {self.const(0, src)}")
        if kd != "f":
            if ks == "f":
                return self._saturated(x, avals.float32 if src in avals.HALF_FLOATS else src, dst)
            if ts == td:
                return x                          # same width, other signedness: the same bits
            wider = src.itemsize < dst.itemsize or ks == "b"
            return self(f"{'trunc' if not wider else 'sext' if ks == 'i' else 'zext'} {ts} {x} to {td}")
        if ks != "f":
            x = self(f"{'sitofp' if ks == 'i' else 'uitofp'} {ts} {x} to {td}")
        elif src == avals.float64 and dst == avals.float16:
            x = half_floats.round_to_odd_float(self, x)    # then one correct rounding to float16
        elif ts != td:
            x = self(f"{'fpext' if ts == 'float' else 'fptrunc'} {ts} {x} to {td}")
        return half_floats.round_to(self, x, dst) if dst in avals.HALF_FLOATS and ks != "b" else x

    def to_odd_float(self, x):
        """The double x as a float rounded to odd (a later rounding to fewer bits is then correctly rounded)."""
        return half_floats.round_to_odd_float(self, x)

    def _saturated(self, x, src, dst):
        """Float x as the integer dtype dst, saturating (NaN -> 0): clamped into range first, so that the plain
        conversion, which vectorizes, is defined (LLVM's fptosi.sat converted one lane at a time: 1e6 f32 to
        int32 took 1.4x NumPy's time)."""
        info, ts, td = np.iinfo(dst), self.ty(src), self.ty(dst)
        top = float(info.max) + 1.0                 # a power of two: exact
        low, below_top = self.const(float(info.min), src), self.const(np.nextafter(src.type(top), 0), src)
        clamped = self.select(self(f"fcmp ult {ts} {x}, {low}"), low, x, src)      # NaN too
        clamped = self.select(self(f"fcmp ogt {ts} {clamped}, {below_top}"), below_top, clamped, src)
        r = self(f"fpto{'s' if self.kind(dst) == 'i' else 'u'}i {ts} {clamped} to {td}")
        r = self.select(self(f"fcmp oge {ts} {x}, {self.const(top, src)}"), self.const(int(info.max), dst), r, dst)
        return self.select(self(f"fcmp uno {ts} {x}, {x}"), self.const(0, dst), r, dst)

    def from_memory(self, v, dtype):
        """A value as loaded (memory_type) in its register type."""
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            return self(f"icmp ne i8 {v}, 0")
        return half_floats.from_bits(self, v, dtype) if dtype in avals.HALF_FLOATS else v

    def to_memory(self, v, dtype):
        """A register value as stored (memory_type); the 16-bit floats round here."""
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            return self(f"zext i1 {v} to i8")
        return half_floats.to_bits(self, v, dtype) if dtype in avals.HALF_FLOATS else v

    # ------------------------------------------------------------------------- index arithmetic (i64)
    def size(self, d):
        """A size as an i64 operand: an int, or the run-time value of a symbolic dimension."""
        return self.func.size(d)

    def iop(self, op, a, c):
        """i64 arithmetic folding Python ints: op in add, sub, mul, sdiv, srem, and udiv, urem for operands >= 0.
        Operands may be symbolic dimensions (their run-time values)."""
        a, c = self.size(a), self.size(c)
        if isinstance(a, int) and isinstance(c, int):
            return {"add": a + c, "sub": a - c, "mul": a * c, "sdiv": int(a / c) if c else 0,
                    "srem": int(np.fmod(a, c)) if c else 0, "udiv": a // c if c else 0, "urem": a % c if c else 0}[op]
        if op in ("add", "sub") and c == 0 or op in ("mul", "sdiv", "udiv") and c == 1:
            return a
        if op == "add" and a == 0:
            return c
        if op == "mul" and (a == 0 or c == 0):
            return 0
        if op == "mul" and a == 1:
            return c
        out = self(f"{op} i64 {a}, {c}")
        known = _index_bounds(op, self.func.bound(a), self.func.bound(c))
        if known is not None:
            self.func.bounds[out] = known
        return out

    def index(self, x, dtype):
        """An integer value of `dtype` as i64."""
        return x if self.ty(dtype) == "i64" else self.convert(x, dtype, np.int64)

    def clamp_index(self, i, lo, hi):
        """min(max(i, lo), hi) on i64 (lo <= hi), each bound applied only where i may pass it."""
        i, lo, hi = self.size(i), self.size(lo), self.size(hi)
        if isinstance(i, int) and isinstance(lo, int) and isinstance(hi, int):
            return min(max(i, lo), hi)
        known = self.func.bound(i)
        if not (known and isinstance(lo, int) and known[0] >= lo):
            i = self.intrinsic("smax", i, lo, dtype=np.int64)
        if not (known and isinstance(hi, int) and known[1] <= hi):
            i = self.intrinsic("smin", i, hi, dtype=np.int64)
        if isinstance(lo, int) and isinstance(hi, int) and isinstance(i, str):      # (clamping is monotone)
            self.func.bounds[i] = tuple(min(max(k, lo), hi) for k in known) if known else (lo, hi)
        return i

    def in_range(self, i, lo, hi):
        """lo <= i < hi as i1 (or a Python bool, also where i's bounds decide it)."""
        known = self.func.bound(i) if isinstance(lo, int) and isinstance(hi, int) else None
        if known and (lo <= known[0] and known[1] < hi or known[1] < lo or known[0] >= hi):
            return lo <= known[0] and known[1] < hi
        if isinstance(i, int) and isinstance(hi, int):
            return lo <= i < hi
        return self(f"icmp ult i64 {self.iop('sub', i, lo)}, {self.iop('sub', hi, lo)}")

    def all_of(self, conds):
        """The conjunction of i1 values and Python bools (True when empty)."""
        if any(c is False for c in conds):
            return False
        conds = [c for c in conds if c is not True]
        out = True
        for c in conds:
            out = c if out is True else self(f"and i1 {out}, {c}")
        return out

    def reindex(self, idx, src_shape, dst_shape):
        """The index into an array of dst_shape holding the same flat (row-major) element as idx does
        into src_shape. Dimensions of size 1 are mapped directly when the other dimensions agree."""
        src_big = [(i, d) for i, d in enumerate(src_shape) if d != 1]
        dst_big = [(i, d) for i, d in enumerate(dst_shape) if d != 1]
        if [d for _, d in src_big] == [d for _, d in dst_big]:
            out = [0] * len(dst_shape)
            for (i, _), (j, _) in zip(src_big, dst_big):
                out[j] = idx[i]
            return out
        flat = 0
        for i, d in zip(idx, src_shape):
            flat = self.iop("add", self.iop("mul", flat, d), i)
        # unsigned (indices are >= 0: a power of two is a shift or a mask); the leading axis takes what is left
        out = []
        for k, d in enumerate(reversed(dst_shape)):
            out.append(0 if d == 1 else flat if k == len(dst_shape) - 1 else self.iop("urem", flat, d))
            flat = self.iop("udiv", flat, d)
        return out[::-1]
