"""while: repeat a body (sub-IR) on a carry while a predicate (sub-IR) holds."""
import numpy as np

from ..backend.rules import Control
from ..core.ad_util import aval
from ..core.avals import ShapedArray
from ..core.batching import move_batch_axis
from ..core.ir import IR, ClosedIR, Var, effectful, sub_irs
from ..core.ir_surgery import hoist_consts, reorder
from ..core.ops import ops
from ..core.trace import Primitive, bind, eval_ir, trace_flat
from ..transforms.ad import jvp_ir_nonzeros
from ..transforms.partial_eval import live_eqns, partial_eval_ir
from ..transforms.vmap import vmap_ir
from . import control_flow as cf
from .scan import scan_p


def _while_shape(*args, body, cond, body_nconsts, cond_nconsts):
    carry = args[cond_nconsts + body_nconsts:]
    if not cf.same_types(body.in_avals, args[cond_nconsts:]) or not cf.same_types(body.out_avals, carry):
        raise TypeError(f"while: the body maps ({cf.types_text(body.in_avals)}) to "
                        f"({cf.types_text(body.out_avals)}); the carry is ({cf.types_text(carry)})")
    if not cf.same_types(cond.in_avals, args[:cond_nconsts] + carry):
        raise TypeError(f"while: cond takes ({cf.types_text(cond.in_avals)}), expected "
                        f"({cf.types_text(args[:cond_nconsts] + carry)})")
    if not cf.same_types(cond.out_avals, [ShapedArray((), np.bool_)]):
        raise TypeError(f"while: cond must return one bool[] scalar, got ({cf.types_text(cond.out_avals)})")
    return [a.strip_weak() for a in carry]


def _while_impl(*args, body, cond, body_nconsts, cond_nconsts):
    cond_consts, body_consts = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts:])
    while eval_ir(cond, *cond_consts, *carry)[0]:
        carry = eval_ir(body, *body_consts, *carry)
    return carry


def _while_lower(c, outs, ins, body, cond, body_nconsts, cond_nconsts):
    """A loop that evaluates cond on the carry, leaves when it is false, and runs the body."""
    cond_consts, body_consts, init = cf.split(ins, [cond_nconsts, body_nconsts])
    with c.carry_loop(init, outs, body=body, first_carry=body_nconsts) as (_, carry, new):
        c.exit_unless(c.value(cond, cond_consts + carry))
        c.call(body, body_consts + carry, new)


def _while_batch(args, dims, body, cond, body_nconsts, cond_nconsts):
    """Unbatched predicate: one loop over the batched body. Batched predicate: a loop while any example runs,
    each carry taking the body's new value only in the examples whose predicate still holds (`_masked`), run
    over blocks of BLOCK examples where the body's unbatched work allows (`_in_blocks`)."""
    size = cf.batch_size(args, dims)
    n_consts = cond_nconsts + body_nconsts
    cond_dims, body_dims, carry_dims = dims[:cond_nconsts], dims[cond_nconsts:n_consts], dims[n_consts:]
    carry_dims = cf.batched_carries(body, body_dims, carry_dims, (), size)
    if vmap_ir(cond, list(cond_dims) + carry_dims, size)[1][0] is not None:
        carry_dims = [0] * len(carry_dims)
    cond_b, (pred_dim,) = vmap_ir(cond, list(cond_dims) + carry_dims, size)
    if pred_dim is None:
        carry = [x if d is None else move_batch_axis(x, old, 0, size)
                 for x, old, d in zip(args[n_consts:], dims[n_consts:], carry_dims)]
        body_b, _ = vmap_ir(body, list(body_dims) + carry_dims, size, carry_dims)
        out = bind(while_p, *args[:n_consts], *carry, body=body_b, cond=cond_b, body_nconsts=body_nconsts,
                   cond_nconsts=cond_nconsts)
        return out, carry_dims
    params = {"body": body, "cond": cond, "body_nconsts": body_nconsts, "cond_nconsts": cond_nconsts}
    batched = [d is not None for d in dims[:n_consts]] + [True] * len(carry_dims)
    blocked = (isinstance(size, int) and size >= 2 * BLOCK
               and not any(effectful(e) or _collective(e) for e in body.ir.eqns + cond.ir.eqns)
               and cf.unbatched_work(cond, batched[:cond_nconsts] + batched[n_consts:])
               + cf.unbatched_work(body, batched[cond_nconsts:]) <= BLOCK)
    return (_in_blocks if blocked else _masked)(list(args), list(dims), size, **params), carry_dims


