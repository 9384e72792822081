"""NumPy's binary ufuncs as objects with their methods, as jax.numpy has them (jnp.add.outer, np.maximum.accumulate,
np.add.at ...): called, a ufunc is its function; `outer`, `reduce`, `accumulate` and `at` apply it as NumPy's
methods do, through the matching reduction, running reduction or scatter where there is one (add: sum, cumsum,
x.at[].add) and a loop over the axis otherwise. `at` is functional, as JAX's: it returns the updated array and
needs inplace=False."""
import functools

from ._base import asarray, astype, aval, reject_out
from .at_updates import _AtIndexer
from .shape_ops import expand_dims, moveaxis, ravel, reshape, stack

LOOP_LIMIT = 256   # elements along the axis up to which reduce and accumulate of the other ufuncs run in order


class ufunc:
    """A binary ufunc: its function and NumPy's methods (see the module's docstring)."""

    def __init__(self, func, *, identity=None, reducer=None, accumulator=None, updater=None):
        functools.update_wrapper(self, func)
        self._func, self.identity = func, identity
        self.nin, self.nout, self.nargs = 2, 1, 3
        self._reducer, self._accumulator, self._updater = reducer, accumulator, updater

    def __call__(self, *args, **kwargs):
        return self._func(*args, **kwargs)

    def __repr__(self):
        return f"<tracejit.numpy.ufunc '{self.__name__}'>"

    def outer(self, A, B, /):
        """func(a, b) for every element a of A and b of B: shape A.shape + B.shape."""
        A, B = asarray(A), asarray(B)
        return self(reshape(A, aval(A).shape + (1,) * aval(B).ndim), B)

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """func folded over axis (None: all axes), from initial when given."""
        reject_out(f"{self.__name__}.reduce", out)
        a = asarray(a)
        if self._reducer is not None:
            return self._reducer(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)
        if where is not None or isinstance(axis, tuple):
            raise NotImplementedError(f"{self.__name__}.reduce: where= and several axes are supported only by add, "
                                      "multiply, maximum, minimum, logical_and and logical_or")
        if axis is None:
            a, axis, shape = ravel(a), 0, (1,) * aval(a).ndim
        else:
            shape = None
        a = self._along(a, axis, dtype, "reduce")
        if aval(a).shape[0] == 0 and initial is None:
            raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity")
        total = a[0] if initial is None else self(initial, a[0])
        for k in range(1, aval(a).shape[0]):      # (in order: subtract and divide are not associative)
            total = self(total, a[k])
        if shape is not None:
            return reshape(total, shape) if keepdims else total
        return expand_dims(total, axis) if keepdims else total

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running results of func along axis."""
        reject_out(f"{self.__name__}.accumulate", out)
        a = asarray(a)
        if self._accumulator is not None:
            return self._accumulator(a, axis=axis, dtype=dtype)
        a = self._along(a, axis, dtype, "accumulate")
        running = [a[0]] if aval(a).shape[0] else []
        for k in range(1, aval(a).shape[0]):
            running.append(self(running[-1], a[k]))
        return moveaxis(stack(running) if running else a, 0, axis)

    def _along(self, a, axis, dtype, method):
        """a (in dtype) with axis first, for the loops of reduce and accumulate, which run the axis in order."""
        a = moveaxis(a if dtype is None else astype(a, dtype), axis, 0)
        if aval(a).shape[0] > LOOP_LIMIT:
            raise NotImplementedError(f"{self.__name__}.{method} along an axis of {aval(a).shape[0]} elements: "
                                      f"written out up to {LOOP_LIMIT} (for add, multiply, maximum, minimum, "
                                      "logical_and and logical_or any length)")
        return a

    def at(self, a, indices, b=None, /, *, inplace=True):
        """a with func(a[indices], b) written at indices (repeated indices accumulate), as JAX's ufunc.at."""
        if inplace:
            raise NotImplementedError("ufunc.at with inplace=True is not supported: tracejit's arrays are values; "
                                      "pass inplace=False to get the updated array")
        if self._updater is None:
            raise NotImplementedError(f"{self.__name__}.at: supported for add, subtract, multiply, maximum and "
                                      "minimum")
        return self._updater(_AtIndexer(asarray(a))[indices], b)
