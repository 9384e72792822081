"""JAX names tracejit gained outside lax, against JAX itself: tree_util's one-level flattening, is_tree_node,
tree_reduce_associative and default_registry; custom_batching's custom_vmap and sequential_vmap (vmap, jit, jvp,
vmap of jvp, and the errors); experimental.io_callback (an effect: kept, in order, per example under vmap); the
settings enable_x64, default_matmul_precision, default_device and numpy_dtype_promotion (strict raises
dtypes.TypePromotionError, eagerly and under jit); tnp's place, frompyfunc, mask_indices, einsum_path and
host-side I/O; dtypes.extended / prng_key, random.key_dtype and nn.initializers.Initializer."""
import collections
import dataclasses
import io
import operator
import typing
import warnings

import ml_dtypes
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import jax.tree_util as jtu

import tracejit as tj
import tracejit.numpy as tnp
import tracejit.tree_util as ttu
from tracejit.custom_batching import custom_vmap, sequential_vmap
from tracejit.experimental import io_callback

Point = collections.namedtuple("Point", "x y")
R = np.random.default_rng(7)


# ------------------------------------------------------------------------------------------------ tree_util

@pytest.mark.parametrize("tree", [{"b": 1, "a": (2, [3])}, (1, 2), [3], None, Point(1, (2,))],
                         ids=["dict", "tuple", "list", "none", "namedtuple"])
def test_flatten_one_level_as_jax(tree):
    children, aux = ttu.flatten_one_level(tree)
    jchildren, jaux = jtu.flatten_one_level(tree)
    assert list(children) == list(jchildren) and aux == jaux
    pairs, aux = ttu.flatten_one_level_with_keys(tree)
    jpairs, jaux = jtu.flatten_one_level_with_keys(tree)
    assert [c for _, c in pairs] == [c for _, c in jpairs] and aux == jaux
    if not isinstance(tree, Point):      # (JAX 0.10.2 names both fields of a namedtuple .x: a JAX bug)
        assert [str(k) for k, _ in pairs] == [str(k) for k, _ in jpairs]
    else:
        assert [str(k) for k, _ in pairs] == [".x", ".y"]


def test_flatten_one_level_of_leaves_and_registered_nodes():
    for leaf in (1.0, np.ones(2)):
        with pytest.raises(ValueError, match="can't tree-flatten type"):
            ttu.flatten_one_level(leaf)
    assert ttu.default_registry.flatten_one_level(1.0) is None

    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b
    ttu.default_registry.register_node(Box, lambda x: ((x.a, x.b), "meta"), lambda aux, c: Box(*c))
    assert ttu.flatten_one_level(Box(1, [2])) == ((1, [2]), "meta")
    assert ttu.is_tree_node(Box) and ttu.default_registry.is_node(Box)
    assert tj.tree.leaves(Box(1, [2, 3])) == [1, 2, 3]      # one registry: every tree function sees it


def test_is_tree_node_as_jax():
    for typ in (int, float, type(None), tuple, list, dict, Point, np.ndarray):
        assert ttu.is_tree_node(typ) == jtu.is_tree_node(typ), typ
    with pytest.raises(TypeError, match="expected a type"):
        ttu.is_tree_node((1, 2))


