"""Checks and traceable helpers shared by the primitives of ``functrace.lax.linalg``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import batching
from functrace.lax._util import check_same_dtypes, register
from functrace.lax.elementwise import add, convert_element_type, div, mul, sub
from functrace.lax.extras import conj, real
from functrace.lax.reductions import reduce_sum
from functrace.lax.shapes import broadcast_in_dim, dot_general, slice, transpose

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_COMPLEX = (np.dtype(np.complex64), np.dtype(np.complex128))

# ---------------------------------------------------------------------------
# Shared checks and helpers (all traceable: lax operations only)
# ---------------------------------------------------------------------------


def _check_float(name: str, aval: ShapedArray, complex_ok: bool = False) -> None:
    if aval.dtype not in _FLOATS and not (complex_ok and aval.dtype in _COMPLEX):
        kinds = "float32, float64, complex64 or complex128" if complex_ok else "float32 or float64"
        raise TypeError(
            f"{name}: expected a {kinds} operand, got {aval.dtype.name}. Cast it "
            f"with lax.convert_element_type (functrace.numpy.linalg casts integers to float64)."
        )


def _check_matrix(name: str, aval: ShapedArray, complex_ok: bool = False) -> None:
    if aval.ndim < 2:
        raise ValueError(
            f"{name}: expected a matrix or a stack of matrices (at least 2 dimensions), got "
            f"shape {aval.shape}. Reshape a vector to (n, 1) or (1, n)."
        )
    _check_float(name, aval, complex_ok)


def _check_square(name: str, aval: ShapedArray, complex_ok: bool = False) -> None:
    _check_matrix(name, aval, complex_ok)
    if aval.shape[-1] != aval.shape[-2]:
        raise ValueError(
            f"{name}: expected square matrices (shape (..., n, n)), got shape {aval.shape}. "
            f"The last two dimensions must be equal; use svd/pinv/qr for rectangular ones."
        )


def _check_rhs(name: str, a: ShapedArray, b: ShapedArray) -> None:
    _check_square(name, a, complex_ok=True)
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-2] != a.shape[-1]:
        raise ValueError(
            f"{name}: expected b of shape (..., {a.shape[-1]}, k) with the leading dimensions "
            f"of a, got shapes {a.shape} (a) and {b.shape} (b). functrace.lax does not "
            f"broadcast: use functrace.numpy.linalg.solve, or broadcast_in_dim first."
        )
    check_same_dtypes(name, a, b)


def _nan_where_singular(fn: Callable[..., np.ndarray], *args: np.ndarray) -> np.ndarray:
    """``fn(*args)`` on stacks of matrices, with NaN for each matrix LAPACK rejects."""
    try:
        return fn(*args)
    except np.linalg.LinAlgError:
        pass
    batch = np.broadcast_shapes(*(a.shape[:-2] for a in args))
    out = None
    for idx in np.ndindex(batch):
        mats = [np.broadcast_to(a, batch + a.shape[-2:])[idx] for a in args]
        try:
            r = fn(*mats)
        except np.linalg.LinAlgError:
            r = None
        if out is None:  # the result type, from a well-posed problem of the same types
            like = r if r is not None else fn(*[np.eye(*m.shape, dtype=m.dtype) for m in mats])
            out = np.empty(batch + like.shape, like.dtype)
        out[idx] = np.nan if r is None else r
    assert out is not None  # a LinAlgError means at least one matrix
    return out


def _register_checked(
    p: Primitive, impl: Callable[..., Any], abstract_eval: Callable[..., Any]
) -> Primitive:
    """Register ``impl`` behind a call of ``abstract_eval`` (eager calls get its errors)."""

    def checked(*args: Any, **params: Any) -> Any:
        abstract_eval(*[core.get_aval(a) for a in args], **params)
        return impl(*[np.asarray(a) for a in args], **params)

    return register(p, checked, abstract_eval)


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _mT(x: Any) -> Any:
    """Swap the last two axes."""
    nd = len(_shape(x))
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _is_complex(x: Any) -> bool:
    return bool(core.get_aval(x).dtype.kind == "c")


def _mH(x: Any) -> Any:
    """The conjugate transpose of the last two axes (the plain transpose for real ``x``)."""
    return conj(_mT(x)) if _is_complex(x) else _mT(x)


def _like(x: Any, like: Any) -> Any:
    """Real ``x`` as the (complex) dtype of ``like``."""
    return convert_element_type(x, core.get_aval(like).dtype)


def _mm(a: Any, b: Any) -> Any:
    """Matrix product of two stacks with equal leading dimensions."""
    nd = len(_shape(a))
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _const(like: Any, value: np.ndarray) -> Any:
    """The matrix constant ``value`` (dtype of ``like``) broadcast over ``like``'s leading axes."""
    shape = _shape(like)
    value = np.asarray(value, dtype=core.get_aval(like).dtype)
    lead = shape[: len(shape) - value.ndim]
    nd = len(lead) + value.ndim
    return broadcast_in_dim(value, lead + value.shape, tuple(range(len(lead), nd)))


