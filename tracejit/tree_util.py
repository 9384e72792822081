"""Pytrees, as jax.tree_util."""
from .core.pytree import (
                          PyTreeDef,
                          register_pytree_node,
                          tree_flatten,
                          tree_flatten_with_path,
                          tree_leaves,
                          tree_map,
                          tree_structure,
                          tree_unflatten,
)

__all__ = ["PyTreeDef", "register_pytree_node", "tree_flatten", "tree_flatten_with_path", "tree_leaves",
           "tree_map", "tree_structure", "tree_unflatten"]
