"""tracejit.lax: the primitives by name, with jax.lax signatures (operands must already agree in dtype and
shape; Python scalars take the dtype of the array they meet), and control flow. Static arguments (shapes, axes,
dimension numbers) are read with operator.index, so a float or a string raises a TypeError naming the argument;
axes that JAX lets count from the end (squeeze, expand_dims) are normalized here, the primitives take them
non-negative."""
import warnings

import numpy as np

from ..core.avals import (
    array_of,
    canonical_dtype,
    check_shape,
    complex_dtype,
    index_arg,
    is_float,
    is_inexact,
    is_python_scalar,
    normalize_axes,
    normalize_axis,
    shape_arg,
)
from ..core.trace import bind
from ..nn import stop_gradient
from ..numpy import fft as _fft
from ..numpy._base import asarray, aval
from ..numpy.linalg_ops import Precision, check_precision
from ..primitives import bitcast as bc
from ..primitives import complex_parts as cp
from ..primitives import elementwise as ew
from ..primitives import indexing as ix
from ..primitives import linalg as dot_prims
from ..primitives import reductions as rd
from ..primitives import shapes as sh
from ..primitives import special as sp
from ..primitives.fft import FftType
from . import conv_local, extras, linalg, linear_solve
from .collectives import (
    all_gather,
    all_to_all,
    axis_index,
    axis_size,
    pbroadcast,
    pcast,
    pmax,
    pmean,
    pmin,
    ppermute,
    pshuffle,
    psum,
    psum_scatter,
    pswapaxes,
)
from .composites import (
    batch_matmul,
    broadcast,
    broadcast_to_rank,
    collapse,
    full,
    full_like,
    nextafter,
    reciprocal,
    reduce,
    reduce_and,
    reduce_or,
    reduce_xor,
    split,
    square,
)
from .composites import typed as _typed
from .control_flow import cond, fori_loop, scan, switch, while_loop
from .conv_local import conv_general_dilated_local, conv_general_dilated_patches, ragged_dot
from .convolution import (
    ConvDimensionNumbers,
    conv,
    conv_dimension_numbers,
    conv_general_dilated,
    conv_general_permutations,
    conv_general_shape_tuple,
    conv_shape_tuple,
    conv_transpose,
    conv_transpose_shape_tuple,
    conv_with_general_padding,
    padtype_to_pads,
)
from .cumulative import associative_scan, cumlogsumexp, cummax, cummin, cumprod, sort, sort_key_val, top_k
from .extras import (
    RoundingMethod,
    approx_max_k,
    approx_min_k,
    broadcast_like,
    broadcast_shapes,
    composite,
    empty,
    index_take,
    mulhi,
    optimization_barrier,
    platform_dependent,
    random_gamma_grad,
    reduce_precision,
    stack,
    stage,
    tile,
    unstack,
    with_sharding_constraint,
)
from .gather_scatter import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    gather,
    scatter,
    scatter_add,
    scatter_apply,
    scatter_max,
    scatter_min,
    scatter_mul,
    scatter_sub,
)
from .linear_solve import custom_linear_solve, custom_root
from .ragged import RaggedDotDimensionNumbers, ragged_dot_general
from .random_bits import RandomAlgorithm, rng_bit_generator
from .windowed import (
    avg_pool,
    max_pool,
    reduce_window,
    reduce_window_max,
    reduce_window_min,
    reduce_window_shape_tuple,
    reduce_window_sum,
)


def _ints(values, what):
    """A static sequence of integers (one integer alone too) as a tuple, or a TypeError naming `what`."""
    values = values if isinstance(values, (tuple, list, np.ndarray)) else (values,)
    return tuple(index_arg(v, f"{what} {tuple(values)!r}: each") for v in values)


def _shape(shape, what):
    """A static shape: integers (bools refused, as NumPy), none negative, not too large."""
    return check_shape(shape_arg(shape, what), what=what)


def _op(prim):
    def fn(*args, **params):
        return bind(prim, *_typed(*args), **params)
    fn.__name__, fn.primitive = prim.name, prim      # lax.reduce knows a monoid by its primitive
    fn.__doc__ = (f"The `{prim.name}` primitive, elementwise, as jax.lax.{prim.name}: the operands have one shape "
                  "and dtype (a Python scalar takes the dtype of the array it meets).")
    return fn


