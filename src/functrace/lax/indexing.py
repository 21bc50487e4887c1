"""Indexing primitives: dynamic slices, gather and the scatter family.

The dynamic slices are defined here; gather and the scatters in
``functrace.lax.gather_scatter``, re-exported here.

Each primitive is one block: definition, NumPy impl, abstract eval, JVP and (if
linear) transpose rule. Index operands are array data (they may be traced);
everything that shapes the output (slice sizes, indexed axes, mode) is a static
parameter.

Index semantics, decided here for the whole library:

* ``dynamic_slice`` / ``dynamic_update_slice`` clamp every start index into
  ``[0, dim - size]`` so the window always stays in bounds. Negative starts are
  *not* wrapped (``-1`` clamps to ``0``); wrapping is the NumPy layer's job.
* ``gather`` and the scatters implement NumPy advanced indexing on a set of
  ``axes``: one integer index array per indexed axis, all of one shape ``B``.
  The result (and the scatter ``updates``) has shape ``B + the operand dims not
  in axes``. Negative indices wrap once, as in NumPy (``i + dim``). With
  ``mode="raise"`` an index still out of range raises ``IndexError`` eagerly;
  with ``mode="clip"`` it is clamped into ``[0, dim - 1]`` after wrapping.
* Repeated indices: ``scatter_add`` / ``scatter_mul`` / ``scatter_min`` /
  ``scatter_max`` combine every update; ``scatter`` keeps the last write, like
  NumPy assignment. The derivative of ``scatter_min``/``scatter_max`` at a tie is
  the mean of the tied values' tangents (the operand's and the updates'), as JAX's.
"""

from __future__ import annotations

from builtins import slice as builtins_slice
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace._prng import PRNGKeyArray
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.lax import gather_scatter
from functrace.lax._util import normalize_axis, register
from functrace.lax.base import operand_shape
from functrace.lax.elementwise import (
    add,
    clamp,
    convert_element_type,
    lt,
    select_n,
)
from functrace.lax.gather_scatter import *  # noqa: F403  (re-exported: see __all__)
from functrace.lax.gather_scatter import (
    _as_operand,
    _aval,
    _check_not_linear,
    _zeros,
    gather_p,
    scatter_p,
)
from functrace.lax.shapes import broadcast_in_dim, expand_dims, iota, squeeze
from functrace.lax.shapes import slice as lax_slice

# Gather and the scatters are defined in functrace.lax.gather_scatter (the dynamic-slice
# batching rules below lower per-example windows to them) and re-exported here.

# ---------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------


def _check_start_indices(name: str, operand: ShapedArray, starts: Sequence[ShapedArray]) -> None:
    if len(starts) != operand.ndim:
        raise ValueError(
            f"{name}: expected one start index per operand axis ({operand.ndim} "
            f"for operand shape {operand.shape}), got {len(starts)}. Pass a "
            f"sequence of {operand.ndim} scalar integers."
        )
    for k, s in enumerate(starts):
        if s.shape != () or s.dtype.kind not in "iu":
            raise TypeError(
                f"{name}: expected scalar integer start indices, got "
                f"{s.str_short()} for axis {k}. Pass Python ints or 0-d integer "
                f"arrays, one per axis."
            )


def _clamped_starts(
    shape: tuple[int, ...], starts: Sequence[Any], sizes: tuple[int, ...]
) -> tuple[int, ...]:
    # start = clip(start, 0, dim - size): the window always stays in bounds.
    return tuple(min(max(int(s), 0), d - n) for s, d, n in zip(starts, shape, sizes))


def _window(starts: tuple[int, ...], sizes: tuple[int, ...]) -> tuple[slice, ...]:
    return tuple(slice(s, s + n) for s, n in zip(starts, sizes))


