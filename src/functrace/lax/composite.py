"""Functions of ``jax.lax`` that functrace composes from its primitives (no rules of
their own: they differentiate, batch and compile through their parts):
``asin``, ``acos``, ``atan``, ``sinh``, ``cosh``, ``square``, ``exp2``,
``is_finite`` and ``full``. ``functrace.numpy``'s ufuncs of the same functions use
these definitions on tracers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.lax import elementwise as lx
from functrace.lax.shapes import broadcast_in_dim


def _k(x: Any, value: float) -> Any:
    return lx.full_like(x, value)


def _accurate(value: Any, smooth: Any) -> Any:
    """``value`` (accurate), differentiated as ``smooth`` (same function, other formula)."""
    return lx.add(smooth, lx.stop_gradient(lx.sub(value, smooth)))


def _sqrt_1mx2(x: Any) -> Any:
    # lx.sqrt(1 - x^2): the value from (1-x)(1+x) (exact near |x| = 1), the derivatives from
    # 1 - x*x, whose reverse pass gives +-inf at |x| = 1 rather than 0 * inf = NaN.
    one = _k(x, 1)
    return lx.sqrt(_accurate(lx.mul(lx.sub(one, x), lx.add(one, x)), lx.sub(one, lx.mul(x, x))))


def asin(x: Any) -> Any:
    """Inverse sine, as ``atan2(x, sqrt((1 - x)(1 + x)))``: d = dx / sqrt(1 - x^2)."""
    return lx.atan2(x, _sqrt_1mx2(x))


def acos(x: Any) -> Any:
    """Inverse cosine, as ``atan2(sqrt((1 - x)(1 + x)), x)``: d = -dx / sqrt(1 - x^2)."""
    return lx.atan2(_sqrt_1mx2(x), x)


def atan(x: Any) -> Any:
    """Inverse tangent, as ``atan2(x, 1)``: d = dx / (1 + x^2)."""
    return lx.atan2(x, _k(x, 1))


def _large(x: Any) -> Any:
    # near e^|x|'s overflow (e^-|x| is far below the result's ulp there)
    return lx.gt(
        lx.abs(x), _k(x, 700.0 if np.dtype(core.get_aval(x).dtype) == np.float64 else 85.0)
    )


def _half_exp_abs(x: Any) -> Any:
    # e^|x| / 2 as (e^(|x|/2) / 2) e^(|x|/2): no overflow, no rounding of |x| - log 2
    h = lx.exp(lx.mul(lx.abs(x), _k(x, 0.5)))
    return lx.mul(lx.mul(h, _k(x, 0.5)), h)


def sinh(x: Any) -> Any:
    """Hyperbolic sine: ``(e^x - e^-x) / 2`` through ``expm1`` (no cancellation near 0),
    ``sign(x) e^|x| / 2`` where ``e^|x|`` alone would overflow before the result does."""
    large = _large(x)
    xs = lx.select_n(large, x, _k(x, 0.0))  # (no inf in the other branch's derivative)
    small = lx.mul(lx.sub(lx.expm1(xs), lx.expm1(lx.neg(xs))), _k(x, 0.5))
    return lx.select_n(large, small, lx.mul(lx.sign(x), _half_exp_abs(x)))


def cosh(x: Any) -> Any:
    """Hyperbolic cosine: ``(e^x + e^-x) / 2``, ``e^|x| / 2`` near overflow."""
    large = _large(x)
    xs = lx.select_n(large, x, _k(x, 0.0))
    small = lx.mul(lx.add(lx.exp(xs), lx.exp(lx.neg(xs))), _k(x, 0.5))
    return lx.select_n(large, small, _half_exp_abs(x))


def square(x: Any) -> Any:
    """``x * x``."""
    return lx.mul(x, x)


def exp2(x: Any) -> Any:
    """``2 ** x`` (exact for integer ``x``): d = log(2) 2^x dx."""
    return lx.pow(_k(x, 2), x)


def is_finite(x: Any) -> Any:
    """Elementwise: neither infinite nor NaN (floating-point ``x``)."""
    if core.get_aval(x).dtype.kind not in "fc":
        raise TypeError(
            f"is_finite: expected a floating-point operand, got {core.get_aval(x).dtype.name}."
        )
    return lx.lt(lx.abs(x), _k(x, np.inf))


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` filled with the scalar ``fill_value`` (of ``dtype``, else the
    value's own)."""
    value = fill_value
    if core.get_aval(value).shape != ():
        raise TypeError(
            f"full: expected a scalar fill_value, got shape {core.get_aval(value).shape}."
        )
    if dtype is not None:
        value = lx.convert_element_type(value, np.dtype(dtype))
    elif not isinstance(value, core.Tracer):
        value = np.asarray(value)
    return broadcast_in_dim(value, tuple(int(d) for d in shape), ())


__all__ = ["acos", "asin", "atan", "cosh", "exp2", "full", "is_finite", "sinh", "square"]
