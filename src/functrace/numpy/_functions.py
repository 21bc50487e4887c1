"""Assorted NumPy functions on arrays and tracers: ``diff``, ``gradient``, ``select``,
``meshgrid``, ``searchsorted`` and the ``r_``/``c_``
index-expression objects.

Plain NumPy inputs go straight to NumPy; traced inputs become compositions of
slices, concatenations, selects, pads and broadcasts, so gradients, batching and
jit come from the rules of those primitives.

Decisions:

* ``gradient`` on tracers: unit or scalar spacings (one for all axes or one per
  axis, possibly traced) and ``edge_order=1``; coordinate arrays and
  ``edge_order=2`` work on plain NumPy inputs only (``NotImplementedError`` otherwise).
* ``searchsorted`` compares every query with every element (O(len(a) * v.size)
  memory) and sorts NaN last, as NumPy does; it returns int64 indices and has no
  derivative.
* ``r_``/``c_`` with tracers accept numbers, arrays, slices and the directive
  strings ``"axis"``, ``"axis,ndmin"``, ``"axis,ndmin,trans1d"``; the matrix
  directives ``"r"``/``"c"`` work on plain inputs only.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace.core import Tracer
from functrace.lax import elementwise as lx
from functrace.lax import reductions as lr
from functrace.lax import shapes as ls
from functrace.numpy._core import (
    asarray_or_tracer,
    broadcast_shapes,
    broadcast_to_shape,
    cast,
    concrete_array,
    normalize_axis,
    slice_along,
)
from functrace.numpy._dispatch import contains_tracer, numpy_path
from functrace.numpy._indexing import take
from functrace.numpy._joining import concatenate
from functrace.numpy._math import add, multiply, subtract, true_divide
from functrace.numpy._shape import ravel, reshape

_PY_SCALARS = (bool, int, float, complex)


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


_dtype = core.dtype_of


# ---------------------------------------------------------------------------
# diff, gradient
# ---------------------------------------------------------------------------


def _edge(fname: str, value: Any, x: Any, ax: int) -> Any:
    v = np.asarray(value) if type(value) in _PY_SCALARS else asarray_or_tracer(value, fname)
    if not _shape(v):
        shape = list(_shape(x))
        shape[ax] = 1
        v = broadcast_to_shape(v, tuple(shape))
    return v


def _np_diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.diff(a, n, axis, **kw)


@numpy_path(_np_diff)
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """The ``n``-th discrete difference ``a[1:] - a[:-1]`` along ``axis``, after joining
    ``prepend`` and ``append`` (scalars are broadcast) to the ends.

    >>> import functrace.numpy as fnp
    >>> fnp.diff([1.0, 4.0, 9.0, 16.0], n=2)
    array([2., 2.])
    """
    n = int(n)
    if n < 0:
        raise ValueError(f"diff: expected a non-negative order n, got {n}.")
    x = asarray_or_tracer(a, "diff")
    nd = len(_shape(x))
    if nd == 0:
        raise ValueError("diff: expected an array with at least 1 dimension, got a 0-d array.")
    ax = normalize_axis("diff", axis, nd)
    if n == 0:
        return x
    if prepend is not None or append is not None:
        parts = [x]
        if prepend is not None:
            parts.insert(0, _edge("diff", prepend, x, ax))
        if append is not None:
            parts.append(_edge("diff", append, x, ax))
        x = concatenate(parts, ax)
    is_bool = _dtype(x) == np.bool_
    for _ in range(n):
        length = _shape(x)[ax]
        if length == 0:
            break
        hi, lo = slice_along(x, 1, length, ax), slice_along(x, 0, length - 1, ax)
        x = lx.ne(hi, lo) if is_bool else lx.sub(hi, lo)
    return x


@numpy_path(
    lambda f, *varargs, axis=None, edge_order=1: np.gradient(
        f, *varargs, axis=axis, edge_order=edge_order
    )
)
def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """Central differences in the interior and one-sided ones at the ends, along each
    axis (NumPy's ``gradient``): one array for one axis, a tuple for several.

    ``varargs`` are the sample spacings: none (1), one scalar for every axis, or one
    scalar or 1-d array of coordinates per axis (NumPy's second-order formula for
    uneven spacing); they may be traced. On tracers ``edge_order`` must be 1.

    >>> import functrace.numpy as fnp
    >>> fnp.gradient([1.0, 2.0, 4.0, 7.0])
    array([1. , 1.5, 2.5, 3. ])
    """
    x = asarray_or_tracer(f, "gradient")
    shape = _shape(x)
    axes = (
        tuple(range(len(shape)))
        if axis is None
        else tuple(
            normalize_axis("gradient", ax, len(shape))
            for ax in ((axis,) if isinstance(axis, (int, np.integer)) else axis)
        )
    )
    if len(set(axes)) != len(axes):
        raise ValueError(f"gradient: expected distinct axes, got {axis}.")
    if edge_order != 1:
        raise NotImplementedError(
            f"gradient: expected edge_order=1 on a traced array, got "
            f"{edge_order}. Second-order edges need plain NumPy inputs."
        )
    if len(varargs) == 0:
        spacings: list[Any] = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(
            f"gradient: expected 0, 1 or {len(axes)} spacings (one per axis), got {len(varargs)}."
        )
    dt = _dtype(x)
    if dt.kind not in "fc":
        dt = np.dtype(np.float64)
        x = cast(x, dt)
    outs = []
    for ax, h in zip(axes, spacings):
        h_shape = _shape(h) if isinstance(h, Tracer) else np.shape(h)
        if h_shape == ():
            outs.append(_gradient_axis(x, ax, h, dt))
        elif h_shape == (shape[ax],):
            outs.append(_gradient_coords(x, ax, h, dt))
        else:
            raise ValueError(
                f"gradient: expected a scalar spacing or {shape[ax]} coordinates for "
                f"axis {ax}, got shape {h_shape}."
            )
    return outs[0] if len(outs) == 1 else tuple(outs)


def _gradient_coords(x: Any, ax: int, coords: Any, dt: np.dtype) -> Any:
    """The gradient along ``ax`` at the 1-d ``coords`` (uneven spacing): NumPy's
    second-order weights of the two neighbours in the interior, one-sided ends."""
    n = _shape(x)[ax]
    if n < 2:
        raise ValueError(
            f"gradient: expected at least 2 elements along axis {ax}, got shape {_shape(x)}."
        )
    c = cast(coords, dt) if isinstance(coords, Tracer) else np.asarray(coords, dt)
    dx = subtract(c[1:], c[:-1])
    along = [1] * len(_shape(x))

    def weight(w: Any, m: int) -> Any:  # a 1-d weight laid along ax
        along[ax] = m
        return reshape(w, tuple(along))

    def part(lo: int, hi: int) -> Any:
        return slice_along(x, lo, hi, ax)

    first = true_divide(subtract(part(1, 2), part(0, 1)), weight(dx[:1], 1))
    last = true_divide(subtract(part(n - 1, n), part(n - 2, n - 1)), weight(dx[-1:], 1))
    if n == 2:
        return concatenate([first, last], ax)
    d1, d2 = dx[:-1], dx[1:]
    total = add(d1, d2)
    w_lo = weight(true_divide(-d2, multiply(d1, total)), n - 2)
    w_mid = weight(true_divide(subtract(d2, d1), multiply(d1, d2)), n - 2)
    w_hi = weight(true_divide(d1, multiply(d2, total)), n - 2)
    inner = add(
        add(multiply(w_lo, part(0, n - 2)), multiply(w_mid, part(1, n - 1))),
        multiply(w_hi, part(2, n)),
    )
    return concatenate([first, inner, last], ax)


def _gradient_axis(x: Any, ax: int, h: Any, dt: np.dtype) -> Any:
    n = _shape(x)[ax]
    if n < 2:
        raise ValueError(
            f"gradient: expected at least 2 elements along axis {ax}, got shape "
            f"{_shape(x)}. A numerical gradient needs edge_order + 1 points."
        )
    h = cast(h, dt) if isinstance(h, Tracer) else np.asarray(h, dt)[()]

    def step(lo: int, hi: int, width: int) -> Any:
        return lx.sub(slice_along(x, lo + width, hi + width, ax), slice_along(x, lo, hi, ax))

    first = true_divide(step(0, 1, 1), h)
    last = true_divide(step(n - 2, n - 1, 1), h)
    if n == 2:
        return concatenate([first, last], ax)
    two_h = lx.mul(h, lx.full_like(h, 2))
    inner = true_divide(step(0, n - 2, 2), two_h)
    return concatenate([first, inner, last], ax)


# ---------------------------------------------------------------------------
# select
# ---------------------------------------------------------------------------


@numpy_path(
    lambda condlist, choicelist, default=0: np.select(condlist, choicelist, default),
    promotes=True,
)
def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """``choicelist[i]`` where ``condlist[i]`` is the first true condition, else
    ``default`` (NumPy's ``select``; everything broadcasts together).

    >>> import functrace.numpy as fnp
    >>> x = fnp.arange(5)
    >>> fnp.select([x < 2, x > 3], [x, x ** 2], default=-1)
    Array([ 0,  1, -1, -1, 16])
    """
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"select: expected as many conditions as choices, got "
            f"{len(condlist)} and {len(choicelist)}."
        )
    if not condlist:
        raise ValueError("select: expected at least one condition, got an empty list.")
    conds = [asarray_or_tracer(c, "select") for c in condlist]
    for i, c in enumerate(conds):
        if _dtype(c) != np.bool_:
            raise TypeError(
                f"select: expected boolean conditions, got {_dtype(c).name} for "
                f"entry {i} of condlist. Compare first, e.g. x > 0."
            )
    choices = [asarray_or_tracer(c, "select") for c in (*choicelist, default)]
    avals = [core.get_aval(c) for c in choices]
    keys = [(a.dtype, a.weak_type) for a in avals]
    if dtypes.promotion.maybe_strict:  # config.numpy_dtype_promotion="strict"
        dtypes.check_promotion("select", keys)
    dt, weak = dtypes.promote(*keys)
    shape = broadcast_shapes("select", *[_shape(c) for c in conds + choices])
    out = broadcast_to_shape(cast(choices[-1], dt, weak), shape)
    for c, v in zip(reversed(conds), reversed(choices[:-1])):
        v = broadcast_to_shape(cast(v, dt, weak), shape)
        out = lx.select_n(broadcast_to_shape(c, shape), out, v)
    return out


# ---------------------------------------------------------------------------
# meshgrid
# ---------------------------------------------------------------------------


def _check_indexing(indexing: str) -> None:
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: expected indexing 'xy' or 'ij', got {indexing!r}.")


def _np_meshgrid(
    *xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"
) -> tuple[Any, ...]:
    _check_indexing(indexing)
    return np.meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing)  # type: ignore[call-overload]


@numpy_path(_np_meshgrid)
def meshgrid(
    *xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"
) -> tuple[Any, ...]:
    """Coordinate arrays from 1-d coordinate vectors (NumPy's ``meshgrid``).

    With ``indexing="xy"`` (the default) the first two output axes are swapped
    (Cartesian, shape ``(len(y), len(x), ...)``); ``"ij"`` keeps matrix order.
    ``sparse=True`` returns broadcastable arrays with size-1 axes instead.

    >>> import functrace.numpy as fnp
    >>> [g.shape for g in fnp.meshgrid(fnp.zeros(3), fnp.zeros(2))]
    [(2, 3), (2, 3)]
    """
    _check_indexing(indexing)
    xs = [ravel(asarray_or_tracer(x, "meshgrid")) for x in xi]
    nd = len(xs)
    dims = list(range(nd))
    if indexing == "xy" and nd > 1:
        dims[0], dims[1] = 1, 0
    shape = [0] * nd
    for x, d in zip(xs, dims):
        shape[d] = _shape(x)[0]
    outs = []
    for x, d in zip(xs, dims):
        if sparse:
            outs.append(ls.reshape(x, tuple(shape[d] if i == d else 1 for i in range(nd))))
        else:
            outs.append(ls.broadcast_in_dim(x, tuple(shape), (d,)))
    return tuple(outs)


# ---------------------------------------------------------------------------
# searchsorted
# ---------------------------------------------------------------------------


def _sorts_before(x: Any, y: Any) -> Any:
    """``x < y`` in NumPy's sort order, where NaN comes after every number."""
    lt = lx.lt(x, y)
    if _dtype(x).kind not in "fc":
        return lt
    return lx.bitwise_or(lt, lx.bitwise_and(lx.ne(y, y), lx.eq(x, x)))


def _check_side(side: str) -> None:
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: expected side 'left' or 'right', got {side!r}.")


_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def _check_method(method: Any) -> None:
    if method not in _SEARCH_METHODS:
        raise ValueError(f"searchsorted: expected method in {_SEARCH_METHODS}, got {method!r}.")


def _np_searchsorted(
    a: Any, v: Any, side: str = "left", sorter: Any = None, *, method: str = "scan"
) -> Any:
    _check_method(method)
    _check_side(side)
    return np.searchsorted(a, v, side, sorter)  # type: ignore[call-overload]


@numpy_path(_np_searchsorted, promote_args=(0, 1))
def searchsorted(
    a: Any, v: Any, side: str = "left", sorter: Any = None, *, method: str = "scan"
) -> Any:
    """Indices where the elements of ``v`` would be inserted into the sorted 1-d ``a``
    to keep it sorted: before equal elements (``side="left"``) or after them.
    ``method`` (JAX's choice of algorithm: the results are the same) is checked.

    The result is int64 and carries no derivative.

    >>> import functrace.numpy as fnp
    >>> fnp.searchsorted([1.0, 2.0, 2.0, 3.0], [2.0, 2.5], side="right")
    array([3, 3])
    """
    _check_side(side)
    _check_method(method)
    a = asarray_or_tracer(a, "searchsorted")
    if len(_shape(a)) != 1:
        raise ValueError(f"searchsorted: expected a 1-d sorted array a, got shape {_shape(a)}.")
    if sorter is not None:
        a = take(a, sorter)
    v = asarray_or_tracer(v, "searchsorted")
    dt, _ = dtypes.promote(*[(core.get_aval(t).dtype, core.get_aval(t).weak_type) for t in (a, v)])
    a, v = cast(a, dt), cast(v, dt)
    n = _shape(a)[0]
    vshape = _shape(v)
    full = (*vshape, n)
    aa = broadcast_to_shape(a, full)
    vv = ls.broadcast_in_dim(v, full, tuple(range(len(vshape))))
    # left: count a[i] < v; right: count a[i] <= v, i.e. not (v < a[i])
    hit = _sorts_before(aa, vv) if side == "left" else lx.bitwise_not(_sorts_before(vv, aa))
    return lr.reduce_sum(cast(hit, np.dtype(np.int64)), (len(vshape),))


# ---------------------------------------------------------------------------
# r_, c_
# ---------------------------------------------------------------------------


class _AxisConcatenator:
    """``r_[...]``/``c_[...]``: join numbers, arrays and slices (``start:stop:step``,
    or ``start:stop:Nj`` for N points) along an axis, as NumPy's index tricks do."""

    def __init__(self, np_obj: Any, axis: int, ndmin: int, trans1d: int) -> None:
        self._np = np_obj
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        if not contains_tracer(items):
            return self._np[key]
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        objs: list[Any] = []
        keys: list[tuple[np.dtype, bool]] = []
        scalars: list[bool] = []
        for k, item in enumerate(items):
            if isinstance(item, str):
                if k != 0:
                    raise ValueError(
                        "r_: expected directive strings only as the first entry, "
                        f"got {item!r} at position {k}."
                    )
                axis, ndmin, trans1d = _directive(item, axis, ndmin, trans1d)
                continue
            if isinstance(item, builtins.slice):
                obj = _slice_values(item)
                if ndmin > 1:
                    obj = np.asarray(obj).reshape((1,) * (ndmin - 1) + obj.shape)
                    if trans1d != -1:
                        obj = np.swapaxes(obj, -1, trans1d)
                keys.append((obj.dtype, False))
                scalars.append(False)
            elif type(item) in _PY_SCALARS or isinstance(item, np.generic):
                obj = item
                keys.append((np.asarray(item).dtype, type(item) in _PY_SCALARS))
                scalars.append(True)
            else:
                obj = asarray_or_tracer(item, "r_")
                item_nd = len(_shape(obj))
                obj = _ndmin(obj, ndmin)
                if trans1d != -1 and item_nd < ndmin:
                    k2, k1 = ndmin - item_nd, trans1d
                    if k1 < 0:
                        k1 += k2 + 1
                    order = list(range(ndmin))
                    obj = ls.transpose(obj, tuple(order[:k1] + order[k2:] + order[k1:k2]))
                keys.append((_dtype(obj), False))
                scalars.append(False)
            objs.append(obj)
        if not objs:
            return np.array([])
        dt, _ = dtypes.promote(*keys)
        parts = []
        for obj, is_scalar in zip(objs, scalars):
            obj = np.asarray(obj, dt) if is_scalar else cast(asarray_or_tracer(obj), dt)
            parts.append(_ndmin(obj, builtins.max(ndmin, 1)))
        return concatenate(parts, axis)

    def __len__(self) -> int:
        return 0


def _concrete(v: Any) -> Any:
    return concrete_array("r_", v, "slice bounds")[()] if isinstance(v, Tracer) else v


def _slice_values(item: builtins.slice) -> np.ndarray:
    start, stop, step = (_concrete(b) for b in (item.start, item.stop, item.step))
    step_: Any
    start = 0 if start is None else start
    step_ = 1 if step is None else step
    if isinstance(step_, (complex, np.complexfloating)):
        return np.linspace(start, stop, num=int(abs(complex(step_))))
    return np.arange(start, stop, step_)


def _ndmin(x: Any, ndmin: int) -> Any:
    shape = _shape(x)
    if len(shape) >= ndmin:
        return x
    new = (1,) * (ndmin - len(shape)) + shape
    return np.reshape(x, new) if isinstance(x, np.ndarray) else reshape(x, new)


def _directive(item: str, axis: int, ndmin: int, trans1d: int) -> tuple[int, int, int]:
    if item in ("r", "c"):
        raise NotImplementedError(
            "r_: expected no matrix directive ('r'/'c') with traced "
            "values: np.matrix is not supported. Use the default "
            "directive or reshape the result."
        )
    try:
        vec = [int(v) for v in item.split(",")]
    except ValueError:
        raise ValueError(
            f"r_: expected a directive 'axis', 'axis,ndmin' or 'axis,ndmin,trans1d', got {item!r}."
        ) from None
    if len(vec) == 1:
        return vec[0], ndmin, trans1d
    if len(vec) in (2, 3):
        return vec[0], vec[1], vec[2] if len(vec) == 3 else trans1d
    raise ValueError(f"r_: expected at most three integers in the directive, got {item!r}.")


r_ = _AxisConcatenator(np.r_, 0, 1, -1)
c_ = _AxisConcatenator(np.c_, -1, 2, 0)

__all__ = ["c_", "diff", "gradient", "meshgrid", "r_", "searchsorted", "select"]
