"""tracejit.lax: the primitives by name, with jax.lax signatures (operands must already agree in dtype and
shape; Python scalars take the dtype of the array they meet), and control flow."""
import numpy as np

from ..core.avals import canonical_dtype, is_python_scalar
from ..core.trace import bind
from ..nn import stop_gradient
from ..numpy._base import asarray, aval
from ..numpy.linalg_ops import Precision, check_precision
from ..primitives import elementwise as ew
from ..primitives import indexing as ix
from ..primitives import linalg
from ..primitives import reductions as rd
from ..primitives import shapes as sh
from .control_flow import cond, fori_loop, scan, switch, while_loop


def _typed(*args):
    """Python scalars become values of the dtype of the first array among args (weak typing)."""
    like = next((aval(a).dtype for a in args if not is_python_scalar(a)), None)
    return [np.asarray(a, like)[()] if like is not None and is_python_scalar(a) else asarray(a)
            for a in args]


def _op(prim):
    def fn(*args, **params):
        return bind(prim, *_typed(*args), **params)
    fn.__name__ = prim.name
    return fn


add, sub, mul, div, rem, max, min = map(_op, (ew.add_p, ew.sub_p, ew.mul_p, ew.div_p, ew.rem_p, ew.max_p, ew.min_p))
eq, ne, lt, le, gt, ge = map(_op, (ew.eq_p, ew.ne_p, ew.lt_p, ew.le_p, ew.gt_p, ew.ge_p))
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = map(_op, (ew.and_p, ew.or_p, ew.xor_p, ew.not_p))
neg, exp, log, log1p, expm1, sin, cos, tan, tanh, logistic, sqrt, rsqrt, abs, sign, floor, ceil, is_finite = map(
    _op, (ew.neg_p, ew.exp_p, ew.log_p, ew.log1p_p, ew.expm1_p, ew.sin_p, ew.cos_p, ew.tan_p, ew.tanh_p,
          ew.logistic_p, ew.sqrt_p, ew.rsqrt_p, ew.abs_p, ew.sign_p, ew.floor_p, ew.ceil_p, ew.is_finite_p))


def pow(x, y):
    """x ** y; an integer y with a float x (JAX allows it) is converted to x's dtype first."""
    x, y = _typed(x, y)
    if aval(x).dtype.kind == "f" and aval(y).dtype.kind in "iu":
        y = convert_element_type(y, aval(x).dtype)
    return bind(ew.pow_p, x, y)


def round(x, rounding_method=0):
    return bind(ew.round_p, asarray(x), rounding_method=int(rounding_method))


def integer_pow(x, y):
    return bind(ew.integer_pow_p, asarray(x), y=int(y))


def select_n(which, *cases):
    """Python scalar cases take the dtype of the array cases (not of the predicate)."""
    return bind(ew.select_n_p, asarray(which), *_typed(*cases))


def select(pred, on_true, on_false):
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):
    x = asarray(x)
    lo, hi = _typed(x, min, max)[1:]
    return bind(ew.clamp_p, lo, x, hi)


def convert_element_type(operand, new_dtype):
    return bind(ew.convert_element_type_p, asarray(operand), new_dtype=canonical_dtype(new_dtype), weak_type=False)


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    return bind(sh.broadcast_in_dim_p, asarray(operand), shape=tuple(shape),
                broadcast_dimensions=tuple(broadcast_dimensions))


def reshape(operand, new_sizes):
    return bind(sh.reshape_p, asarray(operand), new_sizes=tuple(new_sizes))


def transpose(operand, permutation):
    return bind(sh.transpose_p, asarray(operand), permutation=tuple(permutation))


def squeeze(array, dimensions):
    return bind(sh.squeeze_p, asarray(array), dimensions=tuple(dimensions))


def expand_dims(array, dimensions):
    return bind(sh.expand_dims_p, asarray(array), dimensions=tuple(dimensions))


def rev(operand, dimensions):
    return bind(sh.rev_p, asarray(operand), dimensions=tuple(dimensions))


def slice(operand, start_indices, limit_indices, strides=None):
    return bind(sh.slice_p, asarray(operand), start_indices=tuple(start_indices),
                limit_indices=tuple(limit_indices), strides=None if strides is None else tuple(strides))


def pad(operand, padding_value, padding_config):
    operand, padding_value = _typed(operand, padding_value)
    return bind(sh.pad_p, operand, padding_value, padding_config=tuple(tuple(c) for c in padding_config))


def concatenate(operands, dimension):
    return bind(sh.concatenate_p, *[asarray(x) for x in operands], dimension=int(dimension))


def iota(dtype, size):
    return bind(sh.iota_p, dtype=canonical_dtype(dtype), shape=(int(size),), dimension=0)


def broadcasted_iota(dtype, shape, dimension):
    return bind(sh.iota_p, dtype=canonical_dtype(dtype), shape=tuple(shape), dimension=int(dimension))


def _reduction(prim):
    def fn(operand, axes):
        return bind(prim, asarray(operand), axes=tuple(axes))
    fn.__name__ = prim.name
    return fn


reduce_sum, reduce_max, reduce_min, reduce_prod = map(_reduction, (rd.reduce_sum_p, rd.reduce_max_p,
                                                                    rd.reduce_min_p, rd.reduce_prod_p))


def argmax(operand, axis, index_dtype):
    return bind(rd.argmax_p, asarray(operand), axes=(int(axis),), index_dtype=canonical_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    return bind(rd.argmin_p, asarray(operand), axes=(int(axis),), index_dtype=canonical_dtype(index_dtype))


def cumsum(operand, axis=0, reverse=False):
    return bind(rd.cumsum_p, asarray(operand), axis=int(axis), reverse=bool(reverse))


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """precision is checked and changes nothing on the CPU; preferred_element_type converts the operands first
    (the products then accumulate in it), as tnp.dot."""
    check_precision("dot_general", precision)
    lhs, rhs = asarray(lhs), asarray(rhs)
    if preferred_element_type is not None:
        lhs, rhs = (convert_element_type(x, preferred_element_type) for x in (lhs, rhs))
    (lc, rc), (lb, rb) = dimension_numbers
    return bind(linalg.dot_general_p, lhs, rhs, dimension_numbers=((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))))


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """The last axis of lhs contracted with the first of rhs (vector-vector, matrix-vector, matrix-matrix)."""
    return dot_general(lhs, rhs, (((aval(lhs).ndim - 1,), (0,)), ((), ())), precision, preferred_element_type)


def dynamic_slice(operand, start_indices, slice_sizes):
    return bind(ix.dynamic_slice_p, asarray(operand), *[np.asarray(i) if isinstance(i, int) else i
                                                        for i in start_indices], slice_sizes=tuple(slice_sizes))


def dynamic_update_slice(operand, update, start_indices):
    return bind(ix.dynamic_update_slice_p, asarray(operand), asarray(update),
                *[np.asarray(i) if isinstance(i, int) else i for i in start_indices])


__all__ = [n for n, v in globals().items() if callable(v) and getattr(v, "__module__", "").startswith(__name__)
           and not n.startswith("_")] + ["Precision", "stop_gradient"]     # not the helpers imported above
