"""Fusion: which equations share a loop nest. In: an IR. Out: `Group`s in execution order (`plan_groups`).

Planning walks the equations backwards. An elementwise or index-map equation joins the group of its
consumers when they all sit in one fusible group (a loop nest) and it is not evaluated more often than it
has elements (a cheap index map may be, e.g. a broadcast); otherwise its value is materialised and it
roots a group of its own. A reduction roots a group whose loop nest runs over its operand, so its
producers are computed inside the reduction loop. Kernel rules (matmul, cumsum) and equations without a
lowering rule (run by their NumPy impl) read and write materialised buffers. Control rules (cond, while,
scan) are kernels that call their sub-IRs, each planned like a top-level IR (kernels.compile_sub_ir).
A reduction over trailing axes and the groups after it that work on the same rows then run as phases of one
loop over the rows (`merge_rows`, `RowLoop`: softmax in one kernel, each row read again from L1).

The cost model, the one the loop builders and the vectorizer share (kernels.py reads it here): a loop body
is estimated in instructions (`equation_cost`), a cheap equation (no math call, no division) counting
CHEAP_COST, a call of the vector math library (vecmath.py: exp, log, sin, tanh, pow, ...) or another costly
instruction (a division) CALL_COST, and a math function whose body is inlined (erf_inv, lgamma, digamma, the
incomplete gamma and beta functions, any complex function) INLINE_COST. A loop nest holds at most FUSED_COST, so
that LLVM's time on it stays small (its time grows faster than a body of cheap instructions does: a 3000-op arithmetic chain over 1000 f32 took
0.97 s of LLVM CPU in nests of 800, 1.34 s in nests of 3200), yet no smaller than need be (each vectorized
nest costs LLVM ~4 ms besides its instructions); within that every loop nest that is long enough is vectorized (kernels.py),
and a longer chain is cut into several nests. For run time (whether a small loop's work pays for vectorizing
it, kernels.py) any math call counts INLINE_COST: a scalar call takes about a body's time.
Where a heuristic needs a size, a symbolic dimension counts SIZE_HINT elements (`domain_size`).
"""
import math

from ..core.avals import HALF_FLOATS, Dim
from ..core.ir import Literal, effectful, sub_irs
from .axis_maps import axis_maps, input_map
from .libcalls import LIBRARY
from .loop_axes import collapse_axes, transposed_read
from .rules import Control, Elementwise, IndexMap, Kernel, Reduce

FUSED_COST = 800          # what the equations of one loop nest may cost
CHEAP_COST = 2
CALL_COST = 2             # one instruction to LLVM as to a cheap one: LLVM's time on a chain of library calls
                          # is ~4 ms of CPU per loop nest besides its instructions' (8 here cut the 1000-op sin
                          # chain into 8 nests, 93 ms of LLVM CPU; 2: 4 nests, 76 ms; 1 nest: 63 ms)
INLINE_COST = 100         # an inlined math function's body
MAX_DUPLICATES = 4        # loop nests a cheap equation may be recomputed in
MAX_EVALUATIONS = 16      # times one loop body may evaluate an equation, at different indices (`_evaluations`)
RECOMPUTE = 16            # times a cheap equation may be recomputed over a larger domain (a broadcast's)
SIZE_HINT = 1024          # what a symbolic dimension counts as where a heuristic needs a size
MIN_LIBRARY_LOOP = 4      # a static innermost loop calling the vector math library vectorizes from this many
                          # elements: one call of a vector as wide as the loop (an RNN step's tanh over 8 f32: one
                          # 8-lane call instead of 8 scalar ones); shorter ones stay scalar (kernels.py)


