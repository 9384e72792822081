"""tracejit.scipy.cluster.vq: jax.scipy.cluster.vq.vq on tracejit.numpy (traces, batches, and the distances
differentiate in the observations and the code book)."""
from ... import numpy as tnp
from ...numpy._base import aval, promote_inexact

__all__ = ["vq"]


def vq(obs, code_book, check_finite=True):
    """(code, dist): for each observation (a row of obs, or an entry of a 1-D obs) the index of the nearest code
    (a row of code_book; the first on ties) and its Euclidean distance, as scipy.cluster.vq.vq. check_finite is
    accepted and unused, as in JAX. The distances are the norms of the differences, not expanded as
    |a|^2 - 2 a.b + |b|^2, which would cancel digits for nearby points."""
    del check_finite
    obs, code_book = promote_inexact(obs, code_book)
    if aval(obs).ndim != aval(code_book).ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if aval(obs).ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if aval(obs).ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    if aval(obs).shape[1] != aval(code_book).shape[1]:
        raise ValueError(f"obs has {aval(obs).shape[1]} features per observation but code_book has "
                         f"{aval(code_book).shape[1]} per code")
    dist = tnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = tnp.argmin(dist, axis=-1)
    return code, tnp.take_along_axis(dist, code[:, None], axis=-1, mode="clip")[:, 0]
