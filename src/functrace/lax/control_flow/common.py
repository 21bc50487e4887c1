"""Helpers shared by the control-flow primitives: tracing bodies to jaxprs with their
captured constants as leading inputs, splitting operand lists, tangent masks and
dependency analysis over jaxprs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace.core import ShapedArray, Tracer
from functrace.interpreters import batching, spmd
from functrace.interpreters.ad import Zero
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import Jaxpr, Var, eval_jaxpr
from functrace.lax.elementwise import convert_element_type
from functrace.lax.shapes import broadcast_in_dim


def _trace_carry(
    trace: Callable[[list[ShapedArray], list[bool]], Any],
    avals: list[ShapedArray],
    weak: list[bool],
) -> tuple[Any, list[ShapedArray]]:
    """``trace(avals, weak)`` of a loop body; again with the promoted carry types when
    a weakly typed initial value changes dtype (:class:`WeakCarry`). Returns the
    result and the carry types it was traced with."""
    try:
        return trace(avals, weak), avals
    except WeakCarry as w:
        return trace(w.avals, [False] * len(avals)), w.avals


def _trace(
    fun: Callable[..., Sequence[Any]],
    avals: Sequence[ShapedArray],
    origin: str,
    operands: Sequence[Any] | None = None,
) -> tuple[Jaxpr, list[Any]]:
    """Trace flat ``fun`` to a jaxpr whose captured constants are leading inputs.
    ``operands``: the values the user's body or branch runs on, read inside
    ``shard_map`` bodies by reverse mode (which mesh axes each varies over)."""
    if operands is not None and not batching.vma_traces():
        operands = None
    closed, _ = trace_to_jaxpr(fun, [a.update() for a in avals], origin=origin, arg_values=operands)
    j = closed.jaxpr
    return Jaxpr((), (*j.constvars, *j.invars), j.eqns, j.outvars), list(closed.consts)


def _run(jaxpr: Jaxpr, args: Sequence[Any]) -> list[Any]:
    return eval_jaxpr(jaxpr, (), list(args))


def _run_args(jaxpr: Jaxpr, *args: Any) -> list[Any]:
    """``jaxpr`` as a callable (for the loop runners)."""
    return _run(jaxpr, args)


def _strip_batch(aval: ShapedArray) -> ShapedArray:
    return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)


def _stack_aval(aval: ShapedArray, n: int) -> ShapedArray:
    return ShapedArray((n, *aval.shape), aval.dtype, aval.weak_type)


def _zeros(aval: ShapedArray) -> Any:
    zero = np.zeros((), aval.dtype)[()]
    return broadcast_in_dim(zero, aval.shape, ()) if aval.shape else zero


def _inst(t: Any, aval: ShapedArray) -> Any:
    return _zeros(aval) if type(t) is Zero else t


class WeakCarry(Exception):
    """Raised while tracing a loop body: a carry whose initial value is weakly typed (a
    Python scalar) came out of the body with another dtype. As in JAX, the initial value
    is then promoted to the combined dtype (``0`` with a float body: float) and the body
    traced again, once; ``avals`` are the carry types to trace with."""

    def __init__(self, avals: list[ShapedArray]) -> None:
        super().__init__("a weakly typed loop carry changes dtype")
        self.avals = avals


def _type_diff(
    fname: str,
    what: str,
    paths: Sequence[str],
    expected: Sequence[ShapedArray],
    got: Sequence[ShapedArray],
    weak: Sequence[bool] = (),
) -> None:
    """Check the carry types a body returned; raise :class:`WeakCarry` first where a
    weakly typed initial value (``weak``) only needs promoting."""
    if any(weak):
        promoted = [
            ShapedArray(e.shape, dtypes.promote((e.dtype, True), (g.dtype, g.weak_type))[0])
            if w and e.shape == g.shape and e.dtype != g.dtype
            else e
            for e, g, w in zip(expected, got, weak)
        ]
        if any(a is not e for a, e in zip(promoted, expected)):
            raise WeakCarry(promoted)
    for p, e, g in zip(paths, expected, got):
        if e.shape != g.shape or e.dtype != g.dtype:
            raise TypeError(
                f"{fname}: expected {what} at {p or '<root>'} of type {e.str_short()}, got "
                f"{g.str_short()}. Shapes and dtypes must match exactly: cast with "
                f".astype(...), or give the initial value the dtype the body produces."
            )


def _dependent_outputs(jaxpr: Jaxpr, dep_in: Sequence[bool], axis_name: Any = None) -> list[bool]:
    """Which outputs may depend on the marked inputs (a conservative dependency analysis).

    With ``axis_name`` (the batch axis of a named trace: which outputs are batched),
    a collective over it ends the dependency when it reduces over the axis (``psum``,
    ``pmax``...: the same for every example) and starts one when its result differs
    between examples (``axis_index``...)."""
    live: set[Var] = {v for v, dep in zip(jaxpr.invars, dep_in) if dep}
    for eqn in jaxpr.eqns:
        kind = None
        if axis_name is not None:
            kind = spmd.collectives.get(eqn.primitive)
            if kind is not None and axis_name not in eqn.params["axis_name"]:
                kind = None
            elif kind is None and _indexes(eqn.params, axis_name):
                kind = True  # a body inside (a loop, a branch) makes values differ
        if kind is True or (
            kind is None and any(isinstance(x, Var) and x in live for x in eqn.inputs)
        ):
            live.update(eqn.out_binders)
    return [isinstance(v, Var) and v in live for v in jaxpr.outvars]


def _indexes(params: dict[str, Any], axis_name: Any) -> bool:
    """Whether a jaxpr among ``params`` (at any depth) holds a collective over
    ``axis_name`` whose result differs between examples (``axis_index``...)."""
    for v in params.values():
        for j in v if isinstance(v, tuple) else (v,):
            j = getattr(j, "jaxpr", j)  # a ClosedJaxpr's jaxpr
            if not isinstance(j, Jaxpr):
                continue
            for e in j.eqns:
                kind = spmd.collectives.get(e.primitive)
                if kind is True and axis_name in e.params["axis_name"]:
                    return True
                if kind is None and _indexes(e.params, axis_name):
                    return True
    return False


class _Varies(Exception):
    """Raised while tracing a batched body: a value the dependency analysis called the
    same for every example came out batched (the rule then batches every output)."""


def _vma_axis_name(size: int) -> Any:
    """The name of the ``shard_map(check_vma=True)`` mesh axis (of ``size``) a batching
    rule being run batches over, or None: there, outputs that stay the same on every
    shard are left unbatched, as JAX types them."""
    name = batching.rule_axis_name(size)
    trace = batching.axis_trace(name) if name is not None else None
    return name if trace is not None and trace.vma else None


def _nonzero_outputs(jaxpr: Jaxpr, nz_in: Sequence[bool]) -> list[bool]:
    """Which outputs may have a nonzero tangent: integer and boolean values never do."""
    dep = _dependent_outputs(jaxpr, nz_in)
    return [d and v.aval.dtype.kind in "fc" for d, v in zip(dep, jaxpr.outvars)]


def _split(xs: Sequence[Any], *sizes: int) -> list[list[Any]]:
    out, i = [], 0
    for n in sizes:
        out.append(list(xs[i : i + n]))
        i += n
    out.append(list(xs[i:]))
    return out


def _fill(vals: Sequence[Any], mask: Sequence[bool], avals: Sequence[ShapedArray]) -> list[Any]:
    it = iter(vals)
    return [next(it) if m else Zero(a) for m, a in zip(mask, avals)]


def _cast_to(x: Any, aval: ShapedArray) -> Any:
    a = core.get_aval(x)
    if a.dtype != aval.dtype:
        return convert_element_type(x, aval.dtype)
    if not isinstance(x, (Tracer, np.ndarray)):
        return np.asarray(x, aval.dtype)[()]
    return x


# ---------------------------------------------------------------------------
# Loop runners: a loop on concrete values, its body/cond/branches given as callables
# (evaluated jaxprs for the impl rules, compiled drivers for jit's driver rules).
# ---------------------------------------------------------------------------


def run_scan(
    body: Callable[..., Sequence[Any]],
    num_consts: int,
    num_carry: int,
    length: int,
    reverse: bool,
    y_avals: Sequence[ShapedArray],
    *args: Any,
) -> tuple[Any, ...]:
    """Run ``scan``: ``body(*consts, *carry, *x_slices) -> (*carry, *ys)``; ``y_avals``:
    the types of one iteration's ys (stacked into arrays of ``length`` rows)."""
    consts = args[:num_consts]
    carry: Sequence[Any] = args[num_consts : num_consts + num_carry]
    xs = args[num_consts + num_carry :]
    ys = [np.empty((length, *a.shape), a.dtype) for a in y_avals]
    for i in range(length - 1, -1, -1) if reverse else range(length):
        out = body(*consts, *carry, *[x[i] for x in xs])
        carry = out[:num_carry]
        for y, v in zip(ys, out[num_carry:]):
            y[i] = v
    return (*carry, *ys)


def run_while(
    cond: Callable[..., Sequence[Any]],
    body: Callable[..., Sequence[Any]],
    cond_nconsts: int,
    body_nconsts: int,
    *args: Any,
) -> tuple[Any, ...]:
    """Run ``while``: ``cond(*cond_consts, *carry) -> (pred,)`` and
    ``body(*body_consts, *carry) -> carry``."""
    cc = args[:cond_nconsts]
    bc = args[cond_nconsts : cond_nconsts + body_nconsts]
    carry: Sequence[Any] = args[cond_nconsts + body_nconsts :]
    while cond(*cc, *carry)[0]:
        carry = body(*bc, *carry)
    return tuple(carry)


def run_cond(
    branches: Sequence[Callable[..., Sequence[Any]]], index: Any, *ops: Any
) -> Sequence[Any]:
    """Run ``cond``: ``branches[index](*ops)``, an out-of-range index clamped."""
    i = min(max(int(index), 0), len(branches) - 1)
    return branches[i](*ops)
