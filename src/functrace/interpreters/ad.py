"""Automatic differentiation: forward mode (JVP), linearization and transposition.

Forward mode carries a (primal, tangent) pair through every primitive with the
primitive's JVP rule. Tangents may be the symbolic :class:`Zero`, so inputs that
are not differentiated cost nothing.

Reverse mode is *linearize + transpose*. ``linearize_flat`` runs the JVP with
tangents that are staged into a jaxpr (a ``StagingTrace`` one level below the
JVP trace, a :class:`LinearizeTrace`) while the primal computation runs for real
below both. The recorded jaxpr is linear in the tangent inputs: primitives whose
JVP would record non-linear work on the tangents (control flow: a loop carrying
primals and tangents together) have a *linearize rule* that splits it into a
primal part and a linear part. ``backward_pass`` walks the jaxpr backwards with
the transpose rules of the linear primitives. Every rule is written with
primitives, so the backward pass can itself be traced: ``grad(grad(f))``,
``jvp(grad(f))`` and ``jit(grad(f))`` all work.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import numpy as np

from functrace import _debug, core, dtypes
from functrace.core import Primitive, ShapedArray, Trace, Tracer
from functrace.errors import MissingRuleError
from functrace.interpreters import batching
from functrace.interpreters import spmd as spmd_mod
from functrace.interpreters.staging import JaxprBuilder, StagingTrace, StagingTracer
from functrace.ir import Jaxpr, Literal, Var

# Rule tables owned by this interpreter.
#   jvp_rules[p](primals, tangents, **params) -> (primal_out, tangent_out)
#   transpose_rules[p](ct, *invals, **params) -> cotangent per input (None if non-linear)
#   linearize_rules[p](primals, tangents, **params) -> (primal_out, tangent_out): what
#     reverse mode (linearize) uses instead of the jvp rule, for primitives that have one
#     (the analogue of JAX's partial-eval rules). Its tangents are recorded for
#     transposition, so it computes the tangent outputs with linear primitives only and
#     everything else (a loop's primal part and residuals) apart: control flow splits a
#     loop into a primal loop and a linear one here. Other primitives use the jvp rule.
jvp_rules: dict[Primitive, Callable[..., Any]] = core.RuleTable()
transpose_rules: dict[Primitive, Callable[..., Any]] = core.RuleTable()
linearize_rules: dict[Primitive, Callable[..., Any]] = core.RuleTable()
# JAX's names for the same two tables (``jax.interpreters.ad``), with the same rule
# signatures: a rule registered under either name is the one every transform uses.
primitive_jvps = jvp_rules
primitive_transposes = transpose_rules
# Primitives that are linear in (some of) their array inputs need a transpose rule.
linear_primitives: set[Primitive] = set()
# The debug switches (config.debug_nans / debug_infs): with a check on, the work of a
# primitive's JVP rule and of each transposed equation is labelled with where it came
# from (``_debug.state``), so that a NaN found there names the primitive and pass.
_flags = _debug.flags
_dstate = _debug.state


# ---------------------------------------------------------------------------
# Symbolic zeros and tangent arithmetic
# ---------------------------------------------------------------------------


class Zero:
    """A symbolic zero tangent/cotangent of the given (tangent) abstract value."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    @staticmethod
    def from_primal(x: Any) -> Zero:
        """The zero tangent of the value ``x`` (JAX's ``Zero.from_primal_value``)."""
        return Zero(tangent_aval(core.get_aval(x)))

    from_primal_value = from_primal

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    return ShapedArray(aval.shape, dtypes.tangent_dtype(aval.dtype), aval.weak_type)


def zeros_like_aval(aval: ShapedArray) -> np.ndarray:
    return np.zeros(aval.shape, aval.dtype)


def instantiate(t: Any) -> Any:
    """A concrete array for a tangent that may be the symbolic Zero."""
    return zeros_like_aval(t.aval) if type(t) is Zero else t


instantiate_zeros = instantiate  # JAX's name


add_any_p = Primitive("add_any")
"""Adds two tangents/cotangents of the same type (fan-out accumulation)."""


def add_tangents(x: Any, y: Any) -> Any:
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_any_p.bind(x, y)


def _add_any_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if not x.same_type(y):
        raise ValueError(f"add_any: expected equal types, got {x.str_short()} and {y.str_short()}.")
    return x.update(weak_type=x.weak_type and y.weak_type)


