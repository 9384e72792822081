"""How the differential suite (test_against_jax.py) calls the jax.lax functions tracejit.lax gained late: XLA's
gather and scatters with dimension numbers (lax/gather_scatter.py), the small helpers of lax/extras.py, the
implicit solves of lax/linear_solve.py, lax/conv_local.py's convolutions and the vmap collectives.
Data from a generator of their own, so that adding cases here changes no other case's data."""
import zlib

import numpy as np
from jax_oracle import Case, Static

L = np.random.default_rng(20261207)


def f(*shape):
    return L.uniform(-3, 3, shape)


ROWS = np.array([[0], [4], [2], [7], [-1], [2]])                     # out of range, negative and repeated
CORNERS = np.array([[[0, 1], [3, 3]], [[4, 5], [1, 0]]])             # windows that fit, clip, and do not fit


def _gather(dn, sizes, **kw):
    return lambda M, fn, x, idx: fn(x, idx, M.lax.GatherDimensionNumbers(**dn), sizes, **kw)


def _scatter(dn, **kw):
    return lambda M, fn, x, idx, upd: fn(x, idx, upd, M.lax.ScatterDimensionNumbers(**dn), **kw)


ROW_GATHER = {"offset_dims": (1, 2), "collapsed_slice_dims": (0,), "start_index_map": (0,)}
WINDOW_GATHER = {"offset_dims": (0, 3), "collapsed_slice_dims": (1,), "start_index_map": (1, 2)}
BATCHED_GATHER = {"offset_dims": (), "collapsed_slice_dims": (1,), "start_index_map": (1,),
                  "operand_batching_dims": (0,), "start_indices_batching_dims": (0,)}
ROW_SCATTER = {"update_window_dims": (1, 2), "inserted_window_dims": (0,), "scatter_dims_to_operand_dims": (0,)}
WINDOW_SCATTER = {"update_window_dims": (2, 3, 4), "inserted_window_dims": (), "scatter_dims_to_operand_dims": (0, 1)}


def _scatter_cases(name, derivatives=True):
    rows = Static(ROWS) if name == "scatter_mul" else ROWS
    corners = Static(CORNERS) if name == "scatter_mul" else CORNERS
    return [Case(f"rows {mode}", (f(5, 3, 2), rows, f(6, 3, 2)), call=_scatter(ROW_SCATTER, mode=mode),
                 derivatives=derivatives) for mode in (None, "clip")] + [
            Case("windows", (f(5, 6, 4), corners, f(2, 2, 2, 3, 4)), call=_scatter(WINDOW_SCATTER),
                 derivatives=derivatives)]


SPECS = {
    "lax.gather": lambda: [
        Case(f"rows {mode}", (f(5, 3, 2), ROWS), call=_gather(ROW_GATHER, (1, 3, 2), mode=mode))
        for mode in (None, "clip", "fill")] + [
        Case("windows fill", (f(5, 6, 4), CORNERS), call=_gather(WINDOW_GATHER, (5, 1, 2), mode="fill")),
        Case("windows", (f(5, 6, 4), CORNERS), call=_gather(WINDOW_GATHER, (5, 1, 2))),
        Case("batching dims", (f(3, 7), np.array([[1], [6], [9]])), call=_gather(BATCHED_GATHER, (1, 1), mode="fill"))],
    "lax.scatter": lambda: _scatter_cases("scatter", derivatives=False),
    "lax.scatter_add": lambda: _scatter_cases("scatter_add"),
    "lax.scatter_sub": lambda: _scatter_cases("scatter_sub"),
    "lax.scatter_mul": lambda: _scatter_cases("scatter_mul", derivatives=False),
    "lax.scatter_max": lambda: _scatter_cases("scatter_max", derivatives=False),
    "lax.scatter_min": lambda: _scatter_cases("scatter_min", derivatives=False),
    "lax.scatter_apply": lambda: [Case(f"rows {mode}", (f(5, 3, 2), ROWS), call=lambda M, fn, x, idx, mode=mode: fn(
        x, idx, lambda v: v * 2.0 + 1.0, M.lax.ScatterDimensionNumbers(**ROW_SCATTER), update_shape=(6, 3, 2), mode=mode),
        derivatives=False)       # (JAX has no jvp rule for it; tracejit differentiates through func)
        for mode in (None, "clip")],
}


# ------------------------------------------------------------------------- lax/extras, solves, collectives
def g(name, *shape):
    """Uniform draws in (-3, 3) from a generator of the name's own (the cases above keep their data)."""
    return np.random.default_rng(zlib.crc32(name.encode())).uniform(-3, 3, shape)


def _solve_matrix():
    return np.eye(3) * 4 + g("custom_linear_solve", 3, 3) * 0.3


