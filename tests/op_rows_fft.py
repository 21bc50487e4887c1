"""Op-table rows: ``functrace.numpy.fft`` and the ``fft`` primitive of ``functrace.lax``.

Inputs are real (the table draws floats); a complex result is compared as its real and
imaginary parts stacked on a new leading axis (``_parts``), so the gradient checks see
a real function of real inputs and still check both parts. Lengths (``n``, ``s``) that
pad and crop, ``norm`` and non-trailing axes each have a row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.lax as lax
import functrace.numpy as fnp
from op_db import POS, F, OpInfo

FFT = fnp.fft
TOL = {"rtol": 1e-5, "atol": 1e-5}


def _parts(y: Any) -> Any:
    return fnp.stack([fnp.real(y), fnp.imag(y)])


def _np_parts(y: Any) -> Any:
    y = np.asarray(y)
    return np.stack([y.real, y.imag])


def _c(x: Any) -> np.dtype:
    return np.dtype(np.complex64 if np.asarray(x).dtype == np.float32 else np.complex128)


def _r(x: Any) -> np.dtype:
    return np.dtype(np.float32 if np.asarray(x).dtype == np.float32 else np.float64)


def _row(name: str, fn: Any, ref: Any, complex_out: bool = True, **kw: Any) -> OpInfo:
    kw.setdefault("min_dims", 1)
    kw.setdefault("primitives", ("fft",))
    for k, v in TOL.items():
        kw.setdefault(k, v)
    if complex_out:
        f, r = fn, ref
        return OpInfo(name, lambda *a: _parts(f(*a)), lambda *a: _np_parts(r(*a)), (F,), **kw)
    return OpInfo(name, fn, ref, (F,), **kw)


def _lax_irfft(x: Any) -> Any:
    # an odd length: the input's m points hold a real signal of 2 m - 1
    m = x.shape[-1]
    return lax.fft(lax.complex(x, lax.full_like(x, 0.5)), "irfft", (2 * m - 1,))


def _np_irfft(x: Any) -> Any:
    x = np.asarray(x)
    m = x.shape[-1]
    return np.fft.irfft(x + 0.5j, n=2 * m - 1).astype(_r(x))


def _lax_irfft2_even(x: Any) -> Any:
    # fixed shape (2, 3): fft_lengths (2, 4), an even last length (Nyquist bin)
    return lax.fft(lax.complex(x, lax.neg(x)), "irfft", (2, 4))


def _np_irfft2_even(x: Any) -> Any:
    x = np.asarray(x)
    return np.fft.irfftn(x - 1j * x, s=(2, 4), axes=(0, 1)).astype(_r(x))


ROWS: list[OpInfo] = [
    # -- the primitive, each type
    _row(
        "lax.fft_fft",
        lambda x: lax.fft(x, lax.FftType.FFT, x.shape[-1:]),
        lambda x: np.fft.fft(x).astype(_c(x)),
    ),
    _row(
        "lax.fft_ifft2",
        lambda x: lax.fft(x, "ifft", x.shape[-2:]),
        lambda x: np.fft.ifft2(x).astype(_c(x)),
        min_dims=2,
    ),
    _row(
        "lax.fft_rfft",
        lambda x: lax.fft(x, "rfft", x.shape[-1:]),
        lambda x: np.fft.rfft(x).astype(_c(x)),
    ),
    _row(
        "lax.fft_rfft2",
        lambda x: lax.fft(x, lax.FftType.RFFT, x.shape[-2:]),
        lambda x: np.fft.rfft2(x).astype(_c(x)),
        min_dims=2,
    ),
    _row("lax.fft_irfft", _lax_irfft, _np_irfft, complex_out=False),
    _row(
        "lax.fft_irfft2_even",
        _lax_irfft2_even,
        _np_irfft2_even,
        complex_out=False,
        shapes=((2, 3),),
    ),
    # -- functrace.numpy.fft
    _row("fft.fft", FFT.fft, np.fft.fft),
    _row(
        "fft.fft_n_axis_ortho",
        lambda x: FFT.fft(x, n=5, axis=0, norm="ortho"),
        lambda x: np.fft.fft(x, n=5, axis=0, norm="ortho"),
    ),
    _row(
        "fft.fft_crop_forward",
        lambda x: FFT.fft(x, n=2, norm="forward"),
        lambda x: np.fft.fft(x, n=2, norm="forward"),
    ),
    _row("fft.ifft", FFT.ifft, np.fft.ifft),
    _row(
        "fft.ifft_n_ortho",
        lambda x: FFT.ifft(x, n=6, norm="ortho"),
        lambda x: np.fft.ifft(x, n=6, norm="ortho"),
    ),
    _row("fft.rfft", FFT.rfft, np.fft.rfft),
    _row(
        "fft.rfft_n_axis",
        lambda x: FFT.rfft(x, n=5, axis=0, norm="forward"),
        lambda x: np.fft.rfft(x, n=5, axis=0, norm="forward"),
    ),
    _row("fft.irfft", FFT.irfft, np.fft.irfft, complex_out=False, shapes=((3, 4),)),
    _row(
        "fft.irfft_n_odd",
        lambda x: FFT.irfft(x, n=5, norm="ortho"),
        lambda x: np.fft.irfft(x, n=5, norm="ortho"),
        complex_out=False,
    ),
    _row("fft.hfft", FFT.hfft, np.fft.hfft, complex_out=False, shapes=((2, 3),)),
    _row(
        "fft.hfft_n",
        lambda x: FFT.hfft(x, n=7, axis=0, norm="forward"),
        lambda x: np.fft.hfft(x, n=7, axis=0, norm="forward"),
        complex_out=False,
    ),
    _row("fft.ihfft", FFT.ihfft, np.fft.ihfft),
    _row("fft.fft2", FFT.fft2, np.fft.fft2, min_dims=2),
    _row(
        "fft.ifft2_s",
        lambda x: FFT.ifft2(x, s=(3, 2), norm="ortho"),
        lambda x: np.fft.ifft2(x, s=(3, 2), norm="ortho"),
        min_dims=2,
    ),
    _row("fft.rfft2", FFT.rfft2, np.fft.rfft2, min_dims=2),
    _row(
        "fft.irfft2",
        lambda x: FFT.irfft2(x, s=(2, 5)),
        lambda x: np.fft.irfft2(x, s=(2, 5)),
        complex_out=False,
        min_dims=2,
    ),
    _row("fft.fftn", FFT.fftn, np.fft.fftn),
    _row(
        "fft.fftn_axes",
        lambda x: FFT.fftn(x, s=(3, 5), axes=(-1, 0), norm="forward"),
        lambda x: np.fft.fftn(x, s=(3, 5), axes=(-1, 0), norm="forward"),
        min_dims=2,
    ),
    _row("fft.ifftn", FFT.ifftn, np.fft.ifftn),
    _row(
        "fft.rfftn_axes",
        lambda x: FFT.rfftn(x, axes=(-1, 0)),
        lambda x: np.fft.rfftn(x, axes=(-1, 0)),
        min_dims=2,
    ),
    _row(
        "fft.irfftn",
        lambda x: FFT.irfftn(x, s=(3, 4), axes=(0, -1), norm="ortho"),
        lambda x: np.fft.irfftn(x, s=(3, 4), axes=(0, -1), norm="ortho"),
        complex_out=False,
        min_dims=2,
    ),
    OpInfo(
        "fft.fftfreq",
        lambda d: FFT.fftfreq(5, d),
        lambda d: np.fft.fftfreq(5, d),
        (POS,),
        ("div",),
        shapes=((),),
    ),
    OpInfo(
        "fft.rfftfreq",
        lambda d: FFT.rfftfreq(6, d),
        lambda d: np.fft.rfftfreq(6, d),
        (POS,),
        ("div",),
        shapes=((),),
    ),
    OpInfo("fft.fftshift", FFT.fftshift, np.fft.fftshift, (F,), ("concatenate",), min_dims=1),
    OpInfo(
        "fft.ifftshift_axes",
        lambda x: FFT.ifftshift(x, axes=-1),
        lambda x: np.fft.ifftshift(x, axes=-1),
        (F,),
        ("concatenate",),
        min_dims=1,
    ),
]
