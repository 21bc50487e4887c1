"""The BCOO array and its operations, written with functrace's differentiable gathers,
scatter-adds, sorts and products: every function here traces, so ``grad``, ``jvp``,
``vmap`` and ``jit`` go through it without rules of its own.

Layout: ``data`` of shape ``(nse, *dense_shape)`` and ``indices`` of shape
``(nse, n_sparse)``; the array's shape is ``sparse_shape + dense_shape``. An index
wraps once from the end (``-1`` is the last position) and an index tuple still out of
range after that is padding: its entry reads as zero and is never written, as JAX's
(``fromdense(nse=...)`` pads with ``indices == shape``). Batch dimensions
(``n_batch > 0``) are not supported.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core, lax
from functrace._array import to_array
from functrace.lax import gather_scatter as lg
from functrace.tree_util import register_pytree_node_class

__all__ = [
    "BCOO",
    "JAXSparse",
    "bcoo_extract",
    "bcoo_fromdense",
    "bcoo_reduce_sum",
    "bcoo_sort_indices",
    "bcoo_sum_duplicates",
    "bcoo_todense",
    "bcoo_transpose",
    "empty",
    "eye",
    "todense",
]


def _shape_of(x: Any) -> tuple[int, ...]:
    return tuple(core.get_aval(x).shape)


def _dtype_of(x: Any) -> np.dtype:
    return np.dtype(core.get_aval(x).dtype)


def _operand(x: Any, fname: str, what: str) -> Any:
    """A tracer, or ``x`` as a functrace Array; a TypeError for non-numeric input."""
    if isinstance(x, BCOO):
        raise TypeError(f"{fname}: expected a dense array for {what}, got a BCOO array.")
    if isinstance(x, core.Tracer):
        return x
    try:
        a = np.asarray(x)
    except Exception:
        raise TypeError(f"{fname}: expected an array for {what}, got {type(x).__name__}.") from None
    if a.dtype.kind not in "biufc":
        raise TypeError(f"{fname}: expected a numeric array for {what}, got dtype {a.dtype}.")
    return to_array(a)


def _static_int(x: Any, fname: str, what: str) -> int:
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(
            f"{fname}: expected an integer {what}, got {type(x).__name__} ({x!r})."
        ) from None


def _column(indices: Any, k: int) -> Any:
    return indices[:, k]


def _columns(indices: Any, cols: Sequence[int]) -> list[Any]:
    return [_column(indices, k) for k in cols]


def _select_columns(indices: Any, cols: Sequence[int]) -> Any:
    """``indices[:, cols]`` (an ``(nse, len(cols))`` array, also when ``cols`` is empty)."""
    nse = _shape_of(indices)[0]
    if not cols:
        return to_array(np.zeros((nse, 0), _dtype_of(indices)))
    if list(cols) == list(range(_shape_of(indices)[1])):
        return indices
    return fnp.stack(_columns(indices, cols), axis=1)


def _zeros(shape: tuple[int, ...], dtype: Any) -> Any:
    return lax.broadcast_in_dim(np.zeros((), dtype), shape, ())


# ---------------------------------------------------------------------------
# The array
# ---------------------------------------------------------------------------


class JAXSparse:
    """The base of functrace's sparse arrays (JAX's ``sparse.JAXSparse``): what
    ``BCOO``, ``BCSR`` and the legacy ``COO``/``CSR``/``CSC`` share. NumPy's operators
    defer to their reflected methods, they are not hashable, and ``dtype``, ``ndim``
    and ``size`` come from ``data`` and ``shape``."""

    __array_ufunc__ = None  # NumPy operators defer to the array's reflected methods
    __hash__ = None  # type: ignore[assignment]

    data: Any
    shape: tuple[int, ...]

    @property
    def dtype(self) -> np.dtype:
        """The dtype of ``data``."""
        return _dtype_of(self.data)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements of the dense array."""
        return math.prod(self.shape)

    def block_until_ready(self) -> Any:
        """``self`` (computations are never asynchronous in functrace)."""
        return self


