"""Products and sums of BCOO arrays with dense and sparse ones: ``bcoo_dot_general``
(and ``@``), ``bcoo_multiply_dense``, ``bcoo_multiply_sparse`` (and ``*``), and the
additions of ``+``/``-``. Each gathers the dense operand at the entries' indices and
scatter-adds into the result, so derivatives, batching and ``jit`` are those of
functrace's gathers, scatters and ``dot_general``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import lax
from functrace._array import to_array
from functrace.experimental.sparse._bcoo import (
    _ARITH,
    BCOO,
    _check_bcoo,
    _columns,
    _dtype_of,
    _extract,
    _like,
    _new,
    _operand,
    _shape_of,
    _zeros,
)
from functrace.lax import gather_scatter as lg

__all__ = ["bcoo_dot_general", "bcoo_multiply_dense", "bcoo_multiply_sparse"]


def _dims(fname: str, dimension_numbers: Any) -> tuple[tuple[int, ...], ...]:
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        return tuple(tuple(operator.index(d) for d in ds) for ds in (lc, rc, lb, rb))  # type: ignore[return-value]
    except (TypeError, ValueError):
        raise TypeError(
            f"{fname}: expected dimension_numbers ((lhs_contracting, rhs_contracting), "
            f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}."
        ) from None


def _sparse_dense_dot(
    fname: str, mat: BCOO, rhs: Any, lc: tuple[int, ...], rc: tuple[int, ...]
) -> Any:
    """``lax.dot_general(mat.todense(), rhs, ((lc, rc), ((), ())))`` without forming
    the dense matrix: gather the contracted rows of ``rhs`` at each entry's indices,
    scale them by the entry's data, and add them into the kept sparse positions."""
    rshape = _shape_of(rhs)
    ns, nd = mat.n_sparse, len(rshape)
    for d, n in ((lc, mat.ndim), (rc, nd)):
        if len(set(d)) != len(d) or any(not 0 <= a < n for a in d):
            raise ValueError(
                f"{fname}: expected distinct contracting dimensions in range, got {lc} for "
                f"the sparse operand of shape {mat.shape} and {rc} for the dense one of "
                f"shape {rshape}."
            )
    if len(lc) != len(rc) or any(mat.shape[a] != rshape[b] for a, b in zip(lc, rc)):
        raise ValueError(
            f"{fname}: the contracting dimensions {lc} of the sparse operand (shape "
            f"{mat.shape}) and {rc} of the dense one (shape {rshape}) differ in size."
        )
    if any(a >= ns for a in lc):
        raise NotImplementedError(
            f"{fname}: contracting over dense dimensions of the sparse operand (n_sparse={ns}, "
            f"contracting {lc}) is not supported, as in JAX."
        )
    dtype = np.result_type(_dtype_of(mat.data), _dtype_of(rhs))
    data = mat.data if _dtype_of(mat.data) == dtype else lax.convert_element_type(mat.data, dtype)
    rhs = rhs if _dtype_of(rhs) == dtype else lax.convert_element_type(rhs, dtype)
    rk = [d for d in range(nd) if d not in rc]
    if list(rc) + rk != list(range(nd)):
        rhs = lax.transpose(rhs, (*rc, *rk))
    nse = mat.nse
    if lc:
        zero = np.zeros((), dtype)[()]
        rows = lg.gather(
            rhs, _columns(mat.indices, lc), tuple(range(len(lc))), mode="fill", fill_value=zero
        )
    else:
        rs = _shape_of(rhs)
        rows = lax.broadcast_in_dim(rhs, (nse, *rs), tuple(range(1, len(rs) + 1)))
    prod = lax.dot_general(data, rows, (((), ()), ((0,), (0,))))  # (nse, *dense, *rhs_kept)
    kept = [k for k in range(ns) if k not in lc]
    if not kept:
        return fnp.sum(prod, axis=0) if nse else _zeros(_shape_of(prod)[1:], dtype)
    out_shape = (*(mat.shape[k] for k in kept), *_shape_of(prod)[1:])
    return lg.scatter_add(
        _zeros(out_shape, dtype),
        prod,
        _columns(mat.indices, kept),
        tuple(range(len(kept))),
        mode="fill",
    )


