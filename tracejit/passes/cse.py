"""Common subexpression elimination: an equation equal to an earlier one (same primitive, params and
inputs; inputs in any order for commutative primitives; literals equal by dtype and bits) is replaced by
the earlier one's outputs. Constants with equal contents are merged too."""
from ..core.ir import Literal
from ._sweep import Sweep, concrete, effectful, params_key


def cse(closed):
    sweep = Sweep(closed)
    sweep.constvars, sweep.consts = [], []
    seen_consts = {}
    for var, value in zip(closed.ir.constvars, closed.consts):
        array = concrete(value)
        key = ("array", array.dtype.str, array.shape, array.tobytes()) if array is not None else ("id", id(value))
        if key in seen_consts:
            sweep.replace(var, seen_consts[key])
            continue
        seen_consts[key] = var
        sweep.constvars.append(var)
        sweep.consts.append(value)

    numbering, seen = {}, {}

    def atom_key(x):
        if isinstance(x, Literal):
            dtype, bits = x._key()
            return ("literal", dtype.str, bits)
        return ("var", numbering.setdefault(x, len(numbering)))

    for eqn in closed.ir.eqns:
        eqn = sweep.renamed(eqn, cse)
        if effectful(eqn):
            sweep.eqns.append(eqn)
            continue
        inputs = [atom_key(x) for x in eqn.inputs]
        key = (eqn.prim, params_key(eqn.params), tuple(sorted(inputs) if eqn.prim.commutative else inputs))
        try:
            earlier = seen.get(key)
        except TypeError:  # a param that cannot be hashed: keep the equation as it is
            sweep.eqns.append(eqn)
            continue
        if earlier is not None:
            for var, same in zip(eqn.outvars, earlier):
                sweep.replace(var, same)
            continue
        seen[key] = eqn.outvars
        sweep.eqns.append(eqn)
    return sweep.finish()
