"""Indexing of functrace.numpy, the writing side: ``x.at[idx].set/add/mul/min/max/get``
(JAX's functional updates; ``fnp.at(x)`` is the same API as a function).

``x.at[idx].op(v)`` becomes ``dynamic_update_slice`` when ``idx`` selects a window
(integers and unit-step slices), else a scatter (``scatter``, ``scatter_add``,
``scatter_mul``, ``scatter_min``, ``scatter_max``) whose index arrays enumerate every
indexed position. The index is parsed as for reads (``_indexing``).

Decisions:

* Updates at indices out of range (outside ``[-size, size)``) are skipped by default,
  as JAX's ``.at`` does, eagerly, under ``grad``, ``jit`` and ``vmap``: a known index
  out of range redoes the update in mode ``"drop"``; an abstract one (under ``jit``,
  or batched under ``vmap``) is clamped and its update made neutral
  (``_dropping_scatter``). Reads (``.at[idx].get()``) follow ``x[idx]``: a known
  index out of range raises, an abstract one is clamped. ``mode="clip"`` (and JAX's
  ``"promise_in_bounds"``) clamps reads and updates; ``"fill"``/``"drop"`` give
  ``fill_value`` for reads out of range and skip updates, with the same results
  eagerly, under ``jit`` and ``vmap``.
* ``x.at[mask].set(v)`` (and add/mul/min/max) with an abstract boolean mask and ``v``
  broadcastable to the unmasked dims is lowered to a ``select_n`` and works under
  ``jit``.
* ``.at`` updates return a new array (nothing is mutated), cast ``v`` to ``x``'s dtype
  as JAX does, and broadcast it to the shape of ``x[idx]``. With repeated indices
  ``set`` keeps the last write (NumPy assignment); ``add``/``mul``/``min``/``max``
  combine every update (``numpy.ufunc.at``), and ``grad`` accumulates cotangents of
  repeated reads (``gather`` transposes to ``scatter_add``).
* Plain NumPy arrays have no ``.at`` (``functrace.Array``s and tracers do):
  ``fnp.at(x)[idx].set(v)`` is the same API as a function and works on arrays and
  tracers alike (eagerly it is a copy plus NumPy assignment or ``ufunc.at``).

``functrace.Array.at`` is :func:`at` (registered into ``functrace._array`` below).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace import _array, core
from functrace._array import Array, _wrap
from functrace.core import Tracer
from functrace.lax import elementwise as lx
from functrace.lax import indexing as li
from functrace.lax import reductions as lr
from functrace.lax import shapes as ls
from functrace.lax.control_flow import fori_loop
from functrace.numpy._core import asarray_or_tracer, broadcast_to_shape
from functrace.numpy._creation import ones_like as _ones_like
from functrace.numpy._dispatch import is_traced
from functrace.numpy._indexing import (
    IndexArray,
    IndexInt,
    IndexPlan,
    IndexSlice,
    adv_layout,
    broadcast_index,
    classify_index,
    default_fill,
    getitem,
    indexed_shape,
    mask_error,
    parse_index,
    where,
)
from functrace.numpy._math import negative, power, true_divide
from functrace.numpy._pad import pad

_UFUNCS: dict[str, np.ufunc] = {
    "add": np.add,
    "mul": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
}
_SCATTERS: dict[str, Callable[..., Any]] = {
    "set": li.scatter,
    "add": li.scatter_add,
    "mul": li.scatter_mul,
    "min": li.scatter_min,
    "max": li.scatter_max,
}


def _combine(op: str, old: Any, new: Any) -> Any:
    """The elementwise update of ``old`` by ``new`` (equal shapes and dtypes)."""
    if op == "set":
        return new
    if core.get_aval(old).dtype == np.bool_:  # NumPy's ufuncs on bools: add = or, mul = and
        return (lx.bitwise_or if op in ("add", "max") else lx.bitwise_and)(old, new)
    return {"add": lx.add, "mul": lx.mul, "min": lx.min, "max": lx.max}[op](old, new)


def _cast_values(v: Any, dtype: np.dtype, fname: str) -> Any:
    v = asarray_or_tracer(v, fname)
    if isinstance(v, Tracer):
        return lx.convert_element_type(v, dtype) if v.dtype != dtype else v
    return np.asarray(v).astype(dtype)


def _broadcast_values(fname: str, v: Any, shape: tuple[int, ...]) -> Any:
    """``v`` broadcast to ``shape`` (extra leading size-1 axes of ``v`` are dropped)."""
    vshape = core.get_aval(v).shape
    extra = len(vshape) - len(shape)
    if extra > 0 and all(d == 1 for d in vshape[:extra]):
        vshape = vshape[extra:]
        v = ls.reshape(v, vshape)
    try:
        ok = extra <= 0 and np.broadcast_shapes(vshape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"{fname}: expected values broadcastable to the indexed shape "
            f"{shape}, got shape {core.get_aval(v).shape}. Reshape the values "
            f"or change the index."
        )
    return broadcast_to_shape(v, shape)


def _numpy_update(op: str, x: Any, idx: Any, v: Any) -> np.ndarray:
    out = np.array(x, copy=True)
    vals = np.asarray(v).astype(out.dtype)
    if op == "set":
        out[idx] = vals
    else:
        _UFUNCS[op].at(out, idx, vals)
    return out


def _abstract_mask(idx: Any) -> Tracer | None:
    item = idx[0] if isinstance(idx, tuple) and len(idx) == 1 else idx
    if (
        isinstance(item, Tracer)
        and item.dtype == np.bool_
        and item.ndim > 0
        and core.concrete_or_none(item) is None
    ):
        return item
    return None


def _masked_update(fname: str, op: str, x: Any, mask: Tracer, v: Any) -> Any:
    # x.at[mask].op(v) with unknown mask values: where(mask, op(x, v), x). The values must
    # not depend on how many entries are selected, so v broadcasts over the unmasked dims.
    shape = core.get_aval(x).shape
    if mask.shape != shape[: mask.ndim]:
        raise IndexError(
            f"{fname}: expected a boolean mask of shape {shape[: mask.ndim]} (the "
            f"leading dims of {shape}), got {mask.aval.str_short()}."
        )
    rest = shape[mask.ndim :]
    vshape = core.get_aval(v).shape
    extra = len(vshape) - len(rest)
    if extra > 0:
        if any(d != 1 for d in vshape[:extra]):
            raise mask_error(fname, mask)
        v = ls.reshape(v, vshape[extra:])
    try:
        v = _broadcast_values(fname, v, rest)
    except ValueError:
        raise mask_error(fname, mask) from None
    v = broadcast_to_shape(v, shape)
    m = ls.broadcast_in_dim(mask, shape, tuple(range(mask.ndim)))
    return lx.select_n(m, x, _combine(op, x, v))


def _window_update(fname: str, op: str, y: Any, plan: IndexPlan, v: Any) -> Any:
    # Integers and unit-step slices select one window: read-modify-write it with dus.
    starts = [
        e.index if isinstance(e, IndexInt) else e.start if e.length else 0 for e in plan.entries
    ]
    sizes = [1 if isinstance(e, IndexInt) else e.length for e in plan.entries]
    v = _broadcast_values(fname, v, indexed_shape(fname, plan))
    if 0 in sizes:
        return y
    v = ls.reshape(v, tuple(sizes))
    old = (
        None
        if op == "set"
        else ls.slice(y, tuple(starts), tuple(s + n for s, n in zip(starts, sizes)))
    )
    # the plan's starts are in range already: the primitive as is (no wrapping again)
    ops = [st if isinstance(st, Tracer) else np.asarray(st) for st in starts]
    return li.dynamic_update_slice_p.bind(y, _combine(op, old, v), *ops)


def _scatter_update(fname: str, op: str, y: Any, plan: IndexPlan, v: Any, drop: bool) -> Any:
    # Every axis that is not a whole in-order slice gets an index array over the grid G of
    # the non-whole output dims; the whole slices are the scatter's trailing dims.
    entries: list[Any] = [
        IndexArray(np.array(e.index, np.intp)) if isinstance(e, IndexInt) else e
        for e in plan.entries
    ]
    plan = IndexPlan(plan.shape, entries, plan.inserted)
    v = _broadcast_values(fname, v, indexed_shape(fname, plan))
    # Output dims in NumPy's order, each labeled by the axis it comes from (-1: index dims).
    slice_axes = [k for k, e in enumerate(entries) if isinstance(e, IndexSlice)]
    b_shape: tuple[int, ...] = ()
    pos = 0
    if plan.adv_axes:
        _, b_shape, pos = adv_layout(fname, plan)
    labels = slice_axes[:pos] + [-1] * len(b_shape) + slice_axes[pos:]
    whole = [lab >= 0 and entries[lab].is_full(plan.shape[lab]) for lab in labels]
    grid_dims = [i for i, w in enumerate(whole) if not w]
    grid = tuple(core.get_aval(v).shape[i] for i in grid_dims)
    if 0 in grid:
        return y
    updates = ls.transpose(v, (*grid_dims, *[i for i, w in enumerate(whole) if w]))
    b_start = next((g for g, i in enumerate(grid_dims) if labels[i] == -1), 0)
    axes, indices = [], []
    for k, e in enumerate(entries):
        if isinstance(e, IndexArray):
            nd = core.get_aval(e.value).ndim
            dims = range(b_start + len(b_shape) - nd, b_start + len(b_shape))
            indices.append(broadcast_index(e.value, grid, dims))
        elif not e.is_full(plan.shape[k]):
            positions = e.start + e.step * np.arange(e.length, dtype=np.intp)
            g = next(g for g, i in enumerate(grid_dims) if labels[i] == k)
            indices.append(broadcast_index(positions, grid, (g,)))
        else:
            continue
        axes.append(k)
    if not plan.abstract:
        return _SCATTERS[op](y, updates, indices, axes, "raise")
    if drop:
        ok = None
        for k, e, i in zip(axes, [entries[k] for k in axes], indices):
            if isinstance(e, IndexArray) and e.abstract:
                dim = plan.shape[k]
                inside = i < dim if core.get_aval(i).dtype.kind == "u" else (i >= -dim) & (i < dim)
                ok = inside if ok is None else ok & inside
        if ok is not None:
            return _dropping_scatter(op, y, updates, indices, tuple(axes), ok)
    return _SCATTERS[op](y, updates, indices, axes, "clip")


def _neutral(op: str, dtype: np.dtype) -> Any:
    """The value an update by ``op`` leaves every element unchanged with."""
    if op == "add":
        return np.array(0, dtype)
    if op == "mul":
        return np.array(1, dtype)
    if dtype.kind == "b":
        return np.array(op == "min")
    if dtype.kind == "f":
        return np.array(np.inf if op == "min" else -np.inf, dtype)
    info = np.iinfo(dtype)
    return np.array(info.max if op == "min" else info.min, dtype)


def _dropping_scatter(
    op: str, y: Any, updates: Any, indices: list[Any], axes: tuple[int, ...], ok: Any
) -> Any:
    """``scatter`` that skips the updates whose ``ok`` (index shape) is False, as JAX's
    ``.at`` does with out-of-range indices: their clamped positions get a neutral update
    (add 0, multiply by 1, min with +inf...); ``set`` keeps, at each position, the last
    update whose index is in range (a board of update ids says which)."""
    u_aval = core.get_aval(updates)
    grid = core.get_aval(ok).shape
    ok_u = ls.broadcast_in_dim(ok, u_aval.shape, tuple(range(len(grid))))
    scatter = _SCATTERS[op]
    if op != "set":
        neutral = ls.broadcast_in_dim(_neutral(op, u_aval.dtype), u_aval.shape, ())
        return scatter(y, lx.select_n(ok_u, neutral, updates), indices, axes, "clip")
    shape = core.get_aval(y).shape
    if math.prod(grid) == 1:  # one update: write back what is there when it is dropped
        here = li.gather(y, indices, axes, "clip")
        return scatter(y, lx.select_n(ok_u, here, updates), indices, axes, "clip")
    k = len(axes)
    ids = np.arange(math.prod(grid), dtype=np.int64).reshape(grid)
    none = ls.broadcast_in_dim(np.array(-1, np.int64), grid, ())
    board = ls.broadcast_in_dim(np.array(-1, np.int64), tuple(shape[a] for a in axes), ())
    board = li.scatter_max(board, lx.select_n(ok, none, ids), indices, range(k), "clip")
    last = ok & lx.eq(li.gather(board, indices, range(k), "clip"), ids)
    hit = ls.broadcast_in_dim(board >= 0, shape, axes)
    # -0.0 + v is v for every v (its sign of zero too): the written positions start there
    minus0 = np.array(complex(-0.0, -0.0) if u_aval.dtype.kind == "c" else -0.0)
    base = ls.broadcast_in_dim(minus0.astype(u_aval.dtype), shape, ())
    zero = ls.broadcast_in_dim(minus0.astype(u_aval.dtype), u_aval.shape, ())
    last_u = ls.broadcast_in_dim(last, u_aval.shape, tuple(range(len(grid))))
    return li.scatter_add(
        lx.select_n(hit, y, base), lx.select_n(last_u, zero, updates), indices, axes, "clip"
    )


def _update(op: str, x: Any, idx: Any, v: Any, mode: str | None) -> Any:
    fname = f"at[].{op}"
    if mode is None and not is_traced(x, v, idx):
        return _numpy_update(op, x, idx, v)
    x = asarray_or_tracer(x, fname)
    aval = core.get_aval(x)
    v = _cast_values(v, aval.dtype, fname)
    mask = _abstract_mask(idx)
    if mask is not None:
        return _masked_update(fname, op, x, mask, v)
    plan = parse_index(fname, aval.shape, idx, mode)
    y = ls.reshape(x, plan.shape) if plan.inserted else x
    window = not plan.adv_axes and all(
        isinstance(e, IndexInt) or e.step == 1 or e.length <= 1 for e in plan.entries
    )
    if window:
        out = _window_update(fname, op, y, plan, v)
    else:
        out = _scatter_update(fname, op, y, plan, v, drop=mode is None)
    return ls.reshape(out, aval.shape) if plan.inserted else out


def _check_hints(method: str, hints: dict[str, bool]) -> None:
    """JAX's ``indices_are_sorted``/``unique_indices`` hints are accepted (and have no
    effect: every index is handled as if unsorted and repeated); anything else is a
    TypeError naming the method."""
    unknown = sorted(set(hints) - {"indices_are_sorted", "unique_indices"})
    if unknown:
        raise TypeError(
            f".at[].{method}: expected the keyword arguments mode, indices_are_sorted or "
            f"unique_indices, got {', '.join(unknown)}."
        )


class AtUpdater:
    """``x.at[idx]``: functional reads and updates at ``idx`` (JAX's ``.at`` API).

    Every method returns a new array; ``x`` is never modified. ``values`` are cast to
    ``x``'s dtype and broadcast to the shape of ``x[idx]``. ``mode="clip"`` clamps
    out-of-range indices instead of raising. JAX's hints ``indices_are_sorted`` and
    ``unique_indices`` are accepted by every method and change nothing.

    >>> import numpy as np
    >>> import functrace.numpy as fnp
    >>> fnp.at(np.zeros(3))[[0, 0, 2]].add(1.0)
    array([2., 0., 1.])
    """

    __slots__ = ("x", "idx")

    def __init__(self, x: Any, idx: Any) -> None:
        self.x = x
        self.idx = idx

    def __repr__(self) -> str:
        return f"AtUpdater(idx={self.idx!r})"

    def get(self, *, mode: str | None = None, fill_value: Any = None, **hints: bool) -> Any:
        """``x[idx]``; out-of-range positions give ``fill_value`` with ``mode="fill"``
        (or ``"drop"``)."""
        _check_hints("get", hints)
        return _at_result(self.x, _moded("get", self.x, self.idx, None, mode, fill_value))

    def set(self, values: Any, *, mode: str | None = None, **hints: bool) -> Any:
        """``x`` with ``x[idx] = values`` (with repeated indices the last write wins)."""
        _check_hints("set", hints)
        return _at_result(self.x, _moded("set", self.x, self.idx, values, mode))

    def add(self, values: Any, *, mode: str | None = None, **hints: bool) -> Any:
        """``x`` with ``x[idx] += values`` (repeated indices all add up)."""
        _check_hints("add", hints)
        return _at_result(self.x, _moded("add", self.x, self.idx, values, mode))

    def subtract(self, values: Any, *, mode: str | None = None, **hints: bool) -> Any:
        """``x`` with ``x[idx] -= values``."""
        _check_hints("subtract", hints)
        return _at_result(self.x, _moded("add", self.x, self.idx, negative(values), mode))

    def mul(self, values: Any, *, mode: str | None = None, **hints: bool) -> Any:
        """``x`` with ``x[idx] *= values`` (repeated indices all multiply)."""
        _check_hints("mul", hints)
        return _at_result(self.x, _moded("mul", self.x, self.idx, values, mode))

    multiply = mul

    def min(self, values: Any, *, mode: str | None = None, **hints: bool) -> Any:  # noqa: A003
        """``x`` with ``x[idx] = minimum(x[idx], values)``.

        NOTE: at ties the gradient goes to ``x``'s entry.
        """
        _check_hints("min", hints)
        return _at_result(self.x, _moded("min", self.x, self.idx, values, mode))

    def max(self, values: Any, *, mode: str | None = None, **hints: bool) -> Any:  # noqa: A003
        """``x`` with ``x[idx] = maximum(x[idx], values)``.

        NOTE: at ties the gradient goes to ``x``'s entry.
        """
        _check_hints("max", hints)
        return _at_result(self.x, _moded("max", self.x, self.idx, values, mode))

    def divide(self, values: Any, *, mode: str | None = None, **hints: bool) -> Any:
        """``x`` with ``x[idx] /= values`` (a true division, as JAX: integer ``x`` gives
        floats; repeated indices divide repeatedly)."""
        _check_hints("divide", hints)
        factors = _moded("mul", _ones_like(self.x), self.idx, values, mode)
        return _at_result(self.x, true_divide(self.x, factors))

    def power(self, values: Any, *, mode: str | None = None, **hints: bool) -> Any:
        """``x`` with ``x[idx] **= values`` (repeated indices multiply their exponents)."""
        _check_hints("power", hints)
        exponents = _moded("mul", _ones_like(self.x), self.idx, values, mode)
        return _at_result(self.x, power(self.x, exponents))

    def apply(self, func: Callable[[Any], Any], *, mode: str | None = None, **hints: bool) -> Any:
        """``x`` with ``func`` applied at ``idx``, once per occurrence of an index (so twice
        where an index repeats, unlike ``set(func(x[idx]))``). ``func`` maps arrays
        elementwise (``fnp.sin``, ``lambda v: v + 1``)."""
        _check_hints("apply", hints)
        x = asarray_or_tracer(self.x, ".at[].apply")
        counts = _moded("add", np.zeros(core.get_aval(x).shape, np.int64), self.idx, 1, mode)

        def step(k: Any, y: Any) -> Any:
            return where(counts > k, func(y), y)

        if not is_traced(x, counts):
            y = x
            for k in range(int(np.max(counts, initial=0))):
                y = step(k, y)
            return _at_result(self.x, y)
        bound = lr.reduce_max(counts, tuple(range(len(core.get_aval(counts).shape))))
        return fori_loop(0, bound, step, x)


_AT_MODES = (None, "clip", "promise_in_bounds", "fill", "drop")


def _at_result(x: Any, out: Any) -> Any:
    """``.at`` on a concrete ``functrace.Array`` returns an ``Array``."""
    return _wrap(out) if type(x) is Array else out


def _moded(op: str, x: Any, idx: Any, values: Any, mode: str | None, fill_value: Any = None) -> Any:
    """``x.at[idx].<op>`` with one of JAX's modes. ``None``: in-range indices (eagerly
    checked, clamped when traced); ``"clip"``/``"promise_in_bounds"``: clamped;
    ``"fill"``/``"drop"``: out-of-range reads give ``fill_value``, out-of-range updates
    are skipped. Out-of-range means outside ``[-n, n)``: negatives wrap once."""
    fname = f".at[].{op}"
    if mode not in _AT_MODES:
        raise ValueError(
            f"{fname}: expected mode None, 'clip', 'promise_in_bounds', 'fill' or 'drop', "
            f"got {mode!r}."
        )
    if fill_value is not None and mode not in ("fill", "drop"):
        raise ValueError(f"{fname}: fill_value needs mode='fill', got mode={mode!r}.")
    if op == "get" and mode in (None, "clip", "promise_in_bounds"):
        return getitem(x, idx, None if mode is None else "clip")
    if mode in ("clip", "promise_in_bounds"):
        return _update(op, x, idx, values, "clip")
    if mode is None:
        # Updates at indices out of range are dropped, as in JAX: abstract indices are
        # handled in the scatter (_dropping_scatter); concrete ones raise IndexError when
        # checked, and the update is redone with mode "drop".
        try:
            return _update(op, x, idx, values, None)
        except IndexError:
            mode = "drop"
    x = asarray_or_tracer(x, fname)
    aval = core.get_aval(x)
    if op == "get":
        return _filled_get(fname, x, idx, fill_value)
    xp, idx2, padded = _pad_out_of_range(fname, x, idx, 0)
    out = _update(op, xp, idx2, values, "clip")
    if not padded:
        return out
    return getitem(out, tuple(slice(0, d) for d in aval.shape))


def _integer_items(
    fname: str, shape: tuple[int, ...], idx: Any
) -> list[tuple[Any, tuple[Any, Any, int, int] | None]] | None:
    """Each item of ``idx`` with ``(ok, wrapped, axis, dim)`` for an integer index
    (Python, NumPy or traced) along ``axis`` of size ``dim``: whether it is in range
    (outside ``[-dim, dim)`` is out of range) and its value with negatives wrapped
    once; ``None`` for other items. ``None`` in all when ``idx`` indexes more axes than
    ``shape`` has (the indexing reports that)."""
    items = list(idx) if isinstance(idx, tuple) else [idx]
    kinds = [classify_index(fname, it) for it in items]
    consumed = sum(
        k[1].ndim if k[0] == "mask" else 1
        for k in kinds
        if k[0] in ("slice", "int", "arr", "trace", "mask")
    )
    out: list[tuple[Any, tuple[Any, Any, int, int] | None]] = []
    ax = 0
    for item, (kind, *payload) in zip(items, kinds):
        info = None
        if kind == "ellipsis":
            ax += len(shape) - consumed
        elif kind == "mask":
            ax += payload[0].ndim
        elif kind == "slice":
            ax += 1
        elif kind in ("int", "arr", "trace"):
            if ax >= len(shape):
                return None
            dim = shape[ax]
            i = payload[0]
            if kind == "trace" and i.dtype.kind == "u":
                info = (i < dim, i, ax, dim)
            elif kind == "trace":
                info = ((i >= -dim) & (i < dim), where(i < 0, i + dim, i), ax, dim)
            else:
                i = np.asarray(i)
                if i.dtype.kind == "u":
                    i = np.minimum(i, np.uint64(dim + 1)).astype(np.intp)
                i = i.astype(np.intp)
                info = ((i >= -dim) & (i < dim), np.where(i < 0, i + dim, i), ax, dim)
            ax += 1
        out.append((item, info))
    return out


def _select_item(ok: Any, wrapped: Any, other: int, like: Any) -> Any:
    """The index ``wrapped`` where ``ok``, else ``other``, as the item ``like`` was: a
    Python int for an int, a NumPy array for a known index, traced for a traced one."""
    if isinstance(ok, Tracer):
        return where(ok, wrapped, other)
    value = np.where(ok, wrapped, other)
    return int(value) if isinstance(like, (int, np.integer)) else value


def _pad_out_of_range(fname: str, x: Any, idx: Any, pad_value: Any) -> tuple[Any, Any, bool]:
    """``x`` with one more slot at the end of each axis that an integer index selects
    along (holding ``pad_value``), and ``idx`` with its out-of-range integers sent to
    that slot: the slot is where dropped updates land."""
    shape = core.get_aval(x).shape
    parsed = _integer_items(fname, shape, idx)
    if parsed is None or all(info is None for _, info in parsed):
        return x, idx, False
    widths = [(0, 0)] * len(shape)
    new_items = []
    for item, info in parsed:
        if info is not None:
            ok, wrapped, ax, dim = info
            item = _select_item(ok, wrapped, dim, item)
            widths[ax] = (0, 1)
        new_items.append(item)
    xp = pad(x, widths, constant_values=pad_value)
    return xp, (tuple(new_items) if isinstance(idx, tuple) else new_items[0]), True


def _filled_get(fname: str, x: Any, idx: Any, fill_value: Any) -> Any:
    """``x.at[idx].get(mode="fill")``: ``x`` read at ``idx`` with the out-of-range
    integer indices sent to 0, then ``fill_value`` selected where one of them was out
    of range. Where the index puts that mask on the result's axes is found by indexing
    a two-slot table ``[False, True]`` with the same index structure (in-range flags in
    place of one integer index, zeros in place of the others): the read and its mask
    then have one layout by construction, and the cost is that of the result, not of
    ``x``."""
    aval = core.get_aval(x)
    fill = np.asarray(default_fill(aval.dtype) if fill_value is None else fill_value)
    parsed = _integer_items(fname, aval.shape, idx)
    if parsed is None or any(info is not None and info[3] == 0 for _, info in parsed):
        # too many indices (getitem reports it), or an empty axis read by an integer
        # index (every read is out of range: padding an empty axis costs nothing)
        xp, idx2, _ = _pad_out_of_range(fname, x, idx, fill.astype(aval.dtype))
        return getitem(xp, idx2, "clip")
    read = []
    for item, info in parsed:
        if info is not None:
            ok, wrapped, _, _ = info
            item = _select_item(ok, wrapped, 0, item)
        read.append(item)
    out = getitem(x, _rebuilt(idx, read), "clip")
    valid = None
    for k, (_, info) in enumerate(parsed):
        if info is None:
            continue
        ok, _, ax, _ = info
        if not isinstance(ok, Tracer) and np.all(ok):
            continue
        table = np.array([False, True]).reshape((1,) * ax + (2,) + (1,) * (aval.ndim - ax - 1))
        probe = [_probe_item(fname, item, inf, j == k) for j, (item, inf) in enumerate(parsed)]
        mask = getitem(table, _rebuilt(idx, probe), "clip")
        valid = mask if valid is None else valid & mask
    if valid is None:
        return out
    return where(valid, out, fill.astype(aval.dtype))


def _probe_item(fname: str, item: Any, info: Any, flagged: bool) -> Any:
    """An item of the index that reads the mask table (``_filled_get``): the in-range
    flags of the flagged integer index, zeros of the shape of the other integer indices,
    the whole (size-1) axis for a slice, a boolean mask's positions as zeros."""
    if info is not None:
        ok = info[0]
        if flagged:
            return _select_item(ok, 1, 0, item)
        return 0 if np.ndim(ok) == 0 else np.zeros(np.shape(ok), np.intp)
    kind, *payload = classify_index(fname, item)
    if kind == "slice":
        return slice(None)
    if kind == "mask":
        count = int(np.count_nonzero(payload[0]))
        return tuple(np.zeros(count, np.intp) for _ in range(payload[0].ndim))
    return item


def _rebuilt(idx: Any, items: list[Any]) -> Any:
    """``items`` in the form of ``idx`` (a tuple, or one item)."""
    flat: list[Any] = []
    for it in items:
        flat.extend(it if isinstance(it, tuple) else (it,))
    return tuple(flat) if isinstance(idx, tuple) or len(flat) != 1 else flat[0]


class _AtIndexer:
    __slots__ = ("x",)

    def __init__(self, x: Any) -> None:
        self.x = x

    def __getitem__(self, idx: Any) -> AtUpdater:
        return AtUpdater(self.x, idx)


def at(x: Any) -> _AtIndexer:
    """``x.at`` as a function, for NumPy arrays and tracers alike.

    Tracers have ``x.at[idx]``; the plain NumPy arrays that eager functrace code
    returns do not, so write ``fnp.at(x)[idx].set(v)`` where ``x`` may be either.

    >>> import numpy as np
    >>> import functrace.numpy as fnp
    >>> fnp.at(np.arange(4.0))[1:3].set(0.0)
    array([0., 0., 0., 3.])
    """
    return _AtIndexer(x)


_array.register_at(at)

__all__ = ["at"]
