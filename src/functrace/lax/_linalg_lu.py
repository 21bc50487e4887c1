"""The ``triangular_solve`` and ``lu`` primitives of ``functrace.lax.linalg`` (re-exported
there; see its notes for the conventions shared by every linear-algebra primitive)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.lax._linalg_util import (
    _batch_binary,
    _batch_unary,
    _check_rhs,
    _check_square,
    _const,
    _is_complex,
    _mm,
    _mT,
    _nan_where_singular,
    _register_checked,
    _shape,
    _tril,
    _triu,
)
from functrace.lax._util import check_same_dtypes
from functrace.lax.elementwise import add, convert_element_type, eq, neg
from functrace.lax.extras import conj
from functrace.lax.shapes import broadcast_in_dim, iota

# ---------------------------------------------------------------------------
# triangular_solve: op(a) x = b (left side) or x op(a) = b (right side), op(a) one of
# a, a^T, conj(a), a^H, reading one triangle of a (not its diagonal if unit_diagonal)
# ---------------------------------------------------------------------------


def _triangular_solve_abstract(
    a: ShapedArray,
    b: ShapedArray,
    *,
    lower: bool,
    transpose_a: bool,
    conjugate_a: bool,
    unit_diagonal: bool,
    left_side: bool,
) -> ShapedArray:
    if left_side:
        _check_rhs("triangular_solve", a, b)
        return ShapedArray(b.shape, b.dtype)
    _check_square("triangular_solve", a, complex_ok=True)
    n = a.shape[-1]
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-1] != n:
        raise ValueError(
            f"triangular_solve: expected b of shape (..., k, {n}) with the leading "
            f"dimensions of a (left_side=False: x op(a) = b), got shapes {a.shape} (a) and "
            f"{b.shape} (b)."
        )
    check_same_dtypes("triangular_solve", a, b)
    return ShapedArray(b.shape, b.dtype)


def _op_triangle(
    a: np.ndarray, lower: bool, transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
) -> np.ndarray:
    """``op(T)`` for the triangle ``T`` of ``a`` that a triangular solve reads."""
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        t = np.where(np.eye(n, dtype=bool), np.ones((), a.dtype), t)
    if conjugate_a:
        t = np.conj(t)
    return np.swapaxes(t, -1, -2) if transpose_a else t


def _triangular_solve_impl(
    a: np.ndarray,
    b: np.ndarray,
    *,
    lower: bool,
    transpose_a: bool,
    conjugate_a: bool,
    unit_diagonal: bool,
    left_side: bool,
) -> np.ndarray:
    # NumPy has no triangular solver (SciPy is not a runtime dependency): a general solve
    # of the chosen triangle. The right side solves op(a)^T x^T = b^T.
    t = _op_triangle(a, lower, transpose_a, conjugate_a, unit_diagonal)
    if left_side:
        return _nan_where_singular(np.linalg.solve, t, b)
    x_t = _nan_where_singular(np.linalg.solve, np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2))
    return np.swapaxes(x_t, -1, -2)


triangular_solve_p = _register_checked(
    Primitive("triangular_solve"), _triangular_solve_impl, _triangular_solve_abstract
)


def triangular_solve(
    a: Any,
    b: Any,
    lower: bool = True,
    transpose_a: bool = False,
    *,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
    left_side: bool = True,
) -> Any:
    """Solve ``op(a) @ x = b`` (``left_side``, the default) or ``x @ op(a) = b`` for ``x``,
    reading only the ``lower`` (or upper) triangle of ``a``. ``op(a)`` is ``a``,
    transposed with ``transpose_a``, conjugated with ``conjugate_a`` (nothing for real
    ``a``; both: the conjugate transpose). ``unit_diagonal`` takes the diagonal as ones
    (not read). ``b`` has shape ``(..., n, k)`` (``(..., k, n)`` on the right side).

    NOTE: JAX's keyword defaults are ``left_side=False, lower=False``; here the left side
    and the lower triangle are the defaults (``lower`` and ``transpose_a`` may be passed
    by position)."""
    conjugate_a = bool(conjugate_a) and _is_complex(a)
    return triangular_solve_p.bind(
        a,
        b,
        lower=bool(lower),
        transpose_a=bool(transpose_a),
        conjugate_a=conjugate_a,
        unit_diagonal=bool(unit_diagonal),
        left_side=bool(left_side),
    )


def _triangular_solve_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[Any, Any]:
    # x = op(A)^-1 b: dx = op(A)^-1 (db - op(dA) x); on the right, x = b op(A)^-1:
    # dx = (db - x op(dA)) op(A)^-1. dA is restricted to the entries read (op is linear).
    a, b = primals
    ga, gb = tangents
    x = triangular_solve_p.bind(a, b, **params)
    rhs: Any = Zero.from_primal(x) if type(gb) is Zero else gb
    if type(ga) is not Zero:
        k = 1 if params["unit_diagonal"] else 0
        ga = _tril(ga, -k) if params["lower"] else _triu(ga, k)
        if params["conjugate_a"]:
            ga = conj(ga)
        if params["transpose_a"]:
            ga = _mT(ga)
        prod = _mm(ga, x) if params["left_side"] else _mm(x, ga)
        rhs = ad.add_tangents(rhs, neg(prod))
    return x, triangular_solve_p.bind(a, rhs, **params)


def _triangular_solve_transpose(ct: Any, a: Any, b: Any, **params: Any) -> list[Any]:
    # linear in b. Left: b -> M^-1 b transposes to ct -> M^-T ct; right: b -> b M^-1 to
    # ct -> ct M^-T; M = op(A), and M^T flips transpose_a (conjugate_a stays: a plain
    # transpose, JAX's convention for complex cotangents).
    if ad.is_undefined_primal(a):
        raise ValueError(
            "triangular_solve transpose: expected a known matrix a, got a linear "
            "one (the map is linear in b only)."
        )
    flipped = {**params, "transpose_a": not params["transpose_a"]}
    return [None, triangular_solve_p.bind(a, ct, **flipped)]


ad.jvp_rules[triangular_solve_p] = _triangular_solve_jvp
ad.transpose_rules[triangular_solve_p] = _triangular_solve_transpose
ad.linear_primitives.add(triangular_solve_p)
batching.batching_rules[triangular_solve_p] = _batch_binary(triangular_solve_p)


# ---------------------------------------------------------------------------
# lu: a[perm] = L U with partial pivoting (L unit lower, U upper, packed in one matrix)
# ---------------------------------------------------------------------------


def _lu_abstract(a: ShapedArray) -> list[ShapedArray]:
    _check_square("lu", a, complex_ok=True)
    idx = ShapedArray(a.shape[:-1], np.dtype(np.int32))
    return [ShapedArray(a.shape, a.dtype), idx, idx]


def _lu_impl(a: np.ndarray) -> list[np.ndarray]:
    # Doolittle elimination with row pivoting (LAPACK getrf's choices: the first row of
    # largest magnitude, |re| + |im| for complex entries as its i?amax; a zero pivot
    # column is left as it is), vectorised over the stack.
    *lead, n, _ = a.shape
    m = np.array(a, dtype=a.dtype).reshape(-1, n, n)
    nb = m.shape[0]
    pivots = np.zeros((nb, n), np.int32)
    perm = np.tile(np.arange(n, dtype=np.int32), (nb, 1))
    rows = np.arange(nb)
    with np.errstate(all="ignore"):
        for k in range(n):
            col_k = m[:, k:, k]
            size = np.abs(col_k.real) + np.abs(col_k.imag) if a.dtype.kind == "c" else np.abs(col_k)
            p = k + np.argmax(size, axis=1)
            pivots[:, k] = p
            m[rows, k], m[rows, p] = m[rows, p].copy(), m[rows, k].copy()
            perm[rows, k], perm[rows, p] = perm[rows, p], perm[rows, k]
            piv = m[:, k, k][:, None]
            col = m[:, k + 1 :, k]
            col = np.where(piv != 0, col / np.where(piv != 0, piv, 1), col)
            m[:, k + 1 :, k] = col
            m[:, k + 1 :, k + 1 :] -= col[:, :, None] * m[:, k, None, k + 1 :]
    shape = (*lead, n)
    return [m.reshape(a.shape), pivots.reshape(shape), perm.reshape(shape)]


lu_p = _register_checked(Primitive("lu", multiple_results=True), _lu_impl, _lu_abstract)


def lu(a: Any) -> Any:
    """LU decomposition with partial pivoting of square ``a (..., n, n)``.

    Returns ``[lu, pivots, permutation]``: ``lu`` packs ``L`` (unit lower triangular,
    below the diagonal) and ``U`` (upper triangular, on and above it) with
    ``a[..., permutation, :] = L @ U``; ``pivots[k]`` is the row swapped with row ``k``
    at step ``k`` (LAPACK's, 0-based). Both index arrays are int32.
    """
    return lu_p.bind(a)


def _permutation_matrix(perm: Any, like: Any) -> Any:
    """``P[..., i, j] = (perm[..., i] == j)`` in the dtype of ``like``: ``P @ x = x[perm]``."""
    shape = _shape(like)
    nd = len(shape)
    cols = iota(np.int32, shape[-1], nd - 1, shape)
    hit = eq(broadcast_in_dim(perm, shape, tuple(range(nd - 1))), cols)
    return convert_element_type(hit, core.get_aval(like).dtype)


def _lu_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    # P^T A = L U  =>  X = L^-1 P^T dA U^-1;  dL = L tril(X, -1), dU = triu(X) U
    # (complex-linear in dA, as JAX's: no conjugates).
    (a,), (g,) = primals, tangents
    packed, pivots, perm = outs = lu(a)
    zeros = [Zero.from_primal(pivots), Zero.from_primal(perm)]
    if type(g) is Zero:
        return outs, [Zero.from_primal(packed), *zeros]
    n = _shape(a)[-1]
    lower = add(_tril(packed, -1), _const(packed, np.eye(n)))
    upper = _triu(packed)
    x = triangular_solve(lower, _mm(_permutation_matrix(perm, a), g), lower=True)
    x = triangular_solve(upper, x, lower=False, left_side=False)  # x U^-1
    d = add(_mm(lower, _tril(x, -1)), _mm(_triu(x), upper))
    return outs, [d, *zeros]


ad.jvp_rules[lu_p] = _lu_jvp
batching.batching_rules[lu_p] = _batch_unary(lu_p)


__all__ = ["lu", "lu_p", "triangular_solve", "triangular_solve_p"]
