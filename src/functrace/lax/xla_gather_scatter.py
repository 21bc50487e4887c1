"""``lax.gather`` and the scatters in both forms: functrace's (index arrays and the axes
they index, ``gather_scatter.py``) and JAX's XLA form (``dimension_numbers``, with
``slice_sizes`` for ``gather`` and ``update_shape`` for ``scatter_apply``).

The XLA form is translated, with lax operations, into functrace's: for every operand
dimension an index array of the result's (or the updates') shape, the window's start
(read from the last axis of the indices through ``start_index_map``, or a batch
position for a batching dimension) plus the offset inside the window. Gathering or
scattering at those positions element by element gives XLA's result already in its
layout, and the existing primitives' rules give the derivatives, batching and
compilation.

Decisions (JAX's, checked against JAX with x64):

* The index vector is the last axis of the indices; the other axes are the batch.
* A window's start is clamped so the window fits (``mode=None``, ``'clip'`` and
  ``'promise_in_bounds'`` for ``gather``; ``'clip'`` for the scatters). Indices do not
  wrap from the end here (``-1`` is out of range, clamped to 0), as in JAX's ``lax``.
* ``gather(..., mode='fill')``: a window whose start is out of range (the window would
  not fit) is ``fill_value`` entirely, by default NaN for inexact dtypes, the smallest
  signed or largest unsigned integer, or True. ``fill_value`` is ignored in the other
  modes, as in JAX.
* The scatters' default (``None``, ``'fill'``, ``'drop'``) drops every update of a
  window whose start is out of range. ``'promise_in_bounds'`` clamps, as functrace's
  form does (JAX's XLA drops then: the promise is the caller's).
* Derivatives follow the clamped positions: JAX's gradient of a default-mode
  ``gather`` drops the cotangent of a window it clamped (its transpose drops), where
  functrace's reaches the clamped positions, as with ``'clip'`` in both.
* ``operand_batching_dims`` and their indices' partners are supported: a batch
  position of the indices reads (or writes) that position of the operand's axis.
* ``unique_indices`` and ``indices_are_sorted`` are promises about the indices that
  functrace does not need; they are accepted and ignored.
* Bad dimension numbers raise ``TypeError`` naming the function and the mismatch, as
  JAX's shape rules do; a mode this form does not know raises ``ValueError``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.lax import composite_higher
from functrace.lax import elementwise as ew
from functrace.lax import gather_scatter as gs
from functrace.lax._util import operator_index
from functrace.lax.base import broadcast_in_dim, convert_element_type, reshape
from functrace.lax.composite_higher import apply_counted
from functrace.lax.composite_more import GatherDimensionNumbers, ScatterDimensionNumbers
from functrace.lax.shapes import iota
from functrace.lax.shapes import slice as lax_slice

# ---------------------------------------------------------------------------
# Checking dimension numbers
# ---------------------------------------------------------------------------


def _array(fname: str, x: Any, what: str) -> Any:
    return composite_higher._array(fname, x, f"for {what}")


def _check_numbers(fname: str, dn: Any, cls: type) -> None:
    if not isinstance(dn, cls):
        raise TypeError(
            f"{fname}: expected dimension_numbers to be a lax.{cls.__name__}, got "
            f"{type(dn).__name__}."
        )


def _dims(fname: str, field: str, v: Any, *, ordered: bool = False) -> tuple[int, ...]:
    """``v`` as a tuple of distinct ints (sorted when ``ordered``, as XLA requires)."""
    try:
        t = tuple(operator_index(d) for d in v)
    except TypeError:
        raise TypeError(f"{fname}: expected {field} to be a sequence of ints, got {v!r}.") from None
    if len(set(t)) != len(t):
        raise TypeError(f"{fname}: expected distinct entries in {field}, got {t}.")
    if ordered and list(t) != sorted(t):
        raise TypeError(f"{fname}: expected {field} in increasing order, got {t}.")
    return t


def _within(fname: str, field: str, t: tuple[int, ...], n: int, what: str) -> None:
    if any(not 0 <= d < n for d in t):
        raise TypeError(f"{fname}: expected {field} in [0, {n}) ({what}), got {t}.")


def _mode(fname: str, mode: Any) -> str:
    """JAX's ``mode=``: ``'clip'`` or ``'fill'`` (``None`` is ``default``'s)."""
    if isinstance(mode, str) and mode == "raise":
        raise ValueError(
            f"{fname}: expected mode None, 'clip', 'fill', 'drop', 'promise_in_bounds' or a "
            f"lax.GatherScatterMode with dimension_numbers, got 'raise' (functrace's form "
            f"with index arrays and axes takes it)."
        )
    return gs._resolve_mode(fname, mode)


def _batching(
    fname: str,
    names: tuple[str, str],
    operand_dims: tuple[int, ...],
    index_dims: tuple[int, ...],
    op_shape: tuple[int, ...],
    batch_shape: tuple[int, ...],
) -> None:
    _within(fname, names[0], operand_dims, len(op_shape), f"operand rank {len(op_shape)}")
    _within(fname, names[1], index_dims, len(batch_shape), "the batch axes of the indices")
    if len(operand_dims) != len(index_dims):
        raise TypeError(
            f"{fname}: expected {names[0]} and {names[1]} of one length, got "
            f"{operand_dims} and {index_dims}."
        )
    for d, i in zip(operand_dims, index_dims):
        if op_shape[d] != batch_shape[i]:
            raise TypeError(
                f"{fname}: expected operand dimension {d} (size {op_shape[d]}) and indices "
                f"dimension {i} (size {batch_shape[i]}) of one size: they are batched "
                f"together by {names[0]}/{names[1]}."
            )


def _index_vectors(fname: str, indices: Any, n: int, field: str) -> tuple[tuple[int, ...], int]:
    """The batch shape of ``indices`` (all axes but the last, the index vector's)."""
    aval = core.get_aval(indices)
    if aval.dtype.kind not in "iu":
        raise TypeError(f"{fname}: expected integer indices, got {aval.dtype.name}.")
    if aval.ndim == 0 or aval.shape[-1] != n:
        raise TypeError(
            f"{fname}: expected indices whose last axis (the index vector) has {n} entries, "
            f"one per entry of {field}, got indices of shape {aval.shape}."
        )
    return aval.shape[:-1], aval.ndim - 1


# ---------------------------------------------------------------------------
# Index arrays
# ---------------------------------------------------------------------------


def _start(indices: Any, k: int, dim: int, size: int) -> tuple[Any, Any]:
    """Entry ``k`` of every index vector as int64 clamped into ``[0, dim - size]``, and
    the mask of the starts that were in that range already."""
    aval = core.get_aval(indices)
    batch = aval.shape[:-1]
    s = reshape(lax_slice(indices, (0,) * len(batch) + (k,), batch + (k + 1,)), batch)
    if aval.dtype.kind == "u":  # huge unsigned values stay out of range after the cast
        s = ew.min(s, gs._full(batch, min(dim, np.iinfo(aval.dtype).max), aval.dtype))
    s = convert_element_type(s, np.dtype(np.int64))
    hi = gs._full(batch, dim - size, np.int64)
    zero = gs._full(batch, 0, np.int64)
    ok = ew.bitwise_and(ew.ge(s, zero), ew.le(s, hi))
    return ew.min(ew.max(s, zero), hi), ok


def _positions(
    indices: Any,
    op_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    batch_axes: tuple[int, ...],
    starts_of: dict[int, int],
    batched_with: dict[int, int],
    window_axis: dict[int, int],
    sizes: tuple[int, ...],
) -> tuple[list[Any], Any]:
    """One int64 index array of ``out_shape`` per operand dimension, and the mask (over
    the batch) of the windows whose start was in range.

    ``batch_axes``: the result axes of the indices' batch axes, in order; ``starts_of``:
    operand dimension -> entry of the index vector; ``batched_with``: operand batching
    dimension -> indices batch axis; ``window_axis``: operand dimension -> result axis
    of its offset inside the window; ``sizes``: the window's size in each dimension."""
    out, ok = [], None
    for d, dim in enumerate(op_shape):
        if d in starts_of:
            s, ok_d = _start(indices, starts_of[d], dim, sizes[d])
            ok = ok_d if ok is None else ew.bitwise_and(ok, ok_d)
            pos = broadcast_in_dim(s, out_shape, batch_axes)
        elif d in batched_with:
            pos = iota(np.int64, out_shape[batch_axes[batched_with[d]]], 0, None)
            pos = broadcast_in_dim(pos, out_shape, (batch_axes[batched_with[d]],))
        else:
            pos = gs._full(out_shape, 0, np.int64)
        if d in window_axis:
            a = window_axis[d]
            pos = ew.add(pos, iota(np.int64, out_shape[a], a, out_shape))
        out.append(pos)
    return out, ok


# ---------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------


def _gather_xla(
    operand: Any,
    start_indices: Any,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: Any = None,
    fill_value: Any = None,
) -> Any:
    fname = "gather"
    operand = _array(fname, operand, "operand")
    indices = _array(fname, start_indices, "start_indices")
    dn = dimension_numbers
    _check_numbers(fname, dn, GatherDimensionNumbers)
    m = "clip" if mode is None else _mode(fname, mode)
    op_shape = core.get_aval(operand).shape
    rank = len(op_shape)
    offset = _dims(fname, "offset_dims", dn.offset_dims, ordered=True)
    collapsed = _dims(fname, "collapsed_slice_dims", dn.collapsed_slice_dims, ordered=True)
    smap = _dims(fname, "start_index_map", dn.start_index_map)
    obatch = _dims(fname, "operand_batching_dims", dn.operand_batching_dims, ordered=True)
    ibatch = _dims(fname, "start_indices_batching_dims", dn.start_indices_batching_dims)
    sizes = _sizes(fname, slice_sizes)
    if len(sizes) != rank:
        raise TypeError(
            f"{fname}: expected one slice size per operand dimension ({rank} for operand "
            f"shape {op_shape}), got slice_sizes={sizes}."
        )
    for d, (n, dim) in enumerate(zip(sizes, op_shape)):
        if not 0 <= n <= dim:
            raise TypeError(
                f"{fname}: expected slice_sizes[{d}] in [0, {dim}] (operand shape "
                f"{op_shape}), got {n}."
            )
    batch, nb = _index_vectors(fname, indices, len(smap), "start_index_map")
    _within(fname, "collapsed_slice_dims", collapsed, rank, f"operand rank {rank}")
    _within(fname, "start_index_map", smap, rank, f"operand rank {rank}")
    names = ("operand_batching_dims", "start_indices_batching_dims")
    _batching(fname, names, obatch, ibatch, op_shape, batch)
    for field, dims in (("collapsed_slice_dims", collapsed), ("operand_batching_dims", obatch)):
        if any(sizes[d] != 1 for d in dims):
            raise TypeError(
                f"{fname}: expected slice size 1 in the {field} {dims}, got slice_sizes={sizes}."
            )
    if set(collapsed) & set(obatch) or set(smap) & set(obatch):
        raise TypeError(
            f"{fname}: expected operand_batching_dims {obatch} apart from "
            f"collapsed_slice_dims {collapsed} and start_index_map {smap}."
        )
    window = [d for d in range(rank) if d not in collapsed and d not in obatch]
    out_rank = nb + len(offset)
    if len(window) != len(offset):
        raise TypeError(
            f"{fname}: expected one entry of offset_dims per operand dimension neither "
            f"collapsed nor batched ({len(window)}: {tuple(window)}), got offset_dims="
            f"{offset}."
        )
    _within(fname, "offset_dims", offset, out_rank, f"the result's rank {out_rank}")
    batch_axes = tuple(a for a in range(out_rank) if a not in offset)
    out_shape = [0] * out_rank
    for a, n in zip(batch_axes, batch):
        out_shape[a] = n
    for a, d in zip(offset, window):
        out_shape[a] = sizes[d]
    pos, ok = _positions(
        indices,
        op_shape,
        tuple(out_shape),
        batch_axes,
        {d: k for k, d in enumerate(smap)},
        dict(zip(obatch, ibatch)),
        dict(zip(window, offset)),
        sizes,
    )
    if rank == 0:  # a 0-d operand: every window is the whole of it
        return broadcast_in_dim(operand, tuple(out_shape), ())
    got = gs.gather(operand, pos, tuple(range(rank)), "clip")
    if m != "fill" or ok is None:
        return got
    dtype = core.get_aval(operand).dtype
    fill = gs._default_fill(dtype) if fill_value is None else fill_value
    keep = broadcast_in_dim(ok, tuple(out_shape), batch_axes)
    return ew.select_n(keep, gs._full(tuple(out_shape), fill, dtype), got)


def _sizes(fname: str, v: Any) -> tuple[int, ...]:
    try:
        return tuple(operator_index(d) for d in v)
    except TypeError:
        raise TypeError(
            f"{fname}: expected slice_sizes to be a sequence of ints, got {v!r}."
        ) from None


# ---------------------------------------------------------------------------
# The scatters
# ---------------------------------------------------------------------------


def _scatter_positions(
    fname: str, operand: Any, indices: Any, update_shape: tuple[int, ...], dn: Any
) -> tuple[list[Any], Any]:
    """The index arrays (of ``update_shape``) and the in-range mask of a scatter."""
    _check_numbers(fname, dn, ScatterDimensionNumbers)
    op_shape = core.get_aval(operand).shape
    rank = len(op_shape)
    uwin = _dims(fname, "update_window_dims", dn.update_window_dims, ordered=True)
    inserted = _dims(fname, "inserted_window_dims", dn.inserted_window_dims, ordered=True)
    smap = _dims(fname, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims)
    obatch = _dims(fname, "operand_batching_dims", dn.operand_batching_dims, ordered=True)
    ibatch = _dims(fname, "scatter_indices_batching_dims", dn.scatter_indices_batching_dims)
    batch, nb = _index_vectors(fname, indices, len(smap), "scatter_dims_to_operand_dims")
    _within(fname, "inserted_window_dims", inserted, rank, f"operand rank {rank}")
    _within(fname, "scatter_dims_to_operand_dims", smap, rank, f"operand rank {rank}")
    names = ("operand_batching_dims", "scatter_indices_batching_dims")
    _batching(fname, names, obatch, ibatch, op_shape, batch)
    if set(inserted) & set(obatch) or set(smap) & set(obatch):
        raise TypeError(
            f"{fname}: expected operand_batching_dims {obatch} apart from "
            f"inserted_window_dims {inserted} and scatter_dims_to_operand_dims {smap}."
        )
    window = [d for d in range(rank) if d not in inserted and d not in obatch]
    if len(window) != len(uwin) or len(update_shape) != nb + len(uwin):
        raise TypeError(
            f"{fname}: expected updates of rank {nb + len(window)} (the {nb} batch axes of "
            f"the indices and one window axis per operand dimension neither inserted nor "
            f"batched) with update_window_dims naming the {len(window)} window axes, got "
            f"updates of shape {update_shape} and update_window_dims={uwin}."
        )
    _within(fname, "update_window_dims", uwin, len(update_shape), "the updates' rank")
    batch_axes = tuple(a for a in range(len(update_shape)) if a not in uwin)
    got_batch = tuple(update_shape[a] for a in batch_axes)
    if got_batch != batch:
        raise TypeError(
            f"{fname}: expected the updates' scatter axes {batch_axes} to have the batch "
            f"shape of the indices {batch}, got {got_batch} (updates of shape {update_shape})."
        )
    sizes = [1] * rank
    for a, d in zip(uwin, window):
        if update_shape[a] > op_shape[d]:
            raise TypeError(
                f"{fname}: expected update window axis {a} (size {update_shape[a]}) to fit "
                f"operand dimension {d} (size {op_shape[d]}), got updates of shape "
                f"{update_shape} for operand shape {op_shape}."
            )
        sizes[d] = update_shape[a]
    return _positions(
        indices,
        op_shape,
        update_shape,
        batch_axes,
        {d: k for k, d in enumerate(smap)},
        dict(zip(obatch, ibatch)),
        dict(zip(window, uwin)),
        tuple(sizes),
    )


def _scatter_xla(
    fname: str,
    combine: Callable[..., Any],
    operand: Any,
    indices: Any,
    updates: Any,
    dn: Any,
    mode: Any,
) -> Any:
    """``combine`` (a functrace-form scatter) of ``updates`` at XLA's positions."""
    operand = _array(fname, operand, "operand")
    indices = _array(fname, indices, "scatter_indices")
    updates = _array(fname, updates, "updates")
    m = "fill" if mode is None else _mode(fname, mode)
    pos, ok = _scatter_positions(fname, operand, indices, core.get_aval(updates).shape, dn)
    op_shape = core.get_aval(operand).shape
    if not op_shape:
        raise TypeError(f"{fname}: expected an operand with at least one axis, got shape ().")
    if m == "fill" and ok is not None:
        # A dropped window's positions are sent past the end, where the fill mode of
        # functrace's scatters skips them.
        upd_shape = core.get_aval(updates).shape
        batch_axes = tuple(a for a in range(len(upd_shape)) if a not in dn.update_window_dims)
        keep = broadcast_in_dim(ok, upd_shape, batch_axes)
        pos = [
            ew.select_n(keep, gs._full(upd_shape, n, np.int64), p) for p, n in zip(pos, op_shape)
        ]
    return combine(operand, updates, pos, tuple(range(len(op_shape))), m)


def _make_scatter(fname: str, combine: Callable[..., Any]) -> Callable[..., Any]:
    def xla(
        operand: Any,
        scatter_indices: Any,
        updates: Any,
        dimension_numbers: ScatterDimensionNumbers,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
    ) -> Any:
        return _scatter_xla(
            fname, combine, operand, scatter_indices, updates, dimension_numbers, mode
        )

    return xla


def _scatter_apply_xla(
    operand: Any,
    scatter_indices: Any,
    func: Callable[[Any], Any],
    dimension_numbers: ScatterDimensionNumbers,
    *,
    update_shape: Sequence[int] = (),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: Any = None,
) -> Any:
    fname = "scatter_apply"
    if not callable(func):
        raise TypeError(f"{fname}: expected func to be callable, got {func!r}.")
    operand = _array(fname, operand, "operand")
    try:
        shape = tuple(operator_index(d) for d in update_shape)
    except TypeError:
        raise TypeError(
            f"{fname}: expected update_shape to be a sequence of ints, got {update_shape!r}."
        ) from None
    # How many updates land on each position, then func applied that many times there.
    ones = np.ones(shape, np.int64)
    zeros = np.zeros(core.get_aval(operand).shape, np.int64)
    counts = _scatter_xla(
        fname, gs.scatter_add, zeros, scatter_indices, ones, dimension_numbers, mode
    )
    return apply_counted(fname, operand, counts, func)


# ---------------------------------------------------------------------------
# The public functions: one per name, taking either form
# ---------------------------------------------------------------------------

_JAX_ONLY = frozenset(
    {
        "dimension_numbers",
        "slice_sizes",
        "update_shape",
        "unique_indices",
        "indices_are_sorted",
    }
)


def _is_jax_form(args: tuple[Any, ...], kwargs: dict[str, Any], at: int, cls: type) -> bool:
    """Whether a call is in JAX's form: dimension numbers at position ``at`` (of the
    arguments after the operand) or a keyword only JAX's form has."""
    return (len(args) > at and isinstance(args[at], cls)) or bool(_JAX_ONLY & kwargs.keys())


def _call_jax_form(
    fname: str, f: Callable[..., Any], operand: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    sig = inspect.signature(f)
    try:
        sig.bind(operand, *args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{fname}: {e}; JAX's form is {fname}{sig}.") from None
    return f(operand, *args, **kwargs)


def gather(operand: Any, *args: Any, **kwargs: Any) -> Any:
    """Gather in either form.

    functrace's: ``gather(operand, indices, axes, mode='raise', fill_value=None)``,
    NumPy advanced indexing (``functrace.lax.gather_scatter.gather``).

    JAX's: ``gather(operand, start_indices, dimension_numbers, slice_sizes, *,
    unique_indices=False, indices_are_sorted=False, mode=None, fill_value=None)`` with a
    ``GatherDimensionNumbers``: for each index vector (the last axis of
    ``start_indices``) the window of ``slice_sizes`` starting where ``start_index_map``
    says, its ``collapsed_slice_dims`` dropped and its other axes at ``offset_dims`` of
    the result; ``operand_batching_dims`` pair operand axes with the batch axes
    ``start_indices_batching_dims``. ``mode``: None, ``'clip'`` and
    ``'promise_in_bounds'`` clamp the starts so the window fits; ``'fill'`` gives
    ``fill_value`` (default NaN, the smallest signed or largest unsigned integer, or
    True) for a whole window whose start is out of range.

    >>> import functrace as ft, numpy as np
    >>> dn = ft.lax.GatherDimensionNumbers(
    ...     offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    >>> ft.lax.gather(np.arange(6.0).reshape(3, 2), np.array([[2], [0]]), dn, (1, 2))
    array([[4., 5.],
           [0., 1.]])
    """
    if _is_jax_form(args, kwargs, 1, GatherDimensionNumbers):
        return _call_jax_form("gather", _gather_xla, operand, args, kwargs)
    return gs.gather(operand, *args, **kwargs)


def _public_scatter(fname: str, simple: Callable[..., Any], what: str) -> Callable[..., Any]:
    xla = _make_scatter(fname, simple)

    def f(operand: Any, *args: Any, **kwargs: Any) -> Any:
        if _is_jax_form(args, kwargs, 2, ScatterDimensionNumbers):
            return _call_jax_form(fname, xla, operand, args, kwargs)
        return simple(operand, *args, **kwargs)

    f.__name__ = f.__qualname__ = fname
    f.__doc__ = f"""``operand`` with ``updates`` {what}, in either form.

    functrace's: ``{fname}(operand, updates, indices, axes, mode='raise')``, NumPy
    advanced indexing (``functrace.lax.gather_scatter.{fname}``).

    JAX's: ``{fname}(operand, scatter_indices, updates, dimension_numbers, *,
    indices_are_sorted=False, unique_indices=False, mode=None)`` with a
    ``ScatterDimensionNumbers``: each index vector (the last axis of
    ``scatter_indices``) starts, through ``scatter_dims_to_operand_dims``, a window
    whose axes are the ``update_window_dims`` of ``updates`` (the
    ``inserted_window_dims`` of the operand have size 1 and no axis there; the
    ``operand_batching_dims`` pair operand axes with the batch axes
    ``scatter_indices_batching_dims``). ``mode``: None, ``'fill'`` and ``'drop'`` drop
    a whole window whose start is out of range; ``'clip'`` and ``'promise_in_bounds'``
    clamp the start so the window fits."""
    return f


scatter = _public_scatter("scatter", gs.scatter, "written at the positions (last wins)")
scatter_add = _public_scatter("scatter_add", gs.scatter_add, "added at the positions")
scatter_sub = _public_scatter("scatter_sub", gs.scatter_sub, "subtracted at the positions")
scatter_mul = _public_scatter("scatter_mul", gs.scatter_mul, "multiplied in at the positions")
scatter_min = _public_scatter("scatter_min", gs.scatter_min, "as a minimum at the positions")
scatter_max = _public_scatter("scatter_max", gs.scatter_max, "as a maximum at the positions")


def scatter_apply(operand: Any, *args: Any, **kwargs: Any) -> Any:
    """``operand`` with ``func`` applied at the scattered positions, once per update
    landing there (twice where two do, as JAX's), in either form.

    functrace's: ``scatter_apply(operand, indices, func, axes, mode='raise')``
    (``functrace.lax.composite_higher.scatter_apply``).

    JAX's: ``scatter_apply(operand, scatter_indices, func, dimension_numbers, *,
    update_shape=(), indices_are_sorted=False, unique_indices=False, mode=None)``: the
    positions of a scatter (see ``scatter_add``) of updates of shape ``update_shape``.
    ``func`` must act elementwise; the result differentiates in ``operand``."""
    if _is_jax_form(args, kwargs, 2, ScatterDimensionNumbers):
        return _call_jax_form("scatter_apply", _scatter_apply_xla, operand, args, kwargs)
    return composite_higher.scatter_apply(operand, *args, **kwargs)


__all__ = [
    "gather",
    "scatter",
    "scatter_add",
    "scatter_apply",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "scatter_sub",
]
