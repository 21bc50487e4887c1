"""functrace.scipy.signal: convolution, correlation, detrending and spectral analysis
(``stft``, ``istft``, ``csd``, ``welch``), traceable (as ``jax.scipy.signal``).

Convolutions are direct (``lax.conv_general_dilated``, so they differentiate, batch
and jit like any convolution layer); ``method`` and ``precision`` are accepted for
JAX's signatures and do not change the computation. Inputs are promoted to floating
point (as JAX: integer inputs give float64); complex inputs are not supported by the
convolutions. The spectral functions live in ``_signal_spectral`` (windowed FFTs of
``functrace.numpy.fft``; complex inputs allowed; windows computed by formula).

>>> [float(v) for v in convolve([1.0, 2.0, 3.0], [0.0, 1.0, 0.5])]
[0.0, 1.0, 2.5, 4.0, 1.5]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace import lax as lx
from functrace.scipy._signal_spectral import csd, istft, stft, welch
from functrace.scipy._util import floats

__all__ = [
    "convolve",
    "convolve2d",
    "correlate",
    "correlate2d",
    "csd",
    "detrend",
    "fftconvolve",
    "istft",
    "stft",
    "welch",
]

_MODES = ("full", "same", "valid")


def _check_mode(fname: str, mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"{fname}: expected mode in {_MODES}, got {mode!r}.")


def _inputs(fname: str, in1: Any, in2: Any) -> tuple[Any, Any]:
    a, b = floats(fname, in1, in2, broadcast=False)
    sa, sb = core.get_aval(a).shape, core.get_aval(b).shape
    if len(sa) != len(sb):
        raise ValueError(
            f"{fname}: expected in1 and in2 of the same number of dimensions, got shapes "
            f"{sa} and {sb}."
        )
    if 0 in sa or 0 in sb:
        raise ValueError(f"{fname}: expected non-empty inputs, got shapes {sa} and {sb}.")
    return a, b


def _conv_axes(fname: str, a: Any, b: Any, mode: str, axes: Sequence[int]) -> Any:
    """The convolution of ``a`` and ``b`` over ``axes`` (the other axes broadcast):
    one grouped ``conv_general_dilated`` with a group per position of the others."""
    nd = core.get_aval(a).ndim
    sa, sb = core.get_aval(a).shape, core.get_aval(b).shape
    axes = sorted({ax % nd for ax in axes}) if nd else []
    if not axes:
        return a * b
    others = [d for d in range(nd) if d not in axes]
    batch = tuple(np.broadcast_shapes(*((sa[d],), (sb[d],))) for d in others)
    batch_shape = tuple(s[0] for s in batch)
    if mode == "valid":
        if not (all(sa[d] >= sb[d] for d in axes) or all(sb[d] >= sa[d] for d in axes)):
            raise ValueError(
                f"{fname}: mode='valid' expects one input at least as large as the other "
                f"along every convolved axis, got shapes {sa} and {sb}."
            )
        if any(sb[d] > sa[d] for d in axes):  # the convolution commutes
            a, b, sa, sb = b, a, sb, sa
    # a: (1, groups, *spatial) and b flipped: (groups, 1, *spatial)
    perm = others + axes
    a_t = fnp.broadcast_to(fnp.transpose(a, perm), batch_shape + tuple(sa[d] for d in axes))
    b_t = fnp.broadcast_to(fnp.transpose(b, perm), batch_shape + tuple(sb[d] for d in axes))
    groups = int(np.prod(batch_shape, dtype=np.int64))
    spatial_a = tuple(sa[d] for d in axes)
    spatial_b = tuple(sb[d] for d in axes)
    lhs = fnp.reshape(a_t, (1, groups) + spatial_a)
    rhs = fnp.reshape(fnp.flip(b_t, axis=tuple(range(len(batch_shape), b_t.ndim))),
                      (groups, 1) + spatial_b)  # fmt: skip
    pads = []
    for n2 in spatial_b:
        if mode == "full":
            pads.append((n2 - 1, n2 - 1))
        elif mode == "same":
            start = (n2 - 1) // 2  # SciPy's centring of the full result
            pads.append((n2 - 1 - start, start))
        else:
            pads.append((0, 0))
    out = lx.conv_general_dilated(lhs, rhs, (1,) * len(axes), pads, feature_group_count=groups)
    out = fnp.reshape(out, batch_shape + tuple(core.get_aval(out).shape[2:]))
    inv = np.argsort(perm)
    return fnp.transpose(out, tuple(int(i) for i in inv))


def convolve(
    in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision: Any = None
) -> Any:
    """The N-dimensional convolution of ``in1`` and ``in2`` (same number of
    dimensions): ``mode`` ``"full"`` (every overlap), ``"same"`` (the size of ``in1``,
    centred as SciPy) or ``"valid"`` (full overlaps only; one input must be at least as
    large as the other along every axis).

    >>> [float(v) for v in convolve([1.0, 2.0, 3.0], [1.0, 1.0], mode="valid")]
    [3.0, 5.0]
    """
    _check_mode("convolve", mode)
    a, b = _inputs("convolve", in1, in2)
    return _conv_axes("convolve", a, b, mode, range(core.get_aval(a).ndim))


def correlate(
    in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision: Any = None
) -> Any:
    """The N-dimensional cross-correlation of ``in1`` and ``in2``: the convolution of
    ``in1`` with ``in2`` reversed along every axis (modes as :func:`convolve`).

    >>> [float(v) for v in correlate([1.0, 2.0, 3.0], [0.0, 1.0, 0.5], mode="same")]
    [2.0, 3.5, 3.0]
    """
    _check_mode("correlate", mode)
    a, b = _inputs("correlate", in1, in2)
    nd = core.get_aval(a).ndim
    b = fnp.flip(b, axis=tuple(range(nd))) if nd else b
    if mode == "same" or mode == "full":
        return _correlate_centred(a, b, mode)
    return _conv_axes("correlate", a, b, mode, range(nd))


def _correlate_centred(a: Any, b_flipped: Any, mode: str) -> Any:
    # SciPy centres correlate's "same" on the full correlation, which for an even-sized
    # in2 is one place off the convolution's centring: take it from the full result
    # (correlate2d keeps convolve2d's centring, as SciPy's does)
    nd = core.get_aval(a).ndim
    full = _conv_axes("correlate", a, b_flipped, "full", range(nd))
    if mode == "full":
        return full
    sa = core.get_aval(a).shape
    sf = core.get_aval(full).shape
    idx = tuple(slice((f - s) // 2, (f - s) // 2 + s) for f, s in zip(sf, sa))
    return full[idx]


_BOUNDARIES = {"fill": "constant", "pad": "constant", "wrap": "wrap", "circular": "wrap",
               "symm": "symmetric", "symmetric": "symmetric"}  # fmt: skip


def _conv2d(fname: str, in1: Any, in2: Any, mode: str, boundary: str, fillvalue: Any,
            flip: bool) -> Any:  # fmt: skip
    _check_mode(fname, mode)
    if boundary not in _BOUNDARIES:
        raise ValueError(f"{fname}: expected boundary in {tuple(_BOUNDARIES)}, got {boundary!r}.")
    a, b = _inputs(fname, in1, in2)
    if core.get_aval(a).ndim != 2:
        raise ValueError(
            f"{fname}: expected 2-D inputs, got shapes {core.get_aval(a).shape} and "
            f"{core.get_aval(b).shape}."
        )
    if flip:
        b = fnp.flip(b, axis=(0, 1))
    sa, sb = core.get_aval(a).shape, core.get_aval(b).shape
    if mode == "valid":
        return _conv_axes(fname, a, b, "valid", (0, 1))
    if boundary in ("fill", "pad") and fillvalue == 0:
        full = _conv_axes(fname, a, b, "full", (0, 1))
    else:  # extend in1 by the kernel's reach; its valid convolution is the full one
        kind = _BOUNDARIES[boundary]
        pad = [(n - 1, n - 1) for n in sb]
        if kind == "constant":
            ext = fnp.pad(a, pad, mode="constant", constant_values=fillvalue)
        else:
            ext = fnp.pad(a, pad, mode=kind)
        full = _conv_axes(fname, ext, b, "valid", (0, 1))
    if mode == "full":
        return full
    # SciPy's centring: (n - 1) // 2 into the full convolution, n // 2 into the full
    # correlation (for an even-sized in2 the two differ by one)
    starts = [n // 2 if flip else (n - 1) // 2 for n in sb]
    return full[tuple(slice(st, st + s) for st, s in zip(starts, sa))]


def convolve2d(
    in1: Any,
    in2: Any,
    mode: str = "full",
    boundary: str = "fill",
    fillvalue: Any = 0,
    precision: Any = None,
) -> Any:
    """The 2-D convolution of ``in1`` and ``in2`` (modes as :func:`convolve`).

    ``boundary``: ``"fill"`` (pad ``in1`` with ``fillvalue``), ``"wrap"`` (periodic) or
    ``"symm"`` (mirrored), as SciPy (JAX supports only ``"fill"`` with 0).

    >>> import numpy as np
    >>> convolve2d(np.ones((2, 2)), np.ones((2, 2))).tolist()
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    return _conv2d("convolve2d", in1, in2, mode, boundary, fillvalue, False)


