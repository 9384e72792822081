"""Optimisation passes: each preserves semantics (vs eval_ir of the unoptimised IR, bit for bit), is
idempotent, keeps the IR well typed; golden texts of simplified programs; random programs (hypothesis)."""
import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.core.avals import ShapedArray
from tracejit.core.ir import IR, ClosedIR, Eqn, Var, check_ir
from tracejit.core.trace import Primitive, eval_ir, trace_flat
from tracejit.passes import MAX_FOLD_ELEMENTS, cse, dce, fold, inline, optimize, simplify

PASSES = {"dce": dce, "cse": cse, "fold": fold, "simplify": simplify, "inline": inline, "optimize": optimize}
RNG = np.random.default_rng(0)
F32 = np.float32
C3 = np.array([1.0, 2.0, 3.0], F32)


def ir_of(f, *args):
    return tj.make_ir(f)(*args)


def random_inputs(closed, rng, special=False):
    out = []
    for aval in closed.in_avals:
        if aval.dtype.kind == "f":
            x = rng.standard_normal(aval.shape).astype(aval.dtype)
            if special and x.size >= 4:
                x.reshape(-1)[:4] = [-0.0, np.nan, np.inf, -np.inf]
        elif aval.dtype.kind == "b":
            x = rng.random(aval.shape) < 0.5
        else:
            x = rng.integers(-5, 6, aval.shape).astype(aval.dtype)
        out.append(x)
    return out


def assert_same_results(before, after, args):
    with np.errstate(all="ignore"):
        want, got = eval_ir(before, *args), eval_ir(after, *args)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert np.shape(w) == np.shape(g) and np.asarray(w).dtype == np.asarray(g).dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def check_passes(closed, rng, special=False):
    """Every pass: well typed, same results, idempotent; the pipeline is deterministic."""
    args = random_inputs(closed, rng, special)
    for name, run in PASSES.items():
        once = run(closed)
        check_ir(once)
        assert_same_results(closed, once, args)
        assert run(once) is once, f"{name} is not idempotent (or rebuilt an IR it did not change)"
        assert once.in_avals == closed.in_avals and [a.shape for a in once.out_avals] == [
            a.shape for a in closed.out_avals]
    optimized = optimize(closed)
    assert len(optimized.eqns) <= len(closed.eqns)
    return optimized


# ------------------------------------------------------------------------------------------- the suite

def _x(*shape, dtype=F32):
    return np.linspace(-1.5, 2.0, int(np.prod(shape))).astype(dtype).reshape(shape)


def _control_flow(x):
    lax = tj.lax
    y = lax.cond(tnp.sum(x) > 0, lambda v: (v * 1.0, tnp.sin(v))[0], lambda v: tnp.negative(-v) * tnp.ones(3, F32), x)
    c, ys = lax.scan(lambda c, xi: (c + xi * 1.0, (tnp.exp(xi), c * 0.0 + c * 0.0)[1]), 0.0 * x[0], x)
    w = lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 1.0 + tnp.cos(s[1]) * 0.5), (0, x))
    return y, c, ys, w[1]


SUITE = {
    "control_flow": (_control_flow, (_x(3),)),
    "identities": (lambda x: (x * 1.0 + -0.0 - 0.0) / 1.0, (_x(3),)),
    "mul_broadcast_one": (lambda x: x * tnp.ones(3, F32) - tnp.zeros(3, F32), (_x(3),)),
    "plus_zero_stays": (lambda x: (x + 0.0, x - -0.0, x + tnp.zeros(3, F32)), (_x(3),)),   # -0.0 + 0.0 is 0.0
    "neg_neg_pow1": (lambda x: tnp.negative(-x) + x ** 1, (_x(3),)),
    "pow0": (lambda x, s: (x ** 0 * 3.0 + x, s ** 0), (_x(3), F32(np.nan))),
    "reshapes": (lambda x: x.reshape(6).reshape(3, 2).reshape(2, 3) * 2.0, (_x(2, 3),)),
    "transposes": (lambda x: tnp.transpose(tnp.transpose(x, (1, 2, 0)), (2, 0, 1)) + x.T.T, (_x(2, 3, 4),)),
    "conversions": (lambda x: x.astype(np.float64).astype(F32) + x.astype(F32), (_x(3),)),
    "int_round_trip": (lambda i: i.astype(np.float64).astype(np.int32) * 3, (np.arange(5, dtype=np.int32),)),
    "cse": (lambda x, y: tnp.sin(x) * y + y * tnp.sin(x), (_x(3), _x(3))),
    "dead_code": (lambda x: (tnp.exp(x), tnp.sum(x) * 2.0)[0], (_x(4),)),
    "constant_arrays": (lambda x: x + tnp.sum(C3 * 2.0) + C3 * C3, (_x(3),)),
    "uniform_constant": (lambda x: x * np.full(3, 1.0, F32) + np.full(3, 2.0, F32), (_x(3),)),
    "ieee": (lambda x: (x * 0.0, x - x, x * tnp.zeros(3, F32)), (_x(3),)),
    "scalar_minus_shaped_zero": (lambda s: s - tnp.zeros(3, F32), (F32(2.0),)),
    "bool_and_int": (lambda b, i: ((b & True) | False, (i + 0) * 1 - 0, ~~i), (np.array([True, False]),
                                                                             np.arange(2, dtype=np.int64))),
    "idempotent": (lambda x: tnp.abs(tnp.abs(x)) + tnp.maximum(x, x), (_x(3),)),
    "broadcasts": (lambda x: tnp.broadcast_to(tnp.broadcast_to(x, (2, 3)), (4, 2, 3)) * 3.0, (_x(3),)),
    "where_const": (lambda x: tnp.where(x > 0, tnp.zeros(3, F32), tnp.ones(3, F32) * 2.0), (_x(3),)),
    "matmul": (lambda w, x: tnp.tanh(x @ w) @ w.T, (_x(4, 4), _x(2, 4))),
    "reductions": (lambda x: tnp.mean(x, axis=0) + tnp.max(x, axis=1).sum(), (_x(3, 4),)),
    "sum_of_zeros": (lambda x: x + (tnp.zeros(3, F32) + tnp.zeros(3, F32)) * x, (_x(3),)),
}


