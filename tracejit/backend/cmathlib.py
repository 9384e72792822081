"""Vectorizable complex functions, written as LLVM IR text on mathlib's real kernels (exp, log, sin, cos, atan2)
with mathlib_body.Body: branch-free, so a fused loop calling them still vectorizes.

``@tj_c<name>_<ty>`` takes the parts of its complex operands as ``ty`` values (ty: float for complex64, double
for complex128) and returns ``{ty, ty}`` (``ty`` for abs, which rules.Emitter.cmath calls with real=True); it is
``internal alwaysinline``, so that after inlining the pair is two registers again::

    text = module_ir({("exp", "float")})
    # in a loop body: %z = call {float, float} @tj_cexp_float(float %re, float %im)

Both types compute in double: complex64 results are rounded once from double intermediates (no overflow or
underflow is possible in between), complex128 scales where an intermediate would overflow or lose precision
(|z| and log|z| scale z by a power of two; exp(x) * v past exp's overflow is (((v h) h) h) h with h =
exp(x/4)). Within a few ulp of NumPy (glibc's functions: cexp, clog, csqrt, csin, ccos, ctanh, cpow; hypot for
abs; NumPy's own loops for sign and the small integer powers) over the finite range, and special values
(signed zeros, infinities, NaNs in either part) as NumPy gives them.
"""
from .libcalls import library_call
from .mathlib import kernel
from .mathlib_body import Body

_INF, _NAN = float("inf"), float("nan")
_LN2 = (float.fromhex("0x1.62e42fefa39efp-1"), float.fromhex("0x1.abc9e3b39803fp-56"))
_BIG, _SMALL, _SCALE = 2.0**500, 2.0**-500, 600          # |z| past these is scaled by 2**-+600 first


def _exp(f, x):
    return kernel("exp")(f, x, "double")


def _sin(f, x):
    return _beyond_reduction(f, "sin", x, kernel("sin")(f, x, "double"))


def _cos(f, x):
    return _beyond_reduction(f, "cos", x, kernel("cos")(f, x, "double"))


def _beyond_reduction(f, name, x, y):
    """y, the inlined kernel's value, or the C library's where x is beyond the kernel's reduction (libcalls.FAR:
    a library call, which the loop vectorizer widens, so that sin and cos keep sharing one reduction)."""
    return f._emit(library_call(f"{name}_far", "double", f"double {f._d(x)}, double {f._d(y)}"))


def _is_inf(f, x):
    return f.cmp("oeq", f.abs(x), _INF)


def _is_nan(f, x):
    return f.cmp("uno", x, x)


def _is_finite(f, x):
    return f.cmp("olt", f.abs(x), _INF)


def _is_not_finite(f, x):
    return f.cmp("uge", f.abs(x), _INF)


def _either(f, c1, c2):
    return f._emit(f"or i1 {c1}, {c2}")


def _times_exp(f, v, x):
    """v * exp(x) for x up to about 1455 (where v * exp(x) may still be finite): past exp's overflow as
    (((v h) h) h) h, h = exp(x/4), which overflows only if the product does."""
    h = _exp(f, f.mul(x, 0.25))
    quarters = f.mul(f.mul(f.mul(f.mul(v, h), h), h), h)
    return f.sel(f.cmp("ogt", x, 709.0), quarters, f.mul(v, _exp(f, x)))


def _scale(f, a, b):
    """(s, 1/s, a*s, b*s) with s a power of two that brings max(|a|, |b|) into [2**-500, 2**500] when it is
    outside: results scale back by a product with 1/s, which rounds as the division by s (both are exact but
    for one rounding) at a fraction of its cost (1e6 complex128, one thread: abs 2.14 -> 1.47 ms, NumPy 1.45;
    sqrt 4.87 -> 3.01)."""
    m = f.max(f.abs(a), f.abs(b))
    big, small = f.cmp("ogt", m, _BIG), f.cmp("olt", m, _SMALL)
    s = f.sel(big, 2.0**-_SCALE, f.sel(small, 2.0**_SCALE, 1.0))
    return s, f.sel(big, 2.0**_SCALE, f.sel(small, 2.0**-_SCALE, 1.0)), f.mul(a, s), f.mul(b, s)


