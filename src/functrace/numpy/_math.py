"""Elementwise math of functrace.numpy: NumPy's ufuncs that map onto lax primitives
(arithmetic, comparisons, bitwise and logical operations, rounding), and the
elementwise functions built on them (``clip``, ``isfinite``, ``round``, ``nan_to_num``,
``isclose``...).

The transcendental functions that are composites of several primitives (``arcsin``,
``hypot``, ``logaddexp``...) are in ``_special``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from functrace import _debug, core, dtypes
from functrace.core import Tracer
from functrace.lax import elementwise as lx
from functrace.lax import extras as lxc
from functrace.lax import reductions as lr
from functrace.numpy._core import (
    _finish,
    asarray_or_tracer,
    broadcast_to_shape,
    cast,
    elementwise,
    no_out,
    promote_and_broadcast,
)
from functrace.numpy._dispatch import numpy_path

# ---------------------------------------------------------------------------
# The lax side of the ufuncs that are not one primitive
# ---------------------------------------------------------------------------


def _kind(x: Any) -> str:
    """The dtype kind of an operand (a tracer, a NumPy value or a weak Python scalar)."""
    return core.get_aval(x).dtype.kind


def _add(x: Any, y: Any) -> Any:
    return lx.bitwise_or(x, y) if _kind(x) == "b" else lx.add(x, y)  # NumPy: True + True


def _floor(x: Any) -> Any:
    return x if _kind(x) in "biu" else lx.floor(x)


def _ceil(x: Any) -> Any:
    return x if _kind(x) in "biu" else lx.ceil(x)


def _rint(x: Any) -> Any:
    return x if _kind(x) in "biu" else lx.round(x, 1)


def _trunc(x: Any) -> Any:
    if _kind(x) in "biu":
        return x
    return lx.select_n(lx.lt(x, lx.zeros_like(x)), lx.floor(x), lx.ceil(x))


def _logical(x: Any) -> Any:
    return x if _kind(x) == "b" else lx.ne(x, lx.zeros_like(x))


def _logical_and(x: Any, y: Any) -> Any:
    return lx.bitwise_and(_logical(x), _logical(y))


def _logical_or(x: Any, y: Any) -> Any:
    return lx.bitwise_or(_logical(x), _logical(y))


def _logical_xor(x: Any, y: Any) -> Any:
    return lx.bitwise_xor(_logical(x), _logical(y))


def _floor_divide(x: Any, y: Any) -> Any:
    if _kind(x) in "iu":  # lax.div rounds toward zero: one less where signs differ
        q = lx.div(x, y)
        zero = lx.zeros_like(q)
        down = lx.bitwise_and(lx.ne(lx.rem(x, y), zero), lx.ne(lx.lt(x, zero), lx.lt(y, zero)))
        return lx.select_n(down, q, lx.sub(q, lx.full_like(q, 1)))
    return _float_floor_divide(x, y)


def _float_floor_divide(x: Any, y: Any) -> Any:
    # NumPy's algorithm (npy_divmod), so jit agrees with eager NumPy at infinities, zeros
    # and ties: (x - fmod(x, y)) / y, one less where fmod's sign differs from y's, then
    # rounded to the nearest integer; x / y where y == 0, a zero with x / y's sign where
    # the quotient is 0.
    zero, one = lx.zeros_like(x), lx.full_like(x, 1)
    mod = lx.rem(x, y)
    div = lx.div(lx.sub(x, mod), y)
    fix = lx.bitwise_and(lx.ne(mod, zero), lx.ne(lx.lt(y, zero), lx.lt(mod, zero)))
    div = lx.select_n(fix, div, lx.sub(div, one))
    fl = lx.floor(div)
    fl = lx.select_n(lx.gt(lx.sub(div, fl), lx.full_like(x, 0.5)), fl, lx.add(fl, one))
    quotient = lx.div(x, y)
    fl = lx.select_n(lx.eq(div, zero), fl, lx.mul(zero, quotient))  # 0 * q: q's sign
    return lx.select_n(lx.eq(y, zero), fl, quotient)


def _remainder(x: Any, y: Any) -> Any:
    # NumPy's mod has the sign of the divisor: fmod corrected where signs differ.
    r = lx.rem(x, y)
    zero = lx.zeros_like(r)
    fix_sign = lx.bitwise_and(lx.ne(r, zero), lx.ne(lx.lt(r, zero), lx.lt(y, zero)))
    return lx.select_n(fix_sign, r, lx.add(r, y))


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


# ---------------------------------------------------------------------------
# The ufuncs: NumPy's function on plain inputs, the lax primitive(s) on tracers
# ---------------------------------------------------------------------------
negative = elementwise("negative", np.negative, lx.neg)
absolute = elementwise("absolute", np.absolute, lx.abs)
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
subtract = elementwise("subtract", np.subtract, lx.sub)
multiply = elementwise("multiply", np.multiply, lx.mul)
true_divide = elementwise("true_divide", np.true_divide, lx.div)
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
invert = elementwise("invert", np.invert, lx.bitwise_not)
# ... and those whose lax side is a small composite (defined above)
add = elementwise("add", np.add, _add)
floor = elementwise("floor", np.floor, _floor)
ceil = elementwise("ceil", np.ceil, _ceil)
rint = elementwise("rint", np.rint, _rint)
trunc = elementwise("trunc", np.trunc, _trunc)
logical_and = elementwise("logical_and", np.logical_and, _logical_and)
logical_or = elementwise("logical_or", np.logical_or, _logical_or)
logical_xor = elementwise("logical_xor", np.logical_xor, _logical_xor)
logical_not = elementwise("logical_not", np.logical_not, lambda x: lx.bitwise_not(_logical(x)))
floor_divide = elementwise("floor_divide", np.floor_divide, _floor_divide)
remainder = elementwise("remainder", np.remainder, _remainder)
_power_f = elementwise("power", np.power, _power)

# NumPy's other names for them
abs = absolute  # noqa: A001
divide = true_divide
atan2 = arctan2
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift
bitwise_not = invert
fix = trunc
mod = remainder


def power(x: Any, y: Any, /, *, _op: bool = False) -> Any:
    """NumPy's ``power``; a Python int exponent becomes ``integer_pow`` (exact, cheap)."""
    if dtypes.promotion.maybe_strict:  # numpy_dtype_promotion="strict"
        dtypes.check_operand_promotion("power", (x, y), np.power, dtypes.from_user(1))
    if type(y) is int and isinstance(x, Tracer):
        aval = x.aval
        if aval.dtype.kind in "iufc" and (y >= 0 or aval.dtype.kind in "fc"):
            return _finish(lx.integer_pow(x, y), aval.dtype, _op)
        if aval.dtype.kind in "iu":  # NumPy refuses integers to negative powers too
            raise _int_power_error(f"the negative exponent {y}")
    return _power_f._operator(x, y) if _op else _power_f(x, y)  # type: ignore[attr-defined]


