"""Argument handling shared by tracejit.scipy.special and tracejit.scipy.stats."""
from ..numpy._base import aval, broadcast_operands, promote


def real_args(name, *args):
    """The arguments promoted to one float dtype (integers to the default float) and broadcast to one shape;
    complex arguments are refused, as JAX refuses them."""
    xs = promote(*args, to_float=True)
    if aval(xs[0]).dtype.kind == "c":
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return broadcast_operands(*xs, op=name)
