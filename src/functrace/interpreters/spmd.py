"""Reverse mode inside ``shard_map(check_vma=True)`` bodies, with JAX's answers.

JAX types each value of a ``shard_map`` body as varying over some mesh axes or not
(``check_vma``) and differentiates the body as one program over all shards. functrace
runs the body once per shard (``sharding.shard_map``: a named batch axis per mesh
axis, marked ``vma``), where a value varies along an axis when it is batched along it.
:class:`SpmdPlan` says how the per-shard transpose becomes JAX's; :func:`plan` reads
it off the values a linearization starts and ends with (``ad.linearize_flat``). A
user's bwd rule (``custom_vjp``), which may be nonlinear in its cotangents (clipping),
is handed JAX's cotangents instead (``custom_derivatives/_vjp.py``, with
:func:`replicated_axes`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from functrace.core import Primitive, Tracer
from functrace.interpreters import batching
from functrace.interpreters.staging import JaxprBuilder, StagingTrace, StagingTracer
from functrace.ir import Var


class SpmdPlan:
    """How reverse mode taken inside ``shard_map(check_vma=True)`` gives JAX's answers.

    JAX types each value inside the body as varying over some mesh axes or not, and
    differentiates the program as one over all shards: a value the same on every
    shard is one variable, whose cotangent sums its uses on all shards. functrace runs
    the body once per shard (a batch axis per mesh axis), where a value is varying
    when it is batched. Per shard, the local cotangents L relate to JAX's G by
    ``G = L`` for a varying value and ``G = sum of L over the shards`` for one that
    is the same on every shard; every primitive's local transpose keeps that relation
    (``psum``'s transpose is ``psum``, ``pcast``'s the identity), so only the ends
    change: the cotangent given for an output that does not vary along an axis is
    divided by the axis size, and the cotangent of an input that does not vary along
    one is summed over it (``psum``). ``out_scale``: the factor per output (1.0 for
    none); ``in_axes``: the axis names to sum per input.
    """

    __slots__ = ("out_scale", "in_axes")

    def __init__(self, out_scale: tuple[float, ...], in_axes: tuple[tuple[Any, ...], ...]):
        self.out_scale = out_scale
        self.in_axes = in_axes

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SpmdPlan)
            and self.out_scale == other.out_scale
            and self.in_axes == other.in_axes
        )

    def __hash__(self) -> int:
        return hash((self.out_scale, self.in_axes))


# Registered by functrace.lax.parallel (a layer above): psum over names, and x * factor.
ops: dict[str, Callable[..., Any]] = {}
# The collectives, by whether their result varies along their ``axis_name`` (True:
# ``axis_index``, ``all_gather``, ``pvary``) or not (False: ``psum``, ``pmax``, ...).
collectives: dict[Primitive, bool] = {}


def register_ops(*, psum: Callable[..., Any], scale: Callable[..., Any]) -> None:
    """Register the functions :class:`SpmdPlan` is applied with."""
    ops.update(psum=psum, scale=scale)


def _varies(x: Any, trace: batching.BatchTrace) -> bool | None:
    """Whether ``x`` is batched along ``trace`` (a mesh axis); None when that cannot be
    read off ``x`` (a value staged inside a loop body or ``jit`` trace above it)."""
    while isinstance(x, Tracer):
        t = x._trace
        if t is trace:
            return x.bdim is not None  # type: ignore[attr-defined, no-any-return]
        if t.level < trace.level:
            return False  # a value from outside the shard_map: the same on every shard
        if isinstance(x, batching.BatchTracer):
            x = x.val
        elif isinstance(x, StagingTracer) and isinstance(t, StagingTrace):
            return _staged_varies(t.builder, x.atom, trace)
        elif hasattr(x, "primal"):  # a JVP tracer: its primal value
            x = x.primal
        else:
            return None
    return False


def _staged_varies(builder: JaxprBuilder, atom: Any, trace: batching.BatchTrace) -> bool | None:
    """:func:`_varies` of a value being staged (in a loop body or branch traced inside
    a ``shard_map`` body): from the operands its arguments stand for and the
    equations recorded so far, as JAX's types propagate (an equation's result varies
    where an operand does; collectives as ``collectives``)."""
    if type(atom) is not Var:
        return False
    producers = {v: e for e in builder.eqns for v in e.out_binders}
    consts = {t.atom: val for t, val in builder.consts.values()}
    args = builder.arg_values or {}
    memo: dict[Var, bool | None] = {}
    stack = [atom]
    while stack:
        v = stack[-1]
        if v in memo:
            stack.pop()
            continue
        if v in consts or v in args:
            memo[v] = _varies(consts[v] if v in consts else args[v], trace)
            stack.pop()
            continue
        eqn = producers.get(v)
        if eqn is None:  # an argument whose operand is not known
            memo[v] = None
            stack.pop()
            continue
        ins = [x for x in eqn.inputs if type(x) is Var]
        todo = [x for x in ins if x not in memo]
        if todo:
            stack.extend(todo)
            continue
        stack.pop()
        kind = collectives.get(eqn.primitive)
        if kind is not None and trace.axis_name in eqn.params["axis_name"]:
            res: bool | None = kind
        else:
            got = [memo[x] for x in ins]
            res = True if any(got) else (None if None in got else False)
        for o in eqn.out_binders:
            memo[o] = res
    return memo[atom]


def replicated_axes(values: Sequence[Any]) -> list[tuple[tuple[Any, ...], int]] | None:
    """Per value: the ``shard_map(check_vma=True)`` mesh axes in scope it does not vary
    along, and the product of their sizes; None when no such axis is in scope or a
    value's axes cannot be read."""
    traces = batching.vma_traces()
    if not traces:
        return None
    out = []
    for x in values:
        names: tuple[Any, ...] = ()
        k = 1
        for t in traces:
            v = _varies(x, t)
            if v is None:
                return None
            if not v:
                names += (t.axis_name,)
                k *= t.axis_size
        out.append((names, k))
    return out


def plan(
    primals_in: Sequence[Any], mask: Sequence[bool], primals_out: Sequence[Any]
) -> SpmdPlan | None:
    """The :class:`SpmdPlan` of a linearization inside ``shard_map(check_vma=True)``
    bodies, or None (no such axis in scope, nothing to change, or a value whose
    varying axes cannot be read: functrace's per-shard rule then applies)."""
    outs = replicated_axes(primals_out)
    ins = replicated_axes(primals_in) if outs is not None else None
    if outs is None or ins is None:
        return None
    scales = tuple(1.0 / k for _, k in outs)
    axes = tuple(names if m else () for (names, _), m in zip(ins, mask))
    if all(s == 1.0 for s in scales) and not any(axes):
        return None
    return SpmdPlan(scales, axes)


__all__ = ["SpmdPlan", "collectives", "ops", "plan", "register_ops", "replicated_axes"]
