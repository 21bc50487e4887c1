"""``jax.nn.initializers`` on fixed keys and shapes, run under JAX and under functrace.

``cases(jax)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/nn_init_jax.npz`` was recorded, ``functrace`` (whose
``nn.initializers`` is that namespace) in tests/test_nn_layers.py. Every entry is the
initializer's output for ``PRNGKey(seed)`` with ``seed`` the case's position in the
list. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")
NAMED = (
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "lecun_normal",
    "lecun_uniform",
    "xavier_normal",
    "xavier_uniform",
    "kaiming_normal",
    "kaiming_uniform",
)


def specs(jax: Any) -> list[tuple[str, Any, tuple[int, ...], Any]]:
    """``(name, init, shape, dtype)`` for every case."""
    init = jax.nn.initializers
    f64, f32 = np.float64, np.float32
    out: list[tuple[str, Any, tuple[int, ...], Any]] = []
    for mode in MODES:
        for dist in DISTRIBUTIONS:
            vs = init.variance_scaling(1.5, mode, dist)
            out.append((f"variance_scaling/{mode}/{dist}", vs, (4, 3, 5), f64))
            out.append((f"variance_scaling/{mode}/{dist}/f32", vs, (6, 2), f32))
    for dist in DISTRIBUTIONS:
        vs = init.variance_scaling(2.0, "fan_avg", dist, in_axis=0, out_axis=(1, 2))
        out.append((f"variance_scaling/axes/{dist}", vs, (3, 2, 4), f64))
        vs = init.variance_scaling(0.5, "fan_in", dist, batch_axis=0)
        out.append((f"variance_scaling/batch_axis/{dist}", vs, (2, 3, 4), f64))
    for name in NAMED:
        out.append((name, getattr(init, name)(), (5, 4), f64))
        out.append((f"{name}/conv", getattr(init, name)(), (3, 3, 2, 4), f64))
    out += [
        ("uniform", init.uniform(0.5), (3, 4), f64),
        ("normal", init.normal(2.0), (3, 4), f64),
        ("normal/f32", init.normal(2.0), (7,), f32),
        ("truncated_normal", init.truncated_normal(0.3, lower=-1.0, upper=1.5), (3, 4), f64),
        ("constant", init.constant(3.0), (2, 3), f64),
        ("orthogonal/tall", init.orthogonal(), (5, 3), f64),
        ("orthogonal/wide", init.orthogonal(), (3, 5), f64),
        ("orthogonal/square/f32", init.orthogonal(), (4, 4), f32),
        ("orthogonal/axis0", init.orthogonal(column_axis=0), (2, 3, 4), f64),
        ("orthogonal/axis1_scale", init.orthogonal(2.0, column_axis=1), (3, 4, 2), f64),
        ("orthogonal/3d", init.orthogonal(0.5), (2, 2, 3), f64),
        ("delta_orthogonal/1d", init.delta_orthogonal(), (3, 2, 4), f64),
        ("delta_orthogonal/2d", init.delta_orthogonal(1.5), (3, 2, 3, 3), f64),
        ("delta_orthogonal/3d", init.delta_orthogonal(), (2, 3, 1, 2, 3), f64),
    ]
    c128, c64 = np.complex128, np.complex64
    for dist in DISTRIBUTIONS:
        vs = init.variance_scaling(1.5, "fan_avg", dist)
        out.append((f"variance_scaling/fan_avg/{dist}/c128", vs, (4, 3), c128))
        out.append((f"variance_scaling/fan_avg/{dist}/c64", vs, (2, 3, 2), c64))
    out += [
        ("he_uniform/c128", init.he_uniform(), (3, 4), c128),
        ("normal/c128", init.normal(0.7), (5,), c128),
        ("orthogonal/tall/c128", init.orthogonal(), (4, 3), c128),
        ("orthogonal/wide/c64", init.orthogonal(1.5), (2, 3), c64),
        ("delta_orthogonal/1d/c128", init.delta_orthogonal(), (3, 2, 2), c128),
    ]
    return out


def cases(jax: Any) -> dict[str, np.ndarray]:
    out = {}
    for seed, (name, init, shape, dtype) in enumerate(specs(jax)):
        out[name] = np.asarray(init(jax.random.PRNGKey(seed), shape, dtype))
    return out
