"""Transcendental elementwise functions of functrace.numpy built as composites of lax
primitives: inverse trigonometric and hyperbolic functions, ``exp2``/``log2``/``log10``,
``hypot``, ``logaddexp``/``logaddexp2``, ``fmax``/``fmin``, ``cbrt``, ``signbit``,
``copysign``, ``heaviside``, ``float_power`` and ``sinc``.

Each composite below is built so that its derivatives (of every order) come out
right from the rules of the primitives it uses; NaN/inf behaviour matches NumPy.
The dangerous branch of every ``select`` gets a harmless input first (the
double-``where`` pattern), so no NaN leaks into gradients from unused branches.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from functrace import core
from functrace.lax import composites as lcomp
from functrace.lax import elementwise as lx
from functrace.lax import extras as lxc
from functrace.numpy._core import asarray_or_tracer, cast, elementwise, promote_and_broadcast
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._indexing import where
from functrace.numpy._math import (
    _k,
    _real_composite,
    _where,
    add,
    exp,
    isfinite,
    log,
    maximum,
    subtract,
)


def _big(x: Any) -> Any:
    # Above 1/sqrt(eps), x**2 + 1 == x**2 in x's precision (and x**2 may overflow).
    return _k(x, 1.0 / math.sqrt(np.finfo(core.get_aval(x).dtype).eps))


_accurate = lcomp._accurate
_arcsin, _arccos, _arctan = lcomp.asin, lcomp.acos, lcomp.atan  # (lax's composites)
_sinh, _cosh = lcomp.sinh, lcomp.cosh


def _arcsinh(x: Any) -> Any:
    # odd: sign(x) * f(|x|) with f(t) = log1p(t + t^2 / (1 + sqrt(1 + t^2))), and
    # log(2t) once t^2 + 1 == t^2. |x| is a select (slope +-1, never 0), so the
    # derivative at 0 is 1 and the second derivative is 0, as they should be.
    neg = lx.lt(x, _k(x, 0))
    t = _where(neg, lx.neg(x), x)
    big = lx.gt(t, _big(x))
    ts = _where(big, _k(x, 1), t)
    t2 = lx.mul(ts, ts)
    small = lx.log1p(lx.add(ts, lx.div(t2, lx.add(_k(x, 1), lx.sqrt(lx.add(_k(x, 1), t2))))))
    large = lx.add(lx.log(_where(big, t, _k(x, 1))), _k(x, math.log(2)))
    r = _where(big, large, small)
    return _where(neg, lx.neg(r), r)


def _arccosh(x: Any) -> Any:
    # log1p((x-1) + sqrt((x-1)(x+1))) near 1, log(2x) for large x; NaN below 1.
    one = _k(x, 1)
    big = lx.gt(x, _big(x))
    xs = _where(big, _k(x, 2), x)
    y = lx.sub(xs, one)
    w = _accurate(lx.mul(y, lx.add(xs, one)), lx.sub(lx.mul(xs, xs), one))  # as in arcsin
    small = lx.log1p(lx.add(y, lx.sqrt(w)))
    large = lx.add(lx.log(_where(big, x, _k(x, 2))), _k(x, math.log(2)))
    return _where(lx.lt(x, one), _k(x, np.nan), _where(big, large, small))


def _arctanh(x: Any) -> Any:
    # (log1p(x) - log1p(-x)) / 2: d = dx / (1 - x^2).
    return lx.mul(lx.sub(lx.log1p(x), lx.log1p(lx.neg(x))), _k(x, 0.5))


_exp2 = lcomp.exp2


def _by_real(op: Any, x: Any, c: float) -> Any:
    """``op(x, c)`` (mul or div) for a real constant ``c``; a complex ``x`` part by part,
    as NumPy's complex-by-real arithmetic: ``op(x, c + 0j)`` would give log(0) / log(2)
    a NaN imaginary part (inf * 0)."""
    if core.get_aval(x).dtype.kind != "c":
        return op(x, _k(x, c))
    re, im = lxc.real(x), lxc.imag(x)
    return lxc.complex(op(re, _k(re, c)), op(im, _k(im, c)))


def _log2(x: Any) -> Any:
    # (log(z) / log(2) for complex z too: log's principal branch, as NumPy's)
    return _by_real(lx.div, lx.log(x), math.log(2))


def _log10(x: Any) -> Any:
    return _by_real(lx.div, lx.log(x), math.log(10))


def _deg2rad(x: Any) -> Any:
    return lx.mul(x, _k(x, math.pi / 180))


def _rad2deg(x: Any) -> Any:
    return lx.mul(x, _k(x, 180 / math.pi))


def _hypot(x: Any, y: Any) -> Any:
    # s * sqrt((x/s)^2 + (y/s)^2) with s = max(|x|, |y|) held constant (stop_gradient):
    # no overflow, and the derivatives are exactly those of sqrt(x^2 + y^2).
    # NOTE: at x = y = 0 the value is |x| + |y| (0), so every derivative there is 0
    # (abs'(0) = 0; hypot(x, 0) = |x|); the double where keeps the sqrt branch's
    # derivative (0/0 there) out of it.
    ax, ay = lx.abs(x), lx.abs(y)
    zero = _k(x, 0)
    origin = lx.bitwise_and(lx.eq(ax, zero), lx.eq(ay, zero))
    s = lx.stop_gradient(lx.max(ax, ay))
    inf = _k(x, np.inf)
    s = _where(lx.bitwise_and(lx.gt(s, zero), lx.lt(s, inf)), s, _k(x, 1))
    xs, ys = lx.div(x, s), lx.div(y, s)
    sq = _where(origin, _k(x, 1), lx.add(lx.mul(xs, xs), lx.mul(ys, ys)))
    r = _where(origin, lx.add(ax, ay), lx.mul(s, lx.sqrt(sq)))
    return _where(lx.bitwise_or(lx.eq(ax, inf), lx.eq(ay, inf)), inf, r)  # hypot(inf, nan)


def _logaddexp2(x: Any, y: Any) -> Any:
    m = lx.stop_gradient(lx.max(x, y))
    m = _where(lx.lt(lx.abs(m), _k(m, np.inf)), m, _k(m, 0))
    return lx.add(m, _log2(lx.add(_exp2(lx.sub(x, m)), _exp2(lx.sub(y, m)))))


def _nan_ignoring(extremum: Any) -> Any:
    def f(x: Any, y: Any) -> Any:
        r = extremum(x, y)
        if core.get_aval(r).dtype.kind not in "fc":
            return r
        r = _where(lx.ne(y, y), x, r)  # y is NaN: x
        return _where(lx.ne(x, x), y, r)  # x is NaN: y (NaN only if both are)

    return f


def _sinc(x: Any) -> Any:
    # sin(pi x) / (pi x), and its Taylor polynomial 1 - z^2/6 + z^4/120 (z = pi x) for
    # |x| < 1e-3 (the next term is below 1e-18): the value 1 at 0, and the derivatives
    # there (0, -pi^2/3, ...) come out right at every order.
    small = lx.lt(lx.abs(x), _k(x, 1e-3))
    z = lx.mul(_where(small, x, _k(x, 0)), _k(x, math.pi))
    z2 = lx.mul(z, z)
    taylor = lx.add(lx.sub(_k(x, 1), lx.div(z2, _k(x, 6))), lx.div(lx.mul(z2, z2), _k(x, 120)))
    y = lx.mul(_where(small, _k(x, 1), x), _k(x, math.pi))
    return _where(small, taylor, lx.div(lx.sin(y), y))


def _cbrt(x: Any) -> Any:
    neg = lx.lt(x, _k(x, 0))
    r = lx.pow(_where(neg, lx.neg(x), x), _k(x, 1 / 3))
    return _where(neg, lx.neg(r), r)


def _signbit(x: Any) -> Any:
    if core.get_aval(x).dtype.kind not in "f":
        return lx.lt(x, lx.zeros_like(x))
    # the sign bit itself, so -0.0 and a NaN with its sign bit set count (as in NumPy)
    bits = np.dtype(f"int{8 * core.get_aval(x).dtype.itemsize}")
    as_int = lxc.bitcast_convert_type(x, bits)
    return lx.lt(as_int, lx.zeros_like(as_int))


def _copysign(x: Any, y: Any) -> Any:
    flip = lx.ne(_signbit(x), _signbit(y))
    return _where(flip, lx.neg(x), x)


def _heaviside(x: Any, h0: Any) -> Any:
    zero = _k(x, 0)
    step = _where(lx.lt(x, zero), zero, _where(lx.gt(x, zero), _k(x, 1), h0))
    return _where(lx.ne(x, x), x, step)


_doc = "NumPy's ``{0}``, traceable; its derivatives come from a composite of lax primitives."

arcsin = elementwise(
    "arcsin",
    np.arcsin,
    _arcsin,
    """\
