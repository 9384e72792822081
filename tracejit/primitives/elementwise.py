"""Elementwise primitives, one table row each: NumPy impl, accepted dtype kinds, derivative.

Operands share one dtype; their shapes are equal or rank 0 (a scalar literal broadcasts implicitly,
every other broadcast is an explicit broadcast_in_dim). Derivative rules are written with the same
primitives, so the transforms trace them into IR.
"""
import numpy as np

from ..backend.rules import Elementwise
from ..core.avals import ShapedArray, bool_
from ..core.errors import ShapeError
from ..core.ir import Literal
from ..core.trace import Primitive, bind
from .base import (
    UndefinedPrimal,
    Zero,
    aval,
    instantiate,
    linear_jvp,
    move_batch_axis,
    partials_jvp,
    scalar,
    unbroadcast,
    zero_jvp,
)

FLOAT, INT, BOOL = "f", "iu", "b"
NUMERIC = FLOAT + INT


def elementwise_shape(name, kinds, out_dtype=None):
    def rule(*avals, **params):
        dtypes = {a.dtype for a in avals}
        if len(dtypes) != 1:
            raise TypeError(f"{name}: operands must share one dtype, got "
                            f"{', '.join(a.str_short() for a in avals)}")
        dtype = dtypes.pop()
        if dtype.kind not in kinds:
            raise TypeError(f"{name}: does not accept {dtype} operands")
        shapes = {a.shape for a in avals if a.ndim}
        if len(shapes) > 1:
            raise ShapeError(f"{name}: operand shapes {' and '.join(str(s) for s in shapes)} differ "
                             "(broadcast them explicitly)")
        shape = shapes.pop() if shapes else ()
        return ShapedArray(shape, out_dtype or dtype, weak_type=all(a.weak_type for a in avals))
    return rule


def elementwise(name, impl, kinds=NUMERIC, out_dtype=None, **rules_and_flags):
    prim = Primitive(name, elementwise_shape(name, kinds, out_dtype), impl, elementwise=True, **rules_and_flags)
    return prim.set(batch=elementwise_batch(prim))


def elementwise_batch(prim, shaped_by=None):
    """Batching rule of an elementwise op. Batched operands meet at the batch axis of the first full-rank one
    (a lone batched operand is not moved); unbatched rank-0 operands stay as they are (they broadcast
    implicitly); other operands are broadcast to the batched shape. `shaped_by` (a slice) names the operands
    that give the output its shape when others may not (select_n's cases, clamp's operand): if all of them
    are scalars, the first is broadcast, so a batched predicate or bound meets an operand of its shape."""
    def batch(args, dims, **params):
        from .shapes import broadcast_in_dim_p
        avals = [aval(x) for x in args]
        size = next(a.shape[d] for a, d in zip(avals, dims) if d is not None)
        rank = max(a.ndim - (d is not None) for a, d in zip(avals, dims))
        out_dim = next((d for a, d in zip(avals, dims) if d is not None and a.ndim == rank + 1), 0)
        example = next(a.shape[:d] + a.shape[d + 1:] if d is not None else a.shape
                       for a, d in zip(avals, dims) if a.ndim - (d is not None) == rank)
        out_shape = example[:out_dim] + (size,) + example[out_dim:]

        def fit(x, a, d):
            if d is None and a.ndim == 0:
                return x
            if d is not None and a.ndim == 1 and rank:
                return bind(broadcast_in_dim_p, x, shape=out_shape, broadcast_dimensions=(out_dim,))
            return move_batch_axis(x, d, out_dim, size)

        fitted = [fit(x, a, d) for x, a, d in zip(args, avals, dims)]
        positions = range(len(args))[shaped_by] if shaped_by else ()
        if positions and all(aval(fitted[i]).ndim == 0 for i in positions):
            fitted[positions[0]] = bind(broadcast_in_dim_p, fitted[positions[0]], shape=out_shape,
                                        broadcast_dimensions=())
        return bind(prim, *fitted, **params), out_dim
    return batch


def _silent(f):
    """NumPy impl with the IEEE results (inf, nan) and no warnings."""
    def impl(*args, **params):
        with np.errstate(all="ignore"):
            return f(*args, **params)
    impl.__name__ = getattr(f, "__name__", "impl")
    return impl


# ------------------------------------------------------------------------------------- integer helpers

def _int_div(x, y):
    """Truncating integer division; x // 0 is 0 (NumPy also gives 0, with a warning)."""
    safe = np.where(y == 0, 1, y)
    q = np.floor_divide(x, safe)
    q = q + ((np.remainder(x, safe) != 0) & ((x < 0) != (safe < 0)))
    return np.where(y == 0, 0, q)


