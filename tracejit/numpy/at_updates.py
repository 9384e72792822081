"""x.at[idx] updates, as JAX's: set, add, subtract, multiply (mul), divide, power, min, max, apply and get,
each a scatter into x (or, for the products, into a factor of ones) at the selected elements."""
import numpy as np

from ..core.avals import DEFAULT_INT
from ..core.trace import Tracer, bind, eager
from ..primitives import reductions as rd
from ..primitives import scatter as sc
from ._base import asarray, astype, aval, broadcast_to_shape
from .creation import _iota, ones_like, zeros_like
from .indexing import _fill_value, getitem, take_clamped
from .shape_ops import concatenate, expand_dims, ravel, reshape
from .ufuncs import add, divide, floor_divide, greater, less, multiply, negative, power, remainder, where_


def _mode(options):
    """JAX's options of x.at[idx] updates: hints (indices_are_sorted, unique_indices) change nothing; the modes all
    drop out-of-range updates, as JAX's default does ('clip' is not offered: x.at clamps nothing)."""
    unknown = set(options) - {"indices_are_sorted", "unique_indices", "mode", "fill_value"}
    if unknown:
        raise TypeError(f"x.at[idx] update: unexpected keyword arguments {sorted(unknown)}")
    if options.get("mode") not in (None, "drop", "fill", "promise_in_bounds"):
        raise NotImplementedError(f"x.at[idx] update: mode {options['mode']!r} is not supported; out-of-range "
                                  "updates are dropped (mode 'drop', JAX's default)")


class _AtIndexer:
    """x.at[idx].set(v) / .add(v) / .max(v) / .min(v) / .multiply(v) / .get() ...: functional updates, as in JAX.
    Out-of-range indices are dropped from updates; with repeated indices, add accumulates, max and min keep the
    extreme, set keeps the last value (as NumPy's x[idx] = v, and JAX's CPU code) and multiply needs concrete
    indices."""

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _AtUpdate(self.x, idx)


