"""Functions of functions and of index grids: vectorize, apply_along_axis, apply_over_axes and fromfunction (on
tracejit's vmap, as JAX's, so they compose with jit and grad); indices, ix_, mgrid, ogrid, s_ and index_exp;
logspace and geomspace."""
import functools
import re

import numpy as np

from ..core.avals import DEFAULT_INT, broadcast_shapes, canonical_dtype, index_arg, normalize_axis
from ..core.errors import ConcretizationError
from ..core.trace import Tracer
from ._base import asarray, astype, aval, broadcast_to_shape, normalize_shape, promote
from .creation import arange, linspace
from .shape_ops import expand_dims, moveaxis, reshape, transpose
from .ufuncs import absolute, divide, equal, floor, log10, multiply, power, sign, where_


def _vmap(fun, in_axes=0, out_axes=0):
    from ..batching import vmap  # the transformation sits above tracejit.numpy, which it uses
    return vmap(fun, in_axes=in_axes, out_axes=out_axes)


# ------------------------------------------------------------------------------------------- vectorize

_CORE = re.compile(r"\(([^()]*)\)")


def _parse_signature(signature):
    """'(m,n),(n)->(m)' as ([('m', 'n'), ('n',)], [('m',)])."""
    if not isinstance(signature, str) or signature.count("->") != 1:
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r}")
    parts = []
    for side in signature.split("->"):
        cores = _CORE.findall(side)
        if re.sub(r"\s", "", side) != ",".join(f"({c})" for c in cores).replace(" ", ""):
            raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r}")
        parts.append([tuple(d.strip() for d in c.split(",") if d.strip()) for c in cores])
    return parts


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """pyfunc mapped over the leading (loop) axes of its array arguments, broadcast together, with vmap. With a
    gufunc signature such as '(m,n),(n)->(m)', each call sees the trailing core axes it names; without one, each
    sees scalars. excluded: positions (ints) or keyword names passed through unmapped; other keyword arguments
    are passed through unmapped too."""
    if any(not isinstance(e, (int, str)) for e in excluded):
        raise TypeError(f"vectorize: excluded must hold ints and strings, got {excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"vectorize: excluded positions must be non-negative, got {excluded!r}")
    cores = _parse_signature(signature) if signature is not None else None

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        fixed = {i: a for i, a in enumerate(args) if i in excluded or a is None}
        mapped = [asarray(a) for i, a in enumerate(args) if i not in fixed]

        def call(*xs):
            xs, full = list(xs), []
            for i in range(len(args)):
                full.append(fixed[i] if i in fixed else xs.pop(0))
            return pyfunc(*full, **kwargs)
        in_cores = [()] * len(mapped) if cores is None else cores[0]
        if len(in_cores) != len(mapped):
            raise TypeError(f"vectorize: the signature {signature!r} has {len(in_cores)} inputs, but the function "
                            f"was called with {len(mapped)} mapped arguments")
        sizes, loops = {}, []
        for k, (x, core) in enumerate(zip(mapped, in_cores)):
            shape = aval(x).shape
            if len(shape) < len(core):
                raise ValueError(f"vectorize: argument {k} of shape {shape} has fewer axes than its core dimensions "
                                 f"{core} in the signature {signature!r}")
            for name, size in zip(core, shape[len(shape) - len(core):]):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"vectorize: core dimension {name!r} has sizes {sizes[name]} and {size}")
            loops.append(shape[:len(shape) - len(core)])
        loop = broadcast_shapes(*loops, op="vectorize") if loops else ()
        mapped = [broadcast_to_shape(x, tuple(loop) + aval(x).shape[len(lp):]) for x, lp in zip(mapped, loops)]
        fun = call if cores is None else _checked(call, cores[1], sizes, signature)
        for _ in loop:
            fun = _vmap(fun)
        return fun(*mapped)
    return wrapped


