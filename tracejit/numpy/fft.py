"""tracejit.numpy.fft: jax.numpy.fft, written on the fft primitive (tracejit.primitives.fft), so that it is
differentiable, batched, and compiled (one-axis transforms of power-of-two lengths, and short other lengths by
Bluestein's algorithm, as a Stockham FFT compiled once per process: backend/fft_kernels.py; the rest calls
NumPy's pocketfft from the compiled program).

As JAX's: the transformed axes move to the end for the primitive and back; `n` / `s` crop or zero-pad the input;
`norm` ("backward", the default, "ortho" or "forward") scales the result; repeated axes are refused. Dtypes are
NumPy's, which here agree with JAX's: float32 (and float16, bfloat16) data gives complex64, float64 and integers give
complex128, and the inverse real transforms give the matching real dtype. fftfreq and rfftfreq are float64 (NumPy's
default; JAX's with x64) unless `dtype` says otherwise."""
import math
import operator

import numpy as np

from ..core.avals import HALF_FLOATS, canonical_dtype, normalize_axis
from ..core.trace import Tracer, bind
from ..primitives import fft as fft_prims
from ..primitives.fft import FftType
from ._base import asarray, astype, aval, promote, reject_out
from ._docs import document_as_numpy
from .complex_numbers import conj
from .padding import pad
from .shape_ops import moveaxis, roll
from .ufuncs import divide, multiply

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn", "ifftshift", "ihfft",
           "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]

_NORMS = (None, "backward", "ortho", "forward")


def transform(x, fft_type, fft_lengths):
    """jax.lax.fft: x converted to the dtype fft_type takes (real for RFFT, complex otherwise), transformed over
    its trailing len(fft_lengths) axes."""
    fft_type = fft_prims.fft_type_arg(fft_type)
    lengths = tuple(operator.index(n) for n in fft_lengths)
    (x,) = promote(x, to_float="float64")      # integers and bools in float64, as NumPy's
    dtype = aval(x).dtype
    if dtype in HALF_FLOATS:      # NumPy transforms float16 (and ml_dtypes' bfloat16) in float32
        dtype = np.dtype(np.float32)
    if fft_type == FftType.RFFT:
        if dtype.kind == "c":
            raise TypeError(f"rfft: needs real input, got {aval(x).str_short()}")
    elif dtype.kind != "c":
        dtype = np.result_type(dtype, np.complex64)
    x = astype(x, dtype)
    return bind(fft_prims.fft_p, x, fft_type=fft_type, fft_lengths=lengths) if lengths else x


def _scale(inverse, norm, size):
    """The factor the result of a transform of `size` points gets for `norm`, beyond the primitive's own 1/size
    on an inverse transform."""
    if norm not in _NORMS:
        raise ValueError(f'fft: norm must be "backward", "ortho" or "forward", got {norm!r}')
    if norm == "ortho":
        return math.sqrt(size) if inverse else 1 / math.sqrt(size)
    if norm == "forward":
        return size if inverse else 1 / size
    return 1


def _core(name, fft_type, a, s, axes, norm, extra_scale=1, out=None):
    """The transform over `axes` (all, or the last len(s), when None) with output lengths s, as JAX's _fft_core."""
    reject_out(name, out)
    a = asarray(a)
    ndim = aval(a).ndim
    if s is not None:
        s = [operator.index(n) for n in s]
        if any(n < 1 for n in s):
            raise ValueError(f"{name}: the lengths s must be positive, got {s}")
        if axes is not None and len(s) != len(axes):
            raise ValueError(f"{name}: s and axes must have the same length, got {s} and {axes}")
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = [normalize_axis(ax, ndim, name) for ax in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axes are not supported, got {axes}")
    last = list(range(ndim - len(axes), ndim))
    a = moveaxis(a, axes, last)
    shape = aval(a).shape
    inverse_real = fft_type == FftType.IRFFT
    if s is None:
        s = [shape[ax] for ax in last]
        if inverse_real and s:
            s[-1] = 2 * (s[-1] - 1)
            if s[-1] < 1:
                raise ValueError(f"{name}: an input of length 1 along the last axis needs n, got shape {shape}")
    else:
        wanted = list(shape[:ndim - len(s)]) + s
        if inverse_real:
            wanted[-1] = s[-1] // 2 + 1
        a = a[tuple(slice(0, n) for n in wanted)]
        a = pad(a, [(0, n - m) for n, m in zip(wanted, aval(a).shape)])
    out = transform(a, fft_type, s)
    factor = _scale(name.startswith("i"), norm, math.prod(s)) * extra_scale
    if factor != 1:
        out = multiply(out, factor)
    return moveaxis(out, last, axes)


def _one_axis(name, axis):
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"{name}: takes one axis (use {name}n for several), got {axis!r}")  # noqa: TRY004 - as JAX
    return [axis]


