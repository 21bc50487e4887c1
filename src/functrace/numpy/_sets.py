"""Set operations of functrace.numpy: ``unique`` and the array-API ``unique_all``,
``unique_counts``, ``unique_inverse``, ``unique_values``; ``isin``, ``intersect1d``,
``union1d``, ``setdiff1d``, ``setxor1d`` and ``lexsort``. Counting, histograms and
interpolation (``bincount``, ``digitize``, ``histogram``, ``histogram_bin_edges``,
``histogram2d``, ``histogramdd``, ``interp``) live in ``_histogram`` and are exported
from here.

Plain NumPy inputs go to NumPy. On tracers every function is a composite: a stable
``sort`` (with an ``iota`` operand for the permutation), comparisons of neighbours,
a stable ``argsort`` of the selection mask to gather the selected positions and
``cumsum``/``sort`` for inverse indices, so all of them batch and jit, and values
differentiate through the gathers (the gradient of a unique value goes to its first
occurrence). Traced values are only read where the output shape depends on them
(``size=None`` under ``grad``), so eager derivative programs stay reusable.

Decisions:

* Results whose length depends on the values (every function here but ``isin`` and
  ``lexsort``) take JAX's ``size=`` and ``fill_value=``: exactly ``size`` entries,
  truncated or padded. Under ``jit`` or a batching ``vmap`` the values are unknown, so
  ``size=`` is required (a ``ConcretizationError`` says so). Under ``grad``/``jvp``
  without ``jit`` the values are known and ``size=None`` gives NumPy's result, with a
  gradient (JAX returns a zero gradient there).
* Padding follows JAX: ``unique``/``union1d`` pad values with the smallest value (a
  ``ValueError`` for an empty input without ``fill_value``), their ``return_index``
  with its index and counts with 0; ``intersect1d``/``setxor1d`` pad with their
  smallest result (0 if there is none), ``setdiff1d`` with 0; ``intersect1d``'s index
  padding is ``ar1.size``/``ar2.size``. ``fill_value`` is cast to the result's dtype.
* Results are always sorted: ``sorted=False`` (NumPy 2.3, JAX) is accepted and sorts
  anyway, and ``unique_values`` sorts although NumPy 2.4 returns hash order for
  integers (the array API leaves the order unspecified), so eager and jit agree.
* ``unique`` with ``axis`` compares whole slices as NumPy does: slices holding a NaN
  are never equal to another one (JAX merges them); ``equal_nan`` applies to
  ``axis=None`` only.
* ``isin`` (and the membership tests inside the set operations) compares every
  element with every test element: memory ``O(element.size * test_elements.size)``.
  ``kind=`` (NumPy) and ``method=`` (JAX) choose an algorithm and change no result.
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

from functrace import core
from functrace._array import Array, _wrap
from functrace.core import Tracer
from functrace.errors import ConcretizationError
from functrace.lax import elementwise as lx
from functrace.lax import reductions as lr
from functrace.lax import shapes as ls
from functrace.numpy._core import asarray_or_tracer, broadcast_to_shape, cast, normalize_axis
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._histogram import (
    _gather0,
    bincount,
    digitize,
    histogram,
    histogram2d,
    histogram_bin_edges,
    histogramdd,
    interp,
)
from functrace.numpy._indexing import where
from functrace.numpy._joining import concatenate
from functrace.numpy._shape import moveaxis, ravel, reshape

_NP_UNIQUE: Any = np.unique  # (its overloads want literal flags)
_INT64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)

# ---------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------


def _array(fname: str, x: Any) -> Any:
    """``x`` as an array or tracer (Python scalars become NumPy arrays, as in NumPy)."""
    x = asarray_or_tracer(x, fname)
    return x if isinstance(x, (Tracer, np.ndarray)) else np.asarray(x)


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _dtype(x: Any) -> np.dtype:
    return core.get_aval(x).dtype


def _to(x: Any, dt: np.dtype) -> Any:
    return x if _dtype(x) == dt else cast(x, dt)


def _size_arg(fname: str, size: Any) -> int | None:
    if size is None:
        return None
    try:
        k = operator.index(size)
    except TypeError:
        raise TypeError(
            f"{fname}: expected size=None or a Python int, got {size!r}. The size fixes "
            f"the output shape, so it must be known while tracing."
        ) from None
    if k < 0:
        raise ValueError(f"{fname}: expected a non-negative size, got {k}.")
    return k


def _size_error(fname: str, what: str) -> ConcretizationError:
    return ConcretizationError(
        f"{fname}: expected size= for values that are not known while tracing (under jit "
        f"or vmap), got size=None. The number of {what} depends on the values, so the "
        f"output shape would be unknown: pass size=n for exactly n entries (padded with "
        f"fill_value, or truncated), as in JAX."
    )


def _concrete_size(fname: str, mask: Any, what: str) -> int:
    """The number of True entries of ``mask``, which must be known now."""
    val = core.concrete_or_none(mask)
    if val is None:
        raise _size_error(fname, what)
    return int(np.count_nonzero(val))


def _fit(v: Any, size: int, pad: Any) -> Any:
    """The 1-d ``v`` cut or padded (with ``pad``) to ``size`` entries."""
    n = _shape(v)[0]
    if size <= n:
        return v if size == n else ls.slice(v, (0,), (size,))
    return concatenate([v, np.full(size - n, pad, _dtype(v))])


def _differs(a: Any, b: Any, nan_equal: bool) -> Any:
    """``a != b`` elementwise; with ``nan_equal`` two NaNs count as equal."""
    d = lx.ne(a, b)
    if nan_equal and _dtype(a).kind in "fc":
        both_nan = lx.bitwise_and(lx.ne(a, a), lx.ne(b, b))
        d = lx.bitwise_and(d, lx.bitwise_not(both_nan))
    return d


def _sort_with_perm(cols: list[Any], n: int) -> tuple[list[Any], Any]:
    """The 1-d ``cols`` sorted together (the first one first, stable) and the permutation."""
    out = ls.sort_multi([*cols, ls.iota(np.int64, n)], 0, num_keys=max(len(cols), 1))
    return list(out[:-1]), out[-1]


def _group_starts(sorted_cols: list[Any], n: int, nan_equal: bool) -> Any:
    """Bool (n,): True where a sorted row differs from the row before it (and at 0)."""
    if n == 0:
        return np.zeros(0, _BOOL)
    diff: Any = np.zeros(n - 1, _BOOL)  # rows with no entries are all equal
    for k, c in enumerate(sorted_cols):
        d = _differs(ls.slice(c, (1,), (n,)), ls.slice(c, (0,), (n - 1,)), nan_equal)
        diff = d if k == 0 else lx.bitwise_or(diff, d)
    return concatenate([np.ones(1, _BOOL), diff])


def _count(mask: Any) -> Any:
    return lr.reduce_sum(_to(mask, _INT64), (0,))


def _true_positions(mask: Any, size: int, fill: int) -> Any:
    """The first ``size`` positions of True entries of the 1-d ``mask``, in order, padded
    with ``fill`` (int64). Traced masks are not read: a stable argsort puts them first."""
    if not isinstance(mask, Tracer):
        pos = np.flatnonzero(mask)[:size].astype(_INT64)
        return np.concatenate([pos, np.full(size - len(pos), fill, _INT64)])
    first = _fit(ls.argsort(_to(lx.bitwise_not(mask), np.dtype(np.int8))), size, 0)
    valid = lx.lt(ls.iota(np.int64, size), ls.broadcast_in_dim(_count(mask), (size,), ()))
    return lx.select_n(valid, np.full(size, fill, _INT64), first)


def _compact(mask: Any, size: int) -> tuple[Any, Any, Any]:
    """(positions, valid, count): the first ``size`` True positions of the 1-d ``mask``
    in order (0 where padded), which of them are real, and the number of True entries."""
    pos = _true_positions(mask, size, 0)
    count = _count(mask)
    valid = lx.lt(ls.iota(np.int64, size), ls.broadcast_in_dim(count, (size,), ()))
    return pos, valid, count


def _pad(v: Any, valid: Any, fill: Any) -> Any:
    """``v`` (leading axis matching ``valid``) with ``fill`` (cast to its dtype, broadcast
    against one entry) where not ``valid``."""
    shape = _shape(v)
    if not shape[0]:
        return v
    fill = _to(fill if isinstance(fill, Tracer) else np.asarray(fill, _dtype(v)), _dtype(v))
    mask = ls.broadcast_in_dim(valid, shape, (0,))
    return lx.select_n(mask, broadcast_to_shape(fill, shape), v)


def _first_or_zero(vals: Any, count: Any) -> Any:
    """JAX's default padding of intersect1d/setxor1d: the first value if any, else 0."""
    first = ls.reshape(ls.slice(vals, (0,), (1,)), ())
    return where(lx.gt(count, np.int64(0)), first, np.zeros((), _dtype(vals)))


