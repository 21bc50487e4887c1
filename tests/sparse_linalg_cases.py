"""``jax.scipy.sparse.linalg`` cases (``cg``, ``bicgstab``, ``gmres``), run under JAX and
functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``, and
``jax.scipy.sparse.linalg`` imported) when ``tests/fixtures/sparse_linalg_jax.npz`` was
recorded, ``functrace`` in tests/test_sparse_linalg.py. Converged solves, solves cut
short by ``maxiter`` (the iterations themselves), a preconditioner, an ``x0``, a pytree
``b`` with a function operator, a complex Hermitian system, and gradients through the
implicit rule; for ``gmres`` both solve methods, with short restarts. Nothing here
imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(0)
_Q = _rng.standard_normal((6, 6))
SPD = _Q @ _Q.T + 6 * np.eye(6)
NONSYM = _rng.standard_normal((6, 6)) + 5 * np.eye(6)
B = _rng.standard_normal(6)
HERM = SPD + 1j * (_Q - _Q.T)
BC = B + 1j * _rng.standard_normal(6)
X0 = np.linspace(-0.2, 0.2, 6)


def cases(lib: Any) -> dict[str, np.ndarray]:
    sl, fnp = lib.scipy.sparse.linalg, lib.numpy
    out: dict[str, Any] = {}
    for name, solve, A in (("cg", sl.cg, SPD), ("bicgstab", sl.bicgstab, NONSYM)):
        out[f"{name}/converged"] = solve(A, B)[0]
        out[f"{name}/tight"] = solve(A, B, tol=1e-12)[0]
        for k in (1, 2, 3):
            out[f"{name}/maxiter{k}"] = solve(A, B, maxiter=k)[0]
        out[f"{name}/x0_atol"] = solve(A, B, x0=X0, tol=0.0, atol=1e-3)[0]
        out[f"{name}/jacobi"] = solve(lambda v, A=A: fnp.asarray(A) @ v, B,
                                      M=np.diag(1 / np.diag(A)), maxiter=3)[0]  # fmt: skip
        out[f"{name}/jit"] = lib.jit(lambda A, b, solve=solve: solve(A, b)[0])(A, B)

        def loss(A: Any, b: Any, solve: Any = solve) -> Any:
            x = solve(A, b, tol=1e-12)[0]
            return fnp.sum(x**2) + fnp.sum(fnp.sin(x))

        gA, gb = lib.grad(loss, argnums=(0, 1))(A, B)
        out[f"{name}/grad_A"], out[f"{name}/grad_b"] = gA, gb
        out[f"{name}/complex"] = solve(HERM, BC, tol=1e-12)[0]

    for method in ("batched", "incremental"):
        name = f"gmres_{method}"

        def gm(*a: Any, method: str = method, **kw: Any) -> Any:
            return sl.gmres(*a, solve_method=method, **kw)

        out[f"{name}/converged"], out[f"{name}/info"] = gm(NONSYM, B)
        out[f"{name}/restart3"] = gm(NONSYM, B, restart=3)[0]
        out[f"{name}/restart3_maxiter1"] = gm(NONSYM, B, restart=3, maxiter=1)[0]
        out[f"{name}/jacobi"] = gm(NONSYM, B, M=np.diag(1 / np.diag(NONSYM)), restart=2,
                                   maxiter=2)[0]  # fmt: skip
        out[f"{name}/x0"] = gm(NONSYM, B, x0=X0, restart=2, maxiter=1)[0]
        out[f"{name}/jit"] = lib.jit(lambda A, b, gm=gm: gm(A, b, restart=3)[0])(NONSYM, B)

        def gm_loss(A: Any, b: Any, gm: Any = gm) -> Any:
            x = gm(A, b, tol=1e-12)[0]
            return fnp.sum(x**2) + fnp.sum(fnp.sin(x))

        out[f"{name}/grad_A"], out[f"{name}/grad_b"] = lib.grad(gm_loss, argnums=(0, 1))(NONSYM, B)
        out[f"{name}/complex"] = gm(HERM, BC, tol=1e-12)[0]

    def op(t: Any) -> Any:
        w = fnp.asarray(SPD) @ fnp.concatenate([t["u"], fnp.ravel(t["v"])])
        return {"u": w[:3], "v": fnp.reshape(w[3:], (3, 1))}

    tree = sl.cg(op, {"u": B[:3], "v": B[3:].reshape(3, 1)}, tol=1e-12)[0]
    out["cg/tree_u"], out["cg/tree_v"] = tree["u"], tree["v"]
    return {k: np.asarray(v) for k, v in out.items()}
