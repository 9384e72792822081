"""tracejit against JAX: every public function of tracejit.numpy (with .linalg and .fft), tracejit.lax,
tracejit.nn and tracejit (its transformations) runs under JAX and under tracejit with the same code, eagerly and
under jit (how to call linalg, fft and lax's convolutions and windows: tests/jax_specs.py).

- Values and shapes are compared with JAX's (run with x64), first and second derivatives too (jvp, the
  gradient of a random projection, jvp of jvp, grad of grad), at random points and at each function's special
  points: ties, zeros, bounds, size-0 and size-1 arrays (infinities and NaN: values only). Complex arrays too,
  for the functions inferred below (elementwise, with an axis, of one or two arrays): derivatives with complex
  tangents and the gradient of the real part of the projection, JAX's convention.
- Dtypes are compared with NumPy's where NumPy has the function (tracejit promotes as NumPy 2, with float64
  defaults; JAX with x64 is close, not equal), else with JAX's. The cases that only vary dtypes or shapes are
  compared with NumPy where NumPy has the function (JAX otherwise).
- Functions come from the modules themselves (jax_oracle.public_functions), so a new one is tested without
  editing a list: its calls are inferred by probing (elementwise functions of one or two arrays, functions
  with an axis, functions of one or two arrays at several shapes) unless SPECS says how to call it. Aliases
  (tnp.amax is tnp.max) run once. NOT_IN_JAX lists the functions JAX does not have; KNOWN, every known
  difference with its reason. A listed difference that disappears fails the suite, so the table stays true.
- Cost: JAX's XLA compiles dominate; the cases of all functions are compiled as a few large programs (JAX's in
  a thread while tracejit's jit compiles), about 30 s of CPU in all.
"""
import concurrent.futures
import functools
import os

import numpy as np
import pytest

# XLA's compile is the suite's cost: without its fusion emitters and LLVM's expensive passes it compiles the
# oracle programs ~6x faster (the flags change no result: XLA's CPU code never uses fast math). They act if
# this module is the first to start JAX in the test session.
os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", ""), "--xla_cpu_use_fusion_emitters=false",
                                    "--xla_backend_optimization_level=0", "--xla_llvm_disable_expensive_passes=true"])
jax = pytest.importorskip("jax", reason="the differential suite needs jax (pip install 'tracejit[test]')")
jax.config.update("jax_enable_x64", True)

# after jax's configuration:
import jax_oracle as jo
import jax_specs
import jax_specs_gaps
import jax_specs_lax_more
import jax_specs_sharding
import jax_specs_top_level
import oracle_process
from jax_oracle import Case, Static

import tracejit.numpy as tnp

R = np.random.default_rng(20240601)


def r(*shape):
    return R.uniform(-3, 3, shape)


def ints(*shape, low=-4, high=5):
    return R.integers(low, high, shape)


def u(name, *shape):
    """Uniform draws in (-3, 3) from a generator of the spec's own (later specs leave R's draws as they were)."""
    return jo.rng_for(name, shape).uniform(-3, 3, shape)


BOUNDED = np.array([-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5])     # ties with the bounds -1 and 1 of clip and clamp
COND = np.array([True, False, True, False])


