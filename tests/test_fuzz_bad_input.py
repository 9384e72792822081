"""A seeded bad-input fuzzer: tracejit.numpy, tracejit.lax and jit called with bad (and good) axes, shapes, dtypes,
masks, indices, sizes and static arguments, eagerly and under jit, grad and vmap. Each outcome is classified
against NumPy's (against JAX's semantics, written out here, for lax and for jit's own arguments):

- a correct result: NumPy's value, shape and dtype (vmap: NumPy's results stacked; grad: central differences of
  the NumPy function, exact for the piecewise-linear functions drawn here);
- a clear error: an exception of the type NumPy raises (its nearest builtin class; an AxisError must be an
  AxisError; where NumPy cannot allocate or represent a size, MemoryError/OverflowError, a ValueError too) whose
  message names the argument or the value; or, where NumPy accepts a value tracejit does not support (a dtype),
  a TypeError or NotImplementedError that says so;
- a failure: anything else (a wrong answer, an error of another type or whose message names neither, an internal
  exception such as AttributeError, KeyError, AssertionError or StopIteration). The test fails on failures.

Calls come from fixed seeds, so every run checks the same ones; TRACEJIT_FUZZ_BAD_INPUT=20000 makes more calls.
"""
import os
import random
import warnings

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

N_CALLS = int(os.environ.get("TRACEJIT_FUZZ_BAD_INPUT", "300"))
CHUNK = 100
MODES = ["eager", "jit", "grad", "vmap"]
INTERNAL = (AttributeError, KeyError, AssertionError, StopIteration, NameError, UnboundLocalError, RecursionError,
            SystemError, ZeroDivisionError)
SHAPES = [(), (1,), (4,), (2, 3), (3, 1), (1, 4), (2, 1, 3), (0,), (2, 0)]
AXES = [0, 1, -1, 2, -3, 3, -5, None, "0", 1.5, 0.0, True, False, [0], (0,), (0, 1), (1, 0), (0, 0), (0, -1),
        [0, 1], np.int64(1), np.int32(-1), np.array(0), np.array([0]), np.bool_(True), np.float64(0), (0.0,),
        ((0,),), (np.int64(0),), ()]
BAD_SHAPES = [(2, 3), (6,), 6, (3, -1), (-1, -1), (-1,), -1, (2, -3), -6, (0,), 0, (), (3.0, 2), 2.0, (True, 6),
              True, np.bool_(True), "6", None, (6, None), [2, 3], np.array([2, 3]), np.array([2.0, 3.0]),
              np.int64(6), np.array(6), (np.int64(2), 3), (2**64,), (2**32, 2**32), (2**31, 2**31), 2**63, (1, 2, 3)]
DTYPES = [np.float32, "float64", "f8", np.int32, "int64", bool, int, float, "bool", np.dtype("float32"), None,
          "int8", "uint8", "float16", "complex64", "S3", object, "notadtype", 3, 1.5]
# NumPy's errors that come from its implementation rather than a check: a ValueError that says why is clear too
ACCIDENTS = (MemoryError, OverflowError, ZeroDivisionError)     # (np.split(x, 0) divides by zero)
TOO_BIG = (2**64,), (2**32, 2**32), (2**31, 2**31), 2**63    # NumPy refuses these before allocating anything


def reduction(name):
    return lambda M, x, axis: getattr(M, name)(x, axis=axis)


