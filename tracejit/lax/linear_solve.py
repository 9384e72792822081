"""jax.lax's implicitly differentiated solves: custom_linear_solve (x with matvec(x) = b, differentiated at the
solution, not through the solver's loop) and custom_root (x with f(x) = 0, its derivative by the implicit function
theorem, through tangent_solve).

custom_linear_solve binds the primitive custom_linear_solve (tracejit/primitives/linear_solve.py, JAX's
linear_solve_p), whose jvp is a second solve and whose transpose is the transposed solve, so forward and reverse
mode, linearize and vmap all work, as in JAX. custom_root is a custom_jvp function (its tangent is tangent_solve of
a linear map, which grad transposes as JAX's does), so both modes work, as in JAX.
"""
import functools

from .. import numpy as tnp
from ..core.api_util import leaf_aval
from ..core.ir_surgery import hoist_consts
from ..core.trace import trace_flat
from ..custom_derivatives import custom_jvp
from ..derivative_tools import closure_convert, linear_transpose
from ..derivatives import jvp
from ..passes.dce import dce
from ..primitives.linear_solve import linear_solve
from ..tree_util import tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten


def _check_like(name, out, b):
    """out must have b's tree structure and leaf shapes (JAX's errors)."""
    if tree_structure(out) != tree_structure(b):
        raise TypeError(f"{name}() output pytree structure must match b, got {tree_structure(out)} and "
                        f"{tree_structure(b)}")
    shapes, expected = [tnp.shape(v) for v in tree_leaves(out)], [tnp.shape(v) for v in tree_leaves(b)]
    if shapes != expected:
        raise ValueError(f"{name}() output shapes must match b, got {shapes} and {expected}")


def _checked(fun, name, has_aux):
    def checked(x):
        out = fun(x)
        _check_like(name, out[0] if has_aux else out, x)
        return out
    return checked


def _sub_ir(fun, name, b, has_aux):
    """fun (a vector shaped as b -> one, or (one, aux) with has_aux) traced on b's leaf types: (constant-free
    ClosedIR from leaves to leaves, the values it closes over, aux's tree). The vector it returns takes b's
    dtypes, as JAX's result has b's type."""
    leaves, tree = tree_flatten(b)
    avals = [leaf_aval(v).strip_weak() for v in leaves]
    aux_tree = []

    def flat(*xs):
        out = fun(tree_unflatten(tree, list(xs)))
        if has_aux and not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"{name}() with has_aux=True must return a pair (x, aux), got {type(out).__name__}")
        x, aux = out if has_aux else (out, ())
        _check_like(name, x, b)
        aux_leaves, aux_def = tree_flatten(aux)
        aux_tree.append(aux_def)
        return [tnp.asarray(v, a.dtype) for v, a in zip(tree_leaves(x), avals)] + [tnp.asarray(v) for v in aux_leaves]

    closed, consts = hoist_consts(dce(trace_flat(flat, avals, fun_name=name)))
    return closed, consts, aux_tree[0]


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """solve(matvec, b), a solution of matvec(x) = b, with derivatives defined implicitly at the solution, as
    jax.lax.custom_linear_solve: the tangent is solve(matvec, b' - (d matvec) x) and b's cotangent is
    transpose_solve(vecmat, x_bar) (vecmat the transpose of matvec, found by linear_transpose; solve and matvec
    itself when symmetric), so jvp, grad, linearize and vmap all work; reverse mode needs transpose_solve (or
    symmetric). The traced values matvec closes over get derivatives; solve and transpose_solve need not be
    differentiable and what they close over gets none. With has_aux they return (x, aux), and so does this."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b = tree_map(tnp.asarray, b)
    mv, mv_consts, _ = _sub_ir(matvec, "matvec", b, False)
    sv, sv_consts, aux_tree = _sub_ir(functools.partial(solve, matvec), "solve", b, has_aux)
    vm = tv = None
    vm_consts, tv_consts = [], []
    if transpose_solve is not None:
        vecmat = matvec if symmetric else (lambda v: linear_transpose(matvec, b)(v)[0])
        vm, vm_consts, _ = (mv, mv_consts, None) if symmetric else _sub_ir(vecmat, "vecmat", b, False)
        tv, tv_consts, _ = _sub_ir(functools.partial(transpose_solve, vecmat), "transpose_solve", b, has_aux)
    leaves, tree = tree_flatten(b)
    outs = linear_solve((mv, vm, sv, tv), (mv_consts, vm_consts, sv_consts, tv_consts), leaves)
    x = tree_unflatten(tree, outs[:len(leaves)])
    return (x, tree_unflatten(aux_tree, outs[len(leaves):])) if has_aux else x


@functools.partial(custom_jvp, nondiff_argnums=(0, 1, 2, 3))
def _root(f, solve, tangent_solve, has_aux, f_consts, s_consts, guess):
    """solve(f, guess) with f and solve closure-converted (f's traced values are arguments: they get tangents)."""
    return solve(guess, *s_consts)


@_root.defjvp
def _root_jvp(f, solve, tangent_solve, has_aux, primals, tangents):
    """From f(x*(θ), θ) = 0: dx = -(∂f/∂x)^-1 (∂f/∂θ dθ), the inverse applied by tangent_solve to the linear map
    v -> ∂f/∂x v. The guess and solve's values get no derivative, nor does aux."""
    f_consts, s_consts, guess = primals
    out = solve(guess, *s_consts)
    x = out[0] if has_aux else out
    rhs = jvp(lambda *c: f(x, *c), tuple(f_consts), tuple(tangents[0]))[1] if f_consts else tree_map(
        tnp.zeros_like, x)
    x_dot = tree_map(tnp.negative, tangent_solve(lambda v: jvp(lambda y: f(y, *f_consts), (x,), (v,))[1], rhs))
    x_dot = tree_map(lambda t, v: tnp.asarray(t, tnp.result_type(v)), x_dot, x)
    return out, ((x_dot, tree_map(tnp.zeros_like, out[1])) if has_aux else x_dot)


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """solve(f, initial_guess), a root of f, differentiable with respect to the traced values f closes over by
    the implicit function theorem, as jax.lax.custom_root: the tangent is -tangent_solve(g, ∂f/∂θ dθ), g the
    linearization of f at the root (tangent_solve(g, y) solves g(x) = y; e.g. `lambda g, y: y / g(1.0)` for a
    scalar root). The derivative does not go through solve's iterations; initial_guess and aux get none."""
    guess = tree_map(tnp.asarray, initial_guess)
    fc, f_consts = closure_convert(_checked(f, "f", False), guess)
    sc, s_consts = closure_convert(_checked(functools.partial(solve, f), "solve", has_aux), guess)
    return _root(fc, sc, tangent_solve, bool(has_aux), f_consts, s_consts, guess)


__all__ = ["custom_linear_solve", "custom_root"]
