"""i0 (NumPy's Chebyshev series, elementwise and fused, with JAX's derivative: 0 at x = 0) and gcd/lcm (Euclid's
algorithm, one while loop over the whole array, as JAX's; values NumPy's, int8's -128 included)."""
import numpy as np

from ..core.avals import broadcast_shapes
from ..core.ir_surgery import hoist_consts
from ..core.trace import bind, trace_flat
from ..primitives import elementwise as ew
from ..primitives.while_loop import while_p
from ._base import aval, broadcast_to_shape, promote, stop_gradient
from .elementwise_extra import as_inexact
from .reductions import any as any_
from .ufuncs import (
    _computed_in_float32,
    absolute,
    add,
    divide,
    equal,
    exp,
    less_equal,
    multiply,
    not_equal,
    sqrt,
    subtract,
    where_,
)

# NumPy's (Cephes') Chebyshev coefficients of exp(-x) i0(x) on [0, 8] and of exp(-x) sqrt(x) i0(x) on (8, inf)
_I0_SMALL = (
    -4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16, 1.715391285555133e-15,
    -1.1685332877993451e-14, 7.676185498604936e-14, -4.856446783111929e-13, 2.95505266312964e-12,
    -1.726826291441556e-11, 9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
    -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07, 1.1173875391201037e-06,
    -4.4167383584587505e-06, 1.6448448070728896e-05, -5.754195010082104e-05, 0.00018850288509584165,
    -0.0005763755745385824, 0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
    -0.02373741480589947, 0.04930528423967071, -0.09490109704804764, 0.17162090152220877,
    -0.3046826723431984, 0.6767952744094761)
_I0_LARGE = (0.0,) * 5 + (   # (leading zeros leave the recurrence at 0: one recurrence serves both series)
    -7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17, 3.461222867697461e-17,
    -2.8276239805165836e-16, -3.425485619677219e-16, 1.7725601330565263e-15, 3.8116806693526224e-15,
    -9.554846698828307e-15, -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
    7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11, -3.1499165279632416e-11,
    1.1889147107846439e-11, 4.94060238822497e-10, 3.3962320257083865e-09, 2.266668990498178e-08,
    2.0489185894690638e-07, 2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943,
    0.8044904110141088)


def _clenshaw(t, small):
    """NumPy's _chbevl at t, with the small-argument series where `small`, the large one elsewhere."""
    dtype = aval(t).dtype

    def coefficient(k):
        return where_(small, np.asarray(_I0_SMALL[k], dtype), np.asarray(_I0_LARGE[k], dtype))
    b0, b1, b2 = coefficient(0), np.zeros((), dtype), np.zeros((), dtype)
    for k in range(1, len(_I0_SMALL)):
        b2, b1 = b1, b0
        b0 = add(subtract(multiply(t, b1), b2), coefficient(k))
    return multiply(subtract(b0, b2), 0.5)


@_computed_in_float32()
def _i0(x):
    y = absolute(x)
    small = less_equal(y, 8.0)
    safe = where_(small, 1.0, y)      # no 32 / 0 nor sqrt'(0) in the branch not taken (its derivative would be NaN)
    t = where_(small, subtract(multiply(y, 0.5), 2.0), subtract(divide(32.0, safe), 2.0))
    out = divide(multiply(exp(y), _clenshaw(t, small)), sqrt(safe))
    return where_(equal(x, 0), stop_gradient(out), out)     # JAX's derivative at 0: 0 (so is its second)


def i0(x):
    """The modified Bessel function of the first kind of order 0, by NumPy's series (integers in float64, as
    NumPy's; float16 and bfloat16 computed in float32)."""
    x = as_inexact(x)
    if aval(x).dtype.kind == "c":
        raise TypeError(f"i0: complex values are not supported (got {aval(x).str_short()})")
    return _i0(x)


def _integer_operands(name, x1, x2):
    x1, x2 = promote(x1, x2)
    if aval(x1).dtype.kind not in "iu":
        raise TypeError(f"{name}: the arguments must be integers, got {aval(x1).str_short()}")
    shape = broadcast_shapes(aval(x1).shape, aval(x2).shape, op=name)
    return absolute(broadcast_to_shape(x1, shape)), absolute(broadcast_to_shape(x2, shape))


def _euclid(a, b):
    """gcd(a, b) for a, b of one integer dtype and shape: (a, b) <- (b, a rem b) while any b is not 0 (where b is
    0, rem gives 0: the pair stays). The last step's sign is |.|'s (int8's -128 stays -128, as NumPy's)."""
    avals = [aval(a).strip_weak(), aval(b).strip_weak()]

    def cond(a, b):
        return [any_(not_equal(b, 0))]

    def body(a, b):
        return [where_(not_equal(b, 0), b, a), bind(ew.rem_p, a, b)]
    cond_ir, cond_consts = hoist_consts(trace_flat(cond, avals, fun_name="gcd_cond"))
    body_ir, body_consts = hoist_consts(trace_flat(body, avals, fun_name="gcd_body"))
    out, _ = bind(while_p, *cond_consts, *body_consts, a, b, body=body_ir, cond=cond_ir,
                  body_nconsts=len(body_consts), cond_nconsts=len(cond_consts))
    return absolute(out)


def gcd(x1, x2):
    """The greatest common divisor of |x1| and |x2| (0 where both are 0)."""
    return _euclid(*_integer_operands("gcd", x1, x2))


def lcm(x1, x2):
    """|x1| * (|x2| / gcd), 0 where the gcd is 0 (wrapping on overflow, as NumPy's)."""
    a, b = _integer_operands("lcm", x1, x2)
    d = _euclid(a, b)
    zero, dtype = equal(d, 0), aval(d).dtype
    quotient = bind(ew.div_p, b, where_(zero, np.ones((), dtype), d))
    return where_(zero, np.zeros((), dtype), multiply(a, quotient))
