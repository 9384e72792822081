"""Counting values into bins: bincount (length= under a trace, as JAX's), digitize, histogram,
histogram_bin_edges, histogramdd and histogram2d, on searchsorted and one scatter-add (so derivatives reach the
weights)."""
import builtins

import numpy as np

from ..core.avals import DEFAULT_INT, index_arg
from ..core.trace import Tracer
from ._base import asarray, astype, aval, promote
from .creation import linspace
from .indexing import check_search_method, searchsorted
from .nonzero import data_dependent_size, scatter_sum
from .reductions import max, min, sum
from .shape_ops import diff, flip, ravel, reshape
from .ufuncs import add, bitwise_or, divide, equal, greater, isnan, less, maximum, multiply, subtract, where_

builtins_range = builtins.range     # `range` is an argument below, as in NumPy


def _weights_like(x, weights, name):
    w = asarray(weights)
    if aval(w).shape != aval(x).shape:
        raise ValueError(f"{name}: weights of shape {aval(w).shape} must have the shape of the data, {aval(x).shape}")
    return w


def bincount(x, weights=None, minlength=0, *, length=None):
    """How often each value 0, 1, ... occurs in the non-negative integers x (or the sum of their weights, as
    float64 as NumPy's). The length is max(x) + 1 (at least minlength) for concrete x; length= fixes it (values
    beyond it dropped, traced negative ones counted at 0, as JAX's)."""
    x = asarray(x)
    if aval(x).ndim != 1 or aval(x).dtype.kind not in "biu":
        raise TypeError(f"bincount: x must be a 1-D array of non-negative integers, got {aval(x).str_short()}")
    minlength = index_arg(minlength, "bincount: minlength")
    if minlength < 0:
        raise ValueError(f"bincount: minlength must not be negative, got {minlength}")
    if not isinstance(x, Tracer) and np.any(np.asarray(x) < 0):
        raise ValueError("bincount: x must have no negative elements")
    length = data_dependent_size("bincount", x, length, keyword="length",
                                 count=lambda: np.max([minlength, int(np.max(x)) + 1 if np.size(x) else 0]))
    if weights is None:
        values = np.ones((), DEFAULT_INT)
    else:
        values = _weights_like(x, weights, "bincount")
        values = promote(values, np.zeros((), np.float64))[0]
    at = maximum(x, 0) if aval(x).dtype.kind == "i" else x      # (the kernel reads indices of any integer type)
    return scatter_sum(length, astype(at, np.uint8) if aval(x).dtype.kind == "b" else at, values)