class _AtUpdate:
    def __init__(self, x, idx):
        self.x, self.idx = asarray(x), idx

    def get(self, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        """x[idx]; out-of-range indices clamped (mode None, 'clip' or 'promise_in_bounds', as x[idx]) or their
        elements fill_value (mode 'fill' or 'drop'; by default NaN, or the integer dtype's extreme, as JAX's)."""
        if mode in (None, "clip", "promise_in_bounds"):
            return getitem(self.x, self.idx)
        if mode not in ("fill", "drop"):
            raise ValueError(f"x.at[idx].get: mode must be 'clip', 'fill', 'drop' or 'promise_in_bounds', got {mode!r}")
        positions, _ = self._positions()
        return where_(less(positions, 0), _fill_value(aval(self.x).dtype, fill_value),
                      getitem(self.x, self.idx, mode="fill"))

    def _positions(self):
        """Flat positions of the selected elements (-1 for out of range) and the flattened operand: x[idx] of the
        positions' array, which for traced indices is a function of the index (iotas) that the gather computes
        where it reads it, not an array as large as x."""
        shape = aval(self.x).shape
        idx = self.idx if isinstance(self.idx, tuple) else (self.idx,)
        if any(isinstance(i, Tracer) for i in idx):
            numbered = np.ones((), DEFAULT_INT)
            for axis in range(len(shape)):
                stride = np.asarray(np.prod(shape[axis + 1:], dtype=np.int64), DEFAULT_INT)
                numbered = add(numbered, multiply(_iota(DEFAULT_INT, shape, axis), stride))
            return add(getitem(numbered, self.idx, mode="fill"), -1), ravel(self.x)
        with eager():  # concrete indices: positions are known now
            numbered = np.arange(1, int(np.prod(shape)) + 1, dtype=DEFAULT_INT).reshape(shape)
            positions = add(getitem(numbered, self.idx, mode="fill"), -1)
        return positions, ravel(self.x)

    def _scatter(self, prim, positions, flat, values, into=None):
        values = broadcast_to_shape(astype(asarray(values), aval(flat).dtype), aval(positions).shape)
        indices = expand_dims(positions, -1)
        return bind(prim, zeros_like(flat) if into is None else into, indices, values, axes=(0,), mode="drop")

    def _update(self, prim, values, options):
        """prim (a scatter) of values at the selected elements of x, indexed by their axes' positions (unravelled
        from the flat ones; out of range where those are), so that x is never reshaped: a reshape of a large x and
        back were two copies of it (x.at[i, 0].set over 2048 x 2048 f32 took 3.5x NumPy's time)."""
        _mode(options)
        positions, _ = self._positions()
        x = self.x
        shape = aval(x).shape
        values = broadcast_to_shape(astype(asarray(values), aval(x).dtype), aval(positions).shape)
        if len(shape) <= 1:
            return bind(prim, x, expand_dims(positions, -1), values, axes=tuple(range(len(shape))), mode="drop")
        outside = less(positions, 0)
        columns = [where_(outside, -1, remainder(floor_divide(positions, int(np.prod(shape[a + 1:]))), shape[a]))
                   for a in range(len(shape))]
        indices = concatenate([expand_dims(c, -1) for c in columns], axis=-1)
        return bind(prim, x, indices, values, axes=tuple(range(len(shape))), mode="drop")

    def add(self, values, **options):
        return self._update(sc.scatter_add_p, values, options)

    def set(self, values, **options):
        return self._update(sc.scatter_p, values, options)

    def max(self, values, **options):
        return self._update(sc.scatter_max_p, values, options)

    def min(self, values, **options):
        return self._update(sc.scatter_min_p, values, options)

    def subtract(self, values, **options):
        """x[idx] -= values (repeated indices subtract each of theirs)."""
        return self._update(sc.scatter_add_p, negative(astype(asarray(values), aval(self.x).dtype)), options)

    def multiply(self, values, **options):
        """x[idx] *= values (repeated indices multiply by each of theirs); the indices must be concrete."""
        _mode(options)
        positions, flat = self._concrete_positions("multiply")
        positions, values = _products_at_repeats(positions, values, aval(flat).dtype)
        factor = self._scatter(sc.scatter_add_p, positions, flat, values)
        hit = greater(self._scatter(sc.scatter_add_p, positions, flat, np.ones((), aval(flat).dtype)), 0)
        return reshape(where_(hit, multiply(flat, factor), flat), aval(self.x).shape)

    mul = multiply

    def divide(self, values, **options):
        """x[idx] /= values: x divided by ones multiplied at idx by values, as JAX's."""
        return divide(self.x, _AtUpdate(ones_like(self.x), self.idx).multiply(values, **options))

    def power(self, values, **options):
        """x[idx] **= values: x to the power of ones multiplied at idx by values, as JAX's."""
        return power(self.x, _AtUpdate(ones_like(self.x), self.idx).multiply(values, **options))

    def apply(self, func, **options):
        """func (a unary elementwise function) applied to the selected elements, as many times as an element
        is selected, as JAX's; the indices must be concrete."""
        _mode(options)
        positions, flat = self._concrete_positions("apply")
        keys, counts = np.unique(np.asarray(positions)[np.asarray(positions) >= 0], return_counts=True)
        values = take_clamped(flat, keys.astype(DEFAULT_INT))
        for k in range(counts.max(initial=0)):
            values = where_(counts > k, func(values), values) if k else func(values)
        updated = bind(sc.scatter_p, flat, expand_dims(keys.astype(DEFAULT_INT), -1), values, axes=(0,), mode="drop")
        return reshape(updated, aval(self.x).shape)

    def _concrete_positions(self, what):
        positions, flat = self._positions()
        if isinstance(positions, Tracer):
            raise TypeError(f"x.at[idx].{what} needs concrete indices (numpy arrays, ints or slices); with traced "
                            "indices use tnp.where(mask, ..., x)")
        return positions, flat



def _products_at_repeats(positions, values, dtype):
    """Concrete positions may repeat: (each position once, the product of its values), the values gathered into a
    row per position padded with ones and multiplied along it (they may be traced)."""
    positions = np.asarray(positions)
    values = broadcast_to_shape(astype(asarray(values), dtype), positions.shape)
    in_range = positions[positions >= 0]
    if len(np.unique(in_range)) == in_range.size:
        return positions, values
    flat = positions.ravel()
    order = np.argsort(flat, kind="stable")
    order = order[flat[order] >= 0]
    keys, starts, counts = np.unique(flat[order], return_index=True, return_counts=True)
    rows = np.full((len(keys), counts.max()), flat.size, DEFAULT_INT)       # flat.size: the padding one
    rows[np.repeat(np.arange(len(keys)), counts), np.arange(order.size) - np.repeat(starts, counts)] = order
    padded = concatenate([ravel(values), np.ones(1, dtype)])
    return keys.astype(DEFAULT_INT), bind(rd.reduce_prod_p, take_clamped(padded, rows), axes=(1,))
