"""More of ``functrace.numpy.linalg`` (re-exported there): ``lstsq``, the array API's
matrix functions (``cross``, ``diagonal``, ``matrix_transpose``, ``outer``, ``tensordot``,
``trace``, ``vecdot``), ``tensorinv``, ``tensorsolve``, and the eager-only ``eig`` and
``eigvals``.

Every function checks its arguments the same way on both paths (plain NumPy inputs,
traced inputs), so a bad call gets the same message with or without a transform.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np

from functrace import core
from functrace.lax import linalg as ll
from functrace.lax.elementwise import stop_gradient
from functrace.numpy._core import asarray_or_tracer, broadcast_shapes, broadcast_to_shape, cast
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._indexing import where
from functrace.numpy._linalg import matmul
from functrace.numpy._linalg import outer as _outer
from functrace.numpy._linalg import tensordot as _tensordot
from functrace.numpy._linalg_util import _check_matrix, _float_dtype, _mH, _np_matrix, _shape
from functrace.numpy._math import astype, conjugate, real
from functrace.numpy._reductions import sum as _sum
from functrace.numpy._shape import moveaxis, reshape, swapaxes
from functrace.numpy._twodim import cross as _cross
from functrace.numpy._twodim import diagonal as _diagonal
from functrace.numpy._twodim import trace as _trace


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


# ---------------------------------------------------------------------------
# lstsq
# ---------------------------------------------------------------------------


def _check_lstsq(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    if len(a_shape) != 2:
        raise np.linalg.LinAlgError(
            f"lstsq: expected a 2-D matrix a, got shape {a_shape}. Stacks of matrices are "
            f"not supported (as in NumPy): use vmap over the leading axis."
        )
    if len(b_shape) not in (1, 2) or b_shape[0] != a_shape[0]:
        raise np.linalg.LinAlgError(
            f"lstsq: expected b of shape ({a_shape[0]},) or ({a_shape[0]}, K) for a of shape "
            f"{a_shape}, got shape {b_shape}. b needs one row per row of a."
        )


def _np_lstsq(a: Any, b: Any, rcond: Any = None, *, numpy_resid: bool = True) -> Any:
    a, b = np.asarray(a), np.asarray(b)
    _check_lstsq(a.shape, b.shape)
    x, resid, rank, s = np.linalg.lstsq(a, b, rcond=rcond)
    if not numpy_resid:
        r = b - a @ x
        resid = np.atleast_1d(np.sum(np.abs(r) ** 2, axis=0))
    return x, resid, rank, s


@numpy_path(_np_lstsq)
def lstsq(a: Any, b: Any, rcond: Any = None, *, numpy_resid: bool = True) -> Any:
    """Least-squares solution of ``a @ x = b``: ``(x, residuals, rank, s)`` as in NumPy.

    ``x`` minimizes ``|b - a x|`` (the minimum-norm one when ``a`` is rank deficient);
    ``s`` are the singular values of ``a``, and singular values at or below
    ``rcond * max(s)`` (default ``rcond``: ``eps * max(M, N)``) count as zero for
    ``rank`` (int32) and ``x``. ``residuals`` holds the squared residual norm of each
    column of ``b`` (shape ``(K,)``, ``(1,)`` for a vector ``b``) when ``M > N``, and is
    empty otherwise. NumPy also leaves it empty when ``rank < N``; traced inputs cannot
    know the rank in advance and give the residuals then too. ``numpy_resid=False``
    (JAX's default) always gives them, for ``M <= N`` too. For complex ``a`` or ``b``,
    ``s`` and ``residuals`` (``sum(|b - a x|**2)``) are real.

    NOTE: ``x`` is differentiable in ``a`` and ``b``. For full-rank ``a`` its
    derivatives (of any order) are those of the QR-based solution, exact for repeated
    singular values too (``jax.numpy.linalg.lstsq`` gives NaN gradients there). For
    rank-deficient ``a`` they are the pseudo-inverse's at fixed rank (distinct singular
    values assumed).

    >>> import numpy as np, functrace.numpy as fnp
    >>> x, res, rank, s = fnp.linalg.lstsq(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
    ...                                    np.array([1.0, 1.0, 3.0]), rcond=None)
    >>> np.round(x, 6).tolist(), np.round(res, 6).tolist(), int(rank)
    ([1.333333, 1.333333], [0.333333], 2)
    """
    a, b = asarray_or_tracer(a, "lstsq"), asarray_or_tracer(b, "lstsq")
    a_aval, b_aval = core.get_aval(a), core.get_aval(b)
    _check_lstsq(a_aval.shape, b_aval.shape)
    dt = np.promote_types(
        _float_dtype("lstsq", a_aval.dtype, True), _float_dtype("lstsq", b_aval.dtype, True)
    )
    a, b = cast(a, dt), cast(b, dt)
    real_dt = np.finfo(dt).dtype  # of s and the residuals (real for complex a and b too)
    m, n = a_aval.shape
    vector = b_aval.ndim == 1
    b2 = reshape(b, (m, 1)) if vector else b
    k = min(m, n)
    if rcond is None:
        rcond = np.finfo(dt).eps * max(m, n)
    if k == 0:
        x = cast(np.zeros((n, _shape(b2)[1]), dt), dt)
        s = cast(np.zeros((0,), real_dt), real_dt)
        rank = cast(np.zeros((), np.int32), np.dtype(np.int32))
    else:
        s = ll.svd(a, compute_uv=False)
        keep = s > asarray_or_tracer(rcond) * s[0]
        rank = _sum(astype(keep, np.int32), dtype=np.int32)
        x = _lstsq_solution(a, b2, keep, rank == k)
    if m > n or not numpy_resid:
        r = b2 - matmul(a, x)
        resid = _sum(real(r * conjugate(r)) if dt.kind == "c" else r * r, axis=0)
    else:
        resid = cast(np.zeros((0,), real_dt), real_dt)
    return (reshape(x, (n,)) if vector else x), resid, rank, s


def _lstsq_solution(a: Any, b: Any, keep: Any, full: Any) -> Any:
    """The minimum-norm least-squares solution, from an SVD (NumPy's values).

    Where ``a`` has full rank, the value stays the SVD's but the derivatives are those
    of the QR solution (``sg(x_svd) + x_qr - sg(x_qr)``): exact for repeated singular
    values, where the singular vectors' derivatives are infinite. Each branch's input
    is replaced (a constant, the identity) where it is not used, so neither leaks
    NaN into the other's derivatives.
    """
    m, n = _shape(a)
    dt = core.get_aval(a).dtype
    known = core.concrete_or_none(full)  # outside jit and vmap: one branch only
    if known is not None and np.ndim(known) != 0:  # a whole batch's values (vmap)
        known = None
    if known is None:
        # The SVD's value at a, and its derivatives from an SVD of a matrix with distinct
        # singular values where a has full rank (at a there, repeated singular values
        # would give infinite coefficients, and zero cotangents times them NaN at
        # second order).
        x_value = _svd_solution(stop_gradient(a), b, keep)
        distinct = np.eye(m, n, dtype=dt) * np.arange(1, n + 1, dtype=dt)
        x_deriv = _svd_solution(where(full, distinct, a), b, keep)
        x_svd = stop_gradient(x_value) + (x_deriv - stop_gradient(x_deriv))
        a_qr = where(full, a, np.eye(m, n, dtype=dt))
    elif bool(known):
        x_svd, a_qr = _svd_solution(stop_gradient(a), b, keep), a
    else:
        return _svd_solution(a, b, keep)
    if m >= n:
        q, r = ll.qr(a_qr, full_matrices=False)
        x_qr = ll.triangular_solve(r, matmul(_mH(q), b), lower=False)
    else:  # the minimum-norm solution q r^-H b from a^H = q r
        q, r = ll.qr(_mH(a_qr), full_matrices=False)
        x_qr = matmul(q, ll.triangular_solve(conjugate(r), b, lower=False, transpose_a=True))
    x_full = stop_gradient(x_value if known is None else x_svd) + (x_qr - stop_gradient(x_qr))
    return x_full if known is not None else where(full, x_full, x_svd)


def _svd_solution(a: Any, b: Any, keep: Any) -> Any:
    """``V diag(1 / s) U^H b`` over the singular values kept (the pseudo-inverse's)."""
    u, s, vt = ll.svd(a, full_matrices=False)
    s_inv = where(keep, 1 / where(keep, s, 1), 0)
    return matmul(_mH(vt), reshape(s_inv, (-1, 1)) * matmul(_mH(u), b))


# ---------------------------------------------------------------------------
# The array API's matrix functions
# ---------------------------------------------------------------------------


def _at_least(fname: str, x: Any, nd: int) -> Any:
    x = asarray_or_tracer(x, fname)
    shape = _shape(x)
    if len(shape) < nd:
        raise ValueError(
            f"{fname}: expected an array with at least {nd} dimensions, got shape {shape}."
        )
    return x


def _check_cross(x1: Any, x2: Any, axis: Any) -> None:
    for x in (x1, x2):
        shape = _shape(x)
        try:
            ax = operator.index(axis)
        except TypeError:
            raise TypeError(f"cross: expected an integer axis, got {axis!r}.") from None
        if not -len(shape) <= ax < len(shape):
            raise np.exceptions.AxisError(
                f"cross: expected axis in [{-len(shape)}, {len(shape)}) for shape {shape}, "
                f"got {axis}."
            )
        if shape[ax] != 3:
            raise ValueError(
                f"cross: expected 3-component vectors along axis {axis}, got shapes "
                f"{_shape(x1)} and {_shape(x2)}. numpy.cross also takes 2-component ones."
            )


def _np_cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    x1, x2 = np.asarray(x1), np.asarray(x2)
    _check_cross(x1, x2, axis)
    return np.cross(x1, x2, axis=axis)


@numpy_path(_np_cross, promote_args=(0, 1))
def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The cross product of 3-component vectors along ``axis``, broadcast over the
    other axes (the array API's ``cross``: 2-component vectors are an error).

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    array([0., 0., 1.])
    """
    x1, x2 = asarray_or_tracer(x1, "cross"), asarray_or_tracer(x2, "cross")
    _check_cross(x1, x2, axis)
    return _cross(x1, x2, axis=axis)


def _np_diagonal(x: Any, /, *, offset: int = 0) -> Any:
    return np.diagonal(_at_least("diagonal", np.asarray(x), 2), offset, -2, -1)


@numpy_path(_np_diagonal)
def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The diagonal at ``offset`` of each matrix (the last two axes).

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.diagonal(np.arange(6.0).reshape(2, 3), offset=1)
    array([1., 5.])
    """
    return _diagonal(_at_least("diagonal", x, 2), offset, -2, -1)


def _np_matrix_transpose(x: Any, /) -> Any:
    return np.swapaxes(_at_least("matrix_transpose", np.asarray(x), 2), -1, -2)


@numpy_path(_np_matrix_transpose)
def matrix_transpose(x: Any, /) -> Any:
    """Each matrix transposed: the last two axes swapped.

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.matrix_transpose(np.ones((4, 2, 3))).shape
    (4, 3, 2)
    """
    return swapaxes(_at_least("matrix_transpose", x, 2), -1, -2)


def _check_outer(x1: Any, x2: Any) -> None:
    if len(_shape(x1)) != 1 or len(_shape(x2)) != 1:
        raise ValueError(
            f"outer: expected two 1-D vectors, got shapes {_shape(x1)} and {_shape(x2)}. "
            f"functrace.numpy.outer flattens other arrays first."
        )


def _np_outer(x1: Any, x2: Any, /) -> Any:
    x1, x2 = np.asarray(x1), np.asarray(x2)
    _check_outer(x1, x2)
    return np.outer(x1, x2)


@numpy_path(_np_outer, promote_args=(0, 1))
def outer(x1: Any, x2: Any, /) -> Any:
    """The outer product ``x1[:, None] * x2[None, :]`` of two vectors.

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.outer(np.array([1, 2]), np.array([1, 10]))
    array([[ 1, 10],
           [ 2, 20]])
    """
    x1, x2 = asarray_or_tracer(x1, "outer"), asarray_or_tracer(x2, "outer")
    _check_outer(x1, x2)
    return _outer(x1, x2)


@numpy_path(lambda x1, x2, /, *, axes=2: np.tensordot(x1, x2, axes))
def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    """Contract the last ``axes`` axes of ``x1`` with the first ones of ``x2`` (or the
    listed pairs of axes), as ``functrace.numpy.tensordot``.

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.tensordot(np.ones((2, 3)), np.ones((3, 4)), axes=1).shape
    (2, 4)
    """
    return _tensordot(x1, x2, axes)


def _np_trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    return np.trace(_at_least("trace", np.asarray(x), 2), offset, -2, -1, dtype)


@numpy_path(_np_trace)
def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """The sum of the diagonal at ``offset`` of each matrix (the last two axes).

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.trace(np.stack([np.eye(2), 3 * np.eye(2)]))
    array([2., 6.])
    """
    return _trace(_at_least("trace", x, 2), offset, -2, -1, dtype)


def _vecdot_operands(x1: Any, x2: Any, axis: Any) -> tuple[Any, Any]:
    """Both operands with their ``axis`` moved last and the other axes broadcast."""
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"vecdot: expected an integer axis, got {axis!r}.") from None
    s1, s2 = _shape(x1), _shape(x2)
    for s in (s1, s2):
        if not -len(s) <= axis < len(s):
            raise np.exceptions.AxisError(
                f"vecdot: expected axis in [{-len(s)}, {len(s)}) for shape {s}, got {axis}."
            )
    if s1[axis] != s2[axis]:
        raise ValueError(
            f"vecdot: expected vectors of one length along axis {axis}, got shapes {s1} and {s2}."
        )
    return moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)


def _np_vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    x1, x2 = np.asarray(x1), np.asarray(x2)
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"vecdot: expected an integer axis, got {axis!r}.") from None
    s1, s2 = x1.shape, x2.shape
    for s in (s1, s2):
        if not -len(s) <= axis < len(s):
            raise np.exceptions.AxisError(
                f"vecdot: expected axis in [{-len(s)}, {len(s)}) for shape {s}, got {axis}."
            )
    if s1[axis] != s2[axis]:
        raise ValueError(
            f"vecdot: expected vectors of one length along axis {axis}, got shapes {s1} and {s2}."
        )
    y1, y2 = np.moveaxis(x1, axis, -1), np.moveaxis(x2, axis, -1)
    broadcast_shapes("vecdot", y1.shape[:-1], y2.shape[:-1])
    return np.sum(np.conj(y1) * y2, axis=-1)


