"""What ``custom_jvp`` and ``custom_vjp`` share: tracing the function, reading its
arguments, the impl and abstract-eval rules of the custom calls, and batching a custom
call (a new custom call whose rules run the user's rules per example)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from functrace import core
from functrace.core import Primitive, ShapedArray, Tracer, describe_fun
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import ClosedJaxpr, eval_jaxpr
from functrace.tree_util import keystr, tree_flatten, tree_flatten_with_path


class _Callable:
    """A hashable-by-identity wrapper for a Python callable kept in primitive params."""

    __slots__ = ("fn", "__name__", "user")

    def __init__(self, fn: Callable[..., Any], name: str, user: tuple[Any, ...] = ()) -> None:
        self.fn = fn
        self.__name__ = name
        self.user = user  # the user's rule functions it runs (named by check_grads(locate=))

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def __repr__(self) -> str:
        return self.__name__


def forward_attr(self: Any, name: str) -> Any:
    """``__getattr__`` of the custom-function classes: an attribute they lack is the
    wrapped function's (as in JAX: ``custom_vjp(custom_vmap(f)).def_vmap``)."""
    if name == "fun" or name.startswith("__"):
        raise AttributeError(name)
    return getattr(self.fun, name)


def _trace_flat(
    fun: Callable[..., Any], args: Sequence[Any], origin: str
) -> tuple[ClosedJaxpr, Any]:
    """Trace ``fun`` (flat in, pytree out) on the types of ``args``."""
    box: list[Any] = []

    def flat_fun(*xs: Any) -> list[Any]:
        leaves, tree = tree_flatten(fun(*xs))
        box.append(tree)
        return leaves

    avals = [core.get_aval(a).update() for a in args]
    closed, _ = trace_to_jaxpr(flat_fun, avals, origin=origin)
    return closed, box[-1]


def _signature(fun: Callable[..., Any]) -> Any:
    """The signature that places keyword arguments by position; None for a
    ``functools.partial`` (opaque, as in JAX: its bound keywords are not positions) or a
    function whose signature cannot be read."""
    import functools
    import inspect

    if isinstance(fun, functools.partial):
        return None
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _resolve_kwargs(
    kind: str, fun: Callable[..., Any], sig: Any, args: tuple[Any, ...], kwargs: dict
) -> tuple[Any, ...]:
    """The arguments of a custom_jvp/custom_vjp call as one positional tuple (keyword
    arguments placed by the function's signature, defaults filled in, as JAX does), so
    ``nondiff_argnums`` and the rules see one positional argument list. Keyword-only
    parameters left at their defaults are not passed (the function fills them in);
    passing one is an error, as in JAX."""
    if sig is None:
        if not kwargs:
            return args
        raise TypeError(
            f"{kind}: expected positional arguments for {describe_fun(fun)}, whose "
            f"keyword arguments have no positions (a functools.partial, or a signature "
            f"that cannot be read), got keyword arguments {sorted(kwargs)}."
        )
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{kind}: bad arguments for {describe_fun(fun)}: {e}.") from None
    bound.apply_defaults()
    passed = sorted(k for k in bound.kwargs if k in kwargs)
    if passed:
        raise TypeError(
            f"{kind}: expected keyword arguments of {describe_fun(fun)} that have a "
            f"position, got keyword-only arguments {passed}. Pass them "
            f"positionally or close over them."
        )
    return tuple(bound.args)


def _check_primal_types(
    kind: str, rule: str, name: str, out: Any, leaves: Sequence[Any], avals: Sequence[Any]
) -> None:
    """TypeError unless each leaf of ``out``, the primal output a rule (custom_jvp's JVP
    rule, custom_vjp's fwd) returned, has the shape and dtype of the function's output
    ``avals`` (as in JAX: under jit or scan a wrong one would become the result)."""
    for (path, _), x, a in zip(tree_flatten_with_path(out)[0], leaves, avals):
        got = core.get_aval(x)
        if got.shape != a.shape or got.dtype != a.dtype:
            raise TypeError(
                f"{kind}: expected the {rule} of {name} to return a primal output of the "
                f"function's type, {a.str_short()}{_at(path)}, got {got.str_short()}. The "
                f"primal output must equal what the function returns."
            )


def _check_tangent_types(
    name: str, t_out: Any, t_leaves: Sequence[Any], primal_avals: Sequence[Any]
) -> None:
    """TypeError unless each tangent leaf a custom_jvp rule returned has the shape of its
    primal output and that output's tangent dtype (float0 for integer and boolean
    outputs), as in JAX."""
    for (path, _), t, a in zip(tree_flatten_with_path(t_out)[0], t_leaves, primal_avals):
        got = t.aval if type(t) is Zero else core.get_aval(t)
        want = ad.tangent_aval(a)
        if got.shape != a.shape or got.dtype != want.dtype:
            raise TypeError(
                f"custom_jvp: expected the JVP rule of {name} to return a tangent of type "
                f"{want.str_short()}{_at(path)} (the tangent type of the primal output "
                f"{a.str_short()}), got {got.str_short()}."
            )