power._operator = functools.partial(power, _op=True)  # type: ignore[attr-defined]
pow = power  # noqa: A001  (NumPy 2's alias)


@numpy_path(lambda x, /: np.square(x))
def square(x: Any, /) -> Any:
    """``x * x`` (NumPy's ``square``)."""
    return lx.integer_pow(asarray_or_tracer(x), 2)


@numpy_path(lambda x, /: np.reciprocal(x))
def reciprocal(x: Any, /) -> Any:
    """``1 / x`` (NumPy's ``reciprocal``; integers divide as NumPy does)."""
    x = asarray_or_tracer(x)
    return (
        true_divide(lx.full_like(x, 1), x)
        if x.dtype.kind in "fc"
        else floor_divide(lx.full_like(x, 1), x)
    )


@numpy_path(lambda x, /: np.positive(x))
def positive(x: Any, /) -> Any:
    """``+x``: the value itself as an array (NumPy's ``positive``); its derivative is 1."""
    return asarray_or_tracer(x)


def _clip_bounds(a_min: Any, a_max: Any, min: Any, max: Any) -> tuple[Any, Any]:  # noqa: A002
    """The (lower, upper) bounds of ``clip`` from either spelling."""
    if (a_min is not None and min is not None) or (a_max is not None and max is not None):
        raise ValueError(
            "clip: expected each bound once, got both a_min/min or a_max/max. "
            "Pass either the a_min=/a_max= or the min=/max= spelling."
        )
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    if lo is None and hi is None:
        raise ValueError("clip: expected at least one of a_min and a_max, got neither.")
    return lo, hi


