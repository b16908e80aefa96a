"""``traxla.scipy.stats``: the distributions of ``jax.scipy.stats`` (logpdf/pdf/cdf/... as JAX
computes them) and the statistics helpers."""
from traxla.scipy.stats import norm  # noqa: F401
from traxla.scipy.stats import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon,  # noqa: F401
               gamma, gennorm, geom, gumbel_l, gumbel_r, laplace, logistic, multinomial, nbinom,
               pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy)
from traxla.scipy.stats._mode_rank_sem import mode, rankdata, sem  # noqa: F401,E402
from traxla.scipy.stats import multivariate_normal  # noqa: F401,E402
from traxla.scipy.stats._kde import gaussian_kde  # noqa: F401,E402
