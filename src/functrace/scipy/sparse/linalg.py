"""Krylov solvers of ``A x = b`` (``jax.scipy.sparse.linalg``): ``cg``, ``bicgstab`` and
``gmres``.

``A`` is a function of a pytree ``x`` like ``b`` (a linear operator) or a square 2-d
array; ``b`` (and ``x0``) are pytrees of arrays, treated as one vector. All three run
JAX's iterations (those of SciPy's current tolerance rule) in ``lax.while_loop`` loops:
``cg`` and ``bicgstab`` stop once ``|r|^2 <= max(tol^2 |b|^2, atol^2)`` or after
``maxiter`` steps, ``gmres`` once its preconditioned residual is at most ``max(tol |b|,
atol)`` or after ``maxiter`` restarts (default ``10 * size(b)`` for all three); ``M`` is
a preconditioner, a function or matrix approximating ``A^-1``. As in JAX, the second
result (SciPy's convergence ``info``) is None for ``cg`` and ``bicgstab``, and for
``gmres`` only says whether the solution holds NaN: check the residual yourself if you
need to know.

Derivatives are implicit (``lax.custom_linear_solve``): they solve the same system
again (forward mode) or its transpose (reverse mode) instead of differentiating the
iterations, so a gradient costs one more solve. ``cg`` takes real ``A`` to be
symmetric (its transpose solve is itself, as in JAX); ``bicgstab`` and ``gmres`` solve
the transposed system with the transposed operator.

>>> import numpy as np
>>> from functrace.scipy.sparse.linalg import cg
>>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
>>> x, info = cg(A, np.array([1.0, 2.0]))
>>> np.allclose(A @ np.asarray(x), [1.0, 2.0]), info
(True, None)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core, lax
from functrace.flatten_util import ravel_pytree
from functrace.scipy.linalg import solve, solve_triangular
from functrace.tree_util import tree_leaves, tree_map, tree_structure

__all__ = ["bicgstab", "cg", "gmres"]


def _dot_real(x: Any, y: Any) -> Any:
    """``Re(x^H y)`` over the leaves (``x^H M x`` of a positive definite ``M`` is real)."""
    total = None
    for a, b in zip(tree_leaves(x), tree_leaves(y)):
        d = fnp.vdot(fnp.real(a), fnp.real(b))
        if _complex(a) or _complex(b):
            d = d + fnp.vdot(fnp.imag(a), fnp.imag(b))
        total = d if total is None else total + d
    return total


def _complex(x: Any) -> bool:
    return core.get_aval(x).dtype.kind == "c"


def _dot(x: Any, y: Any) -> Any:
    """``x^H y`` over the leaves."""
    total = None
    for a, b in zip(tree_leaves(x), tree_leaves(y)):
        d = fnp.vdot(a, b)
        total = d if total is None else total + d
    return total


def _axpy(alpha: Any, x: Any, y: Any) -> Any:
    """``alpha * x + y`` leaf by leaf."""
    return tree_map(lambda a, b: alpha * a + b, x, y)


def _sub(x: Any, y: Any) -> Any:
    return tree_map(lambda a, b: a - b, x, y)


def _operator(fname: str, what: str, f: Any) -> Callable[[Any], Any]:
    if callable(f):
        return f  # type: ignore[no-any-return]
    if isinstance(f, (np.ndarray, core.Tracer)) or hasattr(f, "__array__"):
        f = f if isinstance(f, core.Tracer) else fnp.asarray(f)
        shape = core.get_aval(f).shape
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(
                f"{fname}: expected {what} to be a function or a square matrix, got shape "
                f"{tuple(shape)}."
            )
        return lambda x: fnp.matmul(f, x)
    raise TypeError(
        f"{fname}: expected {what} to be a function or a square matrix, got {type(f).__name__}."
    )


def _solve(
    fname: str,
    method: Callable[..., Any],
    A: Any,
    b: Any,
    x0: Any,
    tol: float,
    atol: float,
    maxiter: int | None,
    M: Any,
    symmetric: bool,
) -> tuple[Any, None]:
    if not tree_leaves(b):
        raise ValueError(f"{fname}: expected b to hold at least one array, got {b!r}.")
    b = tree_map(lambda v: v if isinstance(v, core.Tracer) else fnp.asarray(v), b)
    x0 = tree_map(fnp.zeros_like, b) if x0 is None else x0
    if tree_structure(x0) != tree_structure(b) or [
        core.get_aval(v).shape for v in tree_leaves(x0)
    ] != [core.get_aval(v).shape for v in tree_leaves(b)]:
        raise ValueError(
            f"{fname}: expected x0 of the structure and shapes of b, got {tree_structure(x0)} "
            f"{[core.get_aval(v).shape for v in tree_leaves(x0)]} for b's "
            f"{tree_structure(b)} {[core.get_aval(v).shape for v in tree_leaves(b)]}."
        )
    if maxiter is None:
        maxiter = 10 * sum(int(np.prod(core.get_aval(v).shape)) for v in tree_leaves(b))
    matvec = _operator(fname, "A", A)
    precond = (lambda x: x) if M is None else _operator(fname, "M", M)

    def run(op: Callable[[Any], Any], rhs: Any) -> Any:
        return method(op, rhs, x0, tol, atol, maxiter, precond, b)

    real = not any(_complex(v) for v in tree_leaves(b))
    if symmetric and real:
        x = lax.custom_linear_solve(matvec, b, run, run, symmetric=True)
    else:
        x = lax.custom_linear_solve(matvec, b, run, transpose_solve=run)
    return x, None


def _cg(A: Any, b: Any, x0: Any, tol: float, atol: float, maxiter: int, M: Any, _b0: Any) -> Any:
    atol2 = fnp.maximum(tol**2 * _dot_real(b, b), atol**2)
    r0 = _sub(b, A(x0))
    p0 = M(r0)
    dtype = fnp.result_type(*tree_leaves(p0))
    gamma0 = _dot_real(r0, p0).astype(dtype)

    def more(state: Any) -> Any:
        _, r, _, _, k = state
        return (_dot_real(r, r) > atol2) & (k < maxiter)

    def step(state: Any) -> Any:
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / _dot_real(p, Ap).astype(dtype)
        x = _axpy(alpha, p, x)
        r = _axpy(-alpha, Ap, r)
        z = M(r)
        gamma_next = _dot_real(r, z).astype(dtype)
        p = _axpy(gamma_next / gamma, p, z)
        return x, r, gamma_next, p, k + 1

    return lax.while_loop(more, step, (x0, r0, gamma0, p0, 0))[0]


def _bicgstab(
    A: Any, b: Any, x0: Any, tol: float, atol: float, maxiter: int, M: Any, _b0: Any
) -> Any:
    atol2 = fnp.maximum(tol**2 * _dot_real(b, b), atol**2)
    r0 = _sub(b, A(x0))
    one = fnp.ones((), fnp.result_type(*tree_leaves(b)))

    def more(state: Any) -> Any:
        _, r, *_, k = state
        return (_dot_real(r, r) > atol2) & (k < maxiter) & (k >= 0)  # k < 0: breakdown

    def step(state: Any) -> Any:
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_next = _dot(rhat, r)
        beta = rho_next / rho * alpha / omega
        p = _axpy(beta, _axpy(-omega, q, p), r)
        phat = M(p)
        q = A(phat)
        alpha = rho_next / _dot(rhat, q)
        s = _axpy(-alpha, q, r)
        done = _dot_real(s, s) < atol2  # s small enough: skip the stabilising half
        shat = M(s)
        t = A(shat)
        omega = _dot(t, s) / _dot(t, t)
        x_half = _axpy(alpha, phat, x)
        x = tree_map(lambda a, c: fnp.where(done, a, c), x_half, _axpy(omega, shat, x_half))
        r = tree_map(lambda a, c: fnp.where(done, a, c), s, _axpy(-omega, t, s))
        k = fnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = fnp.where(rho_next == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_next, p, q, k

    init = (x0, r0, r0, one, one, one, r0, r0, 0)
    return lax.while_loop(more, step, init)[0]


def cg(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: float = 1e-5,
    atol: float = 0.0,
    maxiter: int | None = None,
    M: Any = None,
) -> tuple[Any, None]:
    """``(x, None)`` with ``A x = b`` by conjugate gradients, for a symmetric (Hermitian)
    positive definite ``A`` (``jax.scipy.sparse.linalg.cg``; see the module).

    >>> import numpy as np
    >>> x, _ = cg(lambda v: 2.0 * v, np.array([2.0, 4.0]))
    >>> np.asarray(x)
    array([1., 2.])
    """
    return _solve("cg", _cg, A, b, x0, tol, atol, maxiter, M, symmetric=True)


def bicgstab(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: float = 1e-5,
    atol: float = 0.0,
    maxiter: int | None = None,
    M: Any = None,
) -> tuple[Any, None]:
    """``(x, None)`` with ``A x = b`` by the stabilised biconjugate gradient method, for
    a general (nonsymmetric) ``A`` (``jax.scipy.sparse.linalg.bicgstab``; see the
    module). Its iteration stops early at a breakdown (a zero inner product).

    >>> import numpy as np
    >>> A = np.array([[3.0, 1.0], [0.5, 2.0]])
    >>> x, _ = bicgstab(A, np.array([1.0, 1.0]))
    >>> np.allclose(A @ np.asarray(x), 1.0)
    True
    """
    return _solve("bicgstab", _bicgstab, A, b, x0, tol, atol, maxiter, M, symmetric=False)


# -- GMRES ----------------------------------------------------------------------------


def _normalize(x: Any, thresh: Any = None) -> tuple[Any, Any]:
    """``(x / |x|, |x|)``, or ``(0, 0)`` when ``|x| <= thresh`` (default: the dtype's eps)."""
    norm = fnp.sqrt(_dot_real(x, x))
    if thresh is None:
        thresh = float(np.finfo(core.get_aval(norm).dtype).eps)
    use = norm > thresh
    safe = fnp.where(use, norm, 1.0).astype(core.get_aval(x).dtype)  # (no 0 / 0)
    unit = fnp.where(use, x / safe, 0.0)
    return unit.astype(core.get_aval(x).dtype), fnp.where(use, norm, 0.0)


def _orthogonalize(Q: Any, x: Any, xnorm: Any) -> tuple[Any, Any]:
    """``x`` made orthogonal to the columns of ``Q`` by classical Gram-Schmidt, repeated
    once more unless the overlaps ``r`` are already small (``|r| >= |q| / sqrt 2``)."""
    root2 = float(np.sqrt(2.0))

    def once(carry: Any) -> Any:
        k, q, r, qnorm_scaled = carry
        h = fnp.matmul(fnp.conj(Q).T, q)
        q = q - fnp.matmul(Q, h)
        r = r + h
        qnorm_scaled = fnp.where(k < 1, _normalize(q)[1] / root2, qnorm_scaled)
        return k + 1, q, r, qnorm_scaled

    def again(carry: Any) -> Any:
        k, _, r, qnorm_scaled = carry
        return (k < 1) & (_normalize(r)[1] < qnorm_scaled)

    r0 = fnp.zeros(core.get_aval(Q).shape[-1], core.get_aval(Q).dtype)
    carry = once((0, x, r0, xnorm / root2))
    _, q, r, _ = lax.while_loop(again, once, carry)
    return q, r


def _arnoldi(k: Any, A: Any, M: Any, V: Any, H: Any) -> tuple[Any, Any, Any]:
    """Step ``k`` of Arnoldi: column ``k + 1`` of ``V`` and row ``k`` of ``H``."""
    dtype = core.get_aval(V).dtype
    v = M(A(V[:, k]))
    _, norm0 = _normalize(v)
    v, h = _orthogonalize(V, v, norm0)
    unit, norm1 = _normalize(v, thresh=float(np.finfo(dtype).eps) * norm0)
    V = V.at[:, k + 1].set(unit)
    H = H.at[k, :].set(h.at[k + 1].set(norm1.astype(dtype)))
    return V, H, norm1 == 0.0


def _rotate(H: Any, i: Any, cs: Any, sn: Any) -> Any:
    x, y = H[i], H[i + 1]
    H = H.at[i].set(fnp.conj(cs) * x - fnp.conj(sn) * y)
    return H.at[i + 1].set(sn * x + cs * y)


def _givens(a: Any, b: Any) -> tuple[Any, Any]:
    b_zero = fnp.abs(b) == 0
    a_lt_b = fnp.abs(a) < fnp.abs(b)
    t = -fnp.where(a_lt_b, a, b) / fnp.where(a_lt_b, b, fnp.where(b_zero, 1.0, a))
    r = (1.0 / fnp.sqrt(1 + fnp.abs(t) ** 2)).astype(core.get_aval(t).dtype)
    cs = fnp.where(b_zero, 1, fnp.where(a_lt_b, r * t, r))
    sn = fnp.where(b_zero, 0, fnp.where(a_lt_b, r, r * t))
    return cs, sn


def _restart_batched(
    A: Any, b: Any, x0: Any, unit: Any, norm: Any, ptol: Any, restart: int, M: Any
) -> tuple[Any, Any, Any]:
    """One restart: ``restart`` Arnoldi steps (fewer at a breakdown), then the
    least-squares solution in the Krylov space by normal equations (JAX's
    ``solve_method='batched'``; ``ptol`` is not used: every step runs)."""

    dtype = core.get_aval(b).dtype
    V = fnp.pad(unit[:, None], ((0, 0), (0, restart)))
    H = fnp.eye(restart, restart + 1, dtype=dtype)

    def more(carry: Any) -> Any:
        _, _, breakdown, k = carry
        return (k < restart) & fnp.logical_not(breakdown)

    def step(carry: Any) -> Any:
        V, H, _, k = carry
        V, H, breakdown = _arnoldi(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(more, step, (V, H, fnp.asarray(False), 0))
    beta = fnp.zeros(restart + 1, dtype).at[0].set(norm.astype(dtype))
    a = H.T
    y = solve(fnp.matmul(fnp.conj(a).T, a), fnp.matmul(fnp.conj(a).T, beta), assume_a="pos")
    x = x0 + fnp.matmul(V[:, :-1], y)
    unit, norm = _normalize(M(b - A(x)))
    return x, unit, norm


def _restart_incremental(
    A: Any, b: Any, x0: Any, unit: Any, norm: Any, ptol: Any, restart: int, M: Any
) -> tuple[Any, Any, Any]:
    """One restart that updates a QR factorisation by Givens rotations as Arnoldi goes,
    and stops once the estimated residual is below ``ptol`` (``'incremental'``)."""

    dtype = core.get_aval(b).dtype
    V = fnp.pad(unit[:, None], ((0, 0), (0, restart)))
    R = fnp.eye(restart, restart + 1, dtype=dtype)
    rotations = fnp.zeros((restart, 2), dtype)
    beta = fnp.zeros(restart + 1, dtype).at[0].set(norm.astype(dtype))

    def more(carry: Any) -> Any:
        k, err, *_ = carry
        return (k < restart) & (err > ptol)

    def step(carry: Any) -> Any:
        k, _, V, R, beta, rotations = carry
        V, H, _ = _arnoldi(k, A, M, V, R)
        row = lax.fori_loop(
            0, k, lambda i, h: _rotate(h, i, rotations[i, 0], rotations[i, 1]), H[k, :]
        )
        cs, sn = _givens(row[k], row[k + 1])
        rotations = rotations.at[k, :].set(fnp.stack([cs, sn]))
        R = R.at[k, :].set(_rotate(row, k, cs, sn))
        beta = _rotate(beta, k, cs, sn)
        return k + 1, fnp.abs(beta[k + 1]), V, R, beta, rotations

    carry = lax.while_loop(more, step, (0, norm, V, R, beta, rotations))
    _, _, V, R, beta, _ = carry
    y = solve_triangular(R[:, :-1].T, beta[:-1])
    x = x0 + fnp.matmul(V[:, :-1], y)
    unit, norm = _normalize(M(b - A(x)))
    return x, unit, norm


def gmres(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: float = 1e-5,
    atol: float = 0.0,
    restart: int = 20,
    maxiter: int | None = None,
    M: Any = None,
    solve_method: str = "batched",
) -> tuple[Any, Any]:
    """``(x, info)`` with ``A x = b`` by restarted GMRES, for a general ``A``
    (``jax.scipy.sparse.linalg.gmres``; see the module).

    Each restart builds a Krylov space of ``restart`` vectors (at most the size of
    ``b``) and takes the least-squares solution in it, by normal equations
    (``solve_method='batched'``, the default) or by Givens rotations that stop as soon
    as the residual estimate is small enough (``'incremental'``); restarts stop once
    ``|M (b - A x)| <= max(tol |b|, atol)`` or after ``maxiter`` of them. ``M`` is a
    left preconditioner. ``info`` is -1 when the solution holds NaN, else 0 (as JAX).

    >>> import numpy as np
    >>> A = np.array([[3.0, 1.0], [0.5, 2.0]])
    >>> x, info = gmres(A, np.array([1.0, 1.0]))
    >>> np.allclose(A @ np.asarray(x), 1.0), int(info)
    (True, 0)
    """
    if solve_method not in ("batched", "incremental"):
        raise ValueError(
            f"gmres: expected solve_method 'batched' or 'incremental', got {solve_method!r}."
        )
    if not isinstance(restart, (int, np.integer)) or restart < 1:
        raise ValueError(f"gmres: expected restart to be a whole number >= 1, got {restart!r}.")
    one_restart = _restart_batched if solve_method == "batched" else _restart_incremental

    def method(
        A: Any, rhs: Any, x0: Any, tol: float, atol: float, maxiter: int, M: Any, b0: Any
    ) -> Any:
        flat_b0, unravel = ravel_pytree(b0)

        def flat(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
            return lambda v: ravel_pytree(f(unravel(v)))[0]

        A_, M_ = flat(A), flat(M)
        size = core.get_aval(flat_b0).shape[0]
        b0_norm = fnp.sqrt(_dot_real(flat_b0, flat_b0))
        atol_ = fnp.maximum(tol * b0_norm, atol)  # (both from the b of the call, as JAX)
        ptol = fnp.sqrt(_dot_real(M_(flat_b0), M_(flat_b0))) * fnp.minimum(1.0, atol_ / b0_norm)
        n_restart = min(restart, size)
        b_ = ravel_pytree(rhs)[0]
        x = ravel_pytree(x0)[0]
        unit, norm = _normalize(M_(b_ - A_(x)))

        def more(carry: Any) -> Any:
            _, k, _, norm = carry
            return (k < maxiter) & (norm > atol_)

        def step(carry: Any) -> Any:
            x, k, unit, norm = carry
            x, unit, norm = one_restart(A_, b_, x, unit, norm, ptol, n_restart, M_)
            return x, k + 1, unit, norm

        x = lax.while_loop(more, step, (x, 0, unit, norm))[0]
        return unravel(x)

    x, _ = _solve("gmres", method, A, b, x0, tol, atol, maxiter, M, symmetric=False)
    failed = fnp.isnan(fnp.sqrt(_dot_real(x, x)))
    return x, fnp.where(failed, -1, 0)
