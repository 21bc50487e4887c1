"""Shape operations on BCOO arrays: ``bcoo_reshape``, ``bcoo_squeeze``,
``bcoo_broadcast_in_dim``, ``bcoo_concatenate``, ``bcoo_slice``,
``bcoo_dynamic_slice``, ``bcoo_rev`` and ``bcoo_update_layout``.

Each rewrites the index columns with functrace's integer operations and selects the
data with ``where``/``reshape``/``slice``, so derivatives in the data, batching over it
and ``jit`` come from those. The arithmetic follows JAX's (same entries, same order,
same padding), with one difference: an index that is negative is first wrapped once
(``-1`` is the last position), as functrace's ``todense`` reads it, where JAX's
shape operations take it as out of range or clip it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core, lax
from functrace._array import to_array
from functrace.experimental.sparse._bcoo import (
    _ARITH,
    BCOO,
    _check_bcoo,
    _dtype_of,
    _new,
    _no_batch,
    _normalize_axis,
    _select_columns,
    _shape_of,
    _static_int,
    bcoo_sum_duplicates,
    bcoo_transpose,
)

__all__ = [
    "bcoo_broadcast_in_dim",
    "bcoo_concatenate",
    "bcoo_dynamic_slice",
    "bcoo_reshape",
    "bcoo_rev",
    "bcoo_slice",
    "bcoo_squeeze",
    "bcoo_update_layout",
]


def _ints(fname: str, xs: Any, what: str) -> tuple[int, ...]:
    if isinstance(xs, (int, np.integer)) or not isinstance(xs, (tuple, list, np.ndarray)):
        raise TypeError(f"{fname}: expected {what} as a sequence of ints, got {xs!r}.")
    return tuple(_static_int(x, fname, f"{what} entry") for x in xs)


def _wrapped(mat: BCOO) -> Any:
    """``mat.indices`` with negative entries wrapped once (``-1`` -> last position)."""
    ns = mat.n_sparse
    if ns == 0 or mat.nse == 0:
        return mat.indices
    size = np.asarray(mat.shape[:ns], _dtype_of(mat.indices))
    if _dtype_of(mat.indices).kind == "u":
        return mat.indices
    idx = mat.indices
    return fnp.where(fnp.less(idx, 0), idx + size[None, :], idx)


def _mask_data(data: Any, keep: Any) -> Any:
    keep = lax.broadcast_in_dim(keep, _shape_of(data), (0,))
    return fnp.where(keep, data, fnp.zeros((), _dtype_of(data)))


def _compact(data: Any, indices: Any, shape: tuple[int, ...], ns: int) -> BCOO:
    """JAX's last step of a slice: when there are more entries than positions in the
    sparse part, sum repeats down to that many."""
    new_nse = math.prod(shape[:ns])
    out = _new(data, indices, shape)
    if ns and _shape_of(indices)[0] > new_nse:
        out = bcoo_sum_duplicates(out, nse=new_nse)
    return out


# ---------------------------------------------------------------------------
# reshape, squeeze, broadcast_in_dim
# ---------------------------------------------------------------------------


def bcoo_reshape(
    mat: BCOO, *, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None
) -> BCOO:
    """``lax.reshape`` of a BCOO array: the sparse part and the dense part are reshaped
    separately (the new shape must not mix them: a ValueError), the indices by
    flattening and unflattening them, as JAX's. ``dimensions`` first permutes the axes
    (sparse among sparse, dense among dense). Unlike JAX's, leading axes of size 1 stay
    sparse axes (JAX makes them batch axes; the dense arrays are equal)."""
    fname = "bcoo_reshape"
    mat = _check_bcoo(fname, mat)
    sizes = _ints(fname, new_sizes, "new_sizes")
    if any(s < 0 for s in sizes) or math.prod(sizes) != mat.size:
        raise ValueError(
            f"{fname}: cannot reshape an array of shape {mat.shape} ({mat.size} elements) "
            f"to {sizes}."
        )
    if dimensions is not None:
        perm = _ints(fname, dimensions, "dimensions")
        if perm != tuple(range(mat.ndim)):
            mat = bcoo_transpose(mat, permutation=perm)
    ns = mat.n_sparse
    sparse_shape, dense_shape = mat.shape[:ns], mat.shape[ns:]
    sparse_size = math.prod(sparse_shape)
    cum = np.cumprod(np.asarray(sizes, np.int64)) if sizes else np.zeros(0, np.int64)
    if sparse_size != 1 and sparse_size not in cum:
        raise ValueError(
            f"{fname}: the new shape cannot mix sparse and dense dimensions; got shape="
            f"{mat.shape} new_sizes={sizes} with n_dense={mat.n_dense}."
        )
    cut = int(np.searchsorted(cum, sparse_size, side="right"))
    new_sparse, new_dense = sizes[:cut], sizes[cut:]
    if math.prod(new_dense) != math.prod(dense_shape):
        raise ValueError(
            f"{fname}: the new shape cannot mix sparse and dense dimensions; got shape="
            f"{mat.shape} new_sizes={sizes} with n_dense={mat.n_dense}."
        )
    nse = mat.nse
    data = lax.reshape(mat.data, (nse, *new_dense))
    idt = _dtype_of(mat.indices)
    if not new_sparse:
        indices: Any = to_array(np.zeros((nse, 0), idt))
    elif not sparse_shape or nse == 0:
        indices = to_array(np.zeros((nse, len(new_sparse)), idt))
    else:
        idx = _wrapped(mat)
        cols = [idx[:, k] for k in range(ns)]
        bound = np.asarray(sparse_shape, idt)
        oob = fnp.any(fnp.greater_equal(idx, bound[None, :]), axis=1, keepdims=True)
        oob = fnp.logical_or(oob, fnp.any(fnp.less(idx, 0), axis=1, keepdims=True))
        flat = fnp.ravel_multi_index(cols, sparse_shape, mode="clip")
        new_cols = fnp.unravel_index(flat, new_sparse)
        indices = fnp.stack([fnp.asarray(c).astype(idt) for c in new_cols], axis=1)
        indices = fnp.where(oob, np.asarray(new_sparse, idt)[None, :], indices)
    return _new(data, indices, sizes)


def bcoo_squeeze(arr: BCOO, *, dimensions: Sequence[int]) -> BCOO:
    """``lax.squeeze`` of a BCOO array: axes of size 1 removed (a sparse one drops its
    index column); the indices keep their order and uniqueness flags, as JAX's."""
    fname = "bcoo_squeeze"
    arr = _check_bcoo(fname, arr)
    dims = {_normalize_axis(fname, d, arr.ndim) for d in _ints(fname, dimensions, "dimensions")}
    if any(arr.shape[d] != 1 for d in dims):
        raise ValueError(
            f"{fname}: cannot squeeze an axis whose size is not 1; got shape={arr.shape} "
            f"and dimensions={tuple(sorted(dims))}."
        )
    ns = arr.n_sparse
    kept = [k for k in range(ns) if k not in dims]
    dense = tuple(d - ns + 1 for d in sorted(dims) if d >= ns)
    data = lax.squeeze(arr.data, dense) if dense else arr.data
    indices = _select_columns(arr.indices, kept)
    shape = tuple(s for i, s in enumerate(arr.shape) if i not in dims)
    return _new(data, indices, shape, arr.indices_sorted, arr.unique_indices)


