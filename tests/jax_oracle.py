"""Machinery of the JAX differential suite (test_against_jax.py): the public functions of tracejit, how to
call them (inferred by probing, unless the suite's table says), and one run of every case under tracejit
(eagerly and under jit), JAX (one jitted program for many cases: XLA's compile is the cost, per program) and
NumPy, compared in value, dtype, shape, first and second derivatives.

Derivatives, with the same random tangents t and weights w: jvp (J t), grad (the gradient of <w, f>: J^T w),
jvp of jvp and grad of grad (the Hessian of <w, f> times t; JAX computes it forward over reverse)."""
# ruff: noqa: BLE001, S112 -- whatever either library raises is recorded as the outcome of its case
import dataclasses
import inspect
import types
import warnings
import zlib

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

import tracejit as tj
import tracejit.numpy as tnp

DERIVATIVES = ("jvp", "grad", "jvp2", "grad2")


@dataclasses.dataclass(frozen=True)
class Side:
    """One library's namespaces, as the cases' code sees them (`M.numpy.sum`, `M.lax.cond`, `M.api.grad`)."""
    numpy: object
    lax: object
    nn: object
    api: object
    linalg: object
    fft: object


TRACEJIT = Side(tnp, tj.lax, tj.nn, tj, tnp.linalg, tnp.fft)
JAX = Side(jnp, jax.lax, jax.nn, jax, jnp.linalg, jnp.fft)
NUMPY = Side(np, None, None, None, np.linalg, np.fft)
MODULES = {"numpy": "numpy", "lax": "lax", "nn": "nn", "tracejit": "api", "linalg": "linalg", "fft": "fft"}  # prefix: field


@dataclasses.dataclass
class Case:
    """One call. Array arguments (and lists of them) are traced under jit and, when float, differentiated;
    other arguments are static. `call(M, fn, *args, **kwargs)` replaces fn(*args, **kwargs) where the
    function needs code around it (a callable argument, a transformation)."""
    label: str
    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    call: object = None
    derivatives: bool = True
    second_order: bool = True     # False: first derivatives only (where others test the second, at less cost)
    traceable: bool = True        # False: results that jit cannot return (strings, data-dependent shapes)
    segments: list = None         # [(label, length, derivatives?)]: an elementwise case of labelled runs of points
    prefer_numpy: bool = False    # compared with NumPy (not JAX) where NumPy has the function


class Static:
    """An array argument that stays concrete (not traced, not differentiated): repeat counts, say."""

    def __init__(self, value):
        self.value = value


def _plain_call(M, fn, *args, **kwargs):
    return fn(*args, **kwargs)


def public_functions():
    """{'numpy.sin': tnp.sin, ...}: what each module exports (`__all__`, else its public names), less
    modules and classes (tracejit's own classes, custom_jvp ..., are kept: they are transformations)."""
    found = {}
    for prefix, field in MODULES.items():
        module = getattr(TRACEJIT, field)
        for name in getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]:
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType) or not callable(obj):
                continue
            if isinstance(obj, type) and (prefix != "tracejit" or issubclass(obj, BaseException)):
                continue
            found[f"{prefix}.{name}"] = obj
    return found


def resolve(side, qualname):
    """The function of that name in one library, or None."""
    prefix, name = qualname.split(".", 1)
    module = getattr(side, MODULES[prefix])
    return getattr(module, name, None) if module is not None else None


def rng_for(*keys):
    return np.random.default_rng(zlib.crc32(" ".join(map(str, keys)).encode()))


# ------------------------------------------------------------------------------------------- inference