# ------------------------------------------------------------------------------------------------ SPECS
# How to call the functions whose calls cannot be inferred: qualified name -> cases (tests/jax_oracle.Case).
SPECS = {
    "numpy.arange": lambda: [Case("stop", (5,)), Case("start_stop_step", (1, 10, 3)), Case("floats", (0.0, 1.0, 0.25)),
                             Case("negative_step", (5, -3, -2)), Case("dtype", (4,), {"dtype": np.float32}),
                             Case("empty", (3, 1))],
    "numpy.array_split": lambda: [Case("sections", (r(7, 3), 3)), Case("indices", (r(7, 3), [2, 5])),
                                  Case("axis", (r(2, 5), 2, 1)), Case("empty", (r(0, 2), 2))],
    "numpy.astype": lambda: [Case("float32", (r(3), np.float32)), Case("int32", (r(3), np.int32)),
                             Case("from_int", (ints(3), np.float64)), Case("bool", (r(3), np.bool_))],
    "numpy.atleast_1d": lambda: _atleast_cases(),
    "numpy.atleast_2d": lambda: _atleast_cases(),
    "numpy.atleast_3d": lambda: _atleast_cases(),
    "numpy.average": lambda: jo.axis_cases("numpy.average", {"axis": None, "keepdims": False}) + [
        Case("weights", (r(3, 4), 0, R.uniform(0.5, 2, 3))), Case("weights_all", (r(3, 4), None, R.uniform(0.5, 2, (3, 4)))),
        Case("returned", (r(3, 4), 1, R.uniform(0.5, 2, 4), True))],
    "numpy.broadcast_to": lambda: [Case("row", (r(3), (2, 3))), Case("scalar", (np.array(1.5), (2, 2))),
                                   Case("ones", (r(1, 3), (4, 3))), Case("empty", (r(3), (0, 3)))],
    "numpy.clip": lambda: [Case("bounds", (BOUNDED, -1.0, 1.0)), Case("lower", (BOUNDED, -1.0)),
                           Case("upper", (BOUNDED, None, 1.0)), Case("array_bounds", (BOUNDED, BOUNDED - 0.5, BOUNDED)),
                           Case("ties_with_array_bounds", (BOUNDED, BOUNDED, BOUNDED.copy())),
                           Case("crossed", (BOUNDED, 1.0, -1.0)), Case("int64", (ints(6), 0, 3)),
                           Case("keywords", (BOUNDED,), {"min": -1.0, "max": 1.0})],
    "numpy.column_stack": lambda: [Case("vectors", ([r(3), r(3)],)), Case("mixed", ([r(3, 2), r(3)],))],
    "numpy.concatenate": lambda: [Case("rows", ([r(2, 3), r(1, 3)],)), Case("columns", ([r(2, 3), r(2, 2)],), {"axis": 1}),
                                  Case("flat", ([r(2, 3), r(4)],), {"axis": None}), Case("empty", ([r(0, 3), r(2, 3)],)),
                                  Case("one", ([r(2)],)), Case("int_float", ([ints(2), r(2)],))],
    "numpy.dstack": lambda: [Case("vectors", ([r(3), r(3)],)), Case("matrices", ([r(2, 3), r(2, 3)],))],
    "numpy.hstack": lambda: [Case("vectors", ([r(3), r(2)],)), Case("matrices", ([r(2, 3), r(2, 1)],)),
                             Case("scalars", ([np.array(1.0), np.array(2.0)],))],
    "numpy.vstack": lambda: [Case("vectors", ([r(3), r(3)],)), Case("matrices", ([r(2, 3), r(1, 3)],))],
    "numpy.stack": lambda: [Case("axis0", ([r(2, 3), r(2, 3)],)), Case("axis1", ([r(2, 3), r(2, 3)],), {"axis": 1}),
                            Case("last", ([r(3), r(3), r(3)],), {"axis": -1}), Case("scalars", ([np.array(1.0), np.array(2.0)],))],
    "numpy.einsum": lambda: [Case(s, (s, *(r(*shape) for shape in shapes))) for s, shapes in (
        ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii", [(3, 3)]), ("ii->i", [(3, 3)]),
        ("ij->", [(2, 3)]), ("ij->ji", [(2, 3)]), ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 2)]),
        ("i...->...", [(2, 3, 4)]), ("ijk,ikl,lm->jm", [(2, 3, 4), (2, 4, 2), (2, 5)]), ("i,i,i->", [(3,), (3,), (3,)]),
        ("i,j->ij", [(2,), (3,)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]), ("ij,ij->i", [(0, 3), (0, 3)]),
        ("ij,jk->ik", [(2, 0), (0, 3)]))] + [
        Case("sublists", (r(2, 3), [0, 1], r(3, 4), [1, 2])), Case("sublists_output", (r(2, 3), [0, 1], r(3, 4), [1, 2], [2, 0])),
        Case("sublists_ellipsis", (r(2, 2, 3), [Ellipsis, 0, 1], r(3, 2), [1, 2], [Ellipsis, 2])),
        Case("int32", ("ij,jk", ints(2, 3).astype(np.int32), ints(3, 2).astype(np.int32)))],
    "numpy.empty": lambda: _shape_cases(),
    "numpy.zeros": lambda: _shape_cases(),
    "numpy.ones": lambda: _shape_cases(),
    "numpy.empty_like": lambda: [Case("float", (r(2, 3),)), Case("dtype", (r(3), np.int32)), Case("int", (ints(3),)),
                                 Case("empty", (r(0, 2),))],     # compared with JAX: NumPy's are uninitialised
    "numpy.full": lambda: [Case("scalar", ((2, 3), 1.5)), Case("int", ((3,), 2, np.int32)), Case("traced_fill", ((2, 3), r(3))),
                           Case("empty", ((0, 2), 1.0))],
    "numpy.full_like": lambda: [Case("scalar", (r(2, 3), 1.5)), Case("dtype", (r(2, 3), 2, np.int32)),
                                Case("traced_fill", (r(2, 3), r(3))), Case("int", (ints(3), 2.7))],
    "numpy.eye": lambda: [Case("square", (3,)), Case("wide", (3, 4, 1)), Case("below", (3, 2, -1)),
                          Case("dtype", (2,), {"dtype": np.int32}), Case("empty", (0,))],
    "numpy.identity": lambda: [Case("three", (3,)), Case("empty", (0,)), Case("dtype", (2, np.int32))],
    "numpy.linspace": lambda: [Case("five", (0.0, 1.0, 5)), Case("no_endpoint", (1, 2, 4, False)), Case("one", (0, 1, 1)),
                               Case("none", (0, 1, 0)), Case("traced_ends", (np.array(-1.0), np.array(2.0), 5)),
                               Case("int_dtype", (0, 10, 4), {"dtype": np.int64})],
    "numpy.meshgrid": lambda: [Case("xy", (r(3), r(2))), Case("ij", (r(3), r(2)), {"indexing": "ij"}),
                               Case("sparse", (r(3), r(2)), {"sparse": True}), Case("one", (r(3),)),
                               Case("three", (r(2), r(3), r(1)))],
    "numpy.expand_dims": lambda: [Case("first", (r(2, 3), 0)), Case("last", (r(2, 3), -1)), Case("two", (r(2, 3), (0, 2))),
                                  Case("scalar", (np.array(1.5), 0))],
    "numpy.interp": lambda: [Case("inside_knots_outside", (np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 4.0]),
                                                            np.array([0.0, 1.0, 3.0]), np.array([1.0, -1.0, 2.0]))),
                             Case("left_right", (np.array([-1.0, 0.5, 4.0]), np.array([0.0, 1.0]), np.array([1.0, 2.0]),
                                                 -5.0, 5.0))],
    "numpy.moveaxis": lambda: [Case("one", (r(2, 3, 4), 0, -1)), Case("two", (r(2, 3, 4), (0, 1), (2, 0)))],
    "numpy.pad": lambda: [Case("all", (r(2, 3), 1)), Case("per_axis", (r(2, 3), ((1, 0), (0, 2)))),
                          Case("value", (r(3), 2), {"constant_values": 5.0}), Case("empty", (r(0), 1))],
    "numpy.repeat": lambda: [Case("flat", (r(3), 2)), Case("axis", (r(2, 3), 2, 1)),
                             Case("counts", (r(3), Static(np.array([1, 0, 2]))))],
    "numpy.reshape": lambda: [Case("swap", (r(2, 3), (3, 2))), Case("flat", (r(2, 3), -1)), Case("infer", (r(2, 3), (3, -1))),
                              Case("grow", (r(6), (2, 1, 3))), Case("scalar", (r(1), ())), Case("keyword", (r(2, 3),), {"shape": (6,)})],
    "numpy.roll": lambda: [Case("flat", (r(5), 2)), Case("axis", (r(2, 3), -1, 1)), Case("two_axes", (r(2, 3), (1, 1), (0, 1))),
                           Case("whole", (r(2, 3), 4)), Case("empty", (r(0), 1))],
    "numpy.searchsorted": lambda: [
        Case("left", (np.array([0.0, 1.0, 1.0, 2.0]), np.array([-1.0, 0.0, 1.0, 1.5, 2.0, 3.0])), derivatives=False),
        Case("right", (np.array([0.0, 1.0, 1.0, 2.0]), np.array([-1.0, 0.0, 1.0, 1.5, 2.0, 3.0]), "right"), derivatives=False),
        Case("sorter", (np.array([2.0, 0.0, 1.0]), np.array([0.5, 2.0]), "left", np.array([1, 2, 0])), derivatives=False)],
    "numpy.split": lambda: [Case("sections", (r(6, 2), 3)), Case("indices", (r(6, 2), [1, 4])), Case("axis", (r(2, 4), 2, 1))],
    "numpy.swapaxes": lambda: [Case("outer", (r(2, 3, 4), 0, 2)), Case("negative", (r(2, 3), -1, 0))],
    "numpy.take": lambda: [Case("flat", (r(5), np.array([0, 3, 3, -1]))), Case("axis", (r(3, 4), np.array([2, 0]), 1)),
                           Case("matrix_flat", (r(3, 4), np.array([[0, 11], [5, 5]]))), Case("scalar", (r(5), 2)),
                           Case("out_of_range", (r(5), np.array([0, 7])))],
    "numpy.take_along_axis": lambda: [Case("rows", (r(3, 4), np.argsort(r(3, 4), 1), 1)),
                                      Case("columns", (r(3, 4), ints(2, 4, low=0, high=3), 0)),
                                      Case("flat", (r(3, 4), ints(5, low=0, high=12), None))],
    "numpy.tile": lambda: [Case("flat", (r(3), 2)), Case("matrix", (r(2, 3), (2, 1))), Case("grow", (r(3), (2, 2))),
                           Case("zero", (r(2), 0))],
    "numpy.where": lambda: [Case("arrays", (COND, r(4), r(4))), Case("ties", (COND, BOUNDED[:4], BOUNDED[:4].copy())),
                            Case("scalar", (COND, r(4), 0.0)), Case("broadcast", (COND, r(2, 4), r(4))),
                            Case("int", (COND, ints(4), ints(4))), Case("nonzero", (COND,), traceable=False)],
    "lax.argmax": lambda: [Case("rows", (r(3, 4), 1, np.int32)), Case("ties", (BOUNDED.reshape(1, -1).repeat(2, 0), 0, np.int64))],
    "lax.argmin": lambda: [Case("rows", (r(3, 4), 1, np.int32)), Case("ties", (BOUNDED.reshape(1, -1).repeat(2, 0), 0, np.int64))],
    "lax.broadcast_in_dim": lambda: [Case("row", (r(3), (2, 3), (1,))), Case("scalar", (np.array(1.5), (2, 2), ()))],
    "lax.broadcasted_iota": lambda: [Case("int32", (np.int32, (2, 3), 1)), Case("float64", (np.float64, (3,), 0))],
    "lax.clamp": lambda: [Case("scalars", (-1.0, BOUNDED, 1.0)), Case("arrays", (BOUNDED - 0.5, BOUNDED, BOUNDED)),
                          Case("ties", (BOUNDED, BOUNDED.copy(), BOUNDED + 1.0))],
    "lax.concatenate": lambda: [Case("rows", ([r(2, 3), r(1, 3)], 0)), Case("columns", ([r(2, 3), r(2, 1)], 1))],
    "lax.convert_element_type": lambda: [Case("float32", (r(3), np.float32)), Case("int32", (r(3), np.int32)),
                                         Case("from_int", (ints(3), np.float64))],
    "lax.cond": lambda: [Case(f"pred={p}", (np.array(p), r(3)),
                              call=lambda M, fn, p, x: fn(p, lambda v: v * 2.0, lambda v: M.numpy.sin(v) * v, x))
                         for p in (True, False)],
    "lax.switch": lambda: [Case(f"index={i}", (np.array(i, np.int32), r(3)),
                                call=lambda M, fn, i, x: fn(i, [lambda v: v, lambda v: v * v, lambda v: M.numpy.cos(v)], x))
                           for i in (0, 1, 2, 5, -1)],
    "lax.fori_loop": lambda: [Case("loop", (r(3),), call=lambda M, fn, x: fn(0, 3, lambda i, v: v * M.numpy.sin(v) + i, x))],
    "lax.while_loop": lambda: [Case("loop", (r(3),), call=lambda M, fn, x: fn(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * M.numpy.cos(c[1])), (0, x))[1])],
    "lax.scan": lambda: [Case("carry_and_outputs", (r(2), r(4, 2)), call=lambda M, fn, c, xs: fn(
        lambda carry, x: (carry * x + 1.0, M.numpy.sin(carry)), c, xs)),
        Case("reverse", (r(2), r(3, 2)), call=lambda M, fn, c, xs: fn(lambda carry, x: (carry + x, carry * x), c, xs,
                                                                      reverse=True))],
    # (a generator of its own, not R: a spec added later leaves the other cases' draws as they were)
    "lax.map": lambda: [Case(f"batch_size={b}", (jo.rng_for("lax.map").uniform(-3, 3, (7, 2)),),
                             call=lambda M, fn, xs, b=b: fn(lambda x: (x * M.numpy.sin(x), x.sum()), xs, batch_size=b))
                        for b in (None, 1, 3, 7, 9)],
    "lax.full": lambda: [Case("float", ((2, 3), 1.5), derivatives=False), Case("dtype", ((2,), 3, np.float32)),
                         Case("array", ((3,), np.array(2.0)))],
    "lax.full_like": lambda: [Case("like", (u("full_like", 2, 3), 4.0)), Case("dtype", (u("full_like", 3), 2, np.int32)),
                              Case("shape", (u("full_like", 2), 1.5, None, (3, 1)))],
    "lax.broadcast": lambda: [Case("two", (u("broadcast", 3), (2, 4))), Case("none", (u("broadcast", 2, 2), ()))],
    "lax.broadcast_to_rank": lambda: [Case("grow", (u("broadcast_to_rank", 3), 3)), Case("same", (u("broadcast_to_rank", 3), 1))],
    "lax.collapse": lambda: [Case("tail", (u("collapse", 2, 3, 4), 1)), Case("middle", (u("collapse", 2, 3, 4, 2), 1, 3)),
                             Case("negative", (u("collapse", 2, 3, 4), 0, -1))],
    "lax.split": lambda: [Case("rows", (u("split", 5, 2), (2, 0, 3))), Case("axis", (u("split", 2, 5), (1, 4), 1))],
    "lax.batch_matmul": lambda: [Case("batched", (u("batch_matmul", 2, 3, 4), u("batch_matmul", 2, 4, 5))),
                                 Case("matrices", (u("batch_matmul", 2, 3), u("batch_matmul", 3, 2)))],
    "lax.square": lambda: [Case("float", (u("square", 5),)), Case("int", (np.arange(-2, 3),), derivatives=False)],
    "lax.reciprocal": lambda: [Case("float", (u("reciprocal", 5),))],
    "lax.reduce": lambda: [
        Case("add", (u("reduce", 3, 4), 0.0), call=lambda M, fn, x, i: fn(x, i, M.lax.add, (1,))),
        Case("max lambda", (u("reduce", 3, 5), -np.inf), call=lambda M, fn, x, i: fn(x, i, lambda a, b: M.lax.max(a, b), (0, 1))),
        Case("two operands", (u("reduce", 7), u("reduce", 7)), call=lambda M, fn, x, y: fn(
            (x, y), (0.0, 1.0), lambda a, b: (a[0] + b[0], a[1] * b[1]), (0,)))],
    "lax.reduce_and": lambda: [Case("bool", (np.array([[True, False, True], [True, True, True]]), (1,))),
                               Case("int", (np.array([[7, 5, 13], [6, 3, 2]]), (0, 1)))],
    "lax.reduce_or": lambda: [Case("bool", (np.array([[True, False, False], [False, False, False]]), (1,))),
                              Case("int", (np.array([[1, 4, 8], [2, 2, 16]], np.uint8), (0,)))],
    "lax.reduce_xor": lambda: [Case("bool", (np.array([True, True, False, True]), (0,))),
                               Case("int", (np.array([[3, 5, 6], [9, 10, 12]]), (1,)))],
    "lax.psum": lambda: [Case("vmap", (u("psum", 3, 2),), call=lambda M, fn, x: M.api.vmap(lambda v: v / fn(v, "i"),
                                                                                        axis_name="i")(x))],
    "lax.pmean": lambda: [Case("vmap", (u("pmean", 3, 2),), call=lambda M, fn, x: M.api.vmap(lambda v: v * fn(v, "i"),
                                                                                          axis_name="i")(x))],
    "lax.pmax": lambda: [Case("vmap", (u("pmax", 3, 2),), derivatives=False,
                              call=lambda M, fn, x: M.api.vmap(lambda v: fn(v, "i") - v, axis_name="i")(x))],
    "lax.pmin": lambda: [Case("vmap", (u("pmin", 3, 2),), derivatives=False,
                              call=lambda M, fn, x: M.api.vmap(lambda v: fn(v, "i") - v, axis_name="i")(x))],
    "lax.all_gather": lambda: [Case(f"axis={a} tiled={t}", (u("all_gather", 3, 2),), call=lambda M, fn, x, a=a, t=t:
                                    M.api.vmap(lambda v: fn(v, "i", axis=a, tiled=t) * v[0], axis_name="i")(x))
                               for a, t in ((0, False), (1, False), (0, True))],
    "lax.axis_index": lambda: [Case("vmap", (u("axis_index", 3, 2),), derivatives=False,
                                    call=lambda M, fn, x: M.api.vmap(lambda v: v * fn("i"), axis_name="i")(x))],
    "lax.axis_size": lambda: [Case("vmap", (u("axis_size", 3, 2),), derivatives=False,
                                   call=lambda M, fn, x: M.api.vmap(lambda v: v * fn("i"), axis_name="i")(x))],
    "lax.dot": lambda: [Case("matrix_vector", (r(2, 3), r(3))), Case("matrices", (r(2, 3), r(3, 4))), Case("vectors", (r(3), r(3))),
                        Case("precision", (r(2, 3), r(3)), {"precision": "highest"})],
    "lax.dot_general": lambda: [Case("batched", (r(2, 3, 4), r(2, 4, 5), (((2,), (1,)), ((0,), (0,))))),
                                Case("outer", (r(2), r(3), (((), ()), ((), ())))),
                                Case("preferred", (r(2, 3), r(3), (((1,), (0,)), ((), ()))), {"preferred_element_type": np.float64})],
    "lax.dynamic_slice": lambda: [Case(f"start={s}", (r(5), (np.array(s),), (3,))) for s in (1, 4, -1)],
    "lax.dynamic_update_slice": lambda: [Case(f"start={s}", (r(5), r(2), (np.array(s),))) for s in (1, 4, -2)],
    "lax.dynamic_slice_in_dim": lambda: [Case(f"start={s}", (r(3, 5), np.array(s), 3, 1)) for s in (1, 4, -1)],
    "lax.dynamic_index_in_dim": lambda: [Case(f"index={s}, keepdims={k}", (r(4, 3), np.array(s), 0, k))
                                         for s in (2, -1) for k in (True, False)],
    "lax.dynamic_update_slice_in_dim": lambda: [Case(f"start={s}", (r(3, 5), r(3, 2), np.array(s), 1))
                                                for s in (1, 4, -2)],
    "lax.dynamic_update_index_in_dim": lambda: [Case("without axis", (r(4, 3), r(3), np.array(2), 0)),
                                                Case("with axis", (r(4, 3), r(4, 1), np.array(-1), 1))],
    "lax.slice_in_dim": lambda: [Case("middle", (r(3, 6), 1, 5, 1, 1)), Case("negative, strided", (r(6, 2), -5, -1, 2)),
                                 Case("ends", (r(4), None, None))],
    "lax.index_in_dim": lambda: [Case(f"index={i}, keepdims={k}", (r(4, 3), i, 1, k)) for i in (0, -1) for k in (True, False)],
    "lax.expand_dims": lambda: [Case("first", (r(2, 3), (0,))), Case("two", (r(2, 3), (0, 3)))],
    "lax.integer_pow": lambda: [Case(f"y={y}", (np.array([0.0, -2.0, 0.5, 1.5, -1.0]), y)) for y in (3, 2, 1, 0, -1, -2)] + [
        Case("int", (ints(4), 3), derivatives=False)],
    "lax.iota": lambda: [Case("int32", (np.int32, 4)), Case("float64", (np.float64, 3))],
    "lax.pad": lambda: [Case("edges", (r(3), 0.0, ((1, 2, 0),))), Case("interior", (r(3), 0.0, ((1, 0, 1),))),
                        Case("negative", (r(4), 0.5, ((-1, 1, 0),))), Case("two_axes", (r(2, 2), 0.0, ((0, 1, 0), (1, 0, 1))))],
    "lax.reduce_sum": lambda: _lax_reduce_cases(),
    "lax.reduce_max": lambda: _lax_reduce_cases(),
    "lax.reduce_min": lambda: _lax_reduce_cases(),
    "lax.reduce_prod": lambda: _lax_reduce_cases(),
    "lax.reshape": lambda: [Case("swap", (r(2, 3), (3, 2))), Case("grow", (r(6), (1, 2, 3)))],
    "lax.rev": lambda: [Case("first", (r(2, 3), (0,))), Case("both", (r(2, 3), (0, 1)))],
    "lax.select": lambda: [Case("arrays", (COND, r(4), r(4))), Case("ties", (COND, BOUNDED[:4], BOUNDED[:4].copy()))],
    "lax.select_n": lambda: [Case("bool", (COND, r(4), r(4))),
                             Case("int32", (np.array([0, 2, 1, 2], np.int32), r(4), r(4), r(4)))],
    "lax.slice": lambda: [Case("middle", (r(5), (1,), (4,))), Case("strides", (r(6), (0,), (6,), (2,))),
                          Case("matrix", (r(3, 4), (1, 0), (3, 4)))],
    "lax.squeeze": lambda: [Case("two", (r(1, 3, 1), (0, 2)))],
    "lax.transpose": lambda: [Case("cycle", (r(2, 3, 4), (2, 0, 1)))],
    "lax.real": lambda: _complex_cases(),
    "lax.imag": lambda: _complex_cases(),
    "lax.conj": lambda: _complex_cases() + [Case("float", (r(3),))],
    "nn.dot_product_attention": lambda: [Case("multi-head", (r(2, 4, 2, 3), r(2, 5, 2, 3), r(2, 5, 2, 3))),
                                         Case("grouped causal", (r(1, 4, 4, 2), r(1, 4, 2, 2), r(1, 4, 2, 2), None,
                                                                 None, None, True))],
    "nn.one_hot": lambda: [Case("int", (np.array([0, 2, 1, 5, -1]), 3)), Case("axis", (np.array([[0, 1], [2, 0]]), 3),
                                                                                 {"axis": 0}),
                           Case("float", (np.array([0.0, 1.0, 1.5]), 2)), Case("dtype", (np.array([1, 0]), 2),
                                                                              {"dtype": np.int32})],
    "numpy.finfo": lambda: [Case(np.dtype(d).name, (d,), traceable=False, call=lambda M, fn, d: _finfo_fields(fn(d)))
                            for d in (np.float16, jo.ml_dtypes.bfloat16, np.float32, np.complex64)],
    "numpy.iinfo": lambda: [Case(np.dtype(d).name, (d,), traceable=False, call=lambda M, fn, d: (fn(d).min, fn(d).max, fn(d).bits))
                            for d in (np.int8, np.uint16, np.int64)],
    "lax.betainc": lambda: [Case("random", (R.uniform(0.5, 3, 5), R.uniform(0.5, 3, 5), R.uniform(0, 1, 5))),
                            Case("bounds", (np.array([1.0, 2.0, 0.5]), np.array([2.0, 1.0, 0.5]), np.array([0.0, 1.0, 0.5])))],
    "lax.bitcast_convert_type": lambda: [Case("f32_i32", (r(3).astype(np.float32), np.int32), derivatives=False),
                                         Case("f64_u64", (r(3), np.uint64), derivatives=False),
                                         Case("i16_f16", (ints(3).astype(np.int16), np.float16), derivatives=False),
                                         Case("f32_u8", (r(3).astype(np.float32), np.uint8), derivatives=False)],
    "numpy.can_cast": lambda: [Case(f"{a.__name__}->{b.__name__}", (a, b), traceable=False)
                               for a, b in ((np.int32, np.float64), (np.float64, np.int32), (np.float32, np.float64))],
    "numpy.isdtype": lambda: [Case(f"{a.__name__} {k}", (np.dtype(a), k), traceable=False)
                              for a in (np.int32, np.float64, np.bool_) for k in ("integral", "real floating", "numeric")],
    "numpy.issubdtype": lambda: [Case(f"{a.__name__} {b.__name__}", (a, b), traceable=False)
                                 for a in (np.int32, np.float64) for b in (np.integer, np.floating, np.number)],
    "numpy.promote_types": lambda: [Case(f"{a.__name__} {b.__name__}", (a, b), traceable=False, call=_dtype_name)
                                    for a, b in ((np.int32, np.float32), (np.int64, np.float64), (np.int32, np.int64))],
    "numpy.result_type": lambda: [Case(f"{a} {b}", (a, b), traceable=False, call=_dtype_name)
                                  for a, b in ((np.int32, np.float32), (np.float32, 1.0), (np.int32, 2), (np.float32, np.int64))],
    # the transformations of tracejit, on one program each (written once for both libraries: M is the namespace)
    "tracejit.grad": lambda: [
        Case("one", (r(3),), call=lambda M, grad, x: grad(lambda y: M.numpy.sum(M.numpy.sin(y) * y))(x)),
        Case("argnums", (r(3), r(3)), call=lambda M, grad, x, y: grad(lambda a, b: M.numpy.sum(a * M.numpy.exp(b)),
                                                                     argnums=(0, 1))(x, y)),
        Case("has_aux", (r(3),), call=lambda M, grad, x: grad(lambda y: (M.numpy.sum(y ** 3), y * 2), has_aux=True)(x))],
    "tracejit.value_and_grad": lambda: [
        Case("one", (r(3),), call=lambda M, vg, x: vg(lambda y: M.numpy.sum(M.numpy.tanh(y)))(x))],
    "tracejit.jvp": lambda: [Case("one", (r(3), r(3)), call=lambda M, jvp, x, t: jvp(lambda y: M.numpy.sin(y) * y, (x,), (t,)))],
    "tracejit.vjp": lambda: [Case("one", (r(3), r(3)), call=lambda M, vjp, x, c: _applied(vjp(lambda y: M.numpy.cos(y) * y, x), c))],
    "tracejit.linearize": lambda: [Case("one", (r(3), r(3)), call=lambda M, lin, x, t: _applied(lin(lambda y: M.numpy.exp(y) * y, x), t))],
    "tracejit.vmap": lambda: [
        Case("rows", (r(4, 3),), call=lambda M, vmap, x: vmap(lambda row: M.numpy.dot(row, row))(x)),
        Case("in_axes", (r(3, 4), r(3)), call=lambda M, vmap, x, v: vmap(lambda col, v: col * v, in_axes=(1, None))(x, v)),
        Case("out_axes", (r(4, 3),), call=lambda M, vmap, x: vmap(lambda row: row * 2.0, out_axes=1)(x))],
    "tracejit.jacfwd": lambda: [Case("one", (r(3),), call=lambda M, jac, x: jac(lambda y: M.numpy.sin(y) * M.numpy.sum(y))(x))],
    "tracejit.jacrev": lambda: [Case("one", (r(3),), call=lambda M, jac, x: jac(lambda y: M.numpy.sin(y) * M.numpy.sum(y))(x))],
    "tracejit.jacobian": lambda: [Case("one", (r(3),), call=lambda M, jac, x: jac(lambda y: M.numpy.sin(y) * M.numpy.sum(y))(x))],
    "tracejit.hessian": lambda: [Case("one", (r(3),), call=lambda M, hess, x: hess(lambda y: M.numpy.sum(M.numpy.sin(y) * y[0]))(x)),
                                 Case("logaddexp_at_zero", (np.zeros(3),), call=lambda M, hess, z: hess(
                                     lambda y: M.numpy.sum(M.numpy.logaddexp(0.0, y)))(z))],
    "tracejit.jit": lambda: [Case("one", (r(3),), call=lambda M, jit, x: jit(lambda y: M.numpy.tanh(y) * 2.0)(x)),
                             Case("static", (r(3),), call=lambda M, jit, x: jit(lambda y, n: y ** n, static_argnums=1)(x, 3))],
    "tracejit.checkpoint": lambda: [
        Case("grad", (r(3),), call=lambda M, ckpt, x: M.api.grad(lambda y: M.numpy.sum(ckpt(lambda v: M.numpy.sin(v) * v)(y)))(x)),
        Case("policy", (r(3), r(3)), call=lambda M, ckpt, x, w: M.api.vjp(ckpt(
            lambda v: M.numpy.tanh(v @ w) * v, policy=M.api.checkpoint_policies.nothing_saveable), x)[1](w)),
        Case("static", (r(3),), call=lambda M, ckpt, x: ckpt(lambda v, n: v ** n, static_argnums=(1,))(x, 3))],
    "tracejit.custom_jvp": lambda: [Case("rule", (r(3),), call=_custom_jvp_program)],
    "tracejit.custom_vjp": lambda: [Case("rule", (r(3),), call=_custom_vjp_program, derivatives=False)],
    "tracejit.ShapeDtypeStruct": lambda: [Case("fields", ((2, 3), np.float32), traceable=False,
                                               call=lambda M, cls, shape, dtype: (cls(shape, dtype).shape,
                                                                                  str(cls(shape, dtype).dtype)))],
    "tracejit.eval_shape": lambda: [Case("structs", (), traceable=False, call=lambda M, eval_shape: _fields(eval_shape(
        lambda a, b: (M.numpy.sin(a) @ b, M.numpy.sum(a, axis=0)), M.api.ShapeDtypeStruct((2, 3), np.float32),
        M.api.ShapeDtypeStruct((3,), np.float32)))),
        Case("arrays", (r(2, 3),), traceable=False, call=lambda M, eval_shape, x: _fields(eval_shape(M.numpy.transpose, x)))],
    "tracejit.device_put": lambda: [Case("tree", (r(3), r(2, 2)), call=lambda M, put, x, y: put({"a": x, "b": [y * 2.0, 2.5]})),
                                    Case("device", (r(3),), call=lambda M, put, x: put(x, M.api.devices()[0]))],
    "tracejit.block_until_ready": lambda: [Case("tree", (r(3),), call=lambda M, ready, x: ready((x * 2.0, M.numpy.sin(x))))],
    "tracejit.devices": lambda: [Case("cpu", (), traceable=False, call=_device_fields)],
    "tracejit.local_devices": lambda: [Case("cpu", (), traceable=False, call=_device_fields)],
    "tracejit.device_count": lambda: [Case("cpu", (), traceable=False)],
    "tracejit.local_device_count": lambda: [Case("cpu", (), traceable=False)],
    "tracejit.clear_caches": lambda: [Case("all", (), traceable=False)],      # (both return None)
    "tracejit.default_backend": lambda: [Case("cpu", (), traceable=False)],
    # issue 18's NumPy functions (numpy/rearranging.py, index_tricks.py, selection.py, setops.py, nonzero.py,
    # histograms.py, quantiles.py, covariance.py, calculus.py, polynomials.py)
    "numpy.rollaxis": lambda: [Case("back", (r(2, 3, 4), 2)), Case("start", (r(2, 3, 4), 0, 2)),
                               Case("negative", (r(2, 3, 4), -1, -2))],
    "numpy.vsplit": lambda: [Case("sections", (r(4, 2), 2)), Case("indices", (r(4, 3), [1, 3]))],
    "numpy.hsplit": lambda: [Case("sections", (r(2, 4), 2)), Case("indices", (r(3, 4), [1])), Case("vector", (r(6), 3))],
    "numpy.dsplit": lambda: [Case("sections", (r(2, 2, 4), 2)), Case("indices", (r(2, 2, 4), [1, 3]))],
    "numpy.select": lambda: [Case("two", ([COND, ~COND & (r(4) > 0)], [r(4), r(4)], 0.5)),
                             Case("default_array", ([COND], [r(2, 4)], r(4))), Case("ints", ([COND], [ints(4)]))],
    "numpy.partition": lambda: [Case(f"kth={k} axis={a}", (r(4, 5), k, a)) for k, a in ((0, -1), (2, 0), (-1, 1))] + [
        Case("ints", (ints(6), 3))],
    "numpy.argpartition": lambda: [Case(f"kth={k} axis={a}", (r(4, 5), k, a), derivatives=False)
                                   for k, a in ((0, -1), (2, 0), (-1, 1))],
    "numpy.unique": lambda: [Case("eager", (ints(3, 4),), traceable=False),
                             Case("size", (ints(3, 4),), {"size": 5}, derivatives=False),
                             Case("all", (ints(10),), {"size": 4, "return_index": True, "return_inverse": True,
                                                       "return_counts": True}, derivatives=False),
                             Case("fill", (np.round(r(6)),), {"size": 8, "fill_value": 0.5}),
                             Case("axis", (ints(4, 2, low=0, high=2),), {"axis": 0, "size": 3}, derivatives=False)],
    "numpy.nonzero": lambda: [Case("eager", (ints(3, 4),), traceable=False), Case("size", (r(3, 4) > 0,), {"size": 8}),
                              Case("fill", (ints(2, 5),), {"size": 12, "fill_value": -1})],
    "numpy.flatnonzero": lambda: [Case("eager", (ints(3, 4),), traceable=False), Case("size", (r(3, 4),), {"size": 5}),
                                  Case("fill", (ints(2, 5),), {"size": 12, "fill_value": -1})],
    "numpy.argwhere": lambda: [Case("eager", (ints(3, 4),), traceable=False), Case("size", (r(3, 4) > 0,), {"size": 8}),
                               Case("fill", (ints(2, 5),), {"size": 12, "fill_value": -1})],
    "numpy.bincount": lambda: [Case("eager", (ints(8, low=0, high=5),), traceable=False),
                               Case("length", (ints(8, low=0, high=5),), {"length": 6}),
                               Case("weights", (ints(8, low=0, high=5), r(8)), {"length": 4})],
    "numpy.digitize": lambda: [Case("increasing", (r(8), np.array([-2.0, 0.0, 1.5])), derivatives=False),
                               Case("decreasing_right", (r(8), np.array([2.0, 0.0, -1.0]), True), derivatives=False)],
    "numpy.histogram": lambda: [Case("range", (r(20), 4, (-2.0, 2.0)), derivatives=False),
                                Case("edges", (r(20), np.array([-3.0, -1.0, 0.5, 3.0])), derivatives=False),
                                Case("data_range", (r(20), 3), derivatives=False),
                                Case("weights", (r(20), 3, (-3.0, 3.0), r(20))),
                                Case("density", (r(20), 3, (-3.0, 3.0)), {"density": True}, derivatives=False)],
    "numpy.histogram_bin_edges": lambda: [Case("data", (r(10), 4)), Case("range", (r(10), 3, (-1.0, 2.0)))],
    "numpy.quantile": lambda: _quantile_cases(1.0),
    "numpy.percentile": lambda: _quantile_cases(100.0),
    "numpy.nanquantile": lambda: _quantile_cases(1.0, nans=True),
    "numpy.nanpercentile": lambda: _quantile_cases(100.0, nans=True),
    "numpy.gradient": lambda: [Case("default", (r(4, 5),)), Case("spacing", (r(6), 0.5)),
                               Case("coordinates", (r(6), np.cumsum(R.uniform(0.5, 1.0, 6)))),
                               Case("axis", (r(3, 4),), {"axis": 1})],
    "numpy.polyfit": lambda: [Case("deg2", (r(8), r(8), 2), second_order=False),
                              Case("weights", (r(8), r(8), 1), {"w": R.uniform(0.5, 1.0, 8)}, second_order=False),
                              Case("columns", (r(8), r(8, 2), 2), second_order=False)],
    "numpy.tri": lambda: [Case("square", (3,)), Case("wide", (3, 5, 1)), Case("dtype", (2, 3, -1, np.int32))],
    "numpy.tril_indices": lambda: [Case("n", (4,)), Case("k", (4, 1)), Case("m", (3, -1, 5))],
    "numpy.triu_indices": lambda: [Case("n", (4,)), Case("k", (4, 1)), Case("m", (3, -1, 5))],
    "numpy.diag_indices": lambda: [Case("n", (3,)), Case("ndim", (2, 3))],
    "numpy.diag_indices_from": lambda: [Case("square", (r(3, 3),)), Case("cube", (r(2, 2, 2),))],
    "numpy.unravel_index": lambda: [Case("in_range", (np.array([0, 5, 11, 7]), (3, 4))),
                                    Case("out_of_range", (np.array([-1, -12, -13, 12, 100]), (3, 4)), traceable=True),
                                    Case("scalar", (np.array(7), (2, 2, 2)))],
    "numpy.ravel_multi_index": lambda: [Case(m, ((ints(5, low=-4, high=9), ints(5, low=-4, high=9)), (3, 5)),
                                             {"mode": m}) for m in ("wrap", "clip")] + [
        Case("raise", ((np.array([0, 2, 1]), np.array([4, 0, 3])), (3, 5)), traceable=False)],
}