class Group:
    """Equations computed by one kernel. `root` is the last of them; `stores` the values it writes;
    `reads` the values it reads that other groups (or the caller) provide; `domain` the shape its loop
    nest runs over (fusible groups only), in `loop_order`; `extents` the trip count of each axis's loop,
    None where the axis is merged into a later one (its index is 0, see `collapse_axes`)."""

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
        self.extents = self.domain              # the loop nest's trip counts per domain axis (`collapse_axes`)
        self.tiled = None                       # the axis tiled with the last one (`transposed_read`)
        self.unrolled = ()                      # short inner axes written out in the loop body (`unrolled_axes`)
        self.cost = CHEAP_COST                  # of the members (equation_cost), the root counted as a cheap one
        self.phases, self.depth = None, 1       # a row loop's groups and outer axes (`merge_rows`)
        self.row_values = []                    # and its values kept one row at a time (`RowLoop`)
        self.overwrites = {}                    # and the values it may store over one it reads
        self.views = {}                         # id(value) -> the output var whose buffer it is stored in (`_views`)

    @property
    def outer_extent(self):
        """The trip count of the outermost loop (1 for a kernel that is not a loop nest and cannot be split): of
        the first axis in loop order that keeps its loop (`collapse_axes`)."""
        if self.fusible:
            return next((self.extents[a] for a in self.loop_order if self.extents[a] is not None), 1)
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


def cheap(eqn):
    """Whether the equation is a cheap one (no math call, no division): its rule says so, or it divides by a
    literal power of two (a multiplication, exact: attention's scores / 8, which recomputing beats storing)."""
    if eqn.prim.lower.cheap:
        return True
    y = eqn.inputs[-1]
    if eqn.prim.name != "div" or not isinstance(y, Literal) or y.aval.dtype.kind != "f" or y.aval.ndim:
        return False
    mantissa, _ = math.frexp(abs(float(y.value)))
    return mantissa == 0.5 and eqn.outvars[0].aval.dtype.kind == "f"


def equation_cost(eqn):
    """A loop body's instructions for the equation, roughly (see the module's docstring)."""
    rule = eqn.prim.lower
    if cheap(eqn):
        return CHEAP_COST
    calls = getattr(rule, "calls", None)
    complex_valued = any(v.aval.dtype.kind == "c" for v in eqn.outvars)
    return INLINE_COST if complex_valued or (calls is not None and calls not in LIBRARY) else CALL_COST


def _fits(eqn, cost, g, is_output):
    """Whether the elementwise or index-map eqn (of equation_cost `cost`) can be computed inside the loop nest
    of group g."""
    if not g.fusible or g.cost + cost > FUSED_COST:
        return False
    shape, rule = eqn.outvars[0].aval.shape, eqn.prim.lower
    if shape == g.domain:
        return True
    size, domain = domain_size(shape), domain_size(g.domain)
    return not is_output and (size >= domain or isinstance(rule, IndexMap) or cheap(eqn) and size * RECOMPUTE >= domain)


def _views(eqn, g, outputs):
    """Whether eqn's own group is to store its value straight into the output that group g computes from it:
    "reshape" where g is an output's reshape (IndexMap's same_order) of it and nothing else, which is then dropped:
    the value is stored in the same C order, over its own shape (fused into the reshape, over the output's shape,
    each element's index was taken apart again: tile and kron took 3x NumPy's time); "overwritten" where g is a
    kernel that may write its output over it (rules.Kernel overwrites: a scatter into zeros, bincount), which then
    updates it in place instead of copying it to the output first."""
    root, v = g.root, eqn.outvars[0]
    if (not root.outvars or id(root.outvars[0]) not in outputs or id(v) in outputs or eqn.prim.multiple_results
            or not isinstance(eqn.prim.lower, (Elementwise, IndexMap))
            or any(isinstance(d, Dim) for d in (*v.aval.shape, *root.outvars[0].aval.shape))):
        return None
    if getattr(root.prim.lower, "same_order", False) and g.eqns == [root] and root.inputs[0] is v:
        return "reshape"
    over = getattr(g.rule, "overwrites", None)
    if over is not None and root.inputs[over] is v and sum(x is v for x in root.inputs) == 1:
        return "overwritten"
    return None


def _evaluations(eqn, g, consumers, evals):
    """How often group g's loop body evaluates eqn's value, at most, were eqn to join it: once for all members that
    read it at their own index (elementwise: memoised), once per read by an index map (a roll reads at two places).
    Nested rolls multiply these: 6 steps of a 2-d Jacobi stencil took 29 s to compile, uncapped."""
    out, same, moved = eqn.outvars[0], 0, 0
    for c in consumers.get(id(out), ()):
        k = evals.get((id(c), id(g)))
        if k is not None:
            if isinstance(c.prim.lower, Elementwise):
                same = max(same, k)
            else:
                moved += k * sum(x is out for x in c.inputs)
    return same + moved


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


