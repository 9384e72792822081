"""frompyfunc (a Python scalar function as a ufunc object), place, mask_indices and the constant euler_gamma, as
jax.numpy has them: written on tnp, so they trace, differentiate and batch."""
import numpy as np

from ..core.errors import ShapeError
from ._base import asarray, astype, aval
from .calculus import cumsum
from .creation import ones
from .functional import vectorize
from .indexing import take_clamped
from .nonzero import nonzero
from .shape_ops import ravel, reshape
from .ufunc_objects import ufunc
from .ufuncs import where_

euler_gamma = 0.5772156649015329     # the Euler-Mascheroni constant (np.euler_gamma)


class _PyUfunc(ufunc):
    """A ufunc made by frompyfunc: nin inputs, nout outputs; its methods (reduce, accumulate, outer) need nin=2
    and nout=1, as JAX's."""

    def __init__(self, func, nin, nout, identity):
        super().__init__(vectorize(func), identity=identity)
        self.__name__ = getattr(func, "__name__", "ufunc")
        self.nin, self.nout, self.nargs = nin, nout, nin + nout

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}: expected {self.nin} positional arguments, got {len(args)}")
        result = self._func(*args)
        if self.nout > 1 and (not isinstance(result, tuple) or len(result) != self.nout):
            raise ValueError(f"{self.__name__}: declared nout={self.nout}, but the function returned "
                             f"{len(result) if isinstance(result, tuple) else 'one value'}")
        return result

    def _binary(self, method):
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """func folded over axis in order (None: all axes), from initial, which defaults to the identity (as
        JAX's: NumPy's starts from the identity only on an empty axis); binary, one output."""
        self._binary("reduce")
        initial = self.identity if initial is None else initial
        return super().reduce(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running results of func along axis (binary, one output)."""
        self._binary("accumulate")
        return super().accumulate(a, axis=axis, dtype=dtype, out=out)

    def outer(self, A, B, /):
        """func(a, b) for every element a of A and b of B (binary, one output)."""
        self._binary("outer")
        return super().outer(A, B)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """Not supported for frompyfunc's ufuncs (NotImplementedError): tracejit's `at` is written for add,
        subtract, multiply, maximum and minimum, on their scatters."""
        raise NotImplementedError(f"{self.__name__}.at: ufunc.at is supported for add, subtract, multiply, maximum "
                                  "and minimum only, not for frompyfunc's ufuncs")


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ufunc object from a function of scalars written with tnp (jax.numpy.frompyfunc): called, it applies func
    elementwise over its broadcast arguments (through vectorize, so it traces and batches); with nin=2 and
    nout=1 it has reduce, accumulate and outer (in order, written out along the axis, up to 256 elements).
    identity is the value reduce starts from on an empty axis."""
    if not callable(func):
        raise TypeError(f"frompyfunc: func must be callable, got {func!r}")
    for name, n in (("nin", nin), ("nout", nout)):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"frompyfunc: {name} must be a positive int, got {n!r}")
    return _PyUfunc(func, int(nin), int(nout), identity)


def place(arr, mask, vals, *, inplace=True):
    """arr with its elements where mask is true replaced by vals, in order, repeated when there are fewer of them
    (np.place). As JAX's: arrays are values, so inplace=True is a ValueError; pass inplace=False to get the
    updated array. The k-th true element takes vals[k % len(vals)] (a cumulative count, so it traces)."""
    arr, mask, vals = asarray(arr), asarray(mask), ravel(asarray(vals))
    if inplace:
        raise ValueError("tracejit.numpy.place cannot modify arrays in-place, because tracejit's arrays are values. "
                         "Pass inplace=False to instead return an updated array.")
    if aval(arr).size != aval(mask).size:
        raise ShapeError(f"place: arr and mask must be the same size, got {aval(arr).shape} and {aval(mask).shape}")
    if not aval(vals).size:
        raise ValueError("Cannot place values from an empty array")
    if not aval(arr).size:
        return arr
    flat_mask = astype(ravel(mask), bool)
    count = cumsum(astype(flat_mask, np.int64)) - 1
    picked = astype(take_clamped(vals, count % aval(vals).size), aval(arr).dtype)   # (vals may be a NumPy array)
    return reshape(where_(flat_mask, picked, ravel(arr)), aval(arr).shape)


def mask_indices(n, mask_func, k=0, *, size=None):
    """The (row, column) indices where mask_func(ones((n, n)), k) is nonzero, as np.mask_indices (mask_func is
    tnp.triu, tnp.tril ...); size, as in nonzero, fixes the number of indices so that it traces."""
    return nonzero(mask_func(ones((n, n)), k), size=size)
