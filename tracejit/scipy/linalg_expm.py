"""jax.scipy.linalg's expm (scaling and squaring with Pade approximants, as JAX's) and expm_frechet (its jvp, as
JAX computes it)."""
import numpy as np

from .. import lax
from .. import numpy as tnp
from ..batching import vmap
from ..core.trace import bind
from ..derivatives import jvp
from ..numpy import linalg as tla
from ..numpy._base import aval, promote
from ..primitives import linalg_solve as solves
from ._args import square_matrices

# ---------------------------------------------------------------------------------------------------- expm

_PADE = {3: (120., 60., 12., 1.), 5: (30240., 15120., 3360., 420., 30., 1.),
         7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
         9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960., 90., 1.),
         13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
              10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.)}
# (largest 1-norm of the scaled matrix, the 1-norms below which Pade 3, 5, 7 (9) suffice), per dtype, as JAX's
_EXPM_BOUNDS = {np.dtype("float64"): (5.371920351148152, (1.495585217958292e-2, 2.539398330063230e-1,
                                                          9.504178996162932e-1, 2.097847961257068e0), (3, 5, 7, 9, 13)),
                np.dtype("float32"): (3.925724783138660, (4.258730016922831e-1, 1.880152677804762e0), (3, 5, 7))}


def _pade(degree):
    """The (U, V) parts of the degree's Pade approximant: exp(A) ~ (V - U)^-1 (V + U)."""
    b = _PADE[degree]

    def uv(a):
        ident = tnp.eye(aval(a).shape[0], dtype=aval(a).dtype)
        powers = {2: tnp.matmul(a, a)}
        for p in range(4, min(degree, 6) + 1, 2):
            powers[p] = tnp.matmul(powers[p - 2], powers[2])
        if degree == 13:
            a2, a4, a6 = powers[2], powers[4], powers[6]
            u_inner = (tnp.matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                       + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
            v = tnp.matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident
            return tnp.matmul(a, u_inner), v
        for p in range(8, degree + 1, 2):
            powers[p] = tnp.matmul(powers[p - 2], powers[2])
        u_inner, v = b[1] * ident, b[0] * ident
        for p in range(2, degree, 2):
            u_inner, v = u_inner + b[p + 1] * powers[p], v + b[p] * powers[p]
        return tnp.matmul(a, u_inner), v
    return uv


def expm(A, *, upper_triangular=False, max_squarings=16):
    """exp(A) by scaling and squaring with Pade approximants (Higham 2005), as JAX's; NaN when A needs more than
    max_squarings squarings."""
    (A,) = square_matrices("expm", A)
    shape = aval(A).shape
    if len(shape) > 2:
        flat = tnp.reshape(A, (-1,) + shape[-2:])
        one = vmap(lambda m: expm(m, upper_triangular=upper_triangular, max_squarings=max_squarings))
        return tnp.reshape(one(flat), shape)
    real_dtype = np.finfo(aval(A).dtype).dtype if aval(A).dtype.kind in "fc" else None
    if real_dtype not in _EXPM_BOUNDS:
        raise TypeError(f"expm: needs float32, float64, complex64 or complex128 matrices, got {aval(A).dtype}")
    maxnorm, bounds, degrees = _EXPM_BOUNDS[real_dtype]
    norm1 = tla.norm(A, 1)
    squarings = tnp.maximum(0.0, tnp.floor(tnp.log2(norm1 / maxnorm)))
    scaled = A / tnp.exp2(squarings).astype(aval(A).dtype)
    which = tnp.sum(tnp.less_equal(np.asarray(bounds, real_dtype), norm1)).astype(np.int32)
    u, v = lax.switch(which, [_pade(d) for d in degrees], scaled)
    p, q = u + v, v - u
    r = (bind(solves.triangular_solve_p, q, p, left_side=True, lower=False, transpose_a=False, conjugate_a=False,
              unit_diagonal=False) if upper_triangular else tla.solve(q, p))

    def square_while_needed(carry, i):
        return lax.cond(i < squarings, lambda x: tnp.matmul(x, x), lambda x: x, carry), None

    r, _ = lax.scan(square_while_needed, r, np.arange(max_squarings, dtype=real_dtype))
    return tnp.where(squarings > max_squarings, np.nan, r)


def expm_frechet(A, E, *, method=None, compute_expm=True, check_finite=True):
    """(expm(A), L(A, E)), or L(A, E) alone without compute_expm: the Frechet derivative of the matrix exponential
    at A in the direction E, computed as expm's jvp (JAX's way; method is unused, as in JAX)."""
    a, e = tnp.asarray(A), tnp.asarray(E)
    for name, x in (("A", a), ("E", e)):
        if aval(x).ndim < 2 or aval(x).shape[-1] != aval(x).shape[-2]:
            raise ValueError(f"expm_frechet: expected {name} to be a (batched) square matrix, got "
                             f"{name}.shape={aval(x).shape}")
    if aval(a).shape != aval(e).shape:
        raise ValueError(f"expm_frechet: expected A and E to be the same shape, got A.shape={aval(a).shape} "
                         f"E.shape={aval(e).shape}")
    a, e = promote(a, e, to_float=True)
    value, derivative = jvp(lambda x: expm(x, upper_triangular=False, max_squarings=16), (a,), (e,))
    return (value, derivative) if compute_expm else derivative
