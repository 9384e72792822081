"""Neural-network helpers written with tracejit.numpy (so they trace, differentiate and batch)."""
from .. import numpy as tnp
from ..core.avals import is_python_scalar, normalize_axes
from ..core.trace import bind
from ..custom_derivatives import custom_jvp
from ..primitives import elementwise as ew


@custom_jvp
def relu(x):
    """max(x, 0), with derivative 0 at 0 as in JAX."""
    return tnp.maximum(x, 0)


@relu.defjvp
def _relu_jvp(primals, tangents):
    """The derivative at 0 is 0, as in JAX (maximum's rule would split the tie: 0.5)."""
    (x,), (t,) = primals, tangents
    return relu(x), tnp.where(x > 0, t, tnp.zeros_like(t))


def sigmoid(x):
    """1 / (1 + exp(-x)), the logistic function."""
    (x,) = tnp.ufuncs.promote(x, to_float=True)
    return bind(ew.logistic_p, x)


def _kept(reduced, x, axis):
    """A reduction result with the reduced axes back as size 1, after its elementwise ops: the reshape then
    merges with the broadcast that follows it."""
    shape = tnp.shape(x)
    axes = normalize_axes(axis, len(shape))
    return tnp.reshape(reduced, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _shift(x, axis):
    """The gradient-stopped maximum along axis (reduced), 0 where it is not finite."""
    shift = stop_gradient(tnp.max(x, axis=axis))
    return tnp.where(tnp.isfinite(shift), shift, 0)


def logsumexp(x, axis=None, keepdims=False):
    """Stable: subtract the (gradient-stopped) max first, as JAX does."""
    x = tnp.asarray(x)
    shift = _shift(x, axis)
    out = tnp.log(tnp.sum(tnp.exp(x - _kept(shift, x, axis)), axis=axis)) + shift
    return _kept(out, x, axis) if keepdims else out


def log_softmax(x, axis=-1):
    """x - logsumexp(x) along axis, computed stably."""
    x = tnp.asarray(x)
    shifted = x - _kept(stop_gradient(tnp.max(x, axis=axis)), x, axis)
    return shifted - _kept(tnp.log(tnp.sum(tnp.exp(shifted), axis=axis)), x, axis)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along axis, computed stably (the max is subtracted first)."""
    x = tnp.asarray(x)
    unnormalized = tnp.exp(x - _kept(stop_gradient(tnp.max(x, axis=axis)), x, axis))
    return unnormalized / _kept(tnp.sum(unnormalized, axis=axis), x, axis)


def stop_gradient(x):
    """x, as a constant for differentiation: its derivative is zero (jax.lax.stop_gradient)."""
    x = tnp.asarray(x)
    return bind(ew.stop_gradient_p, x) if not is_python_scalar(x) else x


# Last: attention is written with the functions above.
from .attention import dot_product_attention  # noqa: E402
