"""functrace.numpy.fft: NumPy's ``numpy.fft`` (JAX's ``jax.numpy.fft``) on arrays and
tracers alike.

Plain NumPy inputs call NumPy (same values, dtypes and result types). Traced inputs go
through the primitive ``functrace.lax.fft``, so every transform differentiates (forward
and reverse, any order), batches and jits: the axes transformed are moved to the end,
padded with zeros or cropped to the lengths asked for (``n``, ``s``), transformed, and
moved back, then scaled for ``norm``.

Decisions (NumPy's arguments, JAX's values where NumPy has none):

* dtypes as NumPy's: float32 (and float16) give complex64, float64 and integers
  complex128; the inverse real transforms give float32 / float64.
* ``norm`` is ``None`` or ``"backward"`` (the inverse transforms divide by the number
  of points), ``"ortho"`` (both by its square root) or ``"forward"`` (the forward ones
  divide).
* ``s`` without ``axes`` names the last ``len(s)`` axes; an axis named twice is a
  ``ValueError`` (JAX's rule: NumPy would transform it twice).
* A transform of length 0 on traced inputs gives an empty result (JAX's value; NumPy
  raises). ``rfft`` of a complex input is a ``TypeError``, as in NumPy.
* ``fftfreq``/``rfftfreq`` take JAX's ``dtype`` (default float64) and return
  ``functrace.Array``s, as the creation functions do; ``d`` may be traced.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace._array import to_array
from functrace.core import Tracer
from functrace.lax import fourier as lf
from functrace.lax import shapes as ls
from functrace.lax.base import full_like, mul
from functrace.lax.extras import conj
from functrace.numpy._core import asarray_or_tracer, cast, dtype_arg, normalize_axis, slice_along
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._math import true_divide
from functrace.numpy._shape import roll

_NORMS = (None, "backward", "ortho", "forward")
_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}
_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _operand(fname: str, a: Any) -> Any:
    x = asarray_or_tracer(a, fname)
    return x if isinstance(x, Tracer) else np.asarray(x)


def _check_norm(fname: str, norm: Any) -> None:
    if norm not in _NORMS:
        raise ValueError(
            f"{fname}: expected norm None, 'backward', 'ortho' or 'forward', got {norm!r}."
        )


def _as_complex(x: Any) -> Any:
    dt = np.dtype(core.get_aval(x).dtype)
    if dt.kind == "c":
        return x
    return cast(x, _C64 if dt in (np.dtype(np.float16), _F32) else _C128)


def _as_real(fname: str, x: Any) -> Any:
    dt = np.dtype(core.get_aval(x).dtype)
    if dt.kind == "c":
        raise TypeError(f"{fname}: expected a real input, got {dt.name}. Use fft for complex.")
    if dt in (_F32, _F64):
        return x
    return cast(x, _F32 if dt == np.dtype(np.float16) else _F64)


def _resize(x: Any, axis: int, n: int) -> Any:
    """``x`` cropped or zero-padded at the end of ``axis`` to ``n`` elements."""
    shape = core.get_aval(x).shape
    size = shape[axis]
    if n < size:
        return slice_along(x, 0, n, axis)
    if n > size:
        config = [(0, n - size if i == axis else 0, 0) for i in range(len(shape))]
        return ls.pad(x, np.zeros((), core.get_aval(x).dtype), config)
    return x


def _axes_and_lengths(
    fname: str, shape: tuple[int, ...], s: Any, axes: Any, kind: str
) -> tuple[list[int], list[int]]:
    ndim = len(shape)
    if s is not None:
        s = [int(n) for n in ([s] if isinstance(s, (int, np.integer)) else s)]
    if axes is None:
        axes = list(range(ndim)) if s is None else list(range(ndim - len(s), ndim))
        if s is not None and len(s) > ndim:
            raise ValueError(
                f"{fname}: expected at most {ndim} lengths in s for an input of "
                f"{ndim} dimensions, got s={tuple(s)}."
            )
    else:
        axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    axes = [normalize_axis(fname, a, ndim) for a in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fname}: expected distinct axes, got {tuple(axes)}.")
    if not axes:
        raise ValueError(f"{fname}: expected at least one axis to transform, got none.")
    if s is None:
        s = [shape[a] for a in axes]
        if kind == "irfft":
            s[-1] = max(2 * (s[-1] - 1), 0)
    elif len(s) != len(axes):
        raise ValueError(
            f"{fname}: expected one length in s per axis, got s={tuple(s)} for axes {tuple(axes)}."
        )
    if any(n < 0 for n in s):
        raise ValueError(f"{fname}: expected non-negative lengths, got {tuple(s)}.")
    return axes, s


def _transform(fname: str, a: Any, s: Any, axes: Any, norm: Any, kind: str) -> Any:
    """The transform ``kind`` ("fft", "ifft", "rfft", "irfft") over ``axes``."""
    _check_norm(fname, norm)
    x = _operand(fname, a)
    shape = tuple(core.get_aval(x).shape)
    axes, s = _axes_and_lengths(fname, shape, s, axes, kind)
    x = _as_real(fname, x) if kind == "rfft" else _as_complex(x)
    for i, (ax, n) in enumerate(zip(axes, s)):
        last = i == len(axes) - 1
        x = _resize(x, ax, n // 2 + 1 if kind == "irfft" and last else n)
    ndim = len(shape)
    perm = [i for i in range(ndim) if i not in axes] + axes
    moved = perm != list(range(ndim))
    if moved:
        x = ls.transpose(x, tuple(perm))
    y = lf.fft(x, kind, tuple(s))
    if moved:
        y = ls.transpose(y, tuple(int(i) for i in np.argsort(perm)))
    total = math.prod(s)
    inverse = kind in ("ifft", "irfft")
    scale = 1.0  # lax's IFFT/IRFFT divide by the number of points already
    if total and norm == "ortho":
        scale = math.sqrt(total) if inverse else 1 / math.sqrt(total)
    elif total and norm == "forward":
        scale = total if inverse else 1 / total
    return y if scale == 1.0 else mul(y, full_like(y, scale))


def _one(n: Any) -> Any:
    return None if n is None else (n,)


@numpy_path(np.fft.fft)
def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional discrete Fourier transform along ``axis``, of ``n`` points
    (the input cropped or zero-padded).

    >>> import functrace.numpy as fnp
    >>> fnp.fft.fft(fnp.array([1.0, 0.0, -1.0, 0.0]))
    Array([0.+0.j, 2.+0.j, 0.+0.j, 2.+0.j])
    """
    return _transform("fft", a, _one(n), (axis,), norm, "fft")


