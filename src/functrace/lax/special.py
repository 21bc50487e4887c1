"""Special functions: erf, erfc, lgamma, digamma, polygamma, igamma, igammac, betainc.

Elementwise primitives like those of ``functrace.lax.elementwise`` (which re-exports
them), in one place because they share their numerics: float64 evaluation and
SciPy's values at poles and outside the domain. ``erf_inv`` is in
``functrace.lax.random_bits``, next to the sampler that uses it.

Each primitive is one block: definition, NumPy impl, abstract eval, JVP, batching
rule and Numba emitter.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.interpreters import numba_rules as _nr
from functrace.interpreters.numba_rules import numba_emitters
from functrace.lax._util import check_dtype_kind, check_same_dtypes, check_same_shapes, register
from functrace.lax.base import (
    _bind1,
    _bind2,
    add,
    binop,
    broadcast_in_dim,
    broadcast_operands,
    elementwise_numpy,
    exp,
    full_like,
    log,
    log1p,
    mul,
    neg,
    select_n,
    sub,
    unop,
)

# ---------------------------------------------------------------------------
# erf
# ---------------------------------------------------------------------------


# erf of float32 (and float16) values: y * P(y*y/8 - 1) in float64, y = x clamped to
# [-4, 4] (beyond, |erf| rounds to 1 in float32). P is a degree-24 Chebyshev fit of
# erf(x)/x in x*x on [0, 16], here as power-series coefficients in u = x*x/8 - 1 (all
# below 0.36 in magnitude); its error is below 5e-14, so the float32 result is the
# correctly rounded erf except at rare near-ties (none on a grid of 400,001 points in
# [0, 4]). Unlike a call of math.erf per element, the polynomial vectorizes: ~30x faster
# in a fused kernel (a transformer's GELU), and NumPy evaluates it on whole arrays.
# Eager and compiled code run the same float64 operations in the same order.
_ERF32_COEFS = (
    0.3535309956434054,
    -0.17657623330131128,
    0.13167511689430855,
    -0.10771044253470187,
    0.0902089941321022,
    -0.07472786555672316,
    0.059886904592619424,
    -0.045765113124641946,
    0.03306063664586566,
    -0.022473546660549328,
    0.014349574571193595,
    -0.008606329413211192,
    0.004853648312713269,
    -0.002577870367622407,
    0.001292351143734413,
    -0.0006137181157338528,
    0.00027602044520590825,
    -0.00011658607812442583,
    4.72476276595194e-05,
    -1.9595463198917127e-05,
    7.358840980089551e-06,
    -1.7998424306924218e-06,
    5.738868107340977e-07,
    -4.850166589418227e-07,
    1.588840046901969e-07,
)


def _erf32(x: Any) -> Any:
    y = np.minimum(np.maximum(x.astype(np.float64), -4.0), 4.0)  # NaN stays NaN
    u = y * y * 0.125 - 1.0
    h = np.full_like(u, _ERF32_COEFS[-1])
    for c in _ERF32_COEFS[-2::-1]:
        h *= u  # in place: the same operations as h = h * u + c
        h += c
    return (y * h).astype(x.dtype)


def _erf_impl(x: Any) -> Any:
    x = np.asarray(x)
    if x.dtype.itemsize <= 4:
        out = _erf32(x)
        return out[()] if out.ndim == 0 else out
    out = np.frompyfunc(math.erf, 1, 1)(x)
    return np.asarray(out, dtype=x.dtype)[()] if np.ndim(x) == 0 else out.astype(x.dtype)


erf_p = unop("erf", _erf_impl, "f", "a real floating-point")
erf = _bind1(erf_p)
ad.defjvp(  # d erf = 2/sqrt(pi) exp(-x^2) dx
    erf_p, lambda g, x: mul(g, mul(full_like(x, 2 / math.sqrt(math.pi)), exp(neg(mul(x, x)))))
)


def _erf_emit(ctx: _nr.EmitContext) -> str:
    if ctx.in_dtypes[0].itemsize > 4:
        return f"math.erf({ctx.args[0]})"
    # _erf32's operations, as one expression (u written out at each use: LLVM shares it)
    a = f"np.float64({ctx.args[0]})"
    y = f"np.minimum(np.maximum({a}, -4.0), 4.0)"
    u = f"({y} * {y} * 0.125 - 1.0)"
    h = repr(_ERF32_COEFS[-1])
    for c in _ERF32_COEFS[-2::-1]:
        h = f"({h} * {u} + {c!r})"
    return f"({y} * {h})"


numba_emitters[erf_p] = _erf_emit


# ---------------------------------------------------------------------------
# Special functions: erfc, lgamma, digamma, polygamma (erf_inv: lax/random_bits.py)
# ---------------------------------------------------------------------------
# The impls compute in float64 with vectorised NumPy (or the ``math`` module per
# element) and cast back. Values at poles and outside the domain follow SciPy, but
# for digamma: ``lgamma`` is +inf at 0, -1, -2, ...; ``digamma`` is NaN at 0, -1,
# -2, ... (JAX's value; SciPy gives -inf at +0 and +inf at -0); ``polygamma(n, .)``
# is +-inf at the non-positive integers; ``erfinv`` is +-inf at +-1 and NaN outside
# [-1, 1].


def _per_element(fn: Callable[[float], float], x: Any) -> Any:
    """``fn`` (a ``math`` function of one float) on every element, in x's dtype."""
    x = np.asarray(x)
    out = np.asarray(np.frompyfunc(fn, 1, 1)(x.astype(np.float64)), dtype=np.float64)
    return out.astype(x.dtype)[()]


