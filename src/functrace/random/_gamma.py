"""The gamma family: ``gamma``, ``loggamma``, ``beta`` and ``dirichlet`` (Marsaglia and
Tsang's method with JAX's per-element loop and key splits; derivatives in the shape
parameter by the implicit rule of ``functrace.random._special``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core, lax
from functrace.random._args import (
    _as,
    _canonical_shape,
    _check_shape,
    _check_sharding,
    _float_dtype,
    _quiet,
    _shape_of,
)
from functrace.random._continuous import _exponential, _normal, _uniform
from functrace.random._keys import _check_key, split
from functrace.random._special import _gamma_sample_grad


def _scalar_key_normal(keys: Any, dt: np.dtype) -> Any:
    """One normal per key (keys: (n, 2)), each as ``normal(key_i, ())``."""
    return _vmapped(lambda k: _normal(k, (), dt), keys)


def _scalar_key_uniform(keys: Any, dt: np.dtype) -> Any:
    return _vmapped(lambda k: _uniform(k, (), dt, 0.0, 1.0), keys)


def _vmapped(f: Any, keys: Any) -> Any:
    from functrace.api._vmap import vmap

    return vmap(f)(keys)


def _split_each(keys: Any, num: int) -> Any:
    from functrace.api._vmap import vmap

    return vmap(lambda k: split(k, num))(keys)


def _gamma_one_batch(keys: Any, alpha: Any, log_space: bool) -> Any:
    """Marsaglia-Tsang for a flat batch: one key per alpha, each element's loop
    identical to the scalar algorithm (finished elements keep their state)."""
    dt = core.get_aval(alpha).dtype
    boost = alpha >= 1.0
    alpha_orig = alpha
    alpha = fnp.where(boost, alpha, alpha + 1.0)
    d = alpha - 1.0 / 3.0
    c = (1.0 / 3.0) / fnp.sqrt(d)
    both = _split_each(keys, 2)
    key, subkey = both[:, 0], both[:, 1]

    def rejected(X: Any, V: Any, U: Any) -> Any:
        first = U >= 1.0 - 0.0331 * (X * X)
        second = fnp.log(U) >= X * 0.5 + d * ((1.0 - V) + fnp.log(V))
        return first & second

    def outer_cond(s: Any) -> Any:
        return fnp.any(rejected(s[1], s[2], s[3]))

    def outer_body(s: Any) -> Any:
        k, X, V, U = s
        active = rejected(X, V, U)
        three = _split_each(k, 3)
        nk, xk, uk = three[:, 0], three[:, 1], three[:, 2]

        def inner_cond(t: Any) -> Any:
            return fnp.any(t[2] <= 0.0)

        def inner_body(t: Any) -> Any:
            kk, x, v = t
            act = v <= 0.0
            two = _split_each(kk, 2)
            kk2, sub = two[:, 0], two[:, 1]
            x2 = _scalar_key_normal(sub, dt)
            v2 = 1.0 + x2 * c
            act_k = act[:, None]
            return (
                fnp.where(act_k, kk2, kk),
                fnp.where(act, x2, x),
                fnp.where(act, v2, v),
            )

        zero = fnp.zeros_like(alpha)
        _, x, v = lax.while_loop(inner_cond, inner_body, (xk, zero, zero - 1.0))
        nX = x * x
        nV = v * v * v
        nU = _scalar_key_uniform(uk, dt)
        ak = active[:, None]
        return (
            fnp.where(ak, nk, k),
            fnp.where(active, nX, X),
            fnp.where(active, nV, V),
            fnp.where(active, nU, U),
        )

    init = (key, fnp.zeros_like(alpha), fnp.ones_like(alpha), fnp.ones_like(alpha) * 2.0)
    _, _, V, _ = lax.while_loop(outer_cond, outer_body, init)
    if log_space:
        log_samples = -_vmapped(lambda k: _exponential(k, (), dt), subkey)
        log_boost = fnp.where(boost | (log_samples == 0), 0.0, log_samples * (1.0 / alpha_orig))
        return fnp.log(d) + fnp.log(V) + log_boost
    samples = 1.0 - _scalar_key_uniform(subkey, dt)
    b = fnp.where(boost, 1.0, fnp.power(samples, 1.0 / alpha_orig))
    return d * V * b


def _make_gamma_flat(log_space: bool) -> Any:
    from functrace.custom_derivatives._jvp import custom_jvp

    def sample(keys: Any, alpha: Any) -> Any:
        return _gamma_one_batch(keys, alpha, log_space)

    f = custom_jvp(sample)

    def sample_jvp(primals: Any, tangents: Any) -> Any:
        keys, alpha = primals
        alpha_dot = tangents[1]
        # The sample comes from f itself, so that a second derivative differentiates
        # it by this rule again (d/da g(a, x(a)) = dg/da + dg/dx g).
        out = f(keys, alpha)
        if log_space:
            x = fnp.exp(out)
            x = fnp.where(x == 0, np.finfo(core.get_aval(out).dtype).tiny, x)
            g = _gamma_sample_grad(alpha, x) / x
        else:
            g = _gamma_sample_grad(alpha, out)
        return out, alpha_dot * g

    f.defjvp(sample_jvp)
    return f


_GAMMA_FLAT: dict[bool, Any] = {}


def _gamma(key: Any, a: Any, shp: tuple[int, ...], dt: np.dtype, log_space: bool) -> Any:
    a = fnp.broadcast_to(_as(a, dt), shp)
    n = math.prod(shp)
    if n == 0:
        return fnp.zeros(shp, dt)
    keys = split(key, n)
    flat = fnp.reshape(a, (n,))
    if log_space not in _GAMMA_FLAT:
        _GAMMA_FLAT[log_space] = _make_gamma_flat(log_space)
    return fnp.reshape(_GAMMA_FLAT[log_space](keys, flat), shp)


def _gamma_sampler(
    name: str, key: Any, a: Any, shape: Sequence[int] | None, dtype: Any, log_space: bool
) -> Any:
    key = _check_key(name, key)
    dt = _float_dtype(name, dtype)
    a = _as(a, dt)
    shp = _shape_of(a) if shape is None else _canonical_shape(name, shape)
    _check_shape(name, shp, _shape_of(a))
    return _gamma(key, a, shp, dt, log_space)


@_quiet
def gamma(
    key: Any,
    a: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Gamma(a, 1) samples (Marsaglia and Tsang's method, JAX's loop structure).

    >>> import functrace.random as random
    >>> random.gamma(random.PRNGKey(0), 2.0, (3,)).shape
    (3,)
    """
    _check_sharding("gamma", out_sharding)
    return _gamma_sampler("gamma", key, a, shape, dtype, log_space=False)


