"""Control-flow primitives: cond, while and scan. Their bodies are sub-IRs (ClosedIRs with no constants:
closed-over values are hoisted into explicit operands), so every transform sees them as ordinary inputs.

    cond[branches]                      index *operands              -> outs of the chosen branch
    while[body cond body_nconsts cond_nconsts]  *cond_consts *body_consts *carry -> carry
    scan[body length reverse num_consts num_carry]  *consts *carry *xs  -> *carry *ys
"""
import numpy as np

from ..backend.rules import Control
from ..core.avals import ShapedArray
from ..core.errors import ShapeError
from ..core.ir import IR, ClosedIR, Eqn, Var
from ..core.trace import Primitive, bind, eval_ir, trace_flat
from .base import UndefinedPrimal, Zero, add_tangents, aval, instantiate, is_float_aval, move_batch_axis, zeros


def hoist_consts(closed):
    """A ClosedIR whose constants become leading inputs; returns it and the constant values."""
    ir = closed.ir
    return ClosedIR(IR([], ir.constvars + ir.invars, ir.eqns, ir.outvars), []), list(closed.consts)


def _same_types(avals, expected):
    return len(avals) == len(expected) and all(
        (a.shape, a.dtype) == (b.shape, b.dtype) for a, b in zip(avals, expected))


def _types(avals):
    return ", ".join(a.str_short() for a in avals)

# --------------------------------------------------------------------------- helpers of the autodiff rules


def _nonzeros(primals, tangents):
    """Which inputs carry a tangent: float values whose tangent is not a symbolic Zero."""
    return [not isinstance(t, Zero) and is_float_aval(aval(p)) for p, t in zip(primals, tangents)]


def _given(tangents, nonzeros):
    return [instantiate(t) for t, nz in zip(tangents, nonzeros) if nz]


def _fill(values, nonzeros, like):
    """One tangent per value of `like`: the next of `values` where nonzero, a symbolic Zero elsewhere."""
    values = iter(values)
    return [next(values) if nz else Zero(aval(x)) for x, nz in zip(like, nonzeros)]


def _split(xs, sizes):
    out, start = [], 0
    for n in sizes:
        out.append(list(xs[start:start + n]))
        start += n
    return out + [list(xs[start:])]


def _blocks(sizes, order):
    """Indices that reorder consecutive blocks of the given sizes into the block order `order`."""
    starts = np.cumsum([0, *sizes])
    return [i for b in order for i in range(starts[b], starts[b + 1])]


def _reorder(closed, in_order=None, out_order=None):
    """closed with inputs (outputs) permuted: new position k is old position order[k]."""
    ir = closed.ir
    invars = ir.invars if in_order is None else [ir.invars[i] for i in in_order]
    outvars = ir.outvars if out_order is None else [ir.outvars[i] for i in out_order]
    return ClosedIR(IR(ir.constvars, invars, ir.eqns, outvars), closed.consts)


def _shared_consts(closeds):
    """Transformed bodies may close over arrays: make all their constants leading inputs of every one of
    them (cond branches take the same operands). Returns (constant-free ClosedIRs, constant values)."""
    consts = [c for closed in closeds for c in closed.consts]
    out = []
    for k, closed in enumerate(closeds):
        lead = [v if j == k else Var(v.aval) for j, other in enumerate(closeds) for v in other.ir.constvars]
        out.append(ClosedIR(IR([], lead + closed.ir.invars, closed.ir.eqns, closed.ir.outvars), []))
    return out, consts


def _grow(flags, step):
    """The smallest superset of the carry flags that `step` (carry flags -> body output flags, carries first)
    maps into itself: which carries get a tangent (or are unknown) on some iteration."""
    while True:
        grown = [a or b for a, b in zip(flags, step(flags))]
        if grown == flags:
            return flags
        flags = grown


def _transposed(closed, linear, has_cotangent):
    """transpose_ir of closed with the inputs where `linear` as the linear ones (the others are residuals):
    (residual inputs..., cotangents where has_cotangent...) -> cotangents of the linear inputs."""
    from ..transforms.ad import transpose_ir
    order = [i for i, lin in enumerate(linear) if not lin] + [i for i, lin in enumerate(linear) if lin]
    return transpose_ir(_reorder(closed, order), linear.count(False), has_cotangent)