def _isin_flat(v: Any, t: Any) -> Any:
    """Bool, shape of ``v``: whether each element equals some element of the 1-d ``t``."""
    vs, m = _shape(v), _shape(t)[0]
    if m == 0 or 0 in vs:
        return np.zeros(vs, _BOOL)
    full = (*vs, m)
    eq = lx.eq(
        ls.broadcast_in_dim(v, full, tuple(range(len(vs)))),
        ls.broadcast_in_dim(t, full, (len(vs),)),
    )
    return lr.reduce_max(eq, (len(vs),))


def _check_fill(fname: str, fill_value: Any, row_shape: tuple[int, ...]) -> None:
    if fill_value is None:
        return
    fshape = np.shape(fill_value) if not isinstance(fill_value, Tracer) else _shape(fill_value)
    try:
        if np.broadcast_shapes(fshape, row_shape) == row_shape:
            return
    except ValueError:
        pass
    raise ValueError(
        f"{fname}: expected a fill_value that broadcasts to one entry of the result "
        f"(shape {row_shape}), got shape {fshape}."
    )


# ---------------------------------------------------------------------------
# unique
# ---------------------------------------------------------------------------


def _check_unique_args(fname: str, equal_nan: Any, sorted: Any) -> None:  # noqa: A002
    for name, v in (("equal_nan", equal_nan), ("sorted", sorted)):
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{fname}: expected {name}=True or False, got {v!r}.")


