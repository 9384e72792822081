"""Pytrees, as jax.tree_util: nested tuples, lists, dicts, namedtuples, None and registered classes, with key
paths."""
from .core import pytree as _pytree
from .core.pytree import (
    PyTreeDef,
    tree_all,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_reduce,
    tree_structure,
    tree_transpose,
    tree_unflatten,
)
from .core.pytree_keys import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    Partial,
    SequenceKey,
    all_leaves,
    keystr,
    register_dataclass,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    register_static,
    tree_broadcast,
    tree_flatten_with_path,
    tree_leaves_with_path,
    tree_map_with_path,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
)
from .core.pytree_registry import (
    KeyEntry,
    KeyPath,
    default_registry,
    flatten_one_level,
    flatten_one_level_with_keys,
    is_tree_node,
    tree_reduce_associative,
)


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """flatten_func(x) -> (children, aux_data); unflatten_func(aux_data, children) -> x, as in JAX; with
    flatten_with_keys_func(x) -> ([(key, child)], aux_data), the children's keys name them in key paths."""
    if flatten_with_keys_func is None:
        _pytree.register_pytree_node(nodetype, flatten_func, unflatten_func)
    else:
        register_pytree_with_keys(nodetype, flatten_with_keys_func, unflatten_func, flatten_func)


__all__ = ["DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial", "PyTreeDef", "SequenceKey", "all_leaves", "default_registry", "flatten_one_level", "flatten_one_level_with_keys",
           "is_tree_node",
           "keystr", "register_dataclass", "register_pytree_node", "register_pytree_node_class",
           "register_pytree_with_keys", "register_pytree_with_keys_class", "register_static", "tree_all",
           "tree_broadcast", "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path",
           "tree_map", "tree_map_with_path", "tree_reduce", "tree_reduce_associative", "tree_structure", "tree_transpose", "tree_unflatten",
           "treedef_children", "treedef_is_leaf", "treedef_tuple"]
