"""``jax.scipy.signal`` spectral cases (``stft``, ``istft``, ``csd``, ``welch``), run
under JAX and functrace.

``cases(lib)`` takes the library namespace: ``jax`` (with ``jax_enable_x64``, and
``jax.scipy.signal`` imported) when ``tests/fixtures/signal_spectral_jax.npz`` was
recorded, ``functrace`` in tests/test_signal_spectral.py. Real and complex inputs, even
and odd ``nperseg``, ``noverlap``, ``nfft > nperseg``, one- and two-sided spectra, every
boundary with and without padding, both scalings, the detrend types, windows by name,
with a parameter and as an array, an axis other than the last, 2-d inputs, float32,
``csd`` of two signals (one shorter, broadcast rows), mean and median averages,
``istft`` round trips, and gradients of losses through each function. Nothing here
imports JAX.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

_rng = np.random.default_rng(7)
X = _rng.standard_normal(50)
Y = _rng.standard_normal(50)
Z = X + 1j * _rng.standard_normal(50)
X2 = _rng.standard_normal((3, 40))
W8 = np.abs(_rng.standard_normal(8)) + 0.5  # an array window

STFT_CASES: list[tuple[str, Any, dict[str, Any]]] = [
    ("default8", X, dict(nperseg=8)),
    ("odd7_noverlap2", X, dict(nperseg=7, noverlap=2)),
    ("nfft12", X, dict(nperseg=8, nfft=12)),
    ("odd_nfft10", X, dict(nperseg=7, noverlap=5, nfft=10)),
    ("twosided", X, dict(nperseg=8, return_onesided=False)),
    ("bnone_padded", X, dict(nperseg=8, boundary=None)),
    ("bnone_unpadded", X, dict(nperseg=8, boundary=None, padded=False)),
    ("beven", X, dict(nperseg=8, boundary="even")),
    ("beven_unpadded", X, dict(nperseg=8, boundary="even", padded=False)),
    ("bodd", X, dict(nperseg=8, boundary="odd", noverlap=5)),
    ("bodd_unpadded", X, dict(nperseg=9, boundary="odd", padded=False)),
    ("bconstant", X, dict(nperseg=8, boundary="constant", noverlap=3)),
    ("bconstant_unpadded", X, dict(nperseg=7, boundary="constant", padded=False)),
    ("bzeros_unpadded", X, dict(nperseg=6, padded=False)),
    ("detrend_constant", X, dict(nperseg=8, detrend="constant")),
    ("detrend_linear", X, dict(nperseg=7, detrend="linear")),
    ("hamming_fs", X, dict(nperseg=8, window="hamming", fs=100.0)),
    ("tukey", X, dict(nperseg=10, window=("tukey", 0.25))),
    ("array_window", X, dict(nperseg=8, window=W8)),
    ("axis0", X2.T, dict(nperseg=8, axis=0)),
    ("rows", X2, dict(nperseg=8, noverlap=6)),
    ("complex", Z, dict(nperseg=8, return_onesided=False)),
    ("float32", X.astype(np.float32), dict(nperseg=8)),
]

WELCH_CASES: list[tuple[str, Any, dict[str, Any]]] = [
    ("whole", X, {}),
    ("nperseg8", X, dict(nperseg=8)),
    ("median", X, dict(nperseg=8, average="median")),
    ("median_even_count", X, dict(nperseg=10, noverlap=0, average="median")),
    ("spectrum", X, dict(nperseg=9, scaling="spectrum")),
    ("nfft_twosided", X, dict(nperseg=8, nfft=11, return_onesided=False)),
    ("linear_fs", X, dict(nperseg=8, detrend="linear", fs=4.0)),
    ("no_detrend_blackman", X, dict(nperseg=8, detrend=False, window="blackman")),
    ("bartlett_triang", X, dict(nperseg=7, window="triang", noverlap=4)),
    ("bartlett", X, dict(nperseg=8, window="bartlett")),
    ("boxcar_one_segment", X, dict(nperseg=50, window="boxcar")),
    ("axis0", X2.T, dict(nperseg=8, axis=0, average="median")),
    ("rows", X2, dict(nperseg=8)),
    ("complex", Z, dict(nperseg=8, return_onesided=False)),
    ("float32", X.astype(np.float32), dict(nperseg=8, average="median")),
]

CSD_CASES: list[tuple[str, Any, Any, dict[str, Any]]] = [
    ("xy", X, Y, dict(nperseg=8)),
    ("xy_median", X, Y, dict(nperseg=8, average="median")),
    (
        "xy_spectrum_twosided",
        X,
        Y,
        dict(nperseg=8, scaling="spectrum", return_onesided=False),
    ),  # fmt: skip
    ("y_shorter", X, Y[:37], dict(nperseg=8, noverlap=2)),
    ("rows_broadcast", X2, X2[:1] ** 2, dict(nperseg=8)),
    ("axis0", X2.T, X2.T[:, ::-1], dict(nperseg=6, axis=0, detrend="linear")),
    ("complex_y", X, Z, dict(nperseg=8, return_onesided=False, average="median")),
    ("y_none", X, None, dict(nperseg=8)),
    ("float32", X.astype(np.float32), Y.astype(np.float32), dict(nperseg=8)),
]

# stft options, then the matching istft options
ISTFT_CASES: list[tuple[str, Any, dict[str, Any], dict[str, Any]]] = [
    ("default8", X, dict(nperseg=8), dict(nperseg=8)),
    ("overlap6", X, dict(nperseg=8, noverlap=6), dict(nperseg=8, noverlap=6)),
    ("nfft10", X, dict(nperseg=8, nfft=10), dict(nperseg=8, nfft=10)),
    ("hamming", X, dict(nperseg=8, window="hamming"), dict(window="hamming")),
    ("array_window", X, dict(nperseg=8, window=W8), dict(window=W8)),
    ("no_boundary", X, dict(nperseg=8, boundary=None), dict(nperseg=8, boundary=False)),
    ("twosided", X, dict(nperseg=8, return_onesided=False), dict(input_onesided=False)),
    ("complex", Z, dict(nperseg=8, return_onesided=False), dict(input_onesided=False)),
    ("rows", X2, dict(nperseg=8), dict()),
    ("float32", X.astype(np.float32), dict(nperseg=8), dict(fs=2.0)),
]


def cases(lib: Any) -> dict[str, np.ndarray]:
    S, fnp = lib.scipy.signal, lib.numpy
    out: dict[str, Any] = {}
    for tag, x, kw in STFT_CASES:
        out[f"stft/{tag}/f"], out[f"stft/{tag}/t"], out[f"stft/{tag}/Z"] = S.stft(x, **kw)
    with warnings.catch_warnings():  # complex data: two-sided, with a warning
        warnings.simplefilter("ignore")
        out["stft/complex_onesided_asked/Z"] = S.stft(Z, nperseg=8)[2]
        out["stft/nperseg_too_long/Z"] = S.stft(X[:20])[2]  # nperseg=256 -> 20

    # a detrend function that does not depend on how the segments are laid out (JAX
    # hands it the segments transposed, SciPy and functrace as they are)
    def minus_mean(d: Any) -> Any:
        return d - fnp.mean(d)

    out["stft/detrend_function/Z"] = S.stft(X, nperseg=8, detrend=minus_mean)[2]
    out["welch/detrend_function/P"] = S.welch(X2, nperseg=8, detrend=minus_mean)[1]
    for tag, x, kw in WELCH_CASES:
        out[f"welch/{tag}/f"], out[f"welch/{tag}/P"] = S.welch(x, **kw)
    for tag, x, y, kw in CSD_CASES:
        out[f"csd/{tag}/f"], out[f"csd/{tag}/P"] = S.csd(x, y, **kw)
    for tag, x, kw_stft, kw_istft in ISTFT_CASES:
        zxx = S.stft(x, **kw_stft)[2]
        out[f"istft/{tag}/t"], out[f"istft/{tag}/x"] = S.istft(zxx, **kw_istft)
    zt = np.asarray(S.stft(X2, nperseg=8)[2])
    out["istft/axes_swapped/x"] = S.istft(np.swapaxes(zt, -1, -2), time_axis=-2, freq_axis=-1)[1]
    out["istft/axes_front/x"] = S.istft(np.moveaxis(zt, 0, -1), time_axis=1, freq_axis=0)[1]

    wt = np.linspace(0.5, 1.5, 9)  # weights of the frequencies in the losses

    def stft_loss(v: Any) -> Any:
        zz = S.stft(v, nperseg=16, noverlap=10, detrend="linear")[2]
        return fnp.sum(fnp.abs(zz) ** 2 * wt[:, None]) + fnp.sum(fnp.real(zz) ** 3)

    def welch_loss(v: Any) -> Any:
        return fnp.sum(fnp.log(S.welch(v, nperseg=16)[1]) * wt)

    def median_loss(v: Any) -> Any:
        return fnp.sum(fnp.sqrt(S.welch(v, nperseg=16, noverlap=8, average="median")[1]))

    def csd_loss(v: Any, w: Any) -> Any:
        p = S.csd(v, w, nperseg=16)[1]
        return fnp.sum(fnp.real(p) * wt + fnp.imag(p) ** 2)

    def istft_loss(v: Any) -> Any:
        zz = S.stft(v, nperseg=8)[2]
        return fnp.sum(fnp.sin(S.istft(zz * 1.5, nperseg=8)[1]))

    def complex_loss(v: Any) -> Any:
        zz = S.stft(v, nperseg=8, return_onesided=False)[2]
        return fnp.sum(fnp.abs(zz) ** 3)

    out["grad/stft"] = lib.grad(stft_loss)(X)
    out["grad/welch"] = lib.grad(welch_loss)(X)
    out["grad/welch_median"] = lib.grad(median_loss)(X)
    out["grad/csd_x"], out["grad/csd_y"] = lib.grad(csd_loss, argnums=(0, 1))(X, Y)
    out["grad/istft"] = lib.grad(istft_loss)(X)
    out["grad/stft_complex"] = lib.grad(complex_loss)(Z)
    return {k: np.asarray(v) for k, v in out.items()}
