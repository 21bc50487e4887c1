"""Pooling layers with PyTorch's names, layouts and output sizes: ``MaxPool1d/2d/3d``,
``AvgPool1d/2d/3d``, ``AdaptiveAvgPool1d/2d``, ``AdaptiveMaxPool1d/2d`` and their
functional forms.

Inputs are ``(N, C, *spatial)`` or, without a batch axis, ``(C, *spatial)``. Every
pool is one windowed reduction of ``functrace.lax`` (``reduce_window_max``/``sum``)
whose window spans the spatial axes only, so it differentiates, vmaps and jits as
those primitives do.

Output sizes follow PyTorch: ``floor((L + 2p - d (k - 1) - 1) / s) + 1``, rounded up
with ``ceil_mode=True`` unless the last window would then start beyond the input and
its left padding. The extra windows of ``ceil_mode`` read past the right padding:
that part holds ``-inf`` for max pooling and counts for nothing in average pooling.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import lax
from functrace import numpy as fnp
from functrace.nn._layer_util import as_array, dtype_of, float_input, shape_of
from functrace.nn._module import Module, field

_LAYOUTS = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}


def _spatial_input(name: str, x: Any, n: int) -> tuple[Any, tuple[int, ...]]:
    """``x`` as an array of rank ``n + 1`` or ``n + 2`` with a floating dtype."""
    x = as_array(x)
    shp = shape_of(x)
    if len(shp) not in (n + 1, n + 2):
        unbatched = "(" + _LAYOUTS[n][4:]
        raise ValueError(
            f"{name}: expected a {n + 1}-d {unbatched} or {n + 2}-d {_LAYOUTS[n]} x, got "
            f"shape {shp}."
        )
    return float_input(name, x), shp


def _ntuple(name: str, what: str, value: Any, n: int, minimum: int) -> tuple[int, ...]:
    """An int or a sequence of ``n`` ints (each >= ``minimum``) as an ``n``-tuple."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        out: tuple[int, ...] = (int(value),) * n
    else:
        try:
            out = tuple(int(v) for v in value)
            ok = len(out) == n and all(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value
            )
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise TypeError(
                f"{name}: expected {what} as an int or a tuple of {n} ints, got {value!r}."
            )
    if any(v < minimum for v in out):
        raise ValueError(f"{name}: expected {what} >= {minimum}, got {value!r}.")
    return out


def _out_size(
    name: str, shp: tuple[int, ...], k: int, s: int, p: int, d: int, ceil: bool, axis: int
) -> int:
    size = shp[axis]
    span = d * (k - 1) + 1
    num = size + 2 * p - span + (s - 1 if ceil else 0)
    out = num // s + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1  # the last window must start inside the input or its left padding
    if out < 1:
        raise ValueError(
            f"{name}: expected a (dilated) kernel no larger than the padded input, got "
            f"kernel size {k} (dilation {d}, padding {p}) for input size {size} on axis "
            f"{axis} of x of shape {shp} (output size {out})."
        )
    return out


