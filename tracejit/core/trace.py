"""Primitives, tracers and the one door through which every operation goes: `bind`.

Outside a trace `bind` runs the primitive's NumPy impl. Inside one it checks types with the shape rule and
appends an equation to the innermost builder among its arguments. Tracers of an enclosing (outer) trace that
meet an inner trace become constants of the inner IR, so nested traces never confuse their values.
"""
import contextlib
import operator
import sys
import threading

import numpy as np

from .avals import (
    PYTHON_SCALARS,
    Dim,
    SymbolicDimError,
    aval_of,
    is_python_scalar,
    substitute_dims,
)
from .errors import ConcretizationError, EscapedTracerError, ShapeError, internal_file
from .ir import IR, ClosedIR, Eqn, Literal, Var

# simplify(eqn, producer) -> None | atom | (prim, inputs, params): a rewrite of one equation (tracejit.passes).
# Flags read by the passes: involution f(f(x)) = x; identity = (left, right) identity elements of a binary op,
# None where there is none; rearranges: every output element is a copy of an element of the first operand;
# inline: a call the passes replace by its `call` IR (True, or a function of the equation saying whether they may
# yet: lowering inlines every call, tracejit.passes.inline), or by called(eqn) -> (ClosedIR, operands) (a solve).
# inverse(params) -> params of the same primitive that undo it (a transpose's inverse permutation): simplify moves
# such a rearrangement past an elementwise op whose other operands are broadcasts (tracejit.passes.simplify).
# partial_eval(eqn, unknowns) -> (list of known eqns, unknown eqn | None): how reverse mode splits an equation
# whose inputs are partly tangents (tracejit.transforms.partial_eval).
RULES = ("jvp", "transpose", "batch", "lower", "simplify", "inverse", "partial_eval", "prune", "into", "named_batch",
         "called")
FLAGS = ("elementwise", "commutative", "idempotent", "effectful", "linear", "involution", "identity",
         "rearranges", "inline", "costly")


class Primitive:
    """One primitive, one record: name, shape rule, NumPy impl, and the transformation rules and flags.

    shape_rule(*avals, **params) -> ShapedArray (or a list when multiple_results)
    impl(*arrays, **params) -> ndarray (or a list)
    Rules (jvp, transpose, batch, lower) are filled in next to the primitive's definition; `into(parallel_for, out,
    *arrays, **params)`, where given, writes the impl's result into out for the compiled code's Python driver,
    which passes its thread pool's parallel_for(fn, n_chunks).
    Flags tell passes what they may do without naming the primitive.
    """

    def __init__(self, name, shape_rule, impl, multiple_results=False, **rules_and_flags):
        self.name, self.shape_rule, self.impl = name, shape_rule, impl
        self.multiple_results = multiple_results
        for key in RULES:
            setattr(self, key, None)
        for key in FLAGS:
            setattr(self, key, False)
        self.set(**rules_and_flags)

    def set(self, **rules_and_flags):
        for key, value in rules_and_flags.items():
            if key not in RULES + FLAGS:
                raise TypeError(f"{self.name}: unknown rule or flag {key!r}")
            setattr(self, key, value)
        return self

    def abstract_eval(self, *avals, **params):
        out = self.shape_rule(*avals, **params)
        return list(out) if self.multiple_results else [out]

    def bind(self, *args, **params):
        return bind(self, *args, **params)

    def __repr__(self):
        return self.name


# ------------------------------------------------------------------------------------------- tracing

class _TraceStack(threading.local):
    def __init__(self):
        self.builders = []
        self.stand_ins = {}   # id(tracer of an ended trace) -> its value in the current one (`standing_in`)
        self.source_info = None   # the source of the equation being interpreted, which those it emits inherit
        self.eqn_hook = None      # hook(eqn, outputs) after eval_ir computes each equation (debug_nans)
        self.axis_sizes = {}      # name -> size of each axis a vmap(axis_name=...) is tracing its function over
        self.batch_axis_name = None   # the axis name of the vmap_ir walking its equations (its rules' vmaps too)
        self.interpreting = False  # inside eval_ir, the reference: binds run the impls


