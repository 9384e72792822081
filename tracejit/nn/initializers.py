"""Parameter initializers, as jax.nn.initializers: each is a function init(key, shape, dtype=None) drawing from
tracejit.random, so that a key gives JAX's values (dtype defaults to float64, JAX's `float` with x64).

    init = initializers.glorot_normal()
    w = init(random.PRNGKey(0), (784, 512), np.float32)
"""
import math
import typing

import numpy as np

from .. import numpy as tnp
from .. import random
from ..core.avals import float64, is_float

# The standard deviations of a standard normal truncated to (-2, 2), which truncated_normal draws divide by.
_TRUNCATED_STDDEV = 0.87962566103423978


class Initializer(typing.Protocol):
    """What the initializers of this module return (jax.nn.initializers.Initializer, a typing Protocol): a
    function init(key, shape, dtype=None) -> array."""

    def __call__(self, key, shape, dtype=None):
        """Draws an array of shape and dtype (float64 by default) from key."""
        raise NotImplementedError


def _dtype(dtype):
    return float64 if dtype is None else np.dtype(dtype)


def _real(name, dtype):
    if not is_float(dtype):
        raise TypeError(f"{name}: dtype must be a real float dtype, got {dtype} (complex initializers are not "
                        "supported)")
    return dtype


def zeros(key, shape, dtype=None):
    """An array of zeros (the key is ignored)."""
    return tnp.zeros(shape, _dtype(dtype))


def ones(key, shape, dtype=None):
    """An array of ones (the key is ignored)."""
    return tnp.ones(shape, _dtype(dtype))


def constant(value, dtype=None):
    """An initializer filling every element with value."""
    def init(key, shape, dtype=dtype):
        return tnp.full(shape, value, dtype=_dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """An initializer drawing uniformly from [0, scale)."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.uniform(key, shape, dtype) * np.asarray(scale, dtype)
    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer drawing from a centred normal of standard deviation stddev."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.normal(key, shape, dtype) * np.asarray(stddev, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer drawing from a standard normal truncated to (lower, upper), times stddev."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype) * np.asarray(stddev, dtype)
    return init


def _axes_size(shape, axes):
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out) of a weight of shape: the input and output sizes, times the receptive field (the
    product of the other axes, batch axes excluded)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor with "
                         "default in_axis. Must be at least 2D or specify in_axis explicitly.")
    in_size, out_size = _axes_size(shape, in_axis), _axes_size(shape, out_axis)
    receptive_field = math.prod(shape) / in_size / out_size / _axes_size(shape, batch_axis)
    return in_size * receptive_field, out_size * receptive_field


_DENOMINATORS = {"fan_in": lambda fan_in, fan_out: fan_in, "fan_out": lambda fan_in, fan_out: fan_out,
                 "fan_avg": lambda fan_in, fan_out: (fan_in + fan_out) / 2,
                 "fan_geo_avg": lambda fan_in, fan_out: (fan_in * fan_out) ** 0.5}


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """An initializer whose samples have variance scale / n, n the fan-in, fan-out, their mean or geometric
    mean (mode), drawn from a truncated normal, a normal or a uniform distribution."""
    if mode not in _DENOMINATORS:
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    def init(key, shape, dtype=dtype):
        shape = tuple(int(d) for d in shape)
        dtype = _real("variance_scaling", _dtype(dtype))
        variance = np.asarray(scale / _DENOMINATORS[mode](*_compute_fans(shape, in_axis, out_axis, batch_axis)),
                              dtype)
        if distribution == "truncated_normal":
            stddev = np.sqrt(variance) / np.asarray(_TRUNCATED_STDDEV, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * np.sqrt(variance)
        return random.uniform(key, shape, dtype, -1) * np.sqrt(3 * variance)
    return init


def _fan_initializer(scale, mode, distribution, doc):
    def factory(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    factory.__doc__ = doc
    return factory


glorot_uniform = xavier_uniform = _fan_initializer(
    1.0, "fan_avg", "uniform", "variance_scaling(1, 'fan_avg', 'uniform') (Glorot and Bengio, 2010).")
glorot_normal = xavier_normal = _fan_initializer(
    1.0, "fan_avg", "truncated_normal", "variance_scaling(1, 'fan_avg', 'truncated_normal').")
lecun_uniform = _fan_initializer(1.0, "fan_in", "uniform", "variance_scaling(1, 'fan_in', 'uniform') (LeCun, 1998).")
lecun_normal = _fan_initializer(1.0, "fan_in", "truncated_normal",
                                "variance_scaling(1, 'fan_in', 'truncated_normal').")
he_uniform = kaiming_uniform = _fan_initializer(2.0, "fan_in", "uniform",
                                                "variance_scaling(2, 'fan_in', 'uniform') (He et al., 2015).")
he_normal = kaiming_normal = _fan_initializer(2.0, "fan_in", "truncated_normal",
                                              "variance_scaling(2, 'fan_in', 'truncated_normal').")


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of (semi-)orthogonal matrices: the columns (axis column_axis) are orthonormal over the
    other axes flattened, times scale."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        shape = tuple(int(d) for d in shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if 0 in shape:
            return tnp.zeros(shape, dtype)
        n_cols = shape[column_axis]
        q = random.orthogonal(key, math.prod(shape) // n_cols, (), dtype, n_cols)
        rest = tuple(d for i, d in enumerate(shape) if i != column_axis % len(shape))
        return np.asarray(scale, dtype) * tnp.moveaxis(tnp.reshape(q, rest + (n_cols,)), -1, column_axis)
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of convolution kernels (3-d to 5-d, spatial axes first): zeros but at the centre of the
    spatial axes, which holds an orthogonal (in, out) matrix (orthogonal's draw), so the convolution is an
    isometry at initialization."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        shape = tuple(int(d) for d in shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"Delta orthogonal initializer requires a 3D, 4D or 5D shape, got {shape}.")
        if shape[-1] < shape[-2]:
            raise ValueError(f"`fan_in` must be less or equal than `fan_out`, got shape {shape}.")
        matrix = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        at_centre = np.zeros(shape[:-2] + (1, 1), bool)
        at_centre[tuple((k - 1) // 2 for k in shape[:-2])] = True
        return tnp.where(at_centre, matrix, tnp.zeros((), dtype))
    return init
