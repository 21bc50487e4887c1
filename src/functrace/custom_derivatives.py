"""User-defined derivative rules: ``custom_jvp``, ``custom_vjp`` and ``grad_hook``.

A call of a ``custom_jvp``/``custom_vjp`` function on traced values binds one
primitive whose params hold the function's jaxpr (traced on the argument types)
and the user's rules. Evaluating it runs the jaxpr; the JVP interpreter calls the
user's rule instead of differentiating the jaxpr. For ``custom_vjp`` the JVP rule
runs ``fwd`` and emits a linear ``custom_lin`` equation whose transpose is ``bwd``,
so reverse mode (linearize + transpose) calls ``bwd`` with the residuals.

Under ``vmap`` the call stays a custom call: its batching rule binds a new call whose
function is the batched jaxpr and whose rules run the user's rules per example (inside
the same vmap), so ``grad(vmap(f))`` and ``jvp(vmap(f))`` use the rules too. A
``grad_hook`` under ``vmap`` calls its hook once per example, with that example's
cotangent. Under nested derivatives a hook belongs to the innermost backward pass that
differentiates its value; outer transforms differentiate through that pass.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray, Tracer, describe_fun, describe_value
from functrace.errors import UnexpectedTracerError
from functrace.interpreters import ad, batching
from functrace.interpreters.ad import Zero
from functrace.interpreters.staging import trace_to_jaxpr
from functrace.ir import ClosedJaxpr, eval_jaxpr
from functrace.lax.reductions import reduce_sum
from functrace.tree_util import (
    keystr,
    structure_mismatch_message,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
)


class _Callable:
    """A hashable-by-identity wrapper for a Python callable kept in primitive params."""

    __slots__ = ("fn", "__name__")

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self.fn = fn
        self.__name__ = name

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def __repr__(self) -> str:
        return self.__name__


class _Bwd:
    """The bwd of one fwd call: ``fn(nondiff, residuals, cts)`` with the values of the
    non-differentiable arguments it uses (``nd``), which a batched fwd replaces by their
    per-example values (passed to bwd as residuals)."""

    __slots__ = ("fn", "nd", "__name__")

    def __init__(self, fn: Callable[..., Any], nd: Sequence[Any], name: str) -> None:
        self.fn = fn
        self.nd = list(nd)
        self.__name__ = name

    def __call__(self, res: list[Any], cts: list[Any]) -> Any:
        return self.fn(self.nd, res, cts)

    def with_nd(self, nd: Sequence[Any]) -> _Bwd:
        return _Bwd(self.fn, nd, self.__name__)

    def __repr__(self) -> str:
        return self.__name__


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
    import inspect

    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _resolve_kwargs(
    kind: str, fun: Callable[..., Any], sig: Any, args: tuple[Any, ...], kwargs: dict
) -> tuple[Any, ...]:
    """The arguments of a custom_jvp/custom_vjp call as one positional tuple (keyword
    arguments placed by the function's signature, defaults filled in, as JAX does), so
    ``nondiff_argnums`` and the rules see one positional argument list."""
    if sig is None:
        if not kwargs:
            return args
        raise TypeError(
            f"{kind}: expected positional arguments for {describe_fun(fun)}, whose signature "
            f"cannot be read, got keyword arguments {sorted(kwargs)}."
        )
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{kind}: bad arguments for {describe_fun(fun)}: {e}.") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(
            f"{kind}: expected keyword arguments of {describe_fun(fun)} that have a "
            f"position, got keyword-only arguments {sorted(bound.kwargs)}. Pass them "
            f"positionally or close over them."
        )
    return tuple(bound.args)


def _call_closed(closed: ClosedJaxpr, args: Sequence[Any]) -> list[Any]:
    return eval_jaxpr(closed.jaxpr, closed.consts, list(args))


# ---------------------------------------------------------------------------
# custom_jvp
# ---------------------------------------------------------------------------

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)


def _custom_jvp_call_impl(*args: Any, call_jaxpr: ClosedJaxpr, jvp: Any, num_out: int) -> list[Any]:
    return _call_closed(call_jaxpr, args)


def _custom_jvp_call_abstract(
    *avals: ShapedArray, call_jaxpr: ClosedJaxpr, jvp: Any, num_out: int
) -> list[ShapedArray]:
    return call_jaxpr.out_avals


def _custom_jvp_call_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    call_jaxpr: ClosedJaxpr,
    jvp: Any,
    num_out: int,
) -> Any:
    outs, t_outs = jvp(list(primals), list(tangents))
    return outs, t_outs


core.impl_rules[custom_jvp_call_p] = _custom_jvp_call_impl
core.abstract_eval_rules[custom_jvp_call_p] = _custom_jvp_call_abstract
ad.jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


class custom_jvp:
    """A function with a user-defined JVP rule (and so reverse mode by transposition).

    The rule is used under every transform and order, ``vmap`` included:
    ``grad(vmap(f))`` and ``jvp(vmap(f))`` run the rule on each example (batched), as
    ``vmap(grad(f))`` does.

    >>> import functrace as ft, functrace.numpy as fnp
    >>> @ft.custom_jvp
    ... def softplus(x):
    ...     return fnp.log1p(fnp.exp(x))
    >>> @softplus.defjvp
    ... def softplus_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return softplus(x), t * ft.lax.logistic(x)
    >>> float(ft.grad(softplus)(0.0))
    0.5
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self._sig = _signature(fun)
        self.jvp: Callable[..., Any] | None = None

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``jvp(primals, tangents) -> (primal_out, tangent_out)``."""
        self.jvp = jvp
        return jvp

    def defjvps(self, *tangent_fns: Callable[..., Any] | None) -> None:
        """Register the JVP as one function per argument: ``fn(t, ans, *primals)`` is
        argument ``i``'s contribution to the output tangent (``t`` its tangent, ``ans``
        the output); ``None`` marks an argument that does not affect the tangent.

        >>> import functrace as ft, functrace.numpy as fnp
        >>> @ft.custom_jvp
        ... def f(x, y):
        ...     return fnp.sin(x) * y
        >>> f.defjvps(lambda t, ans, x, y: fnp.cos(x) * t * y, lambda t, ans, x, y: fnp.sin(x) * t)
        >>> float(ft.grad(f, argnums=1)(0.0, 2.0))
        0.0
        """
        if self.nondiff_argnums:
            raise TypeError(
                f"custom_jvp.defjvps: expected a function without nondiff_argnums, got "
                f"{describe_fun(self.fun)} with nondiff_argnums={self.nondiff_argnums}. "
                f"Use defjvp."
            )
        from functrace.tree_util import tree_map

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
            if len(tangent_fns) != len(primals):
                raise TypeError(
                    f"custom_jvp.defjvps: expected one tangent function (or None) per "
                    f"argument of {describe_fun(self.fun)} ({len(primals)}), got "
                    f"{len(tangent_fns)}."
                )
            ans = self(*primals)
            t_out: Any = None
            for fn, t in zip(tangent_fns, tangents):
                if fn is None:
                    continue
                part = fn(t, ans, *primals)
                t_out = part if t_out is None else tree_map(lambda a, b: a + b, t_out, part)
            if t_out is None:
                from functrace.numpy import zeros_like

                t_out = tree_map(zeros_like, ans)
            return ans, t_out

        self.jvp = jvp

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp is None:
            raise AttributeError(
                f"custom_jvp: expected a JVP rule for "
                f"{describe_fun(self.fun)}, got none. Call .defjvp first."
            )
        args = _resolve_kwargs("custom_jvp", self.fun, self._sig, args, kwargs)
        nondiff = {i: args[i] for i in self.nondiff_argnums}
        diff_args = tuple(a for i, a in enumerate(args) if i not in nondiff)
        leaves, in_tree = tree_flatten(diff_args)

        def full(diff: Sequence[Any]) -> list[Any]:
            it = iter(diff)
            return [nondiff[i] if i in nondiff else next(it) for i in range(len(args))]

        if not any(isinstance(x, Tracer) for x in leaves) and not core.dynamic_trace_active():
            return self.fun(*args)
        name = describe_fun(self.fun)
        user_jvp = self.jvp
        # (output tree, output avals) the rule must match: the traced function's, or
        # (differentiating eagerly, where the function is not traced) the rule's own.
        expect: list[Any] = []
        rule_tree: list[Any] = []  # the output tree the last rule call gave

        def flat_jvp(primals: list[Any], tangents: list[Any]) -> tuple[list[Any], list[Any]]:
            p_tree = tree_unflatten(in_tree, primals)
            t_tree = tree_unflatten(in_tree, tangents)
            nd = [nondiff[i] for i in sorted(nondiff)]
            res = (
                user_jvp(*nd, tuple(p_tree), tuple(t_tree))
                if nd
                else user_jvp(tuple(p_tree), tuple(t_tree))
            )
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(
                    f"custom_jvp: expected the JVP rule of {name} to return a pair "
                    f"(primal_out, tangent_out), got {describe_value(res)}."
                )
            out, t_out = res
            o_leaves, o_tree = tree_flatten(out)
            t_leaves, t_tree_out = tree_flatten(t_out)
            rule_tree[:] = [o_tree]
            if expect:
                out_tree, out_avals = expect
            else:
                out_tree, out_avals = o_tree, [core.get_aval(o) for o in o_leaves]
            if o_tree != out_tree or t_tree_out != out_tree:
                bad = out if o_tree != out_tree else t_out
                raise ValueError(
                    structure_mismatch_message(out_tree, bad, f"custom_jvp rule of {name}")
                )
            for t, a in zip(t_leaves, out_avals):
                ta = core.get_aval(t)
                if ta.shape != a.shape:
                    raise ValueError(
                        f"custom_jvp: expected the JVP rule of {name} to return a "
                        f"tangent of shape {a.shape}, got {ta.shape}."
                    )
            return o_leaves, t_leaves

        top = _top_trace(leaves)
        if isinstance(top, ad.JVPTrace) and top.level > core._state.dynamic.level:
            # Forward mode is the outermost transform: run the rule on the primals, as
            # the JVP of the custom call would, without tracing the function. Primals
            # stay concrete under eager jvp/grad, so the function and the rule may use
            # Python control flow on them (as in JAX).
            return self._jvp_direct(top, leaves, flat_jvp, rule_tree, name)

        def flat_fun(*flat: Any) -> Any:
            return self.fun(*full(tree_unflatten(in_tree, flat)))

        closed, out_tree = _trace_flat(flat_fun, leaves, f"custom_jvp of {name}")
        expect[:] = [out_tree, closed.out_avals]

        outs = custom_jvp_call_p.bind(
            *closed.consts,
            *leaves,
            call_jaxpr=_close_over_consts(closed),
            jvp=_Callable(
                _skip_consts(flat_jvp, len(closed.consts)),
                f"jvp_of_{getattr(self.fun, '__name__', 'f')}",
            ),
            num_out=len(closed.out_avals),
        )
        return tree_unflatten(out_tree, outs)

    def _jvp_direct(
        self,
        top: ad.JVPTrace,
        leaves: list[Any],
        flat_jvp: Callable[..., Any],
        rule_tree: list[Any],
        name: str,
    ) -> Any:
        mine = [isinstance(x, Tracer) and x._trace is top for x in leaves]
        primals = [x.primal if m else x for x, m in zip(leaves, mine)]
        tangents = [
            ad.instantiate(x.tangent)
            if m
            else ad.instantiate(Zero(ad.tangent_aval(core.get_aval(x))))
            for x, m in zip(leaves, mine)
        ]
        outs, t_outs = top.call_jvp_rule(flat_jvp, primals, tangents)
        for v in [*outs, *t_outs]:
            if isinstance(v, Tracer) and v._trace.level >= top.level:
                raise NotImplementedError(
                    f"custom_jvp: expected the JVP rule of {name} to close over no value "
                    f"being differentiated, got a closure over a traced value. Pass that "
                    f"value as an argument instead."
                )
        return tree_unflatten(rule_tree[0], [ad.JVPTracer(top, p, t) for p, t in zip(outs, t_outs)])


def _top_trace(leaves: Sequence[Any]) -> Any:
    top = None
    for x in leaves:
        if isinstance(x, Tracer) and (top is None or x._trace.level > top.level):
            top = x._trace
    return top


def _close_over_consts(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Turn constants into leading arguments, so tracer constants flow as operands."""
    from functrace.ir import Jaxpr

    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr((), (*j.constvars, *j.invars), j.eqns, j.outvars), [])


