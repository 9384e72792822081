"""Window functions (bartlett, blackman, hamming, hanning, kaiser: NumPy's formulas, in float64; of a concrete
length M, so constants inside a trace but for kaiser's beta, which may be traced) and bit packing (packbits,
unpackbits: bits of uint8 along an axis)."""
import numpy as np

from ..core.avals import index_arg, normalize_axis
from ._base import asarray, aval, promote
from .bessel_gcd import i0
from .creation import arange, ones, zeros
from .reductions import sum
from .shape_ops import concatenate, moveaxis, ravel, reshape
from .ufuncs import add, bitwise_and, cos, divide, less_equal, multiply, not_equal, right_shift, sqrt, subtract, where_


def _length(M, name):
    return index_arg(M, f"{name}: M")


def _symmetric_points(M):
    """1 - M, 3 - M, ..., M - 1 over M - 1: the window's points in [-1, 1]."""
    return divide(arange(1 - M, M, 2), M - 1)


def _cosine_window(name, a0, a1, a2=0.0):
    def fn(M):
        M = _length(M, name)
        if M < 1:
            return np.zeros(0, np.float64)
        if M == 1:
            return np.ones(1, np.float64)
        n = arange(1 - M, M, 2)       # NumPy's formula, rounded as NumPy's: pi * n / (M - 1)
        out = add(a0, multiply(a1, cos(divide(multiply(np.pi, n), M - 1))))
        return add(out, multiply(a2, cos(divide(multiply(2.0 * np.pi, n), M - 1)))) if a2 else out
    fn.__name__ = fn.__qualname__ = name
    return fn


blackman = _cosine_window("blackman", 0.42, 0.5, 0.08)
hamming = _cosine_window("hamming", 0.54, 0.46)
hanning = _cosine_window("hanning", 0.5, 0.5)


def bartlett(M):
    """The triangular window of M points, zero at both ends."""
    M = _length(M, "bartlett")
    if M < 1:
        return np.zeros(0, np.float64)
    if M == 1:
        return np.ones(1, np.float64)
    n = _symmetric_points(M)
    return where_(less_equal(n, 0), add(1, n), subtract(1, n))


def kaiser(M, beta):
    """The Kaiser window of M points with shape parameter beta: i0(beta sqrt(1 - x**2)) / i0(beta)."""
    M = _length(M, "kaiser")
    (beta,) = promote(beta, to_float="float64")
    dtype = np.result_type(aval(beta).dtype, np.float64)
    if M < 1:
        return np.zeros(0, dtype)
    if M == 1:
        return ones((1,), dtype)
    x = _symmetric_points(M)
    return divide(i0(multiply(beta, sqrt(subtract(1.0, multiply(x, x))))), i0(beta))


# ------------------------------------------------------------------------------------------- bits

def _bitorder(bitorder, name):
    if bitorder not in ("big", "little"):
        raise ValueError(f"{name}: bitorder must be 'big' or 'little', got {bitorder!r}")
    weights = 1 << np.arange(8, dtype=np.uint8)
    return weights[::-1].copy() if bitorder == "big" else weights


def packbits(a, axis=None, bitorder="big"):
    """The elements of a as bits (nonzero: 1), eight to a uint8 along axis (flattened when None), the last byte
    padded with zeros; bitorder 'big' puts the first element in the highest bit."""
    a = asarray(a)
    if aval(a).dtype.kind not in "biu":
        raise TypeError(f"packbits: a must hold integers or booleans, got {aval(a).str_short()}")
    weights = _bitorder(bitorder, "packbits")
    bits = not_equal(a, 0)
    if axis is None:
        bits, axis = ravel(bits), 0
    axis = normalize_axis(axis, aval(bits).ndim, "packbits")
    bits = moveaxis(bits, axis, -1)
    shape = aval(bits).shape
    pad = -shape[-1] % 8
    if pad:
        bits = concatenate([bits, zeros(shape[:-1] + (pad,), np.bool_)], -1)
    groups = reshape(bits, shape[:-1] + ((shape[-1] + pad) // 8, 8))
    packed = sum(where_(groups, weights, np.zeros((), np.uint8)), -1, dtype=np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of the uint8 array a along axis (flattened when None), eight per byte; count keeps the first
    count bits (a negative count drops that many from the end; a count past the end pads zeros)."""
    a = asarray(a)
    if aval(a).dtype != np.uint8:
        raise TypeError(f"unpackbits: a must be an array of dtype uint8, got {aval(a).str_short()}")
    shifts = np.log2(_bitorder(bitorder, "unpackbits")).astype(np.uint8)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, aval(a).ndim, "unpackbits")
    a = moveaxis(a, axis, -1)
    shape = aval(a).shape
    bits = bitwise_and(right_shift(reshape(a, shape + (1,)), shifts), np.ones((), np.uint8))
    bits = reshape(bits, shape[:-1] + (shape[-1] * 8,))
    if count is not None:
        count = index_arg(count, "unpackbits: count")
        total = shape[-1] * 8
        keep = count if count >= 0 else max(total + count, 0)
        if keep <= total:
            bits = bits[..., :keep]
        else:
            bits = concatenate([bits, zeros(shape[:-1] + (keep - total,), np.uint8)], -1)
    return moveaxis(bits, -1, axis)
