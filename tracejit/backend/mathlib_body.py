"""Straight-line floating-point LLVM text, what mathlib's functions are written with: `Body` (SSA
instructions in one float type, operands SSA names or Python floats) and each type's constants.
"""
import functools
import struct


class TypeConstants:
    """What the kernels need to know about the type they compute in."""

    def __init__(self, ity, mant, bias, sqrt_half_bits, log2e, ln2_hi, ln2_lo, exp_bounds, expm1_bounds):
        self.ity, self.mant, self.bias = ity, mant, bias
        self.magic = 1.5 * 2.0**mant  # v + magic rounds v to an integer and leaves it in the low mantissa bits
        self.magic_bits = (bias + mant) << mant | 1 << (mant - 1)
        self.sqrt_half_bits = sqrt_half_bits
        self.log2e, self.ln2_hi, self.ln2_lo = log2e, ln2_hi, ln2_lo
        self.exp_bounds, self.expm1_bounds = exp_bounds, expm1_bounds
        self.expm1_tiny = 2.0 ** -(mant + 2)  # below it expm1(x) rounds to x
        self.min_normal = 2.0 ** (1 - bias)


TYPE_CONSTANTS = {
    # ln2_hi has 42 bits: k * ln2_hi is exact for |k| < 2**11
    "double": TypeConstants("i64", 52, 1023, 0x3FE6A09E667F3BCD, float.fromhex("0x1.71547652b82fep+0"),
                            float.fromhex("0x1.62e42fefa3800p-1"), float.fromhex("0x1.ef35793c76730p-45"),
                            (-750.0, 750.0), (-60.0, 710.0)),
    # ln2_hi has 15 bits: k * ln2_hi is exact for |k| < 2**9; exp(-104) and expm1(-20) round to 0 and -1
    "float": TypeConstants("i32", 23, 127, 0x3F3504F3, float.fromhex("0x1.715476p+0"), float.fromhex("0x1.62e4p-1"),
                           float.fromhex("0x1.7f7d1cp-20"), (-104.0, 89.0), (-20.0, 89.0)),
}


def float_text(v: float, ty: str = "double") -> str:
    """IR spelling of a constant of type ty (a float is first rounded to f32), exact by construction."""
    if ty == "float":
        v = struct.unpack("<f", struct.pack("<f", v))[0]
    return f"0x{struct.unpack('<Q', struct.pack('<d', v))[0]:016X}"


@functools.cache
def has_scalef():
    """Whether llvm.ldexp is one instruction here (AVX-512's vscalef); elsewhere LLVM may call libm's ldexp.
    (llvmlite is imported here, not with the module: importing tracejit does not need it.)"""
    try:
        import llvmlite.binding
    except ImportError:
        return False
    return bool(llvmlite.binding.get_host_cpu_features().get("avx512f"))