def _finfo_fields(info):
    return float(info.eps), float(info.max), float(info.tiny), info.bits, str(info.dtype)


def _complex_cases():
    z = jo.complex_draw(R, 5)
    return [Case("complex", (z,)), Case("complex64", (z.astype(np.complex64),), derivatives=False)]


def _atleast_cases():
    return [Case("scalar", (np.array(1.5),)), Case("vector", (r(3),)), Case("matrix", (r(2, 3),)),
            Case("cube", (r(2, 3, 4),)), Case("two", (r(3), np.array(2.0)))]


def _shape_cases():
    return [Case("matrix", ((2, 3),)), Case("int", (3,)), Case("scalar", ((),)), Case("empty", ((2, 0),)),
            Case("dtype", ((2,), np.int32))]


def _lax_reduce_cases():
    ties = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [-1.0, 0.0, 0.0, -1.0]])
    return [Case("rows", (r(3, 4), (1,))), Case("all", (r(3, 4), (0, 1))), Case("ties", (ties, (1,))),
            Case("none", (r(3), ())), Case("empty", (r(0, 3), (0,)))]


def _dtype_name(M, fn, *args):
    return str(np.dtype(fn(*args)))


def _applied(pair, v):
    """(out, f(v)) for the pair (out, f) that vjp and linearize return."""
    out, f = pair
    return out, f(v)


