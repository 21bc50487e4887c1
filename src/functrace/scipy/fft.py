"""functrace.scipy.fft: the discrete cosine transform of type 2 and its inverse
(``dct``, ``dctn``, ``idct``, ``idctn``), traceable (as ``jax.scipy.fft``).

The type-2 DCT of ``x`` (length ``N`` along ``axis``) is
``y[k] = 2 sum_n x[n] cos(pi k (2n + 1) / (2N))`` (``norm=None`` or ``"backward"``);
``norm="ortho"`` scales ``y[0]`` by ``sqrt(1 / (4N))`` and the rest by ``sqrt(1 /
(2N))``, making the transform orthogonal. ``idct`` inverts ``dct`` with the same
``norm``. Both go through one FFT of length ``N`` (the even samples followed by the odd
ones reversed, then a twiddle), so they cost ``O(N log N)`` and differentiate, batch and
jit as the FFT does. As in JAX only type 2 exists (another ``type`` is a
``NotImplementedError``); ``n`` (``s`` for the n-d forms) zero-pads or truncates the
input first, and complex inputs are transformed in their real and imaginary parts.

>>> import numpy as np
>>> np.round(np.asarray(dct(np.array([1.0, 2.0, 3.0]))), 6) + 0.0
array([12.      , -3.464102,  0.      ])
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(fname: str, x: Any, type: int, norm: str | None) -> Any:
    if type != 2:
        raise NotImplementedError(f"{fname}: only the DCT of type 2 exists, got type={type!r}.")
    if norm not in (None, "backward", "ortho"):
        raise ValueError(f"{fname}: expected norm None, 'backward' or 'ortho', got {norm!r}.")
    if not isinstance(x, core.Tracer):
        kind = np.asarray(x).dtype.kind
        if kind not in "biufc":
            raise TypeError(f"{fname}: expected a numeric array, got dtype {np.asarray(x).dtype}.")
        x = fnp.asarray(x)
    if core.get_aval(x).dtype.kind not in "fc":
        x = x.astype(np.float64)
    return x


def _axis(fname: str, axis: Any, ndim: int) -> int:
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"{fname}: expected an axis in [{-ndim}, {ndim}), got {axis}.")
    return a % ndim


def _resize(x: Any, n: int | None, axis: int) -> Any:
    """``x`` zero-padded or truncated to ``n`` along ``axis``."""
    if n is None:
        return x
    size = core.get_aval(x).shape[axis]
    if n < 1:
        raise ValueError(f"dct: expected a transform length n >= 1, got {n}.")
    if n <= size:
        return fnp.take(x, fnp.arange(n), axis=axis)
    pad = [(0, 0)] * len(core.get_aval(x).shape)
    pad[axis] = (0, n - size)
    return fnp.pad(x, pad)


def _along(v: Any, axis: int, ndim: int) -> Any:
    """A 1-d ``v`` shaped to broadcast along ``axis``."""
    shape = [1] * ndim
    shape[axis] = -1
    return fnp.reshape(v, shape)


def _ortho_scale(n: int, dtype: Any) -> np.ndarray:
    s = np.full(n, np.sqrt(1.0 / (2 * n)))
    s[0] = np.sqrt(1.0 / (4 * n))
    return s.astype(dtype)


def _dct1(x: Any, axis: int, norm: str | None) -> Any:
    ndim = len(core.get_aval(x).shape)
    n = core.get_aval(x).shape[axis]
    even = fnp.take(x, fnp.arange(0, n, 2), axis=axis)
    odd = fnp.take(x, fnp.arange(n - 1 - (n % 2 == 1), 0, -2), axis=axis)
    v = fnp.concatenate([even, odd], axis=axis)
    twiddle = np.exp(-0.5j * np.pi * np.arange(n) / n)
    y = 2 * fnp.real(fnp.fft.fft(v, axis=axis) * _along(twiddle, axis, ndim))
    y = y.astype(core.get_aval(x).dtype)
    if norm == "ortho":
        y = y * _along(_ortho_scale(n, core.get_aval(y).dtype), axis, ndim)
    return y


def _idct1(y: Any, axis: int, norm: str | None) -> Any:
    ndim = len(core.get_aval(y).shape)
    n = core.get_aval(y).shape[axis]
    dtype = core.get_aval(y).dtype
    if norm == "ortho":  # back to the unnormalised coefficients
        y = y / _along(_ortho_scale(n, dtype), axis, ndim)
    # The inverse of _dct1: the FFT of the reordered input is
    # V[k] = (y[k] - i y[n - k]) / 2 * exp(i pi k / (2n)), with y[n] taken as 0.
    k = np.arange(n)
    rev = fnp.take(y, (-k) % n, axis=axis) * _along((k > 0).astype(dtype), axis, ndim)
    twiddle = np.exp(0.5j * np.pi * k / n)
    V = (y - 1j * rev) * 0.5 * _along(twiddle, axis, ndim)
    v = fnp.real(fnp.fft.ifft(V, axis=axis)).astype(dtype)
    # undo the reordering: the first ceil(n/2) entries are x[0], x[2], ...; the rest
    # are x[..., 3, 1] reversed
    order = np.empty(n, int)
    order[0::2] = np.arange((n + 1) // 2)
    order[1::2] = np.arange(n - 1, (n + 1) // 2 - 1, -1)
    return fnp.take(v, order, axis=axis)


def _parts(x: Any) -> tuple[Any, Any]:
    return fnp.real(x), fnp.imag(x)


def _along_axis(
    fname: str, one: Any, x: Any, type: int, n: int | None, axis: int, norm: Any
) -> Any:
    """``one`` (``_dct1`` or ``_idct1``) on ``x`` resized to ``n`` along ``axis``;
    complex inputs in their real and imaginary parts."""
    x = _check(fname, x, type, norm)
    if core.get_aval(x).dtype.kind == "c":
        re, im = (_along_axis(fname, one, p, type, n, axis, norm) for p in _parts(x))
        return re + 1j * im
    a = _axis(fname, axis, len(core.get_aval(x).shape))
    return one(_resize(x, n, a), a, norm)


def dct(
    x: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None
) -> Any:
    """The type-2 DCT of ``x`` along ``axis`` (``jax.scipy.fft.dct``; see the module)."""
    return _along_axis("dct", _dct1, x, type, n, axis, norm)


def idct(
    x: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None
) -> Any:
    """The inverse of :func:`dct` with the same ``norm`` (``jax.scipy.fft.idct``).

    >>> import numpy as np
    >>> np.round(np.asarray(idct(dct(np.array([1.0, 2.0, 3.0])))), 12)
    array([1., 2., 3.])
    """
    return _along_axis("idct", _idct1, x, type, n, axis, norm)


def _axes_and_sizes(fname: str, x: Any, s: Any, axes: Any) -> tuple[list[int], list[int | None]]:
    ndim = len(core.get_aval(x).shape)
    if s is not None:
        s = [operator.index(v) for v in s] if isinstance(s, Sequence) else [operator.index(s)]
        if len(s) > ndim:
            raise ValueError(f"{fname}: expected s of at most {ndim} entries, got {len(s)}.")
    if axes is None:
        axes = list(range(ndim - len(s), ndim)) if s is not None else list(range(ndim))
    else:
        axes = [axes] if not isinstance(axes, Sequence) else list(axes)
        axes = [_axis(fname, a, ndim) for a in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fname}: expected distinct axes, got {axes}.")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{fname}: expected s and axes of one length, got {s} and {axes}.")
    return axes, list(s) if s is not None else [None] * len(axes)


def _along_axes(fname: str, one: Any, x: Any, type: int, s: Any, axes: Any, norm: Any) -> Any:
    x = _check(fname, x, type, norm)
    if core.get_aval(x).dtype.kind == "c":
        re, im = (_along_axes(fname, one, p, type, s, axes, norm) for p in _parts(x))
        return re + 1j * im
    for a, size in zip(*_axes_and_sizes(fname, x, s, axes)):
        x = one(_resize(x, size, a), a, norm)
    return x


def dctn(
    x: Any,
    type: int = 2,
    s: Sequence[int] | int | None = None,
    axes: Sequence[int] | int | None = None,
    norm: str | None = None,
) -> Any:
    """The type-2 DCT of ``x`` along each of ``axes`` (all of them by default, or the
    last ``len(s)``), each first padded or truncated to ``s`` (``jax.scipy.fft.dctn``)."""
    return _along_axes("dctn", _dct1, x, type, s, axes, norm)


def idctn(
    x: Any,
    type: int = 2,
    s: Sequence[int] | int | None = None,
    axes: Sequence[int] | int | None = None,
    norm: str | None = None,
) -> Any:
    """The inverse of :func:`dctn` with the same ``axes`` and ``norm``
    (``jax.scipy.fft.idctn``)."""
    return _along_axes("idctn", _idct1, x, type, s, axes, norm)
