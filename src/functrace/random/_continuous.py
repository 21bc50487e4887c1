"""Continuous samplers: ``uniform``, ``normal``, ``truncated_normal``, ``exponential``,
``laplace``, ``logistic``, ``gumbel`` and ``multivariate_normal`` (the gamma family is
in ``functrace.random._gamma``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import lax
from functrace.random._args import (
    _DEFAULT_FLOAT,
    _UINTS,
    _as,
    _canonical_shape,
    _check_shape,
    _check_sharding,
    _dtype_of,
    _float_dtype,
    _full,
    _quiet,
    _shape_of,
)
from functrace.random._keys import _check_key, _random_bits, split


def _unit_floats(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Floats in [0, 1) from the top mantissa bits (JAX's mantissa trick: the value is
    exactly ``m * 2**-nmant``)."""
    info = np.finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    raw = _random_bits(key, nbits, shape)
    uint = _UINTS[nbits]
    m = lax.div(raw, _full(raw, 2 ** (nbits - nmant), uint))  # shift right logically
    return lax.mul(lax.convert_element_type(m, dtype), _full(m, 2.0**-nmant, dtype))


@_quiet
def uniform(
    key: Any,
    shape: Sequence[int] = (),
    dtype: Any = None,
    minval: Any = 0.0,
    maxval: Any = 1.0,
    *,
    out_sharding: Any = None,
) -> Any:
    """Uniform samples in ``[minval, maxval)`` (default dtype float64).

    >>> import functrace.random as random
    >>> random.uniform(random.PRNGKey(0), (2,), dtype="float32")
    array([0.947667 , 0.9785799], dtype=float32)
    """
    key = _check_key("uniform", key)
    _check_sharding("uniform", out_sharding)
    shape = _canonical_shape("uniform", shape)
    dt = _float_dtype("uniform", dtype)
    return _uniform(key, shape, dt, minval, maxval)


def _uniform(key: Any, shape: tuple[int, ...], dt: np.dtype, minval: Any, maxval: Any) -> Any:
    lo, hi = _as(minval, dt), _as(maxval, dt)
    _check_shape("uniform", shape, _shape_of(lo), _shape_of(hi))
    floats = _unit_floats(key, shape, dt)
    return fnp.maximum(lo, floats * (hi - lo) + lo)


