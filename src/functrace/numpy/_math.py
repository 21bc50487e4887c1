"""Elementwise math of functrace.numpy (ufunc-like functions and composites)."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Tracer
from functrace.lax import elementwise as lx
from functrace.numpy._core import (
    _finish,
    asarray_or_tracer,
    broadcast_shapes,
    broadcast_to_shape,
    cast,
    elementwise,
    is_traced,
    promote_and_broadcast,
)

# -- direct ufunc <-> primitive pairs ---------------------------------------
negative = elementwise("negative", np.negative, lx.neg)
absolute = elementwise("absolute", np.absolute, lx.abs)
abs = absolute  # noqa: A001
sign = elementwise("sign", np.sign, lx.sign)
exp = elementwise("exp", np.exp, lx.exp)
log = elementwise("log", np.log, lx.log)
log1p = elementwise("log1p", np.log1p, lx.log1p)
expm1 = elementwise("expm1", np.expm1, lx.expm1)
sin = elementwise("sin", np.sin, lx.sin)
cos = elementwise("cos", np.cos, lx.cos)
tan = elementwise("tan", np.tan, lx.tan)
tanh = elementwise("tanh", np.tanh, lx.tanh)
sqrt = elementwise("sqrt", np.sqrt, lx.sqrt)


def _add(x: Any, y: Any) -> Any:
    return lx.bitwise_or(x, y) if _kind(x) == "b" else lx.add(x, y)  # NumPy: True + True


add = elementwise("add", np.add, _add)
subtract = elementwise("subtract", np.subtract, lx.sub)
multiply = elementwise("multiply", np.multiply, lx.mul)
true_divide = elementwise("true_divide", np.true_divide, lx.div)
divide = true_divide
maximum = elementwise("maximum", np.maximum, lx.max)
minimum = elementwise("minimum", np.minimum, lx.min)
arctan2 = elementwise("arctan2", np.arctan2, lx.atan2)
fmod = elementwise("fmod", np.fmod, lx.rem)
equal = elementwise("equal", np.equal, lx.eq)
not_equal = elementwise("not_equal", np.not_equal, lx.ne)
less = elementwise("less", np.less, lx.lt)
less_equal = elementwise("less_equal", np.less_equal, lx.le)
greater = elementwise("greater", np.greater, lx.gt)
greater_equal = elementwise("greater_equal", np.greater_equal, lx.ge)
bitwise_and = elementwise("bitwise_and", np.bitwise_and, lx.bitwise_and)
bitwise_or = elementwise("bitwise_or", np.bitwise_or, lx.bitwise_or)
bitwise_xor = elementwise("bitwise_xor", np.bitwise_xor, lx.bitwise_xor)
left_shift = elementwise("left_shift", np.left_shift, lx.shift_left)
right_shift = elementwise("right_shift", np.right_shift, lx.shift_right_arithmetic)
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift
invert = elementwise("invert", np.invert, lx.bitwise_not)
bitwise_not = invert


def _kind(x: Any) -> str:
    """The dtype kind of an operand (a tracer, a NumPy value or a weak Python scalar)."""
    return core.get_aval(x).dtype.kind


def _floor(x: Any) -> Any:
    return x if _kind(x) in "biu" else lx.floor(x)


def _ceil(x: Any) -> Any:
    return x if _kind(x) in "biu" else lx.ceil(x)


def _rint(x: Any) -> Any:
    return x if _kind(x) in "biu" else lx.round(x, 1)


floor = elementwise("floor", np.floor, _floor)
ceil = elementwise("ceil", np.ceil, _ceil)
rint = elementwise("rint", np.rint, _rint)


def _trunc(x: Any) -> Any:
    if _kind(x) in "biu":
        return x
    return lx.select_n(lx.lt(x, lx.zeros_like(x)), lx.floor(x), lx.ceil(x))


trunc = elementwise("trunc", np.trunc, _trunc)
fix = trunc


def _logical(x: Any) -> Any:
    return x if _kind(x) == "b" else lx.ne(x, lx.zeros_like(x))


def _logical_and(x: Any, y: Any) -> Any:
    return lx.bitwise_and(_logical(x), _logical(y))


def _logical_or(x: Any, y: Any) -> Any:
    return lx.bitwise_or(_logical(x), _logical(y))


def _logical_xor(x: Any, y: Any) -> Any:
    return lx.bitwise_xor(_logical(x), _logical(y))


logical_and = elementwise("logical_and", np.logical_and, _logical_and)
logical_or = elementwise("logical_or", np.logical_or, _logical_or)
logical_xor = elementwise("logical_xor", np.logical_xor, _logical_xor)
logical_not = elementwise("logical_not", np.logical_not, lambda x: lx.bitwise_not(_logical(x)))


def _floor_divide(x: Any, y: Any) -> Any:
    if _kind(x) in "iu":
        return lx.div(x, y)  # lax.div on integers floors, like NumPy's //
    return lx.floor(lx.div(x, y))


floor_divide = elementwise("floor_divide", np.floor_divide, _floor_divide)


def _remainder(x: Any, y: Any) -> Any:
    # NumPy's mod has the sign of the divisor: fmod corrected where signs differ.
    r = lx.rem(x, y)
    zero = lx.zeros_like(r)
    fix_sign = lx.bitwise_and(lx.ne(r, zero), lx.ne(lx.lt(r, zero), lx.lt(y, zero)))
    return lx.select_n(fix_sign, r, lx.add(r, y))


remainder = elementwise("remainder", np.remainder, _remainder)
mod = remainder


def _power(x: Any, y: Any) -> Any:
    if _kind(x) in "iu":
        # One known exponent: integer_pow (repeated squaring); else lax.pow on integers,
        # which refuses negative exponents when it runs, as NumPy does.
        yv = core.concrete_or_none(y)
        if yv is not None and yv.size and np.any(yv < 0):
            raise _int_power_error(f"the negative exponent {yv.min()}")
        if yv is not None and yv.size and np.all(yv == yv.flat[0]):
            return lx.integer_pow(x, int(yv.flat[0]))
    return lx.pow(x, y)


def _int_power_error(got: str) -> ValueError:
    return ValueError(
        "power: expected non-negative exponents for an integer base (NumPy's rule), got "
        f"{got}. Use a float base (2.0 ** n, x.astype(float) ** y)."
    )


_power_f = elementwise("power", np.power, _power)


def power(x: Any, y: Any, /, *, _op: bool = False) -> Any:
    """NumPy's ``power``; a Python int exponent becomes ``integer_pow`` (exact, cheap)."""
    if type(y) is int and isinstance(x, Tracer):
        aval = x.aval
        if aval.dtype.kind in "iufc" and (y >= 0 or aval.dtype.kind in "fc"):
            return _finish(lx.integer_pow(x, y), aval.dtype, _op)
        if aval.dtype.kind in "iu":  # NumPy refuses integers to negative powers too
            raise _int_power_error(f"the negative exponent {y}")
    return _power_f(x, y, _op=_op)


