"""Convolution and pooling cases of stax for tests/test_example_libraries.py (the
fixture ``tests/fixtures/stax_conv_jax.npz``), written once for JAX and functrace.

Every function takes the library namespaces (``jax`` and its ``example_libraries``, or
functrace's standing in for them) and uses only the API the two share: the recorder
ran this very code under JAX with ``jax_enable_x64``. Nothing here imports JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def pool_layers(stax: Any) -> dict[str, tuple[Any, tuple[int, ...]]]:
    """name -> (layer, input shape) for the pooling layers (NHWC unless a spec says)."""
    return {
        "MaxPool": (stax.MaxPool((2, 2)), (2, 5, 4, 3)),
        "MaxPool_strides_same": (stax.MaxPool((3, 2), (2, 2), "SAME"), (2, 5, 7, 2)),
        "MaxPool_spec": (stax.MaxPool((2, 2), (2, 1), spec="NCHW"), (2, 3, 4, 5)),
        "SumPool": (stax.SumPool((2, 3), (1, 2)), (2, 4, 7, 2)),
        "SumPool_1d_same": (stax.SumPool((2,), (2,), "SAME"), (3, 5, 2)),
        "AvgPool": (stax.AvgPool((2, 2), (2, 2)), (2, 4, 6, 3)),
        "AvgPool_same": (stax.AvgPool((3, 3), (2, 2), "SAME"), (2, 5, 6, 2)),
        "AvgPool_spec": (stax.AvgPool((2, 3), (1, 1), "SAME", spec="NCHW"), (1, 2, 4, 5)),
    }


def conv_layers(stax: Any) -> dict[str, tuple[Any, tuple[int, ...]]]:
    """name -> (layer, input shape) for the convolution layers."""
    return {
        "Conv": (stax.Conv(3, (3, 3)), (2, 6, 5, 2)),
        "Conv_strides_same": (stax.Conv(4, (2, 3), (2, 1), "SAME"), (2, 5, 6, 3)),
        "GeneralConv_nchw": (
            stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (3, 2), (1, 2), ((1, 0), (2, 1))),
            (2, 2, 5, 6),
        ),
        "Conv1DTranspose": (stax.Conv1DTranspose(2, (3,), (2,)), (2, 5, 3)),
        "ConvTranspose": (stax.ConvTranspose(3, (3, 3), (2, 2)), (2, 4, 3, 2)),
        "ConvTranspose_same": (stax.ConvTranspose(2, (2, 3), (2, 1), "SAME"), (1, 3, 4, 2)),
        "GeneralConvTranspose_nchw": (
            stax.GeneralConvTranspose(("NCHW", "OIHW", "NCHW"), 2, (3, 3), (2, 1), "VALID"),
            (2, 3, 3, 4),
        ),
        "cnn": (
            stax.serial(
                stax.Conv(4, (3, 3), padding="SAME"),
                stax.Relu,
                stax.MaxPool((2, 2), (2, 2)),
                stax.Conv(6, (3, 3)),
                stax.Relu,
                stax.AvgPool((2, 2), (1, 1)),
                stax.Flatten,
                stax.Dense(3),
                stax.LogSoftmax,
            ),
            (4, 8, 8, 1),
        ),
    }


def layer_input(shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(sum(shape) * 17 + len(shape))
    return np.round(rng.normal(size=shape) * 2.0, 3)  # ties for the max pools


def cnn_training(lib: Any, stax: Any, optimizers: Any, steps: int = 4) -> list[Any]:
    """The stax CNN example: init from ``PRNGKey(0)``, then ``steps`` jitted SGD steps
    of the softmax cross-entropy on a fixed batch; returns the losses and final params."""
    init_fun, apply_fun = conv_layers(stax)["cnn"][0]
    x = layer_input((4, 8, 8, 1))
    labels = np.eye(3)[np.array([0, 2, 1, 2])]
    _, params = init_fun(lib.random.PRNGKey(0), (-1, 8, 8, 1))
    opt_init, opt_update, get_params = optimizers.sgd(0.5)

    def loss(p: Any) -> Any:
        return -lib.numpy.mean(lib.numpy.sum(apply_fun(p, x) * labels, axis=1))

    @lib.jit
    def step(i: Any, state: Any) -> Any:
        value, g = lib.value_and_grad(loss)(get_params(state))
        return value, opt_update(i, g, state)

    state = opt_init(params)
    losses = []
    for i in range(steps):
        value, state = step(i, state)
        losses.append(value)
    return [np.asarray(losses), *lib.tree_util.tree_leaves(get_params(state))]
