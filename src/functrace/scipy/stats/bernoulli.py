"""The Bernoulli distribution with ``P(1) = p`` (``scipy.stats.bernoulli``), at ``k - loc``.

>>> import functrace.scipy.stats.bernoulli as bernoulli
>>> float(bernoulli.pmf(1, p=0.25)), float(bernoulli.pmf(0, p=0.25))
(0.25, 0.75)
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import off_support

__all__ = ["cdf", "logcdf", "logpmf", "pmf", "ppf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``log p`` at 1, ``log(1 - p)`` at 0, ``-inf`` elsewhere.

    >>> round(float(logpmf(0, p=0.5)), 6)
    -0.693147
    """
    k, p, loc = floats("bernoulli.logpmf", k, p, loc)
    k = fnp.subtract(k, loc)
    inside = fnp.logical_or(k == 0, k == 1)
    ks = fnp.where(inside, k, fnp.zeros_like(k))
    val = special.xlogy(ks, p) + special.xlog1py(1 - ks, fnp.negative(p))
    return scalar_result(fnp.where(inside, val, off_support(k)))


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """The probability of ``k``.

    >>> float(pmf(2, p=0.5))
    0.0
    """
    return scalar_result(fnp.exp(logpmf(k, p, loc)))


def cdf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``P(K <= k)``: 0 below 0, ``1 - p`` on ``[0, 1)``, 1 from 1 on.

    >>> float(cdf(0.5, p=0.25))
    0.75
    """
    k, p, loc = floats("bernoulli.cdf", k, p, loc)
    k = fnp.subtract(k, loc)
    one = fnp.ones_like(p)
    out = fnp.where(k < 0, fnp.zeros_like(p), fnp.where(k < 1, one - p, one))
    return scalar_result(out)


def logcdf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``log P(K <= k)``.

    >>> float(logcdf(1, p=0.25))
    0.0
    """
    k, p, loc = floats("bernoulli.logcdf", k, p, loc)
    k = fnp.subtract(k, loc)
    zero = fnp.zeros_like(p)
    mid = fnp.log1p(fnp.negative(fnp.where(k < 1, p, zero)))
    out = fnp.where(k < 0, fnp.full_like(p, -np.inf), fnp.where(k < 1, mid, zero))
    return scalar_result(out)


def ppf(q: Any, p: Any) -> Any:
    """The quantile function: 0 for ``q <= 1 - p``, 1 above (NaN for ``q`` or ``p``
    outside ``[0, 1]``).

    >>> float(ppf(0.5, p=0.25)), float(ppf(0.9, p=0.25))
    (0.0, 1.0)
    """
    q, p = floats("bernoulli.ppf", q, p)
    bad = fnp.isnan(q) | fnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    out = fnp.where(q <= 1 - p, fnp.zeros_like(q), fnp.ones_like(q))
    return scalar_result(fnp.where(bad, fnp.full_like(q, np.nan), out))
