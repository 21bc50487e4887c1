"""Dense layers and containers: ``Linear``, ``Lambda``, ``Sequential``, ``MLP``."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import numpy as fnp
from functrace.nn._init import kaiming_uniform, uniform_init
from functrace.nn._module import Module, _rng, field
from functrace.nn.functional import relu


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``(out, in)`` (PyTorch's layout
    and default init)."""

    weight: Any
    bias: Any
    in_features: int = field(static=True)
    out_features: int = field(static=True)

    def __init__(
        self,
        in_features: int,
        out_features: int,
        *,
        rng: Any,
        bias: bool = True,
        dtype: Any = np.float32,
    ) -> None:
        gen = _rng(rng)
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        self.weight = kaiming_uniform(gen, (out_features, in_features), dtype)
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        self.bias = uniform_init(gen, (out_features,), bound, dtype) if bias else None

    def __call__(self, x: Any) -> Any:
        y = fnp.matmul(x, fnp.transpose(self.weight))
        return y if self.bias is None else y + self.bias


class Lambda(Module):
    """Wrap a parameter-free function (an activation) as a module."""

    fn: Callable[[Any], Any] = field(static=True)

    def __call__(self, x: Any) -> Any:
        return self.fn(x)


class Sequential(Module):
    """Apply layers in order; plain functions are wrapped in :class:`Lambda`."""

    layers: tuple[Any, ...]

    def __init__(self, layers: Sequence[Any]) -> None:
        self.layers = tuple(
            layer if isinstance(layer, Module) else Lambda(layer)  # type: ignore[call-arg]
            for layer in layers
        )

    def __call__(self, x: Any) -> Any:
        for layer in self.layers:
            x = layer(x)
        return x

    def __getitem__(self, i: int) -> Any:
        return self.layers[i]

    def __len__(self) -> int:
        return len(self.layers)


class MLP(Module):
    """A multilayer perceptron: ``Linear`` layers of ``sizes`` with ``activation`` between."""

    layers: tuple[Linear, ...]
    activation: Callable[[Any], Any] = field(static=True)

    def __init__(
        self,
        sizes: Sequence[int],
        *,
        rng: Any,
        activation: Callable[[Any], Any] | None = None,
        dtype: Any = np.float32,
    ) -> None:
        if len(sizes) < 2:
            raise ValueError(f"MLP: expected at least two sizes (in, out), got {list(sizes)}.")
        gen = _rng(rng)
        self.layers = tuple(
            Linear(a, b, rng=gen, dtype=dtype) for a, b in zip(sizes[:-1], sizes[1:])
        )
        self.activation = relu if activation is None else activation

    def __call__(self, x: Any) -> Any:
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        return self.layers[-1](x)
