"""The API layer: every kind of callable through every transformation, input checks of grad, tracebacks
that show the user's code, documentation, and the conveniences JAX code uses (devices, tj.tree,
eval_shape), checked against JAX where JAX has the feature."""
import functools
import inspect
import operator
import os
import pydoc
import subprocess
import sys
import traceback
import types

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
import tracejit.scipy.linalg
from tracejit.traceback_util import NOTE

PACKAGE_DIR = os.path.dirname(os.path.abspath(tj.__file__)) + os.sep

# ------------------------------------------------------------------------------------- any callable


def scaled_sin(a, x):
    return a * tnp.sin(x)


class Scaled:
    def __init__(self, a):
        self.a = a

    def __call__(self, x):
        return self.a * tnp.sin(x)

    def apply(self, x):
        return self.a * tnp.sin(x)


def _sin2(x):
    return 2 * np.sin(x), 2 * np.cos(x), -2 * np.sin(x)


# (callable, its name, value, first and second derivative with NumPy)
CALLABLES = {
    "partial": (functools.partial(scaled_sin, 2.0), "scaled_sin", _sin2),
    "callable_object": (Scaled(2.0), "Scaled", _sin2),
    "bound_method": (Scaled(2.0).apply, "apply", _sin2),
    "lambda": (lambda x: 2.0 * tnp.sin(x), "<lambda>", _sin2),
    "tnp_sin": (tnp.sin, "sin", lambda x: (np.sin(x), np.cos(x), -np.sin(x))),
    "builtin_abs": (abs, "abs", lambda x: (np.abs(x), np.sign(x), 0 * x)),
    "operator_neg": (operator.neg, "neg", lambda x: (-x, -np.ones_like(x), 0 * x)),
    "jitted": (tj.jit(functools.partial(scaled_sin, 2.0)), "scaled_sin", _sin2),
}

XS = np.array([0.3, 0.7, 1.9])


def _transform_cases(fun, ref):
    """(name, what tracejit gives, what NumPy says) for each transformation of fun."""
    f, df, _ = ref(XS)
    ones = np.ones_like(XS)
    x0 = 0.7
    f0, df0, d2f0 = (np.asarray(v)[()] for v in ref(np.array(x0)))
    closed = tj.make_ir(fun)(XS)
    yield "jit", tj.jit(fun)(XS), f
    yield "jit_reference", tj.jit(fun, backend="reference")(XS), f
    yield "make_ir", tj.eval_ir(closed, XS)[0], f
    yield "make_ir_optimized", tj.eval_ir(tj.make_ir(fun, optimize=True)(XS), XS)[0], f
    yield "grad", tj.grad(fun)(x0), df0
    yield "value_and_grad", tj.value_and_grad(fun)(x0), (f0, df0)
    yield "vmap", tj.vmap(fun)(XS), f
    yield "jvp", tj.jvp(fun, (XS,), (ones,)), (f, df)
    yield "vjp", tj.vjp(fun, XS)[1](ones), (df,)
    yield "linearize", tj.linearize(fun, XS)[1](ones), df
    yield "jacfwd", tj.jacfwd(fun)(XS), np.diag(df)
    yield "jacrev", tj.jacrev(fun)(XS), np.diag(df)
    yield "hessian", tj.hessian(fun)(x0), d2f0
    yield "jit_grad", tj.jit(tj.grad(fun))(x0), df0
    yield "grad_jit", tj.grad(tj.jit(fun))(x0), df0
    yield "vmap_grad", tj.vmap(tj.grad(fun))(XS), df


@pytest.mark.parametrize("kind", CALLABLES)
def test_any_callable_through_every_transformation(kind):
    fun, _, ref = CALLABLES[kind]
    for name, got, expected in _transform_cases(fun, ref):
        for g, e in zip(tj.tree.leaves(got), tj.tree.leaves(expected), strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-15, err_msg=f"{kind}: {name}")
    shape = tj.eval_shape(fun, XS)
    assert (shape.shape, shape.dtype) == ((3,), np.float64)


@pytest.mark.parametrize("kind", CALLABLES)
def test_jitted_callables_are_named_after_their_function(kind):
    fun, name, _ = CALLABLES[kind]
    jitted = tj.jit(fun)
    jitted(XS)
    assert jitted.__name__ == name and jitted.cache_info().function == name
    assert "sin" in jitted.lower(XS).as_text() or kind in ("builtin_abs", "operator_neg")