def _skip_consts(flat_rule: Callable[..., Any], n: int) -> Callable[..., Any]:
    def rule(primals: list[Any], tangents: list[Any]) -> Any:
        for t in tangents[:n]:
            if type(t) is not Zero:
                raise NotImplementedError(
                    "custom_jvp/custom_vjp: expected the function to close over no value "
                    "being differentiated, got a closure over a traced value. Pass that "
                    "value as an argument instead."
                )
        return flat_rule(primals[n:], [ad.instantiate(t) for t in tangents[n:]])

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


def _batched_jvp(
    jvp: Any,
    trace: batching.BatchTrace,
    dims: list[int | None],
    state: _OutBatch,
    primals: list[Any],
    tangents: list[Any],
) -> tuple[list[Any], list[Any]]:
    """The JVP rule of a batched custom_jvp call: the user's rule per example."""
    size, n, num_out = trace.axis_size, len(primals), len(state.batched)
    live = [type(t) is not Zero for t in tangents]
    # A symbolic zero stays symbolic: each example gets a Zero of its own type.
    zeros = [
        None if m else Zero(t.aval if d is None else t.aval.update(shape=t.aval.shape[1:]))
        for t, m, d in zip(tangents, live, dims)
    ]

    def one(*xs: Any) -> list[Any]:
        it = iter(xs[n:])
        ts = [next(it) if m else z for m, z in zip(live, zeros)]
        outs, t_outs = jvp(list(xs[:n]), ts)
        return [*outs, *t_outs]

    vals, vdims = _per_example(
        trace,
        one,
        [*primals, *(t for t, m in zip(tangents, live) if m)],
        [*dims, *(d for d, m in zip(dims, live) if m)],
        f"vmap of the JVP rule of {state.name}",
    )
    od, td = vdims[:num_out], vdims[num_out:]
    batched = state.widen([a is not None or b is not None for a, b in zip(od, td)], "JVP rule")
    outs = [_at_front(o, d, b, size) for o, d, b in zip(vals[:num_out], od, batched)]
    t_outs = [_at_front(t, d, b, size) for t, d, b in zip(vals[num_out:], td, batched)]
    return outs, t_outs