def _checked(fun, out_cores, sizes, signature):
    """fun, with its outputs checked against the signature's output core dimensions."""
    def checked(*xs):
        out = fun(*xs)
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) != len(out_cores):
            raise ValueError(f"vectorize: the function returned {len(outs)} outputs; the signature {signature!r} "
                             f"says {len(out_cores)}")
        for o, core in zip(outs, out_cores):
            shape = aval(asarray(o)).shape
            expected = tuple(sizes.get(d, s) for d, s in zip(core, shape))
            if len(shape) != len(core) or shape != expected:
                raise ValueError(f"vectorize: an output of shape {shape} does not match the core dimensions {core} "
                                 f"of the signature {signature!r}")
        return out
    return checked


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d(slice, *args, **kwargs) on each 1-D slice of arr along axis; the axes of its result replace axis
    (vmap over the other axes, as JAX's)."""
    arr = asarray(arr)
    ndim = aval(arr).ndim
    axis = normalize_axis(axis, ndim, "apply_along_axis")
    fun = functools.partial(_call_on_slice, func1d, args, kwargs)
    for _ in range(ndim - 1):
        fun = _vmap(fun)
    out = asarray(fun(moveaxis(arr, axis, -1)))
    core = aval(out).ndim - (ndim - 1)
    order = list(range(axis)) + list(range(ndim - 1, ndim - 1 + core)) + list(range(axis, ndim - 1))
    return transpose(out, order)


def _call_on_slice(func1d, args, kwargs, x):
    return func1d(x, *args, **kwargs)


def apply_over_axes(func, a, axes):
    """a reduced by func(a, axis) over each axis in turn, the axis kept (with size 1) where func drops it."""
    a = asarray(a)
    for axis in np.atleast_1d(np.asarray(axes)).tolist():
        axis = normalize_axis(axis, aval(a).ndim, "apply_over_axes")
        b = asarray(func(a, axis))
        if aval(b).ndim == aval(a).ndim - 1:
            b = expand_dims(b, axis)
        elif aval(b).ndim != aval(a).ndim:
            raise ValueError(f"apply_over_axes: func returned an array of rank {aval(b).ndim} for one of rank "
                             f"{aval(a).ndim}; it must keep the axis or drop it")
        a = b
    return a


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function(i, j, ..., **kwargs) at every index of shape (indices of dtype), mapped with vmap as JAX's, so
    that function may be written for scalars."""
    shape = normalize_shape(shape, "fromfunction: shape")
    fun = functools.partial(_call_with, function, kwargs)
    for i in reversed(range(len(shape))):
        fun = _vmap(fun, in_axes=tuple(0 if k == i else None for k in range(len(shape))))
    return fun(*[arange(n, dtype=canonical_dtype(dtype)) for n in shape])


def _call_with(function, kwargs, *indices):
    return function(*indices, **kwargs)


# ------------------------------------------------------------------------------------------ index grids

def _concrete(name, *values):
    for v in values:
        if isinstance(v, Tracer) or isinstance(v, slice) and any(isinstance(b, Tracer) for b in (v.start, v.stop,
                                                                                                  v.step)):
            raise ConcretizationError(f"{name}: its arguments are sizes and ranges and must be concrete, not traced")


def indices(dimensions, dtype=None, sparse=False):
    """The index of each position along each axis of an array of shape `dimensions` (a constant)."""
    _concrete("indices", *np.atleast_1d(np.asarray(dimensions, dtype=object)))
    dims = normalize_shape(dimensions, "indices: dimensions")
    grids = np.indices(dims, dtype=canonical_dtype(dtype or DEFAULT_INT), sparse=sparse)
    return tuple(asarray(g) for g in grids) if sparse else asarray(grids)


def ix_(*args):
    """Index arrays that select the cross product of the 1-D sequences args (boolean ones, concrete, are masks)."""
    out = []
    for k, seq in enumerate(args):
        x = asarray(seq)
        if aval(x).ndim != 1:
            raise ValueError(f"ix_: argument {k} must be 1-D, got {aval(x).str_short()}")
        if aval(x).dtype == np.bool_:
            if isinstance(x, Tracer):
                raise ConcretizationError(f"ix_: boolean argument {k} is traced; the positions it selects must be "
                                          "known while tracing")
            x = np.flatnonzero(x)
        elif not isinstance(x, Tracer) and x.size == 0:
            x = x.astype(DEFAULT_INT)
        out.append(reshape(x, tuple(-1 if i == k else 1 for i in range(len(args)))))
    return tuple(out)


class _Grid:
    """mgrid and ogrid: numpy's, with concrete slice bounds (a complex step such as 5j is a number of points)."""

    def __init__(self, grid, name):
        self.grid, self.name = grid, name

    def __getitem__(self, key):
        _concrete(self.name, *(key if isinstance(key, tuple) else (key,)))
        out = self.grid[key]
        return asarray(out) if isinstance(out, np.ndarray) else [asarray(g) for g in out]


mgrid = _Grid(np.mgrid, "mgrid")
ogrid = _Grid(np.ogrid, "ogrid")
s_ = np.s_
index_exp = np.index_exp


# ------------------------------------------------------------------------------------------ log ranges

def _check_axis(name, axis):
    if axis not in (0, -1):
        raise NotImplementedError(f"{name}: axis={axis}: start and stop are scalars here, so the axis is 0")


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop, num, endpoint), as NumPy's (in dtype, if given)."""
    _check_axis("logspace", axis)
    out = power(asarray(np.asarray(base)) if not isinstance(base, Tracer) else base,
                linspace(start, stop, num, endpoint))
    return out if dtype is None else astype(out, dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """num values from start to stop in geometric progression (the ends exact), as NumPy's: computed on the
    magnitudes, with start's sign (a negative start and positive stop give NaN, as NumPy's real geomspace)."""
    _check_axis("geomspace", axis)
    num = index_arg(num, "geomspace: num")
    if num < 0:
        raise ValueError(f"geomspace: number of samples, {num}, must be non-negative")
    for v in (start, stop):
        if not isinstance(v, Tracer) and np.any(np.asarray(v) == 0):
            raise ValueError("geomspace: a geometric sequence cannot include zero")
    start, stop, _ = promote(start, stop, float(num), to_float="float64")
    if dtype is not None:
        start, stop = promote(start, stop, np.zeros((), canonical_dtype(dtype)), to_float="float64")[:2]
    computed = aval(start).dtype
    direction = divide(start, absolute(start)) if computed.kind == "c" else sign(start)
    first, last = divide(start, direction), divide(stop, direction)
    out = astype(logspace(log10(first), log10(last), num, endpoint, base=10.0), computed)
    index = arange(num, dtype=DEFAULT_INT)
    if num:
        out = where_(equal(index, 0), first, out)
    if num > 1 and endpoint:
        out = where_(equal(index, num - 1), last, out)
    out = multiply(out, direction)
    if dtype is None:
        return out
    dtype = canonical_dtype(dtype)
    return astype(floor(out) if dtype.kind in "iu" else out, dtype)
