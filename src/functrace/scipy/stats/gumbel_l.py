"""The left-skewed Gumbel distribution (``scipy.stats.gumbel_l``): the mirror image of
``gumbel_r``, CDF ``1 - exp(-exp(z))`` with ``z = (x - loc) / scale``. NaN for
``scale <= 0``.

>>> import functrace.scipy.stats.gumbel_l as gumbel_l
>>> round(float(gumbel_l.sf(0.0)), 12)  # exp(-1)
0.367879441171
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import log1mexp, nan_unless, standard

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``z - exp(z) - log scale``.

    >>> float(logpdf(0.0))
    -1.0
    """
    z, scale = standard("gumbel_l.logpdf", x, loc, scale)
    return scalar_result(nan_unless(scale > 0, z - fnp.exp(z) - fnp.log(scale)))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> round(float(pdf(0.0)), 12)
    0.367879441171
    """
    return scalar_result(fnp.exp(logpdf(x, loc, scale)))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x) = log(1 - exp(-exp(z)))``.

    >>> round(float(logcdf(-40.0)), 9)
    -40.0
    """
    z, scale = standard("gumbel_l.logcdf", x, loc, scale)
    return scalar_result(nan_unless(scale > 0, log1mexp(fnp.exp(z))))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x) = -expm1(-exp(z))``, accurate in the lower tail.

    >>> float(cdf(-np.inf))
    0.0
    """
    z, scale = standard("gumbel_l.cdf", x, loc, scale)
    return scalar_result(nan_unless(scale > 0, -fnp.expm1(-fnp.exp(z))))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x) = -exp(z)``.

    >>> float(logsf(0.0))
    -1.0
    """
    z, scale = standard("gumbel_l.logsf", x, loc, scale)
    return scalar_result(nan_unless(scale > 0, -fnp.exp(z)))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = exp(-exp(z))``.

    >>> float(sf(np.inf))
    0.0
    """
    return scalar_result(fnp.exp(logsf(x, loc, scale)))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function ``loc + scale log(-log1p(-p))`` (NaN outside ``(0, 1)``,
    as JAX).

    >>> round(float(ppf(1 - np.exp(-1.0))), 12)
    0.0
    """
    p, loc, scale = floats("gumbel_l.ppf", p, loc, scale)
    ok = (p > 0) & (p < 1)
    ps = fnp.where(ok, p, 0.5)
    return scalar_result(fnp.where(ok, loc + scale * fnp.log(-fnp.log1p(-ps)), np.nan))
