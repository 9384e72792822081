"""cond, switch, while_loop, fori_loop and scan with jax.lax's signatures. Bodies are traced once into
sub-IRs; values they close over become explicit operands of the control-flow equation."""
import math

import numpy as np

from .. import ad_checkpoint
from .. import numpy as tnp
from .._config import config
from ..batching import vmap
from ..core.api_util import leaf_aval, trace_pytree
from ..core.avals import ShapedArray, is_python_scalar
from ..core.errors import ShapeError
from ..core.ir_surgery import hoist_consts, widen_inputs
from ..core.pytree import leaf_names, tree_flatten, tree_map, tree_unflatten
from ..core.trace import Tracer, bind
from ..numpy._base import asarray
from ..primitives import elementwise as ew
from ..primitives.cond import cond_p
from ..primitives.scan import scan_p
from ..primitives.while_loop import while_p


def _leaves(tree):
    leaves, treedef = tree_flatten(tree)
    return [_array(x) for x in leaves], treedef


def _array(x):
    """Tracers and weakly typed Python scalars stay as they are; anything else becomes an array."""
    x = asarray(x)
    return x if isinstance(x, Tracer) or is_python_scalar(x) else np.asarray(x)


def _trace(fun, in_avals, in_tree, name):
    """Trace fun on abstract leaves; returns (constant-free ClosedIR, its constants, output tree)."""
    closed, out_tree = trace_pytree(fun, [None] * len(in_avals), [None] * len(in_avals), in_tree, avals=in_avals,
                                    fun_name=name)
    body, consts = hoist_consts(closed)
    return body, consts, out_tree


def _describe(tree, avals):
    paths = leaf_names(tree_unflatten(tree, avals))
    return ", ".join(f"{p or 'output'}: {a.str_short()}" for p, a in zip(paths, avals))

# ------------------------------------------------------------------------------------------ cond/switch


def switch(index, branches, *operands):
    """Apply branches[index](*operands); index is clamped to the valid range, as in JAX."""
    return _switch(index, branches, operands, [f"branch {k} ({_name(b)})" for k, b in enumerate(branches)])


def cond(pred, true_fun, false_fun, *operands):
    """true_fun(*operands) if pred else false_fun(*operands), with a traced pred: both branches are traced
    and must return the same types; only the chosen one runs."""
    return _switch(pred, [false_fun, true_fun], operands, ["false_fun", "true_fun"])


def _switch(index, branches, operands, labels):
    index = asarray(index)
    shape = index.shape if isinstance(index, Tracer) else np.shape(index)
    dtype = index.dtype if isinstance(index, Tracer) else np.asarray(index).dtype
    if shape != () or dtype.kind not in "iub":
        raise TypeError(f"switch/cond: the index or predicate must be a scalar bool or integer, got "
                        f"{ShapedArray(shape, dtype).str_short()}")
    if not branches:
        raise ValueError("switch: needs at least one branch")
    leaves, in_tree = tree_flatten((tuple(operands), {}))
    leaves = [_array(x) for x in leaves]
    avals = [leaf_aval(x).strip_weak() for x in leaves]
    traced = [_trace(b, avals, in_tree, getattr(b, "__name__", f"branch {k}")) for k, b in enumerate(branches)]
    first_body, _, first_tree = traced[0]
    for k, (body, _, tree) in enumerate(traced[1:], 1):
        if tree != first_tree or [(a.shape, a.dtype) for a in body.out_avals] != [
                (a.shape, a.dtype) for a in first_body.out_avals]:
            raise TypeError(
                f"cond/switch branches must return the same structure, shapes and dtypes: {labels[0]} returns "
                f"{_describe(first_tree, first_body.out_avals)}; {labels[k]} returns "
                f"{_describe(tree, body.out_avals)}")
    all_consts = [c for _, consts, _ in traced for c in consts]
    bodies, offset = [], 0
    const_avals = [leaf_aval(c) for c in all_consts]
    for body, consts, _ in traced:  # every branch takes every branch's constants, then the operands
        bodies.append(widen_inputs(body, const_avals, offset, len(consts)))
        offset += len(consts)
    index = bind(ew.convert_element_type_p, index, new_dtype=np.dtype(np.int32), weak_type=False)
    outs = bind(cond_p, index, *all_consts, *leaves, branches=tuple(bodies))
    return tree_unflatten(first_tree, outs)


def _name(fun):
    return getattr(fun, "__name__", repr(fun))


# ------------------------------------------------------------------------------------------- while/fori


def _carry_fixed_point(fun, init_avals, in_tree, name, extra_avals=()):
    """Trace a loop body; if it turns a weakly typed carry leaf into a strong dtype, retrace with that dtype."""
    body, consts, out_tree = _trace(fun, list(init_avals) + list(extra_avals), in_tree, name)
    carry_out = body.out_avals[:len(init_avals)]
    if any(a.weak_type and (a.shape, a.dtype) != (b.shape, b.dtype) and a.shape == b.shape
           for a, b in zip(init_avals, carry_out)):
        init_avals = [b.strip_weak() if a.weak_type and a.shape == b.shape else a
                      for a, b in zip(init_avals, carry_out)]
        body, consts, out_tree = _trace(fun, list(init_avals) + list(extra_avals), in_tree, name)
    return body, consts, out_tree, list(init_avals)


