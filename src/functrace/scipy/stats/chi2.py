"""The chi-squared distribution with ``df`` degrees of freedom (``scipy.stats.chi2``):
the gamma distribution with shape ``df / 2`` and scale 2.

>>> import functrace.scipy.stats.chi2 as chi2
>>> round(float(chi2.cdf(2.0, df=2.0)), 12)  # 1 - exp(-1)
0.632120558829
"""

from __future__ import annotations

import math
from typing import Any

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import scalar_result
from functrace.scipy.stats._common import log_of_pair, off_support, standard

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``(df/2 - 1) log y - y/2 - gammaln(df/2) - (df/2) log 2 - log scale`` with
    ``y = (x - loc) / scale``; ``-inf`` for ``y < 0``.

    >>> round(float(logpdf(1.0, df=3.0)), 6)
    -1.418939
    """
    y, scale, df = standard("chi2.logpdf", x, loc, scale, df)
    inside = y >= 0
    ys = fnp.where(inside, y, 1.0)
    half = df * 0.5
    val = special.xlogy(half - 1, ys) - ys * 0.5 - special.gammaln(half)
    val = val - half * math.log(2) - fnp.log(scale)
    return scalar_result(fnp.where(inside, val, off_support(y)))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> round(float(pdf(0.0, df=2.0)), 12)
    0.5
    """
    return scalar_result(fnp.exp(logpdf(x, df, loc, scale)))


def _cdf_sf(fname: str, x: Any, df: Any, loc: Any, scale: Any, upper: bool) -> Any:
    y, _, df = standard(fname, x, loc, scale, df)
    inside = y > 0
    ys = fnp.where(inside, y, 1.0) * 0.5
    fn = special.gammaincc if upper else special.gammainc
    val = fn(df * 0.5, ys)
    edge = fnp.where(fnp.isnan(y), y, fnp.full_like(y, 1.0 if upper else 0.0))
    return fnp.where(inside, val, edge)


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x) = gammainc(df/2, y/2)``; differentiable once in ``df``.

    >>> float(cdf(-1.0, df=3.0))
    0.0
    """
    return scalar_result(_cdf_sf("chi2.cdf", x, df, loc, scale, False))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> float(logcdf(-1.0, df=3.0))
    -inf
    """
    c = _cdf_sf("chi2.logcdf", x, df, loc, scale, False)
    s = _cdf_sf("chi2.logcdf", x, df, loc, scale, True)
    return scalar_result(log_of_pair(c, s))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = gammaincc(df/2, y/2)``, accurate in the upper tail.

    >>> round(float(sf(2.0, df=2.0)), 12)  # exp(-1)
    0.367879441171
    """
    return scalar_result(_cdf_sf("chi2.sf", x, df, loc, scale, True))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> round(float(logsf(2.0, df=2.0)), 12)
    -1.0
    """
    c = _cdf_sf("chi2.logsf", x, df, loc, scale, False)
    s = _cdf_sf("chi2.logsf", x, df, loc, scale, True)
    return scalar_result(log_of_pair(s, c))
