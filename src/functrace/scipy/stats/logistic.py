"""The logistic distribution (``scipy.stats.logistic``): CDF ``expit(z)`` with
``z = (x - loc) / scale``.

>>> import functrace.scipy.stats.logistic as logistic
>>> float(logistic.cdf(0.0))
0.5
"""

from __future__ import annotations

from typing import Any

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import standard

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-2 logaddexp(z/2, -z/2) - log scale`` (no overflow in either tail).

    >>> import math
    >>> round(float(logpdf(0.0)), 12) == round(math.log(0.25), 12)
    True
    """
    z, scale = standard("logistic.logpdf", x, loc, scale)
    half = z * 0.5
    return scalar_result(-2 * fnp.logaddexp(half, -half) - fnp.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> float(pdf(0.0))
    0.25
    """
    return scalar_result(fnp.exp(logpdf(x, loc, scale)))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x) = expit(z)``.

    >>> round(float(cdf(-800.0)), 300) > 0
    False
    """
    z, _ = standard("logistic.cdf", x, loc, scale)
    return special.expit(z)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = expit(-z)``.

    >>> float(sf(0.0))
    0.5
    """
    z, _ = standard("logistic.sf", x, loc, scale)
    return special.expit(-z)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function ``loc + scale logit(q)``.

    >>> import math
    >>> round(float(ppf(0.75)), 12) == round(math.log(3), 12)
    True
    """
    q, loc, scale = floats("logistic.ppf", q, loc, scale)
    return scalar_result(loc + scale * special.logit(q))


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse of :func:`sf`: ``loc - scale logit(q)``.

    >>> import math
    >>> round(float(isf(0.25)), 12) == round(math.log(3), 12)
    True
    """
    q, loc, scale = floats("logistic.isf", q, loc, scale)
    return scalar_result(loc - scale * special.logit(q))
