"""Bessel functions of functrace.scipy.special (re-exported there): the modified
Bessel functions ``i0``, ``i1`` and their exponentially scaled forms, and
``bessel_jn`` (the first kind, integer orders 0..v).

``i0e``/``i1e`` are ``functrace.lax.bessel_i0e``/``bessel_i1e``, and ``i0``/``i1``
are ``exp(|x|)`` times them; all differentiate to any order.

>>> round(float(i0(1.0)), 12)
1.266065877752
"""

from __future__ import annotations

import math
import operator
from functools import partial
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace import lax as lx
from functrace.custom_derivatives import custom_jvp
from functrace.scipy._special_more import safe
from functrace.scipy._util import floats, scalar_result


def i0e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 0,
    ``exp(-|x|) I0(x)``.

    >>> round(float(i0e(0.0)), 12)
    1.0
    """
    (x,) = floats("i0e", x)
    return scalar_result(lx.bessel_i0e(x))


def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind of order 0, ``I0(x)``
    (``inf`` beyond ``|x| ~ 713``; NaN at ``+-inf``, as SciPy and JAX).

    >>> round(float(i0(2.0)), 12)
    2.279585302336
    """
    (x,) = floats("i0", x)
    return scalar_result(fnp.exp(fnp.abs(x)) * lx.bessel_i0e(x))


def i1e(x: Any) -> Any:
    """The exponentially scaled modified Bessel function of order 1,
    ``exp(-|x|) I1(x)`` (odd).

    >>> round(float(i1e(1.0)), 12)
    0.20791041535
    """
    (x,) = floats("i1e", x)
    return scalar_result(lx.bessel_i1e(x))


def i1(x: Any) -> Any:
    """The modified Bessel function of the first kind of order 1, ``I1(x)`` (odd; NaN
    at ``+-inf``, as SciPy and JAX).

    >>> round(float(i1(1.0)), 12)
    0.565159103992
    """
    (x,) = floats("i1", x)
    return scalar_result(fnp.exp(fnp.abs(x)) * lx.bessel_i1e(x))


def _static_int(fname: str, what: str, v: Any) -> int:
    if isinstance(v, core.Tracer):
        raise TypeError(
            f"{fname}: expected a concrete integer {what}, got a traced value. Pass it as "
            f"a Python int (a static argument under jit)."
        )
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{fname}: expected an integer {what}, got {v!r}.") from None


_RESCALE_AT = 2.0**600
"""Magnitude from which ``bessel_jn``'s recurrence is rescaled (by its inverse, a power
of two: exact)."""


def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """Bessel functions of the first kind ``J_0(z), ..., J_v(z)``: an array of shape
    ``(v + 1, *z.shape)``.

    Miller's backward recurrence ``J_{k-1} = 2k/z J_k - J_{k+1}``, started at order
    ``n_iter`` and normalized by ``J_0 + 2 (J_2 + J_4 + ...) = 1`` (as JAX). It is
    accurate while ``n_iter`` is well above ``|z|`` and ``v`` (the default 50 suits
    ``|z|`` up to about 20); unlike JAX, ``z == 0`` gives ``1, 0, 0, ...`` and small
    ``|z|`` does not overflow (the recurrence is rescaled; below ``1e-50``, where
    ``J_k(z) = (z/2)^k / k!`` to double precision, that term is used). Derivatives of any order
    follow ``J_k' = (J_{k-1} - J_{k+1}) / 2`` (``J_{-1} = -J_1``), from values of the
    recurrence one order higher, so they are as accurate as the values at every ``z``
    (``0`` included); differentiating the recurrence itself loses about
    ``(k/|z|)^order`` of the precision near 0.

    >>> [round(float(j), 12) for j in bessel_jn(1.0, v=1)]
    [0.765197686558, 0.440050585745]
    """
    v = _static_int("bessel_jn", "order v", v)
    n_iter = _static_int("bessel_jn", "n_iter", n_iter)
    if v < 0:
        raise ValueError(f"bessel_jn: expected an order v >= 0, got {v}.")
    if n_iter < v + 1:
        raise ValueError(f"bessel_jn: expected n_iter > v ({v}), got {n_iter}.")
    (z,) = floats("bessel_jn", z)
    dt = core.get_aval(z).dtype
    if dt != np.float64:  # the rescaling thresholds are float64's
        return bessel_jn(fnp.asarray(z, dtype=np.float64), v=v, n_iter=n_iter).astype(dt)
    return _jn(z, v, n_iter)


@partial(custom_jvp, nondiff_argnums=(1, 2))
def _jn(z: Any, v: int, n_iter: int) -> Any:
    """``J_0(z), ..., J_v(z)`` stacked, float64 ``z``, by Miller's recurrence."""
    tiny = fnp.abs(z) < 1e-50  # (z/2)^k / k! to double precision: the series' first term
    zs = safe(tiny, 1.0, z)
    f1 = fnp.zeros_like(zs)  # J_{k+1}
    f = fnp.full_like(zs, 1e-30)  # J_k, k = n_iter
    norm = 2 * f if n_iter % 2 == 0 else 0 * f  # J_0 + 2 J_2 + 2 J_4 + ...
    stored: list[Any] = []  # J_v, ..., J_0
    inv_z = 2 / zs
    for k in range(n_iter, 0, -1):
        f, f1 = k * inv_z * f - f1, f  # J_{k-1}
        if (k - 1) % 2 == 0:
            norm = norm + (2 * f if k - 1 > 0 else f)
        big = fnp.abs(f) > _RESCALE_AT  # rescale everything kept so far (exactly)
        scale = fnp.where(big, 1 / _RESCALE_AT, 1.0)
        f, f1, norm = f * scale, f1 * scale, norm * scale
        stored = [s * scale for s in stored]
        if k - 1 <= v:
            stored.append(f)
    vals = [s / norm for s in stored[::-1]]
    half = z / 2
    vals = [fnp.where(tiny, half**k / math.factorial(k), val) for k, val in enumerate(vals)]
    return fnp.stack(vals)


@_jn.defjvp
def _jn_jvp(v: int, n_iter: int, primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
    # J_k' = (J_{k-1} - J_{k+1}) / 2, with J_{-1} = -J_1: every derivative is a
    # combination of values, which the recurrence computes accurately at any z (its
    # own derivatives lose ~(k/z)^order to cancellation at small |z|, and overflowed).
    (z,), (t,) = primals, tangents
    j = _jn(z, v + 1, max(n_iter, v + 2))  # J_0 .. J_{v+1}
    before = fnp.concatenate([-j[1:2], j[:v]])  # J_{-1} .. J_{v-1}
    return j[: v + 1], (before - j[1:]) / 2 * t
