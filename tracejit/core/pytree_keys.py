"""Key paths of pytrees (jax.tree_util's SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey) and the class-based
ways to register nodes: with keys, a class's own tree_flatten, dataclasses, static classes and Partial."""
import dataclasses
import functools
from collections import OrderedDict, defaultdict

import numpy as np

from . import pytree


def _key_type(name, field, text):
    """A frozen dataclass of one field whose str() is text(value): a step of a key path, as JAX's."""
    cls = dataclasses.make_dataclass(name, [field], frozen=True,
                                     namespace={"__str__": lambda self: text(getattr(self, field))})
    cls.__module__ = __name__      # (so that a key path pickles)
    return cls


SequenceKey = _key_type("SequenceKey", "idx", lambda idx: f"[{idx!r}]")
DictKey = _key_type("DictKey", "key", lambda key: f"[{key!r}]")
GetAttrKey = _key_type("GetAttrKey", "name", lambda name: f".{name}")
FlattenedIndexKey = _key_type("FlattenedIndexKey", "key", lambda key: f"[<flat index {key}>]")


_with_keys = {}      # nodetype -> flatten_with_keys(x) -> ([(key, child)], aux)


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """A node whose children have keys: flatten_with_keys(x) -> ([(key, child)], aux_data)."""
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [child for _, child in pairs], aux
    pytree.register_pytree_node(nodetype, flatten_func, unflatten_func)
    _with_keys[nodetype] = flatten_with_keys
    return nodetype


def _keyed_children(x, node):
    """[(key, child)] of a pytree node x."""
    if type(x) in _with_keys:
        return list(_with_keys[type(x)](x)[0])
    children, aux = node.flatten(x)
    if type(x) in (dict, OrderedDict, defaultdict):
        keys = map(DictKey, aux[1] if type(x) is defaultdict else aux)
    elif isinstance(x, tuple) and hasattr(type(x), "_fields"):
        keys = map(GetAttrKey, type(x)._fields)
    elif type(x) in (tuple, list):
        keys = map(SequenceKey, range(len(children)))
    else:
        keys = map(FlattenedIndexKey, range(len(children)))
    return list(zip(keys, children))


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """([(key path, leaf)], treedef): each leaf with the tuple of keys that leads to it, as JAX; with
    is_leaf_takes_path, is_leaf(key path, x) decides where the descent stops."""
    if is_leaf is not None and is_leaf_takes_path:
        pairs = []
        return pairs, _walk_with_path(tree, is_leaf, (), pairs)
    leaves, treedef = pytree.tree_flatten(tree, is_leaf)
    paths = []
    _key_paths(tree, is_leaf, (), paths)
    return list(zip(paths, leaves)), treedef


def _walk_with_path(x, is_leaf, path, pairs):
    node = None if type(x) is np.ndarray or is_leaf(path, x) else pytree._node_of(x)
    if node is None:
        pairs.append((path, x))
        return pytree.LEAF
    return pytree.PyTreeDef(type(x), node.flatten(x)[1], [_walk_with_path(c, is_leaf, (*path, k), pairs)
                                                         for k, c in _keyed_children(x, node)])


def _key_paths(x, is_leaf, path, out):
    node = None if type(x) is np.ndarray or (is_leaf is not None and is_leaf(x)) else pytree._node_of(x)
    if node is None:
        out.append(path)
        return
    for key, child in _keyed_children(x, node):
        _key_paths(child, is_leaf, (*path, key), out)


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """[(key path, leaf)] in tree_flatten's order."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """The tree of f(key path, leaf, *matching subtrees of rest)."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [pytree.treedef_flatten_up_to(treedef, r) for r in rest]
    return pytree.tree_unflatten(treedef, [f(path, x, *xs) for (path, x), *xs in zip(pairs, *others)])


def _simple(key):
    return str(next(iter(dataclasses.astuple(key)))) if dataclasses.is_dataclass(key) else str(key)


def keystr(keys, *, simple=False, separator=""):
    """A key path as text: "['a'][0].b" (simple: "a0b", joined by separator)."""
    return separator.join(map(_simple if simple else str, keys))


def register_pytree_node_class(cls):
    """Registers cls by its own methods: x.tree_flatten() -> (children, aux), cls.tree_unflatten(aux, children)."""
    pytree.register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls):
    """Registers cls by its methods tree_flatten_with_keys, tree_unflatten (and tree_flatten, when it has one)."""
    flatten = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    return register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten, flatten)


def register_dataclass(nodetype=None, data_fields=None, meta_fields=None, drop_fields=()):
    """Registers a dataclass: data_fields are children (keyed by name), meta_fields static; for a dataclass
    they default to its fields, those with metadata static=True being meta (drop_fields left out)."""
    if nodetype is None:
        return functools.partial(register_dataclass, data_fields=data_fields, meta_fields=meta_fields,
                                 drop_fields=drop_fields)
    if data_fields is None or meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass: data_fields and meta_fields are required for {nodetype.__name__}, "
                            f"which is not a dataclass")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)] if meta_fields is None else meta_fields
        data_fields = [f.name for f in fields if f.name not in meta_fields] if data_fields is None else data_fields
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)

    def flatten_with_keys(x):
        return ([(GetAttrKey(n), getattr(x, n)) for n in data_fields],
                tuple(getattr(x, n) for n in meta_fields))

    def unflatten(meta, children):
        return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, children)))

    return register_pytree_with_keys(nodetype, flatten_with_keys, unflatten,
                                     lambda x: ([getattr(x, n) for n in data_fields],
                                                tuple(getattr(x, n) for n in meta_fields)))


def register_static(cls):
    """Registers cls as a node with no children: its (hashable) instances are static parts of a treedef."""
    pytree.register_pytree_node(cls, lambda x: ((), x), lambda x, _: x)
    return cls


class Partial(functools.partial):
    """functools.partial as a pytree: the arguments are its children, the function static (so a Partial passes
    through jit, vmap and grad as jax.tree_util.Partial)."""


pytree.register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                            lambda func, children: Partial(func, *children[0], **children[1]))


def all_leaves(iterable, is_leaf=None):
    """Whether every element of iterable is a leaf."""
    return all(pytree.tree_structure(x, is_leaf) == pytree.LEAF for x in iterable)


def treedef_is_leaf(treedef):
    """Whether treedef is a single leaf's."""
    return treedef.nodetype is None


def treedef_children(treedef):
    """The treedefs of the root's children."""
    return treedef.children()


def treedef_tuple(treedefs):
    """The treedef of a tuple of trees with these treedefs."""
    return pytree.PyTreeDef(tuple, None, treedefs)


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """prefix_tree's leaves repeated over the matching subtrees of full_tree (a tree with full_tree's structure)."""
    full_def = pytree.tree_structure(full_tree, is_leaf)
    prefix_leaves, prefix_def = pytree.tree_flatten(prefix_tree, is_leaf)
    subtrees = pytree.treedef_flatten_up_to(prefix_def, full_tree)
    return pytree.tree_unflatten(full_def, [x for p, s in zip(prefix_leaves, subtrees)
                                            for x in [p] * len(pytree.tree_leaves(s, is_leaf))])