def _inlined(closed, inputs):
    """The equations of closed with fresh variables, reading `inputs` (atoms of the enclosing IR); returns
    (equations, output atoms). Partial evaluation uses it to move loop-invariant work out of a loop."""
    env = dict(zip(closed.ir.invars, inputs))

    def read(x):
        return env.get(x, x)

    eqns = []
    for eqn in closed.ir.eqns:
        outvars = [Var(v.aval) for v in eqn.outvars]
        env.update(zip(eqn.outvars, outvars))
        eqns.append(Eqn(eqn.prim, [read(x) for x in eqn.inputs], eqn.params, outvars))
    return eqns, [read(x) for x in closed.ir.outvars]


def _constant_free(closed):
    assert not closed.consts, "partial evaluation of a body that closes over constants"
    return closed

# ------------------------------------------------------------------------------------------------ cond


def _cond_shape(index, *operands, branches):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond: the branch index must be an i32[] scalar, got {index.str_short()}")
    for k, branch in enumerate(branches):
        if not _same_types(branch.in_avals, operands):
            raise TypeError(f"cond: branch {k} takes ({_types(branch.in_avals)}), operands are ({_types(operands)})")
        if not _same_types(branch.out_avals, branches[0].out_avals):
            raise TypeError(f"cond: branch {k} returns ({_types(branch.out_avals)}), branch 0 returns "
                            f"({_types(branches[0].out_avals)})")
    return [a.strip_weak() for a in branches[0].out_avals]


def _cond_impl(index, *operands, branches):
    return eval_ir(branches[int(np.clip(index, 0, len(branches) - 1))], *operands)


def _cond_lower(c, outs, ins, branches):
    """A switch whose case k runs branch k on the operands, writing the outputs."""
    index, *operands = ins
    for k in c.cases(index, len(branches)):
        c.call(branches[k], operands, outs)


cond_p = Primitive("cond", _cond_shape, _cond_impl, multiple_results=True, lower=Control(_cond_lower))


def _batch_size(args, dims):
    return next(aval(x).shape[d] for x, d in zip(args, dims) if d is not None)


def _cond_batch(args, dims, branches):
    """Unbatched index: one cond of the batched branches; an output is batched (at 0) if it is in any branch.
    Batched index: every branch runs on the whole batch and select_n picks each example's result."""
    from ..transforms.vmap import vmap_ir
    from .elementwise import clamp_p, select_n_p
    from .shapes import broadcast_in_dim_p
    (index, *operands), (index_dim, *operand_dims) = args, dims
    size = _batch_size(args, dims)
    if index_dim is None:
        natural = [vmap_ir(b, operand_dims, size)[1] for b in branches]
        out_dims = [0 if any(d is not None for d in ds) else None for ds in zip(*natural)]
        batched = tuple(vmap_ir(b, operand_dims, size, out_dims)[0] for b in branches)
        return bind(cond_p, index, *operands, branches=batched), out_dims
    index = bind(clamp_p, np.int32(0), index, np.int32(len(branches) - 1))
    outs = [eval_ir(vmap_ir(b, operand_dims, size, [0] * len(b.out_avals))[0], *operands) for b in branches]
    picked = [bind(select_n_p, bind(broadcast_in_dim_p, index, shape=aval(cases[0]).shape, broadcast_dimensions=(0,)),
                   *cases) for cases in zip(*outs)]
    return picked, [0] * len(picked)


cond_p.set(batch=_cond_batch)


def _cond_jvp(primals, tangents, branches):
    """One cond of the jvp'd branches; only operands with tangents get them, and only output tangents that
    are nonzero in some branch are computed."""
    from ..transforms.ad import jvp_ir_nonzeros
    index, *operands = primals
    nz = _nonzeros(operands, tangents[1:])
    out_nz = [any(z) for z in zip(*[jvp_ir_nonzeros(b, nz, False)[1] for b in branches])]
    new, consts = _shared_consts([jvp_ir_nonzeros(b, nz, out_nz)[0] for b in branches])
    outs = bind(cond_p, index, *consts, *operands, *_given(tangents[1:], nz), branches=tuple(new))
    n = len(branches[0].out_avals)
    return outs[:n], _fill(outs[n:], out_nz, outs[:n])