class Body:
    """Emits straight-line SSA computing in ty (float or double), on `lanes`-element vectors when lanes > 1;
    operands are SSA names or Python floats (rounded to ty), integer operands SSA names or Python ints.
    `k` holds the type's constants."""

    def __init__(self, ty, lanes=1):
        self.lines = []
        self._block = None             # the label of the block being emitted, once loop() starts new ones
        self.ty, self.k, self.lanes = ty, TYPE_CONSTANTS[ty], lanes
        self.vty, self.ity, self.bty = (self._vec(t) for t in (ty, self.k.ity, "i1"))
        self.sfx = (f".v{lanes}" if lanes > 1 else ".") + ("f32" if ty == "float" else "f64")

    def _vec(self, scalar_ty):
        return scalar_ty if self.lanes == 1 else f"<{self.lanes} x {scalar_ty}>"

    def _emit(self, rhs: str) -> str:
        name = f"%t{len(self.lines)}"
        self.lines.append(f"  {name} = {rhs}")
        return name

    def _splat(self, scalar_ty, text):
        return text if self.lanes == 1 else f"splat ({scalar_ty} {text})"

    def _d(self, a) -> str:
        return self._splat(self.ty, float_text(a, self.ty)) if isinstance(a, float) else a

    def _i(self, a) -> str:
        return self._splat(self.k.ity, str(a)) if isinstance(a, int) else a

    def ext(self, arg: str, ty: str) -> str:
        return arg if ty == self.ty else self._emit(f"fpext {self._vec(ty)} {arg} to {self.vty}")

    def narrow(self, v: str, ty: str) -> str:
        """v (of the computing type) as ty."""
        return v if ty == self.ty else self._emit(f"fptrunc {self.vty} {v} to {self._vec(ty)}")

    def ret(self, v: str, ty: str):
        self.lines.append(f"  ret {self._vec(ty)} {self.narrow(v, ty)}")

    def _bin(self, op, a, b):
        return self._emit(f"{op} {self.vty} {self._d(a)}, {self._d(b)}")

    def add(self, a, b):
        return self._bin("fadd", a, b)

    def sub(self, a, b):
        return self._bin("fsub", a, b)

    def mul(self, a, b):
        return self._bin("fmul", a, b)

    def div(self, a, b):
        return self._bin("fdiv", a, b)

    def neg(self, a):
        return self._emit(f"fneg {self.vty} {self._d(a)}")

    def call(self, fn, *args):
        operands = ", ".join(f"{self.vty} {self._d(a)}" for a in args)
        return self._emit(f"call {self.vty} @llvm.{fn}{self.sfx}({operands})")

    def fma(self, a, b, c):
        return self.call("fma", a, b, c)

    def abs(self, a):
        return self.call("fabs", a)

    def cmp(self, pred, a, b):
        return self._bin(f"fcmp {pred}", a, b)

    def sel(self, cond, a, b):
        return self._emit(f"select {self.bty} {cond}, {self.vty} {self._d(a)}, {self.vty} {self._d(b)}")

    def min(self, a, c):
        """min(a, c), one vminpd; a NaN gives c (callers restore NaN at the end)."""
        return self.sel(self.cmp("olt", a, c), a, c)

    def max(self, a, c):
        """max(a, c); a NaN gives c."""
        return self.sel(self.cmp("ogt", a, c), a, c)

    def bits(self, a):
        return self._emit(f"bitcast {self.vty} {a} to {self.ity}")

    def from_bits(self, i):
        return self._emit(f"bitcast {self.ity} {i} to {self.vty}")

    def int(self, op, a, b):
        return self._emit(f"{op} {self.ity} {self._i(a)}, {self._i(b)}")

    def ldexp(self, a, n):
        """a * 2**n, rounded once, for integers n (ity) of any size (has_scalef: one instruction)."""
        ity = self._vec("i32")
        if self.k.ity != "i32":
            n = self._emit(f"trunc {self.ity} {n} to {ity}")
        isfx = f"v{self.lanes}i32" if self.lanes > 1 else "i32"
        return self._emit(f"call {self.vty} @llvm.ldexp{self.sfx}.{isfx}({self.vty} {a}, {ity} {n})")

    def to_fp(self, i):
        return self._emit(f"sitofp {self.ity} {i} to {self.vty}")

    def icmp(self, pred, a, b):
        return self._emit(f"icmp {pred} {self.ity} {self._i(a)}, {self._i(b)}")

    def both(self, c1, c2):
        return self._emit(f"and {self.bty} {c1}, {c2}")

    def either(self, c1, c2):
        return self._emit(f"or {self.bty} {c1}, {c2}")

    def poly(self, t, coefs):
        acc = coefs[-1]
        for c in reversed(coefs[:-1]):
            acc = self.fma(acc, t, c)
        return acc

    def loop(self, state, step, limit, active):
        """A loop (scalar bodies only): state (a list of values) becomes step(state) -> (state, go) while go and
        the condition `active` hold, at most `limit` times; returns the last state, which is unspecified where
        active fails (the compiled loop steps once there). Every value the step uses that is not a constant must
        come through the state (ArrayBody runs the step on the unfinished elements only)."""
        assert self.lanes == 1, "loops in scalar kernels only"

        def body(values, passes):
            new, go = step(values)
            return new, self.both(self.both(go, active), self._emit(f"icmp slt i64 {passes}, {limit}"))
        return self._cycle(state, body)

    def repeat(self, state, step, count):
        """state becomes step(state) `count` times: a loop at any width (a repeated step's code once)."""
        return self._cycle(state, lambda values, passes: (step(values), self._emit(f"icmp slt i64 {passes}, {count}")))

    def _cycle(self, state, body):
        """A loop block with a phi per state value and an i64 count of passes: body(values, passes so far,
        this one included) -> (new values, the i1 to go on with); returns the values after the last pass."""
        n = len(self.lines)
        pre, head, done = f"pre{n}", f"loop{n}", f"done{n}"
        self.lines += [f"  br label %{pre}", f"{pre}:", f"  br label %{head}", f"{head}:"]
        at = len(self.lines)
        phis, count = [f"%l{n}s{i}" for i in range(len(state))], f"%l{n}c"
        self.lines += [None] * (len(phis) + 1)
        self._block = head
        passes = self._emit(f"add i64 {count}, 1")
        new, go = body(phis, passes)
        self.lines.append(f"  br i1 {go}, label %{head}, label %{done}")
        latch, self._block = self._block, done
        for i, (phi, init, value) in enumerate(zip(phis, state, new)):
            self.lines[at + i] = f"  {phi} = phi {self.vty} [{self._d(init)}, %{pre}], [{self._d(value)}, %{latch}]"
        self.lines[at + len(phis)] = f"  {count} = phi i64 [0, %{pre}], [{passes}, %{latch}]"
        self.lines.append(f"{done}:")
        return list(new)

    def two_sum(self, a, b):
        """s + e == a + b exactly (Knuth)."""
        s = self.add(a, b)
        bb = self.sub(s, a)
        e = self.add(self.sub(a, self.sub(s, bb)), self.sub(b, bb))
        return s, e

    def fast_two_sum(self, a, b):
        """s + e == a + b exactly where |a| >= |b| or a == 0 (Dekker)."""
        s = self.add(a, b)
        return s, self.add(self.sub(a, s), b)

    def two_prod(self, a, b):
        """p + e == a * b exactly."""
        p = self.mul(a, b)
        return p, self.fma(a, b, self.neg(p))
