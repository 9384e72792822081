"""Elementwise functions beside ufuncs.py: fabs and sinc (with JAX's exact derivatives of sinc at 0)."""
import numpy as np

from ..primitives.custom_jvp_call import call_with_jvp
from ._base import asarray, astype, aval, promote
from .creation import full_like
from .ufuncs import absolute, divide, equal, multiply, sin, where_


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