@pytest.mark.parametrize("name", sorted(SUITE))
def test_suite_programs(name):
    f, args = SUITE[name]
    closed = ir_of(f, *args)
    optimized = check_passes(closed, np.random.default_rng(1), special=True)
    assert len(optimized.eqns) <= len(closed.eqns)
    np.testing.assert_array_equal(np.asarray(eval_ir(optimized, *args)[0]), np.asarray(eval_ir(closed, *args)[0]))


@pytest.mark.parametrize("which", ["grad", "value_and_grad", "hessian", "vmap_grad"])
def test_transformed_programs(which):
    def loss(w, x):
        return tnp.mean(tnp.tanh(x @ w) ** 2)
    needed = {"vmap_grad": ("vmap", "grad")}.get(which, (which,))
    if not all(hasattr(tj, name) for name in needed):
        pytest.skip(f"tj.{' / tj.'.join(needed)} not available yet")
    w, x = _x(3, 2), _x(4, 3)
    f = {"grad": lambda: tj.grad(loss), "value_and_grad": lambda: tj.value_and_grad(loss),
         "hessian": lambda: tj.hessian(lambda v: tnp.sum(tnp.sin(v) ** 3)),
         "vmap_grad": lambda: tj.vmap(tj.grad(loss), in_axes=(None, 0))}[which]()
    args = {"hessian": (_x(3),), "vmap_grad": (w, x[:, None, :])}.get(which, (w, x))
    closed = ir_of(f, *args)
    optimized = check_passes(closed, np.random.default_rng(2))
    assert len(optimized.eqns) < len(closed.eqns)


# ---------------------------------------------------------------------------------------- golden texts

