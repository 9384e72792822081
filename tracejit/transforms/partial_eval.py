"""Splitting a jvp IR into the part that computes primal values and the part that is linear in the tangents.

This is what turns forward mode into reverse mode: the primal part runs first and saves the residuals (primal
values the linear part reads); the linear part is then transposed. One helper serves linearize, vjp and grad.
"""
from ..core.ir import IR, ClosedIR, Var


def live_eqns(eqns, outvars):
    """The equations that outputs depend on (effectful ones are always kept), in their original order."""
    needed = {x for x in outvars if isinstance(x, Var)}
    kept = []
    for eqn in reversed(eqns):
        if eqn.prim.effectful or any(v in needed for v in eqn.outvars):
            kept.append(eqn)
            needed.update(x for x in eqn.inputs if isinstance(x, Var))
    return kept[::-1]


def _uses(eqns, outvars):
    used = [x for e in eqns for x in e.inputs] + list(outvars)
    return list(dict.fromkeys(x for x in used if isinstance(x, Var)))


def partition(closed, num_primals, num_outs):
    """Split closed: (primals, tangents) -> (outs, tangent outs), as jvp_ir makes it, into

        primal: ClosedIR  primals -> (outs..., residuals...)
        linear: ClosedIR  (residuals..., tangents...) -> tangent outs

    and return (primal, linear, number of residuals). An equation is linear when an input depends on a
    tangent. Equations without variable inputs (zeros, iotas) that the linear part reads are recomputed
    there instead of being saved as residuals."""
    ir = closed.ir
    linear_vars = set(ir.invars[num_primals:])
    primal_eqns, linear_eqns = [], []
    for eqn in live_eqns(ir.eqns, ir.outvars):
        if any(isinstance(x, Var) and x in linear_vars for x in eqn.inputs):
            linear_eqns.append(eqn)
            linear_vars.update(eqn.outvars)
        else:
            primal_eqns.append(eqn)
    outs, tangent_outs = ir.outvars[:num_outs], ir.outvars[num_outs:]
    read_by_linear = set(_uses(linear_eqns, tangent_outs))
    constant = [e for e in primal_eqns
                if not any(isinstance(x, Var) for x in e.inputs) and not e.prim.effectful
                and any(v in read_by_linear for v in e.outvars)]
    linear_eqns = live_eqns(constant + linear_eqns, tangent_outs)
    recomputed = {v for e in linear_eqns for v in e.outvars}
    const_values = dict(zip(ir.constvars, closed.consts))
    residuals = [x for x in _uses(linear_eqns, tangent_outs)
                 if x not in linear_vars and x not in recomputed and x not in const_values]
    primal_eqns = live_eqns(primal_eqns, outs + residuals)

    def closed_over(eqns, outvars, invars):
        constvars = [v for v in _uses(eqns, outvars) if v in const_values]
        return ClosedIR(IR(constvars, invars, eqns, outvars), [const_values[v] for v in constvars])

    primal = closed_over(primal_eqns, outs + residuals, ir.invars[:num_primals])
    linear = closed_over(linear_eqns, tangent_outs, residuals + ir.invars[num_primals:])
    return primal, linear, len(residuals)
