"""Keys and bits: seeding, split, fold_in and random bits, JAX's threefry2x32 scheme with
jax_threefry_partitionable=True (JAX's default), so every value is JAX's, bit for bit.

A key is a value, never a state: two uint32 words. `PRNGKey(seed)` returns them as a raw uint32[2] array, as
JAX's legacy keys; `key(seed)` returns a typed key, a `KeyArray` holding key data uint32[..., 2], which
tracejit carries through jit, vmap, scan and the other transformations as a pytree with that one leaf.
Every function takes either kind and returns the kind it was given.

Draws of a shape hash the row-major index of each element (a 64-bit counter, as two words) under the key with
threefry2x32; 32-bit bits are the xor of the cipher's two output words, 64-bit bits the words side by side
(first word high), narrower bits the low bits of the xor. split(key, shape) gives key i the two words of
counter i, and fold_in(key, d) the two words of counter d.
"""
import functools
import inspect
import math
import operator

import numpy as np

from .. import lax
from .. import numpy as tnp
from ..api import jit
from ..core.avals import uint32, uint64
from ..core.pytree import register_pytree_node, tree_leaves
from ..core.trace import COSTLY_SIZE, Tracer, bind
from ..numpy.dtypes import prng_key
from ..primitives.threefry import threefry2x32_p

IMPL = "threefry2x32"


def jitted_when_large(*static):
    """JAX jits its samplers (static: the arguments that must be Python values). A sampler called outside a trace
    to draw COSTLY_SIZE values or more runs its jitted version, compiled once per shape, dtype and static values:
    as NumPy passes of their operations, eager draws of 1e6 took 0.81 s (normal), 9 s (gamma), 14 s (beta); jitted,
    5 ms, 0.25 s and 0.5 s. Smaller draws stay NumPy passes, which cost less than a compile."""
    def wrap(fn):
        signature, jitted = inspect.signature(fn), jit(fn, static_argnames=static)

        @functools.wraps(fn)
        def sampler(*args, **kwargs):
            arguments = signature.bind(*args, **kwargs).arguments
            if isinstance(arguments.get("shape"), list):
                arguments["shape"] = tuple(arguments["shape"])
            leaves = tree_leaves([v for k, v in arguments.items() if k not in static])
            if any(isinstance(x, Tracer) for x in leaves):
                return fn(*args, **kwargs)
            shape = arguments.get("shape")
            sizes = [np.size(x) for x in leaves] + [math.prod(shape) if isinstance(shape, tuple) else 0]
            return (jitted if max(sizes) >= COSTLY_SIZE else fn)(**arguments)
        return sampler
    return wrap
UINT = {8: np.dtype("uint8"), 16: np.dtype("uint16"), 32: uint32, 64: uint64}


class KeyDType:
    """The dtype of typed keys, printed as JAX prints it (key<fry>)."""

    name = "key<fry>"
    type = prng_key      # its abstract scalar type, as JAX's key dtypes: issubdtype(keys.dtype, dtypes.prng_key)

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, KeyDType)

    def __hash__(self):
        return hash(self.name)


