"""Weight initialisers with the semantics of ``jax.nn.initializers`` (also importable
as ``functrace.example_libraries.initializers``).

Each factory returns ``init(key, shape, dtype=float64) -> array``; ``key`` is a PRNG
key from ``functrace.random``, so the same key gives JAX's values (up to rounding).
The default dtype is float64, functrace's default float (JAX's is float32 unless
``jax_enable_x64`` is set). These are JAX's key-based initialisers; the layers of
``functrace.nn`` draw PyTorch's default initialisations from a NumPy ``rng`` instead.

>>> from functrace import random
>>> from functrace.nn import initializers
>>> initializers.orthogonal()(random.key(0), (3, 2)).shape
(3, 2)
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import numpy as fnp
from functrace import random

Initializer = Callable[..., Any]
"""The type of an initialiser: ``init(key, shape, dtype=float64) -> array``."""

# The standard deviation of a standard normal truncated to (-2, 2).
_TRUNCATED_STD = 0.87962566103423978


def _shape(fname: str, shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        out = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{fname}: shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"{fname}: shape must not have negative sizes, got {out}")
    return out


def _is_complex(dtype: Any) -> bool:
    return np.dtype(dtype).kind == "c"


def _real(dtype: Any) -> np.dtype:
    return np.empty((), dtype).real.dtype


def _polar(r: Any, theta: Any, dtype: Any) -> Any:
    return fnp.astype(r * fnp.cos(theta), dtype) + fnp.astype(r * fnp.sin(theta), dtype) * 1j


def _normal(key: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """Standard normal samples; for a complex dtype, ``(re + 1j * im) / sqrt(2)`` with
    the two parts drawn from the halves of ``split(key)`` (unit variance, as JAX)."""
    if not _is_complex(dtype):
        return random.normal(key, shape, dtype)
    k_re, k_im = random.split(key)
    rd = _real(dtype)
    re, im = random.normal(k_re, shape, rd), random.normal(k_im, shape, rd)
    s = np.asarray(1 / math.sqrt(2), rd)
    return fnp.astype(re * s, dtype) + fnp.astype(im * s, dtype) * 1j


def _complex_uniform(key: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """Uniform on the disk of radius ``sqrt(2)`` (zero mean, unit variance)."""
    k_r, k_theta = random.split(key)
    rd = _real(dtype)
    r = fnp.sqrt(2 * random.uniform(k_r, shape, rd))
    theta = 2 * np.pi * random.uniform(k_theta, shape, rd)
    return _polar(r, theta, dtype)


def _complex_truncated_normal(key: Any, upper: float, shape: tuple[int, ...], dtype: Any) -> Any:
    """A circular complex normal with its modulus truncated to ``upper``."""
    k_r, k_theta = random.split(key)
    rd = _real(dtype)
    t = (1 - np.exp(-(upper**2))) * random.uniform(k_r, shape, rd)
    r = fnp.sqrt(-fnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(k_theta, shape, rd)
    return _polar(r, theta, dtype)


# The standard deviation of the modulus-truncated complex normal above, for upper=2.
_COMPLEX_TRUNCATED_STD = 0.95311164380491208


def zeros(key: Any, shape: Any, dtype: Any = np.float64) -> Any:
    """An array of zeros (the key is ignored)."""
    return fnp.zeros(_shape("initializers.zeros", shape), dtype=dtype)


def ones(key: Any, shape: Any, dtype: Any = np.float64) -> Any:
    """An array of ones (the key is ignored)."""
    return fnp.ones(_shape("initializers.ones", shape), dtype=dtype)


def constant(value: Any, dtype: Any = np.float64) -> Initializer:
    """Initialiser filling the array with ``value``."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        return fnp.full(_shape("initializers.constant", shape), value, dtype=dtype)

    return init


def uniform(scale: float = 1e-2, dtype: Any = np.float64) -> Initializer:
    """Uniform on ``[0, scale)``."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        return random.uniform(key, _shape("initializers.uniform", shape), dtype) * scale

    return init


def normal(stddev: float = 1e-2, dtype: Any = np.float64) -> Initializer:
    """Normal with mean 0 and standard deviation ``stddev`` (for a complex dtype, a
    circular complex normal with that standard deviation, as JAX)."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        return _normal(key, _shape("initializers.normal", shape), dtype) * stddev

    return init


