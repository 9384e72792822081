"""Optimizers as jax.example_libraries.optimizers, written on tracejit's public API.

An optimizer is a triple (init_fun, update_fun, get_params): init_fun(params) -> opt_state,
update_fun(step, grads, opt_state) -> opt_state, get_params(opt_state) -> params, where params and grads are
pytrees of arrays of one structure and opt_state an `OptimizerState` (a pytree, so it passes through jit). Each
optimizer below is written for one array and lifted to pytrees by the `optimizer` decorator. A step size is a
number or a schedule, a function of the step number.

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    opt_state = opt_init(params)

    @tj.jit
    def step(i, opt_state, batch):
        return opt_update(i, tj.grad(loss)(get_params(opt_state), batch), opt_state)
"""
import functools
from collections import namedtuple
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .. import numpy as tnp
from ..numpy.indexing import take_clamped
from ..tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
register_pytree_node(OptimizerState, lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
                     lambda aux, children: OptimizerState(children[0], *aux))


class Optimizer(NamedTuple):
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def optimizer(opt_maker):
    """Lift an optimizer of one array, opt_maker(*args) -> (init, update, get_params) on arrays, to pytrees of
    parameters: the state is an OptimizerState holding each array's state flattened, and the structures."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        def tree_init(params):
            leaves, tree = tree_flatten(params)
            states = [tree_flatten(init(x)) for x in leaves]
            return OptimizerState([s for s, _ in states], tree, tuple(t for _, t in states))

        def tree_update(i, grads, opt_state):
            packed, tree, subtrees = opt_state
            leaves, grad_tree = tree_flatten(grads)
            if grad_tree != tree:
                raise TypeError(f"optimizer update: the gradient tree {grad_tree} does not match the parameter tree "
                                f"{tree} the optimizer was initialized with")
            new = [tree_flatten(update(i, g, tree_unflatten(t, s))) for g, s, t in zip(leaves, packed, subtrees)]
            if any(t != t2 for t, (_, t2) in zip(subtrees, new)):
                raise TypeError("optimizer update: the update function changed the structure of a state")
            return OptimizerState([s for s, _ in new], tree, subtrees)

        def tree_get_params(opt_state):
            packed, tree, subtrees = opt_state
            return tree_unflatten(tree, [get_params(tree_unflatten(t, s)) for s, t in zip(packed, subtrees)])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def _first(state):
    return state[0]


def _optimizer(update, moments):
    """(init, update, get_params) of an optimizer whose state is the parameters and `moments` arrays, zero at
    first."""
    return lambda x0: (x0, *(tnp.zeros_like(x0) for _ in range(moments))), update, _first


def _rate(step_size, i, like):
    """The step size at step i in the dtype of `like`, so that a traced step number (an int64) does not widen
    float32 parameters (JAX's step numbers are weakly typed)."""
    return tnp.astype(step_size(i), tnp.asarray(like).dtype)


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x - _rate(step_size, i, g) * g."""
    step_size = make_schedule(step_size)
    return Optimizer(lambda x0: x0, lambda i, g, x: x - _rate(step_size, i, g) * g, lambda x: x)


def _heavy_ball(step_size, mass, nesterov):
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - _rate(step_size, i, g) * (mass * velocity + g if nesterov else velocity), velocity

    return _optimizer(update, 1)


@optimizer
def momentum(step_size, mass):
    """SGD with momentum: velocity = mass * velocity + g; x - _rate(step_size, i, g) * velocity."""
    return _heavy_ball(step_size, mass, nesterov=False)


@optimizer
def nesterov(step_size, mass):
    """SGD with Nesterov momentum: x - _rate(step_size, i, g) * (mass * velocity + g) with the new velocity."""
    return _heavy_ball(step_size, mass, nesterov=True)


def _inverse_sqrt(v):
    """1 / sqrt(v) where v > 0, else 0."""
    return tnp.where(v > 0, 1.0 / tnp.sqrt(v), 0.0)


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum on the scaled gradient."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + tnp.square(g)
        m = (1.0 - momentum) * (g * _inverse_sqrt(g_sq)) + momentum * m
        return x - _rate(step_size, i, g) * m, g_sq, m

    return _optimizer(update, 2)


def _average(avg, value, decay):
    """The exponentially decaying average: (1 - decay) * value + decay * avg."""
    return (1 - decay) * value + decay * avg


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: x - _rate(step_size, i, g) * g / sqrt(mean square of g + eps)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = _average(avg_sq_grad, tnp.square(g), gamma)
        return x - _rate(step_size, i, g) * g / tnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return _optimizer(update, 1)


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp whose steps accumulate with momentum."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = _average(avg_sq_grad, tnp.square(g), gamma)
        mom = momentum * mom + _rate(step_size, i, g) * g / tnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return _optimizer(update, 2)


def _bias_correction(b, i, like):
    """1 - b ** (i + 1) in the dtype of `like`."""
    dtype = tnp.asarray(like).dtype
    return 1 - tnp.asarray(b, dtype) ** tnp.astype(i + 1, dtype)


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba 2015): bias-corrected first and second moment estimates."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m, v = _average(m, g, b1), _average(v, tnp.square(g), b2)
        m_hat, v_hat = m / _bias_correction(b1, i, m), v / _bias_correction(b2, i, m)
        return x - _rate(step_size, i, g) * m_hat / (tnp.sqrt(v_hat) + eps), m, v

    return _optimizer(update, 2)


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm in place of the second moment."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m, u = _average(m, g, b1), tnp.maximum(b2 * u, tnp.abs(g))
        return x - (_rate(step_size, i, g) / _bias_correction(b1, i, m)) * m / (u + eps), m, u

    return _optimizer(update, 2)


class _Shape:
    """A parameter's shape kept in the state's structure (not as leaves), so that the state passes through jit."""

    def __init__(self, shape):
        self.shape = tuple(shape)


register_pytree_node(_Shape, lambda s: ((), s.shape), lambda shape, _: _Shape(shape))


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): per axis, the maximum accumulated squared gradient over the other axes; an element
    is scaled by the minimum of its axes' accumulators."""
    step_size = make_schedule(step_size)

    def init(x0):
        x0 = tnp.asarray(x0)
        shape = x0.shape
        x0 = tnp.atleast_1d(x0)
        return x0, tnp.zeros_like(x0), [tnp.zeros(n, x0.dtype) for n in x0.shape], _Shape(shape)

    def update(i, g, state):
        x, m, vs, shape = state
        ndim = len(vs)
        along = [tnp.reshape(v, [-1 if k == j else 1 for k in range(ndim)]) for j, v in enumerate(vs)]
        accum = functools.reduce(tnp.minimum, along) + tnp.square(g)
        m = (1.0 - momentum) * (g * _inverse_sqrt(accum)) + momentum * m
        vs = [tnp.max(accum, axis=tuple(k for k in range(ndim) if k != j)) for j in range(ndim)]
        return x - _rate(step_size, i, g) * m, m, vs, shape

    return init, update, lambda state: tnp.reshape(state[0], state[3].shape)

# ------------------------------------------------------------------------------------------------ schedules


def constant(step_size):
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    if staircase:
        return lambda i: step_size / (1 + decay_rate * tnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    def schedule(step_num):
        step_mult = (1 - tnp.minimum(step_num, decay_steps) / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """values[k] for steps after k of the boundaries (len(values) == len(boundaries) + 1)."""
    boundaries, values = np.asarray(boundaries), np.asarray(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError(f"piecewise_constant: boundaries and values must be sequences, got shapes "
                         f"{boundaries.shape} and {values.shape}")
    if boundaries.shape[0] != values.shape[0] - 1:
        raise ValueError(f"piecewise_constant: boundaries ({boundaries.shape[0]}) must be one shorter than values "
                         f"({values.shape[0]})")
    return lambda i: take_clamped(values, tnp.sum(i > boundaries))


def make_schedule(scalar_or_schedule):
    """A schedule as it is, a number as a constant schedule."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"step size: expected a number or a schedule (a function of the step), got "
                    f"{type(scalar_or_schedule).__name__}")

# ------------------------------------------------------------------------------------------------- utilities


def l2_norm(tree):
    """The l2 norm of a pytree of arrays (useful for weight decay)."""
    leaves, _ = tree_flatten(tree)
    return tnp.sqrt(sum(tnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """The gradients scaled down to l2 norm max_norm when their norm exceeds it."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: tnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks the boundary between the parameters' tree and an array's state tree (for serializing states)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """The OptimizerState as the parameters' tree with JoinPoint leaves holding each array's state."""
    packed, tree, subtrees = opt_state
    return tree_unflatten(tree, [JoinPoint(tree_unflatten(t, s)) for s, t in zip(packed, subtrees)])


def pack_optimizer_state(marked_pytree):
    """The inverse of unpack_optimizer_state."""
    joins, tree = tree_flatten(marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(j, JoinPoint) for j in joins):
        raise TypeError("pack_optimizer_state: every leaf must be a JoinPoint (from unpack_optimizer_state)")
    states = [tree_flatten(j.subtree) for j in joins]
    return OptimizerState([s for s, _ in states], tree, tuple(t for _, t in states))


__all__ = ["JoinPoint", "Optimizer", "OptimizerState", "adagrad", "adam", "adamax", "clip_grads", "constant",
           "exponential_decay", "inverse_time_decay", "l2_norm", "make_schedule", "momentum", "nesterov",
           "optimizer", "pack_optimizer_state", "piecewise_constant", "polynomial_decay", "rmsprop",
           "rmsprop_momentum", "sgd", "sm3", "unpack_optimizer_state"]
