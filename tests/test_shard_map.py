"""shard_map on one device against JAX: programs of JAX's shard_map documentation, written once for both libraries
with a mesh of axes of size 1 (matmuls with psum and psum_scatter, all_gather, ppermute rings, axis_index, a
data-parallel training step with pmean of gradients, pytrees of specs), eagerly, under jit and under grad; the
replication check (an output varying over an axis its out_spec does not name raises; check_vma=False allows it),
jax.experimental.shard_map's older signature, the mesh from set_mesh, meshes, PartitionSpec and NamedSharding, and
the errors for bad specs and for meshes that need more devices than tracejit has."""

import numpy as np
import pytest

import tracejit as tj
import tracejit.experimental.shard_map as tj_experimental

jax = pytest.importorskip("jax", reason="compared with JAX (pip install 'tracejit[test]')")
jax.config.update("jax_enable_x64", True)
import jax.experimental.shard_map as jax_experimental

R = np.random.default_rng(3)
A, B = R.uniform(-1, 1, (8, 16)), R.uniform(-1, 1, (16, 4))
X, W = R.uniform(-1, 1, (6, 3)), R.uniform(-1, 1, (3, 5))


class Side:
    """One library as the programs see it."""

    def __init__(self, api, np_module, experimental):
        self.api, self.np, self.lax, self.experimental = api, np_module, api.lax, experimental
        self.P = api.sharding.PartitionSpec

    def mesh(self, *names):
        return self.api.sharding.Mesh(np.array(self.api.devices()[:1]).reshape((1,) * len(names)), names)

    def smap(self, f, mesh, in_specs, out_specs, **kw):
        return self.api.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, **kw)


JAX = Side(jax, jax.numpy, jax_experimental)
TJ = Side(tj, tj.numpy, tj_experimental)


def matmul_psum(S):
    mesh, P = S.mesh("x", "y"), S.P
    f = S.smap(lambda a, b: S.lax.psum(S.np.dot(a, b), "y"), mesh, (P("x", "y"), P("y", None)), P("x", None))
    return f(A, B)


def matmul_reduce_scatter(S):
    mesh, P = S.mesh("x", "y"), S.P
    f = S.smap(lambda a, b: S.lax.psum_scatter(S.np.dot(a, b), "y", scatter_dimension=1, tiled=True), mesh,
               (P("x", "y"), P("y", None)), P("x", "y"))
    return f(A, B)



def all_gather_tiled(S):
    mesh, P = S.mesh("i"), S.P
    return S.smap(lambda x: S.lax.all_gather(x, "i", tiled=True) * 2.0, mesh, P("i"), P("i"))(X)


def ppermute_ring(S):
    mesh, P = S.mesh("i"), S.P
    size = 1
    perm = [(i, (i + 1) % size) for i in range(size)]
    return S.smap(lambda x: S.lax.ppermute(x, "i", perm) + S.lax.axis_index("i"), mesh, P("i"), P("i"))(X)


def psum_of_replicated(S):
    mesh, P = S.mesh("x", "y"), S.P
    f = S.smap(lambda x, s: (S.lax.psum(x, ("x", "y")) * s, S.lax.pmean(x.sum(0), "x"), S.lax.pmax(x, "y")),
               mesh, (P(), P()), (P(), P(), P()))
    return f(X, 2.5)


def pytree_specs(S):
    mesh, P = S.mesh("batch", "model"), S.P

    def f(d, w):
        h = S.np.tanh(d["x"] @ w)
        return {"h": h, "total": S.lax.psum(h.sum(), ("batch", "model"))}
    return S.smap(f, mesh, ({"x": P("batch", None)}, P(None, "model")), {"h": P("batch", "model"), "total": P()})(
        {"x": X}, W)


def data_parallel_step(S):
    """A training step: per-shard gradients averaged with pmean, the parameters replicated."""
    mesh, P = S.mesh("batch"), S.P
    w0, xs, ys = np.array([0.3, -0.2, 0.1]), X, X @ np.array([1.0, 2.0, -1.0])

    def loss(w, x, y):
        return S.np.mean((x @ w - y) ** 2)

    def step(w, x, y):
        g = S.api.grad(loss)(w, x, y)
        return w - 0.1 * S.lax.pmean(g, "batch"), S.lax.pmean(loss(w, x, y), "batch")
    run = S.api.jit(S.smap(step, mesh, (P(), P("batch"), P("batch")), (P(), P())))
    w, losses = w0, []
    for _ in range(3):
        w, value = run(w, xs, ys)
        losses.append(value)
    return w, losses


