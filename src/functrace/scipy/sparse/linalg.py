"""Krylov solvers of ``A x = b`` (``jax.scipy.sparse.linalg``): ``cg`` and ``bicgstab``.

``A`` is a function of a pytree ``x`` like ``b`` (a linear operator) or a square 2-d
array; ``b`` (and ``x0``) are pytrees of arrays, treated as one vector. Both run JAX's
iterations (those of SciPy's current tolerance rule): they stop once
``|r|^2 <= max(tol^2 |b|^2, atol^2)`` or after ``maxiter`` steps (default ``10 *
size(b)``), in a ``lax.while_loop``; ``M`` is a preconditioner, a function or matrix
approximating ``A^-1``. As in JAX the second result, SciPy's convergence ``info``, is
always None: check the residual yourself if you need to know.

Derivatives are implicit (``lax.custom_linear_solve``): they solve the same system
again (forward mode) or its transpose (reverse mode) instead of differentiating the
iterations, so a gradient costs one more solve. ``cg`` takes real ``A`` to be
symmetric (its transpose solve is itself, as in JAX); ``bicgstab`` solves the transposed
system with the transposed operator.

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
from functrace.tree_util import tree_leaves, tree_map, tree_structure

__all__ = ["bicgstab", "cg"]


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
        return method(op, rhs, x0, tol, atol, maxiter, precond)

    real = not any(_complex(v) for v in tree_leaves(b))
    if symmetric and real:
        x = lax.custom_linear_solve(matvec, b, run, run, symmetric=True)
    else:
        x = lax.custom_linear_solve(matvec, b, run, transpose_solve=run)
    return x, None


def _cg(A: Any, b: Any, x0: Any, tol: float, atol: float, maxiter: int, M: Any) -> Any:
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


def _bicgstab(A: Any, b: Any, x0: Any, tol: float, atol: float, maxiter: int, M: Any) -> Any:
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
