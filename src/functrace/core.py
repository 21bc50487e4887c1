"""The core of functrace: abstract values, primitives, traces, tracers and ``bind``.

Design (Autodidax's *level* design). Every active transformation is a
:class:`Trace` on a stack; its position is its ``level``. The evaluation
trace sits at level 0 and runs primitives on NumPy values. A tracer belongs to
exactly one trace. When a primitive is bound, the trace with the highest level
among the arguments' traces handles it (``find_top_trace``); arguments from
lower levels are *lifted* into it, so nested transforms never confuse each
other's values (no perturbation confusion). Tracing for ``jit`` and
``make_jaxpr`` installs a *dynamic* trace that also catches operations whose
inputs are all plain constants.

A trace is finished when its transform returns; a tracer of a finished trace
that shows up again is a leak and raises :class:`UnexpectedTracerError` saying
which transform of which function created it.

Trace state is per thread (``_state``, a ``threading.local``): each thread has
its own stack, with the shared evaluation trace at its base, and its own dynamic
trace, so transforms running in several Python threads at once never see each
other's traces. A tracer handed to another thread is rejected there with
:class:`UnexpectedTracerError`. Every push is popped in a ``finally``, so an
exception leaves the thread's stack at its base.

``core`` holds two rule tables, ``impl_rules`` (NumPy evaluation) and
``abstract_eval_rules`` (shape and dtype); every other interpreter keeps its
own table in its own module. ``core`` never imports an interpreter.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from functrace import _debug, dtypes
from functrace._torch_hints import TORCH_HINTS
from functrace.errors import (
    ConcretizationError,
    MissingRuleError,
    TracerArrayConversionError,
    TracerAssignmentError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

# ---------------------------------------------------------------------------
# Abstract values
# ---------------------------------------------------------------------------


class ShapedArray:
    """The abstract value of an array: a shape, a dtype and a weak-type flag."""

    __slots__ = ("shape", "dtype", "weak_type")
    array_abstraction_level = 1

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, weak_type: bool = False) -> None:
        self.shape = shape
        self.dtype = dtype
        self.weak_type = weak_type

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def update(
        self,
        shape: tuple[int, ...] | None = None,
        dtype: np.dtype | None = None,
        weak_type: bool | None = None,
    ) -> ShapedArray:
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def str_short(self) -> str:
        return f"{dtypes.short_name(self.dtype)}[{','.join(str(d) for d in self.shape)}]"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"

    __str__ = str_short

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is ShapedArray
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))

    def same_type(self, other: ShapedArray) -> bool:
        """Equal shape and dtype (weak types are compatible with strong ones)."""
        return self.shape == other.shape and self.dtype == other.dtype


_PY_SCALARS = {
    float: (np.dtype(np.float64), True),
    int: (np.dtype(np.int64), True),
    bool: (np.dtype(np.bool_), False),
    complex: (np.dtype(np.complex128), True),
}
# Avals are immutable by convention, so scalar avals are shared.
_SCALAR_AVALS: dict[type, ShapedArray] = {
    t: ShapedArray((), dt, weak) for t, (dt, weak) in _PY_SCALARS.items()
}
for _t in (
    np.float16,
    np.float32,
    np.float64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.bool_,
    np.complex64,
    np.complex128,
):
    _SCALAR_AVALS[_t] = ShapedArray((), np.dtype(_t))


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def int64_overflow(x: Any) -> bool:
    """A Python int (not a bool) outside int64, the dtype Python ints get here."""
    return (
        isinstance(x, int)
        and not isinstance(x, bool | np.generic)
        and not (INT64_MIN <= x <= INT64_MAX)
    )


def int64_overflow_error(where: str, x: int, what: str) -> OverflowError:
    """The error for a Python int outside int64 where functrace needs an int64 value:
    ``where`` names the function, ``what`` the argument (``"for argument n"``)."""
    shown = str(x) if abs(x) < 10**30 else f"{'-' if x < 0 else ''}~2**{abs(x).bit_length() - 1}"
    return OverflowError(
        f"{where}: expected Python ints within int64 (-2**63 to 2**63 - 1) {what}, got "
        f"{shown}. Pass it as a float, or as a NumPy value of an explicit dtype "
        f"(np.uint64 holds up to 2**64 - 1)."
    )


def is_python_scalar(x: Any) -> bool:
    """A Python (not NumPy) bool, int, float or complex."""
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def get_aval(x: Any) -> ShapedArray:
    """The abstract value of a tracer, NumPy array, NumPy scalar or Python scalar."""
    t = type(x)
    if t is np.ndarray:
        return ShapedArray(x.shape, x.dtype)
    aval = _SCALAR_AVALS.get(t)
    if aval is not None:
        return aval
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(np.shape(x), x.dtype)
    for base, (dt, weak) in _PY_SCALARS.items():  # subclasses of Python scalars
        if isinstance(x, base) and not (base is int and isinstance(x, bool)):
            return ShapedArray((), dt, weak)
    raise TypeError(
        f"functrace: expected an array, a NumPy scalar or a Python scalar, got "
        f"{t.__name__} ({x!r:.80}). Convert it with numpy.asarray, or mark the argument "
        f"static (static_argnums) if it is configuration rather than data."
    )


def dtype_of(x: Any) -> np.dtype:
    """The dtype of a tracer, array or scalar: ``get_aval(x).dtype``, read directly from
    NumPy arrays and scalars (no aval built: optimizers and layers ask per leaf)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    return get_aval(x).dtype


