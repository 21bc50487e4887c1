"""The layer cases of ``tests/fixtures/nn_layers_torch.npz`` (recorded from PyTorch
2.13 on CPU) and of ``tests/test_nn_layers.py``. Nothing here imports PyTorch.

Each case names a layer class (the same name in ``torch.nn`` and ``functrace.nn``),
its constructor arguments and the input shape. For every case and dtype the fixture
holds, under ``<case>/<dtype>/``: ``x`` (the input), ``param/<name>`` (the module's
parameters, set to random values so that the affine parts matter), ``y`` (the output),
and the gradients of ``sum(y * cot(y.shape))`` with respect to ``x`` (``grad_x``) and
each parameter (``grad/<name>``). Batch-norm cases, run in training mode, also hold
``y2`` (a second training step on ``x2``), the running statistics after those two
steps (``running_mean``, ``running_var``, ``num_batches_tracked``) and ``y_eval``,
the output in evaluation mode on ``x``. Embedding cases have integer ``x``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

CASES: dict[str, tuple[str, dict[str, Any], tuple[int, ...]]] = {
    "layer_norm": ("LayerNorm", {"normalized_shape": (3, 4)}, (2, 3, 4)),
    "layer_norm_eps": ("LayerNorm", {"normalized_shape": 4, "eps": 1e-2}, (3, 4)),
    "layer_norm_no_affine": (
        "LayerNorm",
        {"normalized_shape": 4, "elementwise_affine": False},
        (2, 4),
    ),
    "layer_norm_no_bias": ("LayerNorm", {"normalized_shape": 5, "bias": False}, (5,)),
    "rms_norm": ("RMSNorm", {"normalized_shape": (2, 3)}, (4, 2, 3)),
    "rms_norm_eps": ("RMSNorm", {"normalized_shape": 4, "eps": 1e-2}, (3, 4)),
    "rms_norm_no_affine": ("RMSNorm", {"normalized_shape": 4, "elementwise_affine": False}, (4,)),
    "group_norm": ("GroupNorm", {"num_groups": 2, "num_channels": 4}, (2, 4, 3)),
    "group_norm_2d": ("GroupNorm", {"num_groups": 3, "num_channels": 6, "eps": 1e-3}, (2, 6, 2, 2)),
    "group_norm_no_affine": (
        "GroupNorm",
        {"num_groups": 1, "num_channels": 3, "affine": False},
        (3, 3),
    ),
    "batch_norm1d": ("BatchNorm1d", {"num_features": 3}, (5, 3)),
    "batch_norm1d_seq": ("BatchNorm1d", {"num_features": 2, "momentum": 0.3}, (3, 2, 4)),
    "batch_norm1d_cumulative": ("BatchNorm1d", {"num_features": 3, "momentum": None}, (4, 3)),
    "batch_norm2d": ("BatchNorm2d", {"num_features": 2, "eps": 1e-3}, (2, 2, 3, 3)),
    "batch_norm2d_no_affine": ("BatchNorm2d", {"num_features": 3, "affine": False}, (2, 3, 2, 2)),
    "embedding": ("Embedding", {"num_embeddings": 6, "embedding_dim": 3}, (2, 5)),
    "embedding_padding": (
        "Embedding",
        {"num_embeddings": 5, "embedding_dim": 4, "padding_idx": 1},
        (7,),
    ),
    "embedding_padding_neg": (
        "Embedding",
        {"num_embeddings": 4, "embedding_dim": 2, "padding_idx": -1},
        (3, 2),
    ),
    "flatten": ("Flatten", {}, (2, 3, 4)),
    "flatten_dims": ("Flatten", {"start_dim": 0, "end_dim": 1}, (2, 3, 4)),
    "unflatten": ("Unflatten", {"dim": 1, "unflattened_size": (2, -1)}, (3, 6)),
    "identity": ("Identity", {}, (2, 3)),
}

DTYPES = ("float32", "float64")


def is_batch_norm(case: str) -> bool:
    return CASES[case][0].startswith("BatchNorm")


def inputs(case: str, dtype: str) -> dict[str, np.ndarray]:
    """The inputs of a case: ``x`` (and ``x2`` for batch norm), from a fixed seed."""
    cls, kwargs, shape = CASES[case]
    rng = np.random.default_rng(sorted(CASES).index(case))
    if cls == "Embedding":
        ids = rng.integers(0, kwargs["num_embeddings"], size=shape)
        ids.flat[0] = kwargs.get("padding_idx", 0) % kwargs["num_embeddings"]
        return {"x": ids.astype(np.int64)}
    out = {"x": (rng.normal(size=shape) * 2 + 0.5).astype(dtype)}
    if is_batch_norm(case):
        out["x2"] = (rng.normal(size=shape) - 1.0).astype(dtype)
    return out


def param_value(case: str, name: str, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """The value a case's parameter is set to before recording (and when loading)."""
    rng = np.random.default_rng([sorted(CASES).index(case), len(name)])
    base = 1.0 if name == "weight" and CASES[case][0] != "Embedding" else 0.0
    return (base + 0.5 * rng.normal(size=shape)).astype(dtype)


def cotangent(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """The fixed weights of the scalar loss ``sum(y * cotangent)``."""
    n = int(np.prod(shape))
    return np.cos(np.arange(n) * 0.7 + 0.3).reshape(shape).astype(dtype)
