"""Control-flow primitives: cond, while and scan. Their bodies are sub-IRs (ClosedIRs with no constants:
closed-over values are hoisted into explicit operands), so every transform sees them as ordinary inputs.

    cond[branches]                      index *operands              -> outs of the chosen branch
    while[body cond body_nconsts cond_nconsts]  *cond_consts *body_consts *carry -> carry
    scan[body length reverse num_consts num_carry]  *consts *carry *xs  -> *carry *ys
"""
import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import ShapeError
from ..core.ir import IR, ClosedIR
from ..core.trace import Primitive, bind, eval_ir, trace_flat
from .base import aval, move_batch_axis


def hoist_consts(closed):
    """A ClosedIR whose constants become leading inputs; returns it and the constant values."""
    ir = closed.ir
    return ClosedIR(IR([], ir.constvars + ir.invars, ir.eqns, ir.outvars), []), list(closed.consts)


def _same_types(avals, expected):
    return len(avals) == len(expected) and all(
        (a.shape, a.dtype) == (b.shape, b.dtype) for a, b in zip(avals, expected))


def _types(avals):
    return ", ".join(a.str_short() for a in avals)

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


cond_p = Primitive("cond", _cond_shape, _cond_impl, multiple_results=True)


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


while_p = Primitive("while", _while_shape, _while_impl, multiple_results=True)


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


scan_p = Primitive("scan", _scan_shape, _scan_impl, multiple_results=True)


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
