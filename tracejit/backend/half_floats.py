"""float16 and bfloat16 in generated code: stored as their 16 bits, computed as float32 in registers.

The conversions are branch-free integer bit arithmetic, so they vectorize and need nothing from the CPU or
a runtime library: LLVM lowers its own `half`/`bfloat` conversions to library calls (__truncsfhf2,
__truncsfbf2, __truncdfhf2) on x86 CPUs without F16C / AVX512-BF16, and fptrunc double -> half to one even
with them; this process has none of those functions. Rounding is to nearest even, and NaNs come out as
NumPy (float16: sign, quiet bits 0x7c00 and the top of the payload, never 0x7c00 itself) and ml_dtypes
(bfloat16: 0x7fc0 with the sign) make them.

float64 -> float16 rounds once, as NumPy does: the double is first rounded to float32 to odd (an inexact
result gets its last bit set), which makes the second rounding, to float16, the correct one. float64 and
integers -> bfloat16 go through a float32 rounded to nearest, as JAX does and ml_dtypes did before 0.7 (0.7 rounds
once; the reference impl, primitives/elementwise.py, rounds as JAX whatever ml_dtypes' version).

On CPUs with F16C (every AVX-512 CPU) float16 <-> float32 are LLVM's own conversions, one instruction per 16
lanes (vcvtph2ps, vcvtps2ph), rounding to nearest even like the bit arithmetic: `x * 2 + 1` over 1e6 float16 took
347 us with the bit arithmetic, JAX 144 us. They differ from it only on signaling NaNs, which come out quiet,
bit for bit as JAX's (the bit arithmetic kept them signaling, as NumPy's conversions do); arithmetic quiets them
anyway.
bfloat16 keeps the bit arithmetic: AVX512-BF16's conversion flushes float32 subnormals to zero.
"""
F32_MANTISSA_SHIFT = 13          # float32 has 23 mantissa bits, float16 10


def half_bits_to_float(b, h):
    """The float of float16 bits h (i16)."""
    if b.func.target_f16c:
        return b(f"fpext half {b(f'bitcast i16 {h} to half')} to float")
    w = b(f"zext i16 {h} to i32")
    em = b(f"and i32 {w}, 32767")
    shifted = b(f"shl i32 {em}, {F32_MANTISSA_SHIFT}")
    exponent = b(f"and i32 {em}, 31744")
    normal = b(f"add i32 {shifted}, {112 << 23}")          # exponent bias 15 -> 127
    special = b(f"or i32 {shifted}, 2139095040")            # inf and NaN (payload kept)
    tiny = b(f"fmul float {b(f'uitofp i32 {em} to float')}, 0x3E70000000000000")    # subnormal: m * 2**-24
    tiny_bits = b(f"bitcast float {tiny} to i32")
    bits = b.select(b(f"icmp eq i32 {exponent}, 0"), tiny_bits,
                    b.select(b(f"icmp eq i32 {exponent}, 31744"), special, normal, "int32"), "int32")
    sign = b(f"shl i32 {b(f'and i32 {w}, 32768')}, 16")
    return b(f"bitcast i32 {b(f'or i32 {bits}, {sign}')} to float")


def float_to_half_bits(b, x):
    """The float16 bits (i16) nearest the float x (ties to even)."""
    if b.func.target_f16c:
        return b(f"bitcast half {b(f'fptrunc float {x} to half')} to i16")
    bits = b(f"bitcast float {x} to i32")
    a = b(f"and i32 {bits}, 2147483647")
    payload = b(f"lshr i32 {b(f'and i32 {a}, 8388607')}, {F32_MANTISSA_SHIFT}")
    empty = b(f"zext i1 {b(f'icmp eq i32 {payload}, 0')} to i32")       # a NaN keeps a nonzero payload
    nan = b(f"or i32 {b(f'or i32 {payload}, 31744')}, {empty}")
    odd = b(f"and i32 {b(f'lshr i32 {a}, {F32_MANTISSA_SHIFT}')}, 1")
    rebiased = b(f"add i32 {a}, {((15 - 127) << 23) + 0xfff}")
    normal = b(f"lshr i32 {b(f'add i32 {rebiased}, {odd}')}, {F32_MANTISSA_SHIFT}")
    # below 2**-14 the result is subnormal: adding 0.5 rounds the value to a multiple of 2**-24 in the
    # float's last bits (to nearest even, by the FPU), which are then the float16's
    magic = b(f"fadd float {b(f'bitcast i32 {a} to float')}, 0x3FE0000000000000")
    subnormal = b(f"sub i32 {b(f'bitcast float {magic} to i32')}, {126 << 23}")
    out = b.select(b(f"icmp ult i32 {a}, {113 << 23}"), subnormal, normal, "int32")
    out = b.select(b(f"icmp uge i32 {a}, 1199566848"), "31744", out, "int32")   # 65520 and above: inf
    out = b.select(b(f"icmp ugt i32 {a}, 2139095040"), nan, out, "int32")
    sign = b(f"lshr i32 {b(f'and i32 {bits}, 2147483648')}, 16")
    return b(f"trunc i32 {b(f'or i32 {out}, {sign}')} to i16")


def bfloat_bits_to_float(b, h):
    wide = b(f"zext i16 {h} to i32")
    return b(f"bitcast i32 {b(f'shl i32 {wide}, 16')} to float")


def float_to_bfloat_bits(b, x):
    """The bfloat16 bits (i16) nearest the float x (ties to even)."""
    bits = b(f"bitcast float {x} to i32")
    high = b(f"lshr i32 {bits}, 16")
    odd = b(f"and i32 {high}, 1")
    bias = b(f"add i32 {odd}, 32767")
    rounded = b(f"lshr i32 {b(f'add i32 {bits}, {bias}')}, 16")
    nan = b(f"or i32 {b(f'and i32 {high}, 32768')}, 32704")
    out = b.select(b(f"fcmp uno float {x}, {x}"), nan, rounded, "int32")
    return b(f"trunc i32 {out} to i16")


def round_to_odd_float(b, x):
    """The double x as a float rounded to odd: exact values exactly, others toward zero with the last bit
    set (a later rounding to fewer bits is then correctly rounded)."""
    t = b(f"fptrunc double {x} to float")
    back = b(f"fpext float {t} to double")
    tb = b(f"bitcast float {t} to i32")
    away = b(f"fcmp ogt double {b.intrinsic('fabs', back, dtype='float64')}, "
             f"{b.intrinsic('fabs', x, dtype='float64')}")
    toward_zero = b(f"sub i32 {tb}, {b(f'zext i1 {away} to i32')}")
    odd = b(f"or i32 {toward_zero}, 1")
    bits = b.select(b(f"fcmp one double {back}, {x}"), odd, tb, "int32")
    return b(f"bitcast i32 {bits} to float")


TO_BITS = {"float16": float_to_half_bits, "bfloat16": float_to_bfloat_bits}
FROM_BITS = {"float16": half_bits_to_float, "bfloat16": bfloat_bits_to_float}


def to_bits(b, x, dtype):
    """A float register value stored as dtype's 16 bits (rounded)."""
    return TO_BITS[dtype.name](b, x)


def from_bits(b, h, dtype):
    return FROM_BITS[dtype.name](b, h)


def round_to(b, x, dtype):
    """A float rounded to the nearest value of the 16-bit float dtype (still a float)."""
    return from_bits(b, to_bits(b, x, dtype), dtype)