def _monotonic(bins, name):
    """+1 for increasing concrete bins, -1 for decreasing ones (NumPy's ValueError otherwise); None if traced."""
    if isinstance(bins, Tracer):
        return None
    steps = np.diff(np.asarray(bins))
    if np.all(steps >= 0):
        return 1
    if np.all(steps <= 0):
        return -1
    raise ValueError(f"{name}: bins must be monotonically increasing or decreasing")


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin of each x: bins[i-1] <= x < bins[i] for increasing bins (<, <= with right=True),
    the mirror for decreasing ones; a searchsorted (JAX's method= names searchsorted's algorithm)."""
    check_search_method("digitize", "scan" if method is None else method)
    x, bins = promote(x, bins)
    if aval(bins).ndim != 1:
        raise ValueError(f"digitize: bins must be 1-D, got {aval(bins).str_short()}")
    if aval(x).dtype.kind == "c":
        raise TypeError("digitize: complex values have no order")
    side = "left" if right else "right"
    n = aval(bins).shape[0]
    direction = _monotonic(bins, "digitize")
    rising = searchsorted(bins, x, side)
    falling = subtract(n, searchsorted(flip(bins, 0), x, side))
    if direction is None:
        return where_(greater(bins[-1], bins[0]) if n else True, rising, falling) if n else rising
    return rising if direction > 0 else falling


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The bin edges histogram uses: `bins` + 1 equal steps over range (or the data's span, widened by 0.5 each
    way when it is one value), or the given increasing edges."""
    a = ravel(asarray(a))
    if isinstance(bins, str):
        raise NotImplementedError(f"histogram: bins={bins!r}: estimated bin counts are not supported; give a "
                                  "number of bins or the edges")
    if np.ndim(bins) == 1 or isinstance(bins, Tracer):
        edges = asarray(bins)
        if aval(edges).ndim != 1:
            raise ValueError(f"histogram: bins must be an integer or 1-D edges, got {aval(edges).str_short()}")
        if not isinstance(edges, Tracer) and np.any(np.diff(edges) < 0):
            raise ValueError("histogram: bins must increase monotonically, when an array")
        return edges
    count = index_arg(bins, "histogram: bins")
    if count < 1:
        raise ValueError(f"histogram: bins must be positive, when an integer, got {count}")
    dtype = np.float64 if aval(a).dtype.kind not in "f" else aval(a).dtype
    if range is not None:
        first, last = range
        if not isinstance(first, Tracer) and not isinstance(last, Tracer) and not first <= last:
            raise ValueError(f"histogram: range must be (min, max) with min <= max, got {range!r}")
    elif aval(a).shape[0] == 0:
        first, last = 0.0, 1.0
    else:
        first, last = min(a), max(a)
        if not isinstance(a, Tracer) and not np.isfinite([first, last]).all():
            raise ValueError(f"histogram: the data's range [{first}, {last}] is not finite; give range=")
    first, last = astype(asarray(first), np.float64), astype(asarray(last), np.float64)   # NumPy's, in float64
    same = equal(first, last)
    return linspace(where_(same, subtract(first, 0.5), first), where_(same, add(last, 0.5), last), count + 1,
                    dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """(counts per bin, edges), as np.histogram: bins are half-open but the last, which holds its upper edge;
    values outside the edges (and NaNs) are not counted; density divides by the total and the widths."""
    data = asarray(a)
    a = ravel(data)
    edges = histogram_bin_edges(a, bins, range)
    n = aval(edges).shape[0] - 1
    a_, e = promote(a, edges)
    index = subtract(searchsorted(e, a_, "right"), 1)
    index = where_(equal(a_, e[-1]), n - 1, index)
    outside = bitwise_or(bitwise_or(less(a_, e[0]), greater(a_, e[-1])), isnan(a_))
    values = np.ones((), DEFAULT_INT) if weights is None else ravel(_weights_like(data, weights, "histogram"))
    counts = scatter_sum(n, where_(outside, n, index), values)
    if density:
        counts = astype(counts, np.float64)
        counts = divide(divide(counts, astype(diff(edges), np.float64)), sum(counts))
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """(counts, [edges per dimension]) of the points sample (an (N, D) array of rows, or a sequence of D coordinate
    arrays), as np.histogramdd: per dimension a number of bins or the edges, and a range; counts in float64."""
    if isinstance(sample, (list, tuple)):
        coords = [ravel(asarray(c)) for c in sample]
    else:
        sample = asarray(sample)
        if aval(sample).ndim == 1:
            sample = sample[:, None]
        if aval(sample).ndim != 2:
            raise ValueError(f"histogramdd: sample must be an (N, D) array, got {aval(sample).str_short()}")
        coords = [sample[:, d] for d in builtins_range(aval(sample).shape[1])]
    dims = len(coords)
    if isinstance(bins, (list, tuple)) or (np.ndim(bins) == 1 and not isinstance(bins, Tracer)):
        if len(bins) != dims:
            raise ValueError(f"histogramdd: bins must give one entry per dimension ({dims}), got {len(bins)}")
        per_dim = list(bins)
    else:
        per_dim = [bins] * dims
    ranges = [None] * dims if range is None else list(range)
    if len(ranges) != dims:
        raise ValueError(f"histogramdd: range must give one (min, max) or None per dimension ({dims})")
    edges = [histogram_bin_edges(c, b, r) for c, b, r in zip(coords, per_dim, ranges)]
    counts = [aval(e).shape[0] - 1 for e in edges]
    flat, outside = np.zeros((), DEFAULT_INT), False
    for c, e, n in zip(coords, edges, counts):
        c_, e_ = promote(c, e)
        index = where_(equal(c_, e_[-1]), n - 1, subtract(searchsorted(e_, c_, "right"), 1))
        outside = bitwise_or(outside, bitwise_or(bitwise_or(less(c_, e_[0]), greater(c_, e_[-1])), isnan(c_)))
        flat = add(multiply(flat, n), index)
    total = int(np.prod(counts))
    values = np.ones((), np.float64) if weights is None else promote(ravel(asarray(weights)), np.zeros(()))[0]
    hist = scatter_sum(total, where_(outside, total, flat), values)
    hist = reshape(astype(hist, np.float64) if aval(hist).dtype.kind != "c" else hist, tuple(counts))
    if density:
        hist = divide(hist, sum(hist))
        for d, e in enumerate(edges):
            widths = reshape(astype(diff(e), np.float64), tuple(-1 if k == d else 1 for k in builtins_range(dims)))
            hist = divide(hist, widths)
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """(counts, x edges, y edges) of the points (x, y): histogramdd of two coordinates; bins is a number or edges
    for both, or one entry for each."""
    if not isinstance(bins, (list, tuple)) and np.ndim(bins) == 1 and len(bins) != 2 or isinstance(bins, Tracer):
        bins = [bins, bins]
    hist, (x_edges, y_edges) = histogramdd([x, y], bins, range, weights, density)
    return hist, x_edges, y_edges
