"""The beta-binomial distribution (``scipy.stats.betabinom``): ``n`` trials whose
success probability is drawn from ``Beta(a, b)``:
``C(n, k) B(k + a, n - k + b) / B(a, b)`` at ``k = 0 .. n`` (shifted by ``loc``).

``-inf`` off the integers ``0 .. n``; NaN unless ``n`` is a non-negative integer and
``a, b > 0``.

>>> import functrace.scipy.stats.betabinom as betabinom
>>> round(float(betabinom.pmf(1, 2, 1.0, 1.0)), 12)  # uniform on 0, 1, 2
0.333333333333
"""

from __future__ import annotations

from typing import Any

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import integer_at_least, nan_unless, off_support

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """``log C(n, k) + betaln(k + a, n - k + b) - betaln(a, b)``.

    >>> import numpy as np
    >>> round(float(logpmf(0, 1, 1.0, 1.0)), 12) == round(float(np.log(0.5)), 12)
    True
    """
    k, n, a, b, loc = floats("betabinom.logpmf", k, n, a, b, loc)
    y = k - loc
    ok = integer_at_least(n, 0) & (a > 0) & (b > 0)
    inside = integer_at_least(y, 0) & (y <= n)
    ys = fnp.where(inside, y, 0.0)
    ns = fnp.where(ok, n, 0.0)
    a_s, bs = fnp.where(ok, a, 1.0), fnp.where(ok, b, 1.0)
    comb = special.gammaln(ns + 1) - special.gammaln(ys + 1) - special.gammaln(ns - ys + 1)
    val = comb + special.betaln(ys + a_s, ns - ys + bs) - special.betaln(a_s, bs)
    return scalar_result(nan_unless(ok, fnp.where(inside, val, off_support(y))))


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """The probability of ``k``.

    >>> float(pmf(-1, 2, 1.0, 1.0))
    0.0
    """
    return scalar_result(fnp.exp(logpmf(k, n, a, b, loc)))
