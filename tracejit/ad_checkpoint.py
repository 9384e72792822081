"""Gradient checkpointing (rematerialisation), as jax.checkpoint: trade compute for memory in reverse mode.

    tj.checkpoint(f, prevent_cse=True, policy=None, static_argnums=())   (tj.remat is the same function)
    tj.checkpoint_policies.<policy>                                      which intermediates may be saved
    tj.ad_checkpoint.checkpoint_name(x, "name")                          names a value for the name policies
    tj.ad_checkpoint.print_saved_residuals(f, *args)                     what reverse mode stores for f

By default reverse mode stores every intermediate value the backward pass reads (the residuals). A
checkpointed function stores only its inputs (and what the policy allows) and recomputes the rest when the
backward pass reaches it: memory falls from every layer's intermediates to one block's, for one more forward
pass. The machinery is the `checkpoint` primitive (tracejit/primitives/remat.py).
"""
import functools
import types

from .core.api_util import flatten_args, name_of, trace_pytree
from .core.avals import is_inexact
from .core.ir import Literal
from .core.ir_surgery import hoist_consts
from .core.pytree import tree_map, tree_unflatten
from .core.trace import bind
from .primitives.remat import checkpoint_p, name_p
from .traceback_util import api_boundary
from .transforms.ad import linearize_ir

# ------------------------------------------------------------------------------------------- policies
# A policy is called as policy(prim, *input avals, **params) for each equation of the checkpointed function
# and says whether its outputs may be saved (True) or must be recomputed (False).


def everything_saveable(*_, **__):
    """Save everything: as if the function were not checkpointed."""
    return True


def nothing_saveable(*_, **__):
    """Save nothing but the inputs: the default of checkpoint."""
    return False


DOTS = ("dot_general", "conv_general_dilated")


def dots_saveable(prim, *_, **__):
    """Save the results of matrix products and convolutions; recompute the cheap elementwise work."""
    return prim.name in DOTS


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim, *_, **params):
    """Save the results of matrix products without batch dimensions."""
    if prim.name != "dot_general":
        return False
    _, (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


class _NamePolicy:
    """Saves values named with checkpoint_name: those in `names` (keep=True), or all but those."""

    def __init__(self, names, keep, what):
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"{what}: names must be strings, got {n!r}")
        self.names, self.keep = frozenset(names), keep
        self.__name__ = f"{what}({', '.join(map(repr, sorted(self.names)))})"

    def __call__(self, prim, *_, **params):
        return prim is name_p and (params["name"] in self.names) == self.keep

    def __eq__(self, other):
        return isinstance(other, _NamePolicy) and (self.names, self.keep) == (other.names, other.keep)

    def __hash__(self):
        return hash((self.names, self.keep))

    def __repr__(self):
        return self.__name__


def save_only_these_names(*names):
    """Save only the values named (checkpoint_name) with one of `names`."""
    return _NamePolicy(names, True, "save_only_these_names")


def save_any_names_but_these(*names):
    """Save the named values (checkpoint_name) except those named with one of `names`."""
    return _NamePolicy(names, False, "save_any_names_but_these")


def save_anything_except_these_names(*names):
    """Save every value except those named with one of `names`, which are recomputed."""
    excluded = frozenset(names)

    def policy(prim, *_, **params):
        return not (prim is name_p and params["name"] in excluded)
    policy.__name__ = f"save_anything_except_these_names({', '.join(map(repr, sorted(excluded)))})"
    return policy


def save_from_both_policies(policy_1, policy_2):
    """Save what either policy saves."""
    def policy(prim, *args, **params):
        return bool(policy_1(prim, *args, **params)) or bool(policy_2(prim, *args, **params))
    policy.__name__ = f"save_from_both_policies({name_of(policy_1)}, {name_of(policy_2)})"
    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable, nothing_saveable=nothing_saveable, dots_saveable=dots_saveable,
    checkpoint_dots=checkpoint_dots, dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=checkpoint_dots_with_no_batch_dims,
    save_only_these_names=save_only_these_names, save_any_names_but_these=save_any_names_but_these,
    save_anything_except_these_names=save_anything_except_these_names,
    save_from_both_policies=save_from_both_policies)

# -------------------------------------------------------------------------------------------- the API