def _required(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None, {}
    required = [p.name for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                                                                               p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        required.append("*")
    return required, {p.name: p.default for p in params}


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _is_elementwise(fn, arity):
    """Same shape out as in, and each element a function of the elements at its position alone."""
    rng = np.random.default_rng(0)
    for draw in (lambda shape: rng.uniform(0.1, 0.9, shape), lambda shape: rng.integers(1, 9, shape)):
        try:
            xs = [draw(5) for _ in range(arity)]
            whole = np.asarray(_quiet(fn, *xs))
            parts = [np.asarray(_quiet(fn, *(x[k] for x in xs))) for k in range(5)]
            grid = np.asarray(_quiet(fn, *(draw((2, 3)) for _ in range(arity))))
        except Exception:
            continue        # integer-only functions (bitwise_and ...) are probed with integers next
        return whole.shape == (5,) and grid.shape == (2, 3) and all(
            p.shape == () and np.array_equal(p, whole[k], equal_nan=True) for k, p in enumerate(parts))
    return False


UNARY_SPECIAL = [0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 2.0, -2.0, 3.0, -3.0, 6.0, 0.4, -6.0]
BINARY_SPECIAL = [0.0, 1.0, -1.0, 0.5, 2.0, -2.0]
NONFINITE = [np.inf, -np.inf, np.nan, 0.0, 1.0, -1.0]     # (no subnormals: XLA's CPU code flushes them to 0)


def points(qualname, label="points", dtype=np.float64, **segments):
    """One case of an elementwise function on the concatenated points of several labelled segments: one
    computation per library, compared segment by segment (derivatives included: elementwise, they do not mix;
    not at the non-finite points, where only values are compared)."""
    arity = len(next(iter(segments.values())))
    args = tuple(np.concatenate([np.asarray(seg[k], dtype).ravel() for seg in segments.values()])
                 for k in range(arity))
    return Case(label, args, segments=[(name, np.size(seg[0]), name != "nonfinite") for name, seg in segments.items()])


def complex_draw(rng, *shape):
    return rng.uniform(-3, 3, shape) + 1j * rng.uniform(-3, 3, shape)


COMPLEX_SPECIAL = [0.0, 1.0, -1.0, 1j, -1j, 0.5 + 0.5j, -2.0 + 1j, 2.5 - 0.5j]


def variants(*cases):
    """Value-only cases (other dtypes and shapes): compared with NumPy where it has the function."""
    for case in cases:
        case.derivatives, case.prefer_numpy = False, True
    return list(cases)


def unary_cases(qualname):
    rng = rng_for(qualname)
    x, z = rng.uniform(-3, 3, 6), complex_draw(rng, 6)
    return [points(qualname, random=(x,), special=(UNARY_SPECIAL,), nonfinite=(NONFINITE + [1e308, -1e308],)),
            points(qualname, "complex points", np.complex128, complex=(z,), complex_special=(COMPLEX_SPECIAL,)),
            *variants(Case("complex64", (z.astype(np.complex64),)), Case("scalar", (np.array(0.7),)), Case("python_scalar", (0.7,)), Case("empty", (np.zeros(0),)),
                      Case("matrix", (rng.uniform(-3, 3, (2, 3)),)), Case("float32", (x.astype(np.float32),)),
                      Case("int64", (np.arange(-3, 4),)), Case("int32", (np.arange(-3, 4, dtype=np.int32),)),
                      Case("bool", (np.array([True, False]),)), *_small_dtype_cases(x))]


def _small_dtype_cases(*xs):
    """The 16- and 8-bit dtypes: the floats at the points xs, the integers small and positive (uint8's too)."""
    ints = [np.arange(len(x)) % 7 - 3 for x in xs]
    return [Case("float16", tuple(x.astype(np.float16) for x in xs)),
            Case("bfloat16", tuple(x.astype(ml_dtypes.bfloat16) for x in xs)),
            Case("int8", tuple(i.astype(np.int8) for i in ints)),
            Case("uint8", tuple((i + 3).astype(np.uint8) for i in ints))]


def binary_cases(qualname):
    rng = rng_for(qualname)
    x, y = rng.uniform(-3, 3, 6), rng.uniform(-3, 3, 6)
    ties = np.array([-2.0, -0.5, 0.0, 0.4, 1.0, 3.0])
    grid = np.array(np.meshgrid(BINARY_SPECIAL, BINARY_SPECIAL)).reshape(2, -1)
    nonfinite = np.array(np.meshgrid(NONFINITE, NONFINITE)).reshape(2, -1)
    ints = rng.integers(-4, 5, (2, 6))
    z, w = complex_draw(rng, 6), complex_draw(rng, 6)
    complex_grid = np.array(np.meshgrid(COMPLEX_SPECIAL[::2], COMPLEX_SPECIAL[1::2])).reshape(2, -1)
    return [points(qualname, random=(x, y), ties=(ties, ties), special=tuple(grid), nonfinite=tuple(nonfinite)),
            Case("broadcast", (rng.uniform(-3, 3, (2, 3)), rng.uniform(-3, 3, 3))),
            points(qualname, "complex points", np.complex128, complex=(z, w), complex_ties=(z, z),
                   complex_special=tuple(complex_grid)),
            Case("complex_float", (z, y)),
            *variants(Case("complex64", (z.astype(np.complex64), w.astype(np.complex64))),Case("python_scalar_right", (x, 1.5)), Case("python_scalar_left", (1.5, y)),
                      Case("empty", (np.zeros(0), np.zeros(0))), Case("float32", (x.astype(np.float32), y.astype(np.float32))),
                      Case("float32_python_scalar", (x.astype(np.float32), 2.0)),
                      Case("float32_int32", (x.astype(np.float32), ints[0].astype(np.int32))),
                      Case("int64", (ints[0], ints[1])), Case("int32_int64", (ints[0].astype(np.int32), ints[1])),
                      Case("bool", (np.array([True, True, False, False]), np.array([True, False, True, False]))),
                      *_small_dtype_cases(x, y), Case("int8_uint8", (ints[0].astype(np.int8), np.abs(ints[1]).astype(np.uint8))))]


def axis_cases(qualname, defaults):
    """Reductions and other functions of one array with an axis: derivatives at ties (all axes, and the last
    one kept), a random array along axis 0, size 1 and size 0."""
    rng = rng_for(qualname)
    random, ties = rng.uniform(-3, 3, (3, 4)), np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0],
                                                          [-1.0, 0.0, 0.0, -1.0]])
    keep = {"keepdims": True} if "keepdims" in defaults else {}
    all_axes = {} if defaults.get("axis") is None else {"axis": None}
    return [Case("ties axis=None", (ties,), dict(all_axes)), Case("ties axis=-1" + " keepdims" * bool(keep), (ties,),
                                                                 {"axis": -1, **keep}),
            Case("random axis=0", (random,), {"axis": 0}), Case("one", (np.array([0.7]),), dict(all_axes)),
            Case("complex axis=0", (complex_draw(rng, 3, 4),), {"axis": 0}),
            Case("empty_rows axis=0", (np.zeros((0, 4)),), {"axis": 0}),
            *variants(Case("random axis=None", (random,), dict(all_axes)), Case("random axis=-1", (random,), {"axis": -1}),
                      Case("int64 axis=0", (rng.integers(-4, 5, (3, 4)),), {"axis": 0}),
                      Case("bool axis=None", (rng.integers(0, 2, (3, 4)).astype(bool),), dict(all_axes)),
                      Case("nan axis=-1", (np.array([[1.0, np.nan, 2.0], [0.5, 0.25, -1.0]]),), {"axis": -1}),
                      Case("empty_columns axis=-1", (np.zeros((3, 0)),), {"axis": -1}),
                      Case("complex64 axis=None", (complex_draw(rng, 3, 4).astype(np.complex64),), dict(all_axes)),
                      Case("float16 axis=0", (random.astype(np.float16),), {"axis": 0}),
                      Case("bfloat16 axis=None", (random.astype(ml_dtypes.bfloat16),), dict(all_axes)),
                      Case("uint8 axis=0", (rng.integers(0, 9, (3, 4)).astype(np.uint8),), {"axis": 0}))]


