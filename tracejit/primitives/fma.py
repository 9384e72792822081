"""fma(a, b, c): a * b + c rounded once, the fused multiply-add of the hardware (`llvm.fma`). Internal (JAX has no
lax.fma): tracejit.random's samplers use it to compute their polynomials as XLA's CPU code does, which fuses such
pairs; reached through core.ops (`ops.fma`).

The NumPy impl is the correctly rounded result, as the compiled code's. float32 and the 16-bit floats: the product
of two floats of at most 24 significant bits is exact in float64, and the float64 sum is rounded to odd (an inexact
sum gets its last bit set), so that rounding it to the narrower float is the one correct rounding (Boldo and
Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd", 2008). float64:
their algorithm, an error-free product (Dekker) and sums, the errors' sum rounded to odd; where its intermediate
values could overflow or underflow, the exact rational value, rounded.
"""
from fractions import Fraction

import numpy as np

from ..backend.rules import Elementwise
from ..core.ad_util import aval
from ..core.avals import HALF_FLOATS, float32, float64
from ..core.ops import ops
from .elementwise_rules import FLOAT, elementwise

# ------------------------------------------------------------------------------------------ NumPy impl


def _two_sum(x, y):
    """(x + y rounded, its rounding error), exact."""
    s = x + y
    back = s - x
    return s, (x - (s - back)) + (y - back)


def _to_odd(s, e):
    """The float64 s = x rounded to nearest, e = x - s: x rounded to odd (s, or its neighbor toward x where s is
    inexact and its last bit clear)."""
    bits, e = np.asarray(s).view(np.int64), np.asarray(e)
    toward_x = np.where((e.view(np.int64) ^ bits) >= 0, 1, -1)     # a step of the bits away from zero or toward it
    return np.where(((e < 0) | (e > 0)) & (bits & 1 == 0), bits + toward_x, bits).view(np.float64)


def _to_odd_float32(x):
    """The float64 x as a float32 rounded to odd."""
    t = np.asarray(x.astype(np.float32))
    back, bits = t.astype(np.float64), t.view(np.int32)
    odd = (bits - (np.abs(back) > np.abs(x))) | 1
    return np.where((back < x) | (back > x), odd, bits).view(np.float32)


def _split(x):
    """x as high + low, each of at most 26 significant bits (Veltkamp)."""
    t = 134217729.0 * x                       # 2**27 + 1
    high = t - (t - x)
    return high, x - high


def _fma64(a, b, c):
    p = a * b
    (ah, al), (bh, bl) = _split(a), _split(b)
    p_error = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    high, low = _two_sum(c, p)
    out = high + _to_odd(*_two_sum(low, p_error))
    # the splits, products and sums are exact where nothing overflows and the errors are not subnormal
    exact = ((np.abs(a) < 2.0 ** 995) & (np.abs(b) < 2.0 ** 995) & (np.abs(p) > 2.0 ** -900) & (np.abs(p) < 2.0 ** 1020)
             & (np.abs(c) < 2.0 ** 1020) & ((np.abs(out) > 2.0 ** -960) | (out == 0)))
    plain = ~np.isfinite(a) | ~np.isfinite(b) | (a == 0) | (b == 0)    # a * b is exact, or not a number
    out = np.where(exact, out, np.where(plain, p + c, c))       # c: a finite product plus an inf or a NaN
    for i in np.flatnonzero(~exact & ~plain & np.isfinite(c)):
        out.flat[i] = _rational(a.flat[i], b.flat[i], c.flat[i])
    return out


def _rational(a, b, c):
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    try:
        return float(exact)        # correctly rounded (int / int is)
    except OverflowError:
        return np.inf if exact > 0 else -np.inf


def _fma_impl(a, b, c):
    a, b, c = np.broadcast_arrays(*map(np.asarray, (a, b, c)))
    dtype = a.dtype
    with np.errstate(all="ignore"):
        if dtype == float64:
            return np.asarray(_fma64(a, b, c))
        product = a.astype(np.float64) * b.astype(np.float64)
        out = _to_odd(*_two_sum(product, c.astype(np.float64)))
        return (out if dtype == float32 else _to_odd_float32(out)).astype(dtype)

# ------------------------------------------------------------------------------------------- lowering


def _lower(b, x, y, z):
    """llvm.fma; the 16-bit floats (float32 in registers) as the impl computes them: an exact product and a sum
    in float64 rounded to odd, then to float32 to odd, then to their precision."""
    if b.dtype() not in HALF_FLOATS:
        return b.intrinsic("fma", x, y, z)
    x, y, z = (b(f"fpext float {v} to double") for v in (x, y, z))
    p = b(f"fmul double {x}, {y}")             # exact: 24 significant bits at most in each factor
    s = b(f"fadd double {p}, {z}")
    back = b(f"fsub double {s}, {p}")          # _two_sum
    kept = b(f"fsub double {p}, {b(f'fsub double {s}, {back}')}")
    e = b(f"fadd double {kept}, {b(f'fsub double {z}, {back}')}")
    bits, e_bits = b(f"bitcast double {s} to i64"), b(f"bitcast double {e} to i64")       # _to_odd
    toward_x = b.select(b(f"icmp sge i64 {b(f'xor i64 {bits}, {e_bits}')}, 0"), "1", "-1", "int64")
    even = b(f"icmp eq i64 {b(f'and i64 {bits}, 1')}, 0")
    step = b(f"and i1 {b(f'fcmp one double {e}, 0.0')}, {even}")
    wide = b(f"bitcast i64 {b.select(step, b(f'add i64 {bits}, {toward_x}'), bits, 'int64')} to double")
    narrow = b.to_odd_float(wide)              # (_to_odd_float32)
    return b.convert(narrow, float32, b.dtype())

# ---------------------------------------------------------------------------------------------- the primitive


def _shaped(term, out):
    """A tangent term of a rank-0 operand broadcast to the result's shape."""
    if aval(term).shape == aval(out).shape:
        return term
    return ops.broadcast_in_dim(term, shape=aval(out).shape, broadcast_dimensions=())


fma_p = elementwise("fma", _fma_impl, FLOAT, (lambda t, a, b, c, out: _shaped(ops.mul(t, b), out),
                                              lambda t, a, b, c, out: _shaped(ops.mul(a, t), out),
                                              lambda t, a, b, c, out: _shaped(t, out)),
                    Elementwise(_lower))
