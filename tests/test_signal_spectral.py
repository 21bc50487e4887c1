"""``functrace.scipy.signal``'s ``stft``, ``istft``, ``csd`` and ``welch`` against JAX's
numbers (recorded from ``signal_spectral_cases.py``) and SciPy's, their windows against
``scipy.signal.get_window``, their derivatives, ``jit``, ``vmap`` and their errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.signal as ssig

import functrace as ft
import functrace.numpy as fnp
from functrace.scipy._signal_spectral import window_values
from functrace.scipy.signal import csd, istft, stft, welch
from functrace.test_util import check_grads
from recorded import assert_matches_recorded
from signal_spectral_cases import X2, X, Y, Z, cases

pytestmark = pytest.mark.usefixtures("private_jit_cache")


def _close(got, want, tol=1e-12):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def test_values_and_gradients_match_jax():
    tol = lambda k, v: 2e-5 if v.dtype in (np.float32, np.complex64) else 1e-11  # noqa: E731
    assert_matches_recorded(cases(ft), "signal_spectral_jax.npz", tol)


WINDOWS = ["hann", "hamming", "blackman", "bartlett", "triang", "boxcar", "tukey",
           ("tukey", 0.0), ("tukey", 0.3), ("tukey", 0.75), ("tukey", 1.0), ("tukey", 2.0),
           "han", "ham", "blk", "brt", "tri", "rect", "ones", "tuk"]  # fmt: skip


@pytest.mark.parametrize("window", WINDOWS, ids=str)
def test_windows_are_scipy_periodic_windows(window):
    for m in range(1, 18):
        want = ssig.get_window(window, m)  # fftbins=True: the periodic form
        np.testing.assert_allclose(window_values("t", window, m, np.float64), want, rtol=1e-13,
                                   atol=1e-14, err_msg=f"{window} {m}")  # fmt: skip
        # and as stft applies it: row i of the identity is one segment w[i] e_i, whose
        # transform's DC term is w[i] / sum(w)
        z = stft(np.eye(m), window=window, nperseg=m, boundary=None, padded=False)[2]
        dc = np.asarray(z)[:, 0, 0].real * np.sum(want)
        np.testing.assert_allclose(dc, want, rtol=1e-12, atol=1e-14, err_msg=f"{window} {m}")


def test_against_scipy():
    # options where JAX and SciPy agree (SciPy's welch/csd nperseg default is 256, so it
    # is always given)
    for kw in [dict(nperseg=8), dict(nperseg=7, noverlap=3, nfft=10, boundary="odd"),
               dict(nperseg=8, boundary="constant", padded=False, detrend="linear"),
               dict(nperseg=10, window=("tukey", 0.3), return_onesided=False),
               dict(nperseg=8, window="blackman", fs=3.0, boundary="even")]:  # fmt: skip
        for got, want in zip(stft(X, **kw), ssig.stft(X, **kw)):
            _close(got, want)
        z = ssig.stft(X, **kw)[2]
        inv = {k: v for k, v in kw.items() if k in ("nperseg", "noverlap", "nfft", "window")}
        inv["input_onesided"] = kw.get("return_onesided", True)
        for got, want in zip(istft(z, **inv), ssig.istft(z, **inv)):
            _close(got, want)
    for kw in [dict(nperseg=8), dict(nperseg=9, average="median", scaling="spectrum"),
               dict(nperseg=8, nfft=12, detrend="linear", return_onesided=False),
               dict(nperseg=6, noverlap=1, window="hamming", axis=0)]:  # fmt: skip
        x, y = (X2.T, X2.T[::-1]) if kw.get("axis") == 0 else (X, Y)
        for got, want in zip(welch(x, **kw), ssig.welch(x, **kw)):
            _close(got, want)
        for got, want in zip(csd(x, y, **kw), ssig.csd(x, y, **kw)):
            _close(got, want)
    for got, want in zip(stft(Z, nperseg=8, return_onesided=False),
                         ssig.stft(Z, nperseg=8, return_onesided=False)):  # fmt: skip
        _close(got, want)


def test_where_functrace_follows_scipy_rather_than_jax():
    # a detrend function receives each segment's samples along `axis` (as given)
    fn = lambda d: d - d.mean(-1, keepdims=True)  # noqa: E731
    _close(stft(X, nperseg=8, detrend=fn)[2], ssig.stft(X, nperseg=8, detrend=fn)[2])
    fn0 = lambda d: ssig.detrend(d, axis=0)  # noqa: E731
    _close(stft(X2.T, nperseg=6, axis=0, detrend=fn0)[2],
           ssig.stft(X2.T, nperseg=6, axis=0, detrend=fn0)[2])  # fmt: skip
    fn1 = lambda d: d - fnp.mean(d, axis=1, keepdims=True)  # noqa: E731
    _close(welch(X2, nperseg=8, axis=1, detrend=fn1)[1],
           ssig.welch(X2, nperseg=8, axis=1, detrend=fn1)[1])  # fmt: skip
    # istft: an odd nperseg of a one-sided STFT, and noverlap=0
    z = ssig.stft(X, nperseg=7)[2]
    _close(istft(z, nperseg=7)[1], ssig.istft(z, nperseg=7)[1])
    _close(istft(z, nperseg=7)[1][: len(X)], X, 1e-12)
    z = ssig.stft(X, nperseg=8, noverlap=0, window="boxcar")[2]
    _close(istft(z, noverlap=0, window="boxcar")[1], ssig.istft(z, noverlap=0, window="boxcar")[1])


def test_istft_inverts_stft():
    for kw in [dict(nperseg=8), dict(nperseg=9, noverlap=6), dict(nperseg=8, nfft=13),
               dict(nperseg=16, window="hamming", noverlap=12)]:  # fmt: skip
        _close(istft(stft(X, **kw)[2], **kw)[1][: len(X)], X)
    t, back = istft(stft(X2, nperseg=8, axis=-1)[2])
    _close(back[:, :40], X2)
    assert np.asarray(t).shape == (3,)  # SciPy's and JAX's t: the length of axis 0


def test_dtypes_and_shapes():
    f, t, z = stft(np.arange(20), nperseg=4)  # integers as float64
    assert np.asarray(z).dtype == np.complex128 and np.asarray(f).dtype == np.float64
    f, t, z = stft(X.astype(np.float32), nperseg=8)
    assert np.asarray(z).dtype == np.complex64
    assert np.asarray(f).dtype == np.asarray(t).dtype == np.float32
    assert np.asarray(welch(X.astype(np.float32), nperseg=8)[1]).dtype == np.float32
    assert np.asarray(csd(X, Y, nperseg=8)[1]).dtype == np.complex128
    assert np.asarray(csd(X, None, nperseg=8)[1]).dtype == np.float64
    assert np.asarray(istft(stft(X.astype(np.float32), nperseg=8)[2])[1]).dtype == np.float32
    assert np.asarray(istft(stft(Z, nperseg=8, return_onesided=False)[2],
                            input_onesided=False)[1]).dtype == np.complex128  # fmt: skip
    assert np.asarray(welch(X)[1]).shape == (26,)  # nperseg=None: one whole segment (JAX)
    assert np.asarray(stft(X2.T, nperseg=8, axis=0)[2]).shape == (5, 3, 11)
    # empty inputs: zeros shaped like the input, as JAX
    f, t, z = stft(np.zeros((2, 0)), nperseg=None)
    assert np.asarray(z).shape == (2, 0) and np.asarray(f).shape == (2, 0)
    assert np.asarray(csd(np.zeros((0,)), np.zeros((0,)))[1]).shape == (0,)


def test_warnings():
    with pytest.warns(UserWarning, match="stft: the input is complex"):
        f, _, z = stft(Z, nperseg=8)
    assert np.asarray(f).shape == (8,)
    with pytest.warns(UserWarning, match="welch: nperseg=64 is greater than the input length 50"):
        welch(X, nperseg=64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stft(X, nperseg=8)


def test_gradients():
    x = X[:24]

    def stft_sq(v):
        return fnp.abs(stft(v, nperseg=8, detrend="linear")[2]) ** 2

    def welch_median(v):
        return welch(v, nperseg=8, average="median", window=("tukey", 0.4))[1]

    check_grads(stft_sq, (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda v: welch(v, nperseg=8)[1], (x,), order=2, modes=("fwd", "rev"))
    check_grads(welch_median, (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda v, w: fnp.imag(csd(v, w, nperseg=6)[1]), (x, Y[:24]), order=2,
                modes=("fwd", "rev"))  # fmt: skip
    check_grads(lambda v: istft(stft(v, nperseg=8)[2] * 2.0)[1], (x,), order=1,
                modes=("fwd", "rev"))  # fmt: skip
    # with respect to an array window and to fs
    check_grads(lambda w: welch(x, window=w, nperseg=8)[1], (np.hanning(8) + 0.1,), order=1,
                modes=("fwd", "rev"))  # fmt: skip
    check_grads(lambda r: welch(x, fs=r, nperseg=8)[1], (2.5,), order=1, modes=("fwd", "rev"))


def test_jit_equals_eager():
    fns = [
        lambda v: stft(v, nperseg=8, boundary="odd", detrend="constant")[2],
        lambda v: welch(v, nperseg=8, average="median")[1],
        lambda v: csd(v, v[::-1] ** 2, nperseg=7, noverlap=4, return_onesided=False)[1],
        lambda v: istft(stft(v, nperseg=8)[2])[1],
        lambda v: stft(v, nperseg=8)[0] + stft(v, nperseg=8)[1][0],
    ]
    for fn in fns:
        _close(ft.jit(fn)(X), np.asarray(fn(X)))
    _close(ft.jit(lambda v, r: welch(v, fs=r, nperseg=8)[0])(X, 4.0), welch(X, 4.0, nperseg=8)[0])


def test_vmap_equals_a_loop():
    fns = [
        lambda v: stft(v, nperseg=8, boundary="even")[2],
        lambda v: welch(v, nperseg=8, average="median")[1],
        lambda v: csd(v, Y[:40], nperseg=8)[1],
        lambda v: istft(stft(v, nperseg=8)[2])[1],
    ]
    for fn in fns:
        _close(ft.vmap(fn)(X2), np.stack([np.asarray(fn(r)) for r in X2]))
    zs = np.stack([np.asarray(stft(r, nperseg=8)[2]) for r in X2])
    _close(ft.vmap(lambda z: istft(z, nperseg=8)[1], in_axes=0)(zs),
           np.asarray(istft(zs, nperseg=8)[1]))  # fmt: skip

    def loss(v):
        return fnp.sum(fnp.sqrt(welch(v, nperseg=8)[1]))

    per_row = np.stack([np.asarray(ft.grad(loss)(r)) for r in X2])
    _close(ft.vmap(ft.grad(loss))(X2), per_row)
    _close(ft.grad(lambda m: fnp.sum(ft.vmap(loss)(m)))(X2), per_row)


def test_errors_name_the_function():
    with pytest.raises(ValueError, match=r"stft: expected a window in \('hann', 'hamming'"):
        stft(X, window="kaiser", nperseg=8)
    with pytest.raises(ValueError, match="welch: expected a window in"):
        welch(X, window=("gaussian", 2.0))
    with pytest.raises(ValueError, match="the window 'hann' takes no parameters"):
        welch(X, window=("hann", 3))
    with pytest.raises(TypeError, match="tukey window's alpha"):
        welch(X, window=("tukey", "x"))
    with pytest.raises(ValueError, match="stft: expected nperseg equal to the window's length 8"):
        stft(X, window=np.ones(8))  # nperseg=256 by default
    with pytest.raises(ValueError, match="istft: expected a window of length 8, got 5"):
        istft(stft(X, nperseg=8)[2], window=np.ones(5))
    with pytest.raises(ValueError, match="welch: expected a window no longer than the input"):
        welch(X[:5], window=np.ones(8))
    with pytest.raises(ValueError, match="csd: expected a 1-D window"):
        csd(X, Y, window=np.ones((2, 4)))
    with pytest.raises(TypeError, match="welch: expected a real window"):
        welch(X, window=np.ones(8) * 1j)
    with pytest.raises(ValueError, match="stft: expected boundary in"):
        stft(X, nperseg=8, boundary="wrap")
    with pytest.raises(ValueError, match="welch: expected scaling"):
        welch(X, nperseg=8, scaling="power")
    with pytest.raises(ValueError, match="csd: expected average 'mean' or 'median'"):
        csd(X, Y, nperseg=8, average="max")
    with pytest.raises(ValueError, match="stft: expected detrend False, 'constant', 'linear'"):
        stft(X, nperseg=8, detrend="quadratic")
    with pytest.raises(ValueError, match="welch: expected detrend"):
        welch(X, nperseg=8, detrend=True)
    with pytest.raises(ValueError, match="stft: expected noverlap < nperseg = 8, got 8"):
        stft(X, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match="welch: expected nfft >= nperseg = 8, got 4"):
        welch(X, nperseg=8, nfft=4)
    with pytest.raises(ValueError, match="stft: expected a positive nperseg, got 0"):
        stft(X, nperseg=0)
    with pytest.raises(TypeError, match="stft: expected an integer nperseg, got 8.5"):
        stft(X, nperseg=8.5)
    with pytest.raises(ValueError, match=r"stft: expected axis in \[-1, 1\), got 1"):
        stft(X, nperseg=8, axis=1)
    with pytest.raises(ValueError, match="welch: expected an array of at least one dimension"):
        welch(1.0)
    with pytest.raises(ValueError, match="csd: expected x and y of the same number of dim"):
        csd(X2, X, nperseg=8)
    with pytest.raises(ValueError, match="csd: expected x and y to broadcast outside axis 1"):
        csd(X2, X2[:2], nperseg=8)
    with pytest.raises(TypeError, match="welch: expected a real scalar fs"):
        welch(X, fs=np.ones(2), nperseg=8)
    with pytest.raises(TypeError, match="stft: expected an array of numbers"):
        stft(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="welch: expected a concrete integer nperseg"):
        ft.jit(lambda v, n: welch(v, nperseg=n)[1])(X, 8)
    z = stft(X, nperseg=8)[2]
    with pytest.raises(ValueError, match="istft: expected an STFT of at least 2 dimensions"):
        istft(X)
    with pytest.raises(ValueError, match="istft: expected different time and frequency axes"):
        istft(z, time_axis=0, freq_axis=-2)
    with pytest.raises(ValueError, match="istft: expected noverlap < nperseg = 8, got 9"):
        istft(z, noverlap=9)
    with pytest.raises(ValueError, match="istft: expected nfft >= nperseg = 8, got 6"):
        istft(z, nfft=6)
    with pytest.raises(ValueError, match=r"istft: expected freq_axis in \[-2, 2\), got 3"):
        istft(z, freq_axis=3)


def test_warnings_point_at_the_caller():
    with pytest.warns(UserWarning) as record:
        welch(X, nperseg=64)
        csd(Z, Y, nperseg=8)
        stft(Z, nperseg=8)
    assert [r.filename for r in record] == [__file__] * 3
