"""Pytrees under JAX's short names, as jax.tree: `tj.tree.map(f, tree)`, `tj.tree.leaves(tree)` ..."""
from .core.pytree import tree_all as all
from .core.pytree import tree_flatten as flatten
from .core.pytree import tree_leaves as leaves
from .core.pytree import tree_map as map
from .core.pytree import tree_reduce as reduce
from .core.pytree import tree_structure as structure
from .core.pytree import tree_transpose as transpose
from .core.pytree import tree_unflatten as unflatten
from .core.pytree_keys import tree_broadcast as broadcast
from .core.pytree_keys import tree_flatten_with_path as flatten_with_path
from .core.pytree_keys import tree_leaves_with_path as leaves_with_path
from .core.pytree_keys import tree_map_with_path as map_with_path
from .core.pytree_registry import static
from .core.pytree_registry import tree_reduce_associative as reduce_associative

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map", "map_with_path",
           "reduce", "reduce_associative", "static", "structure", "transpose", "unflatten"]
