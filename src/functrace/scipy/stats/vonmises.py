"""The von Mises distribution with concentration ``kappa`` (``scipy.stats.vonmises``):
density ``exp(kappa cos(z)) / (2 pi I0(kappa) scale)``, ``z = (x - loc) / scale``,
for every real ``x`` (periodic). NaN for ``kappa <= 0``. ``loc`` and ``scale`` are
SciPy's (JAX's signature has only ``kappa``).

>>> import functrace.scipy.stats.vonmises as vonmises
>>> round(float(vonmises.pdf(0.0, 1e-9)), 9)  # nearly uniform: 1 / (2 pi)
0.159154943
"""

from __future__ import annotations

import math
from typing import Any

import functrace.numpy as fnp
from functrace.scipy._special_bessel import i0e
from functrace.scipy._util import scalar_result
from functrace.scipy.stats._common import nan_unless, standard

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, kappa: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``kappa (cos z - 1) - log(2 pi i0e(kappa)) - log scale`` (no overflow for large
    ``kappa``).

    >>> round(float(logpdf(0.0, 1.0)), 6)
    -1.073791
    """
    z, scale, kappa = standard("vonmises.logpdf", x, loc, scale, kappa)
    ok = kappa > 0
    ks = fnp.where(ok, kappa, 1.0)
    val = ks * (fnp.cos(z) - 1) - fnp.log(2 * math.pi * i0e(ks)) - fnp.log(scale)
    return scalar_result(nan_unless(ok, val))


def pdf(x: Any, kappa: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> round(float(pdf(0.0, 1.0)), 6)
    0.34171
    """
    return scalar_result(fnp.exp(logpdf(x, kappa, loc, scale)))
