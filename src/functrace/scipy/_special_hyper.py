"""Confluent and Gauss hypergeometric functions of functrace.scipy.special
(re-exported there): ``hyp1f1`` and ``hyp2f1`` for real arguments.

Both sum their power series in a ``lax.fori_loop`` of fixed length after a
transformation that keeps the argument where the series converges fast (Kummer's
for ``1F1`` at negative ``x``, Pfaff's and the ``1 - x`` connection formula for
``2F1``), so they jit to one native loop and differentiate in every argument.

>>> round(float(hyp1f1(1.0, 2.0, 1.0)), 12)  # e - 1
1.718281828459
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace import lax as lx
from functrace.scipy._special_more import _gammasgn, gammaln_, is_pole, safe
from functrace.scipy._util import floats, scalar_result


def _series(num: tuple[Any, ...], den: Any, z: Any, n: int) -> Any:
    """``sum_{k<=n} prod_i (num_i)_k / (den)_k z^k / k!`` in a fori_loop."""
    dt = core.get_aval(z).dtype

    def body(k: Any, carry: tuple[Any, Any]) -> tuple[Any, Any]:
        s, t = carry
        kf = lx.convert_element_type(k, dt, False)
        ratio = z / ((den + kf) * (kf + 1))
        for p in num:
            ratio = ratio * (p + kf)
        t = t * ratio
        return s + t, t

    ones = fnp.ones_like(z)
    s, _ = lx.fori_loop(0, n, body, (ones, ones))
    return s


def _in_float64(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` computed in float64 and cast back (the series' terms overflow
    float32 long before the result does)."""
    dt = core.get_aval(args[0]).dtype
    if dt == np.float64:
        return fn(*args)
    return fn(*(fnp.asarray(v, dtype=np.float64) for v in args)).astype(dt)


def _rgamma(x: Any) -> Any:
    """``1 / Gamma(x)``, 0 at the poles."""
    pole = is_pole(x)
    xs = safe(pole, 1.0, x)
    return fnp.where(pole, 0.0, _gammasgn(xs) * fnp.exp(-gammaln_(xs)))


# ---------------------------------------------------------------------------
# hyp1f1
# ---------------------------------------------------------------------------

_M_SERIES_TERMS = 400
_M_ASYMPTOTIC_TERMS = 40
_M_ASYMPTOTIC_FROM = 120.0


def _hyp1f1(a: Any, b: Any, x: Any) -> Any:
    neg = x < 0
    ak = fnp.where(neg, b - a, a)  # Kummer: M(a, b, x) = exp(x) M(b - a, b, -x)
    y = fnp.abs(x)
    poly = is_pole(ak)  # a terminating series: the series at every y
    use_series = (y < _M_ASYMPTOTIC_FROM) | poly
    ys = safe(use_series, y, 0.0)
    series = _series((ak,), b, ys, _M_SERIES_TERMS) * fnp.exp(safe(neg & use_series, x, 0.0))
    # y large: M ~ Gamma(b) / Gamma(a) e^y y^(a-b) sum_k (b-a)_k (1-a)_k / k! y^-k
    yl = safe(use_series, _M_ASYMPTOTIC_FROM, y)
    al = safe(poly, 0.5, ak)
    term, acc = fnp.ones_like(yl), fnp.ones_like(yl)
    for k in range(_M_ASYMPTOTIC_TERMS):
        term = term * ((b - al + k) * (1 - al + k) / ((k + 1) * yl))
        acc = acc + term
    expo = fnp.where(neg, 0.0, yl) + (al - b) * fnp.log(yl) + gammaln_(b) - gammaln_(al)
    asym = _gammasgn(b) * _gammasgn(al) * fnp.exp(expo) * acc
    out = fnp.where(use_series, series, asym)
    out = fnp.where(is_pole(b), np.inf, out)
    return fnp.where(a == 0, fnp.ones_like(out), out)


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """Kummer's confluent hypergeometric function
    ``1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!``.

    The series (400 terms) for ``|x| < 120``, after Kummer's transformation for
    ``x < 0`` (so large negative ``x`` is accurate, unlike JAX's plain series), and the
    leading asymptotic expansion beyond; accurate to about 1e-13 for moderate ``|a|``,
    ``|b|`` (up to about 10). Computed in float64 for float32 inputs. ``1`` for
    ``a == 0`` (also ``a == b == 0``, as JAX), ``inf`` where ``b`` is 0, -1, -2, ...

    >>> round(float(hyp1f1(1.0, 2.0, -100.0)), 12)  # (1 - e^-100) / 100
    0.01
    """
    a, b, x = floats("hyp1f1", a, b, x)
    return scalar_result(_in_float64(_hyp1f1, a, b, x))


# ---------------------------------------------------------------------------
# hyp2f1
# ---------------------------------------------------------------------------

_F_DIRECT_TERMS = 160
_F_DIRECT_TO = 0.75
_F_SHIFTED_TERMS = 45
_F_DELTA = 1e-3  # the spacing of the interpolation in c - a - b near an integer