@_quiet
def normal(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Standard normal samples (``sqrt(2) * erf_inv(u)``, u uniform on (-1, 1)); for a
    complex dtype, unit-variance circular samples, as JAX.

    >>> import functrace.random as random
    >>> random.normal(random.PRNGKey(0), (2,))
    array([-0.20584214, -0.78476578])
    """
    key = _check_key("normal", key)
    _check_sharding("normal", out_sharding)
    shape = _canonical_shape("normal", shape)
    dt = _float_dtype("normal", dtype, complex_ok=True)
    if dt.kind == "c":
        return _complex_normal(key, shape, dt)
    return _normal(key, shape, dt)


def _complex_normal(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    # unit variance: real and imaginary parts from the two halves of split(key), each
    # divided by sqrt(2) (JAX's layout)
    both = split(key)
    rd = np.empty((), dt).real.dtype
    re = fnp.astype(_normal(both[0], shape, rd), dt)
    im = fnp.astype(_normal(both[1], shape, rd), dt)
    return (re + 1j * im) / np.array(math.sqrt(2), dt)


def _normal(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    lo = np.nextafter(np.array(-1.0, dt), np.array(0.0, dt))
    u = _uniform(key, shape, dt, lo, np.array(1.0, dt))
    return lax.mul(_full(u, math.sqrt(2), dt), lax.erf_inv(u))


@_quiet
def truncated_normal(
    key: Any,
    lower: Any,
    upper: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Normal samples truncated to the open interval ``(lower, upper)``.

    >>> import functrace.random as random
    >>> x = random.truncated_normal(random.PRNGKey(0), -1.0, 1.0, (100,))
    >>> bool((x > -1).all() and (x < 1).all())
    True
    """
    key = _check_key("truncated_normal", key)
    _check_sharding("truncated_normal", out_sharding)
    dt = _float_dtype("truncated_normal", dtype)
    lower, upper = _as(lower, dt), _as(upper, dt)
    if shape is None:
        shp = tuple(np.broadcast_shapes(_shape_of(lower), _shape_of(upper)))
    else:
        shp = _canonical_shape("truncated_normal", shape)
        _check_shape("truncated_normal", shp, _shape_of(lower), _shape_of(upper))
    sqrt2 = np.array(math.sqrt(2), dt)
    a = lax.erf(fnp.divide(lower, sqrt2))
    b = lax.erf(fnp.divide(upper, sqrt2))
    u = _uniform(key, shp, dt, a, b)
    out = sqrt2 * lax.erf_inv(u)
    inf = np.array(np.inf, dt)
    lo = lax.nextafter(*_same(lax.stop_gradient(lower), inf))
    hi = lax.nextafter(*_same(lax.stop_gradient(upper), -inf))
    return fnp.clip(out, lo, hi)


def _same(x: Any, y: Any) -> tuple[Any, Any]:
    # y (a scalar constant) broadcast to x's shape, for the equal-shape lax primitives
    shape = _shape_of(x)
    if shape:
        y = lax.broadcast_in_dim(y, shape, ())
    return x, y


@_quiet
def exponential(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Exponential(1) samples: ``-log1p(-u)``.

    >>> import functrace.random as random
    >>> float(random.exponential(random.PRNGKey(0))) > 0
    True
    """
    key = _check_key("exponential", key)
    _check_sharding("exponential", out_sharding)
    dt = _float_dtype("exponential", dtype)
    return _exponential(key, _canonical_shape("exponential", shape), dt)


def _exponential(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    u = _uniform(key, shape, dt, 0.0, 1.0)
    return lax.neg(lax.log1p(lax.neg(u)))


@_quiet
def laplace(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Laplace(0, 1) samples.

    >>> import functrace.random as random
    >>> random.laplace(random.PRNGKey(0), (3,)).shape
    (3,)
    """
    key = _check_key("laplace", key)
    _check_sharding("laplace", out_sharding)
    dt = _float_dtype("laplace", dtype)
    shp = _canonical_shape("laplace", shape)
    u = _uniform(key, shp, dt, -1.0 + np.finfo(dt).epsneg, 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@_quiet
def logistic(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Standard logistic samples: ``log(u) - log1p(-u)``.

    >>> import functrace.random as random
    >>> random.logistic(random.PRNGKey(0), (3,)).shape
    (3,)
    """
    key = _check_key("logistic", key)
    _check_sharding("logistic", out_sharding)
    dt = _float_dtype("logistic", dtype)
    shp = _canonical_shape("logistic", shape)
    x = _uniform(key, shp, dt, np.finfo(dt).tiny, 1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


@_quiet
def gumbel(
    key: Any,
    shape: Sequence[int] = (),
    dtype: Any = None,
    mode: str | None = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Standard Gumbel samples: ``-log(-log(u))``; ``mode="high"`` uses two uniforms per
    sample for more resolution near 0 (as JAX).

    >>> import functrace.random as random
    >>> random.gumbel(random.PRNGKey(0), (3,)).shape
    (3,)
    """
    key = _check_key("gumbel", key)
    _check_sharding("gumbel", out_sharding)
    dt = _float_dtype("gumbel", dtype)
    return _gumbel(key, _canonical_shape("gumbel", shape), dt, mode)


def _gumbel(key: Any, shape: tuple[int, ...], dt: np.dtype, mode: str | None) -> Any:
    info = np.finfo(dt)
    if mode in (None, "low"):
        u = _uniform(key, shape, dt, info.tiny, 1.0)
        return -fnp.log(-fnp.log(u))
    if mode == "high":
        both = _uniform(key, (2, *shape), dt, 0.0, 1.0)
        high, low = both[0], both[1]
        x = fnp.where(high >= 0.5, high, high + 2.0**-info.nmant * low + info.tiny)
        return -fnp.log(-fnp.log1p(-x))
    raise ValueError(f"random.gumbel: expected mode None, 'low' or 'high', got {mode!r}.")


@_quiet
def multivariate_normal(
    key: Any,
    mean: Any,
    cov: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    method: str = "cholesky",
    *,
    out_sharding: Any = None,
) -> Any:
    """Samples ``mean + L z`` with ``L L^T = cov`` (``method``: cholesky, eigh or svd).

    >>> import numpy as np, functrace.random as random
    >>> random.multivariate_normal(random.PRNGKey(0), np.zeros(2), np.eye(2), (5,)).shape
    (5, 2)
    """
    key = _check_key("multivariate_normal", key)
    _check_sharding("multivariate_normal", out_sharding)
    if dtype is None:  # the promoted dtype of mean and cov (as JAX)
        dts = [_dtype_of(v) for v in (mean, cov)]
        dtype = np.result_type(*dts)
        if dtype.kind != "f":
            dtype = _DEFAULT_FLOAT
    dt = _float_dtype("multivariate_normal", dtype)
    mean, cov = _as(mean, dt), _as(cov, dt)
    ms, cs = _shape_of(mean), _shape_of(cov)
    if len(ms) < 1:
        raise ValueError("random.multivariate_normal: expected mean.ndim >= 1, got 0.")
    if len(cs) < 2 or cs[-2:] != (ms[-1], ms[-1]):
        raise ValueError(
            f"random.multivariate_normal: expected cov of shape (..., {ms[-1]}, {ms[-1]}), "
            f"got {cs}."
        )
    if shape is None:
        shp = tuple(np.broadcast_shapes(ms[:-1], cs[:-2]))
    else:
        shp = _canonical_shape("multivariate_normal", shape)
        _check_shape("multivariate_normal", shp, ms[:-1], cs[:-2])
    if method == "cholesky":
        factor = fnp.linalg.cholesky(cov)
    elif method == "eigh":
        w, v = fnp.linalg.eigh(cov)
        factor = v * fnp.sqrt(w[..., None, :])
    elif method == "svd":
        u, s, _ = fnp.linalg.svd(cov)
        factor = u * fnp.sqrt(s[..., None, :])
    else:
        raise ValueError(
            f"random.multivariate_normal: expected method 'cholesky', 'eigh' or 'svd', "
            f"got {method!r}."
        )
    z = _normal(key, (*shp, ms[-1]), dt)
    return mean + fnp.einsum("...ij,...j->...i", factor, z)