def _unique_impl(
    fname: str,
    ar: Any,
    return_index: bool,
    return_inverse: bool,
    return_counts: bool,
    axis: Any,
    equal_nan: bool,
    size: Any,
    fill_value: Any,
) -> tuple[Any, ...]:
    """(values, index, inverse, counts) of ``unique`` on arrays or tracers."""
    size = _size_arg(fname, size)
    x = _array(fname, ar)
    shape = _shape(x)
    rest: tuple[int, ...] = ()  # the shape of one unique entry
    if axis is None:
        rows = ravel(x)
        n = math.prod(shape)
        cols = [rows]
    else:
        ax = normalize_axis(fname, axis, len(shape))
        rows = moveaxis(x, ax, 0)
        n, rest = shape[ax], _shape(rows)[1:]
        mat = reshape(rows, (n, math.prod(rest)))
        cols = [ls.reshape(ls.slice(mat, (0, j), (n, j + 1)), (n,)) for j in range(_shape(mat)[1])]
    _check_fill(fname, fill_value, rest)
    sorted_cols, perm = _sort_with_perm(cols, n)
    # NumPy: equal_nan merges NaNs of a flat array; slices holding NaN never compare equal
    mask = _group_starts(sorted_cols, n, bool(equal_nan) and axis is None)
    if size is None:
        size = _concrete_size(fname, mask, "unique values")
    if n == 0 and size and fill_value is None:
        raise ValueError(
            f"{fname}: expected fill_value= for an empty input with size={size} > 0, got "
            f"fill_value=None. There is no smallest value to pad with."
        )
    # group start positions, padded with n: the counts are the gaps between them
    starts = _true_positions(mask, n, n)
    count = _count(mask)
    valid = lx.lt(ls.iota(np.int64, size), ls.broadcast_in_dim(count, (size,), ()))
    pos = lx.select_n(valid, np.zeros(size, _INT64), _fit(starts, size, 0))
    if n:
        index = _gather0(perm, pos)
        values = _gather0(rows, index)
    else:  # nothing to gather: the padding only
        index = np.zeros(size, _INT64)
        values = np.zeros((size, *rest), _dtype(x))
    if fill_value is not None:
        values = _pad(values, valid, fill_value)
    if axis is not None:
        values = moveaxis(values, 0, ax)
    inverse = counts = None
    if return_inverse:
        group = lx.sub(lr.cumsum(_to(mask, _INT64), 0), np.ones(n, _INT64)) if n else mask
        inverse = ls.sort_multi([perm, _to(group, _INT64)], 0, 1)[1] if n else np.zeros(0, _INT64)
        if axis is None:
            inverse = ls.reshape(inverse, shape)
    if return_counts:
        nxt = concatenate([ls.slice(starts, (1,), (n,)), np.full(1, n, _INT64)]) if n else starts
        counts = _fit(lx.sub(nxt, starts), size, 0)
    return values, index, inverse, counts