def bcoo_broadcast_in_dim(
    mat: BCOO, *, shape: Sequence[int], broadcast_dimensions: Sequence[int]
) -> BCOO:
    """``lax.broadcast_in_dim`` of a BCOO array. New axes before the first sparse axis
    repeat the entries (JAX makes them batch axes; functrace stores the repeats as
    entries, JAX's result after ``bcoo_update_layout(n_batch=0)``), new axes among the
    sparse ones must have size 1, and axes from the first dense one on are dense."""
    fname = "bcoo_broadcast_in_dim"
    mat = _check_bcoo(fname, mat)
    shape_t = _ints(fname, shape, "shape")
    bd = _ints(fname, broadcast_dimensions, "broadcast_dimensions")
    if len(bd) != mat.ndim or len(set(bd)) != len(bd) or list(bd) != sorted(bd):
        raise ValueError(
            f"{fname}: expected {mat.ndim} increasing broadcast_dimensions for an operand "
            f"of shape {mat.shape}, got {bd}."
        )
    if any(not 0 <= b < len(shape_t) for b in bd) or any(
        mat.shape[i] not in (1, shape_t[b]) for i, b in enumerate(bd)
    ):
        raise ValueError(
            f"{fname}: cannot broadcast an operand of shape {mat.shape} to {shape_t} with "
            f"broadcast_dimensions={bd}."
        )
    ns, nse = mat.n_sparse, mat.nse
    sparse_dims, dense_dims = bd[:ns], bd[ns:]
    # JAX's new batch axes (here: repeated entries) lead up to the first operand axis;
    # the dense axes run from the first dense operand axis on
    lead = min(bd, default=len(shape_t))
    new_ns = min(dense_dims, default=len(shape_t))
    for i, b in enumerate(sparse_dims):
        if mat.shape[i] != shape_t[b]:
            raise NotImplementedError(
                f"{fname}: broadcasting the sparse axis {i} of size {mat.shape[i]} to size "
                f"{shape_t[b]} is not supported, as in JAX."
            )
    for d in range(lead, new_ns):
        if d not in sparse_dims and shape_t[d] != 1:
            raise NotImplementedError(
                f"{fname}: adding a sparse axis of size {shape_t[d]} (axis {d} of {shape_t}) "
                f"among the sparse axes is not supported, as in JAX (only size 1)."
            )
    data = lax.broadcast_in_dim(
        mat.data, (nse, *shape_t[new_ns:]), (0, *(b - new_ns + 1 for b in dense_dims))
    )
    idt = _dtype_of(mat.indices)
    cols: list[Any] = []
    for d in range(lead, new_ns):
        if d in sparse_dims:
            cols.append(mat.indices[:, sparse_dims.index(d)])
        else:
            cols.append(fnp.zeros(nse, idt))
    reps = math.prod(shape_t[:lead])
    if lead:
        grids = np.meshgrid(*(np.arange(s) for s in shape_t[:lead]), indexing="ij")
        lead_cols = [to_array(np.repeat(g.ravel(), nse).astype(idt)) for g in grids]
        cols = [fnp.tile(c, reps) for c in cols]
        data = lax.reshape(
            lax.broadcast_in_dim(data, (reps, *_shape_of(data)), tuple(range(1, data.ndim + 1))),
            (reps * nse, *_shape_of(data)[1:]),
        )
        cols = lead_cols + cols
    total = reps * nse
    indices = fnp.stack(cols, axis=1) if cols else to_array(np.zeros((total, 0), idt))
    return _new(data, fnp.asarray(indices).astype(idt), shape_t)