def _custom_jvp_call_batch(
    vals: list[Any],
    bdims: list[Any],
    *,
    trace: batching.BatchTrace,
    call_jaxpr: ClosedJaxpr,
    jvp: Any,
    num_out: int,
) -> tuple[list[Any], list[Any]]:
    if all(d is None for d in bdims):
        outs = custom_jvp_call_p.bind(*vals, call_jaxpr=call_jaxpr, jvp=jvp, num_out=num_out)
        return outs, [None] * num_out
    name = _rule_name(jvp, "jvp_of_")
    args, dims = _to_front(vals, bdims)
    new_jaxpr, out_batched = _batch_jaxpr(
        call_jaxpr, trace.axis_size, args, dims, f"vmap of custom_jvp {name}"
    )
    state = _OutBatch(out_batched, name)
    rule = _Callable(functools.partial(_batched_jvp, jvp, trace, dims, state), jvp.__name__)
    state.binding = True
    try:
        outs = custom_jvp_call_p.bind(*args, call_jaxpr=new_jaxpr, jvp=rule, num_out=num_out)
    finally:
        state.binding = False
    return outs, state.dims()


batching.batching_rules[custom_jvp_call_p] = _custom_jvp_call_batch
batching.rules_with_trace.add(custom_jvp_call_p)


# ---------------------------------------------------------------------------
# custom_vjp
# ---------------------------------------------------------------------------

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _custom_vjp_call_impl(
    *args: Any, call_jaxpr: ClosedJaxpr, fwd: Any, num_consts: int
) -> list[Any]:
    return _call_closed(call_jaxpr, args)