def grad_through_shard_map(S):
    mesh, P = S.mesh("x"), S.P
    f = S.smap(lambda a: S.lax.psum(S.np.sum(S.np.sin(a) * a), "x"), mesh, P("x"), P())
    return S.api.grad(lambda a: f(a) ** 2)(X), S.api.jit(S.api.grad(f))(X)


def unchecked_varying_output(S):
    mesh, P = S.mesh("x"), S.P
    return S.smap(lambda a: a * 3.0, mesh, P("x"), P(), check_vma=False)(X)


def experimental_signature(S):
    mesh, P = S.mesh("x", "y"), S.P
    f = S.experimental.shard_map(lambda a: S.lax.psum(a, "x") + 1.0, mesh, in_specs=(P("x", "y"),),
                                 out_specs=P(None, "y"), check_rep=True)
    return f(X)


def fori_ring_matmul(S):
    """A collective matmul: shards of the lhs travel round the ring while the rhs stays."""
    mesh, P = S.mesh("x"), S.P

    def body(a, b):
        size = S.lax.axis_size("x")
        perm = [(j, (j + 1) % size) for j in range(size)]

        def step(i, carry):
            acc, block = carry
            return acc + block @ b, S.lax.ppermute(block, "x", perm)
        acc, _ = S.lax.fori_loop(0, size, step, (0.0 * (a @ b), a))     # (a @ b: varying over x, as the sum)
        return acc
    return S.api.jit(S.smap(body, mesh, (P("x"), P()), P("x")))(A, B)


def scan_with_a_cast_carry(S):
    """A scan whose carry starts invariant (zeros) and is summed with split values: pcast makes it varying."""
    mesh, P = S.mesh("x"), S.P

    def body(a):
        c0 = S.lax.pcast(S.np.zeros(a.shape[1:]), "x", to="varying")
        c, ys = S.lax.scan(lambda c, row: (c * 0.5 + row, S.np.sum(c)), c0, a)
        return c[None], ys
    f = S.smap(body, mesh, P("x"), (P("x"), P("x")))
    return f(X), S.api.grad(lambda a: S.np.sum(f(a)[0] ** 2) + S.np.sum(f(a)[1]))(X)


PROGRAMS = [matmul_psum, matmul_reduce_scatter, all_gather_tiled, ppermute_ring, psum_of_replicated, pytree_specs,
            data_parallel_step, grad_through_shard_map, unchecked_varying_output, experimental_signature,
            fori_ring_matmul, scan_with_a_cast_carry]



@pytest.mark.filterwarnings("ignore:jax.experimental.shard_map is deprecated")
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_programs_match_jax(program):
    expected, got = program(JAX), program(TJ)
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
    g_leaves, g_tree = jax.tree_util.tree_flatten(got)
    assert e_tree == g_tree
    for e, g in zip(e_leaves, g_leaves):
        assert np.shape(e) == np.shape(g)
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12, atol=1e-12)


def _varying(S, f, in_spec, out_spec):
    return S.smap(f, S.mesh("x", "y"), in_spec, out_spec)(X)


@pytest.mark.parametrize("case", ["split input", "axis_index", "one axis of two"])
def test_replication_check_raises_as_jax(case):
    def run(S):
        P = S.P
        f, in_spec, out_spec = {"split input": (lambda a: a * 2.0, P("x"), P()),
                                "axis_index": (lambda a: a + S.lax.axis_index("y"), P(), P("x")),
                                "one axis of two": (lambda a: S.lax.psum(a, "x"), P("x", "y"), P("x"))}[case]
        return _varying(S, f, in_spec, out_spec)
    with pytest.raises(ValueError, match="out_specs which require replication"):
        run(JAX)
    with pytest.raises(ValueError, match="out_specs which require replication"):
        run(TJ)


def test_mesh_from_set_mesh_and_with():
    mesh = tj.make_mesh((1,), ("x",))
    f = tj.shard_map(lambda a: tj.lax.psum(a, "x"), in_specs=tj.P("x"), out_specs=tj.P())
    with tj.set_mesh(mesh):
        np.testing.assert_array_equal(f(X), X)
    with mesh:
        np.testing.assert_array_equal(f(X), X)
    with pytest.raises(ValueError, match="no mesh"):
        f(X)
    with pytest.raises(ValueError, match="can only be used outside of jit"):
        tj.jit(lambda a: tj.set_mesh(mesh) and a)(X)
    decorated = tj.shard_map(out_specs=tj.P(), mesh=mesh)(lambda a: a.sum())   # Explicit axes: in_specs inferred
    assert decorated(X) == X.sum()