def _eqn(prim, inputs, params, outvars):
    return Eqn(prim, inputs, params, outvars) if outvars else None


def _cond_partial_eval(eqn, unknowns):
    """Known cond: the known part of each branch, returning every branch's residuals (zeros for the other
    branches' slots). Unknown cond: the unknown part of each branch, reading its own residuals."""
    from ..transforms.partial_eval import partial_eval_ir
    if unknowns[0]:
        return [], eqn
    branches, ops_unknown = eqn.params["branches"], unknowns[1:]
    out_unknown = [any(u) for u in zip(*[partial_eval_ir(b, ops_unknown, [False] * len(eqn.outvars))[2]
                                         for b in branches])]
    splits = [partial_eval_ir(b, ops_unknown, out_unknown) for b in branches]
    n_known = out_unknown.count(False)
    res_avals = [a.strip_weak() for known, *_ in splits for a in known.out_avals[n_known:]]
    known_branches, unknown_branches, offset = [], [], 0
    for known, unknown, _, n_res in splits:
        def padded(*ops, known=known, offset=offset, n_res=n_res):
            outs = eval_ir(known, *ops)
            return (outs[:n_known] + [zeros(a) for a in res_avals[:offset]] + outs[n_known:]
                    + [zeros(a) for a in res_avals[offset + n_res:]])
        known_branches.append(_constant_free(trace_flat(padded, known.in_avals, fun_name="branch")))
        ir = _constant_free(unknown).ir
        lead = [Var(a) for a in res_avals[:offset]] + ir.invars[:n_res] + [Var(a) for a in res_avals[offset + n_res:]]
        unknown_branches.append(ClosedIR(IR([], lead + ir.invars[n_res:], ir.eqns, ir.outvars), []))
        offset += n_res
    index, ops = eqn.inputs[0], eqn.inputs[1:]
    res_vars = [Var(a) for a in res_avals]
    known_eqn = _eqn(cond_p, [index] + [x for x, u in zip(ops, ops_unknown) if not u],
                     {"branches": tuple(known_branches)},
                     [v for v, u in zip(eqn.outvars, out_unknown) if not u] + res_vars)
    unknown_eqn = _eqn(cond_p, [index] + res_vars + [x for x, u in zip(ops, ops_unknown) if u],
                       {"branches": tuple(unknown_branches)}, [v for v, u in zip(eqn.outvars, out_unknown) if u])
    return [known_eqn] if known_eqn else [], unknown_eqn


def _cond_transpose(cts, index, *operands, branches):
    """A cond of the transposed branches; the index and the residual operands are not linear."""
    linear = [isinstance(x, UndefinedPrimal) for x in operands]
    has_ct = [not isinstance(c, Zero) for c in cts]
    new, consts = _shared_consts([_transposed(b, linear, has_ct) for b in branches])
    res = [x for x, lin in zip(operands, linear) if not lin]
    outs = iter(bind(cond_p, index, *consts, *res, *[c for c, h in zip(cts, has_ct) if h], branches=tuple(new)))
    return [None] + [next(outs) if lin else None for lin in linear]


cond_p.set(jvp=_cond_jvp, partial_eval=_cond_partial_eval, transpose=_cond_transpose)

# ----------------------------------------------------------------------------------------------- while


def _while_shape(*args, body, cond, body_nconsts, cond_nconsts):
    carry = args[cond_nconsts + body_nconsts:]
    if not _same_types(body.in_avals, args[cond_nconsts:]) or not _same_types(body.out_avals, carry):
        raise TypeError(f"while: the body maps ({_types(body.in_avals)}) to ({_types(body.out_avals)}); "
                        f"the carry is ({_types(carry)})")
    if not _same_types(cond.in_avals, args[:cond_nconsts] + carry):
        raise TypeError(f"while: cond takes ({_types(cond.in_avals)}), expected "
                        f"({_types(args[:cond_nconsts] + carry)})")
    if not _same_types(cond.out_avals, [ShapedArray((), np.bool_)]):
        raise TypeError(f"while: cond must return one bool[] scalar, got ({_types(cond.out_avals)})")
    return [a.strip_weak() for a in carry]


