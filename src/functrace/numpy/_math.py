"""Elementwise math of functrace.numpy (ufunc-like functions and composites)."""

from __future__ import annotations

from typing import Any

import numpy as np

from functrace import core
from functrace.core import Tracer
from functrace.lax import elementwise as lx
from functrace.numpy._core import (
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
add = elementwise("add", np.add, lx.add)
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
invert = elementwise("invert", np.invert, lx.bitwise_not)
bitwise_not = invert


def _floor(x: Any) -> Any:
    return x if x.dtype.kind in "biu" else lx.floor(x)


def _ceil(x: Any) -> Any:
    return x if x.dtype.kind in "biu" else lx.ceil(x)


def _rint(x: Any) -> Any:
    return x if x.dtype.kind in "biu" else lx.round(x, 1)


floor = elementwise("floor", np.floor, _floor)
ceil = elementwise("ceil", np.ceil, _ceil)
rint = elementwise("rint", np.rint, _rint)


def _trunc(x: Any) -> Any:
    if x.dtype.kind in "biu":
        return x
    return lx.select_n(lx.lt(x, lx.zeros_like(x)), lx.floor(x), lx.ceil(x))


trunc = elementwise("trunc", np.trunc, _trunc)
fix = trunc


def _logical(x: Any) -> Any:
    return x if x.dtype == np.bool_ else lx.ne(x, lx.zeros_like(x))


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
    if x.dtype.kind in "iu":
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
    if x.dtype.kind in "iu":
        # Integer powers by repeated squaring on concrete exponents only.
        yv = core.concrete_or_none(y)
        if yv is not None and yv.size and np.all(yv == yv.flat[0]) and yv.flat[0] >= 0:
            return lx.integer_pow(x, int(yv.flat[0]))
        raise TypeError("power: expected a float base or one concrete non-negative integer "
                        "exponent for an integer base, got a traced integer exponent.")
    return lx.pow(x, y)


_power_f = elementwise("power", np.power, _power)


def power(x: Any, y: Any, /) -> Any:
    """NumPy's ``power``; a Python int exponent becomes ``integer_pow`` (exact, cheap)."""
    if type(y) is int and isinstance(x, Tracer):
        aval = x.aval
        if aval.dtype.kind in "iufc" and (y >= 0 or aval.dtype.kind in "fc"):
            return lx.integer_pow(x, y)
    return _power_f(x, y)


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
    return true_divide(lx.full_like(x, 1), x) if x.dtype.kind in "fc" else \
        floor_divide(lx.full_like(x, 1), x)


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
    (x, y), _ = promote_and_broadcast("where", np.add, [asarray_or_tracer(x, "where"),
                                                       asarray_or_tracer(y, "where")])
    c = c if core.get_aval(c).dtype == np.bool_ else lx.ne(c, lx.zeros_like(c))
    shape = broadcast_shapes("where", core.get_aval(c).shape, core.get_aval(x).shape)
    return lx.select_n(broadcast_to_shape(c, shape), broadcast_to_shape(y, shape),
                       broadcast_to_shape(x, shape))


def clip(a: Any, a_min: Any = None, a_max: Any = None, /, *, min: Any = None,  # noqa: A002
         max: Any = None) -> Any:  # noqa: A002
    """Clip values to ``[a_min, a_max]`` (either may be None).

    NOTE: the gradient passes where ``a_min <= a <= a_max`` (ends included).
    """
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    if lo is None and hi is None:
        raise ValueError("clip: expected at least one of a_min and a_max, got neither.")
    if not is_traced(a, lo, hi):
        return np.clip(a, lo, hi)
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
    m = maximum(x, y)
    m = lx.stop_gradient(where(isfinite(m), m, 0.0))
    return add(m, log(add(exp(subtract(x, m)), exp(subtract(y, m)))))


def isfinite(x: Any, /) -> Any:
    if not is_traced(x):
        return np.isfinite(x)
    x = asarray_or_tracer(x)
    if x.dtype.kind not in "fc":
        return lx.eq(x, x) if False else broadcast_to_shape(np.bool_(True), x.shape)
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
    return lx.eq(abs(x), lx.full_like(x, np.inf))


def _real_only(fname: str, x: Any) -> Any:
    x = asarray_or_tracer(x, fname)
    if core.get_aval(x).dtype.kind == "c":
        raise NotImplementedError(f"{fname}: expected a real traced array, got "
                                  f"{core.get_aval(x).dtype.name}. Complex parts of traced arrays "
                                  f"are not supported yet (lax has no real/imag/conj primitive).")
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
        raise TypeError("round: expected out=None, got an output array. functrace.numpy never "
                        "writes in place: use the returned array.")
    x = _real_only("round", a)
    dt = core.get_aval(x).dtype
    decimals = int(decimals)
    if dt.kind in "biu":
        if decimals >= 0:
            return x
        scale = 10.0 ** -decimals
        xf = cast(x, np.dtype(np.float64))
        y = lx.round(lx.div(xf, lx.full_like(xf, scale)), 1)
        return cast(lx.mul(y, lx.full_like(y, scale)), dt)
    if decimals == 0:
        return lx.round(x, 1)
    if decimals > 0:
        scale = lx.full_like(x, 10.0 ** decimals)
        return lx.div(lx.round(lx.mul(x, scale), 1), scale)
    scale = lx.full_like(x, 10.0 ** -decimals)
    return lx.mul(lx.round(lx.div(x, scale), 1), scale)


around = round


def astype(x: Any, dtype: Any, /) -> Any:
    if not is_traced(x):
        return np.asarray(x).astype(dtype)
    return cast(asarray_or_tracer(x), np.dtype(dtype))


__all__ = [n for n in dir() if not n.startswith("_") and n not in {
    "annotations", "Any", "np", "core", "Tracer", "lx", "asarray_or_tracer", "broadcast_shapes",
    "broadcast_to_shape", "cast", "elementwise", "is_traced", "promote_and_broadcast"}]