@_quiet
def loggamma(
    key: Any,
    a: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """log of Gamma(a, 1) samples, accurate for small ``a``.

    >>> import functrace.random as random
    >>> random.loggamma(random.PRNGKey(0), 0.1, (3,)).shape
    (3,)
    """
    _check_sharding("loggamma", out_sharding)
    return _gamma_sampler("loggamma", key, a, shape, dtype, log_space=True)


@_quiet
def beta(
    key: Any,
    a: Any,
    b: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Beta(a, b) samples, from two log-gamma samples.

    >>> import functrace.random as random
    >>> x = random.beta(random.PRNGKey(0), 2.0, 3.0, (4,))
    >>> bool(((x > 0) & (x < 1)).all())
    True
    """
    key = _check_key("beta", key)
    _check_sharding("beta", out_sharding)
    dt = _float_dtype("beta", dtype)
    a, b = _as(a, dt), _as(b, dt)
    if shape is None:
        shp = tuple(np.broadcast_shapes(_shape_of(a), _shape_of(b)))
    else:
        shp = _canonical_shape("beta", shape)
        _check_shape("beta", shp, _shape_of(a), _shape_of(b))
    both = split(key)
    log_a = _gamma(both[0], a, shp, dt, True)
    log_b = _gamma(both[1], b, shp, dt, True)
    top = fnp.maximum(log_a, log_b)
    ga, gb = fnp.exp(log_a - top), fnp.exp(log_b - top)
    return ga / (ga + gb)


@_quiet
def dirichlet(
    key: Any,
    alpha: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Dirichlet(alpha) samples (alpha's last axis is the simplex).

    >>> import numpy as np, functrace.random as random
    >>> x = random.dirichlet(random.PRNGKey(0), np.ones(3))
    >>> bool(abs(x.sum() - 1) < 1e-12)
    True
    """
    key = _check_key("dirichlet", key)
    _check_sharding("dirichlet", out_sharding)
    dt = _float_dtype("dirichlet", dtype)
    alpha = _as(alpha, dt)
    ash = _shape_of(alpha)
    if len(ash) < 1:
        raise ValueError("random.dirichlet: expected alpha.ndim >= 1, got 0.")
    shp = ash[:-1] if shape is None else _canonical_shape("dirichlet", shape)
    _check_shape("dirichlet", shp, ash[:-1])
    logs = _gamma(key, alpha, (*shp, ash[-1]), dt, True)
    from functrace.nn.functional import softmax

    return softmax(logs, axis=-1)