def _fields(structs):
    """(shape, dtype name) of each ShapeDtypeStruct in a tree."""
    return [(tuple(s.shape), str(s.dtype)) for s in jo.flatten(structs)]


def _device_fields(M, fn):
    return [(d.platform, d.id, d.process_index) for d in fn()]


def _custom_jvp_program(M, custom_jvp, x):
    f = custom_jvp(lambda y: M.numpy.sin(y) * y)
    f.defjvp(lambda primals, tangents: (f(primals[0]), 2.0 * tangents[0] * M.numpy.cos(primals[0])))
    return f(x)


def _custom_vjp_program(M, custom_vjp, x):
    f = custom_vjp(lambda y: M.numpy.sin(y))
    f.defvjp(lambda y: (f(y), y), lambda y, g: (g * 3.0 * y,))
    return f(x), M.api.grad(lambda y: M.numpy.sum(f(y)))(x)


SPECS.update(jax_specs.SPECS)
SPECS.update(jax_specs_gaps.SPECS)     # the functions that closed jax.numpy's gaps: data of their own
SPECS.update(jax_specs_lax_more.SPECS)     # jax.lax's gather, scatters and helpers added late
SPECS.update(jax_specs_top_level.SPECS)   # JAX's top-level helpers (compat.py, callback.py, derivative_tools.py)
SPECS.update(jax_specs_sharding.SPECS)    # shard_map, meshes and shardings; rng_bit_generator, ragged_dot_general

