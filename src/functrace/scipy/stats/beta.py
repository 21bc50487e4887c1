"""The beta distribution (``scipy.stats.beta``): density
``y^(a-1) (1-y)^(b-1) / B(a, b) / scale`` with ``y = (x - loc) / scale`` in ``[0, 1]``.

>>> import functrace.scipy.stats.beta as beta
>>> float(beta.pdf(0.5, a=1.0, b=1.0))  # uniform
1.0
"""

from __future__ import annotations

from typing import Any

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import log_of_pair, off_support

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``(a-1) log y + (b-1) log(1-y) - betaln(a, b) - log scale``; ``-inf`` outside ``[0, 1]``.

    >>> round(float(logpdf(0.25, a=2.0, b=3.0)), 6)
    0.523248
    """
    x, a, b, loc, scale = floats("beta.logpdf", x, a, b, loc, scale)
    y = fnp.true_divide(fnp.subtract(x, loc), scale)
    inside = fnp.logical_and(y >= 0, y <= 1)
    ys = fnp.where(inside, y, fnp.full_like(y, 0.5))  # a safe value outside the support
    val = special.xlogy(a - 1, ys) + special.xlog1py(b - 1, fnp.negative(ys))
    val = val - special.betaln(a, b) - fnp.log(scale)
    return scalar_result(fnp.where(inside, val, off_support(y)))


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> float(pdf(1.5, a=2.0, b=2.0))
    0.0
    """
    return scalar_result(fnp.exp(logpdf(x, a, b, loc, scale)))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x) = betainc(a, b, y)`` (0 below the support, 1 above); not
    differentiable in ``a`` and ``b``.

    >>> round(float(cdf(0.5, a=2.0, b=2.0)), 12)
    0.5
    """
    x, a, b, loc, scale = floats("beta.cdf", x, a, b, loc, scale)
    y = fnp.true_divide(fnp.subtract(x, loc), scale)
    inside = fnp.logical_and(y > 0, y < 1)
    val = special.betainc(a, b, fnp.where(inside, y, fnp.full_like(y, 0.5)))
    outside = fnp.where(y >= 1, fnp.ones_like(y), fnp.where(fnp.isnan(y), y, fnp.zeros_like(y)))
    return scalar_result(fnp.where(inside, val, outside))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> float(logcdf(2.0, a=2.0, b=3.0))
    0.0
    """
    return scalar_result(log_of_pair(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale)))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = betainc(b, a, 1 - y)`` (1 below the support, 0 above), accurate
    near 1; not differentiable in ``a`` and ``b``.

    >>> round(float(sf(0.25, a=1.0, b=1.0)), 12)
    0.75
    """
    x, a, b, loc, scale = floats("beta.sf", x, a, b, loc, scale)
    y = fnp.true_divide(fnp.subtract(x, loc), scale)
    inside = fnp.logical_and(y > 0, y < 1)
    val = special.betainc(b, a, 1 - fnp.where(inside, y, fnp.full_like(y, 0.5)))
    outside = fnp.where(y <= 0, fnp.ones_like(y), fnp.where(fnp.isnan(y), y, fnp.zeros_like(y)))
    return scalar_result(fnp.where(inside, val, outside))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> float(logsf(-1.0, a=2.0, b=3.0))
    0.0
    """
    return scalar_result(log_of_pair(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale)))