# name -> f(M, x, axis): every function of tracejit.numpy that takes an axis
AXIS_FUNCTIONS = {
    **{name: reduction(name) for name in ["sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "argmax",
                                          "argmin", "cumsum", "median", "nansum", "nanmean", "nanmax", "ptp",
                                          "count_nonzero", "average"]},
    "expand_dims": lambda M, x, a: M.expand_dims(x, a), "squeeze": lambda M, x, a: M.squeeze(x, a),
    "flip": lambda M, x, a: M.flip(x, a), "roll": lambda M, x, a: M.roll(x, 1, a),
    "diff": lambda M, x, a: M.diff(x, axis=a), "concatenate": lambda M, x, a: M.concatenate([x, x], a),
    "stack": lambda M, x, a: M.stack([x, x], a), "swapaxes": lambda M, x, a: M.swapaxes(x, a, 0),
    "moveaxis": lambda M, x, a: M.moveaxis(x, a, 0), "take": lambda M, x, a: M.take(x, [0], a),
    "sort": lambda M, x, a: M.sort(x, a), "argsort": lambda M, x, a: M.argsort(x, a),
    "repeat": lambda M, x, a: M.repeat(x, 2, a), "split": lambda M, x, a: M.split(x, 1, a),
    "array_split": lambda M, x, a: M.array_split(x, 2, a),
    "take_along_axis": lambda M, x, a: M.take_along_axis(x, np.zeros((1,) * np.ndim(x), np.int64), a),
    "transpose": lambda M, x, a: M.transpose(x, (a, *range(1, np.ndim(x)))),
    "diagonal": lambda M, x, a: M.diagonal(x, 0, a, -1),
}

# name -> f(M, x, shape): every function that takes a shape or a size
SHAPE_FUNCTIONS = {
    "zeros": lambda M, x, s: M.zeros(s) + x, "ones": lambda M, x, s: M.ones(s) * x,
    "empty": lambda M, x, s: M.zeros_like(M.empty(s)) + x, "full": lambda M, x, s: M.full(s, x),
    "reshape": lambda M, x, s: M.reshape(M.broadcast_to(x, (6,)) * np.arange(6), s),
    "broadcast_to": lambda M, x, s: M.broadcast_to(x, s), "tile": lambda M, x, s: M.tile(M.stack([x, 2 * x]), s),
    "eye": lambda M, x, s: M.eye(s) * x, "identity": lambda M, x, s: M.identity(s) * x,
    "linspace": lambda M, x, s: M.linspace(0, x, s),
}


class Case:
    """One call: f(M, *args) with M numpy or tracejit.numpy; `ref(*args)` computes the expected outcome (NumPy's
    by default); an error must name one of `names`; `modes` are those that apply. `may_refuse` = (exception
    class, words in its message): a refusal tracejit may give where NumPy returns a result (an unsupported dtype);
    `also_raises`: exception classes as good as NumPy's where NumPy raises (its choice depends on its check order)."""

    def __init__(self, what, f, args, names, modes=MODES, ref=None, may_refuse=None, also_raises=()):
        self.what, self.f, self.args, self.names, self.modes = what, f, args, names, modes
        self.ref = ref or (lambda *a: f(np, *a))
        self.may_refuse, self.also_raises = may_refuse, also_raises


def random_array(rng, shape, dtype="float64"):
    gen = np.random.default_rng(rng.randrange(2**32))
    if dtype == "bool":
        return gen.random(shape) < 0.5
    return (gen.standard_normal(shape) * 3).astype(dtype)


def names_of(*values, args=()):
    return tuple(args) + tuple(repr(v) for v in values) + tuple(str(v) for v in values if v is not None)


def axis_case(rng):
    name = rng.choice(sorted(AXIS_FUNCTIONS))
    f, axis = AXIS_FUNCTIONS[name], rng.choice(AXES)
    # NumPy fails by accident where JAX and tracejit return a result: average and median of empty arrays (it divides
    # by zero, or reshapes to (0, -1)), roll of a 0-d array (it unpacks nothing); those inputs are not drawn
    shapes = [s for s in SHAPES if 0 not in s] if name in ("average", "median") else SHAPES[1:] if name == "roll" \
        else SHAPES
    x = random_array(rng, rng.choice(shapes), rng.choice(["float64"] * 4 + ["float32", "int64", "bool"]))
    # NumPy's C functions read a 0-d array as 1-d for axis 0 or -1 (np.sum(np.array(1.0), axis=0) is 1.0, and
    # np.ptp(np.array(True), axis=0) fails on its bool instead); tracejit refuses the axis, as JAX does
    zero_d = (np.exceptions.AxisError, "out of bounds for an array of rank 0") if x.ndim == 0 else None
    # NumPy checks a bool axis's bounds before its type in mean, var, std (AxisError), after it in sum (TypeError):
    # tracejit refuses the bool first, always
    also = ((TypeError,) if isinstance(axis, bool) else ()) + ((np.exceptions.AxisError,) if zero_d else ())
    return Case(f"{name}(x{list(x.shape)}:{x.dtype}, axis={axis!r})", lambda M, x: f(M, x, axis), (x,),
                names_of(axis, args=("axis", "axes", "rank", "dimension", x.dtype.name)), may_refuse=zero_d,
                also_raises=also)


