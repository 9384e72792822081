"""Elementwise functions beside ufuncs.py: fabs and sinc (with JAX's exact derivatives of sinc at 0); fmod,
float_power, divmod, modf and pow."""
import numpy as np

from ..core.trace import Tracer, bind
from ..primitives import elementwise as ew
from ..primitives.custom_jvp_call import call_with_jvp
from ._base import asarray, astype, aval, broadcast_operands, promote, reject_out, stop_gradient
from .creation import full_like
from .float_bits import copysign, quiet
from .ufuncs import (
    absolute,
    bools_as_int8,
    divide,
    equal,
    floor_divide,
    isinf,
    multiply,
    power,
    remainder,
    sin,
    subtract,
    trunc,
    where_,
)


def as_inexact(x):
    """x in its own float or complex dtype, integers and bools in float64: the dtype of NumPy's functions written
    in Python, where an integer array meets a Python float (sinc, gradient, trapezoid, polyfit), not the ufuncs'
    smallest float that holds the integers."""
    x = asarray(x)
    return astype(x, np.float64) if aval(x).dtype.kind in "biu" else promote(x, to_float=True)[0]


def fabs(x):
    """|x| as a float (NumPy's fabs refuses complex values: np.abs is their modulus)."""
    (x,) = promote(x, to_float=True)
    if aval(x).dtype.kind == "c":
        raise TypeError(f"fabs: complex values are not supported (got {aval(x).str_short()}); use abs")
    return absolute(x)


def _sinc_derivative_at_zero(k, x):
    """The k-th derivative of sinc at 0, shaped like x, whose derivative is the (k+1)-th: the Maclaurin
    coefficients (-1)**(k/2) pi**k / (k + 1) for even k, 0 for odd k (so grad, hessian ... are exact at 0)."""
    value = 0.0 if k % 2 else (-1) ** (k // 2) * np.pi ** k / (k + 1)

    def at_zero(x):
        return [full_like(x, value)]

    def at_zero_jvp(primals, tangents):
        return at_zero(primals[0]), [multiply(tangents[0], _sinc_derivative_at_zero(k + 1, primals[0]))]
    return call_with_jvp(at_zero, at_zero_jvp, x)[0]


def sinc(x):
    """sin(pi x) / (pi x), 1 at 0, as np.sinc; its derivatives at 0 are the series' (as jnp.sinc's)."""
    x = as_inexact(x)
    zero = equal(x, 0)
    pi_x = multiply(np.pi, where_(zero, 1, x))
    return where_(zero, _sinc_derivative_at_zero(0, x), divide(sin(pi_x), pi_x))


def fmod(x1, x2, /):
    """C's fmod: the remainder of x1 / x2 truncated, with x1's sign (integer x % 0 is 0, as NumPy's; bools as
    int8); its derivative JAX's lax.rem's (1 and -trunc(x1 / x2))."""
    x1, x2 = bools_as_int8(*promote(x1, x2))
    if aval(x1).dtype.kind == "c":
        raise TypeError(f"fmod: complex values are not supported (got {aval(x1).str_short()})")
    return bind(ew.rem_p, *broadcast_operands(x1, x2, op="fmod"))


def float_power(x, y, /):
    """x ** y in float64 (complex128 for complex operands), whatever the operands' dtypes, as NumPy's: C's pow
    (float_power(-0.0, 0.5) is 0.0, where power's sqrt gives -0.0)."""
    x, y = promote(x, y)
    dtype = np.dtype(np.complex128 if aval(x).dtype.kind == "c" else np.float64)
    x, y = broadcast_operands(astype(x, dtype), astype(y, dtype), op="float_power")
    if not isinstance(y, Tracer) and not isinstance(x, Tracer):   # NumPy's power takes sqrt for a broadcast 0.5
        x, y = (np.array(v) for v in np.broadcast_arrays(x, y))    # (not pow): give it whole arrays
    return bind(ew.pow_p, x, y)


def divmod(x1, x2, /):
    """(x1 // x2, x1 % x2), NumPy's floor_divide and remainder."""
    return floor_divide(x1, x2), remainder(x1, x2)


@quiet
def modf(x, /, out=None):
    """(fractional part, integral part), both with x's sign (-0.0 included) and x's float dtype; at infinities
    (+-0.0, x). The fractional part's derivative is 1 (JAX's), also where it is a zero."""
    reject_out("modf", out)
    (x,) = promote(x, to_float=True)
    if aval(x).dtype.kind == "c":
        raise TypeError(f"modf: complex values are not supported (got {aval(x).str_short()})")
    whole = trunc(x)
    frac = subtract(x, whole)
    zero = copysign(0.0, x)
    # a zero takes x's sign and keeps frac's derivative: sg(frac) - frac is +0.0 whatever frac's sign
    frac = where_(equal(frac, 0), subtract(zero, subtract(stop_gradient(frac), frac)), frac)
    return where_(isinf(x), zero, frac), whole


pow = power
