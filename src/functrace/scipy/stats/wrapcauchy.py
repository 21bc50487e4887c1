"""The wrapped Cauchy distribution with shape ``0 < c < 1`` on ``[0, 2 pi]``
(``scipy.stats.wrapcauchy``): density ``(1 - c^2) / (2 pi (1 + c^2 - 2 c cos z))``.
NaN for ``c`` outside ``(0, 1)``. ``loc`` and ``scale`` are SciPy's (JAX's signature
has only ``c``).

>>> import functrace.scipy.stats.wrapcauchy as wrapcauchy
>>> round(float(wrapcauchy.pdf(0.0, 0.5)), 12)  # 3 / (2 pi)
0.477464829276
"""

from __future__ import annotations

import math
from typing import Any

import functrace.numpy as fnp
from functrace.scipy._util import scalar_result
from functrace.scipy.stats._common import nan_unless, off_support, standard

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(1 - c^2) - log(2 pi) - log(1 + c^2 - 2 c cos z) - log scale`` on
    ``[0, 2 pi]``, ``-inf`` outside.

    >>> float(logpdf(7.0, 0.5))
    -inf
    """
    z, scale, c = standard("wrapcauchy.logpdf", x, loc, scale, c)
    ok = (c > 0) & (c < 1)
    cs = fnp.where(ok, c, 0.5)
    val = fnp.log1p(-cs * cs) - math.log(2 * math.pi) - fnp.log(1 + cs * cs - 2 * cs * fnp.cos(z))
    val = fnp.where((z >= 0) & (z <= 2 * math.pi), val - fnp.log(scale), off_support(z))
    return scalar_result(nan_unless(ok, val))


def pdf(x: Any, c: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> float(pdf(-1.0, 0.5))
    0.0
    """
    return scalar_result(fnp.exp(logpdf(x, c, loc, scale)))
