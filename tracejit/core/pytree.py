"""Pytrees: nested tuples, lists, dicts (OrderedDicts in their order, defaultdicts as dicts), namedtuples, None
and registered classes, flattened to leaves."""
import functools
from collections import OrderedDict, defaultdict, namedtuple

import numpy as np

_Node = namedtuple("_Node", "flatten unflatten")
_registry = {
    tuple: _Node(lambda t: (t, None), lambda _, c: tuple(c)),
    list: _Node(lambda t: (t, None), lambda _, c: list(c)),
    dict: _Node(lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))), lambda keys, c: dict(zip(keys, c))),
    type(None): _Node(lambda _: ((), None), lambda _, c: None),
    OrderedDict: _Node(lambda d: (list(d.values()), tuple(d)), lambda keys, c: OrderedDict(zip(keys, c))),
    defaultdict: _Node(lambda d: ([d[k] for k in sorted(d)], (d.default_factory, tuple(sorted(d)))),
                       lambda aux, c: defaultdict(aux[0], zip(aux[1], c))),
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

    __slots__ = ("aux", "nodetype", "num_leaves", "subtrees")

    def __init__(self, nodetype, aux, children):
        self.nodetype, self.aux, self.subtrees = nodetype, aux, tuple(children)
        self.num_leaves = 1 if nodetype is None else sum([c.num_leaves for c in self.subtrees])

    def _key(self):
        return (self.nodetype, self.aux, self.subtrees)

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)

    def children(self):
        """The treedefs of the root's children (JAX's method)."""
        return list(self.subtrees)

    def node_data(self):
        """(node type, auxiliary data) of the root, None for a leaf (JAX's method)."""
        return None if self.nodetype is None else (self.nodetype, self.aux)

    def flatten_up_to(self, tree):
        return treedef_flatten_up_to(self, tree)

    def __repr__(self):
        return f"PyTreeDef({self._text()})"

    def _text(self):
        """JAX's notation: * for a leaf, Python's for tuples, lists, dicts and None, CustomNode(...) for others."""
        kind, inner = self.nodetype, [c._text() for c in self.subtrees]
        if kind is None or kind is type(None):
            return "*" if kind is None else "None"
        if kind in (tuple, list):
            text = ", ".join(inner) + ("," if kind is tuple and len(inner) == 1 else "")
            return f"({text})" if kind is tuple else f"[{text}]"
        if kind is dict:
            return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(self.aux, inner)) + "}"
        head = f"namedtuple[{kind.__name__}]" if hasattr(kind, "_fields") and kind not in _registry else \
            f"{kind.__name__}[{self.aux}]"
        return f"CustomNode({head}, [{', '.join(inner)}])"


LEAF = PyTreeDef(None, None, ())


def tree_flatten(tree, is_leaf=None):
    """(leaves, treedef): the leaves in order (dict keys sorted) and the structure without them; is_leaf(x)
    True stops the descent at x."""
    leaves = []
    return leaves, _flatten(tree, is_leaf, leaves)


def _flatten(x, is_leaf, leaves):
    # module-level recursion: a recursive closure would form a reference cycle that keeps arrays alive
    node = None if type(x) is np.ndarray or (is_leaf is not None and is_leaf(x)) else _node_of(x)
    if node is None:
        leaves.append(x)
        return LEAF
    children, aux = node.flatten(x)
    return PyTreeDef(type(x), aux, [_flatten(c, is_leaf, leaves) for c in children])


def flatten_as(treedef, tree):
    """The tuple of the leaves of tree when its structure is treedef, else None; builds no PyTreeDef (for
    cache hits)."""
    leaves = []
    return tuple(leaves) if _match(treedef, tree, leaves) else None


def caller(treedef, fun, miss):
    """f(args, kwargs) -> fun(the tuple of the leaves of (args, kwargs)) when their structure is treedef
    (a 2-tuple: the positional arguments' tree and the keywords'), else miss: a jitted function's dispatch
    of calls with pytree arguments, in one Python call. fun must check the type of each leaf itself (the
    fast paths take exact ndarrays and scalar types only: no container passes as a leaf); args is a tuple
    and kwargs a dict."""
    source = _caller_source(treedef) if len(treedef.subtrees) == 2 else None
    if source is None:
        def call(args, kwargs):
            leaves = flatten_as(treedef, (args, kwargs))
            return miss if leaves is None else fun(leaves)
        return call
    text, keys = source
    scope = {"fun": fun, "miss": miss, "keys": keys, "missing": object()}
    exec(text, scope)     # noqa: S102 -- our own text, made from the treedef's structure only
    return scope.pop("call")       # (kept in scope, it would be a reference cycle)