SHAPES_ONE = [(3, 4), (1, 3, 1), (0,), (), (1,), (5,), (2, 3, 4)]       # the first three with derivatives
SHAPES_TWO = [((3, 4), (4, 2)), ((3,), (3,)), ((3, 4), (4,)), ((2, 3, 4), (4, 3)), ((), (3,)), ((3, 4), (3, 4)),
              ((1, 3), (3, 1)), ((0, 3), (3,))]                        # the first two with derivatives


def shape_cases(qualname, count):
    rng = rng_for(qualname)
    combos = [(s,) for s in SHAPES_ONE] if count == 1 else SHAPES_TWO
    cases = [Case("x".join(str(s) for s in shapes), tuple(rng.uniform(-3, 3, s) for s in shapes)) for shapes in combos]
    complex_case = Case("complex " + "x".join(str(s) for s in combos[0]), tuple(complex_draw(rng, *s) for s in combos[0]))
    differentiated = 3 if count == 1 else 2
    return cases[:differentiated] + [complex_case] + variants(*cases[differentiated:])


def infer_cases(qualname, fn):
    """Cases from the signature and from probing tracejit: elementwise functions of one or two arrays,
    functions with an axis, and other functions of one or two arrays (at several shapes). None: write a spec."""
    required, defaults = _required(fn)
    if required is None:
        return None
    arity = 2 if required == ["*"] and not _is_elementwise(fn, 1) else 1 if required == ["*"] else len(required)
    if arity in (1, 2) and _is_elementwise(fn, arity):
        return unary_cases(qualname) if arity == 1 else binary_cases(qualname)
    if arity == 1 and "axis" in defaults:
        return axis_cases(qualname, defaults)
    if arity in (1, 2) and "*" not in required:
        return shape_cases(qualname, arity)
    return None


