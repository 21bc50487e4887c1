"""Gamma-family and zeta functions of functrace.scipy.special (re-exported there).

All are composites of functrace.numpy and the lax special-function primitives, so
they differentiate (any order), batch and jit. Poles and edges follow JAX where JAX
states a convention (``gamma(-0.0) = -inf``, ``loggamma(x <= 0) = nan``,
``comb`` is 0 outside ``0 <= k <= N``) and SciPy where JAX's value is a numerical
accident (``beta`` and ``poch`` are 0 where a pole in the denominator makes them 0;
``zeta(x, q)`` is ``inf`` at the poles ``q = 0, -1, ...``).

>>> round(float(gamma(5.0)), 9)
24.0
"""

from __future__ import annotations

import math
import operator
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace import lax as lx
from functrace.lax.special_extra import zeta_continued
from functrace.scipy._util import floats, scalar_result

EULER = 0.5772156649015329  # Euler's constant


def cheb(coefs: tuple[float, ...], t: Any) -> Any:
    """``sum_k coefs[k] T_k(t)`` by Clenshaw's recurrence (``t`` in ``[-1, 1]``)."""
    b1, b2 = fnp.zeros_like(t), fnp.zeros_like(t)
    t2 = t + t
    for c in coefs[:0:-1]:
        b1, b2 = t2 * b1 - b2 + c, b1
    return t * b1 - b2 + coefs[0]


def safe(cond: Any, x: Any, fill: float) -> Any:
    """``x`` where ``cond``, ``fill`` elsewhere: the argument of a branch that is
    selected only where ``cond`` holds (so no NaN or inf reaches its derivatives)."""
    return fnp.where(cond, x, fill)


def gammaln_(x: Any) -> Any:
    return lx.lgamma(x)


def is_pole(x: Any) -> Any:
    """Whether ``x`` is 0, -1, -2, ... (a pole of the gamma function)."""
    return (x <= 0) & (fnp.floor(x) == x)


def _gammasgn(x: Any) -> Any:
    fl = fnp.floor(x)
    neg = x < 0
    minus = (neg & (fnp.remainder(fl, 2) != 0)) | ((x == 0) & fnp.signbit(x))
    nan = (neg & (x == fl)) | fnp.isnan(x)
    return fnp.where(nan, np.nan, fnp.where(minus, -1.0, fnp.ones_like(x)))


def gammasgn(x: Any) -> Any:
    """The sign of the gamma function: 1 or -1; NaN at the negative integers, at
    ``-inf`` and for NaN; ``-1`` at ``-0.0``. Its derivative is 0.

    >>> float(gammasgn(-0.5)), float(gammasgn(-1.5))
    (-1.0, 1.0)
    """
    (x,) = floats("gammasgn", x)
    return scalar_result(_gammasgn(x))


def _gamma(x: Any) -> Any:
    return _gammasgn(x) * fnp.exp(gammaln_(x))


def gamma(x: Any) -> Any:
    """The gamma function, ``gammasgn(x) * exp(gammaln(x))`` (``Gamma(n) = (n-1)!``).

    ``+-inf`` at ``+-0``, NaN at the negative integers and at ``-inf``; the derivative
    is ``gamma(x) * digamma(x)``.

    >>> round(float(gamma(0.5)), 12) == round(math.sqrt(math.pi), 12)
    True
    """
    (x,) = floats("gamma", x)
    return scalar_result(_gamma(x))


def loggamma(x: Any) -> Any:
    """The principal branch of ``log Gamma(x)`` for real ``x``: ``gammaln(x)`` for
    ``x > 0``, NaN for ``x <= 0`` (as JAX; SciPy gives ``inf`` at 0). Complex inputs
    are not supported.

    >>> round(float(loggamma(3.0)), 12) == round(math.log(2.0), 12)
    True
    """
    (x,) = floats("loggamma", x)
    pos = x > 0
    return scalar_result(fnp.where(pos, gammaln_(safe(pos, x, 1.0)), np.nan))


