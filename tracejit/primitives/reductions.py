"""Reductions over axes (sum, max, min, prod, argmax, argmin) and cumsum. Results keep the operand dtype."""
import math

import numpy as np

from ..backend.rules import Kernel, Reduce
from ..core.avals import ShapedArray, bool_
from ..core.errors import ShapeError
from ..core.trace import Primitive, bind
from .base import aval, batched_axis, linear_jvp, partials_jvp, scalar, zero_jvp
from .elementwise import convert_element_type_p, div_p, eq_p, mul_p
from .shapes import broadcast_in_dim_p, pad_p, reshape_p, rev_p, transpose_p


def _p(prim, *args, **params):
    return bind(prim, *args, **params)


def _reduce_shape(name, kinds):
    def rule(x, axes):
        if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
            raise ShapeError(f"{name}: axes {axes} out of range for shape {x.shape}")
        if x.dtype.kind not in kinds:
            raise TypeError(f"{name}: does not accept {x.dtype} operands")
        return ShapedArray([d for i, d in enumerate(x.shape) if i not in axes], x.dtype, x.weak_type)
    return rule


def _identity(dtype, largest):
    if dtype == bool_:
        return largest
    if dtype.kind == "f":
        return np.inf if largest else -np.inf
    info = np.iinfo(dtype)
    return info.max if largest else info.min


def _expand(y, x_aval, axes):
    """Broadcast a reduced value back to the operand's shape."""
    kept = tuple(i for i in range(x_aval.ndim) if i not in axes)
    return _p(broadcast_in_dim_p, y, shape=x_aval.shape, broadcast_dimensions=kept)


def _sum(x, axes):
    return _p(reduce_sum_p, x, axes=axes)


def _reduce_batch(prim):
    """Reduce the same axes of every example; the batch axis moves left past the reduced axes before it."""
    def batch(args, dims, axes, **params):
        (x,), (d,) = args, dims
        return (_p(prim, x, axes=tuple(batched_axis(a, d) for a in axes), **params),
                d - sum(a < d for a in axes))
    return batch


reduce_sum_p = Primitive("reduce_sum", _reduce_shape("reduce_sum", "fiu"),
                         lambda x, axes: np.sum(x, axis=axes, dtype=np.asarray(x).dtype), linear=True)
reduce_sum_p.set(jvp=linear_jvp(reduce_sum_p),
                 transpose=lambda ct, x, axes: [_expand(ct, x.aval, axes)])

reduce_max_p = Primitive("reduce_max", _reduce_shape("reduce_max", "fiub"),
                         lambda x, axes: np.max(x, axis=axes, initial=_identity(np.asarray(x).dtype, False)))
reduce_min_p = Primitive("reduce_min", _reduce_shape("reduce_min", "fiub"),
                         lambda x, axes: np.min(x, axis=axes, initial=_identity(np.asarray(x).dtype, True)))
reduce_prod_p = Primitive("reduce_prod", _reduce_shape("reduce_prod", "fiu"),
                          lambda x, axes: np.prod(x, axis=axes, dtype=np.asarray(x).dtype))


def _chosen_location_jvp(t, x, out, axes):
    """Tangent of max/min: the mean of the tangents at the positions that attain the extremum."""
    hit = _p(convert_element_type_p, _p(eq_p, x, _expand(out, aval(x), axes)), new_dtype=aval(x).dtype,
             weak_type=False)
    return _p(div_p, _sum(_p(mul_p, t, hit), axes), _sum(hit, axes))


def _shift_in_ones(v, by):
    """v moved `by` places along its last axis, ones filling in: [1, v0, v1, ...] for by=1."""
    config = ((0, 0, 0),) * (aval(v).ndim - 1) + ((by, -by, 0),)
    return _p(pad_p, v, scalar(1, v), padding_config=config)


def _exclusive_products(v):
    """Products of the elements before each position along the last axis, by log-depth doubling."""
    v = _shift_in_ones(v, 1)
    step = 1
    while step < aval(v).shape[-1]:
        v = _p(mul_p, v, _shift_in_ones(v, step))
        step *= 2
    return v


def _prod_partial(x, axes):
    """d prod / dx_i = the product of the other elements: exclusive prefix times exclusive suffix products.
    Only multiplications, so it is exact at zeros and differentiates again."""
    shape = aval(x).shape
    kept = [i for i in range(len(shape)) if i not in axes]
    moved = _p(transpose_p, x, permutation=tuple(kept + list(axes)))
    flat = _p(reshape_p, moved, new_sizes=tuple(shape[i] for i in kept) + (math.prod(shape[i] for i in axes),))
    last = (aval(flat).ndim - 1,)
    suffix = _p(rev_p, _exclusive_products(_p(rev_p, flat, dimensions=last)), dimensions=last)
    others = _p(reshape_p, _p(mul_p, _exclusive_products(flat), suffix), new_sizes=aval(moved).shape)
    return _p(transpose_p, others, permutation=tuple(np.argsort(kept + list(axes)).tolist()))


reduce_max_p.set(jvp=partials_jvp(reduce_max_p, lambda t, x, out, axes: _chosen_location_jvp(t, x, out, axes)))
reduce_min_p.set(jvp=partials_jvp(reduce_min_p, lambda t, x, out, axes: _chosen_location_jvp(t, x, out, axes)))
reduce_prod_p.set(jvp=partials_jvp(reduce_prod_p, lambda t, x, out, axes: _sum(
    _p(mul_p, t, _prod_partial(x, axes)), axes)))
for _prim in (reduce_sum_p, reduce_max_p, reduce_min_p, reduce_prod_p):
    _prim.set(simplify=lambda eqn, producer: None if eqn.params["axes"] else eqn.inputs[0])  # no axes: no-op