# ---------------------------------------------------------------------------
# concatenate, slice, dynamic_slice, rev
# ---------------------------------------------------------------------------


def bcoo_concatenate(operands: Sequence[BCOO], *, dimension: int) -> BCOO:
    """``lax.concatenate`` of BCOO arrays along a sparse axis: the entries are
    concatenated, each operand's indices shifted along ``dimension``. Concatenating
    along a dense axis is a NotImplementedError, as in JAX. Unlike JAX's, a padding
    entry stays padding: one that JAX's shift would move into the next operand's range
    gets the result's shape as index instead."""
    fname = "bcoo_concatenate"
    if not isinstance(operands, (tuple, list)) or not operands:
        raise TypeError(f"{fname}: expected a non-empty sequence of BCOO arrays, got {operands!r}.")
    if not all(isinstance(op, BCOO) for op in operands):
        kinds = [type(op).__name__ for op in operands]
        raise TypeError(f"{fname}: expected a sequence of BCOO arrays, got {kinds}.")
    first = operands[0]
    dim = _normalize_axis(fname, dimension, first.ndim) if first.ndim else None
    if dim is None:
        raise ValueError(f"{fname}: cannot concatenate 0-d arrays.")
    for op in operands:
        if op.ndim != first.ndim or any(
            a != b for i, (a, b) in enumerate(zip(op.shape, first.shape)) if i != dim
        ):
            shapes = [op.shape for op in operands]
            raise ValueError(
                f"{fname}: expected shapes equal except along dimension {dim}, got {shapes}."
            )
    if len({op.n_dense for op in operands}) > 1:
        raise ValueError(
            f"{fname}: expected operands with one number of dense dimensions, got "
            f"{[op.n_dense for op in operands]}."
        )
    ns = first.n_sparse
    if dim >= ns:
        raise NotImplementedError(
            f"{fname}: concatenation along the dense dimension {dim} (n_sparse={ns}) is not "
            f"supported, as in JAX."
        )
    out_shape = list(first.shape)
    out_shape[dim] = sum(op.shape[dim] for op in operands)
    dtype = np.result_type(*(op.dtype for op in operands))
    idt = np.result_type(*(_dtype_of(op.indices) for op in operands))
    fill = np.asarray(out_shape[:ns], idt)
    datas, idxs = [], []
    offset = 0
    for op in operands:
        idx = fnp.asarray(_wrapped(op)).astype(idt)
        bound = np.asarray(op.shape[:ns], idt)
        shift = np.zeros(ns, idt)
        shift[dim] = offset
        moved = idx + shift[None, :]
        # padding that the shift would bring into range becomes the result's padding
        oob = fnp.any(
            fnp.logical_or(fnp.greater_equal(idx, bound[None, :]), fnp.less(idx, 0)), axis=1
        )
        lands = fnp.all(fnp.less(moved, fill[None, :]), axis=1)
        bad = fnp.logical_and(oob, lands)[:, None]
        idxs.append(fnp.where(bad, fill[None, :], moved))
        datas.append(fnp.asarray(op.data).astype(dtype))
        offset += op.shape[dim]
    return _new(fnp.concatenate(datas, axis=0), fnp.concatenate(idxs, axis=0), tuple(out_shape))


