"""Algebraic simplification, driven by what each primitive declares (see tracejit.core.trace.FLAGS):

- uniform operands: an operand of an elementwise equation whose elements all hold one known scalar (a
  literal moved by `rearranges` primitives such as a broadcast, or a constant array of equal elements)
  becomes that scalar literal, when the equation's type stays the same (elementwise ops take rank-0
  operands);
- uniform results: an elementwise equation of such operands holds one value too; it becomes the
  rearrangement (e.g. the broadcast) of a literal that built one of its operands, applied to that value;
- identity elements (`identity`): x*1, 1*x, x+(-0.0), x-0, x/1, x**1, ... -> x, when x has the result's shape
  and dtype (a rank-0 x added to a shaped zero is not x). Floats match with their sign: x + 0.0 stays, since
  -0.0 + 0.0 is +0.0 (XLA drops it; NumPy, the oracle, does not). For complex x only the identities of
  linear ops (add, sub) hold: x * (1+0j) is NaN where a part of x is infinite (inf * 0 in the product).
  Absorbing elements are not used: x*0 is not 0 (NaN, inf) and x-x is not 0;
- involutions (`involution`): f(f(x)) -> x for equal params (neg, not, rev);
- idempotence (`idempotent`): f(f(x)) -> f(x) for unary f; f(x, x) -> x for binary f (max, min, and, or);
- rearrangements sink: op(R(a), R(b)) -> R(op(a, b)) for an elementwise op and a rearranging R (`_sunk`);
- the primitive's own `simplify` rule (reshape of reshape, transpose of transpose, no-op conversions...),
  which may also return a function of the operands (or of other atoms it names) that computes the result with
  other primitives (a matrix-vector dot_general as a product and a sum; a slice of a transpose as the
  transpose of a slice): its traced equations replace the equation.

Each rewrite is checked against the shape rule; a rewritten equation is simplified again (bounded).
"""
import numpy as np

from ..core.avals import ShapedArray, is_inexact, is_symbolic
from ..core.ir import Eqn, Literal, Var
from ..core.ir_surgery import inline_eqns
from ..core.trace import bind, eager, trace_flat
from ._sweep import Sweep, concrete, effectful, params_key, same_type

MAX_REWRITES_PER_EQN = 16


def simplify(closed):
    sweep = Sweep(closed)
    producers, uniform = {}, {}
    for var, value in zip(closed.ir.constvars, closed.consts):
        uniform[var] = _uniform_array(concrete(value))

    def uniform_value(x):
        return x.value if isinstance(x, Literal) else uniform.get(x)

    def add(eqn):
        eqn = sweep.renamed(eqn, simplify)
        if not eqn.prim.multiple_results and not effectful(eqn):
            result = _rewrite(eqn, producers.get, uniform_value)
            if isinstance(result, tuple):
                result = _expand(sweep, *result, producers)
            if not isinstance(result, Eqn):
                sweep.replace(eqn.outvars[0], result)
                return
            eqn = result
            sunk = _sunk(eqn, producers.get)
            if sunk is not None:
                for part in sunk:
                    add(part)
                return
        sweep.eqns.append(eqn)
        for var in eqn.outvars:
            producers[var] = eqn
        if eqn.prim.rearranges:
            uniform[eqn.outvars[0]] = uniform_value(eqn.inputs[0])

    for eqn in closed.ir.eqns:
        add(eqn)
    return sweep.finish()


def _uniform_array(array):
    """The one value all elements of a concrete array hold (bit for bit), or None."""
    if array is None or array.size == 0:
        return None
    flat = np.ascontiguousarray(array).reshape(-1)
    bits = flat.view(np.uint8).reshape(flat.size, -1)
    return flat[0] if (bits == bits[0]).all() else None