def _window_indices(
    starts: Sequence[Any],
    bdims: Sequence[int | None],
    shape: tuple[int, ...],
    sizes: tuple[int, ...],
    size: int,
) -> list[Any]:
    """Per-example windows as gather indices, for start indices that differ per example.

    For each axis k: an int64 index array of shape ``(size, *sizes)`` holding
    ``clamp(start_k, 0, dim_k - size_k) + i_k`` (the start of example b plus the position
    in the window), so that gathering them reads each example's clamped window.
    """
    full = (size, *sizes)
    out = []
    for k, (s, b, d, n) in enumerate(zip(starts, bdims, shape, sizes)):
        dtype = core.get_aval(s).dtype
        if dtype.kind == "u":  # clamp from above in its own dtype: huge values stay huge
            hi = np.array(min(d - n, np.iinfo(dtype).max), dtype)[()]
            s = clamp(np.zeros((), dtype)[()], s, hi)
        s = clamp(np.int64(0), convert_element_type(s, np.int64), np.int64(d - n))
        s = (
            broadcast_in_dim(s, full, ())
            if b is None
            else broadcast_in_dim(batching.moveaxis(s, b, 0), full, (0,))
        )
        out.append(add(s, iota(np.int64, n, k + 1, full)))
    return out


# ---------------------------------------------------------------------------
# dynamic_slice
# ---------------------------------------------------------------------------


def _dynamic_slice_abstract(
    operand: ShapedArray, *starts: ShapedArray, slice_sizes: tuple[int, ...]
) -> ShapedArray:
    _check_start_indices("dynamic_slice", operand, starts)
    if len(slice_sizes) != operand.ndim or any(
        not 0 <= n <= d for n, d in zip(slice_sizes, operand.shape)
    ):
        raise ValueError(
            f"dynamic_slice: expected slice_sizes with one size in [0, dim] per "
            f"axis of operand shape {operand.shape}, got {slice_sizes}. A window "
            f"cannot be larger than the operand."
        )
    return ShapedArray(slice_sizes, operand.dtype, operand.weak_type)


def _dynamic_slice_impl(operand: Any, *starts: Any, slice_sizes: tuple[int, ...]) -> Any:
    _dynamic_slice_abstract(core.get_aval(operand), *core.avals_of(starts), slice_sizes=slice_sizes)
    x = np.asarray(operand)
    return x[_window(_clamped_starts(x.shape, starts, slice_sizes), slice_sizes)]


dynamic_slice_p = register(Primitive("dynamic_slice"), _dynamic_slice_impl, _dynamic_slice_abstract)


