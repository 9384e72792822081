"""lax.custom_linear_solve, the primitive (tracejit/primitives/linear_solve.py), against JAX on the same programs
(JAX's own examples: a dense solve through an explicit Jacobian, a symmetric positive definite matvec with a
Cholesky solve, an iterative solve with aux, a pytree b): values and every transformation (jvp, jacfwd,
linearize, grad, hessian, vmap, jit, and their compositions), finite differences (check_grads), the printed
primitive, and the errors."""
import re

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.core.ir import check_ir
from tracejit.core.trace import eval_ir
from tracejit.test_util import check_grads

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp

rng = np.random.default_rng(3)
N = 4
A = rng.normal(size=(N, N)) + np.eye(N) * 3          # nonsymmetric, well conditioned
S = rng.normal(size=(N, N))                           # posified below: S S^T + I
b = rng.normal(size=N)
TA, TB = rng.normal(size=(N, N)), rng.normal(size=N)  # tangents
TOL = {"rtol": 1e-10, "atol": 1e-12}


def close(got, want, **tol):
    tj.tree_util.tree_map(lambda g, w: np.testing.assert_allclose(np.asarray(g), np.asarray(w), **(tol or TOL)),
                          got, want)

# ------------------------------------------------------------- the programs, in tracejit (tj) and in JAX (jax)


def explicit_solve(M, a, v):
    """JAX's testCustomLinearSolve: matvec a @ v, solved through its explicit Jacobian (under stop_gradient),
    transposed by a second solve of the same kind."""
    def explicit_jacobian_solve(matvec, r):
        return M.lax.stop_gradient(M.numpy.linalg.solve(M.jacobian(matvec)(r), r))
    return M.lax.custom_linear_solve(lambda x: a @ x + M.numpy.sin(a[0, 0]) * x, v, explicit_jacobian_solve,
                                     explicit_jacobian_solve)


def positive_definite_solve(M, s, v):
    """JAX's testCustomLinearSolveSymmetric: a = s s^T + I, solved by Cholesky, symmetric=True (no transpose_solve
    given: solve is its own transpose)."""
    a = s @ s.T + M.numpy.eye(s.shape[0])

    def solve(matvec, r):
        return M.scipy.linalg.cho_solve(M.scipy.linalg.cho_factor(a), r)
    return M.lax.custom_linear_solve(lambda x: a @ x, v, solve, symmetric=True)


def jacobi_with_aux(M, s, v):
    """An iterative solve (a fori_loop, not differentiable itself in reverse mode) with its residual as aux, of
    a diagonally dominant symmetric matrix. (JAX's jacfwd fails where the result reads aux: its batching rule
    batches aux always; test_has_aux_and_dtypes checks that case against the closed form.)"""
    a = s + s.T + M.numpy.eye(s.shape[0]) * 12

    def jacobi(matvec, r):
        d = M.numpy.diag(a)
        x = M.lax.fori_loop(0, 80, lambda i, x: x + (r - matvec(x)) / d, r * 0)
        return x, M.numpy.sum(M.numpy.abs(matvec(x) - r))
    return M.lax.custom_linear_solve(lambda x: a @ x, v, jacobi, symmetric=True, has_aux=True)[0]


def pytree_solve(M, a, v):
    """b a dict of two blocks, a block matvec with a nonlinear dependence on a, solved and transposed densely."""
    def matvec(x):
        return {"u": a[:2, :2] @ x["u"] + a[:2, 2:] @ x["w"], "w": a[2:, :2] @ x["u"] + M.numpy.cos(a[2:, 2:]) @ x["w"]}

    def dense(m):
        return M.numpy.concatenate([M.numpy.concatenate([m[:2, :2], m[:2, 2:]], 1),
                                    M.numpy.concatenate([m[2:, :2], M.numpy.cos(m[2:, 2:])], 1)], 0)

    def solve(mat, r):
        x = M.numpy.linalg.solve(mat, M.numpy.concatenate([r["u"], r["w"]]))
        return {"u": x[:2], "w": x[2:]}
    out = M.lax.custom_linear_solve(matvec, {"u": v[:2], "w": v[2:]}, lambda mv, r: solve(dense(a), r),
                                    lambda vm, r: solve(dense(a).T, r))
    return M.numpy.concatenate([out["u"] * 2.0, out["w"]])


PROGRAMS = {"explicit": (explicit_solve, A), "cholesky": (positive_definite_solve, S),
            "jacobi aux": (jacobi_with_aux, S), "pytree": (pytree_solve, A)}


