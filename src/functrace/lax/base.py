"""The base of lax: the primitives the rules of every other family are written in.

The elementwise primitive factories (``unop``, ``binop``) and the few primitives that
the JVP, transpose and batching rules of the other modules need: the arithmetic
``neg``, ``add``, ``sub``, ``mul``, ``div``, the transcendentals ``exp``, ``log``,
``log1p``, ``select_n``, ``convert_element_type``, ``full_like``/``zeros_like``, and the
structural ``broadcast_in_dim``, ``reshape``, ``transpose`` and ``reduce_sum``. It
imports no other lax module; every other lax module builds on it.

Each primitive is one block: definition, NumPy impl, abstract eval, JVP, (if linear)
transpose, batching rule and Numba emitter. The families above re-export these names
(``functrace.lax.elementwise``, ``functrace.lax.shapes``, ``functrace.lax.reductions``),
so each is importable from the module that presents its family.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace._buffers import ufunc_call
from functrace._prng import PRNGKeyArray
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.interpreters import numba_rules as _nr
from functrace.interpreters.ad import Zero
from functrace.interpreters.numba_rules import numba_emitters
from functrace.lax._util import (
    as_index_tuple,
    check_dtype_kind,
    check_same_dtypes,
    check_same_shapes,
    eager_check_binary,
    eager_check_dtypes,
    operator_index,
    register,
    register_checked,
)

# ---------------------------------------------------------------------------
# Elementwise primitive factories
# ---------------------------------------------------------------------------

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


def _pooled_impl(np_fn: Callable[..., Any]) -> Callable[..., Any]:
    """``np_fn`` (a NumPy ufunc) writing large float results into the eager pool's
    buffers (``_buffers.ufunc_call``: the same bits, no fresh pages each call)."""

    def impl(*args: Any) -> Any:
        return ufunc_call(np_fn, *args)

    impl.__name__ = getattr(np_fn, "__name__", "impl")
    return impl


def unop(
    name: str, np_fn: Callable[..., Any], kinds: str = _FLOAT, what: str = "a floating-point"
) -> Primitive:
    p = Primitive(name)
    impl = _pooled_impl(np_fn) if isinstance(np_fn, np.ufunc) else np_fn
    register(p, impl, _unop_abstract(name, kinds, what))
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
        dx, dy = getattr(x, "dtype", None), getattr(y, "dtype", None)
        # (``dx != None`` is False for float64: NumPy reads None as the default dtype)
        if dx is None or dy is None or dx != dy:  # as traced (and as JAX): no promotion
            eager_check_dtypes(name, x, y)
            dx = core.get_aval(x).dtype
        if dx.kind not in kinds:  # as traced: bool is no operand of add, mul...
            check_dtype_kind(name, core.get_aval(x), kinds, what)
        return ufunc_call(np_fn, x, y)  # into the eager pool: large float results

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


def broadcast_operands(*args: Any) -> list[Any]:
    """The operands of an n-ary elementwise function broadcast as JAX's lax does: 0-d
    operands (Python scalars too) to the others' shape, and axes of size 1 among
    operands of one rank. Operands that do not broadcast so come back unchanged, for
    the primitive's own shape error."""
    shapes = [tuple(getattr(a, "shape", ())) for a in args]
    ranked = [s for s in shapes if s]
    if not ranked or any(len(s) != len(ranked[0]) for s in ranked):
        return list(args)
    target = []
    for sizes in zip(*ranked):
        grown = set(sizes) - {1}
        if len(grown) > 1:
            return list(args)
        target.append(grown.pop() if grown else 1)
    out = tuple(target)
    dims = tuple(range(len(out)))
    return [
        a if s == out else broadcast_in_dim(a, out, dims if s else ()) for a, s in zip(args, shapes)
    ]


def _bind2(p: Primitive) -> Callable[[Any, Any], Any]:
    def f(x: Any, y: Any) -> Any:
        if getattr(x, "shape", ()) != getattr(y, "shape", ()):
            x, y = broadcast_operands(x, y)
        return p.bind(x, y)

    f.__name__ = p.name
    f.__doc__ = (
        f"Elementwise ``{p.name}`` (functrace.lax primitive); 0-d operands and axes of "
        f"size 1 broadcast, as in JAX's lax."
    )
    return f


