"""Statistics and small array utilities of functrace.numpy: ``count_nonzero``,
``average``, ``ptp``, ``nanmax``, ``nanmin``, ``median``, ``array_equal`` and
``unravel_index``.

On plain NumPy inputs each function calls NumPy directly. On tracers each is a
composite of existing lax/functrace.numpy operations (no primitive of its own), so
all of them differentiate, batch and jit through their parts.

Decisions:

* ``nanmax``/``nanmin`` replace NaNs by ``-inf``/``inf`` before ``reduce_max``/
  ``reduce_min`` (their gradient is 0) and put NaN back where a slice is all NaN (as
  NumPy, without its warning); with ``initial`` an all-NaN slice gives ``initial``.
* ``median`` is the middle element of a (stable) sort along the reduced axes, or
  ``(lo + hi) * 0.5`` of the two middle ones for even sizes (as ``jnp.median``); it is
  NaN where the slice holds a NaN, as in NumPy. Integers and bools give float64.
* ``average`` divides by the sum of the weights without checking it for zero (NumPy
  raises ``ZeroDivisionError``; a traced sum cannot be inspected).
* ``unravel_index`` on tracers follows ``jnp.unravel_index``: negative indices count
  from the end and out-of-bounds indices are clipped (NumPy raises, which a traced
  index cannot do).
* ``array_equal`` on tracers returns a traced 0-d bool (a Python ``False`` when the
  shapes differ, which is known while tracing).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace.lax import elementwise as lx
from functrace.lax import reductions as lr
from functrace.lax import shapes as ls
from functrace.numpy._core import (
    asarray_or_tracer,
    broadcast_to_shape,
    cast,
    keepdims_shape,
    no_out,
    normalize_axis,
    shape_tuple,
    slice_along,
)
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._math import (
    clip,
    equal,
    floor_divide,
    isnan,
    logical_and,
    logical_or,
    multiply,
    remainder,
    subtract,
)
from functrace.numpy._reductions import (
    _count,
    _extremum,
    _finish,
    _mean_dtype,
    _no_complex,
    _no_where,
    _prepare,
    _truth,
    _where_kw,
    mean,
)
from functrace.numpy._reductions import all as _all
from functrace.numpy._shape import reshape, transpose

_INT64 = np.dtype(np.int64)
_FLOAT64 = np.dtype(np.float64)

# ---------------------------------------------------------------------------
# count_nonzero, average, ptp
# ---------------------------------------------------------------------------


@numpy_path(
    lambda a, axis=None, *, keepdims=False: np.count_nonzero(a, axis=axis, keepdims=keepdims)
)
def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    """The number of non-zero elements along ``axis`` (int64; NaN counts as non-zero).

    >>> import functrace.numpy as fnp
    >>> fnp.count_nonzero([[0, 1, 2], [0, 0, 3]], axis=1)
    array([2, 1])
    """
    a, aval, axes = _prepare("count_nonzero", a, axis)
    r = lr.reduce_sum(cast(_truth(a), _INT64), axes)
    return _finish(r, aval.shape, axes, keepdims)


def _np_average(
    a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False
) -> Any:
    return np.average(a, axis, weights, returned, keepdims=keepdims)  # type: ignore[call-overload]


def _weights_like(w: Any, shape: tuple[int, ...], axis: Any) -> Any:
    """The weights broadcast to ``shape``: equal shapes, or 1-d (or one entry per axis of a
    tuple ``axis``, in that order) along ``axis``, as NumPy allows."""
    wshape = core.get_aval(w).shape
    if wshape == shape:
        return w
    if axis is None:
        raise TypeError(
            f"average: expected axis= when the shapes of a and weights differ, got shapes "
            f"{shape} and {wshape}. Pass the axis the weights run along."
        )
    given = axis if isinstance(axis, (tuple, list)) else (axis,)
    given = tuple(normalize_axis("average", ax, len(shape)) for ax in given)
    if wshape != tuple(shape[ax] for ax in given):
        raise ValueError(
            f"average: expected weights of shape {tuple(shape[ax] for ax in given)} "
            f"(the length of a along axis {axis}), got {wshape}."
        )
    w = transpose(w, tuple(int(i) for i in np.argsort(given)))
    w = reshape(w, tuple(d if i in given else 1 for i, d in enumerate(shape)))
    return broadcast_to_shape(w, shape)


@numpy_path(_np_average)
def average(
    a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False
) -> Any:
    """Weighted mean ``sum(a * weights) / sum(weights)`` over ``axis`` (the plain mean
    without weights); with ``returned`` also the sum of the weights, broadcast to the
    result's shape. Integers and bools average in float64, as in NumPy.

    >>> import functrace.numpy as fnp
    >>> fnp.average([1.0, 2.0, 4.0], weights=[1.0, 1.0, 2.0])
    np.float64(2.75)
    """
    a, aval, axes = _prepare("average", a, axis)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        scl = lx.full_like(avg, _count(aval.shape, axes))
        return (avg, scl) if returned else avg
    w = asarray_or_tracer(weights, "average")
    waval = core.get_aval(w)
    extra = [(_FLOAT64, False)] if aval.dtype.kind in "biu" else []
    dt, _ = dtypes.promote((aval.dtype, aval.weak_type), (waval.dtype, waval.weak_type), *extra)
    w = cast(_weights_like(w, aval.shape, axis), dt)
    scl = _finish(lr.reduce_sum(w, axes), aval.shape, axes, keepdims)
    total = _finish(lr.reduce_sum(multiply(cast(a, dt), w), axes), aval.shape, axes, keepdims)
    avg = lx.div(total, scl)
    return (avg, scl) if returned else avg


def _np_ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    return np.ptp(a, axis=axis, out=out, keepdims=keepdims)


@numpy_path(_np_ptp)
def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Range ``max - min`` over ``axis`` ("peak to peak").

    NOTE: at ties the gradient is shared equally among the tied elements (as ``max``).

    >>> import functrace.numpy as fnp
    >>> fnp.ptp([[1, 5], [3, 2]], axis=1)
    array([4, 1])
    """
    no_out("ptp", out)
    hi = _extremum("ptp", lr.reduce_max, lx.max, a, axis, keepdims, None)
    lo = _extremum("ptp", lr.reduce_min, lx.min, a, axis, keepdims, None)
    return subtract(hi, lo)


