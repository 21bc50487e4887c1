"""Op-table rows for the primitives of ``functrace/lax/random_bits.py`` and for the
samplers of ``functrace.random`` as functions of their float parameters (key fixed).

``threefry2x32``'s reference is the cipher written out on Python ints, one block at a
time (Random123's definition), independent of the NumPy impl; ``erf_inv`` is checked
against SciPy and ``nextafter`` against NumPy.

A sampler's reference applies its closed-form transform in NumPy to the base draws
(``normal``, ``uniform``, ``exponential``, ``gamma``) of the same key, which
``test_random.py`` checks against JAX. The transforms of uniform, normal and
exponential draws are smooth in their parameters for a fixed key, so their rows check
gradients against finite differences. The gamma-based samplers (``t``, ``chisquare``,
``f``, ``generalized_normal``, ``ball``) have ``grad=False``: their derivative is JAX's
implicit reparameterisation gradient (the sample moves along the inverse CDF at a fixed
quantile), which is not the derivative of the rejection sampler's path for a fixed key,
so finite differences cannot check it; ``test_random.py`` compares it with JAX's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special

import functrace.lax as lax
import functrace.numpy as fnp
import functrace.random as random
from op_db import POS, Arg, F, OpInfo

U32 = Arg("int", (0, 2**32 - 1))
_M = 0xFFFFFFFF


def _threefry_block(k0: int, k1: int, x0: int, x1: int) -> tuple[int, int]:
    ks = (k0, k1, k0 ^ k1 ^ 0x1BD11BDA)
    rot = ((13, 15, 26, 6), (17, 29, 16, 24))
    x0, x1 = (x0 + ks[0]) & _M, (x1 + ks[1]) & _M
    for i in range(5):
        for r in rot[i % 2]:
            x0 = (x0 + x1) & _M
            x1 = ((x1 << r) | (x1 >> (32 - r))) & _M
            x1 ^= x0
        x0 = (x0 + ks[(i + 1) % 3]) & _M
        x1 = (x1 + ks[(i + 2) % 3] + i + 1) & _M
    return x0, x1


def _np_threefry(*args: Any) -> np.ndarray:
    arrs = np.broadcast_arrays(*[np.asarray(a).astype(np.uint32) for a in args])
    out = np.empty((2, *arrs[0].shape), np.uint32)
    for idx in np.ndindex(arrs[0].shape):
        out[(0, *idx)], out[(1, *idx)] = _threefry_block(*(int(a[idx]) for a in arrs))
    return out


def _threefry(*args: Any) -> Any:
    y0, y1 = lax.threefry2x32(*(lax.convert_element_type(a, np.uint32) for a in args))
    return fnp.stack([y0, y1])


ROWS: list[OpInfo] = [
    OpInfo(
        "lax.threefry2x32",
        _threefry,
        _np_threefry,
        (U32, U32, U32, U32),
        ("threefry2x32",),
        shapes="same",
        grad=False,
        dtypes=(np.uint32,),
    ),
    OpInfo(
        "lax.erf_inv",
        lax.erf_inv,
        lambda x: scipy.special.erfinv(x).astype(np.asarray(x).dtype),
        (Arg(domain=(-0.9, 0.9)),),  # order-2 finite differences lose digits nearer +-1
        ("erf_inv",),
        shapes="same",
        rtol=1e-13,
        atol=1e-14,
    ),
    OpInfo(
        "lax.nextafter",
        lax.nextafter,
        np.nextafter,
        (F, F),
        ("nextafter",),
        shapes="same",
    ),
]


# ---------------------------------------------------------------------------
# Samplers in their float parameters, for one fixed key
# ---------------------------------------------------------------------------

KEY = random.PRNGKey(7)
K0, K1 = random.split(KEY)


def _dt(x: Any) -> np.dtype:
    return np.dtype(x.dtype)


def _bshape(*xs: Any) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*(np.shape(x) for x in xs)))


def _np(x: Any) -> np.ndarray:
    return np.asarray(x)


def _lognormal_ref(s: Any) -> Any:
    return np.exp(_np(random.normal(KEY, np.shape(s), _dt(s))) * s)


def _pareto_ref(b: Any) -> Any:
    return np.exp(_np(random.exponential(KEY, np.shape(b), _dt(b))) / b)


def _rayleigh_ref(s: Any) -> Any:
    u = _np(random.uniform(KEY, np.shape(s), _dt(s)))
    return s * np.sqrt(np.log(u) * _dt(s).type(-2))


def _wald_ref(m: Any) -> Any:
    dt = _dt(m)
    v = _np(random.normal(K0, np.shape(m), dt))
    z = _np(random.uniform(K1, np.shape(m), dt))
    y = v * v
    x = m + m * m * y / 2 - m / 2 * np.sqrt(4 * m * y + m * m * (y * y))
    return np.where(z <= m / (m + x), x, m * m / x).astype(dt)


def _weibull(s: Any, c: Any) -> Any:
    return random.weibull_min(KEY, s, c, _bshape(s, c), _dt(s))


def _weibull_ref(s: Any, c: Any) -> Any:
    u = _np(random.uniform(KEY, _bshape(s, c), _dt(s)))
    return (np.power(-np.log1p(-u), 1 / c) * s).astype(_dt(s))


def _dsmaxwell_ref(loc: Any, scale: Any) -> Any:
    s = _bshape(loc, scale)
    full = s + s  # the default shape (): draws of shape s + s, JAX's rule
    m = _np(random.maxwell(K0, full, _dt(loc)))
    sign = _np(random.rademacher(K1, full, _dt(loc)))
    return sign * m * scale + loc


def _triangular(a: Any, c: Any, b: Any) -> Any:
    return random.triangular(KEY, a, c, b, dtype=_dt(a))


def _triangular_ref(a: Any, c: Any, b: Any) -> Any:
    a, c, b = np.broadcast_arrays(a, c, b)
    u = _np(random.uniform(KEY, a.shape, _dt(a)))
    low = a + np.sqrt(u * (b - a) * (c - a))
    high = b - np.sqrt((1 - u) * (b - a) * (b - c))
    return np.where(u < (c - a) / (b - a), low, high)


def _t_ref(df: Any) -> Any:
    dt = _dt(df)
    z = _np(random.normal(K0, np.shape(df), dt))
    g = _np(random.gamma(K1, df / 2, np.shape(df), dt))
    return z * np.sqrt(df / 2 / g)


def _chisquare_ref(df: Any) -> Any:
    dt = _dt(df)
    return np.exp(_np(random.loggamma(KEY, df / 2, np.shape(df), dt))) * dt.type(2)


def _f_ref(a: Any, b: Any) -> Any:
    s, dt = _bshape(a, b), _dt(a)
    num = np.exp(_np(random.loggamma(K1, a / 2, s, dt))) * dt.type(2)
    den = np.exp(_np(random.loggamma(K0, b / 2, s, dt))) * dt.type(2)
    return (num / a) / (den / b)


def _generalized_normal(p: Any) -> Any:
    return random.generalized_normal(KEY, p, np.shape(p), _dt(p))


def _generalized_normal_ref(p: Any) -> Any:
    dt = _dt(p)
    g = _np(random.gamma(K0, 1 / p, np.shape(p), dt))
    return _np(random.rademacher(K1, np.shape(p), dt)) * np.power(g, 1 / p)


DF = Arg(domain=(0.5, 6.0))
SAMPLER_ROWS: list[OpInfo] = [
    OpInfo(
        "random.lognormal",
        lambda s: random.lognormal(KEY, s, dtype=_dt(s)),
        _lognormal_ref,
        (Arg(domain=(-1.5, 1.5)),),
        rtol=1e-5,
    ),
    OpInfo(
        "random.pareto",
        lambda b: random.pareto(KEY, b, dtype=_dt(b)),
        _pareto_ref,
        (POS,),
        rtol=1e-5,
    ),
    OpInfo(
        "random.rayleigh",
        lambda s: random.rayleigh(KEY, s, dtype=_dt(s)),
        _rayleigh_ref,
        (POS,),
    ),
    OpInfo(
        "random.wald",
        lambda m: random.wald(KEY, m, dtype=_dt(m)),
        _wald_ref,
        (POS,),
        rtol=1e-5,
    ),
    OpInfo("random.weibull_min", _weibull, _weibull_ref, (POS, Arg(domain=(0.5, 3.0))), rtol=1e-5),
    OpInfo(
        "random.double_sided_maxwell",
        lambda loc, scale: random.double_sided_maxwell(KEY, loc, scale, dtype=_dt(loc)),
        _dsmaxwell_ref,
        (F, POS),
        shapes="same",
    ),
    OpInfo(
        "random.triangular",
        _triangular,
        _triangular_ref,
        (Arg(domain=(-3.0, -1.0)), Arg(domain=(-0.5, 0.5)), Arg(domain=(1.0, 3.0))),
    ),
    OpInfo(
        "random.t",
        lambda df: random.t(KEY, df, dtype=_dt(df)),
        _t_ref,
        (DF,),
        grad=False,
        rtol=1e-5,
        dtypes=(np.float64,),  # float32 gamma draws: test_random.py (compiling is slow)
    ),
    OpInfo(
        "random.chisquare",
        lambda df: random.chisquare(KEY, df, dtype=_dt(df)),
        _chisquare_ref,
        (DF,),
        grad=False,
        rtol=1e-5,
    ),
    OpInfo(
        "random.f",
        lambda a, b: random.f(KEY, a, b, dtype=_dt(a)),
        _f_ref,
        (DF, DF),
        grad=False,
        dtypes=(np.float64,),
    ),
    OpInfo(
        "random.generalized_normal",
        _generalized_normal,
        _generalized_normal_ref,
        (Arg(domain=(0.8, 4.0)),),
        grad=False,
        rtol=1e-5,
    ),
]

ROWS += SAMPLER_ROWS
