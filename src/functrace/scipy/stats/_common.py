"""Helpers shared by the distributions of functrace.scipy.stats (internal)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace.scipy._util import floats

LOG_2PI = math.log(2 * math.pi)


def standard(fname: str, x: Any, loc: Any, scale: Any, *params: Any) -> tuple[Any, ...]:
    """``(z, scale, *params)`` with ``z = (x - loc) / scale``, all of one float dtype
    and one broadcast shape."""
    vals = floats(fname, x, loc, scale, *params)
    x, loc, scale = vals[:3]
    return ((x - loc) / scale, scale, *vals[3:])


def full(like: Any, value: float) -> Any:
    return fnp.full_like(like, value)


def nan_unless(ok: Any, val: Any) -> Any:
    """``val`` where ``ok``, NaN elsewhere."""
    return fnp.where(ok, val, full(val, np.nan))


def log1mexp(t: Any) -> Any:
    """``log(1 - exp(-t))`` for ``t >= 0``, accurate at both ends."""
    small = t < math.log(2)
    ts = fnp.where(small, t, 1.0)
    tl = fnp.where(small, 1.0, t)
    return fnp.where(small, fnp.log(-fnp.expm1(-ts)), fnp.log1p(-fnp.exp(-tl)))


def log_or_minus_inf(p: Any) -> Any:
    """``log p`` (``-inf`` at 0, without a warning)."""
    with np.errstate(divide="ignore"):
        return fnp.log(p)


def integer_at_least(k: Any, lo: Any) -> Any:
    """Whether ``k`` is an integer ``>= lo``."""
    return (k >= lo) & (fnp.floor(k) == k)


def off_support(y: Any) -> Any:
    """The log-density off the support: ``-inf``, NaN where ``y`` is NaN."""
    return fnp.where(fnp.isnan(y), y, fnp.full_like(y, -np.inf))


def log_of_pair(p: Any, q: Any) -> Any:
    """``log p`` for ``p = 1 - q`` given both: ``log1p(-q)`` where ``p`` is near 1."""
    big = p > 0.5
    with np.errstate(divide="ignore"):
        out = fnp.where(big, fnp.log1p(-fnp.where(big, q, 0.0)), fnp.log(fnp.where(big, 1.0, p)))
    return out + 0.0  # (log1p(-0.0) is -0.0)
