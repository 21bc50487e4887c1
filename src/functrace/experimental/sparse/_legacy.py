"""JAX's older matrix formats: ``COO`` (``data``, ``row``, ``col``), ``CSR`` and ``CSC``
(``data``, ``indices``, ``indptr``), all 2-D, with ``coo_*``/``csr_*`` conversions and
products with dense vectors and matrices.

Each converts its index arrays to BCOO indices and uses the BCOO functions, so
derivatives in the data, batching over it and ``jit`` are theirs. ``fromdense`` pads
as JAX's: a COO padding entry is ``(0, 0)`` with zero data, a CSR one has column 0 and
lies past the last row pointer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core, lax
from functrace._array import to_array
from functrace.experimental.sparse._bcoo import (
    JAXSparse,
    _dtype_of,
    _new,
    _operand,
    _shape_of,
    _static_int,
    _todense,
)
from functrace.experimental.sparse._bcsr import _coo_indices, _csr_pointers
from functrace.experimental.sparse._products import _sparse_dense_dot
from functrace.tree_util import register_pytree_node_class

__all__ = [
    "COO",
    "CSC",
    "CSR",
    "coo_fromdense",
    "coo_matmat",
    "coo_matvec",
    "coo_todense",
    "csr_fromdense",
    "csr_matmat",
    "csr_matvec",
    "csr_todense",
]


def _shape2(fname: str, shape: Any) -> tuple[int, int]:
    if isinstance(shape, (int, np.integer)) or not isinstance(shape, (tuple, list)):
        raise TypeError(f"{fname}: expected shape as a pair of ints, got {shape!r}.")
    s = tuple(_static_int(x, fname, "shape entry") for x in shape)
    if len(s) != 2 or min(s) < 0:
        raise ValueError(f"{fname}: expected a 2-D shape, got {s}.")
    return s  # type: ignore[return-value]


def _vectors(fname: str, args: Any, names: tuple[str, str, str]) -> list[Any]:
    if not isinstance(args, (tuple, list)) or len(args) != 3:
        raise TypeError(
            f"{fname}: expected args as a triple ({', '.join(names)}), got {type(args).__name__}."
        )
    out = [_operand(a, fname, n) for a, n in zip(args, names)]
    for a, n in zip(out, names):
        if len(_shape_of(a)) != 1:
            raise ValueError(f"{fname}: expected a 1-D {n}, got shape {_shape_of(a)}.")
    for a, n in zip(out[1:], names[1:]):
        if _dtype_of(a).kind not in "iu":
            raise TypeError(f"{fname}: expected integer {n}, got dtype {_dtype_of(a)}.")
    return out


class _Legacy(JAXSparse):
    """What the three formats share."""

    shape: tuple[int, int]

    @property
    def nse(self) -> int:
        """The number of stored entries (padding included)."""
        return _shape_of(self.data)[0]

    def __repr__(self) -> str:
        text = f"{type(self).__name__}({self.dtype}{list(self.shape)}, nse={self.nse})"
        if isinstance(self.data, core.Tracer):
            return f"{self.data.describe()} in {text}"
        return text

    def _indices(self) -> Any:  # (nse, 2) BCOO indices of the matrix
        raise NotImplementedError

    def __matmul__(self, other: Any) -> Any:
        fname = f"{type(self).__name__}.__matmul__"
        if isinstance(other, _Legacy) or hasattr(other, "indices"):
            raise NotImplementedError(f"{fname}: products of two sparse matrices, as in JAX.")
        rhs = _operand(other, fname, "the right operand")
        rs = _shape_of(rhs)
        if len(rs) not in (1, 2):
            raise NotImplementedError(f"{fname}: products with an array of shape {rs}.")
        return _product(fname, self.data, self._indices(), self.shape, rhs, False)


def _product(fname: str, data: Any, indices: Any, shape: Any, rhs: Any, transpose: bool) -> Any:
    rs = _shape_of(rhs)
    n = shape[0] if transpose else shape[1]
    if not rs or rs[0] != n or len(rs) > 2:
        raise ValueError(
            f"{fname}: expected an operand with {n} rows for a matrix of shape {shape}"
            f"{' (transposed)' if transpose else ''}, got shape {rs}."
        )
    mat = _new(data, indices, tuple(shape))
    c = (0,) if transpose else (1,)
    return to_array(_sparse_dense_dot(fname, mat, rhs, c, (0,)))


@register_pytree_node_class
class COO(_Legacy):
    """JAX's COO matrix: ``COO((data, row, col), shape=(n, m))``; a pytree whose leaves
    are ``data``, ``row`` and ``col``. JAX recommends BCOO instead, and so does
    functrace."""

    row: Any
    col: Any

    def __init__(
        self,
        args: tuple[Any, Any, Any],
        *,
        shape: Sequence[int],
        rows_sorted: bool = False,
        cols_sorted: bool = False,
    ) -> None:
        fname = "COO"
        self.data, self.row, self.col = _vectors(fname, args, ("data", "row", "col"))
        if not _shape_of(self.data) == _shape_of(self.row) == _shape_of(self.col):
            raise ValueError(f"{fname}: expected data, row and col of one length.")
        self.shape = _shape2(fname, shape)
        self._rows_sorted, self._cols_sorted = bool(rows_sorted), bool(cols_sorted)

    def tree_flatten(self) -> tuple[tuple[Any, Any, Any], tuple[Any, ...]]:
        """``((data, row, col), (shape, rows_sorted, cols_sorted))``."""
        return (self.data, self.row, self.col), (
            self.shape,
            self._rows_sorted,
            self._cols_sorted,
        )

    @classmethod
    def tree_unflatten(cls, aux: tuple[Any, ...], children: Sequence[Any]) -> COO:
        """A COO from its leaves (unchecked)."""
        obj = object.__new__(cls)
        obj.data, obj.row, obj.col = children
        obj.shape, obj._rows_sorted, obj._cols_sorted = aux
        return obj

    def _indices(self) -> Any:
        idt = np.result_type(_dtype_of(self.row), _dtype_of(self.col))
        return fnp.stack([fnp.asarray(self.row).astype(idt), fnp.asarray(self.col).astype(idt)], 1)

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> COO:
        """The COO of a dense matrix (see :func:`coo_fromdense`)."""
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    def todense(self) -> Any:
        """The dense matrix (repeated entries added)."""
        return coo_todense(self)

    def transpose(self, axes: Any = None) -> COO:
        """The transpose (``row`` and ``col`` swapped)."""
        if axes is not None:
            raise NotImplementedError("COO.transpose: the axes argument is not supported.")
        return COO(
            (self.data, self.col, self.row),
            shape=self.shape[::-1],
            rows_sorted=self._cols_sorted,
            cols_sorted=self._rows_sorted,
        )

    @property
    def T(self) -> COO:
        """The transpose."""
        return self.transpose()


@register_pytree_node_class
class CSR(_Legacy):
    """JAX's CSR matrix: ``CSR((data, indices, indptr), shape=(n, m))``, row ``i``'s
    entries from ``indptr[i]`` to ``indptr[i + 1]``; a pytree. ``.T`` is a CSC."""

    indices: Any
    indptr: Any
    _fname = "CSR"

    def __init__(self, args: tuple[Any, Any, Any], *, shape: Sequence[int]) -> None:
        fname = self._fname
        names = ("data", "indices", "indptr")
        self.data, self.indices, self.indptr = _vectors(fname, args, names)
        self.shape = _shape2(fname, shape)
        n_ptr = self.shape[1 if fname == "CSC" else 0] + 1
        if _shape_of(self.indptr) != (n_ptr,) or _shape_of(self.data) != _shape_of(self.indices):
            raise ValueError(
                f"{fname}: expected data and indices of one length and indptr of length "
                f"{n_ptr} for shape {self.shape}, got {_shape_of(self.data)}, "
                f"{_shape_of(self.indices)} and {_shape_of(self.indptr)}."
            )

    def tree_flatten(self) -> tuple[tuple[Any, Any, Any], tuple[Any, ...]]:
        """``((data, indices, indptr), (shape,))``."""
        return (self.data, self.indices, self.indptr), (self.shape,)

    @classmethod
    def tree_unflatten(cls, aux: tuple[Any, ...], children: Sequence[Any]) -> Any:
        """A matrix from its leaves (unchecked)."""
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        (obj.shape,) = aux
        return obj

    def _indices(self) -> Any:
        return _coo_indices(self.indices, self.indptr)

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> Any:
        """The CSR of a dense matrix (see :func:`csr_fromdense`)."""
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    def todense(self) -> Any:
        """The dense matrix (repeated entries added)."""
        return csr_todense(self)

    def transpose(self, axes: Any = None) -> Any:
        """The transpose: a CSC with the same arrays."""
        if axes is not None:
            raise NotImplementedError("CSR.transpose: the axes argument is not supported.")
        return CSC((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    @property
    def T(self) -> Any:
        """The transpose."""
        return self.transpose()


@register_pytree_node_class
class CSC(CSR):
    """JAX's CSC matrix: ``CSC((data, indices, indptr), shape=(n, m))``, column ``j``'s
    entries from ``indptr[j]`` to ``indptr[j + 1]`` (``indices`` are rows); a pytree.
    ``.T`` is a CSR."""

    _fname = "CSC"

    def _indices(self) -> Any:
        return lax.rev(_coo_indices(self.indices, self.indptr), (1,))

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> Any:
        """The CSC of a dense matrix (the CSR of its transpose, transposed)."""
        m = _operand(mat, "CSC.fromdense", "mat")
        return csr_fromdense(fnp.transpose(m), nse=nse, index_dtype=index_dtype).T

    def todense(self) -> Any:
        """The dense matrix (repeated entries added)."""
        return to_array(_todense(self.data, self._indices(), self.shape))

    def transpose(self, axes: Any = None) -> Any:
        """The transpose: a CSR with the same arrays."""
        if axes is not None:
            raise NotImplementedError("CSC.transpose: the axes argument is not supported.")
        return CSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])


# ---------------------------------------------------------------------------
# Functions
# ---------------------------------------------------------------------------


def _nonzeros(fname: str, mat: Any, nse: int | None) -> tuple[Any, Any, Any, Any]:
    """``(m, nse, row, col)``: the first ``nse`` nonzero positions (row-major), padded
    with ``(0, 0)``, and ``m`` with the data read there (zero at padding)."""
    m = _operand(mat, fname, "mat")
    if len(_shape_of(m)) != 2:
        raise ValueError(f"{fname}: expected a 2-D matrix, got shape {_shape_of(m)}.")
    count = fnp.sum(fnp.not_equal(m, 0))
    if nse is None:
        known = core.concrete_or_none(count)
        if known is None:
            raise TypeError(
                f"{fname}: the number of nonzeros of a traced matrix is unknown while "
                f"tracing; pass nse= (the number of entries to store)."
            )
        nse = int(np.asarray(known))
    n = _static_int(nse, fname, "nse")
    if n < 0:
        raise ValueError(f"{fname}: expected nse >= 0, got {n}.")
    row, col = fnp.nonzero(m, size=n)
    true = fnp.less(lax.iota(np.int64, n), count)
    data = fnp.where(true, m[row, col], fnp.zeros((), _dtype_of(m)))
    return data, true, row, col


def coo_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> COO:
    """The COO of a dense matrix: its nonzero entries in row-major order, ``nse`` of
    them (padding is ``(0, 0)`` with zero data, as JAX's); ``rows_sorted``."""
    data, _, row, col = _nonzeros("coo_fromdense", mat, nse)
    idt = np.dtype(index_dtype)
    shape = _shape_of(_operand(mat, "coo_fromdense", "mat"))
    return COO(
        (data, fnp.asarray(row).astype(idt), fnp.asarray(col).astype(idt)),
        shape=shape,
        rows_sorted=True,
    )


def _check(fname: str, mat: Any, cls: type) -> Any:
    if type(mat) is not cls:
        raise TypeError(f"{fname}: expected a {cls.__name__} matrix, got {type(mat).__name__}.")
    return mat


def _legacy_product(fname: str, cls: type, mat: Any, x: Any, name: str, transpose: Any) -> Any:
    """``mat @ x`` (``mat.T @ x`` with ``transpose``) for a dense vector (``name`` "v")
    or matrix ("B") ``x``, ``mat`` of format ``cls``."""
    mat = _check(fname, mat, cls)
    x = _operand(x, fname, name)
    nd, word = (1, "vector") if name == "v" else (2, "matrix")
    if len(_shape_of(x)) != nd:
        raise ValueError(f"{fname}: expected a {word}, got shape {_shape_of(x)}.")
    return _product(fname, mat.data, mat._indices(), mat.shape, x, bool(transpose))


def coo_todense(mat: COO) -> Any:
    """The dense matrix of a COO one (repeated entries added)."""
    mat = _check("coo_todense", mat, COO)
    return to_array(_todense(mat.data, mat._indices(), mat.shape))


def coo_matvec(mat: COO, v: Any, transpose: bool = False) -> Any:
    """``mat @ v`` (``mat.T @ v`` with ``transpose``) for a dense vector ``v``."""
    return _legacy_product("coo_matvec", COO, mat, v, "v", transpose)


def coo_matmat(mat: COO, B: Any, *, transpose: bool = False) -> Any:
    """``mat @ B`` (``mat.T @ B`` with ``transpose``) for a dense matrix ``B``."""
    return _legacy_product("coo_matmat", COO, mat, B, "B", transpose)


def csr_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> CSR:
    """The CSR of a dense matrix: its nonzero entries in row-major order, ``nse`` of
    them (padding has column 0 and lies past the last row pointer, as JAX's)."""
    fname = "csr_fromdense"
    data, true, row, col = _nonzeros(fname, mat, nse)
    shape = _shape_of(_operand(mat, fname, "mat"))
    idt = np.dtype(index_dtype)
    rows = fnp.where(true, row, shape[0])
    indptr = _csr_pointers(rows, shape[0], idt)
    return CSR((data, fnp.asarray(col).astype(idt), indptr), shape=shape)


def csr_todense(mat: CSR) -> Any:
    """The dense matrix of a CSR one (repeated entries added)."""
    mat = _check("csr_todense", mat, CSR)
    return to_array(_todense(mat.data, mat._indices(), mat.shape))


def csr_matvec(mat: CSR, v: Any, transpose: bool = False) -> Any:
    """``mat @ v`` (``mat.T @ v`` with ``transpose``) for a dense vector ``v``."""
    return _legacy_product("csr_matvec", CSR, mat, v, "v", transpose)


def csr_matmat(mat: CSR, B: Any, *, transpose: bool = False) -> Any:
    """``mat @ B`` (``mat.T @ B`` with ``transpose``) for a dense matrix ``B``."""
    return _legacy_product("csr_matmat", CSR, mat, B, "B", transpose)
