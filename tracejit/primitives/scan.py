"""scan: a loop of static length over the leading axis of its xs, threading a carry and stacking its ys."""
import numpy as np

from ..backend.rules import Control
from ..core.ad_util import UndefinedPrimal, Zero, add_tangents, aval, instantiate, zeros
from ..core.batching import move_batch_axis
from ..core.errors import ShapeError
from ..core.ir import IR, ClosedIR, Var
from ..core.ir_surgery import hoist_consts, inline_eqns, reorder
from ..core.trace import Primitive, bind, eval_ir, trace_flat
from ..transforms.ad import jvp_ir_nonzeros
from ..transforms.partial_eval import partial_eval_ir
from ..transforms.vmap import vmap_ir
from . import control_flow as cf


def _scan_shape(*args, body, length, reverse, num_consts, num_carry):
    consts, carry, xs = args[:num_consts], args[num_consts:num_consts + num_carry], args[num_consts + num_carry:]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise ShapeError(f"scan: every xs leaf needs a leading axis of length {length}, got {x.str_short()}")
    x_slices = [x.update(shape=x.shape[1:]) for x in xs]
    if not cf.same_types(body.in_avals, list(consts) + list(carry) + x_slices):
        raise TypeError(f"scan: the body takes ({cf.types_text(body.in_avals)}), expected "
                        f"({cf.types_text(list(consts) + list(carry) + x_slices)})")
    outs = body.out_avals
    if not cf.same_types(outs[:num_carry], carry):
        raise TypeError(f"scan: the body returns carry ({cf.types_text(outs[:num_carry])}), expected "
                        f"({cf.types_text(carry)})")
    return [a.strip_weak() for a in carry] + [y.update(shape=(length,) + y.shape, weak_type=False)
                                              for y in outs[num_carry:]]


def _scan_impl(*args, body, length, reverse, num_consts, num_carry):
    consts, carry, xs = args[:num_consts], list(args[num_consts:num_consts + num_carry]), args[num_consts + num_carry:]
    ys = [np.empty((length,) + a.shape, a.dtype) for a in body.out_avals[num_carry:]]
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = eval_ir(body, *consts, *carry, *[x[i] for x in xs])
        carry = outs[:num_carry]
        for y, out in zip(ys, outs[num_carry:]):
            y[i] = out
    return carry + ys


def _scan_lower(c, outs, ins, body, length, reverse, num_consts, num_carry):
    """A loop of `length` body calls; iteration i reads row i of each xs and writes row i of each ys
    (i counts down when reverse). Without carries the iterations may run over the threads."""
    consts, init, xs = cf.split(ins, [num_consts, num_carry])
    if not num_carry and c.rows_in_parallel(body, consts, xs, outs, length, reverse):
        return
    with c.carry_loop(init, outs[:num_carry], length, body, num_consts) as (i, carry, new):
        row = c.b.iop("sub", length - 1, i) if reverse else i
        c.call(body, consts + carry + [c.row(x, row) for x in xs], new + [c.row(y, row) for y in outs[num_carry:]])


def _scan_batch(args, dims, body, length, reverse, num_consts, num_carry):
    """Batched xs carry their batch axis at 1 (axis 0 is scanned), so the body sees it at 0; batched ys come
    out with it at 1. Carries are batched (at 0) where the fixed point says so."""
    size = cf.batch_size(args, dims)
    n_in = num_consts + num_carry
    const_dims, x_dims = dims[:num_consts], [None if d is None else 0 for d in dims[n_in:]]
    carry_dims = cf.batched_carries(body, const_dims, dims[num_consts:n_in], x_dims, size)
    in_dims = list(const_dims) + carry_dims + x_dims
    y_dims = [None if d is None else 0 for d in vmap_ir(body, in_dims, size)[1][num_carry:]]
    body_b, _ = vmap_ir(body, in_dims, size, carry_dims + y_dims)
    carry = [x if d is None else move_batch_axis(x, old, 0, size)
             for x, old, d in zip(args[num_consts:n_in], dims[num_consts:n_in], carry_dims)]
    xs = [x if d is None else move_batch_axis(x, d, 1, size) for x, d in zip(args[n_in:], dims[n_in:])]
    out = bind(scan_p, *args[:num_consts], *carry, *xs, body=body_b, length=length, reverse=reverse,
               num_consts=num_consts, num_carry=num_carry)
    return out, carry_dims + [None if d is None else 1 for d in y_dims]


