"""vmap as an IR-to-IR transformation.

`vmap_ir` walks the equations of an IR once and calls each primitive's batching rule; the rules are written
with bind, so everything they do is traced into one new IR. No example is ever looked at alone: the batched
IR has as many equations for a batch of 1 as for a batch of 1000, and values that do not depend on a mapped
input (constants, unmapped arguments) stay unbatched.
"""
import contextlib
import threading

from ..core.ad_util import aval
from ..core.batching import move_batch_axis
from ..core.ir import Literal
from ..core.timing import timed
from ..core.trace import Tracer, _stack, bind, source_scope, trace_flat

_INHERIT = object()     # vmap_ir's default axis name: that of the vmap_ir whose rule calls it (a loop's body)
_memo = threading.local()   # .done: {call: result} of the vmap_irs inside the outermost one running (`_memoized`)


@timed("transforms")
def vmap_ir(closed, in_dims, axis_size, out_dims=None, out_names=None, axis_name=_INHERIT):
    """Batch a ClosedIR: input i carries an extra axis of `axis_size` at in_dims[i] (None: not batched).

    Returns (ClosedIR, out_dims). Without `out_dims` each output keeps the batch axis its rules gave it
    (None for an output that does not depend on a mapped input). With `out_dims`, output i is moved (or
    broadcast) to axis out_dims[i]; None there requires the output to be unbatched (`out_names` name the
    outputs in that error). The constants of `closed` (arrays or outer tracers) are unbatched. axis_name: the
    name of the batch axis, which the collectives over it (rule `named_batch`) reduce or gather; by default the
    name of the vmap_ir whose batching rule calls this one (a scan's, a cond's ... body: the same axis).
    """
    if axis_name is _INHERIT:
        axis_name = _stack.batch_axis_name
    key = (closed, tuple(in_dims), axis_size, out_dims if out_dims is None else tuple(out_dims),
           out_names if out_names is None else tuple(out_names), axis_name)
    with _memoized() as done:
        if key in done:
            batched, dims = done[key]
        else:
            batched, dims = _vmap_ir(closed, in_dims, axis_size, out_dims, out_names, axis_name)
            if not any(isinstance(c, Tracer) for c in closed.consts + batched.consts):
                done[key] = batched, dims
    return batched, list(dims)


@contextlib.contextmanager
def _memoized():
    """{call: result} shared by the vmap_irs that run inside the outermost one: the batching rules of nested
    loops vmap the same body several times (a fixed point of the batched carries, then the loop), and each
    time their own loops' bodies again, exponentially in the depth; a body is batched once per set of dims.
    Batched IRs that close over tracers (of traces that may have ended by the next call) are not kept."""
    outermost = getattr(_memo, "done", None) is None
    if outermost:
        _memo.done = {}
    try:
        yield _memo.done
    finally:
        if outermost:
            _memo.done = None


def _vmap_ir(closed, in_dims, axis_size, out_dims, out_names, axis_name):
    ir = closed.ir
    in_avals = [a if d is None else a.update(shape=a.shape[:d] + (axis_size,) + a.shape[d:])
                for a, d in zip(closed.in_avals, in_dims)]
    dims_out = []

    def batched(*inputs):
        env = {v: (c, None) for v, c in zip(ir.constvars, closed.consts)}
        env.update((v, (x, d)) for v, x, d in zip(ir.invars, inputs, in_dims))

        def read(x):
            return (x, None) if isinstance(x, Literal) else env[x]

        saved, _stack.batch_axis_name = _stack.batch_axis_name, axis_name
        with source_scope() as at, _restoring(saved):
            for eqn in ir.eqns:
                at(eqn)
                values, dims = zip(*map(read, eqn.inputs)) if eqn.inputs else ((), ())
                if eqn.prim.named_batch is not None and _names_axis(eqn, axis_name):
                    outs, odims = eqn.prim.named_batch([x.value if isinstance(x, Literal) else x for x in values],
                                                       list(dims), axis_size, axis_name, **eqn.params)
                    outs, odims = ([outs], [odims]) if not eqn.prim.multiple_results else (outs, odims)
                elif all(d is None for d in dims):
                    outs = bind(eqn.prim, *values, **eqn.params)
                    outs, odims = (outs, [None] * len(outs)) if eqn.prim.multiple_results else ([outs], [None])
                else:
                    outs, odims = _apply_rule(eqn, values, dims, axis_size)
                env.update(zip(eqn.outvars, zip(outs, odims)))
        results = [(x.value, None) if isinstance(x, Literal) else env[x] for x in ir.outvars]
        if out_dims is None:
            dims_out.extend(d for _, d in results)
            return [x for x, _ in results]
        dims_out.extend(out_dims)
        return [_to_out_dim(x, d, want, axis_size, out_names[i] if out_names else f"output {i}")
                for i, ((x, d), want) in enumerate(zip(results, out_dims))]

    return trace_flat(batched, in_avals, fun_name="vmap"), dims_out


@contextlib.contextmanager
def _restoring(axis_name):
    """Put back the enclosing vmap_ir's axis name when this one ends."""
    try:
        yield
    finally:
        _stack.batch_axis_name = axis_name


def _names_axis(eqn, axis_name):
    """Whether eqn (a collective) reduces over the axis named axis_name."""
    names = eqn.params["axis_name"]
    return axis_name is not None and axis_name in (names if isinstance(names, tuple) else (names,))


def _apply_rule(eqn, values, dims, axis_size):
    """Call the primitive's batching rule and check that it kept the promise of its types."""
    if eqn.prim.batch is None:
        raise NotImplementedError(f"vmap: primitive `{eqn.prim.name}` has no batching rule")
    values = [x.value if isinstance(x, Literal) else x for x in values]
    outs, odims = eqn.prim.batch(values, list(dims), **eqn.params)
    if not eqn.prim.multiple_results:
        outs, odims = [outs], [odims]
    elif not isinstance(odims, (list, tuple)):
        odims = [odims] * len(outs)
    for out, d, var in zip(outs, odims, eqn.outvars):
        shape = var.aval.shape if d is None else var.aval.shape[:d] + (axis_size,) + var.aval.shape[d:]
        if aval(out).shape != shape or aval(out).dtype != var.aval.dtype:
            raise AssertionError(f"vmap: the batching rule of `{eqn.prim.name}` gave {aval(out).str_short()} "
                                 f"at batch axis {d}, expected {var.aval.dtype} {shape}")
    return list(outs), list(odims)


def _to_out_dim(x, d, want, size, name):
    if want is None:
        if d is not None:
            raise ValueError(f"vmap: out_axes is None for {name}, but it is batched (it depends on a mapped "
                             "input); give it an integer out axis")
        return x
    return move_batch_axis(x, d, want, size)