def shape_case(rng):
    name = rng.choice(sorted(SHAPE_FUNCTIONS))
    f, shape = SHAPE_FUNCTIONS[name], rng.choice([s for s in BAD_SHAPES if name != "reshape" or s is not None])
    x = random_array(rng, (), rng.choice(["float64", "float32"]))
    ref = None
    if (name == "tile" or name == "linspace" and np.ndim(shape) == 0) and any(shape is big for big in TOO_BIG):
        def ref(x):      # NumPy tries to allocate these first (or crashes): the outcome written out
            raise ValueError("array is too big")
    return Case(f"{name}(shape={shape!r})", lambda M, x: f(M, x, shape), (x,),
                names_of(shape, args=("shape", "size", "dimension", "num", "reps", "N", "too big")), ref=ref)


def mask_case(rng):
    """x[mask] and x.at[mask] with masks of the right and of wrong shapes (only under a trace: eagerly, x[...]
    is NumPy's own indexing)."""
    x = random_array(rng, rng.choice([(6,), (2, 3), (3, 2), (2, 3, 1)]))
    mask_shape = rng.choice([x.shape, x.shape[:1], x.shape[1:], (x.shape[0] + 1,), (x.shape[0] - 1,), (),
                             (2,), (2, 2)])
    mask = random_array(rng, mask_shape, "bool")
    form = rng.choice(["x[m]", "x[m, ...]", "x[..., m]", "x[:, m]", "x[None, m]", "x[m, 0]", "set", "add"])
    if form == "set":
        def ref(x):
            y = x.copy()
            y[mask] = 2.0
            return y
        return Case(f"x{list(x.shape)}.at[mask{list(mask.shape)}].set(2.0)", lambda M, x: x.at[mask].set(2.0),
                    (x,), ("boolean", "mask", "indices"), ["jit", "grad", "vmap"], ref=ref)
    if form == "add":
        def ref(x):
            y = x.copy()
            y[mask] += 1.0
            return y
        return Case(f"x{list(x.shape)}.at[mask{list(mask.shape)}].add(1.0)", lambda M, x: x.at[mask].add(1.0),
                    (x,), ("boolean", "mask", "indices"), ["jit", "grad", "vmap"], ref=ref)
    index = eval("lambda x, m: " + form)
    return Case(f"{form} on x{list(x.shape)} with m{list(mask.shape)}", lambda M, x: index(x, mask), (x,),
                ("boolean", "mask", "index", "indices"), ["jit", "grad", "vmap"])


INDICES = [0, 3, -1, -5, 5, 17, np.array([0, 3]), np.array([4]), np.array([-5]), np.array([5]), [0, 1], [[0], [1]],
           1.5, np.array([1.0]), True, False, np.bool_(True), np.array([True, False]), "a", slice(None, None, 0),
           slice(1, None, -1), (0, 0), (0, 0, 0, 0), (Ellipsis, Ellipsis), (Ellipsis, 0), (None, 0), np.int32(2),
           np.array(1), np.array([], np.int64), np.array([1, 2], np.uint8)]


