"""jit, make_ir and eval_shape, wired from the pieces: argument handling, tracing, the signature cache
(dispatch.py), the passes and the backend."""
import contextlib
import functools
import gc
import inspect
import logging
import time

from . import debug, passes, shipping
from ._config import config
from .backend import Lowered, compile_ir
from .backend.executable import MISS
from .cache_info import CacheInfo, SignatureInfo, explain_miss
from .core.api_util import (
                             POSITIONAL,
                             ShapeDtypeStruct,
                             as_arrays,
                             flatten_args,
                             leaf_aval,
                             name_of,
                             owned,
                             static_arguments,
                             trace_pytree,
)
from .core.avals import Dim, check_nonempty, index_arg
from .core.pytree import LEAF, caller, tree_flatten, tree_unflatten
from .core.timing import recording
from .core.trace import Tracer, _stack, eval_ir
from .dispatch import CacheEntry, fast_path, flat_args_tree, shared_cache
from .sharding import check_shardings
from .traceback_util import api_boundary, mark_boundary, present
from .transposed_inputs import as_views, compile_soon, transposed_outputs, with_layouts


def _split_static(fun, args, kwargs, static_argnums, static_argnames):
    """Separate static arguments (part of the cache key, closed over by the trace) from dynamic ones."""
    nums = {i % len(args) if -len(args) <= i < 0 else i for i in static_argnums}
    statics = tuple((i, args[i]) for i in sorted(nums) if i < len(args))
    statics += tuple((k, kwargs[k]) for k in sorted(static_argnames) if k in kwargs)
    for where, value in statics:
        try:
            hash(value)
        except TypeError:
            raise TypeError(f"static argument {where!r} of {name_of(fun)} has "
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
        dynamic_fun.__signature__ = sig.replace(parameters=[p for i, p in enumerate(params) if not (
            (i in nums and p.kind in POSITIONAL) or p.name in static_argnames)])
    except (TypeError, ValueError):
        pass
    return dynamic_fun, dyn_args, dyn_kwargs, statics


log = logging.getLogger("tracejit")


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
    """A function traced once per input signature, optimised, compiled and cached (see `jit`)."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), backend="llvm", cache=True, dynamic_dims=None,
                 ship_code=True):
        functools.update_wrapper(self, fun, updated=())  # a callable object's attributes stay its own
        self.__name__ = name_of(fun)
        self.fun, self.cache, self.ship_code, self._token = fun, cache, ship_code, None
        self.static_argnums, self.static_argnames = static_arguments(fun, static_argnums, static_argnames)
        if backend not in ("llvm", "reference"):
            raise ValueError(f"jit: backend must be 'llvm' or 'reference', got {backend!r}")
        self.backend = backend
        if not isinstance(dynamic_dims or {}, dict) or not all(isinstance(v, dict) for v in (dynamic_dims or {}).values()):
            raise TypeError(f"jit: dynamic_dims must map argument names to {{axis: dimension name}} dicts, got "
                            f"{dynamic_dims!r}")
        options = (self.static_argnums, self.static_argnames, backend, cache, ship_code, config.scan_checkpoint,
                   tuple((k, tuple(v.items())) for k, v in (dynamic_dims or {}).items()))
        self._signatures = shared_cache(fun, options, dynamic_dims)
        self._signatures.watch(self._forget)
        self._fast = None   # the dispatch fast path of the signature called last (plain array arguments)
        self._layout_fast = None  # and that signature's for large transposed arrays (transposed_inputs)
        self._tree_fast = None  # the fast path (args, kwargs) of the last call with other arguments

    def _forget(self, entry):
        """An entry was evicted: drop the fast paths that lead to it, so that its code can be freed."""
        if self._fast is not None and self._fast is entry.fast:
            self._fast = self._layout_fast = None
        if self._tree_fast is not None and self._tree_fast is entry.tree_fast:
            self._tree_fast = None

    @property
    def dynamic_dims(self):
        return self._signatures.dynamic_dims

    @property
    def misses(self):
        """How many signatures were compiled for this function with these options."""
        return self._signatures.misses

    @property
    def _lock(self):
        return self._signatures.lock

    def options(self):
        """The keyword arguments of jit that made this object."""
        return {"static_argnums": self.static_argnums, "static_argnames": self.static_argnames,
                "backend": self.backend, "cache": self.cache, "dynamic_dims": self.dynamic_dims,
                "ship_code": self.ship_code}

    def __reduce__(self):
        """Pickles with the function, the options and the compiled code (see tracejit/shipping.py)."""
        return _unpickle, shipping.state(self)

    def _prepare(self, args, kwargs):
        dyn_fun, dyn_args, dyn_kwargs, statics = _split_static(self.fun, args, kwargs, self.static_argnums,
                                                               self.static_argnames)
        leaves, names, in_tree = flatten_args(dyn_fun, dyn_args, dyn_kwargs)
        return dyn_fun, leaves, names, in_tree, statics

    def _trace_ir(self, args, kwargs):
        """(ClosedIR, output tree) of the function traced on these arguments (arrays or ShapeDtypeStructs)."""
        dyn_fun, leaves, names, in_tree, _ = self._prepare(args, kwargs)
        return trace_pytree(dyn_fun, leaves, names, in_tree, fun_name=self.__name__)

    @api_boundary
    def trace(self, *args, **kwargs):
        """The function traced on these arguments (arrays or ShapeDtypeStructs), as JAX's ahead-of-time
        jit(f).trace(...): .jaxpr (the ClosedIR), .out_info (ShapeDtypeStructs), .lower()."""
        return Traced(self, args, kwargs, *self._trace_ir(args, kwargs))

    @api_boundary
    def eval_shape(self, *args, **kwargs):
        """The shapes and dtypes of the result as ShapeDtypeStructs, traced without compiling (as JAX's)."""
        return self.trace(*args, **kwargs).out_info

    def __get__(self, obj, objtype=None):
        """A jitted method gets its instance as the first argument, as in JAX (mark it static, or make
        the class a pytree, for the instance to be accepted)."""
        return self if obj is None else functools.partial(self, obj)

    @mark_boundary
    def __call__(self, *args, **kwargs):
        """fun(*args, **kwargs) by the compiled code of their signature, compiled first on a miss; inside
        another trace, fun's IR inlined there."""
        try:   # (costs nothing until an exception: the call path stays as fast as without it)
            if config.debug_nans:
                return self._call_checking_nans(args, kwargs)
            fast = self._fast
            if fast is not None and not kwargs:
                out = fast(args)
                if out is not MISS:
                    return out
                if self._layout_fast is not None and (out := self._layout_fast(args)) is not MISS:
                    return out
            tree_fast = self._tree_fast
            if tree_fast is not None:
                out = tree_fast(args, kwargs)
                if out is not MISS:
                    return out
            if config.disable_jit:    # tj.disable_jit(): the function as it is (compat.py drops the fast paths)
                return self.fun(*args, **kwargs)
            entry = None
            if self._signatures.entries and not _stack.builders and not (self.static_argnums or self.static_argnames):
                # A hit needs neither the argument names nor the function's signature (inspecting it took
                # ~50 us a call).
                leaves, in_tree = tree_flatten((args, kwargs))
                entry = self._hit(leaves, in_tree)
            if entry is None:
                dyn_fun, leaves, names, in_tree, statics = self._prepare(args, kwargs)
                if _stack.builders or any(isinstance(x, Tracer) for x in leaves):
                    closed, out_tree = trace_pytree(dyn_fun, leaves, names, in_tree, fun_name=self.__name__)
                    return tree_unflatten(out_tree, eval_ir(closed, *leaves))
                entry = self._entry(dyn_fun, leaves, names, in_tree, statics)
            if entry.fast is not None and not (self.static_argnums or self.static_argnames):
                if entry.in_tree == flat_args_tree(len(leaves)):
                    self._fast, self._layout_fast = entry.fast, entry.layout_fast
                else:
                    self._tree_fast = entry.tree_fast
            return tree_unflatten(entry.out_tree, entry.run(leaves))
        except Exception as e:
            present(e)
            raise

    def _call_checking_nans(self, args, kwargs):
        """The call without the fast paths, its outputs checked for NaN (config.debug_nans, tracejit.debug)."""
        if config.disable_jit:
            return self.fun(*args, **kwargs)
        dyn_fun, leaves, names, in_tree, statics = self._prepare(args, kwargs)
        if _stack.builders or any(isinstance(x, Tracer) for x in leaves):
            closed, out_tree = trace_pytree(dyn_fun, leaves, names, in_tree, fun_name=self.__name__)
            return tree_unflatten(out_tree, eval_ir(closed, *leaves))
        entry = self._entry(dyn_fun, leaves, names, in_tree, statics)
        outs = entry.run(leaves)
        debug.check_nans(self.__name__, entry.closed, names, as_arrays(leaves), outs)
        return tree_unflatten(entry.out_tree, outs)

    def _hit(self, leaves, in_tree):
        """The cached entry of a call without static arguments, or None."""
        if any(isinstance(x, Tracer) for x in leaves):
            return None
        try:
            key = (in_tree, tuple(leaf_aval(x) for x in leaves), ())
        except TypeError:      # not an array: the full path names the argument
            return None
        return self._signatures.lookup(key)

    def _entry(self, dyn_fun, leaves, names, in_tree, statics):
        """The entry for these arguments: cached, or compiled now (symbolically where the policy or
        dynamic_dims says so)."""
        key = (in_tree, tuple(leaf_aval(x) for x in leaves), statics)
        entry = self._signatures.lookup(key)
        if entry is None and (self._signatures.shipped or self._signatures.parcels):
            entry = self._link_shipped(key, leaves)
        if entry is not None:
            return entry
        pattern, explicit = self._signatures.symbolic_signature(key, names)
        if pattern is not None:
            try:
                return self._compile(pattern, dyn_fun, leaves, names, in_tree, key)
            except Exception as e:   # the policy only tries: what fails for any size compiles per size
                if explicit:
                    raise
                self._signatures.stays_specialised(key)
                log.info("tracejit: %s stays shape-specialised: %s", self.__name__, e)
        return self._compile(key, dyn_fun, leaves, names, in_tree)

    @api_boundary
    def lower(self, *args, **kwargs):
        """The compiled signature of these arguments: .as_text() (optimised IR), .as_llvm(), .compile()."""
        dyn_fun, leaves, names, in_tree, statics = self._prepare(args, kwargs)
        entry = self._entry(dyn_fun, leaves, names, in_tree, statics)
        if entry.executable is None:
            raise ValueError("lower() needs the llvm backend")
        return Lowered(self, entry, [getattr(x, "shape", ()) for x in leaves])

    def _compile(self, key, dyn_fun, leaves, names, in_tree, concrete=None):
        """Trace and compile the signature key (symbolic where concrete, the call's own, differs)."""
        with self._lock, _gc_paused():
            entry = self._signatures.get(key)
            if entry is not None:
                return entry
            if config.log_compiles:
                cached = [(k, e.names) for k, e in self._signatures.entries.items()]
                why = explain_miss(self.__name__, concrete or key, names, cached)
                if concrete is not None:
                    why += "; compiled for any size of " + ", ".join(
                        f"{n}: {a.str_short()}" for n, a, c in zip(names, key[1], concrete[1]) if a != c)
                log.warning(why)
            t0 = time.perf_counter()
            fits = {}
            with recording() as phases:
                closed, out_tree = trace_pytree(dyn_fun, leaves, names, in_tree, list(key[1]), fun_name=self.__name__,
                                                fits=fits)
            t1 = time.perf_counter()
            transforms = phases.get("transforms", 0.0)
            times = {"trace": t1 - t0 - transforms, "transforms": transforms}
            if self.backend == "reference":
                entry = CacheEntry(closed, in_tree, out_tree, _reference_executable(closed), times, names, fits=fits)
            else:
                traced, closed = closed, passes.optimize(closed)
                t2 = time.perf_counter()
                soon = compile_soon(traced, leaves, [v.aval for v in closed.ir.invars],
                                    lambda c: compile_ir(c, cache=self.cache))
                exe, views = _compiled(closed, self.cache)
                t3 = time.perf_counter()
                times.update({"passes": t2 - t1, **exe.times, "total": t3 - t0})
                entry = _native_entry(closed, in_tree, out_tree, names, exe, views, times, leaves, fits, self.cache,
                                      traced, soon)
            self._signatures.add(key, entry)
            self._signatures.misses += 1
            return entry

    def _link_shipped(self, key, leaves):
        """The entry of a signature that came with a pickle and that key fits, linked now (or compiled from
        its IR where the shipped code does not fit this process); None when none fits."""
        with self._lock, _gc_paused():
            shipping.unpack(self)
            found = self._signatures.take_shipped(key)
            if found is None:      # (another thread may have linked it meanwhile)
                return self._signatures.lookup(key)
            pattern, shipped = found
            t0 = time.perf_counter()
            exe, views = _compiled(shipped.closed, self.cache, shipped.entries)
            times = {**exe.times, "total": time.perf_counter() - t0}
            entry = _native_entry(shipped.closed, pattern[0], shipped.out_tree, shipped.names, exe, views, times, leaves,
                                  shipped.fits, self.cache)
            self._signatures.add(pattern, entry)
            if exe.source != "shipped":
                self._signatures.misses += 1
                log.info("tracejit: %s: the shipped code of a signature does not fit this process; compiled its IR "
                         "here", self.__name__)
            return entry

    def cache_info(self):
        """A CacheInfo record (renders as a rich table): per signature its arguments, hits, compile time
        split into phases, code size and where the code came from (compiled, disk, shipped); misses (signatures
        compiled here) and evicted (entries dropped by the memory cache's bounds)."""
        entries = list(self._signatures.entries.items())
        rows = [SignatureInfo(tuple(zip(e.names, (a.str_short() for a in key[1]))), key[2], e.hits, dict(e.times),
                              e.executable.code_size if e.executable else 0,
                              e.executable.source if e.executable else "reference",
                              arena_bytes=e.executable.arena_bytes if e.executable else None) for key, e in entries]
        return CacheInfo(self.__name__, len(entries), sum(e.hits for _, e in entries), self.misses,
                         self._signatures.evicted, rows)


def _compiled(closed, cache, shipped=None):
    """(The Executable of an optimised IR, {output: permutation} of the outputs it returns as transposed views):
    the IR compiled is closed with those outputs' transposes left out (transposed_inputs.transposed_outputs), the
    same wherever the IR is compiled, so that shipped code fits."""
    compiled, views = transposed_outputs(closed)
    return compile_ir(compiled, cache=cache, shipped=shipped), views


def _native_entry(closed, in_tree, out_tree, names, exe, views, times, leaves, fits, cache, traced=None, soon=None):
    """The cache entry of compiled code, with its fast path for calls like this one (leaves), its outputs at
    `views` returned as transposed views, and the code for large transposed inputs compiled from the traced IR
    (else the optimised one) when they come, or already compiling (soon: transposed_inputs.compile_soon)."""
    run = with_layouts(as_views(exe.run, views, False), traced or closed, exe.in_avals,
                       lambda c: compile_ir(c, cache=cache), soon)
    entry = CacheEntry(closed, in_tree, out_tree, run, times, names, exe, fits)
    entry.fast = fast_path(exe, entry, leaves, out_tree, views)
    if entry.fast is not None:
        entry.tree_fast = caller(in_tree, entry.fast, MISS)
    transposed, count, single = getattr(run, "transposed", None), entry.count, out_tree == LEAF
    if transposed is not None and not fits:
        def layout_fast(args):
            outs = transposed(args)
            if outs is MISS:
                return MISS
            count.hits += 1
            return outs[0] if single else tree_unflatten(out_tree, outs)
        entry.layout_fast = layout_fast
    return entry


def _unpickle(*state):
    """A Jitted from the state Jitted.__reduce__ gave (tracejit/shipping.py)."""
    return shipping.restore(Jitted, *state)


def _reference_executable(closed):
    """Run the IR with the NumPy interpreter, after the sizes of symbolic dimensions an operation needs
    nonempty (check_nonempty)."""
    needs = [(i, k, d) for i, v in enumerate(closed.ir.invars) for k, d in enumerate(v.aval.shape)
             if isinstance(d, Dim) and d.needed_by is not None]

    def run(leaves):
        arrays = as_arrays(leaves)
        check_nonempty([d for _, _, d in needs], [arrays[i].shape[k] for i, k, _ in needs])
        return owned(eval_ir(closed, *arrays))
    return run


def jit(fun=None, *, static_argnums=(), static_argnames=(), backend="llvm", cache=True, dynamic_dims=None,
        ship_code=True, donate_argnums=(), donate_argnames=(), inline=False, keep_unused=False, device=None,
        in_shardings=None, out_shardings=None):
    """Compile fun per input signature (as jax.jit): `jit(f)(*args)` traces f with abstract arguments
    (shape and dtype, no data), optimises the IR, compiles it to native code and caches the code per
    signature (the pytree structure, shapes and dtypes of the arguments, and the static arguments); a
    later call with the same signature runs the cached code. Results are numpy arrays (pytrees of them),
    fresh for the caller. Usable as a decorator, with or without keywords.

        import numpy as np, tracejit as tj, tracejit.numpy as tnp

        @tj.jit
        def norm(x):
            return tnp.sqrt(tnp.sum(x * x))

        norm(np.array([3.0, 4.0]))                        # array(5.): compiled for f64[2], then cached
        print(norm.lower(np.array([3.0, 4.0])).as_text())  # the optimised IR of that signature
        norm.cache_info()                                 # 1 signature, 1 hit, compile time per phase
        scale = tj.jit(lambda x, n: x * n, static_argnums=1)   # n is a Python value; each n compiles

    static_argnums, static_argnames: positions (int or tuple, negative from the end) and names of
        arguments that are Python values rather than arrays: sizes, flags, callables. Their values are
        part of the signature (another value compiles again), so they must be hashable; inside the trace
        they are ordinary Python values (`if flag:` and `range(n)` work on them).
    dynamic_dims: {argument name or pytree path: {axis: dimension name}} compiles those axes for any size
        (see "Symbolic dimensions" below).
    cache: False keeps this function's code out of the persistent disk cache (tracejit.config.disk_cache
        turns it off for all).
    ship_code: False pickles the function without its compiled code (a process that unpickles it traces and
        compiles it itself). By default a pickle (Dask, Ray, multiprocessing) carries the code of every
        compiled signature, which a process on the same CPU with the same versions links without
        compiling (see the README's "Dask and other pickle-based engines").
    backend: "llvm" (native code, the default; JAX's "cpu" means it too) or "reference" (run the IR with the
        NumPy interpreter, the oracle that tests compare the compiled code with).
    donate_argnums, donate_argnames, inline, keep_unused, device: JAX's, accepted so that JAX code runs: there is no
        argument donation (results never alias inputs), a jitted function called in a trace is always
        inlined, and there is one device.
    in_shardings, out_shardings: JAX's, pytrees of shardings (tracejit.sharding's NamedSharding ..., a
        PartitionSpec, None): checked and accepted; on one device every shard is the whole array.

    The returned Jitted object is called like fun and also offers:
        lower(*args)   the signature of these arguments, compiled: .as_text() optimised IR, .as_llvm()
                       LLVM IR, .compile() -> callable with .as_asm() machine code
        trace(*args)   (ClosedIR, output tree) of the trace, before optimisation (make_ir prints it)
        cache_info()   per signature: arguments, hits, compile seconds per phase, code size, code source
        misses         how many signatures were compiled
    It works on every callable (functions, lambdas, functools.partial, bound methods, callable objects,
    tracejit.numpy functions) and composes with grad, vmap and the rest in any order; called inside
    another trace, it inlines its IR there.

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
                                 backend=backend, cache=cache, dynamic_dims=dynamic_dims, ship_code=ship_code,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                                 in_shardings=in_shardings, out_shardings=out_shardings)
    if not callable(fun):
        raise TypeError(f"jit: expected a callable, got {type(fun).__name__}")
    for n in donate_argnums if isinstance(donate_argnums, (tuple, list)) else (donate_argnums,):
        index_arg(n, "jit: donate_argnums")
    check_shardings(in_shardings, "jit: in_shardings")
    check_shardings(out_shardings, "jit: out_shardings")
    backend = "llvm" if backend == "cpu" else backend
    return Jitted(fun, static_argnums, static_argnames, backend, cache, dynamic_dims, ship_code)


def make_ir(fun, *, static_argnums=(), static_argnames=(), optimize=False):
    """The IR of fun for the given example arguments (arrays or ShapeDtypeStructs), as jax.make_jaxpr:
    `print(make_ir(f)(x))`. optimize=True gives the IR after the passes (DCE, CSE, folding, simplification),
    as jit compiles it."""
    @api_boundary
    def make(*args, **kwargs):
        closed, _ = Jitted(fun, static_argnums, static_argnames)._trace_ir(args, kwargs)
        if optimize:
            closed = passes.optimize(closed)
        return closed
    return make


@api_boundary
def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of fun(*args, **kwargs) as a pytree of ShapeDtypeStructs, found by tracing
    without computing anything (as jax.eval_shape); the arguments may be arrays or ShapeDtypeStructs."""
    return Jitted(fun).trace(*args, **kwargs).out_info


class Traced:
    """jit(f).trace(*args): the traced function of one signature, as JAX's Traced stage."""

    def __init__(self, jitted, args, kwargs, closed, out_tree):
        self._jitted, self._args, self._kwargs = jitted, args, kwargs
        self.jaxpr, self.fun_name = closed, jitted.__name__
        self.out_info = tree_unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                                                  for a in closed.out_avals])

    def lower(self):
        """The compiled signature (Lowered: .as_text(), .as_llvm(), .compile())."""
        return self._jitted.lower(*self._args, **self._kwargs)
