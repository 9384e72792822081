"""Continuous distributions, each derived from uniform bits as JAX derives it, so that samples are JAX's: uniform
exactly, the others to an ulp or two (they go through log1p, erf_inv ..., computed as XLA computes them:
xla_math).

The default dtype is float64, which is JAX's `float` with jax_enable_x64 (tracejit's default float is NumPy's);
pass dtype=float32 for the values JAX gives without x64.
"""
import math

import numpy as np

from .. import lax
from .. import numpy as tnp
from ..core.avals import broadcast_shapes, float64, is_float
from ..core.errors import ShapeError
from ..nn import stop_gradient
from . import xla_math
from .keys import UINT, canonical_shape, check_key, jitted_when_large, random_bits, split

# ------------------------------------------------------------------------------------------------ helpers


def float_dtype(name, dtype):
    """dtype, a real float dtype (float64 when None, as JAX's `float` with x64)."""
    dtype = float64 if dtype is None else np.dtype(dtype)
    if not is_float(dtype):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dtype}")
    return dtype


def check_shape(name, shape, *param_shapes):
    """shape, which the parameters' shapes must broadcast to (JAX's _check_shape)."""
    if not param_shapes:
        return shape
    try:
        result = broadcast_shapes(shape, *param_shapes)
    except ShapeError:
        result = "an error (they do not broadcast together)"
    if result != tuple(shape):
        raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape argument, and the "
                         f"result of broadcasting the shapes must equal the shape argument, but got result "
                         f"{result} for shape argument {shape} and parameter shapes {list(param_shapes)}.")
    return shape


def sample_shape(name, shape, *params):
    """The shape to draw: given (checked against the parameters), or the parameters' broadcast shape."""
    shapes = [tnp.shape(p) for p in params]
    if shape is None:
        return broadcast_shapes(*shapes) if shapes else ()
    return check_shape(name, canonical_shape(name, shape), *shapes)


def check_castable(name, dtype, *params):
    """Array parameters must cast safely to dtype (Python scalars always do, also as weakly typed tracers: a
    jitted sampler called outside a trace with a Python float), as in JAX."""
    for p in params:
        weak = isinstance(p, (bool, int, float)) or getattr(p, "weak_type", False)
        if not weak and not tnp.can_cast(tnp.asarray(p).dtype, dtype):
            raise TypeError(f"In arguments to {name}, cannot safely cast argument of type "
                            f"{tnp.asarray(p).dtype} to {dtype}")


def float_sampler(name, key, dtype, shape, *params):
    """(key data, dtype, shape) of a sampler of floats with parameters params: the checks every such sampler
    makes, in JAX's order (one key, a float dtype the parameters cast to safely, a shape they broadcast to)."""
    data, _ = check_key(name, key)
    dtype = float_dtype(name, dtype)
    check_castable(name, dtype, *params)
    return data, dtype, sample_shape(name, shape, *params)


def array(x):
    """x as an array (a Python scalar becomes a NumPy one of its default dtype: float64, int64, bool)."""
    return np.asarray(x) if isinstance(x, (bool, int, float)) else tnp.asarray(x)


def as_dtype(x, dtype):
    return lax.convert_element_type(array(x), dtype)


def next_after(x, upward):
    """The float next to x toward +inf (upward) or -inf, as lax.nextafter(x, +-inf)."""
    bits = lax.bitcast_convert_type(x, np.dtype(f"i{x.dtype.itemsize}"))
    one = bits.dtype.type(1)
    smallest = lax.bitcast_convert_type(np.asarray(1 if upward else -np.iinfo(bits.dtype).max, bits.dtype), x.dtype)
    step = tnp.where((x > 0) == upward, bits + one, bits - one)
    out = tnp.where(x == 0, smallest, lax.bitcast_convert_type(step, x.dtype))
    return tnp.where(tnp.isinf(x) & ((x > 0) == upward) | tnp.isnan(x), x, out)

# ------------------------------------------------------------------------------------------------ uniform


@jitted_when_large("shape", "dtype")
def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval): the mantissa bits of a float in [1, 2) are random, 1 is subtracted
    and the result scaled. Bit for bit JAX's."""
    data, _ = check_key("uniform", key)
    return draw_uniform(data, canonical_shape("uniform", shape), float_dtype("uniform", dtype), minval, maxval)