def _add_any_impl(x: Any, y: Any) -> Any:
    if getattr(x, "dtype", None) == dtypes.float0:
        return x
    return np.add(x, y)


core.impl_rules[add_any_p] = _add_any_impl
core.abstract_eval_rules[add_any_p] = _add_any_abstract_eval


def _add_any_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    return add_any_p.bind(*primals), add_tangents(*tangents)


jvp_rules[add_any_p] = _add_any_jvp
batching.defbroadcasting(add_any_p)
transpose_rules[add_any_p] = lambda ct, x, y: [ct, ct]
linear_primitives.add(add_any_p)


# ---------------------------------------------------------------------------
# Forward mode
# ---------------------------------------------------------------------------


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent", "_aval")

    def __init__(self, trace: Trace, primal: Any, tangent: Any) -> None:
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self._aval: ShapedArray | None = None

    @property
    def aval(self) -> ShapedArray:
        aval = self._aval
        if aval is None:
            aval = self._aval = core.get_aval(self.primal)
        return aval

    def to_concrete_value(self, why: str = "a concrete value") -> np.ndarray:
        p = self.primal
        return p.to_concrete_value(why) if isinstance(p, Tracer) else np.asarray(p)


class JVPTrace(Trace):
    __slots__ = ()

    def pure(self, val: Any) -> JVPTracer:
        return JVPTracer(self, val, Zero(tangent_aval(core.get_aval(val))))

    lift = pure

    def process_primitive(self, primitive: Primitive, tracers: list[Any], params: dict) -> Any:
        primals = [t.primal for t in tracers]
        tangents = [t.tangent for t in tracers]
        for t in tangents:
            if type(t) is not Zero:
                break
        else:
            out = primitive.bind(*primals, **params)
            if primitive.multiple_results:
                return [JVPTracer(self, o, Zero.from_primal(o)) for o in out]
            return _keep_weak(
                JVPTracer(self, out, Zero.from_primal(out)), primitive, tracers, params
            )
        primal_out, tangent_out = self.apply_rule(primitive, primals, tangents, params)
        if primitive.multiple_results:
            return [JVPTracer(self, p, t) for p, t in zip(primal_out, tangent_out)]
        return _keep_weak(JVPTracer(self, primal_out, tangent_out), primitive, tracers, params)

    def apply_rule(
        self, primitive: Primitive, primals: list[Any], tangents: list[Any], params: dict
    ) -> tuple[Any, Any]:
        if _flags.check:
            return _labelled(primitive, _jvp_rule(primitive), primals, tangents, params)
        return _jvp_rule(primitive)(primals, tangents, **params)

    def call_jvp_rule(self, rule: Callable[..., Any], *args: Any, **params: Any) -> Any:
        """Run a JVP rule on this trace's primals and tangents (also the rule of a
        ``custom_jvp`` function, which its call runs directly)."""
        return rule(*args, **params)


def _labelled(
    primitive: Primitive, rule: Callable[..., Any], primals: Any, tangents: Any, params: dict
) -> Any:
    """Run a JVP rule with the debug checks told that its work is ``primitive``'s."""
    prev, _dstate.rule = _dstate.rule, primitive.name
    prev_primals, _dstate.primals = _dstate.primals, primals
    try:
        return rule(primals, tangents, **params)
    finally:
        _dstate.rule = prev
        _dstate.primals = prev_primals


def _jvp_rule(primitive: Primitive) -> Callable[..., Any]:
    rule = jvp_rules.get(primitive)
    if rule is None:
        raise MissingRuleError(
            primitive.name,
            "jvp (forward and reverse mode)",
            "jvp_rules",
            "functrace/lax",
            "ad.primitive_jvps[{p}] = rule (rule(primals, tangents) -> (primal_out, "
            "tangent_out)), or ad.defjvp({p}, one function per operand)",
        )
    return rule


class _LinearizeState(threading.local):
    # While a LinearizeTrace runs a jvp rule: the level of the tape its tangents are
    # recorded on (see LinearizeTrace); None otherwise.
    tape_level: int | None = None


_linearize_state = _LinearizeState()


