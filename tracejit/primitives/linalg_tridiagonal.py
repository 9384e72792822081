"""tridiagonal_solve: a x = b for tridiagonal a given by its three diagonals, as JAX's lax.linalg defines it:
dl[i] = a[i, i-1] (dl[0] unused), d[i] = a[i, i], du[i] = a[i, i+1] (du[-1] unused), each (..., m), and b
(..., m, n). Compiled, LAPACK's gtsv (Gaussian elimination with partial pivoting) runs per system of the batch;
the NumPy impl is the same elimination, vectorized over the batch and the right-hand sides. A singular system
(a zero pivot) gives NaN, as JAX's.

Its rules are JAX's: the jvp x' = a^-1 (b' - a' x), with a' x the tridiagonal product of the tangent diagonals;
the transpose (linear in b only) a solve with a^T, whose diagonals are du and dl shifted by one place."""
import numpy as np

from ..backend.rules import Kernel
from ..core.ad_util import UndefinedPrimal, Zero, aval, instantiate
from ..core.errors import ShapeError
from ..core.ops import ops
from ..core.trace import Primitive
from . import linalg_lapack as lp
from .matrix_ops import leading_batch_rule


def _shape(dl, d, du, b, perturb_singular=False):
    for name, x in (("dl", dl), ("d", d), ("du", du), ("b", b)):
        if x.dtype not in lp.DTYPES:
            raise TypeError(f"tridiagonal_solve: {name} must be float32, float64, complex64 or complex128, got "
                            f"{x.str_short()}")
    if len({dl.dtype, d.dtype, du.dtype, b.dtype}) > 1:
        raise TypeError(f"tridiagonal_solve: needs dl, d, du and b of one dtype, got {dl.str_short()}, "
                        f"{d.str_short()}, {du.str_short()} and {b.str_short()}")
    if not (dl.shape == d.shape == du.shape) or b.ndim < 2 or d.shape != b.shape[:-1]:
        raise ShapeError(f"tridiagonal_solve: needs dl, d and du of one shape (..., m) and b of shape (..., m, n), "
                         f"got {dl.shape}, {d.shape}, {du.shape} and {b.shape}")
    return b.strip_weak()


def _magnitude(x):
    """|re| + |im|: the pivot measure of LAPACK's complex gtsv (|x| for real numbers)."""
    return np.abs(x.real) + np.abs(x.imag) if x.dtype.kind == "c" else np.abs(x)


def gtsv(dl, d, du, b):
    """LAPACK's gtsv in NumPy for a batch (..., m) of systems with right-hand sides (..., m, n): eliminate the
    subdiagonal row by row, swapping rows i and i + 1 where |dl| > |d| (which fills a second superdiagonal), then
    substitute back. A zero pivot makes the system's solution NaN."""
    dl, d, du, b = map(np.asarray, (dl, d, du, b))
    m = d.shape[-1]
    d, b = d.copy(), b.copy()
    low = dl[..., 1:].copy()                 # low[i] = a[i+1, i]
    up = du[..., :-1].copy()                 # up[i] = a[i, i+1]
    up2 = np.zeros_like(low)                 # the second superdiagonal that swaps fill
    with np.errstate(all="ignore"):
        for i in range(m - 1):
            swap = _magnitude(d[..., i]) < _magnitude(low[..., i])
            piv = np.where(swap, low[..., i], d[..., i])
            other = np.where(swap, d[..., i], low[..., i])         # the entry eliminated below the pivot
            fact = other / piv
            nxt = up[..., i + 1] if i + 1 < m - 1 else np.zeros_like(d[..., i])
            row_i = (np.where(swap, d[..., i + 1], up[..., i]), np.where(swap, nxt, 0))
            row_j = (np.where(swap, up[..., i], d[..., i + 1]), np.where(swap, 0, nxt))
            d[..., i], up[..., i] = piv, row_i[0]
            if i + 1 < m - 1:
                up2[..., i] = row_i[1]
            d[..., i + 1] = row_j[0] - fact * row_i[0]
            if i + 1 < m - 1:
                up[..., i + 1] = row_j[1] - fact * row_i[1]
            bi, bj = b[..., i, :].copy(), b[..., i + 1, :].copy()
            top = np.where(swap[..., None], bj, bi)
            bottom = np.where(swap[..., None], bi, bj)
            b[..., i, :], b[..., i + 1, :] = top, bottom - fact[..., None] * top
        x = np.empty_like(b)
        for i in range(m - 1, -1, -1):
            acc = b[..., i, :].copy()
            if i + 1 < m:
                acc -= up[..., i, None] * x[..., i + 1, :]
            if i + 2 < m:
                acc -= up2[..., i, None] * x[..., i + 2, :]
            x[..., i, :] = acc / d[..., i, None]
    singular = np.any(d == 0, axis=-1)
    x[singular] = np.nan
    return x


