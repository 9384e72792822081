"""Tracing, pytrees, static arguments, the printer (golden IR), the checker, jit's cache and the errors."""
import collections
import functools
import re
import threading

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.core.ir import IRCheckError, Var
from tracejit.core.pytree import LEAF, caller, flatten_as, tree_structure
from tracejit.tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

f32 = np.float32
W_CLOSED = np.ones((3, 2), f32)


def ir_text(fun, *args, **kwargs):
    closed = tj.make_ir(fun, **kwargs)(*args)
    tj.check_ir(closed)
    return str(closed)


GOLDEN = [
    ("design_example",
     lambda x, y: x * y + tnp.sum(x), (np.ones(3, f32), np.ones(3, f32)), {},
     """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = mul a b
    d:f32[] = reduce_sum[axes=(0,)] a
    e:f32[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] d
    f:f32[3] = add c e
  in (f,) }"""),
    ("weak_scalar_literal",
     lambda x: x * 2.0 + 1, (np.ones(3, f32),), {},
     """{ lambda ; a:f32[3]. let
    b:f32[3] = mul a 2.0:f32[]
    c:f32[3] = add b 1.0:f32[]
  in (c,) }"""),
    ("closure_constant",
     lambda x: tnp.tanh(x @ W_CLOSED), (np.ones((4, 3), f32),), {},
     """{ lambda a:f32[3,2] ; b:f32[4,3]. let
    c:f32[4,2] = dot_general[dimension_numbers=(((1,), (0,)), ((), ()))] b a
    d:f32[4,2] = tanh c
  in (d,) }"""),
    ("pytree_in_and_out",
     lambda p, x: {"out": x * p["scale"], "norm": tnp.sum(p["bias"])},
     ({"scale": np.ones(2, f32), "bias": np.ones(2, f32)}, np.ones(2, f32)), {},
     """{ lambda ; a:f32[2] b:f32[2] c:f32[2]. let
    d:f32[2] = mul c b
    e:f32[] = reduce_sum[axes=(0,)] a
  in (e, d) }"""),
    ("static_argnums_unrolls",
     lambda x, n: x * n + n, (np.ones(2, f32), 3), {"static_argnums": (1,)},
     """{ lambda ; a:f32[2]. let
    b:f32[2] = mul a 3.0:f32[]
    c:f32[2] = add b 3.0:f32[]
  in (c,) }"""),
    ("broadcasting_is_explicit",
     lambda x, y: x + y, (np.ones((2, 1), f32), np.ones(3, f32)), {},
     """{ lambda ; a:f32[2,1] b:f32[3]. let
    c:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(0, 1) shape=(2, 3)] a
    d:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,) shape=(2, 3)] b
    e:f32[2,3] = add c d
  in (e,) }"""),
    ("promotion_is_explicit",
     lambda x, i: x * i, (np.ones(2, f32), np.ones(2, np.int32)), {},
     """{ lambda ; a:f32[2] b:i32[2]. let
    c:f64[2] = convert_element_type[new_dtype=float64 weak_type=False] a
    d:f64[2] = convert_element_type[new_dtype=float64 weak_type=False] b
    e:f64[2] = mul c d
  in (e,) }"""),
    ("indexing",
     lambda x: x[::-1, 1] + x[0, :2].sum(), (np.ones((3, 4), f32),), {},
     """{ lambda ; a:f32[3,4]. let
    b:f32[3,1] = slice[limit_indices=(3, 2) start_indices=(0, 1) strides=None] a
    c:f32[3,1] = rev[dimensions=(0,)] b
    d:f32[3] = squeeze[dimensions=(1,)] c
    e:f32[1,2] = slice[limit_indices=(1, 2) start_indices=(0, 0) strides=None] a
    f:f32[2] = squeeze[dimensions=(0,)] e
    g:f32[] = reduce_sum[axes=(0,)] f
    h:f32[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] g
    i:f32[3] = add d h
  in (i,) }"""),
    ("comparisons_and_where",
     lambda x: tnp.where(x > 0, x, 0.0), (np.ones(2, np.float64),), {},
     """{ lambda ; a:f64[2]. let
    b:bool[2] = gt a 0.0:f64[]
    c:f64[2] = broadcast_in_dim[broadcast_dimensions=() shape=(2,)] 0.0:f64[]
    d:f64[2] = select_n b c a
  in (d,) }"""),
    ("unused_output_prints_underscore",
     lambda x: (tnp.sum(x), x)[1], (np.ones(2, f32),), {},
     """{ lambda ; a:f32[2]. let
    _:f32[] = reduce_sum[axes=(0,)] a
  in (a,) }"""),
    ("mixed_outputs_with_literal",
     lambda x: (x, 1.5, x.astype(np.int32)), (np.ones(2, f32),), {},
     """{ lambda ; a:f32[2]. let
    b:i32[2] = convert_element_type[new_dtype=int32 weak_type=False] a
  in (a, 1.5:f64[], b) }"""),
]


