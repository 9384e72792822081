"""custom_jvp and custom_vjp: functions with user-written derivative rules, with JAX semantics.

A call traces the function to an IR and binds a call primitive whose params hold that IR and the rules:
`custom_jvp_call` (tracejit.primitives.custom_jvp_call, below tracejit.numpy, which binds it too: its jvp calls
the user's jvp rule) and `custom_vjp_call` (its jvp runs the user's fwd and
emits `custom_lin`, a linear primitive whose transpose calls the user's bwd). Values the function closes over
become explicit operands (the first `num_consts`), so the equation survives jit and nested traces.
Evaluating a call primitive evaluates its IR. Batching rules for these primitives belong to the vmap
transform (set with `prim.set(batch=...)`, as for every other primitive).
"""
import dataclasses
import functools
import inspect

from .batching import vmap
from .core.ad_util import Zero, aval, instantiate, zeros
from .core.api_util import canonicalize_input, leaf_aval, name_of
from .core.batching import move_batch_axis
from .core.ir_surgery import hoist_consts
from .core.pytree import tree_flatten, tree_map, tree_unflatten, treedef_flatten_up_to
from .core.trace import Primitive, bind, standing_in, trace_flat
from .numpy._base import astype
from .primitives.custom_jvp_call import call_impl, call_shape, custom_jvp_call_p, no_closed_over_tangents
from .transforms.vmap import vmap_ir


def _custom_vjp_call_jvp(primals, tangents, call, fwd, bwd, num_consts):
    no_closed_over_tangents("custom_vjp", fwd, tangents, num_consts)
    perturbed = tuple(not isinstance(t, Zero) for t in tangents[num_consts:])
    outs, residuals = fwd(primals[num_consts:], primals[:num_consts], perturbed=perturbed)
    out_avals = tuple(aval(o).strip_weak() for o in outs)
    tangents_in = [instantiate(t) for t in tangents[num_consts:]]
    return outs, bind(custom_lin_p, *residuals, *tangents_in, num_res=len(residuals), bwd=bwd, out_avals=out_avals)


custom_vjp_call_p = Primitive("custom_vjp_call", call_shape, call_impl, multiple_results=True,
                              jvp=_custom_vjp_call_jvp, inline=True)


def _forward_mode_error(*args, bwd, **params):
    raise TypeError(f"cannot apply forward-mode differentiation (jvp) to a custom_vjp function (its bwd is "
                    f"{bwd.__name__}); use grad/vjp, or give the function a custom_jvp rule instead")


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals):
    zeros = tuple(isinstance(c, Zero) for c in cts)
    return [None] * num_res + list(bwd(args[:num_res], [instantiate(c) for c in cts], zeros=zeros))


custom_lin_p = Primitive("custom_lin", lambda *avals, num_res, bwd, out_avals: list(out_avals), _forward_mode_error,
                         multiple_results=True, jvp=_forward_mode_error, transpose=_custom_lin_transpose,
                         linear=True)

# ------------------------------------------------------------------------------------------- decorators


class SymbolicZero:
    """A zero tangent or cotangent, as jax.custom_derivatives.SymbolicZero: what a rule defined with
    symbolic_zeros=True receives for an input that is not perturbed (or an output not used), so that it can skip
    that work; a rule may return one too. It has the value's shape and dtype, no data."""

    def __init__(self, aval):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))

    def instantiate(self):
        """The zeros themselves."""
        return zeros(self.aval)

    @staticmethod
    def from_primal_value(value):
        """The zero tangent of a primal value."""
        return SymbolicZero(aval(value).strip_weak())

    def __repr__(self):
        return f"SymbolicZero({self.aval.str_short()})"


@dataclasses.dataclass
class CustomVJPPrimal:
    """A primal as a custom_vjp's fwd rule defined with symbolic_zeros=True receives it: its value and whether
    it is perturbed (differentiated), as jax.custom_derivatives.CustomVJPPrimal."""
    value: object
    perturbed: bool


def _symbolic(leaves, zeros):
    return [SymbolicZero(aval(x).strip_weak()) if z else x for x, z in zip(leaves, zeros)]


def _positional(fun, args, kwargs):
    if not kwargs:
        return tuple(args)
    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args


