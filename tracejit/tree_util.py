"""Pytrees, as jax.tree_util: nested tuples, lists, dicts, namedtuples, None and registered classes."""
from .core.pytree import (
                          PyTreeDef,
                          register_pytree_node,
                          tree_all,
                          tree_flatten,
                          tree_flatten_with_path,
                          tree_leaves,
                          tree_map,
                          tree_reduce,
                          tree_structure,
                          tree_transpose,
                          tree_unflatten,
)

__all__ = ["PyTreeDef", "register_pytree_node", "tree_all", "tree_flatten", "tree_flatten_with_path", "tree_leaves",
           "tree_map", "tree_reduce", "tree_structure", "tree_transpose", "tree_unflatten"]
