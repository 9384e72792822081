"""Neural-network functions as jax.nn has them, written with tracejit.numpy (so they trace, differentiate and
batch). Their formulas are JAX's, so that values and derivatives (at kinks too) agree with JAX."""
import numpy as np

from .. import numpy as tnp
from ..core.avals import DEFAULT_FLOAT, normalize_axes
from ..core.trace import bind
from ..custom_derivatives import custom_jvp
from ..numpy._base import stop_gradient
from ..primitives import elementwise as ew
from ..primitives import special as sp


def _floats(*xs):
    """The arguments as arrays of one float dtype (integers become the default float)."""
    return tnp.ufuncs.promote(*xs, to_float=True)


def identity(x):
    """x, as an array."""
    return tnp.asarray(x)


@custom_jvp
def relu(x):
    """max(x, 0), with derivative 0 at 0 as in JAX."""
    return tnp.maximum(x, 0)


@relu.defjvp
def _relu_jvp(primals, tangents):
    """The derivative at 0 is 0, as in JAX (maximum's rule would split the tie: 0.5)."""
    (x,), (t,) = primals, tangents
    return relu(x), tnp.where(x > 0, t, tnp.zeros_like(t))


@custom_jvp
def relu6(x):
    """min(max(x, 0), 6)."""
    return tnp.minimum(tnp.maximum(x, 0), 6.0)


@relu6.defjvp
def _relu6_jvp(primals, tangents):
    """0 at both kinks, as in JAX."""
    (x,), (t,) = primals, tangents
    return relu6(x), tnp.where((x > 0) & (x < 6), t, tnp.zeros_like(t))


def sigmoid(x):
    """1 / (1 + exp(-x)), the logistic function."""
    (x,) = _floats(x)
    return bind(ew.logistic_p, x)


def softplus(x):
    """log(1 + exp(x)), as logaddexp(x, 0) so that it does not overflow."""
    return tnp.logaddexp(x, 0)


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x)."""
    return -softplus(-tnp.asarray(x))


def silu(x):
    """x * sigmoid(x) (also swish)."""
    (x,) = _floats(x)
    return x * sigmoid(x)


swish = silu


def mish(x):
    """x * tanh(softplus(x))."""
    (x,) = _floats(x)
    return x * tnp.tanh(softplus(x))


def elu(x, alpha=1.0):
    """The exponential sees only x <= 0, so no branch overflows where the other is chosen."""
    (x,) = _floats(x)
    return tnp.where(x > 0, x, alpha * tnp.expm1(tnp.where(x > 0, 0.0, x)))


def leaky_relu(x, negative_slope=1e-2):
    """x where x >= 0, else negative_slope * x."""
    x = tnp.asarray(x)
    return tnp.where(x >= 0, x, negative_slope * x)


def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha): elu, continuously differentiable for any alpha."""
    return tnp.maximum(x, 0.0) + alpha * tnp.expm1(tnp.minimum(x, 0.0) / alpha)


def selu(x):
    """elu scaled by the self-normalizing constants of Klambauer et al. (as JAX)."""
    return 1.0507009873554804934193349852946 * elu(x, 1.6732632423543772848170429916717)


def gelu(x, approximate=True):
    """The tanh approximation (JAX's default) or, with approximate=False, x * (1 + erf(x / sqrt(2))) / 2."""
    (x,) = _floats(x)
    if not approximate:
        return x * (bind(sp.erf_p, x * float(1 / np.sqrt(2))) + 1.0) / 2.0
    return x * (0.5 * (1.0 + tnp.tanh(float(np.sqrt(2 / np.pi)) * (x + 0.044715 * x ** 3))))


def soft_sign(x):
    """x / (|x| + 1)."""
    x = tnp.asarray(x)
    return x / (tnp.abs(x) + 1)


def hard_tanh(x):
    """x clipped to [-1, 1]."""
    x = tnp.asarray(x)
    return tnp.where(x > 1, 1, tnp.where(x < -1, -1, x))


def hard_sigmoid(x):
    """relu6(x + 3) / 6, a piecewise-linear sigmoid."""
    return relu6(tnp.asarray(x) + 3.0) / 6.0


def hard_silu(x):
    """x * hard_sigmoid(x) (also hard_swish)."""
    return tnp.asarray(x) * hard_sigmoid(x)


hard_swish = hard_silu