def _linear_solve(M, fn, A, b, symmetric=False):
    solve = M.numpy.linalg.solve
    if symmetric:     # A + A^T: symmetric, solved by a few Jacobi-preconditioned fixed-point steps, with aux
        def jacobi(mv, r):
            d = M.numpy.diag(A + A.T)
            x = M.lax.fori_loop(0, 60, lambda i, x: x + (r - mv(x)) / d, r * 0)
            return x, M.numpy.sum(M.numpy.abs(mv(x) - r))
        x, _ = fn(lambda v: (A + A.T) @ v, b, jacobi, symmetric=True, has_aux=True)
        return x
    return fn(lambda v: A @ v, b, lambda mv, r: solve(A, r), lambda vm, r: solve(A.T, r))


def _root(M, fn, a):
    """The positive root of x^3 + a x - 2 for each a > 0 (Newton from 1), tangent_solve for a diagonal map."""
    def f(x):
        return x ** 3 + a * x - 2.0

    def newton(f, x0):
        return M.lax.fori_loop(0, 30, lambda i, x: x - f(x) / (3 * x ** 2 + a), x0)
    return fn(f, M.numpy.ones_like(a), newton, lambda lin, y: y / lin(M.numpy.ones_like(y)))


def _in_vmap(body):
    return lambda M, fn, x: M.api.vmap(lambda v: body(fn, v), axis_name="i")(x)


def _sharding(M):
    return M.api.sharding.SingleDeviceSharding(M.api.devices()[0]) if hasattr(M.api, "sharding") else None


FORMAT_EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65519.99, 65520.0, 6.1035e-5, 6.0e-5, 5.96e-8,
                         2.9e-8, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 3.4e38, 1e-40, 1e-310, -2.5e-39, 1.5])
PLAIN_INTS = {dt: np.random.default_rng(7).integers(np.iinfo(dt).min, np.iinfo(dt).max, (2, 6), dtype=dt,
                                                        endpoint=True) for dt in (np.int8, np.uint32, np.int64, np.uint64)}

