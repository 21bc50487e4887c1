"""Gather and the scatter family: NumPy advanced indexing as primitives.

Each primitive is one block: definition, NumPy impl, abstract eval, JVP and (if
linear) transpose rule. Index operands are array data (they may be traced);
everything that shapes the output (indexed axes, mode) is a static parameter.
``functrace.lax.indexing`` re-exports these names and documents the index
semantics of the whole library (``gather`` and the scatters: its second and third
points).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.lax._util import normalize_axis, register
from functrace.lax.elementwise import (
    add,
    bitwise_and,
    convert_element_type,
    div,
    eq,
    ge,
    lt,
    mul,
    neg,
    select_n,
)
from functrace.lax.elementwise import max as lax_max
from functrace.lax.shapes import broadcast_in_dim, iota, pad
from functrace.lax.shapes import slice as lax_slice

_MODES = ("raise", "clip")


class GatherScatterMode(enum.Enum):
    """How ``gather`` and the scatters treat indices out of range (JAX's enum; the
    ``mode=`` of those functions takes its members or their strings). ``CLIP`` clamps;
    ``FILL_OR_DROP`` gives ``fill_value`` for gathered positions out of range and skips
    scattered ones; ``PROMISE_IN_BOUNDS`` promises indices in range, which functrace
    never trusts: it clamps, as ``CLIP`` and as ``.at[...](mode="promise_in_bounds")``
    (JAX's XLA clamps reads and drops writes then), so no index reads or writes out of
    bounds. ``ONE_HOT`` is JAX's ``take_along_axis`` strategy, not a gather mode:
    the gathers and scatters reject it. Indices wrap once from the end (``-1`` is the
    last position) in every mode, as NumPy's, where JAX's ``lax`` does not wrap."""

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s: Any) -> GatherScatterMode:
        """The member named by ``s``: a member itself, ``'clip'``, ``'fill'``/``'drop'``
        or ``None`` (``FILL_OR_DROP``), ``'promise_in_bounds'`` or ``'one_hot'``."""
        if isinstance(s, GatherScatterMode):
            return s
        names = {
            "clip": GatherScatterMode.CLIP,
            "fill": GatherScatterMode.FILL_OR_DROP,
            "drop": GatherScatterMode.FILL_OR_DROP,
            None: GatherScatterMode.FILL_OR_DROP,
            "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS,
            "one_hot": GatherScatterMode.ONE_HOT,
        }
        try:
            return names[s]
        except (KeyError, TypeError):
            raise ValueError(
                f"GatherScatterMode.from_any: expected a GatherScatterMode, 'clip', "
                f"'fill', 'drop', 'promise_in_bounds', 'one_hot' or None, got {s!r}."
            ) from None


def _resolve_mode(name: str, mode: Any) -> str:
    """A user's ``mode=`` as ``'raise'``, ``'clip'`` (the primitives' modes) or ``'fill'``
    (done around the primitives: ``_filled_gather``, ``_dropping_scatter``)."""
    if isinstance(mode, str) and mode in _MODES:
        return mode
    try:
        m = GatherScatterMode.from_any(mode)
    except ValueError:
        raise ValueError(
            f"{name}: expected mode 'raise' or 'clip' (functrace's), or one of JAX's: "
            f"'fill', 'drop', 'promise_in_bounds', None or a lax.GatherScatterMode, got "
            f"{mode!r}."
        ) from None
    if m is GatherScatterMode.ONE_HOT:
        raise ValueError(
            f"{name}: expected a gather/scatter mode, got {mode!r}. ONE_HOT is a strategy "
            f"of numpy.take_along_axis, not a mode of gather or the scatters."
        )
    return {
        GatherScatterMode.CLIP: "clip",
        GatherScatterMode.PROMISE_IN_BOUNDS: "clip",
        GatherScatterMode.FILL_OR_DROP: "fill",
    }[m]


# ---------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------


def _full(shape: tuple[int, ...], value: Any, dtype: Any) -> Any:
    # A constant array (a broadcast scalar, so no copy when eager).
    scalar = np.array(value, dtype=dtype)[()]
    return scalar if not shape else broadcast_in_dim(scalar, shape, ())


def _zeros(aval: ShapedArray) -> Any:
    return _full(aval.shape, 0, aval.dtype)


def _aval(x: Any) -> ShapedArray:
    return x.aval if ad.is_undefined_primal(x) else core.get_aval(x)


def _as_operand(x: Any) -> Any:
    # Accept lists of ints as index arrays; arrays and tracers pass through.
    return x if core.is_array_like(x) else np.asarray(x)


def _check_not_linear(name: str, *xs: Any) -> None:
    if any(ad.is_undefined_primal(x) for x in xs):
        raise ValueError(
            f"{name} transpose: expected known (non-linear) index or update "
            f"operands, got a linear one. A JVP rule used a tangent where an "
            f"index belongs."
        )


# ---------------------------------------------------------------------------
# Shared checks and index normalization for gather and the scatters
# ---------------------------------------------------------------------------


def _check_gather_like(
    name: str,
    operand: ShapedArray,
    indices: Sequence[ShapedArray],
    axes: tuple[int, ...],
    mode: str,
) -> tuple[int, ...]:
    """Validate the index operands; return the common index shape B."""
    if mode not in _MODES:
        raise ValueError(f"{name}: expected mode 'raise' or 'clip', got {mode!r}.")
    if not axes:
        raise ValueError(
            f"{name}: expected at least one indexed axis, got axes=(). "
            f"Index arrays select along the axes they are given for."
        )
    if any(not 0 <= a < operand.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(
            f"{name}: expected distinct axes in [0, {operand.ndim}) for operand "
            f"shape {operand.shape}, got axes={axes}. Normalize negative axes "
            f"first."
        )
    if len(indices) != len(axes):
        raise ValueError(
            f"{name}: expected one index array per entry of axes={axes} "
            f"({len(axes)}), got {len(indices)}."
        )
    for a, i in zip(axes, indices):
        if i.dtype.kind not in "iu":
            raise TypeError(
                f"{name}: expected integer index arrays, got {i.dtype.name} for "
                f"axis {a}. Boolean masks must become integer positions first "
                f"(functrace.numpy does this with nonzero)."
            )
    batch = indices[0].shape
    if any(i.shape != batch for i in indices):
        shapes = ", ".join(str(i.shape) for i in indices)
        raise ValueError(
            f"{name}: expected index arrays of one common shape, got shapes "
            f"{shapes}. functrace.lax does not broadcast: broadcast the indices "
            f"first (functrace.numpy does)."
        )
    if int(np.prod(batch, dtype=np.int64)) > 0:
        for a in axes:
            if operand.shape[a] == 0:
                raise IndexError(
                    f"{name}: expected a non-empty axis to index, got axis {a} "
                    f"of size 0 in operand shape {operand.shape}. No index is in "
                    f"bounds there."
                )
    return batch


def _gathered_shape(
    operand: ShapedArray, batch: tuple[int, ...], axes: tuple[int, ...]
) -> tuple[int, ...]:
    return batch + tuple(d for k, d in enumerate(operand.shape) if k not in axes)


def _positions(
    name: str, indices: Sequence[Any], shape: tuple[int, ...], axes: tuple[int, ...], mode: str
) -> tuple[np.ndarray, ...]:
    """Concrete indices normalized to [0, dim): wrap negatives once, then check or clip."""
    out = []
    for a, idx in zip(axes, indices):
        dim = shape[a]
        i = np.asarray(idx)
        if i.dtype.kind == "u":  # keep huge unsigned values out of range after the cast
            i = np.minimum(i, np.uint64(dim)).astype(np.intp)
        else:
            i = i.astype(np.intp)
        i = np.where(i < 0, i + dim, i)
        if mode == "clip":
            i = np.clip(i, 0, dim - 1)
        else:
            bad = (i < 0) | (i >= dim)
            if bad.any():
                given = np.asarray(idx)[bad].ravel()[0]
                raise IndexError(
                    f"{name}: expected indices in [-{dim}, {dim}) for axis {a} "
                    f"of size {dim}, got index {given}. Fix the index, or use "
                    f"mode='clip' to clamp out-of-range indices."
                )
        out.append(i)
    return tuple(out)


def _known_unique(
    indices: Sequence[Any], shape: tuple[int, ...], axes: tuple[int, ...], mode: str
) -> bool:
    """True when the indices are concrete and name every position at most once."""
    vals = [core.concrete_or_none(i) for i in indices]
    if any(v is None for v in vals):
        return False
    pos = _positions("scatter", vals, shape, axes, mode)
    flat = np.ravel_multi_index(pos, tuple(shape[a] for a in axes)).ravel()
    return len(np.unique(flat)) == flat.size


def _update_ids(batch: tuple[int, ...], full: tuple[int, ...]) -> np.ndarray:
    # The C-order position of each update's index tuple, spread over the trailing dims
    # (a static constant: it only depends on shapes).
    n = int(np.prod(batch, dtype=np.int64))
    ids = np.arange(n, dtype=np.int64).reshape(batch + (1,) * (len(full) - len(batch)))
    return np.broadcast_to(ids, full)


# ---------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------


def _gather_abstract(
    operand: ShapedArray, *indices: ShapedArray, axes: tuple[int, ...], mode: str
) -> ShapedArray:
    batch = _check_gather_like("gather", operand, indices, axes, mode)
    return ShapedArray(_gathered_shape(operand, batch, axes), operand.dtype, operand.weak_type)


def _gather_impl(operand: Any, *indices: Any, axes: tuple[int, ...], mode: str) -> Any:
    _gather_abstract(core.get_aval(operand), *core.avals_of(indices), axes=axes, mode=mode)
    x = np.asarray(operand)
    pos = _positions("gather", indices, x.shape, axes, mode)
    return np.moveaxis(x, axes, range(len(axes)))[pos]


gather_p = register(Primitive("gather"), _gather_impl, _gather_abstract)


def _index_params(
    name: str, operand: Any, indices: Sequence[Any], axes: Sequence[int]
) -> tuple[list[Any], tuple[int, ...]]:
    ndim = core.get_aval(operand).ndim
    axes_t = tuple(normalize_axis(name, int(a), ndim) for a in axes)
    return [_as_operand(i) for i in indices], axes_t


def _wrapped_in_range(
    indices: Sequence[Any], shape: tuple[int, ...], axes: tuple[int, ...]
) -> tuple[list[Any], Any]:
    """Each index array with negatives wrapped once (int64), and the mask (index shape)
    of the index tuples in range on every axis."""
    out, ok = [], None
    for a, i in zip(axes, indices):
        aval = core.get_aval(i)
        dim = np.array(shape[a], aval.dtype)[()] if aval.dtype.kind in "iu" else shape[a]
        if aval.dtype.kind == "u":  # compare before the cast, so huge values stay huge
            fits = lt(i, _full(aval.shape, dim, aval.dtype))
            w = convert_element_type(select_n(fits, _zeros(aval), i), np.dtype(np.int64))
            ok_a = fits
        else:
            w = convert_element_type(i, np.dtype(np.int64))
            z = _full(aval.shape, 0, np.int64)
            w = select_n(lt(w, z), w, add(w, _full(aval.shape, shape[a], np.int64)))
            ok_a = bitwise_and(ge(w, z), lt(w, _full(aval.shape, shape[a], np.int64)))
        out.append(w)
        ok = ok_a if ok is None else bitwise_and(ok, ok_a)
    return out, ok


def _default_fill(dtype: np.dtype) -> Any:
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True


def _filled_gather(operand: Any, idx: list[Any], axes: tuple[int, ...], fill_value: Any) -> Any:
    # Gather at clamped positions, then put fill_value where the index tuple is out of range.
    aval = core.get_aval(operand)
    wrapped, ok = _wrapped_in_range(idx, aval.shape, axes)
    got = gather_p.bind(operand, *wrapped, axes=axes, mode="clip")
    out_aval = core.get_aval(got)
    fill = _default_fill(aval.dtype) if fill_value is None else fill_value
    filled = _full(out_aval.shape, fill, aval.dtype)
    batch = core.get_aval(ok).shape
    keep = broadcast_in_dim(ok, out_aval.shape, tuple(range(len(batch))))
    return select_n(keep, filled, got)


def gather(
    operand: Any,
    indices: Sequence[Any],
    axes: Sequence[int],
    mode: Any = "raise",
    fill_value: Any = None,
) -> Any:
    """NumPy advanced indexing: ``indices[k]`` indexes ``axes[k]``; result ``B + rest``.
    ``mode``: ``'raise'`` (the default: an ``IndexError`` for indices out of range),
    ``'clip'``, or JAX's modes (``lax.GatherScatterMode`` or its strings: ``'fill'`` gives
    ``fill_value`` out of range, by default NaN, the smallest signed or largest unsigned
    integer, or True). ``lax.gather`` (``xla_gather_scatter.py``) also takes JAX's
    dimension numbers, and calls this one with index arrays."""
    m = _resolve_mode("gather", mode)
    if fill_value is not None and m != "fill":
        raise ValueError(f"gather: fill_value needs mode='fill', got mode={mode!r}.")
    idx, axes_t = _index_params("gather", operand, indices, axes)
    if m == "fill":
        _check_gather_like("gather", core.get_aval(operand), core.avals_of(idx), axes_t, "clip")
        return _filled_gather(operand, idx, axes_t, fill_value)
    return gather_p.bind(operand, *idx, axes=axes_t, mode=m)


def index_take(x: Any, idx: Any, axis: int = 0, mode: Any = "raise") -> Any:
    """``gather`` along one axis: shape ``idx.shape + x.shape without axis`` (index dims first,
    unlike ``numpy.take``)."""
    return gather(x, [idx], (axis,), mode)


def _gather_transpose(
    ct: Any, operand: Any, *indices: Any, axes: tuple[int, ...], mode: str
) -> list[Any]:
    # gather reads positions; its transpose adds ct back into them (repeats accumulate).
    _check_not_linear("gather", *indices)
    ct_operand = scatter_add(_zeros(operand.aval), ct, indices, axes, mode)
    return [ct_operand] + [None] * len(indices)


ad.deflinear_in(gather_p, (0,), _gather_transpose)  # d gather(x) = gather(dx)


def _gather_batch(
    vals: Sequence[Any], bdims: Sequence[Any], *, axes: tuple[int, ...], mode: str
) -> tuple[Any, int]:
    operand, *indices = vals
    b_op, *b_idx = bdims
    size = batching.batch_size(vals, bdims)
    shifted = axes if b_op is None else tuple(a + (a >= b_op) for a in axes)
    if all(b is None for b in b_idx):
        # The batch axis is one more unindexed operand axis: it lands among the trailing
        # dims of the result, after the index dims.
        out_bdim = len(core.get_aval(indices[0]).shape) + b_op - sum(a < b_op for a in axes)
        return gather_p.bind(operand, *indices, axes=shifted, mode=mode), out_bdim
    # Batched indices: align them on one batch axis (materialize unbatched ones).
    dst = next(b for b in b_idx if b is not None)
    idx = [batching.bdim_at(i, b, size, dst) for i, b in zip(indices, b_idx)]
    if b_op is None:
        return gather_p.bind(operand, *idx, axes=axes, mode=mode), dst
    # Both batched: example b reads operand[b] -- index the batch axis with iota.
    idx_shape = core.get_aval(idx[0]).shape
    idx.insert(0, iota(np.int64, size, dst, idx_shape))
    return gather_p.bind(operand, *idx, axes=(b_op, *shifted), mode=mode), dst


batching.batching_rules[gather_p] = _gather_batch

# ---------------------------------------------------------------------------
# The scatter family: one abstract eval and impl, one NumPy ufunc each
# ---------------------------------------------------------------------------


def _scatter_abstract_rule(name: str, kinds: str, what: str) -> Any:
    def rule(
        operand: ShapedArray,
        updates: ShapedArray,
        *indices: ShapedArray,
        axes: tuple[int, ...],
        mode: str,
    ) -> ShapedArray:
        batch = _check_gather_like(name, operand, indices, axes, mode)
        expected = _gathered_shape(operand, batch, axes)
        if updates.shape != expected:
            raise ValueError(
                f"{name}: expected updates of shape {expected} (index shape "
                f"{batch} + operand dims not in axes={axes}) for operand shape "
                f"{operand.shape}, got {updates.shape}. functrace.lax does not "
                f"broadcast: broadcast the updates first."
            )
        if updates.dtype != operand.dtype:
            raise TypeError(
                f"{name}: expected updates of the operand's dtype "
                f"{operand.dtype.name}, got {updates.dtype.name}. Convert them "
                f"with lax.convert_element_type first."
            )
        if operand.dtype.kind not in kinds:
            raise TypeError(f"{name}: expected {what} operand, got {operand.dtype.name}.")
        return operand

    return rule


def _scatter_impl_rule(name: str, ufunc: np.ufunc | None, abstract: Any) -> Any:
    def impl(operand: Any, updates: Any, *indices: Any, axes: tuple[int, ...], mode: str) -> Any:
        abstract(
            core.get_aval(operand),
            core.get_aval(updates),
            *core.avals_of(indices),
            axes=axes,
            mode=mode,
        )
        out = np.array(operand, copy=True)
        pos = _positions(name, indices, out.shape, axes, mode)
        view = np.moveaxis(out, axes, range(len(axes)))  # a view: writes land in out
        if ufunc is None:
            view[pos] = updates  # NumPy assignment: the last write wins
        else:
            ufunc.at(view, pos, updates)  # unbuffered: repeated indices all combine
        return out

    return impl


def _scatter_primitive(name: str, ufunc: np.ufunc | None, kinds: str, what: str) -> Primitive:
    abstract = _scatter_abstract_rule(name, kinds, what)
    return register(Primitive(name), _scatter_impl_rule(name, ufunc, abstract), abstract)


def _scatter_batch_rule(p: Primitive) -> Any:
    def rule(
        vals: Sequence[Any], bdims: Sequence[Any], *, axes: tuple[int, ...], mode: str
    ) -> tuple[Any, int]:
        operand, updates, *indices = vals
        b_op, b_upd, *b_idx = bdims
        size = batching.batch_size(vals, bdims)
        if all(b is None for b in b_idx):
            # Same positions for every example: the batch axis is one more unindexed axis
            # of the operand, and of the updates after their index dims.
            dst = 0 if b_op is None else b_op
            operand = batching.bdim_at(operand, b_op, size, dst)
            n_idx = len(core.get_aval(indices[0]).shape)
            upd_dst = n_idx + dst - sum(a < dst for a in axes)
            updates = batching.bdim_at(updates, b_upd, size, upd_dst)
            shifted = tuple(a + (a >= dst) for a in axes)
            return p.bind(operand, updates, *indices, axes=shifted, mode=mode), dst
        # Positions differ per example: example b writes into operand[b] -- index a leading
        # batch axis with iota, next to the (aligned) index arrays.
        operand = batching.bdim_at(operand, b_op, size, 0)
        updates = batching.bdim_at(updates, b_upd, size, 0)
        idx = [batching.bdim_at(i, b, size, 0) for i, b in zip(indices, b_idx)]
        idx.insert(0, iota(np.int64, size, 0, core.get_aval(idx[0]).shape))
        shifted = (0, *(a + 1 for a in axes))
        return p.bind(operand, updates, *idx, axes=shifted, mode=mode), 0

    return rule


def _dropping_scatter(
    p: Primitive, operand: Any, updates: Any, idx: list[Any], axes: tuple[int, ...]
) -> Any:
    # Scatter into the operand grown by one slot along each indexed axis, where index
    # tuples out of range are sent, then cut the slots off: those updates are skipped.
    aval = core.get_aval(operand)
    check = core.abstract_eval_rules[p]
    check(aval, core.get_aval(updates), *core.avals_of(idx), axes=axes, mode="clip")
    wrapped, ok = _wrapped_in_range(idx, aval.shape, axes)
    config = [(0, 1 if k in axes else 0, 0) for k in range(aval.ndim)]
    grown = pad(operand, np.array(0, aval.dtype)[()], config)
    slots = [
        select_n(ok, _full(core.get_aval(w).shape, aval.shape[a], np.int64), w)
        for a, w in zip(axes, wrapped)
    ]
    out = p.bind(grown, updates, *slots, axes=axes, mode="clip")
    return lax_slice(out, (0,) * aval.ndim, aval.shape)


def _scatter_wrapper(p: Primitive, summary: str) -> Any:
    def f(
        operand: Any, updates: Any, indices: Sequence[Any], axes: Sequence[int], mode: Any = "raise"
    ) -> Any:
        m = _resolve_mode(p.name, mode)
        idx, axes_t = _index_params(p.name, operand, indices, axes)
        if m == "fill":
            return _dropping_scatter(p, operand, updates, idx, axes_t)
        return p.bind(operand, updates, *idx, axes=axes_t, mode=m)

    f.__name__ = f.__qualname__ = p.name
    f.__doc__ = summary
    return f


# ---------------------------------------------------------------------------
# scatter_add
# ---------------------------------------------------------------------------

scatter_add_p = _scatter_primitive("scatter_add", np.add, "biufc", "a numeric or boolean")
scatter_add = _scatter_wrapper(
    scatter_add_p, "``operand`` with ``updates`` added at the gathered positions (repeats sum)."
)


def _scatter_add_transpose(
    ct: Any, operand: Any, updates: Any, *indices: Any, axes: tuple[int, ...], mode: str
) -> list[Any]:
    # out = operand + S u: ct_operand = ct, ct_updates = S^T ct = gather(ct).
    _check_not_linear("scatter_add", *indices)
    ct_operand = ct if ad.is_undefined_primal(operand) else None
    ct_updates = gather(ct, indices, axes, mode) if ad.is_undefined_primal(updates) else None
    return [ct_operand, ct_updates] + [None] * len(indices)


# d scatter_add(x, u) = scatter_add(dx, du): linear in (operand, updates) jointly.
ad.deflinear_in(scatter_add_p, (0, 1), _scatter_add_transpose)
batching.batching_rules[scatter_add_p] = _scatter_batch_rule(scatter_add_p)


def scatter_sub(
    operand: Any, updates: Any, indices: Sequence[Any], axes: Sequence[int], mode: Any = "raise"
) -> Any:
    """``operand`` with ``updates`` subtracted at the gathered positions (repeats all
    subtract): ``scatter_add`` of ``-updates``. Indices as ``scatter_add``'s
    (``lax.scatter_sub`` also takes JAX's dimension numbers: ``xla_gather_scatter.py``)."""
    if core.is_array_like(updates) and core.get_aval(updates).dtype == np.bool_:
        raise TypeError("scatter_sub: expected a numeric operand and updates, got bool.")
    return scatter_add(operand, neg(_as_operand(updates)), indices, axes, mode)


# ---------------------------------------------------------------------------
# scatter (set)
# ---------------------------------------------------------------------------

scatter_p = _scatter_primitive("scatter", None, "biufc", "a numeric or boolean")
scatter = _scatter_wrapper(
    scatter_p, "``operand`` with ``updates`` written at the gathered positions (last wins)."
)


def _last_writer_mask(
    indices: Sequence[Any], shape: tuple[int, ...], axes: tuple[int, ...], mode: str
) -> Any:
    """Bool mask of index shape B: True for the update ``scatter`` keeps at its position."""
    # Scatter each update's id into a board of the indexed dims and read it back:
    # an update survives iff the board still holds its own id.
    k = len(axes)
    batch = core.get_aval(indices[0]).shape
    ids = _update_ids(batch, batch)
    board = _full(tuple(shape[a] for a in axes), -1, np.int64)
    board = scatter(board, ids, indices, tuple(range(k)), mode)
    return eq(gather(board, indices, tuple(range(k)), mode), ids)


def _scatter_transpose(
    ct: Any, operand: Any, updates: Any, *indices: Any, axes: tuple[int, ...], mode: str
) -> list[Any]:
    # Each output element is the operand's or exactly one update's (the last write):
    # ct_operand = ct with written positions zeroed; ct_updates = ct at the position for
    # the surviving update and 0 for overwritten ones (so repeated indices are exact).
    _check_not_linear("scatter", *indices)
    upd_aval = _aval(updates)
    ct_operand = (
        scatter(ct, _zeros(upd_aval), indices, axes, mode)
        if ad.is_undefined_primal(operand)
        else None
    )
    ct_updates = None
    if ad.is_undefined_primal(updates):
        shape = _aval(operand).shape
        keep = _last_writer_mask(indices, shape, axes, mode)
        batch = core.get_aval(keep).shape
        keep = broadcast_in_dim(keep, upd_aval.shape, tuple(range(len(batch))))
        ct_updates = select_n(keep, _zeros(upd_aval), gather(ct, indices, axes, mode))
    return [ct_operand, ct_updates] + [None] * len(indices)


# d scatter(x, u) = scatter(dx, du): which value lands where depends only on the indices,
# so scatter is linear in (operand, updates) jointly.
ad.deflinear_in(scatter_p, (0, 1), _scatter_transpose)
batching.batching_rules[scatter_p] = _scatter_batch_rule(scatter_p)

# ---------------------------------------------------------------------------
# scatter_mul
# ---------------------------------------------------------------------------

scatter_mul_p = _scatter_primitive("scatter_mul", np.multiply, "biufc", "a numeric or boolean")
scatter_mul = _scatter_wrapper(
    scatter_mul_p,
    "``operand`` times ``updates`` at the gathered positions (repeats multiply). "
    "NOTE: when indices repeat (or are unknown, under jit), second derivatives w.r.t. an "
    "update that is exactly 0 and shares its position are not exact (see _others_product).",
)


def _others_product(
    updates: Any,
    indices: Sequence[Any],
    axes: tuple[int, ...],
    mode: str,
    operand_aval: ShapedArray,
) -> Any:
    """For each update u_j: the product of the *other* updates at its position."""
    # prod_{k != j} u_k without dividing by zero: with P = product of the non-zero updates
    # and Z = the number of zero updates at the position,
    #   u_j != 0: Z == 0 ? P / u_j : 0        u_j == 0: Z == 1 ? P : 0
    # NOTE: exact to first order; the second derivative is not exact w.r.t. an update that
    # is exactly 0 while sharing its position with another update (the select is flat there).
    upd_aval = core.get_aval(updates)
    is_zero = eq(updates, _zeros(upd_aval))
    ones = _full(upd_aval.shape, 1, upd_aval.dtype)
    safe = select_n(is_zero, updates, ones)
    prod_nz = gather(
        scatter_mul(_full(operand_aval.shape, 1, operand_aval.dtype), safe, indices, axes, mode),
        indices,
        axes,
        mode,
    )
    n_zero = scatter_add(
        _full(operand_aval.shape, 0, np.int64),
        convert_element_type(is_zero, np.int64),
        indices,
        axes,
        mode,
    )
    n_zero = gather(n_zero, indices, axes, mode)
    zeros = _zeros(upd_aval)
    if_nonzero = select_n(eq(n_zero, _full(upd_aval.shape, 0, np.int64)), zeros, div(prod_nz, safe))
    if_zero = select_n(eq(n_zero, _full(upd_aval.shape, 1, np.int64)), zeros, prod_nz)
    return select_n(is_zero, if_nonzero, if_zero)


def _scatter_mul_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, axes: tuple[int, ...], mode: str
) -> tuple[Any, Any]:
    # out[p] = x[p] prod_j u_j  =>  d out = scatter_mul(dx, u) + x[p] sum_j du_j prod_{k!=j} u_k.
    # With unique indices (checked when the indices are concrete) prod_{k!=j} u_k = 1.
    operand, updates, *indices = primals
    d_operand, d_updates = tangents[0], tangents[1]
    out = scatter_mul(operand, updates, indices, axes, mode)
    t_out: Any = Zero.from_primal(out)
    if type(d_operand) is not Zero:
        t_out = scatter_mul(d_operand, updates, indices, axes, mode)
    if type(d_updates) is not Zero:
        op_aval = core.get_aval(operand)
        coef = gather(operand, indices, axes, mode)
        if not _known_unique(indices, op_aval.shape, axes, mode):
            coef = mul(coef, _others_product(updates, indices, axes, mode, op_aval))
        t_upd = scatter_add(_zeros(op_aval), mul(d_updates, coef), indices, axes, mode)
        t_out = ad.add_tangents(t_out, t_upd)
    return out, t_out


