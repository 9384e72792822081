"""jax.ops: reductions of data's rows by segment id (segment_sum, segment_max, segment_min, segment_prod), as x.at
updates of an array of num_segments rows: ids outside [0, num_segments) are dropped, an empty segment holds the
reduction's identity (0, -inf or the smallest integer, +inf or the largest, 1), as in JAX."""
import numpy as np

from .core.trace import Tracer
from .numpy import asarray, full
from .numpy.at_updates import _AtIndexer
from .primitives.base import identity

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _segments(name, identity, update, data, segment_ids, num_segments, mode):
    data, ids = asarray(data), asarray(segment_ids)
    if ids.dtype.kind not in "iu" or ids.ndim != 1 or data.ndim < 1 or ids.shape[0] != data.shape[0]:
        raise TypeError(f"{name}: segment_ids must be integers, one per row of data ({data.shape[:1]}), got "
                        f"{ids.dtype} of shape {ids.shape}")
    if num_segments is None:
        if isinstance(ids, Tracer):
            raise TypeError(f"{name}: num_segments is needed when segment_ids are traced (the output's size depends "
                            "on it)")
        num_segments = int(np.max(ids, initial=-1)) + 1
    if mode not in (None, "drop", "fill", "promise_in_bounds"):
        raise NotImplementedError(f"{name}: mode {mode!r} is not supported; out-of-range ids are dropped")
    rows = full((int(num_segments),) + tuple(data.shape[1:]), identity(data.dtype), data.dtype)
    return getattr(_AtIndexer(rows)[ids], update)(data)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    return _segments("segment_sum", lambda dtype: 0, "add", data, segment_ids, num_segments, mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    return _segments("segment_max", lambda dtype: identity(dtype, False), "max", data, segment_ids, num_segments, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    return _segments("segment_min", lambda dtype: identity(dtype, True), "min", data, segment_ids, num_segments, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                 bucket_size=None, mode=None):
    """(The ids must be concrete: x.at[idx].multiply's.)"""
    return _segments("segment_prod", lambda dtype: 1, "multiply", data, segment_ids, num_segments, mode)
