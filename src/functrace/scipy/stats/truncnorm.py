"""The normal distribution truncated to ``[a, b]`` (in standard units: the support is
``[loc + a scale, loc + b scale]``; ``scipy.stats.truncnorm``).

The normalizing mass ``Phi(b) - Phi(a)`` is computed in log space from ``log_ndtr``
on the side of 0 where it does not cancel, so far tails (``a = 30``) stay finite.
NaN where ``a >= b``.

>>> import functrace.scipy.stats.truncnorm as truncnorm
>>> round(float(truncnorm.cdf(0.0, -1.0, 1.0)), 12)
0.5
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import scalar_result
from functrace.scipy.stats._common import standard

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_diff(u: Any, v: Any) -> Any:
    """``log(exp(u) - exp(v))`` for ``u >= v``."""
    return u + fnp.log1p(-fnp.exp(v - u))


def _log_mass(a: Any, b: Any) -> Any:
    """``log(Phi(b) - Phi(a))`` for ``a < b``, without cancellation."""
    left = b <= 0
    right = a > 0
    lo = fnp.where(right, -b, a)  # both tails as a lower tail
    hi = fnp.where(right, -a, b)
    tail = _log_diff(special.log_ndtr(hi), special.log_ndtr(lo))
    central = fnp.log1p(-special.ndtr(a) - special.ndtr(-b))
    return fnp.where(left | right, tail, central)


def _inside_point(a: Any, b: Any) -> Any:
    """A point strictly inside ``(a, b)``, also for infinite ends."""
    fa, fb = fnp.isfinite(a), fnp.isfinite(b)
    mid = (fnp.where(fa, a, 0.0) + fnp.where(fb, b, 0.0)) * 0.5
    return fnp.where(fa & fb, mid, fnp.where(fa, a + 1, fnp.where(fb, b - 1, 0.0)))


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``norm.logpdf(x, loc, scale) - log(Phi(b) - Phi(a))`` on the support, ``-inf``
    outside.

    >>> round(float(logpdf(0.0, -np.inf, np.inf)), 6)
    -0.918939
    """
    z, scale, a, b = standard("truncnorm.logpdf", x, loc, scale, a, b)
    ok = a < b
    am, bm = fnp.where(ok, a, -1.0), fnp.where(ok, b, 1.0)
    val = -0.5 * z * z - 0.5 * math.log(2 * math.pi) - fnp.log(scale) - _log_mass(am, bm)
    val = fnp.where((z < a) | (z > b), -np.inf, val)
    return scalar_result(fnp.where(ok, val, np.nan))


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> round(float(pdf(0.5, 0.0, 1.0)), 6)
    1.031407
    """
    return scalar_result(fnp.exp(logpdf(x, a, b, loc, scale)))


def _logcdf(z: Any, a: Any, b: Any) -> Any:
    ok = a < b
    am, bm = fnp.where(ok, a, -1.0), fnp.where(ok, b, 1.0)
    inside = (z > am) & (z < bm)
    zs = fnp.where(inside, z, _inside_point(am, bm))
    total = _log_mass(am, bm)
    low = _log_mass(am, zs) - total
    high = _log_mass(zs, bm) - total
    # near 1 the complement (the mass above z) is the accurate one
    val = fnp.where(low > -0.1, fnp.log1p(-fnp.exp(high)), low)
    val = fnp.where(z >= bm, 0.0, fnp.where(z <= am, -np.inf, val))
    val = fnp.where(fnp.isnan(z), z, val)
    return fnp.where(ok, val, np.nan)


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> round(float(logcdf(0.0, -1.0, 1.0)), 12) == round(math.log(0.5), 12)
    True
    """
    z, _, a, b = standard("truncnorm.logcdf", x, loc, scale, a, b)
    return scalar_result(_logcdf(z, a, b))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``.

    >>> float(cdf(2.0, -1.0, 1.0))
    1.0
    """
    return scalar_result(fnp.exp(logcdf(x, a, b, loc, scale)))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``: the log-CDF of the mirrored distribution at ``-x``.

    >>> float(logsf(2.0, -1.0, 1.0))
    -inf
    """
    z, _, a, b = standard("truncnorm.logsf", x, loc, scale, a, b)
    return scalar_result(_logcdf(-z, -b, -a))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x)``.

    >>> float(sf(-2.0, -1.0, 1.0))
    1.0
    """
    return scalar_result(fnp.exp(logsf(x, a, b, loc, scale)))
