"""Numerical calculus along an axis, with NumPy's formulas: gradient (central differences inside, one-sided
ones of order 1 or 2 at the edges, uniform or given coordinates), trapezoid, cumprod and unwrap."""
import numpy as np

from ..core.avals import normalize_axes, normalize_axis
from ..core.errors import ConcretizationError
from ..core.trace import Tracer, bind
from ..primitives import cumulative as cu
from ._base import asarray, astype, aval, promote, reject_out
from .elementwise_extra import as_inexact
from .reductions import _accumulator_dtype, cumsum, sum
from .shape_ops import _slice_axis, concatenate, diff, ravel, reshape
from .ufuncs import (
    absolute,
    add,
    bitwise_and,
    divide,
    equal,
    greater,
    less,
    multiply,
    negative,
    remainder,
    subtract,
    where_,
)


def cumprod(a, axis=None, dtype=None, out=None):
    """The running product along axis (of the flattened a when None); integers and bools in int64, as NumPy.
    Its derivative is JAX's (finite at zeros)."""
    reject_out("cumprod", out)
    a, acc = asarray(a), _accumulator_dtype(a, dtype)
    a = astype(a if axis is not None else ravel(a), aval(a).dtype if acc is None else acc)
    axis = normalize_axis(0 if axis is None else axis, aval(a).ndim, "cumprod", bools=False)
    if aval(a).dtype.kind == "c":     # the primitive is real: complex products by a scan of multiplications
        return cu.associative_scan(lambda x, y: [multiply(x[0], y[0])], [a], axis)[0]
    return bind(cu.cumprod_p, a, axis=axis, reverse=False)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y along axis by the trapezoidal rule, at spacing dx or at the coordinates x."""
    y = asarray(y)
    ndim = aval(y).ndim
    axis = normalize_axis(axis, ndim, "trapezoid")
    n = aval(y).shape[axis]
    if x is None:
        d = dx
    else:
        x = asarray(x)
        if aval(x).ndim == 1:
            d = reshape(diff(x), tuple(-1 if k == axis else 1 for k in range(ndim)))
        else:
            d = diff(x, axis=axis)
    pairs = as_inexact(add(_slice_axis(y, axis, min(1, n), n), _slice_axis(y, axis, 0, max(n - 1, 0))))  # NumPy's order
    return sum(divide(multiply(d, pairs), 2.0), axis)


def _spacing(f, varargs, axes):
    """Per axis: a scalar step, or the steps between given coordinates (a scalar again when they are concrete
    and evenly spaced, as NumPy treats them)."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"gradient: give one spacing, or one per axis ({len(axes)}), got {len(varargs)}")
    out = []
    for step, ax in zip(varargs, axes):
        if np.ndim(step) == 0:
            out.append(step)
            continue
        coords = asarray(step)
        if aval(coords).ndim != 1 or aval(coords).shape[0] != aval(f).shape[ax]:
            raise ValueError(f"gradient: the coordinates of axis {ax} must be 1-D of its length "
                             f"{aval(f).shape[ax]}, got {aval(coords).str_short()}")
        steps = diff(as_inexact(coords))
        uniform = not isinstance(steps, Tracer) and np.all(steps == steps[0])
        out.append(steps[0] if uniform else steps)
    return out


def _along(v, axis, ndim):
    return reshape(v, tuple(-1 if k == axis else 1 for k in range(ndim)))


def _combine(f, ax, parts, weights):
    """sum of weights[i] * f[parts[i]] along ax (the slices given as (start, stop))."""
    terms = [multiply(w, _slice_axis(f, ax, lo, hi)) for w, (lo, hi) in zip(weights, parts)]
    return add(add(terms[0], terms[1]), terms[2])