def _while_impl(*args, body, cond, body_nconsts, cond_nconsts):
    cond_consts, body_consts = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts:])
    while eval_ir(cond, *cond_consts, *carry)[0]:
        carry = eval_ir(body, *body_consts, *carry)
    return carry


def _while_lower(c, outs, ins, body, cond, body_nconsts, cond_nconsts):
    """A loop that evaluates cond on the carry, leaves when it is false, and runs the body."""
    cond_consts, body_consts, init = _split(ins, [cond_nconsts, body_nconsts])
    with c.carry_loop(init, outs) as (_, carry, new):
        c.exit_unless(c.value(cond, cond_consts + carry))
        c.call(body, body_consts + carry, new)


while_p = Primitive("while", _while_shape, _while_impl, multiple_results=True, lower=Control(_while_lower))


def _carry_dims(body, const_dims, carry_dims, rest_dims, size):
    """The smallest set of batched carries (at axis 0) that the batched body maps to itself."""
    from ..transforms.vmap import vmap_ir
    dims = [None if d is None else 0 for d in carry_dims]
    while True:
        out = vmap_ir(body, list(const_dims) + dims + list(rest_dims), size)[1][:len(dims)]
        grown = [0 if d is not None or o is not None else None for d, o in zip(dims, out)]
        if grown == dims:
            return dims
        dims = grown


def _while_batch(args, dims, body, cond, body_nconsts, cond_nconsts):
    """Unbatched predicate: one loop over the batched body. Batched predicate: loop while any example runs;
    each carry takes the body's new value only in the examples whose predicate still holds."""
    from ..transforms.vmap import vmap_ir
    from .elementwise import select_n_p
    from .reductions import reduce_max_p
    from .shapes import broadcast_in_dim_p
    size = _batch_size(args, dims)
    n_consts = cond_nconsts + body_nconsts
    cond_dims, body_dims, carry_dims = dims[:cond_nconsts], dims[cond_nconsts:n_consts], dims[n_consts:]
    carry_dims = _carry_dims(body, body_dims, carry_dims, (), size)
    if vmap_ir(cond, list(cond_dims) + carry_dims, size)[1][0] is not None:
        carry_dims = [0] * len(carry_dims)
    carry = [x if d is None else move_batch_axis(x, old, 0, size)
             for x, old, d in zip(args[n_consts:], dims[n_consts:], carry_dims)]
    cond_b, (pred_dim,) = vmap_ir(cond, list(cond_dims) + carry_dims, size)
    body_b, _ = vmap_ir(body, list(body_dims) + carry_dims, size, carry_dims)
    if pred_dim is None:
        out = bind(while_p, *args[:n_consts], *carry, body=body_b, cond=cond_b, body_nconsts=body_nconsts,
                   cond_nconsts=cond_nconsts)
        return out, carry_dims

    def any_running(*xs):
        return [bind(reduce_max_p, eval_ir(cond_b, *xs)[0], axes=(0,))]

    def masked_body(*xs):
        pred = eval_ir(cond_b, *xs[:cond_nconsts], *xs[n_consts:])[0]
        new = eval_ir(body_b, *xs[cond_nconsts:])
        return [bind(select_n_p, bind(broadcast_in_dim_p, pred, shape=aval(x).shape, broadcast_dimensions=(0,)),
                     x, y) for x, y in zip(xs[n_consts:], new)]

    cond_any = trace_flat(any_running, cond_b.in_avals, fun_name="while_cond")
    body_masked = trace_flat(masked_body, [aval(x) for x in args[:cond_nconsts]] + body_b.in_avals,
                             fun_name="while_body")
    out = bind(while_p, *args[:cond_nconsts], *args[:n_consts], *carry, body=body_masked, cond=cond_any,
               body_nconsts=n_consts, cond_nconsts=cond_nconsts)
    return out, carry_dims


while_p.set(batch=_while_batch)


