"""Vector and matrix norms and the condition number, as jax.numpy.linalg has them (every `ord` and `axis` NumPy
accepts). The spectral norms and cond take singular values and inverses from the primitives directly."""
import numpy as np

from ..core.avals import normalize_axis
from ..core.errors import ShapeError
from ..core.trace import bind
from ..primitives import linalg_factor as factor
from ..primitives import linalg_solve as solves
from ._base import aval, broadcast_to_shape, promote, promote_linalg
from .complex_numbers import conj, real
from .shape_ops import any as any_
from .shape_ops import expand_dims, eye, max, min, moveaxis, sum
from .ufuncs import abs, isnan, logical_and, logical_not, multiply, not_equal, power, sqrt, where_


def _sum_of_squares(x, axis, keepdims):
    return sqrt(sum(real(multiply(x, conj(x))), axis=axis, keepdims=keepdims))


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    (x,) = promote(x, to_float="float64")      # integers as NumPy's: in float64
    if ord is None or ord == 2:
        return _sum_of_squares(x, axis, keepdims)
    if isinstance(ord, str):
        raise ValueError(f"vector_norm: invalid order {ord!r} for a vector norm")     # noqa: TRY004 - as JAX
    if ord == np.inf:
        return max(abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return min(abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return sum(not_equal(x, 0), axis=axis, keepdims=keepdims, dtype=np.finfo(aval(x).dtype).dtype)
    if ord == 1:
        return sum(abs(x), axis=axis, keepdims=keepdims)
    return power(sum(power(abs(x), float(ord)), axis=axis, keepdims=keepdims), 1.0 / ord)


def _singular_values(x):
    return bind(factor.svd_p, x, full_matrices=False, compute_uv=False)[0]


def _matrix_norm(x, ord, row, col, keepdims):
    if ord is None or ord in ("f", "fro"):
        return _sum_of_squares(x, (row, col), keepdims)
    if ord in (1, -1, np.inf, -np.inf):
        summed, reduced = (row, col) if ord in (1, -1) else (col, row)     # column sums for 1, row sums for inf
        if not keepdims and reduced > summed:
            reduced -= 1
        pick = max if ord in (1, np.inf) else min
        return pick(sum(abs(x), axis=summed, keepdims=keepdims), axis=reduced, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        s = _singular_values(moveaxis(x, (row, col), (-2, -1)))
        y = max(s, axis=-1) if ord == 2 else min(s, axis=-1) if ord == -2 else sum(s, axis=-1)
        return expand_dims(y, (row, col)) if keepdims else y
    raise ValueError(f"norm: invalid order {ord!r} for a matrix norm")


def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: the 2-norm of everything (ord and axis None), a vector norm over one axis, a matrix
    norm over two; integers in float64, as NumPy's."""
    (x,) = promote(x, to_float="float64")
    ndim = aval(x).ndim
    if axis is None:
        if ord is None:
            return _sum_of_squares(x, None, keepdims)
        axis = tuple(range(ndim))
    axes = tuple(normalize_axis(a, ndim, "norm") for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(axes) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axes, keepdims=keepdims)
    if len(axes) == 2 and axes[0] != axes[1]:
        return _matrix_norm(x, ord, axes[0], axes[1], keepdims)
    raise ValueError(f"norm: needs one axis (a vector norm) or two different axes (a matrix norm), got {axis}")


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def cond(x, p=None):
    """The condition number in the p-norm: from the singular values for p None, 2 and -2, else
    norm(x) * norm(inv(x)); inf where that is NaN and x has no NaN (a singular matrix)."""
    (x,) = promote_linalg(x, name="cond")
    shape = aval(x).shape
    if len(shape) < 2 or 0 in shape[-2:]:
        raise ShapeError(f"cond: needs a non-empty array of shape (..., m, n), got shape {shape}")
    if p is None or p == 2:
        s = _singular_values(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = _singular_values(x)
        r = s[..., -1] / s[..., 0]
    else:
        if shape[-1] != shape[-2]:
            raise ShapeError(f"cond: p={p!r} needs square matrices, got shape {shape}")
        inverse = bind(solves.solve_p, x, broadcast_to_shape(eye(shape[-1], dtype=aval(x).dtype), shape),
                       transpose_a=False)
        r = multiply(norm(x, ord=p, axis=(-2, -1)), norm(inverse, ord=p, axis=(-2, -1)))
    no_nan_in_x = logical_not(any_(isnan(x), axis=(-2, -1)))
    return where_(logical_and(isnan(r), no_nan_in_x), np.inf, r)

