"""functrace.scipy.special: SciPy's special functions, traceable (as ``jax.scipy.special``).

The gamma family, zeta, the Bessel, integral and hypergeometric functions live in
``_special_more``, ``_special_bessel``, ``_special_integrals`` and ``_special_hyper``
and are re-exported here (``wofz``, the Faddeeva function, with the integrals;
``sph_harm_y`` from ``_special_harmonics``). Not provided: JAX's deprecated
``lpmn``/``lpmn_values``.

Inputs are promoted as in SciPy (integers to float64; float32 stays float32).
Plain NumPy inputs give NumPy results; tracers give tracers, so every function
here differentiates, batches and jits. Derivatives: ``gammaln' = digamma``,
``digamma' = polygamma(1, .)``, ``polygamma(n, .)' = polygamma(n + 1, .)``;
``xlogy``/``xlog1py`` are 0 where ``x == 0`` (also for ``y = 0``), with the
derivative in ``x`` there ``log(y)`` (0 where ``y <= 0``).

>>> import functrace as ft
>>> import functrace.scipy.special as fsp
>>> round(float(fsp.gammaln(5.0)), 12)  # log(4!)
3.178053830348
>>> round(float(ft.grad(fsp.gammaln)(1.0)), 12)  # digamma(1) = -Euler's gamma
-0.577215664902
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core
from functrace import lax as lx
from functrace.custom_derivatives import custom_jvp
from functrace.scipy._special_bessel import bessel_jn, i0, i0e, i1, i1e
from functrace.scipy._special_harmonics import sph_harm_y
from functrace.scipy._special_hyper import hyp1f1, hyp2f1
from functrace.scipy._special_integrals import (
    dawsn,
    erfcx,
    exp1,
    expi,
    expn,
    fresnel,
    owens_t,
    sici,
    spence,
    wofz,
)
from functrace.scipy._special_more import (
    bernoulli,
    beta,
    boxcox,
    boxcox1p,
    comb,
    factorial,
    gamma,
    gammasgn,
    kl_div,
    loggamma,
    multigammaln,
    poch,
    polygamma_array,
    rel_entr,
    zeta,
)
from functrace.scipy._util import _dtype, floats, scalar_result

__all__ = [
    "bernoulli",
    "bessel_jn",
    "beta",
    "betainc",
    "betaln",
    "boxcox",
    "boxcox1p",
    "comb",
    "dawsn",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp1",
    "expi",
    "expit",
    "expn",
    "factorial",
    "fresnel",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gammasgn",
    "hyp1f1",
    "hyp2f1",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "kl_div",
    "log_ndtr",
    "log_softmax",
    "loggamma",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "owens_t",
    "poch",
    "polygamma",
    "rel_entr",
    "sici",
    "softmax",
    "spence",
    "wofz",
    "sph_harm_y",
    "xlog1py",
    "xlogy",
    "zeta",
]


def _unary(fname: str, prim: Any, x: Any) -> Any:
    (x,) = floats(fname, x)
    return scalar_result(prim(x))


def erf(x: Any) -> Any:
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``.

    >>> round(float(erf(1.0)), 6)
    0.842701
    """
    return _unary("erf", lx.erf, x)


def erfc(x: Any) -> Any:
    """``1 - erf(x)``, accurate where ``erf(x)`` is close to 1.

    >>> float(erfc(10.0))
    2.088487583762545e-45
    """
    return _unary("erfc", lx.erfc, x)


def erfinv(y: Any) -> Any:
    """The inverse of ``erf`` on ``[-1, 1]`` (``+-inf`` at ``+-1``, NaN outside).

    >>> round(float(erfinv(erf(0.3))), 12)
    0.3
    """
    return _unary("erfinv", lx.erf_inv, y)


