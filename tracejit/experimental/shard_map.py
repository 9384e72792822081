"""jax.experimental.shard_map: the shard_map of older JAX (now jax.shard_map, tracejit.shard_map), with its
positional mesh and specs, check_rep and auto."""
from ..shard_map import shard_map as _shard_map


def shard_map(f, mesh, in_specs, out_specs, check_rep=True, auto=frozenset()):
    """f mapped over shards of its arguments on `mesh`, as jax.experimental.shard_map.shard_map: tracejit.shard_map
    with check_vma=check_rep, manual over the mesh axes not in `auto`."""
    manual = frozenset(n for n in mesh.axis_names if n not in auto) if hasattr(mesh, "axis_names") else frozenset()
    if auto and not manual:
        raise ValueError(f"shard_map: auto {set(auto)} leaves no manual mesh axis (the mesh's are {mesh.axis_names})")
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, axis_names=manual if auto else frozenset(),
                      check_vma=check_rep)


__all__ = ["shard_map"]
