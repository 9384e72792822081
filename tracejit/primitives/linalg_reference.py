"""The NumPy implementations of the linear-algebra primitives: what eager calls and eval_ir compute, and what
compiled code runs where numpy's LAPACK lacks a routine. They follow JAX's conventions rather than NumPy's
exceptions: a factorization that fails (not positive definite, no convergence) gives NaN, a singular system
gives inf/NaN from its zero pivots, and nothing raises on values.

NumPy has no LU factorization and no triangular solve; those are written here as loops over the rows with
the batch (and right-hand sides) vectorized."""
import numpy as np

LinAlgError = np.linalg.LinAlgError


def _matrices(x):
    """x as a stack of matrices (B, m, n), a view when possible."""
    return x.reshape((int(np.prod(x.shape[:-2])),) + x.shape[-2:])


def nan_on_failure(fn, a):
    """fn(a) for a batch of matrices; a matrix where fn raises LinAlgError gets NaN in every float result (fn
    returns an array or a tuple of arrays)."""
    try:
        return fn(a)
    except LinAlgError:
        pass
    parts = []
    for m in _matrices(a):
        try:
            parts.append(fn(m))
        except LinAlgError:
            proxy = fn(np.eye(*m.shape, dtype=m.dtype))
            parts.append(tuple(np.full_like(p, np.nan) if p.dtype.kind in "fc" else p for p in proxy)
                         if isinstance(proxy, tuple) else np.full_like(proxy, np.nan))
    batch = a.shape[:-2]
    if isinstance(parts[0], tuple):
        return tuple(np.stack(p).reshape(batch + p[0].shape) for p in zip(*parts))
    return np.stack(parts).reshape(batch + parts[0].shape)


def cholesky(a):
    """The lower Cholesky factor from a's lower triangle, zero above the diagonal; NaN on and below it for a
    matrix that is not positive definite (as JAX's cholesky)."""
    a = np.asarray(a)
    if a.size == 0:
        return a.copy()
    out = nan_on_failure(np.linalg.cholesky, a)
    return np.tril(out).astype(a.dtype, copy=False)


def lu(a):
    """LU with partial pivoting, P a = L U, as LAPACK's getrf: (lu, pivots, permutation), L unit lower in the
    strict lower part of lu, pivots[j] the row swapped with row j at step j, permutation the rows of a in the
    order of P a. A zero pivot leaves its column unscaled (the result is singular, not an error). The pivot is the
    entry of largest |re| + |im|, as LAPACK's i?amax picks it (|x| for real matrices); where a column holds NaN the
    BLAS's choice is its own (OpenBLAS's vector kernels differ from the reference BLAS), and this one may differ."""
    a = np.array(a, copy=True)
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    work = _matrices(a)
    count = work.shape[0]
    pivots = np.zeros((count, k), np.int32)
    perm = np.tile(np.arange(m, dtype=np.int32), (count, 1))
    every = np.arange(count)
    with np.errstate(all="ignore"):
        for j in range(k):
            column = work[:, j:, j]
            p = j + np.argmax(np.abs(column.real) + np.abs(column.imag) if column.dtype.kind == "c" else
                              np.abs(column), axis=1)
            pivots[:, j] = p
            work[every, j], work[every, p] = work[every, p], work[every, j].copy()
            perm[every, j], perm[every, p] = perm[every, p], perm[every, j].copy()
            pivot = work[:, j, j:j + 1]
            work[:, j + 1:, j] = np.where(pivot != 0, work[:, j + 1:, j] / pivot, work[:, j + 1:, j])
            work[:, j + 1:, j + 1:] -= work[:, j + 1:, j, None] * work[:, j, None, j + 1:]
    return work.reshape(a.shape), pivots.reshape(batch + (k,)), perm.reshape(batch + (m,))


def pivots_to_permutation(pivots, permutation_size):
    """The permutation that the row swaps `pivots` (..., k) make of range(permutation_size)."""
    pivots = np.asarray(pivots)
    batch, k = pivots.shape[:-1], pivots.shape[-1]
    swaps = pivots.reshape(-1, k)
    perm = np.tile(np.arange(permutation_size, dtype=np.int32), (swaps.shape[0], 1))
    every = np.arange(swaps.shape[0])
    for j in range(k):
        p = np.clip(swaps[:, j], 0, permutation_size - 1)
        perm[every, j], perm[every, p] = perm[every, p], perm[every, j].copy()
    return perm.reshape(batch + (permutation_size,))


