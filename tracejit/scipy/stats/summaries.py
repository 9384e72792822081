"""jax.scipy.stats's summaries of a sample: rankdata, sem and mode, written on tracejit.numpy (so they trace,
batch and compile), with JAX's signatures and results."""
from collections import namedtuple

import numpy as np

from ... import numpy as tnp
from ...batching import vmap
from ...core.avals import DEFAULT_FLOAT, normalize_axis

ModeResult = namedtuple("ModeResult", "mode count")

_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def _nan_policy(name, nan_policy):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of {{'propagate', 'omit', 'raise'}}")
    if nan_policy != "propagate":
        raise NotImplementedError(f"{name}: nan_policy={nan_policy!r} is not implemented (as in JAX): check for "
                                  f"NaNs outside of {name}")


def _ranks(a, method):
    """The ranks (from 1) of a vector's values; all NaN where one is NaN."""
    n = a.shape[0]
    order = tnp.argsort(a, stable=True)
    inverse = tnp.argsort(order)       # (the inverse permutation)
    if method == "ordinal":
        ranks = (inverse + 1).astype(DEFAULT_FLOAT)
    else:
        ordered = a[order]
        starts = tnp.concatenate([tnp.ones(1, bool), ordered[1:] != ordered[:-1]])
        dense = tnp.cumsum(starts)[inverse]
        count = tnp.nonzero(starts, size=n + 1, fill_value=n)[0].astype(DEFAULT_FLOAT)
        ranks = {"dense": lambda: dense.astype(DEFAULT_FLOAT), "max": lambda: count[dense],
                 "min": lambda: count[dense - 1] + 1,
                 "average": lambda: 0.5 * (count[dense] + count[dense - 1] + 1)}[method]()
    return tnp.where(tnp.any(tnp.isnan(a)) if tnp.issubdtype(a.dtype, tnp.inexact) else False, np.nan, ranks)


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """The ranks of a's values (of the flattened array, or of each vector along axis), ties resolved by method
    ('average', 'min', 'max', 'dense' or 'ordinal'); float64, NaN wherever the vector holds a NaN."""
    _nan_policy("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method '{method}'")
    a = tnp.asarray(a)
    if axis is None:
        return _ranks(tnp.ravel(a), method)
    axis = normalize_axis(axis, a.ndim, "rankdata")
    rows = tnp.moveaxis(a, axis, -1)
    ranked = vmap(lambda r: _ranks(r, method))(tnp.reshape(rows, (-1, a.shape[axis])))
    return tnp.moveaxis(tnp.reshape(ranked, rows.shape), -1, axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean: std(ddof) / sqrt(n) along axis (of all values when None); with
    nan_policy='omit', of the values that are not NaN."""
    (b,) = tnp.ufuncs.promote(a, to_float=True)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return tnp.std(b, axis, ddof=ddof, keepdims=keepdims) / tnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = tnp.sum(~tnp.isnan(b), axis, keepdims=keepdims)
        return tnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / tnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")


def _mode(column):
    """(The most frequent value of a vector, the smallest of those tied; its count)."""
    ordered = tnp.sort(column)
    counts = (tnp.searchsorted(ordered, ordered, side="right") - tnp.searchsorted(ordered, ordered, side="left"))
    best = tnp.argmax(counts)
    return ordered[best], counts[best]


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """ModeResult(mode, count): the most frequent value along axis (of all values when None), the smallest of
    those tied, and how often it occurs."""
    _nan_policy("mode", nan_policy)
    x = tnp.atleast_1d(tnp.asarray(a))
    if axis is None:
        out_shape = (1,) * x.ndim if keepdims else ()
        x = tnp.ravel(x)
        axis = 0
    else:
        axis = normalize_axis(axis, x.ndim, "mode")
        out_shape = tuple(1 if k == axis else n for k, n in enumerate(x.shape) if keepdims or k != axis)
    if x.shape[axis] == 0:
        nothing = tnp.full(out_shape, np.nan, DEFAULT_FLOAT)
        return ModeResult(nothing, tnp.zeros(out_shape, DEFAULT_FLOAT))
    columns = tnp.reshape(tnp.moveaxis(x, axis, 0), (x.shape[axis], -1))
    values, counts = vmap(_mode, in_axes=1)(columns)
    return ModeResult(tnp.reshape(values, out_shape), tnp.reshape(counts, out_shape))
