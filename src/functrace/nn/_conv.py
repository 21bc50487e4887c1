"""Convolution layers with PyTorch's names, layouts, defaults and initialisation:
``Conv1d/2d/3d``, ``ConvTranspose1d/2d`` and the functional ``conv1d/2d/3d``,
``conv_transpose1d/2d``.

Inputs are ``(N, C, *spatial)`` or, without a batch axis, ``(C, *spatial)``; weights
are ``(out, in / groups, *kernel)`` for convolutions and ``(in, out / groups, *kernel)``
for transposed ones, as in PyTorch. Everything is one ``lax.conv_general_dilated``
(a cross-correlation, as PyTorch's ``conv``), so it differentiates, vmaps and jits as
that primitive does. Non-zero padding modes pad the input first (reflect, replicate,
circular: slices and concatenations, so they differentiate too).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from functrace import lax
from functrace import numpy as fnp
from functrace.nn._init import uniform_init
from functrace.nn._layer_util import shape_of
from functrace.nn._module import Module, _rng, field
from functrace.nn._pool import _ntuple, _spatial_input

_MODES = ("zeros", "reflect", "replicate", "circular")


def _input(name: str, x: Any, n: int, channels: int, what: str) -> tuple[Any, bool]:
    """``x`` batched (a batch axis added for an unbatched input), and whether it was."""
    x, shp = _spatial_input(name, x, n)
    c = shp[len(shp) - n - 1]
    if c != channels:
        raise ValueError(
            f"{name}: expected x with {channels} channels ({what}) at dim "
            f"{len(shp) - n - 1}, got shape {shp}."
        )
    if len(shp) == n + 1:
        return fnp.expand_dims(x, 0), False
    return x, True


def _pad_mode(name: str, x: Any, pads: list[tuple[int, int]], mode: str) -> Any:
    """``x`` (N, C, *spatial) padded on its spatial axes by ``mode``."""
    shp = shape_of(x)
    for i, (lo, hi) in enumerate(pads):
        if lo == hi == 0:
            continue
        axis, size = 2 + i, shp[2 + i]
        limit = size - 1 if mode == "reflect" else size
        if max(lo, hi) > limit or (mode == "replicate" and size == 0):
            raise ValueError(
                f"{name}: expected padding below the input size {size} for "
                f"padding_mode={mode!r} (at most {limit}), got padding {(lo, hi)} on "
                f"spatial dim {i} of x of shape {shp}."
            )

        def part(a: int, b: int, x: Any = x, axis: int = axis) -> Any:
            return lax.slice_in_dim(x, a, b, axis=axis)

        if mode == "reflect":
            left = lax.rev(part(1, 1 + lo), (axis,))
            right = lax.rev(part(size - 1 - hi, size - 1), (axis,))
        elif mode == "replicate":
            left = fnp.repeat(part(0, 1), lo, axis=axis)
            right = fnp.repeat(part(size - 1, size), hi, axis=axis)
        else:  # circular
            left, right = part(size - lo, size), part(0, hi)
        x = fnp.concatenate([left, x, right], axis=axis)
    return x


def _padding(
    name: str, padding: Any, n: int, k: tuple[int, ...], d: tuple[int, ...], s: tuple[int, ...]
) -> list[tuple[int, int]]:
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * n
        if padding != "same":
            raise ValueError(
                f"{name}: expected padding 'same', 'valid', an int or a tuple of {n} ints, "
                f"got {padding!r}."
            )
        if any(v != 1 for v in s):
            raise ValueError(
                f"{name}: expected stride 1 with padding='same' (as PyTorch), got stride {s}."
            )
        total = [di * (ki - 1) for ki, di in zip(k, d)]
        return [(t // 2, t - t // 2) for t in total]
    return [(p, p) for p in _ntuple(name, "padding", padding, n, 0)]


def _check_size(
    name: str, x: Any, pads: list[tuple[int, int]], k: tuple[int, ...], d: tuple[int, ...]
) -> None:
    shp = shape_of(x)
    for i, ((lo, hi), ki, di) in enumerate(zip(pads, k, d)):
        if shp[2 + i] + lo + hi < di * (ki - 1) + 1:
            raise ValueError(
                f"{name}: expected a padded input at least as large as the (dilated) kernel, "
                f"got input size {shp[2 + i]} (padding {(lo, hi)}) for kernel size {ki} "
                f"(dilation {di}) on spatial dim {i} of x of shape {shp}."
            )


def _conv(
    name: str,
    n: int,
    x: Any,
    weight: Any,
    bias: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    padding_mode: str = "zeros",
) -> Any:
    wshape = shape_of(weight)
    if len(wshape) != n + 2:
        raise ValueError(
            f"{name}: expected a {n + 2}-d weight (out_channels, in_channels / groups, "
            f"*kernel), got shape {wshape}."
        )
    g = _groups(name, groups)
    x, batched = _input(name, x, n, wshape[1] * g, "in_channels")
    if wshape[0] % g:
        raise ValueError(
            f"{name}: expected out_channels divisible by groups={g}, got weight of shape {wshape}."
        )
    k = wshape[2:]
    s = _ntuple(name, "stride", stride, n, 1)
    d = _ntuple(name, "dilation", dilation, n, 1)
    pads = _padding(name, padding, n, k, d, s)
    if padding_mode != "zeros":
        x = _pad_mode(name, x, pads, padding_mode)
        pads = [(0, 0)] * n
    _check_size(name, x, pads, k, d)
    y = lax.conv_general_dilated(x, weight, s, pads, rhs_dilation=d, feature_group_count=g)
    if bias is not None:
        y = y + fnp.reshape(bias, (-1,) + (1,) * n)
    return y if batched else y[0]


def _groups(name: str, groups: Any) -> int:
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
        raise ValueError(f"{name}: expected groups as a positive int, got {groups!r}.")
    return int(groups)


def _conv_transpose(
    name: str,
    n: int,
    x: Any,
    weight: Any,
    bias: Any,
    stride: Any,
    padding: Any,
    output_padding: Any,
    groups: int,
    dilation: Any,
) -> Any:
    wshape = shape_of(weight)
    if len(wshape) != n + 2:
        raise ValueError(
            f"{name}: expected a {n + 2}-d weight (in_channels, out_channels / groups, "
            f"*kernel), got shape {wshape}."
        )
    g = _groups(name, groups)
    if wshape[0] % g:
        raise ValueError(
            f"{name}: expected in_channels divisible by groups={g}, got weight of shape {wshape}."
        )
    x, batched = _input(name, x, n, wshape[0], "in_channels")
    k = wshape[2:]
    s = _ntuple(name, "stride", stride, n, 1)
    d = _ntuple(name, "dilation", dilation, n, 1)
    p = _ntuple(name, "padding", padding, n, 0)
    op = _ntuple(name, "output_padding", output_padding, n, 0)
    if any(o >= si and o >= di for o, si, di in zip(op, s, d)):
        raise ValueError(
            f"{name}: expected output_padding smaller than either stride or dilation, got "
            f"output_padding {op} for stride {s} and dilation {d}."
        )
    sp = shape_of(x)[2:]
    out = [
        (L - 1) * si - 2 * pi + di * (ki - 1) + oi + 1
        for L, si, pi, di, ki, oi in zip(sp, s, p, d, k, op)
    ]
    if any(o < 1 for o in out):
        raise ValueError(
            f"{name}: expected a positive output size, got {tuple(out)} for input of shape "
            f"{shape_of(x)}, kernel {k}, stride {s}, padding {p}, dilation {d}."
        )
    # (in, out/g, k...) -> (out, in/g, k...) per group, flipped: the transposed
    # convolution is a convolution of the stride-dilated input with that kernel.
    cin, cout_g = wshape[0], wshape[1]
    w = fnp.reshape(weight, (g, cin // g, cout_g, *k))
    w = fnp.swapaxes(w, 1, 2)
    w = fnp.reshape(w, (g * cout_g, cin // g, *k))
    w = lax.rev(w, tuple(range(2, n + 2)))
    pads = [(di * (ki - 1) - pi, di * (ki - 1) - pi + oi) for di, ki, pi, oi in zip(d, k, p, op)]
    y = lax.conv_general_dilated(
        x, w, (1,) * n, pads, lhs_dilation=s, rhs_dilation=d, feature_group_count=g
    )
    if bias is not None:
        y = y + fnp.reshape(bias, (-1,) + (1,) * n)
    return y if batched else y[0]


# ---------------------------------------------------------------------------
# Functional forms
# ---------------------------------------------------------------------------


def conv1d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Any:
    """1-d convolution (cross-correlation) of ``(N, C_in, L)`` or ``(C_in, L)`` input with
    ``weight`` ``(C_out, C_in / groups, k)`` (``torch.nn.functional.conv1d``);
    ``padding`` is an int, a tuple, "valid" or "same" (stride 1; the odd extra element
    at the end)."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Any:
    """2-d convolution of ``(N, C_in, H, W)`` or ``(C_in, H, W)`` input with ``weight``
    ``(C_out, C_in / groups, kh, kw)`` (``torch.nn.functional.conv2d``)."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Any:
    """3-d convolution of ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)`` input
    (``torch.nn.functional.conv3d``)."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Any:
    """1-d transposed convolution with ``weight`` ``(C_in, C_out / groups, k)``
    (``torch.nn.functional.conv_transpose1d``): output size
    ``(L - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1``."""
    args = (stride, padding, output_padding, groups, dilation)
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, *args)


