"""Op-table rows: functrace.scipy.optimize, .signal (with the spectral functions), .integrate
and .ndimage (the "fill in jax.scipy" issue), against SciPy.

All are composites (convolutions are ``conv_general_dilated``, ``minimize`` a
``while_loop``), so the rows check that their derivative, batching and jit rules
compose. Modes, boundaries, edge cases and errors: tests/test_scipy_more.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.fft as sfft
import scipy.integrate as si
import scipy.ndimage as snd
import scipy.optimize as so
import scipy.signal as ssig

import functrace.numpy as fnp
import functrace.scipy.fft as ffft
import functrace.scipy.integrate as fint
import functrace.scipy.ndimage as fnd
import functrace.scipy.optimize as fopt
import functrace.scipy.signal as fsig
from functrace import nn
from op_db import Arg, F, OpInfo

F64 = (np.float64,)


def _like(fn: Any) -> Any:
    """``fn`` (SciPy's) with its result in the dtype of the first argument."""

    def call(*args: Any) -> Any:
        out = np.asarray(fn(*args)).astype(np.asarray(args[0]).dtype)
        return out[()] if out.ndim == 0 else out

    return call


def _sig(name: str, mode: str, s1: tuple[int, ...], s2: tuple[int, ...], **kw: Any) -> OpInfo:
    ours, theirs = getattr(fsig, name), getattr(ssig, name)
    return OpInfo(
        f"scipy.signal.{name}[{mode}]",
        lambda a, b: ours(a, b, mode=mode, **kw),
        _like(lambda a, b: theirs(a, b, mode=mode, **kw)),
        (F, F),
        ("conv_general_dilated",),
        shapes=(s1, s2),
        rtol=1e-9,
        atol=1e-12,
    )


# minimize: the minimizer of a smooth convex function of x shifted by the parameters a
def _objective(x: Any, a: Any) -> Any:
    return fnp.sum((x - a) ** 2) + 0.1 * fnp.sum(x**4)


def _minimize(a: Any) -> Any:
    return fopt.minimize(_objective, fnp.zeros(3), args=(a,), method="BFGS").x


def _minimize_ref(a: Any) -> Any:
    def f(x: Any) -> Any:
        return np.sum((x - a) ** 2) + 0.1 * np.sum(x**4)

    return so.minimize(f, np.zeros(3), method="BFGS", options={"gtol": 1e-10}).x


def _parts(z: Any) -> Any:
    """A complex result as a real one: its real and imaginary parts stacked first."""
    return fnp.stack([fnp.real(z), fnp.imag(z)])


def _np_parts(z: Any) -> Any:
    return np.stack([np.real(z), np.imag(z)])


def _spectral(name: str, ours: Any, theirs: Any, shapes: tuple[Any, ...], n: int = 1) -> OpInfo:
    """A row of a spectral function (windowed FFTs, then complex products or medians)."""
    return OpInfo(
        f"scipy.signal.{name}",
        ours,
        _like(theirs),
        (F,) * n,
        ("fft",),
        shapes=shapes,
        rtol=1e-9,
        atol=1e-12,
    )


_COORDS = (np.array([0.3, 1.7, 2.5, -0.4, 3.6]), np.array([0.2, 3.1, 1.5, 2.2, 4.4]))


def _map(mode: str) -> OpInfo:
    scipy_mode = {"constant": "grid-constant", "wrap": "grid-wrap"}.get(mode, mode)
    return OpInfo(
        f"scipy.ndimage.map_coordinates[{mode}]",
        lambda img: fnd.map_coordinates(img, _COORDS, order=1, mode=mode, cval=0.5),
        _like(lambda img: snd.map_coordinates(img, _COORDS, order=1, mode=scipy_mode, cval=0.5)),
        (F,),
        ("mul",),
        shapes=((4, 5),),
        rtol=1e-9,
    )


ROWS: list[OpInfo] = [
    _sig("convolve", "full", (7,), (3,)),
    _sig("convolve", "same", (4, 5), (2, 3)),
    _sig("convolve", "valid", (3,), (5,)),
    _sig("correlate", "full", (6,), (4,)),
    _sig("correlate", "same", (5, 4), (2, 2)),
    _sig("correlate", "valid", (2, 5, 3), (2, 2, 2)),
    _sig("convolve2d", "full", (4, 5), (2, 3)),
    _sig("convolve2d", "same", (4, 5), (3, 2), boundary="wrap"),
    _sig("correlate2d", "same", (5, 4), (2, 2), boundary="symm"),
    _sig("correlate2d", "valid", (5, 4), (2, 3)),
    _sig("fftconvolve", "same", (6, 3), (3, 2)),
    OpInfo(
        "scipy.signal.detrend",
        lambda x: fsig.detrend(x, axis=-1, bp=[3]),
        _like(lambda x: ssig.detrend(x, axis=-1, bp=[3])),
        (F,),
        ("reduce_sum",),
        shapes=((3, 7),),
        rtol=1e-9,
        atol=1e-12,
    ),
    OpInfo(
        "scipy.signal.detrend[constant]",
        lambda x: fsig.detrend(x, axis=0, type="constant"),
        _like(lambda x: ssig.detrend(x, axis=0, type="constant")),
        (F,),
        ("reduce_sum",),
        min_dims=1,
        rtol=1e-9,
        atol=1e-12,
    ),
    OpInfo(
        "scipy.integrate.trapezoid",
        lambda y: fint.trapezoid(y, axis=-1),
        _like(lambda y: si.trapezoid(y, axis=-1)),
        (F,),
        ("reduce_sum",),
        min_dims=1,
        rtol=1e-9,
    ),
    OpInfo(
        "scipy.integrate.trapezoid[x]",
        fint.trapezoid,
        _like(si.trapezoid),
        (F, Arg(domain=(0.0, 5.0))),
        ("reduce_sum",),
        shapes=((3, 6), (6,)),
        rtol=1e-9,
    ),
    _map("constant"),
    _map("nearest"),
    _map("wrap"),
    _map("mirror"),
    _map("reflect"),
    OpInfo(
        "scipy.optimize.minimize[BFGS]",
        _minimize,
        _minimize_ref,
        (F,),
        ("while",),
        shapes=((3,),),
        dtypes=F64,
        grad=False,
        rtol=1e-5,
        atol=1e-5,
    ),
    # stft/csd: real and imaginary parts; welch: mean and median averages; istft of a
    # real array of coefficients
    _spectral(
        "stft",
        lambda x: _parts(fsig.stft(x, nperseg=8)[2]),
        lambda x: _np_parts(ssig.stft(x, nperseg=8)[2]),
        ((2, 20),),
    ),
    _spectral(
        "stft[odd,nfft,even,linear]",
        lambda x: _parts(
            fsig.stft(x, nperseg=7, noverlap=3, nfft=9, boundary="even", detrend="linear")[2]
        ),
        lambda x: _np_parts(
            ssig.stft(x, nperseg=7, noverlap=3, nfft=9, boundary="even", detrend="linear")[2]
        ),
        ((17,),),
    ),
    _spectral(
        "welch",
        lambda x: fsig.welch(x, nperseg=8)[1],
        lambda x: ssig.welch(x, nperseg=8)[1],
        ((2, 24),),
    ),
    _spectral(
        "welch[median]",
        lambda x: fsig.welch(x, nperseg=8, noverlap=2, window="hamming", average="median")[1],
        lambda x: ssig.welch(x, nperseg=8, noverlap=2, window="hamming", average="median")[1],
        ((24,),),
    ),
    _spectral(
        "csd",
        lambda x, y: _parts(fsig.csd(x, y, nperseg=8)[1]),
        lambda x, y: _np_parts(ssig.csd(x, y, nperseg=8)[1]),
        ((2, 20), (2, 20)),
        n=2,
    ),
    _spectral(
        "istft",
        lambda z: fsig.istft(z, nperseg=8)[1],
        lambda z: ssig.istft(z, nperseg=8)[1],
        ((5, 6),),
    ),
    # The type-2 DCT and its inverse (one FFT per axis) against SciPy's.
    OpInfo(
        "scipy.fft.dct[ortho]",
        lambda x: ffft.dct(x, norm="ortho"),
        _like(lambda x: sfft.dct(x, norm="ortho")),
        (F,),
        ("fft",),
        shapes=((3, 5),),
        rtol=1e-9,
        atol=1e-12,
    ),
    OpInfo(
        "scipy.fft.idct[n=6,axis=0]",
        lambda x: ffft.idct(x, n=6, axis=0),
        _like(lambda x: sfft.idct(x, n=6, axis=0)),
        (F,),
        ("fft",),
        shapes=((4, 3),),
        rtol=1e-9,
        atol=1e-12,
    ),
    OpInfo(
        "scipy.fft.dctn",
        lambda x: ffft.dctn(x, s=[2, 4]),
        _like(lambda x: sfft.dctn(x, s=[2, 4])),
        (F,),
        ("fft",),
        shapes=((3, 5),),
        rtol=1e-9,
        atol=1e-12,
    ),
    # jax.nn functions built from functrace.numpy (kinks and x <= 0 avoided)
    OpInfo(
        "nn.log1mexp",
        nn.log1mexp,
        # (a where of its two branches, as NumPy's where: 0-d in, 0-d array out)
        lambda x: np.where(x < np.log(2.0), np.log(-np.expm1(-x)), np.log1p(-np.exp(-x))),
        (Arg(domain=(0.2, 3.0)),),
        ("custom_jvp_call",),
        rtol=1e-9,
        atol=1e-12,
    ),
    OpInfo(
        "nn.sparse_sigmoid",
        nn.sparse_sigmoid,
        _like(lambda x: 0.5 * np.clip(x + 1.0, 0.0, 2.0)),
        (F,),
        ("max", "min"),
        avoid=(-1.0, 1.0),
    ),
    OpInfo(
        "nn.logmeanexp",
        lambda x: nn.logmeanexp(x, axis=0),
        _like(lambda x: np.log(np.mean(np.exp(x), axis=0))),
        (F,),
        ("exp", "log"),
        shapes=((4, 3),),
        rtol=1e-9,
        atol=1e-12,
    ),
]