power._operator = functools.partial(power, _op=True)  # type: ignore[attr-defined]
pow = power  # noqa: A001  (NumPy 2's alias)


def square(x: Any, /) -> Any:
    """``x * x`` (NumPy's ``square``)."""
    if not is_traced(x):
        return np.square(x)
    return lx.integer_pow(asarray_or_tracer(x), 2)


def reciprocal(x: Any, /) -> Any:
    """``1 / x`` (NumPy's ``reciprocal``; integers divide as NumPy does)."""
    if not is_traced(x):
        return np.reciprocal(x)
    x = asarray_or_tracer(x)
    return (
        true_divide(lx.full_like(x, 1), x)
        if x.dtype.kind in "fc"
        else floor_divide(lx.full_like(x, 1), x)
    )


def positive(x: Any, /) -> Any:
    return np.positive(x) if not is_traced(x) else asarray_or_tracer(x)


def where(condition: Any, x: Any = None, y: Any = None, /) -> Any:
    """``x`` where ``condition`` else ``y``, elementwise with broadcasting.

    Both branches are computed. The gradient flows only into the selected branch,
    but a NaN or inf *computed* in the other branch still poisons the gradient
    (0 * inf = nan), as in JAX. The safe pattern is a double ``where``: make the
    input of the dangerous branch harmless first::

        safe_x = fnp.where(x > 0, x, 1.0)
        y = fnp.where(x > 0, fnp.log(safe_x), 0.0)

    >>> import functrace.numpy as fnp
    >>> fnp.where([True, False], 1.0, 2.0)
    array([1., 2.])
    """
    if x is None and y is None:
        from functrace.numpy._indexing import nonzero

        return nonzero(condition)
    if x is None or y is None:
        raise TypeError("where: expected either one argument or three, got two.")
    if not is_traced(condition, x, y):
        return np.where(condition, x, y)
    c = asarray_or_tracer(condition, "where")
    (x, y), _ = promote_and_broadcast(
        "where", np.add, [asarray_or_tracer(x, "where"), asarray_or_tracer(y, "where")]
    )
    c = c if core.get_aval(c).dtype == np.bool_ else lx.ne(c, lx.zeros_like(c))
    shape = broadcast_shapes("where", core.get_aval(c).shape, core.get_aval(x).shape)
    return lx.select_n(
        broadcast_to_shape(c, shape), broadcast_to_shape(y, shape), broadcast_to_shape(x, shape)
    )