class _Window:
    """The checked parameters of one pooling call, per spatial axis."""

    def __init__(
        self,
        name: str,
        x: Any,
        n: int,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        ceil_mode: bool,
    ) -> None:
        self.x, shp = _spatial_input(name, x, n)
        self.k = _ntuple(name, "kernel_size", kernel_size, n, 1)
        none = stride is None or (not isinstance(stride, int) and len(stride) == 0)
        self.s = self.k if none else _ntuple(name, "stride", stride, n, 1)
        self.p = _ntuple(name, "padding", padding, n, 0)
        self.d = _ntuple(name, "dilation", dilation, n, 1)
        if any(p > k // 2 for p, k in zip(self.p, self.k)):
            raise ValueError(
                f"{name}: expected padding at most half the kernel size, got padding "
                f"{self.p} for kernel_size {self.k}."
            )
        lead = len(shp) - n
        self.lead, self.shape = lead, shp
        self.out = tuple(
            _out_size(name, shp, k, s, p, d, bool(ceil_mode), lead + i)
            for i, (k, s, p, d) in enumerate(zip(self.k, self.s, self.p, self.d))
        )
        # Right padding: what the last window needs (more than p in ceil mode).
        self.hi = tuple(
            max(p, (o - 1) * s + d * (k - 1) + 1 - L - p)
            for o, s, k, d, p, L in zip(self.out, self.s, self.k, self.d, self.p, shp[lead:])
        )

    def params(self) -> dict[str, Any]:
        ones = (1,) * self.lead
        return dict(
            window_dimensions=ones + self.k,
            window_strides=ones + self.s,
            padding=((0, 0),) * self.lead + tuple(zip(self.p, self.hi)),
            window_dilation=ones + self.d,
        )


def _max_pool(
    name: str,
    n: int,
    x: Any,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
    return_indices: bool,
) -> Any:
    if return_indices:
        raise NotImplementedError(
            f"{name}: return_indices=True is not supported (expected return_indices=False); "
            "the gradient of max pooling needs no indices."
        )
    w = _Window(name, x, n, kernel_size, stride, padding, dilation, ceil_mode)
    return lax.reduce_window_max(w.x, **w.params())


def _avg_divisor(
    w: _Window, count_include_pad: bool, divisor_override: Any, dtype: np.dtype
) -> Any:
    """PyTorch's divisor per output window: ``divisor_override``, or the window's size
    clipped to the padded input (``count_include_pad``), or its real elements."""
    if divisor_override is not None:
        return np.asarray(divisor_override, dtype)
    counts = []
    for o, s, k, p, size in zip(w.out, w.s, w.k, w.p, w.shape[w.lead :]):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, size + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        counts.append(np.maximum(end - start, 1))
    total = counts[0]
    for c in counts[1:]:
        total = np.multiply.outer(total, c)
    if np.all(total == total.flat[0]):
        return np.asarray(total.flat[0], dtype)
    return total.astype(dtype)


def _avg_pool(
    name: str,
    n: int,
    x: Any,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Any,
) -> Any:
    if divisor_override is not None and (
        isinstance(divisor_override, bool)
        or not isinstance(divisor_override, (int, np.integer))
        or divisor_override <= 0
    ):
        raise ValueError(
            f"{name}: expected divisor_override as a positive int or None, got "
            f"{divisor_override!r}."
        )
    w = _Window(name, x, n, kernel_size, stride, padding, 1, ceil_mode)
    total = lax.reduce_window_sum(w.x, **w.params())
    div = _avg_divisor(w, bool(count_include_pad), divisor_override, dtype_of(w.x))
    return total / div


def max_pool1d(
    input: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """1-d max pooling of ``(N, C, L)`` or ``(C, L)`` input (``torch.nn.functional.
    max_pool1d``): ``stride`` defaults to ``kernel_size``, padding counts as ``-inf``.
    The gradient goes to the first maximal element of each window."""
    args = (kernel_size, stride, padding, dilation, ceil_mode, return_indices)
    return _max_pool("max_pool1d", 1, input, *args)


def max_pool2d(
    input: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """2-d max pooling of ``(N, C, H, W)`` or ``(C, H, W)`` input (``torch.nn.functional.
    max_pool2d``): ``stride`` defaults to ``kernel_size``, padding counts as ``-inf``.
    The gradient goes to the first maximal element of each window."""
    args = (kernel_size, stride, padding, dilation, ceil_mode, return_indices)
    return _max_pool("max_pool2d", 2, input, *args)


def max_pool3d(
    input: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """3-d max pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input
    (``torch.nn.functional.max_pool3d``)."""
    args = (kernel_size, stride, padding, dilation, ceil_mode, return_indices)
    return _max_pool("max_pool3d", 3, input, *args)


def avg_pool1d(
    input: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Any:
    """1-d average pooling (``torch.nn.functional.avg_pool1d``): the sum of each window
    over the real elements, divided by the window size clipped to the padded input
    (``count_include_pad=True``) or by the number of real elements."""
    args = (kernel_size, stride, padding, ceil_mode, count_include_pad, None)
    return _avg_pool("avg_pool1d", 1, input, *args)


def avg_pool2d(
    input: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Any:
    """2-d average pooling (``torch.nn.functional.avg_pool2d``); ``divisor_override``
    replaces every window's divisor."""
    args = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return _avg_pool("avg_pool2d", 2, input, *args)


def avg_pool3d(
    input: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Any:
    """3-d average pooling (``torch.nn.functional.avg_pool3d``)."""
    args = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return _avg_pool("avg_pool3d", 3, input, *args)


# ---------------------------------------------------------------------------
# Adaptive pooling
# ---------------------------------------------------------------------------


def _adaptive_sizes(name: str, output_size: Any, shp: tuple[int, ...], n: int) -> tuple[int, ...]:
    vals = (output_size,) * n if not isinstance(output_size, (tuple, list)) else output_size
    if len(vals) != n:
        raise TypeError(
            f"{name}: expected output_size as an int or a tuple of {n} ints or None, got "
            f"{output_size!r}."
        )
    out = []
    for v, size in zip(vals, shp[len(shp) - n :]):
        if v is None:
            out.append(size)
            continue
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(
                f"{name}: expected output_size entries as positive ints or None, got "
                f"{output_size!r}."
            )
        out.append(int(v))
    if any(s == 0 for s in shp[len(shp) - n :]):
        raise ValueError(f"{name}: expected non-empty spatial dims, got x of shape {shp}.")
    return tuple(out)


def _adaptive_axis(x: Any, axis: int, out: int, is_max: bool) -> Any:
    """Pool one axis into ``out`` bins ``[floor(i L / out), ceil((i + 1) L / out))``."""
    shp = shape_of(x)
    size = shp[axis]
    if size % out == 0:  # equal bins: one windowed reduction
        k = size // out
        win = tuple(k if a == axis else 1 for a in range(len(shp)))
        if is_max:
            return lax.reduce_window_max(x, win, win)
        return lax.reduce_window_sum(x, win, win) / np.asarray(k, dtype_of(x))
    parts = []
    for i in range(out):
        lo, hi = (i * size) // out, -((-(i + 1) * size) // out)
        piece = lax.slice_in_dim(x, lo, hi, axis=axis)
        red = fnp.max if is_max else fnp.mean
        parts.append(red(piece, axis=axis, keepdims=True))
    return fnp.concatenate(parts, axis=axis)


def _adaptive(name: str, n: int, x: Any, output_size: Any, is_max: bool) -> Any:
    x, shp = _spatial_input(name, x, n)
    sizes = _adaptive_sizes(name, output_size, shp, n)
    lead = len(shp) - n
    for i, o in enumerate(sizes):  # bins are products of per-axis bins: pool axis by axis
        x = _adaptive_axis(x, lead + i, o, is_max)
    return x


def adaptive_avg_pool1d(input: Any, output_size: Any) -> Any:
    """Average over ``output_size`` bins of ``L`` (``torch.nn.functional.
    adaptive_avg_pool1d``): bin ``i`` is ``[floor(i L / out), ceil((i + 1) L / out))``."""
    return _adaptive("adaptive_avg_pool1d", 1, input, output_size, False)


def adaptive_avg_pool2d(input: Any, output_size: Any) -> Any:
    """Average over ``output_size`` (an int, or ``(oh, ow)`` with ``None`` keeping a
    size) bins of ``(H, W)``, PyTorch's bins (``torch.nn.functional.
    adaptive_avg_pool2d``)."""
    return _adaptive("adaptive_avg_pool2d", 2, input, output_size, False)


def adaptive_max_pool1d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Maximum over PyTorch's adaptive bins of ``L``."""
    if return_indices:
        raise NotImplementedError(
            "adaptive_max_pool1d: return_indices=True is not supported (expected False)."
        )
    return _adaptive("adaptive_max_pool1d", 1, input, output_size, True)


def adaptive_max_pool2d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Maximum over PyTorch's adaptive bins of ``(H, W)``."""
    if return_indices:
        raise NotImplementedError(
            "adaptive_max_pool2d: return_indices=True is not supported (expected False)."
        )
    return _adaptive("adaptive_max_pool2d", 2, input, output_size, True)


# ---------------------------------------------------------------------------
# Modules
# ---------------------------------------------------------------------------


def _max_pool_init(
    self: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    return_indices: bool = False,
    ceil_mode: bool = False,
) -> None:
    name, n = type(self).__name__, self._n
    if return_indices:
        raise NotImplementedError(
            f"{name}: return_indices=True is not supported (expected False); the "
            "gradient of max pooling needs no indices."
        )
    self.kernel_size = _ntuple(name, "kernel_size", kernel_size, n, 1)
    self.stride = None if stride is None else _ntuple(name, "stride", stride, n, 1)
    self.padding = _ntuple(name, "padding", padding, n, 0)
    self.dilation = _ntuple(name, "dilation", dilation, n, 1)
    self.ceil_mode = bool(ceil_mode)


class _MaxPoolNd(Module):
    kernel_size: Any = field(static=True)
    stride: Any = field(static=True)
    padding: Any = field(static=True)
    dilation: Any = field(static=True)
    ceil_mode: bool = field(static=True)

    _n = 0
    __init__ = _max_pool_init

    def __call__(self, x: Any) -> Any:
        args = (self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)
        return _max_pool(type(self).__name__, self._n, x, *args, False)


class MaxPool1d(_MaxPoolNd):
    """1-d max pooling (``torch.nn.MaxPool1d``): ``MaxPool1d(kernel_size, stride=None,
    padding=0, dilation=1, return_indices=False, ceil_mode=False)`` on ``(N, C, L)`` or
    ``(C, L)``; ``stride`` defaults to ``kernel_size``."""

    _n = 1
    __init__ = _max_pool_init


class MaxPool2d(_MaxPoolNd):
    """2-d max pooling (``torch.nn.MaxPool2d``) on ``(N, C, H, W)`` or ``(C, H, W)``;
    ints or pairs for ``kernel_size``, ``stride`` (default: ``kernel_size``),
    ``padding`` (``-inf``, at most half the kernel) and ``dilation``."""

    _n = 2
    __init__ = _max_pool_init


class MaxPool3d(_MaxPoolNd):
    """3-d max pooling (``torch.nn.MaxPool3d``) on ``(N, C, D, H, W)`` or
    ``(C, D, H, W)``."""

    _n = 3
    __init__ = _max_pool_init


class _AvgPoolNd(Module):
    kernel_size: Any = field(static=True)
    stride: Any = field(static=True)
    padding: Any = field(static=True)
    ceil_mode: bool = field(static=True)
    count_include_pad: bool = field(static=True)
    divisor_override: Any = field(static=True)

    _n = 0

    def _setup(
        self,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: Any,
    ) -> None:
        name, n = type(self).__name__, self._n
        self.kernel_size = _ntuple(name, "kernel_size", kernel_size, n, 1)
        self.stride = None if stride is None else _ntuple(name, "stride", stride, n, 1)
        self.padding = _ntuple(name, "padding", padding, n, 0)
        self.ceil_mode = bool(ceil_mode)
        self.count_include_pad = bool(count_include_pad)
        self.divisor_override = divisor_override

    def __call__(self, x: Any) -> Any:
        args = (self.kernel_size, self.stride, self.padding, self.ceil_mode)
        extra = (self.count_include_pad, self.divisor_override)
        return _avg_pool(type(self).__name__, self._n, x, *args, *extra)


class AvgPool1d(_AvgPoolNd):
    """1-d average pooling (``torch.nn.AvgPool1d``): ``AvgPool1d(kernel_size,
    stride=None, padding=0, ceil_mode=False, count_include_pad=True)``."""

    _n = 1

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        self._setup(kernel_size, stride, padding, ceil_mode, count_include_pad, None)


class AvgPool2d(_AvgPoolNd):
    """2-d average pooling (``torch.nn.AvgPool2d``): ``AvgPool2d(kernel_size,
    stride=None, padding=0, ceil_mode=False, count_include_pad=True,
    divisor_override=None)``; padding counts in the divisor with
    ``count_include_pad=True``, the windows' overhang of ``ceil_mode`` never does."""

    _n = 2

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        args = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        self._setup(*args)


class AvgPool3d(_AvgPoolNd):
    """3-d average pooling (``torch.nn.AvgPool3d``), the parameters of ``AvgPool2d``."""

    _n = 3

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        args = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        self._setup(*args)


def _adaptive_init(self: Any, output_size: Any, return_indices: bool = False) -> None:
    if return_indices:
        raise NotImplementedError(
            f"{type(self).__name__}: return_indices=True is not supported (expected False)."
        )
    self.output_size = tuple(output_size) if isinstance(output_size, list) else output_size


class _AdaptiveNd(Module):
    output_size: Any = field(static=True)

    _n = 0
    _max = False
    __init__ = _adaptive_init

    def __call__(self, x: Any) -> Any:
        return _adaptive(type(self).__name__, self._n, x, self.output_size, self._max)


class AdaptiveAvgPool1d(_AdaptiveNd):
    """``torch.nn.AdaptiveAvgPool1d(output_size)``: averages over ``output_size`` bins,
    bin ``i`` spanning ``[floor(i L / out), ceil((i + 1) L / out))``."""

    _n = 1
    __init__ = _adaptive_init


class AdaptiveAvgPool2d(_AdaptiveNd):
    """``torch.nn.AdaptiveAvgPool2d(output_size)``: an int, or ``(oh, ow)`` where
    ``None`` keeps that size; PyTorch's bins per axis (one windowed sum when the size
    divides evenly)."""

    _n = 2
    __init__ = _adaptive_init


class AdaptiveMaxPool1d(_AdaptiveNd):
    """``torch.nn.AdaptiveMaxPool1d(output_size)``: the maximum over PyTorch's bins."""

    _n = 1
    _max = True
    __init__ = _adaptive_init


class AdaptiveMaxPool2d(_AdaptiveNd):
    """``torch.nn.AdaptiveMaxPool2d(output_size)``: the maximum over PyTorch's bins."""

    _n = 2
    _max = True
    __init__ = _adaptive_init


__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
]
