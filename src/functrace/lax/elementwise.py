"""Elementwise primitives: unary math, binary arithmetic, comparisons, select, casts.

Each primitive is one block: its definition, NumPy impl, abstract eval, JVP and
(if linear) transpose rule. Operands of binary primitives have equal shapes and
dtypes; broadcasting and promotion are done by ``functrace.numpy``.

This module presents the whole elementwise family. The primitives the other
families' rules are written in (``neg``, ``add``, ``sub``, ``mul``, ``div``, ``exp``,
``log``, ``log1p``, ``select_n``, ``convert_element_type``, ``full_like``) and the
factories ``unop``/``binop`` are defined in ``functrace.lax.base``, the special
functions (``erf``, ``lgamma``, ``igamma``, ``betainc``, ...) in
``functrace.lax.special``; both are re-exported here.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.interpreters import numba_rules as _nr
from functrace.interpreters.numba_rules import numba_emitters
from functrace.lax._util import (
    check_dtype_kind,
    check_same_dtypes,
    check_same_shapes,
    eager_check_binary,
    register,
    register_checked,
)
from functrace.lax.base import (
    _ANY,
    _FLOAT,
    _INT_BOOL,
    _NUMERIC,
    _bind1,
    _bind2,
    _binop_abstract,
    _unop_abstract,
    add,
    add_p,
    binop,
    broadcast_in_dim,
    convert_element_type,
    convert_element_type_p,
    div,
    div_p,
    elementwise_numpy,
    exp,
    exp_p,
    full_like,
    log,
    log1p,
    log1p_p,
    log_p,
    mul,
    mul_p,
    neg,
    neg_p,
    select,
    select_n,
    select_n_p,
    sub,
    sub_p,
    unop,
    zeros_like,
)
from functrace.lax.special import (
    betainc,
    betainc_p,
    digamma,
    digamma_p,
    erf,
    erf_p,
    erfc,
    erfc_p,
    igamma,
    igamma_p,
    igammac,
    igammac_p,
    lgamma,
    lgamma_p,
    polygamma,
    polygamma_p,
)

# ---------------------------------------------------------------------------
# Arithmetic (neg, add, sub, mul, div: lax/base.py)
# ---------------------------------------------------------------------------


rem_p = binop("rem", np.fmod)
rem = _bind2(rem_p)
ad.defjvp(  # d rem(x, y) = dx - trunc(x / y) dy
    rem_p,
    lambda g, x, y: g,
    lambda g, x, y: mul(neg(g), round(div(sub(x, rem(x, y)), y))),
)


def _rem_emit(ctx: _nr.EmitContext) -> str:
    x, y = ctx.args
    if ctx.out_dtype.kind != "i":
        return f"np.fmod({x}, {y})"
    # Numba's np.fmod on signed integers is an unsigned remainder (wrong for negative
    # operands): take Python's floor remainder and move it to the dividend's sign.
    # NumPy gives 0 for y == 0 and for y == -1 (where x % y could overflow).
    r = f"({x} % {y})"
    return (
        f"({_nr.lit(ctx.out_dtype, 0)} if ({y} == 0 or {y} == -1) else "
        f"({r} - {y} if ({r} != 0 and (({r} < 0) != ({x} < 0))) else {r}))"
    )


numba_emitters[rem_p] = _rem_emit

max_p = binop("max", np.maximum, _ANY, "a numeric or boolean")
max = _bind2(max_p)  # noqa: A001
min_p = binop("min", np.minimum, _ANY, "a numeric or boolean")
min = _bind2(min_p)  # noqa: A001


def _minmax_jvp_side(pick: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    # NOTE: at ties each operand gets half the tangent, so d max(x, x)/dx = 1.
    def f(g: Any, x: Any, y: Any) -> Any:
        w = select_n(eq(x, y), convert_element_type(pick(x, y), g.dtype), full_like(g, 0.5))
        return mul(g, w)

    return f


ad.defjvp(
    max_p,
    _minmax_jvp_side(lambda x, y: gt(x, y)),
    _minmax_jvp_side(lambda x, y: lt(x, y)),
)
ad.defjvp(
    min_p,
    _minmax_jvp_side(lambda x, y: lt(x, y)),
    _minmax_jvp_side(lambda x, y: gt(x, y)),
)


def _maximum_emit(ctx: _nr.EmitContext) -> str | None:
    x, y = ctx.args
    if ctx.out_dtype.kind == "c":
        return None  # complex ordering: the impl's (NumPy's) lexicographic rule
    return f"({x} | {y})" if ctx.out_dtype.kind == "b" else f"np.maximum({x}, {y})"


def _minimum_emit(ctx: _nr.EmitContext) -> str | None:
    x, y = ctx.args
    if ctx.out_dtype.kind == "c":
        return None
    return f"({x} & {y})" if ctx.out_dtype.kind == "b" else f"np.minimum({x}, {y})"


numba_emitters[max_p], numba_emitters[min_p] = _maximum_emit, _minimum_emit


def _integer_pow_abstract(x: ShapedArray, *, y: int) -> ShapedArray:
    check_dtype_kind("integer_pow", x, _NUMERIC, "a numeric")
    if not isinstance(y, int):
        raise TypeError(f"integer_pow: expected a Python int exponent y, got {y!r}.")
    if y < 0 and x.dtype.kind in "iu":
        raise ValueError(
            f"integer_pow: expected a non-negative exponent for an integer base, got {y}."
        )
    return x


def _integer_pow_impl(x: Any, *, y: int) -> Any:
    if y == 2:
        return np.multiply(x, x)
    if y >= 0:
        return np.power(x, y)
    x = np.asarray(x)  # (a Python scalar operand has no dtype)
    return np.power(x, float(y)).astype(x.dtype)


integer_pow_p = register(Primitive("integer_pow"), _integer_pow_impl, _integer_pow_abstract)
batching.defvectorized(integer_pow_p)


def integer_pow(x: Any, y: int) -> Any:
    """``x ** y`` for a static Python int ``y``."""
    return integer_pow_p.bind(x, y=int(y))


def _integer_pow_jvp(g: Any, x: Any, *, y: int) -> Any:
    # d x^y = y x^(y-1) dx ; NOTE: x**0 has derivative 0 everywhere, also at x = 0.
    if y == 0:
        return zeros_like(g)
    if y == 1:
        return g
    coef = full_like(x, y)
    return mul(g, mul(coef, x if y == 2 else integer_pow(x, y - 1)))


ad.defjvp(integer_pow_p, _integer_pow_jvp)


def _integer_pow_emit(ctx: _nr.EmitContext) -> str | None:
    (x,), y = ctx.args, ctx.params["y"]
    one = _nr.lit(ctx.out_dtype, 1)
    n = abs(y)
    if n == 0:
        return one
    if n > 16:
        return None  # rare: the impl (np.power) is exact enough and simpler
    prod = "(" + " * ".join([x] * n) + ")"
    if y > 0:
        return prod
    if ctx.out_dtype.kind == "c":  # Numba raises on a complex zero divisor; the impl: nan
        return f"({one} / {prod} if {prod} != 0 else np.complex128(complex(np.nan, np.nan)))"
    return f"({one} / {prod})"


numba_emitters[integer_pow_p] = _integer_pow_emit


def _int_exponent(x_dtype: np.dtype, y_dtype: np.dtype) -> bool:
    """JAX's one mixed case of ``pow``: a float or complex base, an integer exponent."""
    return x_dtype.kind in "fc" and y_dtype.kind in "iu"