def _scan_jvp(primals, tangents, body, length, reverse, num_consts, num_carry):
    """A scan of the jvp'd body: tangents of consts are consts, of carries carries, of xs xs. A carry gets a
    tangent only if it may be perturbed on some iteration."""
    nc, nk = num_consts, num_carry
    nz = cf.nonzeros(primals, tangents)
    const_nz, xs_nz = nz[:nc], nz[nc + nk:]
    carry_nz = cf.grow(nz[nc:nc + nk], lambda c: jvp_ir_nonzeros(body, const_nz + c + xs_nz, False)[1])
    ny = len(body.out_avals) - nk
    body_jvp, out_nz = jvp_ir_nonzeros(body, const_nz + carry_nz + xs_nz, carry_nz + [False] * ny)
    y_nz = out_nz[nk:]
    in_order = cf.blocks([nc, nk, len(xs_nz), sum(const_nz), sum(carry_nz), sum(xs_nz)], [0, 3, 1, 4, 2, 5])
    out_order = cf.blocks([nk, ny, sum(carry_nz), sum(y_nz)], [0, 2, 1, 3])
    body_jvp, hoisted = hoist_consts(reorder(body_jvp, in_order, out_order))
    consts, carry, xs = cf.split(primals, [nc, nk])
    const_t, carry_t, xs_t = cf.split(tangents, [nc, nk])
    const_t, carry_t, xs_t = cf.given(const_t, const_nz), cf.given(carry_t, carry_nz), cf.given(xs_t, xs_nz)
    outs = bind(scan_p, *hoisted, *consts, *const_t, *carry, *carry_t, *xs, *xs_t, body=body_jvp, length=length,
                reverse=reverse, num_consts=len(hoisted) + nc + len(const_t), num_carry=nk + len(carry_t))
    carry_out, carry_out_t, ys, ys_t = cf.split(outs, [nk, len(carry_t), ny])
    return carry_out + ys, cf.fill(carry_out_t, carry_nz, carry_out) + cf.fill(ys_t, y_nz, ys)


def _scan_partial_eval(eqn, unknowns):
    """Known side: the loop-invariant part of the known body, inlined before the loop, and a scan of the rest,
    which also returns the residuals of each iteration stacked along the scan axis. Unknown side: a scan of
    the unknown part of the body, reading loop-invariant residuals as consts and stacked ones as xs. Residuals
    that are xs of the scan are passed as they are."""
    p = eqn.params
    body, nc, nk = p["body"], p["num_consts"], p["num_carry"]
    n_out = len(eqn.outvars)
    const_unknown, xs_unknown = unknowns[:nc], unknowns[nc + nk:]
    carry_unknown = cf.grow(unknowns[nc:nc + nk], lambda c: partial_eval_ir(
        body, const_unknown + c + xs_unknown, [False] * n_out)[2])
    in_unknown = const_unknown + carry_unknown + xs_unknown
    known, unknown, out_unknown, n_res = partial_eval_ir(body, in_unknown, carry_unknown + [False] * (n_out - nk))
    n_known_out = out_unknown.count(False)
    n_kc, n_kk = const_unknown.count(False), carry_unknown.count(False)
    # The known body splits into its loop-invariant part (reading only consts) and the loop.
    invariant, loop, variant, n_inv = partial_eval_ir(cf.constant_free(known), [False] * n_kc + [True] * (
        len(known.in_avals) - n_kc), [True] * n_known_out + [False] * n_res, stage_effects=True)
    known_inputs = [x for x, u in zip(eqn.inputs, in_unknown) if not u]
    invariant = cf.constant_free(invariant).ir
    hoisted, inv_outs = inline_eqns(invariant, zip(invariant.invars, known_inputs[:n_kc]))
    inv_res, inv_outs = iter(inv_outs[:-n_inv or None]), inv_outs[len(inv_outs) - n_inv:]
    lir, uir = cf.constant_free(loop).ir, cf.constant_free(unknown).ir
    loop_res = iter(lir.outvars[n_known_out:])
    x_operands = dict(zip(lir.invars[n_inv + n_kk:], known_inputs[n_kc + n_kk:]))
    res_consts, res_xs, stacked = {}, {}, []  # residual index -> operand of the unknown scan
    for j, is_variant in enumerate(variant[n_known_out:]):
        if not is_variant:
            res_consts[j] = next(inv_res)
            continue
        r = next(loop_res)
        if r in x_operands:
            res_xs[j] = x_operands[r]
        else:
            res_xs[j] = Var(r.aval.update(shape=(p["length"],) + r.aval.shape, weak_type=False))
            stacked.append((r, res_xs[j]))
    loop_body = ClosedIR(IR([], lir.invars, lir.eqns, lir.outvars[:n_known_out] + [r for r, _ in stacked]), [])
    known_eqn = cf.eqn_or_none(scan_p, inv_outs + known_inputs[n_kc:],
                               dict(p, body=loop_body, num_consts=n_inv, num_carry=n_kk),
                               [v for v, u in zip(eqn.outvars, out_unknown) if not u] + [v for _, v in stacked])
    u_consts, u_carry, u_xs = cf.split(list(range(n_res, len(uir.invars))),
                                       [sum(const_unknown), sum(carry_unknown)])
    order = list(res_consts) + u_consts + u_carry + list(res_xs) + u_xs
    unknown_body = ClosedIR(IR([], [uir.invars[i] for i in order], uir.eqns, uir.outvars), [])
    operands = [x for x, u in zip(eqn.inputs, in_unknown) if u]
    n_lead = len(u_consts) + len(u_carry)
    unknown_eqn = cf.eqn_or_none(scan_p, list(res_consts.values()) + operands[:n_lead] + list(res_xs.values())
                                 + operands[n_lead:],
                                 dict(p, body=unknown_body, num_consts=len(res_consts) + len(u_consts),
                                      num_carry=len(u_carry)),
                                 [v for v, u in zip(eqn.outvars, out_unknown) if u])
    return hoisted + ([known_eqn] if known_eqn else []), unknown_eqn


