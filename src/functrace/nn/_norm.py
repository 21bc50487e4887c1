"""Normalisation layers: ``LayerNorm``, ``RMSNorm``, ``GroupNorm``, ``BatchNorm1d/2d``,
and their functional forms."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from functrace import lax as _lax
from functrace import numpy as fnp
from functrace.nn._layer_util import dtype_of, float_input, int_tuple, positive_int, shape_of
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


def rms_norm(x: Any, normalized_shape: Any, weight: Any = None, eps: float | None = None) -> Any:
    """Root-mean-square normalisation over the last ``len(normalized_shape)`` dims (as
    ``torch.nn.functional.rms_norm``): ``x / sqrt(mean(x**2) + eps) * weight``;
    ``eps=None`` means ``finfo(x.dtype).eps``."""
    name = "rms_norm"
    x = float_input(name, x)
    ns = int_tuple(name, "normalized_shape", normalized_shape)
    k = _check_trailing(name, x, ns)
    _check_param(name, "weight", weight, ns)
    e = float(np.finfo(dtype_of(x)).eps) if eps is None else eps
    axes = tuple(range(-k, 0))
    y = x * _lax.rsqrt(fnp.mean(fnp.square(x), axis=axes, keepdims=True) + e)
    return y if weight is None else y * weight


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims
    (PyTorch's ``nn.RMSNorm``): ``x / sqrt(mean(x**2) + eps) * weight``, ``weight``
    initialised to ones (``None`` when ``elementwise_affine=False``); ``eps=None`` means
    ``finfo(x.dtype).eps``. Leading dims are batch dims."""

    weight: Any
    normalized_shape: tuple[int, ...] = field(static=True)
    eps: float | None = field(static=True)
    elementwise_affine: bool = field(static=True)

    def __init__(
        self,
        normalized_shape: Any,
        eps: float | None = None,
        elementwise_affine: bool = True,
        *,
        dtype: Any = np.float32,
    ) -> None:
        self.normalized_shape = int_tuple("RMSNorm", "normalized_shape", normalized_shape)
        self.eps = None if eps is None else float(eps)
        self.elementwise_affine = bool(elementwise_affine)
        self.weight = np.ones(self.normalized_shape, dtype) if elementwise_affine else None

    def __call__(self, x: Any) -> Any:
        x = float_input("RMSNorm", x)
        _check_trailing("RMSNorm", x, self.normalized_shape)
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)


def _channel_shape(ndim: int) -> tuple[int, ...]:
    """How a per-channel vector of shape (C,) broadcasts against (N, C, *spatial)."""
    return (-1,) + (1,) * (ndim - 2)


def group_norm(
    x: Any, num_groups: int, weight: Any = None, bias: Any = None, eps: float = 1e-5
) -> Any:
    """Group normalisation of ``x`` of shape ``(N, C, *)`` (as
    ``torch.nn.functional.group_norm``): the ``C`` channels are split into ``num_groups``
    groups and each group of each sample is normalised (biased variance), then scaled by
    the per-channel ``weight`` and shifted by ``bias`` (both of shape ``(C,)``)."""
    return _group_norm("group_norm", x, num_groups, weight, bias, eps)


def _group_norm(name: str, x: Any, g: int, weight: Any, bias: Any, eps: float) -> Any:
    x = float_input(name, x)
    shp = shape_of(x)
    g = positive_int(name, "num_groups", g)
    if len(shp) < 2:
        raise ValueError(f"{name}: expected x of shape (N, C, *) (at least 2-d), got shape {shp}.")
    c = shp[1]
    if c % g:
        raise ValueError(
            f"{name}: expected the channels of x (dim 1) to be divisible by num_groups={g}, "
            f"got shape {shp}."
        )
    _check_param(name, "weight", weight, (c,))
    _check_param(name, "bias", bias, (c,))
    grouped = fnp.reshape(x, (shp[0], g, math.prod(shp[1:]) // g))
    mean = fnp.mean(grouped, axis=-1, keepdims=True)
    centred = grouped - mean
    var = fnp.mean(fnp.square(centred), axis=-1, keepdims=True)
    y = fnp.reshape(centred * _lax.rsqrt(var + eps), shp)
    cs = _channel_shape(len(shp))
    if weight is not None:
        y = y * fnp.reshape(weight, cs)
    if bias is not None:
        y = y + fnp.reshape(bias, cs)
    return y


class GroupNorm(Module):
    """Group normalisation (PyTorch's ``nn.GroupNorm``) of inputs ``(N, C, *)``: the
    ``num_channels`` channels form ``num_groups`` groups, each normalised per sample with
    the biased variance; per-channel ``weight`` (ones) and ``bias`` (zeros), ``None``
    when ``affine=False``."""

    weight: Any
    bias: Any
    num_groups: int = field(static=True)
    num_channels: int = field(static=True)
    eps: float = field(static=True)
    affine: bool = field(static=True)

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        *,
        dtype: Any = np.float32,
    ) -> None:
        g = positive_int("GroupNorm", "num_groups", num_groups)
        c = positive_int("GroupNorm", "num_channels", num_channels)
        if c % g:
            raise ValueError(
                f"GroupNorm: expected num_channels divisible by num_groups, got "
                f"num_channels={c} and num_groups={g}."
            )
        self.num_groups, self.num_channels = g, c
        self.eps = float(eps)
        self.affine = bool(affine)
        self.weight = np.ones(c, dtype) if affine else None
        self.bias = np.zeros(c, dtype) if affine else None

    def __call__(self, x: Any) -> Any:
        x = float_input("GroupNorm", x)
        shp = shape_of(x)
        if len(shp) < 2 or shp[1] != self.num_channels:
            raise ValueError(
                f"GroupNorm: expected x of shape (N, {self.num_channels}, *), got shape {shp}."
            )
        return _group_norm("GroupNorm", x, self.num_groups, self.weight, self.bias, self.eps)