def _check_carry(name, init_tree, init_avals, out_tree, out_avals):
    if out_tree != init_tree:
        raise TypeError(f"{name}: the body must return a carry with the structure of the initial value: "
                        f"{init_tree} before, {out_tree} after")
    for path, before, after in zip(leaf_names(tree_unflatten(init_tree, init_avals), "carry"), init_avals, out_avals):
        if (before.shape, before.dtype) != (after.shape, after.dtype):
            raise TypeError(f"{name}: the carry leaf {path} changes type across an iteration: "
                            f"{before.str_short()} before, {after.str_short()} after")


def _convert_to(leaves, avals):
    """Initial carry leaves in the dtype the body settled on (weak scalars take the body's dtype)."""
    return [x if leaf_aval(x).dtype == a.dtype else
            bind(ew.convert_element_type_p, x, new_dtype=a.dtype, weak_type=False) if isinstance(x, Tracer) else
            np.asarray(x, a.dtype) for x, a in zip(leaves, avals)]


def while_loop(cond_fun, body_fun, init_val):
    """val = init_val; while cond_fun(val): val = body_fun(val); return val, as one compiled loop (the body
    keeps the carry's types; reverse mode is not defined for it, as in JAX)."""
    leaves, init_tree = _leaves(init_val)
    init_avals = [leaf_aval(x) for x in leaves]
    call_tree = tree_flatten(((init_val,), {}))[1]
    body, body_consts, out_tree, init_avals = _carry_fixed_point(
        body_fun, init_avals, call_tree, _name(body_fun))
    _check_carry("while_loop", init_tree, init_avals, out_tree, body.out_avals)
    cond_body, cond_consts, _ = _trace(cond_fun, init_avals, call_tree, _name(cond_fun))
    out = cond_body.out_avals
    if len(out) != 1 or out[0].shape != () or out[0].dtype != np.bool_:
        raise TypeError(f"while_loop: cond_fun must return a scalar bool, got {_types_of(out)}")
    outs = bind(while_p, *cond_consts, *body_consts, *_convert_to(leaves, init_avals), body=body,
                cond=cond_body, body_nconsts=len(body_consts), cond_nconsts=len(cond_consts))
    return tree_unflatten(init_tree, outs)


def _types_of(avals):
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """A scan over a static trip count when lower and upper are concrete (so it is reverse-differentiable),
    a while loop otherwise. unroll is JAX's hint, accepted and left to the compiler (which unrolls short loop
    bodies itself)."""
    concrete = not isinstance(lower, Tracer) and not isinstance(upper, Tracer)
    if concrete:   # the index is a weakly typed int, as in JAX: `carry * 2 + i` keeps the carry's dtype
        lower, upper = int(lower), int(upper)
        carry, _ = scan(lambda c, _: ((c[0] + 1, body_fun(c[0], c[1])), None),
                        (lower, init_val), None, length=max(upper - lower, 0))
        return carry[1]
    lower, upper = asarray(lower), asarray(upper)
    _, state = while_loop(lambda c: c[0] < upper, lambda c: (c[0] + 1, body_fun(c[0], c[1])), (lower, init_val))
    return state

# ------------------------------------------------------------------------------------------------- scan


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, *, checkpoint=None):
    """carry, ys = scan(f, init, xs): f(carry, x) -> (carry, y) over the leading axis of xs.

    checkpoint: how reverse mode stores the loop (values and derivatives do not change). None (the default)
    stores what every iteration's backward step needs: memory grows with the length. "sqrt" runs the loop
    as about sqrt(length) segments of about sqrt(length) iterations, each segment checkpointed
    (tj.checkpoint): the forward pass stores only the carry at each segment's start, and the backward pass
    reruns one segment at a time, storing that segment's iterations; memory grows with sqrt(length), for one
    more forward pass. An int asks for that many segments. tj.config.scan_checkpoint (environment variable
    TRACEJIT_SCAN_CHECKPOINT) sets the default for scans of at least SQRT_MIN_LENGTH iterations."""
    x_leaves, _ = _leaves(xs)
    lengths = {leaf_aval(x).shape[0] if leaf_aval(x).shape else None for x in x_leaves}
    if None in lengths:
        raise ShapeError("scan: every leaf of xs needs a leading axis to scan over; got a scalar")
    if length is not None:
        lengths.add(int(length))
    if not lengths:
        raise ValueError("scan: with xs=None, pass length")
    if len(lengths) != 1:
        paths = leaf_names(xs, "xs")
        sizes = ", ".join(f"{p}: {leaf_aval(x).shape[0]}" for p, x in zip(paths, x_leaves))
        raise ShapeError(f"scan: the leading axes of xs disagree ({sizes}; length={length})")
    length = lengths.pop()
    segment = _segment_length(checkpoint, length)
    if segment is not None:
        return _segmented_scan(f, init, xs, length, reverse, segment)
    carry_leaves, carry_tree = _leaves(init)
    carry_avals = [leaf_aval(x) for x in carry_leaves]
    x_avals = [leaf_aval(x).update(shape=leaf_aval(x).shape[1:]) for x in x_leaves]
    call_tree = tree_flatten(((init, xs), {}))[1]

    def body_fun(*leaves):
        (carry, x), _ = tree_unflatten(call_tree, leaves)
        new_carry, y = f(carry, x)
        return (new_carry, y)

    flat_tree = tree_flatten((tuple(range(len(carry_avals) + len(x_avals))), {}))[1]
    body, consts, out_tree, carry_avals = _carry_fixed_point(body_fun, carry_avals, flat_tree, _name(f), x_avals)
    carry_out_tree, y_tree = out_tree.subtrees
    _check_carry("scan", carry_tree, carry_avals, carry_out_tree, body.out_avals[:len(carry_avals)])
    outs = bind(scan_p, *consts, *_convert_to(carry_leaves, carry_avals), *x_leaves, body=body, length=length,
                reverse=bool(reverse), num_consts=len(consts), num_carry=len(carry_avals))
    return tree_unflatten(carry_tree, outs[:len(carry_avals)]), tree_unflatten(y_tree, outs[len(carry_avals):])


