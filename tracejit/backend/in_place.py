"""In-place carries: which outputs of a loop body may share their input's buffer, so that a carry is
updated where it lies instead of alternating between two buffers (half the memory a large elementwise
carry streams through per iteration, and no copy of a carry the body passes through unchanged).

In: a body's IR, its fusion groups (in execution order) and the candidate pairs {output index: input
index} (each carry's new value and old value). Out: the pairs that are safe; kernels.compile_sub_ir lays
out the body with each such output in its input's buffer (Frame's `aliases`) and ControlBuilder.carry_loop
keeps such a carry in its output buffer.

Output j may overwrite input i when nothing reads the old value after the write: output j is input i
itself (nothing is written), or it is stored by a loop nest that reads input i only at the element it
writes (every member depending on input i is elementwise over the domain, which is input i's shape) or by a
kernel that updates its operand input i where it lies (a scatter: x.at[i].set(v), O(1) per iteration, not a
copy of x), no
later group reads input i, input i is not also another output (that output, a copy the frame makes after
the groups run, would read the new value), and output j is the first of its repetitions (the frame copies
the others from it).
"""
from ..core.ir import Literal
from .rules import Elementwise, Reduce


def in_place_outputs(ir, groups, candidates):
    """{output index: input index}: the candidate pairs whose output can be written over its input."""
    outs = [None if isinstance(v, Literal) else id(v) for v in ir.outvars]
    writer = {id(v): k for k, g in enumerate(groups) for v in g.stores}
    safe = {}
    for j, i in candidates.items():
        x, v = ir.invars[i], ir.outvars[j]
        if isinstance(v, Literal) or outs.index(id(v)) < j or (v is not x and id(x) in outs):
            continue
        k = writer.get(id(v))
        if v is x or (k is not None and (_reads_elementwise(groups[k], x) or _overwrites(groups[k], x))
                      and not any(id(x) in map(id, g.reads) for g in groups[k + 1:])):
            safe[j] = i
    return safe


def _overwrites(g, x):
    """Whether group g is a kernel that may write its output over x, its operand `overwrites` (rules.Kernel),
    which it reads nowhere else (a scatter into x: x.at[i].set(v) in a loop body)."""
    i = getattr(g.rule, "overwrites", None)
    return (i is not None and not g.fusible and g.root.inputs[i] is x and len(g.root.outvars) == 1
            and sum(y is x for y in g.root.inputs) == 1)


def _reads_elementwise(g, x):
    """Whether group g's loop nest reads x only at the index it computes: it loops over x's shape and every
    member depending on x is elementwise, of x's shape."""
    if not g.fusible or isinstance(g.rule, Reduce) or tuple(g.domain) != tuple(x.aval.shape):
        return False
    derived = {id(x)}
    for e in g.eqns:
        if any(id(y) in derived for y in e.inputs):
            if not isinstance(e.prim.lower, Elementwise) or any(o.aval.shape != x.aval.shape for o in e.outvars):
                return False
            derived.update(id(o) for o in e.outvars)
    return True
