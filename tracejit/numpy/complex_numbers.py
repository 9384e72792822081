"""Complex numbers in tracejit.numpy: their parts, conjugate, angle and the predicates, as NumPy has them (on
real arrays, real is the array itself, imag zeros and conj the array, bools as int8 as NumPy's ufunc gives
them), written on the primitives real, imag, conj and complex (tracejit.primitives.complex_parts).

real_if_close changes the dtype with the data, so it works on concrete arrays only; traced, it raises a
TypeError that says what to use instead (tnp.real, when the imaginary parts are known to vanish).
"""
import numpy as np

from ..core.trace import Tracer, bind
from ..primitives import complex_parts as cp
from ._base import asarray, aval
from .shape_ops import ones_like, zeros_like
from .ufuncs import arctan2, bools_as_int8, equal, multiply, not_equal


def _is_complex(x):
    return aval(x).dtype.kind == "c"


def real(val):
    val = asarray(val)
    return bind(cp.real_p, val) if _is_complex(val) else val


def imag(val):
    val = asarray(val)
    return bind(cp.imag_p, val) if _is_complex(val) else zeros_like(val)


def conjugate(x):
    (x,) = bools_as_int8(asarray(x))
    return bind(cp.conj_p, x) if _is_complex(x) else x


conj = conjugate


def angle(z, deg=False):
    """The counterclockwise angle from the positive real axis, in radians (degrees with deg=True); of a real z
    NumPy's arctan2(0, z), whose dtype follows from the Python 0 (bool: float64, int8: float16)."""
    z = asarray(z)
    a = arctan2(imag(z), real(z)) if _is_complex(z) else arctan2(0, z)
    return multiply(a, 180 / np.pi) if deg else a


def iscomplex(x):
    """Elementwise: whether the imaginary part is nonzero (False throughout for a real array)."""
    x = asarray(x)
    return not_equal(imag(x), 0) if _is_complex(x) else zeros_like(x, np.bool_)


def isreal(x):
    """Elementwise: whether the imaginary part is zero (True throughout for a real array)."""
    x = asarray(x)
    return equal(imag(x), 0) if _is_complex(x) else ones_like(x, np.bool_)


def iscomplexobj(x):
    """Whether x has a complex dtype (its type, not its values: known while tracing)."""
    return _is_complex(asarray(x))


def isrealobj(x):
    return not iscomplexobj(x)


def real_if_close(a, tol=100):
    """NumPy's: the real part if every imaginary part is within tol machine epsilons of zero, else a."""
    a = asarray(a)
    if not _is_complex(a):
        return a
    if isinstance(a, Tracer):
        raise TypeError(f"real_if_close of a traced {aval(a).str_short()}: its result's dtype depends on the "
                        "values, which are not known while tracing; use tnp.real(a) where the imaginary parts are "
                        "known to vanish, or call it outside the traced function")
    return np.real_if_close(a, tol)