def perturbed(dl, d, du, b):
    """The solve with perturbed pivots that JAX's perturb_singular=True computes, for inverse iteration: LAPACK's
    lagtf factorization (partial pivoting by |a[k]| / (|a[k]| + |du[k]|) against |dl[k+1]| / (its row's sum)),
    then lagts' substitution with job -1, which moves a pivot a[k] by sign(a[k]) tol (doubling until the quotient
    cannot overflow for any right-hand side; tol = eps max|U|, or the smallest normal number for a zero U, as JAX's
    where LAPACK's would take eps). Vectorized over the batch and the right-hand sides; complex pivots move along
    their own direction."""
    dl, d, du, b = map(np.asarray, (dl, d, du, b))
    m = d.shape[-1]
    finfo = np.finfo(d.real.dtype)
    a, y = d.copy(), b.copy()
    up = np.concatenate([du[..., :-1], np.zeros_like(du[..., :1])], axis=-1)        # b(k), k < m - 1
    low = dl[..., 1:].copy()                                                          # c(k)
    up2 = np.zeros_like(a)
    swap = np.zeros(a.shape[:-1] + (max(m - 1, 0),), bool)
    with np.errstate(all="ignore"):
        scale1 = np.abs(a[..., 0]) + (np.abs(up[..., 0]) if m > 1 else 0)
        for k in range(m - 1):
            scale2 = np.abs(low[..., k]) + np.abs(a[..., k + 1]) + (np.abs(up[..., k + 1]) if k < m - 2 else 0)
            piv1 = np.where(a[..., k] == 0, 0, np.abs(a[..., k]) / scale1)
            piv2 = np.where(low[..., k] == 0, 0, np.abs(low[..., k]) / scale2)
            s = (low[..., k] != 0) & (piv2 > piv1)
            keep = (low[..., k] != 0) & ~s
            mult = a[..., k] / low[..., k]
            nxt = up[..., k + 1] if k < m - 2 else np.zeros_like(a[..., k])
            new_low = np.where(keep, low[..., k] / a[..., k], np.where(s, mult, low[..., k]))
            new_next = np.where(keep, a[..., k + 1] - new_low * up[..., k], np.where(s, up[..., k] - mult * a[..., k + 1],
                                                                                     a[..., k + 1]))
            up2[..., k] = np.where(s, nxt, 0)
            if k < m - 2:
                up[..., k + 1] = np.where(s, -mult * nxt, nxt)
            up[..., k] = np.where(s, a[..., k + 1], up[..., k])
            a[..., k] = np.where(s, low[..., k], a[..., k])
            a[..., k + 1], low[..., k], swap[..., k] = new_next, new_low, s
            scale1 = np.where(s, scale1, scale2)
        for k in range(1, m):
            prev, cur, sw = y[..., k - 1, :].copy(), y[..., k, :].copy(), swap[..., k - 1, None]
            c = low[..., k - 1, None]
            y[..., k - 1, :] = np.where(sw, cur, prev)
            y[..., k, :] = np.where(sw, prev - c * cur, cur - c * prev)
        tol = np.max(np.abs(np.concatenate([a, up, up2], axis=-1)), axis=-1, initial=0) * finfo.eps
        tol = np.where(tol == 0, finfo.tiny, tol)[..., None]
        for k in range(m - 1, -1, -1):
            temp = y[..., k, :].copy()
            if k + 1 < m:
                temp -= up[..., k, None] * y[..., k + 1, :]
            if k + 2 < m:
                temp -= up2[..., k, None] * y[..., k + 2, :]
            ak = np.broadcast_to(a[..., k, None], temp.shape).copy()
            direction = np.where(ak == 0, 1, ak / np.where(ak == 0, 1, np.abs(ak)))
            pert = tol * direction
            while True:
                absak = np.abs(ak)
                move = (absak < 1) & (((absak < finfo.tiny) & ((absak == 0) | (np.abs(temp) * finfo.tiny > absak)))
                                      | ((absak >= finfo.tiny) & (np.abs(temp) > absak / finfo.tiny)))
                move = move.any(axis=-1, keepdims=True)     # one pivot per row, for every right-hand side (JAX's)
                if not move.any():
                    break
                ak, pert = np.where(move, ak + pert, ak), np.where(move, pert * 2, pert)
            tiny = (np.abs(ak) < finfo.tiny) & (ak != 0)
            temp, ak = np.where(tiny, temp / finfo.tiny, temp), np.where(tiny, ak / finfo.tiny, ak)
            y[..., k, :] = temp / ak
    return y


def _impl(dl, d, du, b, perturb_singular=False):
    b = np.asarray(b)
    return (perturbed if perturb_singular else gtsv)(dl, d, du, b).astype(b.dtype, copy=False)


