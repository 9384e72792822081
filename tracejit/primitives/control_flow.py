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
from ..core.trace import Primitive, eval_ir


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
