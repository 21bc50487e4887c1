"""The multinomial distribution (``scipy.stats.multinomial``): ``n`` draws from ``K``
categories with probabilities ``p`` (the last axis): ``n! prod_i p_i^x_i / x_i!`` for
counts ``x`` (last axis ``K``) summing to ``n``.

``x``, ``n`` and ``p``'s leading axes broadcast; the result has the leading shape.
``-inf`` where the counts are not non-negative integers summing to ``n`` (JAX compares
the sum over every axis and requires integer dtypes; here floats with integer values
work too).

>>> import functrace.scipy.stats.multinomial as multinomial
>>> round(float(multinomial.pmf([1, 1], 2, [0.5, 0.5])), 12)
0.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import integer_at_least

__all__ = ["logpmf", "pmf"]


def logpmf(x: Any, n: Any, p: Any) -> Any:
    """``gammaln(n + 1) + sum_i (x_i log p_i - gammaln(x_i + 1))``.

    >>> round(float(logpmf([2, 0], 2, [0.5, 0.5])), 12) == round(float(np.log(0.25)), 12)
    True
    """
    fname = "multinomial.logpmf"
    (p,) = floats(fname, p)  # the result has p's dtype (counts are cast to it)
    x, n = floats(fname, x, n, broadcast=False)
    dt = core.get_aval(p).dtype
    x, n = x.astype(dt), n.astype(dt)
    sx, sp = core.get_aval(x).shape, core.get_aval(p).shape
    if not sx or not sp or sx[-1] != sp[-1]:
        raise ValueError(
            f"{fname}: expected counts x and probabilities p with the same last axis "
            f"(the K categories), got shapes {sx} and {sp}."
        )
    counts_ok = fnp.all(integer_at_least(x, 0), axis=-1)
    xs = fnp.where(integer_at_least(x, 0), x, 0.0)
    total = fnp.sum(xs, axis=-1)
    val = special.gammaln(n + 1) + fnp.sum(special.xlogy(xs, p) - special.gammaln(xs + 1), axis=-1)
    ok = counts_ok & (total == n)
    return scalar_result(fnp.where(ok, val, -np.inf))


def pmf(x: Any, n: Any, p: Any) -> Any:
    """The probability of the counts ``x``.

    >>> float(pmf([1, 0], 2, [0.5, 0.5]))
    0.0
    """
    return scalar_result(fnp.exp(logpmf(x, n, p)))