def _masked(x: Any, mask: np.ndarray) -> Any:
    return mul(x, _const(x, mask))


def _tril(x: Any, k: int = 0) -> Any:
    m, n = _shape(x)[-2:]
    return _masked(x, np.tril(np.ones((m, n)), k))


def _triu(x: Any, k: int = 0) -> Any:
    m, n = _shape(x)[-2:]
    return _masked(x, np.triu(np.ones((m, n)), k))


def _from_triangle(x: Any, lower: bool) -> Any:
    """The symmetric matrix built from one triangle of ``x``: ``T + T^T - diag(T)``
    (the matrix cholesky and eigh see, so also their tangent map: it is linear). For
    complex ``x`` the Hermitian one, ``T + T^H - diag(T)`` with the real part of the
    diagonal (LAPACK ignores its imaginary part): real-linear, not complex-linear."""
    if _is_complex(x):
        strict = _tril(x, -1) if lower else _triu(x, 1)
        n = _shape(x)[-1]
        diag = _like(real(_masked(x, np.eye(n))), x)
        return add(add(strict, _mH(strict)), diag)
    if lower:
        return add(_tril(x), _mT(_tril(x, -1)))
    return add(_triu(x), _mT(_triu(x, 1)))


def _diag(x: Any) -> Any:
    """The diagonals ``(..., n)`` of square matrices ``(..., n, n)``."""
    n = _shape(x)[-1]
    return reduce_sum(_masked(x, np.eye(n)), (len(_shape(x)) - 1,))


def _trace(x: Any) -> Any:
    return reduce_sum(_diag(x), (len(_shape(x)) - 2,))


def _cols_of(v: Any, shape: tuple[int, ...]) -> Any:
    """``v[..., None, :]`` broadcast to ``shape``: entry (i, j) is v[j]."""
    nd = len(shape)
    return broadcast_in_dim(v, shape, (*range(nd - 2), nd - 1))


def _rows_of(v: Any, shape: tuple[int, ...]) -> Any:
    """``v[..., :, None]`` broadcast to ``shape``: entry (i, j) is v[i]."""
    nd = len(shape)
    return broadcast_in_dim(v, shape, tuple(range(nd - 1)))


def _inverse_gaps(v: Any, square: bool = False) -> Any:
    """``F[i, j] = 1 / (v_j - v_i)`` off the diagonal, 0 on it (of ``v**2`` if ``square``)."""
    if square:
        v = mul(v, v)
    n = _shape(v)[-1]
    shape = _shape(v) + (n,)
    gaps = sub(_cols_of(v, shape), _rows_of(v, shape))
    eye = np.eye(n)
    return div(_const(gaps, 1 - eye), add(gaps, _const(gaps, eye)))


def _cols(x: Any, start: int, stop: int) -> Any:
    """Columns ``start:stop`` of each matrix."""
    shape = _shape(x)
    return slice(x, (0,) * (len(shape) - 1) + (start,), (*shape[:-1], stop))


def _rows(x: Any, start: int, stop: int) -> Any:
    """Rows ``start:stop`` of each matrix."""
    shape = _shape(x)
    return slice(x, (0,) * (len(shape) - 2) + (start, 0), (*shape[:-2], stop, shape[-1]))


def _batch_unary(p: Primitive) -> Callable[..., Any]:
    # The operand is already a stack: the vmapped axis just becomes one more leading axis.
    def rule(vals: Sequence[Any], bdims: Sequence[Any], **params: Any) -> Any:
        x = batching.moveaxis(vals[0], bdims[0], 0)
        out = p.bind(x, **params)
        return (out, [0] * len(out)) if p.multiple_results else (out, 0)

    return rule


def _batch_binary(p: Primitive) -> Callable[..., Any]:
    # Both operands get the vmapped axis in front (an unbatched one is broadcast).
    def rule(vals: Sequence[Any], bdims: Sequence[Any], **params: Any) -> Any:
        size = batching.batch_size(vals, bdims)
        a, b = (batching.bdim_at(v, d, size, 0) for v, d in zip(vals, bdims))
        return p.bind(a, b, **params), 0

    return rule