def beta(a: Any, b: Any) -> Any:
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``.

    At the poles of the gamma function it takes SciPy's values (JAX gives NaN there):
    0 where only ``a + b`` is a pole, the finite limit where ``a + b`` and one of ``a``,
    ``b`` are, ``inf`` otherwise.

    >>> round(float(beta(2.0, 3.0)), 15)  # 1 / 12
    0.083333333333333
    """
    a, b = floats("beta", a, b)
    return scalar_result(_beta(a, b))


def _beta(a: Any, b: Any) -> Any:
    ab = a + b
    pa, pb, pab = is_pole(a), is_pole(b), is_pole(ab)
    regular = ~pa & ~pb
    regular = regular & (a < np.inf) & (b < np.inf)
    sa, sb = safe(regular, a, 1.0), safe(regular, b, 1.0)
    sab = sa + sb
    sign = _gammasgn(sa) * _gammasgn(sb) * fnp.where(pab, 1.0, _gammasgn(sab))
    val = sign * fnp.exp(gammaln_(sa) + gammaln_(sb) - gammaln_(sab))
    # one of a, b a pole p and a + b a pole: the other, q, is an integer >= 1 and
    # B = Gamma(q) Gamma(p) / Gamma(p + q) = (-1)^q Gamma(q) Gamma(1 - p - q) / Gamma(1 - p)
    lim = (pa ^ pb) & pab
    p = safe(lim, fnp.where(pa, a, b), -1.0)
    q = safe(lim, fnp.where(pa, b, a), 1.0)
    sign_q = 1.0 - 2.0 * fnp.remainder(q, 2)
    limit = sign_q * fnp.exp(gammaln_(q) + gammaln_(1 - p - q) - gammaln_(1 - p))
    out = fnp.where(regular, val, fnp.where(lim, limit, fnp.full_like(val, np.inf)))
    # an infinite argument: 0 against a positive one (B(a, b) ~ Gamma(b) a^-b), else inf
    inf_a, inf_b = a == np.inf, b == np.inf
    out = fnp.where(
        inf_a | inf_b, fnp.where(fnp.where(inf_a, b, a) > 0, 0.0, fnp.full_like(out, np.inf)), out
    )
    return fnp.where(fnp.isnan(a) | fnp.isnan(b), np.nan, out)


def factorial(n: Any, exact: bool = False) -> Any:
    """``n! = gamma(n + 1)`` as a float, 0 for ``n < 0``.

    Only ``exact=False`` is supported (as in JAX: exact integers overflow int64 above
    ``20!``).

    >>> round(float(factorial(5)), 9)
    120.0
    """
    if exact:
        raise NotImplementedError(
            "factorial: expected exact=False, got exact=True. functrace computes the "
            "factorial in floating point (gamma(n + 1)); use math.factorial for exact "
            "integers."
        )
    (n,) = floats("factorial", n)
    ok = n >= 0
    val = fnp.exp(gammaln_(safe(ok, n, 0.0) + 1))
    return scalar_result(fnp.where(ok | fnp.isnan(n), val, 0.0))


def _comb(n: Any, k: Any) -> Any:
    ok = (k <= n) & (n >= 0) & (k >= 0)
    sn, sk = safe(ok, n, 0.0), safe(ok, k, 0.0)
    val = fnp.exp(gammaln_(sn + 1) - gammaln_(sk + 1) - gammaln_(sn - sk + 1))
    return fnp.where(ok, val, fnp.where(fnp.isnan(n) | fnp.isnan(k), np.nan, fnp.zeros_like(n)))


def comb(N: Any, k: Any, *, exact: bool = False, repetition: bool = False) -> Any:
    """The number of combinations ``N! / (k! (N-k)!)`` as a float, from ``gammaln``.

    0 unless ``0 <= k <= N``. With ``repetition=True``, ``comb(N + k - 1, k)`` (1 for
    ``k == 0``, ``N >= 0``). Only ``exact=False`` is supported.

    >>> round(float(comb(5, 2)), 9), round(float(comb(5, 2, repetition=True)), 9)
    (10.0, 15.0)
    """
    if exact:
        raise NotImplementedError(
            "comb: expected exact=False, got exact=True. functrace computes the binomial "
            "coefficient in floating point; use math.comb for exact integers."
        )
    N, k = floats("comb", N, k)
    if repetition:
        out = fnp.where((k == 0) & (N >= 0), 1.0, _comb(N + k - 1, k))
    else:
        out = _comb(N, k)
    return scalar_result(out)


def poch(z: Any, m: Any) -> Any:
    """The Pochhammer symbol (rising factorial) ``(z)_m = Gamma(z + m) / Gamma(z)``.

    1 for ``m == 0``. Computed as ``exp(gammaln(z + m) - gammaln(z))`` with the signs,
    so it does not overflow where both gammas do; at a pole ``z`` with integer ``m``
    it is the finite limit ``(-1)^m Gamma(1 - z) / Gamma(1 - z - m)`` (0 where the
    product passes through 0, as SciPy; JAX gives NaN there); ``inf`` where only
    ``z + m`` is a pole. For ``z, z + m > 10`` the log-ratio comes from Stirling's
    series, so no digits are lost to cancelling ``gammaln`` values.

    >>> round(float(poch(3.0, 2.0)), 9)  # 3 * 4
    12.0
    """
    z, m = floats("poch", z, m)
    zm = z + m
    val = _gammasgn(zm) * _gammasgn(z) * fnp.exp(gammaln_(zm) - gammaln_(z))
    # both large: the difference of Stirling's series, without cancelling gammalns
    big = (z > 10) & (zm > 10)
    zb, mb = safe(big, z, 20.0), safe(big, m, 1.0)
    zmb = zb + mb
    logr = (zb - 0.5) * fnp.log1p(mb / zb) + mb * fnp.log(zmb) - mb
    logr = logr + _stirling_tail(zmb) - _stirling_tail(zb)
    val = fnp.where(big, fnp.exp(logr), val)
    # z a pole: 1/Gamma(z) = 0, unless z + m is a pole as well
    m_int = fnp.floor(m) == m
    refl = is_pole(z) & m_int
    zr = safe(refl, z, 0.0)
    mr = safe(refl, m, 0.0)
    sign_m = 1.0 - 2.0 * fnp.remainder(fnp.abs(mr), 2)
    at_pole = sign_m * fnp.exp(gammaln_(1 - zr) - gammaln_(1 - zr - mr))
    out = fnp.where(refl, at_pole, fnp.where(is_pole(z), 0.0, val))
    out = fnp.where(is_pole(zm) & ~is_pole(z), np.inf, out)
    return scalar_result(fnp.where(m == 0, fnp.ones_like(out), out))


# log Gamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2) = sum_k B_2k / (2k (2k-1) z^(2k-1))
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)


def _stirling_tail(z: Any) -> Any:
    inv = 1 / z
    inv2 = inv * inv
    acc = fnp.zeros_like(z)
    for c in _STIRLING[::-1]:
        acc = acc * inv2 + c
    return acc * inv


def multigammaln(a: Any, d: Any) -> Any:
    """The log of the multivariate gamma function,
    ``d (d-1) / 4 log(pi) + sum_{j<d} gammaln(a - j / 2)`` (``d`` a concrete int).

    As JAX, the domain ``a > (d - 1) / 2`` is not checked.

    >>> round(float(multigammaln(2.5, 1)), 12) == round(math.lgamma(2.5), 12)
    True
    """
    if isinstance(d, core.Tracer):
        raise TypeError(
            "multigammaln: expected a concrete integer dimension d, got a traced value. "
            "Pass d as a Python int (a static argument under jit)."
        )
    try:
        d = operator.index(d)
    except TypeError:
        raise TypeError(f"multigammaln: expected an integer dimension d, got {d!r}.") from None
    if d < 1:
        raise ValueError(f"multigammaln: expected a dimension d >= 1, got {d}.")
    (a,) = floats("multigammaln", a)
    out = fnp.zeros_like(a) + d * (d - 1) / 4 * math.log(math.pi)
    for j in range(d):
        out = out + gammaln_(a - j / 2)
    return scalar_result(out)


def rel_entr(x: Any, y: Any) -> Any:
    """Elementwise relative entropy: ``x log(x / y)`` for ``x, y > 0``, 0 for ``x == 0``
    and ``y >= 0``, ``inf`` otherwise (NaN for NaN inputs).

    >>> float(rel_entr(0.0, 2.0)), round(float(rel_entr(2.0, 1.0)), 12)
    (0.0, 1.38629436112)
    """
    x, y = floats("rel_entr", x, y)
    return scalar_result(_rel_entr(x, y))


def _rel_entr(x: Any, y: Any) -> Any:
    both = (x > 0) & (y > 0)
    xs, ys = safe(both, x, 1.0), safe(both, y, 1.0)
    val = xs * (fnp.log(xs) - fnp.log(ys))
    other = fnp.where((x == 0) & (y >= 0), 0.0, fnp.full_like(x, np.inf))
    other = fnp.where(fnp.isnan(x) | fnp.isnan(y), np.nan, other)
    return fnp.where(both, val, other)


def kl_div(x: Any, y: Any) -> Any:
    """Elementwise Kullback-Leibler divergence ``x log(x / y) - x + y`` (``y`` at
    ``x == 0``, ``y >= 0``; ``inf`` for negative inputs).

    >>> float(kl_div(1.0, 1.0)), float(kl_div(0.0, 3.0))
    (0.0, 3.0)
    """
    x, y = floats("kl_div", x, y)
    return scalar_result(_rel_entr(x, y) - x + y)


def _boxcox(fname: str, x: Any, lmbda: Any, log_fn: Any) -> Any:
    x, lmbda = floats(fname, x, lmbda)
    zero = lmbda == 0
    lg = log_fn(x)
    sl = fnp.where(zero, 1.0, lmbda)
    return scalar_result(fnp.where(zero, lg, fnp.expm1(sl * lg) / sl))


def boxcox(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transformation ``(x^lmbda - 1) / lmbda`` (``log x`` at ``lmbda == 0``).

    >>> float(boxcox(4.0, 0.5))
    2.0
    """
    return _boxcox("boxcox", x, lmbda, fnp.log)


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """``boxcox(1 + x, lmbda)``, accurate for small ``x``.

    >>> float(boxcox1p(3.0, 0.5))
    2.0
    """
    return _boxcox("boxcox1p", x, lmbda, fnp.log1p)