def _scatter_mul_transpose(
    ct: Any, operand: Any, updates: Any, *indices: Any, axes: tuple[int, ...], mode: str
) -> list[Any]:
    # For fixed updates, x -> scatter_mul(x, u) scales each element: it is its own transpose.
    _check_not_linear("scatter_mul", updates, *indices)
    return [scatter_mul(ct, updates, indices, axes, mode), None] + [None] * len(indices)


ad.jvp_rules[scatter_mul_p] = _scatter_mul_jvp
ad.transpose_rules[scatter_mul_p] = _scatter_mul_transpose
ad.linear_primitives.add(scatter_mul_p)
batching.batching_rules[scatter_mul_p] = _scatter_batch_rule(scatter_mul_p)

# ---------------------------------------------------------------------------
# scatter_min and scatter_max
# ---------------------------------------------------------------------------

scatter_min_p = _scatter_primitive("scatter_min", np.minimum, "biuf", "a real numeric or boolean")
scatter_min = _scatter_wrapper(
    scatter_min_p, "``operand`` with the minimum of it and ``updates`` at the gathered positions."
)
scatter_max_p = _scatter_primitive("scatter_max", np.maximum, "biuf", "a real numeric or boolean")
scatter_max = _scatter_wrapper(
    scatter_max_p, "``operand`` with the maximum of it and ``updates`` at the gathered positions."
)