def both(name):
    program, mat = PROGRAMS[name]
    return (lambda a, v: program(tj, a, v)), (lambda a, v: program(jax, a, v)), mat


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_values_and_forward_mode_against_jax(name):
    f, g, mat = both(name)
    close(f(mat, b), g(mat, b))
    close(tj.jit(f)(mat, b), g(mat, b))
    want = jax.jvp(g, (mat, b), (TA, TB))
    close(tj.jvp(f, (mat, b), (TA, TB)), want)
    close(tj.jit(lambda a, v, ta, tv: tj.jvp(f, (a, v), (ta, tv)))(mat, b, TA, TB), want)
    close(tj.jvp(lambda v: f(mat, v), (b,), (TB,)), jax.jvp(lambda v: g(mat, v), (b,), (TB,)))
    for argnums in (0, 1):
        close(tj.jacfwd(f, argnums)(mat, b), jax.jacfwd(g, argnums)(mat, b))
    out, lin = tj.linearize(f, mat, b)
    want_out, want_lin = jax.linearize(g, mat, b)
    close(out, want_out)
    close(lin(TA, TB), want_lin(TA, TB))
    close(lin(TA * 2, TB * 0), want_lin(TA * 2, TB * 0))


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_reverse_mode_and_second_order_against_jax(name):
    f, g, mat = both(name)
    w = rng.normal(size=N)

    def loss(fn, lib):
        return lambda a, v: lib.sum(lib.sin(fn(a, v)) * w)

    want = jax.grad(loss(g, jnp), (0, 1))(mat, b)
    close(tj.grad(loss(f, tnp), (0, 1))(mat, b), want)
    close(tj.jit(tj.grad(loss(f, tnp), (0, 1)))(mat, b), want)
    close(tj.jacrev(f, 1)(mat, b), jax.jacrev(g, 1)(mat, b))
    close(tj.hessian(loss(f, tnp), 1)(mat, b), jax.hessian(loss(g, jnp), 1)(mat, b), rtol=1e-9, atol=1e-11)
    close(tj.jacfwd(tj.grad(loss(f, tnp), 0), 1)(mat, b), jax.jacfwd(jax.grad(loss(g, jnp), 0), 1)(mat, b),
          rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_vmap_against_jax(name):
    """Batched b, batched matrix (the consts of matvec and solve: b is broadcast), both, and derivatives of a
    batch."""
    f, g, mat = both(name)
    bs, mats = rng.normal(size=(3, N)), mat + rng.normal(size=(3, N, N)) * 0.1
    close(tj.vmap(f, (None, 0))(mat, bs), jax.vmap(g, (None, 0))(mat, bs))
    close(tj.vmap(f, (0, None))(mats, b), jax.vmap(g, (0, None))(mats, b))
    close(tj.jit(tj.vmap(f, (0, 1), 1))(mats, bs.T), jax.vmap(g, (0, 1), 1)(mats, bs.T))
    close(tj.vmap(tj.jacfwd(f, 1), (0, 0))(mats, bs), jax.vmap(jax.jacfwd(g, 1), (0, 0))(mats, bs))
    close(tj.jit(tj.vmap(tj.grad(lambda a, v: f(a, v).sum()), (0, None)))(mats, b),
          jax.vmap(jax.grad(lambda a, v: g(a, v).sum()), (0, None))(mats, b))


def test_check_grads():
    """Finite differences, to second order in both modes, where the solve is exact."""
    check_grads(lambda a, v: explicit_solve(tj, a, v), (A, b), order=2, modes=("fwd", "rev"))
    check_grads(lambda s, v: positive_definite_solve(tj, s, v), (S, b), order=2, modes=("fwd", "rev"))
    check_grads(lambda a, v: pytree_solve(tj, a, v), (A, b), order=1, modes=("fwd", "rev"))


def test_derivatives_are_new_solves():
    """jvp and grad add solves of the same sub-IRs (the tangent's, the transposed one) instead of
    differentiating solve's own code: the fori_loop inside jacobi is never differentiated."""
    f, _, mat = both("jacobi aux")
    for transformed in (lambda a, v: tj.jvp(f, (a, v), (a, v)), tj.grad(lambda a, v: f(a, v).sum(), (0, 1))):
        ir = tj.make_ir(transformed)(mat, b)
        check_ir(ir)
        assert [e.prim.name for e in ir.eqns].count("custom_linear_solve") == 2
        assert "while" not in {e.prim.name for e in ir.eqns}


def test_ir_text():
    """One equation with its four sub-IRs as params (sorted keys; a missing transpose prints None), operands
    the consts of each sub-IR then b; the same function prints the same text."""
    def f(a, v):
        return tj.lax.custom_linear_solve(lambda x: a @ x, v, lambda mv, r: r / tnp.sum(a))

    text = str(tj.make_ir(f)(A, b))
    assert text == str(tj.make_ir(f)(A, b))
    pattern = (r"\{ lambda ; a:f64\[4,4\] b:f64\[4\]\. let\n"
               r"    (\w+):f64\[4\] = custom_linear_solve\[\n"
               r"      const_lengths=\(1, 0, 1, 0\)\n"
               r"      matvec=\{ lambda ; \w+:f64\[4,4\] \w+:f64\[4\]\. let\n(.*\n)+?        in \(\w+,\) \}\n"
               r"      solve=\{ lambda ; \w+:f64\[4,4\] \w+:f64\[4\]\. let\n(.*\n)+?        in \(\w+,\) \}\n"
               r"      transpose_solve=None\n"
               r"      vecmat=None\n"
               r"    \] a a b\n"
               r"  in \(\1,\) \}$")
    assert re.match(pattern, text), text
    sym = str(tj.make_ir(lambda s, v: positive_definite_solve(tj, s, v))(S, b))
    assert re.search(r"const_lengths=\(1, 1, 1, 1\)", sym) and "vecmat={ lambda" in sym, sym


def test_compiled_is_the_solve_inlined():
    """The passes replace the equation by its solve (the other sub-IRs serve the transforms only); compiled
    results, derivatives included, match the reference interpreter's."""
    f, _, mat = both("jacobi aux")
    grad = tj.grad(lambda a, v: tnp.sum(f(a, v) ** 2), (0, 1))
    for fun in (f, grad, lambda a, v: tj.jvp(f, (a, v), (a, v))):
        assert "custom_linear_solve" in str(tj.make_ir(fun)(mat, b))
        assert "custom_linear_solve" not in str(tj.make_ir(fun, optimize=True)(mat, b))
        close(tj.tree_util.tree_leaves(tj.jit(fun)(mat, b)), eval_ir(tj.make_ir(fun)(mat, b), mat, b), rtol=1e-12,
              atol=1e-14)


def test_has_aux_and_dtypes():
    """aux comes back as solve returns it (no derivative); x has b's dtype, as JAX's result has b's type."""
    def f(M, a, v):
        return M.lax.custom_linear_solve(lambda x: a @ x, v, lambda mv, r: (M.numpy.linalg.solve(a, r), {"n": 3}),
                                         lambda vm, r: (M.numpy.linalg.solve(a.T, r), {"n": 4}), has_aux=True)
    x, aux = f(tj, A, b)
    close((x, aux), f(jax, A, b))
    assert aux["n"].dtype == np.asarray(f(jax, A, b)[1]["n"]).dtype
    x_dot, aux_dot = tj.jvp(lambda v: f(tj, A, v), (b,), (TB,))[1]
    close((x_dot, aux_dot), (np.linalg.solve(A, TB), {"n": 0}))
    jac = tj.jacfwd(lambda a, v: f(tj, a, v)[0] + f(tj, a, v)[1]["n"], (0, 1))(A, b)
    close(jac, jax.jacfwd(lambda a, v: f(jax, a, v)[0], (0, 1))(A, b))
    x32 = tj.jit(lambda a, v: f(tj, a, v)[0])(A.astype(np.float32), b.astype(np.float32))
    assert x32.dtype == np.float32
    close(x32, np.linalg.solve(A, b), rtol=1e-5, atol=1e-6)


def test_complex_against_jax():
    """A complex nonsymmetric solve: vecmat is the plain (unconjugated) transpose, as JAX's linear_transpose."""
    C = A + 1j * rng.normal(size=(N, N))
    c = b + 1j * TB

    def f(M, a, v):
        solve = M.numpy.linalg.solve
        return M.lax.custom_linear_solve(lambda x: a @ x, v, lambda mv, r: solve(a, r), lambda vm, r: solve(a.T, r))

    def loss(M):
        return lambda a, v: M.numpy.sum(M.numpy.abs(f(M, a, v)) ** 2)

    close(tj.jvp(lambda a, v: f(tj, a, v), (C, c), (TA + 0j, TB * 1j)),
          jax.jvp(lambda a, v: f(jax, a, v), (C, c), (TA + 0j, TB * 1j)))
    close(tj.grad(loss(tj), (0, 1))(C, c), jax.grad(loss(jax), (0, 1))(C, c))


def test_errors_as_jax():
    def solve(M, v, **kw):
        return M.lax.custom_linear_solve(lambda x: A @ x, v, lambda mv, r: M.numpy.linalg.solve(A, r), **kw)

    for M, lib in ((tj, tnp), (jax, jnp)):
        def f(v, M=M):
            return solve(M, v)
        with pytest.raises(TypeError, match="transpose_solve required for backwards mode automatic "
                                            "differentiation of custom_linear_solve"):
            M.grad(lambda v, f=f, lib=lib: lib.sum(f(v)))(b)
        with pytest.raises(TypeError, match="transpose_solve required"):
            M.jacrev(f)(b)
        close(M.jvp(f, (b,), (TB,))[1], np.linalg.solve(A, TB))   # forward mode needs none
    with pytest.raises(ValueError, match="matvec.. output shapes must match b"):
        tj.lax.custom_linear_solve(lambda x: x[:2], b, lambda mv, r: r)
    with pytest.raises(TypeError, match="solve.. output pytree structure must match b"):
        tj.lax.custom_linear_solve(lambda x: x, b, lambda mv, r: (r, r))
    with pytest.raises(TypeError, match="has_aux=True must return a pair"):
        tj.lax.custom_linear_solve(lambda x: x, b, lambda mv, r: r, has_aux=True)