COSTLY_SIZE = 4096      # elements from which an eager bind of a costly primitive runs compiled code
_costly_compiler = []   # at most one: (prim, arrays, params) -> outputs, given by compile_costly_binds


def compile_costly_binds(compiler):
    """Let eager binds of primitives flagged `costly` (NumPy impls far slower than their compiled code: the
    special functions, threefry) on COSTLY_SIZE elements or more run compiler(prim, arrays, params) instead of
    the impl; tracejit.eager gives it, from the layer that compiles. eval_ir, the reference, and binds in an
    `eager()` block (constant folding during a compile) keep the impls."""
    _costly_compiler[:] = [compiler]


_stack = _TraceStack()


class Tracer:
    """A value during tracing: a variable of one builder. Operators are attached by tracejit.numpy."""

    __slots__ = ("builder", "irvar", "sources")
    __array_priority__ = 1000
    __array_ufunc__ = None  # numpy defers `ndarray + tracer` to Tracer.__radd__

    def __init__(self, builder, var, sources):
        self.builder, self.irvar, self.sources = builder, var, sources

    aval = property(lambda self: self.irvar.aval)
    shape = property(lambda self: self.irvar.aval.shape)
    dtype = property(lambda self: self.irvar.aval.dtype)
    ndim = property(lambda self: self.irvar.aval.ndim)
    size = property(lambda self: self.irvar.aval.size)
    weak_type = property(lambda self: self.irvar.aval.weak_type)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def _concretize(self, what, hint=""):
        raise ConcretizationError(
            f"{what} needs a concrete value, but this is a traced {self.aval.str_short()} "
            f"{_describe_sources(self.sources)}. Its value is not known while "
            f"`{self.builder.name}` is traced. Use tj.lax.cond / tj.lax.select / tnp.where for "
            f"data-dependent choices, or mark the argument static (static_argnums / static_argnames).{hint}")

    def _known(self, what):
        """The value where the trace knows it (see Builder.value_of), else a ConcretizationError."""
        value = self.builder.value_of(self.irvar)
        if value is None:
            self._concretize(what)
        return value

    def __bool__(self):
        return bool(self._known("Python control flow (if/while/and/or/bool())"))

    def __float__(self):
        self._refuse_number("float()")

    def _refuse_number(self, what):
        """float() and complex() are refused even where the value is known, as in JAX: the number would carry
        no derivative, so a gradient through it would silently be wrong."""
        if self.builder.value_of(self.irvar) is None:
            self._concretize(what)
        raise ConcretizationError(f"{what} of a traced {self.aval.str_short()} {_describe_sources(self.sources)}: "
                                  "its derivative would be lost. Keep it an array in the computation (JAX "
                                  "refuses it too).")

    def __int__(self):
        return int(self._known("int()"))

    def __index__(self):
        return operator.index(self._known("Using an array as a Python index (__index__)"))

    def __complex__(self):
        self._refuse_number("complex()")

    def __array__(self, dtype=None, copy=None):
        self._concretize("Converting to a NumPy array (np.asarray / np.array)",
                         " NumPy does this too when a NumPy array is indexed with a traced index (tracejit.numpy's "
                         "functions return NumPy arrays outside a trace, where JAX's return its arrays): index a "
                         "traced value instead, or use tnp.take / tnp.take_along_axis / tj.lax.dynamic_slice on "
                         "the array.")

    def tolist(self):
        return np.asarray(self._known("tolist()")).tolist()

    def item(self, *args):
        return np.asarray(self._known("item()")).item(*args)

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>"

    __hash__ = None


def _describe_sources(sources):
    if not sources:
        return "that does not depend on any argument"
    names = ", ".join(f"'{s}'" for s in sorted(sources))
    return f"derived from argument{'s' if len(sources) > 1 else ''} {names}"


_NO_SOURCES = frozenset()