def index_case(rng):
    x = random_array(rng, rng.choice([(5,), (2, 3), (4, 1, 2)]))
    idx = rng.choice(INDICES)
    if rng.random() < 0.5:
        return Case(f"x{list(x.shape)}[{idx!r}]", lambda M, x: x[idx], (x,),
                    names_of(idx, args=("index", "indices", "ellipsis", "step", "out of bounds")),
                    ["jit", "grad", "vmap"])
    axis = rng.choice([None, 0, -1])
    if isinstance(idx, (float, str, slice, tuple)):
        idx = np.array([1.5])        # NumPy casts a Python float or string scalar to an int (take 1.7 is x[1])
    outside = np.asarray(idx).dtype.kind in "iu" and filled_take(x, idx, axis) is not None
    return Case(f"take(x{list(x.shape)}, {idx!r}, axis={axis})", lambda M, x: M.take(x, idx, axis), (x,),
                names_of(idx, args=("index", "indices", "out of bounds")),
                ["eager", "jit", "vmap"] if outside else MODES, ref=lambda x: filled_take(x, idx, axis, np.take))


def filled_take(x, idx, axis, otherwise=lambda *args: None):
    """JAX's take where an integer index is outside [-n, n): NaN there (NumPy raises IndexError); else
    otherwise(x, idx, axis). (Its derivative is 0 there, as JAX's: finite differences of NaN do not say so.)"""
    i = np.asarray(idx)
    if axis is None:
        x, axis = x.ravel(), 0
    axis, n = axis % x.ndim, x.shape[axis % x.ndim]
    inside = (i >= -n) & (i < n)
    if i.dtype.kind not in "iu" or inside.all():
        return otherwise(x, idx, axis)
    taken = np.take(x, np.where(inside, i, 0), axis)
    return np.where(inside.reshape((1,) * axis + i.shape + (1,) * (x.ndim - axis - 1)), taken, np.nan)


def dtype_case(rng):
    dtype = rng.choice(DTYPES)
    form = rng.choice(["astype", "zeros", "sum", "full", "arange", "mean", "cumsum", "eye", "ones_like"])
    x = random_array(rng, rng.choice([(3,), (2, 2)]), rng.choice(["float64", "int64", "float32"]))
    f = {"astype": lambda M, x: M.astype(x, dtype), "zeros": lambda M, x: M.zeros(3, dtype) + M.ravel(x)[0],
         "sum": lambda M, x: M.sum(x, dtype=dtype), "full": lambda M, x: M.full(2, M.ravel(x)[0], dtype),
         "arange": lambda M, x: M.arange(3, dtype=dtype), "mean": lambda M, x: M.mean(x, dtype=dtype),
         "cumsum": lambda M, x: M.cumsum(x, dtype=dtype), "eye": lambda M, x: M.eye(2, dtype=dtype),
         "ones_like": lambda M, x: M.ones_like(x, dtype)}[form]
    try:
        names = names_of(dtype, np.dtype(dtype).name, args=("dtype",))
    except TypeError:
        names = names_of(dtype, args=("dtype",))
    return Case(f"{form}(x{list(x.shape)}:{x.dtype}, dtype={dtype!r})", f, (x,), names,
                may_refuse=((TypeError, NotImplementedError), "support"))


def size_case(rng):
    x = random_array(rng, rng.choice([(3,), (2, 3)]))
    form = rng.choice(["repeat", "linspace", "pad", "arange", "diff", "array_split", "split", "tile", "tri"])
    n = rng.choice([2, 0, -1, 2.0, True, np.int64(2), 1.5, None] + {
        "repeat": [np.array([1, 2]), np.array([1, 0, 2])], "pad": [np.array([1, 2]), np.array([[1, 2]] * 3), (1,)],
        "array_split": [np.array([1, 2]), [-1, 5]], "split": [[1]], "tile": [(2, 1), np.array([1, 2])]}.get(form, []))
    f = {"repeat": lambda M, x: M.repeat(x, n, axis=-1), "linspace": lambda M, x: M.linspace(M.ravel(x)[0], 1.0, n),
         "pad": lambda M, x: M.pad(x, n), "arange": lambda M, x: M.arange(n) + M.ravel(x)[0],
         "diff": lambda M, x: M.diff(x, n), "array_split": lambda M, x: M.array_split(x, n, -1),
         "split": lambda M, x: M.split(x, n, -1), "tile": lambda M, x: M.tile(x, n),
         "tri": lambda M, x: M.tril(M.ones((3, 3)) * M.ravel(x)[0], n)}[form]
    if isinstance(n, float) and form in ("repeat", "arange", "pad", "tri", "array_split"):
        n = 2       # NumPy truncates a float here; tracejit refuses it as JAX does (tests/test_bad_input.py)
    return Case(f"{form}(x{list(x.shape)}, {n!r})", f, (x,),
                names_of(n, args=("repeats", "num", "pad_width", "order", "sections", "reps", "stop", "split")))


