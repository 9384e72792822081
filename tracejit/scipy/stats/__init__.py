"""tracejit.scipy.stats: jax.scipy.stats's distributions (one module each, with JAX's functions and signatures),
written on tracejit.scipy.special and tracejit.numpy, so they trace, differentiate, batch and compile."""
from . import (
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from .kde import gaussian_kde
from .summaries import ModeResult, mode, rankdata, sem

__all__ = ["ModeResult", "gaussian_kde", "mode", "rankdata", "sem"]
__all__ += ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "gennorm",
           "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "multinomial", "multivariate_normal", "nbinom",
           "norm", "pareto", "poisson", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy"]
