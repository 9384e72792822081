"""The derivative API, as JAX's: grad, value_and_grad, jvp, vjp, linearize, jacfwd, jacrev, hessian.

Complex numbers follow JAX's convention: tangents of complex values are complex, transposes are not
conjugated, so grad of a real function of z is the conjugate of its gradient in x + iy (grad(abs(z)**2) at
3+4j is 6-8j), and with holomorphic=True grad, jacfwd and jacrev give f'(z) (inputs and outputs complex).
Without it, grad and jacrev refuse complex outputs and jacfwd complex inputs, with JAX's errors; jvp and vjp
take any inexact values.

Each traces the user function to IR, transforms it with the IR-to-IR transforms of transforms/ad.py and
evaluates the result with eval_ir on the arguments that arrived: numpy arrays compute, tracers of an
enclosing trace (jit, another grad) re-emit the IR there, which is how every transformation nests.
"""
import functools
import inspect

import numpy as np

from . import dtypes
from . import numpy as tnp
from .batching import vmap
from .core.api_util import (
                             as_arrays,
                             flatten_args,
                             leaf_aval,
                             name_of,
                             owned,
                             positional_parameters,
                             trace_pytree,
)
from .core.avals import dtype_kind, is_inexact
from .core.pytree import tree_flatten, tree_map, tree_unflatten
from .core.trace import Tracer, eval_ir
from .traceback_util import api_boundary
from .transforms.ad import jvp_ir, linearize_ir, transpose_ir


def _is_inexact(aval):
    """Whether a value has tangents: float or complex."""
    return is_inexact(aval.dtype)


def _argnums(argnums, num_args, fun):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not isinstance(i, int) or not -num_args <= i < num_args:
            raise ValueError(f"argnums {argnums!r} is out of range: {name_of(fun)} was called with {num_args} "
                             f"positional argument{'s' if num_args != 1 else ''}")
    return tuple(i % num_args for i in nums)


def _arg_slices(args):
    """The range of flat leaves of each positional argument."""
    slices, start = [], 0
    for arg in args:
        count = len(tree_flatten(arg)[0])
        slices.append(range(start, start + count))
        start += count
    return slices


def _trace(fun, args, kwargs):
    """(leaves as arrays, their names, ClosedIR, output tree) of fun traced on args, their values known to
    Python control flow."""
    leaves, names, in_tree = flatten_args(fun, args, kwargs)
    closed, out_tree = trace_pytree(fun, leaves, names, in_tree, fun_name=name_of(fun), known=True)
    return as_arrays(leaves), names, closed, out_tree


def _differentiable(leaves, names, what, holomorphic=False, forward=False, allow_int=False):
    """`which` mask over the flat leaves of the differentiated arguments. JAX's rules, with the argument named:
    holomorphic needs complex inputs; otherwise reverse mode takes float or complex ones, forward mode (jacfwd)
    float ones; allow_int lets integer and bool leaves through, unmarked (their gradient is float0 zeros)."""
    which = [False] * len(leaves)
    for j in range(len(leaves)):
        aval = leaf_aval(leaves[j])
        if holomorphic and aval.dtype.kind != "c":
            raise TypeError(f"{what} with holomorphic=True requires inputs with complex dtype, but argument "
                            f"'{names[j]}' has dtype {aval.dtype} ({aval.str_short()})")
        if forward and aval.dtype.kind == "c" and not holomorphic:
            raise TypeError(f"{what} requires real-valued inputs (float), but argument '{names[j]}' has dtype "
                            f"{aval.dtype}. For holomorphic differentiation, pass holomorphic=True. For "
                            "differentiation of non-holomorphic functions involving complex inputs, use jvp")
        if not _is_inexact(aval) and allow_int and aval.dtype.kind in "biu":
            continue
        if not _is_inexact(aval):
            raise TypeError(f"{what} requires real- or complex-valued (float or complex) inputs, but argument "
                            f"'{names[j]}' has dtype {aval.dtype} ({aval.str_short()}). Differentiate only with "
                            "respect to float arguments (see argnums), convert it with .astype(float), or use "
                            "vjp, which gives integer inputs zero cotangents")
        which[j] = True
    return which