@lru_cache(maxsize=64)
def bernoulli_fractions(n: int) -> tuple[Fraction, ...]:
    """The Bernoulli numbers ``B_0 .. B_n`` exactly (``B_1 = -1/2``)."""
    b = [Fraction(1)]
    for m in range(1, n + 1):  # sum_{k<=m} C(m+1, k) B_k = 0
        b.append(-sum((math.comb(m + 1, k) * b[k] for k in range(m)), Fraction(0)) / (m + 1))
    return tuple(b)


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers ``B_0, ..., B_n`` (``B_1 = -1/2``), a float64 array of
    ``n + 1`` values (``n`` a concrete int >= 0).

    Exact to the last bit (computed as fractions; JAX's series loses digits).

    >>> bernoulli(4).tolist() == [1.0, -0.5, 1 / 6, 0.0, -1 / 30]
    True
    """
    if isinstance(n, core.Tracer):
        raise TypeError(
            "bernoulli: expected a concrete integer n, got a traced value. Pass n as a "
            "Python int (a static argument under jit)."
        )
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"bernoulli: expected an integer n, got {n!r}.") from None
    if n < 0:
        raise ValueError(f"bernoulli: expected a non-negative integer n, got {n}.")
    with np.errstate(over="ignore"):
        return np.array([float(v) if abs(v) < 1e308 else math.copysign(math.inf, v)
                         for v in bernoulli_fractions(n)])  # fmt: skip


def _riemann_zeta(x: Any) -> Any:
    # x >= -1/4: the Hurwitz zeta function at q = 1 (continued analytically below x = 1);
    # below, the functional equation
    # zeta(x) = 2^x pi^(x-1) sin(pi x / 2) Gamma(1 - x) zeta(1 - x)
    neg = x < -0.25
    xp = fnp.where(neg | (x == 1) | (x == np.inf), 2.0, x)
    direct = zeta_continued(xp, fnp.ones_like(x))
    direct = fnp.where(x == 1, np.inf, fnp.where(x == np.inf, 1.0, direct))
    xn = safe(neg, x, -1.0)
    half = xn * 0.5
    sin_part = fnp.sin(math.pi * (half - 2 * fnp.floor(half * 0.5)))  # reduced mod 4
    trivial = fnp.floor(half) == half  # the zeros at -2, -4, ...
    logmag = xn * math.log(2) + (xn - 1) * math.log(math.pi) + gammaln_(1 - xn)
    refl = sin_part * fnp.exp(logmag) * lx.zeta(1 - xn, fnp.ones_like(x))
    refl = fnp.where(trivial, 0.0, refl)
    return fnp.where(neg, fnp.where(x == -np.inf, np.nan, refl), direct)


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function ``sum_k (k + q)^-x`` (the Riemann zeta function when
    ``q`` is None).

    With ``q``: ``functrace.lax.zeta``, defined for ``x > 1`` (``inf`` at ``x == 1``,
    NaN for ``x < 1``, as SciPy and JAX), ``inf`` at ``q = 0, -1, -2, ...`` (as SciPy;
    JAX gives NaN at 0) and 0 at ``q = inf`` (as SciPy). Without ``q`` (JAX raises
    there): every real ``x``, by the functional equation for ``x < -1/4``.
    Differentiable in ``x`` and ``q``.

    >>> round(float(zeta(2.0, 1.0)), 12) == round(math.pi**2 / 6, 12)
    True
    >>> round(float(zeta(-1.0)), 12)  # -1/12
    -0.083333333333
    """
    if q is None:
        (x,) = floats("zeta", x)
        return scalar_result(_riemann_zeta(x))
    x, q = floats("zeta", x, q)
    return scalar_result(_zeta(x, q))


def _zeta(x: Any, q: Any) -> Any:
    ok = (x > 1) & ~is_pole(q) & (q < np.inf)
    val = lx.zeta(safe(ok, x, 2.0), safe(ok, q, 1.0))
    edge = fnp.where(x == 1, np.inf, fnp.full_like(x, np.nan))
    edge = fnp.where((x > 1) & is_pole(q), np.inf, edge)
    edge = fnp.where((x > 1) & (q == np.inf), 0.0, edge)
    return fnp.where(ok, val, edge)


def polygamma_array(n: Any, x: Any) -> Any:
    """``polygamma(n, x)`` for an array (or traced) order ``n``:
    ``(-1)^(n+1) n! zeta(n + 1, x)``, ``digamma(x)`` for ``n == 0``, NaN for orders
    that are not non-negative integers."""
    (x,) = floats("polygamma", x)
    n, x = floats("polygamma", fnp.asarray(n).astype(core.get_aval(x).dtype), x)
    ok = (n >= 0) & (fnp.floor(n) == n)
    ns = safe(ok, n, 1.0)
    sign = 1.0 - 2.0 * fnp.remainder(ns + 1, 2)
    higher = sign * fnp.exp(gammaln_(ns + 1)) * _zeta(ns + 1, x)
    out = fnp.where(n == 0, lx.digamma(x), higher)
    return fnp.where(ok, out, np.nan)