class LinearizeTrace(JVPTrace):
    """The JVP trace of reverse mode (:func:`linearize_flat`): its tangents are recorded
    for transposition on a tape, the trace at level ``tape_level``. A primitive with a
    linearize rule uses it; the others use their jvp rule. A JVP that such a jvp rule
    starts on tangents it was given (values of the tape or of a trace above it: the
    rule of a ``custom_jvp`` function calling ``jvp``, perhaps per example under
    ``vmap``) is part of this linearization, so :func:`jvp_flat` runs it in a
    ``LinearizeTrace`` too."""

    __slots__ = ("tape_level",)
    tape_level: int

    def apply_rule(
        self, primitive: Primitive, primals: list[Any], tangents: list[Any], params: dict
    ) -> tuple[Any, Any]:
        rule = linearize_rules.get(primitive)
        if rule is not None:
            return rule(primals, tangents, **params)
        # as call_jvp_rule, inlined: this is every primitive's path in reverse mode
        rule = jvp_rules.get(primitive) or _jvp_rule(primitive)
        state = _linearize_state
        prev, state.tape_level = state.tape_level, self.tape_level
        try:
            if _flags.check:
                return _labelled(primitive, rule, primals, tangents, params)
            return rule(primals, tangents, **params)
        finally:
            state.tape_level = prev

    def call_jvp_rule(self, rule: Callable[..., Any], *args: Any, **params: Any) -> Any:
        state = _linearize_state
        prev, state.tape_level = state.tape_level, self.tape_level
        try:
            return rule(*args, **params)
        finally:
            state.tape_level = prev


def below_tape(t: Any) -> bool:
    """While reverse mode runs a jvp rule: whether the tracer ``t``, given as a tangent,
    belongs to a transform below the tape (an outer ``grad``'s value, e.g. the zeros a
    ``custom_jvp`` rule returned, lifted there). Such a tangent does not depend on the
    tangents being linearized, so it is zero: the tangent map is linear."""
    tape = _linearize_state.tape_level
    return tape is not None and isinstance(t, Tracer) and t._trace.level < tape


def _push_jvp_trace(tangents: Sequence[Any], origin: str) -> JVPTrace:
    """The trace of a JVP on ``tangents``: a :class:`LinearizeTrace` when a jvp rule of
    reverse mode runs and a tangent is a value at or above its tape."""
    tape = _linearize_state.tape_level
    if tape is not None:
        for t in tangents:
            if isinstance(t, Tracer) and t._trace.level >= tape:
                trace = core.push_trace(LinearizeTrace, origin=origin)
                trace.tape_level = tape
                return trace
    return core.push_trace(JVPTrace, origin=origin)


# NumPy scalars of the dtypes of Python scalars: what the impls return for weak operands.
_WEAK_RESULT_TYPES = (np.float64, np.int64, np.complex128)


def _keep_weak(out: JVPTracer, primitive: Primitive, tracers: list[Any], params: dict) -> Any:
    """Concrete primals lose the weak type of Python scalars (``2.5 * 2.0`` evaluates to a
    strong np.float64); mark the tracer weak where abstract evaluation would, so that
    promotion later on (``* float32``) follows NumPy 2 as it does eagerly and under jit:
    a result of weak operands of its own dtype, or a cast that asks for a weak type."""
    p = out.primal
    if type(p) not in _WEAK_RESULT_TYPES:
        return out
    if "weak_type" in params:  # convert_element_type: the parameter decides
        weak = params["weak_type"]
    else:
        weak = True
        for t in tracers:
            a = t.aval
            if not a.weak_type or a.dtype != p.dtype:
                weak = False
                break
    if weak:
        out._aval = ShapedArray((), p.dtype, True)
    return out


def jvp_flat(
    fun: Callable[..., Any],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    origin: str = "jvp",
    has_aux: bool = False,
) -> Any:
    """Forward mode on flat lists. Tangents may be :class:`Zero`.

    Returns ``(primals_out, tangents_out)``, plus ``aux`` with ``has_aux``. Called
    from the jvp rule of a primitive reverse mode is linearizing, it is part of that
    linearization (see :class:`LinearizeTrace`).
    """
    state = _linearize_state
    trace = _push_jvp_trace(tangents, origin)
    prev, state.tape_level = state.tape_level, None
    try:
        tracers_in = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        res = fun(*tracers_in)
        if has_aux:
            res, aux = res
            aux = strip_tracers(aux, trace)
        outs = [trace.full_raise(o) for o in res]
        out = [t.primal for t in outs], [t.tangent for t in outs]
        return (*out, aux) if has_aux else out
    finally:
        state.tape_level = prev
        core.pop_trace(trace)


