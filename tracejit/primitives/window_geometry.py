"""The arithmetic of sliding windows that convolutions and windowed reductions share: dilated sizes, window
counts, the padding that turns a window's transpose into another windowed operation, and the dilated, padded
operand their NumPy impls slide over."""
import numpy as np


def dilate_dim(d, dilation):
    """The size of d elements with dilation - 1 holes between neighbours."""
    return 0 if d == 0 else 1 + dilation * (d - 1)


def kept_range(d, dilation, low, padded):
    """[first, last): the elements of an axis of d elements, dilated and padded by `low` in front to `padded`
    elements, that stay inside (negative padding crops)."""
    return max(0, -(low // dilation)), min(d, -((low - padded) // dilation))


def stride_dim(d, window, stride):
    """The number of windows of size `window` at `stride` that fit in d."""
    return max(0, (d - window) // stride + 1)


def window_out_shape(shape, window, strides, padding, base_dilation, window_dilation):
    """The shape of the windows' results: per axis, the windows of the dilated window that fit in the dilated and
    padded operand."""
    return tuple(stride_dim(dilate_dim(d, b) + lo + hi, dilate_dim(w, wd), s)
                 for d, w, s, (lo, hi), b, wd in zip(shape, window, strides, padding, base_dilation, window_dilation))


def transpose_padding(in_shape, window, strides, out_shape, padding, base_dilation, window_dilation):
    """(low, high) per axis: the padding of the strided-dilated cotangent (out_shape) under which a window of the
    reversed window gives the operand's cotangent (in_shape)."""
    pads = []
    for i, w, s, o, (lo, _), b, wd in zip(in_shape, window, strides, out_shape, padding, base_dilation,
                                          window_dilation):
        before = dilate_dim(w, wd) - lo - 1
        pads.append((before, dilate_dim(i, b) + dilate_dim(w, wd) - 1 - dilate_dim(o, s) - before))
    return tuple(pads)


def dilated_and_padded(x, fill, dilation, padding):
    """x with dilation - 1 fill values between neighbours along each axis, then padded with fill (negative padding
    crops)."""
    x = np.asarray(x)
    grid = np.full(tuple(dilate_dim(d, k) for d, k in zip(x.shape, dilation)), fill, x.dtype)
    grid[tuple(slice(None, None, k) for k in dilation)] = x
    grid = np.pad(grid, [(max(lo, 0), max(hi, 0)) for lo, hi in padding], constant_values=fill)
    return grid[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(padding, grid.shape))]
