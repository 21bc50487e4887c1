"""Argument checks and small helpers shared by the ``functrace.numpy.linalg`` modules."""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace.lax import shapes as ls
from functrace.lax.extras import conj as lax_conj
from functrace.numpy._core import asarray_or_tracer, cast
from functrace.numpy._shape import swapaxes

LinAlgError = np.linalg.LinAlgError
_F64 = np.dtype(np.float64)
_NOVALUE: Any = np._NoValue  # type: ignore[attr-defined]


def _float_dtype(fname: str, dtype: np.dtype, complex_ok: bool = False) -> np.dtype:
    """The dtype NumPy's linalg computes ``dtype`` in (real inputs; complex ones too with
    ``complex_ok``, for the functions whose derivatives handle them)."""
    if dtype.kind in "biu":
        return _F64
    if dtype.kind == "f":
        if dtype.itemsize < 4:
            raise TypeError(
                f"{fname}: expected float32 or float64 (or integer) input, got "
                f"{dtype.name}, which NumPy's linalg does not support either. "
                f"Cast with .astype(np.float32)."
            )
        return dtype
    if dtype.kind == "c" and complex_ok:
        return dtype
    if dtype.kind == "c":
        raise NotImplementedError(
            f"{fname}: expected real input on traced arrays, got "
            f"{dtype.name}. Complex linear algebra is not differentiable in functrace "
            f"yet for {fname} (it is for solve, inv, det, slogdet, cholesky, eigh, "
            f"eigvalsh, svd, svdvals, qr, pinv, lstsq, norm, cond and matrix_rank)."
        )
    raise TypeError(f"{fname}: expected a numeric array, got {dtype.name}.")


def _check_matrix(fname: str, aval: Any, square: bool) -> None:
    if aval.ndim < 2:
        raise LinAlgError(
            f"{fname}: expected an array with at least 2 dimensions (a matrix or a stack of "
            f"matrices), got shape {aval.shape}. Reshape a vector to (n, 1) or (1, n)."
        )
    if square and aval.shape[-1] != aval.shape[-2]:
        raise LinAlgError(
            f"{fname}: expected square matrices (last 2 dimensions equal), got shape "
            f"{aval.shape}. Use lstsq, pinv or svd for rectangular ones."
        )


def _matrix(fname: str, a: Any, square: bool = True, complex_ok: bool = False) -> Any:
    """``a`` as a float (or complex) tracer/array of shape (..., m, n), checked like NumPy."""
    a = asarray_or_tracer(a, fname)
    aval = core.get_aval(a)
    _check_matrix(fname, aval, square)
    return cast(a, _float_dtype(fname, aval.dtype, complex_ok))


def _np_matrix(fname: str, a: Any, square: bool = True) -> np.ndarray:
    """The NumPy path's version of :func:`_matrix`: the same checks, NumPy's dtype."""
    a = np.asarray(a)
    _check_matrix(fname, a, square)
    if a.dtype.kind not in "biufc":
        raise TypeError(f"{fname}: expected a numeric array, got {a.dtype.name}.")
    return a


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _mT(x: Any) -> Any:
    return swapaxes(x, -1, -2)


def _mH(x: Any) -> Any:
    """The conjugate transpose of the last two axes (the transpose for real ``x``)."""
    return lax_conj(_mT(x)) if core.get_aval(x).dtype.kind == "c" else _mT(x)


def _eye_like(a: Any) -> Any:
    """Identity matrices of ``a``'s dtype broadcast over its leading dimensions."""
    shape = _shape(a)
    eye = np.eye(shape[-1], dtype=core.get_aval(a).dtype)
    return ls.broadcast_in_dim(eye, shape, (len(shape) - 2, len(shape) - 1))
