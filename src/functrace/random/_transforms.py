"""Samplers that transform uniform, normal or exponential draws in closed form:
``cauchy``, ``lognormal``, ``pareto``, ``rayleigh``, ``wald``, ``weibull_min``,
``maxwell``, ``double_sided_maxwell``, ``triangular`` and ``orthogonal``. Each one
makes JAX's draws with JAX's keys and applies JAX's formula in the same order, so the
samples agree to rounding and gradients flow to the float parameters."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import lax
from functrace.core import Tracer
from functrace.random._args import (
    _as,
    _canonical_shape,
    _check_castable,
    _check_sharding,
    _float_dtype,
    _param_shape,
    _quiet,
    _shape_of,
)
from functrace.random._continuous import _complex_normal, _exponential, _normal, _uniform
from functrace.random._discrete import _rademacher
from functrace.random._keys import _check_key, split


def _setup(name: str, key: Any, dtype: Any, out_sharding: Any) -> tuple[Any, np.dtype]:
    key = _check_key(name, key)
    _check_sharding(name, out_sharding)
    return key, _float_dtype(name, dtype)


@_quiet
def cauchy(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Standard Cauchy samples: ``tan(pi * (u - 1/2))`` with ``u`` uniform on
    ``[eps, 1)``.

    >>> import functrace.random as random
    >>> random.cauchy(random.PRNGKey(0), (3,)).shape
    (3,)
    """
    key, dt = _setup("cauchy", key, dtype, out_sharding)
    shp = _canonical_shape("cauchy", shape)
    u = _uniform(key, shp, dt, np.finfo(dt).eps, 1.0)
    return lax.tan(np.array(np.pi, dt) * (u - np.array(0.5, dt)))


