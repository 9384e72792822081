"""Numerical checking of derivatives, as jax.test_util.check_grads: forward mode against central differences,
reverse mode against forward mode through the inner-product identity <u, J v> = <J^T u, v>. Complex values
as JAX checks them: random complex directions, <x, y> = Re(sum(conj(x) y)), and the cotangent conj(vjp(conj(u)))
(JAX's transposes do not conjugate)."""
import numpy as np

from .core.avals import is_float, is_inexact
from .core.pytree import tree_flatten, tree_unflatten
from .derivatives import jvp, vjp

_EPS = {np.dtype("float32"): 1e-3, np.dtype("float64"): 1e-4}
_TOL = {np.dtype("float32"): 2e-2, np.dtype("float64"): 1e-5}


def _leaves(tree):
    return [np.asarray(x) for x in tree_flatten(tree)[0]]


def _is_float(x):
    """Whether x has tangents: float or complex."""
    return is_inexact(np.asarray(x).dtype)


def _random_one(x, rng):
    dtype = np.asarray(x).dtype
    if dtype.kind == "c":
        return (rng.standard_normal(np.shape(x)) + 1j * rng.standard_normal(np.shape(x))).astype(dtype)
    return rng.standard_normal(np.shape(x)).astype(dtype) if is_float(dtype) else np.zeros_like(x)


def _random_like(tree, rng):
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [_random_one(x, rng) for x in leaves])


def _conj(tree):
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [np.conj(x) if _is_float(x) else x for x in leaves])


def _axpy(a, x, y):
    leaves, treedef = tree_flatten(y)
    return tree_unflatten(treedef, [yi + a * xi if _is_float(yi) else yi for xi, yi in zip(_leaves(x), leaves)])


def _inner(xs, ys):
    return sum(float(np.real(np.sum(np.conj(np.asarray(x, np.complex128)) * np.asarray(y, np.complex128))))
               for x, y in zip(_leaves(xs), _leaves(ys)) if _is_float(x))


def _dtype_of(args):
    """The least precise float type among args (a complex type's parts count)."""
    floats = [np.finfo(np.asarray(x).dtype).dtype for x in _leaves(args) if _is_float(x)]
    return min(floats, key=lambda d: d.itemsize) if floats else np.dtype("float64")


def numerical_jvp(f, primals, tangents, eps):
    plus = f(*_axpy(eps, tangents, primals))
    minus = f(*_axpy(-eps, tangents, primals))
    leaves, treedef = tree_flatten(plus)
    return tree_unflatten(treedef, [(np.asarray(p) - np.asarray(m)) / (2 * eps) if _is_float(p) else np.zeros_like(p)
                                    for p, m in zip(leaves, _leaves(minus))])


def _check_close(what, got, expected, atol, rtol):
    for i, (g, e) in enumerate(zip(_leaves(got), _leaves(expected))):
        if _is_float(e):
            np.testing.assert_allclose(g, e, atol=atol, rtol=rtol, err_msg=f"{what}: output leaf {i}")


def check_jvp(f, args, atol=None, rtol=None, eps=None, err_msg="JVP", rng=None):
    rng = rng or np.random.default_rng(0)
    dtype = _dtype_of(args)
    eps, atol, rtol = eps or _EPS[dtype], atol or _TOL[dtype], rtol or _TOL[dtype]
    tangents = _random_like(args, rng)
    out, tangent_out = jvp(f, tuple(args), tuple(tangents))
    _check_close(f"{err_msg} (primal)", out, f(*args), atol, rtol)
    _check_close(err_msg, tangent_out, numerical_jvp(f, args, tangents, eps), atol, rtol)


def check_vjp(f, args, atol=None, rtol=None, eps=None, err_msg="VJP", rng=None):
    rng = rng or np.random.default_rng(1)
    dtype = _dtype_of(args)
    eps, atol, rtol = eps or _EPS[dtype], atol or _TOL[dtype], rtol or _TOL[dtype]
    out, vjp_fun = vjp(f, *args)
    _check_close(f"{err_msg} (primal)", out, f(*args), atol, rtol)
    tangents = _random_like(args, rng)
    tangent_out = numerical_jvp(f, args, tangents, eps)
    cotangents = _random_like(out, rng)
    cotangents_in = _conj(vjp_fun(_conj(cotangents)))
    got, expected = _inner(tangents, cotangents_in), _inner(tangent_out, cotangents)
    np.testing.assert_allclose(got, expected, atol=atol, rtol=rtol, err_msg=f"{err_msg}: <J^T u, v> != <u, J v>")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check the derivatives of f at args up to `order` against finite differences; raises AssertionError.
    Higher orders check the derivatives of jvp(f) (fwd) and of vjp(f) (rev)."""
    args = tuple(args)

    def check(f, args, order, msg):
        if "fwd" in modes:
            fwd_msg = f"JVP of {msg}" if msg else "JVP"
            check_jvp(f, args, atol, rtol, eps, fwd_msg)
            if order > 1:
                check(lambda primals, tangents: jvp(f, primals, tangents), (args, _random_like(args, rng)),
                      order - 1, fwd_msg)
        if "rev" in modes:
            rev_msg = f"VJP of {msg}" if msg else "VJP"
            check_vjp(f, args, atol, rtol, eps, rev_msg)
            if order > 1:
                def f_vjp(*primals):
                    out, vjp_fun = vjp(f, *primals)
                    return vjp_fun(out)
                check(f_vjp, args, order - 1, rev_msg)

    rng = np.random.default_rng(2)
    check(f, args, order, "")
