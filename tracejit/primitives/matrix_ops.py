"""Batched matrix helpers written on the primitives (through core.ops), for the linear-algebra rules: a matrix is
the last two axes of an array, every leading axis a batch axis that the operands share."""
import numpy as np

from ..core.ad_util import aval
from ..core.avals import DEFAULT_INT
from ..core.batching import move_batch_axis
from ..core.ops import ops
from ..core.trace import bind


def const(value, like):
    """A Python number as a rank-0 value of like's dtype (an IR literal; it broadcasts implicitly)."""
    return np.asarray(value, dtype=aval(like).dtype)[()]


def mT(x):
    """The matrices transposed (the last two axes swapped)."""
    n = aval(x).ndim
    return ops.transpose(x, permutation=tuple(range(n - 2)) + (n - 1, n - 2))


def conj(x):
    """The complex conjugate; a real x as it is."""
    return ops.conj(x) if aval(x).dtype.kind == "c" else x


def mH(x):
    """The matrices' conjugate transposes (the transposes of real ones)."""
    return conj(mT(x))


def real_part(x):
    """The real part (of the real dtype); a real x as it is."""
    return ops.real(x) if aval(x).dtype.kind == "c" else x


def as_dtype_of(x, like):
    """x converted to like's dtype (a real value to a complex one, its imaginary part zero)."""
    dtype = aval(like).dtype
    return x if aval(x).dtype == dtype else ops.convert_element_type(x, new_dtype=dtype, weak_type=False)


def matmul(a, b):
    """a @ b for operands with the same batch axes."""
    n = aval(a).ndim
    batch = tuple(range(n - 2))
    return ops.dot_general(a, b, dimension_numbers=(((n - 1,), (n - 2,)), (batch, batch)))


def _mask(shape, k, lower):
    """True on and below (lower) or on and above (upper) the k-th diagonal of the last two axes of shape,
    broadcast over the leading ones."""
    rows = ops.iota(dtype=np.dtype(DEFAULT_INT), shape=tuple(shape), dimension=len(shape) - 2)
    cols = ops.iota(dtype=np.dtype(DEFAULT_INT), shape=tuple(shape), dimension=len(shape) - 1)
    shifted = ops.add(rows, np.asarray(k, DEFAULT_INT)[()]) if k else rows
    return ops.ge(shifted, cols) if lower else ops.ge(cols, shifted)


def tril(x, k=0):
    """x on and below the k-th diagonal, zero above (select, so inf or NaN above stays out)."""
    return ops.select_n(_mask(aval(x).shape, k, True), const(0, x), x)


def triu(x, k=0):
    return ops.select_n(_mask(aval(x).shape, k, False), const(0, x), x)


def eye(n, like, batch=()):
    """The identity of size n in like's dtype, broadcast over the batch shape."""
    shape = tuple(batch) + (n, n)
    diagonal = ops.eq(ops.iota(dtype=np.dtype(DEFAULT_INT), shape=shape, dimension=len(shape) - 2),
                      ops.iota(dtype=np.dtype(DEFAULT_INT), shape=shape, dimension=len(shape) - 1))
    return ops.convert_element_type(diagonal, new_dtype=aval(like).dtype)


def diagonal(x):
    """The main diagonal of square matrices, (..., n, n) -> (..., n)."""
    n = aval(x).ndim
    on = ops.eq(ops.iota(dtype=np.dtype(DEFAULT_INT), shape=aval(x).shape, dimension=n - 2),
                ops.iota(dtype=np.dtype(DEFAULT_INT), shape=aval(x).shape, dimension=n - 1))
    return ops.reduce_sum(ops.select_n(on, const(0, x), x), axes=(n - 1,))


def diag_matrix(v):
    """Square matrices with v (..., n) on the diagonal."""
    shape = aval(v).shape + aval(v).shape[-1:]
    n = len(shape)
    on = ops.eq(ops.iota(dtype=np.dtype(DEFAULT_INT), shape=shape, dimension=n - 2),
                ops.iota(dtype=np.dtype(DEFAULT_INT), shape=shape, dimension=n - 1))
    spread = ops.broadcast_in_dim(v, shape=shape, broadcast_dimensions=tuple(range(n - 2)) + (n - 1,))
    return ops.select_n(on, const(0, v), spread)


def rows(x, index):
    """x[..., index[..., i], :] for every i: the rows of each matrix picked by an integer array (..., k)."""
    shape, dtype = aval(index).shape, aval(index).dtype
    nb = len(shape) - 1
    columns = [ops.iota(dtype=dtype, shape=shape, dimension=j) for j in range(nb)] + [index]
    columns = [ops.expand_dims(c, dimensions=(nb + 1,)) for c in columns]
    indices = columns[0] if len(columns) == 1 else ops.concatenate(*columns, dimension=nb + 1)
    return ops.gather(x, indices, axes=tuple(range(nb + 1)), mode="clip")


def sub_matrix(x, rows_, cols):
    """x[..., r0:r1, c0:c1] for (r0, r1) = rows_ and (c0, c1) = cols."""
    shape = aval(x).shape
    start = (0,) * (len(shape) - 2) + (rows_[0], cols[0])
    limit = tuple(shape[:-2]) + (rows_[1], cols[1])
    return ops.slice(x, start_indices=start, limit_indices=limit, strides=None)


def symmetrize(x):
    """(x + x^H) / 2: the Hermitian part."""
    return ops.mul(ops.add(x, mH(x)), const(0.5, x))


def leading_batch_rule(prim):
    """The batching rule of a primitive whose operands share any number of leading batch axes: the batch axis
    moved (or an unbatched operand broadcast) to the front of every operand."""
    def rule(args, dims, **params):
        size = next(aval(x).shape[d] for x, d in zip(args, dims) if d is not None)
        moved = [move_batch_axis(x, d, 0, size) for x, d in zip(args, dims)]
        return bind(prim, *moved, **params), 0
    return rule
