"""The beta distribution (``scipy.stats.beta``): density
``y^(a-1) (1-y)^(b-1) / B(a, b) / scale`` with ``y = (x - loc) / scale`` in ``[0, 1]``.

>>> import functrace.scipy.stats.beta as beta
>>> float(beta.pdf(0.5, a=1.0, b=1.0))  # uniform
1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result

__all__ = ["cdf", "logcdf", "logpdf", "pdf"]


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``(a-1) log y + (b-1) log(1-y) - betaln(a, b) - log scale``; ``-inf`` outside ``[0, 1]``.

    >>> round(float(logpdf(0.25, a=2.0, b=3.0)), 6)
    0.523248
    """
    x, a, b, loc, scale = floats("beta.logpdf", x, a, b, loc, scale)
    y = fnp.true_divide(fnp.subtract(x, loc), scale)
    inside = fnp.logical_and(y >= 0, y <= 1)
    y = fnp.where(inside, y, fnp.full_like(y, 0.5))  # a safe value outside the support
    val = special.xlogy(a - 1, y) + special.xlog1py(b - 1, fnp.negative(y))
    val = val - special.betaln(a, b) - fnp.log(scale)
    return scalar_result(fnp.where(inside, val, fnp.full_like(val, -np.inf)))


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
    c = cdf(x, a, b, loc, scale)
    with np.errstate(divide="ignore"):  # log(0) = -inf below the support, no warning
        return scalar_result(fnp.log(c))
