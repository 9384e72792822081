"""jax.image.resize and jax.image.scale_and_translate on tracejit.numpy, so that they trace, differentiate (in the
image, and in scale_and_translate's scale and translation) and batch.

As JAX's: every spatial dimension is resampled by one weight matrix of shape (input size, output size), built from
the method's kernel evaluated between each output pixel's centre (mapped back into the input) and every input pixel
centre, normalised so that the weights of each output pixel sum to one; the image is contracted with each matrix in
turn. When downsampling with antialias the kernel is stretched by the inverse scale (a low-pass filter). Output
pixels whose centre maps outside the input get zero. 'nearest' (resize only) gathers the pixel under each output
centre. 'cubic-pytorch' without antialias repeats the edge pixels instead of zeroing outside weight, as PyTorch."""
import contextlib
import enum
import operator

import numpy as np

from .. import lax
from .. import numpy as tnp
from ..core.trace import Tracer, eager
from ..numpy._base import aval, inexact_dtype, promote_inexact
from ..numpy.indexing import take_clamped

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """Image resize method, as jax.image.ResizeMethod: NEAREST, LINEAR, LANCZOS3, LANCZOS5, CUBIC (Keys, a=-0.5),
    CUBIC_PYTORCH (a=-0.75 with edge padding when antialias is off, as PyTorch and OpenCV) and AREA (box average)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str):
        """The method named by s, with JAX's aliases ('bilinear', 'trilinear', 'triangle', 'bicubic' ...)."""
        for method, names in _NAMES.items():
            if s in names:
                return method
        raise ValueError(f'Unknown resize method "{s}"')


_NAMES = {
    ResizeMethod.NEAREST: ("nearest",),
    ResizeMethod.LINEAR: ("linear", "bilinear", "trilinear", "triangle"),
    ResizeMethod.LANCZOS3: ("lanczos3",),
    ResizeMethod.LANCZOS5: ("lanczos5",),
    ResizeMethod.CUBIC: ("cubic", "bicubic", "tricubic"),
    ResizeMethod.CUBIC_PYTORCH: ("cubic-pytorch", "bicubic-pytorch"),
    ResizeMethod.AREA: ("area",),
}


def _triangle(x):
    return tnp.maximum(0, 1 - tnp.abs(x))


def _lanczos(radius, x):
    """sinc(x) sinc(x / radius) on |x| <= radius; 1 near 0, where the quotient is 0/0 (the inner where keeps the
    gradient finite there)."""
    y = radius * tnp.sin(np.pi * x) * tnp.sin(np.pi * x / radius)
    safe = tnp.where(x != 0, np.pi ** 2 * x ** 2, 1)
    out = tnp.where(x > 1e-3, y / safe, 1)
    return tnp.where(x > radius, 0.0, out)


def _cubic(a, x):
    """The cubic convolution kernel with parameter a (Keys: a=-0.5; OpenCV and PyTorch: a=-0.75), on x >= 0."""
    inner = ((a + 2) * x - (a + 3)) * x * x + 1
    outer = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return tnp.where(x >= 2, 0.0, tnp.where(x >= 1, outer, inner))


_AREA = object()   # the box kernel is an overlap of intervals, not a function of distance
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, lambda x: _lanczos(3.0, x)),
    ResizeMethod.LANCZOS5: (5, lambda x: _lanczos(5.0, x)),
    ResizeMethod.CUBIC: (2, lambda x: _cubic(-0.5, x)),
    ResizeMethod.CUBIC_PYTORCH: (2, lambda x: _cubic(-0.75, x)),
    ResizeMethod.AREA: (1, _AREA),
}


def _normalized(weights):
    """weights / their sum over the input axis, zero where that sum is (nearly) zero."""
    total = tnp.sum(weights, axis=0, keepdims=True)
    safe = tnp.where(total != 0, total, 1)
    return tnp.where(tnp.abs(total) > 1000.0 * float(np.finfo(np.float32).eps), weights / safe, 0)


def _weight_matrix(in_size, out_size, scale, translation, kernel, antialias, radius, edge_padding, dtype):
    """The (in_size, out_size) resampling matrix of one dimension. scale and translation may be traced."""
    inv_scale = 1.0 / scale
    kernel_scale = tnp.maximum(inv_scale, 1.0) if antialias else 1.0
    out_index = tnp.arange(out_size, dtype=dtype)
    # where each output pixel's centre falls in the input, in input pixel indices
    sample = (out_index + 0.5) * inv_scale - translation * inv_scale - 0.5
    pad = radius if edge_padding else 0    # edge padding is only reached without antialias (as in JAX)
    in_index = tnp.arange(-pad, in_size + pad, dtype=dtype)
    if kernel is _AREA:
        left = out_index * inv_scale - translation * inv_scale
        right = left + inv_scale
        weights = tnp.maximum(0.0, tnp.minimum(right[None, :], in_index[:, None] + 1)
                              - tnp.maximum(left[None, :], in_index[:, None]))
    else:
        weights = kernel(tnp.abs(sample[None, :] - in_index[:, None]) / kernel_scale)
    if edge_padding:
        # the weight of the samples beyond an edge moves onto the edge pixel: a sum through a constant one-hot
        clamped = np.clip(np.arange(-pad, in_size + pad), 0, in_size - 1)
        onehot = (clamped[None, :] == np.arange(in_size)[:, None]).astype(dtype)
        return _normalized(tnp.matmul(onehot, weights, precision=lax.Precision.HIGHEST))
    weights = _normalized(weights)
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return tnp.where(inside[None, :], weights, 0)


