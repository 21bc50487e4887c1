"""``jax.ops`` segment reductions, run under JAX and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/ops_jax.npz`` was recorded, ``functrace`` in tests/test_ops_segments.py:
sums, products, maxima and minima over unsorted, repeated and out-of-range ids
(negative too), empty segments (each reduction's identity, integers too), rows of a
matrix, ``mode="clip"``, gradients (ties among maxima; not of ``segment_prod``, which
JAX differentiates with unique ids only), and the same under ``jit`` and ``vmap``.
Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng(11)
DATA = _rng.standard_normal(8)
ROWS = _rng.standard_normal((8, 3))
IDS = np.array([2, 0, 2, 5, 1, 0, 2, 4])
WILD = np.array([2, -1, 0, 7, 1, 0, 3, -3])  # out of range on both sides
TIES = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 0.5, 1.0, 1.0])


def cases(lib: Any) -> dict[str, np.ndarray]:
    ops, jnp = lib.ops, lib.numpy
    out: dict[str, Any] = {}
    for name in ("segment_sum", "segment_prod", "segment_max", "segment_min"):
        f = getattr(ops, name)
        out[f"{name}/known_ids"] = f(DATA, IDS)
        out[f"{name}/num_segments"] = f(DATA, IDS, 7)
        out[f"{name}/out_of_range"] = f(DATA, WILD, 4)
        out[f"{name}/clip"] = f(DATA, WILD, 4, mode="clip")
        out[f"{name}/rows"] = f(ROWS, IDS, 6)
        out[f"{name}/ints"] = f(np.arange(8, dtype=np.int32) - 3, IDS, 7)
        out[f"{name}/jit"] = lib.jit(f, static_argnums=2)(DATA, IDS, 6)
        out[f"{name}/vmap"] = lib.vmap(lambda d, f=f: f(d, IDS, 6))(ROWS.T)
        if name == "segment_prod":  # (JAX differentiates it with unique ids only)
            continue
        out[f"{name}/grad"] = lib.grad(lambda d, f=f: jnp.sum(f(d, IDS, 6) * jnp.arange(6.0)))(
            TIES if name in ("segment_max", "segment_min") else DATA
        )
    out["segment_sum/sorted_hints"] = ops.segment_sum(
        DATA, np.sort(IDS), 6, indices_are_sorted=True, unique_indices=False
    )
    out["segment_sum/vmap_ids"] = lib.vmap(lambda i: ops.segment_sum(DATA, i, 6))(
        np.stack([IDS, np.roll(IDS, 3)])
    )
    return {k: np.asarray(v) for k, v in out.items()}
