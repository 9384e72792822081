"""The vocabulary of derivative rules, below every primitive: symbolic zeros, undefined primals, and the few
values rules make of them (zeros, sums of tangents). The primitives those need are looked up by name when a
rule runs (core.ops), so this module imports none of them."""
import numpy as np

from .avals import aval_of, is_inexact
from .ops import ops
from .trace import Tracer


def aval(x):
    return x.aval if isinstance(x, (Tracer, UndefinedPrimal, Zero)) else aval_of(x)


class Zero:
    """A symbolic zero tangent or cotangent: costs nothing until a rule needs it as an array."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval.strip_weak()

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


class UndefinedPrimal:
    """Marks the linear input of an equation being transposed: only its type is known."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def scalar(value, like):
    """A Python number as a 0-d value of `like`'s dtype (it prints as a literal in the IR)."""
    return np.asarray(value, dtype=aval(like).dtype)[()]


def full(aval_, value):
    fill = np.asarray(value, dtype=aval_.dtype)[()]
    return ops.broadcast_in_dim(fill, shape=aval_.shape, broadcast_dimensions=())


def zeros(aval_):
    return full(aval_, 0)


def instantiate(t):
    return zeros(t.aval) if isinstance(t, Zero) else t


def is_inexact_aval(a):
    """Whether values of this type have tangents: floats and complex numbers (as JAX's inexact dtypes)."""
    return is_inexact(a.dtype)


def add_tangents(a, b):
    if isinstance(a, Zero):
        return b
    if isinstance(b, Zero):
        return a
    return ops.add(a, b)
