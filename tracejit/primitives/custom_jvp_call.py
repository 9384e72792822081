"""custom_jvp_call: a function traced to an IR (the `call` param, applied to the operands) whose derivative is a rule
given with it, as JAX's custom_jvp_call. The first `num_consts` operands are values the function closes over.
Evaluated, the call evaluates its IR; compiled, it is inlined (passes/inline.py); only the transforms read the
rule.

It sits here, below tracejit.numpy, so that the NumPy functions to which JAX gives derivative rules of their own
(det, slogdet, pinv: finite where differentiating their factorizations is not) bind it through `call_with_jvp`,
as tracejit.custom_jvp does above them; tracejit.custom_derivatives builds the decorators on it and gives it its
batching rule (which vmaps the rule)."""
from ..core.ad_util import Zero, aval, instantiate
from ..core.ir_surgery import hoist_consts
from ..core.trace import Primitive, Tracer, bind, eval_ir, trace_flat


def call_shape(*avals, call, num_consts, **rules):
    expected = call.in_avals
    if len(avals) != len(expected) or any((a.shape, a.dtype) != (e.shape, e.dtype) for a, e in zip(avals, expected)):
        raise TypeError(f"custom call: operands {[a.str_short() for a in avals]} do not match the function's "
                        f"inputs {[e.str_short() for e in expected]}")
    return call.out_avals


def call_impl(*args, call, num_consts, **rules):
    return eval_ir(call, *args)


def no_closed_over_tangents(kind, rule, tangents, num_consts):
    if any(not isinstance(t, Zero) for t in tangents[:num_consts]):
        raise TypeError(f"a {kind} function ({rule.__name__}) was differentiated with respect to a value it closes "
                        "over; pass that value as an argument instead")


def _custom_jvp_call_jvp(primals, tangents, call, jvp, num_consts):
    """A rule that asks (`jvp.symbolic_zeros`, custom_jvp's defjvp(symbolic_zeros=True)) is told which
    tangents are zeros."""
    no_closed_over_tangents("custom_jvp", jvp, tangents, num_consts)
    tangents = tangents[num_consts:]
    told = {"zeros": tuple(isinstance(t, Zero) for t in tangents)} if getattr(jvp, "symbolic_zeros", False) else {}
    return jvp(primals[num_consts:], [instantiate(t) for t in tangents], primals[:num_consts], **told)


custom_jvp_call_p = Primitive("custom_jvp_call", call_shape, call_impl, multiple_results=True,
                              jvp=_custom_jvp_call_jvp, inline=True)


def call_with_jvp(fun, jvp, *args):
    """fun(*args) -> list of arrays, with the derivative jvp(primals, tangents) -> (outputs, output tangents)
    (lists, the tangents instantiated and of the outputs' dtypes): one custom_jvp_call inside a trace, fun itself
    on concrete arguments."""
    if not any(isinstance(x, Tracer) for x in args):
        return fun(*args)
    call, consts = hoist_consts(trace_flat(fun, [aval(x).strip_weak() for x in args], fun_name=fun.__name__))

    def rule(primals, tangents, closed_over):
        return jvp(primals, tangents)
    rule.__name__ = jvp.__name__
    return bind(custom_jvp_call_p, *consts, *args, call=call, num_consts=len(consts), jvp=rule)