# -------------------------------------------------------------------------------------------- running

def flatten(tree):
    """Leaves of nested lists, tuples (namedtuples too) and dicts, in order (dicts by sorted key)."""
    if isinstance(tree, (list, tuple)):
        return [leaf for x in tree for leaf in flatten(x)]
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in flatten(tree[k])]
    return [tree]


def _is_inexact(x):
    """A float or complex result (one with derivatives), tracejit's, NumPy's or JAX's (traced too); False for
    what is not a number (a string, a device)."""
    if isinstance(x, str):
        return False
    try:
        return jnp.issubdtype(jnp.result_type(x), jnp.inexact)
    except TypeError:
        return False


def draw(rng, shape, dtype):
    """Standard normal values of dtype (complex ones with a random imaginary part too)."""
    x = rng.standard_normal(shape)
    return (x + 1j * rng.standard_normal(shape) if np.dtype(dtype).kind == "c" else x).astype(dtype)


class Bound:
    """A case as a function of its traced leaves (the array arguments, lists of them flattened)."""

    def __init__(self, side, qualname, case):
        self.fn = resolve(side, qualname)
        self.side, self.case = side, case
        self.leaves = [x for a in case.args for x in ([a] if isinstance(a, np.ndarray) else list(a) if
                                                       _is_traced(a) else [])]
        self.diff = [k for k, x in enumerate(self.leaves) if x.dtype.kind in "fc"] if case.derivatives else []

    def __call__(self, *leaves):
        leaves, args = list(leaves), []
        for a in self.case.args:
            if isinstance(a, np.ndarray):
                args.append(leaves.pop(0))
            elif _is_traced(a):
                args.append(type(a)(leaves.pop(0) for _ in a))
            else:
                args.append(a.value if isinstance(a, Static) else a)
        return (self.case.call or _plain_call)(self.side, self.fn, *args, **self.case.kwargs)

    def of_diff(self, leaves, outputs):
        """The output leaves at positions `outputs`, as a function of the differentiated leaves (the other
        leaves as given)."""
        def h(*d):
            full = list(leaves)
            for k, v in zip(self.diff, d):
                full[k] = v
            out = flatten(self(*full))
            return [out[k] for k in outputs]
        return h


def _is_traced(a):
    return isinstance(a, np.ndarray) or (isinstance(a, (list, tuple)) and len(a) > 0
                                         and all(isinstance(x, np.ndarray) for x in a))