def is_array_like(x: Any) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex))


# ---------------------------------------------------------------------------
# Array arguments: the one rule for ndarray subclasses and unusual layouts
# ---------------------------------------------------------------------------

_REJECTED_SUBCLASSES: tuple[tuple[type, str], ...] = (
    (np.matrix, "`*` is a matrix product and its reductions keep two dimensions"),
    (np.ma.MaskedArray, "its mask would be silently dropped"),
)


def is_plain_array(x: np.ndarray) -> bool:
    """An exact ``numpy.ndarray`` in native byte order and aligned memory: what every
    transform computes with (see :func:`plain_array`)."""
    return type(x) is np.ndarray and x.dtype.isnative and x.flags.aligned


plain_subclasses: set[type] = set()
"""ndarray subclasses of functrace's own that :func:`plain_array` views as plain arrays
(``functrace.Array`` registers itself)."""


def plain_array(x: np.ndarray, where: str, arg: str) -> np.ndarray:
    """The array a transform computes with for the ndarray ``x`` (the documented rule):

    * a plain ndarray in native byte order and aligned memory is used as is (any
      strides: views, broadcasts, read-only arrays);
    * ``numpy.matrix`` and ``numpy.ma.MaskedArray`` (and their subclasses) are
      rejected with a ``TypeError``, as is any subclass overriding
      ``__array_ufunc__`` or ``__array_function__`` (it changes what NumPy's
      functions mean for it, e.g. units); convert with ``numpy.asarray`` (or
      ``numpy.ma.filled``) first;
    * any other subclass (``numpy.memmap``, a user subclass adding attributes) is
      viewed as its base ``numpy.ndarray`` (no copy);
    * a non-native byte order (``>f8`` on a little-endian machine) is converted to
      the native one, as NumPy's own functions return it; unaligned memory is copied.

    ``where`` names the transform and function, ``arg`` the argument (for errors).
    """
    t = type(x)
    if t in plain_subclasses:  # functrace.Array: a read-only ndarray, viewed as one
        x = x.view(np.ndarray)
    elif t is not np.ndarray:
        for cls, why in _REJECTED_SUBCLASSES:
            if isinstance(x, cls):
                fix = "numpy.asarray(x)" if cls is np.matrix else "numpy.ma.filled(x, value)"
                raise TypeError(
                    f"{where}: expected a numpy.ndarray for {arg}, got a {t.__module__}."
                    f"{t.__qualname__}: under transformations {why}. Pass {fix} instead."
                )
        if (
            t.__array_ufunc__ is not np.ndarray.__array_ufunc__
            or t.__array_function__ is not np.ndarray.__array_function__
        ):
            raise TypeError(
                f"{where}: expected a numpy.ndarray for {arg}, got a {t.__module__}."
                f"{t.__qualname__}, a subclass that overrides NumPy's functions "
                f"(__array_ufunc__ / __array_function__), whose meaning transformations "
                f"cannot keep. Pass numpy.asarray(x) instead."
            )
        x = x.view(np.ndarray)
    if not x.dtype.isnative:
        x = x.astype(x.dtype.newbyteorder("="))
    if not x.flags.aligned:
        x = x.copy()
    return x


