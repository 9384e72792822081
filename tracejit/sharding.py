"""Meshes and shardings, as jax.sharding, for tracejit's one device (the CPU): Mesh, make_mesh, PartitionSpec (P),
NamedSharding, SingleDeviceSharding, AxisType, set_mesh.

A mesh names axes of devices; tracejit has one device, so every axis of a mesh has size 1 and a mesh that needs
more devices raises, naming how many it needs. Shardings describe how an array would be split over a mesh: on one
device every shard is the whole array, and tracejit's arrays (numpy arrays) carry no sharding, so the functions
that take one (device_put, with_sharding_constraint, shard_map) check it and place nothing. shard_map runs its
function under the mesh's axis names (tracejit.shard_map)."""
import collections
import enum
import math
import threading

import numpy as np

from .core.pytree import tree_flatten
from .core.trace import current_builder
from .devices import CPU, device_count


class AxisType(enum.Enum):
    """How a mesh axis is partitioned (jax.sharding.AxisType); on one device the kinds differ only in that
    shard_map infers unspecified in_specs when all its axes are Explicit."""

    Auto = "Auto"
    Explicit = "Explicit"
    Manual = "Manual"

    def __repr__(self):
        return self.name


class _Unconstrained:
    def __repr__(self):
        return "UNCONSTRAINED"


def _entry(p):
    """A dimension's entry of a PartitionSpec: None, a mesh axis name, a tuple of names, or UNCONSTRAINED."""
    if p is None or p is PartitionSpec.UNCONSTRAINED or isinstance(p, str):
        return p
    if isinstance(p, (tuple, list)) and all(isinstance(n, str) for n in p):
        return p[0] if len(p) == 1 else tuple(p)
    raise TypeError(f"PartitionSpec: each entry must be None, a mesh axis name (str) or a tuple of names, got {p!r}")


class PartitionSpec:
    """How each dimension of an array is split over mesh axes, as jax.P / jax.sharding.PartitionSpec: one entry per
    leading dimension (None: not split; a name; a tuple of names), dimensions past its length not split."""

    UNCONSTRAINED = _Unconstrained()
    __slots__ = ("_partitions", "reduced", "unreduced")

    def __init__(self, *partitions, unreduced=frozenset(), reduced=frozenset()):
        self._partitions = tuple(_entry(p) for p in partitions)
        self.unreduced, self.reduced = frozenset(unreduced), frozenset(reduced)

    def __len__(self):
        return len(self._partitions)

    def __getitem__(self, i):
        return self._partitions[i]

    def __iter__(self):
        return iter(self._partitions)

    def __eq__(self, other):
        return (isinstance(other, PartitionSpec) and self._partitions == other._partitions
                and (self.unreduced, self.reduced) == (other.unreduced, other.reduced))

    def __hash__(self):
        return hash((self._partitions, self.unreduced, self.reduced))

    def __repr__(self):
        return "P()" if not self._partitions else f"P{self._partitions!r}"

    def names(self):
        """The mesh axis names the spec splits dimensions over, in order."""
        return [n for p in self._partitions if p is not None and p is not self.UNCONSTRAINED
                for n in ((p,) if isinstance(p, str) else p)]


P = PartitionSpec


def _axis_types(axis_types, n, default):
    if axis_types is None:
        return (default,) * n
    types = (axis_types,) * n if isinstance(axis_types, AxisType) else tuple(axis_types)
    if len(types) != n or not all(isinstance(t, AxisType) for t in types):
        raise ValueError(f"Mesh: axis_types must be {n} AxisType values, one per axis name; got {axis_types!r}")
    return types


