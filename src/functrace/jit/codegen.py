"""Code-generation helpers shared by the driver (``lowering``) and native loops (``loops``).

* the scalar expression of an elementwise equation (:func:`scalar_expr`,
  :func:`elementwise_expr`, :func:`probe_ctx`), from its entry in
  ``numba_rules.numba_emitters``;
* the equation printer of the generated code's comments (:func:`fmt_eqn`,
  :func:`fmt_line`): the jaxpr printer of ``functrace.ir`` with sub-jaxprs shown as
  ``{...}``; variables are named by ``ir.var_namer``, so the driver's variables are
  the printed jaxpr's names;
* :func:`inline_calls`, which replaces ``custom_jvp``/``custom_vjp`` calls by their
  equations before lowering (their impl would re-interpret the jaxpr eagerly);
* :data:`strict_kernels`, the switch that makes a Numba compile failure an error
  instead of a fallback to NumPy calls or Python loops (the tests set it).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from functrace.custom_batching import custom_vmap_call_p
from functrace.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p, linear_call_p
from functrace.dtypes import short_name
from functrace.interpreters.numba_rules import (
    DriverRule,
    EmitContext,
    numba_dtype_ok,
    numba_emitters,
)
from functrace.ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, pp_eqn, pp_eqn_line
from functrace.lax.remat import remat_p

Atom = Var | Literal

strict_kernels = False
"""Raise instead of falling back when Numba cannot compile a kernel or a native loop
(the tests set it)."""


def scalar_expr(p: Any, ctx: EmitContext) -> str | None:
    """The scalar expression for elementwise ``p``, or None if ``p`` is not fusible here."""
    rule = numba_emitters.get(p)
    if rule is None or isinstance(rule, DriverRule):
        return None
    if not numba_dtype_ok(ctx.out_dtype) or not all(numba_dtype_ok(d) for d in ctx.in_dtypes):
        return None
    if isinstance(rule, str):
        return rule.format(*ctx.args)
    return rule(ctx)


def probe_ctx(eqn: JaxprEqn) -> EmitContext:
    """The emit context of ``eqn`` with placeholder operands ``_x0``, ``_x1``..."""
    n = len(eqn.inputs)
    return EmitContext(
        tuple(f"_x{i}" for i in range(n)),
        tuple(x.aval.dtype for x in eqn.inputs),
        eqn.out_binders[0].aval.dtype,
        eqn.params,
    )


def elementwise_expr(eqn: JaxprEqn, args: tuple[str, ...]) -> str | None:
    """The scalar expression of ``eqn`` on the operand expressions ``args``, or None if
    ``eqn`` is not an elementwise equation compiled code computes."""
    if eqn.primitive.multiple_results or len(eqn.out_binders) != 1:
        return None
    ctx = probe_ctx(eqn)._replace(args=args)
    return scalar_expr(eqn.primitive, ctx)


def fmt_eqn(eqn: JaxprEqn, name: Any) -> str:
    """One equation as the driver's comments show it, e.g. ``c:f32[3] = mul a b``."""
    return pp_eqn(eqn, name, inline_jaxprs=False)


def fmt_line(eqn: JaxprEqn, outs: list[str], args: list[str]) -> str:
    """An equation with the given texts for its results and operands (kernel locals)."""
    return pp_eqn_line(eqn, outs, args, inline_jaxprs=False)


def short(dtype: np.dtype) -> str:
    """``f32``, ``i64``...: the dtype as the jaxpr printer writes it."""
    return short_name(dtype)


_CALLS = (custom_jvp_call_p, custom_vjp_call_p, custom_vmap_call_p, linear_call_p)


def inline_calls(jaxpr: Jaxpr, consts: list[Any], remat: bool = False) -> tuple[Jaxpr, list[Any]]:
    """Replace ``custom_*_call`` equations (custom_jvp, custom_vjp, custom_vmap) and
    ``linear_call`` ones by the equations of their ``call_jaxpr``; with ``remat``, also
    ``checkpoint`` equations by those of their ``jaxpr`` (native loops: there the values
    of one iteration live in the loop's locals either way)."""
    calls = (*_CALLS, remat_p) if remat else _CALLS
    if not any(e.primitive in calls for e in jaxpr.eqns):
        return jaxpr, list(consts)
    constvars, new_consts = list(jaxpr.constvars), list(consts)
    eqns: list[JaxprEqn] = []
    subst: dict[Var, Atom] = {}

    def sub(x: Atom) -> Atom:
        return subst.get(x, x) if isinstance(x, Var) else x

    for e in jaxpr.eqns:
        if e.primitive not in calls:
            eqns.append(e._replace(inputs=tuple(sub(x) for x in e.inputs)))
            continue
        closed: ClosedJaxpr = (
            ClosedJaxpr(e.params["jaxpr"], []) if e.primitive is remat_p else e.params["call_jaxpr"]
        )
        inner, inner_consts = inline_calls(closed.jaxpr, closed.consts, remat)
        env: dict[Var, Atom] = {}
        for v, c in zip(inner.constvars, inner_consts):
            nv = Var(v.aval)
            constvars.append(nv)
            new_consts.append(c)
            env[v] = nv
        for v, x in zip(inner.invars, e.inputs):
            env[v] = sub(x)
        for ie in inner.eqns:
            ins = tuple(env.get(x, x) if isinstance(x, Var) else x for x in ie.inputs)
            outs = tuple(Var(v.aval) for v in ie.out_binders)
            env.update(zip(ie.out_binders, outs))
            eqns.append(JaxprEqn(ie.primitive, ins, ie.params, outs))
        for ob, ov in zip(e.out_binders, inner.outvars):
            subst[ob] = env.get(ov, ov) if isinstance(ov, Var) else ov
    outvars = tuple(sub(x) for x in jaxpr.outvars)
    return Jaxpr(tuple(constvars), jaxpr.invars, tuple(eqns), outvars), new_consts


_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


def delete_after_last_use(body: list[str], big: dict[str, int], keep: set[str]) -> list[str]:
    """The driver body ``body`` (its lines, indented four spaces) with a ``del`` of each
    name of ``big`` (large arrays) after the last top-level statement that reads it,
    unless the body never assigns it, it is in ``keep`` (pooled scratch buffers), or
    that statement is the last one (the ``return``)."""
    # top-level statements of the body (deeper lines belong to the one above)
    stmts: list[list[str]] = []
    for ln in body:
        if stmts and ln.startswith("     "):
            stmts[-1].append(ln)
        else:
            stmts.append([ln])
    assigned: set[str] = set()
    last: dict[str, int] = {}
    for i, st in enumerate(stmts):
        code = " ".join(ln.split("#", 1)[0] for ln in st)
        names = set(_IDENT.findall(code)) & big.keys()
        for n in names:
            last[n] = i
        lhs = code.split("=", 1)[0] if "=" in code.split("(", 1)[0] else ""
        assigned.update(set(_IDENT.findall(lhs)) & big.keys())
    dels: dict[int, list[str]] = {}
    for n, i in last.items():
        if n in assigned and n not in keep and i < len(stmts) - 1:
            dels.setdefault(i, []).append(n)
    if not dels:
        return body
    out: list[str] = []
    for i, st in enumerate(stmts):
        out.extend(st)
        if i in dels:
            out.append(f"    del {', '.join(sorted(dels[i]))}")
    return out


__all__ = [
    "delete_after_last_use",
    "elementwise_expr",
    "fmt_eqn",
    "fmt_line",
    "inline_calls",
    "probe_ctx",
    "scalar_expr",
    "short",
    "strict_kernels",
]
