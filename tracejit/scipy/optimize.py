"""jax.scipy.optimize: minimize by BFGS, with a line search that satisfies the strong Wolfe conditions (Nocedal and
Wright, Numerical Optimization, 1999: algorithms 6.1, 3.5 and 3.6), written with lax.while_loop so that it traces,
compiles and batches. The steps are JAX's (its start of the line search, doubling, and zoom by cubic, quadratic
or bisection steps), so iterates and counts follow JAX's."""
from typing import Any, NamedTuple

import numpy as np

from .. import lax
from .. import numpy as tnp
from ..derivatives import value_and_grad


class OptimizeResults(NamedTuple):
    """minimize's result, as jax.scipy.optimize.OptimizeResults (status: 0 converged, 1 maxiter reached, 2 + the
    line search's status where it failed)."""
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def _where(cond, state, new):
    """state with the entries of new taken where cond holds."""
    return {**state, **{k: tnp.where(cond, v, state[k]) for k, v in new.items()}}


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through (a, fa) with slope fpa there, (b, fb) and (c, fc)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    big_a, big_b = (dc ** 2 * rb - db ** 2 * rc) / denom, (db ** 3 * rc - dc ** 3 * rb) / denom
    return a + (-big_b + tnp.sqrt(big_b * big_b - 3.0 * big_a * fpa)) / (3.0 * big_a)


def _quadmin(a, fa, fpa, b, fb):
    """The minimizer of the parabola through (a, fa) with slope fpa there and (b, fb)."""
    db = b - a
    return a - fpa / (2.0 * ((fb - fa - fpa * db) / db ** 2))