def bcoo_dot_general(
    lhs: Any,
    rhs: Any,
    *,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """``lax.dot_general`` with a BCOO operand (either one) and a dense one: a dense
    result, as JAX's. Two BCOO operands give a BCOO (JAX's ``bcoo_spdot_general``:
    every pair of entries whose contracted indices agree, repeats summed; no dense
    dimensions). Batch dimensions need batched BCOO arrays, which functrace does not
    have (a NotImplementedError), and so does contracting a dense dimension of the
    sparse operand. The operands' dtypes are promoted; ``precision`` is ignored."""
    fname = "bcoo_dot_general"
    del precision
    lc, rc, lb, rb = _dims(fname, dimension_numbers)
    if lb or rb:
        raise NotImplementedError(
            f"{fname}: batch dimensions {lb}, {rb} must be batch dimensions of the BCOO "
            f"array, and functrace's BCOO has none (n_batch=0)."
        )
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        return _ARITH["spdot"](fname, lhs, rhs, lc, rc, preferred_element_type)
    if isinstance(lhs, BCOO):
        out = _sparse_dense_dot(fname, lhs, _operand(rhs, fname, "rhs"), lc, rc)
    elif isinstance(rhs, BCOO):
        lhs_a = _operand(lhs, fname, "lhs")
        out = _sparse_dense_dot(fname, rhs, lhs_a, rc, lc)
        n_swap = rhs.ndim - len(rc)
        nout = len(_shape_of(out))
        perm = (*range(n_swap, nout), *range(n_swap))
        if perm != tuple(range(nout)):
            out = lax.transpose(out, perm)
    else:
        raise TypeError(
            f"{fname}: expected at least one BCOO operand, got {type(lhs).__name__} and "
            f"{type(rhs).__name__}; use lax.dot_general for dense arrays."
        )
    if preferred_element_type is not None:
        out = lax.convert_element_type(out, np.dtype(preferred_element_type))
    return to_array(out)


def _matmul(a: Any, b: Any) -> Any:
    """``a @ b`` with one BCOO operand of one or two dimensions (NumPy's rules)."""
    fname = "BCOO.__matmul__"
    sa = a.shape if isinstance(a, BCOO) else _shape_of(_operand(a, fname, "the left operand"))
    sb = b.shape if isinstance(b, BCOO) else _shape_of(_operand(b, fname, "the right operand"))
    if not sa or not sb:
        raise ValueError(
            f"{fname}: matmul needs operands of at least one dimension, got shapes {sa} and {sb}."
        )
    if len(sa) > 2 or len(sb) > 2:
        raise NotImplementedError(
            f"{fname}: only 1-D and 2-D operands are supported (stacked products need batch "
            f"dimensions), got shapes {sa} and {sb}."
        )
    if sa[-1] != sb[0]:
        raise ValueError(
            f"{fname}: the operands' shapes {sa} and {sb} do not match for a matrix product "
            f"({sa[-1]} != {sb[0]})."
        )
    return bcoo_dot_general(a, b, dimension_numbers=(((len(sa) - 1,), (0,)), ((), ())))


def bcoo_multiply_dense(sp_mat: BCOO, v: Any) -> Any:
    """The data of ``sp_mat * v`` (elementwise) for a dense ``v`` that broadcasts to
    ``sp_mat.shape``: the new ``data`` array, as JAX's (a scalar multiplies the data,
    an array is read at each entry's index)."""
    fname = "bcoo_multiply_dense"
    sp_mat = _check_bcoo(fname, sp_mat)
    v = _operand(v, fname, "v")
    vshape, shape = _shape_of(v), sp_mat.shape
    if not vshape:
        return to_array(fnp.multiply(sp_mat.data, v))
    if vshape == shape:
        return to_array(fnp.multiply(sp_mat.data, _extract(sp_mat.indices, v)))
    try:
        ok = np.broadcast_shapes(vshape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise NotImplementedError(
            f"{fname}: a dense operand of shape {vshape} does not broadcast to the sparse "
            f"array's shape {shape}; only products of the sparse array's shape are supported."
        )
    v = lax.reshape(v, (1,) * (len(shape) - len(vshape)) + vshape)
    vshape = _shape_of(v)
    ns = sp_mat.n_sparse
    axes = [k for k in range(ns) if vshape[k] != 1]
    # drop the sparse axes of size 1 (read at 0); the others lead, in order
    v = lax.reshape(v, tuple(s for d, s in enumerate(vshape) if d in axes or d >= ns))
    if axes:
        idx = _columns(sp_mat.indices, axes)
        vals = lg.gather(v, idx, tuple(range(len(axes))), mode="clip")
    else:
        vals = lax.reshape(v, (1, *vshape[ns:]))
    return to_array(fnp.multiply(sp_mat.data, vals))


def bcoo_multiply_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    """The elementwise product of two BCOO arrays of one shape: a BCOO with one entry per
    pair of entries at equal indices (``lhs.nse * rhs.nse`` entries, padded), as JAX's.
    Broadcasting between the shapes is not supported."""
    fname = "bcoo_multiply_sparse"
    lhs, rhs = _check_bcoo(fname, lhs), _check_bcoo(fname, rhs)
    if lhs.shape != rhs.shape or lhs.n_dense != rhs.n_dense:
        raise NotImplementedError(
            f"{fname}: expected two arrays of one shape and layout, got {lhs!r} and {rhs!r}."
        )
    ln, rn = lhs.nse, rhs.nse
    nse = ln * rn
    match = fnp.all(fnp.equal(lhs.indices[:, None, :], rhs.indices[None, :, :]), axis=-1)
    i_l, i_r = fnp.nonzero(match, size=nse, fill_value=(ln, rn))

    def pick(x: Any, i: Any, fill: Any) -> Any:
        return lg.gather(x, [i], (0,), mode="fill", fill_value=np.asarray(fill, _dtype_of(x))[()])

    top = max(lhs.shape, default=0)
    dl, dr = pick(lhs.data, i_l, 0), pick(rhs.data, i_r, 0)
    il, ir = pick(lhs.indices, i_l, top), pick(rhs.indices, i_r, top)
    return _new(fnp.multiply(dl, dr), fnp.maximum(il, ir), lhs.shape)


def _negate(x: Any, fname: str) -> Any:
    """``-x`` for the other operand of a subtraction: a BCOO array only (JAX's operators
    do not subtract between sparse and dense arrays)."""
    if isinstance(x, BCOO):
        return -x
    raise NotImplementedError(
        f"{fname}: subtraction between a sparse and a dense array is not supported, as in "
        f"JAX; call .todense() on the sparse one first."
    )


def _multiply(a: Any, b: Any, shared: bool = False) -> Any:
    """``a * b`` with a BCOO operand. Two BCOO operands multiply their data when
    ``shared`` says that they are one array's values (``sparsify`` knows it), else pair
    their entries (``bcoo_multiply_sparse``), as JAX's operators do."""
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        if shared and a.indices is b.indices and a.unique_indices:
            return _like(a, fnp.multiply(a.data, b.data))
        return bcoo_multiply_sparse(a, b)
    sp, other = (a, b) if isinstance(a, BCOO) else (b, a)
    dense = _operand(other, "BCOO.__mul__", "the other operand")
    return _like(sp, bcoo_multiply_dense(sp, dense))


def _add(a: Any, b: Any, fname: str, shared: bool = False) -> Any:
    """``a + b`` with a BCOO operand: two BCOO arrays add their data when ``shared`` (as
    in ``_multiply``) and their indices are one array, else concatenate their entries;
    a dense operand of the result's shape gives a dense sum."""
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        if a.shape != b.shape:
            raise NotImplementedError(
                f"{fname}: adding sparse arrays of different shapes {a.shape} and {b.shape} "
                f"is not supported."
            )
        if shared and a.indices is b.indices:
            return _like(a, fnp.add(a.data, b.data))
        if a.n_dense != b.n_dense:
            raise NotImplementedError(
                f"{fname}: adding sparse arrays with different numbers of dense dimensions "
                f"({a.n_dense} and {b.n_dense}) is not supported."
            )
        dtype = np.result_type(a.dtype, b.dtype)
        idt = np.result_type(_dtype_of(a.indices), _dtype_of(b.indices))
        data = fnp.concatenate(
            [fnp.asarray(a.data).astype(dtype), fnp.asarray(b.data).astype(dtype)]
        )
        indices = fnp.concatenate(
            [fnp.asarray(a.indices).astype(idt), fnp.asarray(b.indices).astype(idt)]
        )
        return _new(data, indices, a.shape)
    sp, other = (a, b) if isinstance(a, BCOO) else (b, a)
    dense = _operand(other, fname, "the other operand")
    if np.broadcast_shapes(_shape_of(dense), sp.shape) != _shape_of(dense):
        raise NotImplementedError(
            f"{fname}: adding a dense array of shape {_shape_of(dense)} to a sparse one of "
            f"shape {sp.shape} would broadcast the dense one; call .todense() first if a "
            f"dense result is intended."
        )
    return to_array(fnp.add(sp.todense(), dense))


_ARITH.update(
    matmul=_matmul,
    multiply=_multiply,
    add=_add,
    negate=_negate,
    multiply_dense=bcoo_multiply_dense,
)