def _n(n):
    return None if n is None else [n]


def fft(a, n=None, axis=-1, norm=None, out=None):
    return _core("fft", FftType.FFT, a, _n(n), _one_axis("fft", axis), norm, out=out)


def ifft(a, n=None, axis=-1, norm=None, out=None):
    return _core("ifft", FftType.IFFT, a, _n(n), _one_axis("ifft", axis), norm, out=out)


def rfft(a, n=None, axis=-1, norm=None, out=None):
    return _core("rfft", FftType.RFFT, a, _n(n), _one_axis("rfft", axis), norm, out=out)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    return _core("irfft", FftType.IRFFT, a, _n(n), _one_axis("irfft", axis), norm, out=out)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The FFT of a Hermitian-symmetric signal given by its first half: n times the inverse real FFT of conj(a)."""
    a = asarray(a)
    size = 2 * (aval(a).shape[normalize_axis(axis, aval(a).ndim, "hfft")] - 1) if n is None else n
    return _core("hfft", FftType.IRFFT, conj(a), _n(n), _one_axis("hfft", axis), norm, extra_scale=size, out=out)


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of hfft: conj(rfft(a)) / n."""
    a = asarray(a)
    size = aval(a).shape[normalize_axis(axis, aval(a).ndim, "ihfft")] if n is None else n
    return conj(_core("ihfft", FftType.RFFT, a, _n(n), _one_axis("ihfft", axis), norm, extra_scale=1 / size, out=out))


def fftn(a, s=None, axes=None, norm=None, out=None):
    return _core("fftn", FftType.FFT, a, s, axes, norm, out=out)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    return _core("ifftn", FftType.IFFT, a, s, axes, norm, out=out)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    return _core("rfftn", FftType.RFFT, a, s, axes, norm, out=out)


def irfftn(a, s=None, axes=None, norm=None, out=None):
    return _core("irfftn", FftType.IRFFT, a, s, axes, norm, out=out)


def _two_axes(name, axes):
    if len(axes) != 2:
        raise ValueError(f"{name}: takes two axes, got axes={axes!r}")
    return axes


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _core("fft2", FftType.FFT, a, s, _two_axes("fft2", axes), norm, out=out)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _core("ifft2", FftType.IFFT, a, s, _two_axes("ifft2", axes), norm, out=out)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _core("rfft2", FftType.RFFT, a, s, _two_axes("rfft2", axes), norm, out=out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _core("irfft2", FftType.IRFFT, a, s, _two_axes("irfft2", axes), norm, out=out)

# ------------------------------------------------------------------------------------- frequencies, shifts


def _frequencies(name, integers, n, d, dtype):
    """integers / (n d) as NumPy computes it (times 1 / (n d)), in float64 unless dtype is given."""
    if isinstance(d, (list, tuple)):
        raise ValueError(f"{name}: d must be one number, got {d!r}")       # noqa: TRY004 - as JAX
    dtype = canonical_dtype(dtype if dtype is not None else np.float64)
    if isinstance(d, Tracer):
        return astype(multiply(integers, divide(1.0, multiply(d, float(n)))), dtype)
    return (integers * (1.0 / (n * d))).astype(dtype)


def fftfreq(n, d=1.0, device=None, *, dtype=None):
    """The sample frequencies of an n-point FFT with sample spacing d: [0, 1, ..., -1] / (n d)."""
    n = operator.index(n)
    integers = np.concatenate([np.arange((n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _frequencies("fftfreq", integers, n, d, dtype)


def rfftfreq(n, d=1.0, device=None, *, dtype=None):
    """The non-negative sample frequencies of an n-point real FFT: [0, 1, ..., n // 2] / (n d)."""
    n = operator.index(n)
    return _frequencies("rfftfreq", np.arange(n // 2 + 1), n, d, dtype)


def _shift(x, axes, sign):
    x = asarray(x)
    shape = aval(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
    axes_list = axes if isinstance(axes, (list, tuple)) else [axes]
    shifts = [sign * (shape[normalize_axis(ax, len(shape), "fftshift")] // 2) for ax in axes_list]
    return roll(x, shifts, axes_list)


def fftshift(x, axes=None):
    """The zero frequency moved to the middle."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of fftshift."""
    return _shift(x, axes, -1)


document_as_numpy(globals(), np.fft, "numpy.fft")
