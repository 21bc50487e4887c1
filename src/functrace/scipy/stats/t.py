"""Student's t distribution with ``df`` degrees of freedom (``scipy.stats.t``).

>>> import functrace.scipy.stats.t as t
>>> round(float(t.pdf(0.0, df=1.0)), 6)  # Cauchy: 1 / pi
0.31831
"""

from __future__ import annotations

import math
from typing import Any

import functrace.numpy as fnp
from functrace.scipy import special
from functrace.scipy._util import floats, scalar_result

__all__ = ["cdf", "logcdf", "logpdf", "pdf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log`` of ``Gamma((df+1)/2) / (Gamma(df/2) sqrt(df pi) scale) (1 + z^2/df)^-((df+1)/2)``.

    >>> round(float(logpdf(1.0, df=3.0)), 6)
    -1.576253
    """
    x, df, loc, scale = floats("t.logpdf", x, df, loc, scale)
    z = fnp.true_divide(fnp.subtract(x, loc), scale)
    half = fnp.multiply(df, 0.5)
    norm = special.gammaln(half + 0.5) - special.gammaln(half)
    norm = norm - 0.5 * fnp.log(fnp.multiply(df, math.pi)) - fnp.log(scale)
    return scalar_result(norm - (half + 0.5) * fnp.log1p(fnp.square(z) / df))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density at ``x``.

    >>> round(float(pdf(0.0, df=1e6)), 5)  # close to the normal's 1/sqrt(2 pi)
    0.39894
    """
    return scalar_result(fnp.exp(logpdf(x, df, loc, scale)))


def _tail(fname: str, x: Any, df: Any, loc: Any, scale: Any) -> tuple[Any, Any, Any, Any]:
    """``z``, whether it is 0, the probability beyond ``|z|`` (on a safe ``z`` at 0) and
    the linear Taylor value of the CDF at 0."""
    x, df, loc, scale = floats(fname, x, df, loc, scale)
    z = fnp.true_divide(fnp.subtract(x, loc), scale)
    # The tail formula is in z^2, so its chain rule is inf * 0 at z = 0: there the value
    # is 1/2 + z pdf(0), which has the right first and second derivatives (pdf'(0) = 0).
    at_zero = z == 0
    zs = fnp.where(at_zero, fnp.ones_like(z), z)
    tail = 0.5 * special.betainc(0.5 * df, fnp.full_like(df, 0.5), df / (df + fnp.square(zs)))
    near = 0.5 + z * fnp.exp(logpdf(fnp.zeros_like(z), df))  # the standard density at 0
    return zs, at_zero, tail, near


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``, from ``betainc(df/2, 1/2, df/(df + z^2)) / 2``, the probability of the
    tail beyond ``|z|``; differentiable in ``x``, ``loc``, ``scale``, not in ``df``.

    >>> round(float(cdf(1.0, df=1.0)), 12)  # Cauchy: 3/4
    0.75
    """
    zs, at_zero, tail, near = _tail("t.cdf", x, df, loc, scale)
    return scalar_result(fnp.where(at_zero, near, fnp.where(zs > 0, 1.0 - tail, tail)))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``: the log of the lower tail itself below the center (finite far
    into it), ``log1p(-tail)`` above.

    >>> round(float(logcdf(-1e6, df=3.0)), 6)
    -41.348808
    """
    zs, at_zero, tail, near = _tail("t.logcdf", x, df, loc, scale)
    val = fnp.where(zs > 0, fnp.log1p(-tail), fnp.log(tail))
    return scalar_result(fnp.where(at_zero, fnp.log(fnp.where(at_zero, near, 0.5)), val))
