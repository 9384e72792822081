"""tracejit.scipy.stats: jax.scipy.stats's distributions (one module each, with JAX's functions and signatures),
written on tracejit.scipy.special and tracejit.numpy, so they trace, differentiate, batch and compile."""
from . import (
               bernoulli,
               beta,
               cauchy,
               dirichlet,
               expon,
               gamma,
               laplace,
               logistic,
               multivariate_normal,
               norm,
               poisson,
               t,
               uniform,
)

__all__ = ["bernoulli", "beta", "cauchy", "dirichlet", "expon", "gamma", "laplace", "logistic", "multivariate_normal",
           "norm", "poisson", "t", "uniform"]
