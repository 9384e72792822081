"""jax.scipy.linalg's polar and qr_multiply, with JAX's semantics: polar by QDWH or the SVD, qr_multiply on the
Householder QR."""
import functools

import numpy as np

from .. import numpy as tnp
from ..batching import vmap
from ..core.errors import ShapeError
from ..lax import linalg as lax_linalg
from ..numpy import linalg as tla
from ..numpy._base import aval, promote


def _polar_2d(a, side, method, eps, max_iterations):
    m, n = aval(a).shape
    if method == "qdwh":
        if m >= n and side == "right":
            unitary, posdef, _, _ = lax_linalg.qdwh(a, eps=eps, max_iterations=max_iterations)
        elif m < n and side == "left":
            unitary, posdef, _, _ = lax_linalg.qdwh(tnp.conj(a).T, eps=eps, max_iterations=max_iterations)
            unitary, posdef = tnp.conj(unitary).T, tnp.conj(posdef).T
        else:
            raise NotImplementedError(f"polar: method='qdwh' only supports (m, n) matrices with m >= n for "
                                      f"side='right' and m < n for side='left', got {(m, n)} with side={side!r}")
    else:
        u, s, vh = tla.svd(a, full_matrices=False)
        s = s.astype(aval(u).dtype)
        unitary = u @ vh
        posdef = (tnp.conj(vh).T * s[None, :]) @ vh if side == "right" else (u * s[None, :]) @ tnp.conj(u).T
    return unitary, posdef


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """(u, p) with a = u p (side 'right', p (n, n)) or a = p u ('left', p (m, m)): u with orthonormal columns (or
    rows), p Hermitian positive semi-definite; by QDWH (as JAX, for m >= n with side 'right' and m < n with 'left')
    or by the SVD (method 'svd', any shape). Batched over leading axes."""
    a = tnp.asarray(a)
    if aval(a).ndim < 2:
        raise ValueError(f"polar: the input `a` must be at least a 2-D array, got shape {aval(a).shape}")
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"polar: unknown polar decomposition method {method!r} (expected 'qdwh' or 'svd')")
    if aval(a).dtype.kind not in "fc":
        a = a.astype(np.float64)
    fn = functools.partial(_polar_2d, side=side, method=method, eps=eps, max_iterations=max_iterations)
    for _ in aval(a).shape[:-2]:
        fn = vmap(fn)
    return fn(a)


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False, overwrite_c=False):
    """(Q c, R) for mode 'left' or (c Q, R) for 'right', with Q (m, k) and R (k, n) a's economic QR (k = min(m, n));
    conj(Q) with conjugate; a 1-D c is a column (left) or a row (right) and the product is 1-D. Pivoting is not
    implemented (tracejit's qr has none)."""
    if mode not in ("right", "left"):
        raise ValueError(f"qr_multiply: mode must be 'right' or 'left', got {mode!r}")
    if pivoting:
        raise NotImplementedError("qr_multiply: pivoting=True is not implemented")
    a, c = promote(tnp.asarray(a), tnp.asarray(c), to_float=True)
    if aval(a).ndim < 2:
        raise ShapeError(f"qr_multiply: a must be a matrix (..., m, n), got shape {aval(a).shape}")
    onedim = aval(c).ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = aval(a).shape[-2:]
    k = min(m, n)
    if mode == "left" and aval(c).shape[-2] != k:
        raise ValueError(f"qr_multiply: a has shape {aval(a).shape} so Q has {k} columns, but c has "
                         f"{aval(c).shape[-2]} rows (expected {k})")
    if mode == "right" and aval(c).shape[-1] != m:
        raise ValueError(f"qr_multiply: a has shape {aval(a).shape} so Q has {m} rows, but c has "
                         f"{aval(c).shape[-1]} columns (expected {m})")
    q, r = tla.qr(a, mode="reduced")
    if conjugate:
        q = tnp.conj(q)
    product = tnp.matmul(q, c) if mode == "left" else tnp.matmul(c, q)
    if onedim:
        product = tnp.reshape(product, (-1,))
    return product, r
