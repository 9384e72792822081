"""Constant folding: an equation whose inputs are all known (literals, and constants holding concrete
arrays, not tracers of an enclosing trace) is evaluated with the primitive's NumPy impl, under `eager()`.

A scalar result becomes a literal; an array result becomes a new constant, but only
- when it has at most MAX_FOLD_ELEMENTS elements (100,000 over all outputs: a fold never materialises a
  huge constant; the limit is checked on the types before anything is computed), and
- when an input is an array constant: an array computed from scalars alone (a broadcast of a literal, an
  iota) is a cheaper description than its value, so such equations stay in the IR.
"""
import numpy as np

from ..core.avals import is_symbolic
from ..core.ir import Literal
from ..core.trace import bind, eager
from ._sweep import Sweep, concrete, effectful

MAX_FOLD_ELEMENTS = 100_000


def fold(closed):
    sweep = Sweep(closed)
    known = {v: a for v, a in zip(closed.ir.constvars, map(concrete, closed.consts)) if a is not None}
    for eqn in closed.ir.eqns:
        eqn = sweep.renamed(eqn, fold)
        outs = _evaluate(eqn, known)
        if outs is None:
            sweep.eqns.append(eqn)
            continue
        for var, value in zip(eqn.outvars, outs):
            folded = sweep.add_const(value, var.aval)
            if not isinstance(folded, Literal):
                known[folded] = value
            sweep.replace(var, folded)
    return sweep.finish()


def _evaluate(eqn, known):
    """The equation's output values, or None when it must stay (see the module docstring)."""
    if effectful(eqn) or any(not isinstance(x, Literal) and x not in known for x in eqn.inputs):
        return None
    if any(is_symbolic(v.aval.shape) for v in eqn.outvars) or sum(v.aval.size for v in eqn.outvars) > MAX_FOLD_ELEMENTS:
        return None
    if any(v.aval.ndim for v in eqn.outvars) and all(isinstance(x, Literal) for x in eqn.inputs):
        return None
    values = [x.value if isinstance(x, Literal) else known[x] for x in eqn.inputs]
    try:
        with eager(), np.errstate(all="ignore"):
            outs = bind(eqn.prim, *values, **eqn.params)
    except Exception:  # noqa: BLE001 - an equation that fails to evaluate is left to run (and fail) as written
        return None
    return outs if eqn.prim.multiple_results else [outs]