_pow_same_dtypes = _binop_abstract("pow", _NUMERIC, "a numeric")


def _pow_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.dtype != y.dtype and _int_exponent(x.dtype, y.dtype):
        check_same_shapes("pow", x, y)
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    return _pow_same_dtypes(x, y)


def _pow_impl(x: Any, y: Any) -> Any:
    eager_check_binary("pow", x, y)
    ax, ay = core.get_aval(x), core.get_aval(y)
    if ax.dtype != ay.dtype:
        if _int_exponent(ax.dtype, ay.dtype):
            # computed in double precision, rounded once to the base's dtype: the bits
            # of the compiled kernel (and of JAX's x ** n)
            wide = np.result_type(ax.dtype, np.float64)
            out = np.power(np.asarray(x, wide), np.asarray(y).astype(wide))
            return out.astype(ax.dtype)
        check_same_dtypes("pow", ax, ay)  # as traced: no promotion
    if ay.dtype.kind == "i" and np.any(y < 0):  # an integer base (equal dtypes)
        raise ValueError(
            "pow: expected non-negative exponents for an integer base (NumPy's rule), got the "
            f"negative exponent {np.min(y)}. Use a float base (2.0 ** n, x.astype(float) ** n)."
        )
    return np.power(x, y)


pow_p = Primitive("pow")  # integers too: x ** n with a traced integer n
register(pow_p, _pow_impl, _pow_abstract)
elementwise_numpy[pow_p] = np.power
batching.defbroadcasting(pow_p)
pow = _bind2(pow_p)  # noqa: A001


