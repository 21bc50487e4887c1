"""Fusion planning for the jit driver: which equations fuse into which kernel, and
which arrays may live in scratch buffers reused across calls.

Planning walks the equations once, in order:

* ``broadcast_in_dim`` is *virtual*: nothing is emitted; a kernel reading its
  result reads the operand with broadcast indexing instead. It is materialized
  (a zero-copy ``np.broadcast_to`` view) only for other consumers and outputs.
* an elementwise equation with a non-0-d output joins the open *group* of its
  output shape (one open group per shape);
* a 0-d elementwise equation becomes inline Python arithmetic on NumPy scalars
  in the driver (calling a kernel costs more than the arithmetic);
* a reduction (float32 sums, float max/min, not to 0-d) of a value computed by the
  open group of its shape joins that group, which closes: the kernel reduces as it
  computes (see ``kernels._reduction_lines``);
* anything else is one driver expression: its
  :class:`~functrace.interpreters.numba_rules.DriverRule` (``np.dot``...)
  or a call of its NumPy impl.

A group is *closed* (its kernel call is placed in the driver) as soon as any
value it produced is read by something that does not join it. Closing on first
outside use keeps every dependency satisfied: all of a group's inputs were
computed before it closed, and nothing read its values before it closed.

A closed group is split into its *components* (equations linked by the values they
pass each other), one kernel each, placed in the order of their first equations.
Independent chains of one shape (the Adam updates of equal-shape parameters, the
activations of identical layers) are then separate kernels with the same source,
so they share one compiled kernel: the number of distinct kernels, and the compile
time, does not grow with the depth of a model built from identical layers. Splitting
changes no result (every equation is computed as before) and costs one kernel call
(~1-2 us) per extra component.

Before planning, :func:`fold_transposed_dots` rewrites ``transpose(dot(x, y))`` as
``dot(y, x)`` and :func:`forward_unit_products` drops products with the constant 1.
:func:`scratch_values` picks the arrays read only inside the call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from functrace import lax
from functrace.core import Primitive
from functrace.interpreters.numba_rules import DriverContext, DriverRule, numba_emitters
from functrace.ir import Jaxpr, JaxprEqn, Literal, Var
from functrace.jit.codegen import elementwise_expr, probe_ctx

Atom = Var | Literal


def fold_transposed_dots(jaxpr: Jaxpr) -> Jaxpr:
    """``transpose[(1, 0)](dot_general(x, y))`` -> ``dot_general(y, x)`` for 2-D products.

    Reverse mode writes weight gradients this way; the folded form gives BLAS the
    transposed operands as views and yields a C-contiguous result directly
    (the transpose view would otherwise be copied before the optimizer's kernel).
    """
    dot_general_p, transpose_p = lax.dot_general_p, lax.transpose_p
    uses: dict[Var, int] = {}
    for e in jaxpr.eqns:
        for x in e.inputs:
            if isinstance(x, Var):
                uses[x] = uses.get(x, 0) + 1
    for x in jaxpr.outvars:
        if isinstance(x, Var):
            uses[x] = uses.get(x, 0) + 2
    producer = {e.out_binders[0]: i for i, e in enumerate(jaxpr.eqns) if len(e.out_binders) == 1}
    eqns: list[JaxprEqn | None] = list(jaxpr.eqns)
    changed = False
    for i, e in enumerate(jaxpr.eqns):
        if e.primitive is not transpose_p or tuple(e.params["permutation"]) != (1, 0):
            continue
        src = e.inputs[0]
        if not isinstance(src, Var) or uses.get(src) != 1:
            continue
        j = producer.get(src)
        if j is None:
            continue
        d = eqns[j]
        if d is None or d.primitive is not dot_general_p:
            continue
        (lc, rc), (lb, rb) = d.params["dimension_numbers"]
        x, y = d.inputs
        # one free axis from each operand: then swapping them transposes the product
        # (both free axes from one operand, swapping changes nothing)
        if lb or rb or x.aval.ndim - len(lc) != 1 or y.aval.ndim - len(rc) != 1:
            continue
        params = dict(d.params, dimension_numbers=((tuple(rc), tuple(lc)), ((), ())))
        eqns[j] = JaxprEqn(dot_general_p, (y, x), params, e.out_binders)
        eqns[i] = None
        changed = True
    if not changed:
        return jaxpr
    return Jaxpr(
        jaxpr.constvars, jaxpr.invars, tuple(q for q in eqns if q is not None), jaxpr.outvars
    )


def forward_unit_products(jaxpr: Jaxpr) -> Jaxpr:
    """``mul(x, 1)`` and ``mul(1, x)`` -> ``x`` where the product has ``x``'s type.

    Reverse mode seeds ``grad`` with the cotangent 1, and the transposes of products
    multiply by it (``mul 1.0 f`` in every gradient's jaxpr). Multiplying by one changes
    no bit of any value (signed zeros, infinities and NaN included), so the product is
    forwarded instead of computed: on scalars it is one NumPy operation less per call,
    on arrays one kernel input less."""
    mul_p = lax.mul_p
    alias: dict[Var, Atom] = {}
    eqns: list[JaxprEqn] = []

    def sub(x: Atom) -> Atom:
        return alias.get(x, x) if isinstance(x, Var) else x

    for e in jaxpr.eqns:
        ins = tuple(sub(x) for x in e.inputs)
        if e.primitive is mul_p:
            out = e.out_binders[0]
            for one, other in ((ins[0], ins[1]), (ins[1], ins[0])):
                if (
                    isinstance(one, Literal)
                    and np.ndim(one.val) == 0
                    and one.aval.dtype == out.aval.dtype
                    and one.val == 1
                    and other.aval.shape == out.aval.shape
                    and other.aval.dtype == out.aval.dtype
                ):
                    alias[out] = other
                    break
            if out in alias:
                continue
        eqns.append(e if ins == e.inputs else e._replace(inputs=ins))
    if not alias:
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, tuple(eqns), tuple(sub(x) for x in jaxpr.outvars))


# ---------------------------------------------------------------------------
# Planning
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class Group:
    shape: tuple[int, ...]
    eqns: list[JaxprEqn] = field(default_factory=list)
    open: bool = True


@dataclass(frozen=True)
class Virtual:
    """``var = broadcast_in_dim(src)``: src axis j is output axis ``dims[j]``."""

    src: Atom
    dims: tuple[int, ...]
    shape: tuple[int, ...]


def _classify(eqn: JaxprEqn) -> str:
    """'fused' (kernel), 'scalar' (inline Python on 0-d values) or 'other'."""
    if elementwise_expr(eqn, probe_ctx(eqn).args) is None:
        return "other"
    shape = eqn.out_binders[0].aval.shape
    if shape == ():
        if (
            eqn.primitive.name == "convert_element_type"
            and eqn.inputs[0].aval.dtype.kind in "fc"
            and eqn.params["new_dtype"].kind in "iu"
        ):
            return "other"  # the driver calls the impl (dtypes.convert: saturating)
        return "scalar" if all(x.aval.shape == () for x in eqn.inputs) else "other"
    if all(x.aval.shape in (shape, ()) for x in eqn.inputs):
        return "fused"
    return "other"


def reduction_kinds() -> dict[Primitive, str]:
    """The reductions kernels compute as they go, by kind (``kernels.KernelSpec``)."""
    return {lax.reduce_sum_p: "sum", lax.reduce_max_p: "max", lax.reduce_min_p: "min"}


def _fusible_reduction(eqn: JaxprEqn) -> bool:
    """Whether a reduction may run inside the kernel computing its operand: float32
    sums (accumulated in float64 along trailing axes, in NumPy's order along leading
    ones) and float32/float64 max/min (exact in any order), non-empty, not to 0-d."""
    kind = reduction_kinds().get(eqn.primitive)
    if kind is None:
        return False
    (x,), out = eqn.inputs, eqn.out_binders[0]
    if not isinstance(x, Var) or math.prod(x.aval.shape) == 0 or out.aval.shape == ():
        return False
    dt = x.aval.dtype
    return dt == np.float32 if kind == "sum" else dt in (np.float32, np.float64)


@dataclass
class Plan:
    schedule: list[tuple[str, Any]]  # ("group", Group) | ("scalar"|"other"|"virtual", eqn)
    virtual: dict[Var, Virtual]


def plan(jaxpr: Jaxpr) -> Plan:
    bcast_p = lax.broadcast_in_dim_p
    virtual: dict[Var, Virtual] = {}
    schedule: list[tuple[str, Any]] = []
    open_groups: dict[tuple[int, ...], Group] = {}
    made_by: dict[Var, Group] = {}

    def resolve(x: Var) -> Atom:
        v = virtual.get(x)
        return v.src if v is not None else x

    def close(g: Group) -> None:
        if g.open:
            g.open = False
            del open_groups[g.shape]
            schedule.extend(("group", c) for c in components(g))

    for eqn in jaxpr.eqns:
        if eqn.primitive is bcast_p and isinstance(eqn.inputs[0], (Var, Literal)):
            (x,), out = eqn.inputs, eqn.out_binders[0]
            bd = tuple(eqn.params["broadcast_dimensions"])
            if isinstance(x, Var) and x in virtual:
                inner = virtual[x]
                virtual[out] = Virtual(inner.src, tuple(bd[d] for d in inner.dims), out.aval.shape)
            else:
                virtual[out] = Virtual(x, bd, out.aval.shape)
            schedule.append(("virtual", eqn))
            continue
        kind = _classify(eqn)
        if kind == "fused":
            shape = eqn.out_binders[0].aval.shape
            g_same = open_groups.get(shape)
            for x in eqn.inputs:
                if not isinstance(x, Var):
                    continue
                src = resolve(x)
                pg = made_by.get(src) if isinstance(src, Var) else None
                if pg is None or not pg.open or (pg is g_same and src is x):
                    continue
                close(pg)
                if pg is g_same:
                    g_same = None
            if g_same is None:
                g_same = open_groups[shape] = Group(shape)
            g_same.eqns.append(eqn)
            made_by[eqn.out_binders[0]] = g_same
            continue
        if _fusible_reduction(eqn):
            # A reduction of a value the open group of its shape computes: the kernel
            # reduces as it goes (no array, no NumPy call) and the group closes.
            x = eqn.inputs[0]
            pg = made_by.get(x) if isinstance(x, Var) and x not in virtual else None
            if pg is not None and pg.open:
                pg.eqns.append(eqn)
                close(pg)
                continue
        for x in eqn.inputs:
            if isinstance(x, Var):
                src = resolve(x)
                pg = made_by.get(src) if isinstance(src, Var) else None
                if pg is not None and pg.open:
                    close(pg)
        schedule.append((kind, eqn))
    for g in list(open_groups.values()):
        close(g)
    return Plan(schedule, virtual)


def components(g: Group) -> list[Group]:
    """``g`` split into its connected components: equations are linked when one reads
    a value another computes (shared inputs from outside do not link them). Each keeps
    its equations in program order; components come in the order of their first."""
    if len(g.eqns) < 2:
        return [g]
    parent = list(range(len(g.eqns)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    made_at = {out: i for i, e in enumerate(g.eqns) for out in e.out_binders}
    for i, e in enumerate(g.eqns):
        for x in e.inputs:
            j = made_at.get(x) if isinstance(x, Var) else None
            if j is not None:
                parent[find(i)] = find(j)
    parts: dict[int, Group] = {}
    for i, e in enumerate(g.eqns):
        part = parts.get(find(i))
        if part is None:
            part = parts[find(i)] = Group(g.shape, open=False)
        part.eqns.append(e)
    return list(parts.values())


# ---------------------------------------------------------------------------
# Scratch buffers: kernel outputs reused from one call to the next
# ---------------------------------------------------------------------------

SCRATCH_MAX_BYTES = 256 << 10
"""Largest array kept for reuse (larger ones cost little to allocate next to their
kernel's work, and are not worth keeping alive between calls)."""
SCRATCH_MAX_TOTAL = 4 << 20
"""Most bytes of scratch buffers kept per compiled signature (per concurrent call)."""


class NoScratch(Exception):
    """Raised to generate a driver again without scratch buffers (a kernel fell back
    to NumPy calls, whose results may be views of their inputs)."""


def _view_prims() -> set[Primitive]:
    return {lax.reshape_p, lax.squeeze_p, lax.transpose_p}


def _fresh_rule(eqn: JaxprEqn) -> bool:
    """Whether the driver computes ``eqn`` with a rule promising fresh results (np.dot,
    NumPy reductions, concatenate), which keep no reference to their operands."""
    rule = numba_emitters.get(eqn.primitive)
    if not isinstance(rule, DriverRule) or not rule.fresh or rule.emit is None:
        return False

    def no_lower(*_: Any) -> Any:
        raise NoScratch

    ctx = DriverContext(
        tuple(f"_x{i}" for i in range(len(eqn.inputs))),
        tuple(x.aval for x in eqn.inputs),
        tuple(v.aval for v in eqn.out_binders),
        dict(eqn.params),
        lambda _: "_c",
        no_lower,
    )
    try:
        return rule.emit(ctx) is not None
    except NoScratch:
        return False


def scratch_values(jaxpr: Jaxpr, plan_: Plan) -> set[Var]:
    """Values whose arrays a driver may reuse across calls: never outputs, and read
    only by kernels, by fresh rules, or through views (reshape, transpose) that are
    such values themselves. Nothing that outlives a call (an output, a value handed to
    an impl or a user callback) can then alias one of them."""
    fused = {id(e) for kind, g in plan_.schedule if kind == "group" for e in g.eqns}
    views = _view_prims()
    outs = {x for x in jaxpr.outvars if isinstance(x, Var)}
    uses: dict[Var, list[tuple[JaxprEqn, bool]]] = {}
    for e in jaxpr.eqns:
        if e.out_binders and e.out_binders[0] in plan_.virtual:
            continue  # a virtual broadcast: its readers are counted on its source
        for x in e.inputs:
            if isinstance(x, Var):
                v = plan_.virtual.get(x)
                src = v.src if v is not None else x
                if isinstance(src, Var):
                    uses.setdefault(src, []).append((e, src is not x))
    for x in list(outs):
        v = plan_.virtual.get(x)
        if v is not None and isinstance(v.src, Var):
            outs.add(v.src)
    safe: set[Var] = set()
    for e in reversed(jaxpr.eqns):
        for out in e.out_binders:
            if out in outs or out in plan_.virtual:
                continue
            ok = True
            for c, via_broadcast in uses.get(out, []):
                if id(c) in fused:
                    continue
                if via_broadcast:
                    ok = False
                elif c.primitive in views:
                    ok = c.out_binders[0] in safe
                else:
                    ok = _fresh_rule(c)
                if not ok:
                    break
            if ok:
                safe.add(out)
    return safe


__all__ = [
    "SCRATCH_MAX_BYTES",
    "SCRATCH_MAX_TOTAL",
    "Group",
    "NoScratch",
    "Plan",
    "Virtual",
    "components",
    "fold_transposed_dots",
    "forward_unit_products",
    "plan",
    "reduction_kinds",
    "scratch_values",
]
