"""The multivariate normal distribution ``N(mean, cov)`` (``scipy.stats.multivariate_normal``).

``x`` is ``(..., d)`` (the last axis is the event), ``mean`` ``(..., d)`` and ``cov``
``(..., d, d)`` (or a scalar: ``cov * I``; or a vector: a diagonal), with broadcasting
leading axes; the result has the leading shape. With a scalar ``mean`` and ``cov``
the distribution is univariate and ``x`` is elementwise.

``cov`` is read through its Cholesky factor, which reads the lower triangle (as SciPy
reads one triangle): the gradient with respect to ``cov`` is zero above the diagonal
and counts each entry below it twice. Along symmetric perturbations it agrees with the
symmetric gradient of HIPS autograd and JAX, which is ``(g + g.T) / 2``.

>>> import numpy as np
>>> import functrace.scipy.stats.multivariate_normal as mvn
>>> round(float(mvn.logpdf(np.zeros(2), np.zeros(2), np.eye(2))), 6)
-1.837877
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace.lax import linalg as ll
from functrace.numpy._core import broadcast_shapes
from functrace.scipy._util import _dtype, floats, scalar_result

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2 * math.pi)


def logpdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Any:
    """``log`` of the density ``exp(-(x-mean)^T cov^-1 (x-mean) / 2) / sqrt((2 pi)^d det cov)``.

    >>> import numpy as np
    >>> round(float(logpdf(np.array([1.0, 0.0]), np.zeros(2), 2 * np.eye(2))), 6)
    -2.781024
    """
    if allow_singular:
        raise NotImplementedError(
            "multivariate_normal.logpdf: allow_singular=True is not supported (cov must be "
            "positive definite)."
        )
    fname = "multivariate_normal.logpdf"
    if mean is None:
        mean = 0.0
    x, mean, cov = floats(fname, x, mean, cov, broadcast=False)
    sx, sm, sc = (core.get_aval(v).shape for v in (x, mean, cov))
    if not sm and not sc:  # univariate
        x, mean, cov = floats(fname, x, mean, cov)
        diff = fnp.subtract(x, mean)
        out = -0.5 * (_LOG_2PI + fnp.log(cov) + fnp.square(diff) / cov)
        return scalar_result(out)
    d = sm[-1] if sm else (sc[-1] if sc else sx[-1])
    if len(sc) == 0:
        cov = fnp.multiply(cov, np.eye(d, dtype=_dtype(cov)))
    elif len(sc) == 1:
        cov = fnp.multiply(fnp.expand_dims(cov, -1), np.eye(d, dtype=_dtype(cov)))
    sc = core.get_aval(cov).shape
    if sc[-2:] != (d, d) or not sx or sx[-1] != d or (sm and sm[-1] != d):
        raise ValueError(
            f"{fname}: expected x (..., d), mean (..., d) and cov (..., d, d) with one d, got "
            f"shapes {sx}, {sm} and {sc}."
        )
    diff = fnp.subtract(x, mean)
    lead = broadcast_shapes(fname, core.get_aval(diff).shape[:-1], sc[:-2])
    L = fnp.broadcast_to(fnp.linalg.cholesky(cov), (*lead, d, d))
    diff = fnp.broadcast_to(fnp.expand_dims(diff, -1), (*lead, d, 1))
    z = ll.triangular_solve(L, diff, lower=True)
    maha = fnp.sum(fnp.square(z), axis=(-2, -1))
    half_logdet = fnp.sum(fnp.log(fnp.diagonal(L, axis1=-2, axis2=-1)), axis=-1)
    return scalar_result(-0.5 * (d * _LOG_2PI + maha) - half_logdet)


def pdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Any:
    """The density at ``x``.

    >>> import numpy as np
    >>> round(float(pdf(np.zeros(2), np.zeros(2), np.eye(2))), 6)
    0.159155
    """
    return scalar_result(fnp.exp(logpdf(x, mean, cov, allow_singular)))