def _pow_jvp_lhs(g: Any, x: Any, y: Any) -> Any:
    # d x^y / dx = y x^(y-1); NOTE: 0 where y == 0 (also at x = 0). The double select keeps
    # every higher derivative finite where its limit is: where y == 0 the unselected
    # branch is computed with y = 1 (x^0, whose own derivative is 0), not 0 * x^-1.
    xd, yd = core.get_aval(x).dtype, core.get_aval(y).dtype
    if xd != yd and _int_exponent(xd, yd):
        # an integer exponent: n x^(n-1) with the power's exponent still an integer (its
        # bits as JAX's), the coefficient in x's dtype
        y_is_0 = eq(y, zeros_like(y))
        n = select_n(y_is_0, y, full_like(y, 1))
        jac = mul(convert_element_type(n, xd), pow(x, sub(n, full_like(n, 1))))
        return mul(g, select_n(y_is_0, jac, zeros_like(jac)))
    if not isinstance(y, core.Tracer) and not np.any(np.asarray(y) == 0):
        return mul(g, mul(y, pow(x, sub(y, full_like(y, 1)))))  # a known exponent, no 0
    y_is_0 = eq(y, zeros_like(y))
    y_safe = select_n(y_is_0, y, full_like(y, 1))
    jac = mul(y_safe, pow(x, sub(y_safe, full_like(y, 1))))
    return mul(g, select_n(y_is_0, jac, zeros_like(y)))


def _pow_jvp_rhs(g: Any, x: Any, y: Any) -> Any:
    # d x^y / dy = log(x) x^y; NOTE: 0 at x == 0 (0^y = 0 for y > 0; also at y = 0).
    is_zero = eq(x, zeros_like(x))
    safe_x = select_n(is_zero, x, full_like(x, 1))
    return mul(g, mul(log(safe_x), pow(x, y)))


def _pow_emit(ctx: _nr.EmitContext) -> str | None:
    xd, yd = ctx.in_dtypes[0], ctx.in_dtypes[1]
    if xd.kind in "iu":
        return None  # the impl: NumPy's check of negative exponents
    if xd != yd:  # an integer exponent: in double precision, as the impl
        wide = np.result_type(xd, np.float64).name
        return f"np.power(np.{wide}({ctx.args[0]}), np.{wide}({ctx.args[1]}))"
    return f"np.power({ctx.args[0]}, {ctx.args[1]})"


ad.defjvp(pow_p, _pow_jvp_lhs, _pow_jvp_rhs)
numba_emitters[pow_p] = _pow_emit

atan2_p = binop("atan2", np.arctan2, _FLOAT, "a floating-point")
atan2 = _bind2(atan2_p)


def _atan2_denominator(x: Any, y: Any) -> Any:
    return add(mul(x, x), mul(y, y))


ad.defjvp(  # d atan2(x, y) = (y dx - x dy) / (x^2 + y^2)
    atan2_p,
    lambda g, x, y: div(mul(g, y), _atan2_denominator(x, y)),
    lambda g, x, y: neg(div(mul(g, x), _atan2_denominator(x, y))),
)
numba_emitters[atan2_p] = "np.arctan2({0}, {1})"

# ---------------------------------------------------------------------------
# Unary math (exp, log, log1p: lax/base.py; erf and the special functions: lax/special.py)
# ---------------------------------------------------------------------------