def test_jit_of_a_partial_the_issue_example():
    f = lambda a, x: a * x + 1.0
    x = np.arange(3.0)
    np.testing.assert_array_equal(tj.jit(functools.partial(f, 2.0))(x), 2 * x + 1)
    assert "mul" in str(tj.make_ir(functools.partial(f, 2.0))(x))


def test_a_callable_objects_attributes_do_not_shadow_the_jitted_methods():
    class Model:
        def __init__(self):
            self.lower, self.trace, self.cache = "a field", "another", "and another"

        def __call__(self, x):
            return x * 2.0

    jitted = tj.jit(Model())
    np.testing.assert_array_equal(jitted(XS), 2 * XS)
    assert "mul" in jitted.lower(XS).as_text() and jitted.cache is True


def test_custom_derivatives_of_any_callable():
    f = tj.custom_jvp(functools.partial(scaled_sin, 2.0))
    f.defjvp(lambda primals, tangents: (f(primals[0]), 3.0 * tangents[0]))   # a deliberately odd rule
    g = tj.custom_vjp(Scaled(2.0))
    g.defvjp(functools.partial(lambda k, x: (g(x), None), 1), lambda _, ct: (5.0 * ct,))
    assert f.__name__ == "scaled_sin" and g.__name__ == "Scaled"
    np.testing.assert_allclose((tj.jit(f)(0.5), tj.jit(g)(0.5)), 2 * np.sin(0.5))
    assert (tj.grad(f)(0.5), tj.grad(g)(0.5)) == (3.0, 5.0)
    np.testing.assert_array_equal(tj.vmap(tj.grad(f))(XS), 3.0)


def test_jit_of_a_non_callable_is_an_error():
    with pytest.raises(TypeError, match="jit: expected a callable, got int"):
        tj.jit(3)


def test_star_args_are_named_by_position():
    def f(a, *rest):
        return a * rest[0] @ rest[1]
    with pytest.raises(tj.ShapeError, match=r"arguments 'a', 'rest\[0\]', 'rest\[1\]'"):
        tj.jit(f)(1.0, np.ones(3), np.ones(4))


# ---------------------------------------------------------------------------------- grad's input check


def test_grad_of_an_integer_function_of_an_integer_reports_the_input():
    """The input is checked before the output (whose dtype follows from it), and is named."""
    with pytest.raises(TypeError, match=r"grad requires real- or complex-valued \(float or complex\) inputs, but "
                                        r"argument 'n' has dtype int32 \(i32\[\]\)"):
        tj.grad(lambda n: n * 2)(np.int32(3))
    with pytest.raises(TypeError, match=r"argument 'k' has dtype int64"):
        tj.grad(lambda x, k: x * k, argnums=(0, 1))(1.0, 3)


def test_grad_of_an_integer_input_is_an_error_in_jax_too():
    jax = pytest.importorskip("jax", reason="JAX is the reference for this behaviour")
    with pytest.raises(TypeError, match="int32"):
        jax.grad(lambda n: n * 2)(np.int32(3))


# --------------------------------------------------------------------------------------- tracebacks


def _bad_matmul(x, w):
    return tnp.sum(x @ w)   # the line every traceback below must show


BAD_LINE = _bad_matmul.__code__.co_firstlineno + 1
X3, W42 = np.ones(3), np.ones((4, 2))

TRACED_ERRORS = {
    "jit": lambda: tj.jit(_bad_matmul)(X3, W42),
    "grad": lambda: tj.grad(_bad_matmul)(X3, W42),
    "vmap": lambda: tj.vmap(_bad_matmul, in_axes=(None, 0))(X3, np.ones((2, 4, 2))),
    "jit_of_grad": lambda: tj.jit(tj.grad(_bad_matmul))(X3, W42),
    "jit_in_jit": lambda: tj.jit(lambda x: tj.jit(_bad_matmul)(x, W42))(X3),
    "jacrev": lambda: tj.jacrev(_bad_matmul)(X3, W42),
    "make_ir": lambda: tj.make_ir(_bad_matmul)(X3, W42),
    "lower": lambda: tj.jit(_bad_matmul).lower(X3, W42),
    "eval_shape": lambda: tj.eval_shape(_bad_matmul, X3, W42),
}


def _frames(error):
    return [(os.path.abspath(f.filename), f.lineno) for f in traceback.extract_tb(error.__traceback__)]