def _div_impl(x, y):
    return np.divide(x, y) if np.asarray(x).dtype.kind == "f" else _int_div(x, y)


def _rem_impl(x, y):
    if np.asarray(x).dtype.kind == "f":
        return np.fmod(x, y)
    return np.where(y == 0, 0, np.fmod(x, np.where(y == 0, 1, y)))


def _pow_impl(x, y):
    if np.asarray(x).dtype.kind == "f":
        return np.power(x, y)
    negative = y < 0   # integer powers with negative exponents truncate: only 1 and -1 survive
    odd_sign = np.where(np.remainder(y, 2) == 0, 1, -1)
    small = np.where(x == 1, 1, np.where(x == -1, odd_sign, 0))
    return np.where(negative, small, np.power(x, np.where(negative, 0, y)))


def _round_impl(x, rounding_method=1):
    if rounding_method == 1:
        return np.round(x)
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def _logistic_impl(x):
    return np.exp(-np.logaddexp(0, -x)).astype(x.dtype)


def _integer_pow_impl(x, y):
    return _pow_impl(x, np.asarray(y, dtype=x.dtype)) if x.dtype.kind != "f" else np.power(x, x.dtype.type(y))


# ------------------------------------------------------------------------------------ derivative bits

def _p(prim, *args, **params):
    return bind(prim, *args, **params)


def _mul(a, b):
    return _p(mul_p, a, b)


def _div(a, b):
    return _p(div_p, a, b)


def _select(pred, on_false, on_true):
    return _p(select_n_p, pred, on_false, on_true)


def _trunc(z):
    return _select(_p(lt_p, z, scalar(0, z)), _p(floor_p, z), _p(ceil_p, z))


def _one_minus_square(y):
    return _p(sub_p, scalar(1, y), _mul(y, y))


# ------------------------------------------------------------------------------------------- unary ops

neg_p = elementwise("neg", np.negative, linear=True, involution=True)
exp_p = elementwise("exp", _silent(np.exp), FLOAT)
log_p = elementwise("log", _silent(np.log), FLOAT)
log1p_p = elementwise("log1p", _silent(np.log1p), FLOAT)
expm1_p = elementwise("expm1", _silent(np.expm1), FLOAT)
sin_p = elementwise("sin", _silent(np.sin), FLOAT)
cos_p = elementwise("cos", _silent(np.cos), FLOAT)
tan_p = elementwise("tan", _silent(np.tan), FLOAT)
tanh_p = elementwise("tanh", _silent(np.tanh), FLOAT)
logistic_p = elementwise("logistic", _silent(_logistic_impl), FLOAT)
sqrt_p = elementwise("sqrt", _silent(np.sqrt), FLOAT)
rsqrt_p = elementwise("rsqrt", _silent(lambda x: 1 / np.sqrt(x)), FLOAT)
abs_p = elementwise("abs", np.abs, idempotent=True)
sign_p = elementwise("sign", np.sign, idempotent=True)
floor_p = elementwise("floor", np.floor, FLOAT, idempotent=True)
ceil_p = elementwise("ceil", np.ceil, FLOAT, idempotent=True)
round_p = elementwise("round", _round_impl, FLOAT, idempotent=True)
not_p = elementwise("not", lambda x: np.logical_not(x) if x.dtype == bool_ else np.invert(x), INT + BOOL,
                    involution=True)
is_finite_p = elementwise("is_finite", np.isfinite, FLOAT, out_dtype=bool_)
stop_gradient_p = elementwise("stop_gradient", lambda x: np.array(x), NUMERIC + BOOL)
integer_pow_p = elementwise("integer_pow", _silent(_integer_pow_impl))