GOLDEN = {
    "pow0": """\
{ lambda ; a:f32[3] b:f32[]. let
    c:f32[3] = add 3.0:f32[] a
  in (c, 1.0:f32[]) }""",
    "identities": """\
{ lambda ; a:f32[3]. let
  in (a,) }""",
    "plus_zero_stays": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = add a 0.0:f32[]
    c:f32[3] = sub a -0.0:f32[]
  in (b, c, b) }""",
    "mul_broadcast_one": """\
{ lambda ; a:f32[3]. let
  in (a,) }""",
    "reshapes": """\
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = mul a 2.0:f32[]
  in (b,) }""",
    "transposes": """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[2,3,4] = add a a
  in (b,) }""",
    "cse": """\
{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = sin a
    d:f32[3] = mul c b
    e:f32[3] = add d d
  in (e,) }""",
    "constant_arrays": """\
{ lambda a:f32[3] ; b:f32[3]. let
    c:f32[3] = add b 12.0:f32[]
    d:f32[3] = add c a
  in (d,) }""",
    "ieee": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = mul a 0.0:f32[]
    c:f32[3] = sub a a
  in (b, c, b) }""",
    "scalar_minus_shaped_zero": """\
{ lambda ; a:f32[]. let
    b:f32[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] a
  in (b,) }""",
    "broadcasts": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = mul a 3.0:f32[]
    c:f32[4,2,3] = broadcast_in_dim[broadcast_dimensions=(2,) shape=(4, 2, 3)] b
  in (c,) }""",
    "where_const": """\
{ lambda ; a:f32[3]. let
    b:bool[3] = gt a 0.0:f32[]
    c:f32[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] 0.0:f32[]
    d:f32[3] = select_n b 2.0:f32[] c
  in (d,) }""",
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden(name):
    f, args = SUITE[name]
    assert str(tj.make_ir(f, optimize=True)(*args)) == GOLDEN[name]


def test_grad_golden():
    if not hasattr(tj, "grad"):
        pytest.skip("tj.grad is not available yet")
    text = str(tj.make_ir(tj.grad(lambda x: tnp.sum(tnp.tanh(x) ** 2)), optimize=True)(_x(3)))
    assert text == """\
{ lambda ; a:f32[3]. let
    b:f32[3] = tanh a
    c:f32[3] = mul b b
    d:f32[3] = sub 1.0:f32[] c
    e:f32[3] = mul 2.0:f32[] b
    f:f32[3] = mul e d
  in (f,) }"""


def test_stable_text():
    f, args = SUITE["matmul"]
    texts = {str(tj.make_ir(f, optimize=True)(*args)) for _ in range(3)}
    assert len(texts) == 1


# ------------------------------------------------------------------------------------ individual passes

def test_cse_commutative_and_literals():
    closed = ir_of(lambda x, y: (x * y + y * x, x + 1.0, x + 1.0, x + 0.5, x + -0.0, x + 0.0), _x(3), _x(3))
    text = str(cse(dce(closed)))
    assert text.count("mul") == 1 and text.count("add a 1.0") == 1 and "add a -0.0" in text
    assert_same_results(closed, cse(closed), [_x(3), _x(3)])


def test_fold_scalars_to_literals_and_arrays_to_consts():
    closed = ir_of(lambda x: x * tnp.sum(C3) + C3 * 2.0, _x(3))
    folded = dce(simplify(fold(closed)))
    assert [e.prim.name for e in folded.eqns] == ["mul", "add"]
    np.testing.assert_array_equal(folded.consts[0], C3 * 2.0)
    assert "6.0:f32[]" in str(folded)


def test_fold_size_cap():
    big = np.arange(MAX_FOLD_ELEMENTS + 1, dtype=np.float64)
    closed = ir_of(lambda x: x + tnp.sum(tnp.multiply(big, 2.0)), 1.0)
    assert len(fold(closed).eqns) == len(closed.eqns)
    small = big[:1000]
    assert [e.prim.name for e in dce(fold(ir_of(lambda x: x + tnp.sum(tnp.multiply(small, 2.0)), 1.0))).eqns] == [
        "add"]


def test_fold_leaves_broadcasts_of_literals_and_iotas():
    closed = ir_of(lambda x: x + tnp.arange(3.0) + tnp.ones(3), np.zeros(3))
    assert str(fold(closed)) == str(closed)


def test_fold_skips_tracer_constants():
    seen = {}

    def outer(x):
        inner = trace_flat(lambda y: [y + x * 2.0 + C3 * 2.0], [ShapedArray((3,), F32)])
        seen["folded"] = fold(inner)
        return eval_ir(seen["folded"], x)[0]

    assert_same_results(ir_of(outer, _x(3)), ir_of(lambda x: x + x * 2.0 + C3 * 2.0, _x(3)), [_x(3)])
    names = [e.prim.name for e in dce(seen["folded"]).eqns]
    assert names == ["mul", "add", "add"]   # x * 2.0 stays (x is a tracer), C3 * 2.0 is folded


def test_simplify_keeps_ieee():
    closed = ir_of(lambda x: (x * 0.0, x - x, x / x, 0.0 * x), _x(3))
    assert [e.prim.name for e in simplify(closed).eqns] == ["mul", "sub", "div", "mul"]


def test_signed_zeros_survive_simplification():
    """-0.0 + 0.0 is +0.0 (XLA's simplifier drops x + 0.0 and returns -0.0); x + -0.0 and x - 0.0 are x."""
    x = np.array([-0.0, 1.0], F32)
    f = lambda x: (x + 0.0, tnp.zeros(2, F32) + x, x - -0.0, x + -0.0, x - 0.0)
    closed = ir_of(f, x)
    for got, want in zip(eval_ir(optimize(closed), x), f(x)):
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert [e.prim.name for e in optimize(closed).eqns] == ["add", "sub"]


def test_integer_pow_and_conversion():
    closed = ir_of(lambda x: (x ** 1, tnp.square(x).astype(F32), x.astype(np.float64).astype(F32)), _x(3))
    simplified = dce(simplify(closed))
    assert [e.prim.name for e in simplified.eqns] == ["integer_pow"]
    lossy = ir_of(lambda x: x.astype(np.int32).astype(F32), _x(3))
    assert len(dce(simplify(lossy)).eqns) == 2


# ------------------------------------------------------------------------------ sub-IRs and effects

def _call_shape(*avals, body):
    return body.out_avals


call_p = Primitive("test_call", _call_shape, lambda *args, body: eval_ir(body, *args), multiple_results=True)
effect_p = Primitive("test_effect", lambda x: x, lambda x: x, effectful=True)


def _body():
    return ir_of(lambda x: (tnp.sin(x) * 1.0, tnp.exp(x), tnp.cos(x) + tnp.cos(x))[::2], _x(3))


def _outer(body, use_both):
    x = Var(ShapedArray((3,), F32))
    y, z = Var(ShapedArray((3,), F32)), Var(ShapedArray((3,), F32))
    dead = Var(ShapedArray((3,), F32))
    eqns = [Eqn(call_p, [x], {"body": body}, [y, z]), Eqn(effect_p, [x], {}, [dead])]
    return ClosedIR(IR([], [x], eqns, [y, z] if use_both else [y]), [])


def test_dce_inside_sub_irs_and_multiple_outputs():
    body = _body()
    assert "exp" in str(body)
    closed = _outer(body, use_both=False)
    check_ir(closed)
    cleaned = dce(closed)
    check_ir(cleaned)
    sub = cleaned.eqns[0].params["body"]
    assert [e.prim.name for e in sub.eqns] == ["sin", "mul", "cos", "cos", "add"]
    assert [e.prim.name for e in cleaned.eqns] == ["test_call", "test_effect"]   # effects stay
    text = str(cleaned)
    assert "b:f32[3] _:f32[3] = test_call" in text and "_:f32[3] = test_effect" in text
    assert_same_results(closed, cleaned, [_x(3)])
    optimized = optimize(_outer(_body(), use_both=True))
    check_ir(optimized)
    assert [e.prim.name for e in optimized.eqns[0].params["body"].eqns] == ["sin", "cos", "add"]
    assert str(dce(cleaned)) == str(cleaned)


# ------------------------------------------------------------------------------------ random programs

SHAPE = (2, 3)
CONSTANTS = [0.0, 1.0, -0.0, 2.0, "zeros", "ones", "array", "uniform"]


def _constant(kind):
    if kind == "zeros":
        return tnp.zeros(SHAPE, F32)
    if kind == "ones":
        return tnp.ones(SHAPE, F32)
    if kind == "array":
        return np.arange(6, dtype=F32).reshape(SHAPE) - 2.5
    if kind == "uniform":
        return np.full(SHAPE, 1.0, F32)
    return F32(kind)


UNARY = [tnp.negative, tnp.sin, tnp.tanh, tnp.abs, tnp.square, lambda v: v ** 1,
         lambda v: v.reshape(-1).reshape(SHAPE), lambda v: v.T.T, lambda v: v.astype(np.float64).astype(F32),
         lambda v: tnp.broadcast_to(tnp.sum(v, axis=0), SHAPE), lambda v: tnp.transpose(v) .reshape(SHAPE)]
BINARY = [tnp.add, tnp.subtract, tnp.multiply, tnp.maximum, lambda a, b: tnp.where(a > b, a, b)]

step = st.one_of(
    st.tuples(st.just("unary"), st.integers(0, len(UNARY) - 1), st.integers(0, 99)),
    st.tuples(st.just("binary"), st.integers(0, len(BINARY) - 1), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("const"), st.integers(0, len(BINARY) - 1), st.integers(0, 99),
              st.sampled_from(CONSTANTS), st.booleans()),
)


def _program(steps, outputs):
    def f(x, y):
        values = [x, y]
        for s in steps:
            pick = values[s[2] % len(values)]
            if s[0] == "unary":
                values.append(UNARY[s[1]](pick))
            elif s[0] == "binary":
                values.append(BINARY[s[1]](pick, values[s[3] % len(values)]))
            else:
                c = _constant(s[3])
                values.append(BINARY[s[1]](c, pick) if s[4] else BINARY[s[1]](pick, c))
        return [values[i % len(values)] for i in outputs]
    return f


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, min_size=1, max_size=12), st.lists(st.integers(0, 99), min_size=1, max_size=3),
       st.integers(0, 2**31))