def _erfc_impl(x: Any) -> Any:
    return _per_element(math.erfc, x)


erfc_p = unop("erfc", _erfc_impl, "f", "a real floating-point")
erfc = _bind1(erfc_p)
ad.defjvp(  # d erfc = -2/sqrt(pi) exp(-x^2) dx
    erfc_p, lambda g, x: mul(g, mul(full_like(x, -2 / math.sqrt(math.pi)), exp(neg(mul(x, x)))))
)
numba_emitters[erfc_p] = "math.erfc({0})"


def _lgamma_scalar(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # a pole: 0, -1, -2, ...
        return math.inf


def _lgamma_impl(x: Any) -> Any:
    return _per_element(_lgamma_scalar, x)


lgamma_p = unop("lgamma", _lgamma_impl, "f", "a real floating-point")
lgamma = _bind1(lgamma_p)
ad.defjvp(lgamma_p, lambda g, x: mul(g, digamma(x)))  # d log|Gamma| = digamma dx


def _lgamma_emit(ctx: _nr.EmitContext) -> str:
    # +inf at the poles 0, -1, -2, ... (plain Python's math.lgamma raises there)
    (x,) = ctx.args
    return f"(math.inf if ({x} <= 0 and np.floor({x}) == {x}) else math.lgamma({x}))"


numba_emitters[lgamma_p] = _lgamma_emit


def _digamma_f64(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        refl = x < 0.5
        z = np.where(refl, 1.0 - x, x)  # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
        acc = np.zeros_like(z)
        for _ in range(10):  # recurrence psi(z) = psi(z + 1) - 1/z, up to z >= 10
            small = z < 10.0
            acc = acc - np.where(small, 1.0 / z, 0.0)
            z = np.where(small, z + 1.0, z)
        z2 = 1.0 / (z * z)  # asymptotic series in 1/z^2 (Bernoulli numbers)
        series = z2 * np.polyval(_DIGAMMA_SERIES, z2)
        out = np.log(z) - 0.5 / z - series + acc
        out = np.where(refl, out - math.pi / np.tan(math.pi * x), out)
        pole = (x <= 0) & (np.floor(x) == x)
        out = np.where(pole, np.nan, out)  # NaN at 0, -1, -2, ... (as JAX)
    return out


# B_2k / (2k) for k = 7 .. 1 (highest power first, for polyval)
_DIGAMMA_SERIES = [7 / 6 / 14, -691 / 2730 / 12, 5 / 66 / 10, -1 / 30 / 8,
                   1 / 42 / 6, -1 / 30 / 4, 1 / 6 / 2]  # fmt: skip


def _digamma_impl(x: Any) -> Any:
    x = np.asarray(x)
    return _digamma_f64(x.astype(np.float64)).astype(x.dtype)[()]


digamma_p = unop("digamma", _digamma_impl, "f", "a real floating-point")
digamma: Callable[[Any], Any] = _bind1(digamma_p)
ad.defjvp(digamma_p, lambda g, x: mul(g, polygamma(1, x)))  # d digamma = polygamma(1, x) dx


def _no_kernel(ctx: _nr.EmitContext) -> None:
    """Elementwise, but no scalar Numba code: the driver calls the vectorised impl."""
    return None


numba_emitters[digamma_p] = _no_kernel  # the driver calls the vectorised impl

# ---------------------------------------------------------------------------
# The Hurwitz zeta function sum_k (q + k)^-s and its derivatives in s, in float64: the
# one definition behind lax.zeta, lax.polygamma and functrace.scipy's zeta/polygamma.
# ---------------------------------------------------------------------------
# Direct terms until q + N >= max(20, 2 s) (10 for s < 1), then the Euler-Maclaurin
# tail of zeta(s, w): w^(1-s)/(s-1) + w^-s/2 + sum_j B_2j/(2j)! s(s+1)...(s+2j-2)
# w^(-s-2j+1). The m-th derivative in s is that of each term, carried as truncated
# Taylor series in s ("jets": lists of coefficients of eps^0..eps^m, s = s0 + eps).

# B_2j / (2j)! for j = 1 .. 8
_ZETA_EM = [1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
            -691 / 1307674368000, 1 / 74724249600, -3617 / 10670622842880000]  # fmt: skip


def _jet_mul(a: list[Any], b: list[Any]) -> list[Any]:
    return [sum(a[i] * b[k - i] for i in range(1, k + 1)) + a[0] * b[k] for k in range(len(a))]


def _pow_jet(w: np.ndarray, lw: np.ndarray | None, e: Any, n: int) -> list[Any]:
    """The jet of ``w^-(e + eps)``: ``w^-e (-log w)^k / k!`` (``lw = log w``)."""
    base = w ** (-e)
    return [base] + [base * (-lw) ** k / math.factorial(k) for k in range(1, n)]  # type: ignore[operator]


def _zeta_f64(s: Any, q: Any, ds: int = 0, continued: bool = False) -> np.ndarray:
    """``d^ds/ds^ds sum_k (q + k)^-s`` in float64, with JAX's values at the edges: NaN
    for ``s < 1`` (``continued``: the analytic continuation, down to -1) and for a negative
    non-integer ``q`` with a non-integer ``s``, ``inf`` at ``s == 1`` and at the poles
    ``q = 0, -1, -2, ...``."""
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    n = ds + 1
    with np.errstate(all="ignore"):
        s_int = np.floor(s) == s
        q_pole = (q <= 0) & (np.floor(q) == q)
        below = s < (-1.0 if continued else 1.0)
        nan = np.isnan(s) | np.isnan(q) | below | ((q < 0) & ~q_pole & ~s_int)
        special = nan | q_pole | (s == 1) | np.isinf(s) | np.isinf(q)
        ss = np.where(special, 2.0, s)
        w = np.where(special, 20.0, q)
        # The tail's series converges fast once w >= 20 and w >= 2 s; a large s makes
        # the direct terms vanish first (done: the rest is below 1e-18 of the sum). For
        # s < 1 the sum and the tail cancel, more so the larger w: w >= 10 there.
        start = np.where(ss < 1, 10.0, np.maximum(20.0, 2.0 * ss))
        acc = [np.zeros_like(w) for _ in range(n)]
        done = np.zeros(w.shape, bool)
        n_shift = int(max(0.0, math.ceil(float(np.max(start - w, initial=0.0)))))
        for _ in range(n_shift):
            near = (w < start) & ~done
            if not np.any(near):
                break
            term = _pow_jet(w, np.log(w) if n > 1 else None, ss, n)
            term = [np.where(near, t, 0.0) for t in term]
            acc = [a + t for a, t in zip(acc, term)]
            w = np.where(near, w + 1.0, w)
            small = [np.abs(t) <= 1e-18 * np.abs(a) for a, t in zip(acc, term)]
            done = done | (near & np.logical_and.reduce(small))
        lw = np.log(w) if n > 1 else None
        tail = _pow_jet(w, lw, ss - 1.0, n)  # w^(1-s), then divided by s - 1 + eps:
        for k in range(n):
            tail[k] = (tail[k] - (tail[k - 1] if k else 0.0)) / (ss - 1.0)
        tail = [a + 0.5 * b for a, b in zip(tail, _pow_jet(w, lw, ss, n))]
        rising = [ss, np.ones_like(ss)][:n] + [np.zeros_like(ss)] * (n - 2)  # s(s+1)...(s+2j-2)
        for j, c in enumerate(_ZETA_EM, start=1):
            term = _jet_mul([c * r for r in rising], _pow_jet(w, lw, ss + (2 * j - 1), n))
            tail = [t + u for t, u in zip(tail, term)]
            for d in (2 * j - 1, 2 * j):
                rising = _jet_mul(rising, [ss + d, np.ones_like(ss)][:n] + [0.0] * (n - 2))
        out = (acc[ds] + np.where(done, 0.0, tail[ds])) * math.factorial(ds)
        out = np.where(q_pole | (s == 1) | np.isneginf(q), np.inf, out)
        out = np.where(nan | np.isinf(s) | np.isposinf(q), np.nan, out)  # (JAX's values)
    return out


def _polygamma_impl(x: Any, *, n: int) -> Any:
    x = np.asarray(x)
    if n == 0:
        return _digamma_impl(x)
    sign = 1.0 if n % 2 == 1 else -1.0  # (-1)^(n+1) n! zeta(n + 1, x); 0 at x = inf
    x64 = x.astype(np.float64)
    out = sign * math.factorial(n) * np.where(x64 == np.inf, 0.0, _zeta_f64(n + 1.0, x64))
    return out.astype(x.dtype)[()]


def _polygamma_abstract(x: ShapedArray, *, n: int) -> ShapedArray:
    check_dtype_kind("polygamma", x, "f", "a real floating-point")
    return x


polygamma_p = register(Primitive("polygamma"), _polygamma_impl, _polygamma_abstract)
elementwise_numpy[polygamma_p] = _polygamma_impl
batching.defvectorized(polygamma_p)


def polygamma(n: Any, x: Any) -> Any:
    """The ``n``-th derivative of ``digamma`` at ``x``: ``n`` a concrete integer >= 0, or
    a concrete array of orders broadcasting against ``x`` (as JAX's; entries that are
    not non-negative integers give NaN). A traced order is
    ``functrace.scipy.special.polygamma``'s.

    >>> float(polygamma(1, 1.0))  # pi^2 / 6
    1.6449340668482264
    >>> [round(float(v), 6) for v in polygamma(np.array([1.0, 2.0]), np.array([1.5, 2.5]))]
    [0.934802, -0.236204]
    """
    if isinstance(n, core.Tracer):
        raise ValueError(
            f"polygamma: expected a concrete order n, got {n.describe()}; "
            f"functrace.scipy.special.polygamma takes traced orders."
        )
    if np.ndim(n) == 0:
        if not float(n).is_integer() or int(n) < 0:
            raise ValueError(
                f"polygamma: expected a concrete non-negative integer order n, got {n!r}"
            )
        return polygamma_p.bind(x, n=int(n))
    orders = np.asarray(n, dtype=np.float64)
    shape = np.broadcast_shapes(orders.shape, core.get_aval(x).shape)
    xs = core.get_aval(x).shape
    xb = broadcast_in_dim(x, shape, tuple(range(len(shape) - len(xs), len(shape))))
    orders = np.broadcast_to(orders, shape)
    out = full_like(xb, np.nan)
    valid = (orders >= 0) & (orders == np.floor(orders))
    for k in np.unique(orders[valid]):  # one primitive per distinct order
        out = select_n(np.asarray(orders == k), out, polygamma_p.bind(xb, n=int(k)))
    return out


# d polygamma(n, x) = polygamma(n + 1, x) dx
ad.defjvp(polygamma_p, lambda g, x, *, n: mul(g, polygamma(n + 1, x)))
numba_emitters[polygamma_p] = _no_kernel  # the driver calls the vectorised impl


# ---------------------------------------------------------------------------
# igamma, igammac: the regularized incomplete gamma functions P(a, x), Q(a, x)
# ---------------------------------------------------------------------------
# Series for x < a + 1, Lentz's continued fraction otherwise (in float64, to
# convergence); SciPy's values at the edges: NaN for a < 0, x < 0 or NaN operands,
# P(0, x > 0) = 1, P(a, 0) = 0, P(a, inf) = 1. The derivative in x is the gamma
# density; the one in a is igamma_grad_a (lax.special_extra).


def _log_gamma_density_f64(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``-x + a log x - lgamma(a)`` (the log of ``x`` times the gamma density)."""
    lg = np.asarray(np.frompyfunc(_lgamma_scalar, 1, 1)(a), dtype=np.float64)
    return -x + a * np.log(x) - lg


def _igamma_pq_f64(a: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    with np.errstate(all="ignore"):
        ok = (a > 0) & (x > 0) & np.isfinite(x) & np.isfinite(a)
        use_series = ok & (x < a + 1)
        use_cf = ok & ~use_series
        aa = np.where(ok, a, 1.0)
        # series: P = e^{-x} x^a / Gamma(a) * sum_n x^n / (a (a+1) ... (a+n))
        xs = np.where(use_series, x, 0.5)
        term = 1.0 / aa
        total = term.copy()
        for n in range(1, 2000):
            term = term * xs / (aa + n)
            total = total + term
            if np.all(np.abs(term) <= np.abs(total) * 1e-17):
                break
        p_series = total * np.exp(_log_gamma_density_f64(aa, xs))
        # continued fraction: Q = e^{-x} x^a / Gamma(a) * 1 / (x + 1 - a - 1(1-a)/(x + 3 - a - ...))
        xc = np.where(use_cf, x, aa + 1.0)
        tiny = 1e-300
        b = xc + 1.0 - aa
        c = np.full_like(b, 1.0 / tiny)
        d = 1.0 / b
        h = d.copy()
        for i in range(1, 2000):
            an = -i * (i - aa)
            b = b + 2.0
            d = an * d + b
            d = np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            d = 1.0 / d
            delta = d * c
            h = h * delta
            if np.all(np.abs(delta - 1.0) <= 1e-16):
                break
        q_cf = h * np.exp(_log_gamma_density_f64(aa, xc))
        p = np.where(use_series, p_series, 1.0 - q_cf)
        q = np.where(use_series, 1.0 - p_series, q_cf)
        # edges (SciPy's values)
        edge_p = np.where((a == 0) & (x > 0), 1.0, np.nan)
        edge_p = np.where((a > 0) & (x == 0), 0.0, edge_p)
        edge_p = np.where((a > 0) & (x == np.inf), 1.0, edge_p)
        p = np.where(ok, p, edge_p)
        q = np.where(ok, q, 1.0 - edge_p)
    return p, q


def _igamma_impl(a: Any, x: Any) -> Any:
    dt = np.asarray(x).dtype
    return _igamma_pq_f64(a, x)[0].astype(dt)[()]


def _igammac_impl(a: Any, x: Any) -> Any:
    dt = np.asarray(x).dtype
    return _igamma_pq_f64(a, x)[1].astype(dt)[()]


def _igamma_density(x: Any, a: Any) -> Any:
    # x^(a-1) e^-x / Gamma(a), the derivative of P(a, x) in x
    return exp(sub(sub(mul(sub(a, full_like(a, 1)), log(x)), x), lgamma(a)))


igamma_p = binop("igamma", _igamma_impl, "f", "a real floating-point")
igamma = _bind2(igamma_p)
# the derivative rules of igamma and igammac are registered in lax.special_extra,
# with igamma_grad_a (their derivative in a)
numba_emitters[igamma_p] = _no_kernel  # the driver calls the vectorised impl

igammac_p = binop("igammac", _igammac_impl, "f", "a real floating-point")
igammac = _bind2(igammac_p)
numba_emitters[igammac_p] = _no_kernel  # the driver calls the vectorised impl


# ---------------------------------------------------------------------------
# betainc: the regularized incomplete beta function I_x(a, b)
# ---------------------------------------------------------------------------
# Lentz's continued fraction in float64 (on x or, by I_x(a, b) = 1 - I_{1-x}(b, a), on
# 1 - x, whichever converges faster); NaN for a < 0, b < 0, x outside [0, 1] or NaN.
# The derivative in x is the beta density; in a and b it is not implemented.


def _betainc_cf(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = np.where(np.abs(d) < tiny, tiny, d)
    d = 1.0 / d
    h = d.copy()
    for m in range(1, 3000):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                    -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):  # fmt: skip
            d = 1.0 + num * d
            d = np.where(np.abs(d) < tiny, tiny, d)
            c = 1.0 + num / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            d = 1.0 / d
            delta = d * c
            h = h * delta
        if np.all(np.abs(delta - 1.0) <= 1e-16):
            break
    return h


def _betainc_f64(a: Any, b: Any, x: Any) -> np.ndarray:
    a, b, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
    with np.errstate(all="ignore"):
        ok = (a > 0) & (b > 0) & (x > 0) & (x < 1) & np.isfinite(a) & np.isfinite(b)
        aa, bb = np.where(ok, a, 1.0), np.where(ok, b, 1.0)
        xx = np.where(ok, x, 0.5)
        swap = xx > (aa + 1.0) / (aa + bb + 2.0)
        a1, b1 = np.where(swap, bb, aa), np.where(swap, aa, bb)
        x1 = np.where(swap, 1.0 - xx, xx)
        lgab = np.asarray(np.frompyfunc(_lgamma_scalar, 1, 1)(a1 + b1), dtype=np.float64)
        lga = np.asarray(np.frompyfunc(_lgamma_scalar, 1, 1)(a1), dtype=np.float64)
        lgb = np.asarray(np.frompyfunc(_lgamma_scalar, 1, 1)(b1), dtype=np.float64)
        front = np.exp(a1 * np.log(x1) + b1 * np.log1p(-x1) + lgab - lga - lgb) / a1
        val = front * _betainc_cf(a1, b1, x1)
        out = np.where(swap, 1.0 - val, val)
        # the edges (JAX's and SciPy's values): I_0 = 0, I_1 = 1 for a, b >= 0 not both
        # 0; inside, a == 0 puts all the mass at 0 (I = 1) and b == 0 all of it at 1
        params = (a >= 0) & (b >= 0) & ((a > 0) | (b > 0))
        edge = np.where(params & (x == 0), 0.0, np.nan)
        edge = np.where(params & (x == 1), 1.0, edge)
        inside = params & (x > 0) & (x < 1)
        edge = np.where(inside & (a == 0), 1.0, edge)
        edge = np.where(inside & (b == 0), 0.0, edge)
        out = np.where(ok, out, edge)
    return out


def _betainc_impl(a: Any, b: Any, x: Any) -> Any:
    dt = np.asarray(x).dtype
    return _betainc_f64(a, b, x).astype(dt)[()]


def _betainc_abstract(a: ShapedArray, b: ShapedArray, x: ShapedArray) -> ShapedArray:
    check_same_shapes("betainc", a, b, x)
    check_same_dtypes("betainc", a, b, x)
    check_dtype_kind("betainc", x, "f", "a real floating-point")
    return ShapedArray(x.shape, x.dtype, a.weak_type and b.weak_type and x.weak_type)


betainc_p = register(Primitive("betainc"), _betainc_impl, _betainc_abstract)
elementwise_numpy[betainc_p] = _betainc_impl
batching.defbroadcasting(betainc_p)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function ``I_x(a, b)`` (0-d operands and axes of
    size 1 broadcast, as in JAX's lax)."""
    return betainc_p.bind(*broadcast_operands(a, b, x))


def _betainc_density(g: Any, a: Any, b: Any, x: Any) -> Any:
    # x^(a-1) (1-x)^(b-1) / B(a, b), the derivative of I_x(a, b) in x
    one = full_like(x, 1)
    logd = add(mul(sub(a, one), log(x)), mul(sub(b, one), log1p(neg(x))))
    logd = sub(logd, sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b))))
    return mul(g, exp(logd))


def _betainc_no_grad(which: str) -> Callable[..., Any]:
    def rule(g: Any, a: Any, b: Any, x: Any) -> Any:
        raise NotImplementedError(
            f"betainc: the derivative with respect to the shape parameter {which} is not "
            f"implemented (only the derivative in x); hold it constant "
            f"(functrace.lax.stop_gradient) or differentiate with respect to x only."
        )

    return rule


ad.defjvp(betainc_p, _betainc_no_grad("a"), _betainc_no_grad("b"), _betainc_density)
numba_emitters[betainc_p] = _no_kernel  # the driver calls the vectorised impl


__all__ = [
    "betainc",
    "betainc_p",
    "digamma",
    "digamma_p",
    "erf",
    "erf_p",
    "erfc",
    "erfc_p",
    "igamma",
    "igamma_p",
    "igammac",
    "igammac_p",
    "lgamma",
    "lgamma_p",
    "polygamma",
    "polygamma_p",
]