add, sub, mul, div, rem, max, min = map(_op, (ew.add_p, ew.sub_p, ew.mul_p, ew.div_p, ew.rem_p, ew.max_p, ew.min_p))
eq, ne, lt, le, gt, ge = map(_op, (ew.eq_p, ew.ne_p, ew.lt_p, ew.le_p, ew.gt_p, ew.ge_p))
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = map(_op, (ew.and_p, ew.or_p, ew.xor_p, ew.not_p))
shift_left, shift_right_logical, shift_right_arithmetic, population_count, clz = map(_op, (
    ew.shift_left_p, ew.shift_right_logical_p, ew.shift_right_arithmetic_p, ew.population_count_p, ew.clz_p))
neg, exp, log, log1p, expm1, sin, cos, tan, tanh, logistic, sqrt, rsqrt, abs, sign, floor, ceil, is_finite = map(
    _op, (ew.neg_p, ew.exp_p, ew.log_p, ew.log1p_p, ew.expm1_p, ew.sin_p, ew.cos_p, ew.tan_p, ew.tanh_p,
          ew.logistic_p, ew.sqrt_p, ew.rsqrt_p, ew.abs_p, ew.sign_p, ew.floor_p, ew.ceil_p, ew.is_finite_p))
erf, erfc, erf_inv, lgamma, digamma, bessel_i0e, bessel_i1e = map(_op, (sp.erf_p, sp.erfc_p, sp.erf_inv_p, sp.lgamma_p,
                                                                   sp.digamma_p, sp.bessel_i0e_p, sp.bessel_i1e_p))
asin, acos, atan, asinh, acosh, atanh, sinh, cosh, cbrt, exp2, atan2 = map(_op, (
    ew.asin_p, ew.acos_p, ew.atan_p, ew.asinh_p, ew.acosh_p, ew.atanh_p, ew.sinh_p, ew.cosh_p, ew.cbrt_p, ew.exp2_p,
    ew.atan2_p))
igamma, igammac, igamma_grad_a, zeta, polygamma, betainc = map(_op, (sp.igamma_p, sp.igammac_p, sp.igamma_grad_a_p,
                                                                     sp.zeta_p, sp.polygamma_p,
                                                                     sp.regularized_incomplete_beta_p))


def pow(x, y):
    """x ** y; an integer y with a float or complex x (JAX allows it) is converted to x's dtype first."""
    x, y = _typed(x, y)
    if is_inexact(aval(x).dtype) and aval(y).dtype.kind in "iu":
        y = convert_element_type(y, aval(x).dtype)
    return bind(ew.pow_p, x, y)


def round(x, rounding_method=0):
    """x rounded to an integral value: halves away from zero (rounding_method=0) or to even (1)."""
    method = index_arg(rounding_method, "round: rounding_method")
    if method not in (0, 1):
        raise ValueError(f"round: rounding_method must be 0 (away from zero) or 1 (to even), got {rounding_method!r}")
    return bind(ew.round_p, asarray(x), rounding_method=method)


def integer_pow(x, y):
    """x ** y for a Python int y (negative too), by repeated multiplication."""
    return bind(ew.integer_pow_p, asarray(x), y=index_arg(y, "integer_pow: y"))


def select_n(which, *cases):
    """cases[which] elementwise: which is boolean (two cases) or an integer array; Python scalar cases take
    the dtype of the array cases (not of the predicate)."""
    return bind(ew.select_n_p, asarray(which), *_typed(*cases))


def select(pred, on_true, on_false):
    """on_true where the boolean pred is true, else on_false (elementwise, one shape)."""
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):
    """x limited to [min, max] (note the argument order, as in jax.lax.clamp)."""
    x = asarray(x)
    lo, hi = _typed(x, min, max)[1:]
    return bind(ew.clamp_p, lo, x, hi)


def convert_element_type(operand, new_dtype):
    """operand cast to new_dtype, as NumPy's astype (floats to ints truncate toward zero; complex to real keeps
    the real part, with NumPy's ComplexWarning, as JAX)."""
    operand, new_dtype = asarray(operand), canonical_dtype(new_dtype)
    if aval(operand).dtype.kind == "c" and new_dtype.kind not in "cb":
        warnings.warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning,
                      stacklevel=2)
    return bind(ew.convert_element_type_p, operand, new_dtype=new_dtype, weak_type=False)