@pytest.mark.parametrize("name,fun,args,kwargs,expected", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden_ir(name, fun, args, kwargs, expected):
    assert ir_text(fun, *args, **kwargs) == expected
    assert ir_text(fun, *args, **kwargs) == expected  # deterministic


def test_printed_ir_follows_the_grammar():
    text = ir_text(lambda x, y: tnp.tanh(x @ y).sum(axis=0) * 2.0, np.ones((3, 4), f32), np.ones((4, 5), f32))
    lines = text.splitlines()
    assert re.fullmatch(r"\{ lambda (\w+:\w+\[[\d,]*\] ?)*; (\w+:\w+\[[\d,]*\] ?)+\. let", lines[0])
    for line in lines[1:-1]:
        assert re.fullmatch(r"    (\w+|_):\w+\[[\d,]*\] = [a-z_]+(\[.*\])?( (\w+|[-\d.e]+:\w+\[\]))+", line), line
    assert re.fullmatch(r"  in \((\w+, )*\w+,?\) \}", lines[-1])


def test_variable_names_continue_past_z():
    def long_chain(x):
        for _ in range(30):
            x = x + 1.0
        return x
    text = ir_text(long_chain, np.ones(2, f32))
    assert "ba:f32[2] = add z 1.0:f32[]" in text and "in (be,)" in text


def test_rich_rendering_colours_primitives_types_and_literals():
    from rich.console import Console
    closed = tj.make_ir(lambda x: x * 2.0)(np.ones(2, f32))
    console = Console(record=True, force_terminal=True, color_system="truecolor", width=120)
    console.print(closed)
    assert console.export_text() == str(closed) + "\n"
    styles = {str(span.style) for span in closed.__rich__().spans}
    assert {"bold cyan", "green", "magenta"} <= styles


def test_checker_rejects_wrong_types_and_scoping():
    closed = tj.make_ir(lambda x: tnp.sin(x) * 2.0)(np.ones(3, f32))
    tj.check_ir(closed)
    eqn = closed.ir.eqns[0]
    eqn.outvars[0].aval = eqn.outvars[0].aval.update(shape=(4,))
    with pytest.raises(IRCheckError, match="rule gives f32\\[3\\]"):
        tj.check_ir(closed)
    closed = tj.make_ir(lambda x: tnp.sin(x) * 2.0)(np.ones(3, f32))
    closed.ir.eqns.reverse()
    with pytest.raises(IRCheckError, match="used before it is bound"):
        tj.check_ir(closed)
    closed = tj.make_ir(lambda x: x + 1.0)(np.ones(3, f32))
    closed.ir.outvars = [Var(closed.ir.invars[0].aval)]
    with pytest.raises(IRCheckError):
        tj.check_ir(closed)


PROGRAMS = [
    (lambda x, y: tnp.tanh(x * y + 1) * 0.5 + tnp.exp(-x * x), ((4, 5), (4, 5))),
    (lambda x, y: tj.nn.softmax(x @ y.T, axis=-1), ((3, 4), (5, 4))),
    (lambda x, y: tnp.mean((x - y) ** 2), ((6,), (6,))),
    (lambda x, y: tnp.concatenate([x, y])[::2].cumsum(), ((5,), (3,))),
    (lambda x, y: tnp.where(x > y, x, y).max(axis=0), ((2, 3), (3,))),
    (lambda x, y: tnp.einsum("ij,kj->ik", x, y) + tj.nn.logsumexp(x, axis=1, keepdims=True), ((2, 3), (4, 3))),
    (lambda x, y: (x[:, None] * y[None, :]).reshape(-1)[np.array([0, 3, 5])], ((2,), (3,))),
]


@pytest.mark.parametrize("program,shapes", PROGRAMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eval_ir_of_make_ir_equals_function(rng, program, shapes, dtype):
    args = [rng.normal(size=s).astype(dtype) for s in shapes]
    closed = tj.make_ir(program)(*args)
    tj.check_ir(closed)
    expected = program(*args)
    got = tj.eval_ir(closed, *args)[0]
    assert got.dtype == expected.dtype == dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_make_ir_accepts_shape_dtype_structs():
    text = ir_text(lambda x: x + 1.0, tj.ShapeDtypeStruct((2, 3), np.float32))
    assert text.startswith("{ lambda ; a:f32[2,3]. let")


def test_pytrees_in_and_out():
    Point = collections.namedtuple("Point", "x y")

    class Box:
        def __init__(self, value):
            self.value = value

    register_pytree_node(Box, lambda b: ((b.value,), None), lambda _, c: Box(*c))

    def f(p, box, items, nothing):
        return {"sum": p.x + p.y, "box": Box(box.value * 2), "list": [items[0], (items[1], None)]}

    out = tj.jit(f)(Point(np.ones(2), np.ones(2)), Box(np.arange(3.0)), [1.0, np.float32(2)], None)
    np.testing.assert_array_equal(out["sum"], [2, 2])
    np.testing.assert_array_equal(out["box"].value, [0, 2, 4])
    assert out["list"][1][1] is None and isinstance(out["list"][0], np.ndarray)
    leaves, tree = tree_flatten({"b": 1, "a": (2, Point(3, 4))})
    assert leaves == [2, 3, 4, 1]
    assert tree_unflatten(tree, leaves) == {"b": 1, "a": (2, Point(3, 4))}
    assert tree_map(lambda a, b: a + b, [1, (2,)], [10, (20,)]) == [11, (22,)]
    # flatten_as (the cache-hit check) agrees with flattening and comparing trees
    a = np.ones(2)
    base = {"b": a, "a": (a, Point(a, None), [Box(a)])}
    variants = [base, {"b": 1.0, "a": (2, Point(a, None), [Box(3)])}, {"b": a, "a": (a, Point(a, a), [Box(a)])},
                {"b": a, "c": (a, Point(a, None), [Box(a)])}, {"b": a, "a": [a, Point(a, None), [Box(a)]]},
                {"b": a, "a": (a, (a, None), [Box(a)])}, {"b": a, "a": (a, Point(a, None), [a])},
                {"b": (a,), "a": (a, Point(a, None), [Box(a)])}, {"b": a, "a": (a, Point(a, None), [Box(a)]), "c": a}]
    tree = tree_flatten(base)[1]
    for v in variants:
        leaves, v_tree = tree_flatten(v)
        assert flatten_as(tree, v) == (tuple(leaves) if v_tree == tree else None)
    assert flatten_as(tree_flatten(a)[1], [a]) is None and flatten_as(tree_flatten([a])[1], [a]) == (a,)
    # so does caller, the code written for one call's tree (args, kwargs) of tuples, lists, dicts and None (and
    # flatten_as otherwise), with a function that takes no container as a leaf (as the fast paths)
    plain = {"b": a, "a": (a, None, [a, {"k": 2.0}])}
    plain_variants = [plain, {"b": 1.0, "a": (2, None, [a, {"k": a}])}, {"b": a, "a": (a, a, [a, {"k": a}])},
                      {"b": a, "a": (a, None, [a, {"j": a}])}, {"b": a, "a": [a, None, [a, {"k": a}]]},
                      {"b": a, "a": (a, None, (a, {"k": a}))}, {"b": (a,), "a": (a, None, [a, {"k": a}])},
                      {"b": a}, {"b": a, "a": (a, None, [a, {"k": a}, a])}, {"b": Point(a, a), "a": (a, None, [a])},
                      {"b": Point(a, a), "a": (a, None, [a, {"k": a}])}, [a, a]]
    def leaves_only(leaves):
        return leaves if all(type(x) is np.ndarray or tree_structure(x) == LEAF for x in leaves) else "miss"
    for base_tree, vs in ((plain, plain_variants), (base, variants)):
        t = tree_flatten(((base_tree, a), {"k": a}))[1]
        call = caller(t, leaves_only, "miss")
        for v in vs:
            assert call((v, a), {"k": a}) == (flatten_as(t, ((v, a), {"k": a})) or "miss")
            assert call((v,), {"k": a}) == call((v, a), {}) == call((v, a), {"j": a}) == "miss"


def test_results_are_fresh_numpy_arrays():
    x = np.ones(3)
    out = tj.jit(lambda x: (x, x * 2, 3.0))(x)
    assert all(isinstance(o, np.ndarray) for o in out)
    assert out[0] is not x and not np.shares_memory(out[0], x)
    assert out[2].shape == () and out[2].dtype == np.float64


def test_jit_caches_per_signature_and_static_args():
    calls = []

    def f(x, n, scale=1.0):
        calls.append(1)
        return x * n * scale

    jf = tj.jit(f, static_argnums=1, static_argnames="scale")
    for x, n in [(np.ones(2), 2), (np.ones(2) * 3, 2), (np.ones(3), 2), (np.ones(2), 3), (np.ones(2, f32), 2)]:
        np.testing.assert_allclose(jf(x, n), x * n)
    assert jf(np.ones(2), 2, scale=2.0)[0] == 4.0
    info = jf.cache_info()
    assert (info["entries"], info["hits"], info["misses"], len(calls)) == (5, 1, 5, 5)
    jf(1.0, 2)  # a weak Python scalar has its own signature
    jf(np.float64(1.0), 2)
    assert jf.cache_info()["misses"] == 7
    with pytest.raises(TypeError, match="unhashable"):
        jf(np.ones(2), [1, 2])


def test_cache_hits_of_pytree_and_scalar_arguments_take_the_fast_path():
    """Calls with dicts, lists, keywords or scalars hit a fast path on the flat leaves (the tree compared
    with the last call's, scalars made 0-d arrays of the compiled dtype, the arrays checked by the
    generated code); what it returns and counts is what the full path gives, and an argument of another
    type, shape or dtype at the same place takes its own signature."""
    jf = tj.jit(lambda d, s: {"y": d["x"] * s, "n": d["n"] + 1})
    d = {"x": np.arange(3.0, dtype=f32), "n": np.int32(4)}
    for s in (2.0, 3.0, 3.0):
        out = jf(d, s)
        np.testing.assert_array_equal(out["y"], d["x"] * np.float32(s))
        assert out["y"].dtype == f32 and out["n"] == 5 and out["n"].dtype == np.int32
    assert (jf.cache_info()["hits"], jf.cache_info()["misses"]) == (2, 1) and jf._tree_fast is not None
    for s, dtype in ((np.float64(2.0), np.float64), (np.array(2.0), np.float64), (2, f32), (np.float32(2), f32)):
        out = jf(d, s)
        np.testing.assert_array_equal(out["y"], d["x"] * s)
        assert out["y"].dtype == dtype
    assert jf.cache_info()["misses"] == 4          # np.float64(2.0) and np.array(2.0) share a signature
    longer = {"x": np.arange(4.0, dtype=f32), "n": np.int32(1)}
    np.testing.assert_array_equal(jf(longer, 0.5)["y"], longer["x"] * 0.5)
    np.testing.assert_array_equal(jf(d, s=3.0)["y"], d["x"] * 3)
    np.testing.assert_array_equal(jf(d, s=3.0)["y"], d["x"] * 3)
    with pytest.raises(TypeError, match="argument d\\['x'\\] of type str"):
        jf({"x": "text", "n": np.int32(1)}, 2.0)
    np.testing.assert_allclose(tj.grad(lambda x: jf({"x": x, "n": np.int32(0)}, 2.0)["y"].sum())(np.ones(3)), 2.0)
    scale = tj.jit(lambda x, s: x * s)            # positional scalars: the flat fast path converts them
    x = np.arange(3, dtype=np.int32)
    for s, dtype in ((2, np.int32), (3, np.int32), (True, np.int32), (1.5, np.float64), (np.int64(2), np.int64)):
        out = scale(x, s)
        np.testing.assert_array_equal(out, x * s)
        assert out.dtype == dtype
    many = tj.jit(lambda ws, x: [w * x for w in ws])
    ws = [np.full(3, k, f32) for k in range(3)]
    for _ in range(2):
        assert all(np.array_equal(o, w * ws[1]) for o, w in zip(many(ws, ws[1]), ws))
    np.testing.assert_array_equal(many(ws[:2], ws[1])[1], ws[1] ** 2)
    assert many.cache_info()["misses"] == 2 and many.cache_info()["hits"] == 1


def test_jit_is_thread_safe():
    jf = tj.jit(lambda x: tnp.sin(x) * 2)
    results, errors = [], []

    def work(i):
        try:
            x = np.full(4, float(i))
            results.append(np.allclose(jf(x), np.sin(x) * 2))
        except Exception as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and all(results) and len(results) == 8
    assert jf.cache_info()["entries"] == 1


def test_nested_traces_and_closures_over_outer_tracers():
    def outer(x):
        inner = tj.jit(lambda y: y * x)  # closes over the outer tracer
        return inner(x + 1) + tj.jit(lambda y: y.sum())(x)

    x = np.arange(3.0)
    expected = (x + 1) * x + x.sum()
    np.testing.assert_allclose(tj.jit(outer)(x), expected)
    np.testing.assert_allclose(outer(x), expected)
    text = ir_text(outer, x)
    assert "mul" in text and text.count("lambda") == 1  # the inner jit was inlined


# ----------------------------------------------------------------------------------------------- errors

@pytest.mark.parametrize("body,what", [
    (lambda x: x if x > 0 else -x, "Python control flow"),
    (lambda x: float(x), "float()"),
    (lambda x: int(x), "int()"),
    (lambda x: bool(x), "Python control flow"),
    (lambda x: np.asarray(x), "np.asarray"),
    (lambda x: [0, 1][x], "index"),
    (lambda x: np.arange(6.0).reshape(2, 3)[:, x], "tnp.take"),     # a NumPy array indexed with a tracer
])
def test_concretization_errors_name_the_argument(body, what):
    def f(weights, x):
        return body(x)
    with pytest.raises(tj.ConcretizationError) as info:
        tj.jit(f)(np.ones(2), np.int32(1))
    message = str(info.value)
    assert what in message and "argument 'x'" in message and "lax.cond" in message and "static_argnums" in message


def test_concretization_error_names_pytree_path():
    with pytest.raises(tj.ConcretizationError, match=r"argument 'params\['b'\]'"):
        tj.jit(lambda params: 1 if params["b"] > 0 else 0)({"a": np.ones(2), "b": np.float32(1)})


@pytest.mark.parametrize("body,pattern", [
    (lambda x, y: x + y, r"add: shapes \(3,\) and \(4,\) cannot be broadcast"),
    (lambda x, y: x @ y, r"matmul: shapes \(3,\) and \(4,\)"),
    (lambda x, y: x.reshape(5), r"reshape: cannot reshape an array of shape \(3,\)"),
    (lambda x, y: tnp.concatenate([x[None], y[None, None]]), r"concatenate: .*\(1, 3\), \(1, 1, 4\)"),
])
def test_shape_errors_name_operation_shapes_and_line(body, pattern):
    with pytest.raises(ValueError, match=pattern) as info:
        tj.jit(body)(np.ones(3), np.ones(4))
    assert "test_core.py:" in str(info.value)


@pytest.mark.parametrize("arg,path", [
    ({"w": "text"}, r"x\['w'\]"), ([np.ones(2), object()], r"x\[1\]"), (np.array(["a"]), "x has dtype <U1"),
    (np.zeros(2, "datetime64[s]"), r"x has dtype datetime64\[s\]"), (b"bytes", "x of type bytes"),
])
def test_unsupported_arguments_name_their_path(arg, path):
    with pytest.raises(TypeError, match=path):
        tj.jit(lambda x: x)(arg)


def test_ragged_lists_are_rejected():
    with pytest.raises(TypeError, match="ragged"):
        tnp.array([[1, 2], [3]])


def test_escaped_tracer_is_an_error_not_a_wrong_result():
    leaked = []
    tj.jit(lambda x: leaked.append(x) or x)(np.ones(2))
    with pytest.raises(tj.EscapedTracerError, match="escaped the trace"):
        tj.jit(lambda y: y + leaked[0])(np.ones(2))
    with pytest.raises(tj.EscapedTracerError):
        leaked[0] * 2


def test_traced_boolean_mask_is_a_clear_error():
    with pytest.raises(tj.ConcretizationError, match="tnp.where"):
        tj.jit(lambda x: x[x > 0])(np.ones(3))


def test_long_params_break_over_indented_lines():
    text = ir_text(lambda x: tj.lax.pad(x, 0.0, [(1, 2, 0), (3, 4, 1), (0, 0, 0), (1, 1, 1), (2, 2, 2)]),
                   np.ones((2, 3, 4, 5, 6), f32))
    assert text == """{ lambda ; a:f32[2,3,4,5,6]. let
    b:f32[5,12,4,11,20] = pad[
      padding_config=((1, 2, 0), (3, 4, 1), (0, 0, 0), (1, 1, 1), (2, 2, 2))
    ] a 0.0:f32[]
  in (b,) }"""


def test_sub_irs_print_nested_and_are_checked():
    from tracejit.core.ir import ClosedIR
    from tracejit.core.trace import Primitive, eval_ir

    call_p = Primitive("call", lambda *avals, body: body.out_avals, lambda *xs, body: eval_ir(body, *xs),
                       multiple_results=True)
    body = tj.make_ir(lambda y: tnp.sin(y) * 2.0)(np.ones(2, f32))
    text = ir_text(lambda x: call_p.bind(x + 1.0, body=body)[0], np.ones(2, f32))
    assert text == """{ lambda ; a:f32[2]. let
    b:f32[2] = add a 1.0:f32[]
    c:f32[2] = call[
      body={ lambda ; d:f32[2]. let
          e:f32[2] = sin d
          f:f32[2] = mul e 2.0:f32[]
        in (f,) }
    ] b
  in (c,) }"""
    assert isinstance(body, ClosedIR)
    body.ir.eqns[1].outvars[0].aval = body.ir.eqns[1].outvars[0].aval.update(dtype=np.float64)
    with pytest.raises(IRCheckError):
        tj.check_ir(tj.make_ir(lambda x: call_p.bind(x, body=body)[0])(np.ones(2, f32)))


def test_results_are_freed_without_the_cycle_collector():
    """A reference cycle in the call path would keep every result alive until gc runs (and make each
    call page-fault fresh memory)."""
    import gc
    import weakref
    f = tj.jit(lambda d: {"y": d["x"] * 2, "z": [d["x"] + 1]})
    x = {"x": np.ones(1000)}
    f(x)
    gc.disable()
    try:
        out = f(x)
        refs = [weakref.ref(out["y"]), weakref.ref(out["z"][0])]
        del out
        assert all(r() is None for r in refs)
    finally:
        gc.enable()


def test_static_arguments_do_not_shift_argument_names():
    def f(n, x, scale=1.0):
        return x * n * scale if x > 0 else x
    with pytest.raises(tj.ConcretizationError, match="argument 'x'"):
        tj.jit(f, static_argnums=0)(3, np.float32(1))
    with pytest.raises(tj.ConcretizationError, match="argument 'x'"):
        tj.jit(f, static_argnums=0, static_argnames="scale")(3, np.float32(1), scale=2.0)


def test_jitted_methods_get_their_instance_as_in_jax():
    class Model:
        def __init__(self, scale):
            self.scale = scale

        @functools.partial(tj.jit, static_argnums=0)
        def apply(self, x):
            return x * self.scale

        @tj.jit
        def plain(self, x):
            return x

    np.testing.assert_array_equal(Model(3.0).apply(np.ones(2)), [3.0, 3.0])
    np.testing.assert_array_equal(Model(2.0).apply(np.ones(2)), [2.0, 2.0])   # another instance, another key
    with pytest.raises(TypeError, match="argument self of type Model"):
        Model(1.0).plain(np.ones(2))