SPECS.update({
    "lax.custom_linear_solve": lambda: [
        Case("dense", (_solve_matrix(), g("b", 3)), call=_linear_solve),
        Case("symmetric has_aux", (_solve_matrix(), g("b", 3)), call=lambda M, fn, A, b: _linear_solve(
            M, fn, A, b, symmetric=True))],
    "lax.custom_root": lambda: [Case("newton", (np.abs(g("root", 4)) + 0.5,), call=_root)],
    "lax.reduce_precision": lambda: [   # (its jvp is refused: gradients in test_lax_extras.py)
        Case(f"{dt.__name__} ({e}, {m})", (np.concatenate([FORMAT_EDGES, g("rp", 8) * 10.0 ** np.arange(-6, 10, 2)]
                                                            ).astype(dt),),
             call=lambda M, fn, x, e=e, m=m: fn(x, e, m), derivatives=False)
        for dt, e, m in ((np.float32, 5, 10), (np.float64, 8, 7), (np.float64, 5, 10), (np.float32, 4, 2))],
    "lax.approx_max_k": lambda: [Case("k=3", (g("amax", 3, 6), 3)),
                                 Case("axis 0 ties", (np.round(g("amax0", 5, 2)), 2), {"reduction_dimension": 0}),
                                 Case("not aggregated", (g("amax1", 2, 5), 2), {"aggregate_to_topk": False})],
    "lax.approx_min_k": lambda: [Case("k=2", (g("amin", 3, 6), 2)),
                                 Case("axis 0 ties", (np.round(g("amin0", 5, 2)), 3), {"reduction_dimension": 0})],
    "lax.mulhi": lambda: [Case(dt.__name__, (v, v[::-1])) for dt, v in PLAIN_INTS.items()],
    "lax.index_take": lambda: [Case("two axes", (g("take", 4, 5, 3), np.array([0, -1, 3, 7]), np.array([1, 2, -3, 0])),
                                    call=lambda M, fn, src, i, j: fn(src, (i, j), (0, 2)))],
    "lax.tile": lambda: [Case("2d", (g("tile", 2, 3), (2, 3)))],
    "lax.stack": lambda: [Case("axis=-1", ([g("stack", 2, 3), g("stack2", 2, 3)], -1))],
    "lax.unstack": lambda: [Case("axis=1", (g("unstack", 2, 3), 1))],
    "lax.broadcast_shapes": lambda: [Case("shapes", (g("bshapes", 3),),
                                          call=lambda M, fn, x: M.numpy.broadcast_to(x, fn((2, 1), (3,))))],
    "lax.broadcast_like": lambda: [Case("rows", (g("blike", 3), np.zeros((2, 3))))],
    "lax.empty": lambda: [Case("f32", ((2, 3), np.float32))],
    "lax.dtype": lambda: [Case(label, (x,), call=lambda M, fn, x: M.numpy.zeros(2, fn(x)) + x)
                          for label, x in (("f32", np.float32(1.5)), ("int8", np.ones(2, np.int8)))],
    "lax.optimization_barrier": lambda: [Case("pytree", (g("barrier", 3), g("barrier2", 2, 2)),
                                              call=lambda M, fn, x, y: fn((x * 2, y)))],
    "lax.with_sharding_constraint": lambda: [Case("one device", (g("wsc", 3),),
                                                  call=lambda M, fn, x: fn(x * 2, _sharding(M)))],
    "lax.composite": lambda: [Case("sin2", (g("composite", 3),), derivatives=False,  # (JAX has no jvp rule for it;
                                   call=lambda M, fn, x: fn(lambda v: M.numpy.sin(v) * 2, "my.sin2")(x))],  # tracejit differentiates the decomposition)
    "lax.platform_dependent": lambda: [Case("cpu", (g("platform", 3),),
                                            call=lambda M, fn, x: fn(x, cpu=M.numpy.sin, default=M.numpy.cos)),
                                       Case("default", (g("platform", 3),),
                                            call=lambda M, fn, x: fn(x, tpu=M.numpy.sin, default=M.numpy.cos))],
    "lax.ppermute": lambda: [Case("cycle", (g("ppermute", 4, 2),), call=_in_vmap(
        lambda fn, v: fn(v, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]) * v))],
    "lax.pshuffle": lambda: [Case("perm", (g("pshuffle", 4, 2),), call=_in_vmap(lambda fn, v: fn(v, "i", [3, 0, 2, 1]) * v))],
    "lax.psum_scatter": lambda: [
        Case("untiled", (g("psum_scatter", 4, 4, 2),), call=_in_vmap(lambda fn, v: fn(v, "i") * v[0])),
        Case("tiled dim 1", (g("psum_scatter1", 4, 3, 8),), call=_in_vmap(
            lambda fn, v: fn(v, "i", scatter_dimension=1, tiled=True)))],
    "lax.all_to_all": lambda: [
        Case("0 to 2", (g("all_to_all", 3, 3, 2, 4),), call=_in_vmap(lambda fn, v: fn(v, "i", 0, 2) * v[0, 0, 0])),
        Case("tiled 1 to 0", (g("all_to_all1", 3, 2, 6),), call=_in_vmap(lambda fn, v: fn(v, "i", 1, 0, tiled=True)))],
    "lax.conv_general_dilated_patches": lambda: [
        Case("NCHW strided dilated", (g("patches", 2, 3, 7, 6),),
             call=lambda M, fn, x: fn(x, (3, 2), (2, 1), "SAME", rhs_dilation=(1, 2))),
        Case("NHWC lhs dilation", (g("patches1", 2, 5, 4, 2),), call=lambda M, fn, x: fn(
            x, (2, 2), (1, 2), ((1, 0), (0, 2)), lhs_dilation=(2, 1), dimension_numbers=("NHWC", "HWIO", "NHWC")))],
    "lax.conv_general_dilated_local": lambda: [
        Case("NHWC", (g("local", 2, 7, 6, 3), g("local_w", 5, 5, 18, 4)), call=lambda M, fn, x, w: fn(
            x, w, (1, 1), "VALID", (3, 2), dimension_numbers=("NHWC", "HWIO", "NHWC")))],
    "lax.ragged_dot": lambda: [Case("groups", (g("ragged", 7, 3), g("ragged_rhs", 3, 3, 2), np.array([2, 0, 4], np.int32)))],
    # JAX's own pbroadcast fails under vmap (its batching rule passes jnp.take a list, JAX 0.10.2), so JAX's side
    # computes the documented meaning, all_gather(v)[source]; tracejit's side calls pbroadcast
    "lax.pbroadcast": lambda: [Case("source 2", (g("pbroadcast", 4, 2),), call=lambda M, fn, x: M.api.vmap(
        lambda v: (M.lax.all_gather(v, "i")[2] if M.api.__name__ == "jax" else fn(v, "i", 2)) * v, axis_name="i")(x))],
    "lax.random_gamma_grad": lambda: [Case("a, x", (np.array([0.5, 2.0, 30.0, 0.05, 5.0]), np.array([0.3, 1.5, 28.0, 1e-4, 12.0])),
                                           derivatives=False)],   # (JAX's grad refuses its loop; its jvp is JAX's own)
    "lax.stage": lambda: [Case("array", (g("stage", 3),), derivatives=False),   # (JAX's derivatives of stage raise
                          Case("scalar", (2.5,), derivatives=False)],          # an internal AssertionError)
    "lax.pswapaxes": lambda: [Case("axis 1", (g("pswapaxes", 3, 2, 3),), call=_in_vmap(lambda fn, v: fn(v, "i", 1)))],
})