@dataclasses.dataclass
class Outcome:
    """What one library gave for one case: results (leaves) and errors, by piece ('value', 'jvp', 'grad',
    'jvp2', 'grad2')."""
    errors: dict
    results: dict = dataclasses.field(default_factory=dict)


def _numpy_leaves(leaves):
    return [np.asarray(x) for x in leaves]


def _error(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]


def _projection(outputs, weights):
    """Re <outputs, weights>: a real number whose gradient is JAX's vjp of the outputs with the weights as
    cotangents (complex ones too: JAX's convention, which tracejit follows)."""
    return sum(tnp.real(tnp.sum(o * w)) for o, w in zip(outputs, weights))


def tracejit_pieces(bound, float_outputs, tangents, weights):
    """{value, jvp, grad, jvp2, grad2}: functions of the case's leaves, with tracejit's transformations; grad2
    is the gradient of Re <grad, t>, which is JAX's forward-over-reverse jvp of grad, complex inputs included."""
    def value(*leaves):
        return flatten(bound(*leaves))
    if not bound.diff or not float_outputs:
        return {"value": value}

    def on_diff(g):
        """g(h, *d) as a function of all the leaves, h the float outputs as a function of the diff leaves."""
        def piece(*leaves):
            return g(bound.of_diff(leaves, float_outputs), *[leaves[k] for k in bound.diff])
        return piece

    argnums, t = tuple(range(len(bound.diff))), tuple(tangents)

    def grad(h, *d):
        return tj.grad(lambda *e: _projection(h(*e), weights), argnums=argnums)(*d)

    pieces = {"value": value, "jvp": on_diff(lambda h, *d: tj.jvp(h, d, t)[1]), "grad": on_diff(grad)}
    if bound.case.second_order:
        pieces["jvp2"] = on_diff(lambda h, *d: tj.jvp(lambda *e: tj.jvp(h, e, t)[1], d, t)[1])
        pieces["grad2"] = on_diff(lambda h, *d: tj.grad(lambda *e: _projection(grad(h, *e), t), argnums=argnums)(*d))
    return pieces


@dataclasses.dataclass
class TracejitRun:
    """A case run eagerly by tracejit: its pieces (for the jitted run), outcome, tangents and weights."""
    bound: Bound
    pieces: dict
    eager: Outcome
    tangents: list = None
    weights: list = None


def run_tracejit_eagerly(qualname, case):
    """Each piece eagerly (tangents and weights are drawn once the output's shapes are known)."""
    bound = Bound(TRACEJIT, qualname, case)
    try:
        value = _quiet(lambda: flatten(bound(*bound.leaves)))
    except Exception as e:
        return TracejitRun(bound, {}, Outcome({"value": _error(e)}))
    float_outputs = [k for k, v in enumerate(value) if _is_inexact(v)]
    rng = rng_for(qualname, case.label)
    tangents = [draw(rng, np.shape(bound.leaves[k]), bound.leaves[k].dtype) for k in bound.diff]
    weights = [draw(rng, np.shape(value[k]), np.complex128 if np.result_type(value[k]).kind == "c" else np.float64)
               for k in float_outputs]
    pieces = tracejit_pieces(bound, float_outputs, tangents, weights)
    eager = Outcome({})
    for name, piece in pieces.items():
        try:
            eager.results[name] = _numpy_leaves(flatten(_quiet(piece, *bound.leaves)))
        except Exception as e:
            eager.errors[name] = _error(e)
    return TracejitRun(bound, pieces, eager, tangents, weights)


def in_one_program(run, items, failed):
    """run(items), one compiled program for all; where it raises, each half again, down to the item that
    does (failed(item, error) is its outcome)."""
    try:
        return run(items)
    except Exception as e:
        if len(items) == 1:
            return [failed(items[0], e)]
        half = len(items) // 2
        return in_one_program(run, items[:half], failed) + in_one_program(run, items[half:], failed)


