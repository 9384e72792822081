"""tracejit.numpy.linalg: jax.numpy.linalg, written on the linear-algebra primitives (cholesky, lu, qr, eigh, svd,
triangular_solve, solve), so that it is differentiable, batched over leading axes, and compiled to LAPACK calls.

As JAX's, these never raise on values: a singular matrix gives inf/NaN, a matrix that is not positive definite
a NaN Cholesky factor. Complex matrices are welcome wherever NumPy takes them (eigh's eigenvalues and the singular
values are real). det, slogdet and pinv have JAX's own derivative rules (finite at a singular matrix, and for
repeated singular values), bound through custom_jvp_call; the determinants are in linalg_det.py, the norms in
linalg_norms.py, eig and eigvals (general matrices, complex results) in linalg_eig.py."""
import collections
import itertools
import math
import operator

import numpy as np

from ..core.avals import DEFAULT_INT, broadcast_shapes
from ..core.errors import ShapeError
from ..core.trace import Tracer, bind
from ..primitives import linalg_factor as factor
from ..primitives import linalg_lstsq as lstsqs
from ..primitives import linalg_solve as solves
from ..primitives.custom_jvp_call import call_with_jvp
from ._base import asarray, astype, aval, broadcast_to_shape, promote, promote_linalg, reject_out
from ._docs import document_as_numpy
from .complex_numbers import conj, real
from .creation import eye, zeros
from .indexing import argsort, take_along_axis
from .linalg_det import det
from .linalg_det import slogdet as _slogdet
from .linalg_eig import EigResult, eig, eigvals
from .linalg_norms import cond, matrix_norm, norm, vector_norm
from .linalg_ops import check_precision, matmul, tensordot
from .linalg_ops import cross as _cross
from .linalg_ops import diagonal as _diagonal
from .linalg_ops import trace as _trace
from .reductions import sum
from .shape_ops import moveaxis, reshape, swapaxes
from .statistics import count_nonzero
from .ufuncs import (
    abs,
    add,
    divide,
    greater,
    multiply,
    sign,
    subtract,
    where_,
)

EighResult = collections.namedtuple("EighResult", "eigenvalues eigenvectors")
SlogdetResult = collections.namedtuple("SlogdetResult", "sign logabsdet")
SVDResult = collections.namedtuple("SVDResult", "U S Vh")
QRResult = collections.namedtuple("QRResult", "Q R")
LstsqResult = collections.namedtuple("LstsqResult", "x residuals rank s")

__all__ = ["EigResult", "EighResult", "LstsqResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cond",
           "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm",
           "matrix_power", "matrix_rank", "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet",
           "solve", "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm"]


def _matrices(name, a, square=True):
    """a promoted to float (promote_linalg), checked to be a stack of (square) matrices."""
    (a,) = promote_linalg(a, name=name)
    shape = aval(a).shape
    if len(shape) < 2 or (square and shape[-1] != shape[-2]):
        raise ShapeError(f"{name}: needs an array of shape (..., {'n, n' if square else 'm, n'}), got shape {shape}")
    return a


def matrix_transpose(x):
    x = asarray(x)
    if aval(x).ndim < 2:
        raise ShapeError(f"matrix_transpose: needs an array of rank 2 or more, got shape {aval(x).shape}")
    return swapaxes(x, -1, -2)


def _H(x):
    """The conjugate transposes of a stack of matrices."""
    return conj(matrix_transpose(x))


def _symmetrize(a):
    """The Hermitian part, (a + a^H) / 2."""
    return divide(add(a, _H(a)), 2.0)


def cholesky(a, *, upper=False, symmetrize_input=True):
    """The lower (or upper) Cholesky factor; NaN for a matrix that is not positive definite."""
    a = _matrices("cholesky", a)
    factor_ = bind(factor.cholesky_p, _symmetrize(a) if symmetrize_input else a)
    return _H(factor_) if upper else factor_

# -------------------------------------------------------------------------------------------------- solving