def draw_uniform(data, shape, dtype, minval=0.0, maxval=1.0):
    info = tnp.finfo(dtype)
    width, mantissa = 8 * dtype.itemsize, info.nmant
    drawn = 8 if mantissa < 8 else width          # bfloat16 draws 8 bits, as JAX
    uint = UINT[width]
    bits = random_bits(data, drawn, shape)
    bits = bits if drawn == width else lax.convert_element_type(bits, uint)
    one = np.asarray(1, dtype).view(uint)
    floats = lax.bitcast_convert_type(lax.bitwise_or(lax.shift_right_logical(bits, uint.type(drawn - mantissa)),
                                                     one), dtype) - 1
    if isinstance(minval, float) and minval == 0 and isinstance(maxval, float) and maxval == 1:
        return floats
    minval, maxval = as_dtype(minval, dtype), as_dtype(maxval, dtype)
    out = tnp.maximum(minval, xla_math.fma(floats, maxval - minval, minval))
    if tuple(out.shape) != shape:
        raise ValueError(f"uniform: minval and maxval of shapes {tuple(minval.shape)} and {tuple(maxval.shape)} do "
                         f"not broadcast to shape {shape}")
    return out

# ------------------------------------------------------------------------------------------------- normal

SQRT2 = math.sqrt(2)


@jitted_when_large("shape", "dtype")
def normal(key, shape=(), dtype=None):
    """Standard normal floats: sqrt(2) erf_inv(u) of u uniform in (-1, 1)."""
    data, _ = check_key("normal", key)
    return draw_normal(data, canonical_shape("normal", shape), float_dtype("normal", dtype))


def draw_normal(data, shape, dtype):
    low = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    return np.asarray(SQRT2, dtype) * xla_math.erf_inv(draw_uniform(data, shape, dtype, low, 1.0))



@jitted_when_large("shape", "dtype")
def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal floats in (lower, upper): erf_inv of a uniform between erf(lower) and erf(upper)
    (over sqrt(2)), clipped into the open interval."""
    data, _ = check_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    shape = sample_shape("truncated_normal", shape, lower, upper)
    sqrt2 = np.asarray(SQRT2, dtype)
    lower, upper = as_dtype(lower, dtype), as_dtype(upper, dtype)
    u = draw_uniform(data, shape, dtype, xla_math.erf(lower / sqrt2), xla_math.erf(upper / sqrt2))
    out = sqrt2 * xla_math.erf_inv(u)
    low, high = next_after(stop_gradient(lower), True), next_after(stop_gradient(upper), False)
    return tnp.minimum(tnp.maximum(out, low), high)


_ONE32 = np.float32(1)


@jitted_when_large("shape", "dtype")
def lognormal(key, sigma=_ONE32, shape=None, dtype=None):
    """exp(sigma * normal)."""
    data, dtype, shape = float_sampler("lognormal", key, dtype, shape, sigma)
    return tnp.exp(draw_normal(data, shape, dtype) * as_dtype(sigma, dtype))


@jitted_when_large("shape", "dtype", "method")
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """mean + factor @ normal, factor from the Cholesky factor of cov (or its svd / eigh: u sqrt(s))."""
    data, _ = check_key("multivariate_normal", key)
    mean, cov = tnp.asarray(mean), tnp.asarray(cov)
    common = tnp.promote_types(mean.dtype, cov.dtype)
    common = common if is_float(common) else float64
    mean, cov = mean.astype(common), cov.astype(common)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else float_dtype("multivariate_normal", dtype)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got cov.shape == "
                         f"{tuple(cov.shape)}.")
    if shape is None:
        shape = broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    else:
        shape = check_shape("normal", canonical_shape("multivariate_normal", shape), tuple(mean.shape[:-1]),
                            tuple(cov.shape[:-2]))
    if method == "svd":
        u, s, _ = tnp.linalg.svd(cov)
        factor = u * tnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = tnp.linalg.eigh(cov)
        factor = v * tnp.sqrt(w[..., None, :])
    else:
        factor = tnp.linalg.cholesky(cov)
    samples = draw_normal(data, shape + (n,), dtype)
    return mean + (factor @ samples[..., None])[..., 0]


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Haar-random matrices with orthonormal columns (or rows): Q of the QR factorisation of a normal matrix,
    its columns' signs fixed by R's diagonal."""
    data, _ = check_key("orthogonal", key)
    dtype = float_dtype("orthogonal", dtype)
    shape = canonical_shape("orthogonal", shape)
    n = int(n)
    m = n if m is None else int(m)
    q, r = tnp.linalg.qr(draw_normal(data, (*shape, max(n, m), min(n, m)), dtype))
    x = q * tnp.expand_dims(tnp.sign(tnp.diagonal(r, axis1=-2, axis2=-1)), -2)
    return tnp.swapaxes(x, -1, -2) if n < m else x

# ------------------------------------------------------------------------------- transforms of a uniform


def _simple(name, transform, **uniform_range):
    """A sampler key, shape, dtype -> transform(uniform draw, dtype) on uniform_range (functions of finfo)."""
    @jitted_when_large("shape", "dtype")
    def sampler(key, shape=(), dtype=None):
        data, _ = check_key(name, key)
        dtype = float_dtype(name, dtype)
        info = tnp.finfo(dtype)
        bounds = {k: f(info) for k, f in uniform_range.items()}
        return transform(draw_uniform(data, canonical_shape(name, shape), dtype, **bounds), dtype)
    sampler.__name__ = sampler.__qualname__ = name
    return sampler


