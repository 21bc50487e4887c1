"""functrace.image: resampling images (as ``jax.image``): ``resize``,
``scale_and_translate`` and the ``ResizeMethod`` enum.

Each resampled dimension is a contraction of the image with a weights matrix
``W[input index, output index]``: the kernel of the method evaluated at the distance
between each input pixel centre and the point an output pixel centre maps back to
(pixel ``i`` has its centre at ``i + 0.5``), the kernel stretched by ``1 / scale`` when
downsampling with ``antialias``, each column divided by its sum, and columns whose point
falls outside the input set to zero. They are built from ``functrace.numpy``
operations, so the results differentiate (in the image, and in ``scale_and_translate``'s
``scale`` and ``translation``), batch and jit; for ``resize`` the weights are constants.
The values are JAX's (to rounding).

>>> import numpy as np
>>> resize(np.array([0.0, 1.0]), (4,), "linear").tolist()
[0.0, 0.25, 0.75, 1.0]
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace.lax.contraction import Precision, check_precision
from functrace.numpy._core import asarray_or_tracer

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """The resampling kernels of ``resize`` and ``scale_and_translate`` (JAX's members):
    ``NEAREST``, ``LINEAR`` (the triangle), ``LANCZOS3`` and ``LANCZOS5`` (windowed
    sinc of radius 3 and 5), ``CUBIC`` (Keys' cubic with ``a = -0.5``),
    ``CUBIC_PYTORCH`` (``CUBIC`` with ``antialias``; else ``a = -0.75`` with the edge
    pixels repeated, as PyTorch's bicubic) and ``AREA`` (the overlap of each output
    pixel's footprint with each input pixel)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The member a method name stands for: ``"nearest"``; ``"linear"``,
        ``"bilinear"``, ``"trilinear"``, ``"triangle"``; ``"lanczos3"``, ``"lanczos5"``;
        ``"cubic"``, ``"bicubic"``, ``"tricubic"``; ``"cubic-pytorch"``,
        ``"bicubic-pytorch"``; ``"area"``. Another string is JAX's ``ValueError``
        ("Unknown resize method").

        >>> ResizeMethod.from_string("bilinear")
        <ResizeMethod.LINEAR: 1>
        """
        return _method("ResizeMethod.from_string", s)


_NAMES: dict[str, ResizeMethod] = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR,
    "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR,
    "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3,
    "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC,
    "bicubic": ResizeMethod.CUBIC,
    "tricubic": ResizeMethod.CUBIC,
    "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "area": ResizeMethod.AREA,
}


def _method(fname: str, method: Any) -> ResizeMethod:
    if isinstance(method, ResizeMethod):
        return method
    if not isinstance(method, str):
        raise TypeError(
            f"{fname}: expected method as a ResizeMethod or its name, "
            f"got {type(method).__name__} {method!r}."
        )
    if method not in _NAMES:
        raise ValueError(
            f'{fname}: Unknown resize method "{method}"; expected one of {", ".join(_NAMES)} '
            "or a ResizeMethod."
        )
    return _NAMES[method]


# ---------------------------------------------------------------------------
# Kernels, as functions of the distance x >= 0 (in input pixels, already divided by the
# kernel's stretch)
# ---------------------------------------------------------------------------


def _triangle(xp: Any, x: Any) -> Any:
    return xp.maximum(0, 1 - xp.abs(x))


def _keys_cubic(xp: Any, x: Any) -> Any:
    # Keys' cubic convolution kernel with a = -0.5 (piecewise in [0, 1), [1, 2), beyond)
    near = ((1.5 * x - 2.5) * x) * x + 1.0
    far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return xp.where(x >= 2.0, 0.0, xp.where(x >= 1.0, far, near))


def _opencv_cubic(xp: Any, x: Any) -> Any:
    # the same family with a = -0.75 (OpenCV's, and PyTorch's without antialiasing)
    a = -0.75
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return xp.where(x >= 2.0, 0.0, xp.where(x >= 1.0, far, near))


def _lanczos(radius: float) -> Callable[[Any, Any], Any]:
    def kernel(xp: Any, x: Any) -> Any:
        # radius sin(pi x) sin(pi x / radius) / (pi x)^2, its limit 1 near 0, 0 beyond
        num = radius * xp.sin(np.pi * x) * xp.sin(np.pi * x / radius)
        den = xp.where(x != 0, np.pi**2 * x**2, 1)
        inner = xp.where(x > 1e-3, num / den, 1)
        return xp.where(x > radius, 0.0, inner)

    return kernel


_AREA = "area"  # (not a kernel of the distance: the overlap of two intervals)

# method -> (radius, kernel)
_KERNELS: dict[ResizeMethod, tuple[int, Any]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}

# Columns whose weights sum to less than this are set to zero rather than normalised.
_TINY_SUM = 1000.0 * float(np.finfo(np.float32).eps)


def _weights(
    m: int,
    n: int,
    scale: Any,
    translation: Any,
    kernel: Any,
    antialias: bool,
    edge_radius: int | None,
    dtype: np.dtype,
    xp: Any,
) -> Any:
    """The ``(m, n)`` matrix taking ``m`` input samples to ``n`` output samples, in
    ``dtype``. ``edge_radius`` (for PyTorch's cubic without antialiasing) repeats the
    edge pixels that far beyond each edge; else points beyond the input get zero.
    ``xp`` is NumPy for a known scale and translation (the matrix is then a constant,
    also under ``jit``), else ``functrace.numpy``."""
    inv = 1.0 / scale
    stretch = xp.maximum(inv, 1.0) if antialias else 1.0
    out_pos = xp.arange(n, dtype=dtype)
    # the point (in input pixel indices) each output pixel's centre maps back to
    point = (out_pos + 0.5) * inv - translation * inv - 0.5
    if kernel is _AREA:
        left = out_pos * inv - translation * inv
        right = left + inv
        lo = xp.arange(m, dtype=dtype)[:, None]
        w = xp.maximum(0.0, xp.minimum(right[None, :], lo + 1.0) - xp.maximum(left[None, :], lo))
    else:
        k = edge_radius or 0
        src = xp.arange(-k, m + k, dtype=dtype)
        w = kernel(xp, xp.abs(point[None, :] - src[:, None]) / stretch)
        if k:
            # the weights of the pixels beyond an edge go to the edge pixel
            rows = np.clip(np.arange(-k, m + k), 0, m - 1)
            gather = (rows[None, :] == np.arange(m)[:, None]).astype(dtype)
            w = xp.matmul(gather, w)
    total = xp.sum(w, axis=0, keepdims=True)
    w = xp.where(xp.abs(total) > _TINY_SUM, w / xp.where(total != 0, total, 1), 0)
    if not edge_radius:
        inside = (point >= -0.5) & (point <= m - 0.5)
        w = xp.where(inside[None, :], w, 0)
    return w


def _inexact(dt: np.dtype) -> np.dtype:
    # JAX's promotion to an inexact dtype: 64-bit integers to float64, other integers
    # and bool to float32
    if dt.kind in "fc":
        return dt
    if dt.kind in "iu" and dt.itemsize == 8:
        return np.dtype(np.float64)
    return np.dtype(np.float32)


def _image(fname: str, image: Any) -> Any:
    # (strings, bytes and objects are asarray_or_tracer's TypeError naming fname)
    x = asarray_or_tracer(image, fname)
    return x if isinstance(x, core.Tracer) else np.asarray(x)


def _shape(fname: str, shape: Any, image_shape: tuple[int, ...]) -> tuple[int, ...]:
    try:
        out = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(
            f"{fname}: expected shape as a sequence of integers, got {shape!r}."
        ) from None
    if len(out) != len(image_shape):
        raise ValueError(
            f"{fname}: shape must have length equal to the number of dimensions of the "
            f"image; got shape {out} for an image of shape {image_shape}."
        )
    if any(s < 0 for s in out):
        raise ValueError(f"{fname}: expected a shape of sizes >= 0, got {out}.")
    return out


def _contract(x: Any, dims: Sequence[int], mats: Sequence[Any]) -> Any:
    """``x`` with each axis ``dims[i]`` contracted with the rows of ``mats[i]`` (the
    output axis taking its place)."""
    for d, w in zip(dims, mats):
        x = fnp.moveaxis(fnp.tensordot(x, w, axes=([d], [0])), -1, d)
    return x


def _resample(
    fname: str,
    x: Any,
    shape: tuple[int, ...],
    dims: Sequence[int],
    scales: Sequence[Any],
    translations: Sequence[Any],
    method: ResizeMethod,
    antialias: bool,
    dtype: np.dtype,
) -> Any:
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge = radius if method is ResizeMethod.CUBIC_PYTORCH else None
    in_shape = core.get_aval(x).shape
    x_dt = core.get_aval(x).dtype
    known = not any(isinstance(v, core.Tracer) for v in (*scales, *translations))
    xp = np if known else fnp
    mats = []
    for d, s, t in zip(dims, scales, translations):
        w = _weights(in_shape[d], shape[d], s, t, kernel, bool(antialias), edge, dtype, xp)
        mats.append(w.astype(x_dt))
    return _contract(x, dims, mats)


def _nearest(x: Any, shape: tuple[int, ...]) -> Any:
    x = fnp.asarray(x)
    in_shape = core.get_aval(x).shape
    for d, (m, n) in enumerate(zip(in_shape, shape)):
        if m == n:
            continue
        # JAX's source indices, computed in float32: floor((i + 0.5) * m / n)
        pos = (np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m)
        src = np.floor(pos / np.float32(n)).astype(np.int64)
        index: list[Any] = [slice(None)] * len(in_shape)
        index[d] = np.minimum(src, m - 1)
        x = x[tuple(index)]
    return x


def resize(
    image: Any,
    shape: Sequence[int],
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: Any = Precision.HIGHEST,
) -> Any:
    """``image`` resampled to ``shape`` (one size per dimension of ``image``; batch
    and channel dimensions keep their size, and dimensions that keep their size are
    left as they are), with half-pixel centres, as ``jax.image.resize``.

    ``method`` is a :class:`ResizeMethod` or its name (``"nearest"``, ``"linear"``,
    ``"cubic"``, ``"lanczos3"``, ``"lanczos5"``, ``"cubic-pytorch"``, ``"area"`` and the
    aliases ``ResizeMethod.from_string`` takes). With ``antialias`` (the default) the
    kernel is stretched by the reduction factor when downsampling, so it averages
    rather than skips; it changes nothing when upsampling. ``"nearest"`` picks the input
    pixel ``floor((i + 0.5) * in / out)`` (computed in float32, as JAX) and keeps the
    image's dtype; the other methods return a float image (integer and bool images
    become float32, 64-bit integers float64, as JAX). ``precision`` is validated and
    ignored (CPU products use the operands' precision). Differentiable in ``image``.

    >>> import numpy as np
    >>> resize(np.array([[1.0, 2.0], [3.0, 4.0]]), (2, 1), "linear").tolist()
    [[1.5], [3.5]]
    """
    fname = "resize"
    x = _image(fname, image)
    in_shape = core.get_aval(x).shape
    out_shape = _shape(fname, shape, in_shape)
    m_ = _method(fname, method)
    check_precision(fname, precision)
    dims = [d for d in range(len(in_shape)) if in_shape[d] != out_shape[d]]
    for d in dims:
        if in_shape[d] == 0:
            raise ValueError(
                f"{fname}: cannot resize dimension {d} of size 0 to size {out_shape[d]} "
                f"(an empty dimension has no values to resample); image shape {in_shape}, "
                f"shape {out_shape}."
            )
    if m_ is ResizeMethod.NEAREST:
        return _nearest(x, out_shape)
    dt = _inexact(core.get_aval(x).dtype)
    x = fnp.asarray(x).astype(dt)
    scales = [1.0 if out_shape[d] == 0 else out_shape[d] / in_shape[d] for d in dims]
    return _resample(
        fname, x, out_shape, dims, scales, [0.0] * len(dims), m_, antialias, np.dtype(np.float64)
    )


def scale_and_translate(
    image: Any,
    shape: Sequence[int],
    spatial_dims: Sequence[int],
    scale: Any,
    translation: Any,
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: Any = Precision.HIGHEST,
) -> Any:
    """``image`` resampled to ``shape`` under the map taking input coordinate ``y`` of
    spatial dimension ``spatial_dims[i]`` to ``y * scale[i] + translation[i]`` in the
    output (pixel ``j`` has its centre at ``j + 0.5``; output pixels whose centre maps
    back outside the input are zero), as ``jax.image.scale_and_translate``.

    ``scale`` and ``translation`` hold one value per spatial dimension (arrays or
    sequences; JAX takes arrays only); the weights are computed in their common float
    dtype and then cast to the image's. Dimensions not in ``spatial_dims`` must keep
    their size. ``method`` and ``antialias`` are as in :func:`resize`, except that
    ``"nearest"`` is not supported (as JAX). ``precision`` is validated and ignored.
    Differentiable in ``image``, ``scale`` and ``translation``.

    >>> import numpy as np
    >>> img = np.array([0.0, 1.0, 2.0, 3.0])
    >>> scale_and_translate(img, (4,), (0,), np.array([1.0]), np.array([1.0]), "linear").tolist()
    [0.0, 0.0, 1.0, 2.0]
    """
    fname = "scale_and_translate"
    x = _image(fname, image)
    in_shape = core.get_aval(x).shape
    out_shape = _shape(fname, shape, in_shape)
    m_ = _method(fname, method)
    check_precision(fname, precision)
    if m_ is ResizeMethod.NEAREST:
        raise ValueError(
            f"{fname}: Nearest neighbor resampling is not currently supported for "
            "scale_and_translate (use resize, or 'linear')."
        )
    ndim = len(in_shape)
    try:
        dims = [operator.index(d) for d in spatial_dims]
    except TypeError:
        raise TypeError(
            f"{fname}: expected spatial_dims as a sequence of integers, got {spatial_dims!r}."
        ) from None
    for d in dims:
        if not -ndim <= d < ndim:
            raise ValueError(
                f"{fname}: expected spatial_dims in [{-ndim}, {ndim}) for an image of shape "
                f"{in_shape}, got {tuple(spatial_dims)}."
            )
    dims = [d % ndim for d in dims]
    if len(set(dims)) != len(dims):
        raise ValueError(f"{fname}: expected distinct spatial_dims, got {tuple(spatial_dims)}.")
    for d in range(ndim):
        if d not in dims and in_shape[d] != out_shape[d]:
            raise ValueError(
                f"{fname}: dimension {d} is not in spatial_dims {tuple(dims)}, so it must keep "
                f"its size; got image shape {in_shape} and shape {out_shape}."
            )
    params = []
    for name, v in (("scale", scale), ("translation", translation)):
        a = asarray_or_tracer(v, fname)
        aval = core.get_aval(a)
        if aval.shape != (len(dims),):
            raise ValueError(
                f"{fname}: expected {name} with one value per spatial dimension, shape "
                f"({len(dims)},), got shape {aval.shape}."
            )
        if aval.dtype.kind not in "biuf":
            raise TypeError(f"{fname}: expected a real {name}, got dtype {aval.dtype}.")
        params.append(a)
    w_dt = _inexact(np.result_type(*(core.get_aval(p).dtype for p in params)))
    scale_a, trans_a = (
        p.astype(w_dt) if isinstance(p, core.Tracer) else np.asarray(p, w_dt) for p in params
    )
    x = fnp.asarray(x).astype(_inexact(core.get_aval(x).dtype))
    if not dims:
        return x
    scales = [scale_a[i] for i in range(len(dims))]
    trans = [trans_a[i] for i in range(len(dims))]
    return _resample(fname, x, out_shape, dims, scales, trans, m_, antialias, w_dt)