def operand_shape(x: Any) -> tuple[int, ...]:
    """The shape of an operand, or of a typed key array (counted in keys)."""
    return x.shape if type(x) is PRNGKeyArray else core.get_aval(x).shape


def full_like(
    x: Any,
    fill_value: Any,
    dtype: Any = None,
    shape: Any = None,
    sharding: Any = None,
) -> Any:
    """An array like ``x`` filled with the scalar ``fill_value`` (JAX's ``lax.full_like``).

    ``dtype`` defaults to ``x``'s and ``shape`` (an int or a sequence of ints) to
    ``x``'s; ``fill_value`` may be traced (under ``jit``, ``vmap``, ``grad``: the result
    is differentiable in it). As in JAX, the result is weakly typed when ``x`` is and no
    ``dtype`` is given, and a non-scalar ``fill_value`` is a ``TypeError``. ``sharding``
    is accepted and ignored (one device). Eagerly the result is a broadcast scalar (no
    copy). With a typed key array ``x`` (and no ``dtype``), ``fill_value`` is a key.
    """
    if type(x) is PRNGKeyArray and dtype is None:
        if type(fill_value) is not PRNGKeyArray or fill_value.shape:
            raise TypeError("full_like: expected a single key as fill_value for key arrays.")
        keys = x.shape if shape is None else _shape_arg("full_like", shape)
        return PRNGKeyArray(broadcast_in_dim(fill_value._base, (*keys, 2), (len(keys),)))
    aval = _like_aval(x)
    dt = aval.dtype if dtype is None else np.dtype(dtype)
    out_shape = aval.shape if shape is None else _shape_arg("full_like", shape)
    weak = dtype is None and aval.weak_type and isinstance(x, core.Tracer)
    value: Any
    if isinstance(fill_value, core.Tracer):
        value, fill_shape = fill_value, fill_value.aval.shape
    else:
        filled = np.array(fill_value, dtype=dt)
        value, fill_shape = filled[()], filled.shape
    if fill_shape != ():
        raise TypeError(f"full_like: expected a scalar fill_value, got one of shape {fill_shape}.")
    if weak or isinstance(value, core.Tracer):
        value = convert_element_type(value, dt, weak)
    if not out_shape:
        return value
    return broadcast_in_dim(value, out_shape, ())


def _like_aval(x: Any) -> ShapedArray:
    """The type of ``x``: an array, scalar or tracer, or an object with ``shape`` and
    ``dtype`` (a ``ShapeDtypeStruct``)."""
    try:
        return core.get_aval(x)
    except TypeError:
        shape, dt = getattr(x, "shape", None), getattr(x, "dtype", None)
        if shape is None or dt is None:
            raise
        return ShapedArray(tuple(shape), np.dtype(dt), bool(getattr(x, "weak_type", False)))


def _shape_arg(name: str, shape: Any) -> tuple[int, ...]:
    """A ``shape=`` argument as JAX takes it: an int or a sequence of non-negative ints
    known while tracing."""
    if isinstance(shape, (tuple, list)):
        dims: Sequence[Any] = shape
    elif isinstance(shape, np.ndarray) and shape.ndim == 1:
        dims = shape.tolist()
    else:
        dims = (shape,)
    try:
        out = tuple(operator_index(d) for d in dims)
    except TypeError:
        raise TypeError(
            f"{name}: expected shape to be an int or a sequence of ints known while "
            f"tracing, got {shape!r}."
        ) from None
    if any(d < 0 for d in out):
        raise TypeError(f"{name}: expected a shape of non-negative ints, got {out}.")
    return out


def zeros_like(x: Any) -> Any:
    """Zeros with the shape and dtype of ``x`` (an array, scalar or tracer)."""
    return full_like(x, 0)


# ---------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------