expm1_p = unop("expm1", np.expm1)
expm1 = _bind1(expm1_p)
ad.defjvp2(expm1_p, lambda g, ans, x: mul(g, add(ans, full_like(ans, 1))))  # d = (ans+1) dx
numba_emitters[expm1_p] = "np.expm1({0})"

sin_p = unop("sin", np.sin)
sin = _bind1(sin_p)
ad.defjvp(sin_p, lambda g, x: mul(g, cos(x)))  # d sin = cos dx
numba_emitters[sin_p] = "np.sin({0})"

cos_p = unop("cos", np.cos)
cos: Callable[[Any], Any] = _bind1(cos_p)
ad.defjvp(cos_p, lambda g, x: neg(mul(g, sin(x))))  # d cos = -sin dx
numba_emitters[cos_p] = "np.cos({0})"

tan_p = unop("tan", np.tan)
tan = _bind1(tan_p)
ad.defjvp2(tan_p, lambda g, ans, x: mul(g, add(full_like(ans, 1), mul(ans, ans))))  # 1 + tan^2
numba_emitters[tan_p] = "np.tan({0})"

tanh_p = unop("tanh", np.tanh)
tanh = _bind1(tanh_p)
ad.defjvp2(tanh_p, lambda g, ans, x: mul(g, sub(full_like(ans, 1), mul(ans, ans))))  # 1 - tanh^2
numba_emitters[tanh_p] = "np.tanh({0})"


def _logistic_impl(x: Any) -> Any:
    # 1 / (1 + exp(-x)), computed without overflow warnings for large |x|.
    with np.errstate(over="ignore"):
        return np.reciprocal(np.add(np.exp(np.negative(x)), 1))


logistic_p = unop("logistic", _logistic_impl)
logistic = _bind1(logistic_p)
ad.defjvp2(  # d sigma = sigma (1 - sigma) dx
    logistic_p, lambda g, ans, x: mul(g, mul(ans, sub(full_like(ans, 1), ans)))
)


def _logistic_emit(ctx: _nr.EmitContext) -> str:
    one = _nr.lit(ctx.out_dtype, 1)
    return f"({one} / (np.exp(-{ctx.args[0]}) + {one}))"  # 1 / (1 + e^-x), no overflow trap


numba_emitters[logistic_p] = _logistic_emit

sqrt_p = unop("sqrt", np.sqrt)
sqrt = _bind1(sqrt_p)
# d sqrt = dx / (2 sqrt); NOTE: infinite at 0, as in NumPy-based autodiff tools.
ad.defjvp2(sqrt_p, lambda g, ans, x: div(g, mul(full_like(ans, 2), ans)))
numba_emitters[sqrt_p] = "np.sqrt({0})"


def _rsqrt_impl(x: Any) -> Any:
    return np.reciprocal(np.sqrt(x))


rsqrt_p = unop("rsqrt", _rsqrt_impl)
rsqrt = _bind1(rsqrt_p)
ad.defjvp2(rsqrt_p, lambda g, ans, x: mul(g, mul(full_like(ans, -0.5), div(ans, x))))


def _rsqrt_emit(ctx: _nr.EmitContext) -> str:
    return f"({_nr.lit(ctx.out_dtype, 1)} / np.sqrt({ctx.args[0]}))"


numba_emitters[rsqrt_p] = _rsqrt_emit


abs_p = unop("abs", np.absolute, _NUMERIC, "a numeric")
abs = _bind1(abs_p)  # noqa: A001


def _abs_abstract(x: ShapedArray) -> ShapedArray:
    check_dtype_kind("abs", x, _NUMERIC, "a numeric")
    if x.dtype.kind == "c":  # |complex| is real, as in NumPy
        return x.update(dtype=np.dtype(np.float32 if x.dtype.itemsize == 8 else np.float64))
    return x


core.abstract_eval_rules[abs_p] = _abs_abstract

# d |x| = sign(x) dx; NOTE: 0 at x = 0 (the subgradient NumPy users expect). The rule
# for complex x needs the complex parts: extras.py registers the full rule.
ad.defjvp(abs_p, lambda g, x: mul(g, sign(x)))
numba_emitters[abs_p] = "np.abs({0})"

