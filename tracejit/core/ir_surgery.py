"""Rewiring IRs: constants into inputs (closure conversion), unused inputs added, inputs and outputs permuted,
and an IR's equations copied into another with fresh variables (inlining). Control-flow rules, the inlining
pass, custom derivatives and lax share these."""
from .ir import IR, ClosedIR, Var


def hoist_consts(closed):
    """closed with its constants turned into leading inputs: (constant-free ClosedIR, the constant values)."""
    (body,), consts = shared_consts([closed])
    return body, consts


def shared_consts(closeds):
    """The constants of all of `closeds` made leading inputs of every one of them (cond branches take the
    same operands): (constant-free ClosedIRs, all constant values)."""
    avals = [v.aval for closed in closeds for v in closed.ir.constvars]
    out, offset = [], 0
    for closed in closeds:
        ir, count = closed.ir, len(closed.ir.constvars)
        hoisted = ClosedIR(IR([], ir.constvars + ir.invars, ir.eqns, ir.outvars), [])
        out.append(widen_inputs(hoisted, avals, offset, count))
        offset += count
    return out, [c for closed in closeds for c in closed.consts]


def widen_inputs(closed, avals, offset, count):
    """Constant-free closed whose first `count` inputs become inputs offset ... offset + count - 1 of a block
    of inputs of the types `avals`: the rest of the block is fresh and unused."""
    ir = closed.ir
    lead = [Var(a) for a in avals[:offset]] + ir.invars[:count] + [Var(a) for a in avals[offset + count:]]
    return ClosedIR(IR([], lead + ir.invars[count:], ir.eqns, ir.outvars), [])


def reorder(closed, in_order=None, out_order=None):
    """closed with inputs (outputs) permuted: new position k is old position order[k]."""
    ir = closed.ir
    invars = ir.invars if in_order is None else [ir.invars[i] for i in in_order]
    outvars = ir.outvars if out_order is None else [ir.outvars[i] for i in out_order]
    return ClosedIR(IR(ir.constvars, invars, ir.eqns, outvars), closed.consts)


def inline_eqns(ir, env):
    """The equations of `ir` with fresh variables, reading env (ir's constant and input variables -> atoms of
    the enclosing IR): returns (equations, output atoms)."""
    env = dict(env)

    def read(x):
        return env.get(x, x) if isinstance(x, Var) else x

    eqns = []
    for eqn in ir.eqns:
        outvars = [Var(v.aval) for v in eqn.outvars]
        eqns.append(eqn.replace(inputs=[read(x) for x in eqn.inputs], outvars=outvars))
        env.update(zip(eqn.outvars, outvars))
    return eqns, [read(x) for x in ir.outvars]
