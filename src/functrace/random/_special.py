"""Special functions of the random samplers: the regularized upper incomplete gamma
``Q(a, x)`` and the implicit reparameterisation gradient of a gamma sample (with the
``lax.lgamma`` primitive), and the ``log Gamma`` that ``poisson`` samples with."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import functrace.numpy as fnp
from functrace import core, lax
from functrace.random._args import _quiet


def _lgamma(x: Any) -> Any:
    """log Gamma(x) for x > 0: Stirling's series at x + 8, shifted back down, computed
    in the dtype of ``x``.

    Only ``poisson``'s rejection test uses it, in float32, rather than ``lax.lgamma``:
    the primitive's float32 values differ by an ulp eagerly (float64, rounded) and
    under ``jit`` (Numba's float32 ``lgamma``) at many points, which would change
    samples of large ``lam`` and make more of them differ between eager and compiled
    code. The recorded JAX samples are matched either way. From ``x = 1e4`` on the
    series is used at ``x`` itself (exact to float32 there): the shift's product of
    eight factors would overflow float32 beyond about 6e4."""
    dt = core.get_aval(x).dtype
    large = x >= 1e4
    z = fnp.where(large, 1.0, x)  # the shifted branch on a safe stand-in where unused
    prod = fnp.ones_like(x)
    for _ in range(8):
        prod = prod * z
        z = z + 1.0
    shifted = _stirling(z, dt) - fnp.log(prod)
    return fnp.where(large, _stirling(fnp.where(large, x, 1e4), dt), shifted)


def _stirling(z: Any, dt: np.dtype) -> Any:
    """Stirling's series of log Gamma(z), accurate for z >= 8."""
    zi = 1.0 / z
    zi2 = zi * zi
    series = zi * (
        1 / 12 + zi2 * (-1 / 360 + zi2 * (1 / 1260 + zi2 * (-1 / 1680 + zi2 * (1 / 1188))))
    )
    half_log_2pi = np.array(0.5 * math.log(2 * math.pi), dt)
    return (z - 0.5) * fnp.log(z) - z + half_log_2pi + series


_SERIES_TERMS = 200
_CF_TERMS = 100


def _gamma_q(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = Gamma(a, x) / Gamma(a),
    written with primitives so that its derivative in ``a`` comes from ``jvp``: the
    power series of P = 1 - Q below x = a + 1, Legendre's continued fraction (modified
    Lentz, fixed length) above. Each branch gets safe stand-in inputs where the other
    is used (no inf/NaN in either branch's tangents).

    Not the ``lax.igammac`` primitive: that one has no derivative in ``a``, which is
    the one needed here (its loops stop at convergence, data-dependently)."""
    dt = core.get_aval(x).dtype
    use_series = x < a + 1.0
    xs = fnp.where(use_series, x, a * 0.5)
    xc = fnp.where(use_series, a + 2.0, x)

    def as_float(i: Any) -> Any:  # the loop counter in x's dtype (int64 + f32 is f64)
        return i.astype(dt) if hasattr(i, "astype") else float(i)

    def series_step(n: Any, c: Any) -> Any:
        term, total = c
        term = term * xs / (a + as_float(n))
        return term, total + term

    term0 = 1.0 / a
    total = lax.fori_loop(1, _SERIES_TERMS, series_step, (term0, term0))[1]
    p_series = fnp.exp(a * fnp.log(xs) - xs - lax.lgamma(a)) * total

    tiny = np.finfo(dt).tiny * 1e10

    def cf_step(i: Any, c: Any) -> Any:
        b, cc, d, h = c
        fi = as_float(i)
        an = -fi * (fi - a)
        b = b + 2.0
        d = an * d + b
        d = fnp.where(fnp.abs(d) < tiny, tiny, d)
        cc = b + an / cc
        cc = fnp.where(fnp.abs(cc) < tiny, tiny, cc)
        d = 1.0 / d
        return b, cc, d, h * (d * cc)

    b0 = xc + 1.0 - a
    b0 = fnp.where(fnp.abs(b0) < tiny, tiny, b0)
    # The first step by hand: Lentz's C starts at 1/tiny, and an/C is an*tiny, whose
    # derivative needs no square of that huge C (it overflowed, harmlessly but with
    # NumPy warnings, in the tangent of a / C).
    an1 = a - 1.0
    b1 = b0 + 2.0
    d1 = an1 * (1.0 / b0) + b1
    d1 = 1.0 / fnp.where(fnp.abs(d1) < tiny, tiny, d1)
    c1 = b1 + an1 * tiny
    c1 = fnp.where(fnp.abs(c1) < tiny, tiny, c1)
    init = (b1, c1, d1, (1.0 / b0) * (d1 * c1))
    h = lax.fori_loop(2, _CF_TERMS, cf_step, init)[3]
    q_cf = fnp.exp(a * fnp.log(xc) - xc - lax.lgamma(a)) * h
    return fnp.where(use_series, 1.0 - p_series, q_cf)


@_quiet  # the unused branch of _gamma_q may overflow on its stand-in inputs
def _gamma_sample_grad(a: Any, x: Any) -> Any:
    """d x / d a for x ~ Gamma(a, 1) at fixed CDF value (the implicit reparameterisation
    gradient JAX uses): (dQ/da)(a, x) / density(a, x)."""
    from functrace.api._autodiff import jvp

    dq_da = jvp(lambda aa: _gamma_q(aa, x), (a,), (fnp.ones_like(a),))[1]
    density = fnp.exp((a - 1.0) * fnp.log(x) - x - lax.lgamma(a))
    return dq_da / density