def _custom_vjp_call_abstract(
    *avals: ShapedArray, call_jaxpr: ClosedJaxpr, fwd: Any, num_consts: int
) -> list[ShapedArray]:
    return call_jaxpr.out_avals


def _custom_vjp_call_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    call_jaxpr: ClosedJaxpr,
    fwd: Any,
    num_consts: int,
) -> Any:
    for t in tangents[:num_consts]:
        if type(t) is not Zero:
            raise NotImplementedError(
                "custom_vjp: expected the function to close over no value being "
                "differentiated, got a closure over a traced value. Pass it as an argument."
            )
    # A concrete tangent that is all zeros (a JVP rule upstream returned zeros, as
    # custom_jvp's does for ceil) is a symbolic zero: linear in nothing.
    tangents = [
        Zero(ad.tangent_aval(core.get_aval(p)))
        if type(t) is not Zero and not isinstance(t, Tracer) and not np.any(t)
        else t
        for p, t in zip(primals, tangents)
    ]
    if all(type(t) is Zero for t in tangents[num_consts:]):
        outs = custom_vjp_call_p.bind(
            *primals, call_jaxpr=call_jaxpr, fwd=fwd, num_consts=num_consts
        )
        return outs, [Zero(ad.tangent_aval(core.get_aval(o))) for o in outs]
    # fwd gives the outputs, the residuals and the bwd that reads those residuals.
    outs, res, bwd = fwd(list(primals[num_consts:]))
    lin_tangents = [ad.instantiate(t) for t in tangents[num_consts:]]
    out_avals = tuple(ad.tangent_aval(core.get_aval(o)) for o in outs)
    t_outs = custom_lin_p.bind(*res, *lin_tangents, num_res=len(res), bwd=bwd, out_avals=out_avals)
    return outs, t_outs


def _custom_lin_impl(*args: Any, num_res: int, bwd: Any, out_avals: Any) -> Any:
    raise TypeError(
        f"jvp: expected a function differentiable in forward mode, got the custom_vjp function "
        f"{bwd.__name__.removeprefix('bwd_of_')}, which defines only reverse mode. Use "
        f"grad/vjp, or define it with custom_jvp to get both modes."
    )


def _custom_lin_transpose(
    cts: Sequence[Any], *args: Any, num_res: int, bwd: Any, out_avals: Any
) -> list[Any]:
    res = args[:num_res]
    cts = [ad.instantiate(c) for c in cts]
    cts_in = bwd(list(res), cts)
    return [None] * num_res + list(cts_in)


def _batched_fwd(
    fwd: Any,
    trace: batching.BatchTrace,
    dims: list[int | None],
    state: _OutBatch,
    primals: list[Any],
) -> tuple[list[Any], list[Any], Any]:
    """The fwd rule of a batched custom_vjp call: the user's fwd per example, with the
    residuals batched along axis 0 (those that are the same for every example stay
    unbatched), and a bwd that runs the user's bwd per example."""
    size, num_out = trace.axis_size, len(state.batched)
    box: list[tuple[int, _Bwd, list[int]]] = []

    def one(*xs: Any) -> list[Any]:
        outs, res, bwd = fwd(list(xs))
        # Traced non-differentiable arguments reach bwd as residuals, per example.
        nd_pos = [i for i, v in enumerate(bwd.nd) if isinstance(v, Tracer)]
        box.append((len(res), bwd, nd_pos))
        return [*outs, *res, *(bwd.nd[i] for i in nd_pos)]

    vals, vdims = _per_example(trace, one, primals, dims, f"vmap of the fwd of {state.name}")
    n_res, bwd, nd_pos = box[-1]
    batched = state.widen([d is not None for d in vdims[:num_out]], "fwd rule")
    outs = [_at_front(o, d, b, size) for o, d, b in zip(vals[:num_out], vdims, batched)]
    res, res_dims = _to_front(vals[num_out:], vdims[num_out:])
    in_avals = [ad.tangent_aval(core.get_aval(p)) for p in primals]
    new_bwd = _Bwd(
        functools.partial(
            _batched_bwd, bwd, n_res, nd_pos, size, res_dims, list(batched), dims, in_avals
        ),
        (),
        bwd.__name__,
    )
    return outs, res, new_bwd


def _batched_bwd(
    bwd: _Bwd,
    n_res: int,
    nd_pos: list[int],
    size: int,
    res_dims: list[int | None],
    out_batched: list[bool],
    in_dims: list[int | None],
    in_avals: list[ShapedArray],
    _nd: list[Any],
    res: list[Any],
    cts: list[Any],
) -> list[Any]:
    """The user's bwd per example. The cotangent of an input that is the same for every
    example is the sum of the examples' cotangents."""
    zero_box: list[list[bool]] = []

    def one(*xs: Any) -> list[Any]:
        nd = list(bwd.nd)
        for i, v in zip(nd_pos, xs[n_res : len(res)]):
            nd[i] = v
        got = bwd.with_nd(nd)(list(xs[:n_res]), list(xs[len(res) :]))
        zero_box.append([type(g) is Zero for g in got])
        return [g for g in got if type(g) is not Zero]

    try:
        vals, vdims = batching.vmap_flat(
            one,
            size,
            [*res, *cts],
            [*res_dims, *(0 if b else None for b in out_batched)],
            origin=f"vmap of {bwd.__name__}",
        )
    except UnexpectedTracerError as e:
        raise UnexpectedTracerError(
            f"custom_vjp: expected the bwd of {_rule_name(bwd, 'bwd_of_')} to use only its "
            f"residuals and cotangents, got a closure over a value of a vmap that has "
            f"returned (reverse mode runs bwd after the vmap). Pass that value as an "
            f"argument and return it from fwd as a residual. ({e})"
        ) from e
    it = iter(zip(vals, vdims))
    out: list[Any] = []
    for z, d_in, aval in zip(zero_box[-1], in_dims, in_avals):
        if z:
            out.append(Zero(aval))
            continue
        g, d = next(it)
        if d_in is not None:
            out.append(batching.bdim_at(g, d, size, 0))
        else:
            out.append(g if d is None else reduce_sum(g, (d,)))
    return out


