"""More special functions of ``jax.lax``: the scaled modified Bessel functions
``bessel_i0e``/``bessel_i1e``, the Hurwitz zeta function ``zeta``, the derivative of the
regularized incomplete gamma function in its shape parameter ``igamma_grad_a``, and
``random_gamma_grad``, the derivative of a gamma sample in its shape.

Elementwise primitives like those of ``functrace.lax.special`` (whose float64 helpers
they reuse): evaluated in float64 and cast back, the driver of ``jit`` calling the
vectorised impls. Decisions (JAX's values unless noted):

* ``zeta(s, q)`` is NaN for ``s < 1`` and for a negative non-integer ``q`` with a
  non-integer ``s``, ``inf`` at ``s == 1`` and at the poles ``q = 0, -1, -2, ...``.
  It is differentiable in ``q`` (``-s zeta(s + 1, q)``) and in ``s`` (JAX has neither
  derivative). ``zeta_continued`` (not in ``jax.lax``) is its analytic continuation
  to ``s < 1``.
* ``igamma_grad_a`` and ``random_gamma_grad`` are differentiable in ``x`` (closed
  forms; JAX has no derivative for either); in ``a`` it is an error. Both are NaN
  outside ``a > 0, x >= 0`` finite, and 0 at ``x = 0``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive
from functrace.interpreters import ad, batching
from functrace.interpreters.numba_rules import numba_emitters
from functrace.lax._util import register
from functrace.lax.base import (
    _binop_abstract,
    add,
    binop,
    div,
    elementwise_numpy,
    exp,
    full_like,
    log,
    mul,
    neg,
    select_n,
    sub,
    unop,
)
from functrace.lax.elementwise import eq, sign
from functrace.lax.extras import checked_bind
from functrace.lax.special import (
    _digamma_f64,
    _igamma_density,
    _log_gamma_density_f64,
    _no_kernel,
    _zeta_f64,
    digamma,
    igamma_p,
    igammac_p,
    lgamma,
)

# ---------------------------------------------------------------------------
# bessel_i0e, bessel_i1e
# ---------------------------------------------------------------------------
# e^-|x| I_n(x) from Chebyshev expansions: of e^-a I0(a) and e^-a I1(a) / a on
# a = |x| <= 8 (in t = a / 4 - 1), of sqrt(a) e^-a I_n(a) beyond (in t = 16 / a - 1).
# Coefficients c_k of sum_k c_k T_k(t) (c_0 not halved), computed for functrace by
# interpolation at 96 Chebyshev nodes in 40-digit arithmetic and cut where they fall
# below 2e-18 of the largest: about one unit in the last place of a float64.

# exp(-a) I0(a), a in [0, 8], t = a / 4 - 1
_I0E_SMALL = (
    0.33839763720473803, -0.3046826723431984, 0.17162090152220877, -0.09490109704804764,
    0.04930528423967071, -0.02373741480589947, 0.010546460394594998, -0.004324309995050576,
    0.0016394756169413357, -0.0005763755745385824, 0.00018850288509584165,
    -5.754195010082104e-05, 1.6448448070728896e-05, -4.4167383584587505e-06,
    1.1173875391201037e-06, -2.670793853940612e-07, 6.046995022541919e-08,
    -1.300025009986248e-08, 2.6598237246823866e-09, -5.189795601635263e-10,
    9.675809035373237e-11, -1.726826291441556e-11, 2.95505266312964e-12, -4.856446783111929e-13,
    7.676185498604936e-14, -1.1685332877993451e-14, 1.715391285555133e-15,
    -2.431279846547955e-16, 3.3307945188222384e-17, -4.4153416464793395e-18,
)  # fmt: skip

# sqrt(a) exp(-a) I0(a), a >= 8, t = 16 / a - 1
_I0E_LARGE = (
    0.4022452055070544, 0.0033691164782556943, 6.889758346916825e-05, 2.8913705208347567e-06,
    2.0489185894690638e-07, 2.266668990498178e-08, 3.3962320257083865e-09, 4.94060238822497e-10,
    1.1889147107846439e-11, -3.1499165279632416e-11, -1.3215811840447713e-11,
    -1.7941785315068062e-12, 7.180124451383666e-13, 3.8527783827421426e-13,
    1.54008621752141e-14, -4.150569347287222e-14, -9.554846698828307e-15,
    3.8116806693526224e-15, 1.7725601330565263e-15, -3.425485619677219e-16,
    -2.8276239805165836e-16, 3.461222867697461e-17, 4.46562142029676e-17,
    -4.830504485944182e-18, -7.233180487874754e-18, 9.921475412173699e-19,
    1.193650890845982e-18,
)  # fmt: skip

# exp(-a) I1(a) / a, a in [0, 8], t = a / 4 - 1
_I1E_SMALL = (
    0.12629359322181682, -0.17641651835783406, 0.1026436586898471, -0.05294598120809499,
    0.024726449030626516, -0.010564084894626197, 0.004156422944312888, -0.0015135724506312532,
    0.0005122859561685758, -0.00016176081582589674, 4.781565107550054e-05,
    -1.3273163656039436e-05, 3.4702513081376785e-06, -8.568720264695455e-07,
    2.0032947535521353e-07, -4.445059128796328e-08, 9.381537386495773e-09,
    -1.8872497517228294e-09, 3.625590281552117e-10, -6.663489723502027e-11,
    1.1736186298890901e-11, -1.9839743977649436e-12, 3.223793365945575e-13,
    -5.042185504727912e-14, 7.600684294735408e-15, -1.1055969477353862e-15,
    1.5536319577362005e-16, -2.111421214358166e-17, 2.7779141127610464e-18,
    -3.541581772542136e-19,
)  # fmt: skip

# sqrt(a) exp(-a) I1(a), a >= 8, t = 16 / a - 1
_I1E_LARGE = (
    0.38928811750914005, -0.009761097491361469, -0.00011058893876262371, -3.882564808877691e-06,
    -2.512236237870209e-07, -2.6314688468895196e-08, -3.835380385964237e-09,
    -5.589743462196584e-10, -1.8974958123505413e-11, 3.2526035830154884e-11,
    1.4125807436613782e-11, 2.0356285441470896e-12, -7.198551776245908e-13,
    -4.0835511110921974e-13, -2.1015418427726643e-14, 4.272440016711951e-14,
    1.0420276984128802e-14, -3.8144030724370075e-15, -1.8803547755107825e-15,
    3.3082023109209285e-16, 2.96262899764595e-16, -3.209525921993424e-17,
    -4.6503053684893586e-17, 4.414348323071708e-18, 7.517296310842105e-18,
    -9.314178867326884e-19, -1.242193275194891e-18,
)  # fmt: skip


def _cheb_f64(coefs: tuple[float, ...], t: np.ndarray) -> np.ndarray:
    """``sum_k coefs[k] T_k(t)`` by Clenshaw's recurrence (``t`` in ``[-1, 1]``)."""
    b1, b2 = np.zeros_like(t), np.zeros_like(t)
    t2 = t + t
    for c in coefs[:0:-1]:
        b1, b2 = t2 * b1 - b2 + c, b1
    return t * b1 - b2 + coefs[0]