neg_p.set(jvp=linear_jvp(neg_p), transpose=lambda ct, x: [_p(neg_p, ct)])
exp_p.set(jvp=partials_jvp(exp_p, lambda t, x, out: _mul(t, out)))
log_p.set(jvp=partials_jvp(log_p, lambda t, x, out: _div(t, x)))
log1p_p.set(jvp=partials_jvp(log1p_p, lambda t, x, out: _div(t, _p(add_p, x, scalar(1, x)))))
expm1_p.set(jvp=partials_jvp(expm1_p, lambda t, x, out: _mul(t, _p(add_p, out, scalar(1, out)))))
sin_p.set(jvp=partials_jvp(sin_p, lambda t, x, out: _mul(t, _p(cos_p, x))))
cos_p.set(jvp=partials_jvp(cos_p, lambda t, x, out: _p(neg_p, _mul(t, _p(sin_p, x)))))
tan_p.set(jvp=partials_jvp(tan_p, lambda t, x, out: _mul(t, _p(add_p, scalar(1, out), _mul(out, out)))))
tanh_p.set(jvp=partials_jvp(tanh_p, lambda t, x, out: _mul(t, _one_minus_square(out))))
logistic_p.set(jvp=partials_jvp(logistic_p, lambda t, x, out: _mul(t, _mul(out, _p(sub_p, scalar(1, out), out)))))
sqrt_p.set(jvp=partials_jvp(sqrt_p, lambda t, x, out: _div(t, _mul(scalar(2, out), out))))
rsqrt_p.set(jvp=partials_jvp(rsqrt_p, lambda t, x, out: _mul(t, _div(_mul(scalar(-0.5, out), out), x))))
abs_p.set(jvp=partials_jvp(abs_p, lambda t, x, out: _mul(t, _p(sign_p, x))))
integer_pow_p.set(jvp=partials_jvp(integer_pow_p, lambda t, x, out, y: (   # x ** 0 is constant, also at x = 0
    t if y == 1 else _mul(t, scalar(0, x)) if y == 0 else
    _mul(t, _mul(scalar(y, x), _p(integer_pow_p, x, y=y - 1) if y != 2 else x)))))


def _integer_pow_simplify(eqn, producer):
    """x ** 1 is x; x ** 0 is 1 everywhere (NaN and inf included, as IEEE pow)."""
    x, y = eqn.inputs[0], eqn.params["y"]
    if y == 1:
        return x
    if y != 0:
        return None
    one = Literal(1, ShapedArray((), x.aval.dtype, x.aval.weak_type))
    from .shapes import broadcast_in_dim_p
    return (broadcast_in_dim_p, [one], {"shape": x.aval.shape, "broadcast_dimensions": ()}) if x.aval.ndim else one


integer_pow_p.set(simplify=_integer_pow_simplify)
for _prim in (sign_p, floor_p, ceil_p, round_p, not_p, is_finite_p, stop_gradient_p):
    _prim.set(jvp=zero_jvp(_prim))

# ------------------------------------------------------------------------------------------ binary ops

# identity = (left, right) identity elements, signed zeros exact: x + -0.0 and x - 0.0 are x, x + 0.0 is not
# (-0.0 + 0.0 is 0.0)
add_p = elementwise("add", np.add, commutative=True, linear=True, identity=(-0.0, -0.0))
sub_p = elementwise("sub", np.subtract, linear=True, identity=(None, 0))
mul_p = elementwise("mul", np.multiply, commutative=True, identity=(1, 1))
div_p = elementwise("div", _silent(_div_impl), identity=(None, 1))
rem_p = elementwise("rem", _silent(_rem_impl))
pow_p = elementwise("pow", _silent(_pow_impl), identity=(None, 1))
max_p = elementwise("max", np.maximum, NUMERIC + BOOL, commutative=True, idempotent=True)
min_p = elementwise("min", np.minimum, NUMERIC + BOOL, commutative=True, idempotent=True)
and_p = elementwise("and", lambda x, y: np.logical_and(x, y) if x.dtype == bool_ else np.bitwise_and(x, y),
                    INT + BOOL, commutative=True, idempotent=True, identity=(-1, -1))
or_p = elementwise("or", lambda x, y: np.logical_or(x, y) if x.dtype == bool_ else np.bitwise_or(x, y),
                   INT + BOOL, commutative=True, idempotent=True, identity=(0, 0))
xor_p = elementwise("xor", lambda x, y: np.logical_xor(x, y) if x.dtype == bool_ else np.bitwise_xor(x, y),
                    INT + BOOL, commutative=True, identity=(0, 0))
eq_p = elementwise("eq", np.equal, NUMERIC + BOOL, bool_, commutative=True)
ne_p = elementwise("ne", np.not_equal, NUMERIC + BOOL, bool_, commutative=True)
lt_p = elementwise("lt", np.less, NUMERIC + BOOL, bool_)
le_p = elementwise("le", np.less_equal, NUMERIC + BOOL, bool_)
gt_p = elementwise("gt", np.greater, NUMERIC + BOOL, bool_)
ge_p = elementwise("ge", np.greater_equal, NUMERIC + BOOL, bool_)


def _transpose_add(ct, x, y):
    return [unbroadcast(ct, x) if isinstance(x, UndefinedPrimal) else None,
            unbroadcast(ct, y) if isinstance(y, UndefinedPrimal) else None]