def _expand(sweep, eqn, fn, operands, producers):
    """The equations of fn(*operands) added to the sweep: returns the atom standing for eqn's output."""
    closed = trace_flat(lambda *xs: [fn(*xs)], [x.aval for x in operands], fun_name=eqn.prim.name)
    env = {v: sweep.add_const(c, v.aval) for v, c in zip(closed.ir.constvars, closed.consts)}
    env.update(zip(closed.ir.invars, operands))
    eqns, (out,) = inline_eqns(closed.ir, env)
    sweep.eqns.extend(eqns)
    producers.update((v, e) for e in eqns for v in e.outvars)
    return out


def _rewrite(eqn, producer, uniform_value):
    """The simplest form of a single-output equation: an atom that replaces its output, an equation, or
    (an equation, a function computing it, the atoms the function takes: its operands unless the rule says
    otherwise): a simplify rule's expansion of a rewritten one."""
    for _ in range(MAX_REWRITES_PER_EQN):
        result = (_scalar_operands(eqn, uniform_value) or _uniform_result(eqn, producer, uniform_value)
                  or _algebra(eqn, producer, uniform_value)
                  or (eqn.prim.simplify and eqn.prim.simplify(eqn, producer)))
        if not result:
            return eqn
        if isinstance(result, (Var, Literal)):
            return result if same_type(result, eqn.outvars[0]) else eqn
        if callable(result):
            return eqn, result, eqn.inputs
        if len(result) == 2:      # (a function, the atoms it takes)
            return eqn, *result
        prim, inputs, params = result
        rewritten = eqn.replace(prim, inputs, params)
        if not _well_typed(rewritten):
            return eqn
        eqn = rewritten
    return eqn


def _well_typed(eqn):
    try:
        avals = eqn.prim.abstract_eval(*[x.aval for x in eqn.inputs], **eqn.params)
    except (TypeError, ValueError):
        return False
    return len(avals) == len(eqn.outvars) and all(
        (a.shape, a.dtype) == (v.aval.shape, v.aval.dtype) for a, v in zip(avals, eqn.outvars))


def _scalar_operands(eqn, uniform_value):
    """Shaped operands of an elementwise equation that hold one repeated value, as scalar literals."""
    if not eqn.prim.elementwise:
        return None
    inputs = list(eqn.inputs)
    for i, x in enumerate(eqn.inputs):
        value = uniform_value(x) if isinstance(x, Var) and x.aval.ndim else None
        if value is not None:
            trial = [*inputs[:i], Literal(value, ShapedArray((), x.aval.dtype, x.aval.weak_type)), *inputs[i + 1:]]
            if _well_typed(Eqn(eqn.prim, trial, eqn.params, eqn.outvars)):
                inputs = trial
    return (eqn.prim, inputs, eqn.params) if inputs != eqn.inputs else None


def _uniform_result(eqn, producer, uniform_value):
    out = eqn.outvars[0].aval
    if not eqn.prim.elementwise or not out.ndim:
        return None
    values = [uniform_value(x) for x in eqn.inputs]
    if any(v is None for v in values):
        return None
    for x in eqn.inputs:
        source = producer(x) if isinstance(x, Var) else None
        if source and source.prim.rearranges and isinstance(source.inputs[0], Literal) and x.aval.shape == out.shape:
            with eager(), np.errstate(all="ignore"):
                value = bind(eqn.prim, *values, **eqn.params)
            literal = Literal(value, ShapedArray((), out.dtype, out.weak_type))
            return source.prim, [literal, *source.inputs[1:]], source.params
    return None


_constants = {}   # (dtype, type, repr) of an identity element -> it in that dtype (`_is` meets few, often)


def _is(value, constant):
    """value (a uniform scalar, or None) is constant; a float zero with its sign (both parts' signs, complex):
    an inexact value is the constant when their bits are (an identity element is never a NaN)."""
    if value is None:
        return False
    key = (value.dtype, type(constant), repr(constant))
    cast = _constants.get(key)
    if cast is None:
        cast = _constants[key] = np.asarray(constant).astype(value.dtype)[()]
    if not is_inexact(value.dtype):
        return bool(value == cast)
    return value.tobytes() == cast.tobytes()