def _bessel_ie_f64(x: np.ndarray, order: int) -> np.ndarray:
    small_t, large_t = (_I0E_SMALL, _I0E_LARGE) if order == 0 else (_I1E_SMALL, _I1E_LARGE)
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        small = ax <= 8.0
        lo = _cheb_f64(small_t, np.where(small, ax, 0.0) * 0.25 - 1.0)
        al = np.where(small, 8.0, ax)
        hi = _cheb_f64(large_t, 16.0 / al - 1.0) / np.sqrt(al)
        if order == 1:
            lo, hi = x * lo, np.copysign(hi, x)
        return np.where(small, lo, hi)


def _bessel_ie_impl(order: int) -> Any:
    def impl(x: Any) -> Any:
        a = np.asarray(x)
        return _bessel_ie_f64(a.astype(np.float64), order).astype(a.dtype)[()]

    impl.__name__ = f"_bessel_i{order}e_impl"
    return impl


bessel_i0e_p = unop("bessel_i0e", _bessel_ie_impl(0), "f", "a real floating-point")
bessel_i0e = checked_bind(
    bessel_i0e_p,
    """Elementwise exponentially scaled modified Bessel function of
order 0, ``exp(-|x|) I0(x)``.

>>> round(float(bessel_i0e(1.0)), 8)
0.46575961
""",
)
bessel_i1e_p = unop("bessel_i1e", _bessel_ie_impl(1), "f", "a real floating-point")
bessel_i1e = checked_bind(
    bessel_i1e_p,
    """Elementwise exponentially scaled modified Bessel function of
order 1, ``exp(-|x|) I1(x)`` (odd in ``x``).

>>> round(float(bessel_i1e(1.0)), 8)
0.20791042
""",
)
# d i0e = i1e - sign(x) i0e ; NOTE: 0 at x = 0 (sign(0) = 0), where |x| has its kink.
ad.defjvp2(bessel_i0e_p, lambda g, ans, x: mul(g, sub(bessel_i1e(x), mul(sign(x), ans))))


