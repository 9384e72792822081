"""tracejit.scipy.fft: jax.scipy.fft's discrete cosine transforms (type 2 and its inverse), written on
tracejit.numpy.fft so that they trace, differentiate, batch and compile.

The type 2 DCT of x (length N) is read off the DFT of x followed by its mirror image: that sequence of length 2N is
even about n = N - 1/2, so bins 0..N-1 of its spectrum, turned by exp(-i pi k / 2N), are real and equal SciPy's
2 sum_n x_n cos(pi k (2n + 1) / 2N). The inverse builds that spectrum from y and takes its inverse real DFT. Complex
input is transformed by its real and imaginary parts (the transforms have real coefficients), integers in float64.
As JAX's: only type 2, norm None, "backward" or "ortho", and an `s` paired with `axes` as far as both go."""
import operator

import numpy as np

from .. import lax
from .. import numpy as tnp
from ..core.avals import axis_tuple, normalize_axis
from ..core.errors import ShapeError
from ..numpy._base import aval
from ..numpy.elementwise_extra import as_inexact

__all__ = ["dct", "dctn", "idct", "idctn"]

_NORMS = (None, "backward", "ortho")


def _check(name, type, norm):
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm not in _NORMS:
        raise ValueError(f"tracejit.scipy.fft.{name}: norm={norm!r} is not implemented")


def _along(axis, ndim, values):
    """A constant laid out along axis, to broadcast against an array of rank ndim."""
    return values.reshape([-1 if k == axis else 1 for k in range(ndim)])


def _phase(n, axis, ndim, dtype, sign):
    """exp(sign i pi k / 2n) for k < n: the quarter-sample turn between the mirrored DFT and the DCT."""
    return _along(axis, ndim, np.exp(sign * 0.5j * np.pi * np.arange(n) / n).astype(dtype))


def _ortho_scale(n, axis, ndim, dtype):
    """SciPy's orthonormal factors: 1 / sqrt(4n) for the constant term, 1 / sqrt(2n) for the others."""
    scale = np.full(n, 1 / np.sqrt(2 * n))
    scale[0] = 1 / np.sqrt(4 * n)
    return _along(axis, ndim, scale.astype(dtype))


def _head(x, n, axis):
    """x[..., :n, ...] along axis."""
    return x[(slice(None),) * axis + (slice(0, n),)]


def _fit(x, n, axis):
    """x cropped or zero-padded to length n along axis (None: as it is)."""
    if n is None:
        return x
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"invalid number of data points ({n}) specified")
    size = aval(x).shape[axis]
    if n <= size:
        return _head(x, n, axis)
    return tnp.pad(x, [(0, n - size if k == axis else 0) for k in range(aval(x).ndim)])


def _dct_real(x, axis):
    n, ndim = aval(x).shape[axis], aval(x).ndim
    spectrum = _head(tnp.fft.rfft(tnp.concatenate([x, tnp.flip(x, axis)], axis), axis=axis), n, axis)
    return tnp.real(spectrum * _phase(n, axis, ndim, aval(spectrum).dtype, -1))


def _idct_real(y, axis):
    n, ndim = aval(y).shape[axis], aval(y).ndim
    dtype = np.result_type(aval(y).dtype, np.complex64)
    # bin n of the mirrored spectrum is zero: irfft's padding to n + 1 bins supplies it
    return _head(tnp.fft.irfft(y * _phase(n, axis, ndim, dtype, 1), n=2 * n, axis=axis), n, axis)


def _transform(x, axis, n, norm, inverse):
    """One axis's DCT (or its inverse) of x cropped or padded to n."""
    x = _fit(x, n, axis)
    if aval(x).dtype.kind == "c":
        return lax.complex(_transform(tnp.real(x), axis, None, norm, inverse),
                           _transform(tnp.imag(x), axis, None, norm, inverse))
    size, ndim = aval(x).shape[axis], aval(x).ndim
    scale = _ortho_scale(size, axis, ndim, aval(x).dtype) if norm == "ortho" else None
    if inverse:
        return _idct_real(x if scale is None else x / scale, axis)
    y = _dct_real(x, axis)
    return y if scale is None else y * scale


def _one_axis(name, x, type, n, axis, norm, inverse):
    _check(name, type, norm)
    x = as_inexact(x)
    return _transform(x, normalize_axis(axis, aval(x).ndim, name), n, norm, inverse)


def _lengths(name, ndim, s, axes):
    """(axis, length or None) per transformed axis, as JAX pairs them: `axes` defaults to the last len(s) axes
    (all without s), and lengths beyond len(axes), or axes beyond len(s), are ignored or left as they are."""
    if s is not None:
        s = [operator.index(s)] if np.ndim(s) == 0 else list(s)
        if len(s) > ndim:
            raise ValueError(f"s must have at most x.ndim ({ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(ndim - len(s) if s is not None else 0, ndim))
    axes = [normalize_axis(a, ndim, name) for a in axis_tuple(axes, name, iterable=True)]
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{name}: repeated axis in {tuple(axes)}")
    s = [] if s is None else s
    return [(a, s[k] if k < len(s) else None) for k, a in enumerate(axes)]


def _all_axes(name, x, type, s, axes, norm, inverse):
    _check(name, type, norm)
    x = as_inexact(x)
    for axis, n in _lengths(name, aval(x).ndim, s, axes):
        x = _transform(x, axis, n, norm, inverse)
    return x


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The type 2 DCT of x along axis, cropped or zero-padded to n first."""
    return _one_axis("dct", x, type, n, axis, norm, inverse=False)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of the type 2 DCT (a scaled type 3 DCT) of x along axis, cropped or zero-padded to n first."""
    return _one_axis("idct", x, type, n, axis, norm, inverse=True)


def dctn(x, type=2, s=None, axes=None, norm=None):
    """The type 2 DCT along each of axes in turn (it is separable), each cropped or zero-padded to its length in
    s first."""
    return _all_axes("dctn", x, type, s, axes, norm, inverse=False)


def idctn(x, type=2, s=None, axes=None, norm=None):
    """The inverse of dctn: idct along each of axes, each cropped or zero-padded to its length in s first."""
    return _all_axes("idctn", x, type, s, axes, norm, inverse=True)
