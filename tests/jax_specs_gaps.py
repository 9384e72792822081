"""How the differential suite (test_against_jax.py) calls the jax.numpy functions tracejit.numpy gained to close
its gaps (tests/test_numpy_gaps.py checks them against NumPy): qualified name -> cases. Their data come from a
generator of their own, so that adding cases here changes no other case's data."""
import numpy as np
from jax_oracle import Case, Static

G = np.random.default_rng(20250117)


def g(*shape):
    return G.uniform(-3, 3, shape)


def gi(*shape, low=-4, high=5):
    return G.integers(low, high, shape)


def _nans(*shape):
    x = g(*shape)
    x[0, 1] = x[-1, 0] = np.nan
    return x


SETS_A = np.array([1.0, 3.0, 3.0, 5.0, 7.0, 7.0, 9.0, 2.0])
SETS_B = np.array([3.0, 4.0, 5.0, 5.0, 8.0, 2.0, 11.0])
PHASE = np.cumsum(np.array([0.5, 2.9, -3.3, 1.0, 4.0, -0.2, 3.5]))


H = np.random.default_rng(20261207)      # the data of the cases added with tests/test_jax_gaps_more.py


def h(*shape):
    return H.uniform(-3, 3, shape)


def _pyfunc(M, frompyfunc, x, y):
    """A binary ufunc from a scalar function: called, reduced, accumulated and outer."""
    u = frompyfunc(lambda a, b: a * b + M.numpy.sin(a), 2, 1, identity=0.0)
    return u(x, y), u.reduce(x[:, :3], axis=1), u.accumulate(x[0]), u.outer(x[0, :2], y[1, :3])


def _pyfunc_two(M, frompyfunc, x):
    return frompyfunc(lambda a: (a * a, M.numpy.cos(a)), 1, 2)(x)


def _printoptions(M, printoptions):
    with printoptions(precision=3, suppress=True):
        return M.numpy.get_printoptions()["precision"], M.numpy.array_str(M.numpy.asarray([1.23456, 1e-9]))


def _save_load(M, save, x):
    import io
    buffer = io.BytesIO()
    save(buffer, np.asarray(x))
    buffer.seek(0)
    return M.numpy.load(buffer)


def _savez_load(M, savez, x):
    import io
    buffer = io.BytesIO()
    savez(buffer, a=np.asarray(x), b=np.arange(3))
    buffer.seek(0)
    with np.load(buffer) as files:
        return files["a"], files["b"]


def _load_bfloat16(M, load, x):
    """np.save stores bfloat16 as the void dtype V2; JAX's load (and tracejit's) give bfloat16 back."""
    import io

    import ml_dtypes
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(x).astype(ml_dtypes.bfloat16))
    buffer.seek(0)
    out = load(buffer)
    return str(out.dtype), np.asarray(out).astype(np.float32)


def _inplace_false(M, fn, *args, **kwargs):
    return fn(*args, inplace=False, **kwargs)


