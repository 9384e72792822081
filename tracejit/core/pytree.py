"""Pytrees: nested tuples, lists, dicts, namedtuples, None and registered classes, flattened to leaves."""
import functools
from collections import namedtuple

_Node = namedtuple("_Node", "flatten unflatten")
_registry = {
    tuple: _Node(lambda t: (t, None), lambda _, c: tuple(c)),
    list: _Node(lambda t: (t, None), lambda _, c: list(c)),
    dict: _Node(lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))), lambda keys, c: dict(zip(keys, c))),
    type(None): _Node(lambda _: ((), None), lambda _, c: None),
}


def register_pytree_node(nodetype, flatten_func, unflatten_func):
    """flatten_func(x) -> (children, aux_data); unflatten_func(aux_data, children) -> x, as in JAX."""
    _registry[nodetype] = _Node(flatten_func, unflatten_func)


def _make_namedtuple(cls, _, children):
    return cls(*children)


def _node_of(x):
    node = _registry.get(type(x))
    if node is None and isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return _Node(lambda t: (tuple(t), None), functools.partial(_make_namedtuple, type(x)))
    return node


class PyTreeDef:
    """The structure of a pytree with its leaves taken out; hashable, so it can key a cache."""

    __slots__ = ("aux", "children", "nodetype", "num_leaves")

    def __init__(self, nodetype, aux, children):
        self.nodetype, self.aux, self.children = nodetype, aux, tuple(children)
        self.num_leaves = 1 if nodetype is None else sum(c.num_leaves for c in self.children)

    def _key(self):
        return (self.nodetype, self.aux, self.children)

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        if self.nodetype is None:
            return "*"
        inner = ", ".join(map(repr, self.children))
        return f"PyTreeDef({self.nodetype.__name__}, [{inner}])"


LEAF = PyTreeDef(None, None, ())


def tree_flatten(tree, is_leaf=None):
    leaves = []

    def walk(x):
        node = None if is_leaf is not None and is_leaf(x) else _node_of(x)
        if node is None:
            leaves.append(x)
            return LEAF
        children, aux = node.flatten(x)
        return PyTreeDef(type(x), aux, [walk(c) for c in children])

    return leaves, walk(tree)


def tree_unflatten(treedef, leaves):
    leaves = iter(leaves)

    def build(td):
        if td.nodetype is None:
            return next(leaves)
        node = _node_of_type(td.nodetype)
        return node.unflatten(td.aux, [build(c) for c in td.children])

    return build(treedef)


def _node_of_type(nodetype):
    node = _registry.get(nodetype)
    if node is None:  # a namedtuple class
        return _Node(None, functools.partial(_make_namedtuple, nodetype))
    return node


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef_flatten_up_to(treedef, r) for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def treedef_flatten_up_to(treedef, tree):
    """The subtrees of `tree` at the leaf positions of `treedef` (for in_axes-style prefix trees)."""
    out = []

    def walk(td, x):
        if td.nodetype is None:
            out.append(x)
            return
        node = _node_of(x)
        if node is None or (type(x) is not td.nodetype and not _same_namedtuple(td.nodetype, x)):
            raise ValueError(f"expected a {td.nodetype.__name__} matching the tree structure {td}, got {x!r}")
        children, aux = node.flatten(x)
        if aux != td.aux or len(children) != len(td.children):
            raise ValueError(f"tree structure mismatch: expected {td}, got {tree_structure(x)}")
        for c, ctd in zip(children, td.children):
            walk(ctd, c)

    walk(treedef, tree)
    return out


def _same_namedtuple(nodetype, x):
    return isinstance(x, nodetype)


def tree_flatten_with_path(tree, prefix=""):
    """Leaves with their access paths (`[0]['w'].b`), for error messages that name an argument."""
    leaves, treedef = tree_flatten(tree)
    paths = []

    def walk(td, path):
        if td.nodetype is None:
            paths.append(path)
        elif td.nodetype is dict:
            for k, c in zip(td.aux, td.children):
                walk(c, f"{path}[{k!r}]")
        elif hasattr(td.nodetype, "_fields"):
            for f, c in zip(td.nodetype._fields, td.children):
                walk(c, f"{path}.{f}")
        else:
            for i, c in enumerate(td.children):
                walk(c, f"{path}[{i}]")

    walk(treedef, prefix)
    return list(zip(paths, leaves)), treedef
