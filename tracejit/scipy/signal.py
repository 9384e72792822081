"""tracejit.scipy.signal: jax.scipy.signal's convolutions and detrend, on tracejit.numpy and
lax.conv_general_dilated.

As JAX's: the operands are promoted to one inexact dtype (integers and bools of up to 32 bits to float32, wider ones
to float64; with a float or complex operand, the inexact operands' dtype), method 'auto' is 'direct', and
convolve2d/correlate2d take only boundary='fill' with fillvalue=0. The crops of 'full', 'same' and 'valid' are
SciPy's: the centred part of the full result, of in1's shape for 'same', and for 'valid' of the shape where the
larger operand covers the smaller one (either may be the larger: they are swapped)."""

import numpy as np

from .. import lax
from .. import numpy as tnp
from ..core.avals import normalize_axes, normalize_axis
from ..numpy._base import asarray, aval, promote_inexact
from .signal_spectral import csd, detrend_last_axis, istft, stft, welch

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve", "istft", "stft",
           "welch"]

_MODES = ("full", "same", "valid")


def _crop(mode, shape1, shape2, round_up=False):
    """(start, size) per axis of the mode's part of the full convolution: SciPy centres it, an odd margin split
    with the extra element after it (before it with round_up: correlate2d's 'same')."""
    full = [n1 + n2 - 1 for n1, n2 in zip(shape1, shape2)]
    sizes = {"full": full, "same": list(shape1), "valid": [abs(n1 - n2) + 1 for n1, n2 in zip(shape1, shape2)]}[mode]
    return [((f - s + round_up) // 2, s) for f, s in zip(full, sizes)]


def _swapped(shape1, shape2, message):
    """Whether in2 is the larger operand in every axis (in1 in none); a ValueError if neither covers the other."""
    if all(n1 >= n2 for n1, n2 in zip(shape1, shape2)):
        return False
    if all(n1 <= n2 for n1, n2 in zip(shape1, shape2)):
        return True
    raise ValueError(message)


def _conv(lhs, rhs, padding, precision):
    """lax.conv_general_dilated of two arrays as one batch and one feature each; complex operands as one real
    convolution of their (real, imag) parts stacked as batch and features (the primitive takes real ones)."""
    if aval(lhs).dtype.kind != "c":
        out = lax.conv_general_dilated(lhs[None, None], rhs[None, None], (1,) * len(padding), padding,
                                       precision=precision)
        return out[0, 0]
    parts = [tnp.stack([tnp.real(x), tnp.imag(x)])[:, None] for x in (lhs, rhs)]
    out = lax.conv_general_dilated(*parts, (1,) * len(padding), padding, precision=precision)
    return lax.complex(out[0, 0] - out[1, 1], out[0, 1] + out[1, 0])


def _direct(in1, in2, mode, precision, round_up=False):
    """The mode's part of the convolution of in1 and in2: the smaller operand flipped slides over the larger one,
    padded (or, negative, cropped) to give exactly that part."""
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {list(_MODES)}, got {mode!r}")
    in1, in2 = asarray(in1), asarray(in2)
    shape1, shape2 = aval(in1).shape, aval(in2).shape
    if len(shape1) != len(shape2):
        raise ValueError(f"in1 and in2 must have the same number of dimensions, got shapes {shape1} and {shape2}")
    if 0 in shape1 or 0 in shape2:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes {shape1} and {shape2}.")
    in1, in2 = promote_inexact(in1, in2)
    swap = _swapped(shape1, shape2, "One input must be smaller than the other in every dimension.")
    big, small = (in2, in1) if swap else (in1, in2)
    padding = [(k - 1 - start, k - 1 - (n1 + n2 - 1 - start - size))
               for k, n1, n2, (start, size) in zip(aval(small).shape, shape1, shape2,
                                                   _crop(mode, shape1, shape2, round_up))]
    return _conv(big, tnp.flip(small), padding, precision)


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The N-d convolution of in1 and in2 (equal ranks), as scipy.signal.convolve; method 'auto' and 'direct'
    use lax.conv_general_dilated, 'fft' is fftconvolve."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method not in ("auto", "direct"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    return _direct(in1, in2, mode, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The N-d cross-correlation of in1 and in2 (in2 conjugated), as scipy.signal.correlate: the convolution with
    in2 flipped and conjugated."""
    return convolve(in1, tnp.flip(tnp.conj(in2)), mode, method, precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if aval(asarray(in1)).ndim != 2 or aval(asarray(in2)).ndim != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-d convolution, as scipy.signal.convolve2d with its default boundary (zeros) only, as JAX's."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _direct(in1, in2, mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-d cross-correlation, as scipy.signal.correlate2d (boundary 'fill' with zeros only, as JAX's). It is
    not correlate of 2-d arrays: 'same' centres an odd margin the other way, and 'valid' with in2 the larger
    (shapes not equal) is conjugated."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    out = _direct(in1, tnp.flip(tnp.conj(in2)), mode, precision, round_up=True)
    shape1, shape2 = aval(asarray(in1)).shape, aval(asarray(in2)).shape
    if mode == "valid" and shape1 != shape2 and all(n1 <= n2 for n1, n2 in zip(shape1, shape2)):
        return tnp.conj(out)
    return out


def fftconvolve(in1, in2, mode="full", axes=None):
    """The convolution of in1 and in2 (equal ranks) by FFT, over axes (default all); the other axes must match
    and are batch axes."""
    in1, in2 = promote_inexact(in1, in2)
    shape1, shape2 = aval(in1).shape, aval(in2).shape
    if len(shape1) != len(shape2):
        raise ValueError(f"in1 and in2 should have the same dimensionality, got shapes {shape1} and {shape2}")
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {list(_MODES)}, got {mode!r}")
    ndim = len(shape1)
    axes = normalize_axes(axes, ndim, "fftconvolve", iterable=True)
    if any(shape1[a] != shape2[a] for a in range(ndim) if a not in axes):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={shape1} in2.shape={shape2} axes={axes}")
    conv1, conv2 = [shape1[a] for a in axes], [shape2[a] for a in axes]
    if mode == "valid":
        _swapped(conv1, conv2, "For 'valid' mode, One input must be at least as large as the other in every "
                               "dimension.")
    fft_shape = [n1 + n2 - 1 for n1, n2 in zip(conv1, conv2)]
    if aval(in1).dtype.kind == "c":
        out = tnp.fft.ifftn(tnp.fft.fftn(in1, fft_shape, axes) * tnp.fft.fftn(in2, fft_shape, axes), fft_shape, axes)
    else:
        out = tnp.fft.irfftn(tnp.fft.rfftn(in1, fft_shape, axes) * tnp.fft.rfftn(in2, fft_shape, axes), fft_shape,
                             axes)
    index = [slice(None)] * ndim
    for a, (start, size) in zip(axes, _crop(mode, conv1, conv2)):
        index[a] = slice(start, start + size)
    return out[tuple(index)]


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """data less its mean ('constant') or its least-squares line ('linear'), along axis; bp: the breakpoints of a
    piecewise-linear trend, a line fitted to each piece."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError(f"Trend type must be 'linear' or 'constant', got {type!r}")
    (data,) = promote_inexact(data)
    if type == "constant":
        return data - tnp.mean(data, axis, keepdims=True)
    axis = normalize_axis(axis, aval(data).ndim, "detrend")
    n = aval(data).shape[axis]
    bounds = np.unique(np.r_[0, bp, n])
    if bounds[0] < 0 or bounds[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along given axis.")
    pieces = tnp.split(data, [int(b) for b in bounds[1:-1]], axis)
    return tnp.concatenate([tnp.moveaxis(detrend_last_axis(tnp.moveaxis(p, axis, -1), "linear"), -1, axis)
                            for p in pieces], axis)
