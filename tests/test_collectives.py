"""lax's collectives under vmap(axis_name=...) against JAX: psum, pmean, pmax, pmin, all_gather, axis_index and
psum(1, name) as the axis size, over pytrees, unmapped operands, nested vmaps of two names (one collective over
both), under jit and grad (outside and inside the vmap), in the bodies of scan, fori_loop, cond and while_loop
(whose batched form then runs the whole batch at once, not in blocks); evaluated outside their vmap they raise
JAX's NameError."""
import numpy as np
import pytest

import tracejit as tj

jax = pytest.importorskip("jax", reason="compared with JAX (pip install 'tracejit[test]')")
jax.config.update("jax_enable_x64", True)

X = np.arange(1.0, 7.0).reshape(3, 2)
Y = np.random.default_rng(0).uniform(1, 2, (70, 2))      # (70 examples: a batched while loop would run in blocks)


def programs(M):
    L = M.lax
    return {
        "psum": lambda: M.vmap(lambda v: v / L.psum(v, "i"), axis_name="i")(X),
        "pmean": lambda: M.vmap(lambda v: v - L.pmean(v, "i"), axis_name="i")(X),
        "pmax, pmin": lambda: M.vmap(lambda v: L.pmax(v, "i") - L.pmin(v.sum(), "i"), axis_name="i")(X),
        "axis_index, size": lambda: M.vmap(lambda v: v * L.axis_index("i") + L.psum(1, "i"), axis_name="i")(X),
        "all_gather": lambda: M.vmap(lambda v: [L.all_gather(v, "i"), L.all_gather(v, "i", axis=1),
                                                L.all_gather(v, "i", tiled=True)], axis_name="i")(X),
        "nested": lambda: M.vmap(M.vmap(lambda v: L.psum(v, "i") + 10 * L.psum(v, "j") + L.psum(v, ("i", "j")),
                                        axis_name="j"), axis_name="i")(X),
        "gather in nested": lambda: M.vmap(M.vmap(lambda v: L.all_gather(v, "i"), axis_name="j"), axis_name="i")(X),
        "pytree, unmapped": lambda: M.vmap(lambda d, c: L.psum({"d": d, "c": c}, "i"), in_axes=(0, None),
                                           axis_name="i")({"a": X, "b": X[:, 0]}, np.ones(2)),
        "grad outside": lambda: M.grad(lambda y: M.vmap(lambda v: (v / L.psum(v, "i")) ** 2 + L.all_gather(v, "i")
                                                        .sum(), axis_name="i")(y).sum())(X),
        "grad inside": lambda: M.vmap(M.grad(lambda v: (v * L.psum(v, "i")).sum()), axis_name="i")(X),
        "jit": lambda: M.jit(M.vmap(lambda v: v / L.psum(v, "i"), axis_name="i"))(X),
        "in scan": lambda: M.vmap(lambda v: L.scan(lambda c, x: (c + L.psum(x, "i"), c), 0.0, v), axis_name="i")(X),
        "in fori_loop": lambda: M.vmap(lambda v: L.fori_loop(0, 3, lambda k, c: c + L.pmean(c, "i"), v),
                                       axis_name="i")(X),
        "in cond": lambda: M.vmap(lambda v: L.cond(v[0] > 2, lambda u: L.psum(u, "i"), lambda u: u * 0, v),
                                  axis_name="i")(X),
        "in while, batched predicate": lambda: M.vmap(lambda v: L.while_loop(
            lambda c: c[0] < 5.0, lambda c: c + L.pmax(c, "i") * 0.1, v), axis_name="i")(Y),
        "in while's predicate": lambda: M.vmap(lambda v: L.while_loop(
            lambda c: L.psum(c[0], "i") < 200.0, lambda c: c * 1.5, v), axis_name="i")(Y),
        "under an unnamed vmap": lambda: M.vmap(lambda v: M.vmap(lambda u: u * L.psum(u, "i"))(v),
                                                axis_name="i")(X),
    }


@pytest.mark.parametrize("name", list(programs(tj)))
def test_collectives_as_jax(name):
    ours, theirs = programs(tj)[name](), programs(jax)[name]()
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs), strict=True):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-13)


def test_collectives_outside_their_vmap_raise_as_jax():
    with pytest.raises(NameError, match="unbound axis name: i"):
        tj.lax.psum(X, "i")
    with pytest.raises(NameError, match="unbound axis name: k"):
        tj.vmap(lambda v: tj.lax.pmean(v, "k"), axis_name="i")(X)
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        tj.vmap(lambda v: tj.lax.psum(v, "i", axis_index_groups=[[0, 1], [2]]), axis_name="i")(X)
    with pytest.raises(ValueError, match="all_gather: axis 3 is out of range for a result of rank 2"):
        tj.vmap(lambda v: tj.lax.all_gather(v, "i", axis=3), axis_name="i")(X)
