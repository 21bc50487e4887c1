"""Batching (``vmap``): run a function written for one example on a whole batch.

A :class:`BatchTracer` holds an array with one extra *batch dimension* at
position ``bdim`` (or ``None`` when the value is the same for every example).
Each primitive's batching rule maps ``(values, bdims)`` to ``(out, out_bdim)``;
batch dimensions are moved only when a rule needs it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray, Trace, Tracer
from functrace.errors import ConcretizationError, MissingRuleError
from functrace.ir import ClosedJaxpr, Jaxpr

# batching_rules[p](vals, bdims, **params) -> (out, out_bdim)  (lists for multiple results)
batching_rules: dict[Primitive, Callable[..., Any]] = core.RuleTable()
# Primitives whose rule also needs the vmap itself: it is called as
# ``rule(vals, bdims, trace=the BatchTrace, **params)``, even when no operand is batched.
# The custom_jvp/custom_vjp calls run the user's rules per example inside that vmap;
# grad_hook gives its hook one call per example, also for a value that is not batched.
rules_with_trace: set[Primitive] = set()
# JAX's name for the same table (``jax.interpreters.batching``), with the same rule
# signature: rule(values, batch_axes, **params) -> (out, out_axis).
primitive_batchers = batching_rules

not_mapped = None


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim", "_aval")

    def __init__(self, trace: Trace, val: Any, bdim: int | None) -> None:
        self._trace = trace
        self.val = val
        self.bdim = bdim
        self._aval: ShapedArray | None = None

    @property
    def aval(self) -> ShapedArray:
        aval = self._aval
        if aval is None:
            a = core.get_aval(self.val)
            if self.bdim is not None:
                a = ShapedArray(
                    a.shape[: self.bdim] + a.shape[self.bdim + 1 :], a.dtype, a.weak_type
                )
            aval = self._aval = a
        return aval

    def to_concrete_value(self, why: str = "a concrete value") -> np.ndarray:
        if self.bdim is None:
            v = self.val
            return v.to_concrete_value(why) if isinstance(v, Tracer) else np.asarray(v)
        raise ConcretizationError(
            f"{self._trace.origin}: expected one concrete value for {why}, got a batched "
            f"value {self.aval.str_short()} that differs between examples. Python control "
            f"flow cannot branch per example: use functrace.numpy.where or lax.cond/select."
        )


class BatchTrace(Trace):
    __slots__ = ("axis_size", "axis_name", "axis_from_rule", "vma", "indexed")

    def __init__(self, level: int, axis_size: int, axis_name: Any = None) -> None:
        super().__init__(level)
        self.axis_size = axis_size
        # The name collectives (lax.psum, ...) use for this batch axis, or None.
        self.axis_name = axis_name
        # Whether the name came from the rule of an enclosing trace (a batched body).
        self.axis_from_rule = False
        # Whether this is a mesh axis of ``shard_map(check_vma=True)``: reverse mode
        # taken inside then follows JAX's varying-value types (``interpreters/spmd.py``).
        self.vma = False
        # Whether the rule batching a body here takes the batch dims the body's outputs
        # come out with (axis_index may then be called inside the body).
        self.indexed = False

    def pure(self, val: Any) -> BatchTracer:
        return BatchTracer(self, val, not_mapped)

    lift = pure

    def process_primitive(self, primitive: Primitive, tracers: list[Any], params: dict) -> Any:
        if self.axis_name is None and _axes.rule is None:
            return self._process(primitive, tracers, params)
        return self._process_named(primitive, tracers, params)

    def _process_named(self, primitive: Primitive, tracers: list[Any], params: dict) -> Any:
        # A rule that batches a body (a loop, a branch, a custom rule) over this same axis
        # calls ``vmap_flat``, whose trace then carries this trace's name (``_axes.rule``),
        # so collectives inside the body see the axis. A body can use the axis even when
        # no operand is batched (``axis_index``, ``psum`` of a constant): a named trace
        # runs the rule of such a primitive on a batched first operand instead of
        # evaluating it below (where the body could not reach this trace).
        prev = _axes.rule
        _axes.rule = None if self.axis_name is None else (self.axis_name, self.axis_size, self.vma)
        try:
            if (
                self.axis_name is not None
                and tracers
                and primitive not in rules_with_trace
                and all(t.bdim is None for t in tracers)
                and _has_body(params)
            ):
                first = BatchTracer(self, broadcast_batch(tracers[0].val, self.axis_size, 0), 0)
                tracers = [first, *tracers[1:]]
            return self._process(primitive, tracers, params)
        finally:
            _axes.rule = prev

    def _process(self, primitive: Primitive, tracers: list[Any], params: dict) -> Any:
        vals = [t.val for t in tracers]
        bdims = [t.bdim for t in tracers]
        if primitive in rules_with_trace:
            out, out_bdim = batching_rules[primitive](vals, bdims, trace=self, **params)
            if primitive.multiple_results:
                return [BatchTracer(self, o, b) for o, b in zip(out, out_bdim)]
            return BatchTracer(self, out, out_bdim)
        if all(b is None for b in bdims):
            out = primitive.bind(*vals, **params)
            if primitive.multiple_results:
                return [BatchTracer(self, o, None) for o in out]
            return BatchTracer(self, out, None)
        rule = batching_rules.get(primitive)
        if rule is None:
            raise MissingRuleError(
                primitive.name,
                "vmap (batching)",
                "batching_rules",
                "functrace/lax",
                "batching.primitive_batchers[{p}] = rule (rule(values, batch_axes) -> "
                "(out, out_axis)), or batching.defvectorized({p}) if it is elementwise",
            )
        out, out_bdim = rule(vals, bdims, **params)
        if primitive.multiple_results:
            return [BatchTracer(self, o, b) for o, b in zip(out, out_bdim)]
        return BatchTracer(self, out, out_bdim)


def _has_body(params: dict) -> bool:
    """Whether a primitive's params hold a jaxpr (a loop or branch body)."""
    for v in params.values():
        if isinstance(v, (Jaxpr, ClosedJaxpr)):
            return True
        if isinstance(v, tuple) and any(isinstance(b, (Jaxpr, ClosedJaxpr)) for b in v):
            return True
    return False