def clip(
    a: Any,
    a_min: Any = None,
    a_max: Any = None,
    out: None = None,
    *,
    min: Any = None,
    max: Any = None,
) -> Any:  # noqa: A002
    """Clip values to ``[a_min, a_max]`` (either may be None; ``min=``/``max=`` are the
    NumPy 2 spellings of the same bounds).

    NOTE: the gradient passes where ``a_min <= a <= a_max`` (ends included).

    >>> import functrace.numpy as fnp
    >>> fnp.clip([-2.0, 0.5, 3.0], a_min=0, a_max=1)
    array([0. , 0.5, 1. ])
    """
    if (a_min is not None and min is not None) or (a_max is not None and max is not None):
        raise ValueError(
            "clip: expected each bound once, got both a_min/min or a_max/max. "
            "Pass either the a_min=/a_max= or the min=/max= spelling."
        )
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    if lo is None and hi is None:
        raise ValueError("clip: expected at least one of a_min and a_max, got neither.")
    if not is_traced(a, lo, hi):
        return np.clip(a, lo, hi, out=out)
    if out is not None:
        raise TypeError(
            "clip: expected out=None, got an output array. functrace.numpy never "
            "writes in place: use the returned array."
        )
    out = asarray_or_tracer(a, "clip")
    if lo is not None:
        out = _clip_side(out, lo, lx.ge)
    if hi is not None:
        out = _clip_side(out, hi, lx.le)
    return out


def _clip_side(x: Any, bound: Any, keep: Any) -> Any:
    (x, b), _ = promote_and_broadcast("clip", np.add, [x, asarray_or_tracer(bound, "clip")])
    return lx.select_n(keep(x, b), b, x)


def logaddexp(x: Any, y: Any, /) -> Any:
    """``log(exp(x) + exp(y))`` without overflow."""
    if not is_traced(x, y):
        return np.logaddexp(x, y)
    (x, y), _ = promote_and_broadcast(  # NumPy's dtypes (and its refusal of complex)
        "logaddexp", np.logaddexp, [asarray_or_tracer(x, "logaddexp"), asarray_or_tracer(y)]
    )
    m = maximum(x, y)
    m = lx.stop_gradient(where(isfinite(m), m, 0.0))
    return add(m, log(add(exp(subtract(x, m)), exp(subtract(y, m)))))


def isfinite(x: Any, /) -> Any:
    if not is_traced(x):
        return np.isfinite(x)
    x = asarray_or_tracer(x)
    aval = core.get_aval(x)  # x may be a Python scalar inside a trace
    if aval.dtype.kind not in "fc":
        return broadcast_to_shape(np.bool_(True), aval.shape)
    return lx.lt(abs(x), lx.full_like(x, np.inf))


def isnan(x: Any, /) -> Any:
    if not is_traced(x):
        return np.isnan(x)
    x = asarray_or_tracer(x)
    return lx.ne(x, x)


def isinf(x: Any, /) -> Any:
    if not is_traced(x):
        return np.isinf(x)
    x = asarray_or_tracer(x)
    aval = core.get_aval(x)
    if aval.dtype.kind not in "fc":  # integers and bools are never infinite
        return broadcast_to_shape(np.bool_(False), aval.shape)
    return lx.eq(abs(x), lx.full_like(x, np.inf))