@pytest.mark.parametrize("case", TRACED_ERRORS)
def test_traceback_of_a_shape_error_shows_the_users_frames_only(case):
    with pytest.raises(tj.ShapeError) as info:
        TRACED_ERRORS[case]()
    frames = _frames(info.value)
    assert (os.path.abspath(__file__), BAD_LINE) in frames
    assert not [f for f in frames if f[0].startswith(PACKAGE_DIR)], frames
    message = str(info.value)
    assert f"(at {__file__}:{BAD_LINE})" in message                # the pointer stays
    assert NOTE in info.value.__notes__
    names = "argument 'x'" if case in ("grad", "jacrev") else "arguments 'w', 'x'"  # w is not differentiated
    assert f"derived from {names}" in message


def test_an_index_error_names_its_argument():
    def pick(table, i):
        return table[7] + i
    with pytest.raises(IndexError, match=r"out of bounds.*\n.*derived from argument 'table'") as info:
        tj.jit(pick)(np.ones(3), 1.0)
    assert not [f for f in _frames(info.value) if f[0].startswith(PACKAGE_DIR)]


def test_an_error_about_an_argument_shows_the_call_site():
    with pytest.raises(TypeError, match="argument x of type str") as info:
        tj.jit(_bad_matmul)("not an array", W42)
    frames = _frames(info.value)
    assert frames and not [f for f in frames if f[0].startswith(PACKAGE_DIR)]


def test_filtering_off_keeps_every_frame():
    tj.config.update("traceback_filtering", False)
    try:
        with pytest.raises(tj.ShapeError) as info:
            tj.jit(_bad_matmul)(X3, W42)
    finally:
        tj.config.update("traceback_filtering", True)
    frames = _frames(info.value)
    assert any(f[0] == os.path.join(PACKAGE_DIR, "api.py") for f in frames)
    assert (os.path.abspath(__file__), BAD_LINE) in frames
    assert NOTE not in getattr(info.value, "__notes__", ())
    assert "derived from arguments 'w', 'x'" in str(info.value)


def test_the_environment_variable_turns_filtering_off():
    program = ("import numpy as np, tracejit as tj, tracejit.numpy as tnp\n"
               "print(tj.config.traceback_filtering)\n"
               "tj.jit(lambda x: tnp.reshape(x, (5,)))(np.ones(3))\n")
    shown = {}
    for value in ("off", None):
        env = {k: v for k, v in os.environ.items() if k != "TRACEJIT_TRACEBACK_FILTERING"}
        if value is not None:
            env["TRACEJIT_TRACEBACK_FILTERING"] = value
        run = subprocess.run(check=False, args=[sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120)
        assert "ShapeError: reshape" in run.stderr
        shown[value] = run
    assert shown["off"].stdout.strip() == "False" and "tracejit/api.py" in shown["off"].stderr
    assert shown[None].stdout.strip() == "True" and "tracejit/api.py" not in shown[None].stderr


def test_errors_caught_inside_tracejit_are_left_alone():
    """The symbolic-dims policy tries a symbolic compile and falls back on failure: that internal
    exception must not leak, and later errors are still filtered once (one note)."""
    f = tj.jit(lambda x: x[:2] * 2.0)   # a slice of a symbolic axis needs its size: stays specialised
    for n in (3, 4, 5):
        np.testing.assert_array_equal(f(np.ones(n)), 2 * np.ones(2))
    with pytest.raises(tj.ShapeError) as info:
        tj.jit(tj.grad(tj.jit(_bad_matmul)))(X3, W42)
    assert info.value.__notes__.count(NOTE) == 1


# ------------------------------------------------------------------------------------- documentation


def test_help_of_jit_explains_its_arguments_and_the_returned_object():
    text = pydoc.render_doc(tj.jit)
    for word in ("static_argnums", "static_argnames", "dynamic_dims", "cache", "backend", "lower(", "trace(",
                 "cache_info()", "as_text", "@tj.jit", "donation"):
        assert word in text, word


def _public_callables(module):
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    for name in names:
        obj = getattr(module, name)
        if callable(obj) and not isinstance(obj, types.ModuleType):
            yield name, obj


@pytest.mark.parametrize("module", ["tracejit", "tracejit.lax", "tracejit.nn", "tracejit.tree_util", "tracejit.tree",
                                    "tracejit.numpy", "tracejit.numpy.linalg", "tracejit.numpy.fft",
                                    "tracejit.scipy.linalg", "tracejit.lax.linalg", "tracejit.debug"])
def test_every_public_function_has_a_docstring(module):
    mod = sys.modules[module]
    found = dict(_public_callables(mod))
    assert found
    assert not [name for name, obj in found.items() if not (inspect.getdoc(obj) or "").strip()]


def test_jitted_methods_are_documented():
    for name in ("lower", "trace", "cache_info", "__call__"):
        assert inspect.getdoc(getattr(tj.api.Jitted, name)), name


def test_lax_exports_only_its_functions():
    assert not {"bind", "aval", "asarray", "canonical_dtype", "is_python_scalar"} & set(tj.lax.__all__)
    assert all(callable(getattr(tj.lax, n)) for n in tj.lax.__all__)


# -------------------------------------------------------------------------------------- conveniences


def test_device_put_returns_numpy_arrays_and_ignores_the_device():
    tree = {"w": np.ones((2, 3), np.float32), "b": [np.arange(3), 2.5]}
    put = tj.device_put(tree, tj.devices()[0])
    assert tj.tree.structure(put) == tj.tree.structure(tree)
    for got, given in zip(tj.tree.leaves(put), tj.tree.leaves(tree)):
        assert type(got) is np.ndarray
        np.testing.assert_array_equal(got, given)
    x = np.ones(3)
    assert tj.device_put(x) is x and tj.device_put(x, may_alias=False) is not x
    np.testing.assert_array_equal(tj.jit(lambda x: tj.device_put(x) * 2)(x), 2 * x)


def test_block_until_ready_returns_its_argument():
    tree = (np.ones(2), {"a": 3.0})
    assert tj.block_until_ready(tree) is tree
    y = tj.jit(lambda x: x + 1)(np.ones(2))
    assert tj.block_until_ready(y) is y


def test_one_cpu_device_with_jax_attribute_names():
    jax = pytest.importorskip("jax", reason="JAX is the reference for the device attributes")
    (ours,), (theirs,) = tj.devices(), jax.devices("cpu")
    for attribute in ("platform", "id", "device_kind", "process_index"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))
    assert tj.local_devices() == tj.devices() and tj.device_count() == tj.local_device_count() == 1
    assert tj.default_backend() == "cpu"
    with pytest.raises(RuntimeError, match="CPU only.*'gpu'"):
        tj.devices("gpu")


