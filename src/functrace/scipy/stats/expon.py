"""The exponential distribution (``scipy.stats.expon``): density
``exp(-y) / scale`` for ``y = (x - loc) / scale >= 0``.

>>> import functrace.scipy.stats.expon as expon
>>> round(float(expon.sf(1.0)), 12)  # exp(-1)
0.367879441171
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import log1mexp, standard

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-y - log scale`` for ``y >= 0``, ``-inf`` below.

    >>> float(logpdf(2.0))
    -2.0
    """
    y, scale = standard("expon.logpdf", x, loc, scale)
    return scalar_result(fnp.where(y < 0, -np.inf, -y - fnp.log(scale)))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> float(pdf(0.0, scale=2.0))
    0.5
    """
    return scalar_result(fnp.exp(logpdf(x, loc, scale)))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x) = -expm1(-y)`` (0 below the support).

    >>> float(cdf(-1.0))
    0.0
    """
    y, _ = standard("expon.cdf", x, loc, scale)
    return scalar_result(fnp.where(y < 0, fnp.zeros_like(y), -fnp.expm1(-y)))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x) = -y`` (0 below the support).

    >>> float(logsf(3.0))
    -3.0
    """
    y, _ = standard("expon.logsf", x, loc, scale)
    return scalar_result(fnp.where(y < 0, fnp.zeros_like(y), -y))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = exp(-y)``.

    >>> float(sf(0.0))
    1.0
    """
    return scalar_result(fnp.exp(logsf(x, loc, scale)))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x) = log(1 - exp(-y))`` (``-inf`` below the support).

    >>> round(float(logcdf(1e-10)), 6)
    -23.025851
    """
    y, _ = standard("expon.logcdf", x, loc, scale)
    pos = y > 0
    ys = fnp.where(pos, y, 1.0)
    return scalar_result(fnp.where(pos, log1mexp(ys), fnp.where(y == y, -np.inf, y)))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function ``loc - scale log1p(-q)`` (NaN outside ``[0, 1]``).

    >>> round(float(ppf(0.5)), 12)
    0.69314718056
    """
    q, loc, scale = floats("expon.ppf", q, loc, scale)
    ok = (q >= 0) & (q <= 1)
    qs = fnp.where(ok, q, 0.0)
    return scalar_result(fnp.where(ok, loc - scale * fnp.log1p(-qs), np.nan))
