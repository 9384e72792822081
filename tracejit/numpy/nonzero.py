"""Results whose length depends on the data: nonzero, argwhere and flatnonzero. Eagerly (and inside a trace on
concrete values) their length is counted; on traced values it must be given as size= (padded with fill_value,
as JAX's), since a compiled program has fixed shapes. `data_dependent_size` says so for unique and bincount
too, and `scatter_sum` is the counting they share."""
import builtins
import functools

import numpy as np

from ..core.avals import DEFAULT_INT, index_arg
from ..core.errors import ConcretizationError
from ..core.trace import Tracer, bind, eager
from ..primitives import scatter as sc
from ._base import asarray, astype, aval, broadcast_to_shape, stack
from .creation import arange, zeros
from .index_tricks import unravel_index
from .reductions import cumsum, sum
from .shape_ops import expand_dims, ravel
from .ufuncs import less, not_equal, where_


def data_dependent_size(name, x, size, count, keyword="size"):
    """The length of `name`'s result: `size` if given, else count() of the concrete x, else an error saying to
    pass size= (a traced x has no values to count while tracing)."""
    if size is not None:
        size = index_arg(size, f"{name}: {keyword}", bools=False)
        if size < 0:
            raise ValueError(f"{name}: {keyword} must be non-negative, got {size}")
        return size
    if isinstance(x, Tracer):
        padding = ", with fill_value= for the padding" if keyword == "size" else ""
        raise ConcretizationError(
            f"{name}: the length of its result depends on the values of its input, which are traced here "
            f"({x.aval.str_short()}); pass {keyword}= (a static int{padding}) to fix it")
    return int(count())


def eager_if_concrete(fn):
    """fn, computed with NumPy when none of its arguments (nor their list items) is traced, also inside a trace:
    a result whose length depends on concrete values is then a constant, which needs no size=."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        if _any_traced([*args, *kwargs.values()]):
            return fn(*args, **kwargs)
        with eager():
            return fn(*args, **kwargs)
    return wrapped


def _any_traced(values):
    return builtins.any(isinstance(v, Tracer) or isinstance(v, (list, tuple)) and _any_traced(v) for v in values)


def scatter_sum(length, positions, values):
    """A vector of `length` holding values summed at positions (integers of any shape; those out of
    [0, length) are dropped)."""
    values = broadcast_to_shape(asarray(values), aval(positions).shape)
    return bind(sc.scatter_add_p, zeros((length,), aval(values).dtype), expand_dims(positions, -1), values,
                axes=(0,), mode="drop")


def first_positions(mask, size):
    """(where mask is true, in order, padded to `size` with 0; whether each of the `size` slots is filled)."""
    mask = ravel(mask)
    rank = cumsum(mask)          # 1 at the first true element, 2 at the second ...
    n = aval(mask).shape[0]
    slots = where_(mask, rank - 1, size)
    found = scatter_sum(size, slots, arange(n, dtype=DEFAULT_INT)) if n else zeros((size,), DEFAULT_INT)
    return found, less(arange(size, dtype=DEFAULT_INT), sum(mask))


def _filled(found, filled, fill_value, ndim, name):
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (0 if fill_value is None else fill_value,) * ndim
    if len(fills) != ndim:
        raise ValueError(f"{name}: fill_value must be a scalar or a tuple of {ndim} (one per dimension), got "
                         f"{fill_value!r}")
    return tuple(where_(filled, c, astype(asarray(f), DEFAULT_INT)) for c, f in zip(found, fills))


def nonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements, one array per dimension (size= and fill_value= as JAX's)."""
    return _nonzero(a, size, fill_value, "nonzero")


def _nonzero(a, size, fill_value, name):
    a = asarray(a)
    shape = aval(a).shape
    if not shape:
        raise ValueError("nonzero: a 0-d array has no indices; use atleast_1d(a).nonzero() (as NumPy 2)")
    size = data_dependent_size(name, a, size, lambda: np.count_nonzero(a))
    found, filled = first_positions(not_equal(a, 0), size)
    coords = unravel_index(found, shape) if len(shape) > 1 and np.prod(shape) else (found,) * len(shape)
    return _filled(coords, filled, fill_value, len(shape), name)


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of ravel(a)."""
    return _nonzero(ravel(a), size, fill_value, "flatnonzero")[0]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements as rows, shape (count, a.ndim)."""
    a = asarray(a)
    if not aval(a).shape:      # NumPy's rows of no columns: one for a true scalar, none for a false one
        size = data_dependent_size("argwhere", a, size, lambda: np.count_nonzero(a))
        return zeros((size, 0), DEFAULT_INT)
    return stack(_nonzero(a, size, fill_value, "argwhere"), axis=1)