sign_p = unop("sign", np.sign, _NUMERIC, "a numeric")
sign: Callable[[Any], Any] = _bind1(sign_p)
ad.defjvp_zero(sign_p)
numba_emitters[sign_p] = "np.sign({0})"

floor_p = unop("floor", np.floor, "f", "a real floating-point")
floor = _bind1(floor_p)
ad.defjvp_zero(floor_p)
numba_emitters[floor_p] = "np.floor({0})"

ceil_p = unop("ceil", np.ceil, "f", "a real floating-point")
ceil = _bind1(ceil_p)
ad.defjvp_zero(ceil_p)
numba_emitters[ceil_p] = "np.ceil({0})"


def _round_impl(x: Any, *, rounding_method: int = 0) -> Any:
    if rounding_method == 1:
        return np.rint(x)
    return np.copysign(np.floor(np.add(np.abs(x), 0.5)), x)


round_p = Primitive("round")
register(
    round_p,
    _round_impl,
    lambda x, *, rounding_method=0: _unop_abstract("round", "f", "a real floating-point")(x),
)
elementwise_numpy[round_p] = np.rint
batching.defvectorized(round_p)
ad.defjvp_zero(round_p)


def _round_emit(ctx: _nr.EmitContext) -> str:
    (x,) = ctx.args
    if ctx.params.get("rounding_method", 0) == 1:
        return f"np.rint({x})"  # half to even
    half = _nr.lit(ctx.out_dtype, 0.5)  # half away from zero
    return f"np.copysign(np.floor(np.abs({x}) + {half}), {x})"


numba_emitters[round_p] = _round_emit