def _unique_result(
    out: tuple[Any, ...], return_index: bool, return_inverse: bool, return_counts: bool
) -> Any:
    values, index, inverse, counts = out
    extra = [r for r, flag in ((index, return_index), (inverse, return_inverse)) if flag]
    if return_counts:
        extra.append(counts)
    return (values, *extra) if extra else values


def _np_unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: Any = None,
    *,
    equal_nan: bool = True,
    size: Any = None,
    fill_value: Any = None,
    sorted: bool = True,  # noqa: A002
) -> Any:
    _check_unique_args("unique", equal_nan, sorted)
    if size is None and fill_value is None:
        try:
            return _NP_UNIQUE(
                ar, return_index, return_inverse, return_counts, axis, equal_nan=equal_nan
            )
        except (ValueError, TypeError):  # the same check of ours, with a clearer message
            unique.traced(ar, return_index, return_inverse, return_counts, axis)  # type: ignore[attr-defined]
            raise
    return unique.traced(  # type: ignore[attr-defined]
        ar,
        return_index,
        return_inverse,
        return_counts,
        axis,
        equal_nan=equal_nan,
        size=size,
        fill_value=fill_value,
    )


@numpy_path(_np_unique)
def unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: Any = None,
    *,
    equal_nan: bool = True,
    size: Any = None,
    fill_value: Any = None,
    sorted: bool = True,  # noqa: A002
) -> Any:
    """The sorted unique elements of ``ar`` (flattened), or its unique slices along
    ``axis``; optionally the index of each one's first occurrence, the inverse indices
    (``ar`` is ``values[inverse]``) and the counts, as NumPy returns them.

    ``size``/``fill_value`` (JAX's keywords) give exactly ``size`` values: truncated,
    or padded with ``fill_value`` (default: the smallest value; the padded indices point
    to it and the padded counts are 0). Under ``jit`` or ``vmap`` ``size`` is required.
    The gradient of each value goes to its first occurrence. ``sorted=False`` still
    sorts.

    >>> import functrace.numpy as fnp
    >>> fnp.unique([3, 1, 3, 2], return_counts=True)
    (array([1, 2, 3]), array([1, 1, 2]))
    >>> fnp.unique([3.0, 1.0, 3.0], size=4, fill_value=-1.0)
    array([ 1.,  3., -1., -1.])
    """
    _check_unique_args("unique", equal_nan, sorted)
    out = _unique_impl(
        "unique",
        ar,
        return_index,
        return_inverse,
        return_counts,
        axis,
        equal_nan,
        size,
        fill_value,
    )
    return _unique_result(out, return_index, return_inverse, return_counts)


