"""Samplers built on gamma draws: ``t``, ``chisquare``, ``f``, ``generalized_normal``
and ``ball``. They split keys and call the gamma sampler as JAX does, so they make
the same samples, and they differentiate in their float parameters through the
gamma's implicit reparameterisation gradient (as JAX)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace.core import Tracer
from functrace.random._args import (
    _as,
    _canonical_shape,
    _check_castable,
    _check_shape,
    _check_sharding,
    _float_dtype,
    _param_shape,
    _quiet,
    _shape_of,
)
from functrace.random._continuous import _exponential, _normal
from functrace.random._discrete import _rademacher
from functrace.random._gamma import _gamma
from functrace.random._keys import _check_key, split


def _setup(
    name: str, key: Any, dtype: Any, out_sharding: Any, *params: Any
) -> tuple[Any, np.dtype]:
    key = _check_key(name, key)
    _check_sharding(name, out_sharding)
    dt = _float_dtype(name, dtype)
    _check_castable(name, dt, *params)
    return key, dt


@_quiet
def t(
    key: Any,
    df: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Student's t samples with ``df`` degrees of freedom: ``z * sqrt((df/2) / g)``,
    ``z`` standard normal and ``g`` Gamma(df/2).

    >>> import functrace.random as random
    >>> random.t(random.PRNGKey(0), 3.0, (4,)).shape
    (4,)
    """
    key, dt = _setup("t", key, dtype, out_sharding, df)
    shp = _param_shape("t", shape, df)
    both = split(key)
    z = _normal(both[0], shp, dt)
    half_df = _as(df, dt) / np.array(2, dt)
    g = _gamma(both[1], half_df, shp, dt, False)
    return z * fnp.sqrt(half_df / g)


def _chisquare(key: Any, df: Any, shp: tuple[int, ...], dt: np.dtype) -> Any:
    two = np.array(2, dt)
    log_g = _gamma(key, _as(df, dt) / two, shp, dt, True)
    return fnp.exp(log_g) * two


@_quiet
def chisquare(
    key: Any,
    df: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Chi-squared samples with ``df`` degrees of freedom: twice a Gamma(df/2) sample
    (drawn in log space, as JAX).

    >>> import functrace.random as random
    >>> bool((random.chisquare(random.PRNGKey(0), 2.0, (4,)) > 0).all())
    True
    """
    key, dt = _setup("chisquare", key, dtype, out_sharding, df)
    return _chisquare(key, df, _param_shape("chisquare", shape, df), dt)


@_quiet
def f(
    key: Any,
    dfnum: Any,
    dfden: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """F-distribution samples: ``(c1 / dfnum) / (c2 / dfden)`` for chi-squared draws
    ``c1``, ``c2`` with those degrees of freedom.

    >>> import functrace.random as random
    >>> random.f(random.PRNGKey(0), 3.0, 5.0, (2,)).shape
    (2,)
    """
    key, dt = _setup("f", key, dtype, out_sharding, dfnum, dfden)
    shp = _param_shape("f", shape, dfnum, dfden)
    both = split(key)  # (denominator's key, numerator's key)
    num, den = _as(dfnum, dt), _as(dfden, dt)
    c_num = _chisquare(both[1], num, shp, dt)
    c_den = _chisquare(both[0], den, shp, dt)
    return (c_num / num) / (c_den / den)


def _generalized_normal(key: Any, p: Any, shp: tuple[int, ...], dt: np.dtype) -> Any:
    both = split(key)
    inv_p = 1 / p
    g = _gamma(both[0], _as(inv_p, dt), shp, dt, False)
    sign = _rademacher(both[1], shp, dt)
    return sign * fnp.power(g, inv_p)


def _check_p(name: str, p: Any, shp: tuple[int, ...]) -> Any:
    if not isinstance(p, (Tracer, int, float)):
        p = np.asarray(p)
        if p.dtype.kind not in "biuf":
            raise TypeError(f"random.{name}: expected a real p, got {p.dtype.name}.")
    _check_shape(name, shp, _shape_of(p))
    return p


@_quiet
def generalized_normal(
    key: Any, p: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Samples with density proportional to ``exp(-|x|**p)``: a random sign times
    ``g ** (1/p)``, ``g`` Gamma(1/p). ``p = 2`` gives normal samples scaled by
    ``1/sqrt(2)``, ``p = 1`` Laplace samples.

    >>> import functrace.random as random
    >>> random.generalized_normal(random.PRNGKey(0), 1.5, (3,)).shape
    (3,)
    """
    key, dt = _setup("generalized_normal", key, dtype, out_sharding)
    shp = _canonical_shape("generalized_normal", shape)
    p = _check_p("generalized_normal", p, shp)
    return _generalized_normal(key, p, shp, dt)


@_quiet
def ball(
    key: Any,
    d: int,
    p: Any = 2,
    shape: Sequence[int] = (),
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Points uniform in the unit ``p``-norm ball of dimension ``d`` (result shape
    ``(*shape, d)``), by Barthe, Guedon, Mendelson and Naor: generalized-normal
    coordinates divided by ``(sum |g|**p + e) ** (1/p)``, ``e`` standard exponential.

    >>> import numpy as np, functrace.random as random
    >>> x = random.ball(random.PRNGKey(0), 3, shape=(5,))
    >>> bool((np.linalg.norm(x, axis=-1) <= 1).all())
    True
    """
    key, dt = _setup("ball", key, dtype, out_sharding)
    shp = _canonical_shape("ball", shape)
    try:
        dim = operator.index(d)
    except TypeError:
        raise TypeError(
            f"random.ball: expected d to be a concrete Python int, got {d!r}."
        ) from None
    if dim < 0:
        raise ValueError(f"random.ball: expected a non-negative dimension d, got {dim}.")
    p = _check_p("ball", p, ())
    both = split(key)
    g = _generalized_normal(both[0], p, (*shp, dim), dt)
    e = _exponential(both[1], shp, dt)
    norm = fnp.power(fnp.sum(fnp.power(fnp.abs(g), p), axis=-1) + e, 1 / p)
    return g / fnp.expand_dims(norm, -1)
