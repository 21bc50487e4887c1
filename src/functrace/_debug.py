"""The debug switches' storage and the NaN/inf check of primitive outputs.

This leaf module holds the values of the process-wide debug switches
(``debug_nans``, ``debug_infs``, ``explain_retraces``) so that every floor can read
them without importing upwards; ``functrace.config`` is the user-facing object that
sets them. ``flags.check`` is true when either float check is on: it is the one
attribute ``Primitive.bind`` (and the few places that record where a value came
from) read on their hot paths, so a switch that is off costs one attribute test.

When a check is on, ``check_outputs`` looks at the floating (and complex) outputs
of each primitive run on concrete values and raises ``FloatingPointError`` naming
the primitive, the pass it ran in (forward, the derivative rule of a primitive, or
the backward pass, with the forward primitive whose rule produced the equation),
the user's ``file:line`` and the inputs' types. ``state`` (per thread) carries
where the running computation comes from: the primitive whose JVP rule is running
(``rule``) and, in a backward pass or a re-run of a jitted program, the recorded
:class:`Source` of the equation being computed (``source``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from functrace import dtypes


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


class Flags:
    """The process-wide debug switches (set them through ``functrace.config``)."""

    __slots__ = (
        "debug_nans",
        "debug_infs",
        "explain_retraces",
        "log_compiles",
        "check",
        "rank_promotion",
    )

    def __init__(self) -> None:
        # JAX's ``numpy_rank_promotion`` (an option, not a switch: "allow", "warn" or
        # "raise"), read by ``functrace.numpy`` where operands broadcast implicitly.
        self.rank_promotion = "allow"
        self.debug_nans = _env_flag("FUNCTRACE_DEBUG_NANS")
        self.debug_infs = _env_flag("FUNCTRACE_DEBUG_INFS")
        self.explain_retraces = _env_flag("FUNCTRACE_EXPLAIN_RETRACES")
        self.log_compiles = _env_flag("FUNCTRACE_LOG_COMPILES")
        self.check = self.debug_nans or self.debug_infs

    def set(self, name: str, value: bool) -> None:
        setattr(self, name, bool(value))
        self.check = self.debug_nans or self.debug_infs
        for fn in _listeners:
            fn()


flags = Flags()
_listeners: list[Callable[[], None]] = []


def check_rank_promotion(
    fname: str, shapes: Sequence[tuple[int, ...]], stacklevel: int = 4
) -> None:
    """Warn or raise, as ``config.numpy_rank_promotion`` says, when operands of
    different ranks broadcast together (0-d operands do not count, as in JAX)."""
    ranks = {len(s) for s in shapes if s}
    if len(ranks) < 2:
        return
    given = " and ".join(str(tuple(s)) for s in shapes)
    mode = flags.rank_promotion
    msg = (
        f"{fname}: expected operands of one rank (config.numpy_rank_promotion={mode!r}), "
        f"got shapes {given}, which broadcast by adding leading axes. Add them explicitly "
        f"(x[None, ...], reshape or expand_dims), or set numpy_rank_promotion to 'allow'."
    )
    if mode == "raise":
        raise ValueError(msg)
    warnings.warn(msg, UserWarning, stacklevel=stacklevel)


def on_change(fn: Callable[[], None]) -> None:
    """Call ``fn()`` now and whenever a switch changes (``functrace.jit`` switches its
    call path, so that its fast path tests no switch)."""
    _listeners.append(fn)
    fn()


class Source(NamedTuple):
    """Where an equation or a concrete primitive application comes from.

    ``location``: the user's ``file:line`` that bound it (or led to it); ``phase``:
    ``"forward"``, ``"jvp"`` (inside the derivative rule of ``parent``) or
    ``"backward"`` (transposing an equation of the derivative of ``parent``)."""

    location: str
    phase: str
    parent: str | None = None


class _State(threading.local):
    rule: str | None = None  # the primitive whose JVP rule is running
    primals: Sequence[Any] = ()  # and the primals it was given
    source: Source | None = None  # set by the backward pass and the jit re-run
    # staged equations record their source even with the checks off (saved_residuals)
    record_sources: bool = False
    # the user's line of the equation ``eval_jaxpr`` is evaluating (a jitted function's
    # program inlined into a transform), used instead of the stack's
    location: str | None = None
    # set while a loop re-runs work its forward pass already did (counting a while
    # loop's trips, the reverse sweep of while_transpose): debug callbacks stay silent
    mute_effects: bool = False


state = _State()


@contextlib.contextmanager
def muted_effects() -> Iterator[None]:
    """Silence ``functrace.debug`` callbacks (in this thread) inside the block."""
    prev, state.mute_effects = state.mute_effects, True
    try:
        yield
    finally:
        state.mute_effects = prev


_PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_location(skip: int = 1) -> str:
    """``file:line`` of the innermost frame outside functrace (``"?"`` if none)."""
    try:
        f: Any = sys._getframe(skip)
    except ValueError:
        return "?"
    while f is not None:
        name = f.f_code.co_filename
        if not name.startswith(_PKG_DIR):
            return f"{os.path.basename(name)}:{f.f_lineno}"
        f = f.f_back
    return "?"


def current_source() -> Source:
    """The :class:`Source` of a primitive bound now (recorded with staged equations)."""
    src = state.source
    if src is not None:
        return src
    rule = state.rule
    loc = state.location or user_location(2)
    return Source(loc, "forward" if rule is None else "jvp", rule)


def backward_source(eqn_source: Source | None, prim_name: str) -> Source:
    """The source of the cotangent work that transposes an equation."""
    if eqn_source is None:
        return Source(state.location or user_location(2), "backward", prim_name)
    if eqn_source.phase == "backward":  # transposing a backward pass (grad of grad)
        return eqn_source
    return Source(eqn_source.location, "backward", eqn_source.parent or prim_name)


def short_type(x: Any) -> str:
    """``f32[3]`` for an array or scalar (the type name of anything else)."""
    try:
        a = np.asarray(x)
        return f"{dtypes.short_name(a.dtype)}[{','.join(str(d) for d in a.shape)}]"
    except Exception:  # noqa: BLE001 - a message must not fail on an odd operand
        return type(x).__name__


def problem(x: Any) -> str | None:
    """``"NaN"``/``"inf"`` if the float value ``x`` has one the switches check for."""
    if type(x) is float:
        if x != x:
            return "NaN" if flags.debug_nans else None
        if flags.debug_infs and (x == float("inf") or x == -float("inf")):
            return "inf"
        return None
    dt = getattr(x, "dtype", None)
    if dt is None:
        if not isinstance(x, complex):
            return None
        x = np.asarray(x)
        dt = x.dtype
    if dt.kind not in "fc":
        return None
    if flags.debug_nans and np.isnan(x).any():
        return "NaN"
    if flags.debug_infs and np.isinf(x).any():
        return "inf"
    return None


def has_problem(x: Any, what: str) -> bool:
    """Whether ``x`` holds a value of kind ``what`` (``"NaN"`` or ``"inf"``)."""
    dt = getattr(x, "dtype", None) if not isinstance(x, float | complex) else None
    if dt is None:
        if not isinstance(x, float | complex):
            return False
        x = np.asarray(x)
        dt = x.dtype
    if dt.kind not in "fc":
        return False
    return bool((np.isnan(x) if what == "NaN" else np.isinf(x)).any())


def switch_name(what: str) -> str:
    return "debug_nans" if what == "NaN" else "debug_infs"


def describe_phase(src: Source, prim_name: str) -> str:
    """How a message says where ``prim_name`` ran."""
    if src.phase == "backward":
        return (
            f"in the backward pass (reverse mode), transposing the derivative of "
            f"'{src.parent or prim_name}' bound at {src.location}"
        )
    if src.phase == "jvp" and src.parent != prim_name:
        return f"in the derivative rule (JVP) of '{src.parent}' bound at {src.location}"
    return f"in the forward pass at {src.location}"


def check_outputs(prim: Any, args: tuple[Any, ...], out: Any, where: str = "") -> None:
    """Raise ``FloatingPointError`` if a float output of ``prim`` (applied to the
    concrete ``args``) has a NaN (``debug_nans``) or an inf (``debug_infs``)."""
    check_values(prim.name, args, out if prim.multiple_results else (out,), where)


def check_values(
    name: str, args: Sequence[Any], outs: Sequence[Any], where: str = "", kind: str = "primitive"
) -> None:
    """:func:`check_outputs` for the results ``outs`` of the operation ``name``; ``kind``
    says what it is (``"primitive"``, or ``"Array operation"`` for an eager ``Array``
    operator or method, which NumPy computes)."""
    for i, o in enumerate(outs):
        what = problem(o)
        if what is not None:
            raise nan_error(name, args, what, i if len(outs) > 1 else None, where, kind)


def nan_error(
    name: str,
    args: Sequence[Any],
    what: str,
    out_index: int | None,
    where: str = "",
    kind: str = "primitive",
) -> FloatingPointError:
    """The error for a NaN/inf in an output of the primitive ``name`` on ``args``."""
    src = state.source
    if src is None:
        rule = state.rule
        prim = state.primals
        if rule == name and len(prim) == len(args) and all(a is p for a, p in zip(args, prim)):
            rule = None  # the rule computing its own primal output: forward work
        loc = state.location or user_location(2)
        src = Source(loc, "forward" if rule is None else "jvp", rule)
        phase = describe_phase(src, "" if rule is not None else name)
    else:
        phase = describe_phase(src, name)
    ins = ", ".join(short_type(a) for a in args) or "none"
    head = f"{where}: " if where else ""
    switch = f"functrace.config.{switch_name(what)}"
    for j, a in enumerate(args):
        if has_problem(a, what):
            return FloatingPointError(
                f"{head}{switch}: the input {j} ({short_type(a)}) of '{name}' {phase} already "
                f"contains {what}: no functrace primitive produced it, it came in with an "
                f"argument or a constant (or was computed while the switch was off). "
                f"Inputs of '{name}': {ins}."
            )
    which = "" if out_index is None else f" (output {out_index})"
    return FloatingPointError(
        f"{head}{switch}: the {kind} '{name}' produced {what}{which} {phase}. "
        f"Its inputs: {ins}. Set {switch} = False to let the {what} through."
    )


__all__ = [
    "Flags",
    "Source",
    "check_outputs",
    "check_values",
    "current_source",
    "flags",
    "has_problem",
    "problem",
    "short_type",
    "state",
]
