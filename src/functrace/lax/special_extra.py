"""More special functions of ``jax.lax``: the scaled modified Bessel functions
``bessel_i0e``/``bessel_i1e``, the Hurwitz zeta function ``zeta``, the derivative of the
regularized incomplete gamma function in its shape parameter ``igamma_grad_a``, and
``random_gamma_grad``, the derivative of a gamma sample in its shape.

Elementwise primitives like those of ``functrace.lax.special`` (whose float64 helpers
they reuse): evaluated in float64 and cast back, the driver of ``jit`` calling the
vectorised impls. Decisions (JAX's values unless noted):

* ``zeta(s, q)`` is NaN for ``s < 1`` and for a negative non-integer ``q`` with a
  non-integer ``s``, ``inf`` at ``s == 1`` and at the poles ``q = 0, -1, -2, ...``.
  Its derivative in ``q`` is ``-s zeta(s + 1, q)`` (JAX has none); in ``s`` it is an
  error.
* ``igamma_grad_a`` and ``random_gamma_grad`` are differentiable in ``x`` (closed
  forms; JAX has no derivative for either); in ``a`` it is an error. Both are NaN
  outside ``a > 0, x >= 0`` finite, and 0 at ``x = 0``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from functrace.interpreters import ad
from functrace.interpreters.numba_rules import numba_emitters
from functrace.lax.base import (
    add,
    binop,
    div,
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
    _ZETA_EM,
    _digamma_f64,
    _log_gamma_density_f64,
    _no_kernel,
    digamma,
    lgamma,
)

# ---------------------------------------------------------------------------
# bessel_i0e, bessel_i1e
# ---------------------------------------------------------------------------
# e^-|x| I_n(x): the power series sum (x^2/4)^k / (k! (k + n)!) (x/2)^n (positive terms,
# no cancellation) for |x| <= 25, the asymptotic expansion
# 1/sqrt(2 pi x) sum_k (-1)^k prod_j (4 n^2 - (2j - 1)^2) / (k! (8x)^k) beyond (its
# smallest term there is below e^-50, far below an ulp).

_BESSEL_SPLIT = 25.0


def _bessel_ie_f64(x: np.ndarray, order: int) -> np.ndarray:
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        small = ax <= _BESSEL_SPLIT
        xs = np.where(small, ax, 0.0)
        q = xs * xs / 4.0
        term = np.ones_like(xs) if order == 0 else xs / 2.0
        total = term.copy()
        for k in range(1, 120):
            term = term * q / (k * (k + order))
            total = total + term
            if np.all(term <= total * 1e-17):
                break
        series = total * np.exp(-xs)
        xl = np.where(small, 2.0 * _BESSEL_SPLIT, ax)
        mu = 4.0 * order * order
        term = np.ones_like(xl)
        total = term.copy()
        for k in range(1, 40):
            term = term * -(mu - (2 * k - 1) ** 2) / (8.0 * k * xl)
            total = total + term
        asym = total / np.sqrt(2.0 * math.pi * xl)
        out = np.where(small, series, asym)
        if order == 1:
            out = np.copysign(out, x)
    return out


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
# zeta: the Hurwitz zeta function sum_k (q + k)^-s
# ---------------------------------------------------------------------------
# Direct terms until q + N >= 20, then the Euler-Maclaurin tail of zeta(s, w):
# w^(1-s)/(s-1) + w^-s/2 + sum_j B_2j/(2j)! s(s+1)...(s+2j-2) w^(-s-2j+1) (the
# coefficients of functrace.lax.special's polygamma, for any real s > 1).


def _zeta_f64(s: Any, q: Any) -> np.ndarray:
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    with np.errstate(all="ignore"):
        s_int = np.floor(s) == s
        q_pole = (q <= 0) & (np.floor(q) == q)
        nan = np.isnan(s) | np.isnan(q) | (s < 1) | ((q < 0) & ~q_pole & ~s_int)
        special = nan | q_pole | (s == 1) | np.isinf(s) | np.isinf(q)
        ss = np.where(special, 2.0, s)
        w = np.where(special, 20.0, q)
        # The tail's series converges fast once w >= 20 and w >= 2 s; a large s makes the
        # direct terms vanish first (done: the rest is below 1e-18 of the sum).
        start = np.maximum(20.0, 2.0 * ss)
        acc = np.zeros_like(w)
        done = np.zeros(w.shape, bool)
        n_shift = int(max(0.0, math.ceil(float(np.max(start - w, initial=0.0)))))
        for _ in range(n_shift):
            near = (w < start) & ~done
            if not np.any(near):
                break
            term = np.where(near, w ** (-ss), 0.0)
            acc = acc + term
            w = np.where(near, w + 1.0, w)
            done = done | (near & (np.abs(term) <= 1e-18 * np.abs(acc)))
        tail = w ** (1.0 - ss) / (ss - 1.0) + 0.5 * w ** (-ss)
        rising = ss.copy()  # s (s + 1) ... (s + 2j - 2)
        for j, c in enumerate(_ZETA_EM, start=1):
            tail = tail + c * rising * w ** (-ss - 2 * j + 1)
            rising = rising * (ss + 2 * j - 1) * (ss + 2 * j)
        out = acc + np.where(done, 0.0, tail)
        out = np.where(q_pole | (s == 1) | np.isneginf(q), np.inf, out)
        out = np.where(nan | np.isinf(s) | np.isposinf(q), np.nan, out)  # (JAX's values)
    return out


def _zeta_impl(x: Any, q: Any) -> Any:
    dt = np.asarray(x).dtype
    return _zeta_f64(x, q).astype(dt)[()]


zeta_p = binop("zeta", _zeta_impl, "f", "a real floating-point")
zeta = checked_bind(
    zeta_p,
    """Elementwise Hurwitz zeta function ``zeta(x, q) = sum_k (q + k)^-x``
(``zeta(x, 1)`` is Riemann's); ``x`` and ``q`` of one shape and float dtype.
Differentiable in ``q``.

>>> round(float(zeta(2.0, 1.0)), 10)  # pi^2 / 6
1.6449340668
""",
)


def _zeta_jvp_x(g: Any, x: Any, q: Any) -> Any:
    raise NotImplementedError(
        "zeta: the derivative with respect to the exponent x is not implemented (only the "
        "one in q); hold x constant (functrace.lax.stop_gradient)."
    )


# d zeta(s, q) / dq = -s zeta(s + 1, q)
ad.defjvp(
    zeta_p, _zeta_jvp_x, lambda g, x, q: mul(g, neg(mul(x, zeta(add(x, full_like(x, 1)), q))))
)
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
