"""``experimental.jet.jet`` run under JAX and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/jet_jax.npz`` was recorded, ``functrace`` in tests/test_jet.py:
elementwise functions to order 4, a product of two arguments, a small network on a
vector, a reduction, float32, and ``jit`` and ``vmap`` around
``jet``. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(8)
X = _rng.standard_normal(3)
W = _rng.standard_normal((3, 3))
S1, S2, S3 = (_rng.standard_normal(3) for _ in range(3))


def cases(lib: Any) -> dict[str, np.ndarray]:
    jnp = lib.numpy
    jet = lib.experimental.jet.jet
    out: dict[str, Any] = {}

    def put(name, res):
        y0, ys = res
        out[f"{name}/primal"] = y0
        for k, y in enumerate(ys, 1):
            out[f"{name}/{k}"] = y

    put("sin", jet(jnp.sin, (0.5,), ((1.0, 0.3, -0.2, 0.7),)))
    put("exp_log", jet(lambda x: jnp.exp(x) * jnp.log(x), (1.5,), ((1.0, 2.0, 0.5),)))
    put("product", jet(lambda x, y: x * y / (1 + y * y), (2.0, 3.0), ((1.0, 0.5), (0.0, 1.0))))
    put("network", jet(lambda x: jnp.tanh(W @ jnp.tanh(W @ x)), (X,), ((S1, S2, S3),)))
    put("reduction", jet(lambda x: jnp.sum(x**3) / jnp.sum(x * x), (X,), ((S1, S2),)))
    put("float32", jet(jnp.cos, (np.float32(0.3),), ((np.float32(1.0), np.float32(0.5)),)))
    put("jit", lib.jit(lambda x, a, b: jet(lambda v: jnp.sinh(v) ** 2, (x,), ((a, b),)))(X, S1, S2))
    put("vmap", lib.vmap(lambda x, a: jet(lambda v: jnp.log1p(v * v), (x,), ((a, a),)))(X, S1))
    return {k: np.asarray(v) for k, v in out.items()}
