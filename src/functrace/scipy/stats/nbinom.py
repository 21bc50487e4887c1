"""The negative binomial distribution (``scipy.stats.nbinom``): the number of failures
before the ``n``-th success, ``C(k + n - 1, k) p^n (1 - p)^k`` at ``k = 0, 1, ...``
(shifted by ``loc``; ``n`` may be any positive real).

``-inf`` off the non-negative integers; NaN unless ``n > 0`` and ``0 < p <= 1``.

>>> import functrace.scipy.stats.nbinom as nbinom
>>> float(nbinom.pmf(0, 2, 0.5))
0.25
"""

from __future__ import annotations

from typing import Any

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import integer_at_least, nan_unless, off_support

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``gammaln(k + n) - gammaln(n) - gammaln(k + 1) + n log p + k log1p(-p)``.

    >>> import numpy as np
    >>> round(float(logpmf(1, 1, 0.5)), 12) == round(float(np.log(0.25)), 12)
    True
    """
    k, n, p, loc = floats("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    ok = (n > 0) & (p > 0) & (p <= 1)
    inside = integer_at_least(y, 0)
    ys = fnp.where(inside, y, 0.0)
    ns = fnp.where(ok, n, 1.0)
    ps = fnp.where(ok, p, 0.5)
    comb = special.gammaln(ys + ns) - special.gammaln(ns) - special.gammaln(ys + 1)
    val = comb + ns * fnp.log(ps) + special.xlog1py(ys, -ps)
    return scalar_result(nan_unless(ok, fnp.where(inside, val, off_support(y))))


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """The probability of ``k``.

    >>> float(pmf(0.5, 2, 0.5))
    0.0
    """
    return scalar_result(fnp.exp(logpmf(k, n, p, loc)))
