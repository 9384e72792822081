"""How a fused group's loop nest runs over its domain (fusion.plan_groups sets these on each Group): runs of
axes merged into one loop (`collapse_axes`), so that a short innermost axis makes a long, vectorizable loop, and
tiles where the nest reads a value transposed (`transposed_read`)."""
import math

from ..core.avals import Dim
from ..core.ir import Literal
from .axis_maps import axis_maps
from .rules import Elementwise

TILE = 16       # the side of a tile of a loop nest that reads a value transposed (`transposed_read`), in elements


def transposed_read(g):
    """The axis of elementwise group g's domain that indexes the last (contiguous) axis of a value it reads while
    the innermost loop indexes another of its axes (x.T + 0, x + x.T), or None. The loop nest then runs over tiles
    of TILE x TILE of that axis and the last one, so that each cache line read is used TILE times before it
    leaves the cache: one line per element otherwise (x.T + 0 over 2048 x 2048 f32: 12.8 ms untiled, 1.6 in tiles of
    16, 2.0 of 32; JAX 1.5)."""
    ndim, extents = len(g.domain), g.extents
    if ndim < 2 or any(isinstance(d, Dim) for d in g.domain) or (extents[-1] or 0) < TILE:
        return None
    maps = axis_maps(g)
    for x in g.reads:
        for m in maps.get(id(x), ()) if x.aval.ndim >= 2 and x.aval.shape[-1] >= TILE else ():
            if m[-1] is not None and m[-1] != ndim - 1 and (extents[m[-1]] or 0) >= TILE and ndim - 1 in m:
                return m[-1]
    return None


def collapse_axes(g, first=0):
    """The loop extents of an elementwise group's domain with runs of adjacent axes merged into their last
    one, so that a short innermost axis (6 channels of an NHWC image) makes a long, vectorizable loop.

    A merged axis's loop is gone and its index is 0; the run's last axis loops over the run's elements. That
    reads the right element of every value that is row-major over the run (flat index i is the run's
    element i: a buffer, an elementwise member) or constant over it (a broadcast along all its axes), so
    runs are merged only where every value the group stores and computes is one or the other. Size-1 axes
    always have index 0 (the outermost keeps its loop); the `first` axes keep their loops (a row loop's outer
    axes, `merge_rows`), and so do symbolic shapes. Threads split the outermost loop left (Group.outer_extent):
    a merged outermost axis let exp over 1e6 points (n, 3) run as over 3e6 values (0.8 ms, not 1.7 with the
    axis of 3 written out)."""
    shape = g.domain
    if len(shape) < 2 or any(isinstance(d, Dim) for d in shape):
        return shape
    extents = [None if a >= max(first, 1) and d == 1 else d for a, d in enumerate(shape)]
    producer = {id(v): e for e in g.eqns for v in e.outvars}
    runs = []
    for a in range(first, len(shape)):
        if shape[a] == 1:
            continue
        if runs and all(_row_major(v, tuple(runs[-1] + [a]), producer) for v in g.stores):
            runs[-1].append(a)
        else:
            runs.append([a])
    for run in runs:
        for a in run[:-1]:
            extents[a] = None
        extents[run[-1]] = math.prod(shape[a] for a in run)
    return tuple(extents)


def _row_major(v, axes, producer):
    """Whether value v is row-major over its axes `axes` (the non-unit axes of a run, in order; those between
    them have size 1) or constant over them, whatever the group's members compute it from (a walk, not a
    recursion: a chain of 600 equations over two merged axes exceeded Python's recursion limit)."""
    todo, seen = [(v, axes)], set()        # shared subexpressions are checked once
    while todo:
        v, axes = todo.pop()
        e = producer.get(id(v))
        if not axes or isinstance(v, Literal) or e is None or (id(v), axes) in seen:    # a literal, a buffer
            continue
        seen.add((id(v), axes))
        if isinstance(e.prim.lower, Elementwise):
            operands = [x for x in e.inputs if x.aval.ndim]
            if any(x.aval.shape != v.aval.shape for x in operands):
                return False
            todo += [(x, axes) for x in operands]
            continue
        if e.prim.name != "broadcast_in_dim":      # other index maps read elsewhere than the run's element i
            return False
        x_shape, dims = e.inputs[0].aval.shape, e.params["broadcast_dimensions"]
        hit = [j for j, d in enumerate(dims) if d in axes and x_shape[j] != 1]
        if hit and ([dims[j] for j in hit] != list(axes)
                    or any(x_shape[j] != 1 for j in range(hit[0], hit[-1]) if j not in hit)):
            return False
        todo.append((e.inputs[0], tuple(hit)))
    return True