neg_p = unop("neg", np.negative, _NUMERIC, "a numeric")
neg = _bind1(neg_p)
ad.deflinear2(neg_p, lambda ct, x: [neg(ct)])  # d(-x) = -dx
numba_emitters[neg_p] = "(-{0})"

add_p = binop("add", np.add)
add = _bind2(add_p)
ad.deflinear2(add_p, lambda ct, x, y: [ct, ct])  # d(x + y) = dx + dy
ad.defsum(add_p, None)
numba_emitters[add_p] = "({0} + {1})"

sub_p = binop("sub", np.subtract)
sub = _bind2(sub_p)
ad.deflinear2(sub_p, lambda ct, x, y: [ct, neg(ct)])  # d(x - y) = dx - dy
ad.defsum(sub_p, neg)
numba_emitters[sub_p] = "({0} - {1})"

mul_p = binop("mul", np.multiply, _ANY, "a numeric or boolean")
mul = _bind2(mul_p)
ad.defbilinear(  # d(x y) = dx y + x dy
    mul_p,
    lambda ct, x, y: mul(ct, y),
    lambda ct, x, y: mul(x, ct),
)
numba_emitters[mul_p] = "({0} * {1})"


def _div_impl(x: Any, y: Any) -> Any:
    eager_check_binary("div", x, y)
    eager_check_dtypes("div", x, y)
    if not hasattr(x, "dtype"):  # Python scalars: int64 (divided as integers), float64...
        x, y = np.asarray(x)[()], np.asarray(y)[()]
    dt = x.dtype
    if dt is not None and dt.kind in "iu":  # rounds toward zero, as C and JAX's lax.div
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            q = np.floor_divide(x, y)
            up = (np.fmod(x, y) != 0) & ((x < 0) != (y < 0))
        return q + up.astype(q.dtype)
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
    if ctx.out_dtype.kind == "i":  # rounds toward zero, as the impl; MIN // -1 wraps
        q, r = f"np.floor_divide({x}, {y})", f"({x} - np.floor_divide({x}, {y}) * {y})"
        up = f"({y} != 0 and {r} != 0 and (({x} < 0) != ({y} < 0)))"
        return f"(-{x} if {y} == -1 else ({q} + 1 if {up} else {q}))"
    if ctx.out_dtype.kind in "ub":
        return f"np.floor_divide({x}, {y})"
    if ctx.out_dtype.kind == "c":  # Numba raises on a complex zero divisor; NumPy: inf/nan
        zero = "np.float64(0.0)"
        return (
            f"(({x}) / ({y}) if ({y}).real != 0.0 or ({y}).imag != 0.0 "
            f"else np.complex128(complex(({x}).real / {zero}, ({x}).imag / {zero})))"
        )
    return f"({x} / {y})"


numba_emitters[div_p] = _div_emit
# ---------------------------------------------------------------------------
# exp, log, log1p (the other unary math: lax/elementwise.py)
# ---------------------------------------------------------------------------

exp_p = unop("exp", np.exp)
exp = _bind1(exp_p)
ad.defjvp2(exp_p, lambda g, ans, x: mul(g, ans))  # d exp = exp dx


def _exp_emit(ctx: _nr.EmitContext) -> str | None:
    # Numba's complex exp overflows to inf + inf*j where exp(re) alone overflows but
    # exp(re) * cos(im) does not (exp(710 + 1j)); complex operands stay with the impl
    return None if ctx.in_dtypes[0].kind == "c" else f"np.exp({ctx.args[0]})"


numba_emitters[exp_p] = _exp_emit

log_p = unop("log", np.log)
log = _bind1(log_p)
ad.defjvp(log_p, lambda g, x: div(g, x))  # d log = dx / x
numba_emitters[log_p] = "np.log({0})"

log1p_p = unop("log1p", np.log1p)
log1p = _bind1(log1p_p)
ad.defjvp(log1p_p, lambda g, x: div(g, add(x, full_like(x, 1))))  # d log1p = dx / (1 + x)
numba_emitters[log1p_p] = "np.log1p({0})"