def dynamic_slice_reference(x, starts, sizes, update=None):
    """JAX's dynamic_slice / dynamic_update_slice: a negative start counts from the end once, then clamps."""
    lo = [min(max(s + d * (s < 0), 0), d - n) for s, d, n in zip(starts, x.shape, sizes, strict=True)]
    where = tuple(slice(s, s + n) for s, n in zip(lo, sizes, strict=True))
    if update is None:
        return x[where]
    out = x.copy()
    out[where] = update
    return out


def lax_case(rng):
    x = random_array(rng, rng.choice([(5,), (4, 3)]))
    starts = [rng.randrange(-9, 9) for _ in x.shape]
    sizes = [rng.choice([0, 1, 2, d, d + 1, -1]) for d in x.shape]
    lax = tj.lax
    if rng.random() < 0.5:
        def ref(x, *s):
            if any(n < 0 or n > d for n, d in zip(sizes, x.shape, strict=True)):
                raise ValueError("slice_sizes")
            return dynamic_slice_reference(x, [int(v) for v in s], sizes)
        return Case(f"dynamic_slice(x{list(x.shape)}, {starts}, {sizes})",
                    lambda M, x, *s: lax.dynamic_slice(x, s, sizes), (x, *map(np.int64, starts)),
                    ("slice_sizes", str(tuple(sizes))), ref=ref)
    update = random_array(rng, tuple(max(n, 0) for n in sizes))

    def ref(x, *s):
        if any(n > d for n, d in zip(update.shape, x.shape, strict=True)):
            raise ValueError("update")
        return dynamic_slice_reference(x, [int(v) for v in s], update.shape, update)
    return Case(f"dynamic_update_slice(x{list(x.shape)}, u{list(update.shape)}, {starts})",
                lambda M, x, *s: lax.dynamic_update_slice(x, update, s), (x, *map(np.int32, starts)),
                ("update", str(update.shape)), ref=ref)


LAX_DIMS = {"squeeze": np.squeeze, "expand_dims": np.expand_dims, "rev": np.flip, "reduce_sum": np.sum,
            "reduce_max": np.max, "transpose": np.transpose}


def lax_dims_case(rng):
    """lax's axis arguments: JAX's rules written out (negative ones count from the end in squeeze and
    expand_dims only; the primitives take them non-negative), then NumPy's function with them."""
    x = random_array(rng, rng.choice([(3,), (1, 3), (2, 1, 3)]))
    op = rng.choice(sorted(LAX_DIMS))
    dims = rng.choice([(0,), (1,), (-1,), (2,), (5,), (0, 1), (1, 0), (0, 0), (1.0,), ("0",), (np.int64(0),), (),
                       (0, -1), (2, 1, 0)])

    def ref(x):
        if any(not isinstance(d, (int, np.integer)) for d in dims):
            raise TypeError("dimensions")
        if op not in ("squeeze", "expand_dims") and any(d < 0 for d in dims):
            raise ValueError("dimensions")
        try:
            return LAX_DIMS[op](x, dims)
        except np.exceptions.AxisError as e:     # tracejit.lax, as JAX's, raises a plain ValueError here
            raise ValueError(str(e)) from None
    return Case(f"lax.{op}(x{list(x.shape)}, {dims!r})", lambda M, x: getattr(tj.lax, op)(x, dims), (x,),
                names_of(dims, args=("dimensions", "axes", "axis", "permutation")), ref=ref)


