"""functrace.scipy.integrate: ``trapezoid``, traceable (as ``jax.scipy.integrate``).

>>> float(trapezoid([1.0, 2.0, 3.0]))
4.0
"""

from __future__ import annotations

from typing import Any

import functrace.numpy as fnp
from functrace import core
from functrace.scipy._util import floats, scalar_result

__all__ = ["trapezoid"]


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule: at the sample
    points ``x`` (1-D of ``y``'s length along ``axis``, or broadcasting with ``y``),
    else with spacing ``dx``.

    >>> float(trapezoid([1.0, 1.0], x=[0.0, 2.0]))
    2.0
    """
    if x is None:
        yv, d = floats("trapezoid", y, dx, broadcast=False)
        nd = core.get_aval(yv).ndim
        if nd == 0:
            raise ValueError("trapezoid: expected y of at least one dimension, got a scalar.")
        yv = fnp.moveaxis(yv, axis, -1)
        avg = (yv[..., 1:] + yv[..., :-1]) * 0.5
        return scalar_result(fnp.sum(avg, axis=-1) * d)
    yv, xv = floats("trapezoid", y, x, broadcast=False)
    ny, nx = core.get_aval(yv).ndim, core.get_aval(xv).ndim
    if ny == 0:
        raise ValueError("trapezoid: expected y of at least one dimension, got a scalar.")
    yv = fnp.moveaxis(yv, axis, -1)
    if nx == 1:
        n = core.get_aval(yv).shape[-1]
        if core.get_aval(xv).shape[0] != n:
            raise ValueError(
                f"trapezoid: expected x of length {n} (y's length along axis {axis}), got "
                f"{core.get_aval(xv).shape[0]}."
            )
    else:
        xv = fnp.moveaxis(xv, axis, -1)
    dxs = xv[..., 1:] - xv[..., :-1]
    return scalar_result(fnp.sum(dxs * (yv[..., 1:] + yv[..., :-1]) * 0.5, axis=-1))
