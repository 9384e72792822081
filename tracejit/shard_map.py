"""shard_map, as jax.shard_map (and jax.experimental.shard_map.shard_map) on tracejit's one device.

JAX runs f once per device on that device's shard of each argument, the collectives of tracejit.lax (psum,
all_gather, axis_index, ppermute ...) communicating over the mesh axes named in the specs. With one device every
mesh axis has size 1, so each shard is the whole array and the results are f's; what remains is that the
collectives see the mesh's axis names, and the replication check. Both come from vmap: f is traced once with each
manual mesh axis bound (size 1), and its IR batched over the axes one at a time (vmap_ir, innermost axis first),
an argument mapped along an axis when its in_spec names the axis. An output that comes out batched along an axis
varies over it, which its out_spec must allow by naming the axis (with check_vma; JAX's error otherwise); psum,
pmax, pmin and pmean make a value invariant, axis_index varies. One difference: JAX counts all_gather's results
(and so ppermute's) as varying, vmap as invariant, so tracejit accepts an out_spec of P() there where JAX asks for
the axis. tracejit's arrays carry no sharding, so in_specs are not checked against the arguments' shardings."""
import contextlib
import functools

from . import numpy as tnp
from .core.api_util import flatten_args, leaf_aval, name_of, owned, trace_pytree
from .core.batching import move_batch_axis, named_axis
from .core.pytree import leaf_names, tree_flatten, tree_unflatten, treedef_flatten_up_to
from .core.trace import eval_ir, trace_flat
from .sharding import AxisType, Mesh, PartitionSpec, current_mesh
from .traceback_util import api_boundary
from .transforms.vmap import vmap_ir

_INFER = object()     # in_specs not given: inferred from the arguments (replicated: numpy arrays carry no sharding)


def shard_map(f=None, /, *, out_specs, in_specs=_INFER, mesh=None, axis_names=frozenset(), check_vma=True):
    """f mapped over the shards of its arguments on `mesh` (default: the mesh of `with mesh:` / set_mesh), as
    jax.shard_map: in_specs and out_specs are pytree prefixes of the positional arguments and of the outputs
    holding PartitionSpecs (in_specs may hold None: replicated; left out, it is inferred when the mesh's axes are
    Explicit); axis_names, the mesh axes f is manual over (default: all), which its collectives may name;
    check_vma, whether an output must be invariant over the manual axes its out_spec does not name. On one device
    each shard is the whole array (see the module's docstring). Usable as a decorator with keywords only."""
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma)
    if not callable(f):
        raise TypeError(f"shard_map: f must be callable, got {type(f).__name__}")
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map: mesh must be a Mesh (jax.make_mesh, jax.sharding.Mesh), got {mesh!r}")
    name = name_of(f)

    @api_boundary
    @functools.wraps(f)
    def mapped(*args):
        the_mesh = mesh if mesh is not None else current_mesh()
        if the_mesh is None:
            raise ValueError(f"shard_map({name}): no mesh; pass mesh= or set one with `with jax.set_mesh(mesh):`")
        unknown = set(axis_names) - set(the_mesh.axis_names)
        if unknown:
            raise ValueError(f"shard_map({name}): axis_names {sorted(unknown)} are not axes of the mesh "
                             f"{the_mesh.axis_names}")
        manual = [n for n in the_mesh.axis_names if not axis_names or n in axis_names]
        return _run(f, name, the_mesh, manual, in_specs, out_specs, check_vma, args)

    return mapped


