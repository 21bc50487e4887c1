"""The binomial distribution with ``n`` trials of success probability ``p``
(``scipy.stats.binom``): ``C(n, k) p^k (1-p)^(n-k)`` at ``k = 0 .. n`` (shifted by
``loc``).

Off the integers ``0 .. n`` the log-probability is ``-inf`` (as SciPy; JAX
interpolates with ``gammaln`` there); NaN unless ``n`` is a non-negative integer and
``0 <= p <= 1``.

>>> import functrace.scipy.stats.binom as binom
>>> round(float(binom.pmf(1, 2, 0.5)), 12)
0.5
"""

from __future__ import annotations

from typing import Any

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import integer_at_least, nan_unless, off_support

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``gammaln(n+1) - gammaln(k+1) - gammaln(n-k+1) + k log p + (n-k) log1p(-p)``.

    >>> import numpy as np
    >>> round(float(logpmf(0, 3, 0.5)), 12) == round(3 * float(np.log(0.5)), 12)
    True
    """
    k, n, p, loc = floats("binom.logpmf", k, n, p, loc)
    y = k - loc
    ok = integer_at_least(n, 0) & (p >= 0) & (p <= 1)
    inside = integer_at_least(y, 0) & (y <= n)
    ys = fnp.where(inside, y, 0.0)
    ns = fnp.where(ok, n, 0.0)
    ps = fnp.where(ok, p, 0.5)
    comb = special.gammaln(ns + 1) - special.gammaln(ys + 1) - special.gammaln(ns - ys + 1)
    val = comb + special.xlogy(ys, ps) + special.xlog1py(ns - ys, -ps)
    return scalar_result(nan_unless(ok, fnp.where(inside, val, off_support(y))))


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """The probability of ``k``.

    >>> float(pmf(3, 2, 0.5))
    0.0
    """
    return scalar_result(fnp.exp(logpmf(k, n, p, loc)))
