"""The normal distribution ``N(loc, scale**2)`` (SciPy's ``scipy.stats.norm``).

>>> import functrace.scipy.stats.norm as norm
>>> float(norm.cdf(0.0, loc=0.0, scale=2.0))
0.5
"""

from __future__ import annotations

import math
from typing import Any

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _z(fname: str, x: Any, loc: Any, scale: Any) -> tuple[Any, Any]:
    x, loc, scale = floats(fname, x, loc, scale)
    return fnp.true_divide(fnp.subtract(x, loc), scale), scale


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of the density ``exp(-z**2 / 2) / (sqrt(2 pi) scale)``, ``z = (x - loc) / scale``.

    >>> round(float(logpdf(1.0)), 6)
    -1.418939
    """
    z, scale = _z("norm.logpdf", x, loc, scale)
    return scalar_result(-0.5 * fnp.square(z) - fnp.log(scale) - _HALF_LOG_2PI)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> round(float(pdf(0.0)), 6)
    0.398942
    """
    return scalar_result(fnp.exp(logpdf(x, loc, scale)))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``, accurate in both tails.

    >>> float(cdf(0.0))
    0.5
    """
    z, _ = _z("norm.cdf", x, loc, scale)
    return special.ndtr(z)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``, finite far into the lower tail.

    >>> round(float(logcdf(-40.0)), 6)
    -804.608442
    """
    z, _ = _z("norm.logcdf", x, loc, scale)
    return special.log_ndtr(z)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x) = cdf(-x)`` for the standardized ``x``.

    >>> float(sf(0.0))
    0.5
    """
    z, _ = _z("norm.sf", x, loc, scale)
    return special.ndtr(fnp.negative(z))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> round(float(logsf(40.0)), 6)
    -804.608442
    """
    z, _ = _z("norm.logsf", x, loc, scale)
    return special.log_ndtr(fnp.negative(z))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function, the inverse of :func:`cdf`: ``loc + scale * ndtri(q)``.

    >>> round(float(ppf(0.975)), 9)
    1.959963985
    """
    q, loc, scale = floats("norm.ppf", q, loc, scale)
    return scalar_result(fnp.add(loc, fnp.multiply(scale, special.ndtri(q))))


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse of :func:`sf`: ``loc - scale * ndtri(q)`` (accurate for small ``q``).

    >>> round(float(isf(0.025)), 9)
    1.959963985
    """
    q, loc, scale = floats("norm.isf", q, loc, scale)
    return scalar_result(fnp.subtract(loc, fnp.multiply(scale, special.ndtri(q))))