def _run(f, name, mesh, manual, in_specs, out_specs, check, args):
    leaves, names, in_tree = flatten_args(f, args)
    if in_specs is _INFER:
        if not all(t == AxisType.Explicit for n, t in zip(mesh.axis_names, mesh.axis_types) if n in manual):
            raise TypeError(f"shard_map({name}): in_specs must be given (a pytree of PartitionSpecs) when the mesh "
                            f"axes are not all Explicit; the mesh's are {mesh.axis_types}")
        in_specs = PartitionSpec()
    in_leaf_specs = _per_leaf(in_specs, tuple(args), "in_specs", name, none_is=PartitionSpec())
    avals = [leaf_aval(x) for x in leaves]
    for spec, a, n in zip(in_leaf_specs, avals, names):
        _check(spec, a, manual, "in_specs", f"argument '{n}'", name)
    with contextlib.ExitStack() as axes:
        for axis in manual:
            axes.enter_context(named_axis(axis, 1))
        closed, out_tree = trace_pytree(f, leaves, names, in_tree, avals=avals, fun_name=name)
    placeholder = tree_unflatten(out_tree, range(out_tree.num_leaves))
    out_names = [f"output{path}" for path in leaf_names(placeholder)]
    out_leaf_specs = _per_leaf(out_specs, placeholder, "out_specs", name)
    for spec, a, n in zip(out_leaf_specs, closed.out_avals, out_names):
        _check(spec, a, manual, "out_specs", n, name)
    for axis in reversed(manual):       # the innermost axis first: each batching adds a leading axis of size 1
        in_dims = [0 if axis in spec.names() else None for spec in in_leaf_specs]
        closed, dims = vmap_ir(closed, in_dims, 1, axis_name=axis)
        for d, spec, n in zip(dims, out_leaf_specs, out_names):
            if check and d is not None and axis not in spec.names():
                raise ValueError(_varying_message(name, mesh, spec, n, axis))
        closed = _batch_axis_first(closed, dims)
    expanded = [tnp.reshape(x, (1,) * sum(a in spec.names() for a in manual) + leaf_aval(x).shape)
                for x, spec in zip(leaves, in_leaf_specs)]
    outs = [tnp.reshape(y, a.shape) for y, a in zip(eval_ir(closed, *expanded), _unbatched(closed, len(manual)))]
    return tree_unflatten(out_tree, owned(outs))


def _batch_axis_first(closed, dims):
    """closed with each output's batch axis (size 1) moved to the front, or added there if it has none."""
    return trace_flat(lambda *xs: [move_batch_axis(y, d, 0, 1) for y, d in zip(eval_ir(closed, *xs), dims)],
                      closed.in_avals, fun_name="shard_map")


def _unbatched(closed, count):
    return [a.update(shape=a.shape[count:]) for a in closed.out_avals]


def _per_leaf(specs, tree, what, name, none_is=None):
    """The PartitionSpec of each leaf of `tree`, from `specs`, a pytree prefix of it."""
    spec_leaves, spec_tree = tree_flatten(specs, is_leaf=lambda x: x is None)
    try:
        subtrees = treedef_flatten_up_to(spec_tree, tree)
    except ValueError as e:
        raise ValueError(f"shard_map({name}): {what} {specs!r} must be a pytree prefix of the "
                         f"{'positional arguments' if what == 'in_specs' else 'outputs'}: {e}") from None
    found = []
    for spec, sub in zip(spec_leaves, subtrees):
        spec = none_is if spec is None else spec
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"shard_map({name}): {what} must be a pytree of PartitionSpecs (jax.P), got {spec!r}")
        found += [spec] * len(tree_flatten(sub)[0])
    return found


def _check(spec, aval, manual, what, where, name):
    if any(p is PartitionSpec.UNCONSTRAINED for p in spec):
        raise ValueError(f"shard_map({name}): {what} {spec!r} for {where}: UNCONSTRAINED is not allowed")
    outside = [n for n in spec.names() if n not in manual]
    if outside:
        raise ValueError(f"shard_map({name}): {what} {spec!r} for {where} refers to {outside[0]!r}, which is not "
                         f"a manual axis of the mesh (those are {tuple(manual)})")
    if len(set(spec.names())) != len(spec.names()):
        raise ValueError(f"shard_map({name}): {what} {spec!r} for {where} uses a mesh axis more than once")
    if len(spec) > aval.ndim:
        raise ValueError(f"shard_map({name}): {what} {spec!r} has length {len(spec)}, but {where} has shape "
                         f"{aval.str_short()}, of rank {aval.ndim}: a spec has at most one entry per dimension")


def _varying_message(name, mesh, spec, where, axis):
    return (f"shard_map({name}) was given out_specs which require replication which can't be statically inferred "
            f"given the mesh {mesh!r}: out_specs is {spec!r} for {where}, which says it is invariant over mesh axis "
            f"{axis!r}, but it varies over it (it depends on an argument split over {axis!r}, or on axis_index). "
            f"Reduce it over the axis (lax.psum, pmean, pmax ...), name {axis!r} in its out_spec, or pass "
            "check_vma=False")


__all__ = ["shard_map"]