def _solve(a, b, transpose_a=False):
    """solve_p on broadcast batch axes; b (..., n, k). An unbatched a solves every column of b at once."""
    sa, sb = aval(a).shape, aval(b).shape
    if len(sa) == 2 and len(sb) > 2:      # one factorization for all: b's batch axes become columns
        moved = moveaxis(b, -2, 0)
        cols = reshape(moved, (sb[-2], -1))
        x = bind(solves.solve_p, a, cols, transpose_a=transpose_a)
        return moveaxis(reshape(x, aval(moved).shape), 0, -2)
    batch = broadcast_shapes(sa[:-2], sb[:-2], op="solve")
    return bind(solves.solve_p, broadcast_to_shape(a, batch + sa[-2:]), broadcast_to_shape(b, batch + sb[-2:]),
                transpose_a=transpose_a)


def solve(a, b):
    """x with a x = b: b is a vector (n,) or a stack of matrices (..., n, k), batch axes broadcast (NumPy 2)."""
    a, b = promote_linalg(a, b, name="solve")
    a = _matrices("solve", a)
    sa, sb = aval(a).shape, aval(b).shape
    vector = len(sb) == 1
    if not sb or sb[0 if vector else -2] != sa[-1]:
        raise ShapeError(f"solve: b must have shape ({sa[-1]},) or (..., {sa[-1]}, k) for a of shape {sa}, got "
                         f"shape {sb}")
    if vector:
        return _solve(a, reshape(b, (sb[0], 1)))[..., 0]
    return _solve(a, b)


def inv(a):
    a = _matrices("inv", a)
    shape = aval(a).shape
    return bind(solves.solve_p, a, broadcast_to_shape(eye(shape[-1], dtype=aval(a).dtype), shape), transpose_a=False)


def tensorsolve(a, b, axes=None):
    a, b = promote_linalg(a, b, name="tensorsolve")
    if axes is not None:
        a = moveaxis(a, axes, [aval(a).ndim - 1] * len(axes) if len(axes) == 1 else
                     list(range(aval(a).ndim - len(axes), aval(a).ndim)))
    sa, sb = aval(a).shape, aval(b).shape
    out_shape = sa[len(sb):]
    if sa[:len(sb)] != sb or math.prod(sb) != math.prod(out_shape):
        raise ShapeError(f"tensorsolve: a's leading axes must be b's shape {sb} and its other axes hold as many "
                         f"elements, got a of shape {sa}")
    x = solve(reshape(a, (math.prod(sb), math.prod(out_shape))), reshape(b, (-1,)))
    return reshape(x, out_shape)


def tensorinv(a, ind=2):
    a = asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"tensorinv: ind must be a positive integer, got {ind}")
    shape = aval(a).shape
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise ShapeError(f"tensorinv: the first {ind} axes of shape {shape} must hold as many elements as the others")
    return reshape(inv(reshape(a, (rows, cols))), shape[ind:] + shape[:ind])


def matrix_power(a, n):
    a = asarray(a)
    shape = aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(f"matrix_power: needs an array of shape (..., n, n), got shape {shape}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: the exponent must be an integer, got {n!r}") from None
    if n == 0:
        return broadcast_to_shape(eye(shape[-1], dtype=aval(a).dtype), shape)
    if n < 0:
        a, n = inv(a), -n
    result, power = None, a
    while n:                      # binary powering: the square for each bit, a product where it is set
        n, bit = divmod(n, 2)
        if bit:
            result = power if result is None else matmul(result, power)
        if n:
            power = matmul(power, power)
    return result

# ------------------------------------------------------------------------------------------ determinants


def slogdet(a, *, method=None):
    return SlogdetResult(*_slogdet(a, method=method))

# --------------------------------------------------------------------------------------- decompositions


