"""Automatic differentiation as IR-to-IR transformations.

Forward mode: `jvp_ir` walks an IR and calls each primitive's jvp rule; the rules are traced into a new IR
taking (primals, tangents) and returning (outputs, output tangents). Tangents that are symbolically zero
(`Zero`) cost nothing; they become arrays only at the output boundary.

Reverse mode is linearize + transpose, as in JAX: the jvp IR is split by dependence on the tangents
(partial_eval.partition) into a primal IR, which also returns the residuals, and a linear IR, which
`transpose_ir` runs backwards through each primitive's transpose rule.

The user-facing functions built on these (grad, jvp, vjp, jacfwd ...) are in tracejit/derivatives.py.
"""
from ..core.ad_util import UndefinedPrimal, Zero, add_tangents, instantiate
from ..core.ir import Literal, Var
from ..core.timing import timed
from ..core.trace import bind, source_scope, trace_flat
from .partial_eval import partition

# ------------------------------------------------------------------------------------------ forward mode


def _as_list(prim, outs):
    return list(outs) if prim.multiple_results else [outs]


def jvp_eval(closed, primals, tangents):
    """Interpret closed on (primal, tangent) pairs with the jvp rules; returns (outputs, output tangents).
    Constants and literals have Zero tangents; an equation whose tangents are all Zero is just re-bound."""
    ir = closed.ir
    env = {v: (c, Zero(v.aval)) for v, c in zip(ir.constvars, closed.consts)}
    env.update({v: (p, t) for v, p, t in zip(ir.invars, primals, tangents)})

    def read(x):
        return (x.value, Zero(x.aval)) if isinstance(x, Literal) else env[x]

    with source_scope() as at:
        for eqn in ir.eqns:
            at(eqn)
            pairs = [read(x) for x in eqn.inputs]
            ps, ts = [p for p, _ in pairs], [t for _, t in pairs]
            if all(isinstance(t, Zero) for t in ts):
                outs = _as_list(eqn.prim, bind(eqn.prim, *ps, **eqn.params))
                out_ts = [Zero(v.aval) for v in eqn.outvars]
            else:
                if eqn.prim.jvp is None:
                    raise NotImplementedError(f"differentiation rule (jvp) for '{eqn.prim.name}' is not implemented")
                outs, out_ts = eqn.prim.jvp(ps, ts, **eqn.params)
                outs, out_ts = _as_list(eqn.prim, outs), _as_list(eqn.prim, out_ts)
            env.update((v, (p, t)) for v, p, t in zip(eqn.outvars, outs, out_ts))
    results = [read(x) for x in ir.outvars]
    return [p for p, _ in results], [t for _, t in results]


def tangent_aval(aval):
    return aval.strip_weak()


def jvp_ir(closed, which):
    """The forward-mode IR of closed: (primals..., tangents of the inputs where `which`) -> (outs..., tangent
    outs...). Inputs without a tangent are held constant."""
    return jvp_ir_nonzeros(closed, which, True)[0]


@timed("transforms")
def jvp_ir_nonzeros(closed, which, keep):
    """jvp_ir returning only the output tangents that are not symbolically zero or are kept (`keep`: a bool
    or one per output); returns (IR, which output tangents it returns). Control-flow rules use it so that
    zero tangents cost nothing inside their bodies."""
    in_avals = closed.in_avals
    n = len(in_avals)
    keep = [keep] * len(closed.out_avals) if isinstance(keep, bool) else list(keep)
    out_nonzeros = []

    def fun(*args):
        given = iter(args[n:])
        tangents = [next(given) if w else Zero(a) for a, w in zip(in_avals, which)]
        outs, out_tangents = jvp_eval(closed, args[:n], tangents)
        out_nonzeros[:] = [k or not isinstance(t, Zero) for t, k in zip(out_tangents, keep)]
        return outs + [instantiate(t) for t, nz in zip(out_tangents, out_nonzeros) if nz]

    tangent_avals = [tangent_aval(a) for a, w in zip(in_avals, which) if w]
    return trace_flat(fun, in_avals + tangent_avals, fun_name="jvp"), out_nonzeros


