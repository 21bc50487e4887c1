"""``jax.lax.linalg.tridiagonal_solve`` cases, run under JAX and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``, and
``jax.lax.linalg`` imported) when ``tests/fixtures/tridiagonal_jax.npz`` was recorded,
``functrace`` in tests/test_tridiagonal.py. Random systems that are not diagonally
dominant (so rows are interchanged), a zero leading diagonal entry, sizes 1 to 6,
batches of systems, several right-hand sides, and gradients with respect to all four
arguments. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def system(m: int, batch: tuple[int, ...] = (), n: int = 2, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed + 10 * m)
    dl, d, du = rng.standard_normal((3, *batch, m))
    dl[..., 0] = 0.0
    du[..., -1] = 0.0
    return dl, d, du, rng.standard_normal((*batch, m, n))


def cases(lib: Any) -> dict[str, np.ndarray]:
    solve, fnp = lib.lax.linalg.tridiagonal_solve, lib.numpy
    out: dict[str, Any] = {}
    for m in (1, 2, 3, 6):
        out[f"m{m}"] = solve(*system(m))
    zero_pivot = system(4, seed=1)
    zero_pivot[1][0] = 0.0
    out["zero_leading_diagonal"] = solve(*zero_pivot)
    out["batched"] = solve(*system(5, batch=(2, 3), n=3))
    out["jit"] = lib.jit(solve)(*system(5, n=1))
    grads = lib.grad(lambda *a: fnp.sum(fnp.sin(solve(*a))), argnums=(0, 1, 2, 3))(*system(5))
    for name, g in zip(("dl", "d", "du", "b"), grads):
        out[f"grad_{name}"] = g
    return {k: np.asarray(v) for k, v in out.items()}
