"""conv_general_dilated: N-dimensional convolution (cross-correlation, as XLA's and JAX's), with strides, padding,
input (lhs) and kernel (rhs) dilation, and feature or batch groups. Its rules: the shape rule, a NumPy impl (one
contraction per kernel offset), jvp (it is bilinear), the transposes that give the input and kernel gradients
(convolutions again, as in JAX), batching (the batch axis folds into the batch, feature or group axes), and a
lowering to register-tiled vector loops over packed operands (tracejit.primitives.conv_lowering).

Dimension numbers name, per operand, which axes are (batch, feature, spatial...) of lhs and out and
(out feature, in feature, spatial...) of rhs (`ConvDimensionNumbers`); the spatial axes correspond in order.
With G feature groups the lhs features and the rhs out features split group-major into G groups, group g of
the output reading group g of the input; with G batch groups the lhs batch splits likewise and the output
batch is N / G."""
import collections

import numpy as np

from ..core.ad_util import UndefinedPrimal, aval, zeros
from ..core.avals import HALF_FLOATS, ShapedArray, dtype_kind
from ..core.errors import ShapeError
from ..core.ops import ops
from ..core.trace import Primitive
from .base import partials_jvp
from .conv_lowering import lower_conv
from .window_geometry import dilate_dim, dilated_and_padded, stride_dim, transpose_padding

