"""jax.scipy.linalg's special matrices: toeplitz, hankel, circulant, companion, leslie, fiedler,
convolution_matrix (batched over leading axes, as JAX's), hilbert, helmert, hadamard and dft. Each entry is
gathered from its vector by an index computed from its position, so they trace, differentiate and batch."""
import math

import numpy as np

from .. import numpy as tnp
from ..core.avals import DEFAULT_FLOAT, canonical_dtype, index_arg
from ..numpy.indexing import take_clamped


def _vectors(name, *xs):
    """The arguments as arrays of at least one axis, in their common dtype, their batch axes broadcast."""
    xs = [tnp.atleast_1d(tnp.asarray(x)) for x in xs]
    dtype = tnp.result_type(*xs)
    batch = tnp.broadcast_shapes(*[x.shape[:-1] for x in xs])
    return [tnp.broadcast_to(x.astype(dtype), batch + x.shape[-1:]) for x in xs]


def _gather(values, index):
    """values[..., index] for a static 2-d integer index: a matrix per vector of the batch."""
    return take_clamped(values, tnp.asarray(index), axis=-1)


def toeplitz(c, r=None):
    """The matrix with first column c and first row r (r[0] is ignored; default conj(c)), constant along its
    diagonals."""
    c = tnp.asarray(c)
    c, r = _vectors("toeplitz", c, tnp.conjugate(c) if r is None else r)
    m, n = c.shape[-1], r.shape[-1]
    values = tnp.concatenate([c[..., ::-1], r[..., 1:]], axis=-1)
    if not m or not n:
        return tnp.zeros(c.shape[:-1] + (m, n), c.dtype)
    return _gather(values, m - 1 - np.arange(m)[:, None] + np.arange(n)[None, :])


def hankel(c, r=None):
    """The matrix with first column c and last row r (r[0] is ignored; default zeros), constant along its
    anti-diagonals."""
    c = tnp.asarray(c)
    if c.ndim == 0 or r is not None and tnp.ndim(r) == 0:
        raise ValueError("hankel: c and r must be at least 1-dimensional, got a scalar.")
    c, r = _vectors("hankel", c, tnp.zeros_like(c) if r is None else r)
    m, n = c.shape[-1], r.shape[-1]
    if not m or not n:
        return tnp.zeros(c.shape[:-1] + (m, n), c.dtype)
    return _gather(tnp.concatenate([c, r[..., 1:]], axis=-1), np.arange(m)[:, None] + np.arange(n)[None, :])


def circulant(c):
    """The matrix whose columns are c rotated down by their index."""
    (c,) = _vectors("circulant", c)
    n = c.shape[-1]
    return _gather(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % n)