def _transpose_sub(ct, x, y):
    return [unbroadcast(ct, x) if isinstance(x, UndefinedPrimal) else None,
            unbroadcast(_p(neg_p, ct), y) if isinstance(y, UndefinedPrimal) else None]


def _transpose_mul(ct, x, y):
    if isinstance(x, UndefinedPrimal):
        return [unbroadcast(_mul(ct, y), x), None]
    return [None, unbroadcast(_mul(x, ct), y)]


def _transpose_div(ct, x, y):
    return [unbroadcast(_div(ct, y), x), None]


def _max_weight(x, y, out):
    """d max(x, y) / dx: 1 where x wins, 1/2 at ties (as JAX), 0 where y wins."""
    def as_float(pred):
        return _p(convert_element_type_p, pred, new_dtype=aval(x).dtype, weak_type=False)
    return _p(add_p, as_float(_p(gt_p, x, y)), _mul(scalar(0.5, x), as_float(_p(eq_p, x, y))))


def _safe_log(x):
    return _p(log_p, _select(_p(eq_p, x, scalar(0, x)), x, scalar(1, x)))


add_p.set(jvp=linear_jvp(add_p), transpose=_transpose_add)
sub_p.set(jvp=linear_jvp(sub_p), transpose=_transpose_sub)
mul_p.set(jvp=partials_jvp(mul_p, lambda t, x, y, out: _mul(t, y), lambda t, x, y, out: _mul(x, t)),
          transpose=_transpose_mul)
div_p.set(jvp=partials_jvp(div_p, lambda t, x, y, out: _div(t, y),
                           lambda t, x, y, out: _p(neg_p, _mul(t, _div(out, y)))),
          transpose=_transpose_div)
rem_p.set(jvp=partials_jvp(rem_p, lambda t, x, y, out: t,
                           lambda t, x, y, out: _p(neg_p, _mul(t, _trunc(_div(x, y))))))
pow_p.set(jvp=partials_jvp(
    pow_p,
    lambda t, x, y, out: _mul(t, _select(                      # x = y = 0: 0, not 0 * 0 ** -1 (NaN)
        _p(and_p, _p(eq_p, y, scalar(0, y)), _p(eq_p, x, scalar(0, x))),
        _mul(y, _p(pow_p, x, _p(sub_p, y, scalar(1, y)))), scalar(0, y))),
    lambda t, x, y, out: _mul(t, _mul(_safe_log(x), out))))
max_p.set(jvp=partials_jvp(max_p, lambda t, x, y, out: _mul(t, _max_weight(x, y, out)),
                           lambda t, x, y, out: _mul(t, _max_weight(y, x, out))))
min_p.set(jvp=partials_jvp(min_p, lambda t, x, y, out: _mul(t, _max_weight(y, x, out)),
                           lambda t, x, y, out: _mul(t, _max_weight(x, y, out))))
