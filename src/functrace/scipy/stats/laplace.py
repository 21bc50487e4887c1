"""The Laplace distribution (``scipy.stats.laplace``): density
``exp(-|z|) / (2 scale)`` with ``z = (x - loc) / scale``.

>>> import functrace.scipy.stats.laplace as laplace
>>> float(laplace.cdf(0.0))
0.5
"""

from __future__ import annotations

from typing import Any

import functrace.numpy as fnp
from functrace.scipy._util import scalar_result
from functrace.scipy.stats._common import standard

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``-|z| - log(2 scale)``.

    NOTE: the kink at ``x == loc`` has derivative 0 there (``abs'(0) = 0``).

    >>> import math
    >>> round(float(logpdf(0.0)), 12) == round(-math.log(2), 12)
    True
    """
    z, scale = standard("laplace.logpdf", x, loc, scale)
    return scalar_result(-fnp.abs(z) - fnp.log(2 * scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> float(pdf(0.0))
    0.5
    """
    return scalar_result(fnp.exp(logpdf(x, loc, scale)))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``exp(z) / 2`` for ``z <= 0``, ``1 - exp(-z) / 2`` above.

    >>> import math
    >>> round(float(cdf(1.0)), 12) == round(1 - math.exp(-1) / 2, 12)
    True
    """
    z, _ = standard("laplace.cdf", x, loc, scale)
    neg = z <= 0
    zn = fnp.where(neg, z, 0.0)
    zp = fnp.where(neg, 0.0, z)
    return scalar_result(fnp.where(neg, 0.5 * fnp.exp(zn), 1 - 0.5 * fnp.exp(-zp)))
