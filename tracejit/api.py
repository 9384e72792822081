"""The public transformations, wired from the pieces: trace to IR, transform, evaluate or compile."""
import contextlib
import functools
import gc
import inspect
import itertools
import logging
import threading
import time

import numpy as np

from . import passes
from ._config import config
from .backend import Lowered, compile_ir
from .backend.executable import MISS
from .cache_info import CacheInfo, SignatureInfo, explain_miss
from .core.api_util import flatten_args, leaf_aval, trace_pytree
from .core.avals import Dim, normalize_axis
from .core.errors import ShapeError
from .core.pytree import LEAF, flatten_as, tree_flatten, tree_unflatten
from .core.timing import recording
from .core.trace import Tracer, _stack, eval_ir


def _split_static(fun, args, kwargs, static_argnums, static_argnames):
    """Separate static arguments (part of the cache key, closed over by the trace) from dynamic ones."""
    nums = {i % len(args) if -len(args) <= i < 0 else i for i in static_argnums}
    statics = tuple((i, args[i]) for i in sorted(nums) if i < len(args))
    statics += tuple((k, kwargs[k]) for k in sorted(static_argnames) if k in kwargs)
    for where, value in statics:
        try:
            hash(value)
        except TypeError:
            raise TypeError(f"static argument {where!r} of {getattr(fun, '__name__', 'function')} has "
                            f"unhashable type {type(value).__name__}; static arguments key the compile cache "
                            "and must be hashable (use a tuple instead of a list)") from None
    dyn_args = [a for i, a in enumerate(args) if i not in nums]
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_argnames}

    @functools.wraps(fun)
    def dynamic_fun(*dargs, **dkwargs):
        full, it = [], iter(dargs)
        for i in range(len(args)):
            full.append(args[i] if i in nums else next(it))
        return fun(*full, **dkwargs, **{k: kwargs[k] for k in static_argnames if k in kwargs})

    try:  # the signature without the static parameters, so that argument names in errors stay right
        sig = inspect.signature(fun)
        params = list(sig.parameters.values())
        dynamic_fun.__signature__ = sig.replace(parameters=[
            p for i, p in enumerate(params) if not (i in nums and p.kind in _POSITIONAL) and p.name not in static_argnames])
    except (TypeError, ValueError):
        pass
    return dynamic_fun, dyn_args, dyn_kwargs, statics


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


log = logging.getLogger("tracejit")


class CacheEntry:
    __slots__ = ("closed", "executable", "fast", "hits", "in_tree", "names", "out_tree", "run", "times")

    def __init__(self, closed, in_tree, out_tree, run, times, names, executable=None):
        self.closed, self.in_tree, self.out_tree, self.run, self.hits = closed, in_tree, out_tree, run, 0
        self.times, self.names, self.executable, self.fast = times, names, executable, None


def _flat_args_tree(n):
    """The input tree of n positional array arguments and no keywords."""
    return tree_flatten(((0,) * n, {}))[1]


def _scalars_as_arrays(fast, leaves, dtypes):
    """The fast path on flat leaves where the signature was compiled for Python or NumPy scalars at some
    positions: a scalar of the same type there becomes a 0-d array of the compiled dtype (another type
    is another signature: MISS; the generated code checks the arrays)."""
    scalars = [(i, type(x), d) for i, (x, d) in enumerate(zip(leaves, dtypes)) if type(x) is not np.ndarray]
    if not scalars:
        return fast
    asarray = np.asarray

    def call(args):
        args = list(args)
        for i, kind, dtype in scalars:
            if i >= len(args) or type(args[i]) is not kind:
                return MISS
            args[i] = asarray(args[i], dtype)
        return fast(args)
    return call


