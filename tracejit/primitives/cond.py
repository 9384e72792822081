"""cond: run one of several branches (sub-IRs) on the operands, picked by an index clamped into range."""
import numpy as np

from ..backend.rules import Control
from ..core.ad_util import UndefinedPrimal, Zero, aval, zeros
from ..core.ir import Var
from ..core.ir_surgery import shared_consts, widen_inputs
from ..core.ops import ops
from ..core.trace import Primitive, bind, eval_ir, trace_flat
from ..transforms.ad import jvp_ir_nonzeros
from ..transforms.partial_eval import partial_eval_ir
from ..transforms.vmap import vmap_ir
from . import control_flow as cf


def _cond_shape(index, *operands, branches):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond: the branch index must be an i32[] scalar, got {index.str_short()}")
    for k, branch in enumerate(branches):
        if not cf.same_types(branch.in_avals, operands):
            raise TypeError(f"cond: branch {k} takes ({cf.types_text(branch.in_avals)}), operands are "
                            f"({cf.types_text(operands)})")
        if not cf.same_types(branch.out_avals, branches[0].out_avals):
            raise TypeError(f"cond: branch {k} returns ({cf.types_text(branch.out_avals)}), branch 0 returns "
                            f"({cf.types_text(branches[0].out_avals)})")
    return [a.strip_weak() for a in branches[0].out_avals]


def _cond_impl(index, *operands, branches):
    return eval_ir(branches[int(np.clip(index, 0, len(branches) - 1))], *operands)


def _cond_lower(c, outs, ins, branches):
    """A switch whose case k runs branch k on the operands, writing the outputs."""
    index, *operands = ins
    for k in c.cases(index, len(branches)):
        c.call(branches[k], operands, outs)


def _cond_batch(args, dims, branches):
    """Unbatched index: one cond of the batched branches; an output is batched (at 0) if it is in any branch.
    Batched index: every branch runs on the whole batch and select_n picks each example's result."""
    (index, *operands), (index_dim, *operand_dims) = args, dims
    size = cf.batch_size(args, dims)
    if index_dim is None:
        natural = [vmap_ir(b, operand_dims, size)[1] for b in branches]
        out_dims = [0 if any(d is not None for d in ds) else None for ds in zip(*natural)]
        batched = tuple(vmap_ir(b, operand_dims, size, out_dims)[0] for b in branches)
        return bind(cond_p, index, *operands, branches=batched), out_dims
    index = ops.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    outs = [eval_ir(vmap_ir(b, operand_dims, size, [0] * len(b.out_avals))[0], *operands) for b in branches]
    picked = [ops.select_n(ops.broadcast_in_dim(index, shape=aval(cases[0]).shape, broadcast_dimensions=(0,)),
                           *cases) for cases in zip(*outs)]
    return picked, [0] * len(picked)


def _cond_jvp(primals, tangents, branches):
    """One cond of the jvp'd branches; only operands with tangents get them, and only output tangents that
    are nonzero in some branch are computed."""
    index, *operands = primals
    nz = cf.nonzeros(operands, tangents[1:])
    out_nz = [any(z) for z in zip(*[jvp_ir_nonzeros(b, nz, False)[1] for b in branches])]
    new, consts = shared_consts([jvp_ir_nonzeros(b, nz, out_nz)[0] for b in branches])
    outs = bind(cond_p, index, *consts, *operands, *cf.given(tangents[1:], nz), branches=tuple(new))
    n = len(branches[0].out_avals)
    return outs[:n], cf.fill(outs[n:], out_nz, outs[:n])


def _cond_partial_eval(eqn, unknowns):
    """Known cond: the known part of each branch, returning every branch's residuals (zeros for the other
    branches' slots). Unknown cond: the unknown part of each branch, reading its own residuals."""
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
        def padded(*xs, known=known, offset=offset, n_res=n_res):
            outs = eval_ir(known, *xs)
            return (outs[:n_known] + [zeros(a) for a in res_avals[:offset]] + outs[n_known:]
                    + [zeros(a) for a in res_avals[offset + n_res:]])
        known_branches.append(cf.constant_free(trace_flat(padded, known.in_avals, fun_name="branch")))
        unknown_branches.append(widen_inputs(cf.constant_free(unknown), res_avals, offset, n_res))
        offset += n_res
    index, operands = eqn.inputs[0], eqn.inputs[1:]
    res_vars = [Var(a) for a in res_avals]
    known_eqn = cf.eqn_or_none(cond_p, [index] + [x for x, u in zip(operands, ops_unknown) if not u],
                               {"branches": tuple(known_branches)},
                               [v for v, u in zip(eqn.outvars, out_unknown) if not u] + res_vars)
    unknown_eqn = cf.eqn_or_none(cond_p, [index] + res_vars + [x for x, u in zip(operands, ops_unknown) if u],
                                 {"branches": tuple(unknown_branches)},
                                 [v for v, u in zip(eqn.outvars, out_unknown) if u])
    return [known_eqn] if known_eqn else [], unknown_eqn


def _cond_transpose(cts, index, *operands, branches):
    """A cond of the transposed branches; the index and the residual operands are not linear."""
    linear = [isinstance(x, UndefinedPrimal) for x in operands]
    has_ct = [not isinstance(c, Zero) for c in cts]
    new, consts = shared_consts([cf.transposed(b, linear, has_ct) for b in branches])
    res = [x for x, lin in zip(operands, linear) if not lin]
    outs = iter(bind(cond_p, index, *consts, *res, *[c for c, h in zip(cts, has_ct) if h], branches=tuple(new)))
    return [None] + [next(outs) if lin else None for lin in linear]


def _cond_prune(eqn, live):
    branches = eqn.params["branches"]
    bodies, keep_ops = cf.prune_bodies(branches, live, [True] * len(branches[0].in_avals))
    if all(live) and all(keep_ops):
        return None
    return cf.pruned_eqn(eqn, [True] + keep_ops, live, {**eqn.params, "branches": tuple(bodies)})


cond_p = Primitive("cond", _cond_shape, _cond_impl, multiple_results=True, lower=Control(_cond_lower),
                   batch=_cond_batch, jvp=_cond_jvp, partial_eval=_cond_partial_eval, transpose=_cond_transpose,
                   prune=_cond_prune)
