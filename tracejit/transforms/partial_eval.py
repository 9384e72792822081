"""Splitting a jvp IR into the part that computes primal values and the part that is linear in the tangents.

This is what turns forward mode into reverse mode: the primal part runs first and saves the residuals (primal
values the linear part reads); the linear part is then transposed. One helper serves linearize, vjp and grad.
"""
from ..core.ir import IR, ClosedIR, Var, effectful


def live_eqns(eqns, outvars):
    """The equations that outputs depend on (effectful ones are always kept), in their original order."""
    needed = {x for x in outvars if isinstance(x, Var)}
    kept = []
    for eqn in reversed(eqns):
        if effectful(eqn) or any(v in needed for v in eqn.outvars):
            kept.append(eqn)
            needed.update(x for x in eqn.inputs if isinstance(x, Var))
    return kept[::-1]


def _uses(eqns, outvars):
    used = [x for e in eqns for x in e.inputs] + list(outvars)
    return list(dict.fromkeys(x for x in used if isinstance(x, Var)))


def partial_eval_ir(closed, unknowns, instantiate, recompute=None, stage_effects=False):
    """Split closed by which inputs are unknown (`unknowns`, one bool per input) into

        known:   ClosedIR  known inputs -> (known outs..., residuals...)
        unknown: ClosedIR  (residuals..., unknown inputs...) -> unknown outs

    and return (known, unknown, out_unknowns, number of residuals). An output is unknown when it depends on an
    unknown input or `instantiate` says so (one bool per output). An equation with unknown inputs goes to the
    unknown side whole, unless its primitive has a `partial_eval(eqn, unknowns)` rule, which returns (known
    equations, unknown equation or None): control flow splits its bodies that way. Known equations that
    the unknown side reads are recomputed there instead of saved when they have no variable inputs (zeros,
    iotas) or `recompute(eqn)` says so (a checkpoint's policy); what those read in turn is recomputed or
    saved by the same rule. Effectful equations are never recomputed; with `stage_effects` they go to the
    unknown side whole (a loop's body keeps its effects when its invariant part is hoisted)."""
    ir = closed.ir
    unknown_vars = {v for v, u in zip(ir.invars, unknowns) if u}
    known_eqns, unknown_eqns = [], []
    for eqn in live_eqns(ir.eqns, ir.outvars):
        in_unknown = [isinstance(x, Var) and x in unknown_vars for x in eqn.inputs]
        staged = stage_effects and effectful(eqn)
        if not any(in_unknown) and not staged:
            known_eqns.append(eqn)
            continue
        split = eqn.prim.partial_eval if any(in_unknown) else None
        known, unknown = split(eqn, in_unknown) if split else ([], eqn)
        for e in [*known, unknown]:        # what a rule makes of an equation comes from the same line
            if e is not None and e.source_info is None:
                e.source_info = eqn.source_info
        known_eqns.extend(known)
        if unknown is not None:
            unknown_eqns.append(unknown)
            unknown_vars.update(unknown.outvars)
    out_unknowns = [(isinstance(x, Var) and x in unknown_vars) or inst for x, inst in zip(ir.outvars, instantiate)]
    known_outs = [x for x, u in zip(ir.outvars, out_unknowns) if not u]
    unknown_outs = [x for x, u in zip(ir.outvars, out_unknowns) if u]
    read_by_unknown = set(_uses(unknown_eqns, unknown_outs))
    again = [e for e in known_eqns if not effectful(e) and (
        (recompute is not None and recompute(e)) or
        (not any(isinstance(x, Var) for x in e.inputs) and any(v in read_by_unknown for v in e.outvars)))]
    unknown_eqns = live_eqns(again + unknown_eqns, unknown_outs)
    recomputed = {v for e in unknown_eqns for v in e.outvars}
    const_values = dict(zip(ir.constvars, closed.consts))
    residuals = [x for x in _uses(unknown_eqns, unknown_outs)
                 if x not in unknown_vars and x not in recomputed and x not in const_values]
    known_eqns = live_eqns(known_eqns, known_outs + residuals)

    def closed_over(eqns, outvars, invars):
        constvars = [v for v in _uses(eqns, outvars) if v in const_values]
        return ClosedIR(IR(constvars, invars, eqns, outvars), [const_values[v] for v in constvars])

    known = closed_over(known_eqns, known_outs + residuals, [v for v, u in zip(ir.invars, unknowns) if not u])
    unknown = closed_over(unknown_eqns, unknown_outs, residuals + [v for v, u in zip(ir.invars, unknowns) if u])
    return known, unknown, out_unknowns, len(residuals)


def partition(closed, num_primals, num_outs):
    """Split closed: (primals, tangents) -> (outs, tangent outs), as jvp_ir makes it, into

        primal: ClosedIR  primals -> (outs..., residuals...)
        linear: ClosedIR  (residuals..., tangents...) -> tangent outs

    and return (primal, linear, number of residuals): partial_eval_ir with the tangents unknown."""
    num_tangents = len(closed.in_avals) - num_primals
    num_tangent_outs = len(closed.out_avals) - num_outs
    primal, linear, out_unknowns, num_res = partial_eval_ir(
        closed, [False] * num_primals + [True] * num_tangents, [False] * num_outs + [True] * num_tangent_outs)
    assert not any(out_unknowns[:num_outs]), "a primal output depends on a tangent"
    return primal, linear, num_res