SPECS = {
    "numpy.array_equal": lambda: [Case("same", (SETS_A, SETS_A.copy())), Case("different", (SETS_A, SETS_A + 1)),
                                  Case("shapes", (SETS_A, SETS_B)),
                                  Case("nan", (np.array([1.0, np.nan]), np.array([1.0, np.nan])), {"equal_nan": True})],
    "numpy.array_equiv": lambda: [Case("broadcast", (np.ones((2, 3)), np.ones(3))), Case("not", (g(2, 3), g(3)))],
    "numpy.broadcast_arrays": lambda: [Case("three", (g(3, 1), g(4), np.array(2.0))), Case("int", (gi(2, 1), g(3)))],
    "numpy.broadcast_shapes": lambda: [Case("shapes", ((2, 1), (3,), ()), traceable=False),
                                       Case("int", ((4, 1), 5), traceable=False)],
    "numpy.block": lambda: [Case("matrix", ([[g(2, 2), g(2, 3)], [g(1, 2), g(1, 3)]],),
                                 call=lambda M, fn, x: fn(x)),
                            Case("vectors", ([g(2), g(3)],), call=lambda M, fn, x: fn(x))],
    "numpy.concat": lambda: [Case("rows", ([g(2, 3), g(1, 3)],)), Case("axis", ([g(2, 3), g(2, 2)],), {"axis": 1}),
                             Case("flat", ([g(2, 3), g(4)],), {"axis": None})],
    "numpy.permute_dims": lambda: [Case("cycle", (g(2, 3, 4), (2, 0, 1))), Case("swap", (g(2, 3), (1, 0)))],
    "numpy.unstack": lambda: [Case("rows", (g(3, 2),)), Case("axis", (g(2, 3, 2),), {"axis": 1})],
    "numpy.matvec": lambda: [Case("batched", (g(2, 3, 4), g(4))), Case("broadcast", (g(3, 4), g(2, 4)))],
    "numpy.vecmat": lambda: [Case("batched", (g(4), g(2, 4, 3))), Case("complex", (g(3) + 1j * g(3), g(3, 2)))],
    "numpy.vecdot": lambda: [Case("last", (g(2, 4), g(4))), Case("axis", (g(3, 2), g(3, 2)), {"axis": 0}),
                             Case("complex", (g(3) + 1j * g(3), g(3) - 2j * g(3))),
                             Case("int32", (gi(2, 3).astype(np.int32), gi(3).astype(np.int32)))],
    "numpy.cumulative_sum": lambda: [Case("flat", (g(5),)), Case("axis", (g(3, 4),), {"axis": 1}),
                                     Case("initial", (g(3, 4),), {"axis": 0, "include_initial": True}),
                                     Case("int", (gi(5),), {"include_initial": True})],
    "numpy.cumulative_prod": lambda: [Case("flat", (g(5),)), Case("axis", (g(3, 4),), {"axis": 1}),
                                      Case("initial", (g(3, 4),), {"axis": 0, "include_initial": True}),
                                      Case("int", (gi(5),), {"include_initial": True})],
    "numpy.ediff1d": lambda: [Case("flat", (g(2, 3),)), Case("ends", (g(4), g(2), np.array(1.5))),
                              Case("int", (gi(5),))],
    "numpy.sort_complex": lambda: [Case("complex", (np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 + 0j, 2j]),)),
                                   Case("real", (g(5),))],
    "numpy.delete": lambda: [Case("index", (g(3, 4), 1, 1)), Case("indices", (g(6), Static(np.array([0, 2, -1])))),
                             Case("slice", (g(4, 3), slice(1, 3), 0)),
                             Case("traced_unique", (g(6), np.array([4, 1])), {"assume_unique_indices": True})],
    "numpy.insert": lambda: [Case("scalar", (g(3, 4), 1, 9.0, 1)), Case("indices", (g(5), Static(np.array([0, 2, 2])), g(3))),
                             Case("row", (g(3, 4), 2, g(4), 0)), Case("slice", (g(6), slice(0, 4, 2), -1.0))],
    "numpy.compress": lambda: [Case("eager", (np.array([True, False, True]), g(3, 2)), {"axis": 0}, traceable=False,
                                    derivatives=False),
                               Case("size", (np.array([True, False, True, True]), g(2, 4)),
                                    {"axis": 1, "size": 4, "fill_value": 0.5})],
    "numpy.extract": lambda: [Case("eager", (np.array([1, 0, 2, 0]), g(4)), traceable=False, derivatives=False),
                              Case("size", (np.array([True, False, True, False]), g(4)), {"size": 3})],
    # mode='raise' with a concrete a inside jit: tracejit's works, JAX's refuses it (so JAX runs it eagerly here)
    "numpy.choose": lambda: [Case("raise", (Static(gi(3, 4, low=0, high=3)), [g(3, 4), g(4), g(3, 1)]),
                                  traceable=False),
                             Case("wrap", (gi(6), [g(6), g(6)]), {"mode": "wrap"}),
                             Case("clip", (gi(6), [g(6), g(6), g(6)]), {"mode": "clip"})],
    "numpy.resize": lambda: [Case("grow", (g(2, 3), (3, 5))), Case("shrink", (g(7), 4)), Case("empty", (g(0), (2,)))],
    "numpy.trim_zeros": lambda: [Case("fb", (np.array([0.0, 0.0, 1.5, 0.0, 2.0, 0.0]),), traceable=False,
                                      derivatives=False),
                                 Case("f", (np.array([0, 0, 3, 0]), "f"), traceable=False),
                                 Case("b", (np.array([0, 4, 0, 0]), "b"), traceable=False)],
    "numpy.indices": lambda: [Case("dense", ((2, 3),)), Case("sparse", ((2, 3),), {"sparse": True}),
                              Case("dtype", ((3,), np.int32))],
    "numpy.ix_": lambda: [Case("two", (Static(np.array([0, 2])), Static(np.array([1, 0, 1]))), traceable=False,
                               call=lambda M, fn, i, j: [np.asarray(a) for a in fn(i, j)])],
    "numpy.fill_diagonal": lambda: [Case("square", (g(3, 3), 5.0), call=_inplace_false),
                                    Case("values", (g(4, 3), g(2)), call=_inplace_false)],
    "numpy.put": lambda: [Case("flat", (g(3, 4), np.array([0, -1, 5]), g(2)), call=_inplace_false),
                          Case("wrap", (g(3, 4), np.array([2, 25]), 9.0), {"mode": "wrap"}, call=_inplace_false)],
    "numpy.put_along_axis": lambda: [Case("rows", (g(4, 5), np.array([[0], [2], [4], [1]]), g(4, 1), 1),
                                          call=_inplace_false)],
    "numpy.piecewise": lambda: [Case("functions", (g(8),), call=lambda M, fn, x: fn(
        x, [x < -0.5, x > 0.5], [lambda v: v * v, M.numpy.sin, 7.0])),
        Case("values", (g(2, 4),), call=lambda M, fn, x: fn(x, [x < 0], [-1.0, lambda v: v * 3.0]))],
    "numpy.apply_along_axis": lambda: [Case("rows", (g(3, 4),), call=lambda M, fn, x: fn(
        lambda v: v * M.numpy.sum(v), 1, x)), Case("reduce", (g(2, 3, 4),), call=lambda M, fn, x: fn(
            lambda v: M.numpy.max(v), 1, x)), Case("outer", (g(2, 3),), call=lambda M, fn, x: fn(
                lambda v: M.numpy.outer(v, v), 0, x))],
    "numpy.apply_over_axes": lambda: [Case("sum", (g(2, 3, 4),), call=lambda M, fn, x: fn(M.numpy.sum, x, [0, 2]))],
    "numpy.vectorize": lambda: [Case("scalars", (g(3, 1), g(4)), call=lambda M, fn, x, y: fn(
        lambda a, b: a * M.numpy.sin(b))(x, y)),
        Case("signature", (g(2, 3, 3), g(3)), call=lambda M, fn, m, v: fn(
            lambda a, b: a @ b, signature="(n,n),(n)->(n)")(m, v))],
    "numpy.fromfunction": lambda: [Case("grid", (), call=lambda M, fn: fn(lambda i, j: i * 10.0 + j, (3, 4))),
                                   Case("dtype", (), call=lambda M, fn: fn(lambda i: i * 2, (3,), dtype=np.int32))],
    "numpy.isscalar": lambda: [Case(label, (v,), traceable=False) for label, v in (
        ("float", 1.5), ("zero_d", np.array(2.0)), ("vector", np.ones(2)), ("list", [1.0]))],
    "numpy.iterable": lambda: [Case(label, (v,), traceable=False) for label, v in (
        ("int", 3), ("vector", np.ones(2)), ("list", [1.0]), ("zero_d", np.array(1.0)))],
    "numpy.geomspace": lambda: [Case("ints", (1, 1000, 4)), Case("negative", (-2.0, -32.0, 5, False)),
                                Case("traced", (np.array(2.0), np.array(50.0), 6)),
                                Case("dtype", (1.0, 10.0, 5), {"dtype": np.int64})],
    "numpy.logspace": lambda: [Case("ints", (0, 3, 4)), Case("base", (1.0, 2.0, 5, False, 2.0)),
                               Case("traced", (np.array(-1.0), np.array(1.0), 5))],
    "numpy.unwrap": lambda: [Case("phase", (PHASE,)), Case("discont", (PHASE,), {"discont": 4.0}),
                             Case("period", (PHASE,), {"period": 5.0}),
                             Case("axis", (np.stack([PHASE, PHASE[::-1]]),), {"axis": 1})],
    "numpy.nanargmax": lambda: [Case("flat", (_nans(3, 4),)), Case("axis", (_nans(3, 4), 1)),
                                Case("keepdims", (_nans(3, 4), 0), {"keepdims": True}), Case("int", (gi(3, 4), 1))],
    "numpy.nanargmin": lambda: [Case("flat", (_nans(3, 4),)), Case("axis", (_nans(3, 4), 1)),
                                Case("keepdims", (_nans(3, 4), 0), {"keepdims": True}), Case("int", (gi(3, 4), 1))],
    "numpy.nanprod": lambda: [Case("flat", (_nans(3, 4),)), Case("axis", (_nans(3, 4), 1)),
                              Case("int", (gi(3, 4), 0))],
    "numpy.nancumsum": lambda: [Case("flat", (_nans(3, 4),)), Case("axis", (_nans(3, 4), 1)),
                                Case("int", (gi(3, 4), 0))],
    "numpy.nancumprod": lambda: [Case("flat", (_nans(3, 4),)), Case("axis", (_nans(3, 4), 1)),
                                 Case("int", (gi(3, 4), 0))],
    "numpy.nanvar": lambda: [Case("flat", (_nans(3, 4),)), Case("axis", (_nans(3, 4), 1)),
                             Case("ddof", (_nans(3, 4), 0), {"ddof": 1, "keepdims": True}), Case("int", (gi(3, 4), 1))],
    "numpy.nanstd": lambda: [Case("flat", (_nans(3, 4),)), Case("axis", (_nans(3, 4), 1)),
                             Case("ddof", (_nans(3, 4), 0), {"ddof": 1, "keepdims": True}), Case("int", (gi(3, 4), 1))],
    "numpy.unique_values": lambda: [Case("eager", (gi(3, 4),), traceable=False),
                                    Case("size", (gi(3, 4),), {"size": 6}, derivatives=False),
                                    Case("fill", (SETS_A,), {"size": 8, "fill_value": 0.5})],
    "numpy.unique_counts": lambda: [Case("eager", (gi(10),), traceable=False),
                                    Case("size", (gi(10),), {"size": 6, "fill_value": 0}, derivatives=False)],
    "numpy.unique_inverse": lambda: [Case("eager", (gi(3, 4),), traceable=False),
                                     Case("size", (gi(3, 4),), {"size": 9}, derivatives=False)],
    "numpy.unique_all": lambda: [Case("eager", (gi(10),), traceable=False),
                                 Case("size", (gi(10),), {"size": 9, "fill_value": -1}, derivatives=False)],
    "numpy.intersect1d": lambda: [Case("eager", (SETS_A, SETS_B), traceable=False, derivatives=False),
                                  Case("size", (SETS_A, SETS_B), {"size": 5}, derivatives=False),
                                  Case("indices", (SETS_A, SETS_B), {"size": 4, "return_indices": True,
                                                                     "fill_value": -1.0}, derivatives=False)],
    "numpy.setdiff1d": lambda: [Case("eager", (SETS_A, SETS_B), traceable=False, derivatives=False),
                                Case("size", (SETS_A, SETS_B), {"size": 6}, derivatives=False),
                                Case("unique", (SETS_A[:4], SETS_B), {"size": 3, "assume_unique": True,
                                                                     "fill_value": 9.0}, derivatives=False)],
    "numpy.setxor1d": lambda: [Case("eager", (SETS_A, SETS_B), traceable=False, derivatives=False),
                               Case("size", (SETS_A, SETS_B), {"size": 8}, derivatives=False)],
    "numpy.union1d": lambda: [Case("eager", (SETS_A, SETS_B), traceable=False, derivatives=False),
                              Case("size", (SETS_A, SETS_B), {"size": 11, "fill_value": 0.0}, derivatives=False)],
    "numpy.poly": lambda: [Case("roots", (g(4),)), Case("int", (gi(3),), derivatives=False)],
    "numpy.polyadd": lambda: [Case("lengths", (g(4), g(2))), Case("int", (gi(2), gi(3)))],
    "numpy.polysub": lambda: [Case("lengths", (g(2), g(4))), Case("int", (gi(3), gi(3)))],
    "numpy.polymul": lambda: [Case("lengths", (g(4) + 4, g(3) + 4)), Case("int", (gi(2, low=1), gi(3, low=1)))],
    "numpy.polydiv": lambda: [Case("lengths", (g(5), g(3) + 4)), Case("short", (g(2), g(3) + 4))],
    "numpy.polyder": lambda: [Case("once", (g(5),)), Case("twice", (g(5), 2)), Case("int", (gi(4),))],
    "numpy.polyint": lambda: [Case("once", (g(4),)), Case("constants", (g(4), 2, g(2))), Case("int", (gi(3),))],
    "numpy.roots": lambda: [Case("cubic", (np.array([1.0, -6.0, 11.0, -6.0]),), traceable=False,
                                 call=lambda M, fn, p: np.sort_complex(np.asarray(fn(p)))),
                            Case("unstripped", (np.array([2.0, -3.0, 1.0]),), {"strip_zeros": False}, derivatives=False,
                                 call=lambda M, fn, p, **kw: M.numpy.sort(M.numpy.real(fn(p, **kw))))],
    "numpy.bartlett": lambda: [Case(str(n), (n,)) for n in (0, 1, 6)],
    "numpy.blackman": lambda: [Case(str(n), (n,)) for n in (0, 1, 6)],
    "numpy.hamming": lambda: [Case(str(n), (n,)) for n in (0, 1, 7)],
    "numpy.hanning": lambda: [Case(str(n), (n,)) for n in (0, 1, 7)],
    "numpy.kaiser": lambda: [Case("seven", (7, np.array(3.5))), Case("one", (1, np.array(2.0))),
                             Case("static_beta", (6, 0.5))],
    "numpy.histogramdd": lambda: [Case("bins", (g(30, 3),), {"bins": (2, 3, 4)}, derivatives=False),
                                  Case("weights", (g(20, 2),), {"bins": 3, "range": [(-3.0, 3.0), (-2.0, 2.0)],
                                                                "weights": G.uniform(0, 1, 20)}),
                                  Case("density", (g(20, 2),), {"bins": 2, "range": [(-3.0, 3.0), (-3.0, 3.0)],
                                                                "density": True}, derivatives=False)],
    "numpy.histogram2d": lambda: [Case("bins", (g(20), g(20), (3, 2)), derivatives=False),
                                  Case("range", (g(20), g(20), 2, [(-3.0, 3.0), (-3.0, 3.0)]), derivatives=False)],
    "numpy.packbits": lambda: [Case("flat", (gi(3, 4, low=0, high=2),)), Case("axis", (gi(3, 9) > 0, 1)),
                               Case("little", (gi(10, low=0, high=2),), {"bitorder": "little"})],
    "numpy.unpackbits": lambda: [Case("flat", (gi(3, 2, low=0, high=256).astype(np.uint8),)),
                                 Case("axis_count", (gi(3, 2, low=0, high=256).astype(np.uint8), 1, 5)),
                                 Case("little", (gi(4, low=0, high=256).astype(np.uint8),), {"bitorder": "little"})],
    "numpy.place": lambda: [Case("cycle", (h(3, 4), h(3, 4) > 0, h(3)), call=_inplace_false),
                            Case("int", (H.integers(-4, 5, (2, 3)), np.array([[True, False, True], [False, True, True]]),
                                         np.array([7, 8])), call=_inplace_false)],
    "numpy.mask_indices": lambda: [Case("triu", (), traceable=False, call=lambda M, fn: fn(4, M.numpy.triu, 1)),
                                   Case("tril_size", (), traceable=False,
                                        call=lambda M, fn: fn(3, M.numpy.tril, 0, size=8))],
    "numpy.frompyfunc": lambda: [Case("binary", (h(3, 4), h(3, 4)), call=_pyfunc, second_order=False),
                                 Case("two_outputs", (h(5),), call=_pyfunc_two)],
    "numpy.einsum_path": lambda: [Case(sub, tuple(np.ones(s) for s in shapes), traceable=False, derivatives=False,
                                       call=lambda M, fn, *ops, sub=sub: fn(sub, *ops)[0])
                                  for sub, shapes in (("ij,jk,kl->il", ((2, 3), (3, 40), (40, 5))),
                                                      ("ij,jk,kl,lm->im", ((2, 3), (3, 40), (40, 5), (5, 2))),
                                                      ("ij,kl,jk", ((2, 3), (40, 5), (3, 40))), ("ii->i", ((3, 3),)))],
    "numpy.array_repr": lambda: [Case("floats", (h(2, 3),), {"precision": 3}, traceable=False, derivatives=False)],
    "numpy.array_str": lambda: [Case("ints", (H.integers(-4, 5, 4),), traceable=False, derivatives=False)],
    "numpy.get_printoptions": lambda: [Case("now", (), traceable=False, call=lambda M, fn: sorted(
        (k, str(v)) for k, v in fn().items()))],
    "numpy.set_printoptions": lambda: [Case("default", (), {"precision": 8}, traceable=False)],
    "numpy.printoptions": lambda: [Case("block", (), traceable=False, call=_printoptions)],
    "numpy.frombuffer": lambda: [Case("float32", (np.arange(3, dtype=np.float32).tobytes(),), {"dtype": np.float32},
                                      traceable=False),
                                 Case("offset", (bytes(range(8)),), {"dtype": np.uint8, "count": 4, "offset": 2},
                                      traceable=False)],
    "numpy.fromstring": lambda: [Case("sep", ("1 2 3.5",), {"sep": " "}, traceable=False),
                                 Case("int32", ("4,5,6",), {"sep": ",", "dtype": np.int32}, traceable=False)],
    "numpy.save": lambda: [Case("round_trip", (h(2, 3),), traceable=False, derivatives=False, call=_save_load)],
    "numpy.savez": lambda: [Case("named", (h(3),), traceable=False, derivatives=False, call=_savez_load)],
    "numpy.load": lambda: [Case("bfloat16", (h(4),), traceable=False, derivatives=False, call=_load_bfloat16)],
}

NOT_COMPARED = {
    "numpy.fromiter": "JAX refuses fromiter (NotImplementedError: the iterable is consumed, an effect); tracejit's "
                      "arrays are NumPy arrays, so it is np.fromiter (tests/test_jax_gaps_more.py checks it)",
}