def _np_clip(
    a: Any,
    a_min: Any = None,
    a_max: Any = None,
    out: None = None,
    *,
    min: Any = None,
    max: Any = None,
) -> Any:  # noqa: A002
    bounds = _clip_bounds(a_min, a_max, min, max)
    if _debug.flags.rank_promotion != "allow":  # as the traced path's promotion checks
        shapes = [np.shape(v) for v in (a, *bounds) if v is not None]
        _debug.check_rank_promotion("clip", shapes, 4)
    return np.clip(a, *bounds, out=out)


@numpy_path(_np_clip, promotes=True)
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
    lo, hi = _clip_bounds(a_min, a_max, min, max)
    no_out("clip", out)
    out = asarray_or_tracer(a, "clip")
    if lo is not None:
        out = _clip_side(out, lo, lx.lt)
    if hi is not None:
        out = _clip_side(out, hi, lx.gt)
    return out


def _clip_side(x: Any, bound: Any, beyond: Any) -> Any:
    # the bound where x is beyond it or the bound is NaN: NaN in x or in a bound gives
    # NaN (as np.clip and JAX's clip), eagerly and traced alike
    (x, b), _ = promote_and_broadcast("clip", np.add, [x, asarray_or_tracer(bound, "clip")])
    pick = beyond(x, b)
    known_number = isinstance(bound, (int, float)) and bound == bound
    if core.get_aval(b).dtype.kind in "fc" and not known_number:
        pick = lx.bitwise_or(pick, lx.ne(b, b))
    return lx.select_n(pick, x, b)


@numpy_path(lambda x, /: np.isfinite(x))
def isfinite(x: Any, /) -> Any:
    """Elementwise True where ``x`` is neither infinite nor NaN (always True for integers
    and bools); a boolean array, so it has no derivative."""
    x = asarray_or_tracer(x)
    aval = core.get_aval(x)  # x may be a Python scalar inside a trace
    if aval.dtype.kind not in "fc":
        return broadcast_to_shape(np.bool_(True), aval.shape)
    if aval.dtype.kind == "c":  # both parts finite
        return lx.bitwise_and(isfinite(lxc.real(x)), isfinite(lxc.imag(x)))
    return lx.lt(abs(x), lx.full_like(x, np.inf))


@numpy_path(lambda x, /: np.isnan(x))
def isnan(x: Any, /) -> Any:
    """Elementwise True where ``x`` is NaN (for complex: either part); a boolean array."""
    x = asarray_or_tracer(x)
    return lx.ne(x, x)


@numpy_path(lambda x, /: np.isinf(x))
def isinf(x: Any, /) -> Any:
    """Elementwise True where ``x`` is ``+inf`` or ``-inf`` (never for integers and bools);
    a boolean array."""
    x = asarray_or_tracer(x)
    aval = core.get_aval(x)
    if aval.dtype.kind not in "fc":  # integers and bools are never infinite
        return broadcast_to_shape(np.bool_(False), aval.shape)
    if aval.dtype.kind == "c":  # either part infinite
        return lx.bitwise_or(isinf(lxc.real(x)), isinf(lxc.imag(x)))
    return lx.eq(abs(x), lx.full_like(x, np.inf))


