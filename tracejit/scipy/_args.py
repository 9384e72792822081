"""Argument handling shared by tracejit.scipy.special and tracejit.scipy.stats."""
from ..numpy._base import aval, broadcast_operands, promote


def real_args(name, *args):
    """The arguments promoted to one float dtype (integers and bools to float64, as SciPy's; float16 and bfloat16
    kept, as JAX's) and broadcast to one shape;
    complex arguments are refused (a TypeError, as the real primitives' shape rules refuse them; JAX's
    jax.scipy.special raises ValueError or TypeError depending on the function)."""
    xs = promote(*args, to_float="float64")
    if aval(xs[0]).dtype.kind == "c":
        raise TypeError(f"{name} does not support complex-valued inputs, got {aval(xs[0]).dtype}")
    return broadcast_operands(*xs, op=name)


def standardized(name, x, loc, scale):
    """(x - loc) / scale of the promoted, broadcast arguments."""
    x, loc, scale = real_args(name, x, loc, scale)
    return (x - loc) / scale


def located(name, standard, q, loc, scale):
    """standard(q) * scale + loc: a quantile function from the standard distribution's."""
    q, loc, scale = real_args(name, q, loc, scale)
    return standard(q) * scale + loc
