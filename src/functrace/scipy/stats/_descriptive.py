"""Descriptive statistics of functrace.scipy.stats: ``mode``, ``rankdata``, ``sem``
(as ``jax.scipy.stats``; re-exported by the package).

``mode`` and ``rankdata`` compare every pair of elements along the axis (``O(n^2)``
work, batched and jittable with static shapes), so they suit the moderate sizes of
a statistic inside a model rather than millions of elements.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace.numpy._core import asarray_or_tracer
from functrace.scipy._util import scalar_result

__all__ = ["ModeResult", "mode", "rankdata", "sem"]


class ModeResult(NamedTuple):
    """The result of :func:`mode`: the most frequent value and how often it occurs."""

    mode: Any
    count: Any


def _nan_policy(fname: str, nan_policy: str, allowed: tuple[str, ...]) -> None:
    if nan_policy not in allowed:
        raise ValueError(f"{fname}: expected nan_policy in {allowed}, got {nan_policy!r}.")


def _axis_last(fname: str, a: Any, axis: Any) -> tuple[Any, int | None]:
    """``a`` with ``axis`` moved last (flattened for ``axis=None``) and the axis."""
    nd = core.get_aval(a).ndim
    if axis is None:
        return fnp.reshape(a, (-1,)), None
    if isinstance(axis, core.Tracer) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{fname}: expected an integer axis or None, got {axis!r}.")
    if not -max(nd, 1) <= axis < max(nd, 1):
        raise ValueError(f"{fname}: axis {axis} is out of bounds for an array of {nd} dims.")
    if nd == 0:
        return fnp.reshape(a, (1,)), None
    return fnp.moveaxis(a, int(axis), -1), int(axis) % nd


def mode(a: Any, axis: Any = 0, nan_policy: str = "propagate", keepdims: bool = False) -> Any:
    """The most frequent value along ``axis`` and its count, as ``ModeResult(mode,
    count)``; among equally frequent values the smallest. ``axis=None`` flattens.

    NaNs never win (a NaN equals nothing). Only ``nan_policy="propagate"`` is
    supported (as JAX).

    >>> import numpy as np
    >>> mode(np.array([1, 2, 2, 3]))
    ModeResult(mode=np.int64(2), count=np.int64(2))
    """
    _nan_policy("mode", nan_policy, ("propagate",))
    a = asarray_or_tracer(a, "mode")
    x, ax = _axis_last("mode", a, axis)
    n = core.get_aval(x).shape[-1]
    if n == 0:
        raise ValueError("mode: expected a non-empty axis, got one of length 0.")
    xs = fnp.sort(x, axis=-1)
    counts = fnp.sum(fnp.expand_dims(xs, -1) == fnp.expand_dims(xs, -2), axis=-1)
    best = fnp.argmax(counts, axis=-1)  # the first (smallest) of the most frequent
    m = fnp.take_along_axis(xs, fnp.expand_dims(best, -1), axis=-1)[..., 0]
    c = fnp.max(counts, axis=-1).astype(np.int64)
    if keepdims:
        dims = list(core.get_aval(a).shape)
        for d in range(len(dims)):
            if ax is None or d == ax:
                dims[d] = 1
        shape = tuple(dims)
        m, c = fnp.reshape(m, shape), fnp.reshape(c, shape)
    return ModeResult(scalar_result(m), scalar_result(c))


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(
    a: Any, method: str = "average", *, axis: Any = None, nan_policy: str = "propagate"
) -> Any:
    """Ranks 1..n of the data (along ``axis``, or of the flattened array), ties
    resolved by ``method``: ``"average"``, ``"min"``, ``"max"``, ``"dense"`` (consecutive
    ranks of the distinct values) or ``"ordinal"`` (the order of appearance).

    A slice holding a NaN ranks to all NaN (``nan_policy="propagate"``, the only one
    supported, as JAX). The result is float64 for every method (as JAX; SciPy gives
    integers except for ``"average"``).

    >>> rankdata([10.0, 20.0, 10.0]).tolist()
    [1.5, 3.0, 1.5]
    >>> rankdata([10.0, 20.0, 10.0], method="dense").tolist()
    [1.0, 2.0, 1.0]
    """
    if method not in _RANK_METHODS:
        raise ValueError(f"rankdata: expected method in {_RANK_METHODS}, got {method!r}.")
    _nan_policy("rankdata", nan_policy, ("propagate",))
    a = asarray_or_tracer(a, "rankdata")
    x, ax = _axis_last("rankdata", a, axis)
    xi, xj = fnp.expand_dims(x, -1), fnp.expand_dims(x, -2)  # [..., i, j]
    less = fnp.sum((xj < xi).astype(np.float64), axis=-1)
    equal = (xj == xi).astype(np.float64)
    if method == "min":
        r = less + 1
    elif method == "max":
        r = less + fnp.sum(equal, axis=-1)
    elif method == "average":
        r = less + (fnp.sum(equal, axis=-1) + 1) * 0.5
    elif method == "dense":
        mult = fnp.sum(equal, axis=-1)  # each distinct value below x_i counts once
        safe = fnp.where(mult > 0, mult, 1.0)
        below = fnp.sum((xj < xi) / fnp.expand_dims(safe, -2), axis=-1)
        r = fnp.round(below) + 1
    else:  # ordinal: ties in order of appearance
        n = core.get_aval(x).shape[-1]
        earlier = np.tril(np.ones((n, n), bool), -1)  # j < i
        r = less + fnp.sum(equal * earlier, axis=-1) + 1
    if core.get_aval(a).dtype.kind in "fc":
        has_nan = fnp.any(fnp.isnan(x), axis=-1, keepdims=True)
        r = fnp.where(has_nan, np.nan, r)
    if ax is None:
        r = fnp.reshape(r, core.get_aval(a).shape) if axis is not None else r
        return r
    return fnp.moveaxis(r, -1, ax)


def sem(
    a: Any,
    axis: Any = 0,
    ddof: int = 1,
    nan_policy: str = "propagate",
    *,
    keepdims: bool = False,
) -> Any:
    """The standard error of the mean, ``std(a, ddof) / sqrt(n)``, along ``axis``
    (``None``: all elements). ``nan_policy="omit"`` ignores NaNs.

    >>> round(float(sem([1.0, 2.0, 3.0, 4.0])), 12)
    0.645497224368
    """
    _nan_policy("sem", nan_policy, ("propagate", "omit"))
    a = asarray_or_tracer(a, "sem")
    if core.get_aval(a).dtype.kind not in "f":
        a = a.astype(np.float64)
    if nan_policy == "omit":
        n = fnp.sum(~fnp.isnan(a), axis=axis, keepdims=keepdims)
        sd = fnp.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims)
        return scalar_result(sd / fnp.sqrt(n).astype(core.get_aval(sd).dtype))
    else:
        shape = core.get_aval(a).shape
        n = int(np.prod(shape)) if axis is None else shape[axis]
        sd = fnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims)
    return scalar_result(sd / math.sqrt(n))