def run_tracejit_jitted(runs):
    """The pieces that ran eagerly, all in one tj.jit (most of a compile's cost is per compile); a piece that
    raises while it is traced is recorded and left out, so that the others still share the program."""
    def run(runs):
        outcomes = [Outcome({}) for _ in runs]

        def program(all_leaves):
            outs = []
            for run, leaves, outcome in zip(runs, all_leaves, outcomes):
                outs.append({})
                for name in run.eager.results:
                    try:
                        outs[-1][name] = run.pieces[name](*leaves)
                    except Exception as e:
                        outcome.errors[name] = _error(e)
            return outs

        for outcome, out in zip(outcomes, _quiet(tj.jit(program), [run.bound.leaves for run in runs])):
            outcome.results = {n: _numpy_leaves(flatten(v)) for n, v in out.items()}
        return outcomes

    return in_one_program(run, runs, lambda run, e: Outcome({n: _error(e) for n in run.eager.results}))


def run_numpy(qualname, case):
    bound = Bound(NUMPY, qualname, case)
    if bound.fn is None:
        return None
    try:
        return Outcome({}, {"value": _numpy_leaves(flatten(_quiet(bound, *bound.leaves)))})
    except Exception as e:
        return Outcome({"value": _error(e)})


def jax_oracle(bound, tangents, weights):
    """(errors) -> (*leaves) -> {value, jvp, grad, jvp2, grad2} with JAX's transformations, the same tangents
    and weights as tracejit's; grad2 is forward over reverse (the Hessian of the projection times the
    tangents), which is what tracejit's grad of grad computes. A group of pieces that JAX refuses (reverse
    mode of while_loop, say) is left out, its error put in `errors`."""
    def oracle(errors, *leaves):
        value = flatten(bound(*leaves))
        float_outputs = [k for k, v in enumerate(value) if _is_inexact(v)]
        if not bound.diff or not tangents or not float_outputs or len(float_outputs) != len(weights):
            return {"value": value}

        h = bound.of_diff(leaves, float_outputs)

        def grad(*d):
            out, pullback = jax.vjp(h, *d)
            return pullback([jnp.asarray(w, o.dtype) for w, o in zip(weights, out)])

        d0, t = tuple(leaves[k] for k in bound.diff), tuple(tangents)
        results = {"value": value}
        if bound.case.second_order:     # each piece with its derivative in the same direction t
            groups = ((("jvp", "jvp2"), lambda: jax.jvp(lambda *d: jax.jvp(h, d, t)[1], d0, t)),
                      (("grad", "grad2"), lambda: jax.jvp(grad, d0, t)))
        else:
            groups = ((("jvp",), lambda: [jax.jvp(h, d0, t)[1]]), (("grad",), lambda: [grad(*d0)]))
        for names, pair in groups:
            try:
                results.update(zip(names, pair()))
            except Exception as e:
                errors.update(dict.fromkeys(names, _error(e)))
        return results
    return oracle


def run_jax(tasks):
    """tasks: [(qualname, case, tangents, weights, expect_error)]. One jitted JAX program computes them all (a
    case that raises while it is traced is recorded and left out); if XLA refuses the program, it is split.
    Cases that are not traceable run eagerly, and so do those where tracejit raised: JAX raises some of its
    errors only when the program is lowered (argmax of complex numbers), which would split it."""
    oracles = [(bound, jax_oracle(bound, t, w)) for q, c, t, w, _ in tasks for bound in [Bound(JAX, q, c)]]
    outcomes = [None] * len(tasks)
    traced = [i for i, (b, _) in enumerate(oracles) if b.case.traceable and not tasks[i][4]]
    for i in set(range(len(tasks))) - set(traced):
        bound, oracle = oracles[i]
        outcome = outcomes[i] = Outcome({})
        try:
            outcome.results = _numpy_results(_quiet(oracle, outcome.errors, *bound.leaves))
        except Exception as e:
            outcome.errors = {"value": _error(e)}
    for i, outcome in zip(traced, _run_jitted([oracles[i] for i in traced])):
        outcomes[i] = outcome
    return outcomes


def _numpy_results(results):
    return {k: _numpy_leaves(flatten(v)) for k, v in results.items()}


