"""The compile cache of one jitted function: its signatures, their entries, and which signatures are
compiled with symbolic dimensions (the dimensions named by `dynamic_dims`, or the policy's).

A signature is (input tree, avals of the leaves, static arguments). A symbolic signature has `Dim`s in
some shapes; a concrete call fits it when every other part is equal and each dimension has one size.

Bounds. A function keeps at most `config.memory_cache_max_entries` entries, and all functions together
about `config.memory_cache_max_bytes` (each entry's size estimated by `entry_bytes`); past either, the
least recently used entries are evicted when a new one is added, and their machine code is freed once no
running call holds it (llvm.Code). Recency costs the call path nothing: the fast paths only count hits,
and an eviction sweep stamps the entries whose hits moved since the sweep before (a CLOCK scheme), then
evicts the oldest stamps first, in order of compilation among equals.
"""
import itertools
import threading
import weakref

import numpy as np

from ._config import config
from .backend.executable import MISS
from .core.avals import Dim, normalize_axis
from .core.errors import ShapeError
from .core.pytree import LEAF, tree_flatten, tree_unflatten
from .transposed_inputs import as_views


class HitCount:
    """The hits of an entry, counted by its fast path (which must not refer to the entry: see fast_call):
    the Python fast paths count in hits, the native one in native[0]."""
    __slots__ = ("hits", "native")

    def __init__(self):
        self.hits, self.native = 0, np.zeros(1, np.int64)

    @property
    def total(self):
        return self.hits + int(self.native[0])


class CacheEntry:
    """One compiled signature: its IR, trees, how to run it on flat leaves, and what it cost."""

    __slots__ = ("closed", "count", "executable", "fast", "fits", "in_tree", "layout_fast", "names", "nbytes",
                 "out_tree", "run", "seen", "serial", "stamp", "times", "tree_fast")

    def __init__(self, closed, in_tree, out_tree, run, times, names, executable=None, fits=None):
        self.closed, self.in_tree, self.out_tree, self.count = closed, in_tree, out_tree, HitCount()
        self.times, self.names, self.executable, self.fast, self.fits = times, names, executable, None, fits or {}
        self.tree_fast = None      # the fast path on (args, kwargs) of calls with in_tree (pytree.caller)
        self.layout_fast = None    # the fast path of flat calls with large transposed arrays (transposed_inputs)
        self.run = run if not self.fits else _checked(run, self.fits, names)
        self.nbytes = entry_bytes(closed, executable)
        self.seen = self.stamp = self.serial = 0       # for eviction (see the module's docstring)

    @property
    def hits(self):
        return self.count.total


def _checked(run, fits, names):
    """run after check_fits (a closure over the entry's parts, not the entry: see HitCount)."""
    def checked(leaves):
        check_fits(fits, names, leaves)
        return run(leaves)
    return checked


def check_fits(fits, names, leaves):
    """NumPy 2's OverflowError for a Python int argument that the function combines with an array of a dtype
    it does not fit ({leaf position: dtypes}, recorded while tracing: core.trace.require_fit)."""
    for i, dtypes in fits.items():
        for dtype in dtypes:
            try:
                np.asarray(leaves[i], dtype)
            except OverflowError as e:
                raise OverflowError(f"argument {names[i]}: {e}") from None


ENTRY_OVERHEAD = 8 << 10   # bytes an entry holds whatever its size (see entry_bytes)


def entry_bytes(closed, executable):
    """An estimate of the memory an entry holds: its machine code three times (mapped, the object file the
    engine keeps, our copy for pickles), twice its module text (the text, and the IR and frame, which grow
    with it), its constants and arena pool. Measured retained memory per entry (RSS, loading 150 signatures
    and freeing them): 21 KiB for a 3-op function (estimate 23), 102 KiB for an MLP training step (119)."""
    consts = sum(np.asarray(c).nbytes for c in closed.consts)
    if executable is None:
        return ENTRY_OVERHEAD + consts
    return (ENTRY_OVERHEAD + 3 * executable.code_size + 2 * len(executable.llvm_text) + consts
            + (executable.arena_bytes or 0))


