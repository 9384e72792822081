"""Pytrees under JAX's short names, as jax.tree: `tj.tree.map(f, tree)`, `tj.tree.leaves(tree)` ..."""
from .core.pytree import tree_all as all
from .core.pytree import tree_flatten as flatten
from .core.pytree import tree_leaves as leaves
from .core.pytree import tree_map as map
from .core.pytree import tree_reduce as reduce
from .core.pytree import tree_structure as structure
from .core.pytree import tree_transpose as transpose
from .core.pytree import tree_unflatten as unflatten

__all__ = ["all", "flatten", "leaves", "map", "reduce", "structure", "transpose", "unflatten"]
