"""The Poisson distribution with mean ``mu`` (``scipy.stats.poisson``): probability
``mu^k exp(-mu) / k!`` at the integers ``k = x - loc >= 0`` (0 elsewhere).

>>> import functrace.scipy.stats.poisson as poisson
>>> round(float(poisson.pmf(2, mu=2.0)), 6)
0.270671
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result
from functrace.scipy.stats._common import off_support

__all__ = ["cdf", "entropy", "logcdf", "logpmf", "pmf"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``k log mu - mu - gammaln(k + 1)``; ``-inf`` off the non-negative integers.

    >>> round(float(logpmf(3, mu=1.5)), 6)
    -2.075364
    """
    k, mu, loc = floats("poisson.logpmf", k, mu, loc)
    k = fnp.subtract(k, loc)
    inside = fnp.logical_and(k >= 0, fnp.floor(k) == k)
    ks = fnp.where(inside, k, fnp.zeros_like(k))
    val = special.xlogy(ks, mu) - mu - special.gammaln(ks + 1)
    return scalar_result(fnp.where(inside, val, off_support(k)))


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """The probability of ``k``.

    >>> float(pmf(0.5, mu=1.0))
    0.0
    """
    return scalar_result(fnp.exp(logpmf(k, mu, loc)))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``P(K <= k) = gammaincc(floor(k) + 1, mu)`` (0 for ``k < 0``); differentiable in ``mu``.

    >>> round(float(cdf(0, mu=2.0)), 12)  # exp(-2)
    0.135335283237
    """
    k, mu, loc = floats("poisson.cdf", k, mu, loc)
    k = fnp.floor(fnp.subtract(k, loc))
    inside = k >= 0
    val = special.gammaincc(fnp.where(inside, k, fnp.zeros_like(k)) + 1, mu)
    return scalar_result(fnp.where(inside, val, fnp.where(fnp.isnan(k), k, fnp.zeros_like(k))))


def logcdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``log P(K <= k)``.

    >>> round(float(logcdf(1, mu=1.0)), 6)  # log(2 / e)
    -0.306853
    """
    c = cdf(k, mu, loc)
    with np.errstate(divide="ignore"):  # log(0) = -inf below the support, no warning
        return scalar_result(fnp.log(c))


# H(mu) - log(2 pi e mu) / 2 = sum_j c_j mu^-j for large mu (c_1..c_6; computed for
# functrace by fitting exact high-precision entropies, the first four are -1/12,
# -1/24, -19/360, -9/80)
_ENTROPY_SERIES = (-1 / 12, -1 / 24, -19 / 360, -9 / 80, -0.3424603174603, -1.36418)
_ENTROPY_TERMS = 400  # k = 0 .. 399: the direct sum for mu <= 150


def entropy(mu: Any, loc: Any = 0) -> Any:
    """The entropy ``-sum_k p_k log p_k`` of the distribution (``loc`` does not change
    it): the direct sum over ``k < 400`` for ``mu <= 150``, the asymptotic series in
    ``1 / mu`` above. 0 at ``mu == 0``, NaN for ``mu < 0``.

    >>> round(float(entropy(1.0)), 12)
    1.304842242256
    """
    mu, loc = floats("poisson.entropy", mu, loc)
    dt = core.get_aval(mu).dtype
    if dt != np.float64:  # the direct sum cancels: float64 inside
        out = entropy(fnp.asarray(mu, dtype=np.float64), fnp.asarray(loc, dtype=np.float64))
        return scalar_result(fnp.asarray(out).astype(dt))
    ok = mu > 0
    small = ok & (mu <= 150)
    ms = fnp.where(small, mu, 1.0)
    k = np.arange(_ENTROPY_TERMS, dtype=dt)
    lgk = special.gammaln(k + 1)
    m1 = fnp.expand_dims(ms, -1)
    p = fnp.exp(k * fnp.log(m1) - m1 - lgk)
    direct = ms - ms * fnp.log(ms) + fnp.sum(p * lgk, axis=-1)
    ml = fnp.where(small | ~ok, 200.0, mu)
    inv = 1 / ml
    series = fnp.zeros_like(ml)
    for c in _ENTROPY_SERIES[::-1]:
        series = (series + c) * inv
    large = 0.5 * fnp.log((2 * np.pi * np.e) * ml) + series
    out = fnp.where(small, direct, large)
    out = fnp.where(mu == 0, 0.0, fnp.where(ok | fnp.isnan(mu), out, np.nan))
    return scalar_result(out + 0 * loc)
