"""jax.lax's convolutions on the conv_general_dilated primitive: the general form with string or explicit padding,
its shorthands (conv, conv_with_general_padding, conv_transpose) and the dimension-number and shape helpers."""
import numpy as np

from ..core.avals import canonical_dtype
from ..core.trace import bind
from ..numpy._base import asarray, aval
from ..primitives import convolution as conv_prims
from ..primitives import shapes as sh
from ..primitives.convolution import ConvDimensionNumbers
from ..primitives.convolution import conv_shape_tuple as _conv_shape_tuple
from ..primitives.window_geometry import dilate_dim


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """(low, high) pads per spatial dimension for 'VALID', 'SAME' (the odd element of padding at the end) or
    'SAME_LOWER' (at the start): 'SAME' outputs ceil(in / stride) elements."""
    mode = padding.upper() if isinstance(padding, str) else None
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"padding must be 'VALID', 'SAME' or 'SAME_LOWER' (or (low, high) pairs), got {padding!r}")
    pads = [max((-(-d // s) - 1) * s + w - d, 0) for d, w, s in zip(in_shape, window_shape, window_strides)]
    return [(p // 2, p - p // 2) if mode == "SAME" else (p - p // 2, p // 2) for p in pads]


def conv_general_permutations(dimension_numbers):
    """The (batch, feature, spatial...) axis numbers of each spec string, e.g. ('NHWC', 'HWIO', 'NHWC') ->
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)); spatial axes in the order the rhs spec names them."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for k, (spec, (a, b)) in enumerate(zip(dimension_numbers, pairs)):
        if spec.count(a) != 1 or spec.count(b) != 1 or len(set(spec)) != len(spec):
            raise TypeError(f"convolution dimension_numbers[{k}] must contain '{a}' and '{b}' exactly once and no "
                            f"repeated character, got {spec!r}")
    if not set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"} == set(out_spec) - {"N", "C"}:
        raise TypeError(f"convolution dimension_numbers must name the same spatial dimensions, got {dimension_numbers}")

    def perm(spec, pair):
        spatial = sorted((i for i, ch in enumerate(spec) if ch not in pair), key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

    return tuple(perm(spec, pair) for spec, pair in zip(dimension_numbers, pairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """dimension_numbers (None: ('NCH..', 'OIH..', 'NCH..'), three spec strings, or three axis tuples) as a
    ConvDimensionNumbers."""
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution: lhs and rhs must have the same rank, got {lhs_shape} and {rhs_shape}")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3:
        raise TypeError(f"convolution dimension_numbers must be None, a ConvDimensionNumbers or three specs, got "
                        f"{dimension_numbers!r}")
    if all(isinstance(s, str) for s in dimension_numbers):
        if any(len(s) != len(lhs_shape) for s in dimension_numbers):
            raise TypeError(f"convolution dimension_numbers {dimension_numbers} must each have {len(lhs_shape)} "
                            f"characters for operands of shape {lhs_shape} and {rhs_shape}")
        return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
    return ConvDimensionNumbers(*(tuple(int(a) for a in spec) for spec in dimension_numbers))


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape, operands in canonical order (N, C, spatial...), (O, I, spatial...); pads may be a
    padding string."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    return _conv_shape_tuple(tuple(lhs_shape), tuple(rhs_shape), tuple(strides), tuple(pads), batch_group_count)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of conv_general_dilated (no dilation), in the layout dimension_numbers give."""
    lhs_perm, rhs_perm, out_perm = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    out = conv_shape_tuple([lhs_shape[a] for a in lhs_perm], [rhs_shape[a] for a in rhs_perm], window_strides,
                           padding)
    return tuple(out[j] for j in np.argsort(out_perm))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of conv_transpose, in the layout dimension_numbers give."""
    lhs_perm, rhs_perm, out_perm = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs_t, rhs_t = [lhs_shape[a] for a in lhs_perm], [rhs_shape[a] for a in rhs_perm]
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding) for k, s in zip(rhs_t[2:], window_strides)]
    space = [(i - 1) * s - k + 2 + lo + hi for i, k, s, (lo, hi) in zip(lhs_t[2:], rhs_t[2:], window_strides, padding)]
    out = (lhs_t[0], rhs_t[0], *space)
    return tuple(out[j] for j in np.argsort(out_perm))


def _pairs(padding):
    try:
        return tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError(f"padding must be a string or a sequence of (low, high) integer pairs, got {padding!r}") \
            from None


def _precision(precision):
    return tuple(precision) if isinstance(precision, list) else precision


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1, precision=None,
                         preferred_element_type=None):
    """N-dimensional convolution (cross-correlation, as jax.lax.conv_general_dilated): strides, string or
    explicit padding, lhs dilation (transposed convolution), rhs dilation (atrous), feature and batch groups.
    precision is accepted for compatibility (the CPU computes at full precision)."""
    lhs, rhs = asarray(lhs), asarray(rhs)
    lhs_shape, rhs_shape = aval(lhs).shape, aval(rhs).shape
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n_sp = len(lhs_shape) - 2
    rhs_dilation = (1,) * n_sp if rhs_dilation is None else tuple(int(d) for d in rhs_dilation)
    if lhs_dilation is None:
        lhs_dilation = (1,) * n_sp
    elif isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError("conv_general_dilated: string padding is not defined with lhs_dilation (a transposed "
                         "convolution): give (low, high) pairs or use conv_transpose")
    if isinstance(padding, str):
        window = [dilate_dim(rhs_shape[a], d) for a, d in zip(dnums.rhs_spec[2:], rhs_dilation)]
        padding = padtype_to_pads([lhs_shape[a] for a in dnums.lhs_spec[2:]], window, window_strides, padding)
    return conv_prims.conv_general_dilated(
        lhs, rhs, window_strides=tuple(int(s) for s in window_strides), padding=_pairs(padding),
        lhs_dilation=tuple(int(d) for d in lhs_dilation), rhs_dilation=rhs_dilation, dimension_numbers=dnums,
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
        precision=_precision(precision),
        preferred_element_type=None if preferred_element_type is None else canonical_dtype(preferred_element_type))


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """conv_general_dilated in the layout (N, C, spatial...) x (O, I, spatial...)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, precision=None,
                              preferred_element_type=None):
    """conv_general_dilated in the layout (N, C, spatial...) x (O, I, spatial...), with dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    """(before, after) padding of one dimension of a transposed convolution with kernel size k and stride s,
    for the forward convolution's padding ('SAME', 'VALID' or a (low, high) pair)."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    elif isinstance(padding, tuple):
        before, total = k - padding[0] - 1, 2 * k - 2 - sum(padding)
    else:
        raise ValueError(f"conv_transpose: padding must be 'SAME', 'VALID' or (low, high) pairs, got {padding!r}")
    return before, total - before


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                      5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None, transpose_kernel=False,
                   precision=None, preferred_element_type=None, use_consistent_padding=False):
    """The transposed ("fractionally strided") convolution, as jax.lax.conv_transpose: lhs dilated by the strides.
    'SAME'/'VALID' (and, with use_consistent_padding, explicit pairs) name the padding of the forward
    convolution; transpose_kernel flips the kernel spatially and swaps its feature axes (the gradient form)."""
    lhs, rhs = asarray(lhs), asarray(rhs)
    ndim = aval(lhs).ndim
    if dimension_numbers is None:
        if ndim not in _TRANSPOSE_LAYOUTS:
            raise ValueError(f"conv_transpose: no default dimension_numbers for rank {ndim}")
        dimension_numbers = _TRANSPOSE_LAYOUTS[ndim]
    dn = conv_dimension_numbers(aval(lhs).shape, aval(rhs).shape, dimension_numbers)
    rhs_dilation = (1,) * (ndim - 2) if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or isinstance(padding, str):
        kernel = [dilate_dim(aval(rhs).shape[a], d) for a, d in zip(dn.rhs_spec[2:], rhs_dilation)]
        forward = [padding] * len(strides) if isinstance(padding, str) else [tuple(p) for p in padding]
        padding = [_conv_transpose_padding(k, s, p) for k, s, p in zip(kernel, strides, forward)]
    if transpose_kernel:
        rhs = bind(sh.rev_p, rhs, dimensions=tuple(dn.rhs_spec[2:]))
        perm = list(range(ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = bind(sh.transpose_p, rhs, permutation=tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), padding, tuple(strides), rhs_dilation, dn,
                                precision=precision, preferred_element_type=preferred_element_type)
