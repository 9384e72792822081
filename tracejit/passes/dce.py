"""Dead code elimination: drop equations none of whose outputs is used (unless effectful), and unused
constants, also inside sub-IRs. A multi-output equation stays whole when any output is live (the printer
shows the dead ones as `_`), unless its primitive's `prune` rule can compute fewer outputs (a scan's
unused ys, a cond's unused results). Inputs are never removed: they are the IR's signature."""
from ..core.ir import IR, ClosedIR, Var
from ._sweep import effectful, map_sub_irs, same_objects


def dce(closed):
    ir = closed.ir
    live = {x for x in ir.outvars if isinstance(x, Var)}
    kept = []
    for eqn in reversed(ir.eqns):
        if not effectful(eqn) and not any(v in live for v in eqn.outvars):
            continue
        if eqn.prim.prune is not None and not effectful(eqn):
            eqn = eqn.prim.prune(eqn, [v in live for v in eqn.outvars]) or eqn
        eqn = map_sub_irs(eqn, dce)
        kept.append(eqn)
        live.update(x for x in eqn.inputs if isinstance(x, Var))
    used = [i for i, v in enumerate(ir.constvars) if v in live]
    kept.reverse()
    if len(used) == len(ir.constvars) and same_objects(kept, ir.eqns):
        return closed
    return ClosedIR(IR([ir.constvars[i] for i in used], ir.invars, kept, ir.outvars),
                    [closed.consts[i] for i in used])
