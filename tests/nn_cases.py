"""jax.nn functions on fixed inputs, run under JAX and under functrace.

``cases(jax)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``) when
``tests/fixtures/nn_jax.npz`` was recorded, ``functrace`` in tests/test_nn_functions.py.
Values and gradients at ties (0, +-1, 6) included, where the derivative conventions
of ``relu``, ``relu6``, ``hard_tanh``, ``leaky_relu`` show. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

X = np.array([-7.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0, 8.0])
X2 = np.array([[0.3, -1.2, 2.0, 0.7], [-0.4, 0.0, 1.5, -2.2], [1.0, 1.0, -0.3, 0.9]])
UNARY = [
    "relu",
    "sigmoid",
    "gelu",
    "softplus",
    "log_sigmoid",
    "silu",
    "swish",
    "leaky_relu",
    "elu",
    "celu",
    "selu",
    "relu6",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "soft_sign",
    "squareplus",
    "sparse_plus",
    "mish",
    "tanh",
]


def cases(jax: Any) -> dict[str, np.ndarray]:
    nn = jax.nn
    out = {}
    for n in UNARY:
        f = getattr(nn, n)
        out[f"{n}/value"] = np.asarray(f(X))
        out[f"{n}/grad"] = np.asarray(jax.grad(lambda x, f=f: f(x).sum())(X))
    out["gelu_exact/value"] = np.asarray(nn.gelu(X, approximate=False))
    out["gelu_exact/grad"] = np.asarray(jax.grad(lambda x: nn.gelu(x, approximate=False).sum())(X))
    out["leaky_relu_slope/value"] = np.asarray(nn.leaky_relu(X, 0.2))
    out["elu_alpha/value"] = np.asarray(nn.elu(X, 0.5))
    out["celu_alpha/value"] = np.asarray(nn.celu(X, 0.5))
    for n in ["glu", "standardize", "softmax", "log_softmax"]:
        f = getattr(nn, n)
        out[f"{n}/value"] = np.asarray(f(X2))
        w = np.arange(np.size(f(X2))).reshape(np.shape(f(X2)))
        out[f"{n}/grad"] = np.asarray(jax.grad(lambda x, f=f, w=w: (f(x) * w).sum())(X2))
    out["standardize_axis0/value"] = np.asarray(nn.standardize(X2, axis=0))
    mask = np.arange(np.size(X2)).reshape(np.shape(X2)) % 3 != 1
    out["standardize_where/value"] = np.asarray(nn.standardize(X2, where=mask))
    out["standardize_where/grad"] = np.asarray(
        jax.grad(lambda x: (nn.standardize(x, where=mask) ** 3).sum())(X2)
    )
    out["standardize_stable/value"] = np.asarray(nn.standardize(X2, axis=0, algorithm="stable"))
    out["logsumexp/value"] = np.asarray(nn.logsumexp(X2, axis=1))
    out["logsumexp/grad"] = np.asarray(jax.grad(lambda x: nn.logsumexp(x, axis=1).sum())(X2))
    labels = np.array([0, 2, 1, 3, -1])
    out["one_hot/value"] = np.asarray(nn.one_hot(labels, 3))
    out["one_hot_axis0/value"] = np.asarray(nn.one_hot(labels, 4, axis=0))
    out["one_hot_int/value"] = np.asarray(nn.one_hot(labels, 3, dtype=np.int32))
    return out
