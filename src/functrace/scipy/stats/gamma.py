"""The gamma distribution with shape ``a`` (``scipy.stats.gamma``): density
``y^(a-1) exp(-y) / Gamma(a) / scale`` with ``y = (x - loc) / scale >= 0``.

>>> import functrace.scipy.stats.gamma as gamma
>>> float(gamma.pdf(1.0, a=1.0))  # the exponential distribution: exp(-1)
0.36787944117144233
"""

from __future__ import annotations

from typing import Any

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import log_of_pair, off_support

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``(a-1) log y - y - gammaln(a) - log scale``; ``-inf`` for ``y < 0``.

    >>> round(float(logpdf(2.0, a=3.0)), 6)
    -1.306853
    """
    x, a, loc, scale = floats("gamma.logpdf", x, a, loc, scale)
    y = fnp.true_divide(fnp.subtract(x, loc), scale)
    inside = y >= 0
    ys = fnp.where(inside, y, fnp.ones_like(y))  # a safe value outside the support
    val = special.xlogy(a - 1, ys) - ys - special.gammaln(a) - fnp.log(scale)
    return scalar_result(fnp.where(inside, val, off_support(y)))


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> float(pdf(-1.0, a=2.0))
    0.0
    """
    return scalar_result(fnp.exp(logpdf(x, a, loc, scale)))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x) = gammainc(a, y)`` (0 for ``y <= 0``); differentiable once in ``a``.

    >>> round(float(cdf(1.0, a=1.0)), 12)  # 1 - exp(-1)
    0.632120558829
    """
    x, a, loc, scale = floats("gamma.cdf", x, a, loc, scale)
    y = fnp.true_divide(fnp.subtract(x, loc), scale)
    inside = y > 0
    val = special.gammainc(a, fnp.where(inside, y, fnp.ones_like(y)))
    return scalar_result(fnp.where(inside, val, fnp.where(fnp.isnan(y), y, fnp.zeros_like(y))))


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> float(logcdf(-1.0, a=2.0))
    -inf
    """
    return scalar_result(log_of_pair(cdf(x, a, loc, scale), sf(x, a, loc, scale)))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = gammaincc(a, y)`` (1 for ``y <= 0``), accurate in the upper tail;
    differentiable once in ``a``.

    >>> round(float(sf(1.0, a=1.0)), 12)  # exp(-1)
    0.367879441171
    """
    x, a, loc, scale = floats("gamma.sf", x, a, loc, scale)
    y = fnp.true_divide(fnp.subtract(x, loc), scale)
    inside = y > 0
    val = special.gammaincc(a, fnp.where(inside, y, fnp.ones_like(y)))
    return scalar_result(fnp.where(inside, val, fnp.where(fnp.isnan(y), y, fnp.ones_like(y))))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> round(float(logsf(3.0, a=1.0)), 12)
    -3.0
    """
    return scalar_result(log_of_pair(sf(x, a, loc, scale), cdf(x, a, loc, scale)))