def _collective(eqn):
    """Whether eqn is, or holds in a sub-IR, a collective over a named axis: it needs the whole batch at once."""
    return eqn.prim.named_batch is not None or any(_collective(e) for sub in sub_irs(eqn) for e in sub.eqns)


def _masked(args, dims, size, body, cond, body_nconsts, cond_nconsts):
    """The carries (batched at 0) after a loop while any example's predicate holds, each example's carries
    taking the body's new values only while its own predicate holds."""
    n_consts = cond_nconsts + body_nconsts
    consts, const_dims = args[:n_consts], dims[:n_consts]
    carry = [move_batch_axis(x, d, 0, size) for x, d in zip(args[n_consts:], dims[n_consts:])]
    carry_dims = [0] * len(carry)
    cond_b, _ = vmap_ir(cond, const_dims[:cond_nconsts] + carry_dims, size)
    body_b, _ = vmap_ir(body, const_dims[cond_nconsts:] + carry_dims, size, carry_dims)

    def any_running(*xs):
        return [ops.reduce_max(eval_ir(cond_b, *xs)[0], axes=(0,))]

    def masked_body(*xs):
        pred = eval_ir(cond_b, *xs[:cond_nconsts], *xs[n_consts:])[0]
        new = eval_ir(body_b, *xs[cond_nconsts:])
        return [ops.select_n(ops.broadcast_in_dim(pred, shape=aval(x).shape, broadcast_dimensions=(0,)), x, y)
                for x, y in zip(xs[n_consts:], new)]

    cond_any = trace_flat(any_running, cond_b.in_avals, fun_name="while_cond")
    body_masked = trace_flat(masked_body, [aval(x) for x in consts[:cond_nconsts]] + body_b.in_avals,
                             fun_name="while_body")
    return bind(while_p, *consts[:cond_nconsts], *consts, *carry, body=body_masked, cond=cond_any,
                body_nconsts=n_consts, cond_nconsts=cond_nconsts)


BLOCK = 32      # examples that a batched while with a batched predicate runs together (`_in_blocks`)