def _real_only(fname: str, x: Any) -> Any:
    x = asarray_or_tracer(x, fname)
    if core.get_aval(x).dtype.kind == "c":
        raise NotImplementedError(
            f"{fname}: expected a real traced array, got "
            f"{core.get_aval(x).dtype.name}. Complex parts of traced arrays "
            f"are not supported yet (lax has no real/imag/conj primitive)."
        )
    return x


def conjugate(x: Any, /) -> Any:
    """The complex conjugate (the identity on real arrays)."""
    if not is_traced(x):
        return np.conjugate(x)
    return _real_only("conjugate", x)


conj = conjugate


def real(val: Any) -> Any:
    """The real part (the array itself for real arrays)."""
    if not is_traced(val):
        return np.real(val)
    return _real_only("real", val)


def imag(val: Any) -> Any:
    """The imaginary part (zeros of the same dtype for real arrays)."""
    if not is_traced(val):
        return np.imag(val)
    return lx.zeros_like(_real_only("imag", val))


def round(a: Any, decimals: int = 0, out: None = None) -> Any:  # noqa: A001
    """Round to ``decimals`` decimal places, halves to even (NumPy's ``round``).

    As in NumPy, ``decimals != 0`` scales by ``10**decimals``, rounds and scales back,
    so results can differ from the decimal representation in the last bit. The
    derivative is zero.

    >>> import functrace.numpy as fnp
    >>> fnp.round([0.5, 1.5, 2.5])
    array([0., 2., 2.])
    >>> fnp.round(1.2345, 2)
    np.float64(1.23)
    """
    if not is_traced(a):
        return np.round(a, decimals, out)
    if out is not None:
        raise TypeError(
            "round: expected out=None, got an output array. functrace.numpy never "
            "writes in place: use the returned array."
        )
    x = _real_only("round", a)
    dt = core.get_aval(x).dtype
    decimals = int(decimals)
    if dt.kind in "biu":
        if decimals >= 0:
            return x
        scale = 10.0**-decimals
        xf = cast(x, np.dtype(np.float64))
        y = lx.round(lx.div(xf, lx.full_like(xf, scale)), 1)
        return cast(lx.mul(y, lx.full_like(y, scale)), dt)
    if decimals == 0:
        return lx.round(x, 1)
    if decimals > 0:
        scale = lx.full_like(x, 10.0**decimals)
        return lx.div(lx.round(lx.mul(x, scale), 1), scale)
    scale = lx.full_like(x, 10.0**-decimals)
    return lx.mul(lx.round(lx.div(x, scale), 1), scale)


around = round


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    """``x`` converted to ``dtype`` (``np.float32``, ``"float32"``, ``float``... all work).

    >>> import functrace.numpy as fnp
    >>> fnp.astype([1.5, 2.5], "int32")
    array([1, 2], dtype=int32)
    """
    if not is_traced(x):
        return np.asarray(x).astype(dtype, copy=copy)
    return cast(asarray_or_tracer(x), np.dtype(dtype))


# ---------------------------------------------------------------------------
# More elementwise math, as composites of lax primitives
# ---------------------------------------------------------------------------
# Each composite below is built so that its derivatives (of every order) come out
# right from the rules of the primitives it uses; NaN/inf behaviour matches NumPy.
# The dangerous branch of every ``select`` gets a harmless input first (the
# double-``where`` pattern), so no NaN leaks into gradients from unused branches.


def _where(c: Any, t: Any, f: Any) -> Any:
    """``t`` where ``c`` else ``f`` (operands of one shape and dtype)."""
    return lx.select_n(c, f, t)


def _k(x: Any, value: float) -> Any:
    """The constant ``value`` in the shape and dtype of ``x``."""
    return lx.full_like(x, value)


def _real_composite(name: str, fn: Any) -> Any:
    def g(*xs: Any) -> Any:
        if core.get_aval(xs[0]).dtype.kind == "c":
            raise NotImplementedError(
                f"{name}: expected a real traced array, got "
                f"{core.get_aval(xs[0]).dtype.name}. Complex {name} is only available on "
                f"plain NumPy inputs."
            )
        return fn(*xs)

    return g