# ---------------------------------------------------------------------------
# Rule helpers (used in each primitive's block in functrace.lax)
# ---------------------------------------------------------------------------


def defjvp(primitive: Primitive, *jvp_fns: Callable[..., Any] | None) -> None:
    """JVP from one function per input: ``fn(g, *primals, **params)`` is that input's
    contribution to the output tangent; ``None`` marks a non-differentiable input."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        out = primitive.bind(*primals, **params)
        t_out: Any = None
        for fn, g in zip(jvp_fns, tangents):
            if fn is not None and type(g) is not Zero:
                t = fn(g, *primals, **params)
                t_out = t if t_out is None else add_tangents(t_out, t)
        return out, (Zero.from_primal(out) if t_out is None else t_out)

    jvp_rules[primitive] = rule


def defjvp2(primitive: Primitive, *jvp_fns: Callable[..., Any] | None) -> None:
    """Like :func:`defjvp` but each ``fn(g, ans, *primals, **params)`` also gets the output."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        out = primitive.bind(*primals, **params)
        t_out: Any = None
        for fn, g in zip(jvp_fns, tangents):
            if fn is not None and type(g) is not Zero:
                t = fn(g, out, *primals, **params)
                t_out = t if t_out is None else add_tangents(t_out, t)
        return out, (Zero.from_primal(out) if t_out is None else t_out)

    jvp_rules[primitive] = rule


def defjvp_zero(primitive: Primitive) -> None:
    """The output does not depend differentiably on the inputs (comparisons, floor, ...)."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        out = primitive.bind(*primals, **params)
        if primitive.multiple_results:
            return out, [Zero.from_primal(o) for o in out]
        return out, Zero.from_primal(out)

    jvp_rules[primitive] = rule


def deflinear2(primitive: Primitive, transpose_rule: Callable[..., Any]) -> None:
    """A primitive linear in all its array inputs: its JVP is itself applied to tangents.
    ``transpose_rule(ct, *operands, **params)`` returns one cotangent per operand (a
    linear operand is an :class:`UndefPrimal` marker, whose ``aval`` gives its type)."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        out = primitive.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return out, Zero.from_primal(out)
        return out, primitive.bind(*[instantiate(t) for t in tangents], **params)

    jvp_rules[primitive] = rule
    transpose_rules[primitive] = transpose_rule
    linear_primitives.add(primitive)


def deflinear(primitive: Primitive, transpose_rule: Callable[..., Any]) -> None:
    """JAX's ``deflinear``: :func:`deflinear2` with ``transpose_rule(ct, **params)``,
    which is not given the operands."""
    deflinear2(primitive, lambda ct, *operands, **params: transpose_rule(ct, **params))


def defsum(primitive: Primitive, negate: Callable[[Any], Any] | None) -> None:
    """The JVP of ``x + y`` (``negate`` None) or ``x - y`` (``negate`` the negation) for a
    primitive made with :func:`deflinear2`: where one tangent is the symbolic Zero, the
    other is the output's tangent as it is (negated for ``-y``), so a constant operand
    adds no array of zeros (nor a residual for reverse mode) to the tangent map."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        out = primitive.bind(*primals, **params)
        tx, ty = tangents
        zx, zy = type(tx) is Zero, type(ty) is Zero
        if zx or zy:  # (the common case, two tangents, pays for no aval)
            want = tangent_aval(core.get_aval(out))
            if zx and zy:
                return out, Zero(want)
            if zy and core.get_aval(tx) == want:
                return out, tx
            if zx and core.get_aval(ty) == want:
                return out, ty if negate is None else negate(ty)
        return out, primitive.bind(instantiate(tx), instantiate(ty), **params)

    jvp_rules[primitive] = rule


def deflinear_in(
    primitive: Primitive, argnums: tuple[int, ...], transpose_rule: Callable[..., Any]
) -> None:
    """Linear in the inputs ``argnums``; the others (indices, predicates) are not
    differentiated. The JVP applies the primitive to the tangents of ``argnums`` and
    the primals of the rest."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        out = primitive.bind(*primals, **params)
        if all(type(tangents[i]) is Zero for i in argnums):
            return out, Zero.from_primal(out)
        args = [instantiate(tangents[i]) if i in argnums else p for i, p in enumerate(primals)]
        return out, primitive.bind(*args, **params)

    jvp_rules[primitive] = rule
    transpose_rules[primitive] = transpose_rule
    linear_primitives.add(primitive)


