"""The Poisson distribution with mean ``mu`` (``scipy.stats.poisson``): probability
``mu^k exp(-mu) / k!`` at the integers ``k = x - loc >= 0`` (0 elsewhere).

>>> import functrace.scipy.stats.poisson as poisson
>>> round(float(poisson.pmf(2, mu=2.0)), 6)
0.270671
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result

__all__ = ["cdf", "logcdf", "logpmf", "pmf"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``k log mu - mu - gammaln(k + 1)``; ``-inf`` off the non-negative integers.

    >>> round(float(logpmf(3, mu=1.5)), 6)
    -2.075364
    """
    k, mu, loc = floats("poisson.logpmf", k, mu, loc)
    k = fnp.subtract(k, loc)
    inside = fnp.logical_and(k >= 0, fnp.floor(k) == k)
    k = fnp.where(inside, k, fnp.zeros_like(k))
    val = special.xlogy(k, mu) - mu - special.gammaln(k + 1)
    return scalar_result(fnp.where(inside, val, fnp.full_like(val, -np.inf)))


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """The probability of ``k``.

    >>> float(pmf(0.5, mu=1.0))
    0.0
    """
    return scalar_result(fnp.exp(logpmf(k, mu, loc)))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``P(K <= k) = gammaincc(floor(k) + 1, mu)`` (0 for ``k < 0``); differentiable in ``mu``.

    >>> round(float(cdf(0, mu=2.0)), 12)  # exp(-2)
    0.135335283237
    """
    k, mu, loc = floats("poisson.cdf", k, mu, loc)
    k = fnp.floor(fnp.subtract(k, loc))
    inside = k >= 0
    val = special.gammaincc(fnp.where(inside, k, fnp.zeros_like(k)) + 1, mu)
    return scalar_result(fnp.where(inside, val, fnp.where(fnp.isnan(k), k, fnp.zeros_like(k))))


def logcdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``log P(K <= k)``.

    >>> round(float(logcdf(1, mu=1.0)), 6)  # log(2 / e)
    -0.306853
    """
    c = cdf(k, mu, loc)
    with np.errstate(divide="ignore"):  # log(0) = -inf below the support, no warning
        return scalar_result(fnp.log(c))
