"""Recording: run primitives eagerly and record them as a jaxpr at the same time.

The eager transforms (``grad``, ``vjp``, ``jvp`` called on concrete arrays) run their
computation on a :class:`RecordingTrace` at the bottom of the stack: every primitive
that reaches it is evaluated on concrete values, exactly as the evaluation trace would
(the same impl on the same operands), and also written down as an equation with its
abstract value. The result of the call is the evaluated values; the recorded jaxpr is
a program that computes the same outputs from new inputs of the same types, which
``functrace.api._eager_cache`` runs on later calls instead of tracing again.

The trace is *not* dynamic: operations on constants only run as they do eagerly, and
their results become constants of the program. A tracer of this trace knows its value,
so Python control flow, ``float()``, ``.item()`` or ``numpy.asarray`` on it work as in
an eager run; each such use marks the trace ``concretized``: the program then depends
on values it cannot see, and is never reused.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters.staging import JaxprBuilder, StagingTrace, StagingTracer
from functrace.ir import JaxprEqn, Literal, Var


class RecordingTracer(StagingTracer):
    """A recorded value: its variable in the program being recorded and its value."""

    __slots__ = ("val",)
    recorded = True

    def __init__(self, trace: RecordingTrace, aval: ShapedArray, var: Any, val: Any) -> None:
        self._trace = trace
        self._aval = aval
        self.atom = var
        self.py = False
        self.val = val

    def to_concrete_value(self, why: str = "a concrete value") -> np.ndarray:
        self._trace.concretized = True  # type: ignore[attr-defined]
        return np.asarray(self.val)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # Only code that sees concrete values in an eager run meets these tracers (a
        # custom rule's body, a hook): it gets the value, and the program is not reused.
        self._trace.concretized = True  # type: ignore[attr-defined]
        return np.asarray(self.val, dtype)

    def __repr__(self) -> str:  # what an eager run would print (a custom rule's print)
        return repr(self.val)

    def __str__(self) -> str:
        return str(self.val)


class RecordingTrace(StagingTrace):
    """Evaluates every primitive on concrete values and records it (see the module)."""

    __slots__ = ("concretized",)

    def __init__(self, level: int, builder: JaxprBuilder) -> None:
        super().__init__(level, builder)
        self.concretized = False

    def new_arg(self, aval: ShapedArray, name: str = "", val: Any = None) -> RecordingTracer:  # type: ignore[override]
        var = Var(aval)
        self.builder.invars.append(var)
        return RecordingTracer(self, aval, var, val)

    def pure(self, val: Any) -> RecordingTracer:
        t = type(val)
        if t in (float, int, bool, complex) or isinstance(val, np.generic):
            aval = core.get_aval(val)
            return RecordingTracer(self, aval, Literal(val, aval), val)
        key = id(val)
        hit = self.builder.consts.get(key)
        if hit is not None:
            return hit[0]  # type: ignore[return-value]
        aval = core.get_aval(val)
        tracer = RecordingTracer(self, aval, Var(aval), val)
        self.builder.consts[key] = (tracer, val)
        return tracer

    lift = pure

    def process_primitive(self, primitive: Primitive, tracers: list[Any], params: dict) -> Any:
        out = primitive.bind(*[t.val for t in tracers], **params)
        rule = primitive.abstract_eval
        if rule is None:  # cannot be recorded: the value is all this call needs
            self.concretized = True
            if primitive.multiple_results:
                return [self.pure(o) for o in out]
            return self.pure(out)
        avals = rule(*[t._aval for t in tracers], **params)
        inputs = tuple(t.atom for t in tracers)
        if primitive.multiple_results:
            outs = [RecordingTracer(self, a, Var(a), o) for a, o in zip(avals, out)]
            binders: Any = tuple(t.atom for t in outs)
            self.builder.eqns.append(JaxprEqn(primitive, inputs, params, binders, None))
            return outs
        tracer = RecordingTracer(self, avals, Var(avals), out)
        self.builder.eqns.append(JaxprEqn(primitive, inputs, params, (tracer.atom,), None))  # type: ignore[arg-type]
        return tracer


class _State(threading.local):
    # Python callbacks run eagerly with concrete values (grad_hook functions) so far in
    # this thread: a recording during which one ran is not reused (the callback would
    # not run again).
    callbacks = 0


state = _State()


def value_of(x: Any) -> Any:
    """The concrete value of a recorded tracer (other values as they are)."""
    return x.val if type(x) is RecordingTracer else x


def callback_value(x: Any) -> Any:
    """What a Python callback that runs eagerly on concrete values (a ``grad_hook``
    function) is given for ``x``: the value of a recorded tracer, which makes its
    recording not reusable. Counts the call (see ``state.callbacks``)."""
    state.callbacks += 1
    if type(x) is RecordingTracer:
        x._trace.concretized = True  # type: ignore[attr-defined]
        return x.val
    return x


def record_inputs(trace: RecordingTrace, vals: Sequence[Any]) -> list[RecordingTracer]:
    """The tracers standing for the program's inputs ``vals``."""
    return [trace.new_arg(core.get_aval(v), val=v) for v in vals]


__all__ = [
    "RecordingTrace",
    "RecordingTracer",
    "callback_value",
    "record_inputs",
    "state",
    "value_of",
]