def _bessel_i1e_jvp(g: Any, ans: Any, x: Any) -> Any:
    # d i1e = i0e - i1e (sign(x) + 1/x); 1/2 at x = 0 (the limit)
    zero = eq(x, full_like(x, 0))
    safe = select_n(zero, x, full_like(x, 1))
    d = sub(bessel_i0e(x), mul(ans, add(sign(x), div(full_like(x, 1), safe))))
    return mul(g, select_n(zero, d, full_like(x, 0.5)))


ad.defjvp2(bessel_i1e_p, _bessel_i1e_jvp)
numba_emitters[bessel_i0e_p] = _no_kernel
numba_emitters[bessel_i1e_p] = _no_kernel

# ---------------------------------------------------------------------------
# zeta: the Hurwitz zeta function sum_k (q + k)^-s (functrace.lax.special's _zeta_f64)
# ---------------------------------------------------------------------------
# Two optional params, absent from the equations of lax.zeta itself: ds, the order of
# the derivative in s (bound by the derivative rules), and continued=True, the analytic
# continuation to s < 1 (zeta_continued, for functrace.scipy's Riemann zeta).


def _zeta_impl(x: Any, q: Any, ds: int = 0, continued: bool = False) -> Any:
    dt = np.asarray(x).dtype
    return _zeta_f64(x, q, ds, continued).astype(dt)[()]


_zeta_abstract = _binop_abstract("zeta", "f", "a real floating-point")
zeta_p = register(Primitive("zeta"), _zeta_impl, lambda x, q, **params: _zeta_abstract(x, q))
elementwise_numpy[zeta_p] = _zeta_impl
batching.defbroadcasting(zeta_p)


def _zeta_bind(x: Any, q: Any, ds: int = 0, continued: bool = False) -> Any:
    params: dict[str, Any] = {"ds": ds} if ds else {}
    if continued:
        params["continued"] = True
    return zeta_p.bind(x, q, **params)


zeta = checked_bind(
    zeta_p,
    """Elementwise Hurwitz zeta function ``zeta(x, q) = sum_k (q + k)^-x``
(``zeta(x, 1)`` is Riemann's); ``x`` and ``q`` of one shape and float dtype.
Differentiable in ``x`` and ``q``, to any order.

>>> round(float(zeta(2.0, 1.0)), 10)  # pi^2 / 6
1.6449340668
""",
)


def zeta_continued(x: Any, q: Any) -> Any:
    """``zeta(x, q)`` continued analytically to ``x < 1`` (down to ``x = -1``; NaN
    below), where ``zeta`` is NaN as JAX's. Not part of ``jax.lax``.

    >>> round(float(zeta_continued(0.0, 1.0)), 12)  # Riemann's zeta(0)
    -0.5
    """
    _zeta_abstract(core.get_aval(x), core.get_aval(q))
    return _zeta_bind(x, q, continued=True)


# With D_m = d^m zeta / ds^m = sum_k (-log(q + k))^m (q + k)^-s:
# d D_m / ds = D_(m+1) ; d D_m(s, q) / dq = -s D_m(s + 1, q) - m D_(m-1)(s + 1, q)
def _zeta_jvp_x(g: Any, x: Any, q: Any, ds: int = 0, continued: bool = False) -> Any:
    return mul(g, _zeta_bind(x, q, ds + 1, continued))