class RoundingMethod(enum.IntEnum):
    """How :func:`round` breaks ties (JAX's names and values)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: Any, rounding_method: int = RoundingMethod.AWAY_FROM_ZERO) -> Any:  # noqa: A001
    """Round to nearest: ``RoundingMethod.AWAY_FROM_ZERO`` (0, JAX's default) or
    ``TO_NEAREST_EVEN`` (1, NumPy's)."""
    method = int(rounding_method)
    if method not in (0, 1):
        raise ValueError(
            f"round: expected rounding_method RoundingMethod.AWAY_FROM_ZERO (0) or "
            f"TO_NEAREST_EVEN (1), got {rounding_method!r}."
        )
    return round_p.bind(x, rounding_method=method)


# ---------------------------------------------------------------------------
# Comparisons and logic (not differentiable)
# ---------------------------------------------------------------------------

_BOOL = np.dtype(bool)

eq_p = binop("eq", np.equal, _ANY, "a numeric or boolean", _BOOL)
ne_p = binop("ne", np.not_equal, _ANY, "a numeric or boolean", _BOOL)
lt_p = binop("lt", np.less, _ANY, "a numeric or boolean", _BOOL)
le_p = binop("le", np.less_equal, _ANY, "a numeric or boolean", _BOOL)
gt_p = binop("gt", np.greater, _ANY, "a numeric or boolean", _BOOL)
ge_p = binop("ge", np.greater_equal, _ANY, "a numeric or boolean", _BOOL)
eq: Callable[[Any, Any], Any] = _bind2(eq_p)
ne: Callable[[Any, Any], Any] = _bind2(ne_p)
lt: Callable[[Any, Any], Any] = _bind2(lt_p)
le: Callable[[Any, Any], Any] = _bind2(le_p)
gt: Callable[[Any, Any], Any] = _bind2(gt_p)
ge: Callable[[Any, Any], Any] = _bind2(ge_p)

and_p = binop("and", np.bitwise_and, _INT_BOOL, "a boolean or integer")
or_p = binop("or", np.bitwise_or, _INT_BOOL, "a boolean or integer")
xor_p = binop("xor", np.bitwise_xor, _INT_BOOL, "a boolean or integer")
bitwise_and, bitwise_or, bitwise_xor = map(_bind2, (and_p, or_p, xor_p))


def _not_impl(x: Any) -> Any:
    return np.logical_not(x) if np.asarray(x).dtype == _BOOL else np.invert(x)


not_p = unop("not", _not_impl, _INT_BOOL, "a boolean or integer")
bitwise_not = _bind1(not_p)

# Shifts with NumPy's semantics: right shifts of signed integers are arithmetic (of
# unsigned ones logical), and a shift by the bit width or more (or by a negative amount)
# gives 0 (-1 for a negative x shifted right). lax's public shift_right_arithmetic
# (lax/composites.py) fills unsigned integers with their top bit, as JAX does. In
# compiled code they run as NumPy calls in the driver (rare in array programs; NumPy's
# overshift rule needs no special case there).
shift_left_p = binop("shift_left", np.left_shift, "iu", "an integer")
shift_right_arithmetic_p = binop("shift_right_arithmetic", np.right_shift, "iu", "an integer")
shift_left = _bind2(shift_left_p)
shift_right_arithmetic = _bind2(shift_right_arithmetic_p)
numba_emitters[shift_left_p] = lambda ctx: None
numba_emitters[shift_right_arithmetic_p] = lambda ctx: None

for _p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p, and_p, or_p, xor_p, not_p):
    ad.defjvp_zero(_p)
for _p in (shift_left_p, shift_right_arithmetic_p):
    ad.defjvp_zero(_p)


def _ordered_emit(op: str) -> Callable[[_nr.EmitContext], str | None]:
    """``<``, ``<=``, ``>``, ``>=``: Numba does not order complex numbers (NumPy does,
    lexicographically), so complex operands stay with the impl."""

    def emit(ctx: _nr.EmitContext) -> str | None:
        if ctx.in_dtypes[0].kind == "c":
            return None
        x, y = ctx.args
        return f"({x} {op} {y})"

    emit.__name__ = f"ordered_{op}"
    return emit


def _not_emit(ctx: _nr.EmitContext) -> str:
    (x,) = ctx.args
    return f"(not {x})" if ctx.out_dtype.kind == "b" else f"(~{x})"


numba_emitters.update(
    {
        eq_p: "({0} == {1})",
        ne_p: "({0} != {1})",
        lt_p: _ordered_emit("<"),
        le_p: _ordered_emit("<="),
        gt_p: _ordered_emit(">"),
        ge_p: _ordered_emit(">="),
        and_p: "({0} & {1})",
        or_p: "({0} | {1})",
        xor_p: "({0} ^ {1})",
        not_p: _not_emit,
    }
)  # noqa: E501

# ---------------------------------------------------------------------------
# clamp, stop_gradient (select_n, convert_element_type: lax/base.py)
# ---------------------------------------------------------------------------


def _clamp_abstract(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    for b, side in ((lo, "lower"), (hi, "upper")):
        if b.shape not in ((), x.shape):
            raise ValueError(
                f"clamp: expected a {side} bound of shape () or {x.shape}, got {b.shape}."
            )
    check_same_dtypes("clamp", lo, x, hi)
    return x


def _clamp_impl(lo: Any, x: Any, hi: Any) -> Any:
    return np.minimum(np.maximum(x, lo), hi)


# eagerly as traced (and as JAX): bounds of x's dtype, no promotion
clamp_p = register_checked(Primitive("clamp"), _clamp_impl, _clamp_abstract)


def clamp(lo: Any, x: Any, hi: Any) -> Any:
    """``min(max(x, lo), hi)``; bounds are scalars or of x's shape."""
    return clamp_p.bind(lo, x, hi)


def _bcast_to(v: Any, like: Any) -> Any:
    shape = core.get_aval(like).shape
    return v if core.get_aval(v).shape == shape else broadcast_in_dim(v, shape, ())


def _clamp_jvp_x(g: Any, lo: Any, x: Any, hi: Any) -> Any:
    # NOTE: x passes the tangent where lo <= x <= hi (PyTorch's convention for clamp).
    inside = bitwise_and(ge(x, _bcast_to(lo, x)), le(x, _bcast_to(hi, x)))
    return select_n(inside, zeros_like(g), g)


def _clamp_jvp_lo(g: Any, lo: Any, x: Any, hi: Any) -> Any:
    below = lt(x, _bcast_to(lo, x))
    return select_n(below, zeros_like(x), _bcast_to(g, x))


def _clamp_jvp_hi(g: Any, lo: Any, x: Any, hi: Any) -> Any:
    above = gt(x, _bcast_to(hi, x))
    return select_n(above, zeros_like(x), _bcast_to(g, x))


ad.defjvp(clamp_p, _clamp_jvp_lo, _clamp_jvp_x, _clamp_jvp_hi)


def _clamp_batch(vals: list[Any], bdims: list[Any]) -> tuple[Any, Any]:
    # Scalar bounds are first broadcast to the operand's (unbatched) shape.
    lo, x, hi = vals
    blo, bx, bhi = bdims
    size = batching.batch_size(vals, bdims)
    x_shape = core.get_aval(x).shape
    if bx is not None:
        x_shape = x_shape[:bx] + x_shape[bx + 1 :]
    ops = []
    for v, b in ((lo, blo), (x, bx), (hi, bhi)):
        nd = core.get_aval(v).ndim - (b is not None)
        if nd == 0 and x_shape:
            if b is None:
                v = broadcast_in_dim(v, x_shape, ())
            else:
                v = broadcast_in_dim(v, (size, *x_shape), (0,))
                b = 0
        ops.append(batching.bdim_at(v, b, size, 0))
    return clamp_p.bind(*ops), 0


batching.batching_rules[clamp_p] = _clamp_batch


def _clamp_emit(ctx: _nr.EmitContext) -> str | None:
    lo, x, hi = ctx.args
    if ctx.out_dtype.kind == "c":
        return None
    return f"np.minimum(np.maximum({x}, {lo}), {hi})"


numba_emitters[clamp_p] = _clamp_emit


def _identity(x: Any) -> Any:
    return x


stop_gradient_p = unop("stop_gradient", _identity, _ANY, "an array")
ad.defjvp_zero(stop_gradient_p)
numba_emitters[stop_gradient_p] = "{0}"


def stop_gradient(x: Any) -> Any:
    """Identity forward; its derivative is zero (PyTorch's ``detach``). ``x`` may be a
    pytree of arrays, as in JAX."""
    if not core.is_array_like(x):
        from functrace.tree_util import tree_map

        return tree_map(stop_gradient, x)
    if core.get_aval(x).dtype.kind not in "fc":
        return x
    return stop_gradient_p.bind(x)


__all__ = [
    "_p",
    "RoundingMethod",
    "abs",
    "abs_p",
    "add",
    "add_p",
    "and_p",
    "atan2",
    "atan2_p",
    "bitwise_and",
    "betainc",
    "betainc_p",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "ceil",
    "ceil_p",
    "clamp",
    "clamp_p",
    "convert_element_type",
    "convert_element_type_p",
    "cos",
    "cos_p",
    "div",
    "div_p",
    "elementwise_numpy",
    "eq",
    "eq_p",
    "digamma",
    "digamma_p",
    "erf",
    "erf_p",
    "erfc",
    "erfc_p",
    "lgamma",
    "lgamma_p",
    "polygamma",
    "polygamma_p",
    "exp",
    "exp_p",
    "expm1",
    "expm1_p",
    "floor",
    "igamma",
    "igamma_p",
    "igammac",
    "igammac_p",
    "floor_p",
    "full_like",
    "ge",
    "ge_p",
    "gt",
    "gt_p",
    "integer_pow",
    "integer_pow_p",
    "le",
    "le_p",
    "log",
    "log1p",
    "log1p_p",
    "log_p",
    "logistic",
    "logistic_p",
    "lt",
    "lt_p",
    "max",
    "max_p",
    "min",
    "min_p",
    "mul",
    "mul_p",
    "ne",
    "ne_p",
    "neg",
    "neg_p",
    "not_p",
    "or_p",
    "pow",
    "pow_p",
    "rem",
    "rem_p",
    "round",
    "shift_left",
    "shift_left_p",
    "shift_right_arithmetic_p",
    "round_p",
    "rsqrt",
    "rsqrt_p",
    "select",
    "select_n",
    "select_n_p",
    "sign",
    "sign_p",
    "sin",
    "sin_p",
    "sqrt",
    "sqrt_p",
    "stop_gradient",
    "stop_gradient_p",
    "sub",
    "sub_p",
    "tan",
    "tan_p",
    "tanh",
    "tanh_p",
    "xor_p",
    "zeros_like",
]
