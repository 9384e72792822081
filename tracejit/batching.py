"""vmap, as jax.vmap: trace the function on one example, batch its IR with `vmap_ir`
(transforms/vmap.py), and evaluate the batched IR on the arguments that arrived."""
import contextlib
import functools

import numpy as np

from .core.api_util import FLOAT0, flatten_args, leaf_aval, name_of, owned, trace_pytree
from .core.batching import named_axis
from .core.pytree import leaf_names, tree_flatten, tree_map, tree_unflatten, treedef_flatten_up_to
from .core.trace import eval_ir
from .traceback_util import api_boundary
from .transforms.vmap import vmap_ir


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorise fun over an axis of its arguments, as jax.vmap: in_axes / out_axes are ints (negative counts
    from the end), None (not mapped) or pytree prefixes of the arguments / outputs holding those. Keyword
    arguments are mapped over axis 0. axis_name names the mapped axis for the collectives of tracejit.lax
    (psum, pmean, pmax, pmin, all_gather, axis_index) in fun; spmd_axis_name is accepted (one device)."""
    _check_spec(in_axes, "in_axes")
    _check_spec(out_axes, "out_axes")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @api_boundary
    @functools.wraps(fun)
    def batched(*args, **kwargs):
        name = name_of(fun)
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
        with named_axis(axis_name, size) if axis_name is not None else contextlib.nullcontext():
            closed, out_tree = trace_pytree(_passing_through(fun, in_axes, args), leaves, names, in_tree,
                                            avals=example, fun_name=name)
        placeholder = tree_unflatten(out_tree, range(out_tree.num_leaves))
        out_names = [f"output{path}" for path in leaf_names(placeholder)]
        out_dims = _axes_per_leaf(out_axes, placeholder, "out_axes", "the outputs")
        out_dims = [None if d is None else _normalize(d, a.ndim + 1, n, "out_axes")
                    for d, a, n in zip(out_dims, closed.out_avals, out_names)]
        batched_ir, _ = vmap_ir(closed, dims, size, out_dims, out_names, axis_name)
        return _batched_float0(tree_unflatten(out_tree, owned(eval_ir(batched_ir, *leaves))), size, out_axes)

    return batched


def _batched_float0(out, size, out_axes):
    """Outputs of dtype float0 (integers' gradients: no data, so not in the batched IR) given the batch axis."""
    def batched(x):
        if getattr(x, "dtype", None) != FLOAT0:
            return x
        axis = out_axes if isinstance(out_axes, int) else 0
        return np.zeros(x.shape[:axis % (x.ndim + 1)] + (size,) + x.shape[axis % (x.ndim + 1):], FLOAT0)
    return tree_map(batched, out)


def _passing_through(fun, in_axes, args):
    """fun, given the unmapped positional arguments that are Python scalars as they are, not traced: jax.vmap hands
    unmapped arguments over untouched, so that Python control flow and an inner jit's static arguments see them
    (JAX's pca example: vmap(f, in_axes=(0, None))(X, 2) of a jit with a static n)."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    fixed = {k: a for k, (a, axis) in enumerate(zip(args, axes)) if axis is None and type(a) in (bool, int, float, complex)}
    if not fixed:
        return fun

    @functools.wraps(fun)
    def given(*traced, **kwargs):
        return fun(*[fixed.get(k, x) for k, x in enumerate(traced)], **kwargs)
    return given


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