# ---------------------------------------------------------------------------
# select_n
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
    shape, dtype = getattr(which, "shape", ()), getattr(cases[0], "dtype", None)
    for c in cases:
        if getattr(c, "shape", ()) != shape or dtype is None or getattr(c, "dtype", None) != dtype:
            # as traced (and as JAX): equal shapes and dtypes, no broadcasting, no promotion
            _select_n_abstract(*[core.get_aval(a) for a in (which, *cases)])
            break
    if len(cases) == 2:
        out = np.where(which, cases[1], cases[0])
    else:
        out = np.choose(which, cases)
    return out[()] if np.ndim(out) == 0 else out


select_n_p = register(Primitive("select_n"), _select_n_impl, _select_n_abstract)


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise (a bool ``which`` picks cases[1] where True); the
    cases have one shape, and a 0-d ``which`` picks for all of them, as in JAX. The
    cases may be typed key arrays (all of them), ``which`` of their key shape."""
    if cases and type(cases[0]) is PRNGKeyArray:  # (one check: select_n is everywhere)
        return _select_n_keys(which, cases)
    shape = getattr(cases[0], "shape", ()) if cases else ()
    if shape and not getattr(which, "shape", ()):
        which = broadcast_in_dim(which, tuple(shape), ())
    return select_n_p.bind(which, *cases)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where the bool ``pred`` is True, else ``on_false`` (elementwise); also
    on two typed key arrays (``random.key``) of one shape, ``pred`` of that shape."""
    if type(on_true) is PRNGKeyArray or type(on_false) is PRNGKeyArray:
        return _select_keys(pred, on_true, on_false)
    return select_n(pred, on_false, on_true)


def _select_keys(pred: Any, on_true: Any, on_false: Any) -> PRNGKeyArray:
    if type(on_true) is not PRNGKeyArray or type(on_false) is not PRNGKeyArray:
        raise TypeError("select: expected two key arrays or none, got one key array.")
    if on_true.shape != on_false.shape:
        raise TypeError(
            f"select: expected key arrays of one shape, got {on_true.shape} and {on_false.shape}."
        )
    shape = on_true._base.shape
    pshape = tuple(getattr(pred, "shape", ()))
    if pshape not in ((), shape[:-1]):
        raise TypeError(f"select: expected a predicate of shape () or {shape[:-1]}, got {pshape}.")
    if pshape:
        pred = broadcast_in_dim(pred, tuple(shape), tuple(range(len(pshape))))
    return PRNGKeyArray(select_n(pred, on_false._base, on_true._base))


def _select_n_keys(which: Any, cases: Sequence[Any]) -> PRNGKeyArray:
    if not all(type(c) is PRNGKeyArray for c in cases):
        raise TypeError("select_n: expected cases that are all key arrays or none, got a mix.")
    shapes = {c.shape for c in cases}
    if len(shapes) != 1:
        raise TypeError(f"select_n: expected key arrays of one shape, got {sorted(shapes)}.")
    shape = cases[0]._base.shape
    wshape = tuple(getattr(which, "shape", ()))
    if wshape not in ((), shape[:-1]):
        raise TypeError(f"select_n: expected a selector of shape () or {shape[:-1]}, got {wshape}.")
    which = broadcast_in_dim(which, tuple(shape), tuple(range(len(wshape))))
    return PRNGKeyArray(select_n_p.bind(which, *(c._base for c in cases)))


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


# ---------------------------------------------------------------------------
# convert_element_type
# ---------------------------------------------------------------------------


