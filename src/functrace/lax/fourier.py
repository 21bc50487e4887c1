"""The discrete Fourier transform primitive ``fft`` of ``jax.lax`` (``lax.fft``,
``lax.FftType``), on which ``functrace.numpy.fft`` is built.

``fft(x, fft_type, fft_lengths)`` transforms the trailing ``len(fft_lengths)`` axes of
``x`` (any number of them; JAX's XLA backend takes at most three):

* ``FFT`` / ``IFFT``: complex to complex, the unnormalised forward transform and the
  inverse one (divided by ``prod(fft_lengths)``), as ``numpy.fft.fftn``/``ifftn``;
* ``RFFT``: real to complex, the last axis becoming ``n // 2 + 1`` long
  (``numpy.fft.rfftn``);
* ``IRFFT``: complex to real, the inverse of ``RFFT``: the input's last axis is
  ``fft_lengths[-1] // 2 + 1`` long, the output's ``fft_lengths[-1]``
  (``numpy.fft.irfftn``; the imaginary parts of the bins a real signal's transform
  has real, the zero frequency and for even lengths the Nyquist one, are ignored).

One block with all its rules: NumPy impl (``numpy.fft``; ``jit``'s driver calls it, as
for the linear-algebra primitives), abstract eval (eager calls run it too), JVP (the
primitive is linear), transpose and batching (the batch axis goes in front: transforms
act on the trailing axes). Decisions (JAX's semantics unless noted):

* dtypes: float32 gives complex64 and float64 complex128 (and back for ``IRFFT``).
  The function ``fft`` converts its operand as JAX's does: real or integer operands of
  ``FFT``/``IFFT``/``IRFFT`` become complex, integer operands of ``RFFT`` float64; a
  complex operand of ``RFFT`` is a ``ValueError``. The primitive itself takes float or
  complex operands only (a ``TypeError`` naming ``fft`` otherwise).
* transposes, with JAX's convention for complex cotangents: the unnormalised DFT
  matrix is symmetric, so ``FFT``'s transpose is ``FFT`` and ``IFFT``'s ``IFFT``;
  ``RFFT``'s is the real part of the ``FFT`` of the cotangent zero-padded to the full
  last axis (the transpose of "FFT of a real signal, keep the first half");
  ``IRFFT``'s is the conjugate of ``RFFT`` of the cotangent divided by the length, the
  bins that stand for two (all but the zero frequency and, for even lengths, the
  Nyquist one) counted twice.
* zero lengths: a transform of length 0 gives zeros of the output shape (JAX's value;
  ``numpy.fft`` raises).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.lax._util import register
from functrace.lax.base import convert_element_type, mul
from functrace.lax.extras import conj, real
from functrace.lax.shapes import broadcast_in_dim, pad


class FftType(enum.IntEnum):
    """The kind of transform of :func:`fft` (JAX's names and values)."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3

    def __str__(self) -> str:  # how an equation prints it: fft_type=FFT
        return self.name


_COMPLEX_OF: dict[np.dtype, np.dtype] = {
    np.dtype(np.float16): np.dtype(np.complex64),
    np.dtype(np.float32): np.dtype(np.complex64),
    np.dtype(np.float64): np.dtype(np.complex128),
    np.dtype(np.complex64): np.dtype(np.complex64),
    np.dtype(np.complex128): np.dtype(np.complex128),
}
_REAL_OF: dict[np.dtype, np.dtype] = {
    np.dtype(np.complex64): np.dtype(np.float32),
    np.dtype(np.complex128): np.dtype(np.float64),
}


def fft_type_of(fft_type: Any, name: str = "fft") -> FftType:
    """``fft_type`` as an :class:`FftType`: a member, its value, or its name in any case
    ("fft", "ifft", "rfft", "irfft")."""
    if isinstance(fft_type, str):
        member = FftType.__members__.get(fft_type.upper())
        if member is not None:
            return member
    elif isinstance(fft_type, (int, np.integer)) and not isinstance(fft_type, bool):
        if 0 <= int(fft_type) <= 3:
            return FftType(int(fft_type))
    raise ValueError(
        f"{name}: expected fft_type FftType.FFT, IFFT, RFFT or IRFFT (or 'fft', 'ifft', "
        f"'rfft', 'irfft'), got {fft_type!r}."
    )


def _lengths(fft_lengths: Any, name: str = "fft") -> tuple[int, ...]:
    if isinstance(fft_lengths, (int, np.integer)):
        fft_lengths = (fft_lengths,)
    try:
        out = tuple(int(n) for n in fft_lengths)
        ok = all(isinstance(n, (int, np.integer)) for n in fft_lengths)
    except TypeError:
        ok = False
    if not ok or not out or any(n < 0 for n in out):
        raise ValueError(
            f"{name}: expected fft_lengths, a non-empty sequence of non-negative ints, "
            f"got {fft_lengths!r}."
        )
    return out


def _out_shape(shape: tuple[int, ...], t: FftType, lengths: tuple[int, ...]) -> tuple[int, ...]:
    k = len(lengths)
    if len(shape) < k:
        raise ValueError(
            f"fft: expected an operand of at least {k} dimensions for fft_lengths "
            f"{lengths}, got shape {shape}."
        )
    lead, tail = shape[: len(shape) - k], shape[len(shape) - k :]
    if t == FftType.IRFFT:
        want = (*lengths[:-1], lengths[-1] // 2 + 1)
        if tail != want:
            raise ValueError(
                f"fft: expected for IRFFT with fft_lengths {lengths} an operand whose "
                f"trailing dimensions are {want} (the last one fft_lengths[-1] // 2 + 1), "
                f"got shape {shape}."
            )
        return (*lead, *lengths)
    if tail != lengths:
        raise ValueError(
            f"fft: expected for {t.name} an operand whose trailing dimensions equal "
            f"fft_lengths {lengths}, got shape {shape}."
        )
    if t == FftType.RFFT:
        return (*lead, *lengths[:-1], lengths[-1] // 2 + 1)
    return shape


def _fft_abstract(x: ShapedArray, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> Any:
    t = FftType(fft_type)
    dt = np.dtype(x.dtype)
    out_dt: np.dtype
    if t == FftType.RFFT:
        if dt.kind != "f":
            raise TypeError(f"fft: expected a real floating-point operand for RFFT, got {dt.name}.")
        out_dt = _COMPLEX_OF[dt]
    else:
        if dt.kind != "c":
            raise TypeError(f"fft: expected a complex operand for {t.name}, got {dt.name}.")
        out_dt = _REAL_OF[dt] if t == FftType.IRFFT else dt
    return ShapedArray(_out_shape(tuple(x.shape), t, tuple(fft_lengths)), out_dt)


def _fft_impl(x: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> Any:
    aval = _fft_abstract(core.get_aval(x), fft_type=fft_type, fft_lengths=fft_lengths)
    a = np.asarray(x)
    if 0 in fft_lengths or a.size == 0 or math.prod(aval.shape) == 0:
        return np.zeros(aval.shape, aval.dtype)
    axes = tuple(range(a.ndim - len(fft_lengths), a.ndim))
    t = FftType(fft_type)
    out: Any
    if t == FftType.FFT:
        out = np.fft.fftn(a, axes=axes)
    elif t == FftType.IFFT:
        out = np.fft.ifftn(a, axes=axes)
    elif t == FftType.RFFT:
        out = np.fft.rfftn(a, axes=axes)
    else:
        out = np.fft.irfftn(a, s=fft_lengths, axes=axes)
    return np.asarray(out, aval.dtype)


fft_p = register(Primitive("fft"), _fft_impl, _fft_abstract)


def fft(x: Any, fft_type: Any, fft_lengths: Sequence[int]) -> Any:
    """The discrete Fourier transform of ``x`` over its trailing ``len(fft_lengths)`` axes
    (``jax.lax.fft``). ``fft_type`` is an :class:`FftType` or its name: ``"fft"``
    (complex to complex), ``"ifft"`` (its inverse, divided by ``prod(fft_lengths)``),
    ``"rfft"`` (real to complex, the last axis ``n // 2 + 1`` long) or ``"irfft"``
    (complex to real, the last axis ``fft_lengths[-1]`` long). Real and integer operands
    are converted as in JAX (see the module's notes).

    >>> fft(np.array([1.0, 2.0, 3.0, 4.0]), "rfft", (4,))
    array([10.+0.j, -2.+2.j, -2.+0.j])
    """
    t = fft_type_of(fft_type)
    lengths = _lengths(fft_lengths)
    aval = core.get_aval(x)
    dt = np.dtype(aval.dtype)
    if t == FftType.RFFT:
        if dt.kind == "c":
            raise ValueError(f"fft: expected a real operand for RFFT, got {dt.name}.")
        if dt.kind != "f":
            x = convert_element_type(x, np.float64)
    elif dt.kind != "c":
        x = convert_element_type(x, _COMPLEX_OF.get(dt, np.dtype(np.complex128)))
    return fft_p.bind(x, fft_type=t, fft_lengths=lengths)


def _ndim(x: Any) -> int:
    return len(core.get_aval(x).shape)


def _rfft_transpose(ct: Any, lengths: tuple[int, ...]) -> Any:
    # RFFT = keep the first n // 2 + 1 bins of the FFT of the (complex) real signal:
    # transposed, pad the cotangent with zeros to n bins, FFT, take the real part.
    n = lengths[-1]
    m = core.get_aval(ct).shape[-1]
    config = [(0, 0, 0)] * (_ndim(ct) - 1) + [(0, n - m, 0)]
    full = pad(ct, np.zeros((), core.get_aval(ct).dtype), config)
    return real(fft_p.bind(full, fft_type=FftType.FFT, fft_lengths=lengths))


def _irfft_transpose(ct: Any, lengths: tuple[int, ...]) -> Any:
    # IRFFT x = (1 / N) Re-sum over the full Hermitian spectrum of x: each bin but the
    # zero frequency (and the Nyquist one for even n) appears twice. JAX's rule.
    y = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=lengths)
    shape = core.get_aval(y).shape
    m = shape[-1]
    odd = lengths[-1] % 2
    dt = core.get_aval(y).dtype
    parts = [np.ones((1,), dt), np.full((m - 2 + odd,), 2.0, dt), np.ones((1 - odd,), dt)]
    mask = np.concatenate(parts)[:m] / max(math.prod(lengths), 1)
    scale = broadcast_in_dim(mask, shape, (len(shape) - 1,))
    return conj(mul(y, scale))


def _fft_transpose(ct: Any, x: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> list:
    t = FftType(fft_type)
    if type(ct) is ad.Zero:
        return [None]
    if t == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if t == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft_p.bind(ct, fft_type=t, fft_lengths=fft_lengths)]


ad.deflinear2(fft_p, _fft_transpose)


def _fft_batch(vals: Sequence[Any], bdims: Sequence[Any], **params: Any) -> Any:
    # the transform acts on the trailing axes: the batch axis goes in front
    x = batching.moveaxis(vals[0], bdims[0], 0)
    return fft_p.bind(x, **params), 0


batching.batching_rules[fft_p] = _fft_batch


__all__ = ["FftType", "fft", "fft_p"]
