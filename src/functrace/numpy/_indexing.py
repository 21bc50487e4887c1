"""Indexing of functrace.numpy, the reading side: ``x[idx]``, ``take``,
``take_along_axis``, ``where``, ``nonzero``, ``flatnonzero`` and ``argwhere``
(NumPy's indexing routines; the updates ``x.at[idx].set/add/...`` are in ``_at``).

NumPy's indexing semantics on tracers, lowered to lax primitives:

* basic indices (integers, slices of any step, ``None``, ``...``) become ``reshape``
  (new axes), ``rev`` (negative steps), one ``slice`` and ``squeeze`` (integer axes);
* advanced indices (integer arrays, lists, integer tracers, concrete boolean masks)
  become one ``gather`` over the indexed axes, then a ``transpose`` that puts the
  broadcast index dims where NumPy puts them: in place of the advanced indices when
  they are adjacent, first otherwise (as soon as an array index is present, integers
  count as advanced indices too, as in NumPy).

Decisions:

* Concrete indices (Python and NumPy values, and tracers whose value is known: under
  ``grad``/``vjp``/``jvp`` without ``jit``) are checked as NumPy checks them: out of
  range raises ``IndexError`` naming the index, the axis and its size.
* Abstract integer indices (under ``jit``, or batched under ``vmap``) cannot be
  checked. Negative ones wrap once, then every index is clamped into
  ``[0, size - 1]``: reads return the edge element (``.at`` updates out of range are
  skipped instead, see ``_at``). ``mode="clip"`` (``.at[idx].get``, ``take``) gives the clamping for
  concrete indices too. ``take`` and ``take_along_axis`` fill instead of clamping, as
  JAX's default ``mode="fill"``: abstract out-of-range indices read NaN (the most
  negative signed or the largest unsigned integer, or True), or ``fill_value``.
* Boolean masks need concrete values, because the result's shape depends on them.
  Under ``jit``, ``x[mask]`` raises ``ConcretizationError`` pointing to ``fnp.where``.

``functrace.Array.__getitem__`` with a traced index calls :func:`getitem` (registered
into ``functrace._array`` below).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import _array, core
from functrace.core import Tracer
from functrace.errors import ConcretizationError, NonConcreteBooleanIndexError
from functrace.lax import elementwise as lx
from functrace.lax import indexing as li
from functrace.lax import reductions as lr
from functrace.lax import shapes as ls
from functrace.numpy._core import (
    array_any,
    asarray_or_tracer,
    broadcast_shapes,
    broadcast_to_shape,
    promote_and_broadcast,
)
from functrace.numpy._dispatch import contains_tracer, is_traced, numpy_path
from functrace.numpy._math import clip, logical_and, remainder

_VALID_INDICES = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
    "boolean arrays are valid indices"
)
_MODES = (None, "clip")

# ---------------------------------------------------------------------------
# Parsing an index into a plan: one entry per axis of x (after inserting new axes)
# ---------------------------------------------------------------------------


class IndexSlice:
    """Positions ``start + k * step`` for ``k < length`` (normalized, in bounds)."""

    __slots__ = ("start", "step", "length")

    def __init__(self, start: int, step: int, length: int) -> None:
        self.start, self.step, self.length = start, step, length

    def is_full(self, dim: int) -> bool:
        # The whole axis in order: it needs no index array in a scatter.
        return self.length == dim and (dim <= 1 or self.step == 1)


class IndexInt:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


class IndexArray:
    """An advanced index: a NumPy intp array in bounds, or an (abstract) integer tracer."""

    __slots__ = ("value", "abstract")

    def __init__(self, value: Any, abstract: bool = False) -> None:
        self.value, self.abstract = value, abstract


class IndexPlan:
    __slots__ = ("shape", "entries", "inserted")

    def __init__(self, shape: tuple[int, ...], entries: list[Any], inserted: bool) -> None:
        self.shape = shape  # x's shape with the new (None) axes inserted
        self.entries = entries  # one IndexSlice / IndexInt / IndexArray per axis of that shape
        self.inserted = inserted

    @property
    def adv_axes(self) -> list[int]:
        return [k for k, e in enumerate(self.entries) if isinstance(e, IndexArray)]

    @property
    def abstract(self) -> bool:
        return any(isinstance(e, IndexArray) and e.abstract for e in self.entries)


def _static_int(fname: str, v: Any, what: str) -> int | None:
    if v is None:
        return None
    try:
        return operator.index(v)
    except ConcretizationError:
        raise ConcretizationError(
            f"{fname}: expected static slice bounds, got an abstract tracer as the {what} of "
            f"a slice. Slice sizes must be known while tracing: use "
            f"functrace.lax.dynamic_slice_in_dim(x, start, size, axis) for a window at a "
            f"traced position."
        ) from None
    except TypeError:
        raise IndexError(
            f"{fname}: expected integers or None as slice bounds, got {v!r} as the {what}. "
            f"{_VALID_INDICES}."
        ) from None


def mask_error(fname: str, mask: Tracer) -> ConcretizationError:
    return NonConcreteBooleanIndexError(
        f"{fname}: expected a boolean mask with known values, got an abstract tracer "
        f"{mask.aval.str_short()}. The result's shape depends on how many entries are True, "
        f"which is unknown under jit. Keep the shape with functrace.numpy.where(mask, x, 0) "
        f"(or x.at[mask].set(v), which lowers to where), or use "
        f"functrace.numpy.nonzero(mask, size=n) for a fixed number of positions."
    )


def classify_index(fname: str, item: Any) -> tuple[Any, ...]:
    """One index item as (kind, payload): none, ellipsis, slice, bool0, int, arr, trace, mask."""
    if item is None:
        return ("none",)
    if item is Ellipsis:
        return ("ellipsis",)
    if isinstance(item, slice):
        bounds = (
            _static_int(fname, item.start, "start"),
            _static_int(fname, item.stop, "stop"),
            _static_int(fname, item.step, "step"),
        )
        return ("slice", slice(*bounds))
    if isinstance(item, (bool, np.bool_)):
        return ("bool0", bool(item))
    if isinstance(item, (int, np.integer)):
        return ("int", int(item))
    if isinstance(item, Tracer):
        kind = item.dtype.kind
        if kind not in "biu":
            raise IndexError(
                f"{fname}: expected an integer or boolean index, got a tracer "
                f"{item.aval.str_short()}. {_VALID_INDICES}."
            )
        val = core.concrete_or_none(item)
        if val is None:
            if kind == "b":
                raise mask_error(fname, item)
            return ("trace", item)
        return classify_index(fname, val)
    if isinstance(item, (list, tuple)) and contains_tracer(item):
        return classify_index(fname, array_any(item))
    arr = np.asarray(item)
    if arr.size == 0 and arr.dtype.kind == "f" and isinstance(item, (list, tuple)):
        arr = arr.astype(np.intp)  # x[[]]: an empty integer index, as in NumPy
    if arr.dtype.kind == "b":
        return ("bool0", bool(arr)) if arr.ndim == 0 else ("mask", arr)
    if arr.dtype.kind in "iu":
        return ("int", int(arr)) if arr.ndim == 0 else ("arr", arr)
    raise IndexError(
        f"{fname}: expected an integer or boolean index, got {arr.dtype.name} "
        f"({item!r:.60}). {_VALID_INDICES}."
    )


def _out_of_bounds(fname: str, index: Any, axis: int, dim: int) -> IndexError:
    return IndexError(
        f"{fname}: index {index} is out of bounds for axis {axis} with size {dim} (expected "
        f"an index in [{-dim}, {dim})). Fix the index, or clamp it with mode='clip' "
        f"(x.at[idx].get(mode='clip'), take(..., mode='clip'))."
    )


def _check_int(fname: str, i: int, dim: int, axis: int, mode: str | None) -> int:
    if mode == "clip" and dim > 0:
        return min(max(i + dim if i < 0 else i, 0), dim - 1)
    if not -dim <= i < dim:
        raise _out_of_bounds(fname, i, axis, dim)
    return i + dim if i < 0 else i


def _check_array(fname: str, arr: np.ndarray, dim: int, axis: int, mode: str | None) -> np.ndarray:
    if arr.dtype.kind == "u":  # keep huge unsigned values out of range after the cast
        i = np.minimum(arr, np.uint64(dim)).astype(np.intp)
    else:
        i = arr.astype(np.intp)
    i = np.where(i < 0, i + dim, i)
    if mode == "clip" and dim > 0:
        return np.clip(i, 0, dim - 1)
    bad = (i < 0) | (i >= dim)
    if bad.any():
        raise _out_of_bounds(fname, arr[bad].ravel()[0], axis, dim)
    return i


def parse_index(fname: str, shape: tuple[int, ...], idx: Any, mode: str | None) -> IndexPlan:
    if mode not in _MODES:
        raise ValueError(f"{fname}: expected mode None or 'clip', got {mode!r}.")
    items = list(idx) if isinstance(idx, tuple) else [idx]
    kinds = [classify_index(fname, it) for it in items]
    n_ellipsis = sum(k[0] == "ellipsis" for k in kinds)
    if n_ellipsis > 1:
        raise IndexError(
            f"{fname}: an index can only have a single ellipsis ('...'), got {n_ellipsis}."
        )
    consumed = sum(
        k[1].ndim if k[0] == "mask" else 1
        for k in kinds
        if k[0] in ("slice", "int", "arr", "trace", "mask")
    )
    ndim = len(shape)
    if consumed > ndim:
        raise IndexError(
            f"{fname}: too many indices for array: array is {ndim}-dimensional, "
            f"but {consumed} were indexed."
        )
    fill = [("slice", slice(None))] * (ndim - consumed)
    if n_ellipsis:
        at = next(i for i, k in enumerate(kinds) if k[0] == "ellipsis")
        kinds = kinds[:at] + fill + kinds[at + 1 :]
    else:
        kinds = kinds + fill

    entries: list[Any] = []
    new_shape: list[int] = []
    inserted = False
    ax = 0  # the axis of x (as the user sees it) the next item indexes
    for kind, *payload in kinds:
        if kind in ("none", "bool0"):
            # A new axis of size 1; a 0-d boolean also indexes it with [0] (True) or [] (False).
            inserted = True
            new_shape.append(1)
            entries.append(
                IndexSlice(0, 1, 1)
                if kind == "none"
                else IndexArray(np.zeros(int(payload[0]), np.intp))
            )
            continue
        if kind == "mask":
            mask = payload[0]
            for j, m in enumerate(mask.shape):
                if m != shape[ax + j]:
                    raise IndexError(
                        f"{fname}: boolean index did not match indexed array along axis "
                        f"{ax + j}; size of axis is {shape[ax + j]} but size of corresponding "
                        f"boolean axis is {m}."
                    )
            for j, pos in enumerate(np.nonzero(mask)):
                entries.append(IndexArray(pos.astype(np.intp)))
                new_shape.append(shape[ax + j])
            ax += mask.ndim
            continue
        dim = shape[ax]
        new_shape.append(dim)
        if kind == "int":
            entries.append(IndexInt(_check_int(fname, payload[0], dim, ax, mode)))
        elif kind == "slice":
            start, stop, step = payload[0].indices(dim)
            entries.append(IndexSlice(start, step, len(range(start, stop, step))))
        elif kind == "arr":
            entries.append(IndexArray(_check_array(fname, payload[0], dim, ax, mode)))
        else:  # an abstract integer tracer: checked (clamped) by gather/scatter at run time
            entries.append(IndexArray(payload[0], abstract=True))
        ax += 1

    if any(isinstance(e, IndexArray) for e in entries):
        # With an array index present, NumPy treats integers as (0-d) advanced indices.
        entries = [
            IndexArray(np.array(e.index, np.intp)) if isinstance(e, IndexInt) else e
            for e in entries
        ]
    return IndexPlan(tuple(new_shape), entries, inserted)


def adv_layout(fname: str, plan: IndexPlan) -> tuple[list[int], tuple[int, ...], int]:
    """(advanced axes, their broadcast shape B, the output position of B's dims)."""
    adv = plan.adv_axes
    b_shape = broadcast_shapes(fname, *[core.get_aval(plan.entries[k].value).shape for k in adv])
    adjacent = adv == list(range(adv[0], adv[-1] + 1))
    # NumPy: adjacent advanced indices keep their place; separated ones go first.
    pos = sum(isinstance(e, IndexSlice) for e in plan.entries[: adv[0]]) if adjacent else 0
    return adv, b_shape, pos


def indexed_shape(fname: str, plan: IndexPlan) -> tuple[int, ...]:
    """The shape of ``x[idx]``."""
    kept = [e.length for e in plan.entries if isinstance(e, IndexSlice)]
    if not plan.adv_axes:
        return tuple(kept)
    _, b_shape, pos = adv_layout(fname, plan)
    return tuple(kept[:pos]) + b_shape + tuple(kept[pos:])


def broadcast_index(v: Any, shape: tuple[int, ...], dims: Sequence[int]) -> Any:
    """Index array ``v`` broadcast into ``shape`` (its axes land on ``dims``)."""
    if isinstance(v, Tracer):
        return ls.broadcast_in_dim(v, shape, tuple(dims))
    expanded = [1] * len(shape)
    for d, n in zip(dims, np.shape(v)):
        expanded[d] = n
    return np.broadcast_to(np.reshape(v, expanded), shape).copy()  # 0-d stays 0-d


# ---------------------------------------------------------------------------
# x[idx]
# ---------------------------------------------------------------------------


def getitem(x: Any, idx: Any, mode: str | None = None) -> Any:
    """``x[idx]`` with NumPy's semantics, traceable (``Tracer.__getitem__`` calls this).

    Args:
        x: an array or tracer.
        idx: anything NumPy accepts as an index: integers, slices, ``None``, ``...``,
            integer arrays/lists/tracers, boolean masks with known values, and tuples
            of these.
        mode: None (out-of-range concrete indices raise ``IndexError``) or ``"clip"``
            (clamp them). Abstract indices always clamp (see the module docstring).

    >>> import numpy as np
    >>> getitem(np.arange(6).reshape(2, 3), (slice(None), [2, 0]))
    array([[2, 0],
           [5, 3]])
    """
    if mode is None and not is_traced(x, idx):
        return np.asarray(x)[idx]
    x = asarray_or_tracer(x, "getitem")
    plan = parse_index("getitem", core.get_aval(x).shape, idx, mode)
    y = ls.reshape(x, plan.shape) if plan.inserted else x

    # Basic part: reverse the negative-step axes, then one strided slice, then squeeze.
    starts, limits, strides, rev_axes, int_axes = [], [], [], [], []
    for k, (e, dim) in enumerate(zip(plan.entries, plan.shape)):
        if isinstance(e, IndexSlice):
            if e.length == 0:
                start, step = 0, 1
            elif e.step > 0 or e.length == 1:
                start, step = e.start, max(e.step, 1)
            else:  # after rev, position p is dim - 1 - p
                rev_axes.append(k)
                start, step = dim - 1 - e.start, -e.step
            limit = start + (e.length - 1) * step + 1 if e.length else start
        elif isinstance(e, IndexInt):
            start, limit, step = e.index, e.index + 1, 1
            int_axes.append(k)
        else:
            start, limit, step = 0, dim, 1
        starts.append(start)
        limits.append(limit)
        strides.append(step)
    if rev_axes:
        y = ls.rev(y, tuple(rev_axes))
    y = ls.slice(
        y, tuple(starts), tuple(limits), tuple(strides) if any(s != 1 for s in strides) else None
    )
    if int_axes:
        y = ls.squeeze(y, tuple(int_axes))
    if not plan.adv_axes:
        return y

    # Advanced part: one gather (index dims first), then move them where NumPy puts them.
    adv, b_shape, pos = adv_layout("getitem", plan)
    nb = len(b_shape)
    indices = [
        broadcast_index(
            plan.entries[k].value,
            b_shape,
            range(nb - core.get_aval(plan.entries[k].value).ndim, nb),
        )
        for k in adv
    ]
    out = li.gather(y, indices, adv, "clip" if plan.abstract else "raise")
    if pos:
        n_rest = len(plan.shape) - len(adv)
        perm = (*range(nb, nb + pos), *range(nb), *range(nb + pos, nb + n_rest))
        out = ls.transpose(out, perm)
    return out


# ---------------------------------------------------------------------------
# take, take_along_axis, where, nonzero
# ---------------------------------------------------------------------------


def _check_take_mode(fname: str, mode: Any) -> None:
    if mode not in (None, "fill", "raise", "wrap", "clip"):
        raise ValueError(
            f"{fname}: expected mode None, 'fill', 'raise', 'wrap' or 'clip', got {mode!r}."
        )


def _fills(mode: Any, idx: Any) -> bool:
    """Whether out-of-range indices read the fill value: ``mode="fill"``, or the default
    mode with indices whose values are unknown (under ``jit``/``vmap``), as JAX's
    default; known out-of-range indices raise in the default mode."""
    return mode == "fill" or (mode is None and core.concrete_or_none(idx) is None)


def default_fill(dtype: np.dtype) -> Any:
    """What an out-of-range read gives by default, as JAX's mode "fill" (``take``,
    ``.at[].get(mode="fill")``): NaN, the most negative signed or the largest unsigned
    integer, True."""
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max


def _fill_value(dtype: np.dtype, fill_value: Any) -> Any:
    return np.asarray(default_fill(dtype) if fill_value is None else fill_value).astype(dtype)


def _in_range(idx: Any, dim: int) -> Any:
    """Indices ``getitem`` reads without an error: abstract ones as they are (it wraps
    and clamps them itself), known ones clamped into ``[-dim, dim)`` (no equation)."""
    known = core.concrete_or_none(idx)
    if known is None:
        return idx
    known = np.asarray(known)
    return np.clip(known, 0 if known.dtype.kind == "u" else -dim, dim - 1)


def _filled(out: Any, idx: Any, dim: int, pos: int, fill_value: Any) -> Any:
    """``out`` (indexed by ``idx`` along an axis of size ``dim``; ``idx``'s axes are
    ``out``'s from ``pos``) with the fill value where an index is out of ``[-dim, dim)``."""
    unsigned = core.get_aval(idx).dtype.kind == "u"
    valid = idx < dim if unsigned else logical_and(idx >= -dim, idx < dim)
    fill = _fill_value(core.get_aval(out).dtype, fill_value)
    nd_idx, nd_out = core.get_aval(valid).ndim, core.get_aval(out).ndim
    if nd_idx == 0:  # one index: a 0-d predicate, nothing to broadcast
        return lx.select_n(valid, lx.full_like(out, fill), out)
    valid = ls.reshape(
        valid, (1,) * pos + core.get_aval(valid).shape + (1,) * (nd_out - pos - nd_idx)
    )
    return where(valid, out, fill)


def _traced(f: Any) -> Any:
    """The traced function a ``numpy_path`` wraps (it also runs on plain arrays)."""
    return f.__wrapped__


def _np_take(
    a: Any,
    indices: Any,
    axis: int | None = None,
    mode: str | None = None,
    fill_value: Any = None,
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
) -> Any:
    _check_take_mode("take", mode)
    if mode == "fill":
        return _traced(take)(a, indices, axis, mode, fill_value)
    return np.take(a, indices, axis=axis, mode=mode or "raise")  # type: ignore[call-overload]


@numpy_path(_np_take)
def take(
    a: Any,
    indices: Any,
    axis: int | None = None,
    mode: str | None = None,
    fill_value: Any = None,
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
) -> Any:
    """NumPy's ``take``: elements of ``a`` at ``indices`` along ``axis`` (flattened if None).

    ``mode``: None (out-of-range indices whose values are known raise, as NumPy's
    default; under ``jit``/``vmap`` they read the fill value, as JAX's default
    ``"fill"``), ``"fill"`` (out-of-range indices, outside ``[-size, size)``, read
    ``fill_value``: by default NaN, the most negative signed or the largest unsigned
    integer, or True), ``"raise"`` (NumPy's), ``"wrap"`` (indices modulo the size) or
    ``"clip"`` (clamped into ``[0, size - 1]``; as in NumPy, negative indices clip to 0
    rather than wrap). JAX's hints ``unique_indices``/``indices_are_sorted`` are
    accepted and change nothing.

    >>> import functrace.numpy as fnp
    >>> fnp.take([[1, 2], [3, 4]], [1, 0], axis=1)
    array([[2, 1],
           [4, 3]])
    """
    _check_take_mode("take", mode)
    a = asarray_or_tracer(a, "take")
    if axis is None:
        a = ls.reshape(a, (core.get_aval(a).size,))
        axis = 0
    shape = core.get_aval(a).shape
    axis = operator.index(axis)
    if not -len(shape) <= axis < len(shape):
        raise ValueError(
            f"take: expected axis in [{-len(shape)}, {len(shape)}) for an array of "
            f"{len(shape)} dimensions, got {axis}."
        )
    axis %= len(shape)
    dim = shape[axis]
    idx = asarray_or_tracer(indices, "take")
    fills = _fills(mode, idx)
    if (fills or mode in ("wrap", "clip")) and dim > 0:
        if fills:  # read at a valid position, then fill where the index was out of range
            at = _in_range(idx, dim)
        elif isinstance(idx, Tracer):
            at = remainder(idx, dim) if mode == "wrap" else clip(idx, 0, dim - 1)
        else:
            at = np.mod(idx, dim) if mode == "wrap" else np.clip(idx, 0, dim - 1)
        out = getitem(a, (slice(None),) * axis + (at,))
        return _filled(out, idx, dim, axis, fill_value) if fills else out
    return getitem(a, (slice(None),) * axis + (idx,))


def _np_take_along_axis(
    arr: Any, indices: Any, axis: int | None, mode: str | None = None, fill_value: Any = None
) -> Any:
    _check_take_mode("take_along_axis", mode)
    if mode is not None:
        return _traced(take_along_axis)(arr, indices, axis, mode, fill_value)
    return np.take_along_axis(np.asarray(arr), np.asarray(indices), axis)


@numpy_path(_np_take_along_axis)
def take_along_axis(
    arr: Any, indices: Any, axis: int | None, mode: str | None = None, fill_value: Any = None
) -> Any:
    """NumPy's ``take_along_axis``: ``arr`` indexed by ``indices`` along ``axis``, matched
    (broadcast) along the other axes; ``axis=None`` works on the flattened array.
    ``mode`` and ``fill_value`` as in :func:`take` (JAX's), except that ``"clip"``
    counts negative indices from the end before clamping (as JAX's take_along_axis).

    >>> import numpy as np
    >>> import functrace.numpy as fnp
    >>> x = np.array([[3.0, 1.0], [0.0, 2.0]])
    >>> fnp.take_along_axis(x, np.argsort(x, axis=1), axis=1)
    array([[1., 3.],
           [0., 2.]])
    """
    _check_take_mode("take_along_axis", mode)
    arr = asarray_or_tracer(arr, "take_along_axis")
    idx = asarray_or_tracer(indices, "take_along_axis")
    idx_aval = core.get_aval(idx)
    if idx_aval.dtype.kind not in "iu":
        raise IndexError(
            f"take_along_axis: expected an integer index array, got {idx_aval.dtype.name}."
        )
    if axis is None:
        arr = ls.reshape(arr, (core.get_aval(arr).size,))
        axis = 0
    shape = core.get_aval(arr).shape
    if idx_aval.ndim != len(shape):
        raise ValueError(
            f"take_along_axis: expected `indices` with as many dimensions as "
            f"`arr` ({len(shape)}), got {idx_aval.ndim}."
        )
    axis = operator.index(axis)
    if not -len(shape) <= axis < len(shape):
        raise ValueError(
            f"take_along_axis: expected axis in [{-len(shape)}, {len(shape)}), got {axis}."
        )
    axis %= len(shape)
    nd, dim = len(shape), shape[axis]
    fills = _fills(mode, idx) and dim > 0
    at = idx
    if fills:
        at = _in_range(idx, dim)
    elif mode in ("wrap", "clip") and dim > 0:
        if mode == "wrap":
            at = remainder(idx, dim)
        else:  # negative indices count from the end first, then clamp (JAX's clip here)
            at = clip(where(idx < 0, idx + dim, idx), 0, dim - 1)
    full = tuple(
        at if d == axis else np.arange(n).reshape((1,) * d + (n,) + (1,) * (nd - d - 1))
        for d, n in enumerate(shape)
    )
    out = getitem(arr, full)
    return _filled(out, idx, dim, 0, fill_value) if fills else out


def _where_args(x: Any, y: Any) -> int:
    """1 for ``where(condition)`` (``nonzero``), 3 for ``where(condition, x, y)``."""
    if (x is None) != (y is None):
        raise TypeError("where: expected either one argument or three, got two.")
    return 1 if x is None else 3


def _where_args_sized(x: Any, y: Any, size: Any, fill_value: Any) -> int:
    n = _where_args(x, y)
    if n == 3 and (size is not None or fill_value is not None):
        raise ValueError(
            "where: expected size and fill_value only with the one-argument form "
            "where(condition, size=..., fill_value=...) (nonzero's), got them with x and y."
        )
    return n


def _np_where(
    condition: Any,
    x: Any = None,
    y: Any = None,
    /,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    if _where_args_sized(x, y, size, fill_value) == 1:
        return _np_nonzero(condition, size=size, fill_value=fill_value)
    return np.where(condition, x, y)


@numpy_path(_np_where, promotes=True)
def where(
    condition: Any,
    x: Any = None,
    y: Any = None,
    /,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    """``x`` where ``condition`` else ``y``, elementwise with broadcasting.

    ``where(condition)`` is ``nonzero(condition)``, and takes its ``size`` and
    ``fill_value`` (JAX's signature; under ``jit`` the one-argument form needs ``size``);
    with ``x`` and ``y`` they are a ValueError, as in JAX.

    Both branches are computed. The gradient flows only into the selected branch,
    but a NaN or inf *computed* in the other branch still poisons the gradient
    (0 * inf = nan), as in JAX. The safe pattern is a double ``where``: make the
    input of the dangerous branch harmless first::

        safe_x = fnp.where(x > 0, x, 1.0)
        y = fnp.where(x > 0, fnp.log(safe_x), 0.0)

    >>> import functrace.numpy as fnp
    >>> fnp.where([True, False], 1.0, 2.0)
    array([1., 2.])
    """
    if _where_args_sized(x, y, size, fill_value) == 1:
        return nonzero(condition, size=size, fill_value=fill_value)
    c = asarray_or_tracer(condition, "where")
    (x, y), _ = promote_and_broadcast(
        "where", np.add, [asarray_or_tracer(x, "where"), asarray_or_tracer(y, "where")]
    )
    c = c if core.get_aval(c).dtype == np.bool_ else lx.ne(c, lx.zeros_like(c))
    shape = broadcast_shapes("where", core.get_aval(c).shape, core.get_aval(x).shape)
    return lx.select_n(
        broadcast_to_shape(c, shape), broadcast_to_shape(y, shape), broadcast_to_shape(x, shape)
    )


def _concrete(fname: str, a: Any, hint: str) -> np.ndarray:
    val = core.concrete_or_none(a)
    if val is None:
        raise ConcretizationError(
            f"{fname}: expected an array with known values, got an abstract tracer "
            f"{a.aval.str_short()}. The result's shape depends on the values, which are "
            f"unknown under jit. {hint}"
        )
    return val


def _np_nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    return np.nonzero(a) if size is None else _nonzero_size(a, size, fill_value)


@numpy_path(_np_nonzero)
def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """Indices of the non-zero entries of ``a``, one integer array per axis (NumPy's).

    Under ``jit`` the number of entries is unknown, so pass ``size``: the first
    ``size`` positions are returned, padded with ``fill_value`` (default 0) — JAX's
    signature. ``fill_value`` may be a scalar or one scalar per axis.

    >>> import functrace.numpy as fnp
    >>> fnp.nonzero([0, 3, 0, 5])
    (array([1, 3]),)
    >>> fnp.nonzero([0, 3, 0, 5], size=3, fill_value=-1)
    (array([ 1,  3, -1]),)
    """
    if size is None:
        return np.nonzero(
            _concrete(
                "nonzero",
                a,
                "Pass size=n for a fixed number of positions "
                "(nonzero(a, size=n, fill_value=...)), or use "
                "functrace.numpy.where(cond, x, y).",
            )
        )
    return _nonzero_size(a, size, fill_value)


def _nonzero_size(a: Any, size: Any, fill_value: Any) -> tuple[Any, ...]:
    """``nonzero(a, size=size, fill_value=fill_value)``."""
    size = operator.index(size)
    a = asarray_or_tracer(a, "nonzero")
    aval = core.get_aval(a)
    if aval.ndim == 0:
        raise ValueError(
            "nonzero: expected an array with at least one axis, got a 0-d array. "
            "Use atleast_1d(a) first."
        )
    fills = (fill_value,) * aval.ndim if np.ndim(fill_value) == 0 else tuple(fill_value)
    fills = tuple(0 if f is None else f for f in fills)
    if len(fills) != aval.ndim:
        raise ValueError(
            f"nonzero: expected one fill_value per axis ({aval.ndim}), got {len(fills)}."
        )
    val = core.concrete_or_none(a)
    if val is not None:
        out = []
        for pos, f in zip(np.nonzero(val), fills):
            pos = pos[:size]
            out.append(np.concatenate([pos, np.full(size - len(pos), f, pos.dtype)]))
        return tuple(out)
    return _nonzero_sized(a, size, fills)


def _nonzero_sized(a: Any, size: int, fills: tuple[Any, ...]) -> tuple[Any, ...]:
    # Stable argsort of "is zero" lists the non-zero flat positions first, in order.
    aval = core.get_aval(a)
    n = aval.size
    flat = ls.reshape(a, (n,))
    is_zero = lx.convert_element_type(lx.eq(flat, lx.zeros_like(flat)), np.int64)
    order = ls.argsort(is_zero)
    count = n - lr.reduce_sum(is_zero, (0,))
    k = min(size, n)
    first = ls.slice(order, (0,), (k,))
    if size > k:
        first = ls.concatenate([first, broadcast_to_shape(np.int64(0), (size - k,))], 0)
    valid = lx.lt(ls.iota(np.int64, size), broadcast_to_shape(count, (size,)))
    out = []
    stride = n
    for dim, f in zip(aval.shape, fills):
        stride //= dim
        coord = lx.rem(lx.div(first, lx.full_like(first, stride)), lx.full_like(first, dim))
        out.append(lx.select_n(valid, lx.full_like(coord, f), coord))
    return tuple(out)


def _np_flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    if size is None:
        return np.flatnonzero(a)
    return _nonzero_size(np.ravel(a), size, fill_value)[0]


@numpy_path(_np_flatnonzero)
def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the non-zero entries of the flattened ``a``: concrete values only, or
    ``size`` of them padded with ``fill_value`` (``nonzero(ravel(a), size=...)[0]``, JAX's
    signature).

    >>> import functrace.numpy as fnp
    >>> fnp.flatnonzero([[0, 1], [2, 0]], size=3, fill_value=-1)
    array([ 1,  2, -1])
    """
    if size is None:
        return np.flatnonzero(
            _concrete("flatnonzero", a, "Pass size=n (flatnonzero(a, size=n, fill_value=...)).")
        )
    a = asarray_or_tracer(a, "flatnonzero")
    return _nonzero_size(ls.reshape(a, (core.get_aval(a).size,)), size, fill_value)[0]


def _np_argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    if size is None:
        return np.argwhere(a)
    a = np.asarray(a)
    if a.ndim == 0:  # JAX's: size rows of no coordinates
        return np.zeros((operator.index(size), 0), np.int64)
    return np.stack(_nonzero_size(a, size, fill_value), axis=1)


@numpy_path(_np_argwhere)
def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """``(N, a.ndim)`` indices of the non-zero entries of ``a``: concrete values only, or
    ``N = size`` rows padded with ``fill_value`` (JAX's signature; columns of
    ``nonzero(a, size=..., fill_value=...)``).

    >>> import functrace.numpy as fnp
    >>> fnp.argwhere([[0, 1], [2, 0]], size=3, fill_value=-1).tolist()
    [[0, 1], [1, 0], [-1, -1]]
    """
    if size is None:
        return np.argwhere(
            _concrete("argwhere", a, "Use argwhere(a, size=n) or nonzero(a, size=n).")
        )
    a = asarray_or_tracer(a, "argwhere")
    if core.get_aval(a).ndim == 0:  # JAX's: size rows of no coordinates
        return np.zeros((operator.index(size), 0), np.int64)
    cols = _nonzero_size(a, size, fill_value)
    return ls.concatenate([ls.reshape(c, (operator.index(size), 1)) for c in cols], 1)


_array.register_traced_getitem(getitem)

__all__ = ["argwhere", "flatnonzero", "nonzero", "take", "take_along_axis", "where"]