def test_tree_reduce_associative_as_jax():
    tree = [1, (2, 3), [4, 5, 6], {"a": 7}]
    pair = lambda a, b: (a, b)
    assert ttu.tree_reduce_associative(pair, tree) == jtu.tree_reduce_associative(pair, tree)
    assert tj.tree.reduce_associative(operator.add, tree) == jax.tree.reduce_associative(operator.add, tree) == 28
    assert ttu.tree_reduce_associative(operator.add, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        ttu.tree_reduce_associative(operator.add, [None])


def test_default_registry_flatten_with_path_and_static_fields():
    tree = {"a": (1, 2), "b": [3]}
    mine, jax_ = ttu.default_registry.flatten_with_path(tree), jtu.default_registry.flatten_with_path(tree)
    assert [(tuple(map(str, p)), v) for p, v in mine[0]] == [(tuple(map(str, p)), v) for p, v in jax_[0]]
    stop = lambda path, x: isinstance(x, tuple)
    mine = ttu.default_registry.flatten_with_path(tree, stop)[0]
    assert [(tuple(map(str, p)), v) for p, v in mine] == [
        (tuple(map(str, p)), v) for p, v in jtu.default_registry.flatten_with_path(tree, stop)[0]]
    assert ttu.default_registry.flatten(tree)[0] == [1, 2, 3]
    assert ttu.KeyPath == tuple[ttu.KeyEntry, ...]

    @ttu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: float
        op: str = tj.tree.static(default="add")
    leaves, treedef = ttu.tree_flatten(Op(1.5))
    assert leaves == [1.5] and ttu.tree_unflatten(treedef, [2.5]) == Op(2.5, "add")


# ------------------------------------------------------------------------------------------------ custom_vmap

def _custom(M, custom_vmap):
    @custom_vmap
    def f(x, y):
        return M.numpy.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        assert xs.shape[0] == axis_size and in_batched[0]
        return M.numpy.cos(xs) * ys + 1.0, True          # a different function, to see that vmap uses it
    return f


def test_custom_vmap_uses_its_rule_as_jax():
    xs, ys = R.normal(size=(4, 3)), R.normal(size=3)
    f, g = _custom(tj, custom_vmap), _custom(jax, jax.custom_batching.custom_vmap)
    want = jax.vmap(g, in_axes=(0, None))(xs, ys)
    for got in (tj.vmap(f, in_axes=(0, None))(xs, ys), tj.jit(tj.vmap(f, in_axes=(0, None)))(xs, ys),
                tj.vmap(tj.jit(f), in_axes=(0, None))(xs, ys)):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    np.testing.assert_allclose(f(xs[0], ys), g(xs[0], ys), rtol=1e-13)         # outside vmap: the function
    t = R.normal(size=(4, 3))
    for got, exp in zip(tj.jvp(f, (xs[0], ys), (t[0], ys)), jax.jvp(g, (xs[0], ys), (t[0], ys))):
        np.testing.assert_allclose(got, exp, rtol=1e-13)
    batched = lambda M, fun: M.vmap(lambda x, v: M.jvp(fun, (x, ys), (v, ys)))(xs, t)
    for got, exp in zip(batched(tj, f), batched(jax, g)):          # the jvp of the rule
        np.testing.assert_allclose(got, exp, rtol=1e-13)


def test_custom_vmap_errors():
    f = _custom(tj, custom_vmap)
    with pytest.raises(ValueError, match="reverse-mode"):
        tj.grad(lambda x: tnp.sum(f(x, 2.0)))(np.ones(3))

    @custom_vmap
    def g(x):
        return x * 2.0
    with pytest.raises(AttributeError, match="def_vmap"):
        g(np.ones(2))
    g.def_vmap(lambda n, b, xs: ((xs, xs), True))
    with pytest.raises(ValueError, match="structure"):
        tj.vmap(g)(np.ones((2, 3)))
    h = custom_vmap(lambda x: x * 2.0)
    h.def_vmap(lambda n, b, xs: (xs[0], True))
    with pytest.raises(ValueError, match="batched"):
        tj.vmap(h)(np.ones((2, 3)))


def test_sequential_vmap_calls_once_per_example():
    seen = []

    @sequential_vmap
    def f(x, scale):
        tj.debug.callback(lambda v: seen.append(float(v)), x[0])
        return tnp.sum(x) * scale
    x = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(tj.jit(tj.vmap(f, in_axes=(0, None)))(x, 2.0), [2.0, 10.0, 18.0])
    assert seen == [0.0, 2.0, 4.0]
    jf = jax.custom_batching.sequential_vmap(lambda x, s: jnp.sum(x) * s)
    np.testing.assert_allclose(tj.vmap(f)(x, np.arange(3.0)), jax.vmap(jf)(x, np.arange(3.0)))


# ------------------------------------------------------------------------------------------------ io_callback

def test_io_callback_is_an_effect():
    log = []

    def record(x):
        log.append(np.array(x))
        return np.full(x.shape, float(len(log)))
    spec = jax.ShapeDtypeStruct((2,), np.float64)
    f = tj.jit(lambda x: io_callback(record, spec, x * 2.0) + 1.0)
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(f(np.ones(2)), [3.0, 3.0])      # runs on every call, in order
    unused = tj.jit(lambda x: (io_callback(record, spec, x), x)[1])
    unused(np.ones(2))
    assert len(log) == 3                                            # kept although its result is unused
    log.clear()
    out = tj.vmap(lambda x: io_callback(record, spec, x))(np.arange(6.0).reshape(3, 2))
    np.testing.assert_array_equal(out, [[1, 1], [2, 2], [3, 3]])
    assert [list(v) for v in log] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(ValueError, match="ordered"):
        tj.vmap(lambda x: io_callback(record, spec, x, ordered=True))(np.ones((3, 2)))
    with pytest.raises(ValueError, match="JVP"):
        tj.grad(lambda x: tnp.sum(io_callback(record, spec, x)))(np.ones(2))
    with pytest.raises(RuntimeError, match="declared"):
        io_callback(lambda x: np.ones(3), spec, np.ones(2))


# ------------------------------------------------------------------------------------------------ settings

def test_x64_settings_warn_where_they_cannot_apply():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tj.enable_x64(), tj.experimental.enable_x64(True):
            assert tj.enable_x64.value is True and tnp.arange(2.0).dtype == np.float64
        with tj.default_matmul_precision("highest"), tj.numpy_rank_promotion("allow"):
            pass
    for ctx in (tj.enable_x64(False), tj.experimental.disable_x64(), tj.numpy_rank_promotion("raise")):
        with pytest.warns(UserWarning, match="changes nothing"), ctx:
            assert tnp.arange(2.0).dtype == np.float64
    with pytest.raises(TypeError, match="requires an argument"), tj.default_matmul_precision():
        pass
    device = tj.devices()[0]
    with tj.default_device(device):
        assert tj.default_device.value is device
    assert tj.default_device.value is None and tj.effects_barrier() is None


def test_strict_promotion_raises_as_jax():
    f32, i32 = np.ones(2, np.float32), np.ones(2, np.int32)
    with tj.numpy_dtype_promotion("strict"):
        assert tj.config.numpy_dtype_promotion == "strict" == tj.numpy_dtype_promotion.value
        assert tnp.add(f32, 2).dtype == np.float32 and tnp.multiply(i32, 3).dtype == np.int32
        for bad in (lambda: tnp.add(f32, i32), lambda: tnp.multiply(i32, 2.5), lambda: tnp.add(np.ones(2, bool), 1),
                    lambda: tj.jit(lambda a, b: a + b)(f32, np.ones(2)), lambda: tnp.promote_types("f4", "f8")):
            with pytest.raises(tj.dtypes.TypePromotionError, match="numpy_dtype_promotion=strict"):
                bad()
        with jax.numpy_dtype_promotion("strict"), pytest.raises(jax.dtypes.TypePromotionError):
            jnp.add(f32, i32)
    assert tnp.add(f32, i32).dtype == np.float64 and tj.config.jax_numpy_dtype_promotion == "standard"
    compiled = tj.jit(lambda a, b: a * b)
    assert compiled(f32, i32).dtype == np.float64
    with tj.numpy_dtype_promotion("strict"), pytest.raises(tj.dtypes.TypePromotionError):
        compiled(f32, i32)       # compiled before, under standard promotion: traced again, as JAX's jit would
    with pytest.raises(ValueError, match="'standard' or 'strict'"):
        tj.config.update("jax_numpy_dtype_promotion", "loose")
    assert issubclass(tj.dtypes.TypePromotionError, ValueError)


# ------------------------------------------------------------------------------------------------ numpy

def test_place_eager_jit_vmap_grad():
    a, mask, vals = R.normal(size=(3, 4)), R.normal(size=(3, 4)) > 0, R.normal(size=3)
    want = a.copy()
    np.place(want, mask, vals)
    np.testing.assert_array_equal(tnp.place(a, mask, vals, inplace=False), want)
    np.testing.assert_array_equal(tj.jit(lambda a, v: tnp.place(a, mask, v, inplace=False))(a, vals), want)
    batched = tj.vmap(lambda a, m: tnp.place(a, m, vals, inplace=False))(a, mask)
    for k in range(3):
        np.testing.assert_array_equal(batched[k], tnp.place(a[k], mask[k], vals, inplace=False))
    g = tj.grad(lambda v: tnp.sum(tnp.place(a, mask, v, inplace=False) ** 2))(vals)
    uses = np.bincount(np.arange(mask.sum()) % 3, minlength=3)       # how many elements each value fills
    np.testing.assert_allclose(g, 2 * vals * uses, rtol=1e-14)
    with pytest.raises(ValueError, match="inplace=False"):
        tnp.place(a, mask, vals)


def test_frompyfunc_and_mask_indices():
    u = tnp.frompyfunc(lambda a, b: a * b + 1.0, 2, 1)
    x = np.arange(1.0, 5.0)
    ju = jnp.frompyfunc(lambda a, b: a * b + 1.0, 2, 1)
    np.testing.assert_allclose(tj.jit(lambda x: u(x, 2.0))(x), ju(x, 2.0))
    np.testing.assert_allclose(u.reduce(x), ju.reduce(x))
    np.testing.assert_allclose(u.accumulate(x), ju.accumulate(x))
    assert (u.nin, u.nout, u.nargs) == (2, 1, 3)
    with pytest.raises(ValueError, match="binary"):
        tnp.frompyfunc(tnp.sin, 1, 1).reduce(x)
    with pytest.raises(NotImplementedError, match="at"):
        u.at(x, 0, 1.0, inplace=False)
    with pytest.raises(ValueError, match="nin"):
        tnp.frompyfunc(tnp.add, 0, 1)
    for got, want in zip(tnp.mask_indices(4, tnp.triu, 1), np.mask_indices(4, np.triu, 1)):
        np.testing.assert_array_equal(got, want)
    assert tnp.euler_gamma == np.euler_gamma


def test_einsum_path_and_host_io():
    a, b, c = np.ones((2, 3)), np.ones((3, 40)), np.ones((40, 5))
    path, text = tnp.einsum_path("ij,jk,kl->il", a, b, c)
    assert path == jnp.einsum_path("ij,jk,kl->il", a, b, c)[0] == [(1, 2), (0, 1)] and "greedily" in text
    assert tnp.einsum_path("ij,jk,kl->il", a, b, c, optimize=False)[0] == [(0, 1), (0, 1)]
    assert tnp.einsum_path("ij,jk,kl->il", a, b, c, optimize=[(0, 1), (0, 1)])[0] == [(0, 1), (0, 1)]
    np.testing.assert_array_equal(tnp.fromiter((k * k for k in range(4)), np.int32), [0, 1, 4, 9])
    buffer = io.BytesIO()
    tnp.save(buffer, np.arange(3.0).astype(ml_dtypes.bfloat16))
    buffer.seek(0)
    assert tnp.load(buffer).dtype == ml_dtypes.bfloat16
    with pytest.raises(TypeError, match="concrete"):
        tj.jit(lambda x: tnp.array_repr(x))(np.ones(2))
    assert tnp.array_str(np.arange(3)) == jnp.array_str(np.arange(3))


# ------------------------------------------------------------------------------------------------ dtypes

def test_key_dtypes_and_initializer_protocol():
    key, jkey = tj.random.key(0), jax.random.key(0)
    for dtype_kind in ("prng_key", "extended"):
        assert tnp.issubdtype(key.dtype, getattr(tj.dtypes, dtype_kind))
        assert jnp.issubdtype(jkey.dtype, getattr(jax.dtypes, dtype_kind))
    assert not tnp.issubdtype(key.dtype, np.floating) and not tnp.issubdtype(np.float32, tj.dtypes.extended)
    assert tj.random.key_dtype() == key.dtype and str(tj.random.key_dtype()) == str(jax.random.key_dtype())
    with pytest.raises(ValueError, match="PRNG implementation"):
        tj.random.key_dtype("rbg")
    assert typing.Protocol in tj.nn.initializers.Initializer.__mro__