# ------------------------------------------------------------------------------------------- NOT_IN_JAX
# Public functions that JAX does not have (under this name, in this module): compared with NumPy where NumPy
# has them, else only tracejit under jit with tracejit eagerly.
NOT_IN_JAX = {
    "numpy.fix": "NumPy's fix (round toward zero), which jax.numpy does not have: compared with NumPy",
    "numpy.getitem": "x[idx] as a function (tracejit's indexing entry point); JAX has it as an operator only",
    "tracejit.make_ir": "tracejit's name for make_jaxpr (the IR text is tracejit's own, so it is not compared)",
    "tracejit.check_ir": "checks a tracejit IR (no JAX counterpart)",
    "tracejit.eval_ir": "evaluates a tracejit IR (JAX's jax.core.eval_jaxpr is internal API)",
    "numpy.real_if_close": "NumPy's real_if_close (its result's dtype depends on the values): compared with NumPy",
    "tracejit.graph": "the IR as a DAG (nodes, edges, order): tracejit's own, tested in test_graph.py",
    "tracejit.stop_gradient": "JAX has it as jax.lax.stop_gradient (compared there); tj.stop_gradient is the same function",
    "numpy.row_stack": "NumPy's old name of vstack (jax.numpy dropped it): compared with NumPy",
}
NOT_COMPARED = {   # in JAX, but with results that are not comparable
    "tracejit.make_jaxpr": "JAX's name, but the IR text is tracejit's own (DESIGN.md section 3)",
    **jax_specs_top_level.NOT_COMPARED,
    **jax_specs_gaps.NOT_COMPARED,
    **jax_specs_sharding.NOT_COMPARED,
}
NOT_IN_JAX_SPECS = {   # how to call those that need a spec
    "numpy.getitem": lambda: [Case("basic", (r(3, 4), (1, slice(None, None, -1)))), Case("fancy", (r(5), np.array([0, 4, 4])))],
    "tracejit.make_ir": list,
    "tracejit.check_ir": list,
    "tracejit.graph": list,
    "numpy.real_if_close": lambda: [Case(label, (z,), traceable=False) for label, z in (
        ("close", np.array([1 + 1e-15j, 2 - 1e-15j])), ("far", np.array([1 + 1e-3j, 2.0])), ("real", r(3)))],
    "tracejit.eval_ir": lambda: [Case("ir", (r(3),), call=lambda M, ev, x: ev(M.api.make_ir(M.numpy.sin)(x), x))],
    "numpy.row_stack": lambda: [Case("vectors", ([r(3), r(3)],)), Case("matrices", ([r(2, 3), r(1, 3)],))],
}
NOT_IN_JAX.update(jax_specs.NOT_IN_JAX)
NOT_IN_JAX_SPECS.update(jax_specs.NOT_IN_JAX_SPECS)


def _quantile_cases(scale, nans=False):
    data = r(4, 5)
    if nans:
        data[1, 2] = data[3] = np.nan
    return [Case("scalar_q", (data, 0.3 * scale)), Case("q_array axis=1", (data, np.array([0.0, 0.4, 1.0]) * scale, 1)),
            Case("lower axis=0", (data, 0.6 * scale, 0), {"method": "lower"}),
            Case("higher keepdims", (data, 0.25 * scale, 1), {"method": "higher", "keepdims": True}),
            Case("midpoint", (data, 0.5 * scale), {"method": "midpoint"}), Case("ints", (ints(3, 4), 0.5 * scale, 0))]


# ------------------------------------------------------------------------------------------------ KNOWN
# Every known difference: (functions (space-separated), case labels ('*': any case), aspects, reason). Aspects:
# raises, value, dtype, jvp, grad, jvp2, grad2 (derivatives), and jit:<aspect> where only the jitted result
# differs. follows_numpy(...): tracejit keeps NumPy's behaviour; those aspects are compared with NumPy instead
# (and must still differ from JAX's); follows_jax(...) the other way round.
def differs(names, labels, aspects, reason):
    return (names, labels, tuple(aspects.split()), reason, None)


def follows_numpy(names, labels, aspects, reason):
    return (names, labels, tuple(aspects.split()), reason, "numpy")


def follows_jax(names, labels, aspects, reason):
    """For a case compared with NumPy (another dtype, say), where tracejit keeps JAX's behaviour."""
    return (names, labels, tuple(aspects.split()), reason, "jax")


