"""Neural-network building blocks as pytrees (the Equinox design).

A :class:`Module` is a dataclass whose array fields are pytree children and whose
``field(static=True)`` fields are fixed hyperparameters. Modules are immutable
after ``__init__``; a model *is* its parameters, so ``grad(loss)(model, x, y)``
returns a model-shaped tree of gradients and optimizers update it leaf by leaf.

>>> import numpy as np, functrace as ft
>>> from functrace import nn
>>> model = nn.Linear(3, 2, rng=0)
>>> model
Linear(weight=f32[2,3], bias=f32[2], in_features=3, out_features=2)
>>> model(np.ones(3, np.float32)).shape
(2,)
"""

from __future__ import annotations

from functrace.nn import functional, initializers
from functrace.nn._attention import (
    MultiheadAttention,
    dot_product_attention,
    scaled_dot_product_attention,
)
from functrace.nn._basic import MLP, Lambda, Linear, Sequential
from functrace.nn._batchnorm import BatchNorm1d, BatchNorm2d, BatchNormState, batch_norm
from functrace.nn._conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
)
from functrace.nn._dropout import Dropout, dropout
from functrace.nn._embedding import Embedding, embedding
from functrace.nn._init import kaiming_uniform, uniform_init, xavier_uniform
from functrace.nn._inspect import count_params, grad_stats, named_parameters
from functrace.nn._module import Module, field
from functrace.nn._norm import (
    GroupNorm,
    LayerNorm,
    RMSNorm,
    group_norm,
    layer_norm,
    rms_norm,
)
from functrace.nn._pool import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from functrace.nn._recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from functrace.nn._shape import Flatten, Identity, Unflatten
from functrace.nn._transformer import TransformerEncoder, TransformerEncoderLayer
from functrace.nn.functional import (
    binary_cross_entropy_with_logits,
    celu,
    cross_entropy,
    elu,
    gelu,
    glu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    leaky_relu,
    log_sigmoid,
    log_softmax,
    logsumexp,
    mish,
    mse_loss,
    one_hot,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    soft_sign,
    softmax,
    softplus,
    sparse_plus,
    squareplus,
    standardize,
    swish,
    tanh,
)

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNormState",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "Dropout",
    "Embedding",
    "Flatten",
    "GRU",
    "GRUCell",
    "GroupNorm",
    "Identity",
    "LSTM",
    "LSTMCell",
    "Lambda",
    "LayerNorm",
    "Linear",
    "MLP",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "Module",
    "MultiheadAttention",
    "RMSNorm",
    "RNN",
    "RNNCell",
    "Sequential",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "Unflatten",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "batch_norm",
    "binary_cross_entropy_with_logits",
    "celu",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "count_params",
    "cross_entropy",
    "dropout",
    "elu",
    "embedding",
    "field",
    "functional",
    "gelu",
    "glu",
    "grad_stats",
    "group_norm",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "initializers",
    "kaiming_uniform",
    "layer_norm",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "logsumexp",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "mish",
    "mse_loss",
    "named_parameters",
    "one_hot",
    "relu",
    "relu6",
    "rms_norm",
    "scaled_dot_product_attention",
    "dot_product_attention",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
    "uniform_init",
    "xavier_uniform",
]