@numpy_path(np.fft.ifft)
def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of :func:`fft` (divided by ``n`` for the default ``norm``).

    >>> import numpy as np
    >>> ifft(np.array([4.0, 0.0, 0.0, 0.0]))
    array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    return _transform("ifft", a, _one(n), (axis,), norm, "ifft")


@numpy_path(np.fft.rfft)
def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The transform of a real input: the ``n // 2 + 1`` non-negative frequencies.

    >>> import numpy as np
    >>> rfft(np.array([1.0, 2.0, 3.0, 4.0]))
    array([10.+0.j, -2.+2.j, -2.+0.j])
    """
    return _transform("rfft", a, _one(n), (axis,), norm, "rfft")


@numpy_path(np.fft.irfft)
def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of :func:`rfft`: ``n`` real points (default ``2 * (m - 1)`` for ``m``
    input points; the input is cropped or zero-padded to ``n // 2 + 1``).

    >>> import numpy as np
    >>> irfft(np.array([10.0, -2 + 2j, -2.0]))
    array([1., 2., 3., 4.])
    """
    return _transform("irfft", a, _one(n), (axis,), norm, "irfft")


@numpy_path(np.fft.hfft)
def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The transform of a signal with Hermitian symmetry given by its first half: a
    real result of ``n`` points (default ``2 * (m - 1)``).

    >>> import numpy as np
    >>> hfft(np.array([1.0, 2.0, 3.0]))
    array([ 8., -2.,  0., -2.])
    """
    _check_norm("hfft", norm)
    x = _operand("hfft", a)
    return _transform("hfft", conj(_as_complex(x)), _one(n), (axis,), _SWAP[norm], "irfft")


@numpy_path(np.fft.ihfft)
def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of :func:`hfft`, of a real input: ``n // 2 + 1`` complex points.

    >>> import numpy as np
    >>> ihfft(np.array([8.0, -2.0, 0.0, -2.0]))
    array([1.-0.j, 2.-0.j, 3.-0.j])
    """
    _check_norm("ihfft", norm)
    return conj(_transform("ihfft", a, _one(n), (axis,), _SWAP[norm], "rfft"))