def _sum_of_squares(f, x, y):
    """x*x + y*y as hi + lo (|x| >= |y| or not: two_sum sorts it out), nearly exact."""
    p1, e1 = f.two_prod(x, x)
    p2, e2 = f.two_prod(y, y)
    hi, e3 = f.two_sum(p1, p2)
    return hi, f.add(e3, f.add(e1, e2))


def _hypot_scaled(f, x, y):
    """sqrt(x*x + y*y) for x, y scaled into range, with one Newton correction on the double-double sum."""
    hi, lo = _sum_of_squares(f, x, y)
    h = f.call("sqrt", hi)
    correction = f.div(f.add(f.fma(f.neg(h), h, hi), lo), f.mul(h, 2.0))
    return f.sel(f.cmp("ogt", h, 0.0), f.add(h, correction), h)


def _abs(f, a, b, ty="double"):
    """hypot: inf if either part is, else NaN if either is. Parts of complex64 square exactly in double, and their
    sum cannot overflow: sqrt of it, rounded once to float, is glibc's hypotf (1e6 elements: 0.57 ms for NumPy,
    1.31 with the scaled double-double path)."""
    if ty == "float":
        h = f.call("sqrt", f.add(f.mul(a, a), f.mul(b, b)))
    else:
        _, unscale, x, y = _scale(f, a, b)
        h = f.mul(_hypot_scaled(f, x, y), unscale)
    return f.sel(_either(f, _is_inf(f, a), _is_inf(f, b)), _INF, h)


def _log(f, a, b):
    """log|z| + i atan2(b, a); near |z| = 1, log1p of |z|**2 - 1 computed from the exact squares."""
    s, _, x, y = _scale(f, a, b)
    hi, lo = _sum_of_squares(f, x, y)
    near, err = f.two_sum(hi, -1.0)                   # |z|**2 - 1 as a double-double
    re_near = f.mul(kernel("log1p")(f, f.add(near, f.add(err, lo)), "double"), 0.5)
    log_s = [f.sel(f.cmp("olt", s, 1.0), _SCALE * part, f.sel(f.cmp("ogt", s, 1.0), -_SCALE * part, 0.0))
             for part in _LN2]                        # -log(s) = +-600 log 2, or 0
    re_far = f.add(kernel("log")(f, _hypot_scaled(f, x, y), "double"), f.add(*log_s))
    near_one = f.both(f.both(f.cmp("oge", hi, 0.5), f.cmp("ole", hi, 3.0)), f.cmp("oeq", s, 1.0))
    re = f.sel(near_one, re_near, re_far)
    re = f.sel(_either(f, _is_inf(f, a), _is_inf(f, b)), _INF, re)
    return re, kernel("atan2")(f, b, a, "double")


def _exp_c(f, a, b):
    """e**a (cos b + i sin b) with C99's special values: an imaginary zero stays (exp(x + 0j) is exp(x) + 0j),
    an infinite or NaN b gives NaN + NaN j, except for a = -inf (+-0) and a = +inf (inf + NaN j)."""
    c, s = _cos(f, b), _sin(f, b)
    re, im = _times_exp(f, c, a), _times_exp(f, s, a)
    b_bad = _is_not_finite(f, b)
    re = f.sel(b_bad, f.sel(f.cmp("oeq", a, _INF), _INF, f.sel(f.cmp("oeq", a, -_INF), 0.0, _NAN)), re)
    im = f.sel(b_bad, f.sel(f.cmp("oeq", a, -_INF), f.call("copysign", 0.0, b), _NAN), im)
    im = f.sel(f.both(f.cmp("oeq", a, -_INF), _is_nan(f, b)), 0.0, im)
    im = f.sel(f.cmp("oeq", b, 0.0), b, im)                     # exp(x + 0j) is exp(x) + 0j, x inf or NaN too
    re = f.sel(f.both(f.cmp("oeq", a, _INF), f.cmp("oeq", b, 0.0)), _INF, re)
    return re, im