# ---------------------------------------------------------------------------
# Primitives
# ---------------------------------------------------------------------------

_flags = _debug.flags  # the debug switches (functrace.config): read by bind


_rules_epoch = [0]


def rules_changed() -> None:
    """Note that a rule was (re)defined: a primitive's entry in a rule table, or a
    custom derivative's functions. Programs recorded under older rules (the eager
    derivative cache, ``api/_eager_cache.py``) are then recorded again."""
    _rules_epoch[0] += 1


def rules_epoch() -> int:
    """How many times rules were (re)defined so far (see :func:`rules_changed`)."""
    return _rules_epoch[0]


class RuleTable(dict):  # type: ignore[type-arg]
    """A rule table (primitive -> rule) that notes every change (:func:`rules_changed`);
    lookups are a plain dict's."""

    def __setitem__(self, primitive: Primitive, rule: Callable[..., Any]) -> None:
        super().__setitem__(primitive, rule)
        rules_changed()

    def __delitem__(self, primitive: Primitive) -> None:
        super().__delitem__(primitive)
        rules_changed()


class _RuleTable(RuleTable):
    """A rule table that also caches each rule on its primitive (one attribute lookup on
    the hot path of ``bind`` instead of a dict lookup); the table stays the source."""

    def __init__(self, attr: str) -> None:
        super().__init__()
        self.attr = attr

    def __setitem__(self, primitive: Primitive, rule: Callable[..., Any]) -> None:
        super().__setitem__(primitive, rule)
        setattr(primitive, self.attr, rule)

    def __delitem__(self, primitive: Primitive) -> None:
        super().__delitem__(primitive)
        setattr(primitive, self.attr, None)


# Rule tables owned by core. Other interpreters own theirs.
impl_rules: dict[Primitive, Callable[..., Any]] = _RuleTable("impl")
abstract_eval_rules: dict[Primitive, Callable[..., Any]] = _RuleTable("abstract_eval")


