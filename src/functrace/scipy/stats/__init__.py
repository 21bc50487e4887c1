"""functrace.scipy.stats: log-densities, densities and CDFs of SciPy's distributions.

Each distribution is a module of functions with SciPy's names and parameter names
(``loc``, ``scale``, ``df``, ``a``, ``b``, ``mu``, ``p``, ``n``, ``mean``, ``cov``, ...),
as ``jax.scipy.stats``: continuous ``beta``, ``cauchy``, ``chi2``, ``expon``,
``gamma``, ``gennorm``, ``gumbel_l``, ``gumbel_r``, ``laplace``, ``logistic``,
``multivariate_normal``, ``norm``, ``pareto``, ``t``, ``truncnorm``, ``uniform``,
``vonmises``, ``wrapcauchy``, ``dirichlet``; discrete ``bernoulli``, ``betabinom``,
``binom``, ``geom``, ``multinomial``, ``nbinom``, ``poisson``. Outside the support the
log-density is ``-inf``; discrete log-probabilities are ``-inf`` off the integers (as
SciPy). Also ``mode``, ``rankdata``, ``sem`` and ``gaussian_kde``.

>>> import functrace.scipy.stats as fst
>>> round(float(fst.norm.logpdf(0.0)), 6)
-0.918939
"""

from functrace.scipy.stats import (  # noqa: F401
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
from functrace.scipy.stats._descriptive import ModeResult, mode, rankdata, sem  # noqa: F401
from functrace.scipy.stats._kde import gaussian_kde  # noqa: F401