LAX_BINARY = ("lax.add lax.sub lax.mul lax.div lax.rem lax.max lax.min lax.eq lax.ne lax.lt lax.le lax.gt lax.ge lax.pow "
              "lax.complex lax.igamma lax.igammac lax.igamma_grad_a lax.polygamma lax.zeta lax.atan2 lax.nextafter")
AS_SCIPY = ("at poles, infinities and NaN the special functions give SciPy's values (checked: equal to scipy.special's "
            "at every point of these cases but zeta's NaN arguments, where SciPy says inf and tracejit NaN); JAX's "
            "are NaN or another infinity there")
COMPLEX_UNARY, COMPLEX_BINARY = "complex points | complex64", "complex points | complex64 | complex_float"
COMPLEX_REDUCTION = "complex axis=0 | complex64 axis=None"
NO_COMPLEX_MATH = ("tracejit's primitive takes real operands only (primitives/elementwise.py: FLOAT rows); NumPy and "
                   "JAX compute it for complex numbers too")
UNORDERED = ("tracejit does not order complex numbers (its comparisons, max and min take real operands); NumPy and "
             "JAX order them lexicographically")
BFLOAT16_TIMES_FLOAT_IS_FLOAT32 = (np.ones(1, tnp.bfloat16) * 0.5).dtype == np.float32     # ml_dtypes < 0.7
KNOWN = [
    differs("lax.gather", "rows None | windows", "grad", "out-of-range windows in gather's default mode "
            "(promise_in_bounds) are implementation-defined: JAX's CPU reads them clamped but its gradient drops "
            "them; tracejit's gradient is that of the clamped read it computes"),
    # issue 18's NumPy functions: where tracejit keeps NumPy's behaviour
    differs("numpy.cov numpy.corrcoef", "(0,)", "jvp jvp2", "the covariance of no observations is 0 / 0: tracejit's "
            "derivative is NaN, as its value; JAX's 0"),
    differs("numpy.nanmedian", "complex64 axis=None", "raises", UNORDERED),
    differs("numpy.nanmedian", "empty_rows axis=0", "raises", "NaN for a slice of no values, as NumPy's nanmedian; "
            "JAX's gather raises"),
    differs("numpy.trapezoid", "empty_rows axis=0", "raises", "the integral over no samples is 0, as NumPy's; JAX raises "
            "IndexError"),
    *([follows_jax("numpy.sinc", "bfloat16", "dtype", "NumPy's sinc of bfloat16 is float32 (ml_dtypes' product with a "
                   "Python float, before 0.7); tracejit keeps bfloat16, as JAX")] if BFLOAT16_TIMES_FLOAT_IS_FLOAT32 else []),
    differs("numpy.unravel_index", "out_of_range", "raises", "concrete indices out of range raise ValueError, as NumPy's; "
            "JAX clips them, as tracejit does traced ones"),
    # derivatives that differ by a primitive's rule
    differs("numpy.power numpy.pow numpy.float_power lax.pow", "special | ties", "jvp grad jvp2", "d(x**y)/dx at x = y = 0: JAX NaN (0 * 0**-1), "
            "tracejit 0 (x**0 is 1 everywhere); deliberate"),
    differs("numpy.power numpy.pow numpy.float_power lax.pow", "special", "grad2", "d2(x**y)/dxdy at x = 0 (log 0): JAX NaN, tracejit a number "
            "(pow's rule takes log 0 as 0); deliberate"),
    differs("numpy.acosh lax.acosh", "random | special", "jvp grad jvp2 grad2", "below 1, where acosh is NaN, JAX's derivative "
            "1 / sqrt(x*x - 1) is a number (inf at -1); tracejit's is NaN"),
    differs("numpy.arctanh lax.atanh", "special", "jvp2 grad2", "second derivative at the poles +-1: JAX NaN, tracejit +-inf "
            "(the limit); deliberate"),
    differs("numpy.hypot", "special | ties", "jvp grad jvp2 grad2", "at (0, 0), hypot's cone, tracejit's derivative is "
            "NaN (x / hypot); JAX's max/min formula gives numbers there and a zero second derivative wherever |x| = |y| "
            "or one is 0, where hypot is smooth and tracejit's (checked by finite differences) is right"),
    differs("numpy.fmax numpy.fmin", "special | ties", "jvp grad", "at a tie NumPy's fmax returns x (fmax(-0.0, 0.0) "
            "is -0.0), so tracejit's derivative is x's; JAX's fmax returns y and its derivative is y's"),
    differs("numpy.std", "one", "jvp grad jvp2 grad2", "std of one element is 0 for every value: tracejit's derivative "
            "is 0, JAX's NaN (sqrt at 0); deliberate"),
    differs("numpy.var numpy.nanmean", "empty_rows axis=0", "jvp" , "the mean of nothing (0 / 0): tracejit's derivative "
            "is NaN, as its value; JAX's 0"),
    differs("numpy.var", "empty_rows axis=0", "jvp2", "as its jvp"),
    # complex numbers: what tracejit does not compute for them yet
    differs("lax.acos lax.acosh lax.asin lax.asinh lax.atan lax.atanh lax.cosh lax.exp2 lax.sinh "
            "lax.expm1 lax.log1p lax.logistic lax.rsqrt lax.tan numpy.acos numpy.acosh numpy.arcsin numpy.arcsinh "
            "numpy.arctan numpy.arctanh numpy.cosh numpy.exp2 numpy.expm1 numpy.log10 numpy.log1p numpy.log2 "
            "numpy.sinh numpy.tan", COMPLEX_UNARY, "raises", NO_COMPLEX_MATH),
    differs("lax.atan2", COMPLEX_UNARY, "raises", NO_COMPLEX_MATH),
    differs("nn.elu nn.selu nn.sigmoid nn.silu", COMPLEX_UNARY, "raises", f"built on expm1 or logistic: {NO_COMPLEX_MATH}"),
    differs("lax.max lax.min", COMPLEX_UNARY, "raises", UNORDERED),
    differs("numpy.fmax numpy.fmin numpy.greater numpy.greater_equal numpy.less numpy.less_equal numpy.maximum "
            "numpy.minimum", COMPLEX_BINARY, "raises", UNORDERED),
    differs("numpy.logaddexp numpy.logaddexp2", "complex points | complex_float", "raises", f"JAX's logaddexp of "
            f"complex numbers compares them; {UNORDERED} (NumPy has no complex logaddexp)"),
    differs("nn.celu nn.hard_sigmoid nn.hard_silu nn.log_sigmoid nn.mish nn.relu nn.relu6 nn.softplus", COMPLEX_UNARY,
            "raises", f"built on maximum or logaddexp: {UNORDERED}"),
    differs("nn.hard_tanh nn.leaky_relu nn.sparse_plus", "complex | complex_special", "jit:value jvp grad jvp2 grad2",
            f"eagerly x > 1 is NumPy's comparison (its order), traced it is tracejit's: {UNORDERED}"),
    differs("nn.hard_tanh nn.leaky_relu nn.sparse_plus", "complex64", "jit:value", "as for complex128"),
    differs("nn.log_softmax nn.logmeanexp nn.logsumexp nn.softmax numpy.amax numpy.amin numpy.nanmax numpy.nanmin numpy.ptp",
            COMPLEX_REDUCTION, "raises", UNORDERED),
    differs("numpy.argmax numpy.argmin", "complex64 axis=None", "raises", UNORDERED),
    differs("lax.cummax lax.cummin lax.cumlogsumexp", "complex", "raises", UNORDERED),
    differs("lax.reduce_window", "mul valid | mul ties | mul padded", "jvp grad jvp2 grad2", "JAX differentiates "
            "reduce_window for add, max and min only (its generic reduce_window has no JVP rule); tracejit's product "
            "of windows has derivatives (checked against finite differences in test_windowed.py)"),
    differs("lax.cumprod", "complex", "raises", "tracejit's cumulative product (primitives/cumulative.py) takes real "
            "and integer operands only; JAX's multiplies complex ones too"),
    differs("lax.is_finite", "complex | complex_special | complex64", "raises", "tracejit's is_finite takes complex "
            "operands (finite in both parts, as tnp.isfinite needs); JAX's lax.is_finite takes real ones only"),
    follows_numpy("numpy.median", "complex axis=0", "value", "the median of complex numbers in NumPy's (lexicographic) "
                  "order; JAX refuses complex input"),
    follows_numpy("numpy.arctan2", "complex points | complex_float", "value", "NumPy's arctan2 has no complex loop, nor "
                  "has tracejit's; JAX's takes complex operands"),
    follows_jax("numpy.deg2rad numpy.degrees", "complex64", "value", "complex values scaled, as JAX; NumPy's ufunc has "
                "no complex loop"),
    follows_jax("linalg.eigvals", "batched", "dtype", "eigenvalues of real matrices are complex, as in JAX; NumPy's "
                "dtype depends on the values (float64 when all of them are real, as in this case)"),
    differs("numpy.log lax.log", "complex_special", "jvp2 grad2", "the second derivative -1 / z**2 at z = 0: tracejit's "
            "complex division by 0 gives infinities (as C99's), JAX's NaN"),
    differs("numpy.sqrt lax.sqrt", "complex_special", "jvp grad", "the derivative 1 / (2 sqrt(z)) at z = 0: as log's "
            "second derivative"),
    follows_numpy("numpy.power numpy.pow numpy.float_power", "complex_special", "value", "0 ** y for complex y with a positive real part: 0 in "
                  "NumPy and tracejit, NaN in JAX"),
    differs("lax.pow", "complex_special", "value", "as numpy.power (NumPy is not lax's oracle)"),
    differs("numpy.power numpy.pow numpy.float_power lax.pow", "complex_special", "jvp grad jvp2 grad2", "at x = 0, as for real x: tracejit's "
            "derivatives are numbers where they exist (d/dx x**y is 0 there for Re y > 1; the mixed second derivative "
            "takes log 0 as 0), JAX's NaN"),
    follows_numpy("numpy.reciprocal", "complex_special", "value", "1 / 0j: NaN + NaN j in NumPy's reciprocal and "
                  "tracejit, inf + NaN j in JAX"),
    # the special functions (lax.digamma ... zeta)
    differs("lax.digamma", "special", "value jvp2 grad2", AS_SCIPY + " (the derivatives follow)"),
    differs("lax.digamma lax.lgamma", "nonfinite", "value", AS_SCIPY),
    differs("lax.lgamma", "special", "jvp grad", AS_SCIPY + " (the derivative at a pole follows)"),
    differs("lax.polygamma lax.zeta", "special | nonfinite | ties", "value", AS_SCIPY),
    differs("lax.igamma lax.igamma_grad_a", "special | nonfinite", "value", AS_SCIPY),
    differs("lax.igammac", "nonfinite", "value", AS_SCIPY),
    differs("lax.igamma lax.igammac", "random | special | ties | nonfinite", "jvp grad", "JAX has no derivative of "
            "igamma in a (no rule for igamma_grad_a); tracejit's is checked against mpmath in test_special.py"),
    differs("lax.zeta", "random | special | ties | nonfinite", "jvp grad jvp2 grad2", "JAX has no derivative rule "
            "for zeta; tracejit's (in x, to second order) is checked against mpmath in test_special.py"),
    # dtypes and arguments
    differs(LAX_BINARY, "float32_python_scalar", "raises", "tracejit.lax gives a Python scalar the dtype of the array "
            "it meets (weak typing, as tracejit.numpy); JAX's lax requires equal dtypes"),
    differs("lax.pow", "int64 | int8 | uint8", "raises", "tracejit raises integers to integer powers (NumPy's semantics); JAX's "
            "lax.pow refuses integer bases"),
    differs("nn.dot_product_attention", "multi-head", "value jvp jvp2 grad2",
            "its softmax runs in float32 whatever the input dtype, as JAX's, which rounds in another order: equal to "
            "float32's precision (tests/test_attention.py compares values and gradients with JAX at that tolerance)"),
    differs("nn.gelu nn.tanh", "int32 | bool", "dtype", "integer and bool inputs: tracejit computes in NumPy's float "
            "for them (np.tanh of int32 is float64, of bool float16); JAX in float32"),
    differs("nn.log1mexp nn.log_sigmoid nn.mish nn.soft_sign nn.softplus nn.squareplus", "int32", "dtype", "as nn.tanh"),
    differs("nn.log1mexp", "int8", "dtype", "as nn.tanh (NumPy's float for 8-bit integers is float16)"),
    differs("nn.log1mexp", "uint8", "value", "JAX negates x in uint8 (wrapping around: NaN here); tracejit converts to "
            "float first"),
    differs("nn.log1mexp", "bool", "raises", "tracejit converts bools to float, as its other float functions do; "
            "JAX's negation refuses them"),
    differs("nn.log1mexp", COMPLEX_UNARY, "raises", f"x < log 2 chooses the formula: {UNORDERED}"),
    differs("nn.elu nn.gelu nn.log_sigmoid nn.mish nn.selu nn.soft_sign nn.softplus nn.squareplus nn.tanh",
            "int8 | uint8", "dtype", "as nn.tanh: NumPy's float for 8-bit integers is float16 (float64 for soft_sign's "
            "division), JAX's float32 or float64"),
    differs("nn.elu nn.mish nn.selu nn.squareplus", "bool", "dtype", "as nn.tanh (NumPy's float for bool is float16)"),
    differs("nn.logmeanexp nn.logsumexp nn.standardize", "uint8 axis=0", "dtype", "as nn.tanh"),
    differs("nn.log_softmax nn.softmax", "uint8 axis=0", "value", "JAX subtracts the maximum in uint8 (wrapping "
            "around: -inf and NaN here); tracejit converts to float first"),
    differs("nn.hard_tanh", "uint8", "raises", "where(x < -1, -1, x) for uint8 x: -1 does not fit uint8, an "
            "OverflowError under NumPy 2's rule for Python integers (tracejit's); JAX wraps it to 255"),
    *([differs("nn.celu nn.elu nn.gelu nn.hard_sigmoid nn.hard_silu nn.leaky_relu nn.selu nn.sparse_plus "
               "nn.sparse_sigmoid", "bfloat16", "dtype", "eagerly, a Python float times a NumPy bfloat16 array is "
               "ml_dtypes' product, float32 before ml_dtypes 0.7 (under jit tracejit keeps bfloat16, as JAX); these nn "
               "formulas use operators"),
       differs("nn.standardize", "bfloat16 axis=None", "dtype", "as nn.elu")] if BFLOAT16_TIMES_FLOAT_IS_FLOAT32 else []),
    differs("lax.abs", "uint8", "raises", "tracejit's abs of unsigned integers is the identity (NumPy's); JAX's "
            "lax.abs refuses them"),
    differs("lax.complex", "float16 | bfloat16", "raises", "tracejit makes complex64 of 16-bit float parts; JAX's "
            "lax.complex takes float32 and float64 only"),
    differs("lax.div", "int8 | uint8", "value", "integer division by 0: tracejit's is 0 (as its integer rem and "
            "NumPy's), XLA's all ones (-1, 255)"),
    follows_jax("linalg.norm linalg.vector_norm", "bfloat16 axis=None", "dtype", "the norm of bfloat16 is bfloat16, "
                "as in JAX; NumPy, which does not know bfloat16 as a float, computes it in float64"),
    follows_jax("numpy.einsum_path", "ii->i | ij,jk,kl,lm->im | ij,jk,kl->il | ij,kl,jk", "dtype", "the path in opt_einsum's format, as JAX's (NumPy's starts with "
                "the string 'einsum_path')"),
    follows_jax("numpy.frompyfunc", "binary | two_outputs", "dtype", "the ufunc computes on arrays in their dtypes, as JAX's; "
                "NumPy's frompyfunc gives object arrays"),
    follows_jax("numpy.degrees", "bfloat16", "dtype", "bfloat16 stays bfloat16, as in JAX; NumPy multiplies by a "
                "Python float, which ml_dtypes promotes to float32"),
    differs("nn.logmeanexp nn.logsumexp nn.standardize", "bool axis=None", "dtype", "as nn.tanh"),
    differs("nn.sigmoid nn.silu", "bool | int32 | int64 | int8 | uint8", "raises", "tracejit converts integers and bools to float, as "
            "its other float functions do; JAX's logistic refuses them"),
    differs("nn.log_softmax nn.softmax", "bool axis=None", "raises", "as nn.sigmoid"),
    differs("numpy.reciprocal", "int32 | int64", "value", "1 / 0 in integers: NumPy's is undefined (the minimum "
            "integer here), tracejit's 0"),
    follows_numpy("numpy.median", "empty_rows axis=0", "value", "the median of nothing is NaN (NumPy warns); JAX "
                  "raises"),
    follows_numpy("numpy.tril numpy.triu", "(0,)", "value", "a 1-D array is the row of a square matrix, as in NumPy; "
                  "JAX refuses 1-D arrays"),
    follows_numpy("numpy.promote_types", "int32 float32", "value", "NumPy's promotion: float64; JAX's: float32"),
    follows_numpy("numpy.result_type", "<class 'numpy.int32'> <class 'numpy.float32'> | <class 'numpy.float32'> <class "
                  "'numpy.int64'>", "value", "as promote_types"),
    differs("numpy.power numpy.pow", "int8", "value", "(-3) ** -3 in int8: tracejit truncates to 0, as for the other integers; "
            "JAX's int8 power overflows (-19)"),
    follows_jax("numpy.i0", "bfloat16", "dtype", "bfloat16 stays bfloat16, as in JAX; NumPy's i0 makes it float64"),
    follows_jax("numpy.power numpy.pow", "int64 | int32_int64 | int8", "value", "integers to negative integer powers: NumPy raises, "
                "tracejit gives JAX's values (1 and -1 keep their powers, the rest truncate to 0)"),
    follows_jax("numpy.positive", "bool", "value", "NumPy's positive refuses bool; tracejit, as JAX, returns it"),
]


