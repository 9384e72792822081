"""Typed PRNG key arrays (tracejit.random's KeyArray) through the NumPy functions JAX lets them through: stack,
concatenate, where, broadcast_to and expand_dims. Each works on the keys' data, uint32[..., 2], whose last axis
(a key's two words) stays last and whole. tracejit.numpy sits below tracejit.random, so a key array is known
by its class's `key_words` attribute, not by its class."""
import functools

from ..core.avals import normalize_axis


def _is_keys(x):
    return getattr(type(x), "key_words", None) is not None


def _all_keys(name, arrays):
    if not all(_is_keys(a) for a in arrays):
        raise TypeError(f"{name}: key arrays can be joined only with key arrays, got "
                        f"{[type(a).__name__ for a in arrays]}")
    return arrays


def _keyed_sequence(arrays):
    return isinstance(arrays, (list, tuple)) and len(arrays) > 0 and _is_keys(arrays[0])


def _joining(name, new_axis):
    """stack (new_axis) or concatenate on key arrays: the same join of their data, the words' axis kept last."""
    def wrap(fn):
        @functools.wraps(fn)
        def call(arrays, axis=0, *args, **kwargs):
            if not _keyed_sequence(arrays):
                return fn(arrays, axis, *args, **kwargs)
            keys = _all_keys(name, arrays)
            if axis is None and not new_axis:
                keys, axis = [k.ravel() for k in keys], 0
            axis = normalize_axis(axis, keys[0].ndim + 1 if new_axis else max(keys[0].ndim, 1), name, bools=False)
            return type(keys[0])(fn([k.data for k in keys], axis))
        return call
    return wrap


stack, concatenate = _joining("stack", True), _joining("concatenate", False)


def where(fn, expand_dims):
    @functools.wraps(fn)
    def call(condition, x=None, y=None, **kwargs):
        if not (_is_keys(x) or _is_keys(y)):
            return fn(condition, x, y, **kwargs)
        x, y = _all_keys("where", [x, y])
        return type(x)(fn(expand_dims(condition, -1), x.data, y.data, **kwargs))
    return call


def broadcast_to(fn):
    @functools.wraps(fn)
    def call(array, shape, *args, **kwargs):
        if not _is_keys(array):
            return fn(array, shape, *args, **kwargs)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return type(array)(fn(array.data, (*shape, array.key_words)))
    return call


def expand_dims(fn):
    @functools.wraps(fn)
    def call(a, axis):
        if not _is_keys(a):
            return fn(a, axis)
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        ndim = a.ndim + len(axes)
        return type(a)(fn(a.data, tuple(normalize_axis(x, ndim, "expand_dims", bools=False) for x in axes)))
    return call