def test_meshes_specs_and_shardings_as_jax():
    for S in (JAX, TJ):
        mesh = S.api.make_mesh((1, 1), ("x", "y"))
        s = S.api.NamedSharding(mesh, S.api.P("x", None))
        assert (str(mesh), dict(mesh.shape), mesh.axis_names, mesh.size, mesh.axis_sizes) == (
            "Mesh('x': 1, 'y': 1, axis_types=(Explicit, Explicit))", {"x": 1, "y": 1}, ("x", "y"), 1, (1, 1))
        assert (s.shard_shape((4, 3)), s.is_fully_replicated, s.num_devices) == ((4, 3), True, 1)
        assert (repr(S.api.P("x", None)), repr(S.api.P()), repr(S.api.P(("x", "y"))), len(S.api.P("x", None))) == (
            "P('x', None)", "P()", "P(('x', 'y'),)", 2)
        assert S.api.P("x") == S.api.P(("x",)) and S.api.P("x") != S.api.P("x", None)
        assert repr(S.api.sharding.Mesh(S.api.devices(), "x")) == (
            "Mesh(axis_sizes=(1,), axis_names=('x',), axis_types=(Auto,))")
        assert repr(s) == ("NamedSharding(mesh=Mesh('x': 1, 'y': 1, axis_types=(Explicit, Explicit)), "
                           "spec=P('x', None), memory_kind=device)")
        assert list(S.api.sharding.Mesh(np.array(S.api.devices()), ("x",)).devices.flat) == S.api.devices()
        np.testing.assert_array_equal(S.api.device_put(X, s), X)


def test_bad_meshes_and_specs_raise():
    with pytest.raises(ValueError, match="Number of devices 1 must be >= the product of mesh_shape"):
        tj.make_mesh((2,), ("x",))
    with pytest.raises(ValueError, match="needs 2 distinct devices"):
        tj.sharding.Mesh(np.array(tj.devices() * 2), ("x",))
    with pytest.raises(ValueError, match="ndim of its first argument"):
        tj.sharding.Mesh(np.array(tj.devices()).reshape(1, 1), ("x",))
    mesh = TJ.mesh("x", "y")
    P = tj.P
    with pytest.raises(ValueError, match="refers to 'z', which is not a manual axis"):
        tj.shard_map(lambda a: a, mesh=mesh, in_specs=P("z"), out_specs=P())(X)
    with pytest.raises(ValueError, match="has length 3, but argument 'a' has shape f64\\[6,3\\]"):
        tj.shard_map(lambda a: a, mesh=mesh, in_specs=P("x", None, "y"), out_specs=P())(X)
    with pytest.raises(ValueError, match="more than once"):
        tj.shard_map(lambda a: a, mesh=mesh, in_specs=P("x", "x"), out_specs=P())(X)
    with pytest.raises(ValueError, match="pytree prefix"):
        tj.shard_map(lambda a, b: a + b, mesh=mesh, in_specs=(P(),), out_specs=P())(X, X)
    with pytest.raises(TypeError, match="in_specs must be given"):
        tj.shard_map(lambda a: a, mesh=mesh, out_specs=P())(X)
    with pytest.raises(NameError, match="unbound axis name: z"):
        tj.shard_map(lambda a: tj.lax.psum(a, "z"), mesh=mesh, in_specs=P(), out_specs=P())(X)
    with pytest.raises(NameError, match="unbound axis name: y"):      # y is not manual
        tj.shard_map(lambda a: tj.lax.psum(a, "y"), mesh=mesh, in_specs=P(), out_specs=P(), axis_names={"x"})(X)
    with pytest.raises(TypeError, match="entry must be None, a mesh axis name"):
        P(3)


def test_jit_with_shardings_as_jax():
    """JAX's sharded programs: arguments placed with NamedShardings, jit given in_shardings and out_shardings."""
    def program(S):
        mesh, P = S.api.make_mesh((1,), ("batch",)), S.P
        rows, whole = S.api.NamedSharding(mesh, P("batch")), S.api.NamedSharding(mesh, P())
        step = S.api.jit(lambda x, w: S.np.tanh(x @ w), in_shardings=(rows, whole), out_shardings=rows)
        return step(S.api.device_put(X, rows), S.api.device_put(W, whole))
    np.testing.assert_allclose(program(TJ), np.asarray(program(JAX)), rtol=1e-13)
    with pytest.raises(TypeError, match="in_shardings must be a pytree of shardings"):
        tj.jit(lambda a: a, in_shardings="batch")