def _at(path: Any) -> str:
    return f" at output{keystr(path)}" if path else ""


def _call_closed(closed: ClosedJaxpr, args: Sequence[Any]) -> list[Any]:
    return eval_jaxpr(closed.jaxpr, closed.consts, list(args))


def _top_trace(leaves: Sequence[Any]) -> Any:
    top = None
    for x in leaves:
        if isinstance(x, Tracer) and (top is None or x._trace.level > top.level):
            top = x._trace
    return top


def _differentiated_directly(top: Any) -> bool:
    """Whether a custom call whose operands' innermost trace is ``top`` runs its user's
    rule (JVP rule, fwd) directly on the primals instead of binding the call: ``top``
    is a JVP trace and neither staging (jit) nor a ``vmap`` is active above it. A
    ``vmap`` running inside the ``jvp``/``grad`` (``jvp(vmap(f))``, the function closing
    over its values) binds the call, whose batching rule runs the rule inside that
    ``vmap``; derivatives nested inside (``grad(grad(f))``) do not matter."""
    if not isinstance(top, ad.JVPTrace) or top.level <= core.dynamic_level():
        return False
    stack = core.trace_stack()
    return not any(type(t) is batching.BatchTrace for t in stack[top.level + 1 :])


def _close_over_consts(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Turn constants into leading arguments, so tracer constants flow as operands."""
    from functrace.ir import Jaxpr

    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr((), (*j.constvars, *j.invars), j.eqns, j.outvars), [])


def _skip_consts(flat_rule: Callable[..., Any], n: int) -> Callable[..., Any]:
    """A JVP rule of the arguments after the ``n`` constants the function closes over
    (whose tangents must be zero). Zero tangents stay symbolic: the user's rule
    instantiates them unless it takes symbolic zeros."""

    def rule(primals: list[Any], tangents: list[Any]) -> Any:
        for t in tangents[:n]:
            if type(t) is not Zero:
                raise NotImplementedError(
                    "custom_jvp/custom_vjp: expected the function to close over no value "
                    "being differentiated, got a closure over a traced value. Pass that "
                    "value as an argument instead."
                )
        return flat_rule(primals[n:], list(tangents[n:]))

    return rule


# ---------------------------------------------------------------------------
# Batching the custom calls: a new custom call whose rules are vmaps of the rules
# ---------------------------------------------------------------------------


def _level(x: Any) -> int:
    return x._trace.level if isinstance(x, Tracer) else 0


def _to_front(vals: Sequence[Any], bdims: Sequence[int | None]) -> tuple[list[Any], list[Any]]:
    """Operands with their batch dimension moved to axis 0 (unbatched ones unchanged)."""
    args = [v if d in (None, 0) else batching.moveaxis(v, d, 0) for v, d in zip(vals, bdims)]
    return args, [None if d is None else 0 for d in bdims]


def _at_front(x: Any, d: int | None, batched: bool, size: int) -> Any:
    return batching.bdim_at(x, d, size, 0) if batched else x


def _batch_jaxpr(
    closed: ClosedJaxpr, size: int, args: Sequence[Any], dims: Sequence[int | None], origin: str
) -> tuple[ClosedJaxpr, list[bool]]:
    """The jaxpr of ``closed`` batched over ``dims`` (0 or None) and which of its
    outputs are batched (at axis 0)."""
    box: list[list[bool]] = []

    def batched(*xs: Any) -> list[Any]:
        outs, out_dims = batching.vmap_flat(
            lambda *a: _call_closed(closed, a), size, xs, dims, origin=origin
        )
        box.append([d is not None for d in out_dims])
        return [o if d in (None, 0) else batching.moveaxis(o, d, 0) for o, d in zip(outs, out_dims)]

    new, _ = trace_to_jaxpr(batched, [core.get_aval(a).update() for a in args], origin=origin)
    return new, box[-1]


def _per_example(
    trace: batching.BatchTrace,
    fn: Callable[..., Sequence[Any]],
    args: Sequence[Any],
    dims: Sequence[int | None],
    origin: str,
) -> tuple[list[Any], list[int | None]]:
    """Run flat ``fn`` on each example of ``args``: its outputs and their batch dims.

    While the vmap that batched the call is still running (the rule is called from the
    bind of the batched call), the user's rule runs in that same vmap, so it may close
    over that vmap's values, like the function itself; otherwise in a fresh vmap."""
    if not trace.finished and all(_level(a) < trace.level for a in args):
        tracers = [batching.BatchTracer(trace, a, d) for a, d in zip(args, dims)]
        outs = [trace.full_raise(o) for o in fn(*tracers)]
        return [t.val for t in outs], [t.bdim for t in outs]
    return batching.vmap_flat(fn, trace.axis_size, args, dims, origin=origin)


class _OutBatch:
    """Which outputs of one batched custom call are batched (at axis 0).

    It starts as what the batched function gives. A rule whose results differ between
    examples where the function's do not (a tangent that depends on a batched input the
    primal ignores) widens it while the call is being bound; the batching rule then
    reports those outputs as batched. Outside that bind (the call replayed from a jaxpr)
    the output types are fixed, and such a rule is an error."""

    __slots__ = ("batched", "binding", "name")

    def __init__(self, batched: list[bool], name: str) -> None:
        self.batched = batched
        self.binding = False
        self.name = name

    def widen(self, got: Sequence[bool], what: str) -> list[bool]:
        new = [a or b for a, b in zip(self.batched, got)]
        if new != self.batched:
            if not self.binding:
                k = next(i for i, (a, b) in enumerate(zip(self.batched, new)) if a != b)
                raise ValueError(
                    f"vmap: expected the {what} of {self.name} to give, for output {k}, "
                    f"a result that is the same for every example, as the function "
                    f"does, got one that differs between examples. Make the function's "
                    f"output depend on the same inputs as the rule's."
                )
            self.batched = new
        return new

    def dims(self) -> list[int | None]:
        return [0 if b else None for b in self.batched]


def _rule_name(rule: Any, prefix: str) -> str:
    return f"'{rule.__name__.removeprefix(prefix)}'"


def _custom_call_impl(*args: Any, call_jaxpr: ClosedJaxpr, **rules: Any) -> list[Any]:
    """The impl rule of ``custom_jvp_call``/``custom_vjp_call``: run the function's jaxpr
    (``rules``: the user's rules, which only transforms read)."""
    return _call_closed(call_jaxpr, args)


def _custom_call_abstract(
    *avals: ShapedArray, call_jaxpr: ClosedJaxpr, **rules: Any
) -> list[ShapedArray]:
    return call_jaxpr.out_avals


def _batch_custom_call(
    prim: Primitive,
    kind: str,
    rule_key: str,
    per_example: Callable[[Any, list[int | None], _OutBatch], Callable[..., Any]],
    vals: list[Any],
    bdims: list[Any],
    trace: batching.BatchTrace,
    call_jaxpr: ClosedJaxpr,
    params: dict[str, Any],
) -> tuple[list[Any], list[Any]]:
    """The batching rule of the custom call ``prim`` (of ``kind`` custom_jvp or
    custom_vjp), whose user rule is ``params[rule_key]``: unbatched operands bind the
    call unchanged; otherwise a new call of the batched jaxpr, whose rule
    ``per_example(rule, dims, state)`` runs the user's rule per example."""
    num_out = len(call_jaxpr.out_avals)
    if all(d is None for d in bdims):
        return prim.bind(*vals, call_jaxpr=call_jaxpr, **params), [None] * num_out
    rule = params[rule_key]
    name = _rule_name(rule, f"{rule_key}_of_")
    args, dims = _to_front(vals, bdims)
    new_jaxpr, out_batched = _batch_jaxpr(
        call_jaxpr, trace.axis_size, args, dims, f"vmap of {kind} {name}"
    )
    state = _OutBatch(out_batched, name)
    new_params = {
        **params,
        rule_key: _Callable(
            per_example(rule, dims, state), rule.__name__, getattr(rule, "user", ())
        ),
    }
    state.binding = True
    try:
        outs = prim.bind(*args, call_jaxpr=new_jaxpr, **new_params)
    finally:
        state.binding = False
    return outs, state.dims()


def _register_custom_call(prim: Primitive, jvp_rule: Any, batch_rule: Any) -> None:
    """Install the rules of a custom call primitive: run its jaxpr, its output types,
    the JVP rule (the user's rule) and the batching rule (a new custom call)."""
    core.impl_rules[prim] = _custom_call_impl
    core.abstract_eval_rules[prim] = _custom_call_abstract
    ad.jvp_rules[prim] = jvp_rule
    batching.batching_rules[prim] = batch_rule
    batching.rules_with_trace.add(prim)


def _check_rule_flag(where: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{where}: expected {name} to be a bool, got {type(value).__name__}.")
    return value
