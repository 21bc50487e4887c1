"""The Cauchy distribution (``scipy.stats.cauchy``): density
``1 / (pi scale (1 + z^2))`` with ``z = (x - loc) / scale``.

>>> import functrace.scipy.stats.cauchy as cauchy
>>> float(cauchy.cdf(1.0))
0.75
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import log_or_minus_inf, standard

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-log(pi scale) - log1p(z^2)``.

    >>> round(float(logpdf(0.0)), 12) == round(-math.log(math.pi), 12)
    True
    """
    z, scale = standard("cauchy.logpdf", x, loc, scale)
    return scalar_result(-fnp.log(math.pi * scale) - fnp.log1p(z * z))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> round(float(pdf(0.0)), 12)
    0.318309886184
    """
    return scalar_result(fnp.exp(logpdf(x, loc, scale)))


def _cdf(z: Any) -> Any:
    # atan2(1, -z) / pi: accurate far into the lower tail (no 1/2 + small cancellation)
    return fnp.arctan2(fnp.ones_like(z), -z) / math.pi


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x) = 1/2 + atan(z) / pi``, accurate in the lower tail.

    >>> round(float(cdf(-1e10)), 20)
    3.183098862e-11
    """
    z, _ = standard("cauchy.cdf", x, loc, scale)
    return scalar_result(_cdf(z))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> round(float(logcdf(0.0)), 12) == round(math.log(0.5), 12)
    True
    """
    z, _ = standard("cauchy.logcdf", x, loc, scale)
    return scalar_result(log_or_minus_inf(_cdf(z)))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x)``, accurate in the upper tail.

    >>> float(sf(1.0))
    0.25
    """
    z, _ = standard("cauchy.sf", x, loc, scale)
    return scalar_result(_cdf(-z))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> round(float(logsf(0.0)), 12) == round(math.log(0.5), 12)
    True
    """
    z, _ = standard("cauchy.logsf", x, loc, scale)
    return scalar_result(log_or_minus_inf(_cdf(-z)))


def _quantile(fname: str, q: Any, loc: Any, scale: Any, sign: float) -> Any:
    q, loc, scale = floats(fname, q, loc, scale)
    # tan(pi (q - 1/2)) = -1 / tan(pi q): exact at the ends, accurate for small q
    ok = (q > 0) & (q < 1)
    qs = fnp.where(ok, q, 0.5)
    near0 = qs < 0.25
    near1 = qs > 0.75
    mid = fnp.tan(math.pi * (qs - 0.5))
    lo = -1 / fnp.tan(math.pi * fnp.where(near0, qs, 0.25))
    hi = 1 / fnp.tan(math.pi * fnp.where(near1, 1 - qs, 0.25))
    t = fnp.where(near0, lo, fnp.where(near1, hi, mid))
    t = fnp.where(
        ok, t, fnp.where(q == 0, -np.inf, fnp.where(q == 1, np.inf, fnp.full_like(q, np.nan)))
    )
    return scalar_result(loc + sign * scale * t)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function ``loc + scale tan(pi (q - 1/2))`` (``-inf`` at 0, ``inf``
    at 1, NaN outside ``[0, 1]``).

    >>> round(float(ppf(0.75)), 12)
    1.0
    """
    return _quantile("cauchy.ppf", q, loc, scale, 1.0)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse of :func:`sf`: ``ppf(1 - q)``, accurate for small ``q``.

    >>> round(float(isf(0.25)), 12)
    1.0
    """
    return _quantile("cauchy.isf", q, loc, scale, -1.0)