def _zoom(restricted, wolfe_one, wolfe_two, lo, hi, g_0, pass_through):
    """Algorithm 3.6: a step in the bracket between lo and hi ((a, phi, dphi) each) that satisfies the strong
    Wolfe conditions; the loop does not run where pass_through holds."""
    (a_lo, phi_lo, dphi_lo), (a_hi, phi_hi, dphi_hi) = lo, hi
    zero = tnp.zeros((), np.int64)
    state = {"done": tnp.asarray(False), "failed": tnp.asarray(False), "j": zero, "a_lo": a_lo, "phi_lo": phi_lo,
             "dphi_lo": dphi_lo, "a_hi": a_hi, "phi_hi": phi_hi, "dphi_hi": dphi_hi, "a_rec": (a_lo + a_hi) / 2.0,
             "phi_rec": (phi_lo + phi_hi) / 2.0, "a_star": tnp.ones_like(a_lo), "phi_star": phi_lo,
             "dphi_star": dphi_lo, "g_star": g_0, "nfev": zero, "ngev": zero}
    threshold = 1e-10 if tnp.finfo(tnp.result_type(a_lo)).bits == 64 else 1e-5

    def body(s):
        dalpha = s["a_hi"] - s["a_lo"]
        low, high = tnp.minimum(s["a_hi"], s["a_lo"]), tnp.maximum(s["a_hi"], s["a_lo"])
        s = {**s, "failed": s["failed"] | (dalpha <= threshold)}
        cubic = _cubicmin(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"], s["a_rec"], s["phi_rec"])
        use_cubic = (s["j"] > 0) & (cubic > low + 0.2 * dalpha) & (cubic < high - 0.2 * dalpha)
        quad = _quadmin(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"])
        use_quad = ~use_cubic & (quad > low + 0.1 * dalpha) & (quad < high - 0.1 * dalpha)
        a_j = tnp.where(use_cubic, cubic, tnp.where(use_quad, quad, (s["a_lo"] + s["a_hi"]) / 2.0))
        phi_j, dphi_j, g_j = restricted(a_j)
        s = {**s, "nfev": s["nfev"] + 1, "ngev": s["ngev"] + 1}
        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= s["phi_lo"])
        star_to_j = wolfe_two(dphi_j) & ~hi_to_j
        hi_to_lo = (dphi_j * (s["a_hi"] - s["a_lo"]) >= 0.0) & ~hi_to_j & ~star_to_j
        lo_to_j = ~hi_to_j & ~star_to_j
        s = _where(hi_to_j, s, {"a_hi": a_j, "phi_hi": phi_j, "dphi_hi": dphi_j, "a_rec": s["a_hi"],
                                "phi_rec": s["phi_hi"]})
        s = {**_where(star_to_j, s, {"a_star": a_j, "phi_star": phi_j, "dphi_star": dphi_j, "g_star": g_j}),
             "done": star_to_j | s["done"]}
        s = _where(hi_to_lo, s, {"a_hi": s["a_lo"], "phi_hi": s["phi_lo"], "dphi_hi": s["dphi_lo"],
                                 "a_rec": s["a_hi"], "phi_rec": s["phi_hi"]})
        s = _where(lo_to_j & ~hi_to_lo, s, {"a_rec": s["a_lo"], "phi_rec": s["phi_lo"]})
        s = _where(lo_to_j, s, {"a_lo": a_j, "phi_lo": phi_j, "dphi_lo": dphi_j})
        return {**s, "j": s["j"] + 1, "failed": s["failed"] | (s["j"] + 1 >= 30)}

    return lax.while_loop(lambda s: ~s["done"] & ~pass_through & ~s["failed"], body, state)


class _LineSearchResults(NamedTuple):
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9, maxiter=20):
    """Algorithm 3.5: a step along the descent direction pk from xk satisfying the strong Wolfe conditions
    (status 0), or the failure of the zoom (1) or of maxiter steps (3)."""
    xk, pk = tnp.ufuncs.promote(xk, pk, to_float=True)
    dtype = pk.dtype

    def restricted(t):
        phi, g = value_and_grad(f)(xk + tnp.asarray(t, dtype) * pk)
        return phi, tnp.real(tnp.dot(g, pk)), g

    given = old_fval is not None and gfk is not None
    if given:
        phi_0, dphi_0 = tnp.asarray(old_fval), tnp.real(tnp.dot(gfk, pk))
    else:
        phi_0, dphi_0, gfk = restricted(0.0)
    start = tnp.asarray(1.0, dtype)
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = tnp.where(candidate > 1, 1.0, candidate).astype(dtype)

    def wolfe_one(a, phi):       # (the negation of the sufficient decrease condition)
        return phi > phi_0 + c1 * a * dphi_0

    def wolfe_two(dphi):
        return tnp.abs(dphi) <= -c2 * dphi_0

    count = tnp.asarray(0 if given else 1, np.int64)
    state = {"done": tnp.asarray(False), "failed": tnp.asarray(False), "i": tnp.asarray(1, np.int64),
             "a_i1": tnp.zeros((), dtype), "phi_i1": phi_0, "dphi_i1": dphi_0, "nfev": count, "ngev": count,
             "a_star": tnp.zeros((), dtype), "phi_star": phi_0, "dphi_star": dphi_0, "g_star": gfk}
    star = ("a_star", "phi_star", "dphi_star", "g_star")

    def body(s):
        a_i = tnp.where(s["i"] == 1, start, s["a_i1"] * 2.0)
        phi_i, dphi_i, g_i = restricted(a_i)
        to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= s["phi_i1"]) & (s["i"] > 1))
        to_i = wolfe_two(dphi_i) & ~to_zoom1
        to_zoom2 = (dphi_i >= 0.0) & ~to_zoom1 & ~to_i
        previous, here = (s["a_i1"], s["phi_i1"], s["dphi_i1"]), (a_i, phi_i, dphi_i)
        zoom1 = _zoom(restricted, wolfe_one, wolfe_two, previous, here, gfk, ~to_zoom1)
        zoom2 = _zoom(restricted, wolfe_one, wolfe_two, here, previous, gfk, ~to_zoom2)
        s = {**s, "nfev": s["nfev"] + 1 + zoom1["nfev"] + zoom2["nfev"],
             "ngev": s["ngev"] + 1 + zoom1["ngev"] + zoom2["ngev"]}
        s = {**_where(to_zoom1, s, {k: zoom1[k] for k in star}), "done": to_zoom1 | s["done"],
             "failed": (to_zoom1 & zoom1["failed"]) | s["failed"]}
        s = {**_where(to_i, s, {"a_star": a_i, "phi_star": phi_i, "dphi_star": dphi_i, "g_star": g_i}),
             "done": to_i | s["done"]}
        s = {**_where(to_zoom2, s, {k: zoom2[k] for k in star}), "done": to_zoom2 | s["done"],
             "failed": (to_zoom2 & zoom2["failed"]) | s["failed"]}
        return {**s, "i": s["i"] + 1, "a_i1": a_i, "phi_i1": phi_i, "dphi_i1": dphi_i}

    s = lax.while_loop(lambda s: ~s["done"] & (s["i"] <= maxiter) & ~s["failed"], body, state)
    status = tnp.where(s["failed"], 1, tnp.where(s["i"] > maxiter, 3, 0))
    alpha = s["a_star"]
    if tnp.finfo(dtype).bits != 64:      # a step below 1e-8 would stall float32's iterates: floored, as JAX
        alpha = tnp.where(tnp.abs(alpha) < 1e-8, tnp.sign(alpha) * 1e-8, alpha)
    return _LineSearchResults(failed=s["failed"] | ~s["done"], nit=s["i"] - 1, nfev=s["nfev"], ngev=s["ngev"],
                              k=s["i"], a_k=alpha, f_k=s["phi_star"], g_k=s["g_star"], status=status)


