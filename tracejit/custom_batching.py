"""custom_vmap and sequential_vmap, as jax.custom_batching: a function with a batching rule of its own.

A call traces the function to an IR and binds `custom_vmap_call`, whose params hold that IR and the rule (values the
function closes over become its first `num_consts` operands). Evaluated or compiled, it is the function (the IR,
inlined by the passes); only vmap reads the rule, which it calls with the batch size, which arguments are
batched, and the arguments with their batch axis first, and which returns the outputs and which of them are
batched. Forward mode differentiates through the rule as JAX does (jvp of a custom_vmap function is a custom_vmap
function whose rule is the jvp of the rule); reverse mode is not supported, as in JAX: combine it with custom_vjp
(custom_vjp on the outside).
"""
import functools
import inspect

from .core.ad_util import Zero, aval, instantiate
from .core.api_util import canonicalize_input, leaf_aval, name_of
from .core.batching import move_batch_axis
from .core.ir_surgery import hoist_consts
from .core.pytree import tree_flatten, tree_map, tree_unflatten
from .core.trace import Primitive, bind, eval_ir, trace_flat
from .derivatives import jvp
from .lax.control_flow import map as lax_map
from .numpy import broadcast_to
from .primitives.custom_jvp_call import call_impl, call_shape


def _bind(fun, rule, leaves, name):
    """custom_vmap_call of fun (flat: arrays -> list of arrays) with the flat rule, on leaves."""
    call, consts = hoist_consts(trace_flat(fun, [leaf_aval(x).strip_weak() for x in leaves], fun_name=name))
    return bind(custom_vmap_call_p, *consts, *leaves, call=call, num_consts=len(consts), rule=rule)


def _batch(args, dims, call, num_consts, rule):
    if any(d is not None for d in dims[:num_consts]):
        raise ValueError(f"vmap of custom_vmap function {rule.__name__}: the function closes over a value that is "
                         "batched; pass it as an argument instead, so that its rule sees it")
    sizes = {aval(x).shape[d] for x, d in zip(args, dims) if d is not None}
    axis_size = sizes.pop()
    operands = [x if d is None else move_batch_axis(x, d, 0, axis_size)
                for x, d in zip(args[num_consts:], dims[num_consts:])]
    outs, out_batched = rule(axis_size, [d is not None for d in dims[num_consts:]], *operands)
    for k, (o, b, a) in enumerate(zip(outs, out_batched, call.out_avals)):
        want = (axis_size, *a.shape) if b else a.shape
        if aval(o).shape != want:
            raise ValueError(f"custom_vmap rule {rule.__name__}: output {k} is {aval(o).str_short()}, but "
                             f"{'batched' if b else 'unbatched'} {a.str_short()} makes it shape {want}")
    return list(outs), [0 if b else None for b in out_batched]


def _jvp(primals, tangents, call, num_consts, rule):
    """The outputs (the call itself, on the primals) and their tangents: a second custom_vmap_call, of the jvp of
    the function, whose rule is the jvp of the rule (as JAX's custom_vmap_jvp). The tangent call is linear in the
    tangents but has no transpose: reverse mode stops there with custom_vmap's error."""
    if any(not isinstance(t, Zero) for t in tangents[:num_consts]):
        raise TypeError(f"a custom_vmap function ({rule.__name__}) was differentiated with respect to a value it "
                        "closes over; pass that value as an argument instead")
    consts, ps = primals[:num_consts], list(primals[num_consts:])
    ts = [instantiate(t) for t in tangents[num_consts:]]
    n = len(ps)

    def tangent_fun(*pts):
        return list(jvp(lambda *p: eval_ir(call, *consts, *p), list(pts[:n]), list(pts[n:]))[1])

    def tangent_rule(axis_size, in_batched, *pts):
        both = [a or b for a, b in zip(in_batched[:n], in_batched[n:])]
        pts = [broadcast_to(x, (axis_size, *aval(x).shape)) if not b and (both * 2)[k] else x
               for k, (x, b) in enumerate(zip(pts, in_batched))]
        box = {}

        def batched_fun(*p):
            outs, box["batched"] = rule(axis_size, both, *p)
            return list(outs)
        touts = jvp(batched_fun, list(pts[:n]), list(pts[n:]))[1]
        return list(touts), box["batched"]
    tangent_rule.__name__ = f"jvp({rule.__name__})"
    outs = bind(custom_vmap_call_p, *primals, call=call, num_consts=num_consts, rule=rule)
    return outs, _bind(tangent_fun, tangent_rule, [*ps, *ts], tangent_rule.__name__)