def _algebra(eqn, producer, uniform_value):
    """Identity elements, involutions and idempotence, from the primitive's flags."""
    prim, inputs, out = eqn.prim, eqn.inputs, eqn.outvars[0]
    if prim.identity and len(inputs) == 2 and (out.aval.dtype.kind != "c" or prim.linear):
        for i, identity in enumerate(prim.identity):
            other = inputs[1 - i]
            if identity is not None and _is(uniform_value(inputs[i]), identity) and same_type(other, out):
                return other
    if len(inputs) == 1 and (prim.involution or prim.idempotent):
        inner = producer(inputs[0])
        if inner is not None and inner.prim is prim and params_key(inner.params) == params_key(eqn.params):
            return inner.inputs[0] if prim.involution else inputs[0]
    if len(inputs) == 2 and prim.idempotent and _same_atom(*inputs) and same_type(inputs[0], out):
        return inputs[0]
    return None


def _sunk(eqn, producer):
    """op(R(a), R(b), s) -> R(op(a, b, s)): an elementwise op whose array operands all come from one rearranging
    primitive R with the same params and operands of one shape (a transpose, a broadcast, a reshape; not a slice,
    which would move the op onto more elements) runs before the data moves: on no more elements, and R moves on
    to what absorbs it (a reduction or a product folds a transpose: tanh(x.T).sum(1) is tanh(x).sum(0)). Where R
    has an `inverse` (a transpose), broadcasts of smaller arrays may stand beside its results: they take the
    inverse, which folds into their broadcast (x.T - m[None] is (x - m[:, None]).T: a softmax over the rows of a
    Fortran-ordered input reduces its columns). Returns the equations that replace op's, R's last, or None."""
    arrays = [x for x in eqn.inputs if isinstance(x, Var) and x.aval.ndim]
    makers = [producer(x) for x in arrays]
    if not eqn.prim.elementwise or not makers or None in makers:
        return None
    r = makers[0]
    if not all(_alike(m, r) for m in makers):
        r = next((m for m in makers if m.prim.inverse), None)
        if r is None or not all(_alike(m, r) or _widens(m) for m in makers):
            return None
    source = r.inputs[0] if len(r.inputs) == 1 else None
    if not r.prim.rearranges or source is None or is_symbolic(source.aval.shape) or \
            is_symbolic(r.outvars[0].aval.shape) or source.aval.size > r.outvars[0].aval.size:
        return None
    undone = [Eqn(r.prim, [x], r.prim.inverse(**r.params), [Var(source.aval.update(dtype=x.aval.dtype,
                                                                                 weak_type=x.aval.weak_type))])
              for x, m in zip(arrays, makers) if not _alike(m, r)]
    moved = {id(x): m.inputs[0] for x, m in zip(arrays, makers) if _alike(m, r)}
    moved.update((id(u.inputs[0]), u.outvars[0]) for u in undone)
    out = eqn.outvars[0]
    middle = Var(ShapedArray(source.aval.shape, out.aval.dtype, out.aval.weak_type))
    op = eqn.replace(inputs=[moved.get(id(x), x) for x in eqn.inputs], outvars=[middle])
    rearranged = r.replace(inputs=[middle], outvars=[out])
    parts = (*undone, op, rearranged)
    return parts if all(_well_typed(e) for e in parts) else None


def _alike(m, r):
    """m rearranges as r does, from an operand of the same shape."""
    return m.prim is r.prim and params_key(m.params) == params_key(r.params) and \
        [x.aval.shape for x in m.inputs] == [x.aval.shape for x in r.inputs]


def _widens(m):
    """m rearranges a smaller array into more elements (a broadcast)."""
    if not m.prim.rearranges or len(m.inputs) != 1:
        return False
    small, out = m.inputs[0].aval, m.outvars[0].aval
    return not is_symbolic(small.shape) and not is_symbolic(out.shape) and small.size < out.size


def _same_atom(x, y):
    if isinstance(x, Literal) and isinstance(y, Literal):
        return x._key() == y._key()
    return x is y
