"""jax.lax's convolutions built on conv_general_dilated and dot_general: conv_general_dilated_patches (each output
position's receptive field as channels), conv_general_dilated_local (a locally connected layer: a kernel of its
own at each output position) and ragged_dot (rows of lhs in consecutive groups, each group times its own rhs)."""
import math

import numpy as np

from .. import numpy as tnp
from ..core.avals import index_arg
from ..numpy._base import asarray, aval
from ..primitives import linalg as dot_prims
from .convolution import conv_dimension_numbers, conv_general_dilated


def _pair_precision(precision):
    """The lhs part of a precision (one value or an (lhs, rhs) pair), which the patches convolution takes."""
    if precision is None or not isinstance(precision, (tuple, list)):
        return precision
    if len(precision) != 2:
        raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
    return precision[0]


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                                 dimension_numbers=None, precision=None, preferred_element_type=None):
    """The patches conv_general_dilated would see, as jax.lax.conv_general_dilated_patches: the output's feature
    axis holds, for input channel c and window position s (row-major over filter_shape), c * prod(filter_shape)
    + s. Computed, as JAX does, by a grouped convolution (one group per channel) with a 0/1 kernel that copies
    window position s to its own output channel, so strides, padding and dilations mean what they mean there."""
    lhs = asarray(lhs)
    filter_shape = tuple(index_arg(d, "conv_general_dilated_patches: filter_shape") for d in filter_shape)
    shape = aval(lhs).shape
    if len(filter_shape) != len(shape) - 2:
        raise ValueError(f"conv_general_dilated_patches: filter_shape {filter_shape} needs one size per spatial "
                         f"axis of lhs {shape}")
    lhs_spec, rhs_spec, _ = dnums = conv_dimension_numbers(shape, (1, 1) + filter_shape, dimension_numbers)
    window, channels = math.prod(filter_shape), shape[lhs_spec[1]]
    copy = np.broadcast_to(np.eye(window, dtype=aval(lhs).dtype), (channels, window, window))
    kernel = np.moveaxis(copy.reshape((channels * window, 1) + filter_shape), (0, 1), (rhs_spec[0], rhs_spec[1]))
    return conv_general_dilated(lhs, np.ascontiguousarray(kernel), window_strides, padding, lhs_dilation,
                                rhs_dilation, dnums, feature_group_count=channels,
                                precision=None if precision is None else (_pair_precision(precision), None),
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape, lhs_dilation=None,
                               rhs_dilation=None, dimension_numbers=None, precision=None):
    """An unshared convolution (a locally connected layer), as jax.lax.conv_general_dilated_local: rhs's spatial
    axes index output positions, and its I axis the input channels times the receptive window (channel-major,
    conv_general_dilated_patches' order); at each output position the patch is contracted with that position's
    kernel."""
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
                                           dimension_numbers, _pair_precision(precision))
    rhs = asarray(rhs)
    _, rhs_spec, out_spec = conv_dimension_numbers(aval(asarray(lhs)).shape, (1, 1) + tuple(filter_shape),
                                                   dimension_numbers)
    # batch over the output positions (in the patches' axis order), contract the I axis with the patch features
    order = sorted(range(len(out_spec) - 2), key=lambda k: out_spec[2 + k])
    lhs_batch, rhs_batch = tuple(out_spec[2 + k] for k in order), tuple(rhs_spec[2 + k] for k in order)
    out = dot_prims.dot_general(patches, rhs, (((out_spec[1],), (rhs_spec[1],)), (lhs_batch, rhs_batch)))
    return tnp.moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None, group_offset=None):
    """lhs [m, k] times rhs [g, k, n] with lhs's rows in g consecutive groups of group_sizes rows, group i using
    rhs[i], as jax.lax.ragged_dot; rows past sum(group_sizes) are zero. Each row's group is found from the
    cumulative sizes and its product selected from the g products (differentiable in lhs and rhs).
    group_offset is refused, as in JAX."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not supported (as in JAX)")
    lhs, rhs, group_sizes = asarray(lhs), asarray(rhs), asarray(group_sizes)
    if aval(lhs).ndim != 2 or aval(rhs).ndim != 3 or aval(lhs).shape[1] != aval(rhs).shape[1]:
        raise TypeError(f"ragged_dot: lhs must be [m, k] and rhs [g, k, n], got {aval(lhs).shape} and "
                        f"{aval(rhs).shape}")
    m, g = aval(lhs).shape[0], aval(rhs).shape[0]
    if aval(group_sizes).shape != (g,) or aval(group_sizes).dtype.kind not in "iu":
        raise TypeError(f"ragged_dot: group_sizes must be {g} integers (one per group of rhs), got "
                        f"{aval(group_sizes).dtype}{list(aval(group_sizes).shape)}")
    if preferred_element_type is not None:
        lhs, rhs = lhs.astype(preferred_element_type), rhs.astype(preferred_element_type)
    ends = tnp.cumsum(group_sizes)
    group = tnp.sum(tnp.arange(m)[:, None] >= ends[None, :], axis=1)        # g: past the last group
    mine = (group[:, None] == tnp.arange(g)[None, :])[:, :, None]
    products = tnp.einsum("mk,gkn->mgn", lhs, rhs)
    return tnp.sum(tnp.where(mine, products, tnp.zeros((), products.dtype)), axis=1)


__all__ = ["conv_general_dilated_local", "conv_general_dilated_patches", "ragged_dot"]