class KeyArray:
    """Typed PRNG keys (random.key, wrap_key_data): an array of keys of `shape`, whose data is uint32[*shape, 2].

    A pytree with the data as its one leaf, so keys are jit arguments and results, vmap over their leading
    axis, and ride in scan and while carries. Indexing, len and iteration address keys; arithmetic does not
    exist (as in JAX). `random.key_data` gives the data back."""

    __slots__ = ("data",)
    dtype = KeyDType()
    key_words = 2           # (how tracejit.numpy's joins know a key array: numpy/key_arrays.py)

    def __init__(self, data):
        self.data = data

    shape = property(lambda self: tuple(self.data.shape[:-1]))
    ndim = property(lambda self: len(self.data.shape) - 1)
    size = property(lambda self: math.prod(self.shape))

    def __len__(self):
        if not self.ndim:
            raise TypeError("len() of a single key")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        if sum(i is not None and i is not Ellipsis for i in index) > self.ndim:
            raise IndexError(f"too many indices for a key array of shape {self.shape}: {len(index)} were given")
        return KeyArray(self.data[(*index, slice(None))])       # (the last, the key's words, kept whole)

    # Shape methods, as JAX's key arrays have them: on the keys' axes, never the words'.
    def reshape(self, *shape, order="C"):
        """The keys in a new shape (C order only)."""
        if order != "C":
            raise NotImplementedError(f"reshape of a key array: order={order!r} (only 'C')")
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return KeyArray(tnp.reshape(self.data, (*((shape,) if isinstance(shape, int) else shape), 2)))

    def ravel(self, order="C"):
        """The keys as a vector."""
        return self.reshape(-1, order=order)

    flatten = ravel

    def squeeze(self, axis=None):
        """The keys without their axes of size 1 (those of axis)."""
        axes = range(self.ndim) if axis is None else np.atleast_1d(axis) % max(self.ndim, 1)
        return KeyArray(tnp.squeeze(self.data, tuple(int(a) for a in axes if self.shape[a] == 1 or axis is not None)))

    def transpose(self, *axes):
        """The keys with their axes permuted (reversed by default)."""
        axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        axes = tuple(range(self.ndim))[::-1] if not axes else tuple(int(a) % self.ndim for a in axes)
        return KeyArray(tnp.transpose(self.data, (*axes, self.ndim)))

    T = property(transpose)

    def swapaxes(self, axis1, axis2):
        """The keys with two axes exchanged."""
        return KeyArray(tnp.swapaxes(self.data, axis1 % self.ndim, axis2 % self.ndim))

    def copy(self):
        """The keys, their data copied."""
        return KeyArray(self.data if isinstance(self.data, Tracer) else np.array(self.data))

    def __eq__(self, other):
        if not isinstance(other, KeyArray):
            return NotImplemented
        return tnp.all(self.data == other.data, axis=-1)

    __hash__ = None

    def __repr__(self):
        data = self.data if isinstance(self.data, Tracer) else np.asarray(self.data).tolist()
        return f"Array({data}, dtype={self.dtype})"


register_pytree_node(KeyArray, lambda k: ((k.data,), None), lambda _, leaves: KeyArray(leaves[0]))


def check_key(name, key):
    """(key data uint32[2], whether key was typed): the one key a sampler draws from."""
    typed = isinstance(key, KeyArray)
    data = key.data if typed else tnp.asarray(key)
    shape, dtype = tuple(data.shape), data.dtype
    if dtype != uint32 or not shape or shape[-1] != 2:
        raise TypeError(f"{name}: key must be a key from random.key or random.PRNGKey (uint32[2] key data), got "
                        f"{'a typed key array' if typed else f'an array of dtype {dtype} and shape {shape}'}")
    if len(shape) != 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape {shape[:-1]} != (). "
                         "Use jax.vmap for batching.")
    return data, typed


def as_kind(data, typed):
    """Key data returned as the kind of key the caller gave."""
    return KeyArray(data) if typed else data


def canonical_shape(name, shape):
    """shape as a tuple of Python ints (a single int is a 1-d shape, as in JAX)."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        out = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of nonnegative ints, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"{name}: shape must be a tuple of nonnegative ints, got {shape!r}")
    return out

# ----------------------------------------------------------------------------------------------- the hash


def _hash(data, hi, lo, output="pair"):
    """threefry2x32 of the counters (hi, lo) under the key: both output words packed in a uint64, or their
    xor (output="xor")."""
    return bind(threefry2x32_p, data[0], data[1], hi, lo, output=output)


def _words(packed):
    """The two uint32 words of a packed hash, first word first."""
    return lax.convert_element_type(lax.shift_right_logical(packed, uint64.type(32)), uint32), \
        lax.convert_element_type(packed, uint32)


def _counters(shape):
    """The high and low words of each element's row-major index over shape (JAX's iota_2x32_shape)."""
    size = math.prod(shape)
    if size <= 2 ** 32:
        flat = lax.iota(uint32, size)
        return uint32.type(0), flat if len(shape) == 1 else lax.reshape(flat, shape)
    return _words(lax.reshape(lax.iota(uint64, size), shape))


def random_bits(data, bit_width, shape):
    """Uniform bits of an unsigned dtype of bit_width, one per element of shape."""
    if bit_width == 64:
        return _hash(data, *_counters(shape))
    bits = _hash(data, *_counters(shape), output="xor")
    return bits if bit_width == 32 else lax.convert_element_type(bits, UINT[bit_width])

# ----------------------------------------------------------------------------------------------- keys


def _seed_data(name, seed):
    """The key data of an integer seed: its high and low 32 bits (a seed narrower than 64 bits has high
    word 0; a Python int is an int64, as in JAX)."""
    if isinstance(seed, KeyArray):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if isinstance(seed, int) and not isinstance(seed, bool):
        seed = np.int64(seed)       # OverflowError beyond int64, as JAX
    seed = seed if isinstance(seed, Tracer) else np.asarray(seed)
    if seed.ndim:
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape {tuple(seed.shape)} != (). "
                        "Use jax.vmap for batching")
    if seed.dtype.kind not in "iu":
        raise TypeError(f"{name}: the seed must be an integer, got dtype {seed.dtype}")
    high = lax.shift_right_logical(seed, 32) if seed.dtype.itemsize == 8 else seed.dtype.type(0)
    return tnp.stack([lax.convert_element_type(high, uint32), lax.convert_element_type(seed, uint32)])


def PRNGKey(seed, *, impl=None):
    """A raw key, uint32[2]: the seed's high and low 32 bits (jax.random.PRNGKey)."""
    _check_impl(impl)
    return _seed_data("PRNGKey", seed)