def _vjp_flat(closed, primals, which):
    """Run the forward pass now; return (outputs, backward) where backward(cts, has_ct) gives the cotangents
    of the inputs marked in `which`."""
    primal, linear, num_res = linearize_ir(closed, which)
    values = eval_ir(primal, *primals)
    num_outs = len(closed.out_avals)
    outs, residuals = values[:num_outs], values[num_outs:]

    def backward(cts, has_cotangent=None):
        return eval_ir(transpose_ir(linear, num_res, has_cotangent), *residuals, *cts)

    return outs, backward


def _split_aux(fun, result):
    """(output, aux) from a has_aux function's result, or a TypeError saying what it returned."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        got = (f"a {type(result).__name__} of length {len(result)}" if isinstance(result, (tuple, list))
               else f"a {type(result).__name__}")
        raise TypeError(f"{name_of(fun)} was differentiated with has_aux=True, so it must return a pair "
                        f"(output, auxiliary data), but it returned {got}")
    return result


def _flat_output(fun, has_aux, box, check=None):
    """fun with its output flattened to [out leaves..., aux leaves...]; the trees and counts go into box."""
    @functools.wraps(fun)
    def flat(*args, **kwargs):
        result, aux = _split_aux(fun, fun(*args, **kwargs)) if has_aux else (fun(*args, **kwargs), None)
        if check is not None:
            result = check(result)
        out_leaves, box["out_tree"] = tree_flatten(result)
        aux_leaves, box["aux_tree"] = tree_flatten(aux)
        box["num_out"] = len(out_leaves)
        return out_leaves + aux_leaves
    return flat


def _check_output(fun, what, aval, holomorphic):
    """JAX's rules for the outputs of grad and jacrev (and of jacfwd with holomorphic=True)."""
    kind = dtype_kind(aval.dtype)
    if holomorphic and kind != "c":
        raise TypeError(f"{what} with holomorphic=True requires outputs with complex dtype, but {name_of(fun)} "
                        f"returned {aval.str_short()}")
    if kind == "c" and not holomorphic:
        raise TypeError(f"{what} requires real-valued outputs (float), but {name_of(fun)} returned "
                        f"{aval.str_short()}. For holomorphic differentiation, pass holomorphic=True. For "
                        "differentiation of non-holomorphic functions involving complex outputs, use vjp")
    if kind not in "fc":
        raise TypeError(f"{what} requires a real-valued (float) output, but {name_of(fun)} returned "
                        f"{aval.str_short()}")


