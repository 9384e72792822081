"""tracejit.tree_util against jax.tree_util: key paths (their text, simple or not), the class-based registrations
(a class's own tree_flatten, with keys, dataclasses, static classes, Partial) through jit, grad and vmap, and the
treedef helpers."""
import collections
import dataclasses

import numpy as np
import pytest

import tracejit as tj
import tracejit.tree_util as ttu

jax = pytest.importorskip("jax", reason="compared with jax.tree_util (pip install 'tracejit[test]')")
jtu = jax.tree_util

Point = collections.namedtuple("Point", "x y")
TREES = [{"a": [1, (2, Point(3, None))], "b": None, "c": np.ones(2)}, [1, [2, [3, []]], {}], Point(1, {"k": 2}), 5,
         {"z": 1, "a": {"y": (2,), "b": 3}}]


def _paths(module, tree, **keystr):
    return [(module.keystr(path, **keystr), x if np.ndim(x) == 0 else tuple(x))
            for path, x in module.tree_leaves_with_path(tree)]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_key_paths_as_jax(tree):
    assert _paths(ttu, tree) == _paths(jtu, tree)
    assert _paths(ttu, tree, simple=True, separator="/") == _paths(jtu, tree, simple=True, separator="/")
    ours = ttu.tree_map_with_path(lambda p, x: ttu.keystr(p), tree)
    assert ours == jtu.tree_map_with_path(lambda p, x: jtu.keystr(p), tree)
    (pairs, treedef), (theirs, _) = ttu.tree_flatten_with_path(tree), jtu.tree_flatten_with_path(tree)
    assert [repr(k) for p, _ in pairs for k in p] == [repr(k) for p, _ in theirs for k in p]
    assert treedef == ttu.tree_structure(tree) and tj.tree.leaves_with_path(tree) == pairs


@ttu.register_pytree_node_class
class Box:
    def __init__(self, value, name):
        self.value, self.name = value, name

    def tree_flatten(self):
        return (self.value,), self.name

    @classmethod
    def tree_unflatten(cls, name, children):
        return cls(children[0], name)


@ttu.register_dataclass
@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: np.ndarray
    act: str = dataclasses.field(default="tanh", metadata={"static": True})


@ttu.register_static
class Config:
    def __init__(self, scale):
        self.scale = scale

    def __hash__(self):
        return hash(self.scale)

    def __eq__(self, other):
        return isinstance(other, Config) and other.scale == self.scale


def test_registered_classes_pass_through_jit_grad_and_vmap():
    box = tj.jit(lambda b: Box(b.value * 2, b.name))(Box(np.arange(3.0), "n"))
    assert isinstance(box, Box) and box.name == "n"
    np.testing.assert_array_equal(box.value, [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(tj.grad(lambda b: (b.value ** 2).sum())(Box(np.arange(3.0), "n")).value, [0, 2, 4])

    layer = Layer(np.full((2, 2), 0.5), np.ones(2), "relu")
    assert [ttu.keystr(p) for p, _ in ttu.tree_leaves_with_path(layer)] == [".w", ".b"]
    grads = tj.grad(lambda l, x: tj.numpy.sum(getattr(tj.nn, l.act)(x @ l.w + l.b)))(layer, np.ones(2))
    assert isinstance(grads, Layer) and grads.act == "relu"
    np.testing.assert_allclose(grads.w, np.ones((2, 2)))
    batched = tj.vmap(lambda l: Layer(l.w + 1, l.b, l.act))(Layer(np.zeros((3, 2)), np.ones((3, 2)), "x"))
    np.testing.assert_array_equal(batched.w, np.ones((3, 2)))

    scaled = tj.jit(lambda c, x: x * c.scale)
    np.testing.assert_array_equal(scaled(Config(3), np.ones(2)), [3.0, 3.0])
    np.testing.assert_array_equal(scaled(Config(4), np.ones(2)), [4.0, 4.0])    # another treedef: retraced
    assert ttu.tree_leaves((Config(1), 2)) == [2]


def test_partial_is_a_pytree_of_its_arguments():
    f = ttu.Partial(lambda a, b, c: a * b + c, np.float64(2.0), c=1.0)
    np.testing.assert_array_equal(tj.jit(lambda f, x: f(x))(f, np.arange(3.0)), [1.0, 3.0, 5.0])
    assert ([ttu.keystr(p) for p, _ in ttu.tree_leaves_with_path(f)] ==
            [jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path(jtu.Partial(lambda a, b, c: 0, 2.0, c=1.0))])
    assert tj.grad(lambda f: f(3.0))(f).args[0] == 3.0


def test_treedef_helpers_as_jax():
    tree = (1, [2, 3])
    for ours, theirs in [(ttu, jtu)]:
        td, jd = ours.tree_structure(tree), theirs.tree_structure(tree)
        assert len(ours.treedef_children(td)) == len(theirs.treedef_children(jd)) == 2
        assert ours.treedef_is_leaf(td) == theirs.treedef_is_leaf(jd) is False
        assert ours.treedef_is_leaf(ours.tree_structure(1)) and td.unflatten([4, 5, 6]) == (4, [5, 6])
        both = ours.treedef_tuple([ours.tree_structure(1), td])
        assert both.unflatten([0, 1, 2, 3]) == theirs.treedef_tuple([theirs.tree_structure(1), jd]).unflatten(
            [0, 1, 2, 3])
    prefix, full = [1, {"a": 2}], [[3, 4], {"a": (5, 6)}]
    assert ttu.tree_broadcast(prefix, full) == jtu.tree_broadcast(prefix, full)
    assert ttu.all_leaves([1, 2]) and not ttu.all_leaves([[1]])
    with pytest.raises(TypeError, match="required for Config, which is not a dataclass"):
        ttu.register_dataclass(Config)