# ---------------------------------------------------------------------------
# Named axes (``vmap(..., axis_name=...)``; the collectives live in lax/parallel.py)
# ---------------------------------------------------------------------------


class _AxisState(threading.local):
    """Per thread: the named batch axes in scope, innermost last, and the name a batching
    rule being run gives to the ``vmap_flat`` it calls (``(name, size, vma)`` or None)."""

    def __init__(self) -> None:
        self.env: list[tuple[Any, BatchTrace]] = []
        self.rule: tuple[Any, int, bool] | None = None


_axes = _AxisState()
_INHERIT: Any = object()


def axis_trace(name: Any) -> BatchTrace | None:
    """The innermost active batch trace named ``name``, or None if it is unbound."""
    for n, t in reversed(_axes.env):
        if n == name:
            return t
    return None


def bound_axis_names() -> list[Any]:
    """The axis names in scope in this thread, outermost first (for messages)."""
    return [n for n, _ in _axes.env]


def rule_axis_name(axis_size: int) -> Any:
    """The name of the axis a batching rule being run batches over (of ``axis_size``),
    or None: the name its ``vmap_flat`` inherits."""
    rule = _axes.rule
    return rule[0] if rule is not None and rule[1] == axis_size else None


def vma_traces() -> list[BatchTrace]:
    """The traces of the ``shard_map(check_vma=True)`` mesh axes in scope in this
    thread, outermost first (empty almost always: one list walk)."""
    return [t for _, t in _axes.env if t.vma] if _axes.env else []


def vmap_flat(
    fun: Callable[..., Sequence[Any]],
    axis_size: int,
    args: Sequence[Any],
    in_dims: Sequence[int | None],
    *,
    origin: str = "vmap",
    axis_name: Any = _INHERIT,
    vma: bool = False,
    indexed: bool = False,
) -> tuple[list[Any], list[int | None]]:
    """Batch flat ``fun``: returns outputs and their batch dims.

    ``axis_name`` names the batch axis for collectives (``None``: unnamed). Left out,
    a call made by a batching rule of a named trace batches over that trace's axis
    (a loop or branch body) and takes its name (and its ``vma``); any other call is
    unnamed. ``vma``: the axis is a mesh axis of ``shard_map(check_vma=True)``.
    ``indexed``: the calling rule takes the output batch dims ``fun``'s results come out
    with, so ``fun`` may make values differ between examples (``axis_index``)."""
    inherited = axis_name is _INHERIT
    if inherited:
        rule = _axes.rule
        axis_name = rule[0] if rule is not None and rule[1] == axis_size else None
        vma = axis_name is not None and rule is not None and rule[2]
    trace = core.push_trace(BatchTrace, axis_size, axis_name, origin=origin)
    trace.axis_from_rule = inherited and axis_name is not None
    trace.vma = vma
    trace.indexed = indexed
    prev_rule = _axes.rule
    _axes.rule = None
    env = _axes.env
    if axis_name is not None:
        env.append((axis_name, trace))
    try:
        tracers = [BatchTracer(trace, a, d) for a, d in zip(args, in_dims)]
        outs = [trace.full_raise(o) for o in fun(*tracers)]
    finally:
        if axis_name is not None:
            env.pop()
        _axes.rule = prev_rule
        core.pop_trace(trace)
    return [t.val for t in outs], [t.bdim for t in outs]


