"""JAX's top-level names for one CPU process, against JAX itself: tj.scipy after `import tracejit`, tj.Array and
tj.typing, tj.dtypes, tj.errors (JAX's exception names catch tracejit's errors), device_get, typeof, disable_jit,
ensure_compile_time_eval, the debug_nans / log_compiles context managers, named_call / named_scope,
custom_gradient, linear_transpose, closure_convert, pure_callback (eager, jit, vmap, loops) and the process
queries."""
import functools
import subprocess
import sys
import typing

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

import tracejit as tj
import tracejit.numpy as tnp

X = np.array([0.3, -1.2, 2.0])
Y = np.array([2.0, -1.0, 0.5])
BOTH = pytest.mark.parametrize("M", [tj, jax], ids=["tracejit", "jax"])


def close(a, b):
    for u, v in zip(tj.tree.leaves(a), tj.tree.leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------------------------ modules

def test_scipy_loads_with_tracejit_but_lazily():
    """`tj.scipy` works right after `import tracejit` (as jax.scipy does), without costing the import."""
    code = ("import sys, tracejit as tj; assert 'tracejit.scipy' not in sys.modules; "
            "import numpy as np; print(float(tj.scipy.special.logsumexp(np.array([0.0, 0.0]))), 'scipy' in dir(tj))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert np.isclose(float(out[0]), np.log(2.0)) and out[1] == "True"
    close(tj.scipy.special.logsumexp(X), jax.scipy.special.logsumexp(X))


def test_array_covers_numpy_arrays_and_tracers():
    assert isinstance(np.ones(2), tj.Array) and isinstance(tj.jit(tnp.sin)(X), tj.Array)
    seen = []

    def f(x):
        seen.append(isinstance(x, tj.Array))
        return x * 2.0
    tj.jit(f)(X)
    tj.grad(lambda x: tnp.sum(f(x)))(X)
    tj.vmap(f)(np.ones((2, 3)))
    assert seen == [True, True, True]
    assert not isinstance(1.0, tj.Array) and not isinstance([1.0], tj.Array)
    assert not isinstance(1.0, jax.Array)       # as in JAX: a Python scalar is ArrayLike, not an Array

    def annotated(x: tj.Array, d: tj.typing.DTypeLike) -> tj.Array:
        return x
    assert typing.get_type_hints(annotated)["x"] is tj.Array


@pytest.mark.parametrize("value", [np.ones(2), np.float32(1.0), 1.0, 2, True, 1j])
def test_array_like_as_jax(value):
    assert isinstance(value, tj.typing.ArrayLike) == isinstance(value, jax.typing.ArrayLike) is True
    assert not isinstance("a", tj.typing.ArrayLike) and not isinstance([1.0], tj.typing.ArrayLike)


def test_dtypes_as_jax():
    d, jd = tj.dtypes, jax.dtypes
    for dtype in (np.float32, "float64", float, int, np.int8, d.bfloat16, np.complex64, bool):
        assert d.canonicalize_dtype(dtype) == jd.canonicalize_dtype(dtype)
    with pytest.raises(TypeError):
        d.canonicalize_dtype(np.str_)
    assert d.float0 == jd.float0 == tj.float0 == jax.float0
    assert d.bfloat16 is jd.bfloat16
    assert d.finfo(d.bfloat16).eps == jd.finfo(jd.bfloat16).eps and d.iinfo(np.int8).max == jd.iinfo(np.int8).max
    for a, b in ((d.bfloat16, np.floating), (np.int32, np.integer), (np.float32, np.integer), (np.complex64, np.inexact)):
        assert d.issubdtype(a, b) == jd.issubdtype(a, b)
    assert d.result_type(np.int32, np.float32) == np.result_type(np.int32, np.float32)   # NumPy 2's promotion
    for args in ((np.float32, 1.0), (1.0,), (np.int16, 2), (np.float64,), (np.int8, np.int64), (np.float32, 1j)):
        assert d.result_type(*args) == jd.result_type(*args)
        assert d.result_type(*args, return_weak_type_flag=True) == jd.result_type(*args, return_weak_type_flag=True)
    for x in (1.0, np.float32(1), np.array([1], np.uint8), True, 1j):
        assert d.scalar_type_of(x) is jd.scalar_type_of(x)
    for dtype in (d.bfloat16, np.bool_, np.int64, np.complex128):
        assert d.itemsize_bits(dtype) == jd.itemsize_bits(dtype)


# Each misuse of a traced value, and the JAX error class that names it.
MISUSES = [
    ("bool", lambda x: x if x > 0 else -x, np.float64(1.0), "TracerBoolConversionError"),
    ("index", lambda x: [1.0, 2.0][x], np.int64(1), "TracerIntegerConversionError"),
    ("int", lambda x: x * int(x), np.float64(2.0), "ConcretizationTypeError"),
    ("asarray", lambda x: np.asarray(x) + 1.0, X, "TracerArrayConversionError"),
    ("bool mask", lambda x: x[x > 0], X, "NonConcreteBooleanIndexError"),
    ("bool, base class", lambda x: x if x > 0 else -x, np.float64(1.0), "ConcretizationTypeError"),
]


@pytest.mark.parametrize("M", [tj, jax], ids=["tracejit", "jax"])
@pytest.mark.parametrize(("fn", "arg", "name"), [m[1:] for m in MISUSES], ids=[m[0] for m in MISUSES])
def test_errors_catch_as_jax_names_them(M, fn, arg, name):
    with pytest.raises(getattr(M.errors, name)):
        M.jit(fn)(arg)


def test_errors_map_to_tracejit_classes():
    e = tj.errors
    assert e.ConcretizationTypeError is tj.ConcretizationError and e.UnexpectedTracerError is tj.EscapedTracerError
    assert issubclass(e.ConcretizationTypeError, e.JAXTypeError) and issubclass(e.ConcretizationTypeError, TypeError)
    kept = []
    tj.jit(lambda x: kept.append(x) or x)(X)
    with pytest.raises(e.UnexpectedTracerError):
        tj.jit(lambda x: x + kept[0])(X)
    with pytest.raises(e.JaxprTypeError):
        ir = tj.make_ir(tnp.sin)(X)
        ir.ir.eqns.append(ir.ir.eqns[0])      # binds a variable twice
        tj.check_ir(ir)
    with pytest.raises(e.InconclusiveDimensionOperation):
        tj.jit(lambda x: x.reshape(2, -1), dynamic_dims={"x": {0: "n"}})(np.ones(6))
    assert set(dir(jax.errors)) >= {n for n in e.__all__ if n not in ("ConcretizationError", "EscapedTracerError",
                                                                       "ShapeError", "TracejitError")}


# ------------------------------------------------------------------------------------------------ helpers

@BOTH
def test_device_get_and_typeof(M):
    out = M.device_get({"a": [1.5, M.numpy.ones(2)], "b": None})
    assert out["a"][0] == 1.5 and type(out["a"][1]) is np.ndarray and out["b"] is None
    t = M.typeof(np.ones((2, 3), np.float32))
    assert (t.shape, t.dtype, t.weak_type) == ((2, 3), np.float32, False)
    assert M.typeof(1.0).weak_type and M.typeof(1.0).dtype == np.float64
    shapes = []
    M.jit(lambda x: shapes.append((M.typeof(x).shape, M.typeof(x).dtype)) or x)(np.ones(4, np.int32))
    assert shapes == [((4,), np.int32)]
    with pytest.raises(TypeError):
        M.typeof("a string")


@BOTH
@pytest.mark.filterwarnings("ignore:jax.process")     # JAX warns about its own aliases host_id and host_count
def test_processes_and_hosts(M):
    assert (M.process_index(), M.process_count(), M.host_id(), M.host_count()) == (0, 1, 0, 1)


def test_print_environment_info(capsys):
    text = tj.print_environment_info(return_string=True)
    assert f"tracejit: {tj.__version__}" in text and f"numpy:    {np.__version__}" in text
    assert tj.print_environment_info() is None and capsys.readouterr().out.strip() == text


@BOTH
def test_named_call_and_scope_change_nothing(M):
    f = M.named_call(lambda x: M.numpy.sin(x) * 2.0, name="scaled")
    with M.named_scope("outer"):
        out = M.jit(f)(X)

    @M.named_scope("decorated")
    def g(x):
        return x + 1.0
    close(out, np.sin(X) * 2.0)
    close(M.grad(lambda x: M.numpy.sum(g(f(x))))(X), 2.0 * np.cos(X))
    with pytest.raises(TypeError, match="must be a string"), M.named_scope(3):
        pass


@BOTH
def test_disable_jit_runs_python_even_after_compiling(M):
    seen = []

    @M.jit
    def f(x):
        seen.append(type(x) is np.ndarray)
        return x * 2.0 if x[0] > 0 else x * 3.0       # Python control flow on values: only without jit

    @M.jit
    def g(x):
        seen.append("g")
        return x + 1.0
    with pytest.raises(M.errors.ConcretizationTypeError):
        f(X)
    for _ in range(3):     # compiled, and its fast path set
        g(X)
    seen.clear()
    with M.disable_jit():
        close(f(X), X * 2.0)
        close(f(-X), -X * 3.0)
        close(g(X), X + 1.0)
        close(M.grad(lambda x: M.numpy.sum(g(x) ** 2))(X), 2 * (X + 1.0))
    assert seen[:4] == [True, True, "g", "g"]
    seen.clear()
    close(g(X), X + 1.0)       # compiled again after the block
    assert seen == []


@BOTH
def test_ensure_compile_time_eval(M):
    @M.jit
    def f(x):
        with M.ensure_compile_time_eval():
            y = M.numpy.arange(3.0) * 2.0
            n = int(M.numpy.sum(y))         # a concrete value, inside jit
            z = x * y                       # traced values stay traced
        return z + n
    close(f(X), X * np.arange(3.0) * 2.0 + 6)


@BOTH
@pytest.mark.parametrize("name", ["debug_nans", "log_compiles"])
def test_settings_as_context_managers(M, name):
    state = getattr(M, name)
    assert state.value is False
    with state(True):
        assert state.value is True
        with state(False):
            assert state.value is False
        assert state.value is True
    assert state.value is False
    with pytest.raises(TypeError):
        bool(state)


def test_debug_nans_context_raises():
    f = tj.jit(lambda x: tnp.log(x) * 2.0)
    f(X)
    with tj.debug_nans(True), pytest.raises(FloatingPointError):
        f(X)
    assert np.isnan(f(X)[1])


# ------------------------------------------------------------------------------------------ derivatives

def _custom_gradient_fn(M):
    @M.custom_gradient
    def f(x, y):
        s = M.numpy.sin(x) * y
        return s, lambda g: (g * 3.0 * M.numpy.cos(x) * y, g * s * 2.0)   # deliberately not the true gradient
    return f


@pytest.mark.parametrize("how", ["grad", "jit", "vmap", "value_and_grad"])
def test_custom_gradient_against_jax(how):
    def run(M):
        f = _custom_gradient_fn(M)
        loss = M.grad(lambda a, b: M.numpy.sum(f(a, b) ** 2), argnums=(0, 1))
        if how == "jit":
            return M.jit(loss)(X, Y)
        if how == "vmap":
            return M.vmap(loss)(np.stack([X, -X]), np.stack([Y, Y * 2]))
        if how == "value_and_grad":
            return M.value_and_grad(lambda a: M.numpy.sum(f(a, Y)))(X)
        return loss(X, Y)
    close(run(tj), run(jax))
    expected = (2 * np.sin(X) * Y * 3.0 * np.cos(X) * Y, 2 * np.sin(X) * Y * np.sin(X) * Y * 2.0)
    close(run(tj) if how in ("grad", "jit") else expected, expected)


def test_custom_gradient_one_argument_and_closure():
    def run(M):
        @M.custom_gradient
        def f(x):
            e = M.numpy.exp(x)
            return e, lambda g: g * e * 10.0          # a bare cotangent for a function of one argument
        return M.grad(lambda a: M.numpy.sum(f(a)))(X), M.jit(M.grad(lambda a: M.numpy.sum(f(a))))(X), f(X)
    close(run(tj), run(jax))
    with pytest.raises(TypeError):
        tj.jvp(_custom_gradient_fn(tj), (X, Y), (X, Y))    # forward mode is refused, as in JAX (custom_vjp)


def test_linear_transpose_against_jax():
    a = np.array([[1.0, 2.0, 0.5], [3.0, 4.0, -1.0]])

    def run(M):
        def f(v, w):
            return {"av": a @ v, "w": 2.0 * w - M.numpy.flip(w)}
        t = M.linear_transpose(f, np.zeros(3), M.ShapeDtypeStruct((2,), np.float64))
        ct = {"av": np.array([1.0, -2.0]), "w": np.array([0.5, 3.0])}
        return t(ct), M.jit(t)(ct)
    close(run(tj), run(jax))
    close(run(tj)[0][0], a.T @ np.array([1.0, -2.0]))
    t = tj.linear_transpose(lambda v: a @ v, X)
    with pytest.raises(TypeError, match="tree"):
        t((np.ones(2),))
    with pytest.raises(TypeError, match="type"):
        t(np.ones(3))
    with pytest.raises(TypeError, match="float or complex"):
        tj.linear_transpose(lambda v: v * 2, np.arange(3))


def _apply_program(M, theta, x):
    """A custom_vjp function of a closure, made explicit with closure_convert so that the rule differentiates
    the closed-over theta too (JAX's documented use)."""
    @functools.partial(M.custom_vjp, nondiff_argnums=(0,))
    def apply(f, x, *consts):
        return f(x, *consts)

    def fwd(f, x, *consts):
        return f(x, *consts), (x, consts)

    def bwd(f, res, g):
        x, consts = res
        return M.vjp(f, x, *consts)[1](g)
    apply.defvjp(fwd, bwd)

    def g(v):
        return M.numpy.sin(v * theta) * theta
    converted, consts = M.closure_convert(g, x)
    return M.numpy.sum(apply(converted, x, *consts) ** 2)


@pytest.mark.parametrize("how", ["grad", "jit"])
def test_closure_convert_against_jax(how):
    def run(M):
        loss = M.grad(functools.partial(_apply_program, M), argnums=(0, 1))
        return (M.jit(loss) if how == "jit" else loss)(np.array(0.7), X)
    close(run(tj), run(jax))
    theta = 0.7
    close(run(tj)[1], 2 * np.sin(X * theta) * theta * np.cos(X * theta) * theta ** 2)


@BOTH
def test_closure_convert_keeps_concrete_constants(M):
    c = np.array([1.0, 2.0, 3.0])
    converted, consts = M.closure_convert(lambda v: v * c, X)
    assert consts == [] and np.allclose(converted(Y), Y * c)
    found = []

    def f(theta):
        converted, consts = M.closure_convert(lambda v: v * theta, X)
        found.append(len(consts))
        return converted(Y, *consts)
    close(M.jit(f)(2.0), Y * 2.0)
    assert found == [1]


# ----------------------------------------------------------------------------------------- pure_callback

def _callback_program(M, calls):
    def host(a, scale):
        calls.append(np.shape(a))
        assert type(a) is np.ndarray or isinstance(a, jax.Array)
        return np.sin(np.asarray(a)) * scale

    def f(x):
        y = M.pure_callback(host, M.ShapeDtypeStruct(x.shape, x.dtype), x * 2.0, scale=np.float64(3.0))
        return y + 1.0
    return f


@pytest.mark.parametrize("how", ["eager", "jit", "jit_twice"])
def test_pure_callback_eager_and_jit(how):
    def run(M):
        calls = []
        f = _callback_program(M, calls)
        out = f(X) if how == "eager" else M.jit(f)(X)
        if how == "jit_twice":
            out = M.jit(f)(X + 1.0)
        return out, calls
    ours, theirs = run(tj), run(jax)
    close(ours[0], theirs[0])
    close(ours[0], np.sin(2 * (X + (how == "jit_twice"))) * 3.0 + 1.0)
    assert ours[1] == theirs[1]       # called once per call, never while tracing


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all"])
@pytest.mark.parametrize("jit", [False, True])
def test_pure_callback_vmap_against_jax(method, jit):
    xs = np.stack([X, 2 * X])

    def run(M):
        seen = []

        def host(a, b):
            seen.append((np.shape(a), np.shape(b)))
            return np.sin(np.asarray(a)) + np.reshape(b, np.shape(b) + (1,) * (np.ndim(a) - np.ndim(b)))

        def f(x, b):
            return M.pure_callback(host, M.ShapeDtypeStruct(x.shape, x.dtype), x, b, vmap_method=method)
        g = M.vmap(f, in_axes=(0, None))
        return (M.jit(g) if jit else g)(xs, 0.5), seen
    ours, theirs = run(tj), run(jax)
    close(ours[0], theirs[0])
    assert ours[1] == theirs[1]


def test_pure_callback_vmap_of_axis_1_and_nested():
    def run(M):
        def f(x):
            return M.pure_callback(lambda a: np.cumsum(a, axis=-1), M.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="sequential")
        xs = np.arange(24.0).reshape(2, 3, 4)
        return M.vmap(f, in_axes=1)(xs), M.vmap(M.vmap(f))(xs), M.jit(M.vmap(M.vmap(f), in_axes=2))(xs)
    close(run(tj), run(jax))


@BOTH
def test_pure_callback_refusals(M):
    spec = M.ShapeDtypeStruct((3,), np.float64)
    with pytest.raises(NotImplementedError):
        M.vmap(lambda v: M.pure_callback(np.sin, spec, v))(np.ones((2, 3)))
    with pytest.raises(ValueError, match="do not support JVP"):
        M.grad(lambda v: M.numpy.sum(M.pure_callback(np.sin, spec, v)))(X)
    with pytest.raises(RuntimeError, match="shape"):
        M.jit(lambda v: M.pure_callback(lambda a: np.asarray(a)[:2], spec, v))(X)
    with pytest.raises(RuntimeError, match="dtype"):
        M.jit(lambda v: M.pure_callback(lambda a: np.asarray(a, np.float32), spec, v))(X)
    with pytest.raises(ValueError):
        M.pure_callback(np.sin, spec, X, vmap_method="bogus")


@BOTH
def test_pure_callback_trees_loops_and_custom_jvp(M):
    specs = {"s": M.ShapeDtypeStruct((), np.float64), "p": (M.ShapeDtypeStruct((3,), np.float64),)}

    def host(a):
        a = np.asarray(a)
        return {"s": a.sum(), "p": (a * 2,)}
    out = M.jit(lambda v: M.pure_callback(host, specs, v))(X)
    assert set(out) == {"s", "p"} and np.isclose(out["s"], X.sum()) and np.allclose(out["p"][0], 2 * X)

    def loop(v):
        return M.lax.fori_loop(0, 3, lambda i, c: M.pure_callback(np.cos, M.ShapeDtypeStruct((3,), np.float64), c), v)
    close(M.jit(loop)(X), np.cos(np.cos(np.cos(X))))

    @M.custom_jvp
    def host_sin(x):
        return M.pure_callback(np.sin, M.ShapeDtypeStruct(x.shape, x.dtype), x)
    host_sin.defjvp(lambda p, t: (host_sin(p[0]), M.numpy.cos(p[0]) * t[0]))
    close(M.jit(M.grad(lambda x: M.numpy.sum(host_sin(x))))(X), np.cos(X))


def test_pure_callback_is_pure_for_the_passes():
    calls = []

    def host(a):
        calls.append(1)
        return np.asarray(a) * 2

    def f(x):
        tj.pure_callback(host, tj.ShapeDtypeStruct((3,), np.float64), x)   # unused: removed, as JAX may
        return x + 1.0
    tj.jit(f)(X)
    assert calls == []
    text = str(tj.make_ir(lambda x: tj.pure_callback(host, tj.ShapeDtypeStruct((3,), np.float64), x))(X))
    assert "pure_callback[" in text and "callback=host" in text


def test_new_names_are_jax_names():
    names = ["scipy", "Array", "typing", "dtypes", "errors", "device_get", "disable_jit", "ensure_compile_time_eval",
             "named_call", "named_scope", "custom_gradient", "linear_transpose", "closure_convert", "pure_callback",
             "process_index", "process_count", "host_id", "host_count", "print_environment_info", "typeof", "float0",
             "debug_nans", "log_compiles"]
    assert [n for n in names if not hasattr(jax, n)] == [] and [n for n in names if n not in dir(tj)] == []


# ------------------------------------------------------------------------------------------------ flatten_util

def _ravel(M):
    import jax.flatten_util  # noqa: F401 -- (jax's submodule, imported on demand)
    return M.flatten_util.ravel_pytree


@BOTH
def test_ravel_pytree_round_trips_as_jax(M):
    """Leaves raveled in tree order into one array of their dtype, and back; mixed float dtypes promote and come
    back each in its own dtype (the promoted dtype only is accepted back); no leaves is an empty float32 array."""
    ravel = _ravel(M)
    tree = {"w": np.arange(6.0).reshape(2, 3), "b": (X, np.float64(2.5))}
    flat, unravel = ravel(tree)
    np.testing.assert_array_equal(flat, np.concatenate([X, [2.5], np.arange(6.0)]))
    close(unravel(flat), tree)
    close(unravel(np.asarray(flat) * 2), {"w": tree["w"] * 2, "b": (X * 2, 5.0)})
    mixed = {"a": X.astype(np.float32), "b": Y}
    flat, unravel = ravel(mixed)
    assert flat.dtype == np.float64
    back = unravel(flat)
    assert back["a"].dtype == np.float32 and back["b"].dtype == np.float64
    np.testing.assert_array_equal(back["a"], mixed["a"])
    with pytest.raises(TypeError, match="dtype"):
        unravel(np.asarray(flat, np.float32))
    empty, unravel = ravel({})
    assert empty.shape == (0,) and empty.dtype == np.float32 and unravel(empty) == {}


def test_ravel_pytree_under_jit_and_grad_against_jax():
    """ravel_pytree traced under jit, and a loss of the unraveled parameters differentiated with respect to the
    flat vector (as an optimizer over raveled parameters does): JAX's values and gradient."""
    params = {"w": np.arange(6.0).reshape(2, 3) / 7, "b": Y}
    outs = []
    for M, np_ in ((tj, tnp), (jax, jax.numpy)):
        flat, unravel = _ravel(M)(params)
        loss = lambda v, np_=np_, unravel=unravel: np_.sum(np_.tanh(unravel(v)["w"] @ unravel(v)["b"][:3]) ** 2)
        outs.append((M.jit(lambda p, M=M: _ravel(M)(p)[0])(params), M.grad(loss)(flat), M.jit(M.grad(loss))(flat)))
    close(outs[0], outs[1])


def test_ravel_pytree_unravel_names_the_shape_it_expected():
    _, unravel = tj.flatten_util.ravel_pytree({"a": X, "b": Y})
    with pytest.raises(ValueError, match=r"expected an array of shape \(6,\), got shape \(5,\)"):
        unravel(np.zeros(5))


def test_shape_dtype_structs_print_as_jax():
    """eval_shape's results are ShapeDtypeStructs printed as JAX prints them, equal to the avals they stand for."""
    jax = pytest.importorskip("jax")
    out = tj.eval_shape(lambda x: (x @ x.T, x.sum() * 2.0), tj.ShapeDtypeStruct((3, 4), np.float32))
    theirs = jax.eval_shape(lambda x: (x @ x.T, x.sum() * 2.0), jax.ShapeDtypeStruct((3, 4), np.float32))
    assert repr(out) == repr(theirs)
    assert repr(tj.ShapeDtypeStruct((), np.int32, weak_type=True)) == repr(
        jax.ShapeDtypeStruct((), np.int32, weak_type=True))
    assert out[0] == tj.core.avals.ShapedArray((3, 3), np.float32)


def test_jax_only_options_are_accepted():
    """JAX code passes jit's donation and inlining options, backend="cpu" and fori_loop's unroll: accepted (no
    donation here: results never alias inputs), and a bad donate_argnums still says what it got."""
    x = np.ones(3)
    step = tj.jit(lambda p, g: p - 0.1 * g, donate_argnums=(0,), donate_argnames=("p",), inline=True,
                  keep_unused=True, backend="cpu")
    np.testing.assert_array_equal(step(x, x), x * 0.9)
    np.testing.assert_array_equal(x, np.ones(3))        # the donated input is left as it was
    assert tj.lax.fori_loop(0, 4, lambda i, c: c + i, 0, unroll=2) == 6
    with pytest.raises(TypeError, match="donate_argnums"):
        tj.jit(lambda a: a, donate_argnums=1.5)


def test_jax_settings_and_pytree_stop_gradient():
    """JAX programs start with jax.config.update("jax_enable_x64", True): accepted (tracejit computes as JAX with
    x64), JAX's names of tracejit's settings set them, values asking for what tracejit does not do warn; and
    lax.stop_gradient maps over a pytree, as JAX's."""
    tj.config.update("jax_enable_x64", True)
    tj.config.update("jax_platform_name", "cpu")
    assert tj.config.jax_enable_x64 is True
    tj.config.update("jax_debug_nans", True)
    try:
        assert tj.config.debug_nans is True and tj.config.jax_debug_nans is True
    finally:
        tj.config.update("debug_nans", False)
    with pytest.warns(UserWarning, match="jax_enable_x64=False is not supported"):
        tj.config.update("jax_enable_x64", False)
    with pytest.raises(AttributeError, match="no setting 'jax_nonsense'"):
        tj.config.update("jax_nonsense", 1)
    p = {"a": np.full(2, 3.0), "b": (1.0, None)}
    stopped = tj.lax.stop_gradient(p)
    assert stopped["b"][1] is None and float(stopped["b"][0]) == 1.0
    np.testing.assert_array_equal(tj.grad(lambda p: (tj.lax.stop_gradient(p)["a"] * p["a"]).sum())(p)["a"], [3, 3])


def test_live_arrays_lists_the_arrays_the_runtime_holds():
    """JAX lists its live device buffers; tracejit's results are numpy arrays it does not hold, so none."""
    y = tj.jit(lambda v: v * 2.0)(np.arange(3.0))
    assert tj.live_arrays() == [] and tj.live_arrays("cpu") == [] and y.sum() == 6.0
    with pytest.raises(RuntimeError, match="backend 'gpu' is not available"):
        tj.live_arrays("gpu")
