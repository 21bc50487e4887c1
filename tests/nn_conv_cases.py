"""The pooling and convolution cases of ``tests/fixtures/nn_conv_torch.npz``
(recorded from PyTorch 2.13 on CPU) and of ``tests/test_nn_conv.py``. Nothing here
imports PyTorch.

Each case names a layer class (the same name in ``torch.nn`` and ``functrace.nn``),
its constructor arguments and the input shape. For every case and dtype the fixture
holds, under ``<case>/<dtype>/``: ``x`` (the input), ``param/<name>`` (the layer's
parameters, set to random values), ``y`` (the output), and the gradients of
``sum(y * cotangent(y.shape))`` with respect to ``x`` (``grad_x``) and each parameter
(``grad/<name>``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

CASES: dict[str, tuple[str, dict[str, Any], tuple[int, ...]]] = {
    # max pooling
    "max1d": ("MaxPool1d", {"kernel_size": 3, "stride": 2}, (2, 3, 9)),
    "max1d_unbatched": ("MaxPool1d", {"kernel_size": 2}, (3, 7)),
    "max2d": ("MaxPool2d", {"kernel_size": 2}, (2, 3, 6, 6)),
    "max2d_pad_ceil": (
        "MaxPool2d",
        {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
        (1, 2, 8, 7),
    ),
    "max2d_dilation": (
        "MaxPool2d",
        {"kernel_size": (2, 3), "stride": (1, 2), "dilation": (2, 1)},
        (2, 2, 7, 8),
    ),
    "max2d_ceil": ("MaxPool2d", {"kernel_size": 2, "stride": 2, "ceil_mode": True}, (2, 5, 5)),
    "max3d": ("MaxPool3d", {"kernel_size": 2, "stride": 1, "padding": 1}, (1, 2, 3, 4, 3)),
    # average pooling
    "avg1d_pad": ("AvgPool1d", {"kernel_size": 3, "stride": 2, "padding": 1}, (2, 2, 8)),
    "avg1d_ceil_nopad": (
        "AvgPool1d",
        {
            "kernel_size": 3,
            "stride": 2,
            "padding": 1,
            "ceil_mode": True,
            "count_include_pad": False,
        },
        (2, 2, 8),
    ),
    "avg2d": ("AvgPool2d", {"kernel_size": 2}, (2, 3, 6, 4)),
    "avg2d_ceil_pad": (
        "AvgPool2d",
        {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
        (1, 2, 6, 7),
    ),
    "avg2d_no_count_pad": (
        "AvgPool2d",
        {"kernel_size": (3, 2), "stride": (2, 1), "padding": (1, 1), "count_include_pad": False},
        (2, 2, 5, 5),
    ),
    "avg2d_divisor": (
        "AvgPool2d",
        {"kernel_size": 2, "stride": 1, "padding": 1, "divisor_override": 3},
        (2, 4, 4),
    ),
    "avg3d": (
        "AvgPool3d",
        {"kernel_size": (2, 2, 3), "stride": 2, "ceil_mode": True},
        (1, 2, 5, 4, 6),
    ),
    # adaptive pooling
    "adaptive_avg1d": ("AdaptiveAvgPool1d", {"output_size": 4}, (2, 3, 10)),
    "adaptive_avg2d_even": ("AdaptiveAvgPool2d", {"output_size": (2, 3)}, (2, 2, 6, 6)),
    "adaptive_avg2d_uneven": ("AdaptiveAvgPool2d", {"output_size": (3, 4)}, (2, 2, 7, 5)),
    "adaptive_avg2d_none": ("AdaptiveAvgPool2d", {"output_size": (None, 2)}, (2, 5, 7)),
    "adaptive_max1d": ("AdaptiveMaxPool1d", {"output_size": 3}, (2, 2, 8)),
    "adaptive_max2d": ("AdaptiveMaxPool2d", {"output_size": (3, 2)}, (2, 2, 7, 5)),
    # convolution
    "conv1d": ("Conv1d", {"in_channels": 3, "out_channels": 4, "kernel_size": 3}, (2, 3, 9)),
    "conv1d_stride_dil": (
        "Conv1d",
        {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "stride": 2, "dilation": 2},
        (2, 2, 11),
    ),
    "conv1d_same_reflect": (
        "Conv1d",
        {
            "in_channels": 2,
            "out_channels": 2,
            "kernel_size": 4,
            "padding": "same",
            "padding_mode": "reflect",
        },
        (2, 7),
    ),
    "conv2d": ("Conv2d", {"in_channels": 3, "out_channels": 4, "kernel_size": 3}, (2, 3, 6, 5)),
    "conv2d_stride_pad": (
        "Conv2d",
        {
            "in_channels": 2,
            "out_channels": 3,
            "kernel_size": (3, 2),
            "stride": (2, 1),
            "padding": (1, 2),
        },
        (2, 2, 7, 6),
    ),
    "conv2d_groups_nobias": (
        "Conv2d",
        {"in_channels": 4, "out_channels": 6, "kernel_size": 2, "groups": 2, "bias": False},
        (2, 4, 5, 5),
    ),
    "conv2d_depthwise_dil": (
        "Conv2d",
        {
            "in_channels": 3,
            "out_channels": 3,
            "kernel_size": 3,
            "groups": 3,
            "dilation": 2,
            "padding": 2,
        },
        (1, 3, 7, 7),
    ),
    "conv2d_same": (
        "Conv2d",
        {
            "in_channels": 2,
            "out_channels": 3,
            "kernel_size": (4, 3),
            "padding": "same",
            "dilation": (1, 2),
        },
        (2, 2, 6, 7),
    ),
    "conv2d_valid": (
        "Conv2d",
        {"in_channels": 2, "out_channels": 2, "kernel_size": 3, "padding": "valid"},
        (2, 5, 6),
    ),
    "conv2d_reflect": (
        "Conv2d",
        {
            "in_channels": 2,
            "out_channels": 3,
            "kernel_size": 3,
            "padding": (1, 2),
            "padding_mode": "reflect",
        },
        (2, 2, 5, 6),
    ),
    "conv2d_replicate": (
        "Conv2d",
        {
            "in_channels": 2,
            "out_channels": 2,
            "kernel_size": 3,
            "padding": 1,
            "padding_mode": "replicate",
            "stride": 2,
        },
        (2, 2, 6, 5),
    ),
    "conv2d_circular": (
        "Conv2d",
        {
            "in_channels": 2,
            "out_channels": 2,
            "kernel_size": 3,
            "padding": (2, 1),
            "padding_mode": "circular",
        },
        (1, 2, 5, 6),
    ),
    "conv3d": (
        "Conv3d",
        {"in_channels": 2, "out_channels": 2, "kernel_size": 2, "stride": (1, 2, 1), "padding": 1},
        (1, 2, 3, 4, 3),
    ),
    "conv_transpose1d": (
        "ConvTranspose1d",
        {
            "in_channels": 3,
            "out_channels": 2,
            "kernel_size": 3,
            "stride": 2,
            "padding": 1,
            "output_padding": 1,
        },
        (2, 3, 5),
    ),
    "conv_transpose2d": (
        "ConvTranspose2d",
        {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "stride": 2},
        (2, 2, 4, 3),
    ),
    "conv_transpose2d_groups_dil": (
        "ConvTranspose2d",
        {
            "in_channels": 4,
            "out_channels": 2,
            "kernel_size": (2, 3),
            "stride": (2, 1),
            "padding": (1, 0),
            "output_padding": (1, 0),
            "groups": 2,
            "dilation": (1, 2),
        },
        (2, 4, 3, 4),
    ),
    "conv_transpose2d_unbatched_nobias": (
        "ConvTranspose2d",
        {"in_channels": 2, "out_channels": 2, "kernel_size": 2, "stride": 3, "bias": False},
        (2, 3, 3),
    ),
}

DTYPES = ("float32", "float64")


def is_conv(case: str) -> bool:
    return CASES[case][0].startswith("Conv")


def inputs(case: str, dtype: str) -> dict[str, np.ndarray]:
    """The input ``x`` of a case, from a fixed seed (continuous values: no ties)."""
    _, _, shape = CASES[case]
    rng = np.random.default_rng(sorted(CASES).index(case) + 100)
    return {"x": (rng.normal(size=shape) * 2 + 0.5).astype(dtype)}


def param_value(case: str, name: str, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """The value a case's parameter is set to before recording (and when loading)."""
    rng = np.random.default_rng([sorted(CASES).index(case), len(name), 7])
    return (0.5 * rng.normal(size=shape)).astype(dtype)


def cotangent(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """The fixed weights of the scalar loss ``sum(y * cotangent)``."""
    n = int(np.prod(shape))
    return np.cos(np.arange(n) * 0.7 + 0.3).reshape(shape).astype(dtype)