Inverse sine, elementwise (NumPy's ``arcsin``).

Computed as ``atan2(x, sqrt((1 - x)(1 + x)))``, so every derivative order is right
inside the domain. NOTE: at the domain edges x = +-1 the derivative is +inf (the
one-sided limit); outside [-1, 1] the value and the derivatives are NaN, as in NumPy.
Complex x: NumPy's values (branch cuts on the real axis outside [-1, 1], the side
given by the sign of the imaginary zero) as ``-i arcsinh(ix)``; holomorphic
derivatives.

>>> import functrace.numpy as fnp
>>> float(fnp.arcsin(1.0))
1.5707963267948966
""",
)
arccos = elementwise(
    "arccos",
    np.arccos,
    _arccos,
    """\
Inverse cosine, elementwise (NumPy's ``arccos``).

Computed as ``atan2(sqrt((1 - x)(1 + x)), x)``. NOTE: at x = +-1 the derivative is
-inf (the one-sided limit); outside [-1, 1] it is NaN, as the value is. Complex x:
NumPy's values (the cuts of ``arcsin``) from ``arccosh(x) = +-i arccos(x)``;
holomorphic derivatives.

>>> import functrace.numpy as fnp
>>> float(fnp.arccos(-1.0))
3.141592653589793
""",
)
arctan = elementwise("arctan", np.arctan, _arctan, _doc.format("arctan"))


def _or_complex(real_fn: Any, complex_fn: Any) -> Any:
    """``real_fn`` on real operands, ``complex_fn`` on complex ones (under transforms)."""
    return lambda x: complex_fn(x) if core.get_aval(x).dtype.kind == "c" else real_fn(x)


def _complex_sinh(z: Any) -> Any:
    # sinh(a + ib) = sinh(a) cos(b) + i cosh(a) sin(b): the real functions keep their
    # accuracy near 0 (exp(z) - exp(-z) would cancel) and their overflow handling
    a, b = lxc.real(z), lxc.imag(z)
    return lxc.complex(lx.mul(_sinh(a), lx.cos(b)), lx.mul(_cosh(a), lx.sin(b)))


def _complex_cosh(z: Any) -> Any:
    # cosh(a + ib) = cosh(a) cos(b) + i sinh(a) sin(b)
    a, b = lxc.real(z), lxc.imag(z)
    return lxc.complex(lx.mul(_cosh(a), lx.cos(b)), lx.mul(_sinh(a), lx.sin(b)))


sinh = elementwise("sinh", np.sinh, _or_complex(_sinh, _complex_sinh), _doc.format("sinh"))
cosh = elementwise("cosh", np.cosh, _or_complex(_cosh, _complex_cosh), _doc.format("cosh"))
arcsinh = elementwise(
    "arcsinh", np.arcsinh, _or_complex(_arcsinh, lxc.asinh), _doc.format("arcsinh")
)
arccosh = elementwise(
    "arccosh",
    np.arccosh,
    _or_complex(_arccosh, lxc.acosh),
    """\
Inverse hyperbolic cosine, elementwise (NumPy's ``arccosh``).

NOTE: at x = 1 the derivative is +inf; below 1 the value and derivatives are NaN.
Complex x: NumPy's values (branch cut on the real axis below 1) from the ``acosh``
primitive, holomorphic derivatives.
""",
)
arctanh = elementwise(
    "arctanh",
    np.arctanh,
    _or_complex(_arctanh, lxc.atanh),
    """\
Inverse hyperbolic tangent, elementwise (NumPy's ``arctanh``).

NOTE: at x = +-1 the value is +-inf and the derivative +inf; outside [-1, 1] NaN.
Complex x: NumPy's values (branch cuts on the real axis outside [-1, 1]) from the
``atanh`` primitive, holomorphic derivatives.
""",
)
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh
exp2 = elementwise(
    "exp2",
    np.exp2,
    _or_complex(_exp2, lambda z: lx.exp(_by_real(lx.mul, z, math.log(2)))),
    _doc.format("exp2"),
)
log2 = elementwise("log2", np.log2, _log2, _doc.format("log2"))
log10 = elementwise("log10", np.log10, _log10, _doc.format("log10"))
deg2rad = elementwise("deg2rad", np.deg2rad, _deg2rad, _doc.format("deg2rad"))
rad2deg = elementwise("rad2deg", np.rad2deg, _rad2deg, _doc.format("rad2deg"))
radians = elementwise("radians", np.radians, _deg2rad, _doc.format("radians"))
degrees = elementwise("degrees", np.degrees, _rad2deg, _doc.format("degrees"))
hypot = elementwise(
    "hypot",
    np.hypot,
    _real_composite("hypot", _hypot),
    """\
``sqrt(x**2 + y**2)`` without overflow (NumPy's ``hypot``).

NOTE: the gradient at x = y = 0 is 0 for both arguments, and so are the higher
derivatives there (the convention of ``abs'(0) = 0`` and of ``linalg.norm`` at the
zero vector: ``hypot(x, 0) = |x|``). Elsewhere the derivatives are those of
``sqrt(x**2 + y**2)``; the second derivative grows like ``1 / hypot(x, y)`` near 0.

>>> import functrace.numpy as fnp
>>> float(fnp.hypot(3.0, 4.0))
5.0
""",
)
logaddexp2 = elementwise(
    "logaddexp2",
    np.logaddexp2,
    _real_composite("logaddexp2", _logaddexp2),
    """\
``log2(2**x + 2**y)`` without overflow (NumPy's ``logaddexp2``).
""",
)
fmax = elementwise(
    "fmax",
    np.fmax,
    _nan_ignoring(lx.max),
    """\
Elementwise maximum that ignores NaN (NumPy's ``fmax``): NaN only where both are NaN.

NOTE: at ties each operand gets half the derivative, so d fmax(x, x)/dx = 1.

>>> import functrace.numpy as fnp
>>> fnp.fmax([1.0, fnp.nan], [fnp.nan, fnp.nan])
array([ 1., nan])
""",
)
fmin = elementwise(
    "fmin",
    np.fmin,
    _nan_ignoring(lx.min),
    """\
Elementwise minimum that ignores NaN (NumPy's ``fmin``): NaN only where both are NaN.

NOTE: at ties each operand gets half the derivative, so d fmin(x, x)/dx = 1.
""",
)
fabs = elementwise(
    "fabs",
    np.fabs,
    _real_composite("fabs", lx.abs),
    """\
Absolute value of real numbers (NumPy's ``fabs``). NOTE: the derivative at 0 is 0.
""",
)
cbrt = elementwise(
    "cbrt",
    np.cbrt,
    _real_composite("cbrt", _cbrt),
    """\
Real cube root (NumPy's ``cbrt``). NOTE: the derivative at 0 is +inf.
""",
)
signbit = elementwise("signbit", np.signbit, _signbit, _doc.format("signbit"))
copysign = elementwise(
    "copysign", np.copysign, _real_composite("copysign", _copysign), _doc.format("copysign")
)
heaviside = elementwise(
    "heaviside",
    np.heaviside,
    _real_composite("heaviside", _heaviside),
    "The Heaviside step (NumPy's ``heaviside``); its derivative is 0.",
)


float_power = elementwise(
    "float_power",
    np.float_power,
    lx.pow,
    """\
``x ** y`` computed in float64 (NumPy's ``float_power``).
""",
)


@numpy_path(lambda x, y, /: np.logaddexp(x, y))
def logaddexp(x: Any, y: Any, /) -> Any:
    """``log(exp(x) + exp(y))`` without overflow."""
    (x, y), _ = promote_and_broadcast(  # NumPy's dtypes (and its refusal of complex)
        "logaddexp", np.logaddexp, [asarray_or_tracer(x, "logaddexp"), asarray_or_tracer(y)]
    )
    m = maximum(x, y)
    m = lx.stop_gradient(where(isfinite(m), m, 0.0))
    return add(m, log(add(exp(subtract(x, m)), exp(subtract(y, m)))))


@numpy_path(lambda x: np.sinc(x))
def sinc(x: Any) -> Any:
    """The normalized sinc ``sin(pi x) / (pi x)``, with ``sinc(0) = 1`` (NumPy's ``sinc``).

    Near 0 a Taylor polynomial is used, so the derivatives at 0 are right too
    (0 for the first, ``-pi**2 / 3`` for the second).

    >>> import functrace.numpy as fnp
    >>> float(fnp.sinc(0.0)), float(fnp.sinc(0.5))
    (1.0, 0.6366197723675814)
    """
    x = asarray_or_tracer(x, "sinc")
    dt = core.get_aval(x).dtype
    if dt.kind in "biu":
        x = cast(x, np.dtype(np.float64))
    return _real_composite("sinc", _sinc)(x)


__all__ = [
    "acos",
    "acosh",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctanh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "cbrt",
    "copysign",
    "cosh",
    "deg2rad",
    "degrees",
    "exp2",
    "fabs",
    "float_power",
    "fmax",
    "fmin",
    "heaviside",
    "hypot",
    "log10",
    "log2",
    "logaddexp",
    "logaddexp2",
    "rad2deg",
    "radians",
    "signbit",
    "sinc",
    "sinh",
]