# ---------------------------------------------------------------------------
# nanmax, nanmin
# ---------------------------------------------------------------------------


def _make_nan_extremum(name: str, reduce: Any, combine: Any, fill: float, example: str) -> Any:
    np_fn = getattr(np, name)

    def call(
        a: Any,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
    ) -> Any:
        return np_fn(a, axis=axis, out=out, keepdims=keepdims, **_where_kw(where, initial))

    def nan_extremum(
        a: Any,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
    ) -> Any:
        no_out(name, out)
        _no_where(name, where)
        a, aval, axes = _prepare(name, a, axis)
        if aval.dtype.kind != "f":
            return _extremum(name, reduce, combine, a, axis, keepdims, initial)
        ok = lx.eq(a, a)
        filled = lx.select_n(ok, lx.full_like(a, fill), a)
        r = _extremum(name, reduce, combine, filled, axis, False, initial)
        if initial is None:  # NaN where every element is NaN
            r = lx.select_n(lr.reduce_max(ok, axes), lx.full_like(r, np.nan), r)
        return _finish(r, aval.shape, axes, keepdims)

    nan_extremum.__name__ = nan_extremum.__qualname__ = name
    nan_extremum.__doc__ = (
        f"{'Maximum' if name == 'nanmax' else 'Minimum'} over ``axis`` ignoring NaNs (NaN "
        f"where a slice is all NaN, as in NumPy).\n\n    NOTE: NaNs get a zero gradient; "
        f"at ties the gradient is shared equally among the tied elements.\n\n    >>> import "
        f"functrace.numpy as fnp\n    {example}\n    "
    )
    return numpy_path(call)(nan_extremum)


nanmax = _make_nan_extremum(
    "nanmax",
    lr.reduce_max,
    lx.max,
    -np.inf,
    ">>> fnp.nanmax([1.0, fnp.nan, 3.0])\n    np.float64(3.0)",
)
nanmin = _make_nan_extremum(
    "nanmin",
    lr.reduce_min,
    lx.min,
    np.inf,
    ">>> fnp.nanmin([[1.0, fnp.nan], [fnp.nan, 4.0]], axis=0)\n    array([1., 4.])",
)


# ---------------------------------------------------------------------------
# median
# ---------------------------------------------------------------------------


def _np_median(
    a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False
) -> Any:
    return np.median(a, axis=axis, out=out, overwrite_input=overwrite_input, keepdims=keepdims)