ConvDimensionNumbers = collections.namedtuple("ConvDimensionNumbers", "lhs_spec rhs_spec out_spec")


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of a convolution of operands in canonical order, (N, C, spatial...) and (O, I,
    spatial...), with explicit pads: (N / batch_group_count, O, spatial...)."""
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"convolution: expected {len(lhs_shape) - 2} (low, high) padding pairs, got {pads}")
    padded = [d + lo + hi for d, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(f"convolution: negative padding {pads} is larger than the spatial shape {lhs_shape[2:]}")
    space = tuple(stride_dim(p, k, s) for p, k, s in zip(padded, rhs_shape[2:], strides))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + space


def _canonical(shape, spec):
    return tuple(shape[a] for a in spec)


def _conv_shape(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                feature_group_count, batch_group_count, precision=None, preferred_element_type=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    name = "conv_general_dilated"
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ShapeError(f"{name}: lhs and rhs must have the same rank (at least 2), got {lhs.shape} and {rhs.shape}")
    if lhs.dtype != rhs.dtype or dtype_kind(lhs.dtype) not in "fiu":
        raise TypeError(f"{name}: lhs and rhs must share a numeric dtype (real: not bool or complex), got "
                        f"{lhs.str_short()} and {rhs.str_short()}")
    if lhs.dtype in HALF_FLOATS or preferred_element_type in HALF_FLOATS:
        raise TypeError(f"{name}: {lhs.dtype} values are convolved in float32 (the conversions explicit in the "
                        "IR): use tracejit.lax.conv_general_dilated or tracejit.numpy, which convert")
    n_sp = lhs.ndim - 2
    for what, v in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                    ("rhs_dilation", rhs_dilation), ("padding", padding)):
        if len(v) != n_sp:
            raise ValueError(f"{name}: {what} needs {n_sp} entries (one per spatial dimension), got {v}")
    if any(s < 1 for s in window_strides + lhs_dilation + rhs_dilation):
        raise ValueError(f"{name}: strides and dilations must be positive, got window_strides={window_strides} "
                         f"lhs_dilation={lhs_dilation} rhs_dilation={rhs_dilation}")
    if any(sorted(spec) != list(range(lhs.ndim)) for spec in dimension_numbers):
        raise ValueError(f"{name}: dimension_numbers {dimension_numbers} must each be a permutation of "
                         f"range({lhs.ndim})")
    groups, batch_groups = feature_group_count, batch_group_count
    if groups < 1 or batch_groups < 1 or groups > 1 and batch_groups > 1:
        raise ValueError(f"{name}: feature_group_count and batch_group_count must be positive, at most one above "
                         f"1; got {groups} and {batch_groups}")
    n, c = lhs.shape[lhs_spec[0]], lhs.shape[lhs_spec[1]]
    o, i = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    if c % groups or c // groups != i:
        raise ShapeError(f"{name}: lhs features ({c}) divided by feature_group_count ({groups}) must equal the rhs "
                         f"input features ({i})")
    if o % (groups * batch_groups) or n % batch_groups:
        raise ShapeError(f"{name}: rhs output features ({o}) must be a multiple of the group count and lhs batch "
                         f"({n}) a multiple of batch_group_count ({batch_groups})")
    lhs_c = [dilate_dim(d, k) if j >= 2 else d for j, (d, k) in
             enumerate(zip(_canonical(lhs.shape, lhs_spec), (1, 1) + tuple(lhs_dilation)))]
    rhs_c = [dilate_dim(d, k) if j >= 2 else d for j, (d, k) in
             enumerate(zip(_canonical(rhs.shape, rhs_spec), (1, 1) + tuple(rhs_dilation)))]
    out_c = conv_shape_tuple(lhs_c, rhs_c, window_strides, padding, batch_groups)
    dtype = lhs.dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    return ShapedArray(tuple(out_c[j] for j in np.argsort(out_spec)), dtype)


def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
               feature_group_count, batch_group_count, precision=None, preferred_element_type=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    dtype = lhs.dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    x = dilated_and_padded(np.transpose(lhs, lhs_spec).astype(dtype), 0, (1, 1) + tuple(lhs_dilation),
                           ((0, 0), (0, 0)) + tuple(padding))
    w = np.transpose(rhs, rhs_spec).astype(dtype)
    (n, c), (o, i), kernel = x.shape[:2], w.shape[:2], w.shape[2:]
    groups = feature_group_count * batch_group_count
    if batch_group_count > 1:        # x as (group, batch, features, spatial...)
        x = x.reshape((groups, n // groups, c) + x.shape[2:])
    else:
        x = np.moveaxis(x.reshape((n, groups, c // groups) + x.shape[2:]), 1, 0)
    w = w.reshape((groups, o // groups, i) + kernel)
    rhs_dilated = [dilate_dim(k, r) for k, r in zip(kernel, rhs_dilation)]
    space = tuple(stride_dim(p, k, s) for p, k, s in zip(x.shape[3:], rhs_dilated, window_strides))
    out = np.zeros((groups, x.shape[1], o // groups) + space, dtype)
    if all(space):
        for offset in np.ndindex(*kernel):
            window = x[(Ellipsis,) + tuple(slice(k * r, k * r + (q - 1) * s + 1, s) for k, r, q, s in
                                           zip(offset, rhs_dilation, space, window_strides))]
            out += np.einsum("gnc...,goc->gno...", window, w[(Ellipsis,) + offset]).astype(dtype, copy=False)
    out = np.moveaxis(out, 0, 1).reshape((x.shape[1], o) + space)
    return np.transpose(out, np.argsort(out_spec))

# ----------------------------------------------------------------------------------- transposes (gradients)


def _spec_transpose(spec):
    """The spec with its first two entries swapped: batch <-> feature, out feature <-> in feature."""
    return (spec[1], spec[0]) + tuple(spec[2:])


def reshape_axis_into(src, dst, x):
    """x with axis src merged into axis dst (numbered with src removed) as its major part."""
    shape = aval(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new = [shape[i] for i in range(len(shape)) if i != src]
    new[dst] *= shape[src]
    if perm != sorted(perm):
        x = ops.transpose(x, permutation=tuple(perm))
    return ops.reshape(x, new_sizes=tuple(new))


def reshape_axis_out_of(src, size, x):
    """x with axis src split into (size, the rest)."""
    shape = list(aval(x).shape)
    shape[src:src + 1] = [size, shape[src] // size]
    return ops.reshape(x, new_sizes=tuple(shape))


def _dilated(shape, dilation):
    return [dilate_dim(d, k) for d, k in zip(shape, dilation)]


def _conv(lhs, rhs, precision=None, preferred_element_type=None, **params):
    return ops.conv_general_dilated(lhs, rhs, precision=precision, preferred_element_type=preferred_element_type,
                                    **params)


def _astype(x, dtype):
    return x if aval(x).dtype == dtype else ops.convert_element_type(x, new_dtype=dtype, weak_type=False)


def conv_general_dilated(lhs, rhs, **params):
    """The conv_general_dilated primitive, where 16-bit floats (operands or preferred_element_type) are convolved
    in float32 and the result rounded once, as dot_general multiplies them."""
    dtype = np.dtype(params["preferred_element_type"] or aval(lhs).dtype)
    if aval(lhs).dtype not in HALF_FLOATS and dtype not in HALF_FLOATS:
        return ops.conv_general_dilated(lhs, rhs, **params)
    wide = np.dtype(np.float32) if dtype in HALF_FLOATS else dtype
    lhs, rhs = (_astype(_astype(x, dtype), wide) for x in (lhs, rhs))
    return _astype(ops.conv_general_dilated(lhs, rhs, **{**params, "preferred_element_type": None}), dtype)


def _transpose_lhs(ct, lhs_aval, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                   feature_group_count, batch_group_count, precision=None, preferred_element_type=None):
    """The input gradient: ct convolved with the spatially reversed kernel (in and out features swapped), the
    forward strides becoming input dilation."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    kernel = [aval(rhs).shape[a] for a in rhs_spec[2:]]
    groups = feature_group_count
    if feature_group_count > 1 or batch_group_count > 1:  # the group axis moves into the in-feature axis
        groups = feature_group_count * batch_group_count
        rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1], reshape_axis_out_of(rhs_spec[0], groups, rhs))
    pads = transpose_padding([lhs_aval.shape[a] for a in lhs_spec[2:]], kernel, window_strides,
                             [aval(ct).shape[a] for a in out_spec[2:]], padding, lhs_dilation, rhs_dilation)
    rhs = _astype(ops.rev(rhs, dimensions=tuple(rhs_spec[2:])), aval(ct).dtype)
    out = _conv(ct, rhs, window_strides=tuple(lhs_dilation), padding=pads, lhs_dilation=tuple(window_strides),
                rhs_dilation=tuple(rhs_dilation),
                dimension_numbers=ConvDimensionNumbers(out_spec, _spec_transpose(rhs_spec), lhs_spec),
                feature_group_count=groups, batch_group_count=1, precision=precision)
    if batch_group_count > 1:
        out = reshape_axis_into(lhs_spec[1], lhs_spec[0], reshape_axis_out_of(lhs_spec[1], batch_group_count, out))
    return _astype(out, lhs_aval.dtype)


