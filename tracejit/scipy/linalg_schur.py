"""jax.scipy.linalg's functions built on the Schur decomposition (schur, rsf2csf, sqrtm, funm, solve_sylvester) and
the Hessenberg reduction, with JAX's algorithms: the LAPACK-backed primitives (tracejit.lax.linalg) and loops over
the entries of triangular matrices (fori_loop), so that they trace, batch and (where the Schur vectors are only
multiplied) differentiate. As in JAX, the Schur decomposition itself has no derivative."""
import numpy as np

from .. import lax
from .. import numpy as tnp
from ..batching import vmap
from ..lax import linalg as lax_linalg
from ..numpy import linalg as tla
from ..numpy._base import aval, promote
from ._args import square_matrices


def _complex_dtype(dtype):
    return np.result_type(dtype, np.complex64)


def _put(x, i, j, value):
    """x with x[i, j] = value (traced indices): a dynamic_update_slice, whose batching rule takes a batched x with
    an unbatched value (the scatter of x.at[i, j].set(value) refused that under vmap)."""
    return lax.dynamic_update_slice(x, tnp.reshape(tnp.asarray(value, aval(x).dtype), (1, 1)), (i, j))


def _batched(fn, ndim, *xs):
    """fn of 2-D operands applied over the (broadcast) leading axes of xs, as jnp.vectorize does."""
    batch = tnp.broadcast_shapes(*[aval(x).shape[:-ndim] for x in xs])
    xs = [tnp.broadcast_to(x, batch + aval(x).shape[-ndim:]) for x in xs]
    for _ in batch:
        fn = vmap(fn)
    return fn(*xs)


def schur(a, output="real"):
    """(T, Z) with a = Z T Z^H: T quasi upper triangular for output 'real' (real a), upper triangular for output
    'complex' (a converted to complex first); LAPACK's gees, unsorted."""
    if output not in ("real", "complex"):
        raise ValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    (a,) = square_matrices("schur", a)
    if output == "complex":
        a = a.astype(_complex_dtype(aval(a).dtype))
    return lax_linalg.schur(a)


def _rsf2csf_2d(t, z):
    """JAX's rotations: from the bottom, each 2 x 2 block with a nonzero subdiagonal entry (relative to eps) is
    made triangular by a Givens rotation G built from its eigenvalue mu[0]; rows m-1, m of T from column m-1 on
    become G T, columns m-1, m of T above row m+1 and of Z become X G^H."""
    t, z = promote(t, z)
    dtype = _complex_dtype(aval(t).dtype)
    t, z = t.astype(dtype), z.astype(dtype)
    n = aval(t).shape[0]
    if n <= 1:
        return t, z
    eps = np.finfo(dtype).eps
    cols = np.arange(n)

    def rotate(m, t, z):
        block = lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))
        mu = tla.eigvals(block) - t[m, m]
        r = tla.norm(tnp.stack([mu[0], t[m, m - 1]])).astype(dtype)
        c, s = mu[0] / r, t[m, m - 1] / r
        g = tnp.stack([tnp.stack([tnp.conj(c), s]), tnp.stack([-s, c])])
        rows = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
        right = cols >= m - 1
        rows = tnp.where(right, g @ tnp.where(right, rows, 0), rows)
        t = lax.dynamic_update_slice_in_dim(t, rows, m - 1, axis=0)
        pair = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=1)
        above = (cols < m + 1)[:, None]
        pair = tnp.where(above, tnp.where(above, pair, 0) @ tnp.conj(g).T, pair)
        t = lax.dynamic_update_slice_in_dim(t, pair, m - 1, axis=1)
        zpair = lax.dynamic_slice_in_dim(z, m - 1, 2, axis=1)
        z = lax.dynamic_update_slice_in_dim(z, zpair @ tnp.conj(g).T, m - 1, axis=1)
        return t, z

    def step(i, tz):
        t, z = tz
        m = n - i
        big = tnp.abs(t[m, m - 1]) > eps * (tnp.abs(t[m - 1, m - 1]) + tnp.abs(t[m, m]))
        t, z = lax.cond(big, rotate, lambda m, t, z: (t, z), m, t, z)
        return _put(t, m, m - 1, 0), z

    return lax.fori_loop(1, n, step, (t, z))


