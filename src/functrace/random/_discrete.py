"""Discrete samplers: ``bernoulli``, ``randint``, ``permutation``, ``choice``,
``categorical`` and ``poisson``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core, lax
from functrace.core import Tracer
from functrace.random._args import (
    _DEFAULT_FLOAT,
    _DEFAULT_INT,
    _UINTS,
    _as,
    _canonical_shape,
    _check_shape,
    _check_sharding,
    _index,
    _inexact_dtype,
    _int_dtype,
    _param_shape,
    _quiet,
    _saturating_int,
    _shape_of,
)
from functrace.random._continuous import _gumbel, _uniform
from functrace.random._keys import _check_key, _random_bits, split
from functrace.random._special import _lgamma


@_quiet
def bernoulli(
    key: Any,
    p: Any = 0.5,
    shape: Sequence[int] | None = None,
    mode: str = "low",
    *,
    out_sharding: Any = None,
) -> Any:
    """Booleans that are True with probability ``p``.

    >>> import functrace.random as random
    >>> random.bernoulli(random.PRNGKey(0), 0.5, (4,)).dtype
    dtype('bool')
    """
    key = _check_key("bernoulli", key)
    _check_sharding("bernoulli", out_sharding)
    if not isinstance(p, Tracer):
        p = np.asarray(p)
        if p.dtype.kind != "f":
            p = p.astype(_DEFAULT_FLOAT)
    dt = core.get_aval(p).dtype
    if dt.kind != "f":
        p, dt = lax.convert_element_type(p, _DEFAULT_FLOAT), _DEFAULT_FLOAT
    shp = _shape_of(p) if shape is None else _canonical_shape("bernoulli", shape)
    _check_shape("bernoulli", shp, _shape_of(p))
    if mode == "high":
        both = _uniform(key, (2, *shp), dt, 0.0, 1.0)
        u1, u2 = both[0], both[1] * 2.0 ** -np.finfo(dt).nmant
        return u2 < p - u1
    if mode != "low":
        raise ValueError(f"random.bernoulli: expected mode 'low' or 'high', got {mode!r}.")
    return _uniform(key, shp, dt, 0.0, 1.0) < p


def _clip_to(x: Any, dtype: np.dtype) -> Any:
    """Integer ``x`` converted to ``dtype``, clipped to its range (not wrapped)."""
    src = core.get_aval(x).dtype
    lo = max(np.iinfo(dtype).min, np.iinfo(src).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(src).max)
    return fnp.clip(x, np.array(lo, src), np.array(hi, src)).astype(dtype)


@_quiet
def randint(
    key: Any,
    shape: Sequence[int],
    minval: Any,
    maxval: Any,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Integers uniform on ``[minval, maxval)`` (default dtype int64), with JAX's
    algorithm: two draws of random bits combined modulo the span.

    >>> import functrace.random as random
    >>> random.randint(random.PRNGKey(0), (4,), 0, 10)
    array([5, 1, 5, 7])
    """
    key = _check_key("randint", key)
    _check_sharding("randint", out_sharding)
    shp = _canonical_shape("randint", shape)
    dt = _int_dtype("randint", dtype)
    if dt.itemsize < 4:  # JAX samples 8- and 16-bit integers as int32 (less bias)
        info = np.iinfo(dt)
        lo = fnp.clip(fnp.asarray(_as_int(minval)).astype(np.int32), info.min, info.max)
        hi = fnp.clip(fnp.asarray(_as_int(maxval)).astype(np.int32), info.min, info.max + 1)
        return fnp.asarray(_randint(key, shp, lo, hi, np.dtype(np.int32))).astype(dt)
    return _randint(key, shp, minval, maxval, dt)


def _as_int(x: Any) -> Any:
    if isinstance(x, Tracer):
        return x if x.aval.dtype.kind in "iu" else lax.convert_element_type(x, _DEFAULT_INT)
    arr = np.asarray(x)
    if arr.dtype.kind not in "iu":
        arr = arr.astype(_DEFAULT_INT)
    return arr