def _custom_vjp_call_batch(
    vals: list[Any],
    bdims: list[Any],
    *,
    trace: batching.BatchTrace,
    call_jaxpr: ClosedJaxpr,
    fwd: Any,
    num_consts: int,
) -> tuple[list[Any], list[Any]]:
    num_out = len(call_jaxpr.out_avals)
    if all(d is None for d in bdims):
        outs = custom_vjp_call_p.bind(*vals, call_jaxpr=call_jaxpr, fwd=fwd, num_consts=num_consts)
        return outs, [None] * num_out
    name = _rule_name(fwd, "fwd_of_")
    args, dims = _to_front(vals, bdims)
    new_jaxpr, out_batched = _batch_jaxpr(
        call_jaxpr, trace.axis_size, args, dims, f"vmap of custom_vjp {name}"
    )
    state = _OutBatch(out_batched, name)
    rule = _Callable(
        functools.partial(_batched_fwd, fwd, trace, dims[num_consts:], state), fwd.__name__
    )
    state.binding = True
    try:
        outs = custom_vjp_call_p.bind(*args, call_jaxpr=new_jaxpr, fwd=rule, num_consts=num_consts)
    finally:
        state.binding = False
    return outs, state.dims()


core.impl_rules[custom_vjp_call_p] = _custom_vjp_call_impl
core.abstract_eval_rules[custom_vjp_call_p] = _custom_vjp_call_abstract
ad.jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
core.impl_rules[custom_lin_p] = _custom_lin_impl
core.abstract_eval_rules[custom_lin_p] = lambda *a, num_res, bwd, out_avals: list(out_avals)
ad.transpose_rules[custom_lin_p] = _custom_lin_transpose
ad.linear_primitives.add(custom_lin_p)
batching.batching_rules[custom_vjp_call_p] = _custom_vjp_call_batch
batching.rules_with_trace.add(custom_vjp_call_p)