def _real_only(fname: str, x: Any) -> Any:
    x = asarray_or_tracer(x, fname)
    if core.get_aval(x).dtype.kind == "c":
        raise NotImplementedError(
            f"{fname}: expected a real traced array, got "
            f"{core.get_aval(x).dtype.name}: its result's dtype would depend on the "
            f"values (real when the imaginary parts are small), which a trace cannot know."
        )
    return x


def _is_complex(x: Any) -> bool:
    return core.get_aval(x).dtype.kind == "c"


def _by_parts(fn: Any, x: Any) -> Any:
    """``fn`` applied to the real and imaginary parts of a complex ``x`` separately."""
    return lxc.complex(fn(lxc.real(x)), fn(lxc.imag(x)))


@numpy_path(lambda x, /: np.conjugate(x))
def conjugate(x: Any, /) -> Any:
    """The complex conjugate (the identity on real arrays)."""
    x = asarray_or_tracer(x, "conjugate")
    return lxc.conj(x) if _is_complex(x) else x


conj = conjugate


@numpy_path(lambda val: np.real(val))
def real(val: Any) -> Any:
    """The real part (the array itself for real arrays)."""
    return lxc.real(asarray_or_tracer(val, "real"))


@numpy_path(lambda val: np.imag(val))
def imag(val: Any) -> Any:
    """The imaginary part (zeros of the same dtype for real arrays)."""
    return lxc.imag(asarray_or_tracer(val, "imag"))


@numpy_path(lambda a, decimals=0, out=None: np.round(a, decimals, out))
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
    no_out("round", out)
    x = asarray_or_tracer(a, "round")
    if _is_complex(x):  # each part, as NumPy
        return _by_parts(lambda part: round(part, decimals), x)
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


def _np_astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    a, dt = np.asarray(x), np.dtype(dtype)
    if a.dtype.kind == "c" and dt.kind == "b":
        return np.not_equal(a, 0)
    out = dtypes.convert(a, dt)
    return out.copy() if copy and out is a else out


@numpy_path(_np_astype)
def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    """``x`` converted to ``dtype`` (``np.float32``, ``"float32"``, ``float``... all work).

    Conversions are JAX's (``functrace.dtypes.convert``), also on NumPy inputs: floats
    to integers truncate toward zero and saturate (NaN gives 0, +-inf and values out of
    range the nearest limit; NumPy's values there depend on the platform); complex to
    bool is ``x != 0``, to other real dtypes the real part.

    >>> import functrace.numpy as fnp
    >>> fnp.astype([1.5, 2.5], "int32")
    array([1, 2], dtype=int32)
    >>> fnp.astype([float("nan"), float("inf"), -1e30], "int8")
    array([   0,  127, -128], dtype=int8)
    """
    x = asarray_or_tracer(x)
    dt = np.dtype(dtype)
    if core.get_aval(x).dtype.kind == "c" and dt.kind == "b":
        return not_equal(x, 0)
    return cast(x, dt)


@numpy_path(lambda x, y, /: np.divmod(x, y))
def divmod(x: Any, y: Any, /) -> tuple[Any, Any]:  # noqa: A001
    """``(x // y, x % y)`` (NumPy's ``divmod``)."""
    return floor_divide(x, y), remainder(x, y)


@numpy_path(lambda x, /: np.modf(x))
def modf(x: Any, /) -> tuple[Any, Any]:
    """Fractional and integral parts, both with the sign of ``x`` (NumPy's ``modf``)."""
    i = trunc(x)
    return subtract(x, i), i


@numpy_path(
    lambda x, copy=True, nan=0.0, posinf=None, neginf=None: np.nan_to_num(
        x, copy=copy, nan=nan, posinf=posinf, neginf=neginf
    )
)
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
    x = asarray_or_tracer(x, "nan_to_num")
    if _is_complex(x):  # each part, as NumPy
        return _by_parts(lambda part: nan_to_num(part, True, nan, posinf, neginf), x)
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