@numpy_path(_np_vecdot)
def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The dot product of vectors along ``axis`` (``sum(conj(x1) * x2, axis)``): ``axis``
    is taken in each operand, the other axes broadcast.

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.vecdot(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 1.0]))
    array([3., 7.])
    """
    x1, x2 = asarray_or_tracer(x1, "vecdot"), asarray_or_tracer(x2, "vecdot")
    y1, y2 = _vecdot_operands(x1, x2, axis)
    lead = broadcast_shapes("vecdot", _shape(y1)[:-1], _shape(y2)[:-1])
    if core.get_aval(y1).dtype.kind == "c":
        y1 = conjugate(y1)
    n = _shape(y1)[-1]
    prod = broadcast_to_shape(y1, (*lead, n)) * broadcast_to_shape(y2, (*lead, n))
    return _sum(prod, axis=-1)


# ---------------------------------------------------------------------------
# tensorinv, tensorsolve
# ---------------------------------------------------------------------------


def _tensorinv_shapes(shape: tuple[int, ...], ind: Any) -> tuple[int, tuple[int, ...]]:
    try:
        ind = operator.index(ind)
    except TypeError:
        raise TypeError(f"tensorinv: expected an integer ind, got {ind!r}.") from None
    if ind <= 0 or ind > len(shape):
        raise ValueError(
            f"tensorinv: expected ind in [1, {len(shape)}] for an array of shape {shape}, "
            f"got {ind}."
        )
    rows = int(np.prod(shape[:ind], dtype=np.int64))
    cols = int(np.prod(shape[ind:], dtype=np.int64))
    if rows != cols:
        raise np.linalg.LinAlgError(
            f"tensorinv: expected prod(a.shape[:ind]) == prod(a.shape[ind:]), got shape "
            f"{shape} with ind={ind} ({rows} != {cols})."
        )
    return rows, shape[ind:] + shape[:ind]


def _np_tensorinv(a: Any, ind: int = 2) -> Any:
    a = np.asarray(a)
    size, out_shape = _tensorinv_shapes(a.shape, ind)
    return np.linalg.inv(a.reshape(size, size)).reshape(out_shape)


@numpy_path(_np_tensorinv)
def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of ``a`` for ``tensordot(., ., ind)``: ``a`` read as the square matrix
    ``prod(a.shape[:ind]) x prod(a.shape[ind:])``, inverted, and shaped
    ``a.shape[ind:] + a.shape[:ind]``.

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.tensorinv(np.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    a = asarray_or_tracer(a, "tensorinv")
    size, out_shape = _tensorinv_shapes(_shape(a), ind)
    mat = reshape(a, (size, size))
    _check_matrix("tensorinv", core.get_aval(mat), square=True)
    mat = cast(mat, _float_dtype("tensorinv", core.get_aval(mat).dtype))
    eye = cast(np.eye(size, dtype=core.get_aval(mat).dtype), core.get_aval(mat).dtype)
    return reshape(ll.solve(mat, eye), out_shape)


def _tensorsolve_setup(
    a_shape: tuple[int, ...], b_shape: tuple[int, ...], axes: Any
) -> tuple[tuple[int, ...] | None, tuple[int, ...], int]:
    """(the transpose of ``a`` that moves ``axes`` last, the shape of x, its size)."""
    nd = len(a_shape)
    perm = None
    if axes is not None:
        order = list(range(nd))
        for k in axes:
            try:
                k = operator.index(k) % nd if -nd <= operator.index(k) < nd else None
            except TypeError:
                k = None
            if k is None or k not in order:
                raise ValueError(
                    f"tensorsolve: expected distinct axes of a (shape {a_shape}), got {axes!r}."
                )
            order.remove(k)
            order.append(k)
        perm = tuple(order)
        a_shape = tuple(a_shape[i] for i in perm)
    nb = len(b_shape)
    if nb > nd or tuple(a_shape[:nb]) != tuple(b_shape):
        raise ValueError(
            f"tensorsolve: expected a's leading dimensions to equal b's shape {b_shape}, got "
            f"a of shape {a_shape} (after moving axes={axes} last)."
        )
    x_shape = a_shape[nb:]
    size = int(np.prod(x_shape, dtype=np.int64))
    if int(np.prod(b_shape, dtype=np.int64)) != size:
        raise np.linalg.LinAlgError(
            f"tensorsolve: expected prod(a.shape[b.ndim:]) == prod(b.shape), got a of shape "
            f"{a_shape} and b of shape {b_shape}."
        )
    return perm, x_shape, size


def _np_tensorsolve(a: Any, b: Any, axes: Any = None) -> Any:
    a, b = np.asarray(a), np.asarray(b)
    perm, x_shape, size = _tensorsolve_setup(a.shape, b.shape, axes)
    if perm is not None:
        a = a.transpose(perm)
    return np.linalg.solve(a.reshape(size, size), b.ravel()).reshape(x_shape)


@numpy_path(_np_tensorsolve)
def tensorsolve(a: Any, b: Any, axes: Any = None) -> Any:
    """Solve ``tensordot(a, x, axes=x.ndim) = b`` for ``x``, whose shape is that of the
    trailing axes of ``a`` (after moving ``axes`` of ``a`` to the end).

    >>> import numpy as np, functrace.numpy as fnp
    >>> a = np.eye(6).reshape(6, 2, 3)
    >>> fnp.linalg.tensorsolve(a, np.arange(6.0)).shape
    (2, 3)
    """
    a, b = asarray_or_tracer(a, "tensorsolve"), asarray_or_tracer(b, "tensorsolve")
    perm, x_shape, size = _tensorsolve_setup(_shape(a), _shape(b), axes)
    if perm is not None:
        a = moveaxis(a, perm, tuple(range(len(perm))))
    dt = np.promote_types(
        _float_dtype("tensorsolve", core.get_aval(a).dtype),
        _float_dtype("tensorsolve", core.get_aval(b).dtype),
    )
    mat = cast(reshape(a, (size, size)), dt)
    rhs = cast(reshape(b, (size, 1)), dt)
    return reshape(ll.solve(mat, rhs), x_shape)


# ---------------------------------------------------------------------------
# eig, eigvals (NumPy inputs only)
# ---------------------------------------------------------------------------


def _eig_traced_error(fname: str) -> NotImplementedError:
    return NotImplementedError(
        f"{fname}: expected a NumPy array, got a traced one (inside jit, grad, vmap...). The "
        f"eigenvalues of a non-symmetric matrix are complex in general, and functrace's {fname} "
        f"follows NumPy here (real results when every eigenvalue is real). Call {fname} "
        f"outside the transformed function, use functrace.lax.linalg.eig (JAX's: complex "
        f"results, traceable, eigenvalues differentiable), or eigh / eigvalsh for symmetric "
        f"matrices (real, differentiable)."
    )


def _np_eig(a: Any) -> EigResult:
    w, v = np.linalg.eig(_np_matrix("eig", a))
    return EigResult(w, v)


@numpy_path(_np_eig)
def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors (columns) of square ``a``:
    ``EigResult(eigenvalues, eigenvectors)``, NumPy's values.

    NOTE: NumPy inputs only: traced inputs raise ``NotImplementedError`` (the results
    are complex in general). As in NumPy, the results are real when every eigenvalue is
    (JAX always returns complex arrays).

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.eig(np.array([[2.0, 0.0], [0.0, 3.0]])).eigenvalues
    array([2., 3.])
    """
    _check_matrix("eig", core.get_aval(asarray_or_tracer(a, "eig")), square=True)
    raise _eig_traced_error("eig")


def _np_eigvals(a: Any) -> Any:
    return np.linalg.eigvals(_np_matrix("eigvals", a))


@numpy_path(_np_eigvals)
def eigvals(a: Any) -> Any:
    """Eigenvalues of square ``a`` (NumPy's values; real when all of them are real).

    NOTE: NumPy inputs only: traced inputs raise ``NotImplementedError``, see ``eig``.

    >>> import numpy as np, functrace.numpy as fnp
    >>> fnp.linalg.eigvals(np.array([[0.0, -1.0], [1.0, 0.0]]))
    array([0.+1.j, 0.-1.j])
    """
    _check_matrix("eigvals", core.get_aval(asarray_or_tracer(a, "eigvals")), square=True)
    raise _eig_traced_error("eigvals")