class custom_vjp:
    """A function with a user-defined VJP: ``f.defvjp(fwd, bwd)``.

    ``fwd(*args) -> (out, residuals)``; ``bwd(*nondiff_args, residuals, ct)`` returns a
    tuple with one cotangent per differentiable argument (``None`` for a zero one).

    The rules are used under every transform and order, ``vmap`` included:
    ``grad(vmap(f))`` runs ``fwd`` and ``bwd`` on each example (batched), as
    ``vmap(grad(f))`` does; an argument shared by the batch gets the sum of the
    examples' cotangents. ``bwd`` runs after the ``vmap`` has returned, so it must not
    close over values of that ``vmap``: pass them through the residuals.

    >>> import functrace as ft, functrace.numpy as fnp
    >>> @ft.custom_vjp
    ... def relu(x):
    ...     return fnp.maximum(x, 0.0)
    >>> def relu_fwd(x):
    ...     return relu(x), x
    >>> def relu_bwd(x, ct):
    ...     return (ct * (x > 0),)
    >>> relu.defvjp(relu_fwd, relu_bwd)
    >>> ft.grad(lambda x: relu(x).sum())(fnp.array([1.0, -2.0, 3.0]))
    array([1., 0., 1.])
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self._sig = _signature(fun)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        self.fwd = fwd
        self.bwd = bwd

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None or self.bwd is None:
            raise AttributeError(
                f"custom_vjp: expected fwd and bwd rules for "
                f"{describe_fun(self.fun)}, got none. Call .defvjp first."
            )
        args = _resolve_kwargs("custom_vjp", self.fun, self._sig, args, kwargs)
        nondiff = {i: args[i] for i in self.nondiff_argnums}
        diff_args = tuple(a for i, a in enumerate(args) if i not in nondiff)
        leaves, in_tree = tree_flatten(diff_args)
        if not any(isinstance(x, Tracer) for x in leaves) and not core.dynamic_trace_active():
            return self.fun(*args)

        def full(diff: Sequence[Any]) -> list[Any]:
            it = iter(diff)
            return [nondiff[i] if i in nondiff else next(it) for i in range(len(args))]

        name = describe_fun(self.fun)
        closed, out_tree = _trace_flat(
            lambda *fl: self.fun(*full(tree_unflatten(in_tree, fl))),
            leaves,
            f"custom_vjp of {name}",
        )
        user_fwd, user_bwd = self.fwd, self.bwd
        nd_leaves, nd_tree = tree_flatten([nondiff[i] for i in sorted(nondiff)])
        bwd_name = f"bwd_of_{getattr(self.fun, '__name__', 'f')}"
        in_avals = [ad.tangent_aval(core.get_aval(x)) for x in leaves]
        in_paths = [p for p, _ in tree_flatten_with_path(diff_args)[0]]

        def flat_fwd(primals: list[Any]) -> tuple[list[Any], list[Any], Any]:
            res = user_fwd(*full(tree_unflatten(in_tree, primals)))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(
                    f"custom_vjp: expected fwd of {name} to return a pair "
                    f"(output, residuals), got {describe_value(res)}."
                )
            out, residuals = res
            o_leaves, o_tree = tree_flatten(out)
            if o_tree != out_tree:
                raise ValueError(
                    structure_mismatch_message(out_tree, out, f"custom_vjp fwd of {name}")
                )
            r_leaves, r_tree = tree_flatten(residuals)
            bwd = _Bwd(functools.partial(flat_bwd, r_tree), nd_leaves, bwd_name)
            return o_leaves, r_leaves, bwd

        def flat_bwd(r_tree: Any, nd: list[Any], res: list[Any], cts: list[Any]) -> list[Any]:
            nd_vals = tree_unflatten(nd_tree, nd)
            residuals = tree_unflatten(r_tree, res)
            ct = tree_unflatten(out_tree, cts)
            got = user_bwd(*nd_vals, residuals, ct)
            if not isinstance(got, (tuple, list)):
                raise TypeError(
                    f"custom_vjp: expected bwd of {name} to return a tuple with one cotangent "
                    f"per differentiable argument ({len(diff_args)}), got "
                    f"{describe_value(got)}. Wrap a single cotangent as (ct,)."
                )
            got = tuple(got)
            if len(got) != len(diff_args):
                raise ValueError(
                    f"custom_vjp: expected bwd of {name} to return {len(diff_args)} "
                    f"cotangent(s), one per differentiable argument, got {len(got)}."
                )
            g_leaves, g_tree = tree_flatten(got, is_leaf=lambda x: x is None)
            if g_tree != in_tree:
                raise ValueError(
                    structure_mismatch_message(in_tree, got, f"custom_vjp bwd of {name}")
                )
            out = []
            for g, a, p in zip(g_leaves, in_avals, in_paths):
                if g is None:
                    out.append(Zero(a))
                    continue
                ga = core.get_aval(g)
                if ga.shape != a.shape:
                    raise ValueError(
                        f"custom_vjp: expected bwd of {name} to return a cotangent of shape "
                        f"{a.shape} for argument {keystr(p)}, got shape {ga.shape}."
                    )
                out.append(g)
            return out

        outs = custom_vjp_call_p.bind(
            *closed.consts,
            *leaves,
            call_jaxpr=_close_over_consts(closed),
            fwd=_Callable(flat_fwd, f"fwd_of_{getattr(self.fun, '__name__', 'f')}"),
            num_consts=len(closed.consts),
        )
        return tree_unflatten(out_tree, outs)


# ---------------------------------------------------------------------------
# grad_hook
# ---------------------------------------------------------------------------
#
# A grad_hook acts like an identity function with a custom VJP whose bwd is the hook:
# its JVP passes the primal through unchanged and marks the tangent (grad_hook_p on the
# tangent), so the hook runs in the backward pass of the innermost reverse-mode
# transform that differentiates the value, on that pass's cotangent. Transforms outside
# it (the outer grad of grad(grad(f)), jvp(grad(f)), hessian) differentiate through
# that backward pass, the hook's own computation included, and never call the hook on
# their own cotangents: every nesting order gives the same derivatives.
#
# Eagerly the hook is called right away, on values that outer transforms can trace
# (so they differentiate through it). When the cotangent is not known while tracing
# (under jit), the call is the primitive hook_call_p, run by the compiled code. Its
# ``fn`` is a node: a function of arrays returning a list of arrays: the hook itself
# (_Hook), the forward derivative of a node (_HookJvp, linear in its tangents), its
# transpose (_HookVjp, linear in its cotangents), or a node run once per example of a
# vmap (_HookPerExample). A derivative node runs the functrace transform of the node
# it differentiates when the compiled code runs, on concrete values, so under jit the
# hook's derivatives are the same as eagerly.

grad_hook_p = Primitive("grad_hook")
hook_call_p = Primitive("hook_call", multiple_results=True)


def _hook_result(fn: Any, ct: Any) -> Any:
    """The cotangent after the hook ``fn``: its result, or ``ct`` when it returns None;
    a result of another dtype is cast to the cotangent's."""
    from functrace.lax import convert_element_type

    out = fn(ct)
    if out is None:
        return ct
    got, want = core.get_aval(out), core.get_aval(ct)
    if got.shape != want.shape:
        raise ValueError(
            f"grad_hook: expected the hook {fn.__name__} to return a cotangent "
            f"of shape {want.shape} or None, got shape {got.shape}."
        )
    return out if got.dtype == want.dtype else convert_element_type(out, want.dtype)


class _Hook:
    """The node of the hook itself: one cotangent in, the replacement out."""

    __slots__ = ("fn", "__name__")
    n_in = n_out = n_nonlinear = 1

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.__name__ = fn.__name__

    def __call__(self, ct: Any) -> list[Any]:
        return [_hook_result(self.fn, ct)]

    def out_avals(self, avals: Sequence[ShapedArray]) -> list[ShapedArray]:
        return [avals[0]]

    def transposed(self) -> Any:
        raise ValueError(f"grad_hook: the hook {self.__name__} is not linear.")

    def __repr__(self) -> str:
        return self.__name__


