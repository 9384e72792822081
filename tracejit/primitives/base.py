"""Helpers shared by the primitives' rules: symbolic zeros, undefined primals, and rule builders."""
import numpy as np

from ..core.avals import aval_of
from ..core.trace import Tracer, bind


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
    from .shapes import broadcast_in_dim_p
    fill = np.asarray(value, dtype=aval_.dtype)[()]
    return bind(broadcast_in_dim_p, fill, shape=aval_.shape, broadcast_dimensions=())


def zeros(aval_):
    return full(aval_, 0)


def instantiate(t):
    return zeros(t.aval) if isinstance(t, Zero) else t


def is_float_aval(a):
    return a.dtype.kind == "f"


# -------------------------------------------------------------------------------------- jvp builders
# jvp(primals, tangents, **params) -> (primal_out, tangent_out); tangents may be Zero.

def linear_jvp(prim, linear_args=None):
    """For a primitive linear in the arguments `linear_args` (all by default): the tangent is the
    primitive applied to those arguments' tangents, the other arguments (indices, shapes) unchanged."""

    def jvp(primals, tangents, **params):
        out = bind(prim, *primals, **params)
        positions = range(len(primals)) if linear_args is None else linear_args
        if all(isinstance(tangents[i], Zero) for i in positions):
            return out, _zero_like_out(prim, out)
        args = [instantiate(tangents[i]) if i in positions else p for i, p in enumerate(primals)]
        return out, bind(prim, *args, **params)

    return jvp


def _zero_like_out(prim, out):
    return [Zero(aval(o)) for o in out] if prim.multiple_results else Zero(aval(out))


def partials_jvp(prim, *partials):
    """jvp from one rule per argument: partials[i](t_i, *primals, out=out, **params) is argument i's
    contribution to the output tangent (None: the argument is not differentiable)."""

    def jvp(primals, tangents, **params):
        out = bind(prim, *primals, **params)
        terms = [rule(t, *primals, out=out, **params)
                 for rule, t in zip(partials, tangents) if rule is not None and not isinstance(t, Zero)]
        if not terms or not is_float_aval(aval(out)):
            return out, Zero(aval(out))
        total = terms[0]
        for term in terms[1:]:
            total = add_tangents(total, term)
        return out, total

    return jvp


def zero_jvp(prim):
    """Outputs that are constant under perturbation (comparisons, integer results, stop_gradient)."""

    def jvp(primals, tangents, **params):
        out = bind(prim, *primals, **params)
        return out, _zero_like_out(prim, out)

    return jvp


def add_tangents(a, b):
    if isinstance(a, Zero):
        return b
    if isinstance(b, Zero):
        return a
    from .elementwise import add_p
    return bind(add_p, a, b)


def unbroadcast(ct, target):
    """Sum a cotangent down to a rank-0 operand that an elementwise op broadcast implicitly."""
    if aval(target).shape == aval(ct).shape:
        return ct
    from .reductions import reduce_sum_p
    return bind(reduce_sum_p, ct, axes=tuple(range(aval(ct).ndim)))


# --------------------------------------------------------------------------------- batching helpers
# batch(batched_args, batch_dims, **params) -> (out, out_batch_dim); a batch dim is an int, or None for an
# argument that is the same for every example.

def batched_axis(axis, bdim):
    """Where axis `axis` of one example lies in a value whose batch axis is `bdim`."""
    return axis + (axis >= bdim)


def move_batch_axis(x, bdim, dst, size):
    """x with its batch axis at `dst`: transposed there, or broadcast along it when x is unbatched."""
    from .shapes import broadcast_in_dim_p, transpose_p
    shape = aval(x).shape
    if bdim is None:
        out_shape = shape[:dst] + (size,) + shape[dst:]
        return bind(broadcast_in_dim_p, x, shape=out_shape,
                    broadcast_dimensions=tuple(i for i in range(len(out_shape)) if i != dst))
    if bdim == dst:
        return x
    permutation = [i for i in range(len(shape)) if i != bdim]
    permutation.insert(dst, bdim)
    return bind(transpose_p, x, permutation=tuple(permutation))