def _sqrt(f, a, b):
    """Algorithm 312 (CACM 1967) on z scaled into range: t = sqrt((|a| + |z|)/2), then (t, b/2t) for a >= 0
    and (|b|/2t, copysign(t, b)) for a < 0; C99's special values."""
    _, unscale, x, y = _scale(f, a, b)
    t = f.call("sqrt", f.mul(f.add(f.abs(x), _hypot_scaled(f, x, y)), 0.5))
    other = f.div(f.abs(y), f.mul(t, 2.0))
    root = f.call("sqrt", unscale)                      # an exact power of two
    t, other = f.mul(t, root), f.mul(other, root)
    neg = f.cmp("olt", x, 0.0)
    re = f.sel(neg, other, t)
    im = f.call("copysign", f.sel(neg, t, other), b)
    zero = f.both(f.cmp("oeq", a, 0.0), f.cmp("oeq", b, 0.0))
    re, im = f.sel(zero, 0.0, re), f.sel(zero, b, im)
    b_nan_zero = f.sub(b, b)                            # NaN if b is NaN, else 0
    re = f.sel(f.cmp("oeq", a, _INF), _INF, f.sel(f.cmp("oeq", a, -_INF), f.abs(b_nan_zero), re))
    im = f.sel(f.cmp("oeq", a, _INF), f.call("copysign", b_nan_zero, b),
               f.sel(f.cmp("oeq", a, -_INF), f.call("copysign", _INF, b), im))
    re, im = f.sel(_is_nan(f, a), a, re), f.sel(_is_nan(f, a), _NAN, im)
    return f.sel(_is_inf(f, b), _INF, re), f.sel(_is_inf(f, b), b, im)


def _cosh_sinh(f, y):
    """(cosh y, sinh y) of a finite or infinite y, each with the sign C99 gives it."""
    ay = f.abs(y)
    e = _exp(f, ay)
    u = kernel("expm1")(f, ay, "double")
    cosh_small = f.mul(f.add(e, f.div(1.0, e)), 0.5)
    sinh_small = f.mul(f.add(u, f.div(u, f.add(u, 1.0))), 0.5)
    return cosh_small, f.call("copysign", sinh_small, y)


def _mul_hyperbolic(f, v, y, which):
    """v * cosh(y) (which 0) or v * sinh(|y|) (which 1) without overflowing before the product does."""
    cosh, sinh = _cosh_sinh(f, y)
    small = f.mul(v, cosh if which == 0 else f.abs(sinh))
    big = _times_exp(f, f.mul(v, 0.5), f.abs(y))
    return f.sel(f.cmp("ogt", f.abs(y), 20.0), big, small)


def _sinh_c(f, a, b):
    """sinh(a + ib) = sinh a cos b + i cosh a sin b, C99's special values (csinh)."""
    c, s = _cos(f, b), _sin(f, b)
    re = _mul_hyperbolic(f, f.mul(c, f.call("copysign", 1.0, a)), a, 1)
    im = _mul_hyperbolic(f, s, a, 0)
    a_zero, b_zero, b_bad = f.cmp("oeq", a, 0.0), f.cmp("oeq", b, 0.0), _is_not_finite(f, b)
    re = f.sel(a_zero, f.sel(b_bad, f.call("copysign", 0.0, a), f.mul(a, c)), re)
    im = f.sel(b_zero, b, im)
    a_inf, nan = _is_inf(f, a), f.sub(b, b)          # nan: NaN, the imaginary part where b is not finite
    re = f.sel(f.both(a_inf, b_bad), a, re)
    im = f.sel(f.both(_either(f, a_inf, a_zero), b_bad), nan, im)
    return f.sel(f.both(_is_nan(f, a), b_zero), a, re), im


def _cosh_c(f, a, b):
    """cosh(a + ib) = cosh a cos b + i sinh a sin b, C99's special values (ccosh)."""
    c, s = _cos(f, b), _sin(f, b)
    re = _mul_hyperbolic(f, c, a, 0)
    im = _mul_hyperbolic(f, f.mul(s, f.call("copysign", 1.0, a)), a, 1)
    a_inf, a_zero, b_zero, b_bad = _is_inf(f, a), f.cmp("oeq", a, 0.0), f.cmp("oeq", b, 0.0), _is_not_finite(f, b)
    nan = f.sub(b, b)                                 # NaN where b is not finite
    im = f.sel(a_zero, f.sel(b_bad, 0.0, f.mul(a, s)), im)
    im = f.sel(b_zero, f.mul(s, f.call("copysign", 1.0, a)), im)      # cosh(x + 0j): 0 * sign x
    re = f.sel(f.both(a_inf, _either(f, b_zero, b_bad)), _INF, re)
    im = f.sel(f.both(a_inf, b_bad), nan, im)
    re = f.sel(f.both(a_zero, b_bad), nan, re)
    return re, f.sel(f.both(_is_nan(f, a), b_zero), b, im)          # cosh(NaN + 0j) is NaN + 0j