class _HookJvp:
    """``(primals, tangents) -> tangents out`` of node ``f`` (linear in the tangents)."""

    __slots__ = ("f", "n_in", "n_out", "n_nonlinear", "__name__")

    def __init__(self, f: Any) -> None:
        self.f = f
        self.n_in, self.n_out, self.n_nonlinear = 2 * f.n_in, f.n_out, f.n_in
        self.__name__ = f"jvp_of_{f.__name__}"

    def __call__(self, *args: Any) -> list[Any]:
        k = self.f.n_in
        _, touts = ad.jvp_flat(lambda *p: self.f(*p), args[:k], args[k:], origin="grad_hook")
        return [ad.instantiate(t) for t in touts]

    def out_avals(self, avals: Sequence[ShapedArray]) -> list[ShapedArray]:
        return [ad.tangent_aval(a) for a in self.f.out_avals(avals[: self.f.n_in])]

    def transposed(self) -> Any:
        return _HookVjp(self.f)

    def __repr__(self) -> str:
        return self.__name__


class _HookVjp:
    """``(primals, cotangents out) -> cotangents in`` of node ``f`` (linear in the
    cotangents)."""

    __slots__ = ("f", "n_in", "n_out", "n_nonlinear", "__name__")

    def __init__(self, f: Any) -> None:
        self.f = f
        self.n_in, self.n_out, self.n_nonlinear = f.n_in + f.n_out, f.n_in, f.n_in
        self.__name__ = f"vjp_of_{f.__name__}"

    def __call__(self, *args: Any) -> list[Any]:
        k = self.f.n_in
        _, lin, _ = ad.linearize_flat(lambda *p: self.f(*p), args[:k], origin="grad_hook")
        return [ad.instantiate(c) for c in lin.transpose(args[k:])]

    def out_avals(self, avals: Sequence[ShapedArray]) -> list[ShapedArray]:
        return [ad.tangent_aval(a) for a in avals[: self.f.n_in]]

    def transposed(self) -> Any:
        return _HookJvp(self.f)

    def __repr__(self) -> str:
        return self.__name__


class _HookPerExample:
    """Node ``f`` run on each example of arguments batched along axis 0 in turn (a
    derivative of a hook under vmap); the results are stacked along axis 0."""

    __slots__ = ("f", "size", "n_in", "n_out", "n_nonlinear", "__name__")

    def __init__(self, f: Any, size: int) -> None:
        self.f, self.size = f, size
        self.n_in, self.n_out, self.n_nonlinear = f.n_in, f.n_out, f.n_nonlinear
        self.__name__ = f.__name__

    def __call__(self, *args: Any) -> list[Any]:
        from functrace import numpy as fnp

        outs = [self.f(*[a[i] for a in args]) for i in range(self.size)]
        return [fnp.stack(col) for col in zip(*outs)]

    def out_avals(self, avals: Sequence[ShapedArray]) -> list[ShapedArray]:
        inner = self.f.out_avals([ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in avals])
        return [ShapedArray((self.size, *a.shape), a.dtype, a.weak_type) for a in inner]

    def transposed(self) -> Any:
        return _HookPerExample(self.f.transposed(), self.size)

    def __repr__(self) -> str:
        return self.__name__


def _call_hook(node: Any, args: Sequence[Any]) -> list[Any]:
    """Run ``node`` now, or, when an argument is not known while tracing (under jit),
    stage the call for the compiled code."""
    for a in args:
        if isinstance(a, Tracer) and core.concrete_or_none(a) is None:
            return hook_call_p.bind(*args, fn=node)  # type: ignore[no-any-return]
    return node(*args)  # type: ignore[no-any-return]


def _apply_hook(fn: Any, ct: Any) -> Any:
    """The cotangent after the hook ``fn``."""
    return _call_hook(_Hook(fn), [ct])[0]


class _PerExample:
    """A hook called on each example of a cotangent batched along ``axis`` in turn;
    the replacements it returns (if any) are stacked back along ``axis``."""

    __slots__ = ("fn", "axis", "size", "__name__")

    def __init__(self, fn: Any, axis: int, size: int) -> None:
        self.fn = fn
        self.axis = axis
        self.size = size
        self.__name__ = fn.__name__

    def __call__(self, ct: Any) -> Any:
        from functrace import numpy as fnp
        from functrace.lax import convert_element_type

        idx = (slice(None),) * self.axis
        outs, replaced = [], False
        for i in range(self.size):
            c = ct[(*idx, i)]
            o = self.fn(c)
            if o is None:
                outs.append(c)
                continue
            replaced = True
            got, want = core.get_aval(o), core.get_aval(c)
            if got.shape != want.shape:
                raise ValueError(
                    f"grad_hook: expected the hook {self.__name__} to return a cotangent "
                    f"of shape {want.shape} (one example's, under vmap) or None, got "
                    f"shape {got.shape}."
                )
            outs.append(o if got.dtype == want.dtype else convert_element_type(o, want.dtype))
        return fnp.stack(outs, axis=self.axis) if replaced else None


def _per_example_value(x: Any) -> Any:
    """``x`` batched in every vmap running at or above its level: a value that is the
    same for every example is broadcast, so that its cotangent is per example."""
    lvl = _level(x)
    for t in core.trace_stack():
        if type(t) is not batching.BatchTrace or t.level < lvl:
            continue
        if isinstance(x, batching.BatchTracer) and x._trace is t:
            if x.bdim is None:
                x = batching.BatchTracer(t, batching.broadcast_batch(x.val, t.axis_size, 0), 0)
        else:
            x = batching.BatchTracer(t, batching.broadcast_batch(x, t.axis_size, 0), 0)
        lvl = t.level
    return x


def _grad_hook_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, fn: Any) -> Any:
    # The primal passes through unhooked: transforms outside this one differentiate
    # through its backward pass (where the hook runs) and do not call the hook again.
    return primals[0], grad_hook_p.bind(ad.instantiate(tangents[0]), fn=fn)


