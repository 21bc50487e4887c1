"""The Numba backend's rule table: how ``jit`` lowers each primitive.

``numba_emitters[p]`` is one of

* a **scalar template** (``str``), e.g. ``"np.sin({0})"``: an elementwise
  primitive. ``{0}``, ``{1}``... are its operands, already loaded as scalars of
  the operand dtypes. The template is used inside fused Numba loop kernels and,
  for 0-d values, as plain Python in the driver; the backend wraps the result in
  an explicit cast to the output dtype where needed (Numba would otherwise widen
  ``float32 * 2.0`` to float64);
* a **scalar emitter** (a callable ``ctx -> str | None``) for elementwise
  primitives whose code depends on dtypes or params (``integer_pow``,
  ``convert_element_type``...). Returning ``None`` means "not fusible here": the
  equation falls back to the driver calling the primitive's NumPy impl;
* a :class:`DriverRule`: a non-elementwise primitive emitted as one Python/NumPy
  expression in the generated driver (``np.dot`` for ``dot_general``...).

A primitive without an entry is lowered by the default rule, *the driver calls
its NumPy impl* (``core.impl_rules[p]``) with its params bound: always correct
(impls validate indices, so compiled code can never index out of bounds).
A primitive with neither an entry nor an impl is an error naming it
(:func:`lowering_rule`); there is no object-mode fallback anywhere.

Elementwise entries are registered in the primitive's own block in
``functrace/lax/elementwise.py``; entries for primitives defined elsewhere live in
``functrace/jit/driver_rules.py``. This module imports neither Numba nor the
primitive modules, so registering costs nothing at import time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from functrace import core
from functrace.core import Primitive
from functrace.errors import MissingRuleError


class EmitContext(NamedTuple):
    """What a scalar emitter sees: operand expressions, their dtypes and the params."""

    args: tuple[str, ...]
    in_dtypes: tuple[np.dtype, ...]
    out_dtype: np.dtype
    params: dict[str, Any]


@dataclass(frozen=True)
class DriverContext:
    """What a driver rule sees. ``const(value)`` names a value in the driver's globals;
    ``lower(jaxpr, what)`` compiles a sub-jaxpr (a loop body, a branch) into its own
    driver and returns that callable (flat arguments in, a flat tuple out)."""

    args: tuple[str, ...]
    in_avals: tuple[core.ShapedArray, ...]
    out_avals: tuple[core.ShapedArray, ...]
    params: dict[str, Any]
    const: Callable[[Any], str]
    lower: Callable[[Any, str], Callable[..., tuple[Any, ...]]]


@dataclass(frozen=True)
class DriverRule:
    """A non-elementwise primitive emitted as one expression in the driver.

    ``emit(ctx)`` returns the expression (a tuple expression for primitives with
    multiple results), or None to use the default impl call. ``fresh`` promises
    that the results are new, writable arrays (or NumPy scalars) sharing no memory
    with the operands; ``contig`` that they are also C-contiguous whatever the
    operands' layouts (``np.dot``: NumPy's reductions and ``np.concatenate`` follow
    their operands' memory order, so a reduction of a transposed array is not C);
    ``keeps_contig`` that the result is C-contiguous when the operand is (reshapes).
    Kernels read arrays as C-contiguous without checking: the driver passes any
    array without one of these promises through ``np.ascontiguousarray``.
    """

    emit: Callable[[DriverContext], str | None]
    fresh: bool = False
    contig: bool = False
    keeps_contig: bool = False


ScalarEmitter = str | Callable[[EmitContext], str | None]
Emitter = ScalarEmitter | DriverRule

numba_emitters: dict[Primitive, Emitter] = {}

IMPL = "impl"
"""Marker returned by :func:`lowering_rule` for the default "driver calls impl" rule."""

# Dtypes Numba handles natively in kernels (no float16, no float0, no objects).
_NUMBA_KINDS = "biufc"


def numba_dtype_ok(dtype: np.dtype) -> bool:
    """Whether compiled code handles ``dtype`` (else the driver calls NumPy impls)."""
    return (
        dtype.kind in _NUMBA_KINDS
        and dtype.isnative
        and dtype.itemsize <= 16
        and dtype != np.float16
    )


def dtype_ctor(dtype: np.dtype) -> str:
    """The constructor that casts a scalar to ``dtype``, valid in Numba and in Python."""
    return "np.bool_" if dtype.kind == "b" else f"np.{dtype.name}"


def lit(dtype: np.dtype, value: Any) -> str:
    """A typed constant, e.g. ``np.float32(1.0)``."""
    if dtype.kind == "b":
        return f"np.bool_({bool(value)})"
    if dtype.kind in "iu":
        return f"np.{dtype.name}({int(value)})"
    return f"np.{dtype.name}({float(value)!r})"


def lowering_rule(p: Primitive) -> Emitter | str:
    """The rule ``jit`` uses for ``p``: its entry, :data:`IMPL`, or an error."""
    import functrace.jit.driver_rules  # noqa: F401  (registers the non-elementwise rules)

    rule = numba_emitters.get(p)
    if rule is not None:
        return rule
    if p in core.impl_rules:
        return IMPL
    raise MissingRuleError(
        p.name,
        "jit (Numba lowering)",
        "numba_emitters",
        "functrace/lax (elementwise) or functrace/jit/driver_rules.py",
    )


def scalar_expr(p: Primitive, ctx: EmitContext) -> str | None:
    """The scalar expression for elementwise ``p``, or None if ``p`` is not fusible here."""
    rule = numba_emitters.get(p)
    if rule is None or isinstance(rule, DriverRule):
        return None
    if not numba_dtype_ok(ctx.out_dtype) or not all(numba_dtype_ok(d) for d in ctx.in_dtypes):
        return None
    if isinstance(rule, str):
        return rule.format(*ctx.args)
    return rule(ctx)


# ---------------------------------------------------------------------------
# Scalar emitters whose code depends on dtypes or params. Registered in the
# primitives' blocks in functrace/lax/elementwise.py.
# ---------------------------------------------------------------------------


def div(ctx: EmitContext) -> str:
    x, y = ctx.args
    if ctx.out_dtype.kind == "i":  # the impl floor-divides integers; MIN // -1 wraps
        return f"(-{x} if {y} == -1 else np.floor_divide({x}, {y}))"
    if ctx.out_dtype.kind in "ub":
        return f"np.floor_divide({x}, {y})"
    return f"({x} / {y})"


def rem(ctx: EmitContext) -> str:
    x, y = ctx.args
    if ctx.out_dtype.kind != "i":
        return f"np.fmod({x}, {y})"
    # Numba's np.fmod on signed integers is an unsigned remainder (wrong for negative
    # operands): take Python's floor remainder and move it to the dividend's sign.
    # NumPy gives 0 for y == 0 and for y == -1 (where x % y could overflow).
    r = f"({x} % {y})"
    return (
        f"({lit(ctx.out_dtype, 0)} if ({y} == 0 or {y} == -1) else "
        f"({r} - {y} if ({r} != 0 and (({r} < 0) != ({x} < 0))) else {r}))"
    )


def maximum(ctx: EmitContext) -> str | None:
    x, y = ctx.args
    if ctx.out_dtype.kind == "c":
        return None  # complex ordering: the impl's (NumPy's) lexicographic rule
    return f"({x} | {y})" if ctx.out_dtype.kind == "b" else f"np.maximum({x}, {y})"


def minimum(ctx: EmitContext) -> str | None:
    x, y = ctx.args
    if ctx.out_dtype.kind == "c":
        return None
    return f"({x} & {y})" if ctx.out_dtype.kind == "b" else f"np.minimum({x}, {y})"


def integer_pow(ctx: EmitContext) -> str | None:
    (x,), y = ctx.args, ctx.params["y"]
    one = lit(ctx.out_dtype, 1)
    n = abs(y)
    if n == 0:
        return one
    if n > 16:
        return None  # rare: the impl (np.power) is exact enough and simpler
    prod = "(" + " * ".join([x] * n) + ")"
    return prod if y > 0 else f"({one} / {prod})"


def logistic(ctx: EmitContext) -> str:
    one = lit(ctx.out_dtype, 1)
    return f"({one} / (np.exp(-{ctx.args[0]}) + {one}))"  # 1 / (1 + e^-x), no overflow trap


def rsqrt(ctx: EmitContext) -> str:
    return f"({lit(ctx.out_dtype, 1)} / np.sqrt({ctx.args[0]}))"


def erf(ctx: EmitContext) -> str:
    return f"math.erf({ctx.args[0]})"


def lgamma(ctx: EmitContext) -> str:
    # +inf at the poles 0, -1, -2, ... (plain Python's math.lgamma raises there)
    (x,) = ctx.args
    return f"(math.inf if ({x} <= 0 and np.floor({x}) == {x}) else math.lgamma({x}))"


def no_kernel(ctx: EmitContext) -> None:
    """Elementwise, but no scalar Numba code: the driver calls the vectorised impl."""
    return None


def round_(ctx: EmitContext) -> str:
    (x,) = ctx.args
    if ctx.params.get("rounding_method", 0) == 1:
        return f"np.rint({x})"  # half to even
    half = lit(ctx.out_dtype, 0.5)  # half away from zero
    return f"np.copysign(np.floor(np.abs({x}) + {half}), {x})"


def ordered(op: str) -> Callable[[EmitContext], str | None]:
    """``<``, ``<=``, ``>``, ``>=``: Numba does not order complex numbers (NumPy does,
    lexicographically), so complex operands stay with the impl."""

    def emit(ctx: EmitContext) -> str | None:
        if ctx.in_dtypes[0].kind == "c":
            return None
        x, y = ctx.args
        return f"({x} {op} {y})"

    emit.__name__ = f"ordered_{op}"
    return emit


def not_(ctx: EmitContext) -> str:
    (x,) = ctx.args
    return f"(not {x})" if ctx.out_dtype.kind == "b" else f"(~{x})"


def select_n(ctx: EmitContext) -> str | None:
    which, *cases = ctx.args
    if len(cases) != 2:
        return None  # n-way selects keep the impl's range check
    return f"({cases[1]} if {which} else {cases[0]})"


def clamp(ctx: EmitContext) -> str | None:
    lo, x, hi = ctx.args
    if ctx.out_dtype.kind == "c":
        return None
    return f"np.minimum(np.maximum({x}, {lo}), {hi})"


def convert_element_type(ctx: EmitContext) -> str:
    (x,), (src,) = ctx.args, ctx.in_dtypes
    dst = ctx.out_dtype
    if dst.kind == "b":
        return f"({x} != 0)"
    if src.kind == "c" and dst.kind != "c":
        return f"({x}).real"
    return x  # the backend's explicit cast to the output dtype does the conversion


__all__ = [
    "IMPL",
    "DriverContext",
    "DriverRule",
    "EmitContext",
    "Emitter",
    "dtype_ctor",
    "lit",
    "lowering_rule",
    "numba_dtype_ok",
    "numba_emitters",
    "scalar_expr",
]