def rsf2csf(T, Z, check_finite=True):
    """(T, Z) in complex Schur form (T upper triangular) from a real Schur form (T, Z) as schur(output='real')
    gives it, batched over leading axes."""
    t, z = (tnp.asarray(x) for x in (T, Z))
    for name, x in (("T", t), ("Z", z)):
        if aval(x).ndim < 2 or aval(x).shape[-1] != aval(x).shape[-2]:
            raise ValueError(f"rsf2csf: input {name!r} must be square, got shape {aval(x).shape}")
    if aval(t).shape[-1] != aval(z).shape[-1]:
        raise ValueError(f"rsf2csf: input array shapes must match: Z: {aval(z).shape} vs. T: {aval(t).shape}")
    return _batched(_rsf2csf_2d, 2, t, z)


def _sqrtm_triu(t):
    """The upper triangular square root U of upper triangular T (Bjorck and Hammarling 1983): U's diagonal the
    square roots of T's, then column by column, from the diagonal up, U[i, j] = (T[i, j] - sum_{i<k<j} U[i, k]
    U[k, j]) / (U[i, i] + U[j, j]) (0 where the numerator is 0)."""
    diag = tnp.sqrt(tnp.diagonal(t))
    n = aval(t).shape[0]
    idx = np.arange(n)

    def entry(l, state):
        j, u, t, diag = state
        i = j - 1 - l
        between = (idx > i) & (idx < j)
        s = tnp.sum(tnp.where(between, u[i, :] * u[:, j], 0))
        value = tnp.where(t[i, j] == s, 0, (t[i, j] - s) / (diag[i] + diag[j]))
        return j, _put(u, i, j, value), t, diag

    def column(j, state):
        u, t, diag = state
        return lax.fori_loop(0, j, entry, (j, u, t, diag))[1:]

    # t and diag ride in the loops' state: closed over, an eager (NumPy) t could not be indexed by a traced i
    return lax.fori_loop(0, n, column, (tnp.diag(diag), t, diag))[0]


def sqrtm(A, blocksize=1):
    """The principal square root of a square matrix (complex), by the complex Schur method of Bjorck and
    Hammarling, as JAX's; blocksize > 1 (SciPy's blocked variant) is not implemented, as in JAX."""
    if blocksize > 1:
        raise NotImplementedError("sqrtm: the blocked version (blocksize > 1) is not implemented, as in JAX")
    (a,) = square_matrices("sqrtm", A)
    if aval(a).ndim != 2:
        raise ValueError(f"sqrtm: needs a matrix (n, n), got shape {aval(a).shape}")
    t, z = schur(a, output="complex")
    if aval(a).shape[0] == 0:
        return t
    return z @ _sqrtm_triu(t) @ tnp.conj(z).T


def _parlett(f, t):
    """Algorithm 11.1.1 of Golub and Van Loan (Parlett's recurrence): F's superdiagonals from its diagonal, one
    diagonal p at a time; returns F and the smallest |T[j, j] - T[i, i]| divided by (its error measure)."""
    n = aval(t).shape[0]
    idx = np.arange(n)

    def entry(i, state):
        p, f, minden, t = state
        j = i + p
        s = t[i - 1, j - 1] * (f[j - 1, j - 1] - f[i - 1, i - 1])
        inside = (idx >= i) & (idx < j - 1)
        s = s + (tnp.where(inside, t[i - 1], 0) @ tnp.where(inside, f[:, j - 1], 0)
                 - tnp.where(inside, f[i - 1], 0) @ tnp.where(inside, t[:, j - 1], 0))
        den = t[j - 1, j - 1] - t[i - 1, i - 1]
        s = tnp.where(den != 0, s / den, s)
        return p, _put(f, i - 1, j - 1, s), tnp.minimum(minden, tnp.abs(den)), t

    def diagonal(p, state):
        return lax.fori_loop(1, n - p + 1, entry, (p, *state))[1:]

    # t rides in the loops' state (see _sqrtm_triu)
    return lax.fori_loop(1, n, diagonal, (f, tnp.abs(t[0, 0]), t))[:2]


