"""Inlining: an equation whose primitive declares `inline` (a call whose value is its `call` param, a
ClosedIR, applied to its operands, such as custom_jvp_call, or the IR and operands its `called` rule names) is
replaced by that IR's equations, renamed.
Its derivative rules are of no more use once the IR is compiled, and inlined, its body fuses with the code
around it instead of running as a call of its own.

`inline` is True, or a function of the equation saying whether the passes may inline it yet: a
checkpoint's recomputation stays whole while the other passes run, since CSE would merge it with the
forward computation it repeats (JAX's prevent_cse). Lowering inlines every call (`final=True`), after
the last pass."""
import functools

from ..core.ir_surgery import inline_eqns
from ._sweep import Sweep, has_sub_irs


def inline(closed, final=False):
    if not any(e.prim.inline or has_sub_irs(e) for e in closed.ir.eqns):
        return closed
    sweep = Sweep(closed)
    sub_pass = functools.partial(inline, final=True) if final else inline
    for eqn in closed.ir.eqns:
        eqn = sweep.renamed(eqn, sub_pass)
        rule = eqn.prim.inline
        if not rule or not (final or rule is True or rule(eqn)):
            sweep.eqns.append(eqn)
            continue
        call, operands = eqn.prim.called(eqn) if eqn.prim.called else (eqn.params["call"], eqn.inputs)
        env = {v: sweep.add_const(c, v.aval) for v, c in zip(call.ir.constvars, call.consts)}
        env.update(zip(call.ir.invars, operands))
        eqns, outs = inline_eqns(call.ir, env)
        sweep.eqns.extend(eqns)
        for v, x in zip(eqn.outvars, outs):
            sweep.replace(v, x)
    return sweep.finish()