@register_pytree_node_class
class BCOO(JAXSparse):
    """A sparse array in JAX's batched-coordinate format: ``BCOO((data, indices),
    shape=...)``, ``data`` of shape ``(nse, *dense_shape)`` and ``indices`` of shape
    ``(nse, n_sparse)``. A pytree (``data`` and ``indices`` are its leaves, the shape is
    static), so it passes through ``jit``, ``grad`` and ``vmap``; repeated indices add
    up and out-of-range ones are padding. Unlike JAX's, ``indices`` has no batch
    dimensions (``n_batch`` is always 0), and ``vmap`` maps the data of a BCOO built
    inside the function, not a BCOO argument's batch axis."""

    data: Any
    indices: Any
    shape: tuple[int, ...]
    indices_sorted: bool
    unique_indices: bool

    def __init__(
        self,
        args: tuple[Any, Any],
        *,
        shape: Sequence[int],
        indices_sorted: bool = False,
        unique_indices: bool = False,
    ) -> None:
        fname = "BCOO"
        if not isinstance(args, (tuple, list)) or len(args) != 2:
            raise TypeError(
                f"{fname}: expected args as a pair (data, indices), got {type(args).__name__}"
                + (f" of length {len(args)}." if isinstance(args, (tuple, list)) else ".")
            )
        data = _operand(args[0], fname, "data")
        indices = _operand(args[1], fname, "indices")
        if isinstance(shape, (int, np.integer)) or shape is None:
            raise TypeError(f"{fname}: expected shape as a sequence of ints, got {shape!r}.")
        shape_t = tuple(_static_int(s, fname, "shape entry") for s in shape)
        if any(s < 0 for s in shape_t):
            raise ValueError(f"{fname}: expected a shape of non-negative sizes, got {shape_t}.")
        _validate(fname, data, indices, shape_t)
        self.data = data
        self.indices = indices
        self.shape = shape_t
        self.indices_sorted = bool(indices_sorted)
        self.unique_indices = bool(unique_indices)

    # -- attributes ------------------------------------------------------------

    @property
    def nse(self) -> int:
        """The number of stored entries (padding included)."""
        return _shape_of(self.indices)[-2]

    @property
    def n_batch(self) -> int:
        """The number of batch dimensions: always 0 in functrace."""
        return len(_shape_of(self.indices)) - 2

    @property
    def n_sparse(self) -> int:
        """The number of sparse dimensions (the leading ones)."""
        return _shape_of(self.indices)[-1]

    @property
    def n_dense(self) -> int:
        """The number of dense dimensions (the trailing ones, stored in ``data``)."""
        return len(_shape_of(self.data)) - 1 - self.n_batch

    @property
    def T(self) -> BCOO:
        """The transpose (all axes reversed)."""
        return self.transpose()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d BCOO array.")
        return self.shape[0]

    def __repr__(self) -> str:
        try:
            body = f"{self.dtype}{list(self.shape)}, nse={self.nse}"
            if self.n_dense:
                body += f", n_dense={self.n_dense}"
            text = f"BCOO({body})"
        except Exception:
            return "BCOO(<invalid>)"
        if isinstance(self.data, core.Tracer):
            return f"{self.data.describe()} in {text}"
        return text

    # -- pytree ----------------------------------------------------------------

    def tree_flatten(self) -> tuple[tuple[Any, Any], tuple[Any, ...]]:
        """``((data, indices), (shape, indices_sorted, unique_indices))``."""
        return (self.data, self.indices), (self.shape, self.indices_sorted, self.unique_indices)

    @classmethod
    def tree_unflatten(cls, aux: tuple[Any, ...], children: Sequence[Any]) -> BCOO:
        """A BCOO from its leaves, unchecked except where the leaves are arrays whose
        shapes cannot hold the static shape (a transform that mapped an axis of them)."""
        obj = object.__new__(cls)
        obj.data, obj.indices = children
        obj.shape, obj.indices_sorted, obj.unique_indices = aux
        ishape = getattr(obj.indices, "shape", None)
        dshape = getattr(obj.data, "shape", None)
        if isinstance(ishape, tuple) and isinstance(dshape, tuple):
            if len(ishape) != 2 or dshape[:1] != ishape[:1]:
                raise ValueError(
                    f"BCOO: a transform gave data of shape {dshape} and indices of shape "
                    f"{ishape} for a BCOO of shape {obj.shape}: functrace's BCOO has no batch "
                    f"dimensions, so vmap can neither map a BCOO argument's axis nor stack "
                    f"BCOO results. Map the data array and build the BCOO inside the "
                    f"function (return dense results, e.g. .todense() or .data)."
                )
        return obj

    # -- conversions ------------------------------------------------------------

    @classmethod
    def fromdense(
        cls,
        mat: Any,
        *,
        nse: int | None = None,
        index_dtype: Any = np.int32,
        n_dense: int = 0,
        n_batch: int = 0,
    ) -> BCOO:
        """The BCOO of a dense array (see :func:`bcoo_fromdense`)."""
        return bcoo_fromdense(
            mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype
        )

    def todense(self) -> Any:
        """The dense array (repeated entries added, padding dropped)."""
        return bcoo_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> BCOO:
        """The array with its axes permuted (all reversed by default); sparse axes stay
        among the sparse ones and dense among the dense ones, as in JAX."""
        perm = list(range(self.ndim))[::-1] if axes is None else list(axes)
        out = bcoo_transpose(self, permutation=perm)
        ns = self.n_sparse
        if all(isinstance(p, (int, np.integer)) for p in perm) and perm[:ns] == list(range(ns)):
            out.indices_sorted = self.indices_sorted
        return out

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> BCOO:
        """Repeated indices summed into one entry, indices sorted, padding last; with
        ``remove_zeros`` (the default) entries whose data is zero are dropped too.
        ``nse`` fixes the number of entries (needed under ``jit``/``vmap``): more pads,
        fewer drops the last ones. See :func:`bcoo_sum_duplicates`."""
        if remove_zeros:
            return _eliminate_zeros(self, nse)
        return bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self) -> BCOO:
        """The entries in lexicographic order of their indices (see
        :func:`bcoo_sort_indices`)."""
        return bcoo_sort_indices(self)

    def astype(self, dtype: Any) -> BCOO:
        """The array with ``data`` converted to ``dtype``."""
        data = fnp.asarray(self.data).astype(dtype)
        return _like(self, data)

    # -- arithmetic ---------------------------------------------------------------

    def __neg__(self) -> BCOO:
        return _like(self, fnp.negative(self.data))

    def __pos__(self) -> BCOO:
        return _like(self, fnp.positive(self.data))

    def __abs__(self) -> BCOO:
        mat = _unique(self)
        return _like(mat, fnp.abs(mat.data))

    def __matmul__(self, other: Any) -> Any:
        return _ARITH["matmul"](self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _ARITH["matmul"](other, self)

    def __mul__(self, other: Any) -> Any:
        return _ARITH["multiply"](self, other)

    def __rmul__(self, other: Any) -> Any:
        return _ARITH["multiply"](other, self)

    def __truediv__(self, other: Any) -> Any:
        if isinstance(other, BCOO):
            raise NotImplementedError(
                "BCOO.__truediv__: division by a sparse array would give a dense result; "
                "call .todense() first if that is intended."
            )
        divisor = _operand(other, "BCOO.__truediv__", "the divisor")
        return _like(self, _ARITH["multiply_dense"](self, fnp.true_divide(1.0, divisor)))

    def __add__(self, other: Any) -> Any:
        return _ARITH["add"](self, other, "BCOO.__add__")

    def __radd__(self, other: Any) -> Any:
        return _ARITH["add"](other, self, "BCOO.__radd__")

    def __sub__(self, other: Any) -> Any:
        return _ARITH["add"](self, _ARITH["negate"](other, "BCOO.__sub__"), "BCOO.__sub__")

    def __rsub__(self, other: Any) -> Any:
        if isinstance(other, BCOO):
            return _ARITH["add"](other, -self, "BCOO.__rsub__")
        return _ARITH["negate"](other, "BCOO.__rsub__")  # raises: sparse and dense

    def reshape(self, *shape: Any, order: str = "C") -> BCOO:
        """The array with a new shape (``-1`` infers one size); see
        :func:`bcoo_reshape` for how sparse and dense axes may be reshaped."""
        return _ARITH["reshape"](self, *shape, order=order)

    def __getitem__(self, idx: Any) -> Any:
        return _ARITH["getitem"](self, idx)

    def sum(self, axis: Any = None, keepdims: bool = False) -> Any:
        """The sum over ``axis`` (all axes by default): a BCOO, or a dense scalar when
        every axis is summed, as JAX's (``keepdims`` is not supported)."""
        if keepdims:
            raise NotImplementedError("BCOO.sum: keepdims=True is not supported.")
        if axis is None:
            axes = tuple(range(self.ndim))
        elif isinstance(axis, (tuple, list)):
            axes = tuple(axis)
        else:
            axes = (axis,)
        axes = tuple(_normalize_axis("BCOO.sum", a, self.ndim) for a in axes)
        out = bcoo_reduce_sum(self, axes=axes)
        if out.shape == ():
            return fnp.sum(out.data)
        return out


# The products and sums with other arrays, filled in by ``_products`` (which imports
# this module): "matmul", "multiply", "add", "multiply_dense"; and by ``_shapes``:
# "reshape", "getitem".
_ARITH: dict[str, Callable[..., Any]] = {}


def _normalize_axis(fname: str, a: Any, ndim: int) -> int:
    a = _static_int(a, fname, "axis")
    if not -ndim <= a < ndim:
        raise ValueError(f"{fname}: expected an axis in [{-ndim}, {ndim}), got {a}.")
    return a % ndim if ndim else a


def _no_batch(fname: str, n_batch: Any) -> None:
    """Refuse batch dimensions, which functrace's BCOO does not have."""
    if _static_int(n_batch, fname, "n_batch") != 0:
        raise NotImplementedError(
            f"{fname}: n_batch={n_batch} is not supported; functrace's BCOO has no batch "
            f"dimensions (n_batch=0)."
        )


def _bcoo_format(fname: str, sparse_format: str) -> None:
    """Refuse the formats other than BCOO, which functrace does not have."""
    if sparse_format != "bcoo":
        raise NotImplementedError(
            f"{fname}: only sparse_format='bcoo' is supported, got {sparse_format!r}."
        )


def _validate(fname: str, data: Any, indices: Any, shape: tuple[int, ...]) -> None:
    ishape, dshape = _shape_of(indices), _shape_of(data)
    if _dtype_of(indices).kind not in "iu":
        raise TypeError(f"{fname}: expected integer indices, got dtype {_dtype_of(indices)}.")
    if len(ishape) < 2:
        raise ValueError(f"{fname}: expected indices of shape (nse, n_sparse), got shape {ishape}.")
    if len(ishape) > 2:
        raise NotImplementedError(
            f"{fname}: indices of shape {ishape} have n_batch={len(ishape) - 2} batch "
            f"dimensions; functrace's BCOO supports n_batch=0 only (indices of shape "
            f"(nse, n_sparse))."
        )
    nse, n_sparse = ishape
    if n_sparse > len(shape):
        raise ValueError(
            f"{fname}: indices of shape {ishape} have {n_sparse} sparse dimensions, more "
            f"than the {len(shape)} of shape {shape}."
        )
    want = (nse, *shape[n_sparse:])
    if dshape != want:
        raise ValueError(
            f"{fname}: expected data of shape {want} for nse={nse} and shape {shape} "
            f"(n_sparse={n_sparse}), got {dshape}."
        )


def _like(mat: BCOO, data: Any, **flags: bool) -> BCOO:
    """``mat`` with other data (same indices and flags)."""
    out = object.__new__(BCOO)
    out.data, out.indices, out.shape = to_array(data), mat.indices, mat.shape
    out.indices_sorted = flags.get("indices_sorted", mat.indices_sorted)
    out.unique_indices = flags.get("unique_indices", mat.unique_indices)
    return out


def _new(
    data: Any, indices: Any, shape: tuple[int, ...], sorted_: bool = False, unique: bool = False
) -> BCOO:
    return BCOO((data, indices), shape=shape, indices_sorted=sorted_, unique_indices=unique)


def _check_bcoo(fname: str, mat: Any) -> BCOO:
    if not isinstance(mat, BCOO):
        raise TypeError(f"{fname}: expected a BCOO array, got {type(mat).__name__}.")
    return mat


# ---------------------------------------------------------------------------
# Dense <-> sparse
# ---------------------------------------------------------------------------


def _todense(data: Any, indices: Any, shape: tuple[int, ...]) -> Any:
    ns = _shape_of(indices)[1]
    if ns == 0:
        return fnp.sum(data, axis=0)
    zeros = _zeros(shape, _dtype_of(data))
    return lg.scatter_add(zeros, data, _columns(indices, range(ns)), tuple(range(ns)), mode="fill")


def bcoo_todense(mat: BCOO) -> Any:
    """The dense array of ``mat``: its data added at its indices (repeats add up,
    padding is dropped); differentiable in ``mat.data``."""
    mat = _check_bcoo("bcoo_todense", mat)
    return to_array(_todense(mat.data, mat.indices, mat.shape))


def todense(arr: Any) -> Any:
    """The dense array of a sparse array (BCOO, BCSR, COO, CSR or CSC); any other array
    is returned as it is."""
    if (
        isinstance(arr, BCOO)
        or hasattr(arr, "todense")
        and (hasattr(arr, "indptr") or hasattr(arr, "row"))
    ):
        return arr.todense()
    return arr


def _extract(indices: Any, arr: Any) -> Any:
    ns = _shape_of(indices)[1]
    nse = _shape_of(indices)[0]
    if ns == 0:
        shape = _shape_of(arr)
        return lax.broadcast_in_dim(arr, (nse, *shape), tuple(range(1, len(shape) + 1)))
    zero = np.zeros((), _dtype_of(arr))[()]
    return lg.gather(
        arr, _columns(indices, range(ns)), tuple(range(ns)), mode="fill", fill_value=zero
    )


def bcoo_extract(sparr: BCOO, arr: Any, *, assume_unique: bool | None = None) -> BCOO:
    """A BCOO with the indices of ``sparr`` and the values of the dense ``arr`` at them
    (zero at padding). With ``assume_unique=False`` a repeated index gets the value
    at its first entry and zeros at the others, as JAX's; by default
    ``sparr.unique_indices`` decides."""
    fname = "bcoo_extract"
    sparr = _check_bcoo(fname, sparr)
    a = _operand(arr, fname, "arr")
    if _shape_of(a) != sparr.shape:
        raise ValueError(
            f"{fname}: expected arr of the sparse array's shape {sparr.shape}, got {_shape_of(a)}."
        )
    if assume_unique is None:
        assume_unique = sparr.unique_indices
    data = _extract(sparr.indices, a)
    if not assume_unique:
        data = data * _first_occurrence(sparr.indices, sparr.shape, _shape_of(data))
    return _like(sparr, data)


def _first_occurrence(indices: Any, shape: tuple[int, ...], data_shape: tuple[int, ...]) -> Any:
    """1 where an entry's index (out-of-range ones counted as one) is not repeated by an
    earlier entry, else 0, broadcast to ``data_shape`` (float of no particular dtype)."""
    _, inverse, _ = _unique_rows(indices, shape)
    nse = data_shape[0]
    pos = lax.iota(np.int64, nse)
    # an entry is the first of its group when no earlier entry maps to the same slot
    first = fnp.zeros(nse, np.int64) + nse
    first = first.at[inverse].min(pos)
    keep = fnp.asarray(first[inverse] == pos)
    return lax.broadcast_in_dim(keep, data_shape, (0,))


def bcoo_fromdense(
    mat: Any,
    *,
    nse: int | None = None,
    n_batch: int = 0,
    n_dense: int = 0,
    index_dtype: Any = np.int32,
) -> BCOO:
    """The BCOO of the dense ``mat``: its nonzero entries in row-major order, ``nse`` of
    them (by default as many as there are; more pad with out-of-range indices equal to
    the shape and zero data, fewer keep the first). ``n_dense`` trailing dimensions are
    kept dense. ``n_batch`` must be 0 (a NotImplementedError otherwise). Without
    ``nse``, the count needs ``mat``'s values: a ``TypeError`` under ``jit``/``vmap``
    (JAX also requires ``nse`` under ``grad``, where functrace knows the values)."""
    fname = "bcoo_fromdense"
    m = _operand(mat, fname, "mat")
    shape = _shape_of(m)
    _no_batch(fname, n_batch)
    n_dense = _static_int(n_dense, fname, "n_dense")
    if not 0 <= n_dense <= len(shape):
        raise ValueError(
            f"{fname}: expected n_dense in [0, {len(shape)}] for a matrix of shape {shape}, "
            f"got {n_dense}."
        )
    idtype = np.dtype(index_dtype)
    if idtype.kind not in "iu":
        raise TypeError(f"{fname}: expected an integer index_dtype, got {idtype}.")
    ns = len(shape) - n_dense
    mask = fnp.not_equal(m, 0)
    if n_dense:
        mask = fnp.any(mask, axis=tuple(range(ns, len(shape))))
    if nse is None:
        count = core.concrete_or_none(fnp.sum(mask))
        if count is None:
            raise TypeError(
                f"{fname}: the number of nonzeros of a traced matrix is unknown while "
                f"tracing; pass nse= (the number of entries to store)."
            )
        nse_i = int(np.asarray(count))
    else:
        nse_i = _static_int(nse, fname, "nse")
        if nse_i < 0:
            raise ValueError(f"{fname}: expected nse >= 0, got {nse_i}.")
    if ns == 0:
        indices = to_array(np.zeros((nse_i, 0), idtype))
    else:
        found = fnp.nonzero(mask, size=nse_i, fill_value=shape[:ns])
        indices = fnp.stack([fnp.asarray(f).astype(idtype) for f in found], axis=1)
        if not isinstance(indices, core.Tracer):
            indices = to_array(np.asarray(indices))
    data = _extract(indices, m)
    return _new(data, indices, shape, True, True)


# ---------------------------------------------------------------------------
# Structure: transpose, reduce_sum, sort, unique
# ---------------------------------------------------------------------------


def bcoo_transpose(mat: BCOO, *, permutation: Sequence[int]) -> BCOO:
    """``mat`` with its axes permuted (``lax.transpose``'s ``permutation``); sparse
    axes may only move among the sparse ones and dense among the dense ones (a
    NotImplementedError otherwise, as in JAX). Indices keep their uniqueness, not their
    order."""
    fname = "bcoo_transpose"
    mat = _check_bcoo(fname, mat)
    if not isinstance(permutation, (tuple, list, np.ndarray)):
        kind = type(permutation).__name__
        raise TypeError(f"{fname}: expected the permutation as a tuple or list, got {kind}.")
    perm = [_static_int(p, fname, "permutation entry") for p in permutation]
    if sorted(perm) != list(range(mat.ndim)):
        raise ValueError(
            f"{fname}: expected a permutation of range({mat.ndim}) for shape {mat.shape}, "
            f"got {tuple(perm)}."
        )
    ns = mat.n_sparse
    sparse_perm, dense_perm = perm[:ns], [p - ns for p in perm[ns:]]
    if sorted(sparse_perm) != list(range(ns)):
        raise NotImplementedError(
            f"{fname}: the permutation {tuple(perm)} moves dense axes among sparse ones "
            f"(n_sparse={ns}, n_dense={mat.n_dense}); transposing across them is not supported."
        )
    shape = tuple(mat.shape[p] for p in perm)
    indices = _select_columns(mat.indices, sparse_perm)
    data = mat.data
    if dense_perm != list(range(len(dense_perm))):
        data = lax.transpose(data, (0, *(1 + d for d in dense_perm)))
    return _new(data, indices, shape, False, mat.unique_indices)


def bcoo_reduce_sum(mat: BCOO, *, axes: Sequence[int]) -> BCOO:
    """The sum of ``mat`` over ``axes``, as a BCOO (of shape ``()`` when every axis is
    summed): dense axes are summed in the data, sparse ones drop their index column
    (entries then repeat); padding entries get zero data first, as JAX's."""
    fname = "bcoo_reduce_sum"
    mat = _check_bcoo(fname, mat)
    ax = sorted({_normalize_axis(fname, a, mat.ndim) for a in axes})
    ns = mat.n_sparse
    data = mat.data
    dense_axes = tuple(a - ns + 1 for a in ax if a >= ns)
    if dense_axes:
        data = fnp.sum(data, axis=dense_axes)
    if ns:
        bound = np.asarray(mat.shape[:ns], _dtype_of(mat.indices))
        ok = fnp.all(fnp.less(mat.indices, bound), axis=-1)
        ok = lax.broadcast_in_dim(ok, _shape_of(data), (0,))
        data = fnp.where(ok, data, fnp.zeros((), _dtype_of(data)))
    kept = [k for k in range(ns) if k not in ax]
    indices = _select_columns(mat.indices, kept)
    out_shape = tuple(s for i, s in enumerate(mat.shape) if i not in ax)
    return _new(data, indices, out_shape)


def _lexsort_rows(indices: Any) -> Any:
    """The stable permutation sorting the rows of ``indices`` lexicographically."""
    nse, ns = _shape_of(indices)
    cols = _columns(indices, range(ns))
    pos = lax.iota(np.int64, nse)
    return lax.sort_multi([*cols, pos], 0, ns)[-1]


def _unique_rows(indices: Any, shape: tuple[int, ...]) -> tuple[Any, Any, Any]:
    """JAX's ``_unique_indices`` of one BCOO: rows with an entry at or past the shape
    become the shape; returns the sorted unique rows padded to ``nse`` with the shape,
    each input row's position among them, and the number of unique in-range rows."""
    nse, ns = _shape_of(indices)
    idt = _dtype_of(indices)
    fill = np.asarray(shape[:ns], idt)
    out_of_range = fnp.any(fnp.greater_equal(indices, fill), axis=1, keepdims=True)
    rows = fnp.where(out_of_range, fill[None, :], indices)
    if nse == 0:
        empty_i = to_array(np.zeros(0, np.int64))
        return rows, empty_i, 0
    perm = _lexsort_rows(rows)
    srt = rows[perm]
    differs = fnp.any(fnp.not_equal(srt[1:], srt[:-1]), axis=1)
    new = fnp.concatenate([fnp.ones(1, bool), differs])
    group = fnp.cumsum(new.astype(np.int64)) - 1  # sorted position -> unique slot
    inverse = fnp.zeros(nse, np.int64).at[perm].set(group)
    uniq = lax.broadcast_in_dim(fill, (nse, ns), (1,))
    uniq = lg.scatter(uniq, srt, [group], (0,), mode="fill")
    n_unique = group[-1] + 1
    has_fill = fnp.any(fnp.all(fnp.equal(rows, fill), axis=1))
    true_size = n_unique - has_fill.astype(np.int64)
    return uniq, inverse, true_size


def _resize(indices: Any, nse: int, shape: tuple[int, ...]) -> Any:
    have, ns = _shape_of(indices)
    if nse <= have:
        return indices[:nse]
    fill = lax.broadcast_in_dim(np.asarray(shape[:ns], _dtype_of(indices)), (nse - have, ns), (1,))
    return fnp.concatenate([indices, fill], axis=0)


def bcoo_sum_duplicates(mat: BCOO, nse: int | None = None) -> BCOO:
    """``mat`` with repeated indices summed into one entry and indices sorted
    (lexicographically; out-of-range ones become the shape and sort last). ``nse``
    fixes the number of entries: more pad with the shape as index, fewer drop the last;
    by default the number of distinct in-range indices, which needs the indices'
    values (a ``ValueError`` under ``jit``/``vmap`` of traced indices)."""
    fname = "bcoo_sum_duplicates"
    mat = _check_bcoo(fname, mat)
    ns = mat.n_sparse
    dshape = _shape_of(mat.data)
    if ns == 0:
        uniq = to_array(np.zeros((1, 0), _dtype_of(mat.indices)))
        data = fnp.sum(mat.data, axis=0, keepdims=True)
        n_out = 1 if nse is None else _static_int(nse, fname, "nse")
        indices = _resize(uniq, n_out, mat.shape)
        data = fnp.concatenate([data, fnp.zeros((max(n_out - 1, 0), *dshape[1:]), data.dtype)])[
            :n_out
        ]
        return _new(data, indices, mat.shape, True, True)
    uniq, inverse, true_size = _unique_rows(mat.indices, mat.shape)
    if nse is None:
        known = core.concrete_or_none(true_size)
        if known is None:
            raise ValueError(
                f"{fname}: nse must be given when the indices are traced (under jit or "
                f"vmap): the number of distinct indices is unknown while tracing."
            )
        n_out = int(np.asarray(known))
    else:
        n_out = _static_int(nse, fname, "nse")
        if n_out < 0:
            raise ValueError(f"{fname}: expected nse >= 0, got {n_out}.")
    indices = _resize(uniq, n_out, mat.shape)
    zeros = _zeros((n_out, *dshape[1:]), _dtype_of(mat.data))
    if dshape[0] == 0 or n_out == 0:
        data = zeros
    else:
        data = lg.scatter_add(zeros, mat.data, [inverse], (0,), mode="fill")
    return _new(data, indices, mat.shape, True, True)


def _eliminate_zeros(mat: BCOO, nse: int | None) -> BCOO:
    ns = mat.n_sparse
    if ns and mat.nse:
        zero = fnp.equal(mat.data, 0)
        if mat.n_dense:
            zero = fnp.all(zero, axis=tuple(range(1, 1 + mat.n_dense)))
        fill = np.asarray(mat.shape[:ns], _dtype_of(mat.indices))
        indices = fnp.where(zero[:, None], fill[None, :], mat.indices)
        mat = _new(mat.data, indices, mat.shape)
    return bcoo_sum_duplicates(mat, nse=nse)


def bcoo_sort_indices(mat: BCOO) -> BCOO:
    """``mat`` with its entries in lexicographic order of their indices (a stable
    sort of the raw indices: repeats are kept, in their order)."""
    mat = _check_bcoo("bcoo_sort_indices", mat)
    if mat.n_sparse == 0 or mat.nse == 0:
        return _new(mat.data, mat.indices, mat.shape, True, mat.unique_indices)
    perm = _lexsort_rows(mat.indices)
    return _new(mat.data[perm], mat.indices[perm], mat.shape, True, mat.unique_indices)


def _unique(mat: BCOO) -> BCOO:
    """``mat`` with repeated indices summed (same nse), for functions that are not
    additive, as JAX's sparsify does before them."""
    if mat.unique_indices:
        return mat
    return bcoo_sum_duplicates(mat, nse=mat.nse)


# ---------------------------------------------------------------------------
# Constructors
# ---------------------------------------------------------------------------


def empty(
    shape: Sequence[int],
    dtype: Any = None,
    index_dtype: Any = "int32",
    sparse_format: str = "bcoo",
    *,
    n_dense: int = 0,
    n_batch: int = 0,
    nse: int = 0,
) -> BCOO:
    """An all-zero BCOO of ``shape`` with ``nse`` padding entries (index = shape, data 0);
    ``dtype`` defaults to float64 (functrace's default float). Only
    ``sparse_format='bcoo'`` and ``n_batch=0``."""
    fname = "empty"
    _bcoo_format(fname, sparse_format)
    _no_batch(fname, n_batch)
    shape_t = tuple(_static_int(s, fname, "shape entry") for s in shape)
    n_dense = _static_int(n_dense, fname, "n_dense")
    nse = _static_int(nse, fname, "nse")
    ns = len(shape_t) - n_dense
    if ns < 0 or n_dense < 0 or nse < 0:
        raise ValueError(f"{fname}: invalid shape={shape_t}, n_dense={n_dense}, nse={nse}.")
    dt = np.dtype(np.float64 if dtype is None else dtype)
    data = to_array(np.zeros((nse, *shape_t[ns:]), dt))
    indices = to_array(np.broadcast_to(np.asarray(shape_t[:ns], index_dtype), (nse, ns)).copy())
    return _new(data, indices, shape_t, True, True)


def eye(
    N: int,
    M: int | None = None,
    k: int = 0,
    dtype: Any = None,
    index_dtype: Any = "int32",
    sparse_format: str = "bcoo",
    *,
    n_dense: int = 0,
    n_batch: int = 0,
) -> BCOO:
    """The ``N x M`` BCOO with ones on diagonal ``k`` (stored entries: that diagonal
    only); ``dtype`` defaults to float64. Only ``sparse_format='bcoo'``, ``n_batch=0``
    and ``n_dense=0``."""
    fname = "eye"
    _bcoo_format(fname, sparse_format)
    _no_batch(fname, n_batch)
    if _static_int(n_dense, fname, "n_dense") != 0:
        raise NotImplementedError(f"{fname}: n_dense={n_dense} is not supported (only 0).")
    N = _static_int(N, fname, "N")
    M = N if M is None else _static_int(M, fname, "M")
    k = _static_int(k, fname, "k")
    if N < 0 or M < 0:
        raise ValueError(f"{fname}: expected non-negative N and M, got {N} and {M}.")
    size = min(N, M - k) if k > 0 else min(N + k, M)
    if size <= 0:
        return empty((N, M), dtype=dtype, index_dtype=index_dtype)
    dt = np.dtype(np.float64 if dtype is None else dtype)
    i = np.arange(size)
    rows, cols = (i, i + k) if k >= 0 else (i - k, i)
    indices = np.stack([rows, cols], axis=1).astype(index_dtype)
    return _new(to_array(np.ones(size, dt)), to_array(indices), (N, M), True, True)