def _grad_hook_transpose(ct: Any, x: Any, *, fn: Any) -> list[Any]:
    # Transposed inside a vmap (vmap(grad(f))): one call per example of that vmap.
    return [_apply_hook(fn, _per_example_value(ct))]


def _grad_hook_batch(
    vals: list[Any], bdims: list[Any], *, trace: batching.BatchTrace, fn: Any
) -> tuple[Any, Any]:
    # The hook of the batched value calls the user's hook once per example.
    (x,), (d,) = vals, bdims
    if d is None:
        x, d = batching.broadcast_batch(x, trace.axis_size, 0), 0
    return grad_hook_p.bind(x, fn=_PerExample(fn, d, trace.axis_size)), d


def _hook_call_impl(*args: Any, fn: Any) -> list[Any]:
    return fn(*args)  # type: ignore[no-any-return]


def _hook_call_abstract_eval(*avals: ShapedArray, fn: Any) -> list[ShapedArray]:
    return fn.out_avals(avals)  # type: ignore[no-any-return]


def _hook_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, fn: Any) -> Any:
    # The compiled code runs the node's forward derivative (eagerly, on the values).
    outs = hook_call_p.bind(*primals, fn=fn)
    touts = hook_call_p.bind(*primals, *[ad.instantiate(t) for t in tangents], fn=_HookJvp(fn))
    return outs, touts


def _hook_call_transpose(cts: Sequence[Any], *args: Any, fn: Any) -> list[Any]:
    k = fn.n_nonlinear
    if k == fn.n_in or any(ad.is_undefined_primal(a) for a in args[:k]):
        raise ValueError(
            f"hook_call transpose: {fn.__name__} is not linear in the inputs being "
            f"transposed (a non-linear use of tangents in a JVP rule)."
        )
    cts_in = _call_hook(fn.transposed(), [*args[:k], *[ad.instantiate(c) for c in cts]])
    return [None] * k + list(cts_in)


def _hook_call_batch(
    vals: list[Any], bdims: list[Any], *, trace: batching.BatchTrace, fn: Any
) -> tuple[Any, Any]:
    size = trace.axis_size
    if type(fn) is _Hook:  # the hook itself: one call per example, as in _grad_hook_batch
        (ct,), (d,) = vals, bdims
        if d is None:
            ct, d = batching.broadcast_batch(ct, size, 0), 0
        return [_apply_hook(_PerExample(fn.fn, d, size), ct)], [d]
    args = [batching.bdim_at(v, d, size, 0) for v, d in zip(vals, bdims)]
    return _call_hook(_HookPerExample(fn, size), args), [0] * fn.n_out


core.impl_rules[grad_hook_p] = lambda x, *, fn: x
core.abstract_eval_rules[grad_hook_p] = lambda x, *, fn: x
ad.jvp_rules[grad_hook_p] = _grad_hook_jvp
ad.transpose_rules[grad_hook_p] = _grad_hook_transpose
ad.linear_primitives.add(grad_hook_p)
core.impl_rules[hook_call_p] = _hook_call_impl
core.abstract_eval_rules[hook_call_p] = _hook_call_abstract_eval
ad.jvp_rules[hook_call_p] = _hook_call_jvp
ad.transpose_rules[hook_call_p] = _hook_call_transpose
ad.linear_primitives.add(hook_call_p)
batching.batching_rules[grad_hook_p] = _grad_hook_batch
batching.batching_rules[hook_call_p] = _hook_call_batch
batching.rules_with_trace.update((grad_hook_p, hook_call_p))


def grad_hook(x: Any, fn: Callable[[Any], Any]) -> Any:
    """Identity on ``x``; in reverse mode calls ``fn(cotangent)`` and, if it returns an
    array, uses it as the new cotangent (print, clip, monitor gradients).

    Under ``vmap`` the hook sees what a Python loop over the examples would: one call per
    example, in order, with that example's cotangent, and a returned replacement is that
    example's. This holds in ``vmap(grad(f))`` and ``grad(vmap(f))`` alike, and for a
    value that is the same for every example (a shared parameter): its cotangent is
    still per example, so a hook can clip per-example gradients.

    Under nested derivatives the hook runs in the backward pass of the innermost
    reverse-mode transform that differentiates ``x``; outer transforms (the outer
    ``grad`` of ``grad(grad(f))``, ``jvp(grad(f))``, ``hessian``) differentiate through
    that pass and the hook's computation, and do not call the hook again, as for an
    identity ``custom_vjp`` whose ``bwd`` is ``fn``. Every mode gives the same second
    derivatives, eagerly and under ``jit``.

    >>> import functrace as ft
    >>> seen = []
    >>> f = lambda x: ft.grad_hook(x * 2.0, lambda ct: seen.append(float(ct))) ** 2
    >>> float(ft.grad(f)(3.0)), seen
    (24.0, [12.0])
    """
    from functrace.tree_util import tree_map

    wrapped = fn if isinstance(fn, _Callable) else _Callable(fn, getattr(fn, "__name__", "hook"))

    def hook(v: Any) -> Any:
        # Inside a vmap the hook sees each example's cotangent (see _per_example_value).
        return grad_hook_p.bind(_per_example_value(v), fn=wrapped) if isinstance(v, Tracer) else v

    return tree_map(hook, x)


__all__ = ["custom_jvp", "custom_vjp", "grad_hook"]