def _big(x: Any) -> Any:
    # Above 1/sqrt(eps), x**2 + 1 == x**2 in x's precision (and x**2 may overflow).
    return _k(x, 1.0 / math.sqrt(np.finfo(core.get_aval(x).dtype).eps))


def _accurate(value: Any, smooth: Any) -> Any:
    """``value`` (accurate), differentiated as ``smooth`` (same function, other formula)."""
    return lx.add(smooth, lx.stop_gradient(lx.sub(value, smooth)))


def _sqrt_1mx2(x: Any) -> Any:
    # sqrt(1 - x^2): the value from (1-x)(1+x) (exact near |x| = 1), the derivatives from
    # 1 - x*x, whose reverse pass gives +-inf at |x| = 1 rather than 0 * inf = NaN.
    one = _k(x, 1)
    return lx.sqrt(_accurate(lx.mul(lx.sub(one, x), lx.add(one, x)), lx.sub(one, lx.mul(x, x))))


def _arcsin(x: Any) -> Any:
    # arcsin x = atan2(x, sqrt(1 - x^2)): d = dx / sqrt(1 - x^2) from atan2's rule.
    return lx.atan2(x, _sqrt_1mx2(x))


def _arccos(x: Any) -> Any:
    # arccos x = atan2(sqrt(1 - x^2), x): d = -dx / sqrt(1 - x^2).
    return lx.atan2(_sqrt_1mx2(x), x)


def _arctan(x: Any) -> Any:
    return lx.atan2(x, _k(x, 1))  # d = dx / (1 + x^2)


def _sinh(x: Any) -> Any:
    # (e^x - e^-x) / 2 through expm1: no cancellation near 0.
    return lx.mul(lx.sub(lx.expm1(x), lx.expm1(lx.neg(x))), _k(x, 0.5))


def _cosh(x: Any) -> Any:
    return lx.mul(lx.add(lx.exp(x), lx.exp(lx.neg(x))), _k(x, 0.5))


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


def _exp2(x: Any) -> Any:
    return lx.pow(_k(x, 2), x)  # exact for integer x; d = log(2) 2^x dx


def _log2(x: Any) -> Any:
    return lx.div(lx.log(x), _k(x, math.log(2)))


def _log10(x: Any) -> Any:
    return lx.div(lx.log(x), _k(x, math.log(10)))


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
    # x < 0, or x is -0.0 (1 / -0.0 == -inf)
    zero = _k(x, 0)
    is_zero = lx.eq(x, zero)
    inv = lx.div(_k(x, 1), _where(is_zero, x, _k(x, 1)))
    return lx.bitwise_or(lx.lt(x, zero), lx.bitwise_and(is_zero, lx.lt(inv, zero)))


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
    _real_composite("arcsin", _arcsin),
    """\
Inverse sine, elementwise (NumPy's ``arcsin``).

Computed as ``atan2(x, sqrt((1 - x)(1 + x)))``, so every derivative order is right
inside the domain. NOTE: at the domain edges x = +-1 the derivative is +inf (the
one-sided limit); outside [-1, 1] the value and the derivatives are NaN, as in NumPy.

>>> import functrace.numpy as fnp
>>> float(fnp.arcsin(1.0))
1.5707963267948966
""",
)
arccos = elementwise(
    "arccos",
    np.arccos,
    _real_composite("arccos", _arccos),
    """\
Inverse cosine, elementwise (NumPy's ``arccos``).

Computed as ``atan2(sqrt((1 - x)(1 + x)), x)``. NOTE: at x = +-1 the derivative is
-inf (the one-sided limit); outside [-1, 1] it is NaN, as the value is.

>>> import functrace.numpy as fnp
>>> float(fnp.arccos(-1.0))
3.141592653589793
""",
)
arctan = elementwise("arctan", np.arctan, _real_composite("arctan", _arctan), _doc.format("arctan"))
sinh = elementwise("sinh", np.sinh, _real_composite("sinh", _sinh), _doc.format("sinh"))
cosh = elementwise("cosh", np.cosh, _real_composite("cosh", _cosh), _doc.format("cosh"))
arcsinh = elementwise(
    "arcsinh", np.arcsinh, _real_composite("arcsinh", _arcsinh), _doc.format("arcsinh")
)
arccosh = elementwise(
    "arccosh",
    np.arccosh,
    _real_composite("arccosh", _arccosh),
    """\
Inverse hyperbolic cosine, elementwise (NumPy's ``arccosh``).

NOTE: at x = 1 the derivative is +inf; below 1 the value and derivatives are NaN.
""",
)
arctanh = elementwise(
    "arctanh",
    np.arctanh,
    _real_composite("arctanh", _arctanh),
    """\
Inverse hyperbolic tangent, elementwise (NumPy's ``arctanh``).

NOTE: at x = +-1 the value is +-inf and the derivative +inf; outside [-1, 1] NaN.
""",
)
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh
atan2 = arctan2
exp2 = elementwise("exp2", np.exp2, _real_composite("exp2", _exp2), _doc.format("exp2"))
log2 = elementwise("log2", np.log2, _real_composite("log2", _log2), _doc.format("log2"))
log10 = elementwise("log10", np.log10, _real_composite("log10", _log10), _doc.format("log10"))
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