def _transpose_rhs(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                   feature_group_count, batch_group_count, precision=None, preferred_element_type=None):
    """The kernel gradient: the input convolved with ct, batch and feature axes trading places (feature groups
    becoming batch groups and back), the forward strides becoming kernel dilation."""
    if aval(ct).size == 0:
        return zeros(rhs_aval)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_in = _dilated([aval(lhs).shape[a] for a in lhs_spec[2:]], lhs_dilation)
    window = _dilated([rhs_aval.shape[a] for a in rhs_spec[2:]], rhs_dilation)
    ct_out = _dilated([aval(ct).shape[a] for a in out_spec[2:]], window_strides)
    pads = tuple((lo, o - i + w - lo - 1) for (lo, _), i, w, o in zip(padding, lhs_in, window, ct_out))
    out = _conv(_astype(lhs, aval(ct).dtype), ct, window_strides=tuple(rhs_dilation), padding=pads,
                lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
                dimension_numbers=ConvDimensionNumbers(*map(_spec_transpose, (lhs_spec, out_spec, rhs_spec))),
                feature_group_count=batch_group_count, batch_group_count=feature_group_count, precision=precision)
    return _astype(out, rhs_aval.dtype)


def _conv_transpose(ct, lhs, rhs, **params):
    if isinstance(lhs, UndefinedPrimal):
        return [_transpose_lhs(ct, lhs.aval, rhs, **params), None]
    return [None, _transpose_rhs(ct, lhs, rhs.aval, **params)]

# --------------------------------------------------------------------------------------------------- batching


def _conv_batch(args, dims, *, dimension_numbers, feature_group_count, batch_group_count, **params):
    """The batch axis folds into the lhs batch axis (lhs batched), the rhs out-feature axis (rhs batched), or a
    group axis (both, or grouped convolutions); the output's batch axis is split back out."""
    (lhs, rhs), (ld, rd) = args, dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    size = aval(lhs).shape[ld] if ld is not None else aval(rhs).shape[rd]
    groups = {"dimension_numbers": dimension_numbers, "feature_group_count": feature_group_count,
              "batch_group_count": batch_group_count}
    if ld is not None and rd is not None:
        if batch_group_count > 1:
            lhs = reshape_axis_into(ld, lhs_spec[0], lhs)
            groups["batch_group_count"] = batch_group_count * size
        else:
            lhs = reshape_axis_into(ld, lhs_spec[1], lhs)
            groups["feature_group_count"] = feature_group_count * size
        out = _conv(lhs, reshape_axis_into(rd, rhs_spec[0], rhs), **groups, **params)
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    if ld is not None:
        if batch_group_count > 1:   # the example axis goes inside each batch group
            lhs = reshape_axis_out_of(lhs_spec[0] + (ld <= lhs_spec[0]), batch_group_count, lhs)
            lhs = reshape_axis_into(ld + (lhs_spec[0] < ld), lhs_spec[0] + 1, lhs)
            lhs = reshape_axis_into(lhs_spec[0], lhs_spec[0], lhs)
        else:
            lhs = reshape_axis_into(ld, lhs_spec[0], lhs)
        return reshape_axis_out_of(out_spec[0], size, _conv(lhs, rhs, **groups, **params)), out_spec[0]
    count = feature_group_count * batch_group_count
    if count == 1:
        out = _conv(lhs, reshape_axis_into(rd, rhs_spec[0], rhs), **groups, **params)
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    # groups outermost in the out-feature axis: factor them out, fold the example axis in, put them back
    rhs = reshape_axis_out_of(rhs_spec[0] + (rd <= rhs_spec[0]), count, rhs)
    rhs = reshape_axis_into(rd + (rhs_spec[0] < rd), rhs_spec[0] + 1, rhs)
    rhs = reshape_axis_into(rhs_spec[0], rhs_spec[0], rhs)
    out = reshape_axis_out_of(out_spec[1], count, _conv(lhs, rhs, **groups, **params))
    out = reshape_axis_out_of(out_spec[1] + 1, size, out)
    return reshape_axis_into(out_spec[1], out_spec[1] + 1, out), out_spec[1]


conv_general_dilated_p = Primitive("conv_general_dilated", _conv_shape, _conv_impl, transpose=_conv_transpose,
                                   batch=_conv_batch, lower=lower_conv)
conv_general_dilated_p.set(jvp=partials_jvp(
    conv_general_dilated_p,
    lambda t, lhs, rhs, out, **params: _conv(t, rhs, **params),
    lambda t, lhs, rhs, out, **params: _conv(lhs, t, **params)))