class _CustomFunction:
    """What custom_jvp and custom_vjp share: splitting off nondiff_argnums and tracing the function."""

    kind = "custom"

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun, updated=())  # a callable object's attributes stay its own
        self.__name__ = name_of(fun)
        self.fun, self.nondiff_argnums = fun, tuple(nondiff_argnums)

    def _split(self, args):
        nondiff = [args[i] for i in self.nondiff_argnums]
        diff = tuple(a for i, a in enumerate(args) if i not in self.nondiff_argnums)
        return nondiff, diff

    def _merge(self, nondiff, diff):
        count, nondiff, diff = len(nondiff) + len(diff), iter(nondiff), iter(diff)
        return [next(nondiff) if i in self.nondiff_argnums else next(diff) for i in range(count)]

    def _bind(self, prim, args, kwargs, **rules):
        args = _positional(self.fun, args, kwargs)
        nondiff, diff = self._split(args)
        leaves, in_tree = tree_flatten(diff)
        leaves = [canonicalize_input(x, f"{self.__name__} argument leaf {i}") for i, x in enumerate(leaves)]
        box = {"in_avals": [leaf_aval(x) for x in leaves]}

        def flat_fun(*xs):
            out_leaves, box["out_tree"] = tree_flatten(self.fun(*self._merge(nondiff, tree_unflatten(in_tree, xs))))
            return out_leaves

        call, consts = hoist_consts(trace_flat(flat_fun, box["in_avals"], fun_name=self.__name__))
        make_rules = {name: make(nondiff, in_tree, box, consts) for name, make in rules.items()}
        outs = bind(prim, *consts, *leaves, call=call, num_consts=len(consts), **make_rules)
        return tree_unflatten(box["out_tree"], outs)

    def _check_out(self, what, value, box):
        leaves, tree = tree_flatten(value)
        if tree != box["out_tree"]:
            raise TypeError(f"{self.kind} {self.__name__}: the {what} must have the structure of the function's "
                            f"output, {box['out_tree']}, got {tree}")
        return leaves


class custom_jvp(_CustomFunction):
    """A function with a custom jvp rule: @custom_jvp def f(x): ...; @f.defjvp def f_jvp(primals, tangents):
    return f(*primals), tangent_out. Arguments in nondiff_argnums come first in the rule's arguments."""

    kind = "custom_jvp"
    jvp, symbolic_zeros = None, False

    def defjvp(self, jvp, symbolic_zeros=False):
        """symbolic_zeros=True: the rule receives a SymbolicZero for each tangent that is zero."""
        self.jvp, self.symbolic_zeros = jvp, symbolic_zeros
        return jvp

    def defjvps(self, *jvps):
        """One rule per argument, jvps[i](tangent_i, primal_out, *primals) -> its part of the output tangent
        (None: the argument is not differentiated), the parts summed, as JAX's defjvps."""
        if self.nondiff_argnums:
            raise TypeError("custom_jvp.defjvps cannot be used with nondiff_argnums; use defjvp")

        def jvp(primals, tangents):
            out = self(*primals)
            parts = [rule(t, out, *primals) for rule, t in zip(jvps, tangents) if rule is not None]
            total = tree_map(lambda *ts: functools.reduce(lambda a, b: a + b, ts), *parts) if parts else None
            return out, tree_map(lambda o: zeros(aval(o).strip_weak()), out) if total is None else total
        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(f"custom_jvp function {self.__name__} has no jvp rule; define one with .defjvp")
        return self._bind(custom_jvp_call_p, args, kwargs, jvp=self._jvp_rule)

    def _jvp_rule(self, nondiff, in_tree, box, closed_over):
        def rule(primals, tangents, consts, zeros=()):
            tangents = _symbolic(tangents, zeros) if zeros else tangents
            with standing_in(closed_over, consts):
                result = self.jvp(*nondiff, tree_unflatten(in_tree, primals), tree_unflatten(in_tree, tangents))
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise TypeError(f"the jvp rule of {self.__name__} must return a pair (primal_out, tangent_out), "
                                f"got {type(result).__name__}")
            outs = self._check_out("primal output of the jvp rule", result[0], box)
            out_tangents = self._check_out("tangent output of the jvp rule", result[1], box)
            return outs, [_like(t, o, f"the jvp rule of {self.__name__}: the tangent of output leaf {i}")
                          for i, (t, o) in enumerate(zip(out_tangents, outs))]
        rule.__name__, rule.symbolic_zeros = name_of(self.jvp), self.symbolic_zeros
        return rule


def _like(t, ref, what):
    """A tangent or cotangent from a user rule as a value of its reference's type (None means zero); `what`
    names it in the error."""
    ref_aval = aval(ref).strip_weak()
    if t is None or isinstance(t, (Zero, SymbolicZero)):
        return zeros(ref_aval)
    if aval(t).shape != ref_aval.shape:
        raise TypeError(f"{what} is a {aval(t).str_short()}, but must have the shape of the value it belongs to, "
                        f"a {ref_aval.str_short()}")
    return astype(t, ref_aval.dtype)