def divmod(x: Any, y: Any, /) -> tuple[Any, Any]:  # noqa: A001
    """``(x // y, x % y)`` (NumPy's ``divmod``)."""
    if not is_traced(x, y):
        return np.divmod(x, y)
    return floor_divide(x, y), remainder(x, y)


def modf(x: Any, /) -> tuple[Any, Any]:
    """Fractional and integral parts, both with the sign of ``x`` (NumPy's ``modf``)."""
    if not is_traced(x):
        return np.modf(x)
    i = trunc(x)
    return subtract(x, i), i


def sinc(x: Any) -> Any:
    """The normalized sinc ``sin(pi x) / (pi x)``, with ``sinc(0) = 1`` (NumPy's ``sinc``).

    Near 0 a Taylor polynomial is used, so the derivatives at 0 are right too
    (0 for the first, ``-pi**2 / 3`` for the second).

    >>> import functrace.numpy as fnp
    >>> float(fnp.sinc(0.0)), float(fnp.sinc(0.5))
    (1.0, 0.6366197723675814)
    """
    if not is_traced(x):
        return np.sinc(x)
    x = asarray_or_tracer(x, "sinc")
    dt = core.get_aval(x).dtype
    if dt.kind in "biu":
        x = cast(x, np.dtype(np.float64))
    return _real_composite("sinc", _sinc)(x)


def nan_to_num(
    x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None
) -> Any:
    """NaN -> ``nan``, +inf -> ``posinf`` (default: the largest float), -inf -> ``neginf``
    (default: the most negative float); other values and integers pass unchanged.

    The derivative is 1 at the values that pass and 0 at the replaced ones (the
    replacements are constants, or traced values that get their own derivative).

    >>> import functrace.numpy as fnp
    >>> fnp.nan_to_num([fnp.nan, 1.0, -fnp.inf], neginf=-5.0)
    array([ 0.,  1., -5.])
    """
    if not is_traced(x, nan, posinf, neginf):
        return np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    x = _real_only("nan_to_num", x)
    aval = core.get_aval(x)
    if aval.dtype.kind not in "f":
        return x
    info = np.finfo(aval.dtype)
    out = x
    for bad, value in (
        (lx.ne(x, x), nan),
        (lx.eq(x, _k(x, np.inf)), info.max if posinf is None else posinf),
        (lx.eq(x, _k(x, -np.inf)), info.min if neginf is None else neginf),
    ):
        if isinstance(value, Tracer):
            v = broadcast_to_shape(cast(value, aval.dtype), aval.shape)
        else:
            v = lx.full_like(x, np.asarray(value, aval.dtype)[()])
        out = _where(bad, v, out)
    return out


