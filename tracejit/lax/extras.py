"""jax.lax's smaller helpers, written on tnp and the lax primitives: reduce_precision (XLA's rounding to a
narrower float format), approx_max_k / approx_min_k (exact, as JAX's CPU results), mulhi, index_take, tile,
stack, unstack, broadcast_shapes, broadcast_like, empty, dtype, and the compiler hints that are identities on one
CPU device: optimization_barrier, with_sharding_constraint, composite and platform_dependent (the 'cpu' branch)."""
import enum
import functools

import numpy as np

from .. import numpy as tnp
from ..core.avals import broadcast_shapes as _broadcast_shapes
from ..core.avals import canonical_dtype, index_arg, is_python_scalar, normalize_axis
from ..core.trace import bind
from ..custom_derivatives import custom_vjp
from ..numpy._base import asarray, aval
from ..numpy.indexing import take_clamped
from ..primitives import bitcast as bc
from ..primitives import special as sp
from ..tree_util import tree_map
from .composites import typed
from .cumulative import top_k
from .gather_scatter import GatherDimensionNumbers, gather

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _bitcast(x, dtype):
    return bind(bc.bitcast_convert_type_p, asarray(x), new_dtype=np.dtype(dtype))


def _reduce_bits(x, exponent_bits, mantissa_bits):
    """XLA's ReducePrecision on the bits of x: round the mantissa to nearest even, then send exponents above the
    narrow format's range to signed infinity and those at or below its smallest normal's to signed zero; NaN is
    kept (rounding could otherwise turn a NaN with low payload bits into infinity)."""
    dtype = aval(x).dtype
    info = np.finfo(dtype)
    nmant, nexp, u = info.nmant, info.nexp, _UINT[dtype.itemsize]
    const = functools.partial(np.array, dtype=u)
    bits = _bitcast(x, u)
    if mantissa_bits < nmant:
        last_bit = 1 << (nmant - mantissa_bits)
        bias = tnp.right_shift(tnp.bitwise_and(bits, const(last_bit)), const(nmant - mantissa_bits)) + const(
            (last_bit >> 1) - 1)
        bits = tnp.bitwise_and(bits + bias, const(~(last_bit - 1) & (2 ** (8 * dtype.itemsize) - 1)))
    if exponent_bits < nexp:
        exp_mask = ((1 << nexp) - 1) << nmant
        exponent_bias, reduced_bias = (1 << (nexp - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        exponent = tnp.bitwise_and(bits, const(exp_mask))
        signed_zero = tnp.bitwise_and(bits, const(1 << (8 * dtype.itemsize - 1)))
        bits = tnp.where(exponent > const((exponent_bias + reduced_bias) << nmant),
                         tnp.bitwise_or(signed_zero, const(exp_mask)),
                         tnp.where(exponent <= const((exponent_bias - reduced_bias) << nmant), signed_zero, bits))
    return tnp.where(tnp.isnan(x), x, _bitcast(bits, dtype))


@functools.partial(custom_vjp, nondiff_argnums=(1, 2))
def _reduce_precision(x, exponent_bits, mantissa_bits):
    return _reduce_bits(x, exponent_bits, mantissa_bits)


def reduce_precision_bwd(exponent_bits, mantissa_bits, _, cotangent):
    """JAX's rule: reduce_precision is treated as linear, its transpose rounds the cotangent the same way."""
    return (_reduce_bits(cotangent, exponent_bits, mantissa_bits),)


_reduce_precision.defvjp(lambda x, e, m: (_reduce_bits(x, e, m), None), reduce_precision_bwd)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """operand rounded to a float format of exponent_bits and mantissa_bits (kept in operand's dtype), as
    jax.lax.reduce_precision with XLA's semantics: mantissa to nearest even, overflow to infinity, results below
    the format's smallest normal number flushed to signed zero, NaN kept. (5, 10) is float16's format, (8, 7)
    bfloat16's. Its gradient rounds the cotangent, as JAX's; forward mode (jvp) raises a TypeError: JAX treats it
    as a linear primitive, which tracejit cannot express without one (a custom_jvp rule could not be transposed)."""
    exponent_bits = index_arg(exponent_bits, "reduce_precision: exponent_bits")
    mantissa_bits = index_arg(mantissa_bits, "reduce_precision: mantissa_bits")
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative; got {mantissa_bits}")
    operand = asarray(operand)
    if aval(operand).dtype.kind != "f":
        raise TypeError(f"reduce_precision: operand must be a floating-point array, got {aval(operand).dtype}")
    return _reduce_precision(operand, exponent_bits, mantissa_bits)


def _approx_k(name, operand, k, reduction_dimension, recall_target, reduction_input_size_override,
              aggregate_to_topk, smallest):
    operand = asarray(operand)
    shape = aval(operand).shape
    axis = normalize_axis(reduction_dimension, len(shape), name)
    n = shape[axis]
    k = index_arg(k, f"{name}: k")
    if aval(operand).dtype.kind != "f":
        raise ValueError(f"{name}: operand must be a floating type, got {aval(operand).dtype}")
    if not 0 <= k <= n:
        raise ValueError(f"{name}: k must be between 0 and the reduction dimension's size {n}, got {k}")
    if not 0 < recall_target <= 1:
        raise ValueError(f"{name}: recall_target must be in (0, 1], got {recall_target}")
    if reduction_input_size_override >= 0 and reduction_input_size_override < n:
        raise ValueError(f"{name}: reduction_input_size_override ({reduction_input_size_override}) must not be "
                         f"smaller than the reduction dimension's size {n}")
    if not aggregate_to_topk:
        if n > (1024 if len(shape) == 1 else 128) and recall_target < 1:
            raise NotImplementedError(f"{name}: aggregate_to_topk=False with a reduction dimension over XLA's TPU "
                                      "tile (its partial-reduction size is XLA's TPU formula)")
        k = n                     # XLA's CPU result then is every element, sorted
    moved = tnp.moveaxis(operand, axis, -1)
    keys = (-moved if smallest else moved) + 0.0      # XLA's comparison sort: -0.0 equal to 0.0, every NaN the largest
    _, indices = top_k(tnp.where(tnp.isnan(keys), tnp.abs(keys), keys), k)     # (top_k: the total order)
    values = tnp.take_along_axis(moved, indices, axis=-1, mode="clip")
    return tnp.moveaxis(values, -1, axis), tnp.moveaxis(indices, -1, axis)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """(the k largest values along reduction_dimension, their int32 indices), as jax.lax.approx_max_k on a CPU,
    where XLA computes it exactly: top_k's order (equal values by position; NaN, which makes XLA's comparison
    sort inconsistent, counts as the largest here). aggregate_to_topk=False gives the whole sorted axis."""
    return _approx_k("approx_max_k", operand, k, reduction_dimension, recall_target, reduction_input_size_override,
                     aggregate_to_topk, False)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """(the k smallest values along reduction_dimension, their int32 indices), exactly, as approx_max_k."""
    return _approx_k("approx_min_k", operand, k, reduction_dimension, recall_target, reduction_input_size_override,
                     aggregate_to_topk, True)


def _high_u64(a, b):
    """The high 64 bits of the 128-bit product of uint64 a and b, from 32-bit halves (no partial sum overflows)."""
    low, s = np.uint64(0xFFFFFFFF), np.uint64(32)
    a_lo, a_hi, b_lo, b_hi = a & low, a >> s, b & low, b >> s
    hi_lo = a_hi * b_lo
    cross = ((a_lo * b_lo) >> s) + (hi_lo & low) + a_lo * b_hi
    return a_hi * b_hi + (hi_lo >> s) + (cross >> s)


def mulhi(x, y, /):
    """The high half of the double-width product of integers x and y (of one dtype), as jax.lax.mulhi. Widths up
    to 32 bits multiply in 64; 64-bit ones combine 32-bit halves, a signed result correcting the unsigned one by
    y where x < 0 and x where y < 0 (mod 2**64)."""
    x, y = typed(x, y)
    dtype = aval(x).dtype
    if dtype.kind not in "iu" or aval(y).dtype != dtype:
        raise TypeError(f"mulhi: x and y must be integer arrays of one dtype, got {dtype} and {aval(y).dtype}")
    bits = 8 * dtype.itemsize
    if bits < 64:
        wide = np.int64 if dtype.kind == "i" else np.uint64
        product = x.astype(wide) * y.astype(wide)
        return (product >> wide(bits)).astype(dtype)
    if dtype.kind == "u":
        return _high_u64(x, y)
    xu, yu = x.astype(np.uint64), y.astype(np.uint64)
    high = _high_u64(xu, yu) - tnp.where(x < 0, yu, np.uint64(0)) - tnp.where(y < 0, xu, np.uint64(0))
    return high.astype(dtype)


def index_take(src, idxs, axes):
    """src at the points idxs (one 1-D index array per axis in axes, negative ones wrapping modulo the axis'
    size), the other axes following the points' axis, as jax.lax.index_take: one gather, so axes must be sorted
    (JAX's gather rule)."""
    src = asarray(src)
    axes = tuple(index_arg(a, "index_take: axes") for a in axes)
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: one index array per axis needed, got {len(idxs)} for axes {axes}")
    if list(axes) != sorted(axes):
        raise TypeError(f"index_take: axes must be sorted (gather's collapsed_slice_dims); got {axes}")
    shape = aval(src).shape
    points = tnp.stack([tnp.asarray(i) % shape[a] for i, a in zip(idxs, axes)], axis=-1)
    sizes = tuple(1 if d in axes else n for d, n in enumerate(shape))
    dnums = GatherDimensionNumbers(offset_dims=tuple(range(1, len(shape) - len(axes) + 1)),
                                   collapsed_slice_dims=axes, start_index_map=axes)
    return gather(src, points, dimension_numbers=dnums, slice_sizes=sizes)


def tile(operand, reps):
    """operand repeated reps[i] times along each axis i, as jax.lax.tile (one rep per axis)."""
    operand = asarray(operand)
    reps = tuple(index_arg(r, "tile: reps") for r in reps)
    if len(reps) != aval(operand).ndim:
        raise TypeError(f"tile: reps must have one entry per axis of operand {aval(operand).shape}, got {reps}")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    return tnp.tile(operand, reps)


def stack(operands, axis=0):
    """The operands (one shape and dtype) joined along a new axis, as jax.lax.stack."""
    operands = [asarray(x) for x in operands]
    if not operands:
        raise ValueError("stack: needs at least one operand")
    kinds = {(aval(x).shape, aval(x).dtype) for x in operands}
    if len(kinds) > 1:
        raise TypeError(f"stack: operands must have one shape and dtype, got {sorted(map(str, kinds))}")
    axis = normalize_axis(axis, aval(operands[0]).ndim + 1, "stack")
    return tnp.stack(operands, axis=axis)


def unstack(x, axis=0):
    """The slices of x along axis, as a tuple, as jax.lax.unstack."""
    x = asarray(x)
    axis = normalize_axis(axis, aval(x).ndim, "unstack")
    return tuple(take_clamped(x, i, axis=axis) for i in range(aval(x).shape[axis]))


def broadcast_shapes(*shapes):
    """The NumPy broadcast of shapes (a tuple), as jax.lax.broadcast_shapes; incompatible ones raise ValueError."""
    if not shapes:
        raise ValueError("broadcast_shapes: needs at least one shape")
    return tuple(_broadcast_shapes(*(tuple(index_arg(d, "broadcast_shapes: shape") for d in s) for s in shapes)))


def broadcast_like(arr, like_arr):
    """arr broadcast (NumPy's rules) to like_arr's shape, as jax.lax.broadcast_like."""
    return tnp.broadcast_to(arr, aval(asarray(like_arr)).shape)


def empty(shape, dtype, *, out_sharding=None):
    """An array of shape and dtype whose values are unspecified, as jax.lax.empty: zeros here (JAX's CPU gives
    zeros too; there is no uninitialized buffer to hand out safely)."""
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    return tnp.zeros(tuple(index_arg(d, "empty: shape") for d in shape), canonical_dtype(dtype))


def dtype(x):
    """The dtype of a value, array, dtype or type, as jax.lax.dtype: Python scalars give the default
    (bool, int64, float64, complex128: tracejit's defaults, as JAX's with x64)."""
    if is_python_scalar(x):
        return np.dtype(type(x) if isinstance(x, bool) else {int: np.int64, float: np.float64,
                                                              complex: np.complex128}[type(x)])
    if hasattr(x, "dtype") and not isinstance(x, (type, np.dtype)):
        return np.dtype(aval(asarray(x)).dtype if not isinstance(x, np.ndarray) else x.dtype)
    return np.dtype(x)


class RoundingMethod(enum.IntEnum):
    """lax.round's rounding of halves, as jax.lax.RoundingMethod: away from zero (0) or to even (1)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def stage(x, /):
    """x as an array (of a trace, inside one), as jax.lax.stage."""
    return asarray(x)


def random_gamma_grad(a, x):
    """d x / d a for a Gamma(a, 1) sample x held at a fixed quantile, as jax.lax.random_gamma_grad: by implicit
    differentiation of P(a, x) = u, -(dP/da) / (dP/dx), with dP/dx = x^(a-1) e^-x / Gamma(a) (in logs)."""
    a, x = typed(a, x)
    if aval(a).dtype.kind != "f" or aval(a).dtype != aval(x).dtype:
        raise TypeError(f"random_gamma_grad: a and x must be floating arrays of one dtype, got {aval(a).dtype} "
                        f"and {aval(x).dtype}")
    a, x = tnp.broadcast_arrays(a, x)
    density = tnp.exp((a - 1) * tnp.log(x) - x - bind(sp.lgamma_p, a))
    return -bind(sp.igamma_grad_a_p, a, x) / density


def optimization_barrier(operand, /):
    """operand (a pytree) unchanged, as jax.lax.optimization_barrier: tracejit's passes do not move work across
    function boundaries in a way the barrier would prevent, so it is the identity."""
    return tree_map(asarray, operand)


def with_sharding_constraint(x, shardings):
    """x unchanged, as jax.lax.with_sharding_constraint on one device (shardings is ignored)."""
    return tree_map(asarray, x)


def composite(decomposition, name, version=0):
    """decomposition itself, as jax.lax.composite(decomposition, name, version): the name only labels the
    operation for XLA's backends, and tracejit always runs the decomposition (so it differentiates, where JAX's
    composite has no jvp rule)."""
    if not isinstance(name, str):
        raise TypeError(f"composite: name must be a string, got {name!r}")

    @functools.wraps(decomposition)
    def call(*args, **kwargs):
        return decomposition(*args, **kwargs)
    return call


def platform_dependent(*args, default=None, **per_platform):
    """per_platform['cpu'](*args), else default(*args), as jax.lax.platform_dependent on a CPU."""
    for pname, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{pname}' branch must be a callable.")
        if pname == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    if default is not None and not callable(default):
        raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise ValueError(f"lax.platform_dependent: no branch for the 'cpu' platform (branches for "
                         f"{sorted(per_platform)} and no default)")
    return branch(*args)


__all__ = [
    "RoundingMethod",
    "approx_max_k",
    "approx_min_k",
    "broadcast_like",
    "broadcast_shapes",
    "composite",
    "dtype",
    "empty",
    "index_take",
    "mulhi",
    "optimization_barrier",
    "platform_dependent",
    "random_gamma_grad",
    "reduce_precision",
    "stack",
    "stage",
    "tile",
    "unstack",
    "with_sharding_constraint",
]
