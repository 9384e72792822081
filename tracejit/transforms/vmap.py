"""vmap as an IR-to-IR transformation.

`vmap_ir` walks the equations of an IR once and calls each primitive's batching rule; the rules are written
with bind, so everything they do is traced into one new IR. No example is ever looked at alone: the batched
IR has as many equations for a batch of 1 as for a batch of 1000, and values that do not depend on a mapped
input (constants, unmapped arguments) stay unbatched.
"""
import functools

import numpy as np

from ..core.ad_util import aval
from ..core.api_util import flatten_args, leaf_aval, trace_pytree
from ..core.batching import move_batch_axis
from ..core.ir import Literal
from ..core.pytree import tree_flatten, tree_flatten_with_path, tree_unflatten, treedef_flatten_up_to
from ..core.timing import timed
from ..core.trace import Tracer, bind, eval_ir, trace_flat


@timed("transforms")
def vmap_ir(closed, in_dims, axis_size, out_dims=None, out_names=None):
    """Batch a ClosedIR: input i carries an extra axis of `axis_size` at in_dims[i] (None: not batched).

    Returns (ClosedIR, out_dims). Without `out_dims` each output keeps the batch axis its rules gave it
    (None for an output that does not depend on a mapped input). With `out_dims`, output i is moved (or
    broadcast) to axis out_dims[i]; None there requires the output to be unbatched (`out_names` name the
    outputs in that error). The constants of `closed` (arrays or outer tracers) are unbatched.
    """
    ir = closed.ir
    in_avals = [a if d is None else a.update(shape=a.shape[:d] + (axis_size,) + a.shape[d:])
                for a, d in zip(closed.in_avals, in_dims)]
    dims_out = []

    def batched(*inputs):
        env = {v: (c, None) for v, c in zip(ir.constvars, closed.consts)}
        env.update((v, (x, d)) for v, x, d in zip(ir.invars, inputs, in_dims))

        def read(x):
            return (x, None) if isinstance(x, Literal) else env[x]

        for eqn in ir.eqns:
            values, dims = zip(*map(read, eqn.inputs)) if eqn.inputs else ((), ())
            if all(d is None for d in dims):
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


# ------------------------------------------------------------------------------------------ the API


def vmap(fun, in_axes=0, out_axes=0, axis_size=None):
    """Vectorise fun over an axis of its arguments, as jax.vmap: in_axes / out_axes are ints (negative counts
    from the end), None (not mapped) or pytree prefixes of the arguments / outputs holding those. Keyword
    arguments are mapped over axis 0."""
    _check_spec(in_axes, "in_axes")
    _check_spec(out_axes, "out_axes")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @functools.wraps(fun)
    def batched(*args, **kwargs):
        name = getattr(fun, "__name__", "function")
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(f"vmap({name}): in_axes is a tuple of {len(in_axes)} entries but the function was "
                             f"called with {len(args)} positional arguments; give one entry per argument")
        leaves, names, in_tree = flatten_args(fun, args, kwargs)
        arg_dims = _axes_per_leaf(in_axes, tuple(args), "in_axes", "the positional arguments")
        dims = arg_dims + [0] * (len(leaves) - len(arg_dims))
        avals = [leaf_aval(x) for x in leaves]
        dims = [None if d is None else _normalize(d, a.ndim, n, "in_axes") for d, a, n in zip(dims, avals, names)]
        size = _axis_size(name, dims, avals, names, axis_size)
        example = [a if d is None else a.update(shape=a.shape[:d] + a.shape[d + 1:]) for a, d in zip(avals, dims)]
        closed, out_tree = trace_pytree(fun, leaves, names, in_tree, avals=example, fun_name=name)
        placeholder = tree_unflatten(out_tree, range(out_tree.num_leaves))
        out_names = [f"output{path}" for path, _ in tree_flatten_with_path(placeholder)[0]]
        out_dims = _axes_per_leaf(out_axes, placeholder, "out_axes", "the outputs")
        out_dims = [None if d is None else _normalize(d, a.ndim + 1, n, "out_axes")
                    for d, a, n in zip(out_dims, closed.out_avals, out_names)]
        batched_ir, _ = vmap_ir(closed, dims, size, out_dims, out_names)
        return tree_unflatten(out_tree, _owned(eval_ir(batched_ir, *leaves), leaves, batched_ir.consts))

    return batched


def _check_spec(spec, what):
    leaves, _ = tree_flatten(spec, is_leaf=lambda x: x is None)
    for leaf in leaves:
        if leaf is not None and (isinstance(leaf, bool) or not isinstance(leaf, (int, np.integer))):
            raise TypeError(f"vmap {what} must be an int, None, or a tuple/list/dict of them; got {spec!r}")


def _axes_per_leaf(spec, tree, what, of):
    """The axis of every leaf of `tree`, from `spec`, a prefix of it (a bare int or None applies to all)."""
    spec_leaves, spec_tree = tree_flatten(spec, is_leaf=lambda x: x is None)
    try:
        subtrees = treedef_flatten_up_to(spec_tree, tree)
    except ValueError as e:
        raise ValueError(f"vmap {what} {spec!r} must be a tree prefix of {of}: {e}") from None
    return [axis for axis, sub in zip(spec_leaves, subtrees) for _ in tree_flatten(sub)[0]]


def _normalize(axis, ndim, name, what):
    """An axis in range for a value of rank ndim (an argument, or a batched output), made non-negative."""
    if not -ndim <= axis < ndim:
        where = f"argument '{name}' of rank {ndim}" if what == "in_axes" else f"{name} (rank {ndim} batched)"
        raise ValueError(f"vmap {what} {axis} is out of range for {where}: valid axes are {-ndim} to {ndim - 1}")
    return int(axis) % ndim


def _axis_size(name, dims, avals, names, axis_size):
    sizes = {n: (a.shape[d], d, a.shape) for n, a, d in zip(names, avals, dims) if d is not None}
    found = {s for s, _, _ in sizes.values()} | ({axis_size} if axis_size is not None else set())
    if not found:
        raise ValueError(f"vmap({name}): no argument is mapped (every in_axes is None); give axis_size to "
                         "say how many examples to make")
    if len(found) > 1:
        listed = "\n".join(f"  argument '{n}' of shape {shape} has size {s} along axis {d}"
                           for n, (s, d, shape) in sizes.items())
        given = f"\n  axis_size={axis_size}" if axis_size is not None else ""
        raise ValueError(f"vmap({name}) got inconsistent sizes for the mapped axis:\n{listed}{given}")
    return found.pop()


def _owned(outs, leaves, consts):
    """Outputs computed with NumPy as fresh arrays the caller owns (an output may be an input or a constant)."""
    if any(isinstance(o, Tracer) for o in outs):
        return outs
    shared = {id(x) for x in list(leaves) + list(consts)}
    return [np.array(o) if id(o) in shared else np.asarray(o) for o in outs]
