"""Derivative helpers of JAX's top level, built on tracejit's own transformations: custom_gradient (on
custom_vjp), linear_transpose (on vjp) and closure_convert (a function's closed-over traced values made explicit
arguments, so that a custom_vjp rule can return their cotangents)."""
import functools

import numpy as np

from .core.ad_util import aval
from .core.api_util import canonicalize_input, leaf_aval, name_of
from .core.avals import ShapedArray, is_inexact
from .core.ir import ClosedIR
from .core.ir_surgery import hoist_consts
from .core.pytree import LEAF, register_pytree_node, tree_flatten, tree_unflatten
from .core.trace import Tracer, eval_ir, trace_flat
from .custom_derivatives import custom_vjp
from .derivatives import vjp


def _trace_flat_fun(fun, leaves, in_tree, what):
    """(ClosedIR of fun on the pytree of abstract leaves, a box holding its output tree)."""
    box = {}

    def flat(*xs):
        out_leaves, box["out_tree"] = tree_flatten(fun(*tree_unflatten(in_tree, xs)))
        return out_leaves

    leaves = [canonicalize_input(x, f"{what} argument leaf {i}") for i, x in enumerate(leaves)]
    return trace_flat(flat, [leaf_aval(x).strip_weak() for x in leaves], fun_name=name_of(fun)), box


# --------------------------------------------------------------------------------------------- custom_gradient

class _Rule:
    """custom_gradient's residuals: the gradient rule traced to an IR (an identity-hashed holder in the pytree's
    aux data) and the values it closes over (the leaves), so that custom_vjp can carry it from fwd to bwd."""

    def __init__(self, body, in_tree, consts):
        self.body, self.in_tree, self.consts = body, in_tree, list(consts)

    def __call__(self, cotangent):
        cts, tree = tree_flatten(cotangent)
        if tree != self.in_tree:
            raise TypeError(f"custom_gradient: the cotangent has structure {tree}, the function's output {self.in_tree}")
        closed, out_tree = self.body
        result = tree_unflatten(out_tree, eval_ir(closed, *self.consts, *cts))
        return (result,) if out_tree == LEAF else tuple(result)


register_pytree_node(_Rule, lambda r: (r.consts, (_Holder(r.body), r.in_tree)),
                     lambda aux, consts: _Rule(aux[0].value, aux[1], consts))


class _Holder:
    """A value in a treedef's aux data, compared by identity."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def custom_gradient(fun):
    """A function with its reverse-mode rule written inline, as jax.custom_gradient: fun(*args) returns
    (output, rule) where rule(output_cotangent) returns the cotangent of each argument (a tuple; one value for a
    function of one argument). The rule may close over values computed in fun. Forward mode (jvp) is refused, as
    for every custom_vjp function."""
    @custom_vjp
    @functools.wraps(fun)
    def wrapped(*args):
        return fun(*args)[0]

    def fwd(*args):
        ans, rule = fun(*args)
        leaves, out_tree = tree_flatten(ans)
        box = {}

        def flat_rule(*cts):
            result, box["tree"] = tree_flatten(rule(tree_unflatten(out_tree, cts)))
            return result

        closed = trace_flat(flat_rule, [aval(x).strip_weak() for x in leaves], fun_name=name_of(rule))
        body, consts = hoist_consts(closed)
        return ans, _Rule((body, box["tree"]), out_tree, consts)

    def bwd(rule, cotangent):
        return rule(cotangent)

    wrapped.defvjp(fwd, bwd)
    return wrapped


# --------------------------------------------------------------------------------------------- linear_transpose

def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of fun, which is promised to be linear, as jax.linear_transpose: primals give the types of
    its arguments (arrays or ShapeDtypeStructs; their values are not used), and the result maps a cotangent of
    fun's output to the tuple of cotangents of its arguments. Its inputs and outputs must be float or complex."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    leaves, in_tree = tree_flatten(primals)
    in_avals = [a.strip_weak() for a in map(_aval_of, leaves)]
    zeros = [np.zeros(a.shape, a.dtype) for a in in_avals]
    out, pullback = vjp(fun, *tree_unflatten(in_tree, zeros))
    out_leaves, out_tree = tree_flatten(out)
    out_avals = [leaf_aval(x).strip_weak() for x in out_leaves]
    dtypes = [a.dtype for a in in_avals + out_avals]
    if not all(is_inexact(d) for d in dtypes):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or complex] functions, but "
                        f"got {[a.dtype for a in in_avals]} -> {[a.dtype for a in out_avals]}.")

    def transposed(out_cotangent):
        cts, tree = tree_flatten(out_cotangent)
        if tree != out_tree:
            raise TypeError(f"cotangent tree does not match function output, expected {out_tree} but got {tree}")
        got = [_aval_of(c).strip_weak() for c in cts]
        if [(a.shape, a.dtype) for a in got] != [(a.shape, a.dtype) for a in out_avals]:
            raise TypeError(f"cotangent type does not match function output, expected {out_avals} but got {got}")
        return pullback(out_cotangent)

    transposed.__name__ = f"transpose({name_of(fun)})"
    return transposed


def _aval_of(x):
    """The type of an argument: arrays, tracers and scalars have theirs; a ShapeDtypeStruct (or anything else
    with .shape and .dtype) gives it."""
    if isinstance(x, ShapedArray):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (Tracer, np.ndarray, np.generic)):
        return ShapedArray(x.shape, x.dtype)
    return leaf_aval(canonicalize_input(x, "linear_transpose argument"))


# ----------------------------------------------------------------------------------------------- closure_convert

def closure_convert(fun, *example_args):
    """(converted, consts), as jax.closure_convert: fun traced on the types of example_args, with the traced
    values it closes over (tracers of an enclosing jit, grad or vmap) taken out as `consts`, so that
    converted(*args, *consts) computes fun(*args). Use it to pass a closure to a custom_vjp function whose rule
    must return cotangents for those values too. Concrete arrays fun closes over stay inside converted."""
    leaves, in_tree = tree_flatten(example_args)
    closed, box = _trace_flat_fun(fun, leaves, in_tree, f"closure_convert {name_of(fun)}")
    hoisted = [i for i, c in enumerate(closed.consts) if isinstance(c, Tracer)]

    def converted(*args_and_consts):
        split = len(args_and_consts) - len(hoisted)
        args, values = args_and_consts[:split], args_and_consts[split:]
        consts = list(closed.consts)
        for i, v in zip(hoisted, values):
            consts[i] = v
        flat, tree = tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(f"closure_convert {name_of(fun)}: the converted function takes arguments of structure "
                            f"{in_tree} followed by {len(hoisted)} constants, got {tree}")
        return tree_unflatten(box["out_tree"], eval_ir(ClosedIR(closed.ir, consts), *flat))

    converted.__name__ = name_of(fun)
    return converted, [closed.consts[i] for i in hoisted]


__all__ = ["closure_convert", "custom_gradient", "linear_transpose"]
