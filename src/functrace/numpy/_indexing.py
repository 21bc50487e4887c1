"""Indexing of functrace.numpy: ``x[idx]``, ``x.at[idx].set/add/...``, take, nonzero.

NumPy's indexing semantics on tracers, lowered to lax primitives:

* basic indices (integers, slices of any step, ``None``, ``...``) become ``reshape``
  (new axes), ``rev`` (negative steps), one ``slice`` and ``squeeze`` (integer axes);
* advanced indices (integer arrays, lists, integer tracers, concrete boolean masks)
  become one ``gather`` over the indexed axes, then a ``transpose`` that puts the
  broadcast index dims where NumPy puts them: in place of the advanced indices when
  they are adjacent, first otherwise (as soon as an array index is present, integers
  count as advanced indices too, as in NumPy);
* ``x.at[idx].op(v)`` becomes ``dynamic_update_slice`` when ``idx`` selects a window
  (integers and unit-step slices), else a scatter (``scatter``, ``scatter_add``,
  ``scatter_mul``, ``scatter_min``, ``scatter_max``) whose index arrays enumerate
  every indexed position.

Decisions:

* Concrete indices (Python and NumPy values, and tracers whose value is known: under
  ``grad``/``vjp``/``jvp`` without ``jit``) are checked as NumPy checks them: out of
  range raises ``IndexError`` naming the index, the axis and its size.
* Abstract integer indices (under ``jit``, or batched under ``vmap``) cannot be
  checked. Negative ones wrap once, then every index is clamped into
  ``[0, size - 1]``: reads return the edge element and updates land on the edge
  (JAX drops out-of-range updates instead). ``mode="clip"`` (``.at[idx].get/set/...``,
  ``take``) gives the clamping for concrete indices too; ``.at`` also takes JAX's
  ``"promise_in_bounds"`` (clamped too) and ``"fill"``/``"drop"`` (out-of-range reads
  give ``fill_value``, out-of-range updates are skipped), with the same results eagerly,
  under ``jit`` and ``vmap``.
* Boolean masks need concrete values, because the result's shape depends on them.
  Under ``jit``, ``x[mask]`` raises ``ConcretizationError`` pointing to ``fnp.where``;
  ``x.at[mask].set(v)`` (and add/mul/min/max) with ``v`` broadcastable to the
  unmasked dims is lowered to a ``select_n`` and works there.
* ``.at`` updates return a new array (nothing is mutated), cast ``v`` to ``x``'s dtype
  as JAX does, and broadcast it to the shape of ``x[idx]``. With repeated indices
  ``set`` keeps the last write (NumPy assignment); ``add``/``mul``/``min``/``max``
  combine every update (``numpy.ufunc.at``), and ``grad`` accumulates cotangents of
  repeated reads (``gather`` transposes to ``scatter_add``).
* Plain NumPy arrays have no ``.at`` (``functrace.Array``s do): ``fnp.at(x)[idx].set(v)``
  is the same API as a
  function and works on arrays and tracers alike (eagerly it is a copy plus NumPy
  assignment or ``ufunc.at``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Tracer
from functrace.errors import ConcretizationError
from functrace.lax import elementwise as lx
from functrace.lax import indexing as li
from functrace.lax import shapes as ls
from functrace.numpy._core import (
    asarray_or_tracer,
    broadcast_shapes,
    broadcast_to_shape,
    is_traced,
)

_VALID_INDICES = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
    "boolean arrays are valid indices"
)
_MODES = (None, "clip")

# ---------------------------------------------------------------------------
# Parsing an index into a plan: one entry per axis of x (after inserting new axes)
# ---------------------------------------------------------------------------


class _Slice:
    """Positions ``start + k * step`` for ``k < length`` (normalized, in bounds)."""

    __slots__ = ("start", "step", "length")

    def __init__(self, start: int, step: int, length: int) -> None:
        self.start, self.step, self.length = start, step, length

    def is_full(self, dim: int) -> bool:
        # The whole axis in order: it needs no index array in a scatter.
        return self.length == dim and (dim <= 1 or self.step == 1)


class _Int:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


class _Adv:
    """An advanced index: a NumPy intp array in bounds, or an (abstract) integer tracer."""

    __slots__ = ("value", "abstract")

    def __init__(self, value: Any, abstract: bool = False) -> None:
        self.value, self.abstract = value, abstract


class _Plan:
    __slots__ = ("shape", "entries", "inserted")

    def __init__(self, shape: tuple[int, ...], entries: list[Any], inserted: bool) -> None:
        self.shape = shape  # x's shape with the new (None) axes inserted
        self.entries = entries  # one _Slice / _Int / _Adv per axis of that shape
        self.inserted = inserted

    @property
    def adv_axes(self) -> list[int]:
        return [k for k, e in enumerate(self.entries) if isinstance(e, _Adv)]

    @property
    def abstract(self) -> bool:
        return any(isinstance(e, _Adv) and e.abstract for e in self.entries)


def _has_tracer(idx: Any) -> bool:
    if isinstance(idx, Tracer):
        return True
    if isinstance(idx, (tuple, list)):
        return any(_has_tracer(i) for i in idx)
    if isinstance(idx, slice):
        return any(isinstance(v, Tracer) for v in (idx.start, idx.stop, idx.step))
    return False


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


def _mask_error(fname: str, mask: Tracer) -> ConcretizationError:
    return ConcretizationError(
        f"{fname}: expected a boolean mask with known values, got an abstract tracer "
        f"{mask.aval.str_short()}. The result's shape depends on how many entries are True, "
        f"which is unknown under jit. Keep the shape with functrace.numpy.where(mask, x, 0) "
        f"(or x.at[mask].set(v), which lowers to where), or use "
        f"functrace.numpy.nonzero(mask, size=n) for a fixed number of positions."
    )


def _classify(fname: str, item: Any) -> tuple[Any, ...]:
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
                raise _mask_error(fname, item)
            return ("trace", item)
        return _classify(fname, val)
    if isinstance(item, (list, tuple)) and _has_tracer(item):
        from functrace.numpy._shape import _array_any as array

        return _classify(fname, array(item))
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


def _parse(fname: str, shape: tuple[int, ...], idx: Any, mode: str | None) -> _Plan:
    if mode not in _MODES:
        raise ValueError(f"{fname}: expected mode None or 'clip', got {mode!r}.")
    items = list(idx) if isinstance(idx, tuple) else [idx]
    kinds = [_classify(fname, it) for it in items]
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
                _Slice(0, 1, 1) if kind == "none" else _Adv(np.zeros(int(payload[0]), np.intp))
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
                entries.append(_Adv(pos.astype(np.intp)))
                new_shape.append(shape[ax + j])
            ax += mask.ndim
            continue
        dim = shape[ax]
        new_shape.append(dim)
        if kind == "int":
            entries.append(_Int(_check_int(fname, payload[0], dim, ax, mode)))
        elif kind == "slice":
            start, stop, step = payload[0].indices(dim)
            entries.append(_Slice(start, step, len(range(start, stop, step))))
        elif kind == "arr":
            entries.append(_Adv(_check_array(fname, payload[0], dim, ax, mode)))
        else:  # an abstract integer tracer: checked (clamped) by gather/scatter at run time
            entries.append(_Adv(payload[0], abstract=True))
        ax += 1

    if any(isinstance(e, _Adv) for e in entries):
        # With an array index present, NumPy treats integers as (0-d) advanced indices.
        entries = [_Adv(np.array(e.index, np.intp)) if isinstance(e, _Int) else e for e in entries]
    return _Plan(tuple(new_shape), entries, inserted)


def _adv_layout(fname: str, plan: _Plan) -> tuple[list[int], tuple[int, ...], int]:
    """(advanced axes, their broadcast shape B, the output position of B's dims)."""
    adv = plan.adv_axes
    b_shape = broadcast_shapes(fname, *[core.get_aval(plan.entries[k].value).shape for k in adv])
    adjacent = adv == list(range(adv[0], adv[-1] + 1))
    # NumPy: adjacent advanced indices keep their place; separated ones go first.
    pos = sum(isinstance(e, _Slice) for e in plan.entries[: adv[0]]) if adjacent else 0
    return adv, b_shape, pos


def _out_shape(fname: str, plan: _Plan) -> tuple[int, ...]:
    """The shape of ``x[idx]``."""
    kept = [e.length for e in plan.entries if isinstance(e, _Slice)]
    if not plan.adv_axes:
        return tuple(kept)
    _, b_shape, pos = _adv_layout(fname, plan)
    return tuple(kept[:pos]) + b_shape + tuple(kept[pos:])


def _broadcast_index(v: Any, shape: tuple[int, ...], dims: Sequence[int]) -> Any:
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
    if mode is None and not is_traced(x) and not _has_tracer(idx):
        return np.asarray(x)[idx]
    x = asarray_or_tracer(x, "getitem")
    plan = _parse("getitem", core.get_aval(x).shape, idx, mode)
    y = ls.reshape(x, plan.shape) if plan.inserted else x

    # Basic part: reverse the negative-step axes, then one strided slice, then squeeze.
    starts, limits, strides, rev_axes, int_axes = [], [], [], [], []
    for k, (e, dim) in enumerate(zip(plan.entries, plan.shape)):
        if isinstance(e, _Slice):
            if e.length == 0:
                start, step = 0, 1
            elif e.step > 0 or e.length == 1:
                start, step = e.start, max(e.step, 1)
            else:  # after rev, position p is dim - 1 - p
                rev_axes.append(k)
                start, step = dim - 1 - e.start, -e.step
            limit = start + (e.length - 1) * step + 1 if e.length else start
        elif isinstance(e, _Int):
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
    adv, b_shape, pos = _adv_layout("getitem", plan)
    nb = len(b_shape)
    indices = [
        _broadcast_index(
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
# x.at[idx].op(v)
# ---------------------------------------------------------------------------

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
            raise _mask_error(fname, mask)
        v = ls.reshape(v, vshape[extra:])
    try:
        v = _broadcast_values(fname, v, rest)
    except ValueError:
        raise _mask_error(fname, mask) from None
    v = broadcast_to_shape(v, shape)
    m = ls.broadcast_in_dim(mask, shape, tuple(range(mask.ndim)))
    return lx.select_n(m, x, _combine(op, x, v))


def _window_update(fname: str, op: str, y: Any, plan: _Plan, v: Any) -> Any:
    # Integers and unit-step slices select one window: read-modify-write it with dus.
    starts = [e.index if isinstance(e, _Int) else e.start if e.length else 0 for e in plan.entries]
    sizes = [1 if isinstance(e, _Int) else e.length for e in plan.entries]
    v = _broadcast_values(fname, v, _out_shape(fname, plan))
    if 0 in sizes:
        return y
    v = ls.reshape(v, tuple(sizes))
    old = (
        None
        if op == "set"
        else ls.slice(y, tuple(starts), tuple(s + n for s, n in zip(starts, sizes)))
    )
    return li.dynamic_update_slice(y, _combine(op, old, v), starts)


def _scatter_update(fname: str, op: str, y: Any, plan: _Plan, v: Any) -> Any:
    # Every axis that is not a whole in-order slice gets an index array over the grid G of
    # the non-whole output dims; the whole slices are the scatter's trailing dims.
    entries: list[Any] = [
        _Adv(np.array(e.index, np.intp)) if isinstance(e, _Int) else e for e in plan.entries
    ]
    plan = _Plan(plan.shape, entries, plan.inserted)
    v = _broadcast_values(fname, v, _out_shape(fname, plan))
    # Output dims in NumPy's order, each labeled by the axis it comes from (-1: index dims).
    slice_axes = [k for k, e in enumerate(entries) if isinstance(e, _Slice)]
    b_shape: tuple[int, ...] = ()
    pos = 0
    if plan.adv_axes:
        _, b_shape, pos = _adv_layout(fname, plan)
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
        if isinstance(e, _Adv):
            nd = core.get_aval(e.value).ndim
            dims = range(b_start + len(b_shape) - nd, b_start + len(b_shape))
            indices.append(_broadcast_index(e.value, grid, dims))
        elif not e.is_full(plan.shape[k]):
            positions = e.start + e.step * np.arange(e.length, dtype=np.intp)
            g = next(g for g, i in enumerate(grid_dims) if labels[i] == k)
            indices.append(_broadcast_index(positions, grid, (g,)))
        else:
            continue
        axes.append(k)
    return _SCATTERS[op](y, updates, indices, axes, "clip" if plan.abstract else "raise")


def _update(op: str, x: Any, idx: Any, v: Any, mode: str | None) -> Any:
    fname = f"at[].{op}"
    if mode is None and not is_traced(x, v) and not _has_tracer(idx):
        return _numpy_update(op, x, idx, v)
    x = asarray_or_tracer(x, fname)
    aval = core.get_aval(x)
    v = _cast_values(v, aval.dtype, fname)
    mask = _abstract_mask(idx)
    if mask is not None:
        return _masked_update(fname, op, x, mask, v)
    plan = _parse(fname, aval.shape, idx, mode)
    y = ls.reshape(x, plan.shape) if plan.inserted else x
    window = not plan.adv_axes and all(
        isinstance(e, _Int) or e.step == 1 or e.length <= 1 for e in plan.entries
    )
    out = (_window_update if window else _scatter_update)(fname, op, y, plan, v)
    return ls.reshape(out, aval.shape) if plan.inserted else out


class AtUpdater:
    """``x.at[idx]``: functional reads and updates at ``idx`` (JAX's ``.at`` API).

    Every method returns a new array; ``x`` is never modified. ``values`` are cast to
    ``x``'s dtype and broadcast to the shape of ``x[idx]``. ``mode="clip"`` clamps
    out-of-range indices instead of raising.

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

    def get(self, *, mode: str | None = None, fill_value: Any = None) -> Any:
        """``x[idx]``; out-of-range positions give ``fill_value`` with ``mode="fill"``
        (or ``"drop"``)."""
        return _at_result(self.x, _moded("get", self.x, self.idx, None, mode, fill_value))

    def set(self, values: Any, *, mode: str | None = None) -> Any:
        """``x`` with ``x[idx] = values`` (with repeated indices the last write wins)."""
        return _at_result(self.x, _moded("set", self.x, self.idx, values, mode))

    def add(self, values: Any, *, mode: str | None = None) -> Any:
        """``x`` with ``x[idx] += values`` (repeated indices all add up)."""
        return _at_result(self.x, _moded("add", self.x, self.idx, values, mode))

    def subtract(self, values: Any, *, mode: str | None = None) -> Any:
        """``x`` with ``x[idx] -= values``."""
        from functrace.numpy._math import negative

        return _at_result(self.x, _moded("add", self.x, self.idx, negative(values), mode))

    def mul(self, values: Any, *, mode: str | None = None) -> Any:
        """``x`` with ``x[idx] *= values`` (repeated indices all multiply)."""
        return _at_result(self.x, _moded("mul", self.x, self.idx, values, mode))

    multiply = mul

    def min(self, values: Any, *, mode: str | None = None) -> Any:  # noqa: A003
        """``x`` with ``x[idx] = minimum(x[idx], values)``.

        NOTE: at ties the gradient goes to ``x``'s entry.
        """
        return _at_result(self.x, _moded("min", self.x, self.idx, values, mode))

    def max(self, values: Any, *, mode: str | None = None) -> Any:  # noqa: A003
        """``x`` with ``x[idx] = maximum(x[idx], values)``.

        NOTE: at ties the gradient goes to ``x``'s entry.
        """
        return _at_result(self.x, _moded("max", self.x, self.idx, values, mode))


_AT_MODES = (None, "clip", "promise_in_bounds", "fill", "drop")


def _at_result(x: Any, out: Any) -> Any:
    """``.at`` on a concrete ``functrace.Array`` returns an ``Array``."""
    from functrace._array import Array, _wrap

    return _wrap(out) if type(x) is Array else out


def _default_fill(dtype: np.dtype) -> Any:
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max


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
    if mode in (None, "clip", "promise_in_bounds"):
        m = None if mode is None else "clip"
        return getitem(x, idx, m) if op == "get" else _update(op, x, idx, values, m)
    x = asarray_or_tracer(x, fname)
    aval = core.get_aval(x)
    if op == "get":
        pad_value = _default_fill(aval.dtype) if fill_value is None else fill_value
    else:
        pad_value = 0
    xp, idx2, padded = _pad_out_of_range(fname, x, idx, pad_value)
    if op == "get":
        return getitem(xp, idx2, "clip")
    out = _update(op, xp, idx2, values, "clip")
    if not padded:
        return out
    return getitem(out, tuple(slice(0, d) for d in aval.shape))


def _pad_out_of_range(fname: str, x: Any, idx: Any, pad_value: Any) -> tuple[Any, Any, bool]:
    """``x`` with one more slot at the end of each axis that an integer index selects
    along (holding ``pad_value``), and ``idx`` with its out-of-range integers sent to
    that slot: the slot is where dropped updates land and filled reads come from."""
    from functrace.numpy._functions import pad
    from functrace.numpy._math import where

    shape = core.get_aval(x).shape
    items = list(idx) if isinstance(idx, tuple) else [idx]
    kinds = [_classify(fname, it) for it in items]
    consumed = sum(
        k[1].ndim if k[0] == "mask" else 1
        for k in kinds
        if k[0] in ("slice", "int", "arr", "trace", "mask")
    )
    widths = [(0, 0)] * len(shape)
    new_items: list[Any] = []
    ax = 0
    for item, (kind, *payload) in zip(items, kinds):
        if kind == "ellipsis":
            ax += len(shape) - consumed
        elif kind == "mask":
            ax += payload[0].ndim
        elif kind == "slice":
            ax += 1
        elif kind in ("int", "arr", "trace"):
            if ax >= len(shape):
                break  # too many indices: the indexing below reports it
            dim = shape[ax]
            i = payload[0]
            if kind == "trace":
                ok = (i >= -dim) & (i < dim)
                item = where(ok, where(i < 0, i + dim, i), dim)
            else:
                i = np.asarray(i)
                if i.dtype.kind == "u":
                    i = np.minimum(i, np.uint64(dim + 1)).astype(np.intp)
                i = i.astype(np.intp)
                item = np.where((i >= -dim) & (i < dim), np.where(i < 0, i + dim, i), dim)
                if kind == "int":
                    item = int(item)
            widths[ax] = (0, 1)
            ax += 1
        new_items.append(item)
    if len(new_items) < len(items):
        return x, idx, False
    if all(w == (0, 0) for w in widths):
        return x, idx, False
    xp = pad(x, widths, constant_values=pad_value)
    return xp, (tuple(new_items) if isinstance(idx, tuple) else new_items[0]), True


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


# ---------------------------------------------------------------------------
# take, take_along_axis, nonzero
# ---------------------------------------------------------------------------


def take(a: Any, indices: Any, axis: int | None = None, mode: str | None = None) -> Any:
    """NumPy's ``take``: elements of ``a`` at ``indices`` along ``axis`` (flattened if None).

    ``mode``: None or ``"raise"`` (NumPy's default: out-of-range concrete indices raise;
    abstract ones clamp), ``"wrap"`` (indices modulo the size) or ``"clip"`` (clamped into
    ``[0, size - 1]``; as in NumPy, negative indices clip to 0 rather than wrap).

    >>> import functrace.numpy as fnp
    >>> fnp.take([[1, 2], [3, 4]], [1, 0], axis=1)
    array([[2, 1],
           [4, 3]])
    """
    if mode not in (None, "raise", "wrap", "clip"):
        raise ValueError(f"take: expected mode 'raise', 'wrap' or 'clip', got {mode!r}.")
    if not is_traced(a, indices) and not _has_tracer(indices):
        return np.take(a, indices, axis=axis, mode=mode or "raise")  # type: ignore[call-overload]
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
    if mode in ("wrap", "clip") and dim > 0:
        if isinstance(idx, Tracer):
            from functrace.numpy._math import clip, remainder

            idx = remainder(idx, dim) if mode == "wrap" else clip(idx, 0, dim - 1)
        else:
            idx = np.mod(idx, dim) if mode == "wrap" else np.clip(idx, 0, dim - 1)
    return getitem(a, (slice(None),) * axis + (idx,))


def take_along_axis(arr: Any, indices: Any, axis: int | None) -> Any:
    """NumPy's ``take_along_axis``: ``arr`` indexed by ``indices`` along ``axis``, matched
    (broadcast) along the other axes; ``axis=None`` works on the flattened array.

    >>> import numpy as np
    >>> import functrace.numpy as fnp
    >>> x = np.array([[3.0, 1.0], [0.0, 2.0]])
    >>> fnp.take_along_axis(x, np.argsort(x, axis=1), axis=1)
    array([[1., 3.],
           [0., 2.]])
    """
    if not is_traced(arr, indices) and not _has_tracer(indices):
        return np.take_along_axis(np.asarray(arr), np.asarray(indices), axis)
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
    nd = len(shape)
    full = tuple(
        idx if d == axis else np.arange(n).reshape((1,) * d + (n,) + (1,) * (nd - d - 1))
        for d, n in enumerate(shape)
    )
    return getitem(arr, full)


def _concrete(fname: str, a: Any, hint: str) -> np.ndarray:
    val = core.concrete_or_none(a)
    if val is None:
        raise ConcretizationError(
            f"{fname}: expected an array with known values, got an abstract tracer "
            f"{a.aval.str_short()}. The result's shape depends on the values, which are "
            f"unknown under jit. {hint}"
        )
    return val


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
        if not isinstance(a, Tracer):
            return np.nonzero(a)
        return np.nonzero(
            _concrete(
                "nonzero",
                a,
                "Pass size=n for a fixed number of positions "
                "(nonzero(a, size=n, fill_value=...)), or use "
                "functrace.numpy.where(cond, x, y).",
            )
        )
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
    count = n - _sum_int(is_zero)
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


def _sum_int(x: Any) -> Any:
    from functrace.lax.reductions import reduce_sum

    return reduce_sum(x, (0,))


def flatnonzero(a: Any) -> Any:
    """Indices of the non-zero entries of the flattened ``a`` (concrete values only)."""
    if not isinstance(a, Tracer):
        return np.flatnonzero(a)
    return np.flatnonzero(_concrete("flatnonzero", a, "Use nonzero(ravel(a), size=n)."))


def argwhere(a: Any) -> Any:
    """``(N, a.ndim)`` indices of the non-zero entries of ``a`` (concrete values only)."""
    if not isinstance(a, Tracer):
        return np.argwhere(a)
    return np.argwhere(_concrete("argwhere", a, "Use nonzero(a, size=n)."))


__all__ = ["argwhere", "at", "flatnonzero", "nonzero", "take", "take_along_axis"]