def test_random_programs(steps, outputs, seed):
    closed = ir_of(_program(steps, outputs), np.zeros(SHAPE, F32), np.zeros(SHAPE, F32))
    optimized = check_passes(closed, np.random.default_rng(seed), special=True)
    assert str(optimize(optimized)) == str(optimized)


def test_dce_prunes_unused_scan_ys_and_cond_results():
    from tracejit import lax
    from tracejit.passes import dce

    def scan_program(w, xs):
        def step(h, x):
            h = tnp.tanh(h * w + x)
            return h, (h * 2, tnp.exp(x))
        h, (doubled, _) = lax.scan(step, 0.0, xs)
        return h + doubled.sum()

    def cond_program(x, p):
        return lax.cond(p, lambda x: (x * 2, tnp.sin(x)), lambda x: (x + 1, tnp.cos(x)), x)[0]

    for program, args in [(scan_program, (0.5, np.linspace(0, 1, 5))), (cond_program, (1.0, True)),
                          (cond_program, (1.0, False))]:
        closed = tj.make_ir(program)(*args)
        pruned = dce(closed)
        tj.check_ir(pruned)
        np.testing.assert_allclose(tj.eval_ir(pruned, *args)[0], tj.eval_ir(closed, *args)[0])
        text = str(pruned)
        assert "exp" not in text and "sin" not in text and "cos" not in text
        assert str(dce(pruned)) == text