def _minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """Algorithm 6.1: quasi-Newton steps along -H g, H the inverse Hessian's BFGS estimate."""
    (x0,) = tnp.ufuncs.promote(x0, to_float=True)
    maxiter = np.size(x0) * 200 if maxiter is None else maxiter
    f_0, g_0 = value_and_grad(fun)(x0)
    one = tnp.asarray(1, np.int64)
    state = {"converged": tnp.linalg.norm(g_0, ord=norm) < gtol, "failed": tnp.asarray(False), "k": 0 * one,
             "nfev": one, "ngev": one, "x_k": x0, "f_k": f_0, "g_k": g_0, "H_k": tnp.eye(x0.shape[0], dtype=x0.dtype),
             "old_old_fval": f_0 + tnp.linalg.norm(g_0) / 2, "line_search_status": 0 * one}

    def body(s):
        p_k = -tnp.dot(s["H_k"], s["g_k"])
        found = line_search(fun, s["x_k"], p_k, old_fval=s["f_k"], old_old_fval=s["old_old_fval"], gfk=s["g_k"],
                            maxiter=line_search_maxiter)
        s_k = found.a_k * p_k
        y_k = found.g_k - s["g_k"]
        rho = 1.0 / tnp.dot(y_k, s_k)
        w = tnp.eye(x0.shape[0], dtype=rho.dtype) - rho * tnp.outer(s_k, y_k)
        updated = w @ s["H_k"] @ w.T + rho * tnp.outer(s_k, s_k)
        return {**s, "nfev": s["nfev"] + found.nfev, "ngev": s["ngev"] + found.ngev, "failed": found.failed,
                "line_search_status": found.status.astype(np.int64), "converged":
                tnp.linalg.norm(found.g_k, ord=norm) < gtol, "k": s["k"] + 1, "x_k": s["x_k"] + s_k,
                "f_k": found.f_k, "g_k": found.g_k, "H_k": tnp.where(tnp.isfinite(rho), updated, s["H_k"]),
                "old_old_fval": s["f_k"]}

    s = lax.while_loop(lambda s: ~s["converged"] & ~s["failed"] & (s["k"] < maxiter), body, state)
    status = tnp.where(s["converged"], 0, tnp.where(s["k"] == maxiter, 1,
                                                    tnp.where(s["failed"], 2 + s["line_search_status"], -1)))
    return s, status


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """The minimum of fun(x, *args) over a vector x from x0, as jax.scipy.optimize.minimize: method 'BFGS'
    (options: maxiter, norm, gtol, line_search_maxiter); gradients by reverse mode."""
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized")
    s, status = _minimize_bfgs(lambda x: fun(x, *args), x0, **(options or {}))
    return OptimizeResults(x=s["x_k"], success=s["converged"] & ~s["failed"], status=status, fun=s["f_k"],
                           jac=s["g_k"], hess_inv=s["H_k"], nfev=s["nfev"], njev=s["ngev"], nit=s["k"])


__all__ = ["OptimizeResults", "minimize"]