def _sin_c(f, a, b):
    """sin z = -i sinh(iz); sin(x +- inf j) with x inf or NaN is NaN + inf j (glibc's csin)."""
    re, im = _sinh_c(f, f.neg(b), a)
    return im, f.sel(f.both(_is_inf(f, b), _is_not_finite(f, a)), _INF, f.neg(re))


def _cos_c(f, a, b):
    """cos z = cosh(iz)."""
    return _cosh_c(f, f.neg(b), a)


def _tanh_c(f, a, b):
    """(sinh a cosh a + i sin b cos b) / (sinh(a)**2 + cos(b)**2) (glibc's arrangement: no tan, no
    cancellation); past |a| = 20, copysign(1, a) + i 4 sin b cos b exp(-2|a|)."""
    c, s = _cos(f, b), _sin(f, b)
    cosh, sinh = _cosh_sinh(f, a)
    den = f.fma(sinh, sinh, f.mul(c, c))
    big = f.cmp("ogt", f.abs(a), 20.0)
    re = f.sel(big, f.call("copysign", 1.0, a), f.div(f.mul(sinh, cosh), den))
    im = f.sel(big, f.mul(f.mul(f.mul(s, c), 4.0), _exp(f, f.mul(f.abs(a), -2.0))), f.div(f.mul(s, c), den))
    im = f.sel(f.cmp("oeq", b, 0.0), b, im)
    a_inf, b_bad = _is_inf(f, a), _is_not_finite(f, b)
    im = f.sel(f.both(a_inf, b_bad), f.call("copysign", 0.0, b), im)   # tanh(+-inf + iy) is +-1 +- 0j
    re = f.sel(a_inf, f.call("copysign", 1.0, a), re)
    b_bad = f.both(_is_finite(f, a), b_bad)
    re = f.sel(b_bad, f.sel(f.cmp("oeq", a, 0.0), a, _NAN), re)      # tanh(+-0 + inf j) is +-0 + NaN j
    return re, f.sel(b_bad, _NAN, im)


class _Native:
    """Arithmetic rounded to the operands' own type after every operation (float for complex64), so that code
    computing in double reproduces NumPy's arithmetic in that type: its overflows, and its bits."""

    def __init__(self, f, ty):
        self.f, self.ty = f, ty

    def __getattr__(self, op):
        if self.ty == "double":
            return getattr(self.f, op)

        def rounded(*args):
            v = getattr(self.f, op)(*args)
            return self.f._emit(f"fpext float {self.f._emit(f'fptrunc double {v} to float')} to double")
        return rounded


def _cmul(n, x, y):
    """NumPy's scalar complex product (its power loop's), in the arithmetic n."""
    (ar, ai), (br, bi) = x, y
    return n.sub(n.mul(ar, br), n.mul(ai, bi)), n.add(n.mul(ar, bi), n.mul(ai, br))


def _cdiv(n, x, y):
    """Smith's quotient, NumPy's branches (see complex_scalar.binop), in the arithmetic n."""
    f = n.f
    (ar, ai), (br, bi) = x, y
    real_big = f.cmp("oge", f.abs(br), f.abs(bi))
    big, small = f.sel(real_big, br, bi), f.sel(real_big, bi, br)
    rat = n.div(small, big)
    scl = n.div(1.0, n.add(big, n.mul(small, rat)))
    re = f.sel(real_big, n.add(ar, n.mul(ai, rat)), n.add(n.mul(ar, rat), ai))
    im = f.sel(real_big, n.sub(ai, n.mul(ar, rat)), n.sub(n.mul(ai, rat), ar))
    zero = f.both(f.cmp("oeq", br, 0.0), f.cmp("oeq", bi, 0.0))
    return (f.sel(zero, n.div(ar, f.abs(br)), n.mul(re, scl)), f.sel(zero, n.div(ai, f.abs(bi)), n.mul(im, scl)))


