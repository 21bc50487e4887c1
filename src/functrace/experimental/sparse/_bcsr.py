"""The BCSR format (compressed rows) with no batch dimensions: ``data`` of shape
``(nse, *dense_shape)``, ``indices`` (the column of each entry) of shape ``(nse,)``
and ``indptr`` of shape ``(n_rows + 1,)``, entries of row ``i`` being those from
``indptr[i]`` to ``indptr[i + 1]``; entries past ``indptr[-1]`` are padding.

Every operation converts to BCOO indices (each entry's row is the number of row
pointers at or before it, minus one) and uses the BCOO functions, so derivatives in
the data, batching over it and ``jit`` are theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core, lax
from functrace._array import to_array
from functrace.experimental.sparse._bcoo import (
    BCOO,
    JAXSparse,
    _dtype_of,
    _extract,
    _new,
    _no_batch,
    _operand,
    _shape_of,
    _static_int,
    _todense,
    bcoo_fromdense,
)
from functrace.experimental.sparse._products import bcoo_dot_general
from functrace.tree_util import register_pytree_node_class

__all__ = ["BCSR", "bcsr_dot_general", "bcsr_extract", "bcsr_fromdense", "bcsr_todense"]


def _coo_indices(indices: Any, indptr: Any) -> Any:
    """The ``(nse, 2)`` BCOO indices of CSR ``indices`` and ``indptr``: JAX's rows
    (padding entries get row ``n_rows``)."""
    nse = _shape_of(indices)[0]
    idt = _dtype_of(indices)
    pos = lax.iota(_dtype_of(indptr), nse)
    rows = fnp.searchsorted(indptr, pos, side="right") - 1
    return fnp.stack([fnp.asarray(rows).astype(idt), indices], axis=1)


def _csr_pointers(rows: Any, n_rows: int, index_dtype: Any) -> Any:
    """``indptr`` of row indices sorted by row (rows out of range are not counted)."""
    counts = fnp.bincount(fnp.asarray(rows).astype(np.int64), length=n_rows)
    zero = fnp.zeros(1, index_dtype)
    return fnp.concatenate([zero, fnp.cumsum(counts).astype(index_dtype)])


def _validate(fname: str, data: Any, indices: Any, indptr: Any, shape: tuple[int, ...]) -> None:
    for what, x in (("indices", indices), ("indptr", indptr)):
        if _dtype_of(x).kind not in "iu":
            raise TypeError(f"{fname}: expected integer {what}, got dtype {_dtype_of(x)}.")
    ishape, pshape, dshape = _shape_of(indices), _shape_of(indptr), _shape_of(data)
    if len(ishape) != 1:
        if len(ishape) > 1:
            _no_batch(fname, len(ishape) - 1)
        raise ValueError(f"{fname}: expected indices of shape (nse,), got shape {ishape}.")
    if len(shape) < 2:
        raise ValueError(f"{fname}: a BCSR array has 2 sparse dimensions; got shape {shape}.")
    if pshape != (shape[0] + 1,):
        raise ValueError(
            f"{fname}: expected indptr of shape ({shape[0] + 1},) for shape {shape}, got {pshape}."
        )
    want = (ishape[0], *shape[2:])
    if dshape != want:
        raise ValueError(
            f"{fname}: expected data of shape {want} for nse={ishape[0]} and shape {shape}, "
            f"got {dshape}."
        )


@register_pytree_node_class
class BCSR(JAXSparse):
    """A sparse array in JAX's compressed-row format: ``BCSR((data, indices, indptr),
    shape=...)`` with 2 sparse dimensions (rows and columns) followed by dense ones. A
    pytree (``data``, ``indices`` and ``indptr`` are its leaves). Unlike JAX's, there are
    no batch dimensions (``n_batch`` is always 0)."""

    data: Any
    indices: Any
    indptr: Any
    shape: tuple[int, ...]
    indices_sorted: bool
    unique_indices: bool

    def __init__(
        self,
        args: tuple[Any, Any, Any],
        *,
        shape: Sequence[int],
        indices_sorted: bool = False,
        unique_indices: bool = False,
    ) -> None:
        fname = "BCSR"
        if not isinstance(args, (tuple, list)) or len(args) != 3:
            raise TypeError(
                f"{fname}: expected args as a triple (data, indices, indptr), got "
                f"{type(args).__name__}."
            )
        data = _operand(args[0], fname, "data")
        indices = _operand(args[1], fname, "indices")
        indptr = _operand(args[2], fname, "indptr")
        if isinstance(shape, (int, np.integer)) or shape is None:
            raise TypeError(f"{fname}: expected shape as a sequence of ints, got {shape!r}.")
        shape_t = tuple(_static_int(s, fname, "shape entry") for s in shape)
        _validate(fname, data, indices, indptr, shape_t)
        self.data, self.indices, self.indptr, self.shape = data, indices, indptr, shape_t
        self.indices_sorted = bool(indices_sorted)
        self.unique_indices = bool(unique_indices)

    @property
    def nse(self) -> int:
        """The number of stored entries (padding included)."""
        return _shape_of(self.indices)[-1]

    @property
    def n_batch(self) -> int:
        """The number of batch dimensions: always 0 in functrace."""
        return 0

    @property
    def n_sparse(self) -> int:
        """The number of sparse dimensions: always 2."""
        return 2

    @property
    def n_dense(self) -> int:
        """The number of dense dimensions (stored in ``data``)."""
        return len(self.shape) - 2

    def __repr__(self) -> str:
        try:
            body = f"{self.dtype}{list(self.shape)}, nse={self.nse}"
            if self.n_dense:
                body += f", n_dense={self.n_dense}"
            text = f"BCSR({body})"
        except Exception:
            return "BCSR(<invalid>)"
        if isinstance(self.data, core.Tracer):
            return f"{self.data.describe()} in {text}"
        return text

    def tree_flatten(self) -> tuple[tuple[Any, Any, Any], tuple[Any, ...]]:
        """``((data, indices, indptr), (shape, indices_sorted, unique_indices))``."""
        leaves = (self.data, self.indices, self.indptr)
        return leaves, (self.shape, self.indices_sorted, self.unique_indices)

    @classmethod
    def tree_unflatten(cls, aux: tuple[Any, ...], children: Sequence[Any]) -> BCSR:
        """A BCSR from its leaves (unchecked, except that ``vmap`` cannot map them)."""
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        obj.shape, obj.indices_sorted, obj.unique_indices = aux
        ishape = getattr(obj.indices, "shape", None)
        if isinstance(ishape, tuple) and len(ishape) != 1:
            raise ValueError(
                f"BCSR: a transform gave indices of shape {ishape} for a BCSR of shape "
                f"{obj.shape}: functrace's BCSR has no batch dimensions, so vmap can neither "
                f"map a BCSR argument's axis nor stack BCSR results."
            )
        return obj

    @classmethod
    def fromdense(
        cls,
        mat: Any,
        *,
        nse: int | None = None,
        index_dtype: Any = np.int32,
        n_dense: int = 0,
        n_batch: int = 0,
    ) -> BCSR:
        """The BCSR of a dense array (see :func:`bcsr_fromdense`)."""
        return bcsr_fromdense(
            mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype
        )

    @classmethod
    def from_bcoo(cls, arr: BCOO) -> BCSR:
        """The BCSR of a BCOO array with 2 sparse dimensions (its indices sorted first
        unless they are known to be)."""
        fname = "BCSR.from_bcoo"
        if not isinstance(arr, BCOO):
            raise TypeError(f"{fname}: expected a BCOO array, got {type(arr).__name__}.")
        if arr.n_sparse != 2:
            raise NotImplementedError(f"{fname}: requires n_sparse=2, got {arr.n_sparse}.")
        if not arr.indices_sorted:
            arr = arr.sort_indices()
        idt = _dtype_of(arr.indices)
        indptr = _csr_pointers(arr.indices[:, 0], arr.shape[0], idt)
        return cls((arr.data, arr.indices[:, 1], indptr), shape=arr.shape)

    def to_bcoo(self) -> BCOO:
        """The BCOO array of the same entries (padding gets row ``n_rows``)."""
        return _new(self.data, _coo_indices(self.indices, self.indptr), self.shape)

    def todense(self) -> Any:
        """The dense array (repeated entries added, padding dropped)."""
        return bcsr_todense(self)

    def transpose(self, *args: Any, **kwargs: Any) -> Any:
        """Not implemented, as in JAX (a NotImplementedError)."""
        raise NotImplementedError("BCSR.transpose: transposing a BCSR array is not supported.")

    @property
    def T(self) -> Any:
        """Not implemented, as in JAX (a NotImplementedError)."""
        return self.transpose()

    def __matmul__(self, other: Any) -> Any:
        fname = "BCSR.__matmul__"
        rhs = _operand(other, fname, "the right operand")
        rs = _shape_of(rhs)
        if self.ndim != 2 or len(rs) not in (1, 2) or rs[0] != self.shape[1]:
            raise ValueError(
                f"{fname}: expected a 2-D BCSR array and a 1-D or 2-D right operand of "
                f"matching size, got shapes {self.shape} and {rs}."
            )
        return bcsr_dot_general(self, rhs, dimension_numbers=(((1,), (0,)), ((), ())))

    def __rmatmul__(self, other: Any) -> Any:
        raise NotImplementedError(
            "BCSR.__rmatmul__: a dense array times a BCSR array is not supported, as in "
            "JAX; use .to_bcoo() (BCOO supports both sides)."
        )


def _check_bcsr(fname: str, mat: Any) -> BCSR:
    if not isinstance(mat, BCSR):
        raise TypeError(f"{fname}: expected a BCSR array, got {type(mat).__name__}.")
    return mat


def bcsr_fromdense(
    mat: Any,
    *,
    nse: int | None = None,
    n_batch: int = 0,
    n_dense: int = 0,
    index_dtype: Any = np.int32,
) -> BCSR:
    """The BCSR of the dense ``mat`` (2 sparse dimensions, then ``n_dense`` dense
    ones): its nonzero entries in row-major order, ``nse`` of them as in
    :func:`bcoo_fromdense`. ``n_batch`` must be 0."""
    fname = "bcsr_fromdense"
    _no_batch(fname, n_batch)
    m = _operand(mat, fname, "mat")
    nd = _static_int(n_dense, fname, "n_dense")
    if len(_shape_of(m)) - nd != 2:
        raise ValueError(
            f"{fname}: a BCSR array has 2 sparse dimensions; got shape {_shape_of(m)} with "
            f"n_dense={nd}."
        )
    coo = bcoo_fromdense(m, nse=nse, n_dense=nd, index_dtype=index_dtype)
    idt = _dtype_of(coo.indices)
    indptr = _csr_pointers(coo.indices[:, 0], coo.shape[0], idt)
    return BCSR((coo.data, coo.indices[:, 1], indptr), shape=coo.shape)


def bcsr_todense(mat: BCSR) -> Any:
    """The dense array of ``mat``; differentiable in ``mat.data``."""
    mat = _check_bcsr("bcsr_todense", mat)
    return to_array(_todense(mat.data, _coo_indices(mat.indices, mat.indptr), mat.shape))


def bcsr_extract(indices: Any, indptr: Any, mat: Any) -> Any:
    """The values of the dense ``mat`` at the BCSR ``indices``/``indptr`` (zero at
    padding): the ``data`` of a BCSR with that pattern, as JAX's."""
    fname = "bcsr_extract"
    idx = _operand(indices, fname, "indices")
    ptr = _operand(indptr, fname, "indptr")
    m = _operand(mat, fname, "mat")
    shape = _shape_of(m)
    nse = _shape_of(idx)[0] if _shape_of(idx) else 0
    _validate(fname, fnp.zeros((nse, *shape[2:])), idx, ptr, shape)
    return to_array(_extract(_coo_indices(idx, ptr), m))


def bcsr_dot_general(
    lhs: Any,
    rhs: Any,
    *,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """``lax.dot_general`` of a BCSR ``lhs`` and a dense ``rhs`` (a dense result), as
    JAX's; a BCSR ``rhs`` is a NotImplementedError, as in JAX."""
    fname = "bcsr_dot_general"
    if not isinstance(lhs, BCSR) or isinstance(rhs, (BCSR, BCOO)):
        raise NotImplementedError(
            f"{fname}: only a BCSR lhs and a dense rhs are supported, as in JAX; got "
            f"{type(lhs).__name__} and {type(rhs).__name__}."
        )
    return bcoo_dot_general(
        lhs.to_bcoo(),
        _operand(rhs, fname, "rhs"),
        dimension_numbers=dimension_numbers,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