def _run_jitted(oracles):
    def run(oracles):
        outcomes = [Outcome({}) for _ in oracles]

        def program(all_leaves):
            outs = []
            for ((_, oracle), leaves, outcome) in zip(oracles, all_leaves, outcomes):
                try:
                    outs.append(oracle(outcome.errors, *leaves))
                except Exception as e:
                    outcome.errors["value"] = _error(e)
                    outs.append({})
            return outs

        for outcome, out in zip(outcomes, _quiet(jax.jit(program), [b.leaves for b, _ in oracles])):
            outcome.results = _numpy_results(out)
        return outcomes

    return in_one_program(run, oracles, lambda oracle, e: Outcome({"value": _error(e)})) if oracles else []


# ------------------------------------------------------------------------------------------ comparing

def segments(case, run, jitted, jax_out, numpy_out):
    """(label, (eager, jitted, jax, numpy)) for each labelled segment of a case (the whole case, if it has none
    or if it raised): every result leaf of a segmented case is cut into the segments' runs of points."""
    outcomes = (run.eager, jitted, jax_out, numpy_out)
    if not case.segments or "value" not in run.eager.results:
        yield case.label, outcomes
        return
    start = 0
    for label, length, derivatives in case.segments:
        part = slice(start, start + length)
        yield label, tuple(None if o is None else Outcome(o.errors, {k: [np.asarray(x)[part] for x in v]
                                                                     for k, v in o.results.items()
                                                                     if derivatives or k == "value"})
                           for o in outcomes)
        start += length



def _close(got, want, rtol):
    """None if got matches want (shape; exact for integers and bools; NaN and inf in the same places and
    finite values within rtol, relative to the larger of 1 and want's largest finite magnitude), else where
    they differ."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if "c" in (got.dtype.kind, want.dtype.kind):     # each part, with its own NaN and infinities
        why = [f"{part} part: {w}" for part in ("real", "imag") if (w := _close(getattr(got, part),
                                                                               getattr(want, part), rtol))]
        return "; ".join(why) or None
    try:
        g, w = np.broadcast_to(got.astype(np.float64), got.shape), want.astype(np.float64)
    except (TypeError, ValueError):
        return None if np.array_equal(got, want) else f"{got!r}, expected {want!r}"
    exact = not (jnp.issubdtype(got.dtype, jnp.inexact) or jnp.issubdtype(want.dtype, jnp.inexact))   # bfloat16: 'V'
    finite = np.isfinite(w)
    scale = max(1.0, float(np.max(np.abs(w[finite]), initial=0.0)))
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.where(finite, np.abs(g - w) <= rtol * scale + rtol * np.abs(w), (g == w) | np.isnan(g) & np.isnan(w))
    if exact:
        near = (got == want) | (np.isnan(g) & np.isnan(w))
    if np.all(near):
        return None
    bad = np.argwhere(~np.atleast_1d(near))[:3]
    where = ", ".join(f"[{', '.join(map(str, i))}] {np.atleast_1d(got)[tuple(i)]!r} (expected "
                      f"{np.atleast_1d(want)[tuple(i)]!r})" for i in bad)
    return f"{np.count_nonzero(~near)} of {near.size} differ, at {where}"


def compare_leaves(got, want, rtol):
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        why = _close(g, w, rtol)
        if why:
            return f"output {k}: {why}" if len(got) > 1 else why
    return None


def compare_dtypes(got, want):
    got, want = [np.asarray(x).dtype for x in got], [np.asarray(x).dtype for x in want]
    return None if got == want else f"{', '.join(map(str, got))}, expected {', '.join(map(str, want))}"


RTOL = {np.dtype(np.float32): 2e-5, np.dtype(np.complex64): 2e-5, np.dtype(np.float16): 2e-3,
        np.dtype(ml_dtypes.bfloat16): 1.6e-2}      # two units in the last place (float64: a few thousand)


def value_rtol(leaves):
    return max([RTOL.get(np.asarray(x).dtype, 1e-9) for x in leaves], default=1e-9)