TREES = [
    {"a": (1.0, 2.0), "b": [3.0, {"c": 4.0, "d": None}]},
    [1.0, (2.0, 3.0), []],
    (5.0,),
]


@pytest.mark.parametrize("tree", TREES, ids=["dict", "list", "tuple"])
def test_tj_tree_matches_jax_tree(tree):
    jax = pytest.importorskip("jax", reason="JAX is the reference for tj.tree")
    assert tj.tree.leaves(tree) == jax.tree.leaves(tree)
    assert tj.tree.map(lambda x: x * 2, tree) == jax.tree.map(lambda x: x * 2, tree)
    assert tj.tree.map(operator.add, tree, tree) == jax.tree.map(operator.add, tree, tree)
    leaves, treedef = tj.tree.flatten(tree)
    assert leaves == jax.tree.flatten(tree)[0] and tj.tree.unflatten(treedef, leaves) == tree
    assert tj.tree.structure(tree) == treedef and treedef.num_leaves == jax.tree.structure(tree).num_leaves
    assert tj.tree.reduce(operator.add, tree) == jax.tree.reduce(operator.add, tree)
    assert tj.tree.reduce(operator.add, tree, 10.0) == jax.tree.reduce(operator.add, tree, 10.0)
    assert tj.tree.all(tree) == jax.tree.all(tree)
    assert tj.tree.all(tj.tree.map(lambda x: x > 2.0, tree)) == jax.tree.all(jax.tree.map(lambda x: x > 2.0, tree))


def test_tj_tree_transpose_matches_jax():
    jax = pytest.importorskip("jax", reason="JAX is the reference for tj.tree")
    pairs = [{"x": 1, "y": 2}, {"x": 3, "y": 4}, {"x": 5, "y": 6}]
    outer, inner = [0, 0, 0], {"x": 0, "y": 0}
    ours = tj.tree.transpose(tj.tree.structure(outer), tj.tree.structure(inner), pairs)
    assert ours == jax.tree.transpose(jax.tree.structure(outer), jax.tree.structure(inner), pairs)
    assert ours == {"x": [1, 3, 5], "y": [2, 4, 6]}
    assert tj.tree.transpose(tj.tree.structure(outer), None, pairs) == ours
    with pytest.raises(TypeError, match="inner tree has the structure"):
        tj.tree.transpose(tj.tree.structure(outer), tj.tree.structure(inner), [{"x": 1}, {"x": 3}, {"x": 5}])
    assert tj.tree_util.tree_transpose is tj.tree.transpose


