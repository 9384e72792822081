"""Stax, as jax.example_libraries.stax: a small neural-network library written on tracejit's public API.

A layer is a pair (init_fun, apply_fun): init_fun(rng, input_shape) -> (output_shape, params) draws the
parameters from a PRNG key (tracejit.random, JAX's bits, so the same key gives JAX's parameters), and
apply_fun(params, inputs, **kwargs) -> outputs, where kwargs may carry rng= (Dropout needs one). Combinators
(serial, parallel) make layers of layers; params are pytrees, so they pass through jit, grad and the optimizers.

    init_fun, apply_fun = stax.serial(stax.Conv(8, (3, 3)), stax.Relu, stax.Flatten, stax.Dense(10))
    out_shape, params = init_fun(random.PRNGKey(0), (-1, 28, 28, 1))
    logits = apply_fun(params, images)
"""
import functools
import math

import numpy as np

from .. import lax, nn, random
from .. import numpy as tnp
from ..nn import log_softmax, relu, sigmoid, softmax
from ..nn.initializers import glorot_normal, normal, ones, zeros

glorot, randn, logsoftmax = glorot_normal, normal, log_softmax   # JAX's aliases
_GLOROT, _NORMAL, _TINY_NORMAL = glorot_normal(), normal(), normal(1e-6)   # the default initializers (pure)


def Dense(out_dim, W_init=_GLOROT, b_init=_NORMAL):
    """Fully connected: inputs @ W + b, W of shape (in, out_dim)."""
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        return tuple(input_shape[:-1]) + (out_dim,), (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return tnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _conv_layer(shape_tuple, convolve):
    """A convolution layer constructor (dimension_numbers, out_chan, filter_shape, ...) from its output-shape
    rule and its convolution: the kernel's 'I' axis takes the input's channels, 'O' is out_chan, the spatial axes
    filter_shape; the bias broadcasts along the output's 'C' axis."""
    def constructor(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                    b_init=_TINY_NORMAL):
        lhs_spec, rhs_spec, out_spec = dimension_numbers
        strides = tuple(strides or (1,) * len(filter_shape))
        W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

        def init_fun(rng, input_shape):
            spatial = iter(filter_shape)
            kernel_shape = tuple(out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
                                 else next(spatial) for c in rhs_spec)
            output_shape = shape_tuple(input_shape, kernel_shape, strides, padding, dimension_numbers)
            k1, k2 = random.split(rng)
            bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
            return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

        def apply_fun(params, inputs, **kwargs):
            W, b = params
            return convolve(inputs, W, strides, padding, dimension_numbers) + b
        return init_fun, apply_fun
    return constructor


GeneralConv = _conv_layer(lax.conv_general_shape_tuple, lambda x, W, strides, padding, dn: lax.conv_general_dilated(
    x, W, strides, padding, dimension_numbers=dn))
GeneralConv.__doc__ = "Convolution layer (lax.conv_general_dilated) with the given dimension numbers."
Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
GeneralConvTranspose = _conv_layer(lax.conv_transpose_shape_tuple, lambda x, W, strides, padding, dn:
                                   lax.conv_transpose(x, W, strides, padding, dimension_numbers=dn))
GeneralConvTranspose.__doc__ = "Transposed-convolution layer (lax.conv_transpose) with the given dimension numbers."
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones):
    """Normalizes over `axis` with the batch's own statistics (no running averages, as JAX's stax), then scales
    by gamma and shifts by beta, parameters over the remaining axes."""
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        return input_shape, (beta_init(k1, shape) if center else (), gamma_init(k2, shape) if scale else ())

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        mean = tnp.mean(x, axis, keepdims=True)
        z = (x - mean) * lax.rsqrt(tnp.mean(tnp.square(x), axis, keepdims=True) - tnp.square(mean) + epsilon)
        kept = tuple(None if i in axis else slice(None) for i in range(tnp.ndim(x)))
        z = gamma[kept] * z if scale else z
        return z + beta[kept] if center else z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A layer without parameters applying fun(inputs, **fun_kwargs)."""
    return (lambda rng, input_shape: (input_shape, ())), (lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs))


def _nn(name):
    """tracejit.nn's function `name`, looked up when the layer runs: some activations (elu, gelu, selu, ...) arrive
    in tracejit.nn separately from this module, and a layer built before they exist says so when applied."""
    def fun(x, **kwargs):
        if not hasattr(nn, name):
            raise NotImplementedError(f"stax: tracejit.nn has no {name} yet, which this layer applies")
        return getattr(nn, name)(x, **kwargs)
    fun.__name__ = name
    return fun


def __getattr__(name):
    """JAX's stax also offers these jax.nn functions by name: tracejit.nn's, where it has them."""
    if name in ("softplus", "elu", "leaky_relu", "selu", "gelu", "standardize") and hasattr(nn, name):
        return getattr(nn, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Tanh = elementwise(tnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(tnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(_nn("softplus"))
Sigmoid = elementwise(sigmoid)
Elu = elementwise(_nn("elu"))
LeakyRelu = elementwise(_nn("leaky_relu"))
Selu = elementwise(_nn("selu"))
Gelu = elementwise(_nn("gelu"))


def _window_axes(window_shape, strides, spec):
    """Window and strides over every axis: 1 on the batch and channel axes (spec's 'N' and 'C', or the first and
    last axes without a spec)."""
    strides = tuple(strides or (1,) * len(window_shape))
    window, steps = list(window_shape), list(strides)
    for i in sorted((0, len(window_shape) + 1) if spec is None else (spec.index("N"), spec.index("C"))):
        window.insert(i, 1)
        steps.insert(i, 1)
    return tuple(window), tuple(steps)


def _pooling_layer(reduce, normalize=False):
    """A pooling layer constructor (window_shape, strides=None, padding='VALID', spec=None) from its windowed
    reduction; with normalize, each window's result is divided by the count of input elements it covers (padding
    excluded, as JAX's AvgPool)."""
    def constructor(window_shape, strides=None, padding="VALID", spec=None):
        window, steps = _window_axes(window_shape, strides, spec)

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, window, steps, padding)
            return lax.reduce_window_shape_tuple(input_shape, window, steps, pads), ()

        def apply_fun(params, inputs, **kwargs):
            out = reduce(inputs, window, steps, padding)
            return out / _window_counts(tnp.shape(inputs), window, steps, padding, out.dtype) if normalize else out
        return init_fun, apply_fun
    return constructor