def test_unchanged_ir_is_returned_itself():
    """Passes return their input when they change nothing: optimize detects its fixed point by identity."""
    closed = ir_of(lambda x, y: tnp.tanh(x * y) - tnp.sum(x), _x(3), _x(3))
    for run in PASSES.values():
        assert run(closed) is closed
    changed = ir_of(lambda x: x * 1.0 - 0.0, _x(3))
    once = optimize(changed)
    assert once is not changed and not once.eqns and optimize(once) is once


@tj.custom_jvp
def _clipped_log(x):
    return tnp.log(tnp.maximum(x, 1e-3)) * 2.0


_clipped_log.defjvp(lambda primals, tangents: (_clipped_log(primals[0]), tangents[0] / primals[0]))


@tj.custom_vjp
def _scaled(x, s):
    return x * s


_scaled.defvjp(lambda x, s: (x * s, (x, s)), lambda res, ct: (ct * res[1] * 10.0, tnp.sum(ct * res[0])))


def test_inline_replaces_custom_calls_by_their_bodies_also_in_sub_irs():
    """Compiled code needs no derivative rules: custom_jvp/custom_vjp calls (flag `inline`) become their
    bodies, renamed (twice the same function: no variable bound twice), so they fuse with their neighbours."""
    from tracejit import lax

    def f(x):
        y = _clipped_log(x) + _clipped_log(x * 3.0) + _scaled(x, 2.0)
        return lax.scan(lambda c, r: (c + _clipped_log(r), None), tnp.zeros((), F32), y)[0]

    closed = ir_of(f, _x(4) + 2.0)
    inlined = inline(closed)
    check_ir(inlined)
    assert "custom_" in str(closed) and "custom_" not in str(inlined)
    assert str(inlined).count(" log ") == 3
    assert_same_results(closed, inlined, [_x(4) + 2.0])
    assert inline(inlined) is inlined
    # the rules still give the derivatives (the bodies' own would be 4/x + 1), also under jit
    x = np.array([1.0, 2.0, 4.0])
    g = tj.grad(lambda x: tnp.sum(_clipped_log(x) + _clipped_log(x * 3.0) + _scaled(x, 1.0)))
    np.testing.assert_allclose(tj.jit(g)(x), 2.0 / x + 10.0, rtol=1e-12)