EVAL_SHAPE_CASES = {
    "matmul_tree": (lambda p, x: {"y": tnp.tanh(x @ p["w"]), "n": tnp.sum(x, axis=0)},
                    ({"w": np.ones((3, 2), np.float32)}, np.ones((4, 3), np.float32))),
    "int_and_bool": (lambda i: (i * 2, i > 0, tnp.argmax(i)), (np.arange(5, dtype=np.int32),)),
    "python_scalar_out": (lambda x: (x.shape[0] * 1.0, x.astype(np.int32)), (np.ones((2, 2), np.float32),)),
}


@pytest.mark.parametrize("case", EVAL_SHAPE_CASES)
def test_eval_shape_matches_jax(case):
    jax = pytest.importorskip("jax", reason="JAX is the reference for eval_shape")
    jnp = pytest.importorskip("jax.numpy")
    fun, args = EVAL_SHAPE_CASES[case]
    ours = tj.eval_shape(fun, *args)
    with pytest.MonkeyPatch.context() as patch, jax.enable_x64(True):   # the same code under JAX, with
        patch.setattr(sys.modules[__name__], "tnp", jnp)                 # NumPy's 64-bit defaults
        theirs = jax.eval_shape(fun, *args)
    assert tj.tree.structure(ours).num_leaves == len(jax.tree.leaves(theirs))
    for o, t in zip(tj.tree.leaves(ours), jax.tree.leaves(theirs)):
        assert isinstance(o, tj.ShapeDtypeStruct)
        assert (o.shape, o.dtype, o.weak_type) == (t.shape, t.dtype, t.weak_type), case


def test_eval_shape_computes_nothing_and_takes_shape_dtype_structs():
    calls = []

    def f(x):
        calls.append(type(x))
        return tnp.exp(x) @ x.T

    out = tj.eval_shape(f, tj.ShapeDtypeStruct((1000, 3), np.float32))
    assert (out.shape, out.dtype) == ((1000, 1000), np.float32)
    assert calls == [tj.core.trace.Tracer]


def _affine(x):
    return tnp.tanh(x) * 2.0 + 1.0


def test_jit_made_anew_reuses_the_functions_code():
    """As in JAX, `jit(f)(x)` written inside a loop compiles f once: the cache belongs to the function and the
    jit options, not to the Jitted object."""
    tj.clear_caches()
    x = np.linspace(-1, 1, 7, dtype=np.float32)
    for _ in range(3):
        f = tj.jit(_affine)
        np.testing.assert_allclose(f(x), np.tanh(x) * 2 + 1, rtol=1e-6)
    assert f.misses == 1 and f.cache_info().hits == 2
    other = tj.jit(_affine, static_argnames=())      # the same options
    assert other._signatures is f._signatures
    assert tj.jit(_affine, cache=False)._signatures is not f._signatures   # other options: another cache
    tj.clear_caches()
    again = tj.jit(_affine)
    assert again.misses == 0 and not f._signatures.entries
    np.testing.assert_allclose(f(x), again(x))      # the old object compiles again; both still work
    assert f.misses == 2 and again.misses == 1


def test_functions_made_anew_do_not_share_code():
    """Closures made anew are other functions, with their own constants: no stale result from another's code."""
    x = np.arange(3.0)
    outs = [tj.jit(lambda v, c=c: v * c)(x) for c in (1.0, 2.0, 3.0)]
    np.testing.assert_array_equal(outs, [x, 2 * x, 3 * x])

    class Unhashable:
        __hash__ = None

        def __call__(self, v):
            return v + 1.0
    np.testing.assert_array_equal(tj.jit(Unhashable())(x), x + 1.0)


def test_eviction_drops_the_fast_paths_of_every_jit_sharing_the_cache(monkeypatch):
    monkeypatch.setattr(tj.config, "memory_cache_max_entries", 1)
    monkeypatch.setattr(tj.config, "symbolic_dims_after", 0)
    tj.clear_caches()
    first, second = tj.jit(_affine), tj.jit(_affine)
    a, b = np.zeros(4, np.float32), np.zeros(5, np.float32)
    first(a)
    assert first._fast is not None
    second(b)                     # evicts a's entry, which first's fast path led to
    assert first._fast is None and first.cache_info().evicted == 1
    np.testing.assert_allclose(first(a), np.ones(4))
    assert first.misses == 3


def test_dynamic_dims_of_the_wrong_form_is_a_clear_type_error():
    with pytest.raises(TypeError, match="dynamic_dims must map argument names to"):
        tj.jit(lambda x: x * 2.0, dynamic_dims={"x": [0]})
    with pytest.raises(TypeError, match="dynamic_dims must map argument names to"):
        tj.jit(lambda x: x * 2.0, dynamic_dims=[("x", {0: "n"})])