# -------------------------------------------------------------------------------------------- the runs

def cases_for(qualname, fn):
    if qualname in NOT_COMPARED:
        return []
    spec = SPECS.get(qualname) or NOT_IN_JAX_SPECS.get(qualname)
    return spec() if spec is not None else jo.infer_cases(qualname, fn)


def _known(qualname):
    """KNOWN's entries for one function: [(labels, aspects, reason, oracle)]."""
    return [(labels, aspects, reason, oracle) for names, labels, aspects, reason, oracle in KNOWN
            if qualname in names.split()]


def _forced(qualname, label):
    """{aspect: 'numpy' or 'jax'}: the oracle KNOWN prescribes for one case."""
    return {a: oracle for labels, aspects, _, oracle in _known(qualname) if oracle
            and (labels == "*" or label in labels.split(" | ")) for a in aspects}


def _aliases(functions):
    """{alias: name} for names bound to the same function as an earlier name (tnp.amax is tnp.max): the
    function is run once, under its first name."""
    first, aliases = {}, {}
    for q in sorted(functions):
        key = (q.split(".")[0], id(functions[q]))
        aliases.update({q: first[key]} if key in first else {})
        first.setdefault(key, q)
    return aliases


@functools.cache
def results():
    """{qualname: report}: computed by the child process that the session started (tests/oracle_process.py)
    when there is one, else here."""
    return oracle_process.result() or compute_results()


