"""The parts of complex numbers: real, imag, conj and complex (two real arrays into one complex), one table row
each (elementwise_rules.elementwise). Their transposes are JAX's: real's cotangent ct comes back as ct + 0j,
imag's as -ct j (imag z = Re(-i z)), complex's as (Re ct, -Im ct), conj's as conj(ct), so that reverse mode
follows JAX's convention for complex gradients (grad of |z|**2 at 3+4j is 6-8j).

In generated code a complex value is a pair of registers (backend.rules, "complex arithmetic"), so these are
free: they pick or pair parts.
"""
import numpy as np

from ..backend.rules import Elementwise
from ..core.ad_util import UndefinedPrimal, scalar
from ..core.avals import complex_dtype, real_dtype
from ..core.ops import ops
from .base import LINEAR, unbroadcast
from .elementwise_rules import COMPLEX, FLOAT, elementwise


def _pair(x, y):
    """x + y j in the complex dtype of x's precision."""
    x = np.asarray(x)
    out = np.empty(np.broadcast_shapes(x.shape, np.shape(y)), complex_dtype(x.dtype))
    out.real, out.imag = x, y
    return out


def _transpose_complex(ct, x, y):
    return [unbroadcast(ops.real(ct), x) if isinstance(x, UndefinedPrimal) else None,
            unbroadcast(ops.imag(ops.neg(ct)), y) if isinstance(y, UndefinedPrimal) else None]


real_p = elementwise("real", np.real, COMPLEX, LINEAR, Elementwise(lambda b, x: x[0]), out_dtype=real_dtype,
                     transpose=lambda ct, x: [ops.complex(ct, scalar(0, ct))], linear=True)
imag_p = elementwise("imag", np.imag, COMPLEX, LINEAR, Elementwise(lambda b, x: x[1]), out_dtype=real_dtype,
                     transpose=lambda ct, x: [ops.complex(scalar(0, ct), ops.neg(ct))], linear=True)
conj_p = elementwise("conj", np.conjugate, COMPLEX, LINEAR,
                     Elementwise(lambda b, x: (x[0], b(f"fneg {b.ty()} {x[1]}"))),
                     transpose=lambda ct, x: [ops.conj(ct)], linear=True, involution=True)
complex_p = elementwise("complex", _pair, FLOAT, LINEAR, Elementwise(lambda b, x, y: (x, y)), out_dtype=complex_dtype,
                        transpose=_transpose_complex, linear=True)
