"""functrace.scipy.stats: log-densities, densities and CDFs of SciPy's distributions.

Each distribution is a module (``norm``, ``multivariate_normal``, ``t``, ``gamma``,
``beta``, ``poisson``, ``bernoulli``) of functions with SciPy's names and
parameter names (``loc``, ``scale``, ``df``, ``a``, ``b``, ``mu``, ``p``, ``mean``,
``cov``), as ``jax.scipy.stats``. Outside the support the log-density is ``-inf``.

>>> import functrace.scipy.stats as fst
>>> round(float(fst.norm.logpdf(0.0)), 6)
-0.918939
"""

from functrace.scipy.stats import (  # noqa: F401
    bernoulli,
    beta,
    gamma,
    multivariate_normal,
    norm,
    poisson,
    t,
)