def _scatter_extremum_jvp(p: Primitive) -> Any:
    # d out[p] = the mean of the tangents of the values tied for the extremum at p (the
    # operand's and every update's equal to the output there), as JAX: at a tie each of
    # the k tied values gets 1/k of the derivative. The masks and counts come from the
    # primals, so the rule is linear in (dx, du); a position no value equals (a NaN
    # output) gets 0.
    bind = _scatter_wrapper(p, "")

    def rule(
        primals: Sequence[Any], tangents: Sequence[Any], *, axes: tuple[int, ...], mode: str
    ) -> tuple[Any, Any]:
        operand, updates, *indices = primals
        d_operand, d_updates = tangents[0], tangents[1]
        out = bind(operand, updates, indices, axes, mode)
        if type(d_operand) is Zero and type(d_updates) is Zero:
            return out, Zero.from_primal(out)
        op_aval, upd_aval = core.get_aval(operand), core.get_aval(updates)
        zero_op, dt = _zeros(op_aval), op_aval.dtype
        operand_won = eq(operand, out)
        hits = eq(updates, gather(out, indices, axes, mode))
        tied = add(  # how many values tie at each position (0 under a NaN output)
            convert_element_type(operand_won, dt),
            scatter_add(zero_op, convert_element_type(hits, dt), indices, axes, mode),
        )
        total = add(
            select_n(operand_won, zero_op, ad.instantiate(d_operand)),
            scatter_add(
                zero_op,
                select_n(hits, _zeros(upd_aval), ad.instantiate(d_updates)),
                indices,
                axes,
                mode,
            ),
        )
        return out, div(total, lax_max(tied, _full(op_aval.shape, 1, dt)))

    return rule


ad.jvp_rules[scatter_min_p] = _scatter_extremum_jvp(scatter_min_p)
ad.jvp_rules[scatter_max_p] = _scatter_extremum_jvp(scatter_max_p)
batching.batching_rules[scatter_min_p] = _scatter_batch_rule(scatter_min_p)
batching.batching_rules[scatter_max_p] = _scatter_batch_rule(scatter_max_p)


__all__ = [
    "GatherScatterMode",
    "gather",
    "gather_p",
    "index_take",
    "scatter",
    "scatter_add",
    "scatter_add_p",
    "scatter_max",
    "scatter_max_p",
    "scatter_min",
    "scatter_min_p",
    "scatter_mul",
    "scatter_mul_p",
    "scatter_p",
    "scatter_sub",
]
