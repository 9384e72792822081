"""jax.lax's implicitly differentiated solves: custom_linear_solve (x with matvec(x) = b, its gradient by one
transposed solve, not through the solver's loop) and custom_root (x with f(x) = 0, its derivative by the implicit
function theorem, through tangent_solve).

custom_linear_solve is a custom_vjp function, so it is differentiable in reverse mode only: forward mode (jvp,
jacfwd) raises a TypeError. JAX gives it both through a primitive of its own whose transpose is the transposed
solve; a custom_jvp rule here would have to transpose `solve` itself (a while_loop, in general), and tracejit has
no such primitive. custom_root is a custom_jvp function (its tangent is tangent_solve of a linear map, which
grad transposes as JAX's does), so both modes work, as in JAX.
"""
import functools

from .. import numpy as tnp
from ..custom_derivatives import custom_jvp, custom_vjp
from ..derivative_tools import closure_convert, linear_transpose
from ..derivatives import jvp, vjp
from ..tree_util import tree_leaves, tree_map, tree_structure


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


@functools.partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3))
def _solve(matvec, solve, transpose_solve, has_aux, a_consts, s_consts, t_consts, b):
    """solve(b) with matvec, solve and transpose_solve closure-converted: their traced values are arguments, so
    the rule below can give matvec's theirs (solve's and transpose_solve's get none, as in JAX)."""
    return solve(b, *s_consts)


def _solve_fwd(matvec, solve, transpose_solve, has_aux, a_consts, s_consts, t_consts, b):
    out = solve(b, *s_consts)
    return out, (a_consts, t_consts, out[0] if has_aux else out)


def custom_linear_solve_bwd(matvec, solve, transpose_solve, has_aux, residuals, cotangent):
    """g = transpose_solve(vecmat, x_bar); b gets g, and matvec's traced values the cotangent of matvec(x) at -g
    (from 0 = d(A x - b) at the solution). The aux outputs get no cotangent."""
    a_consts, t_consts, x = residuals
    if transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic differentiation of "
                        "custom_linear_solve")
    g = transpose_solve(cotangent[0] if has_aux else cotangent, *t_consts)
    g = g[0] if has_aux else g
    a_cts = vjp(lambda *c: matvec(x, *c), *a_consts)[1](tree_map(tnp.negative, g)) if a_consts else ()
    return list(a_cts), None, None, g


_solve.defvjp(_solve_fwd, custom_linear_solve_bwd)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """solve(matvec, b), a solution of matvec(x) = b, with gradients defined implicitly at the solution, as
    jax.lax.custom_linear_solve: b's cotangent is transpose_solve(vecmat, x_bar) (vecmat the transpose of matvec,
    found by linear_transpose; solve and matvec itself when symmetric), and the traced values matvec closes over
    get the cotangent of matvec(x) at minus that. solve and transpose_solve need not be differentiable; values they
    close over get no derivative. With has_aux they return (x, aux), and so does this. Reverse mode only: jvp
    raises a TypeError (tracejit has no primitive for JAX's forward rule; see the module's docstring)."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b = tree_map(tnp.asarray, b)
    mv, a_consts = closure_convert(_checked(matvec, "matvec", False), b)
    sv, s_consts = closure_convert(_checked(functools.partial(solve, matvec), "solve", has_aux), b)
    tv, t_consts = None, []
    if transpose_solve is not None:
        vecmat = matvec if symmetric else (lambda v: linear_transpose(matvec, b)(v)[0])
        tv, t_consts = closure_convert(_checked(functools.partial(transpose_solve, vecmat), "transpose_solve",
                                                has_aux), b)
    return _solve(mv, sv, tv, bool(has_aux), a_consts, s_consts, t_consts, b)


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