def _forward_substitution(a, b, unit_diagonal):
    """x with a x = b for lower-triangular a (B, m, m) and b (B, m, n), row by row."""
    x = np.empty_like(b)
    for i in range(a.shape[-1]):
        row = b[:, i] - np.einsum("bj,bjn->bn", a[:, i, :i], x[:, :i])
        x[:, i] = row if unit_diagonal else row / a[:, i, i, None]
    return x


def triangular_solve(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """x with op(a) x = b (left_side) or x op(a) = b, reading one triangle of a, as JAX's triangular_solve."""
    a, b = np.asarray(a), np.asarray(b)
    batch = b.shape[:-2]
    a = np.tril(a) if lower else np.triu(a)
    a = _matrices(np.broadcast_to(a, batch + a.shape[-2:]))
    b = _matrices(b)
    if conjugate_a:
        a = a.conj()
    if transpose_a:
        a, lower = a.swapaxes(-1, -2), not lower
    if not left_side:      # x a = b  <=>  a^T x^T = b^T
        a, b, lower = a.swapaxes(-1, -2), b.swapaxes(-1, -2), not lower
    if not lower:          # reversing the order of the unknowns makes an upper system lower
        a, b = a[:, ::-1, ::-1], b[:, ::-1]
    with np.errstate(all="ignore"):
        x = _forward_substitution(a, b, unit_diagonal)
    if not lower:
        x = x[:, ::-1]
    if not left_side:
        x = x.swapaxes(-1, -2)
    return np.ascontiguousarray(x).reshape(batch + x.shape[-2:])


def lu_solve(lu_, perm, b, transpose_a):
    """x with a x = b (or a^T x = b) from a's LU factors."""
    ones = {"left_side": True, "transpose_a": transpose_a, "conjugate_a": False}
    if not transpose_a:
        b = np.take_along_axis(b, perm[..., None], axis=-2)
        y = triangular_solve(lu_, b, lower=True, unit_diagonal=True, **ones)
        return triangular_solve(lu_, y, lower=False, unit_diagonal=False, **ones)
    y = triangular_solve(lu_, b, lower=False, unit_diagonal=False, **ones)
    x = triangular_solve(lu_, y, lower=True, unit_diagonal=True, **ones)
    out = np.empty_like(x)
    np.put_along_axis(out, np.broadcast_to(perm[..., None], x.shape), x, axis=-2)
    return out


def solve(a, b, transpose_a):
    """x with a x = b (or a^T x = b) for a (..., n, n) and b (..., n, k); a singular matrix gives inf/NaN."""
    a, b = np.asarray(a), np.asarray(b)
    op = a.swapaxes(-1, -2) if transpose_a else a
    try:
        return np.linalg.solve(op, b).astype(b.dtype, copy=False)
    except LinAlgError:
        lu_, _, perm = lu(a)
        return lu_solve(lu_, perm, b, transpose_a)


def qr(a, full_matrices):
    return np.linalg.qr(a, mode="complete" if full_matrices else "reduced")


def eigh(a, lower, eigvals_only=False):
    """(v, w): eigenvectors in the columns of v, eigenvalues w ascending, or (w,) when eigvals_only; NaN where
    LAPACK does not converge."""
    uplo = "L" if lower else "U"
    if eigvals_only:
        return (nan_on_failure(lambda m: np.linalg.eigvalsh(m, UPLO=uplo), np.asarray(a)),)
    w, v = nan_on_failure(lambda m: tuple(np.linalg.eigh(m, UPLO=uplo)), np.asarray(a))
    return v, w


def svd(a, full_matrices, compute_uv):
    """(s,) or (s, u, vt) as numpy's svd; NaN where LAPACK does not converge."""
    a = np.asarray(a)
    if not compute_uv:
        return (nan_on_failure(lambda m: np.linalg.svd(m, compute_uv=False), a),)
    u, s, vt = nan_on_failure(lambda m: tuple(np.linalg.svd(m, full_matrices=full_matrices)), a)
    return s, u, vt