class Builder:
    """Collects the equations of one trace. Its tracers are only valid while it is alive."""

    def __init__(self, name, known=False):
        self.name, self.level = name, len(_stack.builders)
        self.invars, self.eqns, self.alive = [], [], True
        self.consts = {}  # id(value) -> (Var, value): arrays and captured outer tracers
        self.input_index = {}   # id(Var) of an input -> its position
        self.fits = {}          # input position -> dtypes its value must fit (require_fit)
        self.known = {} if known else None   # Var -> its value (or the outer tracer that has it): see value_of
        self._producers, self._indexed = {}, 0   # Var -> the equation that made it, for eqns[:_indexed]

    def new_input(self, aval, source, value=None):
        var = Var(aval)
        self.input_index[id(var)] = len(self.input_index)
        if self.known is not None:
            self.known[var] = value
        return Tracer(self, var, frozenset([source]) if source is not None else frozenset())

    def value_of(self, var):
        """var's value, or None where it is not known. A trace of known inputs (grad, jvp, vjp called on
        concrete arguments, whose tracers carry values in JAX) computes the equations var depends on with
        NumPy, once each, so that Python control flow on them works outside jit, as in JAX."""
        known = self.known
        if known is None:
            return None
        for eqn in self.eqns[self._indexed:]:
            self._producers.update(dict.fromkeys(eqn.outvars, eqn))
        self._indexed = len(self.eqns)
        pending = [var]
        while pending:
            v = pending[-1]
            if v in known:
                value = known[v]
                if isinstance(value, Tracer):   # an input or constant from an enclosing trace
                    known[v] = value.builder.value_of(value.irvar)
                pending.pop()
                continue
            eqn = self._producers[v]
            missing = [x for x in eqn.inputs if isinstance(x, Var) and x not in known]
            if missing:
                pending.extend(missing)
                continue
            args = [x.value if isinstance(x, Literal) else known[x] for x in eqn.inputs]
            if any(a is None for a in args):
                outs = [None] * len(eqn.outvars)
            else:
                with eager():
                    outs = bind(eqn.prim, *args, **eqn.params)
                outs = outs if eqn.prim.multiple_results else [outs]
            known.update(zip(eqn.outvars, outs))
            pending.pop()
        return known[var]

    def atom(self, x):
        """The IR operand for x: our tracer's var, an inline literal, or a constant binder."""
        if isinstance(x, Tracer):
            if x.builder is self:
                return x.irvar
            _check_alive(x)
        elif isinstance(x, Literal):
            return x
        else:
            aval = _scalar_aval(x)
            if aval is not None:
                return Literal(x, aval)
        key = id(x)
        if key not in self.consts:
            aval = x.aval if isinstance(x, Tracer) else aval_of(x)
            self.consts[key] = (Var(aval), x)
            if self.known is not None:
                self.known[self.consts[key][0]] = x
        return self.consts[key][0]

    def emit(self, prim, args, params):
        atoms = [self.atom(x) for x in args]
        try:
            out = prim.shape_rule(*[a.aval for a in atoms], **params)    # (Primitive.abstract_eval, inlined)
        except SymbolicDimError as e:
            if e.why != "this operation":
                raise
            e.dim.need(prim.name)
        outvars = [Var(a) for a in out] if prim.multiple_results else [Var(out)]
        self.eqns.append(Eqn(prim, atoms, params, outvars, _stack.source_info or user_source()))
        sources = None          # the arguments whose values the outputs derive from: the union of the tracers'
        for x in args:
            if isinstance(x, Tracer) and x.sources is not sources:
                sources = x.sources if sources is None else sources | x.sources
        sources = _NO_SOURCES if sources is None else sources
        if prim.multiple_results:
            return [Tracer(self, v, sources) for v in outvars]
        return Tracer(self, outvars[0], sources)

    def build(self, outputs, inputs):
        outvars = [self.atom(x) for x in outputs]
        constvars = [v for v, _ in self.consts.values()]
        ir = IR(constvars, [t.irvar for t in inputs], self.eqns, outvars)
        return ClosedIR(ir, [value for _, value in self.consts.values()])


