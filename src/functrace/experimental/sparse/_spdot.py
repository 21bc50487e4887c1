"""Products of two BCOO arrays (``bcoo_dot_general`` of two sparse operands, JAX's
``bcoo_spdot_general``), the sampled dense product ``bcoo_dot_general_sampled``, and
``random_bcoo``.

The sparse-sparse product pairs every entry of one operand with every entry of the
other, keeps the products whose contracted indices agree and sums repeated output
indices (``bcoo_sum_duplicates``), as JAX's; it is written with functrace's
comparisons, ``where`` and sorts, so it differentiates in both operands' data.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import lax
from functrace import random as fr
from functrace.experimental.sparse._bcoo import (
    _ARITH,
    BCOO,
    _dtype_of,
    _extract,
    _new,
    _no_batch,
    _operand,
    _select_columns,
    _shape_of,
    _static_int,
    bcoo_sum_duplicates,
)
from functrace.experimental.sparse._products import _dims
from functrace.experimental.sparse._shapes import _wrapped

__all__ = ["bcoo_dot_general_sampled", "random_bcoo"]


def _spdot(
    fname: str,
    lhs: BCOO,
    rhs: BCOO,
    lc: tuple[int, ...],
    rc: tuple[int, ...],
    preferred_element_type: Any,
) -> BCOO:
    """The BCOO product of two BCOO arrays contracting ``lc`` with ``rc`` (no batch
    dimensions): JAX's ``bcoo_spdot_general`` with ``n_batch=0``."""
    for d, mat in ((lc, lhs), (rc, rhs)):
        if len(set(d)) != len(d) or any(not 0 <= a < mat.ndim for a in d):
            raise ValueError(
                f"{fname}: expected distinct contracting dimensions in range, got {lc} for "
                f"shape {lhs.shape} and {rc} for shape {rhs.shape}."
            )
    if len(lc) != len(rc) or any(lhs.shape[a] != rhs.shape[b] for a, b in zip(lc, rc)):
        raise ValueError(
            f"{fname}: the contracting dimensions {lc} of the left operand (shape "
            f"{lhs.shape}) and {rc} of the right one (shape {rhs.shape}) differ in size."
        )
    if lhs.n_dense or rhs.n_dense:
        raise NotImplementedError(
            f"{fname}: products of two BCOO arrays with dense dimensions (n_dense="
            f"{lhs.n_dense} and {rhs.n_dense}) are not supported, as in JAX."
        )
    out_shape = (
        *(s for i, s in enumerate(lhs.shape) if i not in lc),
        *(s for i, s in enumerate(rhs.shape) if i not in rc),
    )
    ln, rn = lhs.nse, rhs.nse
    out_nse = (ln if lhs.n_sparse > len(lc) else 1) * (rn if rhs.n_sparse > len(rc) else 1)
    out_nse = min(out_nse, math.prod(out_shape))
    dtype = np.result_type(lhs.dtype, rhs.dtype)
    if preferred_element_type is not None:
        dtype = np.dtype(preferred_element_type)
    idt = np.result_type(_dtype_of(lhs.indices), _dtype_of(rhs.indices))
    li = fnp.asarray(_wrapped(lhs)).astype(idt)
    ri = fnp.asarray(_wrapped(rhs)).astype(idt)
    lkeep = [k for k in range(lhs.ndim) if k not in lc]
    rkeep = [k for k in range(rhs.ndim) if k not in rc]
    lhs_i, rhs_i = _select_columns(li, lc), _select_columns(ri, rc)
    lhs_j, rhs_j = _select_columns(li, lkeep), _select_columns(ri, rkeep)
    overlap = fnp.all(fnp.equal(lhs_i[:, None, :], rhs_i[None, :, :]), axis=-1)
    lbound = np.asarray([lhs.shape[d] for d in lc], idt)
    rbound = np.asarray([rhs.shape[d] for d in rc], idt)
    lvalid = fnp.all(fnp.logical_and(fnp.less(lhs_i, lbound), fnp.greater_equal(lhs_i, 0)), -1)
    rvalid = fnp.all(fnp.logical_and(fnp.less(rhs_i, rbound), fnp.greater_equal(rhs_i, 0)), -1)
    ok = fnp.logical_and(overlap, fnp.logical_and(lvalid[:, None], rvalid[None, :]))
    ld = fnp.asarray(lhs.data).astype(dtype)
    rd = fnp.asarray(rhs.data).astype(dtype)
    prod = fnp.where(ok, ld[:, None] * rd[None, :], fnp.zeros((), dtype))
    data = fnp.reshape(prod, (ln * rn,))
    nl, nr = len(lkeep), len(rkeep)
    left = lax.broadcast_in_dim(lhs_j, (ln, rn, nl), (0, 2))
    right = lax.broadcast_in_dim(rhs_j, (ln, rn, nr), (1, 2))
    indices = fnp.reshape(fnp.concatenate([left, right], axis=-1), (ln * rn, nl + nr))
    out = bcoo_sum_duplicates(_new(data, indices, out_shape), nse=out_nse)
    return out


