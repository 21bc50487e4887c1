"""Sorting in functrace.numpy: ``sort``, ``argsort``, ``partition`` and ``argpartition``.

Plain NumPy inputs go to NumPy; on tracers all four are one ``sort`` primitive
(``lax.sort``/``lax.argsort``), whose rules give the derivative (the tangent is
permuted like the values), batching and jit.

Decisions:

* Sorting is always stable, whatever ``kind=`` says (every kind NumPy accepts is
  accepted): a stable order is a valid result of each kind, and it makes eager, jit
  and vmap agree on ties. NaNs sort last, as in NumPy.
* ``descending=True`` (JAX's keyword) is JAX's stable descending order: largest first,
  ties in their original order, NaNs first. Also with ``stable=False``, where JAX's
  order of ties happens to be reversed (any order is allowed there).
* ``argsort``/``argpartition`` return int64 indices, which carry no derivative.
* ``partition``/``argpartition`` return the fully sorted array (resp. the stable
  argsort), also on plain NumPy inputs. NumPy leaves the order within the two sides
  of each ``kth`` element unspecified, so a sorted result is one of the results it
  allows; the cost is O(n log n) instead of O(n).
* ``axis=None`` sorts the flattened array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace.lax import shapes as ls
from functrace.numpy._core import asarray_or_tracer, normalize_axis
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._shape import flip, ravel, shape


def _check_kind(fname: str, kind: Any, stable: Any = None) -> None:
    # NumPy reads only the first letter, in either case ('q', 'Merge', ...)
    if kind is not None and not (
        isinstance(kind, str) and kind[:1].lower() in ("q", "m", "h", "s")
    ):
        raise ValueError(
            f"{fname}: expected kind None, 'quicksort', 'mergesort', 'heapsort' or "
            f"'stable', got {kind!r}."
        )
    if stable not in (None, True, False):
        raise ValueError(f"{fname}: expected stable=None, True or False, got {stable!r}.")
    if stable is not None and kind is not None:
        raise ValueError(
            f"{fname}: expected kind= or stable=, got both (kind={kind!r}, stable={stable!r})."
        )


def _check_order(fname: str, order: Any) -> None:
    if order is not None:
        raise NotImplementedError(
            f"{fname}: expected order=None on traced arrays, got order={order!r}. "
            f"Structured (record) arrays cannot be traced."
        )


def _prepare(fname: str, a: Any, axis: Any) -> tuple[Any, int]:
    """The operand (flattened for ``axis=None``) and the non-negative sort axis."""
    x = asarray_or_tracer(a, fname)
    if axis is None:
        x = ravel(x)
        return x, 0
    return x, normalize_axis(fname, axis, len(core.get_aval(x).shape))


def _numpy_sort(name: str, np_fn: Any) -> Any:
    """NumPy's ``sort``/``argsort``, stable unless ``order`` is given; ``descending``
    as in :func:`_descending`."""

    def call(
        a: Any,
        axis: Any = -1,
        kind: Any = None,
        order: Any = None,
        *,
        stable: Any = None,
        descending: Any = False,
    ) -> Any:
        _check_kind(name, kind, stable)
        _check_descending(name, descending)
        if order is not None:
            if descending:
                raise ValueError(f"{name}: expected order=None with descending=True.")
            return np_fn(a, axis, kind, order)
        if descending:
            a = np.asarray(a)
            if axis is None:
                a, axis = a.reshape(-1), 0
            return _descending(name, lambda v, ax: np_fn(v, ax, kind="stable"), a, axis)
        return np_fn(a, axis, kind="stable")

    return call


def _check_descending(fname: str, descending: Any) -> None:
    if descending not in (True, False):
        raise TypeError(f"{fname}: expected descending=True or False, got {descending!r}.")


def _descending(name: str, ascending: Any, x: Any, axis: int) -> Any:
    """``ascending(x, axis)`` (a sort or a stable argsort) turned into a descending
    one, NaNs first, as JAX's: ``sort`` reverses the ascending sort, so tied elements
    come in reverse order (which decides where each one's derivative goes); ``argsort``
    keeps ties in their original order (it sorts the reversed array, reverses the result
    and maps the indices back to the original positions)."""
    if name == "sort":
        return flip(ascending(x, axis), axis)
    n = shape(x)[axis]
    return n - 1 - flip(ascending(flip(x, axis), axis), axis)


@numpy_path(_numpy_sort("sort", np.sort))
def sort(
    a: Any,
    axis: Any = -1,
    kind: Any = None,
    order: Any = None,
    *,
    stable: Any = None,
    descending: Any = False,
) -> Any:
    """A sorted copy of ``a`` along ``axis`` (flattened first for ``axis=None``);
    NaNs last, ties in their original order (``descending=True``: largest first, NaNs
    first, ties in reverse order, as JAX's: the ascending sort reversed).

    The derivative moves each tangent element with its value (so the order of ties
    decides which position's derivative each tied element gets).

    >>> import functrace.numpy as fnp
    >>> fnp.sort([3.0, float("nan"), 1.0, 2.0])
    array([ 1.,  2.,  3., nan])
    """
    _check_kind("sort", kind, stable)
    _check_descending("sort", descending)
    _check_order("sort", order)
    x, ax = _prepare("sort", a, axis)
    return _descending("sort", ls.sort, x, ax) if descending else ls.sort(x, ax)


@numpy_path(_numpy_sort("argsort", np.argsort))
def argsort(
    a: Any,
    axis: Any = -1,
    kind: Any = None,
    order: Any = None,
    *,
    stable: Any = None,
    descending: Any = False,
) -> Any:
    """int64 indices that sort ``a`` along ``axis`` (of the flattened array for
    ``axis=None``); always stable, NaNs last (``descending=True``: largest first, ties
    in their original order, NaNs first, as JAX's). Integer output: no derivative.

    >>> import functrace.numpy as fnp
    >>> fnp.argsort([3.0, 1.0, 2.0, 1.0])
    array([1, 3, 2, 0])
    """
    _check_kind("argsort", kind, stable)
    _check_descending("argsort", descending)
    _check_order("argsort", order)
    x, ax = _prepare("argsort", a, axis)
    return _descending("argsort", ls.argsort, x, ax) if descending else ls.argsort(x, ax)


def _check_kth(fname: str, kth: Any, shape: tuple[int, ...], axis: Any) -> None:
    if isinstance(kth, core.Tracer):
        raise TypeError(
            f"{fname}: expected a concrete kth (an int or a sequence of ints), got a "
            f"tracer. kth decides the output's structure and must be known when tracing."
        )
    ks = np.asarray(kth)
    if ks.dtype.kind not in "iu" or ks.ndim > 1:
        raise TypeError(f"{fname}: expected kth an int or a 1-d sequence of ints, got {kth!r}.")
    n = int(np.prod(shape)) if axis is None else shape[normalize_axis(fname, axis, len(shape))]
    for k in ks.reshape(-1).tolist():
        if n and not -n <= k < n:  # (an empty axis takes any kth, as in NumPy)
            raise ValueError(
                f"{fname}: expected kth in [{-n}, {n}) for an axis of length {n}, got {k}."
            )


def _check_partition(name: str, a: Any, kth: Any, axis: Any, kind: str) -> Any:
    """``a`` as an array or tracer, after checking ``kind`` and ``kth``."""
    if kind != "introselect":
        raise ValueError(f"{name}: expected kind='introselect', got {kind!r}.")
    x = asarray_or_tracer(a, name)
    _check_kth(name, kth, core.get_aval(x).shape, axis)
    return x


def _numpy_partition(name: str, np_part: Any, np_sort: Any) -> Any:
    """NumPy's ``partition``/``argpartition`` as the full (stable) sort, a valid partition
    for every ``kth`` (NumPy's own with a structured ``order``)."""

    def call(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> Any:
        _check_partition(name, a, kth, axis, kind)
        if order is not None:
            return np_part(a, kth, axis, "introselect", order)
        return np_sort(a, axis, kind="stable")

    return call


def _partition(
    name: str, a: Any, kth: Any, axis: Any, kind: str, order: Any, traced_sort: Any
) -> Any:
    """partition / argpartition on tracers: the (stable) full sort."""
    x = _check_partition(name, a, kth, axis, kind)
    _check_order(name, order)
    x, ax = _prepare(name, x, axis)
    return traced_sort(x, ax)


@numpy_path(_numpy_partition("partition", np.partition, np.sort))
def partition(
    a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
) -> Any:
    """``a`` rearranged so that the element at each ``kth`` position is the one a
    full sort puts there, smaller ones before it and larger ones after.

    This implementation returns the fully sorted array (a valid partition for every
    ``kth``; NumPy leaves the order within each side unspecified).

    >>> import functrace.numpy as fnp
    >>> fnp.partition([3.0, 1.0, 2.0], 1)
    array([1., 2., 3.])
    """
    return _partition("partition", a, kth, axis, kind, order, ls.sort)


@numpy_path(_numpy_partition("argpartition", np.argpartition, np.argsort))
def argpartition(
    a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None
) -> Any:
    """int64 indices that partition ``a`` around each ``kth`` position (see
    ``partition``): this implementation returns the stable ``argsort``. Integer
    output: no derivative.

    >>> import functrace.numpy as fnp
    >>> fnp.argpartition([3.0, 1.0, 2.0], 0)
    array([1, 2, 0])
    """
    return _partition("argpartition", a, kth, axis, kind, order, ls.argsort)


def sort_complex(a: Any) -> Any:
    """``a`` sorted along its last axis, as complex numbers (real part first, then the
    imaginary part), in NumPy's ``sort_complex`` dtypes: complex input keeps its dtype,
    8- and 16-bit integers give complex64, every other real dtype complex128 (float32
    included, where JAX gives complex64).

    >>> import functrace.numpy as fnp
    >>> fnp.sort_complex([3.0, 1.0, 2.0])
    array([1.+0.j, 2.+0.j, 3.+0.j])
    """
    x = sort(a, axis=-1)
    dt = core.get_aval(x).dtype
    if dt.kind != "c":
        small = dt.kind in "iu" and dt.itemsize <= 2
        dt = np.dtype(np.complex64 if small else np.complex128)
    return x.astype(dt) if isinstance(x, core.Tracer) else np.asarray(x).astype(dt)


__all__ = ["argpartition", "argsort", "partition", "sort", "sort_complex"]