def static_case(rng):
    """jit's own arguments: static positions and names as JAX reads them, a static axis, a traced one."""
    x = random_array(rng, (2, 3))
    kind = rng.choice(["argnums", "argnames", "unhashable", "static axis", "traced axis"])
    axis = rng.choice([0, -1, 2, 1.5, "0", (0, 1)])
    if kind == "argnums":
        nums, error = rng.choice([(1, None), (-1, None), (2, ValueError), (-3, ValueError), ("1", TypeError),
                                  (1.0, TypeError), ((1, 1), None), (None, TypeError)])   # None: axis is traced
        jitted = lambda: tj.jit(lambda x, a: tnp.sum(x, axis=a), static_argnums=nums)
        return static(f"jit(static_argnums={nums!r})", jitted, x, 0, error, ("static_argnums", repr(nums), "concrete"))
    if kind == "argnames":
        names, error = rng.choice([("a", None), ("b", ValueError), (("a", "x"), TypeError), (1, TypeError),
                                   (["a"], None)])      # ("a", "x"): a numpy array is not hashable
        jitted = lambda: tj.jit(lambda x, a: tnp.sum(x, axis=a), static_argnames=names)
        return static(f"jit(static_argnames={names!r})", jitted, x, 0, error,
                      ("static_argnames", repr(names), "unhashable"), by_name=True)
    if kind == "unhashable":
        jitted = lambda: tj.jit(lambda x, a: tnp.sum(x, axis=a[0]), static_argnums=1)
        return static("jit static list", jitted, x, [0], TypeError, ("unhashable", "list"))
    if kind == "traced axis":
        return static("jit traced axis", lambda: tj.jit(lambda x, a: tnp.sum(x, axis=a)), x, 0, TypeError,
                      ("concrete",))
    jitted = lambda: tj.jit(lambda x, a: tnp.sum(x, axis=a), static_argnums=1)
    return static(f"jit static axis={axis!r}", jitted, x, axis, "numpy", names_of(axis, args=("axis",)))


def static(what, jitted, x, value, error, names, by_name=False):
    """A Case for jit's own arguments: `error` is the expected exception type, None for NumPy's sum, or "numpy"
    for NumPy's outcome with this axis."""
    def run(M, x):
        if M is np:
            if error == "numpy" or error is None:
                return np.sum(x, axis=value)
            raise error(what)
        return jitted()(x, a=value) if by_name else jitted()(x, value)
    return Case(what, run, (x,), names, ["eager"])     # "eager": run calls jit itself


FAMILIES = [axis_case] * 6 + [shape_case] * 4 + [mask_case] * 2 + [index_case] * 3 + [dtype_case] * 2 + \
           [size_case] * 2 + [lax_case] * 2 + [lax_dims_case, static_case]


