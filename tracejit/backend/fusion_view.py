"""The fusion plan as graph views draw it (Lowered.to_dot, to_mermaid): the IR that lowering compiles, and
one (title, equations) group per kernel for core.dag's `groups` hook: a fused loop nest, a reduction loop,
a kernel (saying whether a matrix product runs through the BLAS), a control-flow call, whose sub-IRs' groups
follow it, or an equation the Python driver runs with NumPy."""
from ..core.ir import sub_irs
from ..passes.inline import inline
from .fusion import plan_groups
from .rules import Control, Kernel, Reduce


def lowered_view(closed, fuse=True):
    """(the ClosedIR that compile_ir lowers, its groups and those of its sub-IRs as (title, equations))."""
    closed = inline(closed, final=True)
    return closed, fusion_groups(closed.ir, fuse)


def fusion_groups(ir, fuse=True):
    groups = []
    for k, g in enumerate(plan_groups(ir, fuse)):
        groups.append((group_title(g, k), g.eqns))
        if isinstance(g.rule, Control):
            for sub in sub_irs(g.root):
                groups.extend(fusion_groups(sub, fuse))
    return groups


def group_title(g, k):
    """The cluster title of group g, the k-th to run."""
    name = g.root.prim.name
    if g.rule is None:
        return f"Python driver {k}: {name} by NumPy"
    if isinstance(g.rule, Control):
        return f"control {k}: {name}, its sub-IRs compiled as functions"
    if isinstance(g.rule, Kernel):
        how = g.rule.describe(g.root) if g.rule.describe else "kernel"
        return f"kernel {k}: {name} by {how}"
    domain = "[" + ",".join(map(str, g.domain)) + "]"
    if g.phases:
        return f"row loop {k}: {len(g.eqns)} ops in {len(g.phases)} loops per row of {domain}"
    kind = "reduction loop" if isinstance(g.rule, Reduce) else "fused loop"
    return f"{kind} {k}: {len(g.eqns)} op{'s' if len(g.eqns) > 1 else ''} over {domain}"