@numpy_path(_np_median)
def median(
    a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False
) -> Any:
    """Median over ``axis`` (an int, a tuple, or all axes if None): the middle value of a
    sort, or the mean of the two middle values for even sizes (as ``jnp.median``); NaN
    if the slice holds a NaN, and float64 for integers, as in NumPy.

    The gradient flows to the middle element(s) only (half to each for even sizes).

    >>> import functrace.numpy as fnp
    >>> fnp.median([[3.0, 1.0], [4.0, 2.0]], axis=0)
    array([3.5, 1.5])
    """
    no_out("median", out)
    a, aval, axes = _prepare("median", a, axis)
    _no_complex("median", aval)
    dt = _mean_dtype(aval.dtype)
    kept = tuple(i for i in range(aval.ndim) if i not in axes)
    out_shape = tuple(aval.shape[i] for i in kept)
    n = _count(aval.shape, axes)
    if n == 0:  # NaN, as NumPy's mean of an empty slice
        r = np.full(out_shape, np.nan, dt)
        r = r[()] if r.ndim == 0 else r
        return np.reshape(r, keepdims_shape(aval.shape, axes)) if keepdims else r
    x = cast(a, dt, aval.weak_type)
    if kept + axes != tuple(range(aval.ndim)):
        x = transpose(x, kept + axes)
    last = len(out_shape)
    s = ls.sort(ls.reshape(x, (*out_shape, n)), last)

    def at(i: int) -> Any:
        return ls.reshape(slice_along(s, i, i + 1, last), out_shape)

    r = at(n // 2)
    if n % 2 == 0:
        r = lx.mul(lx.add(at(n // 2 - 1), r), lx.full_like(r, 0.5))
    high = at(n - 1)  # NaNs sort last
    r = lx.select_n(lx.ne(high, high), r, lx.full_like(r, np.nan))
    return _finish(r, aval.shape, axes, keepdims)


# ---------------------------------------------------------------------------
# array_equal, unravel_index
# ---------------------------------------------------------------------------


@numpy_path(lambda a1, a2, equal_nan=False: np.array_equal(a1, a2, equal_nan=equal_nan))
def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Whether ``a1`` and ``a2`` have the same shape and elements (NaNs equal to each
    other if ``equal_nan``).

    >>> import functrace.numpy as fnp
    >>> fnp.array_equal([1, 2], [1.0, 2.0])
    True
    """
    x = asarray_or_tracer(a1, "array_equal")
    y = asarray_or_tracer(a2, "array_equal")
    if core.get_aval(x).shape != core.get_aval(y).shape:
        return False
    eq = equal(x, y)
    kinds = core.get_aval(x).dtype.kind + core.get_aval(y).dtype.kind
    if equal_nan and builtins.any(k in "fc" for k in kinds):
        eq = logical_or(eq, logical_and(isnan(x), isnan(y)))
    return _all(eq)


@numpy_path(lambda indices, shape, order="C": np.unravel_index(indices, shape, order))
def unravel_index(indices: Any, shape: Any, order: str = "C") -> Any:
    """The tuple of coordinate arrays (int64) of the flat ``indices`` in an array of
    ``shape`` (row-major for ``order='C'``, column-major for ``'F'``).

    On tracers, as ``jnp.unravel_index``: negative indices count from the end and
    out-of-bounds indices are clipped (NumPy raises).

    >>> import functrace.numpy as fnp
    >>> fnp.unravel_index([1, 5], (2, 3))
    (array([0, 1]), array([1, 2]))
    """
    if order not in ("C", "F"):
        raise ValueError(f"unravel_index: expected order 'C' or 'F', got {order!r}.")
    dims = shape_tuple("unravel_index", shape)
    idx = asarray_or_tracer(indices, "unravel_index")
    aval = core.get_aval(idx)
    if aval.dtype.kind not in "iu":
        raise TypeError(
            f"unravel_index: expected integer indices, got {aval.dtype.name}. Cast them "
            f"with .astype(int)."
        )
    total = int(np.prod(dims, dtype=np.int64))
    if total == 0:
        raise ValueError(f"unravel_index: expected a shape with elements, got {dims}.")
    idx = clip(cast(idx, _INT64), -total, total - 1)
    out = []
    stride = total
    for d in dims if order == "C" else dims[::-1]:
        inner = stride // d
        out.append(floor_divide(remainder(idx, stride), inner))
        stride = inner
    return tuple(out if order == "C" else out[::-1])


__all__ = [
    "array_equal",
    "average",
    "count_nonzero",
    "median",
    "nanmax",
    "nanmin",
    "ptp",
    "unravel_index",
]