def _in_blocks(args, dims, size, **params):
    """`_masked` on each block of BLOCK examples in turn (a scan over the blocks), then on the rest, so that a
    block loops until its own slowest example is done rather than the whole batch's slowest: rejection samplers
    loop again for a few examples (gamma draws of 1e6 ran the body 6 times over all of them, 252 -> 55 ms).
    Only where the body's unbatched work is small: each block repeats it. Unbatched operands stay so (an
    initial carry is broadcast in each block)."""
    whole = size // BLOCK * BLOCK
    args = [x if d is None else move_batch_axis(x, d, 0, size) for x, d in zip(args, dims)]
    dims = [None if d is None else 0 for d in dims]
    fixed = [x for x, d in zip(args, dims) if d is None]

    def part(x, lo, hi):
        return ops.slice(x, start_indices=(lo,) + (0,) * (aval(x).ndim - 1),
                         limit_indices=(hi,) + aval(x).shape[1:], strides=None)

    def one_block(*xs):
        unbatched, rows = iter(xs[:len(fixed)]), iter(xs[len(fixed):])
        return _masked([next(unbatched) if d is None else next(rows) for d in dims], dims, BLOCK, **params)

    tiles = [ops.reshape(part(x, 0, whole), new_sizes=(size // BLOCK, BLOCK) + aval(x).shape[1:])
             for x, d in zip(args, dims) if d is not None]
    scan_body = trace_flat(one_block, [aval(x) for x in fixed] + [aval(x).update(shape=aval(x).shape[1:])
                                                                  for x in tiles], fun_name="while_blocks")
    outs = bind(scan_p, *fixed, *tiles, body=scan_body, length=size // BLOCK, reverse=False,
                num_consts=len(fixed), num_carry=0)
    outs = [ops.reshape(y, new_sizes=(whole,) + aval(y).shape[2:]) for y in outs]
    if whole == size:
        return outs
    rest = _masked([x if d is None else part(x, whole, size) for x, d in zip(args, dims)], dims, size - whole,
                   **params)
    return [ops.concatenate(y, r, dimension=0) for y, r in zip(outs, rest)]


def _while_jvp(primals, tangents, body, cond, body_nconsts, cond_nconsts):
    """A while over the jvp'd body with the tangents as extra consts and carries; a carry gets a tangent only
    if it may be perturbed on some iteration."""
    n_consts = cond_nconsts + body_nconsts
    consts, carry = primals[cond_nconsts:n_consts], primals[n_consts:]
    const_nz = cf.nonzeros(consts, tangents[cond_nconsts:n_consts])
    carry_nz = cf.grow(cf.nonzeros(carry, tangents[n_consts:]),
                       lambda c: jvp_ir_nonzeros(body, const_nz + c, False)[1])
    body_jvp, _ = jvp_ir_nonzeros(body, const_nz + carry_nz, carry_nz)
    order = cf.blocks([body_nconsts, len(carry), sum(const_nz), sum(carry_nz)], [0, 2, 1, 3])
    body_jvp, hoisted = hoist_consts(reorder(body_jvp, order))
    const_t, carry_t = cf.given(tangents[cond_nconsts:n_consts], const_nz), cf.given(tangents[n_consts:], carry_nz)
    ir = cond.ir
    cond_jvp = ClosedIR(IR([], ir.invars + [Var(aval(t)) for t in carry_t], ir.eqns, ir.outvars), [])
    outs = bind(while_p, *primals[:cond_nconsts], *hoisted, *consts, *const_t, *carry, *carry_t, body=body_jvp,
                cond=cond_jvp, body_nconsts=len(hoisted) + body_nconsts + len(const_t), cond_nconsts=cond_nconsts)
    return outs[:len(carry)], cf.fill(outs[len(carry):], carry_nz, carry)


def _while_partial_eval(eqn, unknowns):
    """The known carries come from a loop over the known part of the body; the whole loop runs again for
    the unknown ones. So linearize works, and reverse mode stops at the transpose rule, as in JAX."""
    p = eqn.params
    n_cond, n_consts = p["cond_nconsts"], p["cond_nconsts"] + p["body_nconsts"]
    body_unknown = unknowns[p["cond_nconsts"]:n_consts]
    carry_unknown = cf.grow(unknowns[n_consts:],
                            lambda c: partial_eval_ir(p["body"], body_unknown + c, [False] * len(c))[2])
    known_cond, _, (pred_unknown,), _ = partial_eval_ir(p["cond"], unknowns[:n_cond] + carry_unknown, [False])
    if pred_unknown:
        return [], eqn
    known, _, _, _ = partial_eval_ir(p["body"], body_unknown + carry_unknown, carry_unknown)
    outs = [v for v, u in zip(eqn.outvars, carry_unknown) if not u]
    ir = cf.constant_free(known).ir
    known_body = ClosedIR(IR([], ir.invars, live_eqns(ir.eqns, ir.outvars[:len(outs)]), ir.outvars[:len(outs)]), [])
    inputs = [x for x, u in zip(eqn.inputs, unknowns[:n_consts] + carry_unknown) if not u]
    known_eqn = cf.eqn_or_none(while_p, inputs, {"body": known_body, "cond": cf.constant_free(known_cond),
                                                 "cond_nconsts": n_cond,
                                                 "body_nconsts": p["body_nconsts"] - sum(body_unknown)}, outs)
    unknown_eqn = eqn.replace(outvars=[v if u else Var(v.aval) for v, u in zip(eqn.outvars, carry_unknown)])
    return [known_eqn] if known_eqn else [], unknown_eqn


def _while_transpose(cts, *args, **params):
    raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
                     "start/stop values. Try using lax.scan, or lax.fori_loop with static start/stop.")


while_p = Primitive("while", _while_shape, _while_impl, multiple_results=True, lower=Control(_while_lower),
                    batch=_while_batch, jvp=_while_jvp, partial_eval=_while_partial_eval, transpose=_while_transpose)