def compute_results():
    """{qualname: report}, for every public function at once: tracejit eagerly, then tracejit's jit and JAX's
    (in a thread: XLA compiles while tracejit does) in a few large programs each."""
    functions = jo.public_functions()
    aliases = _aliases(functions)
    plans = {q: cases_for(q, fn) for q, fn in functions.items() if q not in aliases}
    tasks = [(q, c) for q, cases in plans.items() if cases for c in cases]
    in_jax = {q for q in functions if jo.resolve(jo.JAX, q) is not None and q not in NOT_IN_JAX.keys() | NOT_COMPARED.keys()}
    runs = [jo.run_tracejit_eagerly(q, c) for q, c in tasks]
    numpy_outcomes = [jo.run_numpy(q, c) for q, c in tasks]
    jax_indices = [k for k, (q, c) in enumerate(tasks) if q in in_jax and (
        not c.prefer_numpy or numpy_outcomes[k] is None or "jax" in _forced(q, c.label).values())]
    jax_tasks = [(q, c, run.tangents, run.weights, "value" in run.eager.errors) for (q, c), run in zip(tasks, runs)]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        jax_future = pool.submit(_in_chunks, jo.run_jax, jax_indices, jax_tasks)
        jitted = _in_chunks(jo.run_tracejit_jitted, [k for k, (_, c) in enumerate(tasks) if c.traceable], runs)
        jax_outcomes = jax_future.result()
    reports = {q: {"cases": None if cases is None else len(cases), "in_jax": q in in_jax, "mismatches": {}, "forced": {}, "working": 0}
               for q, cases in plans.items()}
    for k, ((q, case), run) in enumerate(zip(tasks, runs)):
        report = reports[q]
        for label, part in jo.segments(case, run, jitted.get(k), jax_outcomes.get(k), numpy_outcomes[k]):
            mismatches, forced = compare_case(*part, _forced(q, label))
            report["mismatches"].update({(label, aspect): why for aspect, why in mismatches.items()})
            report["forced"].update({(label, aspect): differs for aspect, differs in forced.items()})
        report["working"] += "value" in run.eager.results and "raises" not in mismatches
    reports.update({q: {"alias_of": name} for q, name in aliases.items()})
    return reports


def _in_chunks(run, indices, items, size=100):
    """{index: outcome} of run() on items[index], in programs of `size` cases."""
    outcomes = {}
    for start in range(0, len(indices), size):
        chunk = indices[start:start + size]
        outcomes.update(zip(chunk, run([items[k] for k in chunk])))
    return outcomes


def compare_case(eager, jitted, jax_out, numpy_out, forced):
    """({aspect: why} where tracejit, eagerly or under jit, differs from the case's oracle; {aspect: whether
    tracejit differs from the other oracle} for the aspects that KNOWN sends to NumPy or to JAX).

    Values: JAX's, else NumPy's (or where KNOWN says so); dtypes: NumPy's, else JAX's; derivatives: JAX's. With
    no oracle, jit is compared with eager."""
    oracles = {"jax": jax_out, "numpy": numpy_out}
    value_oracle = oracles[forced.get("value", "jax" if jax_out is not None else "numpy")] or jax_out or eager
    mismatches = {}
    error, expected_error = eager.errors.get("value"), value_oracle.errors.get("value")
    if error or expected_error:
        if not (error and expected_error):
            mismatches["raises"] = f"tracejit: {error or 'no error'}; expected: {expected_error or 'no error'}"
        return mismatches, _differs_from_other(eager, forced, oracles)
    expected = {"value": value_oracle.results["value"]}
    derivative_oracle = jax_out if jax_out is not None and "value" in jax_out.results else eager
    expected.update({k: v for k, v in derivative_oracle.results.items() if k != "value"})
    expected_errors = {k: v for k, v in derivative_oracle.errors.items() if k != "value"}
    has_numpy = numpy_out is not None and "value" in numpy_out.results
    dtypes = _dtype_oracle(oracles[forced["dtype"]] if "dtype" in forced else numpy_out if has_numpy else jax_out)
    for prefix, outcome in (("", eager), ("jit:", jitted)):
        if outcome is None:
            continue
        for piece in ["value", *jo.DERIVATIVES]:
            if prefix and (piece in mismatches or piece not in eager.results):
                continue
            why = _compare_piece(piece, outcome, expected, expected_errors)
            if why:
                mismatches[prefix + piece] = why
    if dtypes is not None and "value" in eager.results and "value" not in mismatches:
        why = jo.compare_dtypes(eager.results["value"], dtypes)
        mismatches.update({"dtype": why} if why else {})
    return mismatches, _differs_from_other(eager, forced, oracles)


def _differs_from_other(eager, forced, oracles):
    """{aspect: whether tracejit differs from the oracle that KNOWN did not choose} (raising counts)."""
    other = {}
    for aspect, oracle in forced.items():
        alternative = oracles["numpy" if oracle == "jax" else "jax"]
        if alternative is None:
            continue
        if "value" in alternative.errors or "value" in eager.errors:
            other[aspect] = ("value" in alternative.errors) != ("value" in eager.errors)
        else:
            compare = jo.compare_dtypes if aspect == "dtype" else functools.partial(jo.compare_leaves, rtol=1e-9)
            other[aspect] = bool(compare(eager.results["value"], alternative.results["value"]))
    return other


def _dtype_oracle(oracle):
    """The dtypes to expect: the oracle's."""
    if oracle is None or "value" not in oracle.results:
        return None
    return oracle.results["value"]


def _compare_piece(piece, outcome, expected, expected_errors):
    if piece in expected_errors:
        return None if piece in outcome.errors else f"JAX raises: {expected_errors[piece]}"
    if piece in outcome.errors:
        return f"raises {outcome.errors[piece]}" if piece in expected else None
    if piece not in outcome.results or piece not in expected:
        return None if (piece in outcome.results) == (piece in expected) else (
            "computed by tracejit only" if piece in outcome.results else "not computed (no float input or output)")
    rtol = jo.value_rtol(expected["value"] + outcome.results["value"]) if piece == "value" else 1e-7
    return jo.compare_leaves(outcome.results[piece], expected[piece], rtol)


# ------------------------------------------------------------------------------------------------ tests

FUNCTIONS = sorted(jo.public_functions())


@pytest.mark.parametrize("qualname", FUNCTIONS)
def test_against_jax(qualname):
    report = results()[qualname]
    if "alias_of" in report:
        assert jo.resolve(jo.JAX, qualname) is not None or qualname in NOT_IN_JAX, f"JAX has no {qualname}"
        return      # tested under its first name
    in_jax = jo.resolve(jo.JAX, qualname) is not None
    if in_jax == (qualname in NOT_IN_JAX):
        pytest.fail(f"{qualname}: " + ("listed in NOT_IN_JAX, but JAX has it: compare it" if in_jax else
                                       "JAX has no such function: list it in NOT_IN_JAX, saying why"))
    if report["cases"] is None:
        pytest.fail(f"{qualname}: no calls could be inferred; add its cases to SPECS in {__file__}")
    accepted, stale = set(), []
    for labels, aspects, reason, oracle in _known(qualname):
        if oracle:
            listed = {(label, a) for label in labels.split(" | ") for a in aspects}
            missing = {k for k in listed if not report["forced"].get(k)}
            stale += [(f"{labels} / {' '.join(aspects)} no longer differs from {'JAX' if oracle == 'numpy' else 'NumPy'} "
                       f"(or is not compared with it): {sorted(missing)}")] if missing else []
            continue
        found = {k for k in report["mismatches"] if (labels == "*" or k[0] in labels.split(" | ")) and k[1] in aspects}
        listed = {(label, a) for label in labels.split(" | ") for a in aspects} if labels != "*" else found
        if not found or listed - found:
            stale.append(f"{labels} / {' '.join(aspects)}: {sorted(listed - found) or 'no difference left'}")
        accepted |= found
    lines = [f"  [{label}] {aspect}: {why}" for (label, aspect), why in sorted(report["mismatches"].items())
             if (label, aspect) not in accepted]
    lines += [f"  KNOWN lists a difference that is gone: {s}" for s in stale]
    if lines:
        pytest.fail(f"{qualname} differs from {'JAX' if report['in_jax'] else 'its oracle'}:\n" + "\n".join(lines))
    if report["cases"] and not report["working"]:
        pytest.fail(f"{qualname}: every case raised; its spec calls it wrongly")


def test_tables_name_public_functions():
    """Every name in SPECS, NOT_IN_JAX and KNOWN is a public function, so that the tables stay true."""
    functions = jo.public_functions()
    named = set(SPECS) | set(NOT_IN_JAX) | set(NOT_COMPARED) | {n for names, *_ in KNOWN for n in names.split()}
    assert not named - set(functions), f"the tables name functions that do not exist: {sorted(named - set(functions))}"


NOT_TRACEJIT_TYPES = {"character", "flexible", "object_", "ufunc", "ComplexWarning",  # no strings or objects;
                      "finfo", "iinfo"}   # tnp's ufuncs are functions, finfo and iinfo too (they know bfloat16)


def test_dtype_names_are_jax_numpys():
    """jax.numpy's dtype names and type classes are in tracejit.numpy, as the same dtypes (of ml_dtypes' types,
    tracejit has bfloat16, not the float8s and int4s)."""
    import jax.numpy as jnp
    for name in sorted(n for n in dir(jnp) if isinstance(getattr(jnp, n), type) and not n.startswith("_")):
        if name in NOT_TRACEJIT_TYPES:
            continue
        try:
            dtype = np.dtype(getattr(jnp, name))
        except TypeError:          # an abstract class: floating, integer ...
            assert hasattr(tnp, name), f"tracejit.numpy has no {name}"
            continue
        if dtype.type.__module__ != "ml_dtypes" or name == "bfloat16":
            assert np.dtype(getattr(tnp, name)) == dtype, f"tnp.{name} is not jnp.{name}'s {dtype}"