@numpy_path(
    lambda a, b, rtol=1e-05, atol=1e-08, equal_nan=False: np.isclose(
        a, b, rtol=rtol, atol=atol, equal_nan=equal_nan
    ),
    promote_args=(0, 1),
)
def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` for finite ``b``, or ``a == b``
    (so equal infinities are close); NaNs are close to each other only with
    ``equal_nan=True``. NumPy's ``isclose``, on tracers too; the result is bool.

    >>> import functrace.numpy as fnp
    >>> fnp.isclose([1.0, 1.1, fnp.inf], [1.0 + 1e-9, 1.0, fnp.inf])
    array([ True, False,  True])
    """
    x, y = (v if isinstance(v, (int, float)) else asarray_or_tracer(v, "isclose") for v in (a, b))
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


@numpy_path(
    lambda a, b, rtol=1e-05, atol=1e-08, equal_nan=False: np.allclose(
        a, b, rtol=rtol, atol=atol, equal_nan=equal_nan
    ),
    promote_args=(0, 1),
)
def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """Whether ``isclose(a, b, rtol, atol, equal_nan)`` holds everywhere.

    On plain NumPy inputs a Python bool, as NumPy returns (``jit`` returns one too);
    on tracers a traced 0-d bool (its truth value is known only when the inputs are).

    >>> import functrace.numpy as fnp
    >>> fnp.allclose([1.0, 2.0], [1.0, 2.0 + 1e-9])
    True
    """
    close = isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    out = lr.reduce_min(close, tuple(range(core.get_aval(close).ndim)))  # fnp.all
    try:
        out.py = True  # a Python bool eagerly, so jit returns one too
    except AttributeError:  # not a staging tracer
        pass
    return out


@numpy_path(lambda z, deg=False: np.angle(z, deg=deg))
def angle(z: Any, deg: bool = False) -> Any:
    """The counterclockwise angle from the positive real axis, in radians (degrees
    with ``deg=True``). On real arrays: 0 for ``x >= 0``, pi for ``x < 0`` and for
    ``-0.0``, NaN for NaN (NumPy's ``arctan2(0, x)``); its derivative is 0.

    On complex arrays ``arctan2(imag(z), real(z))``, differentiable.

    >>> import functrace.numpy as fnp
    >>> fnp.angle([1.0, -2.0])
    array([0.        , 3.14159265])
    """
    x = asarray_or_tracer(z, "angle")
    if _is_complex(x):
        out = arctan2(lxc.imag(x), lxc.real(x))
    else:
        # piecewise constant in x: no derivative flows (atan2's would be 0/0 at x = 0)
        out = arctan2(0, lx.stop_gradient(x))
    return multiply(out, 180 / np.pi) if deg else out


@numpy_path(lambda a, tol=100: np.real_if_close(a, tol=tol))
def real_if_close(a: Any, tol: Any = 100) -> Any:
    """``a.real`` if ``a`` is complex with all imaginary parts below ``tol`` (machine
    epsilons when ``tol > 1``), else ``a`` unchanged. Traced arrays must be real (the
    result's dtype would depend on the values), so on tracers this returns ``a``
    itself.

    >>> import functrace.numpy as fnp
    >>> fnp.real_if_close([2.1 + 4e-14j, 5.2 + 3e-15j], tol=1000)
    array([2.1, 5.2])
    """
    x = _real_only("real_if_close", a)
    if not isinstance(x, Tracer):
        return np.asarray(x)
    return x


__all__ = [
    "abs",
    "absolute",
    "add",
    "allclose",
    "angle",
    "arctan2",
    "around",
    "astype",
    "atan2",
    "bitwise_and",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "ceil",
    "clip",
    "conj",
    "conjugate",
    "cos",
    "divide",
    "divmod",
    "equal",
    "exp",
    "expm1",
    "fix",
    "floor",
    "floor_divide",
    "fmod",
    "greater",
    "greater_equal",
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
    "log1p",
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
    "real",
    "real_if_close",
    "reciprocal",
    "remainder",
    "right_shift",
    "rint",
    "round",
    "sign",
    "sin",
    "sqrt",
    "square",
    "subtract",
    "tan",
    "tanh",
    "true_divide",
    "trunc",
]
