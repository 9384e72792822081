"""What the passes share: a forward sweep that renames variables and rebuilds the IR, recursion into the
sub-IRs that control-flow equations carry, and hashable keys for params.

A pass returns the very ClosedIR it was given when it changes nothing (and keeps every equation object
it does not change), so that `optimize` sees a fixed point by identity, without comparing IRs."""
import operator

import numpy as np

from ..core.ir import IR, ClosedIR, Literal, Var, effectful  # noqa: F401 - effectful: for the passes


def same_type(x, y):
    """Whether atom x may stand for variable y: same shape and dtype (weak types do not change values)."""
    return x.aval.shape == y.aval.shape and x.aval.dtype == y.aval.dtype


def _is_ir(value):
    return isinstance(value, (IR, ClosedIR))


def _holds_ir(value):
    return _is_ir(value) or (type(value) is tuple and any(map(_is_ir, value)))


def has_sub_irs(eqn):
    """Whether the equation carries IRs in its params (where core.ir.sub_irs finds them), cheaply."""
    return bool(eqn.params) and any(map(_holds_ir, eqn.params.values()))


def map_sub_irs(eqn, fn):
    """The equation with each ClosedIR in its params replaced by fn(closed_ir); eqn itself when fn
    returns every ClosedIR unchanged."""
    if not has_sub_irs(eqn):     # first: `visit` refers to itself, a cycle only the garbage collector frees
        return eqn

    def visit(value):
        if isinstance(value, ClosedIR):
            return fn(value)
        if type(value) is tuple:
            new = tuple(visit(v) for v in value)
            return value if all(map(operator.is_, new, value)) else new
        return value

    params = {k: visit(v) for k, v in eqn.params.items()}
    if all(params[k] is v for k, v in eqn.params.items()):
        return eqn
    return eqn.replace(params=params)


def freeze(value):
    """A hashable key for a param value; typed, so that 1, 1.0, True, 0.0 and -0.0 stay distinct.
    IRs in params compare by identity."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(freeze(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, freeze(v)) for k, v in value.items())))
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        return (type(value).__name__, repr(value))
    return value


_NO_PARAMS = freeze({})


def params_key(params):
    return freeze(dict(params)) if params else _NO_PARAMS


def concrete(value):
    """The value of a constant when it is a concrete array (not a tracer of an enclosing trace), else None."""
    return np.asarray(value) if isinstance(value, (np.ndarray, np.generic)) else None


class Sweep:
    """A forward walk over a ClosedIR: renames variables (var -> atom), collects the equations to keep, and
    adds constants; `finish` builds the new ClosedIR. Invars are never changed."""

    def __init__(self, closed):
        self.closed = closed
        self.constvars, self.consts = list(closed.ir.constvars), list(closed.consts)
        self.env, self.eqns = {}, []

    def read(self, x):
        return self.env.get(x, x) if isinstance(x, Var) else x

    def replace(self, var, atom):
        assert same_type(atom, var), (atom, var)
        self.env[var] = self.read(atom)

    def renamed(self, eqn, sub_pass):
        """eqn with its inputs renamed and its sub-IRs transformed by sub_pass (eqn itself if neither
        changes it)."""
        if self.env:
            inputs = [self.read(x) for x in eqn.inputs]
            if not all(map(operator.is_, inputs, eqn.inputs)):
                eqn = eqn.replace(inputs=inputs)
        return map_sub_irs(eqn, sub_pass)

    def add_const(self, value, aval):
        """A folded value: a literal when it is a scalar, else a new constant."""
        if aval.ndim == 0:
            return Literal(value, aval)
        var = Var(aval)
        self.constvars.append(var)
        self.consts.append(value)
        return var

    def finish(self):
        """The new ClosedIR, or the old one when the sweep kept everything as it was."""
        ir = self.closed.ir
        outvars = [self.read(x) for x in ir.outvars]
        if (same_objects(self.eqns, ir.eqns) and same_objects(self.constvars, ir.constvars)
                and same_objects(outvars, ir.outvars)):
            return self.closed
        return ClosedIR(IR(self.constvars, ir.invars, self.eqns, outvars), self.consts)


def same_objects(xs, ys):
    return len(xs) == len(ys) and all(map(operator.is_, xs, ys))