def _cmul_annex_g(f, x, y):
    """The C compiler's complex product (C99 Annex G, libgcc's __muldc3), which glibc's cpow uses: the plain
    formula, except that a NaN + NaN j result of an infinite factor is recomputed as an infinity."""
    (a, b), (c, d) = x, y
    ac, bd, ad, bc = f.mul(a, c), f.mul(b, d), f.mul(a, d), f.mul(b, c)
    re, im = f.sub(ac, bd), f.add(ad, bc)

    def boxed(p, q):           # an infinite (p, q) as (+-1 or +-0, ...), and the other factor's NaNs as 0
        return (f.call("copysign", f.sel(_is_inf(f, p), 1.0, 0.0), p),
                f.call("copysign", f.sel(_is_inf(f, q), 1.0, 0.0), q))

    def zero_nan(p):
        return f.sel(_is_nan(f, p), f.call("copysign", 0.0, p), p)

    x_inf = _either(f, _is_inf(f, a), _is_inf(f, b))
    y_inf = _either(f, _is_inf(f, c), _is_inf(f, d))
    overflow = _either(f, _either(f, _is_inf(f, ac), _is_inf(f, bd)), _either(f, _is_inf(f, ad), _is_inf(f, bc)))
    xa, xb = boxed(a, b)
    a, b = f.sel(x_inf, xa, a), f.sel(x_inf, xb, b)
    c, d = f.sel(x_inf, zero_nan(c), c), f.sel(x_inf, zero_nan(d), d)
    ya, yb = boxed(c, d)
    c, d = f.sel(y_inf, ya, c), f.sel(y_inf, yb, d)
    a, b = f.sel(y_inf, zero_nan(a), a), f.sel(y_inf, zero_nan(b), b)
    only_overflow = f.both(overflow, f._emit(f"xor i1 {_either(f, x_inf, y_inf)}, true"))   # and no infinity
    a, b, c, d = (f.sel(only_overflow, zero_nan(v), v) for v in (a, b, c, d))
    recalc = f.both(f.both(_is_nan(f, re), _is_nan(f, im)), _either(f, _either(f, x_inf, y_inf), overflow))
    return (f.sel(recalc, f.mul(_INF, f.sub(f.mul(a, c), f.mul(b, d))), re),
            f.sel(recalc, f.mul(_INF, f.add(f.mul(a, d), f.mul(b, c))), im))


def _pow(f, a, b, c, d, ty):
    """NumPy's complex power z**w (npy_cpow): 1 for w = 0; 0 or NaN for z = 0 as Re w > 0 or not; integer
    w in (-100, 100) by repeated multiplication in the operands' type (1, 2 and 3 unrolled, negative powers
    inverted); otherwise exp(w log z) as glibc's cpow."""
    z, n = (a, b), _Native(f, ty)
    sq = _cmul(n, z, z)
    acc, p = (1.0, 0.0), z
    bits = f._emit(f"fptosi double {f.sel(f.cmp('olt', f.abs(c), 100.0), f.abs(c), 0.0)} to i64")
    for bit in range(7):
        on = f._emit(f"icmp ne i64 {f._emit(f'and i64 {bits}, {1 << bit}')}, 0")
        product = _cmul(n, acc, p)
        acc = (f.sel(on, product[0], acc[0]), f.sel(on, product[1], acc[1]))
        p = _cmul(n, p, p)
    inverse = _cdiv(n, (1.0, 0.0), acc)
    negative = f.cmp("olt", c, 0.0)
    powered = (f.sel(negative, inverse[0], acc[0]), f.sel(negative, inverse[1], acc[1]))
    cube = _cmul(n, z, sq)
    for k, value in ((3.0, cube), (2.0, sq), (1.0, z)):
        is_k = f.cmp("oeq", c, k)
        powered = (f.sel(is_k, value[0], powered[0]), f.sel(is_k, value[1], powered[1]))
    lr, li = _log(f, a, b)
    general = _exp_c(f, *_cmul_annex_g(f, (c, d), (lr, li)))
    integer = f.both(f.both(f.cmp("oeq", d, 0.0), f.cmp("olt", f.abs(c), 100.0)),
                     f.cmp("oeq", f.call("trunc", c), c))
    re, im = f.sel(integer, powered[0], general[0]), f.sel(integer, powered[1], general[1])
    z_zero = f.both(f.cmp("oeq", a, 0.0), f.cmp("oeq", b, 0.0))
    positive = f.cmp("ogt", c, 0.0)
    re = f.sel(z_zero, f.sel(positive, 0.0, _NAN), re)
    im = f.sel(z_zero, f.sel(positive, 0.0, _NAN), im)
    w_zero = f.both(f.cmp("oeq", c, 0.0), f.cmp("oeq", d, 0.0))
    return f.sel(w_zero, 1.0, re), f.sel(w_zero, 0.0, im)