class Primitive:
    """A named operation. ``bind(*arrays, **params)``: arrays positional, params hashable.

    What it means is one rule per interpreter, each in that interpreter's table.
    :meth:`def_impl` and :meth:`def_abstract_eval` fill the two of ``core`` (JAX's
    ``jax.extend.core.Primitive`` methods); ``impl`` and ``abstract_eval`` read them
    back (None until registered). The others have JAX's names too:
    ``ad.primitive_jvps``, ``ad.primitive_transposes``, ``batching.primitive_batchers``
    (``functrace.interpreters``). ``jit`` calls ``impl`` from its compiled driver.
    """

    __slots__ = ("name", "multiple_results", "impl", "abstract_eval", "__weakref__")

    def __init__(self, name: str, multiple_results: bool = False) -> None:
        self.name = name
        self.multiple_results = multiple_results
        self.impl: Callable[..., Any] | None = None
        self.abstract_eval: Callable[..., Any] | None = None

    def __repr__(self) -> str:
        return self.name

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``impl(*arrays, **params)``: the primitive computed on NumPy values
        (a list of results with ``multiple_results``), for plain calls and for
        ``jit``'s compiled program. Returns ``impl``, so it also works as a decorator."""
        impl_rules[self] = impl
        return impl

    def def_abstract_eval(self, abstract_eval: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``abstract_eval(*avals, **params)``: the :class:`ShapedArray` of the
        result (a sequence of them with ``multiple_results``) from those of the
        operands, what tracing (``jit``, ``make_jaxpr``, reverse mode) records. Its
        results are checked when it runs, and a shape list or a dtype given as a scalar
        type (``np.float32``) is accepted. Returns ``abstract_eval`` (a decorator too)."""
        abstract_eval_rules[self] = _checked_abstract_eval(self, abstract_eval)
        return abstract_eval

    def bind(self, *args: Any, **params: Any) -> Any:
        state = _state
        top = state.dynamic
        for a in args:
            if isinstance(a, Tracer):
                t = a._trace
                if t.finished:
                    raise _leaked_error(t, f"an input to '{self.name}'")
                if t.level > top.level:
                    top = t
        if top is _base:
            impl = self.impl
            if impl is None:
                raise MissingRuleError(
                    self.name, "evaluation", "impl_rules", "functrace/lax", "{p}.def_impl(impl)"
                )
            if _flags.check:  # config.debug_nans / debug_infs: check the outputs
                out = impl(*args, **params)
                _debug.check_outputs(self, args, out)
                return out
            return impl(*args, **params)
        stack = state.stack
        if top.level >= len(stack) or stack[top.level] is not top:
            raise _foreign_error(top, f"an input to '{self.name}'")
        tracers = [
            a if isinstance(a, Tracer) and a._trace is top else top.full_raise(a) for a in args
        ]
        return top.process_primitive(self, tracers, params)


def _checked_abstract_eval(p: Primitive, rule: Callable[..., Any]) -> Callable[..., Any]:
    """``rule`` as :meth:`Primitive.def_abstract_eval` registers it: a wrong result is
    an error naming the primitive (not a failure further on in the trace)."""

    def abstract_eval(*avals: ShapedArray, **params: Any) -> Any:
        out = rule(*avals, **params)
        if not p.multiple_results:
            return _rule_aval(p, out)
        if not isinstance(out, (list, tuple)):
            raise TypeError(
                f"{p.name} abstract evaluation: expected a sequence of ShapedArrays (the "
                f"primitive has multiple_results=True), got {type(out).__name__}."
            )
        return [_rule_aval(p, a) for a in out]

    abstract_eval.__wrapped__ = rule  # type: ignore[attr-defined]
    return abstract_eval


def _rule_aval(p: Primitive, a: Any) -> ShapedArray:
    if not isinstance(a, ShapedArray):
        one = ", one ShapedArray (the primitive has multiple_results=False)"
        raise TypeError(
            f"{p.name} abstract evaluation: expected a functrace.core.ShapedArray"
            f"{one if isinstance(a, (list, tuple)) else ''}, got {type(a).__name__} {a!r:.60}."
        )
    if type(a.shape) is tuple and isinstance(a.dtype, np.dtype):
        return a
    return ShapedArray(tuple(int(d) for d in a.shape), np.dtype(a.dtype), a.weak_type)


# ---------------------------------------------------------------------------
# Traces and tracers
# ---------------------------------------------------------------------------


class Trace:
    """One active transformation. Subclasses implement pure/lift/process_primitive."""

    __slots__ = ("level", "finished", "origin")

    def __init__(self, level: int, origin: str = "") -> None:
        self.level = level
        self.finished = False
        # What created this trace, for leak and concretization messages,
        # e.g. "jit of 'loss' (train.py:12)".
        self.origin = origin

    def pure(self, val: Any) -> Tracer:
        raise NotImplementedError

    def lift(self, val: Tracer) -> Tracer:
        return self.pure(val)

    def process_primitive(self, primitive: Primitive, tracers: list[Any], params: dict) -> Any:
        raise NotImplementedError

    def full_raise(self, val: Any) -> Any:
        if not isinstance(val, Tracer):
            # a constant meets a tracer: the rule for ndarray subclasses and layouts
            if (
                isinstance(val, np.ndarray)
                if type(val) is not np.ndarray
                else not (val.dtype.isnative and val.flags.aligned)
            ):
                val = plain_array(val, self.origin or "functrace", "a constant it closes over")
            return self.pure(val)
        t = val._trace
        if t is self:
            return val
        if t.finished:
            raise _leaked_error(t, "a value")
        stack = _state.stack
        if t.level >= len(stack) or stack[t.level] is not t:
            raise _foreign_error(t, "a value")
        if t.level < self.level:
            return self.lift(val)
        raise UnexpectedTracerError(
            f"{self.origin or 'functrace'}: expected values of this transformation or of an "
            f"enclosing one, got a tracer of {t.origin or 'another transformation'} at the same "
            f"or a deeper level. A tracer was passed between independent transformations, "
            f"e.g. stored in a global or a closure; pass values explicitly as arguments."
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(level={self.level}, {self.origin})"


class EvalTrace(Trace):
    """Level 0: run primitives on NumPy values."""

    __slots__ = ()

    def pure(self, val: Any) -> Any:
        return val

    lift = pure

    def process_primitive(self, primitive: Primitive, tracers: list[Any], params: dict) -> Any:
        return primitive.impl(*tracers, **params)  # type: ignore[misc]


_base: Trace = EvalTrace(0, "eval")  # shared by every thread: it holds no state


class _TraceState(threading.local):
    """One thread's trace state: the stack of active traces (``stack[0]`` is the
    evaluation trace) and the dynamic trace, which catches operations on constants
    (jit / make_jaxpr; ``_base`` when none is active)."""

    def __init__(self) -> None:
        self.stack: list[Trace] = [_base]
        self.dynamic: Trace = _base


_state = _TraceState()


def trace_stack() -> list[Trace]:
    """The calling thread's stack of active traces (``[eval trace]`` when none is
    active). Read it, never mutate it: use :func:`new_trace`."""
    return _state.stack


def dynamic_trace_active() -> bool:
    """Whether a dynamic trace (jit / make_jaxpr tracing) is active in this thread:
    then even operations on plain constants must be staged, not run by NumPy."""
    return _state.dynamic is not _base


def dynamic_level() -> int:
    """The level of the innermost dynamic trace (jit / make_jaxpr tracing) of this
    thread, the evaluation trace's when none is active. A trace below it is outside
    that staging: values of its tracers cannot enter the jaxpr being built."""
    return _state.dynamic.level


def traced_path_needed() -> bool:
    """Whether library functions with a plain NumPy path must take their traced path:
    a dynamic trace is active, or a debug check (``config.debug_nans``/``debug_infs``)
    is on, so every primitive goes through :meth:`Primitive.bind` and is checked."""
    return _state.dynamic is not _base or _flags.check


def _leaked_error(trace: Trace, what: str) -> UnexpectedTracerError:
    return UnexpectedTracerError(
        f"functrace: expected concrete arrays or tracers of an active transformation, got "
        f"{what} that is a tracer created by {trace.origin or 'a transformation'}, which has "
        f"already returned. The tracer leaked out, e.g. through a global, a list or `self` "
        f"attribute. Return the value from the transformed function instead of storing it."
    )


def _foreign_error(trace: Trace, what: str) -> UnexpectedTracerError:
    return UnexpectedTracerError(
        f"functrace: expected concrete arrays or tracers of a transformation active in "
        f"this thread, got {what} that is a tracer created by "
        f"{trace.origin or 'a transformation'} in another thread. Trace state is per "
        f"thread: pass concrete arrays between threads, not tracers."
    )


def push_trace(trace_type: type[Trace], *args: Any, origin: str = "") -> Any:
    """Push a new (non-dynamic) trace on this thread's stack; pair with
    :func:`pop_trace` in a ``finally``."""
    stack = _state.stack
    trace = trace_type(len(stack), *args)
    trace.origin = origin
    stack.append(trace)
    return trace


def pop_trace(trace: Trace) -> None:
    trace.finished = True
    stack = _state.stack
    if stack[-1] is not trace:  # pragma: no cover - internal invariant
        raise AssertionError("functrace: trace stack corrupted")
    stack.pop()


@contextlib.contextmanager
def new_trace(
    trace_type: type[Trace], *args: Any, origin: str = "", dynamic: bool = False
) -> Iterator[Any]:
    """Push a new trace of ``trace_type`` on this thread's stack for the duration of
    the block (with ``dynamic``, it is also the dynamic trace)."""
    state = _state
    trace = push_trace(trace_type, *args, origin=origin)
    prev_dynamic = state.dynamic
    if dynamic:
        state.dynamic = trace
    try:
        yield trace
    finally:
        state.dynamic = prev_dynamic
        pop_trace(trace)


@contextlib.contextmanager
def new_base_trace() -> Iterator[None]:
    """Temporarily hide the dynamic trace (used by ``ensure_compile_time_eval``)."""
    state = _state
    prev = state.dynamic
    state.dynamic = _base
    try:
        yield
    finally:
        state.dynamic = prev


def current_level() -> int:
    return len(_state.stack) - 1


def describe_fun(fun: Any) -> str:
    """``'name' (file:line)`` for messages about a user function."""
    name = getattr(fun, "__name__", None) or type(fun).__name__
    inner = fun
    for _ in range(16):  # follow functools.wraps / partial to the user's own function
        nxt = getattr(inner, "__wrapped__", None) or getattr(inner, "func", None)
        if nxt is None:
            break
        inner = nxt
    code = getattr(inner, "__code__", None)
    if code is not None:
        return f"'{name}' ({code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno})"
    return f"'{name}'"


_CONTAINERS = (list, tuple, dict)
# Python's own messages for an operator or method applied to a list/tuple/dict itself.
_CONTAINER_ERROR = re.compile(
    r"unsupported operand type\(s\) for|can't multiply sequence|can only concatenate|"
    r"bad operand type for unary|object has no attribute|not supported between instances"
)


def call_user(transform: str, fun: Callable[..., Any], args: Sequence[Any], kwargs: Any) -> Any:
    """``fun(*args, **kwargs)`` for ``transform`` ("grad", "jit"...); when the function
    applies an operator or an array method to a list/tuple/dict argument itself, the error
    says that the argument is a pytree."""
    try:
        return fun(*args, **kwargs)
    except (TypeError, AttributeError) as e:
        err = _container_argument_error(e, f"{transform} of {describe_fun(fun)}", fun, args, kwargs)
        if err is None:
            raise
        raise err from e


def _container_argument_error(
    e: Exception, origin: str, fun: Callable[..., Any], args: Sequence[Any], kwargs: Any
) -> Exception | None:
    msg = str(e)
    if getattr(e, "_functrace_explained", False) or not _CONTAINER_ERROR.search(msg):
        return None

    def named(t: type) -> bool:  # "'list' and 'int'", "concatenate list", "sequence by"
        n = t.__name__
        return f"'{n}'" in msg or f" {n} " in msg or ("sequence" in msg and t is not dict)

    found = [(i, a) for i, a in enumerate(args)] + list((kwargs or {}).items())
    hit = next(((k, a) for k, a in found if type(a) in _CONTAINERS and named(type(a))), None)
    if hit is None:
        return None
    key, value = hit
    if isinstance(key, str):
        label = f"`{key}`"
    else:
        try:
            import inspect

            p = list(inspect.signature(fun).parameters.values())[key]
            ok = p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            label = f"`{p.name}`" if ok else f"at position {key}"
        except (TypeError, ValueError, IndexError):
            label = f"at position {key}"
    t = type(value).__name__
    err = type(e)(
        f"{origin}: expected an array for argument {label}, got a {t} of {len(value)} "
        f"elements. A {t} is a pytree, so the function receives a {t} of separate values "
        f"(traced one by one), and Python's {t} does not support this operation "
        f"({msg}). To work on it as one array, pass np.asarray(...) of it (or call "
        f"fnp.asarray inside the function); to keep separate values, use its elements."
    )
    err._functrace_explained = True  # type: ignore[attr-defined]
    return err


class Tracer:
    """Stands in for an array during a traced call.

    The NumPy-style operators and methods (``+``, ``@``, ``.sum()``, indexing,
    ``.at[]``) are attached by ``functrace.numpy`` so that ``core`` does not
    depend on the NumPy layer.
    """

    __slots__ = ("_trace",)
    __array_priority__ = 1000
    _trace: Trace
    py = False  # a Python scalar in an eager run (only jit's tracers set it: StagingTracer)
    # A concrete value of an eager run being recorded (interpreters/recording.py): code
    # that runs concrete arrays another way than traced ones treats it as concrete.
    recorded = False

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    # -- concrete values -------------------------------------------------
    def to_concrete_value(self, why: str = "a concrete value") -> np.ndarray:
        """The NumPy value this tracer stands for, or a ConcretizationError."""
        raise ConcretizationError(
            f"{self._trace.origin or 'functrace'}: expected a concrete value for {why}, got an "
            f"abstract tracer {self.aval.str_short()}. Its value is not known while tracing."
        )

    def __bool__(self) -> bool:
        try:
            val = self.to_concrete_value("bool(); Python `if`/`while` on a traced value")
        except ConcretizationError as e:
            raise TracerBoolConversionError(str(e)) from None
        if val.size != 1:
            raise ValueError(
                f"bool(): expected an array with one element, got shape {val.shape}. "
                f"Use .any() or .all()."
            )
        return bool(val)

    def __int__(self) -> int:
        try:
            return int(self.to_concrete_value("int()"))
        except ConcretizationError as e:
            raise TracerIntegerConversionError(str(e)) from None

    def __float__(self) -> float:
        return float(self.to_concrete_value("float()"))

    def __complex__(self) -> complex:
        return complex(self.to_concrete_value("complex()"))

    def __index__(self) -> int:
        if not dtypes.is_integer(self.dtype) and not dtypes.is_bool(self.dtype):
            raise TypeError(f"__index__: expected an integer array, got {self.aval.str_short()}.")
        try:
            value = self.to_concrete_value(
                "use as a Python index (__index__; to index a NumPy array `table` with a "
                "traced index, write functrace.numpy.asarray(table)[i] or "
                "functrace.numpy.take(table, i))"
            )
        except ConcretizationError as e:
            raise TracerIntegerConversionError(str(e)) from None
        return int(value)

    def item(self, *args: Any) -> Any:
        return self.to_concrete_value("item()").item(*args)

    def tolist(self) -> Any:
        return self.to_concrete_value("tolist()").tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TracerArrayConversionError(
            f"numpy.asarray: expected a concrete array, got a functrace tracer "
            f"{self.aval.str_short()} inside {self._trace.origin or 'a transformation'}. "
            f"NumPy functions cannot see through tracers (that would silently drop the "
            f"derivative); use the same function from functrace.numpy instead (to index "
            f"a NumPy array `table` with a traced index, write "
            f"functrace.numpy.asarray(table)[i] or functrace.numpy.take(table, i, axis))."
        )

    def __setitem__(self, idx: Any, val: Any) -> None:
        raise TracerAssignmentError(
            f"__setitem__: expected no in-place assignment on a traced array, got "
            f"x[{idx!r}] = ... on {self.aval.str_short()}. functrace arrays are immutable "
            f"under transformations: use x = x.at[idx].set(value) (or .add/.mul/.min/.max)."
        )

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len(): expected an array with at least one axis, got a 0-d array.")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self.shape:
            raise TypeError("iter(): expected an array with at least one axis, got a 0-d array.")
        return (self[i] for i in range(self.shape[0]))  # type: ignore[index]

    def __hash__(self) -> int:
        raise TypeError(
            f"hash(): expected a hashable value, got a tracer {self.aval.str_short()}. "
            f"Arrays are not hashable; for a jit static argument pass a Python value."
        )

    def __repr__(self) -> str:
        return f"Traced<{self.aval.str_short()}> under {self._trace.origin or 'a transformation'}"

    def describe(self) -> str:
        """How messages name this value: ``a traced value f64[3] under jit of 'loss' (...)``."""
        return f"a traced value {self.aval.str_short()} under {self._trace.origin or 'a transform'}"

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails. Private and dunder names (probes by NumPy,
        # pytrees, copy...) fail fast and plainly.
        if name.startswith("_"):
            raise AttributeError(name)
        if hasattr(type(self), name):  # a property that itself raised: re-raise its error
            return object.__getattribute__(self, name)
        hint = TORCH_HINTS.get(name)
        if hint is not None:
            raise AttributeError(
                f"{name}: {self.describe()} has no attribute {name!r} (a PyTorch habit): {hint}"
            )
        raise AttributeError(
            f"{name}: {self.describe()} has no attribute {name!r}. Traced values have the "
            f"attributes and methods of NumPy arrays (.shape, .dtype, .T, .sum(), .reshape(), "
            f".astype(), .at[...]); other functions are in functrace.numpy."
        )

    def __reduce__(self) -> Any:
        raise TypeError("pickle: expected a concrete array, got a tracer.")

    # ``copy.copy``/``copy.deepcopy`` of a traced value (a model's parameters copied
    # inside ``jit``/``grad``/``vmap``) give the tracer itself: traced values are
    # immutable, so a copy could not differ (JAX gives an equal tracer).
    def __copy__(self) -> Tracer:
        return self

    def __deepcopy__(self, memo: Any) -> Tracer:
        return self


def describe_value(x: Any) -> str:
    """How a message names a user's value: its type, or what a traced value stands for."""
    return x.describe() if isinstance(x, Tracer) else type(x).__name__


def concrete_or_none(x: Any) -> np.ndarray | None:
    """The NumPy value of ``x`` if it is known now (not abstract), else None."""
    if not isinstance(x, Tracer):
        return np.asarray(x)
    try:
        return x.to_concrete_value()
    except ConcretizationError:
        return None


def avals_of(xs: Sequence[Any]) -> list[ShapedArray]:
    return [get_aval(x) for x in xs]


__all__ = [
    "EvalTrace",
    "Primitive",
    "ShapedArray",
    "Trace",
    "Tracer",
    "abstract_eval_rules",
    "call_user",
    "concrete_or_none",
    "current_level",
    "describe_fun",
    "describe_value",
    "dynamic_level",
    "dynamic_trace_active",
    "traced_path_needed",
    "get_aval",
    "impl_rules",
    "new_trace",
    "trace_stack",
]