# ---------------------------------------------------------------------------
# isclose, allclose, angle, real_if_close
# ---------------------------------------------------------------------------


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` for finite ``b``, or ``a == b``
    (so equal infinities are close); NaNs are close to each other only with
    ``equal_nan=True``. NumPy's ``isclose``, on tracers too; the result is bool.

    >>> import functrace.numpy as fnp
    >>> fnp.isclose([1.0, 1.1, fnp.inf], [1.0 + 1e-9, 1.0, fnp.inf])
    array([ True, False,  True])
    """
    if not is_traced(a, b, rtol, atol):
        return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    x, y = (_real_only("isclose", v) for v in (a, b))
    atol, rtol = (_real_only("isclose", v) for v in (atol, rtol))
    # As NumPy: b is made inexact first (abs of the smallest int would overflow).
    if type(y) is int:
        y = float(y)
    elif type(y) is not float and core.get_aval(y).dtype.kind in "biu":
        y = cast(y, np.dtype(np.float64))
    close = less_equal(absolute(subtract(x, y)), add(atol, multiply(rtol, absolute(y))))
    result = bitwise_or(bitwise_and(close, isfinite(y)), equal(x, y))
    if equal_nan:
        result = bitwise_or(result, bitwise_and(isnan(x), isnan(y)))
    return result


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """Whether ``isclose(a, b, rtol, atol, equal_nan)`` holds everywhere.

    On plain NumPy inputs a Python bool, as NumPy returns (``jit`` returns one too);
    on tracers a traced 0-d bool (its truth value is known only when the inputs are).

    >>> import functrace.numpy as fnp
    >>> fnp.allclose([1.0, 2.0], [1.0, 2.0 + 1e-9])
    True
    """
    if not is_traced(a, b, rtol, atol):
        return np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    from functrace.numpy._reductions import all as _all

    out = _all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    try:
        out.py = True  # a Python bool eagerly, so jit returns one too
    except AttributeError:  # not a staging tracer
        pass
    return out


def angle(z: Any, deg: bool = False) -> Any:
    """The counterclockwise angle from the positive real axis, in radians (degrees
    with ``deg=True``). On real arrays: 0 for ``x >= 0``, pi for ``x < 0`` and for
    ``-0.0``, NaN for NaN (NumPy's ``arctan2(0, x)``); its derivative is 0.

    Traced arrays must be real (complex tracers are not supported).

    >>> import functrace.numpy as fnp
    >>> fnp.angle([1.0, -2.0])
    array([0.        , 3.14159265])
    """
    if not is_traced(z):
        return np.angle(z, deg=deg)
    x = _real_only("angle", z)
    # piecewise constant in x: no derivative flows (atan2's would be 0/0 at x = 0)
    out = arctan2(0, lx.stop_gradient(x))
    return multiply(out, 180 / np.pi) if deg else out


def real_if_close(a: Any, tol: Any = 100) -> Any:
    """``a.real`` if ``a`` is complex with all imaginary parts below ``tol`` (machine
    epsilons when ``tol > 1``), else ``a`` unchanged. Traced arrays must be real, so
    on tracers this returns ``a`` itself.

    >>> import functrace.numpy as fnp
    >>> fnp.real_if_close([2.1 + 4e-14j, 5.2 + 3e-15j], tol=1000)
    array([2.1, 5.2])
    """
    if not is_traced(a):
        return np.real_if_close(a, tol=tol)
    x = _real_only("real_if_close", a)
    if not isinstance(x, Tracer):
        return np.asarray(x)
    return x


__all__ = [
    "abs",
    "absolute",
    "acos",
    "acosh",
    "add",
    "allclose",
    "angle",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "around",
    "asin",
    "asinh",
    "astype",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "cbrt",
    "ceil",
    "clip",
    "conj",
    "conjugate",
    "copysign",
    "cos",
    "cosh",
    "deg2rad",
    "degrees",
    "divide",
    "divmod",
    "equal",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "fix",
    "float_power",
    "floor",
    "floor_divide",
    "fmax",
    "fmin",
    "fmod",
    "greater",
    "greater_equal",
    "heaviside",
    "hypot",
    "imag",
    "invert",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "left_shift",
    "less",
    "less_equal",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "modf",
    "multiply",
    "nan_to_num",
    "negative",
    "not_equal",
    "positive",
    "pow",
    "power",
    "rad2deg",
    "radians",
    "real",
    "real_if_close",
    "reciprocal",
    "remainder",
    "right_shift",
    "rint",
    "round",
    "sign",
    "signbit",
    "sin",
    "sinc",
    "sinh",
    "sqrt",
    "square",
    "subtract",
    "tan",
    "tanh",
    "true_divide",
    "trunc",
    "where",
]