def _arg_shape(name):
    def rule(x, axes, index_dtype):
        if len(axes) != 1 or not 0 <= axes[0] < x.ndim:
            raise ShapeError(f"{name}: needs one axis in range for shape {x.shape}, got {axes}")
        if x.shape[axes[0]] == 0:
            raise ShapeError(f"{name}: axis {axes[0]} of shape {x.shape} is empty")
        return ShapedArray([d for i, d in enumerate(x.shape) if i != axes[0]], index_dtype)
    return rule


argmax_p = Primitive("argmax", _arg_shape("argmax"),
                     lambda x, axes, index_dtype: np.argmax(x, axis=axes[0]).astype(index_dtype))
argmin_p = Primitive("argmin", _arg_shape("argmin"),
                     lambda x, axes, index_dtype: np.argmin(x, axis=axes[0]).astype(index_dtype))
argmax_p.set(jvp=zero_jvp(argmax_p))
argmin_p.set(jvp=zero_jvp(argmin_p))
for _prim in (reduce_sum_p, reduce_max_p, reduce_min_p, reduce_prod_p, argmax_p, argmin_p):
    _prim.set(batch=_reduce_batch(_prim))


def _cumsum_shape(x, axis, reverse=False):
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"cumsum: axis {axis} out of range for shape {x.shape}")
    if x.dtype.kind not in "fiu":
        raise TypeError(f"cumsum: does not accept {x.dtype} operands")
    return x


def _cumsum_impl(x, axis, reverse=False):
    x = np.asarray(x)
    if reverse:
        return np.flip(np.cumsum(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
    return np.cumsum(x, axis=axis, dtype=x.dtype)


cumsum_p = Primitive("cumsum", _cumsum_shape, _cumsum_impl, linear=True)
cumsum_p.set(jvp=linear_jvp(cumsum_p),
             transpose=lambda ct, x, axis, reverse=False: [_p(cumsum_p, ct, axis=axis, reverse=not reverse)],
             batch=lambda args, dims, axis, reverse=False: (
                 _p(cumsum_p, args[0], axis=batched_axis(axis, dims[0]), reverse=reverse), dims[0]))


# ------------------------------------------------------------------------------------------- lowering
# Loop accumulators (tracejit.backend.rules.Reduce); the operand is computed inside the reduction loop.
# reassoc lets LLVM vectorize float sums and products (the order differs from NumPy's pairwise sum).
# float32 sums accumulate in float64 (`wide`): the loop adds blocks in float32 with `combine` and the
# block totals into the wide accumulator with `update` (codegen.LoopBuilder._reduce); a float32 accumulator
# per vector lane lost 7e-4 relative on the mean of 1e7 values (NumPy's pairwise sum: 1e-8).

def _lower_reduce(identity, fop, iop=None):
    def wide(b):
        return np.dtype(np.float64) if fop == "fadd" and b.dtype() == np.float32 else b.dtype()

    def op(b, x, y, dtype=None):
        if fop in ("max", "min"):
            return b.maximum(x, y, dtype) if fop == "max" else b.minimum(x, y, dtype)
        return b.binop(f"{fop} reassoc", iop, x, y, dtype)

    return Reduce(lambda b, axes: [(b.const(identity(b.dtype()), wide(b)), wide(b))],
                  lambda b, accs, x, pos, axes: [op(b, accs[0], b.convert(x, b.dtype(), wide(b)), wide(b))],
                  lambda b, accs, axes: b.convert(accs[0], wide(b), b.dtype()),
                  lambda b, accs, others, axes: [op(b, accs[0], others[0])])


def _lower_arg(better, largest):
    """First position of the extremum; a NaN wins over numbers (NumPy's argmax/argmin)."""
    def update(b, accs, x, pos, axes, index_dtype):
        best, at = accs
        take = b.cmp(better, x, best)
        if b.kind() == "f":
            nan_first = b(f"and i1 {b(f'fcmp uno {b.ty()} {x}, {x}')}, {b(f'fcmp ord {b.ty()} {best}, {best}')}")
            take = b(f"or i1 {take}, {nan_first}")
        return [b.select(take, x, best), b.select(take, pos, at, np.int64)]

    return Reduce(lambda b, axes, index_dtype: [(b.const(_identity(b.dtype(), largest)), b.dtype()),
                                                ("0", np.dtype(np.int64))],
                  update, lambda b, accs, axes, index_dtype: b.convert(accs[1], np.int64, index_dtype))


reduce_sum_p.set(lower=_lower_reduce(lambda dtype: 0, "fadd", "add"))
reduce_prod_p.set(lower=_lower_reduce(lambda dtype: 1, "fmul", "mul"))
reduce_max_p.set(lower=_lower_reduce(lambda dtype: _identity(dtype, False), "max"))
reduce_min_p.set(lower=_lower_reduce(lambda dtype: _identity(dtype, True), "min"))
argmax_p.set(lower=_lower_arg("gt", False))
argmin_p.set(lower=_lower_arg("lt", True))


def _lower_cumsum(k, outs, ins, axis, reverse=False):
    """A running sum along `axis`, in NumPy's sequential order."""
    (out,), (x,) = outs, ins
    b, shape = k.b, x.aval.shape
    n, ty = shape[axis], k.b.ty()
    acc = k.alloca(ty)
    with k.loop_nest([d for a, d in enumerate(shape) if a != axis]) as others:
        k.store_var(acc, ty, b.const(0))
        with k.loop(0, n) as i:
            idx = others[:axis] + [b.iop("sub", n - 1, i) if reverse else i] + others[axis:]
            total = b.binop("fadd", "add", k.load_var(acc, ty), k.load(x, idx))
            k.store_var(acc, ty, total)
            k.store(out, idx, total)


cumsum_p.set(lower=Kernel(_lower_cumsum))