_scalar_avals = {}  # (type, dtype) -> the aval of a rank-0 constant of that kind


def _scalar_aval(x):
    """x's aval when it is a rank-0 constant (an IR literal), else None; memoised, since tracing meets
    a literal in most operations and building an aval costs more than the rest of `atom`."""
    if isinstance(x, np.ndarray):
        if x.ndim:
            return None
        key = (np.ndarray, x.dtype)
    elif isinstance(x, (np.generic, *PYTHON_SCALARS)):
        key = (type(x), getattr(x, "dtype", None))
    else:
        aval = aval_of(x)
        return aval if aval.ndim == 0 else None
    aval = _scalar_avals.get(key)
    if aval is None:
        aval = aval_of(x)
        if aval.ndim:
            return None
        _scalar_avals[key] = aval
    return aval


_internal_files = {}   # filename -> whether it is tracejit's own (a cache: the check costs a path normalisation)


def user_source():
    """(filename, line, function) of the innermost frame outside tracejit: an equation's source_info."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        internal = _internal_files.get(code.co_filename)
        if internal is None:
            internal = _internal_files[code.co_filename] = internal_file(code.co_filename)
        if not internal:
            return code.co_filename, frame.f_lineno, getattr(code, "co_qualname", code.co_name)
        frame = frame.f_back
    return None


@contextlib.contextmanager
def source_scope():
    """For interpreters of IRs (eval_ir, the transforms): yields `at(eqn)`, which makes the equations
    emitted next inherit eqn's source_info (as JAX keeps source lines through transformations)."""
    saved = _stack.source_info

    def at(eqn):
        _stack.source_info = eqn.source_info or saved

    try:
        yield at
    finally:
        _stack.source_info = saved


@contextlib.contextmanager
def watching(hook):
    """While the block runs, eval_ir calls hook(eqn, outputs) after each equation it computes."""
    saved, _stack.eqn_hook = _stack.eqn_hook, hook
    try:
        yield
    finally:
        _stack.eqn_hook = saved


def _check_alive(tracer):
    if not tracer.builder.alive:
        raise EscapedTracerError(
            f"A traced {tracer.aval.str_short()} {_describe_sources(tracer.sources)} escaped the trace of "
            f"`{tracer.builder.name}` that made it (kept in a global, an attribute or a closure) and was "
            f"used after that trace ended. Return the value from the function instead.")


def innermost_builder(args):
    builder = None
    for x in args:
        if isinstance(x, Tracer):
            _check_alive(x)
            if builder is None or x.builder.level > builder.level:
                builder = x.builder
    return builder


def current_builder(args):
    """The builder an operation goes to: the innermost of its tracers' traces and the active trace.
    Staging everything inside a trace (even ops on constants) keeps zeros and iotas in the IR."""
    builder = innermost_builder(args)
    top = _stack.builders[-1] if _stack.builders else None
    if top is not None and (builder is None or top.level > builder.level):
        return top
    return builder


@contextlib.contextmanager
def eager():
    """Compute with NumPy inside this block even while a trace is active (constant folding)."""
    _stack.builders.append(None)
    try:
        yield
    finally:
        _stack.builders.pop()


@contextlib.contextmanager
def standing_in(tracers, values):
    """While a custom rule re-runs user code that closed over tracers of a trace that has ended, their
    values in the current trace stand in for them (JAX's custom_jvp allows such closures)."""
    saved = _stack.stand_ins
    _stack.stand_ins = {**saved, **{id(t): v for t, v in zip(tracers, values) if isinstance(t, Tracer)}}
    try:
        yield
    finally:
        _stack.stand_ins = saved