def conv_transpose2d(
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Any:
    """2-d transposed convolution with ``weight`` ``(C_in, C_out / groups, kh, kw)``
    (``torch.nn.functional.conv_transpose2d``)."""
    args = (stride, padding, output_padding, groups, dilation)
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, *args)


# ---------------------------------------------------------------------------
# Modules
# ---------------------------------------------------------------------------


def _channels(name: str, in_channels: Any, out_channels: Any, groups: Any) -> tuple[int, int, int]:
    for what, v in (("in_channels", in_channels), ("out_channels", out_channels)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}: expected {what} as a positive int, got {v!r}.")
    g = _groups(name, groups)
    if in_channels % g or out_channels % g:
        raise ValueError(
            f"{name}: expected in_channels and out_channels divisible by groups, got "
            f"in_channels={in_channels}, out_channels={out_channels}, groups={g}."
        )
    return int(in_channels), int(out_channels), g


def _conv_init(
    self: Any,
    in_channels: int,
    out_channels: int,
    kernel_size: Any,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
    bias: bool = True,
    padding_mode: str = "zeros",
    *,
    rng: Any,
    dtype: Any = np.float32,
) -> None:
    name, n = type(self).__name__, self._n
    cin, cout, g = _channels(name, in_channels, out_channels, groups)
    k = _ntuple(name, "kernel_size", kernel_size, n, 1)
    s = _ntuple(name, "stride", stride, n, 1)
    d = _ntuple(name, "dilation", dilation, n, 1)
    if padding_mode not in _MODES:
        raise ValueError(f"{name}: expected padding_mode in {_MODES}, got {padding_mode!r}.")
    _padding(name, padding, n, k, d, s)  # checked now
    self.in_channels, self.out_channels, self.groups = cin, cout, g
    self.kernel_size, self.stride, self.dilation = k, s, d
    self.padding = padding if isinstance(padding, str) else _ntuple(name, "padding", padding, n, 0)
    self.padding_mode = padding_mode
    gen = _rng(rng)
    fan_in = cin // g * math.prod(k)
    bound = 1.0 / math.sqrt(fan_in)  # kaiming_uniform(a=sqrt(5)) and PyTorch's bias init
    self.weight = uniform_init(gen, (cout, cin // g, *k), bound, dtype)
    self.bias = uniform_init(gen, (cout,), bound, dtype) if bias else None


class _ConvNd(Module):
    weight: Any
    bias: Any
    in_channels: int = field(static=True)
    out_channels: int = field(static=True)
    kernel_size: tuple[int, ...] = field(static=True)
    stride: tuple[int, ...] = field(static=True)
    padding: Any = field(static=True)
    dilation: tuple[int, ...] = field(static=True)
    groups: int = field(static=True)
    padding_mode: str = field(static=True)

    _n = 0
    __init__ = _conv_init

    def __call__(self, x: Any) -> Any:
        name = type(self).__name__
        args = (self.stride, self.padding, self.dilation, self.groups, self.padding_mode)
        return _conv(name, self._n, x, self.weight, self.bias, *args)


class Conv1d(_ConvNd):
    """1-d convolution layer (``torch.nn.Conv1d``): ``Conv1d(in_channels, out_channels,
    kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
    padding_mode="zeros", *, rng, dtype=float32)`` on ``(N, C, L)`` or ``(C, L)``.
    ``padding`` is an int, a tuple, "valid" or "same"; ``padding_mode`` "zeros",
    "reflect", "replicate" or "circular". ``weight`` ``(out, in / groups, k)`` and
    ``bias`` are ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``, ``fan_in = in / groups * k``."""

    _n = 1
    __init__ = _conv_init


class Conv2d(_ConvNd):
    """2-d convolution layer (``torch.nn.Conv2d``) on ``(N, C, H, W)`` or ``(C, H, W)``,
    with the parameters of :class:`Conv1d` (ints or pairs) and ``weight``
    ``(out, in / groups, kh, kw)``."""

    _n = 2
    __init__ = _conv_init


class Conv3d(_ConvNd):
    """3-d convolution layer (``torch.nn.Conv3d``) on ``(N, C, D, H, W)`` or
    ``(C, D, H, W)``, with the parameters of :class:`Conv1d`."""

    _n = 3
    __init__ = _conv_init


def _conv_transpose_init(
    self: Any,
    in_channels: int,
    out_channels: int,
    kernel_size: Any,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    bias: bool = True,
    dilation: Any = 1,
    padding_mode: str = "zeros",
    *,
    rng: Any,
    dtype: Any = np.float32,
) -> None:
    name, n = type(self).__name__, self._n
    cin, cout, g = _channels(name, in_channels, out_channels, groups)
    if padding_mode != "zeros":
        raise ValueError(
            f"{name}: expected padding_mode 'zeros' (the only mode of transposed "
            f"convolutions, as PyTorch), got {padding_mode!r}."
        )
    self.in_channels, self.out_channels, self.groups = cin, cout, g
    self.kernel_size = _ntuple(name, "kernel_size", kernel_size, n, 1)
    self.stride = _ntuple(name, "stride", stride, n, 1)
    self.padding = _ntuple(name, "padding", padding, n, 0)
    self.output_padding = _ntuple(name, "output_padding", output_padding, n, 0)
    self.dilation = _ntuple(name, "dilation", dilation, n, 1)
    gen = _rng(rng)
    fan_in = cout // g * math.prod(self.kernel_size)  # PyTorch's fan_in of (in, out/g, k...)
    bound = 1.0 / math.sqrt(fan_in)
    self.weight = uniform_init(gen, (cin, cout // g, *self.kernel_size), bound, dtype)
    self.bias = uniform_init(gen, (cout,), bound, dtype) if bias else None


class _ConvTransposeNd(Module):
    weight: Any
    bias: Any
    in_channels: int = field(static=True)
    out_channels: int = field(static=True)
    kernel_size: tuple[int, ...] = field(static=True)
    stride: tuple[int, ...] = field(static=True)
    padding: tuple[int, ...] = field(static=True)
    output_padding: tuple[int, ...] = field(static=True)
    groups: int = field(static=True)
    dilation: tuple[int, ...] = field(static=True)

    _n = 0
    __init__ = _conv_transpose_init

    def __call__(self, x: Any) -> Any:
        name = type(self).__name__
        args = (self.stride, self.padding, self.output_padding, self.groups, self.dilation)
        return _conv_transpose(name, self._n, x, self.weight, self.bias, *args)


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution (``torch.nn.ConvTranspose1d``):
    ``ConvTranspose1d(in_channels, out_channels, kernel_size, stride=1, padding=0,
    output_padding=0, groups=1, bias=True, dilation=1, *, rng, dtype=float32)``;
    ``weight`` ``(in, out / groups, k)``, output size ``(L - 1) stride - 2 padding +
    dilation (k - 1) + output_padding + 1``."""

    _n = 1
    __init__ = _conv_transpose_init


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution (``torch.nn.ConvTranspose2d``), with the parameters of
    :class:`ConvTranspose1d` (ints or pairs) and ``weight`` ``(in, out / groups, kh, kw)``."""

    _n = 2
    __init__ = _conv_transpose_init


__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
]
