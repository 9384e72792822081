"""What the primitive families share to state their rules: a jvp rule from a table row's derivative (linear, one
partial per operand, or zero), linear primitives, summing a cotangent down to a broadcast operand, and the
identities of max and min.

jvp(primals, tangents, **params) -> (primal_out, tangent_out); tangents may be symbolic Zeros.
"""
import numpy as np

from ..core.ad_util import Zero, add_tangents, aval, instantiate, is_inexact_aval
from ..core.avals import is_float
from ..core.ops import ops
from ..core.trace import Primitive, bind

LINEAR, ZERO = "linear", "zero"   # derivatives that are not partials: the op itself, or none at all


def jvp_rule(prim, derivative):
    """The jvp rule of a table row's `derivative`:

    - ZERO: the output does not vary with the operands (comparisons, rounding, indices);
    - LINEAR: the tangent is the op applied to the tangents (the row gives the `transpose` rule);
    - a partial(t, *operands, out, **params) per operand, the tangent contributed by that operand's tangent t
      (None: not differentiable there), or a single one for a unary op.
    """
    if derivative == ZERO:
        return zero_jvp(prim)
    if derivative == LINEAR:
        return linear_jvp(prim)
    return partials_jvp(prim, *(derivative if isinstance(derivative, tuple) else (derivative,)))


def linear_primitive(name, shape_rule, impl, transpose, linear_args=None, **rules_and_flags):
    """A primitive linear in the operands `linear_args` (all by default; the others are indices)."""
    prim = Primitive(name, shape_rule, impl, transpose=transpose, linear=True, **rules_and_flags)
    return prim.set(jvp=linear_jvp(prim, linear_args))


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
        if not terms or not is_inexact_aval(aval(out)):
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


def unbroadcast(ct, target):
    """Sum a cotangent down to a rank-0 operand that an elementwise op broadcast implicitly."""
    if aval(target).shape == aval(ct).shape:
        return ct
    return ops.reduce_sum(ct, axes=tuple(range(aval(ct).ndim)))


def identity(dtype, largest):
    """The identity of min (largest=True) or max: +-inf, an integer type's extreme, or True/False."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return largest
    if is_float(dtype):
        return np.inf if largest else -np.inf
    info = np.iinfo(dtype)
    return info.max if largest else info.min
