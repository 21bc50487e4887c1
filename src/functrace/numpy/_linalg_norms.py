"""Norms and spectral quantities of ``functrace.numpy.linalg``: ``norm``, ``matrix_norm``,
``vector_norm``, ``cond``, ``matrix_rank`` and ``svdvals`` (re-exported there)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from functrace import core
from functrace.lax import linalg as ll
from functrace.numpy._core import asarray_or_tracer, cast
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._indexing import where
from functrace.numpy._linalg_util import _float_dtype, _shape
from functrace.numpy._math import absolute, astype, sqrt
from functrace.numpy._reductions import max as _max
from functrace.numpy._reductions import min as _min
from functrace.numpy._reductions import sum as _sum
from functrace.numpy._shape import moveaxis, reshape

# ---------------------------------------------------------------------------
# Norms
# ---------------------------------------------------------------------------


def _safe_sqrt(s: Any) -> Any:
    # NOTE: sqrt(s) with derivative 0 (not inf * 0 = NaN) where s == 0: a subgradient.
    zero = s == 0
    return where(zero, 0, sqrt(where(zero, 1, s)))


def _safe_root(s: Any, p: float) -> Any:
    # s ** (1 / p), with derivative 0 where s == 0.
    zero = s == 0
    return where(zero, 0, where(zero, 1, s) ** (1.0 / p))


def _svd_norm(x: Any, row: int, col: int, reduce: Any) -> Any:
    y = moveaxis(x, (row, col), (-2, -1))
    return reduce(ll.svd(y, compute_uv=False), axis=-1)


def _axis_tuple(axis: Any, nd: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, tuple):
        return axis
    try:
        return (operator.index(axis),)
    except TypeError:
        raise TypeError(
            f"norm: expected axis None, an integer or a tuple of integers, got {axis!r}."
        ) from None


@numpy_path(
    lambda x, ord=None, axis=None, keepdims=False: np.linalg.norm(
        x, ord=ord, axis=axis, keepdims=keepdims
    )
)
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Vector or matrix norm, with NumPy's ``ord``/``axis``/``keepdims`` semantics.

    Vectors (``axis`` an int, or ``x`` 1-D): ``ord`` in None/2 (Euclidean), 1, inf,
    -inf, 0 (count of non-zeros), or any other number p (``sum(|x|**p)**(1/p)``).
    Matrices (``axis`` a pair, or ``x`` 2-D): ``None``/``'fro'``, ``'nuc'`` (sum of
    singular values), 2 / -2 (largest / smallest singular value), 1 / -1 (max / min
    column sum of ``|x|``), inf / -inf (max / min row sum).

    Complex input: every norm but the spectral ones (``'nuc'``, 2 and -2 of matrices,
    from the complex SVD) is computed from ``|x|``; all differentiate as JAX's do.

    NOTE: at the zero vector every vector norm has gradient 0, and so has the Frobenius
    norm at the zero matrix (a subgradient; JAX 0.10.2 gives NaN there, the naive
    formula's value). Elsewhere the gradient is the usual one, e.g. ``x / norm(x)`` for 2.

    >>> import numpy as np, functrace.numpy as fnp
    >>> float(fnp.linalg.norm(np.array([3.0, 4.0])))
    5.0
    """
    x = asarray_or_tracer(x, "norm")
    shape = _shape(x)
    nd = len(shape)
    spectral = ord in (2, -2, "nuc") and (
        nd == 2 or (axis is not None and len(_axis_tuple(axis, nd)) == 2)
    )
    if core.get_aval(x).dtype.kind == "c" and not spectral:
        x = absolute(x)  # every norm but the spectral ones is a norm of |x|: real from here on
    x = cast(x, _float_dtype("norm", core.get_aval(x).dtype, complex_ok=spectral))
    if axis is None and (
        ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1)
    ):
        ret = _safe_sqrt(_sum(x * x))
        return reshape(ret, (1,) * nd) if keepdims else ret
    axes = _axis_tuple(axis, nd)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(
                f"norm: expected a numeric ord for vectors, got {ord!r}. 'fro' "
                f"and 'nuc' are matrix norms: pass a pair of axes."
            )
        absx = absolute(x)
        if ord == np.inf:
            return _max(absx, axis=axes, keepdims=keepdims)
        if ord == -np.inf:
            return _min(absx, axis=axes, keepdims=keepdims)
        if ord == 0:
            return _sum(astype(x != 0, x.dtype), axis=axes, keepdims=keepdims)
        if ord == 1:
            return _sum(absx, axis=axes, keepdims=keepdims)
        if ord is None or ord == 2:
            return _safe_sqrt(_sum(x * x, axis=axes, keepdims=keepdims))
        return _safe_root(_sum(absx**ord, axis=axes, keepdims=keepdims), ord)
    if len(axes) == 2:
        row, col = (_normalize_axis(a, nd) for a in axes)
        if row == col:
            raise ValueError(f"norm: expected two different axes, got {axis}.")
        if ord == 2:
            ret = _svd_norm(x, row, col, _max)
        elif ord == -2:
            ret = _svd_norm(x, row, col, _min)
        elif ord in (1, -1):
            c = col - (col > row)
            ret = (_max if ord == 1 else _min)(_sum(absolute(x), axis=row), axis=c)
        elif ord in (np.inf, -np.inf):
            r = row - (row > col)
            ret = (_max if ord > 0 else _min)(_sum(absolute(x), axis=col), axis=r)
        elif ord in (None, "fro", "f"):
            ret = _safe_sqrt(_sum(x * x, axis=(row, col)))
        elif ord == "nuc":
            ret = _svd_norm(x, row, col, _sum)
        else:
            raise ValueError(
                f"norm: expected a matrix ord in None, 'fro', 'nuc', 1, -1, 2, -2, "
                f"inf, -inf, got {ord!r}."
            )
        if keepdims:
            kept = list(shape)
            kept[row] = kept[col] = 1
            ret = reshape(ret, tuple(kept))
        return ret
    raise ValueError(
        f"norm: expected 1 or 2 axes (a vector or a matrix norm), got axis={axis} "
        f"for an array of shape {shape}. Pass axis= explicitly."
    )