real, imag, complex = map(_op, (cp.real_p, cp.imag_p, cp.complex_p))


def conj(x):
    """The complex conjugate; a float x is made complex first (its conjugate is itself), as jax.lax.conj."""
    x = asarray(x)
    if is_float(aval(x).dtype):
        x = convert_element_type(x, complex_dtype(aval(x).dtype))
    return bind(cp.conj_p, x)


def bitcast_convert_type(operand, new_dtype):
    """operand's bits read as new_dtype: a trailing axis appears for a narrower dtype (the bytes of each element,
    lowest first) and disappears for a wider one, as in JAX."""
    return bind(bc.bitcast_convert_type_p, asarray(operand), new_dtype=canonical_dtype(new_dtype))


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """operand broadcast to shape, its axis i becoming axis broadcast_dimensions[i] of the result."""
    return bind(sh.broadcast_in_dim_p, asarray(operand), shape=_shape(shape, "broadcast_in_dim: shape"),
                broadcast_dimensions=_ints(broadcast_dimensions, "broadcast_in_dim: broadcast_dimensions"))


def reshape(operand, new_sizes):
    """operand's elements, in row-major order, in the shape new_sizes."""
    return bind(sh.reshape_p, asarray(operand), new_sizes=_shape(new_sizes, "reshape: new_sizes"))


def transpose(operand, permutation):
    """operand with its axes permuted: axis i of the result is axis permutation[i] of operand."""
    return bind(sh.transpose_p, asarray(operand), permutation=_ints(permutation, "transpose: permutation"))


def squeeze(array, dimensions):
    """array without the size-1 axes in dimensions (negative ones count from the end)."""
    array = asarray(array)
    dimensions = normalize_axes(_ints(dimensions, "squeeze: dimensions"), aval(array).ndim, "squeeze")
    return bind(sh.squeeze_p, array, dimensions=dimensions)


def expand_dims(array, dimensions):
    """array with size-1 axes inserted at the positions dimensions (of the result; negative ones count from
    its end)."""
    array, dimensions = asarray(array), _ints(dimensions, "expand_dims: dimensions")
    dimensions = normalize_axes(dimensions, aval(array).ndim + len(dimensions), "expand_dims")
    return bind(sh.expand_dims_p, array, dimensions=dimensions)


def rev(operand, dimensions):
    """operand reversed along the axes in dimensions."""
    return bind(sh.rev_p, asarray(operand), dimensions=_ints(dimensions, "rev: dimensions"))


def slice(operand, start_indices, limit_indices, strides=None):
    """operand[start:limit:stride] along every axis, with static bounds."""
    return bind(sh.slice_p, asarray(operand), start_indices=_ints(start_indices, "slice: start_indices"),
                limit_indices=_ints(limit_indices, "slice: limit_indices"),
                strides=None if strides is None else _ints(strides, "slice: strides"))


def pad(operand, padding_value, padding_config):
    """operand padded with padding_value: padding_config holds (low, high, interior) per axis (negative
    low or high removes elements)."""
    operand, padding_value = _typed(operand, padding_value)
    config = tuple(_ints(c, "pad: padding_config") for c in padding_config)
    if any(len(c) != 3 for c in config):
        raise TypeError(f"pad: padding_config needs a (low, high, interior) triple per axis, got {padding_config}")
    return bind(sh.pad_p, operand, padding_value, padding_config=config)


def concatenate(operands, dimension):
    """The operands joined along axis dimension."""
    return bind(sh.concatenate_p, *[asarray(x) for x in operands],
                dimension=index_arg(dimension, "concatenate: dimension"))


def iota(dtype, size):
    """[0, 1, ..., size - 1] of dtype."""
    return bind(sh.iota_p, dtype=canonical_dtype(dtype), shape=_shape(index_arg(size, "iota: size"), "iota: size"),
                dimension=0)


def broadcasted_iota(dtype, shape, dimension):
    """An array of shape whose elements are their index along axis dimension."""
    return bind(sh.iota_p, dtype=canonical_dtype(dtype), shape=_shape(shape, "broadcasted_iota: shape"),
                dimension=index_arg(dimension, "broadcasted_iota: dimension"))