class Mesh:
    """Devices arranged in an array with named axes, as jax.sharding.Mesh(devices, axis_names, axis_types): devices
    is an array (or nested lists) of devices whose rank is the number of names. tracejit has one device, so the
    mesh is that device in an array of ones; more raises. `with mesh:` makes it the mesh shard_map uses by default
    (also jax.set_mesh)."""

    def __init__(self, devices, axis_names, axis_types=None):
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        grid = np.array(devices, dtype=object)
        if grid.ndim != len(names):
            raise ValueError(f"Mesh requires the ndim of its first argument (`devices`) to equal the length of its "
                             f"second argument (`axis_names`), but got devices.ndim == {grid.ndim} and "
                             f"len(axis_names) == {len(names)}.")
        if len(set(names)) != len(names) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"Mesh: axis_names must be distinct strings, got {names!r}")
        if grid.size > device_count() or any(d is not CPU for d in grid.flat):
            raise ValueError(f"Mesh of shape {dict(zip(names, grid.shape))} needs {grid.size} distinct devices; "
                             f"tracejit has {device_count()} (the CPU, {CPU!r}), so every mesh axis has size 1: "
                             f"make_mesh({(1,) * len(names)}, {names!r})")
        self.devices, self.axis_names = grid, names
        self.axis_types = _axis_types(axis_types, len(names), AxisType.Auto)

    shape = property(lambda self: collections.OrderedDict(zip(self.axis_names, self.devices.shape)),
                     doc="{axis name: size}, in order")
    axis_sizes = property(lambda self: tuple(self.devices.shape), doc="The size of each axis")
    shape_tuple = property(lambda self: tuple(zip(self.axis_names, self.devices.shape)), doc="((name, size), ...)")
    size = property(lambda self: math.prod(self.devices.shape), doc="The number of devices")
    empty = property(lambda self: self.devices.size == 0, doc="Whether the mesh has no devices")
    device_ids = property(lambda self: np.vectorize(lambda d: d.id, otypes=[int])(self.devices),
                          doc="The devices' ids, in the mesh's shape")
    local_devices = property(lambda self: list(self.devices.flat), doc="The devices of this process: all")
    local_mesh = property(lambda self: self, doc="The mesh of this process's devices: the mesh itself")
    is_multi_process = False

    def __eq__(self, other):
        return (isinstance(other, Mesh) and (self.axis_names, self.axis_sizes, self.axis_types)
                == (other.axis_names, other.axis_sizes, other.axis_types))

    def __hash__(self):
        return hash((self.axis_names, self.axis_sizes, self.axis_types))

    def __repr__(self):
        return f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, axis_types={self.axis_types})"

    def __str__(self):
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        return f"Mesh({axes}, axis_types={self.axis_types!r})"

    def __enter__(self):
        _context.meshes.append(self)
        return self

    def __exit__(self, *exc):
        _context.meshes.pop()


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A Mesh of the given axis sizes and names over the first devices, as jax.make_mesh (axes Explicit unless
    axis_types says otherwise, as in JAX): with one device, every size must be 1."""
    shape = tuple(int(s) for s in axis_shapes)
    names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
    if len(shape) != len(names):
        raise ValueError(f"make_mesh: axis_shapes {shape} and axis_names {names} must have the same length")
    available = list(devices) if devices is not None else [CPU]
    if math.prod(shape) > len(available):
        raise ValueError(f"Number of devices {len(available)} must be >= the product of mesh_shape {shape}: "
                         f"tracejit has one device (the CPU), so every axis of a mesh has size 1")
    grid = np.empty(shape, dtype=object)
    grid.reshape(-1)[:] = available[:math.prod(shape)]
    return Mesh(grid, names, _axis_types(axis_types, len(names), AxisType.Explicit))


class _Context(threading.local):
    def __init__(self):
        self.meshes = []      # `with mesh:` and set_mesh, innermost last


_context = _Context()


def current_mesh():
    """The mesh set by `with mesh:` or set_mesh (innermost), or None."""
    return _context.meshes[-1] if _context.meshes else None


class set_mesh:
    """Make `mesh` the mesh that shard_map uses when given none, as jax.set_mesh: called alone it stays set; as a
    context manager (`with set_mesh(mesh):`), until the block ends. Outside traces only, as in JAX."""

    def __init__(self, mesh):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"set_mesh: expected a Mesh, got {type(mesh).__name__}")
        if current_builder(()) is not None:
            raise ValueError("`set_mesh` can only be used outside of jit (and of the traces of grad, vmap ...), "
                             "as in JAX: set the mesh before calling the function")
        self._before = list(_context.meshes)
        _context.meshes.append(mesh)

    def __enter__(self):
        return _context.meshes[-1]

    def __exit__(self, *exc):
        _context.meshes[:] = self._before


class NamedSharding:
    """An array split over a mesh by a PartitionSpec, as jax.NamedSharding(mesh, spec): the spec's names must be
    axes of the mesh, each used once. On one device each shard is the whole array."""

    def __init__(self, mesh, spec, *, memory_kind=None):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding: mesh must be a Mesh, got {type(mesh).__name__}")
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding: spec must be a PartitionSpec (jax.P), got {spec!r}")
        check_spec(spec, mesh.axis_names, "NamedSharding spec")
        self.mesh, self.spec, self.memory_kind = mesh, spec, memory_kind or "device"

    device_set = property(lambda self: set(self.mesh.devices.flat), doc="The devices that hold shards")
    addressable_devices = device_set
    num_devices = property(lambda self: self.mesh.size, doc="The number of devices")
    is_fully_addressable = True
    is_fully_replicated = property(lambda self: all(self.mesh.shape[n] == 1 for n in self.spec.names()),
                                   doc="Whether each device holds the whole array (always, on one device)")

    def shard_shape(self, global_shape):
        """The shape of each shard of an array of global_shape."""
        return _shard_shape(global_shape, self.spec, self.mesh)

    def __eq__(self, other):
        return isinstance(other, NamedSharding) and (self.mesh, self.spec) == (other.mesh, other.spec)

    def __hash__(self):
        return hash((self.mesh, self.spec))

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}, memory_kind={self.memory_kind})"


class SingleDeviceSharding:
    """The whole array on one device, as jax.sharding.SingleDeviceSharding(device)."""

    def __init__(self, device, *, memory_kind=None):
        if device is not CPU:
            raise ValueError(f"SingleDeviceSharding: tracejit's one device is {CPU!r}, got {device!r}")
        self.device, self.memory_kind = device, memory_kind or "device"

    device_set = property(lambda self: {self.device}, doc="{the device}")
    addressable_devices = device_set
    num_devices = 1
    is_fully_addressable = is_fully_replicated = True

    def shard_shape(self, global_shape):
        """global_shape: one shard holds the whole array."""
        return tuple(global_shape)

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding)

    def __hash__(self):
        return hash(SingleDeviceSharding)

    def __repr__(self):
        return f"SingleDeviceSharding(device={self.device!r}, memory_kind={self.memory_kind})"


def check_shardings(shardings, what):
    """Raise unless shardings is a pytree of NamedSharding, SingleDeviceSharding, PartitionSpec and None."""
    kinds = (NamedSharding, SingleDeviceSharding, PartitionSpec)
    for leaf in tree_flatten(shardings, is_leaf=lambda x: x is None)[0]:
        if leaf is not None and not isinstance(leaf, kinds):
            raise TypeError(f"{what} must be a pytree of shardings (NamedSharding, SingleDeviceSharding, a "
                            f"PartitionSpec or None), got {leaf!r}")


def check_spec(spec, axis_names, what):
    """Raise unless each name of spec is one of axis_names, used once."""
    names = spec.names()
    for n in names:
        if n not in axis_names:
            raise ValueError(f"{what} {spec!r} refers to mesh axis {n!r}, which is not among {tuple(axis_names)}")
    if len(set(names)) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"{what} {spec!r} uses mesh axis {repeated[0]!r} more than once: a mesh axis can split "
                         "at most one dimension")


def _shard_shape(global_shape, spec, mesh):
    shape = list(global_shape)
    if len(spec) > len(shape):
        raise ValueError(f"shard_shape: spec {spec!r} has {len(spec)} entries, more than the rank of shape {shape}")
    for d, p in enumerate(spec):
        parts = math.prod(mesh.shape[n] for n in PartitionSpec(p).names()) if p is not None else 1
        if shape[d] % parts:
            raise ValueError(f"shard_shape: dimension {d} of size {shape[d]} does not split into {parts} shards")
        shape[d] //= parts
    return tuple(shape)


__all__ = ["AxisType", "Mesh", "NamedSharding", "P", "PartitionSpec", "SingleDeviceSharding", "make_mesh",
           "set_mesh"]
