"""Inlining: an equation whose primitive declares `inline` (a call whose value is its `call` param, a
ClosedIR, applied to its operands, such as custom_jvp_call) is replaced by that IR's equations, renamed.
Its derivative rules are of no more use once the IR is compiled, and inlined, its body fuses with the code
around it instead of running as a call of its own."""
from ..core.ir_surgery import inline_eqns
from ._sweep import Sweep, has_sub_irs


def inline(closed):
    if not any(e.prim.inline or has_sub_irs(e) for e in closed.ir.eqns):
        return closed
    sweep = Sweep(closed)
    for eqn in closed.ir.eqns:
        eqn = sweep.renamed(eqn, inline)
        if not eqn.prim.inline:
            sweep.eqns.append(eqn)
            continue
        call = eqn.params["call"]
        env = {v: sweep.add_const(c, v.aval) for v, c in zip(call.ir.constvars, call.consts)}
        env.update(zip(call.ir.invars, eqn.inputs))
        eqns, outs = inline_eqns(call.ir, env)
        sweep.eqns.extend(eqns)
        for v, x in zip(eqn.outvars, outs):
            sweep.replace(v, x)
    return sweep.finish()