# ------------------------------------------------------------------------------------------ reverse mode


def backward_pass(linear, residuals, cotangents):
    """Run the linear IR backwards: each equation's transpose rule turns the cotangent of its outputs into
    cotangents of its linear inputs (UndefinedPrimal); a value used twice gets the sum. Zero (or None)
    cotangents stay symbolic and skip their equations. Returns the cotangents of the linear inputs."""
    ir = linear.ir
    num_res = len(residuals)
    env = dict(zip(ir.constvars, linear.consts))
    env.update(zip(ir.invars[:num_res], residuals))
    linear_vars = set(ir.invars[num_res:])
    linear_eqns = []
    cts = {}

    def accumulate(x, ct):
        if isinstance(x, Var) and x in linear_vars and ct is not None and not isinstance(ct, Zero):
            cts[x] = add_tangents(cts[x], ct) if x in cts else ct

    with source_scope() as at:
        for eqn in ir.eqns:  # equations that do not read the linear inputs (zeros, iotas) are evaluated forward
            if any(isinstance(x, Var) and x in linear_vars for x in eqn.inputs):
                linear_eqns.append(eqn)
                linear_vars.update(eqn.outvars)
            else:
                at(eqn)
                outs = bind(eqn.prim, *[_read(env, x) for x in eqn.inputs], **eqn.params)
                env.update(zip(eqn.outvars, _as_list(eqn.prim, outs)))
        for x, ct in zip(ir.outvars, cotangents):
            accumulate(x, ct)
        for eqn in reversed(linear_eqns):
            out_cts = [cts.pop(v, None) for v in eqn.outvars]
            if all(c is None for c in out_cts):
                continue
            if eqn.prim.transpose is None:
                raise NotImplementedError(f"transpose rule for '{eqn.prim.name}' is not implemented, so it "
                                          "cannot be differentiated in reverse mode")
            at(eqn)
            args = [UndefinedPrimal(x.aval) if isinstance(x, Var) and x in linear_vars else _read(env, x)
                    for x in eqn.inputs]
            if eqn.prim.multiple_results:
                ct = [c if c is not None else Zero(v.aval) for c, v in zip(out_cts, eqn.outvars)]
            else:
                ct = out_cts[0]
            for x, c in zip(eqn.inputs, eqn.prim.transpose(ct, *args, **eqn.params)):
                accumulate(x, c)
    return [cts.get(v, Zero(v.aval)) for v in ir.invars[num_res:]]


def _read(env, x):
    return x.value if isinstance(x, Literal) else env[x]


@timed("transforms")
def transpose_ir(linear, num_res, has_cotangent=None):
    """The transpose of a linear IR (residuals..., tangents...) -> tangent outs: an IR
    (residuals..., cotangents of the outputs where has_cotangent...) -> cotangents of the tangents."""
    out_avals = [tangent_aval(a) for a in linear.out_avals]
    has_cotangent = has_cotangent or [True] * len(out_avals)

    def fun(*args):
        given = iter(args[num_res:])
        cts = [next(given) if h else Zero(a) for a, h in zip(out_avals, has_cotangent)]
        return [instantiate(c) for c in backward_pass(linear, args[:num_res], cts)]

    ct_avals = [a for a, h in zip(out_avals, has_cotangent) if h]
    return trace_flat(fun, linear.in_avals[:num_res] + ct_avals, fun_name="transpose")


@timed("transforms")
def linearize_ir(closed, which):
    """(primal IR: primals -> (outs, residuals), linear IR: (residuals, tangents) -> tangent outs, #residuals)."""
    return partition(jvp_ir(closed, which), len(closed.in_avals), len(closed.out_avals))