def _window_counts(shape, window, strides, padding, dtype):
    """How many input elements each window covers (padding excluded), a NumPy constant that broadcasts against the
    pooled result: the product of one count per axis (size 1 along the axes where every count is 1)."""
    counts = np.ones((1,) * len(shape), dtype)
    for axis, (n, w, s, (lo, hi)) in enumerate(zip(shape, window, strides,
                                                    lax.padtype_to_pads(shape, window, strides, padding))):
        starts = np.arange((n + lo + hi - w) // s + 1) * s - lo
        along = np.minimum(starts + w, n) - np.maximum(starts, 0)
        if np.any(along != 1):
            counts = counts * along.reshape([-1 if i == axis else 1 for i in range(len(shape))]).astype(dtype)
    return counts


MaxPool = _pooling_layer(lax.reduce_window_max)
SumPool = _pooling_layer(lax.reduce_window_sum)
AvgPool = _pooling_layer(lax.reduce_window_sum, normalize=True)


def _flatten():
    """Flattens all but the leading (batch) axis."""
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()
    return init_fun, lambda params, inputs, **kwargs: tnp.reshape(inputs, (tnp.shape(inputs)[0], -1))


Flatten = _flatten()
Identity = elementwise(lambda x: x)
FanInSum = (lambda rng, input_shape: (input_shape[0], ())), (lambda params, inputs, **kwargs: sum(inputs))


def FanOut(num):
    """num copies of the input, for parallel branches."""
    return (lambda rng, input_shape: ([input_shape] * num, ())), (lambda params, inputs, **kwargs: [inputs] * num)


def FanInConcat(axis=-1):
    """Concatenates the inputs of parallel branches along axis."""
    def init_fun(rng, input_shape):
        first = tuple(input_shape[0])
        ax = axis % len(first)
        return first[:ax] + (sum(s[ax] for s in input_shape),) + first[ax + 1:], ()
    return init_fun, lambda params, inputs, **kwargs: tnp.concatenate(inputs, axis)


def Dropout(rate, mode="train"):
    """In mode 'train', keeps each input with probability `rate` (JAX's stax calls the keep probability rate)
    and divides the kept ones by it; apply_fun needs rng=. In any other mode the identity."""
    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError("Dropout: apply_fun needs a PRNG key, apply_fun(params, inputs, rng=key)")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, tnp.shape(inputs))
        return tnp.where(keep, inputs / rate, 0)
    return (lambda rng, input_shape: (input_shape, ())), apply_fun


def _layer_rngs(rng, count):
    return random.split(rng, count) if rng is not None else (None,) * count


def serial(*layers):
    """The layers one after another; each gets its own key (split from the one given) at init and apply."""
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, layer_params = init(layer_rng, input_shape)
            params.append(layer_params)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_rngs(kwargs.pop("rng", None), len(apply_funs))
        for apply, layer_params, rng in zip(apply_funs, params, rngs):
            inputs = apply(layer_params, inputs, rng=rng, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """The layers side by side: the i-th applies to the i-th of a sequence of inputs (see FanOut, FanInSum)."""
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        results = [init(r, shape) for init, r, shape in zip(init_funs, random.split(rng, len(layers)), input_shape)]
        return tuple(s for s, _ in results), tuple(p for _, p in results)

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_rngs(kwargs.pop("rng", None), len(apply_funs))
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built by make_layer(input_shape) once the input shape is known."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(tnp.shape(inputs))[1](params, inputs, **kwargs)
    return init_fun, apply_fun