for _prim in (and_p, or_p, xor_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    _prim.set(jvp=zero_jvp(_prim))

# ------------------------------------------------------------------ functions of the C math library
# NumPy's numerics, derivatives as JAX writes them. atan, asin, acos and atan2 are mathlib's, the hyperbolic
# functions and their inverses vectorizable formulas (below), the others the C library's (Emitter.libm:
# scalar calls).

def _recip_sqrt_of(t, s):
    return _div(t, _p(sqrt_p, s))


def _square(x):
    return _mul(x, x)


_LIBM_UNARY = {   # name: (NumPy impl, derivative(t, x, out))
    "asin": (np.arcsin, lambda t, x, out: _recip_sqrt_of(t, _one_minus_square(x))),
    "acos": (np.arccos, lambda t, x, out: _p(neg_p, _recip_sqrt_of(t, _one_minus_square(x)))),
    "atan": (np.arctan, lambda t, x, out: _div(t, _p(add_p, scalar(1, x), _square(x)))),
    "sinh": (np.sinh, lambda t, x, out: _mul(t, _p(cosh_p, x))),
    "cosh": (np.cosh, lambda t, x, out: _mul(t, _p(sinh_p, x))),
    "asinh": (np.arcsinh, lambda t, x, out: _recip_sqrt_of(t, _p(add_p, _square(x), scalar(1, x)))),
    "acosh": (np.arccosh, lambda t, x, out: _div(t, _mul(_p(sqrt_p, _p(sub_p, x, scalar(1, x))),
                                                          _p(sqrt_p, _p(add_p, x, scalar(1, x)))))),
    "atanh": (np.arctanh, lambda t, x, out: _div(t, _one_minus_square(x))),
    "log2": (np.log2, lambda t, x, out: _div(t, _mul(x, scalar(np.log(2), x)))),
    "log10": (np.log10, lambda t, x, out: _div(t, _mul(x, scalar(np.log(10), x)))),
    "exp2": (np.exp2, lambda t, x, out: _mul(t, _mul(out, scalar(np.log(2), out)))),
    "cbrt": (np.cbrt, lambda t, x, out: _div(t, _mul(scalar(3, out), _square(out)))),
}
asin_p, acos_p, atan_p, sinh_p, cosh_p, asinh_p, acosh_p, atanh_p, log2_p, log10_p, exp2_p, cbrt_p = (
    elementwise(name, _silent(impl), FLOAT) for name, (impl, _) in _LIBM_UNARY.items())
# The hyperbolic functions and their inverses from the vectorized exp, expm1, log1p and sqrt (mathlib): no
# cancellation in any of the formulas (within 2 ulp of NumPy over 4e5 arguments from 1e-300 to 1e300), on
# |x| with the sign put back, so that odd functions keep -0.0; past exp's overflow exp(|x|/2)**2 / 2, and
# past 2**28 the inverses are log(2|x|).

def _hyperbolic_lowering(name):
    def lower(b, x):
        ty, one, half = b.ty(), b.const(1), b.const(0.5)
        a = b.intrinsic("fabs", x)

        def add(p, q):
            return b(f"fadd {ty} {p}, {q}")

        def mul(p, q):
            return b(f"fmul {ty} {p}, {q}")

        def div(p, q):
            return b(f"fdiv {ty} {p}, {q}")

        if name in ("sinh", "cosh"):
            h = b.math("exp", mul(a, half))
            huge = mul(h, mul(h, half))                  # exp(a) / 2 without overflowing before sinh does
            if name == "sinh":
                u = b.math("expm1", a)
                value = mul(add(u, div(u, add(u, one))), half)
            else:
                e = b.math("exp", a)
                value = mul(add(e, div(one, e)), half)
            big = b.cmp("gt", a, b.const(709.0 if ty == "double" else 88.0))
            value = b.select(big, huge, value)
            return b.intrinsic("copysign", value, x) if name == "sinh" else value
        if name == "atanh":
            return b.intrinsic("copysign", mul(half, b.math("log1p", div(add(a, a), b(f"fsub {ty} {one}, {a}")))), x)
        log_2a = add(b.math("log", a), b.const(np.log(2)))
        if name == "asinh":
            square = mul(a, a)
            value = b.math("log1p", add(a, div(square, add(one, b.intrinsic("sqrt", add(one, square))))))
            return b.intrinsic("copysign", b.select(b.cmp("gt", a, b.const(2.0 ** 28)), log_2a, value), x)
        t = b(f"fsub {ty} {x}, {one}")                  # acosh: exact for x in [0.5, 2] (Sterbenz)
        value = b.math("log1p", add(t, b.intrinsic("sqrt", add(add(t, t), mul(t, t)))))
        value = b.select(b.cmp("gt", x, b.const(2.0 ** 28)), log_2a, value)
        return b.select(b.cmp("lt", x, one), b.const(np.nan), value)     # below 1 the formula is real
    return Elementwise(lower, cheap=False)


def _lowering(name):
    if name in ("sinh", "cosh", "asinh", "acosh", "atanh"):
        return _hyperbolic_lowering(name)
    if name in ("atan", "asin", "acos"):
        return Elementwise(lambda b, x: b.math(name, x), cheap=False)
    return Elementwise(lambda b, x: b.libm(name, x), cheap=False)


for _prim, (_, _derivative) in zip((asin_p, acos_p, atan_p, sinh_p, cosh_p, asinh_p, acosh_p, atanh_p, log2_p,
                                    log10_p, exp2_p, cbrt_p), _LIBM_UNARY.values()):
    _prim.set(jvp=partials_jvp(_prim, _derivative), lower=_lowering(_prim.name))

atan2_p = elementwise("atan2", _silent(np.arctan2), FLOAT)
hypot_p = elementwise("hypot", _silent(np.hypot), FLOAT, commutative=True)
atan2_p.set(jvp=partials_jvp(atan2_p,     # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
                             lambda t, y, x, out: _div(_mul(t, x), _p(add_p, _square(x), _square(y))),
                             lambda t, y, x, out: _div(_mul(t, _p(neg_p, y)), _p(add_p, _square(x), _square(y)))),
            lower=Elementwise(lambda b, y, x: b.math("atan2", y, x), cheap=False))
hypot_p.set(jvp=partials_jvp(hypot_p, lambda t, x, y, out: _mul(t, _div(x, out)),
                             lambda t, x, y, out: _mul(t, _div(y, out))),
            lower=Elementwise(lambda b, x, y: b.libm("hypot", x, y), cheap=False))

# --------------------------------------------------------------------------- select, clamp, conversion


def _select_n_shape(pred, *cases):
    if not cases:
        raise TypeError("select_n: needs at least one case")
    if pred.dtype != bool_ and pred.dtype.kind != "i":
        raise TypeError(f"select_n: the predicate must be bool or int32, got {pred.str_short()}")
    if pred.dtype == bool_ and len(cases) > 2:
        raise TypeError(f"select_n: a bool predicate selects between 2 cases, got {len(cases)}")
    out = elementwise_shape("select_n", NUMERIC + BOOL)(*cases)
    if pred.ndim and pred.shape != out.shape:
        raise ShapeError(f"select_n: predicate shape {pred.shape} does not match case shape {out.shape}")
    return out


def _select_n_impl(pred, *cases):
    return np.choose(np.asarray(pred, dtype=np.int64), np.broadcast_arrays(*cases))


def _select_n_jvp(primals, tangents):
    pred, cases = primals[0], primals[1:]
    out = _p(select_n_p, pred, *cases)
    if all(isinstance(t, Zero) for t in tangents[1:]) or aval(out).dtype.kind != "f":
        return out, Zero(aval(out))
    return out, _p(select_n_p, pred, *[instantiate(t) for t in tangents[1:]])


def _select_n_transpose(ct, pred, *cases):
    zero = scalar(0, ct)
    return [None] + [_p(select_n_p, pred, *[ct if j == i else zero for j in range(len(cases))])
                     if isinstance(c, UndefinedPrimal) else None for i, c in enumerate(cases)]


select_n_p = Primitive("select_n", _select_n_shape, _select_n_impl,
                       jvp=_select_n_jvp, transpose=_select_n_transpose, elementwise=True)
select_n_p.set(batch=elementwise_batch(select_n_p, shaped_by=slice(1, None)))


def _clamp_shape(lo, x, hi):
    for bound, which in ((lo, "min"), (hi, "max")):
        if bound.dtype != x.dtype or (bound.ndim and bound.shape != x.shape):
            raise TypeError(f"clamp: {which} {bound.str_short()} must be a scalar or match operand "
                            f"{x.str_short()}")
    return x


def _in_range(lo, x, hi):
    return _p(and_p, _p(ge_p, x, lo), _p(le_p, x, hi))


clamp_p = Primitive("clamp", _clamp_shape, lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), elementwise=True)
clamp_p.set(batch=elementwise_batch(clamp_p, shaped_by=slice(1, 2)))
clamp_p.set(jvp=partials_jvp(
    clamp_p,
    lambda t, lo, x, hi, out: _select(_p(lt_p, x, lo), scalar(0, t), t),
    lambda t, lo, x, hi, out: _select(_in_range(lo, x, hi), scalar(0, t), t),
    lambda t, lo, x, hi, out: _select(_p(gt_p, x, hi), scalar(0, t), t)))