def _one_axis(f, ax, h, edge_order):
    n, ndim = aval(f).shape[ax], aval(f).ndim
    if n < edge_order + 1:
        raise ValueError(f"gradient: axis {ax} has {n} elements; at least edge_order + 1 = {edge_order + 1} are "
                         "needed")
    if np.ndim(h) == 0:
        inside = divide(subtract(_slice_axis(f, ax, 2, n), _slice_axis(f, ax, 0, n - 2)), multiply(2.0, h))
        h0 = hn = h1 = hn1 = h
    else:
        h1, h2 = _along(h[:-1], ax, ndim), _along(h[1:], ax, ndim)
        weights = (divide(-h2, multiply(h1, add(h1, h2))), divide(subtract(h2, h1), multiply(h1, h2)),
                   divide(h1, multiply(h2, add(h1, h2))))
        inside = _combine(f, ax, [(0, n - 2), (1, n - 1), (2, n)], weights)
        h0, h1, hn1, hn = h[0], h[1], h[-2], h[-1]
    if edge_order == 1:
        first = divide(subtract(_slice_axis(f, ax, 1, 2), _slice_axis(f, ax, 0, 1)), h0)
        last = divide(subtract(_slice_axis(f, ax, n - 1, n), _slice_axis(f, ax, n - 2, n - 1)), hn)
    else:
        s = add(h0, h1)
        first = _combine(f, ax, [(0, 1), (1, 2), (2, 3)], (
            divide(-add(multiply(2.0, h0), h1), multiply(h0, s)), divide(s, multiply(h0, h1)),
            divide(-h0, multiply(h1, s))))
        s = add(hn1, hn)
        last = _combine(f, ax, [(n - 3, n - 2), (n - 2, n - 1), (n - 1, n)], (
            divide(hn, multiply(hn1, s)), divide(-s, multiply(hn1, hn)),
            divide(add(multiply(2.0, hn), hn1), multiply(hn, s))))
    return concatenate([first, inside, last], ax)


def gradient(f, *varargs, axis=None, edge_order=1):
    """The derivative of the sampled f along each axis (a tuple of arrays for several axes), as np.gradient."""
    f = as_inexact(f)
    if edge_order not in (1, 2):
        raise ValueError(f"gradient: edge_order must be 1 or 2, got {edge_order!r}")
    axes = normalize_axes(axis, aval(f).ndim, "gradient", iterable=True)
    if axis is not None and not isinstance(axis, (tuple, list)):
        axes = (normalize_axis(axis, aval(f).ndim, "gradient"),)
    steps = _spacing(f, varargs, axes)
    out = [astype(_one_axis(f, ax, h, edge_order), aval(f).dtype) for ax, h in zip(axes, steps)]
    return out[0] if len(out) == 1 else tuple(out)


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """p with each jump along axis larger than discont (default period / 2) folded back by multiples of period,
    as NumPy's: the differences are wrapped into [-period/2, period/2) (a jump of exactly period / 2 upwards
    stays +period / 2) and the corrections summed."""
    p = asarray(p)
    if not isinstance(p, Tracer):
        p = np.asarray(p)
    if aval(p).ndim == 0:
        raise ValueError("unwrap: p must have rank >= 1, got a 0-d array")
    axis = normalize_axis(axis, aval(p).ndim, "unwrap")
    dd = diff(p, axis=axis)
    dd, period_ = promote(dd, period)
    if aval(dd).dtype.kind in "iu":
        if isinstance(period, Tracer):
            raise ConcretizationError("unwrap: an integer period must be concrete")
        high, ambiguous = int(period) // 2, int(period) % 2 == 0
    else:
        high, ambiguous = divide(period_, 2), True
    low = negative(high)
    folded = add(remainder(subtract(dd, low), period_), low)
    if ambiguous:
        folded = where_(bitwise_and(equal(folded, low), greater(dd, 0)), high, folded)
    correction = subtract(folded, dd)
    limit = divide(period_, 2) if discont is None else discont
    correction = where_(less(absolute(dd), limit), np.zeros((), aval(correction).dtype), correction)
    n = aval(p).shape[axis]
    p = astype(p, aval(dd).dtype)
    if n < 2:
        return p
    rest = add(_slice_axis(p, axis, 1, n), cumsum(correction, axis))
    return concatenate([_slice_axis(p, axis, 0, 1), rest], axis)