def gammaln(x: Any) -> Any:
    """``log|Gamma(x)|`` (+inf at 0, -1, -2, ...).

    >>> round(float(gammaln(0.5)), 12) == round(0.5 * math.log(math.pi), 12)
    True
    """
    return _unary("gammaln", lx.lgamma, x)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function ``I_x(a, b)``.

    Differentiable in ``x`` (any order); the derivatives in ``a`` and ``b`` are not
    implemented.

    >>> round(float(betainc(1.0, 1.0, 0.3)), 12)  # uniform: x
    0.3
    """
    a, b, x = floats("betainc", a, b, x)
    return scalar_result(lx.betainc(a, b, x))


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function ``P(a, x)``.

    Differentiable in ``x`` (any order) and once in ``a`` (``lax.igamma_grad_a``).

    >>> round(float(gammainc(1.0, 2.0)), 12) == round(1 - math.exp(-2.0), 12)
    True
    """
    a, x = floats("gammainc", a, x)
    return scalar_result(lx.igamma(a, x))


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``,
    accurate where ``P`` is close to 1.

    >>> abs(float(gammaincc(1.0, 50.0)) / math.exp(-50.0) - 1) < 1e-12
    True
    """
    a, x = floats("gammaincc", a, x)
    return scalar_result(lx.igammac(a, x))


def digamma(x: Any) -> Any:
    """``d/dx log Gamma(x)``.

    >>> round(float(digamma(1.0)), 12)
    -0.577215664902
    """
    return _unary("digamma", lx.digamma, x)


def polygamma(n: Any, x: Any) -> Any:
    """The ``n``-th derivative of ``digamma``: ``(-1)^(n+1) n! zeta(n + 1, x)``
    (``digamma`` for ``n == 0``).

    ``n`` may be an array (or traced), broadcasting against ``x``; there orders that are
    negative or not integers give NaN (as JAX), while such a concrete scalar ``n`` is an
    error. The result has ``x``'s floating-point dtype. One composite serves every
    ``n`` (through ``functrace.lax.zeta``), so values do not depend on whether ``n`` is
    known when tracing.

    >>> round(float(polygamma(1, 1.0)), 12) == round(math.pi**2 / 6, 12)
    True
    >>> [round(float(v), 6) for v in polygamma(np.array([0, 1]), 1.0)]
    [-0.577216, 1.644934]
    """
    if not isinstance(n, core.Tracer) and np.ndim(n) == 0:
        nv = np.asarray(n)
        if nv.dtype.kind not in "biuf" or not float(nv).is_integer() or float(nv) < 0:
            raise ValueError(
                f"polygamma: expected a concrete non-negative integer order n (or an array "
                f"of orders), got {n!r}"
            )
    return scalar_result(polygamma_array(n, x))


def betaln(a: Any, b: Any) -> Any:
    """``log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)``.

    >>> round(float(betaln(2.0, 3.0)), 12) == round(math.log(1 / 12), 12)
    True
    """
    a, b = floats("betaln", a, b)
    return scalar_result(lx.sub(lx.add(lx.lgamma(a), lx.lgamma(b)), lx.lgamma(lx.add(a, b))))


def expit(x: Any) -> Any:
    """The logistic sigmoid ``1 / (1 + exp(-x))``.

    >>> float(expit(0.0))
    0.5
    """
    return _unary("expit", lx.logistic, x)


def logit(p: Any) -> Any:
    """``log(p / (1 - p))``, the inverse of ``expit``.

    >>> float(logit(0.5))
    0.0
    """
    (p,) = floats("logit", p)
    return scalar_result(lx.sub(lx.log(p), lx.log1p(lx.neg(p))))


def ndtr(x: Any) -> Any:
    """The standard normal CDF ``(1 + erf(x / sqrt(2))) / 2``, accurate in both tails.

    >>> float(ndtr(0.0))
    0.5
    """
    (x,) = floats("ndtr", x)
    return scalar_result(_ndtr(x))


def _ndtr(x: Any) -> Any:
    return lx.mul(lx.full_like(x, 0.5), lx.erfc(lx.mul(x, lx.full_like(x, -1 / math.sqrt(2)))))


# Wichura's algorithm AS 241 (PPND16, Applied Statistics 37, 1988): rational
# approximations of the normal quantile, relative error about 1e-16.
_PPND_CENTRAL = (
    (3.3871328727963666080e0, 1.3314166789178437745e2, 1.9715909503065514427e3,
     1.3731693765509461125e4, 4.5921953931549871457e4, 6.7265770927008700853e4,
     3.3430575583588128105e4, 2.5090809287301226727e3),
    (1.0, 4.2313330701600911252e1, 6.8718700749205790830e2, 5.3941960214247511077e3,
     2.1213794301586595867e4, 3.9307895800092710610e4, 2.8729085735721942674e4,
     5.2264952788528545610e3),
)  # fmt: skip
_PPND_NEAR = (
    (1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0,
     3.64784832476320460504e0, 1.27045825245236838258e0, 2.41780725177450611770e-1,
     2.27238449892691845833e-2, 7.74545014278341407640e-4),
    (1.0, 2.05319162663775882187e0, 1.67638483018380384940e0, 6.89767334985100004550e-1,
     1.48103976427480074590e-1, 1.51986665636164571966e-2, 5.47593808499534494600e-4,
     1.05075007164441684324e-9),
)  # fmt: skip
_PPND_FAR = (
    (6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0,
     2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
     2.71155556874348757815e-5, 2.01033439929228813265e-7),
    (1.0, 5.99832206555887937690e-1, 1.36929880922735805310e-1, 1.48753612908506148525e-2,
     7.86869131145613259100e-4, 1.84631831751005468180e-5, 1.42151175831644588870e-7,
     2.04426310338993978564e-15),
)  # fmt: skip


def _ratio(coefs: tuple[tuple[float, ...], tuple[float, ...]], x: Any) -> Any:
    num, den = coefs
    n, d = fnp.zeros_like(x), fnp.zeros_like(x)
    for a, b in zip(reversed(num), reversed(den)):
        n, d = n * x + a, d * x + b
    return n / d


@custom_jvp
def _ndtri(p: Any) -> Any:
    q = p - 0.5
    central = q * _ratio(_PPND_CENTRAL, 0.180625 - q * q)
    # the tails on a safe argument (strictly inside (0, 1)), so no log(0) is computed
    r = fnp.where(q < 0, p, 1 - p)
    r = fnp.sqrt(-fnp.log(fnp.where((r > 0) & (r < 1), r, 0.5)))
    tail = fnp.where(r <= 5, _ratio(_PPND_NEAR, r - 1.6), _ratio(_PPND_FAR, r - 5))
    x = fnp.where(fnp.abs(q) <= 0.425, central, fnp.where(q < 0, -tail, tail))
    x = fnp.where(p == 0, -np.inf, fnp.where(p == 1, np.inf, x))
    return fnp.where((p >= 0) & (p <= 1), x, np.nan)  # NaN outside [0, 1] and for NaN


@_ndtri.defjvp
def _ndtri_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    (p,), (g,) = primals, tangents
    x = _ndtri(p)
    return x, g * (math.sqrt(2 * math.pi) * fnp.exp(0.5 * x * x))  # 1 / phi(x)


def ndtri(p: Any) -> Any:
    """The inverse of :func:`ndtr`: the standard normal quantile, ``ndtr(ndtri(p)) == p``.

    ``-inf`` at 0, ``inf`` at 1, NaN outside ``[0, 1]``; relative error about 1e-16
    (Wichura's AS 241). The derivative is ``1 / phi(ndtri(p))``.

    >>> round(float(ndtri(0.975)), 12)
    1.95996398454
    """
    (p,) = floats("ndtri", p)
    return scalar_result(_ndtri(p))


def log_ndtr(x: Any) -> Any:
    """``log(ndtr(x))``, accurate far into the lower tail (an asymptotic series there).

    >>> round(float(log_ndtr(-40.0)), 6)
    -804.608442
    """
    (x,) = floats("log_ndtr", x)
    return scalar_result(_log_ndtr(x))


def _log_ndtr(x: Any) -> Any:
    dt = np.dtype(_dtype(x))
    cut = -20.0 if dt == np.float64 else -10.0
    half = lx.full_like(x, 0.5)
    r2 = lx.full_like(x, 1 / math.sqrt(2))
    # upper half: log1p(-Q(x)); middle: log(Phi(x)); each branch on a safe argument
    xp = fnp.where(x > 0, x, 0)
    upper = lx.log1p(lx.neg(lx.mul(half, lx.erfc(lx.mul(xp, r2)))))
    xm = fnp.where((x <= 0) & (x >= cut), x, 0)
    middle = lx.log(lx.mul(half, lx.erfc(lx.neg(lx.mul(xm, r2)))))
    # lower tail: Phi(x) = phi(x)/|x| (1 - 1/x^2 + 3/x^4 - 15/x^6 + ...)
    xt = fnp.where(x < cut, x, cut)
    inv2 = lx.div(lx.full_like(x, 1), lx.mul(xt, xt))
    term, series = lx.full_like(x, 1), lx.full_like(x, 1)
    for k in range(1, 11):
        term = lx.mul(term, lx.mul(inv2, lx.full_like(x, -(2 * k - 1))))
        series = lx.add(series, term)
    tail = lx.sub(
        lx.sub(lx.mul(lx.mul(xt, xt), lx.full_like(x, -0.5)), lx.log(lx.neg(xt))),
        lx.full_like(x, 0.5 * math.log(2 * math.pi)),
    )
    tail = lx.add(tail, lx.log(series))
    out = fnp.where(x > 0, upper, fnp.where(x >= cut, middle, tail))
    return fnp.where(fnp.isnan(x), x, out)


def _entr_xlogy(fname: str, x: Any, y: Any, log_fn: Any, lo: float) -> Any:
    x, y = floats(fname, x, y)
    # x == 0 gives 0 for every y that is not NaN; log is evaluated on a safe y there
    # (y > lo and finite are kept, so the derivative in x at x == 0 is log(y))
    ok_y = fnp.logical_and(y > lo, y < np.inf)
    fix = fnp.logical_and(
        fnp.logical_and(x == 0, fnp.logical_not(ok_y)), fnp.logical_not(fnp.isnan(y))
    )
    safe_y = fnp.where(fix, fnp.zeros_like(y) if lo < 0 else fnp.ones_like(y), y)
    return scalar_result(fnp.multiply(x, log_fn(safe_y)))


def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN).

    >>> float(xlogy(0.0, 0.0)), float(xlogy(2.0, 3.0)) == 2 * math.log(3)
    (0.0, True)
    """
    return _entr_xlogy("xlogy", x, y, lx.log, 0.0)


def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN).

    >>> float(xlog1py(0.0, -1.0))
    0.0
    """
    return _entr_xlogy("xlog1py", x, y, lx.log1p, -1.0)


def entr(x: Any) -> Any:
    """Elementwise entropy ``-x log(x)`` for ``x > 0``, 0 at 0, ``-inf`` for ``x < 0``.

    The derivative is JAX's ``-(log(x) + 1)``: ``inf`` at 0, NaN for ``x < 0``.

    >>> float(entr(1.0)), float(entr(0.0))
    (-0.0, 0.0)
    """
    (x,) = floats("entr", x)
    return scalar_result(_entr(x))


@custom_jvp
def _entr(x: Any) -> Any:
    pos = x > 0
    safe = fnp.where(pos, x, fnp.ones_like(x))
    val = lx.neg(lx.mul(safe, lx.log(safe)))
    other = fnp.where(
        x == 0, fnp.zeros_like(x), fnp.where(fnp.isnan(x), x, fnp.full_like(x, -np.inf))
    )
    return fnp.where(pos, val, other)


@_entr.defjvp
def _entr_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _entr(x), lx.mul(t, lx.neg(lx.add(lx.log(x), fnp.ones_like(x))))


def logsumexp(
    a: Any,
    axis: Any = None,
    b: Any = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: Any = None,
) -> Any:
    """``log(sum(b * exp(a), axis))`` without overflow (SciPy's ``logsumexp``).

    With ``return_sign=True`` returns ``(log|s|, sign(s))`` for ``s = sum(b * exp(a))``,
    so negative weights ``b`` work.

    >>> out, sign = logsumexp([0.0, 0.0], b=[1.0, -2.0], return_sign=True)
    >>> float(out), float(sign)
    (0.0, -1.0)
    """
    return fnp.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign, where=where)


def softmax(x: Any, axis: Any = None) -> Any:
    """``exp(x) / sum(exp(x), axis)``, computed stably; over all elements by default.

    >>> softmax([0.0, 0.0]).tolist()
    [0.5, 0.5]
    """
    return fnp.exp(log_softmax(x, axis=axis))


def log_softmax(x: Any, axis: Any = None) -> Any:
    """``x - logsumexp(x, axis, keepdims=True)``; over all elements by default.

    >>> log_softmax([0.0, 0.0]).tolist() == [-math.log(2)] * 2
    True
    """
    (x,) = floats("log_softmax", x)
    return fnp.subtract(x, fnp.logsumexp(x, axis=axis, keepdims=True))