def correlate2d(
    in1: Any,
    in2: Any,
    mode: str = "full",
    boundary: str = "fill",
    fillvalue: Any = 0,
    precision: Any = None,
) -> Any:
    """The 2-D cross-correlation of ``in1`` and ``in2`` (modes and boundaries as
    :func:`convolve2d`).

    >>> import numpy as np
    >>> correlate2d(np.eye(2), np.eye(2), mode="valid").tolist()
    [[2.0]]
    """
    return _conv2d("correlate2d", in1, in2, mode, boundary, fillvalue, True)


def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> Any:
    """The convolution of ``in1`` and ``in2`` over ``axes`` (all by default; the other
    axes broadcast), as SciPy's ``fftconvolve``.

    NOTE: computed as a direct convolution, not with FFTs: the values agree to rounding,
    the cost is ``O(n m)`` rather than ``O(n log n)``, which is slower only for long
    inputs with long kernels.

    >>> [float(v) for v in fftconvolve([1.0, 2.0], [1.0, 1.0])]
    [1.0, 3.0, 2.0]
    """
    _check_mode("fftconvolve", mode)
    a, b = _inputs("fftconvolve", in1, in2)
    nd = core.get_aval(a).ndim
    if axes is None:
        axes = range(nd)
    elif isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    for ax in axes:
        if not -nd <= ax < nd:
            raise ValueError(f"fftconvolve: axis {ax} is out of bounds for {nd} dimensions.")
    sa, sb = core.get_aval(a).shape, core.get_aval(b).shape
    # (as SciPy: an axis where either input has length 1 broadcasts instead)
    conv = {d % nd for d in axes if sa[d % nd] != 1 and sb[d % nd] != 1}
    for d in range(nd):
        if d not in conv and sa[d] != sb[d] and 1 not in (sa[d], sb[d]):
            raise ValueError(
                f"fftconvolve: expected in1 and in2 to match (or be 1) along the axes not "
                f"convolved, got shapes {sa} and {sb} at axis {d}."
            )
    out = _conv_axes("fftconvolve", a, b, mode, sorted(conv))
    if mode == "same":  # SciPy crops every axis to in1's size, broadcast ones included
        so = core.get_aval(out).shape
        out = out[tuple(slice((o - s) // 2, (o - s) // 2 + s) for o, s in zip(so, sa))]
    return out


def detrend(
    data: Any, axis: int = -1, type: str = "linear", bp: Any = 0, overwrite_data: Any = None
) -> Any:
    """``data`` minus its least-squares fit along ``axis``: a line (``type="linear"``,
    one per piece between the breakpoints ``bp``) or the mean (``type="constant"``).

    >>> [round(float(v), 12) + 0.0 for v in detrend([1.0, 2.0, 3.0, 5.0])]
    [0.2, -0.1, -0.4, 0.3]
    """
    if type in ("constant", "c"):
        (x,) = floats("detrend", data)
        return x - fnp.mean(x, axis=axis, keepdims=True)
    if type not in ("linear", "l"):
        raise ValueError(f"detrend: expected type 'linear' or 'constant', got {type!r}.")
    (x,) = floats("detrend", data)
    nd = core.get_aval(x).ndim
    if nd == 0:
        raise ValueError("detrend: expected an array of at least one dimension, got a scalar.")
    x = fnp.moveaxis(x, axis, -1)
    n = core.get_aval(x).shape[-1]
    if isinstance(bp, core.Tracer):
        raise TypeError("detrend: expected concrete breakpoints bp, got a traced value.")
    cuts = sorted({0, n, *(int(v) for v in np.atleast_1d(bp))})
    if cuts[0] < 0 or cuts[-1] > n:
        raise ValueError(
            f"detrend: expected breakpoints within [0, {n}], got {list(np.atleast_1d(bp))}."
        )
    pieces = []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        seg = x[..., lo:hi]
        m = hi - lo
        t = np.arange(m, dtype=np.float64)
        t = (t - t.mean()).astype(core.get_aval(x).dtype)
        tt = float(np.sum(t * t))
        mean = fnp.mean(seg, axis=-1, keepdims=True)
        slope = fnp.sum(seg * t, axis=-1, keepdims=True) / tt if tt > 0 else 0.0
        pieces.append(seg - mean - slope * t)
    out = fnp.concatenate(pieces, axis=-1) if len(pieces) > 1 else pieces[0]
    return fnp.moveaxis(out, -1, axis)