def sparse_plus(x):
    """0 below -1, x above 1, (x + 1)**2 / 4 between: a smooth relu."""
    x = tnp.asarray(x)
    return tnp.where(x <= -1.0, 0.0, tnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    """(x + 1) / 2 clipped to [0, 1]: the derivative of sparse_plus."""
    return 0.5 * tnp.clip(tnp.asarray(x) + 1.0, 0.0, 2.0)


def squareplus(x, b=4):
    """(x + sqrt(x**2 + b)) / 2, a smooth relu without exponentials."""
    x = tnp.asarray(x)
    return (x + tnp.sqrt(tnp.square(x) + b)) / 2


def glu(x, axis=-1):
    """The first half along axis gated by the sigmoid of the second."""
    x = tnp.asarray(x)
    size = tnp.shape(x)[axis]
    if size % 2:
        raise ValueError(f"glu: axis {axis} must have an even size, got shape {tnp.shape(x)}")
    first, second = tnp.split(x, 2, axis)
    return first * sigmoid(second)


def _shift(x, axis, where):
    """The gradient-stopped maximum along axis (kept as size-1 axes), 0 where it is not finite."""
    shift = tnp.max(x, axis, keepdims=True, where=where, initial=-np.inf)
    return stop_gradient(tnp.where(tnp.isfinite(shift), shift, 0))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))), stable: the (gradient-stopped) maximum is subtracted first, as JAX does. With
    return_sign, (log|sum|, sign of the sum); else a negative sum gives NaN."""
    if where is not None:
        a = tnp.where(where, a, 0)
    if b is not None:
        a, b = _floats(a, b)
        a = tnp.where(b != 0, a, -np.inf)
    else:
        (a,) = _floats(a)
    shift = _shift(a, axis, where)
    scaled = tnp.exp(a - shift) if b is None else tnp.exp(a - shift) * b
    total = tnp.sum(scaled, axis, keepdims=keepdims, where=where)
    sign = tnp.sign(total)
    out = tnp.log(tnp.abs(total)) + tnp.reshape(shift, tnp.shape(total))
    if return_sign:
        return out, sign
    return out if b is None else tnp.where(sign < 0, np.nan, out)


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) along axis: logsumexp less the log of the count of elements (of those where selects)."""
    lse = logsumexp(x, axis, keepdims=keepdims, where=where)
    chosen = tnp.broadcast_to(True if where is None else where, tnp.shape(x))
    return lse - tnp.log(tnp.sum(chosen, axis, keepdims=keepdims, dtype=lse.dtype))


@custom_jvp
def log1mexp(x):
    """log(1 - exp(-x)) for x >= 0, accurate on both sides of log 2 (Maechler's switch, as JAX's)."""
    (x,) = _floats(x)
    return tnp.where(x < np.log(2.0), tnp.log(-tnp.expm1(-x)), tnp.log1p(-tnp.exp(-x)))


@log1mexp.defjvp
def _log1mexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1mexp(x), t / tnp.expm1(x)


def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along axis, computed stably; masked-out elements give -inf, as in JAX."""
    (x,) = _floats(x)
    shifted = (x if where is None else tnp.where(where, x, -np.inf)) - _shift(x, axis, where)
    result = shifted - tnp.log(tnp.sum(tnp.exp(shifted), axis, keepdims=True, where=where))
    return result if where is None else tnp.where(where, result, -np.inf)


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along axis, computed stably (the max is subtracted first); masked-out elements give
    0, as in JAX."""
    (x,) = _floats(x)
    unnormalized = tnp.exp((x if where is None else tnp.where(where, x, -np.inf)) - _shift(x, axis, where))
    result = unnormalized / tnp.sum(unnormalized, axis, keepdims=True, where=where)
    return result if where is None else tnp.where(where, result, 0)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *, algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon); 'fast' is JAX's default: mean(x**2) - mean**2, clipped at 0."""
    (x,) = _floats(x)
    if mean is None:
        mean = tnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm not in ("fast", "stable"):
            raise ValueError(f"standardize: algorithm must be 'fast' or 'stable', got {algorithm!r}")
        if algorithm == "stable":
            variance = tnp.mean(tnp.square(x - mean), axis, keepdims=True, where=where)
        else:
            variance = tnp.clip(tnp.mean(tnp.square(x), axis, keepdims=True, where=where) - tnp.square(mean), 0)
    return (x - mean) / tnp.sqrt(variance + epsilon)


def one_hot(x, num_classes, *, dtype=DEFAULT_FLOAT, axis=-1):
    """1 where x equals the class index along the new axis (out-of-range and non-integer values: all 0)."""
    x = tnp.asarray(x)
    axis = normalize_axes(axis, tnp.ndim(x) + 1)[0]
    classes = tnp.reshape(tnp.arange(int(num_classes)), tuple(-1 if k == axis else 1 for k in range(tnp.ndim(x) + 1)))
    return tnp.astype(tnp.expand_dims(x, axis) == classes, dtype)


def tanh(x):
    """The hyperbolic tangent (jax.nn re-exports it)."""
    return tnp.tanh(x)


__all__ = [
    "celu",
    "dot_product_attention",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]     # not stop_gradient (tj.stop_gradient): jax.nn has none


# Last: attention is written with the functions above.
from .attention import dot_product_attention
