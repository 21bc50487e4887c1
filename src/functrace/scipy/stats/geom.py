"""The geometric distribution (``scipy.stats.geom``): the number of trials up to and
including the first success, ``(1 - p)^(k-1) p`` at ``k = 1, 2, ...`` (shifted by
``loc``).

``-inf`` off the integers ``>= 1``; NaN unless ``0 < p <= 1``.

>>> import functrace.scipy.stats.geom as geom
>>> float(geom.pmf(2, 0.5))
0.25
"""

from __future__ import annotations

from typing import Any

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import integer_at_least, nan_unless, off_support

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``(k - 1) log1p(-p) + log p``.

    >>> import numpy as np
    >>> round(float(logpmf(1, 0.25)), 12) == round(float(np.log(0.25)), 12)
    True
    """
    k, p, loc = floats("geom.logpmf", k, p, loc)
    y = k - loc
    ok = (p > 0) & (p <= 1)
    inside = integer_at_least(y, 1)
    ys = fnp.where(inside, y, 1.0)
    ps = fnp.where(ok, p, 0.5)
    val = special.xlog1py(ys - 1, -ps) + fnp.log(ps)
    return scalar_result(nan_unless(ok, fnp.where(inside, val, off_support(y))))


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """The probability of ``k``.

    >>> float(pmf(0, 0.5))
    0.0
    """
    return scalar_result(fnp.exp(logpmf(k, p, loc)))
