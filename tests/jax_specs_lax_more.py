"""How the differential suite (test_against_jax.py) calls the jax.lax functions tracejit.lax gained late: XLA's
gather and scatters with dimension numbers (lax/gather_scatter.py) and the small helpers of lax/extras.py.
Data from a generator of their own, so that adding cases here changes no other case's data."""
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
