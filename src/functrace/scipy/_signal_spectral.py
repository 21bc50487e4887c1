"""The windowed-FFT estimators of ``functrace.scipy.signal`` (re-exported there):
``stft``, ``istft``, ``csd`` and ``welch``, and the windows they take.

The input is cut into segments of ``nperseg`` samples, ``nperseg - noverlap`` apart (a
``take`` with a constant index table), each segment is detrended, multiplied by the
window and transformed (``functrace.numpy.fft``), so everything differentiates,
batches and jits. ``istft`` adds the inverse transforms back with their windows
(overlap-add as a few shifted sums) and divides by the summed squared window.

Windows are computed here by formula, with SciPy's periodic convention (``get_window``
with ``fftbins=True``): ``"hann"``, ``"hamming"``, ``"blackman"``, ``"bartlett"``,
``"triang"``, ``"boxcar"`` and ``"tukey"`` (``("tukey", alpha)``, ``alpha`` 0.5 by
default), and SciPy's short names for them; or an array of length ``nperseg``.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace.scipy._util import floats

# SciPy's names for each window (get_window's spellings)
_WINDOW_NAMES = {
    "hann": ("hann", "han"),
    "hamming": ("hamming", "hamm", "ham"),
    "blackman": ("blackman", "black", "blk"),
    "bartlett": ("bartlett", "bart", "brt"),
    "triang": ("triang", "triangle", "tri"),
    "boxcar": ("boxcar", "box", "ones", "rect", "rectangular"),
    "tukey": ("tukey", "tuk"),
}
_CANONICAL = {alias: name for name, aliases in _WINDOW_NAMES.items() for alias in aliases}
_BOUNDARIES = (None, "even", "odd", "constant", "zeros")


def _periodic(name: str, m: int, params: tuple[Any, ...]) -> np.ndarray:
    """The ``m``-point periodic window ``name`` in float64: the symmetric window of
    ``m + 1`` points without its last point."""
    if m <= 1:
        return np.ones(m)
    n = np.arange(m)
    phase = 2 * np.pi * n / m
    if name == "hann":  # sin^2(pi n / m), as JAX writes it
        return np.sin(n * (np.pi / m)) ** 2
    if name == "hamming":
        return 0.54 - 0.46 * np.cos(phase)
    if name == "blackman":
        return 0.42 - 0.5 * np.cos(phase) + 0.08 * np.cos(2 * phase)
    if name == "boxcar":
        return np.ones(m)
    if name == "bartlett":
        return 1.0 - np.abs(2.0 * n / m - 1.0)
    if name == "triang":  # symmetric on m + 1 points: peaks at 1 only for odd m + 1
        full = m + 1
        return 1.0 - np.abs(2.0 * n - m) / (full + full % 2)
    # tukey: cosine tapers over the first and last alpha / 2 of the symmetric window
    alpha = params[0] if params else 0.5
    if alpha <= 0:
        return np.ones(m)
    if alpha >= 1:
        return _periodic("hann", m, ())
    width = int(np.floor(alpha * m / 2.0))
    d = np.minimum(n, m - n)  # distance from the nearer end of the m + 1 points
    taper = 0.5 * (1.0 + np.cos(np.pi * (2.0 * d / (alpha * m) - 1.0)))
    return np.where(d <= width, taper, 1.0)


def _window_spec(fname: str, window: Any) -> tuple[str, tuple[Any, ...]]:
    spec = (window,) if isinstance(window, str) else tuple(window)
    supported = ", ".join(repr(k) for k in _WINDOW_NAMES)
    if not spec or not isinstance(spec[0], str) or spec[0] not in _CANONICAL:
        raise ValueError(
            f"{fname}: expected a window in ({supported}) or an array, got {window!r}."
        )
    name, params = _CANONICAL[spec[0]], spec[1:]
    if name == "tukey" and len(params) <= 1:
        if params and (
            isinstance(params[0], core.Tracer)
            or np.asarray(params[0]).dtype.kind not in "biuf"
            or np.ndim(params[0]) != 0
        ):
            raise TypeError(
                f"{fname}: expected a concrete real number for the tukey window's alpha, "
                f"got {params[0]!r}."
            )
        return name, tuple(float(p) for p in params)
    if params:
        raise ValueError(
            f"{fname}: the window {spec[0]!r} takes no parameters"
            f"{' but alpha' if name == 'tukey' else ''}, got {window!r}."
        )
    return name, ()


def window_values(fname: str, window: Any, m: int, dtype: Any) -> Any:
    """The window ``window`` of ``m`` points: a name or ``(name, *params)`` tuple in
    the real dtype of ``dtype``, an array in ``dtype`` (complex only for complex data)."""
    if isinstance(window, (str, tuple)):
        name, params = _window_spec(fname, window)
        return _periodic(name, m, params).astype(_real_dtype(dtype))
    win = _array_window(fname, window, dtype)
    size = core.get_aval(win).shape[0]
    if size != m:
        raise ValueError(f"{fname}: expected a window of length {m}, got {size}.")
    return win


def _array_window(fname: str, window: Any, dtype: Any) -> Any:
    (win,) = floats(fname, window, complex_ok=True)
    aval = core.get_aval(win)
    if aval.ndim != 1:
        raise ValueError(f"{fname}: expected a 1-D window, got shape {aval.shape}.")
    if aval.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        raise TypeError(f"{fname}: expected a real window, got one of dtype {aval.dtype}.")
    return win.astype(dtype) if aval.dtype != dtype else win


def _static_int(fname: str, name: str, v: Any) -> int:
    if isinstance(v, core.Tracer):
        raise TypeError(f"{fname}: expected a concrete integer {name}, got a traced value.")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{fname}: expected an integer {name}, got {v!r}.") from None


def _axis(fname: str, name: str, axis: Any, ndim: int) -> int:
    a = _static_int(fname, name, axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"{fname}: expected {name} in [{-ndim}, {ndim}), got {a}.")
    return a % ndim


def _sampling_rate(fname: str, fs: Any) -> Any:
    """``fs`` as a Python float (weak: it keeps the data's precision) or a 0-d tracer."""
    if isinstance(fs, core.Tracer):
        if core.get_aval(fs).ndim != 0:
            raise ValueError(f"{fname}: expected a scalar fs, got shape {core.get_aval(fs).shape}.")
        return fs
    v = np.asarray(fs)
    if v.ndim != 0 or v.dtype.kind not in "biuf":
        raise TypeError(f"{fname}: expected a real scalar fs, got {fs!r}.")
    return float(v)


def _real_dtype(dtype: Any) -> np.dtype:
    return np.dtype(np.finfo(dtype).dtype)


def _complex_dtype(dtype: Any) -> np.dtype:
    return np.dtype(np.result_type(dtype, np.complex64))


# ---------------------------------------------------------------------------
# Segments and their transforms
# ---------------------------------------------------------------------------


def _pad_last(x: Any, before: int, after: int, **kw: Any) -> Any:
    ndim = core.get_aval(x).ndim
    return fnp.pad(x, [(0, 0)] * (ndim - 1) + [(before, after)], **kw)


def _odd_extension(x: Any, n: int) -> Any:
    """``x`` extended by ``n`` points at each end of its last axis, each point
    reflected through the end value (``2 x[0] - x[k]``). ``n = nperseg // 2`` is below
    the length, as ``nperseg`` is at most the input's length."""
    if n < 1:
        return x
    size = core.get_aval(x).shape[-1]
    first, last = x[..., :1], x[..., -1:]
    left = fnp.flip(x[..., 1 : n + 1], axis=-1)
    right = fnp.flip(x[..., size - n - 1 : size - 1], axis=-1)
    return fnp.concatenate([2 * first - left, x, 2 * last - right], axis=-1)


def _extend(x: Any, boundary: str | None, n: int) -> Any:
    if boundary is None:
        return x
    if boundary == "odd":
        return _odd_extension(x, n)
    if boundary == "even":
        return _pad_last(x, n, n, mode="reflect")
    if boundary == "constant":
        return _pad_last(x, n, n, mode="edge")
    return _pad_last(x, n, n)


def _detrend_last(kind: str, d: Any) -> Any:
    """``d`` minus its mean (``"constant"``) or its least-squares line (``"linear"``)
    along the last axis."""
    m = core.get_aval(d).shape[-1]
    centred = d - fnp.sum(d, axis=-1, keepdims=True) / m
    if kind == "constant":
        return centred
    t = np.arange(m, dtype=np.float64)
    t -= t.mean()
    tt = float(np.sum(t * t))
    if tt == 0.0:
        return centred
    t = t.astype(_real_dtype(core.get_aval(d).dtype))
    return centred - fnp.sum(d * t, axis=-1, keepdims=True) / tt * t


def _detrender(fname: str, detrend: Any, axis_given: int) -> Callable[[Any], Any]:
    """The function applied to the segments ``(..., nseg, nperseg)``. A callable gets
    them with the samples of each segment along ``axis`` (the axis as given), as SciPy
    hands them over."""
    if isinstance(detrend, str):
        if detrend in ("constant", "c", "linear", "l"):
            kind = "constant" if detrend in ("constant", "c") else "linear"
            return lambda d: _detrend_last(kind, d)
        raise ValueError(
            f"{fname}: expected detrend False, 'constant', 'linear' or a function, got {detrend!r}."
        )
    if callable(detrend):
        if axis_given == -1:
            return detrend
        return lambda d: fnp.moveaxis(detrend(fnp.moveaxis(d, -1, axis_given)), axis_given, -1)
    if detrend is None or detrend is False:
        return lambda d: d
    raise ValueError(
        f"{fname}: expected detrend False, 'constant', 'linear' or a function, got {detrend!r}."
    )


def _segment_ffts(
    x: Any,
    win: Any,
    detrend: Callable[[Any], Any],
    nperseg: int,
    nstep: int,
    nfft: int,
    twosided: bool,
) -> Any:
    """The FFTs of the detrended, windowed segments of ``x`` along its last axis:
    shape ``(..., nseg, nfreq)``."""
    size = core.get_aval(x).shape[-1]
    starts = np.arange(0, size - nperseg + 1, nstep)
    segs = fnp.take(x, starts[:, None] + np.arange(nperseg)[None, :], axis=-1)
    segs = detrend(segs) * win
    if twosided:
        return fnp.fft.fft(segs, n=nfft, axis=-1)
    return fnp.fft.rfft(fnp.real(segs), n=nfft, axis=-1)


def _spectral(
    fname: str,
    x: Any,
    y: Any,
    fs: Any,
    window: Any,
    nperseg: Any,
    noverlap: Any,
    nfft: Any,
    detrend: Any,
    return_onesided: bool,
    scaling: str,
    axis: Any,
    mode: str,
    boundary: str | None = None,
    padded: bool = False,
    depth: int = 1,
) -> tuple[Any, Any, Any]:
    """Frequencies, segment times and the per-segment spectra (``mode="stft"``: the
    scaled transforms of ``x``; ``"psd"``: the scaled (cross) periodograms) with the
    frequency axis at ``axis`` and the segments last. Warnings point ``depth`` calls
    above the caller."""
    if boundary not in _BOUNDARIES:
        raise ValueError(f"{fname}: expected boundary in {_BOUNDARIES}, got {boundary!r}.")
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"{fname}: expected scaling 'density' or 'spectrum', got {scaling!r}.")
    fs = _sampling_rate(fname, fs)
    if y is None:
        (x,) = floats(fname, x, broadcast=False, complex_ok=True)
    else:
        x, y = floats(fname, x, y, broadcast=False, complex_ok=True)
    sx = core.get_aval(x).shape
    if len(sx) == 0:
        raise ValueError(f"{fname}: expected an array of at least one dimension, got a scalar.")
    axis_given = _static_int(fname, "axis", axis)
    ax = _axis(fname, "axis", axis, len(sx))
    outer = sx[:ax] + sx[ax + 1 :]
    if y is not None:
        sy = core.get_aval(y).shape
        if len(sy) != len(sx):
            raise ValueError(
                f"{fname}: expected x and y of the same number of dimensions, got shapes "
                f"{sx} and {sy}."
            )
        try:
            outer = np.broadcast_shapes(outer, sy[:ax] + sy[ax + 1 :])
        except ValueError:
            raise ValueError(
                f"{fname}: expected x and y to broadcast outside axis {ax}, got shapes {sx} "
                f"and {sy}."
            ) from None
    dtype = core.get_aval(x).dtype
    result_dtype, freq_dtype = _complex_dtype(dtype), _real_dtype(dtype)

    n_in = sx[ax]
    if nperseg is not None:
        nperseg = _static_int(fname, "nperseg", nperseg)
        if nperseg < 1:
            raise ValueError(f"{fname}: expected a positive nperseg, got {nperseg}.")
    if isinstance(window, (str, tuple)):
        _window_spec(fname, window)
        nperseg = n_in if nperseg is None else nperseg
        if nperseg > n_in:
            warnings.warn(
                f"{fname}: nperseg={nperseg} is greater than the input length {n_in}, "
                f"using nperseg={n_in}.",
                stacklevel=2 + depth,
            )
            nperseg = n_in
        win = window_values(fname, window, nperseg, dtype)
    else:
        win = _array_window(fname, window, dtype)
        size = core.get_aval(win).shape[0]
        if size > n_in:
            raise ValueError(
                f"{fname}: expected a window no longer than the input ({n_in} samples), "
                f"got one of length {size}."
            )
        if nperseg is not None and nperseg != size:
            raise ValueError(
                f"{fname}: expected nperseg equal to the window's length {size}, got {nperseg}."
            )
        nperseg = size
    noverlap = nperseg // 2 if noverlap is None else _static_int(fname, "noverlap", noverlap)
    nfft = nperseg if nfft is None else _static_int(fname, "nfft", nfft)

    if y is None and 0 in sx:  # (as JAX: zeros shaped like the input)
        return (fnp.zeros(sx, freq_dtype), fnp.zeros(sx, freq_dtype), fnp.zeros(sx, result_dtype))
    if y is not None and (0 in sx or 0 in core.get_aval(y).shape):
        shape = list(outer)
        shape.insert(ax, min(n_in, core.get_aval(y).shape[ax]))
        return (
            fnp.zeros(shape, freq_dtype),
            fnp.zeros(shape, freq_dtype),
            fnp.zeros(shape, result_dtype),
        )
    if nfft < nperseg:
        raise ValueError(f"{fname}: expected nfft >= nperseg = {nperseg}, got {nfft}.")
    if noverlap >= nperseg:
        raise ValueError(f"{fname}: expected noverlap < nperseg = {nperseg}, got {noverlap}.")
    nstep = nperseg - noverlap

    x = fnp.moveaxis(x, ax, -1)
    if y is not None:
        y = fnp.moveaxis(y, ax, -1)
        nx, ny = core.get_aval(x).shape[-1], core.get_aval(y).shape[-1]
        if nx < ny:
            x = _pad_last(x, 0, ny - nx)
        elif ny < nx:
            y = _pad_last(y, 0, nx - ny)
    x = _extend(x, boundary, nperseg // 2)
    if y is not None:
        y = _extend(y, boundary, nperseg // 2)
    if padded:  # a whole number of segments
        nadd = (-(core.get_aval(x).shape[-1] - nperseg) % nstep) % nperseg
        x = _pad_last(x, 0, nadd)
        if y is not None:
            y = _pad_last(y, 0, nadd)
    length = core.get_aval(x).shape[-1]

    if scaling == "density":
        scale = 1.0 / (fs * fnp.sum(win * win))
    else:
        scale = 1.0 / fnp.sum(win) ** 2
    if mode == "stft":
        scale = fnp.sqrt(scale)

    twosided = not return_onesided
    if not twosided and (dtype.kind == "c"):
        warnings.warn(
            f"{fname}: the input is complex, returning the two-sided spectrum "
            "(return_onesided=False).",
            stacklevel=2 + depth,
        )
        twosided = True
    k = np.fft.fftfreq(nfft) if twosided else np.fft.rfftfreq(nfft)
    freqs = fs * fnp.asarray(k)

    detrend_fn = _detrender(fname, detrend, axis_given)
    spec = _segment_ffts(x, win, detrend_fn, nperseg, nstep, nfft, twosided)
    if y is not None:
        spec = fnp.conj(spec) * _segment_ffts(y, win, detrend_fn, nperseg, nstep, nfft, twosided)
    elif mode == "psd":
        spec = fnp.conj(spec) * spec
    spec = spec * scale
    if not twosided and mode == "psd":  # the negative frequencies folded in
        fold = np.full(core.get_aval(spec).shape[-1], 2.0)
        fold[0] = 1.0
        if nfft % 2 == 0:
            fold[-1] = 1.0
        spec = spec * fold.astype(freq_dtype)

    time = fnp.asarray(np.arange(nperseg / 2, length - nperseg / 2 + 1, nstep), freq_dtype) / fs
    if boundary is not None:
        time = time - (nperseg / 2) / fs
    spec = spec.astype(result_dtype)
    if y is None and mode != "stft":
        spec = fnp.real(spec)
    spec = fnp.moveaxis(spec, -1, ax)
    return freqs.astype(freq_dtype), time.astype(freq_dtype), spec


# ---------------------------------------------------------------------------
# The public functions
# ---------------------------------------------------------------------------


def stft(
    x: Any,
    fs: Any = 1.0,
    window: Any = "hann",
    nperseg: int = 256,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: Any = False,
    return_onesided: bool = True,
    boundary: str | None = "zeros",
    padded: bool = True,
    axis: int = -1,
) -> tuple[Any, Any, Any]:
    """The short-time Fourier transform of ``x`` along ``axis``: ``(f, t, Zxx)``, the
    frequencies, the segment times and the transforms (frequencies at ``axis``, segments
    last), as ``jax.scipy.signal.stft``.

    ``boundary`` extends the input by ``nperseg // 2`` points at both ends (``"zeros"``,
    ``"even"``, ``"odd"``, ``"constant"`` or ``None``); ``padded`` zero-pads the end to
    a whole number of segments. Complex input gives the two-sided transform (with a
    warning if ``return_onesided``). A ``detrend`` function receives the segments with
    their samples along ``axis``, as SciPy passes them (JAX moves another axis there).

    >>> import numpy as np
    >>> f, t, Z = stft(np.array([1.0, 2.0, 3.0, 2.0, 1.0, 0.0, 1.0, 2.0]), nperseg=4)
    >>> Z.shape, [float(v) for v in t]
    ((3, 5), [0.0, 2.0, 4.0, 6.0, 8.0])
    """
    return _spectral(
        "stft",
        x,
        None,
        fs,
        window,
        nperseg,
        noverlap,
        nfft,
        detrend,
        return_onesided,
        "spectrum",
        axis,
        "stft",
        boundary,
        padded,
    )


def _median_bias(n: int) -> float:
    """How much smaller the median of ``n`` periodograms is than their mean, for
    chi-squared values of two degrees of freedom."""
    k = np.arange(2.0, n, 2.0)
    return float(1.0 + np.sum(1.0 / (k + 1.0) - 1.0 / k))


def _average(p: Any, average: str) -> Any:
    """The mean or the bias-corrected median of the periodograms along the last axis."""
    aval = core.get_aval(p)
    if aval.ndim < 2 or 0 in aval.shape:
        return p
    n = aval.shape[-1]
    if n == 1:
        return fnp.reshape(p, aval.shape[:-1])
    if average == "mean":  # (a sum: fnp.mean takes no traced complex arrays)
        return (fnp.sum(p, axis=-1) / n).astype(aval.dtype)
    if aval.dtype.kind == "c":
        med = fnp.median(fnp.real(p), axis=-1) + 1j * fnp.median(fnp.imag(p), axis=-1)
    else:
        med = fnp.median(p, axis=-1)
    return (med / _median_bias(n)).astype(aval.dtype)


def csd(
    x: Any,
    y: Any,
    fs: Any = 1.0,
    window: Any = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: Any = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
) -> tuple[Any, Any]:
    """The cross power spectral density of ``x`` and ``y`` by Welch's method:
    ``(f, Pxy)``, the mean (or the median divided by its bias, ``average="median"``)
    of the cross periodograms ``conj(X) Y`` of the segments, as ``jax.scipy.signal.csd``.

    ``y=None`` gives ``x``'s power spectral density (real). ``nperseg=None`` takes the
    whole input as one segment (JAX's default; SciPy's is 256); the shorter of ``x``
    and ``y`` is zero-padded to the other's length, and the other axes broadcast. An
    unknown ``average`` raises even when there is one segment (JAX ignores it then).

    >>> import numpy as np
    >>> f, p = csd(np.ones(8), np.ones(8), nperseg=4, detrend=False, window="boxcar")
    >>> [complex(v) for v in p]
    [(4+0j), 0j, 0j]
    """
    return _welch(
        "csd",
        x,
        y,
        fs,
        window,
        nperseg,
        noverlap,
        nfft,
        detrend,
        return_onesided,
        scaling,
        axis,
        average,
    )


def _welch(
    fname: str,
    x: Any,
    y: Any,
    fs: Any,
    window: Any,
    nperseg: Any,
    noverlap: Any,
    nfft: Any,
    detrend: Any,
    return_onesided: bool,
    scaling: str,
    axis: Any,
    average: str,
) -> tuple[Any, Any]:
    if average not in ("mean", "median"):
        raise ValueError(f"{fname}: expected average 'mean' or 'median', got {average!r}.")
    f, _, p = _spectral(
        fname,
        x,
        y,
        fs,
        window,
        nperseg,
        noverlap,
        nfft,
        detrend,
        return_onesided,
        scaling,
        axis,
        "psd",
        depth=2,
    )
    if y is not None and core.get_aval(p).dtype.kind != "c":
        p = p.astype(_complex_dtype(core.get_aval(p).dtype))
    return f, _average(p, average)


def welch(
    x: Any,
    fs: Any = 1.0,
    window: Any = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: Any = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
) -> tuple[Any, Any]:
    """The power spectral density of ``x`` by Welch's method: ``(f, Pxx)``, the
    averaged periodograms of windowed segments (``csd`` of ``x`` with itself, real), as
    ``jax.scipy.signal.welch`` (``nperseg=None``: the whole input, as JAX).

    >>> import numpy as np
    >>> f, p = welch(np.array([1.0, -1.0] * 4), nperseg=4, window="boxcar")
    >>> [float(v) for v in f], [float(v) for v in p]
    ([0.0, 0.25, 0.5], [0.0, 0.0, 4.0])
    """
    f, p = _welch(
        "welch",
        x,
        None,
        fs,
        window,
        nperseg,
        noverlap,
        nfft,
        detrend,
        return_onesided,
        scaling,
        axis,
        average,
    )
    return f, fnp.real(p)


def _overlap_add(frames: Any, step: int) -> Any:
    """The frames ``(..., n, m)`` added at offsets ``0, step, 2 step, ...``: shape
    ``(..., step (n - 1) + m)``. Each frame is cut into ``ceil(m / step)`` blocks of
    ``step`` samples; block ``s`` of frame ``j`` lands on output block ``j + s``."""
    *batch, n, m = core.get_aval(frames).shape
    nblocks = -(-m // step)
    frames = fnp.pad(frames, [(0, 0)] * (len(batch) + 1) + [(0, nblocks * step - m)])
    blocks = fnp.reshape(frames, (*batch, n, nblocks, step))
    total = None
    for s in range(nblocks):
        part = blocks[..., :, s, :]
        part = fnp.pad(part, [(0, 0)] * len(batch) + [(s, nblocks - 1 - s), (0, 0)])
        total = part if total is None else total + part
    out = fnp.reshape(total, (*batch, (n + nblocks - 1) * step))
    return out[..., : step * (n - 1) + m]


def istft(
    Zxx: Any,
    fs: Any = 1.0,
    window: Any = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    input_onesided: bool = True,
    boundary: bool = True,
    time_axis: int = -1,
    freq_axis: int = -2,
) -> tuple[Any, Any]:
    """The inverse of :func:`stft`: ``(t, x)``, the signal rebuilt by windowed
    overlap-add of the inverse transforms of ``Zxx`` (frequencies along ``freq_axis``,
    segments along ``time_axis``), as ``jax.scipy.signal.istft``.

    ``boundary=True`` drops the ``nperseg // 2`` points ``stft``'s boundary extension
    added at each end. Defaults as SciPy's where JAX's are off: ``noverlap=0`` means no
    overlap (JAX takes it as the default ``nperseg // 2``) and an odd ``nperseg`` of a
    one-sided input is inverted with ``nfft = nperseg`` (JAX fails on it).

    >>> import numpy as np
    >>> x = np.array([1.0, 2.0, 3.0, 2.0, 1.0, 0.0, 1.0, 2.0])
    >>> [round(float(v), 12) + 0.0 for v in istft(stft(x, nperseg=4)[2])[1]]
    [1.0, 2.0, 3.0, 2.0, 1.0, 0.0, 1.0, 2.0]
    """
    fname = "istft"
    (z,) = floats(fname, Zxx, complex_ok=True)
    aval = core.get_aval(z)
    if aval.ndim < 2:
        raise ValueError(
            f"{fname}: expected an STFT of at least 2 dimensions, got shape {aval.shape}."
        )
    fax = _axis(fname, "freq_axis", freq_axis, aval.ndim)
    tax = _axis(fname, "time_axis", time_axis, aval.ndim)
    if fax == tax:
        raise ValueError(f"{fname}: expected different time and frequency axes, got {fax} twice.")
    fs = _sampling_rate(fname, fs)
    cdtype = _complex_dtype(aval.dtype)
    if aval.dtype != cdtype:
        z = z.astype(cdtype)
    nfreq = aval.shape[fax]
    n_default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg = n_default if nperseg is None else _static_int(fname, "nperseg", nperseg)
    if nperseg < 1:
        raise ValueError(f"{fname}: expected a positive nperseg, got {nperseg}.")
    if nfft is None:
        nfft = nperseg if input_onesided and nperseg == n_default + 1 else n_default
    else:
        nfft = _static_int(fname, "nfft", nfft)
    if nfft < nperseg:
        raise ValueError(f"{fname}: expected nfft >= nperseg = {nperseg}, got {nfft}.")
    noverlap = nperseg // 2 if noverlap is None else _static_int(fname, "noverlap", noverlap)
    if noverlap >= nperseg:
        raise ValueError(f"{fname}: expected noverlap < nperseg = {nperseg}, got {noverlap}.")
    nstep = nperseg - noverlap

    if (fax, tax) != (aval.ndim - 2, aval.ndim - 1):
        rest = tuple(i for i in range(aval.ndim) if i not in (fax, tax))
        z = fnp.transpose(z, rest + (fax, tax))
    if input_onesided:
        xsubs = fnp.fft.irfft(z, n=nfft, axis=-2)
    else:
        xsubs = fnp.fft.ifft(z, n=nfft, axis=-2)
    xsubs = xsubs[..., :nperseg, :]
    dtype = _real_dtype(core.get_aval(xsubs).dtype)
    win = window_values(fname, window, nperseg, dtype)
    nseg = core.get_aval(xsubs).shape[-1]
    frames = fnp.swapaxes(xsubs * fnp.sum(win), -1, -2) * win  # (..., nseg, nperseg)
    x = _overlap_add(frames, nstep)
    norm = _overlap_add(fnp.broadcast_to(win * win, (nseg, nperseg)), nstep)
    if boundary:  # (nperseg == 1 leaves nothing, as SciPy's slice does)
        cut = slice(nperseg // 2, -(nperseg // 2))
        x, norm = x[..., cut], norm[..., cut]
    x = x / fnp.where(norm > 1e-10, norm, 1.0)
    if core.get_aval(x).ndim > 1 and tax != aval.ndim - 1:
        x = fnp.moveaxis(x, -1, tax - 1 if fax < tax else tax)
    time = fnp.arange(core.get_aval(x).shape[0], dtype=dtype) / fs
    return time.astype(dtype), x