def _convert_shape(x, new_dtype, weak_type=False):
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_impl(x, new_dtype, weak_type=False):
    """Float to int saturates and maps NaN to 0, so compiled code and this oracle agree."""
    x = np.asarray(x)
    if x.dtype.kind == "f" and new_dtype.kind == "i":
        info = np.iinfo(new_dtype)
        limit = 2.0 ** (info.bits - 1)  # exact in every float type: values at or beyond it saturate
        safe = np.where(np.isnan(x) | (x >= limit) | (x < -limit), 0, x)
        return np.where(x >= limit, info.max, np.where(x < -limit, info.min, np.trunc(safe).astype(new_dtype)))
    return x.astype(new_dtype)


def _convert_jvp(primals, tangents, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    out = _p(convert_element_type_p, x, new_dtype=new_dtype, weak_type=weak_type)
    if isinstance(t, Zero) or new_dtype.kind != "f" or aval(x).dtype.kind != "f":
        return out, Zero(aval(out))
    return out, _p(convert_element_type_p, t, new_dtype=new_dtype, weak_type=weak_type)


def _convert_transpose(ct, x, new_dtype, weak_type=False):
    return [_p(convert_element_type_p, ct, new_dtype=x.aval.dtype, weak_type=x.aval.weak_type)]


def _widens(a, b):
    """Every value of dtype a is exactly representable in dtype b."""
    if a == bool_:
        return True
    if a.kind == b.kind:
        return b.itemsize >= a.itemsize
    return a.kind in INT and b.kind == "f" and np.finfo(b).nmant + 1 >= 8 * a.itemsize


def _convert_simplify(eqn, producer):
    """Converting to the same dtype is a no-op, and so is a round trip through a wider dtype."""
    x, new_dtype = eqn.inputs[0], eqn.params["new_dtype"]
    if x.aval.dtype == new_dtype:
        return x
    inner = producer(x)
    if inner is not None and inner.prim is convert_element_type_p:
        source = inner.inputs[0]
        if source.aval.dtype == new_dtype and _widens(source.aval.dtype, x.aval.dtype):
            return source
    return None


convert_element_type_p = Primitive("convert_element_type", _convert_shape, _convert_impl, elementwise=True,
                                   jvp=_convert_jvp, transpose=_convert_transpose, linear=True)
convert_element_type_p.set(simplify=_convert_simplify)
convert_element_type_p.set(batch=elementwise_batch(convert_element_type_p))


# ------------------------------------------------------------------------------------------- lowering
# One scalar LLVM instruction sequence per op (tracejit.backend.rules); b.ty() is the operand type.

def _lower_math(name):
    return Elementwise(lambda b, *xs: b.math(name, *xs), cheap=False)


def _lower_intrinsic(name):
    return Elementwise(lambda b, x: b.intrinsic(name, x))


def _lower_binop(fop, iop):
    return Elementwise(lambda b, x, y: b.binop(fop, iop, x, y))


def _lower_neg(b, x):
    return b(f"fneg {b.ty()} {x}") if b.kind() == "f" else b(f"sub {b.ty()} 0, {x}")


def _lower_abs(b, x):
    return b.intrinsic("fabs", x) if b.kind() == "f" else b.intrinsic("abs", x, extra=", i1 false")


def _lower_sign(b, x):
    zero = b.const(0)
    # a float that is neither > 0 nor < 0 is a zero or NaN: x + 0.0 gives +0.0 (as NumPy) or the NaN
    pos = b.select(b.cmp("gt", x, zero), b.const(1), zero if b.kind() != "f" else b.binop("fadd", "add", x, zero))
    return b.select(b.cmp("lt", x, zero), b.const(-1), pos)


def _lower_int_div(b, x, y):
    """Truncating division; x / 0 is 0 and x / -1 is -x (wrapping), never a trap."""
    zero, minus_one = b.cmp("eq", y, b.const(0)), b.cmp("eq", y, b.const(-1))
    safe = b.select(b(f"or i1 {zero}, {minus_one}"), b.const(1), y)
    q = b.select(minus_one, b(f"sub {b.ty()} 0, {x}"), b(f"sdiv {b.ty()} {x}, {safe}"))
    return b.select(zero, b.const(0), q)


def _lower_int_rem(b, x, y):
    """Remainder with the dividend's sign; x % 0 and x % -1 are 0."""
    bad = b(f"or i1 {b.cmp('eq', y, b.const(0))}, {b.cmp('eq', y, b.const(-1))}")
    return b.select(bad, b.const(0), b(f"srem {b.ty()} {x}, {b.select(bad, b.const(1), y)}"))


def _lower_int_power(b, x, y):
    """x**y by squaring over every bit of y (branch-free); negative y truncates as _pow_impl."""
    ty, bits = b.ty(), b.dtype().itemsize * 8
    negative = b.cmp("lt", y, b.const(0))
    e = b.select(negative, b.const(0), y)
    result, base = b.const(1), x
    for bit in range(bits - 1):
        on = b(f"trunc {ty} {b(f'lshr {ty} {e}, {bit}')} to i1")
        result = b.select(on, b(f"mul {ty} {result}, {base}"), result)
        base = b(f"mul {ty} {base}, {base}")
    odd = b(f"trunc {ty} {y} to i1")
    small = b.select(b.cmp("eq", x, b.const(1)), b.const(1),
                     b.select(b.cmp("eq", x, b.const(-1)), b.select(odd, b.const(-1), b.const(1)), b.const(0)))
    return b.select(negative, small, result)


def _lower_integer_pow(b, x, y):
    if b.kind() != "f" and y < 0:
        return _lower_int_power(b, x, b.const(y))
    result, base, n = None, x, abs(y)
    while n:
        if n & 1:
            result = base if result is None else b.binop("fmul", "mul", result, base)
        n >>= 1
        if n:
            base = b.binop("fmul", "mul", base, base)
    result = result or b.const(1)
    return b(f"fdiv {b.ty()} {b.const(1)}, {result}") if y < 0 else result


for _prim, _name in ((exp_p, "exp"), (log_p, "log"), (log1p_p, "log1p"), (expm1_p, "expm1"), (sin_p, "sin"),
                     (cos_p, "cos"), (tan_p, "tan"), (tanh_p, "tanh"), (logistic_p, "logistic")):
    _prim.set(lower=_lower_math(_name))
for _prim, _name in ((sqrt_p, "sqrt"), (floor_p, "floor"), (ceil_p, "ceil")):
    _prim.set(lower=_lower_intrinsic(_name))
neg_p.set(lower=Elementwise(_lower_neg))
rsqrt_p.set(lower=Elementwise(lambda b, x: b(f"fdiv {b.ty()} {b.const(1)}, {b.intrinsic('sqrt', x)}"), cheap=False))
abs_p.set(lower=Elementwise(_lower_abs))
sign_p.set(lower=Elementwise(_lower_sign))
round_p.set(lower=Elementwise(lambda b, x, rounding_method=1: b.intrinsic(
    "roundeven" if rounding_method == 1 else "round", x)))
not_p.set(lower=Elementwise(lambda b, x: b(f"xor {b.ty()} {x}, {'true' if b.kind() == 'b' else -1}")))
is_finite_p.set(lower=Elementwise(lambda b, x: b(f"fcmp olt {b.ty()} {b.intrinsic('fabs', x)}, 0x7FF0000000000000")))
stop_gradient_p.set(lower=Elementwise(lambda b, x: x))
integer_pow_p.set(lower=Elementwise(_lower_integer_pow))
add_p.set(lower=_lower_binop("fadd", "add"))
sub_p.set(lower=_lower_binop("fsub", "sub"))
mul_p.set(lower=_lower_binop("fmul", "mul"))
div_p.set(lower=Elementwise(lambda b, x, y: b(f"fdiv {b.ty()} {x}, {y}") if b.kind() == "f"
                            else _lower_int_div(b, x, y), cheap=False))
rem_p.set(lower=Elementwise(lambda b, x, y: b(f"frem {b.ty()} {x}, {y}") if b.kind() == "f"
                            else _lower_int_rem(b, x, y), cheap=False))
pow_p.set(lower=Elementwise(lambda b, x, y: b.math("pow", x, y) if b.kind() == "f" else _lower_int_power(b, x, y),
                            cheap=False))
def _lower_extremum(pred, integer):
    """NumPy's maximum / minimum: x where it wins (pred) or is NaN, else y, so that a tie of -0.0 and +0.0
    gives y, as in NumPy (LLVM's maximum orders -0.0 below +0.0; reductions use it)."""
    def lower(b, x, y):
        if b.kind() != "f":
            return integer(b, x, y)
        wins = b(f"or i1 {b(f'fcmp {pred} {b.ty()} {x}, {y}')}, {b(f'fcmp uno {b.ty()} {x}, {x}')}")
        return b.select(wins, x, y)
    return Elementwise(lower)


max_p.set(lower=_lower_extremum("ogt", lambda b, x, y: b.maximum(x, y)))
min_p.set(lower=_lower_extremum("olt", lambda b, x, y: b.minimum(x, y)))
for _prim, _op in ((and_p, "and"), (or_p, "or"), (xor_p, "xor")):
    _prim.set(lower=_lower_binop(_op, _op))
for _prim in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    _prim.set(lower=Elementwise(lambda b, x, y, _pred=_prim.name: b.cmp(_pred, x, y)))


def _lower_select_n(b, pred, *cases):
    dtype = b.in_avals[1].dtype
    if b.kind(b.in_avals[0].dtype) == "b":
        return b.select(pred, cases[1], cases[0], dtype)
    out = cases[0]
    for i, case in enumerate(cases[1:], 1):
        out = b.select(b.cmp("eq", pred, b.const(i, b.in_avals[0].dtype), b.in_avals[0].dtype), case, out, dtype)
    return out


select_n_p.set(lower=Elementwise(_lower_select_n))
clamp_p.set(lower=Elementwise(lambda b, lo, x, hi: b.minimum(b.maximum(x, lo), hi)))
convert_element_type_p.set(lower=Elementwise(
    lambda b, x, new_dtype, weak_type=False: b.convert(x, b.dtype(), new_dtype)))