def _while_jvp(primals, tangents, body, cond, body_nconsts, cond_nconsts):
    """A while over the jvp'd body with the tangents as extra consts and carries; a carry gets a tangent only
    if it may be perturbed on some iteration."""
    from ..transforms.ad import jvp_ir_nonzeros
    n_consts = cond_nconsts + body_nconsts
    consts, carry = primals[cond_nconsts:n_consts], primals[n_consts:]
    const_nz = _nonzeros(consts, tangents[cond_nconsts:n_consts])
    carry_nz = _grow(_nonzeros(carry, tangents[n_consts:]),
                     lambda c: jvp_ir_nonzeros(body, const_nz + c, False)[1])
    body_jvp, _ = jvp_ir_nonzeros(body, const_nz + carry_nz, carry_nz)
    order = _blocks([body_nconsts, len(carry), sum(const_nz), sum(carry_nz)], [0, 2, 1, 3])
    (body_jvp,), hoisted = _shared_consts([_reorder(body_jvp, order)])
    const_t, carry_t = _given(tangents[cond_nconsts:n_consts], const_nz), _given(tangents[n_consts:], carry_nz)
    ir = cond.ir
    cond_jvp = ClosedIR(IR([], ir.invars + [Var(aval(t)) for t in carry_t], ir.eqns, ir.outvars), [])
    outs = bind(while_p, *primals[:cond_nconsts], *hoisted, *consts, *const_t, *carry, *carry_t, body=body_jvp,
                cond=cond_jvp, body_nconsts=len(hoisted) + body_nconsts + len(const_t), cond_nconsts=cond_nconsts)
    return outs[:len(carry)], _fill(outs[len(carry):], carry_nz, carry)


def _while_partial_eval(eqn, unknowns):
    """The known carries come from a loop over the known part of the body; the whole loop runs again for
    the unknown ones. So linearize works, and reverse mode stops at the transpose rule, as in JAX."""
    from ..transforms.partial_eval import live_eqns, partial_eval_ir
    p = eqn.params
    n_cond, n_consts = p["cond_nconsts"], p["cond_nconsts"] + p["body_nconsts"]
    body_unknown = unknowns[p["cond_nconsts"]:n_consts]
    carry_unknown = _grow(unknowns[n_consts:], lambda c: partial_eval_ir(p["body"], body_unknown + c,
                                                                         [False] * len(c))[2])
    known_cond, _, (pred_unknown,), _ = partial_eval_ir(p["cond"], unknowns[:n_cond] + carry_unknown, [False])
    if pred_unknown:
        return [], eqn
    known, _, _, _ = partial_eval_ir(p["body"], body_unknown + carry_unknown, carry_unknown)
    outs = [v for v, u in zip(eqn.outvars, carry_unknown) if not u]
    ir = _constant_free(known).ir
    known_body = ClosedIR(IR([], ir.invars, live_eqns(ir.eqns, ir.outvars[:len(outs)]), ir.outvars[:len(outs)]), [])
    inputs = [x for x, u in zip(eqn.inputs, unknowns[:n_consts] + carry_unknown) if not u]
    known_eqn = _eqn(while_p, inputs, {"body": known_body, "cond": _constant_free(known_cond), "cond_nconsts": n_cond,
                                           "body_nconsts": p["body_nconsts"] - sum(body_unknown)}, outs)
    unknown_eqn = Eqn(while_p, eqn.inputs, p, [v if u else Var(v.aval) for v, u in zip(eqn.outvars, carry_unknown)])
    return [known_eqn] if known_eqn else [], unknown_eqn


def _while_transpose(cts, *args, **params):
    raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
                     "start/stop values. Try using lax.scan, or lax.fori_loop with static start/stop.")


while_p.set(jvp=_while_jvp, partial_eval=_while_partial_eval, transpose=_while_transpose)

# ------------------------------------------------------------------------------------------------ scan


