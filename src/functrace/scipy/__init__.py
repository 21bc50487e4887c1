"""functrace.scipy: the parts of SciPy that JAX programs use, traceable.

``functrace.scipy.special``, ``functrace.scipy.stats`` (``norm``,
``multivariate_normal``, ``t``, ``gamma``, ``beta``, ``poisson``, ``bernoulli``) and
``functrace.scipy.linalg`` mirror ``jax.scipy``: SciPy's names, parameter names
and defaults, built from ``functrace.numpy`` and the ``functrace.lax`` primitives,
so every function differentiates, batches and jits. SciPy itself is not needed.

>>> import functrace.scipy.special as fsp
>>> float(fsp.logsumexp([1000.0, 1000.0]))
1000.6931471805599
"""

from functrace.scipy import integrate, linalg, ndimage, optimize, signal, special, stats  # noqa: F401