class _Budget:
    """The process-wide state of the bounds: every live SignatureCache, the sweep clock, one lock."""

    def __init__(self):
        self.caches, self.lock, self.tick, self.serials = weakref.WeakSet(), threading.RLock(), 0, itertools.count()

    def total(self):
        return sum(c.nbytes for c in list(self.caches))

    def stamp(self, caches):
        """Start a sweep: entries of caches used since the last one get the new stamp."""
        self.tick += 1
        for cache in caches:
            for e in list(cache.entries.values()):
                if e.hits != e.seen:
                    e.seen, e.stamp = e.hits, self.tick

    @staticmethod
    def oldest(caches, keep):
        """[(cache, key)] of their entries but keep, the oldest stamp first, then in order of compilation."""
        found = [(e.stamp, e.serial, cache, key) for cache in caches for key, e in list(cache.entries.items())
                 if e is not keep]
        return [(cache, key) for _, _, cache, key in sorted(found, key=lambda t: t[:2])]


_budget = _Budget()
_by_function = weakref.WeakKeyDictionary()   # function -> {jit options: SignatureCache}


def shared_cache(fun, options, dynamic_dims):
    """The SignatureCache of fun compiled with these jit options (hashable, dynamic_dims among them), one per
    function and options,
    so that `jit(f)(x)` written anew at each call reuses f's code, as JAX's cache does; a fresh cache for a
    callable that cannot be hashed or weakly referenced."""
    try:
        hash(options)
        per_function = _by_function.setdefault(fun, {})
    except TypeError:
        return SignatureCache(dynamic_dims)
    with _budget.lock:
        cache = per_function.get(options)
        if cache is None:
            cache = per_function[options] = SignatureCache(dynamic_dims)
        return cache


def drop_fast_paths():
    """Every jitted function leaves its call fast path on its next call (tj.disable_jit needs its slow path): the
    watchers of each entry drop the paths that lead to it; the entries and their code stay."""
    with _budget.lock:
        for cache in list(_budget.caches):
            for entry in list(cache.entries.values()):
                cache._tell_watchers(entry)


def clear_caches():
    """Drop every compiled signature held in memory, as jax.clear_caches: jitted functions compile again on
    their next call (from the disk cache where it has their code)."""
    with _budget.lock:
        _by_function.clear()
        for cache in list(_budget.caches):
            for key in list(cache.entries):
                cache._evict(key)