_MAX = {"float": float.fromhex("0x1.fffffep+127"), "double": float.fromhex("0x1.fffffffffffffp+1023")}


def _sign(f, a, b, ty):
    """NumPy's z/|z|: 0 at 0, NaN + NaN j if a part is NaN, the unit along an infinite part (NaN if both are).
    Where |z| overflows ty with finite parts, NumPy's loop takes the imaginary part for the infinite one:
    copysign(1, b) j (its sign of 3e38 + 3e38j in complex64 is 1j)."""
    h = _abs(f, a, b, ty)
    re, im = f.div(a, h), f.div(b, h)
    a_inf, over = _is_inf(f, a), f.cmp("ogt", h, _MAX[ty])
    re = f.sel(a_inf, f.call("copysign", 1.0, a), f.sel(over, 0.0, re))
    im = f.sel(over, f.sel(a_inf, 0.0, f.call("copysign", 1.0, b)), im)
    b_inf = _is_inf(f, b)
    both = f.both(a_inf, b_inf)
    re, im = f.sel(both, _NAN, re), f.sel(both, _NAN, im)
    zero = f.cmp("oeq", h, 0.0)
    re, im = f.sel(zero, 0.0, re), f.sel(zero, 0.0, im)
    nan = _is_nan(f, h)                                  # a NaN part, unless the other is infinite
    return f.sel(nan, _NAN, re), f.sel(nan, _NAN, im)


# name: (writer, number of complex operands, whether the result is complex)
FUNCS = {"abs": (_abs, 1, False), "exp": (_exp_c, 1, True), "log": (_log, 1, True), "sqrt": (_sqrt, 1, True),
         "sin": (_sin_c, 1, True), "cos": (_cos_c, 1, True), "tanh": (_tanh_c, 1, True), "pow": (_pow, 2, True),
         "sign": (_sign, 1, True)}


def function_ir(name, ty):
    """Definition of ``@tj_c<name>_<ty>`` (see the module docstring)."""
    writer, arity, complex_result = FUNCS[name]
    params = [f"%{p}{k}" for k in range(arity) for p in "ri"]
    f = Body("double")
    args = [f.ext(p, ty) for p in params]
    result = writer(f, *args, ty) if name in ("pow", "sign", "abs") else writer(f, *args)
    parts = result if complex_result else (result,)
    narrow = [p if ty == "double" else f._emit(f"fptrunc double {p} to {ty}") for p in parts]
    ret = f"{{{ty}, {ty}}}" if complex_result else ty
    if complex_result:
        pair = f._emit(f"insertvalue {ret} undef, {ty} {narrow[0]}, 0")
        f.lines.append(f"  %ret = insertvalue {ret} {pair}, {ty} {narrow[1]}, 1")
        f.lines.append(f"  ret {ret} %ret")
    else:
        f.lines.append(f"  ret {ty} {narrow[0]}")
    header = ", ".join(f"{ty} {p}" for p in params)
    body = "\n".join(f.lines)
    return f"define internal {ret} @tj_c{name}_{ty}({header}) alwaysinline nounwind {{\n{body}\n}}\n"


def module_ir(needed):
    """Definitions of the (name, ty) pairs in ``needed``, each once, in a stable order."""
    return "\n".join(function_ir(name, ty) for name, ty in sorted(set(needed)))