@contextlib.contextmanager
def _gc_paused():
    """No garbage collection while compiling: tracing allocates many small objects, which triggers
    collections that walk the whole heap (5-30 ms of a 1000-op compile); they resume afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Jitted:
    """A function traced once per input signature, optimised, compiled and cached."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), backend="llvm", cache=True, dynamic_dims=None):
        functools.update_wrapper(self, fun)
        self.fun, self.cache = fun, cache
        self.dynamic_dims = {k: dict(v) for k, v in (dynamic_dims or {}).items()}
        self._symbolic = []      # keys of the entries compiled with symbolic dimensions
        self._history = {}       # per argument structure: the shapes it was called with (the policy)
        self._no_symbolic = set()  # structures whose symbolic compile failed: they stay specialised
        self.static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        self.static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        if backend not in ("llvm", "reference"):
            raise ValueError(f"jit: backend must be 'llvm' or 'reference', got {backend!r}")
        self.backend = backend
        self._cache, self._lock, self.misses = {}, threading.RLock(), 0
        self._fast = None   # the dispatch fast path of the signature called last (plain array arguments)
        self._tree_fast = None  # (tree, fast path on its leaves) of the last call with other arguments

    def _prepare(self, args, kwargs):
        dyn_fun, dyn_args, dyn_kwargs, statics = _split_static(self.fun, args, kwargs, self.static_argnums,
                                                               self.static_argnames)
        leaves, names, in_tree = flatten_args(dyn_fun, dyn_args, dyn_kwargs)
        return dyn_fun, leaves, names, in_tree, statics

    def trace(self, *args, **kwargs):
        dyn_fun, leaves, names, in_tree, _ = self._prepare(args, kwargs)
        return trace_pytree(dyn_fun, leaves, names, in_tree, fun_name=self.__name__)

    def __get__(self, obj, objtype=None):
        """A jitted method gets its instance as the first argument, as in JAX (mark it static, or make
        the class a pytree, for the instance to be accepted)."""
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        fast = self._fast
        if fast is not None and not kwargs:
            out = fast(args)
            if out is not MISS:
                return out
        entry = None
        if self._cache and not _stack.builders and not (self.static_argnums or self.static_argnames):
            # A hit needs neither the argument names nor the function's signature (inspecting it took
            # ~50 us a call), and on the tree of the last such call not even the signature's lookup.
            tree_fast = self._tree_fast
            if tree_fast is not None:
                leaves = flatten_as(tree_fast[0], (args, kwargs))
                if leaves is not None:
                    out = tree_fast[1](leaves)
                    if out is not MISS:
                        return out
            leaves, in_tree = tree_flatten((args, kwargs))
            entry = self._hit(leaves, in_tree)
        if entry is None:
            dyn_fun, leaves, names, in_tree, statics = self._prepare(args, kwargs)
            if _stack.builders or any(isinstance(x, Tracer) for x in leaves):
                closed, out_tree = trace_pytree(dyn_fun, leaves, names, in_tree, fun_name=self.__name__)
                return tree_unflatten(out_tree, eval_ir(closed, *leaves))
            entry = self._entry(dyn_fun, leaves, names, in_tree, statics)
        if entry.fast is not None and not (self.static_argnums or self.static_argnames):
            if entry.in_tree == _flat_args_tree(len(leaves)):
                self._fast = entry.fast
            else:
                self._tree_fast = entry.in_tree, entry.fast
        return tree_unflatten(entry.out_tree, entry.run(leaves))

    def _hit(self, leaves, in_tree):
        """The cached entry of a call without static arguments, or None."""
        if any(isinstance(x, Tracer) for x in leaves):
            return None
        try:
            key = (in_tree, tuple(leaf_aval(x) for x in leaves), ())
        except TypeError:      # not an array: the full path names the argument
            return None
        return self._lookup(key)

    def _lookup(self, key):
        """The cached entry for key (its own, or a symbolic one it fits), counted as a hit; or None."""
        entry = self._cache.get(key)
        if entry is None:
            entry = next((self._cache[k] for k in self._symbolic if _fits(k, key)), None)
        if entry is not None:
            entry.hits += 1
        return entry

    def _entry(self, dyn_fun, leaves, names, in_tree, statics):
        key = (in_tree, tuple(leaf_aval(x) for x in leaves), statics)
        entry = self._lookup(key)
        if entry is not None:
            return entry
        explicit = self._explicit_pattern(key, names)
        pattern = explicit or self._policy_pattern(key, names)
        if pattern is not None:
            try:
                entry = self._compile(pattern, dyn_fun, leaves, names, in_tree, key)
                self._symbolic.append(pattern)
                return entry
            except Exception as e:   # the policy only tries: what fails for any size compiles per size
                if explicit:
                    raise
                self._no_symbolic.add(_structure(key))
                log.info("tracejit: %s stays shape-specialised: %s", self.__name__, e)
        return self._compile(key, dyn_fun, leaves, names, in_tree)

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

    def lower(self, *args, **kwargs):
        """The compiled signature of these arguments: .as_text() (optimised IR), .as_llvm(), .compile()."""
        dyn_fun, leaves, names, in_tree, statics = self._prepare(args, kwargs)
        entry = self._entry(dyn_fun, leaves, names, in_tree, statics)
        if entry.executable is None:
            raise ValueError("lower() needs the llvm backend")
        return Lowered(self, entry)

    def _compile(self, key, dyn_fun, leaves, names, in_tree, concrete=None):
        """Trace and compile the signature key (symbolic where concrete, the call's own, differs)."""
        with self._lock, _gc_paused():
            entry = self._cache.get(key)
            if entry is not None:
                return entry
            if config.log_compiles:
                why = explain_miss(self.__name__, concrete or key, names, [(k, e.names) for k, e in self._cache.items()])
                if concrete is not None:
                    why += "; compiled for any size of " + ", ".join(
                        f"{n}: {a.str_short()}" for n, a, c in zip(names, key[1], concrete[1]) if a != c)
                log.warning(why)
            t0 = time.perf_counter()
            with recording() as phases:
                closed, out_tree = trace_pytree(dyn_fun, leaves, names, in_tree, list(key[1]), fun_name=self.__name__)
            t1 = time.perf_counter()
            transforms = phases.get("transforms", 0.0)
            times = {"trace": t1 - t0 - transforms, "transforms": transforms}
            if self.backend == "reference":
                entry = CacheEntry(closed, in_tree, out_tree, _reference_executable(closed), times, names)
            else:
                closed = passes.optimize(closed)
                t2 = time.perf_counter()
                exe = compile_ir(closed, cache=self.cache)
                t3 = time.perf_counter()
                times.update({"passes": t2 - t1, **exe.times, "total": t3 - t0})
                entry = CacheEntry(closed, in_tree, out_tree, exe.run, times, names, exe)
                fast = exe.fast_call(len(leaves), entry, out_tree == LEAF)
                if fast is not None:
                    fast = _scalars_as_arrays(fast, leaves, exe.in_dtypes)
                    if out_tree != LEAF:
                        fast = lambda args, fast=fast, tree=out_tree: (
                            outs if (outs := fast(args)) is MISS else tree_unflatten(tree, outs))
                entry.fast = fast
            self._cache[key] = entry
            self.misses += 1
            return entry

    def cache_info(self):
        """A CacheInfo record (renders as a rich table): per signature its arguments, hits, compile time
        split into phases, code size and whether the code came from the disk cache."""
        entries = list(self._cache.items())
        rows = [SignatureInfo(tuple(zip(e.names, (a.str_short() for a in key[1]))), key[2], e.hits, dict(e.times),
                              e.executable.code_size if e.executable else 0,
                              bool(e.executable and e.executable.from_disk)) for key, e in entries]
        return CacheInfo(self.__name__, len(entries), sum(e.hits for _, e in entries), self.misses, rows)


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