@_quiet
def lognormal(
    key: Any,
    sigma: Any = np.float32(1),
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Log-normal samples ``exp(sigma * z)``, ``z`` standard normal (a complex dtype
    takes the exponential of a complex normal, as JAX).

    >>> import functrace.random as random
    >>> bool((random.lognormal(random.PRNGKey(0), 0.5, (4,)) > 0).all())
    True
    """
    key = _check_key("lognormal", key)
    _check_sharding("lognormal", out_sharding)
    dt = _float_dtype("lognormal", dtype, complex_ok=True)
    _check_castable("lognormal", dt, sigma)
    shp = _param_shape("lognormal", shape, sigma)
    z = _complex_normal(key, shp, dt) if dt.kind == "c" else _normal(key, shp, dt)
    return fnp.exp(z * _as(sigma, dt))


@_quiet
def pareto(
    key: Any,
    b: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Pareto samples with shape parameter ``b`` (support ``x >= 1``): ``exp(e / b)``,
    ``e`` standard exponential.

    >>> import functrace.random as random
    >>> bool((random.pareto(random.PRNGKey(0), 3.0, (4,)) >= 1).all())
    True
    """
    key, dt = _setup("pareto", key, dtype, out_sharding)
    _check_castable("pareto", dt, b)
    shp = _param_shape("pareto", shape, b)
    e = _exponential(key, shp, dt)
    return fnp.exp(e / _as(b, dt))


@_quiet
def rayleigh(
    key: Any,
    scale: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Rayleigh samples ``scale * sqrt(-2 log u)``, ``u`` uniform on ``[0, 1)``.

    >>> import functrace.random as random
    >>> random.rayleigh(random.PRNGKey(0), 2.0, (3,)).shape
    (3,)
    """
    key, dt = _setup("rayleigh", key, dtype, out_sharding)
    _check_castable("rayleigh", dt, scale)
    shp = _param_shape("rayleigh", shape, scale)
    u = _uniform(key, shp, dt, 0.0, 1.0)
    s = fnp.broadcast_to(_as(scale, dt), shp)
    return s * fnp.sqrt(fnp.log(u) * np.array(-2, dt))


@_quiet
def wald(
    key: Any,
    mean: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Wald (inverse Gaussian, unit shape) samples with the given ``mean``, by
    Michael, Schucany and Haas' transformation of one normal and one uniform draw.

    >>> import functrace.random as random
    >>> bool((random.wald(random.PRNGKey(0), 1.5, (4,)) > 0).all())
    True
    """
    key, dt = _setup("wald", key, dtype, out_sharding)
    _check_castable("wald", dt, mean)
    shp = _param_shape("wald", shape, mean)
    both = split(key)
    mu = fnp.broadcast_to(_as(mean, dt), shp)
    v = _normal(both[0], shp, dt)
    z = _uniform(both[1], shp, dt, 0.0, 1.0)
    y = v * v
    mu2 = mu * mu
    root = fnp.sqrt(4 * mu * y + mu2 * (y * y))
    x = mu + mu2 * y / 2 - mu / 2 * root
    # NOTE: for a fixed key the sample jumps between the roots x and mu^2/x where z
    # crosses mu / (mu + x); the gradient is the chosen root's (as JAX's select).
    return fnp.where(z <= mu / (mu + x), x, mu2 / x)


@_quiet
def weibull_min(
    key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (), dtype: Any = None
) -> Any:
    """Weibull samples ``scale * (-log1p(-u)) ** (1 / concentration)``.

    As in JAX, ``shape`` is the shape of the uniform draws only (default ``()``): the
    result is that broadcast against ``scale`` and ``concentration``, and the
    parameters keep their own dtypes in the formula (a float64 parameter gives a
    float64 result).

    >>> import functrace.random as random
    >>> random.weibull_min(random.PRNGKey(0), 1.0, 1.5, (3,)).shape
    (3,)
    """
    key, dt = _setup("weibull_min", key, dtype, None)
    shp = _canonical_shape("weibull_min", shape)
    _broadcast("weibull_min", shp, scale, concentration)
    u = _uniform(key, shp, dt, 0.0, 1.0)
    return fnp.power(-fnp.log1p(-u), 1.0 / _param(concentration)) * _param(scale)


def _param(x: Any) -> Any:
    # a parameter used in its own dtype (Python scalars stay weak)
    return x if isinstance(x, (int, float, Tracer)) else np.asarray(x)


def _broadcast(name: str, shape: tuple[int, ...], *params: Any) -> tuple[int, ...]:
    shapes = [shape, *(_shape_of(p) for p in params)]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(
            f"random.{name}: expected a shape and parameter shapes that broadcast "
            f"together, got {shapes}."
        ) from None


@_quiet
def maxwell(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """One-sided Maxwell samples: the length of a standard normal 3-vector.

    >>> import functrace.random as random
    >>> random.maxwell(random.PRNGKey(0), (2,)).shape
    (2,)
    """
    key, dt = _setup("maxwell", key, dtype, out_sharding)
    shp = _canonical_shape("maxwell", shape)
    z = _normal(key, (*shp, 3), dt)
    return fnp.sqrt(fnp.sum(z * z, axis=-1))


@_quiet
def double_sided_maxwell(
    key: Any, loc: Any, scale: Any, shape: Sequence[int] = (), dtype: Any = None
) -> Any:
    """Double-sided Maxwell samples ``sign * maxwell * scale + loc`` (random signs).

    The draws have shape ``shape + s`` where ``s`` is the broadcast shape of ``loc``
    and ``scale``; an empty ``shape`` means ``s + s``. This is JAX's rule, kept for
    the same samples (pass ``shape`` to get ``shape + s``).

    >>> import functrace.random as random
    >>> random.double_sided_maxwell(random.PRNGKey(0), 0.0, 1.0, (3,)).shape
    (3,)
    """
    key, dt = _setup("double_sided_maxwell", key, dtype, None)
    shp = _canonical_shape("double_sided_maxwell", shape)
    params = _broadcast("double_sided_maxwell", (), loc, scale)
    full = (shp or params) + params
    both = split(key)
    z = _normal(both[0], (*full, 3), dt)
    m = fnp.sqrt(fnp.sum(z * z, axis=-1))
    sign = _rademacher(both[1], full, dt)
    return sign * m * _param(scale) + _param(loc)


@_quiet
def triangular(
    key: Any,
    left: Any,
    mode: Any,
    right: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Triangular samples on ``[left, right]`` with peak ``mode``, by inverting the
    CDF of a uniform draw.

    >>> import functrace.random as random
    >>> x = random.triangular(random.PRNGKey(0), 0.0, 0.5, 2.0, (5,))
    >>> bool(((x >= 0) & (x <= 2)).all())
    True
    """
    key, dt = _setup("triangular", key, dtype, out_sharding)
    _check_castable("triangular", dt, left, mode, right)
    shp = _param_shape("triangular", shape, left, mode, right)
    a, c, b = (fnp.broadcast_to(_as(v, dt), shp) for v in (left, mode, right))
    fc = (c - a) / (b - a)
    u = _uniform(key, shp, dt, 0.0, 1.0)
    low = a + fnp.sqrt(u * (b - a) * (c - a))
    high = b - fnp.sqrt((1 - u) * (b - a) * (b - c))
    # NOTE: the branches meet at u == fc (a kink in the parameters, no jump)
    return fnp.where(u < fc, low, high)


@_quiet
def orthogonal(
    key: Any,
    n: int,
    shape: Sequence[int] = (),
    dtype: Any = None,
    m: int | None = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Haar-random matrices of shape ``(*shape, n, m)`` (``m`` defaults to ``n``) with
    orthonormal rows or columns (unitary for a complex dtype): the QR factor of a normal
    matrix with the signs of ``R``'s diagonal moved into ``Q`` (Mezzadri's method).

    >>> import numpy as np, functrace.random as random
    >>> q = random.orthogonal(random.PRNGKey(0), 3)
    >>> bool(np.allclose(q @ q.T, np.eye(3)))
    True
    """
    key = _check_key("orthogonal", key)
    _check_sharding("orthogonal", out_sharding)
    dt = _float_dtype("orthogonal", dtype, complex_ok=True)
    shp = _canonical_shape("orthogonal", shape)
    rows, cols = (_size("orthogonal", "n", n), _size("orthogonal", "m", n if m is None else m))
    zshape = (*shp, max(rows, cols), min(rows, cols))
    if math.prod(zshape) == 0:
        return fnp.zeros((*shp, rows, cols), dt)
    z = _complex_normal(key, zshape, dt) if dt.kind == "c" else _normal(key, zshape, dt)
    q, r = fnp.linalg.qr(z)
    d = fnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * fnp.expand_dims(fnp.sign(d), -2)
    return fnp.swapaxes(x, -1, -2) if rows < cols else x


def _size(name: str, what: str, v: Any) -> int:
    try:
        out = operator.index(v)
    except TypeError:
        raise TypeError(
            f"random.{name}: expected {what} to be a concrete Python int, got {v!r}."
        ) from None
    if out < 0:
        raise ValueError(f"random.{name}: expected a non-negative {what}, got {out}.")
    return out
