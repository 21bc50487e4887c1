"""Staging: record the primitives applied to tracers as a jaxpr.

``StagingTrace`` turns every primitive it sees into a :class:`~functrace.ir.JaxprEqn`
(computing the output type with the primitive's abstract-eval rule) instead of
running it. It is used two ways:

* *dynamically* by ``make_jaxpr`` and ``jit`` (``trace_to_jaxpr``): every operation
  inside the traced function is recorded, even one on constants only;
* *non-dynamically* by reverse mode, where only operations touching tangents are
  recorded (the linear part of the computation); primal work runs eagerly below.

Values from lower levels or plain arrays that meet a staged tracer become
constants of the jaxpr (scalars are written inline as literals).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import _debug, core
from functrace.core import Primitive, ShapedArray, Trace, Tracer
from functrace.errors import ConcretizationError, MissingRuleError
from functrace.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, typecheck_jaxpr

# Global switch for extra checking (the tests turn it on): type-check every
# jaxpr built, including the internal tangent tapes of reverse mode.
enable_checks = False
_flags = _debug.flags  # config.debug_nans / debug_infs: record equations' sources
_dstate = _debug.state  # record_sources: so does saved_residuals


class JaxprBuilder:
    """Collects equations, constants and argument names while tracing."""

    __slots__ = ("eqns", "consts", "arg_names", "invars", "arg_values")

    def __init__(self) -> None:
        self.eqns: list[JaxprEqn] = []
        # id(value) -> (tracer, value); keeping the value alive keeps the id valid.
        self.consts: dict[int, tuple[StagingTracer, Any]] = {}
        self.arg_names: dict[Var, str] = {}
        self.invars: list[Var] = []
        # The values a loop body's or branch's arguments stand for (inside shard_map
        # bodies only: which mesh axes they vary over, see interpreters/spmd.py), else None.
        self.arg_values: dict[Var, Any] | None = None

    def build(
        self, in_tracers: Sequence[StagingTracer], out_tracers: Sequence[StagingTracer]
    ) -> tuple[Jaxpr, list[Any]]:
        constvars: Any = tuple(t.atom for t, _ in self.consts.values())
        consts = [v for _, v in self.consts.values()]
        invars: Any = tuple(t.atom for t in in_tracers)
        jaxpr = Jaxpr(constvars, invars, tuple(self.eqns), tuple(t.atom for t in out_tracers))
        if enable_checks:
            typecheck_jaxpr(jaxpr)
        return jaxpr, consts

    def dependencies(self, var: Var) -> list[str]:
        """Names of the arguments ``var`` was computed from (for error messages)."""
        producers = {v: e for e in self.eqns for v in e.out_binders}
        seen: set[Var] = set()
        stack, found = [var], []
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in self.arg_names:
                found.append(self.arg_names[v])
            eqn = producers.get(v)
            if eqn is not None:
                stack.extend(x for x in eqn.inputs if isinstance(x, Var))
        order = {v: i for i, v in enumerate(self.invars)}
        names = {self.arg_names[v]: order.get(v, 0) for v in self.arg_names}
        return sorted(set(found), key=lambda n: names.get(n, 0))


class StagingTracer(Tracer):
    # ``py``: the value is a Python scalar in an eager run (a Python-scalar argument of
    # ``jit``, or Python operators applied to such values and Python scalars only), so
    # ``jit`` returns it as a Python scalar too (see ``numpy/_tracer_methods.py``).
    __slots__ = ("_aval", "atom", "py")

    def __init__(self, trace: StagingTrace, aval: ShapedArray, var: Var | Literal) -> None:
        self._trace = trace
        self._aval = aval
        self.atom = var
        self.py = False

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    def to_concrete_value(self, why: str = "a concrete value") -> np.ndarray:
        if isinstance(self.atom, Literal):
            return np.asarray(self.atom.val)
        trace = self._trace
        assert isinstance(trace, StagingTrace)
        deps = trace.builder.dependencies(self.atom)  # type: ignore[arg-type]
        dep_txt = (
            f" It depends on argument{'s' if len(deps) > 1 else ''} "
            + ", ".join(f"`{d}`" for d in deps)
            + "."
            if deps
            else ""
        )
        raise ConcretizationError(
            f"{trace.origin}: expected a concrete value for {why}, got an abstract tracer "
            f"{self.aval.str_short()}; under jit only shapes and dtypes are known while "
            f"tracing.{dep_txt} Fixes: compute both branches with functrace.numpy.where, "
            f"use functrace.lax.cond / while_loop / fori_loop for control flow, or mark the "
            f"argument static with jit(..., static_argnums=...)."
        )


def _is_literal(val: Any) -> bool:
    t = type(val)
    if t in (float, int, bool, complex):
        return True
    if isinstance(val, np.generic):
        return True
    return t is np.ndarray and val.ndim == 0


class StagingTrace(Trace):
    __slots__ = ("builder",)

    def __init__(self, level: int, builder: JaxprBuilder) -> None:
        super().__init__(level)
        self.builder = builder

    def new_arg(self, aval: ShapedArray, name: str = "") -> StagingTracer:
        var = Var(aval)
        self.builder.invars.append(var)
        if name:
            self.builder.arg_names[var] = name
        return StagingTracer(self, aval, var)

    def pure(self, val: Any) -> StagingTracer:
        if _is_literal(val):
            if type(val) is int and not core.INT64_MIN <= val <= core.INT64_MAX:
                raise core.int64_overflow_error(self.origin or "functrace", val, "in traced code")
            aval = core.get_aval(val)
            return StagingTracer(self, aval, Literal(val, aval))
        key = id(val)
        hit = self.builder.consts.get(key)
        if hit is not None:
            return hit[0]
        aval = core.get_aval(val)
        if isinstance(val, Tracer):
            aval = aval.update()  # a fresh copy: never alias the lower tracer's aval
        tracer = StagingTracer(self, aval, Var(aval))
        self.builder.consts[key] = (tracer, val)
        return tracer

    lift = pure

    def process_primitive(self, primitive: Primitive, tracers: list[Any], params: dict) -> Any:
        rule = primitive.abstract_eval
        if rule is None:
            raise MissingRuleError(
                primitive.name,
                "abstract evaluation (jit/make_jaxpr)",
                "abstract_eval_rules",
                "functrace/lax",
                "{p}.def_abstract_eval(rule)",
            )
        avals = [t._aval for t in tracers]
        out = rule(*avals, **params)
        inputs = tuple(t.atom for t in tracers)
        # where it came from, for the debug checks' messages (nothing when they are off)
        src = _debug.current_source() if _flags.check or _dstate.record_sources else None
        if primitive.multiple_results:
            outs = [StagingTracer(self, a, Var(a)) for a in out]
            binders: Any = tuple(t.atom for t in outs)
            self.builder.eqns.append(JaxprEqn(primitive, inputs, params, binders, src))
            return outs
        tracer = StagingTracer(self, out, Var(out))
        self.builder.eqns.append(JaxprEqn(primitive, inputs, params, (tracer.atom,), src))  # type: ignore
        return tracer


def trace_to_jaxpr(
    fun: Callable[..., Sequence[Any]],
    in_avals: Sequence[ShapedArray],
    *,
    origin: str,
    arg_names: Sequence[str] | None = None,
    arg_values: Sequence[Any] | None = None,
) -> tuple[ClosedJaxpr, int]:
    """Trace flat ``fun(*tracers) -> list`` to a type-checked closed jaxpr.

    Returns the jaxpr and the number of outputs. ``origin`` names the transform and
    function for error messages (``"jit of 'f' (x.py:3)"``). ``arg_values``: the values
    the arguments stand for (a body's operands), kept on the builder while tracing.
    """
    builder = JaxprBuilder()
    with core.new_trace(StagingTrace, builder, origin=origin, dynamic=True) as trace:
        names = arg_names or [""] * len(in_avals)
        tracers_in = [trace.new_arg(a, n) for a, n in zip(in_avals, names)]
        if arg_values is not None:
            builder.arg_values = {t.atom: v for t, v in zip(tracers_in, arg_values)}  # type: ignore[misc]
        outs = fun(*tracers_in)
        tracers_out = [trace.full_raise(o) for o in outs]
        jaxpr, consts = builder.build(tracers_in, tracers_out)
    typecheck_jaxpr(jaxpr)
    return ClosedJaxpr(jaxpr, consts), len(tracers_out)


def trace_abstractly(
    fun: Callable[..., Any], in_avals: Sequence[ShapedArray], *, origin: str
) -> Any:
    """``fun(*tracers)`` on new tracers of ``in_avals``, under a staging trace whose jaxpr
    is never built: cheaper than :func:`trace_to_jaxpr` when only the types of ``fun``'s
    results are wanted (``fun`` reads them before returning)."""
    with core.new_trace(StagingTrace, JaxprBuilder(), origin=origin, dynamic=True) as trace:
        return fun(*[trace.new_arg(a) for a in in_avals])


__all__ = ["JaxprBuilder", "StagingTrace", "StagingTracer", "trace_abstractly", "trace_to_jaxpr"]