def bind(prim, *args, **params):
    """Apply a primitive: compute with NumPy, or record an equation in the current trace."""
    if _stack.stand_ins:
        args = [_stack.stand_ins.get(id(x), x) for x in args]
    builder = current_builder(args)
    if builder is not None:
        return builder.emit(prim, args, params)
    arrays = [x.value if isinstance(x, Literal) else x for x in args]
    in_avals = [aval_of(x) for x in arrays]
    out_avals = prim.abstract_eval(*in_avals, **params)
    arrays = [np.asarray(x, a.dtype) if is_python_scalar(x) else x for x, a in zip(arrays, in_avals)]
    if (prim.costly and _costly_compiler and not _stack.interpreting and not _stack.builders      # (eager() folds)
            and max(map(np.size, arrays)) >= COSTLY_SIZE):
        outs = _costly_compiler[0](prim, arrays, params)
    else:
        outs = prim.impl(*arrays, **params)
    outs = [np.asarray(o, dtype=a.dtype) for o, a in zip(outs if prim.multiple_results else [outs], out_avals)]
    return outs if prim.multiple_results else outs[0]


def require_fit(tracer, dtype):
    """A weakly typed int is converted to dtype where NumPy 2 raises OverflowError for a Python int that
    does not fit it. The value of an input of the trace (a Python int argument of a jitted function) is
    known only when it is called: trace_flat hands the requirement to the caller, who checks it."""
    index = tracer.builder.input_index.get(id(tracer.irvar))
    if index is not None:
        tracer.builder.fits.setdefault(index, set()).add(dtype)


def trace_flat(fun, in_avals, names=None, fun_name=None, fits=None, known=None):
    """Trace fun(*flat_args) -> list of flat outputs into a ClosedIR. fits (a dict), when given, receives
    {input position: dtypes its value must fit} (require_fit). known: the inputs' values (arrays, or tracers
    of enclosing traces), for a trace whose Python control flow may read them (Builder.value_of)."""
    names = names or [None] * len(in_avals)
    builder = Builder(fun_name or getattr(fun, "__name__", "function"), known is not None)
    _stack.builders.append(builder)
    try:
        inputs = [builder.new_input(a, n, v) for a, n, v in zip(in_avals, names, known or [None] * len(in_avals))]
        outputs = fun(*inputs)
        if fits is not None:
            fits.update(builder.fits)
        return builder.build(outputs, inputs)
    finally:
        builder.alive = False
        _stack.builders.pop()


def eval_ir(closed, *args):
    """The reference interpreter: bind each equation. With arrays it computes (NumPy); with tracers of an
    enclosing trace it re-emits the IR there (inlining)."""
    ir = closed.ir
    env = dict(zip(ir.constvars, closed.consts))
    if len(args) != len(ir.invars):
        raise TypeError(f"eval_ir: the IR takes {len(ir.invars)} inputs, got {len(args)}")
    env.update(zip(ir.invars, args))

    def read(x):
        return x if isinstance(x, Literal) else env[x]

    sizes, hook = _dim_sizes(ir.invars, args), _stack.eqn_hook
    interpreting, _stack.interpreting = _stack.interpreting, True
    try:
        with source_scope() as at:
            for eqn in ir.eqns:
                at(eqn)
                params = substitute_dims(eqn.params, sizes) if sizes else eqn.params
                outs = bind(eqn.prim, *[read(x) for x in eqn.inputs], **params)
                outs = outs if eqn.prim.multiple_results else [outs]
                if hook is not None:
                    hook(eqn, outs)
                env.update(zip(eqn.outvars, outs))
    finally:
        _stack.interpreting = interpreting
    return [np.asarray(x.value) if isinstance(x, Literal) else env[x] for x in ir.outvars]


def _dim_sizes(invars, args):
    """The size of each symbolic dimension of the inputs, taken from concrete arguments (none while
    tracing: the enclosing trace keeps the symbols)."""
    sizes = {}
    for v, x in zip(invars, args):
        for d, n in zip(v.aval.shape, np.shape(x) if not isinstance(x, Tracer) else ()):
            if isinstance(d, Dim) and sizes.setdefault(d, n) != n:
                raise ShapeError(f"dimension {d} is {sizes[d]} in one argument and {n} in another")
    return sizes
