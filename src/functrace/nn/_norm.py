"""Normalisation layers: ``LayerNorm``, ``RMSNorm``, ``GroupNorm``, ``BatchNorm1d/2d``,
and their functional forms."""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import lax as _lax
from functrace import numpy as fnp
from functrace.nn._layer_util import float_input, int_tuple, shape_of
from functrace.nn._module import Module, field


def _check_trailing(name: str, x: Any, normalized_shape: tuple[int, ...]) -> int:
    shp = shape_of(x)
    k = len(normalized_shape)
    if k == 0 or len(shp) < k or shp[len(shp) - k :] != normalized_shape:
        raise ValueError(
            f"{name}: expected the last dims of x to be {normalized_shape}, got shape {shp}."
        )
    return k


def _check_param(name: str, what: str, p: Any, shape: tuple[int, ...]) -> None:
    if p is not None and shape_of(p) != shape:
        raise ValueError(f"{name}: expected {what} of shape {shape}, got shape {shape_of(p)}.")


def layer_norm(
    x: Any, normalized_shape: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5
) -> Any:
    """Normalise ``x`` over its last ``len(normalized_shape)`` dims (as
    ``torch.nn.functional.layer_norm``): ``(x - mean) / sqrt(var + eps) * weight + bias``
    with the biased variance; ``weight``/``bias`` (of ``normalized_shape``) are optional."""
    name = "layer_norm"
    x = float_input(name, x)
    ns = int_tuple(name, "normalized_shape", normalized_shape)
    k = _check_trailing(name, x, ns)
    _check_param(name, "weight", weight, ns)
    _check_param(name, "bias", bias, ns)
    axes = tuple(range(-k, 0))
    mean = fnp.mean(x, axis=axes, keepdims=True)
    centred = x - mean
    var = fnp.mean(fnp.square(centred), axis=axes, keepdims=True)
    y = centred * _lax.rsqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


class LayerNorm(Module):
    """Layer normalisation over the trailing ``normalized_shape`` dims (PyTorch's
    ``nn.LayerNorm``): biased variance, ``weight`` initialised to ones and ``bias`` to
    zeros (``None`` when ``elementwise_affine=False``, or ``bias=False``). Any leading
    dims are batch dims, so unbatched inputs work as they are.

    >>> import numpy as np
    >>> from functrace import nn
    >>> nn.LayerNorm(4)(np.arange(8.0, dtype=np.float32).reshape(2, 4)).shape
    (2, 4)
    """

    weight: Any
    bias: Any
    normalized_shape: tuple[int, ...] = field(static=True)
    eps: float = field(static=True)
    elementwise_affine: bool = field(static=True)

    def __init__(
        self,
        normalized_shape: Any,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        *,
        dtype: Any = np.float32,
    ) -> None:
        self.normalized_shape = int_tuple("LayerNorm", "normalized_shape", normalized_shape)
        self.eps = float(eps)
        self.elementwise_affine = bool(elementwise_affine)
        affine = self.elementwise_affine
        self.weight = np.ones(self.normalized_shape, dtype) if affine else None
        self.bias = np.zeros(self.normalized_shape, dtype) if affine and bias else None

    def __call__(self, x: Any) -> Any:
        x = float_input("LayerNorm", x)
        _check_trailing("LayerNorm", x, self.normalized_shape)
        return layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