def _scan_transpose(cts, *args, body, length, reverse, num_consts, num_carry):
    """A scan in the other direction over the transposed body: the carry is the cotangent of the carry plus
    accumulators for the cotangents of the linear consts; the xs are the residual xs and the cotangents of
    the ys; the ys are the cotangents of the linear xs. Every carry is linear."""
    nc, nk = num_consts, num_carry
    consts, carry, xs = cf.split(args, [nc, nk])
    const_lin = [isinstance(x, UndefinedPrimal) for x in consts]
    xs_lin = [isinstance(x, UndefinedPrimal) for x in xs]
    ct_carry, ct_ys = cts[:nk], cts[nk:]
    ys_ct = [not isinstance(c, Zero) for c in ct_ys]
    body_t = cf.transposed(body, const_lin + [True] * nk + xs_lin, [True] * nk + ys_ct)
    res_consts = [x for x, lin in zip(consts, const_lin) if not lin]
    res_xs = [x for x, lin in zip(xs, xs_lin) if not lin]
    acc_avals = [x.aval.strip_weak() for x, lin in zip(consts, const_lin) if lin]
    n_rc, n_acc, n_rx = len(res_consts), len(acc_avals), len(res_xs)

    def step(*a):
        res_c, acc, ct_k, res_x, ct_y = cf.split(a, [n_rc, n_acc, nk, n_rx])
        outs = eval_ir(body_t, *res_c, *res_x, *ct_k, *ct_y)
        return [add_tangents(s, c) for s, c in zip(acc, outs[:n_acc])] + outs[n_acc:]

    carry_avals = [a.strip_weak() for a in body.in_avals[nc:nc + nk]]
    x_avals = [a for a, lin in zip(body.in_avals[nc + nk:], xs_lin) if not lin]
    ct_y_avals = [a.strip_weak() for a, h in zip(body.out_avals[nk:], ys_ct) if h]
    step_ir = trace_flat(step, [aval(x) for x in res_consts] + acc_avals + carry_avals + x_avals + ct_y_avals,
                         fun_name="transpose")
    step_ir, hoisted = hoist_consts(step_ir)
    outs = bind(scan_p, *hoisted, *res_consts, *[zeros(a) for a in acc_avals], *[instantiate(c) for c in ct_carry],
                *res_xs, *[c for c, h in zip(ct_ys, ys_ct) if h], body=step_ir, length=length,
                reverse=not reverse, num_consts=len(hoisted) + n_rc, num_carry=n_acc + nk)
    ct_consts, ct_init, ct_xs = (iter(part) for part in cf.split(outs, [n_acc, nk]))
    return ([next(ct_consts) if lin else None for lin in const_lin]
            + [c if isinstance(x, UndefinedPrimal) else None for x, c in zip(carry, ct_init)]
            + [next(ct_xs) if lin else None for lin in xs_lin])


def _scan_prune(eqn, live):
    p = eqn.params
    nc, ncarry = p["num_consts"], p["num_carry"]
    keep_out = [True] * ncarry + list(live[ncarry:])
    removable = [True] * nc + [False] * ncarry + [True] * (len(eqn.inputs) - nc - ncarry)
    (body,), keep_in = cf.prune_bodies([p["body"]], keep_out, removable)
    if all(keep_out) and all(keep_in):
        return None
    return cf.pruned_eqn(eqn, keep_in, keep_out, {**p, "body": body, "num_consts": sum(keep_in[:nc])})


scan_p = Primitive("scan", _scan_shape, _scan_impl, multiple_results=True, lower=Control(_scan_lower),
                   batch=_scan_batch, jvp=_scan_jvp, partial_eval=_scan_partial_eval, transpose=_scan_transpose,
                   prune=_scan_prune)