def _transpose(cts, *args, call, num_consts, rule):
    raise ValueError(f"custom_vmap function {rule.__name__}: reverse-mode differentiation (grad, vjp) of a "
                     "custom_vmap function is not supported, as in JAX; to give it a gradient, put a custom_vjp "
                     "around it (custom_vjp on the outside)")


custom_vmap_call_p = Primitive("custom_vmap_call", call_shape, call_impl, multiple_results=True, jvp=_jvp,
                               batch=_batch, transpose=_transpose, inline=True)


class custom_vmap:
    """A function with a batching rule of its own, as jax.custom_batching.custom_vmap: `@custom_vmap def f(x, y):
    ...`, then `@f.def_vmap def rule(axis_size, in_batched, xs, ys): ... return out, out_batched`, where
    in_batched is a pytree of bools like the arguments (each batched argument has the batch axis first) and
    out_batched one like the output. Outside vmap f is itself; jvp differentiates through the rule; reverse mode
    is not supported (as in JAX: put a custom_vjp around it)."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun, updated=())
        self.fun, self.vmap_rule, self.__name__ = fun, None, name_of(fun)

    def def_vmap(self, vmap_rule):
        """Sets the batching rule (see the class); returns it unchanged, as JAX's."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {self.__name__} using "
                                 "def_vmap.")
        if kwargs:
            bound = inspect.signature(self.fun).bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        leaves, in_tree = tree_flatten(tuple(args))
        leaves = [canonicalize_input(x, f"{self.__name__} argument leaf {i}") for i, x in enumerate(leaves)]
        box = {}

        def flat_fun(*xs):
            outs, box["out_tree"] = tree_flatten(self.fun(*tree_unflatten(in_tree, xs)))
            return outs

        def flat_rule(axis_size, in_batched, *xs):
            out, out_batched = self.vmap_rule(axis_size, tree_unflatten(in_tree, in_batched),
                                              *tree_unflatten(in_tree, xs))
            outs, tree = tree_flatten(out)
            flags, flags_tree = tree_flatten(out_batched)
            if tree != box["out_tree"] or flags_tree != tree:
                raise ValueError(f"structure of output value and output batching specification returned by custom "
                                 f"vmap rule ({self.vmap_rule.__name__}) do not match that of original custom-vmapped "
                                 f"function ({self.__name__}): {box['out_tree']}, rule output {tree}, batching "
                                 f"specification {flags_tree}")
            return outs, [bool(b) for b in flags]
        flat_rule.__name__ = name_of(self.vmap_rule)
        outs = _bind(flat_fun, flat_rule, leaves, self.__name__)
        return tree_unflatten(box["out_tree"], outs)


def sequential_vmap(f):
    """f as a custom_vmap function whose batching rule calls it once per example, in a loop (lax.map over the
    batched arguments, the others passed whole): for functions that do not batch (a callback, say), as
    jax.custom_batching.sequential_vmap."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        leaves, tree = tree_flatten(tuple(args))
        flags = tree_flatten(in_batched)[0]
        mapped = [x for x, b in zip(leaves, flags) if b]

        def one(xs):
            it = iter(xs)
            merged = [next(it) if b else x for x, b in zip(leaves, flags)]
            return f(*tree_unflatten(tree, merged))
        out = lax_map(one, mapped)
        return out, tree_map(lambda _: True, out)
    rule.__name__ = f"sequential_vmap({f.__name__})"
    return f


__all__ = ["custom_vmap", "sequential_vmap"]
