"""The Pareto distribution with shape ``b`` (``scipy.stats.pareto``): density
``b / y^(b+1) / scale`` for ``y = (x - loc) / scale >= 1``.

>>> import functrace.scipy.stats.pareto as pareto
>>> float(pareto.cdf(2.0, b=1.0))
0.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import standard

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log b - (b + 1) log y - log scale`` for ``y >= 1``, ``-inf`` below.

    >>> float(logpdf(1.0, b=2.0)) == float(np.log(2.0))
    True
    """
    y, scale, b = standard("pareto.logpdf", x, loc, scale, b)
    inside = y >= 1
    ys = fnp.where(inside, y, 1.0)
    val = fnp.log(b / scale) - (b + 1) * fnp.log(ys)
    return scalar_result(fnp.where(inside, val, fnp.where(y == y, -np.inf, y)))


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> float(pdf(0.5, b=2.0))
    0.0
    """
    return scalar_result(fnp.exp(logpdf(x, b, loc, scale)))


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x) = -b log y`` (0 below the support).

    >>> round(float(logsf(np.e, b=2.0)), 12)
    -2.0
    """
    y, scale, b = standard("pareto.logsf", x, loc, scale, b)
    inside = y >= 1
    ys = fnp.where(inside, y, 1.0)
    return scalar_result(fnp.where(inside, -b * fnp.log(ys), fnp.where(y == y, 0.0, y)))


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = y^-b``.

    >>> float(sf(2.0, b=1.0))
    0.5
    """
    return scalar_result(fnp.exp(logsf(x, b, loc, scale)))


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x) = log1p(-y^-b)`` (``-inf`` below the support).

    >>> round(float(logcdf(2.0, b=1.0)), 12) == round(float(np.log(0.5)), 12)
    True
    """
    y, scale, b = standard("pareto.logcdf", x, loc, scale, b)
    above = y > 1
    ys = fnp.where(above, y, 2.0)
    val = fnp.log(-fnp.expm1(-b * fnp.log(ys)))
    return scalar_result(fnp.where(above, val, fnp.where(y == y, -np.inf, y)))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x) = 1 - y^-b`` (0 below the support).

    >>> float(cdf(0.5, b=1.0))
    0.0
    """
    y, scale, b = standard("pareto.cdf", x, loc, scale, b)
    inside = y >= 1
    ys = fnp.where(inside, y, 1.0)
    return scalar_result(fnp.where(inside, -fnp.expm1(-b * fnp.log(ys)), fnp.where(y == y, 0.0, y)))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function ``loc + scale (1 - q)^(-1/b)`` (NaN outside ``[0, 1]``).

    >>> float(ppf(0.5, b=1.0))
    2.0
    """
    q, b, loc, scale = floats("pareto.ppf", q, b, loc, scale)
    ok = (q >= 0) & (q <= 1)
    qs = fnp.where(ok, q, 0.0)
    return scalar_result(fnp.where(ok, loc + scale * fnp.exp(-fnp.log1p(-qs) / b), np.nan))