def dynamic_slice(
    operand: Any,
    start_indices: Sequence[Any],
    slice_sizes: Sequence[int],
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Any:
    """The window of ``slice_sizes`` at ``start_indices``. As in JAX, a negative start
    counts from the end once (``-1`` is the last position; per axis with a sequence of
    bools, an error for a known negative start with ``allow_negative_indices=False``),
    then the window is clamped to stay in bounds. Also on typed key arrays (whole keys
    move), as in JAX."""
    sizes = tuple(int(n) for n in slice_sizes)
    if type(operand) is PRNGKeyArray:  # slice the keys' data, the words whole
        starts, allow = _key_starts(start_indices, allow_negative_indices)
        out = dynamic_slice(operand._base, starts, (*sizes, 2), allow_negative_indices=allow)
        return PRNGKeyArray(out)
    starts = _start_operands("dynamic_slice", operand, start_indices, allow_negative_indices)
    return dynamic_slice_p.bind(operand, *starts, slice_sizes=sizes)


def _key_starts(
    start_indices: Sequence[Any], allow: bool | Sequence[bool]
) -> tuple[list[Any], bool | list[bool]]:
    """The starts and flags for a key array's data: a 0 for the trailing axis of words."""
    starts = [*start_indices, 0]
    return starts, allow if isinstance(allow, bool) else [*(bool(a) for a in allow), True]


def _start_operands(
    fname: str, operand: Any, start_indices: Sequence[Any], allow: bool | Sequence[bool]
) -> list[Any]:
    shape = core.get_aval(operand).shape
    starts = list(start_indices)
    allows = [bool(allow)] * len(starts) if isinstance(allow, bool) else [bool(a) for a in allow]
    if len(allows) != len(starts):
        raise ValueError(
            f"{fname}: expected {len(starts)} allow_negative_indices flags (one per start "
            f"index), got {len(allows)}."
        )
    out = []
    for axis, (s, ok) in enumerate(zip(starts, allows)):
        if ok and axis < len(shape):
            s = _wrap_negative(s, shape[axis])
        elif not ok and not isinstance(s, core.Tracer) and np.ndim(s) == 0 and int(s) < 0:
            raise ValueError(
                f"{fname}: expected a non-negative start index on axis {axis} with "
                f"allow_negative_indices=False, got {int(s)}."
            )
        out.append(_as_operand(s))
    return out


def _dynamic_slice_transpose(
    ct: Any, operand: Any, *starts: Any, slice_sizes: tuple[int, ...]
) -> list[Any]:
    # dynamic_slice is a linear selection: its transpose writes ct into zeros.
    _check_not_linear("dynamic_slice", *starts)  # starts as bound: the impl clamps them
    ct_operand = dynamic_update_slice_p.bind(_zeros(operand.aval), ct, *starts)
    return [ct_operand] + [None] * len(starts)


ad.deflinear_in(dynamic_slice_p, (0,), _dynamic_slice_transpose)  # d slice(x) = slice(dx)


def _dynamic_slice_batch(
    vals: Sequence[Any], bdims: Sequence[Any], *, slice_sizes: tuple[int, ...]
) -> tuple[Any, int]:
    operand, *starts = vals
    b_op, *b_starts = bdims
    size = batching.batch_size(vals, bdims)
    if all(b is None for b in b_starts):  # one window for all: take the whole batch axis
        starts.insert(b_op, np.int64(0))
        sizes = slice_sizes[:b_op] + (size,) + slice_sizes[b_op:]
        return dynamic_slice_p.bind(operand, *starts, slice_sizes=sizes), b_op
    # Each example has its own window: gather it with index arrays of shape (size, *sizes),
    # the example's number indexing the operand's batch axis (if it has one).
    op_shape = list(core.get_aval(operand).shape)
    if b_op is not None:
        del op_shape[b_op]
    axes = [a if b_op is None else a + (a >= b_op) for a in range(len(op_shape))]
    idx = _window_indices(starts, b_starts, tuple(op_shape), slice_sizes, size)
    if b_op is not None:
        idx.insert(0, iota(np.int64, size, 0, (size, *slice_sizes)))
        axes.insert(0, b_op)
    return gather_p.bind(operand, *idx, axes=tuple(axes), mode="clip"), 0


batching.batching_rules[dynamic_slice_p] = _dynamic_slice_batch

# ---------------------------------------------------------------------------
# dynamic_update_slice
# ---------------------------------------------------------------------------


def _dynamic_update_slice_abstract(
    operand: ShapedArray, update: ShapedArray, *starts: ShapedArray
) -> ShapedArray:
    _check_start_indices("dynamic_update_slice", operand, starts)
    if update.ndim != operand.ndim or any(u > d for u, d in zip(update.shape, operand.shape)):
        raise ValueError(
            f"dynamic_update_slice: expected an update no larger than the "
            f"operand along each axis, got update shape {update.shape} for "
            f"operand shape {operand.shape}. Reshape or slice the update first."
        )
    if update.dtype != operand.dtype:
        raise TypeError(
            f"dynamic_update_slice: expected an update of the operand's dtype "
            f"{operand.dtype.name}, got {update.dtype.name}. Convert it with "
            f"lax.convert_element_type first."
        )
    return operand


def _dynamic_update_slice_impl(operand: Any, update: Any, *starts: Any) -> Any:
    _dynamic_update_slice_abstract(
        core.get_aval(operand), core.get_aval(update), *core.avals_of(starts)
    )
    out = np.array(operand, copy=True)
    sizes = np.shape(update)
    out[_window(_clamped_starts(out.shape, starts, sizes), sizes)] = update
    return out


dynamic_update_slice_p = register(
    Primitive("dynamic_update_slice"), _dynamic_update_slice_impl, _dynamic_update_slice_abstract
)


def dynamic_update_slice(
    operand: Any,
    update: Any,
    start_indices: Sequence[Any],
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Any:
    """``operand`` with ``update`` written at ``start_indices``: negative starts count
    from the end once, then the window is clamped to stay in bounds (as
    :func:`dynamic_slice`). Also on typed key arrays (``update`` keys too), as in JAX."""
    if type(operand) is PRNGKeyArray or type(update) is PRNGKeyArray:
        if type(operand) is not PRNGKeyArray or type(update) is not PRNGKeyArray:
            raise TypeError(
                "dynamic_update_slice: expected an operand and an update that are both "
                f"key arrays or neither, got {getattr(operand, 'dtype', type(operand))} "
                f"and {getattr(update, 'dtype', type(update))}."
            )
        starts, allow = _key_starts(start_indices, allow_negative_indices)
        out = dynamic_update_slice(
            operand._base, update._base, starts, allow_negative_indices=allow
        )
        return PRNGKeyArray(out)
    starts = _start_operands("dynamic_update_slice", operand, start_indices, allow_negative_indices)
    return dynamic_update_slice_p.bind(operand, update, *starts)


def _dynamic_update_slice_transpose(ct: Any, operand: Any, update: Any, *starts: Any) -> list[Any]:
    # out = operand outside the window, update inside: split ct the same way.
    _check_not_linear("dynamic_update_slice", *starts)
    upd_aval = _aval(update)
    ct_operand = (  # the starts as bound (the impls clamp them), not wrapped again
        dynamic_update_slice_p.bind(ct, _zeros(upd_aval), *starts)
        if ad.is_undefined_primal(operand)
        else None
    )
    ct_update = (
        dynamic_slice_p.bind(ct, *starts, slice_sizes=upd_aval.shape)
        if ad.is_undefined_primal(update)
        else None
    )
    return [ct_operand, ct_update] + [None] * len(starts)


# d dus(x, u) = dus(dx, du): linear in (operand, update) jointly.
ad.deflinear_in(dynamic_update_slice_p, (0, 1), _dynamic_update_slice_transpose)


def _dynamic_update_slice_batch(vals: Sequence[Any], bdims: Sequence[Any]) -> tuple[Any, int]:
    operand, update, *starts = vals
    b_op, b_upd, *b_starts = bdims
    size = batching.batch_size(vals, bdims)
    if all(b is None for b in b_starts):  # one window for all: span the whole batch axis
        dst = b_op if b_op is not None else b_upd
        operand = batching.bdim_at(operand, b_op, size, dst)
        update = batching.bdim_at(update, b_upd, size, dst)
        starts.insert(dst, np.int64(0))
        return dynamic_update_slice_p.bind(operand, update, *starts), dst
    # Each example writes its own window: scatter the update with index arrays of shape
    # (size, *update shape), the example's number indexing the batch axis.
    operand = batching.bdim_at(operand, b_op, size, 0)
    update = batching.bdim_at(update, b_upd, size, 0)
    op_shape = core.get_aval(operand).shape[1:]
    upd_shape = core.get_aval(update).shape[1:]
    idx = _window_indices(starts, b_starts, op_shape, upd_shape, size)
    idx.insert(0, iota(np.int64, size, 0, (size, *upd_shape)))
    axes = tuple(range(len(op_shape) + 1))
    return scatter_p.bind(operand, update, *idx, axes=axes, mode="clip"), 0


batching.batching_rules[dynamic_update_slice_p] = _dynamic_update_slice_batch


def _wrap_negative(index: Any, size: int) -> Any:
    """A negative start index counts from the end (``index + size``), as in JAX."""
    if not isinstance(index, core.Tracer):
        i = np.asarray(index)
        if i.ndim == 0 and i.dtype.kind in "iu":
            return int(i) + size if int(i) < 0 else int(i)
        return index
    idx = _as_operand(index)
    dt = core.get_aval(idx).dtype
    zero, n = np.zeros((), dt), np.asarray(size, dt)
    return select_n(lt(idx, zero), idx, add(idx, n))


def dynamic_slice_in_dim(
    operand: Any,
    start_index: Any,
    slice_size: int,
    axis: int = 0,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """``dynamic_slice`` along one ``axis``; the other axes are kept whole. A negative
    ``start_index`` counts from the end (unless ``allow_negative_indices=False``); the
    window is clamped to stay in bounds."""
    shape = operand_shape(operand)
    axis = normalize_axis("dynamic_slice_in_dim", axis, len(shape))
    starts = [start_index if k == axis else 0 for k in range(len(shape))]
    sizes = [int(slice_size) if k == axis else d for k, d in enumerate(shape)]
    allow = [allow_negative_indices and k == axis for k in range(len(shape))]
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_update_slice_in_dim(
    operand: Any,
    update: Any,
    start_index: Any,
    axis: int = 0,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """``dynamic_update_slice`` along one ``axis`` (the update spans the other axes)."""
    shape = operand_shape(operand)
    axis = normalize_axis("dynamic_update_slice_in_dim", axis, len(shape))
    starts = [start_index if k == axis else 0 for k in range(len(shape))]
    allow = [allow_negative_indices and k == axis for k in range(len(shape))]
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_index_in_dim(
    operand: Any,
    index: Any,
    axis: int = 0,
    keepdims: bool = True,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """The entry at a (traced) ``index`` along ``axis``; ``keepdims=False`` drops that
    axis. Negative indices count from the end; out-of-range ones are clamped."""
    ndim = len(operand_shape(operand))
    axis = normalize_axis("dynamic_index_in_dim", axis, ndim)
    out = dynamic_slice_in_dim(
        operand, index, 1, axis, allow_negative_indices=allow_negative_indices
    )
    if keepdims:
        return out
    if type(out) is PRNGKeyArray:
        return PRNGKeyArray(squeeze(out._base, (axis,)))
    return squeeze(out, (axis,))


def dynamic_update_index_in_dim(
    operand: Any,
    update: Any,
    index: Any,
    axis: int,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """``operand`` with ``update`` written at a (traced) ``index`` along ``axis``;
    ``update`` has operand's shape with that axis of size 1, or without that axis."""
    shape = operand_shape(operand)
    axis = normalize_axis("dynamic_update_index_in_dim", axis, len(shape))
    if len(operand_shape(update)) == len(shape) - 1:
        if type(update) is PRNGKeyArray:
            update = PRNGKeyArray(expand_dims(update._base, (axis,)))
        else:
            update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(
        operand, update, index, axis, allow_negative_indices=allow_negative_indices
    )


def slice_in_dim(
    operand: Any,
    start_index: int | None,
    limit_index: int | None,
    stride: int = 1,
    axis: int = 0,
) -> Any:
    """``operand[start:limit:stride]`` along ``axis`` (static bounds, negative ones
    counting from the end, None for the ends)."""
    shape = operand_shape(operand)
    axis = normalize_axis("slice_in_dim", axis, len(shape))
    n = shape[axis]
    start, limit, _ = builtins_slice(start_index, limit_index).indices(n)
    starts = [start if k == axis else 0 for k in range(len(shape))]
    limits = [limit if k == axis else d for k, d in enumerate(shape)]
    strides = [int(stride) if k == axis else 1 for k in range(len(shape))]
    if limit < start:
        limits[axis] = start
    return lax_slice(operand, tuple(starts), tuple(limits), tuple(strides))


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """The entry at static ``index`` along ``axis`` (negative counts from the end);
    ``keepdims=False`` drops that axis."""
    shape = operand_shape(operand)
    axis = normalize_axis("index_in_dim", axis, len(shape))
    i = int(index)
    if not -shape[axis] <= i < shape[axis]:
        raise IndexError(
            f"index_in_dim: expected an index in [{-shape[axis]}, {shape[axis]}) for axis "
            f"{axis} of shape {shape}, got {index}."
        )
    i %= shape[axis]
    out = slice_in_dim(operand, i, i + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


__all__ = [
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_slice_p",
    "dynamic_update_slice",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice_in_dim",
    "dynamic_update_slice_p",
    "index_in_dim",
    "slice_in_dim",
]
__all__ += gather_scatter.__all__
