"""Fusion: which equations share a loop nest. In: an IR. Out: `Group`s in execution order (`plan_groups`).

Planning walks the equations backwards. An elementwise or index-map equation joins the group of its
consumers when they all sit in one fusible group (a loop nest) and it is not evaluated more often than it
has elements (a cheap index map may be, e.g. a broadcast); otherwise its value is materialised and it
roots a group of its own. A reduction roots a group whose loop nest runs over its operand, so its
producers are computed inside the reduction loop. Kernel rules (matmul, cumsum) and equations without a
lowering rule (run by their NumPy impl) read and write materialised buffers. Control rules (cond, while,
scan) are kernels that call their sub-IRs, each planned like a top-level IR (kernels.compile_sub_ir).

The cost model, its constants below: a loop body is estimated in instructions, a cheap equation (no math
call, no division) counting 2 and any other 50 (`equation_cost`); a loop nest holds at most FUSED_COST.
Where a heuristic needs a size, a symbolic dimension counts SIZE_HINT elements (`domain_size`).
"""
import math

from ..core.avals import HALF_FLOATS, Dim
from ..core.ir import Literal, effectful, sub_irs
from .rules import Control, Elementwise, IndexMap, Kernel, Reduce

FUSED_COST = 800          # what the equations of one loop nest may cost, so that its body still vectorizes
                          # (kernels.VECTORIZE_LIMIT: the vectorizer's time grows with the square of a body)
MAX_DUPLICATES = 4        # loop nests a cheap equation may be recomputed in
RECOMPUTE = 16            # times a cheap equation may be recomputed over a larger domain (a broadcast's)
SIZE_HINT = 1024          # what a symbolic dimension counts as where a heuristic needs a size


class Group:
    """Equations computed by one kernel. `root` is the last of them; `stores` the values it writes;
    `reads` the values it reads that other groups (or the caller) provide; `domain` the shape its loop
    nest runs over (fusible groups only), in `loop_order`."""

    def __init__(self, index, eqn):
        self.index, self.root = index, eqn
        rule = lowering(eqn)
        if isinstance(rule, Control) and not all(map(lowerable, sub_irs(eqn))):
            rule = None
        self.rule = rule
        self.fusible = isinstance(rule, (Elementwise, IndexMap, Reduce))
        self.stores = list(eqn.outvars)
        domain = (eqn.inputs[0] if isinstance(rule, Reduce) else eqn.outvars[0]).aval if self.fusible else None
        self.domain = domain.shape if self.fusible else None
        axes = eqn.params["axes"] if isinstance(rule, Reduce) else ()
        # A reduction that keeps the last axis (a column sum) loops in memory order and accumulates in its
        # output, so that the inner loop is contiguous and vectorizes; others keep the reduced axes inner (and
        # so do 16-bit floats, which accumulate in float32 and round once).
        self.in_place = (bool(axes) and rule.combine is not None and len(self.domain) - 1 not in axes
                         and eqn.outvars[0].aval.dtype not in HALF_FLOATS)
        self.loop_order = (list(range(len(self.domain))) if self.in_place else
                           [a for a in range(len(self.domain)) if a not in axes] + list(axes)
                           if self.fusible else [])
        self.eqns, self.reads = [eqn], None    # members (in program order once planned); values read
        self.cost = 2                           # of the members (equation_cost), the root counted as a cheap one

    @property
    def outer_extent(self):
        """The trip count of the outermost loop (1 for a kernel that is not a loop nest and cannot be split)."""
        if self.fusible:
            return self.domain[self.loop_order[0]] if self.domain else 1
        return self.rule.split(self.root)[0] if getattr(self.rule, "split", None) else 1


def lowering(eqn):
    """The equation's lowering rule; None where it has none, or where its Kernel rule is not `available` for it."""
    rule = eqn.prim.lower
    if isinstance(rule, Kernel) and rule.available is not None and not rule.available(eqn):
        return None
    return rule


def lowerable(ir):
    """Whether every equation of ir (and of its sub-IRs) has a lowering rule."""
    return all(lowering(e) is not None and all(map(lowerable, sub_irs(e))) for e in ir.eqns)


