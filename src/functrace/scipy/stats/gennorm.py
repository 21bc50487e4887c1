"""The generalized normal distribution with shape ``beta`` (``scipy.stats.gennorm``):
density ``beta / (2 Gamma(1/beta)) exp(-|z|^beta) / scale``.

``beta = 2`` is a normal distribution (variance 1/2), ``beta = 1`` the Laplace
distribution. ``loc`` and ``scale`` are SciPy's (JAX's signature has only ``beta``).

>>> import functrace.scipy.stats.gennorm as gennorm
>>> float(gennorm.cdf(0.0, beta=1.5))
0.5
"""

from __future__ import annotations

from typing import Any

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import scalar_result
from functrace.scipy.stats._common import standard

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log(beta / 2) - gammaln(1 / beta) - |z|^beta - log scale``.

    >>> import math
    >>> round(float(logpdf(0.0, beta=2.0)), 12) == round(-0.5 * math.log(math.pi), 12)
    True
    """
    z, scale, beta = standard("gennorm.logpdf", x, loc, scale, beta)
    val = fnp.log(0.5 * beta) - special.gammaln(1 / beta) - fnp.power(fnp.abs(z), beta)
    return scalar_result(val - fnp.log(scale))


def pdf(x: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> float(pdf(0.0, beta=1.0))
    0.5
    """
    return scalar_result(fnp.exp(logpdf(x, beta, loc, scale)))


def cdf(x: Any, beta: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``(1 + sign(z) gammainc(1/beta, |z|^beta)) / 2``; differentiable once in ``beta``.

    >>> import math
    >>> round(float(cdf(1.0, beta=1.0)), 12) == round(1 - math.exp(-1) / 2, 12)
    True
    """
    z, _, beta = standard("gennorm.cdf", x, loc, scale, beta)
    az = fnp.abs(z)
    nz = az > 0
    # the tail beyond |z| from gammaincc: accurate far into either tail
    tail = 0.5 * special.gammaincc(1 / beta, fnp.power(fnp.where(nz, az, 1.0), beta))
    tail = fnp.where(nz, tail, 0.5)
    out = fnp.where(z < 0, tail, 1 - tail)
    return scalar_result(fnp.where(fnp.isnan(z), z, out))