class custom_vjp(_CustomFunction):
    """A function with a custom reverse-mode rule: f.defvjp(fwd, bwd), fwd(*args) -> (out, residuals),
    bwd(*nondiff_args, residuals, out_cotangent) -> tuple of cotangents, one per differentiable argument
    (None for zero)."""

    kind = "custom_vjp"
    fwd = bwd = None
    symbolic_zeros = False

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """symbolic_zeros=True: fwd receives each primal leaf as a CustomVJPPrimal (value, perturbed), bwd a
        SymbolicZero for each cotangent that is zero. (optimize_remat, a JAX memory option, changes nothing.)"""
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, symbolic_zeros

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"custom_vjp function {self.__name__} has no rules; define them with .defvjp")
        return self._bind(custom_vjp_call_p, args, kwargs, fwd=self._fwd_rule, bwd=self._bwd_rule)

    def _fwd_rule(self, nondiff, in_tree, box, closed_over):
        def fwd(primals, consts, perturbed):
            if self.symbolic_zeros:
                primals = [CustomVJPPrimal(x, p) for x, p in zip(primals, perturbed)]
            with standing_in(closed_over, consts):
                result = self.fwd(*self._merge(nondiff, tree_unflatten(in_tree, primals)))
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise TypeError(f"the fwd rule of {self.__name__} must return a pair (output, residuals), "
                                f"got {type(result).__name__}")
            residuals, box["res_tree"] = tree_flatten(result[1])
            return self._check_out("output of the fwd rule", result[0], box), residuals
        fwd.__name__ = name_of(self.fwd)
        return fwd

    def _bwd_rule(self, nondiff, in_tree, box, closed_over):    # (bwd may not close over tracers, as in JAX)
        def bwd(residuals, cts, zeros):
            cts = _symbolic(cts, zeros) if self.symbolic_zeros else cts
            result = self.bwd(*nondiff, tree_unflatten(box["res_tree"], residuals),
                              tree_unflatten(box["out_tree"], cts))
            arg_trees = in_tree.subtrees
            if not isinstance(result, (tuple, list)) or len(result) != len(arg_trees):
                raise TypeError(f"the bwd rule of {self.__name__} must return a tuple with one cotangent per "
                                f"differentiable argument ({len(arg_trees)}), got {type(result).__name__}"
                                + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""))
            leaves = []
            for ct, tree in zip(result, arg_trees):
                leaves += [None] * tree.num_leaves if ct is None else treedef_flatten_up_to(tree, ct)
            return [_like(ct, a, f"the bwd rule of {self.__name__}: the cotangent of input leaf {i}")
                    for i, (ct, a) in enumerate(zip(leaves, box["in_avals"]))]
        bwd.__name__ = name_of(self.bwd)
        return bwd

# --------------------------------------------------------------------------------------------- batching
# Every operand is moved to (or broadcast along) axis 0, so the user's rules, vmapped, see one layout.


def _batched_rule(rule):
    """The user's rule (a function of lists of arrays) mapped over axis 0 of all its arguments."""
    return functools.wraps(rule)(lambda *lists, **static: vmap(lambda *xs: rule(*xs, **static))(*lists))


def _operands_at_axis_0(args, dims):
    size = next(aval(a).shape[d] for a, d in zip(args, dims) if d is not None)
    return [move_batch_axis(a, d, 0, size) for a, d in zip(args, dims)], size


def _call_batch(prim, rule_names):
    def batch(args, dims, call, num_consts, **rules):
        args, size = _operands_at_axis_0(args, dims)
        batched_call, _ = vmap_ir(call, [0] * len(args), size, out_dims=[0] * len(call.out_avals))
        rules = {k: _batched_rule(v) if k in rule_names else v for k, v in rules.items()}
        outs = bind(prim, *args, call=batched_call, num_consts=num_consts, **rules)
        return outs, [0] * len(outs)
    return batch


def _custom_lin_batch(args, dims, num_res, bwd, out_avals):
    args, size = _operands_at_axis_0(args, dims)
    batched_avals = tuple(a.update(shape=(size,) + a.shape) for a in out_avals)
    outs = bind(custom_lin_p, *args, num_res=num_res, bwd=_batched_rule(bwd), out_avals=batched_avals)
    return outs, [0] * len(outs)


custom_jvp_call_p.set(batch=_call_batch(custom_jvp_call_p, ("jvp",)))
custom_vjp_call_p.set(batch=_call_batch(custom_vjp_call_p, ("fwd", "bwd")))
custom_lin_p.set(batch=_custom_lin_batch)
