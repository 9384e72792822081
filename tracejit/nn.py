"""Neural-network helpers written with tracejit.numpy (so they trace, differentiate and batch)."""
from . import numpy as tnp
from .core.avals import is_python_scalar
from .core.trace import bind
from .primitives import elementwise as ew


def relu(x):
    return tnp.maximum(x, 0)


def sigmoid(x):
    (x,) = tnp.ufuncs.promote(x, to_float=True)
    return bind(ew.logistic_p, x)


def logsumexp(x, axis=None, keepdims=False):
    """Stable: subtract the (gradient-stopped) max first, as JAX does."""
    x = tnp.asarray(x)
    shift = stop_gradient(tnp.max(x, axis=axis, keepdims=True))
    shift = tnp.where(tnp.isfinite(shift), shift, 0)
    out = tnp.log(tnp.sum(tnp.exp(x - shift), axis=axis, keepdims=True)) + shift
    return out if keepdims else tnp.squeeze(out, axis) if axis is not None else tnp.reshape(out, ())


def log_softmax(x, axis=-1):
    x = tnp.asarray(x)
    return x - logsumexp(x, axis=axis, keepdims=True)


def softmax(x, axis=-1):
    x = tnp.asarray(x)
    unnormalized = tnp.exp(x - stop_gradient(tnp.max(x, axis=axis, keepdims=True)))
    return unnormalized / tnp.sum(unnormalized, axis=axis, keepdims=True)


def stop_gradient(x):
    x = tnp.asarray(x)
    return bind(ew.stop_gradient_p, x) if not is_python_scalar(x) else x