def _zeta_jvp_q(g: Any, x: Any, q: Any, ds: int = 0, continued: bool = False) -> Any:
    x1 = add(x, full_like(x, 1))
    d = neg(mul(x, _zeta_bind(x1, q, ds, continued)))
    if ds:
        d = sub(d, mul(full_like(x, ds), _zeta_bind(x1, q, ds - 1, continued)))
    return mul(g, d)


ad.defjvp(zeta_p, _zeta_jvp_x, _zeta_jvp_q)
numba_emitters[zeta_p] = _no_kernel

# ---------------------------------------------------------------------------
# igamma_grad_a, random_gamma_grad
# ---------------------------------------------------------------------------
# With D = e^-x x^a / Gamma(a) (x times the gamma density), P(a, x) = D S for the series
# S = sum_n x^n / (a (a+1) ... (a+n)) (x < a + 1) and Q = 1 - P = D F for Lentz's
# continued fraction F (otherwise), as in functrace.lax.special's igamma. Their
# derivatives in a are carried along the same loops (forward mode by hand):
# dP/da = D R, R = (log x - digamma(a)) S + dS/da, or R = -((log x - digamma(a)) F + dF/da).
# random_gamma_grad = -(dP/da) / density = -x R: D cancels, no underflow in the tails.


def _igamma_da_parts(a: Any, x: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ok, D, R)``: where the operands are in the domain, and the two factors."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    with np.errstate(all="ignore"):
        ok = (a > 0) & (x > 0) & np.isfinite(x) & np.isfinite(a)
        aa = np.where(ok, a, 1.0)
        use_series = ok & (x < aa + 1)
        log_x_psi = np.log(np.where(ok, x, 1.0)) - _digamma_f64(aa)
        # series: t_n = x^n / (a ... (a+n)), dt_n/da = -t_n h_n, h_n = sum_j<=n 1/(a+j)
        xs = np.where(use_series, x, 0.5)
        term = 1.0 / aa
        h = 1.0 / aa
        total, dtotal = term.copy(), -term * h
        for n in range(1, 2000):
            term = term * xs / (aa + n)
            h = h + 1.0 / (aa + n)
            total = total + term
            dtotal = dtotal - term * h
            if np.all(np.abs(term * h) <= np.abs(dtotal) * 1e-17):
                break
        r_series = log_x_psi * total + dtotal
        # continued fraction (modified Lentz) with the derivative of each quantity in a:
        # a_i = -i (i - a) (da_i = i), b_i = x + 2i + 1 - a (db_i = -1)
        xc = np.where(use_series | ~ok, aa + 1.0, x)
        tiny = 1e-300
        b = xc + 1.0 - aa
        c = np.full_like(b, 1.0 / tiny)
        dc = np.zeros_like(b)
        d = 1.0 / b
        dd = d * d  # d(1/b)/da = -db / b^2 = 1 / b^2
        f, df = d.copy(), dd.copy()
        for i in range(1, 2000):
            an, dan = -i * (i - aa), float(i)
            b = b + 2.0
            dnew = an * d + b
            ddnew = dan * d + an * dd - 1.0
            dnew = np.where(np.abs(dnew) < tiny, tiny, dnew)
            cnew = b + an / c
            dcnew = -1.0 + dan / c - an * dc / (c * c)
            cnew = np.where(np.abs(cnew) < tiny, tiny, cnew)
            d, dd = 1.0 / dnew, -ddnew / (dnew * dnew)
            c, dc = cnew, dcnew
            delta, ddelta = d * c, dd * c + d * dc
            f, df = f * delta, df * delta + f * ddelta
            if np.all(np.abs(delta - 1.0) <= 1e-16):
                break
        r_cf = -(log_x_psi * f + df)
        r = np.where(use_series, r_series, r_cf)
        dens = np.exp(_log_gamma_density_f64(aa, np.where(ok, x, 1.0)))
    return ok, dens, r


def _igamma_grad_a_impl(a: Any, x: Any) -> Any:
    dt = np.asarray(x).dtype
    ok, dens, r = _igamma_da_parts(a, x)
    a64, x64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    edge = np.where((a64 > 0) & np.isfinite(a64) & (x64 == 0), 0.0, np.nan)
    return np.where(ok, dens * r, edge).astype(dt)[()]