def _hyp2f1_one_minus(a: Any, b: Any, c: Any, z: Any) -> Any:
    """2F1 on ``z`` in (0.75, 1) by the connection formula in ``1 - z`` (``c - a - b``
    not an integer)."""
    d = c - a - b
    s = 1 - z
    lg_c = gammaln_(c)
    sg_c = _gammasgn(c)
    c1 = sg_c * _gammasgn(d) * fnp.exp(lg_c + gammaln_(d)) * _rgamma(c - a) * _rgamma(c - b)
    c2 = sg_c * _gammasgn(-d) * fnp.exp(lg_c + gammaln_(-d)) * _rgamma(a) * _rgamma(b)
    f1 = _series((a, b), 1 - d, s, _F_SHIFTED_TERMS)
    f2 = _series((c - a, c - b), 1 + d, s, _F_SHIFTED_TERMS)
    return c1 * f1 + c2 * fnp.power(s, d) * f2


def _hyp2f1_near_one(a: Any, b: Any, c: Any, z: Any) -> Any:
    # c - a - b within DELTA/2 of an integer m: the formula is 0 * inf there, so it is
    # evaluated at c - a - b = m +- DELTA, m +- 2 DELTA and interpolated (cubic) at d
    d = c - a - b
    m = fnp.round(d)
    degen = fnp.abs(d - m) < _F_DELTA / 2
    # (shifting the larger of a, b: the function varies slowest in it)
    offs = (-2.0, -1.0, 1.0, 2.0)
    pick_a = fnp.abs(a) >= fnp.abs(b)
    shifts = [fnp.where(degen, m + o * _F_DELTA - d, 0.0) for o in offs]
    zero = fnp.zeros_like(d)
    a_all = fnp.stack([a] + [a - fnp.where(pick_a, sh, zero) for sh in shifts])
    b_all = fnp.stack([b] + [b - fnp.where(pick_a, zero, sh) for sh in shifts])
    vals = _hyp2f1_one_minus(a_all, b_all, fnp.stack([c] * 5), fnp.stack([z] * 5))
    r = (d - m) / _F_DELTA  # the point in units of DELTA
    interp = fnp.zeros_like(z)
    for i, oi in enumerate(offs):
        w = fnp.ones_like(r)
        for oj in offs:
            if oj != oi:
                w = w * (r - oj) / (oi - oj)
        interp = interp + w * vals[i + 1]
    return fnp.where(degen, interp, vals[0])


def _hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    a_int, b_int = is_pole(a), is_pole(b)
    # Pfaff for x < 0: F = (1 - x)^-p F(p, c - q; c; x / (x - 1)), keeping a terminating p
    neg = x < 0
    use_b = b_int & ~a_int
    p = fnp.where(use_b, b, a)
    q = fnp.where(use_b, a, b)
    xn = safe(neg, x, -1.0)
    w = xn / (xn - 1)
    A = fnp.where(neg, p, a)
    B = fnp.where(neg, c - q, b)
    z = fnp.where(neg, w, x)
    pre = fnp.where(neg, fnp.power(1 - xn, -p), 1.0)
    terminating = is_pole(A) | is_pole(B)
    direct = (z <= _F_DIRECT_TO) | terminating
    zd = safe(direct & (z < 1), z, 0.0)
    near = (z > _F_DIRECT_TO) & (z < 1) & ~terminating
    zn = safe(near, z, 0.9)
    near_v = _hyp2f1_near_one(safe(near, A, 0.25), safe(near, B, 0.5), safe(near, c, 2.0), zn)
    val = fnp.where(direct, _series((A, B), c, zd, _F_DIRECT_TERMS), near_v)
    out = pre * val
    # x == 1: Gauss's sum where c - a - b > 0, inf otherwise
    d = c - a - b
    dp = safe(d > 0, d, 1.0)
    gauss = _gammasgn(c) * _gammasgn(dp) * fnp.exp(gammaln_(c) + gammaln_(dp))
    gauss = gauss * _rgamma(c - a) * _rgamma(c - b)
    at_one = fnp.where(d > 0, gauss, np.inf)
    out = fnp.where(x == 1, at_one, fnp.where(x > 1, np.nan, out))
    out = fnp.where(is_pole(c), np.inf, out)
    trivial = (x == 0) | (((a == 0) | (b == 0)) & (c != 0))
    return fnp.where(trivial, fnp.ones_like(out), out)


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """The Gauss hypergeometric function ``2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k
    x^k / k!`` for real ``x <= 1``.

    Pfaff's transformation maps ``x < 0`` into ``[0, 1)``; the series (160 terms) is
    summed up to 0.75 and the ``1 - x`` connection formula used above (where
    ``c - a - b`` is within 5e-4 of an integer, interpolated from nearby values: about
    1e-10 relative). At ``x == 1``, Gauss's sum if ``c - a - b > 0``, else ``inf``.
    NaN for ``x > 1`` (the function is complex there in general); ``inf`` where ``c``
    is 0, -1, -2, ...; 1 where ``x == 0`` or ``a`` or ``b`` is 0. Computed in float64
    for float32 inputs.

    >>> round(float(hyp2f1(1.0, 1.0, 2.0, 0.5)), 12)  # -log(1 - x) / x
    1.38629436112
    """
    a, b, c, x = floats("hyp2f1", a, b, c, x)
    return scalar_result(_in_float64(_hyp2f1, a, b, c, x))