def checkpoint_name(x, name):
    """x (a pytree) unchanged, its leaves named `name` for the policies save_only_these_names and
    save_any_names_but_these."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a string, got {type(name).__name__} {name!r}")
    return tree_map(lambda leaf: bind(name_p, leaf, name=name), x)


def _static_positions(static_argnums, count, fun):
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    for i in nums:
        if not isinstance(i, int) or isinstance(i, bool) or not -count <= i < count:
            raise ValueError(f"checkpoint: static_argnums {static_argnums!r} is out of range: {name_of(fun)} was "
                             f"called with {count} positional argument{'s' if count != 1 else ''}")
    return {i % count for i in nums}


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=(), static_argnames=()):
    """fun, made to recompute its intermediate values in the backward pass of reverse mode instead of storing
    them (as jax.checkpoint). Values and derivatives are unchanged; grad of a checkpointed function stores its
    inputs and what `policy` saves, and runs its forward computation again when the backward pass needs it.

    prevent_cse: keep jit's passes from merging the recomputation with the forward computation (which would
        undo the checkpoint); False lets them, which is right inside a scan, whose iterations never merge.
        A tuple of bools (JAX's per-argument form) counts as True when any entry is.
    policy: which intermediates may be saved after all, one of tj.checkpoint_policies (None: none).
    static_argnums, static_argnames: arguments that are Python values, not arrays (as jit's).
    Nested checkpoints, checkpoints inside scan bodies and of jitted functions compose.
    """
    if isinstance(prevent_cse, (tuple, list)):
        prevent_cse = any(prevent_cse)
    if not isinstance(prevent_cse, bool):
        raise TypeError(f"checkpoint: prevent_cse must be a bool or a tuple of bools, got {prevent_cse!r}")
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be one of tj.checkpoint_policies (a function), got {policy!r}")
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)

    @api_boundary
    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        statics = _static_positions(static_argnums, len(args), fun)
        dyn_args = [a for i, a in enumerate(args) if i not in statics]
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in names}

        def dyn_fun(*dargs, **dkwargs):
            given = iter(dargs)
            full = [args[i] if i in statics else next(given) for i in range(len(args))]
            return fun(*full, **dkwargs, **{k: kwargs[k] for k in names if k in kwargs})

        leaves, arg_names, in_tree = flatten_args(dyn_fun, dyn_args, dyn_kwargs)
        closed, out_tree = trace_pytree(dyn_fun, leaves, arg_names, in_tree, fun_name=name_of(fun))
        call, consts = hoist_consts(closed)
        outs = bind(checkpoint_p, *consts, *leaves, call=call, policy=policy, prevent_cse=prevent_cse,
                    differentiated=False)
        return tree_unflatten(out_tree, outs)

    return checkpointed


remat = checkpoint

# ----------------------------------------------------------------------------------- saved residuals


def saved_residuals(f, *args, **kwargs):
    """[(aval, where it comes from)] for each value reverse mode stores for the backward pass of f at these
    arguments (differentiated with respect to every float input), as jax.ad_checkpoint.saved_residuals:
    literals, constants, arguments, then outputs of equations in program order."""
    leaves, names, in_tree = flatten_args(f, args, kwargs)
    closed, _ = trace_pytree(f, leaves, names, in_tree, fun_name=name_of(f))
    primal, _, num_res = linearize_ir(closed, [is_inexact(a.dtype) for a in closed.in_avals])
    ir = primal.ir
    found = {}
    for r in ir.outvars[len(ir.outvars) - num_res:]:
        found.setdefault(id(r), _source_of(r, ir, names))
    return [(aval, text) for _, aval, text in sorted(found.values(), key=lambda s: s[0])]


def _source_of(x, ir, names, at=()):
    """((kind rank, position...), aval, text) for a residual x of ir (nested at equation positions `at`): an
    argument, a constant, a literal or an output of an equation, followed through checkpoint equations to the
    equation of their body that computes it."""
    if isinstance(x, Literal):
        return (0,), x.aval, "from a literal"
    if x in ir.constvars:
        return (1, *at, ir.constvars.index(x)), x.aval, "from a constant"
    if x in ir.invars:
        i = ir.invars.index(x)
        return (2, i), x.aval, f"from the argument {names[i]}"
    k, eqn = next((k, e) for k, e in enumerate(ir.eqns) if x in e.outvars)
    if eqn.prim is checkpoint_p:
        body = eqn.params["call"].ir
        inner = body.outvars[eqn.outvars.index(x)]
        if isinstance(inner, Literal) or inner not in body.invars:
            return _source_of(inner, body, names, (*at, k))
        return _source_of(eqn.inputs[body.invars.index(inner)], ir, names, at)
    where = _summarize(eqn.source_info)
    if eqn.prim is name_p:
        return (3, *at, k), x.aval, f"named '{eqn.params['name']}' from {where}"
    return (3, *at, k), x.aval, f"output of {eqn.prim.name} from {where}"


def _summarize(source_info):
    if source_info is None:
        return "an unknown location"
    filename, line, function = source_info
    return f"{filename}:{line} ({function})"


def print_saved_residuals(f, *args, **kwargs):
    """Print what reverse mode stores for f at these arguments, one value a line: its type and where it comes
    from (an argument, or the operation and source line that computes it), as JAX's does."""
    for aval, text in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {text}")


__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "print_saved_residuals", "remat",
           "saved_residuals"]