def _random_gamma_grad_impl(a: Any, x: Any) -> Any:
    dt = np.asarray(x).dtype
    ok, _, r = _igamma_da_parts(a, x)
    a64, x64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    edge = np.where((a64 > 0) & np.isfinite(a64) & (x64 == 0), 0.0, np.nan)
    return np.where(ok, -x64 * r, edge).astype(dt)[()]


def _no_grad_a(name: str) -> Any:
    def rule(g: Any, a: Any, x: Any) -> Any:
        raise NotImplementedError(
            f"{name}: the derivative with respect to the shape parameter a is not "
            f"implemented (only the one in x); hold a constant (functrace.lax.stop_gradient)."
        )

    return rule


def _log_x_minus_digamma(a: Any, x: Any) -> Any:
    return sub(log(x), digamma(a))


igamma_grad_a_p = binop("igamma_grad_a", _igamma_grad_a_impl, "f", "a real floating-point")
igamma_grad_a = checked_bind(
    igamma_grad_a_p,
    """Elementwise derivative of the regularized lower incomplete
gamma function ``igamma(a, x)`` in ``a``; ``a`` and ``x`` of one shape and float dtype.
Differentiable in ``x``.

>>> round(float(igamma_grad_a(2.0, 1.0)), 8)
-0.27619605
""",
)
# d/dx dP/da = d/da (x^(a-1) e^-x / Gamma(a)) = density (log x - digamma(a))
ad.defjvp(
    igamma_grad_a_p,
    _no_grad_a("igamma_grad_a"),
    lambda g, a, x: mul(
        g,
        mul(
            exp(sub(sub(mul(sub(a, full_like(a, 1)), log(x)), x), lgamma(a))),
            _log_x_minus_digamma(a, x),
        ),
    ),
)
numba_emitters[igamma_grad_a_p] = _no_kernel

# igamma and igammac (lax.special) in both arguments: their derivative in a is
# igamma_grad_a, defined here, so their rules are registered here
ad.defjvp(
    igamma_p,
    lambda g, a, x: mul(g, igamma_grad_a(a, x)),
    lambda g, a, x: mul(g, _igamma_density(x, a)),
)
ad.defjvp(
    igammac_p,
    lambda g, a, x: neg(mul(g, igamma_grad_a(a, x))),
    lambda g, a, x: neg(mul(g, _igamma_density(x, a))),
)

random_gamma_grad_p = binop(
    "random_gamma_grad", _random_gamma_grad_impl, "f", "a real floating-point"
)
random_gamma_grad = checked_bind(
    random_gamma_grad_p,
    """Elementwise derivative of a sample ``x`` of Gamma(a, 1) in
its shape ``a`` (implicit reparameterization: ``-(d igamma / da) / (d igamma / dx)``).
Differentiable in ``x``.

>>> round(float(random_gamma_grad(2.0, 1.0)), 8)
0.75077869
""",
)


def _random_gamma_grad_jvp_x(g: Any, ans: Any, a: Any, x: Any) -> Any:
    # r = -P_a / p: dr/dx = -(log x - digamma(a)) - r ((a - 1)/x - 1)
    dlogp = sub(div(sub(a, full_like(a, 1)), x), full_like(x, 1))
    return mul(g, neg(add(_log_x_minus_digamma(a, x), mul(ans, dlogp))))


def _random_gamma_grad_jvp_a(g: Any, ans: Any, a: Any, x: Any) -> Any:
    return _no_grad_a("random_gamma_grad")(g, a, x)


ad.defjvp2(random_gamma_grad_p, _random_gamma_grad_jvp_a, _random_gamma_grad_jvp_x)
numba_emitters[random_gamma_grad_p] = _no_kernel

__all__ = [
    "bessel_i0e",
    "bessel_i0e_p",
    "bessel_i1e",
    "bessel_i1e_p",
    "igamma_grad_a",
    "igamma_grad_a_p",
    "random_gamma_grad",
    "random_gamma_grad_p",
    "zeta",
    "zeta_p",
]
