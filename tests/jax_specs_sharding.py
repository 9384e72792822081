"""How the differential suite (test_against_jax.py) calls what tracejit gained for JAX's one-device parallel and
random-bit API: shard_map with meshes, PartitionSpec and NamedSharding (tracejit/shard_map.py, sharding.py),
lax.pcast, lax.rng_bit_generator (lax/random_bits.py) and lax.ragged_dot_general (lax/ragged.py); tests/test_shard_map.py,
test_rng_bit_generator.py and test_ragged_dot_general.py test them further. Data from a generator of their own."""
import numpy as np
from jax_oracle import Case

S = np.random.default_rng(20261208)


def s(*shape):
    return S.uniform(-3, 3, shape)


KEY = np.array([0x12345678, 0x9ABCDEF0, 0xFFFFFFFE, 7], np.uint32)


def _mesh(M, *names):
    return M.api.sharding.Mesh(np.array(M.api.devices()[:1]).reshape((1,) * len(names)), names)


def _matmul(M, shard_map, a, b):
    P = M.api.P
    f = shard_map(lambda x, y: M.lax.psum(M.numpy.dot(x, y), "y"), mesh=_mesh(M, "x", "y"),
                  in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None))
    return f(a, b)


def _collectives(M, shard_map, a):
    P = M.api.P

    def f(x):
        total = M.lax.psum(M.numpy.sum(M.numpy.sin(x)), "x")
        return x * total + M.lax.axis_index("x"), M.lax.pmean(x, "x")
    return shard_map(f, mesh=_mesh(M, "x", "y"), in_specs=P("x"), out_specs=(P("x"), P(None, "y")))(a)


def _with_set_mesh(M, set_mesh, a):
    P = M.api.P
    with set_mesh(_mesh(M, "i")):
        return M.api.shard_map(lambda x: M.lax.pmax(x, "i") * 2.0, in_specs=P("i"), out_specs=P())(a)


def _mesh_fields(M, make_mesh):
    mesh = make_mesh((1, 1), ("x", "y"))
    return str(mesh), repr(mesh), dict(mesh.shape), mesh.axis_names, mesh.size, mesh.axis_sizes


def _sharding_fields(M, cls):
    sharding = cls(M.api.make_mesh((1,), ("x",)), M.api.P("x", None))
    return repr(sharding), sharding.shard_shape((4, 3)), sharding.is_fully_replicated, sharding.num_devices


def _spec_fields(M, cls):
    return (repr(cls("x", None)), repr(cls()), repr(cls(("x", "y"))), len(cls("x", None)), cls("x") == cls(("x",)),
            cls("x") == cls("x", None), tuple(cls("x", None)))


def _cast_carry(M, pcast, a):
    """A scan carry that starts invariant (zeros) and is summed with split rows: pcast makes it varying."""
    P = M.api.P

    def f(x):
        carry, ys = M.lax.scan(lambda c, row: (c * 0.5 + row, M.numpy.sum(c)), pcast(M.numpy.zeros(x.shape[1:]), "x",
                                                                                     to="varying"), x)
        return carry[None], ys
    return M.api.shard_map(f, mesh=_mesh(M, "x"), in_specs=P("x"), out_specs=(P("x"), P("x")))(a)


def _bits(algorithm, dtype, shape):
    return lambda M, fn, key: fn(key, shape, dtype, M.lax.RandomAlgorithm(algorithm))


def _ragged(dims, ragged, group):
    return lambda M, fn, a, b, gs: fn(a, b, gs, M.lax.RaggedDotDimensionNumbers(dims, ragged, group))


SPECS = {
    "tracejit.shard_map": lambda: [Case("matmul psum", (s(4, 6), s(6, 3)), call=_matmul, derivatives=False),  # (*)
                                   Case("collectives", (s(5, 2),), call=_collectives, derivatives=False)],
    "lax.pcast": lambda: [Case("scan carry", (s(4, 3),), call=_cast_carry, derivatives=False)],  # (grad: test_shard_map)
    "tracejit.set_mesh": lambda: [Case("context", (s(4),), traceable=False, call=_with_set_mesh)],
    "tracejit.make_mesh": lambda: [Case("fields", (), traceable=False, call=_mesh_fields)],
    "tracejit.NamedSharding": lambda: [Case("fields", (), traceable=False, call=_sharding_fields)],
    "tracejit.P": lambda: [Case("fields", (), traceable=False, call=_spec_fields)],
    "lax.rng_bit_generator": lambda: [
        Case(f"{name} {np.dtype(dtype).name} {shape}", (KEY,), call=_bits(algorithm, dtype, shape), derivatives=False)
        for algorithm, name in ((0, "default"), (1, "threefry"), (2, "philox"))
        for dtype, shape in ((np.uint32, (3, 5)), (np.uint64, (4,)), (np.uint8, (2, 3)), (np.uint16, ()))],
    "lax.ragged_dot_general": lambda: [
        Case("noncontracting", (s(6, 4), s(3, 4, 5), np.array([2, 0, 3], np.int32)),
             call=_ragged((([1], [1]), ([], [])), [0], [0])),
        Case("noncontracting batch", (s(2, 6, 4), s(3, 2, 4, 5), np.array([[2, 1, 3], [1, 4, 1]], np.int32)),
             call=_ragged((([2], [2]), ([0], [1])), [1], [0])),
        Case("contracting", (s(3, 6), s(6, 5), np.array([2, 1, 3], np.int32)),
             call=_ragged((([1], [0]), ([], [])), [1], []), derivatives=False),     # (JAX has no rhs derivative)
        Case("batch", (s(2, 3, 6), s(2, 6, 5), np.array([1, 1], np.int32)),
             call=_ragged((([2], [1]), ([0], [0])), [0], []), derivatives=False)],
}

# (*) JAX's differentiation of these cases fails inside JAX (AssertionError: non-canonical constant); tracejit's
# gradients through shard_map are compared with JAX's in tests/test_shard_map.py.

NOT_COMPARED = {
    "tracejit.live_arrays": "JAX lists the live jax.Arrays of its runtime; tracejit's results are numpy arrays it does "
                            "not hold, so it lists none (tests/test_jax_top_level.py)",
}
