"""odeint, as jax.experimental.ode.odeint: the Dormand-Prince 5(4) Runge-Kutta method with adaptive steps
(Dormand & Prince 1980; Hairer, Norsett & Wanner, Solving ODEs I, II.4 for the first step), dense output at
the requested times from a quartic fitted to each step, and reverse-mode derivatives by the adjoint method
(Chen et al. 2018, appendix C): the cotangent is carried backwards by integrating the augmented system, so
memory does not grow with the number of steps. The same steps as JAX's, so solutions agree to rounding.

The state is raveled to one vector (tracejit.flatten_util), the steps run in a while_loop per output time
inside a scan over the times; everything is tnp / lax, so it jits, batches and nests in other transforms."""
import functools

import numpy as np

from .. import lax
from .. import numpy as tnp
from ..batching import vmap
from ..core.avals import is_inexact
from ..core.pytree import tree_flatten, tree_map
from ..core.trace import Tracer, _stack
from ..custom_derivatives import custom_vjp
from ..derivative_tools import closure_convert
from ..derivatives import vjp
from ..dtypes import float0
from ..flatten_util import ravel_pytree
from ..numpy.indexing import take_clamped

# The Dormand-Prince tableau: node times, stage weights, the 5th-order solution and its difference from the
# embedded 4th-order one (the local error estimate); the last stage is the first of the next step (FSAL).
NODES = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
STAGES = ((1 / 5,),
          (3 / 40, 9 / 40),
          (44 / 45, -56 / 15, 32 / 9),
          (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
          (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
          (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84))
SOLUTION = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
ERROR = (35 / 384 - 1951 / 21600, 0.0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
         -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1 / 60)
# The solution at the step's midpoint (Shampine's dense output), which the quartic passes through.
MIDPOINT = (6025192743 / 30085553152 / 2, 0.0, 51252292925 / 65400821598 / 2, -2691868925 / 45128329728 / 2,
            187940372067 / 1594534317056 / 2, -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)
SAFETY, MAX_GROWTH, MAX_SHRINK, ORDER = 0.9, 10.0, 0.2, 5.0


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
    """The solution of dy/dt = func(y, t, *args), y(t[0]) = y0, at the times t (increasing floats), as a pytree
    like y0 with a leading axis of len(t). rtol and atol bound each step's local error, mxstep the steps
    between two output times, hmax the step size. Differentiable in y0, t and args by the adjoint method."""
    for leaf in tree_flatten(args)[0]:
        if not (isinstance(leaf, (Tracer, np.ndarray, np.generic, int, float, complex, bool))):
            raise TypeError(f"The contents of odeint *args must be arrays or scalars, but got {leaf!r}.")
    t = tnp.asarray(t)
    if not (is_inexact(t.dtype) and tnp.issubdtype(t.dtype, tnp.floating)):
        raise TypeError(f"odeint: t must be an array of floats, but got dtype {t.dtype}.")
    if t.ndim != 1:
        raise ValueError(f"odeint: t must be a 1-D array of times, but got shape {t.shape}.")
    options = (float(rtol), float(atol), float(mxstep), float(hmax))
    if _stack.builders and _stack.builders[-1] is not None:
        converted, consts = closure_convert(func, y0, t[0], *args)
        return _on_vectors(converted, options, y0, t, *args, *consts)
    return _compiled(func, options, y0, t, *args)


@functools.lru_cache(maxsize=64)
def _jitted_for(func, options):
    """One compiled solver per (func, options) for calls outside a trace; func's closure is read when it is
    traced, as jit reads globals."""
    from ..api import jit
    return jit(lambda y0, t, *args: _on_vectors(func, options, y0, t, *args))


def _compiled(func, options, y0, t, *args):
    try:
        return _jitted_for(func, options)(y0, t, *args)
    except TypeError as e:      # an unhashable func: solve it uncompiled
        if "unhashable" not in str(e):
            raise
        return _on_vectors(func, options, y0, t, *args)


def _on_vectors(func, options, y0, t, *args):
    """odeint on the raveled state; the solution at each time unraveled back to y0's structure."""
    flat0, unravel = ravel_pytree(y0)

    def flat_func(y, t, *args):
        return ravel_pytree(func(unravel(y), t, *args))[0]

    return vmap(unravel)(_solve(flat_func, options, flat0, t, *args))


def _rk_step(func, y, f, t, dt):
    """One Dormand-Prince step from (t, y) with y' = f: (the new y, its derivative, the error estimate, the
    seven stage derivatives)."""
    ks = [f]
    for node, weights in zip(NODES, STAGES):
        increment = sum(w * k for w, k in zip(weights, ks) if w != 0.0)
        ks.append(func(y + dt.astype(y.dtype) * increment, t + dt * node))
    k = tnp.stack(ks)
    new_y = y + dt.astype(y.dtype) * (tnp.asarray(SOLUTION, y.dtype) @ k)
    error = dt.astype(y.dtype) * (tnp.asarray(ERROR, y.dtype) @ k)
    return new_y, ks[-1], error, k


def _quartic(y0, y1, k, dt):
    """The coefficients (highest power first) of the quartic in s = (t - t0) / dt through y0, the midpoint and
    y1, with slopes k[0] and k[-1] at the ends: dense output between the step's ends."""
    dt = dt.astype(y0.dtype)
    mid = y0 + dt * (tnp.asarray(MIDPOINT, y0.dtype) @ k)
    d0, d1 = dt * k[0], dt * k[-1]
    return tnp.stack([-2.0 * d0 + 2.0 * d1 - 8.0 * y0 - 8.0 * y1 + 16.0 * mid,
                      5.0 * d0 - 3.0 * d1 + 18.0 * y0 + 14.0 * y1 - 32.0 * mid,
                      -4.0 * d0 + d1 - 11.0 * y0 - 5.0 * y1 + 16.0 * mid,
                      d0, y0])


def _error_ratio(error, rtol, atol, y0, y1):
    """The RMS of the error estimate over each component's tolerance: a step is accepted when <= 1."""
    tolerance = atol + rtol * tnp.maximum(tnp.abs(y0), tnp.abs(y1))
    ratio = error / tolerance.astype(error.dtype)
    return tnp.sqrt(tnp.mean(tnp.real(ratio * tnp.conj(ratio))))


def _next_step(dt, ratio):
    """The step the error ratio asks for: grows at most 10x, and shrinks at most 5x after an accepted step."""
    shrink = tnp.where(ratio < 1, 1.0, MAX_SHRINK)
    factor = tnp.minimum(MAX_GROWTH, tnp.maximum(ratio ** (-1.0 / ORDER) * SAFETY, shrink))
    return tnp.where(ratio == 0, dt * MAX_GROWTH, dt * factor)


def _first_step(func, t0, y0, f0, rtol, atol):
    """Hairer, Norsett & Wanner's starting step for a method of order 4 (II.4)."""
    scale = (atol + tnp.abs(y0) * rtol).astype(y0.dtype)
    d0, d1 = tnp.linalg.norm(y0 / scale), tnp.linalg.norm(f0 / scale)
    h0 = tnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = func(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = tnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = tnp.where((d1 <= 1e-15) & (d2 <= 1e-15), tnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / tnp.maximum(d1, d2)) ** (1.0 / 5.0))
    return tnp.minimum(100.0 * h0, h1)


@functools.partial(custom_vjp, nondiff_argnums=(0, 1))
def _solve(func, options, y0, ts, *args):
    """The raveled solution at every time of ts: a scan over the output times, each a while_loop of steps."""
    rtol, atol, mxstep, hmax = options
    rhs = lambda y, t: func(y, t, *args)

    def to_time(carry, target):
        def more(state):
            i, _, _, t, dt, _, _ = state
            return (t < target) & (i < mxstep) & (dt > 0)

        def step(state):
            i, y, f, t, dt, last_t, coeffs = state
            new_y, new_f, error, k = _rk_step(rhs, y, f, t, dt)
            ratio = _error_ratio(error, rtol, atol, y, new_y)
            accepted = ratio <= 1.0
            new_dt = tnp.clip(_next_step(dt, ratio), 0.0, hmax)
            keep = lambda new, old: tnp.where(accepted, new, old)
            return (i + 1, keep(new_y, y), keep(new_f, f), keep(t + dt, t), new_dt, keep(t, last_t),
                    keep(_quartic(y, new_y, k, dt), coeffs))

        _, *carry = lax.while_loop(more, step, (0, *carry))
        _, _, t, _, last_t, coeffs = carry
        s = (target - last_t) / (t - last_t)
        return tuple(carry), tnp.polyval(coeffs, s.astype(coeffs.dtype))

    f0 = rhs(y0, ts[0])
    dt = tnp.clip(_first_step(rhs, ts[0], y0, f0, rtol, atol), 0.0, hmax)
    start = (y0, f0, ts[0], dt, ts[0], tnp.stack([y0] * 5))
    _, ys = lax.scan(to_time, start, ts[1:])
    return tnp.concatenate([y0[None], ys])


def _solve_forward(func, options, y0, ts, *args):
    ys = _solve(func, options, y0, ts, *args)
    return ys, (ys, ts, args)


def _solve_backward(func, options, residuals, g):
    """The adjoint method: between consecutive output times (last to first) integrate y backwards together
    with its cotangent and the cotangents of t0 and args (Chen et al., appendix C), adding each output's
    cotangent on the way; time runs negated so that the inner solve sees increasing times."""
    ys, ts, args = residuals

    def augmented(state, minus_t, *args):
        y, y_bar = state[0], state[1]
        y_dot, pullback = vjp(func, y, -minus_t, *args)
        cts = pullback(y_bar)     # an integer argument's is float0: integrated as zeros of its dtype
        return (-y_dot, *tree_map(lambda ct, x: tnp.zeros_like(x) if ct.dtype == float0 else ct, cts,
                                  (y, minus_t, *args)))

    def between(carry, i):
        y_bar, t0_bar, args_bar = carry
        y, t, t_before = take_clamped(ys, i, axis=0), take_clamped(ts, i), take_clamped(ts, i - 1)
        t_bar = tnp.real(tnp.dot(func(y, t, *args), take_clamped(g, i, axis=0)))
        start = (y, y_bar, t0_bar - t_bar, args_bar)
        solved = _adjoint_solve(augmented, options, start, tnp.stack([-t, -t_before]), *args)
        _, y_bar, t0_bar, args_bar = tree_map(lambda x: x[1], solved)
        return (y_bar + take_clamped(g, i - 1, axis=0), t0_bar, args_bar), t_bar

    zero_t = tnp.zeros((), ts.dtype)
    start = (g[-1], zero_t, tree_map(tnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), ts_bar = lax.scan(between, start, tnp.arange(ts.shape[0] - 1, 0, -1))
    return (y_bar, tnp.concatenate([t0_bar[None], ts_bar[::-1]]), *args_bar)


_solve.defvjp(_solve_forward, _solve_backward)


def _adjoint_solve(augmented, options, start, ts, *args):
    """The augmented system (a pytree state) solved through odeint's path, so that it ravels and, nested,
    differentiates again."""
    converted, consts = closure_convert(augmented, start, ts[0], *args)
    return _on_vectors(converted, options, start, ts, *args, *consts)


__all__ = ["odeint"]
