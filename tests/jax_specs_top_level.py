"""How the differential suite (test_against_jax.py) calls JAX's top-level helpers that tracejit gained
(tracejit/compat.py, callback.py, derivative_tools.py): qualified name -> cases. tests/test_jax_top_level.py tests
them further (vmap methods, errors, disable_jit after compiling ...)."""
import functools

import numpy as np
from jax_oracle import Case

R = np.random.default_rng(20240603)


def r(*shape):
    return R.uniform(-3, 3, shape)


def _settings(M, state):
    """The setting's value inside `with state(True)` and after it."""
    with state(True):
        inside = state.value
    return inside, state.value


def _named_scope(M, scope, x):
    with scope("block"):
        return M.numpy.cos(x) * x


def _disabled(M, disable_jit, x):
    with disable_jit():
        return M.api.jit(lambda v: M.numpy.sin(v) * 2.0)(x)


def _compile_time(M, ensure_compile_time_eval, x):
    with ensure_compile_time_eval():
        y = M.numpy.arange(3.0) * 2.0
        return x * y + float(M.numpy.sum(y))


def _custom_gradient(M, custom_gradient, x, y):
    @custom_gradient
    def f(a, b):
        s = M.numpy.sin(a) * b
        return s, lambda g: (g * 3.0 * M.numpy.cos(a) * b, g * s * 2.0)
    return f(x, y), M.api.grad(lambda a, b: M.numpy.sum(f(a, b) ** 2), argnums=(0, 1))(x, y)


def _closure_convert(M, closure_convert, theta, x):
    @functools.partial(M.api.custom_vjp, nondiff_argnums=(0,))
    def apply(f, x, *consts):
        return f(x, *consts)
    apply.defvjp(lambda f, x, *consts: (f(x, *consts), (x, consts)),
                 lambda f, res, g: M.api.vjp(f, res[0], *res[1])[1](g))

    def loss(t, v):
        converted, consts = closure_convert(lambda u: M.numpy.sin(u * t) * t, v)
        return M.numpy.sum(apply(converted, v, *consts) ** 2)
    return loss(theta, x), M.api.grad(loss, argnums=(0, 1))(theta, x)


def _pure_callback(M, pure_callback, x):
    spec = M.api.ShapeDtypeStruct(x.shape, x.dtype)
    y = pure_callback(lambda a, scale: np.sin(np.asarray(a)) * scale, spec, x * 2.0, scale=np.float64(3.0))
    batched = M.api.vmap(lambda v: pure_callback(lambda a: np.cumsum(np.asarray(a)), spec, v,
                                                 vmap_method="sequential"))(M.numpy.stack([x, -x]))
    return y + 1.0, batched


def _pmap(M, pmap, w, x):
    """A data-parallel step shaped for one device, as JAX's spmd example shapes it for device_count()."""
    def step(w, x):
        g = M.api.grad(lambda w: M.numpy.sum(M.numpy.sin(x * w)))(w)
        return M.lax.pmean(g, "batch"), x - M.lax.pmax(x, "batch")
    return pmap(step, axis_name="batch", in_axes=(None, 0))(w, x[None])


def _typeof(M, typeof, x):
    return [(tuple(t.shape), str(t.dtype), bool(t.weak_type)) for t in (typeof(x), typeof(1.0), typeof(np.int32(2)))]


def _x64(M, enable_x64):
    with enable_x64(True):
        return str(M.numpy.arange(3.0).dtype), enable_x64.value


def _precision(M, state, x):
    with state("highest"):
        return M.numpy.dot(x, x.T)


def _rank_promotion(M, state, x, y):
    with state("allow"):
        return x + y


def _default_device(M, state, x):
    with state(M.api.devices()[0]):
        return M.numpy.sin(x) * 2.0


