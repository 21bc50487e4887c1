"""The uniform distribution on ``[loc, loc + scale]`` (``scipy.stats.uniform``).

>>> import functrace.scipy.stats.uniform as uniform
>>> float(uniform.pdf(0.5, loc=0.0, scale=2.0))
0.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import off_support

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-log scale`` on ``[loc, loc + scale]``, ``-inf`` outside.

    >>> float(logpdf(2.0))
    -inf
    """
    x, loc, scale = floats("uniform.logpdf", x, loc, scale)
    outside = (x < loc) | (x > loc + scale)
    return scalar_result(fnp.where(outside | fnp.isnan(x), off_support(x), -fnp.log(scale)))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> float(pdf(0.5))
    1.0
    """
    return scalar_result(fnp.exp(logpdf(x, loc, scale)))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``(x - loc) / scale`` clipped to ``[0, 1]``.

    >>> float(cdf(0.25)), float(cdf(3.0))
    (0.25, 1.0)
    """
    x, loc, scale = floats("uniform.cdf", x, loc, scale)
    y = (x - loc) / scale
    out = fnp.where(y < 0, fnp.zeros_like(y), fnp.where(y > 1, fnp.ones_like(y), y))
    return scalar_result(out)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function ``loc + scale q`` (NaN outside ``[0, 1]``).

    >>> float(ppf(0.5, loc=1.0, scale=2.0))
    2.0
    """
    q, loc, scale = floats("uniform.ppf", q, loc, scale)
    ok = (q >= 0) & (q <= 1)
    return scalar_result(fnp.where(ok, loc + scale * q, np.nan))