def key(seed, *, impl=None):
    """A typed key (a KeyArray of shape ()) from an integer seed (jax.random.key)."""
    _check_impl(impl)
    return KeyArray(_seed_data("key", seed))


def _check_impl(impl):
    if impl not in (None, IMPL):
        raise ValueError(f'unrecognized PRNG implementation "{impl}". Did you mean one of: "{IMPL}"?')


def key_data(keys):
    """The uint32[..., 2] data of typed keys (raw keys are returned as they are)."""
    if isinstance(keys, KeyArray):
        return keys.data
    data = tnp.asarray(keys)
    check_data("key_data", data)
    return data


def check_data(name, data):
    if data.dtype != uint32 or not data.ndim or data.shape[-1] != 2:
        raise TypeError(f"{name}: key data must be uint32 with a last axis of size 2, got dtype {data.dtype} and "
                        f"shape {tuple(data.shape)}")


def wrap_key_data(key_bits_array, *, impl=None):
    """Typed keys from uint32[..., 2] key data (jax.random.wrap_key_data)."""
    _check_impl(impl)
    data = tnp.asarray(key_bits_array)
    check_data("wrap_key_data", data)
    return KeyArray(data)


def key_dtype(impl_spec=None):
    """The dtype of typed keys of a PRNG implementation (jax.random.key_dtype): key<fry>, threefry2x32's, the
    only one tracejit has."""
    _check_impl(impl_spec)
    return KeyArray.dtype


def key_impl(keys):
    """The name of the PRNG implementation of keys (always threefry2x32)."""
    if not isinstance(keys, KeyArray):
        check_data("key_impl", tnp.asarray(keys))
    return IMPL


def clone(key):
    """key itself: keys are values here, so there is nothing to copy (jax.random.clone)."""
    return key


def split(key, num=2):
    """num new keys (num an int, or a tuple: the shape of the key array), key i the hash of counter i."""
    data, typed = check_key("split", key)
    shape = canonical_shape("split", num)
    first, second = _words(_hash(data, *_counters(shape)))
    return as_kind(tnp.stack([first, second], axis=-1), typed)


def split_key(words, i):
    """Key i of split(key, n) for any n > i (the hash of counter i), as its two words (uint32 scalars): what
    draws take as key data. words: the key's two words (key data, or a pair of words)."""
    return _words(_hash(words, uint32.type(0), uint32.type(i)))


def fold_in(key, data):
    """A new key from key and a 32-bit integer (the hash of counter data)."""
    key_words, typed = check_key("fold_in", key)
    if tnp.ndim(data):
        raise TypeError(f"fold_in accepts a scalar, but was given an array of shape {tnp.shape(data)} != (). "
                        "Use jax.vmap for batching.")
    data = tnp.asarray(data, uint32)          # a Python int must fit (OverflowError); arrays wrap, as in JAX
    first, second = _words(_hash(key_words, uint32.type(0), data))
    return as_kind(tnp.stack([first, second]), typed)


def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers of dtype (default uint64, as JAX with x64)."""
    data, _ = check_key("bits", key)
    dtype = uint64 if dtype is None else np.dtype(dtype)
    if dtype.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return random_bits(data, 8 * dtype.itemsize, canonical_shape("bits", shape))
