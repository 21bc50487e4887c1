"""``TransformerEncoderLayer`` and ``TransformerEncoder`` (PyTorch's submodule names,
layouts, defaults and initialisation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from functrace import core
from functrace import random as _random
from functrace.nn._attention import MultiheadAttention
from functrace.nn._basic import Linear
from functrace.nn._dropout import Dropout
from functrace.nn._module import Module, _rng, field
from functrace.nn._norm import LayerNorm
from functrace.nn.functional import gelu, relu


def _gelu_exact(x: Any) -> Any:
    """The exact GELU ``x * Phi(x)`` with erf (PyTorch's ``activation="gelu"``)."""
    return gelu(x, approximate=False)


def _activation(name: str, activation: Any) -> Callable[[Any], Any]:
    if activation == "relu":
        return relu
    if activation == "gelu":
        return _gelu_exact
    if callable(activation):
        return activation  # type: ignore[no-any-return]
    raise ValueError(
        f"{name}: expected activation 'relu', 'gelu' or a callable, got {activation!r}."
    )


def _split(key: Any, n: int) -> list[Any]:
    if key is None:
        return [None] * n
    return list(_random.split(key, n))


class TransformerEncoderLayer(Module):
    """A transformer encoder layer (PyTorch's ``torch.nn.TransformerEncoderLayer``):
    self-attention then a feed-forward block ``linear2(dropout(activation(linear1(x))))``,
    each with a residual connection, dropout and layer norm, after the block
    (``norm_first=False``, the default) or before it (``norm_first=True``).

    Submodules by PyTorch's names: ``self_attn`` (:class:`MultiheadAttention`),
    ``linear1``, ``dropout``, ``linear2``, ``norm1``, ``norm2``, ``dropout1``,
    ``dropout2``, so a PyTorch ``state_dict`` maps one to one (``self_attn.in_proj_weight``,
    ``norm1.weight``, ...). ``activation`` is ``"relu"``, ``"gelu"`` (the exact erf form,
    as PyTorch) or a callable. ``batch_first=False`` by default: ``src`` is ``(L, N, E)``
    (``(N, L, E)`` with ``batch_first=True``) or unbatched ``(L, E)``.

    ``layer(src, src_mask=None, src_key_padding_mask=None, is_causal=False, *, key=None)``
    takes the masks of :class:`MultiheadAttention` (boolean True = *not allowed*, or
    float added; ``is_causal`` is PyTorch's hint that ``src_mask`` is causal and needs
    it). Dropout happens only with a ``key`` (a ``functrace.random`` key); without one the
    layer is in inference mode.
    """

    self_attn: MultiheadAttention
    linear1: Linear
    dropout: Dropout
    linear2: Linear
    norm1: LayerNorm
    norm2: LayerNorm
    dropout1: Dropout
    dropout2: Dropout
    activation: Callable[[Any], Any] = field(static=True)
    norm_first: bool = field(static=True)
    d_model: int = field(static=True)

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Any = "relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        *,
        rng: Any,
        dtype: Any = np.float32,
    ) -> None:
        name = "TransformerEncoderLayer"
        if int(d_model) <= 0 or int(nhead) <= 0 or int(d_model) % int(nhead):
            raise ValueError(
                f"{name}: expected positive d_model divisible by a positive nhead, got "
                f"d_model={d_model} and nhead={nhead}."
            )
        if int(dim_feedforward) <= 0:
            raise ValueError(f"{name}: expected a positive dim_feedforward, got {dim_feedforward}.")
        gen = _rng(rng)
        self.activation = _activation(name, activation)
        self.norm_first = bool(norm_first)
        self.d_model = int(d_model)
        self.self_attn = MultiheadAttention(
            d_model,
            nhead,
            dropout=dropout,
            bias=bias,
            batch_first=batch_first,
            rng=gen,
            dtype=dtype,
        )
        self.linear1 = Linear(d_model, dim_feedforward, rng=gen, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, rng=gen, bias=bias, dtype=dtype)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)

    def __call__(
        self,
        src: Any,
        src_mask: Any = None,
        src_key_padding_mask: Any = None,
        is_causal: bool = False,
        *,
        key: Any = None,
    ) -> Any:
        name = "TransformerEncoderLayer"
        x = src if isinstance(src, (core.Tracer, np.ndarray)) else np.asarray(src)
        shp = tuple(core.get_aval(x).shape)
        if len(shp) not in (2, 3) or shp[-1] != self.d_model:
            layout = "(N, L, E)" if self.self_attn.batch_first else "(L, N, E)"
            raise ValueError(
                f"{name}: expected src of shape {layout} or (L, E) unbatched, with "
                f"E = d_model = {self.d_model}, got {shp}."
            )
        if is_causal and src_mask is None:
            raise ValueError(
                f"{name}: expected a src_mask with the is_causal hint (as PyTorch), got "
                "src_mask=None."
            )
        k_attn, k_ff, k1, k2 = _split(key, 4)

        def sa(y: Any) -> Any:
            out, _ = self.self_attn(
                y,
                y,
                y,
                key_padding_mask=src_key_padding_mask,
                need_weights=False,
                attn_mask=src_mask,
                is_causal=is_causal,
                dropout_key=k_attn,
            )
            return self.dropout1(out, key=k1)

        def ff(y: Any) -> Any:
            h = self.dropout(self.activation(self.linear1(y)), key=k_ff)
            return self.dropout2(self.linear2(h), key=k2)

        if self.norm_first:
            x = x + sa(self.norm1(x))
            return x + ff(self.norm2(x))
        x = self.norm1(x + sa(x))
        return self.norm2(x + ff(x))


class TransformerEncoder(Module):
    """A stack of ``num_layers`` encoder layers, each starting from the parameters of
    ``encoder_layer`` (as PyTorch's ``torch.nn.TransformerEncoder``, which copies it), then
    an optional final ``norm``. Submodules ``layers`` (``layers[0]``, ... for PyTorch's
    ``layers.0.``) and ``norm``. ``encoder(src, mask=None, src_key_padding_mask=None,
    is_causal=False, *, key=None)`` passes the masks to every layer; dropout only with a
    ``key`` (split per layer)."""

    layers: tuple[TransformerEncoderLayer, ...]
    norm: Any

    def __init__(
        self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Any = None
    ) -> None:
        if not isinstance(encoder_layer, TransformerEncoderLayer):
            raise TypeError(
                "TransformerEncoder: expected a TransformerEncoderLayer, got "
                f"{type(encoder_layer).__name__}."
            )
        if int(num_layers) < 1:
            raise ValueError(f"TransformerEncoder: expected num_layers >= 1, got {num_layers}.")
        self.layers = (encoder_layer,) * int(num_layers)
        self.norm = norm

    def __call__(
        self,
        src: Any,
        mask: Any = None,
        src_key_padding_mask: Any = None,
        is_causal: bool = False,
        *,
        key: Any = None,
    ) -> Any:
        x = src
        for layer, k in zip(self.layers, _split(key, len(self.layers)), strict=True):
            x = layer(x, mask, src_key_padding_mask, is_causal, key=k)
        return x if self.norm is None else self.norm(x)