def _convert_abstract(x: ShapedArray, *, new_dtype: np.dtype, weak_type: bool) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_impl(x: Any, *, new_dtype: np.dtype, weak_type: bool) -> Any:
    # dtypes.convert: JAX's conversions (floats to integers saturate, NaN gives 0); a
    # weak-type change alone copies nothing
    out = dtypes.convert(x, new_dtype)
    return out[()] if isinstance(out, np.ndarray) and out.ndim == 0 else out


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
    if src.kind == "c" and dst.kind != "c":
        x = f"({x}).real"  # also to bool: the real part's truth, as the impl and JAX
    if dst.kind == "b":
        return f"({x} != 0)"
    if src.kind in "fc" and dst.kind in "iu":
        # saturating, as dtypes.convert (the eager impl): NaN -> 0, out of range -> the
        # nearest limit; the cast of x itself only runs where it is in range
        low, high, lo_int, hi_int = dtypes.float_to_int_limits(dst)
        c = _nr.dtype_ctor(dst)
        below = f"{x} < {low!r}" if lo_int == 0 else f"{x} <= {low!r}"
        return (
            f"({c}({hi_int}) if {x} >= {high!r} else ({c}({lo_int}) if {below} else "
            f"({c}({x}) if {x} == {x} else {c}(0))))"
        )
    return x  # the backend's explicit cast to the output dtype does the conversion


numba_emitters[convert_element_type_p] = _convert_element_type_emit


# ---------------------------------------------------------------------------
# broadcast_in_dim
# ---------------------------------------------------------------------------


def _broadcast_in_dim_abstract(
    x: ShapedArray, *, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]
) -> ShapedArray:
    if len(broadcast_dimensions) != x.ndim:
        raise ValueError(
            f"broadcast_in_dim: expected one broadcast dimension per operand axis "
            f"({x.ndim}), got {broadcast_dimensions} for operand shape {x.shape} and "
            f"target shape {shape}."
        )
    for d, od in zip(x.shape, broadcast_dimensions):
        if not 0 <= od < len(shape) or d not in (1, shape[od]):
            raise ValueError(
                f"broadcast_in_dim: expected operand shape {x.shape} to be broadcastable "
                f"into shape {shape} along dimensions {broadcast_dimensions}, got a mismatch "
                f"at operand size {d}."
            )
    if any(a >= b for a, b in zip(broadcast_dimensions, broadcast_dimensions[1:])):
        raise ValueError(
            f"broadcast_in_dim: expected strictly increasing broadcast_dimensions, got "
            f"{broadcast_dimensions}."
        )
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_impl(
    x: Any, *, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]
) -> Any:
    x = np.asarray(x)
    if x.flags.c_contiguous and x.size and not x.dtype.hasobject:
        # A read-only view of x's buffer with stride 0 along the new and the size-1 axes:
        # what np.broadcast_to returns, in a fifth of its time (eager programs broadcast
        # small operands often).
        strides = [0] * len(shape)
        for d, od, st in zip(x.shape, broadcast_dimensions, x.strides):
            if d != 1:
                strides[od] = st
        out = np.ndarray(shape, x.dtype, x, 0, tuple(strides))
        out.flags.writeable = False
        return out
    expanded = [1] * len(shape)
    for d, od in zip(x.shape, broadcast_dimensions):
        expanded[od] = d
    return np.broadcast_to(x.reshape(expanded), shape)


broadcast_in_dim_p = register(
    Primitive("broadcast_in_dim"), _broadcast_in_dim_impl, _broadcast_in_dim_abstract
)


def broadcast_in_dim(x: Any, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]) -> Any:
    """Broadcast ``x`` into ``shape``; operand axis i becomes output axis
    ``broadcast_dimensions[i]`` (where its size must be 1 or equal)."""
    shape = tuple(int(d) for d in shape)
    bdims = tuple(int(d) for d in broadcast_dimensions)
    if type(x) is PRNGKeyArray:  # typed keys: their data, the two words a last axis
        out = broadcast_in_dim(x._base, (*shape, 2), (*bdims, len(shape)))
        return PRNGKeyArray(out)
    aval = core.get_aval(x)
    if aval.shape == shape and bdims == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=bdims)


def _broadcast_in_dim_transpose(
    ct: Any, x: Any, *, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]
) -> list[Any]:
    # Sum the cotangent over the axes that were created or stretched.
    in_shape = x.aval.shape
    new_axes = tuple(i for i in range(len(shape)) if i not in broadcast_dimensions)
    stretched = tuple(
        od for d, od in zip(in_shape, broadcast_dimensions) if d == 1 and shape[od] != 1
    )
    axes = tuple(sorted(new_axes + stretched))
    out = reduce_sum(ct, axes) if axes else ct
    return [reshape(out, in_shape)]