class UniqueAllResult(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


def _unique_api_parts(
    fname: str, x: Any, size: Any, fill_value: Any, flags: tuple[bool, bool, bool]
) -> list[Any]:
    """[values, indices, inverse, counts] of the array API's unique (NaNs stay distinct,
    the inverse is shaped like ``x``); entries not asked for by ``flags`` are None."""
    if size is None and fill_value is None and not isinstance(x, Tracer):
        out = _NP_UNIQUE(x, *flags, equal_nan=False)
        parts = list(out) if isinstance(out, tuple) else [out]
        res = [parts.pop(0)] + [parts.pop(0) if f else None for f in flags]
    else:
        res = list(_unique_impl(fname, x, *flags, None, False, size, fill_value))
    if type(x) is Array:
        res = [None if r is None else _wrap(r) for r in res]
    return res


def _unique_api(name: str, flags: tuple[bool, bool, bool], make: Any, summary: str) -> Any:
    def fn(x: Any, /, *, size: Any = None, fill_value: Any = None) -> Any:
        return make(*_unique_api_parts(name, x, size, fill_value, flags))

    np_fn = fn
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = summary
    return numpy_path(np_fn)(fn)


unique_all = _unique_api(
    "unique_all",
    (True, True, True),
    lambda v, i, inv, c: UniqueAllResult(v, i, inv, c),
    """The array API's ``unique_all``: ``UniqueAllResult(values, indices,
    inverse_indices, counts)``, NaNs kept distinct, ``inverse_indices`` shaped like
    ``x``; ``size``/``fill_value`` as in ``unique`` (JAX's keywords).

    >>> import functrace.numpy as fnp
    >>> fnp.unique_all([2, 1, 2]).counts
    array([1, 2])
    """,
)
unique_counts = _unique_api(
    "unique_counts",
    (False, False, True),
    lambda v, i, inv, c: UniqueCountsResult(v, c),
    """The array API's ``unique_counts``: ``UniqueCountsResult(values, counts)``, NaNs
    kept distinct; ``size``/``fill_value`` as in ``unique``.

    >>> import functrace.numpy as fnp
    >>> fnp.unique_counts([2.0, 1.0, 2.0])
    UniqueCountsResult(values=array([1., 2.]), counts=array([1, 2]))
    """,
)
unique_inverse = _unique_api(
    "unique_inverse",
    (False, True, False),
    lambda v, i, inv, c: UniqueInverseResult(v, inv),
    """The array API's ``unique_inverse``: ``UniqueInverseResult(values,
    inverse_indices)`` with ``inverse_indices`` shaped like ``x``, NaNs kept distinct;
    ``size``/``fill_value`` as in ``unique``.

    >>> import functrace.numpy as fnp
    >>> fnp.unique_inverse([[2, 1], [2, 3]]).inverse_indices
    array([[1, 0],
           [1, 2]])
    """,
)
unique_values = _unique_api(
    "unique_values",
    (False, False, False),
    lambda v, i, inv, c: v,
    """The array API's ``unique_values``: the sorted unique elements of ``x``, NaNs
    kept distinct (sorted also where NumPy 2.4 returns hash order);
    ``size``/``fill_value`` as in ``unique``.

    >>> import functrace.numpy as fnp
    >>> fnp.unique_values([3, 1, 3])
    array([1, 3])
    """,
)

# ---------------------------------------------------------------------------
# isin
# ---------------------------------------------------------------------------

_KINDS = (None, "sort", "table")
_METHODS = (None, "auto", "compare_all", "binary_search", "sort")


def _check_isin(kind: Any, method: Any) -> None:
    if kind not in _KINDS:
        raise ValueError(f"isin: expected kind None, 'sort' or 'table', got {kind!r}.")
    if method not in _METHODS:
        raise ValueError(
            f"isin: expected method 'auto', 'compare_all', 'binary_search' or 'sort', got "
            f"{method!r}."
        )


def _np_isin(
    element: Any,
    test_elements: Any,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    kind: Any = None,
    method: Any = None,
) -> Any:
    _check_isin(kind, method)
    return np.isin(element, test_elements, assume_unique, invert, kind=kind)


@numpy_path(_np_isin)
def isin(
    element: Any,
    test_elements: Any,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    kind: Any = None,
    method: Any = None,
) -> Any:
    """Bool array shaped like ``element``: whether each element is in ``test_elements``
    (flattened); negated with ``invert``. NaN is in no array.

    Traced, every element is compared with every test element; ``kind`` (NumPy) and
    ``method`` (JAX) are accepted and change nothing. Bool output: no derivative.

    >>> import functrace.numpy as fnp
    >>> fnp.isin([[1, 2], [3, 4]], [4, 1])
    array([[ True, False],
           [False,  True]])
    """
    _check_isin(kind, method)
    e, t = _array("isin", element), ravel(_array("isin", test_elements))
    dt = np.result_type(_dtype(e), _dtype(t))
    out = _isin_flat(_to(e, dt), _to(t, dt))
    return lx.bitwise_not(out) if invert else out


# ---------------------------------------------------------------------------
# intersect1d, union1d, setdiff1d, setxor1d
# ---------------------------------------------------------------------------


def _flat_pair(fname: str, ar1: Any, ar2: Any) -> tuple[Any, Any]:
    """Both arrays flattened, in their common (NumPy ``concatenate``) dtype."""
    a1, a2 = ravel(_array(fname, ar1)), ravel(_array(fname, ar2))
    dt = np.result_type(_dtype(a1), _dtype(a2))
    return _to(a1, dt), _to(a2, dt)


def _first_of_each(a: Any) -> tuple[Any, Any, Any]:
    """(sorted a, permutation, mask of the first of each run of equal values; NaNs equal)."""
    n = _shape(a)[0]
    (s,), perm = _sort_with_perm([a], n)
    return s, perm, _group_starts([s], n, True)


def _finish_sized(
    fname: str, vals: Any, valid: Any, count: Any, fill_value: Any, default: str
) -> Any:
    if fill_value is not None:
        _check_fill(fname, fill_value, ())
        return _pad(vals, valid, fill_value)
    if not _shape(vals)[0]:
        return vals
    fill = _first_or_zero(vals, count) if default == "first" else np.zeros((), _dtype(vals))
    return _pad(vals, valid, fill)


def _np_sized(name: str, np_fn: Any) -> Any:
    """NumPy's set function, or the traced one when a JAX keyword is given."""

    def call(*args: Any, size: Any = None, fill_value: Any = None, **kwargs: Any) -> Any:
        if size is None and fill_value is None:
            return np_fn(*args, **kwargs)
        return globals()[name].traced(*args, size=size, fill_value=fill_value, **kwargs)

    return call


@numpy_path(_np_sized("intersect1d", np.intersect1d))
def intersect1d(
    ar1: Any,
    ar2: Any,
    assume_unique: bool = False,
    return_indices: bool = False,
    *,
    size: Any = None,
    fill_value: Any = None,
) -> Any:
    """The sorted unique values in both ``ar1`` and ``ar2`` (flattened); with
    ``return_indices`` also the index of each one's first occurrence in each array
    (with ``assume_unique`` the arrays are taken as they are, as NumPy does).

    ``size``/``fill_value`` (JAX's keywords) give exactly ``size`` values: truncated,
    or padded with ``fill_value`` (default: the smallest common value, else 0; the
    padded indices are ``ar1.size`` and ``ar2.size``). Under ``jit`` or ``vmap``
    ``size`` is required. The gradient of a value goes to its occurrence in ``ar1``.

    >>> import functrace.numpy as fnp
    >>> fnp.intersect1d([4, 1, 3, 1], [3, 1, 7], return_indices=True)
    (array([1, 3]), array([1, 2]), array([1, 0]))
    """
    fname = "intersect1d"
    size = _size_arg(fname, size)
    a1, a2 = _flat_pair(fname, ar1, ar2)
    n1, n2 = _shape(a1)[0], _shape(a2)[0]
    if assume_unique:  # NumPy's algorithm: equal neighbours in the sorted concatenation
        both = concatenate([a1, a2])
        n = n1 + n2
        (s,), perm = _sort_with_perm([both], n)
        if n > 1:
            keep = lx.eq(ls.slice(s, (1,), (n,)), ls.slice(s, (0,), (n - 1,)))
        else:
            keep = np.zeros(0, _BOOL)
        size = _concrete_size(fname, keep, "common values") if size is None else size
        pos, valid, count = _compact(keep, size)
        if n > 1:
            i1 = _gather0(perm, pos)
            i2 = lx.sub(
                _gather0(perm, lx.add(pos, np.ones(size, _INT64))), np.full(size, n1, _INT64)
            )
            vals = _gather0(both, i1)
        else:
            i1 = i2 = np.zeros(size, _INT64)
            vals = np.zeros(size, _dtype(a1))
    else:
        s1, perm1, first1 = _first_of_each(a1)
        keep = lx.bitwise_and(first1, _isin_flat(s1, a2)) if n1 else first1
        size = _concrete_size(fname, keep, "common values") if size is None else size
        pos, valid, count = _compact(keep, size)
        if n1:
            i1 = _gather0(perm1, pos)
            vals = _gather0(a1, i1)
        else:
            i1 = np.zeros(size, _INT64)
            vals = np.zeros(size, _dtype(a1))
        if n2 and n1:  # first occurrence in ar2: the first True of each row of ==
            full = (size, n2)
            eq = lx.eq(ls.broadcast_in_dim(vals, full, (0,)), ls.broadcast_in_dim(a2, full, (1,)))
            i2 = lr.argmax(_to(eq, np.dtype(np.int8)), 1)
        else:
            i2 = np.zeros(size, _INT64)
    vals = _finish_sized(fname, vals, valid, count, fill_value, "first")
    if not return_indices:
        return vals
    i1 = lx.select_n(valid, np.full(size, n1, _INT64), _to(i1, _INT64))
    i2 = lx.select_n(valid, np.full(size, n2, _INT64), _to(i2, _INT64))
    return vals, i1, i2


@numpy_path(_np_sized("union1d", np.union1d))
def union1d(ar1: Any, ar2: Any, *, size: Any = None, fill_value: Any = None) -> Any:
    """The sorted unique values of ``ar1`` and ``ar2`` together (flattened).

    ``size``/``fill_value`` as in ``unique`` (JAX's keywords; default padding: the
    smallest value).

    >>> import functrace.numpy as fnp
    >>> fnp.union1d([3, 1], [2, 3])
    array([1, 2, 3])
    """
    a1, a2 = _flat_pair("union1d", ar1, ar2)
    both = concatenate([a1, a2])
    return _unique_impl("union1d", both, False, False, False, None, True, size, fill_value)[0]


@numpy_path(_np_sized("setdiff1d", np.setdiff1d))
def setdiff1d(
    ar1: Any, ar2: Any, assume_unique: bool = False, *, size: Any = None, fill_value: Any = None
) -> Any:
    """The sorted unique values of ``ar1`` that are not in ``ar2`` (flattened, in the
    dtype of ``ar1``); with ``assume_unique`` the values of ``ar1`` not in ``ar2``, in
    their order, as NumPy.

    ``size``/``fill_value`` (JAX's keywords) give exactly ``size`` values: truncated,
    or padded with ``fill_value`` (default 0). Under ``jit`` or ``vmap`` ``size`` is
    required.

    >>> import functrace.numpy as fnp
    >>> fnp.setdiff1d([5, 1, 3, 1], [3])
    array([1, 5])
    """
    fname = "setdiff1d"
    size = _size_arg(fname, size)
    a1, a2 = ravel(_array(fname, ar1)), ravel(_array(fname, ar2))
    dt = np.result_type(_dtype(a1), _dtype(a2))  # compared in the common dtype, kept in ar1's
    n1 = _shape(a1)[0]
    order: Any = None
    if assume_unique:
        keep = lx.bitwise_not(_isin_flat(_to(a1, dt), _to(a2, dt))) if n1 else np.zeros(0, _BOOL)
    else:
        s1, order, first1 = _first_of_each(a1)
        gone = _isin_flat(_to(s1, dt), _to(a2, dt))
        keep = lx.bitwise_and(first1, lx.bitwise_not(gone)) if n1 else first1
    size = _concrete_size(fname, keep, "remaining values") if size is None else size
    pos, valid, count = _compact(keep, size)
    if n1:
        vals = _gather0(a1, pos if order is None else _gather0(order, pos))
    else:
        vals = np.zeros(size, _dtype(a1))
    return _finish_sized(fname, vals, valid, count, fill_value, "zero")


@numpy_path(_np_sized("setxor1d", np.setxor1d))
def setxor1d(
    ar1: Any, ar2: Any, assume_unique: bool = False, *, size: Any = None, fill_value: Any = None
) -> Any:
    """The sorted values in exactly one of ``ar1`` and ``ar2`` (flattened, each made
    unique first unless ``assume_unique``). As in NumPy, a NaN of each array stays.

    ``size``/``fill_value`` (JAX's keywords) give exactly ``size`` values: truncated,
    or padded with ``fill_value`` (default: the smallest result, else 0). Under ``jit``
    or ``vmap`` ``size`` is required.

    >>> import functrace.numpy as fnp
    >>> fnp.setxor1d([1, 2, 2, 4], [2, 3])
    array([1, 3, 4])
    """
    fname = "setxor1d"
    size = _size_arg(fname, size)
    a1, a2 = _flat_pair(fname, ar1, ar2)
    n1, n2 = _shape(a1)[0], _shape(a2)[0]
    n = n1 + n2
    if assume_unique:
        both = concatenate([a1, a2])
        kept: Any = np.ones(n, _BOOL)
    else:
        s1, _, f1 = _first_of_each(a1)
        s2, _, f2 = _first_of_each(a2)
        both, kept = concatenate([s1, s2]), concatenate([f1, f2])
    if n:
        # kept values first, sorted; a value stays when it differs from both neighbours
        later = _to(lx.bitwise_not(kept), np.dtype(np.int8))
        _, s, order = ls.sort_multi([later, both, ls.iota(np.int64, n)], 0, num_keys=2)
        m = _count(kept)
        i = ls.iota(np.int64, n)
        inner = _differs(ls.slice(s, (1,), (n,)), ls.slice(s, (0,), (n - 1,)), False)
        last = lx.ge(
            lx.add(ls.slice(i, (0,), (n - 1,)), np.ones(n - 1, _INT64)),
            ls.broadcast_in_dim(m, (n - 1,), ()),
        )
        left = concatenate([np.ones(1, _BOOL), inner])
        right = concatenate([lx.bitwise_or(inner, last), np.ones(1, _BOOL)])
        live = lx.lt(i, ls.broadcast_in_dim(m, (n,), ()))
        keep = lx.bitwise_and(lx.bitwise_and(left, right), live)
    else:
        keep = np.zeros(0, _BOOL)
    size = _concrete_size(fname, keep, "values") if size is None else size
    pos, valid, count = _compact(keep, size)
    vals = _gather0(both, _gather0(order, pos)) if n else np.zeros(size, _dtype(a1))
    return _finish_sized(fname, vals, valid, count, fill_value, "first")


# ---------------------------------------------------------------------------
# lexsort
# ---------------------------------------------------------------------------


def _lexsort_keys(keys: Any) -> list[Any]:
    if isinstance(keys, (Tracer, np.ndarray)):
        stacked: Any = keys
        if not _shape(stacked):
            raise TypeError("lexsort: expected a sequence of keys with len > 0, got a 0-d array.")
        return [stacked[i] for i in range(_shape(stacked)[0])]
    if not isinstance(keys, (list, tuple)) or not keys:
        raise TypeError(f"lexsort: expected a non-empty sequence of keys, got {keys!r:.60}.")
    return [_array("lexsort", k) for k in keys]


def _np_lexsort(keys: Any, axis: Any = -1) -> Any:
    try:
        return np.lexsort(keys, axis=axis)
    except (ValueError, TypeError):  # the same check of ours, with a clearer message
        lexsort.traced(keys, axis)  # type: ignore[attr-defined]
        raise


def _lexsort_shapes(ks: list[Any]) -> tuple[int, ...]:
    shapes = {_shape(k) for k in ks}
    if len(shapes) != 1:
        raise ValueError(
            f"lexsort: expected keys of one shape, got shapes {sorted(shapes)}. "
            f"Broadcast them first."
        )
    return shapes.pop()


@numpy_path(_np_lexsort)
def lexsort(keys: Any, axis: Any = -1) -> Any:
    """int64 indices that sort by several keys along ``axis``: by the *last* key first,
    ties broken by the one before it, and so on (stable; NaNs last). ``keys`` is a
    sequence of equally shaped arrays, or an array whose first axis runs over the keys.
    Integer output: no derivative.

    >>> import functrace.numpy as fnp
    >>> fnp.lexsort([[1, 1, 0], [2, 1, 2]])
    array([1, 2, 0])
    """
    ks = _lexsort_keys(keys)
    shape = _shape(_lexsort_shapes(ks) and ks[0])
    if not shape:  # 0-d keys: one element, in place
        return np.zeros((), _INT64)[()]
    if axis is None or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"lexsort: expected an integer axis, got {axis!r}.")
    ax = normalize_axis("lexsort", axis, len(shape))
    pos = ls.iota(np.int64, shape[ax], ax, shape)
    return ls.sort_multi([*ks[::-1], pos], ax, num_keys=len(ks))[-1]


__all__ = [
    "bincount",
    "digitize",
    "histogram",
    "histogram2d",
    "histogram_bin_edges",
    "histogramdd",
    "interp",
    "intersect1d",
    "isin",
    "lexsort",
    "setdiff1d",
    "setxor1d",
    "union1d",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]