def defbilinear(
    primitive: Primitive, lhs_transpose: Callable[..., Any], rhs_transpose: Callable[..., Any]
) -> None:
    """``primitive(x, y)`` linear in each argument separately (mul, dot_general).

    ``lhs_transpose(ct, x, y, **params)`` gives the cotangent of x, and
    ``rhs_transpose(ct, x, y, **params)`` that of y; the operand being transposed is
    an :class:`UndefPrimal` (its type is its ``aval``), as in JAX.
    """

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        x, y = primals
        gx, gy = tangents
        out = primitive.bind(x, y, **params)
        t: Any = Zero.from_primal(out)
        if type(gx) is not Zero:
            t = primitive.bind(gx, y, **params)
        if type(gy) is not Zero:
            t = add_tangents(t, primitive.bind(x, gy, **params))
        return out, t

    def transpose(ct: Any, x: Any, y: Any, **params: Any) -> list[Any]:
        if isinstance(x, UndefPrimal) and isinstance(y, UndefPrimal):
            raise ValueError(
                f"{primitive.name} transpose: both operands are linear (a "
                f"non-linear use of tangents in a JVP rule)."
            )
        if isinstance(x, UndefPrimal):
            return [lhs_transpose(ct, x, y, **params), None]
        return [None, rhs_transpose(ct, x, y, **params)]

    jvp_rules[primitive] = rule
    transpose_rules[primitive] = transpose
    linear_primitives.add(primitive)


# ---------------------------------------------------------------------------
# Linearize and transpose
# ---------------------------------------------------------------------------