def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest power first): its first row
    -a[1:] / a[0], ones below the diagonal."""
    (a,) = tnp.ufuncs.promote(tnp.atleast_1d(a), to_float=True)
    if a.shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got shape {a.shape}.")
    m = a.shape[-1] - 1
    first = -a[..., 1:] / a[..., :1]
    below = tnp.eye(m, k=-1, dtype=a.dtype)
    return tnp.where(np.arange(m)[:, None] == 0, first[..., None, :], below)


def leslie(f, s):
    """The Leslie matrix: fecundities f in its first row, survival rates s below the diagonal."""
    f, s = tnp.atleast_1d(tnp.asarray(f)), tnp.atleast_1d(tnp.asarray(s))
    if f.shape[-1] < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got shape {f.shape}.")
    if s.shape[-1] != f.shape[-1] - 1:
        raise ValueError(f"Incorrect lengths for f and s. The length of s along the last axis must be one less than "
                         f"the length of f; got f shape {f.shape} and s shape {s.shape}.")
    dtype = tnp.result_type(f, s)
    n = f.shape[-1]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    padded = tnp.concatenate([s, tnp.zeros(s.shape[:-1] + (1,), s.dtype)], axis=-1).astype(dtype)
    below = tnp.where(i == j + 1, padded[..., None, :], tnp.zeros((), dtype))
    return tnp.where(i == 0, f.astype(dtype)[..., None, :], below)


def fiedler(a):
    """|a[i] - a[j]|."""
    a = tnp.atleast_1d(tnp.asarray(a))
    return tnp.abs(a[..., :, None] - a[..., None, :])


def convolution_matrix(a, n, mode="full"):
    """The Toeplitz matrix whose product with a vector of length n is its convolution with a ('full', 'valid' or
    'same', as numpy.convolve)."""
    n = index_arg(n, "convolution_matrix: n")
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    a = tnp.asarray(a)
    if a.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    widths = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
    padded, reversed_padded = tnp.pad(a, widths), tnp.pad(a[..., ::-1], widths)
    total = m + n - 1
    trim = min(n, m) - 1
    begin, end = {"same": (trim // 2, trim - trim // 2), "valid": (trim, trim), "full": (0, 0)}[mode]
    return toeplitz(padded[..., begin:total - end], reversed_padded[..., total - n - begin:total - begin])


def hilbert(n):
    """1 / (i + j + 1), float64."""
    a = np.arange(index_arg(n, "hilbert: n"), dtype=DEFAULT_FLOAT)[:, None]
    return tnp.asarray(1 / (a + a.T + 1))


def helmert(n, full=False):
    """The Helmert matrix (n - 1 by n; n by n with full, its first row 1 / sqrt(n)): orthonormal rows."""
    n = index_arg(n, "helmert: n")
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i, j = np.arange(n - 1)[:, None], np.arange(n)[None, :]
    k = (i + 1).astype(DEFAULT_FLOAT)
    denom = np.sqrt(k * (k + 1))
    h = np.where(j <= i, 1.0 / denom, np.where(j == i + 1, -k / denom, 0.0))
    return tnp.asarray(np.concatenate([np.full((1, n), 1.0 / np.sqrt(n)), h]) if full else h)


def hadamard(n, dtype=int):
    """The Sylvester Hadamard matrix of order n (a power of 2): entries +-1, orthogonal rows."""
    n = index_arg(n, "hadamard: n")
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = np.ones((1, 1), canonical_dtype(dtype))
    for _ in range(int(math.log2(n))):
        h = np.block([[h, h], [h, -h]])
    return tnp.asarray(h)


def dft(n, scale=None, *, dtype=None):
    """The discrete Fourier transform matrix exp(-2 pi i j k / n), divided by sqrt(n) or n with scale 'sqrtn' or
    'n' (complex128 unless dtype says another complex type)."""
    n = index_arg(n, "dft: n")
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    dtype = np.dtype(np.complex128) if dtype is None else canonical_dtype(dtype)
    if dtype.kind != "c":
        raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    a = np.arange(n)
    omegas = np.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    return tnp.asarray((omegas / {None: 1, "sqrtn": np.sqrt(n), "n": n}[scale]).astype(dtype))


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial with coefficients a (..., N) in descending powers: a
    pentadiagonal (N - 1) x (N - 1) matrix whose eigenvalues are the polynomial's roots, as scipy's (no check that
    a[0] != 0: a zero leading coefficient gives inf or NaN)."""
    a = tnp.atleast_1d(tnp.asarray(a))
    if a.dtype.kind not in "fc":
        a = a.astype(DEFAULT_FLOAT)
    n = a.shape[-1] - 1
    if n < 0:
        raise ValueError(f"fiedler_companion: needs a with a nonzero last axis, got shape {a.shape}")
    a = a / a[..., :1]
    if n == 0:
        return tnp.zeros(a.shape[:-1] + (0, 0), a.dtype)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    even = i % 2 == 0
    # which coefficient (its index; 0 for a 1, -1 for a zero) sits at each place, as scipy.linalg builds it
    index = np.select([(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & even, (j == i + 2) & even,
                       (j == i - 1) & even & (i >= 2), (j == i - 2) & ~even & (i >= 3)],
                      [1, 0, np.minimum(i + 2, n), 0, np.minimum(i + 1, n), 0], default=-1)
    values = tnp.concatenate([-a[..., 1:], tnp.ones_like(a[..., :1]), tnp.zeros_like(a[..., :1])], axis=-1)
    # values[..., k - 1] = -a[k] for k >= 1, then 1 and 0: an index k maps to k - 1, 0 to n, -1 to n + 1
    return _gather(values, np.where(index > 0, index - 1, np.where(index == 0, n, n + 1)))


def _binomials(n):
    """The n x n matrix of binomial coefficients C(i, j) (0 above the diagonal), exact integers as Python's."""
    return np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], dtype=object)


def _kind(name, kind):
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"{name}: kind must be one of 'symmetric', 'lower' or 'upper', got {kind!r}")
    return kind


def pascal(n, kind=None):
    """The Pascal matrix of order n: binomial coefficients C(i + j, i) ('symmetric', the default), C(i, j)
    ('lower') or its transpose ('upper'). Float32, as JAX's (whose entries come from lgamma and are approximate;
    these are the exact integers rounded once, as SciPy's exact ones)."""
    n, kind = index_arg(n, "pascal: n"), _kind("pascal", kind)
    lower = _binomials(n)
    out = {"lower": lower, "upper": lower.T, "symmetric": lower.dot(lower.T) if n else lower}[kind]
    return tnp.asarray(np.asarray(out.astype(float) if n else np.zeros((0, 0)), np.float32))


def invpascal(n, kind=None):
    """The inverse of pascal(n, kind): (-1)^(i - j) C(i, j) for 'lower', its transpose for 'upper', their product
    for 'symmetric'; exact integers rounded to float64 once."""
    n, kind = index_arg(n, "invpascal: n"), _kind("invpascal", kind)
    signs = np.array([[(-1) ** ((i + j) % 2) for j in range(n)] for i in range(n)], dtype=object)
    lower = signs * _binomials(n) if n else np.zeros((0, 0), dtype=object)
    out = {"lower": lower, "upper": lower.T, "symmetric": lower.T.dot(lower) if n else lower}[kind]
    return tnp.asarray(np.asarray(out.astype(float), DEFAULT_FLOAT))


def invhilbert(n):
    """The inverse of the Hilbert matrix of order n, (-1)^(i + j) (i + j + 1) C(n + i, n - j - 1) C(n + j,
    n - i - 1) C(i + j, i)^2, exact integers rounded to float64 once (SciPy's exact=False result)."""
    n = index_arg(n, "invhilbert: n")
    out = [[(-1) ** ((i + j) % 2) * (i + j + 1) * math.comb(n + i, n - j - 1) * math.comb(n + j, n - i - 1)
            * math.comb(i + j, i) ** 2 for j in range(n)] for i in range(n)]
    return tnp.asarray(np.array(out, dtype=float).reshape(n, n).astype(DEFAULT_FLOAT))