def truncated_normal(
    stddev: float = 1e-2, dtype: Any = np.float64, lower: float = -2.0, upper: float = 2.0
) -> Initializer:
    """A standard normal truncated to ``(lower, upper)``, times ``stddev``."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        shp = _shape("initializers.truncated_normal", shape)
        return random.truncated_normal(key, lower, upper, shp, dtype) * stddev

    return init


def _axis_size(shape: tuple[int, ...], axis: int | Sequence[int]) -> int:
    if isinstance(axis, (int, np.integer)):
        return shape[int(axis)]
    return math.prod(shape[a] for a in axis)


def compute_fans(
    shape: tuple[int, ...],
    in_axis: int | Sequence[int] = -2,
    out_axis: int | Sequence[int] = -1,
    batch_axis: int | Sequence[int] = (),
) -> tuple[float, float]:
    """``(fan_in, fan_out)`` of a weight shape; the axes not named form the receptive field."""
    if len(shape) < 2 and isinstance(in_axis, int) and in_axis == -2:
        raise ValueError(
            f"variance_scaling: cannot compute the fans of a {len(shape)}-d weight of shape "
            f"{shape} with the default in_axis=-2; the weight must be at least 2-d, or pass "
            "in_axis explicitly"
        )
    in_size = _axis_size(shape, in_axis)
    out_size = _axis_size(shape, out_axis)
    batch_size = _axis_size(shape, batch_axis) if batch_axis != () else 1
    receptive = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def variance_scaling(
    scale: float,
    mode: str,
    distribution: str,
    in_axis: int | Sequence[int] = -2,
    out_axis: int | Sequence[int] = -1,
    batch_axis: int | Sequence[int] = (),
    dtype: Any = np.float64,
) -> Initializer:
    """Samples with variance ``scale / n``, ``n`` given by ``mode`` from the fans.

    ``mode``: ``"fan_in"``, ``"fan_out"``, ``"fan_avg"`` (their mean) or
    ``"fan_geo_avg"`` (their geometric mean). ``distribution``: ``"truncated_normal"``
    (a normal truncated to two standard deviations, rescaled to that variance),
    ``"normal"`` or ``"uniform"`` (on ``[-sqrt(3 var), sqrt(3 var))``). Complex dtypes
    work as in JAX: a circular normal (its modulus truncated for ``"truncated_normal"``)
    or uniform on a disk, with that variance.
    """
    if mode not in _MODES:
        raise ValueError(f"variance_scaling: mode must be one of {_MODES}, got {mode!r}")
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(
            f"variance_scaling: distribution must be one of {_DISTRIBUTIONS}, got {distribution!r}"
        )

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        shp = _shape("variance_scaling", shape)
        fan_in, fan_out = compute_fans(shp, in_axis, out_axis, batch_axis)
        denominator = {
            "fan_in": fan_in,
            "fan_out": fan_out,
            "fan_avg": (fan_in + fan_out) / 2,
            "fan_geo_avg": math.sqrt(fan_in * fan_out),
        }[mode]
        rd = _real(dtype)
        variance = np.asarray(scale / denominator, dtype=rd)
        if _is_complex(dtype):
            if distribution == "truncated_normal":
                stddev = np.sqrt(variance) / np.asarray(_COMPLEX_TRUNCATED_STD, rd)
                return _complex_truncated_normal(key, 2, shp, dtype) * stddev
            if distribution == "normal":
                return _normal(key, shp, dtype) * np.sqrt(variance)
            return _complex_uniform(key, shp, dtype) * np.sqrt(variance)
        if distribution == "truncated_normal":
            stddev = np.sqrt(variance) / np.asarray(_TRUNCATED_STD, dtype=dtype)
            return random.truncated_normal(key, -2, 2, shp, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shp, dtype) * np.sqrt(variance)
        return random.uniform(key, shp, dtype, -1, 1) * np.sqrt(3 * variance)

    return init


def glorot_normal(
    in_axis: int = -2, out_axis: int = -1, batch_axis: Any = (), dtype: Any = np.float64
) -> Initializer:
    """Glorot (Xavier) normal: ``variance_scaling(1.0, "fan_avg", "truncated_normal")``."""
    return variance_scaling(
        1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis, dtype
    )


def glorot_uniform(
    in_axis: int = -2, out_axis: int = -1, batch_axis: Any = (), dtype: Any = np.float64
) -> Initializer:
    """Glorot (Xavier) uniform: ``variance_scaling(1.0, "fan_avg", "uniform")``."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(
    in_axis: int = -2, out_axis: int = -1, batch_axis: Any = (), dtype: Any = np.float64
) -> Initializer:
    """He (Kaiming) normal: ``variance_scaling(2.0, "fan_in", "truncated_normal")``."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def he_uniform(
    in_axis: int = -2, out_axis: int = -1, batch_axis: Any = (), dtype: Any = np.float64
) -> Initializer:
    """He (Kaiming) uniform: ``variance_scaling(2.0, "fan_in", "uniform")``."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(
    in_axis: int = -2, out_axis: int = -1, batch_axis: Any = (), dtype: Any = np.float64
) -> Initializer:
    """LeCun normal: ``variance_scaling(1.0, "fan_in", "truncated_normal")``."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def lecun_uniform(
    in_axis: int = -2, out_axis: int = -1, batch_axis: Any = (), dtype: Any = np.float64
) -> Initializer:
    """LeCun uniform: ``variance_scaling(1.0, "fan_in", "uniform")``."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def _axis(fname: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{fname}: expected column_axis in [{-ndim}, {ndim}), got {axis}")
    return axis % ndim


def orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = np.float64) -> Initializer:
    """A (semi-)orthogonal matrix times ``scale``, drawn uniformly (Haar): the columns
    along ``column_axis`` are orthonormal when there are no more of them than rows (the
    other axes flattened), else the rows are. From the QR decomposition of a standard
    normal matrix with the signs of ``R``'s diagonal moved into ``Q``, as JAX."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        shp = _shape("orthogonal", shape)
        if len(shp) < 2:
            raise ValueError(f"orthogonal: expected a shape with at least 2 dims, got {shp}")
        ca = _axis("orthogonal", column_axis, len(shp))
        n_cols = shp[ca]
        if math.prod(shp) == 0:
            return fnp.zeros(shp, dtype=dtype)
        n_rows = math.prod(shp) // n_cols
        wide = n_rows < n_cols
        a = _normal(key, (n_cols, n_rows) if wide else (n_rows, n_cols), dtype)
        q, r = fnp.linalg.qr(a)
        q = q * fnp.sign(fnp.diagonal(r))
        if wide:
            q = fnp.transpose(q)
        q = fnp.reshape(q, (*shp[:ca], *shp[ca + 1 :], n_cols))
        return fnp.moveaxis(q, -1, ca) * scale

    return init


def delta_orthogonal(
    scale: float = 1.0, column_axis: int = -1, dtype: Any = np.float64
) -> Initializer:
    """The delta-orthogonal kernel of Xiao et al. (2018) for 1-, 2- and 3-d convolutions
    (shape ``(*spatial, in, out)``, with ``in <= out``): zeros except the spatial
    centre, ``(k - 1) // 2`` along each spatial axis, which is ``orthogonal(scale,
    column_axis)`` of shape ``(in, out)``."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        shp = _shape("delta_orthogonal", shape)
        if len(shp) not in (3, 4, 5):
            raise ValueError(f"delta_orthogonal: expected a 3-d, 4-d or 5-d shape, got {shp}")
        if shp[-1] < shp[-2]:
            raise ValueError(
                f"delta_orthogonal: expected shape[-2] <= shape[-1] (fan_in <= fan_out), got {shp}"
            )
        ortho = orthogonal(scale, column_axis, dtype)(key, shp[-2:], dtype)
        centre = tuple((k - 1) // 2 for k in shp[:-2])
        return fnp.zeros(shp, dtype=dtype).at[centre].set(ortho)

    return init


xavier_normal = glorot_normal
xavier_uniform = glorot_uniform
kaiming_normal = he_normal
kaiming_uniform = he_uniform

__all__ = [
    "Initializer",
    "compute_fans",
    "constant",
    "delta_orthogonal",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "orthogonal",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
]