def bcoo_dot_general_sampled(A: Any, B: Any, indices: Any, *, dimension_numbers: Any) -> Any:
    """``lax.dot_general(A, B, dimension_numbers)`` read at the BCOO ``indices`` only
    (zero at padding): the ``data`` of the product sampled on a sparsity pattern, as
    JAX's. ``indices`` has shape ``(nse, n_sparse)`` (no batch dimensions)."""
    fname = "bcoo_dot_general_sampled"
    a = _operand(A, fname, "A")
    b = _operand(B, fname, "B")
    idx = _operand(indices, fname, "indices")
    lc, rc, lb, rb = _dims(fname, dimension_numbers)
    ishape = _shape_of(idx)
    if _dtype_of(idx).kind not in "iu":
        raise TypeError(f"{fname}: expected integer indices, got dtype {_dtype_of(idx)}.")
    try:
        full = lax.dot_general(a, b, ((lc, rc), (lb, rb)))
    except (TypeError, ValueError) as e:
        raise ValueError(f"{fname}: invalid operands for dot_general: {e}") from None
    out_nd = len(_shape_of(full))
    if len(ishape) != 2 or ishape[1] > out_nd:
        if len(ishape) > 2:
            _no_batch(fname, len(ishape) - 2)
        raise ValueError(
            f"{fname}: expected indices of shape (nse, n_sparse) with n_sparse <= {out_nd} "
            f"for a product of shape {_shape_of(full)}, got {ishape}."
        )
    return _extract(idx, full)


def random_bcoo(
    key: Any,
    shape: Sequence[int],
    *,
    dtype: Any = None,
    indices_dtype: Any = None,
    nse: float = 0.2,
    n_batch: int = 0,
    n_dense: int = 0,
    unique_indices: bool = True,
    sorted_indices: bool = False,
    generator: Callable[..., Any] = fr.uniform,
    **kwds: Any,
) -> BCOO:
    """A random BCOO array: ``nse`` entries (a fraction of the sparse size when
    ``0 < nse < 1``) at positions drawn with ``random.choice`` (without replacement when
    ``unique_indices``) and data drawn with ``generator(key, shape=, dtype=, **kwds)``,
    JAX's algorithm, so the same key gives JAX's array. ``dtype`` defaults to float64
    and ``indices_dtype`` to int64 (JAX's x64 defaults). Only ``n_batch=0``."""
    fname = "random_bcoo"
    shape_t = tuple(_static_int(s, fname, "shape entry") for s in shape)
    _no_batch(fname, n_batch)
    n_dense = _static_int(n_dense, fname, "n_dense")
    if n_dense < 0 or n_dense > len(shape_t):
        raise ValueError(f"{fname}: invalid n_dense={n_dense} for shape={shape_t}.")
    ns = len(shape_t) - n_dense
    sparse_shape, dense_shape = shape_t[:ns], shape_t[ns:]
    sparse_size = math.prod(sparse_shape)
    if isinstance(nse, (bool, np.bool_)) or not isinstance(nse, (int, float, np.number)):
        raise TypeError(f"{fname}: expected nse as a number, got {nse!r}.")
    if not 0 <= nse < sparse_size:
        raise ValueError(f"{fname}: got nse={nse}, expected to be between 0 and {sparse_size}.")
    if 0 < nse < 1:
        nse = int(math.ceil(nse * sparse_size))
    if nse != int(nse):
        raise ValueError(f"{fname}: expected an integer nse or a fraction in (0, 1), got {nse}.")
    nse_i = int(nse)
    idt = np.dtype(np.int64 if indices_dtype is None else indices_dtype)
    if idt.kind not in "iu":
        raise TypeError(f"{fname}: expected an integer indices_dtype, got {idt}.")
    if sparse_size > np.iinfo(idt).max:
        raise ValueError(
            f"{fname}: indices_dtype={idt} cannot hold sparse indices of size {sparse_size}."
        )
    dt = np.dtype(np.float64 if dtype is None else dtype)
    keys = fr.split(key, 2)
    data_key, index_key = keys[0], keys[1]
    data = generator(data_key, shape=(nse_i, *dense_shape), dtype=dt, **kwds)
    if not sparse_shape:
        indices: Any = np.zeros((nse_i, 0), idt)
    else:
        flat = fr.choice(index_key, sparse_size, shape=(nse_i,), replace=not unique_indices)
        flat = fnp.asarray(flat).astype(idt)
        cols = fnp.unravel_index(flat, sparse_shape)
        indices = fnp.stack([fnp.asarray(c).astype(idt) for c in cols], axis=1)
    mat = _new(data, indices, shape_t)
    return mat.sort_indices() if sorted_indices else mat


_ARITH.update(spdot=_spdot)