def _scalar_output(fun, what, holomorphic=False):
    def check(out):
        leaves = tree_flatten(out)[0]
        if len(leaves) != 1:
            raise TypeError(f"{what} requires a scalar output, but {name_of(fun)} returned a "
                            f"{type(out).__name__} with {len(leaves)} leaves")
        aval = leaf_aval(leaves[0])
        if aval.shape != ():
            raise TypeError(f"{what} requires a scalar output (shape ()), but {name_of(fun)} returned an array of "
                            f"shape {aval.shape} ({aval.str_short()}); reduce it (e.g. .sum()) or use vjp/jacrev")
        _check_output(fun, what, aval, holomorphic)
        return leaves[0]
    return check


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """A function returning (fun(*args), gradient of fun with respect to args[argnums]); with has_aux,
    fun returns (output, aux) and this returns ((output, aux), gradient), as in JAX. With holomorphic=True,
    fun maps complex inputs to a complex output and the gradient is its complex derivative. allow_int=True
    accepts integer arguments, whose gradient is zeros of dtype float0 (as JAX's); reduce_axes must be ()."""
    if reduce_axes:
        raise NotImplementedError("grad: reduce_axes is not supported (JAX has deprecated it)")

    @api_boundary
    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        dyn, partial_fun, which = _wrt(fun, args, kwargs, argnums, "grad", holomorphic, allow_int)
        leaves, names, in_tree = flatten_args(partial_fun, dyn)
        box = {}
        flat = _flat_output(partial_fun, has_aux, box, _scalar_output(fun, "grad", holomorphic))
        closed, _ = trace_pytree(flat, leaves, names, in_tree, fun_name=name_of(fun), known=True)
        outs, backward = _vjp_flat(closed, as_arrays(leaves), which)
        ones = np.ones((), closed.out_avals[0].dtype)
        cts = iter(owned(backward([ones], [True] + [False] * (len(outs) - 1))))
        grads = [tree_unflatten(tree_flatten(arg)[1], [next(cts) if which[j] else
                                                       np.zeros(np.shape(leaves[j]), dtypes.float0) for j in leaves_of])
                 for arg, leaves_of in zip(dyn, _arg_slices(dyn))]
        outs = owned(outs)
        value = (outs[0], tree_unflatten(box["aux_tree"], outs[1:])) if has_aux else outs[0]
        return value, grads[0] if isinstance(argnums, int) else tuple(grads)

    return value_and_grad_f


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """The gradient of a scalar function with respect to args[argnums] (same pytree structure); with
    has_aux, returns (gradient, aux); holomorphic=True: the complex derivative of a holomorphic function;
    allow_int=True: integer arguments get float0 zeros."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes)

    @api_boundary
    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


def _matching(fun, what, reference, values, tree, v_tree, kind):
    """values (tangents or cotangents) checked against the reference leaves (primals or outputs) and cast
    to their dtypes; only float and complex references are kept."""
    if tree != v_tree:
        raise TypeError(f"{what}: the {kind}s for {name_of(fun)} must have the structure {tree}, got {v_tree}")
    out = []
    for i, (x, t) in enumerate(zip(reference, values)):
        ref = leaf_aval(x)
        if not _is_inexact(ref):    # integer values: any (co)tangent, JAX's float0 zeros included, is ignored
            continue
        got = leaf_aval(t)
        if got.shape != ref.shape or (got.dtype != ref.dtype and not got.weak_type):
            raise TypeError(f"{what}: {kind} {i} is {got.str_short()} but must match {ref.str_short()} in shape "
                            "and dtype")
        out.append(t if isinstance(t, Tracer) else np.asarray(t, dtype=ref.dtype))
    return out


@api_boundary
def jvp(fun, primals, tangents, has_aux=False):
    """(fun(*primals), directional derivative of fun at primals along tangents), as jax.jvp; with has_aux, fun
    returns (output, aux) and this (output, tangent, aux)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(f"jvp: primals and tangents must be tuples or lists of arguments, got "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    box = {}
    leaves, _, closed, _ = _trace(_flat_output(fun, has_aux, box), primals, {})
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    t_leaves = _matching(fun, "jvp", leaves, t_leaves, tree_flatten(tuple(primals))[1], t_tree, "tangent")
    which = [_is_inexact(leaf_aval(x)) for x in leaves]
    values = owned(eval_ir(jvp_ir(closed, which), *leaves, *t_leaves))
    num_outs, n = len(closed.out_avals), box["num_out"]
    out = tree_unflatten(box["out_tree"], values[:n]), tree_unflatten(box["out_tree"], values[num_outs:num_outs + n])
    return (*out, tree_unflatten(box["aux_tree"], values[n:num_outs])) if has_aux else out


@api_boundary
def linearize(fun, *primals, has_aux=False):
    """(fun(*primals), jvp_fun) where jvp_fun(*tangents) evaluates only the linear part, as jax.linearize; with
    has_aux, fun returns (output, aux) and this (output, jvp_fun, aux)."""
    box = {}
    leaves, _, closed, _ = _trace(_flat_output(fun, has_aux, box), primals, {})
    which = [_is_inexact(leaf_aval(x)) for x in leaves]
    primal, linear, _ = linearize_ir(closed, which)
    values = eval_ir(primal, *leaves)
    num_outs, n = len(closed.out_avals), box["num_out"]
    outs, residuals = values[:num_outs], values[num_outs:]
    in_tree = tree_flatten(tuple(primals))[1]

    @api_boundary
    def jvp_fun(*tangents):
        t_leaves, t_tree = tree_flatten(tuple(tangents))
        t_leaves = _matching(fun, "linearize", leaves, t_leaves, in_tree, t_tree, "tangent")
        return tree_unflatten(box["out_tree"], owned(eval_ir(linear, *residuals, *t_leaves))[:n])

    out = tree_unflatten(box["out_tree"], owned(outs[:n])), jvp_fun
    return (*out, tree_unflatten(box["aux_tree"], owned(outs[n:]))) if has_aux else out


@api_boundary
def vjp(fun, *primals, has_aux=False):
    """(fun(*primals), vjp_fun) where vjp_fun(cotangent) returns a tuple with one cotangent per primal, as
    jax.vjp; with has_aux, (out, vjp_fun, aux). Integer and bool primals get zeros of dtype float0, as JAX's."""
    box = {}
    leaves, _, closed, _ = _trace(_flat_output(fun, has_aux, box), primals, {})
    which = [_is_inexact(leaf_aval(x)) for x in leaves]
    outs, backward = _vjp_flat(closed, leaves, which)
    num_out, in_tree = box["num_out"], tree_flatten(tuple(primals))[1]

    @api_boundary
    def vjp_fun(cotangent):
        ct_leaves, ct_tree = tree_flatten(cotangent)
        out_leaves = outs[:num_out]
        has_ct = [_is_inexact(leaf_aval(x)) for x in out_leaves]
        cts = _matching(fun, "vjp", out_leaves, ct_leaves, box["out_tree"], ct_tree, "cotangent")
        in_cts = iter(backward(cts, has_ct + [False] * (len(outs) - num_out)))
        full = [next(in_cts) if w else np.zeros(leaf_aval(x).shape, dtypes.float0) for x, w in zip(leaves, which)]
        return tree_unflatten(in_tree, owned(full))

    out = tree_unflatten(box["out_tree"], owned(outs[:num_out]))
    if has_aux:
        return out, vjp_fun, tree_unflatten(box["aux_tree"], owned(outs[num_out:]))
    return out, vjp_fun


# -------------------------------------------------------------------------------------------- jacobians


def _std_basis(leaves):
    """The identity over all elements of `leaves`, one array per leaf of shape (total, *leaf.shape)."""
    avals = [leaf_aval(x) for x in leaves]
    sizes = [a.size for a in avals]
    eye = np.eye(sum(sizes), dtype=np.result_type(*[a.dtype for a in avals]))
    starts = np.cumsum([0] + sizes)
    return [eye[:, s:s + a.size].reshape((eye.shape[0],) + a.shape).astype(a.dtype) for s, a in zip(starts, avals)]


def _unstack_rows(stacked, avals):
    """Split axis 0 of `stacked` (one row per element of the values `avals`) into one piece per value,
    shaped (*value.shape, *rest)."""
    pieces, start = [], 0
    for a in avals:
        piece = stacked[start:start + a.size]
        pieces.append(tnp.reshape(piece, a.shape + tuple(piece.shape[1:])))
        start += a.size
    return pieces


def _dyn_fun(fun, args, kwargs, nums):
    """fun as a function of args[nums] only, the other arguments fixed."""
    def partial_fun(*dyn):
        full = list(args)
        for i, a in zip(nums, dyn):
            full[i] = a
        return fun(*full, **kwargs)
    partial_fun.__name__ = name_of(fun)
    params, _ = positional_parameters(fun)
    if all(i < len(params) for i in nums):   # so that errors name the user's arguments
        partial_fun.__signature__ = inspect.Signature([params[i].replace(default=inspect.Parameter.empty)
                                                       for i in nums])
    return partial_fun


def _wrt(fun, args, kwargs, argnums, what, holomorphic, allow_int=False):
    """(the arguments argnums names, fun as a function of those only, the `which` mask over their leaves), after
    checking their dtypes. The other arguments are fixed as they are, as JAX's: they need not be arrays (a
    function, a string), and their values are known to the traced function."""
    nums = _argnums(argnums, len(args), fun)
    dyn, partial_fun = tuple(args[i] for i in nums), _dyn_fun(fun, args, kwargs, nums)
    leaves, names, _ = flatten_args(partial_fun, dyn)
    which = _differentiable(leaves, names, what, holomorphic, forward=what == "jacfwd", allow_int=allow_int)
    return dyn, partial_fun, which


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of fun with respect to args[argnums] by forward mode: vmap of jvp over the standard
    basis (one batched IR). Each output leaf holds (*out.shape, *in.shape) arrays in the arguments' tree.
    With has_aux, fun returns (output, aux) and this returns (jacobian, aux); holomorphic=True: complex
    inputs and outputs, the complex derivative."""

    @api_boundary
    @functools.wraps(fun)
    def jacfwd_f(*args, **kwargs):
        dyn, partial_fun, _ = _wrt(fun, args, kwargs, argnums, "jacfwd", holomorphic)
        dyn_leaves, dyn_tree = tree_flatten(dyn)
        main_fun = (lambda *a: _split_aux(fun, partial_fun(*a))[0]) if has_aux else partial_fun

        def pushfwd(*tangent_leaves):
            return jvp(main_fun, dyn, tree_unflatten(dyn_tree, tangent_leaves))[1]

        columns, out_tree = tree_flatten(vmap(pushfwd)(*_std_basis(dyn_leaves)))
        for col in columns if holomorphic else ():
            _check_output(fun, "jacfwd", leaf_aval(col), holomorphic)
        in_avals = [leaf_aval(x) for x in dyn_leaves]
        jac = []
        for col in columns:  # col: (inputs, *out.shape) -> per input (*out.shape, *in.shape)
            out_ndim = leaf_aval(col).ndim - 1
            pieces = [_move_front_axes_back(p, a.ndim, out_ndim)
                      for p, a in zip(_unstack_rows(col, in_avals), in_avals)]
            jac.append(_select_args(tree_unflatten(dyn_tree, pieces), argnums))
        jac = tree_unflatten(out_tree, jac)
        return (jac, _split_aux(fun, partial_fun(*dyn))[1]) if has_aux else jac

    return jacfwd_f


def _move_front_axes_back(x, front, back):
    """(*front axes, *back axes) -> (*back axes, *front axes)."""
    return tnp.transpose(x, tuple(range(front, front + back)) + tuple(range(front)))


def _select_args(dyn, argnums):
    return dyn[0] if isinstance(argnums, int) else dyn


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of fun with respect to args[argnums] by reverse mode: one vjp, then vmap of its backward
    pass over the standard basis of the outputs. With has_aux, returns (jacobian, aux); holomorphic=True:
    complex inputs and outputs, the complex derivative; allow_int=True: integer arguments get zeros of their
    dtype, as JAX's."""

    @api_boundary
    @functools.wraps(fun)
    def jacrev_f(*args, **kwargs):
        dyn, partial_fun, _ = _wrt(fun, args, kwargs, argnums, "jacrev", holomorphic, allow_int)
        out, vjp_fun, *aux = vjp(partial_fun, *dyn, has_aux=has_aux)
        out_leaves, out_tree = tree_flatten(out)
        out_avals = [leaf_aval(x) for x in out_leaves]
        for a in out_avals:
            _check_output(fun, "jacrev", a, holomorphic)

        def pullback(*ct_leaves):   # integer inputs: zeros of their dtype (vjp's are float0), as JAX's jacrev
            cts = vjp_fun(tree_unflatten(out_tree, ct_leaves))
            return tree_map(lambda ct, x: np.zeros(np.shape(x), leaf_aval(x).dtype) if ct.dtype == dtypes.float0
                            else ct, cts, dyn)

        rows, dyn_tree = tree_flatten(vmap(pullback)(*_std_basis(out_leaves)))
        per_input = [_unstack_rows(r, out_avals) for r in rows]  # [input][output] -> (*out.shape, *in.shape)
        jac = [_select_args(tree_unflatten(dyn_tree, [pieces[k] for pieces in per_input]), argnums)
               for k in range(len(out_avals))]
        jac = tree_unflatten(out_tree, jac)
        return (jac, aux[0]) if has_aux else jac

    return jacrev_f


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian of a scalar function: jacfwd of jacrev, as in JAX (with has_aux: (hessian, aux))."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums, has_aux=has_aux,
                  holomorphic=holomorphic)
