"""Elementwise primitives: unary math, binary arithmetic, comparisons, select, casts.

Each primitive is one block: its definition, NumPy impl, abstract eval, JVP and
(if linear) transpose rule. Operands of binary primitives have equal shapes and
dtypes; broadcasting and promotion are done by ``functrace.numpy``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.interpreters import numba_rules as _nr
from functrace.interpreters.ad import Zero
from functrace.interpreters.numba_rules import numba_emitters
from functrace.lax._util import (
    check_dtype_kind,
    check_same_dtypes,
    check_same_shapes,
    eager_check_binary,
    register,
)

# Declarative description of every elementwise primitive, used by the batching
# interpreter and the Numba backend: primitive -> NumPy function.
elementwise_numpy: dict[Primitive, Callable[..., Any]] = {}

_FLOAT = "fc"
_NUMERIC = "iufc"
_ANY = "biufc"
_INT_BOOL = "biu"


def _unop_abstract(name: str, kinds: str, what: str) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray) -> ShapedArray:
        check_dtype_kind(name, x, kinds, what)
        return x

    return rule


def unop(
    name: str, np_fn: Callable[..., Any], kinds: str = _FLOAT, what: str = "a floating-point"
) -> Primitive:
    p = Primitive(name)
    register(p, np_fn, _unop_abstract(name, kinds, what))
    elementwise_numpy[p] = np_fn
    batching.defvectorized(p)
    return p


def _binop_abstract(
    name: str, kinds: str, what: str, out_dtype: np.dtype | None = None
) -> Callable[..., ShapedArray]:
    def rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        shape, dtype = x.shape, x.dtype
        if shape != y.shape or dtype != y.dtype or dtype.kind not in kinds:
            check_same_shapes(name, x, y)  # raise the detailed error
            check_same_dtypes(name, x, y)
            check_dtype_kind(name, x, kinds, what)
        weak = x.weak_type and y.weak_type
        if out_dtype is not None:
            return ShapedArray(shape, out_dtype)
        return ShapedArray(shape, dtype, weak)

    return rule


def binop(
    name: str,
    np_fn: Callable[..., Any],
    kinds: str = _NUMERIC,
    what: str = "a numeric",
    out_dtype: np.dtype | None = None,
) -> Primitive:
    p = Primitive(name)

    def impl(x: Any, y: Any) -> Any:
        if getattr(x, "shape", ()) != getattr(y, "shape", ()):
            eager_check_binary(name, x, y)  # raises the detailed error
        return np_fn(x, y)

    register(p, impl, _binop_abstract(name, kinds, what, out_dtype))
    elementwise_numpy[p] = np_fn
    batching.defbroadcasting(p)
    return p


def _bind1(p: Primitive) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return p.bind(x)

    f.__name__ = p.name
    f.__doc__ = f"Elementwise ``{p.name}`` (functrace.lax primitive)."
    return f


def _bind2(p: Primitive) -> Callable[[Any, Any], Any]:
    def f(x: Any, y: Any) -> Any:
        return p.bind(x, y)

    f.__name__ = p.name
    f.__doc__ = f"Elementwise ``{p.name}`` of two equal-shape operands (functrace.lax primitive)."
    return f


def full_like(x: Any, value: Any, dtype: np.dtype | None = None) -> Any:
    """An array like ``x`` filled with ``value`` (a broadcast scalar: no copy when eager)."""
    from functrace.lax.shapes import broadcast_in_dim

    aval = core.get_aval(x)
    dt = aval.dtype if dtype is None else np.dtype(dtype)
    scalar = np.array(value, dtype=dt)[()]
    if not aval.shape:
        return scalar
    return broadcast_in_dim(scalar, aval.shape, ())


def zeros_like(x: Any) -> Any:
    return full_like(x, 0)


# ---------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------

neg_p = unop("neg", np.negative, _NUMERIC, "a numeric")
neg = _bind1(neg_p)
ad.deflinear(neg_p, lambda ct, x: [neg(ct)])  # d(-x) = -dx
numba_emitters[neg_p] = "(-{0})"

add_p = binop("add", np.add)
add = _bind2(add_p)
ad.deflinear(add_p, lambda ct, x, y: [ct, ct])  # d(x + y) = dx + dy
numba_emitters[add_p] = "({0} + {1})"

sub_p = binop("sub", np.subtract)
sub = _bind2(sub_p)
ad.deflinear(sub_p, lambda ct, x, y: [ct, neg(ct)])  # d(x - y) = dx - dy
numba_emitters[sub_p] = "({0} - {1})"

mul_p = binop("mul", np.multiply, _ANY, "a numeric or boolean")
mul = _bind2(mul_p)
ad.defbilinear(  # d(x y) = dx y + x dy
    mul_p,
    lambda ct, y, x_aval: mul(ct, y),
    lambda ct, x, y_aval: mul(x, ct),
)
numba_emitters[mul_p] = "({0} * {1})"


def _div_impl(x: Any, y: Any) -> Any:
    eager_check_binary("div", x, y)
    dt = getattr(x, "dtype", None)
    if dt is not None and dt.kind in "iu":
        return np.floor_divide(x, y)  # only reached by lax.div on ints (C-style is rarer)
    return np.true_divide(x, y)


div_p = Primitive("div")
register(div_p, _div_impl, _binop_abstract("div", _NUMERIC, "a numeric"))
elementwise_numpy[div_p] = np.true_divide
batching.defbroadcasting(div_p)
div = _bind2(div_p)


def _div_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    if ad.is_undefined_primal(y):
        raise ValueError("div transpose: the divisor must not be linear.")
    return [div(ct, y), None]


ad.defjvp(
    div_p,
    lambda g, x, y: div(g, y),  # d(x / y) = dx / y - x dy / y^2
    lambda g, x, y: neg(div(mul(g, x), mul(y, y))),
)
ad.transpose_rules[div_p] = _div_transpose
ad.linear_primitives.add(div_p)


def _div_emit(ctx: _nr.EmitContext) -> str:
    x, y = ctx.args
    if ctx.out_dtype.kind == "i":  # the impl floor-divides integers; MIN // -1 wraps
        return f"(-{x} if {y} == -1 else np.floor_divide({x}, {y}))"
    if ctx.out_dtype.kind in "ub":
        return f"np.floor_divide({x}, {y})"
    return f"({x} / {y})"


numba_emitters[div_p] = _div_emit

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
    return np.power(x, y) if y >= 0 else np.power(x, float(y)).astype(x.dtype)


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
    return prod if y > 0 else f"({one} / {prod})"


numba_emitters[integer_pow_p] = _integer_pow_emit


def _pow_impl(x: Any, y: Any) -> Any:
    eager_check_binary("pow", x, y)
    if np.asarray(y).dtype.kind == "i" and np.any(y < 0):  # an integer base (equal dtypes)
        raise ValueError(
            "pow: expected non-negative exponents for an integer base (NumPy's rule), got the "
            f"negative exponent {np.min(y)}. Use a float base (2.0 ** n, x.astype(float) ** n)."
        )
    return np.power(x, y)


pow_p = Primitive("pow")  # integers too: x ** n with a traced integer n
register(pow_p, _pow_impl, _binop_abstract("pow", _NUMERIC, "a numeric"))
elementwise_numpy[pow_p] = np.power
batching.defbroadcasting(pow_p)
pow = _bind2(pow_p)  # noqa: A001


def _pow_jvp_lhs(g: Any, x: Any, y: Any) -> Any:
    # d x^y / dx = y x^(y-1); NOTE: 0 where y == 0 (also at x = 0). The double select keeps
    # every higher derivative finite where its limit is: where y == 0 the unselected
    # branch is computed with y = 1 (x^0, whose own derivative is 0), not 0 * x^-1.
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
    if ctx.in_dtypes[0].kind in "iu":
        return None  # the impl: NumPy's check of negative exponents
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
# Unary math
# ---------------------------------------------------------------------------

exp_p = unop("exp", np.exp)
exp = _bind1(exp_p)
ad.defjvp2(exp_p, lambda g, ans, x: mul(g, ans))  # d exp = exp dx
numba_emitters[exp_p] = "np.exp({0})"

log_p = unop("log", np.log)
log = _bind1(log_p)
ad.defjvp(log_p, lambda g, x: div(g, x))  # d log = dx / x
numba_emitters[log_p] = "np.log({0})"

log1p_p = unop("log1p", np.log1p)
log1p = _bind1(log1p_p)
ad.defjvp(log1p_p, lambda g, x: div(g, add(x, full_like(x, 1))))  # d log1p = dx / (1 + x)
numba_emitters[log1p_p] = "np.log1p({0})"

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


def _erf_impl(x: Any) -> Any:
    x = np.asarray(x)
    out = np.frompyfunc(math.erf, 1, 1)(x)
    return np.asarray(out, dtype=x.dtype)[()] if np.ndim(x) == 0 else out.astype(x.dtype)


erf_p = unop("erf", _erf_impl, "f", "a real floating-point")
erf = _bind1(erf_p)
ad.defjvp(  # d erf = 2/sqrt(pi) exp(-x^2) dx
    erf_p, lambda g, x: mul(g, mul(full_like(x, 2 / math.sqrt(math.pi)), exp(neg(mul(x, x)))))
)


def _erf_emit(ctx: _nr.EmitContext) -> str:
    return f"math.erf({ctx.args[0]})"


numba_emitters[erf_p] = _erf_emit


# ---------------------------------------------------------------------------
# Special functions: erfc, lgamma, digamma, polygamma (erf_inv: lax/random_bits.py)
# ---------------------------------------------------------------------------
# The impls compute in float64 with vectorised NumPy (or the ``math`` module per
# element) and cast back. Values at poles and outside the domain follow SciPy:
# ``lgamma`` is +inf at 0, -1, -2, ...; ``digamma`` is -inf at +0, +inf at -0 and
# NaN at the negative integers; ``polygamma(n, .)`` is +-inf at the non-positive
# integers; ``erfinv`` is +-inf at +-1 and NaN outside [-1, 1].


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
        out = np.where(pole, np.nan, out)
        out = np.where(x == 0, -np.copysign(np.inf, x), out)
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

# B_2j / (2j)! for j = 1 .. 8 (Euler-Maclaurin tail of the Hurwitz zeta function)
_ZETA_EM = [1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
            -691 / 1307674368000, 1 / 74724249600, -3617 / 10670622842880000]  # fmt: skip


def _hurwitz_zeta_f64(s: int, q: np.ndarray) -> np.ndarray:
    """``sum_k (q + k)^-s`` for an integer ``s >= 2``."""
    with np.errstate(all="ignore"):
        pole = (q <= 0) & (np.floor(q) == q)
        w = np.where(pole | ~np.isfinite(q), 20.0, q)
        acc = np.zeros_like(w)
        n_shift = int(max(0.0, math.ceil(20.0 - float(np.min(w, initial=20.0)))))
        for _ in range(n_shift):  # direct terms until q + N >= 20
            small = w < 20.0
            acc = acc + np.where(small, w ** (-s), 0.0)
            w = np.where(small, w + 1.0, w)
        tail = w ** (1.0 - s) / (s - 1) + 0.5 * w ** (-s)
        rising = float(s)  # s (s + 1) ... (s + 2j - 2)
        for j, c in enumerate(_ZETA_EM, start=1):
            tail = tail + c * rising * w ** (-s - 2 * j + 1)
            rising *= (s + 2 * j - 1) * (s + 2 * j)
        out = acc + tail
        out = np.where(pole, np.inf, out)
        out = np.where(q == np.inf, 0.0, out)
        out = np.where(q == -np.inf, np.inf, out)
        out = np.where(np.isnan(q), np.nan, out)
    return out


def _polygamma_impl(x: Any, *, n: int) -> Any:
    x = np.asarray(x)
    if n == 0:
        return _digamma_impl(x)
    sign = 1.0 if n % 2 == 1 else -1.0  # (-1)^(n+1) n! zeta(n + 1, x)
    out = sign * math.factorial(n) * _hurwitz_zeta_f64(n + 1, x.astype(np.float64))
    return out.astype(x.dtype)[()]


def _polygamma_abstract(x: ShapedArray, *, n: int) -> ShapedArray:
    check_dtype_kind("polygamma", x, "f", "a real floating-point")
    return x


polygamma_p = register(Primitive("polygamma"), _polygamma_impl, _polygamma_abstract)
elementwise_numpy[polygamma_p] = _polygamma_impl
batching.defvectorized(polygamma_p)


def polygamma(n: Any, x: Any) -> Any:
    """The ``n``-th derivative of ``digamma`` at ``x`` (``n`` a concrete integer >= 0).

    >>> float(polygamma(1, 1.0))  # pi^2 / 6
    1.6449340668482264
    """
    if isinstance(n, core.Tracer) or not float(n).is_integer() or int(n) < 0:
        raise ValueError(f"polygamma: expected a concrete non-negative integer order n, got {n!r}")
    return polygamma_p.bind(x, n=int(n))


# d polygamma(n, x) = polygamma(n + 1, x) dx
ad.defjvp(polygamma_p, lambda g, x, *, n: mul(g, polygamma(n + 1, x)))
numba_emitters[polygamma_p] = _no_kernel  # the driver calls the vectorised impl


# ---------------------------------------------------------------------------
# igamma, igammac: the regularized incomplete gamma functions P(a, x), Q(a, x)
# ---------------------------------------------------------------------------
# Series for x < a + 1, Lentz's continued fraction otherwise (in float64, to
# convergence); SciPy's values at the edges: NaN for a < 0, x < 0 or NaN operands,
# P(0, x > 0) = 1, P(a, 0) = 0, P(a, inf) = 1. The derivative in x is the gamma
# density; the derivative in a is not implemented (a clear error).


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


def _igamma_grad_a(name: str) -> Callable[..., Any]:
    def rule(g: Any, a: Any, x: Any) -> Any:
        raise NotImplementedError(
            f"{name}: the derivative with respect to the shape parameter a is not "
            f"implemented (only the derivative in x); hold a constant "
            f"(functrace.lax.stop_gradient) or differentiate with respect to x only."
        )

    return rule


igamma_p = binop("igamma", _igamma_impl, "f", "a real floating-point")
igamma = _bind2(igamma_p)
ad.defjvp(igamma_p, _igamma_grad_a("igamma"), lambda g, a, x: mul(g, _igamma_density(x, a)))
numba_emitters[igamma_p] = _no_kernel  # the driver calls the vectorised impl

igammac_p = binop("igammac", _igammac_impl, "f", "a real floating-point")
igammac = _bind2(igammac_p)
ad.defjvp(igammac_p, _igamma_grad_a("igammac"), lambda g, a, x: neg(mul(g, _igamma_density(x, a))))
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
        edge = np.where((x == 0) & (a > 0) & (b > 0), 0.0, np.nan)
        edge = np.where((x == 1) & (a > 0) & (b > 0), 1.0, edge)
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
    """The regularized incomplete beta function ``I_x(a, b)`` (equal-shape operands)."""
    return betainc_p.bind(a, b, x)


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

abs_p = unop("abs", np.absolute, _NUMERIC, "a numeric")
abs = _bind1(abs_p)  # noqa: A001


def _abs_abstract(x: ShapedArray) -> ShapedArray:
    check_dtype_kind("abs", x, _NUMERIC, "a numeric")
    if x.dtype.kind == "c":  # |complex| is real, as in NumPy
        return x.update(dtype=np.dtype(np.float32 if x.dtype.itemsize == 8 else np.float64))
    return x


core.abstract_eval_rules[abs_p] = _abs_abstract
# d |x| = sign(x) dx; NOTE: 0 at x = 0 (the subgradient NumPy users expect).
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


def round(x: Any, rounding_method: int = 0) -> Any:  # noqa: A001
    """Round to nearest: 0 = half away from zero (JAX's default), 1 = half to even (NumPy)."""
    return round_p.bind(x, rounding_method=int(rounding_method))


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

# Shifts with NumPy's semantics: right shifts of signed integers are arithmetic, and a
# shift by the bit width or more (or by a negative amount) gives 0 (-1 for a negative x
# shifted right). In compiled code they run as NumPy calls in the driver (rare in
# array programs; NumPy's overshift rule needs no special case there).
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
# select_n, clamp, casts, stop_gradient
# ---------------------------------------------------------------------------


def _select_n_abstract(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:
        raise ValueError("select_n: expected at least one case, got none.")
    check_same_shapes("select_n", which, *cases)
    check_same_dtypes("select_n", *cases)
    if which.dtype.kind not in "biu":
        raise TypeError(
            f"select_n: expected a boolean or integer selector, got {which.dtype.name}."
        )
    if which.dtype.kind == "b" and len(cases) > 2:
        raise TypeError("select_n: a boolean selector picks between exactly two cases.")
    return cases[0].update(weak_type=all(c.weak_type for c in cases))


def _select_n_impl(which: Any, *cases: Any) -> Any:
    if len(cases) == 2:
        out = np.where(which, cases[1], cases[0])
    else:
        out = np.choose(which, cases)
    return out[()] if np.ndim(out) == 0 else out


select_n_p = register(Primitive("select_n"), _select_n_impl, _select_n_abstract)


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise (a bool ``which`` picks cases[1] where True)."""
    return select_n_p.bind(which, *cases)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where the bool ``pred`` is True, else ``on_false`` (elementwise)."""
    return select_n(pred, on_false, on_true)


def _select_n_jvp(primals: list[Any], tangents: list[Any]) -> tuple[Any, Any]:
    which, *cases = primals
    out = select_n(which, *cases)
    case_t = tangents[1:]
    if all(type(t) is Zero for t in case_t):
        return out, Zero.from_primal(out)
    return out, select_n(which, *[ad.instantiate(t) for t in case_t])


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> list[Any]:
    if ad.is_undefined_primal(which):
        raise ValueError("select_n transpose: the selector must not be linear.")
    zeros = zeros_like(ct)
    return [None] + [
        select_n(which, *[ct if j == i else zeros for j in range(len(cases))])
        if ad.is_undefined_primal(c)
        else None
        for i, c in enumerate(cases)
    ]


batching.defbroadcasting(select_n_p)
ad.jvp_rules[select_n_p] = _select_n_jvp
ad.transpose_rules[select_n_p] = _select_n_transpose
ad.linear_primitives.add(select_n_p)


def _select_n_emit(ctx: _nr.EmitContext) -> str | None:
    which, *cases = ctx.args
    if len(cases) != 2:
        return None  # n-way selects keep the impl's range check
    return f"({cases[1]} if {which} else {cases[0]})"


numba_emitters[select_n_p] = _select_n_emit


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


clamp_p = register(Primitive("clamp"), _clamp_impl, _clamp_abstract)


def clamp(lo: Any, x: Any, hi: Any) -> Any:
    """``min(max(x, lo), hi)``; bounds are scalars or of x's shape."""
    return clamp_p.bind(lo, x, hi)


def _bcast_to(v: Any, like: Any) -> Any:
    from functrace.lax.shapes import broadcast_in_dim

    shape = core.get_aval(like).shape
    return v if core.get_aval(v).shape == shape else broadcast_in_dim(v, shape, ())


def _reduce_to(t: Any, like: Any) -> Any:
    from functrace.lax.reductions import reduce_sum

    if core.get_aval(like).shape == core.get_aval(t).shape:
        return t
    return reduce_sum(t, tuple(range(core.get_aval(t).ndim)))


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
                v = broadcast_in_dim_(v, x_shape, ())
            else:
                v = broadcast_in_dim_(v, (size, *x_shape), (0,))
                b = 0
        ops.append(batching.bdim_at(v, b, size, 0))
    return clamp_p.bind(*ops), 0


def broadcast_in_dim_(x: Any, shape: tuple[int, ...], dims: tuple[int, ...]) -> Any:
    from functrace.lax.shapes import broadcast_in_dim

    return broadcast_in_dim(x, shape, dims)


batching.batching_rules[clamp_p] = _clamp_batch


def _clamp_emit(ctx: _nr.EmitContext) -> str | None:
    lo, x, hi = ctx.args
    if ctx.out_dtype.kind == "c":
        return None
    return f"np.minimum(np.maximum({x}, {lo}), {hi})"


numba_emitters[clamp_p] = _clamp_emit


def _convert_abstract(x: ShapedArray, *, new_dtype: np.dtype, weak_type: bool) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_impl(x: Any, *, new_dtype: np.dtype, weak_type: bool) -> Any:
    if not isinstance(x, (np.ndarray, np.generic)):
        return np.array(x, dtype=new_dtype)[()]
    if x.dtype.kind == "c" and new_dtype.kind != "c":
        x = np.real(x)
    if new_dtype.kind == "b":
        return np.not_equal(x, 0)
    return np.asarray(x).astype(new_dtype)[()] if np.ndim(x) == 0 else x.astype(new_dtype)


convert_element_type_p = register(
    Primitive("convert_element_type"), _convert_impl, _convert_abstract
)


def convert_element_type(x: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """Cast ``x`` to ``new_dtype`` (no-op when it already has that dtype)."""
    new_dtype = np.dtype(new_dtype)
    aval = core.get_aval(x)
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type))


def _convert_jvp(
    primals: list[Any], tangents: list[Any], *, new_dtype: np.dtype, weak_type: bool
) -> tuple[Any, Any]:
    (x,), (g,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if (
        type(g) is Zero
        or not dtypes.is_differentiable(new_dtype)
        or not dtypes.is_differentiable(core.get_aval(x).dtype)
    ):
        return out, Zero.from_primal(out)
    return out, convert_element_type_p.bind(g, new_dtype=new_dtype, weak_type=weak_type)


def _convert_transpose(ct: Any, x: Any, *, new_dtype: np.dtype, weak_type: bool) -> list[Any]:
    return [convert_element_type(ct, x.aval.dtype, x.aval.weak_type)]


batching.defvectorized(convert_element_type_p)
ad.jvp_rules[convert_element_type_p] = _convert_jvp
ad.transpose_rules[convert_element_type_p] = _convert_transpose
ad.linear_primitives.add(convert_element_type_p)


def _convert_element_type_emit(ctx: _nr.EmitContext) -> str:
    (x,), (src,) = ctx.args, ctx.in_dtypes
    dst = ctx.out_dtype
    if dst.kind == "b":
        return f"({x} != 0)"
    if src.kind == "c" and dst.kind != "c":
        return f"({x}).real"
    return x  # the backend's explicit cast to the output dtype does the conversion


numba_emitters[convert_element_type_p] = _convert_element_type_emit


def _identity(x: Any) -> Any:
    return x


stop_gradient_p = unop("stop_gradient", _identity, _ANY, "an array")
ad.defjvp_zero(stop_gradient_p)
numba_emitters[stop_gradient_p] = "{0}"


def stop_gradient(x: Any) -> Any:
    """Identity forward; its derivative is zero (PyTorch's ``detach``)."""
    if core.get_aval(x).dtype.kind not in "fc":
        return x
    return stop_gradient_p.bind(x)


__all__ = [
    "_p",
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
    "shift_right_arithmetic",
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
