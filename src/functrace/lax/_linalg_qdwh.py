"""The ``qdwh`` primitive of ``functrace.lax.linalg`` (re-exported there, with its JVP):
the polar decomposition ``x = u h`` by the QR-based dynamically weighted Halley
iteration (Nakatsukasa, Bai and Gygi), in NumPy.

The iteration starts from ``x / sqrt(|x|_1 |x|_inf)`` with the lower bound ``l = eps``
on its smallest singular value, and follows the optimal weights ``(a, b, c)`` for the
current ``l`` (updated as the iteration's own recurrence), an update ``u <- (b/c) u +
(a - b/c) u (I + c u^H u)^-1`` written as a QR factorization while ``c > 100`` (well
conditioned) and as a Cholesky solve afterwards. Once ``l`` is within ``5 eps`` of 1 it
continues with Halley's weights ``(3, 1, 3)``; from the first Cholesky step on it stops
when ``|u_k - u_{k-1}|_F <= (5 eps)^(1/3)`` or after ``max_iterations`` steps, then
applies one Newton-Schulz step ``u <- 1.5 u - 0.5 u u^H u`` and sets ``h`` to the
Hermitian part of ``u^H x``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.lax._linalg_extra import _register
from functrace.lax._linalg_util import _check_matrix

_CHOLESKY_CUTOFF = 100.0


def _weights(eps: float, max_iterations: int) -> list[tuple[float, float, float]]:
    """The ``(a, b, c)`` of the weighted steps, until ``l`` reaches 1 (``5 eps``)."""
    out: list[tuple[float, float, float]] = []
    l, tol_l = eps, 5.0 * eps
    while l + tol_l < 1 and len(out) < max_iterations:
        l2 = l * l
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        root = (1 + dd) ** 0.5
        a = root + (2 - dd + 2 * (2 - l2) / (l2 * root)) ** 0.5
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        l = l * (a + b * l2) / (1 + c * l2)
        out.append((a, b, c))
    return out


def _step_qr(u: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    m, n = u.shape
    root = c**0.5
    q, _ = np.linalg.qr(np.concatenate([root * u, np.eye(n, dtype=u.dtype)]))
    return (b / c) * u + ((a - b / c) / root) * (q[:m] @ q[m:].conj().T)


def _step_cholesky(u: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    n = u.shape[1]
    z = c * (u.conj().T @ u) + np.eye(n, dtype=u.dtype)
    low = np.linalg.cholesky(z)
    # u z^-1 = (z^-1 u^H)^H with z = L L^H
    y = np.linalg.solve(low, u.conj().T)
    sol = np.linalg.solve(low.conj().T, y).conj().T
    return (b / c) * u + (a - b / c) * sol


def _polar_one(
    x: np.ndarray, max_iterations: int, eps: float
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    one = np.abs(x).sum(axis=0).max(initial=0.0)
    inf = np.abs(x).sum(axis=1).max(initial=0.0)
    u = x * np.asarray(1.0 if one == 0 else 1 / np.sqrt(one * inf), x.dtype)
    tol_norm = (5.0 * eps) ** (1 / 3)
    weights = _weights(eps, max_iterations)
    k, not_converged = 0, True
    for a, b, c in weights:
        k += 1
        if c > _CHOLESKY_CUTOFF:
            u = _step_qr(u, a, b, c)
        else:
            prev, u = u, _step_cholesky(u, a, b, c)
            not_converged = bool(np.linalg.norm(u - prev) > tol_norm)
    while not_converged and k < max_iterations:
        k += 1
        prev, u = u, _step_cholesky(u, 3.0, 1.0, 3.0)
        not_converged = bool(np.linalg.norm(u - prev) > tol_norm)
    u = 1.5 * u - 0.5 * u @ (u.conj().T @ u)
    h = u.conj().T @ x
    return u, (h + h.conj().T) / 2, k, not not_converged


def _qdwh_abstract(x: ShapedArray, *, max_iterations: int, eps: float | None) -> list[ShapedArray]:
    _check_matrix("qdwh", x, complex_ok=True)
    m, n = x.shape[-2:]
    if m < n:
        raise ValueError(f"qdwh: expected x (m, n) with m >= n, got shape {x.shape}.")
    lead = x.shape[:-2]
    return [
        ShapedArray(x.shape, x.dtype),
        ShapedArray(lead + (n, n), x.dtype),
        ShapedArray(lead, np.dtype(np.int64)),
        ShapedArray(lead, np.dtype(np.bool_)),
    ]


def _qdwh_impl(x: np.ndarray, *, max_iterations: int, eps: float | None) -> list[np.ndarray]:
    m, n = x.shape[-2:]
    lead = x.shape[:-2]
    tol = float(np.finfo(x.dtype).eps) if eps is None else float(eps)
    us: list[Any] = []
    hs: list[Any] = []
    ks: list[Any] = []
    oks: list[Any] = []
    for mat in x.reshape((math.prod(lead), m, n)):
        if not np.isfinite(mat).all():
            res = np.full((m, n), np.nan), np.full((n, n), np.nan), 0, False
        else:
            try:
                res = _polar_one(mat, max_iterations, tol)
            except np.linalg.LinAlgError:  # a failed Cholesky step (not seen in practice)
                res = np.full((m, n), np.nan), np.full((n, n), np.nan), 0, False
        for acc, r in zip((us, hs, ks, oks), res):
            acc.append(r)
    return [
        np.array(us, x.dtype).reshape(x.shape),
        np.array(hs, x.dtype).reshape(lead + (n, n)),
        np.array(ks, np.int64).reshape(lead),
        np.array(oks, np.bool_).reshape(lead),
    ]


qdwh_p = _register(Primitive("qdwh", multiple_results=True), _qdwh_impl, _qdwh_abstract)


def qdwh(
    x: Any,
    *,
    is_hermitian: bool = False,
    max_iterations: int | None = None,
    eps: float | None = None,
    dynamic_shape: tuple[int, int] | None = None,
) -> tuple[Any, Any, Any, Any]:
    """Polar decomposition ``x = u @ h`` of a full-rank ``x (m, n)``, ``m >= n``, by the
    dynamically weighted Halley iteration: ``(u, h, num_iters, is_converged)`` (``u`` with
    orthonormal columns, ``h`` Hermitian positive definite; ``max_iterations`` defaults
    to 10, ``eps`` to the dtype's). ``is_hermitian`` is unused (as in JAX);
    ``dynamic_shape`` is a ``NotImplementedError``. Differentiable in both modes (the
    polar decomposition's derivative; JAX differentiates the iteration, forward only)."""
    if dynamic_shape is not None:
        raise NotImplementedError("qdwh: dynamic_shape (a padded x) is not supported.")
    shape = core.get_aval(x if isinstance(x, core.Tracer) else np.asarray(x)).shape
    if len(shape) != 2:
        raise ValueError(f"qdwh: expected a matrix x (m, n), got shape {shape}.")
    iters = 10 if max_iterations is None else int(max_iterations)
    u, h, k, ok = qdwh_p.bind(x, max_iterations=iters, eps=None if eps is None else float(eps))
    return u, h, k, ok