def plan_groups(ir, fuse=True, views=False):
    """Groups in execution order, dead equations dropped. fuse=False gives every equation its own; views=True
    lets a group store a value straight into the output that is a reshape of it or a kernel's update of it
    (`_views`; the caller's Frame
    then writes no output over an input).

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
    evals = {}      # (id(eqn), id(group)) -> how often the group's loop body evaluates eqn (`_evaluations`)
    dropped = set()  # id of the reshapes' groups whose copies `_views` made unnecessary

    def fits(eqn, cost, g, is_output):
        return _fits(eqn, cost, g, is_output) and _evaluations(eqn, g, consumers, evals) <= MAX_EVALUATIONS

    def join(eqn, g):
        evals[(id(eqn), id(g))] = _evaluations(eqn, g, consumers, evals)
        g.eqns.append(eqn)

    for eqn in reversed(ir.eqns):
        users = []      # the groups of its consumers, in order of first use
        for v in eqn.outvars:
            for c in consumers.get(id(v), ()):
                users += [g for g in groups_of.get(id(c), ()) if g not in users]
        live = users or any(id(v) in outputs for v in eqn.outvars) or effectful(eqn)
        if not live:
            continue
        rule = eqn.prim.lower
        viewed = views and fuse and len(users) == 1 and _views(eqn, users[0], outputs)
        if viewed == "reshape":
            dropped.add(id(users[0]))
        elif fuse and isinstance(rule, (Elementwise, IndexMap)) and not eqn.prim.multiple_results:
            v, cost = eqn.outvars[0], equation_cost(eqn)
            is_output = id(v) in outputs
            transposing = _transposes_into_reduction(eqn, users)      # then stored, in tiles
            if not transposing and (len(users) == 1 and fits(eqn, cost, users[0], is_output) or (
                    1 < len(users) <= MAX_DUPLICATES and cheap(eqn) and not is_output
                    and all(fits(eqn, cost, g, False) for g in users))):
                groups_of[id(eqn)] = users
                for g in users:
                    join(eqn, g)
                    g.cost += cost
                if is_output:
                    users[0].stores.append(v)
                continue
            first = min(users, key=lambda g: order[id(g.root)], default=None)
            if not transposing and len(users) > 1 and first.fusible and first.domain == v.aval.shape \
                    and first.cost + cost <= FUSED_COST and _evaluations(eqn, first, consumers, evals) <= MAX_EVALUATIONS:
                groups_of[id(eqn)] = [first]
                join(eqn, first)
                first.cost += cost
                first.stores.append(v)
                continue
        g = Group(len(groups), eqn)
        if viewed:
            g.views[id(eqn.outvars[0])] = users[0].root.outvars[0]
        groups.append(g)
        groups_of[id(eqn)] = [g]
        evals[(id(eqn), id(g))] = 1
    groups = [g for g in groups if id(g) not in dropped]
    groups.sort(key=lambda g: order[id(g.root)])
    for g in groups:
        g.eqns.reverse()
        g.reads = _reads(g)
    if fuse:
        groups = merge_rows(groups, outputs)
    for g in groups:
        for p in g.phases or [g]:
            if p.fusible and not isinstance(p.rule, Reduce):
                p.extents = collapse_axes(p, g.depth if g.phases else 0)
        if g.fusible and not g.phases and not isinstance(g.rule, Reduce):
            g.tiled = transposed_read(g)
            g.unrolled = unrolled_axes(g) if g.tiled is None else ()
        elif g.fusible and not g.phases:
            g.unrolled = unrolled_reduction(g)
    return groups


TRANSPOSED_BYTES = 1 << 18    # a value read transposed by a reduction is copied in tiles from this size on


def _transposes_into_reduction(eqn, users):
    """Whether index map eqn reads a large value transposed (its last axis indexed by another axis of the output)
    for a reduction's loop nest: it is then materialised, in tiles (`transposed_read`), and the reduction reads the
    copy in memory order. Read transposed in the reduction's loop, softmax over the rows of a transposed 2048 x 2048
    f32 took 14 ms, against 1.3 in C order."""
    if not isinstance(eqn.prim.lower, IndexMap) or not eqn.inputs or isinstance(x := eqn.inputs[0], Literal) \
            or x.aval.ndim < 2 or domain_size(x.aval.shape) * x.aval.dtype.itemsize < TRANSPOSED_BYTES:
        return False
    ndim = eqn.outvars[0].aval.ndim
    m = input_map(eqn, x, tuple(range(ndim)))
    return m[-1] not in (None, ndim - 1) and any(isinstance(g.rule, Reduce) for g in users)


UNROLLED = 8    # elements of the short inner axes whose loops are written out (`unrolled_axes`)


def unrolled_axes(g):
    """The inner axes of elementwise group g, innermost last, whose loops are written out in the body of the loop
    around them: short axes (UNROLLED elements together) that `collapse_axes` could not merge, so that the loop
    over a longer axis is the innermost one and vectorizes. An innermost loop of 3 (the [n, 3] threefry nest of a
    vmapped split(key, 3)) kept the whole nest scalar: 4x slower."""
    looped = [a for a in g.loop_order if g.extents[a] is not None]
    axes, size = [], 1
    for a in reversed(looped[1:]):
        if not isinstance(g.extents[a], int) or size * g.extents[a] > UNROLLED:
            break
        axes.insert(0, a)
        size *= g.extents[a]
    # a vector call per row does better, where the row is long enough for one (else its loop stays scalar)
    calls = size >= MIN_LIBRARY_LOOP and any(getattr(e.prim.lower, "calls", None) for e in g.eqns)
    return tuple(axes) if axes and not calls and size * g.cost <= FUSED_COST else ()


def unrolled_reduction(g):
    """The short axes of reduction group g (UNROLLED elements together) that are written out in the body of the
    innermost loop so that it runs over a long axis and vectorizes: the reduced axes where they are innermost
    below a kept axis (the gray image of a 1024 x 1024 x 3 image, a sum over each pixel's channels: 2.1 ms scalar,
    NumPy 1.1), or the kept axes after the last reduced one of a reduction in memory order (a column sum of
    (n, 3) points)."""
    axes = g.root.params["axes"]
    if not axes or len(axes) == len(g.domain):
        return ()
    if g.in_place:
        short = tuple(range(max(axes) + 1, len(g.domain)))
    elif g.loop_order[-len(axes):] == list(axes):
        short = tuple(axes)
    else:
        return ()
    size = math.prod(g.domain[a] if isinstance(g.domain[a], int) else UNROLLED + 1 for a in short)
    return short if size <= UNROLLED and size * g.cost <= FUSED_COST else ()


# ----------------------------------------------------------------------------------------- row loops
ROW_MIN = 64              # elements of a row below which a reduction's consumers keep loop nests of their own
ROW_BYTES = 32 << 10      # a row loop's values kept on its stack, one row of each: at most this many bytes


def merge_rows(groups, outputs=()):
    """Groups with consecutive reductions over trailing axes and the loop nests after them that work on the
    same rows merged into row loops (`RowLoop`): softmax's max, exp-sum and division become three loops inside
    one loop over the rows, one kernel instead of three or four (LLVM's time), each row read again from L1.
    outputs: the ids of the IR's outputs (a row loop keeps no output in its rows' memory)."""
    merged, run = [], []

    def close():
        if len(run) > 1:
            inside = {id(p) for p in run}
            kept = set(outputs) | {id(x) for g in groups if id(g) not in inside for x in g.reads} | {
                k for p in run for k in p.views}       # (stored into an output: `_views`)
            merged.append(RowLoop(run, kept))
        else:
            merged.extend(run)

    for g in groups:
        if run and _joins(run, g):
            run.append(g)
            continue
        close()
        run = [g] if _row_reduction(g) else []
        if not run:
            merged.append(g)
    close()
    return merged


def _row_reduction(g):
    """How many outer axes a row loop led by g has (its kept axes, leading ones), or 0 where g leads none:
    a combinable reduction over trailing axes, static shapes, rows of ROW_MIN elements or more."""
    if not g.fusible or not isinstance(g.rule, Reduce) or g.rule.combine is None or g.in_place:
        return 0
    axes, shape = g.root.params["axes"], g.domain
    depth = len(shape) - len(axes)
    static = not any(isinstance(d, Dim) for d in shape)
    return depth if (depth and static and sorted(axes) == list(range(depth, len(shape)))
                     and math.prod(shape[depth:]) >= ROW_MIN) else 0


def _joins(run, g):
    """Whether group g can run as the next phase of the row loop `run`: it loops over the same rows (a
    reduction over the same axes, or a loop nest over a domain with the same outer axes) and reads what the
    run stores only in the row that it computes."""
    depth = _row_reduction(run[0])
    outer = run[0].domain[:depth]
    if not g.fusible or g.in_place or tuple(g.domain[:depth]) != tuple(outer):
        return False
    if isinstance(g.rule, Reduce) and _row_reduction(g) != depth:
        return False
    if any(isinstance(d, Dim) for d in g.domain):
        return False
    if len(g.domain) == depth and any(getattr(e.prim.lower, "calls", None) for e in g.eqns):
        return False    # one element a row: its math calls would run scalar (tanh(x @ v + b): 3x the time)
    return _reads_rows(g, {id(v) for p in run for v in p.stores}, depth)


def _reads_rows(g, values, depth):
    """Whether group g reads the values (ids) only in the row it computes (the leading `depth` axes)."""
    maps = axis_maps(g)
    return all(m[:depth] == tuple(range(depth)) for x in g.reads if id(x) in values
               for m in maps.get(id(x), {(None,) * depth}))


class RowLoop(Group):
    """Groups run as phases of one loop over the rows of their domains (`merge_rows`): for each index of the
    `depth` outer axes, each phase's inner loops in order. The leading reduction gives the loop nest's
    rule, domain and loop order (its rows are the outer loop's). A value that only later phases read (no
    other group, not an output) lives in `row_values`, one row of it on the kernel's stack (ROW_BYTES at
    most in all), instead of in the arena: softmax's exponentials never go to memory."""

    def __init__(self, phases, kept):
        lead = phases[0]
        self.__dict__.update(lead.__dict__)
        self.phases, self.depth = phases, _row_reduction(lead)
        self.eqns = [e for p in phases for e in p.eqns]
        self.stores, self.row_values, row_bytes = [], [], 0
        for v in (v for p in phases for v in p.stores):
            nbytes = math.prod(v.aval.shape[self.depth:]) * v.aval.dtype.itemsize
            if id(v) not in kept and row_bytes + nbytes <= ROW_BYTES:
                self.row_values.append(v)
                row_bytes += nbytes
            else:
                self.stores.append(v)
        self.cost = sum(p.cost for p in phases)
        self.reads = _reads(self)
        self.overwrites = self._overwrites(kept)

    def _overwrites(self, kept):
        """{id(v): x}: stored values v that may take the memory of a value x that the row loop reads (frame.py
        lays them out so when x is in the arena): x has v's type and shape, nothing else reads it, and the
        phases that read it read it only in their row and run before the phase that stores v (attention's
        softmax written over the scores it reads: 8 MB less memory)."""
        stores, overwrites, taken = {id(v) for v in self.stores}, {}, set()
        for k, p in enumerate(self.phases):
            for v in (v for v in p.stores if id(v) in stores):
                for x in self.reads:
                    readers = [q for q in self.phases if any(id(y) == id(x) for y in q.reads)]
                    if (id(x) not in kept and id(x) not in taken and x.aval.shape == v.aval.shape
                            and x.aval.dtype == v.aval.dtype and all(q in self.phases[:k] for q in readers)
                            and all(_reads_rows(q, {id(x)}, self.depth) for q in readers)):
                        overwrites[id(v)] = x
                        taken.add(id(x))
                        break
        return overwrites
