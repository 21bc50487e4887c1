"""``scipy.special.sph_harm_y`` run under JAX and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/sph_harm_jax.npz`` was recorded, ``functrace`` in
tests/test_sph_harm.py: every order of degrees up to 6 at points over the sphere
(poles included), one ``theta`` for all entries, ``n_max`` clipping larger degrees,
under ``jit`` and ``vmap``, and gradients of a real loss in ``theta`` and
``phi``. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

N = np.array([n for n in range(7) for _ in range(-n, n + 1)])
M = np.array([m for n in range(7) for m in range(-n, n + 1)])
_rng = np.random.default_rng(4)
THETA = _rng.uniform(0.05, np.pi - 0.05, N.size)
PHI = _rng.uniform(0.0, 2 * np.pi, N.size)


def cases(lib: Any) -> dict[str, np.ndarray]:
    jnp, sph = lib.numpy, lib.scipy.special.sph_harm_y
    out: dict[str, Any] = {}
    out["grid"] = sph(N, M, THETA, PHI)
    out["poles"] = sph(
        N[:9], M[:9], np.array([0.0, np.pi, 0.0, np.pi, 0.0, np.pi, 0.0, np.pi, 0.0]), PHI[:9]
    )
    out["one_theta"] = sph(N, M, np.array([0.7]), PHI)
    out["n_max_clips"] = sph(np.array([2, 5]), np.array([1, -2]), THETA[:2], PHI[:2], n_max=3)
    out["jit"] = lib.jit(lambda t, p: sph(N, M, t, p, n_max=6))(THETA, PHI)
    batch = np.stack([THETA[:9], THETA[9:18]])
    out["vmap"] = lib.vmap(lambda t: sph(N[:9], M[:9], t, PHI[:9], n_max=2))(batch)

    def loss(t, p):
        y = sph(N[:16], M[:16], t, p, n_max=3)
        return jnp.sum(jnp.real(y) ** 2 + 0.5 * jnp.imag(y))

    out["grad_theta"], out["grad_phi"] = lib.grad(loss, argnums=(0, 1))(THETA[:16], PHI[:16])
    return {k: np.asarray(v) for k, v in out.items()}