def bcoo_slice(
    mat: BCOO,
    *,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
) -> BCOO:
    """``lax.slice`` of a BCOO array: entries outside the slice get zero data and the
    new shape as index (padding), the others are shifted and divided by the stride;
    when there are more entries than positions in the new sparse part, repeats are
    summed down to that many (``bcoo_sum_duplicates``), as JAX's."""
    fname = "bcoo_slice"
    mat = _check_bcoo(fname, mat)
    start = _ints(fname, start_indices, "start_indices")
    limit = _ints(fname, limit_indices, "limit_indices")
    step = (1,) * mat.ndim if strides is None else _ints(fname, strides, "strides")
    if not len(start) == len(limit) == len(step) == mat.ndim:
        raise ValueError(
            f"{fname}: expected start_indices, limit_indices and strides of length "
            f"{mat.ndim}, got {start}, {limit} and {step}."
        )
    if any(s <= 0 for s in step):
        raise ValueError(f"{fname}: expected positive strides, got {step}.")
    if not all(0 <= a <= b <= n for a, b, n in zip(start, limit, mat.shape)):
        raise ValueError(
            f"{fname}: invalid indices: start_indices={start}, limit_indices={limit} for "
            f"shape {mat.shape}."
        )
    ns = mat.n_sparse
    new_shape = tuple((b - a + s - 1) // s for a, b, s in zip(start, limit, step))
    data = mat.data
    if ns < mat.ndim:
        data = lax.slice(data, (0, *start[ns:]), (mat.nse, *limit[ns:]), (1, *step[ns:]))
    if not ns:
        return _new(data, mat.indices, new_shape, mat.indices_sorted, mat.unique_indices)
    idt = _dtype_of(mat.indices)
    idx = _wrapped(mat)
    a, b, s = (np.asarray(v[:ns], idt)[None, :] for v in (start, limit, step))
    inside = fnp.logical_and(fnp.greater_equal(idx, a), fnp.less(idx, b))
    inside = fnp.logical_and(inside, fnp.equal(fnp.remainder(idx - a, s), 0))
    keep = fnp.all(inside, axis=1)
    pad = np.asarray(new_shape[:ns], idt)[None, :]
    indices = fnp.where(keep[:, None], fnp.floor_divide(idx - a, s), pad)
    return _compact(_mask_data(data, keep), indices, new_shape, ns)


def bcoo_dynamic_slice(mat: BCOO, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> BCOO:
    """``lax.dynamic_slice`` of a BCOO array: the start indices may be traced (they are
    clamped so that the slice fits, as ``lax.dynamic_slice``'s); entries outside become
    padding and repeats are summed as in :func:`bcoo_slice`, as JAX's."""
    fname = "bcoo_dynamic_slice"
    mat = _check_bcoo(fname, mat)
    sizes = _ints(fname, slice_sizes, "slice_sizes")
    if not isinstance(start_indices, (tuple, list)) or len(start_indices) != mat.ndim:
        raise ValueError(
            f"{fname}: expected {mat.ndim} start indices (one per dimension), got "
            f"{start_indices!r}."
        )
    if len(sizes) != mat.ndim or not all(0 <= z <= n for z, n in zip(sizes, mat.shape)):
        raise ValueError(
            f"{fname}: expected slice_sizes of length {mat.ndim} within the shape "
            f"{mat.shape}, got {sizes}."
        )
    starts = []
    for s in start_indices:
        s = s if isinstance(s, core.Tracer) else to_array(np.asarray(s))
        if _shape_of(s) != () or _dtype_of(s).kind not in "iu":
            raise TypeError(
                f"{fname}: expected integer scalars as start indices, got {start_indices!r}."
            )
        starts.append(s)
    ns = mat.n_sparse
    data = mat.data
    if ns < mat.ndim:
        zero = np.zeros((), _dtype_of(starts[0]))
        data = lax.dynamic_slice(data, (zero, *starts[ns:]), (mat.nse, *sizes[ns:]))
    if not ns:
        return _new(data, mat.indices, sizes, mat.indices_sorted, mat.unique_indices)
    idt = _dtype_of(mat.indices)
    shape = np.asarray(mat.shape[:ns], idt)
    size = np.asarray(sizes[:ns], idt)
    st = fnp.stack([fnp.asarray(s).astype(idt) for s in starts[:ns]])
    st = fnp.where(fnp.less(st, 0), st + shape, st)
    st = fnp.clip(st, 0, shape - size)[None, :]
    idx = _wrapped(mat)
    keep = fnp.all(fnp.logical_and(fnp.greater_equal(idx, st), fnp.less(idx, st + size)), axis=1)
    indices = fnp.where(keep[:, None], idx - st, size[None, :])
    return _compact(_mask_data(data, keep), indices, sizes, ns)


def bcoo_rev(operand: BCOO, dimensions: Sequence[int]) -> BCOO:
    """``lax.rev`` of a BCOO array: a sparse axis reverses its index column (padding
    stays padding), a dense one reverses the data, as JAX's."""
    fname = "bcoo_rev"
    operand = _check_bcoo(fname, operand)
    dims = _ints(fname, dimensions, "dimensions")
    if len(set(dims)) != len(dims) or any(not 0 <= d < operand.ndim for d in dims):
        raise ValueError(
            f"{fname}: expected distinct dimensions in [0, {operand.ndim}), got {dims}."
        )
    ns = operand.n_sparse
    sparse = sorted(d for d in dims if d < ns)
    dense = tuple(d - ns + 1 for d in dims if d >= ns)
    data = lax.rev(operand.data, dense) if dense else operand.data
    indices = operand.indices
    if sparse:
        idt = _dtype_of(indices)
        shape = np.asarray(operand.shape[:ns], idt)[None, :]
        flip = np.zeros(ns, bool)
        flip[sparse] = True
        idx = _wrapped(operand)
        indices = fnp.where(flip[None, :], shape - 1 - idx, idx)
        indices = fnp.where(fnp.less(indices, 0), shape, indices)
    return _new(data, indices, operand.shape)


def bcoo_update_layout(
    mat: BCOO,
    *,
    n_batch: int | None = None,
    n_dense: int | None = None,
    on_inefficient: str | None = "error",
) -> BCOO:
    """``mat`` with ``n_dense`` dense dimensions: fewer than ``mat.n_dense`` turns the
    leading dense axes into sparse ones (one entry per stored element), the same
    returns ``mat``. ``n_batch`` must be 0 or None, and more dense dimensions are a
    NotImplementedError (JAX supports both). ``on_inefficient`` is checked and unused."""
    fname = "bcoo_update_layout"
    mat = _check_bcoo(fname, mat)
    if n_batch is not None:
        _no_batch(fname, n_batch)
    if on_inefficient not in ("error", "warn", None):
        raise ValueError(
            f"{fname}: expected on_inefficient in ['error', 'warn', None], got {on_inefficient!r}."
        )
    nd = mat.n_dense if n_dense is None else _static_int(n_dense, fname, "n_dense")
    if nd == mat.n_dense:
        return mat
    if not 0 <= nd <= mat.ndim:
        raise ValueError(f"{fname}: expected n_dense in [0, {mat.ndim}], got {nd}.")
    if nd > mat.n_dense:
        raise NotImplementedError(
            f"{fname}: increasing n_dense from {mat.n_dense} to {nd} is not supported."
        )
    n = mat.n_dense - nd
    ns, nse = mat.n_sparse, mat.nse
    moved = mat.shape[ns : ns + n]
    per = math.prod(moved)
    dshape = _shape_of(mat.data)
    data = lax.reshape(mat.data, (nse * per, *dshape[1 + n :]))
    idt = _dtype_of(mat.indices)
    grids = np.meshgrid(*(np.arange(s) for s in moved), indexing="ij")
    new_cols = [to_array(np.tile(g.ravel(), nse).astype(idt)) for g in grids]
    old = fnp.repeat(mat.indices, per, axis=0) if ns else None
    cols = [old[:, k] for k in range(ns)] if old is not None else []
    indices = fnp.stack(cols + new_cols, axis=1) if cols or new_cols else mat.indices
    return _new(data, indices, mat.shape)


def _reshape_method(mat: BCOO, *args: Any, order: str = "C") -> BCOO:
    fname = "BCOO.reshape"
    if order != "C":
        raise NotImplementedError(f"{fname}: only order='C' is supported, got {order!r}.")
    shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    sizes = list(_ints(fname, list(shape), "shape"))
    if sizes.count(-1) > 1:
        raise ValueError(f"{fname}: at most one -1 in the new shape, got {tuple(sizes)}.")
    if -1 in sizes:
        rest = math.prod(s for s in sizes if s != -1)
        if rest == 0 or mat.size % rest:
            raise ValueError(f"{fname}: cannot reshape {mat.shape} to {tuple(sizes)}.")
        sizes[sizes.index(-1)] = mat.size // rest
    return bcoo_reshape(mat, new_sizes=sizes)


_ARITH.update(reshape=_reshape_method)