def _randint(key: Any, shp: tuple[int, ...], minval: Any, maxval: Any, dt: np.dtype) -> Any:
    minval, maxval = _as_int(minval), _as_int(maxval)
    _check_shape("randint", shp, _shape_of(minval), _shape_of(maxval))
    mx_dt = core.get_aval(maxval).dtype
    top = min(np.iinfo(dt).max, np.iinfo(mx_dt).max)
    out_of_range = maxval > np.array(top, mx_dt)
    lo, hi = _clip_to(minval, dt), _clip_to(maxval, dt)
    nbits = dt.itemsize * 8
    uint = _UINTS[nbits]
    k1, k2 = split(key)
    higher = _random_bits(k1, nbits, shp)
    lower = _random_bits(k2, nbits, shp)
    span = (hi - lo).astype(uint)  # wraps like a cast
    span = fnp.where(hi <= lo, np.array(1, uint), span)
    span = fnp.where(out_of_range & (hi > lo), span + np.array(1, uint), span)
    span = fnp.broadcast_to(span, shp)
    # (a * 2**nbits + b) % span, with 2**nbits % span computed without overflow
    mult = fnp.remainder(np.array(2 ** (nbits // 2), uint), span)
    mult = fnp.remainder(mult * mult, span)
    offset = fnp.remainder(higher, span) * mult + fnp.remainder(lower, span)
    offset = fnp.remainder(offset, span)
    return lo + offset.astype(dt)


def _shuffle(key: Any, x: Any, axis: int) -> Any:
    # Sort by fresh 32-bit random keys, as many rounds as make ties negligible (JAX's
    # rule: ceil(3 ln(n) / ln(2**32 - 1)) rounds; a stable sort keeps tied elements' order).
    size = math.prod(_shape_of(x))
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        both = split(key)
        key, sub = both[0], both[1]
        sort_keys = _random_bits(sub, 32, _shape_of(x))
        x = lax.sort_multi([sort_keys, x], dimension=axis, num_keys=1)[1]
    return x


@_quiet
def permutation(
    key: Any, x: Any, axis: int = 0, independent: bool = False, *, out_sharding: Any = None
) -> Any:
    """A random permutation of ``arange(x)`` (int ``x``) or of ``x`` along ``axis``;
    ``independent=True`` shuffles each slice along ``axis`` on its own (as JAX).

    >>> import functrace.random as random
    >>> random.permutation(random.PRNGKey(0), 5)
    array([0, 1, 4, 3, 2])
    """
    key = _check_key("permutation", key)
    _check_sharding("permutation", out_sharding)
    if not isinstance(x, Tracer):
        x = np.asarray(x)
    shp = _shape_of(x)
    if not shp:
        if isinstance(x, Tracer) or x.dtype.kind not in "iu":
            raise TypeError(
                "random.permutation: expected an integer (a concrete Python int) or an "
                "array with at least one dimension."
            )
        return _shuffle(key, np.arange(int(x)), 0)
    axis = int(_index(axis))
    if not -len(shp) <= axis < len(shp):
        raise ValueError(
            f"random.permutation: expected an axis in [{-len(shp)}, {len(shp)}), got {axis}."
        )
    axis %= len(shp)
    if independent or len(shp) == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, np.arange(shp[axis]), 0)
    return fnp.take(x, ind, axis=axis)


@_quiet
def choice(
    key: Any,
    a: Any,
    shape: Sequence[int] = (),
    replace: bool = True,
    p: Any = None,
    axis: int = 0,
    mode: str | None = None,
) -> Any:
    """Samples from ``a`` (an array, or ``arange(a)`` for an int), optionally weighted by
    ``p`` and without replacement, as ``jax.random.choice``.

    >>> import functrace.random as random
    >>> random.choice(random.PRNGKey(0), 10, (3,), replace=False).shape
    (3,)
    """
    key = _check_key("choice", key)
    shp = _canonical_shape("choice", shape)
    if not isinstance(a, Tracer):
        a = np.asarray(a)
    a_shape = _shape_of(a)
    if not a_shape:
        if isinstance(a, Tracer):
            raise TypeError("random.choice: expected a concrete int a (or an array), got a tracer.")
        n_inputs = int(a)
    else:
        axis = int(_index(axis)) % len(a_shape)
        n_inputs = a_shape[axis]
    n_draws = math.prod(shp)
    if n_draws == 0:
        return np.zeros(shp, dtype=core.get_aval(a).dtype)
    if n_inputs <= 0:
        raise ValueError("random.choice: expected a population of at least 1, got 0.")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"random.choice: expected at most {n_inputs} samples without replacement (the "
            f"population size), got {n_draws}."
        )
    if p is None:
        if replace:
            ind = _randint(key, shp, 0, n_inputs, _DEFAULT_INT)
            result = ind if not a_shape else fnp.take(a, ind, axis=axis)
        else:
            perm = permutation(key, n_inputs if not a_shape else a, axis)
            ax = axis if a_shape else 0
            result = perm[(slice(None),) * ax + (slice(0, n_draws),)]
    else:
        if not isinstance(p, Tracer):
            p = np.asarray(p)
            if p.dtype.kind != "f":
                p = p.astype(_DEFAULT_FLOAT)
        if _shape_of(p) != (n_inputs,):
            raise ValueError(
                f"random.choice: expected p of shape ({n_inputs},) (a.shape[axis]), got "
                f"{_shape_of(p)}."
            )
        pdt = core.get_aval(p).dtype
        if replace:
            cum = fnp.cumsum(p)
            r = cum[-1] * (1 - _uniform(key, shp, pdt, 0.0, 1.0))
            ind = fnp.searchsorted(cum, r).astype(_DEFAULT_INT)
        else:
            g = _gumbel(key, (n_inputs,), pdt, mode) + fnp.log(p)
            ind = lax.argsort(-g)[:n_draws]
        result = ind if not a_shape else fnp.take(a, ind, axis=axis)
    out_shape = shp if not a_shape else (*a_shape[:axis], *shp, *a_shape[axis + 1 :])
    return fnp.reshape(result, out_shape)


@_quiet
def categorical(
    key: Any,
    logits: Any,
    axis: int = -1,
    shape: Sequence[int] | None = None,
    replace: bool = True,
    mode: str | None = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Indices drawn with probabilities ``softmax(logits)`` along ``axis`` (the Gumbel-max
    trick, as JAX; ``replace=False``: Gumbel top-k).

    >>> import numpy as np, functrace.random as random
    >>> random.categorical(random.PRNGKey(0), np.log(np.array([0.1, 0.9])), shape=(5,)).shape
    (5,)
    """
    key = _check_key("categorical", key)
    _check_sharding("categorical", out_sharding)
    if not isinstance(logits, Tracer):
        logits = np.asarray(logits)
    ls = _shape_of(logits)
    dt = core.get_aval(logits).dtype
    if dt.kind != "f":
        raise TypeError(f"random.categorical: expected floating-point logits, got {dt.name}.")
    nd = len(ls)
    axis = int(_index(axis))
    if not -nd <= axis < nd:
        raise ValueError(f"random.categorical: expected an axis in [{-nd}, {nd}), got {axis}.")
    axis %= nd
    batch = tuple(d for i, d in enumerate(ls) if i != axis)
    shp = batch if shape is None else _canonical_shape("categorical", shape)
    if shape is not None:
        _check_shape("categorical", shp, batch)
    prefix = shp[: len(shp) - len(batch)]
    if replace:
        lshape = list(shp[len(shp) - len(batch) :])
        lshape.insert(axis, ls[axis])
        g = _gumbel(key, (*prefix, *lshape), dt, mode)
        expanded = fnp.reshape(logits, (1,) * len(prefix) + ls)
        return fnp.argmax(g + expanded, axis=len(prefix) + axis)
    k = math.prod(prefix)
    if k > ls[axis]:
        raise ValueError(
            f"random.categorical: expected at most {ls[axis]} samples without replacement "
            f"(the number of categories), got {k}."
        )
    noisy = logits + _gumbel(key, ls, dt, mode)
    order = lax.argsort(-fnp.moveaxis(noisy, axis, -1), dimension=-1)[..., :k]
    # int32, as JAX's top_k indices (also with x64 on)
    return fnp.reshape(fnp.moveaxis(order, -1, 0), shp).astype(np.int32)


def _poisson_knuth(key: Any, lam: Any, shp: tuple[int, ...], dt: np.dtype) -> Any:
    def cond(s: Any) -> Any:
        return fnp.any(s[2] > -lam)

    def body(s: Any) -> Any:
        k, rng, log_prod = s
        both = split(rng)
        k = fnp.where(log_prod > -lam, k + 1, k)
        u = _uniform(both[1], shp, np.dtype(np.float32), 0.0, 1.0)
        return k, both[0], log_prod + fnp.log(u)

    init = (fnp.zeros(shp, dt), key, fnp.zeros(shp, np.float32))
    k = lax.while_loop(cond, body, init)[0]
    return k - 1


def _poisson_rejection(key: Any, lam: Any, shp: tuple[int, ...], dt: np.dtype) -> Any:
    f32 = np.dtype(np.float32)
    log_lam = fnp.log(lam)
    b = 0.931 + 2.53 * fnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def cond(s: Any) -> Any:
        return fnp.any(~s[1])

    def body(s: Any) -> Any:
        k_out, accepted, rng = s
        three = split(rng, 3)
        u = _uniform(three[1], shp, f32, 0.0, 1.0) - 0.5
        v = _uniform(three[2], shp, f32, 0.0, 1.0)
        us = 0.5 - fnp.abs(u)
        k = fnp.floor((2 * a / us + b) * u + lam + 0.43)
        s_ = fnp.log(v * inv_alpha / (a / (us * us) + b))
        t = -lam + k * log_lam - _lgamma(k + 1)
        accept1 = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        accept = accept1 | (~reject & (s_ <= t))
        return fnp.where(accept, k, k_out), accepted | accept, three[0]

    init = (fnp.full(shp, -1.0, f32), fnp.zeros(shp, bool), key)
    return lax.while_loop(cond, body, init)[0].astype(dt)


@_quiet
def poisson(
    key: Any,
    lam: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Poisson(lam) samples (default dtype int64): Knuth's method for lam < 10, Hormann's
    transformed rejection above, computed in float32 as JAX does.

    >>> import functrace.random as random
    >>> random.poisson(random.PRNGKey(0), 3.0, (4,)).dtype
    dtype('int64')
    """
    key = _check_key("poisson", key)
    _check_sharding("poisson", out_sharding)
    dt = _int_dtype("poisson", dtype)
    shp = _shape_of(lam) if shape is None else _canonical_shape("poisson", shape)
    _check_shape("poisson", shp, _shape_of(lam))
    lam = fnp.broadcast_to(_as(lam, np.dtype(np.float32)), shp)
    use_knuth = fnp.isnan(lam) | (lam < 10)
    lam_knuth = fnp.where(use_knuth, lam, np.float32(0.0))
    lam_rej = fnp.where(use_knuth, np.float32(1e5), lam)
    result = fnp.where(
        use_knuth,
        _poisson_knuth(key, lam_knuth, shp, dt),
        _poisson_rejection(key, lam_rej, shp, dt),
    )
    return fnp.where(lam == 0, fnp.zeros_like(result), result)


def _rademacher(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    # the bernoulli(0.5) draw is float64 whatever dt is (JAX's x64 default float)
    b = fnp.astype(_uniform(key, shape, _DEFAULT_FLOAT, 0.0, 1.0) < 0.5, dt)
    return fnp.astype(2 * b - 1, dt)


@_quiet
def rademacher(
    key: Any, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Random signs: -1 or 1 with probability 1/2 each (default dtype int64; any
    numeric dtype is accepted, as in JAX).

    >>> import functrace.random as random
    >>> random.rademacher(random.PRNGKey(0), (4,)).dtype
    dtype('int64')
    """
    key = _check_key("rademacher", key)
    _check_sharding("rademacher", out_sharding)
    dt = _DEFAULT_INT if dtype is None else np.dtype(dtype)
    if dt.kind not in "iuf":
        raise TypeError(f"random.rademacher: expected an integer or float dtype, got {dt.name}.")
    return _rademacher(key, _canonical_shape("rademacher", shape), dt)


@_quiet
def geometric(
    key: Any,
    p: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """The number of Bernoulli(``p``) trials up to and including the first success
    (support 1, 2, ...; default dtype int64): ``floor(log(u) / log1p(-p)) + 1``, in
    ``p``'s float dtype (float64 for Python numbers). ``p = 0`` saturates to the
    largest integer and NaN gives 0, as JAX's conversions do.

    >>> import functrace.random as random
    >>> bool((random.geometric(random.PRNGKey(0), 0.3, (5,)) >= 1).all())
    True
    """
    key = _check_key("geometric", key)
    _check_sharding("geometric", out_sharding)
    dt = _int_dtype("geometric", dtype)
    shp = _param_shape("geometric", shape, p)
    pdt = _inexact_dtype(p)
    if pdt.kind != "f":
        raise TypeError(f"random.geometric: expected a real probability p, got {pdt.name}.")
    p = _as(p, pdt)
    u = _uniform(key, shp, pdt, 0.0, 1.0)
    u = fnp.where(u == 0, np.array(1, pdt), u)  # JAX's guard against log(0)
    log_1mp = fnp.broadcast_to(fnp.log1p(-p), shp)
    g = fnp.floor(fnp.log(u) / log_1mp) + np.array(1, pdt)
    return _saturating_int(g, dt)
