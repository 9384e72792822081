"""Argument handling shared by tracejit.scipy.special and tracejit.scipy.stats."""
from ..numpy._base import aval, broadcast_operands, promote


def real_args(name, *args):
    """The arguments promoted to one float dtype (integers to the default float) and broadcast to one shape;
    complex arguments are refused (a TypeError, as the real primitives' shape rules refuse them; JAX's
    jax.scipy.special raises ValueError or TypeError depending on the function)."""
    xs = promote(*args, to_float=True)
    if aval(xs[0]).dtype.kind == "c":
        raise TypeError(f"{name} does not support complex-valued inputs, got {aval(xs[0]).dtype}")
    return broadcast_operands(*xs, op=name)