def funm(A, func, disp=True):
    """func applied to a square matrix through its complex Schur form (schur, rsf2csf, then Parlett's
    recurrence), as JAX's; func maps a vector of eigenvalues elementwise. The result is complex. disp=False also
    returns JAX's error estimate."""
    a = tnp.asarray(A)
    if aval(a).ndim != 2 or aval(a).shape[0] != aval(a).shape[1]:
        raise ValueError(f"funm: expected a square matrix (n, n), got shape {aval(a).shape}")
    t, z = schur(a)
    t, z = rsf2csf(t, z)
    if aval(a).shape[0] == 0:
        return t if disp else (t, tnp.zeros((), np.finfo(aval(t).dtype).dtype))
    f = tnp.diag(func(tnp.diagonal(t))).astype(aval(t).dtype)
    f, minden = _parlett(f, t)
    f = z @ f @ tnp.conj(z).T
    if disp:
        return f
    tol = np.finfo(np.float32 if aval(f).dtype == np.complex64 else np.float64).eps
    minden = tnp.where(minden == 0, tol, minden)
    err = tnp.where(tnp.any(tnp.isinf(f)), np.inf,
                    tnp.minimum(1, tnp.maximum(tol, (tol / minden) * tla.norm(tnp.triu(t, 1), 1))))
    return f, err


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """H (and Q with calc_q) with a = Q H Q^H, H zero below its first subdiagonal: LAPACK's gehrd, and orgqr on its
    reflectors for Q, batched over leading axes."""
    (a,) = square_matrices("hessenberg", a)
    n = aval(a).shape[-1]
    if n == 0:
        return (tnp.zeros_like(a), tnp.zeros_like(a)) if calc_q else tnp.zeros_like(a)
    packed, taus = lax_linalg.hessenberg(a)
    h = tnp.triu(packed, -1)
    if not calc_q:
        return h
    q = lax_linalg.householder_product(packed[..., 1:, :-1], taus)
    q = tnp.pad(q, [(0, 0)] * (aval(q).ndim - 2) + [(1, 0), (1, 0)])
    first = (np.arange(n)[:, None] == 0) & (np.arange(n)[None, :] == 0)
    return h, tnp.where(first, tnp.ones((), aval(q).dtype), q)


def _sylvester_triangular(r, s, f):
    """Y with R Y + Y S^T = F for upper triangular R and S^T lower (Bartels-Stewart): the entries from the
    bottom-right to the top-left, each from those already found, as JAX's scan over them."""
    m, n = aval(f).shape
    rows, cols = np.arange(m), np.arange(n)

    def entry(k, state):
        y, r, s, f = state
        idx = m * n - 1 - k
        i, j = idx // n, idx % n
        row_term = tnp.sum(tnp.where(rows > i, r[i, :] * y[:, j], 0))
        col_term = tnp.sum(tnp.where(cols > j, y[i, :] * s[:, j], 0))
        return _put(y, i, j, (f[i, j] - row_term - col_term) / (r[i, i] + s[j, j])), r, s, f

    # r, s and f ride in the loop's state (see _sqrtm_triu)
    return lax.fori_loop(0, m * n, entry, (tnp.zeros_like(f), r, s, f))[0]


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """X with A X + X B = C, by the Bartels-Stewart algorithm on complex Schur forms (method 'schur') or by
    eigendecompositions ('eigen'), as JAX's; NaN where some eigenvalues of A and B sum to less than tol in
    magnitude. Batched over (broadcast) leading axes."""
    if method not in ("schur", "eigen"):
        raise ValueError(f"solve_sylvester: method must be 'schur' or 'eigen', got {method!r}")
    a, b, c = promote(tnp.asarray(A), tnp.asarray(B), tnp.asarray(C), to_float=True)
    m, n = aval(c).shape[-2:]
    if aval(a).shape[-2:] != (m, m) or aval(b).shape[-2:] != (n, n):
        raise ValueError(f"solve_sylvester: incompatible shapes: A {aval(a).shape}, B {aval(b).shape}, C "
                         f"{aval(c).shape}")

    def solve2d(a, b, c):
        if method == "schur":
            r, u = schur(a, output="complex")
            s, v = schur(tnp.conj(b).T, output="complex")
            y = _sylvester_triangular(r, tnp.conj(s).T, tnp.conj(u).T @ c.astype(aval(r).dtype) @ v)
            x = u @ y @ tnp.conj(v).T
        else:
            ra, ua = tla.eig(a)
            rb, ub = tla.eig(b)
            y = tla.solve(ua, c.astype(aval(ra).dtype) @ ub) / (ra[:, None] + rb[None, :])
            x = ua @ y @ tla.inv(ub)
        if aval(c).dtype.kind != "c":
            x = tnp.real(x)
        close = tnp.any(tnp.abs(tla.eigvals(a)[:, None] + tla.eigvals(b)[None, :]) < tol)
        return tnp.where(close, np.nan, x)

    return _batched(solve2d, 2, a, b, c)