# ---------------------------------------------------------------------------
# Moving batch dimensions (used by rules)
# ---------------------------------------------------------------------------
# Batch axes move with two primitives of ``functrace.lax`` (a layer above this one),
# which registers them here when it is imported: ``transpose(x, permutation)`` and
# ``broadcast_in_dim(x, shape, broadcast_dimensions)``.

_transpose: Callable[..., Any] | None = None
_broadcast_in_dim: Callable[..., Any] | None = None


def register_axis_primitives(
    *, transpose: Callable[..., Any], broadcast_in_dim: Callable[..., Any]
) -> None:
    """Register the lax functions :func:`moveaxis` and :func:`broadcast_batch` use."""
    global _transpose, _broadcast_in_dim
    _transpose, _broadcast_in_dim = transpose, broadcast_in_dim


def _unregistered() -> RuntimeError:
    return RuntimeError(
        "batching: expected functrace.lax to have registered transpose and "
        "broadcast_in_dim for moving batch axes, got none. Import functrace first."
    )


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """Move axis ``src`` of ``x`` to ``dst`` with a transpose (no-op if equal)."""
    nd = core.get_aval(x).ndim
    src, dst = src % nd, dst % nd
    if src == dst:
        return x
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    if _transpose is None:
        raise _unregistered()
    return _transpose(x, tuple(perm))


def broadcast_batch(x: Any, size: int, dst: int) -> Any:
    """Give an unbatched ``x`` a batch dimension of ``size`` at ``dst``."""
    shape = list(core.get_aval(x).shape)
    out_shape = tuple(shape[:dst] + [size] + shape[dst:])
    dims = tuple(i for i in range(len(out_shape)) if i != dst)
    if _broadcast_in_dim is None:
        raise _unregistered()
    return _broadcast_in_dim(x, out_shape, dims)


def bdim_at(x: Any, bdim: int | None, size: int, dst: int = 0) -> Any:
    """``x`` with its batch dimension at ``dst`` (materialized if it had none)."""
    if bdim is None:
        return broadcast_batch(x, size, dst)
    return moveaxis(x, bdim, dst)


def bdim_at_front(x: Any, bdim: int | None, size: int) -> Any:
    """``x`` with its batch dimension first (JAX's name for ``bdim_at(x, bdim, size)``)."""
    return bdim_at(x, bdim, size, 0)


def batch_size(vals: Sequence[Any], bdims: Sequence[int | None]) -> int:
    for v, d in zip(vals, bdims):
        if d is not None:
            return core.get_aval(v).shape[d]
    raise ValueError("batching: no batched operand")


# ---------------------------------------------------------------------------
# Rule helpers
# ---------------------------------------------------------------------------


def defvectorized(primitive: Primitive) -> None:
    """Elementwise unary (params allowed): the batch dim passes through."""

    def rule(vals: Sequence[Any], bdims: Sequence[int | None], **params: Any) -> Any:
        return primitive.bind(*vals, **params), bdims[0]

    batching_rules[primitive] = rule


def defbroadcasting(primitive: Primitive) -> None:
    """Elementwise n-ary on equal shapes: align batch dims, materialize missing ones."""

    def rule(vals: Sequence[Any], bdims: Sequence[int | None], **params: Any) -> Any:
        size = batch_size(vals, bdims)
        present = {d for d in bdims if d is not None}
        # Keep the batch dim where the batched operands already have it, if they agree.
        dst = present.pop() if len(present) == 1 else 0
        args = [v if d == dst else bdim_at(v, d, size, dst) for v, d in zip(vals, bdims)]
        return primitive.bind(*args, **params), dst

    batching_rules[primitive] = rule


__all__ = [
    "BatchTrace",
    "BatchTracer",
    "axis_trace",
    "batch_size",
    "batching_rules",
    "bdim_at",
    "bdim_at_front",
    "bound_axis_names",
    "broadcast_batch",
    "defbroadcasting",
    "defvectorized",
    "moveaxis",
    "not_mapped",
    "primitive_batchers",
    "register_axis_primitives",
    "rules_with_trace",
    "vmap_flat",
]