SQRT_MIN_LENGTH = 256     # scans shorter than this keep the default store-everything form under config


def _segment_length(checkpoint, length):
    """The iterations per checkpointed segment that `checkpoint` asks for, or None for a plain scan."""
    if checkpoint is None and config.scan_checkpoint and isinstance(length, int) and length >= SQRT_MIN_LENGTH:
        checkpoint = config.scan_checkpoint
    if checkpoint is None:
        return None
    if not isinstance(length, int):
        raise ValueError(f"scan: checkpoint needs the length at trace time, but it is the symbolic {length}")  # noqa: TRY004 - a value (symbolic), not a type
    if checkpoint == "sqrt":
        segment = math.isqrt(length - 1) + 1 if length else 0
    elif isinstance(checkpoint, int) and not isinstance(checkpoint, bool) and checkpoint > 0:
        segment = -(-length // checkpoint) if length else 0
    else:
        raise ValueError(f"scan: checkpoint must be None, 'sqrt' or a positive number of segments, got "
                         f"{checkpoint!r}")
    return segment if 1 < segment < length else None


def _segmented_scan(f, init, xs, length, reverse, segment):
    """scan(f, init, xs) as an outer scan over the full segments, each a checkpointed inner scan of `segment`
    iterations, and a plain scan over the remaining ones (which run first when reverse)."""
    count, head, tail = _blocks(xs, length, segment)
    rest = length - count * segment

    def run_segment(carry, x):
        return scan(f, carry, x, length=segment, reverse=reverse)

    def run_head(carry):
        carry, ys = scan(ad_checkpoint.checkpoint(run_segment, prevent_cse=False), carry, head, length=count,
                         reverse=reverse)
        return carry, _unblocked(ys)

    if not rest:
        return run_head(init)
    if reverse:
        carry, ys_tail = scan(f, init, tail, length=rest, reverse=True)
        carry, ys_head = run_head(carry)
    else:
        carry, ys_head = run_head(init)
        carry, ys_tail = scan(f, carry, tail, length=rest)
    return carry, tree_map(lambda a, b: tnp.concatenate([a, b]), ys_head, ys_tail)


def map(f, xs, *, batch_size=None):
    """f applied to each slice of xs (a pytree) along the leading axis, the results stacked: a scan of f, one
    example an iteration; with batch_size, f vmapped over batch_size examples an iteration and once over the
    rest, as jax.lax.map."""
    leaves, _ = _leaves(xs)
    if not leaves:
        raise ValueError("lax.map: xs must hold at least one array, to map over its leading axis")
    if batch_size is None:
        return scan(lambda _, x: (None, f(x)), None, xs)[1]
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"lax.map: batch_size must be a positive int, got {batch_size!r}")
    length = leaf_aval(leaves[0]).shape[0]
    count, head, tail = _blocks(xs, length, int(batch_size))
    batched = vmap(f)
    ys = _unblocked(scan(lambda _, x: (None, batched(x)), None, head)[1]) if count else None
    if count * batch_size == length:
        return ys
    ys_tail = batched(tail)
    return ys_tail if ys is None else tree_map(lambda a, b: tnp.concatenate([a, b]), ys, ys_tail)


def _blocks(xs, length, size):
    """(count, the first count * size rows of xs's leaves as count blocks of size rows, the other rows)."""
    count = length // size
    head = tree_map(lambda x: tnp.reshape(x[:count * size], (count, size) + x.shape[1:]), xs)
    return count, head, tree_map(lambda x: x[count * size:], xs)


def _unblocked(ys):
    """Blocks of rows (count, size, ...) as rows (count * size, ...)."""
    return tree_map(lambda y: tnp.reshape(y, (y.shape[0] * y.shape[1],) + y.shape[2:]), ys)