class SignatureCache:
    """The entries by signature, and the symbolic-dimensions policy that decides which signature a miss
    compiles."""

    def __init__(self, dynamic_dims=None):
        self.dynamic_dims = {k: dict(v) for k, v in (dynamic_dims or {}).items()}
        self.entries = {}         # signature -> CacheEntry, in order of compilation
        self.nbytes = 0           # their estimated size
        self.evicted = 0          # how many entries were evicted
        self.misses = 0           # how many signatures were compiled here
        self.lock = threading.RLock()  # held while compiling, so that two callers do not compile one signature
        self._on_evict = []       # weak methods called with each evicted entry (see watch)
        self._symbolic = []       # the symbolic signatures among them
        self._history = {}        # per argument structure: the shapes it was called with (the policy)
        self._no_symbolic = set()  # structures whose symbolic compile failed: they stay specialised
        self.parcels = []         # (host, [payload]) that came with pickles, not opened yet (shipping.unpack)
        self.shipped = {}         # signature -> shipping.Shipped: opened, not linked yet
        _budget.caches.add(self)

    def get(self, key):
        return self.entries.get(key)

    def add(self, key, entry):
        """Add entry, then evict the least recently used entries past the bounds (never entry itself)."""
        with _budget.lock:
            entry.seen, entry.serial = entry.hits, next(_budget.serials)
            self.entries[key] = entry
            self.nbytes += entry.nbytes
            if any(isinstance(d, Dim) for a in key[1] for d in a.shape):
                self._symbolic.append(key)
            extra = len(self.entries) - config.memory_cache_max_entries
            if extra > 0:
                _budget.stamp([self])
                for cache, victim in _budget.oldest([self], entry)[:extra]:
                    cache._evict(victim)
            excess = _budget.total() - config.memory_cache_max_bytes
            if excess > 0:
                caches = list(_budget.caches)
                _budget.stamp(caches)
                for cache, victim in _budget.oldest(caches, entry):
                    if excess <= 0:
                        break
                    excess -= cache._evict(victim).nbytes
            entry.stamp = _budget.tick      # after the sweeps: as recent as the entries they found used

    def _evict(self, key):
        """Drop the entry of key (under _budget.lock); returns it."""
        entry = self.entries.pop(key)
        self.nbytes -= entry.nbytes
        self.evicted += 1
        if key in self._symbolic:
            self._symbolic.remove(key)
        self._tell_watchers(entry)
        return entry

    def _tell_watchers(self, entry):
        for ref in self._on_evict:
            if (on_evict := ref()) is not None:
                on_evict(entry)

    def watch(self, on_evict):
        """Call the bound method on_evict with each evicted entry while its object lives."""
        self._on_evict = [r for r in self._on_evict if r() is not None] + [weakref.WeakMethod(on_evict)]

    def receive(self, key, shipped):
        """Keep a signature that came with a pickle (shipping.Shipped), unless it is here already."""
        if key not in self.entries:
            self.shipped.setdefault(key, shipped)

    def take_shipped(self, key):
        """(signature, Shipped) of a signature that came with a pickle and that key fits (its own, or a
        symbolic one), no longer pending; or None."""
        shipped = self.shipped.pop(key, None)
        if shipped is not None:
            return key, shipped
        pattern = next((k for k in list(self.shipped) if _fits(k, key)), None)
        return None if pattern is None else (pattern, self.shipped.pop(pattern))

    def lookup(self, key):
        """The cached entry for key (its own, or a symbolic one it fits), counted as a hit; or None."""
        entry = self.entries.get(key)
        if entry is None:      # (another thread may evict meanwhile: hence the copy and .get)
            entry = next((e for k in list(self._symbolic) if _fits(k, key) and (e := self.entries.get(k))), None)
        if entry is not None:
            entry.count.hits += 1
        return entry

    def symbolic_signature(self, key, names):
        """(the signature a miss on key compiles symbolically, whether dynamic_dims asked for it), or
        (None, False) to compile key as it is."""
        explicit = self._explicit_pattern(key, names)
        return (explicit, True) if explicit is not None else (self._policy_pattern(key, names), False)

    def stays_specialised(self, key):
        """The symbolic compile of key's structure failed: compile it per size from now on."""
        self._no_symbolic.add(_structure(key))

    def _explicit_pattern(self, key, names):
        """The signature with the dimensions named in dynamic_dims made symbolic, or None."""
        marks = {}
        for i, name in enumerate(names):
            for spec_key, axes in self.dynamic_dims.items():
                if name == spec_key or name.startswith((spec_key + "[", spec_key + ".")):
                    for axis, dim in axes.items():
                        marks[(i, normalize_axis(axis, key[1][i].ndim, f"dynamic_dims axis of {name}"))] = dim
        return _pattern(key, names, marks) if marks else None

    def _policy_pattern(self, key, names):
        """The policy: an axis seen with config.symbolic_dims_after distinct sizes, the other axes of the
        signature equal, turns symbolic (axes whose sizes were always equal share one dimension)."""
        after, structure = config.symbolic_dims_after, _structure(key)
        if not after or structure in self._no_symbolic:
            return None
        shapes = tuple(a.shape for a in key[1])
        history = self._history.setdefault(structure, [])
        if shapes not in history:
            history.append(shapes)
            del history[:-16]
        axes = [(i, a) for i, shape in enumerate(shapes) for a in range(len(shape))]
        varying = [p for p in axes if len({s[p[0]][p[1]] for s in history}) >= after]
        same = [s for s in history if all(s[i][a] == shapes[i][a] for i, a in axes if (i, a) not in varying)]
        varying = [p for p in varying if len({s[p[0]][p[1]] for s in same}) >= after]
        classes = {}
        for i, a in varying:
            classes.setdefault(tuple(s[i][a] for s in same), []).append((i, a))
        free = (f"n{k}" if k else "n" for k in itertools.count())
        return _pattern(key, names, {p: name for members, name in zip(classes.values(), free) for p in members}) \
            if classes else None