ad.deflinear2(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _broadcast_in_dim_batch(
    vals: Sequence[Any],
    bdims: Sequence[Any],
    *,
    shape: tuple[int, ...],
    broadcast_dimensions: tuple[int, ...],
) -> tuple[Any, int]:
    # The batch axis goes right after the output axis of the operand axis before it.
    (x,), (bdim,) = vals, bdims
    size = core.get_aval(x).shape[bdim]
    out_bdim = 0 if bdim == 0 else broadcast_dimensions[bdim - 1] + 1
    dims = [d + (d >= out_bdim) for d in broadcast_dimensions]
    dims.insert(bdim, out_bdim)
    out_shape = shape[:out_bdim] + (size,) + shape[out_bdim:]
    return broadcast_in_dim(x, out_shape, tuple(dims)), out_bdim


batching.batching_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch

# ---------------------------------------------------------------------------
# reshape
# ---------------------------------------------------------------------------


def _reshape_abstract(x: ShapedArray, *, new_sizes: tuple[int, ...]) -> ShapedArray:
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise ValueError(
            f"reshape: expected a shape with {x.size} elements for operand shape "
            f"{x.shape}, got {new_sizes}."
        )
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


def _reshape_impl(x: Any, *, new_sizes: tuple[int, ...]) -> Any:
    return np.reshape(x, new_sizes)


reshape_p = register(Primitive("reshape"), _reshape_impl, _reshape_abstract)


def reshape(
    x: Any,
    new_sizes: tuple[int, ...],
    dimensions: tuple[int, ...] | None = None,
    out_sharding: Any = None,
) -> Any:
    """Row-major reshape to ``new_sizes`` (no -1: use functrace.numpy.reshape for that),
    of ``x`` transposed by ``dimensions`` first if given (JAX's). ``out_sharding`` is
    accepted and ignored (one device)."""
    new_sizes = tuple(int(d) for d in new_sizes)
    if dimensions is not None:
        x = transpose(x, tuple(dimensions))
    if type(x) is PRNGKeyArray:  # typed keys: their data, the two words a last axis
        return PRNGKeyArray(reshape(x._base, (*new_sizes, 2)))
    if core.get_aval(x).shape == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


ad.deflinear2(reshape_p, lambda ct, x, *, new_sizes: [reshape(ct, x.aval.shape)])


def _reshape_batch(
    vals: Sequence[Any], bdims: Sequence[Any], *, new_sizes: tuple[int, ...]
) -> tuple[Any, int]:
    # Row-major order mixes axes: the batch axis must lead so examples stay contiguous.
    x = batching.moveaxis(vals[0], bdims[0], 0)
    return reshape(x, (core.get_aval(x).shape[0], *new_sizes)), 0


batching.batching_rules[reshape_p] = _reshape_batch


# ---------------------------------------------------------------------------
# transpose
# ---------------------------------------------------------------------------


def _transpose_abstract(x: ShapedArray, *, permutation: tuple[int, ...]) -> ShapedArray:
    if sorted(permutation) != list(range(x.ndim)):
        raise ValueError(
            f"transpose: expected a permutation of {tuple(range(x.ndim))} for operand shape "
            f"{x.shape}, got {permutation}. List every axis exactly once."
        )
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


def _transpose_impl(x: Any, *, permutation: tuple[int, ...]) -> Any:
    return np.transpose(x, permutation)


transpose_p = register_checked(Primitive("transpose"), _transpose_impl, _transpose_abstract)


def transpose(x: Any, permutation: tuple[int, ...]) -> Any:
    """Permute axes: output axis ``i`` is operand axis ``permutation[i]``."""
    perm = as_index_tuple("transpose", permutation)
    if type(x) is PRNGKeyArray:  # typed keys: their data, the two words a last axis
        return PRNGKeyArray(transpose(x._base, (*perm, len(perm))))
    if perm == tuple(range(core.get_aval(x).ndim)):
        return x
    return transpose_p.bind(x, permutation=perm)


def _transpose_transpose(ct: Any, x: Any, *, permutation: tuple[int, ...]) -> list[Any]:
    # A permutation is orthogonal: its transpose is the inverse permutation.
    inverse = [0] * len(permutation)
    for i, p in enumerate(permutation):
        inverse[p] = i
    return [transpose(ct, tuple(inverse))]


ad.deflinear2(transpose_p, _transpose_transpose)


def _transpose_batch(
    vals: Sequence[Any], bdims: Sequence[Any], *, permutation: tuple[int, ...]
) -> tuple[Any, int]:
    # Extend the permutation: the batch axis stays where it is.
    (x,), (bdim,) = vals, bdims
    perm = [p + (p >= bdim) for p in permutation]
    perm.insert(bdim, bdim)
    return transpose(x, tuple(perm)), bdim


batching.batching_rules[transpose_p] = _transpose_batch

# ---------------------------------------------------------------------------
# reduce_sum
# ---------------------------------------------------------------------------


def _check_axes(name: str, x: ShapedArray, axes: tuple[int, ...]) -> tuple[int, ...]:
    if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(
            f"{name}: expected distinct axes in [0, {x.ndim}) for operand shape "
            f"{x.shape}, got {axes}. Normalize negative axes first."
        )
    return tuple(d for i, d in enumerate(x.shape) if i not in axes)


def _reduce_sum_abstract(x: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
    return ShapedArray(_check_axes("reduce_sum", x, axes), x.dtype, x.weak_type)


def _reduce_sum_impl(x: Any, *, axes: tuple[int, ...]) -> Any:
    return np.add.reduce(x, axis=axes, dtype=x.dtype)  # np.sum's loop, without its wrapper


reduce_sum_p = register(Primitive("reduce_sum"), _reduce_sum_impl, _reduce_sum_abstract)


def reduce_sum(x: Any, axes: tuple[int, ...]) -> Any:
    """Sum over ``axes`` (static tuple of ints)."""
    axes = tuple(sorted(int(a) for a in axes))
    if not axes:
        return x
    return reduce_sum_p.bind(x, axes=axes)


def _reduce_sum_transpose(ct: Any, x: Any, *, axes: tuple[int, ...]) -> list[Any]:
    shape = x.aval.shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return [broadcast_in_dim(ct, shape, kept)]


ad.deflinear2(reduce_sum_p, _reduce_sum_transpose)


def _reduce_batch(p: Primitive) -> Callable[..., Any]:
    """Batching rule of a reduction over ``axes``: the batch axis is never reduced."""

    def rule(vals: Any, bdims: Any, *, axes: tuple[int, ...]) -> tuple[Any, int]:
        (x,), (bdim,) = vals, bdims
        shifted = tuple(a + (a >= bdim) for a in axes)
        return p.bind(x, axes=shifted), bdim - sum(a < bdim for a in axes)

    return rule


batching.batching_rules[reduce_sum_p] = _reduce_batch(reduce_sum_p)


# The batching interpreter sits below lax: its helpers that move batch axes
# (moveaxis, broadcast_batch) use these two primitives, registered here.
batching.register_axis_primitives(transpose=transpose, broadcast_in_dim=broadcast_in_dim)

__all__ = [
    "add",
    "add_p",
    "broadcast_in_dim",
    "broadcast_in_dim_p",
    "convert_element_type",
    "convert_element_type_p",
    "div",
    "div_p",
    "elementwise_numpy",
    "exp",
    "exp_p",
    "full_like",
    "log",
    "log1p",
    "log1p_p",
    "log_p",
    "mul",
    "mul_p",
    "neg",
    "neg_p",
    "reduce_sum",
    "reduce_sum_p",
    "reshape",
    "reshape_p",
    "select",
    "select_n",
    "select_n_p",
    "sub",
    "sub_p",
    "transpose",
    "transpose_p",
    "zeros_like",
]