class UndefPrimal:
    """Marks a linear input of an equation during transposition (its value is the
    unknown the cotangent flows to). JAX's name: ``UndefinedPrimal``."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefPrimal({self.aval.str_short()})"


UndefinedPrimal = UndefPrimal


def is_undefined_primal(x: Any) -> bool:
    """Whether a transpose rule's operand ``x`` is a linear input (an
    :class:`UndefPrimal`) rather than a known value."""
    return type(x) is UndefPrimal


class LinearFunction:
    """The linear map recorded by :func:`linearize_flat`: a tangent jaxpr plus constants.

    ``in_avals``: tangent types of the inputs (entries None for inputs that were not
    differentiated); ``out_zero``: outputs whose tangent is identically zero;
    ``spmd``: the :class:`~functrace.interpreters.spmd.SpmdPlan` its transpose applies,
    or None.
    """

    __slots__ = ("jaxpr", "consts", "in_avals", "out_avals", "out_zero", "in_mask", "spmd")

    def __init__(
        self,
        jaxpr: Jaxpr,
        consts: list[Any],
        in_avals: list[ShapedArray],
        out_avals: list[ShapedArray],
        out_zero: list[bool],
        in_mask: list[bool],
        spmd: spmd_mod.SpmdPlan | None = None,
    ):
        self.jaxpr = jaxpr
        self.consts = consts
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.out_zero = out_zero
        self.in_mask = in_mask
        self.spmd = spmd

    def transpose(self, cts_out: Sequence[Any]) -> list[Any]:
        """Cotangents of the inputs (Zero for undifferentiated or unreached ones)."""
        plan = self.spmd
        if plan is not None:
            scale = spmd_mod.ops["scale"]
            cts_out = [
                ct if f == 1.0 or type(ct) is Zero else scale(ct, f)
                for ct, f in zip(cts_out, plan.out_scale)
            ]
        live_cts = [ct for ct, z in zip(cts_out, self.out_zero) if not z]
        cts_in = backward_pass(self.jaxpr, self.consts, live_cts)
        it = iter(cts_in)
        cts = [next(it) if m else Zero(a) for m, a in zip(self.in_mask, self.in_avals)]
        if plan is not None:
            psum = spmd_mod.ops["psum"]
            cts = [
                ct if not names or type(ct) is Zero else psum(ct, names)
                for ct, names in zip(cts, plan.in_axes)
            ]
        return cts

    def forward(self, tangents_in: Sequence[Any]) -> list[Any]:
        """Apply the linear map to input tangents (for ``linearize``)."""
        from functrace.ir import eval_jaxpr

        args = [instantiate(t) for t, m in zip(tangents_in, self.in_mask) if m]
        outs = iter(eval_jaxpr(self.jaxpr, self.consts, args))
        return [
            zeros_like_aval(a) if z else next(outs) for a, z in zip(self.out_avals, self.out_zero)
        ]


class _Timer:
    """Seconds spent in ``linearize_flat``/``backward_pass`` (outermost calls only)
    while ``on``: switched on by ``jit`` under ``FUNCTRACE_DEBUG_JIT`` for its AD
    phase time; off, the entry points pay one attribute test."""

    on = False
    seconds = 0.0
    depth = 0


ad_timer = _Timer()
_F = TypeVar("_F", bound=Callable[..., Any])


def _timed(fn: _F) -> _F:
    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        t = ad_timer
        if not t.on:
            return fn(*args, **kwargs)
        t.depth += 1
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            t.depth -= 1
            if t.depth == 0:
                t.seconds += time.perf_counter() - t0

    return cast(_F, timed)


@_timed
def linearize_flat(
    fun: Callable[..., Any],
    primals: Sequence[Any],
    diff_mask: Sequence[bool] | None = None,
    *,
    origin: str = "linearize",
    has_aux: bool = False,
    spmd: bool = False,
) -> tuple[list[Any], LinearFunction, Any]:
    """Run ``fun`` on ``primals`` and record its linearization.

    Returns ``(primals_out, linear_function, aux)``. With ``has_aux``, ``fun`` returns
    ``(outs, aux)`` and aux comes back with this trace's tracers replaced by primals.
    With ``spmd`` (the user's reverse mode: ``grad``, ``vjp``, ``jacrev``), its transpose
    follows JAX's varying types inside ``shard_map`` bodies (``spmd.SpmdPlan``).
    """
    builder = JaxprBuilder()
    avals = [core.get_aval(p) for p in primals]
    mask = [True] * len(primals) if diff_mask is None else list(diff_mask)
    t_avals = [tangent_aval(a) for a in avals]
    ltrace = core.push_trace(StagingTrace, builder, origin=f"{origin} (tangents)")
    state = _linearize_state
    prev, state.tape_level = state.tape_level, None
    try:
        tangents_in: list[Any] = [
            ltrace.new_arg(ta) if m else Zero(ta) for ta, m in zip(t_avals, mask)
        ]
        jtrace = core.push_trace(LinearizeTrace, origin=origin)
        jtrace.tape_level = ltrace.level
        try:
            tracers_in = [JVPTracer(jtrace, p, t) for p, t in zip(primals, tangents_in)]
            res = fun(*tracers_in)
            aux = None
            if has_aux:
                res, aux = res
                aux = strip_tracers(aux, jtrace)
            outs = [jtrace.full_raise(o) for o in res]
        finally:
            core.pop_trace(jtrace)
        primals_out = [t.primal for t in outs]
        tangents_out = [t.tangent for t in outs]
        out_zero = [type(t) is Zero for t in tangents_out]
        live_out = [ltrace.full_raise(t) for t in tangents_out if type(t) is not Zero]
        jaxpr, consts = builder.build(
            [t for t in tangents_in if type(t) is StagingTracer], live_out
        )
    finally:
        core.pop_trace(ltrace)
        state.tape_level = prev
    lin = LinearFunction(
        jaxpr,
        consts,
        t_avals,
        [tangent_aval(core.get_aval(p)) for p in primals_out],
        out_zero,
        mask,
        spmd_mod.plan(primals, mask, primals_out) if spmd else None,
    )
    return primals_out, lin, aux


def strip_tracers(tree: Any, trace: Trace) -> Any:
    """Replace the JVP tracers of ``trace`` in a pytree by their primal values."""
    from functrace.tree_util import tree_map

    def strip(x: Any) -> Any:
        while isinstance(x, JVPTracer) and x._trace is trace:
            x = x.primal
        return x

    return tree_map(strip, tree)


_MISSING = object()


@_timed
def backward_pass(
    jaxpr: Jaxpr, consts: Sequence[Any], cts: Sequence[Any], forward_known: bool = False
) -> list[Any]:
    """Transpose the linear ``jaxpr``: cotangents of the outputs -> of the inputs.

    Constants are the non-linear values (known); every invar is linear. Cotangents
    may be :class:`Zero`; fan-out is accumulated with ``add_any``. With
    ``forward_known``, equations that read no linear value (e.g. a zero constant built
    inside a loop body) are evaluated forward first, so their outputs are known too;
    reverse-mode tapes never contain such equations and skip that sweep.
    """
    known: dict[Var, Any] = dict(zip(jaxpr.constvars, consts))
    ct_env: dict[Var, Any] = {}
    for eqn in jaxpr.eqns if forward_known else ():
        if all(type(x) is Literal or x in known for x in eqn.inputs):
            vals = [x.val if type(x) is Literal else known[x] for x in eqn.inputs]  # type: ignore
            out = eqn.primitive.bind(*vals, **eqn.params)
            outs = out if eqn.primitive.multiple_results else [out]
            known.update(zip(eqn.out_binders, outs))

    def write(v: Any, ct: Any) -> None:
        if type(v) is Var and v not in known and type(ct) is not Zero and ct is not None:
            prev = ct_env.get(v)
            ct_env[v] = ct if prev is None else add_tangents(prev, ct)

    for v, ct in zip(jaxpr.outvars, cts):
        write(v, ct)
    if _flags.check:  # label each equation's cotangent work for the debug checks
        prev_source = _dstate.source
        try:
            return _backward_eqns(jaxpr, known, ct_env, forward_known, True)
        finally:
            _dstate.source = prev_source
    return _backward_eqns(jaxpr, known, ct_env, forward_known, False)


def _backward_eqns(
    jaxpr: Jaxpr, known: dict[Var, Any], ct_env: dict[Var, Any], forward_known: bool, label: bool
) -> list[Any]:
    for eqn in reversed(jaxpr.eqns):
        prim = eqn.primitive
        if label:
            _dstate.source = _debug.backward_source(eqn.source, prim.name)
        out_binders = eqn.out_binders
        if forward_known and out_binders and out_binders[0] in known:
            continue  # evaluated forward: not linear
        if prim.multiple_results:
            cts_out = [ct_env.pop(v, None) for v in out_binders]
            if all(ct is None for ct in cts_out):
                continue
            ct_arg: Any = [
                Zero(v.aval) if ct is None else ct for ct, v in zip(cts_out, out_binders)
            ]
        else:
            ct_arg = ct_env.pop(out_binders[0], None)
            if ct_arg is None:
                continue
        invals = []
        for x in eqn.inputs:
            if type(x) is Literal:
                invals.append(x.val)
            else:
                val = known.get(x, _MISSING)
                invals.append(UndefPrimal(x.aval) if val is _MISSING else val)
        rule = transpose_rules.get(prim)
        if rule is None:
            raise MissingRuleError(
                prim.name,
                "transpose (reverse mode)",
                "transpose_rules",
                "functrace/lax",
                "ad.primitive_transposes[{p}] = rule (rule(ct, *operands) -> one cotangent "
                "per operand, None for those not ad.is_undefined_primal): reverse mode "
                "transposes the primitives a JVP rule applies to tangents",
            )
        cts_in = rule(ct_arg, *invals, **eqn.params)
        for x, val, ct in zip(eqn.inputs, invals, cts_in):
            # accumulate the cotangent of each linear input (fan-out adds up)
            if type(val) is UndefPrimal and ct is not None and type(ct) is not Zero:
                prev = ct_env.get(x)
                ct_env[x] = ct if prev is None else add_tangents(prev, ct)
    return [ct_env.get(v, Zero(v.aval)) for v in jaxpr.invars]


__all__ = [
    "JVPTrace",
    "JVPTracer",
    "LinearFunction",
    "LinearizeTrace",
    "UndefPrimal",
    "UndefinedPrimal",
    "Zero",
    "add_any_p",
    "add_tangents",
    "backward_pass",
    "defbilinear",
    "defjvp",
    "defjvp2",
    "defjvp_zero",
    "deflinear",
    "deflinear2",
    "deflinear_in",
    "defsum",
    "instantiate",
    "instantiate_zeros",
    "is_undefined_primal",
    "jvp_flat",
    "jvp_rules",
    "linearize_flat",
    "linearize_rules",
    "primitive_jvps",
    "primitive_transposes",
    "transpose_rules",
    "zeros_like_aval",
]