def eigh(a, UPLO=None, symmetrize_input=True):
    """(eigenvalues ascending, eigenvectors in columns) of symmetric matrices."""
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"eigh: UPLO must be None, 'L' or 'U', got {UPLO!r}")
    a = _matrices("eigh", a)
    v, w = bind(factor.eigh_p, _symmetrize(a) if symmetrize_input else a, lower=UPLO != "U")
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    """The eigenvalues of symmetric matrices, ascending, computed without the eigenvectors (about half eigh's
    time; their derivative computes the eigenvectors)."""
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"eigvalsh: UPLO must be None, 'L' or 'U', got {UPLO!r}")
    a = _matrices("eigvalsh", a)
    (w,) = bind(factor.eigh_p, _symmetrize(a) if symmetrize_input else a, lower=UPLO != "U", eigvals_only=True)
    return w


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    a = _matrices("svd", a, square=hermitian)
    if hermitian:
        return _svd_hermitian(a, compute_uv)
    out = bind(factor.svd_p, a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    if not compute_uv:
        return out[0]
    s, u, vt = out
    return SVDResult(u, s, vt)


def _svd_hermitian(a, compute_uv):
    """From eigh, as JAX: singular values |w| in descending order (the reverse of a stable ascending sort)."""
    w, v = eigh(a)
    s = abs(w)
    order = argsort(s, axis=-1, stable=True)[..., ::-1]
    s = take_along_axis(s, order, axis=-1, mode="clip")
    if not compute_uv:
        return s
    u = take_along_axis(v, order[..., None, :], axis=-1, mode="clip")
    signs = take_along_axis(sign(w), order, axis=-1, mode="clip")
    return SVDResult(u, s, _H(multiply(u, signs[..., None, :])))


def svdvals(x):
    return svd(x, compute_uv=False)


def qr(a, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r} (tracejit has no 'raw')")
    a = _matrices("qr", a, square=False)
    q, r = bind(factor.qr_p, a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)

# ---------------------------------------------------------------------------------- least squares, pinv


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """The pseudo-inverse V S^-1 U^H from the SVD, singular values at or below rtol * the largest treated as zero;
    its derivative is JAX's rule (Golub and Pereyra), finite where the SVD's is not (repeated singular values)."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: give only one of rtol and rcond")
        rtol = rcond
    a = _matrices("pinv", a, square=False)
    m, n = aval(a).shape[-2:]
    if m == 0 or n == 0:
        return zeros(aval(a).shape[:-2] + (n, m), aval(a).dtype)
    real_dtype = np.finfo(aval(a).dtype).dtype
    if rtol is None:
        rtol = 10.0 * max(m, n) * np.finfo(real_dtype).eps
    rtol = asarray(rtol, real_dtype)

    def value(a):
        u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
        cutoff = multiply(rtol[..., None] if aval(rtol).ndim else rtol, s[..., 0:1])
        s = where_(greater(s, cutoff), s, np.inf)
        return [matmul(_H(vh), divide(_H(u), s[..., None]))]

    def pinv_jvp(primals, tangents):
        (a,), (a_dot,) = primals, tangents
        p = pinv(a, rtol, hermitian)
        if hermitian:
            a, a_dot = _symmetrize(a), _symmetrize(a_dot)
        p_h, a_dot_h = _H(p), _H(a_dot)
        if m >= n:
            s, t = matmul(matmul(p, p_h), a_dot_h), matmul(matmul(a_dot_h, p_h), p)
            p_dot = -matmul(matmul(p, a_dot), p) + s - matmul(matmul(s, a), p) + t - matmul(matmul(p, a), t)
        else:
            s, t = matmul(p, matmul(p_h, a_dot_h)), matmul(a_dot_h, matmul(p_h, p))
            p_dot = -matmul(p, matmul(a_dot, p)) + s - matmul(s, matmul(a, p)) + t - matmul(p, matmul(a, t))
        return [p], [p_dot]

    return call_with_jvp(value, pinv_jvp, a)[0]


def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: give only one of tol and rtol")
        rtol = tol
    (M,) = promote_linalg(M, name="matrix_rank")
    if aval(M).ndim < 2:
        return astype(count_nonzero(M) > 0, DEFAULT_INT)     # as for matrices, and NumPy's
    s = svd(M, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = multiply(s[..., 0], max(aval(M).shape[-2:]) * np.finfo(aval(M).dtype).eps)
    rtol = rtol if isinstance(rtol, Tracer) else np.asarray(rtol)     # a Python number too: a threshold per matrix
    return count_nonzero(greater(s, rtol[..., None]), axis=-1)


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """(x, residuals, rank, s) of min |a x - b| for a 2-D a, as JAX's from its SVD (residuals always, unless
    numpy_resid asks for NumPy's empty ones where it gives none)."""
    a, b = promote_linalg(a, b, name="lstsq")
    sa, sb = aval(a).shape, aval(b).shape
    if len(sa) != 2 or len(sb) not in (1, 2) or sa[0] != sb[0]:
        raise ShapeError(f"lstsq: needs a of shape (m, n) and b of shape (m,) or (m, k), got {sa} and {sb}")
    vector = len(sb) == 1
    b2 = reshape(b, (sb[0], 1)) if vector else b
    m, n = sa
    dtype = aval(a).dtype
    if rcond is None:
        rcond = np.finfo(dtype).eps * max(n, m)
    elif rcond < 0:
        rcond = np.finfo(dtype).eps
    x, s = bind(lstsqs.lstsq_p, a, b2, rcond=float(rcond))
    rank = astype(count_nonzero(lstsqs.kept(s, rcond)), np.int32)      # as NumPy's (JAX with x64: int64)
    r = subtract(b2, matmul(a, x))
    resid = sum(real(multiply(r, conj(r))), axis=0)
    if numpy_resid and (int(rank) < n or m <= n):
        resid = np.zeros((0,), np.finfo(dtype).dtype)
    return LstsqResult(x[:, 0] if vector else x, resid, rank, s)

# -------------------------------------------------------------------------------------------- products


def multi_dot(arrays, *, out=None, precision=None):
    """The product of a chain of matrices, in the order of fewest multiplications (the first and last may be
    vectors); precision as JAX's (accepted, changes nothing on CPU)."""
    reject_out("multi_dot", out)
    check_precision("multi_dot", precision)
    arrays = [asarray(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError(f"multi_dot: needs at least two arrays, got {len(arrays)}")
    first_vector, last_vector = aval(arrays[0]).ndim == 1, aval(arrays[-1]).ndim == 1
    if first_vector:
        arrays[0] = reshape(arrays[0], (1, -1))
    if last_vector:
        arrays[-1] = reshape(arrays[-1], (-1, 1))
    shapes = [aval(x).shape for x in arrays]
    if any(len(s) != 2 for s in shapes) or any(p[1] != q[0] for p, q in itertools.pairwise(shapes)):
        raise ShapeError(f"multi_dot: needs a chain of 2-D arrays (the first and last may be 1-D) whose inner "
                         f"sizes agree, got shapes {shapes}")
    split = _chain_order([s[0] for s in shapes] + [shapes[-1][1]])

    def product(i, j):
        return arrays[i] if i == j else matmul(product(i, split[i][j]), product(split[i][j] + 1, j))

    out = product(0, len(arrays) - 1)
    if first_vector:
        out = out[0]
    return out[..., 0] if last_vector else out


def _chain_order(dims):
    """split[i][j]: where the cheapest product of matrices i..j divides (the textbook dynamic programme)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = min((cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1], k)
                                          for k in range(i, j))
    return split


def outer(x1, x2):
    x1, x2 = asarray(x1), asarray(x2)
    if aval(x1).ndim != 1 or aval(x2).ndim != 1:
        raise ShapeError(f"outer: needs two 1-D arrays, got shapes {aval(x1).shape} and {aval(x2).shape}")
    return multiply(x1[:, None], x2[None, :])


def cross(x1, x2, /, *, axis=-1):
    return _cross(x1, x2, axis=axis)


def trace(x, /, *, offset=0, dtype=None):
    return _trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x, /, *, offset=0):
    return _diagonal(x, offset=offset, axis1=-2, axis2=-1)


def vecdot(x1, x2, /, *, axis=-1):
    """sum(conj(x1) * x2) along axis (axis of each operand: the sizes there must match, the other axes broadcast),
    as NumPy's and JAX's."""
    x1, x2 = promote(x1, x2)
    if not aval(x1).ndim or not aval(x2).ndim:
        raise ShapeError(f"vecdot: needs arrays of rank 1 or more, got shapes {aval(x1).shape} and {aval(x2).shape}")
    x1, x2 = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    if aval(x1).shape[-1] != aval(x2).shape[-1]:
        raise ShapeError(f"vecdot: axis {axis} of shapes {aval(x1).shape} and {aval(x2).shape} (moved last) must "
                         "have one size")
    return sum(multiply(conj(x1), x2), axis=-1)


document_as_numpy(globals(), np.linalg, "numpy.linalg")