def _check_shape(shape, image):
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape}.") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"shape must have non-negative sizes, got {shape}")
    if len(shape) != aval(image).ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x;  "
                         f"{shape} vs {aval(image).shape}")
    return shape


def _method(method):
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"method must be a ResizeMethod or its name, got {method!r}")
    return method


def _resample(image, shape, spatial_dims, scales, translations, method, antialias, precision, dtype):
    """image contracted with one weight matrix per spatial dimension (each dimension in turn)."""
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    in_shape = aval(image).shape
    for d, scale, translation in zip(spatial_dims, scales, translations):
        static = not isinstance(scale, Tracer) and not isinstance(translation, Tracer)
        with eager() if static else contextlib.nullcontext():   # a constant of the traced program when it can be
            w = _weight_matrix(in_shape[d], shape[d], scale, translation, kernel, antialias, radius, edge_padding,
                               dtype)
            w = tnp.astype(w, aval(image).dtype)
        image = tnp.moveaxis(tnp.tensordot(image, w, axes=([d], [0]), precision=precision), -1, d)
    return image


def scale_and_translate(image, shape, spatial_dims, scale, translation, method, antialias=True,
                        precision=lax.Precision.HIGHEST):
    """image resampled into `shape` under the warp x -> x * scale + translation of its spatial_dims (half-centred
    pixels; output pixels mapping outside the input are zero), as jax.image.scale_and_translate. scale and
    translation are arrays of length len(spatial_dims) and may be traced (the result is differentiable in them);
    'nearest' is refused, as in JAX."""
    (image,) = promote_inexact(image)
    shape = _check_shape(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for scale_and_translate.")
    ndim = aval(image).ndim
    dims = []
    for d in spatial_dims:
        d = operator.index(d)
        if not -ndim <= d < ndim:
            raise ValueError(f"spatial_dims: axis {d} is out of bounds for an image of {ndim} dimensions")
        dims.append(d % ndim)
    # concrete scale and translation stay NumPy arrays, so that the weight matrices are constants of a trace
    scale, translation = [promote_inexact(v)[0] if isinstance(v, Tracer) else np.asarray(v).astype(inexact_dtype(np.asarray(v).dtype)) for v in (scale, translation)]
    for name, value in (("scale", scale), ("translation", translation)):
        if aval(value).shape != (len(dims),):
            raise ValueError(f"{name} must have shape ({len(dims)},), one entry per spatial dimension; got "
                             f"{aval(value).shape}")
    dtype = tnp.promote_types(aval(scale).dtype, aval(translation).dtype)
    scale, translation = [tnp.astype(v, dtype) if isinstance(v, Tracer) else v.astype(dtype)
                          for v in (scale, translation)]
    if not dims:
        return image
    return _resample(image, shape, dims, [scale[i] for i in range(len(dims))],
                     [translation[i] for i in range(len(dims))], method, antialias, precision, dtype)


def _resize_nearest(image, shape):
    """The input pixel under each output pixel's centre, per resized dimension. The source index is computed in
    float32, as JAX does (its float64 path differs in rounding), so both pick the same pixels."""
    for d, (m, n) in enumerate(zip(aval(image).shape, shape)):
        if m == n:
            continue
        centres = (np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m) / np.float32(n)
        image = take_clamped(image, np.floor(centres).astype(np.int32), axis=d)
    return image


def resize(image, shape, method, antialias=True, precision=lax.Precision.HIGHEST):
    """image resampled to `shape` (every dimension; leave batch and channel sizes unchanged), as jax.image.resize.
    'nearest' keeps the input dtype; the other methods return floats (integers as JAX promotes them).
    Dimensions whose size does not change are left alone: every kernel interpolates, so the identity warp is the
    identity. The weight matrices depend only on the shapes, so they are constants of a traced program."""
    image = tnp.asarray(image)
    shape = _check_shape(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    (image,) = promote_inexact(image)
    in_shape = aval(image).shape
    dims = [d for d in range(len(shape)) if in_shape[d] != shape[d]]
    scales = [1.0 if shape[d] == 0 else shape[d] / in_shape[d] if in_shape[d] else np.inf for d in dims]
    return _resample(image, shape, dims, scales, [0.0] * len(dims), method, antialias, precision, np.float64)