def _structure(key):
    """What the policy compares signatures within: the tree, static args, ranks and dtypes."""
    in_tree, avals, statics = key
    return in_tree, statics, tuple((a.ndim, a.dtype, a.weak_type) for a in avals)


def _pattern(key, names, marks):
    """key with the axes in marks ({(leaf, axis): dimension name}) symbolic."""
    in_tree, avals, statics = key
    sizes, dims = {}, {}
    for (i, a), name in marks.items():
        n = avals[i].shape[a]
        if sizes.setdefault(name, n) != n:
            raise ShapeError(f"dynamic_dims: dimension {name} is {sizes[name]} in one argument and {n} in "
                             f"{names[i]} (axis {a})")
        dims.setdefault(name, Dim(name, f"argument {names[i]}"))
    return in_tree, tuple(a.update(shape=tuple(dims[marks[(i, k)]] if (i, k) in marks else d
                                               for k, d in enumerate(a.shape)))
                          for i, a in enumerate(avals)), statics


def _fits(pattern, key):
    """Whether a concrete signature is an instance of a symbolic one."""
    if pattern[0] != key[0] or pattern[2] != key[2] or len(pattern[1]) != len(key[1]):
        return False
    sizes = {}
    for p, a in zip(pattern[1], key[1]):
        if p.dtype != a.dtype or p.weak_type != a.weak_type or p.ndim != a.ndim:
            return False
        for d, n in zip(p.shape, a.shape):
            if (sizes.setdefault(d, n) if isinstance(d, Dim) else d) != n:
                return False
    return True


# ------------------------------------------------------------------------------------ the fast paths


def flat_args_tree(n):
    """The input tree of n positional array arguments and no keywords."""
    return tree_flatten(((0,) * n, {}))[1]


def fast_path(executable, entry, leaves, out_tree, views=None):
    """The call of a compiled entry that skips the general path (or None where the executable has none):
    the tuple of flat leaves of the call's tree in, the output tree out, MISS where the arguments do not
    fit. The native entry (Executable.native_call) where there is one, else a Python function around the
    ctypes entry; the outputs at `views` ({output: permutation}) transposed (transposed_inputs.as_views)."""
    weak_ints = [{a.dtype} | set(entry.fits.get(i, ())) if a.weak_type and a.dtype.kind in "iu" else ()
                 for i, a in enumerate(executable.in_avals)]
    fast = executable.native_call(entry.count.native, weak_ints)
    if fast is not None:
        fast = as_views(fast, views, len(executable.out_avals) == 1)
        if len(executable.out_avals) == 1:
            return fast if out_tree == LEAF else (
                lambda args: out if (out := fast(args)) is MISS else tree_unflatten(out_tree, [out]))
    else:
        fast = executable.fast_call(len(leaves), entry.count, out_tree == LEAF)
        if fast is None:
            return None
        fast = as_views(_scalars_as_arrays(fast, leaves, executable.in_dtypes, entry), views, out_tree == LEAF)
        if out_tree == LEAF:
            return fast
    return lambda args: outs if (outs := fast(args)) is MISS else tree_unflatten(out_tree, outs)


def _scalars_as_arrays(fast, leaves, dtypes, entry):
    """The fast path on flat leaves where the signature was compiled for Python or NumPy scalars at some
    positions: a scalar of the same type there becomes a 0-d array of the compiled dtype (another type
    is another signature: MISS; the generated code checks the arrays), after the entry's check_fits."""
    scalars = [(i, type(x), d) for i, (x, d) in enumerate(zip(leaves, dtypes)) if type(x) is not np.ndarray]
    if not scalars:
        return fast
    asarray, fits, names = np.asarray, entry.fits, entry.names

    def call(args):
        args = list(args)
        for i, kind, dtype in scalars:
            if i >= len(args) or type(args[i]) is not kind:
                return MISS
        if fits:
            check_fits(fits, names, args)
        for i, kind, dtype in scalars:
            args[i] = asarray(args[i], dtype)
        return fast(args)
    return call