def domain_size(shape):
    """Elements of a loop domain, a symbolic dimension counting SIZE_HINT (a heuristic's estimate)."""
    return math.prod(SIZE_HINT if isinstance(d, Dim) else d for d in shape) if shape is not None else 0


def equation_cost(eqn):
    """A loop body's instructions for the equation, roughly (a math call expands to ~50)."""
    return 2 if eqn.prim.lower.cheap else 50


def _fits(eqn, g, is_output):
    """Whether the elementwise or index-map eqn can be computed inside the loop nest of group g."""
    v, rule = eqn.outvars[0], eqn.prim.lower
    size, domain = domain_size(v.aval.shape), domain_size(g.domain)
    return (g.fusible and g.cost + equation_cost(eqn) <= FUSED_COST and (not is_output or v.aval.shape == g.domain)
            and (size >= domain or isinstance(rule, IndexMap) or rule.cheap and size * RECOMPUTE >= domain))


def _reads(g):
    """Inputs of g's members that other groups (or the caller) provide, in order of first use."""
    produced = {id(v) for e in g.eqns for v in e.outvars}
    seen, reads = set(), []
    for e in g.eqns:
        for x in e.inputs:
            if not isinstance(x, Literal) and id(x) not in seen and id(x) not in produced:
                seen.add(id(x))
                reads.append(x)
    return reads


def plan_groups(ir, fuse=True):
    """Groups in execution order, dead equations dropped. fuse=False gives every equation its own.

    An elementwise or index-map equation joins the group of its consumers, so that its value is computed
    where it is used and never stored: the one consumer group; or, when it is cheap (no math call, no
    division) and not an output, each of up to MAX_DUPLICATES consumer groups, recomputed in each. Index
    maps, and cheap equations up to RECOMPUTE times, may also be recomputed over a larger domain (a
    broadcast's). Otherwise, when the first of several consumer groups loops over exactly its shape, it joins
    that one and is stored from there for the others (fewer kernels to compile, one pass less over memory)."""
    outputs = {id(v) for v in ir.outvars if not isinstance(v, Literal)}
    consumers = {}
    for eqn in ir.eqns:
        for x in eqn.inputs:
            if not isinstance(x, Literal):
                consumers.setdefault(id(x), []).append(eqn)
    groups_of, groups = {}, []
    order = {id(e): i for i, e in enumerate(ir.eqns)}
    for eqn in reversed(ir.eqns):
        users = list(dict.fromkeys(g for v in eqn.outvars for c in consumers.get(id(v), ())
                                   for g in groups_of.get(id(c), ())))
        live = users or any(id(v) in outputs for v in eqn.outvars) or effectful(eqn)
        if not live:
            continue
        rule = eqn.prim.lower
        if fuse and isinstance(rule, (Elementwise, IndexMap)) and not eqn.prim.multiple_results:
            v = eqn.outvars[0]
            first = min(users, key=lambda g: order[id(g.root)], default=None)
            fits = [_fits(eqn, g, id(v) in outputs) for g in users]
            if len(users) == 1 and fits[0] or (
                    1 < len(users) <= MAX_DUPLICATES and rule.cheap and id(v) not in outputs and all(fits)):
                groups_of[id(eqn)] = users
                for g in users:
                    g.eqns.append(eqn)
                    g.cost += equation_cost(eqn)
                if id(v) in outputs:
                    first.stores.append(v)
                continue
            if (len(users) > 1 and first.fusible and first.domain == v.aval.shape
                    and first.cost + equation_cost(eqn) <= FUSED_COST):
                groups_of[id(eqn)] = [first]
                first.eqns.append(eqn)
                first.cost += equation_cost(eqn)
                first.stores.append(v)
                continue
        g = Group(len(groups), eqn)
        groups.append(g)
        groups_of[id(eqn)] = [g]
    groups.sort(key=lambda g: order[id(g.root)])
    for g in groups:
        g.eqns.reverse()
        g.reads = _reads(g)
    return groups
