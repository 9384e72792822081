"""checkpoint (remat): a call whose intermediate values reverse mode recomputes instead of storing; and `name`,
the identity that names a value for checkpoint policies. The user-facing side is tracejit/ad_checkpoint.py.

    checkpoint[call policy prevent_cse differentiated]  *operands -> outs of call

`call` is a constant-free ClosedIR (closed-over values are leading operands). Evaluating the equation
evaluates `call`. Its jvp is a checkpoint of the jvp'd call, so the primal and tangent computations stay in
one block. Reverse mode splits that block (`_checkpoint_partial_eval`): the forward side computes the
outputs and saves as residuals only the block's inputs and the values the policy calls saveable; the
linear side, a checkpoint with differentiated=True, recomputes everything else from those before its
tangent work, and its transpose does the same before running the cotangents backwards. So the forward pass
stores inputs, not intermediates, and the backward pass repeats the forward work of each block when it
reaches it.

`policy(prim, *input avals, **params) -> bool` says which equations' outputs may be saved (None: nothing).
Under jit, a recomputation (differentiated=True) with prevent_cse stays a call while the passes run, so CSE
cannot merge it back into the forward pass; lowering inlines it (passes/inline.py).
"""
from ..backend.rules import Elementwise
from ..core.ad_util import UndefinedPrimal, Zero
from ..core.ir import IR, ClosedIR, Var
from ..core.ir_surgery import hoist_consts
from ..core.trace import Primitive, bind, eval_ir
from ..transforms.ad import jvp_ir_nonzeros
from ..transforms.partial_eval import partial_eval_ir
from ..transforms.vmap import vmap_ir
from . import control_flow as cf


def _checkpoint_shape(*avals, call, policy, prevent_cse, differentiated):
    if not cf.same_types(call.in_avals, avals):
        raise TypeError(f"checkpoint: the function takes ({cf.types_text(call.in_avals)}), operands are "
                        f"({cf.types_text(avals)})")
    return [a.strip_weak() for a in call.out_avals]


def _checkpoint_impl(*args, call, **params):
    return eval_ir(call, *args)


def _bind_call(call, args, params):
    """A checkpoint equation of the IR `call` (its constants hoisted into leading operands)."""
    call, consts = hoist_consts(call)
    return bind(checkpoint_p, *consts, *args, **dict(params, call=call))


def _checkpoint_jvp(primals, tangents, call, **params):
    nz = cf.nonzeros(primals, tangents)
    body, out_nz = jvp_ir_nonzeros(call, nz, False)
    outs = _bind_call(body, [*primals, *cf.given(tangents, nz)], params)
    n = len(call.out_avals)
    return outs[:n], cf.fill(outs[n:], out_nz, outs[:n])


def _recompute(policy):
    """The partial_eval_ir predicate of a policy: equations whose outputs are not saveable."""
    if policy is None:
        return lambda eqn: True
    return lambda eqn: not policy(eqn.prim, *[x.aval for x in eqn.inputs], **eqn.params)


def _checkpoint_partial_eval(eqn, unknowns):
    """Known side: a checkpoint computing the known outputs and the residuals the policy saves. Unknown side:
    a checkpoint (differentiated) reading those residuals and the block's inputs, recomputing the rest."""
    p = eqn.params
    call = p["call"]
    known, unknown, out_unknowns, _ = partial_eval_ir(call, unknowns, [False] * len(eqn.outvars),
                                                          _recompute(p["policy"]))
    n_known = out_unknowns.count(False)
    # A residual that is an input of the block is that operand itself; the others are outputs of the known side.
    operand_of = dict(zip(call.ir.invars, eqn.inputs))
    res_outs = known.ir.outvars[n_known:]
    residuals = [operand_of.get(r) or Var(r.aval) for r in res_outs]
    computed = [(r, v) for r, v in zip(res_outs, residuals) if r not in operand_of]
    ir = known.ir
    known_call = ClosedIR(IR([], ir.invars, ir.eqns, ir.outvars[:n_known] + [r for r, _ in computed]), [])
    known_outs = [v for v, u in zip(eqn.outvars, out_unknowns) if not u] + [v for _, v in computed]
    known_eqn = cf.eqn_or_none(checkpoint_p, [x for x, u in zip(eqn.inputs, unknowns) if not u],
                               dict(p, call=known_call, differentiated=False), known_outs)
    unknown_eqn = cf.eqn_or_none(checkpoint_p, residuals + [x for x, u in zip(eqn.inputs, unknowns) if u],
                                 dict(p, call=unknown, differentiated=True),
                                 [v for v, u in zip(eqn.outvars, out_unknowns) if u])
    return [known_eqn] if known_eqn else [], unknown_eqn


def _checkpoint_transpose(cts, *args, call, **params):
    """A checkpoint of the transposed call: it recomputes the non-linear values from the residual operands,
    then runs the cotangents backwards."""
    linear = [isinstance(x, UndefinedPrimal) for x in args]
    has_ct = [not isinstance(c, Zero) for c in cts]
    residuals = [x for x, lin in zip(args, linear) if not lin]
    outs = iter(_bind_call(cf.transposed(call, linear, has_ct), [*residuals, *[c for c, h in zip(cts, has_ct) if h]],
                           dict(params, differentiated=True)))
    return [next(outs) if lin else None for lin in linear]


def _checkpoint_batch(args, dims, call, **params):
    body, out_dims = vmap_ir(call, dims, cf.batch_size(args, dims))
    return _bind_call(body, args, params), out_dims


def _checkpoint_prune(eqn, live):
    (body,), keep_in = cf.prune_bodies([eqn.params["call"]], live, [True] * len(eqn.inputs))
    if all(live) and all(keep_in):
        return None
    return cf.pruned_eqn(eqn, keep_in, live, {**eqn.params, "call": body})


def _inline_before_lowering(eqn):
    """Whether the passes may inline this checkpoint: not a recomputation that must stay apart from CSE."""
    return not (eqn.params["differentiated"] and eqn.params["prevent_cse"])


checkpoint_p = Primitive("checkpoint", _checkpoint_shape, _checkpoint_impl, multiple_results=True,
                         jvp=_checkpoint_jvp, partial_eval=_checkpoint_partial_eval,
                         transpose=_checkpoint_transpose, batch=_checkpoint_batch, prune=_checkpoint_prune,
                         inline=_inline_before_lowering)

# ------------------------------------------------------------------------------------------------- name


def _name_jvp(primals, tangents, name):
    (x,), (t,) = primals, tangents
    return bind(name_p, x, name=name), t       # the tangent is not named, as in JAX


name_p = Primitive("name", lambda x, name: x, lambda x, name: x, jvp=_name_jvp,
                   batch=lambda args, dims, name: (bind(name_p, args[0], name=name), dims[0]),
                   simplify=lambda eqn, producer: eqn.inputs[0], lower=Elementwise(lambda b, x, name: x))

__all__ = ["checkpoint_p", "name_p"]