def _reference_executable(closed):
    """Run the IR with the NumPy interpreter; results are fresh arrays owned by the caller."""
    def run(leaves):
        arrays = [np.asarray(x, dtype=leaf_aval(x).dtype) for x in leaves]
        outs = eval_ir(closed, *arrays)
        owned = {id(a) for a in arrays} | {id(c) for c in closed.consts}
        return [np.array(o) if id(o) in owned else np.asarray(o) for o in outs]
    return run


def jit(fun=None, *, static_argnums=(), static_argnames=(), backend="llvm", cache=True, dynamic_dims=None):
    """Compile fun per input signature. backend="reference" runs the IR with the NumPy interpreter;
    cache=False keeps its code out of the persistent disk cache (see tracejit.config).

    Symbolic dimensions (no recompile per size): a symbolic dimension is compiled for any size, read from
    the arguments at run time; the IR prints it by name (`f32[n,64]`).
    - dynamic_dims={"x": {0: "n"}} makes axis 0 of argument x symbolic, named n, from the first call. Keys
      are argument names or pytree paths as errors spell them ("batch", "batch['x']"); a key names every
      leaf under it. Axes with the same name must have equal sizes (x and its labels y: {0: "n"} each).
    - The policy, without dynamic_dims: when a call misses the cache and an axis of an argument has now
      been seen with `tracejit.config.symbolic_dims_after` distinct sizes (default 2; 0 turns it off)
      while the other axes kept theirs, that signature is compiled with the axis symbolic, and every later
      size reuses it. So a size storm compiles twice: the first size specialised, then once symbolic.
      Axes whose sizes always moved together (a batch of inputs and labels) share one dimension.
    Specialised entries stay and are preferred when a call matches them exactly. Where an operation needs
    a concrete size (a reshape mixing a symbolic dimension, a slice or pad of a symbolic axis, control
    flow, gather) the policy keeps compiling specialised code, and dynamic_dims raises an error naming
    the dimension and the operation."""
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames,
                                 backend=backend, cache=cache, dynamic_dims=dynamic_dims)
    return Jitted(fun, static_argnums, static_argnames, backend, cache, dynamic_dims)


def make_ir(fun, *, static_argnums=(), static_argnames=(), optimize=False):
    """The IR of fun for the given example arguments (arrays or ShapeDtypeStructs), as jax.make_jaxpr."""
    def make(*args, **kwargs):
        closed, _ = Jitted(fun, static_argnums, static_argnames).trace(*args, **kwargs)
        if optimize:
            closed = passes.optimize(closed)
        return closed
    return make