exponential = _simple("exponential", lambda u, dtype: -xla_math.log1p(-u))
exponential.__doc__ = "Exponential floats (rate 1): -log(1 - u)."
laplace = _simple("laplace", lambda u, dtype: tnp.sign(u) * xla_math.log1p(-tnp.abs(u)),
                  minval=lambda info: -1.0 + info.epsneg, maxval=lambda info: 1.0)
laplace.__doc__ = "Laplace floats (scale 1): sign(u) log(1 - |u|) of u uniform in (-1, 1)."
logistic = _simple("logistic", lambda u, dtype: tnp.log(u) - xla_math.log1p(-u), minval=lambda info: info.tiny)
logistic.__doc__ = "Logistic floats: log(u) - log(1 - u)."
cauchy = _simple("cauchy", lambda u, dtype: tnp.tan(np.asarray(np.pi, dtype) * (u - 0.5)),
                 minval=lambda info: info.eps)
cauchy.__doc__ = "Cauchy floats: tan(pi (u - 1/2))."


@jitted_when_large("shape", "dtype", "mode")
def gumbel(key, shape=(), dtype=None, mode=None):
    """Gumbel floats, -log(-log(u)); mode 'high' draws two uniforms for u's low bits (JAX's mode)."""
    data, _ = check_key("gumbel", key)
    return draw_gumbel(data, canonical_shape("gumbel", shape), float_dtype("gumbel", dtype), mode)


def draw_gumbel(data, shape, dtype, mode=None):
    mode = "low" if mode is None else mode
    if mode not in ("low", "high"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode} (supported: 'low', 'high')")
    info = tnp.finfo(dtype)
    if mode == "low":
        return -tnp.log(-tnp.log(draw_uniform(data, shape, dtype, info.tiny, 1.0)))
    both = draw_uniform(data, (2, *shape), dtype)
    high, low = both[0], both[1]
    x = tnp.where(high >= 0.5, high, high + 2.0 ** -info.nmant * low + info.tiny)
    return -tnp.log(-xla_math.log1p(-x))


@jitted_when_large("shape", "dtype")
def pareto(key, b, shape=None, dtype=None):
    """Pareto floats of shape b: exp(exponential / b)."""
    data, dtype, shape = float_sampler("pareto", key, dtype, shape, b)
    return tnp.exp(exponential(data, shape, dtype) / as_dtype(b, dtype))


@jitted_when_large("shape", "dtype")
def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull floats: (-log(1 - u)) ** (1 / concentration) * scale."""
    data, _ = check_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    u = draw_uniform(data, canonical_shape("weibull_min", shape), dtype)
    return tnp.power(-xla_math.log1p(-u), 1.0 / tnp.asarray(concentration)) * scale


@jitted_when_large("shape", "dtype")
def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh floats: scale sqrt(-2 log u)."""
    data, dtype, shape = float_sampler("rayleigh", key, dtype, shape, scale)
    u = draw_uniform(data, shape, dtype)
    return tnp.broadcast_to(as_dtype(scale, dtype), shape) * tnp.sqrt(tnp.log(u) * -2)


@jitted_when_large("shape", "dtype")
def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular floats on [left, right] peaking at mode, by inverting the cdf."""
    data, dtype, shape = float_sampler("triangular", key, dtype, shape, left, mode, right)
    left, mode, right = (tnp.broadcast_to(as_dtype(p, dtype), shape) for p in (left, mode, right))
    u = draw_uniform(data, shape, dtype)
    below = left + tnp.sqrt(u * (right - left) * (mode - left))
    above = right - tnp.sqrt((1 - u) * (right - left) * (right - mode))
    return tnp.where(u < (mode - left) / (right - left), below, above)


@jitted_when_large("shape", "dtype")
def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) floats of mean `mean` and shape 1 (Michael, Schucany and Haas)."""
    data, dtype, shape = float_sampler("wald", key, dtype, shape, mean)
    k1, k2 = split(data)
    mean = tnp.broadcast_to(as_dtype(mean, dtype), shape)
    y = draw_normal(k1, shape, dtype) ** 2
    z = draw_uniform(k2, shape, dtype)
    mean_sq = mean ** 2
    x = mean + mean_sq * y / 2 - mean / 2 * tnp.sqrt(4 * mean * y + mean_sq * y ** 2)
    return tnp.where(z <= mean / (mean + x), x, mean_sq / x)


@jitted_when_large("shape", "dtype")
def maxwell(key, shape=(), dtype=None):
    """Maxwell floats: the length of a 3-d standard normal vector."""
    data, _ = check_key("maxwell", key)
    dtype = float_dtype("maxwell", dtype)
    samples = draw_normal(data, (*canonical_shape("maxwell", shape), 3), dtype)
    return tnp.sqrt(tnp.sum(samples * samples, axis=-1))
