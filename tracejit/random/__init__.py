"""tracejit.random: JAX's random numbers (jax.random), reproduced bit for bit.

Keys are values: `PRNGKey(seed)` is a uint32[2] array, `key(seed)` a typed key (KeyArray); `split` and `fold_in`
derive new keys and every sampler is a pure function of a key, a shape and a dtype, hashed with threefry2x32
(JAX's default implementation, jax_threefry_partitionable=True). The same key, shape and dtype give JAX's
values: exactly for split, fold_in, bits, randint, uniform, bernoulli, permutation and choice; to an ulp or two
for the distributions that go through log1p, erf_inv and the like (xla_math computes them as XLA does).

Float results default to float64 and integers to int64: JAX's defaults with jax_enable_x64 (JAX without x64
draws float32 and int32; pass dtype= for those values).

    key = random.PRNGKey(0)
    key, sub = random.split(key)
    w = random.normal(sub, (784, 512), dtype=np.float32)
"""
from .continuous import (
    cauchy,
    exponential,
    gumbel,
    laplace,
    logistic,
    lognormal,
    maxwell,
    multivariate_normal,
    normal,
    orthogonal,
    pareto,
    rayleigh,
    triangular,
    truncated_normal,
    uniform,
    wald,
    weibull_min,
)
from .counts import binomial, multinomial, poisson
from .discrete import (
    bernoulli,
    categorical,
    choice,
    double_sided_maxwell,
    geometric,
    permutation,
    rademacher,
    randint,
)
from .gamma import ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, t
from .keys import KeyArray, PRNGKey, bits, clone, fold_in, key, key_data, key_dtype, key_impl, split, wrap_key_data

__all__ = ["KeyArray", "PRNGKey", "ball", "bernoulli", "beta", "binomial", "bits", "categorical", "cauchy",
           "chisquare", "choice", "clone", "dirichlet", "double_sided_maxwell", "exponential", "f", "fold_in", "gamma",
           "generalized_normal", "geometric", "gumbel", "key", "key_data", "key_dtype", "key_impl", "laplace", "loggamma",
           "logistic", "lognormal", "maxwell", "multinomial", "multivariate_normal", "normal", "orthogonal", "pareto",
           "permutation", "poisson", "rademacher", "randint", "rayleigh", "split", "t", "triangular",
           "truncated_normal", "uniform", "wald", "weibull_min", "wrap_key_data"]
