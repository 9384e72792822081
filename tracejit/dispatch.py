"""The compile cache of one jitted function: its signatures, their entries, and which signatures are
compiled with symbolic dimensions (the dimensions named by `dynamic_dims`, or the policy's).

A signature is (input tree, avals of the leaves, static arguments). A symbolic signature has `Dim`s in
some shapes; a concrete call fits it when every other part is equal and each dimension has one size.
"""
import itertools

import numpy as np

from ._config import config
from .backend.executable import MISS
from .core.avals import Dim, normalize_axis
from .core.errors import ShapeError
from .core.pytree import LEAF, tree_flatten, tree_unflatten


class CacheEntry:
    """One compiled signature: its IR, trees, how to run it on flat leaves, and what it cost."""

    __slots__ = ("closed", "executable", "fast", "fits", "hits", "in_tree", "names", "out_tree", "run", "times")

    def __init__(self, closed, in_tree, out_tree, run, times, names, executable=None, fits=None):
        self.closed, self.in_tree, self.out_tree, self.hits = closed, in_tree, out_tree, 0
        self.times, self.names, self.executable, self.fast, self.fits = times, names, executable, None, fits or {}
        self.run = run if not self.fits else self._checked(run)

    def _checked(self, run):
        def checked(leaves):
            check_fits(self.fits, self.names, leaves)
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


class SignatureCache:
    """The entries by signature, and the symbolic-dimensions policy that decides which signature a miss
    compiles."""

    def __init__(self, dynamic_dims=None):
        self.dynamic_dims = {k: dict(v) for k, v in (dynamic_dims or {}).items()}
        self.entries = {}         # signature -> CacheEntry, in order of compilation
        self._symbolic = []       # the symbolic signatures among them
        self._history = {}        # per argument structure: the shapes it was called with (the policy)
        self._no_symbolic = set()  # structures whose symbolic compile failed: they stay specialised

    def get(self, key):
        return self.entries.get(key)

    def add(self, key, entry):
        self.entries[key] = entry
        if any(isinstance(d, Dim) for a in key[1] for d in a.shape):
            self._symbolic.append(key)

    def lookup(self, key):
        """The cached entry for key (its own, or a symbolic one it fits), counted as a hit; or None."""
        entry = self.entries.get(key)
        if entry is None:
            entry = next((self.entries[k] for k in self._symbolic if _fits(k, key)), None)
        if entry is not None:
            entry.hits += 1
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


def fast_path(executable, entry, leaves, out_tree):
    """The call of a compiled entry that skips the general path (or None where the executable has none):
    flat leaves of the call's tree in, the output tree out, MISS where the arguments do not fit."""
    fast = executable.fast_call(len(leaves), entry, out_tree == LEAF)
    if fast is None:
        return None
    fast = _scalars_as_arrays(fast, leaves, executable.in_dtypes, entry)
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
    asarray, fits = np.asarray, entry.fits

    def call(args):
        args = list(args)
        for i, kind, dtype in scalars:
            if i >= len(args) or type(args[i]) is not kind:
                return MISS
        if fits:
            check_fits(fits, entry.names, args)
        for i, kind, dtype in scalars:
            args[i] = asarray(args[i], dtype)
        return fast(args)
    return call