def _scan_shape(*args, body, length, reverse, num_consts, num_carry):
    consts, carry, xs = args[:num_consts], args[num_consts:num_consts + num_carry], args[num_consts + num_carry:]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise ShapeError(f"scan: every xs leaf needs a leading axis of length {length}, got {x.str_short()}")
    x_slices = [x.update(shape=x.shape[1:]) for x in xs]
    if not _same_types(body.in_avals, list(consts) + list(carry) + x_slices):
        raise TypeError(f"scan: the body takes ({_types(body.in_avals)}), expected "
                        f"({_types(list(consts) + list(carry) + x_slices)})")
    outs = body.out_avals
    if not _same_types(outs[:num_carry], carry):
        raise TypeError(f"scan: the body returns carry ({_types(outs[:num_carry])}), expected ({_types(carry)})")
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
    (i counts down when reverse)."""
    consts, init, xs = _split(ins, [num_consts, num_carry])
    with c.carry_loop(init, outs[:num_carry], length) as (i, carry, new):
        row = c.b.iop("sub", length - 1, i) if reverse else i
        c.call(body, consts + carry + [c.row(x, row) for x in xs], new + [c.row(y, row) for y in outs[num_carry:]])


scan_p = Primitive("scan", _scan_shape, _scan_impl, multiple_results=True, lower=Control(_scan_lower))


def _scan_batch(args, dims, body, length, reverse, num_consts, num_carry):
    """Batched xs carry their batch axis at 1 (axis 0 is scanned), so the body sees it at 0; batched ys come
    out with it at 1. Carries are batched (at 0) where the fixed point says so."""
    from ..transforms.vmap import vmap_ir
    size = _batch_size(args, dims)
    n_in = num_consts + num_carry
    const_dims, x_dims = dims[:num_consts], [None if d is None else 0 for d in dims[n_in:]]
    carry_dims = _carry_dims(body, const_dims, dims[num_consts:n_in], x_dims, size)
    in_dims = list(const_dims) + carry_dims + x_dims
    y_dims = [None if d is None else 0 for d in vmap_ir(body, in_dims, size)[1][num_carry:]]
    body_b, _ = vmap_ir(body, in_dims, size, carry_dims + y_dims)
    carry = [x if d is None else move_batch_axis(x, old, 0, size)
             for x, old, d in zip(args[num_consts:n_in], dims[num_consts:n_in], carry_dims)]
    xs = [x if d is None else move_batch_axis(x, d, 1, size) for x, d in zip(args[n_in:], dims[n_in:])]
    out = bind(scan_p, *args[:num_consts], *carry, *xs, body=body_b, length=length, reverse=reverse,
               num_consts=num_consts, num_carry=num_carry)
    return out, carry_dims + [None if d is None else 1 for d in y_dims]


scan_p.set(batch=_scan_batch)


def _scan_jvp(primals, tangents, body, length, reverse, num_consts, num_carry):
    """A scan of the jvp'd body: tangents of consts are consts, of carries carries, of xs xs. A carry gets a
    tangent only if it may be perturbed on some iteration."""
    from ..transforms.ad import jvp_ir_nonzeros
    nc, nk = num_consts, num_carry
    nz = _nonzeros(primals, tangents)
    const_nz, xs_nz = nz[:nc], nz[nc + nk:]
    carry_nz = _grow(nz[nc:nc + nk], lambda c: jvp_ir_nonzeros(body, const_nz + c + xs_nz, False)[1])
    ny = len(body.out_avals) - nk
    body_jvp, out_nz = jvp_ir_nonzeros(body, const_nz + carry_nz + xs_nz, carry_nz + [False] * ny)
    y_nz = out_nz[nk:]
    in_order = _blocks([nc, nk, len(xs_nz), sum(const_nz), sum(carry_nz), sum(xs_nz)], [0, 3, 1, 4, 2, 5])
    out_order = _blocks([nk, ny, sum(carry_nz), sum(y_nz)], [0, 2, 1, 3])
    (body_jvp,), hoisted = _shared_consts([_reorder(body_jvp, in_order, out_order)])
    consts, carry, xs = _split(primals, [nc, nk])
    const_t, carry_t, xs_t = _split(tangents, [nc, nk])
    const_t, carry_t, xs_t = _given(const_t, const_nz), _given(carry_t, carry_nz), _given(xs_t, xs_nz)
    outs = bind(scan_p, *hoisted, *consts, *const_t, *carry, *carry_t, *xs, *xs_t, body=body_jvp, length=length,
                reverse=reverse, num_consts=len(hoisted) + nc + len(const_t), num_carry=nk + len(carry_t))
    carry_out, carry_out_t, ys, ys_t = _split(outs, [nk, len(carry_t), ny])
    return carry_out + ys, _fill(carry_out_t, carry_nz, carry_out) + _fill(ys_t, y_nz, ys)


def _scan_partial_eval(eqn, unknowns):
    """Known side: the loop-invariant part of the known body, inlined before the loop, and a scan of the rest,
    which also returns the residuals of each iteration stacked along the scan axis. Unknown side: a scan of
    the unknown part of the body, reading loop-invariant residuals as consts and stacked ones as xs. Residuals
    that are xs of the scan are passed as they are."""
    from ..transforms.partial_eval import partial_eval_ir
    p = eqn.params
    body, nc, nk = p["body"], p["num_consts"], p["num_carry"]
    n_out = len(eqn.outvars)
    const_unknown, xs_unknown = unknowns[:nc], unknowns[nc + nk:]
    carry_unknown = _grow(unknowns[nc:nc + nk], lambda c: partial_eval_ir(
        body, const_unknown + c + xs_unknown, [False] * n_out)[2])
    in_unknown = const_unknown + carry_unknown + xs_unknown
    known, unknown, out_unknown, n_res = partial_eval_ir(body, in_unknown, carry_unknown + [False] * (n_out - nk))
    n_known_out = out_unknown.count(False)
    n_kc, n_kk = const_unknown.count(False), carry_unknown.count(False)
    # The known body splits into its loop-invariant part (reading only consts) and the loop.
    invariant, loop, variant, n_inv = partial_eval_ir(_constant_free(known), [False] * n_kc + [True] * (
        len(known.in_avals) - n_kc), [True] * n_known_out + [False] * n_res)
    known_inputs = [x for x, u in zip(eqn.inputs, in_unknown) if not u]
    hoisted, inv_outs = _inlined(_constant_free(invariant), known_inputs[:n_kc])
    inv_res, inv_outs = iter(inv_outs[:-n_inv or None]), inv_outs[len(inv_outs) - n_inv:]
    lir, uir = _constant_free(loop).ir, _constant_free(unknown).ir
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
    known_eqn = _eqn(scan_p, inv_outs + known_inputs[n_kc:],
                     dict(p, body=loop_body, num_consts=n_inv, num_carry=n_kk),
                     [v for v, u in zip(eqn.outvars, out_unknown) if not u] + [v for _, v in stacked])
    u_consts, u_carry, u_xs = _split(list(range(n_res, len(uir.invars))), [sum(const_unknown), sum(carry_unknown)])
    order = list(res_consts) + u_consts + u_carry + list(res_xs) + u_xs
    unknown_body = ClosedIR(IR([], [uir.invars[i] for i in order], uir.eqns, uir.outvars), [])
    operands = [x for x, u in zip(eqn.inputs, in_unknown) if u]
    n_lead = len(u_consts) + len(u_carry)
    unknown_eqn = _eqn(scan_p, list(res_consts.values()) + operands[:n_lead] + list(res_xs.values()) + operands[n_lead:],
                       dict(p, body=unknown_body, num_consts=len(res_consts) + len(u_consts), num_carry=len(u_carry)),
                       [v for v, u in zip(eqn.outvars, out_unknown) if u])
    return hoisted + ([known_eqn] if known_eqn else []), unknown_eqn


def _scan_transpose(cts, *args, body, length, reverse, num_consts, num_carry):
    """A scan in the other direction over the transposed body: the carry is the cotangent of the carry plus
    accumulators for the cotangents of the linear consts; the xs are the residual xs and the cotangents of
    the ys; the ys are the cotangents of the linear xs. Every carry is linear."""
    nc, nk = num_consts, num_carry
    consts, carry, xs = _split(args, [nc, nk])
    const_lin = [isinstance(x, UndefinedPrimal) for x in consts]
    xs_lin = [isinstance(x, UndefinedPrimal) for x in xs]
    ct_carry, ct_ys = cts[:nk], cts[nk:]
    ys_ct = [not isinstance(c, Zero) for c in ct_ys]
    body_t = _transposed(body, const_lin + [True] * nk + xs_lin, [True] * nk + ys_ct)
    res_consts = [x for x, lin in zip(consts, const_lin) if not lin]
    res_xs = [x for x, lin in zip(xs, xs_lin) if not lin]
    acc_avals = [x.aval.strip_weak() for x, lin in zip(consts, const_lin) if lin]
    n_rc, n_acc, n_rx = len(res_consts), len(acc_avals), len(res_xs)

    def step(*a):
        res_c, acc, ct_k, res_x, ct_y = _split(a, [n_rc, n_acc, nk, n_rx])
        outs = eval_ir(body_t, *res_c, *res_x, *ct_k, *ct_y)
        return [add_tangents(s, c) for s, c in zip(acc, outs[:n_acc])] + outs[n_acc:]

    carry_avals = [a.strip_weak() for a in body.in_avals[nc:nc + nk]]
    x_avals = [a for a, lin in zip(body.in_avals[nc + nk:], xs_lin) if not lin]
    ct_y_avals = [a.strip_weak() for a, h in zip(body.out_avals[nk:], ys_ct) if h]
    step_ir = trace_flat(step, [aval(x) for x in res_consts] + acc_avals + carry_avals + x_avals + ct_y_avals,
                         fun_name="transpose")
    (step_ir,), hoisted = _shared_consts([step_ir])
    outs = bind(scan_p, *hoisted, *res_consts, *[zeros(a) for a in acc_avals], *[instantiate(c) for c in ct_carry],
                *res_xs, *[c for c, h in zip(ct_ys, ys_ct) if h], body=step_ir, length=length,
                reverse=not reverse, num_consts=len(hoisted) + n_rc, num_carry=n_acc + nk)
    ct_consts, ct_init, ct_xs = (iter(part) for part in _split(outs, [n_acc, nk]))
    return ([next(ct_consts) if lin else None for lin in const_lin]
            + [c if isinstance(x, UndefinedPrimal) else None for x, c in zip(carry, ct_init)]
            + [next(ct_xs) if lin else None for lin in xs_lin])


scan_p.set(jvp=_scan_jvp, partial_eval=_scan_partial_eval, transpose=_scan_transpose)

# ------------------------------------------------------------------------- pruning dead outputs (DCE)
# prune(eqn, live) -> an equation computing only what is needed, or None. Outputs that are not live go
# (scan: only ys; a dead carry still feeds the next iteration), and so do operands no body reads.


def _prune_bodies(bodies, keep_out, removable):
    """The bodies with only the kept outputs, and which inputs (of the removable ones) any body still reads."""
    from ..passes.dce import dce
    pruned = [dce(ClosedIR(IR([], b.ir.invars, b.ir.eqns, [v for v, k in zip(b.ir.outvars, keep_out) if k]), []))
              for b in bodies]
    used = [set(p.ir.outvars) | {x for e in p.ir.eqns for x in e.inputs} for p in pruned]
    keep_in = [not r or any(b.ir.invars[i] in u for b, u in zip(bodies, used)) for i, r in enumerate(removable)]
    return [ClosedIR(IR([], [v for v, k in zip(p.ir.invars, keep_in) if k], p.ir.eqns, p.ir.outvars), [])
            for p in pruned], keep_in


def _pruned_eqn(eqn, keep_in, keep_out, params):
    from ..core.ir import Eqn
    return Eqn(eqn.prim, [x for x, k in zip(eqn.inputs, keep_in) if k], params,
               [v for v, k in zip(eqn.outvars, keep_out) if k])


def _cond_prune(eqn, live):
    branches = eqn.params["branches"]
    bodies, keep_ops = _prune_bodies(branches, live, [True] * len(branches[0].in_avals))
    if all(live) and all(keep_ops):
        return None
    return _pruned_eqn(eqn, [True] + keep_ops, live, {**eqn.params, "branches": tuple(bodies)})


def _scan_prune(eqn, live):
    p = eqn.params
    nc, ncarry = p["num_consts"], p["num_carry"]
    keep_out = [True] * ncarry + list(live[ncarry:])
    removable = [True] * nc + [False] * ncarry + [True] * (len(eqn.inputs) - nc - ncarry)
    (body,), keep_in = _prune_bodies([p["body"]], keep_out, removable)
    if all(keep_out) and all(keep_in):
        return None
    return _pruned_eqn(eqn, keep_in, keep_out, {**p, "body": body, "num_consts": sum(keep_in[:nc])})


cond_p.set(prune=_cond_prune)
scan_p.set(prune=_scan_prune)