@functools.lru_cache(maxsize=256)
def _caller_source(treedef):
    """(the text of caller's function for treedef, the dict keys it reads), or None where a node is not a
    tuple, list, dict or None. Leaves are not checked (the function called does it): each is an expression
    read in the call."""
    lines, leaves, keys = ["def call(args, kwargs):"], [], []

    def visit(td, var, known=None):
        if td.nodetype is None:
            leaves.append(var)
            return True
        if td.nodetype not in (tuple, list, dict, type(None)):
            return False
        if td.nodetype is type(None):
            lines.append(f" if {var} is not None: return miss")
            return True
        kind = "" if td.nodetype is known else f"type({var}) is not {td.nodetype.__name__} or "
        lines.append(f" if {kind}len({var}) != {len(td.subtrees)}: return miss")
        items = td.aux if td.nodetype is dict else range(len(td.subtrees))
        for item, child in zip(items, td.subtrees):
            if td.nodetype is dict:
                keys.append(item)
                key = f"keys[{len(keys) - 1}]"
                if child.nodetype is None:    # a missing key reads None, which no fast path takes
                    leaves.append(f"{var}.get({key})")
                    continue
                v = f"v{len(lines)}"
                lines.append(f" {v} = {var}.get({key}, missing)")
                lines.append(f" if {v} is missing: return miss")
            elif child.nodetype is None:
                leaves.append(f"{var}[{item}]")
                continue
            else:
                v = f"v{len(lines)}"
                lines.append(f" {v} = {var}[{item}]")
            if not visit(child, v):
                return False
        return True

    if treedef.nodetype is not tuple or not all(visit(c, r, known) for c, r, known in
                                                zip(treedef.subtrees, ("args", "kwargs"), (tuple, dict))):
        return None
    lines.append(f" return fun(({''.join(v + ', ' for v in leaves)}))")
    return "\n".join(lines), tuple(keys)


def _match(td, x, leaves):
    if td.nodetype is None:
        if type(x) is not np.ndarray and _node_of(x) is not None:
            return False
        leaves.append(x)
        return True
    if type(x) is not td.nodetype:
        return False
    if td.nodetype is dict:
        if len(x) != len(td.aux) or not all(k in x for k in td.aux):
            return False
        children = [x[k] for k in td.aux]
    else:
        children, aux = _node_of(x).flatten(x)
        if aux != td.aux:
            return False
    return len(children) == len(td.subtrees) and all(_match(c, y, leaves) for c, y in zip(td.subtrees, children))


def tree_unflatten(treedef, leaves):
    """The pytree of structure treedef with these leaves (the inverse of tree_flatten)."""
    return _build(treedef, iter(leaves))


def _build(td, leaves):
    if td.nodetype is None:
        return next(leaves)
    return _node_of_type(td.nodetype).unflatten(td.aux, [_build(c, leaves) for c in td.subtrees])


def _node_of_type(nodetype):
    node = _registry.get(nodetype)
    if node is None:  # a namedtuple class
        return _Node(None, functools.partial(_make_namedtuple, nodetype))
    return node


def tree_leaves(tree, is_leaf=None):
    """The leaves of tree, in tree_flatten's order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The treedef of tree."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """The tree of f applied to each leaf of tree and the matching subtrees of rest (trees with tree's
    structure, or deeper)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef_flatten_up_to(treedef, r) for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


_NO_INITIALIZER = object()


def tree_reduce(function, tree, initializer=_NO_INITIALIZER, is_leaf=None):
    """functools.reduce of function over the leaves of tree (from initializer, when given)."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree, *, is_leaf=None):
    """Whether every leaf of tree is true."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """A tree of structure outer of trees of structure inner turned into a tree of structure inner of trees
    of structure outer (inner None: the structure of the first inner tree), as jax.tree.transpose."""
    inners = treedef_flatten_up_to(outer_treedef, pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(inners[0]) if inners else LEAF
    columns = []
    for inner in inners:
        leaves, treedef = tree_flatten(inner)
        if treedef != inner_treedef:
            raise TypeError(f"tree_transpose: an inner tree has the structure {treedef}, not {inner_treedef}")
        columns.append(leaves)
    return tree_unflatten(inner_treedef, [tree_unflatten(outer_treedef, [c[i] for c in columns])
                                          for i in range(inner_treedef.num_leaves)])


def treedef_flatten_up_to(treedef, tree):
    """The subtrees of `tree` at the leaf positions of `treedef` (for in_axes-style prefix trees)."""
    out = []
    _up_to(treedef, tree, out)
    return out


def _up_to(td, x, out):
    if td.nodetype is None:
        out.append(x)
        return
    node = _node_of(x)
    if node is None or not isinstance(x, td.nodetype):
        raise ValueError(f"expected a {td.nodetype.__name__} matching the tree structure {td}, got {x!r}")
    children, aux = node.flatten(x)
    if aux != td.aux or len(children) != len(td.subtrees):
        raise ValueError(f"tree structure mismatch: expected {td}, got {tree_structure(x)}")
    for c, ctd in zip(children, td.subtrees):
        _up_to(ctd, c, out)


def leaf_names(tree, prefix=""):
    """The access path of each leaf as text (`x[0]['w'].b` for prefix x), for error messages that name an
    argument."""
    names = []
    _paths(tree_structure(tree), prefix, names)
    return names


def _paths(td, path, paths):
    if td.nodetype is None:
        paths.append(path)
    elif td.nodetype is dict:
        for k, c in zip(td.aux, td.subtrees):
            _paths(c, f"{path}[{k!r}]", paths)
    elif hasattr(td.nodetype, "_fields"):
        for f, c in zip(td.nodetype._fields, td.subtrees):
            _paths(c, f"{path}.{f}", paths)
    else:
        for i, c in enumerate(td.subtrees):
            _paths(c, f"{path}[{i}]", paths)
