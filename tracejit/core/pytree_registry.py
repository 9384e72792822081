"""One level of a pytree at a time (jax.tree_util's flatten_one_level, is_tree_node), the associative reduction
of its leaves, the typing names KeyEntry and KeyPath, and default_registry: the registry every pytree function
of tracejit reads, as an object with the methods of JAX's PyTreeRegistry."""
import dataclasses
import typing

import numpy as np

from . import pytree, pytree_keys

KeyEntry = typing.TypeVar("KeyEntry", bound=typing.Hashable)
KeyPath = tuple[KeyEntry, ...]


def _is_node_value(x):
    return type(x) is not np.ndarray and pytree._node_of(x) is not None


def _one_level(tree):
    """(children, aux) of tree's root node, or None for a leaf. A namedtuple's aux is its class, as in JAX."""
    if not _is_node_value(tree):
        return None
    children, aux = pytree._node_of(tree).flatten(tree)
    if isinstance(tree, tuple) and hasattr(type(tree), "_fields") and type(tree) not in pytree._registry:
        aux = type(tree)
    return children, aux


def flatten_one_level(tree):
    """(children, aux data) of the root node of tree: its children as they are (not flattened further) and the
    hashable metadata its flatten function gives (a dict's sorted keys, a namedtuple's class, None for tuples
    and lists). A leaf is a ValueError, as in JAX."""
    out = _one_level(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def flatten_one_level_with_keys(tree):
    """As flatten_one_level, the children paired with their keys: ([(key, child)], aux data)."""
    out = _one_level(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return tuple(pytree_keys._keyed_children(tree, pytree._node_of(tree))), out[1]


def is_tree_node(typ):
    """Whether the type typ is a pytree node type: registered (tuple, list, dict, None and user classes) or a
    namedtuple class. It takes a type, not a value, as jax.tree_util.is_tree_node."""
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node: expected a type, got {typ!r} of type {type(typ).__name__}")
    return typ in pytree._registry or (issubclass(typ, tuple) and hasattr(typ, "_fields"))


class _Unspecified:
    def __repr__(self):
        return "<unspecified>"


_UNSPECIFIED = _Unspecified()


def tree_reduce_associative(operation, tree, *, identity=_UNSPECIFIED, is_leaf=None):
    """The reduction of tree's leaves by an associative operation, in a balanced tree of calls (logarithmic
    depth, as JAX's: operation(reduce(first half), reduce(second half))); identity is returned for a tree
    without leaves, which is a TypeError without it."""
    def reduce(seq):
        if len(seq) == 1:
            return seq[0]
        half = len(seq) // 2
        return operation(reduce(seq[:half]), reduce(seq[half:]))
    leaves = pytree.tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _UNSPECIFIED:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    return reduce(leaves)


def static(**kwargs):
    """dataclasses.field(**kwargs) with metadata static=True (jax.tree.static): a field register_dataclass makes
    a static (meta) field rather than a child."""
    metadata = dict(kwargs.pop("metadata", None) or {})
    metadata["static"] = True
    return dataclasses.field(metadata=metadata, **kwargs)


class PyTreeRegistry:
    """tracejit's pytree registry as an object with the methods of JAX's PyTreeRegistry (default_registry):
    registering through it registers for every pytree function of tracejit (there is one registry)."""

    def flatten(self, tree, leaf_predicate=None):
        """(leaves, treedef), as tree_flatten."""
        return pytree.tree_flatten(tree, leaf_predicate)

    def flatten_one_level(self, tree):
        """(children, aux data) of tree's root, or None for a leaf."""
        return _one_level(tree)

    def flatten_one_level_with_keys(self, tree):
        """([(key, child)], aux data) of tree's root, or None for a leaf."""
        return None if _one_level(tree) is None else flatten_one_level_with_keys(tree)

    def flatten_with_path(self, tree, leaf_predicate=None):
        """([(key path, leaf)], treedef), as tree_flatten_with_path. leaf_predicate takes (key path, value) as
        JAX's registry method does."""
        return pytree_keys.tree_flatten_with_path(tree, leaf_predicate, is_leaf_takes_path=True)

    def is_node(self, type):
        """Whether type is a pytree node type (is_tree_node)."""
        return is_tree_node(type)

    def register_node(self, type, to_iterable, from_iterable, to_iterable_with_keys=None):
        """Registers a node type (register_pytree_node; with keys when to_iterable_with_keys is given)."""
        if to_iterable_with_keys is None:
            pytree.register_pytree_node(type, to_iterable, from_iterable)
        else:
            pytree_keys.register_pytree_with_keys(type, to_iterable_with_keys, from_iterable, to_iterable)

    def register_dataclass_node(self, type, data_fields, meta_fields, /):
        """Registers a dataclass-like type by its data and meta fields (register_dataclass)."""
        pytree_keys.register_dataclass(type, data_fields=data_fields, meta_fields=meta_fields)

    def __repr__(self):
        return "tracejit.tree_util.default_registry"


default_registry = PyTreeRegistry()