def _normalize_axis(axis: Any, nd: int) -> int:
    a = operator.index(axis)
    if not -nd <= a < nd:
        raise np.exceptions.AxisError(f"norm: expected axes in [{-nd}, {nd}), got {axis}.")
    return a % nd


# ---------------------------------------------------------------------------
# The array API's norms, condition numbers, ranks and singular values
# ---------------------------------------------------------------------------


def _check_ndim(fname: str, x: Any, least: int) -> Any:
    x = asarray_or_tracer(x, fname)
    shape = core.get_aval(x).shape
    if len(shape) < least:
        what = "a matrix or a stack of matrices" if least == 2 else "an array"
        raise ValueError(
            f"{fname}: expected {what} (at least {least} dimensions), got shape {shape}."
        )
    return x


def _np_matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    x = _check_ndim("matrix_norm", np.asarray(x), 2)
    return np.linalg.norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


@numpy_path(_np_matrix_norm)
def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    """The norm of each matrix over the last two axes (``norm(x, ord, axis=(-2, -1))``).

    ``ord``: ``'fro'`` (default), ``'nuc'``, 1, -1, 2, -2, inf, -inf, as in ``norm``.

    >>> import numpy as np, functrace.numpy as fnp
    >>> float(fnp.linalg.matrix_norm(np.array([[3.0, 0.0], [0.0, 4.0]])))
    5.0
    """
    x = _check_ndim("matrix_norm", x, 2)
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def _vector_axes(x: Any, axis: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(the normalized axes reduced, the other axes) for ``vector_norm``."""
    nd = len(core.get_aval(x).shape) if not isinstance(x, np.ndarray) else x.ndim
    if axis is None:
        return tuple(range(nd)), ()
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in axes:
        try:
            a = operator.index(a)
        except TypeError:
            raise TypeError(
                f"vector_norm: expected axis None, an integer or a tuple of integers, got {axis!r}."
            ) from None
        if not -nd <= a < nd:
            raise np.exceptions.AxisError(
                f"vector_norm: expected axes in [{-nd}, {nd}), got {axis!r}."
            )
        out.append(a % nd)
    if len(set(out)) != len(out):
        raise ValueError(f"vector_norm: expected distinct axes, got {axis!r}.")
    return tuple(out), tuple(i for i in range(nd) if i not in out)


def _vector_norm(x: Any, axis: Any, keepdims: bool, ord: Any, xp: Any) -> Any:
    """``vector_norm`` with ``xp`` (NumPy, or this package's functions on tracers)."""
    if isinstance(ord, str):
        raise ValueError(f"vector_norm: expected a numeric ord, got {ord!r}.")
    shape = x.shape if isinstance(x, np.ndarray) else core.get_aval(x).shape
    axes, rest = _vector_axes(x, axis)
    size = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    flat = xp.reshape(xp.transpose(x, axes + rest), (size, *[shape[i] for i in rest]))
    res = xp.norm(flat, ord=ord, axis=0)
    if keepdims:
        res = xp.reshape(res, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    return res


class _NumPyNorms:
    reshape, transpose = staticmethod(np.reshape), staticmethod(np.transpose)
    norm = staticmethod(np.linalg.norm)


def _np_vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    x = np.asarray(x)
    if x.dtype.kind not in "biufc":
        raise TypeError(f"vector_norm: expected a numeric array, got {x.dtype.name}.")
    return _vector_norm(x, axis, keepdims, ord, _NumPyNorms)


@numpy_path(_np_vector_norm)
def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """The vector norm of ``x`` over ``axis`` (None: all elements; a tuple: those axes
    taken together as one vector). ``ord`` as for vectors in ``norm``.

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.vector_norm(np.array([[3.0, 4.0], [6.0, 8.0]]), axis=1)
    array([ 5., 10.])
    """

    class _Traced:
        reshape, transpose = staticmethod(reshape), staticmethod(_transpose)
        norm = staticmethod(norm)

    x = asarray_or_tracer(x, "vector_norm")
    x = cast(x, _float_dtype("vector_norm", core.get_aval(x).dtype, complex_ok=True))
    return _vector_norm(x, axis, keepdims, ord, _Traced)


def _transpose(x: Any, axes: tuple[int, ...]) -> Any:
    return moveaxis(x, axes, tuple(range(len(axes)))) if axes else x


_SVD_ORDS = (None, 2, -2)


def _check_cond(x: Any, p: Any) -> None:
    shape = x.shape if isinstance(x, np.ndarray) else core.get_aval(x).shape
    if len(shape) < 2:
        raise np.linalg.LinAlgError(
            f"cond: expected a matrix or a stack of matrices (at least 2 dimensions), got "
            f"shape {shape}."
        )
    if shape[-1] == 0 or shape[-2] == 0:
        raise np.linalg.LinAlgError(f"cond: expected non-empty matrices, got shape {shape}.")
    if p not in _SVD_ORDS and shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError(
            f"cond: expected square matrices for p={p!r}, got shape {shape}. Only p None, 2 "
            f"and -2 (singular values) work for rectangular ones."
        )


def _np_cond(x: Any, p: Any = None) -> Any:
    x = np.asarray(x)
    _check_cond(x, p)
    return np.linalg.cond(x, p)


@numpy_path(_np_cond)
def cond(x: Any, p: Any = None) -> Any:
    """The condition number of ``x`` in the norm ``p``: ``s_max / s_min`` of its singular
    values for ``p`` None or 2 (``s_min / s_max`` for -2), else
    ``norm(x, p) * norm(inv(x), p)`` (``p`` in 1, -1, inf, -inf, ``'fro'``, ``'nuc'``).
    A singular matrix gives inf, as in NumPy.

    >>> import numpy as np, functrace.numpy as fnp
    >>> float(fnp.linalg.cond(np.array([[2.0, 0.0], [0.0, 0.5]])))
    4.0
    """
    x = asarray_or_tracer(x, "cond")
    _check_cond(x, p)
    x = cast(x, _float_dtype("cond", core.get_aval(x).dtype, complex_ok=True))
    if p in _SVD_ORDS:
        s = ll.svd(x, compute_uv=False)
        big, small = s[..., 0], s[..., -1]
        r = small / big if p == -2 else big / small
    else:
        n = core.get_aval(x).shape[-1]
        eye = np.broadcast_to(np.eye(n, dtype=core.get_aval(x).dtype), core.get_aval(x).shape)
        inv_x = ll.solve(x, cast(eye, core.get_aval(x).dtype))
        r = norm(x, p, axis=(-2, -1)) * norm(inv_x, p, axis=(-2, -1))
    # NaN from a singular matrix means inf (NaN entries in x stay NaN), as in NumPy
    has_nan = _sum(astype(x != x, np.int32), axis=(-2, -1)) > 0
    return where((r != r) & ~has_nan, np.inf, r)


def _np_matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:
    if tol is not None and rtol is not None:
        raise ValueError("matrix_rank: expected tol or rtol, got both. Pass only one.")
    A = np.asarray(A)
    if A.ndim >= 2 and 0 in A.shape[-2:]:
        return np.zeros(A.shape[:-2], np.intp)[()]
    return np.linalg.matrix_rank(A, tol, hermitian, rtol=rtol)


@numpy_path(_np_matrix_rank)
def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:
    """The number of singular values of ``A`` above the cutoff: ``tol`` if given, else
    ``rtol * max(s)`` with ``rtol`` defaulting to ``max(m, n) * eps`` (NumPy's rules).

    ``hermitian`` is accepted; traced inputs use the general SVD either way (the same
    rank). A 1-D ``A`` has rank 1 unless it is all zeros. The result is an int64 count
    and has no derivative.

    >>> import numpy as np, functrace.numpy as fnp
    >>> int(fnp.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    if tol is not None and rtol is not None:
        raise ValueError("matrix_rank: expected tol or rtol, got both. Pass only one.")
    A = asarray_or_tracer(A, "matrix_rank")
    aval = core.get_aval(A)
    A = cast(A, _float_dtype("matrix_rank", aval.dtype, complex_ok=True))
    if aval.ndim < 2:
        return astype(_sum(astype(A != 0, np.int64)) > 0, np.int64)
    if 0 in aval.shape[-2:]:
        return cast(np.zeros(aval.shape[:-2], np.int64), np.dtype(np.int64))
    s = ll.svd(A, compute_uv=False)
    if tol is None:
        if rtol is None:
            rtol = max(aval.shape[-2:]) * np.finfo(core.get_aval(A).dtype).eps
        cutoff = _max(s, axis=-1, keepdims=True) * reshape(
            asarray_or_tracer(rtol), (*core.get_aval(asarray_or_tracer(rtol)).shape, 1)
        )
    else:
        tol = asarray_or_tracer(tol)
        cutoff = reshape(tol, (*core.get_aval(tol).shape, 1))
    return _sum(astype(s > cutoff, np.int64), axis=-1)


def _np_svdvals(x: Any, /) -> Any:
    x = np.asarray(x)
    if x.ndim < 2:
        raise np.linalg.LinAlgError(
            f"svdvals: expected a matrix or a stack of matrices (at least 2 dimensions), got "
            f"shape {x.shape}."
        )
    return np.linalg.svd(x, compute_uv=False)


@numpy_path(_np_svdvals)
def svdvals(x: Any, /) -> Any:
    """The singular values of ``x`` (of each matrix of a stack), in descending order.

    Their derivative needs no distinct values (unlike the singular vectors').

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.svdvals(np.array([[3.0, 0.0], [0.0, -4.0]]))
    array([4., 3.])
    """
    x = asarray_or_tracer(x, "svdvals")
    shape = core.get_aval(x).shape
    if len(shape) < 2:
        raise np.linalg.LinAlgError(
            f"svdvals: expected a matrix or a stack of matrices (at least 2 dimensions), got "
            f"shape {shape}."
        )
    x = cast(x, _float_dtype("svdvals", core.get_aval(x).dtype, complex_ok=True))
    return ll.svd(x, compute_uv=False)