def test_relu_has_jaxs_derivative_at_zero_and_compiles_to_a_max():
    x = np.array([-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(tj.jit(tj.vmap(tj.grad(tj.nn.relu)))(x), [0.0, 0.0, 1.0])
    text = tj.jit(lambda x: tj.nn.relu(x) * 2.0).lower(x).as_text()
    assert "max" in text and "custom" not in text


def test_transposed_matmul_operands_fold_into_dot_general():
    """a.T @ b becomes one dot_general that the BLAS runs with TransA (no transpose copy); a transpose the
    BLAS cannot read in place (one that moves a batch axis), or of integers, stays."""
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((6, 4)).astype(F32), rng.standard_normal((6, 5)).astype(F32)
    cases = [(lambda a, b: a.T @ b, (a, b), 0), (lambda a, b: (b.T @ a).T, (a, b), 1),
             (lambda a, b: tnp.swapaxes(a, 1, 2) @ b, (a.reshape(2, 3, 4), b.reshape(2, 3, 5)), 0),
             (lambda a, b: tnp.transpose(a, (1, 0, 2)) @ b, (a.reshape(3, 2, 4), rng.standard_normal((2, 4, 3)).astype(F32)), 1),
             (lambda a, b: a.T @ b, (a.astype(np.int32), b.astype(np.int32)), 1)]
    for f, args, transposes in cases:
        closed = ir_of(f, *args)
        optimized = optimize(closed)
        check_ir(optimized)
        assert str(optimized).count("transpose[") == transposes, str(optimized)
        assert_same_results(closed, optimized, list(args))
        np.testing.assert_allclose(tj.jit(f)(*args), f(*args), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_transposes_fold_into_loop_products_and_reductions(dtype):
    """A transposed operand of a product that becomes a loop (a.T @ v, v @ a.T) folds into its dimension numbers
    whatever the layout, and a reduction of a transpose reduces the operand over the matching axes while its kept
    axes stay in order (x.T.sum(1) is x.sum(0)), argmax and argmin included: the loops then read memory in order.
    A transpose beside broadcasts of smaller arrays moves down too: they take its inverse ((a.T - v).sum(1) is
    (a - v[:, None]).sum(0)), the operand of a broadcast that keeps its axes in another order transposed.
    A reduction whose kept axes the transpose reorders keeps it. (An int32 sum adds up in int64: a conversion
    stands between the transpose and the sum, so the integer cases reduce with max.)"""
    from tracejit.primitives.linalg import MATVEC_LOOP
    rng = np.random.default_rng(7)

    def sample(*shape):
        return (rng.integers(-4, 5, shape) if dtype == np.int32 else rng.standard_normal(shape)).astype(dtype)

    def total(x, axis=None):
        return x.max(axis) if dtype == np.int32 else x.sum(axis)

    n = int(MATVEC_LOOP ** 0.5)
    a, v, c, b = sample(n, n), sample(n), sample(4, 5, 6), sample(4, 5)
    folded = [(lambda a, v: a.T @ v, (a, v)), (lambda a, v: v @ a.T, (a, v)),
              (lambda a, v: tnp.einsum("ji,j->i", a.T, v), (a, v)),
              (lambda a: total(a.T, 1), (a,)), (lambda a: a.T.max(0), (a,)), (lambda a: total(a.T), (a,)),
              (lambda a: tnp.argmax(a.T, axis=1), (a,)), (lambda a: tnp.argmin(a.T, axis=0), (a,)),
              (lambda c: tnp.transpose(c, (2, 0, 1)).min(0), (c,)), (lambda c: total(tnp.transpose(c, (1, 2, 0)), (0, 2)), (c,)),
              (lambda a, v: total(a.T - v, 1), (a, v)), (lambda a, v: (a.T * v[:, None] + 1).max(0), (a, v)),
              (lambda c, b: total(tnp.transpose(c, (2, 0, 1)) + b, 0), (c, b)),
              (lambda c, b: (tnp.transpose(c, (1, 2, 0)) * b.T[:, None, :]).max((0, 2)), (c, b))]
    kept = [(lambda c: total(tnp.transpose(c, (1, 2, 0)), 1), (c,)), (lambda c: tnp.argmax(tnp.transpose(c, (2, 0, 1)), 1), (c,))]
    for f, args in folded + kept:
        closed = ir_of(f, *args)
        optimized = optimize(closed)
        check_ir(optimized)
        assert ("transpose[" not in str(optimized)) == ((f, args) in folded), str(optimized)
        want = np.asarray(f(*[np.asarray(x) for x in args]))
        np.testing.assert_allclose(eval_ir(optimized, *args)[0], want, rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(tj.jit(f)(*args), want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
def test_products_that_are_no_matrix_product_become_a_product_and_a_sum(dtype):
    """A dot_general with a side without free axes (a dot, einsum "ij,ij->i", a matrix times a vector from
    MATVEC_LOOP elements on, or of integers), or with no contracting axis (outer products), becomes a product and
    a sum: one loop nest, no BLAS call with m, n or k = 1. Batch axes anywhere and an output that needs its axes
    moved included. A small float matrix times a vector, and a matrix product, stay dot_generals (the BLAS)."""
    from tracejit.primitives.linalg import MATVEC_LOOP
    rng = np.random.default_rng(5)

    def sample(*shape):
        x = rng.integers(-4, 5, shape) if dtype == np.int32 else rng.standard_normal(shape)
        return (x + 1j * rng.standard_normal(shape) if dtype == np.complex64 else x).astype(dtype)

    n = int(MATVEC_LOOP ** 0.5)
    cases = [(lambda m, v: m @ v, (sample(n, n), sample(n))), (lambda v, m: v @ m, (sample(n), sample(n, n))),
             (lambda a, b: a @ b, (sample(7), sample(7))),
             (lambda a, b: tnp.einsum("ij,ij->i", a, b), (sample(3, 6), sample(3, 6))),
             (lambda a, b: tnp.einsum("bij,bj->bi", a, b), (sample(4, n // 2, n // 2), sample(4, n // 2))),
             (lambda a, b: tnp.einsum("jbi,bj->ib", a, b), (sample(n // 2, 4, n // 2), sample(4, n // 2))),  # moved
             (lambda a, b: tnp.einsum("ib,jb->bij", a, b), (sample(3, 2), sample(4, 2))),       # batched outer
             (lambda a, b: tj.lax.dot_general(a, b, (((), ()), ((), ()))), (sample(3), sample(2, 2)))]
    small = [(lambda m, v: m @ v, (sample(5, 4), sample(4))), (lambda a, b: a @ b, (sample(3, 4), sample(4, 2)))]
    for f, args in cases + small:
        closed = ir_of(f, *args)
        optimized = optimize(closed)
        check_ir(optimized)
        expanded = (f, args) in cases or dtype == np.int32 and args[1].ndim == 1
        assert ("dot_general" not in str(optimized)) == expanded, str(optimized)
        want = np.asarray(eval_ir(closed, *args)[0])
        np.testing.assert_allclose(eval_ir(optimized, *args)[0], want, rtol=1e-4, atol=1e-3)
        got = tj.jit(f)(*args)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_select_n_of_a_literal_predicate_is_its_case():
    x, y = np.arange(3.0), -np.arange(3.0)
    for pred, want in ((True, y), (False, x), (np.int32(1), y)):
        optimized = optimize(ir_of(lambda a, b, pred=pred: tj.lax.select_n(pred, a, b), x, y))
        assert "select_n" not in str(optimized), str(optimized)
        np.testing.assert_array_equal(eval_ir(optimized, x, y)[0], want)
    traced = optimize(ir_of(lambda p, a, b: tj.lax.select_n(p, a, b), np.array([True, False, True]), x, y))
    assert "select_n" in str(traced)


def test_a_transpose_moves_past_broadcasts_to_an_output():
    """op(x.T, broadcast(m)) is op(x, broadcast'(m)).T: the transpose reaches the output (returned as a view), the
    softmax over the rows of a Fortran-ordered input reduces its columns; a broadcast that would keep its operand's
    axes in another order broadcasts the operand's (small) transpose."""
    from tracejit.transposed_inputs import transposed_ir
    rng = np.random.default_rng(3)
    x, c, b = rng.standard_normal((6, 7)), rng.standard_normal((4, 5, 6)), rng.standard_normal((5, 4))

    def softmax(a):
        e = tnp.exp(a - a.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)
    variant = optimize(transposed_ir(ir_of(softmax, x), (0,)))
    check_ir(variant)
    assert [e.prim.name for e in variant.ir.eqns].count("transpose") == 1 == len(variant.ir.eqns) - 7, str(variant)
    assert variant.ir.eqns[-1].prim.name == "transpose" and variant.ir.eqns[-1].outvars == variant.ir.outvars
    np.testing.assert_allclose(eval_ir(variant, x.T)[0], softmax(np.asarray(x)), rtol=1e-12)
    f = lambda c, b: tnp.transpose(c, (2, 1, 0)) * b - 1.0
    optimized = optimize(ir_of(f, c, b))
    check_ir(optimized)
    moved = [e for e in optimized.ir.eqns if e.prim.name == "transpose"]
    assert [e.inputs[0] for e in moved] == [optimized.ir.invars[1], moved[1].inputs[0]], str(optimized)
    assert moved[1].outvars == optimized.ir.outvars
    np.testing.assert_array_equal(eval_ir(optimized, c, b)[0], f(c, b))
    np.testing.assert_array_equal(tj.jit(f)(c, b), f(c, b))
    np.testing.assert_array_equal(tj.jit(lambda x: tnp.tril(x.T) * 2)(x), np.tril(x.T) * 2)   # (iotas: no operands)


def test_a_slice_of_a_transpose_slices_first():
    """x.T[a:b, ::s] is transpose(slice(x)): the data moves on the slice's elements only. A Fortran-ordered
    input (its code takes the input's transpose) whose corner a reduction reads then reads only the corner."""
    x = np.arange(60.0).reshape(3, 4, 5)
    for f in (lambda a: a.T[1:3, ::2], lambda a: tnp.transpose(a, (1, 2, 0))[1:, 2:4, ::2] * 2.0,
              lambda a: a.T[0].sum()):
        optimized = optimize(ir_of(f, x))
        check_ir(optimized)
        first = optimized.ir.eqns[0]
        assert first.prim.name == "slice" and first.inputs[0] is optimized.ir.invars[0], str(optimized)
        np.testing.assert_array_equal(eval_ir(optimized, x)[0], f(x))
        np.testing.assert_array_equal(tj.jit(f)(x), f(x))
    assert "strides=None" in str(optimize(ir_of(lambda a: a.T[1:3], x)))
    from tracejit.transposed_inputs import transposed_ir
    big = np.asfortranarray(np.arange(2048 * 512, dtype=np.float32).reshape(2048, 512))
    corner = tj.jit(lambda a: a[:2, :3].sum())
    assert corner(big) == big[:2, :3].sum()
    variant = optimize(transposed_ir(corner.trace(big).jaxpr, (0,)))      # the code that call ran
    assert [e.prim.name for e in variant.ir.eqns] == ["slice", "reduce_sum"], str(variant)   # (the sum folds it)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_matrix_times_vector_calls_gemv(dtype):
    """An unbatched product of a float matrix of GEMV_FROM elements or more and a vector calls the BLAS's gemv on
    the matrix as stored (NoTrans or Trans: m @ v, v @ m, m.T @ v, v @ m.T), as NumPy does; batched products, and
    matrices between MATVEC_LOOP and GEMV_FROM elements, stay loops."""
    from tracejit.backend import blas
    from tracejit.primitives.linalg import GEMV_FROM, MATVEC_LOOP
    if blas.gemv_address(dtype) is None:
        pytest.skip("no CBLAS gemv next to numpy")
    rng = np.random.default_rng(11)
    n, rows = int(GEMV_FROM ** 0.5), int(GEMV_FROM ** 0.5) + 3
    m, v, w = (rng.standard_normal(s).astype(dtype) for s in ((rows, n), (n,), (rows,)))
    for f, args in [(lambda N, m, v: m @ v, (m, v)), (lambda N, m, w: w @ m, (m, w)), (lambda N, m, w: m.T @ w, (m, w)),
                    (lambda N, m, v: v @ m.T, (m, v)), (lambda N, m, v: N.tanh(m @ v + 1.0), (m, v))]:
        lowered = tj.jit(functools.partial(f, tnp)).lower(*args)
        assert "dot_general" in lowered.as_text() and "@tj_gemv_" in lowered.as_llvm()
        want = f(np, *[a.astype(np.float64) for a in args])
        tol = 1e-4 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(tj.jit(functools.partial(f, tnp))(*args), want, rtol=tol, atol=tol * 10)
    k = int(MATVEC_LOOP ** 0.5) + 8        # between the two: a loop
    assert "@tj_gemv_" not in tj.jit(lambda m, v: m @ v).lower(m[:k, :k], v[:k]).as_llvm()
    batched = tj.jit(lambda a, b: tnp.einsum("bij,bj->bi", a, b)).lower(np.stack([m, m]), np.stack([v, v]))
    assert "@tj_gemv_" not in batched.as_llvm()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.bool_])
def test_a_long_vector_is_searched_for_its_first_extremum_in_blocks(dtype):
    """A long argmax (the library's one-pass search, lane by lane) finds the first extremum: ties across blocks, an
    extremum or a NaN in the tail after the last whole block or in the last block, a constant vector; NumPy's
    answers."""
    ARG_BLOCK = 1024       # (the blocks of the search this replaced)
    rng = np.random.default_rng(8)
    for n in (4 * ARG_BLOCK, 4 * ARG_BLOCK + 1, 7 * ARG_BLOCK + 333):
        base = (rng.standard_normal(n) * 20).astype(dtype)
        cases = [base, np.full(n, base[0]), np.where(np.arange(n) > n // 3, base.max(), base)]
        for at in (n - 1, 4 * ARG_BLOCK - 1, ARG_BLOCK):
            top = base.copy()
            top[at] = True if dtype == np.bool_ else np.iinfo(dtype).max if dtype == np.int8 else base.max() + 1
            cases.append(top)
            if np.dtype(dtype).kind == "f":
                cases.append(np.where(np.arange(n) == at, np.nan, base).astype(dtype))
        for x in cases:
            for fn, ref in ((tnp.argmax, np.argmax), (tnp.argmin, np.argmin)):
                assert tj.jit(fn)(x) == ref(x), (n, fn)
    # (a new cache: after three sizes the shared one compiles argmax for a symbolic size, which searches as well)
    assert "argmax" in tj.jit(tnp.argmax, cache=False).lower(base).as_text()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.uint32, np.bool_])
def test_argmax_and_argmin_become_an_extremum_and_its_first_position(dtype):
    """NumPy's answers: the first of tied positions, the first NaN wherever a NaN is, -0.0 equal to 0.0, along
    every axis and over a symbolic one, with 32- and 64-bit positions; no argmax left for the scalar loop."""
    rng = np.random.default_rng(6)
    x = rng.integers(-2, 3, (5, 6, 7)).astype(dtype)     # many ties
    if dtype == np.bool_ or np.dtype(dtype).kind == "u":
        x = rng.integers(0, 2, (5, 6, 7)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[1, 2, 3] = x[4, 0, 0] = x[4, 0, 5] = np.nan
        x[0, 0, :2] = [-0.0, 0.0]
    for axis in (0, 1, 2, None):
        for fn, ref in ((tnp.argmax, np.argmax), (tnp.argmin, np.argmin)):
            def f(a, fn=fn, axis=axis):
                return fn(a, axis=axis)
            optimized = str(optimize(ir_of(f, x)))
            assert "argm" not in optimized, optimized
            np.testing.assert_array_equal(tj.jit(f)(x), ref(x, axis=axis))
    np.testing.assert_array_equal(tj.jit(lambda a: tj.lax.argmax(a, 2, np.int32))(x), np.argmax(x, 2))
    symbolic = tj.jit(lambda a: tnp.argmax(a, axis=1), dynamic_dims={"a": {1: "n"}})
    for n in (1, 6):
        np.testing.assert_array_equal(symbolic(x[:, :n]), np.argmax(x[:, :n], axis=1))
