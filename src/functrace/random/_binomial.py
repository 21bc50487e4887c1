"""``binomial`` and ``multinomial``, with JAX's algorithm (TensorFlow's): geometric
waiting times ("inversion") where ``n * min(p, 1 - p) <= 10``, Hormann's transformed
rejection with squeeze (BTRS) elsewhere, both run on the same key for the whole array
and picked per element; ``multinomial`` is a scan of conditional binomials over the
categories."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core, lax
from functrace.core import Tracer
from functrace.random._args import (
    _DEFAULT_FLOAT,
    _as,
    _canonical_shape,
    _check_shape,
    _dtype_of,
    _float_dtype,
    _inexact_dtype,
    _quiet,
    _shape_of,
)
from functrace.random._continuous import _uniform
from functrace.random._keys import _check_key, split

# Stirling's series remainder log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi)/2]
# for k = 0..9 (the rejection bound's correction terms below k = 10).
_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_tail(k: Any) -> Any:
    dt = _dtype_of(k)
    table = np.array(_STIRLING_TAIL, dt)
    kc = fnp.clip(k, np.array(0, dt), np.array(9, dt))
    kp1sq = (kc + 1) * (kc + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (kc + 1)
    small = fnp.take(table, fnp.floor(kc).astype(np.int32))
    return fnp.where(k <= 9, small, approx)


def _inversion(key: Any, count: Any, q: Any, shape: tuple[int, ...]) -> Any:
    """Successes = the number of Geometric(q) waiting times that fit into ``count``
    trials; each round draws one waiting time for every element from a fresh key."""
    dt = _dtype_of(q)
    log_1mq = fnp.log1p(-q)

    def cond(c: Any) -> Any:
        return fnp.any(c[1] <= count)

    def body(c: Any) -> Any:
        num, total, k = c
        both = split(k)  # (subkey, next key)
        num = fnp.where(total <= count, num + 1, num)
        u = _uniform(both[0], shape, dt, 0.0, 1.0)
        return num, total + fnp.ceil(fnp.log(u) / log_1mq), both[1]

    zero = fnp.zeros(shape, dt)
    return lax.while_loop(cond, body, (zero, zero, key))[0] - 1


def _btrs(key: Any, count: Any, q: Any, shape: tuple[int, ...]) -> Any:
    """Hormann's BTRS: a proposal from the transformed uniform pair, accepted by a
    squeeze or by the exact log-density bound (with Stirling's tails)."""
    dt = _dtype_of(q)
    stddev = fnp.sqrt(count * q * (1 - q))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * q
    c = count * q + 0.5
    v_r = 0.92 - 4.2 / b
    r = q / (1 - q)
    alpha = (2.83 + 5.1 / b) * stddev
    m = fnp.floor((count + 1) * q)

    def cond(s: Any) -> Any:
        return fnp.any(~s[1])

    def body(s: Any) -> Any:
        k_out, accepted, rng = s
        three = split(rng, 3)
        u = _uniform(three[1], shape, dt, 0.0, 1.0) - 0.5
        v = _uniform(three[2], shape, dt, 0.0, 1.0)
        us = 0.5 - fnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = fnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = fnp.log(v * alpha / (a / (us * us) + b))
        bound = (
            (m + 0.5) * fnp.log((m + 1) / (r * (count - m + 1)))
            + (count + 1) * fnp.log((count - m + 1) / (count - k + 1))
            + (k + 0.5) * fnp.log(r * (count - k + 1) / (k + 1))
            + _stirling_tail(m)
            + _stirling_tail(count - m)
            - _stirling_tail(k)
            - _stirling_tail(count - k)
        )
        accept = accept1 | (~reject & (v <= bound))
        return fnp.where(accept, k, k_out), accepted | accept, three[0]

    init = (fnp.full(shape, -1, dt), fnp.zeros(shape, bool), key)
    return lax.while_loop(cond, body, init)[0]


def _binomial(key: Any, n: Any, p: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    pdt = _inexact_dtype(p)
    prob = fnp.broadcast_to(_as(p, pdt), shape)
    count = fnp.broadcast_to(_as(n, pdt), shape)
    p_lt_half = prob < 0.5
    q = fnp.where(p_lt_half, prob, 1.0 - prob)
    count_bad = fnp.isnan(count) | (count < 0.0)
    count_inf = fnp.isinf(count)
    q_nan = fnp.isnan(q)
    q_neg = q < 0.0
    q = fnp.where(q_nan | q_neg, np.array(0.01, pdt), q)
    use_inversion = count_bad | (count * q <= 10.0)
    count = fnp.floor(count)  # non-integer counts round down, as NumPy's binomial
    # each method gets harmless stand-ins where the other one is used
    inv = _inversion(key, fnp.where(use_inversion, count, 0.0), q, shape)
    count_btrs = fnp.where(use_inversion, np.array(1e4, pdt), count)
    rej = _btrs(key, count_btrs, fnp.where(use_inversion, np.array(0.5, pdt), q), shape)
    samples = fnp.where(use_inversion, inv, rej).astype(dt)
    invalid = q_neg | q_nan | count_bad
    samples = fnp.where(invalid, np.array(np.nan, dt), samples)
    samples = fnp.where(count_inf & ~invalid, np.array(np.inf, dt), samples)
    flip = ~(p_lt_half | count_bad | q_nan | count_inf)
    return fnp.where(flip, count.astype(dt) - samples, samples)


@_quiet
def binomial(
    key: Any, n: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None
) -> Any:
    """Binomial(``n``, ``p``) samples as floats (default float64), with JAX's algorithm
    and bits: inversion by geometric waiting times where ``n * min(p, 1 - p) <= 10``,
    BTRS rejection elsewhere, computed in ``p``'s float dtype (float64 for Python
    numbers). Non-integer ``n`` rounds down; a NaN or negative ``n``, or ``p`` outside
    ``[0, 1]``, gives NaN; an infinite ``n`` gives inf.

    >>> import functrace.random as random
    >>> x = random.binomial(random.PRNGKey(0), 20, 0.3, (4,))
    >>> bool(((x >= 0) & (x <= 20) & (x == x.round())).all())
    True
    """
    key = _check_key("binomial", key)
    dt = _float_dtype("binomial", dtype)
    for name, v in (("n", n), ("p", p)):
        if _dtype_of(v).kind not in "biuf":
            raise TypeError(f"random.binomial: expected a real {name}, got {_dtype_of(v).name}.")
    if shape is None:
        try:
            shp = tuple(np.broadcast_shapes(_shape_of(n), _shape_of(p)))
        except ValueError:
            raise ValueError(
                f"random.binomial: expected n and p of broadcast-compatible shapes, got "
                f"{_shape_of(n)} and {_shape_of(p)}."
            ) from None
    else:
        shp = _canonical_shape("binomial", shape)
        _check_shape("binomial", shp, _shape_of(n), _shape_of(p))
    return _binomial(key, n, p, shp, dt)


@_quiet
def multinomial(
    key: Any,
    n: Any,
    p: Any,
    *,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    unroll: int | bool = 1,
) -> Any:
    """Multinomial counts of ``n`` trials over the categories on ``p``'s last axis
    (default dtype float64): a binomial per category on the trials left, with
    probability ``p_i / (p_i + ... + p_last)``, one key of ``split(key, k)`` each.

    ``shape`` is the whole result shape, categories included (default ``p.shape``):
    JAX's code reads it so, though its docstring describes a batch shape. ``unroll``
    is accepted for compatibility; it does not change the samples.

    >>> import numpy as np, functrace.random as random
    >>> x = random.multinomial(random.PRNGKey(0), 10, np.array([0.2, 0.3, 0.5]))
    >>> float(x.sum())
    10.0
    """
    key = _check_key("multinomial", key)
    dt = _float_dtype("multinomial", dtype)
    if not isinstance(unroll, (bool, int, np.integer)):
        raise TypeError(f"random.multinomial: expected an int or bool unroll, got {unroll!r}.")
    n_arr = n if isinstance(n, Tracer) or core.is_python_scalar(n) else np.asarray(n)
    p_arr = p if isinstance(p, Tracer) else np.asarray(p)
    if _dtype_of(p_arr).kind not in "biuf" or _dtype_of(n_arr).kind not in "biuf":
        raise TypeError(
            f"random.multinomial: expected real n and p, got {_dtype_of(n_arr).name} and "
            f"{_dtype_of(p_arr).name}."
        )
    wdt = _promote_inexact(n_arr, p_arr)
    ps = _shape_of(p_arr)
    if len(ps) < 1:
        raise ValueError("random.multinomial: expected p with a category axis, got a scalar.")
    shp = ps if shape is None else _canonical_shape("multinomial", shape)
    if len(shp) < 1:
        raise ValueError("random.multinomial: expected a shape with a category axis, got ().")
    try:
        np.broadcast_shapes(shp, ps)
        np.broadcast_shapes(shp[:-1], _shape_of(n_arr))
        if np.broadcast_shapes(shp, ps) != shp:
            raise ValueError
    except ValueError:
        raise ValueError(
            f"random.multinomial: expected p of a shape that broadcasts to {shp} and n to "
            f"{shp[:-1]}, got {ps} and {_shape_of(n_arr)}."
        ) from None
    probs = fnp.moveaxis(fnp.broadcast_to(_as(p_arr, wdt), shp), -1, 0)
    trials = fnp.broadcast_to(_as(n_arr, wdt), shp[:-1])
    remaining = lax.cumsum(probs, 0, reverse=True)
    ratios = probs / fnp.where(remaining == 0, np.array(1, wdt), remaining)
    keys = split(key, shp[-1])

    def step(left: Any, xs: Any) -> Any:
        ratio, k = xs
        count = _binomial(k, left, fnp.clip(ratio, 0, 1), shp[:-1], wdt)
        return left - count, count

    counts = lax.scan(step, trials, (ratios, keys))[1]
    return fnp.moveaxis(counts, 0, -1).astype(dt)


def _promote_inexact(n: Any, p: Any) -> np.dtype:
    """The float dtype ``n`` and ``p`` compute in, by JAX's promotion with x64 on: the
    arrays' float dtypes (an integer array defers to a float one: int64 with float32
    is float32), float64 when neither is a float array."""
    avals = [core.get_aval(v) for v in (n, p)]
    floats = [a.dtype for a in avals if a.dtype.kind == "f" and not a.weak_type]
    return np.result_type(*floats) if floats else _DEFAULT_FLOAT
