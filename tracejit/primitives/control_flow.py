"""What cond, while and scan share: type checks of their sub-IRs and the bookkeeping of their derivative,
batching and pruning rules (which operands carry tangents, which carries are batched, which inputs a body
reads). Each of them is one module:

    cond[branches]                                  index *operands             -> outs of the chosen branch
    while[body cond body_nconsts cond_nconsts]      *cond_consts *body_consts *carry -> carry
    scan[body length reverse num_consts num_carry]  *consts *carry *xs          -> *carry *ys

Their bodies are sub-IRs (ClosedIRs with no constants: closed-over values are hoisted into explicit operands),
so every transform sees them as ordinary inputs. They sit above the transforms, which they apply to their
bodies.
"""
import math

import numpy as np

from ..core.ad_util import Zero, aval, instantiate, is_inexact_aval
from ..core.ir import IR, ClosedIR, Eqn, Var, effectful, sub_irs
from ..core.ir_surgery import reorder
from ..passes.dce import dce
from ..transforms.ad import transpose_ir
from ..transforms.vmap import vmap_ir


def same_types(avals, expected):
    return len(avals) == len(expected) and all(
        (a.shape, a.dtype) == (b.shape, b.dtype) for a, b in zip(avals, expected))


def types_text(avals):
    return ", ".join(a.str_short() for a in avals)

# --------------------------------------------------------------------------- helpers of the autodiff rules


def nonzeros(primals, tangents):
    """Which inputs carry a tangent: float values whose tangent is not a symbolic Zero."""
    return [not isinstance(t, Zero) and is_inexact_aval(aval(p)) for p, t in zip(primals, tangents)]


def given(tangents, which):
    """The tangents where `which` (nonzeros(...)) holds, as arrays."""
    return [instantiate(t) for t, nz in zip(tangents, which) if nz]


def fill(values, which, like):
    """One tangent per value of `like`: the next of `values` where `which` holds, a symbolic Zero elsewhere."""
    values = iter(values)
    return [next(values) if nz else Zero(aval(x)) for x, nz in zip(like, which)]


def split(xs, sizes):
    out, start = [], 0
    for n in sizes:
        out.append(list(xs[start:start + n]))
        start += n
    return out + [list(xs[start:])]


def blocks(sizes, order):
    """Indices that reorder consecutive blocks of the given sizes into the block order `order`."""
    starts = np.cumsum([0, *sizes])
    return [i for b in order for i in range(starts[b], starts[b + 1])]


def grow(flags, step):
    """The smallest superset of the carry flags that `step` (carry flags -> body output flags, carries first)
    maps into itself: which carries get a tangent (or are unknown) on some iteration."""
    while True:
        grown = [a or b for a, b in zip(flags, step(flags))]
        if grown == flags:
            return flags
        flags = grown


def transposed(closed, linear, has_cotangent):
    """transpose_ir of closed with the inputs where `linear` as the linear ones (the others are residuals):
    (residual inputs..., cotangents where has_cotangent...) -> cotangents of the linear inputs."""
    order = [i for i, lin in enumerate(linear) if not lin] + [i for i, lin in enumerate(linear) if lin]
    return transpose_ir(reorder(closed, order), linear.count(False), has_cotangent)


def constant_free(closed):
    assert not closed.consts, "partial evaluation of a body that closes over constants"
    return closed


def eqn_or_none(prim, inputs, params, outvars):
    """The equation, unless it has no outputs and no effect."""
    eqn = Eqn(prim, inputs, params, outvars)
    return eqn if outvars or effectful(eqn) else None

# ------------------------------------------------------------------------------- helpers of batching


def batch_size(args, dims):
    return next(aval(x).shape[d] for x, d in zip(args, dims) if d is not None)


def batched_carries(body, const_dims, carry_dims, rest_dims, size):
    """The smallest set of batched carries (at axis 0) that the batched body maps to itself."""
    dims = [None if d is None else 0 for d in carry_dims]
    while True:
        out = vmap_ir(body, list(const_dims) + dims + list(rest_dims), size)[1][:len(dims)]
        grown = [0 if d is not None or o is not None else None for d, o in zip(dims, out)]
        if grown == dims:
            return dims
        dims = grown


def unbatched_work(closed, batched):
    """Elements computed per run of closed by its equations that read no batched input (an equation with
    sub-IRs: unbounded), which a batched loop run over blocks of examples repeats for each block."""
    seen = {v for v, b in zip(closed.ir.invars, batched) if b}
    work = 0
    for e in closed.ir.eqns:
        if any(x in seen for x in e.inputs if isinstance(x, Var)):
            seen.update(e.outvars)
        elif next(sub_irs(e), None) is not None:
            return math.inf
        else:
            sizes = [math.prod(v.aval.shape) for v in e.outvars]
            work += sum(s if isinstance(s, int) else math.inf for s in sizes)
    return work

# ------------------------------------------------------------------------- pruning dead outputs (DCE)
# prune(eqn, live) -> an equation computing only what is needed, or None. Outputs that are not live go
# (scan: only ys; a dead carry still feeds the next iteration), and so do operands no body reads.


def prune_bodies(bodies, keep_out, removable):
    """The bodies with only the kept outputs, and which inputs (of the removable ones) any body still reads."""
    pruned = [dce(ClosedIR(IR([], b.ir.invars, b.ir.eqns, [v for v, k in zip(b.ir.outvars, keep_out) if k]), []))
              for b in bodies]
    used = [set(p.ir.outvars) | {x for e in p.ir.eqns for x in e.inputs} for p in pruned]
    keep_in = [not r or any(b.ir.invars[i] in u for b, u in zip(bodies, used)) for i, r in enumerate(removable)]
    return [ClosedIR(IR([], [v for v, k in zip(p.ir.invars, keep_in) if k], p.ir.eqns, p.ir.outvars), [])
            for p in pruned], keep_in


def pruned_eqn(eqn, keep_in, keep_out, params):
    return eqn.replace(inputs=[x for x, k in zip(eqn.inputs, keep_in) if k], params=params,
                       outvars=[v for v, k in zip(eqn.outvars, keep_out) if k])
