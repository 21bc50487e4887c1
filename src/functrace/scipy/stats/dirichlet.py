"""The Dirichlet distribution with concentrations ``alpha`` (``scipy.stats.dirichlet``):
density ``prod_i x_i^(alpha_i - 1) / B(alpha)`` on the simplex.

As in SciPy and JAX, ``alpha`` is 1-D of length ``K`` and the points ``x`` run along
the *first* axis: ``x`` has shape ``(K, ...)``, or ``(K - 1, ...)`` with the last
coordinate ``1 - sum`` implied. Points off the simplex (a coordinate ``<= 0`` or a sum
more than 1e-6 away from 1) have log-density ``-inf``.

>>> import functrace.scipy.stats.dirichlet as dirichlet
>>> round(float(dirichlet.pdf([0.3, 0.7], [1.0, 1.0])), 12)  # uniform on the simplex
1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, alpha: Any) -> Any:
    """``sum_i (alpha_i - 1) log x_i - (sum_i gammaln(alpha_i) - gammaln(sum_i alpha_i))``.

    >>> round(float(logpdf([0.5, 0.5], [2.0, 2.0])), 12) == round(float(np.log(1.5)), 12)
    True
    """
    fname = "dirichlet.logpdf"
    x, alpha = floats(fname, x, alpha, broadcast=False)
    sx, sa = core.get_aval(x).shape, core.get_aval(alpha).shape
    if len(sa) != 1:
        raise ValueError(f"{fname}: expected a 1-D alpha, got shape {sa}.")
    if not sx or sx[0] not in (sa[0], sa[0] - 1):
        raise ValueError(
            f"{fname}: expected x with K = {sa[0]} (or K - 1) entries along its first "
            f"axis, got shape {sx}."
        )
    if sx[0] != sa[0]:
        x = fnp.concatenate([x, 1 - fnp.sum(x, axis=0, keepdims=True)], axis=0)
    a = fnp.reshape(alpha, (sa[0],) + (1,) * (len(sx) - 1))
    pos = fnp.all(x > 0, axis=0)
    simplex = pos & (fnp.abs(fnp.sum(x, axis=0) - 1) < 1e-6)
    xs = fnp.where(x > 0, x, 1.0)
    norm = fnp.sum(special.gammaln(alpha)) - special.gammaln(fnp.sum(alpha))
    val = fnp.sum(special.xlogy(a - 1, xs), axis=0) - norm
    return scalar_result(fnp.where(simplex, val, -np.inf))


def pdf(x: Any, alpha: Any) -> Any:
    """The density at ``x``.

    >>> float(pdf([0.5, 0.6], [2.0, 2.0]))  # off the simplex
    0.0
    """
    return scalar_result(fnp.exp(logpdf(x, alpha)))