def _strict(M, state, x32, i32):
    """Strict promotion: same dtypes and weak scalars of the arrays' kind pass; int32 + float32, int32 + 2.5 and
    bool + 1 raise TypePromotionError (a ValueError); after the block, standard promotion again."""
    add, multiply = M.numpy.add, M.numpy.multiply
    with state("strict"):
        passed = (multiply(x32, 2), add(x32, x32), multiply(i32, 3))
        refused = []
        for attempt in (lambda: add(i32, x32), lambda: multiply(i32, 2.5), lambda: add(M.numpy.asarray([True]), 1),
                        lambda: M.numpy.concatenate([x32, i32])):
            try:
                attempt()
                refused.append("passed")
            except ValueError as e:
                refused.append(type(e).__name__)
    add(x32, i32)      # standard promotion again (its dtype is NumPy's float64 in tracejit, JAX's float32 in JAX)
    return passed, refused


SPECS = {
    "tracejit.enable_x64": lambda: [Case("arange", (), traceable=False, call=_x64)],
    "tracejit.default_matmul_precision": lambda: [Case("highest", (r(2, 3),), call=_precision)],
    "tracejit.numpy_rank_promotion": lambda: [Case("allow", (r(2, 3), r(3)), call=_rank_promotion)],
    "tracejit.default_device": lambda: [Case("cpu", (r(3),), call=_default_device)],
    "tracejit.numpy_dtype_promotion": lambda: [Case("strict", (r(3).astype(np.float32), np.arange(3, dtype=np.int32)),
                                                    traceable=False, derivatives=False, call=_strict)],
    "tracejit.effects_barrier": lambda: [Case("none", (), traceable=False)],
    "tracejit.debug_nans": lambda: [Case("context", (), traceable=False, call=_settings)],
    "tracejit.log_compiles": lambda: [Case("context", (), traceable=False, call=_settings)],
    "tracejit.device_get": lambda: [Case("tree", (r(3),), call=lambda M, get, x: get({"a": x * 2.0, "b": [M.numpy.sin(x)]}))],
    "tracejit.typeof": lambda: [Case("avals", (r(2, 3),), traceable=False, call=_typeof)],
    "tracejit.named_call": lambda: [Case("one", (r(3),), call=lambda M, nc, x: nc(lambda v: M.numpy.sin(v) * v,
                                                                                   name="f")(x))],
    "tracejit.named_scope": lambda: [Case("block", (r(3),), call=_named_scope)],
    "tracejit.disable_jit": lambda: [Case("jit_inside", (r(3),), traceable=False, call=_disabled)],
    "tracejit.ensure_compile_time_eval": lambda: [Case("constants", (r(3),), call=_compile_time)],
    "tracejit.custom_gradient": lambda: [Case("rule", (r(3), r(3)), call=_custom_gradient, derivatives=False)],
    "tracejit.linear_transpose": lambda: [Case("flip", (r(3), r(3)), call=lambda M, lt, x, c: lt(
        lambda v: v * 2.0 + M.numpy.flip(v), x)(c))],
    "tracejit.closure_convert": lambda: [Case("custom_vjp", (np.array(0.7), r(3)), call=_closure_convert,
                                              derivatives=False)],
    "tracejit.pure_callback": lambda: [Case("jit_vmap", (r(3),), call=_pure_callback, derivatives=False)],
    "tracejit.pmap": lambda: [Case("psum_grad", (r(3), r(3)), traceable=False, call=_pmap, derivatives=False)],
    "tracejit.process_index": lambda: [Case("one", (), traceable=False)],
    "tracejit.process_count": lambda: [Case("one", (), traceable=False)],
    "tracejit.host_id": lambda: [Case("one", (), traceable=False)],
    "tracejit.host_count": lambda: [Case("one", (), traceable=False)],
}

NOT_COMPARED = {
    "tracejit.Array": "isinstance(numpy array, jax.Array) is False in JAX, True in tracejit, whose arrays are numpy "
                      "arrays (tests/test_jax_top_level.py tests both sides)",
    "tracejit.print_environment_info": "versions of each library: text that differs by design",
}