def _product(dl, d, du, x):
    """a x for the tridiagonal a: d x + dl x shifted down one row + du x shifted up one row."""
    shape = aval(x).shape
    nd = len(shape)
    spread = tuple(range(nd - 1))

    def times(v, y):
        return ops.mul(ops.broadcast_in_dim(v, shape=shape, broadcast_dimensions=spread), y)

    keep = ((0, 0, 0),) * (nd - 2)
    zero = np.zeros((), aval(x).dtype)[()]
    below = ops.pad(x, zero, padding_config=keep + ((1, -1, 0), (0, 0, 0)))     # row i holds x[i - 1]
    above = ops.pad(x, zero, padding_config=keep + ((-1, 1, 0), (0, 0, 0)))     # row i holds x[i + 1]
    return ops.add(ops.add(times(d, x), times(dl, below)), times(du, above))


def _jvp(primals, tangents, perturb_singular=False):
    *diags, _ = primals
    *diags_dot, b_dot = tangents
    x = ops.tridiagonal_solve(*primals, perturb_singular=perturb_singular)
    if all(isinstance(t, Zero) for t in tangents):
        return x, Zero(aval(x))
    rhs = instantiate(b_dot)
    if not all(isinstance(t, Zero) for t in diags_dot):
        rhs = ops.sub(rhs, _product(*map(instantiate, diags_dot), x))
    return x, ops.tridiagonal_solve(*diags, rhs, perturb_singular=perturb_singular)


def _transpose(ct, dl, d, du, b, perturb_singular=False):
    if any(isinstance(x, UndefinedPrimal) for x in (dl, d, du)) or not isinstance(b, UndefinedPrimal):
        raise NotImplementedError("tridiagonal_solve is linear in b only")
    if isinstance(ct, Zero):
        return [None, None, None, None]
    nd = aval(d).ndim
    keep = ((0, 0, 0),) * (nd - 1)
    zero = np.zeros((), aval(d).dtype)[()]
    dl_t = ops.pad(du, zero, padding_config=keep + ((1, -1, 0),))       # a^T's subdiagonal: [0, du[:-1]]
    du_t = ops.pad(dl, zero, padding_config=keep + ((-1, 1, 0),))       # a^T's superdiagonal: [dl[1:], 0]
    return [None, None, None, ops.tridiagonal_solve(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


def _lower(k, outs, ins, perturb_singular=False):
    """gtsv per system on scratch copies of the diagonals (it overwrites them) and b copied into the output
    (row-major: LAPACKE transposes b where n > 1); NaN where a pivot is zero."""
    (out,), (dl, d, du, b) = outs, ins
    dtype, (m, n) = b.aval.dtype, b.aval.shape[-2:]
    scratch = lp.malloc(k, k.b.iop("mul", k.b.iop("mul", m, 3), dtype.itemsize))
    sub, mid, sup = (lp.offset(k, scratch, k.b.iop("mul", m, j), dtype) for j in range(3))
    vector = k.b.iop("mul", m, dtype.itemsize)
    shorter = k.b.iop("sub", vector, dtype.itemsize)
    lp.copy(k, out.ptr, b.ptr, lp.nbytes(k, b.aval))
    with lp.each_matrix(k, b.aval.shape) as i:
        lp.copy(k, sub, lp.offset(k, lp.item(k, dl, i, core=1).ptr, 1, dtype), shorter)
        lp.copy(k, mid, lp.item(k, d, i, core=1).ptr, vector)
        lp.copy(k, sup, lp.item(k, du, i, core=1).ptr, shorter)
        x = lp.item(k, out, i)
        info = lp.call(k, "gtsv", dtype, [f"i32 {lp.lapack_constant('ROW_MAJOR')}", *lp.ints(k, m, n), f"ptr {sub}",
                                          f"ptr {mid}", f"ptr {sup}", f"ptr {x.ptr}",
                                          *lp.ints(k, lp.at_least_1(k, n))])
        with k.f.when(lp.nonzero(k, info)):
            lp.fill(k, x, lp.NAN)
    lp.free(k, scratch)


def _available(eqn):
    """gtsv for the plain solve; the perturbed one (for inverse iteration) runs its NumPy impl: LAPACK's lagtf and
    lagts have no complex forms, and JAX's zero-matrix tolerance differs from theirs."""
    if eqn.params.get("perturb_singular"):
        return False
    b = eqn.inputs[3].aval
    return all(isinstance(s, int) and s > 0 for s in b.shape[-2:]) and lp.lapack_available(["gtsv"])(eqn)


tridiagonal_solve_p = Primitive("tridiagonal_solve", _shape, _impl, jvp=_jvp, transpose=_transpose,
                                lower=Kernel(_lower, available=_available))
tridiagonal_solve_p.set(batch=leading_batch_rule(tridiagonal_solve_p))