@numpy_path(np.fft.fft2)
def fft2(a: Any, s: Any = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Any:
    """:func:`fftn` over two axes (the last two by default).

    >>> import numpy as np
    >>> fft2(np.ones((2, 2)))
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]])
    """
    return _transform("fft2", a, s, axes, norm, "fft")


@numpy_path(np.fft.ifft2)
def ifft2(a: Any, s: Any = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Any:
    """:func:`ifftn` over two axes (the last two by default).

    >>> import numpy as np
    >>> ifft2(np.array([[4.0, 0.0], [0.0, 0.0]])).real
    array([[1., 1.],
           [1., 1.]])
    """
    return _transform("ifft2", a, s, axes, norm, "ifft")


@numpy_path(np.fft.rfft2)
def rfft2(a: Any, s: Any = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Any:
    """:func:`rfftn` over two axes (the last two by default).

    >>> import numpy as np
    >>> rfft2(np.ones((2, 2)))
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]])
    """
    return _transform("rfft2", a, s, axes, norm, "rfft")


@numpy_path(np.fft.irfft2)
def irfft2(a: Any, s: Any = None, axes: Sequence[int] = (-2, -1), norm: str | None = None) -> Any:
    """:func:`irfftn` over two axes (the last two by default).

    >>> import numpy as np
    >>> irfft2(np.array([[4.0, 0.0], [0.0, 0.0]]))
    array([[1., 1.],
           [1., 1.]])
    """
    return _transform("irfft2", a, s, axes, norm, "irfft")


@numpy_path(np.fft.fftn)
def fftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None) -> Any:
    """The n-dimensional transform over ``axes`` (all by default; the last ``len(s)``
    if only ``s`` is given), the input cropped or zero-padded to the lengths ``s``.

    >>> import numpy as np
    >>> fftn(np.ones((2, 2))).real
    array([[4., 0.],
           [0., 0.]])
    """
    return _transform("fftn", a, s, axes, norm, "fft")


@numpy_path(np.fft.ifftn)
def ifftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None) -> Any:
    """The inverse of :func:`fftn`.

    >>> import numpy as np
    >>> ifftn(np.array([[4.0, 0.0], [0.0, 0.0]])).real
    array([[1., 1.],
           [1., 1.]])
    """
    return _transform("ifftn", a, s, axes, norm, "ifft")


@numpy_path(np.fft.rfftn)
def rfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None) -> Any:
    """The n-dimensional transform of a real input: the last axis in ``axes`` keeps
    its ``n // 2 + 1`` non-negative frequencies.

    >>> import numpy as np
    >>> rfftn(np.ones((2, 2))).real
    array([[4., 0.],
           [0., 0.]])
    """
    return _transform("rfftn", a, s, axes, norm, "rfft")


@numpy_path(np.fft.irfftn)
def irfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None) -> Any:
    """The inverse of :func:`rfftn`; the last length defaults to ``2 * (m - 1)``.

    >>> import numpy as np
    >>> irfftn(np.array([[4.0, 0.0], [0.0, 0.0]]))
    array([[1., 1.],
           [1., 1.]])
    """
    return _transform("irfftn", a, s, axes, norm, "irfft")


def _freq(fname: str, k: np.ndarray, n: Any, d: Any, dtype: Any) -> Any:
    if isinstance(n, Tracer) or not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"{fname}: expected n, a Python int, got {n!r}.")
    if n <= 0:
        raise ValueError(f"{fname}: expected n > 0, got {n}.")
    dt = dtype_arg(dtype) or _F64
    if isinstance(d, Tracer):
        return true_divide(np.asarray(k / n, dt), d)
    return to_array(np.asarray(k / (n * d), dt))


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of :func:`fft` of ``n`` points spaced by ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d n)``.

    >>> import functrace.numpy as fnp
    >>> fnp.fft.fftfreq(4)
    Array([ 0.  ,  0.25, -0.5 , -0.25])
    """
    k = np.concatenate([np.arange(0, (int(n) - 1) // 2 + 1), np.arange(-(int(n) // 2), 0)])
    return _freq("fftfreq", k, n, d, dtype)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of :func:`rfft` of ``n`` points spaced by ``d``:
    ``[0, 1, ..., n // 2] / (d n)``.

    >>> import functrace.numpy as fnp
    >>> fnp.fft.rfftfreq(4)
    Array([0.  , 0.25, 0.5 ])
    """
    return _freq("rfftfreq", np.arange(0, int(n) // 2 + 1), n, d, dtype)


def _shift(fname: str, x: Any, axes: Any, sign: int) -> Any:
    x = _operand(fname, x)
    shape = core.get_aval(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    axes = tuple(normalize_axis(fname, a, len(shape)) for a in axes)
    if not axes:
        return x
    return roll(x, tuple(sign * (shape[a] // 2) for a in axes), axes)


@numpy_path(np.fft.fftshift)
def fftshift(x: Any, axes: Any = None) -> Any:
    """The zero frequency moved to the middle of ``axes`` (all by default).

    >>> import numpy as np
    >>> fftshift(np.array([0, 1, 2, -2, -1]))
    array([-2, -1,  0,  1,  2])
    """
    return _shift("fftshift", x, axes, 1)


@numpy_path(np.fft.ifftshift)
def ifftshift(x: Any, axes: Any = None) -> Any:
    """The inverse of :func:`fftshift`.

    >>> import numpy as np
    >>> ifftshift(np.array([-2, -1, 0, 1, 2]))
    array([ 0,  1,  2, -2, -1])
    """
    return _shift("ifftshift", x, axes, -1)


__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]