def outcome(fn):
    """fn's result as a list of arrays, or the exception it raised."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn()
    except Exception as e:      # noqa: BLE001 - every exception is an outcome to classify
        return e
    return [np.asarray(o) for o in out] if isinstance(out, (list, tuple)) else [np.asarray(out)]


def builtin_class(exc):
    """The nearest builtin exception class of exc (NumPy's own subclasses are ValueErrors, TypeErrors ...)."""
    return next(c for c in type(exc).__mro__ if c.__module__ == "builtins")


def classify(case, got, want, tol=None):
    """None for a correct result (within tol, by default a few ulp of the dtype) or a clear error, else what is
    wrong."""
    if isinstance(want, Exception):
        if isinstance(got, INTERNAL):
            return f"NumPy raises {type(want).__name__}({want}); tracejit {type(got).__name__}({got})"
        if not isinstance(got, Exception):
            return f"NumPy raises {type(want).__name__}({want}) but tracejit returned {got}"
        expected = (np.exceptions.AxisError if isinstance(want, np.exceptions.AxisError) else
                    (builtin_class(want), ValueError) if isinstance(want, ACCIDENTS) else builtin_class(want))
        if not isinstance(got, (expected, *case.also_raises)):
            return f"NumPy raises {type(want).__name__}({want}); tracejit {type(got).__name__}({got})"
        return None if any(n.lower() in str(got).lower() for n in case.names) else \
            f"{type(got).__name__}({got}) names none of {case.names}"
    if isinstance(got, Exception):
        kinds, words = case.may_refuse or ((), None)
        if isinstance(got, kinds) and words in str(got) and not isinstance(got, INTERNAL):
            return None
        return f"NumPy returns {[w.shape for w in want]}; tracejit raised {type(got).__name__}({got})"
    if len(got) != len(want):
        return f"{len(got)} results, NumPy has {len(want)}"
    for g, w in zip(got, want, strict=True):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"tracejit returned {g.dtype}{list(g.shape)}, NumPy {w.dtype}{list(w.shape)}"
        tol = tol or (1e-4 if w.dtype in (np.float32, np.float16) else 1e-9)
        if not (np.allclose(g, w, rtol=tol, atol=tol, equal_nan=True) if w.dtype.kind in "fiub" else
                np.array_equal(g, w)):
            return f"tracejit returned {g}, NumPy {w}"
    return None


def weighted_sum(M, outs, ws):
    """sum(out * w) over the results (one array, or a list of them)."""
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    return sum(M.sum(o * w) for o, w in zip(outs, ws, strict=True))


def finite_difference_grad(ref, x, ws, rest):
    """The gradient of weighted_sum by central differences (h = 1e-3: exact for piecewise-linear functions
    away from their kinks, which random inputs do not meet)."""
    grad = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = 1e-3
        hi, lo = (weighted_sum(np, ref(x + d, *rest), ws) for d in (e, -e))
        grad[k] = (hi - lo) / 2e-3
    return grad


def run_mode(case, mode, rng):
    """(tracejit's outcome, the expected one) of case in mode, or None where the mode does not apply."""
    x, rest = case.args[0], case.args[1:]
    f = lambda x, *r: case.f(tnp, x, *r)
    if mode == "eager":
        return outcome(lambda: f(*case.args)), outcome(lambda: case.ref(*case.args))
    if mode == "jit":
        return outcome(lambda: tj.jit(f, cache=False)(*case.args)), outcome(lambda: case.ref(*case.args))
    if mode == "vmap":
        xs = np.stack([x, random_array(rng, x.shape, x.dtype.name)])
        per_example = [outcome(lambda v=v: case.ref(v, *rest)) for v in xs]
        want = next((o for o in per_example if isinstance(o, Exception)), None)
        if want is None:
            want = [np.stack(parts) for parts in zip(*per_example, strict=True)]
        in_axes = (0,) + (None,) * len(rest)
        return outcome(lambda: tj.vmap(f, in_axes=in_axes)(xs, *rest)), want
    want = outcome(lambda: case.ref(*case.args))
    if x.dtype != np.float64 or not isinstance(want, Exception) and any(w.dtype != np.float64 for w in want):
        return None
    ws = [] if isinstance(want, Exception) else [random_array(rng, w.shape) for w in want]
    loss = lambda x: weighted_sum(tnp, f(x, *rest), ws) if ws else tnp.sum(f(x, *rest))
    if isinstance(want, Exception):
        return outcome(lambda: tj.grad(loss)(x)), want
    return outcome(lambda: tj.grad(loss)(x)), outcome(lambda: finite_difference_grad(case.ref, x, ws, rest))


def fuzz(seed):
    """The failure of the call drawn from seed, or None."""
    rng = random.Random(seed)
    case = rng.choice(FAMILIES)(rng)
    mode = rng.choice(case.modes)
    result = run_mode(case, mode, rng)
    if result is None:
        return None
    problem = classify(case, *result, tol=1e-5 if mode == "grad" else None)   # central differences: O(h**2)
    return None if problem is None else f"seed {seed}, {mode}: {case.what} :: {' '.join(problem.split())[:400]}"


@pytest.mark.parametrize("start", range(0, N_CALLS, CHUNK))
def test_bad_input_is_refused_clearly_or_computed_as_numpy(start):
    failures = [f for f in map(fuzz, range(start, min(start + CHUNK, N_CALLS))) if f is not None]
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures)