def _reduction(prim):
    def fn(operand, axes):
        return bind(prim, asarray(operand), axes=_ints(axes, f"{prim.name}: axes"))
    fn.__name__ = prim.name
    fn.__doc__ = f"The `{prim.name}` primitive, as jax.lax.{prim.name}: operand reduced over the axes `axes`."
    return fn


reduce_sum, reduce_max, reduce_min, reduce_prod = map(_reduction, (rd.reduce_sum_p, rd.reduce_max_p,
                                                                    rd.reduce_min_p, rd.reduce_prod_p))


def argmax(operand, axis, index_dtype):
    """The index (of index_dtype) of the first maximum along axis."""
    return bind(rd.argmax_p, asarray(operand), axes=(index_arg(axis, "argmax: axis"),),
                index_dtype=canonical_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    """The index (of index_dtype) of the first minimum along axis."""
    return bind(rd.argmin_p, asarray(operand), axes=(index_arg(axis, "argmin: axis"),),
                index_dtype=canonical_dtype(index_dtype))


def cumsum(operand, axis=0, reverse=False):
    """The running sum along axis (from the end with reverse=True)."""
    return bind(rd.cumsum_p, asarray(operand), axis=index_arg(axis, "cumsum: axis"), reverse=bool(reverse))


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """The general tensor contraction: dimension_numbers = ((lhs contracting axes, rhs contracting axes),
    (lhs batch axes, rhs batch axes)); the result has the batch axes, then lhs's free axes, then rhs's.
    precision is checked and changes nothing on the CPU; preferred_element_type converts the operands first
    (the products then accumulate in it), as tnp.dot."""
    check_precision("dot_general", precision)
    lhs, rhs = asarray(lhs), asarray(rhs)
    if preferred_element_type is not None:
        lhs, rhs = (convert_element_type(x, preferred_element_type) for x in (lhs, rhs))
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (_ints(d, "dot_general: dimension_numbers") for d in (lc, rc, lb, rb))
    return dot_prims.dot_general(lhs, rhs, ((lc, rc), (lb, rb)))


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """The last axis of lhs contracted with the first of rhs (vector-vector, matrix-vector, matrix-matrix)."""
    return dot_general(lhs, rhs, (((aval(lhs).ndim - 1,), (0,)), ((), ())), precision, preferred_element_type)


def dynamic_slice(operand, start_indices, slice_sizes):
    """The slice of static size slice_sizes at traced start indices (a negative start counts from the end once,
    then starts are clamped so the slice stays inside, as in JAX)."""
    return bind(ix.dynamic_slice_p, asarray(operand), *[np.asarray(i) if isinstance(i, int) else i
                                                        for i in start_indices],
                slice_sizes=_shape(slice_sizes, "dynamic_slice: slice_sizes"))


def dynamic_update_slice(operand, update, start_indices):
    """operand with update written at traced start indices (a negative start counts from the end once, then
    starts are clamped so the update stays inside, as in JAX)."""
    return bind(ix.dynamic_update_slice_p, asarray(operand), asarray(update),
                *[np.asarray(i) if isinstance(i, int) else i for i in start_indices])


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """operand[start:limit:stride] along one axis (None: the axis' ends; negative bounds count from its end)."""
    shape = aval(asarray(operand)).shape
    axis = normalize_axis(axis, len(shape), "slice_in_dim")
    size = shape[axis]
    start, limit = (0 if start_index is None else start_index), (size if limit_index is None else limit_index)
    start, limit = (b + size if b < 0 else b for b in (start, limit))
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """operand's entry index along axis (a static index; negative counts from the end), as a size-1 axis with
    keepdims, else without it."""
    shape = aval(asarray(operand)).shape
    axis = normalize_axis(axis, len(shape), "index_in_dim")
    wrapped = index + shape[axis] if index < 0 else index
    if not 0 <= wrapped < shape[axis]:
        raise IndexError(f"index_in_dim: index {index} is out of bounds for axis {axis} with size {shape[axis]}")
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _starts_at(operand, start_index, axis, what):
    """Start indices that are 0 but start_index (a traced or static index) on axis."""
    ndim = aval(asarray(operand)).ndim
    axis = normalize_axis(axis, ndim, what)
    starts = [0] * ndim
    starts[axis] = start_index
    return starts, axis


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    """The slice of static size slice_size along axis at a traced start (clamped as dynamic_slice's)."""
    starts, axis = _starts_at(operand, start_index, axis, "dynamic_slice_in_dim")
    sizes = list(aval(asarray(operand)).shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    """operand's entry at a traced index along axis (size-1 axis kept with keepdims)."""
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else squeeze(out, (normalize_axis(axis, aval(out).ndim, "dynamic_index_in_dim"),))


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    """operand with update written along axis from a traced start (clamped as dynamic_update_slice's)."""
    starts, _ = _starts_at(operand, start_index, axis, "dynamic_update_slice_in_dim")
    return dynamic_update_slice(operand, update, starts)


def dynamic_update_index_in_dim(operand, update, index, axis):
    """operand with update (with or without the size-1 axis) written at a traced index along axis."""
    ndim = aval(asarray(operand)).ndim
    axis = normalize_axis(axis, ndim, "dynamic_update_index_in_dim")
    if aval(asarray(update)).ndim == ndim - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis)


def fft(x, fft_type, fft_lengths):
    """The FFT over the trailing len(fft_lengths) axes; fft_type an FftType or 'fft', 'ifft', 'rfft', 'irfft'
    (x is converted to the real or complex dtype it takes)."""
    return _fft.transform(x, fft_type, fft_lengths)


__all__ = ["FftType", "Precision", "abs", "add", "argmax", "argmin", "bitcast_convert_type", "bitwise_and",
           "bitwise_not", "bitwise_or", "bitwise_xor", "broadcast_in_dim", "broadcasted_iota", "ceil", "clamp",
           "clz", "complex", "concatenate", "cond", "conj", "convert_element_type", "cos", "cumsum", "div", "dot",
           "dot_general", "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
           "dynamic_update_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim", "eq", "exp",
           "expand_dims", "expm1", "fft", "floor", "fori_loop", "ge", "gt", "imag", "index_in_dim", "integer_pow",
           "iota", "is_finite", "le", "log", "log1p", "logistic", "lt", "max", "min", "mul", "ne", "neg", "pad",
           "population_count", "pow", "real", "reduce_max", "reduce_min", "reduce_prod", "reduce_sum", "rem",
           "reshape", "rev", "round", "rsqrt", "scan", "select", "select_n", "shift_left", "shift_right_arithmetic",
           "shift_right_logical", "sign", "sin", "slice", "slice_in_dim", "sqrt", "squeeze", "stop_gradient", "sub",
           "switch", "tan", "tanh", "transpose", "while_loop"]
__all__ += ["ConvDimensionNumbers", "associative_scan", "avg_pool", "conv", "conv_dimension_numbers",
            "conv_general_dilated", "conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple",
            "conv_transpose", "conv_transpose_shape_tuple", "conv_with_general_padding", "cumlogsumexp", "cummax",
            "cummin", "cumprod", "max_pool", "padtype_to_pads", "reduce_window", "reduce_window_max",
            "reduce_window_min", "reduce_window_shape_tuple", "reduce_window_sum", "sort", "sort_key_val", "top_k"]
__all__ += ["GatherDimensionNumbers", "GatherScatterMode", "ScatterDimensionNumbers", "gather", "scatter",
            "scatter_add", "scatter_apply", "scatter_max", "scatter_min", "scatter_mul", "scatter_sub"]
__all__ += [n for n in conv_local.__all__ + extras.__all__ + linear_solve.__all__ if n != "dtype"]   # (dtype: last)
__all__ += ["all_gather", "all_to_all", "axis_index", "axis_size", "pbroadcast", "pcast", "pmax", "pmean", "pmin", "ppermute",
            "pshuffle", "psum", "psum_scatter", "pswapaxes"]
__all__ += ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "batch_matmul", "broadcast",
            "broadcast_to_rank", "cbrt", "collapse", "cosh", "exp2", "full", "full_like", "nextafter", "reciprocal", "reduce",
            "reduce_and", "reduce_or", "reduce_xor", "sinh", "split", "square"]
__all__ += ["RaggedDotDimensionNumbers", "RandomAlgorithm", "ragged_dot_general", "rng_bit_generator"]
__all__ += ["bessel_i0e", "bessel_i1e", "betainc", "digamma", "erf", "erf_inv", "erfc", "igamma", "igamma_grad_a",
            "igammac", "lgamma", "polygamma", "zeta"]

# last: the lines above call the builtin map, and name parameters dtype
from .control_flow import map
from .extras import dtype

__all__ += ["dtype", "map"]
